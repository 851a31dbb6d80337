/*
 * test_json_valid_exhaustive: the fast JSON check against jansson, "sure implies jansson
 * accepts" asserted on every input: exhaustive runs over short inputs and over UTF-8 and
 * escape forms where the answer must equal jansson's, and a differential loop over generated
 * and mutated documents (a fixed seed, so every run is the same).
 */
#include "json_valid_testutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_valid.h"

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
        cmocka_unit_test(test_all_short_inputs),
        cmocka_unit_test(test_utf8_forms),
        cmocka_unit_test(test_escapes),
        cmocka_unit_test(test_differential),
    };
    return cmocka_run_group_tests_name("json_valid_exhaustive", tests, NULL, NULL);
}
