/*
 * Typed values: every AMQP kind survives the snapshot JSON form and the wire codec exactly,
 * equality is kind-exact, and the lenient readers read what AceMQ's readers read.
 */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "hval_amqp.h"
#include "hval_json.h"
#include "sha256.h"
#include "util.h"

/* One table holding every kind, awkward values included. */
static struct htable *every_kind(void)
{
    struct htable *t = htable_new();
    htable_add(t, "void", hval_void());
    htable_add(t, "bool", hval_bool(true));
    htable_add(t, "i8", hval_int(HV_I8, -128));
    htable_add(t, "u8", hval_uint(HV_U8, 255));
    htable_add(t, "i16", hval_int(HV_I16, -32768));
    htable_add(t, "u16", hval_uint(HV_U16, 65535));
    htable_add(t, "i32", hval_int(HV_I32, INT32_MIN));
    htable_add(t, "u32", hval_uint(HV_U32, UINT32_MAX));
    htable_add(t, "i64", hval_int(HV_I64, INT64_MIN));
    htable_add(t, "u64", hval_uint(HV_U64, UINT64_MAX));
    htable_add(t, "f32", hval_f32(0.1f));
    htable_add(t, "f64", hval_f64(0.1));
    htable_add(t, "nan", hval_f64((double)NAN));
    htable_add(t, "inf", hval_f32(-INFINITY));
    htable_add(t, "dec", hval_decimal(2, 12345));
    htable_add(t, "ts", hval_uint(HV_TIMESTAMP, 1767323045));
    htable_add(t, "str", hval_cstring("h\xc3\xa9llo \"q\" \\ /"));
    htable_add(t, "nul", hval_string("a\0b", 3));
    htable_add(t, "latin1", hval_string("caf\xe9", 4));
    htable_add(t, "bytes", hval_bytes("\x00\xff\x10", 3));
    htable_add(t, "textbytes", hval_bytes("abc", 3));
    struct hval arr = hval_array();
    harray_add(&arr.v.arr, hval_int(HV_I32, 1));
    harray_add(&arr.v.arr, hval_cstring("two"));
    struct hval inner = hval_table();
    htable_add(inner.v.tab, "count", hval_int(HV_I64, 3));
    htable_add(inner.v.tab, "time", hval_uint(HV_TIMESTAMP, 1700000000));
    harray_add(&arr.v.arr, inner);
    htable_add(t, "arr", arr);
    struct hval dup = hval_table();
    htable_add(dup.v.tab, "k", hval_int(HV_I8, 1));
    htable_add(dup.v.tab, "k", hval_int(HV_I8, 2));
    htable_addn(dup.v.tab, "\xff\xfe", 2, hval_void());
    htable_add(t, "dupkeys", dup);
    struct hval looks_typed = hval_table();
    htable_add(looks_typed.v.tab, "type", hval_cstring("int8"));
    htable_add(looks_typed.v.tab, "value", hval_int(HV_I64, 5));
    htable_add(t, "looks-typed", looks_typed);
    htable_add(t, "empty-table", hval_table());
    htable_add(t, "empty-array", hval_array());
    htable_add(t, "empty-str", hval_cstring(""));
    return t;
}

static void test_json_round_trip_every_kind(void **state)
{
    struct htable *t = every_kind();
    json_t *j = htable_to_json(t);
    char *text = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    /* Through text, as a snapshot file carries it. */
    json_error_t je;
    json_t *back = json_loads(text, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &je);
    assert_non_null(back);
    struct htable *t2 = NULL;
    struct error err;
    assert_int_equal(htable_from_json(back, "headers", &t2, &err), ST_OK);
    assert_true(htable_equal(t, t2));
    json_decref(back);
    free(text);
    htable_free(t2);
    htable_free(t);
}

static void test_wire_round_trip_every_kind(void **state)
{
    struct htable *t = every_kind();
    struct bytes wire;
    struct error err;
    assert_int_equal(htable_encode_wire(t, &wire, &err), ST_OK);
    struct htable *t2 = NULL;
    assert_int_equal(htable_decode_wire(wire.data, wire.len, &t2, &err), ST_OK);
    assert_true(htable_equal(t, t2));
    /* Encoding again gives the same bytes. */
    struct bytes wire2;
    assert_int_equal(htable_encode_wire(t2, &wire2, &err), ST_OK);
    assert_true(bytes_eq(&wire, &wire2));
    bytes_free(&wire);
    bytes_free(&wire2);
    htable_free(t2);
    htable_free(t);
}

