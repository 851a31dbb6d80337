/*
 * source_peek: a live broker as the explorer's source (source.h) — its queues snapshotted by
 * a peek of each in turn, stepped in slices of a few milliseconds so that every key is
 * answered while a hundred thousand messages arrive; the rows are joined as they come.
 * Stopping gives every message back to its queue (peek.h), and so does the end of each peek.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker_opts.h"
#include "app.h"
#include "job.h"
#include "peek.h"
#include "source.h"
#include "ui.h"

/* A peek's slice: short, so that a key waits for no more than one. */
#define PEEK_SLICE_S 0.003

struct peek_src {
    char *broker_label; /* the broker, before a queue is opened */
    char *label;        /* the queues opened */
    char **queues;
    int n;
    int at; /* the queue being peeked */
    struct conn *c;
    struct peek *p;
    double started; /* this queue's peek */
    struct strbuf summary;
    bool failed; /* a queue could not be read, or a message kept */
};

void *source_peek_new(const char *label)
{
    struct peek_src *s = xcalloc(1, sizeof *s);
    s->broker_label = xstrdup(label);
    sb_init(&s->summary);
    return s;
}

/* The summary, ready for one more queue's sentence. */
static struct strbuf *summary_next(struct peek_src *s)
{
    if (s->summary.len)
        sb_adds(&s->summary, "; ");
    return &s->summary;
}

static bool sink(void *ctx, struct message *m)
{
    struct app *a = ctx;
    struct error err;
    bool ok = store_append(a->store, m, a->now_ms, &err) == ST_OK;
    message_free(m);
    if (!ok)
        app_message(a, true, "%s", err.msg);
    return ok;
}

/* A read again on another node (peek.h, failover): the first queue's messages so far go with
 * a fresh store. Only for the first queue opened: the store cannot take back one queue's
 * messages alone. */
static bool restart(void *ctx)
{
    struct app *a = ctx;
    app_message(a, false, "the node was lost: reading the queue again on the next node");
    return app_source_fresh_store(a);
}

/* Starts the peek of queue s->at: false, with the reason in the summary, when it cannot. */
static bool begin_queue(struct app *a, struct peek_src *s)
{
    struct peek_opts o;
    memset(&o, 0, sizeof o);
    o.queue = s->queues[s->at];
    o.info.kind = QK_UNKNOWN;
    o.info.delivery_limit = -1;
    app_queue_info(a, o.queue, &o.info);
    o.sink = sink;
    o.ctx = a;
    o.conn = &s->c; /* failover: s->c may be replaced (or NULL when no node answers) */
    o.restart = s->at == 0 ? restart : NULL;
    struct error err;
    enum conn_err kind;
    error_clear(&err);
    s->started = clock_mono_s();
    if (peek_start(s->c, &o, &s->p, &kind, &err) != ST_OK) {
        /* In the summary, which is the message line (a queue gone since the listing says so
         * there, not as an empty list). */
        sb_adds(summary_next(s), err.msg);
        s->failed = true;
        return false;
    }
    return true;
}

/* The peek of queue s->at is over (or stopped): its report joins the summary. */
static void end_queue(struct peek_src *s, bool cancelled)
{
    if (!s->p)
        return;
    if (cancelled)
        peek_cancel(s->p);
    struct peek_report r;
    struct error err;
    enum conn_err kind;
    error_clear(&err);
    if (peek_finish(s->p, &r, &kind, &err) != ST_OK) {
        sb_adds(summary_next(s), err.msg);
        s->failed = true;
    } else {
        sb_addf(summary_next(s), "%s: %s", s->queues[s->at], r.detail);
        if (r.end == PEEK_CANCELLED) {
            s->failed = true;
            sb_adds(&s->summary, " (cancelled: every message was given back)");
        }
    }
    s->p = NULL;
}

/* Every queue is done, or the reading stopped: the connection goes, the summary is said and
 * what depends on the whole set is made. */
static void done(struct app *a, struct peek_src *s)
{
    if (s->c)
        conn_close(s->c);
    s->c = NULL;
    app_message(a, s->failed, "%s", s->summary.buf ? s->summary.buf : "");
    app_rows_complete(a);
}

static void close_peek(struct app *a, struct peek_src *s)
{
    if (!s->c)
        return;
    end_queue(s, true);
    done(a, s);
}

static bool start(struct app *a, void *state)
{
    struct peek_src *s = state;
    close_peek(a, s);
    if (!s->n) {
        /* Nothing opened yet: r looks at the queues again. */
        app_reload_views(a);
        return false;
    }
    int rc;
    s->c = broker_connect(a->broker, &rc);
    if (!s->c) {
        app_message(a, true, "cannot connect to the broker (see the message above)");
        return false;
    }
    if (!app_source_fresh_store(a)) {
        conn_close(s->c);
        s->c = NULL;
        return false;
    }
    sb_reset(&s->summary);
    s->failed = false;
    s->at = 0;
    if (!begin_queue(a, s)) {
        done(a, s);
        return false;
    }
    return true;
}

