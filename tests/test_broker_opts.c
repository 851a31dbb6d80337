/*
 * The broker options: read-only fails closed (a yes, a no, or an error), the management API's
 * scheme follows the broker's and plain http with a password is said, TLS options where
 * nothing is TLS are said, and a password in a URL makes the process undumpable.
 */
#include "testutil.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "broker_opts.h"

static char err_text[4096];

/* broker_opts_finish on these arguments, standard error kept in err_text. */
static bool finish(struct broker_opts *b, const char *const *args)
{
    char *argv[16];
    int argc = 0;
    for (; args && args[argc]; argc++)
        argv[argc] = (char *)(uintptr_t)args[argc];
    broker_opts_init(b);
    for (int i = 0; i < argc; i++)
        assert_int_equal(broker_opts_next(b, argc, argv, &i, NULL), BOPT_CONSUMED);
    char path[] = "/tmp/dlqx-test-err-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    unlink(path);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    bool ok = broker_opts_finish(b);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    ssize_t n = pread(fd, err_text, sizeof err_text - 1, 0);
    err_text[n > 0 ? n : 0] = '\0';
    close(fd);
    return ok;
}

static void env(const char *url, const char *read_only, const char *mgmt)
{
    setenv("DLQX_URL", url, 1);
    if (read_only)
        setenv("DLQX_READ_ONLY", read_only, 1);
    else
        unsetenv("DLQX_READ_ONLY");
    if (mgmt)
        setenv("DLQX_MGMT_URL", mgmt, 1);
    else
        unsetenv("DLQX_MGMT_URL");
    unsetenv("DLQX_PASSWORD_FILE");
    unsetenv("DLQX_ALLOW_URL_PASSWORD");
}

static void test_parse_bool(void **state)
{
    (void)state;
    const char *yes[] = {"1", "true", "TRUE", "True", "yes", "YES", "on", "On"};
    const char *no[] = {"0", "false", "FALSE", "no", "No", "off", "OFF"};
    const char *bad[] = {"y", "n", "enabled", "disabled", "2", "t", "truex", " true", "yes ", ""};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        assert_int_equal(broker_parse_bool(yes[i], strlen(yes[i])), 1);
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        assert_int_equal(broker_parse_bool(no[i], strlen(no[i])), 0);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        assert_int_equal(broker_parse_bool(bad[i], strlen(bad[i])), -1);
}

/* expect: 1 read-only, 0 read-write, -1 refused (with a sentence naming the value) */
static void read_only(const char *url, const char *envval, int expect)
{
    struct broker_opts b;
    env(url, envval, NULL);
    bool ok = finish(&b, NULL);
    if (expect < 0) {
        assert_false(ok);
        assert_non_null(strstr(err_text, "is neither a yes nor a no"));
    } else {
        assert_true(ok);
        assert_int_equal(b.read_only, expect);
    }
    broker_opts_free(&b);
}

static void test_read_only_fails_closed(void **state)
{
    (void)state;
    read_only("amqp://u@h/", "y", -1);
    read_only("amqp://u@h/", "enabled", -1);
    read_only("amqp://u@h/", "TRUE", 1);
    read_only("amqp://u@h/", "on", 1);
    read_only("amqp://u@h/", "off", 0);
    read_only("amqp://u@h/", "", 0); /* empty: unset */
    read_only("amqp://u@h/?read_only=enabled", NULL, -1);
    read_only("amqp://u@h/?read_only=y", "0", -1);
    read_only("amqp://u@h/?read_only=yes", NULL, 1);
    read_only("amqp://u@h/?readonly=On", NULL, 1);
    read_only("amqp://u@h/?read_only", NULL, 1);
    read_only("amqp://u@h/?read_only=", NULL, 0);
    read_only("amqp://u@h/?read_only=1", "no", 1); /* a yes anywhere wins */
    read_only("amqp://u@h/?read_only=false", "1", 1);
    /* The value is shown made safe. */
    read_only("amqp://u@h/", "y\033[2J", -1);
    assert_non_null(strstr(err_text, "DLQX_READ_ONLY=\"y\\e[2J\""));
}

static void scheme(const char *given, bool amqps, const char *want)
{
    char *u = broker_mgmt_url_default(given, amqps);
    assert_string_equal(u, want);
    free(u);
}

