/*
 * timeline: dead-letter arrivals over time (when each was dead-lettered, where the message says;
 * else when it was first seen), per minute or hour as the span asks — when the
 * incident began and whether it is still going. A sparkline over the whole span, then one
 * bar per bucket; Enter shows the messages of a bucket.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "filter.h"
#include "groups.h"
#include "job.h"

/* ---- the job: the timeline made a slice at a time (ten million entries: ~0.25 s) ---- */

struct timeline_job {
    struct timeline_builder b;
    struct timeline made;
    uint32_t *idx; /* owned; NULL: every entry */
    uint64_t store_gen, set_gen;
    size_t n_rows;
    int64_t minute;
};

static enum job_rc tl_step(struct app *a, struct job *j, double until)
{
    struct timeline_job *t = j->state;
    size_t left;
    (void)a;
    while ((left = timeline_step(&t->b, 65536))) {
        j->total = 2 * t->b.count;
        j->done = j->total - left;
        if (job_yield(until))
            return JOB_MORE;
    }
    return JOB_DONE;
}

static void tl_describe(struct app *a, const struct job *j, struct strbuf *out)
{
    const struct timeline_job *t = j->state;
    char n[32];
    (void)a;
    sb_addf(out, "counting %s messages by time", fmt_thousands(t->n_rows, n));
}

static void build(struct app *a, struct view *v);

static void tl_end(struct app *a, struct job *j, bool cancelled)
{
    struct timeline_job *t = j->state;
    if (!cancelled && t->store_gen == a->store_gen) {
        timeline_free(a->timeline);
        *a->timeline = t->made;
        a->timeline_store_gen = t->store_gen;
        a->timeline_set_gen = t->set_gen;
        a->timeline_rows = t->n_rows;
        a->timeline_minute = t->minute;
        a->timeline_made++;
        for (int i = 0; i < a->depth; i++)
            if (a->stack[i].ops == &view_timeline_ops)
                build(a, &a->stack[i]);
    } else {
        timeline_free(&t->made);
        if (cancelled && t->store_gen == a->store_gen && t->set_gen == a->set_gen)
            a->timeline_cancelled = true; /* not again until the next visit */
    }
    free(t->idx);
    free(t);
}

static const struct job_ops timeline_job_ops = {tl_step, tl_describe, tl_end};

static bool timeline_building(const struct app *a)
{
    return job_state(a, JOB_TIMELINE, &timeline_job_ops) != NULL;
}

/* The app's timeline of its rows (ui.h), its job started when it is not the current one (the
 * one before stays on screen meanwhile). Over every entry of the store the entries are read
 * in their own order rather than through the rows (the same set; sequential, where the
 * rows' order jumps about ten million entries). */
static const struct timeline *timeline_of(struct app *a)
{
    int64_t minute = a->now_ms / 60000;
    if (!a->timeline)
        a->timeline = xcalloc(1, sizeof *a->timeline);
    if (a->timeline_store_gen != a->store_gen) { /* refs into a store that is gone */
        timeline_free(a->timeline);
        a->timeline_store_gen = a->store_gen;
        a->timeline_rows = SIZE_MAX;
    }
    if (a->timeline_set_gen == a->set_gen && a->timeline_rows == a->n_rows &&
        a->timeline_minute == minute)
        return a->timeline;
    if (!a->store || a->timeline_cancelled)
        return a->timeline;
    const struct timeline_job *run = job_state(a, JOB_TIMELINE, &timeline_job_ops);
    if (run && run->store_gen == a->store_gen && run->set_gen == a->set_gen)
        return a->timeline; /* on its way (rows read meanwhile: made again after) */
    struct timeline_job *t = xcalloc(1, sizeof *t);
    t->store_gen = a->store_gen;
    t->set_gen = a->set_gen;
    t->n_rows = a->n_rows;
    t->minute = minute;
    struct timeline_options opt;
    memset(&opt, 0, sizeof opt);
    opt.now_ms = a->now_ms;
    opt.time = entry_time_dead_at; /* arrivals in the DLQ, where the message says when */
    if (a->n_rows != store_count(a->store)) {
        t->idx = xcalloc(a->n_rows ? a->n_rows : 1, sizeof *t->idx);
        for (size_t i = 0; i < a->n_rows; i++)
            t->idx[i] = (uint32_t)a->rows[i];
        opt.indices = t->idx;
        opt.n_indices = a->n_rows;
    }
    timeline_begin(&t->b, a->store, &opt, &t->made);
    job_start(a, JOB_TIMELINE, &timeline_job_ops, t);
    return a->timeline;
}

static void build(struct app *a, struct view *v)
{
    bool was_empty = !v->lines;
    v->lines = timeline_of(a)->n;
    if (was_empty && v->lines) /* it came: start at the end */
        v->cursor = v->lines - 1;
    if (v->cursor >= v->lines)
        v->cursor = v->lines ? v->lines - 1 : 0;
}

