/*
 * test_babelqueue: the BabelQueue envelope reader against the seed (schema_version 1): the
 * canonical envelope, the urn alias, each consumer rule and their order, numbers, unicode,
 * NUL, unknown, forbidden and duplicate keys. Dead letters, the raw-wrapped form, what is
 * not an envelope and detection are in test_babelqueue_dead.c.
 */
#include "babelqueue_testutil.h"

#include <string.h>

#include "babelqueue.h"
#include "util.h"

static size_t count_warnings(const struct bq_envelope *e, enum bq_warning_kind k)
{
    size_t n = 0;
    for (size_t i = 0; i < e->nwarnings; i++)
        n += e->warnings[i].kind == k;
    return n;
}

/* ---- the canonical envelope ----------------------------------------------------------- */

static void test_canonical(void **state)
{
    (void)state;
    struct bq_envelope e;
    assert_int_equal(parse_fixture("babelqueue/canonical.json", &e), BQ_OK);
    assert_true(bq_accepted(&e));
    assert_int_equal(e.detected, BQ_DETECT_SHAPE);
    assert_non_null(e.doc);
    assert_int_equal(e.doc->refcount, 1);
    assert_true(e.dup_scan);
    assert_false(e.raw_wrapped);
    assert_int_equal(e.job_key, BQ_JOB_KEY_JOB);
    assert_str(e.job, "urn:babel:orders:created");
    assert_str(e.trace_id, "7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b");
    assert_true(json_is_object(e.data));
    assert_int_equal(json_object_size(e.data), 2);
    assert_true(json_is_integer(json_object_get(e.data, "order_id")));
    assert_int_equal(json_integer_value(json_object_get(e.data, "order_id")), 1042);
    assert_true(json_is_real(json_object_get(e.data, "amount")));
    assert_true(json_real_value(json_object_get(e.data, "amount")) == 99.90);
    assert_true(e.meta.is_object);
    assert_str(e.meta.id, "f1e2d3c4-b5a6-4789-90ab-cdef01234567");
    assert_str(e.meta.queue, "default");
    assert_str(e.meta.lang, "php");
    assert_true(e.meta.schema_version.is_int);
    assert_int_equal(e.meta.schema_version.v, 1);
    assert_true(e.meta.created_at.is_int);
    assert_int_equal(e.meta.created_at.v, INT64_C(1749132727000));
    assert_true(e.attempts.is_int);
    assert_int_equal(e.attempts.v, 0);
    assert_null(e.dead_letter.json);
    assert_false(e.dead_letter.is_object);
    assert_int_equal(e.forbidden, 0);
    assert_int_equal(e.nwarnings, 0);

    int64_t n = -1;
    assert_true(bq_attempt(&e, &n));
    assert_int_equal(n, 0);
    const char *q;
    size_t qlen;
    assert_true(bq_source_queue(&e, &q, &qlen));
    assert_int_equal(qlen, 7);
    assert_memory_equal(q, "default", 7);
    bq_envelope_free(&e);
    assert_null(e.doc);
    assert_null(e.warnings);
}

