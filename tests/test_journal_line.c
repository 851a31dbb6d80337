/*
 * The journal's intent and outcome records written as text (journal_line.c) are byte for byte
 * the lines the jansson tree writes (journal.c), for every shape a pass writes: a replay, a
 * move, a delete (no target, no new id), ids and names of any bytes (NUL, invalid UTF-8:
 * base64), characters JSON escapes, an attempt past the first, a diff as text, every result,
 * with and without a reason, a sequence number past INT64_MAX; and a record the text writer
 * declines (a diff tree) goes through the tree.
 */
#include "testutil.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal.h"
#include "journal_file.h"
#include "util.h"

#define AT "2026-01-02T05:00:00.123Z"
#define RUN "3f2a9c1e-0000-4000-8000-000000000001"

static void same_intent(const struct journal_intent *in)
{
    size_t n1 = 0, n2 = 0;
    char *fast = journal_intent_line(in, AT, &n1);
    char *tree = journal_intent_line_tree(in, AT, &n2);
    assert_non_null(fast);
    assert_non_null(tree);
    if (n1 != n2 || memcmp(fast, tree, n1) != 0)
        fail_msg("intent lines differ:\n text %.*s tree %.*s", (int)n1, fast, (int)n2, tree);
    assert_true(n1 > 2 && fast[n1 - 1] == '\n');
    free(fast);
    free(tree);
}

static void same_outcome(const char *run, uint64_t seq, enum journal_result res, const char *reason)
{
    size_t n1 = 0, n2 = 0;
    char *fast = journal_outcome_line(run, seq, journal_result_name(res), reason, AT, &n1);
    char *tree = journal_outcome_line_tree(run, seq, res, reason, AT, &n2);
    assert_non_null(fast);
    assert_non_null(tree);
    if (n1 != n2 || memcmp(fast, tree, n1) != 0)
        fail_msg("outcome lines differ:\n text %.*s tree %.*s", (int)n1, fast, (int)n2, tree);
    free(fast);
    free(tree);
}

static void test_intents(void **state)
{
    (void)state;
    static const char nul_id[] = {'a', '\0', 'b'};
    static const char bad_utf8[] = {'x', (char)0xff, (char)0xc3, 'y'};
    static const char diff[] = "[{\"section\":\"headers\",\"op\":\"add\",\"key\":\"x-a\"}]";
    struct journal_intent in = {
        RUN, 1, "replay", "orders.dlq", "",   "orders", "id-1",          "id-1-r1",
        4,   7, "aa",     "bb",         NULL, diff,     sizeof diff - 1, 0};
    same_intent(&in); /* a replay: default exchange, a diff as text */
    in.attempt = 3;
    in.seq = UINT64_MAX; /* written as INT64_MAX by both */
    same_intent(&in);
    in.attempt = 0;
    in.seq = 7;
    in.op = "move";
    in.exchange = "ex \"quoted\" \\ /";
    in.routing_key = NULL; /* "" */
    in.diff_text = NULL;
    in.diff_text_len = 0;
    same_intent(&in);
    in.diff_text = diff;
    in.diff_text_len = 0; /* no diff */
    same_intent(&in);
    in.op = "delete"; /* no target, no new id */
    in.exchange = NULL;
    in.new_id = NULL;
    in.new_id_len = 0;
    same_intent(&in);
    in.old_id = nul_id; /* base64 */
    in.old_id_len = sizeof nul_id;
    same_intent(&in);
    in.old_id = bad_utf8;
    in.old_id_len = sizeof bad_utf8;
    in.new_id = "caf\xc3\xa9 \t\n\x01 \xe2\x80\xa8";
    in.new_id_len = strlen(in.new_id);
    in.exchange = "";
    in.routing_key = "q\x7f";
    same_intent(&in);
    in.old_id = "";
    in.old_id_len = 0; /* "" */
    in.source = NULL;
    in.old_sha256 = NULL;
    in.new_sha256 = NULL;
    same_intent(&in);
    in.source = "caf\xc3"; /* a name that is not UTF-8: base64, as journal_string_json */
    same_intent(&in);
}

static void test_outcomes(void **state)
{
    (void)state;
    same_outcome(RUN, 1, JR_DONE, NULL);
    same_outcome(RUN, 2, JR_KEPT, "the broker refused the copy: \"no route\"\n");
    same_outcome(RUN, 3, JR_UNKNOWN, "lost \xff bytes");
    same_outcome(RUN, UINT64_MAX, JR_REFUSED, "403");
    same_outcome("run \x01", 5, JR_DONE, "");
}

/* A diff given as a tree is the tree's to write. */
static void test_tree_declined(void **state)
{
    (void)state;
    json_t *d = json_array();
    struct journal_intent in = {RUN, 1, "replay", "q",  "", "q",  "a", "b",
                                1,   1, "aa",     "bb", d,  NULL, 0,   0};
    size_t n = 0;
    assert_null(journal_intent_line(&in, AT, &n));
    json_decref(d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_intents),
        cmocka_unit_test(test_outcomes),
        cmocka_unit_test(test_tree_declined),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
