/*
 * test_babelqueue: the BabelQueue envelope reader against the seed (schema_version 1): the
 * canonical envelope, the urn alias, each consumer rule and their order, numbers, unicode,
 * NUL, forbidden and duplicate keys, dead letters, the raw-wrapped form and detection.
 */
#include "testutil.h"

#include <string.h>

#include "babelqueue.h"
#include "util.h"

/* Pieces of the seed's canonical envelope, to build variants that differ in one member. */
#define JOB "\"job\":\"urn:babel:orders:created\""
#define TRACE "\"trace_id\":\"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b\""
#define DATA "\"data\":{\"order_id\":1042,\"amount\":99.90}"
#define META_V(v)                                                                                  \
    "\"meta\":{\"id\":\"f1e2d3c4-b5a6-4789-90ab-cdef01234567\",\"queue\":\"default\","             \
    "\"lang\":\"php\",\"schema_version\":" v ",\"created_at\":1749132727000}"
#define META META_V("1")
#define ATT "\"attempts\":0"

static enum bq_reason parse(const char *s, struct bq_envelope *e)
{
    return bq_parse(s, strlen(s), NULL, e);
}

static enum bq_reason parse_fixture(const char *name, struct bq_envelope *e)
{
    struct bytes b = test_read_fixture(name);
    enum bq_reason r = bq_parse(b.data, b.len, NULL, e);
    bytes_free(&b);
    return r;
}

static enum bq_reason reason_of(const char *s)
{
    struct bq_envelope e;
    enum bq_reason r = parse(s, &e);
    bq_envelope_free(&e);
    return r;
}

#define assert_str(field, lit)                                                                     \
    do {                                                                                           \
        assert_non_null((field).s);                                                                \
        assert_int_equal((field).len, sizeof(lit) - 1);                                            \
        assert_memory_equal((field).s, lit, sizeof(lit) - 1);                                      \
    } while (0)

static size_t count_warnings(const struct bq_envelope *e, enum bq_warning_kind k)
{
    size_t n = 0;
    for (size_t i = 0; i < e->nwarnings; i++)
        n += e->warnings[i].kind == k;
    return n;
}

