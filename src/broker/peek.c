/*
 * peek: holding a queue's messages just long enough to copy them, then giving them all back.
 */
#include "peek.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hval_amqp.h"
#include "util.h"

#define READ_CHANNEL 2
#define PROGRESS_EVERY 256
#define STREAM_CREDIT 2000

const char *queue_kind_name(enum queue_kind k)
{
    switch (k) {
    case QK_CLASSIC:
        return "classic";
    case QK_QUORUM:
        return "quorum";
    case QK_STREAM:
        return "stream";
    case QK_UNKNOWN:
    default:
        return "unknown";
    }
}

bool queue_kind_parse(const char *s, enum queue_kind *out)
{
    static const enum queue_kind kinds[] = {QK_CLASSIC, QK_QUORUM, QK_STREAM};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        if (strcmp(s, queue_kind_name(kinds[i])) == 0) {
            *out = kinds[i];
            return true;
        }
    }
    return false;
}

const char *peek_end_name(enum peek_end e)
{
    switch (e) {
    case PEEK_COMPLETE:
        return "complete";
    case PEEK_LIMIT:
        return "limit";
    case PEEK_CANCELLED:
        return "cancelled";
    case PEEK_IDLE:
        return "idle";
    case PEEK_REFUSED_LIMIT:
        return "refused-delivery-limit";
    case PEEK_CONNECTION_LOST:
        return "connection-lost";
    case PEEK_CHANNEL_CLOSED:
    default:
        return "channel-closed";
    }
}

void peek_plan(const struct peek_opts *o, uint32_t ready, uint32_t consumers, struct strbuf *out)
{
    const struct peek_queue_info *q = &o->info;
    sb_addf(out, "%s queue, %u message%s ready, %u consumer%s.", queue_kind_name(q->kind), ready,
            ready == 1 ? "" : "s", consumers, consumers == 1 ? "" : "s");
    switch (q->kind) {
    case QK_STREAM:
        sb_adds(out, " A stream is read by offset: nothing in it changes.");
        break;
    case QK_QUORUM:
        sb_adds(out, " dlqx holds every message it reads and then gives them all back in order: "
                     "each message's x-delivery-count goes up by 1 and it is marked "
                     "redelivered.");
        if (q->delivery_limit >= 0) {
            sb_addf(out,
                    " The delivery limit is %lld: a message returned past it is %s by the "
                    "broker.",
                    (long long)q->delivery_limit,
                    q->has_dlx ? "dead-lettered"
                               : "DROPPED (the queue has no dead-letter exchange)");
            if (!o->force)
                sb_addf(out,
                        " dlqx reads one message at a time and stops at the first one already "
                        "delivered %lld times or more (--force reads on).",
                        (long long)(q->delivery_limit > 0 ? q->delivery_limit - 1 : 0));
        } else {
            sb_adds(out, " No delivery limit is known for it (give --delivery-limit if it has "
                         "one set by a policy the management API cannot show).");
        }
        break;
    case QK_CLASSIC:
        sb_adds(out, " dlqx holds every message it reads and then gives them all back in order "
                     "by closing its channel: each is marked redelivered, nothing else changes.");
        break;
    case QK_UNKNOWN:
    default:
        sb_adds(out, " Its type is not known (no management API): it is worked out from the "
                     "deliveries; every message read is given back in order, marked "
                     "redelivered.");
        break;
    }
    if (consumers)
        sb_addf(out,
                " %u other consumer%s attached: messages %s holds are not in the snapshot, "
                "and messages dlqx gives back may go to %s.",
                consumers, consumers == 1 ? " is" : "s are", consumers == 1 ? "it" : "they",
                consumers == 1 ? "it" : "them");
}

static int64_t header_int(const struct htable *h, const char *name, int64_t fallback)
{
    int64_t v;
    return hval_as_int64_lenient(htable_get(h, name), &v) ? v : fallback;
}

