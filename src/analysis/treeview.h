/*
 * treeview: the model of the interactive causal tree — which rows are visible, what each
 * says, and the expand/collapse and cursor state, kept across rebuilds of the forest (tmux's
 * mode-tree idea: state is keyed by the nodes' stable 64-bit tags, not by their indexes).
 * No curses here: rows are rendered into a strbuf, the UI only paints them.
 *
 * Rows are group headers ("correlation order-7 (4 messages, 1 missing)") followed, when the
 * group is expanded, by its visible nodes in pre-order; a collapsed node hides its
 * subtree. Only the node rows of expanded groups are materialised (4 bytes each); a run of
 * collapsed groups costs nothing, so a million collapsed groups take no memory beyond the
 * forest, and building or locating rows is O(visible node rows + expanded groups), lookups
 * O(log).
 *
 * Defaults: a node is expanded unless the user collapsed it; groups are expanded when the
 * forest has at most TREEVIEW_AUTO_EXPAND_GROUPS of them, collapsed otherwise (decided
 * again on each rebuild until the user expands or collapses something). treeview_collapse_all
 * and treeview_expand_all reset every choice and set both defaults.
 *
 * Ownership: treeview_new returns a view the caller releases with treeview_free. The forest
 * passed to treeview_rebuild is BORROWED and must stay alive and unchanged until the next
 * treeview_rebuild (or treeview_free); whatever the state needs to survive a rebuild (tags,
 * the ids and correlation of the cursor and of expanded groups) is copied.
 *
 * Text: every id and correlation is sanitized (sanitize.h; SAN_ASCII in ASCII mode). The
 * label callback must sanitize what it writes itself.
 */
#ifndef DLQX_TREEVIEW_H
#define DLQX_TREEVIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tree.h"
#include "util.h"

/* Groups start expanded when there are at most this many. */
#define TREEVIEW_AUTO_EXPAND_GROUPS 200
/* Nodes deeper than this are indented as if at this depth, with "[depth N] " before their
 * label (so a screen of a 100,000-deep chain costs O(rows), not O(depth)). */
#define TREEVIEW_INDENT_MAX 40
/* Correlation ids in headers are cut to this many columns. */
#define TREEVIEW_CORRELATION_COLUMNS 40

struct treeview;

enum treeview_row_kind {
    TV_ROW_GROUP, /* a group header */
    TV_ROW_NODE,  /* a message or a placeholder */
};

/* What a row shows (plain value). */
struct treeview_row {
    enum treeview_row_kind kind;
    uint32_t group;   /* forest group index */
    uint32_t node;    /* forest node index; TREE_NONE for a header */
    uint32_t message; /* input message (store) index; TREE_NONE for a header or placeholder */
    uint32_t depth;   /* node depth (0 for a root and for a header) */
    unsigned flags;   /* enum tree_node_flag bits (0 for a header) */
    bool expandable;  /* has something to show below it */
    bool expanded;
};

/* A new, empty view (no rows until treeview_rebuild). ascii: "|- " "`- " "|  " "v " "> "
 * instead of box drawing and triangles, and SAN_ASCII for ids. */
struct treeview *treeview_new(bool ascii);
/* Releases *tv and sets it to NULL; NULL or *tv NULL is fine. */
void treeview_free(struct treeview **tv);

/* How message rows are labelled (called only for message nodes, never placeholders; node
 * is also the store index). NULL: the sanitized id, "(no id)" when empty. */
void treeview_set_label(struct treeview *tv, tree_label_fn label, void *ctx);
void treeview_set_ascii(struct treeview *tv, bool ascii);

/* Recomputes the rows from f (borrowed; see above), keeping the expanded/collapsed state of
 * every tag, the focus group and the cursor on the same tag, else on the nearest of its
 * (remembered) ancestors that survives, else on its group's header, else on the same row
 * number. f NULL means an empty forest. */
void treeview_rebuild(struct treeview *tv, const struct forest *f);

size_t treeview_rows(const struct treeview *tv);
/* false when row is out of range (out untouched). */
bool treeview_row(const struct treeview *tv, size_t row, struct treeview_row *out);

