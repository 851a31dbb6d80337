/*
 * rx: the filter's regex engine (src/analysis/rx.h). It must agree with glibc's regexec, in
 * the UTF-8 locale dlqx runs in, on every regex glibc accepts (random regexes from the
 * filter's alphabet against random short subjects, where glibc is fast), and its cost must
 * stay linear in the subject on the classic blow-ups (counted in steps, not timed).
 */
#include "testutil.h"

#include <locale.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "rx.h"
#include "status.h"

static int setup(void **state)
{
    (void)state;
    return setlocale(LC_ALL, "C.UTF-8") ? 0 : -1;
}

static unsigned next_rand(unsigned *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return *seed >> 16;
}

static bool glibc_match(const regex_t *re, const char *s, size_t n)
{
    regmatch_t m[1] = {{.rm_so = 0, .rm_eo = (regoff_t)n}};
    return regexec(re, s, 1, m, REG_STARTEND) == 0;
}

/* clang-format off */
/* What a subject is made of: ASCII, two- three- and four-byte characters, a NUL, a byte that
 * is not UTF-8 (and one that starts a sequence it does not finish). */
static const char *const subject_parts[] = {"a", "b", "x", "y", "A", "B", "_",  " ",  "\n", "0",
                                            "9", "-", ".", "=", "é", "É", "€",  "😀", "Ü", "\t",
                                            "]", "^", "$", "\\", "(", ")", "\0", "\xff", "\xc3"};
static const size_t subject_sizes[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2,
                                       2, 3, 4, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};

/* What a regex is made of: the filter's alphabet of operators, classes and characters. */
static const char *const regex_parts[] = {
    "a",    "b",      "x",           "y",           "A",         "é",          "É",
    "€",    "😀",     "_",           " ",           "0",         "-",          "=",
    ".",    "*",      "+",           "?",           "{2}",       "{1,3}",      "{,2}",
    "{2,}", "{0}",    "|",           "(",           ")",         "()",         "^",
    "$",    "[ab]",   "[^a]",        "[a-c]",       "[^a-z]",    "[[:alpha:]]", "[[:digit:]x]",
    "[^[:space:]]",   "[[:upper:]]", "[[:punct:]]", "[é-ü]",     "[]a]",       "[a-]",
    "[^]]", "\\w",    "\\W",         "\\s",         "\\S",       "\\b",        "\\B",
    "\\<",  "\\>",    "\\.",         "\\*",         "\\(",       "[.]",        "[[=a=]]",
    "[[.-.]]",        "\\`",         "\\'",         "x+y",       "(a|aa)",     "[^[:alnum:]_]",
    "[A-Z]", "[+-z]", "[à-ÿ]", "[[:lower:]]", "[[:blank:]]", "[[:xdigit:]]"};
/* clang-format on */

/* Random parts joined; *anchor: a ^ or $ outside brackets is among them. */
static void random_text(unsigned *seed, const char *const *parts, const size_t *sizes,
                        size_t n_parts, size_t max, char *out, size_t *len, bool *anchor)
{
    size_t k = next_rand(seed) % (max + 1);
    *len = 0;
    *anchor = false;
    for (size_t i = 0; i < k; i++) {
        size_t j = next_rand(seed) % n_parts;
        size_t m = sizes ? sizes[j] : strlen(parts[j]);
        *anchor = *anchor || !strcmp(parts[j], "^") || !strcmp(parts[j], "$");
        memcpy(out + *len, parts[j], m);
        *len += m;
    }
    out[*len] = '\0';
}

