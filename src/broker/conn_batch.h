/*
 * conn_batch: publishes gathered and written with one send(2) (conn_batch.c). Ownership: the
 * batch owns its buffer (conn_batch_free). A publish added is on the wire only after
 * conn_batch_flush; on a TLS connection each goes out at once.
 */
#ifndef DLQX_CONN_BATCH_H
#define DLQX_CONN_BATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "conn.h"
#include "util.h"

struct conn_batch {
    struct strbuf buf; /* the frames of the publishes added, not yet written */
    size_t n;          /* how many */
};

void conn_batch_init(struct conn_batch *b);
void conn_batch_free(struct conn_batch *b);
/* Adds a publish (never immediate): the frames amqp_basic_publish would write. Returns an
 * AMQP_STATUS_* (a property table that does not encode, a closed connection). */
int conn_batch_publish(struct conn *c, struct conn_batch *b, amqp_channel_t ch,
                       amqp_bytes_t exchange, amqp_bytes_t routing_key, bool mandatory,
                       const amqp_basic_properties_t *props, amqp_bytes_t body);
/* Writes every publish added, in order, with one send(2) (waiting for room in the socket as
 * rabbitmq-c does, at most two heartbeat intervals); a node silent for 1.5 intervals is taken
 * as hung first, as conn_publish does. The batch is empty afterwards. Returns AMQP_STATUS_*;
 * after a failure the connection is marked dead and any of the publishes may have been sent. */
int conn_batch_flush(struct conn *c, struct conn_batch *b);

#endif
