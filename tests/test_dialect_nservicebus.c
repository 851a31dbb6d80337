/*
 * dialect_nservicebus: NServiceBus's wire times (and the malformed ones), the enclosed types,
 * ServiceControl's unique id (MD5 included), recognition and its near-misses, and the replay
 * and re-issue rules — every fixture's copy held to fixtures/nservicebus/CASE.replay.jsonl and
 * .reissue.jsonl header by header.
 */
#include "dialect_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "decode.h"
#include "dotnet_text.h"
#include "hval_json.h"
#include "md5.h"
#include "nservicebus.h"
#include "restamp.h"
#include "snapshot.h"
#include "util.h"

/* ---- times ------------------------------------------------------------------------------ */

static bool wire(const char *s, int64_t *ms)
{
    return nsb_wire_time_parse(s, strlen(s), ms);
}

static void test_wire_time(void **state)
{
    (void)state;
    int64_t ms = 0;
    assert_true(wire("2026-04-29 22:06:16:406166 Z", &ms));
    assert_int_equal(ms, 1777500376406LL); /* microseconds truncated to the millisecond */
    char back[29];
    nsb_wire_time_format(ms, back);
    assert_string_equal(back, "2026-04-29 22:06:16:406000 Z");
    assert_true(wire("1970-01-01 00:00:00:000999 Z", &ms));
    assert_int_equal(ms, 0);
    assert_true(wire("0001-01-01 00:00:00:000000 Z", &ms));
    assert_int_equal(ms, -62135596800000LL);
    assert_true(wire("9999-12-31 23:59:59:999999 Z", &ms));
    assert_int_equal(ms, 253402300799999LL);
    /* NServiceBus checks digits and length, not the separators (a captured legacy value) */
    assert_true(wire("2020-10-31 13,59,25,359877 Z", &ms));
    nsb_wire_time_format(ms, back);
    assert_string_equal(back, "2020-10-31 13:59:25:359000 Z");
    assert_true(wire("2024-02-29 23:59:59:999999 Z", &ms));
    assert_int_equal(ms, 1709251199999LL);
}

static void test_wire_time_malformed(void **state)
{
    (void)state;
    static const char *const bad[] = {
        "2026-01-02T04:40:12.731904Z",   /* ISO: 27 bytes */
        "2026-01-02 04:40:11:250125",    /* no " Z" */
        "2026-01-02 04:40:11:250125 Z ", /* 29 */
        "2026-01-02 04:40:1x:731904 Z",  /* a letter in a digit place */
        "2026-13-02 04:40:11:250125 Z",  /* month 13 */
        "2026-00-02 04:40:11:250125 Z",  /* month 0 */
        "2025-02-29 00:00:00:000000 Z",  /* not a leap year */
        "2026-04-31 00:00:00:000000 Z",  /* April has 30 days */
        "2026-01-02 24:00:00:000000 Z",  /* hour 24 */
        "2026-01-02 23:60:00:000000 Z",
        "2026-01-02 23:59:60:000000 Z", /* no leap seconds in DateTimeOffset */
        "0000-01-01 00:00:00:000000 Z", /* year 0 */
        "-026-01-02 04:40:11:250125 Z",
        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int64_t ms = 42;
        if (wire(bad[i], &ms))
            fail_msg("read \"%s\"", bad[i]);
        assert_int_equal(ms, 42);
    }
    /* bytes that are not text at all, and a NUL inside */
    int64_t ms;
    assert_false(nsb_wire_time_parse("2026-01-02 04:40\0011:250125 Z", 28, &ms));
    unsigned char junk[28];
    memset(junk, 0xff, sizeof junk);
    assert_false(nsb_wire_time_parse(junk, sizeof junk, &ms));
}

/* ---- types ------------------------------------------------------------------------------ */

static void first(const char *s, const char *name, const char *qual)
{
    struct nsb_type_name t;
    nsb_first_type(s, strlen(s), &t);
    char *n = xstrndup(s + t.name_off, t.name_len), *q = xstrndup(s + t.qual_off, t.qual_len);
    assert_string_equal(n, name);
    assert_string_equal(q, qual);
    free(n);
    free(q);
}

