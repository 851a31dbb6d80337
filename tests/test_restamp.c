/*
 * restamp: the copy sent back for each dialect and mode — the AceMQ fixtures replayed and
 * re-issued header by header (names, order, kinds, values), BabelQueue bodies edited byte for
 * byte, plain AMQP targets from x-death, MOVE, the refusals (reserved names, fields a dialect
 * does not have, bodies that are not envelopes) — the dead letter untouched every time, and
 * the diff with its JSON form.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "decode.h"
#include "hval_json.h"
#include "restamp_diff.h"
#include "sha256.h"
#include "util.h"

#define NOW 1780000000123LL
#define NOW_RFC3339 "2026-05-28T20:26:40Z"

/* ---- helpers ------------------------------------------------------------------------- */

static struct message *msg_new(const char *queue, const char *rk, const char *ct, const char *body)
{
    struct message *m = xcalloc(1, sizeof *m);
    message_init(m);
    m->queue = bytes_from_cstr(queue);
    m->exchange = bytes_from_cstr("");
    m->routing_key = bytes_from_cstr(rk);
    if (ct)
        props_set_string(&m->props, PROP_content_type, ct, strlen(ct));
    m->body = bytes_from_cstr(body);
    m->headers_present = true;
    m->fetched_at_ms = NOW - 1000;
    return m;
}

static void set_prop(struct message *m, enum prop_flag f, const char *v)
{
    props_set_string(&m->props, f, v, strlen(v));
}

/* x-death as RabbitMQ writes it: one entry. */
static struct hval xdeath(const char *queue, const char *exchange, const char *rk)
{
    struct hval t = hval_table();
    htable_add(t.v.tab, "count", hval_int(HV_I64, 1));
    htable_add(t.v.tab, "reason", hval_cstring("rejected"));
    htable_add(t.v.tab, "queue", hval_cstring(queue));
    htable_add(t.v.tab, "time", hval_uint(HV_TIMESTAMP, 1770000000));
    htable_add(t.v.tab, "exchange", hval_cstring(exchange));
    struct hval rks = hval_array();
    harray_add(&rks.v.arr, hval_cstring(rk));
    htable_add(t.v.tab, "routing-keys", rks);
    struct hval a = hval_array();
    harray_add(&a.v.arr, t);
    return a;
}

struct run {
    struct message *m, *orig;
    struct decoded d;
    const struct envelope *env;
    struct outgoing out;
    struct error err;
    enum status st;
};

/* Decodes m, builds the copy, and checks the dead letter and its envelope are untouched. */
static enum status run(struct run *r, struct message *m, const struct restamp_opts *o)
{
    memset(r, 0, sizeof *r);
    r->m = m;
    r->orig = message_copy(m);
    decode_message(m, NOW, &r->d);
    assert_int_equal(envelope_with(r->d.env, NULL, 0, &r->env, NULL), ST_OK);
    error_clear(&r->err);
    r->st = restamp_build(&r->d, o, &r->out, &r->err);
    /* Built: every field owned and set; failed: zeroed, nothing to free. */
    if (r->st == ST_OK)
        assert_non_null(r->out.headers);
    else
        assert_null(r->out.headers);
    assert_true(message_equal(r->orig, m));
    assert_true(envelope_equal(r->env, r->d.env));
    return r->st;
}

static void run_free(struct run *r)
{
    outgoing_free(&r->out);
    decoded_free(&r->d);
    envelope_free(r->env);
    message_free(r->orig);
    free(r->orig);
    message_free(r->m);
    free(r->m);
}

#define assert_ok(r)                                                                               \
    do {                                                                                           \
        if ((r)->st != ST_OK)                                                                      \
            fail_msg("restamp failed: %s: %s", status_str((r)->st), (r)->err.msg);                 \
    } while (0)

#define assert_bytes(b, str)                                                                       \
    do {                                                                                           \
        const struct bytes *b_ = (b);                                                              \
        if (!bytes_eq_cstr(b_, (str)))                                                             \
            fail_msg("%s is \"%.*s\", not \"%s\"", #b, (int)b_->len,                               \
                     b_->data ? (const char *)b_->data : "", (str));                               \
    } while (0)

#define assert_contains(s, sub)                                                                    \
    do {                                                                                           \
        if (!strstr((s), (sub)))                                                                   \
            fail_msg("\"%s\" does not say \"%s\"", (s), (sub));                                    \
    } while (0)

