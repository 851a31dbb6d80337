/*
 * test_sanitize: byte-exact escapes for every class of dangerous input (C0, DEL, C1, bidi,
 * invisible and tag characters, invalid UTF-8), the flags, widths, fitting to columns and the
 * text heuristic. The property tests over pseudo-random bytes are in test_sanitize_random.c.
 *
 * Widths need a UTF-8 locale: main() selects C.UTF-8 and the width tests fail when the
 * system has none.
 */
#include "sanitize_testutil.h"

#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "sanitize.h"
#include "util.h"

/* ---- helpers ------------------------------------------------------------------------- */

static void expect_san_at(const char *in, size_t len, unsigned flags, const char *want, int line)
{
    struct strbuf sb;
    sb_init(&sb);
    sanitize_append(&sb, in, len, flags);
    assert_non_null(sb.buf);
    assert_int_equal(sb.buf[sb.len], '\0');
    if (sb.len != strlen(want) || memcmp(sb.buf, want, sb.len) != 0)
        fail_msg("line %d: sanitize_append gave \"%s\" (%zu bytes), want \"%s\"", line, sb.buf,
                 sb.len, want);
    sb_free(&sb);
}

/* in must be a string literal (its length may include NULs). */
#define SAN_EQ(in, flags, want) expect_san_at(in, sizeof(in) - 1, flags, want, __LINE__)

static void expect_fit_at(const char *in, size_t len, int width, unsigned flags, const char *want,
                          int want_cols, int line)
{
    struct strbuf sb;
    sb_init(&sb);
    int cols = sanitize_fit(&sb, in, len, width, flags);
    assert_non_null(sb.buf);
    assert_int_equal(sb.buf[sb.len], '\0');
    if (sb.len != strlen(want) || memcmp(sb.buf, want, sb.len) != 0)
        fail_msg("line %d: sanitize_fit(width %d) gave \"%s\", want \"%s\"", line, width, sb.buf,
                 want);
    if (cols != want_cols)
        fail_msg("line %d: sanitize_fit(width %d) returned %d columns, want %d", line, width, cols,
                 want_cols);
    sb_free(&sb);
}

#define FIT_EQ(in, width, flags, want, cols)                                                       \
    expect_fit_at(in, sizeof(in) - 1, width, flags, want, cols, __LINE__)

static size_t width_of(const char *s)
{
    return sanitize_width(s, strlen(s));
}

/* ---- plain text passes unchanged -------------------------------------------------------- */

static void test_plain_ascii(void **state)
{
    (void)state;
    char in[0x7F - 0x20 + 1];
    for (int c = 0x20; c < 0x7F; c++)
        in[c - 0x20] = (char)c;
    in[sizeof in - 1] = '\0';
    expect_san_at(in, strlen(in), 0, in, __LINE__);
    SAN_EQ("hello, world 123", 0, "hello, world 123");
    SAN_EQ("", 0, "");

    /* An empty input still leaves a usable (empty) string behind. */
    struct strbuf sb;
    sb_init(&sb);
    sanitize_append(&sb, NULL, 0, 0);
    assert_non_null(sb.buf);
    assert_string_equal(sb.buf, "");
    sb_free(&sb);
}

static void test_utf8_passthrough(void **state)
{
    (void)state;
    SAN_EQ("caf\xC3\xA9", 0, "caf\xC3\xA9");                           /* é */
    SAN_EQ("\xE6\x97\xA5\xE6\x9C\xAC", 0, "\xE6\x97\xA5\xE6\x9C\xAC"); /* 日本 */
    SAN_EQ("\xF0\x9F\x98\x80", 0, "\xF0\x9F\x98\x80");                 /* 😀 */
    SAN_EQ("e\xCC\x81", 0, "e\xCC\x81");                               /* e + U+0301 */
    SAN_EQ("\xC2\xA0", 0, "\xC2\xA0");                                 /* U+00A0, just past C1 */
    SAN_EQ("\xEF\xBF\xBD", 0, "\xEF\xBF\xBD");                         /* U+FFFD */
    SAN_EQ("\xED\x9F\xBF", 0, "\xED\x9F\xBF");         /* U+D7FF, just below surrogates */
    SAN_EQ("\xEE\x80\x80", 0, "\xEE\x80\x80");         /* U+E000, just above */
    SAN_EQ("\xF4\x8F\xBF\xBF", 0, "\xF4\x8F\xBF\xBF"); /* U+10FFFF, the last */
    SAN_EQ("\xF0\x90\x80\x80", 0, "\xF0\x90\x80\x80"); /* U+10000, the first 4-byte */
}

