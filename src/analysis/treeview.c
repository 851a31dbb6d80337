/*
 * treeview: building the visible rows of the causal forest (see treeview.h) — the view
 * object, the tag maps that hold the expand/collapse choices, and the flattening of open
 * groups into rows with the row <-> item lookups. The cursor and the operations live in
 * treeview_nav.c, the rows' text and the search in treeview_text.c.
 *
 * Layout: the groups in scope (all of them, or the focused one) each give one header row;
 * an open group is followed by its visible nodes. Only the open groups are listed (open[],
 * sorted by group) with their node rows in one array (rows[]), so the row number of group g's
 * header is (g - first group in scope) + (node rows of open groups before g). Locating a row
 * is a binary search over open[], then over the group's rows by pre-order number. Changes
 * splice one group's or one subtree's rows: O(rows changed + rows after them).
 *
 * State: two maps from tag to an explicit choice (expanded or collapsed) where it differs
 * from the default; a group's entry also keeps a copy of its correlation id, so that a
 * rebuild finds the open groups with tree_group_find instead of scanning every group.
 */
#include "treeview.h"

#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "treeview_internal.h"

/* ---- tag maps --------------------------------------------------------------------------- */

static size_t map_home(const struct tv_map *m, uint64_t tag)
{
    return (size_t)hash_mix64(tag ^ m->seed) & m->mask;
}

static struct tv_entry *map_get(const struct tv_map *m, uint64_t tag)
{
    if (!m->count)
        return NULL;
    for (size_t i = map_home(m, tag);; i = (i + 1) & m->mask) {
        if (!m->slots[i].used)
            return NULL;
        if (m->slots[i].tag == tag)
            return &m->slots[i];
    }
}

static void map_grow(struct tv_map *m)
{
    size_t old_n = m->slots ? m->mask + 1 : 0;
    struct tv_entry *old = m->slots;
    size_t n = old_n ? old_n * 2 : 64;
    m->slots = xcalloc(n, sizeof *m->slots);
    m->mask = n - 1;
    for (size_t i = 0; i < old_n; i++) {
        if (!old[i].used)
            continue;
        size_t j = map_home(m, old[i].tag);
        while (m->slots[j].used)
            j = (j + 1) & m->mask;
        m->slots[j] = old[i];
    }
    free(old);
}

/* The entry for tag, made (expanded false, corr NULL) when there is none. */
static struct tv_entry *map_put(struct tv_map *m, uint64_t tag)
{
    struct tv_entry *e = map_get(m, tag);
    if (e)
        return e;
    if (!m->slots || (m->count + 1) * 4 > (m->mask + 1) * 3)
        map_grow(m);
    size_t i = map_home(m, tag);
    while (m->slots[i].used)
        i = (i + 1) & m->mask;
    e = &m->slots[i];
    memset(e, 0, sizeof *e);
    e->used = true;
    e->tag = tag;
    m->count++;
    return e;
}

static void map_del(struct tv_map *m, uint64_t tag)
{
    struct tv_entry *e = map_get(m, tag);
    if (!e)
        return;
    free(e->corr);
    m->count--;
    size_t i = (size_t)(e - m->slots), j = i;
    for (;;) { /* pull later entries of the probe run back over the hole */
        j = (j + 1) & m->mask;
        if (!m->slots[j].used)
            break;
        size_t k = map_home(m, m->slots[j].tag);
        bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
        if (!stays) {
            m->slots[i] = m->slots[j];
            i = j;
        }
    }
    memset(&m->slots[i], 0, sizeof m->slots[i]);
}

void tv_map_clear(struct tv_map *m)
{
    if (!m->slots)
        return;
    for (size_t i = 0; i <= m->mask; i++)
        free(m->slots[i].corr);
    free(m->slots);
    m->slots = NULL;
    m->mask = m->count = 0;
}

/* ---- the view --------------------------------------------------------------------------- */

const struct forest tv_empty_forest;

struct treeview *treeview_new(bool ascii)
{
    struct treeview *tv = xcalloc(1, sizeof *tv);
    tv->f = &tv_empty_forest;
    treeview_set_ascii(tv, ascii);
    tv->group_default = tv->node_default = true;
    int anchor;
    uint64_t seed = hash_mix64((uint64_t)clock_now_ms() ^ (uint64_t)(uintptr_t)&anchor ^
                               (uint64_t)(uintptr_t)tv);
    tv->groups.seed = seed;
    tv->nodes.seed = hash_mix64(seed + 1);
    tv->focus_group = TREE_NONE;
    tv->cur_group = tv->cur_node = TREE_NONE;
    sb_init(&tv->anchor.arena);
    return tv;
}

