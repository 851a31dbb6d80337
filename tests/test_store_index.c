/*
 * The snapshot store's index read without a decode: store_prepare reads an AceMQ message's
 * fields straight from its headers (decode.h: decode_index_acemq) and must answer exactly as
 * a whole decode does (store_prepare_decoded), for every fixture line and for the tolerance
 * rules of AceMQ's reader (ids, attempts and errors of every shape, defaults, duplicates).
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include "testutil.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "snapshot.h"
#include "store.h"

#define NOW 1767330000000LL

static size_t compared, read_fast;

static void assert_same(const struct message *m)
{
    assert_true(store_prepare_agrees(m, NOW));
    struct decoded_index x;
    read_fast += decode_index_acemq(m, NOW, &x);
    compared++;
}

static int one_file(const char *path, const struct stat *st, int type, struct FTW *f)
{
    (void)st;
    (void)f;
    size_t n = strlen(path);
    if (type != FTW_F || n < 6 || strcmp(path + n - 6, ".jsonl") != 0)
        return 0;
    struct bytes raw = test_read_file(path);
    const char *p = (const char *)raw.data, *end = p + raw.len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        struct message m;
        if (snapshot_parse_line(p, len, &m, NULL) == ST_OK)
            assert_same(&m);
        message_free(&m);
        p += len + 1;
    }
    bytes_free(&raw);
    return 0;
}

static void test_fixture_lines(void **state)
{
    (void)state;
    compared = read_fast = 0;
    assert_int_equal(nftw(test_fixture_path(""), one_file, 16, FTW_PHYS), 0);
    assert_true(compared > 100);
    assert_true(read_fast > 10); /* the fixtures hold AceMQ dead letters read without a decode */
}

/* One message with the headers named (NULL ends), each a string unless given as an hval. */
static void check(const char *message_id, const char *rk, size_t n, const char *const *keys,
                  const struct hval *vals)
{
    struct message m;
    message_init(&m);
    m.queue = bytes_from_cstr("orders.dlq");
    if (rk)
        m.routing_key = bytes_from_cstr(rk);
    if (message_id)
        props_set_string(&m.props, PROP_message_id, message_id, strlen(message_id));
    m.headers_present = true;
    m.redelivered = n % 2;
    m.fetched_at_ms = NOW + 5;
    for (size_t i = 0; i < n; i++)
        htable_add(m.headers, keys[i], hval_copy(&vals[i]));
    m.body = bytes_from_cstr("{}");
    assert_same(&m);
    message_free(&m);
}

static void test_acemq_shapes(void **state)
{
    (void)state;
    compared = read_fast = 0;
    const char *errors[] = {
        "",
        "plain reason",
        "exhausted 5 attempts: InventoryException: sku 4411 out of stock",
        "gave up after 3 attempts: java.net.SocketTimeoutException: Read timed out",
        "com.acme.ValidationException: no billing address",
        "Net::ReadTimeout: timed out",
        "a b: c",
        ":: x",
        "exhausted 5 attempts: ",
        "exhausted 5 attempts: not a class: x",
        "*errors.errorString: eof",
        "123: digits only",
        "retrying cannot help: X:: y",
    };
    struct hval ids[] = {hval_cstring("id-1"), hval_cstring(""), hval_int(HV_I32, 42),
                         hval_bool(true),      hval_void(),      hval_bytes("b\xffz", 3)};
    struct hval nums[] = {hval_int(HV_I32, 3),          hval_int(HV_I32, 0), hval_int(HV_I64, -7),
                          hval_cstring(" 4 "),          hval_cstring("x"),   hval_f64(2.9),
                          hval_uint(HV_U64, UINT64_MAX)};
    for (size_t e = 0; e < sizeof errors / sizeof *errors; e++)
        for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
            for (size_t k = 0; k < sizeof nums / sizeof *nums; k++) {
                const char *keys[] = {"x-acemq-id",         "x-acemq-type",
                                      "x-acemq-attempt",    "x-acemq-correlation",
                                      "x-acemq-first-seen", "x-acemq-error",
                                      "x-acemq-causation",  "app"};
                struct hval vals[] = {ids[i],
                                      k % 2 ? hval_cstring("order.placed") : ids[(i + 1) % 6],
                                      nums[k],
                                      ids[(i + k) % 6],
                                      nums[(k + 3) % 7],
                                      hval_cstring(errors[e]),
                                      ids[(i + 2) % 6],
                                      nums[k]};
                check(k % 3 ? "mid-1" : NULL, e % 2 ? "orders" : NULL, 8, keys, vals);
                check(k % 2 ? "" : "mid-2", "rk", 3 + (e + k) % 5, keys, vals);
                if (k % 2)
                    hval_free(&vals[1]);
                hval_free(&vals[5]);
            }
    /* duplicates (the first counts), the route's and unknown reserved names, and what sends
     * a message to the whole decode: x-death, x-first-death-*, traceparent, no AceMQ header */
    const char *more[][3] = {
        {"x-acemq-id", "x-acemq-id", "x-acemq-error"},
        {"x-acemq-route", "x-acemq-zzz", "x-acemq-type"},
        {"x-acemq-id", "x-death", "x-acemq-error"},
        {"x-first-death-queue", "x-acemq-id", "x-acemq-error"},
        {"x-acemq-id", "traceparent", "x-acemq-error"},
        {"a", "b", "c"},
    };
    struct hval v[] = {hval_cstring("one"),
                       hval_cstring("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
                       hval_cstring("Boom: it broke")};
    for (size_t i = 0; i < sizeof more / sizeof *more; i++) {
        check(NULL, NULL, 3, more[i], v);
        check("m", "r", 3, more[i], v);
    }
    for (size_t i = 0; i < 6; i++)
        hval_free(&ids[i]);
    for (size_t i = 0; i < 7; i++)
        hval_free(&nums[i]);
    for (size_t i = 0; i < 3; i++)
        hval_free(&v[i]);
    assert_true(read_fast > compared / 3);
    assert_true(read_fast < compared);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_lines),
        cmocka_unit_test(test_acemq_shapes),
    };
    return cmocka_run_group_tests_name("store_index", tests, NULL, NULL);
}
