/*
 * tree: the causal forest. Messages are grouped by correlation id; inside a group a message
 * whose causation id names another message of the group is that message's child. Missing
 * parents become placeholder nodes, cycles are broken, duplicates are kept and flagged.
 * Building is O(n) and every traversal is iterative, so million-deep chains are fine.
 *
 * Ownership: the forest BORROWS the id, correlation and causation bytes it is built from
 * (they live in the snapshot store); they must outlive the forest. The array of struct
 * tree_msg itself is not kept and may be freed once tree_build returns. Everything else
 * (nodes, groups, indexes) is owned by the forest and released by tree_free.
 *
 * Numbering: node i is input message i for i < n_messages; placeholders follow, in the
 * order they were first referenced. Node indexes are uint32_t; TREE_NONE means "none".
 *
 * Tags: every node and group has a 64-bit tag computed from its bytes only (no seed, same
 * on every host), so a UI can key expanded/cursor state on it across rebuilds. A
 * placeholder has the tag that the message with its id gets once it arrives. The internal
 * indexes are seeded per build (hostile ids cannot aim at one probe run); that changes no
 * result, which depends on input order alone.
 */
#ifndef DLQX_TREE_H
#define DLQX_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bytes.h"
#include "status.h"
#include "util.h"

#define TREE_NONE UINT32_MAX
/* At most this many messages (placeholders can double the node count; it must fit uint32). */
#define TREE_MAX_MESSAGES ((UINT32_MAX - 1u) / 2u)

/* A borrowed byte string; may hold NULs. len 0 is the empty string (data may be NULL). */
struct tree_span {
    const void *data;
    size_t len;
};

static inline struct tree_span tree_span_bytes(const struct bytes *b)
{
    struct tree_span s = {b->data, b->len};
    return s;
}

/* One input message (all three strings borrowed). An empty causation means "no parent". */
struct tree_msg {
    struct tree_span id;
    struct tree_span correlation;
    struct tree_span causation;
};

enum tree_node_flag {
    TREE_PLACEHOLDER = 1u << 0,  /* a causation id with no message in the group */
    TREE_DUPLICATE = 1u << 1,    /* not the first node with its (correlation, id) */
    TREE_CYCLE_BROKEN = 1u << 2, /* its causation closed a cycle; it was made a root */
    TREE_SELF_CAUSED = 1u << 3,  /* its causation was its own id; it is a root */
};

struct tree_group {
    const unsigned char *correlation; /* borrowed; empty for messages without one */
    size_t correlation_len;
    uint64_t tag;        /* stable across rebuilds: hash of the correlation id */
    uint32_t first_root; /* roots chain through next_sibling, in input order */
    uint32_t n_roots;
    uint32_t n_messages; /* input messages in the group */
    uint32_t n_nodes;    /* n_messages plus its placeholders */
    uint32_t pre;        /* its nodes are order[pre .. pre + n_nodes) */
};

/* Private to tree.c: an open-addressing index of entry numbers. */
struct tree_slot {
    uint32_t entry; /* TREE_NONE when the slot is empty */
    uint32_t check; /* high half of the entry's key */
};
struct tree_index {
    struct tree_slot *slots;
    uint32_t mask;
    uint32_t count;
};

/* Nodes are stored as parallel arrays indexed by node number (struct of arrays: a build
 * sweeps one or two of them at a time, which keeps a million nodes' links in cache). The
 * fields are public for reading; only tree.c writes them. All arrays are owned by the
 * forest; the bytes that id[] points at are borrowed. */
struct forest {
    uint32_t n_nodes;
    uint32_t n_messages;
    uint32_t n_groups;
    uint32_t n_roots;
    const unsigned char **id; /* the message's id, or the causation id that named a
                                 placeholder (borrowed bytes) */
    uint32_t *id_len;
    uint64_t *tag;          /* stable across rebuilds: hash of (correlation, id, occurrence) */
    uint32_t *parent;       /* TREE_NONE for a root */
    uint32_t *first_child;  /* children in input order */
    uint32_t *next_sibling; /* the next child of the same parent, or the next root of the group */
    uint32_t *next_dup;     /* the next node with the same (correlation, id), in input order
                               (NULL after tree_compact) */
    uint32_t *group;
    uint32_t *depth;           /* 0 for a root */
    uint32_t *pre;             /* position in order[] */
    uint32_t *size;            /* nodes in the subtree, itself included */
    uint32_t *occurrence;      /* 0 for the first node with its (correlation, id), then 1, 2, ...
                                  (NULL after tree_compact) */
    uint8_t *flags;            /* enum tree_node_flag bits */
    uint32_t *order;           /* every node in pre-order, group by group */
    struct tree_group *groups; /* in order of first appearance */
    /* private */
    size_t node_cap, group_cap;
    uint64_t seed;
    struct tree_index by_group; /* correlation -> group */
    struct tree_index by_id;    /* (group, id) -> first node with that id */
};

