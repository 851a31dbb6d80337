/*
 * restamp's diff (what the plan shows and the journal keeps) with its JSON form, and the kind
 * a header edit gives the copy's header.
 */
#include "restamp_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "decode.h"
#include "hval_json.h"
#include "restamp_diff.h"
#include "sha256.h"
#include "util.h"

/* ---- the diff ---------------------------------------------------------------------- */

static const struct diff_row *row(const struct diff *d, enum diff_section s, const char *name)
{
    for (size_t i = 0; i < d->n; i++)
        if (d->rows[i].section == s && d->rows[i].name && strcmp(d->rows[i].name, name) == 0)
            return &d->rows[i];
    fail_msg("no %s row %s", diff_section_name(s), name);
    abort(); /* not reached: fail_msg leaves the test (cmocka does not mark it noreturn) */
}

static void assert_row(const struct diff_row *r, enum diff_op op, const char *old, const char *nw)
{
    if (!r) {
        fail_msg("no such row");
        abort(); /* not reached */
    }
    if (r->op != op)
        fail_msg("row %s is %s, not %s", r->name ? r->name : "(body)", diff_op_name(r->op),
                 diff_op_name(op));
    if (old)
        assert_string_equal(r->old_text, old);
    else
        assert_null(r->old_text);
    if (nw)
        assert_string_equal(r->new_text, nw);
    else
        assert_null(r->new_text);
}

/* The journal's diff (restamp_changes_json) is diff_to_json of the whole diff, and the copy
 * carries both digests. */
