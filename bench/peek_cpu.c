/*
 * peek_cpu: the client's work per message of peek_bench's two sides, without a broker, for
 * counting instructions (callgrind) and for checking that the peek path writes the same
 * bytes before and after a change.
 *
 *   peek_cpu baseline COUNT [SIZE]   held_copy of each delivery (peek_bench's bare consumer)
 *   peek_cpu dlqx COUNT [SIZE]       peek_message_from_envelope, store_append, message_free
 *   peek_cpu dump COUNT [SIZE]       the store's records and index entries, as text (stdout)
 *
 * The deliveries are built as peek_bench publishes them (1 KB AceMQ dead letters, seven
 * x-acemq-* headers, content type, message id, persistent), plus, every 7th message, one
 * with other header kinds, a body with escapes, a non-UTF-8 body and nested tables (so that
 * "dump" covers more than the benchmark's one shape). librabbitmq's own reading of the frames
 * is the same on both sides and not included. Count with
 *   valgrind --tool=callgrind --toggle-collect=run_baseline --toggle-collect=run_dlqx \
 *       peek_cpu dlqx 20000
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "peek.h"
#include "peek_held.h"
#include "store.h"
#include "util.h"

#define QUEUE "bench.peek.dlq"
#define FETCHED_AT 1765000000000

struct delivery {
    amqp_envelope_t e;
    amqp_table_entry_t h[12];
    amqp_table_entry_t inner[3];
    amqp_field_value_t arr[3];
    char id[37], corr[37];
    char *body;
};

static void set_str(amqp_table_entry_t *e, const char *k, const char *v)
{
    e->key = amqp_cstring_bytes(k);
    e->value.kind = AMQP_FIELD_KIND_UTF8;
    e->value.value.bytes = amqp_cstring_bytes(v);
}

static void set_int(amqp_table_entry_t *e, const char *k, uint8_t kind, int64_t v)
{
    e->key = amqp_cstring_bytes(k);
    e->value.kind = kind;
    if (kind == AMQP_FIELD_KIND_I32)
        e->value.value.i32 = (int32_t)v;
    else
        e->value.value.i64 = v;
}

/* The odd one out (every 7th): more header kinds and a body that is not plain. */
static void make_odd(struct delivery *d, uint32_t i, size_t size, int *nh)
{
    int n = *nh;
    d->h[n].key = amqp_cstring_bytes("x-flag");
    d->h[n].value.kind = AMQP_FIELD_KIND_BOOLEAN;
    d->h[n++].value.value.boolean = (int)(i & 1);
    d->h[n].key = amqp_cstring_bytes("x-ratio");
    d->h[n].value.kind = AMQP_FIELD_KIND_F64;
    d->h[n++].value.value.f64 = 0.1 * i;
    d->h[n].key = amqp_cstring_bytes("x-raw");
    d->h[n].value.kind = AMQP_FIELD_KIND_BYTES;
    d->h[n++].value.value.bytes = (amqp_bytes_t){3, (void *)"\xff\x00q"};
    set_str(&d->inner[0], "count", "1");
    set_int(&d->inner[1], "time", AMQP_FIELD_KIND_TIMESTAMP, 0);
    d->inner[1].value.value.u64 = 1765000000u + i;
    set_str(&d->inner[2], "reason", "rejected \"quoted\" \\ tab\t");
    d->arr[0].kind = AMQP_FIELD_KIND_TABLE;
    d->arr[0].value.table = (amqp_table_t){3, d->inner};
    d->arr[1].kind = AMQP_FIELD_KIND_U8;
    d->arr[1].value.u8 = 200;
    d->arr[2].kind = AMQP_FIELD_KIND_VOID;
    d->h[n].key = amqp_cstring_bytes("x-death");
    d->h[n].value.kind = AMQP_FIELD_KIND_ARRAY;
    d->h[n++].value.value.array = (amqp_array_t){3, d->arr};
    d->h[n].key = amqp_cstring_bytes("x-d\xc3\xa9j\xe0");
    d->h[n].value.kind = AMQP_FIELD_KIND_I8;
    d->h[n++].value.value.i8 = -3;
    *nh = n;
    if (i % 14 == 3)
        d->body[size / 2] = (char)0xC3; /* not UTF-8: body_base64 */
    else
        memcpy(d->body + size / 3, "\"\\\n\x01\x7f\xc3\xa9\xe2\x82\xac", 11);
}

