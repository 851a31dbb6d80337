/*
 * hval_json: the snapshot file's JSON encoding of typed AMQP values.
 */
#include "hval_json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyset.h"
#include "hval_amqp.h"
#include "json_out.h"
#include "util.h"

json_t *bytes_to_json(const void *data, size_t len)
{
    if (utf8_valid(data, len))
        return json_stringn(len ? data : "", len);
    char *b64 = base64_encode(data, len);
    json_t *o = json_pack("{s:s}", "base64", b64);
    free(b64);
    return o;
}

enum status bytes_from_json(const json_t *j, const char *path, struct bytes *out, struct error *err)
{
    if (json_is_string(j)) {
        *out = bytes_dup(json_string_value(j), json_string_length(j));
        return ST_OK;
    }
    const json_t *b = json_is_object(j) ? json_object_get(j, "base64") : NULL;
    if (json_is_string(b) && json_object_size(j) == 1) {
        if (!base64_decode(json_string_value(b), json_string_length(b), out))
            return error_set(err, ST_EPARSE, "%s: invalid base64", path);
        return ST_OK;
    }
    return error_set(err, ST_EPARSE, "%s: expected a string or {\"base64\": \"...\"}", path);
}

static json_t *typed(const char *kind, json_t *value)
{
    return json_pack("{s:s,s:o}", "type", kind, "value", value);
}

json_t *u64_to_json(uint64_t u)
{
    if (u <= (uint64_t)INT64_MAX)
        return json_integer((json_int_t)u);
    char buf[24];
    snprintf(buf, sizeof buf, "%llu", (unsigned long long)u);
    return json_string(buf);
}

static json_t *real_json(double d)
{
    if (isnan(d))
        return json_string("NaN");
    if (isinf(d))
        return json_string(d > 0 ? "Infinity" : "-Infinity");
    return json_real(d);
}

/* The NaN the reader makes of "NaN" (the C library's quiet NaN, as float or double). Any
 * other NaN — a sign, a payload, a signalling one, as a producer may send — is written with
 * its bits, so that it reads back bit for bit. */
static bool nan_is_canonical(const void *bits, size_t size)
{
    double dn = (double)NAN;
    float fn = (float)dn;
    return size == sizeof(float) ? memcmp(bits, &fn, sizeof fn) == 0
                                 : memcmp(bits, &dn, sizeof dn) == 0;
}

static json_t *nan_bits_json(const char *kind, const void *bits, size_t size)
{
    uint64_t u = 0;
    char hex[24];
    if (size == sizeof(float)) {
        uint32_t b;
        memcpy(&b, bits, sizeof b);
        u = b;
        snprintf(hex, sizeof hex, "%08llx", (unsigned long long)u);
    } else {
        memcpy(&u, bits, sizeof u);
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)u);
    }
    return json_pack("{s:s,s:s,s:s}", "type", kind, "value", "NaN", "bits", hex);
}

/* Whether a table can be written as a plain JSON object and read back as the same table:
 * unique UTF-8 keys, and not looking like a typed value itself. Linear: the keys seen so far
 * are in a keyset, not compared pairwise. TP_ASCII: plain, and every key printable ASCII with
 * nothing to escape (written as it is, between quotes). */
enum table_plain { TP_NO, TP_YES, TP_ASCII };

