/*
 * detail_summary: the summary section — every envelope field with what it means and where
 * the dialect reads it from, where the message goes back to, whether its consumer would take
 * it, and which fields took a default (and what they replaced).
 */
#include "detail.h"

#include <stdio.h>
#include <string.h>

#define SUM_W 12

/* What a header of the envelope looked like, for a default's explanation. */
static void header_state(const struct htable *h, const char *name, struct strbuf *out)
{
    const struct hval *v = htable_get(h, name);
    if (!v)
        sb_addf(out, "%s absent", name);
    else if (hval_str(v) && hval_str(v)->len == 0)
        sb_addf(out, "%s is empty", name);
    else if (hval_str(v))
        sb_addf(out, "%s is not a number", name);
    else if (v->kind == HV_VOID)
        sb_addf(out, "%s is void", name);
    else
        sb_addf(out, "%s is %s %s, unreadable", name,
                v->kind == HV_ARRAY || v->kind == HV_I8 ? "an" : "a", hkind_name(v->kind));
}

static void add_default(struct detail_doc *doc, bool *first, struct strbuf *sb)
{
    detail_add_fieldb(doc, 2, SUM_W, *first ? "defaulted" : "", sb->buf, sb->len, DS_WARN, NULL);
    *first = false;
    sb_reset(sb);
}

static void acemq_defaults(struct detail_doc *doc, const struct decoded *d, bool *first,
                           struct strbuf *sb)
{
    const struct htable *h = d->msg->headers;
    unsigned df = d->env->defaulted;
    struct bytes id = {0, NULL};
    bool id_header = hval_as_text(htable_get(h, ACEMQ_ID), &id) && id.len;
    bytes_free(&id);
    if (df & ED_ID) {
        sb_adds(sb, "id: a name-based UUID of the message (");
        header_state(h, ACEMQ_ID, sb);
        sb_adds(sb, ", no message_id property)");
        add_default(doc, first, sb);
    } else if (!id_header) {
        sb_adds(sb, "id: the message_id property (");
        header_state(h, ACEMQ_ID, sb);
        sb_adds(sb, ")");
        add_default(doc, first, sb);
    }
    static const struct {
        unsigned bit;
        const char *name, *header;
    } rows[] = {
        {ED_TYPE, "type", ACEMQ_TYPE},
        {ED_VERSION, "version: 1", ACEMQ_VERSION},
        {ED_CORRELATION, "correlation: the id", ACEMQ_CORRELATION},
        {ED_ATTEMPT, "attempt: 1", ACEMQ_ATTEMPT},
        {ED_FIRST_SEEN, "first seen: when it was read", ACEMQ_FIRST_SEEN},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        if (!(df & rows[i].bit))
            continue;
        if (rows[i].bit == ED_TYPE)
            sb_adds(sb, d->msg->routing_key.len ? "type: the routing key"
                                                : "type: \"message\" (no routing key)");
        else
            sb_adds(sb, rows[i].name);
        sb_adds(sb, " (");
        header_state(h, rows[i].header, sb);
        sb_adds(sb, ")");
        add_default(doc, first, sb);
    }
}

static void bq_defaults(struct detail_doc *doc, const struct decoded *d, bool *first,
                        struct strbuf *sb)
{
    const struct props *p = &d->msg->props;
    unsigned df = d->env->defaulted;
    const struct bq_envelope *b = &d->bq;
    if (df & ED_ID)
        sb_adds(sb, "id: a name-based UUID of the message (no meta.id, no message_id property)");
    else if (!b->meta.id.s || !b->meta.id.len)
        sb_adds(sb, "id: the message_id property (meta.id absent or not a string)");
    if (sb->len)
        add_default(doc, first, sb);
    const struct bytes *pt = props_string(p, PROP_type), *pc = props_string(p, PROP_correlation_id);
    if (df & ED_TYPE) {
        sb_adds(sb, pt && pt->len ? "type: the type property (no usable job or urn)"
                                  : "type: \"message\" (no usable job, urn or type property)");
        add_default(doc, first, sb);
    }
    if (df & ED_CORRELATION) {
        sb_adds(sb, pc && pc->len
                        ? "correlation: the correlation_id property (no usable trace_id)"
                        : "correlation: the id (no trace_id, no correlation_id property)");
        add_default(doc, first, sb);
    }
    if (df & ED_VERSION) {
        sb_adds(sb, "version: 1 (meta.schema_version is not an integer)");
        add_default(doc, first, sb);
    }
    if (df & ED_ATTEMPT) {
        sb_adds(sb, "attempt: 0 (neither dead_letter.attempts nor attempts is an integer)");
        add_default(doc, first, sb);
    }
    if (df & ED_FIRST_SEEN) {
        sb_adds(sb, props_has(p, PROP_timestamp)
                        ? "first seen: the timestamp property (meta.created_at not an integer)"
                        : "first seen: when it was fetched (no meta.created_at, no timestamp)");
        add_default(doc, first, sb);
    }
}

