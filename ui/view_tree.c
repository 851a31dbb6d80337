/*
 * view_tree: the causal tree — the whole forest, or (opened on a message: v->arg is its
 * store index) only that message's correlation group, with the cursor on it. Expanded,
 * collapsed and cursor state survive a refresh (the model, src/analysis/treeview.c, keys them on
 * the nodes' stable tags); this file only labels the rows from the store, paints them and maps keys
 * onto the model.
 *
 * Keys: j/k/PgUp/PgDn/g/G move; l/Right opens a collapsed node (on an open one: down to its
 * first child); h/Left closes an open node, else goes to its parent; o toggles; Enter opens a
 * collapsed node, else the message's detail; t switches between one group and the whole
 * forest; / n N search the labels (in slices: a million items take about a second); Esc/q go
 * back. The forest is the app's, built once per store by a job (data.c); while it is built
 * the view says so, and Enter builds it again after a cancel. A t pressed meanwhile counts: it
 * drops the focus that was waiting for the forest.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "job.h"
#include "sanitize.h"
#include "store.h"
#include "tree.h"
#include "treeview.h"

/* Columns given to each field of a label. */
#define ID_COLUMNS 40
#define FIELD_COLUMNS 40
#define ERROR_COLUMNS 160

struct tree_state {
    struct app *a; /* borrowed: the labels read its store */
    struct treeview *tv;
    uint32_t focus_on; /* opened on this message before its forest was built (TREE_NONE) */
    char *buf;         /* STORE_TEXT_MAX bytes for store_text */
    struct strbuf tmp;
};

static const struct store_entry *entry_of(const struct tree_state *s, uint32_t node)
{
    const struct app *a = s->a;
    if (!a->store || node == TREE_NONE || node >= store_count(a->store))
        return NULL;
    return store_entry_at(a->store, node);
}

/* Appends the sanitized text of ref, cut to columns; false when it is empty. */
static bool add_field(struct tree_state *s, struct strbuf *out, store_ref ref, int columns)
{
    size_t n = store_text(s->a->store, ref, s->buf);
    if (!n)
        return false;
    sanitize_fit(out, s->buf, n, columns, app_san_flags(s->a));
    return true;
}

/* "id  type  [queue]  attempt N" (sanitized). */
static void label_main(struct tree_state *s, uint32_t node, struct strbuf *out)
{
    const struct store_entry *e = entry_of(s, node);
    if (!e) {
        sb_adds(out, "(not in the store)");
        return;
    }
    if (!add_field(s, out, e->id, ID_COLUMNS))
        sb_adds(out, "(no id)");
    size_t at = out->len;
    sb_adds(out, "  ");
    if (!add_field(s, out, e->type, FIELD_COLUMNS)) {
        out->len = at;
        out->buf[at] = '\0';
    }
    at = out->len;
    sb_adds(out, "  [");
    if (add_field(s, out, e->queue, FIELD_COLUMNS)) {
        sb_addc(out, ']');
    } else {
        out->len = at;
        out->buf[at] = '\0';
    }
    if (e->attempt > 0)
        sb_addf(out, "  attempt %d", (int)e->attempt);
    const char *gone = app_gone_name(s->a, node);
    if (gone)
        sb_addf(out, "  (%s: no longer in the queue)", gone);
}

/* The error (sanitized), nothing when there is none. */
static void label_error(struct tree_state *s, uint32_t node, struct strbuf *out)
{
    const struct store_entry *e = entry_of(s, node);
    if (e)
        add_field(s, out, e->error, ERROR_COLUMNS);
}

/* The model's label: what the row shows and what / searches. */
static void label_cb(struct strbuf *out, const struct forest *f, uint32_t node, void *ctx)
{
    struct tree_state *s = ctx;
    label_main(s, node, out);
    sb_reset(&s->tmp);
    label_error(s, node, &s->tmp);
    if (s->tmp.len) {
        sb_adds(out, "  ");
        sb_add(out, s->tmp.buf, s->tmp.len);
    }
}