static bool step(struct app *a, void *state, double until)
{
    struct peek_src *s = state;
    while (s->c && !job_yield(until)) {
        double slice = clock_mono_s() + PEEK_SLICE_S;
        if (peek_step(s->p, slice < until ? slice : until))
            continue;
        end_queue(s, false);
        if (s->failed || !s->c || ++s->at >= s->n || !begin_queue(a, s)) {
            done(a, s);
            return false;
        }
    }
    app_rows_extend(a);
    return s->c != NULL;
}

/* The peek stops reading at its next step and gives everything back in the steps after it
 * (peek.h): the status line says so meanwhile, and the summary comes when it is done (a
 * cancelled peek ends the reading: no queue after it is read). */
static bool cancel(struct app *a, void *state)
{
    struct peek_src *s = state;
    if (!s->p)
        return false;
    peek_cancel(s->p);
    return true;
}

/* " peek QUEUE DONE/TOTAL  RATE msg/s  ETA T  (Esc cancels) [███   ]": the bar fills what
 * the status line leaves. */
static void status(struct app *a, void *state, struct strbuf *out)
{
    const struct peek_src *s = state;
    if (!s->p)
        return;
    uint64_t done_n, total;
    peek_counts(s->p, &done_n, &total);
    const char *doing = peek_doing(s->p);
    if (strcmp(doing, "reading") != 0) {
        sb_addf(out, "peek %.120s: %s%s ", s->queues[s->at], doing,
                a->ascii ? "..." : "\xe2\x80\xa6");
        if (strcmp(doing, "counting") == 0)
            sb_addf(out, " (%s cancels) ", app_cancel_key(a));
        return;
    }
    double el = clock_mono_s() - s->started;
    double rate = el > 0 ? (double)done_n / el : 0;
    char eta[32] = "?";
    if (total && rate > 0 && done_n <= total)
        duration_format((double)(total - done_n) / rate, eta);
    size_t at = out->len;
    sb_addf(out, "peek %.120s %llu/%llu  %.0f msg/s  ETA %s  (%s cancels) ", s->queues[s->at],
            (unsigned long long)done_n, (unsigned long long)total, rate, eta, app_cancel_key(a));
    /* The status line begins with a space, and keeps one at its end. */
    int bar = a->cols_on_screen - 1 - (int)(out->len - at) - 2;
    if (bar <= 4 || !total)
        return;
    int filled = (int)((double)(bar - 2) * (double)done_n / (double)total);
    sb_addc(out, '[');
    for (int i = 0; i < bar - 2; i++)
        sb_adds(out, i < filled ? glyph(a, G_BLOCK) : " ");
    sb_addc(out, ']');
}

static const char *label(const struct app *a, void *state)
{
    const struct peek_src *s = state;
    (void)a;
    return s->label ? s->label : s->broker_label;
}

static void clear_queues(struct peek_src *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->queues[i]);
    free(s->queues);
    s->queues = NULL;
    s->n = 0;
}

static void free_(struct app *a, void *state)
{
    struct peek_src *s = state;
    close_peek(a, s);
    clear_queues(s);
    sb_free(&s->summary);
    free(s->broker_label);
    free(s->label);
    free(s);
}

const struct source_ops source_peek_ops = {
    .name = "broker",
    .broker = true,
    .start = start,
    .step = step,
    .cancel = cancel,
    .status = status,
    .label = label,
    .free = free_,
};

bool source_peek_open(struct app *a, char *const *queues, int n)
{
    if (a->src.ops != &source_peek_ops || !a->broker)
        return false;
    struct peek_src *s = a->src.state;
    app_source_cancel(a);
    clear_queues(s);
    s->queues = xcalloc((size_t)n + 1, sizeof *s->queues);
    struct strbuf label;
    sb_init(&label);
    for (int i = 0; i < n; i++) {
        s->queues[i] = xstrdup(queues[i]);
        if (i)
            sb_adds(&label, ", ");
        sb_adds(&label, queues[i]);
    }
    s->n = n;
    free(s->label);
    s->label = sb_detach(&label, NULL);
    return app_source_start(a);
}

int source_peek_queues(const struct app *a, char *const **queues)
{
    if (a->src.ops != &source_peek_ops)
        return 0;
    const struct peek_src *s = a->src.state;
    *queues = s->queues;
    return s->n;
}
