/*
 * peek: holding a queue's messages just long enough to copy them, then giving them all back.
 */
#include "peek.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "delivery.h"
#include "hval_amqp.h"
#include "util.h"

#define READ_CHANNEL 2
#define PROGRESS_EVERY 256
#define STREAM_CREDIT 2000

static int64_t header_int(const struct htable *h, const char *name, int64_t fallback)
{
    int64_t v;
    return hval_as_int64_lenient(htable_get(h, name), &v) ? v : fallback;
}

/* What a message read from a queue has besides what the broker sent: the queue, when it was
 * taken, and a stream's offset. */
static void message_taken(struct message *m, const char *queue, int64_t now_ms)
{
    m->queue = bytes_from_cstr(queue);
    m->fetched_at_ms = now_ms;
    int64_t off = header_int(m->headers, "x-stream-offset", -1);
    if (off >= 0) {
        m->has_stream_offset = true;
        m->stream_offset = (uint64_t)off;
    }
}

void peek_message_from_envelope(const amqp_envelope_t *e, const char *queue, int64_t now_ms,
                                struct message *m)
{
    memset(m, 0, sizeof *m); /* message_init but for the table: props_from_amqp makes it */
    m->exchange = bytes_dup(e->exchange.len ? e->exchange.bytes : "", e->exchange.len);
    m->routing_key = bytes_dup(e->routing_key.len ? e->routing_key.bytes : "", e->routing_key.len);
    m->redelivered = e->redelivered != 0;
    props_from_amqp(&e->message.properties, &m->props, &m->headers, &m->headers_present);
    m->body = bytes_dup(e->message.body.len ? e->message.body.bytes : "", e->message.body.len);
    message_taken(m, queue, now_ms);
}

/* The stepped peek: its phases, in order. */
enum phase {
    PH_COUNT_BEFORE, /* the depth, until it stands still (quorum) */
    PH_OPEN,         /* the reading channel, its prefetch and consumer */
    PH_READ,
    PH_GIVE_BACK, /* closing the channel returns every held message, in order */
    PH_COUNT_AFTER,
    PH_DONE,
};

enum reader { RD_HOLDING, RD_ONE_BY_ONE, RD_STREAM };

/* A quorum queue applies returns asynchronously: for a moment after messages are given back
 * (by dlqx or anyone), a passive declare counts fewer than are there. The count is polled
 * until it reaches at_least (the messages known to be there) or two reads 100 ms apart agree,
 * for at most 5 s. Classic queues and streams answer exactly at once. */
struct settle {
    uint32_t at_least;
    uint32_t ready, consumers;
    int polls, agree;
    double next; /* monotonic seconds of the next poll */
};

struct peek {
    struct conn *c;
    struct peek_opts o; /* o.queue and o.ctx are borrowed */
    struct peek_report r;
    uint64_t total;
    double started;
    enum phase phase;
    enum reader how;
    struct settle settle;
    int idle_ms;
    double last_frame;                 /* monotonic seconds of the last frame read */
    uint64_t stream_unacked, last_tag; /* streams: credit to grant */
    bool cancel;
    bool channel_open;
    bool closing;        /* the channel's close is sent, its answer awaited */
    bool after_ok;       /* the depth after is being counted */
    enum conn_err rkind; /* how the read ended (the connection's kind of failure) */
    struct error rerr;
    enum status failed; /* not ST_OK: the peek could not start (queue gone, channel refused) */
    enum conn_err fkind;
    struct error ferr;
    /* Failover (peek_opts.conn): */
    unsigned max_attempts; /* reads in all (1: no failover) */
    int settle_max;        /* polls of a settling count (50: 5 s; a read again waits longer) */
    int64_t attempt_dc;    /* this read: the highest delivery count seen (-1: none read) */
    int64_t dc_next;       /* the highest count a message read so far shows to the next read */
    bool now_fixed;        /* DLQX_NOW, read once at the start (not a getenv a message) */
    int64_t now_fixed_ms;
    struct delivery dv; /* a delivery part-read (delivery.h) */
};

