/*
 * snapshot_fast: one pass over a snapshot line straight into a struct message, for the
 * shapes dlqx itself writes (and a person usually writes): the envelope's keys, plain
 * strings with the common escapes, short integers, the properties, headers of strings,
 * integers, booleans, nulls, arrays and tables, and the typed integer, string, bytes and
 * bool values. Everything else declines (returns false) and the line is read by jansson, so
 * the message is the jansson reader's by construction: this file only has to be right about
 * what it accepts, and every rule below is one of jansson's or snapshot.c's, checked the same
 * way or declined.
 */
#include "snapshot_fast.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot_str.h"
#include "util.h"

struct cur {
    const unsigned char *p, *end;
};

/* jansson's whitespace between tokens. */
static inline void skip_ws(struct cur *c)
{
    /* one compare for the usual case, a byte above the space (the lines dlqx writes have no
     * white space: four compares a token were 4% of dlqx tree) */
    while (c->p < c->end && *c->p <= ' ' &&
           (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static inline bool take(struct cur *c, unsigned char ch)
{
    if (c->p < c->end && *c->p == ch) { /* the usual case: no white space before it */
        c->p++;
        return true;
    }
    skip_ws(c);
    if (c->p < c->end && *c->p == ch) {
        c->p++;
        return true;
    }
    return false;
}

/* A string at c->p (after whitespace): its raw span [*s, *s + *n) between the quotes, and
 * whether it holds escapes. False for anything jansson would refuse (a control byte, bad
 * UTF-8, an unknown escape, a lone surrogate) or that is cut off. */
static bool scan_string(struct cur *c, const unsigned char **s, size_t *n, bool *escaped)
{
    if (c->p >= c->end || *c->p != '"')
        skip_ws(c);
    const unsigned char *p = c->p, *end = c->end;
    if (p >= end || *p != '"')
        return false;
    p++;
    *s = p;
    *escaped = false;
    while (p < end) {
#if defined(__SSE2__)
        /* most strings (keys, names) end within sixteen bytes, and the others within a few
         * more sixteens: found without a call */
        unsigned mask = 0;
        while (end - p >= 16 && (mask = json_unplain16(p, true)) == 0)
            p += 16;
        if (mask)
            p += __builtin_ctz(mask);
        else
#endif
            p += json_plain_prefix(p, (size_t)(end - p), true);
        if (p >= end)
            break;
        unsigned char ch = *p;
        if (ch == '"') {
            *n = (size_t)(p - *s);
            c->p = p + 1;
            return true;
        }
        if (ch == '\\') {
            *escaped = true;
            if (end - p < 2)
                return false;
            unsigned char e = p[1];
            if (e == 'u') {
                size_t used;
                if (escape_u(p, end, &used) < 0)
                    return false;
                p += used;
            } else if (e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' ||
                       e == 'r' || e == 't') {
                p += 2;
            } else {
                return false;
            }
            continue;
        }
        if (ch < 0x20)
            return false;
        size_t k = utf8_seq(p, end);
        if (!k)
            return false;
        p += k;
    }
    return false;
}

/* scan_string, with its usual case inline: a string of printable ASCII without escapes that
 * ends within sixteen bytes of its quote (keys, names, ids; a call for each was a twentieth
 * of the reader). */
static inline bool scan_string_fast(struct cur *c, const unsigned char **s, size_t *n,
                                    bool *escaped)
{
#if defined(__SSE2__)
    const unsigned char *p = c->p;
    if (c->end - p > 16 && *p == '"') {
        unsigned mask = json_unplain16(p + 1, true);
        if (mask) {
            unsigned at = (unsigned)__builtin_ctz(mask);
            if (p[1 + at] == '"') {
                *s = p + 1;
                *n = at;
                *escaped = false;
                c->p = p + 2 + at;
                return true;
            }
        }
    }
#endif
    return scan_string(c, s, n, escaped);
}

/* The raw span of a scanned string, unescaped into o (room for n + 1 bytes: never longer
 * than the span), a NUL after it; its length. */
static size_t unescape_to(unsigned char *o, const unsigned char *s, size_t n, bool escaped)
{
    if (!escaped) {
        if (n)
            memcpy(o, s, n);
        o[n] = '\0';
        return n;
    }
    size_t w = 0;
    const unsigned char *p = s, *end = s + n;
    while (p < end) {
        if (*p != '\\') {
            o[w++] = *p++;
            continue;
        }
        unsigned char e = p[1];
        size_t used = 2;
        switch (e) {
        case 'b':
            o[w++] = '\b';
            break;
        case 'f':
            o[w++] = '\f';
            break;
        case 'n':
            o[w++] = '\n';
            break;
        case 'r':
            o[w++] = '\r';
            break;
        case 't':
            o[w++] = '\t';
            break;
        case 'u':
            w += put_utf8(o + w, escape_u(p, end, &used));
            break;
        default: /* '"', '\\', '/' */
            o[w++] = e;
            break;
        }
        p += used;
    }
    o[w] = '\0';
    return w;
}

/* The same, into new bytes. */
static struct bytes unescape(const unsigned char *s, size_t n, bool escaped)
{
    struct bytes b;
    b.data = xmalloc(n + 1);
    b.len = unescape_to(b.data, s, n, escaped);
    return b;
}

static bool string_value(struct cur *c, struct bytes *out)
{
    const unsigned char *s;
    size_t n;
    bool esc;
    if (!scan_string_fast(c, &s, &n, &esc))
        return false;
    *out = unescape(s, n, esc);
    return true;
}

/* An object key without escapes (a key with one declines: jansson refuses a NUL in a key,
 * and the keys dlqx writes have none). */
static bool key(struct cur *c, const unsigned char **k, size_t *n)
{
    bool esc;
    if (!scan_string_fast(c, k, n, &esc) || esc)
        return false;
    return take(c, ':');
}

/* Byte by byte, stopping at the first difference (a strlen of every name tried was 4% of
 * dlqx tree). */
static bool key_is(const unsigned char *k, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (name[i] == '\0' || (unsigned char)name[i] != k[i])
            return false;
    return name[n] == '\0';
}

/* An integer jansson reads as one: -?(0|[1-9][0-9]*) with no fraction or exponent, here at
 * most 18 digits so that it cannot overflow (longer ones decline). */
static bool integer(struct cur *c, int64_t *out)
{
    skip_ws(c);
    const unsigned char *p = c->p, *end = c->end;
    bool neg = p < end && *p == '-';
    if (neg)
        p++;
    if (p >= end || *p < '0' || *p > '9')
        return false;
    int64_t v = 0;
    const unsigned char *d = p;
    if (*p == '0') {
        p++;
    } else {
        /* at most 18 digits: the end of the line or the 18th, whichever comes first */
        const unsigned char *lim = end - d > 18 ? d + 18 : end;
        unsigned dg;
        while (p < lim && (dg = (unsigned)*p - '0') <= 9) {
            v = v * 10 + dg;
            p++;
        }
    }
    if (p < end && ((*p >= '0' && *p <= '9') || *p == '.' || *p == 'e' || *p == 'E'))
        return false;
    c->p = p;
    *out = neg ? -v : v;
    return true;
}

static bool literal(struct cur *c, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0)
        return false;
    c->p += n;
    return true;
}

static bool value(struct cur *c, struct hval *out, int depth);

/* Whether the table holds a key named like k (jansson refuses duplicate keys). Linear:
 * tables of more than 32 entries decline rather than compare pairwise. */
static bool has_key(const struct htable *t, const unsigned char *k, size_t n)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->e[i].key.len == n && memcmp(t->e[i].key.data, k, n) == 0)
            return true;
    return false;
}

