/*
 * restamp: the copy sent back for each dialect and mode — the AceMQ fixtures replayed and
 * re-issued header by header (names, order, kinds, values), BabelQueue bodies edited byte for
 * byte, plain AMQP targets from x-death, MOVE, the refusals (reserved names, fields a dialect
 * does not have, bodies that are not envelopes) — the dead letter untouched every time. The
 * diff and the kinds of header edits: test_restamp_diff.c.
 */
#include "restamp_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "decode.h"
#include "hval_json.h"
#include "restamp_diff.h"
#include "sha256.h"
#include "util.h"

/* ---- AceMQ ------------------------------------------------------------------------- */

/* The fixture case as a dead letter: republished to {rk}.dlq with an error, attempt 3, and
 * (as after a broker hop) an x-death and an x-delivery-count. */
static struct message *acemq_dead_letter(const json_t *c)
{
    const char *rk = json_string_value(json_object_get(c, "routingKey"));
    char q[128];
    snprintf(q, sizeof q, "%s.dlq", rk);
    /* The fixture's body is itself a JSON-encoded string. */
    json_t *b = json_loads(json_string_value(json_object_get(c, "body")), JSON_DECODE_ANY, NULL);
    assert_true(json_is_string(b));
    struct message *m =
        msg_new(q, q, json_string_value(json_object_get(c, "contentType")), json_string_value(b));
    json_decref(b);
    set_prop(m, PROP_message_id, json_string_value(json_object_get(c, "messageId")));
    set_prop(m, PROP_reply_to, "amq.rabbitmq.reply-to");
    m->props.delivery_mode = 2;
    m->props.present |= 1u << PROP_delivery_mode;
    htable_free(m->headers);
    struct error err;
    assert_int_equal(htable_from_json(json_object_get(c, "headers"), "headers", &m->headers, &err),
                     ST_OK);
    htable_set(m->headers, "x-acemq-attempt", hval_int(HV_I32, 3));
    htable_add(m->headers, "x-acemq-error", hval_cstring("exhausted 3 attempts: Boom: no"));
    htable_add(m->headers, "x-death", xdeath(q, "", q));
    htable_add(m->headers, "x-delivery-count", hval_int(HV_I64, 4));
    return m;
}

static json_t *fixture_cases(void)
{
    struct bytes raw = test_read_fixture("acemq/envelope-fixtures.json");
    json_t *doc = json_loadb((const char *)raw.data, raw.len, 0, NULL);
    bytes_free(&raw);
    assert_non_null(doc);
    return doc;
}

static void check_acemq_common(const struct run *r, const json_t *c)
{
    const char *rk = json_string_value(json_object_get(c, "routingKey"));
    assert_int_equal(r->out.dialect, &dialect_acemq);
    assert_string_equal(r->out.target_how, "acemq-dlq-name");
    assert_bytes(&r->out.exchange, "");
    assert_bytes(&r->out.routing_key, rk);
    assert_true(bytes_eq(&r->out.body, &r->m->body));
    assert_bytes(props_string(&r->out.props, PROP_content_type), "application/json");
    assert_bytes(props_string(&r->out.props, PROP_reply_to), "amq.rabbitmq.reply-to");
    assert_int_equal(r->out.props.delivery_mode, 2);
    char sha[65];
    sha256_hex(r->out.body.data, r->out.body.len, sha);
    assert_string_equal(r->out.body_sha256, sha);
}

