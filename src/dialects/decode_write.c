/*
 * decode_write: the `dlqx decode` record written straight into a buffer — the bytes that
 * dumping decoded_to_json's tree gives, without building the tree (decode spent most of its
 * time building it). Strings, integers, booleans and the record's own layout are written
 * here; the properties and headers by the snapshot writer's direct paths; the parts that are
 * jansson's own (the real age_s, the body's parsed JSON document, the dialect's own section)
 * are built as small trees and dumped by json_out_fast. Any doubt — a static string that is
 * not UTF-8 (where jansson would leave the key out), a flag it does not know, a part
 * json_out_fast declines — and it declines the whole record: the caller dumps
 * decoded_to_json, so the output is jansson's by construction. tests/test_decode_write.c
 * holds the two to each other.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "hval_json.h"
#include "json_out.h"
#include "keyset.h"
#include "snapshot.h"
#include "util.h"

#define KEY(out, lit) sb_add((out), lit, sizeof lit - 1)

/* bytes_to_json's value: a string when UTF-8, else {"base64":"…"}. */
static void w_bytes(struct strbuf *out, const void *data, size_t len)
{
    if (json_out_string(out, len ? data : "", len))
        return;
    char *b64 = base64_encode(data, len);
    KEY(out, "{\"base64\":\"");
    sb_adds(out, b64);
    KEY(out, "\"}");
    free(b64);
}

static void w_bj(struct strbuf *out, const struct bytes *b)
{
    w_bytes(out, b->data ? (const void *)b->data : "", b->len);
}

static void w_bj_or_null(struct strbuf *out, const struct bytes *b)
{
    if (b && b->len)
        w_bj(out, b);
    else
        KEY(out, "null");
}

/* json_string(s): false when s is not UTF-8 (jansson gives NULL and the key is left out). */
static bool w_cstr(struct strbuf *out, const char *s)
{
    return json_out_string(out, s, strlen(s));
}

static void w_int(struct strbuf *out, long long v)
{
    json_out_integer(out, v);
}

static void w_bool(struct strbuf *out, bool b)
{
    if (b)
        KEY(out, "true");
    else
        KEY(out, "false");
}

static void w_time(struct strbuf *out, int64_t ms)
{
    char buf[32];
    time_format_rfc3339(ms, false, buf);
    sb_addc(out, '"');
    sb_adds(out, buf);
    sb_addc(out, '"');
}

/* A tree dumped by json_out_fast; the reference is taken. */
static bool w_tree(struct strbuf *out, json_t *j, size_t flags)
{
    bool ok = j && json_out_fast(out, j, flags | JSON_ENCODE_ANY);
    json_decref(j);
    return ok;
}

static void w_end(struct strbuf *out, const struct bytes *queue, const struct bytes *reason,
                  const struct bytes *exchange)
{
    KEY(out, "{\"queue\":");
    w_bj_or_null(out, queue);
    KEY(out, ",\"reason\":");
    w_bj_or_null(out, reason);
    KEY(out, ",\"exchange\":");
    if (exchange->data)
        w_bj(out, exchange);
    else
        KEY(out, "null");
    sb_addc(out, '}');
}

static void w_int_or_null(struct strbuf *out, bool has, long long v)
{
    if (has)
        w_int(out, v);
    else
        KEY(out, "null");
}

