/*
 * Replay against a real RabbitMQ node: a replayed AceMQ dead letter arrives on its source
 * queue with exactly the headers the AceMQ libraries write, a BabelQueue one with exactly the
 * body their redrive writes, and the DLQ loses exactly those messages and keeps the rest in
 * order. An unroutable target, a full target (reject-publish), a vanished connection and a
 * canary that comes back each keep the dead letter and say why. Move and delete take the same
 * path. The pacing (--rate after a canary, a ramp's steps) is measured where the copies
 * arrive. Needs the test broker (tests/broker/run.sh starts one); fails without it. The
 * helpers are in replay_testutil.c.
 */
#include "../testutil.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "acemq.h"
#include "brokerutil.h"
#include "replay_testutil.h"
#include "decode.h"
#include "journal.h"
#include "replay.h"
#include "restamp.h"
#include "sha256.h"
#include "util.h"

/* ---- the cases ---------------------------------------------------------------------------- */

static void t_acemq_exact_headers(void **state)
{
    (void)state;
    struct conn *c = bt_connect();
    fresh(c, "r1.orders");
    fresh(c, "r1.orders.dlq");
    struct message dl[4] = {plain("p-1", "one"), acemq_dead("ord-1", "{\"id\":\"o-1\"}"),
                            plain("p-2", "two"), acemq_dead("ord-2", "{\"id\":\"o-2\"}")};
    bt_publish(c, "", "r1.orders.dlq", dl, 4);
    struct sel s = {0};
    s.plan = replay_plan_new();
    s.dlq = "r1.orders.dlq";
    s.mode = RESTAMP_REPLAY;
    plan_add_msg(s.plan, &dl[1]);
    plan_add_msg(s.plan, &dl[3]);
    struct replay_report r = run_plan(c, &s, 0, 0);
    assert_int_equal(r.done, 2);
    assert_int_equal(r.kept, 0);
    assert_int_equal(r.unknown, 0);
    assert_int_equal(replay_plan_size(s.plan), 0);
    /* The rest of the DLQ, in order. */
    struct message rest[2] = {dl[0], dl[2]};
    expect_queue(c, "r1.orders.dlq", rest, 2);
    /* At the source: the headers AceMQ's replay writes, in to_headers order. */
    struct msglist got = bt_read_all(c, "r1.orders", 2);
    assert_int_equal(got.n, 2);
    for (size_t i = 0; i < 2; i++) {
        const struct message *m = &got.m[i];
        const char *id = i == 0 ? "ord-1" : "ord-2";
        struct htable *want = htable_new();
        htable_add(want, "x-acemq-id", hval_cstring(id));
        htable_add(want, "x-acemq-type", hval_cstring("order.placed"));
        htable_add(want, "x-acemq-version", hval_int(HV_I32, 2));
        htable_add(want, "x-acemq-correlation", hval_cstring("corr-1"));
        htable_add(want, "x-acemq-attempt", hval_int(HV_I32, 1));
        htable_add(want, "x-acemq-first-seen", hval_int(HV_I64, 1767323045678));
        htable_add(want, "x-acemq-causation", hval_cstring("cause-0"));
        htable_add(want, "x-acemq-origin", hval_cstring("orders@host-7"));
        htable_add(want, "x-acemq-future", hval_cstring("kept as it is"));
        htable_add(want, "tenant", hval_cstring("acme"));
        htable_add(want, "acemq-replay-count", hval_int(HV_I32, 3));
        htable_add(want, "acemq-replayed-from", hval_cstring("r1.orders.dlq"));
        htable_add(want, "acemq-replayed-at", hval_cstring("2026-02-03T04:05:06Z"));
        /* Names and values, whatever the order the library's map gives. */
        for (size_t k = 0; k < want->n; k++) {
            const char *key = (const char *)want->e[k].key.data;
            const struct hval *g = htable_get(m->headers, key);
            if (!g)
                fail_msg("%s: header %s is missing", id, key);
            if (!hval_equal(g, &want->e[k].val))
                fail_msg("%s: header %s differs (kind %s)", id, key, hkind_name(g->kind));
        }
        assert_int_equal(m->headers->n, want->n);
        assert_null(htable_get(m->headers, "x-acemq-error"));
        assert_null(htable_get(m->headers, "x-death"));
        /* The reserved headers first, as Envelope#to_headers writes them. */
        assert_true(bytes_eq_cstr(&m->headers->e[0].key, "x-acemq-id"));
        const struct bytes *mid = props_string(&m->props, PROP_message_id);
        assert_non_null(mid);
        assert_true(bytes_eq_cstr(mid, id));
        assert_true(bytes_eq_cstr(props_string(&m->props, PROP_content_type), "application/json"));
        assert_int_equal(m->props.delivery_mode, 2);
        assert_true(bytes_eq(&m->body, &dl[i == 0 ? 1 : 3].body));
        htable_free(want);
    }
    msglist_free(&got);
    replay_plan_free(s.plan);
    for (size_t i = 0; i < 4; i++)
        message_free(&dl[i]);
    conn_close(c);
}

