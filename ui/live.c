/*
 * live: following the open queues as dead letters arrive (live.h) — the feed stepped by the
 * loop, the arrivals taken into the store and marked, the causes seen in this session and the
 * flag for a new one, the rates the title and the groups view show, and `L`. The tap feed
 * (a tap set on a connection of its own, src/broker/tapset.h) is here too; the tests give
 * live_start a feed of their own.
 */
#include "live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "broker_opts.h"
#include "groups_fingerprint.h"
#include "job.h"
#include "sanitize.h"
#include "tapset.h"
#include "term.h"
#include "ui.h"

/* A slice of reading: short, so that a key waits for no more than one. */
#define LIVE_SLICE_S 0.004
/* The views take the arrivals in at most this often (a flood is drawn, not re-grouped, per
 * arrival). */
#define LIVE_RELOAD_S 0.2
enum { RATE_SECONDS = 60, GROUP_RATE_MS = 3 * 60000 };

struct live {
    const struct live_feed *feed; /* NULL: not following */
    void *ctx;
    char *label;
    /* The arrivals: entries [from, the store's count) of the store of generation store_gen. */
    uint64_t store_gen;
    size_t from;
    bool have_from;
    uint64_t arrivals;
    int64_t sec_stamp[RATE_SECONDS]; /* per second (epoch seconds), the arrivals of the last */
    uint32_t sec_count[RATE_SECONDS];
    /* The causes seen in this session: error fingerprints, sorted. */
    uint64_t *seen;
    size_t n_seen, cap_seen;
    char *buf; /* STORE_TEXT_MAX */
    bool pending;
    double last_reload;
};

bool live_active(const struct app *a)
{
    return a->live && a->live->feed;
}

/* Adds fp to the causes seen: true when it was new. */
static bool seen_add(struct live *l, uint64_t fp)
{
    size_t lo = 0, hi = l->n_seen;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->seen[mid] == fp)
            return false;
        if (l->seen[mid] < fp)
            lo = mid + 1;
        else
            hi = mid;
    }
    xgrow((void **)&l->seen, &l->cap_seen, l->n_seen + 1, sizeof *l->seen);
    memmove(l->seen + lo + 1, l->seen + lo, (l->n_seen - lo) * sizeof *l->seen);
    l->seen[lo] = fp;
    l->n_seen++;
    return true;
}

static struct live *live_state(struct app *a)
{
    if (!a->live) {
        a->live = xcalloc(1, sizeof *a->live);
        a->live->buf = xmalloc(STORE_TEXT_MAX);
    }
    return a->live;
}

void live_start(struct app *a, const struct live_feed *feed, void *ctx, const char *label)
{
    struct live *l = live_state(a);
    if (l->feed)
        live_stop(a, NULL);
    l->feed = feed;
    l->ctx = ctx;
    free(l->label);
    l->label = xstrdup(label);
    if (!l->have_from || l->store_gen != a->store_gen) {
        /* A new store: what is in it is the snapshot; arrivals begin after it. */
        l->store_gen = a->store_gen;
        l->from = a->store ? store_count(a->store) : 0;
        l->have_from = true;
        l->arrivals = 0;
        memset(l->sec_count, 0, sizeof l->sec_count);
    }
    /* Every cause of the store counts as seen (the filter may hide some from the groups):
     * grouping a million entries takes about a tenth of a second. */
    if (a->store && store_count(a->store)) {
        struct groups *g = groups_build(a->store, NULL);
        for (size_t k = 0; k < groups_count(g); k++)
            seen_add(l, groups_at(g, k)->fingerprint);
        groups_free(g);
    }
    l->pending = false;
    l->last_reload = 0;
}

void live_stop(struct app *a, const char *why)
{
    struct live *l = a->live;
    if (!l || !l->feed)
        return;
    l->feed->close(l->ctx);
    l->feed = NULL;
    l->ctx = NULL;
    if (l->pending)
        app_reload_views(a);
    l->pending = false;
    if (why)
        app_message(a, false, "%s", why);
}

/* A new cause: the bottom line names it (sanitised, cut), and the bell rings. */
static void flag_new_cause(struct app *a, const struct store_entry *e, const char *fp_text,
                           size_t fp_len)
{
    struct live *l = a->live;
    struct strbuf sb;
    sb_init(&sb);
    sb_adds(&sb, "new cause: ");
    sanitize_fit(&sb, fp_len ? fp_text : "(no error)", fp_len ? fp_len : 10, 160, app_san_flags(a));
    size_t n = store_text(a->store, e->queue, l->buf);
    sb_adds(&sb, "  in ");
    sanitize_fit(&sb, l->buf, n, 60, app_san_flags(a));
    app_message(a, true, "%s", sb.buf);
    sb_free(&sb);
    if (!a->no_bell)
        term_bell();
}

