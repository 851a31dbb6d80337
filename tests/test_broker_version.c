/*
 * broker_version: the broker's version read from connection.start's server properties as
 * rabbitmq-c decodes them (3.10.8 recorded on this machine; 3.13, 4.0 and 4.3 built with
 * their fields and passed through rabbitmq-c's own encoder and decoder), what each version
 * changes, and the effective delivery limit a peek keeps under.
 */
#include "testutil.h"

#include <stdio.h>
#include <string.h>

#include <amqp.h>

#include "broker_version.h"
#include "peek.h"

/* connection.start's arguments as RabbitMQ 3.10.8 (Erlang/OTP 25.2.3) sent them here, on a
 * private node (scripts/broker start): version 0-9, server-properties, mechanisms, locales. */
static const char start_3_10_8[] =
    "\x00\x09\x00\x00\x01\xcf\x0c\x63\x61\x70\x61\x62\x69\x6c\x69\x74"
    "\x69\x65\x73\x46\x00\x00\x00\xc7\x12\x70\x75\x62\x6c\x69\x73\x68"
    "\x65\x72\x5f\x63\x6f\x6e\x66\x69\x72\x6d\x73\x74\x01\x1a\x65\x78"
    "\x63\x68\x61\x6e\x67\x65\x5f\x65\x78\x63\x68\x61\x6e\x67\x65\x5f"
    "\x62\x69\x6e\x64\x69\x6e\x67\x73\x74\x01\x0a\x62\x61\x73\x69\x63"
    "\x2e\x6e\x61\x63\x6b\x74\x01\x16\x63\x6f\x6e\x73\x75\x6d\x65\x72"
    "\x5f\x63\x61\x6e\x63\x65\x6c\x5f\x6e\x6f\x74\x69\x66\x79\x74\x01"
    "\x12\x63\x6f\x6e\x6e\x65\x63\x74\x69\x6f\x6e\x2e\x62\x6c\x6f\x63"
    "\x6b\x65\x64\x74\x01\x13\x63\x6f\x6e\x73\x75\x6d\x65\x72\x5f\x70"
    "\x72\x69\x6f\x72\x69\x74\x69\x65\x73\x74\x01\x1c\x61\x75\x74\x68"
    "\x65\x6e\x74\x69\x63\x61\x74\x69\x6f\x6e\x5f\x66\x61\x69\x6c\x75"
    "\x72\x65\x5f\x63\x6c\x6f\x73\x65\x74\x01\x10\x70\x65\x72\x5f\x63"
    "\x6f\x6e\x73\x75\x6d\x65\x72\x5f\x71\x6f\x73\x74\x01\x0f\x64\x69"
    "\x72\x65\x63\x74\x5f\x72\x65\x70\x6c\x79\x5f\x74\x6f\x74\x01\x0c"
    "\x63\x6c\x75\x73\x74\x65\x72\x5f\x6e\x61\x6d\x65\x53\x00\x00\x00"
    "\x0d\x64\x6c\x71\x78\x2d\x32\x35\x33\x31\x32\x40\x76\x6d\x09\x63"
    "\x6f\x70\x79\x72\x69\x67\x68\x74\x53\x00\x00\x00\x37\x43\x6f\x70"
    "\x79\x72\x69\x67\x68\x74\x20\x28\x63\x29\x20\x32\x30\x30\x37\x2d"
    "\x32\x30\x32\x32\x20\x56\x4d\x77\x61\x72\x65\x2c\x20\x49\x6e\x63"
    "\x2e\x20\x6f\x72\x20\x69\x74\x73\x20\x61\x66\x66\x69\x6c\x69\x61"
    "\x74\x65\x73\x2e\x0b\x69\x6e\x66\x6f\x72\x6d\x61\x74\x69\x6f\x6e"
    "\x53\x00\x00\x00\x39\x4c\x69\x63\x65\x6e\x73\x65\x64\x20\x75\x6e"
    "\x64\x65\x72\x20\x74\x68\x65\x20\x4d\x50\x4c\x20\x32\x2e\x30\x2e"
    "\x20\x57\x65\x62\x73\x69\x74\x65\x3a\x20\x68\x74\x74\x70\x73\x3a"
    "\x2f\x2f\x72\x61\x62\x62\x69\x74\x6d\x71\x2e\x63\x6f\x6d\x08\x70"
    "\x6c\x61\x74\x66\x6f\x72\x6d\x53\x00\x00\x00\x11\x45\x72\x6c\x61"
    "\x6e\x67\x2f\x4f\x54\x50\x20\x32\x35\x2e\x32\x2e\x33\x07\x70\x72"
    "\x6f\x64\x75\x63\x74\x53\x00\x00\x00\x08\x52\x61\x62\x62\x69\x74"
    "\x4d\x51\x07\x76\x65\x72\x73\x69\x6f\x6e\x53\x00\x00\x00\x06\x33"
    "\x2e\x31\x30\x2e\x38\x00\x00\x00\x0e\x50\x4c\x41\x49\x4e\x20\x41"
    "\x4d\x51\x50\x4c\x41\x49\x4e\x00\x00\x00\x05\x65\x6e\x5f\x55\x53";

