/*
 * decode: dialect detection and decoding of one message into the neutral envelope.
 */
#include "decode.h"

#include <stdlib.h>
#include <string.h>

#include "hval_amqp.h"
#include "sha256.h"
#include "util.h"

const char *source_how_name(enum source_how h)
{
    switch (h) {
    case SOURCE_ACEMQ_SUFFIX:
        return "acemq-dlq-name";
    case SOURCE_BQ_ORIGINAL_QUEUE:
        return "dead_letter.original_queue";
    case SOURCE_BQ_META_QUEUE:
        return "meta.queue";
    case SOURCE_X_DEATH:
        return "x-death";
    case SOURCE_UNKNOWN:
    default:
        return "unknown";
    }
}

/* The digest that stands in for an id when a message has none: the headers' wire form and
 * the body, so the same message reads with the same id every time. */
static struct bytes identity_digest(const struct message *m)
{
    struct sha256 s;
    unsigned char d[32];
    sha256_init(&s);
    struct bytes wire = {0, NULL};
    if (htable_encode_wire(m->headers, &wire, NULL) == ST_OK)
        sha256_update(&s, wire.data, wire.len);
    bytes_free(&wire);
    sha256_update(&s, m->routing_key.data ? (const void *)m->routing_key.data : "",
                  m->routing_key.len);
    sha256_update(&s, m->body.data ? (const void *)m->body.data : "", m->body.len);
    sha256_final(&s, d);
    return bytes_dup(d, sizeof d);
}

static void set_source_queue(struct source *src, enum source_how how, const void *q, size_t n)
{
    src->how = how;
    src->queue = bytes_dup(q, n);
    src->exchange = bytes_dup("", 0);
    src->routing_key = bytes_dup(q, n);
}

static void source_from_death(const struct death_summary *d, struct source *src)
{
    if (!d->n_entries && !d->first_queue.len)
        return;
    const struct bytes *rk = death_first_routing_key(d);
    src->how = SOURCE_X_DEATH;
    src->queue = bytes_copy(&d->first_queue);
    src->exchange = d->first_exchange.data ? bytes_copy(&d->first_exchange) : bytes_dup("", 0);
    if (rk)
        src->routing_key = bytes_copy(rk);
    else
        src->routing_key = bytes_copy(&d->first_queue);
}

static void error_from_death(struct decoded *out)
{
    const struct death_summary *d = &out->death;
    if (!d->present || (!d->last_reason.len && !d->first_reason.len))
        return;
    const struct bytes *reason = d->last_reason.len ? &d->last_reason : &d->first_reason;
    const struct bytes *queue = d->last_reason.len ? &d->last_queue : &d->first_queue;
    struct strbuf sb;
    sb_init(&sb);
    sb_adds(&sb, "dead-lettered by the broker: ");
    sb_add(&sb, reason->data, reason->len);
    if (queue->len) {
        sb_adds(&sb, " from ");
        sb_add(&sb, queue->data, queue->len);
    }
    size_t len;
    char *s = sb_detach(&sb, &len);
    out->error = (struct bytes){len, (unsigned char *)s};
    out->error_from_broker = true;
}

static struct bytes json_text(const struct bq_str *s)
{
    if (s->s)
        return bytes_dup(s->s, s->len);
    return (struct bytes){0, NULL};
}

static void decode_babelqueue(const struct message *m, int64_t now_ms, const struct bytes *digest,
                              struct decoded *out)
{
    struct bq_props bp = {
        .app_id = props_string(&m->props, PROP_app_id),
        .type = props_string(&m->props, PROP_type),
        .correlation_id = props_string(&m->props, PROP_correlation_id),
        .message_id = props_string(&m->props, PROP_message_id),
    };
    bq_parse(m->body.data ? (const void *)m->body.data : "", m->body.len, &bp, &out->bq);
    const struct bq_envelope *b = &out->bq;
    out->accepted = bq_accepted(b);
    out->reject_reason = out->accepted ? NULL : bq_reason_name(b->reason);

    struct envelope_init in;
    memset(&in, 0, sizeof in);
    in.dialect = DIALECT_BABELQUEUE;
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
        in.first_seen_ms = m->fetched_at_ms ? m->fetched_at_ms : now_ms;
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
    } else if (dl->reason.s) {
        error = bytes_dup(dl->reason.s, dl->reason.len);
    }
    if (!id.len) {
        bytes_free(&id);
        id = envelope_derived_id(digest);
    }
    in.id = id;
    in.type = type;
    in.correlation_id = corr;
    in.origin = origin;
    in.error = error;
    in.headers = m->headers;
    envelope_new(&in, &out->env, NULL);
    bytes_free(&id);
    bytes_free(&type);
    bytes_free(&corr);
    bytes_free(&origin);
    bytes_free(&error);

    const char *q;
    size_t qn;
    if (bq_source_queue(b, &q, &qn)) {
        bool original = dl->original_queue.s && dl->original_queue.len;
        set_source_queue(&out->source,
                         original ? SOURCE_BQ_ORIGINAL_QUEUE : SOURCE_BQ_META_QUEUE, q, qn);
    } else {
        source_from_death(&out->death, &out->source);
    }
}

