/*
 * replay_send: the publishing side of a replay pass — the checks a copy must pass before it is
 * sent, the journal's intents written ahead of the publishes and synced by the journal's own
 * thread (a group commit), the window, the rate (--rate, --ramp) and the canary's hold on what
 * follows it. replay.c runs the loop; replay_wire.c reads what the broker answers.
 */
#include "replay.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn_batch.h"
#include "hval_amqp.h"
#include "replay_run.h"
#include "util.h"

static void journal_intent(struct run *run, struct item *it)
{
    struct outgoing *out = &it->out;
    struct journal_intent in;
    memset(&in, 0, sizeof in);
    in.run_id = run->r->run_id;
    in.seq = it->seq;
    in.op = run->o->op;
    in.source = run->o->queue;
    in.old_id = (const char *)out->old_id.data;
    in.old_id_len = out->old_id.len;
    in.old_sha256 = it->old_sha;
    if (!it->is_delete) {
        in.exchange = rr_cs(&out->exchange);
        in.routing_key = rr_cs(&out->routing_key);
        in.new_id = (const char *)out->id.data;
        in.new_id_len = out->id.len;
        in.new_sha256 = out->body_sha256;
    }
    in.diff_text = it->diff;
    in.diff_text_len = it->diff_len;
    in.attempt = run->attempt;
    struct error jerr;
    error_clear(&jerr);
    if (journal_write_intent(run->o->journal, &in, &jerr) != ST_OK)
        rr_journal_failed(run, &jerr);
    free(it->diff);
    it->diff = NULL;
}

/* ---- publishing ------------------------------------------------------------------------- */

/* Whether a named exchange exists (cached); a missing one would close the publishing channel
 * and with it every confirm in flight. */
static bool exchange_exists(struct run *run, const struct bytes *ex, char *why, size_t n)
{
    if (ex->len == 0)
        return true;
    const char *name = rr_cs(ex);
    if (run->checked_exchanges.buf) {
        for (const char *p = run->checked_exchanges.buf; *p;) {
            const char *nl = strchr(p, '\n');
            size_t len = nl ? (size_t)(nl - p) : strlen(p);
            if (len == ex->len && memcmp(p, ex->data, len) == 0)
                return true;
            p += len + (nl ? 1 : 0);
        }
    }
    char text[300];
    enum route_check rc = replay_check_route(run->c, name, "", text, sizeof text);
    if (rc == ROUTE_NO || rc == ROUTE_ERROR) {
        rr_say(why, n, "%s; the dead letter stays", text);
        return false;
    }
    sb_add(&run->checked_exchanges, ex->data, ex->len);
    sb_addc(&run->checked_exchanges, '\n');
    return true;
}

/* The length of a copy's headers in wire form, as htable_encode_wire would encode them (false,
 * with its error, where it would fail). Encoded by the same two steps (htable_to_amqp, then
 * rabbitmq-c's amqp_encode_table) into a buffer the run keeps and a pool recycled at once (the
 * publishes' pool, empty between publishes) rather than a fresh pool page, buffer and copy a
 * copy; a table the buffer cannot hold goes through htable_encode_wire itself. */
static bool headers_wire_len(struct run *run, const struct htable *t, size_t *len, struct error *e)
{
    if (!run->hdr_buf) {
        run->hdr_cap = 1u << 17; /* RabbitMQ's frame_max: a larger table is refused anyway */
        run->hdr_buf = xmalloc(run->hdr_cap);
    }
    amqp_table_t at;
    htable_to_amqp(t, &run->pub_pool, &at);
    amqp_bytes_t enc = {run->hdr_cap, run->hdr_buf};
    size_t offset = 0;
    int rc = amqp_encode_table(enc, &at, &offset);
    recycle_amqp_pool(&run->pub_pool);
    if (rc == AMQP_STATUS_OK) {
        *len = offset;
        return true;
    }
    struct bytes wire = {0};
    bool ok = htable_encode_wire(t, &wire, e) == ST_OK;
    *len = wire.len;
    bytes_free(&wire);
    return ok;
}

