/*
 * rebus: Rebus on RabbitMQ (Rebus.RabbitMq) — the copies Rebus's DeadletterQueueErrorHandler
 * puts in `error`, read from their rbs2-* headers, and replayed as Rebus's own return tool
 * did (every header kept, to the source queue). docs/dialects.md has every rule with the
 * framework file it comes from.
 *
 * Recognition: rbs2-source-queue or rbs2-error-details with rbs2-msg-id 95, without it 90;
 * rbs2-msg-id alone 70; any other rbs2-* header 60 (exact, lower-case names).
 *
 *   id           rbs2-msg-id, else message_id, else a name-based UUID
 *   type         rbs2-msg-type without its assembly ("Ns.Type, Assembly"), else type
 *   correlation  rbs2-corr-id, else correlation_id, else the id
 *   causation    rbs2-in-reply-to (replies only: Rebus carries no other cause)
 *   attempt      N of "N unhandled exceptions", and at least rbs2-delivery-count + 1 (a quorum
 *                queue's count of earlier deliveries); else the broker's deaths, else 1
 *   first seen   rbs2-senttime (DateTimeOffset "O": local time and its offset)
 *   origin       rbs2-sender-address (the sender's input queue)
 *   error        the last failure in rbs2-error-details: its exception's type, message and
 *                ToString() (rebus_details.h)
 *   failed at    the newest failure time in rbs2-error-details
 *   source       rbs2-source-queue (default exchange, routing key = the queue; Rebus.RabbitMq
 *                also binds it to RebusDirect under the same key)
 *   accepted     Rebus's serializers need rbs2-content-type
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "dialect.h"
#include "dotnet_text.h"
#include "hval_json.h"
#include "rebus_details.h"
#include "restamp_kit.h"
#include "util.h"

#define H_ID "rbs2-msg-id"
#define H_TYPE "rbs2-msg-type"
#define H_CORR "rbs2-corr-id"
#define H_SEQ "rbs2-corr-seq"
#define H_REPLY "rbs2-in-reply-to"
#define H_SENT "rbs2-senttime"
#define H_SENDER "rbs2-sender-address"
#define H_RETURN "rbs2-return-address"
#define H_CTYPE "rbs2-content-type"
#define H_INTENT "rbs2-intent"
#define H_DETAILS "rbs2-error-details"
#define H_SOURCE "rbs2-source-queue"
#define H_DCOUNT "rbs2-delivery-count"
#define H_DEFER "rbs2-defer-count"

static const struct bytes *text(const struct message *m, const char *name)
{
    return dialect_header_text(m, name);
}

static int recognise(const struct dialect_input *in, struct dialect_match *mt)
{
    const struct message *m = in->msg;
    int c = dialect_recognise_fault_copy(m, mt, H_ID, H_SOURCE, H_DETAILS);
    if (c)
        return c;
    const struct htable *h = m->headers;
    for (size_t i = 0; h && i < h->n; i++)
        if (h->e[i].key.len > 5 && memcmp(h->e[i].key.data, "rbs2-", 5) == 0) {
            dialect_match_by(mt, "rbs2-*");
            return 60;
        }
    return 0;
}

struct rebus_priv {
    bool fault_copy;
    /* what rbs2-error-details said (fields parses it again for the failures: a decode kept
     * for a million messages keeps no list) */
    enum rebus_details_form form;
    bool has_count, has_latest;
    int64_t count;
    size_t seen;
    bool has_offset;
    int offset_min;
    bool has_dcount;
    int64_t dcount;
    unsigned type_from;    /* 0 rbs2-msg-type, 1 type property, 2 default */
    unsigned id_from;      /* 0 rbs2-msg-id, 1 message_id, 2 derived */
    unsigned attempt_from; /* 0 details count, 1 delivery count, 2 deaths, 3 default */
    struct strbuf warnings;
};

static const char *const STRING_HEADERS[] = {H_ID,     H_TYPE,   H_CORR,  H_REPLY,
                                             H_SENT,   H_SENDER, H_CTYPE, H_DETAILS,
                                             H_SOURCE, H_DCOUNT, H_SEQ,   NULL};

static void warn(struct rebus_priv *p, const char *name, const char *what)
{
    dialect_warn(&p->warnings, name, what);
}

/* A count Rebus wrote with int.ToString(): 0 .. INT32_MAX. */
static bool small_count(const struct message *m, const char *name, int64_t *v)
{
    return dialect_header_int(m, name, v) && *v >= 0 && *v <= INT32_MAX;
}