static void test_enclosed_types(void **state)
{
    (void)state;
    first("Core.MessageToSend, MyAssembly, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null",
          "Core.MessageToSend",
          "MyAssembly, Version=1.0.0.0, Culture=neutral, PublicKeyToken=null");
    first("Orders.OrderAccepted, Orders;Orders.IOrderEvent, Orders", "Orders.OrderAccepted",
          "Orders");
    first("Sales.PlaceOrder", "Sales.PlaceOrder", "");
    first("  Sales.PlaceOrder  ;x", "Sales.PlaceOrder", "");
    first("System.Collections.Generic.List`1[[Sales.Item, Sales, Version=1.0.0.0]], mscorlib",
          "System.Collections.Generic.List`1[[Sales.Item, Sales, Version=1.0.0.0]]", "mscorlib");
    first(";;, Asm", "", "");
    first("", "", "");
    first("A, ", "A", "");
    first("]]], x", "]]]", "x"); /* unbalanced brackets do not run away */
}

/* ---- ServiceControl's unique id -------------------------------------------------------- */

static void test_md5(void **state)
{
    (void)state;
    static const struct {
        const char *in, *hex;
    } v[] = {
        {"", "d41d8cd98f00b204e9800998ecf8427e"},
        {"abc", "900150983cd24fb0d6963f7d28e17f72"},
        {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
        {"12345678901234567890123456789012345678901234567890123456789012345678901234567890",
         "57edf4a22be3c955ac49da2e2107b67a"},
    };
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        unsigned char d[16];
        char hex[33];
        md5_digest(v[i].in, strlen(v[i].in), d);
        for (int k = 0; k < 16; k++)
            snprintf(hex + 2 * k, 3, "%02x", d[k]);
        assert_string_equal(hex, v[i].hex);
    }
}

static void test_deterministic_guid(void **state)
{
    (void)state;
    char g[37];
    /* frameworks.md's example, checked against Python's uuid.UUID(bytes_le=md5) */
    nsb_deterministic_guid("eb8cf6f5-6817-4e9f-ba8e-b43b016c458a", 36, "Sales", 5, g);
    assert_string_equal(g, "7e0fd852-b372-31c8-7e67-68eec671cb06");
    nsb_deterministic_guid("eb8cf6f5-6817-4e9f-ba8e-b43b016c458a", 36, "HeaderWriterError", 17, g);
    assert_string_equal(g, "4d0fa359-a748-5c14-e6c2-70c018dc84f7");
    nsb_deterministic_guid(NULL, 0, NULL, 0, g); /* MD5 of nothing */
    assert_string_equal(g, "d98c1dd4-008f-04b2-e980-0998ecf8427e");

    struct bytes id = bytes_from_cstr("eb8cf6f5-6817-4e9f-ba8e-b43b016c458a"), out;
    bool from;
    struct message *m = msg();
    hdr(m, "NServiceBus.MessageId", "eb8cf6f5-6817-4e9f-ba8e-b43b016c458a");
    assert_false(nsb_servicecontrol_id(m, &id, &out, &from)); /* no endpoint: none */
    hdr(m, "NServiceBus.ReplyToAddress", "Sales@WEB01");
    assert_true(nsb_servicecontrol_id(m, &id, &out, &from));
    assert_false(from);
    assert_true(bytes_eq_cstr(&out, "7e0fd852-b372-31c8-7e67-68eec671cb06"));
    bytes_free(&out);
    hdr(m, "NServiceBus.FailedQ", "Sales@MACHINE01"); /* FailedQ before ReplyTo, '@' cut */
    assert_true(nsb_servicecontrol_id(m, &id, &out, &from));
    assert_true(bytes_eq_cstr(&out, "7e0fd852-b372-31c8-7e67-68eec671cb06"));
    bytes_free(&out);
    hdr(m, "NServiceBus.ProcessingEndpoint", "HeaderWriterError"); /* ProcessingEndpoint first */
    assert_true(nsb_servicecontrol_id(m, &id, &out, &from));
    assert_true(bytes_eq_cstr(&out, "4d0fa359-a748-5c14-e6c2-70c018dc84f7"));
    bytes_free(&out);
    hdr(m, "ServiceControl.Retry.UniqueMessageId", "a5f6da09-5f3f-5394-c09c-dffbe99c357a");
    assert_true(nsb_servicecontrol_id(m, &id, &out, &from)); /* an existing one wins */
    assert_true(from);
    assert_true(bytes_eq_cstr(&out, "a5f6da09-5f3f-5394-c09c-dffbe99c357a"));
    bytes_free(&out);
    bytes_free(&id);
    drop(m);
}

