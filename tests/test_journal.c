/*
 * Replay journal: records written and read back in their documented form, pending intents
 * worked out, a torn last line skipped and the next append starting a fresh line, malformed
 * lines counted, ids of any bytes kept, diffs, run ids, and where the journal lives by
 * default. Writers, commits and errors: test_journal_writers.c.
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

#define RUN "3f2a9c1e-0000-4000-8000-000000000001"

/* A run of three intents: 1 done, 2 without outcome, 3 unknown. */
static void write_sample(struct journal *j)
{
    struct error err;
    error_clear(&err);
    struct journal_run r = {
        RUN, "replay", "amqp://ops:s3cret@rabbit:5672/prod", "prod", "ops", "orders.dlq", 3, false};
    ok(journal_write_run(j, &r, &err), &err);
    json_t *diff = json_pack("[{s:s,s:s,s:s,s:s,s:s}]", "section", "header", "op", "changed",
                             "name", "x-acemq-attempt", "old", "long:5", "new", "long:1");
    struct journal_intent in = {RUN, 1, "replay", "orders.dlq", "",   "orders", "id-1", "id-1",
                                4,   4, "aa",     "bb",         diff, NULL,     0,      0};
    ok(journal_write_intent(j, &in, &err), &err);
    json_decref(diff);
    ok(journal_sync(j, &err), &err);
    ok(journal_write_outcome(j, RUN, 1, JR_DONE, NULL, &err), &err);
    intent(j, RUN, 2, "id-2");
    intent(j, RUN, 3, "id-3");
    ok(journal_write_outcome(j, RUN, 3, JR_UNKNOWN,
                             "the connection was lost before the broker confirmed the publish",
                             &err),
       &err);
    ok(journal_write_end(j, RUN, 1, 0, 1, 0, 2, 1, "the connection was lost", &err), &err);
    ok(journal_sync(j, &err), &err);
}

struct seen {
    json_t *records;
    size_t stop_after; /* 0: never stop */
};

static bool keep(void *ctx, json_t *rec)
{
    struct seen *s = ctx;
    json_array_append(s->records, rec);
    return !s->stop_after || json_array_size(s->records) < s->stop_after;
}

static const char *kind_at(json_t *a, size_t i)
{
    return json_string_value(json_object_get(json_array_get(a, i), "kind"));
}