/* ---- C0, DEL, C1 ------------------------------------------------------------------------ */

static void test_c0_every_byte(void **state)
{
    (void)state;
    static const char *const named[0x20] = {
        [0x00] = "\\0", ['\t'] = "\\t", ['\n'] = "\\n", ['\r'] = "\\r", [0x1B] = "\\e",
    };
    for (int c = 0; c < 0x20; c++) {
        char in[3] = {'<', (char)c, '>'}, want[16];
        if (named[c])
            snprintf(want, sizeof want, "<%s>", named[c]);
        else
            snprintf(want, sizeof want, "<\\x%02x>", (unsigned)c);
        expect_san_at(in, 3, 0, want, __LINE__);
    }
    SAN_EQ("\x7F", 0, "\\x7f");
}

static void test_terminal_attacks(void **state)
{
    (void)state;
    SAN_EQ("\x1B[2J", 0, "\\e[2J");                                        /* clear screen */
    SAN_EQ("\x1B[H\x1B[1;31mred", 0, "\\e[H\\e[1;31mred");                 /* cursor, colour */
    SAN_EQ("\x1B]0;pwned\x07", 0, "\\e]0;pwned\\x07");                     /* title, BEL */
    SAN_EQ("\x1B]0;pwned\x1B\\", 0, "\\e]0;pwned\\e\\");                   /* title, ST */
    SAN_EQ("\x1B]52;c;cm0gLXJmIH4K\x07", 0, "\\e]52;c;cm0gLXJmIH4K\\x07"); /* clipboard */
    SAN_EQ("\x1BP$q m\x1B\\", 0, "\\eP$q m\\e\\");                         /* DECRQSS */
    SAN_EQ("\xC2\x9BH", 0, "\\u{9b}H");                                    /* CSI as C1 */
    SAN_EQ("\xC2\x9D;t\xC2\x9C", 0, "\\u{9d};t\\u{9c}");                   /* OSC .. ST as C1 */
    SAN_EQ("\x9BH", 0, "\\x9bH");                                          /* 8-bit raw CSI */
    SAN_EQ("ok\rEVIL", 0, "ok\\rEVIL");                                    /* overwrite */
    SAN_EQ("ok\b\b\bNO", 0, "ok\\x08\\x08\\x08NO");                        /* backspace */
    SAN_EQ("a\0b", 0, "a\\0b");                                            /* NUL */
    SAN_EQ("a\x7Fz", 0, "a\\x7fz");                                        /* DEL */
    SAN_EQ("line1\nline2\ttab", 0, "line1\\nline2\\ttab");
}

/* Error text: every line sanitized, the newlines kept, and san_fprintf writes exactly that. */
static void test_message(void **state)
{
    (void)state;
    static const char in[] = "dlqx: x:1: unknown key \"\x1b]0;T\x07\xc2\x9b"
                             "2J\"\n\tnext\x9b\n";
    static const char want[] = "dlqx: x:1: unknown key \"\\e]0;T\\x07\\u{9b}2J\"\n\\tnext\\x9b\n";
    struct strbuf sb;
    sb_init(&sb);
    sanitize_message(&sb, in, sizeof in - 1, 0);
    assert_string_equal(sb.buf, want);
    /* Safe text stays as it is. */
    struct strbuf again;
    sb_init(&again);
    sanitize_message(&again, sb.buf, sb.len, 0);
    assert_string_equal(again.buf, want);
    sb_free(&again);
    sb_free(&sb);

    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    size_t w = san_fprintf(f, "dlqx: x:1: unknown key \"%s\"\n%s\n",
                           "\x1b]0;T\x07\xc2\x9b"
                           "2J",
                           "\tnext\x9b");
    fclose(f);
    assert_int_equal(w, strlen(want));
    assert_int_equal(len, strlen(want));
    assert_memory_equal(buf, want, len);
    free(buf);
}

