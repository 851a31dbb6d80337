/*
 * babelqueue: reading a BabelQueue envelope — detection, the consumer rules in their order,
 * the meta and dead_letter blocks, and the warnings (forbidden keys, duplicate keys found by a
 * scan of the bytes, AMQP properties that disagree with the body). Produces no bodies.
 */
#include "babelqueue.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

/* DECODE_ANY so that a JSON string or number body is reported as not_an_object rather than
 * as a parse error; ALLOW_NUL because a JSON string may legally hold \u0000. Duplicate keys
 * are accepted (last wins) and reported by dup_scan(). */
#define BQ_JSON_FLAGS (JSON_DECODE_ANY | JSON_ALLOW_NUL)

/* 1e11 ms is March 1973; as seconds it is the year 5138. A millisecond timestamp below it is
 * almost surely seconds (the spec's "milliseconds, not seconds"). */
#define BQ_SECONDS_LIMIT INT64_C(100000000000)

static const char *const reason_names[] = {
#define X(e, name, text) name,
    BQ_REASON_LIST(X)
#undef X
};

static const char *const reason_texts[] = {
#define X(e, name, text) text,
    BQ_REASON_LIST(X)
#undef X
};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

const char *bq_reason_name(enum bq_reason r)
{
    return (size_t)r < NELEM(reason_names) ? reason_names[r] : "?";
}

const char *bq_reason_text(enum bq_reason r)
{
    return (size_t)r < NELEM(reason_texts) ? reason_texts[r] : "unknown reason code";
}

const char *bq_detected_name(enum bq_detected d)
{
    switch (d) {
    case BQ_DETECT_NONE:
        return "none";
    case BQ_DETECT_APP_ID:
        return "app_id";
    case BQ_DETECT_SHAPE:
        return "shape";
    case BQ_DETECT_RAW_WRAP:
        return "raw_wrap";
    case BQ_DETECT_NO_URN:
        return "shape_without_urn";
    }
    return "?";
}

const char *bq_dl_reason_name(enum bq_dl_reason r)
{
    switch (r) {
    case BQ_DL_REASON_NONE:
        return "none";
    case BQ_DL_REASON_FAILED:
        return "failed";
    case BQ_DL_REASON_UNKNOWN_URN:
        return "unknown_urn";
    case BQ_DL_REASON_POISON:
        return "poison";
    case BQ_DL_REASON_OTHER:
        return "other";
    }
    return "?";
}

const char *bq_warning_kind_name(enum bq_warning_kind k)
{
    switch (k) {
    case BQ_WARN_FORBIDDEN_KEY:
        return "forbidden key";
    case BQ_WARN_DUPLICATE_KEY:
        return "duplicate key";
    case BQ_WARN_JOB_URN:
        return "job/urn";
    case BQ_WARN_FIELD:
        return "field";
    case BQ_WARN_SECONDS:
        return "seconds";
    case BQ_WARN_PROPERTY:
        return "property";
    case BQ_WARN_TRUNCATED:
        return "truncated";
    }
    return "?";
}

bool bq_blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        switch (s[i]) {
        case ' ':
        case '\t':
        case '\n':
        case '\v':
        case '\f':
        case '\r':
            break;
        default:
            return false;
        }
    }
    return true;
}

/* ---- warnings ------------------------------------------------------------------------- */

