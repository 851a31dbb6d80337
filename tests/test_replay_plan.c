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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tags_in_order),
        cmocka_unit_test(test_same_id_other_body),
        cmocka_unit_test(test_untagged_and_many),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
