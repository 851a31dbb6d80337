/*
 * dialect_celery: recognition and its near-misses, the kinds py-amqp writes (V, L, d, A, F),
 * wrongly typed and malformed task messages, Celery's times, and the replay (Celery's move)
 * and re-issue rules — each message built from one snapshot line.
 */
#include "dialect_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "celery.h"
#include "decode.h"
#include "hval_json.h"
#include "restamp.h"
#include "snapshot.h"
#include "util.h"

/* A Celery 5 task as a worker dead-letters it (fixtures/celery/reject.jsonl, shortened). */
#define XDEATH                                                                                     \
    "\"x-death\":[{\"count\":1,\"reason\":\"rejected\",\"queue\":\"celery\","                      \
    "\"time\":{\"type\":\"timestamp\",\"value\":1767329000},\"exchange\":\"\","                    \
    "\"routing-keys\":[\"celery\"]}],\"x-first-death-exchange\":\"\","                             \
    "\"x-first-death-queue\":\"celery\",\"x-first-death-reason\":\"rejected\""
#define TASK(extra_headers, body)                                                                  \
    "{\"queue\":\"celery.dlq\",\"exchange\":\"celery.dlx\",\"routing_key\":\"celery.dlq\","        \
    "\"properties\":{\"content_type\":\"application/json\",\"content_encoding\":\"utf-8\","        \
    "\"correlation_id\":\"t-1\",\"reply_to\":\"r\",\"delivery_mode\":2,\"priority\":0},"           \
    "\"headers\":{\"argsrepr\":\"(1,)\",\"eta\":null,\"group\":null,\"group_index\":null,"         \
    "\"id\":\"t-1\",\"lang\":\"py\",\"origin\":\"gen1@h\",\"parent_id\":null,"                     \
    "\"retries\":{\"type\":\"int32\",\"value\":0},\"root_id\":\"t-0\",\"task\":\"shop.charge\","   \
    "\"timelimit\":[null,null]" extra_headers "," XDEATH "},\"body\":" body "}"
#define BODY                                                                                       \
    "\"[[1], {}, {\\\"callbacks\\\": null, \\\"errbacks\\\": null, \\\"chain\\\": "                \
    "null, \\\"chord\\\": null}]\""

static void dec_line(struct dec *x, const char *line)
{
    struct error err;
    error_clear(&err);
    if (snapshot_parse_line(line, strlen(line), &x->m, &err) != ST_OK)
        fail_msg("%s: %s", line, err.msg);
    decode_message(&x->m, NOW, &x->d);
}

static json_t *record(const struct dec *x)
{
    return decoded_to_json(&x->d, NOW);
}

static void assert_str(const json_t *o, const char *key, const char *want)
{
    const json_t *v = json_object_get(o, key);
    if (!want) {
        if (!json_is_null(v))
            fail_msg("%s is not null", key);
        return;
    }
    if (!json_is_string(v) || strcmp(json_string_value(v), want) != 0)
        fail_msg("%s is %s, not \"%s\"", key, json_is_string(v) ? json_string_value(v) : "?", want);
}

static void assert_int_key(const json_t *o, const char *key, long long want)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) != want)
        fail_msg("%s is not %lld", key, want);
}

/* ---- recognition ---------------------------------------------------------------------- */

struct near {
    const char *line;
    const char *dialect;
    int confidence;
    const char *by; /* comma-joined */
};