static void warn(struct bq_envelope *env, enum bq_warning_kind kind, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void warn_text(struct bq_envelope *env, enum bq_warning_kind kind, char *text)
{
    xgrow((void **)&env->warnings, &env->warnings_cap, env->nwarnings + 1, sizeof *env->warnings);
    env->warnings[env->nwarnings].kind = kind;
    env->warnings[env->nwarnings].text = text;
    env->nwarnings++;
}

static void warn(struct bq_envelope *env, enum bq_warning_kind kind, const char *fmt, ...)
{
    if (env->nwarnings >= BQ_MAX_WARNINGS) {
        env->warnings_dropped++;
        return;
    }
    struct strbuf sb;
    sb_init(&sb);
    va_list ap;
    va_start(ap, fmt);
    sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    warn_text(env, kind, sb_detach(&sb, NULL));
}

static void warn_finish(struct bq_envelope *env)
{
    if (env->warnings_dropped > 0)
        warn_text(env, BQ_WARN_TRUNCATED,
                  xasprintf("%zu more warnings not kept", env->warnings_dropped));
}

/* ---- members -------------------------------------------------------------------------- */

static struct bq_str get_str(const json_t *obj, const char *key)
{
    struct bq_str r = {NULL, NULL, 0};
    if (!json_is_object(obj))
        return r;
    r.json = json_object_get(obj, key);
    if (json_is_string(r.json)) {
        r.s = json_string_value(r.json);
        r.len = json_string_length(r.json);
    }
    return r;
}

static struct bq_int get_int(const json_t *obj, const char *key)
{
    struct bq_int r = {NULL, false, 0};
    if (!json_is_object(obj))
        return r;
    r.json = json_object_get(obj, key);
    if (json_is_integer(r.json)) {
        r.is_int = true;
        r.v = (int64_t)json_integer_value(r.json);
    }
    return r;
}

static bool str_usable(const struct bq_str *s)
{
    return s->s && !bq_blank(s->s, s->len);
}

static const char *json_kind(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT:
        return "an object";
    case JSON_ARRAY:
        return "an array";
    case JSON_STRING:
        return "a string";
    case JSON_INTEGER:
        return "an integer";
    case JSON_REAL:
        return "a real number";
    case JSON_TRUE:
    case JSON_FALSE:
        return "a boolean";
    case JSON_NULL:
        return "null";
    }
    return "?";
}

/* Warns about a member that is not one of the acceptance rules but that the spec requires
 * (meta.id, …) or types (dead_letter.failed_at, …). */
static void check_str_field(struct bq_envelope *env, const char *ptr, const struct bq_str *s,
                            bool null_ok)
{
    if (!s->json)
        warn(env, BQ_WARN_FIELD, "%s is missing", ptr);
    else if (!s->s && !(null_ok && json_is_null(s->json)))
        warn(env, BQ_WARN_FIELD, "%s is %s, not a string%s", ptr, json_kind(s->json),
             null_ok ? " or null" : "");
}

static void check_ms_field(struct bq_envelope *env, const char *ptr, const struct bq_int *n)
{
    if (!n->json)
        warn(env, BQ_WARN_FIELD, "%s is missing", ptr);
    else if (!n->is_int)
        warn(env, BQ_WARN_FIELD, "%s is %s, not an integer (epoch milliseconds)", ptr,
             json_kind(n->json));
    else if (n->v > 0 && n->v < BQ_SECONDS_LIMIT)
        warn(env, BQ_WARN_SECONDS, "%s is %lld: epoch seconds, not milliseconds?", ptr,
             (long long)n->v);
}

static void read_meta(struct bq_envelope *env, json_t *root)
{
    struct bq_meta *m = &env->meta;
    m->json = json_object_get(root, "meta");
    m->is_object = json_is_object(m->json);
    if (!m->is_object)
        return;
    m->id = get_str(m->json, "id");
    m->queue = get_str(m->json, "queue");
    m->lang = get_str(m->json, "lang");
    m->schema_version = get_int(m->json, "schema_version");
    m->created_at = get_int(m->json, "created_at");
    check_str_field(env, "/meta/id", &m->id, false);
    check_str_field(env, "/meta/queue", &m->queue, false);
    check_str_field(env, "/meta/lang", &m->lang, false);
    check_ms_field(env, "/meta/created_at", &m->created_at);
}

static enum bq_dl_reason dl_reason_kind(const struct bq_str *r)
{
    static const struct {
        const char *name;
        enum bq_dl_reason kind;
    } known[] = {
        {"failed", BQ_DL_REASON_FAILED},
        {"unknown_urn", BQ_DL_REASON_UNKNOWN_URN},
        {"poison", BQ_DL_REASON_POISON},
    };
    if (!r->s)
        return BQ_DL_REASON_NONE;
    for (size_t i = 0; i < NELEM(known); i++)
        if (r->len == strlen(known[i].name) && memcmp(r->s, known[i].name, r->len) == 0)
            return known[i].kind;
    return BQ_DL_REASON_OTHER;
}

