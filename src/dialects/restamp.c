/*
 * restamp: builds the copy of a dead letter that goes back to the broker (restamp.h): the
 * common part of every mode, a move whole, and the kit the dialects' restamp hooks use
 * (restamp_kit.h); each dialect's own rules are in its file. The dead letter, its decode and
 * its envelope are only read. The names, restamp_check_body and outgoing_free are in
 * restamp_common.c; the diff is the replay layer's (src/replay/restamp_diff.c).
 */
#include "restamp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "restamp_kit.h"
#include "sha256.h"
#include "util.h"

const char *rk_field_name(enum env_field f)
{
    /* In the order of enum env_field. */
    static const char *const names[] = {
        "id",     "type",  "version", "correlation_id", "causation_id", "attempt", "first_seen_ms",
        "origin", "error", "claim",   "header",         "-header"};
    return (size_t)f < sizeof names / sizeof *names && names[f] ? names[f] : "?";
}

bool restamp_broker_owned(const char *name, size_t len)
{
    static const char so[] = "x-stream-offset";
    if (!name)
        return false;
    return death_broker_header(name, len) || (len == sizeof so - 1 && memcmp(name, so, len) == 0);
}

/* What MOVE drops: the delivery's own counters, never the death history. */
static bool move_dropped(const struct bytes *k)
{
    return bytes_eq_cstr(k, "x-delivery-count") || bytes_eq_cstr(k, "x-stream-offset");
}

static struct htable *headers_filtered(const struct htable *h, bool move)
{
    struct htable *t = htable_new();
    for (size_t i = 0; h && i < h->n; i++) {
        const struct bytes *k = &h->e[i].key;
        if (move ? move_dropped(k) : restamp_broker_owned((const char *)k->data, k->len))
            continue;
        htable_addn(t, k->data, k->len, hval_copy(&h->e[i].val));
    }
    return t;
}

static void props_copy(struct props *dst, const struct props *src)
{
    *dst = *src;
#define X(name) dst->name = bytes_copy(&src->name);
    PROP_STRING_LIST(X)
#undef X
}

void rk_prop_clear(struct props *p, enum prop_flag f)
{
    props_set_string(p, f, "", 0);
    p->present &= ~(1u << f);
}

/* Persistent unless the dead letter was explicitly transient. */
static void props_persist(struct props *p, const struct props *old)
{
    p->delivery_mode = props_has(old, PROP_delivery_mode) && old->delivery_mode == 1 ? 1 : 2;
    p->present |= 1u << PROP_delivery_mode;
}

/* ---- the kit (restamp_kit.h) -------------------------------------------------------- */

void rk_prop_set(struct props *p, enum prop_flag f, const void *s, size_t n)
{
    props_set_string(p, f, n ? s : "", n);
}

void rk_target(struct outgoing *out, const char *how, const void *ex, size_t exn, const void *rk,
               size_t rkn)
{
    bytes_free(&out->exchange);
    bytes_free(&out->routing_key);
    out->target_how = how;
    out->exchange = bytes_dup(exn ? ex : "", exn);
    out->routing_key = bytes_dup(rkn ? rk : "", rkn);
}

bool rk_has_target(const struct outgoing *out)
{
    return out->target_how != NULL;
}

enum status rk_no_target(const struct decoded *d, const char *why, struct error *err)
{
    return error_set(err, ST_ENOTFOUND,
                     "there is no target for this %s dead letter (%s): give --to "
                     "EXCHANGE:ROUTING_KEY",
                     d->dialect->name, why);
}

enum status rk_target_source(const struct decoded *d, struct outgoing *out, const char *why_none,
                             struct error *err)
{
    if (rk_has_target(out))
        return ST_OK;
    const struct source *s = &d->source;
    if (s->how && (s->exchange.len || s->routing_key.len)) {
        rk_target(out, s->how, s->exchange.data, s->exchange.len, s->routing_key.data,
                  s->routing_key.len);
        return ST_OK;
    }
    return rk_no_target(d, why_none, err);
}

/* Replaces the first header named name (keeping its place), drops any later ones, appends
 * when there is none. Takes ownership of v. */
