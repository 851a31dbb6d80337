/*
 * decode_json: the `dlqx decode` record — documented field names (docs/decode-format.md),
 * stable for scripts.
 */
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "hval_json.h"
#include "keyset.h"
#include "snapshot.h"
#include "util.h"

static json_t *bj(const struct bytes *b)
{
    return bytes_to_json(b->data ? (const void *)b->data : "", b->len);
}

/* A string field, or null when empty. */
static json_t *bj_or_null(const struct bytes *b)
{
    return b && b->len ? bj(b) : json_null();
}

void envelope_head_to_json(json_t *o, const struct envelope *e)
{
    json_object_set_new(o, "id", bj(&e->id));
    json_object_set_new(o, "type", bj(&e->type));
    json_object_set_new(o, "version", json_integer(e->version));
    json_object_set_new(o, "correlation_id", bj(&e->correlation_id));
    json_object_set_new(o, "causation_id", bj_or_null(&e->causation_id));
    json_object_set_new(o, "attempt", json_integer(e->attempt));
    json_object_set_new(o, "first_seen_ms", json_integer(e->first_seen_ms));
}

json_t *defaulted_to_json(unsigned d)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {
        {ED_ID, "id"},           {ED_TYPE, "type"},
        {ED_VERSION, "version"}, {ED_CORRELATION, "correlation_id"},
        {ED_ATTEMPT, "attempt"}, {ED_FIRST_SEEN, "first_seen_ms"},
    };
    json_t *a = json_array();
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (d & names[i].bit)
            json_array_append_new(a, json_string(names[i].name));
    return a;
}

static json_t *time_json(int64_t ms)
{
    char buf[32];
    time_format_rfc3339(ms, false, buf);
    return json_string(buf);
}

static json_t *death_json(const struct death_summary *d)
{
    if (!d->present)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "count", json_integer(d->total));
    json_t *reasons = json_array(); /* each reason once, in the order of first appearance */
    struct keyset seen;
    keyset_init(&seen, d->n_entries);
    for (size_t i = 0; i < d->n_entries; i++)
        if (keyset_add(&seen, d->entries[i].reason.data, d->entries[i].reason.len))
            json_array_append_new(reasons, bj(&d->entries[i].reason));
    keyset_free(&seen);
    json_object_set_new(o, "reasons", reasons);
    json_object_set_new(o, "first",
                        json_pack("{s:o,s:o,s:o}", "queue", bj_or_null(&d->first_queue), "reason",
                                  bj_or_null(&d->first_reason), "exchange",
                                  d->first_exchange.data ? bj(&d->first_exchange) : json_null()));
    json_object_set_new(o, "last",
                        json_pack("{s:o,s:o,s:o}", "queue", bj_or_null(&d->last_queue), "reason",
                                  bj_or_null(&d->last_reason), "exchange",
                                  d->last_exchange.data ? bj(&d->last_exchange) : json_null()));
    json_object_set_new(o, "first_time_ms",
                        d->has_times ? json_integer(d->first_time_ms) : json_null());
    json_object_set_new(o, "last_time_ms",
                        d->has_times ? json_integer(d->last_time_ms) : json_null());
    json_object_set_new(o, "delivery_count",
                        d->has_delivery_count ? json_integer(d->delivery_count) : json_null());
    json_t *entries = json_array();
    for (size_t i = 0; i < d->n_entries; i++) {
        const struct death_entry *e = &d->entries[i];
        json_t *rk = json_array();
        for (size_t k = 0; k < e->n_routing_keys; k++)
            json_array_append_new(rk, bj(&e->routing_keys[k]));
        json_t *eo =
            json_pack("{s:o,s:o,s:o,s:I,s:o,s:o}", "queue", bj(&e->queue), "reason", bj(&e->reason),
                      "exchange", bj(&e->exchange), "count", (json_int_t)e->count, "time_ms",
                      e->has_time ? json_integer(e->time_ms) : json_null(), "routing_keys", rk);
        if (e->has_original_expiration)
            json_object_set_new(eo, "original_expiration", bj(&e->original_expiration));
        json_array_append_new(entries, eo);
    }
    json_object_set_new(o, "entries", entries);
    json_t *w = json_array();
    for (size_t i = 0; i < d->n_warnings; i++)
        json_array_append_new(w, json_string(d->warnings[i]));
    json_object_set_new(o, "warnings", w);
    return o;
}

static json_t *source_json(const struct source *s)
{
    if (!s->how)
        return json_null();
    return json_pack("{s:o,s:o,s:o,s:s}", "queue", bj_or_null(&s->queue), "exchange",
                     bj(&s->exchange), "routing_key", bj(&s->routing_key), "how", s->how);
}

/* Application headers: everything but the broker's own death headers (shown under death). */
static json_t *app_headers_json(const struct htable *h)
{
    /* A view of the entries (borrowed, not copied: only the array is this function's). */
    struct htable view = {0, h->n, h->n ? xmalloc(h->n * sizeof *h->e) : NULL, false, false};
    for (size_t i = 0; i < h->n; i++)
        if (!death_broker_header(h->e[i].key.data, h->e[i].key.len))
            view.e[view.n++] = h->e[i];
    json_t *j = htable_to_json(&view);
    free(view.e);
    return j;
}