static void make(struct delivery *d, uint32_t i, size_t size, bool odd)
{
    memset(d, 0, sizeof *d);
    seq_uuid(d->id, 0x51a7u, i);
    seq_uuid(d->corr, 0xc022u, i / 10);
    d->body = xmalloc(size + 1);
    int w = snprintf(
        d->body, size + 1,
        "{\"orderId\":\"A-%07" PRIu32 "\",\"seq\":%" PRIu32 ",\"customer\":4711,\"pad\":\"", i, i);
    size_t k = (size_t)w < size ? (size_t)w : 0;
    memset(d->body + k, 'x', size - k);
    if (size >= k + 2) {
        d->body[size - 2] = '"';
        d->body[size - 1] = '}';
    }
    int n = 0;
    set_str(&d->h[n++], "x-acemq-id", d->id);
    set_str(&d->h[n++], "x-acemq-type", peek_types[i % 4]);
    set_int(&d->h[n++], "x-acemq-version", AMQP_FIELD_KIND_I32, 1);
    set_str(&d->h[n++], "x-acemq-correlation", d->corr);
    set_int(&d->h[n++], "x-acemq-attempt", AMQP_FIELD_KIND_I32, (int64_t)(i % 5) + 1);
    set_int(&d->h[n++], "x-acemq-first-seen", AMQP_FIELD_KIND_I64, 1764900000000 + (int64_t)i);
    set_str(&d->h[n++], "x-acemq-error", peek_errors[i % 3]);
    if (odd && size >= 64)
        make_odd(d, i, size, &n);
    amqp_basic_properties_t *p = &d->e.message.properties;
    p->_flags = AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG |
                AMQP_BASIC_MESSAGE_ID_FLAG | AMQP_BASIC_HEADERS_FLAG;
    p->content_type = amqp_cstring_bytes("application/json");
    p->delivery_mode = 2;
    p->message_id = amqp_cstring_bytes(d->id);
    p->headers.num_entries = n;
    p->headers.entries = d->h;
    d->e.message.body = (amqp_bytes_t){size, d->body};
    d->e.exchange = amqp_empty_bytes;
    d->e.routing_key = amqp_cstring_bytes(QUEUE);
    d->e.delivery_tag = i + 1;
    d->e.redelivered = (i % 11 == 0);
}

__attribute__((noinline)) static void run_baseline(struct delivery *d, uint32_t n,
                                                   struct held **out)
{
    for (uint32_t i = 0; i < n; i++)
        out[i] = held_copy(&d[i].e);
}

__attribute__((noinline)) static void run_dlqx(struct delivery *d, uint32_t n, struct store *s)
{
    struct error err;
    error_clear(&err);
    for (uint32_t i = 0; i < n; i++) {
        struct message m;
        peek_message_from_envelope(&d[i].e, QUEUE, FETCHED_AT, &m);
        if (store_append(s, &m, FETCHED_AT, &err) != ST_OK) {
            fprintf(stderr, "store_append: %s\n", err.msg);
            exit(1);
        }
        message_free(&m);
    }
}

static void dump(const struct store *s)
{
    struct error err;
    error_clear(&err);
    if (store_write(s, stdout, &err) != ST_OK) {
        fprintf(stderr, "store_write: %s\n", err.msg);
        exit(1);
    }
    char *t = xmalloc(STORE_TEXT_MAX);
    for (size_t i = 0; i < store_count(s); i++) {
        const struct store_entry *e = store_entry_at(s, i);
        const store_ref refs[] = {e->id,    e->type,  e->correlation, e->causation,
                                  e->queue, e->error, e->error_type};
        printf("%zu len %" PRIu32, i, e->length);
        for (size_t r = 0; r < sizeof refs / sizeof *refs; r++) {
            size_t n = store_text(s, refs[r], t);
            printf(" [%.*s]", (int)n, t);
        }
        printf(" %" PRId64 " %" PRId64 " %" PRId64 " %" PRId32 " %" PRIu32 " %u %u %s\n",
               e->first_seen_ms, e->fetched_at_ms, e->dead_at_ms, e->attempt, e->body_size,
               e->dialect, e->flags, store_reject_name(s, e->reject));
    }
    free(t);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: peek_cpu baseline|dlqx|dump COUNT [SIZE]\n");
        return 2;
    }
    uint32_t n = (uint32_t)strtoul(argv[2], NULL, 10);
    size_t size = argc > 3 ? strtoul(argv[3], NULL, 10) : 1024;
    bool is_dump = strcmp(argv[1], "dump") == 0;
    struct delivery *d = xcalloc(n ? n : 1, sizeof *d);
    for (uint32_t i = 0; i < n; i++)
        make(&d[i], i, size, is_dump && i % 7 == 3);
    if (strcmp(argv[1], "baseline") == 0) {
        struct held **h = xmalloc((n ? n : 1) * sizeof *h);
        run_baseline(d, n, h);
        held_free(h, n);
    } else {
        struct store *s;
        struct error err;
        error_clear(&err);
        /* dump: a small budget, so that records go to the spill file too */
        if (store_new(is_dump ? 256u << 10 : 0, NULL, &s, &err) != ST_OK) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        run_dlqx(d, n, s);
        if (is_dump)
            dump(s);
        store_free(s);
    }
    for (uint32_t i = 0; i < n; i++)
        free(d[i].body);
    free(d);
    return 0;
}