static void test_properties(void **state)
{
    (void)state;
    const char *body = "{" JOB "," TRACE "," DATA "," META "," ATT "}";
    struct bytes app = bytes_from_cstr("babelqueue");
    struct bytes type = bytes_from_cstr("urn:babel:orders:created");
    struct bytes corr = bytes_from_cstr("7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b");
    struct bytes mid = bytes_from_cstr("f1e2d3c4-b5a6-4789-90ab-cdef01234567");
    struct bq_props p = {&app, &type, &corr, &mid};
    struct bq_envelope e;
    assert_int_equal(bq_parse(body, strlen(body), &p, &e), BQ_OK);
    assert_int_equal(e.detected, BQ_DETECT_APP_ID);
    assert_int_equal(e.nwarnings, 0);
    bq_envelope_free(&e);

    struct bytes other = bytes_from_cstr("something-else");
    struct bq_props q = {&other, &other, &other, &other};
    assert_int_equal(bq_parse(body, strlen(body), &q, &e), BQ_OK);
    assert_int_equal(e.detected, BQ_DETECT_SHAPE);
    assert_int_equal(count_warnings(&e, BQ_WARN_PROPERTY), 3);
    assert_true(has_warning(&e, BQ_WARN_PROPERTY, "type differs from /job"));
    assert_true(has_warning(&e, BQ_WARN_PROPERTY, "correlation_id differs from /trace_id"));
    assert_true(has_warning(&e, BQ_WARN_PROPERTY, "message_id differs from /meta/id"));
    bq_envelope_free(&e);

    /* Unset properties are not a disagreement (Laravel's dead letters carry none). */
    struct bq_props none = {&app, NULL, NULL, NULL};
    assert_int_equal(bq_parse(body, strlen(body), &none, &e), BQ_OK);
    assert_int_equal(e.nwarnings, 0);
    bq_envelope_free(&e);
    bytes_free(&app);
    bytes_free(&type);
    bytes_free(&corr);
    bytes_free(&mid);
    bytes_free(&other);
}

/* ---- job and urn ---------------------------------------------------------------------- */

static void test_urn_alias(void **state)
{
    (void)state;
    struct bq_envelope e;
    assert_int_equal(parse_fixture("babelqueue/urn-alias.json", &e), BQ_OK);
    assert_int_equal(e.job_key, BQ_JOB_KEY_URN);
    assert_str(e.job, "urn:babel:orders:created");
    assert_str(e.meta.lang, "go");
    assert_int_equal(e.detected, BQ_DETECT_SHAPE);
    assert_int_equal(e.nwarnings, 0);
    bq_envelope_free(&e);
}

static void test_job_wins_over_urn(void **state)
{
    (void)state;
    struct bq_envelope e;
    assert_int_equal(parse("{\"urn\":\"urn:babel:other:thing\"," JOB "," TRACE "," DATA "," META
                           "," ATT "}",
                           &e),
                     BQ_OK);
    assert_int_equal(e.job_key, BQ_JOB_KEY_JOB);
    assert_str(e.job, "urn:babel:orders:created");
    assert_true(has_warning(&e, BQ_WARN_JOB_URN, "/urn differs from /job"));
    bq_envelope_free(&e);

    /* Same value under both keys: nothing to say. */
    assert_int_equal(parse("{" JOB ",\"urn\":\"urn:babel:orders:created\"," TRACE "," DATA "," META
                           "," ATT "}",
                           &e),
                     BQ_OK);
    assert_int_equal(e.nwarnings, 0);
    bq_envelope_free(&e);

    /* A blank job is still the job: the alias is only for an absent job. */
    assert_int_equal(parse("{\"job\":\"  \",\"urn\":\"urn:babel:orders:created\"," TRACE "," DATA
                           "," META "," ATT "}",
                           &e),
                     BQ_MISSING_URN);
    assert_int_equal(e.job_key, BQ_JOB_KEY_JOB);
    assert_str(e.job, "  ");
    assert_true(has_warning(&e, BQ_WARN_JOB_URN, "/urn is usable"));
    bq_envelope_free(&e);
}

