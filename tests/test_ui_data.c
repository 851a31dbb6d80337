/*
 * What the explorer makes of its rows (ui/data.c): the failure groups of the rows and the
 * causal forest of the store, each made by a job once per generation and kept; made again
 * for a new set of rows (the old ones shown meanwhile), dropped for a new store, stopped and
 * started again.
 */
#include "ui_testutil.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker_opts.h"
#include "groups.h"
#include "snapshot.h"
#include "source.h"
#include "store.h"
#include "testutil.h"

/* Three bugs among six dead letters, and a chain: a caused b, b caused c (correlation k). */
static const struct uit_msg six[] = {
    {"a", "order.placed", "orders.dlq", "exhausted 5 attempts: TimeoutException: after 30000 ms",
     "k", NULL, 5, 0, 0},
    {"b", "order.placed", "orders.dlq", "exhausted 3 attempts: TimeoutException: after 29000 ms",
     "k", "a", 3, 0, 0},
    {"c", "payment.charge", "payments.dlq", "Declined: order A-1", "k", "b", 1, 0, 0},
    {"d", "payment.charge", "payments.dlq", "Declined: order A-2", NULL, NULL, 1, 0, 0},
    {"e", "order.placed", "orders.dlq", "exhausted 4 attempts: TimeoutException: after 31000 ms",
     NULL, NULL, 4, 0, 0},
    {"f", "audit.write", "audit.dead", "disk full", NULL, NULL, 1, 0, 0},
};

static const struct groups *made_groups(struct app *a)
{
    bool current = false;
    const struct groups *g = app_groups(a, &current);
    if (!current) {
        uit_finish(a);
        g = app_groups(a, &current);
    }
    assert_true(current);
    assert_non_null(g);
    return g;
}

static void test_groups_of_the_rows(void **state)
{
    (void)state;
    struct app *a = uit_app(six, 6);
    const struct groups *g = made_groups(a);
    assert_int_equal(groups_count(g), 3);
    assert_int_equal(groups_total(g), 6);
    /* By count: the timeouts (a, b, e), the declines (c, d), the disk. */
    assert_int_equal(groups_at(g, 0)->count, 3);
    assert_string_equal(groups_at(g, 0)->type, "order.placed");
    assert_int_equal(groups_at(g, 1)->count, 2);
    assert_int_equal(groups_at(g, 2)->count, 1);
    assert_int_equal(groups_of_entry(g, uit_entry(a, "e")), 0);
    assert_int_equal(groups_of_entry(g, uit_entry(a, "d")), 1);
    /* Kept: asked again, the same groups, no job. */
    bool current = false;
    assert_ptr_equal(app_groups(a, &current), g);
    assert_true(current);
    assert_false(app_groups_building(a));
    uit_free(a);
}

/* A filter makes a new set: the old groups are shown until the new ones are made. */
static void test_groups_follow_the_filter(void **state)
{
    (void)state;
    struct app *a = uit_app(six, 6);
    made_groups(a);
    uit_keys_waiting();
    assert_true(app_set_filter(a, "queue=payments.dlq OR queue=audit.dead"));
    uit_finish(a);
    uit_keys_idle();
    assert_int_equal(a->n_rows, 3);
    bool current = true;
    const struct groups *old = app_groups(a, &current);
    if (!current) {
        assert_non_null(old);
        assert_int_equal(groups_total(old), 6); /* the old set's, meanwhile */
    }
    const struct groups *g = made_groups(a);
    assert_int_equal(groups_count(g), 2);
    assert_int_equal(groups_total(g), 3);
    uit_free(a);
}

