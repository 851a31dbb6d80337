/*
 * test_filter_syntax: the filter language's syntax — errors with their messages and columns,
 * mistyped operators refused with the form meant, bare-word searches, the canonical
 * description read back, and random expressions that must never crash and always describe
 * themselves into something that compiles to the same description.
 */
#include "filter_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dialect.h"
#include "filter.h"
#include "store.h"

struct bad {
    const char *expr;
    const char *msg;
    size_t column;
};

/* Each expression is refused with exactly this message and column. */
static void check_bad(const struct bad *bad, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct filter *f = (struct filter *)1;
        struct error err;
        size_t col = 0;
        error_clear(&err);
        enum status st = filter_compile_at(bad[i].expr, &f, &col, &err);
        if (st != ST_EPARSE || strcmp(err.msg, bad[i].msg) != 0 || col != bad[i].column)
            print_error("%s:\n  got  [%s] column %zu\n  want [%s] column %zu\n", bad[i].expr,
                        err.msg, col, bad[i].msg, bad[i].column);
        assert_int_equal(st, ST_EPARSE);
        assert_null(f);
        assert_string_equal(err.msg, bad[i].msg);
        assert_int_equal(col, bad[i].column);
    }
}

/* An unknown dialect is refused with every dialect's name (the table's, so a new dialect is
 * named without a change here). */
static void check_unknown_dialect(void)
{
    struct filter *f = NULL;
    struct error err;
    size_t col = 0;
    error_clear(&err);
    assert_int_equal(filter_compile_at("dialect=rabbit", &f, &col, &err), ST_EPARSE);
    assert_null(f);
    assert_int_equal(col, 9);
    char want[600];
    snprintf(want, sizeof want, "unknown dialect \"rabbit\" at column 9 (%s)", dialect_names());
    assert_string_equal(err.msg, want);
    for (size_t i = 0; i < dialect_count(); i++)
        assert_non_null(strstr(err.msg, dialect_at(i)->name));
    /* and every name is accepted */
    for (size_t i = 0; i < dialect_count(); i++) {
        char expr[64];
        snprintf(expr, sizeof expr, "dialect=%s", dialect_at(i)->name);
        assert_int_equal(filter_compile_at(expr, &f, &col, &err), ST_OK);
        filter_free(f);
    }
}

static void test_errors(void **state)
{
    static const struct bad bad[] = {
        {"tpye:order.*", "unknown field \"tpye\" at column 1 (did you mean type:order.*?)", 1},
        {"attempt>x", "expected a number after attempt> at column 9", 9},
        {"type:a qeueu=x", "unknown field \"qeueu\" at column 8 (did you mean queue=x?)", 8},
        {"Net::ReadTimeout",
         "unknown field \"Net\" at column 1 (to search for the text itself, put it in "
         "\"quotes\")",
         1},
        {"age>5y", "expected a duration after age> at column 5 (30s, 5m, 1h, 2d, 1w)", 5},
        {"first_seen>yesterday",
         "expected a time after first_seen> at column 12 (2026-01-02T03:00:00Z, 2026-01-02, or "
         "a time ago like 1h)",
         12},
        {"size>big", "expected a size after size> at column 6 (bytes, or with a unit: 10k, 2MB)",
         6},
        {"(type:a OR b", "this ( is never closed at column 1", 1},
        {"type:a)", "unexpected ) with no ( before it at column 7", 7},
        {"type:a OR", "expected a term after OR at column 10", 10},
        {"OR type:a", "expected a term before OR at column 1", 1},
        {"type:a AND", "expected a term after AND at column 11", 11},
        {"NOT", "expected a term after NOT at column 4", 4},
        {"()", "empty parentheses at column 1", 1},
        {"error:\"unclosed", "unterminated quote at column 7", 7},
        {"error:/unclosed", "unterminated regex after error: (close it with /) at column 7", 7},
        {"error:/(a)\\1/", "back-references are not supported in a regex at column 11", 11},
        {"error:/x/g", "unknown regex flag g at column 10 (only i, ignore case, is known)", 10},
        {"error:/x{1000}/", "a regex repeat count over 255 at column 9", 9},
        {"type:x or error:y",
         "\"or\" is not a keyword at column 8 (the keyword is OR, in capitals; to search for the "
         "word, put it in \"quotes\")",
         8},
        {"Not type:x",
         "\"Not\" is not a keyword at column 1 (the keyword is NOT, in capitals; to "
         "search for the word, put it in \"quotes\")",
         1},
        {"type>3",
         "type is text at column 5 (> >= < <= work on attempt, age, size, first_seen, failed_at "
         "and "
         "header.NAME)",
         5},
        {"attempt:~3", "attempt is a number at column 8 (use = != > >= < <=)", 8},
        {"header.n>many", "expected a number after header.n> at column 10", 10},
        {"header:x", "expected a header name at column 1 (header.NAME, with the header's name)", 1},
        {"headers.tenant=x",
         "unknown field \"headers.tenant\" at column 1 (did you mean "
         "header.NAME?)",
         1},
        {"error:", "expected a value after error: at column 7 (use \"\" for an empty value)", 7},
        {"type:\"a\"b", "expected a space after the closing quote at column 9", 9},
        {":x", "expected a field name before : at column 1", 1},
        {"é tpye:x", "unknown field \"tpye\" at column 3 (did you mean type:x?)", 3},
        {"tpye:/x/", "unknown field \"tpye\" at column 1 (did you mean type:/x/?)", 1},
        {"tpye:/a b/", "unknown field \"tpye\" at column 1 (did you mean type?)", 1},
    };
    check_bad(bad, sizeof bad / sizeof *bad);
    check_unknown_dialect();
    /* rx's own words follow "invalid regex: " (src/analysis/rx.c). */
    struct filter *rf = NULL;
    struct error rerr;
    size_t rcol = 0;
    assert_int_equal(filter_compile_at("type:a error:/[/", &rf, &rcol, &rerr), ST_EPARSE);
    assert_int_equal(rcol, 14);
    assert_true(strncmp(rerr.msg, "invalid regex: ", 15) == 0);
    assert_non_null(strstr(rerr.msg, " at column 14"));
    /* Nesting is bounded. */
    char deep[400];
    memset(deep, '(', 200);
    strcpy(deep + 200, "a");
    struct filter *f = NULL;
    struct error err;
    assert_int_equal(filter_compile(deep, &f, &err), ST_EPARSE);
    assert_non_null(strstr(err.msg, "nested more than"));
}

