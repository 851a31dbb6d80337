/*
 * replay_shovel: replay_bench's anchor, RabbitMQ's own move: a dynamic shovel (the
 * rabbitmq_shovel plugin, which bench/run-replay.sh enables on the private node) from the DLQ
 * to the source queue, ack-mode on-confirm, src-delete-after queue-length (as the management
 * UI's "Move messages" makes it), created through the management API, timed from its creation
 * until the DLQ is empty and the target holds every message (polled); it deletes itself once
 * the last message is acked, which is awaited. Also the broker's own CPU time (its beam.smp, from
 * scripts/broker's pid file), so that every pass can say where its time went.
 *
 * Ownership: shovel_pass borrows the connection it polls on (channel ch open). The management
 * URL and credentials are only read. Any failure ends the process (die).
 */
#ifndef DLQX_REPLAY_SHOVEL_H
#define DLQX_REPLAY_SHOVEL_H

#include <stdint.h>

#include "conn.h"

struct shovel_api {
    const char *mgmt_url; /* e.g. http://127.0.0.1:PORT/ (DLQX_MGMT_URL) */
    const char *user, *password;
    const char *src_uri; /* the shovel's own connections: "amqp://" = direct, in the node */
};

/* Moves n messages from dlq to dest with a shovel named name; returns the seconds from the
 * management API's PUT to the moment both depths were right. Dies after limit_s. */
double shovel_pass(const struct shovel_api *api, struct conn *c, uint16_t ch, const char *name,
                   const char *dlq, const char *dest, uint32_t n, double limit_s);

/* The broker's CPU time (user + system) in seconds, from DLQX_BROKER_DIR/rabbitmq.pid;
 * negative when it cannot be read (a node not started by scripts/broker). */
double broker_cpu_s(void);

#endif
