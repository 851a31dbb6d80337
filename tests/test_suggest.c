/*
 * suggest: the close names offered for a queue that was not found — distances, the limits
 * that keep unrelated names out, names that contain one another, the order and the cap.
 */
#include "testutil.h"

#include <stdint.h>
#include <string.h>

#include "suggest.h"

static void test_distance(void **state)
{
    (void)state;
    assert_int_equal(suggest_distance("", ""), 0);
    assert_int_equal(suggest_distance("abc", ""), 3);
    assert_int_equal(suggest_distance("", "abc"), 3);
    assert_int_equal(suggest_distance("orders.dlq", "orders.dlq"), 0);
    assert_int_equal(suggest_distance("ordrs.dlq", "orders.dlq"), 1);  /* a letter left out */
    assert_int_equal(suggest_distance("oredrs.dlq", "orders.dlq"), 1); /* two swapped */
    assert_int_equal(suggest_distance("orders.dlx", "orders.dlq"), 1); /* one wrong */
    assert_int_equal(suggest_distance("ORDERS.DLQ", "orders.dlq"), 0); /* case */
    assert_int_equal(suggest_distance("kitten", "sitting"), 3);
    char longer[300];
    memset(longer, 'a', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    assert_true(suggest_distance(longer, "a") == SIZE_MAX);
}

static void test_close_names(void **state)
{
    (void)state;
    const char *names[] = {"billing.dlq",  "orders",          "orders.dlq", "payments.dlq",
                           "orders.retry", "prod.orders.dlq", "audit.dead"};
    size_t n = sizeof names / sizeof *names, out[4];
    size_t got = suggest_names("ordrs.dlq", names, n, out, 4);
    assert_int_equal(got, 1);
    assert_string_equal(names[out[0]], "orders.dlq");

    /* A missing prefix: the name is inside a longer one. */
    got = suggest_names("orders.dlq", names, n, out, 4);
    assert_int_equal(got, 2);
    assert_string_equal(names[out[0]], "orders");
    assert_string_equal(names[out[1]], "prod.orders.dlq");

    /* Nothing like it: no suggestion rather than a wild one. */
    assert_int_equal(suggest_names("inventory.dlq", names, n, out, 4), 0);
    assert_int_equal(suggest_names("", names, n, out, 4), 0);
    assert_int_equal(suggest_names("x", names, n, out, 4), 0);
    /* The same name under another prefix is three edits away: not a typo of it. */
    const char *cli[] = {"cli.orders.dlq", "cli.jobs.dlq", "t.orders.dlq"};
    got = suggest_names("cli.ordrs.dlq", cli, 3, out, 4);
    assert_int_equal(got, 1);
    assert_string_equal(cli[out[0]], "cli.orders.dlq");
    /* Two letters off in a short name is another name, not a typo. */
    assert_int_equal(suggest_names("ab", (const char *[]){"xy", "a"}, 2, out, 4), 0);
}

static void test_order_and_cap(void **state)
{
    (void)state;
    const char *names[] = {"q.dlq3", "q.dlq2", "q.dlq1", "q.dlq", "q.dlq12"};
    size_t out[2];
    size_t got = suggest_names("q.dlq0", names, 5, out, 2);
    assert_int_equal(got, 2);
    /* distance 1 each, ties by name */
    assert_string_equal(names[out[0]], "q.dlq");
    assert_string_equal(names[out[1]], "q.dlq1");
    size_t all[16];
    got = suggest_names("q.dlq0", names, 5, all, 99);
    assert_int_equal(got, 4); /* q.dlq12 is two edits from q.dlq0: too far for six letters */
    assert_string_equal(names[all[3]], "q.dlq3");
    assert_int_equal(suggest_names("q.dlq0", names, 5, all, 0), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_distance),
        cmocka_unit_test(test_close_names),
        cmocka_unit_test(test_order_and_cap),
    };
    return cmocka_run_group_tests_name("suggest", tests, NULL, NULL);
}
