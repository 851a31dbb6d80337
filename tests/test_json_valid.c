/*
 * test_json_valid: the fast JSON check against jansson itself. The one property that matters
 * is "sure implies jansson accepts" (json_valid.h); every check here asserts it. Beyond it:
 * a table of tricky inputs with the exact answer each must get (sure, unsure although jansson
 * accepts, invalid), exhaustive runs over short inputs and over UTF-8 and escape forms where
 * the answer must equal jansson's, and a differential loop over generated and mutated
 * documents (a fixed seed, so every run is the same).
 */
#include "testutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_valid.h"

#define FLAGS (JSON_DECODE_ANY | JSON_ALLOW_NUL)

/* ---- the oracle ------------------------------------------------------------------------ */

static bool jansson_accepts(const void *s, size_t n)
{
    json_error_t e;
    json_t *j = json_loadb(s, n, FLAGS, &e);
    json_decref(j);
    return j != NULL;
}

static void dump(const char *what, const void *s, size_t n)
{
    const unsigned char *p = s;
    fprintf(stderr, "%s (%zu bytes):", what, n);
    for (size_t i = 0; i < n && i < 200; i++)
        fprintf(stderr, (p[i] >= 0x20 && p[i] < 0x7f) ? " %c" : " %02x", p[i]);
    fprintf(stderr, "%s\n", n > 200 ? " ..." : "");
}

/* json_surely_valid on a copy of exactly n bytes, so that a sanitizer build catches any read
 * past the end; fails when it is sure of something jansson refuses. */
static bool sure(const void *s, size_t n, bool *accepted)
{
    unsigned char *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    if (n)
        memcpy(copy, s, n);
    bool got = json_surely_valid(n ? copy : NULL, n);
    free(copy);
    bool ok = jansson_accepts(s, n);
    if (got && !ok) {
        dump("sure of JSON jansson refuses", s, n);
        fail();
    }
    if (accepted)
        *accepted = ok;
    return got;
}

/* Whether input jansson accepts holds something the check is allowed to be unsure of: an
 * exponent, a \u escape of NUL or a surrogate, 19 digits in a row, deep nesting — or a raw
 * NUL byte, which jansson 2.14 drops when it comes right after a number or a literal ("1\0",
 * "[true\0]", "[1\0,2]" parse), although it is not JSON. Crude (it does not know strings from
 * the rest), so it may excuse too much, never too little. */
static bool may_be_unsure(const unsigned char *s, size_t n)
{
    size_t run = 0, open = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c == '\0')
            return true;
        run = (c >= '0' && c <= '9') ? run + 1 : 0;
        if (run >= 19)
            return true;
        if ((c == 'e' || c == 'E') && i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
            return true;
        if (c == '[' || c == '{')
            open++;
        if (c == '\\' && i + 5 < n && s[i + 1] == 'u') {
            char hex[5] = {(char)s[i + 2], (char)s[i + 3], (char)s[i + 4], (char)s[i + 5], 0};
            char *end;
            unsigned long cp = strtoul(hex, &end, 16);
            if (*end == '\0' && (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF)))
                return true;
        }
    }
    return open > JSON_VALID_MAX_DEPTH;
}

/* Sure, or else jansson refuses it or it holds something the check may be unsure of. */
static void expect_complete(const void *s, size_t n)
{
    bool ok;
    bool got = sure(s, n, &ok);
    if (ok && !got && !may_be_unsure(s, n)) {
        dump("unsure of plain JSON jansson accepts", s, n);
        fail();
    }
}

/* ---- the table ------------------------------------------------------------------------- */

enum expect {
    SURE,    /* valid, and the check says so */
    UNSURE,  /* jansson accepts, the check leaves it to jansson (false) */
    INVALID, /* jansson refuses, so the check must */
};

struct jcase {
    const char *s;
    size_t n;
    enum expect e;
};

#define C(lit, e)                                                                                  \
    {                                                                                              \
        lit, sizeof(lit) - 1, e                                                                    \
    }

