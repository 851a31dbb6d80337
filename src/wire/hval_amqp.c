/*
 * hval_amqp: typed values <-> librabbitmq field values, and the wire form of a table.
 */
#include "hval_amqp.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static struct bytes bytes_from_amqp(amqp_bytes_t b)
{
    return bytes_dup(b.len ? b.bytes : "", b.len);
}

struct hval hval_from_amqp(const amqp_field_value_t *v)
{
    switch (v->kind) {
    case AMQP_FIELD_KIND_BOOLEAN:
        return hval_bool(v->value.boolean != 0);
    case AMQP_FIELD_KIND_I8:
        return hval_int(HV_I8, v->value.i8);
    case AMQP_FIELD_KIND_U8:
        return hval_uint(HV_U8, v->value.u8);
    case AMQP_FIELD_KIND_I16:
        return hval_int(HV_I16, v->value.i16);
    case AMQP_FIELD_KIND_U16:
        return hval_uint(HV_U16, v->value.u16);
    case AMQP_FIELD_KIND_I32:
        return hval_int(HV_I32, v->value.i32);
    case AMQP_FIELD_KIND_U32:
        return hval_uint(HV_U32, v->value.u32);
    case AMQP_FIELD_KIND_I64:
        return hval_int(HV_I64, v->value.i64);
    case AMQP_FIELD_KIND_U64:
        return hval_uint(HV_U64, v->value.u64);
    case AMQP_FIELD_KIND_TIMESTAMP:
        return hval_uint(HV_TIMESTAMP, v->value.u64);
    case AMQP_FIELD_KIND_F32:
        return hval_f32(v->value.f32);
    case AMQP_FIELD_KIND_F64:
        return hval_f64(v->value.f64);
    case AMQP_FIELD_KIND_DECIMAL:
        return hval_decimal(v->value.decimal.decimals, v->value.decimal.value);
    case AMQP_FIELD_KIND_UTF8:
    case AMQP_FIELD_KIND_BYTES: {
        struct hval h = hval_void();
        h.kind = v->kind == AMQP_FIELD_KIND_UTF8 ? HV_STRING : HV_BYTES;
        h.v.s = bytes_from_amqp(v->value.bytes);
        return h;
    }
    case AMQP_FIELD_KIND_ARRAY: {
        struct hval a = hval_array();
        for (int i = 0; i < v->value.array.num_entries; i++)
            harray_add(&a.v.arr, hval_from_amqp(&v->value.array.entries[i]));
        return a;
    }
    case AMQP_FIELD_KIND_TABLE: {
        struct hval t = hval_void();
        t.kind = HV_TABLE;
        t.v.tab = htable_from_amqp(&v->value.table);
        return t;
    }
    case AMQP_FIELD_KIND_VOID:
    default:
        return hval_void();
    }
}

static void table_add_amqp(struct htable *out, const amqp_table_t *t)
{
    for (int i = 0; t && i < t->num_entries; i++) {
        const amqp_table_entry_t *e = &t->entries[i];
        htable_addn(out, e->key.len ? e->key.bytes : "", e->key.len, hval_from_amqp(&e->value));
    }
}

/* n bytes and a NUL in the message's shared block (hval.h's hpool). */
static unsigned char *pool_copy(struct hpool **pool, const amqp_bytes_t *b)
{
    unsigned char *d = hpool_alloc(pool, b->len + 1);
    if (b->len)
        memcpy(d, b->bytes, b->len);
    d[b->len] = '\0';
    return d;
}

/* A message's headers: as table_add_amqp, but the keys and the top-level string values in
 * shared blocks, one allocation for all of them rather than one each (the peek path's
 * allocations a message were mostly these), and the table and its entries (room for all made
 * at once) in the block too. t has entries. */
static struct htable *headers_from_amqp(const amqp_table_t *t)
{
    struct hpool *pool = NULL;
    struct htable *out = htable_new_pooled(&pool, (size_t)t->num_entries);
    for (int i = 0; i < t->num_entries; i++) {
        const amqp_table_entry_t *e = &t->entries[i];
        struct hval v;
        if (e->value.kind == AMQP_FIELD_KIND_UTF8 || e->value.kind == AMQP_FIELD_KIND_BYTES) {
            v = hval_void();
            v.kind = e->value.kind == AMQP_FIELD_KIND_UTF8 ? HV_STRING : HV_BYTES;
            v.pooled = true;
            v.v.s =
                (struct bytes){e->value.value.bytes.len, pool_copy(&pool, &e->value.value.bytes)};
        } else {
            v = hval_from_amqp(&e->value);
        }
        struct hentry *he = &out->e[out->n++]; /* room made above */
        he->key = (struct bytes){e->key.len, pool_copy(&pool, &e->key)};
        he->key_pooled = true;
        he->val = v;
    }
    hpool_done(&pool);
    return out;
}

