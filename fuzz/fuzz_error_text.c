/*
 * fuzz_error_text: the error messages made from untrusted bytes, and their sanitising. A
 * parser's error names the cause, and so quotes what it read — header names, values, file
 * names, filter text — which may hold escape sequences meant for the terminal of whoever
 * reads stderr. What is printed must be the sanitized text (sanitize.h).
 *
 * Input: one selector byte, then the data. Bits 0-2 pick the parser; bits 5-6 the sanitizer
 * flags (SAN_ESCAPE_BACKSLASH, SAN_ASCII), as fuzz_body:
 *   0, 1  snapshot_parse_line(data)
 *   2     snapshot_read of the data as a file whose name is the data's first line
 *   3     htable_decode_wire(data)
 *   4     filter_compile(data as a C string)
 *   5     env_change_parse(data as a C string), then envelope_with of the change
 *   6, 7  htable_from_json of the data parsed as JSON, with the path its first 40 bytes
 *
 * Checks, beyond the sanitizers:
 *   - a parser that fails says why: err.code is what it returned, err.msg is a non-empty
 *     NUL-terminated string inside its buffer;
 *   - sanitize_append of err.msg (and of the error with the file name, as the CLI prints it)
 *     keeps the promise of sanitize.h on one line: valid UTF-8, no byte below 0x20 at all, no
 *     0x7f, no C1 control, no bidi override or other escaped code point; ASCII with SAN_ASCII;
 *   - sanitize_fit of err.msg at 80 columns stays within 80 columns.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "acemq.h"
#include "envelope.h"
#include "filter.h"
#include "fuzz.h"
#include "hval_amqp.h"
#include "hval_json.h"
#include "message.h"
#include "snapshot.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_utf8_locale();
    return 0;
}

static void check_error(enum status st, const struct error *err, unsigned san, const char *who)
{
    if (st == ST_OK)
        return;
    const char *msg = err->msg;
    size_t len = strnlen(msg, sizeof err->msg);
    if (len == sizeof err->msg)
        fuzz_fail_bytes("fuzz_error_text", "err.msg is not NUL-terminated", msg, len);
    if (!len) {
        fprintf(stderr, "fuzz_error_text: %s failed (%s) with no message\n", who, status_str(st));
        abort();
    }
    if (err->code != st) {
        fprintf(stderr, "fuzz_error_text: %s returned %s but err.code is %s\n", who, status_str(st),
                status_str(err->code));
        abort();
    }
    struct strbuf sb;
    sb_init(&sb);
    sb_adds(&sb, "dlqx: ");
    sanitize_append(&sb, msg, len, san);
    size_t at;
    const char *why = fuzz_unsafe(sb.buf, sb.len, san, &at);
    if (why) {
        fprintf(stderr, "fuzz_error_text: %s: sanitized error: %s at byte %zu\n", who, why, at);
        fuzz_fail_bytes("fuzz_error_text", "sanitized error", sb.buf, sb.len);
    }
    sb_reset(&sb);
    int cols = sanitize_fit(&sb, msg, len, 80, san);
    if (cols < 0 || cols > 80 || sanitize_width(sb.buf, sb.len) > 80 ||
        fuzz_unsafe(sb.buf, sb.len, san, &at))
        fuzz_fail_bytes("fuzz_error_text", "sanitize_fit of an error broke its promise", sb.buf,
                        sb.len);
    sb_free(&sb);
}

static void from_file(const char *p, size_t n, unsigned san)
{
    const char *nl = memchr(p, '\n', n);
    size_t name_len = nl ? (size_t)(nl - p) : n;
    char *name = xstrndup(p, name_len);
    size_t rest = nl ? n - name_len - 1 : 0;
    char *copy = xmalloc(rest + 1);
    if (rest)
        memcpy(copy, nl + 1, rest);
    FILE *f = rest ? fmemopen(copy, rest, "rb") : NULL;
    if (f) {
        struct snapshot_reader r;
        snapshot_reader_open(&r, f, name);
        for (int i = 0; i < 64; i++) {
            struct message m;
            struct error err;
            error_clear(&err);
            enum snapshot_rc rc = snapshot_read(&r, &m, &err);
            if (rc == SNAP_EOF)
                break;
            if (rc != SNAP_IO_ERROR)
                message_free(&m);
            if (rc == SNAP_RECORD)
                continue;
            check_error(rc == SNAP_IO_ERROR ? ST_EIO
                        : err.code == ST_OK ? ST_EPARSE
                                            : err.code,
                        &err, san, "snapshot_read");
            if (rc == SNAP_IO_ERROR)
                break;
        }
        snapshot_reader_close(&r);
        fclose(f);
    }
    free(copy);
    free(name);
}

static void change(const char *s, unsigned san)
{
    struct env_change c;
    struct hval hv = hval_void();
    struct error err;
    error_clear(&err);
    enum status st = env_change_parse(s, &c, &hv, &err);
    check_error(st, &err, san, "env_change_parse");
    if (st != ST_OK)
        return;
    /* Applied to an AceMQ envelope that has a header "tenant" and nothing else. */
    struct htable *h = htable_new();
    htable_add(h, "tenant", hval_cstring("acme"));
    htable_add(h, ACEMQ_ID, hval_cstring("id-1"));
    static const unsigned char dg[32] = {1};
    const struct bytes digest = {sizeof dg, (unsigned char *)(uintptr_t)dg};
    const struct envelope *e = NULL, *e2 = NULL;
    if (acemq_from_headers(h, NULL, NULL, &digest, FUZZ_NOW_MS, &e, NULL) == ST_OK) {
        error_clear(&err);
        st = envelope_with(e, &c, 1, &e2, &err);
        check_error(st, &err, san, "envelope_with");
        envelope_free(e2);
        envelope_free(e);
    }
    htable_free(h);
    env_change_release(&c, &hv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned sel = data[0];
    unsigned san = ((sel & 0x20) ? SAN_ESCAPE_BACKSLASH : 0) | ((sel & 0x40) ? SAN_ASCII : 0);
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    char *cstr = xstrndup(p, n); /* up to the first NUL, as argv would carry it */
    struct error err;
    error_clear(&err);
    switch (sel & 7) {
    case 0:
    case 1: {
        struct message m;
        enum status st = snapshot_parse_line(p, n, &m, &err);
        message_free(&m);
        check_error(st, &err, san, "snapshot_parse_line");
        break;
    }
    case 2:
        from_file(p, n, san);
        break;
    case 3: {
        struct htable *h = NULL;
        enum status st = htable_decode_wire(p, n, &h, &err);
        htable_free(h);
        check_error(st, &err, san, "htable_decode_wire");
        break;
    }
    case 4: {
        struct filter *f = NULL;
        enum status st = filter_compile(cstr, &f, &err);
        filter_free(f);
        check_error(st, &err, san, "filter_compile");
        break;
    }
    case 5:
        change(cstr, san);
        break;
    default: {
        json_t *j = json_loadb(p, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        if (j) {
            char path[41];
            snprintf(path, sizeof path, "%.40s", cstr);
            struct htable *h = NULL;
            enum status st = htable_from_json(j, path, &h, &err);
            htable_free(h);
            check_error(st, &err, san, "htable_from_json");
            json_decref(j);
        }
        break;
    }
    }
    free(cstr);
    return 0;
}
