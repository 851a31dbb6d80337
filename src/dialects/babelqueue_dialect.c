/*
 * babelqueue_dialect: BabelQueue recognised and decoded (babelqueue_dialect.h).
 *
 *   recognise    app_id "babelqueue", the envelope's shape, or the {"raw", "dead_letter"}
 *                wrapper (bq_detect_how): 90; the shape without job or urn (meta.schema_version
 *                with lang or created_at, beside trace_id, attempts or dead_letter): 60 — read,
 *                and refused as missing_urn as the SDKs refuse it
 *   id           meta.id, else the message_id property, else a name-based UUID
 *   type         job (or its alias urn), else the type property, else "message"
 *   correlation  trace_id, else the correlation_id property
 *   attempt      dead_letter.attempts, else attempts (from 0)
 *   first seen   meta.created_at, else the timestamp property, else when it was fetched
 *   origin       meta.lang
 *   error        dead_letter.exception: dead_letter.error, else dead_letter.reason
 *   failed at    dead_letter.failed_at
 *   source       dead_letter.original_queue, else meta.queue, else the first death
 */
#include "babelqueue_dialect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dialect.h"
#include "hval_json.h"
#include "util.h"

const struct bq_envelope *decoded_bq(const struct decoded *d)
{
    return d && d->dialect == &dialect_babelqueue ? d->priv : NULL;
}

static struct bq_props props_of(const struct message *m)
{
    struct bq_props bp = {
        .app_id = props_string(&m->props, PROP_app_id),
        .type = props_string(&m->props, PROP_type),
        .correlation_id = props_string(&m->props, PROP_correlation_id),
        .message_id = props_string(&m->props, PROP_message_id),
    };
    return bp;
}

static int recognise(const struct dialect_input *in, struct dialect_match *m)
{
    struct bq_props bp = props_of(in->msg);
    enum bq_detected how = bq_detect_how(in->body, in->body_len, &bp);
    if (how == BQ_DETECT_NONE)
        return 0;
    dialect_match_by(m, how == BQ_DETECT_APP_ID ? "app_id" : "body");
    /* The envelope without its job/urn is weaker evidence (its meta and trace_id alone): a
     * body envelope without identity, below any framework's own headers. */
    return how == BQ_DETECT_NO_URN ? 60 : 90;
}

static struct bytes json_text(const struct bq_str *s)
{
    if (s->s)
        return bytes_dup(s->s, s->len);
    return (struct bytes){0, NULL};
}