struct hx {
    const char *name;
    struct hval v;
};

/* Exactly these headers, in this order, kind-exact. Frees the expected values. */
static void assert_headers(const struct htable *t, struct hx *want, size_t n)
{
    for (size_t i = 0; i < n && i < t->n; i++) {
        if (!bytes_eq_cstr(&t->e[i].key, want[i].name))
            fail_msg("header %zu is %s, not %s", i, bytes_cstr(&t->e[i].key), want[i].name);
        if (!hval_equal(&t->e[i].val, &want[i].v)) {
            json_t *g = hval_to_json(&t->e[i].val);
            char *s = json_dumps(g, JSON_ENCODE_ANY);
            fail_msg("header %s is %s %s, not the %s expected", want[i].name,
                     hkind_name(t->e[i].val.kind), s, hkind_name(want[i].v.kind));
        }
    }
    if (t->n != n)
        fail_msg("%zu headers, not %zu", t->n, n);
    for (size_t i = 0; i < n; i++)
        hval_free(&want[i].v);
}

#define ASSERT_HEADERS(t, ...)                                                                     \
    do {                                                                                           \
        struct hx w_[] = {__VA_ARGS__};                                                            \
        assert_headers((t), w_, sizeof w_ / sizeof *w_);                                           \
    } while (0)

struct changes {
    struct env_change c[8];
    struct hval hv[8];
    size_t n;
};

static void changes_parse(struct changes *cs, const char *const *specs)
{
    cs->n = 0;
    for (; *specs; specs++) {
        struct error err;
        assert_true(cs->n < 8);
        if (env_change_parse(*specs, &cs->c[cs->n], &cs->hv[cs->n], &err) != ST_OK)
            fail_msg("%s: %s", *specs, err.msg);
        cs->n++;
    }
}

static void changes_free(struct changes *cs)
{
    for (size_t i = 0; i < cs->n; i++)
        env_change_release(&cs->c[i], &cs->hv[i]);
}

/* Builds with the changes given, expecting status want; returns the error text. */
static void expect_change(struct message *m, const char *spec, enum status want, const char *says)
{
    const char *specs[] = {spec, NULL};
    struct changes cs;
    changes_parse(&cs, specs);
    struct restamp_opts o = {
        .mode = RESTAMP_REPLAY, .changes = cs.c, .n_changes = cs.n, .now_ms = NOW};
    struct run r;
    run(&r, m, &o);
    if (r.st != want)
        fail_msg("%s: %s (%s), not %s", spec, status_str(r.st), r.err.msg, status_str(want));
    if (says)
        assert_contains(r.err.msg, says);
    assert_null(r.out.body.data);
    assert_null(r.out.id.data);
    run_free(&r);
    changes_free(&cs);
}

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

static struct message *acemq_simple(void)
{
    struct message *m = msg_new("orders.dlq", "orders.dlq", "application/json", "{}");
    htable_add(m->headers, "x-acemq-id", hval_cstring("id-1"));
    htable_add(m->headers, "x-acemq-type", hval_cstring("order.placed"));
    htable_add(m->headers, "x-acemq-future", hval_int(HV_I16, 7));
    htable_add(m->headers, "tenant", hval_cstring("acme"));
    htable_add(m->headers, "x-stream-offset", hval_int(HV_I64, 12));
    return m;
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

#define BQ_META                                                                                    \
    "\"meta\":{\"id\":\"m-1\",\"queue\":\"q\",\"lang\":\"go\",\"schema_version\":1,"               \
    "\"created_at\":1749132727000}"

static struct message *bq_msg(const char *body)
{
    struct message *m = msg_new("orders.dlq", "orders.dlq", "application/json", body);
    set_prop(m, PROP_app_id, "babelqueue");
    return m;
}

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

static struct message *plain_msg(void)
{
    struct message *m = msg_new("orders.dlq", "orders.created", "text/plain", "hello\n");
    set_prop(m, PROP_message_id, "mid-1");
    set_prop(m, PROP_type, "order");
    m->props.timestamp = 1770000000;
    m->props.present |= 1u << PROP_timestamp;
    m->props.delivery_mode = 1;
    m->props.present |= 1u << PROP_delivery_mode;
    htable_add(m->headers, "x-custom", hval_uint(HV_U8, 7));
    htable_add(m->headers, "x-death", xdeath("orders", "orders-x", "orders.created"));
    htable_add(m->headers, "x-first-death-queue", hval_cstring("orders"));
    htable_add(m->headers, "x-first-death-exchange", hval_cstring("orders-x"));
    htable_add(m->headers, "x-first-death-reason", hval_cstring("rejected"));
    htable_add(m->headers, "x-delivery-count", hval_int(HV_I64, 2));
    htable_add(m->headers, "x-stream-offset", hval_int(HV_I64, 99));
    htable_add(m->headers, "trace", hval_bytes("\x01\x02", 2));
    return m;
}

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

/* ---- the diff ---------------------------------------------------------------------- */

static const struct diff_row *row(const struct diff *d, enum diff_section s, const char *name)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->rows[i].section == s && d->rows[i].name && strcmp(d->rows[i].name, name) == 0)
            return &d->rows[i];
    fail_msg("no %s row %s", diff_section_name(s), name);
    abort(); /* not reached: fail_msg leaves the test (cmocka does not mark it noreturn) */
}