static void t_babelqueue_exact_body(void **state)
{
    (void)state;
    struct conn *c = bt_connect();
    fresh(c, "t.ship");
    fresh(c, "t.ship.dlq");
    struct message dl[3] = {plain("p-1", "one"), bq_dead(), plain("p-2", "two")};
    bt_publish(c, "", "t.ship.dlq", dl, 3);
    struct sel s = {0};
    s.plan = replay_plan_new();
    s.dlq = "t.ship.dlq";
    s.mode = RESTAMP_REPLAY;
    plan_add_msg(s.plan, &dl[1]);
    struct replay_report r = run_plan(c, &s, 0, 0);
    assert_int_equal(r.done, 1);
    struct message rest[2] = {dl[0], dl[2]};
    expect_queue(c, "t.ship.dlq", rest, 2);
    struct msglist got = bt_read_all(c, "t.ship", 1);
    assert_int_equal(got.n, 1);
    const struct message *m = &got.m[0];
    if (m->body.len != strlen(BQ_REPLAYED) || memcmp(m->body.data, BQ_REPLAYED, m->body.len))
        fail_msg("the replayed body is not the redrive's:\n%.*s", (int)m->body.len,
                 (const char *)m->body.data);
    const struct hval *att = htable_get(m->headers, "x-attempts");
    assert_non_null(att);
    int64_t v = -1;
    assert_true(hval_as_int64_lenient(att, &v));
    assert_int_equal(v, 0);
    assert_true(bytes_eq_cstr(props_string(&m->props, PROP_message_id), "bq-1"));
    msglist_free(&got);
    replay_plan_free(s.plan);
    for (size_t i = 0; i < 3; i++)
        message_free(&dl[i]);
    conn_close(c);
}

/* A target nothing is bound to, and a target that is full: the dead letter stays. */
static void t_unroutable_and_full(void **state)
{
    (void)state;
    struct conn *c = bt_connect();
    fresh(c, "r3.dlq");
    struct htable *args = htable_new();
    htable_add(args, "x-max-length", hval_int(HV_I32, 1));
    htable_add(args, "x-overflow", hval_cstring("reject-publish"));
    bt_queue_fresh(c, "r3.full", args);
    htable_free(args);
    struct message filler = plain("f", "filler");
    bt_publish(c, "", "r3.full", &filler, 1);
    struct message dl[3] = {plain("a", "A"), plain("b", "B"), plain("c", "C")};
    bt_publish(c, "", "r3.dlq", dl, 3);

    struct sel s = sel_for("r3.dlq", "", "r3.nowhere");
    plan_add_msg(s.plan, &dl[1]);
    struct replay_report r = run_plan(c, &s, 0, 0);
    assert_int_equal(r.done, 0);
    assert_int_equal(r.kept, 1);
    assert_non_null(strstr(s.last_reason, "unroutable"));
    expect_queue(c, "r3.dlq", dl, 3);

    struct sel f = sel_for("r3.dlq", "", "r3.full");
    plan_add_msg(f.plan, &dl[0]);
    plan_add_msg(f.plan, &dl[2]);
    r = run_plan(c, &f, 0, 0);
    assert_int_equal(r.done, 0);
    assert_int_equal(r.kept, 2);
    assert_non_null(strstr(f.last_reason, "full"));
    expect_queue(c, "r3.dlq", dl, 3);
    assert_int_equal(bt_depth(c, "r3.full"), 1);

    /* An exchange that does not exist: checked before publishing, kept. */
    struct sel x = sel_for("r3.dlq", "r3.no-such-exchange", "k");
    plan_add_msg(x.plan, &dl[0]);
    r = run_plan(c, &x, 0, 0);
    assert_int_equal(r.kept, 1);
    if (!strstr(x.last_reason, "does not exist"))
        fail_msg("reason: %s", x.last_reason);
    expect_queue(c, "r3.dlq", dl, 3);

    replay_plan_free(s.plan);
    replay_plan_free(f.plan);
    replay_plan_free(x.plan);
    message_free(&filler);
    for (size_t i = 0; i < 3; i++)
        message_free(&dl[i]);
    conn_close(c);
}