void rk_header_put(struct htable *t, const char *name, struct hval v)
{
    bool done = false;
    size_t w = 0;
    for (size_t i = 0; i < t->n; i++) {
        struct hentry *e = &t->e[i];
        if (!bytes_eq_cstr(&e->key, name)) {
            t->e[w++] = *e;
        } else if (!done) {
            hval_free(&e->val);
            e->val = v;
            t->e[w++] = *e;
            done = true;
        } else {
            hentry_free_key(e);
            hval_free(&e->val);
        }
    }
    t->n = w;
    if (!done)
        htable_add(t, name, v);
}

void rk_header_put_text(struct htable *t, const char *name, const void *s, size_t n)
{
    rk_header_put(t, name, hval_string(n ? s : "", n));
}

bool rk_name_in(const void *name, size_t len, const char *const *names)
{
    for (size_t i = 0; names && names[i]; i++) {
        size_t n = strlen(names[i]);
        if (n && names[i][n - 1] == '*') {
            if (len >= n - 1 && memcmp(name, names[i], n - 1) == 0)
                return true;
        } else if (len == n && memcmp(name, names[i], n) == 0) {
            return true;
        }
    }
    return false;
}

size_t rk_headers_strip(struct htable *t, const char *const *names)
{
    size_t w = 0, gone = 0;
    for (size_t i = 0; t && i < t->n; i++) {
        struct hentry *e = &t->e[i];
        if (rk_name_in(e->key.data, e->key.len, names)) {
            hentry_free_key(e);
            hval_free(&e->val);
            gone++;
        } else {
            t->e[w++] = *e;
        }
    }
    if (t)
        t->n = w;
    return gone;
}

struct htable *rk_headers_without_broker(const struct htable *h)
{
    return headers_filtered(h, false);
}

void rk_headers_keep_broker(const struct decoded *d, struct outgoing *out)
{
    htable_free(out->headers);
    out->headers = headers_filtered(d->msg->headers, true);
    out->headers_present = d->msg->headers_present || out->headers->n;
}

/* A counter value in the kind the old one had (an integer that fits, or a decimal string), else
 * a long. */
struct hval rk_counter_like(const struct hval *old, int64_t v)
{
    static const int64_t smax[] = {
        [HV_I8] = INT8_MAX, [HV_I16] = INT16_MAX, [HV_I32] = INT32_MAX, [HV_I64] = INT64_MAX};
    static const uint64_t umax[] = {[HV_U8] = UINT8_MAX,
                                    [HV_U16] = UINT16_MAX,
                                    [HV_U32] = UINT32_MAX,
                                    [HV_U64] = UINT64_MAX,
                                    [HV_TIMESTAMP] = UINT64_MAX};
    if (hkind_is_signed(old->kind) && v <= smax[old->kind] && v >= -smax[old->kind] - 1)
        return hval_int(old->kind, v);
    if (hkind_is_unsigned(old->kind) && v >= 0 && (uint64_t)v <= umax[old->kind])
        return hval_uint(old->kind, (uint64_t)v);
    if (old->kind == HV_STRING || old->kind == HV_BYTES) {
        char buf[24];
        int k = snprintf(buf, sizeof buf, "%lld", (long long)v);
        return old->kind == HV_STRING ? hval_string(buf, (size_t)k) : hval_bytes(buf, (size_t)k);
    }
    return hval_int(HV_I64, v);
}

void rk_counter_set(struct htable *t, const char *name, int64_t v)
{
    for (size_t i = 0; i < t->n; i++)
        if (bytes_eq_cstr(&t->e[i].key, name)) {
            struct hval nv = rk_counter_like(&t->e[i].val, v);
            hval_free(&t->e[i].val);
            t->e[i].val = nv;
        }
}

enum status rk_header_change(struct htable *t, const struct env_change *c, struct error *err)
{
    if (c->field == EF_HEADER_SET) {
        htable_set(t, c->header, hval_copy(c->value));
        return ST_OK;
    }
    if (!htable_remove(t, c->header))
        return error_set(err, ST_ENOTFOUND, "there is no header %s to remove", c->header);
    return ST_OK;
}

static bool text_field(enum env_field f)
{
    return f == EF_ID || f == EF_TYPE || f == EF_CORRELATION || f == EF_CAUSATION ||
           f == EF_ORIGIN || f == EF_ERROR || f == EF_CLAIM;
}

