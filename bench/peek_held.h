/*
 * peek_held: what peek_bench's baseline consumer keeps of each delivery: a deep copy of the
 * envelope (exchange, routing key, body, every property and the header table, nested tables
 * and arrays too) in one malloc'd block, as a client that holds a snapshot must keep it.
 *
 * Ownership: held_copy returns a block the caller owns and frees with free() (held_free frees
 * an array of count of them and the array itself); it keeps no pointer into the envelope, which
 * the caller may destroy at once. seq_of and held_in_order only read.
 */
#ifndef DLQX_PEEK_HELD_H
#define DLQX_PEEK_HELD_H

#include <stdbool.h>
#include <stdint.h>

#include <amqp.h>

/* One message, held: everything in one malloc'd block (a bump region after the struct). */
struct held {
    uint64_t delivery_tag;
    bool redelivered;
    amqp_bytes_t exchange, routing_key, body;
    amqp_basic_properties_t props;
};

/* What peek_bench's messages carry (and peek_cpu's): x-acemq-type and x-acemq-error cycle
 * through these. */
extern const char *const peek_types[4];
extern const char *const peek_errors[3];

/* A UUID-shaped id whose last group is the sequence number, so that order can be checked
 * from the message id alone. */
void seq_uuid(char out[37], uint32_t salt, uint64_t seq);

/* The sequence number in one of peek_bench's message ids (a UUID whose last group is the
 * number); -1 when it is not one of them. */
int64_t seq_of(const void *p, size_t n);

/* A copy of e, everything in one block. */
struct held *held_copy(const amqp_envelope_t *e);

/* Whether the held messages are the queue's in publish order; prints the first break. */
bool held_in_order(struct held **h, uint32_t count, const char *what);

/* Frees h[0..count) and h. */
void held_free(struct held **h, uint32_t count);

#endif