static enum table_plain table_is_plain(const struct htable *t)
{
    bool has_type = false, plain = true, ascii = true;
    /* A small table (most headers: a handful of keys) pairwise, without a keyset to set up. */
    if (t->n <= 8) {
        uint64_t sigs = 0; /* a bit for each (length, last byte) seen: equal keys share one */
        for (size_t i = 0; i < t->n; i++) {
            const struct bytes *k = &t->e[i].key;
            /* plain ASCII (the usual key) is UTF-8 without a NUL */
            if (!json_plain_ascii(k->data, k->len)) {
                if (!utf8_valid(k->data, k->len) || memchr(k->data, '\0', k->len))
                    return TP_NO;
                ascii = false;
            }
            if (k->len == 4 && memcmp(k->data, "type", 4) == 0)
                has_type = true;
            uint64_t sig = 1ULL << ((k->len * 7 + (k->len ? k->data[k->len - 1] : 0)) & 63);
            /* pairwise only when a key before may be the same */
            for (size_t j = 0; (sigs & sig) && j < i; j++) {
                const struct bytes *o = &t->e[j].key;
                /* the last byte first: header keys share their prefixes (x-acemq-…) */
                if (o->len == k->len &&
                    (k->len == 0 || (o->data[k->len - 1] == k->data[k->len - 1] &&
                                     memcmp(o->data, k->data, k->len) == 0)))
                    return TP_NO;
            }
            sigs |= sig;
        }
        return has_type ? TP_NO : ascii ? TP_ASCII : TP_YES;
    }
    struct keyset seen;
    keyset_init(&seen, t->n);
    for (size_t i = 0; i < t->n && plain; i++) {
        const struct bytes *k = &t->e[i].key;
        if (!utf8_valid(k->data, k->len) || memchr(k->data, '\0', k->len))
            plain = false;
        else if (bytes_eq_cstr(k, "type"))
            has_type = true;
        if (plain && !keyset_add(&seen, k->data, k->len))
            plain = false; /* a duplicate key: only the list of pairs keeps both */
    }
    keyset_free(&seen);
    /* {"type": …, …} would be read as a typed value: write such tables typed. */
    return plain && !has_type ? TP_YES : TP_NO;
}

static json_t *value_at(const struct hval *v, int depth);

/* A container that would open deeper than HVAL_JSON_WIRE_DEPTH levels is written in its wire
 * form (one level), so that no record is deeper than a JSON reader reads (jansson: 2,048). */
static json_t *wire_json(const struct hval *v)
{
    struct bytes wire = {0, NULL};
    if (hval_encode_wire(v, &wire, NULL) != ST_OK)
        return json_null(); /* cannot happen: every value encodes */
    char *b64 = base64_encode(wire.data, wire.len);
    json_t *o = json_pack("{s:s,s:s}", "type", "wire", "base64", b64);
    free(b64);
    bytes_free(&wire);
    return o;
}

static json_t *table_at(const struct htable *t, int depth)
{
    if (table_is_plain(t)) {
        json_t *o = json_object();
        for (size_t i = 0; i < t->n; i++)
            json_object_setn_new_nocheck(o, (const char *)t->e[i].key.data, t->e[i].key.len,
                                         value_at(&t->e[i].val, depth + 1));
        return o;
    }
    json_t *pairs = json_array();
    for (size_t i = 0; i < t->n; i++) {
        const struct bytes *k = &t->e[i].key;
        json_t *pair = json_object();
        if (utf8_valid(k->data, k->len)) {
            json_object_set_new(pair, "key", json_stringn((const char *)k->data, k->len));
        } else {
            char *b64 = base64_encode(k->data, k->len);
            json_object_set_new(pair, "key_base64", json_string(b64));
            free(b64);
        }
        /* {"type": "table", "value": [{"key": …, "value": V}]}: V opens three levels down */
        json_object_set_new(pair, "value", value_at(&t->e[i].val, depth + 3));
        json_array_append_new(pairs, pair);
    }
    return typed("table", pairs);
}

static bool write_value(const struct hval *v, struct strbuf *out, int depth);

static bool write_table(const struct htable *t, struct strbuf *out, int depth)
{
    enum table_plain tp = depth > 64 ? TP_NO : table_is_plain(t);
    if (tp == TP_NO)
        return false;
    sb_addc(out, '{');
    for (size_t i = 0; i < t->n; i++) {
        const struct bytes *k = &t->e[i].key;
        if (tp == TP_ASCII) {
            json_put_quoted(out, i ? ',' : 0, k->data, k->len, ':');
            if (!write_value(&t->e[i].val, out, depth + 1))
                return false;
            continue;
        }
        if (i)
            sb_addc(out, ',');
        if (!json_out_string(out, k->data, k->len))
            return false;
        sb_addc(out, ':');
        if (!write_value(&t->e[i].val, out, depth + 1))
            return false;
    }
    sb_addc(out, '}');
    return true;
}