static void test_wire_malformed(void **state)
{
    struct htable *t = NULL;
    struct error err;
    /* Length says 100 bytes, 3 follow. */
    assert_int_equal(htable_decode_wire("\x00\x00\x00\x64"
                                        "abc",
                                        7, &t, &err),
                     ST_EPARSE);
    /* Unknown field kind 'Z'. */
    static const unsigned char bad[] = {0, 0, 0, 4, 1, 'k', 'Z', 0};
    assert_int_equal(htable_decode_wire(bad, sizeof bad, &t, &err), ST_EPARSE);
    assert_null(t);
}

static void wire_round_trips(const struct htable *t)
{
    struct bytes wire = {0, NULL};
    struct error err;
    error_clear(&err);
    if (htable_encode_wire(t, &wire, &err) != ST_OK)
        fail_msg("htable_encode_wire: %s", err.msg);
    struct htable *back = NULL;
    assert_int_equal(htable_decode_wire(wire.data, wire.len, &back, &err), ST_OK);
    assert_true(htable_equal(t, back));
    htable_free(back);
    bytes_free(&wire);
}

/* Past 16 KB, wherever the encoder's buffer would end: librabbitmq says "invalid AMQP data"
 * (not "table too big") when it is a kind letter that does not fit, and such tables failed. */
static void test_wire_large_tables(void **state)
{
    (void)state;
    char k[16];
    for (size_t n = 1500; n <= 24000; n += 1500) { /* 21 KB to 312 KB */
        struct htable *t = htable_new();
        for (size_t i = 0; i < n; i++) {
            snprintf(k, sizeof k, "k%06zu", i);
            htable_add(t, k, hval_int(HV_I32, (int64_t)i));
        }
        wire_round_trips(t);
        htable_free(t);
    }
    /* 3,344 tables nested in each other (23 KB), and arrays of them. */
    for (int arrays = 0; arrays < 2; arrays++) {
        struct hval v = hval_table();
        for (int i = 0; i < 3344; i++) {
            struct hval outer = arrays && i % 2 ? hval_array() : hval_table();
            if (outer.kind == HV_ARRAY)
                harray_add(&outer.v.arr, v);
            else
                htable_add(outer.v.tab, "n", v);
            v = outer;
        }
        struct htable *t = htable_new();
        htable_add(t, "deep", v);
        wire_round_trips(t);
        htable_free(t);
    }
}

static void test_plain_json_kinds(void **state)
{
    json_error_t je;
    json_t *j = json_loads("{\"s\":\"x\",\"i\":3,\"d\":1.5,\"b\":false,\"n\":null,"
                           "\"a\":[1],\"o\":{\"k\":\"v\"}}",
                           0, &je);
    struct htable *t = NULL;
    assert_int_equal(htable_from_json(j, "headers", &t, NULL), ST_OK);
    assert_int_equal(htable_get(t, "s")->kind, HV_STRING);
    assert_int_equal(htable_get(t, "i")->kind, HV_I64);
    assert_int_equal(htable_get(t, "d")->kind, HV_F64);
    assert_int_equal(htable_get(t, "b")->kind, HV_BOOL);
    assert_int_equal(htable_get(t, "n")->kind, HV_VOID);
    assert_int_equal(htable_get(t, "a")->kind, HV_ARRAY);
    assert_int_equal(htable_get(t, "o")->kind, HV_TABLE);
    /* Order is the file's order. */
    assert_true(bytes_eq_cstr(&t->e[0].key, "s"));
    assert_true(bytes_eq_cstr(&t->e[6].key, "o"));
    htable_free(t);
    json_decref(j);
}

static void expect_json_error(const char *text, const char *needle)
{
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    assert_non_null(j);
    struct hval v;
    struct error err;
    error_clear(&err);
    assert_int_not_equal(hval_from_json(j, "headers.x", &v, &err), ST_OK);
    if (!strstr(err.msg, needle))
        fail_msg("error \"%s\" does not mention \"%s\"", err.msg, needle);
    json_decref(j);
}