static void assert_row(const struct diff_row *r, enum diff_op op, const char *old, const char *nw)
{
    if (!r) {
        fail_msg("no such row");
        abort(); /* not reached */
    }
    if (r->op != op)
        fail_msg("row %s is %s, not %s", r->name ? r->name : "(body)", diff_op_name(r->op),
                 diff_op_name(op));
    if (old)
        assert_string_equal(r->old_text, old);
    else
        assert_null(r->old_text);
    if (nw)
        assert_string_equal(r->new_text, nw);
    else
        assert_null(r->new_text);
}

/* The journal's diff (restamp_changes_json) is diff_to_json of the whole diff, and the copy
 * carries both digests. */
static void assert_changes_and_digests(const struct message *old, const struct outgoing *out,
                                       const struct diff *d, bool body_same)
{
    json_t *whole = diff_to_json(d);
    json_t *changes = restamp_changes_json(old, out);
    char *a = json_dumps(whole, JSON_COMPACT | JSON_PRESERVE_ORDER);
    char *b = json_dumps(changes, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(a, b);
    /* ... and the text the journal holds is that dump, byte for byte, written without it. */
    size_t tl = 0;
    char *t = restamp_changes_text(old, out, &tl);
    assert_non_null(t);
    assert_int_equal(tl, strlen(b));
    assert_string_equal(t, b);
    free(t);
    free(a);
    free(b);
    json_decref(whole);
    json_decref(changes);
    char sha[65];
    sha256_hex(old->body.len ? (const void *)old->body.data : "", old->body.len, sha);
    assert_string_equal(out->old_body_sha256, sha);
    sha256_hex(out->body.len ? (const void *)out->body.data : "", out->body.len, sha);
    assert_string_equal(out->body_sha256, sha);
    if (body_same)
        assert_string_equal(out->body_sha256, out->old_body_sha256);
    else
        assert_string_not_equal(out->body_sha256, out->old_body_sha256);
}

/* plain_msg() replayed with the changes specs, and its diff (freed by the caller: diff_free,
 * run_free, changes_free). */
static void replay_diff(const char *const *specs, struct changes *cs, struct run *r, struct diff *d)
{
    changes_parse(cs, specs);
    struct restamp_opts o = {
        .mode = RESTAMP_REPLAY, .now_ms = NOW, .changes = cs->c, .n_changes = cs->n};
    run(r, plain_msg(), &o);
    assert_ok(r);
    restamp_diff(r->m, &r->out, d);
}

/* Texts the journal's diff must escape as jansson does (quotes, backslashes, control bytes,
 * non-ASCII) or hold as base64 (not UTF-8): restamp_changes_text is still json_dumps's. */
static void test_diff_escapes(void **state)
{
    (void)state;
    const char *specs[][3] = {
        {"header.note=a\"b\\c\td\x01e\x7f\xc3\xa9/\xe2\x80\xa8", "type=t\n", NULL},
        {"header.bin=\xff\xfe", "header.ok=plain", NULL},
    };
    for (size_t k = 0; k < 2; k++) {
        struct changes cs;
        struct run r;
        struct diff d;
        replay_diff(specs[k], &cs, &r, &d);
        assert_changes_and_digests(r.m, &r.out, &d, true);
        diff_free(&d);
        run_free(&r);
        changes_free(&cs);
    }
}

static void test_diff_simple(void **state)
{
    const char *specs[] = {"type=order.v2", "header.tenant=acme", NULL};
    struct changes cs;
    struct run r;
    struct diff d;
    replay_diff(specs, &cs, &r, &d);
    assert_row(row(&d, DIFF_TARGET, "exchange"), DIFF_CHANGED, "", "orders-x");
    assert_row(row(&d, DIFF_TARGET, "routing_key"), DIFF_SAME, "orders.created", "orders.created");
    assert_row(row(&d, DIFF_PROPERTY, "type"), DIFF_CHANGED, "order", "order.v2");
    assert_row(row(&d, DIFF_PROPERTY, "message_id"), DIFF_SAME, "mid-1", "mid-1");
    assert_row(row(&d, DIFF_PROPERTY, "delivery_mode"), DIFF_SAME, "1", "1");
    assert_row(row(&d, DIFF_PROPERTY, "timestamp"), DIFF_SAME, "1770000000 (2026-02-02T02:40:00Z)",
               "1770000000 (2026-02-02T02:40:00Z)");
    assert_row(row(&d, DIFF_HEADER, "x-custom"), DIFF_SAME, "uint8:7", "uint8:7");
    assert_row(row(&d, DIFF_HEADER, "x-delivery-count"), DIFF_REMOVED, "int64:2", NULL);
    assert_row(row(&d, DIFF_HEADER, "x-first-death-queue"), DIFF_REMOVED, "string:orders", NULL);
    assert_row(row(&d, DIFF_HEADER, "tenant"), DIFF_ADDED, NULL, "string:acme");
    const struct diff_row *xd = row(&d, DIFF_HEADER, "x-death");
    assert_int_equal(xd->op, DIFF_REMOVED);
    assert_true(strncmp(xd->old_text, "array:[", 7) == 0);
    /* The body is unchanged: one same row per line. */
    size_t body_rows = 0;
    for (size_t i = 0; i < d.n; i++)
        if (d.rows[i].section == DIFF_BODY) {
            assert_row(&d.rows[i], DIFF_SAME, "hello", "hello");
            body_rows++;
        }
    assert_int_equal(body_rows, 1);
    /* exchange, type, 6 broker-owned headers removed, tenant added. */
    assert_int_equal(d.changed, 2 + 6 + 1);

    assert_changes_and_digests(r.m, &r.out, &d, true);
    json_t *j = diff_to_json(&d);
    assert_int_equal(json_array_size(j), d.changed);
    size_t i;
    json_t *it;
    json_array_foreach(j, i, it)
    {
        assert_string_not_equal(json_string_value(json_object_get(it, "op")), "same");
    }
    char *s = json_dumps(json_array_get(j, 1), JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(s, "{\"section\":\"property\",\"op\":\"changed\",\"name\":\"type\","
                           "\"old\":\"order\",\"new\":\"order.v2\"}");
    free(s);
    s = json_dumps(json_array_get(j, d.changed - 1), JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(s, "{\"section\":\"header\",\"op\":\"added\",\"name\":\"tenant\","
                           "\"old\":null,\"new\":\"string:acme\"}");
    free(s);
    json_decref(j);
    diff_free(&d);
    run_free(&r);
    changes_free(&cs);
}

static void test_diff_body(void **state)
{
    struct restamp_opts o = {.mode = RESTAMP_REPLAY, .now_ms = NOW};
    struct run r;
    run(&r,
        bq_msg("{\"job\":\"j\",\"trace_id\":\"t\",\"data\":{\"n\":99.90},\"meta\":{\"queue\":\"q\","
               "\"schema_version\":1},\"attempts\":3,\"dead_letter\":{\"reason\":\"failed\"}}"),
        &o);
    assert_ok(&r);
    struct diff d;
    restamp_diff(r.m, &r.out, &d);
    static const struct {
        enum diff_op op;
        const char *old, *nw;
    } want[] = {
        {DIFF_SAME, "{", "{"},
        {DIFF_SAME, "  \"job\": \"j\",", "  \"job\": \"j\","},
        {DIFF_SAME, "  \"trace_id\": \"t\",", "  \"trace_id\": \"t\","},
        {DIFF_SAME, "  \"data\": {", "  \"data\": {"},
        {DIFF_SAME, "    \"n\": 99.90", "    \"n\": 99.90"},
        {DIFF_SAME, "  },", "  },"},
        {DIFF_SAME, "  \"meta\": {", "  \"meta\": {"},
        {DIFF_SAME, "    \"queue\": \"q\",", "    \"queue\": \"q\","},
        {DIFF_SAME, "    \"schema_version\": 1", "    \"schema_version\": 1"},
        {DIFF_SAME, "  },", "  },"},
        {DIFF_REMOVED, "  \"attempts\": 3,", NULL},
        {DIFF_REMOVED, "  \"dead_letter\": {", NULL},
        {DIFF_REMOVED, "    \"reason\": \"failed\"", NULL},
        {DIFF_REMOVED, "  }", NULL},
        {DIFF_ADDED, NULL, "  \"attempts\": 0"},
        {DIFF_SAME, "}", "}"},
    };
    size_t k = 0;
    for (size_t i = 0; i < d.n; i++) {
        if (d.rows[i].section != DIFF_BODY)
            continue;
        assert_true(k < sizeof want / sizeof *want);
        assert_null(d.rows[i].name);
        assert_row(&d.rows[i], want[k].op, want[k].old, want[k].nw);
        k++;
    }
    assert_int_equal(k, sizeof want / sizeof *want);
    assert_changes_and_digests(r.m, &r.out, &d, false);
    diff_free(&d);

    /* Binary bodies: hex lines of 16 bytes. */
    static const unsigned char bin[20] = {0xff, 0x00, 1,  2,  3,  4,  5,  6,  7,  8,
                                          9,    10,   11, 12, 13, 14, 15, 16, 17, 18};
    struct message *old = msg_new("q", "q", "application/octet-stream", "");
    bytes_free(&old->body);
    old->body = bytes_dup(bin, sizeof bin);
    struct outgoing copy = r.out;
    copy.body = bytes_dup(bin, 16);
    copy.props = old->props;
    restamp_diff(old, &copy, &d);
    size_t rows = 0;
    for (size_t i = 0; i < d.n; i++)
        rows += d.rows[i].section == DIFF_BODY;
    assert_int_equal(rows, 2);
    const struct diff_row *b0 = NULL;
    for (size_t i = 0; i < d.n && !b0; i++)
        if (d.rows[i].section == DIFF_BODY)
            b0 = &d.rows[i];
    if (!b0) {
        fail_msg("no body row");
        abort(); /* not reached */
    }
    assert_row(b0, DIFF_SAME,
               "00000000  ff 00 01 02 03 04 05 06  07 08 09 0a 0b 0c 0d 0e  |................|",
               "00000000  ff 00 01 02 03 04 05 06  07 08 09 0a 0b 0c 0d 0e  |................|");
    assert_row(b0 + 1, DIFF_REMOVED,
               "00000010  0f 10 11 12                                       |....|", NULL);
    bytes_free(&copy.body);
    diff_free(&d);
    message_free(old);
    free(old);

    /* Past the cap: one removed/added pair naming sizes and digests. */
    struct strbuf big;
    sb_init(&big);
    for (int i = 0; i < 2500; i++)
        sb_addf(&big, "line %d\n", i);
    old = msg_new("q", "q", "text/plain", big.buf);
    copy = r.out;
    copy.body = bytes_dup(big.buf, big.len - 1);
    copy.props = old->props;
    restamp_diff(old, &copy, &d);
    rows = 0;
    for (size_t i = 0; i < d.n; i++)
        if (d.rows[i].section == DIFF_BODY) {
            assert_int_equal(d.rows[i].op, rows++ ? DIFF_ADDED : DIFF_REMOVED);
            assert_contains(d.rows[i].op == DIFF_ADDED ? d.rows[i].new_text : d.rows[i].old_text,
                            "bytes, sha256 ");
        }
    assert_int_equal(rows, 2);
    bytes_free(&copy.body);
    diff_free(&d);
    message_free(old);
    free(old);
    sb_free(&big);
    run_free(&r);
}

/* ---- the kind of a header edit (issue 16.6) -------------------------------------------- */

/* Builds m with the one change spec and checks the copy's header name is want (kind-exact). */
static void header_after(struct message *m, const char *spec, const char *name, struct hval want)
{
    const char *specs[] = {spec, NULL};
    struct changes cs;
    changes_parse(&cs, specs);
    struct restamp_opts o = {
        .mode = RESTAMP_REPLAY, .changes = cs.c, .n_changes = cs.n, .now_ms = NOW};
    struct run r;
    if (run(&r, m, &o) != ST_OK)
        fail_msg("%s: %s", spec, r.err.msg);
    const struct hval *got = htable_get(r.out.headers, name);
    if (!got)
        fail_msg("%s: the copy has no header %s", spec, name);
    if (!hval_equal(got, &want)) {
        char *g = json_dumps(hval_to_json(got), JSON_ENCODE_ANY);
        fail_msg("%s: header %s is %s %s, not %s", spec, name, hkind_name(got->kind), g,
                 hkind_name(want.kind));
    }
    hval_free(&want);
    run_free(&r);
    changes_free(&cs);
}

static struct message *acemq_typed(void)
{
    struct message *m = acemq_simple();
    htable_add(m->headers, "n", hval_int(HV_I32, 1));
    htable_add(m->headers, "small", hval_uint(HV_U8, 7));
    htable_add(m->headers, "price", hval_f64(9.5));
    htable_add(m->headers, "vip", hval_bool(true));
    htable_add(m->headers, "raw", hval_bytes("\x01", 1));
    htable_add(m->headers, "amount", hval_decimal(2, 1999));
    return m;
}

static void test_header_kinds(void **state)
{
    /* An edit without a kind keeps the kind of the header it replaces... */
    header_after(acemq_typed(), "header.n=2", "n", hval_int(HV_I32, 2));
    header_after(acemq_typed(), "header.n=-2147483648", "n", hval_int(HV_I32, INT32_MIN));
    header_after(acemq_typed(), "header.small=255", "small", hval_uint(HV_U8, 255));
    header_after(acemq_typed(), "header.price=3.25", "price", hval_f64(3.25));
    header_after(acemq_typed(), "header.vip=false", "vip", hval_bool(false));
    header_after(acemq_typed(), "header.raw=ab", "raw", hval_bytes("ab", 2));
    header_after(acemq_typed(), "header.tenant=globex", "tenant", hval_cstring("globex"));
    /* ...a kind given is the kind sent, and a new header without one is a string. */
    header_after(acemq_typed(), "header.n:string=2", "n", hval_cstring("2"));
    header_after(acemq_typed(), "header.n:int64=2", "n", hval_int(HV_I64, 2));
    header_after(acemq_typed(), "header.region=7", "region", hval_cstring("7"));
    /* The same on plain AMQP and BabelQueue messages. */
    header_after(plain_msg(), "header.x-custom=9", "x-custom", hval_uint(HV_U8, 9));
    struct message *bq =
        bq_msg("{\"job\":\"j\",\"trace_id\":\"t\"," BQ_META ",\"data\":{},\"attempts\":1}");
    htable_add(bq->headers, "x-priority", hval_int(HV_I16, 3));
    header_after(bq, "header.x-priority=4", "x-priority", hval_int(HV_I16, 4));
    /* A value that does not read as the kind is refused, naming the kind and the typed form. */
    expect_change(acemq_typed(), "header.n=abc", ST_EINVAL, "header.n:string=abc");
    expect_change(acemq_typed(), "header.n=abc", ST_EINVAL, "is int32 in the dead letter");
    expect_change(acemq_typed(), "header.n=2147483648", ST_EINVAL, "int32");
    expect_change(acemq_typed(), "header.small=256", ST_EINVAL, "uint8");
    expect_change(acemq_typed(), "header.small=-1", ST_EINVAL, "uint8");
    expect_change(acemq_typed(), "header.vip=yes", ST_EINVAL, "bool");
    expect_change(acemq_typed(), "header.price=cheap", ST_EINVAL, "double");
    expect_change(acemq_typed(), "header.amount=20", ST_EINVAL, "header.amount:string=20");
    expect_change(plain_msg(), "header.x-custom=many", ST_EINVAL, "uint8");
    /* Reserved names are still refused as reserved, whatever their kind. */
    expect_change(plain_msg(), "header.x-death=forged", ST_ERESERVED, "x-death");
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
        cmocka_unit_test(test_diff_simple),
        cmocka_unit_test(test_diff_escapes),
        cmocka_unit_test(test_diff_body),
        cmocka_unit_test(test_header_kinds),
    };
    return cmocka_run_group_tests_name("restamp", tests, NULL, NULL);
}