/* One arrival: into the store (a copy: the DLQ keeps its own), counted, its cause looked at. */
static void arrive(struct app *a, struct live *l, struct message *m, int64_t now)
{
    struct error err;
    if (store_append(a->store, m, now, &err) != ST_OK) {
        app_message(a, true, "live: %s", err.msg);
        return;
    }
    l->arrivals++;
    int64_t sec = now / 1000;
    int slot = (int)(sec % RATE_SECONDS);
    if (l->sec_stamp[slot] != sec) {
        l->sec_stamp[slot] = sec;
        l->sec_count[slot] = 0;
    }
    l->sec_count[slot]++;
    const struct store_entry *e = store_entry_at(a->store, store_count(a->store) - 1);
    size_t n = store_text(a->store, e->error, l->buf);
    struct strbuf norm;
    sb_init(&norm);
    uint64_t fp = error_fingerprint(l->buf, n, &norm);
    if (seen_add(l, fp))
        flag_new_cause(a, e, norm.buf ? norm.buf : "", norm.len);
    sb_free(&norm);
}

enum job_rc live_step(struct app *a, double until, bool *changed)
{
    struct live *l = a->live;
    if (!live_active(a))
        return JOB_DONE;
    if (l->store_gen != a->store_gen) {
        live_stop(a, "live: stopped, a new snapshot replaced the list (L follows again)");
        *changed = true;
        return JOB_DONE;
    }
    double end = clock_mono_s() + LIVE_SLICE_S;
    if (until < end)
        end = until;
    enum job_rc rc = JOB_WAIT;
    bool got = false;
    int64_t now = clock_now_ms();
    for (;;) {
        if (got && job_yield(end)) {
            rc = JOB_MORE;
            break;
        }
        struct message m;
        char why[256] = "";
        enum live_next r = l->feed->next(l->ctx, &m, why, sizeof why);
        if (r == LIVE_NONE)
            break;
        if (r == LIVE_FAILED) {
            if (got)
                app_rows_extend(a);
            char msg[400];
            snprintf(msg, sizeof msg, "live: stopped: %s", why);
            live_stop(a, msg);
            a->message_is_error = true;
            *changed = true;
            return JOB_DONE;
        }
        arrive(a, l, &m, now);
        message_free(&m);
        got = true;
    }
    if (got) {
        app_rows_extend(a);
        l->pending = true;
        *changed = true;
    }
    double t = clock_mono_s();
    if (l->pending && !app_groups_building(a) && !app_rows_rescanning(a) &&
        t - l->last_reload >= LIVE_RELOAD_S) {
        app_reload_views(a);
        l->pending = false;
        l->last_reload = t;
        *changed = true;
    }
    return rc;
}

bool live_is_new(const struct app *a, size_t entry)
{
    const struct live *l = a->live;
    return l && l->have_from && l->store_gen == a->store_gen && entry >= l->from;
}

uint64_t live_arrivals(const struct app *a)
{
    const struct live *l = a->live;
    return l && l->have_from && l->store_gen == a->store_gen ? l->arrivals : 0;
}

double live_rate_per_min(const struct app *a, int64_t now_ms)
{
    const struct live *l = a->live;
    if (!l)
        return 0;
    int64_t sec = now_ms / 1000;
    uint64_t n = 0;
    for (int i = 0; i < RATE_SECONDS; i++)
        if (l->sec_stamp[i] > sec - RATE_SECONDS && l->sec_stamp[i] <= sec)
            n += l->sec_count[i];
    return (double)n;
}

void live_title(const struct app *a, char *out, size_t len)
{
    if (!len)
        return;
    out[0] = '\0';
    if (!live_active(a))
        return;
    char n[32];
    fmt_thousands(live_arrivals(a), n);
    snprintf(out, len, "LIVE %s new %.0f/min  ", n, live_rate_per_min(a, clock_now_ms()));
}

double live_group_rate(const struct app *a, const struct group *g, int64_t now_ms)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < g->count; k++) {
        int64_t t = entry_time_dead_at(a->store, g->members[k], NULL);
        if (t > now_ms - GROUP_RATE_MS && t <= now_ms)
            n++;
    }
    return (double)n * 60000.0 / GROUP_RATE_MS;
}

void live_free(struct app *a)
{
    struct live *l = a->live;
    if (!l)
        return;
    live_stop(a, NULL);
    free(l->label);
    free(l->seen);
    free(l->buf);
    free(l);
    a->live = NULL;
}

/* ---- the tap feed ------------------------------------------------------------------- */