void peek_message_from_envelope(const amqp_envelope_t *e, const char *queue, int64_t now_ms,
                                struct message *m)
{
    message_init(m);
    m->queue = bytes_from_cstr(queue);
    m->exchange = bytes_dup(e->exchange.len ? e->exchange.bytes : "", e->exchange.len);
    m->routing_key = bytes_dup(e->routing_key.len ? e->routing_key.bytes : "", e->routing_key.len);
    m->redelivered = e->redelivered != 0;
    m->fetched_at_ms = now_ms;
    props_from_amqp(&e->message.properties, &m->props, &m->headers, &m->headers_present);
    m->body = bytes_dup(e->message.body.len ? e->message.body.bytes : "", e->message.body.len);
    int64_t off = header_int(m->headers, "x-stream-offset", -1);
    if (off >= 0) {
        m->has_stream_offset = true;
        m->stream_offset = (uint64_t)off;
    }
}

/* A quorum queue applies returns asynchronously: for a moment after messages are given back
 * (by dlqx or anyone), a passive declare counts fewer than are there. Poll until the count
 * reaches at_least (the messages known to be there) or two reads 100 ms apart agree, for at
 * most 5 s. Classic queues and streams answer exactly at once. */
static enum status settled_count(struct conn *c, const char *queue, enum queue_kind kind,
                                 uint32_t at_least, uint32_t *ready, uint32_t *consumers,
                                 enum conn_err *kind_out, struct error *err)
{
    enum status st = conn_queue_inspect(c, 1, queue, ready, consumers, kind_out, err);
    if (st != ST_OK || kind == QK_CLASSIC || kind == QK_STREAM)
        return st;
    int agree = 0;
    for (int i = 0; i < 50 && *ready < at_least; i++) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        uint32_t again = 0, cons = 0;
        if ((st = conn_queue_inspect(c, 1, queue, &again, &cons, kind_out, err)) != ST_OK)
            return st;
        agree = again == *ready ? agree + 1 : 0;
        *ready = again;
        *consumers = cons;
        if (at_least == UINT32_MAX && agree >= 2)
            break;
    }
    return ST_OK;
}

struct run {
    struct conn *c;
    const struct peek_opts *o;
    struct peek_report *r;
    uint64_t total;
    double started;
};

/* A frame that interrupted a consume: a channel or connection close, a cancel. */
static enum peek_end interrupted(struct run *run, enum conn_err *kind, struct error *err)
{
    amqp_connection_state_t st = conn_state(run->c);
    amqp_frame_t f;
    int rc = amqp_simple_wait_frame_noblock(st, &f, &(struct timeval){1, 0});
    if (rc != AMQP_STATUS_OK) {
        conn_check_status(run->c, rc, "reading the queue", kind, err);
        return PEEK_CONNECTION_LOST;
    }
    if (f.frame_type != AMQP_FRAME_METHOD)
        return PEEK_IDLE;
    amqp_rpc_reply_t reply;
    memset(&reply, 0, sizeof reply);
    reply.reply_type = AMQP_RESPONSE_SERVER_EXCEPTION;
    reply.reply = f.payload.method;
    switch (f.payload.method.id) {
    case AMQP_CHANNEL_CLOSE_METHOD:
        conn_check_reply(run->c, f.channel, reply, "reading the queue", kind, err);
        return PEEK_CHANNEL_CLOSED;
    case AMQP_CONNECTION_CLOSE_METHOD:
        conn_check_reply(run->c, f.channel, reply, "reading the queue", kind, err);
        return PEEK_CONNECTION_LOST;
    case AMQP_BASIC_CANCEL_METHOD:
        error_set(err, ST_EIO, "the broker cancelled dlqx's consumer (the queue was deleted?)");
        return PEEK_CHANNEL_CLOSED;
    default:
        return PEEK_IDLE; /* anything else is not ours to handle: go on */
    }
}

static bool progress(struct run *run)
{
    if (!run->o->progress)
        return true;
    return run->o->progress(run->o->ctx, run->r->fetched, run->total);
}

/* Hands one message to the sink and keeps the counts; false to stop. */
static bool deliver(struct run *run, struct message *m)
{
    struct peek_report *r = run->r;
    if (m->redelivered)
        r->redelivered_seen++;
    int64_t dc = header_int(m->headers, "x-delivery-count", -1);
    if (dc > r->max_delivery_count)
        r->max_delivery_count = dc;
    r->fetched++;
    bool go = run->o->sink(run->o->ctx, m);
    if (go && r->fetched % PROGRESS_EVERY == 0)
        go = progress(run);
    return go;
}

