/*
 * delivery: a consumer's delivery read frame by frame, no wait longer than the caller allows.
 *
 * amqp_consume_message waits for a delivery's first frame no longer than its timeout, but for
 * the rest of it (the content header and the body frames) with no deadline but the heartbeats'.
 * A connection that stalls in the middle of a message (a node that pauses, a congested link,
 * anything that cuts the stream between two frames) would then hold its reader for two
 * heartbeat intervals; in the explorer, which steps every queue's peek in turn on one thread,
 * that is every key and every other queue's reading held too. Here each frame is waited for no
 * longer than the timeout given, and what has come of a delivery is kept (copied out of
 * rabbitmq-c's buffers at once) until the rest arrives.
 */
#ifndef DLQX_DELIVERY_H
#define DLQX_DELIVERY_H

#include <stdint.h>
#include <sys/time.h>

#include "conn.h"
#include "message.h"

/* The largest body read (a content header announcing more is refused as a protocol error):
 * above RabbitMQ's own ceiling (512 MiB, max_message_size). */
#define DELIVERY_MAX_BODY ((uint64_t)1 << 30)

struct delivery {
    int stage; /* 0: none begun; 1: the content header awaited; 2: body frames awaited */
    uint64_t tag;
    uint64_t size, got;
    struct message
        m; /* exchange, routing key, redelivered, properties, headers, body (stage > 0) */
    /* What rabbitmq-c's buffers hold since they were last released (kept across deliveries):
     * they are released between deliveries once DELIVERY_RELEASE_FRAMES frames or
     * DELIVERY_RELEASE_BYTES bytes of bodies have been read, not after every delivery. */
    unsigned held_frames;
    uint64_t held_bytes;
};
#define DELIVERY_RELEASE_FRAMES 32
#define DELIVERY_RELEASE_BYTES ((uint64_t)256 * 1024)

enum delivery_got {
    DG_TIMEOUT, /* nothing more within the timeout (a delivery may be part-read: d keeps it) */
    DG_MESSAGE, /* *out is a whole delivery (the caller's, with *tag); d is empty again */
    DG_SKIPPED, /* a frame that is not the reader's (another channel, a method of no concern) */
    DG_ENDED,   /* the connection or channel ended, or the broker broke the protocol: *why,
                 *kind and err say which (conn_read_interrupt's kinds) */
};

/* An empty delivery (all zero bytes are one too). */
void delivery_init(struct delivery *d);
/* Forgets a part-read delivery (a read begun again, a peek ended). */
void delivery_clear(struct delivery *d);
/* One frame at most, waited for no longer than tv. */
enum delivery_got delivery_read(struct conn *c, amqp_channel_t ch, struct delivery *d,
                                const struct timeval *tv, struct message *out, uint64_t *tag,
                                enum conn_frame *why, enum conn_err *kind, struct error *err);

#endif