struct server_props {
    amqp_pool_t pool;
    amqp_table_t table;
    char wire[2048]; /* the encoded table: the decoded one's strings point into it */
};

static void props_recorded(struct server_props *p)
{
    init_amqp_pool(&p->pool, 4096);
    void *decoded = NULL;
    amqp_bytes_t b = {sizeof start_3_10_8 - 1, (void *)(uintptr_t)start_3_10_8};
    assert_int_equal(amqp_decode_method(AMQP_CONNECTION_START_METHOD, &p->pool, b, &decoded),
                     AMQP_STATUS_OK);
    p->table = ((amqp_connection_start_t *)decoded)->server_properties;
}

static amqp_table_entry_t str(const char *k, const char *v)
{
    amqp_table_entry_t e;
    e.key = amqp_cstring_bytes(k);
    e.value.kind = AMQP_FIELD_KIND_UTF8;
    e.value.value.bytes = amqp_cstring_bytes(v);
    return e;
}

/* The server properties of another version, as the broker would send them, through
 * rabbitmq-c's encoder and decoder. product NULL: no product field. */
static void props_of(struct server_props *p, const char *product, const char *version,
                     const char *copyright, const char *platform)
{
    amqp_table_entry_t caps[2];
    caps[0].key = amqp_cstring_bytes("publisher_confirms");
    caps[0].value.kind = AMQP_FIELD_KIND_BOOLEAN;
    caps[0].value.value.boolean = 1;
    caps[1].key = amqp_cstring_bytes("consumer_cancel_notify");
    caps[1].value = caps[0].value;
    amqp_table_entry_t e[7];
    int n = 0;
    e[n].key = amqp_cstring_bytes("capabilities");
    e[n].value.kind = AMQP_FIELD_KIND_TABLE;
    e[n].value.value.table.num_entries = 2;
    e[n++].value.value.table.entries = caps;
    e[n++] = str("cluster_name", "rabbit@node-1");
    e[n++] = str("copyright", copyright);
    e[n++] = str("information", "Licensed under the MPL 2.0. Website: https://rabbitmq.com");
    e[n++] = str("platform", platform);
    if (product)
        e[n++] = str("product", product);
    if (version)
        e[n++] = str("version", version);
    amqp_table_t t = {n, e};
    size_t off = 0;
    assert_int_equal(amqp_encode_table((amqp_bytes_t){sizeof p->wire, p->wire}, &t, &off),
                     AMQP_STATUS_OK);
    init_amqp_pool(&p->pool, 4096);
    size_t at = 0;
    assert_int_equal(amqp_decode_table((amqp_bytes_t){off, p->wire}, &p->pool, &p->table, &at),
                     AMQP_STATUS_OK);
}

static const char broadcom[] = "Copyright (c) 2007-2024 Broadcom Inc and/or its subsidiaries";

static void version_of(struct server_props *p, struct broker_version *v)
{
    broker_version_from_props(&p->table, v);
    empty_amqp_pool(&p->pool);
}

static void test_recorded_3_10(void **state)
{
    (void)state;
    struct server_props p;
    struct broker_version v;
    props_recorded(&p);
    version_of(&p, &v);
    assert_true(v.known);
    assert_int_equal(v.major, 3);
    assert_int_equal(v.minor, 10);
    assert_int_equal(v.patch, 8);
    assert_string_equal(v.text, "3.10.8");
    struct broker_traits t;
    broker_traits_of(&v, &t);
    assert_int_equal(t.quorum_default_limit, -1);
    assert_false(t.negative_limit_disables);
    assert_false(t.acquired_apart);
    assert_false(t.ignores_client_x_death);
}