static void test_agrees_with_glibc(void **state)
{
    (void)state;
    unsigned seed = 2026;
    size_t regexes = 0, cases = 0, matched = 0, refused_by_glibc = 0, skipped = 0;
    for (int round = 0; round < 6000; round++) {
        char src[256], subj[256];
        size_t n, m;
        bool anchor, unused;
        random_text(&seed, regex_parts, NULL, sizeof regex_parts / sizeof *regex_parts, 7, src, &n,
                    &anchor);
        bool icase = next_rand(&seed) % 3 == 0;
        regex_t g;
        if (regcomp(&g, src, REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0)) != 0) {
            refused_by_glibc++;
            continue;
        }
        enum rx_error code;
        const char *why = "";
        size_t at = 0;
        struct rx *re = rx_compile(src, n, icase ? RX_ICASE : 0, RX_MAX_STATES, &code, &why, &at);
        if (!re)
            fail_msg("/%s/%s: glibc accepts it, rx does not: %s at %zu", src, icase ? "i" : "", why,
                     at);
        regexes++;
        for (int k = 0; k < 40; k++) {
            random_text(&seed, subject_parts, subject_sizes,
                        sizeof subject_parts / sizeof *subject_parts, 8, subj, &m, &unused);
            /* glibc lets a ^ or $ inside a regex match next to a newline the regex itself
             * read (a\n^b matches "a\nb"); rx keeps them to the ends of the text (rx.h). */
            if (anchor && memchr(subj, '\n', m)) {
                skipped++;
                continue;
            }
            bool want = glibc_match(&g, subj, m), got = rx_match(re, subj, m, NULL);
            if (want != got) {
                char shown[64 * 4 + 1];
                size_t w = 0;
                for (size_t i = 0; i < m; i++)
                    w += (size_t)snprintf(shown + w, sizeof shown - w, "\\x%02x",
                                          (unsigned char)subj[i]);
                fail_msg("/%s/%s on \"%s\": glibc %d, rx %d", src, icase ? "i" : "", shown, want,
                         got);
            }
            cases++;
            matched += want;
        }
        regfree(&g);
        rx_free(re);
    }
    print_message("rx and glibc: %zu regexes (%zu refused by glibc), %zu cases, %zu matches, "
                  "all agree (%zu skipped: an anchor and a newline)\n",
                  regexes, refused_by_glibc, cases, matched, skipped);
    assert_true(regexes > 2000);
    assert_true(matched > cases / 10 && matched < cases - cases / 10);
}

/* The classic blow-ups of backtracking and of glibc's unanchored search, over 1 MB: the work
 * is bounded by the subject's length times the automaton's size. */
static void test_linear_on_blowups(void **state)
{
    (void)state;
    static const struct {
        const char *re;
        char fill, last;
    } cases[] = {
        {"x+y", 'x', 'y'},     {"(a|aa)*b", 'a', 'b'},   {"(x+x+)+y", 'x', 'y'},
        {".*.*.*=", 'x', '='}, {"(.*x){10}y", 'x', 'y'}, {"(a*)*b", 'a', 'b'},
    };
    size_t n = 1u << 20;
    char *s = malloc(n + 1);
    assert_non_null(s);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct rx *re =
            rx_compile(cases[i].re, strlen(cases[i].re), 0, RX_MAX_STATES, NULL, NULL, NULL);
        assert_non_null(re);
        memset(s, cases[i].fill, n);
        s[n] = cases[i].last;
        for (int with_last = 0; with_last < 2; with_last++) {
            size_t len = n + (size_t)with_last;
            struct rx_stats st;
            bool r = rx_match(re, s, len, &st);
            assert_int_equal(r, with_last);
            assert_true(st.chars <= len);
            assert_true(st.steps <= 2 * (uint64_t)(len + 1) * rx_states(re));
            print_message("%-30s over %zu bytes: %d, %zu states, %.1f steps a byte\n", cases[i].re,
                          len, r, rx_states(re), (double)st.steps / (double)len);
        }
        rx_free(re);
    }
    free(s);
}