static void test_grouping_cancelled_and_again(void **state)
{
    (void)state;
    struct app *a = uit_app_generated(12000);
    uit_keys_waiting();
    bool current = true;
    assert_null(app_groups(a, &current));
    assert_false(current);
    assert_true(app_groups_building(a));
    struct strbuf line;
    sb_init(&line);
    app_work_status(a, &line);
    assert_non_null(strstr(line.buf, "grouping 12,000 messages by cause"));
    sb_free(&line);
    assert_true(app_cancel_work(a));
    assert_true(a->groups_cancelled);
    assert_non_null(strstr(a->message, "grouping cancelled"));
    /* Not started again by itself (the user stopped it)… */
    assert_null(app_groups(a, &current));
    assert_false(app_groups_building(a));
    /* …but on asking. */
    app_group_again(a);
    uit_finish(a);
    uit_keys_idle();
    const struct groups *g = made_groups(a);
    assert_int_equal(groups_total(g), 12000);
    assert_int_equal(groups_count(g), 4 * 5); /* 4 errors (one: none) × 5 types */
    uit_free(a);
}

/* A filter while grouping: the grouping of the old set is replaced by one of the new set,
 * which is not a cancel (it used to set the cancelled mark again as it was replaced, and say
 * "grouping cancelled" while the new grouping ran). */
static void test_grouping_replaced_is_not_cancelled(void **state)
{
    (void)state;
    struct app *a = uit_app_generated(12000);
    uit_keys_waiting();
    bool current = true;
    assert_null(app_groups(a, &current));
    assert_true(app_groups_building(a));
    assert_true(app_set_filter(a, "NOT type=type-1")); /* 9,600: more than a slice */
    /* The rows job comes before the grouping: step until the new set is made. */
    for (int i = 0; i < 10000 && app_rows_rescanning(a); i++) {
        bool ended = false;
        app_work(a, 5, &ended);
    }
    assert_false(app_rows_rescanning(a));
    assert_true(app_groups_building(a)); /* the old set's, still running */
    app_groups(a, &current);             /* a newer set: grouped again */
    assert_false(current);
    assert_true(app_groups_building(a));
    assert_false(a->groups_cancelled);
    assert_null(strstr(a->message, "grouping cancelled"));
    uit_finish(a);
    uit_keys_idle();
    const struct groups *g = made_groups(a);
    assert_int_equal(groups_total(g), a->n_rows);
    assert_true(a->n_rows < 12000);
    uit_free(a);
}

/* A filter's rows listed for grouping in slices (more than a slice of them), with a sort
 * installed half-way: the listing starts again from the new order and misses no row. */
static void test_grouping_lists_rows_in_slices(void **state)
{
    (void)state;
    struct app *a = uit_app_generated(30000);
    assert_true(app_set_filter(a, "NOT type=type-1"));
    uit_finish(a);
    assert_int_equal(a->n_rows, 24000);
    uit_keys_waiting();
    bool current = true;
    assert_null(app_groups(a, &current));
    assert_true(app_groups_building(a));
    uint64_t rows_gen = a->rows_gen;
    app_set_sort(a, SORT_ATTEMPT, true);
    for (int i = 0; i < 100000 && a->rows_gen == rows_gen; i++) {
        bool ended = false;
        app_work(a, 5, &ended);
    }
    assert_int_not_equal(a->rows_gen, rows_gen);
    assert_true(app_groups_building(a));
    uit_finish(a);
    uit_keys_idle();
    const struct groups *g = made_groups(a);
    assert_int_equal(groups_total(g), 24000);
    assert_int_equal(groups_count(g), 4 * 4); /* 4 errors × the 4 types left */
    for (size_t i = 0; i < 30000; i += 97)
        assert_int_equal(groups_of_entry(g, i) != SIZE_MAX, app_row_matches(a, i));
    uit_free(a);
}

static void test_forest_of_the_store(void **state)
{
    (void)state;
    struct app *a = uit_app(six, 6);
    if (!app_forest(a)) {
        uit_finish(a);
        assert_true(app_forest(a));
    }
    assert_int_equal(a->forest.n_messages, 6);
    /* k: a → b → c is one tree; d, e, f stand alone. */
    assert_int_equal(a->forest.n_roots, 4);
    uint64_t gen = a->data_gen;
    assert_true(app_forest(a)); /* kept */
    assert_int_equal(a->data_gen, gen);
    /* A new store drops what was made of the old one. */
    app_data_changed(a);
    assert_null(a->groups);
    assert_int_equal(a->forest_count, 0);
    uit_finish(a);
    uit_free(a);
}

