/*
 * replay_plan: the multiset of (id, body digest) a replay takes — the same message twice is
 * taken twice and no more, the same id with another body is not the message chosen — and the
 * tags (the explorer's store indices) given back in the order they were added, so that each
 * outcome names the row it belongs to.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "message.h"
#include "replay.h"
#include "util.h"

#define NOW 1780000000123LL

static struct message *msg(const char *id, const char *body)
{
    struct message *m = xcalloc(1, sizeof *m);
    message_init(m);
    m->queue = bytes_from_cstr("orders.dlq");
    m->exchange = bytes_from_cstr("");
    m->routing_key = bytes_from_cstr("orders");
    props_set_string(&m->props, PROP_message_id, id, strlen(id));
    props_set_string(&m->props, PROP_content_type, "text/plain", 10);
    m->body = bytes_from_cstr(body);
    m->fetched_at_ms = NOW - 1000;
    return m;
}

static void msg_free(struct message *m)
{
    message_free(m);
    free(m);
}

static void add(struct replay_plan *p, const struct message *m, size_t tag)
{
    struct decoded d;
    decode_message(m, NOW, &d);
    replay_plan_add_tagged(p, m, &d, tag);
    decoded_free(&d);
}

static bool take(struct replay_plan *p, const struct message *m, size_t *tag)
{
    struct decoded d;
    decode_message(m, NOW, &d);
    bool got = replay_plan_take_tagged(p, m, &d, tag);
    decoded_free(&d);
    return got;
}

static void test_tags_in_order(void **state)
{
    struct replay_plan *p = replay_plan_new();
    struct message *a = msg("id-a", "one"), *b = msg("id-b", "two");
    add(p, a, 7);
    add(p, b, 3);
    add(p, a, 42); /* the same message twice: two dead letters, two rows */
    assert_int_equal(replay_plan_size(p), 3);
    size_t tag = 0;
    assert_true(take(p, a, &tag));
    assert_int_equal(tag, 7);
    assert_true(take(p, b, &tag));
    assert_int_equal(tag, 3);
    assert_true(take(p, a, &tag));
    assert_int_equal(tag, 42);
    assert_false(take(p, a, &tag)); /* both taken: a third copy is not the user's choice */
    assert_false(take(p, b, &tag));
    assert_int_equal(replay_plan_size(p), 0);
    msg_free(a);
    msg_free(b);
    replay_plan_free(p);
}

static void test_same_id_other_body(void **state)
{
    struct replay_plan *p = replay_plan_new();
    struct message *a = msg("id-a", "one"), *a2 = msg("id-a", "one, edited by someone else");
    add(p, a, 1);
    size_t tag = 99;
    assert_false(take(p, a2, &tag));
    assert_int_equal(tag, 99); /* untouched when nothing is taken */
    assert_true(take(p, a, &tag));
    assert_int_equal(tag, 1);
    msg_free(a);
    msg_free(a2);
    replay_plan_free(p);
}

static void test_untagged_and_many(void **state)
{
    /* The untagged calls (the CLI's) share the multiset: a tag taken after them is SIZE_MAX
     * for an untagged add. Many entries force the table to grow while tags stay right. */
    struct replay_plan *p = replay_plan_new();
    struct message *u = msg("untagged", "x");
    struct decoded d;
    decode_message(u, NOW, &d);
    replay_plan_add_message(p, u, &d);
    decoded_free(&d);
    enum { N = 5000 };
    struct message **ms = xcalloc(N, sizeof *ms);
    for (size_t i = 0; i < N; i++) {
        char id[32], body[32];
        snprintf(id, sizeof id, "id-%zu", i);
        snprintf(body, sizeof body, "body %zu", i % 7);
        ms[i] = msg(id, body);
        add(p, ms[i], i * 10);
    }
    assert_int_equal(replay_plan_size(p), N + 1);
    size_t tag = 0;
    assert_true(take(p, u, &tag));
    assert_int_equal(tag, SIZE_MAX);
    for (size_t i = N; i-- > 0;) {
        assert_true(take(p, ms[i], &tag));
        assert_int_equal(tag, i * 10);
        msg_free(ms[i]);
    }
    assert_int_equal(replay_plan_size(p), 0);
    free(ms);
    msg_free(u);
    replay_plan_free(p);
}

