/*
 * test_roundtrip: a property test over the whole AMQP value space — the snapshot reader reads
 * back everything the writer writes, and the wire codec gives back every table it encodes.
 *
 * Random messages (a fixed seed, or DLQX_TEST_SEED; the seed is printed on failure) carry
 * every field kind at its extremes: all integer widths at their limits, uint64 and
 * timestamps at and above 2^63, decimals, floats and doubles with NaN (quiet, signalling,
 * negative, with a payload), infinities, -0 and subnormals, strings and byte arrays of any
 * bytes (NUL, invalid UTF-8, long), keys named type/value/key/base64, duplicate and non-UTF-8
 * keys, and nesting far past what a JSON reader reads (2,100 arrays; 700 tables holding a key
 * named type). Properties include a timestamp and a stream offset at and above 2^63.
 * Each is written with snapshot_format, read back (snapshot_round_trip, and once through the
 * file reader), and must be message_equal; snapshot_to_json must dump to the same bytes; and
 * its headers must survive htable_encode_wire / htable_decode_wire.
 */
#include "testutil.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "hval_amqp.h"
#include "hval_json.h"
#include "snapshot.h"
#include "util.h"

static uint64_t rng_state;
static uint64_t seed;

static uint64_t rnd(void)
{
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ULL;
}

static unsigned pick(unsigned n)
{
    return (unsigned)(rnd() % n);
}

static struct bytes rnd_bytes(size_t max)
{
    size_t n = pick(8) == 0 ? pick((unsigned)max + 1) : pick(12);
    struct bytes b = {n, n ? xmalloc(n) : NULL};
    unsigned style = pick(4);
    for (size_t i = 0; i < n; i++) {
        unsigned char c;
        if (style == 0)
            c = (unsigned char)('a' + pick(26)); /* text */
        else if (style == 1)
            c = (unsigned char)rnd(); /* anything: NUL, invalid UTF-8 */
        else if (style == 2)
            c = "\x00\x1b\\\"\x7f\xc3\xa9\xe2\x80\xae\xff{}[]:,"[pick(17)];
        else
            c = (unsigned char)(0x20 + pick(95));
        b.data[i] = c;
    }
    return b;
}

static const char *const odd_keys[] = {"type", "value", "key",     "key_base64", "base64",
                                       "bits", "",      "x-death", "\xff\xfe",   "a\0b"};

static struct bytes rnd_key(void)
{
    if (pick(3) == 0) {
        unsigned k = pick(sizeof odd_keys / sizeof *odd_keys);
        const char *s = odd_keys[k];
        size_t n = k == 9 ? 3 : strlen(s);
        return bytes_dup(s, n);
    }
    struct bytes b = rnd_bytes(255);
    if (b.len > 255)
        b.len = 255;
    return b;
}

static float f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static double f64_from_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static struct hval rnd_value(int depth);

static struct hval rnd_container(int depth, bool table)
{
    unsigned n = depth > 4 ? pick(2) : pick(6);
    if (table) {
        struct hval t = hval_table();
        for (unsigned i = 0; i < n; i++) {
            struct bytes k = rnd_key();
            htable_addn(t.v.tab, k.data, k.len, rnd_value(depth + 1));
            bytes_free(&k);
        }
        return t;
    }
    struct hval a = hval_array();
    for (unsigned i = 0; i < n; i++)
        harray_add(&a.v.arr, rnd_value(depth + 1));
    return a;
}

