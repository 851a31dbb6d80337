/*
 * detail_summary: the summary section — every envelope field with what it means and where
 * the dialect reads it from, where the message goes back to, whether its consumer would take
 * it, and which fields took a default (and what they replaced).
 */
#include "detail.h"

#include <stdio.h>
#include <string.h>

#define SUM_W 12

static void summary_source(struct detail_doc *doc, const struct decoded *d)
{
    const struct source *s = &d->source;
    if (!s->how) {
        detail_add_field(doc, 2, SUM_W, "source", "unknown", DS_WARN,
                         "nothing says where it came from: a replay needs a target");
        return;
    }
    char meaning[96];
    snprintf(meaning, sizeof meaning, "where it came from: %s", s->how_text ? s->how_text : s->how);
    if (s->queue.len)
        detail_add_fieldb(doc, 2, SUM_W, "source", s->queue.data, s->queue.len, DS_ACCENT, meaning);
    else
        detail_add_field(doc, 2, SUM_W, "source", "(no queue named)", DS_DIM, meaning);
    struct strbuf sb;
    sb_init(&sb);
    if (s->exchange.len) {
        sb_adds(&sb, "exchange ");
        sb_add(&sb, s->exchange.data, s->exchange.len);
    } else {
        sb_adds(&sb, "the default exchange");
    }
    sb_adds(&sb, ", routing key ");
    sb_add(&sb, s->routing_key.data ? (const void *)s->routing_key.data : "", s->routing_key.len);
    detail_add_fieldb(doc, 2, SUM_W, "replay to", sb.buf, sb.len, DS_VALUE,
                      "where a replay publishes it");
    sb_free(&sb);
}

static void summary_consumer(struct detail_doc *doc, const struct decoded *d)
{
    if (d->accepted) {
        detail_add_field(doc, 2, SUM_W, "consumer", "accepted", DS_GOOD, d->accept_note);
        return;
    }
    char v[96];
    snprintf(v, sizeof v, "rejected: %s", d->reject_reason ? d->reject_reason : "?");
    detail_add_field(doc, 2, SUM_W, "consumer", v, DS_ERROR, d->accept_note);
}

/* What the dialect says a neutral field is read from, or a plain default. */
static const char *from(const struct decoded *d, enum neutral_field f, const char *fallback)
{
    return d->read_from[f] ? d->read_from[f] : fallback;
}

void detail_render_summary(struct detail_doc *doc, const struct decoded *d, int64_t now_ms)
{
    const struct envelope *e = d->env;
    char buf[64];
    unsigned df = e->defaulted;
    const char *dflt = "defaulted (see below)";

    detail_heading(doc, DSEC_SUMMARY);
    detail_add_field(doc, 2, SUM_W, "dialect", d->dialect->name, DS_ACCENT, d->dialect->summary);
    detail_add_fieldb(doc, 2, SUM_W, "id", e->id.data, e->id.len, DS_ACCENT,
                      df & ED_ID ? dflt : from(d, NF_ID, "the message id"));
    detail_add_fieldb(doc, 2, SUM_W, "type", e->type.data, e->type.len, DS_VALUE,
                      df & ED_TYPE ? dflt : from(d, NF_TYPE, "the logical type"));
    snprintf(buf, sizeof buf, "%lld", (long long)e->version);
    detail_add_field(doc, 2, SUM_W, "version", buf, DS_VALUE,
                     df & ED_VERSION && d->dialect != &dialect_amqp
                         ? dflt
                         : from(d, NF_VERSION, "schema version"));
    detail_add_fieldb(
        doc, 2, SUM_W, "correlation", e->correlation_id.data, e->correlation_id.len, DS_ACCENT,
        df & ED_CORRELATION ? dflt : from(d, NF_CORRELATION, "the whole causal chain"));
    if (e->causation_id.len)
        detail_add_fieldb(doc, 2, SUM_W, "causation", e->causation_id.data, e->causation_id.len,
                          DS_ACCENT, from(d, NF_CAUSATION, "what caused this one"));
    else
        detail_add_field(doc, 2, SUM_W, "causation", "(none)", DS_DIM,
                         from(d, NF_CAUSATION, "none carried"));
    snprintf(buf, sizeof buf, "%lld", (long long)e->attempt);
    detail_add_field(doc, 2, SUM_W, "attempt", buf, DS_VALUE,
                     df & ED_ATTEMPT ? dflt : from(d, NF_ATTEMPT, "delivery attempt"));
    double age = envelope_age_s(e, now_ms);
    duration_format(age, buf);
    /* Which clock the age is counted at, in UTC: now, or when the snapshot was read. */
    char clock[32], note[96];
    time_format_rfc3339(now_ms, false, clock);
    snprintf(note, sizeof note, "since first publish, until %s (%s)", clock,
             doc->flags & DETAIL_AS_OF_SNAPSHOT ? "as of the snapshot" : "now");
    detail_add_field(doc, 2, SUM_W, "age", buf, age < 0 ? DS_WARN : DS_VALUE,
                     age < 0 ? "first seen is in the future (a clock is off)" : note);
    time_format_rfc3339(e->first_seen_ms, false, buf);
    detail_add_field(doc, 2, SUM_W, "first seen", buf, DS_ACCENT,
                     df & ED_FIRST_SEEN ? dflt : from(d, NF_FIRST_SEEN, "first publish"));
    const char *origin = from(d, NF_ORIGIN, "the producer");
    if (e->origin.len)
        detail_add_fieldb(doc, 2, SUM_W, "origin", e->origin.data, e->origin.len, DS_VALUE, origin);
    else
        detail_add_field(doc, 2, SUM_W, "origin", "(none)", DS_DIM, origin);
    if (d->error.len) {
        const char *why = from(d, NF_ERROR, "");
        if (d->error_from_broker)
            why = "worked out from x-death: no library wrote an error";
        detail_add_fieldb(doc, 2, SUM_W, "error", d->error.data, d->error.len, DS_ERROR, why);
    } else {
        detail_add_field(doc, 2, SUM_W, "error", "(none)", DS_DIM, "nothing says why");
    }
    if (d->failed_at_ms && !d->failed_at_from_broker) {
        char t[TIME_AGO_MAX];
        time_format_ago(d->failed_at_ms, now_ms, t);
        detail_add_field(doc, 2, SUM_W, "failed at", t, DS_ACCENT,
                         from(d, NF_FAILED_AT, "when it failed"));
    }
    summary_source(doc, d);
    summary_consumer(doc, d);

    /* Why each defaulted field took its default: the dialect's notes. */
    const struct dfields *f = doc->fields;
    bool first = true;
    for (size_t i = 0; f && i < f->n; i++) {
        const struct dfield *x = &f->v[i];
        if (x->where != DF_DEFAULTS)
            continue;
        detail_add_fieldb(doc, 2, SUM_W, first ? "defaulted" : "", x->text.data, x->text.len,
                          DS_WARN, NULL);
        first = false;
    }
}
