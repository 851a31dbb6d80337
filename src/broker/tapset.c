/*
 * tapset: finds what feeds each DLQ from the management API's listing and taps it (tapset.h).
 * A tap copies the DLQ's own bindings (binding the dead-letter exchange itself could route what
 * the exchange would otherwise give its alternate exchange); what reaches the DLQ through the
 * default exchange cannot be bound, and is said to be invisible.
 */
#include "tapset.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

static void say(tapset_note_fn note, void *ctx, bool hidden, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void say(tapset_note_fn note, void *ctx, bool hidden, const char *fmt, ...)
{
    if (!note)
        return;
    struct strbuf sb;
    sb_init(&sb);
    va_list ap;
    va_start(ap, fmt);
    sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    note(ctx, hidden, sb.buf ? sb.buf : "");
    sb_free(&sb);
}

/* Says where each of the DLQ's sources dead-letters (its dead-letter exchange and routing key);
 * true when some do so through the default exchange, which a tap cannot see. */
static bool default_exchange_sources(const struct tapset *ts, const struct tapset_queue *f,
                                     tapset_note_fn note, void *ctx)
{
    const struct dlq_entry *e = dlq_report_find(&ts->rep, f->q->vhost, f->name);
    bool any = false;
    for (size_t k = 0; e && k < e->n_sources; k++) {
        const struct mgmt_queue *s = &ts->list_q[e->sources[k].queue];
        if (!s->dead_letter_exchange)
            continue;
        if (*s->dead_letter_exchange) {
            say(note, ctx, false, "%s: %s dead-letters to exchange %s, routing key %s%s%s", f->name,
                s->name, s->dead_letter_exchange, s->dead_letter_routing_key ? "\"" : "",
                s->dead_letter_routing_key ? s->dead_letter_routing_key : "(the message's own)",
                s->dead_letter_routing_key ? "\"" : "");
            continue;
        }
        any = true;
        say(note, ctx, true,
            "%s: %s dead-letters to it through the default exchange, which cannot be bound: "
            "follow does not see those dead letters",
            f->name, s->name);
    }
    return any;
}

/* Binds the tap like every binding of the DLQ but the default exchange's. */
static enum status bind_like(struct conn *c, struct tap *t, const struct tapset *ts,
                             const struct tapset_queue *f, tapset_note_fn note, void *ctx,
                             enum conn_err *kind, struct error *err)
{
    for (size_t k = 0; k < ts->nb; k++) {
        const struct mgmt_binding *b = &ts->list_b[k];
        if (b->dest_type != MGMT_DEST_QUEUE || strcmp(b->destination, f->name) != 0 ||
            strcmp(b->vhost, f->q->vhost) != 0 || !*b->source)
            continue;
        enum status s = tap_bind(c, t, b->source, b->routing_key, b->arguments, kind, err);
        if (s == ST_EUNSUPPORTED) {
            say(note, ctx, true, "%s: not tapping exchange %s: %s", f->name, b->source, err->msg);
            continue;
        }
        if (s != ST_OK)
            return s;
        say(note, ctx, false, "%s: tapping exchange %s, routing key \"%s\"", f->name, b->source,
            b->routing_key ? b->routing_key : "");
    }
    return ST_OK;
}

/* Taps one DLQ (f->q found): TAPSET_OK or TAPSET_TAP_FAILED. */
static enum tapset_rc tap_one(struct tapset *ts, struct conn *c, struct tapset_queue *f,
                              const char *from_offset, tapset_note_fn note, void *ctx,
                              enum conn_err *kind, struct error *err)
{
    struct tap *t = &ts->taps[ts->n_taps];
    if (from_offset && f->q->qtype == MGMT_QT_STREAM) {
        if (tap_open_stream(c, 1, f->name, from_offset, ts->n_taps, t, kind, err) != ST_OK) {
            tap_close(c, t);
            return TAPSET_TAP_FAILED;
        }
        say(note, ctx, false,
            "%s: reading the stream from offset %s (reading a stream does not change it)", f->name,
            from_offset);
        f->tapped = true;
        ts->n_taps++;
        return TAPSET_OK;
    }
    if (from_offset)
        say(note, ctx, false, "%s is not a stream (--from-offset is for streams): it is tapped",
            f->name);
    if (tap_open(c, 1, f->name, ts->n_taps, t, kind, err) != ST_OK ||
        bind_like(c, t, ts, f, note, ctx, kind, err) != ST_OK) {
        tap_close(c, t);
        return TAPSET_TAP_FAILED;
    }
    f->hidden = default_exchange_sources(ts, f, note, ctx);
    if (t->n_bindings) {
        f->tapped = true;
        ts->n_taps++;
    } else {
        tap_close(c, t);
        f->hidden = true;
    }
    return TAPSET_OK;
}

enum tapset_rc tapset_open(struct tapset *ts, struct conn *c, struct mgmt *m, const char *vhost,
                           const char *const *names, int n, const char *from_offset,
                           tapset_note_fn note, void *ctx, int *missing, enum conn_err *kind,
                           struct error *err)
{
    memset(ts, 0, sizeof *ts);
    error_clear(err);
    *kind = CONN_OK;
    *missing = -1;
    if (mgmt_list_queues(m, vhost, &ts->list_q, &ts->nq, err) != ST_OK ||
        mgmt_list_exchanges(m, vhost, &ts->list_x, &ts->nx, err) != ST_OK ||
        mgmt_list_bindings(m, vhost, &ts->list_b, &ts->nb, err) != ST_OK)
        return TAPSET_MGMT_FAILED;
    struct dlq_input in = {ts->list_q, ts->nq, ts->list_x, ts->nx, ts->list_b, ts->nb};
    if (dlqfind_run(&in, &ts->rep, err) != ST_OK)
        return TAPSET_FIND_FAILED;
    for (int i = 0; i < n && i < TAPSET_MAX; i++) {
        struct tapset_queue *f = &ts->qs[ts->n++];
        f->name = names[i];
        for (size_t k = 0; k < ts->nq && !f->q; k++)
            if (strcmp(ts->list_q[k].name, f->name) == 0)
                f->q = &ts->list_q[k];
        if (!f->q) {
            *missing = i;
            error_set(err, ST_ENOTFOUND, "there is no queue \"%s\" in virtual host \"%s\"", f->name,
                      vhost);
            return TAPSET_MISSING;
        }
        enum tapset_rc rc = tap_one(ts, c, f, from_offset, note, ctx, kind, err);
        if (rc != TAPSET_OK)
            return rc;
    }
    return TAPSET_OK;
}

bool tapset_any_hidden(const struct tapset *ts)
{
    for (int i = 0; i < ts->n; i++)
        if (ts->qs[i].hidden)
            return true;
    return false;
}

void tapset_close(struct tapset *ts, struct conn *c)
{
    for (unsigned i = 0; i < ts->n_taps; i++)
        tap_close(c, &ts->taps[i]);
    ts->n_taps = 0;
    dlq_report_free(&ts->rep);
    mgmt_queues_free(&ts->list_q, &ts->nq);
    mgmt_exchanges_free(&ts->list_x, &ts->nx);
    mgmt_bindings_free(&ts->list_b, &ts->nb);
}
