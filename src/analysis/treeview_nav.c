/*
 * treeview_nav: the cursor and what keeps it in place — its anchor (copies of its item's tags
 * and ids), put back after treeview_rebuild — and the operations that open, close, jump and
 * focus. Apart from the row building (treeview.c): these decide what changes and where the
 * cursor goes, then ask the rows to follow.
 */
#include "treeview.h"

#include <stdlib.h>
#include <string.h>

#include "treeview_internal.h"

/* ---- the cursor ------------------------------------------------------------------------- */

static void anchor_capture(struct treeview *tv)
{
    struct tv_anchor *a = &tv->anchor;
    const struct forest *f = tv->f;
    sb_reset(&a->arena);
    a->valid = tv->cur_group != TREE_NONE;
    a->n_steps = 0;
    if (!a->valid)
        return;
    const struct tree_group *gr = &f->groups[tv->cur_group];
    a->group_tag = gr->tag;
    a->corr_len = gr->correlation_len;
    sb_add(&a->arena, gr->correlation, gr->correlation_len);
    for (uint32_t v = tv->cur_node; v != TREE_NONE && a->n_steps < ANCHOR_STEPS; v = f->parent[v]) {
        struct tv_step *s = &a->step[a->n_steps++];
        s->tag = f->tag[v];
        s->off = a->arena.len;
        s->len = f->id_len[v];
        sb_add(&a->arena, f->id[v], f->id_len[v]);
    }
}

void tv_set_cur(struct treeview *tv, uint32_t g, uint32_t node)
{
    tv->cur_group = g;
    tv->cur_node = node;
    tv->cur_row = tv_item_row(tv, g, node);
    if (tv->cur_row == SIZE_MAX)
        tv->cur_row = 0;
    anchor_capture(tv);
}

static void set_cur_row(struct treeview *tv, size_t row)
{
    if (!tv->n_rows) {
        tv->cur_group = tv->cur_node = TREE_NONE;
        tv->cur_row = 0;
        return;
    }
    if (row >= tv->n_rows)
        row = tv->n_rows - 1;
    uint32_t g = TREE_NONE, v = TREE_NONE;
    tv_locate(tv, row, &g, &v);
    tv_set_cur(tv, g, v);
}

/* The node that shows v: v itself, or its topmost collapsed ancestor. O(depth). */
static uint32_t visible_for(const struct treeview *tv, uint32_t v)
{
    uint32_t best = v;
    for (uint32_t a = tv->f->parent[v]; a != TREE_NONE; a = tv->f->parent[a])
        if (!tv_node_expanded(tv, a))
            best = a;
    return best;
}

/* Puts the cursor back on a visible row after the rows changed. */
static void cursor_sync(struct treeview *tv)
{
    if (!tv->n_rows) { /* keep the anchor: the items may come back */
        tv->cur_group = tv->cur_node = TREE_NONE;
        tv->cur_row = 0;
        return;
    }
    uint32_t g = tv->cur_group, v = tv->cur_node;
    if (g == TREE_NONE || !tv_in_scope(tv, g)) {
        set_cur_row(tv, tv->cur_row);
        return;
    }
    size_t r = tv_item_row(tv, g, v);
    if (r != SIZE_MAX) {
        tv->cur_row = r;
        return;
    }
    tv_set_cur(tv, g, tv_open_find(tv, g) == SIZE_MAX ? TREE_NONE : visible_for(tv, v));
}

size_t treeview_cursor(const struct treeview *tv)
{
    return tv->cur_row;
}

void treeview_set_cursor(struct treeview *tv, size_t row)
{
    set_cur_row(tv, row);
}

/* In a rebuilt forest: the anchor's node, else its nearest remembered ancestor, else its
 * group's header. false when the group is gone (or out of scope). */
static bool anchor_restore(struct treeview *tv)
{
    const struct tv_anchor *a = &tv->anchor;
    const struct forest *f = tv->f;
    if (!a->valid)
        return false;
    const char *base = a->arena.buf ? a->arena.buf : "";
    uint32_t g = tree_group_find(f, base, a->corr_len);
    if (g == TREE_NONE || f->groups[g].tag != a->group_tag || !tv_in_scope(tv, g))
        return false;
    for (uint32_t k = 0; k < a->n_steps; k++) {
        const struct tv_step *s = &a->step[k];
        uint32_t v = tree_find_tagged(f, base, a->corr_len, base + s->off, s->len, s->tag);
        if (v == TREE_NONE)
            continue;
        tv_set_cur(tv, g, tv_open_find(tv, g) == SIZE_MAX ? TREE_NONE : visible_for(tv, v));
        return true;
    }
    tv_set_cur(tv, g, TREE_NONE);
    return true;
}

void treeview_rebuild(struct treeview *tv, const struct forest *f)
{
    tv->f = f ? f : &tv_empty_forest;
    f = tv->f;
    if (!tv->touched)
        tv->group_default = f->n_groups <= TREEVIEW_AUTO_EXPAND_GROUPS;
    if (tv->focus) {
        uint32_t g = tree_group_find(f, tv->focus_corr, tv->focus_len);
        tv->focus_group = g != TREE_NONE && f->groups[g].tag == tv->focus_tag ? g : TREE_NONE;
    }
    tv_rebuild_rows(tv);
    size_t old_row = tv->cur_row;
    if (!tv->n_rows) {
        cursor_sync(tv);
        return;
    }
    if (!anchor_restore(tv))
        set_cur_row(tv, old_row);
}

