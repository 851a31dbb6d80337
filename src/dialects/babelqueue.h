/*
 * babelqueue: reads a BabelQueue envelope (schema_version 1) exactly as the SDKs' consumers
 * do — detection, the consumer acceptance rules with their reason codes, the meta and
 * dead_letter blocks — and collects the warnings a person inspecting a dead letter should
 * see (forbidden legacy keys, duplicate keys, AMQP properties that disagree with the body).
 *
 * This module never produces or re-encodes a body: the caller keeps the raw bytes it was
 * given, always, and shows or republishes those. In particular a body that jansson cannot
 * represent (an integer beyond int64, a NUL inside an object key) is reported as
 * malformed_json with jansson's error text while the bytes stay intact with the caller.
 *
 * JSON: the body is parsed with JSON_DECODE_ANY | JSON_ALLOW_NUL and without
 * JSON_REJECT_DUPLICATES, so for a repeated key the last value wins (as Go, Python, PHP and
 * JavaScript parsers do); a separate scan of the bytes names every repeated key as a
 * warning. Integers are json_int_t (long long, exact over the whole int64 range); reals are
 * IEEE doubles. Strings may hold NUL bytes: every length here comes from
 * json_string_length, never strlen.
 *
 * Mapping onto the neutral envelope (envelope.h), for the dialect decoder:
 *   id           = meta.id
 *   type         = job (or the urn alias)
 *   version      = meta.schema_version
 *   correlation  = trace_id
 *   causation    = none in the envelope (a parent link, if any, is the W3C traceparent header)
 *   attempt      = bq_attempt(): dead_letter.attempts when the block has it, else attempts
 *   first_seen   = meta.created_at (Unix epoch milliseconds)
 *   origin       = meta.lang
 *   error        = dead_letter.error (and dead_letter.exception, the error's class/type)
 *   source queue = bq_source_queue(): dead_letter.original_queue, else meta.queue
 * The AMQP projection every producer sets: type = job, correlation_id = trace_id,
 * message_id = meta.id, app_id = "babelqueue"; the body is authoritative when they differ.
 *
 * Ownership: a struct bq_envelope owns one reference to its document (doc) and its warning
 * strings; every other json_t pointer and every string pointer in it is borrowed from doc and
 * lives until bq_envelope_free. Nothing here modifies the document; callers must not either.
 */
#ifndef DLQX_BABELQUEUE_H
#define DLQX_BABELQUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "bytes.h"

/* Why an envelope is not accepted, in the order the rules are checked (the first failing rule
 * wins). The last six are the consumer rules and the SDKs' reason codes; the three before
 * them say the body is not an envelope at all. */
#define BQ_REASON_LIST(X)                                                                          \
    X(BQ_OK, "ok", "accepted: the envelope satisfies every consumer rule")                         \
    X(BQ_MALFORMED_JSON, "malformed_json", "the body is not valid JSON")                           \
    X(BQ_NOT_AN_OBJECT, "not_an_object", "the body is JSON but not a JSON object")                 \
    X(BQ_UNDECODABLE_BODY, "undecodable_body",                                                     \
      "the body could not be decoded when it was dead-lettered; it is kept wrapped as "            \
      "{\"raw\": …, \"dead_letter\": …}")                                                          \
    X(BQ_MISSING_URN, "missing_urn",                                                               \
      "job (or its inbound alias urn) is absent, not a string, or blank")                          \
    X(BQ_MISSING_META, "missing_meta", "meta is absent or not an object")                          \
    X(BQ_UNSUPPORTED_SCHEMA_VERSION, "unsupported_schema_version",                                 \
      "meta.schema_version is not the integer 1")                                                  \
    X(BQ_INVALID_DATA, "invalid_data", "data is absent or not a JSON object")                      \
    X(BQ_MISSING_TRACE_ID, "missing_trace_id", "trace_id is absent, not a string, or blank")       \
    X(BQ_INVALID_ATTEMPTS, "invalid_attempts", "attempts is absent, not an integer, or negative")

enum bq_reason {
#define X(e, name, text) e,
    BQ_REASON_LIST(X)
#undef X
};

/* "missing_urn", …: the wire name of the code ("?" for a value outside the enum). */
const char *bq_reason_name(enum bq_reason r);
/* One human sentence for the code. */
const char *bq_reason_text(enum bq_reason r);

