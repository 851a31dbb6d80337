/*
 * masstransit: MassTransit on RabbitMQ (masstransit.h; docs/dialects.md has the sources).
 *
 *   recognise    MT-Reason (fault / dead-letter) with MT-Fault-*: 95; MT-Reason: 92;
 *                MT-Fault-* alone: 88; content type application/vnd.masstransit+*: 75;
 *                MT-MessageType URNs (raw JSON): 72; an envelope-shaped body: 65; MT-Host-*,
 *                MT-Activity-Id: 60. A queue's _error suffix alone is nobody's.
 *   id           the envelope's messageId, else the MessageId header (raw JSON), else the
 *                message_id property
 *   type         the first messageType URN as Namespace.Name (MT-MessageType for raw JSON)
 *   correlation  conversationId (ConversationId); causation = initiatorId (MT-InitiatorId)
 *   attempt      (MT-Redelivery-Count + 1) x (MT-Fault-RetryCount + 1)
 *   first seen   sentTime; failed at = MT-Fault-Timestamp; origin = the sender's host
 *   error        MT-Fault-ExceptionType: MT-Fault-Message, MT-Fault-StackTrace; a _skipped copy
 *                says it was skipped
 *   source       the last path segment of MT-Fault-InputAddress, else the queue's name less
 *                _error / _skipped (default exchange, routing key = queue)
 *
 * Replay: the management UI's shovel, as MassTransit documents it — properties, headers
 * (x-death too) and body unchanged, to the source queue; opts->strip_fault drops MT-Reason,
 * MT-Fault-* and the mover's MT-Host-*. Re-issue: MassTransit's ReplaceMessageId — a new
 * messageId (body and message_id; MessageId for raw JSON), the old one in MT-OriginalMessageId,
 * the fault headers and the broker's death headers dropped.
 */
#include "masstransit.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "decode.h"
#include "dialect.h"
#include "hval_json.h"
#include "restamp_kit.h"
#include "util.h"

enum mt_ser { MT_SER_NONE, MT_SER_ENVELOPE, MT_SER_RAW };

struct mt {
    enum mt_ser ser;
    struct bytes reason;
    struct bytes conversation_id, correlation_id, initiator_id, request_id;
    struct bytes source_address, destination_address, response_address, fault_address;
    json_t *message_types; /* array of strings */
    struct bytes input_address, vhost, consumer_type, fault_message_type, fault_timestamp;
    bool has_retry, has_redelivery, has_sent, id_in_body;
    int64_t retry, redelivery, sent_ms;
    struct bytes fault_host, fault_mt_version, activity_id, original_message_id;
};

static const char URN_PREFIX[] = "urn:message:";

/* ---- reading ------------------------------------------------------------------------------ */

static struct bytes hdr(const struct message *m, const char *name)
{
    const struct bytes *b = dialect_header_text(m, name);
    return b ? bytes_copy(b) : (struct bytes){0, NULL};
}

/* A member by name, case-insensitively (MassTransit reads envelopes that way). */
static json_t *jget(json_t *o, const char *name)
{
    if (!json_is_object(o))
        return NULL;
    json_t *v = json_object_get(o, name);
    if (v)
        return v;
    const char *k;
    json_t *x;
    json_object_foreach(o, k, x)
    {
        if (strcasecmp(k, name) == 0)
            return x;
    }
    return NULL;
}

static struct bytes jstr(json_t *o, const char *name)
{
    json_t *v = jget(o, name);
    if (!json_is_string(v) || !json_string_length(v))
        return (struct bytes){0, NULL};
    return bytes_dup(json_string_value(v), json_string_length(v));
}

static void take(struct bytes *dst, struct bytes v)
{
    if (!dst->len && v.len) {
        bytes_free(dst);
        *dst = v;
    } else {
        bytes_free(&v);
    }
}

/* v replaces *dst when it is not empty (a transport header over the envelope's copy). */
static void prefer(struct bytes *dst, struct bytes v)
{
    if (v.len) {
        bytes_free(dst);
        *dst = v;
    } else {
        bytes_free(&v);
    }
}

static const void *find(const void *hay, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    const unsigned char *h = hay;
    for (size_t i = 0; k && i + k <= n; i++)
        if (h[i] == (unsigned char)needle[0] && memcmp(h + i, needle, k) == 0)
            return h + i;
    return NULL;
}

