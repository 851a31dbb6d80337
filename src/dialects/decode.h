/*
 * decode: one message in, everything a person needs out — which framework wrote it (the
 * dialect), the neutral envelope as that framework's own library would read it, the error
 * that set it aside, the death history, where it would go back to, whether its consumer
 * would accept it, and what its body is.
 *
 * The dialects are behind one interface (dialect.h): every one is asked to recognise the
 * message and the most confident reads it; plain AMQP reads what no framework claims, from
 * its properties, so nothing is unreadable. After the dialect, decode fills what the dialect
 * left open from the broker's own record: the error (from x-death), the failure time (the
 * newest x-death), the source (the first death's exchange and routing key).
 *
 * Ownership: decode_message fills *out; the message is borrowed and must outlive out.
 * decoded_free releases what decode_message made.
 */
#ifndef DLQX_DECODE_H
#define DLQX_DECODE_H

#include <jansson.h>

#include "acemq.h"
#include "body.h"
#include "death.h"
#include "dialect.h"
#include "envelope.h"
#include "message.h"

/* Where a dead letter would go back to, and how that was worked out. */
struct source {
    const char *how;          /* static: what it was read from ("x-death", "NServiceBus.FailedQ",
                                 …), as the JSON record names it; NULL: unknown */
    const char *how_text;     /* static: the same for a person; NULL: how */
    struct bytes queue;       /* the queue it came from, when known */
    struct bytes exchange;    /* where to publish ("" is the default exchange) */
    struct bytes routing_key; /* with this routing key */
    unsigned char *block;     /* when set, the three strings are in it (source_free) */
};
/* Frees a source's strings (their block, or each). */
void source_free(struct source *s);

/* The neutral fields, for read_from. */
enum neutral_field {
    NF_ID,
    NF_TYPE,
    NF_VERSION,
    NF_CORRELATION,
    NF_CAUSATION,
    NF_ATTEMPT,
    NF_FIRST_SEEN,
    NF_ORIGIN,
    NF_ERROR,
    NF_FAILED_AT,
    NF_COUNT
};

struct decoded {
    const struct message *msg;         /* borrowed */
    const struct dialect_ops *dialect; /* never NULL */
    struct dialect_match match;        /* how sure, and the names that decided */
    const struct envelope *env;        /* owned; never NULL */
    /* What each neutral field was read from, or what it means in this dialect (static text,
     * "the logical message id (NServiceBus.MessageId)"); NULL: not said. */
    const char *read_from[NF_COUNT];
    struct death_summary death;
    struct source source;
    bool accepted;              /* whether the dialect's consumer would accept it */
    const char *reject_reason;  /* a reason code when not accepted (static) */
    const char *accept_note;    /* static: why it is accepted or rejected, one line; NULL */
    struct acemq_replay replay; /* dlqx's replay stamps (acemq-replayed-*; read for every
                                   dialect) */
    struct body_info body;
    char body_sha256[65];
    struct bytes error;     /* the dialect's error, else one derived from the death history */
    bool error_from_broker; /* error was derived from x-death */
    struct bytes error_type, error_message, stack_trace; /* empty: not known */
    unsigned char *error_parts; /* when set, the three above are in it (dialect_set_error) */
    int64_t failed_at_ms;       /* when it failed; 0: unknown */
    bool failed_at_from_broker; /* failed_at_ms is the newest x-death time */
    void *priv;                 /* the dialect's own state (released by its release hook) */
};

void decode_message(const struct message *m, int64_t now_ms, struct decoded *out);

enum decode_flags {
    /* Skip the body: no digest, no classification (body_info is left EMPTY). For indexes
     * that only need the envelope, such as the snapshot store's. */
    DECODE_NO_BODY = 1u << 0,
};
void decode_message_ex(const struct message *m, int64_t now_ms, unsigned flags,
                       struct decoded *out);

/* What the snapshot store's index takes of a decode, for the common case read without one:
 * an AceMQ message with no header of the broker's dead-lettering and no traceparent.
 * decode_index_acemq answers false for any other message (decode it); true: the fields are
 * decode_message_ex's own (env->id, ->type, ->correlation_id, ->causation_id, ->attempt,
 * ->first_seen_ms, ->defaulted; error, error_type; accepted, no reject, no failed-at, not
 * from the broker), borrowed from m or buf. */
struct decoded_index {
    const struct dialect_ops *dialect;
    struct bytes id, type, correlation_id, causation_id, error, error_type;
    int64_t attempt, first_seen_ms;
    unsigned defaulted;
    char buf[7][24];
};
bool decode_index_acemq(const struct message *m, int64_t now_ms, struct decoded_index *out);
void decoded_free(struct decoded *d);
/* Frees error_type, error_message and stack_trace (their block, or each). */
void decoded_error_parts_free(struct decoded *d);

/* The decode record (docs/decode-format.md): a new JSON object. */
json_t *decoded_to_json(const struct decoded *d, int64_t now_ms);

/* The record's last part: the dialect's own section (its to_json, or its fields), a new
 * object. */
json_t *decoded_own_json(const struct decoded *d, int64_t now_ms);

/* decoded_to_json's dump (json_dump with flags) written straight into out, without the tree;
 * false, with nothing appended, when it cannot be sure of jansson's bytes (a flag other than
 * JSON_COMPACT and a real precision, a part that needs jansson): the caller dumps
 * decoded_to_json then. tests/test_decode_write.c holds the two to each other. */
struct strbuf;
bool decoded_write_json(const struct decoded *d, int64_t now_ms, size_t flags, struct strbuf *out);

/* Parts of the record for the dialects' write_json: bytes_to_json's value of data/len or of
 * b, the same or null when empty, and defaulted_to_json's array, as jansson dumps them. */
void decode_write_text(struct strbuf *out, const void *data, size_t len);
void decode_write_bytes(struct strbuf *out, const struct bytes *b);
void decode_write_bytes_or_null(struct strbuf *out, const struct bytes *b);
void decode_write_defaulted(struct strbuf *out, unsigned defaulted);

/* The envelope's id, type, version, correlation_id, causation_id (null when empty), attempt
 * and first_seen_ms set in o, in that order: the head of the decode record and of AceMQ's
 * object. */
void envelope_head_to_json(json_t *o, const struct envelope *e);
/* Names of the fields that took defaults (ED_* bits), as a new JSON array. */
json_t *defaulted_to_json(unsigned defaulted);

#endif