/* The connection vanishes in the middle: nothing is lost; every possible duplicate is named. */
static void t_vanished_connection(void **state)
{
    (void)state;
    struct conn *admin = bt_connect();
    fresh(admin, "r4.src");
    fresh(admin, "r4.dlq");
    enum { N = 3000 };
    struct message *dl = calloc(N, sizeof *dl);
    for (size_t i = 0; i < N; i++) {
        char id[32], body[64];
        snprintf(id, sizeof id, "v-%04zu", i);
        snprintf(body, sizeof body, "body %zu", i);
        dl[i] = plain(id, body);
    }
    bt_publish(admin, "", "r4.dlq", dl, N);
    struct conn *c = bt_connect();
    struct sel s = sel_for("r4.dlq", "", "r4.src");
    s.kill_after_done = 1;
    s.conn = c;
    for (size_t i = 0; i < N; i++)
        plan_add_msg(s.plan, &dl[i]);
    struct replay_report r = run_plan(c, &s, 8, 0);
    assert_int_equal(r.end, RE_CONNECTION_LOST);
    assert_true(r.done >= 1);
    assert_true(r.done < N);
    conn_close(c);
    /* Every message is in the DLQ or at the source; duplicates only among the unknown. */
    uint32_t in_dlq = bt_depth_settled(admin, "r4.dlq", (uint32_t)(N - r.done));
    uint32_t at_src = bt_depth(admin, "r4.src");
    assert_true(in_dlq + at_src >= N);
    assert_true(in_dlq + at_src <= N + r.unknown);
    assert_true(in_dlq >= N - r.done - r.unknown);
    /* The DLQ's remainder is still in order (the broker put back what dlqx held). */
    struct msglist rest = bt_read_all(admin, "r4.dlq", in_dlq);
    for (size_t i = 1; i < rest.n; i++) {
        const struct bytes *a = props_string(&rest.m[i - 1].props, PROP_message_id);
        const struct bytes *b = props_string(&rest.m[i].props, PROP_message_id);
        assert_true(a && b);
        size_t n = a->len < b->len ? a->len : b->len;
        assert_true(memcmp(a->data, b->data, n) < 0);
    }
    msglist_free(&rest);
    replay_plan_free(s.plan);
    for (size_t i = 0; i < N; i++)
        message_free(&dl[i]);
    free(dl);
    conn_close(admin);
}

/* Move to the parking queue keeps the message whole (x-death included); delete drops. */
static void t_move_and_delete(void **state)
{
    (void)state;
    struct conn *c = bt_connect();
    fresh(c, "r5.dlq");
    fresh(c, "r5.parked");
    struct message dl[4] = {plain("a", "A"), acemq_dead("b", "{}"), plain("c", "C"),
                            plain("d", "D")};
    htable_add(dl[1].headers, "x-first-death-reason", hval_cstring("rejected"));
    bt_publish(c, "", "r5.dlq", dl, 4);
    struct sel mv = {0};
    mv.plan = replay_plan_new();
    mv.dlq = "r5.dlq";
    mv.mode = RESTAMP_MOVE;
    mv.to_exchange = "";
    mv.to_routing_key = "r5.parked";
    plan_add_msg(mv.plan, &dl[1]);
    struct replay_report r = run_plan(c, &mv, 0, 0);
    assert_int_equal(r.done, 1);
    struct msglist parked = bt_read_all(c, "r5.parked", 1);
    assert_int_equal(parked.n, 1);
    assert_true(bt_same_message(&dl[1], &parked.m[0], false));
    msglist_free(&parked);

    struct sel del = {0};
    del.plan = replay_plan_new();
    del.dlq = "r5.dlq";
    del.is_delete = true;
    plan_add_msg(del.plan, &dl[2]);
    r = run_plan(c, &del, 0, 0);
    assert_int_equal(r.done, 1);
    struct message rest[2] = {dl[0], dl[3]};
    expect_queue(c, "r5.dlq", rest, 2);
    replay_plan_free(mv.plan);
    replay_plan_free(del.plan);
    for (size_t i = 0; i < 4; i++)
        message_free(&dl[i]);
    conn_close(c);
}

