/*
 * DLQ discovery: the topology captured from a RabbitMQ 3.10 node (fixtures/mgmt), hand-made
 * topologies for each routing rule, queue names, topic matching, and API responses whose
 * fields have the wrong types.
 *
 * fixtures/mgmt was captured from a private 3.10.8 node (scripts/broker) on which the
 * topology asserted below was declared through the API, then pretty-printed: queues.json,
 * exchanges.json (pages of 500 with dlqx's columns), bindings.json, policies.json, and
 * overview.json (trimmed to the version fields). queues-young.json is a listing taken right
 * after two queues were declared, before their first stats emission.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "dlqfind.h"
#include "mgmt.h"
#include "util.h"

/* A topology read from JSON (fixture files or inline strings) and its report. */
struct topo {
    struct mgmt_queue *q;
    size_t nq;
    struct mgmt_exchange *x;
    size_t nx;
    struct mgmt_binding *b;
    size_t nb;
    struct dlq_report r;
};

static json_t *parse(const char *text, size_t len)
{
    json_error_t je;
    json_t *j = json_loadb(text, len, JSON_ALLOW_NUL, &je);
    if (!j)
        fail_msg("bad test JSON: %s (line %d)", je.text, je.line);
    return j;
}

static json_t *parse_str(const char *s)
{
    return parse(s, strlen(s));
}

static json_t *parse_fixture(const char *rel)
{
    struct bytes b = test_read_fixture(rel);
    json_t *j = parse((const char *)b.data, b.len);
    bytes_free(&b);
    return j;
}

/* Takes ownership of the three JSON values (any may be NULL) and runs discovery. */
static void topo_build(struct topo *t, json_t *queues, json_t *exchanges, json_t *policies,
                       json_t *bindings)
{
    memset(t, 0, sizeof *t);
    struct error err;
    if (queues)
        assert_int_equal(mgmt_queues_from_json(queues, "/", &t->q, &t->nq, &err), ST_OK);
    if (exchanges)
        assert_int_equal(mgmt_exchanges_from_json(exchanges, policies, "/", &t->x, &t->nx, &err),
                         ST_OK);
    if (bindings)
        assert_int_equal(mgmt_bindings_from_json(bindings, "/", &t->b, &t->nb, &err), ST_OK);
    json_decref(queues);
    json_decref(exchanges);
    json_decref(policies);
    json_decref(bindings);
    t->nq = mgmt_queues_sort_unique(t->q, t->nq);
    struct dlq_input in = {t->q, t->nq, t->x, t->nx, t->b, t->nb};
    assert_int_equal(dlqfind_run(&in, &t->r, &err), ST_OK);
}

static void topo_free(struct topo *t)
{
    dlq_report_free(&t->r);
    mgmt_queues_free(&t->q, &t->nq);
    mgmt_exchanges_free(&t->x, &t->nx);
    mgmt_bindings_free(&t->b, &t->nb);
}

static const struct dlq_entry *entry(const struct topo *t, const char *name)
{
    const struct dlq_entry *e = dlq_report_find(&t->r, "/", name);
    if (!e)
        fail_msg("no queue %s in the report", name);
    assert_non_null(e);
    return e;
}

/* Whether e lists the queue `name` among its sources (how: 0 = any). */
static bool has_source(const struct topo *t, const struct dlq_entry *e, const char *name,
                       unsigned how)
{
    for (size_t i = 0; i < e->n_sources; i++)
        if (strcmp(t->q[e->sources[i].queue].name, name) == 0 && (!how || e->sources[i].how == how))
            return true;
    return false;
}

static void assert_dlq(const struct topo *t, const char *name, unsigned why, const char *source,
                       unsigned how)
{
    const struct dlq_entry *e = entry(t, name);
    if (e->role != DLQ_ROLE_DLQ || e->why != why)
        fail_msg("%s: role %d why %#x, expected DLQ why %#x", name, (int)e->role, e->why, why);
    if (source && !has_source(t, e, source, how))
        fail_msg("%s: %s is not among its %zu sources (how %#x)", name, source, e->n_sources, how);
}

static void assert_role(const struct topo *t, const char *name, enum dlq_role role)
{
    const struct dlq_entry *e = entry(t, name);
    if (e->role != role)
        fail_msg("%s: role %d, expected %d", name, (int)e->role, (int)role);
}

static void assert_warn(const struct topo *t, const char *name, unsigned warn)
{
    const struct dlq_entry *e = entry(t, name);
    if (e->warn != warn)
        fail_msg("%s: warn %#x, expected %#x", name, e->warn, warn);
}

/* --- the captured node ------------------------------------------------------------------ */