static void test_missing_urn(void **state)
{
    (void)state;
    const char *const bad[] = {
        "{" TRACE "," DATA "," META "," ATT "}",
        "{\"job\":\"\"," TRACE "," DATA "," META "," ATT "}",
        "{\"job\":\" \\t\\n\\r\\u000b\\f\"," TRACE "," DATA "," META "," ATT "}",
        "{\"job\":42," TRACE "," DATA "," META "," ATT "}",
        "{\"job\":null," TRACE "," DATA "," META "," ATT "}",
        "{\"job\":[\"urn:babel:orders:created\"]," TRACE "," DATA "," META "," ATT "}",
        "{\"urn\":\"\"," TRACE "," DATA "," META "," ATT "}",
        "{\"urn\":true," TRACE "," DATA "," META "," ATT "}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct bq_envelope e;
        if (parse(bad[i], &e) != BQ_MISSING_URN)
            fail_msg("case %zu: %s", i, bq_reason_name(e.reason));
        /* Not accepted, still read: the rest of the envelope is there. */
        assert_str(e.trace_id, "7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b");
        assert_true(e.meta.schema_version.is_int);
        bq_envelope_free(&e);
    }
    /* Blank is ASCII whitespace only: NBSP, U+3000 and a BOM are content. */
    assert_int_equal(reason_of("{\"job\":\"\\u00a0\"," TRACE "," DATA "," META "," ATT "}"), BQ_OK);
    assert_int_equal(reason_of("{\"job\":\"\\u3000\"," TRACE "," DATA "," META "," ATT "}"), BQ_OK);
    assert_int_equal(reason_of("{\"job\":\"\\ufeff\"," TRACE "," DATA "," META "," ATT "}"), BQ_OK);
}

/* ---- the other rules ------------------------------------------------------------------ */