static void test_typed_errors(void **state)
{
    expect_json_error("{\"type\":\"int8\",\"value\":300}", "out of range for int8");
    expect_json_error("{\"type\":\"uint8\",\"value\":-1}", "out of range");
    expect_json_error("{\"type\":\"int99\",\"value\":1}", "must name an AMQP field kind");
    expect_json_error("{\"type\":\"int32\"}", "needs \"value\"");
    expect_json_error("{\"type\":\"int32\",\"value\":\"3\"}", "must be an integer");
    expect_json_error("{\"type\":\"bytes\",\"base64\":\"%%%\"}", "invalid base64");
    expect_json_error("{\"type\":\"decimal\",\"value\":1}", "decimal value");
    expect_json_error("{\"type\":\"int8\",\"value\":1,\"extra\":2}", "only \"type\" and \"value\"");
    expect_json_error("{\"type\":\"uint64\",\"value\":\"18446744073709551616\"}",
                      "is not a uint64");
}

static void test_uint64_as_string(void **state)
{
    json_error_t je;
    json_t *j = json_loads("{\"type\":\"uint64\",\"value\":\"18446744073709551615\"}", 0, &je);
    struct hval v;
    assert_int_equal(hval_from_json(j, "x", &v, NULL), ST_OK);
    assert_int_equal(v.kind, HV_U64);
    assert_true(v.v.u == UINT64_MAX);
    json_decref(j);
}

static void test_equality_is_kind_exact(void **state)
{
    struct hval a = hval_int(HV_I32, 1), b = hval_int(HV_I64, 1), c = hval_uint(HV_U32, 1);
    assert_false(hval_equal(&a, &b));
    assert_false(hval_equal(&a, &c));
    struct hval s = hval_cstring("x"), x = hval_bytes("x", 1);
    assert_false(hval_equal(&s, &x));
    struct hval n1 = hval_f64((double)NAN), n2 = hval_f64((double)NAN);
    assert_true(hval_equal(&n1, &n2)); /* bit pattern, so a NaN header equals itself */
    struct htable *t1 = htable_new(), *t2 = htable_new();
    htable_add(t1, "a", hval_int(HV_I8, 1));
    htable_add(t1, "b", hval_int(HV_I8, 2));
    htable_add(t2, "b", hval_int(HV_I8, 2));
    htable_add(t2, "a", hval_int(HV_I8, 1));
    assert_false(htable_equal(t1, t2)); /* order matters on the wire */
    struct htable *t3 = htable_copy(t1);
    assert_true(htable_equal(t1, t3));
    htable_set(t3, "a", hval_int(HV_I8, 9));
    assert_false(htable_equal(t1, t3));
    assert_int_equal(htable_remove(t3, "a"), 1);
    assert_null(htable_get(t3, "a"));
    htable_free(t1);
    htable_free(t2);
    htable_free(t3);
    hval_free(&s);
    hval_free(&x);
}

