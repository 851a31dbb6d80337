/*
 * replay: one pass over a dead-letter queue that sends copies back and removes only the dead
 * letters whose copies the broker has confirmed (see replay.h for the order of steps and why
 * it loses nothing). This file owns the pass: its loop, the canary, progress and the journal's
 * outcomes; replay_send.c publishes (the window, the rate, the intents written ahead),
 * replay_wire.c talks to the broker, replay_plan.c holds what to look for.
 */
#include "replay.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "decode.h"
#include "hval_amqp.h"
#include "replay_run.h"
#include "sha256.h"
#include "util.h"

const char *replay_end_name(enum replay_end e)
{
    static const char *const names[] = {"complete",
                                        "all-found",
                                        "stopped",
                                        "cancelled",
                                        "canary-returned",
                                        "idle",
                                        "refused-delivery-limit",
                                        "connection-lost",
                                        "channel-closed"};
    return (unsigned)e < sizeof names / sizeof names[0] ? names[e] : "?";
}

/* snprintf for sentences that may be cut at the buffer's end (the cut is harmless). */
void rr_say(char *dst, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, n, fmt, ap);
    va_end(ap);
}

/* A name as a C string for sentences and the journal; one holding a NUL byte (possible on
 * the wire, never in a real name) is shown as such rather than cut. */
const char *rr_cs(const struct bytes *b)
{
    const char *s = bytes_cstr(b);
    return s ? s : "(a name with a NUL byte)";
}

static int end_weight(enum replay_end e)
{
    switch (e) {
    case RE_CONNECTION_LOST:
        return 4;
    case RE_CHANNEL_CLOSED:
        return 3;
    case RE_CANARY:
        return 2;
    case RE_CANCELLED:
        return 1;
    default:
        return 0;
    }
}

void rr_set_end(struct run *run, enum replay_end e)
{
    if (!run->end_set || end_weight(e) > end_weight(run->end)) {
        run->end = e;
        run->end_set = true;
    }
}

void rr_add_reason(struct replay_report *r, const char *text)
{
    for (size_t i = 0; i < r->n_reasons; i++) {
        if (strcmp(r->reasons[i].text, text) == 0) {
            r->reasons[i].n++;
            /* keep most frequent first */
            while (i > 0 && r->reasons[i].n > r->reasons[i - 1].n) {
                __typeof__(r->reasons[0]) t = r->reasons[i];
                r->reasons[i] = r->reasons[i - 1];
                r->reasons[i - 1] = t;
                i--;
            }
            return;
        }
    }
    if (r->n_reasons < REPLAY_MAX_REASONS) {
        snprintf(r->reasons[r->n_reasons].text, sizeof r->reasons[0].text, "%s", text);
        r->reasons[r->n_reasons].n = 1;
        r->n_reasons++;
    }
}

/* The journal must not fall behind: a failure to write it stops the run (nothing more is
 * sent), as a write the journal cannot record could not be named after a crash. */
void rr_journal_failed(struct run *run, const struct error *e)
{
    if (!run->journal_failed) {
        run->journal_failed = true;
        run->jerr = *e;
    }
}

/* Writes an outcome for item it (journal + counts + callback). */
void rr_settle(struct run *run, struct item *it, enum journal_result res, const char *reason)
{
    if (it->state == IT_SETTLED)
        return;
    struct error jerr;
    error_clear(&jerr);
    if (it->seq && journal_write_outcome(run->o->journal, run->r->run_id, it->seq, res,
                                         res == JR_DONE ? NULL : reason, &jerr) != ST_OK)
        rr_journal_failed(run, &jerr);
    it->state = IT_SETTLED;
    switch (res) {
    case JR_DONE:
        /* A dead letter counted done before and given back by the queue: removed again. */
        if (!it->removal_again)
            run->r->done++;
        if (it->confirmed)
            rr_confirmed_add(run, it, true);
        break;
    case JR_KEPT:
        run->r->kept++;
        rr_add_reason(run->r, reason);
        break;
    case JR_REFUSED:
        run->r->kept++;
        run->r->refused++;
        rr_add_reason(run->r, reason);
        break;
    case JR_UNKNOWN:
    default:
        run->r->unknown++;
        rr_add_reason(run->r, reason);
        /* The dead letter may still be in the DLQ: a new attempt would find it again and send
         * it again — unless its copy was confirmed (only the removal is in doubt). */
        if (it->confirmed)
            rr_confirmed_add(run, it, false);
        else
            rr_left_add(run, &it->out.old_id, it->old_sha, true);
        break;
    }
    if (run->o->outcome)
        run->o->outcome(run->o->ctx, it->seq, it->position, &it->out.old_id, res, reason);
    outgoing_free(&it->out);
}