/* ---- recognition ------------------------------------------------------------------------- */

static void test_recognition(void **state)
{
    (void)state;
    struct message *m = msg();
    hdr(m, "NServiceBus.MessageId", "a");
    hdr(m, "NServiceBus.FailedQ", "Sales");
    recog(m, "nservicebus", 95);
    m = msg();
    hdr(m, "NServiceBus.ExceptionInfo.ExceptionType", "System.Exception");
    recog(m, "nservicebus", 90); /* a fault header without the id */
    m = msg();
    hdr(m, "NServiceBus.MessageId", "a");
    recog(m, "nservicebus", 70); /* an NServiceBus message, not a fault copy */
    m = msg();
    hdr(m, "NServiceBus.EnclosedMessageTypes", "Sales.PlaceOrder");
    recog(m, "nservicebus", 60);
    /* near-misses: plain AMQP */
    m = msg();
    hdr(m, "nservicebus.failedq", "Sales"); /* names are compared exactly */
    hdr(m, "nservicebus.messageid", "a");
    recog(m, "amqp", 1);
    m = msg();
    hdr(m, "FailedQ", "Sales");
    hdr(m, "ExceptionType", "System.Exception");
    hdr(m, "NServiceBusX.FailedQ", "Sales");
    recog(m, "amqp", 1);
    m = msg(); /* the queue's name alone says nothing: Rebus's error queue is "error" too */
    recog(m, "amqp", 1);
    m = msg();
    hdr(m, "NServiceBus", "x"); /* no dot */
    recog(m, "amqp", 1);
    /* a Rebus copy in "error" is Rebus's */
    m = msg();
    hdr(m, "rbs2-msg-id", "a");
    hdr(m, "rbs2-source-queue", "billing");
    recog(m, "rebus", 95);
    /* a wrong kind still names the header: recognised, not read */
    m = msg();
    htable_add(m->headers, "NServiceBus.FailedQ", hval_int(HV_I32, 5));
    recog(m, "nservicebus", 90);
}

static void test_decode_rules(void **state)
{
    (void)state;
    struct message *m = msg();
    props_set_string(&m->props, PROP_message_id, "p-1", 3);
    props_set_string(&m->props, PROP_correlation_id, "corr-prop", 9);
    props_set_string(&m->props, PROP_type, "Prop.Type", 9);
    hdr(m, "NServiceBus.FailedQ", "@MACHINE");   /* no queue before '@' */
    hdr(m, "NServiceBus.CorrelationId", "corr"); /* no ConversationId: CorrelationId */
    hdr(m, "NServiceBus.TimeSent", "2026-01-02 04:40:11:250125 Z");
    hdr(m, "NServiceBus.TimeOfFailure", "yesterday");
    hdr(m, "NServiceBus.ExceptionInfo.Message", "only a message");
    struct decoded d;
    decode_message(m, NOW, &d);
    assert_string_equal(d.dialect->name, "nservicebus");
    assert_true(bytes_eq_cstr(&d.env->id, "p-1"));         /* message_id */
    assert_true(bytes_eq_cstr(&d.env->type, "Prop.Type")); /* type property */
    assert_true(bytes_eq_cstr(&d.env->correlation_id, "corr"));
    assert_int_equal(d.env->first_seen_ms, 1767328811250LL);
    assert_int_equal(d.failed_at_ms, 0);
    assert_null(d.source.how);
    assert_true(bytes_eq_cstr(&d.error, "only a message"));
    assert_true(d.accepted);
    json_t *j = decoded_to_json(&d, NOW);
    json_t *w = json_object_get(json_object_get(j, "nservicebus"), "warnings");
    assert_int_equal(json_array_size(w), 2); /* the time, and FailedQ naming no queue */
    json_decref(j);
    decoded_free(&d);
    drop(m);

    m = msg(); /* no message_id: the transport's poison rule */
    hdr(m, "NServiceBus.MessageId", "h-1");
    decode_message(m, NOW, &d);
    assert_false(d.accepted);
    assert_string_equal(d.reject_reason, "missing_message_id");
    assert_true(bytes_eq_cstr(&d.env->id, "h-1"));
    assert_true(bytes_eq_cstr(&d.env->type, "message"));
    assert_true(d.env->defaulted & ED_TYPE);
    decoded_free(&d);
    drop(m);
}

