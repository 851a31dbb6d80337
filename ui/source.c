/*
 * source: where the UI's messages come from — snapshot files, or a live broker's queues
 * snapshotted with peek — and the progress bar long work shows while it runs. The two are
 * one interface to the views: both fill the app's store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker_opts.h"
#include "app.h"
#include "job.h"
#include "peek.h"
#include "snapshot.h"
#include "term.h"

bool app_progress(struct app *a, const char *what, uint64_t done, uint64_t total, double started)
{
    /* Esc or Ctrl-g cancels, and so does a signal (term_stop_signal); anything else waits. */
    if (term_stop_signal())
        return false;
    int ch = term_key(0);
    if (ch == 27 || ch == ('g' & 0x1f))
        return false;
    int y = a->rows_on_screen - 1, w = a->cols_on_screen;
    double el = clock_mono_s() - started;
    double rate = el > 0 ? (double)done / el : 0;
    char eta[32] = "?";
    if (total && rate > 0 && done <= total)
        duration_format((double)(total - done) / rate, eta);
    char text[256];
    if (total)
        snprintf(text, sizeof text, " %s %llu/%llu  %.0f msg/s  ETA %s  (Esc cancels) ", what,
                 (unsigned long long)done, (unsigned long long)total, rate, eta);
    else
        snprintf(text, sizeof text, " %s %llu  %.0f msg/s  (Esc cancels) ", what,
                 (unsigned long long)done, rate);
    draw_fill(y, 0, w, UA_STATUS);
    int tw = (int)strlen(text);
    int bar = w - tw - 2;
    draw_text(y, 0, w, text, strlen(text), UA_STATUS);
    if (bar > 4 && total) {
        int filled = (int)((double)bar * (double)done / (double)total);
        struct strbuf sb;
        sb_init(&sb);
        sb_addc(&sb, '[');
        for (int i = 0; i < bar - 2; i++)
            sb_adds(&sb, i < filled ? glyph(a, G_BLOCK) : " ");
        sb_addc(&sb, ']');
        draw_safe(y, tw, bar, sb.buf, UA_STATUS);
        sb_free(&sb);
    }
    term_flush();
    return true;
}

static void set_store(struct app *a, struct store *s)
{
    store_free(a->store);
    a->store = s;
    app_data_changed(a);
}

struct loader {
    int file; /* index into a->files */
    FILE *in;
    struct snapshot_reader r;
    long bad;
    char first_bad[256];
    double started;
};

static void loader_close_file(struct loader *l)
{
    if (!l->in)
        return;
    snapshot_reader_close(&l->r);
    if (l->in != stdin)
        fclose(l->in);
    l->in = NULL;
}

static void loader_finish(struct app *a, bool cancelled)
{
    struct loader *l = a->loader;
    loader_close_file(l);
    size_t n = store_count(a->store);
    if (l->bad)
        app_message(a, true, "%ld malformed records skipped (first: %s)", l->bad, l->first_bad);
    else if (cancelled)
        app_message(a, true, "reading stopped: %zu messages read", n);
    else
        app_message(a, false, "%zu messages read", n);
    free(l);
    a->loader = NULL;
    /* What depends on the whole set (the order, the groups, the forest) is made again. */
    app_rows_complete(a);
}

bool app_load_files(struct app *a)
{
    struct store *s = NULL;
    struct error err;
    if (store_new(0, NULL, &s, &err) != ST_OK) {
        app_message(a, true, "%s", err.msg);
        return false;
    }
    set_store(a, s);
    if (a->loader)
        app_load_cancel(a);
    a->loader = xcalloc(1, sizeof *a->loader);
    a->loader->started = clock_mono_s();
    a->loader->file = -1;
    return true;
}

void app_load_cancel(struct app *a)
{
    if (a->loader)
        loader_finish(a, true);
}

bool app_load_step(struct app *a, int budget_ms)
{
    struct loader *l = a->loader;
    if (!l)
        return false;
    double until = clock_mono_s() + budget_ms / 1000.0;
    struct error err;
    /* A key that is waiting ends the slice: it is answered before more is read. */
    while (clock_mono_s() < until && !term_input_pending()) {
        if (!l->in) {
            if (++l->file >= a->n_files) {
                loader_finish(a, false);
                return false;
            }
            const char *name = a->files[l->file];
            l->in = strcmp(name, "-") == 0 ? stdin : fopen(name, "rb");
            if (!l->in) {
                app_message(a, true, "cannot open %s", name);
                continue;
            }
            snapshot_reader_open(&l->r, l->in, name);
        }
        /* A slice of records between clock checks. */
        for (int k = 0; k < 256; k++) {
            struct message m;
            enum snapshot_rc rc = snapshot_read(&l->r, &m, &err);
            if (rc == SNAP_EOF || rc == SNAP_IO_ERROR) {
                if (rc == SNAP_IO_ERROR)
                    app_message(a, true, "%s", err.msg);
                loader_close_file(l);
                break;
            }
            if (rc == SNAP_BAD_RECORD) {
                if (!l->bad++)
                    snprintf(l->first_bad, sizeof l->first_bad, "%.200s", err.msg);
                message_free(&m);
                continue;
            }
            bool ok =
                store_append_line(a->store, &m, l->r.last, l->r.last_len, a->now_ms, &err) == ST_OK;
            message_free(&m);
            if (!ok) {
                app_message(a, true, "%s", err.msg);
                loader_finish(a, true);
                return false;
            }
        }
    }
    app_rows_extend(a);
    return true;
}