/* The members of an object (after its '{') as a table, in order. With pool (the message's
 * own headers), the keys and the string values go into shared blocks (hval.h's hpool): one
 * allocation for all of them, not one each (they were a third of the reader's allocations
 * and frees). */
static bool members(struct cur *c, struct htable *t, int depth, struct hpool **pool)
{
    if (take(c, '}'))
        return true;
    /* the bits of the keys added here (the table's earlier keys, if any, all set) */
    uint64_t seen = t->n ? ~0ULL : 0;
    do {
        const unsigned char *k;
        size_t n;
        if (t->n >= 32 || !key(c, &k, &n) || n > 255)
            return false;
        /* a key whose bit is not yet set is new: the pairwise compare only on a hit */
        uint64_t bit = n ? 1ULL << ((n * 7 + k[n - 1] * 3 + k[n / 2]) & 63) : 1;
        if ((seen & bit) && has_key(t, k, n))
            return false;
        seen |= bit;
        struct hval v;
        if (!pool) {
            if (!value(c, &v, depth))
                return false;
            htable_addn(t, k, n, v);
            continue;
        }
        skip_ws(c);
        if (c->p < c->end && *c->p == '"') {
            const unsigned char *s;
            size_t sn;
            bool esc;
            if (!scan_string_fast(c, &s, &sn, &esc))
                return false;
            unsigned char *d = hpool_alloc(pool, sn + 1);
            v = hval_void();
            v.kind = HV_STRING;
            v.pooled = true;
            v.v.s = (struct bytes){unescape_to(d, s, sn, esc), d};
        } else if (!value(c, &v, depth)) {
            return false;
        }
        unsigned char *kd = hpool_alloc(pool, n + 1);
        memcpy(kd, k, n);
        kd[n] = '\0';
        htable_add_pooled_key(t, kd, n, v);
    } while (take(c, ','));
    return take(c, '}');
}

