/*
 * detail_history: the sections about what happened to a message — the broker's death history
 * as a timeline, what the framework wrote when it gave up (its dialect's death fields), the
 * replay stamps — and the dialect's own section, drawn from its fields (dialect.h).
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

void detail_render_death(struct detail_doc *doc, const struct decoded *d, int64_t now_ms)
{
    detail_heading(doc, DSEC_DEATH);
    bool any = false;
    if (d->death.present) {
        broker_history(doc, d);
        any = true;
    }
    /* What the framework wrote when it gave up (BabelQueue's dead_letter block, AceMQ's
     * x-acemq-error, NServiceBus's exception headers, …): the dialect's DF_DEATH fields. */
    if (detail_render_fields(doc, d, DF_DEATH, 2, 14))
        any = true;
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
    hval_format_scalar(v, &sb);
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

/* ---- the dialect's own fields ------------------------------------------------------------ */

static enum detail_style field_style(uint8_t s)
{
    static const enum detail_style map[] = {
        [DF_VALUE] = DS_VALUE, [DF_ACCENT] = DS_ACCENT, [DF_ERROR] = DS_ERROR,
        [DF_WARN] = DS_WARN,   [DF_DIM] = DS_DIM,       [DF_GOOD] = DS_GOOD};
    return s < sizeof map / sizeof *map ? map[s] : DS_VALUE;
}

size_t detail_render_fields(struct detail_doc *doc, const struct decoded *d,
                            enum dfield_where where, int indent, int label_w)
{
    (void)d;
    const struct dfields *f = doc->fields;
    size_t shown = 0;
    for (size_t i = 0; f && i < f->n; i++) {
        const struct dfield *x = &f->v[i];
        if (x->where != where)
            continue;
        int in = indent + 2 * x->indent;
        enum detail_style st = field_style(x->style);
        if (!x->label) {
            detail_add_text(doc, in, st, x->text.data ? (const void *)x->text.data : "",
                            x->text.len);
        } else {
            int w = x->label_w ? x->label_w : x->indent ? 14 : label_w;
            if (!x->text.data)
                detail_add_field(doc, in, w, x->label, NULL, st, x->meaning);
            else
                detail_add_fieldb(doc, in, w, x->label, x->text.data, x->text.len, st, x->meaning);
        }
        shown++;
    }
    return shown;
}

void detail_render_dialect(struct detail_doc *doc, const struct decoded *d)
{
    const struct dfields *f = doc->fields;
    bool any = false;
    for (size_t i = 0; f && i < f->n && !any; i++)
        any = f->v[i].where == DF_DIALECT;
    if (!any)
        return;
    detail_heading_titled(doc, DSEC_DIALECT, d->dialect->section);
    detail_render_fields(doc, d, DF_DIALECT, 2, 19);
}
