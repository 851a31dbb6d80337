/*
 * fuzz_restamp: a dead letter (a snapshot line) and the options of a replay, re-issue or move
 * through restamp_build — the copy dlqx would publish — and the plan's diff of it.
 *
 * Input: one byte of options, then a snapshot line. Options: bits 0-1 the mode (replay,
 * re-issue with a fixed new id, move, replay keeping the error), bit 2 an explicit target
 * ("" : "orders"), bit 3 BabelQueue's bq-replay-bypass, bit 4 the change header.tenant=acme,
 * bit 5 the change -header.tenant, bit 6 a replacement body {"replaced":true}.
 *
 * Checks, beyond the sanitizers:
 *   - a refusal says why (err.msg non-empty) and leaves nothing to free;
 *   - the copy carries none of the broker's headers it may not (fuzz_copy_header_ok: never
 *     the delivery's counters; after a replay or re-issue no other broker-owned header but
 *     the dead letter's own on a replay whose framework keeps the death history);
 *   - its body_sha256 is the SHA-256 of its body, and old_body_sha256 that of the dead letter;
 *   - its headers encode on the wire and decode back htable_equal (what is published is what
 *     was built), and a second build with the same options is identical (deterministic);
 *   - an AceMQ replay or re-issue reads back, from the copy's headers, as an AceMQ envelope
 *     with the copy's id; a replay's acemq-replay-count is one more than the dead letter's;
 *   - restamp_diff, diff_to_json and restamp_changes_json accept the pair, and the journal's
 *     text (restamp_changes_text) is jansson's dump of restamp_changes_json byte for byte.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "acemq.h"
#include "decode.h"
#include "fuzz.h"
#include "hval_amqp.h"
#include "message.h"
#include "restamp_diff.h"
#include "sha256.h"
#include "snapshot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const uint8_t *data, size_t size, const struct error *err)
{
    fprintf(stderr, "fuzz_restamp: %s%s%s\n", what, err && err->msg[0] ? ": " : "",
            err && err->msg[0] ? err->msg : "");
    fuzz_fail_bytes("fuzz_restamp", "input", data, size);
}

static bool same_outgoing(const struct outgoing *a, const struct outgoing *b)
{
    struct message ma, mb;
    memset(&ma, 0, sizeof ma);
    memset(&mb, 0, sizeof mb);
    ma.props = a->props;
    mb.props = b->props;
    ma.headers = a->headers;
    mb.headers = b->headers;
    ma.headers_present = a->headers_present;
    mb.headers_present = b->headers_present;
    return a->mode == b->mode && a->dialect == b->dialect && bytes_eq(&a->exchange, &b->exchange) &&
           bytes_eq(&a->routing_key, &b->routing_key) &&
           ((!a->target_how && !b->target_how) ||
            (a->target_how && b->target_how && strcmp(a->target_how, b->target_how) == 0)) &&
           bytes_eq(&a->body, &b->body) && bytes_eq(&a->id, &b->id) &&
           bytes_eq(&a->old_id, &b->old_id) && message_equal(&ma, &mb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned opt = data[0];
    struct message m;
    if (snapshot_parse_line((const char *)data + 1, size - 1, &m, NULL) != ST_OK) {
        message_free(&m);
        return 0;
    }
    struct decoded d;
    decode_message(&m, FUZZ_NOW_MS, &d);

    static const enum restamp_mode modes[4] = {RESTAMP_REPLAY, RESTAMP_REISSUE, RESTAMP_MOVE,
                                               RESTAMP_REPLAY};
    struct restamp_opts o;
    memset(&o, 0, sizeof o);
    o.mode = modes[opt & 3];
    o.keep_error = (opt & 3) == 3;
    o.now_ms = FUZZ_NOW_MS;
    o.new_id = "0b7e1b3c-5f0e-4d7a-9a51-6c1f3e2d4b5a";
    o.dlq = "orders.dlq";
    if (opt & 4) {
        o.to_exchange = "";
        o.to_routing_key = "orders";
    }
    o.bq_bypass = (opt & 8) != 0;
    struct hval acme = hval_cstring("acme");
    struct env_change ch[2];
    memset(ch, 0, sizeof ch);
    size_t n = 0;
    if (opt & 16)
        ch[n++] = (struct env_change){.field = EF_HEADER_SET, .header = "tenant", .value = &acme};
    if (opt & 32)
        ch[n++] = (struct env_change){.field = EF_HEADER_REMOVE, .header = "tenant"};
    o.changes = ch;
    o.n_changes = n;
    struct bytes body = bytes_from_cstr("{\"replaced\":true}");
    if (opt & 64)
        o.body = &body;

    struct outgoing out;
    struct error err;
    error_clear(&err);
    if (restamp_build(&d, &o, &out, &err) != ST_OK) {
        if (!err.msg[0])
            fail("restamp_build refused without saying why", data, size, NULL);
        outgoing_free(&out); /* zeroed: safe */
        goto done;
    }
    if (!out.headers)
        fail("a built copy without a header table", data, size, NULL);
    for (size_t i = 0; i < out.headers->n; i++)
        if (!fuzz_copy_header_ok(&d, o.mode, &out.headers->e[i].key, &out.headers->e[i].val))
            fail("the copy carries a header the broker owns", data, size, NULL);
    char hex[65];
    sha256_hex(out.body.data ? (const void *)out.body.data : "", out.body.len, hex);
    if (strcmp(hex, out.body_sha256) != 0)
        fail("body_sha256 is not the SHA-256 of the copy's body", data, size, NULL);
    sha256_hex(m.body.data ? (const void *)m.body.data : "", m.body.len, hex);
    if (strcmp(hex, out.old_body_sha256) != 0)
        fail("old_body_sha256 is not the SHA-256 of the dead letter's body", data, size, NULL);

    struct bytes wire = {0, NULL};
    struct htable *back = NULL;
    if (htable_encode_wire(out.headers, &wire, &err) != ST_OK ||
        htable_decode_wire(wire.data, wire.len, &back, &err) != ST_OK)
        fail("the copy's headers do not go through the wire", data, size, &err);
    if (!htable_equal(out.headers, back))
        fail("the copy's headers change on the wire", data, size, NULL);
    htable_free(back);
    bytes_free(&wire);

    struct outgoing again;
    if (restamp_build(&d, &o, &again, &err) != ST_OK || !same_outgoing(&out, &again))
        fail("a second build with the same options differs", data, size, &err);
    outgoing_free(&again);

    if (out.dialect == &dialect_acemq && o.mode != RESTAMP_MOVE) {
        static const unsigned char dg[32] = {7};
        const struct bytes digest = {sizeof dg, (unsigned char *)(uintptr_t)dg};
        const struct envelope *e = NULL;
        if (acemq_from_headers(out.headers, &out.routing_key, NULL, &digest, FUZZ_NOW_MS, &e,
                               &err) != ST_OK)
            fail("AceMQ cannot read the copy's envelope", data, size, &err);
        if (!bytes_eq(&e->id, &out.id))
            fail("the copy's envelope id is not out.id", data, size, NULL);
        envelope_free(e);
        if (o.mode == RESTAMP_REPLAY) {
            struct acemq_replay r;
            acemq_replay_read(out.headers, &r);
            int64_t want = d.replay.count < INT64_MAX ? d.replay.count + 1 : INT64_MAX;
            if (r.count != want)
                fail("a replay's acemq-replay-count is not one more than before", data, size, NULL);
            acemq_replay_free(&r);
        }
    }

    struct diff df;
    restamp_diff(&m, &out, &df);
    json_t *dj = diff_to_json(&df);
    diff_free(&df);
    /* The journal's diff (only the changes: rows the same on both sides are not rendered) is
     * the full diff's changed rows. */
    json_t *cj = restamp_changes_json(&m, &out);
    if (!json_equal(dj, cj))
        abort();
    json_decref(dj);
    /* The journal's diff is written directly (restamp_changes_text): the same bytes as
     * jansson's dump of restamp_changes_json, or no text at all. */
    char *want = json_dumps(cj, JSON_COMPACT | JSON_PRESERVE_ORDER);
    size_t got_len = 0;
    char *got = restamp_changes_text(&m, &out, &got_len);
    if (want && got && (got_len != strlen(want) || memcmp(got, want, got_len) != 0))
        abort();
    if (want && !got)
        abort();
    free(got);
    free(want);
    json_decref(cj);
    outgoing_free(&out);
done:
    bytes_free(&body);
    hval_free(&acme);
    decoded_free(&d);
    message_free(&m);
    return 0;
}