/* ---- operations ------------------------------------------------------------------------- */

bool treeview_expand(struct treeview *tv, size_t row)
{
    uint32_t g, v;
    if (!tv_locate(tv, row, &g, &v))
        return false;
    if (v == TREE_NONE) {
        if (tv_open_find(tv, g) != SIZE_MAX)
            return false;
        tv_set_group_state(tv, g, true);
        tv_group_sync(tv, g);
    } else {
        if (!tv_node_has_children(tv->f, v) || tv_node_expanded(tv, v))
            return false;
        tv_set_node_state(tv, v, true);
        tv_node_sync(tv, v);
    }
    cursor_sync(tv);
    return true;
}

bool treeview_collapse(struct treeview *tv, size_t row)
{
    uint32_t g, v;
    if (!tv_locate(tv, row, &g, &v))
        return false;
    if (v == TREE_NONE) {
        if (tv->focus || tv_open_find(tv, g) == SIZE_MAX)
            return false;
        tv_set_group_state(tv, g, false);
        tv_group_sync(tv, g);
    } else {
        if (!tv_node_expanded(tv, v))
            return false;
        tv_set_node_state(tv, v, false);
        tv_node_sync(tv, v);
    }
    cursor_sync(tv);
    return true;
}

bool treeview_toggle(struct treeview *tv, size_t row)
{
    struct treeview_row r;
    if (!treeview_row(tv, row, &r) || !r.expandable)
        return false;
    return r.expanded ? treeview_collapse(tv, row) : treeview_expand(tv, row);
}

void treeview_expand_all_under(struct treeview *tv, size_t row)
{
    uint32_t g, v;
    if (!tv_locate(tv, row, &g, &v))
        return;
    const struct forest *f = tv->f;
    uint32_t from, to;
    if (v == TREE_NONE) {
        from = f->groups[g].pre;
        to = from + f->groups[g].n_nodes;
        tv_set_group_state(tv, g, true);
    } else {
        from = f->pre[v];
        to = from + f->size[v];
    }
    for (uint32_t pos = from; pos < to; pos++)
        tv_set_node_state(tv, f->order[pos], true);
    size_t e = tv_open_find(tv, g);
    if (e == SIZE_MAX)
        tv_group_sync(tv, g);
    else if (v == TREE_NONE)
        tv_splice_range(tv, e, from, to, true);
    else
        tv_splice_range(tv, e, from + 1, to, true);
    cursor_sync(tv);
}

static void reset_all(struct treeview *tv, bool expanded)
{
    tv_map_clear(&tv->groups);
    tv_map_clear(&tv->nodes);
    tv->group_default = tv->node_default = expanded;
    tv->touched = true;
    tv_rebuild_rows(tv);
    cursor_sync(tv);
}

void treeview_collapse_all(struct treeview *tv)
{
    reset_all(tv, false);
}

void treeview_expand_all(struct treeview *tv)
{
    reset_all(tv, true);
}

size_t treeview_parent_row(const struct treeview *tv, size_t row)
{
    uint32_t g, v;
    if (!tv_locate(tv, row, &g, &v) || v == TREE_NONE)
        return SIZE_MAX;
    uint32_t p = tv->f->parent[v];
    return tv_item_row(tv, g, p);
}

size_t treeview_jump(struct treeview *tv, uint32_t node)
{
    const struct forest *f = tv->f;
    if (node >= f->n_nodes || !tv_in_scope(tv, f->group[node]))
        return SIZE_MAX;
    uint32_t g = f->group[node];
    uint32_t top = TREE_NONE; /* the topmost ancestor that had to be opened */
    for (uint32_t a = f->parent[node]; a != TREE_NONE; a = f->parent[a]) {
        if (!tv_node_expanded(tv, a)) {
            tv_set_node_state(tv, a, true);
            top = a;
        }
    }
    size_t e = tv_open_find(tv, g);
    if (e == SIZE_MAX) {
        tv_set_group_state(tv, g, true);
        tv_group_sync(tv, g);
    } else if (top != TREE_NONE) {
        tv_splice_range(tv, e, f->pre[top] + 1, f->pre[top] + f->size[top], true);
    }
    tv_set_cur(tv, g, node);
    return tv->cur_row;
}

void treeview_focus(struct treeview *tv, uint32_t node)
{
    const struct forest *f = tv->f;
    if (node >= f->n_nodes) {
        if (!tv->focus)
            return;
        uint32_t g = tv->focus_group;
        tv->focus = false;
        free(tv->focus_corr);
        tv->focus_corr = NULL;
        tv->focus_group = TREE_NONE;
        /* Back to the whole forest with the same group open: the cursor stays put. */
        if (g != TREE_NONE && !tv_group_expanded(tv, g))
            tv_set_group_state(tv, g, true);
        tv_rebuild_rows(tv);
        cursor_sync(tv);
        return;
    }
    const struct tree_group *gr = &f->groups[f->group[node]];
    free(tv->focus_corr);
    tv->focus = true;
    tv->focus_group = f->group[node];
    tv->focus_tag = gr->tag;
    tv->focus_len = gr->correlation_len;
    tv->focus_corr = xmalloc(gr->correlation_len + 1);
    if (gr->correlation_len)
        memcpy(tv->focus_corr, gr->correlation, gr->correlation_len);
    tv_rebuild_rows(tv);
    treeview_jump(tv, node);
}

bool treeview_focused(const struct treeview *tv)
{
    return tv->focus;
}
