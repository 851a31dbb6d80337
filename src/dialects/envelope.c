/*
 * envelope: construction (defaults and clamps applied once), `with`, equality.
 */
#include "envelope.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <uuid/uuid.h>

#include "util.h"

#define ACEMQ_PREFIX "x-acemq-"

bool acemq_reserved_name(const void *name, size_t len)
{
    size_t n = sizeof ACEMQ_PREFIX - 1;
    return len >= n && memcmp(name, ACEMQ_PREFIX, n) == 0;
}

static enum status refuse_reserved(const struct htable *t, struct error *err)
{
    struct strbuf names;
    sb_init(&names);
    for (size_t i = 0; t && i < t->n; i++) {
        const struct bytes *k = &t->e[i].key;
        if (acemq_reserved_name(k->data, k->len)) {
            if (names.len)
                sb_adds(&names, ", ");
            sb_add(&names, k->data, k->len > 64 ? 64 : k->len);
        }
    }
    if (!names.len)
        return ST_OK;
    error_set(err, ST_ERESERVED, "these header names belong to AceMQ and cannot be set by hand: %s",
              names.buf);
    sb_free(&names);
    return ST_ERESERVED;
}

/* An envelope and, in the same allocation, its strings and the empty tables it points at
 * for a table not given: one malloc and one free, where each string and table was one (an
 * envelope is never changed, so nothing of it is freed or grown on its own). */
struct env_block {
    struct envelope e;
    struct htable empty[3];
    unsigned char strings[];
};

static size_t need(const struct bytes *b)
{
    return b->data ? b->len + 1 : 0;
}

/* b copied to *p (NUL-terminated; absent stays absent). */
static struct bytes put(unsigned char **p, const struct bytes *b)
{
    if (!b->data)
        return (struct bytes){0, NULL};
    struct bytes r = {b->len, *p};
    if (b->len)
        memcpy(*p, b->data, b->len);
    (*p)[b->len] = '\0';
    *p += b->len + 1;
    return r;
}

/* The envelope of in: its strings copied in (borrowed), its tables taken (in's set to NULL)
 * when take, else copied; a table absent or empty is one of the block's own empty ones. */
static struct envelope *build(struct envelope_init *in, bool take)
{
    static const struct bytes none = {0, (unsigned char *)""};
    const struct bytes *id = in->id.data ? &in->id : &none;
    bool own_corr = in->correlation_id.len != 0;
    const struct bytes *s[] = {&in->type, &in->causation_id, &in->origin, &in->error, &in->claim};
    size_t total = need(id) + (own_corr ? need(&in->correlation_id) : 0);
    for (size_t i = 0; i < sizeof s / sizeof *s; i++)
        total += need(s[i]);
    struct env_block *w = xmalloc(sizeof *w + total);
    memset(w, 0, sizeof *w);
    struct envelope *e = &w->e;
    unsigned char *p = w->strings;
    e->attempt_from_zero = in->attempt_from_zero;
    e->id = put(&p, id);
    e->type = put(&p, &in->type);
    e->version = in->version < 1 ? 1 : in->version;
    /* the same bytes as the id when it defaults to it: an envelope is never changed */
    e->correlation_id = own_corr ? put(&p, &in->correlation_id) : e->id;
    e->causation_id = put(&p, &in->causation_id);
    /* AceMQ clamps attempts to >= 1; BabelQueue's transport counter starts at 0. */
    e->attempt = in->attempt;
    if (!in->attempt_from_zero && e->attempt < 1)
        e->attempt = 1;
    if (e->attempt < 0)
        e->attempt = 0;
    e->first_seen_ms = in->first_seen_ms;
    e->origin = put(&p, &in->origin);
    e->error = put(&p, &in->error);
    e->claim = put(&p, &in->claim);
    e->defaulted = in->defaulted;
    const struct htable **t[] = {&in->headers, &in->route, &in->reserved_unknown};
    struct htable **to[] = {&e->headers, &e->route, &e->reserved_unknown};
    for (size_t i = 0; i < 3; i++) {
        const struct htable *src = *t[i];
        if (take) {
            *to[i] = src ? (struct htable *)(uintptr_t)src : &w->empty[i];
            *t[i] = NULL;
        } else {
            *to[i] = src && src->n ? htable_copy(src) : &w->empty[i];
        }
    }
    return e;
}

