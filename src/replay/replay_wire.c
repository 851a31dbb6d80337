/*
 * replay_wire: the broker side of a replay pass — taking dead letters from the DLQ (a
 * consumer holding them, or one basic.get at a time for a quorum queue near its delivery
 * limit), the frame pump, publisher confirms and returns matched to their copies, and the
 * round trip that proves the broker has processed the dead letters' acks.
 */
#include "replay.h"

#include <inttypes.h>
#include <math.h>
#include <poll.h>
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

/* ---- reading the DLQ -------------------------------------------------------------------- */

static int64_t run_now_ms(const struct run *run)
{
    return run->now_fixed ? run->now_fixed_ms : clock_real_ms();
}

static const struct bytes *decoded_id(const struct run *run, const struct message *m,
                                      struct decoded *d)
{
    decode_message_ex(m, run_now_ms(run), DECODE_NO_BODY, d);
    return &d->env->id;
}

static amqp_bytes_t consumer_tag(uint32_t no, char *buf, size_t n);

/* A dead letter whose copy an earlier attempt had confirmed, given back by the queue (its
 * removal was lost with the node, or held back by the queue's client when the channel closed):
 * it is only removed, never sent again nor selected twice — looked for before the caller's
 * selection, which may no longer hold it (a plan took it in the earlier attempt). */
static bool confirmed_given_back(struct run *run, const struct message *m, uint64_t pos,
                                 struct item *it)
{
    if (run->attempt < 2 || !run->confirmed_waiting || run->kind == QK_STREAM)
        return false;
    char sha[65];
    sha256_hex(m->body.len ? (const void *)m->body.data : "", m->body.len, sha);
    struct decoded d;
    bool was_done = false;
    bool found = rr_confirmed_found_again(run, decoded_id(run, m, &d), sha, &was_done);
    if (found) {
        it->out.old_id = bytes_copy(&d.env->id);
        memcpy(it->old_sha, sha, sizeof it->old_sha);
        it->is_delete = true;
        /* Counted done once: if its earlier outcome was unknown, done now (and re-sent in the
         * report's equation, as a copy found again is). */
        it->removal_again = was_done;
        if (!was_done)
            run->r->resent++;
        if (run->o->confirmed_again)
            run->o->confirmed_again(run->o->ctx, &it->out.old_id, sha, pos);
    }
    decoded_free(&d);
    return found;
}