static enum status settle_poll(struct peek *p, enum conn_err *kind, struct error *err)
{
    uint32_t again = 0, cons = 0;
    enum status st = conn_queue_inspect(p->c, 1, p->o.queue, &again, &cons, kind, err);
    struct settle *s = &p->settle;
    if (st != ST_OK && p->r.attempts > 1 && conn_alive(p->c) && *kind != CONN_LOST &&
        s->polls < p->settle_max) {
        /* Read again after a node was lost: the queue may be between leaders for a moment
         * (the broker closes the channel), so the count is asked again on a new channel. */
        conn_channel_open(p->c, 1, NULL, NULL);
        s->polls++;
        s->next = clock_mono_s() + 0.1;
        return ST_OK;
    }
    if (st != ST_OK)
        return st;
    s->agree = s->polls && again == s->ready ? s->agree + 1 : 0;
    s->ready = again;
    s->consumers = cons;
    s->polls++;
    s->next = clock_mono_s() + 0.1;
    return ST_OK;
}

static enum status settle_begin(struct peek *p, uint32_t at_least, enum conn_err *kind,
                                struct error *err)
{
    memset(&p->settle, 0, sizeof p->settle);
    p->settle.at_least = at_least;
    return settle_poll(p, kind, err);
}

/* Whether the count has settled; waits for the next poll no later than deadline. */
static bool settle_more(struct peek *p, double deadline, enum status *st, enum conn_err *kind,
                        struct error *err)
{
    struct settle *s = &p->settle;
    *st = ST_OK;
    if (p->r.kind == QK_CLASSIC || p->r.kind == QK_STREAM)
        return false;
    /* 0 messages and 0 consumers from a quorum queue is also what it says when its leader
     * does not answer (conn_queue_inspect): that agrees with itself only at the end. */
    bool blank = p->r.kind == QK_QUORUM && s->ready == 0 && s->consumers == 0;
    if (s->ready >= s->at_least || s->polls > p->settle_max ||
        (s->at_least == UINT32_MAX && s->agree >= 2 && !blank))
        return false;
    double now = clock_mono_s();
    double until = s->next < deadline ? s->next : deadline;
    if (until > now) {
        double d = until - now;
        struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
        nanosleep(&ts, NULL);
    }
    if (clock_mono_s() < s->next)
        return true;
    *st = settle_poll(p, kind, err);
    return *st == ST_OK;
}

static bool progress(struct peek *p)
{
    if (!p->o.progress)
        return true;
    return p->o.progress(p->o.ctx, p->r.fetched, p->total);
}

/* When a message is taken: clock_now_ms, with DLQX_NOW read at the start. */
static int64_t now_ms(const struct peek *p)
{
    return p->now_fixed ? p->now_fixed_ms : clock_real_ms();
}

/* Hands one message to the sink and keeps the counts; false to stop. */
static bool deliver(struct peek *p, struct message *m)
{
    struct peek_report *r = &p->r;
    if (m->redelivered)
        r->redelivered_seen++;
    /* x-delivery-count and x-acquired-count in one pass (the first of each, as htable_get) */
    const struct htable *h = m->headers;
    const struct hval *dcv = NULL, *acqv = NULL;
    for (size_t i = 0; i < h->n; i++) {
        const struct bytes *k = &h->e[i].key;
        if (k->len != 16)
            continue;
        if (!dcv && memcmp(k->data, "x-delivery-count", 16) == 0)
            dcv = &h->e[i].val;
        else if (!acqv && memcmp(k->data, "x-acquired-count", 16) == 0)
            acqv = &h->e[i].val;
    }
    int64_t dc, acq;
    if (!hval_as_int64_lenient(dcv, &dc))
        dc = -1;
    if (dc > r->max_delivery_count)
        r->max_delivery_count = dc;
    /* Deliveries as the limit counts them (4.3: acquisitions apart; absent: none yet). */
    if (!hval_as_int64_lenient(acqv, &acq))
        acq = 0;
    int64_t counted = dc > acq ? dc : acq > 0 ? acq : 0;
    if (counted > p->attempt_dc)
        p->attempt_dc = counted;
    r->fetched++;
    bool go = p->o.sink(p->o.ctx, m);
    if (go && r->fetched % PROGRESS_EVERY == 0)
        go = progress(p);
    return go;
}