static void test_acemq_replay_fixtures(void **state)
{
    json_t *doc = fixture_cases();
    const json_t *cases = json_object_get(doc, "cases");
    struct restamp_opts o = {.mode = RESTAMP_REPLAY, .now_ms = NOW};
    struct run r;

    const json_t *c = json_array_get(cases, 0);
    assert_string_equal(json_string_value(json_object_get(c, "case")), "minimal");
    o.dlq = "fx.plain.dlq";
    run(&r, acemq_dead_letter(c), &o);
    assert_ok(&r);
    check_acemq_common(&r, c);
    ASSERT_HEADERS(
        r.out.headers, {"x-acemq-id", hval_cstring("f67aff08-6293-4ce2-af9e-1b8797fb8451")},
        {"x-acemq-type", hval_cstring("fx.plain")}, {"x-acemq-version", hval_int(HV_I32, 1)},
        {"x-acemq-correlation", hval_cstring("f67aff08-6293-4ce2-af9e-1b8797fb8451")},
        {"x-acemq-attempt", hval_int(HV_I32, 1)},
        {"x-acemq-first-seen", hval_int(HV_I64, 1788968630038LL)},
        {"x-acemq-origin", hval_cstring("acemq@Kenshi.local")},
        {"acemq-replayed-from", hval_cstring("fx.plain.dlq")},
        {"acemq-replayed-at", hval_cstring(NOW_RFC3339)},
        {"acemq-replay-count", hval_int(HV_I32, 1)});
    assert_bytes(props_string(&r.out.props, PROP_message_id),
                 "f67aff08-6293-4ce2-af9e-1b8797fb8451");
    assert_bytes(&r.out.id, "f67aff08-6293-4ce2-af9e-1b8797fb8451");
    assert_bytes(&r.out.old_id, "f67aff08-6293-4ce2-af9e-1b8797fb8451");
    run_free(&r);

    c = json_array_get(cases, 1);
    assert_string_equal(json_string_value(json_object_get(c, "case")), "populated");
    o.dlq = "fx.rich.dlq";
    run(&r, acemq_dead_letter(c), &o);
    assert_ok(&r);
    check_acemq_common(&r, c);
    ASSERT_HEADERS(
        r.out.headers, {"x-acemq-id", hval_cstring("11111111-2222-3333-4444-555555555555")},
        {"x-acemq-type", hval_cstring("order.placed")}, {"x-acemq-version", hval_int(HV_I32, 3)},
        {"x-acemq-correlation", hval_cstring("corr-1")}, {"x-acemq-attempt", hval_int(HV_I32, 1)},
        {"x-acemq-first-seen", hval_int(HV_I64, 1767323045678LL)},
        {"x-acemq-causation", hval_cstring("cause-1")},
        {"x-acemq-origin", hval_cstring("orders@host-7")}, {"x-tenant", hval_cstring("acme")},
        {"acemq-replayed-from", hval_cstring("fx.rich.dlq")},
        {"acemq-replayed-at", hval_cstring(NOW_RFC3339)},
        {"acemq-replay-count", hval_int(HV_I32, 1)});
    run_free(&r);

    /* Replayed twice already (by the Java library, epoch-ms at): the stamps keep their
     * places, the count goes from 2 to 3 and the time becomes RFC 3339. */
    c = json_array_get(cases, 2);
    assert_string_equal(json_string_value(json_object_get(c, "case")), "replayed");
    o.dlq = "fx.replayed.dlq";
    run(&r, acemq_dead_letter(c), &o);
    assert_ok(&r);
    check_acemq_common(&r, c);
    ASSERT_HEADERS(
        r.out.headers, {"x-acemq-id", hval_cstring("99999999-8888-7777-6666-555555555555")},
        {"x-acemq-type", hval_cstring("order.placed")}, {"x-acemq-version", hval_int(HV_I32, 1)},
        {"x-acemq-correlation", hval_cstring("corr-2")}, {"x-acemq-attempt", hval_int(HV_I32, 1)},
        {"x-acemq-first-seen", hval_int(HV_I64, 1767323045678LL)},
        {"x-acemq-origin", hval_cstring("orders@host-7")},
        {"acemq-replay-count", hval_int(HV_I32, 3)},
        {"acemq-replayed-at", hval_cstring(NOW_RFC3339)},
        {"acemq-replayed-from", hval_cstring("fx.replayed.dlq")});
    run_free(&r);

    /* The libraries' keep-error option: attempt and error stay. */
    c = json_array_get(cases, 0);
    o.dlq = "fx.plain.dlq";
    o.keep_error = true;
    run(&r, acemq_dead_letter(c), &o);
    assert_ok(&r);
    assert_int_equal(htable_get(r.out.headers, "x-acemq-attempt")->v.i, 3);
    assert_bytes(hval_str(htable_get(r.out.headers, "x-acemq-error")),
                 "exhausted 3 attempts: Boom: no");
    run_free(&r);
    json_decref(doc);
}

