/*
 * replay: writing back to the broker without losing a message — replay, re-issue, move and
 * delete share this one path.
 *
 * The dead-letter queue is read from its head with manual acks, exactly as a peek reads it:
 * each message is held until dlqx knows what to do with it, and every message it does not
 * remove goes back, in order, when the reading channel closes. A message the caller selects
 * (replay_select_fn, e.g. "this id with this body digest", or a filter) becomes a copy
 * (restamp.h) that is published on a second channel in confirm mode with `mandatory`:
 *
 *   1. intent journaled and fsync'd          (a crash from here on: a possible duplicate;
 *                                              synced by the journal's thread, a window
 *                                              ahead, while the pass goes on: journal.h)
 *   2. copy published                        (pipelined: a window of copies in flight)
 *   3. broker's basic.ack for the copy       (a basic.return before it = unroutable: kept;
 *                                              a basic.nack = refused, e.g. a full target: kept)
 *   4. the dead letter acked, then a round trip on the reading channel proves the broker
 *      has processed that ack                 (without it a killed dlqx could lose the ack)
 *   5. outcome journaled and fsync'd         (with the next intents' sync, or at the end)
 *
 * So a message is never lost: until 4 the dead letter is in the DLQ (held, or given back by
 * the broker when the connection goes); after 3 its copy is at the target. The only harm a
 * crash can do is a duplicate, and the journal names every one (an intent without outcome,
 * or an outcome "unknown").
 *
 * Streams cannot lose a message: a copy is published and the stream keeps its dead letter.
 * A canary sends the first copy alone and watches the DLQ for it to come back before the
 * rest are sent. A rate limit spaces the publishes. Progress can pause or cancel a run:
 * copies in flight are still settled, and everything not yet sent stays in the DLQ.
 *
 * Ownership: the connection, journal and options are borrowed. Outgoing copies the select
 * callback fills are the engine's (it frees them). A stepped pass (replay_start) is the
 * caller's until replay_finish frees it.
 */
#ifndef DLQX_REPLAY_H
#define DLQX_REPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "conn.h"
#include "decode.h"
#include "journal.h"
#include "message.h"
#include "peek.h"
#include "restamp_diff.h"

enum replay_action {
    RA_SKIP,   /* not selected: held, given back in order at the end */
    RA_SEND,   /* publish *out (filled by the callback), then remove the dead letter */
    RA_DELETE, /* remove the dead letter (ack and drop); journaled like a send */
    RA_KEEP,   /* selected but cannot be sent (why says so): kept, counted as kept */
    RA_STOP,   /* stop reading: every message found is handled, the rest stays */
};

/* One message taken from the DLQ, in queue order (position counts from 1). For RA_SEND the
 * callback fills *out with restamp_build from a decoding of m itself (the journal names the
 * dead letter by out->old_id and out->old_body_sha256); for RA_KEEP it writes one sentence
 * into why. */
typedef enum replay_action (*replay_select_fn)(void *ctx, const struct message *m,
                                               uint64_t position, struct outgoing *out, char *why,
                                               size_t whylen);

struct replay_progress {
    uint64_t taken;    /* messages read from the DLQ */
    uint64_t total;    /* messages in the DLQ at the start (or the plan's size) */
    uint64_t selected; /* sends and deletes decided so far */
    uint64_t done, kept, unknown;
    uint64_t in_flight;
    double rate;  /* done per second */
    double eta_s; /* seconds left, < 0 when unknown */
    bool paused;
    const char *phase; /* "reading", "sending", "canary", "settling" */
};

enum replay_ctl { RC_GO, RC_PAUSE, RC_CANCEL };
typedef enum replay_ctl (*replay_progress_fn)(void *ctx, const struct replay_progress *p);

/* Each outcome as it is decided (for the UI's list and the CLI's report): the journal seq
 * (0 for a message kept before it was journaled), the dead letter's position as select saw
 * it, its id. */