static void amqp_defaults(struct detail_doc *doc, const struct decoded *d, bool *first,
                          struct strbuf *sb)
{
    unsigned df = d->env->defaulted;
    if (df & ED_ID) {
        sb_adds(sb, "id: a name-based UUID of the message (no message_id property)");
        add_default(doc, first, sb);
    }
    if (df & ED_TYPE) {
        const struct bytes *rk = death_first_routing_key(&d->death);
        if (rk && rk->len && bytes_eq(rk, &d->env->type))
            sb_adds(sb, "type: the first death's routing key (no type property)");
        else if (d->msg->routing_key.len && bytes_eq(&d->msg->routing_key, &d->env->type))
            sb_adds(sb, "type: the routing key (no type property)");
        else
            sb_adds(sb, "type: \"message\" (no type property, no routing key)");
        add_default(doc, first, sb);
    }
    if (df & ED_CORRELATION) {
        sb_adds(sb, "correlation: the id (no correlation_id property)");
        add_default(doc, first, sb);
    }
    if (df & ED_ATTEMPT) {
        sb_adds(sb, "attempt: 1 (no x-death to count)");
        add_default(doc, first, sb);
    }
    if (df & ED_FIRST_SEEN) {
        sb_adds(sb, d->death.has_times
                        ? "first seen: the first death's time (no timestamp property)"
                        : "first seen: when it was fetched (no timestamp property)");
        add_default(doc, first, sb);
    }
}

static const char *source_how_text(enum source_how h)
{
    switch (h) {
    case SOURCE_ACEMQ_SUFFIX:
        return "the DLQ's name minus .dlq/.parked/.dead";
    case SOURCE_BQ_ORIGINAL_QUEUE:
        return "dead_letter.original_queue";
    case SOURCE_BQ_META_QUEUE:
        return "meta.queue";
    case SOURCE_X_DEATH:
        return "the first x-death entry";
    case SOURCE_UNKNOWN:
    default:
        return "";
    }
}

static void summary_source(struct detail_doc *doc, const struct decoded *d)
{
    const struct source *s = &d->source;
    if (s->how == SOURCE_UNKNOWN) {
        detail_add_field(doc, 2, SUM_W, "source", "unknown", DS_WARN,
                         "nothing says where it came from: a replay needs a target");
        return;
    }
    char meaning[96];
    snprintf(meaning, sizeof meaning, "where it came from: %s", source_how_text(s->how));
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
        static const char *const why[] = {
            [DIALECT_AMQP] = "plain AMQP: there are no consumer rules to fail",
            [DIALECT_ACEMQ] = "an AceMQ consumer reads any envelope (bad fields take defaults)",
            [DIALECT_BABELQUEUE] = NULL,
        };
        const char *w = why[d->dialect];
        if (d->dialect == DIALECT_BABELQUEUE) {
            w = bq_reason_text(BQ_OK);
            if (strncmp(w, "accepted: ", 10) == 0)
                w += 10;
        }
        detail_add_field(doc, 2, SUM_W, "consumer", "accepted", DS_GOOD, w);
        return;
    }
    char v[96];
    snprintf(v, sizeof v, "rejected: %s", d->reject_reason ? d->reject_reason : "?");
    detail_add_field(doc, 2, SUM_W, "consumer", v, DS_ERROR,
                     d->dialect == DIALECT_BABELQUEUE ? bq_reason_text(d->bq.reason) : NULL);
}

