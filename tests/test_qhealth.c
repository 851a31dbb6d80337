/*
 * qhealth: a queue's placement and warnings from the management API's JSON.
 *
 * fixtures/mgmt/queues-placement.json and nodes.json were captured from a private 3.10.8
 * node (scripts/broker): a classic queue under a policy with ha-mode and queue-master-locator,
 * a quorum queue and a stream. fixtures/mgmt/cluster3-one-down-*.json are hand-made in the
 * shape of that capture for a 3-node cluster whose rabbit@n2 is down (no cluster could be
 * started here yet): a classic queue on n2 listed "down" without counts, another on n2 still
 * "running" with a stale 0, a quorum queue with 1 of 3 members online, one with 2 of 3, a
 * stream with 2 of 3, a healthy classic queue and one under a mirroring policy.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mgmt.h"
#include "qhealth.h"
#include "testutil.h"
#include "util.h"

struct cluster {
    struct mgmt_queue *q;
    size_t nq;
    struct mgmt_node *nodes;
    size_t nn;
    struct qh_cluster c;
};

static json_t *parse_fixture(const char *rel)
{
    struct bytes b = test_read_fixture(rel);
    json_error_t je;
    json_t *j = json_loadb((const char *)b.data, b.len, 0, &je);
    bytes_free(&b);
    if (!j)
        fail_msg("bad fixture %s: %s", rel, je.text);
    return j;
}

static void load(struct cluster *t, const char *queues, const char *nodes)
{
    memset(t, 0, sizeof *t);
    json_t *qj = parse_fixture(queues);
    assert_int_equal(mgmt_queues_from_json(qj, NULL, &t->q, &t->nq, NULL), ST_OK);
    json_decref(qj);
    if (nodes) {
        json_t *nj = parse_fixture(nodes);
        assert_int_equal(mgmt_nodes_from_json(nj, &t->nodes, &t->nn, NULL), ST_OK);
        json_decref(nj);
        t->c = (struct qh_cluster){t->nodes, t->nn, true};
    }
}

static void unload(struct cluster *t)
{
    mgmt_queues_free(&t->q, &t->nq);
    mgmt_nodes_free(&t->nodes, &t->nn);
}

static const struct mgmt_queue *find(const struct cluster *t, const char *name)
{
    for (size_t i = 0; i < t->nq; i++)
        if (strcmp(t->q[i].name, name) == 0)
            return &t->q[i];
    fail_msg("no queue %s", name);
    abort(); /* not reached: fail_msg ends the test (and -O3 sees no NULL returned) */
}

static struct qhealth eval(const struct cluster *t, const char *name)
{
    struct qhealth h;
    qhealth_eval(find(t, name), &t->c, &h);
    return h;
}

static char *describe(const struct cluster *t, const char *name, unsigned bit)
{
    struct qhealth h = eval(t, name);
    struct strbuf sb;
    sb_init(&sb);
    qhealth_describe(find(t, name), &h, bit, &sb);
    return sb_detach(&sb, NULL);
}

static void test_single_node_capture(void **state)
{
    (void)state;
    struct cluster t;
    load(&t, "mgmt/queues-placement.json", "mgmt/nodes.json");
    const struct mgmt_queue *qq = find(&t, "q-quorum.dlq");
    assert_int_equal(qq->qtype, MGMT_QT_QUORUM);
    assert_string_equal(qq->leader, "dlqx-23136@localhost");
    assert_int_equal(qq->members.n, 1);
    assert_int_equal(qq->online.n, 1);
    struct qhealth h = eval(&t, "q-quorum.dlq");
    assert_int_equal(h.warn, 0);
    assert_true(h.replicated);
    assert_int_equal(h.online, 1);
    h = eval(&t, "q-stream.dlq");
    assert_int_equal(h.warn, 0);
    assert_string_equal(h.where, "dlqx-23136@localhost");
    /* One node: a classic queue is not a single point of failure of a cluster; the policy
     * is deprecated all the same. */
    h = eval(&t, "q-classic.dlq");
    assert_int_equal(h.warn, QH_DEPRECATED);
    assert_string_equal(h.deprecated, "ha-mode, queue-master-locator");
    assert_false(h.replicated);
    assert_string_equal(h.where, "dlqx-23136@localhost");
    unload(&t);
}

