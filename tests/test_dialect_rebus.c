/*
 * dialect_rebus: the .NET times Rebus writes (the round-trip rbs2-senttime and the culture-
 * formatted failure times), Exception.ToString(), rbs2-error-details in each of its forms
 * (and cut short, overlong, hostile), recognition and its near-misses, and the replay and
 * re-issue rules — every fixture's replay held to fixtures/rebus/CASE.replay.jsonl.
 */
#include "dialect_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "decode.h"
#include "dotnet_text.h"
#include "rebus_details.h"
#include "restamp.h"
#include "snapshot.h"
#include "util.h"

/* ---- times ------------------------------------------------------------------------------ */

static void test_roundtrip_time(void **state)
{
    (void)state;
    int64_t ms;
    int off;
    static const struct {
        const char *s;
        int64_t ms;
        int off;
    } good[] = {
        {"2026-01-02T05:40:11.2501253+01:00", 1767328811250LL, 60},
        {"2026-01-01T23:41:02.0000001-05:00", 1767328862000LL, -300},
        {"2026-01-02T04:50:00Z", 1767329400000LL, 0},
        {"2026-01-02T04:50:00.5Z", 1767329400500LL, 0},
        {"2026-01-02T18:50:00.0000000+14:00", 1767329400000LL, 840},
        {"2024-02-29T00:00:00.0000000+00:00", 1709164800000LL, 0},
    };
    for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
        if (!dotnet_roundtrip_parse(good[i].s, strlen(good[i].s), &ms, &off))
            fail_msg("did not read %s", good[i].s);
        assert_int_equal(ms, good[i].ms);
        assert_int_equal(off, good[i].off);
    }
    static const char *const bad[] = {
        "2026-01-02 05:50:00",               /* no T, no offset */
        "2026-01-02T05:50:00",               /* no offset: local time of an unknown zone */
        "2026-01-02T05:50:00.0000000+25:00", /* offset beyond ±14:00 */
        "2026-01-02T05:50:00.0000000+14:01",
        "2026-01-02T05:50:00.00000000+01:00", /* 8 fraction digits */
        "2026-01-02T05:50:00.+01:00",
        "2026-02-30T05:50:00Z",
        "2026-01-02T05:50:00+0100",
        "2026-01-02T05:50:00Zjunk",
        "",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (dotnet_roundtrip_parse(bad[i], strlen(bad[i]), &ms, &off))
            fail_msg("read %s", bad[i]);
}

static void culture(const char *s, int64_t want, size_t used_want)
{
    int64_t ms;
    size_t used;
    if (!dotnet_culture_time_parse(s, strlen(s), &ms, &used))
        fail_msg("did not read \"%s\"", s);
    assert_int_equal(ms, want);
    assert_int_equal(used, used_want);
}

static void test_culture_time(void **state)
{
    (void)state;
    culture("01/02/2026 05:40:11 +01:00: x", 1767328811000LL, 26);          /* invariant */
    culture("1/1/2026 11:41:02 PM -05:00", 1767328862000LL, 27);            /* en-US */
    culture("1/2/2026 12:41:02 AM -05:00", 1767332462000LL, 27);            /* 12 AM is 0h */
    culture("1/2/2026 12:00:00 PM +00:00", 1767355200000LL, 27);            /* 12 PM is noon */
    culture("1/1/2026 11:41:02\xe2\x80\xafPM -05:00", 1767328862000LL, 29); /* ICU's U+202F */
    culture("02.01.2026 05:42:04 +01:00", 1767328924000LL, 26);             /* de-DE */
    culture("13/01/2026 05:42:04 +00:00", 1768282924000LL, 26);             /* en-GB: day > 12 */
    culture("2-1-2026 05:42:04 +01:00", 1767328924000LL, 24);               /* nl-NL */
    culture("2026-01-02 04:42:04 +00:00", 1767328924000LL, 26);             /* sv-SE */
    static const char *const bad[] = {
        "13/13/2026 05:50:00 +01:00",
        "01/02/26 05:50:00 +01:00",
        "01/02/2026 05:50:00",
        "01/02/2026 25:50:00 +01:00",
        "1/1/2026 13:41:02 PM -05:00",
        "01/02/2026 05:50:00 +15:00",
        "01-02/2026 05:50:00 +01:00",
        "something that is not a time",
        "",
        "1/",
        "1/1/",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int64_t ms;
        size_t used;
        if (dotnet_culture_time_parse(bad[i], strlen(bad[i]), &ms, &used))
            fail_msg("read \"%s\"", bad[i]);
    }
}