static void test_c1_every_code_point(void **state)
{
    (void)state;
    for (uint32_t cp = 0x80; cp <= 0x9F; cp++) {
        unsigned char in[4];
        size_t n = utf8_encode(cp, in);
        char want[16];
        snprintf(want, sizeof want, "\\u{%x}", (unsigned)cp);
        expect_san_at((const char *)in, n, 0, want, __LINE__);
    }
}

/* ---- bidi, invisible and tag characters -------------------------------------------------- */

struct cp_case {
    uint32_t cp;
    const char *esc; /* NULL: passes unchanged */
};

static void check_cp_cases(const struct cp_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char enc[4];
        size_t k = utf8_encode(cases[i].cp, enc);
        char in[16], want[32];
        in[0] = 'a';
        memcpy(in + 1, enc, k);
        in[k + 1] = 'b';
        if (cases[i].esc)
            snprintf(want, sizeof want, "a%sb", cases[i].esc);
        else
            snprintf(want, sizeof want, "a%.*sb", (int)k, (const char *)enc);
        expect_san_at(in, k + 2, 0, want, __LINE__);
    }
}

static void test_bidi_controls(void **state)
{
    (void)state;
    static const struct cp_case cases[] = {
        {0x061C, "\\u{61c}"},  /* ARABIC LETTER MARK */
        {0x200E, "\\u{200e}"}, /* LRM */
        {0x200F, "\\u{200f}"}, /* RLM */
        {0x202A, "\\u{202a}"}, /* LRE */
        {0x202B, "\\u{202b}"}, /* RLE */
        {0x202C, "\\u{202c}"}, /* PDF */
        {0x202D, "\\u{202d}"}, /* LRO */
        {0x202E, "\\u{202e}"}, /* RLO */
        {0x2066, "\\u{2066}"}, /* LRI */
        {0x2067, "\\u{2067}"}, /* RLI */
        {0x2068, "\\u{2068}"}, /* FSI */
        {0x2069, "\\u{2069}"}, /* PDI */
        {0x061B, NULL},        /* neighbours pass */
        {0x061D, NULL},        {0x202F, NULL},
    };
    check_cp_cases(cases, sizeof cases / sizeof cases[0]);
    /* The classic: an "exe" that reads as "txt". */
    SAN_EQ("invoice\xE2\x80\xAEtxt.exe", 0, "invoice\\u{202e}txt.exe");
}

static void test_invisible_format(void **state)
{
    (void)state;
    static const struct cp_case cases[] = {
        {0x200B, "\\u{200b}"}, /* ZERO WIDTH SPACE */
        {0x200C, "\\u{200c}"}, /* ZWNJ */
        {0x200D, "\\u{200d}"}, /* ZWJ */
        {0x2060, "\\u{2060}"}, /* WORD JOINER */
        {0x2061, "\\u{2061}"}, {0x2062, "\\u{2062}"}, {0x2063, "\\u{2063}"},
        {0x2064, "\\u{2064}"}, {0xFEFF, "\\u{feff}"}, /* BOM / ZWNBSP */
        {0xFFF9, "\\u{fff9}"}, {0xFFFA, "\\u{fffa}"}, {0xFFFB, "\\u{fffb}"},
        {0x180E, "\\u{180e}"}, /* MONGOLIAN VOWEL SEPARATOR */
        {0x2028, "\\u{2028}"}, /* LINE SEPARATOR */
        {0x2029, "\\u{2029}"}, /* PARAGRAPH SEPARATOR */
        {0x200A, NULL},        /* neighbours pass */
        {0x2010, NULL},        {0x2027, NULL},        {0x2070, NULL},
        {0xFEFE, NULL},        {0xFFF8, NULL},        {0xFFFC, NULL},
    };
    check_cp_cases(cases, sizeof cases / sizeof cases[0]);
    SAN_EQ("pay\xE2\x80\x8Bpal", 0, "pay\\u{200b}pal");
}

