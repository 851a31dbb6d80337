/*
 * detail_history: the sections about what happened to a message — the broker's death history
 * as a timeline, BabelQueue's dead_letter block, AceMQ's x-acemq-error, the replay stamps —
 * and the BabelQueue envelope's own fields.
 */
#include "detail.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A line of the program's own text. */
static void say(struct detail_doc *doc, int indent, enum detail_style st, const char *s)
{
    detail_add_text(doc, indent, st, s, strlen(s));
}

/* ---- JSON members of a BabelQueue body -------------------------------------------------- */

static void json_compact(const json_t *j, struct strbuf *out)
{
    char *s = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
    if (s) {
        sb_adds(out, s);
        free(s);
    }
}

/* A member that should be a string: absent, the string, null, or another type shown as JSON. */
static void bq_str_field(struct detail_doc *doc, int indent, int w, const char *label,
                         const struct bq_str *s, enum detail_style st, const char *meaning,
                         const char *null_means)
{
    if (!s->json) {
        detail_add_field(doc, indent, w, label, "(absent)", DS_DIM, NULL);
    } else if (s->s && s->len && bq_blank(s->s, s->len)) {
        struct strbuf sb;
        sb_init(&sb);
        sb_addc(&sb, '"');
        sb_add(&sb, s->s, s->len);
        sb_addc(&sb, '"');
        detail_add_fieldb(doc, indent, w, label, sb.buf, sb.len, DS_WARN, "blank");
        sb_free(&sb);
    } else if (s->s) {
        detail_add_fieldb(doc, indent, w, label, s->s, s->len, s->len ? st : DS_WARN,
                          s->len ? meaning : "empty");
    } else if (json_is_null(s->json)) {
        detail_add_field(doc, indent, w, label, "null", DS_DIM, null_means);
    } else {
        struct strbuf sb;
        sb_init(&sb);
        json_compact(s->json, &sb);
        detail_add_fieldb(doc, indent, w, label, sb.buf, sb.len, DS_WARN, "not a string");
        sb_free(&sb);
    }
}

/* A member that should be an integer; as_time: epoch milliseconds. */
static void bq_int_field(struct detail_doc *doc, int indent, int w, const char *label,
                         const struct bq_int *n, bool as_time, const char *meaning)
{
    struct strbuf sb;
    sb_init(&sb);
    if (!n->json) {
        detail_add_field(doc, indent, w, label, "(absent)", DS_DIM, NULL);
    } else if (n->is_int && as_time) {
        char t[32];
        time_format_rfc3339(n->v, false, t);
        sb_addf(&sb, "%lld (%s)", (long long)n->v, t);
        detail_add_fieldb(doc, indent, w, label, sb.buf, sb.len, DS_ACCENT, meaning);
    } else if (n->is_int) {
        sb_addf(&sb, "%lld", (long long)n->v);
        detail_add_fieldb(doc, indent, w, label, sb.buf, sb.len, DS_VALUE, meaning);
    } else {
        json_compact(n->json, &sb);
        detail_add_fieldb(doc, indent, w, label, sb.buf, sb.len, DS_WARN, "not an integer");
    }
    sb_free(&sb);
}

/* ---- the death history ------------------------------------------------------------------ */

static const char *reason_meaning(const struct bytes *r)
{
    if (bytes_eq_cstr(r, "rejected"))
        return "a consumer rejected it without requeue";
    if (bytes_eq_cstr(r, "expired"))
        return "its time to live ran out in the queue";
    if (bytes_eq_cstr(r, "maxlen"))
        return "the queue was over its length limit";
    if (bytes_eq_cstr(r, "delivery_limit"))
        return "redelivered past the quorum queue's delivery limit";
    return NULL;
}

static void add_exchange(struct strbuf *sb, const struct bytes *x)
{
    if (x->len) {
        sb_adds(sb, "exchange ");
        sb_add(sb, x->data, x->len);
    } else {
        sb_adds(sb, "the default exchange");
    }
}

