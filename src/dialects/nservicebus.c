/*
 * nservicebus: NServiceBus on RabbitMQ — the fault copies its endpoints put in `error` (and
 * ServiceControl's forwarded copies in `error.log`), read as ServiceControl reads them, and
 * replayed as ServicePulse's retry writes them. docs/dialects.md has every rule with the
 * framework file it comes from.
 *
 * Recognition: a fault header (NServiceBus.FailedQ or NServiceBus.ExceptionInfo.ExceptionType)
 * with NServiceBus.MessageId 95, without it 90; NServiceBus.MessageId alone 70; any other
 * NServiceBus.* header 60 (names are compared exactly: NServiceBus compares ordinally).
 *
 * Every NServiceBus header is a string on the wire (the transport writes Dictionary<string,
 * string>); a header of another kind is not read (a warning says so).
 *
 *   id           NServiceBus.MessageId, else message_id, else a name-based UUID
 *   type         the first of NServiceBus.EnclosedMessageTypes without its assembly qualifier,
 *                else the type property, else "message"
 *   correlation  NServiceBus.ConversationId (the whole chain), else NServiceBus.CorrelationId,
 *                else correlation_id, else the id
 *   causation    NServiceBus.RelatedTo
 *   attempt      not recorded by NServiceBus: the broker's deaths, else 1 (defaulted)
 *   first seen   NServiceBus.TimeSent (yyyy-MM-dd HH:mm:ss:ffffff Z)
 *   origin       NServiceBus.OriginatingEndpoint@NServiceBus.OriginatingMachine
 *   error        NServiceBus.ExceptionInfo.ExceptionType / .Message / .StackTrace (e.ToString())
 *   failed at    NServiceBus.TimeOfFailure
 *   source       NServiceBus.FailedQ before '@' (the default exchange reaches the queue under
 *                the conventional and the direct topology)
 *   accepted     the transport needs a message_id property (else it moves it as poison)
 */
#include "nservicebus.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "dialect.h"
#include "dotnet_text.h"
#include "hval_json.h"
#include "md5.h"
#include "restamp_kit.h"
#include "util.h"

#define P "NServiceBus."
#define H_ID P "MessageId"
#define H_FAILEDQ P "FailedQ"
#define H_EXC_TYPE P "ExceptionInfo.ExceptionType"
#define H_EXC_MSG P "ExceptionInfo.Message"
#define H_EXC_STACK P "ExceptionInfo.StackTrace"
#define H_EXC_DATA P "ExceptionInfo.Data."
#define H_TYPES P "EnclosedMessageTypes"
#define H_CONV P "ConversationId"
#define H_CORR P "CorrelationId"
#define H_RELATED P "RelatedTo"
#define H_SENT P "TimeSent"
#define H_FAILED_AT P "TimeOfFailure"
#define H_RETRIES_TS P "Retries.Timestamp"
#define H_PROC_EP P "ProcessingEndpoint"
#define H_REPLY_TO P "ReplyToAddress"
#define H_ORIG_EP P "OriginatingEndpoint"
#define H_ORIG_MACHINE P "OriginatingMachine"
#define H_SC_ID "ServiceControl.Retry.UniqueMessageId"
#define H_SC_ACK "ServiceControl.Retry.AcknowledgementQueue"
#define H_SC_EDIT_OF "ServiceControl.EditOf"

static const struct bytes *text(const struct message *m, const char *name)
{
    return dialect_header_text(m, name);
}

static bool has_prefix(const struct bytes *k, const char *p)
{
    size_t n = strlen(p);
    return k->len >= n && memcmp(k->data, p, n) == 0;
}

/* ---- helpers (nservicebus.h) ----------------------------------------------------------- */

static size_t trim_left(const unsigned char *s, size_t from, size_t to)
{
    while (from < to && s[from] == ' ')
        from++;
    return from;
}