typedef void (*replay_outcome_fn)(void *ctx, uint64_t seq, uint64_t position,
                                  const struct bytes *old_id, enum journal_result res,
                                  const char *reason);

/* Pacing: one step of a ramp — `copies` copies at `rate` per second (both > 0). */
struct replay_ramp_step {
    double rate;
    uint64_t copies;
};

#define REPLAY_MAX_RAMP 16

struct replay_opts {
    const char *queue;      /* the DLQ */
    enum queue_kind kind;   /* QK_UNKNOWN: classic/quorum worked out by the broker */
    int64_t delivery_limit; /* quorum: -1 none */
    bool force;             /* read a quorum queue past messages near its limit */
    const char *op;         /* journal op: replay | reissue | move | delete */
    uint64_t expect;        /* selections expected (a plan's size): stop reading once all
                               are found; 0 = read the whole queue */
    uint32_t window;        /* copies in flight; 0 = 1000. 1 = one confirm per message */
    double rate;            /* copies per second; 0 = as fast as the broker confirms */
    /* The ramp (--ramp): the first copies go out in these steps, in order — ramp[0].copies
     * at ramp[0].rate per second, then ramp[1]'s, … — and then at `rate` (0: unpaced). The
     * canary, when there is one, is the first copy of the first step. Pacing holds from the
     * first copy to the last: a wait (the canary's, a pause, a full window, a blocked
     * connection) never lets the copies it held back go out in a burst; at most
     * replay_pace_burst() go out together. n_ramp 0: no ramp. Borrowed. */
    const struct replay_ramp_step *ramp;
    size_t n_ramp;
    int canary_wait_ms;      /* > 0: send one, watch this long for it to come back */
    int confirm_timeout_ms;  /* how long to wait for outstanding confirms (30000) */
    int idle_timeout_ms;     /* a silent queue: stop reading after this long (peek's rule) */
    struct journal *journal; /* required */
    replay_select_fn select;
    replay_progress_fn progress; /* may be NULL */
    replay_outcome_fn outcome;   /* may be NULL */
    void *ctx;
    /* Carrying on when a node dies (docs/replay.md, "On a cluster"): when reopen is set and the
     * pass's connection is lost or hung, the pass closes it, connects to the next node
     * (conn_reopen: *reopen is replaced, so the caller's pointer stays the live connection; NULL
     * when no node could be reached) and goes on as a new attempt of the same run, up to
     * max_attempts in all (0: REPLAY_DEFAULT_ATTEMPTS). The new attempt reads the DLQ from its
     * head again: every dead letter not removed is there, in order, and is selected again —
     * those whose copy was in flight (unknown, pending in the journal) are sent again, so the
     * earlier copy may be a duplicate, which the journal names. again (may be NULL) is called
     * for each dead letter the earlier attempt did not remove, before the new one reads: a
     * caller selecting by plan adds it back (replay_plan_add). */
    struct conn **reopen;
    uint32_t max_attempts;
    void (*again)(void *ctx, const struct bytes *old_id, const char sha256_hex[65]);
    /* A later attempt found a dead letter whose copy an earlier attempt had confirmed (the
     * queue gave it back: its removal was lost): it is removed without a new copy and without
     * asking select, and its outcome (done) comes at position. confirmed_again (may be NULL)
     * is called first, so a caller that tracks positions knows which dead letter that is. */
    void (*confirmed_again)(void *ctx, const struct bytes *old_id, const char sha256_hex[65],
                            uint64_t position);
};

#define REPLAY_DEFAULT_ATTEMPTS 5

enum replay_end {
    RE_COMPLETE,      /* every message there at the start was considered */
    RE_ALL_FOUND,     /* every expected selection was found (opts.expect) */
    RE_STOPPED,       /* the select callback said stop */
    RE_CANCELLED,     /* progress said cancel: what was in flight was settled */
    RE_CANARY,        /* the canary came back to the DLQ: nothing else was sent */
    RE_IDLE,          /* the queue stopped delivering (other consumers hold the rest?) */
    RE_REFUSED_LIMIT, /* a quorum message near its delivery limit: stopped before it */
    RE_CONNECTION_LOST,
    RE_CHANNEL_CLOSED,
};