/* Classic and quorum queues without a limit to fear: one consumer holding everything. */
static enum peek_end read_holding(struct run *run, enum conn_err *kind, struct error *err)
{
    amqp_connection_state_t st = conn_state(run->c);
    const struct peek_opts *o = run->o;
    /* prefetch 0 is unlimited for classic queues but caps a quorum consumer at 2000; an
     * explicit window (at most 65535, a uint16) is honoured by both. */
    uint16_t prefetch = run->total <= 65535 ? (uint16_t)run->total : 0;
    if (run->r->kind == QK_QUORUM && prefetch == 0)
        prefetch = 65535;
    amqp_basic_qos(st, READ_CHANNEL, 0, prefetch, 0);
    if (conn_check_reply(run->c, READ_CHANNEL, amqp_get_rpc_reply(st), "setting the prefetch", kind,
                         err) != ST_OK)
        return conn_alive(run->c) ? PEEK_CHANNEL_CLOSED : PEEK_CONNECTION_LOST;
    amqp_basic_consume(st, READ_CHANNEL, amqp_cstring_bytes(o->queue), amqp_empty_bytes, 0, 0, 0,
                       amqp_empty_table);
    if (conn_check_reply(run->c, READ_CHANNEL, amqp_get_rpc_reply(st), "starting to read", kind,
                         err) != ST_OK)
        return conn_alive(run->c) ? PEEK_CHANNEL_CLOSED : PEEK_CONNECTION_LOST;
    /* Patient: with half a million messages held the broker has been seen to pause for
     * several seconds (bench/README.md). With other consumers on the queue a silence more
     * likely means they hold the rest: then wait less. */
    int idle = o->idle_timeout_ms > 0         ? o->idle_timeout_ms
               : run->r->consumers_before > 0 ? 5000
                                              : 30000;
    while (run->r->fetched < run->total) {
        amqp_envelope_t e;
        amqp_maybe_release_buffers(st);
        struct timeval tv = {idle / 1000, (idle % 1000) * 1000};
        amqp_rpc_reply_t rep = amqp_consume_message(st, &e, &tv, 0);
        if (rep.reply_type == AMQP_RESPONSE_NORMAL && e.channel != READ_CHANNEL) {
            amqp_destroy_envelope(&e); /* not this read's: a channel closed before */
            continue;
        }
        if (rep.reply_type == AMQP_RESPONSE_NORMAL) {
            struct message m;
            peek_message_from_envelope(&e, o->queue, clock_now_ms(), &m);
            amqp_destroy_envelope(&e);
            if (run->r->kind == QK_UNKNOWN)
                run->r->kind = m.has_stream_offset                         ? QK_STREAM
                               : htable_get(m.headers, "x-delivery-count") ? QK_QUORUM
                                                                           : QK_UNKNOWN;
            if (!deliver(run, &m))
                return PEEK_CANCELLED;
            continue;
        }
        if (rep.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
            rep.library_error == AMQP_STATUS_TIMEOUT)
            return PEEK_IDLE;
        if (rep.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
            rep.library_error == AMQP_STATUS_UNEXPECTED_STATE) {
            enum peek_end end = interrupted(run, kind, err);
            if (end != PEEK_IDLE)
                return end;
            continue;
        }
        conn_check_reply(run->c, READ_CHANNEL, rep, "reading the queue", kind, err);
        return conn_alive(run->c) ? PEEK_CHANNEL_CLOSED : PEEK_CONNECTION_LOST;
    }
    return run->total < run->r->ready_before ? PEEK_LIMIT : PEEK_COMPLETE;
}