static void open_(struct app *a, struct view *v, void *with)
{
    (void)with;
    a->timeline_cancelled = false; /* a visit makes it again */
    v->lines = 0;
    build(a, v);
    /* Start at the end: is it still going? */
    if (v->lines)
        v->cursor = v->lines - 1;
}

static void close_(struct app *a, struct view *v)
{
    (void)a;
    (void)v;
}

static void draw(struct app *a, struct view *v, int top, int height, int width)
{
    const struct timeline *t = timeline_of(a);
    v->lines = t->n;
    if (!t->n) {
        char count[32];
        if (timeline_building(a))
            draw_textf(top + 1, 2, width - 4, UA_DIM, "counting %s dead letters by time",
                       fmt_thousands(a->n_rows, count));
        else if (a->timeline_cancelled)
            draw_safe(top + 1, 2, width - 4, "the timeline was not made: visit it again to make it",
                      UA_DIM);
        else
            draw_safe(top + 1, 2, width - 4, "no dated dead letters", UA_DIM);
        return;
    }
    struct strbuf sb;
    sb_init(&sb);
    timeline_render(t, (size_t)(width > 4 ? width - 2 : 2), a->ascii ? TIMELINE_ASCII : 0, &sb);
    /* two lines: the sparkline and the legend */
    char *nl = sb.buf ? strchr(sb.buf, '\n') : NULL;
    if (nl) {
        *nl = '\0';
        draw_safe(top, 1, width - 1, sb.buf, UA_ACCENT);
        char *legend = nl + 1;
        char *end = strchr(legend, '\n');
        if (end)
            *end = '\0';
        draw_safe(top + 1, 1, width - 1, legend, t->trend == TREND_RISING ? UA_WARN : UA_DIM);
    }
    sb_free(&sb);
    int list_top = top + 3;
    v->rows_y = list_top;
    size_t page = height > 4 ? (size_t)height - 4 : 1;
    view_scroll_to_cursor(v, page);
    draw_fill(list_top - 1, 0, width, UA_HEADER);
    draw_safe(list_top - 1, 0, width, "BUCKET (UTC)              COUNT", UA_HEADER);
    uint32_t peak = t->counts[t->peak] ? t->counts[t->peak] : 1;
    int barw = width - 34;
    for (size_t row = 0; row < page; row++) {
        size_t i = v->top + row;
        if (i >= t->n)
            break;
        int y = list_top + (int)row;
        bool sel = i == v->cursor;
        if (sel)
            draw_fill(y, 0, width, UA_SELECTED);
        char when[32], line[64];
        time_format_rfc3339(t->start_ms + (int64_t)i * t->bucket_ms, false, when);
        snprintf(line, sizeof line, "%-24s %6u", when, t->counts[i]);
        draw_safe(y, 0, 33, line, sel ? UA_SELECTED : UA_NORMAL);
        if (barw > 0 && t->counts[i]) {
            int w = (int)((double)barw * t->counts[i] / peak);
            struct strbuf bar;
            sb_init(&bar);
            for (int k = 0; k < (w ? w : 1); k++)
                sb_adds(&bar, glyph(a, G_BLOCK));
            draw_safe(y, 33, barw, bar.buf, sel ? UA_SELECTED : i == t->peak ? UA_WARN : UA_ACCENT);
            sb_free(&bar);
        }
    }
}

static int request(struct app *a, struct view *v, enum action act)
{
    const struct timeline *t = timeline_of(a);
    if (act == ACT_ENTER && v->cursor < t->n) {
        char from[32], to[32];
        int64_t start = t->start_ms + (int64_t)v->cursor * t->bucket_ms;
        time_format_rfc3339(start, false, from);
        time_format_rfc3339(start + t->bucket_ms, false, to);
        char *expr = xasprintf("first_seen>=%s first_seen<%s", from, to);
        if (app_set_filter(a, expr))
            app_switch(a, &view_messages_ops);
        free(expr);
        return HR_HANDLED | HR_REDRAW;
    }
    return view_move(v, act, app_page(a) > 3 ? app_page(a) - 3 : 1);
}

static void status(struct app *a, struct view *v, struct strbuf *out)
{
    (void)v;
    const struct timeline *t = timeline_of(a);
    sb_addf(out, "%s  %llu dated, %llu undated  Enter: that bucket's messages",
            timeline_trend_name(t->trend), (unsigned long long)t->total,
            (unsigned long long)t->undated);
}

const struct view_ops view_timeline_ops = {
    .name = "timeline",
    .which = ACT_VIEW_TIMELINE,
    .open = open_,
    .close = close_,
    .draw = draw,
    .request = request,
    .reload = build,
    .status = status,
};