void treeview_free(struct treeview **tvp)
{
    if (!tvp || !*tvp)
        return;
    struct treeview *tv = *tvp;
    tv_map_clear(&tv->groups);
    tv_map_clear(&tv->nodes);
    free(tv->focus_corr);
    free(tv->open);
    free(tv->rows);
    free(tv->scratch);
    sb_free(&tv->anchor.arena);
    free(tv);
    *tvp = NULL;
}

void treeview_set_label(struct treeview *tv, tree_label_fn label, void *ctx)
{
    tv->label = label;
    tv->label_ctx = ctx;
}

void treeview_set_ascii(struct treeview *tv, bool ascii)
{
    tv->ascii = ascii;
    tv->san = ascii ? SAN_ASCII : 0;
}

/* ---- state ------------------------------------------------------------------------------ */

bool tv_in_scope(const struct treeview *tv, uint32_t g)
{
    return g >= tv->g_lo && g < tv->g_hi;
}

bool tv_node_has_children(const struct forest *f, uint32_t v)
{
    return f->first_child[v] != TREE_NONE;
}

bool tv_node_expanded(const struct treeview *tv, uint32_t v)
{
    if (!tv_node_has_children(tv->f, v))
        return false;
    const struct tv_entry *e = map_get(&tv->nodes, tv->f->tag[v]);
    return e ? e->expanded : tv->node_default;
}

bool tv_group_expanded(const struct treeview *tv, uint32_t g)
{
    if (tv->focus && g == tv->focus_group)
        return true;
    const struct tv_entry *e = map_get(&tv->groups, tv->f->groups[g].tag);
    return e ? e->expanded : tv->group_default;
}

/* Records a choice; nothing is kept when it is the default (nor for a leaf). */
void tv_set_node_state(struct treeview *tv, uint32_t v, bool expanded)
{
    tv->touched = true;
    if (!tv_node_has_children(tv->f, v))
        return;
    if (expanded == tv->node_default)
        map_del(&tv->nodes, tv->f->tag[v]);
    else
        map_put(&tv->nodes, tv->f->tag[v])->expanded = expanded;
}

void tv_set_group_state(struct treeview *tv, uint32_t g, bool expanded)
{
    tv->touched = true;
    const struct tree_group *gr = &tv->f->groups[g];
    if (expanded == tv->group_default) {
        map_del(&tv->groups, gr->tag);
        return;
    }
    struct tv_entry *e = map_put(&tv->groups, gr->tag);
    e->expanded = expanded;
    if (!e->corr) {
        e->corr = xmalloc(gr->correlation_len + 1);
        if (gr->correlation_len)
            memcpy(e->corr, gr->correlation, gr->correlation_len);
        e->corr_len = gr->correlation_len;
    }
}

/* ---- rows ------------------------------------------------------------------------------- */

/* The visible nodes of order[from .. to) (a group, or the descendants of an expanded visible
 * node) into scratch; returns how many. */
static size_t gen_rows(struct treeview *tv, uint32_t from, uint32_t to)
{
    const struct forest *f = tv->f;
    size_t k = 0;
    uint32_t pos = from;
    while (pos < to) {
        uint32_t v = f->order[pos];
        if (k == tv->scratch_cap)
            xgrow((void **)&tv->scratch, &tv->scratch_cap, k + 1, sizeof *tv->scratch);
        tv->scratch[k++] = v;
        if (tv_node_has_children(f, v) && !tv_node_expanded(tv, v))
            pos = f->pre[v] + f->size[v];
        else
            pos++;
    }
    return k;
}

/* Replaces rows[at .. at + old) with the k rows in scratch. */
static void rows_replace(struct treeview *tv, size_t at, size_t old, size_t k)
{
    size_t tail = tv->n_node_rows - at - old;
    size_t n = tv->n_node_rows - old + k;
    if (n > tv->rows_cap)
        xgrow((void **)&tv->rows, &tv->rows_cap, n, sizeof *tv->rows);
    if (tail && old != k)
        memmove(tv->rows + at + k, tv->rows + at + old, tail * sizeof *tv->rows);
    if (k)
        memcpy(tv->rows + at, tv->scratch, k * sizeof *tv->rows);
    tv->n_node_rows = n;
    tv->n_rows = tv->n_rows - old + k;
}