static struct hval rnd_value(int depth)
{
    static const int64_t i8s[] = {INT8_MIN, INT8_MAX, 0, -1};
    static const int64_t i16s[] = {INT16_MIN, INT16_MAX, 0, -1};
    static const int64_t i32s[] = {INT32_MIN, INT32_MAX, 0, -1};
    static const int64_t i64s[] = {INT64_MIN, INT64_MAX,        0,
                                   -1,        (int64_t)1 << 53, ((int64_t)1 << 53) + 1};
    static const uint64_t u64s[] = {0, UINT64_MAX, (uint64_t)INT64_MAX, (uint64_t)INT64_MAX + 1,
                                    UINT64_MAX - 1};
    static const uint32_t f32bits[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fc00123u,
                                       0x7f800000u, 0xff800000u, 0x80000000u, 0x00000001u,
                                       0x7f7fffffu, 0x3dcccccdu};
    static const uint64_t f64bits[] = {
        0x7ff8000000000000ULL, 0xfff8000000000000ULL, 0x7ff0000000000001ULL, 0x7ff8000000abcdefULL,
        0x7ff0000000000000ULL, 0xfff0000000000000ULL, 0x8000000000000000ULL, 0x0000000000000001ULL,
        0x7fefffffffffffffULL, 0x3fb999999999999aULL};
    unsigned k = pick(depth > 6 ? 18 : 20);
    switch (k) {
    case 0:
        return hval_void();
    case 1:
        return hval_bool(pick(2));
    case 2:
        return hval_int(HV_I8, pick(2) ? i8s[pick(4)] : (int8_t)rnd());
    case 3:
        return hval_uint(HV_U8, pick(2) ? UINT8_MAX : (uint8_t)rnd());
    case 4:
        return hval_int(HV_I16, pick(2) ? i16s[pick(4)] : (int16_t)rnd());
    case 5:
        return hval_uint(HV_U16, pick(2) ? UINT16_MAX : (uint16_t)rnd());
    case 6:
        return hval_int(HV_I32, pick(2) ? i32s[pick(4)] : (int32_t)rnd());
    case 7:
        return hval_uint(HV_U32, pick(2) ? UINT32_MAX : (uint32_t)rnd());
    case 8:
        return hval_int(HV_I64, pick(2) ? i64s[pick(6)] : (int64_t)rnd());
    case 9:
        return hval_uint(HV_U64, pick(2) ? u64s[pick(5)] : rnd());
    case 10: /* timestamps at and above 2^63 */
        return hval_uint(HV_TIMESTAMP, pick(2) ? u64s[pick(5)] : rnd());
    case 11:
        return hval_f32(pick(2) ? f32_from_bits(f32bits[pick(10)])
                                : f32_from_bits((uint32_t)rnd()));
    case 12:
        return hval_f64(pick(2) ? f64_from_bits(f64bits[pick(10)]) : f64_from_bits(rnd()));
    case 13:
        return hval_decimal((uint8_t)rnd(), pick(2) ? UINT32_MAX : (uint32_t)rnd());
    case 14:
    case 15: {
        struct bytes b = rnd_bytes(pick(16) == 0 ? 70000 : 300);
        struct hval v = k == 14 ? hval_string(b.data ? (const char *)b.data : "", b.len)
                                : hval_bytes(b.data ? (const char *)b.data : "", b.len);
        bytes_free(&b);
        return v;
    }
    case 16:
    case 17: {
        /* a typed-looking table: {"type": …, "value": …} as data */
        struct hval t = hval_table();
        htable_add(t.v.tab, "type", hval_cstring(pick(2) ? "int8" : "wire"));
        htable_add(t.v.tab, "value", hval_int(HV_I64, 5));
        if (k == 17)
            htable_add(t.v.tab, "base64", hval_cstring("AA=="));
        return t;
    }
    case 18:
        return rnd_container(depth, false);
    default:
        return rnd_container(depth, true);
    }
}

/* A chain of n containers around a leaf: arrays, tables holding a key named "type" (written
 * in the three-level typed form), or a mix. */
static struct hval deep_chain(int n, unsigned style)
{
    struct hval v = rnd_value(7);
    for (int i = 0; i < n; i++) {
        bool table = style == 1 || (style == 2 && pick(2));
        if (table) {
            struct hval t = hval_table();
            htable_add(t.v.tab, "type", hval_cstring("table"));
            htable_add(t.v.tab, style == 2 && pick(2) ? "value" : "v", v);
            v = t;
        } else {
            struct hval a = hval_array();
            harray_add(&a.v.arr, v);
            v = a;
        }
    }
    return v;
}