static enum peek_end lost_or_closed(struct peek *p)
{
    return conn_alive(p->c) ? PEEK_CHANNEL_CLOSED : PEEK_CONNECTION_LOST;
}

/* Opens the reading: the prefetch and, but for one-by-one reads, the consumer. PEEK_COMPLETE
 * when it is open (the read goes on), else how it ended. */
static enum peek_end read_open(struct peek *p)
{
    amqp_connection_state_t st = conn_state(p->c);
    if (p->how == RD_ONE_BY_ONE)
        return PEEK_COMPLETE;
    uint16_t prefetch = STREAM_CREDIT;
    amqp_table_t args = amqp_empty_table;
    amqp_table_entry_t arg;
    if (p->how == RD_STREAM) {
        arg.key = amqp_cstring_bytes("x-stream-offset");
        arg.value.kind = AMQP_FIELD_KIND_UTF8;
        arg.value.value.bytes = amqp_cstring_bytes("first");
        args = (amqp_table_t){1, &arg};
        p->idle_ms = p->o.idle_timeout_ms > 0 ? p->o.idle_timeout_ms : 2000;
    } else {
        /* prefetch 0 is unlimited for classic queues but caps a quorum consumer at 2000; an
         * explicit window (at most 65535, a uint16) is honoured by both. */
        prefetch = p->total <= 65535 ? (uint16_t)p->total : 0;
        if (p->r.kind == QK_QUORUM && prefetch == 0)
            prefetch = 65535;
        /* Patient: with half a million messages held the broker has been seen to pause for
         * several seconds (bench/README.md). With other consumers on the queue a silence more
         * likely means they hold the rest: then wait less. */
        p->idle_ms = p->o.idle_timeout_ms > 0    ? p->o.idle_timeout_ms
                     : p->r.consumers_before > 0 ? 5000
                                                 : 30000;
    }
    amqp_basic_qos(st, READ_CHANNEL, 0, prefetch, 0);
    if (conn_check_reply(p->c, READ_CHANNEL, amqp_get_rpc_reply(st), "setting the prefetch",
                         &p->rkind, &p->rerr) != ST_OK)
        return lost_or_closed(p);
    amqp_basic_consume(st, READ_CHANNEL, amqp_cstring_bytes(p->o.queue), amqp_empty_bytes, 0, 0, 0,
                       args);
    if (conn_check_reply(p->c, READ_CHANNEL, amqp_get_rpc_reply(st), "starting to read", &p->rkind,
                         &p->rerr) != ST_OK)
        return lost_or_closed(p);
    p->last_frame = clock_mono_s();
    return PEEK_COMPLETE;
}

static enum peek_end read_end(const struct peek *p)
{
    return p->total < p->r.ready_before ? PEEK_LIMIT : PEEK_COMPLETE;
}

/* Classic and quorum queues without a limit to fear (one consumer holding everything), and
 * streams (read by offset; acks only grant credit): deliveries until the deadline. Returns
 * true while the read goes on, else sets *end. */