static void test_acemq_reissue(void **state)
{
    json_t *doc = fixture_cases();
    const json_t *c = json_array_get(json_object_get(doc, "cases"), 2);
    struct restamp_opts o = {
        .mode = RESTAMP_REISSUE, .now_ms = NOW, .new_id = "new-1", .dlq = "fx.replayed.dlq"};
    struct run r;
    run(&r, acemq_dead_letter(c), &o);
    assert_ok(&r);
    check_acemq_common(&r, c);
    /* A new message: no replay stamps, caused by the old one, first seen now. */
    ASSERT_HEADERS(
        r.out.headers, {"x-acemq-id", hval_cstring("new-1")},
        {"x-acemq-type", hval_cstring("order.placed")}, {"x-acemq-version", hval_int(HV_I32, 1)},
        {"x-acemq-correlation", hval_cstring("corr-2")}, {"x-acemq-attempt", hval_int(HV_I32, 1)},
        {"x-acemq-first-seen", hval_int(HV_I64, NOW)},
        {"x-acemq-causation", hval_cstring("99999999-8888-7777-6666-555555555555")},
        {"x-acemq-origin", hval_cstring("orders@host-7")});
    assert_bytes(props_string(&r.out.props, PROP_message_id), "new-1");
    assert_bytes(&r.out.id, "new-1");
    assert_bytes(&r.out.old_id, "99999999-8888-7777-6666-555555555555");
    run_free(&r);

    /* A correlation that had defaulted to the id is written out as the old id; a minted id
     * is a UUID v4. */
    c = json_array_get(json_object_get(doc, "cases"), 0);
    struct message *m = acemq_dead_letter(c);
    htable_remove(m->headers, "x-acemq-correlation");
    o.new_id = NULL;
    o.dlq = "fx.plain.dlq";
    run(&r, m, &o);
    assert_ok(&r);
    assert_int_equal(r.out.id.len, 36);
    assert_int_equal(r.out.id.data[14], '4');
    assert_false(bytes_eq(&r.out.id, &r.out.old_id));
    assert_bytes(hval_str(htable_get(r.out.headers, "x-acemq-correlation")),
                 "f67aff08-6293-4ce2-af9e-1b8797fb8451");
    assert_true(bytes_eq(hval_str(htable_get(r.out.headers, "x-acemq-id")), &r.out.id));
    run_free(&r);
    json_decref(doc);
}

static void test_acemq_changes(void **state)
{
    const char *specs[] = {"type=order.retried", "header.region=eu", "-header.tenant", NULL};
    struct changes cs;
    changes_parse(&cs, specs);
    struct restamp_opts o = {.mode = RESTAMP_REPLAY,
                             .changes = cs.c,
                             .n_changes = cs.n,
                             .now_ms = NOW,
                             .to_exchange = "orders-x",
                             .to_routing_key = "again"};
    struct run r;
    run(&r, acemq_simple(), &o);
    assert_ok(&r);
    assert_string_equal(r.out.target_how, "explicit");
    assert_bytes(&r.out.exchange, "orders-x");
    assert_bytes(&r.out.routing_key, "again");
    /* Unknown x-acemq-* names are written back; broker-owned ones never. */
    ASSERT_HEADERS(
        r.out.headers, {"x-acemq-id", hval_cstring("id-1")},
        {"x-acemq-type", hval_cstring("order.retried")}, {"x-acemq-version", hval_int(HV_I32, 1)},
        {"x-acemq-correlation", hval_cstring("id-1")}, {"x-acemq-attempt", hval_int(HV_I32, 1)},
        {"x-acemq-first-seen", hval_int(HV_I64, NOW)}, {"x-acemq-future", hval_int(HV_I16, 7)},
        {"acemq-replayed-from", hval_cstring("orders.dlq")},
        {"acemq-replayed-at", hval_cstring(NOW_RFC3339)},
        {"acemq-replay-count", hval_int(HV_I32, 1)}, {"region", hval_cstring("eu")});
    run_free(&r);
    changes_free(&cs);

    expect_change(acemq_simple(), "header.x-acemq-id=mine", ST_ERESERVED, "x-acemq-id");
    expect_change(acemq_simple(), "-header.x-acemq-future", ST_ERESERVED, "x-acemq-future");
    expect_change(acemq_simple(), "header.x-death=forged", ST_ERESERVED, "x-death");
    expect_change(acemq_simple(), "-header.x-stream-offset", ST_ERESERVED, "broker");
    expect_change(acemq_simple(), "header.x-first-death-queue=q", ST_ERESERVED, "broker");
    expect_change(acemq_simple(), "-header.nothing", ST_ENOTFOUND, "nothing");
}

static void test_acemq_no_target(void **state)
{
    struct message *m = acemq_simple();
    bytes_free(&m->queue);
    m->queue = bytes_from_cstr("orders");
    struct restamp_opts o = {.mode = RESTAMP_REPLAY, .now_ms = NOW};
    struct run r;
    run(&r, m, &o);
    assert_int_equal(r.st, ST_ENOTFOUND);
    assert_contains(r.err.msg, "give --to EXCHANGE:ROUTING_KEY");
    run_free(&r);

    /* Told the DLQ by name: its suffix gives the source. */
    m = acemq_simple();
    bytes_free(&m->queue);
    m->queue = bytes_from_cstr("");
    o.dlq = "payments.parked";
    run(&r, m, &o);
    assert_ok(&r);
    assert_bytes(&r.out.routing_key, "payments");
    assert_bytes(hval_str(htable_get(r.out.headers, "acemq-replayed-from")), "payments.parked");
    run_free(&r);

    /* Never back onto the queue it is read from. */
    o.dlq = NULL;
    o.to_routing_key = "orders.dlq";
    run(&r, acemq_simple(), &o);
    assert_int_equal(r.st, ST_EINVAL);
    assert_contains(r.err.msg, "orders.dlq");
    run_free(&r);
}

