/*
 * treeview: visible rows of the causal forest and the expand/collapse/cursor state that
 * survives a rebuild (see treeview.h).
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

/* Remembered ancestors of the cursor, for when it disappears in a rebuild. */
#define ANCHOR_STEPS 32
/* Ids (placeholders, the default label) are cut to this many columns. */
#define ID_COLUMNS 100

/* ---- tag maps --------------------------------------------------------------------------- */

struct tv_entry {
    uint64_t tag;
    char *corr; /* groups: a copy of the correlation id (owned); NULL for nodes */
    size_t corr_len;
    bool used;
    bool expanded;
};

/* Open addressing, linear probing, backward-shift deletion; probes are keyed by the tag mixed
 * with a per-view seed, so ids chosen to collide in the tag's low bits do not pile up. */
struct tv_map {
    struct tv_entry *slots;
    size_t mask; /* slots - 1; 0 with no slots */
    size_t count;
    uint64_t seed;
};

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

static size_t map_home(const struct tv_map *m, uint64_t tag)
{
    return (size_t)mix64(tag ^ m->seed) & m->mask;
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

static void map_clear(struct tv_map *m)
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

struct tv_open {
    uint32_t group;
    uint32_t n; /* its visible nodes: rows[off .. off + n), in pre-order */
    size_t off;
};

struct tv_step {
    uint64_t tag;
    size_t off; /* of the id in the anchor's arena */
    uint32_t len;
};

/* The cursor's item as copies, so that it can be found again in a new forest. */
struct tv_anchor {
    bool valid;
    uint64_t group_tag;
    size_t corr_len; /* the correlation is at the start of arena */
    uint32_t n_steps;
    struct tv_step step[ANCHOR_STEPS]; /* the node, its parent, ... */
    struct strbuf arena;
};

struct treeview {
    const struct forest *f; /* borrowed */
    bool ascii;
    unsigned san;
    tree_label_fn label;
    void *label_ctx;

    bool group_default, node_default;
    bool touched; /* the user chose something: the group default stays as it is */
    struct tv_map groups, nodes;

    bool focus;
    uint64_t focus_tag;
    char *focus_corr; /* owned */
    size_t focus_len;
    uint32_t focus_group; /* TREE_NONE when the group is not in the forest */

    uint32_t g_lo, g_hi; /* groups in scope */
    struct tv_open *open;
    size_t n_open, open_cap;
    uint32_t *rows;
    size_t n_node_rows, rows_cap;
    uint32_t *scratch;
    size_t scratch_cap;
    size_t n_rows;

    uint32_t cur_group, cur_node; /* TREE_NONE, TREE_NONE with no rows */
    size_t cur_row;
    struct tv_anchor anchor;
};

static const struct forest empty_forest;

struct treeview *treeview_new(bool ascii)
{
    struct treeview *tv = xcalloc(1, sizeof *tv);
    tv->f = &empty_forest;
    treeview_set_ascii(tv, ascii);
    tv->group_default = tv->node_default = true;
    int anchor;
    uint64_t seed =
        mix64((uint64_t)clock_now_ms() ^ (uint64_t)(uintptr_t)&anchor ^ (uint64_t)(uintptr_t)tv);
    tv->groups.seed = seed;
    tv->nodes.seed = mix64(seed + 1);
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
    map_clear(&tv->groups);
    map_clear(&tv->nodes);
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

static bool in_scope(const struct treeview *tv, uint32_t g)
{
    return g >= tv->g_lo && g < tv->g_hi;
}

static bool node_has_children(const struct forest *f, uint32_t v)
{
    return f->first_child[v] != TREE_NONE;
}

static bool node_expanded(const struct treeview *tv, uint32_t v)
{
    if (!node_has_children(tv->f, v))
        return false;
    const struct tv_entry *e = map_get(&tv->nodes, tv->f->tag[v]);
    return e ? e->expanded : tv->node_default;
}

static bool group_expanded(const struct treeview *tv, uint32_t g)
{
    if (tv->focus && g == tv->focus_group)
        return true;
    const struct tv_entry *e = map_get(&tv->groups, tv->f->groups[g].tag);
    return e ? e->expanded : tv->group_default;
}

/* Records a choice; nothing is kept when it is the default (nor for a leaf). */
static void set_node_state(struct treeview *tv, uint32_t v, bool expanded)
{
    tv->touched = true;
    if (!node_has_children(tv->f, v))
        return;
    if (expanded == tv->node_default)
        map_del(&tv->nodes, tv->f->tag[v]);
    else
        map_put(&tv->nodes, tv->f->tag[v])->expanded = expanded;
}

static void set_group_state(struct treeview *tv, uint32_t g, bool expanded)
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
        if (node_has_children(f, v) && !node_expanded(tv, v))
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

static size_t open_find(const struct treeview *tv, uint32_t g)
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
static void group_sync(struct treeview *tv, uint32_t g)
{
    size_t e = open_lower_bound(tv, g);
    bool was = e < tv->n_open && tv->open[e].group == g;
    bool now = in_scope(tv, g) && group_expanded(tv, g);
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
static void splice_range(struct treeview *tv, size_t e, uint32_t from, uint32_t to, bool show)
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
static void node_sync(struct treeview *tv, uint32_t v)
{
    const struct forest *f = tv->f;
    size_t e = open_find(tv, f->group[v]);
    if (e == SIZE_MAX || treeview_row_of_node(tv, v) == SIZE_MAX)
        return;
    splice_range(tv, e, f->pre[v] + 1, f->pre[v] + f->size[v], node_expanded(tv, v));
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Every row from the state alone: O(open groups' visible rows + open groups), not O(groups),
 * when groups are collapsed by default. */
static void rebuild_rows(struct treeview *tv)
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
            if (group_expanded(tv, g))
                group_sync(tv, g); /* appends: g is past every open group */
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
        group_sync(tv, gs[i]);
    free(gs);
}

/* Row -> item. */
static bool locate(const struct treeview *tv, size_t row, uint32_t *g, uint32_t *node)
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
static size_t item_row(const struct treeview *tv, uint32_t g, uint32_t node)
{
    if (g == TREE_NONE || !in_scope(tv, g))
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
    return item_row(tv, tv->f->group[node], node);
}

size_t treeview_row_of_group(const struct treeview *tv, uint32_t group)
{
    return group < tv->f->n_groups ? item_row(tv, group, TREE_NONE) : SIZE_MAX;
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
    if (!locate(tv, row, &g, &v))
        return false;
    const struct forest *f = tv->f;
    memset(out, 0, sizeof *out);
    out->group = g;
    out->node = v;
    out->message = TREE_NONE;
    if (v == TREE_NONE) {
        out->kind = TV_ROW_GROUP;
        out->expandable = true;
        out->expanded = group_expanded(tv, g);
        return true;
    }
    out->kind = TV_ROW_NODE;
    out->message = tree_node_message(f, v);
    out->depth = f->depth[v];
    out->flags = f->flags[v];
    out->expandable = node_has_children(f, v);
    out->expanded = node_expanded(tv, v);
    return true;
}

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

static void set_cur(struct treeview *tv, uint32_t g, uint32_t node)
{
    tv->cur_group = g;
    tv->cur_node = node;
    tv->cur_row = item_row(tv, g, node);
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
    locate(tv, row, &g, &v);
    set_cur(tv, g, v);
}

/* The node that shows v: v itself, or its topmost collapsed ancestor. O(depth). */
static uint32_t visible_for(const struct treeview *tv, uint32_t v)
{
    uint32_t best = v;
    for (uint32_t a = tv->f->parent[v]; a != TREE_NONE; a = tv->f->parent[a])
        if (!node_expanded(tv, a))
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
    if (g == TREE_NONE || !in_scope(tv, g)) {
        set_cur_row(tv, tv->cur_row);
        return;
    }
    size_t r = item_row(tv, g, v);
    if (r != SIZE_MAX) {
        tv->cur_row = r;
        return;
    }
    set_cur(tv, g, open_find(tv, g) == SIZE_MAX ? TREE_NONE : visible_for(tv, v));
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
    if (g == TREE_NONE || f->groups[g].tag != a->group_tag || !in_scope(tv, g))
        return false;
    for (uint32_t k = 0; k < a->n_steps; k++) {
        const struct tv_step *s = &a->step[k];
        uint32_t v = TREE_NONE;
        if (!tree_find(f, base, a->corr_len, base + s->off, s->len, &v, 1))
            continue;
        while (v != TREE_NONE && f->tag[v] != s->tag)
            v = f->next_dup[v];
        if (v == TREE_NONE || f->group[v] != g)
            continue;
        set_cur(tv, g, open_find(tv, g) == SIZE_MAX ? TREE_NONE : visible_for(tv, v));
        return true;
    }
    set_cur(tv, g, TREE_NONE);
    return true;
}

void treeview_rebuild(struct treeview *tv, const struct forest *f)
{
    tv->f = f ? f : &empty_forest;
    f = tv->f;
    if (!tv->touched)
        tv->group_default = f->n_groups <= TREEVIEW_AUTO_EXPAND_GROUPS;
    if (tv->focus) {
        uint32_t g = tree_group_find(f, tv->focus_corr, tv->focus_len);
        tv->focus_group = g != TREE_NONE && f->groups[g].tag == tv->focus_tag ? g : TREE_NONE;
    }
    rebuild_rows(tv);
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
    if (!locate(tv, row, &g, &v))
        return false;
    if (v == TREE_NONE) {
        if (open_find(tv, g) != SIZE_MAX)
            return false;
        set_group_state(tv, g, true);
        group_sync(tv, g);
    } else {
        if (!node_has_children(tv->f, v) || node_expanded(tv, v))
            return false;
        set_node_state(tv, v, true);
        node_sync(tv, v);
    }
    cursor_sync(tv);
    return true;
}

bool treeview_collapse(struct treeview *tv, size_t row)
{
    uint32_t g, v;
    if (!locate(tv, row, &g, &v))
        return false;
    if (v == TREE_NONE) {
        if (tv->focus || open_find(tv, g) == SIZE_MAX)
            return false;
        set_group_state(tv, g, false);
        group_sync(tv, g);
    } else {
        if (!node_expanded(tv, v))
            return false;
        set_node_state(tv, v, false);
        node_sync(tv, v);
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
    if (!locate(tv, row, &g, &v))
        return;
    const struct forest *f = tv->f;
    uint32_t from, to;
    if (v == TREE_NONE) {
        from = f->groups[g].pre;
        to = from + f->groups[g].n_nodes;
        set_group_state(tv, g, true);
    } else {
        from = f->pre[v];
        to = from + f->size[v];
    }
    for (uint32_t pos = from; pos < to; pos++)
        set_node_state(tv, f->order[pos], true);
    size_t e = open_find(tv, g);
    if (e == SIZE_MAX)
        group_sync(tv, g);
    else if (v == TREE_NONE)
        splice_range(tv, e, from, to, true);
    else
        splice_range(tv, e, from + 1, to, true);
    cursor_sync(tv);
}

static void reset_all(struct treeview *tv, bool expanded)
{
    map_clear(&tv->groups);
    map_clear(&tv->nodes);
    tv->group_default = tv->node_default = expanded;
    tv->touched = true;
    rebuild_rows(tv);
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
    if (!locate(tv, row, &g, &v) || v == TREE_NONE)
        return SIZE_MAX;
    uint32_t p = tv->f->parent[v];
    return item_row(tv, g, p);
}

size_t treeview_jump(struct treeview *tv, uint32_t node)
{
    const struct forest *f = tv->f;
    if (node >= f->n_nodes || !in_scope(tv, f->group[node]))
        return SIZE_MAX;
    uint32_t g = f->group[node];
    uint32_t top = TREE_NONE; /* the topmost ancestor that had to be opened */
    for (uint32_t a = f->parent[node]; a != TREE_NONE; a = f->parent[a]) {
        if (!node_expanded(tv, a)) {
            set_node_state(tv, a, true);
            top = a;
        }
    }
    size_t e = open_find(tv, g);
    if (e == SIZE_MAX) {
        set_group_state(tv, g, true);
        group_sync(tv, g);
    } else if (top != TREE_NONE) {
        splice_range(tv, e, f->pre[top] + 1, f->pre[top] + f->size[top], true);
    }
    set_cur(tv, g, node);
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
        if (g != TREE_NONE && !group_expanded(tv, g))
            set_group_state(tv, g, true);
        rebuild_rows(tv);
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
    rebuild_rows(tv);
    treeview_jump(tv, node);
}

bool treeview_focused(const struct treeview *tv)
{
    return tv->focus;
}

/* ---- text ------------------------------------------------------------------------------- */

static void header_text(const struct treeview *tv, uint32_t g, struct strbuf *out)
{
    const struct tree_group *gr = &tv->f->groups[g];
    if (gr->correlation_len) {
        sb_adds(out, "correlation ");
        sanitize_fit(out, gr->correlation, gr->correlation_len, TREEVIEW_CORRELATION_COLUMNS,
                     tv->san);
    } else {
        sb_adds(out, "no correlation");
    }
    unsigned n = gr->n_messages, missing = gr->n_nodes - gr->n_messages;
    sb_addf(out, " (%u message%s", n, n == 1 ? "" : "s");
    if (missing)
        sb_addf(out, ", %u missing", missing);
    sb_addc(out, ')');
}

static void node_text(const struct treeview *tv, uint32_t v, struct strbuf *out)
{
    const struct forest *f = tv->f;
    if (f->flags[v] & TREE_PLACEHOLDER) {
        sb_adds(out, "(not in this set) ");
        sanitize_fit(out, f->id[v], f->id_len[v], ID_COLUMNS, tv->san);
    } else if (tv->label) {
        tv->label(out, f, v, tv->label_ctx);
    } else if (f->id_len[v]) {
        sanitize_fit(out, f->id[v], f->id_len[v], ID_COLUMNS, tv->san);
    } else {
        sb_adds(out, "(no id)");
    }
}

static void marks_text(const struct forest *f, uint32_t v, struct strbuf *out)
{
    unsigned flags = f->flags[v];
    if (flags & TREE_DUPLICATE)
        sb_adds(out, " (duplicate)");
    if (flags & TREE_SELF_CAUSED)
        sb_adds(out, " (caused itself)");
    if (flags & TREE_CYCLE_BROKEN)
        sb_adds(out, " (cycle broken)");
}

void treeview_row_prefix(const struct treeview *tv, size_t row, struct strbuf *out)
{
    uint32_t g, v;
    if (!locate(tv, row, &g, &v))
        return;
    /* The same marks as the UI's glyph table (term.c): ▾ ▸, or v > in ASCII. */
    const char *opened = tv->ascii ? "v " : "▾ ", *closed = tv->ascii ? "> " : "▸ ";
    if (v == TREE_NONE) {
        sb_adds(out, group_expanded(tv, g) ? opened : closed);
        return;
    }
    const struct forest *f = tv->f;
    uint32_t d = f->depth[v];
    sb_adds(out, "  ");
    if (d > 0) {
        /* Guides for the nearest ancestors only (at most TREEVIEW_INDENT_MAX - 1 of them):
         * has_next[k] is for the ancestor k + 1 levels up. */
        bool has_next[TREEVIEW_INDENT_MAX];
        uint32_t shown = d < TREEVIEW_INDENT_MAX ? d : TREEVIEW_INDENT_MAX;
        uint32_t a = f->parent[v];
        for (uint32_t k = 0; k + 1 < shown; k++, a = f->parent[a])
            has_next[k] = f->next_sibling[a] != TREE_NONE;
        for (uint32_t k = shown - 1; k-- > 0;)
            sb_adds(out, has_next[k] ? (tv->ascii ? "|  " : "│  ") : "   ");
        bool next = f->next_sibling[v] != TREE_NONE;
        sb_adds(out, next ? (tv->ascii ? "|- " : "├─ ") : (tv->ascii ? "`- " : "└─ "));
    }
    if (!node_has_children(f, v))
        sb_adds(out, "  ");
    else
        sb_adds(out, node_expanded(tv, v) ? opened : closed);
}

void treeview_row_body(const struct treeview *tv, size_t row, struct strbuf *out)
{
    uint32_t g, v;
    if (!locate(tv, row, &g, &v))
        return;
    if (v == TREE_NONE) {
        header_text(tv, g, out);
        return;
    }
    if (tv->f->depth[v] > TREEVIEW_INDENT_MAX)
        sb_addf(out, "[depth %u] ", (unsigned)tv->f->depth[v]);
    node_text(tv, v, out);
}

void treeview_row_marks(const struct treeview *tv, size_t row, struct strbuf *out)
{
    uint32_t g, v;
    if (locate(tv, row, &g, &v) && v != TREE_NONE)
        marks_text(tv->f, v, out);
}

void treeview_row_text(const struct treeview *tv, size_t row, struct strbuf *out)
{
    treeview_row_prefix(tv, row, out);
    treeview_row_body(tv, row, out);
    treeview_row_marks(tv, row, out);
}

/* ---- search ----------------------------------------------------------------------------- */

static int lower_ascii(int c)
{
    return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

static bool contains_ci(const char *hay, size_t n, const char *needle, size_t m)
{
    if (m > n)
        return false;
    for (size_t i = 0; i + m <= n; i++) {
        size_t k = 0;
        while (k < m &&
               lower_ascii((unsigned char)hay[i + k]) == lower_ascii((unsigned char)needle[k]))
            k++;
        if (k == m)
            return true;
    }
    return false;
}

enum treeview_search_rc treeview_search_step(struct treeview *tv, const char *text, int dir,
                                             struct treeview_search *st, size_t budget,
                                             size_t *row)
{
    const struct forest *f = tv->f;
    size_t m = text ? strlen(text) : 0;
    if (!m || !f || tv->g_lo >= tv->g_hi)
        return TV_SEARCH_NONE;
    if (!st->started) {
        /* Items in scope as (group, j): j = -1 the header, else the group's j-th node in
         * pre-order. Start from the cursor's item. */
        st->started = true;
        st->done = 0;
        st->g = tv->cur_group == TREE_NONE ? tv->g_lo : tv->cur_group;
        st->j = -1;
        if (tv->cur_group != TREE_NONE && tv->cur_node != TREE_NONE)
            st->j = (int64_t)f->pre[tv->cur_node] - f->groups[st->g].pre;
        st->total = (size_t)(tv->g_hi - tv->g_lo);
        if (tv->g_hi - tv->g_lo == f->n_groups)
            st->total += f->n_nodes;
        else
            for (uint32_t k = tv->g_lo; k < tv->g_hi; k++)
                st->total += f->groups[k].n_nodes;
    }
    if (st->g < tv->g_lo || st->g >= tv->g_hi)
        return TV_SEARCH_NONE; /* the scope changed under a search in steps */
    struct strbuf sb;
    sb_init(&sb);
    enum treeview_search_rc rc = TV_SEARCH_NONE;
    uint32_t g = st->g;
    int64_t j = st->j;
    for (size_t n = 0; st->done < st->total; st->done++, n++) {
        if (n == budget) {
            rc = TV_SEARCH_MORE;
            break;
        }
        if (dir >= 0) {
            if (j + 1 < (int64_t)f->groups[g].n_nodes) {
                j++;
            } else {
                g = g + 1 < tv->g_hi ? g + 1 : tv->g_lo;
                j = -1;
            }
        } else if (j >= 0) {
            j--;
        } else {
            g = g > tv->g_lo ? g - 1 : tv->g_hi - 1;
            j = (int64_t)f->groups[g].n_nodes - 1;
        }
        sb_reset(&sb);
        uint32_t v = j < 0 ? TREE_NONE : f->order[f->groups[g].pre + (uint32_t)j];
        if (v == TREE_NONE)
            header_text(tv, g, &sb);
        else
            node_text(tv, v, &sb);
        if (!contains_ci(sb.buf ? sb.buf : "", sb.len, text, m))
            continue;
        size_t found;
        if (v == TREE_NONE) {
            set_cur(tv, g, TREE_NONE);
            found = tv->cur_row;
        } else {
            found = treeview_jump(tv, v);
        }
        if (row)
            *row = found;
        rc = found == SIZE_MAX ? TV_SEARCH_NONE : TV_SEARCH_FOUND;
        st->done = st->total;
        break;
    }
    st->g = g;
    st->j = j;
    sb_free(&sb);
    return rc;
}

size_t treeview_search(struct treeview *tv, const char *text, int dir)
{
    struct treeview_search st;
    memset(&st, 0, sizeof st);
    size_t row = SIZE_MAX;
    if (treeview_search_step(tv, text, dir, &st, SIZE_MAX, &row) != TV_SEARCH_FOUND)
        return SIZE_MAX;
    return row;
}