static size_t page_of(const struct app *a)
{
    int h = a->rows_on_screen - 3; /* title, header line, status */
    return h > 1 ? (size_t)h : 1;
}

/* The view's cursor moved (view_move): tell the model. */
static void sync_from_view(struct tree_state *s, struct view *v)
{
    if (v->cursor != treeview_cursor(s->tv))
        treeview_set_cursor(s->tv, v->cursor);
}

/* The model changed: the view follows. */
static void sync_to_view(struct app *a, struct tree_state *s, struct view *v)
{
    v->lines = treeview_rows(s->tv);
    v->cursor = treeview_cursor(s->tv);
    view_scroll_to_cursor(v, page_of(a));
}

/* The forest is the app's (data.c: built once per store by a job); until it is there the
 * view shows the one it has (empty, or of part of the messages). */
static void rebuild(struct app *a, struct view *v)
{
    struct tree_state *s = v->state;
    bool ready = app_forest(a);
    treeview_set_ascii(s->tv, a->ascii);
    treeview_rebuild(s->tv, &a->forest);
    if (ready && s->focus_on != TREE_NONE) {
        /* Node i is store entry i: the message's group, the cursor on it. */
        if (s->focus_on < a->forest.n_messages)
            treeview_focus(s->tv, s->focus_on);
        s->focus_on = TREE_NONE;
    }
    sync_to_view(a, s, v);
}

static void open_(struct app *a, struct view *v, void *with)
{
    struct tree_state *s = xcalloc(1, sizeof *s);
    s->a = a;
    s->buf = xmalloc(STORE_TEXT_MAX);
    sb_init(&s->tmp);
    s->tv = treeview_new(a->ascii);
    treeview_set_label(s->tv, label_cb, s);
    s->focus_on = v->arg != SIZE_MAX && v->arg < TREE_NONE ? (uint32_t)v->arg : TREE_NONE;
    v->state = s;
    rebuild(a, v);
}

static void close_(struct app *a, struct view *v)
{
    struct tree_state *s = v->state;
    if (!s)
        return;
    treeview_free(&s->tv);
    free(s->buf);
    sb_free(&s->tmp);
    free(s);
    v->state = NULL;
}

/* Draws safe text at *x, at most its own width (no padding in its colour), and moves *x. */
static void put(int y, int *x, int width, const struct strbuf *sb, enum ui_attr attr)
{
    if (!sb->len || *x >= width)
        return;
    int w = (int)sanitize_width(sb->buf, sb->len);
    int room = width - *x;
    draw_safe(y, *x, w < room ? w : room, sb->buf, attr);
    *x += w;
}

static void draw_row(struct app *a, struct tree_state *s, int y, int width, size_t k, bool sel)
{
    struct treeview_row r;
    if (!treeview_row(s->tv, k, &r))
        return;
    if (sel)
        draw_fill(y, 0, width, UA_SELECTED);
    struct strbuf sb;
    sb_init(&sb);
    int x = 0;
    treeview_row_prefix(s->tv, k, &sb);
    put(y, &x, width, &sb, sel ? UA_SELECTED : UA_DIM);
    sb_reset(&sb);
    if (r.kind == TV_ROW_GROUP || (r.flags & TREE_PLACEHOLDER)) {
        treeview_row_body(s->tv, k, &sb);
        put(y, &x, width, &sb, sel ? UA_SELECTED : r.kind == TV_ROW_GROUP ? UA_ACCENT : UA_DIM);
    } else {
        if (r.depth > TREEVIEW_INDENT_MAX) {
            sb_addf(&sb, "[depth %u] ", (unsigned)r.depth);
            put(y, &x, width, &sb, sel ? UA_SELECTED : UA_DIM);
            sb_reset(&sb);
        }
        label_main(s, r.node, &sb);
        put(y, &x, width, &sb, sel ? UA_SELECTED : UA_NORMAL);
        sb_reset(&sb);
        label_error(s, r.node, &sb);
        if (sb.len) {
            const struct store_entry *e = entry_of(s, r.node);
            bool broker = e && (e->flags & SE_ERROR_FROM_BROKER);
            x += 2;
            put(y, &x, width, &sb, sel ? UA_SELECTED : broker ? UA_DIM : UA_ERROR);
        }
    }
    sb_reset(&sb);
    treeview_row_marks(s->tv, k, &sb);
    put(y, &x, width, &sb, sel ? UA_SELECTED : UA_WARN);
    sb_free(&sb);
}

