/*
 * What the restamp tests share (restamp_testutil.h).
 */
#include "restamp_testutil.h"

#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "hval_json.h"
#include "util.h"

struct message *msg_new(const char *queue, const char *rk, const char *ct, const char *body)
{
    struct message *m = xcalloc(1, sizeof *m);
    message_init(m);
    m->queue = bytes_from_cstr(queue);
    m->exchange = bytes_from_cstr("");
    m->routing_key = bytes_from_cstr(rk);
    if (ct)
        props_set_string(&m->props, PROP_content_type, ct, strlen(ct));
    m->body = bytes_from_cstr(body);
    m->headers_present = true;
    m->fetched_at_ms = NOW - 1000;
    return m;
}

void set_prop(struct message *m, enum prop_flag f, const char *v)
{
    props_set_string(&m->props, f, v, strlen(v));
}

/* x-death as RabbitMQ writes it: one entry. */
struct hval xdeath(const char *queue, const char *exchange, const char *rk)
{
    struct hval t = hval_table();
    htable_add(t.v.tab, "count", hval_int(HV_I64, 1));
    htable_add(t.v.tab, "reason", hval_cstring("rejected"));
    htable_add(t.v.tab, "queue", hval_cstring(queue));
    htable_add(t.v.tab, "time", hval_uint(HV_TIMESTAMP, 1770000000));
    htable_add(t.v.tab, "exchange", hval_cstring(exchange));
    struct hval rks = hval_array();
    harray_add(&rks.v.arr, hval_cstring(rk));
    htable_add(t.v.tab, "routing-keys", rks);
    struct hval a = hval_array();
    harray_add(&a.v.arr, t);
    return a;
}

/* Decodes m, builds the copy, and checks the dead letter and its envelope are untouched. */
enum status run(struct run *r, struct message *m, const struct restamp_opts *o)
{
    memset(r, 0, sizeof *r);
    r->m = m;
    r->orig = message_copy(m);
    decode_message(m, NOW, &r->d);
    assert_int_equal(envelope_with(r->d.env, NULL, 0, &r->env, NULL), ST_OK);
    error_clear(&r->err);
    r->st = restamp_build(&r->d, o, &r->out, &r->err);
    /* Built: every field owned and set; failed: zeroed, nothing to free. */
    if (r->st == ST_OK)
        assert_non_null(r->out.headers);
    else
        assert_null(r->out.headers);
    assert_true(message_equal(r->orig, m));
    assert_true(envelope_equal(r->env, r->d.env));
    return r->st;
}

void run_free(struct run *r)
{
    outgoing_free(&r->out);
    decoded_free(&r->d);
    envelope_free(r->env);
    message_free(r->orig);
    free(r->orig);
    message_free(r->m);
    free(r->m);
}

/* Exactly these headers, in this order, kind-exact. Frees the expected values. */
void assert_headers(const struct htable *t, struct hx *want, size_t n)
{
    for (size_t i = 0; i < n && i < t->n; i++) {
        if (!bytes_eq_cstr(&t->e[i].key, want[i].name))
            fail_msg("header %zu is %s, not %s", i, bytes_cstr(&t->e[i].key), want[i].name);
        if (!hval_equal(&t->e[i].val, &want[i].v)) {
            json_t *g = hval_to_json(&t->e[i].val);
            char *s = json_dumps(g, JSON_ENCODE_ANY);
            fail_msg("header %s is %s %s, not the %s expected", want[i].name,
                     hkind_name(t->e[i].val.kind), s, hkind_name(want[i].v.kind));
        }
    }
    if (t->n != n)
        fail_msg("%zu headers, not %zu", t->n, n);
    for (size_t i = 0; i < n; i++)
        hval_free(&want[i].v);
}

void changes_parse(struct changes *cs, const char *const *specs)
{
    cs->n = 0;
    for (; *specs; specs++) {
        struct error err;
        assert_true(cs->n < 8);
        if (env_change_parse(*specs, &cs->c[cs->n], &cs->hv[cs->n], &err) != ST_OK)
            fail_msg("%s: %s", *specs, err.msg);
        cs->n++;
    }
}

void changes_free(struct changes *cs)
{
    for (size_t i = 0; i < cs->n; i++)
        env_change_release(&cs->c[i], &cs->hv[i]);
}

/* Builds with the changes given, expecting status want; returns the error text. */
void expect_change(struct message *m, const char *spec, enum status want, const char *says)
{
    const char *specs[] = {spec, NULL};
    struct changes cs;
    changes_parse(&cs, specs);
    struct restamp_opts o = {
        .mode = RESTAMP_REPLAY, .changes = cs.c, .n_changes = cs.n, .now_ms = NOW};
    struct run r;
    run(&r, m, &o);
    if (r.st != want)
        fail_msg("%s: %s (%s), not %s", spec, status_str(r.st), r.err.msg, status_str(want));
    if (says)
        assert_contains(r.err.msg, says);
    assert_null(r.out.body.data);
    assert_null(r.out.id.data);
    run_free(&r);
    changes_free(&cs);
}

struct message *acemq_simple(void)
{
    struct message *m = msg_new("orders.dlq", "orders.dlq", "application/json", "{}");
    htable_add(m->headers, "x-acemq-id", hval_cstring("id-1"));
    htable_add(m->headers, "x-acemq-type", hval_cstring("order.placed"));
    htable_add(m->headers, "x-acemq-future", hval_int(HV_I16, 7));
    htable_add(m->headers, "tenant", hval_cstring("acme"));
    htable_add(m->headers, "x-stream-offset", hval_int(HV_I64, 12));
    return m;
}

struct message *bq_msg(const char *body)
{
    struct message *m = msg_new("orders.dlq", "orders.dlq", "application/json", body);
    set_prop(m, PROP_app_id, "babelqueue");
    return m;
}

struct message *plain_msg(void)
{
    struct message *m = msg_new("orders.dlq", "orders.created", "text/plain", "hello\n");
    set_prop(m, PROP_message_id, "mid-1");
    set_prop(m, PROP_type, "order");
    m->props.timestamp = 1770000000;
    m->props.present |= 1u << PROP_timestamp;
    m->props.delivery_mode = 1;
    m->props.present |= 1u << PROP_delivery_mode;
    htable_add(m->headers, "x-custom", hval_uint(HV_U8, 7));
    htable_add(m->headers, "x-death", xdeath("orders", "orders-x", "orders.created"));
    htable_add(m->headers, "x-first-death-queue", hval_cstring("orders"));
    htable_add(m->headers, "x-first-death-exchange", hval_cstring("orders-x"));
    htable_add(m->headers, "x-first-death-reason", hval_cstring("rejected"));
    htable_add(m->headers, "x-delivery-count", hval_int(HV_I64, 2));
    htable_add(m->headers, "x-stream-offset", hval_int(HV_I64, 99));
    htable_add(m->headers, "trace", hval_bytes("\x01\x02", 2));
    return m;
}
