/*
 * AceMQ envelope: the Java library's fixtures round-trip exactly, and every tolerance rule of
 * Envelope.from_headers holds.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "acemq.h"
#include "hval_amqp.h"
#include "hval_json.h"
#include "util.h"

static json_t *load_fixture_cases(void)
{
    struct bytes raw = test_read_fixture("acemq/envelope-fixtures.json");
    json_error_t je;
    json_t *doc = json_loadb((const char *)raw.data, raw.len, 0, &je);
    bytes_free(&raw);
    assert_non_null(doc);
    assert_string_equal(json_string_value(json_object_get(doc, "generatedBy")),
                        "acemq-java-amqp FixtureGen");
    return doc;
}

static struct htable *fixture_headers(const json_t *c)
{
    struct htable *t = NULL;
    struct error err;
    assert_int_equal(htable_from_json(json_object_get(c, "headers"), "headers", &t, &err), ST_OK);
    return t;
}

/* Values compared the way the fixture can express them: JSON has no integer widths, so an
 * integer is compared by value (and must still be an integer); strings by bytes. */
static bool same_value(const struct hval *a, const struct hval *b)
{
    bool ai = hkind_is_signed(a->kind) || hkind_is_unsigned(a->kind);
    bool bi = hkind_is_signed(b->kind) || hkind_is_unsigned(b->kind);
    if (ai || bi) {
        int64_t x, y;
        return ai && bi && hval_as_int64_lenient(a, &x) && hval_as_int64_lenient(b, &y) && x == y;
    }
    return hval_equal(a, b);
}

static void assert_same_headers(const struct htable *want, const struct htable *got,
                                const char *which)
{
    for (size_t i = 0; i < want->n; i++) {
        const char *name = bytes_cstr(&want->e[i].key);
        const struct hval *g = htable_get(got, name);
        if (!g)
            fail_msg("%s: header %s was lost", which, name);
        if (!same_value(&want->e[i].val, g))
            fail_msg("%s: header %s changed", which, name);
    }
    for (size_t i = 0; i < got->n; i++) {
        const char *name = bytes_cstr(&got->e[i].key);
        if (!htable_get(want, name))
            fail_msg("%s: header %s was gained", which, name);
    }
    assert_int_equal(want->n, got->n);
}

static void test_fixture_round_trip(void **state)
{
    json_t *doc = load_fixture_cases();
    const json_t *cases = json_object_get(doc, "cases");
    assert_true(json_array_size(cases) >= 3);
    size_t i;
    const json_t *c;
    json_array_foreach(cases, i, c)
    {
        const char *name = json_string_value(json_object_get(c, "case"));
        struct htable *h = fixture_headers(c);
        struct bytes rk = bytes_from_cstr(json_string_value(json_object_get(c, "routingKey")));
        struct bytes mid = bytes_from_cstr(json_string_value(json_object_get(c, "messageId")));
        const struct envelope *e = NULL;
        struct error err;
        assert_int_equal(acemq_from_headers(h, &rk, &mid, NULL, 0, &e, &err), ST_OK);
        /* Nothing the fixture carries took a default. */
        assert_int_equal(e->defaulted, 0);
        assert_true(bytes_eq(&e->id, &mid));

        struct htable *out = acemq_to_headers(e, &rk);
        assert_same_headers(h, out, name);
        /* Millisecond timestamps are still integers, in the width Java writes (long). */
        const struct hval *fs = htable_get(out, ACEMQ_FIRST_SEEN);
        assert_non_null(fs);
        assert_int_equal(fs->kind, HV_I64);
        assert_int_equal(fs->v.i, json_integer_value(json_object_get(json_object_get(c, "headers"),
                                                                     ACEMQ_FIRST_SEEN)));
        assert_int_equal(htable_get(out, ACEMQ_VERSION)->kind, HV_I32);
        assert_int_equal(htable_get(out, ACEMQ_ATTEMPT)->kind, HV_I32);
        const struct hval *ra = htable_get(out, ACEMQ_REPLAYED_AT);
        if (ra)
            assert_true(hkind_is_signed(ra->kind));

        /* And through the AMQP wire encoding (librabbitmq's codec) back to an equal envelope. */
        struct bytes wire;
        assert_int_equal(htable_encode_wire(out, &wire, &err), ST_OK);
        struct htable *back = NULL;
        assert_int_equal(htable_decode_wire(wire.data, wire.len, &back, &err), ST_OK);
        assert_true(htable_equal(out, back));
        const struct envelope *e2 = NULL;
        assert_int_equal(acemq_from_headers(back, &rk, &mid, NULL, 0, &e2, &err), ST_OK);
        assert_true(envelope_equal(e, e2));

        envelope_free(e2);
        htable_free(back);
        bytes_free(&wire);
        htable_free(out);
        envelope_free(e);
        bytes_free(&rk);
        bytes_free(&mid);
        htable_free(h);
    }
    json_decref(doc);
}