static bool w_death(struct strbuf *out, const struct death_summary *d)
{
    if (!d->present) {
        KEY(out, "null");
        return true;
    }
    KEY(out, "{\"count\":");
    w_int(out, d->total);
    KEY(out, ",\"reasons\":[");
    struct keyset seen;
    keyset_init(&seen, d->n_entries);
    bool first = true;
    for (size_t i = 0; i < d->n_entries; i++)
        if (keyset_add(&seen, d->entries[i].reason.data, d->entries[i].reason.len)) {
            if (!first)
                sb_addc(out, ',');
            first = false;
            w_bj(out, &d->entries[i].reason);
        }
    keyset_free(&seen);
    KEY(out, "],\"first\":");
    w_end(out, &d->first_queue, &d->first_reason, &d->first_exchange);
    KEY(out, ",\"last\":");
    w_end(out, &d->last_queue, &d->last_reason, &d->last_exchange);
    KEY(out, ",\"first_time_ms\":");
    w_int_or_null(out, d->has_times, d->first_time_ms);
    KEY(out, ",\"last_time_ms\":");
    w_int_or_null(out, d->has_times, d->last_time_ms);
    KEY(out, ",\"delivery_count\":");
    w_int_or_null(out, d->has_delivery_count, d->delivery_count);
    KEY(out, ",\"entries\":[");
    for (size_t i = 0; i < d->n_entries; i++) {
        const struct death_entry *e = &d->entries[i];
        if (i)
            sb_addc(out, ',');
        KEY(out, "{\"queue\":");
        w_bj(out, &e->queue);
        KEY(out, ",\"reason\":");
        w_bj(out, &e->reason);
        KEY(out, ",\"exchange\":");
        w_bj(out, &e->exchange);
        KEY(out, ",\"count\":");
        w_int(out, (long long)e->count);
        KEY(out, ",\"time_ms\":");
        w_int_or_null(out, e->has_time, e->time_ms);
        KEY(out, ",\"routing_keys\":[");
        for (size_t k = 0; k < e->n_routing_keys; k++) {
            if (k)
                sb_addc(out, ',');
            w_bj(out, &e->routing_keys[k]);
        }
        sb_addc(out, ']');
        if (e->has_original_expiration) {
            KEY(out, ",\"original_expiration\":");
            w_bj(out, &e->original_expiration);
        }
        sb_addc(out, '}');
    }
    KEY(out, "],\"warnings\":[");
    for (size_t i = 0; i < d->n_warnings; i++) {
        if (i)
            sb_addc(out, ',');
        if (!w_cstr(out, d->warnings[i]))
            return false;
    }
    KEY(out, "]}");
    return true;
}

static bool w_source(struct strbuf *out, const struct source *s)
{
    if (!s->how) {
        KEY(out, "null");
        return true;
    }
    KEY(out, "{\"queue\":");
    w_bj_or_null(out, &s->queue);
    KEY(out, ",\"exchange\":");
    w_bj(out, &s->exchange);
    KEY(out, ",\"routing_key\":");
    w_bj(out, &s->routing_key);
    KEY(out, ",\"how\":");
    if (!w_cstr(out, s->how))
        return false;
    sb_addc(out, '}');
    return true;
}

/* Everything but the broker's death headers, as app_headers_json gives it. */
static bool w_headers(struct strbuf *out, const struct htable *h, size_t flags)
{
    struct htable view = {0, h->n, h->n ? xmalloc(h->n * sizeof *h->e) : NULL};
    for (size_t i = 0; i < h->n; i++)
        if (!death_broker_header(h->e[i].key.data, h->e[i].key.len))
            view.e[view.n++] = h->e[i];
    bool ok = htable_write_json(&view, out) || w_tree(out, htable_to_json(&view), flags);
    free(view.e);
    return ok;
}

/* json_object_set_new(o, key, bytes_to_json(s, strlen(s))), written. */
static void w_opt_text(struct strbuf *out, const char *key, const char *s)
{
    sb_adds(out, key);
    w_bytes(out, s, strlen(s));
}

