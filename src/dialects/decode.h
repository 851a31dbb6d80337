/*
 * decode: one message in, everything a person needs out — the dialect (AceMQ, BabelQueue or
 * plain AMQP), the neutral envelope as that dialect's own library would read it, the death
 * history, where it would go back to, whether its consumer would accept it, and what its body
 * is.
 *
 * Dialect detection: any x-acemq-* header makes it AceMQ; else a BabelQueue app_id or body
 * shape makes it BabelQueue; everything else is plain AMQP, read from its properties, so
 * nothing is unreadable.
 *
 * Ownership: decode_message fills *out; the message is borrowed and must outlive out.
 * decoded_free releases what decode_message made.
 */
#ifndef DLQX_DECODE_H
#define DLQX_DECODE_H

#include <jansson.h>

#include "acemq.h"
#include "babelqueue.h"
#include "body.h"
#include "death.h"
#include "envelope.h"
#include "message.h"

/* Where a dead letter would go back to, and how that was worked out. */
enum source_how {
    SOURCE_UNKNOWN,
    SOURCE_ACEMQ_SUFFIX,       /* the DLQ's name minus .dlq / .parked / .dead */
    SOURCE_BQ_ORIGINAL_QUEUE,  /* dead_letter.original_queue */
    SOURCE_BQ_META_QUEUE,      /* meta.queue */
    SOURCE_X_DEATH,            /* the first death's exchange and routing key */
};

const char *source_how_name(enum source_how h);

struct source {
    enum source_how how;
    struct bytes queue;       /* the queue it came from, when known */
    struct bytes exchange;    /* where to publish ("" is the default exchange) */
    struct bytes routing_key; /* with this routing key */
};

struct decoded {
    const struct message *msg; /* borrowed */
    enum dialect dialect;
    const struct envelope *env; /* owned */
    struct death_summary death;
    struct source source;
    bool accepted; /* whether the dialect's consumer would accept it */
    const char *reject_reason; /* a reason code when not accepted (static) */
    struct bq_envelope bq;     /* BabelQueue only */
    struct acemq_replay replay; /* AceMQ replay stamps (read for every dialect) */
    struct body_info body;
    char body_sha256[65];
    struct bytes error; /* the dialect's error, else one derived from the death history */
    bool error_from_broker; /* error was derived from x-death */
};

void decode_message(const struct message *m, int64_t now_ms, struct decoded *out);

enum decode_flags {
    /* Skip the body: no digest, no classification (body_info is left EMPTY). For indexes
     * that only need the envelope, such as the snapshot store's. */
    DECODE_NO_BODY = 1u << 0,
};
void decode_message_ex(const struct message *m, int64_t now_ms, unsigned flags,
                       struct decoded *out);
void decoded_free(struct decoded *d);

/* The decode record (docs/decode-format.md): a new JSON object. */
json_t *decoded_to_json(const struct decoded *d, int64_t now_ms);

/* Names of the fields that took defaults (ED_* bits), as a new JSON array. */
json_t *defaulted_to_json(unsigned defaulted);

#endif
