/*
 * wolverine: Wolverine on RabbitMQ (wolverine.h; docs/dialects.md has the sources).
 *
 *   recognise    wolverine-protocol-version with exception-type: 95; the protocol header
 *                alone: 75 (80 in the dead-letter queue or with x-death); exception-type +
 *                failed-at + a Wolverine original-destination without it: 70; the queue or
 *                exchange wolverine-dead-letter-queue alone: 40
 *   mode         interop (exception-* stamped: InteropFriendly), native (only x-death: the
 *                broker dead-lettered the original), none (not a dead letter)
 *   id           message_id; type = the type property (assembly qualifier cut)
 *   correlation  correlation_id, else conversation-id; causation = causation-id
 *   attempt      attempts (1..int32), else the broker's death count, else 1
 *   first seen   sent-at; failed at = failed-at (epoch ms); origin = source
 *   error        exception-type: exception-message, exception-stack; else decode's x-death
 *   source       original-destination rabbitmq://queue/NAME, else x-death[0]'s queue (the
 *                default exchange, routing key = queue, as Wolverine's DLQ listener records it)
 *
 * Replay: to the source queue via the default exchange; message_id, properties, body and
 * every header kept (exception-* too, as the database replay keeps the envelope), attempts →
 * "0", the broker's death headers left out; opts->strip_fault drops the failure stamp.
 * Re-issue: a new message_id, causation-id = the old id, the failure stamp dropped,
 * attempts → "0".
 */
#include "wolverine.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "decode.h"
#include "dialect.h"
#include "hval_json.h"
#include "restamp_kit.h"
#include "util.h"

enum wv_mode { WV_NONE, WV_INTEROP, WV_NATIVE };

struct wv {
    enum wv_mode mode;
    struct bytes protocol, message_type, conversation_id, parent_id, source, original_destination;
    struct bytes saga_id, tenant_id, user_name, reply_uri, accepted_types;
    bool has_attempts, has_sent, has_time_to_send, stack_truncated, reply_requested, ack_requested,
        is_response;
    int32_t attempts;
    int64_t sent_ms, time_to_send_ms;
};

/* The headers Wolverine writes itself (EnvelopeConstants, DeadLetterQueueConstants). */
static const char *const own_names[] = {"wolverine-protocol-version",
                                        "correlation-id",
                                        "saga-id",
                                        "id",
                                        "conversation-id",
                                        "content-type",
                                        "source",
                                        "reply-requested",
                                        "destination",
                                        "reply-uri",
                                        "time-to-send",
                                        "sent-at",
                                        "attempts",
                                        "ack-requested",
                                        "message-type",
                                        "accepted-content-types",
                                        "deliver-by",
                                        "parent-id",
                                        "is-response",
                                        "tenant-id",
                                        "user-name",
                                        "causation-id",
                                        "exception-type",
                                        "exception-message",
                                        "exception-stack",
                                        "failed-at",
                                        "original-destination",
                                        "original-partition",
                                        "original-offset",
                                        NULL};

/* Whether a header is one of own_names (for dialect_envelope_app_headers). */
static bool is_own_name(const struct bytes *k, const void *ctx)
{
    (void)ctx;
    return rk_name_in(k->data, k->len, own_names);
}

static const char *const stamp_names[] = {
    "exception-type",       "exception-message",  "exception-stack", "failed-at",
    "original-destination", "original-partition", "original-offset", NULL};

static const char TRUNCATED[] = "... (truncated)";

/* ---- the parsers (wolverine.h) -------------------------------------------------------------- */