enum status envelope_new(const struct envelope_init *in, const struct envelope **out,
                         struct error *err)
{
    if (in->refuse_reserved) {
        enum status st = refuse_reserved(in->headers, err);
        if (st != ST_OK)
            return st;
    }
    struct envelope_init c = *in;
    *out = build(&c, false);
    return ST_OK;
}

static void init_clear(struct envelope_init *in)
{
    struct bytes *b[] = {&in->id,     &in->type,  &in->correlation_id, &in->causation_id,
                         &in->origin, &in->error, &in->claim};
    for (size_t i = 0; i < sizeof b / sizeof *b; i++)
        bytes_free(b[i]);
    const struct htable **t[] = {&in->headers, &in->route, &in->reserved_unknown};
    for (size_t i = 0; i < sizeof t / sizeof *t; i++) {
        htable_free((struct htable *)(uintptr_t)*t[i]);
        *t[i] = NULL;
    }
}

enum status envelope_take(struct envelope_init *in, const struct envelope **out, struct error *err)
{
    if (in->refuse_reserved) {
        enum status st = refuse_reserved(in->headers, err);
        if (st != ST_OK) {
            init_clear(in);
            return st;
        }
    }
    *out = build(in, true);
    init_clear(in);
    return ST_OK;
}

enum status envelope_take_tables(struct envelope_init *in, const struct envelope **out,
                                 struct error *err)
{
    if (in->refuse_reserved) {
        enum status st = refuse_reserved(in->headers, err);
        if (st != ST_OK) {
            const struct htable **t[] = {&in->headers, &in->route, &in->reserved_unknown};
            for (size_t i = 0; i < 3; i++) {
                htable_free((struct htable *)(uintptr_t)*t[i]);
                *t[i] = NULL;
            }
            return st;
        }
    }
    *out = build(in, true);
    return ST_OK;
}

void envelope_free(const struct envelope *ce)
{
    if (!ce)
        return;
    struct env_block *w = (struct env_block *)(uintptr_t)ce;
    struct htable *t[] = {w->e.headers, w->e.route, w->e.reserved_unknown};
    for (size_t i = 0; i < 3; i++)
        if (t[i] != &w->empty[i])
            htable_free(t[i]);
    free(w);
}

bool envelope_equal(const struct envelope *a, const struct envelope *b)
{
    return a->attempt_from_zero == b->attempt_from_zero && bytes_eq(&a->id, &b->id) &&
           bytes_eq(&a->type, &b->type) && a->version == b->version &&
           bytes_eq(&a->correlation_id, &b->correlation_id) &&
           bytes_eq(&a->causation_id, &b->causation_id) && a->attempt == b->attempt &&
           a->first_seen_ms == b->first_seen_ms && bytes_eq(&a->origin, &b->origin) &&
           bytes_eq(&a->error, &b->error) && bytes_eq(&a->claim, &b->claim) &&
           htable_equal(a->headers, b->headers) && htable_equal(a->route, b->route) &&
           htable_equal(a->reserved_unknown, b->reserved_unknown);
}

static void init_from(const struct envelope *e, struct envelope_init *in)
{
    memset(in, 0, sizeof *in);
    in->attempt_from_zero = e->attempt_from_zero;
    in->id = e->id;
    in->type = e->type;
    in->correlation_id = e->correlation_id;
    in->causation_id = e->causation_id;
    in->origin = e->origin;
    in->error = e->error;
    in->claim = e->claim;
    in->version = e->version;
    in->attempt = e->attempt;
    in->first_seen_ms = e->first_seen_ms;
    in->defaulted = e->defaulted;
    in->route = e->route;
    in->reserved_unknown = e->reserved_unknown;
}

