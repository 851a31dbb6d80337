/*
 * restamp: builds the copy of a dead letter that goes back to the broker (restamp.h) — its
 * target, properties, headers and body, per dialect and mode — including the byte-span edits
 * of a BabelQueue body. The dead letter, its decode and its envelope are only read. The names,
 * restamp_check_body and outgoing_free are in restamp_common.c; the diff is the replay layer's
 * (src/replay/restamp_diff.c).
 */
#include "restamp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "sha256.h"
#include "util.h"

#define BQ_JSON_FLAGS (JSON_DECODE_ANY | JSON_ALLOW_NUL)

static const char *field_name(enum env_field f)
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

static void props_clear(struct props *p, enum prop_flag f)
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

/* ---- target ------------------------------------------------------------------------- */

static void set_target(struct outgoing *out, enum target_how how, const void *ex, size_t exn,
                       const void *rk, size_t rkn)
{
    bytes_free(&out->exchange);
    bytes_free(&out->routing_key);
    out->target_how = how;
    out->exchange = bytes_dup(exn ? ex : "", exn);
    out->routing_key = bytes_dup(rkn ? rk : "", rkn);
}

static enum status no_target(const struct decoded *d, const char *why, struct error *err)
{
    return error_set(err, ST_ENOTFOUND,
                     "there is no target for this %s dead letter (%s): give --to "
                     "EXCHANGE:ROUTING_KEY",
                     dialect_name(d->dialect), why);
}

/* The dialect's own rule (the explicit target is set by the caller). */
static enum status dialect_target(const struct decoded *d, const struct bytes *dlq,
                                  const struct bq_envelope *replacement, struct outgoing *out,
                                  struct error *err)
{
    const struct source *s = &d->source;
    switch (d->dialect) {
    case DIALECT_ACEMQ: {
        if (s->how == SOURCE_ACEMQ_SUFFIX && s->routing_key.len) {
            set_target(out, TARGET_ACEMQ_SOURCE, "", 0, s->routing_key.data, s->routing_key.len);
            return ST_OK;
        }
        size_t n = acemq_source_queue(dlq);
        if (!n)
            return no_target(d, "the queue's name has no .dlq, .parked or .dead suffix", err);
        set_target(out, TARGET_ACEMQ_SOURCE, "", 0, dlq->data, n);
        return ST_OK;
    }
    case DIALECT_BABELQUEUE: {
        if ((s->how == SOURCE_BQ_ORIGINAL_QUEUE || s->how == SOURCE_BQ_META_QUEUE) &&
            s->routing_key.len) {
            set_target(out,
                       s->how == SOURCE_BQ_ORIGINAL_QUEUE ? TARGET_BQ_ORIGINAL_QUEUE
                                                          : TARGET_BQ_META_QUEUE,
                       "", 0, s->routing_key.data, s->routing_key.len);
            return ST_OK;
        }
        const char *q;
        size_t qn;
        if (replacement && bq_source_queue(replacement, &q, &qn) && qn) {
            bool orig = replacement->dead_letter.original_queue.s &&
                        replacement->dead_letter.original_queue.len;
            set_target(out, orig ? TARGET_BQ_ORIGINAL_QUEUE : TARGET_BQ_META_QUEUE, "", 0, q, qn);
            return ST_OK;
        }
        return no_target(d, "neither dead_letter.original_queue nor meta.queue names a queue", err);
    }
    case DIALECT_AMQP:
    default:
        if (s->how == SOURCE_X_DEATH && (s->exchange.len || s->routing_key.len)) {
            set_target(out, TARGET_FIRST_DEATH, s->exchange.data, s->exchange.len,
                       s->routing_key.data, s->routing_key.len);
            return ST_OK;
        }
        return no_target(d, "it has no x-death history naming where it came from", err);
    }
}

/* ---- AceMQ -------------------------------------------------------------------------- */

/* Replaces the first header named name (keeping its place), drops any later ones, appends
 * when there is none. Takes ownership of v. */
static void stamp_set(struct htable *t, const char *name, struct hval v)
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
            bytes_free(&e->key);
            hval_free(&e->val);
        }
    }
    t->n = w;
    if (!done)
        htable_add(t, name, v);
}