enum peek_get peek_get_one(struct conn *c, amqp_channel_t ch, const char *queue, int64_t now_ms,
                           struct message *out, uint64_t *tag, enum conn_err *kind,
                           struct error *err)
{
    amqp_connection_state_t st = conn_state(c);
    amqp_maybe_release_buffers(st);
    amqp_rpc_reply_t rep = amqp_basic_get(st, ch, amqp_cstring_bytes(queue), 0);
    if (rep.reply_type != AMQP_RESPONSE_NORMAL) {
        conn_check_reply(c, ch, rep, "reading the queue", kind, err);
        return PG_FAILED;
    }
    if (rep.reply.id == AMQP_BASIC_GET_EMPTY_METHOD)
        return PG_EMPTY;
    /* The get-ok's fields live in the connection's buffers: copied before the body is read. */
    const amqp_basic_get_ok_t *ok = rep.reply.decoded;
    amqp_envelope_t e;
    memset(&e, 0, sizeof e);
    e.delivery_tag = ok->delivery_tag;
    e.redelivered = ok->redelivered;
    e.exchange = amqp_bytes_malloc_dup(ok->exchange);
    e.routing_key = amqp_bytes_malloc_dup(ok->routing_key);
    rep = amqp_read_message(st, ch, &e.message, 0);
    if (rep.reply_type == AMQP_RESPONSE_NORMAL) {
        peek_message_from_envelope(&e, queue, now_ms, out);
        *tag = e.delivery_tag;
        amqp_destroy_message(&e.message);
    } else {
        conn_check_reply(c, ch, rep, "reading a message", kind, err);
    }
    amqp_bytes_free(e.exchange);
    amqp_bytes_free(e.routing_key);
    return rep.reply_type == AMQP_RESPONSE_NORMAL ? PG_MESSAGE : PG_FAILED;
}

/* Quorum queues with a delivery limit: one basic.get at a time, so that dlqx can stop before
 * it takes a message its return would push over the limit. */
static enum peek_end read_one_by_one(struct run *run, enum conn_err *kind, struct error *err)
{
    const struct peek_opts *o = run->o;
    int64_t limit = o->info.delivery_limit;
    while (run->r->fetched < run->total) {
        struct message m;
        uint64_t tag;
        enum peek_get g =
            peek_get_one(run->c, READ_CHANNEL, o->queue, clock_now_ms(), &m, &tag, kind, err);
        if (g == PG_EMPTY)
            return PEEK_IDLE;
        if (g == PG_FAILED)
            return conn_alive(run->c) ? PEEK_CHANNEL_CLOSED : PEEK_CONNECTION_LOST;
        int64_t dc = header_int(m.headers, "x-delivery-count", 0);
        bool at_risk = limit >= 0 && dc >= (limit > 0 ? limit - 1 : 0);
        if (at_risk) {
            run->r->at_risk++;
            const struct bytes *mid = props_string(&m.props, PROP_message_id);
            snprintf(run->r->at_risk_id, sizeof run->r->at_risk_id, "%.*s",
                     mid ? (int)(mid->len > 100 ? 100 : mid->len) : 0,
                     mid && mid->data ? (const char *)mid->data : "");
            snprintf(run->r->detail, sizeof run->r->detail,
                     "stopped at message %llu: it has been delivered %lld times and the queue's "
                     "delivery limit is %lld — %s",
                     (unsigned long long)run->r->fetched + 1, (long long)dc, (long long)limit,
                     dc >= limit ? (o->info.has_dlx
                                        ? "it was already at the limit, so giving it back makes "
                                          "the broker dead-letter it (its copy is in the snapshot)"
                                        : "it was already at the limit, so giving it back makes "
                                          "the broker DROP it (the queue has no dead-letter "
                                          "exchange); its copy is in the snapshot")
                                 : "one more read after this one would push it over; a quorum "
                                   "queue may put the messages dlqx gives back behind messages "
                                   "given back before");
        }
        if (!deliver(run, &m))
            return PEEK_CANCELLED;
        if (at_risk)
            return PEEK_REFUSED_LIMIT;
    }
    return run->total < run->r->ready_before ? PEEK_LIMIT : PEEK_COMPLETE;
}

