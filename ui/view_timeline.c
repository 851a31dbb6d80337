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

/* The app's timeline of its rows (ui.h), made when it is not the current one. Over every
 * entry of the store the entries are read in their own order rather than through the rows
 * (the same set; sequential, where the rows' order jumps about ten million entries). */
static const struct timeline *timeline_of(struct app *a)
{
    int64_t minute = a->now_ms / 60000;
    if (a->timeline && a->timeline_store_gen == a->store_gen && a->timeline_set_gen == a->set_gen &&
        a->timeline_rows == a->n_rows && a->timeline_minute == minute)
        return a->timeline;
    if (!a->timeline)
        a->timeline = xcalloc(1, sizeof *a->timeline);
    timeline_free(a->timeline);
    a->timeline_store_gen = a->store_gen;
    a->timeline_set_gen = a->set_gen;
    a->timeline_rows = a->n_rows;
    a->timeline_minute = minute;
    if (!a->store)
        return a->timeline;
    struct timeline_options opt;
    memset(&opt, 0, sizeof opt);
    opt.now_ms = a->now_ms;
    opt.time = entry_time_dead_at; /* arrivals in the DLQ, where the message says when */
    uint32_t *idx = NULL;
    if (a->n_rows != store_count(a->store)) {
        idx = xcalloc(a->n_rows ? a->n_rows : 1, sizeof *idx);
        for (size_t i = 0; i < a->n_rows; i++)
            idx[i] = (uint32_t)a->rows[i];
        opt.indices = idx;
        opt.n_indices = a->n_rows;
    }
    timeline_build(a->store, &opt, a->timeline);
    a->timeline_made++;
    free(idx);
    return a->timeline;
}

static void build(struct app *a, struct view *v)
{
    v->lines = timeline_of(a)->n;
    if (v->cursor >= v->lines)
        v->cursor = v->lines ? v->lines - 1 : 0;
}

static void open_(struct app *a, struct view *v, void *with)
{
    (void)with;
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