static enum status build_acemq(const struct decoded *d, const struct restamp_opts *o,
                               const struct bytes *dlq, struct outgoing *out, struct error *err)
{
    const struct envelope *e = d->env;
    struct envelope_init in = {.dialect = e->dialect,
                               .id = e->id,
                               .type = e->type,
                               .correlation_id = e->correlation_id,
                               .causation_id = e->causation_id,
                               .origin = e->origin,
                               .error = e->error,
                               .claim = e->claim,
                               .version = e->version,
                               .attempt = e->attempt,
                               .first_seen_ms = e->first_seen_ms,
                               .defaulted = e->defaulted,
                               .route = e->route,
                               .reserved_unknown = e->reserved_unknown};
    struct htable *app = htable_copy(e->headers);
    struct bytes empty = {0, NULL};
    if (o->mode == RESTAMP_REPLAY) {
        if (!o->keep_error) {
            in.attempt = 1;
            in.error = empty;
            in.defaulted &= ~(unsigned)ED_ATTEMPT;
        }
        /* Whole seconds, as the libraries write it: 2026-02-03T04:05:06Z. */
        int64_t s = o->now_ms / 1000 - (o->now_ms % 1000 < 0);
        char at[32];
        time_format_rfc3339(s * 1000, false, at);
        int64_t count = d->replay.count < INT64_MAX ? d->replay.count + 1 : INT64_MAX;
        stamp_set(app, ACEMQ_REPLAYED_FROM,
                  hval_string(dlq->len ? (const void *)dlq->data : "", dlq->len));
        stamp_set(app, ACEMQ_REPLAYED_AT, hval_cstring(at));
        /* An int, as the Java library's `int` writes it (and the seed's current-library
         * replays carry); a count beyond it stays a long rather than wrapping. */
        stamp_set(app, ACEMQ_REPLAY_COUNT,
                  count <= INT32_MAX ? hval_int(HV_I32, count) : hval_int(HV_I64, count));
    } else {
        /* A new message: a new id caused by the old one, correlated as the old one was
         * (written out even when it had defaulted to the old id); not a replay. */
        in.id = out->id;
        in.causation_id = e->id;
        in.correlation_id = e->correlation_id;
        in.attempt = 1;
        in.error = empty;
        in.first_seen_ms = o->now_ms;
        in.defaulted &= ~(unsigned)(ED_ID | ED_ATTEMPT | ED_FIRST_SEEN | ED_CORRELATION);
        htable_remove(app, ACEMQ_REPLAYED_FROM);
        htable_remove(app, ACEMQ_REPLAYED_AT);
        htable_remove(app, ACEMQ_REPLAY_COUNT);
    }
    in.headers = app;
    in.refuse_reserved = true;
    const struct envelope *mid = NULL, *fin = NULL;
    enum status st = envelope_new(&in, &mid, err);
    htable_free(app);
    if (st != ST_OK)
        return st;
    st = envelope_with(mid, o->changes, o->n_changes, &fin, err);
    envelope_free(mid);
    if (st != ST_OK)
        return st;
    struct htable *all = acemq_to_headers(fin, &out->routing_key);
    htable_free(out->headers);
    out->headers = headers_filtered(all, false);
    out->headers_present = true;
    htable_free(all);
    bytes_free(&out->id);
    out->id = bytes_copy(&fin->id);
    props_set_string(&out->props, PROP_message_id, fin->id.data, fin->id.len);
    envelope_free(fin);
    return ST_OK;
}

/* ---- the BabelQueue body: byte-span edits ---------------------------------------------- */

/* An edit of every member of one object named key (duplicates included). */
struct member_edit {
    const char *key;
    bool remove;
    char *value; /* the new value's JSON text (owned); NULL with sub: edit the value's members */
    bool append; /* when the object has no such member, add key:value before its '}' */
    const struct member_edit *sub;
    size_t nsub;
};

struct span_member {
    size_t ks, ke; /* the key token, quotes included */
    size_t vs, ve; /* the value */
};

