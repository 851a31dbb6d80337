/*
 * source_peek: a live broker as the explorer's source (source.h) — its queues snapshotted by
 * a peek of each, side by side: every queue opened has a connection and a peek of its own
 * (a shared connection cannot carry two peeks: docs/peek.md, "Several queues at once"), and
 * the peeks are stepped in turn in slices of a few milliseconds, so that every key is answered
 * while a hundred thousand messages arrive and a queue the broker pauses does not hold up the
 * others; the rows are joined as they come. Stopping gives every message back to its queue
 * (peek.h), and so does the end of each peek.
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

/* A peek's slice: short, so that a key waits for no more than one per queue. */
#define PEEK_SLICE_S 0.003

/* One queue's reading. */
struct qread {
    struct conn *c;
    struct peek *p;     /* NULL: not started, or over */
    struct strbuf said; /* how it ended: its part of the summary */
    bool failed;
    uint64_t done_n, total; /* its counts when it ended */
};

struct peek_src {
    char *broker_label; /* the broker, before a queue is opened */
    char *label;        /* the queues opened */
    char **queues;
    int n;
    struct qread *q; /* n of them while reading */
    int next;        /* the queue stepped first in the next round (turns) */
    bool reading;
    double started;
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

/* Connects for queue i and starts its peek: false, with the reason as its part of the
 * summary, when it cannot. */
static bool begin_queue(struct app *a, struct peek_src *s, int i)
{
    struct qread *q = &s->q[i];
    sb_init(&q->said);
    int rc;
    q->c = broker_connect(a->broker, &rc);
    if (!q->c) {
        sb_addf(&q->said, "%s: cannot connect to the broker (see the message above)", s->queues[i]);
        q->failed = true;
        return false;
    }
    struct peek_opts o;
    memset(&o, 0, sizeof o);
    o.queue = s->queues[i];
    o.info.kind = QK_UNKNOWN;
    o.info.delivery_limit = -1;
    app_queue_info(a, o.queue, &o.info);
    o.sink = sink;
    o.ctx = a;
    o.conn = &q->c; /* failover: q->c may be replaced (or NULL when no node answers) */
    /* Only one queue opened: the store cannot take back one queue's messages alone. */
    o.restart = s->n == 1 ? restart : NULL;
    struct error err;
    enum conn_err kind;
    error_clear(&err);
    if (peek_start(q->c, &o, &q->p, &kind, &err) != ST_OK) {
        /* In the summary, which is the message line (a queue gone since the listing says so
         * there, not as an empty list). */
        sb_adds(&q->said, err.msg);
        q->failed = true;
        q->p = NULL;
        return false;
    }
    return true;
}

/* The peek of queue i is over (or stopped): its report is its part of the summary. */
static void end_queue(struct peek_src *s, int i, bool cancelled)
{
    struct qread *q = &s->q[i];
    if (q->p) {
        if (cancelled)
            peek_cancel(q->p);
        peek_counts(q->p, &q->done_n, &q->total);
        struct peek_report r;
        struct error err;
        enum conn_err kind;
        error_clear(&err);
        if (peek_finish(q->p, &r, &kind, &err) != ST_OK) {
            sb_adds(&q->said, err.msg);
            q->failed = true;
        } else {
            sb_addf(&q->said, "%s: %s", s->queues[i], r.detail);
            if (r.count_unsure)
                sb_addf(&q->said, " (%s)", PEEK_UNSURE_TEXT);
            if (r.end == PEEK_CANCELLED) {
                q->failed = true;
                sb_adds(&q->said, " (cancelled: every message was given back)");
            }
        }
        q->p = NULL;
    }
    conn_close(q->c);
    q->c = NULL;
}

/* Every queue is done, or the reading stopped: the connections go, the summary (the queues
 * in the order opened) is said and what depends on the whole set is made. */
static void done(struct app *a, struct peek_src *s)
{
    sb_reset(&s->summary);
    s->failed = false;
    for (int i = 0; i < s->n; i++) {
        end_queue(s, i, false);
        if (s->q[i].said.len) {
            if (s->summary.len)
                sb_adds(&s->summary, "; ");
            sb_adds(&s->summary, s->q[i].said.buf);
        }
        s->failed = s->failed || s->q[i].failed;
        sb_free(&s->q[i].said);
    }
    free(s->q);
    s->q = NULL;
    s->reading = false;
    if (s->failed) /* a queue not read to its end: what is shown is partial (the title says) */
        app_source_mark_stopped(a);
    app_message(a, s->failed, "%s", s->summary.buf ? s->summary.buf : "");
    app_rows_complete(a);
}

static void close_peek(struct app *a, struct peek_src *s)
{
    if (!s->reading)
        return;
    for (int i = 0; i < s->n; i++)
        end_queue(s, i, true);
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
    if (!app_source_fresh_store(a))
        return false;
    s->q = xcalloc((size_t)s->n, sizeof *s->q);
    s->reading = true;
    s->next = 0;
    s->started = clock_mono_s();
    bool any = false;
    for (int i = 0; i < s->n; i++)
        any = begin_queue(a, s, i) || any;
    if (!any) {
        done(a, s);
        return false;
    }
    return true;
}

/* One round: a slice of each queue still reading, from s->next on. False when none is. */
static bool round_(struct peek_src *s, double until)
{
    bool any = false;
    for (int k = 0; k < s->n; k++) {
        int i = (s->next + k) % s->n;
        struct qread *q = &s->q[i];
        if (!q->p)
            continue;
        double slice = clock_mono_s() + PEEK_SLICE_S;
        if (peek_step(q->p, slice < until ? slice : until))
            any = true;
        else
            end_queue(s, i, false);
    }
    s->next = (s->next + 1) % s->n;
    return any;
}

static bool step(struct app *a, void *state, double until)
{
    struct peek_src *s = state;
    while (s->reading && !job_yield(until)) {
        if (!round_(s, until)) {
            done(a, s);
            return false;
        }
    }
    app_rows_extend(a);
    return s->reading;
}

/* Every peek stops reading at its next step and gives everything back in the steps after it
 * (peek.h): the status line says so meanwhile, and the summary comes when all are done. */
static bool cancel(struct app *a, void *state)
{
    struct peek_src *s = state;
    (void)a;
    bool any = false;
    for (int i = 0; s->reading && i < s->n; i++)
        if (s->q[i].p) {
            peek_cancel(s->q[i].p);
            any = true;
        }
    return any;
}

/* " peek QUEUE DONE/TOTAL  RATE msg/s  ETA T  (Esc cancels) [███   ]": the bar fills what
 * the status line leaves. */
static void status(struct app *a, void *state, struct strbuf *out)
{
    const struct peek_src *s = state;
    if (!s->reading)
        return;
    /* The counts of all; what the first still at it is doing, unless one is reading. */
    uint64_t done_n = 0, total = 0;
    const char *doing = NULL;
    for (int i = 0; i < s->n; i++) {
        uint64_t d = s->q[i].done_n, t = s->q[i].total;
        if (s->q[i].p)
            peek_counts(s->q[i].p, &d, &t);
        done_n += d;
        total += t;
        if (!s->q[i].p)
            continue;
        const char *its = peek_doing(s->q[i].p);
        if (!doing || strcmp(its, "reading") == 0)
            doing = its;
    }
    if (!doing)
        return;
    char what[140];
    if (s->n == 1)
        snprintf(what, sizeof what, "%.120s", s->queues[0]);
    else
        snprintf(what, sizeof what, "%d queues", s->n);
    if (strcmp(doing, "reading") != 0) {
        sb_addf(out, "peek %s: %s%s ", what, doing, a->ascii ? "..." : "\xe2\x80\xa6");
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
    sb_addf(out, "peek %s %llu/%llu  %.0f msg/s  ETA %s  (%s cancels) ", what,
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
