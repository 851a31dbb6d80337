/*
 * replay_attempt: a pass that carries on when its node dies. When the connection is lost (or
 * hung: the heartbeat notices a paused node), the pass reconnects to the next node
 * (conn_reopen) and goes on as a new attempt of the same run: an `attempt` record in the
 * journal, the DLQ read again from its head. Nothing the earlier attempt did is undone or
 * redone by guesswork: a dead letter is removed only after its copy was confirmed, so every
 * dead letter not removed is back in the DLQ, in order, and is selected again; those whose
 * copy was in flight (unknown: pending in the journal) are sent again, so their earlier copy
 * may be a duplicate — which the journal names. The counts stay exact across attempts:
 * what is selected again is not counted twice (report.resent says how many were re-sent).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "replay.h"
#include "replay_run.h"
#include "util.h"

void rr_left_add(struct run *run, const struct bytes *id, const char sha[65], bool unknown)
{
    if (!run->o->reopen)
        return; /* no attempt will follow */
    xgrow((void **)&run->left, &run->cap_left, run->n_left + 1, sizeof *run->left);
    struct left *l = &run->left[run->n_left++];
    l->id = bytes_copy(id);
    snprintf(l->sha, sizeof l->sha, "%s", sha);
    l->unknown = unknown;
}

bool rr_left_found_again(struct run *run, const struct bytes *id, const char sha[65])
{
    return run->unknown_before && replay_plan_take(run->unknown_before, id, sha);
}

static void left_clear(struct run *run)
{
    for (size_t i = 0; i < run->n_left; i++)
        bytes_free(&run->left[i].id);
    run->n_left = 0;
}

void rr_confirmed_add(struct run *run, const struct item *it, bool done)
{
    if (!run->o->reopen)
        return;
    /* Within this attempt the channel holds it (or it is gone): only a later attempt can
     * find it again, so it goes straight where that one looks. */
    struct replay_plan **p = done ? &run->confirmed_before : &run->unknown_confirmed_before;
    if (!*p)
        *p = replay_plan_new();
    replay_plan_add(*p, &it->out.old_id, it->old_sha);
    run->confirmed_waiting++;
}

bool rr_confirmed_found_again(struct run *run, const struct bytes *id, const char sha[65],
                              bool *was_done)
{
    *was_done = false;
    if (!run->confirmed_waiting)
        return false;
    if (run->unknown_confirmed_before && replay_plan_take(run->unknown_confirmed_before, id, sha)) {
        run->confirmed_waiting--;
        return true;
    }
    if (run->confirmed_before && replay_plan_take(run->confirmed_before, id, sha)) {
        run->confirmed_waiting--;
        *was_done = true;
        return true;
    }
    return false;
}

void rr_attempts_free(struct run *run)
{
    left_clear(run);
    free(run->left);
    run->left = NULL;
    replay_plan_free(run->unknown_before);
    replay_plan_free(run->confirmed_before);
    replay_plan_free(run->unknown_confirmed_before);
    run->unknown_before = run->confirmed_before = run->unknown_confirmed_before = NULL;
    run->confirmed_waiting = 0;
}

/* The channels and the reading of a new attempt, as replay_start opens them. What must still
 * be there: every dead letter there at the start that was not removed (done) or perhaps
 * removed (unknown). A quorum queue whose leader just died answers with a count of its own
 * until a new leader has caught up (0 was seen here): while it says fewer, the pass asks
 * again for up to 15 s in its steps (count_step in replay.c, which then calls
 * rr_open_reading), so the explorer's screen is not held. */
static enum status open_attempt(struct run *run, enum conn_err *kind, struct error *err)
{
    uint32_t ready = 0, consumers = 0;
    /* The checking channel first: a new connection has none open (broker_open opens it). */
    enum status st = conn_channel_open(run->c, CHECK_CHANNEL, kind, err);
    if (st != ST_OK)
        return st;
    const struct replay_report *r = run->r;
    uint64_t gone = r->done + r->unknown;
    uint64_t least = r->ready_before > gone ? r->ready_before - gone : 0;
    if ((st = conn_queue_inspect(run->c, CHECK_CHANNEL, run->o->queue, &ready, &consumers, kind,
                                 err)) != ST_OK)
        return st;
    run->total = ready;
    if (ready < least) {
        double now = clock_mono_s();
        run->counting = true;
        run->count_least = least > UINT32_MAX ? UINT32_MAX : (uint32_t)least;
        run->count_blank = false;
        run->count_opens = true;
        run->count_next = now + 0.25;
        run->count_until = now + 15;
        return ST_OK;
    }
    return rr_open_reading(run, kind, err);
}

