/*
 * test_sanitize_random: property tests of the sanitizer over pseudo-random bytes: the output
 * is always safe (valid UTF-8, nothing a terminal acts on), with SAN_ESCAPE_BACKSLASH it
 * decodes back to the exact input, and fitting to columns keeps to the width.
 */
#include "sanitize_testutil.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "sanitize.h"
#include "util.h"

/* ---- properties over pseudo-random input -------------------------------------------------- */

static uint64_t rng_state;

static uint32_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}

/* Fills buf (at least 256 bytes) with one test input; about a third pure random bytes, a
 * third built from code points near the interesting ranges, a third from a small alphabet
 * of dangerous bytes. */
static size_t random_input(unsigned char *buf)
{
    static const unsigned char alphabet[] = {
        0x00, 0x07, 0x08, 0x0A, 0x09, 0x0D, 0x1B, 0x7F, 0x80, 0x9B, 0xBF, 0xC0, 0xC2, 0xE2,
        0x80, 0xAE, 0xED, 0xA0, 0xEF, 0xBB, 0xF3, 0xF4, 0x90, 0xFF, '\\', 'a',  '[',  ']'};
    static const uint32_t ranges[][2] = {
        {0x00, 0x7F},       {0x80, 0xBF},       {0x600, 0x620},      {0x100, 0x7FF},
        {0x2000, 0x2070},   {0x3000, 0x9FFF},   {0xD7F0, 0xE010},    {0xFEF0, 0xFFFF},
        {0x1F300, 0x1F64F}, {0xE0000, 0xE0100}, {0x10000, 0x10FFFF}, {0x300, 0x36F},
    };
    size_t len = rnd() % 64, n = 0;
    switch (rnd() % 3) {
    case 0:
        for (; n < len; n++)
            buf[n] = (unsigned char)rnd();
        break;
    case 1:
        while (n < len) {
            const uint32_t *r = ranges[rnd() % (sizeof ranges / sizeof ranges[0])];
            uint32_t cp = r[0] + rnd() % (r[1] - r[0] + 1);
            n += utf8_encode(cp, buf + n); /* surrogates too: invalid input */
        }
        break;
    default:
        for (; n < len; n++)
            buf[n] = alphabet[rnd() % sizeof alphabet];
        break;
    }
    return n;
}

static bool forbidden_cp(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || (cp >= 0x200B && cp <= 0x200F) ||
           (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x2064) ||
           (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFB) ||
           (cp >= 0xE0000 && cp <= 0xE007F) || cp == 0x2028 || cp == 0x2029;
}

