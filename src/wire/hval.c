/*
 * hval: typed AMQP field values — construction, copy, equality and lenient reading.
 */
#include "hval.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char *const kind_names[] = {
#define X(e, letter, name) name,
    HKIND_LIST(X)
#undef X
};

static const char kind_letters[] = {
#define X(e, letter, name) letter,
    HKIND_LIST(X)
#undef X
};

const char *hkind_name(enum hkind k)
{
    return (unsigned)k < HV_KIND_COUNT ? kind_names[k] : "?";
}

char hkind_letter(enum hkind k)
{
    return (unsigned)k < HV_KIND_COUNT ? kind_letters[k] : '?';
}

bool hkind_from_name(const char *name, enum hkind *out)
{
    for (unsigned k = 0; k < HV_KIND_COUNT; k++) {
        if (strcmp(kind_names[k], name) == 0) {
            *out = (enum hkind)k;
            return true;
        }
    }
    return false;
}

bool hkind_is_signed(enum hkind k)
{
    return k == HV_I8 || k == HV_I16 || k == HV_I32 || k == HV_I64;
}

bool hkind_is_unsigned(enum hkind k)
{
    return k == HV_U8 || k == HV_U16 || k == HV_U32 || k == HV_U64 || k == HV_TIMESTAMP;
}

struct hval hval_void(void)
{
    struct hval v;
    memset(&v, 0, sizeof v);
    v.kind = HV_VOID;
    return v;
}

struct hval hval_bool(bool b)
{
    struct hval v = hval_void();
    v.kind = HV_BOOL;
    v.v.b = b;
    return v;
}

struct hval hval_int(enum hkind kind, int64_t i)
{
    struct hval v = hval_void();
    v.kind = kind;
    v.v.i = i;
    return v;
}

struct hval hval_uint(enum hkind kind, uint64_t u)
{
    struct hval v = hval_void();
    v.kind = kind;
    v.v.u = u;
    return v;
}

struct hval hval_f32(float f)
{
    struct hval v = hval_void();
    v.kind = HV_F32;
    v.v.f32 = f;
    return v;
}

struct hval hval_f64(double d)
{
    struct hval v = hval_void();
    v.kind = HV_F64;
    v.v.f64 = d;
    return v;
}

struct hval hval_decimal(uint8_t scale, uint32_t value)
{
    struct hval v = hval_void();
    v.kind = HV_DECIMAL;
    v.v.dec.scale = scale;
    v.v.dec.value = value;
    return v;
}

struct hval hval_string(const void *data, size_t len)
{
    struct hval v = hval_void();
    v.kind = HV_STRING;
    v.v.s = bytes_dup(data, len);
    return v;
}

struct hval hval_cstring(const char *s)
{
    return hval_string(s, strlen(s));
}

struct hval hval_bytes(const void *data, size_t len)
{
    struct hval v = hval_void();
    v.kind = HV_BYTES;
    v.v.s = bytes_dup(data, len);
    return v;
}

struct hval hval_array(void)
{
    struct hval v = hval_void();
    v.kind = HV_ARRAY;
    return v;
}

struct hval hval_table(void)
{
    struct hval v = hval_void();
    v.kind = HV_TABLE;
    v.v.tab = htable_new();
    return v;
}

struct hval hval_copy(const struct hval *src)
{
    struct hval v = *src;
    v.pooled = false;
    switch (src->kind) {
    case HV_STRING:
    case HV_BYTES:
        v.v.s = bytes_copy(&src->v.s);
        break;
    case HV_ARRAY:
        memset(&v.v.arr, 0, sizeof v.v.arr);
        for (size_t i = 0; i < src->v.arr.n; i++)
            harray_add(&v.v.arr, hval_copy(&src->v.arr.items[i]));
        break;
    case HV_TABLE:
        v.v.tab = htable_copy(src->v.tab);
        break;
    default:
        break;
    }
    return v;
}

void hval_free(struct hval *v)
{
    switch (v->kind) {
    case HV_STRING:
    case HV_BYTES:
        if (v->pooled)
            hpool_release(v->v.s.data);
        else
            bytes_free(&v->v.s);
        break;
    case HV_ARRAY:
        for (size_t i = 0; i < v->v.arr.n; i++)
            hval_free(&v->v.arr.items[i]);
        free(v->v.arr.items);
        break;
    case HV_TABLE:
        htable_free(v->v.tab);
        break;
    default:
        break;
    }
    *v = hval_void();
}