/* An envelope-shaped body without the content type to say so: a JSON object naming
 * messageType URNs near its start. */
static bool sniff_envelope(const void *body, size_t n)
{
    const unsigned char *b = body;
    size_t lim = n < 4096 ? n : 4096, i = 0;
    while (i < lim && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n'))
        i++;
    return i < lim && b[i] == '{' && find(b, lim, "\"messageType\"") && find(b, lim, URN_PREFIX);
}

static bool ct_is(const struct bytes *ct, const char *p)
{
    return ct && mt_has_prefix_ci(ct->data, ct->len, p);
}

static int recognise(const struct dialect_input *in, struct dialect_match *m)
{
    const struct message *msg = in->msg;
    const struct bytes *reason = dialect_header_text(msg, "MT-Reason");
    bool fault_hdr = dialect_has_header(msg, "MT-Fault-ExceptionType") ||
                     dialect_has_header(msg, "MT-Fault-Timestamp") ||
                     dialect_has_header(msg, "MT-Fault-InputAddress");
    if (reason && reason->len) {
        dialect_match_by(m, "MT-Reason");
        if (fault_hdr) {
            dialect_match_by(m, "MT-Fault-ExceptionType");
            return 95;
        }
        return 92;
    }
    if (fault_hdr) {
        dialect_match_by(m, "MT-Fault-ExceptionType");
        return 88;
    }
    const struct bytes *ct = props_string(&msg->props, PROP_content_type);
    if (ct_is(ct, "application/vnd.masstransit")) {
        dialect_match_by(m, "content_type");
        return 75;
    }
    const struct bytes *types = dialect_header_text(msg, "MT-MessageType");
    if (types && find(types->data, types->len, URN_PREFIX)) {
        dialect_match_by(m, "MT-MessageType");
        return 72;
    }
    if ((!ct || ct_is(ct, "application/json")) && sniff_envelope(in->body, in->body_len)) {
        dialect_match_by(m, "body");
        return 65;
    }
    static const char *const hints[] = {"MT-Host-MachineName", "MT-Host-Info", "MT-Activity-Id"};
    for (size_t i = 0; i < sizeof hints / sizeof *hints; i++)
        if (dialect_has_header(msg, hints[i])) {
            dialect_match_by(m, hints[i]);
            return 60;
        }
    return 0;
}

static void read_types_header(const struct bytes *h, json_t *arr)
{
    size_t i = 0;
    while (h && i < h->len) {
        size_t b = i;
        while (i < h->len && h->data[i] != ';')
            i++;
        if (i > b)
            json_array_append_new(arr, bytes_to_json(h->data + b, i - b));
        i++;
    }
}

/* The sender: "assembly@machine" from an envelope host object. */
static struct bytes sender_of(json_t *host)
{
    struct bytes a = jstr(host, "assembly"), mch = jstr(host, "machineName");
    struct strbuf sb;
    sb_init(&sb);
    if (a.len)
        sb_add(&sb, a.data, a.len);
    if (a.len && mch.len)
        sb_addc(&sb, '@');
    if (mch.len)
        sb_add(&sb, mch.data, mch.len);
    bytes_free(&a);
    bytes_free(&mch);
    size_t len;
    char *s = sb_detach(&sb, &len);
    if (!len) {
        free(s);
        return (struct bytes){0, NULL};
    }
    return (struct bytes){len, (unsigned char *)s};
}

static bool is_mt_header(const struct bytes *k, enum mt_ser ser)
{
    if (k->len >= 3 && memcmp(k->data, "MT-", 3) == 0)
        return true;
    if (ser != MT_SER_RAW)
        return false;
    return bytes_eq_cstr(k, "MessageId") || bytes_eq_cstr(k, "CorrelationId") ||
           bytes_eq_cstr(k, "ConversationId") || bytes_eq_cstr(k, "RequestId");
}

/* is_mt_header for dialect_envelope_app_headers: ctx is the enum mt_ser. */
static bool is_mt_header_of(const struct bytes *k, const void *ctx)
{
    return is_mt_header(k, *(const enum mt_ser *)ctx);
}

static void read_envelope(struct mt *t, json_t *env, struct bytes *id, struct bytes *origin)
{
    take(id, jstr(env, "messageId"));
    t->id_in_body = id->len > 0;
    take(&t->conversation_id, jstr(env, "conversationId"));
    take(&t->correlation_id, jstr(env, "correlationId"));
    take(&t->initiator_id, jstr(env, "initiatorId"));
    take(&t->request_id, jstr(env, "requestId"));
    take(&t->source_address, jstr(env, "sourceAddress"));
    take(&t->destination_address, jstr(env, "destinationAddress"));
    take(&t->response_address, jstr(env, "responseAddress"));
    take(&t->fault_address, jstr(env, "faultAddress"));
    json_t *types = jget(env, "messageType"), *v;
    size_t i;
    json_array_foreach(types, i, v)
    {
        if (json_is_string(v))
            json_array_append(t->message_types, v);
    }
    json_t *sent = jget(env, "sentTime");
    if (json_is_string(sent))
        t->has_sent = mt_parse_time(json_string_value(sent), json_string_length(sent), &t->sent_ms);
    take(origin, sender_of(jget(env, "host")));
    json_t *h = jget(env, "headers");
    take(&t->activity_id, jstr(h, "MT-Activity-Id"));
    take(&t->original_message_id, jstr(h, "MT-OriginalMessageId"));
}

static void read_raw(struct mt *t, const struct message *m, struct bytes *id, struct bytes *origin)
{
    take(id, hdr(m, "MessageId"));
    take(&t->conversation_id, hdr(m, "ConversationId"));
    take(&t->correlation_id, hdr(m, "CorrelationId"));
    take(&t->initiator_id, hdr(m, "MT-InitiatorId"));
    take(&t->request_id, hdr(m, "RequestId"));
    take(&t->source_address, hdr(m, "MT-Source-Address"));
    take(&t->response_address, hdr(m, "MT-Response-Address"));
    take(&t->fault_address, hdr(m, "MT-Fault-Address"));
    read_types_header(dialect_header_text(m, "MT-MessageType"), t->message_types);
    const struct bytes *hi = dialect_header_text(m, "MT-Host-Info");
    if (hi) {
        json_t *host = json_loadb((const char *)hi->data, hi->len, 0, NULL);
        take(origin, sender_of(host));
        json_decref(host);
    }
}

/* The consumer's acceptance: what MassTransit's deserializer for the content type refuses. */
static const char *acceptance(const struct bytes *ct, json_t *root, const struct mt *t)
{
    if (!ct || !ct->len || ct_is(ct, "application/vnd.masstransit+json")) {
        if (!json_is_object(root))
            return "malformed_envelope";
        return json_array_size(t->message_types) ? NULL : "missing_message_type";
    }
    if (ct_is(ct, "application/json"))
        return root ? NULL : "malformed_json";
    return NULL;
}

static void decode(const struct dialect_input *x, struct decoded *out)
{
    const struct message *m = x->msg;
    struct mt *t = xcalloc(1, sizeof *t);
    out->priv = t;
    t->message_types = json_array();
    const struct bytes *ct = props_string(&m->props, PROP_content_type);
    bool no_ct = !ct || !ct->len;
    if (ct_is(ct, "application/vnd.masstransit"))
        t->ser = MT_SER_ENVELOPE;
    else if (ct_is(ct, "application/json") || ct_is(ct, "application/xml") ||
             (no_ct &&
              (dialect_has_header(m, "MessageId") || dialect_has_header(m, "MT-MessageType"))))
        t->ser = MT_SER_RAW;
    else if (no_ct && sniff_envelope(x->body, x->body_len))
        t->ser = MT_SER_ENVELOPE;
    json_t *root = NULL;
    if (no_ct || ct_is(ct, "application/vnd.masstransit+json") || ct_is(ct, "application/json"))
        root = json_loadb(x->body, x->body_len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    struct bytes id = {0, NULL}, origin = {0, NULL};
    if (t->ser == MT_SER_ENVELOPE && json_is_object(root))
        read_envelope(t, root, &id, &origin);
    else if (t->ser == MT_SER_RAW)
        read_raw(t, m, &id, &origin);
    const char *reject = acceptance(ct, root, t);
    json_decref(root);
    out->accepted = !reject;
    out->reject_reason = reject;
    out->accept_note = reject ? (strcmp(reject, "missing_message_type") == 0
                                     ? "MassTransit cannot deliver it: the envelope names no "
                                       "messageType"
                                     : "MassTransit's deserializer for its content type "
                                       "cannot read the body")
                              : "MassTransit's deserializer can read it";

    /* the fault */
    t->reason = hdr(m, "MT-Reason");
    t->input_address = hdr(m, "MT-Fault-InputAddress");
    t->consumer_type = hdr(m, "MT-Fault-ConsumerType");
    t->fault_message_type = hdr(m, "MT-Fault-MessageType");
    t->fault_timestamp = hdr(m, "MT-Fault-Timestamp");
    t->fault_host = hdr(m, "MT-Host-MachineName");
    t->fault_mt_version = hdr(m, "MT-Host-MassTransitVersion");
    prefer(&t->activity_id, hdr(m, "MT-Activity-Id"));
    prefer(&t->original_message_id, hdr(m, "MT-OriginalMessageId"));
    t->has_retry = dialect_header_int(m, "MT-Fault-RetryCount", &t->retry);
    t->has_redelivery = dialect_header_int(m, "MT-Redelivery-Count", &t->redelivery);
    const struct bytes *et = dialect_header_text(m, "MT-Fault-ExceptionType");
    const struct bytes *em = dialect_header_text(m, "MT-Fault-Message");
    const struct bytes *es = dialect_header_text(m, "MT-Fault-StackTrace");
    dialect_set_error(out, et ? et->data : NULL, et ? et->len : 0, em ? em->data : NULL,
                      em ? em->len : 0, es ? es->data : NULL, es ? es->len : 0);
    if (t->fault_timestamp.len &&
        !mt_parse_time(t->fault_timestamp.data, t->fault_timestamp.len, &out->failed_at_ms))
        out->failed_at_ms = 0;
    bool fault = bytes_eq_cstr(&t->reason, "fault") || et || em || t->fault_timestamp.len;

    /* the neutral envelope */
    struct envelope_init in;
    memset(&in, 0, sizeof in);
    const struct bytes *mid = props_string(&m->props, PROP_message_id);
    take(&id, mid ? bytes_copy(mid) : (struct bytes){0, NULL});
    if (!id.len) {
        id = dialect_derived_id(m);
        in.defaulted |= ED_ID;
    }
    in.id = id;
    struct bytes type = {0, NULL};
    for (size_t i = 0; i < json_array_size(t->message_types) && !type.len; i++) {
        json_t *u = json_array_get(t->message_types, i);
        if (!mt_urn_type(json_string_value(u), json_string_length(u), &type))
            bytes_free(&type);
    }
    if (!type.len && t->fault_message_type.len)
        type = bytes_copy(&t->fault_message_type);
    if (!type.len) {
        const struct bytes *tp = props_string(&m->props, PROP_type);
        type = tp && tp->len ? bytes_copy(tp) : bytes_from_cstr("message");
        in.defaulted |= ED_TYPE;
    }
    in.type = type;
    in.version = 1;
    in.defaulted |= ED_VERSION;
    if (t->conversation_id.len)
        in.correlation_id = t->conversation_id;
    else
        in.defaulted |= ED_CORRELATION;
    in.causation_id = t->initiator_id;
    if (fault) {
        in.attempt =
            mt_attempts(t->has_retry ? t->retry : 0, t->has_redelivery ? t->redelivery : 0);
    } else if (t->has_redelivery) {
        in.attempt = mt_attempts(0, t->redelivery);
    } else {
        in.attempt = 1;
        in.defaulted |= ED_ATTEMPT;
    }
    if (t->has_sent) {
        in.first_seen_ms = t->sent_ms;
    } else {
        dialect_first_seen_fallback(x, &in.first_seen_ms);
        in.defaulted |= ED_FIRST_SEEN;
    }
    if (!origin.len) {
        const struct bytes *app = props_string(&m->props, PROP_app_id);
        if (app)
            origin = bytes_copy(app);
    }
    in.origin = origin;

    /* where it goes back */
    struct bytes q = {0, NULL};
    if (t->input_address.len &&
        mt_address_queue(t->input_address.data, t->input_address.len, &q, &t->vhost)) {
        dialect_source_queue(out, "MT-Fault-InputAddress", q.data, q.len);
    } else {
        static const struct {
            const char *suffix, *how;
        } sfx[] = {{"_error", "queue name minus _error"},
                   {"_skipped", "queue name minus _skipped"}};
        for (size_t i = 0; i < 2; i++) {
            size_t k = strlen(sfx[i].suffix);
            if (m->queue.len > k &&
                memcmp(m->queue.data + m->queue.len - k, sfx[i].suffix, k) == 0) {
                dialect_source_queue(out, sfx[i].how, m->queue.data, m->queue.len - k);
                break;
            }
        }
    }
    bytes_free(&q);

    struct bytes err = {0, NULL};
    if (!fault && t->reason.len) {
        struct strbuf sb;
        sb_init(&sb);
        if (bytes_eq_cstr(&t->reason, "dead-letter")) {
            sb_adds(&sb, "skipped: no consumer");
            if (out->source.queue.len) {
                sb_adds(&sb, " on ");
                sb_add(&sb, out->source.queue.data, out->source.queue.len);
            }
            sb_adds(&sb, " takes ");
            if (in.defaulted & ED_TYPE)
                sb_adds(&sb, "its message type");
            else
                sb_add(&sb, type.data, type.len);
            sb_adds(&sb, " (MT-Reason dead-letter)");
        } else {
            sb_adds(&sb, "MT-Reason: ");
            sb_add(&sb, t->reason.data, t->reason.len);
        }
        size_t len;
        char *s = sb_detach(&sb, &len);
        err = (struct bytes){len, (unsigned char *)s};
    }
    in.error = err;

    dialect_envelope_app_headers(out, &in, m, is_mt_header_of, &t->ser);
    bytes_free(&id);
    bytes_free(&type);
    bytes_free(&origin);
    bytes_free(&err);
    static const char *const from[NF_COUNT] = {
        [NF_ID] = "the message id (envelope messageId; MessageId header for raw JSON)",
        [NF_TYPE] = "the first messageType URN as Namespace.Name",
        [NF_VERSION] = "MassTransit has no schema version",
        [NF_CORRELATION] = "the conversation (conversationId): the whole causal chain",
        [NF_CAUSATION] = ("initiatorId: the CorrelationId or RequestId of the message whose "
                          "consumer sent this one"),
        [NF_ATTEMPT] = "(MT-Redelivery-Count + 1) x (MT-Fault-RetryCount + 1)",
        [NF_FIRST_SEEN] = "when it was sent (envelope sentTime)",
        [NF_ORIGIN] = "the sending host (envelope host: assembly@machine)",
        [NF_ERROR] = "MT-Fault-ExceptionType: MT-Fault-Message (the base exception)",
        [NF_FAILED_AT] = "MT-Fault-Timestamp",
    };
    memcpy(out->read_from, from, sizeof from);
}

static void release(struct decoded *d)
{
    struct mt *t = d->priv;
    if (!t)
        return;
    struct bytes *all[] = {&t->reason,
                           &t->conversation_id,
                           &t->correlation_id,
                           &t->initiator_id,
                           &t->request_id,
                           &t->source_address,
                           &t->destination_address,
                           &t->response_address,
                           &t->fault_address,
                           &t->input_address,
                           &t->vhost,
                           &t->consumer_type,
                           &t->fault_message_type,
                           &t->fault_timestamp,
                           &t->fault_host,
                           &t->fault_mt_version,
                           &t->activity_id,
                           &t->original_message_id};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        bytes_free(all[i]);
    json_decref(t->message_types);
    free(t);
    d->priv = NULL;
}

/* ---- the dialect's own fields --------------------------------------------------------------- */

static void fields(const struct decoded *d, int64_t now_ms, struct dfields *f)
{
    (void)now_ms;
    const struct mt *t = d->priv;
    if (!t)
        return;
    static const char *const ser[] = {"none", "envelope", "raw"};
    dfields_add_nonempty(
        f, "reason", "MT-Reason", &t->reason,
        "fault: a consumer threw (the _error queue); dead-letter: no consumer for its type "
        "(the _skipped queue)");
    struct dfield *s = dfields_adds(f, "serializer", "serializer", ser[t->ser],
                                    "envelope: application/vnd.masstransit+json, the ids in the "
                                    "body; raw: the ids in transport headers");
    s->style = DF_DIM;
    struct strbuf sb;
    sb_init(&sb);
    for (size_t i = 0; i < json_array_size(t->message_types); i++) {
        json_t *u = json_array_get(t->message_types, i);
        if (i)
            sb_adds(&sb, ", ");
        sb_add(&sb, json_string_value(u), json_string_length(u));
    }
    struct dfield *mt =
        dfields_add(f, "message_types", "message types", sb.buf ? sb.buf : "", sb.len,
                    "every type it was sent as (URNs; the first is the "
                    "neutral type)");
    mt->json = json_deep_copy(t->message_types);
    sb_free(&sb);
    dfields_add_nonempty(f, "conversation_id", "conversation", &t->conversation_id,
                         "conversationId: flows through every message of the conversation");
    dfields_add_nonempty(f, "correlation_id", "correlation", &t->correlation_id,
                         "correlationId: the business correlation (sagas), not the conversation");
    dfields_add_nonempty(
        f, "initiator_id", "initiator", &t->initiator_id,
        "initiatorId: the CorrelationId or RequestId of the message that caused it");
    dfields_add_nonempty(f, "request_id", "request", &t->request_id, "requestId (requests only)");
    dfields_add_nonempty(f, "source_address", "source address", &t->source_address,
                         "the sending endpoint");
    dfields_add_nonempty(f, "destination_address", "destination", &t->destination_address,
                         "where it was sent");
    dfields_add_nonempty(f, "response_address", "response address", &t->response_address,
                         "where responses go");
    dfields_add_nonempty(f, "fault_address", "fault address", &t->fault_address,
                         "where Fault<T> goes");
    dfields_add_nonempty(f, "input_address", "input address", &t->input_address,
                         "MT-Fault-InputAddress: the endpoint that failed");
    dfields_add_nonempty(f, "virtual_host", "virtual host", &t->vhost, "of the input address");
    dfields_add_nonempty(f, "consumer_type", "consumer", &t->consumer_type,
                         "MT-Fault-ConsumerType");
    dfields_add_nonempty(f, "fault_message_type", "faulted type", &t->fault_message_type,
                         "MT-Fault-MessageType: the type the consumer took");
    dfields_add_nonempty(f, "fault_timestamp", "fault time", &t->fault_timestamp,
                         "MT-Fault-Timestamp as written (7 fraction digits)");
    dfields_add_int_opt(f, "retry_count", "retries", t->has_retry, t->retry,
                        "MT-Fault-RetryCount: in-process retries before it gave up (absent: none)");
    dfields_add_int_opt(f, "redelivery_count", "redeliveries", t->has_redelivery, t->redelivery,
                        "MT-Redelivery-Count: second-level redeliveries");
    dfields_add_nonempty(f, "fault_host", "moved by", &t->fault_host,
                         "MT-Host-MachineName: the host that moved it to the error queue");
    dfields_add_nonempty(f, "fault_masstransit_version", "MassTransit", &t->fault_mt_version,
                         "MT-Host-MassTransitVersion of that host");
    dfields_add_nonempty(f, "activity_id", "activity", &t->activity_id,
                         "MT-Activity-Id: the W3C trace id of the send");
    dfields_add_nonempty(
        f, "original_message_id", "original id", &t->original_message_id,
        "MT-OriginalMessageId: the id before a redelivery or re-issue gave it a new one");
    unsigned df = d->env->defaulted;
    if (df & ED_ID)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         "id: a name-based UUID of the message (no messageId anywhere)");
    if (df & ED_TYPE)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN, "type: no messageType URN to read");
    if (df & ED_CORRELATION)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN, "correlation: the id (no conversationId)");
    if (df & ED_FIRST_SEEN)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN, "first seen: no sentTime to read");
}

