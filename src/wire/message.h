/*
 * message: one AMQP message as it was taken from a queue — the raw material every dialect
 * decoder reads. Nothing here is interpreted; every byte is kept so that a message can be
 * written back (to a snapshot or the broker) exactly as it arrived.
 *
 * Ownership: a struct message owns all its fields; message_free releases them.
 */
#ifndef DLQX_MESSAGE_H
#define DLQX_MESSAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "bytes.h"
#include "hval.h"

/* The AMQP 0-9-1 basic properties, by their snapshot (snake_case) names. */
#define PROP_STRING_LIST(X)                                                                        \
    X(content_type)                                                                                \
    X(content_encoding)                                                                            \
    X(correlation_id)                                                                              \
    X(reply_to)                                                                                    \
    X(expiration)                                                                                  \
    X(message_id)                                                                                  \
    X(type)                                                                                        \
    X(user_id)                                                                                     \
    X(app_id)                                                                                      \
    X(cluster_id)

enum prop_flag {
#define X(name) PROP_##name,
    PROP_STRING_LIST(X)
#undef X
        PROP_delivery_mode,
    PROP_priority,
    PROP_timestamp,
    PROP_COUNT
};

struct props {
    uint32_t present; /* bit (1u << enum prop_flag) per property that was set */
#define X(name) struct bytes name;
    PROP_STRING_LIST(X)
#undef X
    uint8_t delivery_mode;
    uint8_t priority;
    uint64_t timestamp; /* seconds since the epoch, as AMQP carries it */
};

struct message {
    struct bytes queue;       /* the queue it was read from */
    struct bytes exchange;    /* the exchange it was last published to */
    struct bytes routing_key; /* the routing key it was last published with */
    bool redelivered;
    int64_t fetched_at_ms; /* when dlqx took it; 0 when unknown */
    struct props props;
    struct htable *headers; /* never NULL (may be empty) */
    bool headers_present;   /* whether the headers property was set at all */
    struct bytes body;
    uint64_t stream_offset; /* for messages read from a stream; valid when has_stream_offset */
    bool has_stream_offset;
};

static inline bool props_has(const struct props *p, enum prop_flag f)
{
    return (p->present >> f) & 1u;
}

const char *prop_name(enum prop_flag f);

void message_init(struct message *m);
void message_free(struct message *m);
struct message *message_copy(const struct message *m);
/* Every field compared exactly, headers included (kind, order and bytes). */
bool message_equal(const struct message *a, const struct message *b);

/* Borrowed string property, or NULL when it was not set. */
const struct bytes *props_string(const struct props *p, enum prop_flag f);
/* The storage of string property f (NULL for one that is not a string), for a reader that
 * moves a value in: the presence bit (p->present) is the caller's to set. */
struct bytes *props_slot(struct props *p, enum prop_flag f);
void props_set_string(struct props *p, enum prop_flag f, const void *data, size_t len);

#endif
