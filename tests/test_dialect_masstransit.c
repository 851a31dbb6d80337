/*
 * MassTransit: the URN, time and address parsers, the attempt count, recognition next to its
 * near-misses, and the replay / re-issue rules (src/dialects/masstransit.c).
 */
#include "dialect_testutil.h"

#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "masstransit.h"
#include "restamp.h"
#include "snapshot.h"

static void expect_urn(const char *urn, const char *want)
{
    struct bytes t;
    bool ok = mt_urn_type(urn, strlen(urn), &t);
    if (!want) {
        assert_false(ok);
        assert_null(t.data);
        return;
    }
    assert_true(ok);
    assert_int_equal(t.len, strlen(want));
    assert_memory_equal(t.data, want, t.len);
    bytes_free(&t);
}

static void test_urn(void **state)
{
    (void)state;
    expect_urn("urn:message:Contracts:SubmitOrder", "Contracts.SubmitOrder");
    expect_urn("urn:message:MyProject.AccountService:MyService+AccountUpdatedEvent",
               "MyProject.AccountService.MyService+AccountUpdatedEvent");
    /* MessageUrn.cs: generic arguments as [[Ns:Name]] (MessageUrnSpecs.ClosedGenericMessage) */
    expect_urn("urn:message:MassTransit.Tests:G[[MassTransit.TestFramework.Messages:PingMessage]]",
               "MassTransit.Tests.G[[MassTransit.TestFramework.Messages.PingMessage]]");
    expect_urn("urn:message:MassTransit:CorrelatedBy[[System:Guid]]",
               "MassTransit.CorrelatedBy[[System.Guid]]");
    expect_urn("urn:message:MyCustomName", "MyCustomName"); /* [MessageUrn("MyCustomName")] */
    expect_urn("scheme:publish-command", "scheme:publish-command"); /* useDefaultPrefix: false */
    expect_urn("urn:message:", NULL);
    expect_urn("", NULL);
}

static void expect_time(const char *s, bool ok, int64_t want)
{
    int64_t ms = -1;
    assert_int_equal(mt_parse_time(s, strlen(s), &ms), ok);
    if (ok)
        assert_int_equal(ms, want);
}

static void test_time(void **state)
{
    (void)state;
    /* DateTime.UtcNow.ToString("O"): always 7 digits */
    expect_time("2026-01-02T04:31:07.1234567Z", true, 1767328267123LL);
    expect_time("2026-01-02T04:31:07.0000000Z", true, 1767328267000LL);
    /* System.Text.Json trims trailing zeros: 0 to 7 digits */
    expect_time("2023-07-04T11:39:59.689102Z", true, 1688470799689LL);
    expect_time("2026-01-02T04:31:07Z", true, 1767328267000LL);
    expect_time("2026-01-02T04:31:07.5Z", true, 1767328267500LL);
    expect_time("2026-01-02T06:31:07.1234567+02:00", true, 1767328267123LL);
    expect_time("2026-01-02T04:31:07.1234567", true, 1767328267123LL); /* no zone: UTC */
    expect_time("2026-13-45T99:00:00.1234567Z", false, 0);
    expect_time("yesterday", false, 0);
    expect_time("", false, 0);
    char big[200];
    memset(big, '9', sizeof big - 1);
    big[sizeof big - 1] = 0;
    expect_time(big, false, 0);
}

static void expect_addr(const char *uri, const char *queue, const char *vhost)
{
    struct bytes q, v;
    bool ok = mt_address_queue(uri, strlen(uri), &q, &v);
    if (!queue) {
        assert_false(ok);
        return;
    }
    if (!ok)
        fail_msg("%s: no queue", uri);
    assert_true(bytes_eq_cstr(&q, queue));
    if (vhost)
        assert_true(bytes_eq_cstr(&v, vhost));
    else
        assert_null(v.data);
    bytes_free(&q);
    bytes_free(&v);
}

static void test_address(void **state)
{
    (void)state;
    expect_addr("rabbitmq://localhost/submit-order", "submit-order", "/");
    expect_addr("rabbitmq://localhost/test/input_queue", "input_queue", "test");
    expect_addr("rabbitmq://rabbit.internal:5673/sales%2Feu/charge-card?prefetch=16", "charge-card",
                "sales/eu");
    expect_addr("rabbitmqs://h/v/q#x", "q", "v");
    expect_addr("AMQP://h/q", "q", "/");
    expect_addr("queue:input_queue", "input_queue", NULL);
    expect_addr("exchange:orders?type=topic", "orders", NULL);
    expect_addr("rabbitmq://", NULL, NULL);
    expect_addr("rabbitmq://host/", NULL, NULL);
    expect_addr("rabbitmq://host", NULL, NULL);
    expect_addr("http://host/q", NULL, NULL);
    expect_addr("queue:", NULL, NULL);
    char big[400];
    strcpy(big, "rabbitmq://h/");
    memset(big + 13, 'q', 300);
    big[313] = 0;
    expect_addr(big, NULL, NULL);
    expect_addr("rabbitmq://h/a%zzb", "a%zzb", "/"); /* a bad escape stays as written */
}