enum status rk_apply_changes(const struct decoded *d, const struct restamp_opts *o,
                             const struct rk_field *map, size_t n, struct outgoing *out,
                             struct error *err)
{
    for (size_t i = 0; i < o->n_changes; i++) {
        const struct env_change *c = &o->changes[i];
        if (c->field == EF_HEADER_SET || c->field == EF_HEADER_REMOVE) {
            enum status st = rk_header_change(out->headers, c, err);
            if (st != ST_OK)
                return st;
            continue;
        }
        const struct rk_field *m = NULL;
        for (size_t k = 0; k < n && !m; k++)
            if (map[k].field == c->field)
                m = &map[k];
        if (!m) {
            struct strbuf can;
            sb_init(&can);
            for (size_t k = 0; k < n; k++)
                sb_addf(&can, "%s, ", rk_field_name(map[k].field));
            sb_adds(&can, "header.NAME");
            enum status st = error_set(err, ST_EUNSUPPORTED,
                                       "%s cannot be changed on a %s message: it has no such "
                                       "field (%s can be)",
                                       rk_field_name(c->field), d->dialect->title, can.buf);
            sb_free(&can);
            return st;
        }
        if (c->field == EF_ID && !c->text.len)
            return error_set(err, ST_EINVAL, "the id cannot be empty");
        if (text_field(c->field)) {
            if (m->header) {
                const struct hval *old = htable_get(out->headers, m->header);
                struct hval v =
                    old && old->kind == HV_BYTES
                        ? hval_bytes(c->text.len ? (const void *)c->text.data : "", c->text.len)
                        : hval_string(c->text.len ? (const void *)c->text.data : "", c->text.len);
                rk_header_put(out->headers, m->header, v);
            }
            if (m->prop >= 0) {
                if (c->text.len)
                    rk_prop_set(&out->props, (enum prop_flag)m->prop, c->text.data, c->text.len);
                else
                    rk_prop_clear(&out->props, (enum prop_flag)m->prop);
            }
            if (c->field == EF_ID) {
                bytes_free(&out->id);
                out->id = bytes_copy(&c->text);
            }
        } else if (m->header) {
            const struct hval *old = htable_get(out->headers, m->header);
            if (old)
                rk_counter_set(out->headers, m->header, c->number);
            else
                rk_header_put(out->headers, m->header, hval_int(HV_I64, c->number));
        }
    }
    return ST_OK;
}

/* ---- build -------------------------------------------------------------------------- */

static enum status check_opts(const struct decoded *d, const struct restamp_opts *o,
                              struct error *err)
{
    if (!d || !d->msg || !d->env || !o)
        return error_set(err, ST_EINVAL, "restamp needs a decoded dead letter and options");
    if (o->mode != RESTAMP_REPLAY && o->mode != RESTAMP_REISSUE && o->mode != RESTAMP_MOVE)
        return error_set(err, ST_EINVAL, "unknown restamp mode %d", (int)o->mode);
    if (o->n_changes && !o->changes)
        return error_set(err, ST_EINVAL, "changes were counted but not given");
    if (o->mode == RESTAMP_MOVE) {
        if (o->n_changes || o->body)
            return error_set(err, ST_EINVAL,
                             "a move sends the message as it is: no envelope change and no new "
                             "body (replay or re-issue it instead)");
        if (!o->to_exchange && !o->to_routing_key)
            return error_set(err, ST_EINVAL,
                             "a move needs its target: give --to EXCHANGE:ROUTING_KEY");
    }
    if (o->mode == RESTAMP_REISSUE && o->new_id && !*o->new_id)
        return error_set(err, ST_EINVAL, "the new id cannot be empty");
    for (size_t i = 0; i < o->n_changes; i++) {
        const struct env_change *c = &o->changes[i];
        if (c->field != EF_HEADER_SET && c->field != EF_HEADER_REMOVE)
            continue;
        if (!c->header || (c->field == EF_HEADER_SET && !c->value))
            return error_set(err, ST_EINVAL, "a header change needs a name%s",
                             c->field == EF_HEADER_SET ? " and a value" : "");
        size_t n = strlen(c->header);
        bool acemq = acemq_reserved_name(c->header, n);
        if (acemq || restamp_broker_owned(c->header, n))
            return error_set(err, ST_ERESERVED, "%s %s, so it cannot be %s as a header", c->header,
                             acemq ? "is in AceMQ's reserved x-acemq- namespace (change the "
                                     "envelope field instead)"
                                   : "is owned by the broker and never sent back",
                             c->field == EF_HEADER_SET ? "set" : "removed");
    }
    return ST_OK;
}

static enum status build(const struct decoded *d, const struct restamp_opts *o,
                         struct outgoing *out, struct error *err);

