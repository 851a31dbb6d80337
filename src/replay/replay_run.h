/*
 * replay_run: the state of one replay pass, shared by replay.c (the loop, publishing, the
 * journal's intents and outcomes) and replay_wire.c (reading the DLQ, the frame pump,
 * confirms, returns and proving acks). Internal to the replay module: nothing else includes it.
 */
#ifndef DLQX_REPLAY_RUN_H
#define DLQX_REPLAY_RUN_H

#include <stdbool.h>
#include <stdint.h>

#include "conn_batch.h"
#include "replay.h"
#include "util.h"

#define CHECK_CHANNEL 1 /* passive declares: a failure closes only this one */
#define READ_CHANNEL 2
#define PUB_CHANNEL 3
#define DEFAULT_WINDOW 1000
#define STREAM_CREDIT 2000
#define FRAME_SLACK 4096 /* headers must fit one frame with room for the rest of it */

enum item_state {
    IT_PENDING,   /* decided, not yet journaled/published */
    IT_IN_FLIGHT, /* published, no confirm yet */
    IT_ACKED,     /* copy confirmed (or a delete), dead letter acked, ack not yet proven */
    IT_SETTLED,   /* outcome written */
};

struct item {
    uint64_t seq;          /* journal seq */
    uint64_t position;     /* in the DLQ as read (select's position) */
    uint64_t delivery_tag; /* the dead letter on the reading channel */
    uint64_t pub_seq;      /* confirm sequence number */
    uint64_t ack_no;       /* which removal on the reading channel (IT_ACKED) */
    uint64_t jticket;      /* the journal commit holding its intent (journal_commit) */
    enum item_state state;
    bool is_delete;
    bool confirmed;      /* the broker confirmed its copy (or it is a delete) */
    bool removal_again;  /* its copy was confirmed in an earlier attempt: only removed */
    bool returned;       /* a basic.return came for it */
    struct outgoing out; /* body and headers freed once published */
    char old_sha[65];    /* the dead letter's body digest */
    char *diff;          /* the changed rows (compact JSON), for the intent; freed once
                            written */
    size_t diff_len;
    char *reason; /* why it was returned (a basic.return), or NULL */
};

