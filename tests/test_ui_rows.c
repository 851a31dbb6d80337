/*
 * The explorer's rows (ui/rows.c): the messages that pass the filter, in the order asked for,
 * made by a job — the filter, the sorts (stable: ties keep the order received), reversing,
 * a filter that does not compile, a job cancelled half-way (the rows as they were), new
 * messages joining while files are read, dead letters a pass took away, the ages' clock.
 */
#include "ui_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const struct uit_msg five[] = {
    {"a", "order.placed", "orders.dlq", "boom", NULL, NULL, 3, UIT_NOW - 5000, UIT_NOW - 100},
    {"b", "payment.charge", "payments.dlq", "timeout", NULL, NULL, 1, UIT_NOW - 9000,
     UIT_NOW - 200},
    {"c", "order.placed", "orders.dlq", "boom", NULL, NULL, 1, UIT_NOW - 1000, UIT_NOW - 50},
    {"d", "audit.write", "audit.dead", "full", NULL, NULL, 3, UIT_NOW - 7000, UIT_NOW - 300},
    {"e", "order.placed", "payments.dlq", "boom", NULL, NULL, 2, UIT_NOW - 3000, UIT_NOW - 10},
};

/* The rows as their ids, "a b c". */
static char *row_ids(struct app *a)
{
    struct strbuf sb;
    sb_init(&sb);
    char buf[STORE_TEXT_MAX];
    for (size_t i = 0; i < a->n_rows; i++) {
        size_t len = store_text(a->store, store_entry_at(a->store, a->rows[i])->id, buf);
        if (i)
            sb_addc(&sb, ' ');
        sb_add(&sb, buf, len);
    }
    if (!sb.buf)
        sb_adds(&sb, "");
    return sb_detach(&sb, NULL);
}

static void assert_rows(struct app *a, const char *want)
{
    char *got = row_ids(a);
    if (strcmp(got, want) != 0)
        fail_msg("rows: got \"%s\", want \"%s\"", got, want);
    free(got);
}

static void sorted(struct app *a, int column, bool reverse)
{
    app_set_sort(a, column, reverse);
    uit_finish(a);
    assert_int_equal(a->sort_column, column);
    assert_int_equal(a->sort_reverse, reverse);
}

static void test_every_message_as_received(void **state)
{
    (void)state;
    struct app *a = uit_app(five, 5);
    assert_rows(a, "a b c d e");
    assert_int_equal(a->sort_column, SORT_ORDER);
    assert_null(a->filter);
    uit_free(a);
}

static void test_sorts_are_stable(void **state)
{
    (void)state;
    struct app *a = uit_app(five, 5);
    sorted(a, SORT_ATTEMPT, false);
    assert_rows(a, "b c e a d"); /* 1 1 2 3 3: ties as received */
    assert_string_equal(a->message, "sorted by attempt");
    sorted(a, SORT_ATTEMPT, true);
    assert_rows(a, "a d e b c"); /* reversed, the ties still as received */
    sorted(a, SORT_TYPE, false);
    assert_rows(a, "d a c e b"); /* audit, order ×3, payment */
    sorted(a, SORT_QUEUE, false);
    assert_rows(a, "d a c b e");
    sorted(a, SORT_AGE, false);
    assert_rows(a, "c e a d b"); /* ages ascending: the newest first */
    sorted(a, SORT_ORDER, true);
    assert_rows(a, "e d c b a");
    sorted(a, SORT_ORDER, false);
    assert_rows(a, "a b c d e");
    assert_string_equal(app_sort_name(SORT_ID), "id");
    assert_string_equal(app_sort_name(99), "?");
    uit_free(a);
}