static void test_forest_cancelled_and_built_again(void **state)
{
    (void)state;
    struct app *a = uit_app_generated(4000);
    uit_keys_waiting();
    assert_false(app_forest(a));
    assert_true(app_forest_building(a));
    assert_true(app_cancel_work(a));
    assert_true(a->forest_cancelled);
    assert_false(app_forest(a)); /* stays stopped */
    assert_false(app_forest_building(a));
    app_build_forest(a);
    uit_finish(a);
    uit_keys_idle();
    assert_true(app_forest(a));
    assert_int_equal(a->forest.n_messages, 4000);
    assert_int_equal(a->forest.n_roots, 1000); /* one chain per correlation of four */
    uit_free(a);
}

/* A dead letter of the loader's test: its id is m-I, its error names I. */
static void numbered(struct message *m, size_t i)
{
    message_init(m);
    char id[32], err[64];
    snprintf(id, sizeof id, "m-%zu", i);
    snprintf(err, sizeof err, "exhausted 5 attempts: TimeoutException: %zu ms", i);
    m->queue = bytes_from_cstr(i % 2 ? "orders.dlq" : "payments.dlq");
    m->fetched_at_ms = UIT_NOW - (int64_t)i;
    m->headers_present = true;
    htable_add(m->headers, "x-acemq-id", hval_cstring(id));
    htable_add(m->headers, "x-acemq-type", hval_cstring("order.placed"));
    htable_add(m->headers, "x-acemq-error", hval_cstring(err));
    m->body = bytes_from_cstr("{\"n\":1}");
}

/* Writes the numbered records first..first+n-1 to out, a malformed line before record
 * bad_at (SIZE_MAX: none). */
static void write_numbered(FILE *out, size_t first, size_t n, size_t bad_at)
{
    for (size_t i = 0; i < n; i++) {
        if (i == bad_at)
            fputs("{not a record\n\n", out);
        struct message m;
        numbered(&m, first + i);
        struct strbuf line;
        sb_init(&line);
        snapshot_format(&m, &line);
        fwrite(line.buf, 1, line.len, out);
        sb_free(&line);
        message_free(&m);
    }
}

/* No key waits while the loop reads: standard input an empty pipe (keys[2], the saved one). */
static void keys_none(int keys[3])
{
    keys[2] = dup(STDIN_FILENO);
    assert_int_equal(pipe(keys), 0);
    dup2(keys[0], STDIN_FILENO);
}

static void keys_back(int keys[3])
{
    dup2(keys[2], STDIN_FILENO);
    close(keys[2]);
    close(keys[0]);
    close(keys[1]);
}

/* Snapshot files read by the loader (a worker decodes them in batches): every record, in
 * order, across batches and files, the malformed one counted, and each record read back from
 * its file (not copied into the store). */
static void test_files_loaded_in_order(void **state)
{
    (void)state;
    enum { N = 5000 }; /* over two of the loader's batches in each file */
    char dir[] = "/tmp/dlqx-test-load-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *paths[2];
    for (int f = 0; f < 2; f++) {
        paths[f] = xasprintf("%s/%d.jsonl", dir, f);
        FILE *out = fopen(paths[f], "wb");
        assert_non_null(out);
        write_numbered(out, (size_t)f * N, N, f == 1 ? 3000 : SIZE_MAX);
        assert_int_equal(fclose(out), 0);
    }
    int keys[3];
    keys_none(keys);
    struct app *a = uit_app(NULL, 0);
    app_source_set(a, &source_file_ops, source_file_new(paths, 2));
    assert_true(app_source_start(a));
    uit_finish(a);
    keys_back(keys);
    assert_false(app_source_busy(a));
    assert_int_equal(store_count(a->store), 2 * N);
    assert_non_null(strstr(a->message, "1 malformed records skipped"));
    char buf[STORE_TEXT_MAX], want[32];
    struct error err;
    for (size_t i = 0; i < 2 * N; i++) {
        const struct store_entry *e = store_entry_at(a->store, i);
        snprintf(want, sizeof want, "m-%zu", i);
        store_text(a->store, e->id, buf);
        assert_string_equal(buf, want);
        assert_int_equal(e->file, i < N ? 1 : 2);
        if (i % 499 == 0 || i == N - 1 || i == N) {
            struct message m, back;
            numbered(&m, i);
            assert_int_equal(store_get(a->store, i, &back, &err), ST_OK);
            assert_true(message_equal(&m, &back));
            message_free(&m);
            message_free(&back);
        }
    }
    uit_free(a);
    for (int f = 0; f < 2; f++) {
        unlink(paths[f]);
        free(paths[f]);
    }
    rmdir(dir);
}