static void t_recognition_table(void **state)
{
    (void)state;
    static const struct near cases[] = {
        {TASK("", BODY), "celery", 80, "task,id,lang"},
        {"{\"headers\":{\"task\":\"a.b\",\"id\":\"1\"},\"body\":\"[[],{},null]\"}", "celery", 70,
         "task,id"},
        {"{\"headers\":{\"task\":\"a.b\",\"id\":\"1\",\"lang\":\"rb\"}}", "celery", 70, "task,id"},
        /* near-misses: plain AMQP */
        {"{\"headers\":{\"id\":\"1\"},\"body\":\"{\\\"order\\\":1}\"}", "amqp", 1, NULL},
        {"{\"headers\":{\"task\":{\"type\":\"int32\",\"value\":7},\"id\":\"1\"}}", "amqp", 1, NULL},
        {"{\"headers\":{\"task\":null,\"id\":\"1\"}}", "amqp", 1, NULL},
        {"{\"headers\":{\"task\":\"\",\"id\":\"1\"}}", "amqp", 1, NULL},
        {"{\"headers\":{\"task\":\"a.b\",\"id\":\"\"}}", "amqp", 1, NULL},
        {"{\"headers\":{\"task\":\"a.b\"}}", "amqp", 1, NULL},
        {"{\"headers\":{\"task\":{\"type\":\"bytes\",\"value\":\"a\"},\"id\":\"1\"}}", "amqp", 1,
         NULL},
        {"{\"headers\":{\"task\":\"a.b\",\"id\":[\"1\"]}}", "amqp", 1, NULL},
        /* protocol 1: the body */
        {"{\"body\":\" {\\\"task\\\":\\\"a.b\\\",\\\"id\\\":\\\"9\\\",\\\"args\\\":[]}\"}",
         "celery", 60, "body.task,body.id"},
        {"{\"body\":\"{\\\"task\\\":\\\"a.b\\\",\\\"id\\\":9}\"}", "amqp", 1, NULL},
        {"{\"body\":\"{\\\"task\\\":\\\"a.b\\\"}\"}", "amqp", 1, NULL},
        {"{\"body\":\"[{\\\"task\\\":\\\"a.b\\\",\\\"id\\\":\\\"9\\\"}]\"}", "amqp", 1, NULL},
        {"{\"body\":\"{\\\"task\\\":\\\"a.b\\\",\\\"id\\\":\\\"9\\\"\"}", "amqp", 1, NULL},
        /* a task header makes it protocol 2: the body is not looked at for recognition */
        {"{\"headers\":{\"task\":7},\"body\":\"{\\\"task\\\":\\\"a\\\",\\\"id\\\":\\\"9\\\"}\"}",
         "amqp", 1, NULL},
        /* a framework with failure headers wins */
        {"{\"headers\":{\"task\":\"a.b\",\"id\":\"1\",\"lang\":\"py\",\"x-acemq-id\":\"e\"}}",
         "acemq", 95, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct dec x;
        dec_line(&x, cases[i].line);
        if (strcmp(x.d.dialect->name, cases[i].dialect) != 0)
            fail_msg("case %zu: %s, not %s", i, x.d.dialect->name, cases[i].dialect);
        assert_int_equal(x.d.match.confidence, cases[i].confidence);
        if (cases[i].by) {
            char by[128] = "";
            for (int k = 0; k < x.d.match.n_by; k++)
                snprintf(by + strlen(by), sizeof by - strlen(by), "%s%s", k ? "," : "",
                         x.d.match.by[k]);
            if (strcmp(by, cases[i].by) != 0)
                fail_msg("case %zu: by %s, not %s", i, by, cases[i].by);
        }
        dec_free(&x);
    }
}

/* ---- kinds ---------------------------------------------------------------------------- */

static void t_void_and_long_kinds(void **state)
{
    (void)state;
    struct dec x;
    /* parent_id V, group_index V, retries as L (uint64), a custom L beyond int32 and V. */
    dec_line(&x, "{\"headers\":{\"task\":\"a.b\",\"id\":\"t-1\",\"lang\":\"py\",\"parent_id\":null,"
                 "\"root_id\":null,\"group\":\"g\",\"group_index\":null,"
                 "\"retries\":{\"type\":\"uint64\",\"value\":3},"
                 "\"tenant_id\":{\"type\":\"uint64\",\"value\":5000000000},\"trace\":null,"
                 "\"timelimit\":[{\"type\":\"uint64\",\"value\":3000000000},2.5]},"
                 "\"body\":\"[[],{},null]\"}");
    json_t *r = record(&x);
    assert_str(r, "dialect", "celery");
    assert_str(r, "causation_id", NULL);
    assert_str(r, "correlation_id", "t-1"); /* root_id void: the id, defaulted */
    assert_int_key(r, "attempt", 3);
    json_t *c = json_object_get(r, "celery");
    assert_non_null(c);
    assert_true(json_is_null(json_object_get(c, "group_index")));
    assert_str(c, "group", "g");
    assert_int_key(c, "retries", 3);
    assert_int_key(c, "time_limit", 3000000000LL);
    assert_true(json_real_value(json_object_get(c, "soft_time_limit")) == 2.5);
    assert_int_key(c, "death_count", 0);
    assert_true(json_is_null(json_object_get(c, "chain")));
    const json_t *df = json_object_get(r, "defaulted");
    int corr = 0, att = 0;
    for (size_t i = 0; i < json_array_size(df); i++) {
        corr |= strcmp(json_string_value(json_array_get(df, i)), "correlation_id") == 0;
        att |= strcmp(json_string_value(json_array_get(df, i)), "attempt") == 0;
    }
    assert_true(corr);
    assert_false(att);
    assert_true(json_is_true(json_object_get(r, "accepted")));
    json_decref(r);
    dec_free(&x);
}

/* Every optional header of another kind reads as absent; nothing is converted. */
static void t_wrong_kinds(void **state)
{
    (void)state;
    struct dec x;
    dec_line(&x, TASK(",\"shadow\":{\"type\":\"int8\",\"value\":1},\"expires\":[1],"
                      "\"kwargsrepr\":{\"a\":1},\"ignore_result\":\"yes\"",
                      BODY));
    json_t *r = record(&x);
    json_t *c = json_object_get(r, "celery");
    assert_true(json_is_null(json_object_get(c, "shadow")));
    assert_true(json_is_null(json_object_get(c, "expires")));
    assert_true(json_is_null(json_object_get(c, "expires_ms")));
    assert_true(json_is_null(json_object_get(c, "kwargsrepr")));
    assert_null(json_object_get(c, "ignore_result"));
    json_decref(r);
    dec_free(&x);

    dec_line(&x, "{\"headers\":{\"task\":\"a.b\",\"id\":\"t-1\",\"retries\":\"3\","
                 "\"root_id\":{\"type\":\"int32\",\"value\":5},\"parent_id\":{\"n\":1},"
                 "\"origin\":{\"type\":\"bytes\",\"value\":\"o\"},\"eta\":7,"
                 "\"timelimit\":\"300\"," XDEATH "}}");
    r = record(&x);
    assert_str(r, "dialect", "celery");
    assert_str(r, "correlation_id", "t-1");
    assert_str(r, "causation_id", NULL);
    assert_str(r, "origin", NULL);
    assert_int_key(r, "attempt", 1); /* the broker's count */
    c = json_object_get(r, "celery");
    assert_true(json_is_null(json_object_get(c, "retries")));
    assert_true(json_is_null(json_object_get(c, "eta")));
    assert_true(json_is_null(json_object_get(c, "time_limit")));
    json_decref(r);
    dec_free(&x);
}

/* A retried task names itself as its parent: no causation (the tree would loop). */
static void t_parent_is_self(void **state)
{
    (void)state;
    struct dec x;
    dec_line(&x, "{\"headers\":{\"task\":\"a.b\",\"id\":\"t-1\",\"parent_id\":\"t-1\","
                 "\"root_id\":\"t-1\",\"retries\":{\"type\":\"int32\",\"value\":2}}}");
    assert_int_equal(x.d.env->causation_id.len, 0);
    assert_int_equal(x.d.env->attempt, 2);
    json_t *r = record(&x);
    assert_str(json_object_get(r, "celery"), "parent_id", "t-1");
    json_decref(r);
    dec_free(&x);
}

/* ---- bodies --------------------------------------------------------------------------- */

static void t_malformed_bodies(void **state)
{
    (void)state;
    static const struct {
        const char *body;
        const char *ct;
        const char *reason; /* NULL: accepted */
    } cases[] = {
        {"[[1], {}, null]", "application/json", NULL},
        {"[[1], {}, {\"chain\": 5}]", "application/json", NULL},
        {"{\"args\": [1], \"kwargs\": {}}", "application/json", NULL},
        {"{\"args\": [1]}", NULL, NULL},
        {"[[1], {}]", "application/json", "body-shape"},
        {"[[1], {}, {}, 4]", "application/json", "body-shape"},
        {"[{}, {}, {}]", "application/json", "body-shape"},
        {"[[], [], {}]", "application/json", "body-shape"},
        {"[[], {}, 3]", "application/json", "body-shape"},
        {"{\"kwargs\": {}}", "application/json", "body-shape"},
        {"{\"args\": 1}", "application/json", "body-shape"},
        {"\"text\"", "application/json", "body-shape"},
        {"", "application/json", "body-not-json"},
        {"[[1], {}, null", "application/json", "body-not-json"},
        {"\x80\x04\x95", "application/x-python-serialize", "content-type"},
        {"--- [1]", "application/x-yaml", "content-type"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        json_t *j = json_object();
        json_t *h = json_object();
        json_object_set_new(h, "task", json_string("a.b"));
        json_object_set_new(h, "id", json_string("t-1"));
        json_object_set_new(j, "headers", h);
        if (cases[i].ct) {
            json_t *p = json_object();
            json_object_set_new(p, "content_type", json_string(cases[i].ct));
            json_object_set_new(j, "properties", p);
        }
        size_t n = strlen(cases[i].body);
        json_t *b = json_stringn_nocheck(cases[i].body, n);
        if (cases[i].body[0] == '\x80') {
            json_decref(b);
            b = json_string("gASV");
            json_object_set_new(j, "body_base64", b);
        } else {
            json_object_set_new(j, "body", b);
        }
        char *line = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        struct dec x;
        dec_line(&x, line);
        free(line);
        assert_string_equal(x.d.dialect->name, "celery");
        if (cases[i].reason) {
            if (x.d.accepted || !x.d.reject_reason || strcmp(x.d.reject_reason, cases[i].reason))
                fail_msg("case %zu (%s): %s, not %s", i, cases[i].body,
                         x.d.accepted ? "accepted" : x.d.reject_reason, cases[i].reason);
        } else if (!x.d.accepted) {
            fail_msg("case %zu (%s): %s", i, cases[i].body, x.d.reject_reason);
        }
        json_t *r = record(&x); /* the fields of a bad body are read without a fault */
        json_decref(r);
        dec_free(&x);
    }
}

/* The embed: callbacks and errbacks in order, the chain in the order it runs (reversed). */
static void t_embed(void **state)
{
    (void)state;
    struct dec x;
    dec_line(&x, "{\"headers\":{\"task\":\"a\",\"id\":\"1\"},\"body\":\"[[], {}, {\\\"callbacks"
                 "\\\": [{\\\"task\\\": \\\"cb\\\"}, 3], \\\"errbacks\\\": {\\\"task\\\": "
                 "\\\"eb\\\"}, \\\"chain\\\": [{\\\"task\\\": \\\"last\\\"}, {\\\"task\\\": "
                 "\\\"next\\\"}], \\\"chord\\\": {\\\"task\\\": \\\"body\\\"}}]\"}");
    json_t *r = record(&x);
    char *s = json_dumps(json_object_get(r, "celery"), JSON_COMPACT);
    assert_non_null(strstr(s, "\"callbacks\":[\"cb\",null],\"errbacks\":[\"eb\"],"
                              "\"chain\":[\"next\",\"last\"],\"chord\":\"body\""));
    free(s);
    json_decref(r);
    dec_free(&x);
}

static void t_protocol1(void **state)
{
    (void)state;
    struct dec x;
    dec_line(&x, "{\"properties\":{\"content_type\":\"application/json\"},\"headers\":{" XDEATH
                 "},\"body\":\"{\\\"task\\\": \\\"a.b\\\", \\\"id\\\": \\\"p-1\\\", \\\"args\\\": "
                 "[1], \\\"kwargs\\\": {}, \\\"retries\\\": 4, \\\"eta\\\": "
                 "\\\"2026-01-02T03:04:05.678901\\\", \\\"taskset\\\": \\\"g-1\\\"}\"}");
    json_t *r = record(&x);
    assert_str(r, "dialect", "celery");
    assert_str(r, "id", "p-1");
    assert_str(r, "type", "a.b");
    assert_str(r, "correlation_id", "p-1");
    assert_int_key(r, "attempt", 4);
    json_t *c = json_object_get(r, "celery");
    assert_int_key(c, "protocol", 1);
    assert_str(c, "group", "g-1");
    assert_int_key(c, "eta_ms", 1767323045678LL); /* no offset: UTC */
    assert_true(json_is_true(json_object_get(r, "accepted")));
    json_decref(r);
    dec_free(&x);
}

static void t_iso_times(void **state)
{
    (void)state;
    int64_t ms;
    assert_true(celery_iso_ms("2026-12-05T07:44:38.454028+00:00", 32, &ms));
    assert_int_equal(ms, 1796456678454LL);
    assert_true(celery_iso_ms("2026-12-05T08:44:38.454028+01:00", 32, &ms));
    assert_int_equal(ms, 1796456678454LL);
    assert_true(celery_iso_ms("2026-12-05T07:44:38", 19, &ms));
    assert_int_equal(ms, 1796456678000LL);
    assert_true(celery_iso_ms("2026-12-05T07:44:38Z", 20, &ms));
    assert_false(celery_iso_ms("2026-12-05", 10, &ms));
    assert_false(celery_iso_ms("soon", 4, &ms));
    assert_false(celery_iso_ms("2026-12-05T07:44:38+0", 21, &ms));
    assert_false(celery_iso_ms("2026-12-05T07:44:38-", 20, &ms));
    assert_false(celery_iso_ms("", 0, &ms));
}

/* ---- replay and re-issue -------------------------------------------------------------- */

static char *headers_json(const struct htable *t)
{
    json_t *j = htable_to_json(t);
    char *s = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    return s;
}

static void build(struct dec *x, const char *line, struct restamp_opts *o, struct outgoing *out,
                  enum status want)
{
    dec_line(x, line);
    struct error err;
    error_clear(&err);
    enum status st = restamp_build(&x->d, o, out, &err);
    if (st != want)
        fail_msg("restamp: %d (%s), expected %d", st, err.msg, want);
}

static void t_replay_is_celerys_move(void **state)
{
    (void)state;
    struct dec x;
    struct outgoing out;
    struct restamp_opts o = {.mode = RESTAMP_REPLAY, .now_ms = NOW, .dlq = "celery.dlq"};
    build(&x,
          TASK(",\"n8\":{\"type\":\"int8\",\"value\":-3},\"big\":{\"type\":\"int64\","
               "\"value\":-5000000000},\"f\":{\"type\":\"float\",\"value\":1.5},"
               "\"raw\":{\"type\":\"bytes\",\"value\":\"ab\"},\"u\":{\"type\":\"uint64\","
               "\"value\":\"18446744073709551615\"},\"min\":{\"type\":\"int32\",\"value\":"
               "-2147483648},\"nest\":{\"a\":[{\"type\":\"uint16\",\"value\":7}]},"
               "\"x-delivery-count\":{\"type\":\"int64\",\"value\":2}",
               BODY),
          &o, &out, ST_OK);
    assert_true(bytes_eq_cstr(&out.exchange, ""));
    assert_true(bytes_eq_cstr(&out.routing_key, "celery"));
    assert_true(bytes_eq_cstr(&out.id, "t-1"));
    char *h = headers_json(out.headers);
    const char *want =
        "{\"argsrepr\":\"(1,)\",\"eta\":null,\"group\":null,\"group_index\":null,\"id\":\"t-1\","
        "\"lang\":\"py\",\"origin\":\"gen1@h\",\"parent_id\":null,\"retries\":{\"type\":\"int32\","
        "\"value\":0},\"root_id\":\"t-0\",\"task\":\"shop.charge\",\"timelimit\":[null,null],"
        "\"n8\":{\"type\":\"int32\",\"value\":-3},\"big\":{\"type\":\"uint64\",\"value\":"
        "\"18446744068709551616\"},\"f\":1.5,\"raw\":\"ab\",\"u\":{\"type\":\"uint64\",\"value\":"
        "\"18446744073709551615\"},\"min\":{\"type\":\"uint64\",\"value\":\"18446744071562067968\"}"
        ","
        "\"nest\":{\"a\":[{\"type\":\"int32\",\"value\":7}]},"
        "\"x-death\":[{\"count\":{\"type\":\"int32\",\"value\":1},\"reason\":\"rejected\","
        "\"queue\":\"celery\",\"time\":{\"type\":\"timestamp\",\"value\":1767329000},"
        "\"exchange\":\"\",\"routing-keys\":[\"celery\"]}],\"x-first-death-exchange\":\"\","
        "\"x-first-death-queue\":\"celery\",\"x-first-death-reason\":\"rejected\"}";
    if (strcmp(h, want) != 0)
        fail_msg("replay headers\n got %s\nwant %s", h, want);
    free(h);
    assert_true(bytes_eq_cstr(props_string(&out.props, PROP_correlation_id), "t-1"));
    assert_true(bytes_eq_cstr(props_string(&out.props, PROP_reply_to), "r"));
    assert_true(bytes_eq(&out.body, &x.m.body));
    outgoing_free(&out);
    dec_free(&x);
}

static void t_reissue(void **state)
{
    (void)state;
    struct dec x;
    struct outgoing out;
    struct restamp_opts o = {.mode = RESTAMP_REISSUE, .now_ms = NOW, .new_id = "n-1"};
    build(&x, TASK(",\"x-last-death-queue\":\"celery\",\"x-delivery-count\":3", BODY), &o, &out,
          ST_OK);
    char *h = headers_json(out.headers);
    const char *want =
        "{\"argsrepr\":\"(1,)\",\"eta\":null,\"group\":null,\"group_index\":null,\"id\":\"n-1\","
        "\"lang\":\"py\",\"origin\":\"gen1@h\",\"parent_id\":\"t-1\",\"retries\":{\"type\":"
        "\"int32\",\"value\":0},\"root_id\":\"t-0\",\"task\":\"shop.charge\","
        "\"timelimit\":[null,null]}";
    if (strcmp(h, want) != 0)
        fail_msg("re-issue headers\n got %s\nwant %s", h, want);
    free(h);
    assert_true(bytes_eq_cstr(props_string(&out.props, PROP_correlation_id), "n-1"));
    assert_true(bytes_eq_cstr(&out.old_id, "t-1"));
    assert_true(bytes_eq_cstr(&out.routing_key, "celery"));
    outgoing_free(&out);
    dec_free(&x);

    /* No root_id: the copy names the old id as its root; retries added when absent. */
    build(&x, "{\"headers\":{\"task\":\"a\",\"id\":\"t-1\"," XDEATH "}}", &o, &out, ST_OK);
    h = headers_json(out.headers);
    assert_string_equal(h, "{\"task\":\"a\",\"id\":\"n-1\",\"parent_id\":\"t-1\",\"root_id\":"
                           "\"t-1\",\"retries\":{\"type\":\"int32\",\"value\":0}}");
    free(h);
    outgoing_free(&out);
    dec_free(&x);
}

static void t_refusals_and_edits(void **state)
{
    (void)state;
    struct dec x;
    struct outgoing out;
    /* protocol 1: the id is in the body; a replay goes, a re-issue does not */
    const char *p1 = "{\"headers\":{" XDEATH "},\"body\":\"{\\\"task\\\": \\\"a\\\", \\\"id\\\": "
                     "\\\"p-1\\\", \\\"args\\\": []}\"}";
    struct restamp_opts o = {.mode = RESTAMP_REISSUE, .now_ms = NOW, .new_id = "n"};
    build(&x, p1, &o, &out, ST_EUNSUPPORTED);
    dec_free(&x);
    o.mode = RESTAMP_REPLAY;
    build(&x, p1, &o, &out, ST_OK);
    outgoing_free(&out);
    dec_free(&x);
    /* no x-death: no target unless given */
    build(&x, "{\"headers\":{\"task\":\"a\",\"id\":\"t-1\"}}", &o, &out, ST_ENOTFOUND);
    dec_free(&x);
    o.to_exchange = "";
    o.to_routing_key = "celery";
    build(&x, "{\"headers\":{\"task\":\"a\",\"id\":\"t-1\"}}", &o, &out, ST_OK);
    outgoing_free(&out);
    dec_free(&x);

    /* --with: type → task, causation → parent_id, attempt → retries (its kind), id → id and
     * correlation_id; a kind given for a header stays (after py-amqp's kinds) */
    struct env_change ch[5];
    struct hval hv[5];
    const char *specs[] = {"type=shop.refund", "causation_id=c-9", "attempt=3", "id=x-1",
                           "header.tenant:int64=7"};
    struct error err;
    for (int i = 0; i < 5; i++)
        assert_int_equal(env_change_parse(specs[i], &ch[i], &hv[i], &err), ST_OK);
    struct restamp_opts w = {.mode = RESTAMP_REPLAY, .now_ms = NOW, .changes = ch, .n_changes = 5};
    build(&x, TASK("", BODY), &w, &out, ST_OK);
    const struct htable *t = out.headers;
    assert_true(bytes_eq_cstr(hval_str(htable_get(t, "task")), "shop.refund"));
    assert_true(bytes_eq_cstr(hval_str(htable_get(t, "parent_id")), "c-9"));
    assert_int_equal(htable_get(t, "retries")->kind, HV_I32);
    assert_int_equal(htable_get(t, "retries")->v.i, 3);
    assert_true(bytes_eq_cstr(hval_str(htable_get(t, "id")), "x-1"));
    assert_true(bytes_eq_cstr(props_string(&out.props, PROP_correlation_id), "x-1"));
    assert_int_equal(htable_get(t, "tenant")->kind, HV_I64);
    outgoing_free(&out);
    dec_free(&x);
    /* protocol 1 takes header edits only */
    w.n_changes = 1;
    build(&x, p1, &w, &out, ST_EUNSUPPORTED);
    dec_free(&x);
    for (int i = 0; i < 5; i++)
        env_change_release(&ch[i], &hv[i]);
}

/* The fixtures' expected copies (fixtures/celery: CASE.replay.jsonl, what Celery's move wrote,
 * captured; CASE.reissue.jsonl) are what restamp builds from the dead letters, exactly: properties,
 * headers (names, kinds, order) and body; "<uuid>" stands for the new id. */
static char *line_of(const char *path)
{
    struct bytes b = test_read_fixture(path);
    char *nl = memchr(b.data, '\n', b.len);
    if (nl)
        *nl = '\0';
    return (char *)b.data;
}

static char *part(const struct message *m, const char *key)
{
    json_t *j = snapshot_to_json(m);
    char *s = json_dumps(json_object_get(j, key), JSON_COMPACT | JSON_ENCODE_ANY);
    json_decref(j);
    return s;
}

static void t_fixture_copies(void **state)
{
    (void)state;
    static const char *const cases[] = {"exception", "default-exchange"};
    static const char *const uuid = "0b1c2d3e-4f50-4617-8829-3a4b5c6d7e8f";
    for (size_t i = 0; i < 2; i++) {
        for (int reissue = 0; reissue < 2; reissue++) {
            char path[128];
            snprintf(path, sizeof path, "celery/%s.jsonl", cases[i]);
            char *dead = line_of(path);
            snprintf(path, sizeof path, "celery/%s.%s.jsonl", cases[i],
                     reissue ? "reissue" : "replay");
            char *want_line = line_of(path);
            /* "<uuid>" → the pinned new id */
            struct strbuf sb;
            sb_init(&sb);
            for (const char *p = want_line; *p;) {
                if (strncmp(p, "\"<uuid>\"", 8) == 0) {
                    sb_addf(&sb, "\"%s\"", uuid);
                    p += 8;
                } else {
                    sb_addc(&sb, *p++);
                }
            }
            struct message want;
            struct error err;
            if (snapshot_parse_line(sb.buf, sb.len, &want, &err) != ST_OK)
                fail_msg("%s: %s", path, err.msg);
            struct dec x;
            struct outgoing out;
            struct restamp_opts o = {.mode = reissue ? RESTAMP_REISSUE : RESTAMP_REPLAY,
                                     .now_ms = NOW,
                                     .new_id = uuid,
                                     .dlq = "celery.dlq"};
            build(&x, dead, &o, &out, ST_OK);
            assert_true(bytes_eq(&out.exchange, &want.exchange));
            assert_true(bytes_eq(&out.routing_key, &want.queue)); /* the default exchange */
            struct message got;
            message_init(&got);
#define X(name)                                                                                    \
    if (props_has(&out.props, PROP_##name))                                                        \
        props_set_string(&got.props, PROP_##name, props_string(&out.props, PROP_##name)->data,     \
                         props_string(&out.props, PROP_##name)->len);
            PROP_STRING_LIST(X)
#undef X
            got.props.present |= out.props.present;
            got.props.delivery_mode = out.props.delivery_mode;
            got.props.priority = out.props.priority;
            got.props.timestamp = out.props.timestamp;
            htable_free(got.headers);
            got.headers = htable_copy(out.headers);
            got.headers_present = true;
            got.body = bytes_copy(&out.body);
            static const char *const keys[] = {"properties", "headers", "body"};
            for (size_t k = 0; k < 3; k++) {
                char *g = part(&got, keys[k]), *w = part(&want, keys[k]);
                if (strcmp(g, w) != 0)
                    fail_msg("%s %s\n got %s\nwant %s", path, keys[k], g, w);
                free(g);
                free(w);
            }
            message_free(&got);
            message_free(&want);
            outgoing_free(&out);
            dec_free(&x);
            sb_free(&sb);
            free(want_line);
            free(dead);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_recognition_table),
        cmocka_unit_test(t_void_and_long_kinds),
        cmocka_unit_test(t_wrong_kinds),
        cmocka_unit_test(t_parent_is_self),
        cmocka_unit_test(t_malformed_bodies),
        cmocka_unit_test(t_embed),
        cmocka_unit_test(t_protocol1),
        cmocka_unit_test(t_iso_times),
        cmocka_unit_test(t_replay_is_celerys_move),
        cmocka_unit_test(t_reissue),
        cmocka_unit_test(t_refusals_and_edits),
        cmocka_unit_test(t_fixture_copies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