static void test_fixture_fields(void **state)
{
    json_t *doc = load_fixture_cases();
    const json_t *populated = json_array_get(json_object_get(doc, "cases"), 1);
    assert_string_equal(json_string_value(json_object_get(populated, "case")), "populated");
    struct htable *h = fixture_headers(populated);
    struct bytes rk = bytes_from_cstr("fx.rich");
    const struct envelope *e = NULL;
    assert_int_equal(acemq_from_headers(h, &rk, NULL, NULL, 0, &e, NULL), ST_OK);
    assert_true(bytes_eq_cstr(&e->id, "11111111-2222-3333-4444-555555555555"));
    assert_true(bytes_eq_cstr(&e->type, "order.placed"));
    assert_int_equal(e->version, 3);
    assert_true(bytes_eq_cstr(&e->correlation_id, "corr-1"));
    assert_true(bytes_eq_cstr(&e->causation_id, "cause-1"));
    assert_int_equal(e->attempt, 1);
    assert_int_equal(e->first_seen_ms, 1767323045678LL);
    assert_true(bytes_eq_cstr(&e->origin, "orders@host-7"));
    /* x-tenant is the application's own header. */
    assert_int_equal(e->headers->n, 1);
    assert_non_null(htable_get(e->headers, "x-tenant"));
    assert_true(envelope_age_s(e, 1767323045678LL + 4210) > 4.2099 &&
                envelope_age_s(e, 1767323045678LL + 4210) < 4.2101);
    envelope_free(e);
    htable_free(h);
    bytes_free(&rk);

    const json_t *replayed = json_array_get(json_object_get(doc, "cases"), 2);
    h = fixture_headers(replayed);
    struct acemq_replay r;
    acemq_replay_read(h, &r);
    assert_true(r.present);
    assert_true(bytes_eq_cstr(&r.from, "orders.new.dlq"));
    assert_true(r.has_at);
    assert_int_equal(r.at_ms, 1770091506789LL);
    assert_int_equal(r.count, 2);
    acemq_replay_free(&r);
    htable_free(h);
    json_decref(doc);
}

/* Builds an envelope from a header table with one value under test. */
static const struct envelope *with_header(const char *name, struct hval v, const char *rk)
{
    struct htable *h = htable_new();
    htable_add(h, ACEMQ_ID, hval_cstring("id-1"));
    htable_add(h, name, v);
    struct bytes key = bytes_from_cstr(rk ? rk : "");
    const struct envelope *e = NULL;
    assert_int_equal(acemq_from_headers(h, &key, NULL, NULL, 5000, &e, NULL), ST_OK);
    bytes_free(&key);
    htable_free(h);
    return e;
}

static void expect_attempt(struct hval v, int64_t want, bool defaulted)
{
    const struct envelope *e = with_header(ACEMQ_ATTEMPT, v, "rk");
    assert_int_equal(e->attempt, want);
    assert_int_equal((e->defaulted & ED_ATTEMPT) != 0, defaulted);
    envelope_free(e);
}

static void test_integer_tolerance(void **state)
{
    expect_attempt(hval_int(HV_I8, 3), 3, false);
    expect_attempt(hval_int(HV_I16, 3), 3, false);
    expect_attempt(hval_int(HV_I32, 3), 3, false);
    expect_attempt(hval_int(HV_I64, 3), 3, false);
    expect_attempt(hval_uint(HV_U8, 3), 3, false);
    expect_attempt(hval_uint(HV_U16, 3), 3, false);
    expect_attempt(hval_uint(HV_U32, 3), 3, false);
    expect_attempt(hval_uint(HV_U64, 3), 3, false);
    expect_attempt(hval_cstring("3"), 3, false);
    expect_attempt(hval_cstring(" 3 "), 3, false);
    expect_attempt(hval_cstring("+3"), 3, false);
    expect_attempt(hval_bytes("7", 1), 7, false);
    expect_attempt(hval_f64(3.0), 3, false); /* Go writes floats */
    expect_attempt(hval_f32(4.0f), 4, false);
    /* Unreadable values take the default. */
    expect_attempt(hval_cstring("3.5"), 1, true);
    expect_attempt(hval_cstring("three"), 1, true);
    expect_attempt(hval_cstring(""), 1, true);
    expect_attempt(hval_cstring("99999999999999999999"), 1, true);
    expect_attempt(hval_bool(true), 1, true);
    expect_attempt(hval_void(), 1, true);
    expect_attempt(hval_table(), 1, true);
    expect_attempt(hval_f64(1.0 / 0.0), 1, true);
    expect_attempt(hval_uint(HV_U64, UINT64_MAX), 1, true);
    /* Clamped to at least 1. */
    expect_attempt(hval_int(HV_I32, 0), 1, false);
    expect_attempt(hval_int(HV_I32, -4), 1, false);

    const struct envelope *e = with_header(ACEMQ_VERSION, hval_int(HV_I64, -2), "rk");
    assert_int_equal(e->version, 1);
    envelope_free(e);
    e = with_header(ACEMQ_VERSION, hval_cstring("12"), "rk");
    assert_int_equal(e->version, 12);
    envelope_free(e);
    e = with_header(ACEMQ_FIRST_SEEN, hval_cstring("1788968630038"), "rk");
    assert_int_equal(e->first_seen_ms, 1788968630038LL);
    assert_false(e->defaulted & ED_FIRST_SEEN);
    envelope_free(e);
    e = with_header(ACEMQ_FIRST_SEEN, hval_cstring("yesterday"), "rk");
    assert_int_equal(e->first_seen_ms, 5000); /* now */
    assert_true(e->defaulted & ED_FIRST_SEEN);
    envelope_free(e);
}

