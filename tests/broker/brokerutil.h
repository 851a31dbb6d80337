/*
 * brokerutil: what the live-broker suites share — a raw librabbitmq connection to the test
 * node (from the environment scripts/broker writes), declaring queues, publishing with
 * confirms, and reading a queue's exact contents independently of dlqx's own peek.
 */
#ifndef DLQX_BROKERUTIL_H
#define DLQX_BROKERUTIL_H

#include <amqp.h>

#include "conn.h"
#include "message.h"

struct msglist {
    struct message *m;
    size_t n;
};

void msglist_free(struct msglist *l);

/* The test node: DLQX_URL and DLQX_PASSWORD_FILE must be set (the suite fails otherwise). */
const char *bt_url(void);
const char *bt_password(void);
struct conn *bt_connect(void);

/* Declares a durable queue with arguments (a table, may be NULL); deletes it first. */
void bt_queue_fresh(struct conn *c, const char *name, const struct htable *args);
void bt_queue_delete(struct conn *c, const char *name);
/* Publishes messages through the default exchange (or exchange/rk of each when set), waiting
 * for every confirm. */
void bt_publish(struct conn *c, const char *exchange, const char *routing_key,
                const struct message *msgs, size_t n);
/* Reads every message of a queue by holding them all and closing the channel (the same
 * technique as peek, written separately so that it can judge peek). */
struct msglist bt_read_all(struct conn *c, const char *queue, size_t expect);
uint32_t bt_depth(struct conn *c, const char *queue);
/* Quorum queues count returned messages a moment late: polls (up to 10 s) until want. */
uint32_t bt_depth_settled(struct conn *c, const char *queue, uint32_t want);
/* 1000 mixed messages: AceMQ, BabelQueue and plain ones; every header kind; text, JSON and
 * binary bodies; various properties. */
struct msglist bt_mixed_messages(size_t n, unsigned seed);
/* Equal as the broker keeps them: properties, headers and body; the delivery's redelivered
 * flag, fetch time and queue name ignored. quorum: x-delivery-count ignored and header order
 * too (a quorum queue re-encodes headers sorted by name when a message is returned). */
bool bt_same_message(const struct message *a, const struct message *b, bool ignore_dc);

#endif