/* ---- BabelQueue -------------------------------------------------------------------- */

static void bq_expect(const char *body, const char *want)
{
    struct restamp_opts o = {.mode = RESTAMP_REPLAY, .now_ms = NOW};
    struct run r;
    run(&r, bq_msg(body), &o);
    assert_ok(&r);
    assert_int_equal(r.out.dialect, &dialect_babelqueue);
    assert_bytes(&r.out.body, want);
    run_free(&r);
}

static void test_bq_replay_fixture(void **state)
{
    struct bytes raw = test_read_fixture("babelqueue/dead-letter.json");
    struct message *m = bq_msg((const char *)raw.data);
    bytes_free(&raw);
    set_prop(m, PROP_message_id, "f1e2d3c4-b5a6-4789-90ab-cdef01234567");
    set_prop(m, PROP_type, "urn:babel:orders:created");
    htable_add(m->headers, "x-schema-version", hval_int(HV_I32, 1));
    htable_add(m->headers, "x-attempts", hval_int(HV_I32, 3));
    htable_add(m->headers, "x-death", xdeath("orders", "", "orders"));
    htable_add(m->headers, "traceparent", hval_cstring("00-abc-def-01"));
    struct restamp_opts o = {.mode = RESTAMP_REPLAY, .now_ms = NOW, .bq_bypass = true};
    struct run r;
    run(&r, m, &o);
    assert_ok(&r);
    assert_bytes(&r.out.body, "{\n"
                              "  \"job\": \"urn:babel:orders:created\",\n"
                              "  \"trace_id\": \"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b\",\n"
                              "  \"data\": {\n"
                              "    \"order_id\": 1042,\n"
                              "    \"amount\": 99.90\n"
                              "  },\n"
                              "  \"meta\": {\n"
                              "    \"id\": \"f1e2d3c4-b5a6-4789-90ab-cdef01234567\",\n"
                              "    \"queue\": \"default\",\n"
                              "    \"lang\": \"php\",\n"
                              "    \"schema_version\": 1,\n"
                              "    \"created_at\": 1749132727000\n"
                              "  },\n"
                              "  \"attempts\": 0\n"
                              "}\n");
    assert_string_equal(r.out.target_how, "dead_letter.original_queue");
    assert_bytes(&r.out.exchange, "");
    assert_bytes(&r.out.routing_key, "orders");
    assert_bytes(&r.out.id, "f1e2d3c4-b5a6-4789-90ab-cdef01234567");
    assert_bytes(props_string(&r.out.props, PROP_message_id),
                 "f1e2d3c4-b5a6-4789-90ab-cdef01234567");
    /* Persistent although the dead letter did not say. */
    assert_true(props_has(&r.out.props, PROP_delivery_mode));
    assert_int_equal(r.out.props.delivery_mode, 2);
    ASSERT_HEADERS(r.out.headers, {"x-schema-version", hval_int(HV_I32, 1)},
                   {"x-attempts", hval_int(HV_I32, 0)},
                   {"traceparent", hval_cstring("00-abc-def-01")},
                   {"bq-replay-bypass", hval_cstring("1")});
    run_free(&r);
}