/* {"type":"<kind>","value": for each kind, written at once */
#define TYPED_PRE(name) "{\"type\":\"" name "\",\"value\":"
static const struct {
    const char *s;
    size_t n;
} typed_int_pre[HV_KIND_COUNT] = {
#define X(e, letter, name) [e] = {TYPED_PRE(name), sizeof TYPED_PRE(name) - 1},
    HKIND_LIST(X)
#undef X
};
#undef TYPED_PRE

/* value_at's output, as jansson dumps it (typed values: "type" first, then "value"). */
static bool write_value(const struct hval *v, struct strbuf *out, int depth)
{
    switch (v->kind) {
    case HV_VOID:
        sb_adds(out, "null");
        return true;
    case HV_BOOL:
        sb_adds(out, v->v.b ? "true" : "false");
        return true;
    case HV_I64:
        json_out_integer(out, v->v.i);
        return true;
    case HV_I8:
    case HV_I16:
    case HV_I32:
    case HV_U8:
    case HV_U16:
    case HV_U32:
    case HV_U64:
    case HV_TIMESTAMP: {
        bool uns = hkind_is_unsigned(v->kind);
        if (uns && v->v.u > (uint64_t)INT64_MAX)
            return false;
        sb_add(out, typed_int_pre[v->kind].s, typed_int_pre[v->kind].n);
        json_out_integer(out, uns ? (long long)v->v.u : (long long)v->v.i);
        sb_addc(out, '}');
        return true;
    }
    case HV_STRING:
        return json_put_string(out, v->v.s.data, v->v.s.len);
    case HV_BYTES:
        if (!utf8_valid(v->v.s.data, v->v.s.len))
            return false;
        sb_adds(out, "{\"type\":\"bytes\",\"value\":");
        json_out_string(out, v->v.s.data, v->v.s.len);
        sb_addc(out, '}');
        return true;
    case HV_ARRAY:
        if (depth > 64)
            return false;
        sb_addc(out, '[');
        for (size_t i = 0; i < v->v.arr.n; i++) {
            if (i)
                sb_addc(out, ',');
            if (!write_value(&v->v.arr.items[i], out, depth + 1))
                return false;
        }
        sb_addc(out, ']');
        return true;
    case HV_TABLE:
        return write_table(v->v.tab, out, depth);
    default: /* floats, decimals: jansson's own number forms */
        return false;
    }
}

bool htable_write_json(const struct htable *t, struct strbuf *out)
{
    size_t start = out->len;
    if (write_table(t, out, 0))
        return true;
    out->len = start;
    if (out->buf)
        out->buf[start] = '\0';
    return false;
}

json_t *htable_to_json(const struct htable *t)
{
    return table_at(t, 0);
}

json_t *hval_to_json(const struct hval *v)
{
    return value_at(v, 0);
}

/* depth: the JSON levels open around v (0 at the top of hval_to_json). */
static json_t *value_at(const struct hval *v, int depth)
{
    if ((v->kind == HV_ARRAY || v->kind == HV_TABLE) && depth >= HVAL_JSON_WIRE_DEPTH)
        return wire_json(v);
    switch (v->kind) {
    case HV_VOID:
        return json_null();
    case HV_BOOL:
        return json_boolean(v->v.b);
    case HV_I64:
        return json_integer(v->v.i);
    case HV_I8:
    case HV_I16:
    case HV_I32:
        return typed(hkind_name(v->kind), json_integer(v->v.i));
    case HV_U8:
    case HV_U16:
    case HV_U32:
    case HV_U64:
    case HV_TIMESTAMP:
        return typed(hkind_name(v->kind), u64_to_json(v->v.u));
    case HV_F32:
        if (isnan(v->v.f32) && !nan_is_canonical(&v->v.f32, sizeof v->v.f32))
            return nan_bits_json("float", &v->v.f32, sizeof v->v.f32);
        return typed("float", real_json((double)v->v.f32));
    case HV_F64:
        if (isfinite(v->v.f64))
            return json_real(v->v.f64);
        if (isnan(v->v.f64) && !nan_is_canonical(&v->v.f64, sizeof v->v.f64))
            return nan_bits_json("double", &v->v.f64, sizeof v->v.f64);
        return typed("double", real_json(v->v.f64));
    case HV_DECIMAL:
        return typed("decimal", json_pack("{s:i,s:I}", "scale", (int)v->v.dec.scale, "value",
                                          (json_int_t)v->v.dec.value));
    case HV_STRING:
    case HV_BYTES: {
        const struct bytes *s = &v->v.s;
        bool text = utf8_valid(s->data, s->len);
        if (v->kind == HV_STRING && text)
            return json_stringn(s->len ? (const char *)s->data : "", s->len);
        if (text)
            return typed("bytes", json_stringn(s->len ? (const char *)s->data : "", s->len));
        char *b64 = base64_encode(s->data, s->len);
        json_t *o = json_pack("{s:s,s:s}", "type", hkind_name(v->kind), "base64", b64);
        free(b64);
        return o;
    }
    case HV_ARRAY: {
        json_t *a = json_array();
        for (size_t i = 0; i < v->v.arr.n; i++)
            json_array_append_new(a, value_at(&v->v.arr.items[i], depth + 1));
        return a;
    }
    case HV_TABLE:
        return table_at(v->v.tab, depth);
    default:
        return json_null();
    }
}