/* --ramp: RATE[:COPIES],…; a bare RATE is ten seconds' worth. */
static void test_ramp_parse(void **state)
{
    (void)state;
    struct replay_ramp_step st[REPLAY_MAX_RAMP];
    size_t n = 0;
    struct error err;
    assert_int_equal(replay_ramp_parse("1,10,100", st, REPLAY_MAX_RAMP, &n, &err), ST_OK);
    assert_int_equal(n, 3);
    assert_true(st[0].rate == 1 && st[0].copies == 10);
    assert_true(st[1].rate == 10 && st[1].copies == 100);
    assert_true(st[2].rate == 100 && st[2].copies == 1000);
    assert_int_equal(replay_ramp_parse("0.5:2,20:40", st, REPLAY_MAX_RAMP, &n, &err), ST_OK);
    assert_int_equal(n, 2);
    assert_true(st[0].rate == 0.5 && st[0].copies == 2);
    assert_true(st[1].rate == 20 && st[1].copies == 40);
    assert_int_equal(replay_ramp_parse("0.01", st, REPLAY_MAX_RAMP, &n, &err), ST_OK);
    assert_true(n == 1 && st[0].copies == 1);
    const char *bad[] = {"",
                         "0",
                         "-1",
                         "1,",
                         ",1",
                         "1:0",
                         "1:2.5",
                         "1:x",
                         "x",
                         "1;2",
                         "1 ,2",
                         "nan",
                         "inf",
                         "1:-3",
                         "2000000",
                         "1,2,3,4,5,6,7,8,9,10,11,"
                         "12,13,14,15,16,17"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        error_clear(&err);
        if (replay_ramp_parse(bad[i], st, REPLAY_MAX_RAMP, &n, &err) != ST_EINVAL)
            fail_msg("--ramp %s was accepted", bad[i]);
        assert_non_null(strstr(err.msg, "--ramp"));
    }
}

/* The rate each copy goes out at, and the least time a pass takes. */
static void test_pace(void **state)
{
    (void)state;
    struct replay_ramp_step st[2] = {{2, 3}, {10, 5}};
    struct replay_opts o;
    memset(&o, 0, sizeof o);
    uint64_t left = 0;
    assert_true(replay_pace_rate(&o, 0, &left) == 0);
    assert_true(left == UINT64_MAX);
    o.rate = 50;
    assert_true(replay_pace_rate(&o, 7, NULL) == 50);
    o.ramp = st;
    o.n_ramp = 2;
    assert_true(replay_pace_rate(&o, 0, &left) == 2 && left == 3);
    assert_true(replay_pace_rate(&o, 2, &left) == 2 && left == 1);
    assert_true(replay_pace_rate(&o, 3, &left) == 10 && left == 5);
    assert_true(replay_pace_rate(&o, 8, &left) == 50 && left == UINT64_MAX);
    /* 3 at 2/s, 5 at 10/s, 50 at 50/s */
    double t = replay_pace_seconds(&o, 58);
    assert_true(t > 1.5 + 0.5 + 1.0 - 1e-9 && t < 3.0 + 1e-9);
    assert_true(replay_pace_seconds(&o, 2) == 1.0);
    o.rate = 0;
    assert_true(replay_pace_seconds(&o, 1000) == 2.0);
    assert_int_equal(replay_pace_burst(5), 1);
    assert_int_equal(replay_pace_burst(1000), 10);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tags_in_order),
        cmocka_unit_test(test_same_id_other_body),
        cmocka_unit_test(test_untagged_and_many),
        cmocka_unit_test(test_ramp_parse),
        cmocka_unit_test(test_pace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