static const struct hval *entry(const struct htable *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (bytes_eq_cstr(&t->e[i].key, name))
            return &t->e[i].val;
    return NULL;
}

/* The range typed() holds an integer kind's value to; false for the other kinds. */
static bool int_range(enum hkind kind, int64_t *lo, int64_t *hi)
{
    *lo = 0;
    switch (kind) {
    case HV_I8:
        *lo = INT8_MIN, *hi = INT8_MAX;
        return true;
    case HV_I16:
        *lo = INT16_MIN, *hi = INT16_MAX;
        return true;
    case HV_I32:
        *lo = INT32_MIN, *hi = INT32_MAX;
        return true;
    case HV_I64:
        *lo = INT64_MIN, *hi = INT64_MAX;
        return true;
    case HV_U8:
        *hi = UINT8_MAX;
        return true;
    case HV_U16:
        *hi = UINT16_MAX;
        return true;
    case HV_U32:
        *hi = UINT32_MAX;
        return true;
    case HV_U64:
    case HV_TIMESTAMP:
        *hi = INT64_MAX; /* 18 digits at most were read */
        return true;
    default:
        return false;
    }
}

/* {"type": KIND, "value": V} read as hval_json's typed_from_json reads it, for the kinds
 * whose value is a plain integer, string or boolean; any other form declines. t is the
 * object as a table (still owned by the caller); the value is moved out of it. */
static bool typed(struct htable *t, struct hval *out)
{
    const struct hval *k = entry(t, "type");
    struct hval *v = (struct hval *)(uintptr_t)entry(t, "value");
    if (t->n != 2 || !k || !v || k->kind != HV_STRING)
        return false;
    enum hkind kind;
    const char *name = bytes_cstr(&k->v.s);
    if (!name || !hkind_from_name(name, &kind))
        return false;
    int64_t lo, hi;
    if (int_range(kind, &lo, &hi)) {
        if (v->kind != HV_I64 || v->v.i < lo || v->v.i > hi)
            return false;
        *out = hkind_is_signed(kind) ? hval_int(kind, v->v.i) : hval_uint(kind, (uint64_t)v->v.i);
        return true;
    }
    switch (kind) {
    case HV_STRING:
    case HV_BYTES:
        if (v->kind != HV_STRING)
            return false;
        *out = *v;
        out->kind = kind;
        *v = hval_void();
        return true;
    case HV_BOOL:
        if (v->kind != HV_BOOL)
            return false;
        *out = *v;
        return true;
    default:
        return false;
    }
}

/* {"type":"KIND","value":INTEGER} exactly as dlqx writes it (no white space, these keys in
 * this order) for an integer kind, with the value in its range: what typed() makes of it,
 * without building the object's table (two of them a record, a tenth of the reader's
 * allocations). Anything else leaves c where it was and returns false for value()'s own
 * reading to decide. c->p is after the '{'. */
