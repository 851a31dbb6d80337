/*
 * test_dialect_spring: the Spring dialect's parsers: printStackTrace text (the innermost
 * `Caused by:` is the error type; hostile texts), the truncation mark, retry-count's kinds, the
 * Spring Cloud Stream DLQ name; and the dialect on the fixtures (tests at the end).
 */
#include "dialect_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "dialect.h"
#include "restamp.h"
#include "snapshot.h"
#include "spring.h"

static void span_is(const char *text, struct spring_span sp, const char *want)
{
    size_t n = strlen(want);
    if (sp.len != n || memcmp(text + sp.off, want, n)) {
        fprintf(stderr, "span [%zu,+%zu) = \"%.*s\", want \"%s\"\n", sp.off, sp.len, (int)sp.len,
                text + sp.off, want);
        fail();
    }
}

static void parse(const char *t, struct spring_trace *tr)
{
    spring_trace_parse((const unsigned char *)t, strlen(t), tr);
}

static void test_trace_simple(void **state)
{
    (void)state;
    const char *t = "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException: "
                    "Listener method 'x' threw exception\n"
                    "\tat a.B.c(B.java:1)\n"
                    "Caused by: com.acme.PaymentDeclinedException: Card declined\n"
                    "\tat a.B.d(B.java:2)\n"
                    "\t... 24 more\n";
    struct spring_trace tr;
    parse(t, &tr);
    assert_int_equal(tr.ntypes, 2);
    span_is(t, tr.types[0],
            "org.springframework.amqp.rabbit.support.ListenerExecutionFailedException");
    span_is(t, tr.types[1], "com.acme.PaymentDeclinedException");
    assert_true(tr.has_root_message);
    span_is(t, tr.root_message, "Card declined");
    assert_false(tr.truncated);
}

static void test_trace_no_cause(void **state)
{
    (void)state;
    const char *t = "java.lang.IllegalStateException: boom\n\tat a.B.c(B.java:1)\n";
    struct spring_trace tr;
    parse(t, &tr);
    assert_int_equal(tr.ntypes, 1);
    span_is(t, tr.types[0], "java.lang.IllegalStateException");
    span_is(t, tr.root_message, "boom");
    /* a type alone (a null message) */
    const char *u = "java.lang.NullPointerException\n\tat a.B.c(B.java:1)\n";
    parse(u, &tr);
    assert_int_equal(tr.ntypes, 1);
    assert_false(tr.has_root_message);
}

static void test_trace_nested_and_suppressed(void **state)
{
    (void)state;
    const char *t = "x.Head: multi\nline message\n"
                    "\tat a.B.c(B.java:1)\n"
                    "Caused by: x.One: first\n  Detail: more\n"
                    "\tat a.B.c(B.java:2)\n"
                    "\t... 3 more\n"
                    "\tSuppressed: x.Sup: s\n"
                    "\t\tat a.B.c(B.java:3)\n"
                    "\tCaused by: x.SupCause: not in the chain\n"
                    "\t\t... 4 more\n"
                    "Caused by: x.Two\n"
                    "Caused by: x.Three: innermost\n"
                    "\tat a.B.c(B.java:5)\n";
    struct spring_trace tr;
    parse(t, &tr);
    assert_int_equal(tr.ntypes, 4);
    span_is(t, tr.types[0], "x.Head");
    span_is(t, tr.types[1], "x.One");
    span_is(t, tr.types[2], "x.Two"); /* right after a cause line: counted */
    span_is(t, tr.types[3], "x.Three");
    span_is(t, tr.root_message, "innermost");
}

static void test_trace_cause_in_message(void **state)
{
    (void)state;
    /* A "Caused by:" inside a multi-line message follows a message line, not a frame. */
    const char *t = "x.Head: a message\nCaused by: x.Fake: in the message\n"
                    "\tat a.B.c(B.java:1)\n"
                    "Caused by: x.Real: r\nmore message\nCaused by: x.Fake2: also message\n";
    struct spring_trace tr;
    parse(t, &tr);
    assert_int_equal(tr.ntypes, 2);
    span_is(t, tr.types[1], "x.Real");
}

