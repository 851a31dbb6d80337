/*
 * conn_reopen and the node order against two real, separate RabbitMQ nodes
 * (tests/broker/two_nodes.sh starts them): a reopen moves to the next node and wraps round,
 * the node that failed is tried last, a shuffled order starts on either node, a hung
 * (SIGSTOPped) node is noticed by the heartbeats in an RPC and in a send, and when every
 * node is gone the reopen says so with *c NULL. The connection keeps its own copy of its
 * options: the caller's are freed before each reopen (valgrind would see a use after free).
 */
#include "../testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conn.h"
#include "util.h"

static char *node_env(int i, const char *what)
{
    char name[64];
    snprintf(name, sizeof name, "DLQX_NODE%d_%s", i, what);
    const char *v = getenv(name);
    if (!v || !*v)
        fail_msg("%s is not set: run this test with tests/broker/two_nodes.sh", name);
    return xstrdup(v);
}

/* Node i's URL with its own password in it (each node has its own; conn_opts.password would
 * give both the same). */
static char *node_url(int i)
{
    char *url = node_env(i, "URL");
    char *pwf = node_env(i, "PASSWORD_FILE");
    char *pw = NULL;
    struct error err;
    if (conn_read_password_file(pwf, &pw, &err) != ST_OK)
        fail_msg("%s", err.msg);
    char *at = strchr(url, '@');
    assert_non_null(at);
    char *full = xasprintf("%.*s:%s%s", (int)(at - url), url, pw, at);
    conn_secret_free(pw);
    free(pwf);
    free(url);
    return full;
}

static void node_cmd(int i, const char *cmd)
{
    char *dir = node_env(i, "DIR");
    char *script = xstrdup(getenv("DLQX_BROKER_SCRIPT"));
    char *line = xasprintf("'%s' %s '%s' >/dev/null 2>&1", script, cmd, dir);
    assert_int_equal(system(line), 0);
    free(line);
    free(script);
    free(dir);
}

static pid_t node_pid(int i)
{
    char *dir = node_env(i, "DIR");
    char *path = xasprintf("%s/rabbitmq.pid", dir);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    long pid = 0;
    assert_int_equal(fscanf(f, "%ld", &pid), 1);
    fclose(f);
    free(path);
    free(dir);
    return (pid_t)pid;
}

/* Opens a connection to nodes (1-based numbers) with options the caller frees at once. */
static struct conn *open_nodes(const int *nodes, size_t n, enum conn_order order, int heartbeat,
                               int timeout_ms)
{
    char **urls = xcalloc(n, sizeof *urls);
    for (size_t k = 0; k < n; k++)
        urls[k] = node_url(nodes[k]);
    struct conn_opts o;
    memset(&o, 0, sizeof o);
    o.urls = (const char *const *)urls;
    o.n_urls = n;
    o.order = order;
    o.heartbeat_s = heartbeat;
    o.timeout_ms = timeout_ms;
    o.conn_name = "dlqx-tests-reopen";
    struct conn *c = NULL;
    struct error err;
    enum conn_err kind;
    if (conn_open(&o, &c, &kind, &err) != ST_OK)
        fail_msg("conn_open: %s", err.msg);
    for (size_t k = 0; k < n; k++)
        conn_secret_free(urls[k]);
    free(urls);
    return c;
}

static void usable(struct conn *c)
{
    struct error err;
    enum conn_err kind;
    if (conn_channel_open(c, 1, &kind, &err) != ST_OK)
        fail_msg("a channel on the new connection: %s", err.msg);
    uint32_t n = 0;
    assert_int_equal(conn_queue_inspect(c, 1, "dlqx.reopen.none", &n, NULL, &kind, &err),
                     ST_ENOTFOUND); /* an answer from the node: the connection works */
}