const char *replay_end_name(enum replay_end e);

#define REPLAY_MAX_REASONS 8

/* How long a pass asks a quorum DLQ again while it answers 0 messages and 0 consumers (in
 * its steps: replay_step, not replay_start, waits). */
#define REPLAY_QUORUM_ZERO_WAIT_S 5.0

struct replay_report {
    char run_id[37];
    uint32_t ready_before, ready_after;
    bool have_after;
    /* A quorum DLQ that answered 0 messages and 0 consumers for REPLAY_QUORUM_ZERO_WAIT_S: what
     * it says when its leader does not answer too (conn_queue_inspect), so "empty" is
     * not sure. */
    bool count_unsure;
    uint64_t taken, selected, done, kept, unknown;
    uint64_t refused;  /* of kept: the broker refused the publish (403, no write permission) */
    uint64_t not_sent; /* selected but never published (cancelled, stopped, canary) */
    struct {
        char text[240];
        uint64_t n;
    } reasons[REPLAY_MAX_REASONS]; /* why messages were kept or unknown, most frequent first */
    size_t n_reasons;
    bool canary_sent, canary_back;
    enum replay_end end;
    char detail[512]; /* one sentence on how it ended */
    /* Reading the DLQ: each consumer's limit (0 = none), how many consumers the pass used
     * (a classic queue's is renewed as messages held for good accumulate), and the most
     * copies ever read but not yet settled at once (the memory they take). */
    uint32_t read_limit, read_consumers;
    uint64_t peak_active;
    double seconds;
    /* Attempts (1 without a lost connection): each after the first began on another node
     * (node: the last one's URL, without a password). resent: dead letters an earlier attempt
     * left unknown (a copy in flight or a removal unproven when the connection went) that a
     * later attempt found still in the DLQ and sent again — each earlier copy a possible
     * duplicate, pending in the journal. So done + kept + unknown + not_sent = selected +
     * resent. */
    uint32_t attempts;
    uint64_t resent;
    char node[256];
};

/* Runs one pass. ST_OK when it ran (report->end says how it ended, counts say what
 * happened); an error when it could not start (queue missing, journal unwritable, …). The
 * loop of replay_start, replay_step and replay_finish below. */
enum status replay_run(struct conn *c, const struct replay_opts *o, struct replay_report *r,
                       enum conn_err *kind, struct error *err);

/* The same pass a turn at a time, for a caller with its own loop (the explorer draws its
 * progress and answers keys between steps). replay_start checks the queue, journals the run
 * and opens the channels (an error when it cannot: nothing was sent); o and everything it
 * points to are borrowed until replay_finish. replay_step works until the monotonic clock
 * (clock_mono_s) passes deadline — a turn of the loop past it at most: a delivery and its
 * select, a batch of publishes (their intents synced by the journal's thread meanwhile) — and
 * returns true while the pass goes on; the progress callback is still called (and may pause
 * or cancel). replay_cancel stops it as RC_CANCEL
 * does: nothing more is sent, the copies in flight are settled by the next steps (each
 * outcome journaled: a dead letter is removed only after its copy was confirmed), and every
 * dead letter not removed goes back in order. replay_finish does what is left (a pass still
 * running is cancelled first), fills the report, writes the journal's end and frees the pass. */
struct replay;
enum status replay_start(struct conn *c, const struct replay_opts *o, struct replay **out,
                         enum conn_err *kind, struct error *err);
bool replay_step(struct replay *p, double deadline);
void replay_cancel(struct replay *p);
enum status replay_finish(struct replay *p, struct replay_report *r, enum conn_err *kind);
/* The counts so far (the report as it stands: end and detail are set by replay_finish). */
const struct replay_report *replay_report_now(const struct replay *p);

