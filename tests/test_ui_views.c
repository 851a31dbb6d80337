/*
 * The views as drawn, on a screen in memory (term_virtual): the help is one line per action
 * of the table, the list shows the rows, the plan view draws the plan's lines, and a screen
 * below the minimum says only that it is too small.
 */
#include "ui_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"
#include "term.h"
#include "testutil.h"

static const struct uit_msg two[] = {
    {"a-1", "order.placed", "orders.dlq", "boom", "c", NULL, 1, 0, 0},
    {"b-2", "order.placed", "orders.dlq", "bang", "c", "a-1", 2, 0, 0},
};

static char screen[100][512];

/* The whole screen read back, rows × cols; the number of rows. */
static int shot(struct app *a)
{
    app_draw(a);
    int y = 0;
    while (y < 100 && term_virtual_row(y, screen[y], sizeof screen[y], NULL))
        y++;
    return y;
}

static int row_of(int rows, const char *text)
{
    for (int y = 0; y < rows; y++)
        if (strstr(screen[y], text))
            return y;
    for (int y = 0; y < rows; y++)
        print_error("%2d|%s\n", y, screen[y]);
    fail_msg("\"%s\" is not on the screen", text);
    return -1;
}

static void test_help_is_the_table(void **state)
{
    (void)state;
    struct app *a = uit_app(two, 2);
    term_virtual(80, 120);
    app_push(a, &view_messages_ops, SIZE_MAX);
    app_handle(a, ACT_HELP);
    int rows = shot(a);
    assert_int_equal(rows, 80);
    assert_string_equal(screen[1], "KEYS                  ACTION");
    assert_string_equal(screen[2], "k Up                  up             move up");
    /* Every action of the table, on a line of its own, in its order. */
    int last = 1;
    for (int act = 1; act < ACT_COUNT; act++) {
        char keys[64], line[256];
        action_keys_shown((enum action)act, keys, sizeof keys);
        snprintf(line, sizeof line, "%-20s  %-14s %s", keys, action_name((enum action)act),
                 action_help((enum action)act));
        int y = row_of(rows, line);
        assert_true(y > last);
        last = y;
    }
    row_of(rows, "p Space (pass)        pause");
    row_of(rows, "Filters (f): terms are ANDed");
    term_virtual(0, 0);
    uit_free(a);
}

static void test_list_and_title(void **state)
{
    (void)state;
    struct app *a = uit_app(two, 2);
    a->source_label = xstrdup("snap.jsonl");
    term_virtual(20, 100);
    app_push(a, &view_messages_ops, SIZE_MAX);
    int rows = shot(a);
    assert_non_null(strstr(screen[0], " dlqx  messages  snap.jsonl  [read-only]"));
    assert_non_null(strstr(screen[0], "2 messages"));
    int y = row_of(rows, "a-1");
    assert_true(row_of(rows, "b-2") == y + 1);
    assert_non_null(strstr(screen[rows - 1], "? help  q quit"));
    free(a->source_label);
    a->source_label = NULL;
    term_virtual(0, 0);
    uit_free(a);
}

static void test_plan_view_draws_the_plan(void **state)
{
    (void)state;
    struct app *a = uit_app(two, 2);
    a->read_only = false; /* no broker: the routes are not checked, nothing can be sent */
    term_virtual(40, 120);
    app_push(a, &view_messages_ops, SIZE_MAX);
    size_t entry = 0;
    plan_open(a, PLAN_REPLAY, &entry, 1, "this message", a->rows, a->n_rows, "the 2 shown");
    int rows = shot(a);
    assert_non_null(strstr(screen[0], " dlqx  plan"));
    assert_string_equal(screen[1], "replay this message of orders.dlq: 1 to send, 0 kept");
    row_of(rows, "1 → queue orders");
    row_of(rows, "copy 1 of 1: a-1");
    row_of(rows, "y: replay  n/N: copy");
    /* a: every message shown. */
    app_handle(a, ACT_SCOPE);
    rows = shot(a);
    assert_string_equal(screen[1], "replay the 2 shown of orders.dlq: 2 to send, 0 kept");
    /* y with no broker sends nothing, and says why. */
    app_handle(a, ACT_CONFIRM);
    assert_non_null(strstr(a->message, "no broker"));
    app_handle(a, ACT_BACK);
    assert_ptr_equal(app_view(a)->ops, &view_messages_ops);
    term_virtual(0, 0);
    uit_free(a);
}

/* The timeline is kept between visits (ten million rows take ~0.4 s to count) and made again
 * when what it counts changes: the set of rows (a filter), their number (arrivals). */
static void test_timeline_kept_until_the_rows_change(void **state)
{
    (void)state;
    const int64_t t0 = 1767330000000LL - 3600000;
    const struct uit_msg three[] = {
        {"a-1", "order.placed", "orders.dlq", "boom", "c", NULL, 1, t0, t0},
        {"b-2", "order.placed", "orders.dlq", "bang", "c", "a-1", 2, t0 + 60000, t0},
        {"c-3", "order.placed", "orders.dlq", "bang", "c", "b-2", 3, t0 + 120000, t0},
    };
    struct app *a = uit_app(three, 3);
    a->now_ms = 1767330000000LL;
    term_virtual(30, 100);
    app_push(a, &view_messages_ops, SIZE_MAX);
    app_push(a, &view_timeline_ops, SIZE_MAX);
    int rows = shot(a);
    row_of(rows, ", 3 total, ");
    unsigned long made = a->timeline_made;
    app_handle(a, ACT_BACK);
    app_push(a, &view_timeline_ops, SIZE_MAX);
    rows = shot(a);
    row_of(rows, ", 3 total, ");
    assert_int_equal(a->timeline_made, made); /* not made again */
    app_handle(a, ACT_BACK);
    assert_true(app_set_filter(a, "attempt>=2"));
    uit_finish(a);
    assert_int_equal(a->n_rows, 2);
    app_push(a, &view_timeline_ops, SIZE_MAX);
    rows = shot(a);
    row_of(rows, ", 2 total, ");
    app_handle(a, ACT_BACK);
    const struct uit_msg more[] = {{"d-4", "t", "orders.dlq", "bang", "c", NULL, 4, t0, t0}};
    uit_append(a, more, 1);
    app_rows_extend(a);
    assert_int_equal(a->n_rows, 3);
    app_push(a, &view_timeline_ops, SIZE_MAX);
    rows = shot(a);
    row_of(rows, ", 3 total, ");
    term_virtual(0, 0);
    uit_free(a);
}

static void test_too_small(void **state)
{
    (void)state;
    struct app *a = uit_app(two, 2);
    term_virtual(10, 40);
    app_push(a, &view_messages_ops, SIZE_MAX);
    int rows = shot(a);
    assert_string_equal(screen[0], "terminal too small: 40\xc3\x97"
                                   "10, dlqx needs at");
    assert_string_equal(screen[1], "least 60\xc3\x97"
                                   "12");
    for (int y = 2; y < rows; y++)
        assert_string_equal(screen[y], "");
    term_virtual(0, 0);
    uit_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_help_is_the_table),
        cmocka_unit_test(test_list_and_title),
        cmocka_unit_test(test_plan_view_draws_the_plan),
        cmocka_unit_test(test_too_small),
        cmocka_unit_test(test_timeline_kept_until_the_rows_change),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