struct run {
    struct conn *c;
    amqp_connection_state_t st;
    const struct replay_opts *o;
    struct replay_report *r;
    enum queue_kind kind;
    uint64_t total; /* messages there at the start */
    uint32_t window;
    struct item **items; /* every selected send/delete, in decision order */
    size_t n_items, cap_items;
    size_t next_pending; /* first IT_PENDING index (items are published in order) */
    size_t next_journal; /* first item whose intent is not yet written (>= next_pending) */
    bool awaiting_sync;  /* the next copy waits for its intent's sync: the pump wakes for it */
    size_t first_open;   /* first item not yet settled (outcome) */
    uint64_t in_flight;
    uint64_t next_pub_seq;
    struct conn_batch batch; /* the publishes of a batch, written with one send */
    amqp_pool_t pub_pool;    /* a copy's properties for rabbitmq-c, recycled after each (its
                                pages kept: a page allocated and zeroed a copy was 4% of the
                                client's instructions) */
    unsigned char *hdr_buf;  /* copy_sendable's encoding of a copy's headers (hdr_cap bytes) */
    size_t hdr_cap;
    uint64_t seq;
    uint64_t published;
    bool now_fixed; /* DLQX_NOW, read when the run started (not a getenv a message) */
    int64_t now_fixed_ms;
    /* Pacing (--rate, --ramp): a token bucket. Tokens come at the current step's rate and
     * are capped at replay_pace_burst() of it, so a wait never turns into a burst. */
    double pace_tokens, pace_last;
    bool reading_done, read_alive, pub_alive, cancelled, paused;
    /* Removals (acks on the reading channel) are proven by a basic.qos sent after them: the
     * broker answers it only once it has handled every frame before it on the channel. One
     * such probe is out at a time, sent without waiting; its qos-ok, read by the pump like
     * any other frame, settles every removal made before it. */
    uint16_t prefetch; /* the reading consumer's limit (a probe sets the same again) */
    /* Classic queues: the reading consumer is replaced by a fresh one (same limit) each time
     * renew_every of the messages it delivered are held for good, so those never use up its
     * limit. Only its own deliveries count (by consumer tag): what a cancelled consumer still
     * delivers would otherwise start new consumers while the old ones have credit left, and
     * the copies read ahead would grow with every renewal. */
    bool renewing;
    uint32_t consumer_no; /* the current consumer: tag "dlqx-replay-N" */
    uint64_t renew_every;
    uint64_t current_held; /* of the current consumer's deliveries, those held for good */
    uint64_t acks_sent;    /* removals sent */
    uint64_t acks_proven;  /* removals settled (proven, or given up on) */
    uint64_t probe_upto;   /* acks_sent when the probe out was sent */
    bool probe_out;        /* a probe awaits its qos-ok */
    bool probe_given_up;   /* ... and no answer came within the timeout: none will be sent */
    uint64_t stream_unacked, stream_last_tag;
    /* removals waiting to be sent (rr_ack), and what the reading channel has removed: a bit
     * for every delivery tag acked, every tag up to ack_floor acked (rr_flush_acks) */
    uint64_t *ack_pending;
    size_t n_ack_pending, cap_ack_pending;
    unsigned char *ack_bits;
    size_t cap_ack_bits; /* bytes */
    uint64_t ack_floor;
    /* canary */
    bool canary_wanted, canary_waiting, canary_passed;
    size_t canary_item;
    double canary_until;
    struct bytes canary_id;
    /* A quorum DLQ that said 0 messages and 0 consumers at the start: asked again in the
     * loop (count_step in replay.c) every quarter second until count_until, so a pass started
     * from the explorer does not hold the screen and Ctrl-C ends the wait at once. */
    bool counting;
    double count_until, count_next;
    /* What counting waits for: at least count_least messages, or (count_blank) anything but 0
     * messages and 0 consumers. A later attempt's count (count_opens) opens its reading when
     * it is done (rr_open_reading); a failure there is that attempt's loss, and the next one
     * follows a second later (reopen_pause). */
    uint32_t count_least;
    bool count_blank, count_opens, reopen_pause;
    /* checks */
    struct strbuf checked_exchanges; /* "\n"-separated names known to exist */
    bool blocked;
    double started, last_progress, last_frame;
    enum replay_end end;
    bool end_set;
    struct error err;  /* the first broker-side failure */
    struct error jerr; /* the first journal failure */
    bool journal_failed;
    enum conn_err kind_seen;
    /* Attempts (replay_attempt.c): this one's number (from 1), the report's taken when it
     * began (positions count from there), the selections still expected (o->expect in the
     * first; 0 — the whole queue — after), how the DLQ is read and its effective delivery
     * limit (-1: none). */
    uint32_t attempt;
    uint64_t taken_base;
    uint64_t expect;
    bool by_get;
    int64_t limit;
    /* The dead letters this attempt did not remove for sure (unknown, not sent, kept before
     * they were journaled): a new attempt gives them to o->again and counts again those
     * selected again; the unknown ones found again are re-sent (report.resent). */
    struct left {
        struct bytes id;
        char sha[65];
        bool unknown;
    } * left;
    size_t n_left, cap_left;
    uint64_t not_sent_attempt, kept_select_attempt;
    struct replay_plan *unknown_before; /* the earlier attempts' unknown ones, not yet found */
    /* Those whose copy the broker confirmed (done, or unknown with only the removal unproven):
     * a quorum queue may give one back (its removal was lost with the node, or held back by
     * the queue's client when the channel closed), and then it is removed, never sent again. */
    struct replay_plan *confirmed_before, *unknown_confirmed_before;
    size_t confirmed_waiting; /* in those two: each message of a later attempt is looked up */
    char gave_up[400];        /* why no further attempt was made, when that ended the pass */
};

/* How a pass ended: the first reason, unless a graver one comes after it (a connection lost
 * after every message was found still says the connection was lost). */

