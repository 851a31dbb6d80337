/*
 * fuzz_snapshot_line: one snapshot line (untrusted: a file someone sent) through the reader
 * and everything that reads what the reader made.
 *
 * Checks, beyond the sanitizers: a line that parses decodes and renders as a decode record
 * without failing, and the snapshot writer is lossless — snapshot_format of the message
 * parses back (after the writer's own newline is taken off) into a message_equal message.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "decode.h"
#include "fuzz.h"
#include "message.h"
#include "snapshot.h"
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
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
