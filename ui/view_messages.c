/*
 * messages: one row per dead letter — age, attempt, type or URN, error, id, queue — drawn
 * from the store's index a screen at a time (never all rows at once), sorted by any column.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "job.h"
#include "live.h"
#include "sanitize.h"

/* The columns, by their sort_column (SORT_ORDER has none). */
enum col {
    COL_ORDER = SORT_ORDER,
    COL_AGE = SORT_AGE,
    COL_ATTEMPT = SORT_ATTEMPT,
    COL_TYPE = SORT_TYPE,
    COL_ERROR = SORT_ERROR,
    COL_ID = SORT_ID,
    COL_QUEUE = SORT_QUEUE,
    COL_N = SORT_N
};

/* ---- the view ------------------------------------------------------------------------- */

struct msgs_state {
    size_t selected_store_index; /* to keep the cursor across a reload */
};

static void open_(struct app *a, struct view *v, void *with)
{
    struct msgs_state *s = xcalloc(1, sizeof *s);
    s->selected_store_index = SIZE_MAX;
    v->state = s;
    v->lines = a->n_rows;
}

static void close_(struct app *a, struct view *v)
{
    free(v->state);
    v->state = NULL;
}

/* Column widths for a screen `width` wide: the error takes what is left. */
static void widths(int width, int w[COL_N])
{
    w[COL_AGE] = 7;
    w[COL_ATTEMPT] = 3;
    w[COL_TYPE] = width >= 140 ? 28 : 22;
    w[COL_ID] = width >= 160 ? 36 : 13;
    w[COL_QUEUE] = width >= 120 ? 20 : 14;
    int rest =
        width - (w[COL_AGE] + w[COL_ATTEMPT] + w[COL_TYPE] + w[COL_ID] + w[COL_QUEUE]) - 6 * 2;
    w[COL_ERROR] = rest > 10 ? rest : 10;
}

static void draw(struct app *a, struct view *v, int top, int height, int width)
{
    v->lines = a->n_rows;
    v->rows_y = top + 1;
    size_t page = height > 1 ? (size_t)height - 1 : 1;
    view_scroll_to_cursor(v, page);
    int w[COL_N];
    widths(width, w);
    /* header */
    static const enum col order[] = {COL_AGE, COL_ATTEMPT, COL_TYPE, COL_ERROR, COL_ID, COL_QUEUE};
    static const char *const titles[] = {"AGE", "ATT", "TYPE", "ERROR", "ID", "QUEUE"};
    int x = 0;
    draw_fill(top, 0, width, UA_HEADER);
    for (size_t k = 0; k < sizeof order / sizeof *order; k++) {
        char t[32];
        snprintf(t, sizeof t, "%s%s", titles[k],
                 a->sort_column == (int)order[k] ? (a->sort_reverse ? " ^" : " v") : "");
        draw_safe(top, x, w[order[k]], t, UA_HEADER);
        x += w[order[k]] + 2;
    }
    if (!a->n_rows) {
        draw_safe(top + 2, 2, width - 4,
                  a->filter ? "no message matches the filter (F clears it)"
                            : "no dead letters here",
                  UA_DIM);
        return;
    }
    char buf[STORE_TEXT_MAX];
    int64_t clock = app_age_clock(a); /* AGE: since first publish, from now or the snapshot */
    for (int row = 0; row < height - 1; row++) {
        size_t i = v->top + (size_t)row;
        if (i >= a->n_rows)
            break;
        const struct store_entry *e = store_entry_at(a->store, a->rows[i]);
        bool sel = i == v->cursor;
        int y = top + 1 + row;
        enum ui_attr base = sel ? UA_SELECTED : UA_NORMAL;
        if (sel)
            draw_fill(y, 0, width, UA_SELECTED);
        x = 0;
        char age[40], att[16];
        /* An arrival while following (live.h) is marked: "+" before its age. */
        bool arrived = live_is_new(a, a->rows[i]);
        age[0] = '+';
        duration_format(((double)clock - (double)e->first_seen_ms) / 1000.0, age + arrived);
        snprintf(att, sizeof att, "%d", e->attempt);
        draw_safe(y, x, w[COL_AGE], age, arrived && !sel ? UA_GOOD : base);
        x += w[COL_AGE] + 2;
        draw_safe(y, x, w[COL_ATTEMPT], att, sel ? base : e->attempt >= 5 ? UA_WARN : base);
        x += w[COL_ATTEMPT] + 2;
        size_t n = store_text(a->store, e->type, buf);
        draw_text(y, x, w[COL_TYPE], buf, n, base);
        x += w[COL_TYPE] + 2;
        struct strbuf err;
        sb_init(&err);
        if (!(e->flags & SE_ACCEPTED)) {
            sb_addc(&err, '[');
            sb_adds(&err, store_reject_name(a->store, e->reject));
            sb_adds(&err, "] ");
        }
        n = store_text(a->store, e->error, buf);
        sb_add(&err, buf, n);
        draw_text(y, x, w[COL_ERROR], err.buf ? err.buf : "", err.len,
                  sel                        ? base
                  : (e->flags & SE_ACCEPTED) ? (e->flags & SE_ERROR_FROM_BROKER ? UA_DIM : UA_ERROR)
                                             : UA_ERROR);
        sb_free(&err);
        x += w[COL_ERROR] + 2;
        n = store_text(a->store, e->id, buf);
        draw_text(y, x, w[COL_ID], buf, n, sel ? base : UA_ACCENT);
        x += w[COL_ID] + 2;
        n = store_text(a->store, e->queue, buf);
        draw_text(y, x, w[COL_QUEUE], buf, n, base);
    }
}