static void test_tag_characters(void **state)
{
    (void)state;
    static const struct cp_case cases[] = {
        {0xE0000, "\\u{e0000}"}, {0xE0001, "\\u{e0001}"}, {0xE0020, "\\u{e0020}"},
        {0xE0041, "\\u{e0041}"}, {0xE007F, "\\u{e007f}"}, {0xE0080, NULL}, /* just past the block */
        {0xE0100, NULL}, /* VARIATION SELECTOR-17 */
        {0xDFFFF, NULL},
    };
    check_cp_cases(cases, sizeof cases / sizeof cases[0]);
    /* Hidden ASCII smuggled as tags ("hi"). */
    SAN_EQ("ok\xF3\xA0\x81\xA8\xF3\xA0\x81\xA9", 0, "ok\\u{e0068}\\u{e0069}");
}

/* ---- invalid UTF-8 ------------------------------------------------------------------- */

static void test_invalid_utf8(void **state)
{
    (void)state;
    SAN_EQ("\x80", 0, "\\x80"); /* lone continuation */
    SAN_EQ("a\xBFz", 0, "a\\xbfz");
    SAN_EQ("\xE2\x82", 0, "\\xe2\\x82");          /* truncated at the end */
    SAN_EQ("\xE2\x82Z", 0, "\\xe2\\x82Z");        /* truncated mid-string */
    SAN_EQ("\xF0\x9F\x98", 0, "\\xf0\\x9f\\x98"); /* truncated emoji */
    SAN_EQ("\xC0\xAF", 0, "\\xc0\\xaf");          /* overlong '/' */
    SAN_EQ("\xC1\xBF", 0, "\\xc1\\xbf");
    SAN_EQ("\xE0\x80\xAF", 0, "\\xe0\\x80\\xaf");          /* overlong, 3 bytes */
    SAN_EQ("\xF0\x80\x80\xAF", 0, "\\xf0\\x80\\x80\\xaf"); /* overlong, 4 bytes */
    SAN_EQ("\xC0\x9B", 0, "\\xc0\\x9b");                   /* overlong CSI stays escaped */
    SAN_EQ("\xED\xA0\x80", 0, "\\xed\\xa0\\x80");          /* surrogate U+D800 */
    SAN_EQ("\xED\xBF\xBF", 0, "\\xed\\xbf\\xbf");          /* surrogate U+DFFF */
    SAN_EQ("\xF4\x90\x80\x80", 0, "\\xf4\\x90\\x80\\x80"); /* U+110000 */
    SAN_EQ("\xF5\x80\x80\x80", 0, "\\xf5\\x80\\x80\\x80"); /* F5+ */
    SAN_EQ("\xF8\x88\x80\x80\x80", 0, "\\xf8\\x88\\x80\\x80\\x80");
    SAN_EQ("\xFE\xFF", 0, "\\xfe\\xff");
    /* Resync: the byte that broke a sequence is read afresh. */
    SAN_EQ("\xE2\x28\xA1", 0, "\\xe2(\\xa1");
    SAN_EQ("\xC3\xC3\xA9", 0, "\\xc3\xC3\xA9");
    SAN_EQ("\xE2\x80\xE2\x80\xAE", 0, "\\xe2\\x80\\u{202e}");
    SAN_EQ("\xF0\x9F\xF0\x9F\x98\x80", 0, "\\xf0\\x9f\xF0\x9F\x98\x80");
}

/* ---- flags ---------------------------------------------------------------------------- */

