/*
 * test_dialect_cloudevents: the CloudEvents reader (the four prefixes, structured JSON
 * including malformed bodies, wrong kinds, the acceptance rule, near-misses), and the W3C
 * traceparent check that links any message into the tree by its trace id.
 */
#include "dialect_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cloudevents.h"
#include "decode.h"
#include "dialect.h"
#include "restamp.h"
#include "snapshot.h"
#include "traceparent.h"

#define TRACE "4bf92f3577b34da6a3ce929d0e0e4736"

static struct message *msg_new(const char *content_type, const char *body)
{
    struct message *m = calloc(1, sizeof *m);
    assert_non_null(m);
    message_init(m);
    if (content_type)
        props_set_string(&m->props, PROP_content_type, content_type, strlen(content_type));
    if (body) {
        bytes_free(&m->body);
        m->body = bytes_from_cstr(body);
    }
    return m;
}

static void msg_free(struct message *m)
{
    message_free(m);
    free(m);
}

static void hs(struct message *m, const char *k, const char *v)
{
    htable_add(m->headers, k, hval_cstring(v));
}

static void binary_event(struct message *m, const char *prefix)
{
    static const char *const attrs[][2] = {{"specversion", "1.0"},  {"id", "e-1"},
                                           {"source", "/shop"},     {"type", "com.example.placed"},
                                           {"subject", "orders/1"}, {"tenant", "acme"}};
    char k[64];
    for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++) {
        snprintf(k, sizeof k, "%s%s", prefix, attrs[i][0]);
        hs(m, k, attrs[i][1]);
    }
}

static void read_it(const struct message *m, struct ce_event *ev, int want_conf)
{
    int c = ce_recognise(m, ev);
    assert_int_equal(c, want_conf);
    ce_read(m, ev);
}

static void test_prefixes(void **state)
{
    (void)state;
    static const char *const prefixes[] = {"cloudEvents_", "cloudEvents:", "ce_",
                                           "ce-",          "CloudEvents_", "Ce-"};
    static const enum ce_prefix want[] = {CE_PREFIX_AMQP, CE_PREFIX_AMQP_COLON, CE_PREFIX_KAFKA,
                                          CE_PREFIX_HTTP, CE_PREFIX_AMQP,       CE_PREFIX_HTTP};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
        struct message *m = msg_new("application/json", "{}");
        binary_event(m, prefixes[i]);
        struct ce_event ev;
        read_it(m, &ev, 80);
        assert_int_equal(ev.mode, CE_BINARY);
        assert_int_equal(ev.prefix, want[i]);
        assert_null(ev.reject);
        assert_true(bytes_eq_cstr(&ev.attr[CE_ID].text, "e-1"));
        assert_true(bytes_eq_cstr(&ev.attr[CE_DATACONTENTTYPE].text, "application/json"));
        assert_string_equal(json_string_value(json_object_get(ev.extensions, "tenant")), "acme");
        assert_int_equal(__builtin_popcount(ev.core_seen), 4);
        ce_event_free(&ev);
        msg_free(m);
    }
}

static void test_mixed_prefixes(void **state)
{
    (void)state;
    /* one message uses one prefix: the one with the most required attributes wins */
    struct message *m = msg_new(NULL, "");
    binary_event(m, "cloudEvents_");
    hs(m, "ce-id", "other");
    hs(m, "ce-type", "other.type");
    struct ce_event ev;
    read_it(m, &ev, 80);
    assert_int_equal(ev.prefix, CE_PREFIX_AMQP);
    assert_true(bytes_eq_cstr(&ev.attr[CE_ID].text, "e-1"));
    assert_null(json_object_get(ev.extensions, "id"));
    ce_event_free(&ev);
    msg_free(m);
}

static void test_near_misses(void **state)
{
    (void)state;
    struct ce_event ev;
    struct message *m = msg_new("application/json", "{\"id\":\"1\",\"type\":\"t\",\"source\":\"s\","
                                                    "\"specversion\":\"1.0\"}");
    assert_int_equal(ce_recognise(m, &ev), 0); /* not the CloudEvents media type */
    hs(m, "ce-count", "3");
    hs(m, "cessna", "plane");
    hs(m, "ce-id", "lonely");
    assert_int_equal(ce_recognise(m, &ev), 0); /* one required attribute alone */
    hs(m, "ce-type", "t");
    assert_int_equal(ce_recognise(m, &ev), 60); /* two, no specversion: a weak hint */
    msg_free(m);
    m = msg_new("application/cloudevents-batch+json", "[]");
    assert_int_equal(ce_recognise(m, &ev), 0);
    msg_free(m);
    m = msg_new("application/cloudevents+jsonx", "{}");
    assert_int_equal(ce_recognise(m, &ev), 0);
    msg_free(m);
    m = msg_new("Application/CloudEvents+JSON; charset=utf-8", "{}");
    assert_int_equal(ce_recognise(m, &ev), 80);
    msg_free(m);
}