static void death_entry_line(struct detail_doc *doc, const struct death_entry *e)
{
    struct strbuf sb;
    sb_init(&sb);
    char t[32] = "(no time)";
    if (e->has_time)
        time_format_rfc3339(e->time_ms, false, t);
    sb_add(&sb, e->reason.data ? (const void *)e->reason.data : "", e->reason.len);
    if (!e->reason.len)
        sb_adds(&sb, "(no reason)");
    sb_addf(&sb, " %s%lld  from ", detail_glyph_times(doc), (long long)e->count);
    if (e->queue.len)
        sb_add(&sb, e->queue.data, e->queue.len);
    else
        sb_adds(&sb, "(no queue)");
    sb_adds(&sb, " (");
    add_exchange(&sb, &e->exchange);
    for (size_t k = 0; k < e->n_routing_keys; k++) {
        sb_adds(&sb, k ? ", " : e->n_routing_keys > 1 ? ", keys " : ", key ");
        sb_add(&sb, e->routing_keys[k].data ? (const void *)e->routing_keys[k].data : "",
               e->routing_keys[k].len);
    }
    sb_adds(&sb, ")");
    if (e->has_original_expiration) {
        sb_adds(&sb, ", its own TTL was ");
        sb_add(&sb, e->original_expiration.data, e->original_expiration.len);
        sb_adds(&sb, " ms");
    }
    struct detail_kv kv = {
        .label = t,
        .label_len = SIZE_MAX,
        .label_w = 20,
        .value = sb.buf,
        .value_len = sb.len,
        .style = DS_VALUE,
        .meaning = reason_meaning(&e->reason),
    };
    detail_add_kv(doc, 2, &kv);
    sb_free(&sb);
}

static void death_end(struct detail_doc *doc, const char *label, const struct bytes *reason,
                      const struct bytes *queue, const struct bytes *exchange, const char *from)
{
    if (!reason->len && !queue->len)
        return;
    struct strbuf sb;
    sb_init(&sb);
    if (reason->len)
        sb_add(&sb, reason->data, reason->len);
    else
        sb_adds(&sb, "(no reason)");
    sb_adds(&sb, " in ");
    sb_add(&sb, queue->data ? (const void *)queue->data : "", queue->len);
    sb_adds(&sb, ", via ");
    add_exchange(&sb, exchange);
    detail_add_fieldb(doc, 2, 14, label, sb.buf, sb.len, DS_VALUE, from);
    sb_free(&sb);
}