static enum status int_in_range(const json_t *j, const char *path, const char *kind, int64_t lo,
                                int64_t hi, int64_t *out, struct error *err)
{
    if (!json_is_integer(j))
        return error_set(err, ST_EPARSE, "%s: %s value must be an integer", path, kind);
    json_int_t i = json_integer_value(j);
    if (i < lo || i > hi)
        return error_set(err, ST_ERANGE, "%s: %lld is out of range for %s", path, (long long)i,
                         kind);
    *out = (int64_t)i;
    return ST_OK;
}

static enum status uint_value(const json_t *j, const char *path, const char *kind, uint64_t hi,
                              uint64_t *out, struct error *err)
{
    if (json_is_integer(j)) {
        json_int_t i = json_integer_value(j);
        if (i < 0 || (uint64_t)i > hi)
            return error_set(err, ST_ERANGE, "%s: %lld is out of range for %s", path, (long long)i,
                             kind);
        *out = (uint64_t)i;
        return ST_OK;
    }
    if (json_is_string(j)) {
        const char *s = json_string_value(j);
        char *end;
        if (*s >= '0' && *s <= '9') {
            errno = 0;
            unsigned long long u = strtoull(s, &end, 10);
            if (errno == 0 && *end == '\0' && (size_t)(end - s) == json_string_length(j) &&
                u <= hi) {
                *out = u;
                return ST_OK;
            }
        }
        return error_set(err, ST_ERANGE, "%s: \"%.40s\" is not a %s", path, s, kind);
    }
    return error_set(err, ST_EPARSE, "%s: %s value must be an integer", path, kind);
}

enum status u64_from_json(const json_t *j, const char *path, uint64_t *out, struct error *err)
{
    return uint_value(j, path, "uint64", UINT64_MAX, out, err);
}

static enum status real_value(const json_t *j, const char *path, const char *kind, double *out,
                              struct error *err)
{
    if (json_is_number(j)) {
        *out = json_number_value(j);
        return ST_OK;
    }
    const char *s = json_string_value(j);
    if (s && strcmp(s, "NaN") == 0) {
        *out = (double)NAN;
        return ST_OK;
    }
    if (s && strcmp(s, "Infinity") == 0) {
        *out = (double)INFINITY;
        return ST_OK;
    }
    if (s && strcmp(s, "-Infinity") == 0) {
        *out = -(double)INFINITY;
        return ST_OK;
    }
    return error_set(err, ST_EPARSE, "%s: %s value must be a number, \"NaN\" or \"Infinity\"", path,
                     kind);
}

