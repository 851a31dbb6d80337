/*
 * test_babelqueue_dead: the BabelQueue envelope reader on dead letters (with and without a
 * cause, odd ones), the raw-wrapped form, bodies that are not an envelope, detection from
 * the body and the app_id, and the rest of the API (reason names, a blank envelope, the
 * parse doc).
 */
#include "babelqueue_testutil.h"

#include <string.h>

#include "babelqueue.h"
#include "util.h"

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
        detect("{\"attempts\":0,\"m\\u0065ta\":{\"schema_version\":1,\"lang\":\"go\"}}", NULL));

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
        cmocka_unit_test(test_dead_letter),     cmocka_unit_test(test_dead_letter_no_cause),
        cmocka_unit_test(test_dead_letter_odd), cmocka_unit_test(test_raw_wrapped),
        cmocka_unit_test(test_not_json),        cmocka_unit_test(test_not_an_object),
        cmocka_unit_test(test_detect),          cmocka_unit_test(test_reason_names),
        cmocka_unit_test(test_blank),           cmocka_unit_test(test_parse_doc),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