/* ---- replay and re-issue, held to the fixtures ------------------------------------------- */

static bool uuid_shaped(const char *s)
{
    if (strlen(s) != 36)
        return false;
    for (int i = 0; i < 36; i++) {
        bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : !strchr("0123456789abcdef", s[i]))
            return false;
    }
    return true;
}

/* exp with "<uuid>" / "<any>" placeholders; objects compared in order when ordered. */
static bool wild(json_t *exp, json_t *got, bool ordered)
{
    if (json_is_string(exp) && json_is_string(got)) {
        const char *e = json_string_value(exp), *g = json_string_value(got);
        if (strcmp(e, "<uuid>") == 0)
            return uuid_shaped(g);
        if (strcmp(e, "<any>") == 0)
            return true;
        return json_equal(exp, got);
    }
    if (json_is_object(exp) && json_is_object(got)) {
        if (json_object_size(exp) != json_object_size(got))
            return false;
        if (!ordered) {
            const char *k;
            json_t *v;
            json_object_foreach(exp, k, v)
            {
                json_t *o = json_object_get(got, k);
                if (!o || !wild(v, o, false))
                    return false;
            }
            return true;
        }
        void *a = json_object_iter(exp), *b = json_object_iter(got);
        for (; a && b; a = json_object_iter_next(exp, a), b = json_object_iter_next(got, b))
            if (strcmp(json_object_iter_key(a), json_object_iter_key(b)) != 0 ||
                !wild(json_object_iter_value(a), json_object_iter_value(b), ordered))
                return false;
        return true;
    }
    return json_equal(exp, got);
}

static void check(const char *what, json_t *exp, json_t *got, bool ordered)
{
    if (wild(exp, got, ordered))
        return;
    char *e = json_dumps(exp, JSON_COMPACT), *g = json_dumps(got, JSON_COMPACT);
    fail_msg("%s:\nwant %s\ngot  %s", what, e, g);
    free(e);
    free(g);
}

static json_t *copy_json(const struct outgoing *out)
{
    struct message t;
    message_init(&t);
    for (int f = 0; f < PROP_delivery_mode; f++) {
        const struct bytes *b = props_string(&out->props, (enum prop_flag)f);
        if (b)
            props_set_string(&t.props, (enum prop_flag)f, b->data, b->len);
    }
    t.props.present |= out->props.present & ((1u << PROP_delivery_mode) | (1u << PROP_priority) |
                                             (1u << PROP_timestamp));
    t.props.delivery_mode = out->props.delivery_mode;
    t.props.priority = out->props.priority;
    t.props.timestamp = out->props.timestamp;
    htable_free(t.headers);
    t.headers = htable_copy(out->headers);
    t.headers_present = true;
    t.body = bytes_copy(&out->body);
    json_t *j = snapshot_to_json(&t);
    message_free(&t);
    return j;
}

static json_t *load_lines(const char *rel, struct message **msgs, size_t *n)
{
    struct bytes all = test_read_fixture(rel);
    json_t *arr = json_array();
    size_t cap = 0;
    *n = 0;
    const char *s = (const char *)all.data;
    while (s && *s) {
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        if (len) {
            json_t *j = json_loadb(s, len, 0, NULL);
            assert_non_null(j);
            json_array_append_new(arr, j);
            if (msgs) {
                xgrow((void **)msgs, &cap, *n + 1, sizeof **msgs);
                struct error err = {0};
                assert_int_equal(snapshot_parse_line(s, len, &(*msgs)[*n], &err), ST_OK);
            }
            (*n)++;
        }
        s = nl ? nl + 1 : s + len;
    }
    bytes_free(&all);
    return arr;
}

