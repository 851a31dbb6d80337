/*
 * treeview_text: what a row says — its prefix (indentation, guides, the open/closed mark),
 * its body (a group's header or a node's label) and its marks — and the search over that same
 * text, in one go or in steps. Together because the search matches the text as rendered.
 */
#include "treeview.h"

#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "treeview_internal.h"

/* Ids (placeholders, the default label) are cut to this many columns. */
#define ID_COLUMNS 100

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
    if (!tv_locate(tv, row, &g, &v))
        return;
    /* The same marks as the UI's glyph table (term.c): ▾ ▸, or v > in ASCII. */
    const char *opened = tv->ascii ? "v " : "▾ ", *closed = tv->ascii ? "> " : "▸ ";
    if (v == TREE_NONE) {
        sb_adds(out, tv_group_expanded(tv, g) ? opened : closed);
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
    if (!tv_node_has_children(f, v))
        sb_adds(out, "  ");
    else
        sb_adds(out, tv_node_expanded(tv, v) ? opened : closed);
}

void treeview_row_body(const struct treeview *tv, size_t row, struct strbuf *out)
{
    uint32_t g, v;
    if (!tv_locate(tv, row, &g, &v))
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
    if (tv_locate(tv, row, &g, &v) && v != TREE_NONE)
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
                                             struct treeview_search *st, size_t budget, size_t *row)
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
            tv_set_cur(tv, g, TREE_NONE);
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
