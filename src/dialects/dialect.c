/*
 * dialect: the table of dialects, recognition, the dialect's own fields, and the helpers the
 * decode hooks share (dialect.h) but those that write into struct decoded (decode_hooks.c).
 */
#include "dialect.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "hval_amqp.h"
#include "hval_json.h"
#include "sha256.h"
#include "util.h"

/* ---- the table ------------------------------------------------------------------------ */

/* Tie-break order: the earlier wins a tie, so the more specific come first. Plain AMQP is
 * asked last of all (it answers 1 for everything) but sits at index 0 of the store's byte, so
 * that a zeroed entry reads as plain AMQP. */
static const struct dialect_ops *const table[] = {
    &dialect_amqp,        &dialect_acemq,       &dialect_babelqueue, &dialect_nservicebus,
    &dialect_masstransit, &dialect_spring,      &dialect_rebus,      &dialect_wolverine,
    &dialect_celery,      &dialect_cloudevents, /* last of all: any framework may carry CloudEvents
                                                   attributes */
};

#define N_DIALECTS (sizeof table / sizeof *table)

size_t dialect_count(void)
{
    return N_DIALECTS;
}

const struct dialect_ops *dialect_at(size_t i)
{
    return i < N_DIALECTS ? table[i] : NULL;
}

size_t dialect_index(const struct dialect_ops *d)
{
    for (size_t i = 0; i < N_DIALECTS; i++)
        if (table[i] == d)
            return i;
    return 0;
}

const struct dialect_ops *dialect_by_name(const char *name, size_t len)
{
    for (size_t i = 0; name && i < N_DIALECTS; i++)
        if (strlen(table[i]->name) == len && memcmp(table[i]->name, name, len) == 0)
            return table[i];
    return NULL;
}

const char *dialect_names(void)
{
    static char names[512];
    if (!names[0]) {
        size_t w = 0;
        for (size_t i = 0; i < N_DIALECTS; i++) {
            int n = snprintf(names + w, sizeof names - w, "%s%s", i ? ", " : "", table[i]->name);
            if (n < 0 || (size_t)n >= sizeof names - w)
                break;
            w += (size_t)n;
        }
    }
    return names;
}

void dialect_match_by(struct dialect_match *m, const char *name)
{
    if (m->n_by < DIALECT_BY_MAX)
        m->by[m->n_by++] = name;
}

const struct dialect_ops *dialect_recognise(const struct dialect_input *in, struct dialect_match *m)
{
    const struct dialect_ops *best = &dialect_amqp;
    memset(m, 0, sizeof *m);
    m->confidence = 1;
    for (size_t i = 0; i < N_DIALECTS; i++) {
        if (table[i] == &dialect_amqp || !table[i]->recognise)
            continue;
        /* it cannot win: the higher answer wins, the earlier a tie */
        if (table[i]->ceiling && table[i]->ceiling <= m->confidence)
            continue;
        struct dialect_match mine;
        memset(&mine, 0, sizeof mine);
        int c = table[i]->recognise(in, &mine);
        assert(!table[i]->ceiling || c <= table[i]->ceiling);
        if (c > 100)
            c = 100;
        if (c > m->confidence) {
            *m = mine;
            m->confidence = c;
            best = table[i];
        }
    }
    return best;
}

/* ---- the dialect's own fields ---------------------------------------------------------- */

struct dfield *dfields_add(struct dfields *f, const char *key, const char *label, const void *value,
                           size_t len, const char *meaning)
{
    xgrow((void **)&f->v, &f->cap, f->n + 1, sizeof *f->v);
    struct dfield *d = &f->v[f->n++];
    memset(d, 0, sizeof *d);
    d->key = key;
    d->label = label ? xstrdup(label) : NULL;
    d->meaning = meaning ? xstrdup(meaning) : NULL;
    d->text = value ? bytes_dup(value, len) : (struct bytes){0, NULL};
    d->style = DF_VALUE;
    d->where = DF_DIALECT;
    return d;
}

struct dfield *dfields_adds(struct dfields *f, const char *key, const char *label,
                            const char *value, const char *meaning)
{
    struct dfield *d = dfields_add(f, key, label, value, value ? strlen(value) : 0, meaning);
    if (!value) {
        d->text = bytes_from_cstr("(absent)");
        d->json = json_null();
        d->style = DF_DIM;
    }
    return d;
}