static int request(struct app *a, struct view *v, enum action act)
{
    switch (act) {
    case ACT_AGE_CLOCK:
        app_age_clock_toggle(a);
        return HR_HANDLED | HR_REDRAW;
    case ACT_ENTER:
        if (v->cursor < a->n_rows)
            app_push(a, &view_detail_ops, a->rows[v->cursor]);
        return HR_HANDLED | HR_REDRAW;
    case ACT_SORT: {
        /* By the next column; the rows change when they are sorted (rows.c). */
        int column;
        bool reverse;
        app_sort_wanted(a, &column, &reverse);
        app_set_sort(a, (column + 1) % COL_N, false);
        return HR_HANDLED | HR_REDRAW;
    }
    case ACT_REVERSE: {
        int column;
        bool reverse;
        app_sort_wanted(a, &column, &reverse);
        app_set_sort(a, column, !reverse);
        return HR_HANDLED | HR_REDRAW;
    }
    default:
        v->lines = a->n_rows;
        return view_move(v, act, app_page(a));
    }
}

/* A needle for contains_ci: its bytes lowered, and the lowering of every byte (tolower's,
 * so the locale decides as it always has). */
struct ci_needle {
    unsigned char lower[256];
    const unsigned char *text;
    size_t n;
};

static void ci_needle_init(struct ci_needle *c, const char *text)
{
    for (int i = 0; i < 256; i++)
        c->lower[i] = (unsigned char)tolower(i);
    c->text = (const unsigned char *)text;
    c->n = strlen(text);
}

/* Whether hay[0..len) holds the needle, case aside; the hay ends at a NUL of its own. */
static bool contains_ci(const struct ci_needle *c, const unsigned char *hay, size_t len)
{
    if (!c->n)
        return true;
    const unsigned char *nul = memchr(hay, '\0', len);
    if (nul)
        len = (size_t)(nul - hay);
    if (len < c->n)
        return false;
    const unsigned char *lw = c->lower, *t = c->text;
    const unsigned char first = lw[t[0]];
    for (size_t i = 0; i + c->n <= len; i++) {
        if (lw[hay[i]] != first)
            continue;
        size_t k = 1;
        while (k < c->n && lw[hay[i + k]] == lw[t[k]])
            k++;
        if (k == c->n)
            return true;
    }
    return false;
}

static int search(struct app *a, struct view *v, const char *text, int dir, struct search_pos *p,
                  double until)
{
    if (!p->started) {
        p->started = true;
        p->total = a->n_rows; /* rows are only added at the end meanwhile */
        p->at = v->cursor;
        p->unit = "messages";
        p->gen = a->rows_gen;
    }
    if (p->gen != a->rows_gen)
        return SEARCH_LOST;
    size_t n = p->total;
    struct ci_needle needle;
    ci_needle_init(&needle, text);
    char buf[STORE_TEXT_MAX];
    for (unsigned tick = 1; p->done < n; p->done++, tick++) {
        if (tick % 1024 == 0 && job_yield(until))
            return SEARCH_MORE;
        size_t i = dir > 0 ? (p->at + 1) % n : (p->at + n - 1) % n;
        p->at = i;
        const struct store_entry *e = store_entry_at(a->store, a->rows[i]);
        store_ref refs[] = {e->id, e->type, e->error, e->queue, e->correlation};
        for (size_t k = 0; k < sizeof refs / sizeof *refs; k++) {
            size_t len;
            const unsigned char *t = store_text_view(a->store, refs[k], &len);
            if (!t) { /* a UUID: formatted */
                len = store_text(a->store, refs[k], buf);
                t = (const unsigned char *)buf;
            }
            if (contains_ci(&needle, t, len)) {
                v->cursor = i;
                view_scroll_to_cursor(v, app_page(a));
                return SEARCH_FOUND;
            }
        }
    }
    return SEARCH_NONE;
}

static void reload(struct app *a, struct view *v)
{
    v->lines = a->n_rows;
    if (v->cursor >= a->n_rows)
        v->cursor = a->n_rows ? a->n_rows - 1 : 0;
}

static void status(struct app *a, struct view *v, struct strbuf *out)
{
    sb_addf(out, "%zu/%zu", a->n_rows ? v->cursor + 1 : 0, a->n_rows);
    if (a->sort_column)
        sb_addf(out, "  sort: %s%s", app_sort_name(a->sort_column),
                a->sort_reverse ? " (rev)" : "");
    sb_adds(out, "  Enter detail  t tree  e groups  f filter  / search  s sort");
}

const struct view_ops view_messages_ops = {
    .name = "messages",
    .which = ACT_VIEW_MESSAGES,
    .open = open_,
    .close = close_,
    .draw = draw,
    .request = request,
    .search = search,
    .reload = reload,
    .status = status,
};
