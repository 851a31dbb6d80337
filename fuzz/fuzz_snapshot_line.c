/*
 * fuzz_snapshot_line: one snapshot line (untrusted: a file someone sent) through the reader
 * and everything that reads what the reader made.
 *
 * Checks, beyond the sanitizers: the fast path (snapshot_fast.c) and jansson read the line
 * alike — where the fast path reads it, jansson reads the same message, and the reader gives
 * the same message or the same error either way; a line that parses decodes and renders as a
 * decode record without failing, and json_out writes that record as jansson's dump does, and
 * so does decoded_write_json (the record written without its tree) where it writes it; and
 * the snapshot writer is lossless — snapshot_format of the message parses back (after the
 * writer's own newline is taken off) into a message_equal message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "decode.h"
#include "fuzz.h"
#include "json_out.h"
#include "message.h"
#include "snapshot.h"
#include "snapshot_fast.h"
#include "status.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const uint8_t *in, size_t in_len, const struct strbuf *line,
                 const struct error *err)
{
    fprintf(stderr, "fuzz_snapshot_line: %s\n  input:   %.*s\n  written: %.*s  error:   %s\n", what,
            (int)in_len, (const char *)in, (int)line->len, line->buf,
            err && err->msg[0] ? err->msg : "-");
    abort();
}

static int dump_cb(const char *buffer, size_t size, void *sb)
{
    sb_add(sb, buffer, size);
    return 0;
}

/* The fast path against jansson: the same message, or the same error. */
static void fast_is_jansson(const uint8_t *data, size_t size)
{
    struct message fast, slow, line_m;
    struct error es, el;
    error_clear(&es);
    error_clear(&el);
    bool sure = snapshot_fast_parse((const char *)data, size, &fast);
    enum status ss = snapshot_parse_jansson((const char *)data, size, &slow, &es);
    enum status sl = snapshot_parse_line((const char *)data, size, &line_m, &el);
    struct strbuf none;
    sb_init(&none);
    if (sure && (ss != ST_OK || !message_equal(&fast, &slow)))
        fail("the fast path read what jansson reads otherwise", data, size, &none, &es);
    if (sl != ss || (ss == ST_OK && !message_equal(&line_m, &slow)) ||
        (ss != ST_OK && strcmp(es.msg, el.msg) != 0))
        fail("snapshot_parse_line and jansson differ", data, size, &none, &el);
    if (sure)
        message_free(&fast);
    message_free(&slow);
    message_free(&line_m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fast_is_jansson(data, size);
    struct message m;
    struct error err;
    error_clear(&err);
    /* On failure the reader still leaves an initialised (empty) message to free. */
    if (snapshot_parse_line((const char *)data, size, &m, &err) != ST_OK) {
        message_free(&m);
        return 0;
    }

    struct decoded d;
    decode_message(&m, FUZZ_NOW_MS, &d);
    json_t *rec = decoded_to_json(&d, FUZZ_NOW_MS);
    if (!rec) {
        fprintf(stderr, "fuzz_snapshot_line: decoded_to_json returned NULL\n");
        abort();
    }
    char *text = json_dumps(rec, JSON_COMPACT);
    free(text);
    /* decode's own writer: jansson's bytes, or it declines */
    struct strbuf a, b;
    sb_init(&a);
    sb_init(&b);
    size_t flags = JSON_COMPACT | JSON_REAL_PRECISION(15);
    if (json_out_fast(&a, rec, flags)) {
        json_dump_callback(rec, dump_cb, &b, flags);
        if (a.len != b.len || memcmp(a.buf, b.buf, a.len) != 0)
            fail("json_out wrote the decode record otherwise than jansson", data, size, &a, NULL);
    }
    /* the decode record written without the tree (decoded_write_json): the same bytes */
    sb_reset(&a);
    sb_reset(&b);
    if (decoded_write_json(&d, FUZZ_NOW_MS, flags, &a)) {
        json_dump_callback(rec, dump_cb, &b, flags);
        if (a.len != b.len || memcmp(a.buf, b.buf, a.len) != 0)
            fail("decoded_write_json wrote otherwise than decoded_to_json's dump", data, size, &a,
                 NULL);
    }
    sb_free(&a);
    sb_free(&b);
    json_decref(rec);
    decoded_free(&d);

    /* The round trip: what the writer writes, the reader reads back identically. */
    struct strbuf line;
    sb_init(&line);
    struct error err2;
    const char *why = fuzz_snapshot_round_trip(&m, &line, &err2);
    if (why)
        fail(why, data, size, &line, &err2);

    sb_free(&line);
    message_free(&m);
    return 0;
}