static void decode(const struct dialect_input *x, struct decoded *out)
{
    const struct message *m = x->msg;
    struct bq_props bp = props_of(m);
    struct bq_envelope *b = xcalloc(1, sizeof *b);
    out->priv = b;
    bq_parse(x->body, x->body_len, &bp, b);
    out->accepted = bq_accepted(b);
    out->reject_reason = out->accepted ? NULL : bq_reason_name(b->reason);
    if (out->accepted) {
        const char *w = bq_reason_text(BQ_OK);
        out->accept_note = strncmp(w, "accepted: ", 10) == 0 ? w + 10 : w;
    } else {
        out->accept_note = bq_reason_text(b->reason);
    }

    struct envelope_init in;
    memset(&in, 0, sizeof in);
    in.attempt_from_zero = true;
    struct bytes id = json_text(&b->meta.id), type = {0, NULL}, corr = json_text(&b->trace_id);
    if (!id.len) {
        bytes_free(&id);
        if (bp.message_id && bp.message_id->len)
            id = bytes_copy(bp.message_id);
    }
    if (!id.len)
        in.defaulted |= ED_ID;
    if (b->job.s && !bq_blank(b->job.s, b->job.len)) {
        type = bytes_dup(b->job.s, b->job.len);
    } else if (bp.type && bp.type->len) {
        type = bytes_copy(bp.type);
        in.defaulted |= ED_TYPE;
    } else {
        type = bytes_from_cstr("message");
        in.defaulted |= ED_TYPE;
    }
    if (!corr.len) {
        bytes_free(&corr);
        if (bp.correlation_id && bp.correlation_id->len)
            corr = bytes_copy(bp.correlation_id);
        in.defaulted |= ED_CORRELATION;
    }
    in.version = b->meta.schema_version.is_int ? b->meta.schema_version.v : 1;
    if (!b->meta.schema_version.is_int)
        in.defaulted |= ED_VERSION;
    int64_t attempt;
    if (bq_attempt(b, &attempt)) {
        in.attempt = attempt;
    } else {
        in.attempt = 0;
        in.defaulted |= ED_ATTEMPT;
    }
    if (b->meta.created_at.is_int) {
        in.first_seen_ms = b->meta.created_at.v;
    } else if (props_has(&m->props, PROP_timestamp) &&
               m->props.timestamp <= (uint64_t)INT64_MAX / 1000) {
        in.first_seen_ms = (int64_t)m->props.timestamp * 1000;
        in.defaulted |= ED_FIRST_SEEN;
    } else {
        in.first_seen_ms = m->fetched_at_ms ? m->fetched_at_ms : x->now_ms;
        in.defaulted |= ED_FIRST_SEEN;
    }
    struct bytes origin = json_text(&b->meta.lang);
    struct bytes error = {0, NULL};
    const struct bq_dead_letter *dl = &b->dead_letter;
    if (dl->error.s || dl->exception.s) {
        struct strbuf sb;
        sb_init(&sb);
        if (dl->exception.s && dl->exception.len) {
            sb_add(&sb, dl->exception.s, dl->exception.len);
            if (dl->error.s && dl->error.len)
                sb_adds(&sb, ": ");
        }
        if (dl->error.s)
            sb_add(&sb, dl->error.s, dl->error.len);
        size_t len;
        char *s = sb_detach(&sb, &len);
        error = (struct bytes){len, (unsigned char *)s};
        dialect_set_error(out, dl->exception.s, dl->exception.s ? dl->exception.len : 0,
                          dl->error.s, dl->error.s ? dl->error.len : 0, NULL, 0);
    } else if (dl->reason.s) {
        error = bytes_dup(dl->reason.s, dl->reason.len);
    }
    if (dl->failed_at.is_int && dl->failed_at.v > 0)
        out->failed_at_ms = dl->failed_at.v;
    if (!id.len) {
        bytes_free(&id);
        id = dialect_derived_id(m);
    }
    in.id = id;
    in.type = type;
    in.correlation_id = corr;
    in.origin = origin;
    in.error = error;
    in.headers = m->headers;
    dialect_envelope(out, &in);
    bytes_free(&id);
    bytes_free(&type);
    bytes_free(&corr);
    bytes_free(&origin);
    bytes_free(&error);

    const char *q;
    size_t qn;
    if (bq_source_queue(b, &q, &qn)) {
        bool original = dl->original_queue.s && dl->original_queue.len;
        dialect_source_queue(out, original ? "dead_letter.original_queue" : "meta.queue", q, qn);
    }
    bool urn = b->job_key == BQ_JOB_KEY_URN;
    out->read_from[NF_ID] = "the message id (meta.id)";
    out->read_from[NF_TYPE] =
        urn ? "the job's URN (urn, the inbound alias of job)" : "the job's URN (job)";
    out->read_from[NF_VERSION] = "envelope schema version (meta.schema_version)";
    out->read_from[NF_CORRELATION] = "the whole causal chain (trace_id)";
    out->read_from[NF_CAUSATION] = "BabelQueue carries none (a parent is the traceparent header)";
    out->read_from[NF_ATTEMPT] = dl->attempts.is_int
                                     ? "delivery attempts, from 0 (dead_letter.attempts)"
                                     : "delivery attempts, from 0 (attempts)";
    out->read_from[NF_FIRST_SEEN] = "first publish (meta.created_at)";
    out->read_from[NF_ORIGIN] = "the producer's language (meta.lang)";
    out->read_from[NF_ERROR] = !dl->error.s && !dl->exception.s && dl->reason.s
                                   ? "dead_letter.reason (no error or exception given)"
                                   : "dead_letter.exception: dead_letter.error";
    out->read_from[NF_FAILED_AT] = "dead_letter.failed_at";
}

static void release(struct decoded *d)
{
    if (d->priv) {
        bq_envelope_free(d->priv);
        free(d->priv);
        d->priv = NULL;
    }
}

/* ---- the fields: the envelope, the dead_letter block, the defaults ----------------------- */

static void json_compact(const json_t *j, struct strbuf *out)
{
    char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
    if (s) {
        sb_adds(out, s);
        free(s);
    }
}