struct dfield *dfields_add_hval(struct dfields *f, const char *key, const char *label,
                                const struct hval *value, const char *meaning)
{
    if (!value)
        return dfields_adds(f, key, label, NULL, meaning);
    struct strbuf sb;
    sb_init(&sb);
    hval_format_scalar(value, &sb);
    struct dfield *d = dfields_add(f, key, label, sb.buf ? sb.buf : "", sb.len, meaning);
    sb_free(&sb);
    d->json = hval_to_json(value);
    return d;
}

struct dfield *dfields_add_int(struct dfields *f, const char *key, const char *label, int64_t v,
                               const char *meaning)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", (long long)v);
    struct dfield *d = dfields_add(f, key, label, buf, strlen(buf), meaning);
    d->json = json_integer((json_int_t)v);
    return d;
}

struct dfield *dfields_add_time(struct dfields *f, const char *key, const char *label, int64_t ms,
                                const char *meaning)
{
    char buf[32];
    time_format_rfc3339(ms, ms % 1000 != 0, buf);
    struct dfield *d = dfields_add(f, key, label, buf, strlen(buf), meaning);
    d->json = json_integer((json_int_t)ms);
    d->style = DF_ACCENT;
    return d;
}

struct dfield *dfields_add_yes_no(struct dfields *f, const char *key, const char *label, bool v,
                                  const char *meaning)
{
    struct dfield *d = dfields_adds(f, key, label, v ? "yes" : "no", meaning);
    d->json = json_boolean(v);
    return d;
}

struct dfield *dfields_add_int_opt(struct dfields *f, const char *key, const char *label, bool has,
                                   int64_t v, const char *meaning)
{
    if (has)
        return dfields_add_int(f, key, label, v, meaning);
    return dfields_adds(f, key, label, NULL, meaning);
}

struct dfield *dfields_add_nonempty(struct dfields *f, const char *key, const char *label,
                                    const struct bytes *b, const char *meaning)
{
    if (b->len)
        return dfields_add(f, key, label, b->data, b->len, meaning);
    return dfields_adds(f, key, label, NULL, meaning);
}

struct dfield *dfields_add_line(struct dfields *f, enum dfield_where where, enum dfield_style style,
                                const char *text)
{
    struct dfield *d = dfields_add(f, NULL, NULL, text, text ? strlen(text) : 0, NULL);
    d->where = (uint8_t)where;
    d->style = (uint8_t)style;
    return d;
}

void dfields_free(struct dfields *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->v[i].label);
        free(f->v[i].meaning);
        bytes_free(&f->v[i].text);
        json_decref(f->v[i].json);
    }
    free(f->v);
    memset(f, 0, sizeof *f);
}

json_t *dfields_to_json(const struct dfields *f)
{
    json_t *o = json_object();
    for (size_t i = 0; i < f->n; i++) {
        const struct dfield *d = &f->v[i];
        if (!d->key)
            continue;
        json_t *v = d->json        ? json_incref(d->json)
                    : d->text.data ? bytes_to_json(d->text.data, d->text.len)
                                   : json_null();
        json_object_set_new(o, d->key, v);
    }
    return o;
}

/* ---- helpers for decode hooks ------------------------------------------------------------ */

struct bytes dialect_identity_digest(const struct message *m)
{
    /* The headers' wire form, the routing key and the body: the same message reads with the
     * same id every time. */
    struct sha256 s;
    unsigned char d[32];
    sha256_init(&s);
    struct bytes wire = {0, NULL};
    if (htable_encode_wire(m->headers, &wire, NULL) == ST_OK)
        sha256_update(&s, wire.data, wire.len);
    bytes_free(&wire);
    sha256_update(&s, m->routing_key.data ? (const void *)m->routing_key.data : "",
                  m->routing_key.len);
    sha256_update(&s, m->body.data ? (const void *)m->body.data : "", m->body.len);
    sha256_final(&s, d);
    return bytes_dup(d, sizeof d);
}

struct bytes dialect_derived_id(const struct message *m)
{
    struct bytes digest = dialect_identity_digest(m);
    struct bytes id = envelope_derived_id(&digest);
    bytes_free(&digest);
    return id;
}

int dialect_id_of(const struct message *m, const char *header, struct bytes *id,
                  struct bytes *owned, unsigned *defaulted)
{
    const struct bytes *b = header ? dialect_header_text(m, header) : NULL;
    const struct bytes *mid = props_string(&m->props, PROP_message_id);
    *owned = (struct bytes){0, NULL};
    if (b && b->len) {
        *id = *b;
        return 0;
    }
    if (mid && mid->len) {
        *id = *mid;
        return 1;
    }
    *owned = dialect_derived_id(m);
    *id = *owned;
    *defaulted |= ED_ID;
    return 2;
}