static void decode_error(const struct message *m, struct rebus_priv *p, struct decoded *out)
{
    const struct bytes *b = text(m, H_DETAILS);
    if (!b)
        return;
    struct rebus_details *det = xmalloc(sizeof *det);
    rebus_details_parse(b->data, b->len, det);
    p->form = det->form;
    p->has_count = det->has_count;
    p->count = det->count;
    p->seen = det->seen;
    p->has_latest = det->has_latest;
    const struct rebus_failure *f = rebus_details_last(det);
    if (!f) {
        free(det);
        return;
    }
    const unsigned char *s = b->data;
    if (f->has_exception) {
        dialect_set_error(out, s + f->exc.type_off, f->exc.type_len, s + f->exc.msg_off,
                          f->exc.msg_len, s + f->details_off, f->details_len);
    } else if (f->details_len) {
        dialect_set_error(out, NULL, 0, s + f->details_off, f->details_len, NULL, 0);
        warn(p, H_DETAILS, "names no exception type: the text is the message");
    }
    if (det->has_latest)
        out->failed_at_ms = det->latest_ms;
    if (det->form == RD_AGGREGATE && !det->has_latest)
        warn(p, H_DETAILS, "has no failure time that reads as a date");
    free(det);
}

static void decode(const struct dialect_input *x, struct decoded *out)
{
    const struct message *m = x->msg;
    struct rebus_priv *p = xcalloc(1, sizeof *p);
    sb_init(&p->warnings);
    out->priv = p;
    dialect_warn_not_strings(m, STRING_HEADERS, &p->warnings);
    p->fault_copy = dialect_has_header(m, H_SOURCE) || dialect_has_header(m, H_DETAILS);

    struct envelope_init in;
    memset(&in, 0, sizeof in);
    struct bytes derived;
    p->id_from = dialect_id_of(m, H_ID, &in.id, &derived, &in.defaulted);
    const struct bytes *b;
    b = text(m, H_TYPE);
    struct bytes own = {0, NULL};
    if (b) {
        const void *comma = memchr(b->data, ',', b->len);
        size_t tlen = comma ? (size_t)((const unsigned char *)comma - b->data) : b->len;
        while (tlen && b->data[tlen - 1] == ' ')
            tlen--;
        own = (struct bytes){tlen, b->data};
    }
    p->type_from = (unsigned)dialect_type_of(m, own, &in);
    const struct bytes *corr = text(m, H_CORR);
    if (!corr || !corr->len)
        corr = props_string(&m->props, PROP_correlation_id);
    if (corr && corr->len)
        in.correlation_id = *corr;
    else
        in.defaulted |= ED_CORRELATION;
    b = text(m, H_REPLY);
    if (b)
        in.causation_id = *b;
    in.version = 1;
    in.defaulted |= ED_VERSION;

    decode_error(m, p, out);
    int64_t dc;
    if (small_count(m, H_DCOUNT, &dc)) {
        p->has_dcount = true;
        p->dcount = dc;
    } else if (dialect_has_header(m, H_DCOUNT)) {
        warn(p, H_DCOUNT, "is not a count: not read");
    }
    int64_t attempt = 0;
    if (p->has_count && p->count > 0 && p->count <= INT32_MAX)
        attempt = p->count;
    else if (p->form == RD_AGGREGATE && p->seen)
        attempt = (int64_t)p->seen;
    if (p->has_dcount && p->dcount + 1 > attempt) {
        attempt = p->dcount + 1;
        p->attempt_from = 1;
    }
    if (!attempt && x->death->total > 0) {
        attempt = x->death->total;
        p->attempt_from = 2;
    }
    if (!attempt) {
        attempt = 1;
        in.defaulted |= ED_ATTEMPT;
        p->attempt_from = 3;
    }
    in.attempt = attempt;

    b = text(m, H_SENT);
    if (b && dotnet_roundtrip_parse(b->data, b->len, &in.first_seen_ms, &p->offset_min)) {
        p->has_offset = true;
    } else {
        if (b)
            warn(p, H_SENT, "is not a round-trip (\"O\") date and time: not read");
        in.defaulted |= ED_FIRST_SEEN;
        dialect_first_seen_fallback(x, &in.first_seen_ms);
    }
    b = text(m, H_SENDER);
    if (b)
        in.origin = *b;
    in.headers = m->headers;
    dialect_envelope(out, &in);
    bytes_free(&derived);

    b = text(m, H_SOURCE);
    if (b && b->len) {
        dialect_source_queue(out, "rbs2-source-queue", b->data, b->len);
        out->source.how_text = "the input queue it failed in (rbs2-source-queue)";
    }
    if (!dialect_has_header(m, H_CTYPE)) {
        out->accepted = false;
        out->reject_reason = "missing_content_type";
        out->accept_note = "Rebus's serializers refuse a message without rbs2-content-type "
                           "(FormatException: unknown content type)";
    } else {
        out->accept_note = "a Rebus endpoint reads it when its serializer knows the content type";
    }
    static const char *const from[NF_COUNT] = {
        [NF_ID] = "the message id (rbs2-msg-id)",
        [NF_TYPE] = "the message type without its assembly (rbs2-msg-type)",
        [NF_VERSION] = "Rebus has no schema version",
        [NF_CORRELATION] = "the whole chain (rbs2-corr-id)",
        [NF_CAUSATION] = "the request this replies to (rbs2-in-reply-to)",
        [NF_ATTEMPT] = "failures counted (rbs2-error-details) or deliveries (delivery-count+1)",
        [NF_FIRST_SEEN] = "when it was sent (rbs2-senttime)",
        [NF_ORIGIN] = "the sender's input queue (rbs2-sender-address)",
        [NF_ERROR] = "the last failure in rbs2-error-details",
        [NF_FAILED_AT] = "the newest failure time in rbs2-error-details",
    };
    memcpy(out->read_from, from, sizeof from);
}