static void test_defaults(void **state)
{
    /* type -> routing key -> "message" */
    const struct envelope *e = with_header("x-other", hval_cstring("v"), "orders.created");
    assert_true(bytes_eq_cstr(&e->type, "orders.created"));
    assert_true(e->defaulted & ED_TYPE);
    /* correlation -> id */
    assert_true(bytes_eq_cstr(&e->correlation_id, "id-1"));
    assert_true(e->defaulted & ED_CORRELATION);
    assert_int_equal(e->version, 1);
    assert_int_equal(e->attempt, 1);
    assert_int_equal(e->first_seen_ms, 5000);
    assert_int_equal(e->causation_id.len, 0);
    envelope_free(e);
    e = with_header("x-other", hval_cstring("v"), "");
    assert_true(bytes_eq_cstr(&e->type, "message"));
    envelope_free(e);
    e = with_header(ACEMQ_CORRELATION, hval_cstring(""), "rk");
    assert_true(bytes_eq_cstr(&e->correlation_id, "id-1"));
    envelope_free(e);
    /* A type written as bytes is still text. */
    e = with_header(ACEMQ_TYPE, hval_bytes("order.paid", 10), "rk");
    assert_true(bytes_eq_cstr(&e->type, "order.paid"));
    envelope_free(e);
    /* A type that is not text at all is unreadable: the routing key stands in. */
    e = with_header(ACEMQ_TYPE, hval_table(), "rk");
    assert_true(bytes_eq_cstr(&e->type, "rk"));
    envelope_free(e);
}

static void test_missing_id(void **state)
{
    struct htable *h = htable_new();
    htable_add(h, ACEMQ_TYPE, hval_cstring("t"));
    struct bytes rk = bytes_from_cstr("rk"), mid = bytes_from_cstr("amqp-mid");
    struct bytes digest = bytes_from_cstr("digest-of-the-message");
    const struct envelope *e = NULL, *e2 = NULL, *e3 = NULL;
    /* Java and Go fall back to the message-id property. */
    assert_int_equal(acemq_from_headers(h, &rk, &mid, &digest, 0, &e, NULL), ST_OK);
    assert_true(bytes_eq_cstr(&e->id, "amqp-mid"));
    assert_false(e->defaulted & ED_ID);
    /* Without one, a name-based UUID: the same message always reads the same. */
    assert_int_equal(acemq_from_headers(h, &rk, NULL, &digest, 0, &e2, NULL), ST_OK);
    assert_int_equal(acemq_from_headers(h, &rk, NULL, &digest, 0, &e3, NULL), ST_OK);
    assert_true(e2->defaulted & ED_ID);
    assert_int_equal(e2->id.len, 36);
    assert_int_equal(e2->id.data[14], '5');
    assert_true(bytes_eq(&e2->id, &e3->id));
    assert_true(bytes_eq(&e2->correlation_id, &e2->id));
    envelope_free(e);
    envelope_free(e2);
    envelope_free(e3);
    bytes_free(&rk);
    bytes_free(&mid);
    bytes_free(&digest);
    htable_free(h);
}