static void test_keep_newlines(void **state)
{
    (void)state;
    SAN_EQ("a\nb\tc\r\n", SAN_KEEP_NEWLINES, "a\nb       c\\r\n");
    SAN_EQ("\tx", SAN_KEEP_NEWLINES, "        x");
    SAN_EQ("12345678\tx", SAN_KEEP_NEWLINES, "12345678        x");
    SAN_EQ("1234567\tx", SAN_KEEP_NEWLINES, "1234567 x");
    SAN_EQ("ab\n\tc", SAN_KEEP_NEWLINES, "ab\n        c"); /* column restarts */
    SAN_EQ("\x01\tx", SAN_KEEP_NEWLINES, "\\x01    x");    /* escapes count as written */
    SAN_EQ("\x1B[2J\n\x1B]0;t\x07\n", SAN_KEEP_NEWLINES, "\\e[2J\n\\e]0;t\\x07\n");
    SAN_EQ("\x0B\x0C", SAN_KEEP_NEWLINES, "\\x0b\\x0c");
    SAN_EQ("\\\n", SAN_KEEP_NEWLINES | SAN_ESCAPE_BACKSLASH, "\\\\\n");
}

static void test_keep_newlines_wide(void **state)
{
    (void)state;
    need_utf8();
    SAN_EQ("\xE6\x97\xA5\tx", SAN_KEEP_NEWLINES, "\xE6\x97\xA5      x");
    SAN_EQ("e\xCC\x81\tx", SAN_KEEP_NEWLINES, "e\xCC\x81       x");
}

static void test_backslash(void **state)
{
    (void)state;
    SAN_EQ("a\\b", 0, "a\\b");
    SAN_EQ("a\\b", SAN_ESCAPE_BACKSLASH, "a\\\\b");
    SAN_EQ("\\e[2J", 0, "\\e[2J");                      /* ambiguous without the flag ... */
    SAN_EQ("\\e[2J", SAN_ESCAPE_BACKSLASH, "\\\\e[2J"); /* ... not with it */
    SAN_EQ("\x1B\\", SAN_ESCAPE_BACKSLASH, "\\e\\\\");
    SAN_EQ("\\\\", SAN_ESCAPE_BACKSLASH, "\\\\\\\\");
}

static void test_ascii_mode(void **state)
{
    (void)state;
    SAN_EQ("plain", SAN_ASCII, "plain");
    SAN_EQ("caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80", SAN_ASCII,
           "caf\\u{e9} \\u{65e5} \\u{1f600}");
    SAN_EQ("\xF4\x8F\xBF\xBF", SAN_ASCII, "\\u{10ffff}");
    SAN_EQ("\xC2\x9B\xE2\x80\xAE\x1B", SAN_ASCII, "\\u{9b}\\u{202e}\\e");
    SAN_EQ("\xFF\xE2\x82", SAN_ASCII, "\\xff\\xe2\\x82");
    SAN_EQ("\\\xC3\xA9", SAN_ASCII | SAN_ESCAPE_BACKSLASH, "\\\\\\u{e9}");
}

/* Decoding must not depend on the locale: the same output in the C locale. */
static void test_locale_independent(void **state)
{
    (void)state;
    char *saved = xstrdup(setlocale(LC_CTYPE, NULL));
    assert_non_null(setlocale(LC_CTYPE, "C"));
    SAN_EQ("caf\xC3\xA9 \xE6\x97\xA5 \xE2\x80\xAE\xC2\x9B\xFF", 0,
           "caf\xC3\xA9 \xE6\x97\xA5 \\u{202e}\\u{9b}\\xff");
    FIT_EQ("h\xC3\xA9llo", 20, SAN_ASCII, "h\\u{e9}llo", 10);
    FIT_EQ("h\xC3\xA9llo", 4, SAN_ASCII | SAN_PAD, "h~  ", 4);
    setlocale(LC_CTYPE, saved);
    free(saved);
}

/* ---- width ------------------------------------------------------------------------------ */