static void reopen_ok(struct conn **c, size_t want_index)
{
    struct error err;
    enum conn_err kind;
    if (conn_reopen(c, &kind, &err) != ST_OK)
        fail_msg("conn_reopen: %s", err.msg);
    assert_non_null(*c);
    assert_int_equal(conn_url_index(*c), want_index);
    usable(*c);
}

/* Both nodes up: a reopen goes to the next node, then wraps round to the first. */
static void t_reopen_moves_on(void **state)
{
    (void)state;
    const int nodes[] = {1, 2};
    struct conn *c = open_nodes(nodes, 2, CONN_ORDER_GIVEN, 0, 0);
    assert_int_equal(conn_url_index(c), 0);
    assert_int_equal(conn_url_count(c), 2);
    usable(c);
    reopen_ok(&c, 1);
    reopen_ok(&c, 0);
    /* Listed the other way round: the indices are the list's, not the nodes'. */
    const int back[] = {2, 1};
    struct conn *d = open_nodes(back, 2, CONN_ORDER_GIVEN, 0, 0);
    assert_int_equal(conn_url_index(d), 0);
    reopen_ok(&d, 1);
    conn_close(d);
    conn_close(c);
}

/* Shuffled: over 30 opens both nodes come first (each time with probability 1/2). */
static void t_shuffle_spreads(void **state)
{
    (void)state;
    const int nodes[] = {1, 2};
    int first[2] = {0, 0};
    for (int k = 0; k < 30; k++) {
        struct conn *c = open_nodes(nodes, 2, CONN_ORDER_SHUFFLE, 0, 0);
        first[conn_url_index(c)]++;
        conn_close(c);
    }
    print_message("shuffled: node 1 first %d times, node 2 first %d times of 30\n", first[0],
                  first[1]);
    assert_true(first[0] > 0 && first[1] > 0);
}

/* Publishes of 1 MiB on c until one fails; how long that took. */
static double publish_until_error(struct conn *c, int *rc, int *sent)
{
    size_t len = 1 << 20;
    char *body = xcalloc(1, len);
    amqp_bytes_t b = {len, body};
    double t0 = clock_mono_s();
    *rc = AMQP_STATUS_OK;
    *sent = 0;
    while (*rc == AMQP_STATUS_OK && clock_mono_s() - t0 < 60) {
        *rc = conn_publish(c, 1, amqp_cstring_bytes(""), amqp_cstring_bytes("dlqx.reopen.none"),
                           false, NULL, b);
        *sent += *rc == AMQP_STATUS_OK;
    }
    free(body);
    return clock_mono_s() - t0;
}

/* A hung node (SIGSTOP: its sockets stay open, nothing answers) is noticed, and never waited
 * for forever (alarm fails the test if it is):
 * - a send that fills the socket's buffers ends (TCP_USER_TIMEOUT: rabbitmq-c 0.11 alone waits
 *   for good);
 * - an RPC within two intervals of the default 5 s heartbeat (its own timeout set far beyond);
 * - a publish once the node has been silent 1.5 intervals ends at once (rabbitmq-c 0.11 alone
 *   waits for good: conn_publish's check);
 * then a reopen moves each to the other node. */