static void test_fixture_node(void **state)
{
    struct topo t;
    topo_build(&t, parse_fixture("mgmt/queues.json"), parse_fixture("mgmt/exchanges.json"),
               parse_fixture("mgmt/policies.json"), parse_fixture("mgmt/bindings.json"));
    assert_int_equal(t.nq, 28);

    /* AceMQ: quorum source, DLX acemq.dlx + routing key orders.dlq, a direct binding. */
    assert_dlq(&t, "orders.dlq", DLQ_WHY_TARGET | DLQ_WHY_NAMED, "orders", DLQ_WHY_TARGET);
    assert_int_equal(entry(&t, "orders.dlq")->n_sources, 1);
    /* Its retry rung dead-letters back into orders: orders stays an ordinary queue. */
    assert_role(&t, "orders.retry.30s", DLQ_ROLE_RETRY);
    assert_role(&t, "orders", DLQ_ROLE_QUEUE);
    assert_int_equal(entry(&t, "orders")->n_sources, 0);
    /* Policy-defined DLX through the default exchange. */
    assert_dlq(&t, "billing.dlq", DLQ_WHY_TARGET | DLQ_WHY_NAMED, "billing", DLQ_WHY_TARGET);
    /* A fanout DLX, no routing key. */
    assert_dlq(&t, "notify.dead", DLQ_WHY_TARGET | DLQ_WHY_NAMED, "notify", DLQ_WHY_TARGET);
    /* Named only: its source is the queue the name was made from. */
    assert_dlq(&t, "jobs.parked", DLQ_WHY_NAMED, "jobs", DLQ_WHY_NAMED);
    assert_dlq(&t, "error", DLQ_WHY_NAMED, NULL, 0);
    assert_int_equal(entry(&t, "error")->n_sources, 0);
    /* Topic bindings with wildcards: # and * match, invoices.* does not. */
    assert_dlq(&t, "all.failures", DLQ_WHY_TARGET, "payments", DLQ_WHY_TARGET);
    assert_dlq(&t, "payments_error", DLQ_WHY_TARGET | DLQ_WHY_NAMED, "payments", DLQ_WHY_TARGET);
    assert_role(&t, "invoices.archive", DLQ_ROLE_QUEUE);
    /* A headers DLX may route. */
    assert_dlq(&t, "audit.rejects", DLQ_WHY_MAYBE, "audit", DLQ_WHY_MAYBE);
    /* Exchange-to-exchange: dlx.router -> dlx.fan -> shipping.deadletter. */
    assert_dlq(&t, "shipping.deadletter", DLQ_WHY_TARGET | DLQ_WHY_NAMED, "shipping",
               DLQ_WHY_TARGET);
    /* A direct DLX without a routing key: any binding counts. */
    assert_dlq(&t, "mail.DLQ", DLQ_WHY_TARGET | DLQ_WHY_NAMED, "mail", DLQ_WHY_TARGET);
    /* Alternate exchanges, by argument (widgets.dlx) and by policy (gadgets.dlx). */
    assert_dlq(&t, "unrouted", DLQ_WHY_TARGET, "widgets", DLQ_WHY_TARGET);
    assert_true(has_source(&t, entry(&t, "unrouted"), "gadgets", DLQ_WHY_TARGET));
    assert_warn(&t, "widgets", 0);
    assert_warn(&t, "gadgets", 0);
    /* Not DLQs. */
    assert_role(&t, "dlq-service-config", DLQ_ROLE_QUEUE);
    assert_role(&t, "events", DLQ_ROLE_QUEUE);
    assert_role(&t, "jobs", DLQ_ROLE_QUEUE);

    /* Lossy dead-lettering. */
    assert_warn(&t, "lost", DLQ_WARN_DROPS);
    assert_warn(&t, "ghost", DLQ_WARN_NO_EXCHANGE);
    assert_warn(&t, "reports", DLQ_WARN_LIMIT_NO_DLX);
    assert_warn(&t, "orders", 0);
    assert_warn(&t, "billing", 0);
    assert_int_equal(t.r.n_warn, 3);
    assert_int_equal(t.r.n_retry, 1);
    assert_int_equal(t.r.n_dlq, 11);

    /* DLQs first, deepest first; then retry queues; then the rest by name. */
    static const char *const order[] = {"orders.dlq",          "jobs.parked",   "mail.DLQ",
                                        "notify.dead",         "billing.dlq",   "payments_error",
                                        "all.failures",        "audit.rejects", "error",
                                        "shipping.deadletter", "unrouted"};
    for (size_t i = 0; i < sizeof order / sizeof *order; i++)
        assert_string_equal(t.r.entries[i].queue->name, order[i]);
    assert_string_equal(t.r.entries[11].queue->name, "orders.retry.30s");
    assert_string_equal(t.r.entries[12].queue->name, "audit");
    assert_string_equal(t.r.entries[t.r.n - 1].queue->name, "widgets");
    topo_free(&t);
}