static void test_bq_byte_edits(void **state)
{
    /* Every top-level dead_letter and attempts, duplicates included. */
    bq_expect("{\"job\":\"j\",\"dead_letter\":{\"a\":1},\"trace_id\":\"t\",\"data\":{}," BQ_META
              ",\"attempts\":3,\"dead_letter\":{\"b\":2},\"attempts\":4}",
              "{\"job\":\"j\",\"trace_id\":\"t\",\"data\":{}," BQ_META
              ",\"attempts\":0,\"attempts\":0}");
    /* dead_letter first, white space kept; an escaped key is the same key. */
    bq_expect(" { \"dead_letter\" : { } ,\n \"job\":\"j\",\"trace_id\":\"t\",\"data\":{}," BQ_META
              ",\"attempts\" :\t7,\"dead\\u005fletter\":null } \n",
              " { \"job\":\"j\",\"trace_id\":\"t\",\"data\":{}," BQ_META ",\"attempts\" :\t0 } \n");
    /* attempts absent: appended before the closing brace, as Python and PHP do. */
    bq_expect("{\"job\":\"j\",\"trace_id\":\"t\",\"data\":{\"x\":1}," BQ_META
              ",\"dead_letter\":{\"attempts\":2,\"original_queue\":\"orders\"}}\n",
              "{\"job\":\"j\",\"trace_id\":\"t\",\"data\":{\"x\":1}," BQ_META ",\"attempts\":0}\n");
    /* Unicode, escapes, number text, unknown keys and a nested dead_letter inside data: all
     * as they were. The forbidden legacy key (timestamp) goes, as the SDKs' re-encode drops
     * it (conformance forbidden_keys). */
    bq_expect("{\"job\":\"urn:babel:x:créé\",\"trace_id\":\"t-ü-1\",\"data\":{\"title\":\"Café — "
              "naïve ☕\",\"esc\":\"\\u00fc\\/\\\"q\\\"\\n\",\"n\":99.90,\"e\":1E+2,\"z\":-0.0,"
              "\"dead_letter\":{\"keep\":[1,{\"attempts\":5}]},\"attempts\":9},\"x-extra\":[\"}\"],"
              "\"timestamp\":1," BQ_META ",\"attempts\":2,\"dead_letter\":{\"reason\":\"failed\"}}",
              "{\"job\":\"urn:babel:x:créé\",\"trace_id\":\"t-ü-1\",\"data\":{\"title\":\"Café — "
              "naïve ☕\",\"esc\":\"\\u00fc\\/\\\"q\\\"\\n\",\"n\":99.90,\"e\":1E+2,\"z\":-0.0,"
              "\"dead_letter\":{\"keep\":[1,{\"attempts\":5}]},\"attempts\":9},\"x-extra\":[\"}\"]"
              "," BQ_META ",\"attempts\":0}");
    /* The unicode fixture: no dead_letter, attempts 2 → 0, nothing else touched. */
    struct bytes raw = test_read_fixture("babelqueue/unicode.json");
    char *want = xstrdup((const char *)raw.data);
    char *at = strstr(want, "\"attempts\":2");
    assert_non_null(at);
    at[11] = '0';
    bq_expect((const char *)raw.data, want);
    free(want);
    bytes_free(&raw);
}

static void test_bq_urn_alias(void **state)
{
    struct bytes raw = test_read_fixture("babelqueue/urn-alias.json");
    struct message *m = bq_msg((const char *)raw.data);
    bytes_free(&raw);
    const char *specs[] = {"type=urn:babel:orders:renamed", NULL};
    struct changes cs;
    changes_parse(&cs, specs);
    struct restamp_opts o = {
        .mode = RESTAMP_REPLAY, .now_ms = NOW, .changes = cs.c, .n_changes = cs.n};
    struct run r;
    run(&r, m, &o);
    assert_ok(&r);
    /* The alias is the key the message has: it is the one edited (no job is invented). */
    assert_bytes(&r.out.body, "{\n"
                              "  \"urn\": \"urn:babel:orders:renamed\",\n"
                              "  \"trace_id\": \"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b\",\n"
                              "  \"data\": {\n"
                              "    \"order_id\": 1042\n"
                              "  },\n"
                              "  \"meta\": {\n"
                              "    \"id\": \"0c9d8e7f-6a5b-4c3d-8e2f-1a0b9c8d7e6f\",\n"
                              "    \"queue\": \"default\",\n"
                              "    \"lang\": \"go\",\n"
                              "    \"schema_version\": 1,\n"
                              "    \"created_at\": 1749132727000\n"
                              "  },\n"
                              "  \"attempts\": 0\n"
                              "}\n");
    assert_string_equal(r.out.target_how, "meta.queue");
    assert_bytes(&r.out.routing_key, "default");
    run_free(&r);
    changes_free(&cs);
}

static void test_bq_reissue(void **state)
{
    struct message *m =
        bq_msg("{\"job\":\"j\",\"trace_id\":\"t\",\"data\":{},\"meta\":{\"id\":\"m-1\",\"queue\":"
               "\"q\",\"lang\":\"go\",\"schema_version\":1,\"created_at\":1749132727000,"
               "\"x\":1},\"attempts\":3,\"dead_letter\":{\"original_queue\":\"orders\"}}");
    set_prop(m, PROP_message_id, "m-1");
    set_prop(m, PROP_correlation_id, "t");
    struct restamp_opts o = {.mode = RESTAMP_REISSUE, .now_ms = NOW, .new_id = "n-\"1\""};
    struct run r;
    run(&r, m, &o);
    assert_ok(&r);
    assert_bytes(&r.out.body, "{\"job\":\"j\",\"trace_id\":\"t\",\"data\":{},\"meta\":{\"id\":"
                              "\"n-\\\"1\\\"\",\"queue\":\"q\",\"lang\":\"go\",\"schema_version\":"
                              "1,\"created_at\":1780000000123,\"x\":1},\"attempts\":0}");
    assert_bytes(&r.out.id, "n-\"1\"");
    assert_bytes(&r.out.old_id, "m-1");
    assert_bytes(props_string(&r.out.props, PROP_message_id), "n-\"1\"");
    assert_bytes(props_string(&r.out.props, PROP_correlation_id), "t");
    assert_bytes(&r.out.routing_key, "orders");
    run_free(&r);
}