enum status rr_open_reading(struct run *run, enum conn_err *kind, struct error *err)
{
    enum status st;
    if ((st = conn_channel_open(run->c, READ_CHANNEL, kind, err)) != ST_OK ||
        (st = conn_channel_open(run->c, PUB_CHANNEL, kind, err)) != ST_OK)
        return st;
    rr_acks_reset(run); /* a new reading channel: its delivery tags start again at 1 */
    amqp_confirm_select(run->st, PUB_CHANNEL);
    if ((st = conn_check_reply(run->c, PUB_CHANNEL, amqp_get_rpc_reply(run->st),
                               "putting the publishing channel in confirm mode", kind, err)) !=
        ST_OK)
        return st;
    run->read_alive = run->pub_alive = true;
    if (run->total == 0)
        run->reading_done = true;
    else if (!run->by_get && (st = rr_start_consume(run, kind, err)) != ST_OK)
        return st;
    run->last_frame = clock_mono_s();
    return ST_OK;
}

/* Everything of the lost attempt's wire state, back to a pass's start. Counts (the report)
 * and the journal's seq go on. */
static void reset_wire(struct run *run)
{
    run->st = conn_state(run->c);
    for (size_t i = run->first_open; i < run->n_items; i++)
        if (run->items[i]) {
            outgoing_free(&run->items[i]->out);
            free(run->items[i]->diff);
            free(run->items[i]->reason);
            free(run->items[i]);
        }
    run->n_items = run->next_pending = run->next_journal = run->first_open = 0;
    run->awaiting_sync = false;
    run->in_flight = 0;
    run->next_pub_seq = 0;
    run->reading_done = run->read_alive = run->pub_alive = false;
    run->blocked = false;
    run->renewing = false;
    run->consumer_no = 0;
    run->renew_every = run->current_held = 0;
    run->acks_sent = run->acks_proven = run->probe_upto = 0;
    run->probe_out = run->probe_given_up = false;
    run->stream_unacked = run->stream_last_tag = 0;
    sb_reset(&run->checked_exchanges);
    run->end = RE_COMPLETE;
    run->end_set = false;
    error_clear(&run->err);
    run->kind_seen = CONN_OK;
    run->taken_base = run->r->taken;
    run->expect = 0; /* the rest of a plan may be anywhere now: the whole queue is read */
    /* A canary that was sent is not sent again; one still waiting passes (its copy is
     * settled or unknown, and the DLQ is read again anyway). */
    if (run->canary_waiting || run->canary_item != SIZE_MAX) {
        run->canary_waiting = false;
        run->canary_passed = true;
    }
    run->canary_item = SIZE_MAX;
    run->canary_wanted = false;
}

bool rr_next_attempt(struct run *run)
{
    const struct replay_opts *o = run->o;
    uint32_t max = o->max_attempts ? o->max_attempts : REPLAY_DEFAULT_ATTEMPTS;
    if (!o->reopen || run->cancelled || run->journal_failed || run->end != RE_CONNECTION_LOST)
        return false;
    if (run->reopen_pause) {
        run->reopen_pause = false;
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
    }
    char why[400];
    rr_say(why, sizeof why, "%s", run->err.msg[0] ? run->err.msg : "the connection was lost");
    if (run->attempt >= max) {
        rr_say(run->gave_up, sizeof run->gave_up,
               "gave up after %u attempts (--attempts): the last lost its connection (%.200s)",
               run->attempt, why);
        return false;
    }
    /* Every dead letter not removed for sure goes back to the caller's selection; the unknown
     * ones are remembered, so that finding them again re-sends them without counting them
     * twice. */
    if (!run->unknown_before)
        run->unknown_before = replay_plan_new();
    for (size_t i = 0; i < run->n_left; i++) {
        struct left *l = &run->left[i];
        if (o->again)
            o->again(o->ctx, &l->id, l->sha);
        if (l->unknown)
            replay_plan_add(run->unknown_before, &l->id, l->sha);
    }
    left_clear(run);
    /* Selected again when found: not counted twice. */
    struct replay_report *r = run->r;
    r->selected -= run->not_sent_attempt + run->kept_select_attempt;
    r->not_sent -= run->not_sent_attempt;
    r->kept -= run->kept_select_attempt;
    run->not_sent_attempt = run->kept_select_attempt = 0;

    enum conn_err kind = CONN_OK;
    struct error err;
    error_clear(&err);
    if (conn_reopen(o->reopen, &kind, &err) != ST_OK || !*o->reopen) {
        run->c = NULL;
        rr_say(run->gave_up, sizeof run->gave_up,
               "the connection was lost (%.200s) and no other node could be reached: %.200s", why,
               err.msg);
        run->kind_seen = kind != CONN_OK ? kind : CONN_LOST;
        return false;
    }
    run->c = *o->reopen;
    run->attempt++;
    r->attempts = run->attempt;
    rr_say(r->node, sizeof r->node, "%s", conn_display_url(run->c));
    uint64_t unknown = r->unknown;
    reset_wire(run);
    struct journal_attempt ja = {r->run_id, run->attempt, run->seq + 1, r->node, why, unknown};
    if (journal_write_attempt(o->journal, &ja, &err) != ST_OK ||
        journal_sync(o->journal, &err) != ST_OK) {
        rr_journal_failed(run, &err);
        rr_say(run->gave_up, sizeof run->gave_up,
               "the connection was lost and the journal could not record a new attempt: %.300s",
               err.msg);
        return false;
    }
    if (open_attempt(run, &kind, &err) != ST_OK) {
        rr_attempt_failed(run, kind, &err);
        return rr_next_attempt(run);
    }
    run->last_frame = clock_mono_s();
    return true;
}