static size_t trim_right(const unsigned char *s, size_t from, size_t to)
{
    while (to > from && s[to - 1] == ' ')
        to--;
    return to;
}

void nsb_first_type(const void *sv, size_t n, struct nsb_type_name *out)
{
    const unsigned char *s = sv;
    memset(out, 0, sizeof *out);
    size_t end = 0, comma = SIZE_MAX;
    int depth = 0;
    for (; end < n && s[end] != ';'; end++) {
        if (s[end] == '[')
            depth++;
        else if (s[end] == ']' && depth > 0)
            depth--;
        else if (s[end] == ',' && depth == 0 && comma == SIZE_MAX)
            comma = end;
    }
    size_t name_end = comma == SIZE_MAX ? end : comma;
    size_t a = trim_left(s, 0, name_end), b = trim_right(s, a, name_end);
    out->name_off = a;
    out->name_len = b - a;
    if (comma != SIZE_MAX) {
        a = trim_left(s, comma + 1, end);
        b = trim_right(s, a, end);
        out->qual_off = a;
        out->qual_len = b - a;
    }
}

void nsb_deterministic_guid(const void *a, size_t an, const void *b, size_t bn, char out[37])
{
    unsigned char h[16];
    struct md5 s;
    md5_init(&s);
    md5_update(&s, an ? a : "", an);
    md5_update(&s, bn ? b : "", bn);
    md5_final(&s, h);
    /* new Guid(byte[]): Data1 (4 bytes), Data2, Data3 (2 each) little-endian, then 8 bytes */
    static const int order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
    static const char hex[] = "0123456789abcdef";
    size_t w = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            out[w++] = '-';
        out[w++] = hex[h[order[i]] >> 4];
        out[w++] = hex[h[order[i]] & 15];
    }
    out[w] = '\0';
}

static size_t before_at(const struct bytes *b)
{
    const void *at = memchr(b->data, '@', b->len);
    return at ? (size_t)((const unsigned char *)at - b->data) : b->len;
}

bool nsb_servicecontrol_id(const struct message *m, const struct bytes *id, struct bytes *out,
                           bool *from_header)
{
    const struct bytes *have = text(m, H_SC_ID);
    *out = (struct bytes){0, NULL};
    if (have) {
        *out = bytes_copy(have);
        *from_header = true;
        return true;
    }
    *from_header = false;
    const struct bytes *mid = text(m, H_ID);
    if (!mid)
        mid = id;
    const struct bytes *ep = text(m, H_PROC_EP);
    size_t epn = ep ? ep->len : 0;
    if (!ep) {
        ep = text(m, H_FAILEDQ);
        if (!ep)
            ep = text(m, H_REPLY_TO);
        if (!ep)
            return false;
        epn = before_at(ep);
    }
    char g[37];
    nsb_deterministic_guid(mid ? mid->data : NULL, mid ? mid->len : 0, ep->data, epn, g);
    *out = bytes_from_cstr(g);
    return true;
}

/* ---- recognise ------------------------------------------------------------------------- */

static int recognise(const struct dialect_input *in, struct dialect_match *mt)
{
    const struct message *m = in->msg;
    int c = dialect_recognise_fault_copy(m, mt, H_ID, H_FAILEDQ, H_EXC_TYPE);
    if (c)
        return c;
    const struct htable *h = m->headers;
    for (size_t i = 0; h && i < h->n; i++)
        if (has_prefix(&h->e[i].key, P)) {
            dialect_match_by(mt, "NServiceBus.*");
            return 60;
        }
    return 0;
}

/* ---- decode ---------------------------------------------------------------------------- */

struct nsb_priv {
    bool fault_copy;
    bool have_sc_id, sc_id_from_header;
    struct bytes sc_id;
    bool has_retries_ts;
    int64_t retries_ts_ms;
    unsigned type_from;     /* 0 EnclosedMessageTypes, 1 type property, 2 default */
    unsigned id_from;       /* 0 header, 1 message_id, 2 derived */
    struct strbuf warnings; /* one per line */
};