static void test_write_and_read_back(void **state)
{
    char *path = tmp_path("state/dlqx/journal.jsonl");
    struct journal *j = open_ok(path);
    assert_string_equal(journal_path(j), path);
    write_sample(j);
    journal_close(j);

    struct bytes file = test_read_file(path);
    assert_null(strstr((const char *)file.data, "s3cret"));
    /* Compact, keys in the documented order, one record a line. */
    const char *want_intent =
        "{\"v\":1,\"kind\":\"intent\",\"at\":\"2026-01-02T05:00:00.123Z\",\"run\":\"" RUN "\","
        "\"seq\":1,\"op\":\"replay\",\"source\":\"orders.dlq\","
        "\"target\":{\"exchange\":\"\",\"routing_key\":\"orders\"},\"old_id\":\"id-1\","
        "\"new_id\":\"id-1\",\"old_sha256\":\"aa\",\"new_sha256\":\"bb\",\"diff\":[{"
        "\"section\":\"header\",\"op\":\"changed\",\"name\":\"x-acemq-attempt\","
        "\"old\":\"long:5\",\"new\":\"long:1\"}]}\n";
    assert_non_null(strstr((const char *)file.data, want_intent));
    assert_non_null(strstr((const char *)file.data,
                           "\n{\"v\":1,\"kind\":\"outcome\",\"at\":\"2026-01-02T05:00:00.123Z\","
                           "\"run\":\"" RUN "\",\"seq\":1,\"result\":\"done\"}\n"));
    assert_non_null(strstr((const char *)file.data,
                           "{\"v\":1,\"kind\":\"end\",\"at\":\"2026-01-02T05:00:00.123Z\",\"run\":"
                           "\"" RUN "\",\"counts\":{\"done\":1,\"kept\":0,\"unknown\":1},"
                           "\"selected\":2,\"how\":\"the connection was lost\"}\n"));
    bytes_free(&file);

    struct seen s = {json_array(), 0};
    struct journal_scan_report rep;
    struct error err;
    error_clear(&err);
    ok(journal_scan(path, keep, &s, &rep, &err), &err);
    assert_int_equal(rep.records, 7);
    assert_int_equal(rep.lines, 7);
    assert_int_equal(rep.malformed, 0);
    assert_false(rep.torn_tail);
    assert_string_equal(kind_at(s.records, 0), "run");
    assert_string_equal(kind_at(s.records, 6), "end");
    json_t *run = json_array_get(s.records, 0);
    static const char *const run_keys[] = {"v",       "kind",    "at",   "run", "who",
                                           "broker",  "vhost",   "user", "op",  "source",
                                           "planned", "dry_run", "dlqx", NULL};
    size_t k = 0;
    const char *key;
    json_t *v;
    json_object_foreach(run, key, v)
    {
        assert_non_null(run_keys[k]);
        assert_string_equal(key, run_keys[k]);
        k++;
    }
    assert_null(run_keys[k]);
    assert_string_equal(json_string_value(json_object_get(run, "broker")),
                        "amqp://ops@rabbit:5672/prod");
    assert_string_equal(json_string_value(json_object_get(run, "dlqx")), DLQX_VERSION_STRING);
    assert_non_null(strchr(json_string_value(json_object_get(run, "who")), '@'));
    json_decref(s.records);

    /* Stopping early. */
    s = (struct seen){json_array(), 2};
    ok(journal_scan(path, keep, &s, NULL, &err), &err);
    assert_int_equal(json_array_size(s.records), 2);
    json_decref(s.records);

    /* Pending: seq 2 has no outcome; seq 3's outcome is "unknown", so it is in doubt too. */
    json_t *p = NULL;
    ok(journal_pending(path, &p, &err), &err);
    assert_int_equal(json_array_size(p), 2);
    json_t *one = json_array_get(p, 0);
    assert_int_equal(json_integer_value(json_object_get(one, "seq")), 2);
    assert_string_equal(json_string_value(json_object_get(one, "kind")), "intent");
    assert_string_equal(json_string_value(json_object_get(one, "run_broker")),
                        "amqp://ops@rabbit:5672/prod");
    assert_string_equal(json_string_value(json_object_get(one, "run_source")), "orders.dlq");
    assert_null(json_object_get(one, "outcome"));
    json_t *three = json_array_get(p, 1);
    assert_int_equal(json_integer_value(json_object_get(three, "seq")), 3);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(three, "outcome"), "result")), "unknown");
    json_decref(p);

    struct journal_summary sum;
    ok(journal_collect(path, NULL, false, NULL, NULL, &p, &sum, &rep, &err), &err);
    assert_int_equal(sum.runs, 1);
    assert_int_equal(sum.intents, 3);
    assert_int_equal(sum.pending, 2);
    assert_int_equal(json_array_size(p), 3);
    json_t *o1 = json_object_get(json_array_get(p, 0), "outcome");
    assert_string_equal(json_string_value(json_object_get(o1, "result")), "done");
    assert_null(json_object_get(json_array_get(p, 1), "outcome"));
    json_t *o3 = json_object_get(json_array_get(p, 2), "outcome");
    assert_string_equal(json_string_value(json_object_get(o3, "result")), "unknown");
    json_decref(p);

    /* A run prefix keeps only that run. */
    ok(journal_collect(path, "3f2a9c1e", true, NULL, NULL, &p, &sum, NULL, &err), &err);
    assert_int_equal(json_array_size(p), 2);
    json_decref(p);
    ok(journal_collect(path, "ffff", false, NULL, NULL, &p, &sum, NULL, &err), &err);
    assert_int_equal(json_array_size(p), 0);
    assert_int_equal(sum.runs, 0);
    json_decref(p);
    free(path);
}

