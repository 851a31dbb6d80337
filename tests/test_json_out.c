/*
 * json_out: the compact writer gives jansson's bytes, for random trees (every JSON type,
 * strings with every control byte, quotes, backslashes, 0x7f, UTF-8 of every length, reals
 * of every form, keys in insertion order) under each flag set the callers use; and it
 * declines (writes nothing) where jansson must dump: JSON_ENSURE_ASCII, indentation, keys or
 * strings that are not UTF-8, a NUL in a key, a tree deeper than JSON_OUT_MAX_DEPTH.
 */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"

static unsigned long long rng = 0x2545F4914F6CDD1DULL;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

static int dump_cb(const char *buffer, size_t size, void *data)
{
    sb_add(data, buffer, size);
    return 0;
}

static void rnd_text(struct strbuf *sb)
{
    static const char *const pieces[] = {
        "a", "Zq", "\"",          "\\", "/", "\x7f", "\xc3\xa9", "\xe2\x80\xae", "\xf0\x9f\x98\x80",
        " ", "{}", "\xef\xbf\xbf"};
    unsigned n = rnd(7);
    for (unsigned i = 0; i < n; i++) {
        if (rnd(4) == 0)
            sb_addc(sb, (char)(1 + rnd(31))); /* a control byte */
        else
            sb_adds(sb, pieces[rnd(12)]);
    }
}

static json_t *rnd_json(int depth)
{
    unsigned k = rnd(depth > 5 ? 6 : 8);
    struct strbuf sb;
    switch (k) {
    case 0:
        return json_null();
    case 1:
        return json_boolean(rnd(2));
    case 2: {
        static const json_int_t ints[] = {0,
                                          -1,
                                          1,
                                          9,
                                          10,
                                          255,
                                          -9223372036854775807LL - 1,
                                          9223372036854775807LL,
                                          1767330000000LL};
        return json_integer(rnd(2) ? ints[rnd(9)] : (json_int_t)rng);
    }
    case 3: {
        static const double reals[] = {
            0.0,     -0.0, 0.1,  1.0,   1e300, 1e-300, 123456789012345678.0, 3.14159265358979,
            -2.5e-7, 1e15, 1e16, 5e-324};
        return json_real(rnd(2) ? reals[rnd(12)] : (double)(int64_t)rng / 7.0);
    }
    case 4:
    case 5: {
        sb_init(&sb);
        rnd_text(&sb);
        json_t *s = json_stringn(sb.buf ? sb.buf : "", sb.len);
        sb_free(&sb);
        return s;
    }
    case 6: {
        json_t *a = json_array();
        for (unsigned i = rnd(5); i > 0; i--)
            json_array_append_new(a, rnd_json(depth + 1));
        return a;
    }
    default: {
        json_t *o = json_object();
        for (unsigned i = rnd(6); i > 0; i--) {
            sb_init(&sb);
            rnd_text(&sb);
            json_object_setn_new(o, sb.buf ? sb.buf : "", sb.len, rnd_json(depth + 1));
            sb_free(&sb);
        }
        return o;
    }
    }
}

/* Returns whether json_out wrote it (and then that it wrote jansson's bytes). */
static bool same(const json_t *j, size_t flags)
{
    struct strbuf a, b;
    sb_init(&a);
    sb_init(&b);
    sb_adds(&a, "prefix");
    bool wrote = json_out_fast(&a, j, flags);
    if (!wrote)
        assert_int_equal(a.len, 6); /* nothing appended */
    json_dump_callback(j, dump_cb, &b, flags);
    if (wrote && (a.len - 6 != b.len || memcmp(a.buf + 6, b.buf, b.len) != 0))
        fail_msg("json_out wrote %s, jansson %s", a.buf + 6, b.buf);
    sb_free(&a);
    sb_free(&b);
    return wrote;
}

static void test_random_trees(void **state)
{
    (void)state;
    static const size_t flag_sets[] = {JSON_COMPACT, JSON_COMPACT | JSON_REAL_PRECISION(15),
                                       JSON_COMPACT | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY,
                                       JSON_COMPACT | JSON_REAL_PRECISION(6)};
    int wrote = 0, expect = 0;
    for (int i = 0; i < 20000; i++) {
        json_t *j = rnd_json(0);
        expect += json_is_object(j) || json_is_array(j) ? 4 : 1;
        for (size_t f = 0; f < sizeof flag_sets / sizeof *flag_sets; f++)
            wrote += same(j, flag_sets[f]);
        assert_false(same(j, JSON_COMPACT | JSON_ENSURE_ASCII));
        assert_false(same(j, JSON_INDENT(2)));
        assert_false(same(j, JSON_COMPACT | JSON_SORT_KEYS));
        json_decref(j);
    }
    /* Every tree (UTF-8, shallow) is written by json_out itself, but a scalar without
     * JSON_ENCODE_ANY, which jansson refuses too. */
    if (wrote != expect)
        fail_msg("json_out wrote %d of the %d it should", wrote, expect);
    /* Each control byte, one at a time. */
    for (int c = 0; c < 0x80; c++) {
        char s[3] = {'x', (char)c, 'y'};
        json_t *j = json_pack("[s%]", s, (size_t)3);
        assert_true(same(j, JSON_COMPACT));
        json_decref(j);
    }
}

