/* spring: see spring.h. */
#include "spring.h"

#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "dialect.h"
#include "hval_json.h"
#include "restamp_kit.h"
#include "util.h"

/* ---- helpers (exported for the unit tests: spring.h) ---- */

bool spring_java_type(const unsigned char *s, size_t n)
{
    if (!n || n > SPRING_MAX_TYPE)
        return false;
    bool seg_start = true;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c == '.') {
            if (seg_start)
                return false;
            seg_start = true;
            continue;
        }
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$' ||
                  c >= 0x80 || (c >= '0' && c <= '9' && !seg_start);
        if (!ok)
            return false;
        seg_start = false;
    }
    return !seg_start && utf8_valid(s, n);
}

/* The type of a `TYPE: MESSAGE` or `TYPE` line (Throwable.toString), and where the message
 * starts; false when the text before `: ` is not a class name. */
static bool throwable_line(const unsigned char *s, size_t n, struct spring_span *type,
                           struct spring_span *msg, bool *has_msg)
{
    size_t t = n;
    for (size_t i = 0; i + 1 < n; i++)
        if (s[i] == ':' && s[i + 1] == ' ') {
            t = i;
            break;
        }
    if (!spring_java_type(s, t))
        return false;
    type->off = 0;
    type->len = t;
    *has_msg = t < n;
    msg->off = t < n ? t + 2 : n;
    msg->len = t < n ? n - t - 2 : 0;
    return true;
}

static void chain_add(struct spring_trace *tr, size_t off, size_t len)
{
    if (tr->ntypes < SPRING_MAX_CHAIN) {
        tr->types[tr->ntypes++] = (struct spring_span){off, len};
    } else {
        tr->elided++;
        tr->types[SPRING_MAX_CHAIN - 1] = (struct spring_span){off, len};
    }
}

void spring_trace_parse(const unsigned char *s, size_t n, struct spring_trace *out)
{
    static const char cause[] = "Caused by: ";
    const size_t clen = sizeof cause - 1;
    memset(out, 0, sizeof *out);
    if (!s || !n)
        return;
    out->truncated = s[n - 1] != '\n';
    enum { L_HEAD, L_FRAME, L_CAUSE, L_OTHER } prev = L_OTHER;
    size_t pos = 0;
    bool first = true;
    while (pos < n) {
        const unsigned char *nl = memchr(s + pos, '\n', n - pos);
        size_t end = nl ? (size_t)(nl - s) : n;
        size_t len = end - pos;
        if (len && s[pos + len - 1] == '\r')
            len--;
        const unsigned char *line = s + pos;
        struct spring_span ty, msg;
        bool has_msg;
        if (first) {
            first = false;
            prev = L_HEAD;
            if (throwable_line(line, len, &ty, &msg, &has_msg)) {
                chain_add(out, pos + ty.off, ty.len);
                out->has_root_message = has_msg;
                out->root_message = (struct spring_span){pos + msg.off, msg.len};
            }
        } else if (len >= clen && !memcmp(line, cause, clen) &&
                   (prev == L_FRAME || prev == L_CAUSE)) {
            prev = L_CAUSE;
            if (throwable_line(line + clen, len - clen, &ty, &msg, &has_msg)) {
                chain_add(out, pos + clen + ty.off, ty.len);
                out->has_root_message = has_msg;
                out->root_message = (struct spring_span){pos + clen + msg.off, msg.len};
            }
        } else if (len && line[0] == '\t') {
            prev = L_FRAME;
        } else {
            prev = L_OTHER;
        }
        pos = end + 1;
    }
}

bool spring_message_truncated(const struct bytes *msg, const struct bytes *trace)
{
    if (!msg || !trace || msg->len < 100 || trace->len < 100)
        return false;
    if (memcmp(msg->data + msg->len - 3, "...", 3))
        return false;
    /* the trace's copy: the first 97 bytes of the message, then "..." */
    const unsigned char *p = trace->data, *end = trace->data + trace->len;
    while ((size_t)(end - p) >= 100) {
        const unsigned char *hit = memchr(p, msg->data[0], (size_t)(end - p) - 99);
        if (!hit)
            return false;
        if (!memcmp(hit, msg->data, 97) && !memcmp(hit + 97, "...", 3))
            return true;
        p = hit + 1;
    }
    return false;
}

const struct bytes *spring_text(const struct hval *v)
{
    const struct bytes *b = v ? hval_str(v) : NULL;
    return b && utf8_valid(b->data, b->len) ? b : NULL;
}