void detail_render_summary(struct detail_doc *doc, const struct decoded *d, int64_t now_ms)
{
    const struct envelope *e = d->env;
    int di = d->dialect == DIALECT_ACEMQ ? 1 : d->dialect == DIALECT_BABELQUEUE ? 2 : 0;
    bool urn = d->dialect == DIALECT_BABELQUEUE && d->bq.job_key == BQ_JOB_KEY_URN;
    static const char *const dialects[] = {"plain AMQP: read from its properties",
                                           "AceMQ envelope (x-acemq-* headers)",
                                           "BabelQueue envelope (a JSON body)"};
    static const char *const ids[] = {"the message id (message_id property)",
                                      "id and idempotency key (x-acemq-id)",
                                      "the message id (meta.id)"};
    static const char *const types[] = {"the logical type (type property)",
                                        "the logical type (x-acemq-type)", "the job's URN (job)"};
    static const char *const versions[] = {"plain AMQP has no schema version",
                                           "schema version of the type (x-acemq-version)",
                                           "envelope schema version (meta.schema_version)"};
    static const char *const corrs[] = {"the whole causal chain (correlation_id)",
                                        "the whole causal chain (x-acemq-correlation)",
                                        "the whole causal chain (trace_id)"};
    static const char *const no_causes[] = {
        "plain AMQP carries no causation", "a chain root: nothing caused it",
        "BabelQueue carries none (a parent is the traceparent header)"};
    static const char *const attempts[] = {"times the broker dead-lettered it (x-death)",
                                           "delivery attempt, from 1 (x-acemq-attempt)",
                                           "delivery attempts, from 0 (attempts)"};
    static const char *const seens[] = {"first publish (timestamp property)",
                                        "first publish (x-acemq-first-seen)",
                                        "first publish (meta.created_at)"};
    static const char *const origins[] = {"the producing app (app_id property)",
                                          "the producer, service@host (x-acemq-origin)",
                                          "the producer's language (meta.lang)"};
    static const char *const errors[] = {"", "why the library set it aside (x-acemq-error)",
                                         "dead_letter.exception: dead_letter.error"};
    char buf[64];
    unsigned df = e->defaulted;
    const char *dflt = "defaulted (see below)";

    detail_heading(doc, DSEC_SUMMARY);
    detail_add_field(doc, 2, SUM_W, "dialect", dialect_name(d->dialect), DS_ACCENT, dialects[di]);
    detail_add_fieldb(doc, 2, SUM_W, "id", e->id.data, e->id.len, DS_ACCENT,
                      df & ED_ID ? dflt : ids[di]);
    detail_add_fieldb(doc, 2, SUM_W, "type", e->type.data, e->type.len, DS_VALUE,
                      df & ED_TYPE ? dflt
                      : urn        ? "the job's URN (urn, the inbound alias of job)"
                                   : types[di]);
    snprintf(buf, sizeof buf, "%lld", (long long)e->version);
    detail_add_field(doc, 2, SUM_W, "version", buf, DS_VALUE,
                     df & ED_VERSION && di != 0 ? dflt : versions[di]);
    detail_add_fieldb(doc, 2, SUM_W, "correlation", e->correlation_id.data, e->correlation_id.len,
                      DS_ACCENT, df & ED_CORRELATION ? dflt : corrs[di]);
    if (e->causation_id.len)
        detail_add_fieldb(doc, 2, SUM_W, "causation", e->causation_id.data, e->causation_id.len,
                          DS_ACCENT, "what caused this one (x-acemq-causation)");
    else
        detail_add_field(doc, 2, SUM_W, "causation", "(none)", DS_DIM, no_causes[di]);
    snprintf(buf, sizeof buf, "%lld", (long long)e->attempt);
    detail_add_field(doc, 2, SUM_W, "attempt", buf, DS_VALUE,
                     df & ED_ATTEMPT ? dflt
                     : di == 2 && d->bq.dead_letter.attempts.is_int
                         ? "delivery attempts, from 0 (dead_letter.attempts)"
                         : attempts[di]);
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
                     df & ED_FIRST_SEEN ? dflt : seens[di]);
    if (e->origin.len)
        detail_add_fieldb(doc, 2, SUM_W, "origin", e->origin.data, e->origin.len, DS_VALUE,
                          origins[di]);
    else
        detail_add_field(doc, 2, SUM_W, "origin", "(none)", DS_DIM, origins[di]);
    if (d->error.len) {
        const char *why = errors[di];
        if (d->error_from_broker)
            why = "worked out from x-death: no library wrote an error";
        else if (di == 2 && !d->bq.dead_letter.error.s && !d->bq.dead_letter.exception.s)
            why = "dead_letter.reason (no error or exception given)";
        detail_add_fieldb(doc, 2, SUM_W, "error", d->error.data, d->error.len, DS_ERROR, why);
    } else {
        detail_add_field(doc, 2, SUM_W, "error", "(none)", DS_DIM, "nothing says why");
    }
    summary_source(doc, d);
    summary_consumer(doc, d);

    struct strbuf sb;
    sb_init(&sb);
    bool first = true;
    if (d->dialect == DIALECT_ACEMQ)
        acemq_defaults(doc, d, &first, &sb);
    else if (d->dialect == DIALECT_BABELQUEUE)
        bq_defaults(doc, d, &first, &sb);
    else
        amqp_defaults(doc, d, &first, &sb);
    sb_free(&sb);
}