/* The row text, appended to out: prefix, then body, then marks. */
void treeview_row_text(const struct treeview *tv, size_t row, struct strbuf *out);
/* Indentation, tree guides and the expanded/collapsed marker ("  │  ├─ ▸ "). */
void treeview_row_prefix(const struct treeview *tv, size_t row, struct strbuf *out);
/* The header text, "(not in this set) ID" for a placeholder, or the label (with
 * "[depth N] " before it past TREEVIEW_INDENT_MAX). */
void treeview_row_body(const struct treeview *tv, size_t row, struct strbuf *out);
/* " (duplicate)", " (caused itself)", " (cycle broken)" as they apply; nothing for a header. */
void treeview_row_marks(const struct treeview *tv, size_t row, struct strbuf *out);

/* The cursor: a row number (0 when there are no rows). It stays on the same item when rows
 * appear or disappear around it; when its node gets hidden it moves to the node that hid
 * it. */
size_t treeview_cursor(const struct treeview *tv);
/* Moves the cursor (clamped to the last row). */
void treeview_set_cursor(struct treeview *tv, size_t row);

/* Expand/collapse the item on a row. Return whether anything changed (a leaf cannot be
 * expanded; a focused group cannot be collapsed). */
bool treeview_expand(struct treeview *tv, size_t row);
bool treeview_collapse(struct treeview *tv, size_t row);
bool treeview_toggle(struct treeview *tv, size_t row);
/* Expands the item on row and everything below it (a header: its whole group). */
void treeview_expand_all_under(struct treeview *tv, size_t row);
/* Every group and node collapsed (the defaults become "collapsed"); in focus mode the
 * focused group stays open, showing its roots. */
void treeview_collapse_all(struct treeview *tv);
/* Every group and node expanded (the defaults become "expanded"). */
void treeview_expand_all(struct treeview *tv);

/* The row of an item, or SIZE_MAX when it is hidden (or not in the focused group). */
size_t treeview_row_of_node(const struct treeview *tv, uint32_t node);
size_t treeview_row_of_group(const struct treeview *tv, uint32_t group);
/* The row of the parent node, or of the group header for a root; SIZE_MAX for a header. */
size_t treeview_parent_row(const struct treeview *tv, size_t row);
/* Makes node visible by expanding its group and its ancestors, and puts the cursor on it.
 * Returns its row; SIZE_MAX when node is out of range or outside the focused group. */
size_t treeview_jump(struct treeview *tv, uint32_t node);

/* Focus mode: only the group of node is shown (forced open), cursor on node (jumped to).
 * node TREE_NONE (or out of range) leaves focus mode; the cursor stays on its item. The
 * focus survives rebuilds by the group's tag; when the group is gone there are no rows. */
void treeview_focus(struct treeview *tv, uint32_t node);
bool treeview_focused(const struct treeview *tv);

/* Searches the item text (header or body, as rendered, ASCII case-insensitive) of every
 * group and node in scope, hidden ones included, from the item after the cursor (dir > 0)
 * or before it (dir < 0), wrapping around. On a match it jumps there (expanding what hides
 * it) and returns the row; SIZE_MAX when nothing matches (the state is unchanged). Linear in
 * the number of items searched; text "" matches nothing. */
size_t treeview_search(struct treeview *tv, const char *text, int dir);

/* The same search in steps, for a caller that must stay responsive (a forest of a million
 * messages takes about a second): st is zeroed before the first step and kept between steps;
 * each step looks at up to budget items. TV_SEARCH_FOUND: the cursor is on the match (its
 * row in *row, which may be NULL); TV_SEARCH_NONE: nothing matches; TV_SEARCH_MORE: call
 * again. A rebuild, a focus change or a cursor move between steps invalidates st (start
 * again with a zeroed one). */
struct treeview_search {
    bool started;
    uint32_t g; /* the item last looked at: group g, its j-th node (-1: the header) */
    int64_t j;
    size_t done, total; /* items looked at, of the items in scope */
};
enum treeview_search_rc { TV_SEARCH_FOUND, TV_SEARCH_NONE, TV_SEARCH_MORE };
enum treeview_search_rc treeview_search_step(struct treeview *tv, const char *text, int dir,
                                             struct treeview_search *st, size_t budget,
                                             size_t *row);

/* Debugging and tests: how many node rows are materialised, and expanded groups. */
size_t treeview_materialised(const struct treeview *tv);
size_t treeview_expanded_groups(const struct treeview *tv);

#endif