/* Whether a copy to exchange/routing key would route, checked without publishing: a passive
 * declare of the queue (default exchange) or of the exchange. Writes one sentence to out. */
enum route_check { ROUTE_YES, ROUTE_NO, ROUTE_EXCHANGE_ONLY, ROUTE_ERROR };
enum route_check replay_check_route(struct conn *c, const char *exchange, const char *routing_key,
                                    char *out, size_t outlen);

/* Declares queue `name` durable, of the given type (classic, quorum or stream; QK_UNKNOWN is
 * refused: dlqx does not guess), for a move's parking queue (--create-queue). An existing
 * queue with other arguments is the broker's 406, reported. One sentence in err; *kind says
 * what the broker said (CONN_ACCESS: no configure permission). */
enum status replay_declare_queue(struct conn *c, const char *name, enum queue_kind type,
                                 enum conn_err *kind, struct error *err);

/* ---- pacing: --rate and --ramp ------------------------------------------------------- */

/* Parses a ramp, "RATE[:COPIES],…" (up to REPLAY_MAX_RAMP steps): each step sends COPIES
 * copies at RATE per second; without COPIES, ten seconds' worth (ceil(10 × RATE), at least
 * 1). "1,10,100" is 10 copies at 1/s, then 100 at 10/s, then 1000 at 100/s. Rates rise or
 * fall as given. ST_EINVAL with one sentence for anything else. */
enum status replay_ramp_parse(const char *text, struct replay_ramp_step *steps, size_t max,
                              size_t *n, struct error *err);
/* The rate (copies per second, 0: unpaced) at which the copy numbered `published` + 1 goes
 * out: the ramp's step it falls in, else o->rate. step_left (may be NULL): the copies left
 * in that step, that one included (UINT64_MAX past the ramp). */
double replay_pace_rate(const struct replay_opts *o, uint64_t published, uint64_t *step_left);
/* The most copies sent at once at that rate: ten milliseconds' worth, at least 1. */
uint64_t replay_pace_burst(double rate);
/* The least time `copies` copies take under o's pacing (seconds; 0 when unpaced): the ramp's
 * steps, then o->rate; for a plan's estimate. The canary's wait is not included. */
double replay_pace_seconds(const struct replay_opts *o, uint64_t copies);

/* ---- selecting by plan: the exact dead letters, by id and body digest ------------------ */

struct replay_plan;
struct replay_plan *replay_plan_new(void);
void replay_plan_free(struct replay_plan *p);
/* Adds one dead letter to find (the same id and digest twice means two messages). */
void replay_plan_add(struct replay_plan *p, const struct bytes *id, const char sha256_hex[65]);
size_t replay_plan_size(const struct replay_plan *p);
/* Whether m (with its decoded id and body digest) is wanted; consumes one match. What is
 * left afterwards (replay_plan_size) was not found. */
bool replay_plan_take(struct replay_plan *p, const struct bytes *id, const char sha256_hex[65]);
/* The same for a message and its decode (d->env->id; the digest of m's body). */
void replay_plan_add_message(struct replay_plan *p, const struct message *m,
                             const struct decoded *d);
bool replay_plan_take_message(struct replay_plan *p, const struct message *m,
                              const struct decoded *d);
/* With a tag each (the caller's handle on the message, a store index say): a take gives
 * back the tags of the same id and digest in the order they were added. */
void replay_plan_add_tagged(struct replay_plan *p, const struct message *m, const struct decoded *d,
                            size_t tag);
bool replay_plan_take_tagged(struct replay_plan *p, const struct message *m,
                             const struct decoded *d, size_t *tag);
/* The same by id and digest (what replay_opts.again is given): a new attempt puts back, with
 * its tag, a dead letter the attempt before took but did not remove. */
void replay_plan_add_id_tagged(struct replay_plan *p, const struct bytes *id,
                               const char sha256_hex[65], size_t tag);
bool replay_plan_take_id_tagged(struct replay_plan *p, const struct bytes *id,
                                const char sha256_hex[65], size_t *tag);

#endif