void rr_attempt_failed(struct run *run, enum conn_err kind, const struct error *err)
{
    /* The new node failed too (the queue may still be electing its leader): that is this
     * attempt's loss, and the next, a second later, may follow. */
    error_set(&run->err, ST_EIO, "%s", err->msg);
    run->kind_seen = kind;
    run->counting = false;
    run->read_alive = run->pub_alive = false;
    run->reading_done = true;
    run->end = RE_CONNECTION_LOST;
    run->end_set = true;
    run->reopen_pause = true;
}

/* One sentence on how the pass ended, with its counts (and its attempts). */
void rr_describe(struct run *run)
{
    struct replay_report *r = run->r;
    if (r->end == RE_REFUSED_LIMIT && r->detail[0])
        return;
    const char *why = run->err.msg[0] ? run->err.msg : "";
    char counts[200];
    snprintf(counts, sizeof counts, "%llu done, %llu kept, %llu unknown",
             (unsigned long long)r->done, (unsigned long long)r->kept,
             (unsigned long long)r->unknown);
    if (r->attempts > 1) {
        size_t n = strlen(counts);
        snprintf(counts + n, sizeof counts - n, " in %u attempts (%llu re-sent)", r->attempts,
                 (unsigned long long)r->resent);
    }
    if (run->gave_up[0])
        why = run->gave_up;
    switch (r->end) {
    case RE_COMPLETE:
    case RE_ALL_FOUND:
        snprintf(r->detail, sizeof r->detail, "finished: %s%s", counts,
                 r->count_unsure && !r->taken
                     ? "; the quorum DLQ answered 0 messages and 0 consumers throughout, as it "
                       "does when its leader does not answer: if it holds dead letters, run "
                       "this again"
                     : "");
        break;
    case RE_STOPPED:
        snprintf(r->detail, sizeof r->detail, "stopped: %s", counts);
        break;
    case RE_CANCELLED:
        rr_say(r->detail, sizeof r->detail,
               "cancelled: %s; %llu not sent (still in the DLQ)%s%.300s", counts,
               (unsigned long long)r->not_sent, why[0] ? ": " : "", why);
        break;
    case RE_CANARY:
        snprintf(r->detail, sizeof r->detail,
                 "the canary came back to the DLQ: the fix does not work yet; nothing else was "
                 "sent (%s)",
                 counts);
        break;
    case RE_IDLE:
        snprintf(r->detail, sizeof r->detail,
                 "incomplete: the DLQ stopped delivering after %llu of %llu messages (other "
                 "consumers may hold the rest); %s",
                 (unsigned long long)r->taken, (unsigned long long)run->total, counts);
        break;
    case RE_CHANNEL_CLOSED:
        if (r->refused && !r->unknown) {
            rr_say(r->detail, sizeof r->detail,
                   "refused: %.300s; %s; the broker accepted none of the refused copies and "
                   "their dead letters stay in the DLQ",
                   why, counts);
            break;
        }
        /* fall through */
    case RE_CONNECTION_LOST:
    default:
        rr_say(r->detail, sizeof r->detail,
               "interrupted: %.260s; %s; nothing is lost: dead letters not removed are back in "
               "the DLQ and every possible duplicate is in the journal",
               why, counts);
        break;
    }
}
