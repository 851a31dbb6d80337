/* peek_held: the baseline's deep copy of a delivery (see peek_held.h). */
#include "peek_held.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

const char *const peek_types[4] = {"orders.OrderPlaced", "payments.PaymentAuthorized",
                                   "shipping.LabelRequested", "invoices.InvoiceIssued"};
const char *const peek_errors[3] = {
    "java.net.SocketTimeoutException: Read timed out after 30000 ms (payment-gateway)",
    "com.acme.orders.ValidationException: customer 4711 has no billing address",
    "org.postgresql.util.PSQLException: deadlock detected",
};

void seq_uuid(char out[37], uint32_t salt, uint64_t seq)
{
    uint64_t h = (seq + 1) * 0x9E3779B97F4A7C15ULL ^ salt;
    snprintf(out, 37, "%08" PRIx32 "-%04" PRIx32 "-4%03" PRIx32 "-8%03" PRIx32 "-%012" PRIx64,
             (uint32_t)(h >> 32), (uint32_t)(h >> 16) & 0xffff, (uint32_t)(h >> 4) & 0xfff,
             (uint32_t)h & 0xfff, seq);
}

/* The last group of the id, as peek_bench's seq_uuid writes it; -1 when it is not one. */
int64_t seq_of(const void *p, size_t n)
{
    if (n != 36)
        return -1;
    char buf[13];
    memcpy(buf, (const char *)p + 24, 12);
    buf[12] = '\0';
    char *end;
    long long v = strtoll(buf, &end, 16);
    return *end ? -1 : (int64_t)v;
}

/* --- the copy: one size pass, then one copy pass into a bump region ------------------ */

#define ALIGN8(n) (((n) + 7) & ~(size_t)7)

static size_t table_size(const amqp_table_t *t);
static size_t value_size(const amqp_field_value_t *v)
{
    switch (v->kind) {
    case AMQP_FIELD_KIND_UTF8:
    case AMQP_FIELD_KIND_BYTES:
        return ALIGN8(v->value.bytes.len);
    case AMQP_FIELD_KIND_TABLE:
        return table_size(&v->value.table);
    case AMQP_FIELD_KIND_ARRAY: {
        size_t n = ALIGN8((size_t)v->value.array.num_entries * sizeof(amqp_field_value_t));
        for (int i = 0; i < v->value.array.num_entries; i++)
            n += value_size(&v->value.array.entries[i]);
        return n;
    }
    default:
        return 0;
    }
}

static size_t table_size(const amqp_table_t *t)
{
    size_t n = ALIGN8((size_t)t->num_entries * sizeof(amqp_table_entry_t));
    for (int i = 0; i < t->num_entries; i++)
        n += ALIGN8(t->entries[i].key.len) + value_size(&t->entries[i].value);
    return n;
}

static void *bump(unsigned char **p, size_t n)
{
    void *r = *p;
    *p += ALIGN8(n);
    return r;
}

static amqp_bytes_t bytes_into(unsigned char **p, amqp_bytes_t b)
{
    amqp_bytes_t out = {b.len, NULL};
    if (b.len) {
        out.bytes = bump(p, b.len);
        memcpy(out.bytes, b.bytes, b.len);
    }
    return out;
}

static void table_into(unsigned char **p, const amqp_table_t *in, amqp_table_t *out);
static void value_into(unsigned char **p, const amqp_field_value_t *in, amqp_field_value_t *out)
{
    *out = *in;
    switch (in->kind) {
    case AMQP_FIELD_KIND_UTF8:
    case AMQP_FIELD_KIND_BYTES:
        out->value.bytes = bytes_into(p, in->value.bytes);
        break;
    case AMQP_FIELD_KIND_TABLE:
        table_into(p, &in->value.table, &out->value.table);
        break;
    case AMQP_FIELD_KIND_ARRAY:
        out->value.array.entries =
            bump(p, (size_t)in->value.array.num_entries * sizeof(amqp_field_value_t));
        for (int i = 0; i < in->value.array.num_entries; i++)
            value_into(p, &in->value.array.entries[i], &out->value.array.entries[i]);
        break;
    default:
        break;
    }
}

static void table_into(unsigned char **p, const amqp_table_t *in, amqp_table_t *out)
{
    out->num_entries = in->num_entries;
    out->entries = bump(p, (size_t)in->num_entries * sizeof(amqp_table_entry_t));
    for (int i = 0; i < in->num_entries; i++) {
        out->entries[i].key = bytes_into(p, in->entries[i].key);
        value_into(p, &in->entries[i].value, &out->entries[i].value);
    }
}

#define PROP_BYTES_LIST(X)                                                                         \
    X(content_type)                                                                                \
    X(content_encoding)                                                                            \
    X(correlation_id)                                                                              \
    X(reply_to) X(expiration) X(message_id) X(type) X(user_id) X(app_id) X(cluster_id)

struct held *held_copy(const amqp_envelope_t *e)
{
    const amqp_basic_properties_t *p = &e->message.properties;
    size_t n = ALIGN8(sizeof(struct held)) + ALIGN8(e->exchange.len) + ALIGN8(e->routing_key.len) +
               ALIGN8(e->message.body.len);
#define X(f) n += ALIGN8(p->f.len);
    PROP_BYTES_LIST(X)
#undef X
    if (p->_flags & AMQP_BASIC_HEADERS_FLAG)
        n += table_size(&p->headers);
    struct held *h = xmalloc(n);
    unsigned char *cur = (unsigned char *)h + ALIGN8(sizeof *h);
    h->delivery_tag = e->delivery_tag;
    h->redelivered = e->redelivered != 0;
    h->exchange = bytes_into(&cur, e->exchange);
    h->routing_key = bytes_into(&cur, e->routing_key);
    h->body = bytes_into(&cur, e->message.body);
    h->props = *p;
#define X(f) h->props.f = bytes_into(&cur, p->f);
    PROP_BYTES_LIST(X)
#undef X
    if (p->_flags & AMQP_BASIC_HEADERS_FLAG)
        table_into(&cur, &p->headers, &h->props.headers);
    return h;
}

/* Whether the held messages are the queue's in publish order; prints the first break. */
bool held_in_order(struct held **h, uint32_t count, const char *what)
{
    for (uint32_t i = 0; i < count; i++) {
        int64_t s = seq_of(h[i]->props.message_id.bytes, h[i]->props.message_id.len);
        if (s != (int64_t)i) {
            printf("  %s: ORDER CHANGED: position %" PRIu32 " holds message #%" PRId64 "\n", what,
                   i, s);
            return false;
        }
    }
    return true;
}

void held_free(struct held **h, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        free(h[i]);
    free(h);
}