static void release(struct decoded *d)
{
    struct rebus_priv *p = d->priv;
    if (!p)
        return;
    sb_free(&p->warnings);
    free(p);
    d->priv = NULL;
}

/* ---- fields ---------------------------------------------------------------------------- */

static json_t *bj(const void *s, size_t n)
{
    return bytes_to_json(n ? s : "", n);
}

static void add_text(struct dfields *f, const struct message *m, const char *key, const char *name,
                     const char *meaning)
{
    const struct bytes *b = text(m, name);
    if (b)
        dfields_add(f, key, name, b->data, b->len, meaning);
    else
        dfields_adds(f, key, name, NULL, meaning);
}

static const char *form_name(enum rebus_details_form k)
{
    static const char *const names[] = {"empty",  "aggregate", "message",
                                        "caught", "exception", "text"};
    return names[k];
}

static void add_failures(struct dfields *f, const struct message *m, const struct rebus_priv *p)
{
    const struct bytes *b = text(m, H_DETAILS);
    struct rebus_details *det = xcalloc(1, sizeof *det);
    if (b)
        rebus_details_parse(b->data, b->len, det);
    json_t *arr = json_array();
    for (size_t i = 0; b && i < det->n; i++) {
        const struct rebus_failure *x = &det->f[i];
        const unsigned char *s = b->data;
        json_t *o = json_object();
        json_object_set_new(o, "at_ms", x->has_time ? json_integer(x->time_ms) : json_null());
        json_object_set_new(o, "at", x->has_time ? bj(s + x->time_off, x->time_len) : json_null());
        json_object_set_new(
            o, "type", x->has_exception ? bj(s + x->exc.type_off, x->exc.type_len) : json_null());
        json_object_set_new(o, "message",
                            x->has_exception ? bj(s + x->exc.msg_off, x->exc.msg_len)
                                             : bj(s + x->details_off, x->details_len));
        json_array_append_new(arr, o);
    }
    struct dfield *d =
        dfields_add_int(f, "failures", "failures", (int64_t)p->seen,
                        "the failures rbs2-error-details lists (time, type, message), below");
    json_decref(d->json);
    d->json = arr;
    for (size_t i = 0; b && i < det->n; i++) {
        const struct rebus_failure *x = &det->f[i];
        const unsigned char *s = b->data;
        struct strbuf sb;
        sb_init(&sb);
        if (x->has_exception) {
            sb_add(&sb, s + x->exc.type_off, x->exc.type_len);
            sb_adds(&sb, ": ");
            sb_add(&sb, s + x->exc.msg_off, x->exc.msg_len);
        } else {
            sb_add(&sb, s + x->details_off, x->details_len);
        }
        struct dfield *y = dfields_add(f, NULL, "", sb.buf ? sb.buf : "", sb.len, NULL);
        free(y->label);
        y->label = x->has_time ? xstrndup((const char *)s + x->time_off, x->time_len)
                               : xstrdup("(no time)");
        y->indent = 1;
        y->style = DF_ERROR;
        sb_free(&sb);
    }
    free(det);
}