static void test_attempts(void **state)
{
    (void)state;
    assert_int_equal(mt_attempts(0, 0), 1);
    assert_int_equal(mt_attempts(5, 0), 6);
    assert_int_equal(mt_attempts(3, 2), 12);
    assert_int_equal(mt_attempts(-1, -5), 1);
    assert_int_equal(mt_attempts(INT32_MAX, 0), INT32_MAX);
    assert_int_equal(mt_attempts(100000, 100000), INT32_MAX);
    assert_int_equal(mt_attempts(INT64_MAX, INT64_MAX), INT32_MAX);
}

/* ---- recognition ------------------------------------------------------------------------- */

static void expect_dialect(const char *line, const char *dialect, int confidence, const char *by)
{
    struct message *m = msg_of(line);
    struct decoded d;
    decode_message(m, NOW, &d);
    if (strcmp(d.dialect->name, dialect) != 0)
        fail_msg("%s: read as %s, not %s", line, d.dialect->name, dialect);
    if (confidence)
        assert_int_equal(d.match.confidence, confidence);
    if (by) {
        assert_true(d.match.n_by > 0);
        assert_string_equal(d.match.by[0], by);
    }
    decoded_free(&d);
    message_free(m);
    free(m);
}

static void test_recognise(void **state)
{
    (void)state;
    expect_dialect("{\"queue\":\"q_error\",\"headers\":{\"MT-Reason\":\"fault\","
                   "\"MT-Fault-ExceptionType\":\"System.Exception\"},\"body\":\"{}\"}",
                   "masstransit", 95, "MT-Reason");
    expect_dialect("{\"queue\":\"q_skipped\",\"headers\":{\"MT-Reason\":\"dead-letter\"}}",
                   "masstransit", 92, "MT-Reason");
    expect_dialect("{\"headers\":{\"MT-Fault-Timestamp\":\"2026-01-02T04:31:07.1234567Z\"}}",
                   "masstransit", 88, "MT-Fault-ExceptionType");
    expect_dialect("{\"properties\":{\"content_type\":\"application/vnd.masstransit+json\"},"
                   "\"body\":\"{}\"}",
                   "masstransit", 75, "content_type");
    expect_dialect("{\"properties\":{\"content_type\":\"application/json\"},\"headers\":{"
                   "\"MT-MessageType\":\"urn:message:A:B\"},\"body\":\"{}\"}",
                   "masstransit", 72, "MT-MessageType");
    expect_dialect("{\"body\":\"{\\n  \\\"messageId\\\": \\\"x\\\",\\n  \\\"messageType\\\": "
                   "[\\\"urn:message:A:B\\\"]\\n}\"}",
                   "masstransit", 65, "body");
    expect_dialect("{\"headers\":{\"MT-Host-MachineName\":\"w\"}}", "masstransit", 60, NULL);
    /* near-misses: the suffix, generic names, look-alikes */
    expect_dialect("{\"queue\":\"orders_error\",\"properties\":{\"message_id\":\"p-1\"},"
                   "\"headers\":{\"MessageId\":\"p-1\"},\"body\":\"{}\"}",
                   "amqp", 1, NULL);
    expect_dialect("{\"queue\":\"jobs.dlq\",\"headers\":{\"reason\":\"fault\","
                   "\"MT-Reasonable\":\"yes\"}}",
                   "amqp", 1, NULL);
    expect_dialect("{\"properties\":{\"content_type\":\"application/json\"},"
                   "\"body\":\"{\\\"messageType\\\":\\\"order\\\"}\"}",
                   "amqp", 1, NULL);
    /* an empty MT-Reason is not a reason */
    expect_dialect("{\"headers\":{\"MT-Reason\":\"\"}}", "amqp", 1, NULL);
}

/* ---- replay and re-issue ----------------------------------------------------------------- */