/* Fails unless s is safe for a terminal (see sanitize.h). */
static void check_safe(const char *s, size_t n, unsigned flags, size_t inlen)
{
    const unsigned char *u = (const unsigned char *)s;
    if (strlen(s) != n)
        fail_msg("output holds a NUL");
    if (!utf8_valid(s, n))
        fail_msg("output is not UTF-8: \"%s\"", s);
    for (size_t i = 0; i < n;) {
        unsigned c = u[i];
        if ((c < 0x20 && !(c == '\n' && (flags & SAN_KEEP_NEWLINES))) || c == 0x7F)
            fail_msg("control byte 0x%02x in output at %zu (input %zu bytes)", c, i, inlen);
        if ((flags & SAN_ASCII) && c >= 0x80)
            fail_msg("non-ASCII byte in ASCII mode");
        uint32_t cp = c;
        size_t k = 1;
        if (c >= 0xF0) {
            cp = c & 0x07;
            k = 4;
        } else if (c >= 0xE0) {
            cp = c & 0x0F;
            k = 3;
        } else if (c >= 0xC0) {
            cp = c & 0x1F;
            k = 2;
        }
        for (size_t j = 1; j < k; j++)
            cp = cp << 6 | (u[i + j] & 0x3F);
        if (forbidden_cp(cp))
            fail_msg("forbidden U+%04X in output", (unsigned)cp);
        i += k;
    }
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* Reverses sanitize_append with SAN_ESCAPE_BACKSLASH: false when s is not a well-formed
 * escaped string (a cut escape, an unknown one). */
static bool unescape(const char *s, size_t n, struct strbuf *out)
{
    size_t i = 0;
    while (i < n) {
        if (s[i] != '\\') {
            sb_addc(out, s[i++]);
            continue;
        }
        if (i + 1 >= n)
            return false;
        static const char letters[] = "\\ntre0", bytes[] = "\\\n\t\r\x1B";
        const char *l = memchr(letters, s[i + 1], sizeof letters - 1);
        if (l) {
            sb_addc(out, bytes[l - letters]); /* "0" maps to the terminating NUL */
            i += 2;
            continue;
        }
        switch (s[i + 1]) {
        case 'x': {
            if (i + 3 >= n || hexval(s[i + 2]) < 0 || hexval(s[i + 3]) < 0)
                return false;
            sb_addc(out, (char)(hexval(s[i + 2]) << 4 | hexval(s[i + 3])));
            i += 4;
            break;
        }
        case 'u': {
            if (i + 2 >= n || s[i + 2] != '{')
                return false;
            size_t j = i + 3;
            uint32_t cp = 0;
            int digits = 0;
            while (j < n && hexval(s[j]) >= 0 && digits < 6) {
                cp = cp << 4 | (uint32_t)hexval(s[j++]);
                digits++;
            }
            if (digits == 0 || j >= n || s[j] != '}' || cp < 0x80 || cp > 0x10FFFF ||
                (cp >= 0xD800 && cp <= 0xDFFF))
                return false;
            unsigned char enc[4];
            sb_add(out, enc, utf8_encode(cp, enc));
            i = j + 1;
            break;
        }
        default:
            return false;
        }
    }
    return true;
}

enum { N_RANDOM = 20000 };

static void test_random_output_is_safe(void **state)
{
    (void)state;
    static const unsigned flag_sets[] = {0, SAN_ESCAPE_BACKSLASH, SAN_ASCII, SAN_KEEP_NEWLINES,
                                         SAN_KEEP_NEWLINES | SAN_ASCII | SAN_ESCAPE_BACKSLASH};
    unsigned char in[256];
    struct strbuf sb;
    sb_init(&sb);
    rng_state = 0x9E3779B97F4A7C15u;
    for (int t = 0; t < N_RANDOM; t++) {
        size_t n = random_input(in);
        for (size_t f = 0; f < sizeof flag_sets / sizeof flag_sets[0]; f++) {
            sb_reset(&sb);
            sanitize_append(&sb, in, n, flag_sets[f]);
            check_safe(sb.buf, sb.len, flag_sets[f], n);
            assert_true(sb.len >= n);
        }
    }
    sb_free(&sb);
}

/* With SAN_ESCAPE_BACKSLASH nothing is lost or ambiguous: the escapes decode back to the
 * input exactly. */
static void test_random_roundtrip(void **state)
{
    (void)state;
    unsigned char in[256];
    struct strbuf sb, back;
    sb_init(&sb);
    sb_init(&back);
    rng_state = 0x0123456789ABCDEFu;
    for (int t = 0; t < N_RANDOM; t++) {
        size_t n = random_input(in);
        unsigned flags = SAN_ESCAPE_BACKSLASH | (t % 2 ? SAN_ASCII : 0);
        sb_reset(&sb);
        sb_reset(&back);
        sanitize_append(&sb, in, n, flags);
        assert_true(unescape(sb.buf, sb.len, &back));
        assert_int_equal(back.len, n);
        assert_memory_equal(back.buf, in, n);
    }
    sb_free(&sb);
    sb_free(&back);
}

/* fit: safe, within width (exact with SAN_PAD), the full text when it fits, otherwise a
 * prefix of it cut on an escape/code point boundary, then the ellipsis. */
static void test_random_fit(void **state)
{
    (void)state;
    need_utf8();
    unsigned char in[256];
    struct strbuf full, fit, padded, back;
    sb_init(&full);
    sb_init(&fit);
    sb_init(&padded);
    sb_init(&back);
    rng_state = 0xDEADBEEFCAFEF00Du;
    for (int t = 0; t < N_RANDOM; t++) {
        size_t n = random_input(in);
        int width = (int)(rnd() % 40);
        unsigned flags = SAN_ESCAPE_BACKSLASH | (t % 3 == 0 ? SAN_ASCII : 0);
        const char *ell = (flags & SAN_ASCII) ? "~" : ELL;
        size_t ell_len = strlen(ell);

        sb_reset(&full);
        sb_reset(&fit);
        sb_reset(&padded);
        sb_adds(&padded, "P|");
        sanitize_append(&full, in, n, flags);
        int cols = sanitize_fit(&fit, in, n, width, flags);
        int pcols = sanitize_fit(&padded, in, n, width, flags | SAN_PAD);

        check_safe(fit.buf, fit.len, flags, n);
        assert_true(cols >= 0 && cols <= width);
        assert_int_equal((size_t)cols, sanitize_width(fit.buf, fit.len));
        assert_int_equal(pcols, width);
        assert_int_equal(padded.len, 2 + fit.len + (size_t)(width - cols));
        assert_memory_equal(padded.buf, "P|", 2);
        assert_memory_equal(padded.buf + 2, fit.buf, fit.len);
        for (size_t i = 2 + fit.len; i < padded.len; i++)
            assert_int_equal(padded.buf[i], ' ');

        size_t full_w = sanitize_width(full.buf, full.len);
        if (full_w <= (size_t)width) {
            assert_int_equal(fit.len, full.len);
            assert_memory_equal(fit.buf, full.buf, full.len);
            continue;
        }
        if (width == 0) {
            assert_int_equal(fit.len, 0);
            continue;
        }
        assert_true(fit.len >= ell_len);
        size_t kept = fit.len - ell_len;
        assert_memory_equal(fit.buf + kept, ell, ell_len);
        assert_true(kept < full.len);
        assert_memory_equal(fit.buf, full.buf, kept);
        /* Cut on a boundary: the kept part decodes, to a prefix of the input. */
        sb_reset(&back);
        assert_true(unescape(fit.buf, kept, &back));
        assert_true(back.len <= n);
        if (back.len)
            assert_memory_equal(back.buf, in, back.len);
        /* And not needlessly short: no unit is wider than "\u{10ffff}". */
        assert_true(cols - 1 + 10 >= width);
    }
    sb_free(&full);
    sb_free(&fit);
    sb_free(&padded);
    sb_free(&back);
}

int main(void)
{
    sanitize_test_locale();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_output_is_safe),
        cmocka_unit_test(test_random_roundtrip),
        cmocka_unit_test(test_random_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
