/*
 * filter_eval: matching a compiled filter against a store entry or a message. It reads the
 * entry's own fields, and loads and decodes the message only when a term reaches for it;
 * regex and fingerprint results are memoised by the text they saw. filter_plan, which puts
 * the cheap terms of an AND or OR first, lives here because it is about what evaluation costs.
 */
#include "filter.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter_internal.h"
#include "groups_fingerprint.h"
#include "hval_json.h"

#define MEMO_MAX (1u << 20) /* remembered regex and fingerprint results */

/* ---- the order terms run in ---- */

/* AND and OR have no side effects, so their terms can run in any order: the entry's own
 * fields first, then the memoised costly ones, then what decodes or loads the message. A
 * filter like `header.tenant=acme type:x` then loads only the messages of type x. */
int filter_plan(struct node *nd)
{
    if (nd->kind == N_TERM) {
        const struct term *t = nd->t;
        if (t->field == F_HEADER || t->field == F_BODY)
            nd->cost = 3;
        else if (t->field == F_ORIGIN)
            nd->cost = 2;
        else
            nd->cost = t->has_re || t->field == F_FP || t->field == F_GROUP || t->field == F_ANY;
        return nd->cost;
    }
    nd->cost = 0;
    for (size_t i = 0; i < nd->n; i++) {
        int c = filter_plan(nd->kids[i]);
        nd->cost = c > nd->cost ? c : nd->cost;
    }
    if (nd->kind == N_NOT)
        return nd->cost;
    nd->run = xmalloc(nd->n * sizeof *nd->run);
    size_t w = 0;
    for (int c = 0; c <= 3; c++) /* stable: equal costs keep the order written */
        for (size_t i = 0; i < nd->n; i++)
            if (nd->kids[i]->cost == c)
                nd->run[w++] = nd->kids[i];
    return nd->cost;
}

/* ---- evaluation ---- */

struct span {
    const char *p;
    size_t n;
};

/* What a term is evaluated against: a store entry (with its message loaded on demand) or a
 * message. Only the first fields are set up front: this runs a million times a scan. */
struct ectx {
    const struct filter *f;
    const struct store *s;
    const struct store_entry *e; /* NULL: message mode */
    size_t i;
    int64_t now;
    const struct message *m;
    const struct decoded *d;
    bool tried_m, own_m, own_d, tmp_init;
    struct message msg;
    struct decoded dec;
    struct strbuf tmp;
};

static const struct message *ctx_message(struct ectx *c)
{
    if (c->m || !c->e || c->tried_m)
        return c->m;
    c->tried_m = true;
    c->own_m = true;
    if (store_get(c->s, c->i, &c->msg, NULL) == ST_OK)
        c->m = &c->msg;
    return c->m;
}

static const struct decoded *ctx_decoded(struct ectx *c)
{
    if (c->d)
        return c->d;
    const struct message *m = ctx_message(c);
    if (!m)
        return NULL;
    decode_message_ex(m, c->now, DECODE_NO_BODY, &c->dec);
    c->own_d = true;
    c->d = &c->dec;
    return c->d;
}

static struct strbuf *ctx_tmp(struct ectx *c)
{
    if (!c->tmp_init) {
        sb_init(&c->tmp);
        c->tmp_init = true;
    }
    sb_reset(&c->tmp);
    return &c->tmp;
}

static void ctx_done(struct ectx *c)
{
    if (c->own_d)
        decoded_free(&c->dec);
    if (c->own_m)
        message_free(&c->msg);
    if (c->tmp_init)
        sb_free(&c->tmp);
}

static struct span bytes_span(const struct bytes *b)
{
    struct span s = {b->data ? (const char *)b->data : "", b->len};
    return s;
}

static struct span ref_span(struct ectx *c, store_ref r)
{
    struct span s = {c->f->scratch, 0};
    s.n = store_text(c->s, r, c->f->scratch);
    return s;
}

