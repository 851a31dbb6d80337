/*
 * masstransit: MassTransit's dead letters on RabbitMQ (the `_error` fault copy and the
 * `_skipped` dead-letter copy) — the dialect is `dialect_masstransit` (dialect.h); the
 * helpers here are its parsers, exposed for the unit tests. docs/dialects.md has the rules.
 *
 * Ownership: every function that fills a struct bytes gives new bytes the caller frees; the
 * inputs are borrowed and may hold any bytes.
 */
#ifndef DLQX_MASSTRANSIT_H
#define DLQX_MASSTRANSIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bytes.h"

/* A message type URN as the neutral type: "urn:message:Ns:Name" -> "Ns.Name" (every ':' of
 * the name part, generic arguments included, becomes '.': "urn:message:A:G[[B:C]]" ->
 * "A.G[[B.C]]"); any other non-empty text (a custom URN) is the type as written. False for an
 * empty name ("", "urn:message:"). */
bool mt_urn_type(const void *urn, size_t n, struct bytes *type);

/* An ISO 8601 time as .NET writes it ("O": 2026-01-02T04:31:07.1234567Z; System.Text.Json's
 * trimmed fraction; an offset), to epoch ms (sub-ms digits dropped). Without a zone it is UTC
 * (as MassTransit's UtcNow values are). */
bool mt_parse_time(const void *s, size_t n, int64_t *ms);

/* The queue an endpoint address names: rabbitmq[s]://host[:port]/[vhost/]queue[?options]
 * (amqp[s]:// too; the vhost percent-decoded, "/" when the path has no vhost), or the short
 * forms queue:NAME and exchange:NAME. False when there is no queue name or it is over 255
 * bytes (an AMQP short string). vhost may be NULL. */
bool mt_address_queue(const void *uri, size_t n, struct bytes *queue, struct bytes *vhost);

/* Attempts from MassTransit's counts: (redeliveries + 1) x (retries + 1) — every redelivery
 * runs the endpoint's retry policy again. Negative counts read as 0; saturates at INT32_MAX. */
int64_t mt_attempts(int64_t retries, int64_t redeliveries);

/* Whether the n bytes at s begin with the ASCII-lowercase prefix p, ignoring case. */
bool mt_has_prefix_ci(const unsigned char *s, size_t n, const char *p);

#endif