static void test_pending_across_runs(void **state)
{
    char *path = tmp_path("two-runs.jsonl");
    struct journal *j = open_ok(path);
    struct error err;
    error_clear(&err);
    /* Two runs interleaved (two processes); outcomes out of order; a run without a run
     * record; an outcome for an intent that does not exist. */
    struct journal_run a = {"run-a", "move", "amqp://h/", "/", "guest", "a.dlq", 2, false};
    ok(journal_write_run(j, &a, &err), &err);
    intent(j, "run-a", 1, "a1");
    intent(j, "run-b", 1, "b1");
    intent(j, "run-a", 2, "a2");
    ok(journal_write_outcome(j, "run-a", 2, JR_KEPT, "the broker refused the copy", &err), &err);
    ok(journal_write_outcome(j, "run-b", 1, JR_DONE, NULL, &err), &err);
    ok(journal_write_outcome(j, "run-c", 9, JR_DONE, NULL, &err), &err);
    intent(j, "run-b", 2, "b2");
    journal_close(j);

    json_t *p = NULL;
    ok(journal_pending(path, &p, &err), &err);
    assert_int_equal(json_array_size(p), 2);
    json_t *x = json_array_get(p, 0), *y = json_array_get(p, 1);
    assert_string_equal(json_string_value(json_object_get(x, "run")), "run-a");
    assert_int_equal(json_integer_value(json_object_get(x, "seq")), 1);
    assert_string_equal(json_string_value(json_object_get(x, "run_source")), "a.dlq");
    assert_string_equal(json_string_value(json_object_get(y, "run")), "run-b");
    assert_int_equal(json_integer_value(json_object_get(y, "seq")), 2);
    assert_null(json_object_get(y, "run_broker"));
    assert_null(json_object_get(y, "run_source"));
    json_decref(p);
    free(path);
}

/* A resolution (`dlqx journal --reconcile`) settles a pending intent, one without an outcome
 * or with outcome unknown; a refused outcome is not pending. */
static void test_resolution_and_refused(void **state)
{
    (void)state;
    char *path = tmp_path("resolved.jsonl");
    struct journal *j = open_ok(path);
    struct error err;
    error_clear(&err);
    struct journal_run a = {"run-r", "replay", "amqp://h/", "v1", "guest", "r.dlq", 0, false};
    ok(journal_write_run(j, &a, &err), &err);
    intent(j, "run-r", 1, "r1");
    intent(j, "run-r", 2, "r2");
    intent(j, "run-r", 3, "r3");
    intent(j, "run-r", 4, "r4");
    ok(journal_write_outcome(j, "run-r", 2, JR_UNKNOWN, "lost", &err), &err);
    ok(journal_write_outcome(j, "run-r", 4, JR_REFUSED, "403", &err), &err);
    struct journal_resolution r1 = {"run-r", 1, "done", false, -1, "by-1", "gone"};
    struct journal_resolution r2 = {"run-r", 2, "duplicate", true, 1, "by-1", "both"};
    ok(journal_write_resolution(j, &r1, &err), &err);
    ok(journal_write_resolution(j, &r2, &err), &err);
    struct journal_resolution bad = {"run-r", 0, "done", false, -1, NULL, NULL};
    assert_int_equal(journal_write_resolution(j, &bad, &err), ST_EINVAL);
    journal_close(j);
    struct bytes file = test_read_file(path);
    assert_non_null(strstr((const char *)file.data,
                           "\"kind\":\"resolution\",\"at\":\"2026-01-02T05:00:00.123Z\","
                           "\"run\":\"run-r\",\"seq\":2,\"result\":\"duplicate\","
                           "\"in_dlq\":true,\"at_target\":true,\"by\":\"by-1\",\"reason\":"
                           "\"both\"}\n"));
    assert_non_null(strstr((const char *)file.data, "\"seq\":1,\"result\":\"done\","
                                                    "\"in_dlq\":false,\"by\""));
    assert_non_null(strstr((const char *)file.data, "\"result\":\"refused\""));
    bytes_free(&file);
    json_t *p = NULL;
    ok(journal_pending(path, &p, &err), &err);
    assert_int_equal(json_array_size(p), 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(p, 0), "seq")), 3);
    assert_string_equal(json_string_value(json_object_get(json_array_get(p, 0), "run_vhost")),
                        "v1");
    json_decref(p);
    free(path);
}