/* Streams: the one true non-destructive read. Acks only grant credit. */
static enum peek_end read_stream(struct run *run, enum conn_err *kind, struct error *err)
{
    amqp_connection_state_t st = conn_state(run->c);
    const struct peek_opts *o = run->o;
    amqp_basic_qos(st, READ_CHANNEL, 0, STREAM_CREDIT, 0);
    if (conn_check_reply(run->c, READ_CHANNEL, amqp_get_rpc_reply(st), "setting the prefetch", kind,
                         err) != ST_OK)
        return conn_alive(run->c) ? PEEK_CHANNEL_CLOSED : PEEK_CONNECTION_LOST;
    amqp_table_entry_t arg;
    arg.key = amqp_cstring_bytes("x-stream-offset");
    arg.value.kind = AMQP_FIELD_KIND_UTF8;
    arg.value.value.bytes = amqp_cstring_bytes("first");
    amqp_table_t args = {1, &arg};
    amqp_basic_consume(st, READ_CHANNEL, amqp_cstring_bytes(o->queue), amqp_empty_bytes, 0, 0, 0,
                       args);
    if (conn_check_reply(run->c, READ_CHANNEL, amqp_get_rpc_reply(st), "starting to read", kind,
                         err) != ST_OK)
        return conn_alive(run->c) ? PEEK_CHANNEL_CLOSED : PEEK_CONNECTION_LOST;
    int idle = o->idle_timeout_ms > 0 ? o->idle_timeout_ms : 2000;
    uint64_t unacked = 0, last_tag = 0;
    while (run->total == 0 || run->r->fetched < run->total) {
        amqp_envelope_t e;
        amqp_maybe_release_buffers(st);
        struct timeval tv = {idle / 1000, (idle % 1000) * 1000};
        amqp_rpc_reply_t rep = amqp_consume_message(st, &e, &tv, 0);
        if (rep.reply_type == AMQP_RESPONSE_NORMAL && e.channel != READ_CHANNEL) {
            amqp_destroy_envelope(&e); /* not this read's: a channel closed before */
            continue;
        }
        if (rep.reply_type == AMQP_RESPONSE_NORMAL) {
            struct message m;
            peek_message_from_envelope(&e, o->queue, clock_now_ms(), &m);
            last_tag = e.delivery_tag;
            amqp_destroy_envelope(&e);
            if (++unacked >= STREAM_CREDIT / 2) {
                amqp_basic_ack(st, READ_CHANNEL, last_tag, 1);
                unacked = 0;
            }
            if (!deliver(run, &m))
                return PEEK_CANCELLED;
            continue;
        }
        if (rep.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
            rep.library_error == AMQP_STATUS_TIMEOUT)
            return run->total ? PEEK_IDLE : PEEK_COMPLETE;
        if (rep.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
            rep.library_error == AMQP_STATUS_UNEXPECTED_STATE) {
            enum peek_end end = interrupted(run, kind, err);
            if (end != PEEK_IDLE)
                return end;
            continue;
        }
        conn_check_reply(run->c, READ_CHANNEL, rep, "reading the stream", kind, err);
        return conn_alive(run->c) ? PEEK_CHANNEL_CLOSED : PEEK_CONNECTION_LOST;
    }
    return run->total < run->r->ready_before ? PEEK_LIMIT : PEEK_COMPLETE;
}

static void describe(struct run *run, const struct error *err)
{
    struct peek_report *r = run->r;
    if (r->end == PEEK_REFUSED_LIMIT && r->detail[0])
        return;
    const char *why = err && err->msg[0] ? err->msg : "";
    switch (r->end) {
    case PEEK_COMPLETE:
        snprintf(r->detail, sizeof r->detail, "complete: %llu of %u messages",
                 (unsigned long long)r->fetched, r->ready_before);
        break;
    case PEEK_LIMIT:
        snprintf(r->detail, sizeof r->detail, "the first %llu of %u messages (--limit)",
                 (unsigned long long)r->fetched, r->ready_before);
        break;
    case PEEK_CANCELLED:
        snprintf(r->detail, sizeof r->detail,
                 "cancelled after %llu of %u messages; all were given back",
                 (unsigned long long)r->fetched, r->ready_before);
        break;
    case PEEK_IDLE:
        snprintf(r->detail, sizeof r->detail,
                 "incomplete: the queue delivered %llu of %u messages and then nothing for a "
                 "while (other consumers may hold the rest)",
                 (unsigned long long)r->fetched, r->ready_before);
        break;
    case PEEK_CONNECTION_LOST:
        snprintf(
            r->detail, sizeof r->detail,
            "incomplete: %.300s after %llu of %u messages; the broker gives back every message "
            "dlqx held, so none is lost",
            why, (unsigned long long)r->fetched, r->ready_before);
        break;
    case PEEK_CHANNEL_CLOSED:
        snprintf(
            r->detail, sizeof r->detail,
            "incomplete: %.300s after %llu of %u messages; the broker gives back every message "
            "dlqx held",
            why, (unsigned long long)r->fetched, r->ready_before);
        break;
    case PEEK_REFUSED_LIMIT:
    default:
        break;
    }
}