static const char *const STRING_HEADERS[] = {
    H_ID,      H_FAILEDQ,  H_EXC_TYPE, H_EXC_MSG,      H_EXC_STACK, H_TYPES,
    H_CONV,    H_CORR,     H_RELATED,  H_SENT,         H_FAILED_AT, H_RETRIES_TS,
    H_PROC_EP, H_REPLY_TO, H_ORIG_EP,  H_ORIG_MACHINE, H_SC_ID,     NULL};

static void warn(struct nsb_priv *p, const char *name, const char *what)
{
    dialect_warn(&p->warnings, name, what);
}

static bool read_time(const struct message *m, const char *name, struct nsb_priv *p, int64_t *ms)
{
    const struct bytes *b = text(m, name);
    if (!b)
        return false;
    if (nsb_wire_time_parse(b->data, b->len, ms))
        return true;
    warn(p, name, "is not a time in NServiceBus's format (yyyy-MM-dd HH:mm:ss:ffffff Z): not read");
    return false;
}

static void decode(const struct dialect_input *x, struct decoded *out)
{
    const struct message *m = x->msg;
    struct nsb_priv *p = xcalloc(1, sizeof *p);
    sb_init(&p->warnings);
    out->priv = p;
    dialect_warn_not_strings(m, STRING_HEADERS, &p->warnings);
    p->fault_copy = dialect_has_header(m, H_FAILEDQ) || dialect_has_header(m, H_EXC_TYPE);

    struct envelope_init in;
    memset(&in, 0, sizeof in);
    struct bytes derived;
    p->id_from = dialect_id_of(m, H_ID, &in.id, &derived, &in.defaulted);
    const struct bytes *b;

    struct nsb_type_name tn = {0};
    b = text(m, H_TYPES);
    if (b)
        nsb_first_type(b->data, b->len, &tn);
    struct bytes own = {0, NULL};
    if (b && tn.name_len)
        own = (struct bytes){tn.name_len, b->data + tn.name_off};
    p->type_from = (unsigned)dialect_type_of(m, own, &in);

    const struct bytes *corr = text(m, H_CONV);
    if (!corr || !corr->len)
        corr = text(m, H_CORR);
    if (!corr || !corr->len)
        corr = props_string(&m->props, PROP_correlation_id);
    if (corr && corr->len)
        in.correlation_id = *corr;
    else
        in.defaulted |= ED_CORRELATION;
    b = text(m, H_RELATED);
    if (b)
        in.causation_id = *b;
    in.version = 1;
    in.defaulted |= ED_VERSION;
    dialect_attempt_from_deaths(&in, x->death);
    if (!read_time(m, H_SENT, p, &in.first_seen_ms)) {
        in.defaulted |= ED_FIRST_SEEN;
        in.first_seen_ms = dialect_first_seen_by_broker(x);
    }
    const struct bytes *oe = text(m, H_ORIG_EP), *om = text(m, H_ORIG_MACHINE);
    struct strbuf origin;
    sb_init(&origin);
    if (oe && oe->len) {
        sb_add(&origin, oe->data, oe->len);
        if (om && om->len) {
            sb_addc(&origin, '@');
            sb_add(&origin, om->data, om->len);
        }
        in.origin = (struct bytes){origin.len, (unsigned char *)origin.buf};
    }
    in.headers = m->headers;
    dialect_envelope(out, &in);
    sb_free(&origin);
    bytes_free(&derived);

    const struct bytes *et = text(m, H_EXC_TYPE), *em = text(m, H_EXC_MSG),
                       *es = text(m, H_EXC_STACK);
    dialect_set_error(out, et ? et->data : NULL, et ? et->len : 0, em ? em->data : NULL,
                      em ? em->len : 0, es ? es->data : NULL, es ? es->len : 0);
    int64_t t;
    if (read_time(m, H_FAILED_AT, p, &t))
        out->failed_at_ms = t;
    if (read_time(m, H_RETRIES_TS, p, &p->retries_ts_ms))
        p->has_retries_ts = true;
    b = text(m, H_FAILEDQ);
    if (b && before_at(b))
        dialect_source_queue(out, "NServiceBus.FailedQ", b->data, before_at(b));
    if (out->source.how)
        out->source.how_text = "the queue it failed in (NServiceBus.FailedQ before '@')";
    else if (b)
        warn(p, H_FAILEDQ, "names no queue (nothing before '@'): no source");
    p->have_sc_id = nsb_servicecontrol_id(m, &out->env->id, &p->sc_id, &p->sc_id_from_header);

    const struct bytes *mid = props_string(&m->props, PROP_message_id);
    bool blank = true; /* string.IsNullOrWhiteSpace */
    for (size_t i = 0; mid && i < mid->len && blank; i++)
        blank = mid->data[i] == ' ' || (mid->data[i] >= '\t' && mid->data[i] <= '\r');
    if (blank) {
        out->accepted = false;
        out->reject_reason = "missing_message_id";
        out->accept_note = "the NServiceBus RabbitMQ transport needs a message_id property: "
                           "without one it moves the message to the error queue as poison";
    } else {
        out->accept_note = "the NServiceBus RabbitMQ transport takes any message with a "
                           "message_id property";
    }
    static const char *const from[NF_COUNT] = {
        [NF_ID] = "the logical message id (NServiceBus.MessageId)",
        [NF_TYPE] =
            "the first enclosed type without its assembly (NServiceBus.EnclosedMessageTypes)",
        [NF_VERSION] = "NServiceBus has no schema version",
        [NF_CORRELATION] = "the whole conversation (NServiceBus.ConversationId)",
        [NF_CAUSATION] = "the message being handled when this one was sent (NServiceBus.RelatedTo)",
        [NF_ATTEMPT] = "NServiceBus does not record attempts on the error copy",
        [NF_FIRST_SEEN] = "when it was sent (NServiceBus.TimeSent)",
        [NF_ORIGIN] = "the sending endpoint@machine (NServiceBus.OriginatingEndpoint/Machine)",
        [NF_ERROR] = "the exception (NServiceBus.ExceptionInfo.*)",
        [NF_FAILED_AT] = "when processing failed (NServiceBus.TimeOfFailure)",
    };
    memcpy(out->read_from, from, sizeof from);
}