/* ---- replay and re-issue -------------------------------------------------------------------- */

/* MT-Reason, MT-Fault-* (not MT-Fault-Address, the raw serializer's fault address) and the
 * mover's MT-Host-* (not MT-Host-Info, the raw serializer's sender). */
static bool fault_header(const struct bytes *k)
{
    if (bytes_eq_cstr(k, "MT-Reason"))
        return true;
    if (bytes_has_prefix(k, "MT-Fault-"))
        return !bytes_eq_cstr(k, "MT-Fault-Address");
    if (bytes_has_prefix(k, "MT-Host-"))
        return !bytes_eq_cstr(k, "MT-Host-Info");
    return false;
}

static void strip_fault(struct outgoing *out)
{
    struct htable *t = htable_new();
    for (size_t i = 0; i < out->headers->n; i++) {
        struct hentry *e = &out->headers->e[i];
        if (!fault_header(&e->key))
            htable_addn(t, e->key.data, e->key.len, hval_copy(&e->val));
    }
    htable_free(out->headers);
    out->headers = t;
}

/* The envelope's "messageId": "OLD" in the body given the new id, every other byte kept. */
static enum status body_new_id(struct outgoing *out, struct error *err)
{
    const unsigned char *b = out->body.data;
    size_t n = out->body.len, k = out->old_id.len;
    for (size_t i = 0; b && k && i + 11 < n; i++) {
        if (memcmp(b + i, "\"messageId\"", 11) != 0)
            continue;
        size_t j = i + 11;
        while (j < n && (b[j] == ' ' || b[j] == '\t' || b[j] == '\r' || b[j] == '\n'))
            j++;
        if (j >= n || b[j++] != ':')
            continue;
        while (j < n && (b[j] == ' ' || b[j] == '\t' || b[j] == '\r' || b[j] == '\n'))
            j++;
        if (j + k + 2 > n || b[j] != '"' || memcmp(b + j + 1, out->old_id.data, k) != 0 ||
            b[j + 1 + k] != '"')
            continue;
        struct strbuf sb;
        sb_init(&sb);
        sb_add(&sb, b, j + 1);
        sb_add(&sb, out->id.data, out->id.len);
        sb_add(&sb, b + j + 1 + k, n - (j + 1 + k));
        size_t len;
        char *s = sb_detach(&sb, &len);
        bytes_free(&out->body);
        out->body = (struct bytes){len, (unsigned char *)s};
        return ST_OK;
    }
    return error_set(err, ST_EUNSUPPORTED,
                     "the envelope's \"messageId\" could not be found in the body to give it "
                     "the new id");
}

