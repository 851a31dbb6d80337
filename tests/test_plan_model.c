/*
 * The plan's model (ui/plan_model.c): the lines a person reads before anything is sent —
 * counts, targets and whether they route, the diff of the copy shown, the edits, the pace —
 * and after a pass; with no terminal and no broker (without the route hook the routes are
 * "not checked"). Bytes from a message reach the lines only as visible escapes.
 */
#include "ui_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_model.h"
#include "testutil.h"

static const struct uit_msg three[] = {
    {"a-1", "order.placed", "orders.dlq", "exhausted 5 attempts: boom", "c-1", NULL, 5, 0, 0},
    {"a-2\x1b[2J", "order.placed", "orders.dlq", "exhausted 2 attempts: boom", NULL, NULL, 2, 0, 0},
    {"b-1", "payment.charge", "audit.dead", "declined", NULL, NULL, 1, 0, 0},
};

static const size_t both[2] = {0, 1};

/* The line that starts with prefix, or fails. */
static const struct pline *line_of(const struct plan_state *s, const char *prefix)
{
    for (size_t i = 0; i < s->n_lines; i++)
        if (strncmp(s->lines[i].text, prefix, strlen(prefix)) == 0)
            return &s->lines[i];
    for (size_t i = 0; i < s->n_lines; i++)
        print_error("  %s\n", s->lines[i].text);
    fail_msg("no line starts with \"%s\"", prefix);
    abort(); /* not reached: fail_msg ends the test (and the compiler knows no NULL comes back) */
}

static bool has_line(const struct plan_state *s, const char *prefix)
{
    for (size_t i = 0; i < s->n_lines; i++)
        if (strncmp(s->lines[i].text, prefix, strlen(prefix)) == 0)
            return true;
    return false;
}

static struct plan_state *built(struct app *a, enum plan_op op, const char *queue,
                                const size_t *entries, size_t n)
{
    struct plan_state *s =
        plan_model_new(op, queue, entries, n, "this message", both, 2, "the 2 shown");
    plan_model_build(s, a->store, 0, NULL, NULL);
    return s;
}

static void test_replay_of_one(void **state)
{
    (void)state;
    struct app *a = uit_app(three, 3);
    struct plan_state *s = built(a, PLAN_REPLAY, "orders.dlq", both, 1);
    assert_string_equal(s->lines[0].text, "replay this message of orders.dlq: 1 to send, 0 kept");
    assert_int_equal(s->lines[0].attr, UA_TITLE);
    assert_int_equal(s->sendable, 1);
    assert_int_equal(s->kept, 0);
    /* AceMQ's replay goes back to the DLQ's source queue; nobody asked whether it routes. */
    assert_int_equal(line_of(s, "       1 → queue orders")->attr, UA_WARN);
    line_of(s, "         not checked");
    line_of(s, "  pace: 100 copies/s");
    assert_int_equal(line_of(s, "copy 1 of 1: a-1")->attr, UA_HEADER);
    line_of(s, "  AceMQ replay: same id");
    /* The diff: the attempt back to 1, the error cleared. */
    const struct pline *attempt = line_of(s, "~ x-acemq-attempt");
    assert_int_equal(attempt->attr, UA_WARN);
    assert_non_null(strstr(attempt->text, "int32:5"));
    assert_non_null(strstr(attempt->text, "int32:1"));
    assert_int_equal(line_of(s, "- x-acemq-error")->attr, UA_ERROR);
    assert_int_equal(line_of(s, "+ acemq-replay-count")->attr, UA_GOOD);
    assert_false(has_line(s, "  edits:"));
    assert_false(has_line(s, "  canary:"));
    plan_model_free(s);
    uit_free(a);
}

static void routes_ok(struct plan_state *s, void *ctx)
{
    int *asked = ctx;
    for (size_t i = 0; i < s->n_targets; i++) {
        snprintf(s->targets[i].route, sizeof s->targets[i].route, "routes to queue %s",
                 s->targets[i].routing_key);
        (*asked)++;
    }
}

static void test_routes_asked_of_the_hook(void **state)
{
    (void)state;
    struct app *a = uit_app(three, 3);
    struct plan_state *s =
        plan_model_new(PLAN_REPLAY, "orders.dlq", both, 2, "the 2 shown", NULL, 0, NULL);
    int asked = 0;
    plan_model_build(s, a->store, 0, routes_ok, &asked);
    assert_int_equal(asked, 1); /* one target for both */
    assert_int_equal(line_of(s, "       2 → queue orders")->attr, UA_GOOD);
    line_of(s, "         routes to queue orders");
    plan_model_free(s);
    uit_free(a);
}

/* An id with an escape sequence: shown as \e, never sent to the terminal as it is. */
static void test_hostile_bytes_are_shown_safe(void **state)
{
    (void)state;
    struct app *a = uit_app(three, 3);
    struct plan_state *s = built(a, PLAN_REPLAY, "orders.dlq", both, 1);
    assert_true(plan_model_swap_scope(s));
    assert_int_equal(s->n, 2);
    assert_string_equal(s->scope, "the 2 shown");
    assert_int_equal(s->at, 0);
    s->at = 1;
    plan_model_build(s, a->store, 0, NULL, NULL);
    line_of(s, "replay the 2 shown of orders.dlq: 2 to send, 0 kept");
    line_of(s, "copy 2 of 2: a-2\\e[2J");
    for (size_t i = 0; i < s->n_lines; i++)
        assert_null(strchr(s->lines[i].text, '\x1b'));
    /* And back. */
    assert_true(plan_model_swap_scope(s));
    assert_int_equal(s->n, 1);
    plan_model_free(s);
    uit_free(a);
}