struct htable *htable_from_amqp(const amqp_table_t *t)
{
    struct htable *out = htable_new();
    table_add_amqp(out, t);
    return out;
}

static amqp_bytes_t pool_bytes(amqp_pool_t *pool, const struct bytes *b)
{
    amqp_bytes_t out;
    out.len = b->len;
    out.bytes = amqp_pool_alloc(pool, b->len ? b->len : 1);
    if (b->len)
        memcpy(out.bytes, b->data, b->len);
    return out;
}

void hval_to_amqp(const struct hval *v, amqp_pool_t *pool, amqp_field_value_t *out)
{
    memset(out, 0, sizeof *out);
    out->kind = (uint8_t)hkind_letter(v->kind);
    switch (v->kind) {
    case HV_BOOL:
        out->value.boolean = v->v.b;
        break;
    case HV_I8:
        out->value.i8 = (int8_t)v->v.i;
        break;
    case HV_U8:
        out->value.u8 = (uint8_t)v->v.u;
        break;
    case HV_I16:
        out->value.i16 = (int16_t)v->v.i;
        break;
    case HV_U16:
        out->value.u16 = (uint16_t)v->v.u;
        break;
    case HV_I32:
        out->value.i32 = (int32_t)v->v.i;
        break;
    case HV_U32:
        out->value.u32 = (uint32_t)v->v.u;
        break;
    case HV_I64:
        out->value.i64 = v->v.i;
        break;
    case HV_U64:
    case HV_TIMESTAMP:
        out->value.u64 = v->v.u;
        break;
    case HV_F32:
        out->value.f32 = v->v.f32;
        break;
    case HV_F64:
        out->value.f64 = v->v.f64;
        break;
    case HV_DECIMAL:
        out->value.decimal.decimals = v->v.dec.scale;
        out->value.decimal.value = v->v.dec.value;
        break;
    case HV_STRING:
    case HV_BYTES:
        out->value.bytes = pool_bytes(pool, &v->v.s);
        break;
    case HV_ARRAY: {
        size_t n = v->v.arr.n;
        out->value.array.num_entries = (int)n;
        out->value.array.entries = amqp_pool_alloc(pool, (n ? n : 1) * sizeof(amqp_field_value_t));
        for (size_t i = 0; i < n; i++)
            hval_to_amqp(&v->v.arr.items[i], pool, &out->value.array.entries[i]);
        break;
    }
    case HV_TABLE:
        htable_to_amqp(v->v.tab, pool, &out->value.table);
        break;
    case HV_VOID:
    default:
        out->kind = AMQP_FIELD_KIND_VOID;
        break;
    }
}

void htable_to_amqp(const struct htable *t, amqp_pool_t *pool, amqp_table_t *out)
{
    size_t n = t ? t->n : 0;
    out->num_entries = (int)n;
    out->entries = amqp_pool_alloc(pool, (n ? n : 1) * sizeof(amqp_table_entry_t));
    for (size_t i = 0; i < n; i++) {
        out->entries[i].key = pool_bytes(pool, &t->e[i].key);
        hval_to_amqp(&t->e[i].val, pool, &out->entries[i].value);
    }
}

enum status htable_decode_wire(const void *data, size_t len, struct htable **out, struct error *err)
{
    amqp_pool_t pool;
    init_amqp_pool(&pool, 4096);
    amqp_bytes_t enc = {len, (void *)(uintptr_t)data};
    amqp_table_t t;
    size_t offset = 0;
    int rc = amqp_decode_table(enc, &pool, &t, &offset);
    if (rc != AMQP_STATUS_OK) {
        empty_amqp_pool(&pool);
        return error_set(err, ST_EPARSE, "malformed AMQP field table: %s", amqp_error_string2(rc));
    }
    *out = htable_from_amqp(&t);
    empty_amqp_pool(&pool);
    return ST_OK;
}

static size_t amqp_table_size(const amqp_table_t *t);