/* A copy the broker would refuse or that cannot be framed: kept without publishing. */
static bool copy_sendable(struct run *run, struct item *it, char *why, size_t n)
{
    const struct bytes *uid = props_string(&it->out.props, PROP_user_id);
    const char *user = conn_user(run->c);
    if (uid && user && !bytes_eq_cstr(uid, user)) {
        snprintf(why, n,
                 "its user_id property is %.60s but dlqx is connected as %.60s: the broker "
                 "would refuse the copy (clear it with --with user_id=)",
                 rr_cs(uid), user);
        return false;
    }
    size_t wire_len = 0;
    struct error e;
    bool ok = headers_wire_len(run, it->out.headers, &wire_len, &e);
    int frame_max = amqp_get_frame_max(run->st);
    if (ok && frame_max > 0 && wire_len + FRAME_SLACK > (size_t)frame_max) {
        snprintf(why, n, "its headers (%zu bytes) do not fit one frame (%d bytes)", wire_len,
                 frame_max);
        ok = false;
    } else if (!ok)
        snprintf(why, n, "its headers cannot be encoded: %.180s", e.msg);
    return ok && exchange_exists(run, &it->out.exchange, why, n);
}

static bool publish_one(struct run *run, struct item *it)
{
    amqp_basic_properties_t p;
    props_to_amqp(&it->out.props, it->out.headers, it->out.headers_present, &run->pub_pool, &p);
    amqp_bytes_t ex = {it->out.exchange.len, it->out.exchange.data};
    amqp_bytes_t rk = {it->out.routing_key.len, it->out.routing_key.data};
    amqp_bytes_t body = {it->out.body.len, it->out.body.data};
    /* Into the batch (conn_batch): the caller writes the whole batch with one send. */
    int rc = conn_batch_publish(run->c, &run->batch, PUB_CHANNEL, ex, rk, true, &p, body);
    recycle_amqp_pool(&run->pub_pool); /* the batch holds the encoded frames */
    if (rc != AMQP_STATUS_OK) {
        struct error e;
        enum conn_err k;
        conn_check_status(run->c, rc, "publishing a copy", &k, &e);
        /* Perhaps sent: it is in flight as far as anyone can tell. */
        it->state = IT_IN_FLIGHT;
        it->pub_seq = ++run->next_pub_seq;
        run->in_flight++;
        rr_connection_lost(run, e.msg);
        return false;
    }
    it->state = IT_IN_FLIGHT;
    it->pub_seq = ++run->next_pub_seq;
    run->in_flight++;
    run->published++;
    /* Only what a return is matched by is kept. */
    htable_free(it->out.headers);
    it->out.headers = htable_new();
    bytes_free(&it->out.body);
    return true;
}

/* Adds the tokens earned since the last call at the current rate, capped at its burst, and
 * returns that rate (0: unpaced). */
static double pace_refill(struct run *run)
{
    double now = clock_mono_s();
    double rate = replay_pace_rate(run->o, run->published, NULL);
    if (rate > 0) {
        run->pace_tokens += (now - run->pace_last) * rate;
        double cap = (double)replay_pace_burst(rate);
        if (run->pace_tokens > cap)
            run->pace_tokens = cap;
    }
    run->pace_last = now;
    return rate;
}

/* How long the loop may wait for the next token (ms): 100 when unpaced. */
int rr_pace_wait_ms(struct run *run)
{
    double rate = replay_pace_rate(run->o, run->published, NULL);
    if (rate <= 0)
        return 100;
    if (run->pace_tokens >= 1)
        return 5; /* a token is there: something else holds the copies (the window, a pause) */
    double ms = ceil((1 - run->pace_tokens) / rate * 1000);
    return ms < 1 ? 1 : ms > 100 ? 100 : (int)ms;
}

/* Whether the canary holds item i back: nothing after it leaves (or is journaled) until it has
 * passed. */
static bool after_canary(const struct run *run, size_t i)
{
    return run->canary_item != SIZE_MAX && !run->canary_passed && i > run->canary_item;
}

/* The intents of the next items, written ahead of their publish and handed to the journal's
 * thread, which syncs them while the pass goes on reading confirms and the DLQ (a group
 * commit): a copy leaves only once the sync that holds its intent is done (send_some). At most
 * a window of items ahead of what is published (paced: a burst's worth), never past a canary
 * that has not passed. */