/* The AMQP properties that matter here; each is borrowed, NULL when the property is not set
 * (props_string() from message.h returns exactly this). The whole struct may be NULL. */
struct bq_props {
    const struct bytes *app_id;
    const struct bytes *type;
    const struct bytes *correlation_id;
    const struct bytes *message_id;
};

/* How a message was recognised as BabelQueue. */
enum bq_detected {
    BQ_DETECT_NONE,     /* not BabelQueue */
    BQ_DETECT_APP_ID,   /* app_id is "babelqueue" (the body may be anything) */
    BQ_DETECT_SHAPE,    /* an object with job or urn plus meta, trace_id, data or attempts */
    BQ_DETECT_RAW_WRAP, /* {"raw": "<body>", "dead_letter": {…}} */
    BQ_DETECT_NO_URN,   /* neither job nor urn, but a meta holding schema_version and lang or
                         * created_at, beside trace_id, attempts or dead_letter: an envelope
                         * that lost its identity. It is read, and refused as missing_urn, as
                         * the SDKs refuse it (conformance invalid-missing-urn). */
};

/* Whether the message is BabelQueue: app_id is exactly "babelqueue" (then the body is not
 * even parsed), or the body is an envelope-shaped object (with its job/urn, or without it:
 * BQ_DETECT_NO_URN), or the wrapped raw form. A JSON body of another producer
 * ({"order_id":1}, {"data":{},"meta":{}}) is not. Never fails. */
bool bq_detect(const void *body, size_t len, const struct bq_props *props);
/* The same, saying how (BQ_DETECT_NONE: not BabelQueue). */
enum bq_detected bq_detect_how(const void *body, size_t len, const struct bq_props *props);
/* The same on an already parsed document (borrowed; NULL for a body that did not parse). */
enum bq_detected bq_detect_doc(const json_t *doc, const struct bq_props *props);

/* A member as found. json is NULL when the key is absent; otherwise it is the value, of
 * whatever type it has. s/len are set only when that value is a string. */
struct bq_str {
    json_t *json;  /* borrowed */
    const char *s; /* borrowed, NUL-terminated by jansson but may hold NULs: use len */
    size_t len;
};

struct bq_int {
    json_t *json; /* borrowed; NULL: absent */
    bool is_int;  /* the value is a JSON integer (not a real, not a string) */
    int64_t v;    /* valid when is_int */
};

enum bq_job_key {
    BQ_JOB_KEY_NONE, /* neither job nor urn is present */
    BQ_JOB_KEY_JOB,  /* read from the canonical job */
    BQ_JOB_KEY_URN,  /* read from the inbound alias urn (job is absent) */
};

struct bq_meta {
    json_t *json; /* the meta member (borrowed); NULL: absent; may be a non-object */
    bool is_object;
    struct bq_str id, queue, lang;
    struct bq_int schema_version, created_at;
};

enum bq_dl_reason {
    BQ_DL_REASON_NONE,   /* no reason string */
    BQ_DL_REASON_FAILED, /* "failed": the handler threw */
    BQ_DL_REASON_UNKNOWN_URN,
    BQ_DL_REASON_POISON,
    BQ_DL_REASON_OTHER, /* a reason not in the spec (e.g. "max_attempts"): tolerated, kept */
};

struct bq_dead_letter {
    json_t *json; /* the dead_letter member (borrowed); NULL: absent; may be a non-object */
    bool is_object;
    struct bq_str reason;
    enum bq_dl_reason reason_kind;
    struct bq_str error;     /* a string, or JSON null (json set, s NULL) when no cause */
    struct bq_str exception; /* the error's class/type; string or null like error */
    struct bq_int failed_at; /* Unix epoch milliseconds */
    struct bq_str original_queue;
    struct bq_int attempts;
    struct bq_str lang;
};

/* Legacy keys the spec forbids; present ones are also listed as warnings. */
enum bq_forbidden {
    BQ_FORBID_TIMESTAMP = 1u << 0,        /* top-level timestamp: use meta.created_at */
    BQ_FORBID_META_MAX_RETRIES = 1u << 1, /* consumer-side config */
    BQ_FORBID_META_ATTEMPTS = 1u << 2,    /* use top-level attempts */
    BQ_FORBID_META_SOURCE = 1u << 3,      /* use meta.lang */
    BQ_FORBID_META_TS = 1u << 4,          /* use meta.created_at */
};

