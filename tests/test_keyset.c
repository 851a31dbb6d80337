/*
 * keyset, and the scans of header tables that use it: every place a table is scanned for
 * repeated or known keys is linear in the size of the table, with the old results.
 *
 * Linear is checked by counting, not by timing: this suite is linked with
 * -Wl,--wrap=memcmp (tests/meson.build), so every memcmp the core makes (bytes_eq and
 * bytes_eq_cstr included) goes through wrapped_memcmp below and is counted. A table of N keys
 * of equal length scanned pairwise costs about N²/2 of them (200 million for N = 20,000); the
 * bound here is a small multiple of N.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "decode.h"
#include "detail.h"
#include "hval_json.h"
#include "keyset.h"
#include "message.h"
#include "util.h"

int __real_memcmp(const void *a, const void *b, size_t n);
int __wrap_memcmp(const void *a, const void *b, size_t n);

static unsigned long long memcmp_calls;

int __wrap_memcmp(const void *a, const void *b, size_t n)
{
    memcmp_calls++;
    return __real_memcmp(a, b, n);
}

#define BIG 20000
/* memcmp calls allowed per key: what a linear scan makes (a few per key for the names it
 * looks for) with room to spare; a pairwise scan makes BIG / 2 per key. */
#define PER_KEY 100

static void key_name(char *buf, size_t size, const char *prefix, size_t i)
{
    snprintf(buf, size, "%s%06zu", prefix, i);
}

static void test_keyset_basics(void **state)
{
    (void)state;
    struct keyset s;
    memset(&s, 0, sizeof s); /* a zeroed set is empty */
    assert_false(keyset_has(&s, "a", 1));
    assert_true(keyset_add(&s, "a", 1));
    assert_false(keyset_add(&s, "a", 1));
    assert_true(keyset_has(&s, "a", 1));
    assert_false(keyset_has(&s, "ab", 2));
    assert_false(keyset_has(&s, "", 0));
    assert_true(keyset_add(&s, NULL, 0)); /* the empty key, given as {0, NULL} */
    assert_false(keyset_add(&s, "", 0));
    assert_true(keyset_add(&s, "a\0b", 3)); /* NUL bytes are part of a key */
    assert_true(keyset_add(&s, "a\0c", 3));
    assert_false(keyset_add(&s, "a\0b", 3));
    assert_int_equal(s.n, 4);
    keyset_free(&s);
    assert_null(s.slot);

    /* Growth keeps every key; keys that differ in one byte, past the first 8 or before. */
    static char keys[BIG][24];
    keyset_init(&s, 3);
    for (size_t i = 0; i < BIG; i++) {
        key_name(keys[i], sizeof keys[i], i % 2 ? "same-long-prefix-" : "", i);
        assert_true(keyset_add(&s, keys[i], strlen(keys[i])));
    }
    assert_int_equal(s.n, BIG);
    for (size_t i = 0; i < BIG; i++) {
        assert_false(keyset_add(&s, keys[i], strlen(keys[i])));
        assert_true(keyset_has(&s, keys[i], strlen(keys[i])));
        assert_false(keyset_has(&s, keys[i], strlen(keys[i]) - 1));
    }
    assert_int_equal(s.n, BIG);
    keyset_free(&s);
}

/* A table of n keys "k000000".. (all of one length, the pairwise scan's worst case). */
static struct htable *big_table(size_t n, const char *prefix)
{
    struct htable *t = htable_new();
    char k[64];
    for (size_t i = 0; i < n; i++) {
        key_name(k, sizeof k, prefix, i);
        htable_add(t, k, hval_int(HV_I32, (int64_t)i));
    }
    return t;
}

static bool is_typed_table(const json_t *j)
{
    return json_is_object(j) && json_is_string(json_object_get(j, "type")) &&
           strcmp(json_string_value(json_object_get(j, "type")), "table") == 0;
}

static void round_trips(const struct htable *t)
{
    json_t *j = htable_to_json(t);
    struct htable *back = NULL;
    struct error err;
    error_clear(&err);
    assert_int_equal(htable_from_json(j, "headers", &back, &err), ST_OK);
    assert_true(htable_equal(t, back));
    htable_free(back);
    json_decref(j);
}

/* What table_is_plain decided before it was linear, decided the same way now. */
static void test_plain_or_typed_unchanged(void **state)
{
    (void)state;
    struct htable *t = big_table(BIG, "k");
    json_t *j = htable_to_json(t);
    assert_true(json_is_object(j) && !is_typed_table(j));
    assert_int_equal(json_object_size(j), BIG);
    json_decref(j);

    /* One duplicate, the last key repeating the first: the list of pairs keeps both. */
    htable_add(t, "k000000", hval_cstring("again"));
    j = htable_to_json(t);
    assert_true(is_typed_table(j));
    assert_int_equal(json_array_size(json_object_get(j, "value")), BIG + 1);
    json_decref(j);
    round_trips(t);
    htable_free(t);

    /* "type" among the keys, a key with a NUL, a key that is not UTF-8: typed. */
    const char *const odd[][2] = {{"type", "4"}, {"a\0b", "3"}, {"caf\xe9", "4"}};
    for (size_t i = 0; i < 3; i++) {
        t = big_table(100, "k");
        htable_addn(t, odd[i][0], (size_t)(odd[i][1][0] - '0'), hval_void());
        j = htable_to_json(t);
        assert_true(is_typed_table(j));
        json_decref(j);
        round_trips(t);
        htable_free(t);
    }
    /* Nested tables are judged on their own keys. */
    t = htable_new();
    struct hval inner = hval_table();
    htable_add(inner.v.tab, "x", hval_bool(true));
    htable_add(inner.v.tab, "x", hval_bool(false));
    htable_add(t, "outer", inner);
    j = htable_to_json(t);
    assert_false(is_typed_table(j));
    assert_true(is_typed_table(json_object_get(j, "outer")));
    json_decref(j);
    round_trips(t);
    htable_free(t);
}