/* A term that looks like a field with a mistyped operator is refused with the form meant:
 * read as a bare-word search, `-error~Declined` would select everything (issue 16.3). */
static void test_typos(void **state)
{
#define SEARCH_HINT "to search for the text itself, put it in \"quotes\""
#define LOOKS " looks like a field with a mistyped operator at column "
    static const struct bad bad[] = {
        {"error~Declined",
         "\"error~Declined\"" LOOKS "1 (did you mean error:~Declined? " SEARCH_HINT ")", 1},
        {"-error~Declined",
         "\"error~Declined\"" LOOKS "2 (did you mean error:~Declined? " SEARCH_HINT ")", 2},
        {"type:x (err~timeout)",
         "\"err~timeout\"" LOOKS "9 (did you mean error:~timeout? " SEARCH_HINT ")", 9},
        {"type;order.*", "\"type;order.*\"" LOOKS "1 (did you mean type:order.*? " SEARCH_HINT ")",
         1},
        {"error;~x", "\"error;~x\"" LOOKS "1 (did you mean error:~x? " SEARCH_HINT ")", 1},
        {"Type!order.placed",
         "\"Type!order.placed\"" LOOKS "1 (did you mean type!=order.placed? " SEARCH_HINT ")", 1},
        {"header.tenant~acme",
         "\"header.tenant~acme\"" LOOKS "1 (did you mean header.tenant:~acme? " SEARCH_HINT ")", 1},
        {"header.x-acemq-attempt;3",
         "\"header.x-acemq-attempt;3\"" LOOKS
         "1 (did you mean header.x-acemq-attempt:3? " SEARCH_HINT ")",
         1},
        {"eror~Declined",
         "\"eror~Declined\"" LOOKS "1 (did you mean error:~Declined? " SEARCH_HINT ")", 1},
        {"error~\"timed out\"",
         "\"error~\"timed out\"\"" LOOKS "1 (did you mean error:~\"timed out\"? " SEARCH_HINT ")",
         1},
        {"attempt.3", "\"attempt.3\"" LOOKS "1 (did you mean attempt>3? " SEARCH_HINT ")", 1},
        {"size,10k", "\"size,10k\"" LOOKS "1 (did you mean size<10k? " SEARCH_HINT ")", 1},
        {"age~1h",
         "\"age~1h\"" LOOKS "1 (a field takes one of : :~ :/ = != > >= < <=; " SEARCH_HINT ")", 1},
        {"attempt=>3", "mistyped operator \"=>\" at column 8 (did you mean attempt>=3?)", 8},
        {"attempt=<3", "mistyped operator \"=<\" at column 8 (did you mean attempt<=3?)", 8},
        {"age>>1h", "mistyped operator \">>\" at column 4 (did you mean age>1h?)", 4},
        {"size<<1k", "mistyped operator \"<<\" at column 5 (did you mean size<1k?)", 5},
        {"type=!x", "mistyped operator \"=!\" at column 5 (did you mean type!=x?)", 5},
        {"error=~x", "mistyped operator \"=~\" at column 6 (did you mean error:~x?)", 6},
        {"header.n=>3", "mistyped operator \"=>\" at column 9 (did you mean header.n>=3?)", 9},
        {"attempt<>3", "mistyped operator \"<>\" at column 8 (did you mean attempt!=3?)", 8},
        {"typ:order", "unknown field \"typ\" at column 1 (did you mean type:order?)", 1},
        {"qeue:*.dlq", "unknown field \"qeue\" at column 1 (did you mean queue:*.dlq?)", 1},
        {"eror:~timeout", "unknown field \"eror\" at column 1 (did you mean error:~timeout?)", 1},
    };
    check_bad(bad, sizeof bad / sizeof *bad);
#undef LOOKS
#undef SEARCH_HINT
    /* What was meant selects what it should; genuine bare words and quoted look-alikes are
     * still searches, and values that start like an operator are still values. */
    check("-error:~timeout", "2 3 5");
    check("\"error~timeout\"", "");
    check("-\"error~timeout\"", "0 1 2 3 4 5"); /* what the typo selected */
    check("errors", "");
    check("type.order", "");
    check("ord-77", "2");
    check("type=<none>", "");
    check("type=\"=~order.placed\"", ""); /* quoted: the value, exactly */
    /* filter_searches lists the bare words, and only them. */
    static const struct {
        const char *expr, *searches;
        size_t n;
    } s[] = {
        {"type:x error:~y", "", 0},
        {"timeout", "timeout", 1},
        {"-(A-1 OR type:x) \"gateway timed out\" fp=ab", "A-1 \"gateway timed out\"", 2},
        {"\"error~x\"", "\"error~x\"", 1},
        {"", "", 0},
    };
    for (size_t i = 0; i < sizeof s / sizeof *s; i++) {
        struct filter *f = NULL;
        struct error err;
        assert_int_equal(filter_compile(s[i].expr, &f, &err), ST_OK);
        struct strbuf sb;
        sb_init(&sb);
        assert_int_equal(filter_searches(f, &sb), s[i].n);
        assert_string_equal(sb.buf ? sb.buf : "", s[i].searches);
        assert_int_equal(filter_searches(f, NULL), s[i].n);
        sb_free(&sb);
        filter_free(f);
    }
    assert_int_equal(filter_searches(NULL, NULL), 0);
}
static void test_describe(void **state)
{
    assert_describe("type:order.*  error:~timeout attempt>3 age>1h header.tenant=acme",
                    "type:order.* error:~timeout attempt>3 age>1h header.tenant=acme");
    assert_describe("a OR b c", "a OR b c");
    assert_describe("(a OR b) c", "(a OR b) c");
    assert_describe("a AND (b AND c)", "a b c");
    assert_describe("((a OR b) OR c)", "a OR b OR c");
    assert_describe("NOT (a b)", "-(a b)");
    assert_describe("NOT a", "-a");
    assert_describe("Type:x corr:y cause:z attempts:3 err:~e first-seen>1h fingerprint:ab*",
                    "type:x correlation:y causation:z attempt=3 error:~e first_seen>1h fp:ab*");
    assert_describe("\"gateway timed out\"", "\"gateway timed out\"");
    assert_describe("\"a:b\" \"OR\" \"-x\"", "\"a:b\" \"OR\" \"-x\"");
    assert_describe("type:\"order \\\"x\\\"*\"", "type:\"order \\\"x\\\"*\"");
    assert_describe("type:order.\\*", "type:order.\\*");
    assert_describe("type=a\\\\b", "type=\"a\\\\b\"");
    assert_describe("header.\"my header\"=x", "header.\"my header\"=x");
    assert_describe("error:/a\\/b/i", "error:/a\\/b/i");
    assert_describe("body:hello", "body:hello");
    assert_describe("error:\"\"", "error:\"\"");
    assert_describe("type==x", "type=x");
    assert_describe("a\\*b", "a\\*b"); /* an escaped star stays escaped */
    assert_describe("header.a\\:b=1", "header.\"a:b\"=1");
    assert_describe("header.tenant=acme type:x", "header.tenant=acme type:x"); /* as written */
    assert_describe("", "");
    assert_describe("\"error~x\" \"type;x\" \"attempt.3\"", "\"error~x\" \"type;x\" \"attempt.3\"");
    assert_describe("\"type.x\" \"errors~\"", "type.x \"errors~\"");
}