/* A message taken from the DLQ: decide (select), or hold it. */
static void on_delivery(struct run *run, struct message *m, uint64_t tag, bool current)
{
    struct replay_report *r = run->r;
    r->taken++;
    uint64_t pos = r->taken - run->taken_base; /* in this attempt's reading of the DLQ */
    if (run->kind == QK_STREAM) {
        run->stream_last_tag = tag;
        if (++run->stream_unacked >= STREAM_CREDIT / 2) {
            amqp_basic_ack(run->st, READ_CHANNEL, tag, 1);
            run->stream_unacked = 0;
        }
    }
    if (pos > run->total || run->reading_done) {
        /* Arrived after the pass began: not part of it; held and given back. It may be the
         * canary coming back. */
        if (current)
            run->current_held++;
        if (r->canary_sent && !run->canary_passed && run->canary_id.len) {
            struct decoded d;
            if (bytes_eq(decoded_id(run, m, &d), &run->canary_id))
                r->canary_back = true;
            decoded_free(&d);
        }
        message_free(m);
        return;
    }
    struct item *it = xcalloc(1, sizeof *it);
    char why[240] = "";
    bool back = confirmed_given_back(run, m, pos, it);
    enum replay_action a =
        back ? RA_DELETE : run->o->select(run->o->ctx, m, pos, &it->out, why, sizeof why);
    if (!back && (a == RA_SEND || a == RA_DELETE || a == RA_KEEP)) {
        r->selected++;
        if (run->expect && r->selected >= run->expect) {
            run->reading_done = true;
            rr_set_end(run, RE_ALL_FOUND);
        }
    }
    /* A stream keeps every message: a copy can be sent, nothing can be removed. */
    if (run->kind == QK_STREAM &&
        (a == RA_DELETE || (a == RA_SEND && it->out.mode == RESTAMP_MOVE))) {
        a = RA_KEEP;
        snprintf(why, sizeof why, "a stream cannot remove a message: nothing was changed");
    }
    if (a == RA_SEND || a == RA_DELETE) {
        it->position = pos;
        if (!back) {
            it->is_delete = a == RA_DELETE;
            if (!it->is_delete && it->out.old_body_sha256[0])
                memcpy(it->old_sha, it->out.old_body_sha256, sizeof it->old_sha);
            else
                sha256_hex(m->body.len ? (const void *)m->body.data : "", m->body.len, it->old_sha);
            if (it->is_delete) {
                outgoing_free(&it->out);
                memset(&it->out, 0, sizeof it->out);
                struct decoded d;
                it->out.old_id = bytes_copy(decoded_id(run, m, &d));
                decoded_free(&d);
            } else {
                it->diff = restamp_changes_text(m, &it->out, &it->diff_len);
                if (!it->diff)
                    it->diff_len = 0;
            }
            if (rr_left_found_again(run, &it->out.old_id, it->old_sha)) {
                /* Left unknown by an earlier attempt and still here: sent again, not selected
                 * twice (its earlier copy may be a duplicate: pending in the journal). */
                r->selected--;
                r->resent++;
            }
        }
        it->delivery_tag = tag;
        it->state = IT_PENDING;
        xgrow((void **)&run->items, &run->cap_items, run->n_items + 1, sizeof *run->items);
        run->items[run->n_items++] = it;
        uint64_t active = rr_active(run);
        if (active > r->peak_active)
            r->peak_active = active;
        if (run->canary_wanted && run->canary_item == SIZE_MAX && !it->is_delete)
            run->canary_item = run->n_items - 1;
    } else {
        if (current)
            run->current_held++; /* skipped or kept: held until the channel closes */
        if (a == RA_KEEP) {
            r->kept++;
            if (run->o->reopen) {
                /* A new attempt would select it again (and keep it again). */
                char sha[65];
                struct decoded d;
                sha256_hex(m->body.len ? (const void *)m->body.data : "", m->body.len, sha);
                rr_left_add(run, decoded_id(run, m, &d), sha, false);
                decoded_free(&d);
                run->kept_select_attempt++;
            }
            rr_add_reason(r, why[0] ? why : "it could not be sent");
            if (run->o->outcome) {
                struct decoded d;
                run->o->outcome(run->o->ctx, 0, pos, decoded_id(run, m, &d), JR_KEPT, why);
                decoded_free(&d);
            }
        }
        outgoing_free(&it->out);
        free(it);
        if (a == RA_STOP) {
            run->reading_done = true;
            rr_set_end(run, RE_STOPPED);
        }
    }
    message_free(m);
    if (!run->reading_done && pos >= run->total)
        run->reading_done = true;
}

static void lost_channel(struct run *run, amqp_channel_t ch, const char *why)
{
    if (ch == READ_CHANNEL)
        run->read_alive = false;
    else
        run->pub_alive = false;
    if (!run->err.msg[0])
        error_set(&run->err, ST_EIO, "%s", why);
    rr_set_end(run, RE_CHANNEL_CLOSED);
    run->reading_done = true;
}

/* ---- confirms and returns --------------------------------------------------------------- */

static struct item *flight_find(struct run *run, uint64_t pub_seq)
{
    for (size_t i = run->first_open; i < run->n_items; i++) {
        struct item *it = run->items[i];
        if (it->state == IT_IN_FLIGHT && it->pub_seq == pub_seq)
            return it;
        if (it->state == IT_PENDING)
            break;
    }
    return NULL;
}

