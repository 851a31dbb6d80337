/*
 * broker_version: which RabbitMQ a connection reached, what that version changes for dlqx,
 * and the delivery limit that really applies to a quorum queue on it.
 *
 * The version comes from the server properties of connection.start (product "RabbitMQ",
 * version "3.10.8"), untrusted like every byte from the broker: a missing, foreign or
 * malformed value reads as unknown, and an unknown version is treated as the cautious one
 * (the one with the lower limit: a peek must never cross a limit it did not know of).
 *
 * What differs, as dlqx relies on it (docs/peek.md, "RabbitMQ versions"):
 *   4.0+   a quorum queue without a delivery limit has one of 20; -1 disables it
 *   4.3+   a quorum queue counts acquisitions (x-acquired-count) apart from failed
 *          deliveries (x-delivery-count)
 *   3.13+  x-death that a client publishes is ignored (the broker keeps its own)
 *
 * No I/O and no allocation: everything here is a plain value the caller owns.
 */
#ifndef DLQX_BROKER_VERSION_H
#define DLQX_BROKER_VERSION_H

#include <stdbool.h>
#include <stdint.h>

#include <amqp.h>
#include <jansson.h>

struct broker_version {
    bool known;              /* product RabbitMQ and a version that parsed */
    int major, minor, patch; /* 0 when unknown */
    char text[32];           /* as sent, printable ASCII only; "?" when none */
};

/* "3.10.8", "4.0.0-rc.1", "4.3.0+12.gabc": the leading major.minor[.patch]. false (and
 * *out unknown, text kept) for anything else. */
bool broker_version_parse(const char *s, struct broker_version *out);
/* From connection.start's server-properties table, as rabbitmq-c gives it
 * (amqp_get_server_properties; NULL reads as empty). */
void broker_version_from_props(const amqp_table_t *props, struct broker_version *out);
/* v is known and at least major.minor. */
bool broker_version_at_least(const struct broker_version *v, int major, int minor);

/* What the version changes, for a known version; an unknown one gets the cautious answer
 * for each (noted per field). */
struct broker_traits {
    int64_t quorum_default_limit; /* 20 from 4.0, -1 (none) before; unknown: 20 */
    bool negative_limit_disables; /* 4.0+: a delivery-limit of -1 means no limit; unknown: no */
    bool acquired_apart;          /* 4.3+: x-acquired-count beside x-delivery-count */
    bool ignores_client_x_death;  /* 3.13+; unknown: yes (a replay keeps its own count) */
};
void broker_traits_of(const struct broker_version *v, struct broker_traits *out);

#define LIMIT_ORIGIN_LIST(X)                                                                       \
    X(LIMIT_NONE, "none")                                                                          \
    X(LIMIT_ARGUMENT, "argument")                                                                  \
    X(LIMIT_POLICY, "policy")                                                                      \
    X(LIMIT_OPERATOR_POLICY, "operator policy")                                                    \
    X(LIMIT_QUEUE, "queue") /* one of the three, resolved before (peek_delivery_limit) */          \
    X(LIMIT_DEFAULT, "default")                                                                    \
    X(LIMIT_DISABLED, "disabled")

enum limit_origin {
#define X(e, s) e,
    LIMIT_ORIGIN_LIST(X)
#undef X
};
const char *limit_origin_name(enum limit_origin o);

struct delivery_limit {
    int64_t limit;            /* -1: no limit */
    enum limit_origin origin; /* where the value that applies comes from */
};

/* Absent source: BROKER_LIMIT_UNSET (any negative value the broker itself would not have
 * accepted is read as a request for "no limit", which only 4.x honours). */
#define BROKER_LIMIT_UNSET INT64_MIN

/* The effective delivery limit of a queue: the smallest non-negative value among its
 * argument (x-delivery-limit), its policy and its operator policy (delivery-limit), as the
 * broker resolves them; when none is non-negative, "disabled" if one asked for no limit on a
 * version that honours it, else the version's default (quorum queues on 4.x: 20). v NULL:
 * the version is not known here, only the sources count (no default, negatives ignored).
 * Classic queues and streams have no delivery limit. */
struct delivery_limit broker_delivery_limit(const struct broker_version *v, bool quorum,
                                            int64_t argument, int64_t policy,
                                            int64_t operator_policy);
/* The same from the management API's JSON: x-delivery-limit in arguments, delivery-limit in
 * the policy's and the operator policy's definitions (each may be NULL). Borrowed. */
struct delivery_limit broker_delivery_limit_json(const struct broker_version *v, bool quorum,
                                                 const json_t *arguments, const json_t *policy,
                                                 const json_t *operator_policy);

#endif