static void shift_offsets(struct treeview *tv, size_t from_entry, size_t removed, size_t added)
{
    for (size_t e = from_entry; e < tv->n_open; e++)
        tv->open[e].off = tv->open[e].off - removed + added;
}

/* The first open[] entry whose group is >= g. */
static size_t open_lower_bound(const struct treeview *tv, uint32_t g)
{
    size_t lo = 0, hi = tv->n_open;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tv->open[mid].group < g)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t tv_open_find(const struct treeview *tv, uint32_t g)
{
    size_t e = open_lower_bound(tv, g);
    return e < tv->n_open && tv->open[e].group == g ? e : SIZE_MAX;
}

/* The first of the n rows in seg whose pre-order number is >= pre. */
static size_t seg_lower_bound(const struct treeview *tv, const uint32_t *seg, size_t n,
                              uint32_t pre)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tv->f->pre[seg[mid]] < pre)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Opens or closes group g's rows to match its state. */
void tv_group_sync(struct treeview *tv, uint32_t g)
{
    size_t e = open_lower_bound(tv, g);
    bool was = e < tv->n_open && tv->open[e].group == g;
    bool now = tv_in_scope(tv, g) && tv_group_expanded(tv, g);
    if (was == now)
        return;
    if (now) {
        const struct tree_group *gr = &tv->f->groups[g];
        size_t off = e < tv->n_open ? tv->open[e].off : tv->n_node_rows;
        size_t k = gen_rows(tv, gr->pre, gr->pre + gr->n_nodes);
        rows_replace(tv, off, 0, k);
        if (tv->n_open == tv->open_cap)
            xgrow((void **)&tv->open, &tv->open_cap, tv->n_open + 1, sizeof *tv->open);
        memmove(tv->open + e + 1, tv->open + e, (tv->n_open - e) * sizeof *tv->open);
        tv->n_open++;
        tv->open[e].group = g;
        tv->open[e].n = (uint32_t)k;
        tv->open[e].off = off;
        shift_offsets(tv, e + 1, 0, k);
    } else {
        struct tv_open o = tv->open[e];
        rows_replace(tv, o.off, o.n, 0);
        memmove(tv->open + e, tv->open + e + 1, (tv->n_open - e - 1) * sizeof *tv->open);
        tv->n_open--;
        shift_offsets(tv, e, o.n, 0);
    }
}

/* Regenerates the rows of order[from .. to) inside open group e (show false: removes them). */
void tv_splice_range(struct treeview *tv, size_t e, uint32_t from, uint32_t to, bool show)
{
    struct tv_open *o = &tv->open[e];
    const uint32_t *seg = tv->rows + o->off;
    size_t i = seg_lower_bound(tv, seg, o->n, from);
    size_t j = seg_lower_bound(tv, seg, o->n, to);
    size_t k = show ? gen_rows(tv, from, to) : 0;
    rows_replace(tv, o->off + i, j - i, k);
    o->n = (uint32_t)(o->n - (j - i) + k);
    shift_offsets(tv, e + 1, j - i, k);
}