static void decode_plain(const struct message *m, int64_t now_ms, const struct bytes *digest,
                         struct decoded *out)
{
    const struct props *p = &m->props;
    struct envelope_init in;
    memset(&in, 0, sizeof in);
    in.dialect = DIALECT_AMQP;
    const struct bytes *mid = props_string(p, PROP_message_id);
    struct bytes derived = {0, NULL};
    if (!mid || !mid->len) {
        derived = envelope_derived_id(digest);
        in.id = derived;
        in.defaulted |= ED_ID;
    } else {
        in.id = *mid;
    }
    const struct bytes *type = props_string(p, PROP_type);
    const struct bytes *rk = death_first_routing_key(&out->death);
    struct bytes message = {7, (unsigned char *)"message"};
    if (type && type->len) {
        in.type = *type;
    } else {
        in.defaulted |= ED_TYPE;
        if (rk && rk->len)
            in.type = *rk;
        else if (m->routing_key.len)
            in.type = m->routing_key;
        else
            in.type = message;
    }
    const struct bytes *corr = props_string(p, PROP_correlation_id);
    if (corr && corr->len)
        in.correlation_id = *corr;
    else
        in.defaulted |= ED_CORRELATION;
    in.version = 1;
    in.defaulted |= ED_VERSION;
    /* Plain AMQP has no attempt counter: the broker's count of deaths stands in. */
    if (out->death.total > 0) {
        in.attempt = out->death.total;
    } else {
        in.attempt = 1;
        in.defaulted |= ED_ATTEMPT;
    }
    if (props_has(p, PROP_timestamp) && p->timestamp <= (uint64_t)INT64_MAX / 1000) {
        in.first_seen_ms = (int64_t)p->timestamp * 1000;
    } else if (out->death.has_times) {
        in.first_seen_ms = out->death.first_time_ms;
        in.defaulted |= ED_FIRST_SEEN;
    } else {
        in.first_seen_ms = m->fetched_at_ms ? m->fetched_at_ms : now_ms;
        in.defaulted |= ED_FIRST_SEEN;
    }
    const struct bytes *app = props_string(p, PROP_app_id);
    if (app)
        in.origin = *app;
    in.headers = m->headers;
    envelope_new(&in, &out->env, NULL);
    bytes_free(&derived);
    source_from_death(&out->death, &out->source);
}

static void decode_acemq(const struct message *m, int64_t now_ms, const struct bytes *digest,
                         struct decoded *out)
{
    acemq_from_headers(m->headers, &m->routing_key, props_string(&m->props, PROP_message_id),
                       digest, now_ms, &out->env, NULL);
    size_t n = acemq_source_queue(&m->queue);
    if (n)
        set_source_queue(&out->source, SOURCE_ACEMQ_SUFFIX, m->queue.data, n);
    else
        source_from_death(&out->death, &out->source);
}

void decode_message(const struct message *m, int64_t now_ms, struct decoded *out)
{
    decode_message_ex(m, now_ms, 0, out);
}

void decode_message_ex(const struct message *m, int64_t now_ms, unsigned flags,
                       struct decoded *out)
{
    memset(out, 0, sizeof *out);
    out->msg = m;
    out->accepted = true;
    const void *body = m->body.data ? (const void *)m->body.data : "";
    if (!(flags & DECODE_NO_BODY)) {
        sha256_hex(body, m->body.len, out->body_sha256);
        body_classify(body, m->body.len, props_string(&m->props, PROP_content_type),
                      props_string(&m->props, PROP_content_encoding), &out->body);
    }
    death_read(m->headers, &out->death);
    acemq_replay_read(m->headers, &out->replay);

    struct bq_props bp = {
        .app_id = props_string(&m->props, PROP_app_id),
        .type = props_string(&m->props, PROP_type),
        .correlation_id = props_string(&m->props, PROP_correlation_id),
        .message_id = props_string(&m->props, PROP_message_id),
    };
    bool need_digest = true;
    struct bytes digest = {0, NULL};
    if (acemq_detect(m->headers)) {
        out->dialect = DIALECT_ACEMQ;
        need_digest = !htable_get(m->headers, ACEMQ_ID);
    } else if (bq_detect(body, m->body.len, &bp)) {
        out->dialect = DIALECT_BABELQUEUE;
    } else {
        out->dialect = DIALECT_AMQP;
        const struct bytes *mid = props_string(&m->props, PROP_message_id);
        need_digest = !mid || !mid->len;
    }
    if (need_digest)
        digest = identity_digest(m);

    switch (out->dialect) {
    case DIALECT_ACEMQ:
        decode_acemq(m, now_ms, &digest, out);
        break;
    case DIALECT_BABELQUEUE:
        decode_babelqueue(m, now_ms, &digest, out);
        break;
    case DIALECT_AMQP:
    default:
        decode_plain(m, now_ms, &digest, out);
        break;
    }
    bytes_free(&digest);
    if (out->env->error.len)
        out->error = bytes_copy(&out->env->error);
    else
        error_from_death(out);
}

void decoded_free(struct decoded *d)
{
    envelope_free(d->env);
    death_free(&d->death);
    bytes_free(&d->source.queue);
    bytes_free(&d->source.exchange);
    bytes_free(&d->source.routing_key);
    if (d->dialect == DIALECT_BABELQUEUE)
        bq_envelope_free(&d->bq);
    acemq_replay_free(&d->replay);
    body_info_free(&d->body);
    bytes_free(&d->error);
    memset(d, 0, sizeof *d);
}
