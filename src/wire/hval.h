/*
 * hval: AMQP field-table values that keep their wire kind.
 *
 * A header read from the broker or a snapshot keeps its exact AMQP kind (signed or unsigned
 * width, float or double, decimal, timestamp, string or bytes, array, table), so that a
 * message decoded and written back is identical on the wire. Nothing is stringified on the
 * way through. Tables keep their entry order and may hold duplicate keys, as the wire can.
 *
 * Ownership: an hval owns everything it points at; hval_free releases it. htable_add and
 * harray_add take ownership of the value they are given. A reader may put keys and string
 * values in a shared block (hpool_alloc) rather than one allocation each: a flag on the entry
 * and the value says so, and hval_free / hentry_free_key give such bytes back to their block
 * (freed when the last of its strings goes). Never bytes_free them; hval_copy always makes
 * owned bytes. A table's entries, and the table, may be in such a block too (e_pooled,
 * self_pooled): grow them only with htable_reserve (or htable_add*), free the table only with
 * htable_free, never realloc or free t->e or t.
 */
#ifndef DLQX_HVAL_H
#define DLQX_HVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "bytes.h"

/* The kinds, in the order of their AMQP type letters as RabbitMQ uses them. */
#define HKIND_LIST(X)                                                                              \
    X(HV_VOID, 'V', "void")                                                                        \
    X(HV_BOOL, 't', "bool")                                                                        \
    X(HV_I8, 'b', "int8")                                                                          \
    X(HV_U8, 'B', "uint8")                                                                         \
    X(HV_I16, 's', "int16")                                                                        \
    X(HV_U16, 'u', "uint16")                                                                       \
    X(HV_I32, 'I', "int32")                                                                        \
    X(HV_U32, 'i', "uint32")                                                                       \
    X(HV_I64, 'l', "int64")                                                                        \
    X(HV_U64, 'L', "uint64")                                                                       \
    X(HV_F32, 'f', "float")                                                                        \
    X(HV_F64, 'd', "double")                                                                       \
    X(HV_DECIMAL, 'D', "decimal")                                                                  \
    X(HV_TIMESTAMP, 'T', "timestamp")                                                              \
    X(HV_STRING, 'S', "string")                                                                    \
    X(HV_BYTES, 'x', "bytes")                                                                      \
    X(HV_ARRAY, 'A', "array")                                                                      \
    X(HV_TABLE, 'F', "table")

enum hkind {
#define X(e, letter, name) e,
    HKIND_LIST(X)
#undef X
        HV_KIND_COUNT
};

struct htable;

struct harray {
    size_t n, cap;
    struct hval *items;
};

struct hval {
    enum hkind kind;
    bool pooled; /* HV_STRING, HV_BYTES: v.s is in an hpool block, not its own */
    union {
        bool b;
        int64_t i;  /* HV_I8 .. HV_I64 */
        uint64_t u; /* HV_U8 .. HV_U64, HV_TIMESTAMP (seconds) */
        float f32;
        double f64;
        struct {
            uint8_t scale;
            uint32_t value;
        } dec;
        struct bytes s; /* HV_STRING, HV_BYTES */
        struct harray arr;
        struct htable *tab;
    } v;
};

struct hentry {
    struct bytes key;
    struct hval val;
    bool key_pooled; /* key is in an hpool block, not its own */
};

struct htable {
    size_t n, cap;
    struct hentry *e;
    bool e_pooled;    /* e is carved from an hpool block (a reader's), not its own allocation */
    bool self_pooled; /* so is the table itself (htable_new_pooled) */
};

/* A shared block of strings (see Ownership above). A reader keeps the block it fills in *cur
 * (NULL at first): hpool_alloc carves n bytes from it (a new block when it is full) and
 * hpool_done drops the reader's hold; each string carved holds the block until
 * hpool_release. */