static void test_bq_changes(void **state)
{
    struct message *m = bq_msg("{\"job\":\"j\",\"trace_id\":\"t\",\"data\":{}," BQ_META
                               ",\"attempts\":5,\"dead_letter\":{\"original_queue\":\"o\"}}");
    set_prop(m, PROP_type, "j");
    htable_add(m->headers, "x-attempts", hval_uint(HV_U8, 5));
    const char *specs[] = {"type=urn:new", "correlation=a\"b/ü", "attempt=2", "header.tenant=acme",
                           NULL};
    struct changes cs;
    changes_parse(&cs, specs);
    struct restamp_opts o = {
        .mode = RESTAMP_REPLAY, .now_ms = NOW, .changes = cs.c, .n_changes = cs.n};
    struct run r;
    run(&r, m, &o);
    assert_ok(&r);
    assert_bytes(&r.out.body, "{\"job\":\"urn:new\",\"trace_id\":\"a\\\"b/ü\",\"data\":{}," BQ_META
                              ",\"attempts\":2}");
    assert_bytes(props_string(&r.out.props, PROP_type), "urn:new");
    /* correlation_id was not set on the dead letter: it stays unset. */
    assert_null(props_string(&r.out.props, PROP_correlation_id));
    ASSERT_HEADERS(r.out.headers, {"x-attempts", hval_uint(HV_U8, 2)},
                   {"tenant", hval_cstring("acme")});
    run_free(&r);
    changes_free(&cs);

    const char *body = "{\"job\":\"j\",\"trace_id\":\"t\",\"data\":{}," BQ_META ",\"attempts\":1}";
    expect_change(bq_msg(body), "causation=x", ST_EUNSUPPORTED, "no causation field");
    expect_change(bq_msg(body), "version=2", ST_EUNSUPPORTED, "version");
    expect_change(bq_msg(body), "origin=php", ST_EUNSUPPORTED, "meta.lang");
    expect_change(bq_msg(body), "header.x-acemq-id=x", ST_ERESERVED, "x-acemq-id");
    expect_change(bq_msg(body), "header.x-last-death-queue=x", ST_ERESERVED, "broker");
    /* An edit the consumers would reject is refused, naming the rule. */
    expect_change(bq_msg(body), "type= ", ST_EPARSE, "missing_urn");
    expect_change(bq_msg(body), "attempt=-1", ST_EPARSE, "invalid_attempts");
}

static void test_bq_unsupported(void **state)
{
    struct restamp_opts o = {.mode = RESTAMP_REPLAY, .now_ms = NOW};
    struct run r;
    struct bytes raw = test_read_fixture("babelqueue/raw-wrapped.json");
    run(&r, bq_msg((const char *)raw.data), &o);
    assert_int_equal(r.st, ST_EUNSUPPORTED);
    assert_contains(r.err.msg, "undecodable_body");
    run_free(&r);

    /* A new body replaces it, and the mode's edits apply to that. */
    struct bytes nb = bytes_from_cstr("{\"job\":\"j\",\"trace_id\":\"t\",\"data\":{}," BQ_META
                                      ",\"attempts\":1,\"dead_letter\":{}}");
    o.body = &nb;
    run(&r, bq_msg((const char *)raw.data), &o);
    assert_ok(&r);
    assert_bytes(&r.out.body,
                 "{\"job\":\"j\",\"trace_id\":\"t\",\"data\":{}," BQ_META ",\"attempts\":0}");
    /* The dead letter's own original_queue still names the target. */
    assert_bytes(&r.out.routing_key, "orders");
    run_free(&r);
    bytes_free(&nb);

    /* A new body that is no envelope, or not JSON at all. */
    nb = bytes_from_cstr("{\"job\":\"j\",\"data\":{}," BQ_META ",\"attempts\":1}");
    run(&r, bq_msg((const char *)raw.data), &o);
    assert_int_equal(r.st, ST_EPARSE);
    assert_contains(r.err.msg, "missing_trace_id");
    run_free(&r);
    bytes_free(&nb);
    nb = bytes_from_cstr("{\"job\":");
    run(&r, bq_msg((const char *)raw.data), &o);
    assert_int_equal(r.st, ST_EPARSE);
    assert_contains(r.err.msg, "not valid JSON");
    run_free(&r);
    bytes_free(&nb);
    bytes_free(&raw);

    /* app_id says BabelQueue, the body is not an envelope. */
    o.body = NULL;
    run(&r, bq_msg("plain text"), &o);
    assert_int_equal(r.st, ST_EUNSUPPORTED);
    assert_contains(r.err.msg, "malformed_json");
    run_free(&r);
    run(&r, bq_msg("{\"order_id\":1}"), &o);
    assert_int_equal(r.st, ST_EUNSUPPORTED);
    assert_contains(r.err.msg, "not a BabelQueue envelope");
    run_free(&r);

    /* No queue to go back to. */
    run(&r,
        bq_msg("{\"job\":\"j\",\"trace_id\":\"t\",\"data\":{},\"meta\":{\"schema_version\":1},"
               "\"attempts\":1}"),
        &o);
    assert_int_equal(r.st, ST_ENOTFOUND);
    assert_contains(r.err.msg, "give --to");
    run_free(&r);
}