static bool read_consumed(struct peek *p, double deadline, enum peek_end *end)
{
    amqp_connection_state_t st = conn_state(p->c);
    bool stream = p->how == RD_STREAM;
    for (bool first = true;; first = false) {
        if (p->total && p->r.fetched >= p->total) {
            *end = read_end(p);
            return false;
        }
        double now = clock_mono_s();
        if (!first && now >= deadline)
            return true;
        /* The wait ends at the deadline or when the queue has been silent too long. */
        double idle_at = p->last_frame + p->idle_ms / 1000.0;
        double wait = (deadline < idle_at ? deadline : idle_at) - now;
        if (wait < 0)
            wait = 0;
        long us = (long)(wait * 1e6);
        struct timeval tv = {us / 1000000, us % 1000000};
        struct message m;
        uint64_t tag = 0;
        enum conn_frame why = CONN_FRAME_OTHER;
        enum delivery_got got =
            delivery_read(p->c, READ_CHANNEL, &p->dv, &tv, &m, &tag, &why, &p->rkind, &p->rerr);
        if (got == DG_TIMEOUT) {
            if (clock_mono_s() < idle_at)
                continue; /* the deadline: the next loop returns */
            *end = stream ? (p->total ? PEEK_IDLE : PEEK_COMPLETE) : PEEK_IDLE;
            return false;
        }
        p->last_frame = clock_mono_s();
        if (got == DG_SKIPPED)
            continue;
        if (got == DG_ENDED) {
            /* Lost: the connection went, or the broker broke the protocol (not to be used). */
            *end = why == CONN_FRAME_LOST ? PEEK_CONNECTION_LOST : PEEK_CHANNEL_CLOSED;
            return false;
        }
        message_taken(&m, p->o.queue, now_ms(p));
        p->last_tag = tag;
        if (stream && ++p->stream_unacked >= STREAM_CREDIT / 2) {
            amqp_basic_ack(st, READ_CHANNEL, p->last_tag, 1);
            p->stream_unacked = 0;
        }
        if (!stream && p->r.kind == QK_UNKNOWN)
            p->r.kind = m.has_stream_offset                         ? QK_STREAM
                        : htable_get(m.headers, "x-delivery-count") ? QK_QUORUM
                                                                    : QK_UNKNOWN;
        if (!deliver(p, &m)) {
            *end = PEEK_CANCELLED;
            return false;
        }
    }
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
 * it takes a message its return would push over the limit. Returns true while the read goes
 * on, else sets *end. */
static bool read_one_by_one(struct peek *p, double deadline, enum peek_end *end)
{
    const struct peek_opts *o = &p->o;
    struct peek_report *r = &p->r;
    int64_t limit = r->limit.limit;
    for (bool first = true; r->fetched < p->total; first = false) {
        if (!first && clock_mono_s() >= deadline)
            return true;
        struct message m;
        uint64_t tag;
        enum peek_get g =
            peek_get_one(p->c, READ_CHANNEL, o->queue, now_ms(p), &m, &tag, &p->rkind, &p->rerr);
        if (g == PG_EMPTY) {
            *end = PEEK_IDLE;
            return false;
        }
        if (g == PG_FAILED) {
            *end = lost_or_closed(p);
            return false;
        }
        /* 4.3 counts acquisitions apart (x-acquired-count): the higher of the two counts,
         * so that no version's way of counting can take a message over. */
        int64_t dc = header_int(m.headers, "x-delivery-count", 0);
        int64_t acquired = header_int(m.headers, "x-acquired-count", 0);
        if (acquired > dc)
            dc = acquired;
        bool at_risk = limit >= 0 && dc >= (limit > 0 ? limit - 1 : 0);
        if (at_risk) {
            r->at_risk++;
            const struct bytes *mid = props_string(&m.props, PROP_message_id);
            snprintf(r->at_risk_id, sizeof r->at_risk_id, "%.*s",
                     mid ? (int)(mid->len > 100 ? 100 : mid->len) : 0,
                     mid && mid->data ? (const char *)mid->data : "");
            snprintf(
                r->detail, sizeof r->detail,
                "stopped at message %llu: it has been delivered %lld times and the queue's "
                "delivery limit is %lld%s — %s",
                (unsigned long long)r->fetched + 1, (long long)dc, (long long)limit,
                r->limit.origin == LIMIT_DEFAULT ? " (the broker's default: RabbitMQ 4.x)" : "",
                dc >= limit
                    ? (o->info.has_dlx ? "it was already at the limit, so giving it back makes "
                                         "the broker dead-letter it (its copy is in the snapshot)"
                                       : "it was already at the limit, so giving it back makes "
                                         "the broker DROP it (the queue has no dead-letter "
                                         "exchange); its copy is in the snapshot")
                    : "one more read after this one would push it over; a quorum "
                      "queue may put the messages dlqx gives back behind messages "
                      "given back before");
        }
        if (!deliver(p, &m)) {
            *end = PEEK_CANCELLED;
            return false;
        }
        if (at_risk) {
            *end = PEEK_REFUSED_LIMIT;
            return false;
        }
    }
    *end = read_end(p);
    return false;
}

enum status peek_start(struct conn *c, const struct peek_opts *o, struct peek **out,
                       enum conn_err *kind, struct error *err)
{
    *out = NULL;
    struct peek *p = xcalloc(1, sizeof *p);
    delivery_init(&p->dv);
    p->c = c;
    p->o = *o;
    p->r.max_delivery_count = -1;
    p->r.kind = o->info.kind;
    p->r.attempts = 1;
    snprintf(p->r.last_node, sizeof p->r.last_node, "%s", conn_display_url(c));
    p->max_attempts = !o->conn || !o->restart ? 1
                      : o->attempts           ? o->attempts
                                              : PEEK_DEFAULT_ATTEMPTS;
    p->settle_max = 50;
    p->attempt_dc = -1;
    p->dc_next = -1;
    p->started = clock_mono_s();
    p->now_fixed = clock_fixed_ms(&p->now_fixed_ms);
    const struct broker_version *v = conn_broker_version(c);
    snprintf(p->r.broker_version, sizeof p->r.broker_version, "%s", v->text);
    p->r.limit = peek_delivery_limit(&o->info, v);
    p->how = p->r.kind == QK_STREAM                                         ? RD_STREAM
             : p->r.kind == QK_QUORUM && p->r.limit.limit >= 0 && !o->force ? RD_ONE_BY_ONE
                                                                            : RD_HOLDING;
    error_clear(&p->rerr);
    error_clear(&p->ferr);
    /* Before: nothing is known to be there, so the count must stand still. */
    enum status st = settle_begin(p, UINT32_MAX, kind, err);
    if (st != ST_OK) {
        delivery_clear(&p->dv);
        free(p);
        return st;
    }
    *out = p;
    return ST_OK;
}

void peek_cancel(struct peek *p)
{
    p->cancel = true;
}

void peek_counts(const struct peek *p, uint64_t *done, uint64_t *total)
{
    *done = p->r.fetched;
    *total = p->phase == PH_COUNT_BEFORE ? 0 : p->total;
}

const char *peek_doing(const struct peek *p)
{
    static const char *const doing[] = {"counting",    "reading",     "reading",
                                        "giving back", "giving back", "done"};
    return doing[p->phase];
}

/* The depth before is known: the read begins (or there is nothing to read). */
static void begin_read(struct peek *p)
{
    struct peek_report *r = &p->r;
    if (r->attempts == 1) { /* a read again keeps the first one's: the snapshot is of then */
        r->ready_before = p->settle.ready;
        r->consumers_before = p->settle.consumers;
        r->count_unsure = p->r.kind == QK_QUORUM && !r->ready_before && !r->consumers_before;
        p->total = r->ready_before;
        if (p->o.limit && p->o.limit < p->total)
            p->total = p->o.limit;
    }
    if (p->cancel) {
        r->end = PEEK_CANCELLED;
        p->phase = PH_GIVE_BACK;
        return;
    }
    if (p->total == 0 && r->kind != QK_STREAM) {
        r->end = PEEK_COMPLETE;
        r->have_after = true;
        r->ready_after = r->ready_before;
        peek_report_describe(&p->r, NULL);
        p->phase = PH_DONE;
        return;
    }
    if ((p->failed = conn_channel_open(p->c, READ_CHANNEL, &p->fkind, &p->ferr)) != ST_OK) {
        p->phase = PH_DONE;
        return;
    }
    p->phase = PH_OPEN;
}

/* Closing the channel gives back every message held, in order; deliveries still in flight
 * are returned with them. With many held the broker takes a while to answer (most of a second
 * for 100,000), so the close is sent at once and its answer read in steps: what comes before it
 * on the channel is a delivery the close returns, and is dropped. Then the depth after, counted
 * as the one before. True while the answer is awaited. */
static bool give_back(struct peek *p, double deadline)
{
    struct peek_report *r = &p->r;
    amqp_connection_state_t st = conn_state(p->c);
    if (p->channel_open && r->end != PEEK_CONNECTION_LOST && r->end != PEEK_CHANNEL_CLOSED &&
        conn_alive(p->c)) {
        if (!p->closing) {
            amqp_channel_close_t req = {AMQP_REPLY_SUCCESS, amqp_cstring_bytes("Normal shutdown"),
                                        0, 0};
            p->closing = true;
            if (amqp_send_method(st, READ_CHANNEL, AMQP_CHANNEL_CLOSE_METHOD, &req) < 0)
                p->channel_open = false;
        }
        for (bool first = true; p->channel_open; first = false) {
            double left = deadline - clock_mono_s();
            if (!first && left <= 0)
                return true;
            long us = left > 0 ? (long)(left * 1e6) : 0;
            amqp_frame_t f;
            int rc = amqp_simple_wait_frame_noblock(st, &f,
                                                    &(struct timeval){us / 1000000, us % 1000000});
            if (rc == AMQP_STATUS_TIMEOUT)
                continue;
            if (rc != AMQP_STATUS_OK) {
                struct error e;
                enum conn_err k;
                conn_check_status(p->c, rc, "giving the messages back", &k, &e);
                break; /* the connection went: the broker gives back what it held */
            }
            if (f.frame_type != AMQP_FRAME_METHOD || f.channel != READ_CHANNEL)
                continue;
            if (f.payload.method.id == AMQP_CHANNEL_CLOSE_METHOD) {
                /* The broker closed it at the same moment: it is closed either way. */
                amqp_channel_close_ok_t ok = {0};
                amqp_send_method(st, READ_CHANNEL, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
                break;
            }
            if (f.payload.method.id == AMQP_CHANNEL_CLOSE_OK_METHOD)
                break;
        }
        amqp_maybe_release_buffers(st);
    }
    p->channel_open = false;
    struct error e2;
    enum conn_err k2;
    p->after_ok = conn_alive(p->c) && settle_begin(p, r->ready_before, &k2, &e2) == ST_OK;
    p->phase = PH_COUNT_AFTER;
    return false;
}

/* Whether the connection is gone or hung — not the broker closing the channel, nor the queue
 * refusing — which is the case for reading again on another node. */
static bool gone(const struct peek *p, enum conn_err k)
{
    return !conn_alive(p->c) || k == CONN_LOST;
}

/* Ends the peek at once: its connection is gone (closed by conn_reopen, or dead). */
static void end_lost(struct peek *p)
{
    struct peek_report *r = &p->r;
    if (p->o.progress)
        p->o.progress(p->o.ctx, r->fetched, p->total);
    r->seconds = clock_mono_s() - p->started;
    peek_report_describe(r, &p->rerr);
    p->phase = PH_DONE;
}

/* A read again begins on the new connection: what the one before counted goes. */
static void reset_read(struct peek *p)
{
    struct peek_report *r = &p->r;
    delivery_clear(&p->dv); /* a delivery part-read on the node lost */
    r->fetched = 0;
    r->redelivered_seen = 0;
    r->max_delivery_count = -1;
    r->at_risk = 0;
    r->at_risk_id[0] = '\0';
    r->detail[0] = '\0';
    r->end = PEEK_COMPLETE;
    p->attempt_dc = -1;
    p->channel_open = p->closing = false;
    p->stream_unacked = p->last_tag = 0;
    p->rkind = CONN_OK;
    error_clear(&p->rerr);
    p->settle_max = 600; /* what the lost node held comes back when the broker sees it gone */
}

/* The connection was lost or hung (why): the queue is read again from the start on the next
 * node (peek_opts.conn). true when it begins again (PH_COUNT_BEFORE); false when it may not or
 * cannot, with the report's end set and the phase where the peek goes on (PH_DONE when the
 * connection is gone). */
static bool read_again(struct peek *p, const struct error *why)
{
    struct peek_report *r = &p->r;
    struct error e = *why, first = *why; /* why may be p->rerr, which is written below */
    for (;;) {
        size_t n = strlen(r->lost);
        snprintf(r->lost + n, sizeof r->lost - n, "%snode %s lost after %llu of %u: %.200s",
                 n ? "; " : "", conn_display_url(p->c), (unsigned long long)r->fetched,
                 r->ready_before, e.msg[0] ? e.msg : "no reason given");
        if (r->fetched && p->attempt_dc + 1 > p->dc_next)
            p->dc_next = p->attempt_dc + 1; /* the lost read's return counted one more */
        int64_t lim = r->limit.limit;
        if (r->attempts >= p->max_attempts || p->cancel) {
            r->end = PEEK_CONNECTION_LOST;
            p->rerr = e;
        } else if (lim >= 0 && r->kind == QK_QUORUM && !p->o.force &&
                   p->dc_next >= (lim > 0 ? lim - 1 : 0)) {
            r->end = PEEK_REFUSED_LIMIT;
            snprintf(r->detail, sizeof r->detail,
                     "not read again after %.120s was lost: the messages read before show up to "
                     "%lld deliveries now and the queue's delivery limit is %lld%s; one more read "
                     "would take them to it (every read is a delivery of each message it takes; "
                     "--force reads anyway)",
                     conn_display_url(p->c), (long long)p->dc_next, (long long)lim,
                     r->limit.origin == LIMIT_DEFAULT ? " (the broker's default)" : "");
        } else {
            /* The next node first: when none answers, what the lost read wrote stays (the
             * caller keeps it as partial); the sink forgets it only for a read that begins. */
            enum conn_err k = CONN_OK;
            if (conn_reopen(p->o.conn, &k, &e) != ST_OK) {
                p->c = NULL;
                r->end = PEEK_CONNECTION_LOST;
                snprintf(p->rerr.msg, sizeof p->rerr.msg,
                         "%.200s, and no other node answered (%.250s)", first.msg, e.msg);
                end_lost(p);
                return false;
            }
            p->c = *p->o.conn;
            if (!p->o.restart(p->o.ctx)) {
                r->end = PEEK_CONNECTION_LOST;
                p->rerr = first;
                p->channel_open = false;
                p->phase = PH_GIVE_BACK;
                return false;
            }
            r->attempts++;
            snprintf(r->last_node, sizeof r->last_node, "%s", conn_display_url(p->c));
            reset_read(p);
            if (conn_channel_open(p->c, 1, &k, &e) == ST_OK &&
                settle_begin(p, r->ready_before, &k, &e) == ST_OK) {
                p->phase = PH_COUNT_BEFORE;
                return true;
            }
            if (gone(p, k))
                continue;       /* this node went too: the next */
            p->failed = ST_EIO; /* the queue cannot be counted there (its node is gone?) */
            p->fkind = k;
            p->ferr = e;
            p->phase = PH_DONE;
            return false;
        }
        if (!conn_alive(p->c)) {
            end_lost(p);
            return false;
        }
        p->phase = PH_GIVE_BACK;
        return false;
    }
}

/* Failover is on and there is a read left to try. */
static bool may_read_again(const struct peek *p)
{
    return p->max_attempts > 1 && !p->cancel;
}

static void count_after(struct peek *p)
{
    struct peek_report *r = &p->r;
    if (p->after_ok) {
        r->have_after = true;
        r->ready_after = p->settle.ready;
        if (r->ready_after > r->ready_before && r->kind != QK_STREAM)
            r->arrived_during = r->ready_after - r->ready_before;
    }
    if (p->o.progress)
        p->o.progress(p->o.ctx, r->fetched, p->total);
    r->seconds = clock_mono_s() - p->started;
    peek_report_describe(&p->r, &p->rerr);
    p->phase = PH_DONE;
}

bool peek_step(struct peek *p, double deadline)
{
    enum status st = ST_OK;
    struct error e2;
    enum conn_err k2;
    for (;;) {
        switch (p->phase) {
        case PH_COUNT_BEFORE:
            if (!p->cancel && settle_more(p, deadline, &st, &p->fkind, &p->ferr))
                return true;
            if (st != ST_OK && may_read_again(p) && gone(p, p->fkind)) {
                if (!read_again(p, &p->ferr) && p->phase == PH_DONE)
                    return false;
                break;
            }
            if (st != ST_OK) {
                p->failed = st;
                p->phase = PH_DONE;
                return false;
            }
            begin_read(p);
            if (p->failed != ST_OK && may_read_again(p) && gone(p, p->fkind)) {
                p->failed = ST_OK;
                if (!read_again(p, &p->ferr) && p->phase == PH_DONE)
                    return false;
            }
            break;
        case PH_OPEN:
            p->channel_open = true;
            p->r.end = read_open(p);
            p->phase = p->r.end == PEEK_COMPLETE ? PH_READ : PH_GIVE_BACK;
            if (p->r.end != PEEK_COMPLETE && may_read_again(p) && gone(p, p->rkind) &&
                !read_again(p, &p->rerr) && p->phase == PH_DONE)
                return false;
            break;
        case PH_READ: {
            enum peek_end end = PEEK_CANCELLED;
            if (!p->cancel && (p->how == RD_ONE_BY_ONE ? read_one_by_one(p, deadline, &end)
                                                       : read_consumed(p, deadline, &end)))
                return true;
            p->r.end = end;
            p->phase = PH_GIVE_BACK;
            if ((end == PEEK_CONNECTION_LOST || end == PEEK_CHANNEL_CLOSED) && may_read_again(p) &&
                gone(p, p->rkind) && !read_again(p, &p->rerr) && p->phase == PH_DONE)
                return false;
            break;
        }
        case PH_GIVE_BACK:
            if (give_back(p, deadline))
                return true;
            break;
        case PH_COUNT_AFTER:
            if (p->after_ok && settle_more(p, deadline, &st, &k2, &e2))
                return true;
            p->after_ok = p->after_ok && st == ST_OK;
            count_after(p);
            return false;
        case PH_DONE:
        default:
            return false;
        }
        if (clock_mono_s() >= deadline && p->phase != PH_DONE)
            return true;
    }
}

enum status peek_finish(struct peek *p, struct peek_report *r, enum conn_err *kind,
                        struct error *err)
{
    /* What is left is done now; a read still going is cancelled first. */
    if (p->phase <= PH_READ)
        p->cancel = true;
    while (peek_step(p, clock_mono_s() + 1.0))
        ;
    *r = p->r;
    enum status st = p->failed;
    if (st != ST_OK) {
        memset(r, 0, sizeof *r);
        if (kind)
            *kind = p->fkind;
        if (err)
            *err = p->ferr;
    } else if (kind) {
        *kind = p->rkind;
    }
    delivery_clear(&p->dv);
    free(p);
    return st;
}

enum status peek_run(struct conn *c, const struct peek_opts *o, struct peek_report *r,
                     enum conn_err *kind, struct error *err)
{
    memset(r, 0, sizeof *r);
    struct peek *p;
    enum status st = peek_start(c, o, &p, kind, err);
    if (st != ST_OK)
        return st;
    while (peek_step(p, clock_mono_s() + 1.0))
        ;
    return peek_finish(p, r, kind, err);
}
