/*
 * test_filter: the filter language — every field and operator against hand-made dead letters
 * of the three dialects, precedence, negation, quotes, the issue's example, bare-word search,
 * errors with their columns, typed headers, regexes, ages at a fixed now, the canonical
 * description read back, random input, and a timed scan of a million entries. Every match is
 * checked twice: on the store entry and on the message itself, which must agree.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "filter.h"
#include "groups.h"
#include "snapshot.h"
#include "store.h"

#define T0 1767323045678LL /* 2026-01-02T03:04:05.678Z: "now" in these tests */
#define MIN 60000LL
#define HOUR 3600000LL
#define DAY 86400000LL

/* The records, as a person would write them in a snapshot (docs/snapshot-format.md). %lld
 * in a record is a first-seen time relative to T0, filled in by load(). */
static const struct {
    const char *line;
    long long first_seen_ago_ms;
} records[] = {
    /* 0: AceMQ, gave up on an order after 5 attempts, two hours old */
    {"{\"queue\":\"orders.dlq\",\"fetched_at_ms\":1767323045678,"
     "\"properties\":{\"message_id\":\"a0000000-0000-4000-8000-00000000000a\"},"
     "\"headers\":{\"x-acemq-id\":\"a0000000-0000-4000-8000-00000000000a\","
     "\"x-acemq-type\":\"order.placed\",\"x-acemq-attempt\":{\"type\":\"int32\",\"value\":5},"
     "\"x-acemq-first-seen\":%lld,\"x-acemq-correlation\":\"c0ffee00-0000-4000-8000-000000000001\","
     "\"x-acemq-origin\":\"orders@pod-7\","
     "\"x-acemq-error\":\"exhausted 5 attempts: TimeoutException: gateway timed out after 30012 "
     "ms\","
     "\"tenant\":\"acme\",\"n\":{\"type\":\"int32\",\"value\":5},\"price\":9.5,\"vip\":true},"
     "\"body\":\"{\\\"orderId\\\":\\\"A-1\\\",\\\"sku\\\":4411}\"}",
     2 * HOUR},
    /* 1: AceMQ payment, 3 attempts, half an hour old; n is a string, tenant globex */
    {"{\"queue\":\"payments.dlq\",\"headers\":{\"x-acemq-id\":\"b0000000-0000-4000-8000-"
     "00000000000b\","
     "\"x-acemq-type\":\"payment.charge\",\"x-acemq-attempt\":3,\"x-acemq-first-seen\":%lld,"
     "\"x-acemq-correlation\":\"c0ffee00-0000-4000-8000-000000000001\","
     "\"x-acemq-causation\":\"a0000000-0000-4000-8000-00000000000a\","
     "\"x-acemq-origin\":\"payments@pod-2\","
     "\"x-acemq-error\":\"exhausted 3 attempts: TimeoutException: gateway timed out after 29998 "
     "ms\","
     "\"tenant\":\"globex\",\"n\":\"12\",\"Region\":\"eu\"},"
     "\"body\":\"{\\\"orderId\\\":\\\"A-1\\\",\\\"amountCents\\\":4250}\"}",
     30 * MIN},
    /* 2: AceMQ, a bad carrier, three days old, tenant with a space */
    {"{\"queue\":\"orders.dlq\",\"headers\":{\"x-acemq-id\":\"ORD-77\","
     "\"x-acemq-type\":\"order.cancelled\",\"x-acemq-attempt\":1,\"x-acemq-first-seen\":%lld,"
     "\"x-acemq-error\":\"retrying cannot help: ArgumentError: unknown carrier \\\"dhl-xp\\\"\","
     "\"tenant\":\"Acme Corp\",\"my header\":\"x\",\"x-death\":[{\"count\":1,\"queue\":\"orders\","
     "\"reason\":\"rejected\"}]},"
     "\"body\":\"{\\\"orderId\\\":\\\"A-2\\\",\\\"carrier\\\":\\\"dhl-xp\\\"}\"}",
     3 * DAY},
    /* 3: plain AMQP the broker rejected from orders, ten minutes old (timestamp property) */
    {"{\"queue\":\"orders.dlq\",\"routing_key\":\"orders\",\"properties\":{\"message_id\":\"m-3\","
     "\"type\":\"order.placed\",\"app_id\":\"legacy-web\",\"timestamp\":%lld},"
     "\"headers\":{\"x-death\":[{\"count\":4,\"queue\":\"orders\",\"reason\":\"rejected\","
     "\"exchange\":\"\",\"routing-keys\":[\"orders\"],"
     "\"time\":{\"type\":\"timestamp\",\"value\":1767322000}}],\"n\":{\"type\":\"uint64\","
     "\"value\":3}},"
     "\"body\":\"hello plain world\"}",
     10 * MIN},
    /* 4: BabelQueue, a failed invoice job */
    {"{\"queue\":\"invoices.dlq\",\"properties\":{\"app_id\":\"babelqueue\"},"
     "\"body\":\"{\\\"job\\\":\\\"invoice.send\\\",\\\"trace_id\\\":\\\"trace-1\\\","
     "\\\"meta\\\":{\\\"id\\\":\\\"inv-1\\\",\\\"schema_version\\\":1,\\\"created_at\\\":%lld,"
     "\\\"lang\\\":\\\"php\\\",\\\"queue\\\":\\\"invoices\\\"},\\\"data\\\":{},\\\"attempts\\\":2,"
     "\\\"dead_letter\\\":{\\\"reason\\\":\\\"failed\\\",\\\"error\\\":\\\"Payment gateway "
     "timeout\\\","
     "\\\"exception\\\":\\\"App\\\\\\\\Exceptions\\\\\\\\GatewayTimeout\\\",\\\"attempts\\\":2}}"
     "\"}",
     5 * HOUR},
    /* 5: BabelQueue that is not JSON: rejected as malformed_json; the broker expired it too */
    {"{\"queue\":\"invoices.dlq\",\"properties\":{\"app_id\":\"babelqueue\",\"message_id\":\"inv-"
     "2\","
     "\"timestamp\":%lld},\"headers\":{\"x-death\":[{\"count\":1,\"queue\":\"invoices\","
     "\"reason\":\"expired\"}]},\"body\":\"not json at all\"}",
     20 * DAY},
};
#define N_RECORDS (sizeof records / sizeof *records)