static struct dfield *put(struct dfields *f, enum dfield_where where, int indent, const char *label,
                          const void *v, size_t n, enum dfield_style st, const char *meaning)
{
    struct dfield *d = dfields_add(f, NULL, label, v, n, meaning);
    d->where = (uint8_t)where;
    d->indent = (uint8_t)indent;
    d->style = (uint8_t)st;
    return d;
}

/* A member that should be a string: absent, the string, null, or another type shown as JSON. */
static void str_field(struct dfields *f, enum dfield_where where, int indent, const char *label,
                      const struct bq_str *s, enum dfield_style st, const char *meaning,
                      const char *null_means)
{
    if (!s->json) {
        put(f, where, indent, label, "(absent)", 8, DF_DIM, NULL);
    } else if (s->s && s->len && bq_blank(s->s, s->len)) {
        struct strbuf sb;
        sb_init(&sb);
        sb_addc(&sb, '"');
        sb_add(&sb, s->s, s->len);
        sb_addc(&sb, '"');
        put(f, where, indent, label, sb.buf, sb.len, DF_WARN, "blank");
        sb_free(&sb);
    } else if (s->s) {
        put(f, where, indent, label, s->s, s->len, s->len ? st : DF_WARN,
            s->len ? meaning : "empty");
    } else if (json_is_null(s->json)) {
        put(f, where, indent, label, "null", 4, DF_DIM, null_means);
    } else {
        struct strbuf sb;
        sb_init(&sb);
        json_compact(s->json, &sb);
        put(f, where, indent, label, sb.buf, sb.len, DF_WARN, "not a string");
        sb_free(&sb);
    }
}

/* A member that should be an integer; as_time: epoch milliseconds. */
static void int_field(struct dfields *f, enum dfield_where where, int indent, const char *label,
                      const struct bq_int *n, bool as_time, const char *meaning)
{
    struct strbuf sb;
    sb_init(&sb);
    if (!n->json) {
        put(f, where, indent, label, "(absent)", 8, DF_DIM, NULL);
    } else if (n->is_int && as_time) {
        char t[32];
        time_format_rfc3339(n->v, false, t);
        sb_addf(&sb, "%lld (%s)", (long long)n->v, t);
        put(f, where, indent, label, sb.buf, sb.len, DF_ACCENT, meaning);
    } else if (n->is_int) {
        sb_addf(&sb, "%lld", (long long)n->v);
        put(f, where, indent, label, sb.buf, sb.len, DF_VALUE, meaning);
    } else {
        json_compact(n->json, &sb);
        put(f, where, indent, label, sb.buf, sb.len, DF_WARN, "not an integer");
    }
    sb_free(&sb);
}

static const char *dl_reason_meaning(enum bq_dl_reason r)
{
    switch (r) {
    case BQ_DL_REASON_FAILED:
        return "the handler threw";
    case BQ_DL_REASON_UNKNOWN_URN:
        return "no handler is registered for the job";
    case BQ_DL_REASON_POISON:
        return "the message itself cannot be used (undecodable or invalid)";
    case BQ_DL_REASON_OTHER:
        return "not a reason the spec names (kept as sent)";
    case BQ_DL_REASON_NONE:
    default:
        return NULL;
    }
}

static void dead_letter(struct dfields *f, const struct bq_envelope *b, int64_t now_ms)
{
    const struct bq_dead_letter *dl = &b->dead_letter;
    struct dfield *h = put(f, DF_DEATH, 0, "dead_letter", NULL, 0, DF_VALUE,
                           "BabelQueue's block, written by the SDK that gave up");
    h->label_w = 1;
    if (!dl->is_object) {
        struct strbuf sb;
        sb_init(&sb);
        json_compact(dl->json, &sb);
        put(f, DF_DEATH, 1, "value", sb.buf, sb.len, DF_WARN, "not an object");
        sb_free(&sb);
        return;
    }
    str_field(f, DF_DEATH, 1, "reason", &dl->reason, DF_VALUE, dl_reason_meaning(dl->reason_kind),
              NULL);
    str_field(f, DF_DEATH, 1, "error", &dl->error, DF_ERROR, "the error's message",
              "no cause was given");
    str_field(f, DF_DEATH, 1, "exception", &dl->exception, DF_ERROR, "the error's class or type",
              "no cause was given");
    if (dl->failed_at.is_int) {
        char t[TIME_AGO_MAX];
        time_format_ago(dl->failed_at.v, now_ms, t);
        put(f, DF_DEATH, 1, "failed at", t, strlen(t), DF_ACCENT, NULL);
    } else {
        int_field(f, DF_DEATH, 1, "failed at", &dl->failed_at, true, NULL);
    }
    str_field(f, DF_DEATH, 1, "original queue", &dl->original_queue, DF_ACCENT,
              "where it was consumed from", NULL);
    int_field(f, DF_DEATH, 1, "attempts", &dl->attempts, false, "delivery attempts when it failed");
    str_field(f, DF_DEATH, 1, "lang", &dl->lang, DF_VALUE, "the SDK that dead-lettered it", NULL);
}

