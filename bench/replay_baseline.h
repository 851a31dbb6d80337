/*
 * replay_baseline: replay_bench's pass (a), the libraries' way written plainly with
 * rabbitmq-c: a consumer with manual acks; for each dead letter the re-stamped copy (as
 * AceMQ's replay builds it) is published to the source (mandatory, in confirm mode), the
 * confirm for that very publish awaited, then the dead letter acked. No journal.
 *
 * Ownership: baseline_pass borrows the connection (it opens and closes its channels 2 and 3
 * on it; the caller closes the connection) and frees every delivery and buffer it made before
 * it returns. key_is and field_int only read. Any failure ends the process (die).
 */
#ifndef DLQX_REPLAY_BASELINE_H
#define DLQX_REPLAY_BASELINE_H

#include <stdbool.h>
#include <stdint.h>

#include <amqp.h>

#include "conn.h"

/* Whether the table key k is s. */
bool key_is(amqp_bytes_t k, const char *s);

/* A field's value as an integer (any integer kind); 0 for any other kind. */
int64_t field_int(const amqp_field_value_t *v);

/* Replays n messages from dlq to src, prefetch at a time; returns the seconds from
 * basic.consume to the close of the reading channel (which the broker answers after every
 * ack on it). Not inlined, so that a profiler can be told to count only inside it. */
double baseline_pass(struct conn *c, const char *dlq, const char *src, uint32_t n,
                     uint16_t prefetch);

#endif