static void read_dead_letter(struct bq_envelope *env, json_t *root)
{
    struct bq_dead_letter *d = &env->dead_letter;
    d->json = json_object_get(root, "dead_letter");
    d->is_object = json_is_object(d->json);
    if (!d->json)
        return;
    if (!d->is_object) {
        warn(env, BQ_WARN_FIELD, "/dead_letter is %s, not an object", json_kind(d->json));
        return;
    }
    d->reason = get_str(d->json, "reason");
    d->reason_kind = dl_reason_kind(&d->reason);
    d->error = get_str(d->json, "error");
    d->exception = get_str(d->json, "exception");
    d->failed_at = get_int(d->json, "failed_at");
    d->original_queue = get_str(d->json, "original_queue");
    d->attempts = get_int(d->json, "attempts");
    d->lang = get_str(d->json, "lang");

    check_str_field(env, "/dead_letter/reason", &d->reason, false);
    /* error and exception are null when no cause was supplied; absent is tolerated too. */
    if (d->error.json)
        check_str_field(env, "/dead_letter/error", &d->error, true);
    if (d->exception.json)
        check_str_field(env, "/dead_letter/exception", &d->exception, true);
    check_ms_field(env, "/dead_letter/failed_at", &d->failed_at);
    check_str_field(env, "/dead_letter/original_queue", &d->original_queue, false);
    if (!d->attempts.json)
        warn(env, BQ_WARN_FIELD, "/dead_letter/attempts is missing");
    else if (!d->attempts.is_int)
        warn(env, BQ_WARN_FIELD, "/dead_letter/attempts is %s, not an integer",
             json_kind(d->attempts.json));
    check_str_field(env, "/dead_letter/lang", &d->lang, false);
}

static void read_forbidden(struct bq_envelope *env, json_t *root)
{
    static const struct {
        bool in_meta;
        const char *key;
        unsigned bit;
        const char *instead;
    } list[] = {
        {false, "timestamp", BQ_FORBID_TIMESTAMP, "meta.created_at (Unix ms)"},
        {true, "max_retries", BQ_FORBID_META_MAX_RETRIES, "consumer-side configuration"},
        {true, "attempts", BQ_FORBID_META_ATTEMPTS, "top-level attempts"},
        {true, "source", BQ_FORBID_META_SOURCE, "meta.lang"},
        {true, "ts", BQ_FORBID_META_TS, "meta.created_at (Unix ms)"},
    };
    for (size_t i = 0; i < NELEM(list); i++) {
        const json_t *obj = list[i].in_meta ? env->meta.json : root;
        if (!json_is_object(obj) || !json_object_get(obj, list[i].key))
            continue;
        env->forbidden |= list[i].bit;
        warn(env, BQ_WARN_FORBIDDEN_KEY, "%s/%s is a forbidden legacy key (use %s)",
             list[i].in_meta ? "/meta" : "", list[i].key, list[i].instead);
    }
}

static bool bytes_eq_str(const struct bytes *b, const struct bq_str *s)
{
    return b->len == s->len && (s->len == 0 || memcmp(b->data, s->s, s->len) == 0);
}

/* The properties every producer projects from the body. A property that is not set is not a
 * disagreement (Laravel leaves type/correlation/message id off its dead letters). */
static void check_props(struct bq_envelope *env, const struct bq_props *p)
{
    if (!p)
        return;
    const struct {
        const struct bytes *prop;
        const char *pname;
        const struct bq_str *field;
        const char *fname;
    } pairs[] = {
        {p->type, "type", &env->job, env->job_key == BQ_JOB_KEY_URN ? "/urn" : "/job"},
        {p->correlation_id, "correlation_id", &env->trace_id, "/trace_id"},
        {p->message_id, "message_id", &env->meta.id, "/meta/id"},
    };
    for (size_t i = 0; i < NELEM(pairs); i++)
        if (pairs[i].prop && pairs[i].field->s && !bytes_eq_str(pairs[i].prop, pairs[i].field))
            warn(env, BQ_WARN_PROPERTY, "the AMQP property %s differs from %s (the body wins)",
                 pairs[i].pname, pairs[i].fname);
}

/* ---- detection ------------------------------------------------------------------------ */

static bool app_id_is_bq(const struct bq_props *props)
{
    return props && props->app_id && bytes_eq_cstr(props->app_id, "babelqueue");
}

static bool is_raw_wrap(const json_t *root)
{
    return json_is_object(root) && !json_object_get(root, "job") && !json_object_get(root, "urn") &&
           json_is_string(json_object_get(root, "raw")) &&
           json_is_object(json_object_get(root, "dead_letter"));
}

