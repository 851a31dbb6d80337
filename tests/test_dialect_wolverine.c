/*
 * Wolverine: the header time and destination parsers, int parsing as int.TryParse, the two
 * dead-letter modes, recognition next to its near-misses, and the replay / re-issue rules
 * (src/dialects/wolverine.c).
 */
#include "dialect_testutil.h"

#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "restamp.h"
#include "snapshot.h"
#include "wolverine.h"

static void expect_time(const char *s, bool ok, int64_t want)
{
    int64_t ms = -1;
    if (wv_parse_time(s, strlen(s), &ms) != ok)
        fail_msg("%s: %s", s, ok ? "not read" : "read");
    if (ok)
        assert_int_equal(ms, want);
}

static void test_time(void **state)
{
    (void)state;
    /* EnvelopeConstants.TransportHeaderDateTimeFormat */
    expect_time("2026-01-02 04:12:39:874512 Z", true, 1767327159874LL);
    /* the writer's culture's time separator (no InvariantCulture) */
    expect_time("2026-01-02 04.12.39.874512 Z", true, 1767327159874LL);
    /* ISO "o", as EnvelopeSerializer writes and TryParseTimestamp reads */
    expect_time("2026-01-02T04:12:39.8745120+00:00", true, 1767327159874LL);
    expect_time("2026-01-02T06:12:39.8745120+02:00", true, 1767327159874LL);
    expect_time("2026-01-02T04:12:39.874", true, 1767327159874LL);
    /* default(DateTimeOffset): nobody set it */
    expect_time("0001-01-01 00:00:00:000000 Z", false, 0);
    expect_time("2026-01-02 04:12:39:87451 Z", false, 0);
    expect_time("2026-01-02 24:12:39:874512 Z", false, 0);
    expect_time("2026-01-02 04:12:39:874512 X", false, 0);
    expect_time("soon", false, 0);
    expect_time("", false, 0);
}

static void expect_dest(const char *uri, const char *queue)
{
    struct bytes q;
    bool ok = wv_destination_queue(uri, strlen(uri), &q);
    if (!queue) {
        assert_false(ok);
        return;
    }
    if (!ok)
        fail_msg("%s: no queue", uri);
    assert_true(bytes_eq_cstr(&q, queue));
    bytes_free(&q);
}

static void test_destination(void **state)
{
    (void)state;
    expect_dest("rabbitmq://queue/orders", "orders");
    expect_dest("rabbitmq://queue/orders?durable=true", "orders");
    expect_dest("RabbitMQ://queue/orders/", "orders");
    expect_dest("rabbitmq://exchange/orders", NULL);
    expect_dest("rabbitmq://topic/orders/created", NULL);
    expect_dest("rabbitmq://queue/", NULL);
    expect_dest("kafka://topic/incoming", NULL);
    expect_dest("", NULL);
}

static void test_int32(void **state)
{
    (void)state;
    int32_t v = 0;
    assert_true(wv_parse_int32("3", 1, &v) && v == 3);
    assert_true(wv_parse_int32("-3", 2, &v) && v == -3);
    assert_true(wv_parse_int32("+3", 2, &v) && v == 3);
    assert_true(wv_parse_int32("2147483647", 10, &v) && v == INT32_MAX);
    assert_true(wv_parse_int32("-2147483648", 11, &v) && v == INT32_MIN);
    assert_false(wv_parse_int32("2147483648", 10, &v));
    assert_false(wv_parse_int32("99999999999", 11, &v));
    assert_false(wv_parse_int32("", 0, &v));
    assert_false(wv_parse_int32("-", 1, &v));
    assert_false(wv_parse_int32("3a", 2, &v));
}

/* ---- recognition and the modes -------------------------------------------------------------- */

static void expect_dialect(const char *line, const char *dialect, int confidence, const char *mode)
{
    struct message *m = msg_of(line);
    struct decoded d;
    decode_message(m, NOW, &d);
    if (strcmp(d.dialect->name, dialect) != 0)
        fail_msg("%s: read as %s, not %s", line, d.dialect->name, dialect);
    assert_int_equal(d.match.confidence, confidence);
    if (mode) {
        struct dfields f = {0};
        d.dialect->fields(&d, NOW, &f);
        json_t *j = dfields_to_json(&f);
        json_t *v = json_object_get(j, "mode");
        if (strcmp(mode, "-") == 0)
            assert_true(json_is_null(v));
        else
            assert_string_equal(json_string_value(v), mode);
        json_decref(j);
        dfields_free(&f);
    }
    decoded_free(&d);
    message_free(m);
    free(m);
}

#define XDEATH                                                                                     \
    "\"x-death\":[{\"count\":1,\"reason\":\"rejected\",\"queue\":\"orders\",\"exchange\":\"\","    \
    "\"routing-keys\":[\"orders\"],\"time\":{\"type\":\"timestamp\",\"value\":1767327161}}]"