static void test_utf8_nul_and_bad_bytes(void **state)
{
    (void)state;
    static const struct {
        const char *re;
        const char *s;
        size_t n;
        bool want;
    } cases[] = {
        {"^.$", "é", 2, true},
        {"^.$", "€", 3, true},
        {"^.$", "😀", 4, true},
        {"^..$", "é", 2, false},
        {"^.$", "\xc3", 1, false},
        {"^[^a]$", "\xff", 1, false},
        {"^\xc3$", "\xc3", 1, true},
        {"^\\W$", "\xff", 1, false},
        {"^.$", "\0", 1, false},
        {"^[^a]$", "\0", 1, true},
        {"a.c", "a\0c", 3, false},
        {"a[^b]c", "a\0c", 3, true},
        {"^a.b$",
         "a\xc3\xa9\xa9"
         "b",
         5, false},
        {"^[[:alpha:]]$", "é", 2, true},
        {"c$", "abc\0", 4, false},
        {"^.{3}$",
         "a\xe2\x82\xac"
         "b",
         5, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct rx *re =
            rx_compile(cases[i].re, strlen(cases[i].re), 0, RX_MAX_STATES, NULL, NULL, NULL);
        assert_non_null(re);
        if (rx_match(re, cases[i].s, cases[i].n, NULL) != cases[i].want)
            fail_msg("case %zu: /%s/ should %s", i, cases[i].re, cases[i].want ? "match" : "not");
        rx_free(re);
    }
    struct rx *re = rx_compile("É", 2, RX_ICASE, RX_MAX_STATES, NULL, NULL, NULL);
    assert_true(rx_match(re, "café", 5, NULL));
    rx_free(re);
}

/* Counts written with escapes, each checked against glibc: an escaped 0 is the digit (fuzz_rx
 * found {\0,3}), an escaped comma the comma; \1 is a back reference there, refused by both. */
static void test_escaped_counts(void **state)
{
    (void)state;
    static const char *const cases[][2] = {
        {"^a{\\0,3}$", "aaa"},  {"^a{\\0,3}$", "aaaa"}, {"^a{1\\0}$", "aaaaaaaaaa"},
        {"^a{1\\0}$", "a"},     {"^a{\\0}$", ""},       {"^a{,\\0}$", ""},
        {"^a{\\0\\0,1}$", "a"}, {"^a{\\00,1}$", "aa"},  {"^a{1\\,2}$", "aa"},
        {"^a{1,\\0}$", "a"},    {"^a{\\1}$", "a"},      {"a-z{\\0,3}:\\<", "a-zz:b"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *src = cases[i][0], *subj = cases[i][1];
        regex_t g;
        bool glibc_ok = regcomp(&g, src, REG_EXTENDED | REG_NOSUB) == 0;
        struct rx *re = rx_compile(src, strlen(src), 0, RX_MAX_STATES, NULL, NULL, NULL);
        if (glibc_ok != (re != NULL))
            fail_msg("/%s/: glibc %s it, rx %s", src, glibc_ok ? "accepts" : "refuses",
                     re ? "accepts" : "refuses");
        if (glibc_ok) {
            bool want = glibc_match(&g, subj, strlen(subj));
            if (want != rx_match(re, subj, strlen(subj), NULL))
                fail_msg("/%s/ on \"%s\": glibc %d, rx %d", src, subj, want, !want);
            regfree(&g);
        }
        rx_free(re);
    }
}

static void test_too_large(void **state)
{
    (void)state;
    enum rx_error code;
    const char *why = NULL;
    struct rx *re = rx_compile("((a{255}){255})", 15, 0, RX_MAX_STATES, &code, &why, NULL);
    assert_null(re);
    assert_int_equal(code, RX_TOO_LARGE);
    /* Just under the bound compiles, and a repeat of nothing builds nothing. */
    re = rx_compile("(a{99}){100}", 12, 0, RX_MAX_STATES, &code, NULL, NULL);
    assert_non_null(re);
    assert_int_equal(rx_states(re), 9901);
    rx_free(re);
    re = rx_compile("((()){255}){255}", 16, 0, RX_MAX_STATES, &code, NULL, NULL);
    assert_non_null(re);
    assert_int_equal(rx_states(re), 1);
    rx_free(re);
    /* The filter refuses it as it refuses the rest, with the column of the regex. */
    struct filter *f = NULL;
    struct error err;
    size_t col = 0;
    assert_int_equal(filter_compile_at("type:x body:/((ab{255}){255}){2}/", &f, &col, &err),
                     ST_EPARSE);
    assert_null(f);
    assert_int_equal(col, 13);
    assert_non_null(strstr(err.msg, "too large"));
    /* Stacked repeats: each doubles the automaton, 11 of them are 6,143 states (glibc's
     * regcomp took 2 s over them), 12 are refused. */
    assert_int_equal(filter_compile_at("body:/'?+++++++++++/", &f, &col, &err), ST_OK);
    filter_free(f);
    assert_int_equal(filter_compile_at("body:/'?++++++++++++/", &f, &col, &err), ST_EPARSE);
    assert_non_null(strstr(err.msg, "too large"));
    /* What glibc refused in C.UTF-8, a range past ASCII, is read by code point. */
    re = rx_compile("^[à-ÿ]+$", strlen("^[à-ÿ]+$"), 0, RX_MAX_STATES, NULL, NULL, NULL);
    assert_non_null(re);
    assert_true(rx_match(re, "éü", strlen("éü"), NULL));
    assert_false(rx_match(re, "éŸ", strlen("éŸ"), NULL));
    rx_free(re);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_agrees_with_glibc),      cmocka_unit_test(test_linear_on_blowups),
        cmocka_unit_test(test_utf8_nul_and_bad_bytes), cmocka_unit_test(test_too_large),
        cmocka_unit_test(test_escaped_counts),
    };
    return cmocka_run_group_tests_name("rx", tests, setup, NULL);
}
