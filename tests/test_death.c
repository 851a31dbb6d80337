/*
 * Death history: RabbitMQ's x-death and companions summarised, and bad input warned about
 * rather than trusted.
 */
#include "testutil.h"

#include <string.h>

#include <jansson.h>

#include "death.h"
#include "hval_json.h"

static struct htable *headers_of(const char *json)
{
    json_error_t je;
    json_t *j = json_loads(json, 0, &je);
    if (!j)
        fail_msg("bad test JSON: %s", je.text);
    struct htable *t = NULL;
    struct error err;
    if (htable_from_json(j, "headers", &t, &err) != ST_OK)
        fail_msg("%s", err.msg);
    json_decref(j);
    return t;
}

static void test_broker_written(void **state)
{
    /* Rejected three times from emails, then expired twice from emails.retry: the repeat is
     * merged and moved to the front, as RabbitMQ does. */
    struct htable *h = headers_of(
        "{\"x-death\":[{\"count\":2,\"exchange\":\"\",\"queue\":\"emails.retry\","
        "\"reason\":\"expired\",\"routing-keys\":[\"emails\"],"
        "\"time\":{\"type\":\"timestamp\",\"value\":1767323051},"
        "\"original-expiration\":\"60000\"},"
        "{\"count\":3,\"exchange\":\"mail\",\"queue\":\"emails\",\"reason\":\"rejected\","
        "\"routing-keys\":[\"emails.send\",\"cc\"],\"time\":{\"type\":\"timestamp\",\"value\":"
        "1767323046}}],"
        "\"x-first-death-exchange\":\"mail\",\"x-first-death-queue\":\"emails\","
        "\"x-first-death-reason\":\"rejected\",\"x-delivery-count\":{\"type\":\"int64\",\"value\":"
        "4}}");
    struct death_summary d;
    death_read(h, &d);
    assert_true(d.present);
    assert_int_equal(d.n_entries, 2);
    assert_int_equal(d.total, 5);
    assert_true(bytes_eq_cstr(&d.first_queue, "emails"));
    assert_true(bytes_eq_cstr(&d.first_reason, "rejected"));
    assert_true(bytes_eq_cstr(&d.first_exchange, "mail"));
    /* No x-last-death-* before 3.13: the newest entry stands in. */
    assert_true(bytes_eq_cstr(&d.last_queue, "emails.retry"));
    assert_true(bytes_eq_cstr(&d.last_reason, "expired"));
    assert_true(d.has_times);
    assert_int_equal(d.first_time_ms, 1767323046000LL);
    assert_int_equal(d.last_time_ms, 1767323051000LL);
    assert_true(d.has_delivery_count);
    assert_int_equal(d.delivery_count, 4);
    assert_true(d.entries[0].has_original_expiration);
    assert_true(bytes_eq_cstr(&d.entries[0].original_expiration, "60000"));
    assert_int_equal(d.entries[1].n_routing_keys, 2);
    assert_true(bytes_eq_cstr(death_first_routing_key(&d), "emails.send"));
    assert_int_equal(d.n_warnings, 0);
    death_free(&d);
    htable_free(h);
}

static void test_last_death_headers(void **state)
{
    struct htable *h =
        headers_of("{\"x-death\":[{\"count\":1,\"queue\":\"a\",\"reason\":\"maxlen\"}],"
                   "\"x-last-death-queue\":\"b\",\"x-last-death-reason\":\"delivery_limit\","
                   "\"x-last-death-exchange\":\"ex\"}");
    struct death_summary d;
    death_read(h, &d);
    assert_true(bytes_eq_cstr(&d.last_queue, "b"));
    assert_true(bytes_eq_cstr(&d.last_reason, "delivery_limit"));
    assert_true(bytes_eq_cstr(&d.first_queue, "a"));
    assert_false(d.has_times);
    death_free(&d);
    htable_free(h);
}

static void test_absent(void **state)
{
    struct htable *h = headers_of("{\"tenant\":\"acme\"}");
    struct death_summary d;
    death_read(h, &d);
    assert_false(d.present);
    assert_int_equal(d.total, 0);
    assert_null(death_first_routing_key(&d));
    death_free(&d);
    htable_free(h);
    death_read(NULL, &d);
    assert_false(d.present);
    death_free(&d);
}

static void test_hostile(void **state)
{
    struct htable *h = headers_of("{\"x-death\":\"not an array\",\"x-delivery-count\":\"many\"}");
    struct death_summary d;
    death_read(h, &d);
    assert_true(d.present);
    assert_int_equal(d.n_entries, 0);
    assert_int_equal(d.n_warnings, 2);
    assert_non_null(strstr(d.warnings[0], "x-death is not an array"));
    assert_false(d.has_delivery_count);
    death_free(&d);
    htable_free(h);

    h = headers_of("{\"x-death\":[1,\"two\",{\"count\":\"x\",\"time\":\"yesterday\","
                   "\"routing-keys\":\"rk\",\"queue\":{\"type\":\"bytes\",\"value\":\"q\"}},"
                   "{\"count\":-3,\"reason\":\"rejected\"}]}");
    death_read(h, &d);
    assert_int_equal(d.n_entries, 2);
    assert_int_equal(d.total, 2); /* unreadable counts count once */
    assert_true(bytes_eq_cstr(&d.entries[0].queue, "q"));
    assert_false(d.entries[0].has_time);
    assert_int_equal(d.n_warnings, 6);
    death_free(&d);
    htable_free(h);
}

static void test_broker_headers(void **state)
{
    assert_true(death_broker_header("x-death", 7));
    assert_true(death_broker_header("x-first-death-queue", 19));
    assert_true(death_broker_header("x-last-death-reason", 19));
    assert_true(death_broker_header("x-delivery-count", 16));
    assert_false(death_broker_header("x-deathly", 9));
    assert_false(death_broker_header("x-acemq-error", 13));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_broker_written), cmocka_unit_test(test_last_death_headers),
        cmocka_unit_test(test_absent),         cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_broker_headers),
    };
    return cmocka_run_group_tests_name("death", tests, NULL, NULL);
}