static void test_mgmt_scheme_and_plain_http(void **state)
{
    (void)state;
    scheme("rabbit:15671/", true, "https://rabbit:15671/");
    scheme("rabbit:15672/", false, "http://rabbit:15672/");
    scheme("http://rabbit:15672/", true, "http://rabbit:15672/"); /* as given: warned below */
    assert_false(broker_mgmt_plain("http://127.0.0.1:15672/", false));
    assert_false(broker_mgmt_plain("http://localhost:15672/", false));
    assert_false(broker_mgmt_plain("http://[::1]:15672/", false));
    assert_true(broker_mgmt_plain("http://rabbit.example:15672/", false));
    assert_true(broker_mgmt_plain("HTTP://rabbit.example/", false));
    assert_true(broker_mgmt_plain("http://127.0.0.1:15672/", true));
    assert_false(broker_mgmt_plain("https://rabbit.example/", true));
    /* A list (one URL per node): each URL takes the scheme, and one plain one is enough. */
    scheme("n1:15672/, http://n2:15672/,n3", false, "http://n1:15672/,http://n2:15672/,http://n3");
    scheme("n1:15671/,n2:15671/", true, "https://n1:15671/,https://n2:15671/");
    assert_true(broker_mgmt_plain("http://127.0.0.1:15672/, http://rabbit.example/", false));
    assert_false(broker_mgmt_plain("http://127.0.0.1:15672/, http://localhost:15673/", false));
    assert_false(broker_mgmt_plain("http://localhost,http://127.0.0.2/", false));

    struct broker_opts b;
    env("amqps://u@rabbit/", NULL, "http://127.0.0.1:15672/");
    assert_true(finish(&b, NULL));
    assert_non_null(strstr(err_text, "http://127.0.0.1:15672/ is plain http: the password goes "
                                     "over the network unencrypted although the broker is "
                                     "amqps://"));
    broker_opts_free(&b);
    const char *no_scheme[] = {"--mgmt-url", "rabbit:15671/", NULL};
    assert_true(finish(&b, no_scheme));
    assert_string_equal(b.mgmt_url, "https://rabbit:15671/");
    assert_null(strstr(err_text, "plain http"));
    broker_opts_free(&b);
    const char *off[] = {"--no-mgmt", NULL};
    assert_true(finish(&b, off));
    assert_string_equal(err_text, "");
    broker_opts_free(&b);
}

static void test_tls_options_without_tls(void **state)
{
    (void)state;
    struct broker_opts b;
    env("amqp://u@rabbit/", NULL, NULL);
    const char *args[] = {"--cacert", "/ca.pem", "--tls-no-verify", NULL};
    assert_true(finish(&b, args));
    assert_non_null(strstr(err_text, "--cacert, --tls-no-verify ignored: no URL here is amqps://"));
    broker_opts_free(&b);
    /* Used by an https management API: nothing to say. */
    env("amqp://u@rabbit/", NULL, "https://rabbit:15671/");
    assert_true(finish(&b, args));
    assert_string_equal(err_text, "");
    broker_opts_free(&b);
    env("amqps://u@rabbit/", NULL, NULL);
    assert_true(finish(&b, args));
    assert_string_equal(err_text, "");
    broker_opts_free(&b);
}

static void test_url_password(void **state)
{
    (void)state;
    struct broker_opts b;
    /* Undumpable from then on (checked in a child first: it cannot be undone). */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int before = prctl(PR_GET_DUMPABLE, 0L, 0L, 0L, 0L);
        env("amqp://u:secret@rabbit/", NULL, NULL);
        bool ok = finish(&b, NULL);
        int after = prctl(PR_GET_DUMPABLE, 0L, 0L, 0L, 0L);
        broker_opts_free(&b);
        _exit(ok && before == 1 && after == 0 ? 0 : 10 + before * 2 + after);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    /* A '?' in a password is not the start of dlqx's parameters, and is never shown. */
    env("amqp://u:se?cret@rabbit/?read_only=1", NULL, NULL);
    /* (librabbitmq cannot read such a URL: it is refused before anything is tried) */
    assert_false(finish(&b, NULL));
    assert_true(b.read_only);
    assert_non_null(strstr(err_text, "amqp://u@rabbit/ carries a password"));
    assert_null(strstr(err_text, "cret"));
    broker_opts_free(&b);
}

/* broker_opts_next: consumes a broker option and its value, leaves another argument alone,
 * and says what is wrong without printing it. */
static void test_next(void **state)
{
    (void)state;
    char *argv[] = {(char *)(uintptr_t) "--url",        (char *)(uintptr_t) "amqp://h/",
                    (char *)(uintptr_t) "--json",       (char *)(uintptr_t) "--read-only",
                    (char *)(uintptr_t) "--password=x", (char *)(uintptr_t) "--cacert"};
    struct broker_opts b;
    broker_opts_init(&b);
    struct error err;
    int i = 0;
    assert_int_equal(broker_opts_next(&b, 6, argv, &i, &err), BOPT_CONSUMED);
    assert_int_equal(i, 1);
    assert_int_equal(b.n_urls, 1);
    i = 2;
    assert_int_equal(broker_opts_next(&b, 6, argv, &i, &err), BOPT_NOT_MINE);
    assert_int_equal(i, 2);
    i = 3;
    assert_int_equal(broker_opts_next(&b, 6, argv, &i, &err), BOPT_CONSUMED);
    assert_true(b.read_only);
    i = 4;
    assert_int_equal(broker_opts_next(&b, 6, argv, &i, &err), BOPT_ERROR);
    assert_non_null(strstr(err.msg, "would show in ps"));
    assert_int_equal(error_exit_code(&err, 0), EXIT_USAGE);
    i = 5;
    assert_int_equal(broker_opts_next(&b, 6, argv, &i, &err), BOPT_ERROR);
    assert_string_equal(err.msg, "--cacert needs a value");
    broker_opts_free(&b);
}