enum status restamp_build(const struct decoded *d, const struct restamp_opts *o,
                          struct outgoing *out, struct error *err)
{
    /* An edit without a kind keeps the kind of the header it replaces (restamp_headers.c). */
    memset(out, 0, sizeof *out);
    struct env_change *own = NULL;
    struct hval *vals = NULL;
    enum status st = check_opts(d, o, err); /* reserved names are refused as such first */
    if (st == ST_OK)
        st = restamp_header_kinds(d->msg, o->changes, o->n_changes, &own, &vals, err);
    if (st != ST_OK)
        return st;
    struct restamp_opts with = *o;
    if (own)
        with.changes = own;
    st = build(d, &with, out, err);
    restamp_header_kinds_free(own, vals, o->n_changes);
    return st;
}

static enum status build(const struct decoded *d, const struct restamp_opts *o,
                         struct outgoing *out, struct error *err)
{
    memset(out, 0, sizeof *out);
    enum status st = check_opts(d, o, err);
    if (st != ST_OK)
        return st;
    const struct message *m = d->msg;
    struct bytes dlq = o->dlq && *o->dlq ? bytes_from_cstr(o->dlq) : bytes_copy(&m->queue);
    out->mode = o->mode;
    out->dialect = d->dialect;
    out->old_id = bytes_copy(&d->env->id);
    props_copy(&out->props, &m->props);
    props_persist(&out->props, &m->props);
    out->headers = headers_filtered(m->headers, o->mode == RESTAMP_MOVE);
    out->headers_present = m->headers_present || out->headers->n;
    const struct bytes *body = o->body ? o->body : &m->body;
    out->body = bytes_dup(body->len ? (const void *)body->data : "", body->len);
    if (o->mode == RESTAMP_REISSUE && o->new_id) {
        out->id = bytes_from_cstr(o->new_id);
    } else if (o->mode == RESTAMP_REISSUE) {
        uuid_t u;
        char buf[37];
        uuid_generate_random(u);
        uuid_unparse_lower(u, buf);
        out->id = bytes_from_cstr(buf);
    } else {
        out->id = bytes_copy(&d->env->id);
    }
    if (o->body)
        st = restamp_check_body(props_string(&m->props, PROP_content_type), o->body, err);
    if (st == ST_OK && (o->to_exchange || o->to_routing_key)) {
        const char *ex = o->to_exchange ? o->to_exchange : "";
        const char *rk = o->to_routing_key ? o->to_routing_key : "";
        rk_target(out, "explicit", ex, strlen(ex), rk, strlen(rk));
    }
    if (st == ST_OK && o->mode != RESTAMP_MOVE) {
        if (d->dialect->restamp)
            st = d->dialect->restamp(d, o, &dlq, out, err);
        else
            st = error_set(err, ST_EUNSUPPORTED, "dlqx cannot replay a %s message yet",
                           d->dialect->title);
        if (st == ST_OK && !rk_has_target(out))
            st = rk_no_target(d, "its dialect names none", err);
    }
    if (st == ST_OK && !out->exchange.len && dlq.len && bytes_eq(&out->routing_key, &dlq))
        st = error_set(err, ST_EINVAL,
                       "the target is the queue the dead letter is read from (%.*s): give --to "
                       "EXCHANGE:ROUTING_KEY",
                       (int)(dlq.len > 200 ? 200 : dlq.len), (const char *)dlq.data);
    bytes_free(&dlq);
    if (st != ST_OK) {
        outgoing_free(out); /* zeroed: nothing left to free */
        return st;
    }
    out->headers_present = out->headers_present || out->headers->n;
    /* The dead letter's digest, from its decoding when it has one (decode skips it only when
     * told to leave the body alone); the copy's is the same when its body is. */
    const struct bytes *old_body = &d->msg->body;
    if (d->body_sha256[0])
        memcpy(out->old_body_sha256, d->body_sha256, sizeof out->old_body_sha256);
    else
        sha256_hex(old_body->len ? (const void *)old_body->data : "", old_body->len,
                   out->old_body_sha256);
    if (bytes_eq(&out->body, old_body))
        memcpy(out->body_sha256, out->old_body_sha256, sizeof out->body_sha256);
    else
        sha256_hex(out->body.len ? (const void *)out->body.data : "", out->body.len,
                   out->body_sha256);
    return ST_OK;
}