int dialect_type_of(const struct message *m, struct bytes own, struct envelope_init *in)
{
    const struct bytes *tp = props_string(&m->props, PROP_type);
    if (own.len) {
        in->type = own;
        return 0;
    }
    if (tp && tp->len) {
        in->type = *tp;
        return 1;
    }
    in->type = (struct bytes){7, (unsigned char *)"message"};
    in->defaulted |= ED_TYPE;
    return 2;
}

int dialect_recognise_fault_copy(const struct message *m, struct dialect_match *mt,
                                 const char *id_header, const char *fault_a, const char *fault_b)
{
    bool id = dialect_has_header(m, id_header);
    bool a = dialect_has_header(m, fault_a);
    bool b = dialect_has_header(m, fault_b);
    if (a || b) {
        if (id)
            dialect_match_by(mt, id_header);
        if (a)
            dialect_match_by(mt, fault_a);
        if (b)
            dialect_match_by(mt, fault_b);
        return id ? 95 : 90;
    }
    if (id) {
        dialect_match_by(mt, id_header);
        return 70;
    }
    return 0;
}

void dialect_attempt_from_deaths(struct envelope_init *in, const struct death_summary *d)
{
    if (d && d->total > 0) {
        in->attempt = d->total;
    } else {
        in->attempt = 1;
        in->defaulted |= ED_ATTEMPT;
    }
}

int64_t dialect_first_seen_by_broker(const struct dialect_input *x)
{
    if (x->death->has_times)
        return x->death->first_time_ms;
    return x->msg->fetched_at_ms ? x->msg->fetched_at_ms : x->now_ms;
}

bool dialect_first_seen_fallback(const struct dialect_input *x, int64_t *ms)
{
    const struct props *p = &x->msg->props;
    if (props_has(p, PROP_timestamp) && p->timestamp <= (uint64_t)INT64_MAX / 1000) {
        *ms = (int64_t)p->timestamp * 1000;
        return true;
    }
    *ms = dialect_first_seen_by_broker(x);
    return false;
}

struct bytes dialect_type_by_route(const struct dialect_input *x)
{
    const struct bytes *rk = death_first_routing_key(x->death);
    if (rk && rk->len)
        return *rk;
    if (x->msg->routing_key.len)
        return x->msg->routing_key;
    return (struct bytes){7, (unsigned char *)"message"};
}

void dialect_type_or_route(const struct dialect_input *x, const struct bytes *own,
                           struct envelope_init *in)
{
    if (own && own->len) {
        in->type = *own;
    } else {
        in->defaulted |= ED_TYPE;
        in->type = dialect_type_by_route(x);
    }
}

void dialect_warn(struct strbuf *warnings, const char *name, const char *what)
{
    if (warnings->len)
        sb_addc(warnings, '\n');
    sb_addf(warnings, "%s %s", name, what);
}

void dialect_warn_not_strings(const struct message *m, const char *const *names,
                              struct strbuf *warnings)
{
    for (size_t i = 0; names[i]; i++) {
        const struct hval *v = htable_get(m->headers, names[i]);
        if (v && v->kind != HV_STRING && v->kind != HV_BYTES) {
            char what[64];
            snprintf(what, sizeof what, "is %s, not a string: not read", hkind_name(v->kind));
            dialect_warn(warnings, names[i], what);
        }
    }
}

const struct bytes *dialect_header_text(const struct message *m, const char *name)
{
    const struct hval *v = htable_get(m->headers, name);
    if (!v || (v->kind != HV_STRING && v->kind != HV_BYTES))
        return NULL;
    return &v->v.s;
}

bool dialect_has_header(const struct message *m, const char *name)
{
    return htable_get(m->headers, name) != NULL;
}

bool dialect_header_int(const struct message *m, const char *name, int64_t *out)
{
    const struct hval *v = htable_get(m->headers, name);
    if (!v)
        return false;
    if (hval_integer(v, out))
        return true;
    switch (v->kind) {
    case HV_STRING:
    case HV_BYTES: {
        const unsigned char *p = v->v.s.data;
        size_t n = v->v.s.len, i = 0;
        bool neg = n && p[0] == '-';
        i = neg ? 1 : 0;
        if (i >= n || n - i > 18)
            return false;
        int64_t x = 0;
        for (; i < n; i++) {
            if (p[i] < '0' || p[i] > '9')
                return false;
            x = x * 10 + (p[i] - '0');
        }
        *out = neg ? -x : x;
        return true;
    }
    default:
        return false;
    }
}