static bool has_warning(const struct bq_envelope *e, enum bq_warning_kind k, const char *needle)
{
    for (size_t i = 0; i < e->nwarnings; i++)
        if (e->warnings[i].kind == k && strstr(e->warnings[i].text, needle))
            return true;
    return false;
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

/* ---- dead letters --------------------------------------------------------------------- */

static void test_dead_letter(void **state)
{
    (void)state;
    struct bq_envelope e;
    assert_int_equal(parse_fixture("babelqueue/dead-letter.json", &e), BQ_OK);
    const struct bq_dead_letter *d = &e.dead_letter;
    assert_non_null(d->json);
    assert_true(d->is_object);
    assert_str(d->reason, "failed");
    assert_int_equal(d->reason_kind, BQ_DL_REASON_FAILED);
    assert_str(d->error, "Payment gateway timeout");
    assert_str(d->exception, "App\\Exceptions\\GatewayTimeout");
    assert_true(d->failed_at.is_int);
    assert_int_equal(d->failed_at.v, INT64_C(1749132730000));
    assert_str(d->original_queue, "orders");
    assert_true(d->attempts.is_int);
    assert_int_equal(d->attempts.v, 3);
    assert_str(d->lang, "php");
    assert_int_equal(e.nwarnings, 0);
    /* The block's count wins over the top-level one; its queue over meta.queue. */
    assert_int_equal(e.attempts.v, 2);
    int64_t n = 0;
    assert_true(bq_attempt(&e, &n));
    assert_int_equal(n, 3);
    const char *q;
    size_t qlen;
    assert_true(bq_source_queue(&e, &q, &qlen));
    assert_int_equal(qlen, 6);
    assert_memory_equal(q, "orders", 6);
    bq_envelope_free(&e);
}

static void test_dead_letter_no_cause(void **state)
{
    (void)state;
    struct bq_envelope e;
    assert_int_equal(parse_fixture("babelqueue/dead-letter-no-cause.json", &e), BQ_OK);
    const struct bq_dead_letter *d = &e.dead_letter;
    assert_str(d->reason, "max_attempts");
    assert_int_equal(d->reason_kind, BQ_DL_REASON_OTHER);
    assert_true(json_is_null(d->error.json));
    assert_null(d->error.s);
    assert_true(json_is_null(d->exception.json));
    assert_null(d->exception.s);
    assert_str(d->lang, "go");
    assert_non_null(json_object_get(d->json, "worker")); /* extra keys are kept */
    assert_int_equal(e.nwarnings, 0);
    /* An empty original_queue falls back to meta.queue. */
    const char *q;
    size_t qlen;
    assert_true(bq_source_queue(&e, &q, &qlen));
    assert_int_equal(qlen, 6);
    assert_memory_equal(q, "orders", 6);
    bq_envelope_free(&e);

    /* reason names */
    const char *const reasons[] = {"failed", "unknown_urn", "poison", "Failed", "exploded"};
    const enum bq_dl_reason kinds[] = {BQ_DL_REASON_FAILED, BQ_DL_REASON_UNKNOWN_URN,
                                       BQ_DL_REASON_POISON, BQ_DL_REASON_OTHER, BQ_DL_REASON_OTHER};
    for (size_t i = 0; i < 5; i++) {
        char *body = xasprintf("{" JOB "," TRACE "," DATA "," META "," ATT
                               ",\"dead_letter\":{\"reason\":\"%s\"}}",
                               reasons[i]);
        assert_int_equal(parse(body, &e), BQ_OK);
        assert_int_equal(e.dead_letter.reason_kind, kinds[i]);
        bq_envelope_free(&e);
        free(body);
    }
    assert_string_equal(bq_dl_reason_name(BQ_DL_REASON_UNKNOWN_URN), "unknown_urn");
}

static void test_dead_letter_odd(void **state)
{
    (void)state;
    struct bq_envelope e;
    /* Not an object: kept, flagged, and the top-level count is the attempt. */
    assert_int_equal(parse("{" JOB "," TRACE "," DATA "," META ",\"attempts\":4,"
                           "\"dead_letter\":\"failed\"}",
                           &e),
                     BQ_OK);
    assert_non_null(e.dead_letter.json);
    assert_false(e.dead_letter.is_object);
    assert_true(has_warning(&e, BQ_WARN_FIELD, "/dead_letter is a string, not an object"));
    int64_t n = 0;
    assert_true(bq_attempt(&e, &n));
    assert_int_equal(n, 4);
    bq_envelope_free(&e);

    /* Fields of the wrong type are named; failed_at in seconds is suspected. */
    assert_int_equal(parse("{" JOB "," TRACE "," DATA "," META "," ATT ",\"dead_letter\":{"
                           "\"reason\":1,\"error\":{},\"exception\":null,\"failed_at\":1749132730,"
                           "\"original_queue\":\"orders\",\"attempts\":\"3\",\"lang\":\"php\"}}",
                           &e),
                     BQ_OK);
    assert_int_equal(e.dead_letter.reason_kind, BQ_DL_REASON_NONE);
    assert_true(has_warning(&e, BQ_WARN_FIELD, "/dead_letter/reason is an integer"));
    assert_true(
        has_warning(&e, BQ_WARN_FIELD, "/dead_letter/error is an object, not a string or null"));
    assert_true(has_warning(&e, BQ_WARN_SECONDS, "/dead_letter/failed_at"));
    assert_true(has_warning(&e, BQ_WARN_FIELD, "/dead_letter/attempts is a string"));
    assert_int_equal(e.nwarnings, 4);
    assert_true(bq_attempt(&e, &n));
    assert_int_equal(n, 0); /* the block's "3" is not a count */
    bq_envelope_free(&e);
}

static void test_raw_wrapped(void **state)
{
    (void)state;
    struct bq_envelope e;
    assert_int_equal(parse_fixture("babelqueue/raw-wrapped.json", &e), BQ_UNDECODABLE_BODY);
    assert_false(bq_accepted(&e));
    assert_true(e.raw_wrapped);
    assert_int_equal(e.detected, BQ_DETECT_RAW_WRAP);
    assert_str(e.raw, "{\"job\": \"urn:babel:orders:created\", \"data\": {oops");
    assert_int_equal(e.job_key, BQ_JOB_KEY_NONE);
    assert_str(e.dead_letter.reason, "poison");
    assert_int_equal(e.dead_letter.reason_kind, BQ_DL_REASON_POISON);
    assert_str(e.dead_letter.exception, "JsonException");
    assert_str(e.dead_letter.original_queue, "orders");
    int64_t n = 0;
    assert_true(bq_attempt(&e, &n));
    assert_int_equal(n, 1);
    assert_int_equal(e.nwarnings, 0);
    bq_envelope_free(&e);
}

/* ---- not an envelope ------------------------------------------------------------------ */

static void test_not_json(void **state)
{
    (void)state;
    struct bq_envelope e;
    assert_int_equal(parse("this is not json", &e), BQ_MALFORMED_JSON);
    assert_null(e.doc);
    assert_int_equal(e.detected, BQ_DETECT_NONE);
    assert_true(e.json_error.text[0] != '\0');
    assert_int_equal(e.json_error.line, 1);
    assert_true(e.json_error.column > 0);
    assert_null(e.job.json);
    assert_false(e.dup_scan);
    bq_envelope_free(&e);

    assert_int_equal(bq_parse(NULL, 0, NULL, &e), BQ_MALFORMED_JSON);
    bq_envelope_free(&e);
    assert_int_equal(reason_of("{" JOB "," TRACE ","), BQ_MALFORMED_JSON);
    assert_int_equal(reason_of("{" JOB ",}"), BQ_MALFORMED_JSON);
    assert_int_equal(reason_of("{\"a\":NaN}"), BQ_MALFORMED_JSON);
    assert_int_equal(reason_of("{\"a\":1} trailing"), BQ_MALFORMED_JSON);
    assert_int_equal(reason_of("{\"a\":1e400}"), BQ_MALFORMED_JSON);

    /* A document nobody parsed. */
    assert_int_equal(bq_parse_doc(NULL, NULL, &e), BQ_MALFORMED_JSON);
    bq_envelope_free(&e);
}

static void test_not_an_object(void **state)
{
    (void)state;
    const char *const bodies[] = {"["
                                  "{" JOB "," TRACE "," DATA "," META "," ATT "}"
                                  "]",
                                  "\"urn:babel:orders:created\"",
                                  "42",
                                  "null",
                                  "true",
                                  "[]"};
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        struct bq_envelope e;
        if (parse(bodies[i], &e) != BQ_NOT_AN_OBJECT)
            fail_msg("case %zu: %s", i, bq_reason_name(e.reason));
        assert_non_null(e.doc);
        assert_int_equal(e.job_key, BQ_JOB_KEY_NONE);
        bq_envelope_free(&e);
    }
}