static struct store *load(void)
{
    struct store *s = NULL;
    struct error err;
    assert_int_equal(store_new(0, NULL, &s, &err), ST_OK);
    for (size_t i = 0; i < N_RECORDS; i++) {
        char line[4096];
        long long fs = T0 - records[i].first_seen_ago_ms;
        if (strstr(records[i].line, "\"timestamp\":%lld"))
            fs /= 1000; /* the AMQP timestamp property is in seconds */
        const char *at = strstr(records[i].line, "%lld");
        assert_non_null(at);
        snprintf(line, sizeof line, "%.*s%lld%s", (int)(at - records[i].line), records[i].line, fs,
                 at + 4);
        struct message m;
        if (snapshot_parse_line(line, strlen(line), &m, &err) != ST_OK)
            fail_msg("record %zu: %s", i, err.msg);
        assert_int_equal(store_append(s, &m, T0, &err), ST_OK);
        message_free(&m);
    }
    return s;
}

static struct store *store_;

static int setup(void **state)
{
    setenv("DLQX_NOW", "1767323045678", 1);
    store_ = load();
    return 0;
}

static int teardown(void **state)
{
    store_free(store_);
    return 0;
}

/* The indices that match, as "0 2 5", checked against the messages too. */
static char *matches(const char *expr)
{
    struct filter *f = NULL;
    struct error err;
    if (filter_compile(expr, &f, &err) != ST_OK)
        fail_msg("%s: %s", expr, err.msg);
    struct strbuf sb;
    sb_init(&sb);
    int64_t now = clock_now_ms();
    for (size_t i = 0; i < store_count(store_); i++) {
        bool on_entry = filter_match_entry(f, store_, i, now);
        struct message m;
        assert_int_equal(store_get(store_, i, &m, &err), ST_OK);
        bool on_msg = filter_match_message(f, &m, NULL, now);
        struct decoded d;
        decode_message(&m, now, &d);
        bool on_decoded = filter_match_message(f, &m, &d, now);
        decoded_free(&d);
        message_free(&m);
        if (on_entry != on_msg || on_entry != on_decoded)
            fail_msg("%s: entry %zu matches %d on the entry but %d/%d on the message", expr, i,
                     on_entry, on_msg, on_decoded);
        if (on_entry)
            sb_addf(&sb, "%s%zu", sb.len ? " " : "", i);
    }
    filter_free(f);
    if (!sb.buf)
        sb_adds(&sb, "");
    return sb_detach(&sb, NULL);
}