static size_t skip_ws(const unsigned char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

/* The end of the string token at s[i] == '"', or 0 when it does not close. */
static size_t string_end(const unsigned char *s, size_t n, size_t i)
{
    for (i++; i < n; i++) {
        if (s[i] == '\\')
            i++;
        else if (s[i] == '"')
            return i + 1;
    }
    return 0;
}

/* The end of the value starting at i, or 0. Containers are walked without recursion. */
static size_t value_end(const unsigned char *s, size_t n, size_t i)
{
    if (i >= n)
        return 0;
    if (s[i] == '"')
        return string_end(s, n, i);
    if (s[i] != '{' && s[i] != '[') {
        size_t j = i;
        while (j < n && !strchr(",}] \t\r\n", s[j]) && s[j])
            j++;
        return j > i ? j : 0;
    }
    size_t depth = 0;
    while (i < n) {
        if (s[i] == '"') {
            if (!(i = string_end(s, n, i)))
                return 0;
            continue;
        }
        if (s[i] == '{' || s[i] == '[')
            depth++;
        else if ((s[i] == '}' || s[i] == ']') && --depth == 0)
            return i + 1;
        i++;
    }
    return 0;
}

/* The members of the object at s[open] == '{' (owned array) and the place of its '}'. */
static bool object_scan(const unsigned char *s, size_t n, size_t open, struct span_member **out,
                        size_t *count, size_t *close)
{
    size_t cap = 0, i = skip_ws(s, n, open + 1);
    *out = NULL;
    *count = 0;
    if (i < n && s[i] == '}') {
        *close = i;
        return true;
    }
    for (;;) {
        struct span_member m;
        m.ks = i;
        if (i >= n || s[i] != '"' || !(m.ke = string_end(s, n, i)))
            break;
        size_t j = skip_ws(s, n, m.ke);
        if (j >= n || s[j] != ':')
            break;
        m.vs = skip_ws(s, n, j + 1);
        if (!(m.ve = value_end(s, n, m.vs)))
            break;
        xgrow((void **)out, &cap, *count + 1, sizeof **out);
        (*out)[(*count)++] = m;
        j = skip_ws(s, n, m.ve);
        if (j < n && s[j] == '}') {
            *close = j;
            return true;
        }
        if (j >= n || s[j] != ',')
            break;
        i = skip_ws(s, n, j + 1);
    }
    free(*out);
    *out = NULL;
    return false;
}

/* Whether the key token s[ks, ke) decodes to key (escapes such as \u005f decoded). */
static bool key_is(const unsigned char *s, size_t ks, size_t ke, const char *key)
{
    size_t kl = strlen(key);
    if (!memchr(s + ks, '\\', ke - ks))
        return ke - ks == kl + 2 && memcmp(s + ks + 1, key, kl) == 0;
    json_error_t je;
    json_t *j = json_loadb((const char *)s + ks, ke - ks, BQ_JSON_FLAGS, &je);
    bool r = json_is_string(j) && json_string_length(j) == kl &&
             memcmp(json_string_value(j), key, kl) == 0;
    json_decref(j);
    return r;
}

/* Appends the object at s[open] with the edits applied: kept members, the separators and
 * white space between them, and every value not edited are copied byte for byte. */
static bool object_edit(const unsigned char *s, size_t n, size_t open,
                        const struct member_edit *eds, size_t neds, struct strbuf *out, size_t *end)
{
    struct span_member *m;
    size_t count, close, sub_end;
    if (!object_scan(s, n, open, &m, &count, &close))
        return false;
    *end = close + 1;
    bool ok = true, first = true, seen[8] = {false};
    if (neds > sizeof seen / sizeof *seen)
        neds = sizeof seen / sizeof *seen;
    sb_addc(out, '{');
    size_t lead_end = count ? m[0].ks : close;
    sb_add(out, s + open + 1, lead_end - open - 1);
    for (size_t k = 0; k < count && ok; k++) {
        const struct member_edit *e = NULL;
        for (size_t x = 0; x < neds && !e; x++)
            if (key_is(s, m[k].ks, m[k].ke, eds[x].key)) {
                e = &eds[x];
                seen[x] = true;
            }
        if (e && e->remove)
            continue;
        if (!first)
            sb_add(out, s + m[k - 1].ve, m[k].ks - m[k - 1].ve);
        first = false;
        sb_add(out, s + m[k].ks, m[k].vs - m[k].ks);
        if (e && e->value)
            sb_adds(out, e->value);
        else if (e && e->sub && s[m[k].vs] == '{')
            ok = object_edit(s, m[k].ve, m[k].vs, e->sub, e->nsub, out, &sub_end);
        else
            sb_add(out, s + m[k].vs, m[k].ve - m[k].vs);
    }
    for (size_t x = 0; x < neds && ok; x++) {
        if (seen[x] || !eds[x].append || !eds[x].value)
            continue;
        if (!first)
            sb_addc(out, ',');
        first = false;
        sb_addf(out, "\"%s\":%s", eds[x].key, eds[x].value);
    }
    size_t trail = count ? m[count - 1].ve : close;
    sb_add(out, s + trail, close - trail);
    sb_addc(out, '}');
    free(m);
    return ok;
}

/* The same edits on the parsed document, to check the bytes against. */
static void doc_edit(json_t *obj, const struct member_edit *eds, size_t neds)
{
    for (size_t x = 0; x < neds; x++) {
        json_t *cur = json_object_get(obj, eds[x].key);
        if (eds[x].remove) {
            json_object_del(obj, eds[x].key);
        } else if (eds[x].value && (cur || eds[x].append)) {
            json_object_set_new(obj, eds[x].key, json_loads(eds[x].value, BQ_JSON_FLAGS, NULL));
        } else if (eds[x].sub && json_is_object(cur)) {
            doc_edit(cur, eds[x].sub, eds[x].nsub);
        }
    }
}

/* A JSON string as jansson writes it (UTF-8 and '/' literal); NULL when not UTF-8. */
static char *json_text(const struct bytes *b)
{
    json_t *j = json_stringn(b->len ? (const char *)b->data : "", b->len);
    char *s = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    json_decref(j);
    return s;
}

/* Sets (or adds, last one wins) the edit of key in a list of at most 8. */
static struct member_edit *edit_slot(struct member_edit *eds, size_t *n, const char *key)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(eds[i].key, key) == 0) {
            free(eds[i].value);
            memset(&eds[i], 0, sizeof eds[i]);
            eds[i].key = key;
            return &eds[i];
        }
    memset(&eds[*n], 0, sizeof eds[*n]);
    eds[*n].key = key;
    return &eds[(*n)++];
}