static void test_fixture_fields(void **state)
{
    struct topo t;
    topo_build(&t, parse_fixture("mgmt/queues.json"), NULL, NULL, NULL);
    const struct mgmt_queue *q = entry(&t, "orders")->queue;
    assert_int_equal(q->qtype, MGMT_QT_QUORUM);
    assert_string_equal(q->dead_letter_exchange, "acemq.dlx");
    assert_string_equal(q->dead_letter_routing_key, "orders.dlq");
    assert_int_equal(q->dlx_origin, MGMT_FROM_ARGUMENT);
    assert_int_equal(q->delivery_limit, 5);
    assert_int_equal(q->messages, 4);
    assert_true(q->publish_rate >= 0);

    q = entry(&t, "billing")->queue;
    assert_string_equal(q->dead_letter_exchange, "");
    assert_string_equal(q->dead_letter_routing_key, "billing.dlq");
    assert_int_equal(q->dlx_origin, MGMT_FROM_POLICY);
    assert_int_equal(q->dlrk_origin, MGMT_FROM_POLICY);
    assert_string_equal(q->policy, "billing-dlx");
    assert_int_equal(q->max_length, 1000);
    assert_string_equal(q->overflow, "reject-publish");
    assert_true(q->publish_rate == -1); /* no message_stats until a first publish */
    assert_false(q->stats_pending);

    /* The smaller of argument (3) and policy (10) applies. */
    q = entry(&t, "reports")->queue;
    assert_int_equal(q->delivery_limit, 3);
    assert_int_equal(q->max_length, 500);

    q = entry(&t, "notify")->queue;
    assert_null(q->dead_letter_routing_key);
    assert_int_equal(q->message_ttl, 60000);
    assert_int_equal(entry(&t, "events")->queue->qtype, MGMT_QT_STREAM);
    assert_int_equal(entry(&t, "events")->queue->max_length_bytes, 100000000);
    assert_int_equal(entry(&t, "orders.dlq")->queue->messages, 80);
    assert_null(entry(&t, "orders.dlq")->queue->policy);
    topo_free(&t);

    struct mgmt_exchange *x = NULL;
    size_t nx = 0;
    json_t *ex = parse_fixture("mgmt/exchanges.json");
    json_t *pol = parse_fixture("mgmt/policies.json");
    assert_int_equal(mgmt_exchanges_from_json(ex, pol, NULL, &x, &nx, NULL), ST_OK);
    bool seen_gadgets = false, seen_default = false;
    for (size_t i = 0; i < nx; i++) {
        if (strcmp(x[i].name, "gadgets.dlx") == 0) {
            assert_string_equal(x[i].alternate_exchange, "catchall");
            assert_false(x[i].alternate_unknown);
            seen_gadgets = true;
        }
        if (strcmp(x[i].name, "") == 0) {
            assert_int_equal(x[i].etype, MGMT_EX_DIRECT);
            seen_default = true;
        }
        if (strcmp(x[i].name, "amq.rabbitmq.trace") == 0)
            assert_true(x[i].internal);
    }
    assert_true(seen_gadgets && seen_default);
    mgmt_exchanges_free(&x, &nx);
    /* Without the policies the alternate exchange is unknown, not absent. */
    assert_int_equal(mgmt_exchanges_from_json(ex, NULL, NULL, &x, &nx, NULL), ST_OK);
    for (size_t i = 0; i < nx; i++)
        if (strcmp(x[i].name, "gadgets.dlx") == 0)
            assert_true(x[i].alternate_unknown && !x[i].alternate_exchange);
    mgmt_exchanges_free(&x, &nx);
    json_decref(ex);
    json_decref(pol);

    struct mgmt_overview o;
    json_t *ov = parse_fixture("mgmt/overview.json");
    mgmt_overview_from_json(ov, &o);
    assert_string_equal(o.rabbitmq_version, "3.10.8");
    assert_string_equal(o.product_name, "RabbitMQ");
    assert_non_null(o.cluster_name);
    mgmt_overview_free(&o);
    json_decref(ov);
}

static void test_fixture_young(void **state)
{
    /* Listed right after it was declared: no counts, no policy (though one applies). */
    struct topo t;
    memset(&t, 0, sizeof t);
    json_t *j = parse_fixture("mgmt/queues-young.json");
    assert_int_equal(mgmt_queues_from_json(j, NULL, &t.q, &t.nq, NULL), ST_OK);
    json_decref(j);
    struct dlq_input in = {t.q, t.nq, NULL, 0, NULL, 0};
    assert_int_equal(dlqfind_run(&in, &t.r, NULL), ST_OK);
    const struct dlq_entry *e = dlq_report_find(&t.r, "young", "fresh");
    assert_non_null(e);
    assert_true(e->queue->stats_pending);
    assert_int_equal(e->queue->messages, -1);
    assert_null(e->queue->policy);
    assert_null(e->queue->dead_letter_exchange);
    e = dlq_report_find(&t.r, "young", "fresh.dlq");
    assert_non_null(e);
    assert_int_equal(e->role, DLQ_ROLE_DLQ);
    assert_int_equal(e->why, DLQ_WHY_NAMED);
    assert_int_equal(e->n_sources, 1);
    assert_string_equal(t.q[e->sources[0].queue].name, "fresh");
    topo_free(&t);
}

/* --- names and topics ------------------------------------------------------------------- */