/* --node-order and --heartbeat, and their variables: parsed into the connection's options; a
 * heartbeat of 0 (off: a send to a hung node would never return) is refused, as is a bad
 * value, whether on the command line (a usage error) or in the environment. */
static void test_node_order_and_heartbeat(void **state)
{
    (void)state;
    struct broker_opts b;
    struct conn_opts o;
    env("amqp://h1/,amqp://h2/", NULL, NULL);
    unsetenv("DLQX_NODE_ORDER");
    unsetenv("DLQX_HEARTBEAT");
    assert_true(finish(&b, NULL));
    broker_opts_conn(&b, &o);
    assert_int_equal(o.order, CONN_ORDER_GIVEN);
    assert_int_equal(o.heartbeat_s, 0); /* conn's default, CONN_DEFAULT_HEARTBEAT_S */
    assert_int_equal(CONN_DEFAULT_HEARTBEAT_S, 5);
    broker_opts_free(&b);

    const char *const a1[] = {"--node-order", "shuffle", "--heartbeat=2", NULL};
    assert_true(finish(&b, a1));
    broker_opts_conn(&b, &o);
    assert_int_equal(o.order, CONN_ORDER_SHUFFLE);
    assert_int_equal(o.heartbeat_s, 2);
    assert_int_equal(o.n_urls, 2);
    broker_opts_free(&b);

    setenv("DLQX_NODE_ORDER", "shuffle", 1);
    setenv("DLQX_HEARTBEAT", "7", 1);
    assert_true(finish(&b, NULL));
    broker_opts_conn(&b, &o);
    assert_int_equal(o.order, CONN_ORDER_SHUFFLE);
    assert_int_equal(o.heartbeat_s, 7);
    broker_opts_free(&b);
    /* The command line wins over the environment. */
    const char *const a2[] = {"--node-order", "given", "--heartbeat", "3", NULL};
    assert_true(finish(&b, a2));
    broker_opts_conn(&b, &o);
    assert_int_equal(o.order, CONN_ORDER_GIVEN);
    assert_int_equal(o.heartbeat_s, 3);
    broker_opts_free(&b);

    setenv("DLQX_HEARTBEAT", "0", 1);
    assert_false(finish(&b, NULL));
    assert_non_null(strstr(err_text, "DLQX_HEARTBEAT 0 would turn heartbeats off"));
    broker_opts_free(&b);
    setenv("DLQX_HEARTBEAT", "5", 1);
    setenv("DLQX_NODE_ORDER", "random", 1);
    assert_false(finish(&b, NULL));
    assert_non_null(strstr(err_text, "neither given nor shuffle"));
    broker_opts_free(&b);
    unsetenv("DLQX_NODE_ORDER");
    unsetenv("DLQX_HEARTBEAT");

    char *argv[] = {(char *)(uintptr_t) "--heartbeat",  (char *)(uintptr_t) "0",
                    (char *)(uintptr_t) "--heartbeat",  (char *)(uintptr_t) "601",
                    (char *)(uintptr_t) "--heartbeat",  (char *)(uintptr_t) "5s",
                    (char *)(uintptr_t) "--node-order", (char *)(uintptr_t) "random"};
    struct error err;
    for (int k = 0; k < 8; k += 2) {
        broker_opts_init(&b);
        int i = k;
        assert_int_equal(broker_opts_next(&b, 8, argv, &i, &err), BOPT_ERROR);
        assert_int_equal(error_exit_code(&err, 0), EXIT_USAGE);
        assert_non_null(strstr(err.msg, k == 0   ? "0 would turn heartbeats off"
                                        : k == 6 ? "given (the nodes in the order"
                                                 : "from 1 to 600"));
        broker_opts_free(&b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_bool),
        cmocka_unit_test(test_next),
        cmocka_unit_test(test_read_only_fails_closed),
        cmocka_unit_test(test_mgmt_scheme_and_plain_http),
        cmocka_unit_test(test_tls_options_without_tls),
        cmocka_unit_test(test_url_password),
        cmocka_unit_test(test_node_order_and_heartbeat),
    };
    return cmocka_run_group_tests_name("broker_opts", tests, NULL, NULL);
}