/* An envelope whose identity is missing: no job or urn, but a meta object that holds
 * schema_version and the producer's lang or created_at, beside a top-level trace_id, attempts
 * or dead_letter. The SDKs read such a body as an envelope and refuse it (missing_urn); read as
 * plain AMQP it would pass for an accepted message. A JSON:API-like {"data", "meta"} document,
 * or meta without schema_version, is not this. */
static bool has_headless_shape(const json_t *root)
{
    static const char *const producer[] = {"lang", "created_at"};
    static const char *const companions[] = {"trace_id", "attempts", "dead_letter"};
    const json_t *meta = json_object_get(root, "meta");
    if (!json_is_object(meta) || !json_object_get(meta, "schema_version"))
        return false;
    bool by_producer = false, beside = false;
    for (size_t i = 0; i < NELEM(producer); i++)
        by_producer = by_producer || json_object_get(meta, producer[i]);
    for (size_t i = 0; i < NELEM(companions); i++)
        beside = beside || json_object_get(root, companions[i]);
    return by_producer && beside;
}

static bool has_shape(const json_t *root)
{
    static const char *const companions[] = {"meta", "trace_id", "data", "attempts"};
    if (!json_is_object(root))
        return false;
    if (!json_object_get(root, "job") && !json_object_get(root, "urn"))
        return false;
    for (size_t i = 0; i < NELEM(companions); i++)
        if (json_object_get(root, companions[i]))
            return true;
    return false;
}

enum bq_detected bq_detect_doc(const json_t *doc, const struct bq_props *props)
{
    if (app_id_is_bq(props))
        return BQ_DETECT_APP_ID;
    if (has_shape(doc))
        return BQ_DETECT_SHAPE;
    if (is_raw_wrap(doc))
        return BQ_DETECT_RAW_WRAP;
    if (has_headless_shape(doc))
        return BQ_DETECT_NO_URN;
    return BQ_DETECT_NONE;
}

/* Whether the body may hold one of the keys every shape needs (job, urn, dead_letter or meta)
 * — written plainly, or anywhere a backslash could spell one: a body without any of them is
 * no envelope, and is not parsed (that parse of every body was 7% of dlqx tree). */
static bool may_have_shape(const unsigned char *b, size_t n)
{
    static const char *const keys[] = {"\"job\"", "\"urn\"", "\"dead_letter\"", "\"meta\""};
    if (memchr(b, '\\', n))
        return true;
    for (const unsigned char *p = b, *end = b + n; (p = memchr(p, '"', (size_t)(end - p))); p++)
        for (size_t k = 0; k < NELEM(keys); k++) {
            size_t kl = strlen(keys[k]);
            if ((size_t)(end - p) >= kl && memcmp(p, keys[k], kl) == 0)
                return true;
        }
    return false;
}

enum bq_detected bq_detect_how(const void *body, size_t len, const struct bq_props *props)
{
    if (app_id_is_bq(props))
        return BQ_DETECT_APP_ID;
    if (!may_have_shape(len ? body : "", len))
        return BQ_DETECT_NONE;
    json_error_t jerr;
    json_t *doc = json_loadb(len ? body : "", len, BQ_JSON_FLAGS, &jerr);
    enum bq_detected r = bq_detect_doc(doc, props);
    json_decref(doc);
    return r;
}

bool bq_detect(const void *body, size_t len, const struct bq_props *props)
{
    return bq_detect_how(body, len, props) != BQ_DETECT_NONE;
}

/* ---- duplicate keys ------------------------------------------------------------------- */

/* Appends a JSON string's decoded bytes (s points after the opening quote of a string the
 * parser already accepted, so every escape is well formed and every \u pair is matched).
 * Returns the position after the closing quote. */