static void test_table_to_json_is_linear(void **state)
{
    (void)state;
    struct htable *t = big_table(BIG, "k");
    memcmp_calls = 0;
    json_t *j = htable_to_json(t);
    unsigned long long calls = memcmp_calls;
    json_decref(j);
    htable_free(t);
    if (calls > (unsigned long long)PER_KEY * BIG)
        fail_msg("htable_to_json of %d keys made %llu key comparisons (at most %d expected)", BIG,
                 calls, PER_KEY * BIG);
}

static struct message *message_with(struct htable *h)
{
    struct message *m = xcalloc(1, sizeof *m);
    message_init(m);
    htable_free(m->headers);
    m->headers = h;
    m->headers_present = true;
    m->queue = bytes_from_cstr("orders.dlq");
    m->body = bytes_from_cstr("{}");
    return m;
}

static void drop_message(struct message *m)
{
    message_free(m);
    free(m);
}

/* x-death with BIG entries: decode's list of reasons names each reason once, in order. */
static void test_death_reasons_are_linear(void **state)
{
    (void)state;
    struct htable *h = htable_new();
    struct hval xd = hval_array();
    char k[64];
    for (size_t i = 0; i < BIG; i++) {
        struct hval e = hval_table();
        key_name(k, sizeof k, "r", i % 3 == 2 ? 0 : i); /* every third repeats "r000000" */
        htable_add(e.v.tab, "queue", hval_cstring("orders.dlq"));
        htable_add(e.v.tab, "reason", hval_cstring(k));
        htable_add(e.v.tab, "count", hval_int(HV_I64, 1));
        harray_add(&xd.v.arr, e);
    }
    htable_add(h, "x-death", xd);
    struct message *m = message_with(h);
    struct decoded d;
    decode_message(m, 0, &d);
    memcmp_calls = 0;
    json_t *j = decoded_to_json(&d, 0);
    unsigned long long calls = memcmp_calls;
    const json_t *reasons = json_object_get(json_object_get(j, "death"), "reasons");
    assert_true(json_is_array(reasons));
    size_t expect = 0;
    for (size_t i = 0; i < BIG; i++)
        expect += i % 3 != 2;
    assert_int_equal(json_array_size(reasons), expect);
    assert_string_equal(json_string_value(json_array_get(reasons, 0)), "r000000");
    assert_string_equal(json_string_value(json_array_get(reasons, 1)), "r000001");
    assert_string_equal(json_string_value(json_array_get(reasons, 2)), "r000003");
    json_decref(j);
    decoded_free(&d);
    drop_message(m);
    if (calls > (unsigned long long)PER_KEY * BIG)
        fail_msg("decoded_to_json of %d death entries made %llu comparisons (at most %d)", BIG,
                 calls, PER_KEY * BIG);
}

/* The detail's headers section, grouping BIG unknown x-acemq-* headers. */
static void test_detail_grouping_is_linear(void **state)
{
    (void)state;
    struct htable *h = big_table(BIG, "x-acemq-zz");
    htable_add(h, "x-acemq-id", hval_cstring("id-1"));
    htable_add(h, "tenant", hval_cstring("acme"));
    struct message *m = message_with(h);
    struct decoded d;
    decode_message(m, 0, &d);
    struct detail_doc doc;
    memset(&doc, 0, sizeof doc);
    memcmp_calls = 0;
    detail_render_headers(&doc, &d);
    unsigned long long calls = memcmp_calls;
    size_t found = 0;
    for (size_t i = 0; i < doc.n; i++) {
        char want[64];
        snprintf(want, sizeof want, "unknown x-acemq-* headers (%d)", BIG);
        found += strstr(doc.lines[i].text, want) != NULL;
        found += strstr(doc.lines[i].text, "AceMQ envelope headers, as sent (1)") != NULL;
        found += strstr(doc.lines[i].text, "application headers (1)") != NULL;
    }
    assert_int_equal(found, 3);
    detail_doc_free(&doc);
    decoded_free(&d);
    drop_message(m);
    if (calls > (unsigned long long)PER_KEY * BIG)
        fail_msg("the headers section of %d unknown x-acemq-* headers made %llu comparisons "
                 "(at most %d)",
                 BIG, calls, PER_KEY * BIG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keyset_basics),
        cmocka_unit_test(test_plain_or_typed_unchanged),
        cmocka_unit_test(test_table_to_json_is_linear),
        cmocka_unit_test(test_death_reasons_are_linear),
        cmocka_unit_test(test_detail_grouping_is_linear),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