/* ---- Exception.ToString() ---------------------------------------------------------------- */

static void exc(const char *s, bool ok, const char *type, const char *message)
{
    struct dotnet_exception e;
    bool got = dotnet_exception_parse(s, strlen(s), &e);
    if (got != ok)
        fail_msg("\"%s\": %s", s, got ? "read" : "not read");
    if (!ok)
        return;
    char *t = xstrndup(s + e.type_off, e.type_len), *m = xstrndup(s + e.msg_off, e.msg_len);
    assert_string_equal(t, type);
    assert_string_equal(m, message);
    free(t);
    free(m);
}

static void test_exception_text(void **state)
{
    (void)state;
    exc("System.TimeoutException: Gateway timed out\n   at A.B()", true, "System.TimeoutException",
        "Gateway timed out");
    exc("System.Data.SqlClient.SqlException (0x80131904): deadlock\r\n   at A.B()", true,
        "System.Data.SqlClient.SqlException", "deadlock");
    exc("System.Net.Sockets.SocketException (111): Connection refused", true,
        "System.Net.Sockets.SocketException", "Connection refused");
    exc("System.InvalidOperationException: outer\n ---> System.Exception: inner\n   at X()", true,
        "System.InvalidOperationException", "outer");
    exc("System.ArgumentException: b\nsecond line of b\n   at X.Y()", true,
        "System.ArgumentException", "b\nsecond line of b");
    exc("System.Exception: Ausnahme\n   bei X.Y()", true, "System.Exception", "Ausnahme");
    exc("My.GenericException`1[System.String]: generic", true,
        "My.GenericException`1[System.String]", "generic");
    exc("My.Outer+Nested: nested", true, "My.Outer+Nested", "nested");
    exc("System.Exception", true, "System.Exception", "");
    exc("System.Exception:", true, "System.Exception", "");
    exc("something that is not a time: System.Exception: x", false, NULL, NULL);
    exc(": x", false, NULL, NULL);
    exc("System.: x", false, NULL, NULL);
    exc("A[: x", false, NULL, NULL);
    exc("", false, NULL, NULL);
}

/* ---- rbs2-error-details ------------------------------------------------------------------ */

static char *part(const char *s, size_t off, size_t len)
{
    return xstrndup(s + off, len);
}