void tree_init(struct forest *f);
/* Builds the forest of msgs[0..n). f must have been initialised; whatever it held is
 * dropped (its arrays are reused, so a rebuild of a similar set allocates nothing new).
 * Errors: ST_ERANGE (n > TREE_MAX_MESSAGES, or an id longer than 4 GiB), ST_EINVAL (a span
 * with len > 0 and no data). On error f is left empty and err says which message. */
enum status tree_build(struct forest *f, const struct tree_msg *msgs, size_t n, struct error *err);
/* The same from a function that gives message i's spans (what: 0 its id, 1 its correlation,
 * 2 its causation), for inputs too large to hold as struct tree_msg (48 B a message). It may
 * be asked for one span several times and must give the same each time; the bytes it names
 * are borrowed as tree_build's are. */
typedef struct tree_span (*tree_span_fn)(void *ctx, uint32_t i, int what);
enum status tree_build_from(struct forest *f, tree_span_fn get, void *ctx, size_t n,
                            struct error *err);
/* Releases what the forest owns and leaves it empty (ready for tree_build again). */
void tree_free(struct forest *f);

static inline uint32_t tree_node_count(const struct forest *f)
{
    return f->n_nodes;
}
static inline uint32_t tree_root_count(const struct forest *f)
{
    return f->n_roots;
}
static inline uint32_t tree_group_count(const struct forest *f)
{
    return f->n_groups;
}
/* Per-node accessors (node must be < n_nodes; the fields of struct forest say the same).
 * tree_node_id: the id bytes (borrowed from the input), *len their length. */
static inline const unsigned char *tree_node_id(const struct forest *f, uint32_t node, size_t *len)
{
    *len = f->id_len[node];
    return f->id[node];
}
static inline uint64_t tree_node_tag(const struct forest *f, uint32_t node)
{
    return f->tag[node];
}
static inline unsigned tree_node_flags(const struct forest *f, uint32_t node)
{
    return f->flags[node];
}
static inline uint32_t tree_node_parent(const struct forest *f, uint32_t node)
{
    return f->parent[node];
}
static inline uint32_t tree_node_first_child(const struct forest *f, uint32_t node)
{
    return f->first_child[node];
}
static inline uint32_t tree_node_next_sibling(const struct forest *f, uint32_t node)
{
    return f->next_sibling[node];
}
/* Borrowed; valid until the forest is rebuilt or freed. */
static inline const struct tree_group *tree_group_get(const struct forest *f, uint32_t group)
{
    return &f->groups[group];
}
/* The input index of a node, or TREE_NONE for a placeholder. */
static inline uint32_t tree_node_message(const struct forest *f, uint32_t node)
{
    return node < f->n_messages ? node : TREE_NONE;
}
static inline uint32_t tree_group_of(const struct forest *f, uint32_t node)
{
    return f->group[node];
}
static inline uint32_t tree_depth(const struct forest *f, uint32_t node)
{
    return f->depth[node];
}

/* "What caused this": writes node, its parent, ..., its root into out (at most cap of
 * them) and returns how many there are in all (depth + 1), so a short out can be retried. */
size_t tree_ancestors(const struct forest *f, uint32_t node, uint32_t *out, size_t cap);
/* "What else happened because of this": node's descendants in pre-order, not including
 * node itself. Borrowed slice of f->order; *count gets its length (0 for a leaf). */
const uint32_t *tree_descendants(const struct forest *f, uint32_t node, size_t *count);

/* The group with this correlation id, or TREE_NONE. */
uint32_t tree_group_find(const struct forest *f, const void *corr, size_t corr_len);
/* The nodes with this id in this correlation group (duplicates in input order; a
 * placeholder when the id is only named as a cause). Writes at most cap, returns the total.
 * O(1) plus the number found. */
size_t tree_find(const struct forest *f, const void *corr, size_t corr_len, const void *id,
                 size_t id_len, uint32_t *out, size_t cap);
