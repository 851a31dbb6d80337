/*
 * redact: fields parsed (and refused with the place named), header globs of any case and any
 * kind, JSON paths with names, quoted names, indices and wildcards, markers of the same kind,
 * bodies that are not JSON redacted whole, untouched bodies kept byte for byte, and the
 * fields that matched nothing.
 */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "hval.h"
#include "redact.h"
#include "snapshot.h"
#include "util.h"

static struct message parse(const char *line)
{
    struct message m;
    struct error err;
    if (snapshot_parse_line(line, strlen(line), &m, &err) != ST_OK)
        fail_msg("%s: %s", line, err.msg);
    return m;
}

static void add(struct redactor *r, const char *field)
{
    struct error err;
    if (redact_add(r, field, &err) != ST_OK)
        fail_msg("redact_add(%s): %s", field, err.msg);
}

static void assert_body(const struct message *m, const char *want)
{
    if (m->body.len != strlen(want) || memcmp(m->body.data, want, m->body.len) != 0)
        fail_msg("body \"%.*s\", expected \"%s\"", (int)m->body.len, (const char *)m->body.data,
                 want);
}

static void test_fields_refused(void **state)
{
    static const char *const bad[] = {"",        "user.token", "header.", "body.",
                                      "body..a", "body[x]",    "body[3",  "body[\"a\"",
                                      "$a",      "bodyx",      "body.a[", "$.a[*"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        struct redactor r;
        redact_init(&r);
        struct error err;
        error_clear(&err);
        if (redact_add(&r, bad[i], &err) == ST_OK)
            fail_msg("\"%s\" was accepted", bad[i]);
        assert_non_null(strstr(err.msg, "--redact"));
        assert_int_equal(r.n, 0);
        redact_free(&r);
    }
}

static void test_headers_any_kind(void **state)
{
    struct message m = parse(
        "{\"headers\":{\"Authorization\":\"Bearer x\",\"x-n\":{\"type\":\"int8\",\"value\":7},"
        "\"x-t\":{\"a\":1},\"x-l\":[1,2],\"x-b\":true,\"x-f\":1.5,\"keep\":\"k\"}}");
    struct redactor r;
    redact_init(&r);
    add(&r, "header.AUTHORIZATION");
    add(&r, "headers.x-?");
    redact_message(&r, &m);
    assert_int_equal(r.values, 6);
    assert_int_equal(r.records, 1);
    const struct hval *v = htable_get(m.headers, "Authorization");
    assert_int_equal(v->kind, HV_STRING);
    assert_memory_equal(v->v.s.data, REDACT_MARKER, strlen(REDACT_MARKER));
    v = htable_get(m.headers, "x-n");
    assert_int_equal(v->kind, HV_I8);
    assert_int_equal(v->v.i, 0);
    assert_int_equal(htable_get(m.headers, "x-t")->kind, HV_TABLE);
    assert_int_equal(htable_get(m.headers, "x-t")->v.tab->n, 0);
    assert_int_equal(htable_get(m.headers, "x-l")->v.arr.n, 0);
    assert_false(htable_get(m.headers, "x-b")->v.b);
    assert_true(htable_get(m.headers, "x-f")->v.f64 == 0);
    assert_memory_equal(htable_get(m.headers, "keep")->v.s.data, "k", 1);
    size_t i = 0;
    assert_null(redact_unmatched(&r, &i));
    redact_free(&r);
    message_free(&m);
}

static void test_json_paths(void **state)
{
    struct message m = parse(
        "{\"body\":\"{\\\"a\\\":{\\\"b\\\":[{\\\"t\\\":\\\"s\\\"},{\\\"t\\\":2}]},"
        "\\\"x.y\\\":{\\\"z\\\":true},\\\"n\\\":null,\\\"o\\\":{\\\"p\\\":1,\\\"q\\\":2}}\"}");
    struct redactor r;
    redact_init(&r);
    add(&r, "$.a.b[*].t");
    add(&r, "body[\"x.y\"].z");
    add(&r, "body.n");
    add(&r, "$.o.*");
    add(&r, "body.a.b[5]");
    redact_message(&r, &m);
    assert_body(&m, "{\"a\":{\"b\":[{\"t\":\"[redacted]\"},{\"t\":0}]},\"x.y\":{\"z\":false},"
                    "\"n\":null,\"o\":{\"p\":0,\"q\":0}}");
    assert_int_equal(r.values, 6);
    size_t i = 0;
    const char *f = redact_unmatched(&r, &i);
    assert_non_null(f);
    assert_string_equal(f, "body.a.b[5]");
    assert_null(redact_unmatched(&r, &i));
    redact_free(&r);
    message_free(&m);
}

static void test_top_level_array_and_untouched(void **state)
{
    struct message m = parse("{\"body\":\"[ 1, {\\\"k\\\": 2.50} ]\"}");
    struct redactor r;
    redact_init(&r);
    add(&r, "$[1].k");
    redact_message(&r, &m);
    assert_body(&m, "[1,{\"k\":0.0}]");
    message_free(&m);
    /* Nothing matched: the body is kept byte for byte (spacing, number forms). */
    m = parse("{\"body\":\"{ \\\"k\\\" : 1e3 }\"}");
    redact_message(&r, &m);
    assert_body(&m, "{ \"k\" : 1e3 }");
    redact_free(&r);
    message_free(&m);
}

static void test_not_json_redacted_whole(void **state)
{
    static const char *const lines[] = {
        "{\"body\":\"token=abc\"}",
        "{\"body_base64\":\"/wAB\"}",
        "{\"body\":\"{\\\"a\\\":1\"}",
    };
    for (size_t k = 0; k < sizeof lines / sizeof *lines; k++) {
        struct message m = parse(lines[k]);
        struct redactor r;
        redact_init(&r);
        add(&r, "body.a");
        redact_message(&r, &m);
        assert_body(&m, REDACT_MARKER);
        assert_int_equal(r.whole_bodies, 1);
        redact_free(&r);
        message_free(&m);
    }
    /* An empty body has nothing to hide. */
    struct message m = parse("{\"body\":\"\"}");
    struct redactor r;
    redact_init(&r);
    add(&r, "body");
    redact_message(&r, &m);
    assert_int_equal(m.body.len, 0);
    assert_int_equal(r.values, 0);
    redact_free(&r);
    message_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields_refused),
        cmocka_unit_test(test_headers_any_kind),
        cmocka_unit_test(test_json_paths),
        cmocka_unit_test(test_top_level_array_and_untouched),
        cmocka_unit_test(test_not_json_redacted_whole),
    };
    return cmocka_run_group_tests_name("redact", tests, NULL, NULL);
}
