/*
 * conn_batch: publishes written together. rabbitmq-c's amqp_basic_publish writes each of a
 * publish's frames (method, content header, body) with a system call of its own; a bulk replay
 * publishing a window of copies made three a copy. Here the same frames, encoded by
 * rabbitmq-c's own amqp_encode_method and amqp_encode_properties, are gathered in one buffer
 * and written with one send(2) a batch. A TLS connection's stream belongs to rabbitmq-c's TLS
 * layer: there each publish goes out at once through conn_publish.
 */
#include "conn_batch.h"

#include "conn_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <amqp_framing.h>

#include "util.h"

#define FRAME_HEADER 7 /* type, channel, payload size */
#define FRAME_END_BYTE 0xCE

void conn_batch_init(struct conn_batch *b)
{
    sb_init(&b->buf);
    b->n = 0;
}

void conn_batch_free(struct conn_batch *b)
{
    sb_free(&b->buf);
    b->n = 0;
}

static void put_u16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}

static void put_u32(unsigned char *p, uint32_t v)
{
    put_u16(p, (uint16_t)(v >> 16));
    put_u16(p + 2, (uint16_t)v);
}

static void put_u64(unsigned char *p, uint64_t v)
{
    put_u32(p, (uint32_t)(v >> 32));
    put_u32(p + 4, (uint32_t)v);
}

/* Room for one frame of at most max payload bytes at the buffer's end: its start. */
static unsigned char *frame_room(struct strbuf *sb, size_t max)
{
    xgrow((void **)&sb->buf, &sb->cap, sb->len + FRAME_HEADER + max + 2, 1);
    return (unsigned char *)sb->buf + sb->len;
}

/* Ends the frame begun at p (type, channel, payload of n bytes already in place). */
static void frame_close(struct strbuf *sb, unsigned char *p, uint8_t type, uint16_t ch, size_t n)
{
    p[0] = type;
    put_u16(p + 1, ch);
    put_u32(p + 3, (uint32_t)n);
    p[FRAME_HEADER + n] = FRAME_END_BYTE;
    sb->len += FRAME_HEADER + n + 1;
    sb->buf[sb->len] = '\0'; /* a strbuf's rule (frame_room left room for it) */
}

int conn_batch_publish(struct conn *c, struct conn_batch *b, amqp_channel_t ch,
                       amqp_bytes_t exchange, amqp_bytes_t routing_key, bool mandatory,
                       const amqp_basic_properties_t *props, amqp_bytes_t body)
{
    if (c->tls)
        return conn_publish(c, ch, exchange, routing_key, mandatory, props, body);
    if (!c->alive)
        return AMQP_STATUS_CONNECTION_CLOSED;
    int frame_max = amqp_get_frame_max(c->st);
    if (frame_max <= FRAME_HEADER + 1 + 12)
        return AMQP_STATUS_BAD_AMQP_DATA;
    size_t max = (size_t)frame_max - FRAME_HEADER - 1; /* a frame's payload, at most */
    size_t undo = b->buf.len;

    amqp_basic_publish_t m = {.ticket = 0,
                              .exchange = exchange,
                              .routing_key = routing_key,
                              .mandatory = mandatory,
                              .immediate = 0};
    /* basic.publish: two short strings (255 bytes at most each) and a few bytes more. */
    size_t room = max < 600 ? max : 600;
    unsigned char *p = frame_room(&b->buf, room);
    put_u32(p + FRAME_HEADER, AMQP_BASIC_PUBLISH_METHOD);
    amqp_bytes_t enc = {room - 4, p + FRAME_HEADER + 4};
    int n = amqp_encode_method(AMQP_BASIC_PUBLISH_METHOD, &m, enc);
    if (n < 0) {
        b->buf.len = undo;
        return n;
    }
    frame_close(&b->buf, p, AMQP_FRAME_METHOD, ch, (size_t)n + 4);

    /* The content header: most fit 4 KB; a larger table is encoded again with a frame's
     * room. */
    amqp_basic_properties_t none = {._flags = 0};
    void *pr = (void *)(uintptr_t)(props ? props : &none);
    room = max < 4096 ? max : 4096;
    for (;;) {
        p = frame_room(&b->buf, room);
        put_u16(p + FRAME_HEADER, AMQP_BASIC_CLASS);
        put_u16(p + FRAME_HEADER + 2, 0); /* weight */
        put_u64(p + FRAME_HEADER + 4, body.len);
        enc = (amqp_bytes_t){room - 12, p + FRAME_HEADER + 12};
        n = amqp_encode_properties(AMQP_BASIC_CLASS, pr, enc);
        if (n >= 0 || room == max)
            break;
        room = max;
    }
    if (n < 0) {
        b->buf.len = undo;
        return n;
    }
    frame_close(&b->buf, p, AMQP_FRAME_HEADER, ch, (size_t)n + 12);

    for (size_t off = 0; off < body.len;) {
        size_t k = body.len - off < max ? body.len - off : max;
        p = frame_room(&b->buf, k);
        memcpy(p + FRAME_HEADER, (const unsigned char *)body.bytes + off, k);
        frame_close(&b->buf, p, AMQP_FRAME_BODY, ch, k);
        off += k;
    }
    b->n++;
    return AMQP_STATUS_OK;
}

int conn_batch_flush(struct conn *c, struct conn_batch *b)
{
    size_t len = b->buf.len;
    b->n = 0;
    if (!len)
        return AMQP_STATUS_OK;
    b->buf.len = 0;
    if (!c->alive)
        return AMQP_STATUS_CONNECTION_CLOSED;
    if (conn_node_silent(c)) {
        c->alive = false;
        return AMQP_STATUS_HEARTBEAT_TIMEOUT;
    }
    int fd = amqp_get_sockfd(c->st);
    int hb = amqp_get_heartbeat(c->st);
    int wait_ms = hb > 0 ? hb * 2000 : 30000; /* rabbitmq-c's own patience, two intervals */
    const unsigned char *data = (const unsigned char *)b->buf.buf;
    for (size_t off = 0; off < len;) {
        ssize_t w = send(fd, data + off, len - off, MSG_NOSIGNAL);
        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            struct pollfd pf = {fd, POLLOUT, 0};
            int r;
            do
                r = poll(&pf, 1, wait_ms);
            while (r < 0 && errno == EINTR);
            if (r > 0)
                continue;
            c->alive = false;
            return r == 0 ? AMQP_STATUS_HEARTBEAT_TIMEOUT : AMQP_STATUS_SOCKET_ERROR;
        }
        c->alive = false;
        return AMQP_STATUS_SOCKET_ERROR;
    }
    return AMQP_STATUS_OK;
}