static void fields(const struct decoded *d, int64_t now_ms, struct dfields *f)
{
    (void)now_ms;
    const struct message *m = d->msg;
    const struct rebus_priv *p = d->priv;
    if (!p)
        return;
    dialect_fault_copy_head(f, d, p->fault_copy, "Rebus",
                            "the last failure's exception.ToString() (rbs2-error-details)");
    dfields_add_yes_no(
        f, "fault_copy", "fault copy", p->fault_copy,
        "whether Rebus wrote its failure headers (rbs2-source-queue, rbs2-error-details)");
    add_text(f, m, "msg_type", H_TYPE, "the .NET type, \"Namespace.Type, Assembly\"");
    const struct bytes *t = text(m, H_TYPE);
    const void *comma = t ? memchr(t->data, ',', t->len) : NULL;
    if (comma) {
        size_t a = (size_t)((const unsigned char *)comma - t->data) + 1;
        while (a < t->len && t->data[a] == ' ')
            a++;
        dfields_add(f, "type_assembly", "assembly", t->data + a, t->len - a,
                    "the type's assembly (left out of the neutral type)");
    } else {
        dfields_adds(f, "type_assembly", "assembly", NULL, "the type's assembly");
    }
    int64_t v = 0;
    bool has = small_count(m, H_SEQ, &v);
    dfields_add_int_opt(f, "correlation_sequence", H_SEQ, has, v,
                        "depth in the correlation chain: 0 at its root");
    add_text(f, m, "in_reply_to", H_REPLY, "the request this replies to");
    add_text(f, m, "intent", H_INTENT, "p2p (sent) or pub (published)");
    add_text(f, m, "return_address", H_RETURN, "where replies go");
    add_text(f, m, "sender_address", H_SENDER, "the sender's input queue");
    const struct bytes *st = text(m, H_SENT);
    if (p->has_offset && st) {
        size_t off = st->data[st->len - 1] == 'Z' ? st->len - 1 : st->len - 6;
        dfields_add(f, "sent_offset", "sent offset", st->data + off, st->len - off,
                    "the sender's UTC offset when it sent (rbs2-senttime is local time)");
    } else {
        dfields_adds(f, "sent_offset", "sent offset", NULL, "the sender's UTC offset");
    }
    add_text(f, m, "source_queue", H_SOURCE, "the input queue it failed in");
    dfields_add_int_opt(f, "error_count", "failures counted", p->has_count, p->count,
                        "N of \"N unhandled exceptions\" in rbs2-error-details");
    dfields_add_int_opt(f, "delivery_count", H_DCOUNT, p->has_dcount, p->dcount,
                        "earlier deliveries a quorum queue counted (x-delivery-count)");
    has = small_count(m, H_DEFER, &v);
    dfields_add_int_opt(f, "defer_count", H_DEFER, has, v, "second-level retries (deferrals)");
    add_text(f, m, "content_type", H_CTYPE, "the serializer's content type");
    const struct bytes *id = text(m, H_ID);
    dfields_add_yes_no(f, "pseudo_id", "id made up",
                       id && id->len >= 6 && memcmp(id->data, "knuth-", 6) == 0,
                       "Rebus.RabbitMq made the id from the body (no rbs2-msg-id, no message_id)");
    add_text(f, m, "rabbitmq_correlation_id", "rabbitmq-corr-id",
             "the correlation_id property a non-Rebus sender set");
    struct dfield *x =
        dfields_adds(f, "error_details_form", "error details form", form_name(p->form),
                     "how rbs2-error-details is written (aggregate: after "
                     "retries; message: a manual dead-letter; caught: "
                     "auto-forward)");
    x->style = DF_DIM;
    add_failures(f, m, p);
    add_text(f, m, "trace", "rbs-ot-tracestate", "the W3C activity id (Rebus diagnostics)");
    json_t *w = json_array();
    size_t nw = 0;
    for (const char *q = p->warnings.buf; q && *q; nw++) {
        const char *nl = strchr(q, '\n');
        size_t n = nl ? (size_t)(nl - q) : strlen(q);
        json_array_append_new(w, json_stringn(q, n));
        struct dfield *y = dfields_add(f, NULL, NULL, q, n, NULL);
        y->style = DF_WARN;
        y->where = DF_DEFAULTS;
        q = nl ? nl + 1 : q + n;
    }
    x = dfields_add_int(f, "warnings", "warnings", (int64_t)nw, "what could not be read");
    json_decref(x->json);
    x->json = w;
    unsigned df = d->env->defaulted;
    if (p->id_from)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         p->id_from == 1 ? "id: the message_id property (no rbs2-msg-id)"
                                         : "id: a name-based UUID (no rbs2-msg-id, no message_id)");
    if (p->type_from)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         p->type_from == 1 ? "type: the type property (no rbs2-msg-type)"
                                           : "type: \"message\" (no rbs2-msg-type)");
    if (df & ED_ATTEMPT)
        dfields_add_line(f, DF_DEFAULTS, DF_DIM,
                         "attempt: 1 (no count in rbs2-error-details, no delivery count)");
    if (df & ED_FIRST_SEEN)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         "first seen: not from rbs2-senttime (absent or unreadable)");
}