static void test_names(void **state)
{
    static const struct {
        const char *name;
        enum dlq_name_kind kind;
        size_t base;
    } cases[] = {
        {"orders.dlq", DLQ_NAME_DLQ, 6},
        {"orders.DLQ", DLQ_NAME_DLQ, 6},
        {"orders-dlq", DLQ_NAME_DLQ, 6},
        {"orders_dlq", DLQ_NAME_DLQ, 6},
        {"orders.parked", DLQ_NAME_DLQ, 6},
        {"orders.dead", DLQ_NAME_DLQ, 6},
        {"orders.error", DLQ_NAME_DLQ, 6},
        {"submit_order_error", DLQ_NAME_DLQ, 12},
        {"orders.deadletter", DLQ_NAME_DLQ, 6},
        {"orders-dead-letter", DLQ_NAME_DLQ, 6},
        {"orders.dead-letter", DLQ_NAME_DLQ, 6},
        {"orders.Dead_Letter", DLQ_NAME_DLQ, 6},
        {"orders.dead-letter-queue", DLQ_NAME_DLQ, 6},
        {"orders.retry.30s.dlq", DLQ_NAME_DLQ, 16},
        {"a:b:dlq", DLQ_NAME_DLQ, 3},
        {"error", DLQ_NAME_DLQ, 0},
        {"DLQ", DLQ_NAME_DLQ, 0},
        {"orders.retry.30s", DLQ_NAME_RETRY, 6},
        {"orders.retry.5m", DLQ_NAME_RETRY, 6},
        {"orders-retry-2h", DLQ_NAME_RETRY, 6},
        {"orders_retry", DLQ_NAME_RETRY, 6},
        {"orders.retry1", DLQ_NAME_RETRY, 6},
        {"orders", DLQ_NAME_PLAIN, 0},
        {"dlq-service-config", DLQ_NAME_PLAIN, 0},
        {"dlq.monitor", DLQ_NAME_PLAIN, 0},
        {"ordersdlq", DLQ_NAME_PLAIN, 0},
        {"orders.deadline", DLQ_NAME_PLAIN, 0},
        {"undead", DLQ_NAME_PLAIN, 0},
        {"orders.retryable", DLQ_NAME_PLAIN, 0},
        {"retry", DLQ_NAME_PLAIN, 0},
        {"terror", DLQ_NAME_PLAIN, 0},
        {"", DLQ_NAME_PLAIN, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t base = 99;
        enum dlq_name_kind k = dlqfind_classify_name(cases[i].name, &base);
        if (k != cases[i].kind || base != cases[i].base)
            fail_msg("%s: kind %d base %zu, expected %d %zu", cases[i].name, (int)k, base,
                     (int)cases[i].kind, cases[i].base);
    }
    assert_int_equal(dlqfind_classify_name("x.dlq", NULL), DLQ_NAME_DLQ);
}

static void test_topic(void **state)
{
    static const struct {
        const char *pattern, *key;
        bool match;
    } cases[] = {
        {"#.failed.#", "payments.failed.card", true},
        {"#.failed.#", "failed", true},
        {"#.failed.#", "payments.failedx", false},
        {"payments.*.card", "payments.failed.card", true},
        {"payments.*.card", "payments.card", false},
        {"payments.*", "payments.a.b", false},
        {"payments.#", "payments", true},
        {"payments.#", "payments.a.b", true},
        {"#", "", true},
        {"#", "a.b.c", true},
        {"*", "", false},
        {"*", "a", true},
        {"", "", true},
        {"", "a", false},
        {"a.", "a.", true},
        {"a.*", "a.", true},
        {"*.*", "a", false},
        {"#.#", "", true},
        {"a.#.b", "a.b", true},
        {"a.#.b", "a.x.y.b", true},
        {"a.#.b", "a.x.y.c", false},
        {"orders.dlq", "orders.dlq", true},
        {"orders.dlq", "orders.DLQ", false},
        {"a*", "ab", false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        if (dlqfind_topic_match(cases[i].pattern, cases[i].key) != cases[i].match)
            fail_msg("topic %s vs %s: expected %d", cases[i].pattern, cases[i].key, cases[i].match);
    /* Many #s against a long key: quadratic, not exponential. */
    struct strbuf p, k;
    sb_init(&p);
    sb_init(&k);
    for (int i = 0; i < 120; i++) {
        sb_adds(&p, i ? ".#" : "#");
        sb_adds(&k, i ? ".w" : "w");
    }
    sb_adds(&p, ".z");
    assert_false(dlqfind_topic_match(p.buf, k.buf));
    sb_free(&p);
    sb_free(&k);
}

/* --- hand-made topologies --------------------------------------------------------------- */

static const char EXCHANGES_BASE[] =
    "[{\"name\":\"\",\"type\":\"direct\"},{\"name\":\"amq.direct\",\"type\":\"direct\"}";

/* EXCHANGES_BASE plus more items (a JSON fragment starting with ',' or empty). */
static json_t *exchanges_with(const char *more)
{
    char *s = xasprintf("%s%s]", EXCHANGES_BASE, more);
    json_t *j = parse_str(s);
    free(s);
    return j;
}

static void test_default_exchange(void **state)
{
    struct topo t;
    topo_build(&t,
               parse_str("[{\"name\":\"a\",\"arguments\":{\"x-dead-letter-exchange\":\"\","
                         "\"x-dead-letter-routing-key\":\"a-failures\"}},"
                         "{\"name\":\"a-failures\",\"messages\":3},"
                         "{\"name\":\"b\",\"arguments\":{\"x-dead-letter-exchange\":\"\"}},"
                         "{\"name\":\"c\",\"arguments\":{\"x-dead-letter-exchange\":\"\","
                         "\"x-dead-letter-routing-key\":\"c\"}},"
                         "{\"name\":\"d\",\"arguments\":{\"x-dead-letter-exchange\":\"\","
                         "\"x-dead-letter-routing-key\":\"nobody\"}}]"),
               exchanges_with(""), NULL, parse_str("[]"));
    /* Not named like a DLQ at all: only the routing makes it one. */
    assert_dlq(&t, "a-failures", DLQ_WHY_TARGET, "a", DLQ_WHY_TARGET);
    assert_string_equal(t.r.entries[0].queue->name, "a-failures");
    assert_warn(&t, "a", 0);
    assert_warn(&t, "b", DLQ_WARN_OWN_KEY);
    assert_warn(&t, "c", DLQ_WARN_LOOP);
    assert_warn(&t, "d", DLQ_WARN_DROPS);
    assert_role(&t, "c", DLQ_ROLE_QUEUE);
    assert_int_equal(t.r.n_dlq, 1);
    topo_free(&t);
}

static void test_direct_fanout_topic(void **state)
{
    struct topo t;
    topo_build(
        &t,
        parse_str("[{\"name\":\"src1\",\"arguments\":{\"x-dead-letter-exchange\":\"d.dlx\","
                  "\"x-dead-letter-routing-key\":\"k1\"}},"
                  "{\"name\":\"src2\",\"arguments\":{\"x-dead-letter-exchange\":\"d.dlx\","
                  "\"x-dead-letter-routing-key\":\"nope\"}},"
                  "{\"name\":\"src3\",\"arguments\":{\"x-dead-letter-exchange\":\"f.dlx\","
                  "\"x-dead-letter-routing-key\":\"whatever\"}},"
                  "{\"name\":\"src4\",\"arguments\":{\"x-dead-letter-exchange\":\"t.dlx\","
                  "\"x-dead-letter-routing-key\":\"eu.orders.failed\"}},"
                  "{\"name\":\"src5\",\"arguments\":{\"x-dead-letter-exchange\":\"t.dlx\"}},"
                  "{\"name\":\"held1\"},{\"name\":\"held2\"},{\"name\":\"fan1\"},"
                  "{\"name\":\"fan2\"},{\"name\":\"eu-all\"},{\"name\":\"us-all\"}]"),
        exchanges_with(",{\"name\":\"d.dlx\",\"type\":\"direct\"},"
                       "{\"name\":\"f.dlx\",\"type\":\"fanout\"},"
                       "{\"name\":\"t.dlx\",\"type\":\"topic\"}"),
        NULL,
        parse_str("[{\"source\":\"d.dlx\",\"destination\":\"held1\",\"destination_type\":\"queue\","
                  "\"routing_key\":\"k1\"},"
                  "{\"source\":\"d.dlx\",\"destination\":\"held2\",\"destination_type\":\"queue\","
                  "\"routing_key\":\"k2\"},"
                  "{\"source\":\"f.dlx\",\"destination\":\"fan1\",\"destination_type\":\"queue\","
                  "\"routing_key\":\"\"},"
                  "{\"source\":\"f.dlx\",\"destination\":\"fan2\",\"destination_type\":\"queue\","
                  "\"routing_key\":\"x\"},"
                  "{\"source\":\"t.dlx\",\"destination\":\"eu-all\",\"destination_type\":\"queue\","
                  "\"routing_key\":\"eu.#\"},"
                  "{\"source\":\"t.dlx\",\"destination\":\"us-all\",\"destination_type\":\"queue\","
                  "\"routing_key\":\"us.*.failed\"}]"));
    assert_dlq(&t, "held1", DLQ_WHY_TARGET, "src1", DLQ_WHY_TARGET);
    assert_int_equal(entry(&t, "held1")->n_sources, 1);
    assert_role(&t, "held2", DLQ_ROLE_QUEUE);
    assert_warn(&t, "src2", DLQ_WARN_DROPS);
    assert_dlq(&t, "fan1", DLQ_WHY_TARGET, "src3", DLQ_WHY_TARGET);
    assert_dlq(&t, "fan2", DLQ_WHY_TARGET, "src3", DLQ_WHY_TARGET);
    assert_int_equal(entry(&t, "src3")->n_targets, 2);
    assert_dlq(&t, "eu-all", DLQ_WHY_TARGET, "src4", DLQ_WHY_TARGET);
    /* src5 has no routing key: every binding of its topic DLX may carry its messages. */
    assert_true(has_source(&t, entry(&t, "eu-all"), "src5", DLQ_WHY_TARGET));
    assert_dlq(&t, "us-all", DLQ_WHY_TARGET, "src5", DLQ_WHY_TARGET);
    assert_false(has_source(&t, entry(&t, "us-all"), "src4", 0));
    assert_warn(&t, "src5", 0);
    topo_free(&t);
}

static void test_policy_and_precedence(void **state)
{
    struct topo t;
    topo_build(
        &t,
        parse_str(
            /* DLX from the policy, routing key from the argument: resolved separately. */
            "[{\"name\":\"mix\",\"arguments\":{\"x-dead-letter-routing-key\":\"mix.dlq\"},"
            "\"policy\":\"p\",\"effective_policy_definition\":{\"dead-letter-exchange\":\"\"}},"
            /* The argument wins over the policy for the exchange. */
            "{\"name\":\"win\",\"arguments\":{\"x-dead-letter-exchange\":\"\","
            "\"x-dead-letter-routing-key\":\"win.held\"},\"effective_policy_definition\":"
            "{\"dead-letter-exchange\":\"gone\",\"dead-letter-routing-key\":\"x\"}},"
            "{\"name\":\"mix.dlq\"},{\"name\":\"win.held\"},"
            /* Quorum: delivery limit from policy alone, with a DLX: no warning. */
            "{\"name\":\"qq\",\"type\":\"quorum\",\"effective_policy_definition\":"
            "{\"delivery-limit\":7,\"dead-letter-exchange\":\"\","
            "\"dead-letter-routing-key\":\"qq.dlq\"}},{\"name\":\"qq.dlq\"},"
            /* Quorum with a delivery limit argument and nowhere to go. */
            "{\"name\":\"qq2\",\"type\":\"quorum\",\"arguments\":{\"x-delivery-limit\":2}},"
            /* A stream ignores dead-letter settings. */
            "{\"name\":\"st\",\"type\":\"stream\",\"arguments\":{\"x-dead-letter-exchange\":"
            "\"missing\"}}]"),
        exchanges_with(""), NULL, parse_str("[]"));
    const struct mgmt_queue *q = entry(&t, "mix")->queue;
    assert_int_equal(q->dlx_origin, MGMT_FROM_POLICY);
    assert_int_equal(q->dlrk_origin, MGMT_FROM_ARGUMENT);
    assert_dlq(&t, "mix.dlq", DLQ_WHY_TARGET | DLQ_WHY_NAMED, "mix", DLQ_WHY_TARGET);
    q = entry(&t, "win")->queue;
    assert_string_equal(q->dead_letter_exchange, "");
    assert_string_equal(q->dead_letter_routing_key, "win.held");
    assert_dlq(&t, "win.held", DLQ_WHY_TARGET, "win", DLQ_WHY_TARGET);
    assert_int_equal(entry(&t, "qq")->queue->delivery_limit, 7);
    assert_warn(&t, "qq", 0);
    assert_dlq(&t, "qq.dlq", DLQ_WHY_TARGET | DLQ_WHY_NAMED, "qq", 0);
    assert_warn(&t, "qq2", DLQ_WARN_LIMIT_NO_DLX);
    assert_warn(&t, "st", 0);
    topo_free(&t);
}

static void test_unbound_exchange_and_cycles(void **state)
{
    struct topo t;
    topo_build(
        &t,
        parse_str("[{\"name\":\"s\",\"arguments\":{\"x-dead-letter-exchange\":\"empty.dlx\","
                  "\"x-dead-letter-routing-key\":\"s\"}},"
                  "{\"name\":\"loopy\",\"arguments\":{\"x-dead-letter-exchange\":\"x1\","
                  "\"x-dead-letter-routing-key\":\"k\"}},"
                  "{\"name\":\"h\",\"arguments\":{\"x-dead-letter-exchange\":\"hdr\"}},"
                  "{\"name\":\"maybe-here\"}]"),
        exchanges_with(
            ",{\"name\":\"empty.dlx\",\"type\":\"direct\"},"
            "{\"name\":\"x1\",\"type\":\"fanout\"},{\"name\":\"x2\",\"type\":\"fanout\"},"
            "{\"name\":\"hdr\",\"type\":\"headers\"}"),
        NULL,
        parse_str("[{\"source\":\"x1\",\"destination\":\"x2\",\"destination_type\":\"exchange\","
                  "\"routing_key\":\"\"},"
                  "{\"source\":\"x2\",\"destination\":\"x1\",\"destination_type\":\"exchange\","
                  "\"routing_key\":\"\"},"
                  "{\"source\":\"hdr\",\"destination\":\"maybe-here\",\"destination_type\":"
                  "\"queue\",\"routing_key\":\"\",\"arguments\":{\"x-match\":\"all\"}}]"));
    assert_warn(&t, "s", DLQ_WARN_DROPS);
    /* x1 <-> x2 bound to each other and to no queue: terminates, and drops. */
    assert_warn(&t, "loopy", DLQ_WARN_DROPS);
    assert_dlq(&t, "maybe-here", DLQ_WHY_MAYBE, "h", DLQ_WHY_MAYBE);
    assert_warn(&t, "h", 0);
    topo_free(&t);
}

static void test_exchange_tangle(void **state)
{
    /* 12 levels of 4 fanout exchanges, each bound to all 4 of the next level: 4^12 paths, but
     * the broker (and dlqfind) visit each exchange once. */
    struct strbuf x, b;
    sb_init(&x);
    sb_init(&b);
    sb_adds(&x, "[{\"name\":\"\",\"type\":\"direct\"}");
    sb_adds(&b, "[{\"source\":\"L11-0\",\"destination\":\"end\",\"destination_type\":"
                "\"queue\",\"routing_key\":\"\"}");
    for (int level = 0; level < 12; level++) {
        for (int i = 0; i < 4; i++) {
            sb_addf(&x, ",{\"name\":\"L%d-%d\",\"type\":\"fanout\"}", level, i);
            for (int j = 0; level < 11 && j < 4; j++)
                sb_addf(&b,
                        ",{\"source\":\"L%d-%d\",\"destination\":\"L%d-%d\","
                        "\"destination_type\":\"exchange\",\"routing_key\":\"\"}",
                        level, i, level + 1, j);
        }
    }
    sb_addc(&x, ']');
    sb_addc(&b, ']');
    struct topo t;
    topo_build(&t,
               parse_str("[{\"name\":\"s\",\"arguments\":{\"x-dead-letter-exchange\":"
                         "\"L0-0\",\"x-dead-letter-routing-key\":\"k\"}},{\"name\":\"end\"}]"),
               parse_str(x.buf), NULL, parse_str(b.buf));
    assert_dlq(&t, "end", DLQ_WHY_TARGET, "s", DLQ_WHY_TARGET);
    assert_warn(&t, "s", 0);
    topo_free(&t);
    sb_free(&x);
    sb_free(&b);
}

static void test_delay_queue(void **state)
{
    /* work -> work.wait (TTL) -> back to work: work.wait is a delay queue, and neither is a
     * DLQ; work.wait's name says nothing. */
    struct topo t;
    topo_build(&t,
               parse_str("[{\"name\":\"work\",\"consumers\":2,\"arguments\":"
                         "{\"x-dead-letter-exchange\":\"\",\"x-dead-letter-routing-key\":"
                         "\"work.wait\"}},"
                         "{\"name\":\"work.wait\",\"consumers\":0,\"arguments\":"
                         "{\"x-message-ttl\":5000,\"x-dead-letter-exchange\":\"\","
                         "\"x-dead-letter-routing-key\":\"work\"}},"
                         /* A DLQ by name that redrives itself after a TTL stays a DLQ. */
                         "{\"name\":\"pay\",\"arguments\":{\"x-dead-letter-exchange\":\"\","
                         "\"x-dead-letter-routing-key\":\"pay.dlq\"}},"
                         "{\"name\":\"pay.dlq\",\"arguments\":{\"x-message-ttl\":60000,"
                         "\"x-dead-letter-exchange\":\"\",\"x-dead-letter-routing-key\":"
                         "\"pay\"}},"
                         /* A DLQ whose rejects go back to its source (redrive by reject). */
                         "{\"name\":\"ship\",\"arguments\":{\"x-dead-letter-exchange\":\"\","
                         "\"x-dead-letter-routing-key\":\"ship.dlq\"}},"
                         "{\"name\":\"ship.dlq\",\"arguments\":{\"x-dead-letter-exchange\":"
                         "\"\",\"x-dead-letter-routing-key\":\"ship\"}}]"),
               exchanges_with(""), NULL, parse_str("[]"));
    assert_role(&t, "work.wait", DLQ_ROLE_RETRY);
    assert_role(&t, "work", DLQ_ROLE_QUEUE);
    assert_dlq(&t, "pay.dlq", DLQ_WHY_TARGET | DLQ_WHY_NAMED, "pay", DLQ_WHY_TARGET);
    assert_role(&t, "pay", DLQ_ROLE_QUEUE);
    assert_dlq(&t, "ship.dlq", DLQ_WHY_TARGET | DLQ_WHY_NAMED, "ship", DLQ_WHY_TARGET);
    assert_role(&t, "ship", DLQ_ROLE_QUEUE);
    assert_int_equal(t.r.n_dlq, 2);
    topo_free(&t);
}

static void test_vhosts_apart(void **state)
{
    struct topo t;
    memset(&t, 0, sizeof t);
    json_t *q = parse_str("[{\"name\":\"a\",\"vhost\":\"one\",\"arguments\":"
                          "{\"x-dead-letter-exchange\":\"\",\"x-dead-letter-routing-key\":"
                          "\"held\"}},{\"name\":\"held\",\"vhost\":\"two\"},"
                          "{\"name\":\"held\",\"vhost\":\"one\",\"messages\":1}]");
    assert_int_equal(mgmt_queues_from_json(q, NULL, &t.q, &t.nq, NULL), ST_OK);
    json_decref(q);
    t.nq = mgmt_queues_sort_unique(t.q, t.nq);
    struct dlq_input in = {t.q, t.nq, NULL, 0, NULL, 0};
    assert_int_equal(dlqfind_run(&in, &t.r, NULL), ST_OK);
    const struct dlq_entry *one = dlq_report_find(&t.r, "one", "held");
    const struct dlq_entry *two = dlq_report_find(&t.r, "two", "held");
    assert_non_null(one);
    assert_non_null(two);
    assert_int_equal(one->role, DLQ_ROLE_DLQ);
    assert_int_equal(two->role, DLQ_ROLE_QUEUE);
    assert_null(dlq_report_find(&t.r, "three", "held"));
    topo_free(&t);

    /* Nothing at all. */
    struct dlq_input none = {0};
    struct dlq_report r;
    assert_int_equal(dlqfind_run(&none, &r, NULL), ST_OK);
    assert_int_equal(r.n, 0);
    assert_null(dlq_report_find(&r, "/", "x"));
    dlq_report_free(&r);
    assert_int_equal(dlqfind_run(NULL, &r, NULL), ST_EINVAL);
}

/* --- untrusted responses ---------------------------------------------------------------- */

static void test_wrong_types(void **state)
{
    struct topo t;
    topo_build(
        &t,
        parse_str(
            "{\"page\":1,\"page_count\":1,\"items\":["
            "{\"name\":17},"           /* no usable name: skipped */
            "42, null, \"queue\", []," /* not objects: skipped */
            "{\"name\":\"bad\",\"vhost\":[1],\"type\":7,\"messages\":\"lots\","
            "\"messages_ready\":-5,\"messages_unacknowledged\":1.5,\"consumers\":true,"
            "\"arguments\":[\"x-dead-letter-exchange\"],\"effective_policy_definition\":\"x\","
            "\"policy\":{},\"state\":null,\"message_stats\":{\"publish_details\":"
            "{\"rate\":\"fast\"}}},"
            "{\"name\":\"odd\",\"arguments\":{\"x-dead-letter-exchange\":42,"
            "\"x-dead-letter-routing-key\":{},\"x-delivery-limit\":\"5\",\"x-message-ttl\":-1,"
            "\"x-max-length\":1e3},\"message_stats\":[],\"type\":\"quorum\"},"
            "{\"name\":\"nul\\u0000name\"},"
            "{\"name\":\"fine.dlq\",\"messages\":9,\"message_stats\":{\"publish_details\":"
            "{\"rate\":2.5}}}]}"),
        parse_str("[{\"name\":\"\",\"type\":\"direct\"},{\"name\":\"t\",\"type\":3},"
                  "{\"name\":5},{\"name\":\"d\",\"type\":\"direct\",\"internal\":\"yes\","
                  "\"arguments\":{\"alternate-exchange\":9}}]"),
        parse_str("{\"not\":\"an array\"}"),
        parse_str("[{\"source\":\"t\",\"destination\":\"fine.dlq\",\"destination_type\":9,"
                  "\"routing_key\":5},{\"source\":1,\"destination\":\"x\"},"
                  "{\"source\":\"d\"},\"junk\"]"));
    assert_int_equal(t.nq, 3); /* bad, fine.dlq, odd */
    const struct mgmt_queue *q = entry(&t, "bad")->queue;
    assert_string_equal(q->vhost, "/"); /* from the hint */
    assert_null(q->type);
    assert_int_equal(q->qtype, MGMT_QT_UNKNOWN);
    assert_int_equal(q->messages, -1);
    assert_int_equal(q->ready, -1);
    assert_int_equal(q->unacked, -1);
    assert_int_equal(q->consumers, -1);
    assert_null(q->arguments);
    assert_null(q->policy_definition);
    assert_null(q->policy);
    assert_null(q->state);
    assert_true(q->publish_rate == -1);
    assert_null(q->dead_letter_exchange);
    q = entry(&t, "odd")->queue;
    assert_null(q->dead_letter_exchange);
    assert_null(q->dead_letter_routing_key);
    assert_int_equal(q->delivery_limit, -1);
    assert_int_equal(q->message_ttl, -1);
    assert_int_equal(q->max_length, -1);
    assert_true(q->publish_rate == -1);
    assert_warn(&t, "odd", 0);
    q = entry(&t, "fine.dlq")->queue;
    assert_true(q->publish_rate == 2.5);
    assert_int_equal(q->messages, 9);
    assert_dlq(&t, "fine.dlq", DLQ_WHY_NAMED, NULL, 0);
    /* The unreadable binding is kept with what could be read. */
    assert_int_equal(t.nb, 1);
    assert_null(t.b[0].routing_key);
    assert_int_equal(t.b[0].dest_type, MGMT_DEST_UNKNOWN);
    assert_int_equal(t.nx, 3);
    for (size_t i = 0; i < t.nx; i++) {
        assert_false(t.x[i].internal);
        assert_null(t.x[i].alternate_exchange);
        if (strcmp(t.x[i].name, "t") == 0)
            assert_int_equal(t.x[i].etype, MGMT_EX_UNKNOWN);
    }
    topo_free(&t);

    /* Not a listing at all. */
    struct mgmt_queue *qs = NULL;
    size_t n = 0;
    struct error err;
    json_t *j = parse_str("{\"error\":\"x\"}");
    assert_int_equal(mgmt_queues_from_json(j, "/", &qs, &n, &err), ST_EPARSE);
    assert_int_equal(n, 0);
    json_decref(j);
    struct mgmt_binding *bs = NULL;
    j = parse_str("{\"items\":7}");
    assert_int_equal(mgmt_bindings_from_json(j, "/", &bs, &n, &err), ST_EPARSE);
    json_decref(j);
    struct mgmt_overview o;
    j = parse_str("{\"rabbitmq_version\":3.1,\"cluster_name\":[]}");
    mgmt_overview_from_json(j, &o);
    assert_null(o.rabbitmq_version);
    assert_null(o.cluster_name);
    mgmt_overview_free(&o);
    json_decref(j);
}

static void test_duplicates_across_pages(void **state)
{
    struct mgmt_queue *q = NULL;
    size_t n = 0;
    json_t *p1 = parse_str("{\"items\":[{\"name\":\"b\",\"messages\":1},{\"name\":\"c\"}]}");
    json_t *p2 = parse_str("{\"items\":[{\"name\":\"c\"},{\"name\":\"a\"}]}");
    assert_int_equal(mgmt_queues_from_json(p1, "/", &q, &n, NULL), ST_OK);
    assert_int_equal(mgmt_queues_from_json(p2, "/", &q, &n, NULL), ST_OK);
    assert_int_equal(n, 4);
    n = mgmt_queues_sort_unique(q, n);
    assert_int_equal(n, 3);
    assert_non_null(q);
    assert_string_equal(q[0].name, "a");
    assert_string_equal(q[1].name, "b");
    assert_string_equal(q[2].name, "c");
    mgmt_queues_free(&q, &n);
    assert_null(q);
    assert_int_equal(n, 0);
    json_decref(p1);
    json_decref(p2);
}

static void test_messages(void **state)
{
    assert_non_null(dlq_why_str(DLQ_WHY_NAMED));
    assert_non_null(dlq_warn_str(DLQ_WARN_DROPS));
    assert_null(dlq_warn_str(1u << 30));
    assert_null(dlq_why_str(0));
    assert_string_equal(mgmt_error_str(MGMT_AUTH), "credentials refused");
    assert_non_null(mgmt_error_str((enum mgmt_error)99));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixture_node),
        cmocka_unit_test(test_fixture_fields),
        cmocka_unit_test(test_fixture_young),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_topic),
        cmocka_unit_test(test_default_exchange),
        cmocka_unit_test(test_direct_fanout_topic),
        cmocka_unit_test(test_policy_and_precedence),
        cmocka_unit_test(test_unbound_exchange_and_cycles),
        cmocka_unit_test(test_exchange_tangle),
        cmocka_unit_test(test_delay_queue),
        cmocka_unit_test(test_vhosts_apart),
        cmocka_unit_test(test_wrong_types),
        cmocka_unit_test(test_duplicates_across_pages),
        cmocka_unit_test(test_messages),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