static void test_recognise(void **state)
{
    (void)state;
    expect_dialect("{\"queue\":\"wolverine-dead-letter-queue\",\"headers\":{"
                   "\"wolverine-protocol-version\":\"1.0\",\"exception-type\":\"E\"}}",
                   "wolverine", 95, "interop");
    expect_dialect("{\"queue\":\"wolverine-dead-letter-queue\",\"headers\":{"
                   "\"wolverine-protocol-version\":\"1.0\"," XDEATH "}}",
                   "wolverine", 80, "native");
    expect_dialect("{\"queue\":\"orders\",\"headers\":{\"wolverine-protocol-version\":\"1.0\"}}",
                   "wolverine", 75, "-");
    expect_dialect("{\"queue\":\"dlq\",\"headers\":{\"exception-type\":\"E\",\"failed-at\":\"1\","
                   "\"original-destination\":\"rabbitmq://queue/orders\"}}",
                   "wolverine", 70, "interop");
    expect_dialect("{\"queue\":\"wolverine-dead-letter-queue\",\"headers\":{" XDEATH "}}",
                   "wolverine", 40, "native");
    /* near-misses: the same generic names without Wolverine's */
    expect_dialect("{\"queue\":\"orders.dlq\",\"headers\":{\"exception-type\":\"E\","
                   "\"failed-at\":\"1\",\"attempts\":\"2\"}}",
                   "amqp", 1, NULL);
    expect_dialect("{\"queue\":\"orders.dlq\",\"headers\":{\"exception-type\":\"E\","
                   "\"failed-at\":\"1\",\"original-destination\":\"kafka://topic/x\"}}",
                   "amqp", 1, NULL);
    expect_dialect("{\"queue\":\"wolverine-dead-letter-queue-old\"}", "amqp", 1, NULL);
}

static void test_attempt_and_source(void **state)
{
    (void)state;
    /* native: attempts is "0" as sent; the broker's count stands in, and the source is
     * x-death[0]'s queue through the default exchange */
    struct message *m = msg_of(
        "{\"queue\":\"wolverine-dead-letter-queue\",\"exchange\":\"wolverine-dead-letter-queue\","
        "\"routing_key\":\"orders\",\"properties\":{\"message_id\":\"a\",\"type\":\"T, Asm\"},"
        "\"headers\":{\"attempts\":\"0\",\"wolverine-protocol-version\":\"1.0\"," XDEATH "}}");
    struct decoded d;
    decode_message(m, NOW, &d);
    assert_int_equal(d.env->attempt, 1);
    assert_true(d.env->defaulted & ED_ATTEMPT);
    assert_true(bytes_eq_cstr(&d.env->type, "T")); /* assembly qualifier cut */
    assert_true(bytes_eq_cstr(&d.source.queue, "orders"));
    assert_true(bytes_eq_cstr(&d.source.exchange, ""));
    assert_string_equal(d.source.how, "x-death");
    assert_true(d.error_from_broker);
    assert_int_equal(d.failed_at_ms, 1767327161000LL);
    decoded_free(&d);
    message_free(m);
    free(m);
}

/* ---- replay and re-issue ----------------------------------------------------------------- */

static const char INTEROP[] =
    "{\"queue\":\"wolverine-dead-letter-queue\",\"routing_key\":\"wolverine-dead-letter-queue\","
    "\"properties\":{\"message_id\":\"m-1\",\"type\":\"T\",\"delivery_mode\":1},"
    "\"headers\":{\"wolverine-protocol-version\":\"1.0\",\"exception-type\":\"E\","
    "\"exception-message\":\"boom\",\"exception-stack\":\"\",\"failed-at\":\"1767327162123\","
    "\"original-destination\":\"rabbitmq://queue/orders\",\"x-first-death-queue\":\"orders\","
    "\"conversation-id\":\"c\",\"attempts\":{\"type\":\"int32\",\"value\":3}},\"body\":\"{}\"}";

static void test_replay(void **state)
{
    (void)state;
    struct built b;
    build_copy(&b, INTEROP, RESTAMP_REPLAY, false);
    assert_true(bytes_eq_cstr(&b.out.exchange, ""));
    assert_true(bytes_eq_cstr(&b.out.routing_key, "orders"));
    assert_string_equal(b.out.target_how, "original-destination");
    static const char *const kept[] = {"wolverine-protocol-version",
                                       "exception-type",
                                       "exception-message",
                                       "exception-stack",
                                       "failed-at",
                                       "original-destination",
                                       "conversation-id",
                                       "attempts",
                                       NULL};
    expect_names(b.out.headers, kept);
    const struct hval *a = htable_get(b.out.headers, "attempts");
    assert_int_equal(a->kind, HV_I32); /* the kind it had */
    assert_int_equal(a->v.i, 0);
    assert_true(bytes_eq_cstr(props_string(&b.out.props, PROP_message_id), "m-1"));
    assert_int_equal(b.out.props.delivery_mode, 1);
    built_free(&b);

    build_copy(&b, INTEROP, RESTAMP_REPLAY, true);
    static const char *const stripped[] = {"wolverine-protocol-version", "conversation-id",
                                           "attempts", NULL};
    expect_names(b.out.headers, stripped);
    built_free(&b);
}

static void test_reissue(void **state)
{
    (void)state;
    struct built b;
    build_copy(&b, INTEROP, RESTAMP_REISSUE, false);
    static const char *const names[] = {"wolverine-protocol-version", "conversation-id", "attempts",
                                        "causation-id", NULL};
    expect_names(b.out.headers, names);
    assert_true(bytes_eq_cstr(hval_str(htable_get(b.out.headers, "causation-id")), "m-1"));
    assert_true(bytes_eq_cstr(props_string(&b.out.props, PROP_message_id),
                              "11111111-2222-4333-8444-555555555555"));
    built_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_time),
        cmocka_unit_test(test_destination),
        cmocka_unit_test(test_int32),
        cmocka_unit_test(test_recognise),
        cmocka_unit_test(test_attempt_and_source),
        cmocka_unit_test(test_replay),
        cmocka_unit_test(test_reissue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
