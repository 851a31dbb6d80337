/*
 * The neutral envelope: built once, changed only by `with` into a new envelope, compared
 * field by field, headers included.
 */
#include "testutil.h"

#include <string.h>

#include "envelope.h"

static const struct envelope *base(void)
{
    struct htable *h = htable_new();
    htable_add(h, "tenant", hval_cstring("acme"));
    htable_add(h, "n", hval_int(HV_I16, 7));
    struct envelope_init in;
    memset(&in, 0, sizeof in);
    in.id = bytes_from_cstr("id-1");
    in.type = bytes_from_cstr("order.placed");
    in.version = 0;  /* clamped */
    in.attempt = -3; /* clamped */
    in.first_seen_ms = 1000;
    in.headers = h;
    in.refuse_reserved = true;
    const struct envelope *e = NULL;
    assert_int_equal(envelope_new(&in, &e, NULL), ST_OK);
    bytes_free(&in.id);
    bytes_free(&in.type);
    htable_free(h);
    return e;
}

static void test_new_defaults(void **state)
{
    const struct envelope *e = base();
    assert_int_equal(e->version, 1);
    assert_int_equal(e->attempt, 1);
    assert_true(bytes_eq_cstr(&e->correlation_id, "id-1"));
    assert_int_equal(e->headers->n, 2);
    assert_non_null(e->route);
    assert_non_null(e->reserved_unknown);
    envelope_free(e);
}

static void test_reserved_refused(void **state)
{
    struct htable *h = htable_new();
    htable_add(h, "x-acemq-id", hval_cstring("mine"));
    htable_add(h, "x-acemq-anything", hval_cstring("x"));
    struct envelope_init in;
    memset(&in, 0, sizeof in);
    in.id = bytes_from_cstr("id");
    in.headers = h;
    in.refuse_reserved = true;
    const struct envelope *e = NULL;
    struct error err;
    error_clear(&err);
    assert_int_equal(envelope_new(&in, &e, &err), ST_ERESERVED);
    assert_null(e);
    assert_non_null(strstr(err.msg, "x-acemq-id, x-acemq-anything"));
    bytes_free(&in.id);
    htable_free(h);
}

static void test_with_is_a_new_envelope(void **state)
{
    const struct envelope *e = base();
    const struct envelope *copy = NULL;
    assert_int_equal(envelope_with(e, NULL, 0, &copy, NULL), ST_OK);
    assert_true(envelope_equal(e, copy));
    assert_ptr_not_equal(e, copy);

    /* The seed's with(type: …, causation_id: incoming.id). */
    struct hval tier = hval_cstring("gold");
    struct env_change ch[] = {
        {.field = EF_TYPE, .text = bytes_from_cstr("shipment.requested")},
        {.field = EF_CAUSATION, .text = bytes_from_cstr("id-1")},
        {.field = EF_ATTEMPT, .number = 4},
        {.field = EF_HEADER_SET, .header = "tier", .value = &tier},
        {.field = EF_HEADER_SET, .header = "tenant", .value = &tier},
        {.field = EF_HEADER_REMOVE, .header = "n"},
    };
    const struct envelope *out = NULL;
    assert_int_equal(envelope_with(e, ch, sizeof ch / sizeof *ch, &out, NULL), ST_OK);
    assert_true(bytes_eq_cstr(&out->type, "shipment.requested"));
    assert_true(bytes_eq_cstr(&out->causation_id, "id-1"));
    assert_int_equal(out->attempt, 4);
    assert_true(bytes_eq_cstr(&out->id, "id-1"));
    assert_int_equal(out->headers->n, 2);
    assert_true(bytes_eq_cstr(hval_str(htable_get(out->headers, "tenant")), "gold"));
    assert_null(htable_get(out->headers, "n"));
    /* The original is untouched. */
    assert_true(envelope_equal(e, copy));
    assert_true(bytes_eq_cstr(&e->type, "order.placed"));
    assert_int_equal(e->headers->n, 2);
    assert_false(envelope_equal(e, out));
    envelope_free(out);
    envelope_free(copy);
    envelope_free(e);
    bytes_free(&ch[0].text);
    bytes_free(&ch[1].text);
    hval_free(&tier);
}

static void test_with_refuses(void **state)
{
    const struct envelope *e = base();
    struct hval v = hval_cstring("x");
    struct env_change reserved = {.field = EF_HEADER_SET, .header = "x-acemq-id", .value = &v};
    const struct envelope *out = NULL;
    struct error err;
    assert_int_equal(envelope_with(e, &reserved, 1, &out, &err), ST_ERESERVED);
    assert_null(out);
    struct env_change missing = {.field = EF_HEADER_REMOVE, .header = "nope"};
    assert_int_equal(envelope_with(e, &missing, 1, &out, &err), ST_ENOTFOUND);
    struct env_change empty_id = {.field = EF_ID};
    assert_int_equal(envelope_with(e, &empty_id, 1, &out, &err), ST_EINVAL);
    /* A version below 1 is clamped, as construction does. */
    struct env_change v0 = {.field = EF_VERSION, .number = 0};
    assert_int_equal(envelope_with(e, &v0, 1, &out, &err), ST_OK);
    assert_int_equal(out->version, 1);
    envelope_free(out);
    envelope_free(e);
    hval_free(&v);
}

