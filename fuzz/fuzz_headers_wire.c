/*
 * fuzz_headers_wire: an AMQP field table as the broker would deliver it — 4-byte length
 * prefix, then the entries — through librabbitmq's decoder and every reader of headers.
 * Bytes after the table, if any, are the routing key (at most 255 of them, as in AMQP).
 *
 * Checks, beyond the sanitizers:
 *   - the wire round trip: htable_encode_wire of the decoded table decodes back into an
 *     htable_equal table (kind, order, duplicates and bytes kept);
 *   - the AceMQ round trip: the envelope read from acemq_to_headers(e) is envelope_equal
 *     to e (what dlqx writes back, AceMQ reads as the same envelope);
 *   - death_read, decode_message and decoded_to_json accept whatever the table holds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "acemq.h"
#include "death.h"
#include "decode.h"
#include "envelope.h"
#include "fuzz.h"
#include "hval_amqp.h"
#include "message.h"
#include "status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const struct error *err)
{
    fprintf(stderr, "fuzz_headers_wire: %s%s%s\n", what, err && err->msg[0] ? ": " : "",
            err && err->msg[0] ? err->msg : "");
    abort();
}

static void check_wire_round_trip(const struct htable *h)
{
    struct error err;
    error_clear(&err);
    struct bytes wire = {0, NULL};
    if (htable_encode_wire(h, &wire, &err) != ST_OK)
        fail("a decoded table does not encode", &err);
    struct htable *again = NULL;
    if (htable_decode_wire(wire.data, wire.len, &again, &err) != ST_OK)
        fail("an encoded table does not decode", &err);
    if (!htable_equal(h, again))
        fail("encode then decode gives a different table", NULL);
    htable_free(again);
    bytes_free(&wire);
}

static void check_acemq_round_trip(const struct htable *h, const struct bytes *rk)
{
    /* A fixed digest stands in for the message's bytes: the derived id is then stable. */
    static const unsigned char digest_bytes[32] = {0xd1, 0x9e, 0x57};
    const struct bytes digest = {sizeof digest_bytes, (unsigned char *)(uintptr_t)digest_bytes};
    struct error err;
    error_clear(&err);
    const struct envelope *e = NULL;
    if (acemq_from_headers(h, rk, NULL, &digest, FUZZ_NOW_MS, &e, &err) != ST_OK)
        return; /* refusing is allowed; reading must then leave nothing behind */
    struct htable *written = acemq_to_headers(e, rk);
    const struct envelope *back = NULL;
    if (acemq_from_headers(written, rk, NULL, &digest, FUZZ_NOW_MS, &back, &err) != ST_OK)
        fail("AceMQ cannot read the headers dlqx wrote for its envelope", &err);
    if (!envelope_equal(e, back))
        fail("acemq_from_headers(acemq_to_headers(e)) differs from e", NULL);
    check_wire_round_trip(written);
    envelope_free(back);
    htable_free(written);
    envelope_free(e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct htable *h = NULL;
    if (htable_decode_wire(data, size, &h, NULL) != ST_OK)
        return 0;
    /* The decoder succeeded, so the length prefix is there and the table fits in size. */
    size_t table_len = 4 + ((size_t)data[0] << 24 | (size_t)data[1] << 16 | (size_t)data[2] << 8 |
                            (size_t)data[3]);
    size_t rk_len = size - table_len;
    if (rk_len > 255)
        rk_len = 255;

    struct message m;
    message_init(&m);
    htable_free(m.headers);
    m.headers = h; /* the message owns the table from here */
    m.headers_present = true;
    m.routing_key = bytes_dup(data + table_len, rk_len);
    m.queue = bytes_from_cstr("orders.dlq");

    check_wire_round_trip(m.headers);
    check_acemq_round_trip(m.headers, &m.routing_key);

    struct death_summary ds;
    death_read(m.headers, &ds);
    death_free(&ds);

    struct decoded d;
    decode_message(&m, FUZZ_NOW_MS, &d);
    json_t *rec = decoded_to_json(&d, FUZZ_NOW_MS);
    if (!rec)
        fail("decoded_to_json returned NULL", NULL);
    char *text = json_dumps(rec, JSON_COMPACT);
    free(text);
    json_decref(rec);
    decoded_free(&d);

    message_free(&m);
    return 0;
}