static void test_cluster_one_down(void **state)
{
    (void)state;
    struct cluster t;
    load(&t, "mgmt/cluster3-one-down-queues.json", "mgmt/cluster3-one-down-nodes.json");
    assert_int_equal(t.nn, 3);
    assert_false(t.nodes[1].running);
    /* A classic queue on the dead node: unavailable, with its node; no depth, never 0. */
    struct qhealth h = eval(&t, "orders.dlq");
    assert_true(h.warn & QH_UNAVAILABLE);
    assert_string_equal(h.down_node, "rabbit@n2");
    assert_false(qhealth_depth_known(&h));
    char *s = describe(&t, "orders.dlq", QH_UNAVAILABLE);
    assert_string_equal(s, "unavailable: its node rabbit@n2 is down (depth unknown, not 0)");
    free(s);
    /* Listed "running" with a stale 0, but its node is down: unavailable all the same. */
    h = eval(&t, "payments.dlq");
    assert_true(h.warn & QH_UNAVAILABLE);
    assert_false(qhealth_depth_known(&h));
    /* Quorum, 3 members, 1 online: below quorum (2 needed), not unavailable-as-empty. */
    h = eval(&t, "billing.dlq");
    assert_int_equal(h.warn, QH_BELOW_QUORUM);
    assert_int_equal(h.members, 3);
    assert_int_equal(h.online, 1);
    s = describe(&t, "billing.dlq", QH_BELOW_QUORUM);
    assert_string_equal(s, "below quorum: 1 of its 3 members online, 2 needed: it takes and "
                           "gives no messages");
    free(s);
    /* 2 of 3: quorum holds, a member is offline. */
    h = eval(&t, "audit.dlq");
    assert_int_equal(h.warn, QH_MEMBERS_DOWN);
    s = describe(&t, "audit.dlq", QH_MEMBERS_DOWN);
    assert_string_equal(s, "1 of its 3 members offline (quorum holds): rabbit@n2");
    free(s);
    struct strbuf sb;
    sb_init(&sb);
    qhealth_members(&h, &sb);
    assert_string_equal(sb.buf, "2/3 online");
    sb_free(&sb);
    /* A healthy classic queue in a cluster: on one node. */
    h = eval(&t, "events.dlq");
    assert_int_equal(h.warn, QH_SINGLE_NODE);
    s = describe(&t, "events.dlq", QH_SINGLE_NODE);
    assert_string_equal(s, "a classic queue on one node (rabbit@n1) of a cluster: its dead "
                           "letters are gone while that node is");
    free(s);
    h = eval(&t, "legacy.dlq");
    assert_int_equal(h.warn, QH_SINGLE_NODE | QH_DEPRECATED);
    assert_string_equal(h.deprecated, "ha-mode, ha-sync-mode");
    s = describe(&t, "legacy.dlq", QH_DEPRECATED);
    assert_non_null(strstr(s, "(policy ha-all)"));
    free(s);
    /* A stream with a member down: no quorum rule of its own here, the member is named. */
    h = eval(&t, "stream.dlq");
    assert_int_equal(h.warn, QH_MEMBERS_DOWN);
    unload(&t);
}

/* Without /api/nodes (a user without the monitoring tag) nothing is guessed about the
 * cluster: a classic queue listed "down" is still unavailable, one listed running is fine. */
static void test_nodes_unknown(void **state)
{
    (void)state;
    struct cluster t;
    load(&t, "mgmt/cluster3-one-down-queues.json", NULL);
    assert_true(eval(&t, "orders.dlq").warn & QH_UNAVAILABLE);
    assert_int_equal(eval(&t, "payments.dlq").warn, 0);
    assert_int_equal(eval(&t, "events.dlq").warn, 0);
    assert_int_equal(eval(&t, "billing.dlq").warn, QH_BELOW_QUORUM);
    unload(&t);
}

/* Untrusted JSON: wrong types read as unknown, huge arrays are capped, elements that are not
 * names are skipped, and what is shown is sanitized. */
