/*
 * test_groups_timeline: the timeline of dead letters (bucket choice, counts, peak, trend,
 * rendering), and a timed build of groups and timeline over a million entries.
 */
#include "groups_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "filter.h"
#include "groups.h"
#include "store.h"

/* ---- timeline ---- */

static struct store *times_store(const int64_t *ago_min, size_t n)
{
    struct store *s = NULL;
    struct error err;
    assert_int_equal(store_new(0, NULL, &s, &err), ST_OK);
    for (size_t i = 0; i < n; i++) {
        struct dl d = {"t", "q.dlq", "boom", NULL, NULL, T0 - ago_min[i] * MIN};
        append(s, &d, i);
    }
    return s;
}

static char *render(const struct timeline *t, size_t width, unsigned flags)
{
    struct strbuf sb;
    sb_init(&sb);
    timeline_render(t, width, flags, &sb);
    return sb_detach(&sb, NULL);
}

static void assert_render(const struct timeline *t, size_t width, unsigned flags, const char *want)
{
    char *got = render(t, width, flags);
    if (strcmp(got, want) != 0)
        print_error("--- got ---\n%s--- want ---\n%s", got, want);
    assert_string_equal(got, want);
    free(got);
}

/* timeline_begin and timeline_step in slices of 1, 3 and 7 looks make what timeline_build
 * makes; the looks left count down to 0 (two a entry). */
static void test_timeline_in_steps(void **state)
{
    (void)state;
    static const int64_t burst[] = {40, 31, 30, 30, 0, 30, 29, 29, 28, 20};
    struct store *s = times_store(burst, 10);
    struct timeline_options opt = {.now_ms = T0};
    const uint32_t some[] = {9, 2, 3, 40, 7};
    for (int with = 0; with < 2; with++) {
        if (with) {
            opt.indices = some;
            opt.n_indices = 5;
        }
        struct timeline want;
        timeline_build(s, &opt, &want);
        static const size_t slices[] = {1, 3, 7};
        for (size_t k = 0; k < 3; k++) {
            struct timeline_builder b;
            struct timeline got;
            timeline_begin(&b, s, &opt, &got);
            size_t left = 2 * b.count, now;
            while ((now = timeline_step(&b, slices[k])) != 0) {
                assert_true(now < left);
                left = now;
            }
            assert_int_equal(got.n, want.n);
            assert_int_equal(got.bucket_ms, want.bucket_ms);
            assert_int_equal(got.start_ms, want.start_ms);
            assert_int_equal(got.total, want.total);
            assert_int_equal(got.undated, want.undated);
            assert_int_equal(got.peak, want.peak);
            assert_int_equal(got.trend, want.trend);
            for (size_t i = 0; i < want.n; i++)
                assert_int_equal(got.counts[i], want.counts[i]);
            timeline_free(&got);
        }
        timeline_free(&want);
    }
    store_free(s);
}

static void test_timeline(void **state)
{
    /* 40 minutes: per-minute buckets; a burst 30 minutes ago, quiet since. */
    static const int64_t burst[] = {40, 31, 30, 30, 30, 30, 29, 29, 28, 20};
    struct store *s = times_store(burst, 10);
    struct timeline t;
    struct timeline_options opt = {.now_ms = T0};
    timeline_build(s, &opt, &t);
    assert_int_equal(t.bucket_ms, MIN);
    assert_int_equal(t.start_ms, (T0 - 40 * MIN) / MIN * MIN);
    assert_int_equal(t.n, 41);
    assert_int_equal(t.total, 10);
    assert_int_equal(t.undated, 0);
    assert_int_equal(t.first, 0);
    assert_int_equal(t.last, 20);
    assert_int_equal(t.peak, 10);
    assert_int_equal(t.counts[10], 4);
    assert_int_equal(t.counts[9], 1);
    assert_int_equal(t.counts[11], 2);
    assert_false(t.still_going);
    assert_int_equal(t.trend, TREND_QUIET);
    assert_render(&t, 80, TIMELINE_ASCII,
                  ":        :@=:       :                    \n"
                  "2026-01-02 02:24 .. 2026-01-02 03:05 UTC, 1m a column, 10 total, peak 4 at "
                  "2026-01-02 02:34, stopped\n");
    timeline_free(&t);

    /* The same, squeezed into 20 columns: three buckets a column (two would take 21). */
    timeline_build(s, &opt, &t);
    assert_render(&t, 20, 0,
                  "▂  █▂ ▂       \n"
                  "2026-01-02 02:24 .. 2026-01-02 03:05 UTC, 3m a column, 10 total, peak 4 at "
                  "2026-01-02 02:34, stopped\n");
    timeline_free(&t);
    store_free(s);

    /* Ten hours: the per-minute and five-minute ladders are too fine for 60 buckets. */
    static const int64_t spread[] = {600, 400, 300, 200, 100, 10, 5, 3, 2, 1, 1, 0};
    s = times_store(spread, 12);
    timeline_build(s, &opt, &t);
    assert_int_equal(t.bucket_ms, 15 * MIN);
    assert_true(t.n <= 60);
    assert_int_equal(t.total, 12);
    assert_true(t.still_going);
    assert_int_equal(t.trend, TREND_RISING); /* 7 in the last 20 minutes of 10 hours */
    assert_int_equal(t.counts[t.n - 1], 5);  /* 03:00 to 03:15: 4, 3, 2, 1, 1 minutes ago */
    assert_int_equal(t.counts[t.n - 2], 2);
    timeline_free(&t);
    /* With an hour a bucket, chosen by the caller. */
    opt.bucket_ms = HOUR;
    timeline_build(s, &opt, &t);
    assert_int_equal(t.n, 11);
    assert_int_equal(t.start_ms % HOUR, 0);
    timeline_free(&t);
    store_free(s);

    /* Steady, then falling. */
    static const int64_t steady[] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
    s = times_store(steady, 10);
    opt.bucket_ms = 0;
    opt.now_ms = T0 + 30000; /* half of the last minute has gone */
    timeline_build(s, &opt, &t);
    assert_int_equal(t.trend, TREND_STEADY);
    timeline_free(&t);
    store_free(s);
    static const int64_t falling[] = {10, 10, 10, 10, 10, 10, 9, 9, 9, 9, 9, 2};
    s = times_store(falling, 12);
    opt.now_ms = T0;
    timeline_build(s, &opt, &t);
    assert_int_equal(t.trend, TREND_FALLING);
    timeline_free(&t);
    store_free(s);

    /* Nothing dated, nothing at all. */
    s = times_store(NULL, 0);
    timeline_build(s, NULL, &t);
    assert_int_equal(t.n, 0);
    assert_int_equal(t.trend, TREND_NONE);
    assert_render(&t, 10, 0, "\nno dated arrivals\n");
    timeline_free(&t);
    store_free(s);
    /* A time from the far past and one from the far future do not blow up the buckets. */
    static const int64_t wild[] = {-30000000, 0};
    s = times_store(wild, 2);
    struct timeline_options huge = {.max_buckets = 50};
    timeline_build(s, &huge, &t);
    assert_true(t.n <= 50);
    assert_int_equal(t.total, 2);
    timeline_free(&t);
    store_free(s);
}

