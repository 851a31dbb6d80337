#include "journal_testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

char tmpdir[64];

int setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dlqx-journal-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    setenv("DLQX_NOW", "1767330000123", 1);
    return 0;
}

int teardown(void **state)
{
    char *cmd = xasprintf("rm -rf '%s'", tmpdir);
    int rc = system(cmd);
    free(cmd);
    return rc == 0 ? 0 : -1;
}

char *tmp_path(const char *rel)
{
    return xasprintf("%s/%s", tmpdir, rel);
}

struct journal *open_ok(const char *path)
{
    struct journal *j = NULL;
    struct error err;
    error_clear(&err);
    if (journal_open(path, &j, &err) != ST_OK)
        fail_msg("journal_open: %s", err.msg);
    return j;
}

void ok(enum status st, const struct error *err)
{
    if (st != ST_OK)
        fail_msg("%s", err->msg);
}

void append_raw(const char *path, const char *s, size_t n)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0600);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, s, n), (ssize_t)n);
    close(fd);
}

void intent(struct journal *j, const char *run, uint64_t seq, const char *old_id)
{
    struct journal_intent in = {run,      seq,    "replay", "orders.dlq",   "",
                                "orders", old_id, old_id,   strlen(old_id), strlen(old_id),
                                "aa",     "bb",   NULL,     NULL,           0,
                                0};
    struct error err;
    error_clear(&err);
    ok(journal_write_intent(j, &in, &err), &err);
}