static void test_hostile(void **state)
{
    (void)state;
    struct strbuf big;
    sb_init(&big);
    sb_adds(&big, "[{\"name\":\"h1\",\"type\":\"quorum\",\"node\":\"n\\u001b[2Jx\","
                  "\"leader\":7,\"online\":\"n1\",\"members\":[");
    for (int i = 0; i < 1000; i++)
        sb_addf(&big, "%s\"m%d\"", i ? "," : "", i);
    sb_adds(&big, ",1,{},null]},"
                  "{\"name\":\"h2\",\"type\":\"quorum\",\"members\":[\"a\",\"b\\u0000c\",\"");
    for (int i = 0; i < 300; i++)
        sb_addc(&big, 'x');
    sb_adds(&big, "\",2,[\"a\"]],\"online\":[\"a\",\"a\",true],\"state\":{}},"
                  "{\"name\":\"h3\",\"type\":\"classic\",\"node\":\"n\\u001b]0;pwned\\u0007\","
                  "\"state\":\"down\"}]");
    json_error_t je;
    json_t *j = json_loadb(big.buf, big.len, JSON_ALLOW_NUL, &je);
    assert_non_null(j);
    sb_free(&big);
    struct mgmt_queue *q = NULL;
    size_t n = 0;
    assert_int_equal(mgmt_queues_from_json(j, "/", &q, &n, NULL), ST_OK);
    json_decref(j);
    assert_int_equal(n, 3);
    assert_null(q[0].leader);
    assert_false(q[0].online.known);
    assert_true(q[0].members.known);
    assert_int_equal(q[0].members.n, MGMT_STRS_MAX);
    assert_true(q[0].members.truncated);
    /* online unknown: no guess either way */
    struct qhealth h;
    qhealth_eval(&q[0], NULL, &h);
    assert_int_equal(h.warn, 0);
    /* h2: only "a" is a member (a NUL, 300 bytes, a number, an array skipped); "a" twice
     * online counts once. */
    assert_int_equal(q[1].members.n, 1);
    assert_null(q[1].state);
    qhealth_eval(&q[1], NULL, &h);
    assert_int_equal(h.members, 1);
    assert_int_equal(h.online, 1);
    assert_int_equal(h.warn, 0);
    qhealth_eval(&q[2], NULL, &h);
    assert_true(h.warn & QH_UNAVAILABLE);
    struct strbuf sb;
    sb_init(&sb);
    qhealth_describe(&q[2], &h, QH_UNAVAILABLE, &sb);
    assert_null(memchr(sb.buf, 0x1b, sb.len));
    assert_null(memchr(sb.buf, 0x07, sb.len));
    sb_free(&sb);
    mgmt_queues_free(&q, &n);
}

static void test_nodes_json(void **state)
{
    (void)state;
    json_t *j =
        json_loads("[{\"name\":\"a\",\"running\":true},{\"name\":\"b\",\"running\":\"yes\"},"
                   "{\"running\":true},7]",
                   0, NULL);
    struct mgmt_node *nd = NULL;
    size_t n = 0;
    assert_int_equal(mgmt_nodes_from_json(j, &nd, &n, NULL), ST_OK);
    assert_int_equal(n, 2);
    assert_true(nd[0].running);
    assert_false(nd[1].running); /* not true: not running */
    mgmt_nodes_free(&nd, &n);
    json_decref(j);
    /* The depth's rate (messages_details.rate): signed, NAN when not a finite number. */
    j = json_loads("[{\"name\":\"a\",\"messages_details\":{\"rate\":-2.5}},"
                   "{\"name\":\"b\",\"messages_details\":{\"rate\":\"9\"}},{\"name\":\"c\"}]",
                   0, NULL);
    struct mgmt_queue *q = NULL;
    assert_int_equal(mgmt_queues_from_json(j, "/", &q, &n, NULL), ST_OK);
    assert_int_equal(n, 3);
    assert_true(q[0].depth_rate == -2.5);
    assert_true(isnan(q[1].depth_rate));
    assert_true(isnan(q[2].depth_rate));
    mgmt_queues_free(&q, &n);
    json_decref(j);
    assert_string_equal(qhealth_warn_name(QH_BELOW_QUORUM), "below_quorum");
    assert_null(qhealth_warn_name(1u << 20));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_node_capture), cmocka_unit_test(test_cluster_one_down),
        cmocka_unit_test(test_nodes_unknown),       cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_nodes_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