static void release(struct decoded *d)
{
    struct nsb_priv *p = d->priv;
    if (!p)
        return;
    bytes_free(&p->sc_id);
    sb_free(&p->warnings);
    free(p);
    d->priv = NULL;
}

/* ---- fields ---------------------------------------------------------------------------- */

/* Labelled with the header's name less "NServiceBus." (the section says whose they are). */
static void add_text(struct dfields *f, const struct message *m, const char *key, const char *name,
                     const char *meaning)
{
    const struct bytes *b = text(m, name);
    const char *label = strncmp(name, P, strlen(P)) == 0 ? name + strlen(P) : name;
    if (b)
        dfields_add(f, key, label, b->data, b->len, meaning);
    else
        dfields_adds(f, key, label, NULL, meaning);
}

static json_t *bytes_json(const unsigned char *s, size_t n)
{
    return bytes_to_json(n ? (const void *)s : "", n);
}

static void add_types(struct dfields *f, const struct message *m)
{
    const struct bytes *b = text(m, H_TYPES);
    json_t *arr = json_array();
    struct nsb_type_name tn = {0};
    if (b) {
        size_t i = 0;
        while (i <= b->len) {
            size_t e = i;
            while (e < b->len && b->data[e] != ';')
                e++;
            size_t a = trim_left(b->data, i, e), z = trim_right(b->data, a, e);
            if (z > a)
                json_array_append_new(arr, bytes_json(b->data + a, z - a));
            i = e + 1;
        }
        nsb_first_type(b->data, b->len, &tn);
    }
    struct dfield *d = b ? dfields_add(f, "enclosed_types", "EnclosedMessageTypes", b->data, b->len,
                                       "every type the message is, most derived first")
                         : dfields_adds(f, "enclosed_types", "EnclosedMessageTypes", NULL,
                                        "every type the message is, most derived first");
    json_decref(d->json);
    d->json = arr;
    if (tn.qual_len)
        dfields_add(f, "type_assembly", "assembly", b->data + tn.qual_off, tn.qual_len,
                    "the first type's assembly qualifier (left out of the neutral type)");
    else
        dfields_adds(f, "type_assembly", "assembly", NULL, "the first type's assembly qualifier");
}