static void check(const char *expr, const char *want)
{
    char *got = matches(expr);
    if (strcmp(got, want) != 0)
        print_error("filter %s: got [%s], want [%s]\n", expr, got, want);
    assert_string_equal(got, want);
    free(got);
}

struct case_ {
    const char *expr, *want;
};

static void check_all(const struct case_ *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        check(c[i].expr, c[i].want);
}

static void test_text_fields(void **state)
{
    static const struct case_ cases[] = {
        {"id:a0000000-*", "0"},
        {"id:A0000000-*", ""}, /* ids are case-sensitive */
        {"id=ORD-77", "2"},
        {"id:ord-*", ""},
        {"id:*-77", "2"},
        {"id=inv-1", "4"},
        {"type:order.*", "0 2 3"},
        {"type:ORDER.*", "0 2 3"}, /* types are not */
        {"type=order.placed", "0 3"},
        {"type=Order.Placed", ""},
        {"type!=order.placed", "1 2 4 5"},
        {"type:order.??????", "0 3"},
        {"type:~CANCEL", "2"},
        {"correlation=c0ffee00-0000-4000-8000-000000000001", "0 1"},
        {"corr:c0ffee00*", "0 1"},
        {"causation:a0000000*", "1"},
        {"cause=\"\"", "0 2 3 4 5"},
        {"queue=orders.dlq", "0 2 3"},
        {"queue:*.DLQ", "0 1 2 3 4 5"},
        {"queue:invoices*", "4 5"},
        {"error:~timeout", "0 1 4"},
        {"error:*TimeoutException*", "0 1"},
        {"err:~argumenterror", "2"},
        {"error=\"\"", ""},
        {"dialect=acemq", "0 1 2"},
        {"exception=TimeoutException", "0 1"},
        {"error_type:*argument*", "2"},
        {"exception:*\\GatewayTimeout", "4"},
        {"exception=\"\"", "3 5"},
        {"dialect:AMQP", "3"},
        {"dialect=babelqueue", "4 5"},
        {"dialect:*queue", "4 5"},
        {"origin:orders@*", "0"},
        {"origin=php", "4"},
        {"origin:legacy*", "3"},
        {"reason=rejected", "3"},
        {"reason=malformed_json", "5"},
        {"reason=expired", "5"},
        {"reason!=expired", "0 1 2 3 4"},
        {"reason=\"\"", "0 1 2 4"},
        {"body:~a-1", "0 1"},
        {"body:*carrier*", "2"},
        {"body:plain", "3"}, /* body globs match anywhere */
        {"body:plain*world", "3"},
        {"body=\"not json at all\"", "5"},
        {"body:~\"NOT JSON\"", "5"},
    };
    check_all(cases, sizeof cases / sizeof *cases);
}