bool hval_equal(const struct hval *a, const struct hval *b)
{
    if (a->kind != b->kind)
        return false;
    switch (a->kind) {
    case HV_VOID:
        return true;
    case HV_BOOL:
        return a->v.b == b->v.b;
    case HV_I8:
    case HV_I16:
    case HV_I32:
    case HV_I64:
        return a->v.i == b->v.i;
    case HV_U8:
    case HV_U16:
    case HV_U32:
    case HV_U64:
    case HV_TIMESTAMP:
        return a->v.u == b->v.u;
    case HV_F32:
        return memcmp(&a->v.f32, &b->v.f32, sizeof(float)) == 0;
    case HV_F64:
        return memcmp(&a->v.f64, &b->v.f64, sizeof(double)) == 0;
    case HV_DECIMAL:
        return a->v.dec.scale == b->v.dec.scale && a->v.dec.value == b->v.dec.value;
    case HV_STRING:
    case HV_BYTES:
        return bytes_eq(&a->v.s, &b->v.s);
    case HV_ARRAY:
        if (a->v.arr.n != b->v.arr.n)
            return false;
        for (size_t i = 0; i < a->v.arr.n; i++)
            if (!hval_equal(&a->v.arr.items[i], &b->v.arr.items[i]))
                return false;
        return true;
    case HV_TABLE:
        return htable_equal(a->v.tab, b->v.tab);
    default:
        return false;
    }
}

void harray_add(struct harray *a, struct hval v)
{
    xgrow((void **)&a->items, &a->cap, a->n + 1, sizeof *a->items);
    a->items[a->n++] = v;
}

struct htable *htable_new(void)
{
    return xcalloc(1, sizeof(struct htable));
}

struct htable *htable_new_pooled(struct hpool **pool, size_t cap)
{
    struct htable *t = hpool_alloc(pool, sizeof *t);
    *t = (struct htable){0, 0, NULL, false, true};
    if (cap) {
        t->e = hpool_alloc(pool, cap * sizeof *t->e);
        t->cap = cap;
        t->e_pooled = true;
    }
    return t;
}

struct htable *htable_copy(const struct htable *t)
{
    struct htable *c = htable_new();
    if (!t)
        return c;
    for (size_t i = 0; i < t->n; i++)
        htable_addn(c, t->e[i].key.data, t->e[i].key.len, hval_copy(&t->e[i].val));
    return c;
}

void hpool_done(struct hpool **cur)
{
    if (*cur && --(*cur)->refs == 0)
        free(*cur);
    *cur = NULL;
}

void *hpool_alloc_new(struct hpool **cur, size_t need)
{
    hpool_done(cur);
    /* 960: the block stays within glibc's per-thread cache (1032 bytes a chunk) */
    size_t cap = need > 960 ? need : 960;
    struct hpool *b = xmalloc(sizeof *b + cap);
    b->refs = 1;
    b->cap = cap;
    b->used = 0;
    *cur = b;
    unsigned char *p = b->data;
    memcpy(p, &b, sizeof b);
    b->used += need;
    b->refs++;
    return p + sizeof b;
}

void hpool_release(void *p)
{
    struct hpool *b;
    memcpy(&b, (unsigned char *)p - sizeof b, sizeof b);
    hpool_done(&b);
}

void hentry_free_key(struct hentry *e)
{
    if (e->key_pooled)
        hpool_release(e->key.data);
    else
        bytes_free(&e->key);
    e->key = (struct bytes){0, NULL};
    e->key_pooled = false;
}

/* Strings given back to their blocks a run at a time: a table's pooled keys and values are
 * mostly in one block, whose count drops once for the run, not once a string. */
struct pool_drops {
    struct hpool *b;
    size_t n;
};

static void drops_flush(struct pool_drops *d)
{
    if (d->b) {
        d->b->refs -= d->n - 1; /* hpool_done takes the last */
        hpool_done(&d->b);
    }
    d->n = 0;
}

static void drop(struct pool_drops *d, const unsigned char *p)
{
    struct hpool *b;
    memcpy(&b, p - sizeof b, sizeof b);
    if (b != d->b) {
        drops_flush(d);
        d->b = b;
    }
    d->n++;
}

void htable_free(struct htable *t)
{
    if (!t)
        return;
    struct pool_drops d = {NULL, 0};
    for (size_t i = 0; i < t->n; i++) {
        struct hentry *e = &t->e[i];
        if (e->key_pooled)
            drop(&d, e->key.data);
        else
            free(e->key.data);
        struct hval *v = &e->val;
        if ((v->kind == HV_STRING || v->kind == HV_BYTES) && v->pooled)
            drop(&d, v->v.s.data);
        else if (v->kind == HV_STRING || v->kind == HV_BYTES || v->kind == HV_ARRAY ||
                 v->kind == HV_TABLE)
            hval_free(v);
    }
    if (t->e_pooled)
        drop(&d, (const unsigned char *)t->e);
    else
        free(t->e);
    if (t->self_pooled) {
        drop(&d, (const unsigned char *)t);
        drops_flush(&d); /* t may go with its block: not touched after */
        return;
    }
    drops_flush(&d);
    free(t);
}