static const char FAULT[] =
    "{\"queue\":\"submit-order_error\",\"exchange\":\"submit-order_error\",\"properties\":{"
    "\"content_type\":\"application/vnd.masstransit+json\",\"message_id\":\"m-1\"},"
    "\"headers\":{\"x-death\":[{\"count\":1,\"reason\":\"expired\",\"queue\":\"wait\","
    "\"exchange\":\"wait\",\"routing-keys\":[\"\"]}],\"app\":\"kept\","
    "\"MT-Host-MachineName\":\"w1\",\"MT-Host-Info\":\"{}\",\"MT-Reason\":\"fault\","
    "\"MT-Fault-ExceptionType\":\"E\",\"MT-Fault-InputAddress\":\"rabbitmq://h/submit-order\","
    "\"MT-Fault-Address\":\"rabbitmq://h/faults\",\"MT-Fault-RetryCount\":{\"type\":\"int32\","
    "\"value\":2}},"
    "\"body\":\"{\\n  \\\"messageId\\\": \\\"m-1\\\",\\n  \\\"message\\\": {\\\"messageId\\\": "
    "\\\"m-1\\\"},\\n  \\\"messageType\\\": [\\\"urn:message:A:B\\\"]\\n}\"}";

static void test_replay(void **state)
{
    (void)state;
    struct built b;
    build_copy(&b, FAULT, RESTAMP_REPLAY, false);
    /* the shovel: default exchange, the source queue, every header (x-death too) */
    assert_true(bytes_eq_cstr(&b.out.exchange, ""));
    assert_true(bytes_eq_cstr(&b.out.routing_key, "submit-order"));
    assert_string_equal(b.out.target_how, "MT-Fault-InputAddress");
    assert_true(htable_equal(b.out.headers, b.m->headers));
    assert_true(bytes_eq(&b.out.body, &b.m->body));
    assert_false(props_has(&b.out.props, PROP_delivery_mode)); /* it had none */
    built_free(&b);

    build_copy(&b, FAULT, RESTAMP_REPLAY, true);
    static const char *const kept[] = {"x-death", "app", "MT-Host-Info", "MT-Fault-Address", NULL};
    expect_names(b.out.headers, kept);
    built_free(&b);
}

static void test_reissue(void **state)
{
    (void)state;
    struct built b;
    build_copy(&b, FAULT, RESTAMP_REISSUE, false);
    static const char *const names[] = {"app", "MT-Host-Info", "MT-Fault-Address",
                                        "MT-OriginalMessageId", NULL};
    expect_names(b.out.headers, names);
    const struct bytes *orig = hval_str(htable_get(b.out.headers, "MT-OriginalMessageId"));
    assert_true(orig && bytes_eq_cstr(orig, "m-1"));
    assert_true(bytes_eq_cstr(props_string(&b.out.props, PROP_message_id),
                              "11111111-2222-4333-8444-555555555555"));
    /* only the envelope's messageId: the payload's own member keeps its value */
    const char *want = "{\n  \"messageId\": \"11111111-2222-4333-8444-555555555555\",\n"
                       "  \"message\": {\"messageId\": \"m-1\"},\n"
                       "  \"messageType\": [\"urn:message:A:B\"]\n}";
    assert_true(bytes_eq_cstr(&b.out.body, want));
    built_free(&b);

    /* an existing MT-OriginalMessageId is kept (ReplaceMessageId keeps the first) */
    build_copy(&b,
               "{\"queue\":\"q_error\",\"properties\":{\"content_type\":\"application/json\","
               "\"message_id\":\"m-2\"},\"headers\":{\"MessageId\":\"m-2\","
               "\"MT-OriginalMessageId\":\"m-0\",\"MT-Reason\":\"fault\"},\"body\":\"{}\"}",
               RESTAMP_REISSUE, false);
    static const char *const raw[] = {"MessageId", "MT-OriginalMessageId", NULL};
    expect_names(b.out.headers, raw);
    assert_true(bytes_eq_cstr(hval_str(htable_get(b.out.headers, "MT-OriginalMessageId")), "m-0"));
    assert_true(bytes_eq_cstr(hval_str(htable_get(b.out.headers, "MessageId")),
                              "11111111-2222-4333-8444-555555555555"));
    assert_true(bytes_eq_cstr(&b.out.body, "{}"));
    assert_true(bytes_eq_cstr(&b.out.routing_key, "q"));
    built_free(&b);
}

static void test_no_target(void **state)
{
    (void)state;
    struct message *m = msg_of("{\"queue\":\"faults\",\"headers\":{\"MT-Reason\":\"fault\"}}");
    struct decoded d;
    decode_message(m, NOW, &d);
    struct restamp_opts o;
    memset(&o, 0, sizeof o);
    struct outgoing out;
    struct error err;
    assert_int_equal(restamp_build(&d, &o, &out, &err), ST_ENOTFOUND);
    assert_non_null(strstr(err.msg, "MT-Fault-InputAddress"));
    decoded_free(&d);
    message_free(m);
    free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_urn),       cmocka_unit_test(test_time),
        cmocka_unit_test(test_address),   cmocka_unit_test(test_attempts),
        cmocka_unit_test(test_recognise), cmocka_unit_test(test_replay),
        cmocka_unit_test(test_reissue),   cmocka_unit_test(test_no_target),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