static void test_trace_hostile(void **state)
{
    (void)state;
    char *t = NULL;
    size_t cap = 1 << 16;
    t = malloc(cap);
    assert_non_null(t);
    int n = snprintf(t, cap,
                     "x.Head: h\r\n\tat a(B.java:1)\r\n"
                     "Caused by: x.Ok1: fine\r\n\tat a(B.java:1)\r\n"
                     "Caused by: \x1b[31mevil.Type\x1b[0m: escapes\r\n\tat a(B.java:1)\r\n"
                     "Caused by: 9starts.with.Digit: no\r\n\tat a(B.java:1)\r\n"
                     "Caused by: a..b: empty segment\r\n\tat a(B.java:1)\r\n"
                     "Caused by: trailing.: dot\r\n\tat a(B.java:1)\r\n"
                     "Caused by: has space: no\r\n\tat a(B.java:1)\r\n"
                     "Caused by: \r\n\tat a(B.java:1)\r\n"
                     "Caused by:x.NoSpace: no\r\n\tat a(B.java:1)\r\n"
                     "Caused by: x.Ok2\r\n\tat a(B.java:1)\r\n"
                     "Caused by: ");
    /* an over-long type, then a NUL inside a type: neither is a class name */
    memset(t + n, 'a', SPRING_MAX_TYPE + 1);
    n += SPRING_MAX_TYPE + 1;
    n += snprintf(t + n, cap - (size_t)n, ": long\r\n\tat a(B.java:1)\r\nCaused by: x.N");
    t[n++] = '\0';
    n += snprintf(t + n, cap - (size_t)n, "ul: nul\r\n\tat a(B.java:1)\r\n");
    struct spring_trace tr;
    spring_trace_parse((const unsigned char *)t, (size_t)n, &tr);
    assert_int_equal(tr.ntypes, 3);
    span_is(t, tr.types[1], "x.Ok1");
    span_is(t, tr.types[2], "x.Ok2");
    assert_false(tr.truncated);
    /* every prefix of it parses without reading past the end (sanitizers watch) */
    for (int k = 0; k <= n; k += 7) {
        char *c = malloc((size_t)k + 1);
        assert_non_null(c);
        memcpy(c, t, (size_t)k);
        spring_trace_parse((const unsigned char *)c, (size_t)k, &tr);
        assert_true(tr.ntypes <= SPRING_MAX_CHAIN);
        free(c);
    }
    free(t);
}

static void test_trace_long_chain(void **state)
{
    (void)state;
    size_t cap = 64 * 1024;
    char *t = malloc(cap);
    assert_non_null(t);
    size_t n = (size_t)snprintf(t, cap, "x.Head: h\n\tat a(B.java:1)\n");
    for (int i = 0; i < 100; i++)
        n += (size_t)snprintf(t + n, cap - n, "Caused by: x.C%d: m%d\n\tat a(B.java:1)\n", i, i);
    struct spring_trace tr;
    spring_trace_parse((const unsigned char *)t, n, &tr);
    assert_int_equal(tr.ntypes, SPRING_MAX_CHAIN);
    assert_int_equal(tr.elided, 101 - SPRING_MAX_CHAIN);
    span_is(t, tr.types[SPRING_MAX_CHAIN - 1], "x.C99");
    span_is(t, tr.root_message, "m99");
    free(t);
}

static void test_trace_truncated(void **state)
{
    (void)state;
    const char *t = "x.Head: h\n\tat a(B.java:1)\nCaused by: x.Cut: the message\n\tat a.B.c(B.ja";
    struct spring_trace tr;
    parse(t, &tr);
    assert_true(tr.truncated);
    span_is(t, tr.types[tr.ntypes - 1], "x.Cut");
    /* cut inside the type: the partial name is all there is */
    const char *u = "x.Head: h\n\tat a(B.java:1)\nCaused by: com.acme.Vali";
    parse(u, &tr);
    assert_true(tr.truncated);
    span_is(u, tr.types[tr.ntypes - 1], "com.acme.Vali");
    parse("", &tr);
    assert_int_equal(tr.ntypes, 0);
    spring_trace_parse(NULL, 0, &tr);
    assert_int_equal(tr.ntypes, 0);
}