static enum status restamp(const struct decoded *d, const struct restamp_opts *o,
                           const struct bytes *dlq, struct outgoing *out, struct error *err)
{
    (void)dlq;
    const struct mt *t = d->priv;
    enum status st = rk_target_source(
        d, out,
        "it names no MT-Fault-InputAddress and its queue has no _error or _skipped "
        "suffix",
        err);
    if (st != ST_OK)
        return st;
    if (o->mode == RESTAMP_REPLAY) {
        rk_headers_keep_broker(d, out); /* the shovel changes nothing */
        if (o->strip_fault)
            strip_fault(out);
        if (!props_has(&d->msg->props, PROP_delivery_mode))
            rk_prop_clear(&out->props, PROP_delivery_mode);
    } else {
        strip_fault(out);
        if (dialect_has_header(d->msg, "MessageId"))
            rk_header_put_text(out->headers, "MessageId", out->id.data, out->id.len);
        if (!htable_get(out->headers, "MT-OriginalMessageId"))
            rk_header_put_text(out->headers, "MT-OriginalMessageId", out->old_id.data,
                               out->old_id.len);
        rk_prop_set(&out->props, PROP_message_id, out->id.data, out->id.len);
        out->headers_present = true;
        if (t && t->id_in_body && (st = body_new_id(out, err)) != ST_OK)
            return st;
    }
    return rk_apply_changes(d, o, NULL, 0, out, err);
}

const struct dialect_ops dialect_masstransit = {
    .name = "masstransit",
    .title = "MassTransit",
    .summary = "MassTransit fault or skipped copy (MT-Reason, MT-Fault-*, envelope body)",
    .section = "MassTransit",
    .recognise = recognise,
    .ceiling = 95,
    .decode = decode,
    .release = release,
    .fields = fields,
    .restamp = restamp,
    .replay_rule = "as the management UI's shovel moves it: properties, headers and body "
                   "unchanged, to the source queue (MT-Fault-InputAddress) via the default "
                   "exchange; --strip-fault drops MT-Reason, MT-Fault-*, MT-Host-*; a re-issue "
                   "gets a new messageId and MT-OriginalMessageId",
};