/* ---- restamp --------------------------------------------------------------------------- */

static const char *const FAULT_HEADERS[] = {H_DETAILS, H_SOURCE, NULL};

static const struct rk_field CHANGES[] = {
    {EF_ID, H_ID, PROP_message_id},
    {EF_TYPE, H_TYPE, -1},
    {EF_CORRELATION, H_CORR, -1},
    {EF_CAUSATION, H_REPLY, -1},
};

/* "O" of a UTC DateTimeOffset: 2026-01-02T04:40:11.2500000+00:00. out holds 34 bytes. */
static void roundtrip_utc(int64_t ms, char out[34])
{
    char r[32];
    time_format_rfc3339(ms - ms % 1000, false, r); /* 2026-01-02T04:40:11Z */
    int frac = (int)(ms % 1000);
    if (frac < 0)
        frac += 1000;
    memcpy(out, r, 19);
    out[19] = '.';
    for (int i = 0; i < 3; i++) {
        out[22 - i] = (char)('0' + frac % 10);
        frac /= 10;
    }
    memcpy(out + 23, "0000+00:00", 11);
}

static enum status restamp(const struct decoded *d, const struct restamp_opts *o,
                           const struct bytes *dlq, struct outgoing *out, struct error *err)
{
    (void)dlq;
    enum status st = rk_target_source(
        d, out,
        "it has no rbs2-source-queue header (Rebus's own tool leaves such a message in "
        "the error queue)",
        err);
    if (st != ST_OK)
        return st;
    if (o->mode == RESTAMP_REPLAY) {
        /* Rebus's return-to-source-queue: the message unchanged, every header kept. */
        if (o->strip_fault)
            rk_headers_strip(out->headers, FAULT_HEADERS);
    } else {
        /* A new message sent while handling the old one, as Rebus flows it: a new id, the
         * old chain's correlation one level deeper, sent now; the old failure left behind. */
        const struct message *m = d->msg;
        rk_headers_strip(out->headers, FAULT_HEADERS);
        htable_remove(out->headers, H_DCOUNT);
        htable_remove(out->headers, H_DEFER);
        rk_header_put_text(out->headers, H_ID, out->id.data, out->id.len);
        rk_prop_set(&out->props, PROP_message_id, out->id.data, out->id.len);
        const struct bytes *c = &d->env->correlation_id;
        rk_header_put_text(out->headers, H_CORR, c->data, c->len);
        int64_t seq;
        if (!small_count(m, H_SEQ, &seq) || seq >= INT32_MAX)
            seq = -1;
        char buf[24];
        snprintf(buf, sizeof buf, "%lld", (long long)(seq + 1));
        rk_header_put_text(out->headers, H_SEQ, buf, strlen(buf));
        char sent[34];
        roundtrip_utc(o->now_ms, sent);
        rk_header_put_text(out->headers, H_SENT, sent, strlen(sent));
    }
    return rk_apply_changes(d, o, CHANGES, sizeof CHANGES / sizeof *CHANGES, out, err);
}

const struct dialect_ops dialect_rebus = {
    .name = "rebus",
    .title = "Rebus",
    .summary = "Rebus error copy (rbs2-* headers)",
    .section = "Rebus headers",
    .recognise = recognise,
    .ceiling = 95,
    .decode = decode,
    .release = release,
    .fields = fields,
    .restamp = restamp,
    .replay_rule = "as Rebus's return-to-source-queue tool: unchanged, every header kept; to "
                   "rbs2-source-queue through the default exchange",
};
