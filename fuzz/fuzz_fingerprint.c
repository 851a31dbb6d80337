/*
 * fuzz_fingerprint: an error text (any bytes: a producer wrote it) through the failure-group
 * fingerprint (error_fingerprint), the exception finder (error_exception) and the broker-made
 * test — what the groups view and the filter `fp=…` are built on.
 *
 * Input: the error text.
 *
 * Checks, beyond the sanitizers:
 *   - the fingerprint is a function of the text: the same hash on a second call, with or
 *     without the normalised text asked for, and the same normalised text;
 *   - the normalised text is at most FINGERPRINT_MAX bytes;
 *   - only the first FINGERPRINT_SCAN_MAX bytes count: the text repeated past that bound, then
 *     followed by other bytes, has the fingerprint of its first FINGERPRINT_SCAN_MAX bytes
 *     (checked for texts whose first byte is odd: it costs two 64 KB scans);
 *   - error_exception's span lies inside the text;
 *   - two errors that differ only in the digits of their numbers group together: replacing
 *     every decimal digit by another in a text made only of words of lowercase letters,
 *     spaces and decimal numbers ("timeout after 30 s") keeps the fingerprint.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "groups.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const uint8_t *data, size_t size)
{
    fuzz_fail_bytes("fuzz_fingerprint", what, data, size);
}

/* Lowercase words and numbers between single spaces: the shape where numbers are surely
 * numbers (no ids, versions, times or addresses to be judged otherwise). */
static bool simple_text(const uint8_t *s, size_t n)
{
    if (!n || s[0] == ' ' || s[n - 1] == ' ')
        return false;
    for (size_t i = 0; i < n; i++) {
        bool ok = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == ' ';
        if (!ok || (s[i] == ' ' && s[i + 1] == ' '))
            return false;
        /* a word is all letters or all digits */
        if (i && s[i] != ' ' && s[i - 1] != ' ' && (s[i] <= '9') != (s[i - 1] <= '9'))
            return false;
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    struct strbuf a, b;
    sb_init(&a);
    sb_init(&b);
    uint64_t h1 = error_fingerprint(s, size, &a);
    uint64_t h2 = error_fingerprint(s, size, &b);
    uint64_t h3 = error_fingerprint(s, size, NULL);
    if (h1 != h2 || h1 != h3)
        fail("two fingerprints of one text differ", data, size);
    if (a.len != b.len || (a.len && memcmp(a.buf, b.buf, a.len) != 0))
        fail("two normalisations of one text differ", data, size);
    if (a.len > FINGERPRINT_MAX)
        fail("the normalised text is longer than FINGERPRINT_MAX", data, size);

    size_t off = 0;
    size_t k = error_exception(s, size, &off);
    if (k && (off > size || k > size - off))
        fail("error_exception's span is outside the text", data, size);
    (void)error_from_broker_text(s, size);

    if (size && (data[0] & 1)) {
        /* Past the scan bound: the text repeated to FINGERPRINT_SCAN_MAX bytes, then more. */
        size_t big = FINGERPRINT_SCAN_MAX + 64;
        char *rep = xmalloc(big);
        for (size_t i = 0; i < big; i++)
            rep[i] = i < FINGERPRINT_SCAN_MAX ? s[i % size] : (char)(0x80 | (i & 0x3f));
        if (error_fingerprint(rep, big, NULL) != error_fingerprint(rep, FINGERPRINT_SCAN_MAX, NULL))
            fail("bytes past FINGERPRINT_SCAN_MAX changed the fingerprint", data, size);
        free(rep);
    }

    if (simple_text(data, size)) {
        char *other = xmalloc(size);
        for (size_t i = 0; i < size; i++)
            other[i] = s[i] >= '0' && s[i] <= '9' ? (char)('1' + (s[i] - '0') % 9) : s[i];
        if (error_fingerprint(other, size, NULL) != h1)
            fail("errors differing only in their numbers' digits have other fingerprints", data,
                 size);
        free(other);
    }
    sb_free(&a);
    sb_free(&b);
    return 0;
}
