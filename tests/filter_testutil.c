/*
 * What the filter tests share (filter_testutil.h).
 */
#include "filter_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"

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

struct store *store_;

int filter_setup(void **state)
{
    setenv("DLQX_NOW", "1767323045678", 1);
    store_ = load();
    return 0;
}

int filter_teardown(void **state)
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

void check(const char *expr, const char *want)
{
    char *got = matches(expr);
    if (strcmp(got, want) != 0)
        print_error("filter %s: got [%s], want [%s]\n", expr, got, want);
    assert_string_equal(got, want);
    free(got);
}

void assert_describe(const char *expr, const char *want)
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