/* The bytes librabbitmq writes for a field value: its kind letter, then the value. */
static size_t amqp_field_size(const amqp_field_value_t *v)
{
    switch (v->kind) {
    case AMQP_FIELD_KIND_BOOLEAN:
    case AMQP_FIELD_KIND_I8:
    case AMQP_FIELD_KIND_U8:
        return 1 + 1;
    case AMQP_FIELD_KIND_I16:
    case AMQP_FIELD_KIND_U16:
        return 1 + 2;
    case AMQP_FIELD_KIND_I32:
    case AMQP_FIELD_KIND_U32:
    case AMQP_FIELD_KIND_F32:
        return 1 + 4;
    case AMQP_FIELD_KIND_DECIMAL:
        return 1 + 5;
    case AMQP_FIELD_KIND_UTF8:
    case AMQP_FIELD_KIND_BYTES:
        return 1 + 4 + v->value.bytes.len;
    case AMQP_FIELD_KIND_ARRAY: {
        size_t n = 1 + 4;
        for (int i = 0; i < v->value.array.num_entries; i++)
            n += amqp_field_size(&v->value.array.entries[i]);
        return n;
    }
    case AMQP_FIELD_KIND_TABLE:
        return 1 + amqp_table_size(&v->value.table);
    case AMQP_FIELD_KIND_VOID:
        return 1;
    default: /* I64, U64, F64, TIMESTAMP */
        return 1 + 8;
    }
}

/* The wire size of a table: its 4-byte length, then each key (a length byte and the key)
 * and value. */
static size_t amqp_table_size(const amqp_table_t *t)
{
    size_t n = 4;
    for (int i = 0; i < t->num_entries; i++)
        n += 1 + t->entries[i].key.len + amqp_field_size(&t->entries[i].value);
    return n;
}

enum status htable_encode_wire(const struct htable *t, struct bytes *out, struct error *err)
{
    amqp_pool_t pool;
    init_amqp_pool(&pool, 4096);
    amqp_table_t at;
    htable_to_amqp(t, &pool, &at);
    /* A buffer of the exact size: librabbitmq reports a buffer too small for a kind letter as
     * AMQP_STATUS_BAD_AMQP_DATA, not TABLE_TOO_BIG, so growing on TABLE_TOO_BIG alone failed
     * tables past 16 KB whose first byte beyond the buffer was one (a flat 20,250-entry table,
     * 3,344 nested tables). The loop stays as a safety net. */
    size_t cap = amqp_table_size(&at) + 16;
    for (;;) {
        unsigned char *buf = xmalloc(cap);
        amqp_bytes_t enc = {cap, buf};
        size_t offset = 0;
        int rc = amqp_encode_table(enc, &at, &offset);
        if (rc == AMQP_STATUS_OK) {
            *out = bytes_dup(buf, offset);
            free(buf);
            empty_amqp_pool(&pool);
            return ST_OK;
        }
        free(buf);
        /* librabbitmq says BAD_AMQP_DATA, not TABLE_TOO_BIG, when the buffer runs out inside
         * a nested array: a table of 4 KiB holding one is not malformed, it needs room. */
        if ((rc != AMQP_STATUS_TABLE_TOO_BIG && rc != AMQP_STATUS_BAD_AMQP_DATA) ||
            cap > (1u << 28)) {
            empty_amqp_pool(&pool);
            return error_set(err, ST_EINVAL, "cannot encode AMQP field table: %s",
                             amqp_error_string2(rc));
        }
        cap *= 4;
    }
}

/* One value as a table of one entry with an empty key: 4-byte length, key length 0, then the
 * value (type octet first). */
enum status hval_encode_wire(const struct hval *v, struct bytes *out, struct error *err)
{
    struct htable *t = htable_new();
    htable_addn(t, "", 0, hval_copy(v));
    struct bytes table = {0, NULL};
    enum status st = htable_encode_wire(t, &table, err);
    htable_free(t);
    if (st != ST_OK)
        return st;
    *out = bytes_dup(table.data + 5, table.len - 5);
    bytes_free(&table);
    return ST_OK;
}

