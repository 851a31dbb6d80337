/*
 * replay_floor: the shovel rounds' fourth pass, the floor an AMQP client can reach. A bare
 * pipelined mover written plainly with rabbitmq-c, with none of dlqx's work: a consumer with
 * manual acks and a prefetch of `window`; each delivery's properties and body published
 * unchanged to the target (default exchange, mandatory, in confirm mode) as soon as it
 * arrives; each confirm (multiple or not) acks the dead letters up to it at once, also with
 * multiple. No decode, no re-stamp, no journal, no selection: the same frames on the wire as
 * dlqx's move, so what it costs the node is what any TCP client's move costs it. Its rate
 * against the in-node shovel's, in the same rounds, is the most any client could show.
 *
 * One publish per delivery, in order, on a fresh channel each: publish sequence k is the copy
 * of delivery tag k, so a confirm of k acks tag k. A nack, a returned copy or a lost
 * connection ends the process (die): the rounds check every pass afterwards.
 */
#include <inttypes.h>
#include <string.h>

#include <amqp.h>

#include "benchutil.h"
#include "replay_bench.h"
#include "util.h"

#define FLOOR_READ 2
#define FLOOR_PUB 3

static void floor_open(amqp_connection_state_t st, const char *dlq, uint32_t window)
{
    amqp_channel_open(st, FLOOR_READ);
    check_rpc(st, "floor: opening the reading channel");
    amqp_channel_open(st, FLOOR_PUB);
    check_rpc(st, "floor: opening the publishing channel");
    amqp_confirm_select(st, FLOOR_PUB);
    check_rpc(st, "floor: confirm.select");
    amqp_basic_qos(st, FLOOR_READ, 0, (uint16_t)(window > 65535 ? 65535 : window), 0);
    check_rpc(st, "floor: basic.qos");
    amqp_basic_consume(st, FLOOR_READ, amqp_cstring_bytes(dlq), amqp_empty_bytes, 0, 0, 0,
                       amqp_empty_table);
    check_rpc(st, "floor: basic.consume");
}

double floor_pass(const struct broker *b, const char *dlq, const char *target, uint32_t n,
                  uint32_t window, double *cpu)
{
    struct conn *c = bench_connect(b->url, b->password, "floor", FLOOR_READ);
    amqp_connection_state_t st = conn_state(c);
    amqp_channel_close(st, FLOOR_READ, AMQP_REPLY_SUCCESS); /* opened again below, as a pass */
    check_rpc(st, "floor: closing the first channel");
    double t0 = clock_mono_s(), c0 = cpu_s();
    floor_open(st, dlq, window);
    amqp_bytes_t to = amqp_cstring_bytes(target);
    uint64_t acked = 0;
    while (acked < n) {
        amqp_frame_t f;
        amqp_maybe_release_buffers(st);
        if (amqp_simple_wait_frame(st, &f) != AMQP_STATUS_OK)
            die("floor: the connection failed");
        if (f.frame_type != AMQP_FRAME_METHOD)
            die("floor: an unexpected frame (type %d)", f.frame_type);
        amqp_method_number_t id = f.payload.method.id;
        if (id == AMQP_BASIC_DELIVER_METHOD && f.channel == FLOOR_READ) {
            amqp_message_t m;
            amqp_rpc_reply_t r = amqp_read_message(st, FLOOR_READ, &m, 0);
            if (r.reply_type != AMQP_RESPONSE_NORMAL)
                die("floor: reading a delivery failed");
            if (amqp_basic_publish(st, FLOOR_PUB, amqp_empty_bytes, to, 1, 0, &m.properties,
                                   m.body) != AMQP_STATUS_OK)
                die("floor: a publish failed");
            amqp_destroy_message(&m);
        } else if (id == AMQP_BASIC_ACK_METHOD && f.channel == FLOOR_PUB) {
            const amqp_basic_ack_t *a = f.payload.method.decoded;
            if (amqp_basic_ack(st, FLOOR_READ, a->delivery_tag, a->multiple) != AMQP_STATUS_OK)
                die("floor: an ack failed");
            acked = a->delivery_tag; /* confirms come in order: everything up to it */
        } else if (id == AMQP_BASIC_NACK_METHOD || id == AMQP_BASIC_RETURN_METHOD) {
            die("floor: the broker %s a copy",
                id == AMQP_BASIC_NACK_METHOD ? "nacked" : "returned");
        } else if (id == AMQP_CHANNEL_CLOSE_METHOD || id == AMQP_CONNECTION_CLOSE_METHOD) {
            die("floor: the broker closed the %s",
                id == AMQP_CHANNEL_CLOSE_METHOD ? "channel" : "connection");
        }
    }
    /* The broker answers the close after every ack on the channel: all removed. */
    amqp_channel_close(st, FLOOR_READ, AMQP_REPLY_SUCCESS);
    check_rpc(st, "floor: closing the reading channel");
    double secs = clock_mono_s() - t0;
    *cpu = cpu_s() - c0;
    amqp_channel_close(st, FLOOR_PUB, AMQP_REPLY_SUCCESS);
    conn_close(c);
    return secs;
}