static void test_filter_keeps_the_order(void **state)
{
    (void)state;
    struct app *a = uit_app(five, 5);
    sorted(a, SORT_ATTEMPT, true);
    assert_true(app_set_filter(a, "type:order.*"));
    uit_finish(a);
    assert_rows(a, "a e c"); /* the order asked for, over the rows that match */
    assert_string_equal(a->filter_text, "type:order.*");
    assert_string_equal(a->message, "3 messages match");
    assert_true(app_row_matches(a, uit_entry(a, "c")));
    assert_false(app_row_matches(a, uit_entry(a, "b")));
    /* A filter that does not compile changes nothing and says why. */
    assert_false(app_set_filter(a, "attempt>"));
    assert_true(a->message_is_error);
    assert_non_null(strstr(a->message, "filter:"));
    assert_string_equal(a->filter_text, "type:order.*");
    assert_rows(a, "a e c");
    /* Cleared: every message again, in the same order. */
    assert_true(app_set_filter(a, NULL));
    uit_finish(a);
    assert_null(a->filter);
    assert_rows(a, "a d e b c");
    assert_string_equal(a->message, "filter cleared");
    uit_free(a);
}

static void assert_row_entries(struct app *a, const size_t *want, size_t n)
{
    assert_int_equal(a->n_rows, n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(a->rows[i], want[i]);
}

/* By id the rows are sorted on their texts at once (no ranks): past the first 8 bytes, a
 * prefix first, equal ids as received both ways. */
static void test_sort_by_id(void **state)
{
    (void)state;
    static const struct uit_msg ids[] = {
        {"ord-00000012", "t", "q", "e", NULL, NULL, 1, UIT_NOW - 5, UIT_NOW - 1},
        {"ord-00000002", "t", "q", "e", NULL, NULL, 1, UIT_NOW - 5, UIT_NOW - 1},
        {"ord-00000012", "t", "q", "e", NULL, NULL, 1, UIT_NOW - 5, UIT_NOW - 1},
        {"b", "t", "q", "e", NULL, NULL, 1, UIT_NOW - 5, UIT_NOW - 1},
        {"ord-0000001", "t", "q", "e", NULL, NULL, 1, UIT_NOW - 5, UIT_NOW - 1},
        {"ord-0000", "t", "q", "e", NULL, NULL, 1, UIT_NOW - 5, UIT_NOW - 1},
        /* UUIDs, kept in 16 bytes: their texts formatted for the sort */
        {"0a3e4567-e89b-42d3-a456-426614174001", "t", "q", "e", NULL, NULL, 1, UIT_NOW - 5,
         UIT_NOW - 1},
        {"0a3e4567-e89b-42d3-a456-426614174000", "t", "q", "e", NULL, NULL, 1, UIT_NOW - 5,
         UIT_NOW - 1},
    };
    struct app *a = uit_app(ids, 8);
    size_t len;
    assert_null(store_text_view(a->store, store_entry_at(a->store, 7)->id, &len));
    sorted(a, SORT_ID, false);
    static const size_t up[] = {7, 6, 3, 5, 1, 4, 0, 2}, down[] = {0, 2, 4, 1, 5, 3, 6, 7};
    assert_row_entries(a, up, 8);
    sorted(a, SORT_ID, true);
    assert_row_entries(a, down, 8);
    uit_free(a);
}

/* Half-way, the rows on screen are the old ones; cancelled, they stay so. */
static void test_cancelled_job_leaves_the_rows(void **state)
{
    (void)state;
    struct app *a = uit_app_generated(6000);
    assert_int_equal(a->n_rows, 6000);
    uit_keys_waiting();
    assert_true(app_set_filter(a, "attempt>=5"));
    assert_true(app_busy(a));
    assert_true(app_rows_rescanning(a));
    assert_string_equal(app_filter_wanted(a), "attempt>=5");
    assert_null(a->filter_text);
    assert_int_equal(a->n_rows, 6000);
    struct strbuf line;
    sb_init(&line);
    app_work_status(a, &line);
    assert_non_null(strstr(line.buf, "filtering 6,000 messages"));
    assert_non_null(strstr(line.buf, "Esc cancels"));
    sb_free(&line);
    /* A sort asked for meanwhile keeps the filter that was on its way. */
    app_set_sort(a, SORT_ID, false);
    int column;
    bool reverse;
    app_sort_wanted(a, &column, &reverse);
    assert_int_equal(column, SORT_ID);
    assert_string_equal(app_filter_wanted(a), "attempt>=5");
    assert_true(app_cancel_work(a));
    assert_false(app_busy(a));
    assert_string_equal(a->message, "filter cancelled: the list is as it was");
    assert_null(a->filter);
    assert_int_equal(a->n_rows, 6000);
    assert_int_equal(a->sort_column, SORT_ORDER);
    /* Done to the end, slice by slice: 2 of every 7 attempts are 5 or 6. */
    assert_true(app_set_filter(a, "attempt>=5"));
    uit_finish(a);
    uit_keys_idle();
    size_t want = 0;
    for (size_t i = 0; i < 6000; i++)
        want += i % 7 >= 5;
    assert_int_equal(a->n_rows, want);
    for (size_t i = 1; i < a->n_rows; i++)
        assert_true(a->rows[i - 1] < a->rows[i]);
    uit_free(a);
}

/* While files are read, new messages join the rows at the end; when reading ends they go to
 * their place in the order. */
static void test_rows_extend_then_complete(void **state)
{
    (void)state;
    struct app *a = uit_app(five, 3);
    sorted(a, SORT_ATTEMPT, false);
    assert_rows(a, "b c a");
    assert_true(app_set_filter(a, "-queue=audit.dead"));
    uit_finish(a);
    uit_append(a, five + 3, 2);
    app_rows_extend(a);
    assert_rows(a, "b c a e"); /* d is filtered out; e waits at the end */
    app_rows_complete(a);
    uit_finish(a);
    assert_rows(a, "b c e a");
    uit_free(a);
}

static void test_gone_leave_the_rows(void **state)
{
    (void)state;
    struct app *a = uit_app(five, 5);
    size_t c = uit_entry(a, "c");
    assert_null(app_gone_name(a, c));
    app_mark_gone(a, c, GONE_REPLAYED);
    app_mark_gone(a, uit_entry(a, "d"), GONE_DELETED);
    app_mark_gone(a, 99, GONE_MOVED); /* not in the store: nothing */
    assert_int_equal(a->n_gone, 2);
    app_rows_drop_gone(a);
    uit_finish(a);
    assert_rows(a, "a b e");
    assert_string_equal(app_gone_name(a, c), "replayed");
    assert_string_equal(app_gone_name(a, uit_entry(a, "d")), "deleted");
    assert_false(app_row_matches(a, c));
    /* A new store: nothing is gone from it. */
    app_data_changed(a);
    uit_finish(a);
    assert_int_equal(a->n_gone, 0);
    assert_rows(a, "a b c d e");
    uit_free(a);
}

static void test_age_clock(void **state)
{
    (void)state;
    struct app *a = uit_app(five, 5);
    assert_int_equal(app_age_clock(a), UIT_NOW);
    assert_string_equal(app_age_clock_name(a), "from now");
    app_age_clock_toggle(a);
    assert_true(a->ages_as_of_snapshot);
    assert_int_equal(app_age_clock(a), UIT_NOW - 10); /* the newest fetched_at_ms */
    assert_string_equal(app_age_clock_name(a), "as of the snapshot");
    assert_non_null(strstr(a->message, "2026-01-02T03:04:05"));
    app_age_clock_toggle(a);
    assert_false(a->ages_as_of_snapshot);
    uit_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_message_as_received),
        cmocka_unit_test(test_sorts_are_stable),
        cmocka_unit_test(test_sort_by_id),
        cmocka_unit_test(test_filter_keeps_the_order),
        cmocka_unit_test(test_cancelled_job_leaves_the_rows),
        cmocka_unit_test(test_rows_extend_then_complete),
        cmocka_unit_test(test_gone_leave_the_rows),
        cmocka_unit_test(test_age_clock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