static const struct jcase cases[] = {
    /* top-level values of every kind */
    C("{}", SURE),
    C("[]", SURE),
    C("\"\"", SURE),
    C("0", SURE),
    C("-0", SURE),
    C("1", SURE),
    C("-1", SURE),
    C("123", SURE),
    C("0.5", SURE),
    C("-0.5", SURE),
    C("1.25", SURE),
    C("-0.0", SURE),
    C("true", SURE),
    C("false", SURE),
    C("null", SURE),
    C("\"abc\"", SURE),
    C("{\"a\":1}", SURE),
    C("[1,\"a\",true,false,null,{},[],-2.5]", SURE),
    C("{\"a\":[1,2,{\"b\":null}],\"c\":\"d\",\"e\":{\"f\":{}}}", SURE),
    C("[[[[[]]]]]", SURE),
    C("{\"a\":1,\"a\":2}", SURE),
    C("{\"\":\"\"}", SURE),
    /* whitespace: space, tab, LF, CR, anywhere between tokens */
    C(" \t\n\r{ \t\n\r\"a\" \t\n\r: \t\n\r1 \t\n\r, \"b\" :[ 1 , 2 ] } \t\n\r", SURE),
    C(" 1 ", SURE),
    C("\n\"x\"\n", SURE),
    C("[ ]", SURE),
    C("{ }", SURE),
    C("\r\ntrue\r\n", SURE),
    /* escapes */
    C("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"", SURE),
    C("\"\\u0041\\u00e9\\u20AC\\uFFFF\\uffff\"", SURE),
    C("\"\\u0001\"", SURE),
    C("\"\\uD7FF\"", SURE),
    C("\"\\uE000\"", SURE),
    C("{\"\\u0041\":1}", SURE),
    C("\"\\u00\\u0041\"", INVALID),
    /* numbers at the edges of sure */
    C("999999999999999999", SURE),
    C("-999999999999999999", SURE),
    C("1.0000000000000000000000000000000000001", SURE),
    C("0.000000000000000000000000001", SURE),
    C("123456789012345678.5", SURE),
    C("[0,-0,0.0,10,-10]", SURE),
    /* UTF-8 in strings, at the edges of each form */
    C("\"\x7f\"", SURE),
    C("\"\xc2\x80\"", SURE),
    C("\"\xc3\xa9\"", SURE),
    C("\"\xdf\xbf\"", SURE),
    C("\"\xe0\xa0\x80\"", SURE),
    C("\"\xe2\x82\xac\"", SURE),
    C("\"\xed\x9f\xbf\"", SURE),
    C("\"\xee\x80\x80\"", SURE),
    C("\"\xef\xbf\xbf\"", SURE),
    C("\"\xf0\x90\x80\x80\"", SURE),
    C("\"\xf0\x9f\x98\x80\"", SURE),
    C("\"\xf3\xbf\xbf\xbf\"", SURE),
    C("\"\xf4\x8f\xbf\xbf\"", SURE),
    C("{\"\xc3\xa9t\xc3\xa9\":\"\xe2\x82\xac\"}", SURE),
    C("\"abcdefghijklmnopqrstuvwxyz\xc3\xa9"
      "abcdefgh\\n12345678\"",
      SURE),

    /* valid, but left to jansson */
    C("1e5", UNSURE),
    C("1E5", UNSURE),
    C("1.5e-3", UNSURE),
    C("-1E+2", UNSURE),
    C("0e0", UNSURE),
    C("[1e1]", UNSURE),
    C("{\"a\":2.5E10}", UNSURE),
    C("\"\\u0000\"", UNSURE),
    C("[\"a\\u0000b\"]", UNSURE),
    C("\"\\uD83D\\uDE00\"", UNSURE),
    C("\"\\ud83d\\ude00\"", UNSURE),
    C("1234567890123456789", UNSURE),
    C("-1234567890123456789", UNSURE),
    C("9223372036854775807", UNSURE),
    C("-9223372036854775808", UNSURE),
    C("0000000000000000000.5", INVALID),

    /* nothing there */
    C("", INVALID),
    C(" ", INVALID),
    C(" \t\n\r ", INVALID),
    /* not whitespace, or not JSON outside strings */
    C("\xef\xbb\xbf{}", INVALID),
    C("\f{}", INVALID),
    C("\v1", INVALID),
    C("{}\f", INVALID),
    C("\x00", INVALID),
    C("{}\x00", INVALID),
    C("\x00{}", INVALID),
    C("\xc3\xa9", INVALID),
    C("1\x00", UNSURE),
    C("[true\x00]", UNSURE),
    C("[1\x00,2]", UNSURE),
    C("[true\x00,2]", UNSURE),
    C("{\"a\":null\x00}", UNSURE), /* jansson drops the NUL */
    C("[\xc3\xa9]", INVALID),
    C("\xa0"
      "1",
      INVALID),
    C("1\xa0", INVALID),
    /* control bytes in strings */
    C("\"\x00\"", INVALID),
    C("\"a\x00"
      "b\"",
      INVALID),
    C("\"a\x01\"", INVALID),
    C("\"\x1f\"", INVALID),
    C("\"\t\"", INVALID),
    C("\"\n\"", INVALID),
    C("\"\r\"", INVALID),
    C("{\"a\x00\":1}", INVALID),
    C("\"abcdefghijkl\x00mnopqrstuvwxyz\"", INVALID),
    /* after the value */
    C("{\"a\":1}x", INVALID),
    C("{}{}", INVALID),
    C("[] []", INVALID),
    C("1 2", INVALID),
    C("\"a\" \"b\"", INVALID),
    C("truex", INVALID),
    C("true1", INVALID),
    C("null,", INVALID),
    C("1]", INVALID),
    C("{}}", INVALID),
    /* literals */
    C("nul", INVALID),
    C("tru", INVALID),
    C("fals", INVALID),
    C("True", INVALID),
    C("NULL", INVALID),
    C("nan", INVALID),
    C("NaN", INVALID),
    C("Infinity", INVALID),
    C("-Infinity", INVALID),
    C("undefined", INVALID),
    C("t", INVALID),
    C("nulll", INVALID),
    /* numbers */
    C("01", INVALID),
    C("-01", INVALID),
    C("00", INVALID),
    C("-", INVALID),
    C("--1", INVALID),
    C("+1", INVALID),
    C("1.", INVALID),
    C(".5", INVALID),
    C("-.5", INVALID),
    C("1.e5", INVALID),
    C("0x10", INVALID),
    C("1_000", INVALID),
    C("1..2", INVALID),
    C("1.2.3", INVALID),
    C("- 1", INVALID),
    C("1e", INVALID),
    C("1e+", INVALID),
    C("[-]", INVALID),
    C("[1.]", INVALID),
    C("[01]", INVALID),
    C("-0.", INVALID),
    C("0.a", INVALID),
    C("99999999999999999999", INVALID),
    C("-9223372036854775809", INVALID),
    C("9223372036854775808", INVALID),
    C("1e400", INVALID),
    C("-1e400", INVALID),
    /* strings */
    C("\"abc", INVALID),
    C("\"", INVALID),
    C("\"\\\"", INVALID),
    C("\"\\x\"", INVALID),
    C("\"\\'\"", INVALID),
    C("\"\\u12\"", INVALID),
    C("\"\\u12G4\"", INVALID),
    C("\"\\U0041\"", INVALID),
    C("\"\\", INVALID),
    C("\"\\u004\"", INVALID),
    C("\"\\u\"", INVALID),
    C("\"\\0\"", INVALID),
    C("\"\\a\"", INVALID),
    C("\"\\u00e", INVALID),
    C("'a'", INVALID),
    C("\"\\ u0041\"", INVALID),
    /* surrogate and NUL escapes jansson refuses: left to it, so false */
    C("\"\\uD800\"", INVALID),
    C("\"\\uDC00\"", INVALID),
    C("\"\\uDFFF\"", INVALID),
    C("\"\\uD800\\u0041\"", INVALID),
    C("\"\\uDE00\\uD83D\"", INVALID),
    C("\"\\uD800x\"", INVALID),
    C("{\"a\\u0000\":1}", INVALID),
    C("{\"\\u0000\":1}", INVALID),
    /* UTF-8: overlongs, surrogates, beyond U+10FFFF, stray and missing continuations */
    C("\"\xc0\x80\"", INVALID),
    C("\"\xc1\xbf\"", INVALID),
    C("\"\xe0\x80\x80\"", INVALID),
    C("\"\xe0\x9f\xbf\"", INVALID),
    C("\"\xed\xa0\x80\"", INVALID),
    C("\"\xed\xbf\xbf\"", INVALID),
    C("\"\xed\xb0\x80\"", INVALID),
    C("\"\xf0\x80\x80\x80\"", INVALID),
    C("\"\xf0\x8f\xbf\xbf\"", INVALID),
    C("\"\xf4\x90\x80\x80\"", INVALID),
    C("\"\xf5\x80\x80\x80\"", INVALID),
    C("\"\xf7\xbf\xbf\xbf\"", INVALID),
    C("\"\xf8\x88\x80\x80\x80\"", INVALID),
    C("\"\xff\"", INVALID),
    C("\"\xfe\"", INVALID),
    C("\"\x80\"", INVALID),
    C("\"\xbf\"", INVALID),
    C("\"\xc3\"", INVALID),
    C("\"\xc3\xa9\xa9\"", INVALID),
    C("\"\xc3\x28\"", INVALID),
    C("\"\xe2\x28\xa1\"", INVALID),
    C("\"\xe2\x82\x28\"", INVALID),
    C("\"\xf0\x28\x8c\xbc\"", INVALID),
    C("\"\xf0\x9f\x98\x28\"", INVALID),
    C("\"\xe2\x82\"", INVALID),
    C("\"\xf0\x9f\x98\"", INVALID),
    C("\"\xc3\xc3\xa9\"", INVALID),
    /* truncated at the end of the input */
    C("\"\xc3", INVALID),
    C("\"\xe2\x82", INVALID),
    C("\"\xf0\x9f\x98", INVALID),
    C("\"\xe2", INVALID),
    C("\"\xf0", INVALID),
    C("[\"\xf4\x8f\xbf", INVALID),
    /* structure */
    C("[", INVALID),
    C("]", INVALID),
    C("{", INVALID),
    C("}", INVALID),
    C("[1,]", INVALID),
    C("[,1]", INVALID),
    C("[1,,2]", INVALID),
    C("[,]", INVALID),
    C("{\"a\"}", INVALID),
    C("{\"a\":}", INVALID),
    C("{\"a\" 1}", INVALID),
    C("{a:1}", INVALID),
    C("{1:1}", INVALID),
    C("{\"a\":1,}", INVALID),
    C("{,}", INVALID),
    C("[1 2]", INVALID),
    C("{\"a\":1 \"b\":2}", INVALID),
    C("[}", INVALID),
    C("{]", INVALID),
    C("[[]", INVALID),
    C("[]]", INVALID),
    C(":", INVALID),
    C(",", INVALID),
    C("[:]", INVALID),
    C("{\"a\"::1}", INVALID),
    C("[\"a\",]", INVALID),
    C("{\"a\":1;\"b\":2}", INVALID),
    C("{\"a\",1}", INVALID),
    C("[1:2]", INVALID),
    C("{null:1}", INVALID),
    C("{[]:1}", INVALID),
    C("{\"a\":1", INVALID),
    C("[1", INVALID),
    C("[1,", INVALID),
    C("{\"a\":", INVALID),
    C("{\"a\"", INVALID),
    C("[\"a\"", INVALID),
    C("/* c */ 1", INVALID),
    C("1 // c", INVALID),
};

static const char *expect_name(enum expect e)
{
    return e == SURE ? "sure" : e == UNSURE ? "unsure (jansson accepts)" : "invalid";
}

static void check_case(const void *s, size_t n, enum expect want)
{
    bool ok;
    bool got = sure(s, n, &ok);
    enum expect is = got ? SURE : ok ? UNSURE : INVALID;
    if (is != want) {
        dump("input", s, n);
        fail_msg("expected %s, got %s", expect_name(want), expect_name(is));
    }
}

static void test_table(void **state)
{
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_case(cases[i].s, cases[i].n, cases[i].e);
}

static void test_null_empty(void **state)
{
    assert_false(json_surely_valid(NULL, 0));
    assert_false(json_surely_valid("1", 0));
}

/* ---- built inputs: depth, long numbers, long strings ------------------------------------ */

static void check_nested(size_t depth, bool objects, enum expect want)
{
    size_t n = depth * (objects ? 6 : 2) + 1;
    char *s = malloc(n + 1), *p = s;
    assert_non_null(s);
    for (size_t i = 0; i < depth; i++) {
        memcpy(p, objects ? "{\"a\":" : "[", objects ? 5 : 1);
        p += objects ? 5 : 1;
    }
    *p++ = '1';
    for (size_t i = 0; i < depth; i++)
        *p++ = objects ? '}' : ']';
    check_case(s, (size_t)(p - s), want);
    /* One closer short: always invalid. */
    check_case(s, (size_t)(p - s - 1), INVALID);
    free(s);
}

static void test_depth(void **state)
{
    check_nested(1, false, SURE);
    check_nested(JSON_VALID_MAX_DEPTH, false, SURE);
    check_nested(JSON_VALID_MAX_DEPTH, true, SURE);
    check_nested(JSON_VALID_MAX_DEPTH + 1, false, UNSURE);
    check_nested(JSON_VALID_MAX_DEPTH + 1, true, UNSURE);
    /* jansson's limit (2048) counts the innermost scalar too. */
    check_nested(2047, false, UNSURE);
    check_nested(2048, false, INVALID);

    /* Alternating, with the bit stack crossing its word boundaries. */
    char s[2 * JSON_VALID_MAX_DEPTH * 5 + 16];
    size_t n = 0;
    for (size_t i = 0; i < JSON_VALID_MAX_DEPTH; i++) {
        const char *open = i % 3 == 0 ? "{\"k\":" : "[";
        memcpy(s + n, open, strlen(open));
        n += strlen(open);
    }
    s[n++] = '0';
    for (size_t i = JSON_VALID_MAX_DEPTH; i-- > 0;) {
        s[n++] = i % 3 == 0 ? '}' : ']';
        /* A second member in the container around the one just closed. */
        if (i > 0) {
            const char *more = (i - 1) % 3 == 0 ? ",\"z\":1" : ",2";
            memcpy(s + n, more, strlen(more));
            n += strlen(more);
        }
    }
    check_case(s, n, SURE);
    /* The wrong closer at the innermost level. */
    char *w = memchr(s, '0', n);
    w[1] = w[1] == ']' ? '}' : ']';
    check_case(s, n, INVALID);
}

static void test_long_numbers(void **state)
{
    char s[512];
    /* 300 digits before the point: sure; 301: unsure; 400: overflow, so invalid. */
    for (int digits = 299; digits <= 302; digits++) {
        memset(s, '9', (size_t)digits);
        memcpy(s + digits, ".5", 2);
        check_case(s, (size_t)digits + 2, digits <= 300 ? SURE : UNSURE);
    }
    memset(s, '9', 400);
    memcpy(s + 400, ".5", 2);
    check_case(s, 402, INVALID);
    /* 18 digits of an integer: sure; 19 that fit: unsure. */
    memset(s, '9', 18);
    check_case(s, 18, SURE);
    s[0] = '-';
    check_case(s, 18, SURE);
    memset(s, '1', 19);
    check_case(s, 19, UNSURE);
    /* A long fraction is fine. */
    s[0] = '0';
    s[1] = '.';
    memset(s + 2, '3', 500);
    check_case(s, 502, SURE);
}

static void test_long_strings(void **state)
{
    /* A special byte at every offset of the eight-byte words the string scan reads. */
    static const char *const specials[] = {
        "\"",   "\\n",  "\\u00e9",      "\xc3\xa9", "\xf0\x9f\x98\x80",
        "\x01", "\x80", "\xed\xa0\x80", "\\x",      "\x7f"};
    for (size_t k = 0; k < sizeof specials / sizeof specials[0]; k++) {
        const char *sp = specials[k];
        bool valid_inside = !(sp[0] == '"' || sp[0] == '\x01' || sp[0] == '\x80' ||
                              sp[0] == '\xed' || strcmp(sp, "\\x") == 0);
        for (size_t at = 0; at < 40; at++) {
            char s[128];
            size_t n = 0;
            s[n++] = '"';
            memset(s + n, 'a', at);
            n += at;
            memcpy(s + n, sp, strlen(sp));
            n += strlen(sp);
            memset(s + n, 'b', 17);
            n += 17;
            s[n++] = '"';
            check_case(s, n, valid_inside ? SURE : INVALID);
            /* Cut anywhere: the closing quote is gone (unless the special byte was one). */
            for (size_t cut = 1; cut < n; cut++)
                if (sp[0] == '"')
                    expect_complete(s, cut);
                else
                    check_case(s, cut, INVALID);
        }
    }
}

/* ---- exhaustive: short inputs, UTF-8 forms, escapes --------------------------------------- */

static void test_all_short_inputs(void **state)
{
    /* Every input of one and two bytes: no room for anything left to jansson, so the answer
     * is jansson's, but for a NUL byte (never JSON; jansson drops one after "1"). */
    for (unsigned a = 0; a < 256; a++) {
        unsigned char s[2] = {(unsigned char)a, 0};
        bool ok;
        assert_true(sure(s, 1, &ok) == ok);
        for (unsigned b = 0; b < 256; b++) {
            s[1] = (unsigned char)b;
            bool got = sure(s, 2, &ok);
            if (got != (ok && a != 0 && b != 0)) {
                dump("differs from jansson", s, 2);
                fail();
            }
        }
    }
    /* Every input of up to four bytes over an alphabet of JSON's significant bytes. */
    static const char alpha[] = "[]{}\":,\\ \t\n\r01-.eEu9aftn\x80\xc3\xa9";
    const size_t na = sizeof alpha - 1;
    unsigned char s[4];
    for (size_t i = 0; i < na; i++)
        for (size_t j = 0; j < na; j++)
            for (size_t k = 0; k < na; k++) {
                s[0] = (unsigned char)alpha[i], s[1] = (unsigned char)alpha[j];
                s[2] = (unsigned char)alpha[k];
                expect_complete(s, 3);
                for (size_t l = 0; l < na; l++) {
                    s[3] = (unsigned char)alpha[l];
                    expect_complete(s, 4);
                }
            }
}

static void test_utf8_forms(void **state)
{
    /* Quote, up to four bytes, quote: the answer must be jansson's exactly. All pairs, and
     * for three and four bytes every lead with the continuation bytes at the edges. */
    static const unsigned char edge[] = {0x00, 0x20, 0x22, 0x5c, 0x7f, 0x80, 0x81,
                                         0x8f, 0x90, 0x9f, 0xa0, 0xa1, 0xbf, 0xc0,
                                         0xc2, 0xdf, 0xe0, 0xf0, 0xf4, 0xf5, 0xff};
    const size_t ne = sizeof edge;
    unsigned char s[6];
    bool ok;
    s[0] = '"';
    for (unsigned a = 0; a < 256; a++)
        for (unsigned b = 0; b < 256; b++) {
            s[1] = (unsigned char)a, s[2] = (unsigned char)b, s[3] = '"';
            if (sure(s, 4, &ok) != ok && !(a == '\\' && b == 'u')) {
                dump("differs from jansson", s, 4);
                fail();
            }
        }
    for (unsigned a = 0x80; a < 256; a++)
        for (size_t i = 0; i < ne; i++)
            for (size_t j = 0; j < ne; j++) {
                s[1] = (unsigned char)a, s[2] = edge[i], s[3] = edge[j], s[4] = '"';
                /* With the closing quote, and without it (the input ends in the sequence). */
                for (size_t n = 4; n <= 5; n++)
                    if (sure(s, n, &ok) != ok) {
                        dump("differs from jansson", s, n);
                        fail();
                    }
                if (a < 0xe0) /* a two-byte lead: the fourth byte adds nothing new */
                    continue;
                for (size_t k = 0; k < ne; k++) {
                    s[4] = edge[k], s[5] = '"';
                    if (sure(s, 6, &ok) != ok) {
                        dump("differs from jansson", s, 6);
                        fail();
                    }
                }
            }
}

static void test_escapes(void **state)
{
    char s[16];
    bool ok;
    /* Every byte after a backslash. */
    for (unsigned c = 0; c < 256; c++) {
        if (c == 'u')
            continue;
        snprintf(s, sizeof s, "\"\\%c\"", (char)c);
        if (sure(s, 4, &ok) != ok) {
            dump("differs from jansson", s, 4);
            fail();
        }
    }
    /* Every \u escape, in lower and upper case: sure unless NUL or a surrogate half. */
    for (unsigned cp = 0; cp < 0x10000; cp++) {
        for (int upper = 0; upper < 2; upper++) {
            snprintf(s, sizeof s, upper ? "\"\\u%04X\"" : "\"\\u%04x\"", cp);
            bool got = sure(s, 8, &ok);
            bool want = cp != 0 && !(cp >= 0xD800 && cp <= 0xDFFF);
            if (got != want) {
                dump("input", s, 8);
                fail_msg("U+%04X: expected %s", cp, want ? "sure" : "unsure");
            }
            assert_true(ok || (cp >= 0xD800 && cp <= 0xDFFF));
        }
    }
    /* Bad hex digits in each position. */
    static const char bad[] = "gG/:@`xz \"";
    for (int pos = 0; pos < 4; pos++)
        for (size_t b = 0; b < sizeof bad - 1; b++) {
            snprintf(s, sizeof s, "\"\\u0041\"");
            s[3 + pos] = bad[b];
            check_case(s, 8, INVALID);
        }
}

/* ---- differential: generated and mutated documents --------------------------------------- */

static uint64_t rng_state = UINT64_C(0x9E3779B97F4A7C15);

static uint64_t rng(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static size_t rnd(size_t n)
{
    return (size_t)(rng() % n);
}

struct buf {
    unsigned char *p;
    size_t n, cap;
};

static void put(struct buf *b, const void *s, size_t n)
{
    if (b->n + n > b->cap) {
        b->cap = (b->n + n) * 2 + 64;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

static void puts_(struct buf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void ws(struct buf *b)
{
    static const char *const w[] = {"", "", "", " ", "\n", "\t", "\r\n", "  "};
    puts_(b, w[rnd(sizeof w / sizeof w[0])]);
}

static void gen_string(struct buf *b)
{
    static const char *const pieces[] = {"a",
                                         "id",
                                         "order",
                                         "Z",
                                         " ",
                                         "42",
                                         "\\\"",
                                         "\\\\",
                                         "\\/",
                                         "\\b",
                                         "\\f",
                                         "\\n",
                                         "\\r",
                                         "\\t",
                                         "\\u0041",
                                         "\\u00e9",
                                         "\\uFFFD",
                                         "\xc3\xa9",
                                         "\xe2\x82\xac",
                                         "\xf0\x9f\x98\x80",
                                         "\xf4\x8f\xbf\xbf",
                                         "\x7f",
                                         "{",
                                         "]",
                                         ":",
                                         ",",
                                         "true",
                                         "-1.5"};
    puts_(b, "\"");
    size_t n = rnd(8);
    for (size_t i = 0; i < n; i++)
        puts_(b, pieces[rnd(sizeof pieces / sizeof pieces[0])]);
    puts_(b, "\"");
}

static void gen_number(struct buf *b)
{
    char s[64];
    int len = 0;
    if (rnd(3) == 0)
        s[len++] = '-';
    if (rnd(4) == 0) {
        s[len++] = '0';
    } else {
        int digits = 1 + (int)rnd(rnd(4) == 0 ? 18 : 6);
        s[len++] = (char)('1' + rnd(9));
        for (int i = 1; i < digits; i++)
            s[len++] = (char)('0' + rnd(10));
    }
    if (rnd(3) == 0) {
        s[len++] = '.';
        int digits = 1 + (int)rnd(8);
        for (int i = 0; i < digits; i++)
            s[len++] = (char)('0' + rnd(10));
    }
    put(b, s, (size_t)len);
}

static void gen_value(struct buf *b, int depth)
{
    size_t kind = rnd(depth > 4 ? 6 : 9);
    switch (kind) {
    case 0:
        gen_string(b);
        break;
    case 1:
    case 2:
        gen_number(b);
        break;
    case 3:
        puts_(b, "true");
        break;
    case 4:
        puts_(b, "false");
        break;
    case 5:
        puts_(b, "null");
        break;
    case 6:
    case 7: {
        puts_(b, "{");
        size_t n = rnd(5);
        for (size_t i = 0; i < n; i++) {
            if (i)
                puts_(b, ",");
            ws(b);
            gen_string(b);
            ws(b);
            puts_(b, ":");
            ws(b);
            gen_value(b, depth + 1);
            ws(b);
        }
        if (!n)
            ws(b);
        puts_(b, "}");
        break;
    }
    default: {
        puts_(b, "[");
        size_t n = rnd(5);
        for (size_t i = 0; i < n; i++) {
            if (i)
                puts_(b, ",");
            ws(b);
            gen_value(b, depth + 1);
            ws(b);
        }
        if (!n)
            ws(b);
        puts_(b, "]");
        break;
    }
    }
}

/* Documents such as bodies carry, without anything left to jansson. */
static const char *const seeds[] = {
    "{\"orderId\":\"ord-7f3a\",\"amount\":129.95,\"currency\":\"EUR\",\"items\":[{\"sku\":\"A-1\","
    "\"qty\":2},{\"sku\":\"B-22\",\"qty\":1}],\"paid\":true,\"note\":null}",
    "[1,2,3,-4,0.5,\"x\",\"\\u00e9t\\u00e9\",{\"a\":{\"b\":[[]]}}]",
    "{\n  \"event\": \"user.created\",\n  \"user\": {\"id\": 123456789, \"name\": \"Zo\xc3\xab\","
    "\n    \"tags\": [\"a\", \"b\"], \"emoji\": \"\xf0\x9f\x98\x80\"}\n}\n",
    "\"just a string with \\\"quotes\\\" and \\\\ and \\n\"",
    "-12.5",
    "{\"k\":\"\xe2\x82\xac\xe2\x82\xac\",\"k\":[true,false,null]}",
};

/* One random edit: flip a bit, overwrite, insert or delete a byte, duplicate or cut. */
static void mutate(struct buf *b)
{
    static const char interesting[] = "\"\\{}[]:,0-.eEu \t\n\r\x00\x01\x7f\x80\xbf\xc0\xc3\xe0"
                                      "\xed\xf0\xf4\xf5\xff";
    size_t op = rnd(7);
    if (b->n == 0)
        op = 2;
    unsigned char c =
        rnd(2) ? (unsigned char)interesting[rnd(sizeof interesting - 1)] : (unsigned char)rnd(256);
    size_t at = b->n ? rnd(b->n) : 0;
    switch (op) {
    case 0:
        b->p[at] ^= (unsigned char)(1u << rnd(8));
        break;
    case 1:
        b->p[at] = c;
        break;
    case 2:
    case 3:
        put(b, "", 1); /* room for one more */
        memmove(b->p + at + 1, b->p + at, b->n - 1 - at);
        b->p[at] = c;
        break;
    case 4:
        memmove(b->p + at, b->p + at + 1, b->n - at - 1);
        b->n--;
        break;
    case 5: {
        size_t len = 1 + rnd(b->n - at < 8 ? b->n - at : 8);
        unsigned char tmp[8];
        memcpy(tmp, b->p + at, len);
        size_t to = rnd(b->n + 1);
        put(b, tmp, len);
        memmove(b->p + to + len, b->p + to, b->n - len - to);
        memcpy(b->p + to, tmp, len);
        break;
    }
    default:
        b->n = at;
        break;
    }
}

static void test_differential(void **state)
{
    struct buf doc = {0}, m = {0};
    size_t n_sure = 0, n_accepted = 0, n_total = 0;
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        bool ok;
        if (!sure(seeds[i], strlen(seeds[i]), &ok))
            fail_msg("unsure of seed %zu", i);
    }
    for (unsigned round = 0; round < 20000; round++) {
        doc.n = 0;
        if (round % 4 == 0) {
            puts_(&doc, seeds[rnd(sizeof seeds / sizeof seeds[0])]);
        } else {
            ws(&doc);
            gen_value(&doc, 0);
            ws(&doc);
        }
        bool ok;
        if (!sure(doc.p, doc.n, &ok)) {
            dump("unsure of a generated document", doc.p, doc.n);
            fail();
        }
        /* Mutants: each a few edits away from the document. */
        for (int k = 0; k < 15; k++) {
            m.n = 0;
            put(&m, doc.p, doc.n);
            size_t edits = 1 + rnd(rnd(4) == 0 ? 6 : 2);
            for (size_t e = 0; e < edits; e++)
                mutate(&m);
            bool acc;
            bool got = sure(m.p, m.n, &acc);
            if (acc && !got && !may_be_unsure(m.p, m.n)) {
                dump("unsure of plain JSON jansson accepts", m.p, m.n);
                fail();
            }
            n_total++;
            n_sure += got;
            n_accepted += acc;
        }
    }
    /* Not vacuous: a fair share of the mutants is still valid, and judged so. */
    printf("differential: %zu mutants, %zu accepted by jansson, %zu sure\n", n_total, n_accepted,
           n_sure);
    assert_true(n_sure > n_total / 20);
    free(doc.p);
    free(m.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),        cmocka_unit_test(test_null_empty),
        cmocka_unit_test(test_depth),        cmocka_unit_test(test_long_numbers),
        cmocka_unit_test(test_long_strings), cmocka_unit_test(test_all_short_inputs),
        cmocka_unit_test(test_utf8_forms),   cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_differential),
    };
    return cmocka_run_group_tests_name("json_valid", tests, NULL, NULL);
}