static void test_details_aggregate(void **state)
{
    (void)state;
    const char *s = "2 unhandled exceptions: 01/02/2026 05:40:11 +01:00: System.TimeoutException: "
                    "slow\n   at A.B()\n\n01/02/2026 05:40:13 +01:00: System.IO.IOException: io\n"
                    "\nwith a blank line inside\n   at C.D()";
    struct rebus_details d;
    rebus_details_parse(s, strlen(s), &d);
    assert_int_equal(d.form, RD_AGGREGATE);
    assert_true(d.has_count);
    assert_int_equal(d.count, 2);
    assert_int_equal(d.n, 2);
    assert_true(d.has_latest);
    assert_int_equal(d.latest_ms, 1767328813000LL);
    const struct rebus_failure *f = rebus_details_last(&d);
    char *t = part(s, f->exc.type_off, f->exc.type_len),
         *m = part(s, f->exc.msg_off, f->exc.msg_len);
    assert_string_equal(t, "System.IO.IOException");
    assert_string_equal(m, "io\n\nwith a blank line inside"); /* a blank line not before a time */
    free(t);
    free(m);
    char *d0 = part(s, d.f[0].details_off, d.f[0].details_len);
    assert_string_equal(d0, "System.TimeoutException: slow\n   at A.B()");
    free(d0);

    /* Windows line ends, and the synthetic delivery-count failure listed first */
    s = "2 unhandled exceptions: 01/02/2026 04:45:30 +00:00: "
        "Rebus.Exceptions.RebusApplicationException: "
        "Received message with native delivery count header value = 11\r\n\r\n"
        "01/02/2026 04:45:10 +00:00: System.Exception: real\r\n   at X()";
    rebus_details_parse(s, strlen(s), &d);
    assert_int_equal(d.n, 2);
    assert_int_equal(d.latest_ms, 1767329130000LL); /* the newest, not the last */
    f = rebus_details_last(&d);
    m = part(s, f->exc.msg_off, f->exc.msg_len);
    assert_string_equal(m, "real");
    free(m);
    m = part(s, d.f[0].details_off, d.f[0].details_len);
    assert_string_equal(m, "Rebus.Exceptions.RebusApplicationException: Received message with "
                           "native delivery count header value = 11");
    free(m);

    /* cut short in the middle of a time (ErrorDetailsHeaderMaxLength) */
    s = "3 unhandled exceptions: 01/02/2026 05:40:11 +01:00: System.Exception: a\n\n01/02/20";
    rebus_details_parse(s, strlen(s), &d);
    assert_int_equal(d.count, 3);
    assert_int_equal(d.n, 1);
    m = part(s, d.f[0].exc.msg_off, d.f[0].exc.msg_len);
    assert_string_equal(m, "a\n\n01/02/20");
    free(m);
}

static void test_details_forms(void **state)
{
    (void)state;
    struct rebus_details d;
    const char *s =
        "Refund too large: Rebus.Exceptions.RebusApplicationException: Refund too large";
    rebus_details_parse(s, strlen(s), &d);
    assert_int_equal(d.form, RD_MESSAGE);
    assert_false(d.has_count);
    assert_int_equal(d.n, 1);
    assert_int_equal(d.f[0].details_off, strlen("Refund too large: "));
    /* a message with ": " inside it */
    s = "a: b: System.Exception: a: b";
    rebus_details_parse(s, strlen(s), &d);
    assert_int_equal(d.form, RD_MESSAGE);
    assert_int_equal(d.f[0].details_off, 6);
    s = "Caught exception: Billing.CardDeclinedException: Card declined\n   at X()";
    rebus_details_parse(s, strlen(s), &d);
    assert_int_equal(d.form, RD_CAUGHT);
    assert_true(d.f[0].has_exception);
    s = "System.Exception: forwarded\n   at X()";
    rebus_details_parse(s, strlen(s), &d);
    assert_int_equal(d.form, RD_EXCEPTION);
    s = "the handler said no";
    rebus_details_parse(s, strlen(s), &d);
    assert_int_equal(d.form, RD_TEXT);
    assert_false(d.f[0].has_exception);
    rebus_details_parse("", 0, &d);
    assert_int_equal(d.form, RD_EMPTY);
    assert_null(rebus_details_last(&d));
    s = "99999999999999999999 unhandled exceptions: x";
    rebus_details_parse(s, strlen(s), &d);
    assert_int_equal(d.form, RD_AGGREGATE);
    assert_false(d.has_count); /* overflow: not a count */
}

