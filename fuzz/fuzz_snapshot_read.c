/*
 * fuzz_snapshot_read: a whole snapshot file through the line layer of snapshot_read — line
 * splitting, the byte-order mark, CR before LF, blank lines, a last line without its newline,
 * NUL bytes, and lines far longer than any buffer (docs/snapshot-format.md, "Reading").
 *
 * Input: one byte k, then the file. When k & 0x80, the first line is made huge: (k & 0x0f) + 1
 * times 64 KiB of spaces go before its end (before its "\r\n", "\n" or the end of the file) —
 * JSON allows trailing white space, so a good record stays good, 1 MiB long at most.
 *
 * Checks, beyond the sanitizers, against a model of the documented layer (split at "\n"; a
 * final piece without "\n" is a line too when it is not empty; one "\r" before the end of a
 * line is dropped; a UTF-8 BOM at the start of the file is dropped; lines of only spaces, tabs
 * and CR are skipped; every other line is snapshot_parse_line'd):
 *   - snapshot_read gives the model's sequence: a record where the model parses a message
 *     (message_equal to it, with r.last and r.line naming that line), a bad record where it
 *     does not (the error starting "NAME:LINE: "), then SNAP_EOF — never an I/O error, and
 *     nothing more or less.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "message.h"
#include "snapshot.h"

#define PAD_UNIT (64u * 1024u)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, long line, const struct error *err)
{
    fprintf(stderr, "fuzz_snapshot_read: %s (line %ld)%s%s\n", what, line,
            err && err->msg[0] ? ": " : "", err && err->msg[0] ? err->msg : "");
    abort();
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return false;
    return true;
}

/* The file: data, with the first line padded when the selector asks for it. */
static char *make_file(const uint8_t *data, size_t size, size_t *len)
{
    unsigned k = data[0];
    const char *p = (const char *)data + 1;
    size_t n = size - 1;
    size_t pad = (k & 0x80) ? ((k & 0x0f) + 1) * (size_t)PAD_UNIT : 0;
    const char *nl = memchr(p, '\n', n);
    size_t end = nl ? (size_t)(nl - p) : n; /* where the padding goes */
    if (end && p[end - 1] == '\r')
        end--;
    char *f = xmalloc(n + pad + 1);
    memcpy(f, p, end);
    memset(f + end, ' ', pad);
    memcpy(f + end + pad, p + end, n - end);
    *len = n + pad;
    return f;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t len;
    char *file = make_file(data, size, &len);
    FILE *f = fmemopen(file, len, "rb");
    if (!f) {
        free(file);
        return 0;
    }
    struct snapshot_reader r;
    snapshot_reader_open(&r, f, "in.jsonl");

    size_t at = 0;
    long lineno = 0;
    for (;;) {
        /* The model's next line that is not blank. */
        const char *s = NULL;
        size_t n = 0;
        while (at < len) {
            const char *nl = memchr(file + at, '\n', len - at);
            size_t e = nl ? (size_t)(nl - file) : len;
            s = file + at;
            n = e - at;
            at = nl ? e + 1 : len;
            lineno++;
            if (n && s[n - 1] == '\r')
                n--;
            if (lineno == 1 && n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
                s += 3;
                n -= 3;
            }
            if (!blank(s, n))
                break;
            s = NULL;
        }

        struct message got;
        struct error err;
        error_clear(&err);
        enum snapshot_rc rc = snapshot_read(&r, &got, &err);
        if (rc == SNAP_IO_ERROR)
            fail("an I/O error reading memory", r.line, &err);
        if (!s) {
            if (rc != SNAP_EOF)
                fail("a record after the model's last line", r.line, &err);
            if (rc == SNAP_RECORD)
                message_free(&got);
            break;
        }
        if (rc == SNAP_EOF)
            fail("end of file before the model's last line", lineno, NULL);
        if (r.line != lineno)
            fail("the reader counts lines differently", lineno, &err);

        struct message want;
        struct error werr;
        error_clear(&werr);
        bool ok = snapshot_parse_line(s, n, &want, &werr) == ST_OK;
        if (ok != (rc == SNAP_RECORD))
            fail(ok ? "a good line read as a bad record" : "a bad line read as a record", lineno,
                 ok ? &err : &werr);
        if (ok) {
            if (!message_equal(&got, &want))
                fail("the record read differs from its line parsed alone", lineno, NULL);
            if (r.last_len != n || memcmp(r.last, s, n) != 0)
                fail("r.last is not the record's line", lineno, NULL);
        } else {
            char prefix[40];
            int k = snprintf(prefix, sizeof prefix, "in.jsonl:%ld: ", lineno);
            if (strncmp(err.msg, prefix, (size_t)k) != 0)
                fail("a bad record's error does not start with the file and line", lineno, &err);
        }
        message_free(&got); /* a bad record leaves an initialised message too */
        message_free(&want);
    }
    snapshot_reader_close(&r);
    fclose(f);
    free(file);
    return 0;
}
