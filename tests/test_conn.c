/*
 * conn's secrets: URLs are shown without their password whatever characters it holds, and
 * reading a password makes the process undumpable (no core file, no ptrace) first. The nodes'
 * order, and a stop asked for between nodes.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conn.h"

static void mask(const char *url, const char *want)
{
    char *got = url_mask(url);
    assert_string_equal(got, want);
    assert_null(strstr(got, "cret"));
    free(got);
}

static void test_mask_url(void **state)
{
    (void)state;
    mask("amqp://guest:secret@h:5672/%2F", "amqp://guest@h:5672/%2F");
    mask("amqps://u@h/v", "amqps://u@h/v");
    mask("amqp://h:5672/v", "amqp://h:5672/v");
    /* Unencoded, as people type them: a '/', a '?', an '@', a '#' in the password. */
    mask("amqp://u:se/cret@h:5672/%2F", "amqp://u@h:5672/%2F");
    mask("amqp://u:se?cret@h:5672/%2F", "amqp://u@h:5672/%2F");
    mask("amqp://u:s@e/c?ret@h/v", "amqp://u@h/v");
    mask("amqp://u:se#cret@h/v", "amqp://u@h/v");
    mask("amqp://u:secret@h/v?read_only=true", "amqp://u@h/v?read_only=true");
    assert_true(url_has_password("amqp://u:se/cret@h/"));
    assert_false(url_has_password("amqp://u@h:5672/"));
    assert_false(url_has_password("amqp://h:5672/"));
}

static void test_password_file_not_dumpable(void **state)
{
    (void)state;
    char path[] = "/tmp/dlqx-test-pw-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "s3cret\n", 7), 7);
    close(fd);
    assert_int_equal(prctl(PR_GET_DUMPABLE, 0L, 0L, 0L, 0L), 1); /* as every test starts */
    char *pw = NULL;
    struct error err;
    assert_int_equal(conn_read_password_file(path, &pw, &err), ST_OK);
    unlink(path);
    assert_string_equal(pw, "s3cret");
    /* No core dump can hold it: the kernel writes none for an undumpable process. */
    assert_int_equal(prctl(PR_GET_DUMPABLE, 0L, 0L, 0L, 0L), 0);
    conn_secret_free(pw);
}

/* The nodes' order: as given, or every permutation of three equally likely (from the kernel's
 * random source: 6,000 shuffles, each of the 6 orders between 800 and 1,200 times — expected
 * 1,000, 4.9 standard deviations either side — and every shuffle a permutation). */
static void test_node_order(void **state)
{
    (void)state;
    size_t ord[3];
    conn_order_make(CONN_ORDER_GIVEN, 3, ord);
    assert_true(ord[0] == 0 && ord[1] == 1 && ord[2] == 2);
    int seen[3][3][3];
    memset(seen, 0, sizeof seen);
    for (int k = 0; k < 6000; k++) {
        conn_order_make(CONN_ORDER_SHUFFLE, 3, ord);
        assert_true(ord[0] < 3 && ord[1] < 3 && ord[2] < 3);
        assert_true(ord[0] != ord[1] && ord[1] != ord[2] && ord[0] != ord[2]);
        seen[ord[0]][ord[1]][ord[2]]++;
    }
    int perms = 0;
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            for (int c = 0; c < 3; c++)
                if (seen[a][b][c]) {
                    perms++;
                    assert_in_range(seen[a][b][c], 800, 1200);
                }
    assert_int_equal(perms, 6);
    conn_order_make(CONN_ORDER_SHUFFLE, 1, ord);
    assert_int_equal(ord[0], 0);
    enum conn_order o;
    assert_true(conn_order_parse("shuffle", &o) && o == CONN_ORDER_SHUFFLE);
    assert_true(conn_order_parse("given", &o) && o == CONN_ORDER_GIVEN);
    assert_false(conn_order_parse("random", &o));
    assert_string_equal(conn_order_name(CONN_ORDER_SHUFFLE), "shuffle");
}

/* A listener that never answers: the kernel completes the TCP handshake into its backlog and
 * the AMQP one waits (a hung node). Returns the socket; *port its port. */
static int hung_listener(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 8), 0);
    socklen_t len = sizeof a;
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
    *port = ntohs(a.sin_port);
    return fd;
}

/* How many connections came to the listener (taken from its backlog, without waiting). */
static int connections_to(int fd)
{
    fcntl(fd, F_SETFL, O_NONBLOCK);
    int n = 0, c;
    while ((c = accept(fd, NULL, NULL)) >= 0) {
        close(c);
        n++;
    }
    return n;
}

static int stops;
static int stop_now(void)
{
    stops++;
    return 1;
}

/* Three hung nodes: conn_open tries each in turn; but once a signal asked dlqx to stop
 * (conn_opts.stop_requested), no node after the failed one is tried (each could take the whole
 * connect timeout), and it says why. Counted by the connections each node got, not by time. */
static void run_hung_nodes(int (*stop)(void), int want_tried)
{
    int fd[3], port[3];
    char url[3][80];
    const char *urls[3];
    for (int i = 0; i < 3; i++) {
        fd[i] = hung_listener(&port[i]);
        snprintf(url[i], sizeof url[i], "amqp://guest@127.0.0.1:%d/", port[i]);
        urls[i] = url[i];
    }
    struct conn_opts o;
    memset(&o, 0, sizeof o);
    o.urls = urls;
    o.n_urls = 3;
    o.password = "guest";
    o.timeout_ms = 200;
    o.stop_requested = stop;
    struct conn *c = NULL;
    enum conn_err kind = CONN_OK;
    struct error err;
    error_clear(&err);
    assert_int_not_equal(conn_open(&o, &c, &kind, &err), ST_OK);
    assert_null(c);
    int tried = 0;
    for (int i = 0; i < 3; i++) {
        int n = connections_to(fd[i]);
        assert_true(n <= 1);
        tried += n;
        assert_int_equal(n, i < want_tried ? 1 : 0);
        close(fd[i]);
    }
    assert_int_equal(tried, want_tried);
    if (stop)
        assert_non_null(strstr(err.msg, "stopped by a signal before the next node was tried"));
    else
        assert_non_null(strstr(err.msg, "no broker answered"));
}

static void test_stop_between_nodes(void **state)
{
    (void)state;
    run_hung_nodes(NULL, 3);
    stops = 0;
    run_hung_nodes(stop_now, 1);
    assert_int_equal(stops, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mask_url),
        cmocka_unit_test(test_password_file_not_dumpable),
        cmocka_unit_test(test_node_order),
        cmocka_unit_test(test_stop_between_nodes),
    };
    return cmocka_run_group_tests_name("conn", tests, NULL, NULL);
}