static const char *detected_meaning(enum bq_detected how)
{
    switch (how) {
    case BQ_DETECT_APP_ID:
        return "the app_id property is \"babelqueue\"";
    case BQ_DETECT_SHAPE:
        return "the body has the envelope's shape";
    case BQ_DETECT_RAW_WRAP:
        return "the body is the {\"raw\", \"dead_letter\"} wrapper";
    case BQ_DETECT_NO_URN:
        return "the body has the envelope's shape but no job or urn";
    case BQ_DETECT_NONE:
    default:
        return NULL;
    }
}

static void envelope_fields(struct dfields *f, const struct bq_envelope *b)
{
    const char *det = bq_detected_name(b->detected);
    put(f, DF_DIALECT, 0, "detected", det, strlen(det), DF_VALUE, detected_meaning(b->detected));
    if (!b->doc) {
        char where[64];
        snprintf(where, sizeof where, "line %d, column %d", b->json_error.line,
                 b->json_error.column);
        put(f, DF_DIALECT, 0, "json error", b->json_error.text, strlen(b->json_error.text),
            DF_ERROR, where);
    }
    if (b->raw_wrapped)
        str_field(f, DF_DIALECT, 0, "raw", &b->raw, DF_VALUE,
                  "the body as it was when it could not be decoded", NULL);
    if (b->job_key == BQ_JOB_KEY_URN)
        str_field(f, DF_DIALECT, 0, "urn", &b->job, DF_VALUE, "the inbound alias of job", NULL);
    else
        str_field(f, DF_DIALECT, 0, "job", &b->job, DF_VALUE, "the job's URN: which handler", NULL);
    str_field(f, DF_DIALECT, 0, "trace_id", &b->trace_id, DF_ACCENT, "the whole causal chain",
              NULL);
    int_field(f, DF_DIALECT, 0, "attempts", &b->attempts, false, "delivery attempts, from 0");
    if (!b->data) {
        put(f, DF_DIALECT, 0, "data", "(absent)", 8, DF_DIM, NULL);
    } else if (json_is_object(b->data)) {
        char n[48];
        snprintf(n, sizeof n, "an object of %zu member%s", json_object_size(b->data),
                 json_object_size(b->data) == 1 ? "" : "s");
        put(f, DF_DIALECT, 0, "data", n, strlen(n), DF_VALUE, "the job's arguments (in the body)");
    } else {
        struct strbuf sb;
        sb_init(&sb);
        json_compact(b->data, &sb);
        put(f, DF_DIALECT, 0, "data", sb.buf, sb.len, DF_WARN, "not an object");
        sb_free(&sb);
    }
    const struct bq_meta *m = &b->meta;
    if (!m->json) {
        put(f, DF_DIALECT, 0, "meta", "(absent)", 8, DF_DIM, NULL);
    } else if (!m->is_object) {
        struct strbuf sb;
        sb_init(&sb);
        json_compact(m->json, &sb);
        put(f, DF_DIALECT, 0, "meta", sb.buf, sb.len, DF_WARN, "not an object");
        sb_free(&sb);
    } else {
        str_field(f, DF_DIALECT, 0, "meta.id", &m->id, DF_ACCENT, "the message id", NULL);
        str_field(f, DF_DIALECT, 0, "meta.queue", &m->queue, DF_VALUE, "the queue it was sent to",
                  NULL);
        str_field(f, DF_DIALECT, 0, "meta.lang", &m->lang, DF_VALUE, "the producer's SDK", NULL);
        int_field(f, DF_DIALECT, 0, "meta.schema_version", &m->schema_version, false,
                  "must be the integer 1");
        int_field(f, DF_DIALECT, 0, "meta.created_at", &m->created_at, true,
                  "first publish, epoch ms");
    }
    for (size_t i = 0; i < b->nwarnings; i++) {
        const char *t = b->warnings[i].text;
        put(f, DF_DIALECT, 0, "warning", t, t ? strlen(t) : 0, DF_WARN,
            bq_warning_kind_name(b->warnings[i].kind));
    }
}

