/*
 * peek: a snapshot of a live queue that loses, reorders and burns nothing it can avoid.
 *
 * AMQP 0-9-1 has no browse: every read takes messages and gives them back. So a peek takes
 * each message with manual acks and holds it — a message is only visible once every message
 * before it is held — copies it to the sink, and then closes the channel, which returns every
 * held message to the queue in its original order (measured on RabbitMQ 3.10 for classic and
 * quorum queues; a nack per message is quadratic on 3.10 and reorders). It never acks a classic
 * or quorum queue. Streams are read with a stream offset and are not changed at all: there the
 * acks only grant the consumer credit (docs/peek.md).
 *
 * It knows its cost and says it before it pays it (peek_plan): the queue type, its depth and
 * consumers, and for a quorum queue the delivery limit — every return adds 1 to a message's
 * x-delivery-count, and a message returned past the limit is dead-lettered or dropped by the
 * broker. A peek of a quorum queue with a limit reads one message at a time and stops at the
 * first message within reach of the limit, unless forced.
 *
 * Ownership: the connection is borrowed. Messages handed to the sink are the sink's. A stepped
 * peek (peek_start) is the caller's until peek_finish frees it.
 */
#ifndef DLQX_PEEK_H
#define DLQX_PEEK_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "broker_version.h"
#include "conn.h"
#include "message.h"
#include "util.h"

enum queue_kind {
    QK_UNKNOWN,
    QK_CLASSIC,
    QK_QUORUM,
    QK_STREAM,
};

const char *queue_kind_name(enum queue_kind k);
bool queue_kind_parse(const char *s, enum queue_kind *out);

/* What the caller knows of the queue before the peek (from the management API or options). */
struct peek_queue_info {
    enum queue_kind kind; /* QK_UNKNOWN: worked out from the deliveries */
    /* quorum: x-delivery-limit, the smaller of argument and (operator) policy as the
     * management API shows them, or --delivery-limit; -1 none set or unknown. The peek adds
     * the broker version's default (peek_delivery_limit). */
    int64_t delivery_limit;
    bool has_dlx; /* whether messages dead-lettered by the broker have somewhere to go */
};

/* Receives each message; takes ownership of *m (message_free it or keep it). Returns false to
 * stop the peek (it then ends as cancelled). */
typedef bool (*peek_sink_fn)(void *ctx, struct message *m);
/* Progress: called every few hundred messages and at the end; returning false cancels. */
typedef bool (*peek_progress_fn)(void *ctx, uint64_t done, uint64_t total);
/* Before the read starts again on another node (failover): everything the sink was given so
 * far must be forgotten (the snapshot never has a duplicate). false when it cannot: the peek
 * then ends as connection lost. */
typedef bool (*peek_restart_fn)(void *ctx);

/* Attempts when peek_opts.attempts is 0: the first read and two more after lost nodes. */
#define PEEK_DEFAULT_ATTEMPTS 3

struct peek_opts {
    const char *queue;
    struct peek_queue_info info;
    uint64_t limit;      /* at most this many messages; 0: all that were there at the start */
    bool force;          /* read a quorum queue past messages within reach of its limit */
    int idle_timeout_ms; /* stop waiting for more after this long without a delivery (5000) */
    peek_sink_fn sink;
    peek_progress_fn progress;
    void *ctx;
    /* Failover (docs/peek.md, "When a node dies"): when conn is set — the caller's variable that
     * holds the connection given to peek_start — and restart too, a read that loses its
     * connection or finds it hung reopens it there (conn_reopen: *conn is replaced by a
     * connection to the next node, NULL when none answers), has the sink forget what it was
     * given, and reads the queue again from the start: at most `attempts` reads in all (0:
     * PEEK_DEFAULT_ATTEMPTS; 1: no failover). Every read is a delivery of each message it
     * takes: on a quorum queue with a delivery limit, a read that would take a message to it is
     * not begun (unless force). Unset: a lost connection ends the peek, as before. */
    struct conn **conn;
    unsigned attempts;
    peek_restart_fn restart;
};

enum peek_end {
    PEEK_COMPLETE,        /* every message that was there at the start is in the snapshot */
    PEEK_LIMIT,           /* stopped at opts.limit */
    PEEK_CANCELLED,       /* the sink or progress callback said stop */
    PEEK_IDLE,            /* the queue stopped delivering (other consumers hold the rest?) */
    PEEK_REFUSED_LIMIT,   /* stopped before a message within reach of the delivery limit */
    PEEK_CONNECTION_LOST, /* the broker went away: it has returned what dlqx held */
    PEEK_CHANNEL_CLOSED,  /* the broker closed the channel (consumer timeout…) */
};

const char *peek_end_name(enum peek_end e);