static void test_width(void **state)
{
    (void)state;
    assert_int_equal(sanitize_width("", 0), 0);
    assert_int_equal(width_of("hello"), 5);
    assert_int_equal(sanitize_width("hello", 2), 2); /* len, not strlen */
    assert_int_equal(width_of("\\e[2J"), 5);
    assert_int_equal(width_of("\\u{202e}"), 8);
    assert_int_equal(width_of("\xFF\xFE"), 2); /* unsanitized junk: 1 per byte */
    need_utf8();
    assert_int_equal(width_of("\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E"), 6); /* 日本語 */
    assert_int_equal(width_of("e\xCC\x81"), 1);                            /* combining */
    assert_int_equal(width_of("\xF0\x9F\x98\x80"), 2);                     /* 😀 */
    assert_int_equal(width_of("caf\xC3\xA9"), 4);
    assert_int_equal(width_of("a\xE6\x97\xA5\xF0\x9F\x98\x80o\xCC\x81"), 6);
    assert_int_equal(width_of("\xEF\xBC\xA1"), 2); /* FULLWIDTH A */
    assert_int_equal(width_of("\xE2\x80\xA6"), 1); /* the ellipsis itself */
    assert_int_equal(width_of("\xEF\xBF\xBF"), 1); /* U+FFFF: wcwidth() says -1 */
}

/* ---- fit ---------------------------------------------------------------------------------- */

static void test_fit_ascii(void **state)
{
    (void)state;
    FIT_EQ("hello", 5, 0, "hello", 5);
    FIT_EQ("hello", 6, 0, "hello", 5);
    FIT_EQ("hello", 4, 0, "hel" ELL, 4);
    FIT_EQ("hello", 2, 0, "h" ELL, 2);
    FIT_EQ("hello", 1, 0, ELL, 1);
    FIT_EQ("hello", 0, 0, "", 0);
    FIT_EQ("hello", -3, SAN_PAD, "", 0);
    FIT_EQ("abcdef", 6, 0, "abcdef", 6);
    FIT_EQ("abcdef", 5, 0, "abcd" ELL, 5);
    FIT_EQ("", 3, 0, "", 0);
    FIT_EQ("", 3, SAN_PAD, "   ", 3);
    FIT_EQ("hello", 8, SAN_PAD, "hello   ", 8);
    FIT_EQ("hello", 4, SAN_PAD, "hel" ELL, 4);
    FIT_EQ("a\nb", 10, SAN_KEEP_NEWLINES, "a\\nb", 4); /* a cell is one line */
    FIT_EQ("a\\b", 3, SAN_ESCAPE_BACKSLASH, "a" ELL, 2);
    FIT_EQ("a\\b", 4, SAN_ESCAPE_BACKSLASH, "a\\\\b", 4);
    FIT_EQ("a\\b", 3, 0, "a\\b", 3);
}

static void test_fit_escapes(void **state)
{
    (void)state;
    FIT_EQ("ab\x1B", 4, 0, "ab\\e", 4);
    FIT_EQ("ab\x1B", 3, 0, "ab" ELL, 3);
    FIT_EQ("a\x1Bz", 4, 0, "a\\ez", 4);
    FIT_EQ("a\x1Bz", 3, 0, "a" ELL, 2);           /* "\e" dropped whole ... */
    FIT_EQ("a\x1Bz", 3, SAN_PAD, "a" ELL " ", 3); /* ... and the gap padded */
    FIT_EQ("\x01\x02", 8, 0, "\\x01\\x02", 8);
    FIT_EQ("\x01\x02", 7, 0, "\\x01" ELL, 5);
    FIT_EQ("\x01\x02", 4, 0, ELL, 1);
    FIT_EQ("\xFFz", 4, SAN_PAD, ELL "   ", 4);
    FIT_EQ("x\xE2\x80\xAEy", 10, 0, "x\\u{202e}y", 10);
    FIT_EQ("x\xE2\x80\xAEy", 9, SAN_PAD, "x" ELL "       ", 9);
    FIT_EQ("\x1B[2J", 5, 0, "\\e[2J", 5);
    FIT_EQ("\x1B[2J", 4, 0, "\\e[" ELL, 4);
}