static bool w_body(struct strbuf *out, const struct decoded *d, size_t flags)
{
    const struct message *m = d->msg;
    const struct body_info *b = &d->body;
    KEY(out, "{\"size\":");
    w_int(out, (long long)m->body.len);
    KEY(out, ",\"kind\":");
    if (!w_cstr(out, body_kind_name(b->kind)))
        return false;
    KEY(out, ",\"format\":");
    if (b->format ? !w_cstr(out, b->format) : (KEY(out, "null"), false))
        return false;
    KEY(out, ",\"content_type\":");
    if (b->media.type ? !w_cstr(out, b->media.type) : (KEY(out, "null"), false))
        return false;
    KEY(out, ",\"sha256\":");
    if (!w_cstr(out, d->body_sha256))
        return false;
    KEY(out, ",\"summary\":");
    struct strbuf sb;
    sb_init(&sb);
    body_summary(b, &sb);
    w_bytes(out, sb.buf, sb.len);
    sb_free(&sb);
    if (b->note[0])
        w_opt_text(out, ",\"note\":", b->note);
    if (b->key_id)
        w_opt_text(out, ",\"key_id\":", b->key_id);
    if (b->store_key)
        w_opt_text(out, ",\"store_key\":", b->store_key);
    if (b->kind == BODY_AVRO_REGISTERED) {
        KEY(out, ",\"schema_id\":");
        w_int(out, b->schema_id);
    }
    if (b->json_checked && !b->json_valid) {
        KEY(out, ",\"json_error\":{\"text\":");
        w_bytes(out, b->json_error, strlen(b->json_error));
        KEY(out, ",\"line\":");
        w_int(out, b->json_line);
        KEY(out, ",\"column\":");
        w_int(out, b->json_column);
        sb_addc(out, '}');
    }
    const void *data = m->body.data ? (const void *)m->body.data : "";
    KEY(out, ",\"text\":");
    if (!json_out_string(out, data, m->body.len)) {
        out->len -= sizeof ",\"text\":" - 1;
        char *b64 = base64_encode(data, m->body.len);
        KEY(out, ",\"base64\":\"");
        sb_adds(out, b64);
        sb_addc(out, '"');
        free(b64);
    }
    if (b->kind == BODY_JSON && b->json_valid) {
        json_t *doc = json_loadb(data, m->body.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        if (doc) {
            KEY(out, ",\"json\":");
            if (!w_tree(out, doc, flags))
                return false;
        }
    }
    sb_addc(out, '}');
    return true;
}

static void w_replay(struct strbuf *out, const struct acemq_replay *r)
{
    if (!r->present) {
        KEY(out, "null");
        return;
    }
    KEY(out, "{\"from\":");
    w_bj_or_null(out, &r->from);
    KEY(out, ",\"at_ms\":");
    w_int_or_null(out, r->has_at, r->at_ms);
    KEY(out, ",\"at\":");
    if (r->has_at)
        w_time(out, r->at_ms);
    else
        KEY(out, "null");
    KEY(out, ",\"at_unreadable\":");
    w_bool(out, r->at_unreadable);
    KEY(out, ",\"count\":");
    w_int(out, r->count);
    sb_addc(out, '}');
}

/* The names of the defaulted fields (defaulted_to_json), all ASCII. */
static void w_defaulted(struct strbuf *out, unsigned d)
{
    static const struct {
        unsigned bit;
        const char *json;
    } names[] = {
        {ED_ID, "\"id\""},           {ED_TYPE, "\"type\""},
        {ED_VERSION, "\"version\""}, {ED_CORRELATION, "\"correlation_id\""},
        {ED_ATTEMPT, "\"attempt\""}, {ED_FIRST_SEEN, "\"first_seen_ms\""},
    };
    sb_addc(out, '[');
    bool first = true;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (d & names[i].bit) {
            if (!first)
                sb_addc(out, ',');
            first = false;
            sb_adds(out, names[i].json);
        }
    sb_addc(out, ']');
}

/* The record's own keys: a dialect named like one of them would replace it in the tree. */
static bool name_is_a_key(const char *name)
{
    static const char *const keys[] = {
        "dialect",
        "id",
        "type",
        "version",
        "correlation_id",
        "causation_id",
        "attempt",
        "first_seen_ms",
        "first_seen",
        "age_s",
        "origin",
        "error",
        "error_from_broker",
        "error_type",
        "error_message",
        "stack_trace",
        "failed_at_ms",
        "failed_at",
        "recognised",
        "queue",
        "exchange",
        "routing_key",
        "redelivered",
        "source",
        "death",
        "headers",
        "accepted",
        "reject_reason",
        "defaulted",
        "replay",
        "properties",
        "body",
    };
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strcmp(name, keys[i]) == 0)
            return true;
    return false;
}

