/*
 * safefile: every file dlqx writes, in a temporary directory — a new file is 0600, a replaced
 * one keeps its mode, a FIFO or a terminal is written as a stream and stays what it is, a
 * symbolic link is never written through (at the target or at TARGET.partial), an incomplete
 * or abandoned write never replaces the good older file, and the journal is not created
 * through a link. (A FIFO stands in for special files: the real /dev/null is never touched.)
 */
#define _XOPEN_SOURCE 700 /* posix_openpt */
#include "testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "journal.h"
#include "safefile.h"
#include "util.h"

static char tmpdir[64];

static int setup(void **state)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/dlqx-safefile-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    char *cmd = xasprintf("rm -rf '%s'", tmpdir);
    int rc = system(cmd);
    free(cmd);
    return rc == 0 ? 0 : -1;
}

static char *in_tmp(const char *name)
{
    return xasprintf("%s/%s", tmpdir, name);
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static void assert_content(const char *path, const char *want)
{
    struct bytes b = test_read_file(path);
    if (b.len != strlen(want) || memcmp(b.data, want, b.len) != 0)
        fail_msg("%s holds \"%.*s\", expected \"%s\"", path, (int)b.len, (const char *)b.data,
                 want);
    bytes_free(&b);
}

/* How many entries the directory holds (a temporary file left behind shows here). */
static int entries(void)
{
    DIR *d = opendir(tmpdir);
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void open_ok(struct safefile *sf, const char *path)
{
    struct error err;
    error_clear(&err);
    if (safefile_open(sf, path, &err) != ST_OK)
        fail_msg("safefile_open(%s): %s", path, err.msg);
}

static void test_new_file_is_0600(void **state)
{
    char *path = in_tmp("new.jsonl");
    mode_t old = umask(0);
    struct safefile sf;
    open_ok(&sf, path);
    umask(old);
    assert_false(sf.stream);
    fputs("one\n", sf.f);
    /* Until the commit the target does not exist: the data is in a file beside it. */
    assert_int_equal(access(path, F_OK), -1);
    assert_int_equal(entries(), 1);
    struct error err;
    assert_int_equal(safefile_commit(&sf, &err), ST_OK);
    assert_content(path, "one\n");
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0600);
    assert_int_equal(entries(), 1);
    unlink(path);
    free(path);
}

static void test_replaced_file_keeps_its_mode(void **state)
{
    char *path = in_tmp("old.jsonl");
    put(path, "old\n");
    assert_int_equal(chmod(path, 0640), 0);
    struct safefile sf;
    open_ok(&sf, path);
    fputs("new\n", sf.f);
    assert_content(path, "old\n");
    struct error err;
    assert_int_equal(safefile_commit(&sf, &err), ST_OK);
    assert_content(path, "new\n");
    struct stat st;
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_int_equal(entries(), 1);
    unlink(path);
    free(path);
}

/* A FIFO is written as a stream and is still a FIFO afterwards (it is not replaced by a
 * regular file of what was written to it). */
static void test_fifo_written_as_a_stream(void **state)
{
    char *path = in_tmp("fifo");
    assert_int_equal(mkfifo(path, 0600), 0);
    int rfd = open(path, O_RDONLY | O_NONBLOCK);
    assert_true(rfd >= 0);
    struct safefile sf;
    open_ok(&sf, path);
    assert_true(sf.stream);
    fputs("through the pipe\n", sf.f);
    struct error err;
    assert_int_equal(safefile_commit(&sf, &err), ST_OK);
    char buf[64] = {0};
    assert_int_equal(read(rfd, buf, sizeof buf - 1), 17);
    assert_string_equal(buf, "through the pipe\n");
    close(rfd);
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(entries(), 1);
    /* Incomplete or discarded, a stream cannot be taken back, and it stays a FIFO. */
    rfd = open(path, O_RDONLY | O_NONBLOCK);
    open_ok(&sf, path);
    fputs("half", sf.f);
    char *kept = (char *)"unset";
    assert_int_equal(safefile_keep_incomplete(&sf, &kept, &err), ST_OK);
    assert_null(kept);
    close(rfd);
    assert_int_equal(lstat(path, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    assert_int_equal(entries(), 1);
    unlink(path);
    free(path);
}

/* A terminal (a pseudo-terminal here) is a stream too. */
static void test_terminal_written_as_a_stream(void **state)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY);
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0)
        fail_msg("no pseudo-terminal: %s", strerror(errno));
    const char *name = ptsname(master);
    assert_non_null(name);
    struct safefile sf;
    open_ok(&sf, name);
    assert_true(sf.stream);
    assert_null(sf.tmp);
    fputs("x", sf.f);
    struct error err;
    assert_int_equal(safefile_commit(&sf, &err), ST_OK);
    close(master);
}