static bool data_entry(const struct hentry *e)
{
    return has_prefix(&e->key, H_EXC_DATA) && (e->val.kind == HV_STRING || e->val.kind == HV_BYTES);
}

static void add_data(struct dfields *f, const struct message *m)
{
    json_t *o = json_object();
    const struct htable *h = m->headers;
    size_t plen = strlen(H_EXC_DATA);
    for (size_t i = 0; h && i < h->n; i++) {
        const struct hentry *e = &h->e[i];
        if (!data_entry(e))
            continue;
        char *k = xstrndup((const char *)e->key.data + plen, e->key.len - plen);
        if (utf8_valid(k, strlen(k)))
            json_object_set_new(o, k, bytes_json(e->val.v.s.data, e->val.v.s.len));
        free(k);
    }
    struct dfield *d =
        dfields_add_int(f, "exception_data", "ExceptionInfo.Data", (int64_t)json_object_size(o),
                        "Exception.Data entries, below");
    json_decref(d->json);
    d->json = o;
    for (size_t i = 0; h && i < h->n; i++) {
        const struct hentry *e = &h->e[i];
        if (!data_entry(e))
            continue;
        struct dfield *x = dfields_add(f, NULL, "", e->val.v.s.data, e->val.v.s.len, NULL);
        free(x->label);
        x->label = xstrndup((const char *)e->key.data + plen, e->key.len - plen);
        x->indent = 1;
    }
}