static void test_java_type(void **state)
{
    (void)state;
    static const char *const good[] = {"A",     "java.lang.String", "a.b$C",
                                       "_x.$y", "x.y1.Z2",          "com.acme.Über"};
    static const char *const bad[] = {"",     ".a",  "a.",  "a..b", "1a",
                                      "a.1b", "a b", "a:b", "a/b",  "a-b"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        assert_true(spring_java_type((const unsigned char *)good[i], strlen(good[i])));
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_false(spring_java_type((const unsigned char *)bad[i], strlen(bad[i])));
    assert_false(spring_java_type((const unsigned char *)"a\xff", 2)); /* not UTF-8 */
}

static void test_message_truncated(void **state)
{
    (void)state;
    char msg[101], trace[400];
    memset(msg, 'x', 97);
    memcpy(msg + 97, "...", 3);
    msg[100] = '\0';
    snprintf(trace, sizeof trace, "a.B: h\n\tat a\nCaused by: a.C: %s\n\tat b", msg);
    struct bytes m = {100, (unsigned char *)msg}, t = {strlen(trace), (unsigned char *)trace};
    assert_true(spring_message_truncated(&m, &t));
    struct bytes m99 = {99, (unsigned char *)msg + 1};
    assert_false(spring_message_truncated(&m99, &t));
    snprintf(trace, sizeof trace, "a.B: h\n\tat a\nCaused by: a.C: %.97s!!!\n", msg);
    t.len = strlen(trace);
    assert_false(spring_message_truncated(&m, &t));
    assert_false(spring_message_truncated(&m, NULL));
}

static void test_retry_count(void **state)
{
    (void)state;
    int64_t n = -1;
    struct hval v = hval_int(HV_I64, 3);
    assert_true(spring_retry_count(&v, &n));
    assert_int_equal(n, 3);
    v = hval_int(HV_I32, 5);
    assert_true(spring_retry_count(&v, &n));
    assert_int_equal(n, 5);
    v = hval_uint(HV_U64, UINT64_MAX);
    assert_true(spring_retry_count(&v, &n));
    assert_int_equal(n, INT64_MAX);
    v = hval_cstring("7"); /* not a Number: Spring ignores it */
    assert_false(spring_retry_count(&v, &n));
    hval_free(&v);
    v = hval_uint(HV_TIMESTAMP, 7);
    assert_false(spring_retry_count(&v, &n));
    v = hval_void();
    assert_false(spring_retry_count(&v, &n));
    assert_false(spring_retry_count(NULL, &n));
}

static void test_text(void **state)
{
    (void)state;
    struct hval s = hval_cstring("ok"), x = hval_bytes("ok", 2), bad = hval_bytes("\xff", 1),
                i = hval_int(HV_I32, 42);
    assert_non_null(spring_text(&s));
    assert_non_null(spring_text(&x));
    assert_null(spring_text(&bad));
    assert_null(spring_text(&i));
    assert_null(spring_text(NULL));
    hval_free(&s);
    hval_free(&x);
    hval_free(&bad);
}

static void test_scs_dlq(void **state)
{
    (void)state;
    struct bytes dlq = bytes_from_cstr("orders.billing.dlq"), ex = bytes_from_cstr("orders");
    struct spring_span q, g;
    assert_true(spring_scs_dlq(&dlq, &ex, &q, &g));
    span_is("orders.billing.dlq", q, "orders.billing");
    span_is("orders.billing.dlq", g, "billing");
    struct bytes other = bytes_from_cstr("billing");
    assert_false(spring_scs_dlq(&dlq, &other, &q, &g));
    struct bytes empty = {0, NULL};
    assert_false(spring_scs_dlq(&dlq, &empty, &q, &g)); /* the default exchange: not SCS */
    struct bytes nodlq = bytes_from_cstr("orders.billing");
    assert_false(spring_scs_dlq(&nodlq, &ex, &q, &g));
    struct bytes nogroup = bytes_from_cstr("orders..dlq");
    assert_false(spring_scs_dlq(&nogroup, &ex, &q, &g));
    bytes_free(&dlq);
    bytes_free(&ex);
    bytes_free(&other);
    bytes_free(&nodlq);
    bytes_free(&nogroup);
}

/* ---- the dialect on whole messages ------------------------------------------------------- */

static void test_recognition_table(void **state)
{
    (void)state;
    static const struct {
        const char *line, *dialect;
        int confidence;
    } cases[] = {
        {"{\"headers\":{\"x-exception-message\":\"m\",\"x-original-routingKey\":\"q\"}}", "spring",
         95},
        {"{\"headers\":{\"x-exception-message\":{\"type\":\"int32\",\"value\":1},"
         "\"x-original-routingKey\":null}}",
         "spring", 95},
        {"{\"headers\":{\"x-exception-message\":\"m\"}}", "spring", 75},
        {"{\"headers\":{\"__TypeId__\":\"a.B\"}}", "spring", 65},
        {"{\"headers\":{\"x-original-exchange\":\"\",\"x-original-routingKey\":\"q\","
         "\"retry-count\":3}}",
         "amqp", 1},
        {"{\"headers\":{\"retry-count\":3}}", "amqp", 1},
        {"{\"queue\":\"orders.billing.dlq\"}", "amqp", 1},
        {"{\"headers\":{\"x-exception\":\"m\",\"TypeId\":\"a.B\"}}", "amqp", 1},
        /* a Spring failure copy of a CloudEvent: the failure copy wins */
        {"{\"headers\":{\"ce_id\":\"1\",\"ce_source\":\"/s\",\"ce_specversion\":\"1.0\","
         "\"ce_type\":\"t\",\"x-exception-message\":\"m\",\"x-original-routingKey\":\"q\"}}",
         "spring", 95},
        /* a CloudEvent a Jackson converter also typed: the event wins */
        {"{\"headers\":{\"ce_id\":\"1\",\"ce_source\":\"/s\",\"ce_specversion\":\"1.0\","
         "\"ce_type\":\"t\",\"__TypeId__\":\"a.B\"}}",
         "cloudevents", 80},
        /* AceMQ's reserved headers tie at 95 with Spring's: the earlier table entry reads it */
        {"{\"headers\":{\"x-acemq-id\":\"1\",\"x-exception-message\":\"m\","
         "\"x-original-routingKey\":\"q\"}}",
         "acemq", 95},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct dec x;
        dec(&x, cases[i].line);
        if (strcmp(x.d.dialect->name, cases[i].dialect) ||
            x.d.match.confidence != cases[i].confidence) {
            fprintf(stderr, "case %zu: %s %d, want %s %d\n", i, x.d.dialect->name,
                    x.d.match.confidence, cases[i].dialect, cases[i].confidence);
            fail();
        }
        dec_free(&x);
    }
}

static json_t *spring_obj(const struct decoded *d)
{
    struct dfields f = {0};
    d->dialect->fields(d, NOW, &f);
    json_t *o = dfields_to_json(&f);
    dfields_free(&f);
    return o;
}

static void test_decode_fields(void **state)
{
    (void)state;
    struct dec x;
    dec(&x, "{\"queue\":\"orders.billing.dlq\",\"properties\":{\"correlation_id\":\"c-1\"},"
            "\"headers\":{\"x-exception-stacktrace\":\"a.Head: h\\n\\tat x\\nCaused by: b.Inner: "
            "boom\\n\\tat y\\n\",\"x-exception-message\":\"boom\",\"x-original-exchange\":"
            "\"orders\",\"x-original-routingKey\":\"orders\",\"retry-count\":2}}");
    assert_string_equal(x.d.dialect->name, "spring");
    assert_true(bytes_eq_cstr(&x.d.error_type, "b.Inner"));
    assert_true(bytes_eq_cstr(&x.d.error_message, "boom"));
    assert_true(bytes_eq_cstr(&x.d.error, "b.Inner: boom"));
    assert_int_equal(x.d.env->attempt, 2);
    assert_true(bytes_eq_cstr(&x.d.env->correlation_id, "c-1"));
    assert_true(bytes_eq_cstr(&x.d.source.queue, "orders.billing"));
    assert_true(bytes_eq_cstr(&x.d.source.exchange, ""));
    assert_string_equal(x.d.source.how, "dlq-name");
    json_t *o = spring_obj(&x.d);
    assert_string_equal(json_string_value(json_object_get(o, "flavour")), "cloud-stream");
    assert_string_equal(json_string_value(json_object_get(o, "destination")), "orders");
    assert_string_equal(json_string_value(json_object_get(o, "group")), "billing");
    assert_int_equal(json_integer_value(json_object_get(o, "retry_count")), 2);
    assert_int_equal(json_array_size(json_object_get(o, "exception_types")), 2);
    assert_string_equal(json_string_value(json_object_get(o, "root_cause_message")), "boom");
    assert_true(json_is_false(json_object_get(o, "stack_trace_truncated")));
    assert_non_null(
        strstr(json_string_value(json_object_get(o, "replay_warning")), "every consumer group"));
    json_decref(o);
    dec_free(&x);
}

static void test_attempt_sources(void **state)
{
    (void)state;
    static const struct {
        const char *line;
        int64_t attempt;
        bool defaulted;
    } cases[] = {
        /* retry-count wins over x-death; x-death[0] (the newest) when it is absent */
        {"{\"headers\":{\"__TypeId__\":\"a.B\",\"retry-count\":4,\"x-death\":[{\"count\":9,"
         "\"queue\":\"q\",\"reason\":\"rejected\"}]}}",
         4, false},
        {"{\"headers\":{\"__TypeId__\":\"a.B\",\"x-death\":[{\"count\":3,\"queue\":\"q2\","
         "\"reason\":\"rejected\"},{\"count\":7,\"queue\":\"q1\",\"reason\":\"expired\"}]}}",
         3, false},
        /* a string is not a Number to Spring: x-death, else 1 */
        {"{\"headers\":{\"__TypeId__\":\"a.B\",\"retry-count\":\"7\"}}", 1, true},
        {"{\"headers\":{\"__TypeId__\":\"a.B\",\"retry-count\":0}}", 1, true},
        {"{\"headers\":{\"__TypeId__\":\"a.B\",\"retry-count\":{\"type\":\"uint8\",\"value\":"
         "6}}}",
         6, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct dec x;
        dec(&x, cases[i].line);
        assert_string_equal(x.d.dialect->name, "spring");
        assert_int_equal(x.d.env->attempt, cases[i].attempt);
        assert_int_equal(!!(x.d.env->defaulted & ED_ATTEMPT), cases[i].defaulted);
        dec_free(&x);
    }
}

static void test_source_order(void **state)
{
    (void)state;
    static const struct {
        const char *line, *how, *queue, *exchange, *rk;
    } cases[] = {
        {"{\"queue\":\"x.dlq\",\"headers\":{\"__TypeId__\":\"a.B\",\"x-death\":[{\"count\":1,"
         "\"queue\":\"orders\",\"exchange\":\"ex\",\"routing-keys\":[\"rk\"],"
         "\"reason\":\"rejected\"}]}}",
         "x-death", "orders", "", "orders"},
        {"{\"queue\":\"errors\",\"headers\":{\"x-exception-message\":\"m\",\"x-original-exchange\":"
         "\"\",\"x-original-routingKey\":\"orders\"}}",
         "x-original-routingKey", "orders", "", "orders"},
        /* the received queue is more precise than a name */
        {"{\"queue\":\"other.dlq\",\"headers\":{\"x-exception-message\":\"m\",\"x-original-"
         "exchange\":"
         "\"\",\"x-original-routingKey\":\"orders\"}}",
         "x-original-routingKey", "orders", "", "orders"},
        {"{\"queue\":\"orders.billing.dlq\",\"headers\":{\"x-exception-message\":\"m\","
         "\"x-original-exchange\":\"orders\",\"x-original-routingKey\":\"orders\"}}",
         "dlq-name", "orders.billing", "", "orders.billing"},
        {"{\"queue\":\"errors\",\"headers\":{\"x-exception-message\":\"m\",\"x-original-exchange\":"
         "\"ex\",\"x-original-routingKey\":\"rk\"}}",
         "x-original-exchange", "", "ex", "rk"},
        {"{\"queue\":\"errors\",\"headers\":{\"x-exception-message\":\"m\",\"x-original-exchange\":"
         "\"\",\"x-original-routingKey\":\"\"}}",
         NULL, NULL, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct dec x;
        dec(&x, cases[i].line);
        if (!cases[i].how) {
            assert_null(x.d.source.how);
        } else {
            assert_string_equal(x.d.source.how, cases[i].how);
            assert_true(bytes_eq_cstr(&x.d.source.queue, cases[i].queue));
            assert_true(bytes_eq_cstr(&x.d.source.exchange, cases[i].exchange));
            assert_true(bytes_eq_cstr(&x.d.source.routing_key, cases[i].rk));
        }
        dec_free(&x);
    }
}

static void header_names(const struct htable *h, const char *want)
{
    char got[512] = "";
    for (size_t i = 0; i < h->n; i++) {
        strncat(got, i ? "," : "", sizeof got - strlen(got) - 1);
        strncat(got, (const char *)h->e[i].key.data, sizeof got - strlen(got) - 1);
    }
    if (strcmp(got, want)) {
        fprintf(stderr, "headers %s, want %s\n", got, want);
        fail();
    }
}

static void test_restamp_replay(void **state)
{
    (void)state;
    struct dec x;
    struct outgoing out;
    /* retry-count in its place, + 1, a Long whatever kind it had */
    assert_int_equal(
        copy_of("{\"queue\":\"orders.billing.dlq\",\"headers\":{\"contentType\":\"a\","
                "\"retry-count\":{\"type\":\"int32\",\"value\":3},\"x-exception-message\":\"m\","
                "\"x-original-exchange\":\"orders\",\"x-original-routingKey\":\"orders\"}}",
                RESTAMP_REPLAY, &x, &out),
        ST_OK);
    header_names(out.headers, "contentType,retry-count,x-exception-message,x-original-exchange,"
                              "x-original-routingKey");
    const struct hval *rc = htable_get(out.headers, "retry-count");
    assert_int_equal(rc->kind, HV_I64);
    assert_int_equal(rc->v.i, 4);
    assert_true(bytes_eq_cstr(&out.exchange, ""));
    assert_true(bytes_eq_cstr(&out.routing_key, "orders.billing"));
    outgoing_free(&out);
    dec_free(&x);
    /* absent: x-death's count + 1, at the end; the death headers not sent back */
    assert_int_equal(
        copy_of("{\"queue\":\"orders.dlq\",\"headers\":{\"__TypeId__\":\"a.B\",\"x-death\":[{"
                "\"count\":2,\"queue\":\"orders\",\"reason\":\"rejected\"}],"
                "\"x-first-death-queue\":\"orders\"}}",
                RESTAMP_REPLAY, &x, &out),
        ST_OK);
    header_names(out.headers, "__TypeId__,retry-count");
    assert_int_equal(htable_get(out.headers, "retry-count")->v.i, 3);
    assert_true(bytes_eq_cstr(&out.routing_key, "orders"));
    outgoing_free(&out);
    dec_free(&x);
    /* nowhere to go: refused, naming why */
    assert_int_equal(copy_of("{\"queue\":\"errors\",\"headers\":{\"x-exception-message\":\"m\","
                             "\"x-original-routingKey\":null}}",
                             RESTAMP_REPLAY, &x, &out),
                     ST_ENOTFOUND);
    outgoing_free(&out);
    dec_free(&x);
}

static void test_restamp_reissue(void **state)
{
    (void)state;
    struct dec x;
    struct outgoing out;
    assert_int_equal(
        copy_of("{\"queue\":\"error.orders\",\"properties\":{\"message_id\":\"old\"},"
                "\"headers\":{\"__TypeId__\":\"a.B\",\"x-exception-stacktrace\":\"t\","
                "\"x-exception-message\":\"m\",\"x-original-exchange\":\"\","
                "\"x-original-routingKey\":\"orders\",\"retry-count\":2,\"tenant\":\"acme\"}}",
                RESTAMP_REISSUE, &x, &out),
        ST_OK);
    header_names(out.headers, "__TypeId__,tenant");
    assert_true(bytes_eq_cstr(props_string(&out.props, PROP_message_id), "new-id"));
    assert_true(bytes_eq_cstr(props_string(&out.props, PROP_correlation_id), "old"));
    assert_true(bytes_eq_cstr(&out.routing_key, "orders"));
    outgoing_free(&out);
    dec_free(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_simple),
        cmocka_unit_test(test_trace_no_cause),
        cmocka_unit_test(test_trace_nested_and_suppressed),
        cmocka_unit_test(test_trace_cause_in_message),
        cmocka_unit_test(test_trace_hostile),
        cmocka_unit_test(test_trace_long_chain),
        cmocka_unit_test(test_trace_truncated),
        cmocka_unit_test(test_java_type),
        cmocka_unit_test(test_message_truncated),
        cmocka_unit_test(test_retry_count),
        cmocka_unit_test(test_text),
        cmocka_unit_test(test_scs_dlq),
        cmocka_unit_test(test_recognition_table),
        cmocka_unit_test(test_decode_fields),
        cmocka_unit_test(test_attempt_sources),
        cmocka_unit_test(test_source_order),
        cmocka_unit_test(test_restamp_replay),
        cmocka_unit_test(test_restamp_reissue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
