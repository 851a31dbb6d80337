/*
 * groups: the failures grouped by cause — a fingerprint of the error (numbers, ids, quoted
 * values normalised away), the exception and the type — with count, first and last seen and
 * the queues. This is how 40,000 dead letters turn out to be three bugs. Enter shows a
 * group's messages. The groups are made once per set of rows by a job (data.c), so a
 * visit after the first costs nothing; Enter groups again after a cancel.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "filter.h"
#include "groups.h"
#include "job.h"
#include "live.h"
#include "plan.h"

/* The groups are the app's (data.c: made once per set of rows, by a job); the view keeps
 * only its cursor. While new ones are made, the old ones stay on screen. */
static const struct groups *shown(const struct app *a)
{
    return a->groups && a->groups_store_gen == a->store_gen ? a->groups : NULL;
}

static void build(struct app *a, struct view *v)
{
    bool current;
    app_groups(a, &current);
    const struct groups *g = shown(a);
    v->lines = groups_count(g);
    if (v->cursor >= v->lines)
        v->cursor = v->lines ? v->lines - 1 : 0;
}

static void open_(struct app *a, struct view *v, void *with)
{
    build(a, v);
}

/* FIRST and LAST: how long ago the group's first and last messages were dead-lettered (the
 * x-death time, dead_letter.failed_at), from now or as of the snapshot (A). */
static void ago(struct app *a, int64_t ms, char out[32])
{
    if (ms <= 0) {
        snprintf(out, 32, "?");
        return;
    }
    duration_format(((double)app_age_clock(a) - (double)ms) / 1000.0, out);
}

static void draw(struct app *a, struct view *v, int top, int height, int width)
{
    const struct groups *g = shown(a);
    size_t n = groups_count(g);
    v->lines = n;
    v->rows_y = top + 1;
    size_t page = height > 1 ? (size_t)height - 1 : 1;
    view_scroll_to_cursor(v, page);
    /* While following (live.h), a column of each cause's rate now: per minute, over the last
     * three (the report's "rate now"); the type gives it room. */
    bool live = live_active(a);
    int rx = live ? 8 : 0;
    draw_fill(top, 0, width, UA_HEADER);
    draw_safe(top, 0, width,
              live ? "  COUNT    /MIN  FIRST     LAST      TYPE              QUEUES              "
                     "CAUSE"
                   : "  COUNT  FIRST     LAST      TYPE                      QUEUES              "
                     "CAUSE",
              UA_HEADER);
    if (!n) {
        char count[32];
        fmt_thousands(a->n_rows, count);
        if (app_groups_building(a))
            draw_textf(top + 2, 2, width - 4, UA_DIM, "grouping %s dead letters by cause", count);
        else if (!g && a->groups_cancelled)
            draw_safe(top + 2, 2, width - 4, "grouping was cancelled: Enter groups them", UA_DIM);
        else
            draw_safe(top + 2, 2, width - 4, "no dead letters to group", UA_DIM);
        return;
    }
    char buf[STORE_TEXT_MAX];
    for (int row = 0; row < height - 1; row++) {
        size_t k = v->top + (size_t)row;
        if (k >= n)
            break;
        const struct group *grp = groups_at(g, k);
        int y = top + 1 + row;
        bool sel = k == v->cursor;
        enum ui_attr at = sel ? UA_SELECTED : UA_NORMAL;
        if (sel)
            draw_fill(y, 0, width, UA_SELECTED);
        char c[24], f[32], l[32];
        snprintf(c, sizeof c, "%7u", grp->count);
        ago(a, grp->first_ms, f);
        ago(a, grp->last_ms, l);
        draw_safe(y, 0, 7, c, sel ? at : UA_WARN);
        if (live) {
            char r[24] = "     -";
            double rate = live_group_rate(a, grp, a->now_ms);
            if (rate > 0)
                snprintf(r, sizeof r, "%6.1f", rate);
            draw_safe(y, 9, 6, r, sel ? at : UA_GOOD);
        }
        draw_safe(y, 9 + rx, 8, f, at);
        draw_safe(y, 19 + rx, 8, l, at);
        draw_text(y, 29 + rx, 24 - rx, grp->type ? grp->type : "",
                  grp->type ? strlen(grp->type) : 0, at);
        struct strbuf q;
        sb_init(&q);
        for (size_t i = 0; i < grp->n_queues; i++) {
            if (i)
                sb_adds(&q, ",");
            size_t len = store_text(a->store, grp->queues[i].queue, buf);
            sb_add(&q, buf, len);
        }
        draw_text(y, 55, 18, q.buf ? q.buf : "", q.len, at);
        sb_free(&q);
        struct strbuf cause;
        sb_init(&cause);
        if (grp->exception && *grp->exception) {
            sb_adds(&cause, grp->exception);
            sb_adds(&cause, "  ");
        }
        sb_adds(&cause, grp->key && *grp->key ? grp->key : "(no error)");
        draw_text(y, 75, width - 75, cause.buf, cause.len,
                  sel                ? at
                  : grp->from_broker ? UA_DIM
                                     : UA_ERROR);
        sb_free(&cause);
    }
}