/* Bodies in several frames (300,000 bytes against a frame_max of 131,072) and an empty one,
 * moved byte for byte: the replay's reader gathers a body from its frames itself
 * (rr_read_content). */
static void t_move_large_bodies(void **state)
{
    (void)state;
    struct conn *c = bt_connect();
    fresh(c, "r6.dlq");
    fresh(c, "r6.parked");
    size_t big = 300000;
    char *a = xmalloc(big + 1), *b = xmalloc(big + 1);
    for (size_t i = 0; i < big; i++) {
        a[i] = (char)('a' + i % 26);
        b[i] = (char)('0' + i % 10);
    }
    a[big] = b[big] = '\0';
    struct message dl[3] = {plain("big-a", a), plain("empty", ""), plain("big-b", b)};
    bt_publish(c, "", "r6.dlq", dl, 3);
    struct sel mv = {0};
    mv.plan = replay_plan_new();
    mv.dlq = "r6.dlq";
    mv.mode = RESTAMP_MOVE;
    mv.to_exchange = "";
    mv.to_routing_key = "r6.parked";
    for (size_t i = 0; i < 3; i++)
        plan_add_msg(mv.plan, &dl[i]);
    struct replay_report r = run_plan(c, &mv, 0, 0);
    assert_int_equal(r.done, 3);
    struct msglist parked = bt_read_all(c, "r6.parked", 3);
    assert_int_equal(parked.n, 3);
    for (size_t i = 0; i < 3; i++)
        assert_true(bt_same_message(&dl[i], &parked.m[i], false));
    assert_int_equal(parked.m[0].body.len, big);
    msglist_free(&parked);
    expect_queue(c, "r6.dlq", NULL, 0);
    replay_plan_free(mv.plan);
    for (size_t i = 0; i < 3; i++)
        message_free(&dl[i]);
    free(a);
    free(b);
    conn_close(c);
}

/* A canary that comes back (its source queue dead-letters everything into the DLQ again):
 * one copy sent, the rest stay. */
static void t_canary(void **state)
{
    (void)state;
    struct conn *c = bt_connect();
    fresh(c, "r6.dlq");
    struct htable *args = htable_new();
    htable_add(args, "x-message-ttl", hval_int(HV_I32, 0));
    htable_add(args, "x-dead-letter-exchange", hval_cstring(""));
    htable_add(args, "x-dead-letter-routing-key", hval_cstring("r6.dlq"));
    bt_queue_fresh(c, "r6.src", args);
    htable_free(args);
    struct message dl[5];
    for (size_t i = 0; i < 5; i++) {
        char id[16];
        snprintf(id, sizeof id, "k-%zu", i);
        dl[i] = plain(id, id);
    }
    bt_publish(c, "", "r6.dlq", dl, 5);
    struct sel s = sel_for("r6.dlq", "", "r6.src");
    for (size_t i = 0; i < 5; i++)
        plan_add_msg(s.plan, &dl[i]);
    struct replay_report r = run_plan(c, &s, 0, 3000);
    if (r.end != RE_CANARY)
        fail_msg("canary: end %s, sent %d, back %d, done %llu: %s", replay_end_name(r.end),
                 r.canary_sent, r.canary_back, (unsigned long long)r.done, r.detail);
    assert_true(r.canary_back);
    assert_int_equal(r.done, 1);
    /* Four untouched, in order, then the canary's copy (dead-lettered again at the tail). */
    assert_int_equal(bt_depth_settled(c, "r6.dlq", 5), 5);
    struct msglist got = bt_read_all(c, "r6.dlq", 5);
    for (size_t i = 0; i < 4; i++)
        assert_true(bt_same_message(&dl[i + 1], &got.m[i], false));
    assert_true(bytes_eq_cstr(props_string(&got.m[4].props, PROP_message_id), "k-0"));
    msglist_free(&got);

    /* With the queue fixed (no TTL), the canary stays away and the rest follow. */
    bt_queue_fresh(c, "r6.src", NULL);
    struct sel ok = sel_for("r6.dlq", "", "r6.src");
    for (size_t i = 1; i < 5; i++)
        plan_add_msg(ok.plan, &dl[i]);
    r = run_plan(c, &ok, 0, 1000);
    assert_int_equal(r.end, RE_ALL_FOUND);
    assert_false(r.canary_back);
    assert_int_equal(r.done, 4);
    assert_int_equal(bt_depth(c, "r6.src"), 4);
    replay_plan_free(s.plan);
    replay_plan_free(ok.plan);
    for (size_t i = 0; i < 5; i++)
        message_free(&dl[i]);
    conn_close(c);
}