/* The node with this id in this group whose tag is tag, or TREE_NONE. */
uint32_t tree_find_tagged(const struct forest *f, const void *corr, size_t corr_len, const void *id,
                          size_t id_len, uint64_t tag);
/* Drops what only the build and tree_find's quick path need (the index of ids, next_dup,
 * occurrence: 24 B a message, 240 MB at ten million, issue #15). tree_find then scans the
 * group (O(its nodes)); next_dup and occurrence are NULL until the next build. */
void tree_compact(struct forest *f);
/* The nodes with this id in any group, in pre-order. Writes at most cap, returns the total.
 * A linear scan: meant for one-off lookups such as --of ID. An empty id matches nothing. */
size_t tree_find_id(const struct forest *f, const void *id, size_t id_len, uint32_t *out,
                    size_t cap);

/* A pre-order walk over a range of f->order; plain value, nothing to free. */
struct tree_walk {
    uint32_t pos;
    uint32_t end;
};
static inline void tree_walk_all(const struct forest *f, struct tree_walk *w)
{
    w->pos = 0;
    w->end = f->n_nodes;
}
static inline void tree_walk_group(const struct forest *f, uint32_t group, struct tree_walk *w)
{
    w->pos = f->groups[group].pre;
    w->end = w->pos + f->groups[group].n_nodes;
}
/* node and its descendants. */
static inline void tree_walk_subtree(const struct forest *f, uint32_t node, struct tree_walk *w)
{
    w->pos = f->pre[node];
    w->end = w->pos + f->size[node];
}
/* The next node (and its depth, when depth is not NULL); false at the end. */
static inline bool tree_walk_next(const struct forest *f, struct tree_walk *w, uint32_t *node,
                                  uint32_t *depth)
{
    if (w->pos >= w->end)
        return false;
    uint32_t v = f->order[w->pos++];
    *node = v;
    if (depth)
        *depth = f->depth[v];
    return true;
}
/* Skips the descendants of node, which the walk must have just returned (a collapsed
 * node in a UI). */
static inline void tree_walk_skip(const struct forest *f, struct tree_walk *w, uint32_t node)
{
    uint32_t after = f->pre[node] + f->size[node];
    if (after > w->pos)
        w->pos = after < w->end ? after : w->end;
}

/* Rendering. ids are untrusted: every id and correlation goes through escape. */
typedef void (*tree_escape_fn)(struct strbuf *out, const void *data, size_t len);
/* Writes the text of a message node (never called for placeholders). It must escape what it
 * writes itself; node is also the input message index. */
typedef void (*tree_label_fn)(struct strbuf *out, const struct forest *f, uint32_t node, void *ctx);

enum tree_render_flag {
    TREE_RENDER_ASCII = 1u << 0,    /* "|- ", "`- ", "|  " instead of box drawing */
    TREE_RENDER_NO_MARKS = 1u << 1, /* no " (duplicate)", " (cycle broken)", ... suffixes */
};

/* Deeper nodes are drawn at this indentation with "[depth N] " before the label, so that
 * the output of a deep chain stays linear in its length. */
#define TREE_RENDER_INDENT_MAX 40

/* The default escape: printable ASCII as is, a backslash as "\\", any other byte as \xNN. */
void tree_escape_default(struct strbuf *out, const void *data, size_t len);

/* Appends the whole forest to out:
 *
 *   correlation order-7 (5 messages)     one header per group ("no correlation" when the id
 *   place                                is empty); a blank line between groups
 *   ├─ charge
 *   │  └─ email
 *   └─ charge (duplicate)                marks unless TREE_RENDER_NO_MARKS
 *   (not in this set) dispute            a placeholder (always a root): drawn by this
 *   └─ refund                            module, never passed to label
 *
 * label NULL writes the escaped id ("(no id)" when empty); escape NULL means
 * tree_escape_default. flags are enum tree_render_flag bits. */
void tree_render(const struct forest *f, struct strbuf *out, tree_label_fn label, void *ctx,
                 tree_escape_fn escape, unsigned flags);
/* The "--of ID" view of one node: its group header, the path from its root down to it
 * (other branches left out), then its whole subtree. The node's line ends in " ◀" (" <" in
 * ASCII) unless TREE_RENDER_NO_MARKS. */
void tree_render_of(const struct forest *f, uint32_t node, struct strbuf *out, tree_label_fn label,
                    void *ctx, tree_escape_fn escape, unsigned flags);

#endif