/* After a node's state changed: its descendants' rows, when it is visible. */
void tv_node_sync(struct treeview *tv, uint32_t v)
{
    const struct forest *f = tv->f;
    size_t e = tv_open_find(tv, f->group[v]);
    if (e == SIZE_MAX || treeview_row_of_node(tv, v) == SIZE_MAX)
        return;
    tv_splice_range(tv, e, f->pre[v] + 1, f->pre[v] + f->size[v], tv_node_expanded(tv, v));
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Every row from the state alone: O(open groups' visible rows + open groups), not O(groups),
 * when groups are collapsed by default. */
void tv_rebuild_rows(struct treeview *tv)
{
    const struct forest *f = tv->f;
    tv->n_open = tv->n_node_rows = 0;
    if (tv->focus) {
        tv->g_lo = tv->focus_group == TREE_NONE ? 0 : tv->focus_group;
        tv->g_hi = tv->focus_group == TREE_NONE ? 0 : tv->focus_group + 1;
    } else {
        tv->g_lo = 0;
        tv->g_hi = f->n_groups;
    }
    tv->n_rows = tv->g_hi - tv->g_lo;
    if (tv->focus || tv->group_default) {
        for (uint32_t g = tv->g_lo; g < tv->g_hi; g++)
            if (tv_group_expanded(tv, g))
                tv_group_sync(tv, g); /* appends: g is past every open group */
        return;
    }
    /* Collapsed by default: only the groups the user opened, found by correlation. */
    size_t n = 0, cap = 0;
    uint32_t *gs = NULL;
    for (size_t i = 0; tv->groups.slots && i <= tv->groups.mask; i++) {
        const struct tv_entry *e = &tv->groups.slots[i];
        if (!e->used || !e->expanded)
            continue;
        uint32_t g = tree_group_find(f, e->corr, e->corr_len);
        if (g == TREE_NONE || f->groups[g].tag != e->tag)
            continue;
        xgrow((void **)&gs, &cap, n + 1, sizeof *gs);
        gs[n++] = g;
    }
    if (n)
        qsort(gs, n, sizeof *gs, cmp_u32);
    for (size_t i = 0; i < n; i++)
        tv_group_sync(tv, gs[i]);
    free(gs);
}

/* Row -> item. */
bool tv_locate(const struct treeview *tv, size_t row, uint32_t *g, uint32_t *node)
{
    if (row >= tv->n_rows)
        return false;
    size_t lo = 0, hi = tv->n_open; /* the last open group whose header is at or before row */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        size_t hdr = (size_t)(tv->open[mid].group - tv->g_lo) + tv->open[mid].off;
        if (hdr <= row)
            lo = mid + 1;
        else
            hi = mid;
    }
    *node = TREE_NONE;
    if (lo == 0) {
        *g = tv->g_lo + (uint32_t)row;
        return true;
    }
    const struct tv_open *o = &tv->open[lo - 1];
    size_t hdr = (size_t)(o->group - tv->g_lo) + o->off;
    if (row == hdr) {
        *g = o->group;
    } else if (row - hdr <= o->n) {
        *g = o->group;
        *node = tv->rows[o->off + (row - hdr - 1)];
    } else {
        *g = o->group + (uint32_t)(row - hdr - o->n);
    }
    return true;
}

/* Item -> row, or SIZE_MAX when hidden. */
size_t tv_item_row(const struct treeview *tv, uint32_t g, uint32_t node)
{
    if (g == TREE_NONE || !tv_in_scope(tv, g))
        return SIZE_MAX;
    size_t e = open_lower_bound(tv, g);
    bool open = e < tv->n_open && tv->open[e].group == g;
    size_t before = e < tv->n_open ? tv->open[e].off : tv->n_node_rows;
    size_t hdr = (size_t)(g - tv->g_lo) + before;
    if (node == TREE_NONE)
        return hdr;
    if (!open)
        return SIZE_MAX;
    const uint32_t *seg = tv->rows + tv->open[e].off;
    size_t i = seg_lower_bound(tv, seg, tv->open[e].n, tv->f->pre[node]);
    return i < tv->open[e].n && seg[i] == node ? hdr + 1 + i : SIZE_MAX;
}

size_t treeview_row_of_node(const struct treeview *tv, uint32_t node)
{
    if (node >= tv->f->n_nodes)
        return SIZE_MAX;
    return tv_item_row(tv, tv->f->group[node], node);
}

size_t treeview_row_of_group(const struct treeview *tv, uint32_t group)
{
    return group < tv->f->n_groups ? tv_item_row(tv, group, TREE_NONE) : SIZE_MAX;
}

size_t treeview_rows(const struct treeview *tv)
{
    return tv->n_rows;
}

size_t treeview_materialised(const struct treeview *tv)
{
    return tv->n_node_rows;
}

size_t treeview_expanded_groups(const struct treeview *tv)
{
    return tv->n_open;
}

bool treeview_row(const struct treeview *tv, size_t row, struct treeview_row *out)
{
    uint32_t g, v;
    if (!tv_locate(tv, row, &g, &v))
        return false;
    const struct forest *f = tv->f;
    memset(out, 0, sizeof *out);
    out->group = g;
    out->node = v;
    out->message = TREE_NONE;
    if (v == TREE_NONE) {
        out->kind = TV_ROW_GROUP;
        out->expandable = true;
        out->expanded = tv_group_expanded(tv, g);
        return true;
    }
    out->kind = TV_ROW_NODE;
    out->message = tree_node_message(f, v);
    out->depth = f->depth[v];
    out->flags = f->flags[v];
    out->expandable = tv_node_has_children(f, v);
    out->expanded = tv_node_expanded(tv, v);
    return true;
}