static void draw(struct app *a, struct view *v, int top, int height, int width)
{
    struct tree_state *s = v->state;
    sync_from_view(s, v);
    v->lines = treeview_rows(s->tv);
    v->cursor = treeview_cursor(s->tv);
    v->rows_y = top + 1;
    size_t page = height > 1 ? (size_t)height - 1 : 1;
    view_scroll_to_cursor(v, page);
    const struct forest *f = &a->forest;
    char head[160];
    if (s->focus_on != TREE_NONE)
        snprintf(head, sizeof head,
                 "  this message's correlation, once the tree is built  "
                 "(t: the whole forest)");
    else if (treeview_focused(s->tv))
        snprintf(head, sizeof head, "  one correlation of %u  (t: the whole forest)",
                 (unsigned)f->n_groups);
    else
        snprintf(head, sizeof head, "  %u correlation%s  %u message%s  %u missing cause%s",
                 (unsigned)f->n_groups, f->n_groups == 1 ? "" : "s", (unsigned)f->n_messages,
                 f->n_messages == 1 ? "" : "s", (unsigned)(f->n_nodes - f->n_messages),
                 f->n_nodes - f->n_messages == 1 ? "" : "s");
    draw_fill(top, 0, width, UA_HEADER);
    draw_safe(top, 0, width, head, UA_HEADER);
    if (!v->lines) {
        char count[32];
        fmt_thousands(a->store ? store_count(a->store) : 0, count);
        if (app_forest_building(a))
            draw_textf(top + 2, 2, width - 4, UA_DIM, "building the causal tree of %s messages",
                       count);
        else if (a->forest_cancelled)
            draw_safe(top + 2, 2, width - 4, "the causal tree was not built: Enter builds it",
                      UA_DIM);
        else
            draw_safe(top + 2, 2, width - 4,
                      treeview_focused(s->tv)
                          ? "this message's correlation is not in this set any more (t: all)"
                          : "no dead letters here",
                      UA_DIM);
        return;
    }
    for (int row = 0; row < height - 1; row++) {
        size_t k = v->top + (size_t)row;
        if (k >= v->lines)
            break;
        draw_row(a, s, top + 1 + row, width, k, k == v->cursor);
    }
}

static int changed(struct app *a, struct tree_state *s, struct view *v)
{
    sync_to_view(a, s, v);
    return HR_HANDLED | HR_REDRAW;
}