bool htable_equal(const struct htable *a, const struct htable *b)
{
    size_t an = a ? a->n : 0, bn = b ? b->n : 0;
    if (an != bn)
        return false;
    for (size_t i = 0; i < an; i++) {
        if (!bytes_eq(&a->e[i].key, &b->e[i].key) || !hval_equal(&a->e[i].val, &b->e[i].val))
            return false;
    }
    return true;
}

void htable_reserve(struct htable *t, size_t need)
{
    if (need <= t->cap)
        return;
    if (t->e_pooled) {
        size_t cap = need > 2 * t->cap ? need : 2 * t->cap;
        struct hentry *e = xmalloc(cap * sizeof *e);
        memcpy(e, t->e, t->n * sizeof *e);
        hpool_release(t->e);
        t->e = e;
        t->cap = cap;
        t->e_pooled = false;
        return;
    }
    xgrow((void **)&t->e, &t->cap, need, sizeof *t->e);
}

void htable_addn(struct htable *t, const void *key, size_t keylen, struct hval v)
{
    htable_reserve(t, t->n + 1);
    t->e[t->n].key = bytes_dup(key, keylen);
    t->e[t->n].key_pooled = false;
    t->e[t->n].val = v;
    t->n++;
}

void htable_add_pooled_key(struct htable *t, unsigned char *key, size_t keylen, struct hval v)
{
    htable_reserve(t, t->n + 1);
    t->e[t->n].key = (struct bytes){keylen, key};
    t->e[t->n].key_pooled = true;
    t->e[t->n].val = v;
    t->n++;
}

void htable_add(struct htable *t, const char *key, struct hval v)
{
    htable_addn(t, key, strlen(key), v);
}

void htable_set(struct htable *t, const char *key, struct hval v)
{
    for (size_t i = 0; i < t->n; i++) {
        if (bytes_eq_cstr(&t->e[i].key, key)) {
            hval_free(&t->e[i].val);
            t->e[i].val = v;
            return;
        }
    }
    htable_add(t, key, v);
}

size_t htable_remove(struct htable *t, const char *key)
{
    size_t w = 0, removed = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (bytes_eq_cstr(&t->e[i].key, key)) {
            hentry_free_key(&t->e[i]);
            hval_free(&t->e[i].val);
            removed++;
        } else {
            t->e[w++] = t->e[i];
        }
    }
    t->n = w;
    return removed;
}

const struct hval *htable_get(const struct htable *t, const char *key)
{
    if (!t)
        return NULL;
    /* The name's length once, not once an entry (the dialects ask for dozens of names a
     * message: a strlen each time was 8% of dlqx tree). */
    size_t n = strlen(key);
    for (size_t i = 0; i < t->n; i++)
        if (t->e[i].key.len == n &&
            (n == 0 || (t->e[i].key.data[n - 1] == (unsigned char)key[n - 1] &&
                        memcmp(t->e[i].key.data, key, n) == 0)))
            return &t->e[i].val;
    return NULL;
}

const struct bytes *hval_str(const struct hval *v)
{
    if (v && (v->kind == HV_STRING || v->kind == HV_BYTES))
        return &v->v.s;
    return NULL;
}

/* A decimal integer as Ruby's Integer(s, 10) reads one: surrounding white space, an optional
 * sign, digits with single underscores between them. */
static bool parse_decimal(const unsigned char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    while (i < n && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')))
        i++;
    while (n > i && (s[n - 1] == ' ' || (s[n - 1] >= '\t' && s[n - 1] <= '\r')))
        n--;
    bool neg = false;
    if (i < n && (s[i] == '+' || s[i] == '-')) {
        neg = s[i] == '-';
        i++;
    }
    if (i >= n)
        return false;
    uint64_t acc = 0;
    bool prev_digit = false;
    for (; i < n; i++) {
        if (s[i] == '_') {
            if (!prev_digit || i + 1 >= n || s[i + 1] < '0' || s[i + 1] > '9')
                return false;
            prev_digit = false;
            continue;
        }
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (acc > (UINT64_MAX - d) / 10)
            return false;
        acc = acc * 10 + d;
        prev_digit = true;
    }
    if (neg) {
        if (acc > (uint64_t)INT64_MAX + 1)
            return false;
        *out = acc == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)acc;
    } else {
        if (acc > (uint64_t)INT64_MAX)
            return false;
        *out = (int64_t)acc;
    }
    return true;
}