enum status envelope_with(const struct envelope *e, const struct env_change *changes, size_t n,
                          const struct envelope **out, struct error *err)
{
    struct envelope_init in;
    init_from(e, &in);
    struct htable *headers = htable_copy(e->headers);
    in.headers = headers;
    in.refuse_reserved = true;
    /* A field changed by hand is no longer a default. */
    for (size_t i = 0; i < n; i++) {
        const struct env_change *c = &changes[i];
        switch (c->field) {
        case EF_ID:
            if (!c->text.len) {
                htable_free(headers);
                return error_set(err, ST_EINVAL, "the id cannot be empty");
            }
            /* As AceMQ's with(): the correlation stays what it was (it does not follow). */
            in.id = c->text;
            in.defaulted &= ~ED_ID;
            break;
        case EF_TYPE:
            in.type = c->text;
            in.defaulted &= ~ED_TYPE;
            break;
        case EF_VERSION:
            in.version = c->number;
            in.defaulted &= ~ED_VERSION;
            break;
        case EF_CORRELATION:
            in.correlation_id = c->text;
            in.defaulted &= ~ED_CORRELATION;
            break;
        case EF_CAUSATION:
            in.causation_id = c->text;
            break;
        case EF_ATTEMPT:
            in.attempt = c->number;
            in.defaulted &= ~ED_ATTEMPT;
            break;
        case EF_FIRST_SEEN:
            in.first_seen_ms = c->number;
            in.defaulted &= ~ED_FIRST_SEEN;
            break;
        case EF_ORIGIN:
            in.origin = c->text;
            break;
        case EF_ERROR:
            in.error = c->text;
            break;
        case EF_CLAIM:
            in.claim = c->text;
            break;
        case EF_HEADER_SET:
            if (!c->header || !c->value) {
                htable_free(headers);
                return error_set(err, ST_EINVAL, "a header change needs a name and a value");
            }
            if (acemq_reserved_name(c->header, strlen(c->header))) {
                htable_free(headers);
                return error_set(err, ST_ERESERVED,
                                 "%s belongs to AceMQ and cannot be set as a header; change the "
                                 "envelope field instead",
                                 c->header);
            }
            htable_set(headers, c->header, hval_copy(c->value));
            break;
        case EF_HEADER_REMOVE:
            if (!c->header || !htable_remove(headers, c->header)) {
                htable_free(headers);
                return error_set(err, ST_ENOTFOUND, "there is no header %s to remove",
                                 c->header ? c->header : "(null)");
            }
            break;
        default:
            htable_free(headers);
            return error_set(err, ST_EINVAL, "unknown change");
        }
    }
    enum status st = envelope_new(&in, out, err);
    htable_free(headers);
    return st;
}

static const struct {
    const char *name;
    enum env_field field;
    bool numeric;
} field_names[] = {
    {"id", EF_ID, false},
    {"type", EF_TYPE, false},
    {"version", EF_VERSION, true},
    {"correlation_id", EF_CORRELATION, false},
    {"correlation", EF_CORRELATION, false},
    {"causation_id", EF_CAUSATION, false},
    {"causation", EF_CAUSATION, false},
    {"attempt", EF_ATTEMPT, true},
    {"first_seen_ms", EF_FIRST_SEEN, true},
    {"origin", EF_ORIGIN, false},
    {"error", EF_ERROR, false},
    {"claim", EF_CLAIM, false},
};

/* The value of header.NAME:KIND=VALUE. */
enum status env_change_value(enum hkind kind, const char *name, const char *val, struct hval *hv,
                             struct error *err)
{
    char *end;
    errno = 0;
    if (kind == HV_STRING) {
        *hv = hval_cstring(val);
        return ST_OK;
    }
    if (kind == HV_BOOL) {
        if (strcmp(val, "true") != 0 && strcmp(val, "false") != 0)
            return error_set(err, ST_EINVAL, "header.%s: a bool is true or false", name);
        *hv = hval_bool(val[0] == 't');
        return ST_OK;
    }
    if (kind == HV_F32 || kind == HV_F64) {
        double d = strtod(val, &end);
        if (errno || end == val || *end)
            return error_set(err, ST_EINVAL, "header.%s: \"%s\" is not a number", name, val);
        *hv = kind == HV_F32 ? hval_f32((float)d) : hval_f64(d);
        return ST_OK;
    }
    if (hkind_is_signed(kind)) {
        long long v = strtoll(val, &end, 10);
        int bits = kind == HV_I8 ? 8 : kind == HV_I16 ? 16 : kind == HV_I32 ? 32 : 64;
        long long lo = bits == 64 ? INT64_MIN : -(1ll << (bits - 1));
        long long hi = bits == 64 ? INT64_MAX : (1ll << (bits - 1)) - 1;
        if (errno || end == val || *end || v < lo || v > hi)
            return error_set(err, ST_EINVAL, "header.%s: \"%s\" is not an int%d", name, val, bits);
        *hv = hval_int(kind, v);
        return ST_OK;
    }
    if (hkind_is_unsigned(kind) || kind == HV_TIMESTAMP) {
        unsigned long long v = strtoull(val, &end, 10);
        int bits = kind == HV_U8 ? 8 : kind == HV_U16 ? 16 : kind == HV_U32 ? 32 : 64;
        unsigned long long hi = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
        if (errno || end == val || *end || val[0] == '-' || v > hi)
            return error_set(err, ST_EINVAL, "header.%s: \"%s\" is not a %s", name, val,
                             hkind_name(kind));
        *hv = hval_uint(kind, v);
        return ST_OK;
    }
    return error_set(err, ST_EUNSUPPORTED,
                     "header.%s: a %s value cannot be given on the command line", name,
                     hkind_name(kind));
}

