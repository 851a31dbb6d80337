/*
 * delivery: a consumer's delivery read frame by frame (delivery.h).
 */
#include "delivery.h"

#include <stdlib.h>
#include <string.h>

#include "hval_amqp.h"
#include "util.h"

void delivery_init(struct delivery *d)
{
    memset(d, 0, sizeof *d); /* d->m is made when a delivery begins */
}

/* Empty again, but for what the buffers hold. */
static void delivery_reset(struct delivery *d)
{
    unsigned frames = d->held_frames;
    uint64_t bytes = d->held_bytes;
    delivery_init(d);
    d->held_frames = frames;
    d->held_bytes = bytes;
}

void delivery_clear(struct delivery *d)
{
    if (d->stage != 0)
        message_free(&d->m);
    delivery_reset(d);
}

static enum delivery_got broken(struct delivery *d, enum conn_frame *why, enum conn_err *kind,
                                struct error *err, const char *what)
{
    delivery_clear(d);
    *why = CONN_FRAME_LOST;
    if (kind)
        *kind = CONN_PROTOCOL;
    error_set(err, ST_EIO, "reading the queue: the broker sent %s", what);
    return DG_ENDED;
}

/* The delivery is whole: it becomes the caller's. */
static enum delivery_got whole(struct delivery *d, struct message *out, uint64_t *tag)
{
    *out = d->m;
    *tag = d->tag;
    delivery_reset(d);
    return DG_MESSAGE;
}

static enum delivery_got method(struct conn *c, amqp_channel_t ch, struct delivery *d,
                                const amqp_frame_t *f, enum conn_frame *why, enum conn_err *kind,
                                struct error *err)
{
    if (f->payload.method.id == AMQP_BASIC_DELIVER_METHOD && f->channel == ch) {
        if (d->stage != 0)
            return broken(d, why, kind, err, "a delivery inside another one's content");
        const amqp_basic_deliver_t *dm = f->payload.method.decoded;
        /* message_init but for the empty table: props_from_amqp makes the headers' (at the
         * content header, which every whole delivery has passed) */
        memset(&d->m, 0, sizeof d->m);
        d->m.exchange = bytes_dup(dm->exchange.len ? dm->exchange.bytes : "", dm->exchange.len);
        d->m.routing_key =
            bytes_dup(dm->routing_key.len ? dm->routing_key.bytes : "", dm->routing_key.len);
        d->m.redelivered = dm->redelivered != 0;
        d->tag = dm->delivery_tag;
        d->stage = 1;
        return DG_SKIPPED;
    }
    if (f->channel != ch && f->channel != 0)
        return DG_SKIPPED; /* not this read's: a channel closed before */
    enum conn_frame fr = conn_frame_interrupt(c, f, "reading the queue", kind, err);
    if (fr == CONN_FRAME_OTHER)
        return DG_SKIPPED;
    delivery_clear(d);
    *why = fr;
    return DG_ENDED;
}

enum delivery_got delivery_read(struct conn *c, amqp_channel_t ch, struct delivery *d,
                                const struct timeval *tv, struct message *out, uint64_t *tag,
                                enum conn_frame *why, enum conn_err *kind, struct error *err)
{
    amqp_connection_state_t st = conn_state(c);
    /* everything of the last delivery has been copied; a release every few dozen frames (it
     * costs as much as a tenth of dlqx's own work a small message) and before much is held */
    if (d->stage == 0 &&
        (d->held_frames >= DELIVERY_RELEASE_FRAMES || d->held_bytes >= DELIVERY_RELEASE_BYTES)) {
        amqp_maybe_release_buffers(st);
        d->held_frames = 0;
        d->held_bytes = 0;
    }
    amqp_frame_t f;
    struct timeval t = *tv;
    int rc = amqp_simple_wait_frame_noblock(st, &f, &t);
    if (rc == AMQP_STATUS_TIMEOUT)
        return DG_TIMEOUT;
    d->held_frames++;
    if (rc == AMQP_STATUS_OK && f.frame_type == AMQP_FRAME_BODY)
        d->held_bytes += f.payload.body_fragment.len;
    if (rc != AMQP_STATUS_OK) {
        delivery_clear(d);
        conn_check_status(c, rc, "reading the queue", kind, err);
        *why = CONN_FRAME_LOST;
        return DG_ENDED;
    }
    if (f.frame_type == AMQP_FRAME_METHOD)
        return method(c, ch, d, &f, why, kind, err);
    if (f.channel != ch)
        return DG_SKIPPED;
    if (f.frame_type == AMQP_FRAME_HEADER) {
        if (d->stage != 1)
            return broken(d, why, kind, err, "a content header without a delivery");
        uint64_t size = f.payload.properties.body_size;
        if (size > DELIVERY_MAX_BODY)
            return broken(d, why, kind, err, "a message larger than 1 GiB");
        props_from_amqp(f.payload.properties.decoded, &d->m.props, &d->m.headers,
                        &d->m.headers_present);
        d->size = size;
        d->got = 0;
        d->m.body.len = (size_t)size;
        d->m.body.data = xmalloc((size_t)size + 1);
        d->m.body.data[size] = '\0';
        d->stage = 2;
        return size == 0 ? whole(d, out, tag) : DG_SKIPPED;
    }
    if (f.frame_type == AMQP_FRAME_BODY) {
        const amqp_bytes_t *b = &f.payload.body_fragment;
        if (d->stage != 2 || b->len > d->size - d->got)
            return broken(d, why, kind, err, "more body than its content header announced");
        memcpy(d->m.body.data + d->got, b->bytes, b->len);
        d->got += b->len;
        return d->got == d->size ? whole(d, out, tag) : DG_SKIPPED;
    }
    return DG_SKIPPED;
}