void app_load_status(struct app *a, struct strbuf *out)
{
    const struct loader *l = a->loader;
    if (!l)
        return;
    char n[32], r[32];
    size_t count = store_count(a->store);
    double el = clock_mono_s() - l->started;
    sb_addf(out, "reading%s %s messages (%s/s)  %s stops", a->ascii ? "..." : "\xe2\x80\xa6",
            fmt_thousands(count, n), fmt_thousands(el > 0 ? (uint64_t)((double)count / el) : 0, r),
            app_cancel_key(a));
}

struct peek_ui {
    struct app *a;
    struct store *s;
    double started;
    const char *queue;
    bool failed;
};

static bool peek_sink(void *ctx, struct message *m)
{
    struct peek_ui *p = ctx;
    struct error err;
    bool ok = store_append(p->s, m, p->a->now_ms, &err) == ST_OK;
    message_free(m);
    if (!ok) {
        app_message(p->a, true, "%s", err.msg);
        p->failed = true;
    }
    return ok;
}

static bool peek_progress(void *ctx, uint64_t done, uint64_t total)
{
    struct peek_ui *p = ctx;
    char what[200];
    snprintf(what, sizeof what, "peek %.120s", p->queue);
    return app_progress(p->a, what, done, total, p->started);
}

bool app_peek_queues(struct app *a, char **queues, int n)
{
    if (!a->broker)
        return false;
    int rc;
    struct conn *c = broker_connect(a->broker, &rc);
    if (!c) {
        app_message(a, true, "cannot connect to the broker (see the message above)");
        return false;
    }
    struct store *s = NULL;
    struct error err;
    if (store_new(0, NULL, &s, &err) != ST_OK) {
        app_message(a, true, "%s", err.msg);
        conn_close(c);
        return false;
    }
    struct strbuf summary;
    sb_init(&summary);
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        struct peek_ui p = {a, s, clock_mono_s(), queues[i], false};
        struct peek_opts o;
        memset(&o, 0, sizeof o);
        o.queue = queues[i];
        o.info.kind = QK_UNKNOWN;
        o.info.delivery_limit = -1;
        app_queue_info(a, queues[i], &o.info);
        o.sink = peek_sink;
        o.progress = peek_progress;
        o.ctx = &p;
        struct peek_report r;
        enum conn_err kind;
        error_clear(&err);
        if (peek_run(c, &o, &r, &kind, &err) != ST_OK) {
            /* In the summary below, which is the message line (a queue gone since the
             * listing says so there, not as an empty list). */
            if (summary.len)
                sb_adds(&summary, "; ");
            sb_adds(&summary, err.msg);
            ok = false;
            break;
        }
        if (summary.len)
            sb_adds(&summary, "; ");
        sb_addf(&summary, "%s: %s", queues[i], r.detail);
        if (r.end == PEEK_CANCELLED) {
            ok = false;
            sb_adds(&summary, " (cancelled: every message was given back)");
        }
    }
    conn_close(c);
    set_store(a, s);
    app_message(a, !ok, "%s", summary.buf ? summary.buf : "");
    sb_free(&summary);
    free(a->source_label);
    struct strbuf label;
    sb_init(&label);
    for (int i = 0; i < n; i++) {
        if (i)
            sb_adds(&label, ", ");
        sb_adds(&label, queues[i]);
    }
    a->source_label = sb_detach(&label, NULL);
    if (queues != a->queues) {
        for (int i = 0; i < a->n_queues; i++)
            free(a->queues[i]);
        free(a->queues);
        a->queues = xcalloc((size_t)n, sizeof *a->queues);
        for (int i = 0; i < n; i++)
            a->queues[i] = xstrdup(queues[i]);
        a->n_queues = n;
    }
    return ok;
}

void app_refresh(struct app *a)
{
    if (a->source == SOURCE_FILES)
        app_load_files(a);
    else if (a->n_queues)
        app_peek_queues(a, a->queues, a->n_queues);
    else
        app_reload_views(a);
}