static json_t *body_json(const struct decoded *d)
{
    const struct message *m = d->msg;
    const struct body_info *b = &d->body;
    json_t *o = json_object();
    json_object_set_new(o, "size", json_integer((json_int_t)m->body.len));
    json_object_set_new(o, "kind", json_string(body_kind_name(b->kind)));
    json_object_set_new(o, "format", b->format ? json_string(b->format) : json_null());
    json_object_set_new(o, "content_type",
                        b->media.type ? json_string(b->media.type) : json_null());
    json_object_set_new(o, "sha256", json_string(d->body_sha256));
    struct strbuf sb;
    sb_init(&sb);
    body_summary(b, &sb);
    json_object_set_new(o, "summary", bytes_to_json(sb.buf, sb.len));
    sb_free(&sb);
    if (b->note[0])
        json_object_set_new(o, "note", bytes_to_json(b->note, strlen(b->note)));
    if (b->key_id)
        json_object_set_new(o, "key_id", bytes_to_json(b->key_id, strlen(b->key_id)));
    if (b->store_key)
        json_object_set_new(o, "store_key", bytes_to_json(b->store_key, strlen(b->store_key)));
    if (b->kind == BODY_AVRO_REGISTERED)
        json_object_set_new(o, "schema_id", json_integer(b->schema_id));
    if (b->json_checked && !b->json_valid)
        json_object_set_new(o, "json_error",
                            json_pack("{s:o,s:i,s:i}", "text",
                                      bytes_to_json(b->json_error, strlen(b->json_error)), "line",
                                      b->json_line, "column", b->json_column));
    const void *data = m->body.data ? (const void *)m->body.data : "";
    if (utf8_valid(data, m->body.len)) {
        json_object_set_new(o, "text", json_stringn(data, m->body.len));
    } else {
        char *b64 = base64_encode(data, m->body.len);
        json_object_set_new(o, "base64", json_string(b64));
        free(b64);
    }
    if (b->kind == BODY_JSON && b->json_valid) {
        json_t *doc = json_loadb(data, m->body.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        if (doc)
            json_object_set_new(o, "json", doc);
    }
    return o;
}

static json_t *replay_json(const struct acemq_replay *r)
{
    if (!r->present)
        return json_null();
    json_t *o = json_object();
    json_object_set_new(o, "from", bj_or_null(&r->from));
    json_object_set_new(o, "at_ms", r->has_at ? json_integer(r->at_ms) : json_null());
    json_object_set_new(o, "at", r->has_at ? time_json(r->at_ms) : json_null());
    json_object_set_new(o, "at_unreadable", json_boolean(r->at_unreadable));
    json_object_set_new(o, "count", json_integer(r->count));
    return o;
}

json_t *decoded_own_json(const struct decoded *d, int64_t now_ms)
{
    json_t *own = NULL;
    if (d->dialect->to_json) {
        own = d->dialect->to_json(d);
    } else if (d->dialect->fields) {
        struct dfields f = {0};
        d->dialect->fields(d, now_ms, &f);
        own = dfields_to_json(&f);
        dfields_free(&f);
    }
    return own ? own : json_object();
}

json_t *decoded_to_json(const struct decoded *d, int64_t now_ms)
{
    const struct envelope *e = d->env;
    const struct message *m = d->msg;
    json_t *o = json_object();
    json_object_set_new(o, "dialect", json_string(d->dialect->name));
    envelope_head_to_json(o, e);
    json_object_set_new(o, "first_seen", time_json(e->first_seen_ms));
    json_object_set_new(o, "age_s", json_real(envelope_age_s(e, now_ms)));
    json_object_set_new(o, "origin", bj_or_null(&e->origin));
    json_object_set_new(o, "error", bj_or_null(&d->error));
    json_object_set_new(o, "error_from_broker", json_boolean(d->error_from_broker));
    json_object_set_new(o, "error_type", bj_or_null(&d->error_type));
    json_object_set_new(o, "error_message", bj_or_null(&d->error_message));
    json_object_set_new(o, "stack_trace", bj_or_null(&d->stack_trace));
    json_object_set_new(o, "failed_at_ms",
                        d->failed_at_ms ? json_integer(d->failed_at_ms) : json_null());
    json_object_set_new(o, "failed_at", d->failed_at_ms ? time_json(d->failed_at_ms) : json_null());
    json_t *by = json_array();
    for (int i = 0; i < d->match.n_by; i++)
        json_array_append_new(by, json_string(d->match.by[i]));
    json_object_set_new(o, "recognised",
                        json_pack("{s:i,s:o}", "confidence", d->match.confidence, "by", by));
    json_object_set_new(o, "queue", bj(&m->queue));
    json_object_set_new(o, "exchange", bj(&m->exchange));
    json_object_set_new(o, "routing_key", bj(&m->routing_key));
    json_object_set_new(o, "redelivered", json_boolean(m->redelivered));
    json_object_set_new(o, "source", source_json(&d->source));
    json_object_set_new(o, "death", death_json(&d->death));
    json_object_set_new(o, "headers", app_headers_json(e->headers));
    json_object_set_new(o, "accepted", json_boolean(d->accepted));
    json_object_set_new(o, "reject_reason",
                        d->reject_reason ? json_string(d->reject_reason) : json_null());
    json_object_set_new(o, "defaulted", defaulted_to_json(e->defaulted));
    json_object_set_new(o, "replay", replay_json(&d->replay));
    json_object_set_new(o, "properties", snapshot_props_to_json(&m->props));
    json_object_set_new(o, "body", body_json(d));
    json_object_set_new(o, d->dialect->name, decoded_own_json(d, now_ms));
    return o;
}
