/*
 * The explorer's long work (ui/job.c): a job's first slice runs at once, the rest between
 * keys until it is done; its progress line; one job of each kind (a new one cancels the old
 * one); cancelling stops the foremost; every end hook runs once.
 */
#include "ui_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* A job that counts to its total, per slice at most `per` (or until it should yield). */
struct counter {
    uint64_t n, total, per;
    int ends, cancels;
    int *ended_order, *n_ended; /* the order jobs ended in, by their total */
};

static enum job_rc count_step(struct app *a, struct job *j, double until)
{
    struct counter *c = j->state;
    (void)a;
    for (uint64_t k = 0; k < c->per && c->n < c->total; k++)
        c->n++;
    j->done = c->n;
    j->total = c->total;
    return c->n < c->total ? JOB_MORE : JOB_DONE;
}

static void count_describe(struct app *a, const struct job *j, struct strbuf *out)
{
    const struct counter *c = j->state;
    (void)a;
    sb_addf(out, "counting to %llu", (unsigned long long)c->total);
}

static void count_end(struct app *a, struct job *j, bool cancelled)
{
    struct counter *c = j->state;
    (void)a;
    c->ends++;
    c->cancels += cancelled;
    if (c->ended_order)
        c->ended_order[(*c->n_ended)++] = (int)c->total;
}

static const struct job_ops count_ops = {count_step, count_describe, count_end};

static struct app *empty_app(void)
{
    return uit_app(NULL, 0);
}

static void test_small_work_is_done_at_once(void **state)
{
    (void)state;
    struct app *a = empty_app();
    struct counter c = {0, 10, 100, 0, 0, NULL, NULL};
    job_start(a, JOB_GROUPS, &count_ops, &c);
    assert_int_equal(c.n, 10);
    assert_int_equal(c.ends, 1);
    assert_int_equal(c.cancels, 0);
    assert_false(app_busy(a));
    uit_free(a);
}

static void test_stepped_to_completion(void **state)
{
    (void)state;
    struct app *a = empty_app();
    struct counter c = {0, 10, 3, 0, 0, NULL, NULL};
    job_start(a, JOB_GROUPS, &count_ops, &c);
    assert_int_equal(c.n, 3); /* the first slice */
    assert_true(app_busy(a));
    assert_ptr_equal(job_state(a, JOB_GROUPS, &count_ops), &c);
    assert_null(job_state(a, JOB_FOREST, &count_ops));
    struct strbuf line;
    sb_init(&line);
    app_work_status(a, &line);
    assert_string_equal(line.buf, "counting to 10\xe2\x80\xa6 30%  Esc cancels");
    sb_reset(&line);
    a->ascii = true;
    a->depth = 2; /* a view opened on another: Esc goes back there, Ctrl-g stops */
    app_work_status(a, &line);
    assert_string_equal(line.buf, "counting to 10... 30%  Ctrl-g cancels");
    a->depth = 0;
    sb_free(&line);
    bool ended = false;
    assert_int_equal(app_work(a, 20, &ended), JOB_MORE);
    assert_false(ended);
    assert_int_equal(c.n, 6);
    int slices = 0;
    while (app_busy(a)) {
        app_work(a, 20, &ended);
        slices++;
    }
    assert_int_equal(slices, 2);
    assert_true(ended);
    assert_int_equal(c.n, 10);
    assert_int_equal(c.ends, 1);
    assert_int_equal(c.cancels, 0);
    bool again = false;
    assert_int_equal(app_work(a, 20, &again), JOB_DONE);
    assert_false(app_cancel_work(a)); /* nothing to stop */
    uit_free(a);
}

static void test_cancel_and_supersede(void **state)
{
    (void)state;
    struct app *a = empty_app();
    int order[8], n = 0;
    struct counter rows = {0, 100, 1, 0, 0, order, &n};
    struct counter search = {0, 200, 1, 0, 0, order, &n};
    struct counter again = {0, 300, 1, 0, 0, order, &n};
    job_start(a, JOB_ROWS, &count_ops, &rows);
    job_start(a, JOB_SEARCH, &count_ops, &search);
    /* Only the foremost advances: the search. */
    bool ended = false;
    app_work(a, 20, &ended);
    assert_int_equal(search.n, 2);
    assert_int_equal(rows.n, 1);
    /* A new job of a kind cancels the one of that kind. */
    job_start(a, JOB_SEARCH, &count_ops, &again);
    assert_int_equal(search.ends, 1);
    assert_int_equal(search.cancels, 1);
    /* Stopping stops the foremost first. */
    assert_true(app_cancel_work(a));
    assert_int_equal(again.cancels, 1);
    assert_int_equal(rows.ends, 0);
    assert_true(app_busy(a));
    job_cancel_all(a);
    assert_false(app_busy(a));
    assert_int_equal(rows.cancels, 1);
    assert_int_equal(n, 3);
    assert_int_equal(order[0], 200);
    assert_int_equal(order[1], 300);
    assert_int_equal(order[2], 100);
    uit_free(a);
}

static void test_thousands(void **state)
{
    (void)state;
    char out[32];
    assert_string_equal(fmt_thousands(0, out), "0");
    assert_string_equal(fmt_thousands(999, out), "999");
    assert_string_equal(fmt_thousands(1000, out), "1,000");
    assert_string_equal(fmt_thousands(1234567, out), "1,234,567");
    assert_string_equal(fmt_thousands(UINT64_MAX, out), "18,446,744,073,709,551,615");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_work_is_done_at_once),
        cmocka_unit_test(test_stepped_to_completion),
        cmocka_unit_test(test_cancel_and_supersede),
        cmocka_unit_test(test_thousands),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