/* One confirm per message (window 1) gives the same result as the pipelined pass. */
/* Two passes on one connection, the first stopping at its only dead letter while the broker
 * is still delivering the rest: those deliveries, in flight when the reading channel closed,
 * must not reach the second pass (rabbitmq-c keeps frames that arrive during a close), or it
 * would take them for its own — out of order, and with delivery tags of a closed channel. The
 * second pass finds its dead letter at its place, and the DLQ keeps the rest in order. */
static void t_two_passes_one_connection(void **state)
{
    (void)state;
    struct conn *c = bt_connect();
    fresh(c, "r9.dlq");
    fresh(c, "r9.src");
    enum { N = 300 };
    struct message *dl = numbered("t", N);
    bt_publish(c, "", "r9.dlq", dl, N);
    /* Pass 1 keeps its dead letter at once (no such exchange: nothing to publish or prove),
     * so it ends while the broker is still sending the rest. */
    struct sel s1 = sel_for("r9.dlq", "r9.no-such-exchange", "k");
    plan_add_msg(s1.plan, &dl[0]);
    struct replay_report r = run_plan(c, &s1, 0, 0);
    assert_int_equal(r.kept, 1);
    assert_int_equal(amqp_frames_enqueued(conn_state(c)), 0);
    struct sel s2 = sel_for("r9.dlq", "", "r9.src");
    plan_add_msg(s2.plan, &dl[N - 1]);
    r = run_plan(c, &s2, 0, 0);
    assert_int_equal(r.done, 1);
    if (r.taken != N)
        fail_msg("the second pass took %llu messages to find the last of %d",
                 (unsigned long long)r.taken, N);
    expect_queue(c, "r9.dlq", dl, N - 1);
    expect_queue(c, "r9.src", &dl[N - 1], 1);
    replay_plan_free(s1.plan);
    replay_plan_free(s2.plan);
    for (size_t i = 0; i < N; i++)
        message_free(&dl[i]);
    free(dl);
    conn_close(c);
}

static void t_window_one(void **state)
{
    (void)state;
    struct conn *c = bt_connect();
    fresh(c, "r7.dlq");
    fresh(c, "r7.src");
    struct message dl[20];
    for (size_t i = 0; i < 20; i++) {
        char id[16];
        snprintf(id, sizeof id, "w-%02zu", i);
        dl[i] = plain(id, id);
    }
    bt_publish(c, "", "r7.dlq", dl, 20);
    struct sel s = sel_for("r7.dlq", "", "r7.src");
    for (size_t i = 0; i < 20; i += 2)
        plan_add_msg(s.plan, &dl[i]);
    struct replay_report r = run_plan(c, &s, 1, 0);
    assert_int_equal(r.done, 10);
    struct message rest[10];
    for (size_t i = 0; i < 10; i++)
        rest[i] = dl[2 * i + 1];
    expect_queue(c, "r7.dlq", rest, 10);
    struct message sent[10];
    for (size_t i = 0; i < 10; i++)
        sent[i] = dl[2 * i];
    expect_queue(c, "r7.src", sent, 10);
    replay_plan_free(s.plan);
    for (size_t i = 0; i < 20; i++)
        message_free(&dl[i]);
    conn_close(c);
}