static void test_torn_tail(void **state)
{
    char *path = tmp_path("torn/journal.jsonl");
    struct journal *j = open_ok(path);
    write_sample(j);
    journal_close(j);
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    /* A crash in the middle of the last record. */
    assert_int_equal(truncate(path, sb.st_size - 10), 0);

    struct seen s = {json_array(), 0};
    struct journal_scan_report rep;
    struct error err;
    error_clear(&err);
    ok(journal_scan(path, keep, &s, &rep, &err), &err);
    assert_true(rep.torn_tail);
    assert_int_equal(rep.records, 6);
    assert_int_equal(rep.malformed, 0);
    assert_int_equal(json_array_size(s.records), 6);
    assert_string_equal(kind_at(s.records, 5), "outcome");
    json_decref(s.records);

    /* The next writer ends the torn line first; its record is whole. */
    j = open_ok(path);
    ok(journal_write_outcome(j, RUN, 2, JR_DONE, NULL, &err), &err);
    journal_close(j);
    s = (struct seen){json_array(), 0};
    ok(journal_scan(path, keep, &s, &rep, &err), &err);
    assert_false(rep.torn_tail);
    assert_int_equal(rep.malformed, 1); /* the torn fragment, now a line of its own */
    assert_int_equal(rep.first_malformed_line, 7);
    assert_int_equal(rep.records, 7);
    json_t *last = json_array_get(s.records, 6);
    assert_string_equal(json_string_value(json_object_get(last, "kind")), "outcome");
    assert_int_equal(json_integer_value(json_object_get(last, "seq")), 2);
    json_decref(s.records);
    json_t *p = NULL;
    ok(journal_pending(path, &p, &err), &err);
    assert_int_equal(json_array_size(p), 1); /* seq 3: its outcome is "unknown" */
    assert_int_equal(json_integer_value(json_object_get(json_array_get(p, 0), "seq")), 3);
    json_decref(p);
    free(path);
}

static void test_torn_tail_that_parses(void **state)
{
    char *path = tmp_path("torn-parses.jsonl");
    const char *rec = "{\"v\":1,\"kind\":\"run\",\"run\":\"x\"}\n";
    append_raw(path, rec, strlen(rec));
    append_raw(path, rec, strlen(rec) - 1); /* whole JSON, but no newline: not trusted */
    struct seen s = {json_array(), 0};
    struct journal_scan_report rep;
    struct error err;
    error_clear(&err);
    ok(journal_scan(path, keep, &s, &rep, &err), &err);
    assert_true(rep.torn_tail);
    assert_int_equal(rep.records, 1);
    assert_int_equal(json_array_size(s.records), 1);
    json_decref(s.records);
    free(path);
}

/* Another process crashes mid-write while this one has the journal open. */
static void test_torn_by_another_writer(void **state)
{
    char *path = tmp_path("torn-other.jsonl");
    struct journal *j = open_ok(path);
    struct error err;
    error_clear(&err);
    intent(j, "r", 1, "a");
    append_raw(path, "{\"v\":1,\"kind\":\"inte", 19);
    intent(j, "r", 2, "b");
    journal_close(j);
    struct seen s = {json_array(), 0};
    struct journal_scan_report rep;
    ok(journal_scan(path, keep, &s, &rep, &err), &err);
    assert_false(rep.torn_tail);
    assert_int_equal(rep.records, 2);
    assert_int_equal(rep.malformed, 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(s.records, 1), "seq")), 2);
    json_decref(s.records);
    free(path);
}

static void test_malformed_lines(void **state)
{
    char *path = tmp_path("malformed.jsonl");
    const char *text = "not json\n"
                       "[1]\n"
                       "{\"kind\":\"run\"}\n"
                       "\n"
                       "{\"v\":\"1\",\"kind\":\"run\"}\n"
                       "{\"v\":1,\"kind\":3}\n"
                       "{\"v\":1,\"kind\":\"run\",\"run\":\"ok\",\"future\":true}\r\n"
                       "  \n";
    append_raw(path, text, strlen(text));
    /* A line over the limit is skipped without being held whole. */
    size_t big = JOURNAL_MAX_LINE + 10;
    char *huge = xmalloc(big + 1);
    memset(huge, 'x', big);
    huge[big] = '\n';
    append_raw(path, huge, big + 1);
    free(huge);
    const char *after = "{\"v\":1,\"kind\":\"end\",\"run\":\"ok\"}\n";
    append_raw(path, after, strlen(after));

    struct seen s = {json_array(), 0};
    struct journal_scan_report rep;
    struct error err;
    error_clear(&err);
    ok(journal_scan(path, keep, &s, &rep, &err), &err);
    assert_int_equal(rep.malformed, 6);
    assert_int_equal(rep.first_malformed_line, 1);
    assert_int_equal(rep.records, 2);
    assert_int_equal(rep.lines, 10);
    assert_false(rep.torn_tail);
    assert_string_equal(kind_at(s.records, 0), "run");
    assert_string_equal(kind_at(s.records, 1), "end");
    json_decref(s.records);
    free(path);
}