static void test_missing_and_wrong_kinds(void **state)
{
    (void)state;
    struct message *m = msg_new(NULL, "");
    hs(m, "cloudEvents_specversion", "1.0");
    hs(m, "cloudEvents_id", "e-2");
    hs(m, "cloudEvents_type", "t");
    struct ce_event ev;
    read_it(m, &ev, 80);
    assert_string_equal(ev.reject, "missing required attribute: source");
    ce_event_free(&ev);
    htable_add(m->headers, "cloudEvents_source", hval_int(HV_I16, 12345));
    read_it(m, &ev, 80);
    assert_string_equal(ev.reject, "attribute source is not a string");
    ce_event_free(&ev);
    htable_set(m->headers, "cloudEvents_source", hval_cstring(""));
    read_it(m, &ev, 80);
    assert_string_equal(ev.reject, "attribute source is empty");
    ce_event_free(&ev);
    htable_set(m->headers, "cloudEvents_source", hval_bytes("\xff\xfe", 2));
    read_it(m, &ev, 80);
    assert_string_equal(ev.reject, "attribute source is not a string");
    ce_event_free(&ev);
    htable_set(m->headers, "cloudEvents_source", hval_cstring("/s"));
    htable_set(m->headers, "cloudEvents_specversion", hval_cstring("0.3"));
    read_it(m, &ev, 80);
    assert_string_equal(ev.reject, "unsupported specversion (not 1.0)");
    ce_event_free(&ev);
    htable_set(m->headers, "cloudEvents_specversion", hval_cstring("1.0"));
    hs(m, "cloudEvents_time", "yesterday");
    read_it(m, &ev, 80);
    assert_string_equal(ev.reject, "attribute time is not an RFC 3339 time");
    ce_event_free(&ev);
    htable_set(m->headers, "cloudEvents_time", hval_uint(HV_TIMESTAMP, 1767326400));
    hs(m, "cloudEvents_Bad_Name", "x");
    read_it(m, &ev, 80);
    assert_true(ev.time_ok);
    assert_int_equal(ev.time_ms, 1767326400000LL);
    assert_true(bytes_eq_cstr(&ev.attr[CE_TIME].text, "2026-01-02T04:00:00Z"));
    assert_string_equal(ev.reject, "invalid extension attribute name (not [a-z0-9])");
    ce_event_free(&ev);
    msg_free(m);
}

static void test_extension_kinds(void **state)
{
    (void)state;
    struct message *m = msg_new(NULL, "");
    binary_event(m, "ce_");
    htable_add(m->headers, "ce_seq", hval_int(HV_I8, 7));
    htable_add(m->headers, "ce_big", hval_uint(HV_U64, UINT64_MAX));
    htable_add(m->headers, "ce_flag", hval_bool(true));
    htable_add(m->headers, "ce_tab", hval_table());
    htable_add(m->headers, "ce_bin", hval_bytes("\x80", 1));
    struct ce_event ev;
    read_it(m, &ev, 80);
    assert_null(ev.reject);
    assert_int_equal(json_integer_value(json_object_get(ev.extensions, "seq")), 7);
    assert_true(json_is_null(json_object_get(ev.extensions, "big")));
    assert_true(json_is_true(json_object_get(ev.extensions, "flag")));
    assert_true(json_is_null(json_object_get(ev.extensions, "tab")));
    assert_true(json_is_null(json_object_get(ev.extensions, "bin")));
    ce_event_free(&ev);
    msg_free(m);
}

static void test_structured(void **state)
{
    (void)state;
    struct message *m =
        msg_new("application/cloudevents+json; charset=utf-8",
                "{\"specversion\":\"1.0\",\"id\":\"e-9\",\"source\":\"/s\",\"type\":\"t.x\","
                "\"time\":\"2026-01-02T03:00:00.250Z\",\"datacontenttype\":\"application/json\","
                "\"data\":{\"a\":1},\"traceparent\":\"00-" TRACE "-00f067aa0ba902b7-01\","
                "\"n\":3}");
    struct ce_event ev;
    read_it(m, &ev, 80);
    assert_int_equal(ev.mode, CE_STRUCTURED);
    assert_null(ev.reject);
    assert_int_equal(ev.time_ms, 1767322800250LL);
    assert_string_equal(ev.trace_id, TRACE);
    assert_true(bytes_eq_cstr(&ev.attr[CE_DATACONTENTTYPE].text, "application/json"));
    assert_null(json_object_get(ev.extensions, "data"));
    assert_int_equal(json_integer_value(json_object_get(ev.extensions, "n")), 3);
    ce_event_free(&ev);
    msg_free(m);
}

