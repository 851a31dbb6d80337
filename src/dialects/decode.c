/*
 * decode: asks the dialects which one a message is (dialect.h), lets the winner read it, and
 * fills what it left open from the broker's own record (x-death).
 */
#include "decode.h"

#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "traceparent.h"
#include "util.h"

static void source_from_death(const struct death_summary *d, struct source *src)
{
    if (!d->n_entries && !d->first_queue.len)
        return;
    const struct bytes *rk = death_first_routing_key(d);
    src->how = "x-death";
    src->how_text = "the first x-death entry";
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

/* TYPE: MESSAGE, or whichever is known. */
static void error_from_parts(struct decoded *out)
{
    const struct bytes *t = &out->error_type, *m = &out->error_message;
    if (!t->len && !m->len)
        return;
    struct strbuf sb;
    sb_init(&sb);
    sb_add(&sb, t->data, t->len);
    if (t->len && m->len)
        sb_adds(&sb, ": ");
    sb_add(&sb, m->data, m->len);
    size_t len;
    char *s = sb_detach(&sb, &len);
    out->error = (struct bytes){len, (unsigned char *)s};
}

/* W3C traceparent, any dialect: a correlation that defaulted (the dialect found none on the
 * message) takes the trace id of a valid traceparent header, so that one trace is one tree
 * (docs/dialects.md). A correlation the message carries is never replaced. */
static void link_by_traceparent(const struct message *m, struct decoded *out)
{
    char tid[TRACEPARENT_ID_LEN + 1];
    if (!(out->env->defaulted & ED_CORRELATION) ||
        !traceparent_from_hval(htable_get(m->headers, "traceparent"), tid))
        return;
    struct env_change c = {.field = EF_CORRELATION,
                           .text = {TRACEPARENT_ID_LEN, (unsigned char *)tid}};
    const struct envelope *linked = NULL;
    if (envelope_with(out->env, &c, 1, &linked, NULL) != ST_OK)
        return;
    envelope_free(out->env);
    out->env = linked;
    out->read_from[NF_CORRELATION] = "the trace id of the traceparent header (the message "
                                     "carries no correlation of its own)";
}

void decode_message(const struct message *m, int64_t now_ms, struct decoded *out)
{
    decode_message_ex(m, now_ms, 0, out);
}

void decode_message_ex(const struct message *m, int64_t now_ms, unsigned flags, struct decoded *out)
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

    struct dialect_input in = {
        .msg = m, .body = body, .body_len = m->body.len, .death = &out->death, .now_ms = now_ms};
    out->dialect = dialect_recognise(&in, &out->match);
    out->dialect->decode(&in, out);
    if (!out->env) { /* a dialect that forgot: never leave the envelope out */
        struct bytes id = dialect_derived_id(m);
        struct envelope_init ei = {.id = id,
                                   .type = bytes_from_cstr("message"),
                                   .version = 1,
                                   .attempt = 1,
                                   .first_seen_ms = now_ms,
                                   .defaulted = ED_ID | ED_TYPE | ED_VERSION | ED_ATTEMPT |
                                                ED_CORRELATION | ED_FIRST_SEEN,
                                   .headers = m->headers};
        dialect_envelope(out, &ei);
        bytes_free(&id);
        bytes_free(&ei.type);
    }

    link_by_traceparent(m, out);

    if (!out->error.len && out->env->error.len) {
        bytes_free(&out->error);
        out->error = bytes_copy(&out->env->error);
    }
    if (!out->error.len) {
        bytes_free(&out->error);
        error_from_parts(out);
    }
    if (!out->error.len) {
        bytes_free(&out->error);
        error_from_death(out);
    }
    if (!out->failed_at_ms && out->death.has_times) {
        out->failed_at_ms = out->death.last_time_ms;
        out->failed_at_from_broker = true;
    }
    if (!out->source.how)
        source_from_death(&out->death, &out->source);
}

void decoded_free(struct decoded *d)
{
    if (d->dialect && d->dialect->release)
        d->dialect->release(d);
    envelope_free(d->env);
    death_free(&d->death);
    source_free(&d->source);
    acemq_replay_free(&d->replay);
    body_info_free(&d->body);
    bytes_free(&d->error);
    decoded_error_parts_free(d);
    memset(d, 0, sizeof *d);
}