/* The explorer's way, a step at a time, cancelled in the middle: nothing more is sent, the
 * copies in flight are settled, and nothing is lost — the DLQ keeps in order every dead letter
 * whose copy was not confirmed, the source holds each confirmed copy once, and every intent
 * the journal named pending at the cancel has its outcome afterwards. */
static void t_stepped_cancel(void **state)
{
    (void)state;
    enum { N = 3000 };
    struct conn *c = bt_connect();
    fresh(c, "r12.dlq");
    fresh(c, "r12.src");
    struct message *dl = numbered("S-", N);
    bt_publish(c, "", "r12.dlq", dl, N);
    struct sel s = sel_for("r12.dlq", "", "r12.src");
    for (size_t i = 0; i < N; i++)
        plan_add_msg(s.plan, &dl[i]);
    s.cancel_after_done = 300;
    struct replay_report r = run_plan(c, &s, 200, 0);
    assert_true(s.steps > 2);
    assert_non_null(s.pending_at_cancel);
    assert_int_equal(r.end, RE_CANCELLED);
    assert_true(r.done >= 300 && r.done < N);
    assert_int_equal(r.kept, 0);
    assert_int_equal(r.unknown, 0);
    assert_true(r.not_sent > 0);
    assert_int_equal(r.done + r.not_sent, r.selected); /* the rest were never read */
    assert_int_equal(s.outcomes[JR_DONE], r.done);
    /* Confirmed copies are a prefix (published in order); the rest stayed, in order. */
    expect_queue(c, "r12.src", dl, (size_t)r.done);
    expect_queue(c, "r12.dlq", dl + r.done, N - (size_t)r.done);
    /* What the journal named pending at the cancel has its outcome now; nothing is left. */
    char path[256];
    snprintf(path, sizeof path, "%s/journal.jsonl", journal_dir);
    json_t *all = NULL, *left = NULL;
    struct error err;
    assert_int_equal(journal_collect(path, s.run_id, false, NULL, NULL, &all, NULL, NULL, &err),
                     ST_OK);
    assert_int_equal(journal_collect(path, s.run_id, true, NULL, NULL, &left, NULL, NULL, &err),
                     ST_OK);
    assert_int_equal(json_array_size(left), 0);
    size_t i, k;
    json_t *pend, *in;
    json_array_foreach(s.pending_at_cancel, i, pend)
    {
        json_int_t seq = json_integer_value(json_object_get(pend, "seq"));
        bool settled = false;
        json_array_foreach(all, k, in)
        {
            if (json_integer_value(json_object_get(in, "seq")) == seq)
                settled = json_object_get(in, "outcome") != NULL;
        }
        if (!settled)
            fail_msg("intent %lld, pending at the cancel, has no outcome", (long long)seq);
    }
    printf("# stepped: %d steps, cancelled at %llu done with %zu pending in the journal\n", s.steps,
           (unsigned long long)r.done, json_array_size(s.pending_at_cancel));
    json_decref(all);
    json_decref(left);
    json_decref(s.pending_at_cancel);
    replay_plan_free(s.plan);
    for (size_t j = 0; j < N; j++)
        message_free(&dl[j]);
    free(dl);
    conn_close(c);
}

/* A classic DLQ is read by a consumer with a limit of four windows, renewed each time half of
 * it is held for good: the copies read and not yet settled stay bounded however many messages
 * stay in the DLQ, and nothing stalls when they all stay. Order is kept both ways. */
