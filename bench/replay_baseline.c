/* replay_baseline: replay_bench's pass (a), the libraries' way (see replay_baseline.h). */
#include "replay_baseline.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "benchutil.h"
#include "util.h"

#define BASE_READ 2 /* the baseline's consumer (the engine reads on 2 as well) */
#define BASE_PUB 3  /* the baseline's confirm-mode channel (the engine publishes on 3) */

bool key_is(amqp_bytes_t k, const char *s)
{
    size_t n = strlen(s);
    return k.len == n && memcmp(k.bytes, s, n) == 0;
}

static bool key_starts(amqp_bytes_t k, const char *s)
{
    size_t n = strlen(s);
    return k.len >= n && memcmp(k.bytes, s, n) == 0;
}

int64_t field_int(const amqp_field_value_t *v)
{
    switch (v->kind) {
    case AMQP_FIELD_KIND_I8:
        return v->value.i8;
    case AMQP_FIELD_KIND_U8:
        return v->value.u8;
    case AMQP_FIELD_KIND_I16:
        return v->value.i16;
    case AMQP_FIELD_KIND_U16:
        return v->value.u16;
    case AMQP_FIELD_KIND_I32:
        return v->value.i32;
    case AMQP_FIELD_KIND_U32:
        return v->value.u32;
    case AMQP_FIELD_KIND_I64:
        return v->value.i64;
    case AMQP_FIELD_KIND_U64:
        return (int64_t)v->value.u64;
    default:
        return 0;
    }
}

/* The copy AceMQ's replay sends, built directly on rabbitmq-c's tables: the broker-owned
 * headers and x-acemq-error dropped, attempt 1, the replay stamps set. entries must hold
 * the dead letter's headers + 3. */
static void baseline_headers(const amqp_table_t *in, const char *dlq, const char *at,
                             amqp_table_entry_t *entries, amqp_table_t *out)
{
    int n = 0;
    int64_t count = 0;
    for (int i = 0; i < in->num_entries; i++) {
        const amqp_table_entry_t *e = &in->entries[i];
        if (key_is(e->key, "x-death") || key_starts(e->key, "x-first-death-") ||
            key_starts(e->key, "x-last-death-") || key_is(e->key, "x-delivery-count") ||
            key_is(e->key, "x-stream-offset") || key_is(e->key, "x-acemq-error") ||
            key_is(e->key, "acemq-replayed-from") || key_is(e->key, "acemq-replayed-at"))
            continue;
        if (key_is(e->key, "acemq-replay-count")) {
            count = field_int(&e->value);
            continue;
        }
        entries[n] = *e;
        if (key_is(e->key, "x-acemq-attempt")) {
            entries[n].value.kind = AMQP_FIELD_KIND_I32;
            entries[n].value.value.i32 = 1;
        }
        n++;
    }
    entries[n].key = amqp_cstring_bytes("acemq-replayed-from");
    entries[n].value.kind = AMQP_FIELD_KIND_UTF8;
    entries[n].value.value.bytes = amqp_cstring_bytes(dlq);
    n++;
    entries[n].key = amqp_cstring_bytes("acemq-replayed-at");
    entries[n].value.kind = AMQP_FIELD_KIND_UTF8;
    entries[n].value.value.bytes = amqp_cstring_bytes(at);
    n++;
    entries[n].key = amqp_cstring_bytes("acemq-replay-count");
    entries[n].value.kind = AMQP_FIELD_KIND_I32;
    entries[n].value.value.i32 = (int32_t)(count + 1);
    n++;
    out->num_entries = n;
    out->entries = entries;
}

/* Deliveries that arrived while a confirm was awaited, in order. */
struct held {
    uint64_t tag;
    amqp_message_t msg;
};

struct fifo {
    struct held *v;
    size_t cap, head, n;
};

static void fifo_push(struct fifo *f, uint64_t tag, const amqp_message_t *m)
{
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 64;
        struct held *v = xcalloc(cap, sizeof *v);
        for (size_t i = 0; i < f->n; i++)
            v[i] = f->v[(f->head + i) % f->cap];
        free(f->v);
        f->v = v;
        f->cap = cap;
        f->head = 0;
    }
    f->v[(f->head + f->n) % f->cap] = (struct held){tag, *m};
    f->n++;
}

static struct held fifo_pop(struct fifo *f)
{
    struct held h = f->v[f->head];
    f->head = (f->head + 1) % f->cap;
    f->n--;
    return h;
}

/* One frame for the baseline: a delivery is read whole and queued; a confirm returns its
 * tag (and whether it covers every tag below). Anything else is fatal or ignored. */