static void test_fit_wide(void **state)
{
    (void)state;
    need_utf8();
#define NIHONGO "\xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E" /* 日本語 */
    FIT_EQ(NIHONGO, 6, 0, NIHONGO, 6);
    FIT_EQ(NIHONGO, 7, SAN_PAD, NIHONGO " ", 7);
    FIT_EQ(NIHONGO, 5, 0, "\xE6\x97\xA5\xE6\x9C\xAC" ELL, 5);
    FIT_EQ(NIHONGO, 4, 0, "\xE6\x97\xA5" ELL, 3);           /* 本 would leave no room */
    FIT_EQ(NIHONGO, 4, SAN_PAD, "\xE6\x97\xA5" ELL " ", 4); /* odd column left: pad */
    FIT_EQ(NIHONGO, 3, 0, "\xE6\x97\xA5" ELL, 3);
    FIT_EQ(NIHONGO, 2, 0, ELL, 1);
    FIT_EQ(NIHONGO, 2, SAN_PAD, ELL " ", 2);
    FIT_EQ(NIHONGO, 1, 0, ELL, 1);
#undef NIHONGO
    FIT_EQ("a\xE6\x97\xA5", 3, 0, "a\xE6\x97\xA5", 3);
    FIT_EQ("a\xE6\x97\xA5z", 3, 0, "a" ELL, 2);
    FIT_EQ("\xE6\x97\xA5z", 2, SAN_PAD, ELL " ", 2);
    FIT_EQ("\xF0\x9F\x98\x80\xF0\x9F\x98\x80", 4, 0, "\xF0\x9F\x98\x80\xF0\x9F\x98\x80", 4);
    FIT_EQ("\xF0\x9F\x98\x80\xF0\x9F\x98\x80", 3, 0, "\xF0\x9F\x98\x80" ELL, 3);
    /* Combining marks stay with their base character. */
    FIT_EQ("o\xCC\x81o\xCC\x81", 2, 0, "o\xCC\x81o\xCC\x81", 2);
    FIT_EQ("o\xCC\x81o\xCC\x81o", 2, 0, "o\xCC\x81" ELL, 2);
    FIT_EQ("e\xCC\x81x", 1, 0, ELL, 1);
    FIT_EQ("\xCC\x81z", 0, 0, "", 0); /* nothing at all in no room */
    FIT_EQ("caf\xC3\xA9s", 4, 0, "caf" ELL, 4);
    FIT_EQ("caf\xC3\xA9", 4, 0, "caf\xC3\xA9", 4);
}

static void test_fit_ascii_mode(void **state)
{
    (void)state;
    FIT_EQ("hello", 4, SAN_ASCII, "hel~", 4);
    FIT_EQ("h\xC3\xA9llo", 20, SAN_ASCII, "h\\u{e9}llo", 10);
    FIT_EQ("h\xC3\xA9llo", 9, SAN_ASCII, "h\\u{e9}l~", 9);
    FIT_EQ("h\xC3\xA9llo", 8, SAN_ASCII, "h\\u{e9}~", 8);
    FIT_EQ("h\xC3\xA9llo", 4, SAN_ASCII | SAN_PAD, "h~  ", 4);
    FIT_EQ("\xE6\x97\xA5", 8, SAN_ASCII, "\\u{65e5}", 8);
    FIT_EQ("\xE6\x97\xA5", 7, SAN_ASCII, "~", 1);
}

/* fit appends: what was in the buffer before survives a cut. */
static void test_fit_appends(void **state)
{
    (void)state;
    struct strbuf sb;
    sb_init(&sb);
    sb_adds(&sb, "[");
    assert_int_equal(sanitize_fit(&sb, "hello", 5, 4, 0), 4);
    sb_adds(&sb, "|");
    assert_int_equal(sanitize_fit(&sb, "\x01xyz", 4, 3, 0), 1);
    sb_adds(&sb, "|");
    assert_int_equal(sanitize_fit(&sb, "\x1B\x1B", 2, 3, 0), 3);
    sb_adds(&sb, "|");
    assert_int_equal(sanitize_fit(&sb, "ab", 2, 3, SAN_PAD), 3);
    sb_adds(&sb, "]");
    assert_string_equal(sb.buf, "[hel" ELL "|" ELL "|\\e" ELL "|ab ]");
    assert_int_equal(sb.len, strlen(sb.buf));
    sb_free(&sb);
}