/* Random strings over the language's own characters must never crash, and whatever compiles
 * describes itself into something that compiles to the same description. */
static void test_random_robustness(void **state)
{
    static const char alphabet[] = "ab:=!<>~/\"\\()*?- \tOR NOT AND type error attempt age "
                                   "header.x body 3 1h 2026-01-02 .i{}[]|^$é\x01\xff";
    static const char *const pieces[] = {"type",    ":",      "=",          "!=",         ">",
                                         ">=",      "<",      "<=",         "~",          "/",
                                         "\"",      "(",      ")",          "OR",         "NOT",
                                         "AND",     "-",      " ",          "\\",         "header.",
                                         "attempt", "age",    "1h",         "3",          "*",
                                         "?",       "body",   "first_seen", "2026-01-02", "error",
                                         "fp",      "reason", "/i",         "{300}",      "[",
                                         "é",       "\xc3",   "size",       "5k"};
    unsigned seed = 12345;
    struct strbuf e;
    sb_init(&e);
    int compiled = 0;
    for (int round = 0; round < 20000; round++) {
        sb_reset(&e);
        seed = seed * 1103515245u + 12345u;
        size_t len = (seed >> 16) % 24;
        for (size_t k = 0; k < len; k++) {
            seed = seed * 1103515245u + 12345u;
            if ((seed >> 16) & 1)
                sb_adds(&e, pieces[(seed >> 17) % (sizeof pieces / sizeof *pieces)]);
            else
                sb_addc(&e, alphabet[(seed >> 17) % (sizeof alphabet - 1)]);
        }
        struct filter *f = NULL;
        struct error err;
        size_t col = 0;
        if (filter_compile_at(e.buf ? e.buf : "", &f, &col, &err) != ST_OK) {
            assert_null(f);
            assert_true(col >= 1 && col <= e.len + 1);
            continue;
        }
        compiled++;
        struct strbuf d1, d2;
        sb_init(&d1);
        sb_init(&d2);
        filter_describe(f, &d1);
        for (size_t i = 0; i < store_count(store_); i++)
            filter_match_entry(f, store_, i, T0);
        struct filter *g = NULL;
        if (filter_compile(d1.buf ? d1.buf : "", &g, &err) != ST_OK)
            fail_msg("[%s] described as [%s], which does not compile: %s", e.buf, d1.buf, err.msg);
        filter_describe(g, &d2);
        if (strcmp(d1.buf ? d1.buf : "", d2.buf ? d2.buf : "") != 0)
            fail_msg("[%s] described as [%s] then [%s]", e.buf, d1.buf, d2.buf);
        for (size_t i = 0; i < store_count(store_); i++)
            if (filter_match_entry(f, store_, i, T0) != filter_match_entry(g, store_, i, T0))
                fail_msg("[%s] and its description [%s] differ on entry %zu", e.buf, d1.buf, i);
        filter_free(f);
        filter_free(g);
        sb_free(&d1);
        sb_free(&d2);
    }
    sb_free(&e);
    print_message("random expressions: %d of 20000 compiled\n", compiled);
    assert_true(compiled > 1000);
    /* Hostile texts to match against: NULs, invalid UTF-8, long values. */
    struct filter *f = NULL;
    struct error err;
    assert_int_equal(filter_compile("body:/x+y/ body:*?* header.n:~a", &f, &err), ST_OK);
    struct message m;
    message_init(&m);
    char big[70000];
    memset(big, 'x', sizeof big);
    big[100] = '\0';
    big[101] = '\xff';
    m.body = bytes_dup(big, sizeof big);
    htable_add(m.headers, "n",
               hval_bytes("\0\xfe"
                          "a",
                          3));
    filter_match_message(f, &m, NULL, T0);
    message_free(&m);
    filter_free(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_typos),
        cmocka_unit_test(test_describe),
        cmocka_unit_test(test_random_robustness),
    };
    return cmocka_run_group_tests_name("filter_syntax", tests, filter_setup, filter_teardown);
}
