/*
 * restamp: the copy of a dead letter that goes back to the broker — built, never edited in
 * place. A dead letter (its message and its decode) plus `with`-style changes give a new,
 * separate outgoing message; the dead letter and its envelope are untouched.
 *
 * Each dialect has its own replay and re-issue rules (its restamp hook, dialect.h;
 * docs/dialects.md lists them all); the ones below are AceMQ's, BabelQueue's and plain
 * AMQP's. A move is the same for every dialect.
 *
 * Modes:
 *   RESTAMP_REPLAY   keeps the identity, as the libraries' own replay does:
 *     AceMQ       same id, correlation, causation, first-seen; attempt back to 1;
 *                 x-acemq-error cleared; acemq-replayed-from = the DLQ, acemq-replayed-at =
 *                 RFC 3339 UTC, acemq-replay-count = previous (read leniently) + 1. Headers
 *                 are written as AceMQ's Envelope#to_headers writes them (acemq_to_headers).
 *                 Target: the default exchange, routing key = the DLQ's source queue.
 *     BabelQueue  the body is the dead letter's own bytes with every top-level `dead_letter`
 *                 member removed and every top-level `attempts` value replaced by 0 (when
 *                 there is none, ,"attempts":0 is added before the closing brace, as Python
 *                 and PHP do) — key order, number text, escapes and unknown keys untouched;
 *                 the forbidden legacy keys (top-level timestamp; meta.max_retries,
 *                 meta.attempts, meta.source, meta.ts) removed, as the conformance suite's
 *                 forbidden_keys block requires of a re-encode (Go, Node and later Java
 *                 drop them; Python and PHP redrives carry them);
 *                 header x-attempts → 0. The result must pass the consumer rules.
 *                 Target: dead_letter.original_queue, else meta.queue (default exchange).
 *                 Optional bq-replay-bypass: "1".
 *     plain AMQP  body and properties unchanged; target: the first death's exchange and
 *                 routing key.
 *   RESTAMP_REISSUE  a new message caused by the old one: a new id (UUID v4), causation = the
 *                 old id where the dialect carries causation (AceMQ), correlation kept (written
 *                 out explicitly when it had defaulted to the old id), attempt 1, error
 *                 cleared, first-seen now. BabelQueue: new meta.id and message-id; plain AMQP:
 *                 new message-id and correlation-id = the old correlation (or the old id).
 *   RESTAMP_MOVE     the message as it is — every header, x-death included — to another
 *                 queue (a `.parked` queue or any other); only x-delivery-count and
 *                 x-stream-offset are dropped. No envelope changes are allowed.
 *
 * In every mode the broker-owned headers are not sent back (x-death, x-first-death-*,
 * x-last-death-*, x-delivery-count, x-stream-offset; MOVE keeps the x-death family); every
 * other header, unknown x-acemq-* names included, is kept exactly (kind and bytes).
 *
 * Changes (struct env_change, parsed by env_change_parse: "type=…", "header.tenant=acme",
 * "-header.tenant") apply after the mode's own rules. Per dialect: AceMQ accepts every field;
 * BabelQueue maps type→job, correlation→trace_id, attempt→attempts (body edits, by byte span),
 * header.* → AMQP headers, and refuses the fields its envelope does not have; plain AMQP maps
 * id→message-id, type→type, correlation→correlation-id, header.* → headers, and refuses the
 * rest. A reserved name (x-acemq-*, a broker-owned header) set or removed through header.* is
 * refused with ST_ERESERVED — never silently dropped.
 *
 * Rules where the libraries leave room (restamp.c):
 *   - AceMQ replay stamps: acemq-replayed-from is a string (o->dlq, else the message's
 *     queue), acemq-replayed-at an RFC 3339 UTC string in whole seconds
 *     ("2026-02-03T04:05:06Z"), acemq-replay-count an int (int32, a long only past
 *     INT32_MAX). A stamp already there keeps
 *     its place (later duplicates of it are dropped); a new one is appended in that order.
 *   - AceMQ re-issue: the acemq-replayed-* stamps are removed (a new message, not a replay);
 *     keep_error is ignored (the error is the old message's); first-seen = now_ms (long).
 *   - BabelQueue re-issue: meta.id = the new id and meta.created_at = now_ms (the producer
 *     rules for a new message); trace_id kept. Causation cannot be carried: there is no field.
 *   - BabelQueue: x-attempts mirrors the body's attempts (0, or an attempt= change) in the kind
 *     it had when the value fits; the message_id, type and correlation_id properties, where
 *     set, follow meta.id, job and trace_id. type= edits job, or urn when the message has only
 *     the alias. A new body (o->body) gets the same edits; the target still comes from the
 *     dead letter, else from the new body. bq_bypass is ignored for the other dialects and
 *     for MOVE; keep_error outside an AceMQ replay.
 *   - Plain AMQP re-issue: only message_id and correlation_id change (timestamp is kept).
 *   - delivery_mode is written in every mode: 2 unless the dead letter said 1.
 *   - A target on the default exchange whose routing key is the DLQ itself is refused
 *     (ST_EINVAL), as the libraries refuse to replay onto the queue they read.
 *   - MOVE needs an explicit target and takes no changes and no new body (ST_EINVAL).
 *
 * Ownership: restamp_build fills *out, which the caller releases with outgoing_free. After an
 * error *out is zeroed: nothing to free (outgoing_free is still safe). The decode and options
 * are borrowed.
 */
