/*
 * acemq: the AceMQ envelope on the wire — reserved x-acemq-* headers — read exactly as
 * AceMQ's own Envelope.from_headers reads them and written exactly as the Java library
 * writes them (pinned by fixtures/acemq/envelope-fixtures.json).
 *
 * Reading tolerates everything a producer might have sent: integers of any width, decimal
 * strings ("3"), floats (Go), unreadable values (which take their defaults), version and
 * attempt below 1 (clamped to 1). Unknown x-acemq-* names are not application headers but are
 * kept (envelope.reserved_unknown) and written back: a DLQ tool never drops a header.
 */
#ifndef DLQX_ACEMQ_H
#define DLQX_ACEMQ_H

#include "envelope.h"
#include "message.h"

#define ACEMQ_ID "x-acemq-id"
#define ACEMQ_TYPE "x-acemq-type"
#define ACEMQ_VERSION "x-acemq-version"
#define ACEMQ_CORRELATION "x-acemq-correlation"
#define ACEMQ_CAUSATION "x-acemq-causation"
#define ACEMQ_ATTEMPT "x-acemq-attempt"
#define ACEMQ_FIRST_SEEN "x-acemq-first-seen"
#define ACEMQ_ORIGIN "x-acemq-origin"
#define ACEMQ_ERROR "x-acemq-error"
#define ACEMQ_CLAIM "x-acemq-claim"
#define ACEMQ_ROUTE "x-acemq-route"
#define ACEMQ_ROUTE_POSITION "x-acemq-route-position"
#define ACEMQ_ROUTE_ID "x-acemq-route-id"

#define ACEMQ_REPLAYED_FROM "acemq-replayed-from"
#define ACEMQ_REPLAYED_AT "acemq-replayed-at"
#define ACEMQ_REPLAY_COUNT "acemq-replay-count"

/* Whether any header is in the x-acemq- namespace. */
bool acemq_detect(const struct htable *headers);

/* Envelope.from_headers(headers, routing_key). message_id is the AMQP message-id property
 * (may be NULL), used for a missing id as the Java and Go libraries do; when that is absent
 * too, the id is a name-based UUID of the message's bytes (digest), stable across reads —
 * where the libraries would mint a random one — and ED_ID is set. now_ms is the default
 * first-seen. */
enum status acemq_from_headers(const struct htable *headers, const struct bytes *routing_key,
                               const struct bytes *message_id, const struct bytes *digest,
                               int64_t now_ms, const struct envelope **out, struct error *err);

/* acemq_from_headers's reading of the envelope's own fields (id, type, version, correlation,
 * causation, attempt, first-seen, origin, error, claim, defaulted), without the envelope: the
 * strings borrowed (from the headers' values, message_id, routing_key, or buf), no tables,
 * version and attempt not yet clamped (envelope.c does it). False when the id would be made
 * from the message's digest (no readable x-acemq-id and no message_id). */
bool acemq_fields(const struct htable *headers, const struct bytes *routing_key,
                  const struct bytes *message_id, int64_t now_ms, struct envelope_init *in,
                  char buf[7][24]);

/* Envelope#to_headers(routing_key): the reserved headers as the Java library writes them
 * (strings, int for version/attempt, long for first-seen; causation, origin, error and claim
 * only when not empty), then the route triple, the unknown reserved names, and the
 * application headers. A new table the caller frees. */
struct htable *acemq_to_headers(const struct envelope *e, const struct bytes *routing_key);

/* The replay stamps a replay left in the application headers. */
struct acemq_replay {
    bool present;
    struct bytes from; /* acemq-replayed-from (empty when absent) */
    bool has_at;
    int64_t at_ms;      /* acemq-replayed-at: RFC 3339 or epoch ms, both read */
    bool at_unreadable; /* the header is there but is neither */
    int64_t count;      /* acemq-replay-count read leniently; 0 when absent */
};

void acemq_replay_read(const struct htable *headers, struct acemq_replay *out);
void acemq_replay_free(struct acemq_replay *r);

/* The dead-letter queue suffixes AceMQ uses; returns the source queue name length (the name
 * minus the suffix) or 0 when the name has none. */
size_t acemq_source_queue(const struct bytes *dlq);

#endif