static enum status table_from_pairs(const json_t *pairs, const char *path, struct htable **out,
                                    struct error *err)
{
    struct htable *t = htable_new();
    size_t i;
    const json_t *pair;
    json_array_foreach(pairs, i, pair)
    {
        char sub[256];
        snprintf(sub, sizeof sub, "%s[%zu]", path, i);
        const json_t *k = json_object_get(pair, "key");
        const json_t *kb = json_object_get(pair, "key_base64");
        const json_t *val = json_object_get(pair, "value");
        struct bytes key = {0, NULL};
        if (json_is_string(k)) {
            key = bytes_dup(json_string_value(k), json_string_length(k));
        } else if (!json_is_string(kb) ||
                   !base64_decode(json_string_value(kb), json_string_length(kb), &key)) {
            htable_free(t);
            return error_set(err, ST_EPARSE, "%s: a table entry needs \"key\" or \"key_base64\"",
                             sub);
        }
        struct hval hv;
        if (!val) {
            bytes_free(&key);
            htable_free(t);
            return error_set(err, ST_EPARSE, "%s: a table entry needs \"value\"", sub);
        }
        enum status st = hval_from_json(val, sub, &hv, err);
        if (st != ST_OK) {
            bytes_free(&key);
            htable_free(t);
            return st;
        }
        if (key.len > 255) {
            bytes_free(&key);
            hval_free(&hv);
            htable_free(t);
            return error_set(err, ST_ERANGE, "%s: a table key is at most 255 bytes", sub);
        }
        htable_addn(t, key.data, key.len, hv);
        bytes_free(&key);
    }
    *out = t;
    return ST_OK;
}

enum status htable_from_json(const json_t *j, const char *path, struct htable **out,
                             struct error *err)
{
    if (json_is_object(j) && json_object_get(j, "type")) {
        struct hval hv;
        enum status st = hval_from_json(j, path, &hv, err);
        if (st != ST_OK)
            return st;
        if (hv.kind != HV_TABLE) {
            hval_free(&hv);
            return error_set(err, ST_EPARSE, "%s: expected a table", path);
        }
        *out = hv.v.tab;
        return ST_OK;
    }
    if (!json_is_object(j))
        return error_set(err, ST_EPARSE, "%s: expected an object (a table)", path);
    struct htable *t = htable_new();
    const char *key;
    size_t keylen;
    json_t *val;
    json_object_keylen_foreach((json_t *)(uintptr_t)j, key, keylen, val)
    {
        char sub[256];
        snprintf(sub, sizeof sub, "%s.%.*s", path, (int)(keylen > 64 ? 64 : keylen), key);
        if (keylen > 255) {
            htable_free(t);
            return error_set(err, ST_ERANGE, "%s: a table key is at most 255 bytes", sub);
        }
        struct hval hv;
        enum status st = hval_from_json(val, sub, &hv, err);
        if (st != ST_OK) {
            htable_free(t);
            return st;
        }
        htable_addn(t, key, keylen, hv);
    }
    *out = t;
    return ST_OK;
}

/* {"type": "wire", "base64": B}: a value in its AMQP wire form (see wire_json). */
static enum status wire_from_json(const json_t *j, const char *path, struct hval *out,
                                  struct error *err)
{
    const json_t *b64 = json_object_get(j, "base64");
    struct bytes b = {0, NULL};
    if (json_object_size(j) != 2 || !json_is_string(b64) ||
        !base64_decode(json_string_value(b64), json_string_length(b64), &b))
        return error_set(err, ST_EPARSE, "%s: a wire value is {\"type\": \"wire\", \"base64\": …}",
                         path);
    struct error e;
    error_clear(&e);
    enum status st = hval_decode_wire(b.data, b.len, out, &e);
    bytes_free(&b);
    if (st != ST_OK)
        return error_set(err, st, "%s: %s", path, e.msg);
    return ST_OK;
}

