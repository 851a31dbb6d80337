/*
 * conn's secrets: URLs are shown without their password whatever characters it holds, and
 * reading a password makes the process undumpable (no core file, no ptrace) first.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mask_url),
        cmocka_unit_test(test_password_file_not_dumpable),
        cmocka_unit_test(test_node_order),
    };
    return cmocka_run_group_tests_name("conn", tests, NULL, NULL);
}