static void held_to(const char *name, enum restamp_mode mode)
{
    char rel[128], want_rel[128];
    snprintf(rel, sizeof rel, "nservicebus/%s.jsonl", name);
    snprintf(want_rel, sizeof want_rel, "nservicebus/%s.%s.jsonl", name,
             mode == RESTAMP_REPLAY ? "replay" : "reissue");
    struct message *msgs = NULL;
    size_t n, nw;
    json_t *src = load_lines(rel, &msgs, &n);
    json_t *want = load_lines(want_rel, NULL, &nw);
    assert_int_equal(n, nw);
    for (size_t i = 0; i < n; i++) {
        struct decoded d;
        decode_message(&msgs[i], NOW, &d);
        struct restamp_opts o = {.mode = mode, .now_ms = NOW};
        struct outgoing out;
        struct error err = {0};
        enum status st = restamp_build(&d, &o, &out, &err);
        if (st != ST_OK)
            fail_msg("%s #%zu: %s", want_rel, i, err.msg);
        json_t *w = json_array_get(want, i);
        assert_true(bytes_eq_cstr(&out.exchange, ""));
        assert_true(
            bytes_eq_cstr(&out.routing_key, json_string_value(json_object_get(w, "queue"))));
        json_t *got = copy_json(&out);
        check("properties", json_object_get(w, "properties"), json_object_get(got, "properties"),
              false);
        check("headers", json_object_get(w, "headers"), json_object_get(got, "headers"), true);
        check("body", json_object_get(w, "body"), json_object_get(got, "body"), false);
        if (mode == RESTAMP_REISSUE) /* one new id, in the header and the property */
            assert_true(bytes_eq(&out.id, props_string(&out.props, PROP_message_id)));
        json_decref(got);
        outgoing_free(&out);
        decoded_free(&d);
        message_free(&msgs[i]);
    }
    free(msgs);
    json_decref(src);
    json_decref(want);
}