enum bq_warning_kind {
    BQ_WARN_FORBIDDEN_KEY, /* a legacy key of the forbidden list */
    BQ_WARN_DUPLICATE_KEY, /* a key repeated in one object (the last value is the one read) */
    BQ_WARN_JOB_URN,       /* job and urn disagree, or job is unusable while urn is not */
    BQ_WARN_FIELD,         /* a non-rule field missing or of the wrong type (meta.id, …) */
    BQ_WARN_SECONDS,       /* a millisecond timestamp that looks like seconds */
    BQ_WARN_PROPERTY,      /* an AMQP property disagrees with the body */
    BQ_WARN_TRUNCATED,     /* more warnings were found than are kept */
};

struct bq_warning {
    enum bq_warning_kind kind;
    /* Owned; one line naming the member as a JSON pointer. Key names come from the message:
     * sanitize before printing. */
    char *text;
};

/* At most this many warnings are kept; one BQ_WARN_TRUNCATED line then counts the rest. */
#define BQ_MAX_WARNINGS 32

struct bq_envelope {
    json_t *doc; /* the parsed body: a reference the envelope owns; NULL when it did not parse */
    enum bq_reason reason; /* BQ_OK when accepted; else the first rule that fails */
    enum bq_detected detected;
    json_error_t json_error; /* jansson's text, line, column, position: for BQ_MALFORMED_JSON */
    bool dup_scan;           /* whether duplicate keys were looked for (bq_parse: yes) */

    bool raw_wrapped;  /* the {"raw": …, "dead_letter": …} form */
    struct bq_str raw; /* the raw body as the wrapper holds it */

    struct bq_str job; /* from job, else the urn alias; see job_key */
    enum bq_job_key job_key;
    struct bq_str trace_id;
    json_t *data; /* borrowed; NULL: absent; may be a non-object */
    struct bq_meta meta;
    struct bq_int attempts;
    struct bq_dead_letter dead_letter;
    unsigned forbidden; /* enum bq_forbidden bits */

    struct bq_warning *warnings; /* owned */
    size_t nwarnings;
    size_t warnings_cap;
    size_t warnings_dropped;
};

/* Parses and reads body (untrusted bytes, not retained). out is always filled — even for a
 * body that is not JSON — and must be released with bq_envelope_free. Returns out->reason.
 * An envelope that is not accepted is still read as far as it goes: every field that is there
 * is filled. It does not check detection: call bq_detect first, or look at out->detected. */
enum bq_reason bq_parse(const void *body, size_t len, const struct bq_props *props,
                        struct bq_envelope *out);
/* The same on a document parsed elsewhere (may be NULL: malformed_json with an empty error).
 * The envelope takes its own reference (json_incref); the caller keeps its own. There are no
 * bytes to scan, so duplicate keys are not looked for (dup_scan false). */
enum bq_reason bq_parse_doc(json_t *doc, const struct bq_props *props, struct bq_envelope *out);
/* Releases the document reference and the warnings; clears *env. Safe on a zeroed struct. */
void bq_envelope_free(struct bq_envelope *env);

static inline bool bq_accepted(const struct bq_envelope *env)
{
    return env->reason == BQ_OK;
}

/* The delivery count: dead_letter.attempts when the block has it as an integer, else the
 * top-level attempts when it is one. false (and *out untouched) when neither is. */
bool bq_attempt(const struct bq_envelope *env, int64_t *out);
/* Where the message came from: dead_letter.original_queue when it is a non-empty string, else
 * meta.queue when it is a string. *s is borrowed from the document. false when neither. */
bool bq_source_queue(const struct bq_envelope *env, const char **s, size_t *len);

/* Blank as every SDK means it (conformance GR-5): empty, or only ASCII space, \t, \n, \v,
 * \f, \r. NBSP, U+3000 and a BOM are not blank. */
bool bq_blank(const char *s, size_t len);

const char *bq_detected_name(enum bq_detected d);
const char *bq_dl_reason_name(enum bq_dl_reason r);
const char *bq_warning_kind_name(enum bq_warning_kind k);

#endif