/* The reason the broker gave, from an error the broker made ("…: REASON from QUEUE"). */
static struct span broker_reason(struct span err)
{
    static const char prefix[] = "dead-lettered by the broker: ";
    struct span r = {"", 0};
    size_t k = sizeof prefix - 1;
    if (err.n < k || memcmp(err.p, prefix, k) != 0)
        return r;
    r.p = err.p + k;
    r.n = err.n - k;
    for (size_t i = 0; i + 6 <= r.n; i++)
        if (memcmp(r.p + i, " from ", 6) == 0) {
            r.n = i;
            break;
        }
    return r;
}

/* A field's text from the entry (fl is one the entry holds). */
static struct span entry_text(struct ectx *c, enum field fl)
{
    const struct store_entry *e = c->e;
    switch (fl) {
    case F_ID:
        return ref_span(c, e->id);
    case F_TYPE:
        return ref_span(c, e->type);
    case F_CORR:
        return ref_span(c, e->correlation);
    case F_CAUSE:
        return ref_span(c, e->causation);
    case F_QUEUE:
        return ref_span(c, e->queue);
    case F_ERROR:
        return ref_span(c, e->error);
    case F_EXCEPTION:
        return ref_span(c, e->error_type);
    default:
        return (struct span){"", 0};
    }
}

/* The same field from the decoded message. */
static struct span decoded_text(const struct decoded *d, enum field fl)
{
    const struct envelope *env = d->env;
    switch (fl) {
    case F_ID:
        return bytes_span(&env->id);
    case F_TYPE:
        return bytes_span(&env->type);
    case F_CORR:
        return bytes_span(&env->correlation_id);
    case F_CAUSE:
        return bytes_span(&env->causation_id);
    case F_ERROR:
        return bytes_span(&d->error);
    case F_EXCEPTION:
        return bytes_span(&d->error_type);
    case F_ORIGIN:
        return bytes_span(&env->origin);
    default:
        return (struct span){"", 0};
    }
}

/* The text of a field, value k (reason and bare words have several); false past the last. */
static bool field_text(struct ectx *c, enum field fl, int k, struct span *out)
{
    static const enum field any[] = {F_ID, F_TYPE, F_ERROR, F_QUEUE};
    if (fl == F_ANY)
        return k < 4 && field_text(c, any[k], 0, out);
    if (k > (fl == F_REASON ? 1 : 0))
        return false;
    const struct store_entry *e = c->e;
    const struct decoded *d = e && fl != F_ORIGIN ? NULL : ctx_decoded(c);
    *out = (struct span){"", 0};
    if (!e && !d)
        return k == 0;
    if (fl == F_DIALECT) {
        const struct dialect_ops *o = e ? dialect_at(e->dialect) : d ? d->dialect : NULL;
        const char *name = o ? o->name : "amqp";
        *out = (struct span){name, strlen(name)};
    } else if (fl == F_REASON) {
        /* Values: the consumer's reject reason, then the broker's death reason. */
        const char *rej = e ? store_reject_name(c->s, e->reject)
                            : (d && d->reject_reason ? d->reject_reason : "");
        struct span r = {rej, strlen(rej)}, b = {"", 0};
        if (e ? (e->flags & SE_ERROR_FROM_BROKER) != 0 : d && d->error_from_broker)
            b = broker_reason(e ? entry_text(c, F_ERROR) : d ? decoded_text(d, F_ERROR) : b);
        if (k == 0)
            *out = r.n || !b.n ? r : b;
        else if (r.n && b.n)
            *out = b;
        else
            return false;
    } else if (fl == F_ORIGIN) {
        if (d)
            *out = decoded_text(d, fl);
    } else if (fl == F_QUEUE && !e) {
        *out = bytes_span(&c->m->queue);
    } else {
        *out = e ? entry_text(c, fl) : d ? decoded_text(d, fl) : *out;
    }
    return true;
}

static int64_t sat_sub(int64_t a, int64_t b)
{
    if (b < 0 && a > INT64_MAX + b)
        return INT64_MAX;
    if (b > 0 && a < INT64_MIN + b)
        return INT64_MIN;
    return a - b;
}

static bool cmp_ok(enum op op, int c)
{
    switch (op) {
    case OP_GT:
        return c > 0;
    case OP_GE:
        return c >= 0;
    case OP_LT:
        return c < 0;
    case OP_LE:
        return c <= 0;
    case OP_NE:
        return c != 0;
    default:
        return c == 0;
    }
}