/* ---- plain AMQP -------------------------------------------------------------------- */

static void test_plain(void **state)
{
    struct restamp_opts o = {.mode = RESTAMP_REPLAY, .now_ms = NOW};
    struct run r;
    run(&r, plain_msg(), &o);
    assert_ok(&r);
    assert_int_equal(r.out.dialect, &dialect_amqp);
    assert_string_equal(r.out.target_how, "x-death");
    assert_bytes(&r.out.exchange, "orders-x");
    assert_bytes(&r.out.routing_key, "orders.created");
    assert_true(bytes_eq(&r.out.body, &r.m->body));
    /* Properties unchanged, transient kept transient. */
    struct props *p = &r.out.props;
    assert_int_equal(p->present, r.m->props.present);
    assert_bytes(props_string(p, PROP_message_id), "mid-1");
    assert_int_equal(p->delivery_mode, 1);
    assert_int_equal(p->timestamp, 1770000000);
    assert_bytes(&r.out.id, "mid-1");
    ASSERT_HEADERS(r.out.headers, {"x-custom", hval_uint(HV_U8, 7)},
                   {"trace", hval_bytes("\x01\x02", 2)});
    run_free(&r);

    /* Re-issue: a new message id, correlated to the old one. */
    o.mode = RESTAMP_REISSUE;
    o.new_id = "mid-2";
    run(&r, plain_msg(), &o);
    assert_ok(&r);
    assert_bytes(props_string(&r.out.props, PROP_message_id), "mid-2");
    assert_bytes(props_string(&r.out.props, PROP_correlation_id), "mid-1");
    assert_bytes(&r.out.id, "mid-2");
    assert_bytes(&r.out.old_id, "mid-1");
    run_free(&r);
    struct message *m = plain_msg();
    set_prop(m, PROP_correlation_id, "corr-9");
    run(&r, m, &o);
    assert_ok(&r);
    assert_bytes(props_string(&r.out.props, PROP_correlation_id), "corr-9");
    run_free(&r);

    /* Changes map onto the properties. */
    const char *specs[] = {"id=mid-3",           "type=",         "correlation=c-1",
                           "header.tenant=acme", "-header.trace", NULL};
    struct changes cs;
    changes_parse(&cs, specs);
    o = (struct restamp_opts){
        .mode = RESTAMP_REPLAY, .now_ms = NOW, .changes = cs.c, .n_changes = cs.n};
    run(&r, plain_msg(), &o);
    assert_ok(&r);
    assert_bytes(props_string(&r.out.props, PROP_message_id), "mid-3");
    assert_null(props_string(&r.out.props, PROP_type));
    assert_bytes(props_string(&r.out.props, PROP_correlation_id), "c-1");
    assert_bytes(&r.out.id, "mid-3");
    ASSERT_HEADERS(r.out.headers, {"x-custom", hval_uint(HV_U8, 7)},
                   {"tenant", hval_cstring("acme")});
    run_free(&r);
    changes_free(&cs);

    expect_change(plain_msg(), "attempt=2", ST_EUNSUPPORTED, "plain AMQP");
    expect_change(plain_msg(), "causation=x", ST_EUNSUPPORTED, "causation_id");
    expect_change(plain_msg(), "header.x-acemq-id=x", ST_ERESERVED, "x-acemq-id");
    expect_change(plain_msg(), "-header.x-death", ST_ERESERVED, "x-death");

    /* No history, no target. */
    m = msg_new("orders.dlq", "orders.dlq", NULL, "x");
    o = (struct restamp_opts){.mode = RESTAMP_REPLAY, .now_ms = NOW};
    run(&r, m, &o);
    assert_int_equal(r.st, ST_ENOTFOUND);
    assert_contains(r.err.msg, "give --to EXCHANGE:ROUTING_KEY");
    run_free(&r);
}