static void t_hung_node(void **state)
{
    (void)state;
    const int nodes[] = {1, 2};
    struct conn *rpc = open_nodes(nodes, 2, CONN_ORDER_GIVEN, 0, 60000);
    struct conn *pub = open_nodes(nodes, 2, CONN_ORDER_GIVEN, 1, 60000);
    struct conn *late = open_nodes(nodes, 2, CONN_ORDER_GIVEN, 1, 60000);
    assert_int_equal(conn_url_index(rpc), 0);
    usable(rpc);
    usable(pub);
    usable(late);
    pid_t beam = node_pid(1);
    assert_int_equal(kill(beam, SIGSTOP), 0);
    alarm(90);

    int rc, sent;
    double blocked = publish_until_error(pub, &rc, &sent);
    print_message("sends to a paused node ended after %.1f s (%d MiB taken by the buffers): %s\n",
                  blocked, sent, amqp_error_string2(rc));
    assert_int_not_equal(rc, AMQP_STATUS_OK);
    assert_true(blocked < 15.0);

    double t0 = clock_mono_s();
    struct error err;
    enum conn_err kind = CONN_OK;
    uint32_t n = 0;
    enum status st = conn_queue_inspect(rpc, 1, "dlqx.reopen.none", &n, NULL, &kind, &err);
    double noticed = clock_mono_s() - t0;
    print_message("a paused node noticed by an RPC after %.1f s (heartbeat %d s): %s\n", noticed,
                  CONN_DEFAULT_HEARTBEAT_S, err.msg);
    assert_int_not_equal(st, ST_OK);
    assert_int_equal(kind, CONN_LOST);
    assert_false(conn_alive(rpc));
    assert_true(noticed < 2.0 * CONN_DEFAULT_HEARTBEAT_S + 3.0);

    blocked = publish_until_error(late, &rc, &sent);
    print_message("a publish after the silence ended after %.3f s: %s\n", blocked,
                  amqp_error_string2(rc));
    assert_int_equal(rc, AMQP_STATUS_HEARTBEAT_TIMEOUT);
    assert_int_equal(sent, 0);
    assert_true(blocked < 1.0);

    t0 = clock_mono_s();
    reopen_ok(&rpc, 1);
    reopen_ok(&pub, 1);
    reopen_ok(&late, 1);
    print_message("three reopened on node 2 in %.2f s\n", clock_mono_s() - t0);
    alarm(0);
    assert_int_equal(kill(beam, SIGCONT), 0);
    conn_close(late);
    conn_close(pub);
    conn_close(rpc);
}

/* Node 1 killed (last: it stays down). conn_open moves on to node 2; a reopen from node 2 tries
 * node 1 first (after node 2, wrapping round) and node 2, the one that failed, last. Then
 * with both gone the reopen fails, *c NULL, and says which nodes it tried. */
static void t_first_stopped(void **state)
{
    (void)state;
    const int nodes[] = {1, 2};
    struct conn *c = open_nodes(nodes, 2, CONN_ORDER_GIVEN, 0, 0);
    node_cmd(1, "kill");
    assert_int_equal(conn_url_index(c), 0);
    struct error err;
    enum conn_err kind = CONN_OK;
    uint32_t n = 0;
    conn_channel_open(c, 1, &kind, &err);
    assert_int_not_equal(conn_queue_inspect(c, 1, "dlqx.reopen.none", &n, NULL, &kind, &err),
                         ST_OK);
    assert_int_equal(kind, CONN_LOST);
    reopen_ok(&c, 1);
    reopen_ok(&c, 1); /* node 1 tried first, refused; node 2 last */
    struct conn *d = open_nodes(nodes, 2, CONN_ORDER_GIVEN, 0, 0);
    assert_int_equal(conn_url_index(d), 1);
    conn_close(d);

    node_cmd(2, "kill");
    kind = CONN_OK;
    assert_int_not_equal(conn_reopen(&c, &kind, &err), ST_OK);
    assert_null(c);
    assert_int_equal(kind, CONN_UNREACHABLE);
    assert_non_null(strstr(err.msg, "no broker answered"));
    print_message("%s\n", err.msg);
    for (int i = 1; i <= 2; i++) { /* no password in the message */
        char *pwf = node_env(i, "PASSWORD_FILE"), *pw = NULL;
        assert_int_equal(conn_read_password_file(pwf, &pw, &err), ST_OK);
        assert_null(strstr(err.msg, pw));
        conn_secret_free(pw);
        free(pwf);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_reopen_moves_on),
        cmocka_unit_test(t_shuffle_spreads),
        cmocka_unit_test(t_hung_node),
        cmocka_unit_test(t_first_stopped),
    };
    return cmocka_run_group_tests_name("conn_live", tests, NULL, NULL);
}