static int cmp_i64(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

static bool memo_get(const struct filter *f, uint64_t key, bool *value)
{
    const struct memo *m = f->memo;
    for (size_t h = (size_t)key & m->mask; m->slot[h].key; h = (h + 1) & m->mask) {
        if (m->slot[h].key == key) {
            *value = m->slot[h].value;
            return true;
        }
    }
    return false;
}

static void memo_put(const struct filter *f, uint64_t key, bool value)
{
    struct memo *m = f->memo;
    if ((m->used + 1) * 2 > m->mask) {
        size_t cap = m->mask + 1 >= MEMO_MAX ? m->mask + 1 : (m->mask + 1) * 2;
        struct memo_slot *old = m->slot;
        size_t old_cap = m->mask + 1;
        m->slot = xcalloc(cap, sizeof *m->slot);
        m->mask = cap - 1;
        m->used = 0;
        for (size_t i = 0; i < old_cap && cap != old_cap; i++) /* at the cap: start over */
            if (old[i].key)
                memo_put(f, old[i].key, old[i].value);
        free(old);
    }
    size_t h = (size_t)key & m->mask;
    while (m->slot[h].key && m->slot[h].key != key)
        h = (h + 1) & m->mask;
    if (!m->slot[h].key)
        m->used++;
    m->slot[h].key = key;
    m->slot[h].value = value;
}

/* Linear in the text (rx.h): a dead letter's body is the sender's, and can be megabytes. */
static bool re_match(const struct term *t, const char *s, size_t n)
{
    return rx_match(t->re, s, n, NULL);
}

/* The positive form of a text operator (NE is the negation of EQ, applied by the caller). */
static bool text_match(const struct filter *f, const struct term *t, struct span v)
{
    switch (t->op) {
    case OP_EQ:
    case OP_NE:
        return v.n == t->len && memcmp(v.p, t->text, v.n) == 0;
    case OP_SUB:
        return filter_ci_contains(v.p, v.n, t->text, t->len);
    case OP_GLOB:
        return filter_glob_match(t->glob, t->glob_len, v.p, v.n, t->icase);
    case OP_RE: {
        uint64_t key = filter_hash64(v.p, v.n, t->id * 0x9e3779b97f4a7c15ULL + 1) | 1;
        bool r;
        if (memo_get(f, key, &r))
            return r;
        r = re_match(t, v.p, v.n);
        memo_put(f, key, r);
        return r;
    }
    default:
        return false;
    }
}

static const struct hval *header_get(const struct htable *h, const char *name, size_t n)
{
    if (!h)
        return NULL;
    for (size_t i = 0; i < h->n; i++)
        if (h->e[i].key.len == n && memcmp(h->e[i].key.data, name, n) == 0)
            return &h->e[i].val;
    for (size_t i = 0; i < h->n; i++) { /* Tenant finds tenant when there is no Tenant */
        size_t k = 0;
        if (h->e[i].key.len != n)
            continue;
        while (k < n && filter_lower(h->e[i].key.data[k]) == filter_lower((unsigned char)name[k]))
            k++;
        if (k == n)
            return &h->e[i].val;
    }
    return NULL;
}

static bool header_number(const struct hval *v, int64_t *i, double *d, bool *is_int)
{
    switch (v->kind) {
    case HV_I8:
    case HV_I16:
    case HV_I32:
    case HV_I64:
        *i = v->v.i;
        *d = (double)*i;
        *is_int = true;
        return true;
    case HV_U8:
    case HV_U16:
    case HV_U32:
    case HV_U64:
    case HV_TIMESTAMP:
        *is_int = v->v.u <= (uint64_t)INT64_MAX;
        *i = *is_int ? (int64_t)v->v.u : INT64_MAX;
        *d = (double)v->v.u;
        return true;
    case HV_F32:
    case HV_F64:
        *d = v->kind == HV_F32 ? (double)v->v.f32 : v->v.f64;
        *is_int = false;
        return *d == *d;
    case HV_DECIMAL: {
        double x = (double)v->v.dec.value;
        for (unsigned k = 0; k < v->v.dec.scale && k < 40; k++)
            x /= 10;
        *d = x;
        *is_int = false;
        return true;
    }
    case HV_STRING:
    case HV_BYTES: {
        size_t a = 0, b = v->v.s.len;
        const char *s = (const char *)v->v.s.data;
        while (a < b && filter_is_space(s[a]))
            a++;
        while (b > a && filter_is_space(s[b - 1]))
            b--;
        return filter_parse_number(s + a, b - a, d, i, is_int);
    }
    default:
        return false;
    }
}

static struct span header_text(struct ectx *c, const struct hval *v)
{
    if (v->kind == HV_STRING || v->kind == HV_BYTES)
        return bytes_span(&v->v.s);
    struct strbuf *sb = ctx_tmp(c);
    switch (v->kind) {
    case HV_VOID:
        break;
    case HV_BOOL:
        sb_adds(sb, v->v.b ? "true" : "false");
        break;
    case HV_I8:
    case HV_I16:
    case HV_I32:
    case HV_I64:
        sb_addf(sb, "%lld", (long long)v->v.i);
        break;
    case HV_U8:
    case HV_U16:
    case HV_U32:
    case HV_U64:
        sb_addf(sb, "%llu", (unsigned long long)v->v.u);
        break;
    case HV_F32:
    case HV_F64:
        sb_addf(sb, "%.15g", v->kind == HV_F32 ? (double)v->v.f32 : v->v.f64);
        break;
    case HV_DECIMAL: {
        int64_t i;
        double d;
        bool is_int;
        header_number(v, &i, &d, &is_int);
        sb_addf(sb, "%.*f", v->v.dec.scale > 20 ? 20 : (int)v->v.dec.scale, d);
        break;
    }
    case HV_TIMESTAMP: {
        char t[32];
        time_format_rfc3339(v->v.u > (uint64_t)INT64_MAX / 1000 ? 0 : (int64_t)v->v.u * 1000, false,
                            t);
        sb_adds(sb, t);
        break;
    }
    default: { /* arrays and tables: their JSON, so x-death can be searched */
        json_t *j = hval_to_json(v);
        char *text = j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        if (text)
            sb_adds(sb, text);
        free(text);
        json_decref(j);
        break;
    }
    }
    struct span s = {sb->buf ? sb->buf : "", sb->len};
    return s;
}

static bool eval_header(struct ectx *c, const struct term *t)
{
    const struct message *m = ctx_message(c);
    const struct hval *v = m ? header_get(m->headers, t->header, t->header_len) : NULL;
    if (!v)
        return t->op == OP_NE;
    if (t->has_num) {
        int64_t i;
        double d;
        bool is_int;
        if (header_number(v, &i, &d, &is_int)) {
            int r = is_int && t->num_int ? cmp_i64(i, t->num) : (d > t->dnum) - (d < t->dnum);
            return cmp_ok(t->op, r);
        }
        if (t->op >= OP_GT)
            return false;
    }
    bool r = text_match(c->f, t, header_text(c, v));
    return t->op == OP_NE ? !r : r;
}

/* The group's key of the fingerprint and the type (groups.h), remembered by their texts. The
 * entry's texts share one scratch buffer: the type is read again after the error. */
static bool eval_group(struct ectx *c, const struct term *t)
{
    struct span type = {"", 0}, err = {"", 0};
    field_text(c, F_TYPE, 0, &type);
    uint64_t key = filter_hash64(type.p, type.n, t->id * 0x9e3779b97f4a7c15ULL + 11);
    field_text(c, F_ERROR, 0, &err);
    key = filter_hash64(err.p, err.n, key) | 1;
    bool r;
    if (!memo_get(c->f, key, &r)) {
        uint64_t fp = error_fingerprint(err.p, err.n, NULL);
        field_text(c, F_TYPE, 0, &type);
        r = group_key(fp, type.p, type.n) == (uint64_t)t->num;
        memo_put(c->f, key, r);
    }
    return t->op == OP_NE ? !r : r;
}

static bool eval_term(struct ectx *c, const struct term *t)
{
    const struct store_entry *e = c->e;
    if (t->field == F_HEADER)
        return eval_header(c, t);
    if (t->field == F_BODY) {
        const struct message *m = ctx_message(c);
        struct span b = {"", 0};
        if (m)
            b = bytes_span(&m->body);
        bool r = text_match(c->f, t, b);
        return t->op == OP_NE ? !r : r;
    }
    if (t->field == F_FP) {
        struct span err = {"", 0};
        field_text(c, F_ERROR, 0, &err);
        uint64_t key = filter_hash64(err.p, err.n, t->id * 0x9e3779b97f4a7c15ULL + 7) | 1;
        bool r;
        if (!memo_get(c->f, key, &r)) {
            char hex[17];
            snprintf(hex, sizeof hex, "%016llx",
                     (unsigned long long)error_fingerprint(err.p, err.n, NULL));
            r = text_match(c->f, t, (struct span){hex, 16});
            memo_put(c->f, key, r);
        }
        return t->op == OP_NE ? !r : r;
    }
    if (t->field == F_GROUP)
        return eval_group(c, t);
    enum fkind k = t->field == F_ANY ? FK_TEXT : filter_fields[t->field].kind;
    if (k == FK_TEXT) {
        struct span v;
        for (int slot = 0; field_text(c, t->field, slot, &v); slot++)
            if (text_match(c->f, t, v))
                return t->op != OP_NE;
        return t->op == OP_NE;
    }
    if (k == FK_SIZE) {
        int64_t n = e ? (int64_t)e->body_size
                      : (int64_t)(c->m->body.len > UINT32_MAX ? UINT32_MAX : c->m->body.len);
        return cmp_ok(t->op, cmp_i64(n, t->num));
    }
    const struct decoded *d = e ? NULL : ctx_decoded(c);
    if (!e && !d)
        return false;
    int64_t first_seen = e ? e->first_seen_ms : d->env->first_seen_ms;
    switch (k) {
    case FK_NUMBER: {
        int64_t a = e ? e->attempt : d->env->attempt;
        return cmp_ok(t->op, cmp_i64(a > INT32_MAX ? INT32_MAX : a, t->num));
    }
    case FK_DURATION:
        return cmp_ok(t->op, cmp_i64(sat_sub(c->now, first_seen), t->ms));
    case FK_TIME: {
        int64_t at = first_seen;
        if (t->field == F_FAILED_AT) {
            at = e ? e->dead_at_ms : d->failed_at_ms;
            if (!at) /* not known: no time compares with it */
                return false;
        }
        return cmp_ok(t->op, cmp_i64(at, t->relative ? sat_sub(c->now, t->ms) : t->ms));
    }
    default:
        return false;
    }
}

static bool eval(struct ectx *c, const struct node *nd)
{
    switch (nd->kind) {
    case N_TERM:
        return eval_term(c, nd->t);
    case N_AND:
        for (size_t i = 0; i < nd->n; i++)
            if (!eval(c, nd->run[i]))
                return false;
        return true;
    case N_OR:
        for (size_t i = 0; i < nd->n; i++)
            if (eval(c, nd->run[i]))
                return true;
        return false;
    case N_NOT:
        return !eval(c, nd->kids[0]);
    }
    return false;
}

static void ctx_init(struct ectx *c, const struct filter *f, int64_t now)
{
    c->f = f;
    c->s = NULL;
    c->e = NULL;
    c->i = 0;
    c->now = now;
    c->m = NULL;
    c->d = NULL;
    c->tried_m = c->own_m = c->own_d = c->tmp_init = false;
}

bool filter_match_entry(const struct filter *f, const struct store *s, size_t i, int64_t now_ms)
{
    const struct store_entry *e = s ? store_entry_at(s, i) : NULL;
    if (!e)
        return false;
    if (!f || !f->root)
        return true;
    struct ectx c;
    ctx_init(&c, f, now_ms);
    c.s = s;
    c.e = e;
    c.i = i;
    bool r = eval(&c, f->root);
    ctx_done(&c);
    return r;
}

bool filter_match_message(const struct filter *f, const struct message *m, const struct decoded *d,
                          int64_t now_ms)
{
    if (!m)
        return false;
    if (!f || !f->root)
        return true;
    struct ectx c;
    ctx_init(&c, f, now_ms);
    c.m = m;
    c.d = d;
    bool r = eval(&c, f->root);
    ctx_done(&c);
    return r;
}