/* ---- detection ------------------------------------------------------------------------ */

static bool detect(const char *body, const char *app_id)
{
    struct bytes a = app_id ? bytes_from_cstr(app_id) : (struct bytes){0, NULL};
    struct bq_props p = {app_id ? &a : NULL, NULL, NULL, NULL};
    bool r = bq_detect(body, strlen(body), &p);
    bytes_free(&a);
    return r;
}

static void test_detect(void **state)
{
    (void)state;
    assert_true(detect("{" JOB "," TRACE "," DATA "," META "," ATT "}", NULL));
    assert_true(detect("{\"urn\":\"x\",\"data\":{}}", NULL));
    assert_true(detect("{\"job\":5,\"attempts\":\"x\"}", NULL)); /* shape, then rejected */
    assert_true(detect("{\"job\":\"x\",\"trace_id\":\"t\"}", NULL));
    assert_true(detect("{\"job\":\"x\",\"meta\":1}", NULL));
    assert_true(detect("{\"raw\":\"garbage\",\"dead_letter\":{}}", NULL));
    assert_true(detect("not json at all", "babelqueue"));
    assert_true(detect("{" JOB "," DATA "}", "orders-service"));

    /* No job or urn, but the rest of an envelope (conformance invalid-missing-urn): it is
     * BabelQueue, and refused as missing_urn below. */
    assert_true(detect("{" TRACE "," DATA "," META "," ATT "}", NULL));
    assert_true(detect("{\"attempts\":0,\"meta\":{\"schema_version\":1,\"lang\":\"go\"}}", NULL));
    assert_true(
        detect("{\"dead_letter\":{},\"meta\":{\"schema_version\":2,\"created_at\":1}}", NULL));

    /* Keys spelled with \u escapes: the bytes alone do not show them (bq_detect_how's quick
     * refusal must not skip these). */
    assert_true(detect("{\"\\u006aob\":\"x\",\"trace_id\":\"t\"}", NULL));
    assert_true(detect("{\"\\u0075rn\":\"x\",\"data\":{}}", NULL));
    assert_true(detect("{\"raw\":\"garbage\",\"dead_\\u006cetter\":{}}", NULL));
    assert_true(
        detect("{\"attempts\":0,\"meta\":{\"schema_\\u0076ersion\":1,\"lang\":\"go\"}}", NULL));

    assert_false(detect("{\"order_id\":1}", NULL));
    assert_false(detect("{\"order_id\":1,\"data\":{},\"meta\":{}}", NULL));
    /* Without job/urn the shape needs meta.schema_version, lang or created_at, and trace_id,
     * attempts or dead_letter: a JSON:API-like document is not an envelope. */
    assert_false(detect("{\"data\":{},\"meta\":{\"schema_version\":1,\"lang\":\"go\"}}", NULL));
    assert_false(detect("{\"trace_id\":\"t\",\"meta\":{\"schema_version\":1}}", NULL));
    assert_false(detect("{\"trace_id\":\"t\",\"meta\":{\"lang\":\"go\"}}", NULL));
    assert_false(detect("{\"trace_id\":\"t\",\"meta\":[\"schema_version\",\"lang\"]}", NULL));
    assert_false(detect("{\"trace_id\":\"t\",\"schema_version\":1,\"lang\":\"go\"}", NULL));
    assert_false(detect("{\"job\":\"urn:babel:orders:created\"}", NULL));
    assert_false(detect("{\"raw\":\"garbage\"}", NULL));
    assert_false(detect("{\"raw\":1,\"dead_letter\":{}}", NULL));
    assert_false(detect("{\"raw\":\"x\",\"dead_letter\":\"failed\"}", NULL));
    assert_false(detect("not json at all", NULL));
    assert_false(detect("[{" JOB "," DATA "}]", NULL));
    assert_false(detect("{\"order_id\":1}", "BabelQueue")); /* app_id compares exactly */
    assert_false(detect("{\"order_id\":1}", "babelqueue "));
    assert_false(bq_detect(NULL, 0, NULL));
    assert_int_equal(bq_detect_doc(NULL, NULL), BQ_DETECT_NONE);

    /* app_id babelqueue with a garbage body: it is BabelQueue, and it is rejected. */
    struct bytes app = bytes_from_cstr("babelqueue");
    struct bq_props p = {&app, NULL, NULL, NULL};
    struct bq_envelope e;
    const char *garbage = "\x01\x02 not { json";
    assert_int_equal(bq_parse(garbage, strlen(garbage), &p, &e), BQ_MALFORMED_JSON);
    assert_int_equal(e.detected, BQ_DETECT_APP_ID);
    assert_true(e.json_error.text[0] != '\0');
    bq_envelope_free(&e);

    /* Another producer's JSON is parsed but not detected (and fails the first rule). */
    assert_int_equal(parse("{\"order_id\":1}", &e), BQ_MISSING_URN);
    assert_int_equal(e.detected, BQ_DETECT_NONE);
    bq_envelope_free(&e);
    /* An envelope without its identity is detected by its shape and refused. */
    assert_int_equal(parse("{" TRACE "," DATA "," META "," ATT "}", &e), BQ_MISSING_URN);
    assert_int_equal(e.detected, BQ_DETECT_NO_URN);
    assert_string_equal(bq_detected_name(e.detected), "shape_without_urn");
    bq_envelope_free(&e);
    bytes_free(&app);
    assert_string_equal(bq_detected_name(BQ_DETECT_RAW_WRAP), "raw_wrap");
}

