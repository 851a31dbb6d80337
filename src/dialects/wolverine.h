/*
 * wolverine: Wolverine's dead letters on RabbitMQ, both modes (the broker-dead-lettered
 * original with x-death, and the InteropFriendly copy with exception-* headers) — the dialect
 * is `dialect_wolverine` (dialect.h); these are its parsers, exposed for the unit tests.
 *
 * Ownership: a filled struct bytes is new and the caller frees it; inputs are borrowed.
 */
#ifndef DLQX_WOLVERINE_H
#define DLQX_WOLVERINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bytes.h"

/* The name of Wolverine's dead-letter queue (and of the exchange in front of it). */
#define WV_DLQ_NAME "wolverine-dead-letter-queue"

/* A Wolverine header time, as its readers take it: the transport format
 * "yyyy-MM-dd HH:mm:ss:ffffff Z" (the ':' is the writer's culture's time separator, so any
 * one separator character is taken), else ISO 8601 ("o", an offset, no zone = UTC). To epoch
 * ms. Year 1 (DateTimeOffset's default) reads as false: not a time anyone set. */
bool wv_parse_time(const void *s, size_t n, int64_t *ms);

/* The queue of a Wolverine RabbitMQ endpoint URI: rabbitmq://queue/NAME (a query or a
 * trailing path ignored). False for other forms (rabbitmq://exchange/…, rabbitmq://topic/…),
 * an empty name or one over 255 bytes. */
bool wv_destination_queue(const void *uri, size_t n, struct bytes *queue);

/* A header's integer as int.TryParse reads it: optional sign, decimal digits, within int32. */
bool wv_parse_int32(const void *s, size_t n, int32_t *out);

#endif
