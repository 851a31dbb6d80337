/*
 * fuzz_wire_snapshot: headers as the broker delivers them, written to a snapshot and read
 * back — at any depth. A peek writes exactly what it received; a snapshot that cannot be
 * read back, or reads back as something else, has lost a message.
 *
 * Input: 2 bytes (big-endian) of nesting depth (0..8191), 1 byte of shape, then an AMQP
 * field table in wire form (as fuzz_headers_wire). The decoded table goes into the message's
 * headers, and its copy again as the innermost value of a header "deep" nested depth levels:
 * at level k a table {"n": …} or, when bit (k % 8) of the shape byte is set, an array [ … ].
 * 8191 levels of a one-entry table are 57 KB on the wire: a real delivery can carry them.
 *
 * Checks, beyond the sanitizers:
 *   - the wire round trip of the whole table (htable_encode_wire, htable_decode_wire) gives
 *     an htable_equal table;
 *   - the snapshot round trip (fuzz_snapshot_round_trip) gives a message_equal message:
 *     every kind, value, order and duplicate kept, at every depth;
 *   - so does the peek's own path: store_append of the message, then store_get of it;
 *   - decode_message and decoded_to_json accept it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "decode.h"
#include "fuzz.h"
#include "hval_amqp.h"
#include "message.h"
#include "store.h"

#define MAX_DEPTH 8191

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, size_t depth, const struct strbuf *line, const struct error *err)
{
    fprintf(stderr, "fuzz_wire_snapshot: %s (depth %zu)%s%s\n", what, depth,
            err && err->msg[0] ? ": " : "", err && err->msg[0] ? err->msg : "");
    if (line && line->len)
        fprintf(stderr, "  written (first 400 bytes): %.*s\n",
                (int)(line->len > 400 ? 400 : line->len), line->buf);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    size_t depth = ((size_t)data[0] << 8 | data[1]) & MAX_DEPTH;
    unsigned shape = data[2];
    struct htable *h = NULL;
    if (htable_decode_wire(data + 3, size - 3, &h, NULL) != ST_OK)
        return 0;

    struct hval v = hval_table();
    htable_free(v.v.tab);
    v.v.tab = htable_copy(h);
    for (size_t k = 0; k < depth; k++) {
        struct hval outer;
        if (shape >> (k % 8) & 1) {
            outer = hval_array();
            harray_add(&outer.v.arr, v);
        } else {
            outer = hval_table();
            htable_add(outer.v.tab, "n", v);
        }
        v = outer;
    }
    htable_add(h, "deep", v);

    struct message m;
    fuzz_message_with(&m, h);
    m.routing_key = bytes_from_cstr("orders.dlq");
    m.fetched_at_ms = FUZZ_NOW_MS;

    struct error err;
    error_clear(&err);
    struct bytes wire = {0, NULL};
    if (htable_encode_wire(h, &wire, &err) != ST_OK)
        fail("a decoded table, nested, does not encode", depth, NULL, &err);
    struct htable *again = NULL;
    if (htable_decode_wire(wire.data, wire.len, &again, &err) != ST_OK)
        fail("an encoded table does not decode", depth, NULL, &err);
    if (!htable_equal(h, again))
        fail("encode then decode gives a different table", depth, NULL, NULL);
    htable_free(again);
    bytes_free(&wire);

    struct strbuf line;
    sb_init(&line);
    const char *why = fuzz_snapshot_round_trip(&m, &line, &err);
    if (why)
        fail(why, depth, &line, &err);
    sb_free(&line);

    struct store *st = NULL;
    struct message kept;
    if (store_new(0, NULL, &st, &err) != ST_OK || store_append(st, &m, FUZZ_NOW_MS, &err) != ST_OK)
        fail("the store refused the message", depth, NULL, &err);
    if (store_get(st, 0, &kept, &err) != ST_OK)
        fail("the store cannot give the message back", depth, NULL, &err);
    if (!message_equal(&m, &kept))
        fail("the store gives back a different message", depth, NULL, NULL);
    message_free(&kept);
    store_free(st);

    fuzz_decode(&m, "fuzz_wire_snapshot");
    message_free(&m);
    return 0;
}