/* A counter value in the kind the old one had (an integer that fits, or a decimal string), else
 * a long. */
static struct hval counter_like(const struct hval *old, int64_t v)
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

static void counter_set(struct htable *t, const char *name, int64_t v)
{
    for (size_t i = 0; i < t->n; i++)
        if (bytes_eq_cstr(&t->e[i].key, name)) {
            struct hval nv = counter_like(&t->e[i].val, v);
            hval_free(&t->e[i].val);
            t->e[i].val = nv;
        }
}

static const char *bq_refusal(enum env_field f)
{
    static const char *const why[] = {
        [EF_ID] = "meta.id is the producer's and immutable (a re-issue mints a new one)",
        [EF_VERSION] = "meta.schema_version is the envelope's schema, not the job's version",
        [EF_CAUSATION] = "BabelQueue envelopes have no causation field (a parent link is the W3C "
                         "traceparent header)",
        [EF_FIRST_SEEN] = "meta.created_at is the producer's and immutable",
        [EF_ORIGIN] = "meta.lang is the producer's and immutable",
        [EF_ERROR] = "the error lives in dead_letter, which a replay removes",
        [EF_CLAIM] = "BabelQueue envelopes have no claim field",
    };
    return (size_t)f < sizeof why / sizeof *why && why[f] ? why[f] : "no such field";
}

/* Header changes on a plain table (BabelQueue and plain AMQP). */
static enum status header_change(struct htable *t, const struct env_change *c, struct error *err)
{
    if (c->field == EF_HEADER_SET) {
        htable_set(t, c->header, hval_copy(c->value));
        return ST_OK;
    }
    if (!htable_remove(t, c->header))
        return error_set(err, ST_ENOTFOUND, "there is no header %s to remove", c->header);
    return ST_OK;
}

/* Re-issue (a new message, caused by the old one): BabelQueue has no causation field, so the
 * link to the dead letter is not carried in the envelope; trace_id keeps the chain. */