static void test_versions(void **state)
{
    (void)state;
    static const struct {
        const char *version, *platform;
        int major, minor;
        int64_t default_limit;
        bool disables, acquired_apart, ignores_x_death;
    } cases[] = {
        {"3.13.7", "Erlang/OTP 26.2.5", 3, 13, -1, false, false, true},
        {"4.0.5", "Erlang/OTP 26.2.5", 4, 0, 20, true, false, true},
        {"4.2.1", "Erlang/OTP 27.3", 4, 2, 20, true, false, true},
        {"4.3.0", "Erlang/OTP 27.3", 4, 3, 20, true, true, true},
        {"4.3.0-rc.1", "Erlang/OTP 27.3", 4, 3, 20, true, true, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct server_props p;
        struct broker_version v;
        props_of(&p, "RabbitMQ", cases[i].version, broadcom, cases[i].platform);
        version_of(&p, &v);
        assert_true(v.known);
        assert_int_equal(v.major, cases[i].major);
        assert_int_equal(v.minor, cases[i].minor);
        assert_string_equal(v.text, cases[i].version);
        struct broker_traits t;
        broker_traits_of(&v, &t);
        assert_int_equal(t.quorum_default_limit, cases[i].default_limit);
        assert_int_equal(t.negative_limit_disables, cases[i].disables);
        assert_int_equal(t.acquired_apart, cases[i].acquired_apart);
        assert_int_equal(t.ignores_client_x_death, cases[i].ignores_x_death);
    }
}

/* What is not RabbitMQ, or not a version, is unknown: and an unknown version gets the
 * cautious answers. */
static void test_unknown(void **state)
{
    (void)state;
    struct server_props p;
    struct broker_version v;
    props_of(&p, "LavinMQ", "2.1.0", "84codes", "Crystal");
    version_of(&p, &v);
    assert_false(v.known);
    props_of(&p, NULL, "4.0.5", broadcom, "Erlang/OTP 26.2.5");
    version_of(&p, &v);
    assert_false(v.known);
    props_of(&p, "RabbitMQ", NULL, broadcom, "Erlang/OTP 26.2.5");
    version_of(&p, &v);
    assert_false(v.known);
    assert_string_equal(v.text, "?");
    props_of(&p, "RabbitMQ", "4.x", broadcom, "Erlang/OTP 26.2.5");
    version_of(&p, &v);
    assert_false(v.known);
    props_of(&p, "RabbitMQ", "4.0.5\x1b[2J", broadcom, "Erlang/OTP 26.2.5");
    version_of(&p, &v);
    assert_false(v.known);
    assert_null(strchr(v.text, 0x1b)); /* kept for messages, but printable */
    props_of(&p, "RabbitMQ", "40000.0.0", broadcom, "Erlang/OTP 26.2.5");
    version_of(&p, &v);
    assert_false(v.known);
    broker_version_from_props(NULL, &v);
    assert_false(v.known);
    struct broker_traits t;
    broker_traits_of(&v, &t);
    assert_int_equal(t.quorum_default_limit, 20);
    assert_false(t.negative_limit_disables);
    assert_false(t.acquired_apart);
    assert_true(t.ignores_client_x_death);
    assert_true(broker_version_parse("3.9", &v));
    assert_int_equal(v.patch, 0);
    assert_false(broker_version_parse("3.", &v));
    assert_false(broker_version_parse("", &v));
    assert_false(broker_version_parse(NULL, &v));
}

static struct broker_version ver(const char *s)
{
    struct broker_version v;
    broker_version_parse(s, &v);
    return v;
}

#define U BROKER_LIMIT_UNSET

static void limit_is(struct delivery_limit got, int64_t limit, enum limit_origin origin)
{
    assert_int_equal(got.limit, limit);
    assert_string_equal(limit_origin_name(got.origin), limit_origin_name(origin));
}

static void test_effective_limit(void **state)
{
    (void)state;
    struct broker_version v310 = ver("3.10.8"), v313 = ver("3.13.7"), v40 = ver("4.0.5"),
                          v43 = ver("4.3.0"), vnone = ver("?");
    /* Nothing set: 3.x none, 4.x the default of 20, an unknown version the default too. */
    limit_is(broker_delivery_limit(&v310, true, U, U, U), -1, LIMIT_NONE);
    limit_is(broker_delivery_limit(&v313, true, U, U, U), -1, LIMIT_NONE);
    limit_is(broker_delivery_limit(&v40, true, U, U, U), 20, LIMIT_DEFAULT);
    limit_is(broker_delivery_limit(&v43, true, U, U, U), 20, LIMIT_DEFAULT);
    limit_is(broker_delivery_limit(&vnone, true, U, U, U), 20, LIMIT_DEFAULT);
    limit_is(broker_delivery_limit(NULL, true, U, U, U), -1, LIMIT_NONE);
    /* Classic queues and streams have none, whatever is set. */
    limit_is(broker_delivery_limit(&v40, false, 5, 6, 7), -1, LIMIT_NONE);
    /* The smallest wins, wherever it comes from. */
    limit_is(broker_delivery_limit(&v310, true, 5, U, U), 5, LIMIT_ARGUMENT);
    limit_is(broker_delivery_limit(&v40, true, 50, 30, U), 30, LIMIT_POLICY);
    limit_is(broker_delivery_limit(&v40, true, 50, 30, 7), 7, LIMIT_OPERATOR_POLICY);
    limit_is(broker_delivery_limit(&v40, true, 3, 30, 7), 3, LIMIT_ARGUMENT);
    limit_is(broker_delivery_limit(&v310, true, 0, U, U), 0, LIMIT_ARGUMENT);
    /* A set limit above the default is the queue's, not the default's. */
    limit_is(broker_delivery_limit(&v40, true, 100, U, U), 100, LIMIT_ARGUMENT);
    /* -1: no limit on 4.x; on 3.x the broker refuses it, so it is no setting at all. */
    limit_is(broker_delivery_limit(&v40, true, -1, U, U), -1, LIMIT_DISABLED);
    limit_is(broker_delivery_limit(&v310, true, -1, U, U), -1, LIMIT_NONE);
    limit_is(broker_delivery_limit(&vnone, true, -1, U, U), 20, LIMIT_DEFAULT);
    /* -1 beside a non-negative value: the value. */
    limit_is(broker_delivery_limit(&v40, true, -1, 10, U), 10, LIMIT_POLICY);
}

static void test_effective_limit_json(void **state)
{
    (void)state;
    struct broker_version v40 = ver("4.0.5"), v310 = ver("3.10.8");
    json_t *args =
        json_pack("{s:s, s:I}", "x-queue-type", "quorum", "x-delivery-limit", (json_int_t)50);
    json_t *pol =
        json_pack("{s:I, s:s}", "delivery-limit", (json_int_t)7, "dead-letter-exchange", "dlx");
    json_t *op = json_pack("{s:I}", "delivery-limit", (json_int_t)4);
    json_t *junk = json_pack("{s:s}", "delivery-limit", "3");
    limit_is(broker_delivery_limit_json(&v310, true, args, pol, NULL), 7, LIMIT_POLICY);
    limit_is(broker_delivery_limit_json(&v310, true, args, pol, op), 4, LIMIT_OPERATOR_POLICY);
    limit_is(broker_delivery_limit_json(&v40, true, NULL, NULL, NULL), 20, LIMIT_DEFAULT);
    /* A string where a number belongs is no setting. */
    limit_is(broker_delivery_limit_json(&v310, true, junk, junk, junk), -1, LIMIT_NONE);
    limit_is(broker_delivery_limit_json(&v40, true, args, NULL, junk), 50, LIMIT_ARGUMENT);
    json_decref(args);
    json_decref(pol);
    json_decref(op);
    json_decref(junk);
}

/* The peek's view: what the caller knows, plus the version's default; and its plan says it. */
static void test_peek_limit_and_plan(void **state)
{
    (void)state;
    struct broker_version v310 = ver("3.10.8"), v40 = ver("4.0.5");
    struct peek_opts o;
    memset(&o, 0, sizeof o);
    o.queue = "orders.dlq";
    o.info.kind = QK_QUORUM;
    o.info.delivery_limit = -1;
    o.info.has_dlx = true;
    limit_is(peek_delivery_limit(&o.info, &v310), -1, LIMIT_NONE);
    limit_is(peek_delivery_limit(&o.info, &v40), 20, LIMIT_DEFAULT);
    limit_is(peek_delivery_limit(&o.info, NULL), 20, LIMIT_DEFAULT);
    o.info.delivery_limit = 5;
    limit_is(peek_delivery_limit(&o.info, &v40), 5, LIMIT_QUEUE);
    o.info.kind = QK_CLASSIC;
    limit_is(peek_delivery_limit(&o.info, &v40), -1, LIMIT_NONE);

    o.info.kind = QK_QUORUM;
    o.info.delivery_limit = -1;
    struct strbuf plan;
    sb_init(&plan);
    peek_plan(&o, &v310, 10, 0, &plan);
    assert_non_null(strstr(plan.buf, "No delivery limit is known"));
    sb_free(&plan);
    sb_init(&plan);
    peek_plan(&o, &v40, 10, 0, &plan);
    assert_non_null(strstr(plan.buf, "The delivery limit is 20 (RabbitMQ 4.x's default"));
    assert_non_null(strstr(plan.buf, "delivered 19 times or more"));
    sb_free(&plan);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recorded_3_10),
        cmocka_unit_test(test_versions),
        cmocka_unit_test(test_unknown),
        cmocka_unit_test(test_effective_limit),
        cmocka_unit_test(test_effective_limit_json),
        cmocka_unit_test(test_peek_limit_and_plan),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