static void rnd_message(struct message *m, int iteration)
{
    static const uint64_t big[] = {0, 1767323000, (uint64_t)INT64_MAX, (uint64_t)INT64_MAX + 1,
                                   UINT64_MAX};
    message_init(m);
    m->queue = rnd_bytes(300);
    m->exchange = rnd_bytes(255);
    m->routing_key = rnd_bytes(255);
    m->redelivered = pick(2);
    m->fetched_at_ms = pick(2) ? (int64_t)rnd() : 1767323045678;
    if (pick(3) == 0) {
        m->has_stream_offset = true;
        m->stream_offset = pick(2) ? big[pick(5)] : rnd();
    }
    for (unsigned f = 0; f < PROP_delivery_mode; f++) {
        if (pick(3))
            continue;
        struct bytes b = rnd_bytes(255);
        props_set_string(&m->props, (enum prop_flag)f, b.data, b.len > 255 ? 255 : b.len);
        bytes_free(&b);
    }
    if (pick(2)) {
        m->props.delivery_mode = (uint8_t)rnd();
        m->props.present |= 1u << PROP_delivery_mode;
    }
    if (pick(2)) {
        m->props.priority = (uint8_t)rnd();
        m->props.present |= 1u << PROP_priority;
    }
    if (pick(2)) {
        m->props.timestamp = pick(2) ? big[pick(5)] : rnd();
        m->props.present |= 1u << PROP_timestamp;
    }
    m->headers_present = pick(4) != 0;
    if (m->headers_present) {
        unsigned n = pick(8);
        for (unsigned i = 0; i < n; i++) {
            struct bytes k = rnd_key();
            htable_addn(m->headers, k.data, k.len, rnd_value(0));
            bytes_free(&k);
        }
        /* Every few messages, nesting past jansson's 2,048 levels. */
        if (iteration % 7 == 3)
            htable_add(m->headers, "deep-arrays", deep_chain(2100 + (int)pick(900), 0));
        if (iteration % 7 == 5)
            htable_add(m->headers, "deep-typed-tables", deep_chain(700 + (int)pick(300), 1));
        if (iteration % 11 == 6)
            htable_add(m->headers, "deep-mixed", deep_chain(1500 + (int)pick(2000), 2));
    }
    struct bytes body = rnd_bytes(pick(8) == 0 ? 200000 : 2000);
    m->body = body;
}

static int dump_cb(const char *buffer, size_t size, void *data)
{
    sb_add(data, buffer, size);
    return 0;
}

static void check_message(const struct message *m, int iteration)
{
    struct strbuf line;
    sb_init(&line);
    struct error err;
    error_clear(&err);
    if (snapshot_round_trip(m, &line, &err) != ST_OK)
        fail_msg("seed %llu, message %d: %s\n  record: %.600s", (unsigned long long)seed, iteration,
                 err.msg, line.buf);

    /* snapshot_to_json dumps to the same bytes as the fast writer. */
    json_t *j = snapshot_to_json(m);
    struct strbuf dumped;
    sb_init(&dumped);
    json_dump_callback(j, dump_cb, &dumped,
                       JSON_COMPACT | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY);
    sb_addc(&dumped, '\n');
    json_decref(j);
    if (dumped.len != line.len || memcmp(dumped.buf, line.buf, line.len) != 0)
        fail_msg("seed %llu, message %d: snapshot_to_json and snapshot_format differ",
                 (unsigned long long)seed, iteration);
    sb_free(&dumped);

    /* Through the file reader, as dlqx decode reads it. */
    FILE *f = fmemopen(line.buf, line.len, "rb");
    assert_non_null(f);
    struct snapshot_reader r;
    snapshot_reader_open(&r, f, "mem");
    struct message back;
    if (snapshot_read(&r, &back, &err) != SNAP_RECORD)
        fail_msg("seed %llu, message %d: the reader refused the record: %s",
                 (unsigned long long)seed, iteration, err.msg);
    assert_true(message_equal(m, &back));
    message_free(&back);
    snapshot_reader_close(&r);
    fclose(f);
    sb_free(&line);

    /* The wire codec: the headers as the broker would carry them. */
    if (m->headers_present) {
        struct bytes wire = {0, NULL};
        if (htable_encode_wire(m->headers, &wire, &err) != ST_OK)
            fail_msg("seed %llu, message %d: headers do not encode: %s", (unsigned long long)seed,
                     iteration, err.msg);
        struct htable *t = NULL;
        if (htable_decode_wire(wire.data, wire.len, &t, &err) != ST_OK)
            fail_msg("seed %llu, message %d: headers do not decode: %s", (unsigned long long)seed,
                     iteration, err.msg);
        if (!htable_equal(m->headers, t))
            fail_msg("seed %llu, message %d: the wire gives back other headers",
                     (unsigned long long)seed, iteration);
        htable_free(t);
        bytes_free(&wire);
    }
}

static void test_random_messages(void **state)
{
    (void)state;
    const char *s = getenv("DLQX_TEST_SEED");
    seed = s && *s ? strtoull(s, NULL, 0) : 0x5eed0001ULL;
    rng_state = seed ? seed : 1;
    const char *n_env = getenv("DLQX_TEST_ITERATIONS");
    int n = n_env && *n_env ? atoi(n_env) : 300;
    for (int i = 0; i < n; i++) {
        struct message m;
        rnd_message(&m, i);
        check_message(&m, i);
        message_free(&m);
    }
}