static int request(struct app *a, struct view *v, enum action act)
{
    const struct groups *g = shown(a);
    if (act == ACT_AGE_CLOCK) {
        app_age_clock_toggle(a);
        return HR_HANDLED | HR_REDRAW;
    }
    if (act == ACT_REPLAY || act == ACT_REISSUE || act == ACT_MOVE || act == ACT_DELETE) {
        if (!g || v->cursor >= groups_count(g))
            return HR_HANDLED;
        const struct group *grp = groups_at(g, v->cursor);
        size_t *members = xmalloc((grp->count ? grp->count : 1) * sizeof *members);
        for (uint32_t k = 0; k < grp->count; k++)
            members[k] = grp->members[k];
        char scope[300];
        snprintf(scope, sizeof scope, "the group of %u (%.200s)", grp->count,
                 grp->key && *grp->key ? grp->key : "no error");
        plan_open(a,
                  act == ACT_REISSUE  ? PLAN_REISSUE
                  : act == ACT_MOVE   ? PLAN_MOVE
                  : act == ACT_DELETE ? PLAN_DELETE
                                      : PLAN_REPLAY,
                  members, grp->count, scope, NULL, 0, NULL);
        free(members);
        return HR_HANDLED | HR_REDRAW;
    }
    if (act == ACT_ENTER) {
        if (!g && a->groups_cancelled && !app_groups_building(a)) {
            app_group_again(a);
            build(a, v);
            return HR_HANDLED | HR_REDRAW;
        }
        if (!g || v->cursor >= groups_count(g))
            return HR_HANDLED;
        struct strbuf expr;
        sb_init(&expr);
        group_filter_expr(groups_at(g, v->cursor), &expr);
        const char *in_force = app_filter_wanted(a);
        if (in_force) {
            /* Narrow the filter in force rather than replace it. */
            struct strbuf both;
            sb_init(&both);
            sb_addf(&both, "(%s) %s", in_force, expr.buf ? expr.buf : "");
            sb_free(&expr);
            expr = both;
        }
        if (app_set_filter(a, expr.buf ? expr.buf : ""))
            app_switch(a, &view_messages_ops);
        sb_free(&expr);
        return HR_HANDLED | HR_REDRAW;
    }
    v->lines = groups_count(g);
    return view_move(v, act, app_page(a));
}

static int search(struct app *a, struct view *v, const char *text, int dir, struct search_pos *p,
                  double until)
{
    const struct groups *g = shown(a);
    size_t n = groups_count(g);
    size_t k = v->cursor;
    (void)p;
    (void)until;
    for (size_t step = 1; step <= n; step++) {
        k = dir > 0 ? (k + 1) % n : (k + n - 1) % n;
        const struct group *grp = groups_at(g, k);
        if ((grp->key && strstr(grp->key, text)) || (grp->type && strstr(grp->type, text)) ||
            (grp->exception && strstr(grp->exception, text))) {
            v->cursor = k;
            view_scroll_to_cursor(v, app_page(a));
            return SEARCH_FOUND;
        }
    }
    return SEARCH_NONE;
}

static void status(struct app *a, struct view *v, struct strbuf *out)
{
    const struct groups *g = shown(a);
    if (!g && a->groups_cancelled) {
        sb_adds(out, "not grouped  Enter: group them");
        return;
    }
    sb_addf(out, "%zu causes for %zu dead letters  Enter: messages", groups_count(g),
            groups_total(g));
    const struct group *cur = g ? groups_at(g, v->cursor) : NULL;
    if (cur) {
        /* the group's name, for dlqx groups, decode and --group */
        char key[GROUP_KEY_TEXT];
        group_key_text(cur->group_key, key);
        sb_addf(out, "  %s", key);
        /* The selected group's times in UTC: FIRST and LAST are when it was dead-lettered. */
        char f[32], l[32];
        if (cur->first_ms > 0 && cur->last_ms > 0) {
            /* To the minute (the status line is short; the detail has every time whole). */
            time_format_rfc3339(cur->first_ms / 60000 * 60000, false, f);
            time_format_rfc3339(cur->last_ms / 60000 * 60000, false, l);
            snprintf(f + 16, sizeof f - 16, "Z");
            snprintf(l + 16, sizeof l - 16, "Z");
            if (strcmp(f, l) == 0)
                sb_addf(out, "  dead-lettered %s", f);
            else
                sb_addf(out, "  died %s..%s", f, l);
        }
    }
}

const struct view_ops view_groups_ops = {
    .name = "groups",
    .which = ACT_VIEW_GROUPS,
    .open = open_,
    .draw = draw,
    .request = request,
    .search = search,
    .reload = build,
    .status = status,
};