void rr_item_free(struct item *it)
{
    outgoing_free(&it->out);
    free(it->diff);
    free(it->reason);
    free(it);
}

void rr_advance_open(struct run *run)
{
    /* Not past next_pending: an item settled when its intent was written ahead (a copy the
     * broker would refuse) is still walked over by the publishing loop. */
    while (run->first_open < run->next_pending &&
           run->items[run->first_open]->state == IT_SETTLED) {
        rr_item_free(run->items[run->first_open]);
        run->items[run->first_open] = NULL;
        run->first_open++;
    }
}

/* ---- progress --------------------------------------------------------------------------- */

static void report_progress(struct run *run, const char *phase, bool force)
{
    double t = clock_mono_s();
    if (!run->o->progress || (!force && t - run->last_progress < 0.1))
        return;
    run->last_progress = t;
    struct replay_report *r = run->r;
    struct replay_progress p;
    memset(&p, 0, sizeof p);
    p.taken = r->taken;
    p.total = run->expect ? run->expect : run->total;
    p.selected = r->selected;
    p.done = r->done;
    p.kept = r->kept;
    p.unknown = r->unknown;
    p.in_flight = run->in_flight;
    double el = t - run->started;
    p.rate = el > 0 ? (double)r->done / el : 0;
    uint64_t settled = r->done + r->kept + r->unknown;
    uint64_t taken = r->taken - run->taken_base;
    double left = run->expect ? (double)run->expect - (double)settled
                              : (double)(run->total > taken ? run->total - taken : 0) +
                                    (double)(run->n_items - run->first_open);
    p.eta_s = p.rate > 0 && left >= 0 ? left / p.rate : -1;
    p.paused = run->paused;
    p.phase = phase;
    enum replay_ctl ctl = run->o->progress(run->o->ctx, &p);
    if (ctl == RC_CANCEL && !run->cancelled) {
        run->cancelled = true;
        run->reading_done = true;
        rr_set_end(run, RE_CANCELLED);
    }
    bool was_paused = run->paused;
    run->paused = ctl == RC_PAUSE;
    if (was_paused && !run->paused)
        run->last_frame = t; /* the queue's silence is counted from the resume */
}

/* ---- the pass --------------------------------------------------------------------------- */

/* A pass in steps (replay.h): the run, its report, and what the loop needs between steps. */
struct replay {
    struct run run;
    struct replay_report rep;
    int idle_ms, confirm_ms;
    bool finished;
};

static void replay_free(struct replay *p)
{
    for (size_t i = p->run.first_open; i < p->run.n_items; i++)
        if (p->run.items[i])
            rr_item_free(p->run.items[i]);
    free(p->run.items);
    free(p->run.ack_pending);
    free(p->run.ack_bits);
    conn_batch_free(&p->run.batch);
    empty_amqp_pool(&p->run.pub_pool);
    free(p->run.hdr_buf);
    bytes_free(&p->run.canary_id);
    sb_free(&p->run.checked_exchanges);
    rr_attempts_free(&p->run);
    free(p);
}

/* How long the queue may stay silent before the reading is taken as done. */
static void set_idle(struct replay *p, uint32_t consumers)
{
    const struct replay_opts *o = p->run.o;
    p->idle_ms = o->idle_timeout_ms > 0     ? o->idle_timeout_ms
                 : p->run.kind == QK_STREAM ? 2000
                 : consumers > 0            ? 5000
                                            : 30000;
}