static void confirmed(struct run *run, struct item *it, bool ack)
{
    run->in_flight--;
    if (!ack) {
        rr_settle(run, it, JR_KEPT,
                  "the broker refused the copy (basic.nack): the target may be full "
                  "(x-overflow reject-publish) or out of resources; the dead letter stays");
        return;
    }
    if (it->returned) {
        rr_settle(run, it, JR_KEPT, it->reason ? it->reason : "unroutable");
        return;
    }
    if (run->kind == QK_STREAM) {
        rr_settle(run, it, JR_DONE, NULL);
        return;
    }
    if (!run->read_alive) {
        rr_settle(run, it, JR_UNKNOWN,
                  "the copy is confirmed at the target, but the reading channel was closed before "
                  "the dead letter could be removed: it is back in the DLQ (a duplicate)");
        return;
    }
    it->confirmed = true;
    rr_ack(run, it->delivery_tag);
    rr_acked(run, it);
}

static void on_confirm(struct run *run, uint64_t tag, bool multiple, bool ack)
{
    if (!multiple) {
        struct item *it = flight_find(run, tag);
        if (it)
            confirmed(run, it, ack);
        return;
    }
    for (size_t i = run->first_open; i < run->n_items; i++) {
        struct item *it = run->items[i];
        if (it->state == IT_PENDING)
            break;
        if (it->state == IT_IN_FLIGHT && it->pub_seq <= tag)
            confirmed(run, it, ack);
    }
}

static void on_return(struct run *run, const amqp_basic_return_t *ret, const amqp_message_t *msg)
{
    char sha[65];
    sha256_hex(msg->body.bytes, msg->body.len, sha);
    struct bytes ex = {.data = ret->exchange.bytes, .len = ret->exchange.len};
    struct bytes rk = {.data = ret->routing_key.bytes, .len = ret->routing_key.len};
    for (size_t i = run->first_open; i < run->n_items; i++) {
        struct item *it = run->items[i];
        if (it->state == IT_PENDING)
            break;
        if (it->state != IT_IN_FLIGHT || it->returned)
            continue;
        if (!bytes_eq(&it->out.exchange, &ex) || !bytes_eq(&it->out.routing_key, &rk) ||
            strcmp(it->out.body_sha256, sha) != 0)
            continue;
        it->returned = true;
        char text[120];
        snprintf(text, sizeof text, "%.*s",
                 (int)(ret->reply_text.len > 100 ? 100 : ret->reply_text.len),
                 (const char *)ret->reply_text.bytes);
        for (char *p = text; *p; p++)
            if ((unsigned char)*p < 0x20 || (unsigned char)*p == 0x7f)
                *p = '?';
        free(it->reason);
        it->reason = xasprintf(
            "unroutable: the broker returned the copy (%u %s): nothing is bound to %s%s%s "
            "with routing key %s; the dead letter stays",
            ret->reply_code, text, ex.len ? "exchange " : "the default exchange",
            ex.len ? rr_cs(&it->out.exchange) : "", "", rr_cs(&it->out.routing_key));
        return;
    }
}

/* ---- refused publishes ------------------------------------------------------------------ */

/* The quoted name after `what` in a broker's reply text ("... exchange 'NAME' in vhost ..."),
 * into out; false when it is not there. */
static bool quoted_after(const amqp_bytes_t *text, const char *what, const char *until,
                         struct bytes *out)
{
    const char *s = text->bytes;
    size_t n = text->len, wl = strlen(what), ul = strlen(until);
    for (size_t i = 0; i + wl <= n; i++) {
        if (memcmp(s + i, what, wl) != 0)
            continue;
        size_t start = i + wl;
        for (size_t k = start; k + ul <= n; k++)
            if (memcmp(s + k, until, ul) == 0) {
                out->data = (unsigned char *)(uintptr_t)(s + start);
                out->len = k - start;
                return true;
            }
        return false;
    }
    return false;
}

/* The publishing channel was closed with 403 ACCESS_REFUSED: the user may not write to an
 * exchange (or, with topic authorisation, a routing key). A channel handles its publishes in
 * order and a permission is the same for every publish to one resource, so every copy in
 * flight to the refused exchange was refused too (those after the first were dropped with the
 * closed channel): none is at its target, and the dead letters stay. Copies to other exchanges
 * may have been accepted before the close: those stay in flight and are settled unknown. */