static void t_bounded_reading(void **state)
{
    (void)state;
    enum { N = 3000, W = 10 };
    struct conn *c = bt_connect();
    fresh(c, "r8.dlq");
    fresh(c, "r8.src");
    struct message *dl = numbered("b", N);
    bt_publish(c, "", "r8.dlq", dl, N);
    struct sel s = {0};
    s.dlq = "r8.dlq";
    s.mode = RESTAMP_REPLAY;
    s.to_exchange = "";
    s.to_routing_key = "r8.src";

    /* Pass 1: every third; 2,000 held for good. */
    s.plan = replay_plan_new();
    for (size_t i = 0; i < N; i += 3)
        plan_add_msg(s.plan, &dl[i]);
    struct replay_report r = run_plan(c, &s, W, 0);
    assert_int_equal(r.done, N / 3);
    assert_int_equal(r.kept + r.unknown, 0);
    assert_int_equal(r.read_limit, 4 * W);
    assert_true(r.peak_active >= 1);
    if (r.peak_active > 8 * W)
        fail_msg("%llu copies were read and not yet settled at once (the bound is %d)",
                 (unsigned long long)r.peak_active, 8 * W);
    if (r.read_consumers < 2 * N / 3 / (4 * W))
        fail_msg("%u consumers for 2,000 messages held", r.read_consumers);
    printf("pass 1: at most %llu copies unsettled, %u consumers\n",
           (unsigned long long)r.peak_active, r.read_consumers);
    replay_plan_free(s.plan);
    struct message *rest = xcalloc(N, sizeof *rest), *sent = xcalloc(N, sizeof *sent);
    size_t nr = 0, ns = 0;
    for (size_t i = 0; i < N; i++) {
        if (i % 3 == 0)
            sent[ns++] = dl[i];
        else
            rest[nr++] = dl[i];
    }
    expect_queue(c, "r8.dlq", rest, nr);
    expect_queue(c, "r8.src", sent, ns);

    /* Pass 2: only the last 500 of the rest: 1,500 held for good before the first is found,
     * each consumer filled with them before it is renewed. */
    s.plan = replay_plan_new();
    for (size_t i = nr - 500; i < nr; i++)
        plan_add_msg(s.plan, &rest[i]);
    r = run_plan(c, &s, W, 0);
    assert_int_equal(r.done, 500);
    assert_int_equal(r.kept + r.unknown, 0);
    if (r.peak_active > 8 * W)
        fail_msg("pass 2: %llu copies unsettled at once", (unsigned long long)r.peak_active);
    if (r.read_consumers < 1500 / (4 * W))
        fail_msg("pass 2: %u consumers for 1,500 messages held", r.read_consumers);
    printf("pass 2: at most %llu copies unsettled, %u consumers\n",
           (unsigned long long)r.peak_active, r.read_consumers);
    replay_plan_free(s.plan);
    for (size_t i = nr - 500; i < nr; i++)
        sent[ns++] = rest[i];
    expect_queue(c, "r8.dlq", rest, nr - 500);
    expect_queue(c, "r8.src", sent, ns);
    free(rest);
    free(sent);
    for (size_t i = 0; i < N; i++)
        message_free(&dl[i]);
    free(dl);
    conn_close(c);
}

/* --rate holds from the first copy after the canary: the copies the canary's wait held back
 * do not go out in a burst (issue 16.2: --canary=5 --rate 5 sent copies 2-23 in 7 ms). */
static void t_rate_after_canary(void **state)
{
    (void)state;
    enum { N = 12 };
    struct conn *c = bt_connect();
    fresh(c, "r10.dlq");
    fresh(c, "r10.src");
    struct message *dl = numbered("q", N);
    bt_publish(c, "", "r10.dlq", dl, N);
    struct sel s = sel_for("r10.dlq", "", "r10.src");
    s.rate = 10;
    for (size_t i = 0; i < N; i++)
        plan_add_msg(s.plan, &dl[i]);
    struct arrivals a = arrivals_start("r10.src", N);
    struct replay_report r = run_plan(c, &s, 0, 1500);
    double t[N];
    size_t n = arrivals_end(a, t, N);
    assert_int_equal(r.done, N);
    assert_false(r.canary_back);
    assert_int_equal(n, N);
    /* The canary, then its wait. */
    if (t[1] - t[0] < 1.4)
        fail_msg("the second copy came %.3f s after the canary (the wait is 1.5 s)", t[1] - t[0]);
    /* Then 10/s: 100 ms apart (a loaded machine may deliver two a little closer, or one pair
     * together: short_gaps). */
    size_t at = 0;
    if (short_gaps(t, 1, N, 0.06, &at) > 1)
        fail_msg("copies %zu and %zu (and more) arrived under 60 ms apart at --rate 10 after the "
                 "canary (copies 2-%d over %.3f s)",
                 at, at + 1, N, t[N - 1] - t[1]);
    if (t[N - 1] - t[1] < (N - 2) * 0.1 * 0.8)
        fail_msg("copies 2-%d took %.3f s at --rate 10", N, t[N - 1] - t[1]);
    replay_plan_free(s.plan);
    for (size_t i = 0; i < N; i++)
        message_free(&dl[i]);
    free(dl);
    conn_close(c);
}

