/*
 * test_filter: the filter language selecting dead letters — every field and operator against
 * hand-made dead letters of the three dialects, typed headers, regexes, ages at a fixed now,
 * precedence, negation, quotes, the issue's example, bare-word search, the explorer's group
 * field, and a timed scan of a million entries. Every match is checked twice: on the store
 * entry and on the message itself, which must agree. The syntax (errors, typos, the
 * description, random input) is in test_filter_syntax.c.
 */
#include "filter_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "filter.h"
#include "groups.h"
#include "store.h"

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
        cmocka_unit_test(test_group_field),
        cmocka_unit_test(test_million),
    };
    return cmocka_run_group_tests_name("filter", tests, filter_setup, filter_teardown);
}