static void test_numbers_ages_times(void **state)
{
    static const struct case_ cases[] = {
        {"attempt>3", "0 3"},
        {"attempt>=3", "0 1 3"},
        {"attempt<3", "2 4 5"},
        {"attempt<=1", "2 5"},
        {"attempt=4", "3"}, /* plain AMQP: the broker's death count */
        {"attempt:5", "0"},
        {"attempts!=5", "1 2 3 4 5"},
        {"age>1h", "0 2 4 5"},
        {"age<1h", "1 3"},
        {"age>=2h", "0 2 4 5"},
        {"age>1d", "2 5"},
        {"age>2w", "5"},
        {"age<15m", "3"},
        {"age>1h30m", "0 2 4 5"},
        {"age>90", "0 1 2 3 4 5"}, /* a bare number is seconds */
        {"first_seen>1h", "1 3"},  /* within the last hour */
        {"first_seen<1d", "2 5"},  /* first seen before a day ago */
        {"first-seen>=2026-01-02T00:00:00Z", "0 1 3"},
        {"first_seen<2026-01-02", "2 4 5"},
        {"first_seen>2026-01-02T02:50", "3"},
        /* Only message 3 has a failure time (its x-death's, 02:46:40): unknown never matches. */
        {"failed_at>2026-01-02T02:00:00Z", "3"},
        {"failed_at<2026-01-02T02:46:41Z", "3"},
        {"failed_at<2026-01-02T02:46:40Z", ""},
        {"failed-at>10d", "3"},
        {"first_seen>2026-01-02T03:00:00+01:00", "1 3"},
        {"size>20", "0 1 2 4"},
        {"size<20", "3 5"},
        {"size>=1k", ""},
        {"size<1KB", "0 1 2 3 4 5"},
        {"size=17", "3"},
    };
    check_all(cases, sizeof cases / sizeof *cases);
}

static void test_headers(void **state)
{
    static const struct case_ cases[] = {
        {"header.tenant=acme", "0"},
        {"header.tenant:acme*", "0 2"}, /* globs ignore case */
        {"header.tenant=\"Acme Corp\"", "2"},
        {"header.tenant:~corp", "2"},
        {"header.tenant!=acme", "1 2 3 4 5"}, /* absent is not acme */
        {"header.tenant:*", "0 1 2"},         /* present */
        {"-header.tenant:*", "3 4 5"},
        /* Numbers compare as numbers whatever their kind: int32 5, the string "12", uint64 3. */
        {"header.n>3", "0 1"},
        {"header.n>=3", "0 1 3"},
        {"header.n<10", "0 3"},
        {"header.n=12", "1"},
        {"header.n=5.0", "0"},
        {"header.n:1*", "1"},
        {"header.price>9", "0"},
        {"header.price<9.75", "0"},
        {"header.price=9.5", "0"},
        {"header.vip=true", "0"},
        {"header.tenant>3", ""},   /* not a number: ordering never matches */
        {"header.region=eu", "1"}, /* names: exact first, then any case */
        {"header.\"my header\"=x", "2"},
        {"header.x-acemq-attempt>=3", "0 1"},
        {"header.x-death:~rejected", "2 3"}, /* tables and arrays read as their JSON */
        {"header.x-death:*expired*", "5"},
        {"header.nope:*", ""},
        {"header.nope!=x", "0 1 2 3 4 5"},
    };
    check_all(cases, sizeof cases / sizeof *cases);
}

static void test_regex(void **state)
{
    static const struct case_ cases[] = {
        {"error:/timed out after [0-9]+ ms$/", "0 1"},
        {"error:/TIMED/", ""},
        {"error:/TIMED/i", "0 1"},
        {"type:/^order\\.(placed|cancelled)$/", "0 2 3"},
        {"id:/^[a-f0-9]{8}-/", "0 1"},
        {"queue:/a\\/b|invoices/", "4 5"}, /* \/ is a slash inside the regex */
        {"body:/\"sku\":[0-9]{4}/", "0"},
        {"header.tenant:/^acme$/i", "0"},
        {"-error:/timeout/i", "2 3 5"},
    };
    check_all(cases, sizeof cases / sizeof *cases);
}