static void test_structured_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *body, *reject;
    } cases[] = {
        {"{\"specversion\":\"1.0\",\"id\":\"e\",", "structured body is not valid JSON"},
        {"", "structured body is not valid JSON"},
        {"[1,2]", "structured body is not a JSON object"},
        {"\"text\"", "structured body is not valid JSON"},
        {"{\"specversion\":\"1.0\",\"id\":7,\"source\":\"/s\",\"type\":\"t\"}",
         "attribute id is not a string"},
        {"{\"specversion\":\"1.0\",\"id\":null,\"source\":\"/s\",\"type\":\"t\"}",
         "attribute id is not a string"},
        {"{\"specversion\":\"1.0\",\"id\":\"e\",\"source\":\"/s\"}",
         "missing required attribute: type"},
        {"{\"specversion\":\"1.0\",\"id\":\"e\",\"source\":\"/s\",\"type\":\"t\",\"Bad\":1}",
         "invalid extension attribute name (not [a-z0-9])"},
        {"{\"specversion\":\"1.0\",\"id\":\"a\\u0000b\",\"source\":\"/s\",\"type\":\"t\"}", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct message *m = msg_new("application/cloudevents+json", cases[i].body);
        struct ce_event ev;
        read_it(m, &ev, 80);
        const char *got = ev.reject ? ev.reject : "";
        if (strcmp(got, cases[i].reject)) {
            fprintf(stderr, "case %zu: reject \"%s\", want \"%s\"\n", i, got, cases[i].reject);
            fail();
        }
        ce_event_free(&ev);
        msg_free(m);
    }
    /* a deep body: jansson's depth limit refuses it, the reader says so */
    size_t depth = 5000;
    char *deep = malloc(2 * depth + 1);
    assert_non_null(deep);
    memset(deep, '[', depth);
    memset(deep + depth, ']', depth);
    deep[2 * depth] = '\0';
    struct message *m = msg_new("application/cloudevents+json", deep);
    struct ce_event ev;
    read_it(m, &ev, 80);
    assert_string_equal(ev.reject, "structured body is not valid JSON");
    ce_event_free(&ev);
    msg_free(m);
    free(deep);
}

static void test_traceparent(void **state)
{
    (void)state;
    char id[TRACEPARENT_ID_LEN + 1];
    static const char *const good[] = {
        "00-" TRACE "-00f067aa0ba902b7-01",
        "00-" TRACE "-00f067aa0ba902b7-00",
        "cc-" TRACE "-00f067aa0ba902b7-01-future-fields",
        "01-" TRACE "-00f067aa0ba902b7-09",
    };
    static const char *const bad[] = {
        "",
        "ff-" TRACE "-00f067aa0ba902b7-01",
        "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "00-" TRACE "-0000000000000000-01",
        "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        "00-" TRACE "-00f067aa0ba902b7-01-x",
        "00-" TRACE "-00f067aa0ba902b7-1",
        "0g-" TRACE "-00f067aa0ba902b7-01",
        "cc-" TRACE "-00f067aa0ba902b7-01x",
        "00_" TRACE "-00f067aa0ba902b7-01",
        " 00-" TRACE "-00f067aa0ba902b7-01",
        "00-" TRACE "-00f067aa0ba902b7-0g",
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        assert_true(traceparent_trace_id(good[i], strlen(good[i]), id));
        assert_string_equal(id, TRACE);
    }
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_false(traceparent_trace_id(bad[i], strlen(bad[i]), id));
    assert_false(traceparent_trace_id(NULL, 0, id));
    struct hval s = hval_cstring(good[0]), x = hval_bytes(good[0], strlen(good[0])),
                i = hval_int(HV_I32, 5);
    assert_true(traceparent_from_hval(&s, id));
    assert_true(traceparent_from_hval(&x, id));
    assert_false(traceparent_from_hval(&i, id));
    assert_false(traceparent_from_hval(NULL, id));
    hval_free(&s);
    hval_free(&x);
}