enum status hval_decode_wire(const void *data, size_t len, struct hval *out, struct error *err)
{
    if (len == 0 || len > UINT32_MAX - 1)
        return error_set(err, ST_EPARSE, "malformed AMQP field value: %s",
                         len ? "too long" : "empty");
    size_t n = len + 1;
    unsigned char *buf = xmalloc(4 + n);
    buf[0] = (unsigned char)(n >> 24);
    buf[1] = (unsigned char)(n >> 16);
    buf[2] = (unsigned char)(n >> 8);
    buf[3] = (unsigned char)n;
    buf[4] = 0;
    memcpy(buf + 5, data, len);
    struct htable *t = NULL;
    enum status st = htable_decode_wire(buf, 4 + n, &t, err);
    free(buf);
    if (st != ST_OK)
        return st;
    if (t->n != 1) {
        htable_free(t);
        return error_set(err, ST_EPARSE, "malformed AMQP field value: bytes after the value");
    }
    *out = t->e[0].val;
    t->e[0].val = hval_void();
    htable_free(t);
    return ST_OK;
}

#define COPY_PROP_STRINGS(X)                                                                       \
    X(content_type, AMQP_BASIC_CONTENT_TYPE_FLAG)                                                  \
    X(content_encoding, AMQP_BASIC_CONTENT_ENCODING_FLAG)                                          \
    X(correlation_id, AMQP_BASIC_CORRELATION_ID_FLAG)                                              \
    X(reply_to, AMQP_BASIC_REPLY_TO_FLAG)                                                          \
    X(expiration, AMQP_BASIC_EXPIRATION_FLAG)                                                      \
    X(message_id, AMQP_BASIC_MESSAGE_ID_FLAG)                                                      \
    X(type, AMQP_BASIC_TYPE_FLAG)                                                                  \
    X(user_id, AMQP_BASIC_USER_ID_FLAG)                                                            \
    X(app_id, AMQP_BASIC_APP_ID_FLAG)                                                              \
    X(cluster_id, AMQP_BASIC_CLUSTER_ID_FLAG)

void props_from_amqp(const amqp_basic_properties_t *p, struct props *out, struct htable **headers,
                     bool *headers_present)
{
    /* props_set_string's work, each slot named (no lookup of the slot by its flag) */
#define X(name, flag)                                                                              \
    if (p->_flags & (flag)) {                                                                      \
        bytes_free(&out->name);                                                                    \
        out->name = bytes_dup(p->name.len ? p->name.bytes : "", p->name.len);                      \
        out->present |= 1u << PROP_##name;                                                         \
    }
    COPY_PROP_STRINGS(X)
#undef X
    if (p->_flags & AMQP_BASIC_DELIVERY_MODE_FLAG) {
        out->delivery_mode = p->delivery_mode;
        out->present |= 1u << PROP_delivery_mode;
    }
    if (p->_flags & AMQP_BASIC_PRIORITY_FLAG) {
        out->priority = p->priority;
        out->present |= 1u << PROP_priority;
    }
    if (p->_flags & AMQP_BASIC_TIMESTAMP_FLAG) {
        out->timestamp = p->timestamp;
        out->present |= 1u << PROP_timestamp;
    }
    *headers_present = (p->_flags & AMQP_BASIC_HEADERS_FLAG) != 0;
    /* A new message's empty table (message_init's) is kept when there is nothing to add; a
     * delivery's message has none yet (NULL) until its content header. */
    if (*headers_present && p->headers.num_entries > 0) {
        htable_free(*headers);
        *headers = headers_from_amqp(&p->headers);
    } else if (!*headers || (*headers)->n != 0) {
        htable_free(*headers);
        *headers = htable_new();
    }
}

void props_to_amqp(const struct props *p, const struct htable *headers, bool headers_present,
                   amqp_pool_t *pool, amqp_basic_properties_t *out)
{
    memset(out, 0, sizeof *out);
#define X(name, flag)                                                                              \
    if (props_has(p, PROP_##name)) {                                                               \
        out->_flags |= (flag);                                                                     \
        out->name = pool_bytes(pool, &p->name);                                                    \
    }
    COPY_PROP_STRINGS(X)
#undef X
    if (props_has(p, PROP_delivery_mode)) {
        out->_flags |= AMQP_BASIC_DELIVERY_MODE_FLAG;
        out->delivery_mode = p->delivery_mode;
    }
    if (props_has(p, PROP_priority)) {
        out->_flags |= AMQP_BASIC_PRIORITY_FLAG;
        out->priority = p->priority;
    }
    if (props_has(p, PROP_timestamp)) {
        out->_flags |= AMQP_BASIC_TIMESTAMP_FLAG;
        out->timestamp = p->timestamp;
    }
    if (headers_present) {
        out->_flags |= AMQP_BASIC_HEADERS_FLAG;
        htable_to_amqp(headers, pool, &out->headers);
    }
}