/* The target itself a symbolic link: refused, the file it points to untouched. */
static void test_symlink_target_refused(void **state)
{
    char *victim = in_tmp("victim");
    char *link = in_tmp("link.jsonl");
    put(victim, "precious\n");
    assert_int_equal(symlink(victim, link), 0);
    struct safefile sf;
    struct error err;
    error_clear(&err);
    assert_int_not_equal(safefile_open(&sf, link, &err), ST_OK);
    assert_non_null(strstr(err.msg, "symbolic link"));
    assert_non_null(strstr(err.msg, link));
    assert_content(victim, "precious\n");
    assert_int_equal(entries(), 2);
    /* A dangling one: nothing is created where it points. */
    char *nowhere = in_tmp("nowhere");
    char *dangling = in_tmp("dangling.jsonl");
    assert_int_equal(symlink(nowhere, dangling), 0);
    assert_int_not_equal(safefile_open(&sf, dangling, &err), ST_OK);
    assert_int_equal(access(nowhere, F_OK), -1);
    unlink(dangling);
    unlink(link);
    unlink(victim);
    free(dangling);
    free(nowhere);
    free(link);
    free(victim);
}

static void test_directory_refused(void **state)
{
    char *dir = in_tmp("adir");
    assert_int_equal(mkdir(dir, 0700), 0);
    struct safefile sf;
    struct error err;
    error_clear(&err);
    assert_int_not_equal(safefile_open(&sf, dir, &err), ST_OK);
    assert_non_null(strstr(err.msg, "a directory"));
    char *missing = in_tmp("no/such/dir.jsonl");
    assert_int_not_equal(safefile_open(&sf, missing, &err), ST_OK);
    assert_non_null(strstr(err.msg, missing));
    assert_int_equal(entries(), 1);
    rmdir(dir);
    free(missing);
    free(dir);
}

/* Files only (the explorer's E): a FIFO with no reader is refused at once, where opening it
 * would wait for a reader; "-" and a device are refused; a new or regular file is written. */
static void test_regular_only(void **state)
{
    (void)state;
    char *fifo = in_tmp("fifo-regular");
    assert_int_equal(mkfifo(fifo, 0600), 0);
    struct safefile sf;
    struct error err;
    error_clear(&err);
    alarm(5); /* a blocking open would hang the test: SIGALRM fails it instead */
    assert_int_not_equal(safefile_open_regular(&sf, fifo, &err), ST_OK);
    alarm(0);
    assert_non_null(strstr(err.msg, "is not a regular file"));
    assert_int_not_equal(safefile_open_regular(&sf, "-", &err), ST_OK);
    assert_int_not_equal(safefile_open_regular(&sf, "/dev/null", &err), ST_OK);
    char *file = in_tmp("regular.md");
    assert_int_equal(safefile_open_regular(&sf, file, &err), ST_OK);
    assert_false(sf.stream);
    fputs("# report\n", sf.f);
    assert_int_equal(safefile_commit(&sf, &err), ST_OK);
    struct stat st;
    assert_int_equal(lstat(file, &st), 0);
    assert_true(S_ISREG(st.st_mode));
    unlink(file);
    unlink(fifo);
    free(file);
    free(fifo);
}

/* An incomplete write never replaces the good older file: it is kept as TARGET.partial
 * (replacing an older partial one). */