static void refused_copies(struct run *run, const amqp_bytes_t *text, const char *why)
{
    struct bytes ex = {0}, rk = {0};
    bool by_ex = quoted_after(text, "exchange '", "' in vhost", &ex);
    bool by_rk = by_ex && quoted_after(text, "topic '", "' in exchange", &rk);
    if (by_ex && ex.len == strlen("amq.default") && memcmp(ex.data, "amq.default", ex.len) == 0)
        ex.len = 0; /* the default exchange, by its name in permissions */
    if (!by_ex) {
        /* Not said which: only when every copy in flight goes to one exchange is it that. */
        const struct bytes *one = NULL;
        for (size_t i = run->first_open; i < run->n_items; i++) {
            struct item *it = run->items[i];
            if (it->state != IT_IN_FLIGHT)
                continue;
            if (one && !bytes_eq(one, &it->out.exchange))
                return;
            one = &it->out.exchange;
        }
        if (!one)
            return;
        ex = *one;
    }
    char *reason = xasprintf("the broker refused the copy: %s: user %s may not publish there; "
                             "nothing was sent and the dead letter stays",
                             why, conn_user(run->c) ? conn_user(run->c) : "?");
    for (size_t i = run->first_open; i < run->n_items; i++) {
        struct item *it = run->items[i];
        if (it->state != IT_IN_FLIGHT || !bytes_eq(&it->out.exchange, &ex) ||
            (by_rk && !bytes_eq(&it->out.routing_key, &rk)))
            continue;
        run->in_flight--;
        rr_settle(run, it, JR_REFUSED, reason);
    }
    free(reason);
}

/* ---- the frame pump --------------------------------------------------------------------- */

void rr_connection_lost(struct run *run, const char *why)
{
    run->read_alive = run->pub_alive = false;
    if (!run->err.msg[0])
        error_set(&run->err, ST_EIO, "%s", why);
    run->kind_seen = CONN_LOST;
    rr_set_end(run, RE_CONNECTION_LOST);
    run->reading_done = true;
}

static void probe_answered(struct run *run);

/* Reads one frame (waiting at most timeout_ms) and handles it. Returns false on timeout. */
bool rr_pump(struct run *run, int timeout_ms)
{
    /* The memory of frames already handled. Not while frames are queued (rabbitmq-c keeps
     * those a synchronous call read past): releasing then walks the whole queue for each
     * channel, and would on every frame. */
    if (!amqp_frames_enqueued(run->st))
        amqp_maybe_release_buffers(run->st);
    int wake = run->awaiting_sync ? journal_wake_fd(run->o->journal) : -1;
    if (wake >= 0 && timeout_ms > 0 && !amqp_frames_enqueued(run->st) &&
        !amqp_data_in_buffer(run->st)) {
        /* A copy waits for its intent's sync (the journal's thread): wake for that too. Then
         * rabbitmq-c is asked without waiting (it still keeps the heartbeats). */
        struct pollfd pf[2] = {{amqp_get_sockfd(run->st), POLLIN, 0}, {wake, POLLIN, 0}};
        int n = poll(pf, 2, timeout_ms);
        if (n > 0 && (pf[1].revents & POLLIN) && !(pf[0].revents & POLLIN))
            return false;
        timeout_ms = 0;
    }
    amqp_frame_t f;
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    int rc = amqp_simple_wait_frame_noblock(run->st, &f, &tv);
    if (rc == AMQP_STATUS_TIMEOUT)
        return false;
    if (rc != AMQP_STATUS_OK) {
        struct error e;
        enum conn_err k;
        conn_check_status(run->c, rc, "replaying", &k, &e);
        rr_connection_lost(run, e.msg);
        return true;
    }
    run->last_frame = clock_mono_s();
    rr_dispatch(run, &f);
    return true;
}

