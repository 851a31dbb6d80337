/*
 * conn_frame: the frame that interrupted a consume, read and told apart once for every reader
 * of a consumer (the peek, the taps): see conn.h.
 */
#include <string.h>
#include <sys/time.h>

#include "conn.h"

enum conn_frame conn_read_interrupt(struct conn *c, const char *what, enum conn_err *kind,
                                    struct error *err)
{
    amqp_frame_t f;
    int rc = amqp_simple_wait_frame_noblock(conn_state(c), &f, &(struct timeval){1, 0});
    if (rc != AMQP_STATUS_OK) {
        conn_check_status(c, rc, what, kind, err);
        return CONN_FRAME_LOST;
    }
    return conn_frame_interrupt(c, &f, what, kind, err);
}

enum conn_frame conn_frame_interrupt(struct conn *c, const amqp_frame_t *f, const char *what,
                                     enum conn_err *kind, struct error *err)
{
    if (f->frame_type != AMQP_FRAME_METHOD)
        return CONN_FRAME_OTHER;
    amqp_rpc_reply_t reply;
    memset(&reply, 0, sizeof reply);
    reply.reply_type = AMQP_RESPONSE_SERVER_EXCEPTION;
    reply.reply = f->payload.method;
    switch (f->payload.method.id) {
    case AMQP_CHANNEL_CLOSE_METHOD:
        conn_check_reply(c, f->channel, reply, what, kind, err);
        return CONN_FRAME_CHANNEL;
    case AMQP_CONNECTION_CLOSE_METHOD:
        conn_check_reply(c, f->channel, reply, what, kind, err);
        return CONN_FRAME_LOST;
    case AMQP_BASIC_CANCEL_METHOD:
        if (kind)
            *kind = CONN_PROTOCOL;
        error_set(err, ST_EIO, "%s: the broker cancelled the consumer (was its queue deleted?)",
                  what);
        return CONN_FRAME_CANCELLED;
    default:
        return CONN_FRAME_OTHER;
    }
}