static double elapsed_ms(struct timespec a, struct timespec b)
{
    return (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
}

/* A million dead letters with errors that differ in their numbers: three bugs. */
static void test_million(void **state)
{
#ifdef __SANITIZE_ADDRESS__
    size_t n = 100000; /* building the store is slow under the sanitizers */
#else
    size_t n = 1000000;
#endif
    const char *n_env = getenv("DLQX_TEST_MILLION");
    if (n_env && *n_env)
        n = (size_t)strtoul(n_env, NULL, 10);
    struct store *s = NULL;
    struct error err;
    assert_int_equal(store_new(0, NULL, &s, &err), ST_OK);
    struct message m;
    message_init(&m);
    m.headers_present = true;
    static const char *const queues[] = {"payments.dlq", "orders.dlq", "payments.gateway.dlq"};
    for (size_t i = 0; i < n; i++) {
        char id[64], text[160];
        snprintf(id, sizeof id, "%08zx-0000-4000-8000-%012zx", i, i);
        switch (i % 3) {
        case 0:
            snprintf(text, sizeof text,
                     "exhausted %zu attempts: TimeoutException: gateway timed out after %zu ms",
                     i % 5 + 1, 29000 + i % 3000);
            break;
        case 1:
            snprintf(
                text, sizeof text,
                "gave up after %zu attempts: Payments::Declined: order A-%zu: upstream said no",
                i % 5 + 1, 10000 + i % 50000);
            break;
        default:
            snprintf(text, sizeof text,
                     "exhausted 5 attempts: CryptoException: key k-2026-%02zu revoked", i % 12 + 1);
        }
        bytes_free(&m.queue);
        m.queue = bytes_from_cstr(queues[i % 3 == 0 ? (i / 3) % 2 * 2 : i % 3 == 1]);
        htable_set(m.headers, "x-acemq-id", hval_cstring(id));
        htable_set(m.headers, "x-acemq-type",
                   hval_cstring(i % 3 == 1 ? "order.placed" : "payment.charge"));
        htable_set(m.headers, "x-acemq-first-seen",
                   hval_int(HV_I64, T0 - (int64_t)(i % 1440) * MIN));
        htable_set(m.headers, "x-acemq-error", hval_cstring(text));
        assert_int_equal(store_append(s, &m, T0, &err), ST_OK);
    }
    message_free(&m);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct groups *g = groups_build(s, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    print_message("million: %zu entries in %zu groups, built in %.1f ms\n", n, groups_count(g),
                  elapsed_ms(t0, t1));
    assert_int_equal(groups_count(g), 3);
    assert_int_equal(groups_total(g), n);
    for (size_t k = 0; k < groups_count(g); k++) {
        const struct group *x = groups_at(g, k);
        print_message("million:   %7u  %-22s %s (%zu queues)\n", x->count, x->exception, x->key,
                      x->n_queues);
    }
    assert_int_equal(groups_at(g, 0)->n_queues, 2);
    /* In the UI's slices: the same groups, and the longest slice is what a key may wait. */
    double longest = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct groups_builder *b = groups_builder_new(s, NULL);
    for (;;) {
        struct timespec a, z;
        clock_gettime(CLOCK_MONOTONIC, &a);
        size_t left = groups_builder_step(b, 16384);
        clock_gettime(CLOCK_MONOTONIC, &z);
        if (elapsed_ms(a, z) > longest)
            longest = elapsed_ms(a, z);
        if (!left)
            break;
    }
    struct groups *stepped = groups_builder_finish(b);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    print_message("million: in slices of 16384: %.1f ms in all, the longest slice %.1f ms\n",
                  elapsed_ms(t0, t1), longest);
    assert_same_groups(stepped, g, n);
    groups_free(stepped);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct timeline t;
    struct timeline_options opt = {.now_ms = T0};
    timeline_build(s, &opt, &t);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    print_message("million: timeline of %zu buckets of %lld ms in %.1f ms\n", t.n,
                  (long long)t.bucket_ms, elapsed_ms(t0, t1));
    assert_int_equal(t.total, n);
    timeline_free(&t);
    groups_free(g);
    store_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timeline),
        cmocka_unit_test(test_timeline_in_steps),
        cmocka_unit_test(test_million),
    };
    return cmocka_run_group_tests_name("groups_timeline", tests, NULL, NULL);
}