/* {"type": "float"|"double", "value": "NaN", "bits": HEX}: a NaN kept bit for bit. */
static enum status nan_from_json(const json_t *j, const char *path, bool f32, struct hval *out,
                                 struct error *err)
{
    const char *v = json_string_value(json_object_get(j, "value"));
    const char *hex = json_string_value(json_object_get(j, "bits"));
    size_t want = f32 ? 8 : 16;
    char *end = NULL;
    unsigned long long u = 0;
    if (hex && strlen(hex) == want && json_string_length(json_object_get(j, "bits")) == want) {
        errno = 0;
        u = strtoull(hex, &end, 16);
    }
    if (json_object_size(j) != 3 || !v || strcmp(v, "NaN") != 0 || !end || *end || errno ||
        (hex[0] == '-' || hex[0] == '+' || hex[0] == ' '))
        return error_set(err, ST_EPARSE,
                         "%s: \"bits\" is %zu hex digits of a NaN, with \"value\": \"NaN\"", path,
                         want);
    if (f32) {
        uint32_t b = (uint32_t)u;
        float f;
        memcpy(&f, &b, sizeof f);
        if (!isnan(f))
            return error_set(err, ST_EPARSE, "%s: \"bits\" %s is not a NaN", path, hex);
        *out = hval_f32(f);
    } else {
        uint64_t b = (uint64_t)u;
        double d;
        memcpy(&d, &b, sizeof d);
        if (!isnan(d))
            return error_set(err, ST_EPARSE, "%s: \"bits\" %s is not a NaN", path, hex);
        *out = hval_f64(d);
    }
    return ST_OK;
}

static enum status typed_from_json(const json_t *j, const char *path, struct hval *out,
                                   struct error *err)
{
    const char *kname = json_string_value(json_object_get(j, "type"));
    enum hkind kind;
    if (kname && strcmp(kname, "wire") == 0)
        return wire_from_json(j, path, out, err);
    if (kname && (strcmp(kname, "float") == 0 || strcmp(kname, "double") == 0) &&
        json_object_get(j, "bits"))
        return nan_from_json(j, path, kname[0] == 'f', out, err);
    if (!kname || !hkind_from_name(kname, &kind))
        return error_set(err, ST_EPARSE,
                         "%s: \"type\" must name an AMQP field kind (int8, uint8, int16, "
                         "uint16, int32, uint32, int64, uint64, float, double, decimal, "
                         "timestamp, bool, void, bytes, string, array, table)",
                         path);
    const json_t *val = json_object_get(j, "value");
    const json_t *b64 = json_object_get(j, "base64");
    size_t expect = 1 + (val != NULL) + (b64 != NULL);
    if (json_object_size(j) != expect)
        return error_set(err, ST_EPARSE, "%s: a typed value has only \"type\" and \"value\"", path);
    if ((kind == HV_STRING || kind == HV_BYTES) && b64) {
        struct bytes b;
        if (val || !json_is_string(b64) ||
            !base64_decode(json_string_value(b64), json_string_length(b64), &b))
            return error_set(err, ST_EPARSE, "%s: invalid base64", path);
        *out = hval_void();
        out->kind = kind;
        out->v.s = b;
        return ST_OK;
    }
    if (b64)
        return error_set(err, ST_EPARSE, "%s: \"base64\" is only for string and bytes", path);
    if (!val && kind != HV_VOID)
        return error_set(err, ST_EPARSE, "%s: a typed value needs \"value\"", path);