enum status replay_start(struct conn *c, const struct replay_opts *o, struct replay **out,
                         enum conn_err *kind, struct error *err)
{
    *out = NULL;
    if (!o->journal || !o->select || !o->queue || !o->op)
        return error_set(err, ST_EINVAL, "replay: journal, select, queue and op are required");
    struct replay *p = xcalloc(1, sizeof *p);
    struct run *run = &p->run;
    struct replay_report *r = &p->rep;
    run->c = c;
    run->st = conn_state(c);
    run->o = o;
    run->now_fixed = clock_fixed_ms(&run->now_fixed_ms);
    run->r = r;
    run->kind = o->kind;
    run->window = o->window ? o->window : DEFAULT_WINDOW;
    run->canary_wanted = o->canary_wait_ms > 0;
    run->canary_item = SIZE_MAX;
    run->attempt = r->attempts = 1;
    run->expect = o->expect;
    run->started = clock_mono_s();
    run->pace_tokens = 1; /* the first copy goes at once */
    run->pace_last = run->started;
    sb_init(&run->checked_exchanges);
    conn_batch_init(&run->batch);
    init_amqp_pool(&run->pub_pool, 4096);
    error_clear(&run->err);
    journal_new_run_id(r->run_id);

    uint32_t ready = 0, consumers = 0;
    enum status st = conn_queue_inspect(c, CHECK_CHANNEL, o->queue, &ready, &consumers, kind, err);
    if (st != ST_OK) {
        replay_free(p);
        return st;
    }
    r->ready_before = ready;
    run->total = ready;
    /* A quorum queue whose leader does not answer says 0 (a node that has just started, a
     * leader being elected): asked again for a while (count_step) before a pass over nothing
     * ends at once (a move that said "selected 0 of 20000" in the cluster test). */
    if (run->kind == QK_QUORUM && ready == 0 && consumers == 0) {
        run->counting = run->count_blank = true;
        run->count_next = run->started + 0.25;
        run->count_until = run->started + REPLAY_QUORUM_ZERO_WAIT_S;
    }

    /* planned: a plan's size; a live selection (expect 0) learns how many it selects only as
     * it reads — the queue's depth is not that (10 "planned" for 6 selected): the end record
     * says how many were selected. */
    struct journal_run jr = {r->run_id,    o->op,    conn_display_url(c), conn_vhost(c),
                             conn_user(c), o->queue, o->expect,           false};
    if ((st = journal_write_run(o->journal, &jr, err)) != ST_OK ||
        (st = journal_sync(o->journal, err)) != ST_OK ||
        (st = conn_channel_open(c, READ_CHANNEL, kind, err)) != ST_OK ||
        (st = conn_channel_open(c, PUB_CHANNEL, kind, err)) != ST_OK) {
        replay_free(p);
        return st;
    }
    amqp_confirm_select(run->st, PUB_CHANNEL);
    if ((st = conn_check_reply(c, PUB_CHANNEL, amqp_get_rpc_reply(run->st),
                               "putting the publishing channel in confirm mode", kind, err)) !=
        ST_OK) {
        replay_free(p);
        return st;
    }
    run->read_alive = run->pub_alive = true;
    rr_say(r->node, sizeof r->node, "%s", conn_display_url(c));
    /* The effective delivery limit: the queue's (argument or policy, as given), else the
     * broker version's default (20 on a quorum queue from 4.0; none before). */
    struct peek_queue_info qi = {run->kind, o->delivery_limit, false};
    run->limit = peek_delivery_limit(&qi, conn_broker_version(c)).limit;
    run->by_get = run->kind == QK_QUORUM && run->limit >= 0 && !o->force;
    if (run->total == 0)
        run->reading_done = !run->counting;
    else if (!run->by_get && (st = rr_start_consume(run, kind, err)) != ST_OK) {
        conn_channel_close(c, PUB_CHANNEL);
        replay_free(p);
        return st;
    }
    set_idle(p, consumers);
    p->confirm_ms = o->confirm_timeout_ms > 0 ? o->confirm_timeout_ms : 30000;
    run->last_frame = clock_mono_s();
    *out = p;
    return ST_OK;
}