static void test_declines(void **state)
{
    (void)state;
    json_t *o = json_object();
    json_object_set_new(o, "bad", json_stringn_nocheck("\xff", 1));
    assert_false(same(o, JSON_COMPACT));
    json_decref(o);
    o = json_object();
    json_object_setn_new_nocheck(o, "k\0ey", 4, json_true());
    assert_false(same(o, JSON_COMPACT));
    json_decref(o);
    o = json_object();
    json_object_setn_new_nocheck(o, "\xc3", 1, json_true());
    assert_false(same(o, JSON_COMPACT));
    json_decref(o);
    /* deep */
    json_t *deep = json_array(), *at = deep;
    for (int i = 0; i < JSON_OUT_MAX_DEPTH + 2; i++) {
        json_t *next = json_array();
        json_array_append_new(at, next);
        at = next;
    }
    assert_false(same(deep, JSON_COMPACT));
    json_decref(deep);
    deep = json_array();
    at = deep;
    for (int i = 0; i < JSON_OUT_MAX_DEPTH - 2; i++) {
        json_t *next = json_array();
        json_array_append_new(at, next);
        at = next;
    }
    assert_true(same(deep, JSON_COMPACT));
    json_decref(deep);
    /* a scalar needs JSON_ENCODE_ANY, as with jansson */
    json_t *s = json_string("x");
    assert_false(same(s, JSON_COMPACT));
    assert_true(same(s, JSON_COMPACT | JSON_ENCODE_ANY));
    json_decref(s);
}

/* json_plain_prefix (eight and sixteen bytes at a time) stops at the first byte a JSON
 * string cannot hold as it is, wherever it falls in a word, and utf8_valid's ASCII words skip
 * nothing that jansson would refuse: both against a byte at a time, for random buffers of
 * the bytes on either side of each boundary at every length and alignment. */
static void test_plain_prefix(void **state)
{
    (void)state;
    static const unsigned char edge[] = {0x00, 0x1f, 0x20, 0x21, '"',  '#',  '[',  '\\', ']',
                                         'x',  0x7e, 0x7f, 0x80, 0xa9, 0xbf, 0xc3, 0xe2, 0xff};
    unsigned char buf[96];
    for (int round = 0; round < 40000; round++) {
        size_t off = rnd(16), n = rnd(80);
        unsigned char *b = buf + off;
        /* mostly plain, so that the first stop can fall anywhere in a long run */
        for (size_t i = 0; i < n; i++)
            b[i] = rnd(24) ? (unsigned char)('a' + rnd(26)) : edge[rnd(sizeof edge)];
        for (int ascii = 0; ascii < 2; ascii++) {
            size_t want = 0;
            while (want < n && b[want] >= 0x20 && b[want] != '"' && b[want] != '\\' &&
                   !(ascii && b[want] >= 0x80))
                want++;
            assert_int_equal(json_plain_prefix(b, n, ascii), want);
        }
        json_t *j = json_stringn((const char *)b, n);
        assert_int_equal(utf8_valid(b, n), j != NULL);
        json_decref(j);
    }
}

/* A string's one byte to escape (or a UTF-8 character) at every place in texts of 1 to 80
 * bytes: json_out_string writes jansson's bytes. The copy that checks as it goes looks at
 * sixteen bytes at a time with SSE2, else eight: built without SSE2 (scripts/test's portable
 * build), it once checked only the first and last eight bytes of a text, and wrote a quote or
 * a backslash in the middle of a longer one as it was. */
static void test_one_byte_anywhere(void **state)
{
    (void)state;
    static const char *const odd[] = {"\"", "\\", "\x01", "\x1f", "\n", "\xc3\xa9", "\xe2\x80\xae"};
    char text[96];
    for (size_t n = 1; n <= 80; n++)
        for (size_t at = 0; at < n; at++)
            for (size_t k = 0; k < sizeof odd / sizeof *odd; k++) {
                size_t len = strlen(odd[k]);
                if (at + len > n)
                    continue;
                memset(text, 'a', n);
                memcpy(text + at, odd[k], len);
                json_t *j = json_stringn(text, n);
                assert_non_null(j);
                struct strbuf want, got;
                sb_init(&want);
                sb_init(&got);
                assert_int_equal(
                    json_dump_callback(j, dump_cb, &want, JSON_COMPACT | JSON_ENCODE_ANY), 0);
                assert_true(json_out_string(&got, text, n));
                assert_int_equal(got.len, want.len);
                assert_memory_equal(got.buf, want.buf, want.len);
                sb_free(&want);
                sb_free(&got);
                json_decref(j);
            }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_trees),
        cmocka_unit_test(test_declines),
        cmocka_unit_test(test_plain_prefix),
        cmocka_unit_test(test_one_byte_anywhere),
    };
    return cmocka_run_group_tests_name("json_out", tests, NULL, NULL);
}