/* Reading stopped part-way (Esc on the first view): the set is said to be partial until the
 * next start, not only on the message line that the next key clears. */
static void test_reading_stopped_is_partial(void **state)
{
    (void)state;
    enum { N = 5000 };
    char dir[] = "/tmp/dlqx-test-stop-XXXXXX";
    assert_non_null(mkdtemp(dir));
    char *path = xasprintf("%s/s.jsonl", dir);
    FILE *out = fopen(path, "wb");
    assert_non_null(out);
    write_numbered(out, 0, N, SIZE_MAX);
    assert_int_equal(fclose(out), 0);
    int keys[3];
    keys_none(keys);
    struct app *a = uit_app(NULL, 0);
    char *paths[] = {path};
    app_source_set(a, &source_file_ops, source_file_new(paths, 1));
    assert_true(app_source_start(a));
    assert_false(app_source_stopped(a));
    assert_true(app_cancel_work(a)); /* no job: the reading is what stops */
    assert_false(app_source_busy(a));
    assert_true(app_source_stopped(a));
    assert_true(store_count(a->store) < N);
    assert_non_null(strstr(a->message, "reading stopped"));
    a->message[0] = '\0'; /* a key */
    assert_true(app_source_stopped(a));
    /* Read again: whole, and no longer partial. */
    assert_true(app_source_start(a));
    assert_false(app_source_stopped(a));
    uit_finish(a);
    assert_int_equal(store_count(a->store), N);
    assert_false(app_source_stopped(a));
    keys_back(keys);
    uit_free(a);
    unlink(path);
    free(path);
    rmdir(dir);
}

/* A snapshot of a queue that cannot be read at all (nothing listens where the broker should
 * be) is partial too: the title says so, not only the message line. */
static void test_peek_failed_is_partial(void **state)
{
    (void)state;
    struct broker_opts b;
    broker_opts_init(&b);
    b.url_store[0] = xstrdup("amqp://dlqx@127.0.0.1:1/"); /* port 1: refused at once */
    b.urls[0] = b.url_store[0];
    b.n_urls = 1;
    b.password = xstrdup("x");
    b.no_mgmt = true;
    struct app *a = uit_app(NULL, 0);
    a->broker = &b;
    app_source_set(a, &source_peek_ops, source_peek_new("test"));
    char *queues[] = {"orders.dlq"};
    assert_false(source_peek_open(a, queues, 1));
    assert_false(app_source_busy(a));
    assert_int_equal(store_count(a->store), 0);
    assert_true(app_source_stopped(a));
    assert_non_null(strstr(a->message, "orders.dlq: cannot connect"));
    uit_free(a);
    broker_opts_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_groups_of_the_rows),
        cmocka_unit_test(test_groups_follow_the_filter),
        cmocka_unit_test(test_grouping_cancelled_and_again),
        cmocka_unit_test(test_grouping_replaced_is_not_cancelled),
        cmocka_unit_test(test_grouping_lists_rows_in_slices),
        cmocka_unit_test(test_forest_of_the_store),
        cmocka_unit_test(test_forest_cancelled_and_built_again),
        cmocka_unit_test(test_files_loaded_in_order),
        cmocka_unit_test(test_reading_stopped_is_partial),
        cmocka_unit_test(test_peek_failed_is_partial),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