static void test_schema_version(void **state)
{
    (void)state;
    const char *const bad[] = {
        "{" JOB "," TRACE "," DATA "," META_V("2") "," ATT "}",
        "{" JOB "," TRACE "," DATA "," META_V("\"1\"") "," ATT "}",
        "{" JOB "," TRACE "," DATA "," META_V("1.0") "," ATT "}",
        "{" JOB "," TRACE "," DATA "," META_V("1e0") "," ATT "}",
        "{" JOB "," TRACE "," DATA "," META_V("0") "," ATT "}",
        "{" JOB "," TRACE "," DATA "," META_V("null") "," ATT "}",
        "{" JOB "," TRACE "," DATA "," META_V("true") "," ATT "}",
        "{" JOB "," TRACE "," DATA "," META_V("4294967297") "," ATT "}",
        "{" JOB "," TRACE "," DATA ",\"meta\":{\"id\":\"m\",\"queue\":\"q\",\"lang\":\"go\","
        "\"created_at\":1749132727000}," ATT "}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (reason_of(bad[i]) != BQ_UNSUPPORTED_SCHEMA_VERSION)
            fail_msg("case %zu: %s", i, bq_reason_name(reason_of(bad[i])));

    struct bq_envelope e;
    assert_int_equal(parse("{" JOB "," TRACE "," DATA "," META_V("1.0") "," ATT "}", &e),
                     BQ_UNSUPPORTED_SCHEMA_VERSION);
    assert_non_null(e.meta.schema_version.json);
    assert_true(json_is_real(e.meta.schema_version.json));
    assert_false(e.meta.schema_version.is_int);
    bq_envelope_free(&e);
}

static void test_missing_meta(void **state)
{
    (void)state;
    assert_int_equal(reason_of("{" JOB "," TRACE "," DATA "," ATT "}"), BQ_MISSING_META);
    assert_int_equal(reason_of("{" JOB "," TRACE "," DATA ",\"meta\":[]," ATT "}"),
                     BQ_MISSING_META);
    assert_int_equal(
        reason_of("{" JOB "," TRACE "," DATA ",\"meta\":[{\"schema_version\":1}]," ATT "}"),
        BQ_MISSING_META);
    assert_int_equal(reason_of("{" JOB "," TRACE "," DATA ",\"meta\":\"php\"," ATT "}"),
                     BQ_MISSING_META);
    assert_int_equal(reason_of("{" JOB "," TRACE "," DATA ",\"meta\":null," ATT "}"),
                     BQ_MISSING_META);
    /* A meta that is not an object has no fields to complain about one by one. */
    struct bq_envelope e;
    assert_int_equal(parse("{" JOB "," TRACE "," DATA ",\"meta\":[1]," ATT "}", &e),
                     BQ_MISSING_META);
    assert_non_null(e.meta.json);
    assert_false(e.meta.is_object);
    assert_null(e.meta.id.json);
    assert_int_equal(e.nwarnings, 0);
    bq_envelope_free(&e);
}

static void test_invalid_data(void **state)
{
    (void)state;
    assert_int_equal(reason_of("{" JOB "," TRACE ",\"data\":[1,2]," META "," ATT "}"),
                     BQ_INVALID_DATA);
    assert_int_equal(reason_of("{" JOB "," TRACE ",\"data\":[]," META "," ATT "}"),
                     BQ_INVALID_DATA);
    assert_int_equal(reason_of("{" JOB "," TRACE ",\"data\":\"{}\"," META "," ATT "}"),
                     BQ_INVALID_DATA);
    assert_int_equal(reason_of("{" JOB "," TRACE ",\"data\":null," META "," ATT "}"),
                     BQ_INVALID_DATA);
    assert_int_equal(reason_of("{" JOB "," TRACE "," META "," ATT "}"), BQ_INVALID_DATA);
    /* An empty object is a valid payload. */
    assert_int_equal(reason_of("{" JOB "," TRACE ",\"data\":{}," META "," ATT "}"), BQ_OK);
}

static void test_missing_trace_id(void **state)
{
    (void)state;
    assert_int_equal(reason_of("{" JOB "," DATA "," META "," ATT "}"), BQ_MISSING_TRACE_ID);
    assert_int_equal(reason_of("{" JOB ",\"trace_id\":\"\"," DATA "," META "," ATT "}"),
                     BQ_MISSING_TRACE_ID);
    assert_int_equal(reason_of("{" JOB ",\"trace_id\":\" \\t \"," DATA "," META "," ATT "}"),
                     BQ_MISSING_TRACE_ID);
    assert_int_equal(reason_of("{" JOB ",\"trace_id\":7," DATA "," META "," ATT "}"),
                     BQ_MISSING_TRACE_ID);
    assert_int_equal(reason_of("{" JOB ",\"trace_id\":null," DATA "," META "," ATT "}"),
                     BQ_MISSING_TRACE_ID);
}

static void test_invalid_attempts(void **state)
{
    (void)state;
    const char *const bad[] = {
        "{" JOB "," TRACE "," DATA "," META ",\"attempts\":-1}",
        "{" JOB "," TRACE "," DATA "," META ",\"attempts\":1.5}",
        "{" JOB "," TRACE "," DATA "," META ",\"attempts\":0.0}",
        "{" JOB "," TRACE "," DATA "," META ",\"attempts\":\"0\"}",
        "{" JOB "," TRACE "," DATA "," META ",\"attempts\":null}",
        "{" JOB "," TRACE "," DATA "," META ",\"attempts\":false}",
        "{" JOB "," TRACE "," DATA "," META ",\"attempts\":-9223372036854775808}",
        "{" JOB "," TRACE "," DATA "," META "}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (reason_of(bad[i]) != BQ_INVALID_ATTEMPTS)
            fail_msg("case %zu: %s", i, bq_reason_name(reason_of(bad[i])));
    assert_int_equal(reason_of("{" JOB "," TRACE "," DATA "," META ",\"attempts\":7}"), BQ_OK);
    assert_int_equal(reason_of("{" JOB "," TRACE "," DATA "," META ",\"attempts\":-0}"), BQ_OK);

    struct bq_envelope e;
    assert_int_equal(parse("{" JOB "," TRACE "," DATA "," META ",\"attempts\":-1}", &e),
                     BQ_INVALID_ATTEMPTS);
    int64_t n = 0;
    assert_true(bq_attempt(&e, &n)); /* shown as it is, even when it breaks the rule */
    assert_int_equal(n, -1);
    bq_envelope_free(&e);
    assert_int_equal(parse("{" JOB "," TRACE "," DATA "," META ",\"attempts\":\"3\"}", &e),
                     BQ_INVALID_ATTEMPTS);
    n = 42;
    assert_false(bq_attempt(&e, &n));
    assert_int_equal(n, 42);
    bq_envelope_free(&e);
}

/* Each body breaks every rule from one point on: the first broken rule is the one reported. */
static void test_rule_order(void **state)
{
    (void)state;
    assert_int_equal(reason_of("{\"job\":\"\",\"meta\":[],\"data\":[],\"trace_id\":\"\","
                               "\"attempts\":-1}"),
                     BQ_MISSING_URN);
    assert_int_equal(reason_of("{" JOB ",\"meta\":[],\"data\":[],\"trace_id\":\"\","
                               "\"attempts\":-1}"),
                     BQ_MISSING_META);
    assert_int_equal(reason_of("{" JOB "," META_V("2") ",\"data\":[],\"trace_id\":\"\","
                                                       "\"attempts\":-1}"),
                     BQ_UNSUPPORTED_SCHEMA_VERSION);
    assert_int_equal(reason_of("{" JOB "," META ",\"data\":[],\"trace_id\":\"\","
                               "\"attempts\":-1}"),
                     BQ_INVALID_DATA);
    assert_int_equal(reason_of("{" JOB "," META "," DATA ",\"trace_id\":\"\",\"attempts\":-1}"),
                     BQ_MISSING_TRACE_ID);
    assert_int_equal(reason_of("{" JOB "," META "," DATA "," TRACE ",\"attempts\":-1}"),
                     BQ_INVALID_ATTEMPTS);
    /* The order of the keys in the body does not matter. */
    assert_int_equal(reason_of("{\"attempts\":-1,\"trace_id\":\"\",\"data\":[],\"meta\":[]}"),
                     BQ_MISSING_URN);
}

/* ---- text and numbers ----------------------------------------------------------------- */

static void test_unicode(void **state)
{
    (void)state;
    struct bq_envelope e;
    assert_int_equal(parse_fixture("babelqueue/unicode.json", &e), BQ_OK);
    assert_str(e.job, "urn:babel:\xc3\xbcn\xc3\xaf\x63\xc3\xb8\x64\xc3\xa9:cr\xc3\xa9\xc3\xa9");
    assert_str(e.trace_id, "t-\xc3\xbc-1");
    assert_str(e.meta.queue, "\xc3\xbcn\xc3\xaf");
    const json_t *d = e.data;
    const char *emoji = json_string_value(json_object_get(d, "emoji"));
    assert_string_equal(emoji, "\xf0\x9f\x98\x80\xf0\x9f\x9a\x80");
    /* \u escapes decode to the same UTF-8 as the literal characters. */
    assert_string_equal(json_string_value(json_object_get(d, "escaped")),
                        "\xc3\xbc\xc3\xb1\xc3\xaf\xc3\xa7\xc3\xb8\x64\xc3\xa9");
    assert_string_equal(json_string_value(json_object_get(d, "pair")), "\xf0\x9f\x98\x80");
    assert_string_equal(json_string_value(json_object_get(d, "slash")), "a/b");
    assert_string_equal(json_string_value(json_object_get(d, "title")),
                        "Caf\xc3\xa9 \xe2\x80\x94 na\xc3\xafve \xe2\x98\x95");
    bq_envelope_free(&e);

    /* A job given entirely as escapes, and a key spelled with an escape. */
    assert_int_equal(parse("{\"\\u006aob\":\"urn:\\u00fc\\ud83d\\ude80\"," TRACE "," DATA "," META
                           "," ATT "}",
                           &e),
                     BQ_OK);
    assert_str(e.job, "urn:\xc3\xbc\xf0\x9f\x9a\x80");
    bq_envelope_free(&e);

    /* Invalid UTF-8 in the body is not JSON. */
    assert_int_equal(reason_of("{\"job\":\"\xff\xfe\"," TRACE "," DATA "," META "," ATT "}"),
                     BQ_MALFORMED_JSON);
}

static void test_large_integers(void **state)
{
    (void)state;
    struct bq_envelope e;
    assert_int_equal(parse("{" JOB "," TRACE ",\"data\":{\"beyond_double\":9007199254740993,"
                           "\"max\":9223372036854775807,\"min\":-9223372036854775808},"
                           "\"meta\":{\"id\":\"m\",\"queue\":\"q\",\"lang\":\"go\","
                           "\"schema_version\":1,\"created_at\":9223372036854775807},"
                           "\"attempts\":9223372036854775807}",
                           &e),
                     BQ_OK);
    assert_true(json_integer_value(json_object_get(e.data, "beyond_double")) ==
                INT64_C(9007199254740993));
    assert_true(json_integer_value(json_object_get(e.data, "max")) == INT64_MAX);
    assert_true(json_integer_value(json_object_get(e.data, "min")) == INT64_MIN);
    assert_true(e.meta.created_at.v == INT64_MAX);
    assert_true(e.attempts.v == INT64_MAX);
    bq_envelope_free(&e);

    /* 2^64 and 2^63 do not fit: jansson refuses the document, with its reason and place. */
    const char *big = "{" JOB "," TRACE ",\"data\":{\"n\":18446744073709551616}," META "," ATT "}";
    assert_int_equal(parse(big, &e), BQ_MALFORMED_JSON);
    assert_null(e.doc);
    assert_non_null(strstr(e.json_error.text, "too big integer"));
    assert_int_equal(e.json_error.line, 1);
    assert_true(e.json_error.column > 0);
    assert_true(e.json_error.position > 0);
    bq_envelope_free(&e);
    assert_int_equal(
        reason_of("{" JOB "," TRACE "," DATA "," META ",\"attempts\":9223372036854775808}"),
        BQ_MALFORMED_JSON);
}

static void test_nul_in_strings(void **state)
{
    (void)state;
    static const char body[] = "{\"job\":\"urn:babel:x\\u0000y\"," TRACE
                               ",\"data\":{\"s\":\"a\\u0000b\"}," META "," ATT "}";
    struct bq_envelope e;
    assert_int_equal(bq_parse(body, sizeof body - 1, NULL, &e), BQ_OK);
    assert_int_equal(e.job.len, 13);
    assert_memory_equal(e.job.s, "urn:babel:x\0y", 13);
    const json_t *s = json_object_get(e.data, "s");
    assert_int_equal(json_string_length(s), 3);
    assert_memory_equal(json_string_value(s), "a\0b", 3);
    bq_envelope_free(&e);

    /* A job of only an escaped NUL is not blank (NUL is not whitespace) but is kept exact. */
    assert_int_equal(reason_of("{\"job\":\"\\u0000\"," TRACE "," DATA "," META "," ATT "}"), BQ_OK);
    /* A raw NUL byte is not JSON; nor, for jansson, is a NUL inside a key. */
    static const char raw_nul[] = "{\"job\":\"a\0b\"}";
    assert_int_equal(bq_parse(raw_nul, sizeof raw_nul - 1, NULL, &e), BQ_MALFORMED_JSON);
    bq_envelope_free(&e);
    assert_int_equal(reason_of("{\"k\\u0000\":1," JOB "," TRACE "," DATA "," META "," ATT "}"),
                     BQ_MALFORMED_JSON);
}

/* ---- extra keys ----------------------------------------------------------------------- */

static void test_unknown_keys(void **state)
{
    (void)state;
    struct bq_envelope e;
    assert_int_equal(parse("{\"x-vendor\":{\"hops\":[1,2]}," JOB "," TRACE "," DATA
                           ",\"meta\":{\"id\":\"m\",\"queue\":\"q\",\"lang\":\"node\","
                           "\"schema_version\":1,\"created_at\":1749132727000,"
                           "\"region\":\"eu-west-1\"}," ATT ",\"zeta\":null}",
                           &e),
                     BQ_OK);
    assert_int_equal(e.nwarnings, 0);
    assert_int_equal(e.forbidden, 0);
    assert_string_equal(json_string_value(json_object_get(e.meta.json, "region")), "eu-west-1");
    assert_non_null(json_object_get(e.doc, "x-vendor"));
    assert_non_null(json_object_get(e.doc, "zeta"));
    bq_envelope_free(&e);
}

static void test_forbidden_keys(void **state)
{
    (void)state;
    struct bq_envelope e;
    assert_int_equal(parse("{" JOB "," TRACE "," DATA ",\"timestamp\":1749132727,"
                           "\"meta\":{\"id\":\"m\",\"queue\":\"q\",\"lang\":\"php\","
                           "\"schema_version\":1,\"created_at\":1749132727000,"
                           "\"max_retries\":3,\"attempts\":1,\"source\":\"php\",\"ts\":1}," ATT "}",
                           &e),
                     BQ_OK);
    assert_int_equal(e.forbidden, BQ_FORBID_TIMESTAMP | BQ_FORBID_META_MAX_RETRIES |
                                      BQ_FORBID_META_ATTEMPTS | BQ_FORBID_META_SOURCE |
                                      BQ_FORBID_META_TS);
    assert_int_equal(count_warnings(&e, BQ_WARN_FORBIDDEN_KEY), 5);
    assert_int_equal(e.nwarnings, 5);
    assert_true(has_warning(&e, BQ_WARN_FORBIDDEN_KEY, "/timestamp "));
    assert_true(has_warning(&e, BQ_WARN_FORBIDDEN_KEY, "/meta/max_retries "));
    assert_true(has_warning(&e, BQ_WARN_FORBIDDEN_KEY, "/meta/attempts "));
    assert_true(has_warning(&e, BQ_WARN_FORBIDDEN_KEY, "/meta/source "));
    assert_true(has_warning(&e, BQ_WARN_FORBIDDEN_KEY, "/meta/ts "));
    /* meta.attempts is not the attempt count. */
    int64_t n = -1;
    assert_true(bq_attempt(&e, &n));
    assert_int_equal(n, 0);
    bq_envelope_free(&e);

    /* attempts and timestamp inside data are the payload's business. */
    assert_int_equal(
        parse("{" JOB "," TRACE ",\"data\":{\"timestamp\":1,\"ts\":2}," META "," ATT "}", &e),
        BQ_OK);
    assert_int_equal(e.forbidden, 0);
    assert_int_equal(e.nwarnings, 0);
    bq_envelope_free(&e);
}

static void test_duplicate_keys(void **state)
{
    (void)state;
    struct bq_envelope e;
    /* Last wins, as in the SDKs' parsers; the repeat is named. */
    assert_int_equal(
        parse("{\"job\":\"urn:babel:first:one\"," JOB "," TRACE "," DATA "," META "," ATT "}", &e),
        BQ_OK);
    assert_str(e.job, "urn:babel:orders:created");
    assert_int_equal(count_warnings(&e, BQ_WARN_DUPLICATE_KEY), 1);
    assert_true(has_warning(&e, BQ_WARN_DUPLICATE_KEY, "/job occurs more than once"));
    bq_envelope_free(&e);

    /* Nested, so a repeated schema_version that ends on 1 is accepted — and flagged. */
    assert_int_equal(parse("{" JOB "," TRACE "," DATA ",\"meta\":{\"id\":\"m\",\"queue\":\"q\","
                           "\"lang\":\"go\",\"schema_version\":2,\"created_at\":1749132727000,"
                           "\"schema_version\":1}," ATT "}",
                           &e),
                     BQ_OK);
    assert_true(has_warning(&e, BQ_WARN_DUPLICATE_KEY, "/meta/schema_version"));
    bq_envelope_free(&e);

    /* The same key spelled with an escape; keys needing pointer escapes; keys in arrays;
     * braces and quotes inside strings; the same key in sibling objects is no repeat. */
    assert_int_equal(parse("{\"\\u006aob\":\"urn:babel:a:b\"," JOB "," TRACE ",\"data\":{"
                           "\"a/b~c\":1,\"a/b~c\":2,\"list\":[{\"k\":1},{\"k\":1,\"k\":2}],"
                           "\"s\":\"{\\\"k\\\":1,\\\"k\\\":2}\",\"p\":{\"k\":1},\"q\":{\"k\":1},"
                           "\"\":1,\"\":2}," META "," ATT "}",
                           &e),
                     BQ_OK);
    assert_int_equal(count_warnings(&e, BQ_WARN_DUPLICATE_KEY), 4);
    assert_true(has_warning(&e, BQ_WARN_DUPLICATE_KEY, "/job "));
    assert_true(has_warning(&e, BQ_WARN_DUPLICATE_KEY, "/data/a~1b~0c "));
    assert_true(has_warning(&e, BQ_WARN_DUPLICATE_KEY, "/data/list/1/k "));
    assert_true(has_warning(&e, BQ_WARN_DUPLICATE_KEY, "/data/ "));
    bq_envelope_free(&e);

    /* A document parsed elsewhere has no bytes to scan. */
    json_t *doc = json_loads("{\"job\":\"a\",\"job\":\"b\"}", 0, NULL);
    assert_int_equal(bq_parse_doc(doc, NULL, &e), BQ_MISSING_META);
    assert_false(e.dup_scan);
    assert_int_equal(count_warnings(&e, BQ_WARN_DUPLICATE_KEY), 0);
    bq_envelope_free(&e);
    json_decref(doc);
}

static void test_warning_cap(void **state)
{
    (void)state;
    struct strbuf sb;
    sb_init(&sb);
    sb_adds(&sb, "{" JOB "," TRACE "," META "," ATT ",\"data\":{");
    for (int i = 0; i < 40; i++)
        sb_addf(&sb, "%s\"k%d\":1,\"k%d\":2", i ? "," : "", i, i);
    sb_adds(&sb, "}}");
    struct bq_envelope e;
    assert_int_equal(bq_parse(sb.buf, sb.len, NULL, &e), BQ_OK);
    assert_int_equal(e.nwarnings, BQ_MAX_WARNINGS + 1);
    assert_int_equal(e.warnings_dropped, 40 - BQ_MAX_WARNINGS);
    assert_int_equal(e.warnings[BQ_MAX_WARNINGS].kind, BQ_WARN_TRUNCATED);
    assert_string_equal(e.warnings[BQ_MAX_WARNINGS].text, "8 more warnings not kept");
    bq_envelope_free(&e);
    sb_free(&sb);
}

static void test_field_warnings(void **state)
{
    (void)state;
    struct bq_envelope e;
    assert_int_equal(parse("{" JOB "," TRACE "," DATA ",\"meta\":{\"queue\":7,\"lang\":\"php\","
                           "\"schema_version\":1,\"created_at\":1749132727}," ATT "}",
                           &e),
                     BQ_OK);
    assert_true(has_warning(&e, BQ_WARN_FIELD, "/meta/id is missing"));
    assert_true(has_warning(&e, BQ_WARN_FIELD, "/meta/queue is an integer, not a string"));
    assert_true(has_warning(&e, BQ_WARN_SECONDS, "/meta/created_at is 1749132727"));
    assert_int_equal(e.nwarnings, 3);
    const char *q;
    size_t qlen;
    assert_false(bq_source_queue(&e, &q, &qlen));
    bq_envelope_free(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical),        cmocka_unit_test(test_properties),
        cmocka_unit_test(test_urn_alias),        cmocka_unit_test(test_job_wins_over_urn),
        cmocka_unit_test(test_missing_urn),      cmocka_unit_test(test_schema_version),
        cmocka_unit_test(test_missing_meta),     cmocka_unit_test(test_invalid_data),
        cmocka_unit_test(test_missing_trace_id), cmocka_unit_test(test_invalid_attempts),
        cmocka_unit_test(test_rule_order),       cmocka_unit_test(test_unicode),
        cmocka_unit_test(test_large_integers),   cmocka_unit_test(test_nul_in_strings),
        cmocka_unit_test(test_unknown_keys),     cmocka_unit_test(test_forbidden_keys),
        cmocka_unit_test(test_duplicate_keys),   cmocka_unit_test(test_warning_cap),
        cmocka_unit_test(test_field_warnings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