static void test_precedence_and_negation(void **state)
{
    static const struct case_ cases[] = {
        /* a OR b c is a OR (b AND c) */
        {"type=payment.charge OR type:order.* attempt>3", "0 1 3"},
        {"(type=payment.charge OR type:order.*) attempt>3", "0 3"},
        {"type:order.* attempt>3 OR dialect=babelqueue", "0 3 4 5"},
        {"type:order.* AND attempt>3", "0 3"},
        {"-type:order.*", "1 4 5"},
        {"NOT type:order.*", "1 4 5"},
        {"NOT (type:order.* OR dialect=babelqueue)", "1"},
        {"-(queue=orders.dlq) -dialect=babelqueue", "1"},
        {"--type=order.placed", "0 3"},
        {"NOT NOT NOT type=order.placed", "1 2 4 5"},
        {"a0000000 OR ORD-77 OR inv-", "0 2 4 5"},
        {"((((type=order.placed))))", "0 3"},
        {"", "0 1 2 3 4 5"},
        {"   ", "0 1 2 3 4 5"},
    };
    check_all(cases, sizeof cases / sizeof *cases);
}

static void test_issue_example_and_bare_words(void **state)
{
    /* The issue's example, then the same with each term failing in turn. */
    check("type:order.* error:~timeout attempt>3 age>1h header.tenant=acme", "0");
    check("type:order.* error:~timeout attempt>5 age>1h header.tenant=acme", "");
    check("type:order.* error:~timeout attempt>3 age>3h header.tenant=acme", "");
    check("type:order.* error:~timeout attempt>3 age>1h header.tenant=globex", "");
    /* A bare word searches id, type, error and queue, ignoring case. */
    check("timeout", "0 1 4");
    check("TimeoutException", "0 1");
    check("payments", "1");
    check("invoice", "4 5");
    check("ord-77", "2");
    check("\"gateway timed out\"", "0 1");
    check("order.* timeout", "0");
    check("gateway*30012", "0");
    check("orders.dlq -placed", "2");
    check("\"type:order\"", "");              /* quoted: searched for, not a field */
    check("\"or\" type=order.placed", "0 3"); /* a quoted keyword is the word */
    check("Net\\:\\:ReadTimeout", "");
    check("sku", ""); /* bodies are not searched by bare words */
}

static void test_quotes_and_escapes(void **state)
{
    check("error:~\"unknown carrier \\\"dhl-xp\\\"\"", "2");
    check("error:~unknown\\ carrier", "2");
    check("body:~\"\\\"carrier\\\"\"", "2");
    check("type:\"order.*\"", "0 2 3"); /* wildcards work inside quotes */
    check("type:\"order.\\*\"", "");    /* and \* is a star */
    check("type=\"order.placed\"", "0 3");
    check("header.\"tenant\"=acme", "0");
    check("error:~(dhl-xp)", "");
    check("(error:~carrier)", "2"); /* a ) closes the group, not the value */
}

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
    /* regcomp's own words follow "invalid regex: " (they depend on the C library). */
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

static void assert_describe(const char *expr, const char *want)
{
    struct filter *f = NULL;
    struct error err;
    if (filter_compile(expr, &f, &err) != ST_OK)
        fail_msg("%s: %s", expr, err.msg);
    struct strbuf sb;
    sb_init(&sb);
    filter_describe(f, &sb);
    const char *got = sb.buf ? sb.buf : "";
    if (strcmp(got, want) != 0)
        print_error("describe %s: got [%s] want [%s]\n", expr, got, want);
    assert_string_equal(got, want);
    filter_free(f);
    /* What it describes compiles to a filter that describes itself the same way. */
    assert_int_equal(filter_compile(want, &f, &err), ST_OK);
    struct strbuf again;
    sb_init(&again);
    filter_describe(f, &again);
    assert_string_equal(again.buf ? again.buf : "", want);
    filter_free(f);
    sb_free(&sb);
    sb_free(&again);
}