static void test_body_id_span(void **state)
{
    (void)state;
    static const struct {
        const char *body, *value; /* value NULL: not found */
    } cases[] = {
        {"{\"id\":\"e-1\",\"type\":\"t\"}", "\"e-1\""},
        {" { \"type\" : \"t\" , \"id\" : \"e-2\" } ", "\"e-2\""},
        {"{\"data\":{\"id\":\"inner\"},\"id\":\"outer\"}", "\"outer\""},
        {"{\"data\":[\"id\",{\"id\":1}],\"x\":\"\\\"id\\\"\",\"id\":7}", "7"},
        {"{\"idx\":1,\"xid\":2,\"id\":{\"a\":[1,2]}}", "{\"a\":[1,2]}"},
        {"{\"\\u0069d\":\"escaped key\"}", NULL},
        {"{\"type\":\"t\"}", NULL},
        {"[\"id\",1]", NULL},
        {"{\"id\":\"unterminated", NULL},
        {"", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t off = 0, len = 0;
        bool got = ce_body_id_span((const unsigned char *)cases[i].body, strlen(cases[i].body),
                                   &off, &len);
        if (got != (cases[i].value != NULL) ||
            (got &&
             (len != strlen(cases[i].value) || memcmp(cases[i].body + off, cases[i].value, len)))) {
            fprintf(stderr, "case %zu: %d [%zu,+%zu)\n", i, got, off, len);
            fail();
        }
    }
}

#define DEATH                                                                                      \
    "\"x-death\":[{\"count\":2,\"queue\":\"ev\",\"exchange\":\"\",\"routing-keys\":[\"ev\"],"      \
    "\"reason\":\"rejected\",\"time\":{\"type\":\"timestamp\",\"value\":1767326400}}]"

static void test_decode_binary(void **state)
{
    (void)state;
    struct dec x;
    dec(&x, "{\"queue\":\"ev.dlq\",\"properties\":{\"content_type\":\"application/json\"},"
            "\"headers\":{\"cloudEvents:id\":\"e-1\",\"cloudEvents:source\":\"/shop\","
            "\"cloudEvents:specversion\":\"1.0\",\"cloudEvents:type\":\"t.placed\","
            "\"cloudEvents:time\":\"2026-01-02T01:00:00Z\",\"cloudEvents:traceparent\":\"00-" TRACE
            "-00f067aa0ba902b7-01\"," DEATH "},\"body\":\"{}\"}");
    assert_string_equal(x.d.dialect->name, "cloudevents");
    assert_int_equal(x.d.match.confidence, 80);
    assert_int_equal(x.d.match.n_by, 4);
    assert_string_equal(x.d.match.by[0], "cloudEvents:id");
    assert_true(bytes_eq_cstr(&x.d.env->id, "e-1"));
    assert_true(bytes_eq_cstr(&x.d.env->type, "t.placed"));
    assert_true(bytes_eq_cstr(&x.d.env->origin, "/shop"));
    assert_true(bytes_eq_cstr(&x.d.env->correlation_id, TRACE));
    assert_false(x.d.env->defaulted & ED_CORRELATION);
    assert_int_equal(x.d.env->first_seen_ms, 1767315600000LL);
    assert_int_equal(x.d.env->attempt, 2);
    assert_true(x.d.accepted);
    assert_true(x.d.error_from_broker);
    assert_int_equal(x.d.failed_at_ms, 1767326400000LL);
    struct dfields f = {0};
    x.d.dialect->fields(&x.d, NOW, &f);
    json_t *o = dfields_to_json(&f);
    dfields_free(&f);
    assert_string_equal(json_string_value(json_object_get(o, "prefix")), "cloudEvents:");
    assert_string_equal(json_string_value(json_object_get(o, "datacontenttype")),
                        "application/json");
    assert_true(json_is_null(json_object_get(o, "subject")));
    assert_non_null(json_object_get(json_object_get(o, "extensions"), "traceparent"));
    json_decref(o);
    dec_free(&x);
}

static void test_decode_rejected(void **state)
{
    (void)state;
    struct dec x;
    dec(&x, "{\"headers\":{\"ce-id\":\"e-1\",\"ce-type\":\"t\"}}");
    assert_string_equal(x.d.dialect->name, "cloudevents");
    assert_int_equal(x.d.match.confidence, 60);
    assert_false(x.d.accepted);
    assert_string_equal(x.d.reject_reason, "missing required attribute: source");
    dec_free(&x);
    dec(&x,
        "{\"properties\":{\"content_type\":\"application/cloudevents+json\"},\"body\":\"nope\"}");
    assert_false(x.d.accepted);
    assert_string_equal(x.d.reject_reason, "structured body is not valid JSON");
    assert_true(x.d.env->defaulted & ED_ID);
    dec_free(&x);
}

static void test_restamp(void **state)
{
    (void)state;
    struct dec x;
    struct outgoing out;
    const char *binary =
        "{\"queue\":\"ev.dlq\",\"headers\":{\"ce_specversion\":\"1.0\",\"ce_id\":"
        "\"e-1\",\"ce_source\":\"/s\",\"ce_type\":\"t\"," DEATH "},\"body\":\"{}\"}";
    assert_int_equal(copy_of(binary, RESTAMP_REPLAY, &x, &out), ST_OK);
    assert_true(bytes_eq_cstr(hval_str(htable_get(out.headers, "ce_id")), "e-1"));
    assert_null(htable_get(out.headers, "x-death"));
    assert_true(bytes_eq_cstr(&out.routing_key, "ev"));
    outgoing_free(&out);
    dec_free(&x);
    assert_int_equal(copy_of(binary, RESTAMP_REISSUE, &x, &out), ST_OK);
    assert_true(bytes_eq_cstr(hval_str(htable_get(out.headers, "ce_id")), "new-id"));
    assert_string_equal((const char *)out.headers->e[1].key.data, "ce_id"); /* in its place */
    outgoing_free(&out);
    dec_free(&x);
    const char *structured =
        "{\"queue\":\"ev.dlq\",\"properties\":{\"content_type\":\"application/cloudevents+json\"},"
        "\"headers\":{" DEATH "},\"body\":\"{\\\"specversion\\\":\\\"1.0\\\",\\\"id\\\" : "
        "\\\"e-9\\\",\\\"source\\\":\\\"/s\\\",\\\"type\\\":\\\"t\\\",\\\"n\\\":1.50}\"}";
    assert_int_equal(copy_of(structured, RESTAMP_REISSUE, &x, &out), ST_OK);
    assert_true(bytes_eq_cstr(&out.body, "{\"specversion\":\"1.0\",\"id\" : \"new-id\",\"source\":"
                                         "\"/s\",\"type\":\"t\",\"n\":1.50}"));
    outgoing_free(&out);
    dec_free(&x);
    assert_int_equal(copy_of("{\"properties\":{\"content_type\":\"application/cloudevents+json\"},"
                             "\"headers\":{" DEATH "},\"body\":\"{\\\"id\\\":\\\"x\\\",\"}",
                             RESTAMP_REISSUE, &x, &out),
                     ST_EUNSUPPORTED);
    outgoing_free(&out);
    dec_free(&x);
}

static void test_traceparent_link(void **state)
{
    (void)state;
    struct dec x;
    dec(&x, "{\"properties\":{\"message_id\":\"m-1\"},\"headers\":{\"traceparent\":\"00-" TRACE
            "-00f067aa0ba902b7-01\"}}");
    assert_string_equal(x.d.dialect->name, "amqp");
    assert_true(bytes_eq_cstr(&x.d.env->correlation_id, TRACE));
    assert_false(x.d.env->defaulted & ED_CORRELATION);
    assert_non_null(strstr(x.d.read_from[NF_CORRELATION], "traceparent"));
    dec_free(&x);
    dec(&x, "{\"properties\":{\"message_id\":\"m-2\",\"correlation_id\":\"mine\"},"
            "\"headers\":{\"traceparent\":\"00-" TRACE "-00f067aa0ba902b7-01\"}}");
    assert_true(bytes_eq_cstr(&x.d.env->correlation_id, "mine"));
    dec_free(&x);
    dec(&x, "{\"properties\":{\"message_id\":\"m-3\"},\"headers\":{\"traceparent\":\"00-" TRACE
            "-0000000000000000-01\"}}");
    assert_true(bytes_eq_cstr(&x.d.env->correlation_id, "m-3"));
    assert_true(x.d.env->defaulted & ED_CORRELATION);
    dec_free(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prefixes),
        cmocka_unit_test(test_mixed_prefixes),
        cmocka_unit_test(test_near_misses),
        cmocka_unit_test(test_missing_and_wrong_kinds),
        cmocka_unit_test(test_extension_kinds),
        cmocka_unit_test(test_structured),
        cmocka_unit_test(test_structured_malformed),
        cmocka_unit_test(test_traceparent),
        cmocka_unit_test(test_body_id_span),
        cmocka_unit_test(test_decode_binary),
        cmocka_unit_test(test_decode_rejected),
        cmocka_unit_test(test_restamp),
        cmocka_unit_test(test_traceparent_link),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