/* The canary's outcome decides whether the rest is sent. */
static void watch_canary(struct run *run)
{
    struct replay_report *r = run->r;
    struct item *ci = run->canary_item >= run->first_open ? run->items[run->canary_item] : NULL;
    bool settled = !ci || ci->state == IT_SETTLED;
    if (settled && !run->canary_waiting && r->canary_sent) {
        /* Done (or kept: then there is nothing to watch). */
        run->canary_waiting = true;
        run->canary_until = clock_mono_s() + run->o->canary_wait_ms / 1000.0;
    }
    if (run->canary_waiting && (r->canary_back || clock_mono_s() >= run->canary_until)) {
        run->canary_waiting = false;
        run->canary_passed = true;
        if (r->canary_back) {
            run->cancelled = true;
            run->reading_done = true;
            rr_set_end(run, RE_CANARY);
        }
    }
}

/* Copies in flight that nobody will confirm now: their outcome is unknown. */
static void in_flight_unknown(struct run *run, const char *why)
{
    for (size_t i = run->first_open; i < run->n_items; i++) {
        struct item *it = run->items[i];
        if (it->state == IT_IN_FLIGHT) {
            run->in_flight--;
            rr_settle(run, it, JR_UNKNOWN, why);
        }
    }
}

/* One turn of the pass's loop, waiting no later than deadline: false when the pass is over. */
static bool turn(struct replay *p, double deadline)
{
    struct run *run = &p->run;
    struct replay_report *r = &p->rep;
    rr_advance_open(run);
    report_progress(run,
                    run->canary_waiting ? "canary"
                    : run->reading_done ? "settling"
                                        : "sending",
                    false);
    bool alive = run->read_alive && run->pub_alive;
    if (run->canary_item != SIZE_MAX && !run->canary_passed && alive)
        watch_canary(run);
    if (!run->cancelled)
        rr_send_some(run);
    rr_sync_acks(run);
    rr_renew_consumer(run);
    rr_advance_open(run);
    bool pending_left = run->next_pending < run->n_items;
    if (run->cancelled || !alive) {
        /* Nothing more is sent; what is in flight is settled below. */
        for (size_t i = run->next_pending; i < run->n_items; i++)
            if (run->items[i]->state == IT_PENDING) {
                /* Journaled ahead (or with its batch) but never handed to the socket: not
                 * pending — nothing of it can be at the target. */
                struct error jerr;
                if (run->items[i]->seq &&
                    journal_write_outcome(run->o->journal, r->run_id, run->items[i]->seq, JR_KEPT,
                                          alive ? "not sent: the pass stopped before it was "
                                                  "published; the dead letter stays"
                                                : "not sent: the connection was lost before it "
                                                  "was published; the dead letter stays",
                                          &jerr) != ST_OK)
                    rr_journal_failed(run, &jerr);
                run->items[i]->state = IT_SETTLED;
                r->not_sent++;
                run->not_sent_attempt++;
                rr_left_add(run, &run->items[i]->out.old_id, run->items[i]->old_sha, false);
            }
        run->next_pending = run->n_items;
        pending_left = false;
    }
    bool unproven = rr_acks_unproven(run) || rr_probe_awaited(run);
    if (!alive && run->in_flight == 0 && !unproven)
        return false;
    if (run->reading_done && !pending_left && run->in_flight == 0 && !unproven &&
        !run->canary_waiting)
        return false;
    if (!alive) {
        /* Copies in flight when the connection failed: nobody can say. */
        in_flight_unknown(run, "the connection failed before the broker confirmed the copy: it "
                               "may or may not be at the target; the dead letter is back in the "
                               "DLQ");
        if (!run->read_alive || !unproven)
            return true;
        /* The reading channel is still there: wait for the proof of its removals. */
    }
    /* Wait for something: a delivery, a confirm — no later than the deadline. */
    if (run->by_get && !run->reading_done && !run->paused &&
        (run->n_items - run->next_pending) < run->window) {
        rr_get_one(run);
        for (int i = 0; i < 256 && rr_pump(run, 0); i++)
            ;
        rr_flush_acks(run);
        return true;
    }
    int wait = pending_left ? rr_pace_wait_ms(run) : 100;
    double left_ms = (deadline - clock_mono_s()) * 1000;
    if (left_ms < wait)
        wait = left_ms > 0 ? (int)left_ms : 0;
    if (!rr_pump(run, wait)) {
        double quiet = clock_mono_s() - run->last_frame;
        if (!run->reading_done && !run->canary_waiting && !run->paused && !run->blocked &&
            quiet * 1000 > p->idle_ms) {
            run->reading_done = true;
            rr_set_end(run, RE_IDLE);
        }
        if (((rr_acks_unproven(run) && run->probe_out) || rr_probe_awaited(run)) &&
            quiet * 1000 > p->confirm_ms)
            rr_acks_unknown(run, "no answer from the broker within the timeout after the "
                                 "dead letter's removal: if it is still in the DLQ, the "
                                 "copy at the target is a duplicate");
        if (run->in_flight > 0 && quiet * 1000 > p->confirm_ms)
            in_flight_unknown(run, "no confirm from the broker within the timeout: the copy may "
                                   "or may not be at the target; the dead letter stays");
    } else {
        /* Drain what is already there without waiting (until the deadline); the acks of what
         * it confirms leave together when it is done. */
        conn_cork(run->c, true);
        for (int i = 0; i < 256 && clock_mono_s() < deadline && rr_pump(run, 0); i++)
            ;
        rr_flush_acks(run);
        conn_cork(run->c, false);
    }
    return true;
}

