/*
 * treeview_internal: the view's state (struct treeview, its tag maps, open groups and cursor
 * anchor) and the helpers the treeview files call across each other. Only treeview*.c include
 * it; everything outside sees the opaque struct treeview of treeview.h.
 */
#ifndef DLQX_TREEVIEW_INTERNAL_H
#define DLQX_TREEVIEW_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tree.h"
#include "treeview.h"
#include "util.h"

/* Remembered ancestors of the cursor, for when it disappears in a rebuild. */
#define ANCHOR_STEPS 32

/* ---- tag maps (treeview.c) ------------------------------------------------------------- */

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

/* The forest of a view that has none (all zero). */
extern const struct forest tv_empty_forest;

/* ---- treeview.c: tag maps, state, rows -------------------------------------------------- */

void tv_map_clear(struct tv_map *m);

bool tv_in_scope(const struct treeview *tv, uint32_t g);
bool tv_node_has_children(const struct forest *f, uint32_t v);
bool tv_node_expanded(const struct treeview *tv, uint32_t v);
bool tv_group_expanded(const struct treeview *tv, uint32_t g);
/* Records a choice; nothing is kept when it is the default (nor for a leaf). */
void tv_set_node_state(struct treeview *tv, uint32_t v, bool expanded);
void tv_set_group_state(struct treeview *tv, uint32_t g, bool expanded);

size_t tv_open_find(const struct treeview *tv, uint32_t g);
/* Opens or closes group g's rows to match its state. */
void tv_group_sync(struct treeview *tv, uint32_t g);
/* Regenerates the rows of order[from .. to) inside open group e (show false: removes them). */
void tv_splice_range(struct treeview *tv, size_t e, uint32_t from, uint32_t to, bool show);
/* After a node's state changed: its descendants' rows, when it is visible. */
void tv_node_sync(struct treeview *tv, uint32_t v);
/* Every row from the state alone. */
void tv_rebuild_rows(struct treeview *tv);
/* Row -> item. */
bool tv_locate(const struct treeview *tv, size_t row, uint32_t *g, uint32_t *node);
/* Item -> row, or SIZE_MAX when hidden. */
size_t tv_item_row(const struct treeview *tv, uint32_t g, uint32_t node);

/* ---- treeview_nav.c: the cursor ---------------------------------------------------------- */

/* Puts the cursor on an item (its row, or row 0 when it is hidden) and remembers it. */
void tv_set_cur(struct treeview *tv, uint32_t g, uint32_t node);

#endif