static bool dig(const unsigned char *s, size_t from, size_t count)
{
    for (size_t i = from; i < from + count; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return true;
}

bool wv_parse_time(const void *p, size_t n, int64_t *ms)
{
    const unsigned char *s = p;
    if (!s || n < 19 || n > 64)
        return false;
    char buf[72];
    /* yyyy-MM-dd HH?mm?ss?ffffff Z */
    if (n == 28 && dig(s, 0, 4) && s[4] == '-' && dig(s, 5, 2) && s[7] == '-' && dig(s, 8, 2) &&
        s[10] == ' ' && dig(s, 11, 2) && !dig(s, 13, 1) && dig(s, 14, 2) && !dig(s, 16, 1) &&
        dig(s, 17, 2) && !dig(s, 19, 1) && dig(s, 20, 6) && s[26] == ' ' && s[27] == 'Z') {
        snprintf(buf, sizeof buf, "%.10sT%.2s:%.2s:%.2s.%.6sZ", (const char *)s,
                 (const char *)s + 11, (const char *)s + 14, (const char *)s + 17,
                 (const char *)s + 20);
        if (!time_parse_rfc3339(buf, strlen(buf), ms))
            return false;
    } else if (!time_parse_rfc3339(p, n, ms)) {
        memcpy(buf, s, n); /* no zone: UTC (DateTimeStyles.AssumeUniversal) */
        buf[n] = 'Z';
        if (!time_parse_rfc3339(buf, n + 1, ms))
            return false;
    }
    return !(s[0] == '0' && s[1] == '0' && s[2] == '0' &&
             s[3] == '1'); /* default(DateTimeOffset) */
}

bool wv_destination_queue(const void *uri, size_t n, struct bytes *queue)
{
    static const char pre[] = "rabbitmq://queue/";
    const unsigned char *s = uri;
    *queue = (struct bytes){0, NULL};
    size_t k = sizeof pre - 1;
    if (!s || n <= k)
        return false;
    for (size_t i = 0; i < k; i++) {
        unsigned char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c - 'A' + 'a');
        if (c != (unsigned char)pre[i])
            return false;
    }
    size_t e = k;
    while (e < n && s[e] != '/' && s[e] != '?' && s[e] != '#')
        e++;
    if (e == k || e - k > 255)
        return false;
    *queue = bytes_dup(s + k, e - k);
    return true;
}

bool wv_parse_int32(const void *p, size_t n, int32_t *out)
{
    const unsigned char *s = p;
    size_t i = 0;
    bool neg = false;
    if (!s || !n)
        return false;
    if (s[0] == '-' || s[0] == '+')
        neg = s[i++] == '-';
    if (i == n)
        return false;
    int64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (s[i] - '0');
        if (v > (int64_t)INT32_MAX + 1)
            return false;
    }
    v = neg ? -v : v;
    if (v > INT32_MAX || v < INT32_MIN)
        return false;
    *out = (int32_t)v;
    return true;
}

/* ---- reading ------------------------------------------------------------------------------ */

static struct bytes hdr(const struct message *m, const char *name)
{
    const struct bytes *b = dialect_header_text(m, name);
    return b && b->len ? bytes_copy(b) : (struct bytes){0, NULL};
}

static bool is_dlq(const struct bytes *b)
{
    return bytes_eq_cstr(b, WV_DLQ_NAME);
}

static int recognise(const struct dialect_input *in, struct dialect_match *m)
{
    const struct message *msg = in->msg;
    bool proto = dialect_has_header(msg, "wolverine-protocol-version");
    bool exc = dialect_has_header(msg, "exception-type");
    bool in_dlq = is_dlq(&msg->queue) || is_dlq(&msg->exchange);
    if (proto) {
        dialect_match_by(m, "wolverine-protocol-version");
        if (exc) {
            dialect_match_by(m, "exception-type");
            return 95;
        }
        if (in_dlq || in->death->n_entries) {
            dialect_match_by(m, in_dlq ? "queue" : "x-death");
            return 80;
        }
        return 75;
    }
    const struct bytes *dest = dialect_header_text(msg, "original-destination");
    struct bytes q;
    if (exc && dialect_has_header(msg, "failed-at") && dest &&
        wv_destination_queue(dest->data, dest->len, &q)) {
        bytes_free(&q);
        dialect_match_by(m, "exception-type");
        dialect_match_by(m, "original-destination");
        return 70;
    }
    if (in_dlq) {
        dialect_match_by(m, "queue");
        return 40;
    }
    return 0;
}

static bool flag(const struct message *m, const char *name)
{
    const struct bytes *b = dialect_header_text(m, name);
    return b && b->len == 4 && strncasecmp((const char *)b->data, "true", 4) == 0;
}

static bool time_hdr(const struct message *m, const char *name, int64_t *ms)
{
    const struct bytes *b = dialect_header_text(m, name);
    return b && wv_parse_time(b->data, b->len, ms);
}

/* Wolverine's deserializer: a message type to find the handler by, and a JSON body when the
 * content type says JSON (or says nothing: JSON is the default). */