bool spring_retry_count(const struct hval *v, int64_t *out)
{
    if (!v)
        return false;
    if (hkind_is_signed(v->kind)) {
        *out = v->v.i;
        return true;
    }
    if (hkind_is_unsigned(v->kind) && v->kind != HV_TIMESTAMP) {
        *out = v->v.u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v->v.u;
        return true;
    }
    return false;
}

bool spring_scs_dlq(const struct bytes *dlq, const struct bytes *orig_exchange,
                    struct spring_span *consumer_queue, struct spring_span *group)
{
    static const char suffix[] = ".dlq";
    if (!dlq || !orig_exchange || !orig_exchange->len || dlq->len < 4)
        return false;
    size_t q = dlq->len - 4;
    if (memcmp(dlq->data + q, suffix, 4))
        return false;
    size_t e = orig_exchange->len;
    if (q < e + 2 || memcmp(dlq->data, orig_exchange->data, e) || dlq->data[e] != '.')
        return false;
    *consumer_queue = (struct spring_span){0, q};
    *group = (struct spring_span){e + 1, q - e - 1};
    return true;
}

/* ---- the dialect ---------------------------------------------------------------------- */

#define H_MESSAGE "x-exception-message"
#define H_STACK "x-exception-stacktrace"
#define H_OEXCHANGE "x-original-exchange"
#define H_ORKEY "x-original-routingKey"
#define H_RETRY "retry-count"
#define H_TYPEID "__TypeId__"
#define H_CONTENT_TYPEID "__ContentTypeId__"
#define H_KEY_TYPEID "__KeyTypeId__"

enum flavour { FL_MESSAGE, FL_REPUBLISH, FL_CLOUD_STREAM, FL_BROKER_DLX };
static const char *const flavour_names[] = {"message", "republish", "cloud-stream", "broker-dlx"};

struct priv {
    enum flavour flavour;
    bool has_trace;
    struct spring_trace tr; /* spans into the stack trace header's bytes (the message's) */
    bool has_rc;
    int64_t rc;
    bool msg_truncated;
    struct spring_span consumer_queue, group; /* cloud-stream: into the queue's name */
};

static int recognise(const struct dialect_input *in, struct dialect_match *m)
{
    const struct message *msg = in->msg;
    bool message = dialect_has_header(msg, H_MESSAGE);
    bool rkey = dialect_has_header(msg, H_ORKEY);
    if (message && rkey) {
        dialect_match_by(m, H_MESSAGE);
        dialect_match_by(m, H_ORKEY);
        return 95;
    }
    if (message) {
        dialect_match_by(m, H_MESSAGE);
        return 75;
    }
    if (dialect_has_header(msg, H_TYPEID)) {
        dialect_match_by(m, H_TYPEID);
        return 65;
    }
    return 0;
}

static const struct bytes *text(const struct message *m, const char *name)
{
    return spring_text(htable_get(m->headers, name));
}

/* The newest death's queue (x-death[0], as Spring reads it), else the first death's. */
static const struct bytes *death_queue(const struct death_summary *d)
{
    if (d->n_entries && d->entries[0].queue.len)
        return &d->entries[0].queue;
    return d->first_queue.len ? &d->first_queue : NULL;
}

/* Where a replay goes, the most precise first: the queue the broker dead-lettered it from
 * (default exchange), x-original-routingKey as a queue when the original exchange is the
 * default one (it is then the queue it was received from), the DLQ's name minus .dlq, else
 * the original exchange and routing key. */
static void find_source(const struct message *m, const struct death_summary *death,
                        struct decoded *out)
{
    const struct bytes *q = death_queue(death);
    const struct bytes *dlq = &m->queue;
    const struct bytes *oex = text(m, H_OEXCHANGE), *ork = text(m, H_ORKEY);
    if (q) {
        dialect_source_queue(out, "x-death", q->data, q->len);
        out->source.how_text = "the queue the broker dead-lettered it from (x-death)";
    } else if (oex && ork && !oex->len && ork->len) {
        dialect_source_queue(out, "x-original-routingKey", ork->data, ork->len);
        out->source.how_text = "x-original-routingKey: a queue, through the default exchange "
                               "(x-original-exchange is \"\")";
    } else if (dlq->len > 4 && !memcmp(dlq->data + dlq->len - 4, ".dlq", 4)) {
        dialect_source_queue(out, "dlq-name", dlq->data, dlq->len - 4);
        out->source.how_text = "the DLQ's name minus .dlq (Spring Cloud Stream's <queue>.dlq)";
    } else if (oex && ork && oex->len) {
        dialect_source_route(out, "x-original-exchange", NULL, 0, oex->data, oex->len, ork->data,
                             ork->len);
        out->source.how_text = "x-original-exchange and x-original-routingKey: every queue bound "
                               "to that exchange with that key gets the copy";
    }
}