static void defaults(struct dfields *f, const struct decoded *d, const struct bq_envelope *b)
{
    const struct props *p = &d->msg->props;
    unsigned df = d->env->defaulted;
    if (df & ED_ID)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         "id: a name-based UUID of the message (no meta.id, no message_id "
                         "property)");
    else if (!b->meta.id.s || !b->meta.id.len)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         "id: the message_id property (meta.id absent or not a string)");
    const struct bytes *pt = props_string(p, PROP_type), *pc = props_string(p, PROP_correlation_id);
    if (df & ED_TYPE)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         pt && pt->len ? "type: the type property (no usable job or urn)"
                                       : "type: \"message\" (no usable job, urn or type property)");
    if (df & ED_CORRELATION)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         pc && pc->len
                             ? "correlation: the correlation_id property (no usable trace_id)"
                             : "correlation: the id (no trace_id, no correlation_id property)");
    if (df & ED_VERSION)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         "version: 1 (meta.schema_version is not an integer)");
    if (df & ED_ATTEMPT)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         "attempt: 0 (neither dead_letter.attempts nor attempts is an integer)");
    if (df & ED_FIRST_SEEN)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         props_has(p, PROP_timestamp)
                             ? "first seen: the timestamp property (meta.created_at not an "
                               "integer)"
                             : "first seen: when it was fetched (no meta.created_at, no "
                               "timestamp)");
}

static void fields(const struct decoded *d, int64_t now_ms, struct dfields *f)
{
    const struct bq_envelope *b = decoded_bq(d);
    if (!b)
        return;
    if (b->dead_letter.json)
        dead_letter(f, b, now_ms);
    envelope_fields(f, b);
    defaults(f, d, b);
}

static json_t *member(json_t *j)
{
    return j ? json_incref(j) : json_null();
}

static json_t *to_json(const struct decoded *d)
{
    const struct bq_envelope *b = decoded_bq(d);
    json_t *o = json_object();
    if (!b)
        return o;
    json_object_set_new(o, "detected", json_string(bq_detected_name(b->detected)));
    json_object_set_new(o, "job", member(b->job.json));
    json_object_set_new(o, "job_key",
                        b->job_key == BQ_JOB_KEY_URN   ? json_string("urn")
                        : b->job_key == BQ_JOB_KEY_JOB ? json_string("job")
                                                       : json_null());
    json_object_set_new(o, "trace_id", member(b->trace_id.json));
    json_object_set_new(o, "data", member(b->data));
    json_object_set_new(o, "meta", member(b->meta.json));
    json_object_set_new(o, "attempts", member(b->attempts.json));
    json_object_set_new(o, "dead_letter", member(b->dead_letter.json));
    json_object_set_new(o, "raw_wrapped", json_boolean(b->raw_wrapped));
    if (b->reason == BQ_MALFORMED_JSON)
        json_object_set_new(o, "json_error",
                            json_pack("{s:o,s:i,s:i}", "text",
                                      bytes_to_json(b->json_error.text, strlen(b->json_error.text)),
                                      "line", b->json_error.line, "column", b->json_error.column));
    json_t *w = json_array();
    for (size_t i = 0; i < b->nwarnings; i++)
        json_array_append_new(w, bytes_to_json(b->warnings[i].text, strlen(b->warnings[i].text)));
    json_object_set_new(o, "warnings", w);
    return o;
}

const struct dialect_ops dialect_babelqueue = {
    .name = "babelqueue",
    .title = "BabelQueue",
    .summary = "BabelQueue envelope (a JSON body)",
    .section = "BabelQueue envelope",
    .recognise = recognise,
    .ceiling = 90,
    .decode = decode,
    .release = release,
    .fields = fields,
    .to_json = to_json,
    .restamp = bq_restamp,
    .replay_rule = "the body's own bytes less dead_letter and the forbidden legacy keys, "
                   "attempts 0 (x-attempts too); to dead_letter.original_queue, else meta.queue",
};