static void test_details_many_and_hostile(void **state)
{
    (void)state;
    struct strbuf sb;
    sb_init(&sb);
    sb_adds(&sb, "100 unhandled exceptions: ");
    for (int i = 0; i < 100; i++)
        sb_addf(&sb, "%s01/02/2026 05:40:%02d +01:00: System.Exception: n%d", i ? "\n\n" : "",
                i % 60, i);
    struct rebus_details d;
    rebus_details_parse(sb.buf, sb.len, &d);
    assert_int_equal(d.seen, 100);
    assert_int_equal(d.n, REBUS_MAX_FAILURES); /* counted, not all kept */
    assert_int_equal(d.latest_ms, 1767328859000LL);
    sb_free(&sb);

    /* many ": " that each could start a manual dead-letter's exception: stays linear */
    size_t n = 1u << 20;
    char *big = xmalloc(n);
    for (size_t i = 0; i < n; i += 4)
        memcpy(big + i, "a: a", 4);
    double t0 = clock_mono_s();
    rebus_details_parse(big, n, &d);
    assert_true(clock_mono_s() - t0 < 2.0);
    /* and blank lines everywhere, none before a time */
    for (size_t i = 0; i < n; i++)
        big[i] = i % 3 == 2 ? '1' : '\n';
    rebus_details_parse(big, n, &d);
    memcpy(big, "5 unhandled exceptions: ", 24);
    t0 = clock_mono_s();
    rebus_details_parse(big, n, &d);
    assert_true(clock_mono_s() - t0 < 2.0);
    /* bytes that are not text */
    for (size_t i = 0; i < n; i++)
        big[i] = (char)(i * 131 + 7);
    rebus_details_parse(big, n, &d);
    free(big);
}

/* ---- recognition and decode --------------------------------------------------------------- */

static void test_recognition(void **state)
{
    (void)state;
    struct message *m = msg();
    hdr(m, "rbs2-msg-id", "a");
    hdr(m, "rbs2-error-details", "x");
    recog(m, "rebus", 95);
    m = msg();
    hdr(m, "rbs2-source-queue", "billing");
    recog(m, "rebus", 90);
    m = msg();
    hdr(m, "rbs2-msg-id", "a");
    recog(m, "rebus", 70);
    m = msg();
    hdr(m, "rbs2-corr-id", "a");
    recog(m, "rebus", 60);
    m = msg(); /* look-alikes */
    hdr(m, "rbs-msg-id", "a");
    hdr(m, "rbs2_source_queue", "billing");
    hdr(m, "RBS2-ERROR-DETAILS", "x");
    hdr(m, "rbs2-", "x");
    recog(m, "amqp", 1);
    m = msg(); /* Rebus 1's names */
    hdr(m, "rebus-error-message", "x");
    hdr(m, "rebus-source-queue", "billing");
    recog(m, "amqp", 1);
    m = msg(); /* NServiceBus in the same queue name */
    hdr(m, "NServiceBus.MessageId", "a");
    hdr(m, "NServiceBus.FailedQ", "Sales");
    recog(m, "nservicebus", 95);
}

static void test_decode_rules(void **state)
{
    (void)state;
    struct message *m = msg();
    props_set_string(&m->props, PROP_correlation_id, "corr-prop", 9);
    hdr(m, "rbs2-msg-type", "Billing.ChargeCard"); /* no assembly */
    hdr(m, "rbs2-delivery-count", "9");
    hdr(m, "rbs2-error-details",
        "2 unhandled exceptions: 01/02/2026 05:40:11 +01:00: "
        "System.Exception: a");
    hdr(m, "rbs2-source-queue", "");
    hdr(m, "rbs2-senttime", "not a time");
    struct decoded d;
    decode_message(m, NOW, &d);
    assert_string_equal(d.dialect->name, "rebus");
    assert_true(d.env->defaulted & ED_ID); /* no rbs2-msg-id, no message_id */
    assert_true(bytes_eq_cstr(&d.env->type, "Billing.ChargeCard"));
    assert_true(bytes_eq_cstr(&d.env->correlation_id, "corr-prop"));
    assert_int_equal(d.env->attempt, 10);               /* delivery count + 1 beats N = 2 */
    assert_int_equal(d.env->first_seen_ms, NOW - 1000); /* unreadable: when it was read */
    assert_null(d.source.how);                          /* an empty source queue */
    assert_false(d.accepted);
    assert_string_equal(d.reject_reason, "missing_content_type");
    assert_int_equal(d.failed_at_ms, 1767328811000LL);
    decoded_free(&d);
    drop(m);

    m = msg(); /* wrong kinds: recognised, not read */
    htable_add(m->headers, "rbs2-msg-id", hval_int(HV_I32, 7));
    htable_add(m->headers, "rbs2-delivery-count", hval_cstring("4294967296"));
    htable_add(m->headers, "rbs2-error-details", hval_void());
    decode_message(m, NOW, &d);
    assert_string_equal(d.dialect->name, "rebus");
    assert_int_equal(d.env->attempt, 1);
    assert_true(d.env->defaulted & ED_ATTEMPT);
    assert_int_equal(d.error.len, 0);
    json_t *j = decoded_to_json(&d, NOW);
    assert_int_equal(json_array_size(json_object_get(json_object_get(j, "rebus"), "warnings")), 3);
    json_decref(j);
    decoded_free(&d);
    drop(m);
}