static void test_delete_and_move(void **state)
{
    (void)state;
    struct app *a = uit_app(three, 3);
    struct plan_state *s = built(a, PLAN_DELETE, "orders.dlq", both, 2);
    assert_string_equal(s->lines[0].text, "delete this message of orders.dlq: 2 to delete, 0 kept");
    assert_int_equal(s->n_targets, 0);
    assert_false(has_line(s, "  pace:")); /* a delete sends nothing */
    assert_false(plan_model_toggle_reissue(s));
    plan_model_free(s);
    /* A move goes to the parking queue beside the DLQ. */
    s = built(a, PLAN_MOVE, "orders.dlq", both, 1);
    line_of(s, "move this message of orders.dlq: 1 to send, 0 kept");
    line_of(s, "       1 → queue orders.parked");
    line_of(s, "  edits:   to queue orders.parked");
    plan_model_free(s);
    size_t b = 2;
    s = built(a, PLAN_MOVE, "audit.dead", &b, 1);
    line_of(s, "       1 → queue audit.dead.parked");
    plan_model_free(s);
    uit_free(a);
}

static void test_edits(void **state)
{
    (void)state;
    struct app *a = uit_app(three, 3);
    struct plan_state *s = built(a, PLAN_REPLAY, "orders.dlq", both, 1);
    struct error err;
    error_clear(&err);
    assert_true(plan_model_set_changes(s, "type=order.fixed header.tenant=acme", &err));
    assert_int_equal(s->n_changes, 2);
    plan_model_build(s, a->store, 0, NULL, NULL);
    assert_int_equal(line_of(s, "  edits: type=order.fixed header.tenant=acme")->attr, UA_ACCENT);
    assert_non_null(strstr(line_of(s, "~ x-acemq-type")->text, "order.fixed"));
    line_of(s, "+ tenant");
    /* A word that is no change: none is kept, and it says why. */
    assert_false(plan_model_set_changes(s, "type=x nonsense", &err));
    assert_true(err.msg[0] != '\0');
    assert_int_equal(s->n_changes, 0);
    assert_null(s->with_text);
    /* Another target. */
    assert_true(plan_model_set_target(s, "amq.topic:orders.retry", &err));
    plan_model_build(s, a->store, 0, NULL, NULL);
    line_of(s, "       1 → exchange amq.topic key orders.retry");
    line_of(s, "  edits:   to exchange amq.topic key orders.retry");
    assert_false(plan_model_set_target(s, "no-colon", &err));
    assert_non_null(strstr(err.msg, "EXCHANGE:ROUTING_KEY"));
    assert_null(s->to_routing_key); /* the dialect's own again */
    /* Re-issue instead, and a canary. */
    assert_true(plan_model_toggle_reissue(s));
    assert_int_equal(s->mode, RESTAMP_REISSUE);
    s->canary = true;
    plan_model_build(s, a->store, 0, NULL, NULL);
    line_of(s, "re-issue this message of orders.dlq: 1 to send, 0 kept");
    line_of(s, "  canary: one copy first");
    assert_true(plan_model_toggle_reissue(s));
    assert_int_equal(s->op, PLAN_REPLAY);
    plan_model_free(s);
    uit_free(a);
}

static void test_summary_of_a_pass(void **state)
{
    (void)state;
    struct app *a = uit_app(three, 3);
    struct plan_state *s = built(a, PLAN_REPLAY, "orders.dlq", both, 2);
    s->ran = true;
    snprintf(s->rep.detail, sizeof s->rep.detail, "2 replayed, 1 unknown");
    snprintf(s->rep.run_id, sizeof s->rep.run_id, "run-1");
    s->rep.done = 2;
    s->rep.unknown = 1;
    s->rep.n_reasons = 1;
    s->rep.reasons[0].n = 1;
    snprintf(s->rep.reasons[0].text, sizeof s->rep.reasons[0].text, "no confirm\x1b]0;x\x07");
    plan_model_summary(s, 2);
    assert_string_equal(s->lines[0].text,
                        "replay this message of orders.dlq: 2 replayed, 1 unknown");
    assert_int_equal(line_of(s, "  done 2   kept 0   unknown 1   not sent 0")->attr, UA_WARN);
    line_of(s, "  1 × no confirm\\e]0;x\\x07");
    line_of(s, "  possible duplicates are named in the journal");
    line_of(s, "  journal run run-1");
    line_of(s, "  the 2 dead letters taken out are no longer listed");
    assert_false(has_line(s, "copy 1 of")); /* the plan's lines are gone */
    plan_model_summary(s, 1);
    line_of(s, "  the dead letter taken out is no longer listed");
    assert_string_equal(plan_op_name(PLAN_REISSUE), "re-issue");
    plan_model_free(s);
    uit_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replay_of_one),
        cmocka_unit_test(test_routes_asked_of_the_hook),
        cmocka_unit_test(test_hostile_bytes_are_shown_safe),
        cmocka_unit_test(test_delete_and_move),
        cmocka_unit_test(test_edits),
        cmocka_unit_test(test_summary_of_a_pass),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