static size_t scan_string(const char *s, size_t n, size_t i, struct strbuf *out)
{
    while (i < n && s[i] != '"') {
        if (s[i] != '\\') {
            size_t j = i;
            while (j < n && s[j] != '"' && s[j] != '\\')
                j++;
            if (out)
                sb_add(out, s + i, j - i);
            i = j;
            continue;
        }
        i++;
        if (i >= n)
            break;
        char e = s[i++];
        if (e != 'u') {
            static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
            const char *p = memchr(from, e, sizeof from - 1);
            if (out && p)
                sb_addc(out, to[p - from]);
            continue;
        }
        unsigned long cp = 0;
        for (int k = 0; k < 4 && i < n; k++, i++) {
            char c = s[i];
            cp = cp * 16 + (unsigned long)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
        }
        if (cp >= 0xD800 && cp < 0xDC00 && i + 6 <= n && s[i] == '\\' && s[i + 1] == 'u') {
            unsigned long lo = 0;
            for (int k = 2; k < 6; k++) {
                char c = s[i + k];
                lo = lo * 16 + (unsigned long)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
            }
            i += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        if (!out)
            continue;
        if (cp < 0x80) {
            sb_addc(out, (char)cp);
        } else if (cp < 0x800) {
            sb_addc(out, (char)(0xC0 | (cp >> 6)));
            sb_addc(out, (char)(0x80 | (cp & 0x3F)));
        } else if (cp < 0x10000) {
            sb_addc(out, (char)(0xE0 | (cp >> 12)));
            sb_addc(out, (char)(0x80 | ((cp >> 6) & 0x3F)));
            sb_addc(out, (char)(0x80 | (cp & 0x3F)));
        } else {
            sb_addc(out, (char)(0xF0 | (cp >> 18)));
            sb_addc(out, (char)(0x80 | ((cp >> 12) & 0x3F)));
            sb_addc(out, (char)(0x80 | ((cp >> 6) & 0x3F)));
            sb_addc(out, (char)(0x80 | (cp & 0x3F)));
        }
    }
    return i < n ? i + 1 : n;
}

/* Appends "/" and key escaped as an RFC 6901 pointer token (~ as ~0, / as ~1). */
static void pointer_add(struct strbuf *path, const char *key, size_t len)
{
    sb_addc(path, '/');
    for (size_t i = 0; i < len; i++) {
        if (key[i] == '~')
            sb_adds(path, "~0");
        else if (key[i] == '/')
            sb_adds(path, "~1");
        else
            sb_addc(path, key[i]);
    }
}

struct scan_frame {
    json_t *seen;    /* the keys met so far (object frames); NULL for an array */
    size_t path_len; /* length of the pointer to this container */
    size_t index;    /* array frames: index of the current element */
    bool expect_key; /* object frames: the next string is a key */
};

/* Names every key that occurs more than once in one object, anywhere in the document. It runs
 * only on bytes jansson has accepted, so it can skip validation; its cost is one pass over the
 * bytes plus one hash insert per key. */
static void dup_scan(struct bq_envelope *env, const char *s, size_t n)
{
    struct scan_frame *stack = NULL;
    size_t depth = 0, cap = 0;
    struct strbuf path, key;
    sb_init(&path);
    sb_init(&key);
    size_t i = 0;
    while (i < n) {
        char c = s[i];
        struct scan_frame *top = depth ? &stack[depth - 1] : NULL;
        if (c == '{' || c == '[') {
            if (top) {
                path.len = top->path_len;
                if (top->seen)
                    pointer_add(&path, key.buf, key.len);
                else
                    sb_addf(&path, "/%zu", top->index);
                path.buf[path.len] = '\0';
            }
            xgrow((void **)&stack, &cap, depth + 1, sizeof *stack);
            stack[depth++] =
                (struct scan_frame){c == '{' ? json_object() : NULL, path.len, 0, c == '{'};
            i++;
        } else if (c == '}' || c == ']') {
            if (top) {
                json_decref(top->seen);
                depth--;
            }
            i++;
        } else if (c == ',') {
            if (top && top->seen)
                top->expect_key = true;
            else if (top)
                top->index++;
            i++;
        } else if (c == '"') {
            if (top && top->seen && top->expect_key) {
                sb_reset(&key);
                i = scan_string(s, n, i + 1, &key);
                top->expect_key = false;
                /* jansson refuses NUL in keys, so the decoded key is a C string. */
                const char *k = key.buf ? key.buf : "";
                if (json_object_get(top->seen, k)) {
                    path.len = top->path_len;
                    pointer_add(&path, key.buf, key.len);
                    path.buf[path.len] = '\0';
                    warn(env, BQ_WARN_DUPLICATE_KEY,
                         "%s occurs more than once; the last value is the one read", path.buf);
                } else {
                    json_object_set_new_nocheck(top->seen, k, json_null());
                }
            } else {
                i = scan_string(s, n, i + 1, NULL);
            }
        } else {
            i++;
        }
    }
    while (depth > 0)
        json_decref(stack[--depth].seen);
    free(stack);
    sb_free(&path);
    sb_free(&key);
}

/* ---- parse ---------------------------------------------------------------------------- */

static void read_job(struct bq_envelope *env, json_t *root)
{
    struct bq_str job = get_str(root, "job");
    struct bq_str urn = get_str(root, "urn");
    if (job.json) {
        env->job = job;
        env->job_key = BQ_JOB_KEY_JOB;
        /* The spec takes urn only when job is absent; Go, Python, Java and .NET also fall
         * back to it when job is empty, so say so rather than hide it. */
        if (!str_usable(&job) && str_usable(&urn))
            warn(env, BQ_WARN_JOB_URN,
                 "/job is blank or not a string while /urn is usable: the spec reads job "
                 "(some SDKs fall back to urn)");
        else if (urn.json && job.s && urn.s &&
                 (job.len != urn.len || memcmp(job.s, urn.s, job.len) != 0))
            warn(env, BQ_WARN_JOB_URN, "/urn differs from /job; job is the one read");
    } else if (urn.json) {
        env->job = urn;
        env->job_key = BQ_JOB_KEY_URN;
    }
}

static enum bq_reason judge(const struct bq_envelope *env)
{
    if (!str_usable(&env->job))
        return BQ_MISSING_URN;
    if (!env->meta.is_object)
        return BQ_MISSING_META;
    if (!env->meta.schema_version.is_int || env->meta.schema_version.v != 1)
        return BQ_UNSUPPORTED_SCHEMA_VERSION;
    if (!json_is_object(env->data))
        return BQ_INVALID_DATA;
    if (!str_usable(&env->trace_id))
        return BQ_MISSING_TRACE_ID;
    if (!env->attempts.is_int || env->attempts.v < 0)
        return BQ_INVALID_ATTEMPTS;
    return BQ_OK;
}

static void read_envelope(struct bq_envelope *env, const struct bq_props *props)
{
    json_t *root = env->doc;
    env->detected = bq_detect_doc(root, props);
    if (!root) {
        env->reason = BQ_MALFORMED_JSON;
        return;
    }
    if (!json_is_object(root)) {
        env->reason = BQ_NOT_AN_OBJECT;
        return;
    }
    read_job(env, root);
    env->trace_id = get_str(root, "trace_id");
    env->data = json_object_get(root, "data");
    env->attempts = get_int(root, "attempts");
    read_meta(env, root);
    read_dead_letter(env, root);
    read_forbidden(env, root);
    check_props(env, props);
    if (is_raw_wrap(root)) {
        env->raw_wrapped = true;
        env->raw = get_str(root, "raw");
        env->reason = BQ_UNDECODABLE_BODY;
        return;
    }
    env->reason = judge(env);
}

static void envelope_init(struct bq_envelope *env)
{
    memset(env, 0, sizeof *env);
}

enum bq_reason bq_parse(const void *body, size_t len, const struct bq_props *props,
                        struct bq_envelope *out)
{
    envelope_init(out);
    const char *text = len ? body : "";
    out->doc = json_loadb(text, len, BQ_JSON_FLAGS, &out->json_error);
    read_envelope(out, props);
    /* After the fields, so that their warnings come first when the list is capped. */
    if (out->doc) {
        out->dup_scan = true;
        dup_scan(out, text, len);
    }
    warn_finish(out);
    return out->reason;
}

enum bq_reason bq_parse_doc(json_t *doc, const struct bq_props *props, struct bq_envelope *out)
{
    envelope_init(out);
    out->doc = json_incref(doc);
    read_envelope(out, props);
    warn_finish(out);
    return out->reason;
}

void bq_envelope_free(struct bq_envelope *env)
{
    if (!env)
        return;
    for (size_t i = 0; i < env->nwarnings; i++)
        free(env->warnings[i].text);
    free(env->warnings);
    json_decref(env->doc);
    memset(env, 0, sizeof *env);
}

bool bq_attempt(const struct bq_envelope *env, int64_t *out)
{
    if (env->dead_letter.attempts.is_int) {
        *out = env->dead_letter.attempts.v;
        return true;
    }
    if (env->attempts.is_int) {
        *out = env->attempts.v;
        return true;
    }
    return false;
}

bool bq_source_queue(const struct bq_envelope *env, const char **s, size_t *len)
{
    const struct bq_str *q = &env->dead_letter.original_queue;
    if (!q->s || q->len == 0)
        q = &env->meta.queue;
    if (!q->s)
        return false;
    *s = q->s;
    *len = q->len;
    return true;
}