/* ---- replay and re-issue ----------------------------------------------------------------- */

static json_t *headers_json(const struct htable *h)
{
    json_t *o = json_object();
    for (size_t i = 0; i < h->n; i++) {
        const struct hval *v = &h->e[i].val;
        json_object_set_new(o, bytes_cstr(&h->e[i].key),
                            v->kind == HV_STRING
                                ? json_stringn((const char *)v->v.s.data, v->v.s.len)
                                : json_null());
    }
    return o;
}

static void replay_held_to(const char *name)
{
    char rel[128], want_rel[128];
    snprintf(rel, sizeof rel, "rebus/%s.jsonl", name);
    snprintf(want_rel, sizeof want_rel, "rebus/%s.replay.jsonl", name);
    struct bytes src = test_read_fixture(rel), want = test_read_fixture(want_rel);
    const char *s = (const char *)src.data, *w = (const char *)want.data;
    size_t count = 0;
    while (s && *s) {
        const char *sn = strchr(s, '\n'), *wn = strchr(w, '\n');
        assert_non_null(sn);
        assert_non_null(wn);
        struct message m;
        struct error err = {0};
        assert_int_equal(snapshot_parse_line(s, (size_t)(sn - s), &m, &err), ST_OK);
        json_t *exp = json_loadb(w, (size_t)(wn - w), 0, NULL);
        assert_non_null(exp);
        struct decoded d;
        decode_message(&m, NOW, &d);
        struct restamp_opts o = {.mode = RESTAMP_REPLAY, .now_ms = NOW};
        struct outgoing out;
        if (restamp_build(&d, &o, &out, &err) != ST_OK)
            fail_msg("%s: %s", want_rel, err.msg);
        assert_true(bytes_eq_cstr(&out.exchange, ""));
        assert_true(
            bytes_eq_cstr(&out.routing_key, json_string_value(json_object_get(exp, "queue"))));
        /* unchanged: every header in order, the properties, the body */
        json_t *got = headers_json(out.headers);
        char *a = json_dumps(json_object_get(exp, "headers"), JSON_COMPACT | JSON_PRESERVE_ORDER);
        char *b = json_dumps(got, JSON_COMPACT | JSON_PRESERVE_ORDER);
        assert_string_equal(b, a);
        free(a);
        free(b);
        json_decref(got);
        assert_true(bytes_eq(&out.body, &m.body));
        const char *pm =
            json_string_value(json_object_get(json_object_get(exp, "properties"), "message_id"));
        assert_true(bytes_eq_cstr(props_string(&out.props, PROP_message_id), pm));
        assert_int_equal(out.props.delivery_mode, 2);
        outgoing_free(&out);
        decoded_free(&d);
        message_free(&m);
        json_decref(exp);
        s = sn + 1;
        w = wn + 1;
        count++;
    }
    assert_true(count > 0);
    bytes_free(&src);
    bytes_free(&want);
}

static void test_replay_fixtures(void **state)
{
    (void)state;
    static const char *const cases[] = {"typical", "inner-exception", "delivery-count",
                                        "manual-deadletter", "foreign"};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        replay_held_to(cases[i]);
}