static void test_replay_fixtures(void **state)
{
    (void)state;
    static const char *const cases[] = {"typical",         "failedq-machine", "inner-exception",
                                        "delayed-retries", "retried-before",  "error-log"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        held_to(cases[i], RESTAMP_REPLAY);
}

static void test_reissue_fixtures(void **state)
{
    (void)state;
    static const char *const cases[] = {"typical", "failedq-machine", "retried-before"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        held_to(cases[i], RESTAMP_REISSUE);
}

static void test_restamp_options(void **state)
{
    (void)state;
    struct message *m = msg();
    props_set_string(&m->props, PROP_message_id, "m-1", 3);
    hdr(m, "NServiceBus.MessageId", "m-1");
    hdr(m, "NServiceBus.FailedQ", "Sales");
    hdr(m, "NServiceBus.Retries", "2"); /* any name starting with the prefix goes */
    hdr(m, "NServiceBus.FailedQueueHint", "x");
    hdr(m, "NServiceBus.ExceptionInfoX", "kept"); /* the prefix is "ExceptionInfo." */
    hdr(m, "ServiceControl.EditOfSomething", "x");
    struct decoded d;
    decode_message(m, NOW, &d);
    struct restamp_opts o = {
        .mode = RESTAMP_REPLAY, .now_ms = NOW, .ack_queue = true, .ack_queue_name = "error"};
    struct outgoing out;
    struct error err = {0};
    assert_int_equal(restamp_build(&d, &o, &out, &err), ST_OK);
    const struct htable *h = out.headers;
    assert_int_equal(h->n, 4);
    assert_true(bytes_eq_cstr(&h->e[0].key, "NServiceBus.MessageId"));
    assert_true(bytes_eq_cstr(&h->e[1].key, "NServiceBus.ExceptionInfoX"));
    assert_true(bytes_eq_cstr(&h->e[2].key, "ServiceControl.Retry.UniqueMessageId"));
    assert_true(bytes_eq_cstr(&h->e[3].key, "ServiceControl.Retry.AcknowledgementQueue"));
    assert_true(bytes_eq_cstr(&h->e[3].val.v.s, "error"));
    outgoing_free(&out);

    /* type= and correlation_id= go where NServiceBus keeps them */
    struct env_change c[2];
    struct hval hv[2];
    assert_int_equal(env_change_parse("type=Sales.NewType", &c[0], &hv[0], &err), ST_OK);
    assert_int_equal(env_change_parse("correlation_id=conv-9", &c[1], &hv[1], &err), ST_OK);
    o.changes = c;
    o.n_changes = 2;
    o.ack_queue = false;
    assert_int_equal(restamp_build(&d, &o, &out, &err), ST_OK);
    assert_true(bytes_eq_cstr(&htable_get(out.headers, "NServiceBus.EnclosedMessageTypes")->v.s,
                              "Sales.NewType"));
    assert_true(bytes_eq_cstr(props_string(&out.props, PROP_type), "Sales.NewType"));
    assert_true(
        bytes_eq_cstr(&htable_get(out.headers, "NServiceBus.ConversationId")->v.s, "conv-9"));
    assert_null(htable_get(out.headers, "ServiceControl.Retry.AcknowledgementQueue"));
    outgoing_free(&out);
    env_change_release(&c[0], &hv[0]);
    env_change_release(&c[1], &hv[1]);
    assert_int_equal(env_change_parse("attempt=3", &c[0], &hv[0], &err), ST_OK);
    o.n_changes = 1;
    assert_int_equal(restamp_build(&d, &o, &out, &err), ST_EUNSUPPORTED);
    outgoing_free(&out);
    env_change_release(&c[0], &hv[0]);
    decoded_free(&d);
    drop(m);

    /* a message the broker dead-lettered is not a failure ServiceControl knows: no id added */
    m = msg();
    props_set_string(&m->props, PROP_message_id, " \t", 2);
    hdr(m, "NServiceBus.MessageId", "m-3");
    hdr(m, "NServiceBus.ProcessingEndpoint", "Sales");
    decode_message(m, NOW, &d);
    assert_false(d.accepted); /* a blank message_id is none (IsNullOrWhiteSpace) */
    o = (struct restamp_opts){
        .mode = RESTAMP_REPLAY, .now_ms = NOW, .to_exchange = "", .to_routing_key = "Sales"};
    assert_int_equal(restamp_build(&d, &o, &out, &err), ST_OK);
    assert_null(htable_get(out.headers, "ServiceControl.Retry.UniqueMessageId"));
    outgoing_free(&out);
    o.mode = RESTAMP_REISSUE;
    assert_int_equal(restamp_build(&d, &o, &out, &err), ST_OK);
    assert_null(htable_get(out.headers, "ServiceControl.EditOf"));
    assert_true(bytes_eq(&htable_get(out.headers, "NServiceBus.MessageId")->v.s, &out.id));
    outgoing_free(&out);
    decoded_free(&d);
    drop(m);

    /* no FailedQ and no x-death: nowhere to go back */
    m = msg();
    props_set_string(&m->props, PROP_message_id, "m-2", 3);
    hdr(m, "NServiceBus.MessageId", "m-2");
    decode_message(m, NOW, &d);
    o = (struct restamp_opts){.mode = RESTAMP_REPLAY, .now_ms = NOW};
    assert_int_equal(restamp_build(&d, &o, &out, &err), ST_ENOTFOUND);
    outgoing_free(&out);
    decoded_free(&d);
    drop(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wire_time),          cmocka_unit_test(test_wire_time_malformed),
        cmocka_unit_test(test_enclosed_types),     cmocka_unit_test(test_md5),
        cmocka_unit_test(test_deterministic_guid), cmocka_unit_test(test_recognition),
        cmocka_unit_test(test_decode_rules),       cmocka_unit_test(test_replay_fixtures),
        cmocka_unit_test(test_reissue_fixtures),   cmocka_unit_test(test_restamp_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
