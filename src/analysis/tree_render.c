/*
 * tree_render: the causal forest as indented text, the whole of it (tree_render) or the path
 * to one node and its subtree (tree_render_of); every id through the escape. Reads the forest
 * only, through tree.h.
 */
#include "tree.h"

#include <stdlib.h>
#include <string.h>

/* ---- rendering -------------------------------------------------------------------------- */

void tree_escape_default(struct strbuf *out, const void *data, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = data;
    size_t i = 0;
    while (i < len) {
        size_t run = i; /* plain text goes out a run at a time, not byte by byte */
        while (run < len && p[run] >= 0x20 && p[run] < 0x7f && p[run] != '\\')
            run++;
        if (run > i)
            sb_add(out, p + i, run - i);
        if (run == len)
            break;
        unsigned char c = p[run];
        if (c == '\\') {
            sb_add(out, "\\\\", 2);
        } else {
            char e[4] = {'\\', 'x', hex[c >> 4], hex[c & 15]};
            sb_add(out, e, 4);
        }
        i = run + 1;
    }
}

struct render {
    const struct forest *f;
    struct strbuf *out;
    tree_label_fn label;
    void *ctx;
    tree_escape_fn escape;
    unsigned flags;
    const char *tee, *elbow, *pipe;
    /* has_next[d]: whether the node last drawn at depth d has a sibling still to come. */
    bool has_next[TREE_RENDER_INDENT_MAX + 1];
};

static void render_init(struct render *r, const struct forest *f, struct strbuf *out,
                        tree_label_fn label, void *ctx, tree_escape_fn escape, unsigned flags)
{
    memset(r, 0, sizeof *r);
    r->f = f;
    r->out = out;
    r->label = label;
    r->ctx = ctx;
    r->escape = escape ? escape : tree_escape_default;
    r->flags = flags;
    bool ascii = flags & TREE_RENDER_ASCII;
    r->tee = ascii ? "|- " : "├─ ";
    r->elbow = ascii ? "`- " : "└─ ";
    r->pipe = ascii ? "|  " : "│  ";
}

static void render_header(struct render *r, uint32_t g)
{
    const struct tree_group *gr = &r->f->groups[g];
    if (gr->correlation_len) {
        sb_adds(r->out, "correlation ");
        r->escape(r->out, gr->correlation, gr->correlation_len);
    } else {
        sb_adds(r->out, "no correlation");
    }
    sb_addf(r->out, " (%u message%s)\n", (unsigned)gr->n_messages, gr->n_messages == 1 ? "" : "s");
}

static void render_line(struct render *r, uint32_t v, uint32_t depth, bool has_next, bool target)
{
    const struct forest *f = r->f;
    uint32_t shown = depth < TREE_RENDER_INDENT_MAX ? depth : TREE_RENDER_INDENT_MAX;
    if (depth <= TREE_RENDER_INDENT_MAX)
        r->has_next[depth] = has_next;
    for (uint32_t k = 1; k < shown; k++)
        sb_adds(r->out, r->has_next[k] ? r->pipe : "   ");
    if (depth > 0)
        sb_adds(r->out, has_next ? r->tee : r->elbow);
    if (depth > TREE_RENDER_INDENT_MAX)
        sb_addf(r->out, "[depth %u] ", (unsigned)depth);
    unsigned flags = f->flags[v];
    if (flags & TREE_PLACEHOLDER) {
        sb_adds(r->out, "(not in this set) ");
        r->escape(r->out, f->id[v], f->id_len[v]);
    } else if (r->label) {
        r->label(r->out, f, v, r->ctx);
    } else if (f->id_len[v]) {
        r->escape(r->out, f->id[v], f->id_len[v]);
    } else {
        sb_adds(r->out, "(no id)");
    }
    if (!(r->flags & TREE_RENDER_NO_MARKS)) {
        if (flags & TREE_DUPLICATE)
            sb_adds(r->out, " (duplicate)");
        if (flags & TREE_SELF_CAUSED)
            sb_adds(r->out, " (caused itself)");
        if (flags & TREE_CYCLE_BROKEN)
            sb_adds(r->out, " (cycle broken)");
        if (target)
            sb_adds(r->out, r->flags & TREE_RENDER_ASCII ? " <" : " ◀");
    }
    sb_addc(r->out, '\n');
}

/* order[from .. to) drawn with their own sibling links; the first node counts as the last
 * of its siblings when alone is set (the --of view hides the others). */
static void render_range(struct render *r, uint32_t from, uint32_t to, bool alone,
                         bool target_first)
{
    for (uint32_t i = from; i < to; i++) {
        uint32_t v = r->f->order[i];
        bool first = i == from;
        bool has_next = r->f->next_sibling[v] != TREE_NONE && !(first && alone);
        render_line(r, v, r->f->depth[v], has_next, first && target_first);
    }
}

void tree_render(const struct forest *f, struct strbuf *out, tree_label_fn label, void *ctx,
                 tree_escape_fn escape, unsigned flags)
{
    struct render r;
    render_init(&r, f, out, label, ctx, escape, flags);
    for (uint32_t g = 0; g < f->n_groups; g++) {
        if (g)
            sb_addc(out, '\n');
        render_header(&r, g);
        const struct tree_group *gr = &f->groups[g];
        render_range(&r, gr->pre, gr->pre + gr->n_nodes, false, false);
    }
}

void tree_render_of(const struct forest *f, uint32_t node, struct strbuf *out, tree_label_fn label,
                    void *ctx, tree_escape_fn escape, unsigned flags)
{
    struct render r;
    render_init(&r, f, out, label, ctx, escape, flags);
    render_header(&r, f->group[node]);
    /* The path, root first: gather it bottom-up, then draw it top-down. */
    size_t depth = f->depth[node];
    uint32_t *path = xmalloc((depth + 1) * sizeof *path);
    tree_ancestors(f, node, path, depth + 1);
    for (size_t k = depth; k > 0; k--)
        render_line(&r, path[k], (uint32_t)(depth - k), false, false);
    free(path);
    render_range(&r, f->pre[node], f->pre[node] + f->size[node], true, true);
}