enum status env_change_parse(const char *s, struct env_change *out, struct hval *hv,
                             struct error *err)
{
    memset(out, 0, sizeof *out);
    *hv = hval_void();
    if (strncmp(s, "-header.", 8) == 0 && s[8]) {
        out->field = EF_HEADER_REMOVE;
        out->header = s + 8;
        return ST_OK;
    }
    const char *eq = strchr(s, '=');
    if (!eq)
        return error_set(err, ST_EINVAL, "\"%s\": a change is FIELD=VALUE (or -header.NAME)", s);
    size_t klen = (size_t)(eq - s);
    const char *val = eq + 1;
    if (klen > 7 && strncmp(s, "header.", 7) == 0) {
        char name[256];
        size_t nlen = klen - 7;
        if (nlen >= sizeof name)
            return error_set(err, ST_ERANGE, "header names are at most 255 bytes");
        memcpy(name, s + 7, nlen);
        name[nlen] = '\0';
        /* header.NAME:KIND=VALUE gives a typed value (int32, int64, bool, double, …);
         * without a kind the value is a string. */
        char *colon = strrchr(name, ':');
        enum hkind kind = HV_STRING;
        if (colon && colon[1]) {
            if (!hkind_from_name(colon + 1, &kind))
                return error_set(err, ST_EINVAL,
                                 "header.%s: unknown kind \"%s\" (int8…int64, uint8…uint64, "
                                 "bool, float, double, string, timestamp)",
                                 name, colon + 1);
            *colon = '\0';
        }
        enum status st = env_change_value(kind, name, val, hv, err);
        if (st != ST_OK)
            return st;
        out->untyped = !colon || !colon[1];
        out->field = EF_HEADER_SET;
        out->header = xstrdup(name);
        out->value = hv;
        return ST_OK;
    }
    for (size_t i = 0; i < sizeof field_names / sizeof *field_names; i++) {
        if (strlen(field_names[i].name) != klen || strncmp(field_names[i].name, s, klen) != 0)
            continue;
        out->field = field_names[i].field;
        if (field_names[i].numeric) {
            char *end;
            errno = 0;
            long long v = strtoll(val, &end, 10);
            if (errno || end == val || *end)
                return error_set(err, ST_EINVAL, "%.*s takes an integer, not \"%s\"", (int)klen, s,
                                 val);
            out->number = v;
        } else {
            out->text = bytes_from_cstr(val);
        }
        return ST_OK;
    }
    return error_set(err, ST_EINVAL,
                     "unknown field \"%.*s\" (id, type, version, correlation_id, causation_id, "
                     "attempt, first_seen_ms, origin, error, claim, header.NAME)",
                     (int)klen, s);
}

void env_change_release(struct env_change *c, struct hval *hv)
{
    bytes_free(&c->text);
    if (c->field == EF_HEADER_SET)
        free((char *)(uintptr_t)c->header);
    c->header = NULL;
    hval_free(hv);
}

double envelope_age_s(const struct envelope *e, int64_t now_ms)
{
    /* In doubles: first-seen comes off the wire and may be anything, INT64_MIN included. */
    return ((double)now_ms - (double)e->first_seen_ms) / 1000.0;
}

struct bytes envelope_derived_id(const struct bytes *digest)
{
    /* A name-based (SHA-1, version 5) UUID in a namespace of dlqx's own. */
    static const uuid_t ns = {0x6b, 0x1d, 0x0e, 0x39, 0x5c, 0x0a, 0x4f, 0x5e,
                              0x9a, 0x43, 0x64, 0x6c, 0x71, 0x78, 0x00, 0x01};
    uuid_t u;
    char out[37];
    uuid_generate_sha1(u, ns, digest && digest->len ? (const char *)digest->data : "",
                       digest ? digest->len : 0);
    uuid_unparse_lower(u, out);
    return bytes_from_cstr(out);
}