static void assert_changes_and_digests(const struct message *old, const struct outgoing *out,
                                       const struct diff *d, bool body_same)
{
    json_t *whole = diff_to_json(d);
    json_t *changes = restamp_changes_json(old, out);
    char *a = json_dumps(whole, JSON_COMPACT | JSON_PRESERVE_ORDER);
    char *b = json_dumps(changes, JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(a, b);
    /* ... and the text the journal holds is that dump, byte for byte, written without it. */
    size_t tl = 0;
    char *t = restamp_changes_text(old, out, &tl);
    assert_non_null(t);
    assert_int_equal(tl, strlen(b));
    assert_string_equal(t, b);
    free(t);
    free(a);
    free(b);
    json_decref(whole);
    json_decref(changes);
    char sha[65];
    sha256_hex(old->body.len ? (const void *)old->body.data : "", old->body.len, sha);
    assert_string_equal(out->old_body_sha256, sha);
    sha256_hex(out->body.len ? (const void *)out->body.data : "", out->body.len, sha);
    assert_string_equal(out->body_sha256, sha);
    if (body_same)
        assert_string_equal(out->body_sha256, out->old_body_sha256);
    else
        assert_string_not_equal(out->body_sha256, out->old_body_sha256);
}

/* plain_msg() replayed with the changes specs, and its diff (freed by the caller: diff_free,
 * run_free, changes_free). */
static void replay_diff(const char *const *specs, struct changes *cs, struct run *r, struct diff *d)
{
    changes_parse(cs, specs);
    struct restamp_opts o = {
        .mode = RESTAMP_REPLAY, .now_ms = NOW, .changes = cs->c, .n_changes = cs->n};
    run(r, plain_msg(), &o);
    assert_ok(r);
    restamp_diff(r->m, &r->out, d);
}

/* Texts the journal's diff must escape as jansson does (quotes, backslashes, control bytes,
 * non-ASCII) or hold as base64 (not UTF-8): restamp_changes_text is still json_dumps's. */
static void test_diff_escapes(void **state)
{
    (void)state;
    const char *specs[][3] = {
        {"header.note=a\"b\\c\td\x01e\x7f\xc3\xa9/\xe2\x80\xa8", "type=t\n", NULL},
        {"header.bin=\xff\xfe", "header.ok=plain", NULL},
    };
    for (size_t k = 0; k < 2; k++) {
        struct changes cs;
        struct run r;
        struct diff d;
        replay_diff(specs[k], &cs, &r, &d);
        assert_changes_and_digests(r.m, &r.out, &d, true);
        diff_free(&d);
        run_free(&r);
        changes_free(&cs);
    }
}

static void test_diff_simple(void **state)
{
    const char *specs[] = {"type=order.v2", "header.tenant=acme", NULL};
    struct changes cs;
    struct run r;
    struct diff d;
    replay_diff(specs, &cs, &r, &d);
    assert_row(row(&d, DIFF_TARGET, "exchange"), DIFF_CHANGED, "", "orders-x");
    assert_row(row(&d, DIFF_TARGET, "routing_key"), DIFF_SAME, "orders.created", "orders.created");
    assert_row(row(&d, DIFF_PROPERTY, "type"), DIFF_CHANGED, "order", "order.v2");
    assert_row(row(&d, DIFF_PROPERTY, "message_id"), DIFF_SAME, "mid-1", "mid-1");
    assert_row(row(&d, DIFF_PROPERTY, "delivery_mode"), DIFF_SAME, "1", "1");
    assert_row(row(&d, DIFF_PROPERTY, "timestamp"), DIFF_SAME, "1770000000 (2026-02-02T02:40:00Z)",
               "1770000000 (2026-02-02T02:40:00Z)");
    assert_row(row(&d, DIFF_HEADER, "x-custom"), DIFF_SAME, "uint8:7", "uint8:7");
    assert_row(row(&d, DIFF_HEADER, "x-delivery-count"), DIFF_REMOVED, "int64:2", NULL);
    assert_row(row(&d, DIFF_HEADER, "x-first-death-queue"), DIFF_REMOVED, "string:orders", NULL);
    assert_row(row(&d, DIFF_HEADER, "tenant"), DIFF_ADDED, NULL, "string:acme");
    const struct diff_row *xd = row(&d, DIFF_HEADER, "x-death");
    assert_int_equal(xd->op, DIFF_REMOVED);
    assert_true(strncmp(xd->old_text, "array:[", 7) == 0);
    /* The body is unchanged: one same row per line. */
    size_t body_rows = 0;
    for (size_t i = 0; i < d.n; i++)
        if (d.rows[i].section == DIFF_BODY) {
            assert_row(&d.rows[i], DIFF_SAME, "hello", "hello");
            body_rows++;
        }
    assert_int_equal(body_rows, 1);
    /* exchange, type, 6 broker-owned headers removed, tenant added. */
    assert_int_equal(d.changed, 2 + 6 + 1);

    assert_changes_and_digests(r.m, &r.out, &d, true);
    json_t *j = diff_to_json(&d);
    assert_int_equal(json_array_size(j), d.changed);
    size_t i;
    json_t *it;
    json_array_foreach(j, i, it)
    {
        assert_string_not_equal(json_string_value(json_object_get(it, "op")), "same");
    }
    char *s = json_dumps(json_array_get(j, 1), JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(s, "{\"section\":\"property\",\"op\":\"changed\",\"name\":\"type\","
                           "\"old\":\"order\",\"new\":\"order.v2\"}");
    free(s);
    s = json_dumps(json_array_get(j, d.changed - 1), JSON_COMPACT | JSON_PRESERVE_ORDER);
    assert_string_equal(s, "{\"section\":\"header\",\"op\":\"added\",\"name\":\"tenant\","
                           "\"old\":null,\"new\":\"string:acme\"}");
    free(s);
    json_decref(j);
    diff_free(&d);
    run_free(&r);
    changes_free(&cs);
}

static void test_diff_body(void **state)
{
    struct restamp_opts o = {.mode = RESTAMP_REPLAY, .now_ms = NOW};
    struct run r;
    run(&r,
        bq_msg("{\"job\":\"j\",\"trace_id\":\"t\",\"data\":{\"n\":99.90},\"meta\":{\"queue\":\"q\","
               "\"schema_version\":1},\"attempts\":3,\"dead_letter\":{\"reason\":\"failed\"}}"),
        &o);
    assert_ok(&r);
    struct diff d;
    restamp_diff(r.m, &r.out, &d);
    static const struct {
        enum diff_op op;
        const char *old, *nw;
    } want[] = {
        {DIFF_SAME, "{", "{"},
        {DIFF_SAME, "  \"job\": \"j\",", "  \"job\": \"j\","},
        {DIFF_SAME, "  \"trace_id\": \"t\",", "  \"trace_id\": \"t\","},
        {DIFF_SAME, "  \"data\": {", "  \"data\": {"},
        {DIFF_SAME, "    \"n\": 99.90", "    \"n\": 99.90"},
        {DIFF_SAME, "  },", "  },"},
        {DIFF_SAME, "  \"meta\": {", "  \"meta\": {"},
        {DIFF_SAME, "    \"queue\": \"q\",", "    \"queue\": \"q\","},
        {DIFF_SAME, "    \"schema_version\": 1", "    \"schema_version\": 1"},
        {DIFF_SAME, "  },", "  },"},
        {DIFF_REMOVED, "  \"attempts\": 3,", NULL},
        {DIFF_REMOVED, "  \"dead_letter\": {", NULL},
        {DIFF_REMOVED, "    \"reason\": \"failed\"", NULL},
        {DIFF_REMOVED, "  }", NULL},
        {DIFF_ADDED, NULL, "  \"attempts\": 0"},
        {DIFF_SAME, "}", "}"},
    };
    size_t k = 0;
    for (size_t i = 0; i < d.n; i++) {
        if (d.rows[i].section != DIFF_BODY)
            continue;
        assert_true(k < sizeof want / sizeof *want);
        assert_null(d.rows[i].name);
        assert_row(&d.rows[i], want[k].op, want[k].old, want[k].nw);
        k++;
    }
    assert_int_equal(k, sizeof want / sizeof *want);
    assert_changes_and_digests(r.m, &r.out, &d, false);
    diff_free(&d);

    /* Binary bodies: hex lines of 16 bytes. */
    static const unsigned char bin[20] = {0xff, 0x00, 1,  2,  3,  4,  5,  6,  7,  8,
                                          9,    10,   11, 12, 13, 14, 15, 16, 17, 18};
    struct message *old = msg_new("q", "q", "application/octet-stream", "");
    bytes_free(&old->body);
    old->body = bytes_dup(bin, sizeof bin);
    struct outgoing copy = r.out;
    copy.body = bytes_dup(bin, 16);
    copy.props = old->props;
    restamp_diff(old, &copy, &d);
    size_t rows = 0;
    for (size_t i = 0; i < d.n; i++)
        rows += d.rows[i].section == DIFF_BODY;
    assert_int_equal(rows, 2);
    const struct diff_row *b0 = NULL;
    for (size_t i = 0; i < d.n && !b0; i++)
        if (d.rows[i].section == DIFF_BODY)
            b0 = &d.rows[i];
    if (!b0) {
        fail_msg("no body row");
        abort(); /* not reached */
    }
    assert_row(b0, DIFF_SAME,
               "00000000  ff 00 01 02 03 04 05 06  07 08 09 0a 0b 0c 0d 0e  |................|",
               "00000000  ff 00 01 02 03 04 05 06  07 08 09 0a 0b 0c 0d 0e  |................|");
    assert_row(b0 + 1, DIFF_REMOVED,
               "00000010  0f 10 11 12                                       |....|", NULL);
    bytes_free(&copy.body);
    diff_free(&d);
    message_free(old);
    free(old);

    /* Past the cap: one removed/added pair naming sizes and digests. */
    struct strbuf big;
    sb_init(&big);
    for (int i = 0; i < 2500; i++)
        sb_addf(&big, "line %d\n", i);
    old = msg_new("q", "q", "text/plain", big.buf);
    copy = r.out;
    copy.body = bytes_dup(big.buf, big.len - 1);
    copy.props = old->props;
    restamp_diff(old, &copy, &d);
    rows = 0;
    for (size_t i = 0; i < d.n; i++)
        if (d.rows[i].section == DIFF_BODY) {
            assert_int_equal(d.rows[i].op, rows++ ? DIFF_ADDED : DIFF_REMOVED);
            assert_contains(d.rows[i].op == DIFF_ADDED ? d.rows[i].new_text : d.rows[i].old_text,
                            "bytes, sha256 ");
        }
    assert_int_equal(rows, 2);
    bytes_free(&copy.body);
    diff_free(&d);
    message_free(old);
    free(old);
    sb_free(&big);
    run_free(&r);
}

/* ---- the kind of a header edit (issue 16.6) -------------------------------------------- */

/* Builds m with the one change spec and checks the copy's header name is want (kind-exact). */
static void header_after(struct message *m, const char *spec, const char *name, struct hval want)
{
    const char *specs[] = {spec, NULL};
    struct changes cs;
    changes_parse(&cs, specs);
    struct restamp_opts o = {
        .mode = RESTAMP_REPLAY, .changes = cs.c, .n_changes = cs.n, .now_ms = NOW};
    struct run r;
    if (run(&r, m, &o) != ST_OK)
        fail_msg("%s: %s", spec, r.err.msg);
    const struct hval *got = htable_get(r.out.headers, name);
    if (!got)
        fail_msg("%s: the copy has no header %s", spec, name);
    if (!hval_equal(got, &want)) {
        char *g = json_dumps(hval_to_json(got), JSON_ENCODE_ANY);
        fail_msg("%s: header %s is %s %s, not %s", spec, name, hkind_name(got->kind), g,
                 hkind_name(want.kind));
    }
    hval_free(&want);
    run_free(&r);
    changes_free(&cs);
}

static struct message *acemq_typed(void)
{
    struct message *m = acemq_simple();
    htable_add(m->headers, "n", hval_int(HV_I32, 1));
    htable_add(m->headers, "small", hval_uint(HV_U8, 7));
    htable_add(m->headers, "price", hval_f64(9.5));
    htable_add(m->headers, "vip", hval_bool(true));
    htable_add(m->headers, "raw", hval_bytes("\x01", 1));
    htable_add(m->headers, "amount", hval_decimal(2, 1999));
    return m;
}

static void test_header_kinds(void **state)
{
    /* An edit without a kind keeps the kind of the header it replaces... */
    header_after(acemq_typed(), "header.n=2", "n", hval_int(HV_I32, 2));
    header_after(acemq_typed(), "header.n=-2147483648", "n", hval_int(HV_I32, INT32_MIN));
    header_after(acemq_typed(), "header.small=255", "small", hval_uint(HV_U8, 255));
    header_after(acemq_typed(), "header.price=3.25", "price", hval_f64(3.25));
    header_after(acemq_typed(), "header.vip=false", "vip", hval_bool(false));
    header_after(acemq_typed(), "header.raw=ab", "raw", hval_bytes("ab", 2));
    header_after(acemq_typed(), "header.tenant=globex", "tenant", hval_cstring("globex"));
    /* ...a kind given is the kind sent, and a new header without one is a string. */
    header_after(acemq_typed(), "header.n:string=2", "n", hval_cstring("2"));
    header_after(acemq_typed(), "header.n:int64=2", "n", hval_int(HV_I64, 2));
    header_after(acemq_typed(), "header.region=7", "region", hval_cstring("7"));
    /* The same on plain AMQP and BabelQueue messages. */
    header_after(plain_msg(), "header.x-custom=9", "x-custom", hval_uint(HV_U8, 9));
    struct message *bq =
        bq_msg("{\"job\":\"j\",\"trace_id\":\"t\"," BQ_META ",\"data\":{},\"attempts\":1}");
    htable_add(bq->headers, "x-priority", hval_int(HV_I16, 3));
    header_after(bq, "header.x-priority=4", "x-priority", hval_int(HV_I16, 4));
    /* A value that does not read as the kind is refused, naming the kind and the typed form. */
    expect_change(acemq_typed(), "header.n=abc", ST_EINVAL, "header.n:string=abc");
    expect_change(acemq_typed(), "header.n=abc", ST_EINVAL, "is int32 in the dead letter");
    expect_change(acemq_typed(), "header.n=2147483648", ST_EINVAL, "int32");
    expect_change(acemq_typed(), "header.small=256", ST_EINVAL, "uint8");
    expect_change(acemq_typed(), "header.small=-1", ST_EINVAL, "uint8");
    expect_change(acemq_typed(), "header.vip=yes", ST_EINVAL, "bool");
    expect_change(acemq_typed(), "header.price=cheap", ST_EINVAL, "double");
    expect_change(acemq_typed(), "header.amount=20", ST_EINVAL, "header.amount:string=20");
    expect_change(plain_msg(), "header.x-custom=many", ST_EINVAL, "uint8");
    /* Reserved names are still refused as reserved, whatever their kind. */
    expect_change(plain_msg(), "header.x-death=forged", ST_ERESERVED, "x-death");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diff_simple),
        cmocka_unit_test(test_diff_escapes),
        cmocka_unit_test(test_diff_body),
        cmocka_unit_test(test_header_kinds),
    };
    return cmocka_run_group_tests_name("restamp_diff", tests, NULL, NULL);
}