static void decode(const struct dialect_input *x, struct decoded *out)
{
    const struct message *m = x->msg;
    const struct props *p = &m->props;
    struct priv *pv = calloc(1, sizeof *pv);
    if (!pv)
        abort();
    out->priv = pv;
    const struct bytes *msg = text(m, H_MESSAGE), *trace = text(m, H_STACK);
    const struct bytes *oex = text(m, H_OEXCHANGE);
    pv->has_rc = spring_retry_count(htable_get(m->headers, H_RETRY), &pv->rc);
    if (dialect_has_header(m, H_MESSAGE))
        pv->flavour = spring_scs_dlq(&m->queue, oex, &pv->consumer_queue, &pv->group)
                          ? FL_CLOUD_STREAM
                          : FL_REPUBLISH;
    else
        pv->flavour = x->death->present ? FL_BROKER_DLX : FL_MESSAGE;
    if (trace) {
        pv->has_trace = true;
        spring_trace_parse(trace->data, trace->len, &pv->tr);
    }
    pv->msg_truncated = spring_message_truncated(msg, trace);

    struct envelope_init in;
    memset(&in, 0, sizeof in);
    const struct bytes *mid = props_string(p, PROP_message_id);
    struct bytes derived = {0, NULL};
    if (mid && mid->len) {
        in.id = *mid;
    } else {
        derived = dialect_derived_id(m);
        in.id = derived;
        in.defaulted |= ED_ID;
    }
    dialect_type_or_route(x, text(m, H_TYPEID), &in);
    const struct bytes *corr = props_string(p, PROP_correlation_id);
    if (corr && corr->len)
        in.correlation_id = *corr;
    else
        in.defaulted |= ED_CORRELATION;
    in.version = 1;
    in.defaulted |= ED_VERSION;
    /* DefaultMessagePropertiesConverter: retry-count, else x-death[0].count. */
    if (pv->has_rc && pv->rc > 0) {
        in.attempt = pv->rc;
    } else if (x->death->n_entries) {
        in.attempt = x->death->entries[0].count;
    } else {
        in.attempt = 1;
        in.defaulted |= ED_ATTEMPT;
    }
    if (!dialect_first_seen_fallback(x, &in.first_seen_ms))
        in.defaulted |= ED_FIRST_SEEN;
    const struct bytes *app = props_string(p, PROP_app_id);
    if (app)
        in.origin = *app;
    in.headers = m->headers;
    dialect_envelope(out, &in);
    bytes_free(&derived);

    const struct spring_trace *tr = &pv->tr;
    const struct spring_span *inner = tr->ntypes ? &tr->types[tr->ntypes - 1] : NULL;
    dialect_set_error(out, inner ? trace->data + inner->off : NULL, inner ? inner->len : 0,
                      msg ? msg->data : NULL, msg ? msg->len : 0, trace ? trace->data : NULL,
                      trace ? trace->len : 0);
    find_source(m, x->death, out);
    out->accept_note = "Spring: a listener refuses nothing by its headers";
    static const char *const from[NF_COUNT] = {
        [NF_ID] = "the message id (message_id property; set when the converter creates ids)",
        [NF_TYPE] = "the Java class (__TypeId__, written by the Jackson converters)",
        [NF_VERSION] = "Spring has no schema version",
        [NF_CORRELATION] = "the correlation_id property",
        [NF_CAUSATION] = "Spring carries no causation",
        [NF_ATTEMPT] = "republishes so far (retry-count), else x-death[0].count",
        [NF_FIRST_SEEN] = "first publish (timestamp property)",
        [NF_ORIGIN] = "the producing app (app_id property)",
        [NF_ERROR] = ("the innermost Caused by: of x-exception-stacktrace, and "
                      "x-exception-message (the first cause's message)"),
        [NF_FAILED_AT] = "Spring writes no failure time: the newest x-death time",
    };
    memcpy(out->read_from, from, sizeof from);
}

static void release(struct decoded *d)
{
    free(d->priv);
    d->priv = NULL;
}