/* group=g:… selects the explorer's group, fingerprint and type (issue 16.4): where fp= alone
 * spans the types. */
static void test_group_field(void **state)
{
    char buf[STORE_TEXT_MAX], tbuf[STORE_TEXT_MAX];
    const struct store_entry *e = store_entry_at(store_, 0);
    size_t en = store_text(store_, e->error, buf), tn = store_text(store_, e->type, tbuf);
    uint64_t fp = error_fingerprint(buf, en, NULL);
    char key[GROUP_KEY_TEXT], expr[128];
    group_key_text(group_key(fp, tbuf, tn), key);
    snprintf(expr, sizeof expr, "fp=%016llx", (unsigned long long)fp);
    check(expr, "0 1"); /* the same error in two types */
    snprintf(expr, sizeof expr, "group=%s", key);
    check(expr, "0");
    snprintf(expr, sizeof expr, "group:%s", key);
    check(expr, "0");
    snprintf(expr, sizeof expr, "-group=%s", key);
    check(expr, "1 2 3 4 5");
    snprintf(expr, sizeof expr, "group!=%s", key);
    check(expr, "1 2 3 4 5");
    snprintf(expr, sizeof expr, "group:%s", key);
    char want[64];
    snprintf(want, sizeof want, "group=%s", key);
    assert_describe(expr, want);
    static const struct {
        const char *expr, *says;
    } bad[] = {
        {"group=0123456789abcdef", "0123456789abcdef is a fingerprint alone"},
        {"group=g:12", "a group key is g: and 16 hex digits"},
        {"group:~x", "group takes a group key"},
        {"group:/x/", "group takes a group key"},
        {"group>1", "group takes a group key"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct filter *f = NULL;
        struct error err;
        assert_int_equal(filter_compile(bad[i].expr, &f, &err), ST_EPARSE);
        if (!strstr(err.msg, bad[i].says))
            fail_msg("%s: %s", bad[i].expr, err.msg);
    }
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

static double elapsed_ms(struct timespec a, struct timespec b)
{
    return (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
}

/* A million entries scanned with entry-only filters: the counts are checked against the ones
 * worked out from how the entries were made; the times are printed, not asserted. */
static void test_million(void **state)
{
    const char *n_env = getenv("DLQX_TEST_MILLION");
#ifdef __SANITIZE_ADDRESS__
    size_t n = 100000; /* building the store is slow under the sanitizers */
#else
    size_t n = 1000000;
#endif
    if (n_env && *n_env)
        n = (size_t)strtoul(n_env, NULL, 10);
    struct store *s = NULL;
    struct error err;
    assert_int_equal(store_new(0, NULL, &s, &err), ST_OK);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct message m;
    message_init(&m);
    m.queue = bytes_from_cstr("orders.dlq");
    m.headers_present = true;
    static const char *const types[] = {"order.placed", "payment.charge", "order.cancelled",
                                        "shipment.requested"};
    for (size_t i = 0; i < n; i++) {
        char id[64], err_text[120];
        snprintf(id, sizeof id, "%08zx-0000-4000-8000-%012zx", i, i);
        snprintf(err_text, sizeof err_text,
                 i % 3 ? "exhausted %zu attempts: TimeoutException: gateway timed out after %zu ms"
                       : "gave up after %zu attempts: Payments::Declined: order A-%zu: no",
                 i % 7, 29000 + i % 2000);
        htable_set(m.headers, "x-acemq-id", hval_cstring(id));
        htable_set(m.headers, "x-acemq-type", hval_cstring(types[i % 4]));
        htable_set(m.headers, "x-acemq-attempt", hval_int(HV_I32, (int64_t)(i % 7) + 1));
        htable_set(m.headers, "x-acemq-first-seen",
                   hval_int(HV_I64, T0 - (int64_t)(i % 5000) * MIN));
        htable_set(m.headers, "x-acemq-error", hval_cstring(err_text));
        assert_int_equal(store_append(s, &m, T0, &err), ST_OK);
    }
    message_free(&m);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    print_message("million: %zu entries stored in %.0f ms\n", n, elapsed_ms(t0, t1));
    /* A real fingerprint: every timeout error has it (the numbers are normalised away). */
    const char *one = "exhausted 1 attempts: TimeoutException: gateway timed out after 2 ms";
    char fp_expr[64];
    snprintf(fp_expr, sizeof fp_expr, "fp=%016llx",
             (unsigned long long)error_fingerprint(one, strlen(one), NULL));
    const char *const exprs[] = {
        "type:order.*",
        "attempt>3 age>1h",
        "error:~timeout",
        "declined",
        "type:order.* error:~timeout attempt>3 age>1h",
        "error:/timed out after 29[0-9]+ ms/",
        fp_expr,
        "fp=0123456789abcdef",
        /* needs the message, but the type is tested first: nothing is loaded */
        "header.tenant=acme type:nothing.*",
    };
    for (size_t k = 0; k < sizeof exprs / sizeof *exprs; k++) {
        struct filter *f = NULL;
        assert_int_equal(filter_compile(exprs[k], &f, &err), ST_OK);
        assert_int_equal(filter_needs_message(f), strstr(exprs[k], "header.") != NULL);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        size_t hits = 0;
        for (size_t i = 0; i < n; i++)
            hits += filter_match_entry(f, s, i, T0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        print_message("million: %-48s %7zu hits in %6.1f ms\n", exprs[k], hits, elapsed_ms(t0, t1));
        /* The same count from how the entries were made, without the filter. */
        size_t want = 0;
        for (size_t i = 0; i < n; i++) {
            bool order = i % 4 == 0 || i % 4 == 2, timeout = i % 3 != 0;
            bool old_tried = i % 7 + 1 > 3 && (int64_t)(i % 5000) * MIN > HOUR;
            bool hit[] = {order,
                          old_tried,
                          timeout,
                          !timeout,
                          order && timeout && old_tried,
                          timeout && 29000 + i % 2000 < 30000,
                          timeout,
                          false,
                          false};
            assert_int_equal(sizeof hit / sizeof *hit, sizeof exprs / sizeof *exprs);
            want += hit[k];
        }
        if (hits != want)
            print_error("million: %s: %zu hits, want %zu\n", exprs[k], hits, want);
        assert_int_equal(hits, want);
        assert_true(k >= 7 || want > 0); /* a count that could be wrong */
        filter_free(f);
    }
    /* What loading the messages costs: a header filter over the first 10,000. */
    struct filter *f = NULL;
    assert_int_equal(filter_compile("header.x-acemq-attempt>3", &f, &err), ST_OK);
    size_t some = n < 10000 ? n : 10000, hits = 0, want = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (size_t i = 0; i < some; i++)
        hits += filter_match_entry(f, s, i, T0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    print_message("million: %-48s %7zu hits in %6.1f ms (%zu entries, each message loaded)\n",
                  "header.x-acemq-attempt>3", hits, elapsed_ms(t0, t1), some);
    for (size_t i = 0; i < some; i++)
        want += i % 7 + 1 > 3;
    assert_int_equal(hits, want);
    assert_true(hits > 0);
    filter_free(f);
    store_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_fields),
        cmocka_unit_test(test_numbers_ages_times),
        cmocka_unit_test(test_headers),
        cmocka_unit_test(test_regex),
        cmocka_unit_test(test_precedence_and_negation),
        cmocka_unit_test(test_issue_example_and_bare_words),
        cmocka_unit_test(test_quotes_and_escapes),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_typos),
        cmocka_unit_test(test_describe),
        cmocka_unit_test(test_group_field),
        cmocka_unit_test(test_random_robustness),
        cmocka_unit_test(test_million),
    };
    return cmocka_run_group_tests_name("filter", tests, setup, teardown);
}