static void test_ids_of_any_bytes(void **state)
{
    char *path = tmp_path("ids.jsonl");
    struct journal *j = open_ok(path);
    struct error err;
    error_clear(&err);
    const char old_id[] = {'\xff', '\0', 'a', '\xc3'};
    const char new_id[] = "caf\xc3\xa9";
    const char nul_id[] = {'a', '\0', 'b'};
    struct journal_intent in = {"r",      1,      "reissue", "q.dlq",       "ex",
                                "rk\x80", old_id, new_id,    sizeof old_id, strlen(new_id),
                                NULL,     NULL,   NULL,      NULL,          0,
                                0};
    ok(journal_write_intent(j, &in, &err), &err);
    in.seq = 2;
    in.old_id = nul_id;
    in.old_id_len = sizeof nul_id;
    in.exchange = NULL; /* a delete: no target */
    in.new_id = NULL;
    in.op = "delete";
    ok(journal_write_intent(j, &in, &err), &err);
    journal_close(j);

    struct bytes file = test_read_file(path);
    assert_true(utf8_valid(file.data, file.len));
    assert_non_null(strstr((const char *)file.data, "\"old_id\":{\"base64\":\"/wBhww==\"}"));
    assert_non_null(strstr((const char *)file.data, "\"new_id\":\"caf\xc3\xa9\""));
    assert_non_null(strstr((const char *)file.data, "\"routing_key\":{\"base64\":\"cmuA\"}"));
    bytes_free(&file);

    json_t *p = NULL;
    ok(journal_pending(path, &p, &err), &err);
    assert_int_equal(json_array_size(p), 2);
    struct bytes b = {0, NULL};
    ok(bytes_from_json(json_object_get(json_array_get(p, 0), "old_id"), "old_id", &b, &err), &err);
    assert_int_equal(b.len, sizeof old_id);
    assert_memory_equal(b.data, old_id, sizeof old_id);
    bytes_free(&b);
    ok(bytes_from_json(json_object_get(json_array_get(p, 0), "new_id"), "new_id", &b, &err), &err);
    assert_true(bytes_eq_cstr(&b, new_id));
    bytes_free(&b);
    json_t *del = json_array_get(p, 1);
    ok(bytes_from_json(json_object_get(del, "old_id"), "old_id", &b, &err), &err);
    assert_int_equal(b.len, sizeof nul_id);
    assert_memory_equal(b.data, nul_id, sizeof nul_id);
    bytes_free(&b);
    assert_null(json_object_get(del, "target"));
    assert_null(json_object_get(del, "new_id"));
    json_decref(p);
    free(path);
}

static void test_diff_too_long_is_dropped(void **state)
{
    char *path = tmp_path("big-diff.jsonl");
    struct journal *j = open_ok(path);
    char *text = xmalloc(JOURNAL_MAX_LINE + 1);
    memset(text, 'y', JOURNAL_MAX_LINE);
    text[JOURNAL_MAX_LINE] = '\0';
    json_t *diff = json_pack("[{s:s}]", "new", text);
    free(text);
    struct journal_intent in = {"r", 1, "replay", "q",  "",   "q",  "a", "a",
                                1,   1, NULL,     NULL, diff, NULL, 0,   0};
    struct error err;
    error_clear(&err);
    ok(journal_write_intent(j, &in, &err), &err);
    json_decref(diff);
    journal_close(j);
    json_t *p = NULL;
    ok(journal_pending(path, &p, &err), &err);
    assert_int_equal(json_array_size(p), 1);
    assert_null(json_object_get(json_array_get(p, 0), "diff"));
    assert_true(json_is_true(json_object_get(json_array_get(p, 0), "diff_omitted")));
    json_decref(p);
    free(path);
}

static json_t *only_record(const char *path)
{
    struct seen sn = {json_array(), 0};
    struct journal_scan_report rep;
    struct error err;
    error_clear(&err);
    ok(journal_scan(path, keep, &sn, &rep, &err), &err);
    assert_int_equal(json_array_size(sn.records), 1);
    json_t *r = json_incref(json_array_get(sn.records, 0));
    json_decref(sn.records);
    json_object_del(r, "at");
    return r;
}

/* An encoded diff (diff_text) writes the very record the tree would, and too long a one is
 * dropped the same way. */
