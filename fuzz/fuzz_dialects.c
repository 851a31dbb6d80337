/*
 * fuzz_dialects: a message (a snapshot line) through every dialect — recognition, decoding,
 * the dialect's own fields, the decode record, the detail document, and the replay and
 * re-issue rules — for every framework dlqx reads (src/dialects/).
 *
 * Input: a snapshot line. The seeds are every framework's fixtures (fuzz_mkseeds), and
 * fuzz_dialects.dict holds the header names, content types and envelope keys the dialects
 * look for, so that the fuzzer reaches each dialect's decoder and not only plain AMQP.
 *
 * Checks, beyond the sanitizers (every leak, overflow and undefined behaviour is a finding):
 *   - the dialect that reads the message is one whose recognise gave the highest confidence
 *     (ties to the earlier entry), and its confidence is what decode reports;
 *   - the envelope is never NULL; the decode record and the dialect's fields are valid JSON;
 *   - every line of the detail document is safe for a terminal (no C0, DEL, C1, bidi
 *     override; valid UTF-8), in UTF-8 and ASCII modes;
 *   - a replay and a re-issue either refuse with a reason or build a copy whose headers go
 *     through the wire unchanged and carry none of the broker's own headers (unless the
 *     dialect's own tool keeps them: the copy then equals the dead letter's x-death), and
 *     a second build with the same options is the same copy;
 *   - the snapshot store's index of it (store_prepare, which reads an AceMQ message's fields
 *     straight from its headers) is what a whole decode gives (store_prepare_decoded).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "decode.h"
#include "detail.h"
#include "fuzz.h"
#include "hval_amqp.h"
#include "restamp.h"
#include "store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const uint8_t *data, size_t size)
{
    fprintf(stderr, "fuzz_dialects: %s\n", what);
    fuzz_fail_bytes("fuzz_dialects", "input", data, size);
}

static bool line_safe(const struct detail_line *l, bool ascii)
{
    const unsigned char *p = (const unsigned char *)l->text;
    if (!utf8_valid(p, l->len) || strlen(l->text) != l->len)
        return false;
    for (size_t i = 0; i < l->len; i++) {
        if (p[i] < 0x20 || p[i] == 0x7f || (ascii && p[i] >= 0x80))
            return false;
        if (p[i] == 0xC2 && i + 1 < l->len && p[i + 1] >= 0x80 && p[i + 1] <= 0x9F)
            return false;
        if (p[i] == 0xE2 && i + 2 < l->len && p[i + 1] == 0x80 &&
            ((p[i + 2] >= 0x8B && p[i + 2] <= 0x8F) || (p[i + 2] >= 0xA8 && p[i + 2] <= 0xAE)))
            return false;
    }
    return true;
}

static void check_copy(const struct decoded *d, enum restamp_mode mode, const uint8_t *data,
                       size_t size)
{
    struct restamp_opts o;
    memset(&o, 0, sizeof o);
    o.mode = mode;
    o.now_ms = FUZZ_NOW_MS;
    o.new_id = "00000000-0000-4000-8000-000000000001";
    o.dlq = "dlq.fuzz";
    struct outgoing a, b;
    struct error err;
    error_clear(&err);
    enum status st = restamp_build(d, &o, &a, &err);
    if (st != ST_OK) {
        if (!err.msg[0])
            fail("restamp_build refused without saying why", data, size);
        outgoing_free(&a);
        return;
    }
    if (!a.headers || !a.target_how)
        fail("a built copy without headers or a target", data, size);
    struct bytes wire = {0, NULL};
    struct htable *back = NULL;
    if (htable_encode_wire(a.headers, &wire, &err) != ST_OK ||
        htable_decode_wire(wire.data, wire.len, &back, &err) != ST_OK ||
        !htable_equal(a.headers, back))
        fail("the copy's headers do not go through the wire unchanged", data, size);
    htable_free(back);
    bytes_free(&wire);
    for (size_t i = 0; i < a.headers->n; i++)
        if (!fuzz_copy_header_ok(d, mode, &a.headers->e[i].key, &a.headers->e[i].val))
            fail("the copy carries a broker-owned header it did not have", data, size);
    if (restamp_build(d, &o, &b, &err) != ST_OK)
        fail("a second build refused what the first built", data, size);
    else if (!bytes_eq(&a.body, &b.body) || !bytes_eq(&a.id, &b.id) ||
             !htable_equal(a.headers, b.headers) || !bytes_eq(&a.routing_key, &b.routing_key))
        fail("two builds with the same options differ", data, size);
    outgoing_free(&b);
    outgoing_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool init;
    if (!init) {
        setlocale(LC_ALL, "C.UTF-8");
        init = true;
    }
    struct message m;
    if (snapshot_parse_line((const char *)data, size, &m, NULL) != ST_OK) {
        message_free(&m);
        return 0;
    }
    struct decoded d;
    decode_message(&m, FUZZ_NOW_MS, &d);
    if (!d.env || !d.dialect)
        fail("decode left the envelope or the dialect out", data, size);

    /* The winner is the most confident (the first of equals). */
    struct dialect_input in = {.msg = &m,
                               .body = m.body.data ? (const void *)m.body.data : "",
                               .body_len = m.body.len,
                               .death = &d.death,
                               .now_ms = FUZZ_NOW_MS};
    int best = 1;
    const struct dialect_ops *winner = &dialect_amqp;
    for (size_t i = 0; i < dialect_count(); i++) {
        const struct dialect_ops *o = dialect_at(i);
        if (!o->recognise || o == &dialect_amqp)
            continue;
        struct dialect_match mm;
        memset(&mm, 0, sizeof mm);
        int c = o->recognise(&in, &mm);
        if (c > 100)
            c = 100;
        if (c < 0 || mm.n_by < 0 || mm.n_by > DIALECT_BY_MAX)
            fail("a confidence or a match out of range", data, size);
        if (c > best) {
            best = c;
            winner = o;
        }
    }
    if (winner != d.dialect || best != d.match.confidence)
        fail("the dialect that read it is not the most confident", data, size);

    json_t *rec = decoded_to_json(&d, FUZZ_NOW_MS);
    char *text = json_dumps(rec, JSON_COMPACT | JSON_ENSURE_ASCII);
    if (!text || !json_object_get(rec, d.dialect->name))
        fail("the decode record cannot be written, or lacks the dialect's object", data, size);
    free(text);
    json_decref(rec);

    static const unsigned flag_sets[] = {0, DETAIL_ASCII};
    for (size_t f = 0; f < 2; f++) {
        struct detail_doc doc;
        detail_render(&d, &m, FUZZ_NOW_MS, flag_sets[f], &doc);
        for (size_t i = 0; i < doc.n; i++)
            if (!line_safe(&doc.lines[i], flag_sets[f] & DETAIL_ASCII))
                fail("a detail line is not safe for a terminal", data, size);
        detail_doc_free(&doc);
    }
    check_copy(&d, RESTAMP_REPLAY, data, size);
    check_copy(&d, RESTAMP_REISSUE, data, size);
    if (!store_prepare_agrees(&m, FUZZ_NOW_MS))
        fail("the store's index of the message is not the decode's", data, size);
    decoded_free(&d);
    message_free(&m);
    return 0;
}
