/*
 * Replay journal, a run that carried on after a lost connection: the `attempt` record in its
 * documented form (never a password), the intents of the later attempt carrying "attempt",
 * the end record's "attempts", and the reader counting attempts while the intents the first
 * attempt left unknown stay pending (the possible duplicates the journal names).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "journal.h"
#include "util.h"

#define RUN "3f2a9c1e-0000-4000-8000-0000000000a7"

static void ok(enum status st, const struct error *err)
{
    if (st != ST_OK)
        fail_msg("%s", err->msg);
}

static void intent(struct journal *j, uint64_t seq, const char *id, uint32_t attempt)
{
    struct journal_intent in = {.run_id = RUN,
                                .seq = seq,
                                .op = "replay",
                                .source = "rf.dlq",
                                .exchange = "",
                                .routing_key = "rf.target",
                                .old_id = id,
                                .new_id = id,
                                .old_id_len = strlen(id),
                                .new_id_len = strlen(id),
                                .old_sha256 = "aa",
                                .new_sha256 = "aa",
                                .attempt = attempt};
    struct error err;
    error_clear(&err);
    ok(journal_write_intent(j, &in, &err), &err);
}

static void test_attempt_record(void **state)
{
    (void)state;
    char dir[] = "/tmp/dlqx-jatt-XXXXXX";
    assert_non_null(mkdtemp(dir));
    setenv("DLQX_NOW", "1767330000123", 1);
    char *path = xasprintf("%s/journal.jsonl", dir);
    struct journal *j = NULL;
    struct error err;
    error_clear(&err);
    ok(journal_open(path, &j, &err), &err);
    struct journal_run r = {RUN, "replay", "amqp://dlqx@127.0.0.1:5701/", "/", "dlqx", "rf.dlq",
                            0,   false};
    ok(journal_write_run(j, &r, &err), &err);
    /* Attempt 1: m-1 done, m-2 in flight when the node died (unknown), m-3 never answered. */
    intent(j, 1, "m-1", 1);
    intent(j, 2, "m-2", 1);
    intent(j, 3, "m-3", 1);
    ok(journal_write_outcome(j, RUN, 1, JR_DONE, NULL, &err), &err);
    ok(journal_write_outcome(j, RUN, 2, JR_UNKNOWN, "the connection failed", &err), &err);
    struct journal_attempt a = {RUN, 2, 4, "amqp://dlqx@127.0.0.1:5702/", "connection lost", 2};
    ok(journal_write_attempt(j, &a, &err), &err);
    /* Attempt 2: both found again and sent again. */
    intent(j, 4, "m-2", 2);
    intent(j, 5, "m-3", 2);
    ok(journal_write_outcome(j, RUN, 4, JR_DONE, NULL, &err), &err);
    ok(journal_write_outcome(j, RUN, 5, JR_DONE, NULL, &err), &err);
    ok(journal_write_end(j, RUN, 3, 0, 1, 0, 3, 2, "finished", &err), &err);
    /* Refused: an attempt 1 record (the run record is the first), a seq 0. */
    struct journal_attempt bad = {RUN, 1, 4, NULL, NULL, 0};
    assert_int_not_equal(journal_write_attempt(j, &bad, &err), ST_OK);
    bad.attempt = 3;
    bad.next_seq = 0;
    assert_int_not_equal(journal_write_attempt(j, &bad, &err), ST_OK);
    ok(journal_sync(j, &err), &err);
    journal_close(j);

    struct bytes file = test_read_file(path);
    const char *want =
        "{\"v\":1,\"kind\":\"attempt\",\"at\":\"2026-01-02T05:00:00.123Z\",\"run\":\"" RUN "\","
        "\"attempt\":2,\"next_seq\":4,\"broker\":\"amqp://dlqx@127.0.0.1:5702/\",\"unknown\":2,"
        "\"reason\":\"connection lost\"}\n";
    assert_non_null(strstr((const char *)file.data, want));
    /* The first attempt's intents carry no "attempt"; the second's do. */
    assert_non_null(strstr((const char *)file.data, "\"seq\":4,\"op\":\"replay\""));
    assert_null(strstr((const char *)file.data, "\"attempt\":1"));
    assert_non_null(strstr((const char *)file.data, "\"new_sha256\":\"aa\",\"attempt\":2}"));
    assert_non_null(strstr((const char *)file.data, "\"selected\":3,\"attempts\":2,\"how\""));
    bytes_free(&file);

    json_t *p = NULL;
    struct journal_summary sum;
    ok(journal_collect(path, NULL, true, NULL, NULL, &p, &sum, NULL, &err), &err);
    assert_int_equal(sum.attempts, 1);
    assert_int_equal(sum.intents, 5);
    /* m-2's first copy (unknown) and m-3's (no outcome): each may be at the target besides
     * the copy attempt 2 sent — the duplicates the journal names. */
    assert_int_equal(sum.pending, 2);
    assert_int_equal(json_array_size(p), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(p, 0), "old_id")), "m-2");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(p, 0), "seq")), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(p, 1), "old_id")), "m-3");
    json_decref(p);

    unlink(path);
    rmdir(dir);
    free(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_attempt_record),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