/* ---- the rest of the API -------------------------------------------------------------- */

static void test_reason_names(void **state)
{
    (void)state;
    static const struct {
        enum bq_reason r;
        const char *name;
    } want[] = {
        {BQ_OK, "ok"},
        {BQ_MALFORMED_JSON, "malformed_json"},
        {BQ_NOT_AN_OBJECT, "not_an_object"},
        {BQ_UNDECODABLE_BODY, "undecodable_body"},
        {BQ_MISSING_URN, "missing_urn"},
        {BQ_MISSING_META, "missing_meta"},
        {BQ_UNSUPPORTED_SCHEMA_VERSION, "unsupported_schema_version"},
        {BQ_INVALID_DATA, "invalid_data"},
        {BQ_MISSING_TRACE_ID, "missing_trace_id"},
        {BQ_INVALID_ATTEMPTS, "invalid_attempts"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        assert_int_equal(want[i].r, i); /* the rule order is the enum order */
        assert_string_equal(bq_reason_name(want[i].r), want[i].name);
        assert_true(strlen(bq_reason_text(want[i].r)) > 10);
    }
    assert_string_equal(bq_reason_name((enum bq_reason)99), "?");
    assert_non_null(bq_reason_text((enum bq_reason)99));
    assert_string_equal(bq_warning_kind_name(BQ_WARN_DUPLICATE_KEY), "duplicate key");
}

static void test_blank(void **state)
{
    (void)state;
    assert_true(bq_blank("", 0));
    assert_true(bq_blank(" \t\n\v\f\r", 6));
    assert_false(bq_blank("\0", 1));
    assert_false(bq_blank("\xc2\xa0", 2));
    assert_false(bq_blank(" x ", 3));
}

static void test_parse_doc(void **state)
{
    (void)state;
    struct bytes b = test_read_fixture("babelqueue/dead-letter.json");
    json_t *doc = json_loadb((const char *)b.data, b.len, 0, NULL);
    bytes_free(&b);
    assert_non_null(doc);
    struct bq_envelope e;
    assert_int_equal(bq_parse_doc(doc, NULL, &e), BQ_OK);
    assert_ptr_equal(e.doc, doc);
    assert_int_equal(doc->refcount, 2); /* the envelope holds its own reference */
    assert_str(e.dead_letter.reason, "failed");
    bq_envelope_free(&e);
    assert_int_equal(doc->refcount, 1);
    json_decref(doc);

    struct bq_envelope z;
    memset(&z, 0, sizeof z);
    bq_envelope_free(&z);
    bq_envelope_free(&z);
    bq_envelope_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_canonical),
        cmocka_unit_test(test_properties),
        cmocka_unit_test(test_urn_alias),
        cmocka_unit_test(test_job_wins_over_urn),
        cmocka_unit_test(test_missing_urn),
        cmocka_unit_test(test_schema_version),
        cmocka_unit_test(test_missing_meta),
        cmocka_unit_test(test_invalid_data),
        cmocka_unit_test(test_missing_trace_id),
        cmocka_unit_test(test_invalid_attempts),
        cmocka_unit_test(test_rule_order),
        cmocka_unit_test(test_unicode),
        cmocka_unit_test(test_large_integers),
        cmocka_unit_test(test_nul_in_strings),
        cmocka_unit_test(test_unknown_keys),
        cmocka_unit_test(test_forbidden_keys),
        cmocka_unit_test(test_duplicate_keys),
        cmocka_unit_test(test_warning_cap),
        cmocka_unit_test(test_field_warnings),
        cmocka_unit_test(test_dead_letter),
        cmocka_unit_test(test_dead_letter_no_cause),
        cmocka_unit_test(test_dead_letter_odd),
        cmocka_unit_test(test_raw_wrapped),
        cmocka_unit_test(test_not_json),
        cmocka_unit_test(test_not_an_object),
        cmocka_unit_test(test_detect),
        cmocka_unit_test(test_reason_names),
        cmocka_unit_test(test_blank),
        cmocka_unit_test(test_parse_doc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