static void test_equality_covers_every_field(void **state)
{
    const struct envelope *e = base();
    struct hval v16 = hval_int(HV_I16, 7), v32 = hval_int(HV_I32, 7);
    struct env_change changes[] = {
        {.field = EF_ID, .text = bytes_from_cstr("id-2")},
        {.field = EF_TYPE, .text = bytes_from_cstr("t2")},
        {.field = EF_VERSION, .number = 2},
        {.field = EF_CORRELATION, .text = bytes_from_cstr("c2")},
        {.field = EF_CAUSATION, .text = bytes_from_cstr("p")},
        {.field = EF_ATTEMPT, .number = 2},
        {.field = EF_FIRST_SEEN, .number = 2},
        {.field = EF_ORIGIN, .text = bytes_from_cstr("o")},
        {.field = EF_ERROR, .text = bytes_from_cstr("e")},
        {.field = EF_CLAIM, .text = bytes_from_cstr("c")},
        {.field = EF_HEADER_SET, .header = "n", .value = &v32}, /* same value, other width */
    };
    for (size_t i = 0; i < sizeof changes / sizeof *changes; i++) {
        const struct envelope *out = NULL;
        assert_int_equal(envelope_with(e, &changes[i], 1, &out, NULL), ST_OK);
        if (envelope_equal(e, out))
            fail_msg("change %zu is not seen by envelope_equal", i);
        envelope_free(out);
    }
    struct env_change same = {.field = EF_HEADER_SET, .header = "n", .value = &v16};
    const struct envelope *out = NULL;
    assert_int_equal(envelope_with(e, &same, 1, &out, NULL), ST_OK);
    assert_true(envelope_equal(e, out));
    envelope_free(out);
    for (size_t i = 0; i < sizeof changes / sizeof *changes; i++)
        bytes_free(&changes[i].text);
    envelope_free(e);
}

static void test_change_parse(void **state)
{
    struct env_change c;
    struct hval hv;
    struct error err;
    assert_int_equal(env_change_parse("type=order.retried", &c, &hv, &err), ST_OK);
    assert_int_equal(c.field, EF_TYPE);
    assert_true(bytes_eq_cstr(&c.text, "order.retried"));
    env_change_release(&c, &hv);
    assert_int_equal(env_change_parse("attempt=3", &c, &hv, &err), ST_OK);
    assert_int_equal(c.number, 3);
    env_change_release(&c, &hv);
    assert_int_equal(env_change_parse("header.tenant=acme", &c, &hv, &err), ST_OK);
    assert_int_equal(c.field, EF_HEADER_SET);
    assert_string_equal(c.header, "tenant");
    assert_true(bytes_eq_cstr(hval_str(c.value), "acme"));
    env_change_release(&c, &hv);
    assert_int_equal(env_change_parse("-header.tenant", &c, &hv, &err), ST_OK);
    assert_int_equal(c.field, EF_HEADER_REMOVE);
    env_change_release(&c, &hv);
    assert_int_equal(env_change_parse("attempt=three", &c, &hv, &err), ST_EINVAL);
    assert_int_equal(env_change_parse("colour=red", &c, &hv, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "unknown field"));
    assert_int_equal(env_change_parse("type", &c, &hv, &err), ST_EINVAL);
    /* Typed header values: header.NAME:KIND=VALUE. */
    assert_int_equal(env_change_parse("header.retries:int32=3", &c, &hv, &err), ST_OK);
    assert_string_equal(c.header, "retries");
    assert_int_equal(c.value->kind, HV_I32);
    assert_int_equal(c.value->v.i, 3);
    env_change_release(&c, &hv);
    assert_int_equal(env_change_parse("header.big:uint64=18446744073709551615", &c, &hv, &err),
                     ST_OK);
    assert_int_equal(c.value->kind, HV_U64);
    assert_true(c.value->v.u == UINT64_MAX);
    env_change_release(&c, &hv);
    assert_int_equal(env_change_parse("header.ok:bool=true", &c, &hv, &err), ST_OK);
    assert_true(c.value->v.b);
    env_change_release(&c, &hv);
    assert_int_equal(env_change_parse("header.x:int8=200", &c, &hv, &err), ST_EINVAL);
    assert_int_equal(env_change_parse("header.x:uint8=-1", &c, &hv, &err), ST_EINVAL);
    assert_int_equal(env_change_parse("header.x:colour=1", &c, &hv, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "unknown kind"));
    assert_int_equal(env_change_parse("header.x:table=1", &c, &hv, &err), ST_EUNSUPPORTED);
    assert_int_equal(env_change_parse("header.url:string=http://a", &c, &hv, &err), ST_OK);
    assert_string_equal(c.header, "url");
    env_change_release(&c, &hv);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_defaults),
        cmocka_unit_test(test_reserved_refused),
        cmocka_unit_test(test_with_is_a_new_envelope),
        cmocka_unit_test(test_with_refuses),
        cmocka_unit_test(test_equality_covers_every_field),
        cmocka_unit_test(test_change_parse),
    };
    return cmocka_run_group_tests_name("envelope", tests, NULL, NULL);
}
