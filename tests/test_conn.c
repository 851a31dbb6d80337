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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mask_url),
        cmocka_unit_test(test_password_file_not_dumpable),
    };
    return cmocka_run_group_tests_name("conn", tests, NULL, NULL);
}