/* Bodies of valid UTF-8 with escapes at every place a 16-byte chunk can put them (the record
 * writer copies sixteen bytes at a time and writes an escape over the rest), as long runs of
 * escapes that grow the record beyond the room made for the body, and with one byte that is
 * not UTF-8 (then body_base64) at any place. */
static void test_escaped_bodies(void **state)
{
    (void)state;
    static const char *const pieces[] = {
        "\x00", "\x1b", "\\", "\"", "\n", "\x7f", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80",
        "\x1f"};
    seed = 0xb0d1e5ULL;
    rng_state = seed;
    for (int i = 0; i < 3000; i++) {
        struct message m;
        message_init(&m);
        size_t want = i < 200 ? (size_t)i : pick(i % 10 == 0 ? 5000 : 300);
        unsigned plain = pick(4); /* 0: escapes only .. 3: mostly plain */
        struct strbuf b;
        sb_init(&b);
        while (b.len < want) {
            if (pick(4) < plain) {
                sb_addc(&b, (char)(0x20 + pick(95)));
            } else {
                const char *p = pieces[pick(10)];
                sb_add(&b, p, p[0] ? strlen(p) : 1);
            }
        }
        if (i % 7 == 3 && b.len)
            b.buf[pick((unsigned)b.len)] = (char)0xff;
        m.body.len = b.len;
        m.body.data = (unsigned char *)sb_detach(&b, NULL);
        check_message(&m, i);
        message_free(&m);
    }
}

/* The cases the issue named, one by one. */
static void test_named_cases(void **state)
{
    (void)state;
    struct message m;
    message_init(&m);
    m.props.timestamp = (uint64_t)INT64_MAX + 1;
    m.props.present |= 1u << PROP_timestamp;
    m.has_stream_offset = true;
    m.stream_offset = UINT64_MAX;
    m.headers_present = true;
    rng_state = 7;
    htable_add(m.headers, "arrays", deep_chain(2100, 0));
    htable_add(m.headers, "tables", deep_chain(700, 1));
    htable_add(m.headers, "nan", hval_f64(f64_from_bits(0xfff8000000000001ULL)));
    htable_add(m.headers, "snan", hval_f32(f32_from_bits(0x7f800001u)));
    htable_add(m.headers, "minus-zero", hval_f64(-0.0));
    check_message(&m, -1);

    /* The timestamp is written as a decimal string, not as a negative number. */
    struct strbuf line;
    sb_init(&line);
    snapshot_format(&m, &line);
    assert_non_null(strstr(line.buf, "\"timestamp\":\"9223372036854775808\""));
    assert_non_null(strstr(line.buf, "\"stream_offset\":\"18446744073709551615\""));
    sb_free(&line);
    message_free(&m);
}

/* A wire value that is malformed, or has bytes after the value, is refused. */
static void test_wire_value_refused(void **state)
{
    (void)state;
    struct message m;
    struct error err;
    error_clear(&err);
    static const char *const bad[] = {
        "{\"headers\":{\"a\":{\"type\":\"wire\",\"base64\":\"!!\"}}}",
        "{\"headers\":{\"a\":{\"type\":\"wire\",\"base64\":\"\"}}}",
        "{\"headers\":{\"a\":{\"type\":\"wire\",\"base64\":\"YgFi\"}}}", /* b 1, then junk */
        "{\"headers\":{\"a\":{\"type\":\"wire\",\"base64\":\"Zg==\"}}}", /* f, no value */
        "{\"headers\":{\"a\":{\"type\":\"double\",\"value\":\"NaN\",\"bits\":\"3ff0000000000000\"}}"
        "}",
        "{\"headers\":{\"a\":{\"type\":\"float\",\"value\":\"NaN\",\"bits\":\"7fc0\"}}}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (snapshot_parse_line(bad[i], strlen(bad[i]), &m, &err) == ST_OK)
            fail_msg("accepted: %s", bad[i]);
        message_free(&m);
    }
    /* And a good one: int8 1 in wire form ("b", 0x01). */
    const char *good = "{\"headers\":{\"a\":{\"type\":\"wire\",\"base64\":\"YgE=\"}}}";
    assert_int_equal(snapshot_parse_line(good, strlen(good), &m, &err), ST_OK);
    const struct hval *v = htable_get(m.headers, "a");
    assert_non_null(v);
    assert_int_equal(v->kind, HV_I8);
    assert_int_equal(v->v.i, 1);
    message_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_named_cases),
        cmocka_unit_test(test_wire_value_refused),
        cmocka_unit_test(test_random_messages),
        cmocka_unit_test(test_escaped_bodies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