static void test_sha256_vectors(void **state)
{
    char hex[65];
    sha256_hex("", 0, hex);
    assert_string_equal(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    sha256_hex("abc", 3, hex);
    assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    sha256_hex(two, strlen(two), hex);
    assert_string_equal(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

static void test_vendored_fixture_is_the_published_one(void **state)
{
    /* The Java library's envelope fixtures are vendored byte for byte, never hand-copied:
     * the digest is the one recorded in fixtures/acemq/SOURCES.md. */
    struct bytes f = test_read_fixture("acemq/envelope-fixtures.json");
    struct bytes src = test_read_fixture("acemq/SOURCES.md");
    char hex[65];
    sha256_hex(f.data, f.len, hex);
    char line[128];
    snprintf(line, sizeof line, "%s  envelope-fixtures.json", hex);
    assert_non_null(strstr((const char *)src.data, line));
    bytes_free(&f);
    bytes_free(&src);
}

static void test_time_format(void **state)
{
    char buf[32];
    time_format_rfc3339(1770091506000LL, false, buf);
    assert_string_equal(buf, "2026-02-03T04:05:06Z");
    time_format_rfc3339(1770091506789LL, false, buf);
    assert_string_equal(buf, "2026-02-03T04:05:06.789Z");
    time_format_rfc3339(0, true, buf);
    assert_string_equal(buf, "1970-01-01T00:00:00.000Z");
    time_format_rfc3339(-1, true, buf);
    assert_string_equal(buf, "1969-12-31T23:59:59.999Z");
    int64_t ms;
    assert_true(time_parse_rfc3339("2024-02-29T23:59:60Z", 20, &ms));
    assert_false(time_parse_rfc3339("2024-13-01T00:00:00Z", 20, &ms));
    assert_false(time_parse_rfc3339("2024-01-01T00:00:00", 19, &ms));
    assert_false(time_parse_rfc3339("2024-01-01T00:00:00Zjunk", 24, &ms));
    char d[32];
    duration_format(4.21, d);
    assert_string_equal(d, "4.2s");
    duration_format(3725, d);
    assert_string_equal(d, "1h02m");
    duration_format(90000, d);
    assert_string_equal(d, "1d01h");
}

/* The display form of a scalar (the detail view's and the diff's). */
static void test_format_scalar(void **state)
{
    (void)state;
    struct strbuf sb;
    sb_init(&sb);
    struct hval v = hval_decimal(2, 12345);
    hval_format_scalar(&v, &sb);
    v = hval_decimal(4, 5);
    sb_addc(&sb, ' ');
    hval_format_scalar(&v, &sb);
    v = hval_uint(HV_TIMESTAMP, 1767323036);
    sb_addc(&sb, ' ');
    hval_format_scalar(&v, &sb);
    v = hval_bool(true);
    sb_addc(&sb, ' ');
    hval_format_scalar(&v, &sb);
    assert_string_equal(sb.buf, "123.45 0.0005 1767323036 (2026-01-02T03:03:56Z) true");
    sb_free(&sb);
}

/* A delivery's headers (props_from_amqp): the table and its entries in the strings' shared
 * block; a table grown, cut and freed afterwards moves them out and keeps every entry. */
static void test_amqp_headers_pooled_entries(void **state)
{
    (void)state;
    amqp_table_entry_t e[3];
    e[0].key = amqp_cstring_bytes("x-a");
    e[0].value.kind = AMQP_FIELD_KIND_UTF8;
    e[0].value.value.bytes = amqp_cstring_bytes("one");
    e[1].key = amqp_cstring_bytes("x-b");
    e[1].value.kind = AMQP_FIELD_KIND_I32;
    e[1].value.value.i32 = 7;
    e[2].key = amqp_cstring_bytes("x-c");
    e[2].value.kind = AMQP_FIELD_KIND_UTF8;
    e[2].value.value.bytes = amqp_cstring_bytes("three");
    amqp_basic_properties_t p;
    memset(&p, 0, sizeof p);
    p._flags = AMQP_BASIC_HEADERS_FLAG;
    p.headers = (amqp_table_t){3, e};
    for (int round = 0; round < 2; round++) {
        struct message m;
        if (round == 0)
            message_init(&m);
        else
            memset(&m, 0, sizeof m); /* as a delivery's, no table yet */
        props_from_amqp(&p, &m.props, &m.headers, &m.headers_present);
        assert_true(m.headers->e_pooled);
        assert_true(m.headers->self_pooled);
        assert_int_equal(m.headers->n, 3);
        struct htable *before = htable_copy(m.headers);
        if (round == 0) {
            for (int i = 0; i < 40; i++)
                htable_add(m.headers, "x-more", hval_int(HV_I32, i));
            assert_false(m.headers->e_pooled);
            assert_int_equal(m.headers->n, 43);
            assert_int_equal(htable_remove(m.headers, "x-more"), 40);
            assert_true(htable_equal(m.headers, before));
        } else {
            assert_int_equal(htable_remove(m.headers, "x-b"), 1); /* in place, still pooled */
            assert_true(m.headers->e_pooled);
            assert_memory_equal(hval_str(htable_get(m.headers, "x-c"))->data, "three", 5);
        }
        htable_free(before);
        message_free(&m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_round_trip_every_kind),
        cmocka_unit_test(test_wire_round_trip_every_kind),
        cmocka_unit_test(test_wire_malformed),
        cmocka_unit_test(test_wire_large_tables),
        cmocka_unit_test(test_plain_json_kinds),
        cmocka_unit_test(test_typed_errors),
        cmocka_unit_test(test_uint64_as_string),
        cmocka_unit_test(test_equality_is_kind_exact),
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_vendored_fixture_is_the_published_one),
        cmocka_unit_test(test_time_format),
        cmocka_unit_test(test_format_scalar),
        cmocka_unit_test(test_amqp_headers_pooled_entries),
    };
    return cmocka_run_group_tests_name("hval", tests, NULL, NULL);
}