void rr_dispatch(struct run *run, const amqp_frame_t *fp)
{
    const amqp_frame_t f = *fp;
    if (f.frame_type != AMQP_FRAME_METHOD)
        return; /* a stray content frame: not ours */
    amqp_method_number_t id = f.payload.method.id;
    void *dec = f.payload.method.decoded;
    if (id == AMQP_BASIC_DELIVER_METHOD && f.channel == READ_CHANNEL) {
        const amqp_basic_deliver_t *d = dec;
        char current_tag[32];
        consumer_tag(run->consumer_no, current_tag, sizeof current_tag);
        bool current = d->consumer_tag.len == strlen(current_tag) &&
                       memcmp(d->consumer_tag.bytes, current_tag, d->consumer_tag.len) == 0;
        amqp_envelope_t e;
        memset(&e, 0, sizeof e);
        e.channel = f.channel;
        e.delivery_tag = d->delivery_tag;
        e.redelivered = d->redelivered;
        e.exchange = d->exchange;
        e.routing_key = d->routing_key;
        void *owned = NULL;
        amqp_rpc_reply_t rep = rr_read_content(run, f.channel, &e.message, &owned);
        if (rep.reply_type != AMQP_RESPONSE_NORMAL) {
            struct error er;
            enum conn_err k;
            conn_check_reply(run->c, f.channel, rep, "reading a message", &k, &er);
            if (conn_alive(run->c))
                lost_channel(run, READ_CHANNEL, er.msg);
            else
                rr_connection_lost(run, er.msg);
            return;
        }
        struct message m;
        peek_message_from_envelope(&e, run->o->queue, run_now_ms(run), &m);
        free(owned);
        on_delivery(run, &m, e.delivery_tag, current);
        return;
    }
    if (f.channel == READ_CHANNEL && id == AMQP_BASIC_QOS_OK_METHOD) {
        probe_answered(run);
        return;
    }
    if (f.channel == PUB_CHANNEL && id == AMQP_BASIC_ACK_METHOD) {
        const amqp_basic_ack_t *a = dec;
        on_confirm(run, a->delivery_tag, a->multiple, true);
        return;
    }
    if (f.channel == PUB_CHANNEL && id == AMQP_BASIC_NACK_METHOD) {
        const amqp_basic_nack_t *a = dec;
        on_confirm(run, a->delivery_tag, a->multiple, false);
        return;
    }
    if (f.channel == PUB_CHANNEL && id == AMQP_BASIC_RETURN_METHOD) {
        amqp_basic_return_t ret = *(const amqp_basic_return_t *)dec;
        amqp_message_t msg;
        amqp_rpc_reply_t rep = amqp_read_message(run->st, f.channel, &msg, 0);
        if (rep.reply_type != AMQP_RESPONSE_NORMAL) {
            rr_connection_lost(run, "the connection failed while reading a returned copy");
            return;
        }
        on_return(run, &ret, &msg);
        amqp_destroy_message(&msg);
        return;
    }
    if (id == AMQP_CHANNEL_CLOSE_METHOD || id == AMQP_CONNECTION_CLOSE_METHOD) {
        amqp_rpc_reply_t reply;
        memset(&reply, 0, sizeof reply);
        reply.reply_type = AMQP_RESPONSE_SERVER_EXCEPTION;
        reply.reply = f.payload.method;
        struct error er;
        enum conn_err k;
        const char *what = f.channel == PUB_CHANNEL ? "publishing a copy" : "reading the DLQ";
        conn_check_reply(run->c, f.channel, reply, what, &k, &er);
        run->kind_seen = k;
        if (id == AMQP_CHANNEL_CLOSE_METHOD && f.channel == PUB_CHANNEL && k == CONN_ACCESS)
            refused_copies(run, &((const amqp_channel_close_t *)dec)->reply_text, er.msg);
        if (id == AMQP_CONNECTION_CLOSE_METHOD)
            rr_connection_lost(run, er.msg);
        else
            lost_channel(run, f.channel, er.msg);
        return;
    }
    if (id == AMQP_BASIC_CANCEL_METHOD && f.channel == READ_CHANNEL) {
        lost_channel(run, READ_CHANNEL,
                     "the broker cancelled dlqx's consumer (the queue was deleted?)");
        return;
    }
    if (id == AMQP_CONNECTION_BLOCKED_METHOD)
        run->blocked = true;
    else if (id == AMQP_CONNECTION_UNBLOCKED_METHOD)
        run->blocked = false;
}