static enum status build_bq(const struct decoded *d, const struct restamp_opts *o, bool need_target,
                            struct outgoing *out, struct error *err)
{
    struct bq_envelope own;
    const struct bq_envelope *b = &d->bq;
    const struct bytes *body = o->body ? o->body : &d->msg->body;
    memset(&own, 0, sizeof own);
    if (o->body) {
        bq_parse(body->len ? (const void *)body->data : "", body->len, NULL, &own);
        b = &own;
        if (own.reason == BQ_MALFORMED_JSON || own.reason == BQ_NOT_AN_OBJECT ||
            own.reason == BQ_UNDECODABLE_BODY) {
            error_set(err, ST_EPARSE, "the new body is not a BabelQueue envelope: %s (%s)",
                      bq_reason_name(own.reason), bq_reason_text(own.reason));
            bq_envelope_free(&own);
            return ST_EPARSE;
        }
    } else if (!json_is_object(b->doc) || b->raw_wrapped) {
        return error_set(err, ST_EUNSUPPORTED,
                         "this BabelQueue dead letter cannot be replayed as it is: %s (%s); "
                         "give it a new body to send",
                         bq_reason_name(b->reason), bq_reason_text(b->reason));
    }
    if (bq_detect_doc(b->doc, NULL) == BQ_DETECT_NONE) {
        bq_envelope_free(&own);
        return error_set(err, o->body ? ST_EPARSE : ST_EUNSUPPORTED,
                         "the body is not a BabelQueue envelope (no job or urn beside meta, "
                         "trace_id, data or attempts)%s",
                         o->body ? "" : ": give it a new body to send");
    }
    enum status st = need_target ? dialect_target(d, NULL, b, out, err) : ST_OK;

    /* The mode's edits, then the changes, each a member of the top-level object. */
    struct member_edit top[8], meta[2];
    size_t ntop = 0, nmeta = 0;
    edit_slot(top, &ntop, "dead_letter")->remove = true;
    struct member_edit *ed = edit_slot(top, &ntop, "attempts");
    ed->value = xstrdup("0");
    ed->append = true;
    if (o->mode == RESTAMP_REISSUE) {
        ed = edit_slot(meta, &nmeta, "id");
        ed->value = json_text(&out->id);
        ed->append = true;
        ed = edit_slot(meta, &nmeta, "created_at");
        ed->value = xasprintf("%lld", (long long)o->now_ms);
        ed->append = true;
        ed = edit_slot(top, &ntop, "meta");
        ed->sub = meta;
        ed->nsub = nmeta;
        props_set_string(&out->props, PROP_message_id, out->id.data, out->id.len);
    }
    /* x-attempts mirrors attempts (native-typed, as the producers write it). */
    counter_set(out->headers, "x-attempts", 0);
    if (o->bq_bypass)
        htable_set(out->headers, "bq-replay-bypass", hval_cstring("1"));
    for (size_t i = 0; i < o->n_changes && st == ST_OK; i++) {
        const struct env_change *c = &o->changes[i];
        const char *key = NULL;
        enum prop_flag pf = PROP_type;
        if (c->field == EF_TYPE) {
            key = b->job_key == BQ_JOB_KEY_URN ? "urn" : "job";
        } else if (c->field == EF_CORRELATION) {
            key = "trace_id";
            pf = PROP_correlation_id;
        } else if (c->field == EF_ATTEMPT) {
            ed = edit_slot(top, &ntop, "attempts");
            ed->value = xasprintf("%lld", (long long)c->number);
            ed->append = true;
            counter_set(out->headers, "x-attempts", c->number);
            continue;
        } else if (c->field == EF_HEADER_SET || c->field == EF_HEADER_REMOVE) {
            st = header_change(out->headers, c, err);
            continue;
        } else {
            st = error_set(err, ST_EUNSUPPORTED, "%s cannot be changed on a BabelQueue message: %s",
                           field_name(c->field), bq_refusal(c->field));
            break;
        }
        char *v = json_text(&c->text);
        if (!v) {
            st = error_set(err, ST_EINVAL, "the new %s is not valid UTF-8", field_name(c->field));
            break;
        }
        ed = edit_slot(top, &ntop, key);
        ed->value = v;
        ed->append = true;
        if (props_has(&out->props, pf))
            props_set_string(&out->props, pf, c->text.data, c->text.len);
    }