bool hval_integer(const struct hval *v, int64_t *out)
{
    if (!v)
        return false;
    switch (v->kind) {
    case HV_I8:
    case HV_I16:
    case HV_I32:
    case HV_I64:
        *out = v->v.i;
        return true;
    case HV_U8:
    case HV_U16:
    case HV_U32:
    case HV_U64:
        if (v->v.u > (uint64_t)INT64_MAX)
            return false;
        *out = (int64_t)v->v.u;
        return true;
    default:
        return false;
    }
}

bool hval_as_int64_lenient(const struct hval *v, int64_t *out)
{
    if (!v)
        return false;
    if (hval_integer(v, out))
        return true;
    switch (v->kind) {
    case HV_F32:
    case HV_F64: {
        double d = v->kind == HV_F32 ? (double)v->v.f32 : v->v.f64;
        if (!isfinite(d) || d >= 9223372036854775808.0 || d < -9223372036854775808.0)
            return false;
        *out = (int64_t)d;
        return true;
    }
    case HV_STRING:
    case HV_BYTES:
        return parse_decimal(v->v.s.data, v->v.s.len, out);
    default:
        return false;
    }
}

bool hval_as_text(const struct hval *v, struct bytes *out)
{
    if (!v)
        return false;
    char buf[32];
    switch (v->kind) {
    case HV_STRING:
    case HV_BYTES:
        *out = bytes_copy(&v->v.s);
        if (!out->data)
            *out = bytes_dup("", 0);
        return true;
    case HV_I8:
    case HV_I16:
    case HV_I32:
    case HV_I64:
        snprintf(buf, sizeof buf, "%lld", (long long)v->v.i);
        *out = bytes_from_cstr(buf);
        return true;
    case HV_U8:
    case HV_U16:
    case HV_U32:
    case HV_U64:
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)v->v.u);
        *out = bytes_from_cstr(buf);
        return true;
    default:
        return false;
    }
}

void hval_format_scalar(const struct hval *v, struct strbuf *out)
{
    switch (v->kind) {
    case HV_VOID:
        sb_adds(out, "(void)");
        break;
    case HV_BOOL:
        sb_adds(out, v->v.b ? "true" : "false");
        break;
    case HV_I8:
    case HV_I16:
    case HV_I32:
    case HV_I64:
        sb_addf(out, "%lld", (long long)v->v.i);
        break;
    case HV_U8:
    case HV_U16:
    case HV_U32:
    case HV_U64:
        sb_addf(out, "%llu", (unsigned long long)v->v.u);
        break;
    case HV_F32:
        sb_addf(out, "%.9g", (double)v->v.f32);
        break;
    case HV_F64:
        sb_addf(out, "%.17g", v->v.f64);
        break;
    case HV_DECIMAL: {
        /* value / 10^scale, written out in decimal without floating point. */
        char digits[16];
        int n = snprintf(digits, sizeof digits, "%u", (unsigned)v->v.dec.value);
        int scale = v->v.dec.scale;
        if (scale == 0) {
            sb_add(out, digits, (size_t)n);
        } else if (scale >= n) {
            sb_adds(out, "0.");
            for (int i = n; i < scale; i++)
                sb_addc(out, '0');
            sb_add(out, digits, (size_t)n);
        } else {
            sb_add(out, digits, (size_t)(n - scale));
            sb_addc(out, '.');
            sb_add(out, digits + n - scale, (size_t)scale);
        }
        break;
    }
    case HV_TIMESTAMP: {
        sb_addf(out, "%llu", (unsigned long long)v->v.u);
        if (v->v.u <= (uint64_t)INT64_MAX / 1000) {
            char t[32];
            time_format_rfc3339((int64_t)v->v.u * 1000, false, t);
            sb_addf(out, " (%s)", t);
        }
        break;
    }
    case HV_STRING:
    case HV_BYTES:
        sb_add(out, v->v.s.data ? (const void *)v->v.s.data : "", v->v.s.len);
        break;
    case HV_ARRAY:
        sb_addf(out, "%zu item%s", v->v.arr.n, v->v.arr.n == 1 ? "" : "s");
        break;
    case HV_TABLE:
        sb_addf(out, "%zu entr%s", v->v.tab ? v->v.tab->n : 0,
                v->v.tab && v->v.tab->n == 1 ? "y" : "ies");
        break;
    case HV_KIND_COUNT:
        break;
    }
}