static void test_unknown_reserved_kept(void **state)
{
    struct htable *h = htable_new();
    htable_add(h, ACEMQ_ID, hval_cstring("a"));
    htable_add(h, "x-acemq-priority-lane", hval_int(HV_I16, 7));
    htable_add(h, ACEMQ_ROUTE, hval_cstring("validate,charge,ship"));
    htable_add(h, ACEMQ_ROUTE_POSITION, hval_int(HV_I8, 1));
    htable_add(h, ACEMQ_ROUTE_ID, hval_cstring("b0c1"));
    htable_add(h, ACEMQ_ERROR, hval_cstring("exhausted 5 attempts: TimeoutException: slow"));
    htable_add(h, "tenant", hval_cstring("acme"));
    struct bytes rk = bytes_from_cstr("orders.dlq");
    const struct envelope *e = NULL;
    assert_int_equal(acemq_from_headers(h, &rk, NULL, NULL, 0, &e, NULL), ST_OK);
    /* Not the application's ... */
    assert_null(htable_get(e->headers, "x-acemq-priority-lane"));
    assert_null(htable_get(e->headers, ACEMQ_ROUTE));
    assert_int_equal(e->headers->n, 1);
    /* ... but kept, with its kind, and the route carried opaquely. */
    assert_int_equal(e->reserved_unknown->n, 1);
    assert_int_equal(htable_get(e->reserved_unknown, "x-acemq-priority-lane")->kind, HV_I16);
    assert_int_equal(e->route->n, 3);
    assert_int_equal(htable_get(e->route, ACEMQ_ROUTE_POSITION)->kind, HV_I8);
    assert_true(bytes_eq_cstr(&e->error, "exhausted 5 attempts: TimeoutException: slow"));
    /* And written back. */
    struct htable *out = acemq_to_headers(e, &rk);
    assert_true(hval_equal(htable_get(out, "x-acemq-priority-lane"),
                           htable_get(h, "x-acemq-priority-lane")));
    assert_true(
        hval_equal(htable_get(out, ACEMQ_ROUTE_POSITION), htable_get(h, ACEMQ_ROUTE_POSITION)));
    assert_true(hval_equal(htable_get(out, ACEMQ_ERROR), htable_get(h, ACEMQ_ERROR)));
    /* Empty values are absent rather than empty. */
    assert_null(htable_get(out, ACEMQ_CAUSATION));
    assert_null(htable_get(out, ACEMQ_ORIGIN));
    assert_null(htable_get(out, ACEMQ_CLAIM));
    htable_free(out);
    envelope_free(e);
    bytes_free(&rk);
    htable_free(h);
}

static void test_replay_stamps(void **state)
{
    struct htable *h = htable_new();
    htable_add(h, ACEMQ_REPLAYED_AT, hval_cstring("2026-02-03T04:05:06Z"));
    htable_add(h, ACEMQ_REPLAY_COUNT, hval_cstring("4"));
    struct acemq_replay r;
    acemq_replay_read(h, &r);
    assert_true(r.present && r.has_at);
    assert_int_equal(r.at_ms, 1770091506000LL);
    assert_int_equal(r.count, 4);
    acemq_replay_free(&r);
    htable_set(h, ACEMQ_REPLAYED_AT, hval_cstring("2026-02-03T04:05:06.789+01:00"));
    acemq_replay_read(h, &r);
    assert_int_equal(r.at_ms, 1770091506789LL - 3600000);
    acemq_replay_free(&r);
    htable_set(h, ACEMQ_REPLAYED_AT, hval_cstring("last tuesday"));
    htable_set(h, ACEMQ_REPLAY_COUNT, hval_cstring("many"));
    acemq_replay_read(h, &r);
    assert_false(r.has_at);
    assert_true(r.at_unreadable);
    assert_int_equal(r.count, 0);
    acemq_replay_free(&r);
    htable_free(h);
}

static void test_source_queue(void **state)
{
    struct bytes q = bytes_from_cstr("orders.dlq");
    assert_int_equal(acemq_source_queue(&q), 6);
    bytes_free(&q);
    q = bytes_from_cstr("payments.parked");
    assert_int_equal(acemq_source_queue(&q), 8);
    bytes_free(&q);
    q = bytes_from_cstr("legacy.dead");
    assert_int_equal(acemq_source_queue(&q), 6);
    bytes_free(&q);
    q = bytes_from_cstr("orders");
    assert_int_equal(acemq_source_queue(&q), 0);
    bytes_free(&q);
    q = bytes_from_cstr(".dlq");
    assert_int_equal(acemq_source_queue(&q), 0);
    bytes_free(&q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_round_trip), cmocka_unit_test(test_fixture_fields),
        cmocka_unit_test(test_integer_tolerance),  cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_missing_id),         cmocka_unit_test(test_unknown_reserved_kept),
        cmocka_unit_test(test_replay_stamps),      cmocka_unit_test(test_source_queue),
    };
    return cmocka_run_group_tests_name("acemq", tests, NULL, NULL);
}