static void fields(const struct decoded *d, int64_t now_ms, struct dfields *f)
{
    (void)now_ms;
    const struct message *m = d->msg;
    const struct nsb_priv *p = d->priv;
    if (!p)
        return;
    dialect_fault_copy_head(f, d, p->fault_copy, "NServiceBus",
                            "Exception.ToString() (NServiceBus.ExceptionInfo.StackTrace)");
    dfields_add_yes_no(f, "fault_copy", "fault copy", p->fault_copy,
                       "whether the endpoint wrote its failure headers (FailedQ, ExceptionInfo.*)");
    add_text(f, m, "conversation_id", H_CONV, "the whole conversation (the neutral correlation)");
    add_text(f, m, "correlation_id", H_CORR, "request/reply correlation (also correlation_id)");
    add_text(f, m, "previous_conversation_id", P "PreviousConversationId",
             "set when a handler started a new conversation");
    add_types(f, m);
    add_text(f, m, "intent", P "MessageIntent", "Send, Publish, Reply, Subscribe…");
    add_text(f, m, "content_type", P "ContentType", "the serializer's content type");
    add_text(f, m, "nservicebus_version", P "Version", "the sender's NServiceBus version");
    add_text(f, m, "failed_q", H_FAILEDQ, "the queue it failed in (old transports add @machine)");
    const struct bytes *fq = text(m, H_FAILEDQ);
    size_t at = fq ? before_at(fq) : 0;
    if (fq && at < fq->len)
        dfields_add(f, "failed_machine", "machine", fq->data + at + 1, fq->len - at - 1,
                    "the machine after '@' in FailedQ (transports up to 3.3)");
    else
        dfields_adds(f, "failed_machine", "machine", NULL, "the machine after '@' in FailedQ");
    add_text(f, m, "processing_endpoint", H_PROC_EP, "the endpoint whose handler failed");
    add_text(f, m, "processing_machine", P "ProcessingMachine", "where it failed");
    add_text(f, m, "host_id", "$.diagnostics.hostid", "the failing host's id");
    add_text(f, m, "host_display_name", "$.diagnostics.hostdisplayname", "the failing host");
    add_text(f, m, "originating_endpoint", H_ORIG_EP, "the sending endpoint");
    add_text(f, m, "originating_machine", H_ORIG_MACHINE, "the sending machine");
    add_text(f, m, "reply_to_address", H_REPLY_TO, "where replies go (also reply_to)");
    add_text(f, m, "inner_exception_type", P "ExceptionInfo.InnerExceptionType",
             "the inner exception's type, when there was one");
    add_text(f, m, "exception_source", P "ExceptionInfo.Source", "Exception.Source");
    add_text(f, m, "help_link", P "ExceptionInfo.HelpLink", "Exception.HelpLink");
    add_data(f, m);
    if (p->has_retries_ts)
        dfields_add_time(f, "delayed_retry_first_ms", "Retries.Timestamp", p->retries_ts_ms,
                         "the first delayed retry: delayed retries happened before it failed");
    else
        dfields_adds(f, "delayed_retry_first_ms", "Retries.Timestamp", NULL,
                     "the first delayed retry (absent: none recorded)");
    if (p->have_sc_id) {
        struct dfield *x =
            dfields_add(f, "servicecontrol_id", "ServicePulse id", p->sc_id.data, p->sc_id.len,
                        p->sc_id_from_header ? "ServiceControl's id for this failure "
                                               "(ServiceControl.Retry.UniqueMessageId)"
                                             : "ServiceControl's id for this failure "
                                               "(MD5 of MessageId + processing endpoint)");
        x->style = DF_ACCENT;
    } else {
        dfields_adds(f, "servicecontrol_id", "ServicePulse id", NULL,
                     "no processing endpoint to derive ServiceControl's id from");
    }
    dfields_add_yes_no(
        f, "retried_before", "retried before", dialect_has_header(m, H_SC_ID),
        "ServicePulse retried it once already (ServiceControl.Retry.UniqueMessageId)");
    add_text(f, m, "edit_of", H_SC_EDIT_OF, "an edited retry of this ServicePulse failure");
    size_t ql = d->msg->queue.len;
    dfields_add_yes_no(f, "forwarded_copy", "error.log copy",
                       ql >= 4 && memcmp(d->msg->queue.data + ql - 4, ".log", 4) == 0,
                       "ServiceControl's forwarded copy (the queue's name ends in .log)");
    add_text(f, m, "time_to_be_received", P "TimeToBeReceived", "the message's time to live");
    add_text(f, m, "traceparent", "traceparent", "W3C trace context");
    json_t *w = json_array();
    size_t nw = 0;
    for (const char *q = p->warnings.buf; q && *q; nw++) {
        const char *nl = strchr(q, '\n');
        size_t n = nl ? (size_t)(nl - q) : strlen(q);
        json_array_append_new(w, json_stringn(q, n));
        q = nl ? nl + 1 : q + n;
    }
    struct dfield *x =
        dfields_add_int(f, "warnings", "warnings", (int64_t)nw, "what could not be read (below)");
    json_decref(x->json);
    x->json = w;
    for (const char *q = p->warnings.buf; q && *q;) {
        const char *nl = strchr(q, '\n');
        size_t n = nl ? (size_t)(nl - q) : strlen(q);
        struct dfield *y = dfields_add(f, NULL, NULL, q, n, NULL);
        y->style = DF_WARN;
        y->indent = 1;
        q = nl ? nl + 1 : q + n;
    }
    unsigned df = d->env->defaulted;
    if (df & ED_ID)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         "id: a name-based UUID (no NServiceBus.MessageId, no message_id)");
    else if (p->id_from == 1)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         "id: the message_id property (no "
                         "NServiceBus.MessageId)");
    if (p->type_from)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         p->type_from == 1 ? "type: the type property (no EnclosedMessageTypes)"
                                           : "type: \"message\" (no EnclosedMessageTypes, no "
                                             "type property)");
    if (df & ED_ATTEMPT)
        dfields_add_line(f, DF_DEFAULTS, DF_DIM,
                         "attempt: 1 (NServiceBus does not record attempts on the error copy)");
    if (df & ED_FIRST_SEEN)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         "first seen: when it was read (no readable NServiceBus.TimeSent)");
}