/* A huge input is read only as far as it fits. */
static void test_fit_large(void **state)
{
    (void)state;
    size_t n = 4u << 20;
    char *big = xmalloc(n);
    memset(big, 'x', n);
    big[1] = '\x1B';
    struct strbuf sb;
    sb_init(&sb);
    assert_int_equal(sanitize_fit(&sb, big, n, 10, 0), 10);
    assert_string_equal(sb.buf, "x\\exxxxxx" ELL);
    assert_true(sb.cap < 1024);
    sb_free(&sb);
    free(big);
}

/* ---- is_text ------------------------------------------------------------------------------ */

static void test_is_text(void **state)
{
    (void)state;
    assert_true(sanitize_is_text("", 0));
    assert_true(sanitize_is_text(NULL, 0));
    assert_true(sanitize_is_text("hello world\n", 12));
    assert_true(sanitize_is_text("line1\r\nline2\t\n", 14));
    const char *utf = "{\"name\":\"caf\xC3\xA9 \xE6\x97\xA5\"}";
    assert_true(sanitize_is_text(utf, strlen(utf)));
    assert_false(sanitize_is_text("a\0b", 3));           /* any NUL */
    assert_false(sanitize_is_text("\xFF\xFExy", 4));     /* not UTF-8 */
    assert_false(sanitize_is_text("abc\xC3", 4));        /* truncated */
    assert_false(sanitize_is_text("ab\xED\xA0\x80", 5)); /* surrogate */
    /* Protobuf-like: tags and lengths are controls. */
    assert_false(sanitize_is_text("\x0A\x05hello\x12\x03zoo", 12));
    /* The threshold: one control per 16 code points. */
    char buf[64];
    memset(buf, 'a', sizeof buf);
    buf[0] = '\x01';
    assert_true(sanitize_is_text(buf, 16));
    assert_false(sanitize_is_text(buf, 15));
    buf[0] = '\x1B';
    assert_true(sanitize_is_text(buf, 64));
    buf[63] = '\0'; /* one NUL is enough to be binary */
    assert_false(sanitize_is_text(buf, 64));
    buf[63] = 'a';
    memcpy(buf, "\xC2\x9B", 2); /* C1 counts as a control */
    assert_false(sanitize_is_text(buf, 12));
    assert_true(sanitize_is_text(buf, 17));
}

int main(void)
{
    sanitize_test_locale();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_ascii),
        cmocka_unit_test(test_utf8_passthrough),
        cmocka_unit_test(test_c0_every_byte),
        cmocka_unit_test(test_terminal_attacks),
        cmocka_unit_test(test_c1_every_code_point),
        cmocka_unit_test(test_bidi_controls),
        cmocka_unit_test(test_invisible_format),
        cmocka_unit_test(test_tag_characters),
        cmocka_unit_test(test_invalid_utf8),
        cmocka_unit_test(test_keep_newlines),
        cmocka_unit_test(test_keep_newlines_wide),
        cmocka_unit_test(test_backslash),
        cmocka_unit_test(test_ascii_mode),
        cmocka_unit_test(test_locale_independent),
        cmocka_unit_test(test_width),
        cmocka_unit_test(test_fit_ascii),
        cmocka_unit_test(test_fit_escapes),
        cmocka_unit_test(test_fit_wide),
        cmocka_unit_test(test_fit_ascii_mode),
        cmocka_unit_test(test_fit_appends),
        cmocka_unit_test(test_fit_large),
        cmocka_unit_test(test_is_text),
        cmocka_unit_test(test_message),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