/* The pass is over: the channels close (the reading one gives back every message still held,
 * in order), the depth after, the report and the journal's end. */
static void wrap_up(struct replay *p)
{
    struct run *run = &p->run;
    struct replay_report *r = &p->rep;
    struct conn *c = run->c;
    rr_advance_open(run);
    if (run->stream_unacked && run->read_alive)
        amqp_basic_ack(run->st, READ_CHANNEL, run->stream_last_tag, 1);
    /* The publishing channel first (every confirm is in: nothing more comes on it), then the
     * reading one, which gives back every message still held, in order, and drops the
     * deliveries still in flight (conn_channel_close). */
    if (run->pub_alive)
        conn_channel_close(c, PUB_CHANNEL);
    /* A quorum queue's client in the broker may hold the last removals back until the queue
     * has applied the earlier ones, and a channel closed at once drops them: 97 dead letters
     * whose acks basic.qos had proven came back (x-delivery-count 2). A second's grace. */
    for (double until = clock_mono_s() + 1;
         run->read_alive && run->kind == QK_QUORUM && run->acks_sent && clock_mono_s() < until;)
        rr_pump(run, 100);
    if (run->read_alive)
        conn_channel_close(c, READ_CHANNEL);
    rr_set_end(run, RE_COMPLETE);
    r->end = run->end;
    r->read_limit = run->prefetch;
    if (c && conn_alive(c)) {
        uint32_t after = 0, cons = 0;
        struct error e2;
        enum conn_err k2;
        if (conn_queue_inspect(c, CHECK_CHANNEL, run->o->queue, &after, &cons, &k2, &e2) == ST_OK) {
            r->have_after = true;
            r->ready_after = after;
        }
    }
    r->seconds = clock_mono_s() - run->started;
    rr_describe(run);
    struct error jerr;
    error_clear(&jerr);
    journal_write_end(run->o->journal, r->run_id, r->done, r->kept, r->unknown, r->refused,
                      r->selected, r->attempts, r->detail, &jerr);
    journal_sync(run->o->journal, &jerr);
    report_progress(run, "done", true);
    p->finished = true;
}

/* The count could not be asked, or the reading not started: a lost connection ends the
 * attempt as any other loss does (the next may follow), as does anything in a later attempt
 * (rr_attempt_failed); anything else ends the pass. */
static void count_failed(struct run *run, enum conn_err k, const struct error *e)
{
    bool later = run->count_opens;
    run->counting = run->count_opens = false;
    if (later) {
        rr_attempt_failed(run, k, e);
        return;
    }
    if (k == CONN_LOST) {
        rr_connection_lost(run, e->msg);
        return;
    }
    if (!run->err.msg[0])
        error_set(&run->err, ST_EIO, "%s", e->msg);
    run->kind_seen = k;
    rr_set_end(run, RE_CHANNEL_CLOSED);
    run->reading_done = true;
}