static void journal_ahead(struct run *run)
{
    if (run->next_journal < run->next_pending)
        run->next_journal = run->next_pending;
    double rate = replay_pace_rate(run->o, run->published, NULL);
    size_t ahead = rate > 0 ? (size_t)replay_pace_burst(rate) : run->window;
    size_t start = run->next_journal, end = start;
    while (end < run->n_items && end - run->next_pending < ahead && !after_canary(run, end))
        end++;
    if (end == start)
        return;
    for (size_t i = start; i < end; i++) {
        struct item *it = run->items[i];
        char why[240];
        it->seq = ++run->seq;
        journal_intent(run, it);
        if (!it->is_delete && !copy_sendable(run, it, why, sizeof why))
            rr_settle(run, it, JR_KEPT, why);
    }
    uint64_t ticket = journal_commit(run->o->journal);
    for (size_t i = start; i < end; i++)
        run->items[i]->jticket = ticket;
    run->next_journal = end;
}

/* Publishes (or, for deletes, acks) the next pending items that fit the window and the rate
 * and whose intents are on disk (journal_ahead writes them first). */
void rr_send_some(struct run *run)
{
    run->awaiting_sync = false;
    if (run->cancelled || run->paused || !run->pub_alive || !run->read_alive || run->blocked)
        return;
    if (run->canary_waiting)
        return;
    journal_ahead(run);
    uint64_t durable = 0;
    struct error jerr;
    if (journal_durable(run->o->journal, &durable, &jerr) != ST_OK)
        rr_journal_failed(run, &jerr);
    if (run->journal_failed) {
        run->cancelled = true;
        rr_set_end(run, RE_CANCELLED);
        for (size_t i = run->next_pending; i < run->next_journal; i++)
            if (run->items[i]->state == IT_PENDING)
                rr_settle(run, run->items[i], JR_KEPT, "the journal could not be written");
        run->next_pending = run->next_journal;
        return;
    }
    size_t start = run->next_pending;
    size_t end = start;
    uint64_t room = run->window > run->in_flight ? run->window - run->in_flight : 0;
    double rate = pace_refill(run);
    if (rate > 0) {
        if (run->pace_tokens < 1)
            return;
        uint64_t allowed = (uint64_t)run->pace_tokens;
        if (room > allowed)
            room = allowed;
        /* A batch keeps to one step of the ramp: the next step's rate starts with its own. */
        uint64_t step_left;
        replay_pace_rate(run->o, run->published, &step_left);
        if (room > step_left)
            room = step_left;
    }
    while (end < run->next_journal && room > 0) {
        struct item *it = run->items[end];
        if (after_canary(run, end))
            break; /* nothing after the canary until it has passed */
        if (it->jticket > durable) {
            run->awaiting_sync = true; /* the pump wakes when the journal's sync is done */
            break;
        }
        end++;
        if (!it->is_delete && it->state == IT_PENDING)
            room--;
        if (run->canary_item != SIZE_MAX && !run->canary_passed && end - 1 == run->canary_item)
            break;
    }
    if (end == start)
        return;
    /* The batch leaves in full segments (conn_cork), not one publish a segment. */
    conn_cork(run->c, true);
    for (size_t i = start; i < end && run->pub_alive; i++) {
        struct item *it = run->items[i];
        run->next_pending = i + 1;
        if (it->state != IT_PENDING)
            continue;
        if (it->is_delete) {
            rr_ack(run, it->delivery_tag);
            it->confirmed = true; /* nothing to confirm: given back, it is only removed again */
            rr_acked(run, it);
            continue;
        }
        if (i == run->canary_item) {
            run->r->canary_sent = true;
            run->canary_id = bytes_copy(&it->out.id);
        }
        if (!publish_one(run, it))
            break;
        if (rate > 0)
            run->pace_tokens -= 1;
    }
    int rc = conn_batch_flush(run->c, &run->batch);
    if (rc != AMQP_STATUS_OK) {
        /* Any of the batch may have been sent: they stay in flight, settled unknown. */
        struct error e;
        enum conn_err k;
        conn_check_status(run->c, rc, "publishing a copy", &k, &e);
        rr_connection_lost(run, e.msg);
    }
    rr_flush_acks(run);
    conn_cork(run->c, false);
}