static const char *acceptance(const struct dialect_input *x, const struct wv *t)
{
    if (!t->message_type.len)
        return "missing_message_type";
    const struct bytes *ct = props_string(&x->msg->props, PROP_content_type);
    bool json = !ct || !ct->len;
    for (size_t i = 0; ct && i + 4 <= ct->len && !json; i++)
        json = strncasecmp((const char *)ct->data + i, "json", 4) == 0;
    if (!json)
        return NULL;
    json_t *j = json_loadb(x->body, x->body_len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    json_decref(j);
    return j ? NULL : "malformed_json";
}

static void decode(const struct dialect_input *x, struct decoded *out)
{
    const struct message *m = x->msg;
    const struct props *p = &m->props;
    struct wv *t = xcalloc(1, sizeof *t);
    out->priv = t;
    t->protocol = hdr(m, "wolverine-protocol-version");
    const struct bytes *tp = props_string(p, PROP_type);
    t->message_type = tp && tp->len ? bytes_copy(tp) : hdr(m, "message-type");
    t->conversation_id = hdr(m, "conversation-id");
    t->parent_id = hdr(m, "parent-id");
    t->source = hdr(m, "source");
    t->original_destination = hdr(m, "original-destination");
    t->saga_id = hdr(m, "saga-id");
    t->tenant_id = hdr(m, "tenant-id");
    t->user_name = hdr(m, "user-name");
    t->reply_uri = hdr(m, "reply-uri");
    t->accepted_types = hdr(m, "accepted-content-types");
    t->reply_requested = dialect_has_header(m, "reply-requested");
    t->ack_requested = flag(m, "ack-requested");
    t->is_response = flag(m, "is-response");
    t->has_sent = time_hdr(m, "sent-at", &t->sent_ms);
    t->has_time_to_send = time_hdr(m, "time-to-send", &t->time_to_send_ms);
    const struct hval *av = htable_get(m->headers, "attempts");
    int64_t a64;
    const struct bytes *as = hval_str(av);
    if (as)
        t->has_attempts = wv_parse_int32(as->data, as->len, &t->attempts);
    else if (av && dialect_header_int(m, "attempts", &a64) && a64 >= INT32_MIN &&
             a64 <= INT32_MAX) {
        t->has_attempts = true;
        t->attempts = (int32_t)a64;
    }

    const struct bytes *et = dialect_header_text(m, "exception-type");
    const struct bytes *em = dialect_header_text(m, "exception-message");
    const struct bytes *es = dialect_header_text(m, "exception-stack");
    bool stamped = dialect_has_header(m, "exception-type") ||
                   dialect_has_header(m, "exception-message") || dialect_has_header(m, "failed-at");
    t->mode = stamped ? WV_INTEROP : x->death->n_entries ? WV_NATIVE : WV_NONE;
    dialect_set_error(out, et ? et->data : NULL, et ? et->len : 0, em ? em->data : NULL,
                      em ? em->len : 0, es ? es->data : NULL, es ? es->len : 0);
    size_t tl = sizeof TRUNCATED - 1;
    t->stack_truncated = es && es->len >= tl && memcmp(es->data + es->len - tl, TRUNCATED, tl) == 0;
    int64_t fa;
    if (dialect_header_int(m, "failed-at", &fa) && fa > 0)
        out->failed_at_ms = fa;

    struct envelope_init in;
    memset(&in, 0, sizeof in);
    const struct bytes *mid = props_string(p, PROP_message_id);
    struct bytes id = mid && mid->len ? bytes_copy(mid) : hdr(m, "id");
    if (!id.len) {
        bytes_free(&id);
        id = dialect_derived_id(m);
        in.defaulted |= ED_ID;
    }
    in.id = id;
    struct bytes type = {0, NULL};
    if (t->message_type.len) {
        size_t n = 0; /* an assembly-qualified name: the type before ", Assembly" */
        while (n < t->message_type.len && t->message_type.data[n] != ',')
            n++;
        type = bytes_dup(t->message_type.data, n ? n : t->message_type.len);
    } else {
        const struct bytes *rk = death_first_routing_key(x->death);
        type = rk && rk->len ? bytes_copy(rk) : bytes_from_cstr("message");
        in.defaulted |= ED_TYPE;
    }
    in.type = type;
    in.version = 1;
    in.defaulted |= ED_VERSION;
    const struct bytes *corr = props_string(p, PROP_correlation_id);
    if (corr && corr->len)
        in.correlation_id = *corr;
    else if (t->conversation_id.len)
        in.correlation_id = t->conversation_id;
    else
        in.defaulted |= ED_CORRELATION;
    struct bytes cause = hdr(m, "causation-id");
    in.causation_id = cause;
    if (t->has_attempts && t->attempts > 0) {
        in.attempt = t->attempts;
    } else if (x->death->total > 0) {
        in.attempt = x->death->total;
        in.defaulted |= ED_ATTEMPT;
    } else {
        in.attempt = 1;
        in.defaulted |= ED_ATTEMPT;
    }
    if (t->has_sent) {
        in.first_seen_ms = t->sent_ms;
    } else {
        in.first_seen_ms = x->death->has_times ? x->death->first_time_ms
                           : m->fetched_at_ms  ? m->fetched_at_ms
                                               : x->now_ms;
        in.defaulted |= ED_FIRST_SEEN;
    }
    in.origin = t->source;

    struct bytes q = {0, NULL};
    if (t->original_destination.len &&
        wv_destination_queue(t->original_destination.data, t->original_destination.len, &q))
        dialect_source_queue(out, "original-destination", q.data, q.len);
    else if (x->death->n_entries && x->death->entries[0].queue.len)
        dialect_source_queue(out, "x-death", x->death->entries[0].queue.data,
                             x->death->entries[0].queue.len);
    bytes_free(&q);

    const char *reject = acceptance(x, t);
    out->accepted = !reject;
    out->reject_reason = reject;
    out->accept_note = !reject ? "Wolverine can read it: a message type and a body its "
                                 "serializer reads"
                       : strcmp(reject, "malformed_json") == 0
                           ? "Wolverine's JSON serializer cannot read the body"
                           : "Wolverine cannot find a handler: no message type";

    dialect_envelope_app_headers(out, &in, m, is_own_name, NULL);
    bytes_free(&id);
    bytes_free(&type);
    bytes_free(&cause);
    static const char *const from[NF_COUNT] = {
        [NF_ID] = "the envelope id (message_id property)",
        [NF_TYPE] = "the message type alias (type property)",
        [NF_VERSION] = "Wolverine has no schema version",
        [NF_CORRELATION] = "the correlation (correlation_id property; else conversation-id)",
        [NF_CAUSATION] = "causation-id (only when the sender set DeliveryOptions.CausationId)",
        [NF_ATTEMPT] = "attempts: handler executions (else the broker's death count)",
        [NF_FIRST_SEEN] = "sent-at",
        [NF_ORIGIN] = "source: the sending service's name",
        [NF_ERROR] = "exception-type: exception-message (InteropFriendly), else x-death",
        [NF_FAILED_AT] = "failed-at (epoch ms), else the newest x-death",
    };
    memcpy(out->read_from, from, sizeof from);
}

static void release(struct decoded *d)
{
    struct wv *t = d->priv;
    if (!t)
        return;
    struct bytes *all[] = {&t->protocol,  &t->message_type,  &t->conversation_id,
                           &t->parent_id, &t->source,        &t->original_destination,
                           &t->saga_id,   &t->tenant_id,     &t->user_name,
                           &t->reply_uri, &t->accepted_types};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        bytes_free(all[i]);
    free(t);
    d->priv = NULL;
}

/* ---- the dialect's own fields --------------------------------------------------------------- */

static void add_bool(struct dfields *f, const char *key, const char *label, bool v,
                     const char *meaning)
{
    struct dfield *d = dfields_adds(f, key, label, v ? "true" : "false", meaning);
    d->json = json_boolean(v);
}

/* A ,-joined header as a JSON array (absent: null). */
static void add_list(struct dfields *f, const char *key, const char *label, const struct bytes *b,
                     const char *meaning)
{
    if (!b->len) {
        dfields_adds(f, key, label, NULL, meaning);
        return;
    }
    struct dfield *d = dfields_add(f, key, label, b->data, b->len, meaning);
    json_t *arr = json_array();
    for (size_t i = 0; i < b->len;) {
        size_t s = i;
        while (i < b->len && b->data[i] != ',')
            i++;
        json_array_append_new(arr, bytes_to_json(b->data + s, i - s));
        i++;
    }
    d->json = arr;
}

static void fields(const struct decoded *d, int64_t now_ms, struct dfields *f)
{
    (void)now_ms;
    const struct wv *t = d->priv;
    if (!t)
        return;
    static const char *const modes[] = {NULL, "interop", "native"};
    struct dfield *md = dfields_adds(
        f, "mode", "dead-letter mode", modes[t->mode],
        "interop: Wolverine stamped the failure and sent a copy (InteropFriendly); native: the "
        "broker dead-lettered the original (x-death only)");
    md->style = DF_ACCENT;
    dfields_add_nonempty(f, "protocol_version", "protocol", &t->protocol,
                         "wolverine-protocol-version");
    dfields_add_nonempty(f, "message_type", "message type", &t->message_type,
                         "the type property as written (the alias handlers are found by)");
    dfields_add_nonempty(f, "conversation_id", "conversation", &t->conversation_id,
                         "conversation-id: the root message's id");
    dfields_add_nonempty(f, "parent_id", "parent activity", &t->parent_id,
                         "parent-id: the sender's W3C trace id (00-trace-span-flags)");
    dfields_add_nonempty(f, "source", "source", &t->source, "the sending service (ServiceName)");
    if (t->has_sent)
        dfields_add_time(f, "sent_at_ms", "sent at", t->sent_ms, "sent-at");
    else
        dfields_adds(f, "sent_at_ms", "sent at", NULL, "sent-at");
    if (t->has_attempts)
        dfields_add_int(f, "attempts", "attempts", t->attempts,
                        "handler executions (0 on a message as sent)");
    else
        dfields_adds(f, "attempts", "attempts", NULL, "handler executions");
    dfields_add_nonempty(f, "original_destination", "failed at endpoint", &t->original_destination,
                         "original-destination: the endpoint it was received from");
    add_bool(f, "stack_truncated", "stack cut", t->stack_truncated,
             "exception-stack was cut at 8192 characters");
    dfields_add_nonempty(f, "saga_id", "saga", &t->saga_id, "saga-id");
    dfields_add_nonempty(f, "tenant_id", "tenant", &t->tenant_id, "tenant-id");
    dfields_add_nonempty(f, "user_name", "user", &t->user_name, "user-name");
    dfields_add_nonempty(f, "reply_uri", "reply to", &t->reply_uri, "reply-uri");
    add_bool(f, "reply_requested", "reply requested", t->reply_requested, "reply-requested");
    add_bool(f, "ack_requested", "ack requested", t->ack_requested, "ack-requested");
    add_bool(f, "is_response", "is response", t->is_response, "is-response");
    if (t->has_time_to_send)
        dfields_add_time(f, "time_to_send_ms", "scheduled for", t->time_to_send_ms, "time-to-send");
    else
        dfields_adds(f, "time_to_send_ms", "scheduled for", NULL, "time-to-send");
    add_list(f, "accepted_content_types", "accepts", &t->accepted_types,
             "accepted-content-types (,-joined)");
    unsigned df = d->env->defaulted;
    if (df & ED_ID)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         "id: a name-based UUID of the message (no message_id)");
    if (df & ED_TYPE)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN, "type: no type property");
    if (df & ED_ATTEMPT)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         d->death.total > 0
                             ? "attempt: the broker's death count (attempts is 0 as sent: "
                               "Wolverine counts only on its own copies)"
                             : "attempt: 1 (no attempts header, no x-death)");
    if (df & ED_FIRST_SEEN)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN, "first seen: no sent-at to read");
}