static int request(struct app *a, struct view *v, enum action act)
{
    struct tree_state *s = v->state;
    struct treeview *tv = s->tv;
    sync_from_view(s, v);
    size_t cur = treeview_cursor(tv);
    struct treeview_row r;
    bool have = treeview_row(tv, cur, &r);
    switch (act) {
    case ACT_RIGHT:
        if (!have || !r.expandable)
            return HR_HANDLED;
        if (!r.expanded)
            treeview_expand(tv, cur);
        else if (cur + 1 < treeview_rows(tv))
            treeview_set_cursor(tv, cur + 1); /* its first child */
        return changed(a, s, v);
    case ACT_LEFT:
        if (!have)
            return HR_HANDLED;
        if (!(r.expandable && r.expanded && treeview_collapse(tv, cur))) {
            size_t p = treeview_parent_row(tv, cur);
            if (p != SIZE_MAX)
                treeview_set_cursor(tv, p);
        }
        return changed(a, s, v);
    case ACT_TOGGLE:
        if (have)
            treeview_toggle(tv, cur);
        return changed(a, s, v);
    case ACT_ENTER:
        if (!have && a->forest_cancelled && !app_forest_building(a)) {
            app_build_forest(a);
            rebuild(a, v);
            return HR_HANDLED | HR_REDRAW;
        }
        if (!have)
            return HR_HANDLED;
        if (r.expandable && !r.expanded) {
            treeview_expand(tv, cur);
            return changed(a, s, v);
        }
        if (r.kind == TV_ROW_NODE && r.message != TREE_NONE) {
            /* The stack may shift on a push: v is not touched after it. */
            app_push(a, &view_detail_ops, r.message);
            return HR_HANDLED | HR_REDRAW;
        }
        treeview_toggle(tv, cur);
        return changed(a, s, v);
    case ACT_VIEW_TREE:
        /* t in the tree: one group <-> the whole forest, the cursor staying put. Opened on a
         * message whose forest is still being built, t is not lost: the focus waiting for
         * the forest is dropped, and the whole forest shows when it is there. */
        if (s->focus_on != TREE_NONE) {
            s->focus_on = TREE_NONE;
            return changed(a, s, v);
        }
        if (treeview_focused(tv)) {
            treeview_focus(tv, TREE_NONE);
        } else if (have) {
            const struct forest *f = &a->forest;
            uint32_t node = r.node != TREE_NONE ? r.node : f->order[f->groups[r.group].pre];
            treeview_focus(tv, node);
        }
        return changed(a, s, v);
    case ACT_BACK:
    case ACT_QUIT:
        return HR_UNHANDLED; /* the app pops the view */
    default: {
        int res = view_move(v, act, page_of(a));
        if (res & HR_HANDLED)
            treeview_set_cursor(tv, v->cursor);
        return res;
    }
    }
}

static int search(struct app *a, struct view *v, const char *text, int dir, struct search_pos *p,
                  double until)
{
    struct tree_state *s = v->state;
    if (!p->started) {
        p->started = true;
        p->unit = "items";
        p->gen = a->data_gen;
        sync_from_view(s, v);
    }
    if (p->gen != a->data_gen)
        return SEARCH_LOST; /* the forest was built again: the place it had got to is void */
    for (;;) {
        size_t row = SIZE_MAX;
        enum treeview_search_rc rc = treeview_search_step(s->tv, text, dir, &p->tree, 4096, &row);
        p->done = p->tree.done;
        p->total = p->tree.total;
        if (rc == TV_SEARCH_FOUND) {
            sync_to_view(a, s, v);
            return SEARCH_FOUND;
        }
        if (rc == TV_SEARCH_NONE)
            return SEARCH_NONE;
        if (job_yield(until))
            return SEARCH_MORE;
    }
}

static void status(struct app *a, struct view *v, struct strbuf *out)
{
    struct tree_state *s = v->state;
    struct treeview_row r;
    if (!treeview_row(s->tv, treeview_cursor(s->tv), &r)) {
        sb_adds(out, "no messages");
        return;
    }
    const struct forest *f = &a->forest;
    const struct tree_group *g = tree_group_get(f, r.group);
    sb_addf(out, "group %u/%u", (unsigned)r.group + 1, (unsigned)f->n_groups);
    if (r.kind == TV_ROW_NODE)
        sb_addf(out, "  node %u/%u  depth %u", (unsigned)(f->pre[r.node] - g->pre + 1),
                (unsigned)g->n_nodes, (unsigned)r.depth);
    else
        sb_addf(out, "  %u nodes", (unsigned)g->n_nodes);
    sb_adds(out, treeview_focused(s->tv) ? "  o toggle  t all" : "  o toggle  t this group");
}

const struct view_ops view_tree_ops = {
    .name = "tree",
    .which = ACT_VIEW_TREE,
    .open = open_,
    .close = close_,
    .draw = draw,
    .request = request,
    .search = search,
    .reload = rebuild,
    .status = status,
};