static bool baseline_frame(amqp_connection_state_t st, struct fifo *q, uint64_t *ack_tag,
                           bool *ack_multiple)
{
    amqp_frame_t f;
    struct timeval tv = {60, 0};
    if (!amqp_frames_enqueued(st))
        amqp_maybe_release_buffers(st);
    int rc = amqp_simple_wait_frame_noblock(st, &f, &tv);
    if (rc == AMQP_STATUS_TIMEOUT)
        die("baseline: nothing from the broker for 60 s");
    if (rc != AMQP_STATUS_OK)
        die("baseline: lost the connection: %s", amqp_error_string2(rc));
    if (f.frame_type != AMQP_FRAME_METHOD)
        return false;
    switch (f.payload.method.id) {
    case AMQP_BASIC_DELIVER_METHOD: {
        uint64_t tag = ((const amqp_basic_deliver_t *)f.payload.method.decoded)->delivery_tag;
        amqp_message_t m;
        amqp_rpc_reply_t r = amqp_read_message(st, f.channel, &m, 0);
        if (r.reply_type != AMQP_RESPONSE_NORMAL)
            die("baseline: reading a delivery failed");
        fifo_push(q, tag, &m);
        return false;
    }
    case AMQP_BASIC_ACK_METHOD: {
        const amqp_basic_ack_t *a = f.payload.method.decoded;
        *ack_tag = a->delivery_tag;
        *ack_multiple = a->multiple;
        return true;
    }
    case AMQP_BASIC_NACK_METHOD:
        die("baseline: the broker nacked a copy");
    case AMQP_BASIC_RETURN_METHOD:
        die("baseline: the broker returned a copy (unroutable)");
    case AMQP_CHANNEL_CLOSE_METHOD:
    case AMQP_CONNECTION_CLOSE_METHOD:
        die("baseline: the broker closed the %s",
            f.payload.method.id == AMQP_CHANNEL_CLOSE_METHOD ? "channel" : "connection");
    default:
        return false;
    }
}

static void rfc3339_now(char out[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Replays n messages from dlq to src; returns the seconds from basic.consume to the close of
 * the reading channel (which the broker answers after every ack on it). */
__attribute__((noinline)) double baseline_pass(struct conn *c, const char *dlq, const char *src,
                                               uint32_t n, uint16_t prefetch)
{
    amqp_connection_state_t st = conn_state(c);
    enum conn_err kind;
    struct error err;
    error_clear(&err);
    if (conn_channel_open(c, BASE_READ, &kind, &err) != ST_OK ||
        conn_channel_open(c, BASE_PUB, &kind, &err) != ST_OK)
        die("%s", err.msg);
    amqp_confirm_select(st, BASE_PUB);
    check_rpc(st, "confirm.select");
    amqp_basic_qos(st, BASE_READ, 0, prefetch, 0);
    check_rpc(st, "basic.qos");
    char at[32];
    rfc3339_now(at);
    struct fifo q = {NULL, 0, 0, 0};
    amqp_table_entry_t *entries = NULL;
    size_t cap_entries = 0;
    double t0 = clock_mono_s();
    amqp_basic_consume(st, BASE_READ, amqp_cstring_bytes(dlq), amqp_empty_bytes, 0, 0, 0,
                       amqp_empty_table);
    check_rpc(st, "basic.consume");
    uint64_t seq = 0, tag;
    bool multiple;
    for (uint32_t i = 0; i < n; i++) {
        while (q.n == 0)
            if (baseline_frame(st, &q, &tag, &multiple))
                die("baseline: a confirm for nothing (tag %" PRIu64 ")", tag);
        struct held h = fifo_pop(&q);
        amqp_basic_properties_t p = h.msg.properties;
        amqp_table_t in = (p._flags & AMQP_BASIC_HEADERS_FLAG) ? p.headers : amqp_empty_table;
        xgrow((void **)&entries, &cap_entries, (size_t)in.num_entries + 3, sizeof *entries);
        baseline_headers(&in, dlq, at, entries, &p.headers);
        p._flags |= AMQP_BASIC_HEADERS_FLAG;
        int rc = amqp_basic_publish(st, BASE_PUB, amqp_empty_bytes, amqp_cstring_bytes(src), 1, 0,
                                    &p, h.msg.body);
        if (rc != AMQP_STATUS_OK)
            die("baseline: publishing failed: %s", amqp_error_string2(rc));
        seq++;
        /* Wait for this publish's confirm, and only then remove the dead letter. */
        for (;;) {
            if (baseline_frame(st, &q, &tag, &multiple) && (tag == seq || (multiple && tag >= seq)))
                break;
        }
        amqp_basic_ack(st, BASE_READ, h.tag, 0);
        amqp_destroy_message(&h.msg);
    }
    conn_channel_close(c, BASE_READ);
    double dt = clock_mono_s() - t0;
    conn_channel_close(c, BASE_PUB);
    while (q.n) {
        struct held h = fifo_pop(&q);
        amqp_destroy_message(&h.msg);
    }
    free(q.v);
    free(entries);
    return dt;
}