/* A ramp: 3 copies at 4/s, 4 at 20/s, then --rate 100. */
static void t_ramp(void **state)
{
    (void)state;
    enum { N = 12 };
    struct conn *c = bt_connect();
    fresh(c, "r11.dlq");
    fresh(c, "r11.src");
    struct message *dl = numbered("m", N);
    bt_publish(c, "", "r11.dlq", dl, N);
    struct sel s = sel_for("r11.dlq", "", "r11.src");
    struct replay_ramp_step ramp[2];
    size_t nr = 0;
    struct error err;
    if (replay_ramp_parse("4:3,20:4", ramp, 2, &nr, &err) != ST_OK)
        fail_msg("%s", err.msg);
    s.ramp = ramp;
    s.n_ramp = nr;
    s.rate = 100;
    for (size_t i = 0; i < N; i++)
        plan_add_msg(s.plan, &dl[i]);
    struct arrivals a = arrivals_start("r11.src", N);
    struct replay_report r = run_plan(c, &s, 0, 0);
    double t[N];
    size_t n = arrivals_end(a, t, N);
    assert_int_equal(r.done, N);
    assert_int_equal(n, N);
    /* Each step's pace: at most one pair read together by a descheduled consumer
     * (short_gaps), and the step as long as its pace makes it, less that one gap. Step 2's
     * copies are 50 ms apart, and a loaded machine's consumer read two of its three gaps short
     * (ci11: 4-7 over 130 ms, where 150 is the pace): two short gaps are allowed there, and its
     * span still tells 20/s from faster (at 40/s all three gaps are short; at the run's 100/s
     * the span is 30 ms, under 60). */
    size_t at = 0;
    if (short_gaps(t, 0, 3, 0.25 * 0.6, &at) > 1 || t[2] - t[0] < 0.25 * 0.6)
        fail_msg("step 1 (4/s): copies %zu and %zu and more under 150 ms apart (1-3 over %.1f ms)",
                 at, at + 1, (t[2] - t[0]) * 1000);
    if (short_gaps(t, 3, 7, 0.05 * 0.6, &at) > 2 || t[6] - t[3] < 2 * 0.05 * 0.6)
        fail_msg("step 2 (20/s): copies %zu and %zu and more under 30 ms apart (4-7 over %.1f ms)",
                 at, at + 1, (t[6] - t[3]) * 1000);
    /* Faster than the first step's pace (with room for a loaded machine). */
    if ((t[6] - t[3]) / 3 > 0.2)
        fail_msg("step 2 (20/s) averaged %.1f ms a copy", (t[6] - t[3]) / 3 * 1000);
    /* 10 ms apart on average (single gaps jitter by a few ms at the consumer). */
    double avg3 = (t[N - 1] - t[7]) / (N - 8);
    if (avg3 < 0.01 * 0.7)
        fail_msg("--rate 100 after the ramp: copies 8-%d averaged %.1f ms apart", N, avg3 * 1000);
    replay_plan_free(s.plan);
    for (size_t i = 0; i < N; i++)
        message_free(&dl[i]);
    free(dl);
    conn_close(c);
}

int main(void)
{
    if (!mkdtemp(journal_dir))
        return 1;
    /* DLQX_TEST_FILTER=t_canary (a glob) runs the matching tests only. */
    if (getenv("DLQX_TEST_FILTER"))
        cmocka_set_test_filter(getenv("DLQX_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_acemq_exact_headers), cmocka_unit_test(t_babelqueue_exact_body),
        cmocka_unit_test(t_unroutable_and_full), cmocka_unit_test(t_vanished_connection),
        cmocka_unit_test(t_move_and_delete),     cmocka_unit_test(t_canary),
        cmocka_unit_test(t_window_one),          cmocka_unit_test(t_stepped_cancel),
        cmocka_unit_test(t_bounded_reading),     cmocka_unit_test(t_two_passes_one_connection),
        cmocka_unit_test(t_rate_after_canary),   cmocka_unit_test(t_ramp),
        cmocka_unit_test(t_move_large_bodies),
    };
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", journal_dir);
    if (system(cmd) != 0)
        rc = rc ? rc : 1;
    return rc;
}