/* replay.c */
void rr_say(char *dst, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
const char *rr_cs(const struct bytes *b);
void rr_set_end(struct run *run, enum replay_end e);
void rr_add_reason(struct replay_report *r, const char *text);
void rr_settle(struct run *run, struct item *it, enum journal_result res, const char *reason);
void rr_advance_open(struct run *run);
/* A journal write failed: the pass stops sending (a write it cannot record could not be
 * named after a crash). */
void rr_journal_failed(struct run *run, const struct error *e);

void rr_item_free(struct item *it);

/* replay_send.c */
/* Writes the intents of the next items ahead (handed to the journal's thread to be synced) and
 * publishes (or, for deletes, acks) those that fit the window and the rate and whose intents
 * are on disk; sets awaiting_sync when the next one waits for its sync. */
void rr_send_some(struct run *run);
/* How long the loop may wait for the next token of the rate (ms): 100 when unpaced. */
int rr_pace_wait_ms(struct run *run);

/* replay_attempt.c */
/* Remembers a dead letter this attempt did not remove for sure (see struct left). */
void rr_left_add(struct run *run, const struct bytes *id, const char sha[65], bool unknown);
/* A dead letter selected in this attempt: whether an earlier attempt left it unknown (then it
 * is not selected twice: it is re-sent, report.resent). */
bool rr_left_found_again(struct run *run, const struct bytes *id, const char sha[65]);
/* A copy the broker confirmed (it->confirmed) settled done or unknown: remembered. */
void rr_confirmed_add(struct run *run, const struct item *it, bool done);
/* Whether an earlier attempt had this dead letter's copy confirmed (then it is only removed:
 * *was_done says whether that one counted as done). */
bool rr_confirmed_found_again(struct run *run, const struct bytes *id, const char sha[65],
                              bool *was_done);
/* The pass ended with its connection lost: when o->reopen allows and attempts are left,
 * connects to the next node, journals an attempt record and sets the run up to read the DLQ
 * again from its head (true); else false, with a sentence in run->err when no node could be
 * reached or the attempts ran out. */
bool rr_next_attempt(struct run *run);
/* A later attempt's reading channels, confirm mode and consumer, once its count is known. */
enum status rr_open_reading(struct run *run, enum conn_err *kind, struct error *err);
/* A later attempt that could not open its reading (or count): lost as a connection is. */
void rr_attempt_failed(struct run *run, enum conn_err kind, const struct error *err);
void rr_attempts_free(struct run *run);
/* report.detail: how the pass ended, one sentence with its counts and attempts. */
void rr_describe(struct run *run);

/* replay_wire.c */
bool rr_pump(struct run *run, int timeout_ms);
/* One frame read by rr_pump (or by rr_read_content, from another channel while it reads a
 * delivery's content): the delivery, confirm, return, probe's answer or close it is. */
void rr_dispatch(struct run *run, const amqp_frame_t *f);
/* replay_read.c: a delivery's content into *msg, as amqp_read_message reads it and with its
 * answers, but with no pool of its own: the properties (and a body that came in one frame)
 * stay in rabbitmq-c's frame buffers until they are released; a body in several frames is
 * gathered in *owned, for the caller to free. */
amqp_rpc_reply_t rr_read_content(struct run *run, amqp_channel_t ch, amqp_message_t *msg,
                                 void **owned);
/* Marks it removed (its ack was sent). */
void rr_acked(struct run *run, struct item *it);
/* The removal of the delivery tag (a classic or quorum DLQ): held until rr_flush_acks, which
 * sends what was gathered — one basic.ack with multiple for the tags that, with every lower
 * tag, are all removed, one each for the others — so a tag that stays (a dead letter held, not
 * selected) is never acked. Flushed before a probe is sent, at the end of a batch of
 * publishes and of every turn; a removal not yet sent when the connection fails is unproven,
 * as one sent is. rr_acks_reset: a new reading channel (its tags start again at 1). */
void rr_ack(struct run *run, uint64_t tag);
void rr_flush_acks(struct run *run);
void rr_acks_reset(struct run *run);
/* Sends a probe for the removals not yet proven, if none is out; settles them as unknown
 * when the reading channel is gone. */
void rr_sync_acks(struct run *run);
/* Removals sent and not yet settled. */
bool rr_acks_unproven(const struct run *run);
/* Settles every removal not yet proven as unknown (no answer from the broker). */
void rr_acks_unknown(struct run *run, const char *why);
/* A probe is out whose answer the pass waits for before it ends (its qos-ok must not be left
 * for the channel's close to read). */
bool rr_probe_awaited(const struct run *run);
void rr_connection_lost(struct run *run, const char *why);
enum status rr_start_consume(struct run *run, enum conn_err *kind, struct error *err);
void rr_get_one(struct run *run);
/* Classic queues: when the current consumer's limit is half taken by messages held for good
 * (not selected, kept, arrived after the pass began) and fewer than half a limit's copies
 * wait, cancels it and starts a fresh one with the same limit. A cancelled consumer's
 * messages stay held on the channel, in order, until it closes, and count against no limit:
 * so the copies read but not yet settled stay within two limits however many messages are
 * held for good. */
void rr_renew_consumer(struct run *run);
/* Copies read and not yet settled by the broker: pending and in flight. */
uint64_t rr_active(const struct run *run);

#endif
