/*
 * What the explorer makes of its rows (ui/data.c): the failure groups of the rows and the
 * causal forest of the store, each made by a job once per generation and kept; made again
 * for a new set of rows (the old ones shown meanwhile), dropped for a new store, stopped and
 * started again.
 */
#include "ui_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups.h"
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_groups_of_the_rows),
        cmocka_unit_test(test_groups_follow_the_filter),
        cmocka_unit_test(test_grouping_cancelled_and_again),
        cmocka_unit_test(test_forest_of_the_store),
        cmocka_unit_test(test_forest_cancelled_and_built_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