/* ---- restamp --------------------------------------------------------------------------- */

/* What ServiceControl's HeaderFilter.RemoveErrorMessageHeaders removes: every header whose
 * name starts with one of these (ordinal). */
static const char *const FAULT_HEADERS[] = {
    "NServiceBus.Retries*",        "NServiceBus.FailedQ*",   "NServiceBus.TimeOfFailure*",
    "NServiceBus.ExceptionInfo.*", "ServiceControl.EditOf*", NULL};

static const struct rk_field CHANGES[] = {
    {EF_ID, H_ID, PROP_message_id},
    {EF_TYPE, H_TYPES, PROP_type},
    {EF_CORRELATION, H_CONV, -1},
    {EF_CAUSATION, H_RELATED, -1},
};

static enum status restamp(const struct decoded *d, const struct restamp_opts *o,
                           const struct bytes *dlq, struct outgoing *out, struct error *err)
{
    (void)dlq;
    const struct nsb_priv *p = d->priv;
    enum status st = rk_target_source(
        d, out, "it has no NServiceBus.FailedQ header naming the queue it failed in", err);
    if (st != ST_OK)
        return st;
    rk_headers_strip(out->headers, FAULT_HEADERS);
    /* ServiceControl's ids belong to failures it ingested: fault copies only */
    bool sc = p && p->have_sc_id && p->fault_copy;
    if (o->mode == RESTAMP_REPLAY) {
        /* ServicePulse's retry: the logical id kept; the unique id ServiceControl knows the
         * failure by added when it is not there (an existing one stays where it is). */
        if (sc && !htable_get(out->headers, H_SC_ID))
            rk_header_put_text(out->headers, H_SC_ID, p->sc_id.data, p->sc_id.len);
    } else {
        /* ServicePulse's edit & retry: a new message id, EditOf = the failure's id. */
        rk_header_put_text(out->headers, H_ID, out->id.data, out->id.len);
        rk_prop_set(&out->props, PROP_message_id, out->id.data, out->id.len);
        if (sc)
            rk_header_put_text(out->headers, H_SC_EDIT_OF, p->sc_id.data, p->sc_id.len);
    }
    if (o->ack_queue && o->ack_queue_name && *o->ack_queue_name)
        rk_header_put_text(out->headers, H_SC_ACK, o->ack_queue_name, strlen(o->ack_queue_name));
    return rk_apply_changes(d, o, CHANGES, sizeof CHANGES / sizeof *CHANGES, out, err);
}

const struct dialect_ops dialect_nservicebus = {
    .name = "nservicebus",
    .title = "NServiceBus",
    .summary = "NServiceBus fault copy (NServiceBus.* headers)",
    .section = "NServiceBus headers",
    .recognise = recognise,
    .ceiling = 95,
    .decode = decode,
    .release = release,
    .fields = fields,
    .restamp = restamp,
    .replay_rule = "as ServicePulse's retry: ExceptionInfo.*, FailedQ, TimeOfFailure, Retries*, "
                   "EditOf removed, ServiceControl.Retry.UniqueMessageId added, id kept; to "
                   "FailedQ (before '@') through the default exchange",
};