struct hpool {
    size_t refs, cap, used; /* refs: the strings carved, plus one while a reader fills it */
    unsigned char data[];   /* each string preceded by the block's address */
};
/* hpool_alloc's slow path: a new block for `need` bytes (the address included). */
void *hpool_alloc_new(struct hpool **cur, size_t need);
/* Inline: a delivery carves ten or so strings, and the call was a fifth of the carving. */
static inline void *hpool_alloc(struct hpool **cur, size_t n)
{
    size_t need = sizeof(struct hpool *) + ((n + 7) & ~(size_t)7);
    struct hpool *b = *cur;
    if (!b || b->cap - b->used < need)
        return hpool_alloc_new(cur, need);
    unsigned char *p = b->data + b->used;
    memcpy(p, &b, sizeof b);
    b->used += need;
    b->refs++;
    return p + sizeof b;
}
void hpool_done(struct hpool **cur);
void hpool_release(void *p);

const char *hkind_name(enum hkind k);
char hkind_letter(enum hkind k);
bool hkind_from_name(const char *name, enum hkind *out);
bool hkind_is_signed(enum hkind k);
bool hkind_is_unsigned(enum hkind k);

/* Constructors: each returns a value the caller owns. */
struct hval hval_void(void);
struct hval hval_bool(bool b);
struct hval hval_int(enum hkind kind, int64_t v);   /* HV_I8..HV_I64; the value must fit */
struct hval hval_uint(enum hkind kind, uint64_t v); /* HV_U8..HV_U64, HV_TIMESTAMP */
struct hval hval_f32(float f);
struct hval hval_f64(double d);
struct hval hval_decimal(uint8_t scale, uint32_t value);
struct hval hval_string(const void *data, size_t len);
struct hval hval_cstring(const char *s);
struct hval hval_bytes(const void *data, size_t len);
struct hval hval_array(void);
struct hval hval_table(void); /* an empty table */

struct hval hval_copy(const struct hval *v);
void hval_free(struct hval *v);
/* Exact equality: same kind, same value, same order (floats compared by bit pattern). */
bool hval_equal(const struct hval *a, const struct hval *b);

void harray_add(struct harray *a, struct hval v);

struct htable *htable_new(void);
/* An empty table with room for cap entries, itself and its entries carved from *pool. */
struct htable *htable_new_pooled(struct hpool **pool, size_t cap);
struct htable *htable_copy(const struct htable *t);
void htable_free(struct htable *t);
bool htable_equal(const struct htable *a, const struct htable *b);
/* Appends (key, v); takes ownership of v. Duplicates are kept, as on the wire. */
void htable_add(struct htable *t, const char *key, struct hval v);
/* Room for need entries in all (e moved to its own allocation if it was pooled). */
void htable_reserve(struct htable *t, size_t need);
void htable_addn(struct htable *t, const void *key, size_t keylen, struct hval v);
/* Replaces the first entry named key (or appends); takes ownership of v. */
void htable_set(struct htable *t, const char *key, struct hval v);
/* Removes every entry named key; returns how many. */
size_t htable_remove(struct htable *t, const char *key);
/* Appends (key, v) with a key from hpool_alloc (a NUL after keylen); takes ownership of
 * both. */
void htable_add_pooled_key(struct htable *t, unsigned char *key, size_t keylen, struct hval v);
/* Releases an entry's key (its own, or left in the pool). */
void hentry_free_key(struct hentry *e);
/* The first entry named key (borrowed), or NULL. */
const struct hval *htable_get(const struct htable *t, const char *key);

/* An integer kind (signed, or unsigned up to INT64_MAX) as an int64; false for NULL, any other
 * kind or a larger unsigned value. */
bool hval_integer(const struct hval *v, int64_t *out);
/* Lenient readers, the way AceMQ's readers read a header (see acemq.c). */
/* An integer of any width, a decimal string ("3", " -3 "), or a finite float (truncated). */
bool hval_as_int64_lenient(const struct hval *v, int64_t *out);
/* A string or bytes value, or an integer written as decimal; false for anything else. */
bool hval_as_text(const struct hval *v, struct bytes *out);
/* Borrowed string/bytes contents, or NULL when v is not a string or bytes. */
const struct bytes *hval_str(const struct hval *v);

/* The display form of a value that is not an array or a table ("int64" 3 is "3", a timestamp
 * "1767330000 (2026-01-02T05:00:00Z)", an array "2 items"); string bytes are appended raw:
 * sanitise before drawing. */
struct strbuf;
void hval_format_scalar(const struct hval *v, struct strbuf *out);

#endif
