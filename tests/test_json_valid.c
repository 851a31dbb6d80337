/*
 * test_json_valid: the fast JSON check against jansson itself. The one property that matters
 * is "sure implies jansson accepts" (json_valid.h); every check here asserts it. Here: a table
 * of tricky inputs with the exact answer each must get (sure, unsure although jansson accepts,
 * invalid), and built inputs (depth, long numbers, long strings). The exhaustive runs and the
 * differential loop: test_json_valid_exhaustive.c.
 */
#include "json_valid_testutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_valid.h"

/* ---- the table ------------------------------------------------------------------------- */

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table),        cmocka_unit_test(test_null_empty),
        cmocka_unit_test(test_depth),        cmocka_unit_test(test_long_numbers),
        cmocka_unit_test(test_long_strings),
    };
    return cmocka_run_group_tests_name("json_valid", tests, NULL, NULL);
}