    enum status st = ST_OK;
    int64_t i = 0;
    uint64_t u = 0;
    double d = 0;
    switch (kind) {
    case HV_VOID:
        if (val && !json_is_null(val))
            return error_set(err, ST_EPARSE, "%s: void value must be null", path);
        *out = hval_void();
        return ST_OK;
    case HV_BOOL:
        if (!json_is_boolean(val))
            return error_set(err, ST_EPARSE, "%s: bool value must be true or false", path);
        *out = hval_bool(json_is_true(val));
        return ST_OK;
    case HV_I8:
        st = int_in_range(val, path, kname, INT8_MIN, INT8_MAX, &i, err);
        break;
    case HV_I16:
        st = int_in_range(val, path, kname, INT16_MIN, INT16_MAX, &i, err);
        break;
    case HV_I32:
        st = int_in_range(val, path, kname, INT32_MIN, INT32_MAX, &i, err);
        break;
    case HV_I64:
        st = int_in_range(val, path, kname, INT64_MIN, INT64_MAX, &i, err);
        break;
    case HV_U8:
        st = uint_value(val, path, kname, UINT8_MAX, &u, err);
        break;
    case HV_U16:
        st = uint_value(val, path, kname, UINT16_MAX, &u, err);
        break;
    case HV_U32:
        st = uint_value(val, path, kname, UINT32_MAX, &u, err);
        break;
    case HV_U64:
    case HV_TIMESTAMP:
        st = uint_value(val, path, kname, UINT64_MAX, &u, err);
        break;
    case HV_F32:
    case HV_F64:
        st = real_value(val, path, kname, &d, err);
        break;
    case HV_DECIMAL: {
        const json_t *sc = json_object_get(val, "scale"), *dv = json_object_get(val, "value");
        if (!json_is_object(val) || json_object_size(val) != 2 || !json_is_integer(sc) ||
            !json_is_integer(dv) || json_integer_value(sc) < 0 || json_integer_value(sc) > 255 ||
            json_integer_value(dv) < 0 || json_integer_value(dv) > UINT32_MAX)
            return error_set(err, ST_EPARSE,
                             "%s: decimal value is {\"scale\": 0..255, \"value\": 0..4294967295}",
                             path);
        *out = hval_decimal((uint8_t)json_integer_value(sc), (uint32_t)json_integer_value(dv));
        return ST_OK;
    }
    case HV_STRING:
    case HV_BYTES:
        if (!json_is_string(val))
            return error_set(err, ST_EPARSE, "%s: %s value must be a string (or use \"base64\")",
                             path, kname);
        *out = kind == HV_STRING ? hval_string(json_string_value(val), json_string_length(val))
                                 : hval_bytes(json_string_value(val), json_string_length(val));
        return ST_OK;
    case HV_ARRAY: {
        if (!json_is_array(val))
            return error_set(err, ST_EPARSE, "%s: array value must be an array", path);
        return hval_from_json(val, path, out, err);
    }
    case HV_TABLE: {
        struct htable *t;
        if (json_is_array(val))
            st = table_from_pairs(val, path, &t, err);
        else if (json_is_object(val))
            st = htable_from_json(val, path, &t, err);
        else
            return error_set(err, ST_EPARSE,
                             "%s: table value is an object or a list of {key, value}", path);
        if (st != ST_OK)
            return st;
        *out = hval_void();
        out->kind = HV_TABLE;
        out->v.tab = t;
        return ST_OK;
    }
    default:
        return error_set(err, ST_EPARSE, "%s: unknown kind", path);
    }
    if (st != ST_OK)
        return st;
    if (hkind_is_signed(kind))
        *out = hval_int(kind, i);
    else if (hkind_is_unsigned(kind))
        *out = hval_uint(kind, u);
    else if (kind == HV_F32)
        *out = hval_f32((float)d);
    else
        *out = hval_f64(d);
    return ST_OK;
}

enum status hval_from_json(const json_t *j, const char *path, struct hval *out, struct error *err)
{
    switch (json_typeof(j)) {
    case JSON_NULL:
        *out = hval_void();
        return ST_OK;
    case JSON_TRUE:
    case JSON_FALSE:
        *out = hval_bool(json_is_true(j));
        return ST_OK;
    case JSON_INTEGER:
        *out = hval_int(HV_I64, json_integer_value(j));
        return ST_OK;
    case JSON_REAL:
        *out = hval_f64(json_real_value(j));
        return ST_OK;
    case JSON_STRING:
        *out = hval_string(json_string_value(j), json_string_length(j));
        return ST_OK;
    case JSON_ARRAY: {
        struct hval a = hval_array();
        size_t i;
        const json_t *el;
        json_array_foreach(j, i, el)
        {
            char sub[256];
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            struct hval item;
            enum status st = hval_from_json(el, sub, &item, err);
            if (st != ST_OK) {
                hval_free(&a);
                return st;
            }
            harray_add(&a.v.arr, item);
        }
        *out = a;
        return ST_OK;
    }
    case JSON_OBJECT:
        if (json_object_get(j, "type"))
            return typed_from_json(j, path, out, err);
        {
            struct htable *t;
            enum status st = htable_from_json(j, path, &t, err);
            if (st != ST_OK)
                return st;
            *out = hval_void();
            out->kind = HV_TABLE;
            out->v.tab = t;
            return ST_OK;
        }
    default:
        return error_set(err, ST_EPARSE, "%s: unsupported JSON value", path);
    }
}