static void broker_history(struct detail_doc *doc, const struct decoded *d)
{
    const struct death_summary *ds = &d->death;
    const struct htable *h = d->msg->headers;
    char first[DETAIL_TIME_MAX], last[DETAIL_TIME_MAX];
    if (!ds->n_entries) {
        say(doc, 2, DS_WARN,
            "the broker's death headers are there, but no x-death entry can be read");
    } else if (ds->has_times && ds->first_time_ms == ds->last_time_ms) {
        detail_time(ds->first_time_ms, 0, first);
        detail_add_textf(doc, 2, DS_VALUE, "dead-lettered %lld time%s by the broker, at %s",
                         (long long)ds->total, ds->total == 1 ? "" : "s", first);
    } else if (ds->has_times) {
        detail_time(ds->first_time_ms, 0, first);
        detail_time(ds->last_time_ms, 0, last);
        detail_add_textf(doc, 2, DS_VALUE,
                         "dead-lettered %lld time%s by the broker, first %s, last %s",
                         (long long)ds->total, ds->total == 1 ? "" : "s", first, last);
    } else {
        detail_add_textf(doc, 2, DS_VALUE, "dead-lettered %lld time%s by the broker",
                         (long long)ds->total, ds->total == 1 ? "" : "s");
    }
    bool merged = false;
    /* x-death is newest first: the timeline reads oldest first. */
    for (size_t i = ds->n_entries; i-- > 0;) {
        death_entry_line(doc, &ds->entries[i]);
        merged = merged || ds->entries[i].count > 1;
    }
    if (merged)
        say(doc, 2, DS_DIM,
            "(the broker merges deaths by queue and reason: an entry's time is its "
            "first death)");
    death_end(doc, "first death", &ds->first_reason, &ds->first_queue, &ds->first_exchange,
              htable_get(h, "x-first-death-queue") || htable_get(h, "x-first-death-reason")
                  ? "x-first-death-*"
                  : "the oldest entry");
    bool same = bytes_eq(&ds->first_reason, &ds->last_reason) &&
                bytes_eq(&ds->first_queue, &ds->last_queue) &&
                bytes_eq(&ds->first_exchange, &ds->last_exchange);
    if (!same)
        death_end(doc, "last death", &ds->last_reason, &ds->last_queue, &ds->last_exchange,
                  htable_get(h, "x-last-death-queue") || htable_get(h, "x-last-death-reason")
                      ? "x-last-death-* (RabbitMQ 3.13+)"
                      : "the newest entry");
    if (ds->has_delivery_count) {
        char n[32];
        snprintf(n, sizeof n, "%lld", (long long)ds->delivery_count);
        detail_add_field(doc, 2, 14, "delivery count", n, DS_VALUE,
                         "x-delivery-count: deliveries in a quorum queue (its limit is not "
                         "known here)");
    }
    for (size_t i = 0; i < ds->n_warnings; i++)
        detail_add_fieldb(doc, 2, 14, "warning", ds->warnings[i], strlen(ds->warnings[i]), DS_WARN,
                          NULL);
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

static void bq_dead_letter(struct detail_doc *doc, const struct decoded *d, int64_t now_ms)
{
    const struct bq_dead_letter *dl = &d->bq.dead_letter;
    detail_add_field(doc, 2, 0, "dead_letter", NULL, DS_VALUE,
                     "BabelQueue's block, written by the SDK that gave up");
    if (!dl->is_object) {
        struct strbuf sb;
        sb_init(&sb);
        json_compact(dl->json, &sb);
        detail_add_fieldb(doc, 4, 14, "value", sb.buf, sb.len, DS_WARN, "not an object");
        sb_free(&sb);
        return;
    }
    bq_str_field(doc, 4, 14, "reason", &dl->reason, DS_VALUE, dl_reason_meaning(dl->reason_kind),
                 NULL);
    bq_str_field(doc, 4, 14, "error", &dl->error, DS_ERROR, "the error's message",
                 "no cause was given");
    bq_str_field(doc, 4, 14, "exception", &dl->exception, DS_ERROR, "the error's class or type",
                 "no cause was given");
    if (dl->failed_at.is_int) {
        char t[DETAIL_TIME_MAX];
        detail_time(dl->failed_at.v, now_ms, t);
        detail_add_field(doc, 4, 14, "failed at", t, DS_ACCENT, NULL);
    } else {
        bq_int_field(doc, 4, 14, "failed at", &dl->failed_at, true, NULL);
    }
    bq_str_field(doc, 4, 14, "original queue", &dl->original_queue, DS_ACCENT,
                 "where it was consumed from", NULL);
    bq_int_field(doc, 4, 14, "attempts", &dl->attempts, false, "delivery attempts when it failed");
    bq_str_field(doc, 4, 14, "lang", &dl->lang, DS_VALUE, "the SDK that dead-lettered it", NULL);
}

void detail_render_death(struct detail_doc *doc, const struct decoded *d, int64_t now_ms)
{
    detail_heading(doc, DSEC_DEATH);
    bool any = false;
    if (d->death.present) {
        broker_history(doc, d);
        any = true;
    }
    if (d->dialect == DIALECT_BABELQUEUE && d->bq.dead_letter.json) {
        bq_dead_letter(doc, d, now_ms);
        any = true;
    }
    if (d->dialect == DIALECT_ACEMQ && d->env->error.len) {
        if (!d->death.present)
            say(doc, 2, DS_VALUE,
                "set aside by the AceMQ library itself (no broker dead-lettering: "
                "no x-death)");
        detail_add_fieldb(doc, 2, 14, "x-acemq-error", d->env->error.data, d->env->error.len,
                          DS_ERROR, "why the library gave up on it");
        any = true;
    }
    if (!any)
        say(doc, 2, DS_DIM, "no dead-letter history: no x-death, no dead_letter block, no error");
}

/* ---- replay stamps ---------------------------------------------------------------------- */

static void stamp_field(struct detail_doc *doc, const struct htable *h, const char *name,
                        enum detail_style st, const char *meaning)
{
    const struct hval *v = htable_get(h, name);
    if (!v)
        return;
    char tag[24];
    snprintf(tag, sizeof tag, "(%s)", hkind_name(v->kind));
    struct strbuf sb;
    sb_init(&sb);
    detail_hval_scalar(v, &sb);
    struct detail_kv kv = {
        .label = name,
        .label_len = SIZE_MAX,
        .label_w = 19,
        .tag = tag,
        .tag_w = 8,
        .value = sb.buf,
        .value_len = sb.len,
        .style = st,
        .meaning = meaning,
    };
    detail_add_kv(doc, 2, &kv);
    sb_free(&sb);
}

void detail_render_replay(struct detail_doc *doc, const struct decoded *d, int64_t now_ms)
{
    const struct acemq_replay *r = &d->replay;
    if (!r->present)
        return;
    detail_heading(doc, DSEC_REPLAY);
    struct strbuf sb;
    sb_init(&sb);
    if (r->count > 0)
        sb_addf(&sb, "replayed %lld time%s", (long long)r->count, r->count == 1 ? "" : "s");
    else
        sb_adds(&sb, "replayed (no readable count)");
    if (r->from.len) {
        sb_adds(&sb, ", last from ");
        sb_add(&sb, r->from.data, r->from.len);
    }
    if (r->has_at) {
        char t[DETAIL_TIME_MAX];
        detail_time(r->at_ms, now_ms, t);
        sb_addf(&sb, " at %s", t);
    } else if (r->at_unreadable) {
        sb_adds(&sb, " at a time that cannot be read");
    }
    detail_add_text(doc, 2, DS_VALUE, sb.buf, sb.len);
    sb_free(&sb);
    const struct htable *h = d->msg->headers;
    stamp_field(doc, h, ACEMQ_REPLAYED_FROM, DS_ACCENT, "the queue the last replay read it from");
    stamp_field(doc, h, ACEMQ_REPLAYED_AT, r->at_unreadable ? DS_WARN : DS_ACCENT,
                r->at_unreadable ? "neither RFC 3339 nor epoch milliseconds"
                                 : "when (RFC 3339; older Java wrote epoch ms)");
    stamp_field(doc, h, ACEMQ_REPLAY_COUNT, DS_VALUE, "replays so far; the next one writes +1");
    say(doc, 2, DS_DIM,
        "a replay keeps the id, correlation, causation and first-seen, sets the "
        "attempt back to 1 and clears x-acemq-error");
}

/* ---- the BabelQueue envelope ------------------------------------------------------------ */

#define BQ_W 19

static const char *detected_meaning(enum bq_detected how)
{
    switch (how) {
    case BQ_DETECT_APP_ID:
        return "the app_id property is \"babelqueue\"";
    case BQ_DETECT_SHAPE:
        return "the body has the envelope's shape";
    case BQ_DETECT_RAW_WRAP:
        return "the body is the {\"raw\", \"dead_letter\"} wrapper";
    case BQ_DETECT_NONE:
    default:
        return NULL;
    }
}

void detail_render_babelqueue(struct detail_doc *doc, const struct decoded *d)
{
    if (d->dialect != DIALECT_BABELQUEUE)
        return;
    const struct bq_envelope *b = &d->bq;
    detail_heading(doc, DSEC_BABELQUEUE);
    detail_add_field(doc, 2, BQ_W, "detected", bq_detected_name(b->detected), DS_VALUE,
                     detected_meaning(b->detected));
    if (!b->doc) {
        char where[64];
        snprintf(where, sizeof where, "line %d, column %d", b->json_error.line,
                 b->json_error.column);
        detail_add_field(doc, 2, BQ_W, "json error", b->json_error.text, DS_ERROR, where);
    }
    if (b->raw_wrapped)
        bq_str_field(doc, 2, BQ_W, "raw", &b->raw, DS_VALUE,
                     "the body as it was when it could not be decoded", NULL);
    if (b->job_key == BQ_JOB_KEY_URN)
        bq_str_field(doc, 2, BQ_W, "urn", &b->job, DS_VALUE, "the inbound alias of job", NULL);
    else
        bq_str_field(doc, 2, BQ_W, "job", &b->job, DS_VALUE, "the job's URN: which handler", NULL);
    bq_str_field(doc, 2, BQ_W, "trace_id", &b->trace_id, DS_ACCENT, "the whole causal chain", NULL);
    bq_int_field(doc, 2, BQ_W, "attempts", &b->attempts, false, "delivery attempts, from 0");
    if (!b->data) {
        detail_add_field(doc, 2, BQ_W, "data", "(absent)", DS_DIM, NULL);
    } else if (json_is_object(b->data)) {
        char n[48];
        snprintf(n, sizeof n, "an object of %zu member%s", json_object_size(b->data),
                 json_object_size(b->data) == 1 ? "" : "s");
        detail_add_field(doc, 2, BQ_W, "data", n, DS_VALUE, "the job's arguments (in the body)");
    } else {
        struct strbuf sb;
        sb_init(&sb);
        json_compact(b->data, &sb);
        detail_add_fieldb(doc, 2, BQ_W, "data", sb.buf, sb.len, DS_WARN, "not an object");
        sb_free(&sb);
    }
    const struct bq_meta *m = &b->meta;
    if (!m->json) {
        detail_add_field(doc, 2, BQ_W, "meta", "(absent)", DS_DIM, NULL);
    } else if (!m->is_object) {
        struct strbuf sb;
        sb_init(&sb);
        json_compact(m->json, &sb);
        detail_add_fieldb(doc, 2, BQ_W, "meta", sb.buf, sb.len, DS_WARN, "not an object");
        sb_free(&sb);
    } else {
        bq_str_field(doc, 2, BQ_W, "meta.id", &m->id, DS_ACCENT, "the message id", NULL);
        bq_str_field(doc, 2, BQ_W, "meta.queue", &m->queue, DS_VALUE, "the queue it was sent to",
                     NULL);
        bq_str_field(doc, 2, BQ_W, "meta.lang", &m->lang, DS_VALUE, "the producer's SDK", NULL);
        bq_int_field(doc, 2, BQ_W, "meta.schema_version", &m->schema_version, false,
                     "must be the integer 1");
        bq_int_field(doc, 2, BQ_W, "meta.created_at", &m->created_at, true,
                     "first publish, epoch ms");
    }
    for (size_t i = 0; i < b->nwarnings; i++) {
        const char *t = b->warnings[i].text;
        detail_add_fieldb(doc, 2, BQ_W, "warning", t, t ? strlen(t) : 0, DS_WARN,
                          bq_warning_kind_name(b->warnings[i].kind));
    }
}