/* ---- replay and re-issue -------------------------------------------------------------------- */

static enum status restamp(const struct decoded *d, const struct restamp_opts *o,
                           const struct bytes *dlq, struct outgoing *out, struct error *err)
{
    (void)dlq;
    enum status st = rk_target_source(
        d, out, "it has no original-destination queue and no x-death naming one", err);
    if (st != ST_OK)
        return st;
    rk_counter_set(out->headers, "attempts", 0);
    if (o->mode == RESTAMP_REISSUE || o->strip_fault)
        rk_headers_strip(out->headers, stamp_names);
    if (o->mode == RESTAMP_REISSUE) {
        rk_prop_set(&out->props, PROP_message_id, out->id.data, out->id.len);
        rk_header_put_text(out->headers, "causation-id", out->old_id.data, out->old_id.len);
        out->headers_present = true;
    }
    static const struct rk_field map[] = {
        {EF_ID, NULL, PROP_message_id},
        {EF_TYPE, NULL, PROP_type},
        {EF_CORRELATION, NULL, PROP_correlation_id},
        {EF_CAUSATION, "causation-id", -1},
        {EF_ATTEMPT, "attempts", -1},
    };
    return rk_apply_changes(d, o, map, sizeof map / sizeof *map, out, err);
}

const struct dialect_ops dialect_wolverine = {
    .name = "wolverine",
    .title = "Wolverine",
    .summary = "Wolverine dead letter (wolverine-protocol-version; exception-* or x-death)",
    .section = "Wolverine",
    .recognise = recognise,
    .ceiling = 95,
    .decode = decode,
    .release = release,
    .fields = fields,
    .restamp = restamp,
    .replay_rule = "to the original queue (original-destination, else x-death) via the default "
                   "exchange: message_id and headers kept, attempts reset to 0, as Wolverine's "
                   "database replay; a re-issue gets a new message_id and causation-id = the "
                   "old id",
};