/* ---- proving removals ------------------------------------------------------------------- */

void rr_ack(struct run *run, uint64_t tag)
{
    xgrow((void **)&run->ack_pending, &run->cap_ack_pending, run->n_ack_pending + 1,
          sizeof *run->ack_pending);
    run->ack_pending[run->n_ack_pending++] = tag;
}

static bool ack_bit(const struct run *run, uint64_t tag)
{
    return tag / 8 < run->cap_ack_bits && (run->ack_bits[tag / 8] >> (tag % 8)) & 1;
}

static int cmp_tag(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

void rr_flush_acks(struct run *run)
{
    size_t n = run->n_ack_pending;
    run->n_ack_pending = 0;
    if (!n || !run->read_alive)
        return; /* unsent: unproven, as a removal sent on a channel that failed */
    uint64_t *t = run->ack_pending;
    qsort(t, n, sizeof *t, cmp_tag);
    for (size_t i = 0; i < n; i++) {
        size_t byte = (size_t)(t[i] / 8);
        if (byte >= run->cap_ack_bits) {
            size_t old = run->cap_ack_bits;
            xgrow((void **)&run->ack_bits, &run->cap_ack_bits, byte + 1, 1);
            memset(run->ack_bits + old, 0, run->cap_ack_bits - old);
        }
        run->ack_bits[byte] |= (unsigned char)(1u << (t[i] % 8));
    }
    while (ack_bit(run, run->ack_floor + 1))
        run->ack_floor++;
    /* Every tag up to the floor is removed (now or before): one multiple ack up to the highest
     * gathered tag below it removes exactly those gathered (the others are gone already). */
    size_t below = 0;
    while (below < n && t[below] <= run->ack_floor)
        below++;
    size_t i = 0;
    if (below >= 2) {
        amqp_basic_ack(run->st, READ_CHANNEL, t[below - 1], 1);
        i = below;
    }
    for (; i < n; i++)
        amqp_basic_ack(run->st, READ_CHANNEL, t[i], 0);
}

void rr_acks_reset(struct run *run)
{
    run->n_ack_pending = 0;
    run->ack_floor = 0;
    if (run->ack_bits)
        memset(run->ack_bits, 0, run->cap_ack_bits);
}

void rr_acked(struct run *run, struct item *it)
{
    it->state = IT_ACKED;
    it->ack_no = ++run->acks_sent;
}

bool rr_acks_unproven(const struct run *run)
{
    return run->acks_proven < run->acks_sent;
}

/* Settles the removals numbered up to upto: done when proven, else unknown with why. Only
 * items already sent can have been acked: those from next_pending on are still waiting (a
 * bulk pass may have tens of thousands of them; scanning them every time is quadratic). */
static void settle_acked(struct run *run, uint64_t upto, bool proven, const char *why)
{
    for (size_t i = run->first_open; i < run->next_pending && i < run->n_items; i++) {
        struct item *it = run->items[i];
        if (it->state == IT_ACKED && it->ack_no <= upto)
            rr_settle(run, it, proven ? JR_DONE : JR_UNKNOWN,
                      proven ? NULL
                      : why  ? why
                      : it->is_delete
                          ? "the connection failed before the broker confirmed the "
                            "removal: the dead letter may still be in the DLQ"
                          : "the copy is confirmed at the target; the connection failed "
                            "before the broker confirmed the dead letter's removal: if "
                            "it is still in the DLQ it is a duplicate");
    }
    if (upto > run->acks_proven)
        run->acks_proven = upto;
    /* The outcomes go to disk with the journal's next commit (the next intents', or the
     * pass's end), not waited for and not asked for here — fewer fsyncs beside the broker's:
     * an outcome lost in a crash leaves its intent pending, never a loss. */
    struct error jerr;
    uint64_t durable;
    if (journal_durable(run->o->journal, &durable, &jerr) != ST_OK)
        rr_journal_failed(run, &jerr);
}

static void probe_answered(struct run *run)
{
    if (!run->probe_out)
        return; /* the answer to dlqx's own basic.qos at the start is read by its call */
    run->probe_out = false;
    settle_acked(run, run->probe_upto, true, NULL);
}

void rr_acks_unknown(struct run *run, const char *why)
{
    /* A probe still out stays out: its answer, if it comes, proves nothing new. */
    settle_acked(run, run->acks_sent, false, why);
    if (run->probe_out)
        run->probe_given_up = true;
}

bool rr_probe_awaited(const struct run *run)
{
    return run->probe_out && !run->probe_given_up && run->read_alive;
}

/* Sends basic.qos with the current limit, without waiting: its qos-ok proves every removal
 * sent before it (one probe is out at a time, so each qos-ok is matched to its own). */
static void send_probe(struct run *run, const char *doing)
{
    rr_flush_acks(run); /* the probe proves what was sent before it */
    amqp_basic_qos_t q = {.prefetch_size = 0, .prefetch_count = run->prefetch, .global = 0};
    int rc = amqp_send_method(run->st, READ_CHANNEL, AMQP_BASIC_QOS_METHOD, &q);
    if (rc != AMQP_STATUS_OK) {
        struct error e;
        enum conn_err k;
        conn_check_status(run->c, rc, doing, &k, &e);
        rr_connection_lost(run, e.msg);
        settle_acked(run, run->acks_sent, false, NULL);
        return;
    }
    run->probe_out = true;
    run->probe_upto = run->acks_sent;
}

void rr_sync_acks(struct run *run)
{
    if (!rr_acks_unproven(run))
        return;
    if (!run->read_alive) {
        settle_acked(run, run->acks_sent, false, NULL);
        return;
    }
    if (run->probe_out || run->probe_upto >= run->acks_sent)
        return;
    send_probe(run, "confirming the removals");
}

uint64_t rr_active(const struct run *run)
{
    return (uint64_t)(run->n_items - run->next_pending) + run->in_flight;
}

static amqp_bytes_t consumer_tag(uint32_t no, char *buf, size_t n)
{
    snprintf(buf, n, "dlqx-replay-%" PRIu32, no);
    return amqp_cstring_bytes(buf);
}

void rr_renew_consumer(struct run *run)
{
    if (!run->renewing || !run->read_alive || run->reading_done)
        return;
    /* Half of the current consumer's limit is held for good: a fresh consumer before it
     * fills. Not while half a limit's copies wait (they drain as copies go out): what the new
     * consumer is sent comes on top of them and of what the old one still sends before its
     * cancel arrives (at most the other half), so the copies unsettled stay within two
     * limits. */
    uint64_t active = rr_active(run);
    if (run->current_held < run->renew_every || active >= run->renew_every)
        return;
    char old_tag[32], new_tag[32];
    amqp_basic_cancel_t cancel = {consumer_tag(run->consumer_no, old_tag, sizeof old_tag), 1};
    amqp_basic_consume_t consume = {.ticket = 0,
                                    .queue = amqp_cstring_bytes(run->o->queue),
                                    .consumer_tag =
                                        consumer_tag(run->consumer_no + 1, new_tag, sizeof new_tag),
                                    .no_local = 0,
                                    .no_ack = 0,
                                    .exclusive = 0,
                                    .nowait = 1,
                                    .arguments = amqp_empty_table};
    /* No replies (nowait): nothing for the pump to match. A failure closes the channel. */
    int rc = amqp_send_method(run->st, READ_CHANNEL, AMQP_BASIC_CANCEL_METHOD, &cancel);
    if (rc == AMQP_STATUS_OK)
        rc = amqp_send_method(run->st, READ_CHANNEL, AMQP_BASIC_CONSUME_METHOD, &consume);
    if (rc != AMQP_STATUS_OK) {
        struct error e;
        enum conn_err k;
        conn_check_status(run->c, rc, "renewing the reading consumer", &k, &e);
        rr_connection_lost(run, e.msg);
        return;
    }
    run->consumer_no++;
    run->r->read_consumers++;
    run->current_held = 0;
}

/* ---- reading modes ---------------------------------------------------------------------- */

enum status rr_start_consume(struct run *run, enum conn_err *kind, struct error *err)
{
    uint16_t prefetch = 0;
    if (run->kind == QK_STREAM) {
        prefetch = STREAM_CREDIT;
    } else if (run->kind == QK_CLASSIC && run->total > 4 * (uint64_t)run->window) {
        /* Four windows: room for a window in flight and the next ones read. Renewed
         * (rr_renew_consumer) each time half of it is held for good. */
        uint64_t want = 4 * (uint64_t)run->window;
        prefetch = want > 65535 ? 65535 : (uint16_t)want;
        run->renewing = true;
        run->renew_every = prefetch / 2 ? prefetch / 2 : 1;
    } else if (run->total <= 65535) {
        prefetch = (uint16_t)run->total; /* everything there, and no more */
    } else if (run->kind == QK_QUORUM) {
        prefetch = 65535;
    }
    run->prefetch = prefetch;
    run->consumer_no = 1;
    run->r->read_consumers = 1;
    amqp_basic_qos(run->st, READ_CHANNEL, 0, prefetch, 0);
    enum status st = conn_check_reply(run->c, READ_CHANNEL, amqp_get_rpc_reply(run->st),
                                      "setting the prefetch", kind, err);
    if (st != ST_OK)
        return st;
    amqp_table_entry_t arg;
    amqp_table_t args = amqp_empty_table;
    if (run->kind == QK_STREAM) {
        arg.key = amqp_cstring_bytes("x-stream-offset");
        arg.value.kind = AMQP_FIELD_KIND_UTF8;
        arg.value.value.bytes = amqp_cstring_bytes("first");
        args.num_entries = 1;
        args.entries = &arg;
    }
    char tag[32];
    amqp_basic_consume(run->st, READ_CHANNEL, amqp_cstring_bytes(run->o->queue),
                       consumer_tag(run->consumer_no, tag, sizeof tag), 0, 0, 0, args);
    return conn_check_reply(run->c, READ_CHANNEL, amqp_get_rpc_reply(run->st),
                            "starting to read the DLQ", kind, err);
}

/* Quorum queues with a delivery limit: one basic.get at a time, stopping before a message
 * that a return would push over the limit (the rule peek follows). */
void rr_get_one(struct run *run)
{
    struct message m;
    uint64_t tag = 0;
    struct error er;
    enum conn_err k;
    enum peek_get g =
        peek_get_one(run->c, READ_CHANNEL, run->o->queue, run_now_ms(run), &m, &tag, &k, &er);
    if (g == PG_FAILED) {
        if (conn_alive(run->c))
            lost_channel(run, READ_CHANNEL, er.msg);
        else
            rr_connection_lost(run, er.msg);
        return;
    }
    if (g == PG_EMPTY) {
        run->reading_done = true;
        if (run->r->taken - run->taken_base < run->total)
            rr_set_end(run, RE_IDLE);
        return;
    }
    const struct hval *dcv = htable_get(m.headers, "x-delivery-count");
    int64_t dc = 0;
    if (dcv)
        hval_as_int64_lenient(dcv, &dc);
    int64_t limit = run->limit;
    bool at_risk = dc >= (limit > 0 ? limit - 1 : 0);
    uint64_t selected_before = run->r->selected;
    on_delivery(run, &m, tag, false); /* basic.get: no consumer */
    bool selected = run->r->selected > selected_before;
    if (at_risk && !selected && !run->o->force && !run->reading_done) {
        snprintf(run->r->detail, sizeof run->r->detail,
                 "stopped at message %llu: it has been delivered %lld times and the queue's "
                 "delivery limit is %lld — giving it back once more could make the broker "
                 "dead-letter or drop it (use --force to read past it)",
                 (unsigned long long)run->r->taken, (long long)dc, (long long)limit);
        run->reading_done = true;
        rr_set_end(run, RE_REFUSED_LIMIT);
    }
}
