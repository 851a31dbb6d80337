/*
 * replay_read: a delivery's content read from its frames for the replay's reader (rr_pump in
 * replay_wire.c), without rabbitmq-c's amqp_read_message and the pool it makes for every
 * message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "delivery.h"
#include "replay_run.h"
#include "util.h"

/* A delivery's content (its header and body frames, which follow the method on the channel)
 * into *msg as amqp_read_message reads it and with its answers, but without a pool of its own
 * for each message (a page allocated and zeroed, the properties cloned into it, then freed: a
 * tenth of the client's instructions). The properties stay in rabbitmq-c's frame buffers, and
 * so does a body that came in one frame: both valid until its buffers are released, which
 * only rr_pump does, at its start. A body in several frames is gathered in *owned (the
 * caller frees it). msg->pool is unused. */
/* The next frame of channel ch. A method of another channel that came between a delivery's
 * frames (a confirm) is handled there and then, as rr_pump would have (amqp_read_message
 * queued it instead); a connection.close is returned for the caller to report, and content of
 * another channel inside a delivery's is out of place (AMQP_STATUS_UNEXPECTED_STATE). */
static int next_frame(struct run *run, amqp_channel_t ch, amqp_frame_t *f)
{
    for (;;) {
        int rc = amqp_simple_wait_frame(run->st, f);
        if (rc != AMQP_STATUS_OK || f->channel == ch)
            return rc;
        if (f->frame_type != AMQP_FRAME_METHOD)
            return AMQP_STATUS_UNEXPECTED_STATE;
        amqp_method_number_t id = f->payload.method.id;
        if (id == AMQP_CONNECTION_CLOSE_METHOD)
            return rc;
        if (id == AMQP_BASIC_DELIVER_METHOD || id == AMQP_BASIC_RETURN_METHOD ||
            id == AMQP_BASIC_GET_OK_METHOD)
            return AMQP_STATUS_UNEXPECTED_STATE;
        rr_dispatch(run, f);
    }
}

/* A frame where the content's next one should be: a close is the broker's exception, anything
 * else out of place. */
static amqp_rpc_reply_t out_of_place(const amqp_frame_t *f)
{
    amqp_rpc_reply_t rep;
    memset(&rep, 0, sizeof rep);
    if (f->frame_type == AMQP_FRAME_METHOD &&
        (f->payload.method.id == AMQP_CHANNEL_CLOSE_METHOD ||
         f->payload.method.id == AMQP_CONNECTION_CLOSE_METHOD)) {
        rep.reply_type = AMQP_RESPONSE_SERVER_EXCEPTION;
        rep.reply = f->payload.method;
    } else {
        rep.reply_type = AMQP_RESPONSE_LIBRARY_EXCEPTION;
        rep.library_error = AMQP_STATUS_UNEXPECTED_STATE;
    }
    return rep;
}

static amqp_rpc_reply_t failed(int rc)
{
    amqp_rpc_reply_t rep;
    memset(&rep, 0, sizeof rep);
    rep.reply_type = AMQP_RESPONSE_LIBRARY_EXCEPTION;
    rep.library_error = rc;
    return rep;
}

amqp_rpc_reply_t rr_read_content(struct run *run, amqp_channel_t ch, amqp_message_t *msg,
                                 void **owned)
{
    amqp_rpc_reply_t rep;
    memset(&rep, 0, sizeof rep);
    rep.reply_type = AMQP_RESPONSE_NORMAL;
    memset(msg, 0, sizeof *msg);
    *owned = NULL;
    amqp_frame_t f;
    int rc = next_frame(run, ch, &f);
    if (rc != AMQP_STATUS_OK)
        return failed(rc);
    if (f.frame_type != AMQP_FRAME_HEADER)
        return out_of_place(&f);
    msg->properties = *(const amqp_basic_properties_t *)f.payload.properties.decoded;
    uint64_t size = f.payload.properties.body_size;
    if (size > DELIVERY_MAX_BODY || size > SIZE_MAX - 1)
        return failed(AMQP_STATUS_BAD_AMQP_DATA);
    uint64_t got = 0;
    unsigned char *buf = NULL;
    while (got < size) {
        rc = next_frame(run, ch, &f);
        if (rc == AMQP_STATUS_OK && f.frame_type != AMQP_FRAME_BODY) {
            free(buf);
            return out_of_place(&f);
        }
        if (rc == AMQP_STATUS_OK && f.payload.body_fragment.len > size - got)
            rc = AMQP_STATUS_BAD_AMQP_DATA;
        if (rc != AMQP_STATUS_OK) {
            free(buf);
            return failed(rc);
        }
        if (got == 0 && f.payload.body_fragment.len == size) {
            msg->body = f.payload.body_fragment; /* the usual case: one frame */
            return rep;
        }
        if (!buf)
            buf = xmalloc((size_t)size);
        memcpy(buf + got, f.payload.body_fragment.bytes, f.payload.body_fragment.len);
        got += f.payload.body_fragment.len;
    }
    msg->body.len = (size_t)size;
    msg->body.bytes = buf;
    *owned = buf;
    return rep;
}