static void test_incomplete_keeps_the_good_file(void **state)
{
    char *path = in_tmp("snap.jsonl");
    char *partial = in_tmp("snap.jsonl" SAFEFILE_INCOMPLETE_SUFFIX);
    put(path, "good\n");
    put(partial, "an older partial one\n");
    struct safefile sf;
    open_ok(&sf, path);
    fputs("half", sf.f);
    char *kept = NULL;
    struct error err;
    assert_int_equal(safefile_keep_incomplete(&sf, &kept, &err), ST_OK);
    assert_non_null(kept);
    assert_string_equal(kept, partial);
    assert_content(path, "good\n");
    assert_content(partial, "half");
    assert_int_equal(entries(), 2);
    free(kept);
    /* Abandoned (a write error): no trace, the good file as it was. */
    open_ok(&sf, path);
    fputs("broken", sf.f);
    safefile_discard(&sf);
    assert_content(path, "good\n");
    assert_int_equal(entries(), 2);
    unlink(partial);
    unlink(path);
    free(partial);
    free(path);
}

/* A symbolic link planted at TARGET.partial: not followed, neither while writing nor when an
 * incomplete file is kept (what was written stays in the temporary file, named in err). */
static void test_planted_partial_symlink(void **state)
{
    char *victim = in_tmp("victim");
    char *path = in_tmp("snap.jsonl");
    char *partial = in_tmp("snap.jsonl" SAFEFILE_INCOMPLETE_SUFFIX);
    put(victim, "precious\n");
    assert_int_equal(symlink(victim, partial), 0);
    struct safefile sf;
    open_ok(&sf, path);
    fputs("complete\n", sf.f);
    struct error err;
    assert_int_equal(safefile_commit(&sf, &err), ST_OK);
    assert_content(path, "complete\n");
    assert_content(victim, "precious\n");

    open_ok(&sf, path);
    fputs("half", sf.f);
    char *tmp = xstrdup(sf.tmp);
    char *kept = NULL;
    error_clear(&err);
    assert_int_not_equal(safefile_keep_incomplete(&sf, &kept, &err), ST_OK);
    assert_null(kept);
    assert_non_null(strstr(err.msg, "symbolic link"));
    assert_non_null(strstr(err.msg, tmp));
    assert_content(tmp, "half");
    assert_content(victim, "precious\n");
    assert_content(path, "complete\n");
    struct stat st;
    assert_int_equal(lstat(partial, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    unlink(tmp);
    unlink(partial);
    unlink(path);
    unlink(victim);
    free(tmp);
    free(partial);
    free(path);
    free(victim);
}

/* The journal is created 0600 and never through a symbolic link: a dangling link planted at
 * its name does not make dlqx create the file it points to. */
static void test_journal_not_created_through_a_link(void **state)
{
    char *target = in_tmp("elsewhere.jsonl");
    char *path = in_tmp("journal.jsonl");
    assert_int_equal(symlink(target, path), 0);
    struct journal *j = NULL;
    struct error err;
    error_clear(&err);
    assert_int_not_equal(journal_open(path, &j, &err), ST_OK);
    assert_null(j);
    assert_non_null(strstr(err.msg, path));
    assert_int_equal(access(target, F_OK), -1);
    unlink(path);
    mode_t old = umask(0);
    assert_int_equal(journal_open(path, &j, &err), ST_OK);
    umask(old);
    journal_close(j);
    struct stat st;
    assert_int_equal(lstat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0600);
    unlink(path);
    free(path);
    free(target);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_new_file_is_0600),
        cmocka_unit_test(test_replaced_file_keeps_its_mode),
        cmocka_unit_test(test_fifo_written_as_a_stream),
        cmocka_unit_test(test_terminal_written_as_a_stream),
        cmocka_unit_test(test_symlink_target_refused),
        cmocka_unit_test(test_directory_refused),
        cmocka_unit_test(test_regular_only),
        cmocka_unit_test(test_incomplete_keeps_the_good_file),
        cmocka_unit_test(test_planted_partial_symlink),
        cmocka_unit_test(test_journal_not_created_through_a_link),
    };
    return cmocka_run_group_tests_name("safefile", tests, setup, teardown);
}