static void test_diff_text(void **state)
{
    json_t *diff =
        json_pack("[{s:s,s:s,s:s,s:s,s:s},{s:s,s:s,s:n,s:n,s:s}]", "section", "header", "op",
                  "changed", "name", "x-acemq-attempt", "old", "long:5", "new", "long:1", "section",
                  "header", "op", "added", "name", "old", "new", "acemq-replay-count");
    char *text = json_dumps(diff, JSON_COMPACT | JSON_PRESERVE_ORDER);
    char *p1 = tmp_path("dt/tree.jsonl"), *p2 = tmp_path("dt/text.jsonl");
    struct journal_intent in = {"r", 1, "replay", "q",  "",   "q",  "a", "a",
                                1,   1, "aa",     "bb", diff, NULL, 0,   0};
    struct error err;
    error_clear(&err);
    struct journal *j = open_ok(p1);
    ok(journal_write_intent(j, &in, &err), &err);
    journal_close(j);
    in.diff = NULL;
    in.diff_text = text;
    in.diff_text_len = strlen(text);
    j = open_ok(p2);
    ok(journal_write_intent(j, &in, &err), &err);
    journal_close(j);
    json_t *a = only_record(p1), *b = only_record(p2);
    assert_true(json_equal(a, b));
    assert_true(json_equal(json_object_get(b, "diff"), diff));
    json_decref(a);
    json_decref(b);
    free(text);
    json_decref(diff);

    /* Too long: the record without it, marked. */
    char *p3 = tmp_path("dt/long.jsonl");
    size_t n = JOURNAL_MAX_LINE;
    char *big = xmalloc(n + 1);
    memset(big, '1', n);
    big[0] = '[';
    big[n - 1] = ']';
    big[n] = '\0';
    in.diff_text = big;
    in.diff_text_len = n;
    j = open_ok(p3);
    ok(journal_write_intent(j, &in, &err), &err);
    journal_close(j);
    json_t *c = only_record(p3);
    assert_null(json_object_get(c, "diff"));
    assert_true(json_is_true(json_object_get(c, "diff_omitted")));
    json_decref(c);
    free(big);
    free(p1);
    free(p2);
    free(p3);
}

static void test_default_path(void **state)
{
    char *saved_home = getenv("HOME") ? xstrdup(getenv("HOME")) : NULL;
    setenv("DLQX_JOURNAL", "/srv/dlqx/j.jsonl", 1);
    setenv("XDG_STATE_HOME", "/x/state", 1);
    char *p = journal_default_path();
    assert_string_equal(p, "/srv/dlqx/j.jsonl");
    free(p);
    unsetenv("DLQX_JOURNAL");
    p = journal_default_path();
    assert_string_equal(p, "/x/state/dlqx/journal.jsonl");
    free(p);
    setenv("DLQX_JOURNAL", "", 1);                 /* empty: not set */
    setenv("XDG_STATE_HOME", "relative/state", 1); /* relative: ignored (XDG spec) */
    setenv("HOME", "/home/ops", 1);
    p = journal_default_path();
    assert_string_equal(p, "/home/ops/.local/state/dlqx/journal.jsonl");
    free(p);
    unsetenv("XDG_STATE_HOME");
    p = journal_default_path();
    assert_string_equal(p, "/home/ops/.local/state/dlqx/journal.jsonl");
    free(p);
    unsetenv("DLQX_JOURNAL");
    if (saved_home)
        setenv("HOME", saved_home, 1);
    free(saved_home);
}

static void test_run_ids(void **state)
{
    char a[37], b[37];
    journal_new_run_id(a);
    journal_new_run_id(b);
    assert_int_equal(strlen(a), 36);
    assert_string_not_equal(a, b);
    assert_int_equal(a[14], '4');
    assert_int_equal(a[8], '-');
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_and_read_back),
        cmocka_unit_test(test_pending_across_runs),
        cmocka_unit_test(test_resolution_and_refused),
        cmocka_unit_test(test_torn_tail),
        cmocka_unit_test(test_torn_tail_that_parses),
        cmocka_unit_test(test_torn_by_another_writer),
        cmocka_unit_test(test_malformed_lines),
        cmocka_unit_test(test_ids_of_any_bytes),
        cmocka_unit_test(test_diff_too_long_is_dropped),
        cmocka_unit_test(test_diff_text),
        cmocka_unit_test(test_default_path),
        cmocka_unit_test(test_run_ids),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