    struct strbuf sb;
    sb_init(&sb);
    const unsigned char *s = body->len ? body->data : (const unsigned char *)"";
    size_t open = skip_ws(s, body->len, 0), end = 0;
    if (st == ST_OK) {
        sb_add(&sb, s, open);
        if (open >= body->len || s[open] != '{' ||
            !object_edit(s, body->len, open, top, ntop, &sb, &end))
            st = error_set(err, ST_EPARSE, "the BabelQueue body could not be scanned for editing");
    }
    struct bq_envelope nb;
    memset(&nb, 0, sizeof nb);
    if (st == ST_OK) {
        /* After the object: the trailing white space, as it was. */
        sb_add(&sb, s + end, body->len - end);
        bq_parse(sb.buf, sb.len, NULL, &nb);
        json_t *want = json_deep_copy(b->doc);
        doc_edit(want, top, ntop);
        if (nb.reason != BQ_OK)
            st = error_set(err, ST_EPARSE,
                           "the BabelQueue consumers would reject the edited envelope: %s (%s)",
                           bq_reason_name(nb.reason), bq_reason_text(nb.reason));
        else if (!json_equal(want, nb.doc))
            st = error_set(err, ST_EPARSE,
                           "the edited BabelQueue body does not read as the edit meant (a bug)");
        json_decref(want);
    }
    if (st == ST_OK) {
        size_t len;
        char *nbody = sb_detach(&sb, &len);
        bytes_free(&out->body);
        out->body = (struct bytes){len, (unsigned char *)nbody};
        /* The AMQP projection: message_id = meta.id (the body wins). */
        if (nb.meta.id.s) {
            bytes_free(&out->id);
            out->id = bytes_dup(nb.meta.id.s, nb.meta.id.len);
            if (props_has(&out->props, PROP_message_id))
                props_set_string(&out->props, PROP_message_id, out->id.data, out->id.len);
        }
    }
    sb_free(&sb);
    bq_envelope_free(&nb);
    for (size_t i = 0; i < ntop; i++)
        free(top[i].value);
    for (size_t i = 0; i < nmeta; i++)
        free(meta[i].value);
    bq_envelope_free(&own);
    return st;
}

/* ---- plain AMQP --------------------------------------------------------------------- */

static enum status build_plain(const struct decoded *d, const struct restamp_opts *o,
                               struct outgoing *out, struct error *err)
{
    struct props *p = &out->props;
    if (o->mode == RESTAMP_REISSUE) {
        const struct bytes *c = &d->env->correlation_id;
        props_set_string(p, PROP_correlation_id, c->data, c->len);
        props_set_string(p, PROP_message_id, out->id.data, out->id.len);
    }
    for (size_t i = 0; i < o->n_changes; i++) {
        const struct env_change *c = &o->changes[i];
        enum prop_flag pf;
        switch (c->field) {
        case EF_ID:
            if (!c->text.len)
                return error_set(err, ST_EINVAL, "the id cannot be empty");
            pf = PROP_message_id;
            break;
        case EF_TYPE:
            pf = PROP_type;
            break;
        case EF_CORRELATION:
            pf = PROP_correlation_id;
            break;
        case EF_HEADER_SET:
        case EF_HEADER_REMOVE: {
            enum status st = header_change(out->headers, c, err);
            if (st != ST_OK)
                return st;
            continue;
        }
        default:
            return error_set(err, ST_EUNSUPPORTED,
                             "%s cannot be changed on a plain AMQP message: its properties have "
                             "no such field (id, type, correlation_id and header.NAME can be)",
                             field_name(c->field));
        }
        if (c->text.len)
            props_set_string(p, pf, c->text.data, c->text.len);
        else
            props_clear(p, pf);
    }
    const struct bytes *mid = props_string(p, PROP_message_id);
    if (mid && mid->len) {
        bytes_free(&out->id);
        out->id = bytes_copy(mid);
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
    bool explicit = o->to_exchange || o->to_routing_key;
    if (st == ST_OK && explicit) {
        const char *ex = o->to_exchange ? o->to_exchange : "";
        const char *rk = o->to_routing_key ? o->to_routing_key : "";
        set_target(out, TARGET_EXPLICIT, ex, strlen(ex), rk, strlen(rk));
    } else if (st == ST_OK && d->dialect != DIALECT_BABELQUEUE) {
        /* BabelQueue's may come from a new body: worked out in build_bq. */
        st = dialect_target(d, &dlq, NULL, out, err);
    }
    if (st == ST_OK && o->mode != RESTAMP_MOVE) {
        switch (d->dialect) {
        case DIALECT_ACEMQ:
            st = build_acemq(d, o, &dlq, out, err);
            break;
        case DIALECT_BABELQUEUE:
            st = build_bq(d, o, !explicit, out, err);
            break;
        case DIALECT_AMQP:
        default:
            st = build_plain(d, o, out, err);
            break;
        }
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