static void test_restamp_rules(void **state)
{
    (void)state;
    struct message *m = msg();
    props_set_string(&m->props, PROP_message_id, "id-1", 4);
    hdr(m, "rbs2-msg-id", "id-1");
    hdr(m, "rbs2-corr-seq", "3");
    hdr(m, "rbs2-senttime", "2026-01-02T05:40:11.2501253+01:00");
    hdr(m, "rbs2-delivery-count", "2");
    hdr(m, "rbs2-error-details", "1 unhandled exceptions: 01/02/2026 05:40:11 +01:00: X.Y: z");
    hdr(m, "rbs2-source-queue", "billing");
    struct decoded d;
    decode_message(m, NOW, &d);

    /* strip_fault: a replay without Rebus's failure headers */
    struct restamp_opts o = {.mode = RESTAMP_REPLAY, .now_ms = NOW, .strip_fault = true};
    struct outgoing out;
    struct error err = {0};
    assert_int_equal(restamp_build(&d, &o, &out, &err), ST_OK);
    assert_null(htable_get(out.headers, "rbs2-error-details"));
    assert_null(htable_get(out.headers, "rbs2-source-queue"));
    assert_non_null(htable_get(out.headers, "rbs2-delivery-count"));
    outgoing_free(&out);

    /* re-issue: a new id, the chain one level deeper, sent now, the failure left behind */
    o = (struct restamp_opts){.mode = RESTAMP_REISSUE, .now_ms = NOW + 123, .new_id = "new-1"};
    assert_int_equal(restamp_build(&d, &o, &out, &err), ST_OK);
    const struct htable *h = out.headers;
    assert_true(bytes_eq_cstr(&htable_get(h, "rbs2-msg-id")->v.s, "new-1"));
    assert_true(bytes_eq_cstr(props_string(&out.props, PROP_message_id), "new-1"));
    assert_true(bytes_eq_cstr(&htable_get(h, "rbs2-corr-id")->v.s, "id-1"));
    assert_true(bytes_eq_cstr(&htable_get(h, "rbs2-corr-seq")->v.s, "4"));
    assert_true(
        bytes_eq_cstr(&htable_get(h, "rbs2-senttime")->v.s, "2026-01-02T05:00:00.1230000+00:00"));
    assert_null(htable_get(h, "rbs2-error-details"));
    assert_null(htable_get(h, "rbs2-source-queue"));
    assert_null(htable_get(h, "rbs2-delivery-count"));
    assert_true(bytes_eq_cstr(&h->e[0].key, "rbs2-msg-id")); /* kept in its place */
    assert_true(bytes_eq_cstr(&out.routing_key, "billing"));
    int64_t ms;
    int off;
    const struct bytes *st = &htable_get(h, "rbs2-senttime")->v.s;
    assert_true(dotnet_roundtrip_parse(st->data, st->len, &ms, &off));
    assert_int_equal(ms, NOW + 123);
    outgoing_free(&out);
    decoded_free(&d);
    drop(m);

    /* no source queue: Rebus's tool would leave it in the error queue */
    m = msg();
    hdr(m, "rbs2-msg-id", "id-2");
    hdr(m, "rbs2-error-details", "Caught exception: X.Y: z");
    decode_message(m, NOW, &d);
    o = (struct restamp_opts){.mode = RESTAMP_REPLAY, .now_ms = NOW};
    assert_int_equal(restamp_build(&d, &o, &out, &err), ST_ENOTFOUND);
    outgoing_free(&out);
    o.to_exchange = "RebusDirect"; /* --to gives it one */
    o.to_routing_key = "billing";
    assert_int_equal(restamp_build(&d, &o, &out, &err), ST_OK);
    assert_true(bytes_eq_cstr(&out.exchange, "RebusDirect"));
    outgoing_free(&out);
    decoded_free(&d);
    drop(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_time),  cmocka_unit_test(test_culture_time),
        cmocka_unit_test(test_exception_text),  cmocka_unit_test(test_details_aggregate),
        cmocka_unit_test(test_details_forms),   cmocka_unit_test(test_details_many_and_hostile),
        cmocka_unit_test(test_recognition),     cmocka_unit_test(test_decode_rules),
        cmocka_unit_test(test_replay_fixtures), cmocka_unit_test(test_restamp_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