static void test_move(void **state)
{
    struct restamp_opts o = {
        .mode = RESTAMP_MOVE, .now_ms = NOW, .to_exchange = "", .to_routing_key = "orders.parked"};
    struct run r;
    run(&r, plain_msg(), &o);
    assert_ok(&r);
    assert_string_equal(r.out.target_how, "explicit");
    assert_bytes(&r.out.routing_key, "orders.parked");
    assert_true(bytes_eq(&r.out.body, &r.m->body));
    assert_bytes(&r.out.id, "mid-1");
    /* Everything but the delivery's counters, x-death included. */
    assert_int_equal(r.out.headers->n, r.m->headers->n - 2);
    assert_null(htable_get(r.out.headers, "x-delivery-count"));
    assert_null(htable_get(r.out.headers, "x-stream-offset"));
    assert_true(
        hval_equal(htable_get(r.out.headers, "x-death"), htable_get(r.m->headers, "x-death")));
    assert_non_null(htable_get(r.out.headers, "x-first-death-reason"));
    run_free(&r);

    /* A BabelQueue move keeps the body as it is, dead_letter and all. */
    const char *body = "{\"job\":\"j\",\"trace_id\":\"t\",\"data\":{}," BQ_META
                       ",\"attempts\":1,\"dead_letter\":{}}";
    run(&r, bq_msg(body), &o);
    assert_ok(&r);
    assert_bytes(&r.out.body, body);
    run_free(&r);

    const char *specs[] = {"type=x", NULL};
    struct changes cs;
    changes_parse(&cs, specs);
    o.changes = cs.c;
    o.n_changes = cs.n;
    run(&r, plain_msg(), &o);
    assert_int_equal(r.st, ST_EINVAL);
    run_free(&r);
    changes_free(&cs);
    o = (struct restamp_opts){.mode = RESTAMP_MOVE, .now_ms = NOW};
    run(&r, plain_msg(), &o);
    assert_int_equal(r.st, ST_EINVAL);
    assert_contains(r.err.msg, "--to");
    run_free(&r);
}

static void test_check_body(void **state)
{
    struct bytes ct = bytes_from_cstr("Application/JSON; charset=utf-8");
    struct bytes good = bytes_from_cstr("[1, \"x\"]"), bad = bytes_from_cstr("{\"a\":}");
    struct error err;
    assert_int_equal(restamp_check_body(&ct, &good, &err), ST_OK);
    assert_int_equal(restamp_check_body(&ct, &bad, &err), ST_EPARSE);
    assert_contains(err.msg, "not valid JSON");
    bytes_free(&ct);
    ct = bytes_from_cstr("text/plain");
    assert_int_equal(restamp_check_body(&ct, &bad, &err), ST_OK);
    assert_int_equal(restamp_check_body(NULL, &bad, &err), ST_OK);
    bytes_free(&ct);

    /* Through restamp_build: a replacement JSON body that does not parse. */
    struct restamp_opts o = {.mode = RESTAMP_REPLAY, .now_ms = NOW, .body = &bad};
    struct run r;
    struct message *m = acemq_simple();
    run(&r, m, &o);
    assert_int_equal(r.st, ST_EPARSE);
    run_free(&r);
    o.body = &good;
    run(&r, acemq_simple(), &o);
    assert_ok(&r);
    assert_bytes(&r.out.body, "[1, \"x\"]");
    run_free(&r);
    bytes_free(&good);
    bytes_free(&bad);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_acemq_replay_fixtures),
        cmocka_unit_test(test_acemq_reissue),
        cmocka_unit_test(test_acemq_changes),
        cmocka_unit_test(test_acemq_no_target),
        cmocka_unit_test(test_bq_replay_fixture),
        cmocka_unit_test(test_bq_byte_edits),
        cmocka_unit_test(test_bq_urn_alias),
        cmocka_unit_test(test_bq_reissue),
        cmocka_unit_test(test_bq_changes),
        cmocka_unit_test(test_bq_unsupported),
        cmocka_unit_test(test_plain),
        cmocka_unit_test(test_move),
        cmocka_unit_test(test_check_body),
    };
    return cmocka_run_group_tests_name("restamp", tests, NULL, NULL);
}