static void add_text(struct dfields *f, const char *key, const char *label, const struct bytes *b,
                     const char *meaning)
{
    if (b)
        dfields_add(f, key, label, b->data ? (const void *)b->data : "", b->len, meaning);
    else
        dfields_adds(f, key, label, NULL, meaning);
}

static void add_bool(struct dfields *f, const char *key, const char *label, bool v,
                     const char *meaning)
{
    struct dfield *x = dfields_add_yes_no(f, key, label, v, meaning);
    if (v)
        x->style = DF_WARN;
}

static void add_span(struct dfields *f, const char *key, const char *label, bool has,
                     const struct bytes *in, struct spring_span sp, const char *meaning)
{
    if (has)
        dfields_add(f, key, label, in->data + sp.off, sp.len, meaning);
    else
        dfields_adds(f, key, label, NULL, meaning);
}

static void fields(const struct decoded *d, int64_t now_ms, struct dfields *f)
{
    (void)now_ms;
    const struct message *m = d->msg;
    const struct priv *pv = d->priv;
    const struct bytes *trace = text(m, H_STACK);
    const struct bytes *oex = text(m, H_OEXCHANGE), *ork = text(m, H_ORKEY);
    size_t first = f->n;
    if (pv->flavour == FL_REPUBLISH || pv->flavour == FL_CLOUD_STREAM) {
        if (!d->death.present)
            dfields_add_line(f, DF_DEATH, DF_VALUE,
                             pv->flavour == FL_CLOUD_STREAM
                                 ? "republished to the DLQ by Spring Cloud Stream's binder itself "
                                   "(no broker dead-lettering: no x-death)"
                                 : "republished by Spring's RepublishMessageRecoverer (no broker "
                                   "dead-lettering: no x-death)");
        const struct bytes *msg = text(m, H_MESSAGE);
        if (msg) {
            struct dfield *e = dfields_add(f, NULL, H_MESSAGE, msg->data, msg->len,
                                           "the failure's message (the first cause's)");
            e->where = DF_DEATH;
            e->style = DF_ERROR;
            e->label_w = 20;
        }
    }
    static const char *const flavour_meaning[] = {
        "a Spring message that did not fail (no failure headers, no x-death)",
        "a RepublishMessageRecoverer copy (x-exception-* headers)",
        "Spring Cloud Stream's DLQ republisher (<destination>.<group>.dlq)",
        "dead-lettered by the broker (RejectAndDontRequeueRecoverer, or republishToDlq=false)"};
    dfields_adds(f, "flavour", "written by", flavour_names[pv->flavour],
                 flavour_meaning[pv->flavour]);
    add_text(f, "type_id", H_TYPEID, text(m, H_TYPEID), "the payload's Java class");
    add_text(f, "content_type_id", H_CONTENT_TYPEID, text(m, H_CONTENT_TYPEID),
             "a collection's element class");
    add_text(f, "key_type_id", H_KEY_TYPEID, text(m, H_KEY_TYPEID), "a map's key class");
    add_text(f, "original_exchange", H_OEXCHANGE, oex,
             "the exchange it was received from (\"\": the default exchange)");
    add_text(f, "original_routing_key", H_ORKEY, ork, "the routing key it was received with");
    dfields_add_int_opt(f, "retry_count", H_RETRY, pv->has_rc, pv->rc,
                        "republished after failing so often");
    bool scs = pv->flavour == FL_CLOUD_STREAM;
    add_span(f, "consumer_queue", "consumer queue", scs, &m->queue, pv->consumer_queue,
             "the consumer group's queue (the DLQ minus .dlq)");
    struct spring_span dest = {0, pv->group.off ? pv->group.off - 1 : 0};
    add_span(f, "destination", "destination", scs, &m->queue, dest,
             "the destination: a topic exchange every consumer group is bound to");
    add_span(f, "group", "group", scs, &m->queue, pv->group, "the consumer group that failed");
    const struct spring_trace *tr = &pv->tr;
    json_t *types = json_array();
    struct strbuf sb;
    sb_init(&sb);
    for (size_t i = 0; pv->has_trace && i < tr->ntypes; i++) {
        const struct spring_span *s = &tr->types[i];
        json_array_append_new(types, bytes_to_json(trace->data + s->off, s->len));
        if (i)
            sb_adds(&sb, i == tr->ntypes - 1 && tr->elided ? " ← … ← " : " ← ");
        sb_add(&sb, trace->data + s->off, s->len);
    }
    struct dfield *c = dfields_add(f, "exception_types", "cause chain", sb.len ? sb.buf : "",
                                   sb.len, "head first; the last is the error type");
    c->json = types;
    sb_free(&sb);
    add_span(f, "root_cause_message", "root cause", pv->has_trace && tr->has_root_message, trace,
             tr->root_message, "the innermost cause's message (first line)");
    add_bool(f, "stack_trace_truncated", "trace cut", pv->has_trace && tr->truncated,
             "cut to fit frame_max - 20000: the innermost causes may be missing");
    add_bool(f, "exception_message_truncated", "message cut", pv->msg_truncated,
             "cut to 97 characters + ... to fit the frame");
    const char *warn = NULL;
    if (oex && oex->len)
        warn = scs ? "replaying to x-original-exchange would deliver to every consumer group "
                     "bound to the destination, not only this one: dlqx replays to the "
                     "group's queue through the default exchange"
                   : "replaying to x-original-exchange delivers to every queue bound to it "
                     "with that routing key, not only the one that failed";
    struct dfield *w = dfields_adds(f, "replay_warning", "replay", warn, "where a replay goes");
    if (warn)
        w->style = DF_WARN;
    for (size_t i = first; i < f->n; i++)
        if (f->v[i].where == DF_DIALECT && f->v[i].label)
            f->v[i].label_w = 22;
    unsigned df = d->env->defaulted;
    if (df & ED_ID)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         "id: a name-based UUID of the message (no message_id: Spring sets one "
                         "only when the converter creates ids)");
    if (df & ED_TYPE)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN, "type: the routing key (no __TypeId__)");
    if (df & ED_CORRELATION)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         "correlation: the id (no correlation_id property)");
    if (df & ED_ATTEMPT)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN, "attempt: 1 (no retry-count, no x-death)");
    if (!pv->has_trace && pv->flavour == FL_REPUBLISH)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         "error type: unknown (no x-exception-stacktrace: Spring AMQP >= 4.0.5 "
                         "leaves it out unless includeStackTrace(true))");
}