static bool typed_int_fast(struct cur *c, struct hval *out)
{
    static const char head[] = "\"type\":\"", mid[] = "\",\"value\":";
    const unsigned char *p = c->p, *end = c->end;
    if ((size_t)(end - p) < sizeof head - 1 || memcmp(p, head, sizeof head - 1) != 0)
        return false;
    p += sizeof head - 1;
    char name[16];
    size_t n = 0;
    while (p < end && n < sizeof name - 1 && ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
        name[n++] = (char)*p++;
    name[n] = '\0';
    if (!n || (size_t)(end - p) < sizeof mid - 1 || memcmp(p, mid, sizeof mid - 1) != 0)
        return false;
    p += sizeof mid - 1;
    enum hkind kind = HV_I32; /* the usual one, without hkind_from_name's search */
    int64_t lo, hi, i;
    if ((n != 5 || memcmp(name, "int32", 5) != 0) && !hkind_from_name(name, &kind))
        return false;
    if (!int_range(kind, &lo, &hi))
        return false;
    struct cur at = {p, end};
    if (p >= end || (*p != '-' && (*p < '0' || *p > '9')) || !integer(&at, &i) || i < lo ||
        i > hi || !take(&at, '}'))
        return false;
    c->p = at.p;
    *out = hkind_is_signed(kind) ? hval_int(kind, i) : hval_uint(kind, (uint64_t)i);
    return true;
}

/* A header value (hval_from_json's reading of plain JSON and the typed forms above). */
static bool value(struct cur *c, struct hval *out, int depth)
{
    skip_ws(c);
    if (c->p >= c->end)
        return false;
    switch (*c->p) {
    case '"': {
        struct bytes b;
        if (!string_value(c, &b))
            return false;
        *out = hval_void();
        out->kind = HV_STRING;
        out->v.s = b;
        return true;
    }
    case 't':
        *out = hval_bool(true);
        return literal(c, "true");
    case 'f':
        *out = hval_bool(false);
        return literal(c, "false");
    case 'n':
        *out = hval_void();
        return literal(c, "null");
    case '[': {
        if (depth + 1 > SNAPSHOT_FAST_MAX_DEPTH)
            return false;
        c->p++;
        *out = hval_array();
        if (take(c, ']'))
            return true;
        do {
            struct hval item;
            if (!value(c, &item, depth + 1)) {
                hval_free(out);
                return false;
            }
            harray_add(&out->v.arr, item);
        } while (take(c, ','));
        if (take(c, ']'))
            return true;
        hval_free(out);
        return false;
    }
    case '{': {
        if (depth + 1 > SNAPSHOT_FAST_MAX_DEPTH)
            return false;
        c->p++;
        if (typed_int_fast(c, out))
            return true;
        struct htable *t = htable_new();
        if (!members(c, t, depth + 1, NULL)) {
            htable_free(t);
            return false;
        }
        if (entry(t, "type")) {
            bool ok = typed(t, out);
            htable_free(t);
            return ok;
        }
        *out = hval_void();
        out->kind = HV_TABLE;
        out->v.tab = t;
        return true;
    }
    default: {
        int64_t i;
        if (!integer(c, &i))
            return false;
        *out = hval_int(HV_I64, i);
        return true;
    }
    }
}

static bool is_null(struct cur *c)
{
    skip_ws(c);
    return literal(c, "null");
}

/* The property named k (PROP_COUNT for none): by its length and first byte, then compared
 * (a key_is against each name in turn was 3% of dlqx tree). */
static unsigned prop_index(const unsigned char *k, size_t n)
{
#define NAME(s)                                                                                    \
    {                                                                                              \
#s, sizeof #s - 1                                                                          \
    }
    static const struct {
        const char *s;
        size_t n;
    } names[PROP_COUNT] = {
#define X(name) NAME(name),
        PROP_STRING_LIST(X)
#undef X
            NAME(delivery_mode),
        NAME(priority),
        NAME(timestamp),
    };
#undef NAME
    for (unsigned f = 0; f < PROP_COUNT; f++)
        if (names[f].n == n && names[f].s[0] == (char)k[0] && memcmp(names[f].s, k, n) == 0)
            return f;
    return PROP_COUNT;
}

/* "properties": {...} (props_from_json). */
static bool properties(struct cur *c, struct props *out)
{
    if (is_null(c))
        return true;
    if (!take(c, '{'))
        return false;
    if (take(c, '}'))
        return true;
    uint32_t seen = 0;
    do {
        const unsigned char *k;
        size_t n;
        if (!key(c, &k, &n))
            return false;
        unsigned f = prop_index(k, n);
        if (f == PROP_COUNT || (seen >> f) & 1u)
            return false;
        seen |= 1u << f;
        if (is_null(c))
            continue;
        if (f < PROP_delivery_mode) {
            struct bytes b;
            if (!string_value(c, &b))
                return false;
            if (b.len > 255) {
                bytes_free(&b);
                return false;
            }
            struct bytes *slot = props_slot(out, (enum prop_flag)f);
            bytes_free(slot);
            *slot = b;
        } else {
            int64_t i;
            if (!integer(c, &i) || i < 0 || (f != PROP_timestamp && i > 255))
                return false;
            if (f == PROP_timestamp)
                out->timestamp = (uint64_t)i;
            else if (f == PROP_delivery_mode)
                out->delivery_mode = (uint8_t)i;
            else
                out->priority = (uint8_t)i;
        }
        out->present |= 1u << f;
    } while (take(c, ','));
    return take(c, '}');
}

/* "headers": an object without a "type" member (a typed table declines). */
static bool headers(struct cur *c, struct message *out)
{
    if (is_null(c))
        return true;
    if (!take(c, '{'))
        return false;
    struct hpool *pool = NULL;
    bool ok = members(c, out->headers, 1, &pool);
    hpool_done(&pool);
    if (!ok || entry(out->headers, "type"))
        return false;
    out->headers_present = true;
    return true;
}

enum top_key {
    K_V,
    K_QUEUE,
    K_EXCHANGE,
    K_RK,
    K_REDELIVERED,
    K_FETCHED,
    K_PROPS,
    K_HEADERS,
    K_BODY,
    K_B64,
    K_OFFSET,
    K_COUNT
};

static const char *const top_names[K_COUNT] = {
    "v",          "queue",   "exchange", "routing_key", "redelivered",   "fetched_at_ms",
    "properties", "headers", "body",     "body_base64", "stream_offset",
};

/* The top-level key named k (K_COUNT for none), as prop_index. */
static unsigned top_index(const unsigned char *k, size_t n, unsigned hint)
{
    /* hint: the key after the last one in the order dlqx writes them, asked first */
    if (hint < K_COUNT && key_is(k, n, top_names[hint]))
        return hint;
    for (unsigned t = 0; t < K_COUNT; t++)
        if (top_names[t][0] == (char)k[0] && key_is(k, n, top_names[t]))
            return t;
    return K_COUNT;
}

/* One member's value of the record (snapshot_from_json's reading of it); *set says whether
 * it was other than null. */
static bool top_value(struct cur *c, enum top_key k, struct message *out, bool *set)
{
    *set = false;
    /* null is the key left out, but for "v", which snapshot_from_json refuses as null */
    if (k != K_V && k != K_PROPS && k != K_HEADERS && is_null(c))
        return true;
    *set = true;
    int64_t i;
    switch (k) {
    case K_V:
        /* 1 only: the version this path knows (any other, even one snapshot.c reads, goes
         * to jansson) */
        return integer(c, &i) && i == 1;
    case K_QUEUE:
        return string_value(c, &out->queue);
    case K_EXCHANGE:
        return string_value(c, &out->exchange);
    case K_RK:
        return string_value(c, &out->routing_key);
    case K_REDELIVERED:
        skip_ws(c);
        if (literal(c, "true"))
            out->redelivered = true;
        else if (!literal(c, "false"))
            return false;
        return true;
    case K_FETCHED:
        if (!integer(c, &i))
            return false;
        out->fetched_at_ms = i;
        return true;
    case K_OFFSET:
        if (!integer(c, &i) || i < 0)
            return false;
        out->stream_offset = (uint64_t)i;
        out->has_stream_offset = true;
        return true;
    case K_PROPS:
        return properties(c, &out->props);
    case K_HEADERS:
        return headers(c, out);
    case K_BODY:
        return string_value(c, &out->body);
    case K_B64: {
        struct bytes b;
        if (!string_value(c, &b))
            return false;
        bool ok = base64_decode((const char *)b.data, b.len, &out->body);
        bytes_free(&b);
        return ok;
    }
    default:
        return false;
    }
}

static bool record(struct cur *c, struct message *out)
{
    if (!take(c, '{'))
        return false;
    unsigned seen = 0, set_mask = 0, hint = K_V;
    if (!take(c, '}')) {
        do {
            const unsigned char *k;
            size_t n;
            if (!key(c, &k, &n))
                return false;
            unsigned t = top_index(k, n, hint);
            hint = t + 1;
            if (t == K_COUNT || (seen >> t) & 1u)
                return false;
            seen |= 1u << t;
            /* Both body and body_base64 set is an error: declined (a null one after a set one
             * too, which jansson's reading allows: declining is never wrong). */
            if ((t == K_BODY && (set_mask >> K_B64) & 1u) ||
                (t == K_B64 && (set_mask >> K_BODY) & 1u))
                return false;
            bool set;
            if (!top_value(c, (enum top_key)t, out, &set))
                return false;
            if (set)
                set_mask |= 1u << t;
        } while (take(c, ','));
        if (!take(c, '}'))
            return false;
    }
    skip_ws(c);
    return c->p == c->end;
}

bool snapshot_fast_parse(const char *line, size_t len, struct message *out)
{
    message_init(out);
    struct cur c = {(const unsigned char *)line, (const unsigned char *)line + len};
    if (record(&c, out))
        return true;
    message_free(out);
    return false;
}