static bool w_record(struct strbuf *out, const struct decoded *d, int64_t now_ms, size_t flags)
{
    const struct envelope *e = d->env;
    const struct message *m = d->msg;
    KEY(out, "{\"dialect\":");
    if (!w_cstr(out, d->dialect->name) || name_is_a_key(d->dialect->name))
        return false;
    KEY(out, ",\"id\":");
    w_bj(out, &e->id);
    KEY(out, ",\"type\":");
    w_bj(out, &e->type);
    KEY(out, ",\"version\":");
    w_int(out, e->version);
    KEY(out, ",\"correlation_id\":");
    w_bj(out, &e->correlation_id);
    KEY(out, ",\"causation_id\":");
    w_bj_or_null(out, &e->causation_id);
    KEY(out, ",\"attempt\":");
    w_int(out, e->attempt);
    KEY(out, ",\"first_seen_ms\":");
    w_int(out, e->first_seen_ms);
    KEY(out, ",\"first_seen\":");
    w_time(out, e->first_seen_ms);
    double age = envelope_age_s(e, now_ms);
    if (!isfinite(age)) /* json_real refuses it: the key is left out */
        return false;
    KEY(out, ",\"age_s\":");
    if (!w_tree(out, json_real(age), flags))
        return false;
    KEY(out, ",\"origin\":");
    w_bj_or_null(out, &e->origin);
    KEY(out, ",\"error\":");
    w_bj_or_null(out, &d->error);
    KEY(out, ",\"error_from_broker\":");
    w_bool(out, d->error_from_broker);
    KEY(out, ",\"error_type\":");
    w_bj_or_null(out, &d->error_type);
    KEY(out, ",\"error_message\":");
    w_bj_or_null(out, &d->error_message);
    KEY(out, ",\"stack_trace\":");
    w_bj_or_null(out, &d->stack_trace);
    KEY(out, ",\"failed_at_ms\":");
    w_int_or_null(out, d->failed_at_ms != 0, d->failed_at_ms);
    KEY(out, ",\"failed_at\":");
    if (d->failed_at_ms)
        w_time(out, d->failed_at_ms);
    else
        KEY(out, "null");
    KEY(out, ",\"recognised\":{\"confidence\":");
    w_int(out, d->match.confidence);
    KEY(out, ",\"by\":[");
    for (int i = 0; i < d->match.n_by; i++) {
        if (i)
            sb_addc(out, ',');
        if (!w_cstr(out, d->match.by[i]))
            return false;
    }
    KEY(out, "]},\"queue\":");
    w_bj(out, &m->queue);
    KEY(out, ",\"exchange\":");
    w_bj(out, &m->exchange);
    KEY(out, ",\"routing_key\":");
    w_bj(out, &m->routing_key);
    KEY(out, ",\"redelivered\":");
    w_bool(out, m->redelivered);
    KEY(out, ",\"source\":");
    if (!w_source(out, &d->source))
        return false;
    KEY(out, ",\"death\":");
    if (!w_death(out, &d->death))
        return false;
    KEY(out, ",\"headers\":");
    if (!w_headers(out, e->headers, flags))
        return false;
    KEY(out, ",\"accepted\":");
    w_bool(out, d->accepted);
    KEY(out, ",\"reject_reason\":");
    if (d->reject_reason ? !w_cstr(out, d->reject_reason) : (KEY(out, "null"), false))
        return false;
    KEY(out, ",\"defaulted\":");
    w_defaulted(out, e->defaulted);
    KEY(out, ",\"replay\":");
    w_replay(out, &d->replay);
    KEY(out, ",\"properties\":");
    if (!snapshot_props_write(out, &m->props) &&
        !w_tree(out, snapshot_props_to_json(&m->props), flags))
        return false;
    KEY(out, ",\"body\":");
    if (!w_body(out, d, flags))
        return false;
    sb_addc(out, ',');
    json_out_string(out, d->dialect->name, strlen(d->dialect->name));
    sb_addc(out, ':');
    if (!w_tree(out, decoded_own_json(d, now_ms), flags))
        return false;
    sb_addc(out, '}');
    return true;
}

bool decoded_write_json(const struct decoded *d, int64_t now_ms, size_t flags, struct strbuf *out)
{
    size_t start = out->len;
    size_t own = JSON_COMPACT | JSON_REAL_PRECISION(31);
    if ((flags & JSON_COMPACT) && !(flags & ~own) && w_record(out, d, now_ms, flags))
        return true;
    out->len = start;
    if (out->buf)
        out->buf[start] = '\0';
    return false;
}