enum status peek_run(struct conn *c, const struct peek_opts *o, struct peek_report *r,
                     enum conn_err *kind, struct error *err)
{
    memset(r, 0, sizeof *r);
    r->max_delivery_count = -1;
    r->kind = o->info.kind;
    struct run run = {c, o, r, 0, clock_mono_s()};
    /* Before: nothing is known to be there, so wait for the count to stand still. */
    enum status st = settled_count(c, o->queue, r->kind, UINT32_MAX, &r->ready_before,
                                   &r->consumers_before, kind, err);
    if (st != ST_OK)
        return st;
    run.total = r->ready_before;
    if (o->limit && o->limit < run.total)
        run.total = o->limit;
    if (run.total == 0 && r->kind != QK_STREAM) {
        r->end = PEEK_COMPLETE;
        r->have_after = true;
        r->ready_after = r->ready_before;
        describe(&run, NULL);
        return ST_OK;
    }
    if ((st = conn_channel_open(c, READ_CHANNEL, kind, err)) != ST_OK)
        return st;
    struct error rerr;
    error_clear(&rerr);
    enum conn_err rkind = CONN_OK;
    if (r->kind == QK_STREAM)
        r->end = read_stream(&run, &rkind, &rerr);
    else if (r->kind == QK_QUORUM && o->info.delivery_limit >= 0 && !o->force)
        r->end = read_one_by_one(&run, &rkind, &rerr);
    else
        r->end = read_holding(&run, &rkind, &rerr);
    /* Closing the channel gives back every message held, in order. Deliveries still in
     * flight are returned with them. */
    if (r->end != PEEK_CONNECTION_LOST && r->end != PEEK_CHANNEL_CLOSED)
        conn_channel_close(c, READ_CHANNEL);
    if (conn_alive(c)) {
        uint32_t after = 0, cons = 0;
        struct error e2;
        enum conn_err k2;
        if (settled_count(c, o->queue, r->kind, r->ready_before, &after, &cons, &k2, &e2) ==
            ST_OK) {
            r->have_after = true;
            r->ready_after = after;
            if (after > r->ready_before && r->kind != QK_STREAM)
                r->arrived_during = after - r->ready_before;
        }
    }
    if (o->progress)
        o->progress(o->ctx, r->fetched, run.total);
    r->seconds = clock_mono_s() - run.started;
    describe(&run, &rerr);
    if (kind)
        *kind = rkind;
    return ST_OK;
}

json_t *peek_report_json(const char *queue, const struct peek_report *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "queue", json_string(queue));
    json_object_set_new(o, "type", json_string(queue_kind_name(r->kind)));
    json_object_set_new(o, "complete", json_boolean(r->end == PEEK_COMPLETE));
    json_object_set_new(o, "end", json_string(peek_end_name(r->end)));
    json_object_set_new(o, "detail", json_string(r->detail));
    json_object_set_new(o, "fetched", json_integer((json_int_t)r->fetched));
    json_object_set_new(o, "ready_before", json_integer(r->ready_before));
    json_object_set_new(o, "ready_after",
                        r->have_after ? json_integer(r->ready_after) : json_null());
    json_object_set_new(o, "consumers_before", json_integer(r->consumers_before));
    json_object_set_new(o, "arrived_during", json_integer((json_int_t)r->arrived_during));
    json_object_set_new(o, "already_redelivered", json_integer((json_int_t)r->redelivered_seen));
    json_object_set_new(o, "max_delivery_count",
                        r->max_delivery_count >= 0 ? json_integer(r->max_delivery_count)
                                                   : json_null());
    json_object_set_new(o, "at_risk", json_integer((json_int_t)r->at_risk));
    json_object_set_new(o, "seconds", json_real(r->seconds));
    return o;
}
