/*
 * fuzz_properties_wire: the basic properties of a delivery as the broker sends them — the
 * property flags, then each property present (content type, encoding, headers table,
 * delivery mode, priority, correlation id, reply-to, expiration, message id, timestamp,
 * type, user id, app id, cluster id) — through librabbitmq's decoder (amqp_decode_properties,
 * as amqp_consume_message does) and props_from_amqp, as peek reads them; then everything that
 * reads a message.
 *
 * Checks, beyond the sanitizers:
 *   - the wire round trip: props_to_amqp of what was read, encoded by librabbitmq and decoded
 *     again, reads back as the same properties and headers (message_equal): what a replay
 *     publishes carries what the dead letter carried;
 *   - the snapshot round trip (fuzz_snapshot_round_trip) of the message;
 *   - decode_message and decoded_to_json accept it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <amqp.h>
#include <amqp_framing.h>
#include <jansson.h>

#include "decode.h"
#include "fuzz.h"
#include "hval_amqp.h"
#include "message.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const uint8_t *data, size_t size, const struct error *err)
{
    fprintf(stderr, "fuzz_properties_wire: %s%s%s\n", what, err && err->msg[0] ? ": " : "",
            err && err->msg[0] ? err->msg : "");
    fuzz_fail_bytes("fuzz_properties_wire", "input", data, size);
}

/* Reads encoded properties into m (initialised here); false when librabbitmq refuses them. */
static bool read_props(const void *p, size_t n, struct message *m)
{
    amqp_pool_t pool;
    init_amqp_pool(&pool, 4096);
    amqp_bytes_t enc = {n, (void *)(uintptr_t)p};
    void *decoded = NULL;
    message_init(m);
    m->queue = bytes_from_cstr("orders.dlq");
    m->routing_key = bytes_from_cstr("orders.dlq");
    if (amqp_decode_properties(AMQP_BASIC_CLASS, &pool, enc, &decoded) != AMQP_STATUS_OK ||
        !decoded) {
        empty_amqp_pool(&pool);
        return false;
    }
    props_from_amqp(decoded, &m->props, &m->headers, &m->headers_present);
    empty_amqp_pool(&pool);
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct message m;
    if (!read_props(data, size, &m)) {
        message_free(&m);
        return 0;
    }

    /* Written back as a replay writes them, then read as the broker would deliver them. */
    amqp_pool_t pool;
    init_amqp_pool(&pool, 4096);
    amqp_basic_properties_t out;
    props_to_amqp(&m.props, m.headers, m.headers_present, &pool, &out);
    size_t cap = size * 2 + 4096;
    unsigned char *buf = xmalloc(cap);
    amqp_bytes_t enc = {cap, buf};
    int n = amqp_encode_properties(AMQP_BASIC_CLASS, &out, enc);
    empty_amqp_pool(&pool);
    if (n < 0)
        fail("properties read from the wire do not encode again", data, size, NULL);
    struct message back;
    if (!read_props(buf, (size_t)n, &back))
        fail("encoded properties do not decode again", data, size, NULL);
    free(buf);
    if (!message_equal(&m, &back))
        fail("encode then decode gives different properties or headers", data, size, NULL);
    message_free(&back);

    struct strbuf line;
    sb_init(&line);
    struct error err;
    const char *why = fuzz_snapshot_round_trip(&m, &line, &err);
    if (why)
        fail(why, data, size, &err);
    sb_free(&line);

    fuzz_decode(&m, "fuzz_properties_wire");
    message_free(&m);
    return 0;
}