struct peek_report {
    enum queue_kind kind;      /* as peeked (worked out when it was unknown) */
    uint32_t ready_before;     /* passive declare before */
    uint32_t consumers_before; /* other consumers attached */
    bool count_unsure; /* quorum: answered 0 messages and 0 consumers for 5 s, as a queue whose
                          leader does not answer does (conn_queue_inspect) */
    bool have_after;
    uint32_t ready_after;        /* passive declare after (when the connection survived) */
    uint64_t fetched;            /* messages handed to the sink */
    uint64_t arrived_during;     /* deliveries beyond the starting depth (returned, not kept) */
    uint64_t redelivered_seen;   /* messages that already carried the redelivered flag */
    int64_t max_delivery_count;  /* quorum: the highest x-delivery-count seen (-1: none) */
    struct delivery_limit limit; /* the limit the peek kept under (peek_delivery_limit) */
    char broker_version[32];     /* as the broker sent it; "?" unknown */
    uint64_t at_risk;            /* quorum: messages found within reach of the limit */
    char at_risk_id[128];        /* the first such message's message-id (for the report) */
    unsigned attempts; /* reads of the queue (1; more after a node was lost, each a delivery) */
    char lost[400];    /* each lost node, its read's count, why ("node URL lost after 1200 of 20000:
                          why; …") */
    char last_node[160]; /* the node the last read was on (conn_display_url) */
    enum peek_end end;
    char detail[512]; /* one sentence on how it ended */
    double seconds;
};

/* What a peek that took a quorum queue as empty says of it (r->count_unsure). */
#define PEEK_UNSURE_TEXT                                                                           \
    "the quorum queue answered 0 messages and 0 consumers for 5 s, as it does when its leader "    \
    "does not answer: if it holds messages, peek again"

/* Fills r->detail, the one sentence on how the peek ended (err: why it was lost or closed),
 * unless a refusal already said it. For peek.c. */
void peek_report_describe(struct peek_report *r, const struct error *err);
/* The report as a JSON object (new reference): docs/peek-report.md. */
json_t *peek_report_json(const char *queue, const struct peek_report *r);

/* The delivery limit a peek of the queue keeps under on broker version v (NULL: unknown):
 * the one the caller knows (q->delivery_limit), else the version's default for a quorum
 * queue (RabbitMQ 4.x: 20; an unknown version is taken to have it). */
struct delivery_limit peek_delivery_limit(const struct peek_queue_info *q,
                                          const struct broker_version *v);

/* The cost, in sentences, before anything is read, on broker version v (NULL: unknown):
 * appends to out. */
void peek_plan(const struct peek_opts *opts, const struct broker_version *v, uint32_t ready,
               uint32_t consumers, struct strbuf *out);

/* Runs the peek on channel ch of c (which must be open); fills the report. With failover
 * (opts->conn == &c), c may have been replaced or be NULL by the end (peek_opts). Returns ST_OK
 * when the peek ran (see report->end for how complete it is), or an error when it could not start
 * (queue missing, access refused). The loop of peek_start, peek_step and peek_finish below. */
enum status peek_run(struct conn *c, const struct peek_opts *opts, struct peek_report *report,
                     enum conn_err *kind, struct error *err);

/* The same peek a slice at a time, for a caller with its own loop (the explorer answers keys
 * between slices; ncdu's dir_output). peek_start counts the queue (an error when it cannot:
 * queue missing, access refused) and returns the peek in *out; opts is copied, but opts->queue
 * and opts->ctx are borrowed until peek_finish. peek_step works until the monotonic clock
 * (clock_mono_s) passes deadline — a delivery, or one poll of a count, past it at most — and
 * returns true while there is more to do. peek_cancel makes the next step stop reading and
 * give everything back, as a sink that says stop does (PEEK_CANCELLED): nothing is lost.
 * peek_finish does what is left (a peek still reading is cancelled first), fills the report
 * and frees the peek; it returns an error when the peek could not start reading (the count
 * failed on a later poll, the channel was refused), with *kind and err saying why. */
struct peek;
enum status peek_start(struct conn *c, const struct peek_opts *opts, struct peek **out,
                       enum conn_err *kind, struct error *err);
bool peek_step(struct peek *p, double deadline);
void peek_cancel(struct peek *p);
enum status peek_finish(struct peek *p, struct peek_report *report, enum conn_err *kind,
                        struct error *err);
/* Messages read so far, of how many (0 while the depth is being counted). */
void peek_counts(const struct peek *p, uint64_t *done, uint64_t *total);
/* "counting", "reading", "giving back" or "done", for a progress line. */
const char *peek_doing(const struct peek *p);

enum peek_get { PG_MESSAGE, PG_EMPTY, PG_FAILED };
/* One basic.get (manual ack) on channel ch: PG_MESSAGE with *out filled and *tag its
 * delivery tag, PG_EMPTY, or PG_FAILED with *kind and err saying why (conn_alive tells a
 * closed channel from a lost connection). */
enum peek_get peek_get_one(struct conn *c, amqp_channel_t ch, const char *queue, int64_t now_ms,
                           struct message *out, uint64_t *tag, enum conn_err *kind,
                           struct error *err);

/* Converts a delivery into the message model (copies everything). */
void peek_message_from_envelope(const amqp_envelope_t *e, const char *queue, int64_t now_ms,
                                struct message *out);

#endif
