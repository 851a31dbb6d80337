/*
 * Replay journal, its writers: two writers never interleaving bytes, the group commit, records
 * held until a sync, file modes and sync modes, and the errors of opening and writing.
 */
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

#include "hval_json.h"
#include "journal.h"
#include "util.h"

static void check_whole_lines(const char *path, uint64_t want)
{
    struct journal_scan_report rep;
    struct error err;
    error_clear(&err);
    ok(journal_scan(path, NULL, NULL, &rep, &err), &err);
    assert_int_equal(rep.records, want);
    assert_int_equal(rep.malformed, 0);
    assert_false(rep.torn_tail);
}

static void test_two_writers(void **state)
{
    char *path = tmp_path("shared/journal.jsonl");
    /* Two handles in one process, interleaved. */
    struct journal *a = open_ok(path), *b = open_ok(path);
    for (uint64_t i = 1; i <= 50; i++) {
        intent(a, "a", i, "id-a");
        intent(b, "b", i, "id-b");
    }
    journal_close(a);
    journal_close(b);
    check_whole_lines(path, 100);

    /* Two processes at once, with records of some 16 KiB (a split write would show as a
     * malformed line). */
    json_t *diff = json_array();
    for (int i = 0; i < 200; i++)
        json_array_append_new(diff, json_pack("{s:s,s:s,s:s}", "section", "body", "op", "added",
                                              "new", "a line of the body, long enough"));
    pid_t kids[2];
    for (int k = 0; k < 2; k++) {
        kids[k] = fork();
        assert_true(kids[k] >= 0);
        if (kids[k] == 0) {
            struct journal *j = NULL;
            if (journal_open(path, &j, NULL) != ST_OK)
                _exit(1);
            for (uint64_t i = 1; i <= 200; i++) {
                struct journal_intent in = {.run_id = k ? "kid-1" : "kid-0",
                                            .seq = i,
                                            .op = "replay",
                                            .source = "q",
                                            .exchange = "",
                                            .routing_key = "q",
                                            .old_id = "id",
                                            .new_id = "id",
                                            .old_id_len = 2,
                                            .new_id_len = 2,
                                            .diff = diff};
                if (journal_write_intent(j, &in, NULL) != ST_OK)
                    _exit(2);
            }
            journal_close(j);
            json_decref(diff);
            free(path);
            _exit(0);
        }
    }
    for (int k = 0; k < 2; k++) {
        int status = 0;
        assert_int_equal(waitpid(kids[k], &status, 0), kids[k]);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    json_decref(diff);
    check_whole_lines(path, 500);
    json_t *p = NULL;
    struct error err;
    error_clear(&err);
    ok(journal_pending(path, &p, &err), &err);
    assert_int_equal(json_array_size(p), 500);
    json_decref(p);
    free(path);
}

static uint64_t records_in(const char *path)
{
    struct journal_scan_report rep;
    struct error err;
    error_clear(&err);
    ok(journal_scan(path, NULL, NULL, &rep, &err), &err);
    assert_int_equal(rep.malformed, 0);
    assert_false(rep.torn_tail);
    return rep.records;
}

/* Records are held until journal_sync (one write for all of them), past 256 KB written out
 * whole, and what is left is written by journal_close. */
/* The group commit (journal_commit, a bulk replay's): a ticket is durable only once its records
 * are in the file; what is handed over lands in the order written; journal_sync after a commit
 * waits for the thread; journal_close ends it with everything written. */
static void test_group_commit(void **state)
{
    (void)state;
    char *path = tmp_path("commit/journal.jsonl");
    struct journal *j = open_ok(path);
    struct error err;
    error_clear(&err);
    assert_int_equal(journal_wake_fd(j), -1); /* no thread before the first commit */
    intent(j, "r", 1, "a");
    intent(j, "r", 2, "b");
    uint64_t t = journal_commit(j);
    assert_true(t >= 1);
    assert_true(journal_wake_fd(j) >= 0);
    uint64_t d = 0;
    for (int i = 0; i < 500; i++) {
        ok(journal_durable(j, &d, &err), &err);
        if (d >= t)
            break;
        struct pollfd pf = {journal_wake_fd(j), POLLIN, 0};
        poll(&pf, 1, 10);
    }
    assert_true(d >= t);
    assert_int_equal(records_in(path), 2);
    ok(journal_write_outcome(j, "r", 1, JR_DONE, NULL, &err), &err);
    intent(j, "r", 3, "c");
    uint64_t t2 = journal_commit(j);
    assert_true(t2 > t);
    ok(journal_sync(j, &err), &err); /* hands over (nothing new) and waits */
    ok(journal_durable(j, &d, &err), &err);
    assert_true(d >= t2);
    assert_int_equal(records_in(path), 4);
    ok(journal_write_outcome(j, "r", 2, JR_DONE, NULL, &err), &err);
    journal_close(j); /* held: handed over, written and synced before the thread ends */
    assert_int_equal(records_in(path), 5);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[4096];
    const char *want[] = {"\"intent\"", "\"intent\"", "\"outcome\"", "\"seq\":3", "\"seq\":2"};
    for (size_t i = 0; i < 5; i++) {
        assert_non_null(fgets(line, sizeof line, f));
        if (!strstr(line, want[i]))
            fail_msg("line %zu is not in order: %s", i + 1, line);
    }
    fclose(f);
    free(path);
}

static void test_held_until_sync(void **state)
{
    char *path = tmp_path("held/journal.jsonl");
    struct journal *j = open_ok(path);
    struct error err;
    error_clear(&err);
    intent(j, "r", 1, "a");
    intent(j, "r", 2, "b");
    assert_int_equal(records_in(path), 0);
    ok(journal_sync(j, &err), &err);
    assert_int_equal(records_in(path), 2);
    ok(journal_sync(j, &err), &err); /* nothing held: nothing written twice */
    assert_int_equal(records_in(path), 2);
    /* Some 1 KB records, well past the bound, without a sync. */
    json_t *diff = json_array();
    for (int i = 0; i < 8; i++)
        json_array_append_new(diff,
                              json_pack("{s:s,s:s,s:s}", "section", "body", "op", "added", "new",
                                        "a line of the body, long enough to "
                                        "make the record some hundred bytes"));
    for (uint64_t i = 3; i < 1003; i++) {
        struct journal_intent in = {.run_id = "r",
                                    .seq = i,
                                    .op = "replay",
                                    .source = "q",
                                    .exchange = "",
                                    .routing_key = "q",
                                    .old_id = "id",
                                    .new_id = "id",
                                    .old_id_len = 2,
                                    .new_id_len = 2,
                                    .diff = diff};
        ok(journal_write_intent(j, &in, &err), &err);
    }
    json_decref(diff);
    uint64_t mid = records_in(path);
    assert_true(mid > 2 && mid < 1002);
    journal_close(j);
    assert_int_equal(records_in(path), 1002);
    free(path);
}

static void test_modes_and_sync(void **state)
{
    char *dir = tmp_path("new/deeper");
    char *path = xasprintf("%s/journal.jsonl", dir);
    mode_t old = umask(0);
    struct journal *j = open_ok(path);
    umask(old);
    struct error err;
    error_clear(&err);
    intent(j, "r", 1, "a");
    ok(journal_sync(j, &err), &err);
    ok(journal_sync(j, &err), &err);
    journal_close(j);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0600);
    assert_int_equal(stat(dir, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    char *parent = tmp_path("new");
    assert_int_equal(stat(parent, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0700);
    free(parent);
    free(dir);
    free(path);
}

static void test_errors(void **state)
{
    struct error err;
    error_clear(&err);
    struct journal *j = NULL;
    char *file = tmp_path("plain-file");
    append_raw(file, "x", 1);
    char *under = xasprintf("%s/journal.jsonl", file);
    assert_int_equal(journal_open(under, &j, &err), ST_EIO);
    assert_null(j);
    assert_non_null(strstr(err.msg, file));
    assert_non_null(strstr(err.msg, strerror(ENOTDIR)));

    char *missing = tmp_path("no-such.jsonl");
    assert_int_equal(journal_scan(missing, NULL, NULL, NULL, &err), ST_ENOTFOUND);
    assert_non_null(strstr(err.msg, missing));
    json_t *p = (json_t *)1;
    assert_int_equal(journal_pending(missing, &p, &err), ST_ENOTFOUND);
    assert_null(p);

    char *path = tmp_path("errors.jsonl");
    j = open_ok(path);
    struct journal_intent in = {"r", 0, "replay", "q",  NULL, NULL, "a", NULL,
                                1,   0, NULL,     NULL, NULL, NULL, 0,   0};
    assert_int_equal(journal_write_intent(j, &in, &err), ST_EINVAL);
    assert_int_equal(journal_write_outcome(j, NULL, 1, JR_DONE, NULL, &err), ST_EINVAL);
    journal_close(j);
    assert_string_equal(journal_result_name(JR_KEPT), "kept");
    free(path);
    free(missing);
    free(under);
    free(file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_writers),    cmocka_unit_test(test_held_until_sync),
        cmocka_unit_test(test_modes_and_sync), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_group_commit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