/* Replay: what the documented re-router does (incrementRetryCount, send the received message
 * again); re-issue: a new message, not a retry. */
static enum status restamp(const struct decoded *d, const struct restamp_opts *o,
                           const struct bytes *dlq, struct outgoing *out, struct error *err)
{
    (void)dlq;
    enum status st = rk_target_source(
        d, out, "no x-death, no .dlq name and no x-original-routingKey say where it came from",
        err);
    if (st != ST_OK)
        return st;
    const struct priv *pv = d->priv;
    struct props *p = &out->props;
    if (o->mode == RESTAMP_REPLAY) {
        int64_t n = pv->has_rc && pv->rc > 0 ? pv->rc
                    : d->death.n_entries     ? d->death.entries[0].count
                                             : 0;
        rk_header_put(out->headers, H_RETRY, hval_int(HV_I64, n < INT64_MAX ? n + 1 : n));
    } else {
        static const char *const failure[] = {H_MESSAGE, H_STACK, H_OEXCHANGE,
                                              H_ORKEY,   H_RETRY, NULL};
        rk_headers_strip(out->headers, failure);
        const struct bytes *c = &d->env->correlation_id;
        props_set_string(p, PROP_correlation_id, c->data, c->len);
        props_set_string(p, PROP_message_id, out->id.data, out->id.len);
    }
    static const struct rk_field map[] = {
        {EF_ID, NULL, PROP_message_id},
        {EF_TYPE, H_TYPEID, -1},
        {EF_CORRELATION, NULL, PROP_correlation_id},
        {EF_ATTEMPT, H_RETRY, -1},
    };
    return rk_apply_changes(d, o, map, sizeof map / sizeof *map, out, err);
}

const struct dialect_ops dialect_spring = {
    .name = "spring",
    .title = "Spring AMQP",
    .summary = "Spring AMQP / Spring Cloud Stream (x-exception-*, x-original-*, retry-count, "
               "__TypeId__)",
    .section = "Spring headers",
    .recognise = recognise,
    .ceiling = 95,
    .decode = decode,
    .release = release,
    .fields = fields,
    .restamp = restamp,
    .replay_rule = "every header kept (x-exception-* too), retry-count + 1 (int64); to the "
                   "queue it came from through the default exchange (x-death, the DLQ minus "
                   ".dlq, x-original-routingKey), never x-original-exchange unless nothing "
                   "else is known; a re-issue strips the failure headers",
};
