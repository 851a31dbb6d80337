/*
 * dlqfind: which queues are dead-letter queues, where each comes from, and which queues lose
 * their dead letters. Pure logic over what the management API listed (no I/O).
 *
 * A queue is a DLQ when another queue's dead-letter exchange routes to it (the default
 * exchange by queue name; direct, fanout and topic bindings matched as the broker does;
 * exchange-to-exchange bindings and alternate exchanges followed; headers and plugin exchange
 * types count as "may route"), or when its name ends in a dead-letter suffix (`.dlq`,
 * `.parked`, `.dead`, `_error`, `-dead-letter`, …, case-insensitive). Retry rungs
 * (`orders.retry.30s`) and TTL delay queues that dead-letter back to their source are retry
 * queues, never DLQs, and dead-lettering out of them does not make their target a DLQ.
 *
 * Ownership: the report borrows the input arrays (they must outlive it) and owns its own
 * arrays; release it with dlq_report_free.
 */
#ifndef DLQX_DLQFIND_H
#define DLQX_DLQFIND_H

#include <stdbool.h>
#include <stddef.h>

#include "mgmt.h"
#include "status.h"

/* Why a queue is taken for a DLQ (bits of dlq_entry.why, and of dlq_link.how). */
#define DLQ_WHY_LIST(X)                                                                            \
    X(DLQ_WHY_TARGET, 1u << 0, "a dead-letter exchange routes here")                               \
    X(DLQ_WHY_MAYBE, 1u << 1, "a dead-letter exchange may route here (headers or plugin type)")    \
    X(DLQ_WHY_NAMED, 1u << 2, "named like a dead-letter queue")

/* What goes wrong with a queue's own dead letters (bits of dlq_entry.warn). */
#define DLQ_WARN_LIST(X)                                                                           \
    X(DLQ_WARN_DROPS, 1u << 0,                                                                     \
      "its dead-letter exchange routes to no queue: dead letters are dropped")                     \
    X(DLQ_WARN_NO_EXCHANGE, 1u << 1,                                                               \
      "its dead-letter exchange does not exist: dead letters are dropped")                         \
    X(DLQ_WARN_LIMIT_NO_DLX, 1u << 2,                                                              \
      "it has a delivery limit but no dead-letter exchange: messages over the limit are dropped")  \
    X(DLQ_WARN_OWN_KEY, 1u << 3,                                                                   \
      "it dead-letters to the default exchange with each message's own routing key: back to "      \
      "where it came from, or nowhere")                                                            \
    X(DLQ_WARN_LOOP, 1u << 4, "its dead letters route back into itself")

enum dlq_why {
#define X(e, v, msg) e = v,
    DLQ_WHY_LIST(X)
#undef X
};

enum dlq_warn {
#define X(e, v, msg) e = v,
    DLQ_WARN_LIST(X)
#undef X
};

/* The message of one bit (NULL for anything else). */
const char *dlq_why_str(unsigned bit);
const char *dlq_warn_str(unsigned bit);

enum dlq_role {
    DLQ_ROLE_QUEUE, /* an ordinary queue */
    DLQ_ROLE_DLQ,
    DLQ_ROLE_RETRY, /* a retry rung or TTL delay queue */
};

/* One edge of the dead-letter graph: a queue (its index in the input) and how it is linked. */
struct dlq_link {
    size_t queue;
    unsigned how; /* DLQ_WHY_TARGET, DLQ_WHY_MAYBE, or DLQ_WHY_NAMED (the name's base queue) */
};

struct dlq_entry {
    const struct mgmt_queue *queue; /* borrowed from the input */
    size_t index;                   /* in the input array */
    enum dlq_role role;
    unsigned why;  /* DLQ_WHY_* bits, for role DLQ */
    unsigned warn; /* DLQ_WARN_* bits, about where this queue's dead letters go */
    /* Queues that dead-letter into this one (role DLQ), DLX routes first, then the queue its
     * name was made from. Owned. */
    struct dlq_link *sources;
    size_t n_sources;
    /* Where this queue's dead letters go (DLQ_WHY_TARGET or _MAYBE links). Owned. */
    struct dlq_link *targets;
    size_t n_targets;
    /* The queue this one's name was made from (for a named DLQ or a retry rung); SIZE_MAX
     * when none exists. */
    size_t base;
};

struct dlq_input {
    const struct mgmt_queue *queues;
    size_t n_queues;
    const struct mgmt_exchange *exchanges; /* all exchanges of the vhosts listed */
    size_t n_exchanges;
    const struct mgmt_binding *bindings;
    size_t n_bindings;
};

struct dlq_report {
    /* Every queue: DLQs first (deepest first, unknown depth last, then by vhost and name),
     * then retry queues, then the rest, each by vhost and name. */
    struct dlq_entry *entries;
    size_t n;
    size_t *pos;                   /* pos[input index] = position in entries */
    size_t *by_name;               /* input indices by vhost then name, for dlq_report_find */
    size_t n_dlq, n_retry, n_warn; /* n_warn: entries with any warn bit */
};

/* Builds the report. Cannot fail on any input; ST_EINVAL only for a NULL argument. */
enum status dlqfind_run(const struct dlq_input *in, struct dlq_report *out, struct error *err);
void dlq_report_free(struct dlq_report *r);

/* The entry of queue `name` in `vhost`, or NULL. Borrowed. */
const struct dlq_entry *dlq_report_find(const struct dlq_report *r, const char *vhost,
                                        const char *name);

enum dlq_name_kind { DLQ_NAME_PLAIN, DLQ_NAME_DLQ, DLQ_NAME_RETRY };
/* What a queue's name says. For DLQ and RETRY names, *base_len (may be NULL) is the length of
 * the name without its suffix and separator (0 for a bare "dlq" or "error"). */
enum dlq_name_kind dlqfind_classify_name(const char *name, size_t *base_len);

/* AMQP topic matching: words split on '.', '*' one word, '#' zero or more ("" has no words). */
bool dlqfind_topic_match(const char *pattern, const char *key);

#endif