struct tap_feed {
    struct conn *c;
    struct tapset ts;
    char *names[TAPSET_MAX];
    int n;
};

static enum live_next tap_feed_next(void *ctx, struct message *out, char *why, size_t why_len)
{
    struct tap_feed *f = ctx;
    unsigned which;
    enum conn_err kind = CONN_OK;
    struct error err;
    error_clear(&err);
    switch (tap_next(f->c, f->ts.taps, f->ts.n_taps, 0, out, &which, &kind, &err)) {
    case TAP_MESSAGE:
        return LIVE_MESSAGE;
    case TAP_TIMEOUT:
        return LIVE_NONE;
    case TAP_FAILED:
        break;
    }
    snprintf(why, why_len, "%s", err.msg);
    return LIVE_FAILED;
}

static void tap_feed_close(void *ctx)
{
    struct tap_feed *f = ctx;
    tapset_close(&f->ts, f->c);
    if (f->c)
        conn_close(f->c);
    for (int i = 0; i < f->n; i++)
        free(f->names[i]);
    free(f);
}

static const struct live_feed tap_feed_ops = {tap_feed_next, tap_feed_close};

/* What the tap set-up says that matters here: what a tap cannot see. */
static void note_hidden(void *ctx, bool hidden, const char *text)
{
    struct strbuf *sb = ctx;
    if (!hidden)
        return;
    if (sb->len)
        sb_adds(sb, "; ");
    sb_adds(sb, text);
}

/* Taps the queues the source opened, on a connection of its own: true when following. */
static bool follow_queues(struct app *a, char *const *queues, int n)
{
    struct tap_feed *f = xcalloc(1, sizeof *f);
    struct error err;
    error_clear(&err);
    if (broker_open(a->broker, &f->c, &err) != ST_OK) {
        app_message(a, true, "live: %s", err.msg);
        free(f);
        return false;
    }
    struct strbuf label, hidden;
    sb_init(&label);
    sb_init(&hidden);
    for (int i = 0; i < n && i < TAPSET_MAX; i++) {
        f->names[f->n++] = xstrdup(queues[i]);
        sb_addf(&label, "%s%s", i ? ", " : "", queues[i]);
    }
    int missing;
    enum conn_err kind;
    enum tapset_rc rc =
        tapset_open(&f->ts, f->c, a->mgmt, conn_vhost(f->c), (const char *const *)f->names, f->n,
                    NULL, note_hidden, &hidden, &missing, &kind, &err);
    bool ok = false;
    if (rc != TAPSET_OK) {
        app_message(a, true, "live: %s", err.msg);
    } else if (!f->ts.n_taps) {
        app_message(a, true,
                    "live: nothing that feeds %s can be tapped (%s); its depth is in the "
                    "queues view",
                    label.buf, hidden.len ? hidden.buf : "it has no binding but the default");
    } else {
        ok = true;
    }
    if (!ok) {
        tap_feed_close(f);
    } else {
        live_start(a, &tap_feed_ops, f, label.buf);
        if (hidden.len)
            app_message(a, true, "LIVE, but not everything: %s", hidden.buf);
        else
            app_message(a, false,
                        "LIVE: following %s with a tap of dlqx's own (the queue is not touched); "
                        "L stops",
                        label.buf);
    }
    sb_free(&label);
    sb_free(&hidden);
    return ok;
}

int act_live(struct app *a, enum action act)
{
    (void)act;
    if (live_active(a)) {
        live_stop(a, "live: stopped following (the tap is deleted)");
        return HR_REDRAW;
    }
    const struct view *v = app_view(a);
    const char *name = v ? v->ops->name : "";
    if (strcmp(name, "messages") != 0 && strcmp(name, "groups") != 0 &&
        strcmp(name, "timeline") != 0) {
        app_message(a, true, "L follows the open queue from the messages, groups or timeline view");
        return HR_REDRAW;
    }
    if (!app_source_is_broker(a) || !a->broker) {
        app_message(a, true,
                    "live needs a broker: these are snapshot files (dlqx QUEUE follows "
                    "a queue as it fills)");
        return HR_REDRAW;
    }
    char *const *queues;
    int n = source_peek_queues(a, &queues);
    if (!n) {
        app_message(a, true, "live: open a queue first (Enter in the queues view)");
        return HR_REDRAW;
    }
    if (app_source_busy(a)) {
        app_message(a, true, "live: the snapshot is still being read; L when it is done");
        return HR_REDRAW;
    }
    if (!a->mgmt) {
        app_message(a, true,
                    "live needs the management API to find what feeds the queue "
                    "(--mgmt-url or DLQX_MGMT_URL)");
        return HR_REDRAW;
    }
    follow_queues(a, queues, n);
    return HR_REDRAW;
}