#ifndef DLQX_RESTAMP_H
#define DLQX_RESTAMP_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "decode.h"
#include "envelope.h"
#include "message.h"
#include "status.h"

enum restamp_mode {
    RESTAMP_REPLAY,
    RESTAMP_REISSUE,
    RESTAMP_MOVE,
};

const char *restamp_mode_name(enum restamp_mode m);

struct restamp_opts {
    enum restamp_mode mode;
    const struct env_change *changes; /* applied in order after the mode's rules */
    size_t n_changes;
    const struct bytes *body;   /* a replacement body (from $EDITOR); NULL keeps the body */
    const char *to_exchange;    /* explicit target: exchange ("" = default exchange) ... */
    const char *to_routing_key; /* ... and routing key; both NULL: the dialect's own rule */
    const char *dlq;            /* the queue the dead letter was read from (NULL or "": the
                                 * message's queue) */
    bool bq_bypass;             /* BabelQueue: add bq-replay-bypass: "1" */
    bool keep_error;  /* AceMQ replay: keep attempt and x-acemq-error (the libs' option) */
    bool strip_fault; /* replay: also strip the framework's fault headers where its own
                       * tool keeps them (MassTransit's MT-Fault-*, MT-Reason, …) */
    bool ack_queue;   /* NServiceBus replay: add ServiceControl.Retry.AcknowledgementQueue
                       * (= ack_queue_name) as ServiceControl does; off by default */
    const char *ack_queue_name;
    int64_t now_ms;     /* the clock: acemq-replayed-at, first-seen of a re-issue */
    const char *new_id; /* re-issue: the new id; NULL mints a UUID v4 (tests pin it) */
};

/* The copy to publish. Everything is owned. */
struct outgoing {
    enum restamp_mode mode;
    const struct dialect_ops *dialect;
    struct bytes exchange; /* "" = the default exchange */
    struct bytes routing_key;
    const char *target_how; /* static: "explicit", or what the dialect read it from
                               ("x-death", "NServiceBus.FailedQ", "acemq-dlq-name", …) */
    struct props props;     /* delivery_mode is 2 (persistent) unless the dead letter said 1 */
    struct htable *headers; /* never NULL in a built copy */
    bool headers_present;
    struct bytes body;
    struct bytes id;          /* the copy's envelope id (new on a re-issue) */
    struct bytes old_id;      /* the dead letter's envelope id */
    char body_sha256[65];     /* of body, lowercase hex */
    char old_body_sha256[65]; /* of the dead letter's body */
};

/* Builds the copy; d and its message are not changed. Errors (each one sentence naming the
 * cause): no target can be worked out (ST_ENOTFOUND: "give --to EXCHANGE:ROUTING_KEY"), the
 * target is the DLQ itself (ST_EINVAL), a change the dialect cannot carry
 * (ST_EUNSUPPORTED), a BabelQueue dead letter whose body is raw-wrapped or not an envelope
 * and no replacement body is given (ST_EUNSUPPORTED), a reserved name (ST_ERESERVED), a
 * replacement body that does not parse as JSON when the content type says JSON, or a
 * BabelQueue body its consumers would reject (ST_EPARSE, naming the reason code), a MOVE with
 * changes or without a target (ST_EINVAL). */
enum status restamp_build(const struct decoded *d, const struct restamp_opts *o,
                          struct outgoing *out, struct error *err);
void outgoing_free(struct outgoing *o);

/* The changes as restamp_build applies them (restamp_headers.c): a header.NAME=V given without
 * a kind (env_change.untyped) on a header m has takes that header's kind — int32 stays int32,
 * range-checked; a value that does not read as the kind is ST_EINVAL naming the kind and the
 * typed form (header.NAME:string=V). A new header stays a string. *out is NULL when nothing
 * changes, else a copy of in (n changes) whose values point into *vals; both are released by
 * restamp_header_kinds_free. */
enum status restamp_header_kinds(const struct message *m, const struct env_change *in, size_t n,
                                 struct env_change **out, struct hval **vals, struct error *err);
void restamp_header_kinds_free(struct env_change *changes, struct hval *vals, size_t n);

/* Whether a header name is owned by the broker (not sent back on replay/re-issue). */
bool restamp_broker_owned(const char *name, size_t len);

/* Checks a replacement body against its content type: when the type contains "json" (any
 * case) the body must parse as JSON (ST_EPARSE with jansson's text). NULL type: no check. */
enum status restamp_check_body(const struct bytes *content_type, const struct bytes *body,
                               struct error *err);

#endif