/* A count asked again in the pass's steps (rather than a wait that holds the
 * caller: conn_queue_inspect says why a count can be unsure): true while it goes on. At the start,
 * while a quorum DLQ says 0 messages and 0 consumers (count_blank); in a later attempt, while the
 * DLQ holds fewer than must still be there (count_least; count_opens: the attempt's reading opens
 * after it). It ends when the answer is sure, when the wait is over (at the start the queue is then
 * taken as empty, count_unsure), on a cancel, or on a failed ask (count_failed). */
static bool count_step(struct replay *p, double deadline)
{
    struct run *run = &p->run;
    struct replay_report *r = &p->rep;
    report_progress(run, "counting", false);
    if (run->cancelled) {
        run->counting = false;
        run->reading_done = true;
        return false;
    }
    double now = clock_mono_s();
    if (now < run->count_next) {
        double until = run->count_next < deadline ? run->count_next : deadline;
        if (until > now) {
            double s = until - now;
            struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
            nanosleep(&ts, NULL);
        }
        /* Still before the next ask (the deadline came first, or a signal), or cancelled (the
         * next call ends it): the caller comes back. Else the ask is due now, below — never a
         * false here, which would say the count is over and start a turn on a reading that is
         * not open yet (a later attempt's: the pass then ended with the rest of the DLQ
         * unread, in cluster-replay-failover). */
        if (clock_mono_s() < run->count_next || run->cancelled)
            return true;
    }
    uint32_t ready = 0, consumers = 0;
    enum conn_err k = CONN_OK;
    struct error e;
    error_clear(&e);
    if (conn_queue_inspect(run->c, CHECK_CHANNEL, run->o->queue, &ready, &consumers, &k, &e) !=
        ST_OK) {
        if (!run->count_opens)
            r->count_unsure = true;
        count_failed(run, k, &e);
        return false;
    }
    bool unsure = ready < run->count_least || (run->count_blank && ready == 0 && consumers == 0);
    if (unsure && clock_mono_s() < run->count_until) {
        run->count_next = clock_mono_s() + 0.25;
        return true;
    }
    run->counting = false;
    run->total = ready;
    run->last_frame = clock_mono_s();
    enum status st;
    if (run->count_opens) {
        run->count_opens = false;
        if ((st = rr_open_reading(run, &k, &e)) != ST_OK)
            rr_attempt_failed(run, k, &e);
        return false;
    }
    r->count_unsure = unsure;
    r->ready_before = ready;
    set_idle(p, consumers);
    if (ready == 0) {
        run->reading_done = true;
        return false;
    }
    st = run->by_get ? ST_OK : rr_start_consume(run, &k, &e);
    if (st != ST_OK)
        count_failed(run, k, &e);
    return false;
}

bool replay_step(struct replay *p, double deadline)
{
    for (bool first = true; !p->finished; first = false) {
        if (!first && clock_mono_s() >= deadline)
            return true;
        if (p->run.counting && count_step(p, deadline)) {
            if (clock_mono_s() >= deadline)
                return true;
            continue;
        }
        bool more = turn(p, deadline);
        rr_flush_acks(&p->run);
        if (!more && !rr_next_attempt(&p->run))
            wrap_up(p);
    }
    return false;
}

void replay_cancel(struct replay *p)
{
    struct run *run = &p->run;
    if (run->cancelled)
        return;
    run->cancelled = true;
    run->reading_done = true;
    rr_set_end(run, RE_CANCELLED);
}

const struct replay_report *replay_report_now(const struct replay *p)
{
    return &p->rep;
}

enum status replay_finish(struct replay *p, struct replay_report *r, enum conn_err *kind)
{
    if (!p->finished)
        replay_cancel(p);
    while (replay_step(p, clock_mono_s() + 1.0))
        ;
    *r = p->rep;
    if (kind)
        *kind = p->run.kind_seen;
    replay_free(p);
    return ST_OK;
}

enum status replay_run(struct conn *c, const struct replay_opts *o, struct replay_report *r,
                       enum conn_err *kind, struct error *err)
{
    memset(r, 0, sizeof *r);
    struct replay *p;
    enum status st = replay_start(c, o, &p, kind, err);
    if (st != ST_OK)
        return st;
    while (replay_step(p, clock_mono_s() + 1.0))
        ;
    return replay_finish(p, r, kind);
}
