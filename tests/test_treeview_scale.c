/*
 * test_treeview_scale: the interactive tree's model under a random walk checked against a
 * brute-force layout, and at scale: a 100,000-deep chain, the indent cap, and a million nodes
 * collapsed (timed, printed).
 */
#include "treeview_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tree.h"
#include "treeview.h"
#include "util.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- a random walk, checked against a brute-force layout --------------------------------- */

static uint64_t rng_state;
static uint32_t rng(uint32_t n)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)((rng_state >> 33) % n);
}

/* The rows must be exactly: each group in scope, then (when its header says open) its
 * nodes in pre-order, skipping below each node whose row says collapsed. */
static void check_layout(const struct treeview *tv, const struct forest *f)
{
    size_t n = treeview_rows(tv), r = 0;
    if (!n)
        return;
    struct treeview_row info;
    assert_true(treeview_row(tv, 0, &info));
    uint32_t g_lo = treeview_focused(tv) ? info.group : 0;
    uint32_t g_hi = treeview_focused(tv) ? info.group + 1 : f->n_groups;
    for (uint32_t g = g_lo; g < g_hi; g++) {
        assert_true(treeview_row(tv, r, &info));
        assert_int_equal(info.kind, TV_ROW_GROUP);
        assert_int_equal(info.group, g);
        assert_int_equal(treeview_row_of_group(tv, g), r);
        r++;
        const struct tree_group *gr = &f->groups[g];
        uint32_t pos = gr->pre, end = pos + gr->n_nodes;
        if (!info.expanded) {
            for (uint32_t p = pos; p < end; p++)
                assert_int_equal(treeview_row_of_node(tv, f->order[p]), SIZE_MAX);
            continue;
        }
        while (pos < end) {
            uint32_t v = f->order[pos];
            assert_true(treeview_row(tv, r, &info));
            assert_int_equal(info.node, v);
            assert_int_equal(info.group, g);
            assert_int_equal(treeview_row_of_node(tv, v), r);
            r++;
            if (info.expandable && !info.expanded) {
                for (uint32_t p = pos + 1; p < f->pre[v] + f->size[v]; p++)
                    assert_int_equal(treeview_row_of_node(tv, f->order[p]), SIZE_MAX);
                pos = f->pre[v] + f->size[v];
            } else {
                pos++;
            }
        }
    }
    assert_int_equal(r, n);
    assert_true(treeview_cursor(tv) < n);
}

struct seen {
    uint64_t tag;
    int state; /* 0 leaf, 1 collapsed, 2 expanded, 3 header collapsed, 4 header expanded */
};

static int cmp_seen(const void *a, const void *b)
{
    const struct seen *x = a, *y = b;
    if (x->tag != y->tag)
        return x->tag < y->tag ? -1 : 1;
    return (x->state > y->state) - (x->state < y->state);
}

/* The visible items by tag and state, sorted (input order does not matter). */
static struct seen *visible_set(const struct treeview *tv, const struct forest *f, uint64_t *cur)
{
    size_t n = treeview_rows(tv);
    struct seen *s = xcalloc(n + 1, sizeof *s);
    for (size_t r = 0; r < n; r++) {
        struct treeview_row info;
        assert_true(treeview_row(tv, r, &info));
        if (info.kind == TV_ROW_GROUP) {
            s[r].tag = f->groups[info.group].tag;
            s[r].state = info.expanded ? 4 : 3;
        } else {
            s[r].tag = f->tag[info.node];
            s[r].state = info.expandable ? (info.expanded ? 2 : 1) : 0;
        }
        if (r == treeview_cursor(tv))
            *cur = s[r].tag;
    }
    qsort(s, n, sizeof *s, cmp_seen);
    return s;
}

static void test_random_walk(void **state)
{
    enum { N = 80, ROUNDS = 40, OPS = 60 };
    static const char *const corrs[] = {"x", "y", "z", ""};
    char ids[N][8], causes[N][8];
    struct tree_msg m[N], shuffled[N];
    rng_state = 12345;
    for (int round = 0; round < ROUNDS; round++) {
        /* Unique ids per group and causes that point back (or nowhere), so that the shape
         * does not depend on input order and a shuffled rebuild must show the same. */
        for (uint32_t i = 0; i < N; i++) {
            snprintf(ids[i], sizeof ids[i], "m%u", (unsigned)i);
            uint32_t c = rng(4) ? rng(i + 3) : N + rng(4);
            snprintf(causes[i], sizeof causes[i], "m%u", (unsigned)c);
            m[i].id = span_c(ids[i]);
            m[i].correlation = span_c(corrs[i % (round % 4 + 1)]);
            m[i].causation = c >= i && c < N ? span_c("") : span_c(causes[i]);
        }
        struct forest f;
        tree_init(&f);
        assert_int_equal(tree_build(&f, m, N, NULL), ST_OK);
        struct treeview *tv = treeview_new(round & 1);
        treeview_rebuild(tv, &f);
        check_layout(tv, &f);
        for (int op = 0; op < OPS; op++) {
            size_t rows = treeview_rows(tv);
            size_t r = rows ? rng((uint32_t)rows) : 0;
            switch (rng(11)) {
            case 0:
                treeview_expand(tv, r);
                break;
            case 1:
                treeview_collapse(tv, r);
                break;
            case 2:
            case 3:
                treeview_toggle(tv, r);
                break;
            case 4:
                treeview_expand_all_under(tv, r);
                break;
            case 5:
                if (!rng(4))
                    treeview_collapse_all(tv);
                break;
            case 6:
                treeview_jump(tv, rng(f.n_nodes));
                break;
            case 7:
                treeview_focus(tv, rng(3) ? TREE_NONE : rng(f.n_nodes));
                break;
            case 8:
                treeview_search(tv, ids[rng(N)], rng(2) ? 1 : -1);
                break;
            default:
                treeview_set_cursor(tv, r);
                break;
            }
            check_layout(tv, &f);
        }
        /* Rebuild from the same messages in another order. */
        uint64_t cur1 = 0, cur2 = 0;
        struct seen *before = visible_set(tv, &f, &cur1);
        size_t n_before = treeview_rows(tv);
        memcpy(shuffled, m, sizeof m);
        for (uint32_t i = N - 1; i > 0; i--) {
            uint32_t j = rng(i + 1);
            struct tree_msg t = shuffled[i];
            shuffled[i] = shuffled[j];
            shuffled[j] = t;
        }
        assert_int_equal(tree_build(&f, shuffled, N, NULL), ST_OK);
        treeview_rebuild(tv, &f);
        check_layout(tv, &f);
        struct seen *after = visible_set(tv, &f, &cur2);
        assert_int_equal(treeview_rows(tv), n_before);
        for (size_t i = 0; i < n_before; i++) {
            assert_true(before[i].tag == after[i].tag);
            assert_int_equal(before[i].state, after[i].state);
        }
        assert_true(cur1 == cur2);
        free(before);
        free(after);
        treeview_free(&tv);
        tree_free(&f);
    }
}

/* ---- scale ------------------------------------------------------------------------------- */

static void test_deep_chain(void **state)
{
    enum { DEEP = 100000 };
    char(*ids)[12] = xmalloc((DEEP + 1) * sizeof *ids);
    struct tree_msg *m = xcalloc(DEEP + 1, sizeof *m);
    for (uint32_t i = 0; i <= DEEP; i++) {
        snprintf(ids[i], sizeof ids[i], "m%u", (unsigned)i);
        m[i].id = span_c(ids[i]);
        m[i].correlation = span_c("deep");
        m[i].causation = i ? span_c(ids[i - 1]) : span_c("");
    }
    struct forest f;
    tree_init(&f);
    assert_int_equal(tree_build(&f, m, DEEP, NULL), ST_OK);
    struct treeview *tv = treeview_new(true);
    double t0 = now_s();
    treeview_rebuild(tv, &f);
    double t_build = now_s() - t0;
    assert_int_equal(treeview_rows(tv), DEEP + 1);
    /* A screen of the bottom: indentation stops growing, so each row is short. */
    t0 = now_s();
    struct strbuf sb;
    sb_init(&sb);
    for (size_t r = DEEP + 1 - 50; r <= DEEP; r++) {
        sb_reset(&sb);
        treeview_row_text(tv, r, &sb);
        assert_true(sb.len < 3 * TREEVIEW_INDENT_MAX + 40);
    }
    double t_screen = now_s() - t0;
    struct strbuf want;
    sb_init(&want);
    sb_adds(&want, "  ");
    for (int k = 1; k < TREEVIEW_INDENT_MAX; k++)
        sb_adds(&want, "   ");
    sb_addf(&want, "`-   [depth %u] m%u", DEEP - 1, DEEP - 1);
    assert_string_equal(sb.buf, want.buf);
    /* Collapse all, then jump to the bottom: 99,999 ancestors opened. */
    treeview_collapse_all(tv);
    assert_int_equal(treeview_rows(tv), 1);
    t0 = now_s();
    assert_int_equal(treeview_jump(tv, DEEP - 1), DEEP);
    double t_jump = now_s() - t0;
    /* A rebuild with one more message below keeps every level open and the cursor. */
    t0 = now_s();
    assert_int_equal(tree_build(&f, m, DEEP + 1, NULL), ST_OK);
    double t_forest = now_s() - t0;
    t0 = now_s();
    treeview_rebuild(tv, &f);
    double t_rebuild = now_s() - t0;
    assert_int_equal(treeview_rows(tv), DEEP + 1); /* m99999 is a collapsed default now */
    assert_int_equal(treeview_cursor(tv), DEEP);
    struct treeview_row info;
    assert_true(treeview_row(tv, DEEP, &info));
    assert_int_equal(info.node, DEEP - 1);
    assert_true(info.expandable && !info.expanded);
    /* Collapsing the root with the cursor at the bottom brings it to the root. */
    t0 = now_s();
    assert_true(treeview_collapse(tv, 1));
    double t_collapse = now_s() - t0;
    assert_int_equal(treeview_cursor(tv), 1);
    assert_int_equal(treeview_rows(tv), 2);
    /* Search for the leaf from the top: linear, then opens it all again. */
    t0 = now_s();
    assert_int_equal(treeview_search(tv, "m100000", 1), DEEP + 1);
    double t_search = now_s() - t0;
    print_message("deep chain %u: rows %.1f ms, screen of 50 rows %.3f ms, jump %.1f ms, "
                  "forest rebuild %.1f ms, view rebuild %.1f ms, collapse %.1f ms, "
                  "search %.1f ms\n",
                  (unsigned)DEEP, t_build * 1e3, t_screen * 1e3, t_jump * 1e3, t_forest * 1e3,
                  t_rebuild * 1e3, t_collapse * 1e3, t_search * 1e3);
    sb_free(&sb);
    sb_free(&want);
    treeview_free(&tv);
    tree_free(&f);
    free(m);
    free(ids);
}

/* Deeper than the indentation cap, with a branch: guides are those of the nearest
 * ancestors. */
static void test_indent_cap(void **state)
{
    enum { N = TREEVIEW_INDENT_MAX + 5 };
    char ids[N][8];
    struct tree_msg m[N + 1];
    for (int i = 0; i < N; i++) {
        snprintf(ids[i], sizeof ids[i], "%d", i);
        m[i].id = span_c(ids[i]);
        m[i].correlation = span_c("");
        m[i].causation = i ? span_c(ids[i - 1]) : span_c("");
    }
    m[N].id = span_c("x"); /* a second child of node 41: node 42 has a next sibling */
    m[N].correlation = span_c("");
    m[N].causation = span_c(ids[41]);
    struct forest f;
    tree_init(&f);
    assert_int_equal(tree_build(&f, m, N + 1, NULL), ST_OK);
    struct treeview *tv = treeview_new(false);
    treeview_rebuild(tv, &f);
    /* Node 44: columns for depths 5..43; depth 42's is a guide. */
    char *s = row_str(tv, treeview_row_of_node(tv, 44));
    struct strbuf want;
    sb_init(&want);
    sb_adds(&want, "  ");
    for (int d = 44 - TREEVIEW_INDENT_MAX + 1; d < 44; d++)
        sb_adds(&want, d == 42 ? "│  " : "   ");
    sb_adds(&want, "└─   [depth 44] 44");
    assert_string_equal(s, want.buf);
    free(s);
    s = row_str(tv, treeview_row_of_node(tv, 40));
    sb_reset(&want);
    sb_adds(&want, "  ");
    for (int d = 1; d < 40; d++)
        sb_adds(&want, "   ");
    sb_adds(&want, "└─ ▾ 40");
    assert_string_equal(s, want.buf);
    free(s);
    sb_free(&want);
    treeview_free(&tv);
    tree_free(&f);
}

static void test_million(void **state)
{
    enum { N = 1000000, PER = 4, G = N / PER };
    /* 250,000 conversations of 4: a, b <- a, c <- a, d <- b. */
    char(*corrs)[12] = xmalloc(G * sizeof *corrs);
    static const char *const id4[PER] = {"a", "b", "c", "d"};
    static const char *const cause4[PER] = {"", "a", "a", "b"};
    struct tree_msg *m = xcalloc(N, sizeof *m);
    for (uint32_t g = 0; g < G; g++) {
        snprintf(corrs[g], sizeof corrs[g], "c%u", (unsigned)g);
        for (int k = 0; k < PER; k++) {
            m[g * PER + k].correlation = span_c(corrs[g]);
            m[g * PER + k].id = span_c(id4[k]);
            m[g * PER + k].causation = span_c(cause4[k]);
        }
    }
    struct forest f;
    tree_init(&f);
    double t0 = now_s();
    assert_int_equal(tree_build(&f, m, N, NULL), ST_OK);
    double t_forest = now_s() - t0;
    struct treeview *tv = treeview_new(true);
    t0 = now_s();
    treeview_rebuild(tv, &f);
    double t_view = now_s() - t0;
    assert_int_equal(treeview_rows(tv), G);
    assert_int_equal(treeview_materialised(tv), 0);
    char *s = row_str(tv, 123456);
    assert_string_equal(s, "> correlation c123456 (4 messages)");
    free(s);
    /* Open one: four rows appear, nothing else is made. */
    t0 = now_s();
    assert_true(treeview_expand(tv, 123456));
    double t_expand = now_s() - t0;
    assert_int_equal(treeview_rows(tv), G + 4);
    assert_int_equal(treeview_materialised(tv), 4);
    s = row_str(tv, 123460);
    assert_string_equal(s, "  `-   c");
    free(s);
    treeview_set_cursor(tv, 123458);
    /* Jump far below: a second group opened, rows located by binary search. */
    t0 = now_s();
    assert_int_equal(treeview_jump(tv, (G - 1) * PER + 3), G - 1 + 4 + 3);
    double t_jump = now_s() - t0;
    treeview_set_cursor(tv, 123458);
    /* The app rebuilds the forest in place: the state holds. */
    t0 = now_s();
    assert_int_equal(tree_build(&f, m, N, NULL), ST_OK);
    double t_forest2 = now_s() - t0;
    t0 = now_s();
    treeview_rebuild(tv, &f);
    double t_rebuild = now_s() - t0;
    assert_int_equal(treeview_rows(tv), G + 8);
    assert_int_equal(treeview_materialised(tv), 8);
    assert_int_equal(treeview_cursor(tv), 123458);
    /* Search across everything (labels of hidden nodes included). */
    treeview_set_cursor(tv, 0);
    t0 = now_s();
    assert_int_equal(treeview_search(tv, "c200000 ", 1), 200000 + 4);
    double t_search = now_s() - t0;
    /* Expand all: a million rows, made in one pass; collapse all again. */
    t0 = now_s();
    treeview_expand_all(tv);
    double t_expand_all = now_s() - t0;
    assert_int_equal(treeview_rows(tv), G + N);
    assert_int_equal(treeview_cursor(tv), 200000 * (PER + 1));
    t0 = now_s();
    treeview_collapse_all(tv);
    double t_collapse_all = now_s() - t0;
    assert_int_equal(treeview_rows(tv), G);
    assert_int_equal(treeview_materialised(tv), 0);
    print_message("1M nodes in %u groups: forest %.0f ms, view (collapsed) %.3f ms, expand one "
                  "%.3f ms, jump %.3f ms, forest rebuild %.0f ms, view rebuild %.3f ms, search "
                  "%.0f ms, expand all %.0f ms, collapse all %.3f ms\n",
                  (unsigned)G, t_forest * 1e3, t_view * 1e3, t_expand * 1e3, t_jump * 1e3,
                  t_forest2 * 1e3, t_rebuild * 1e3, t_search * 1e3, t_expand_all * 1e3,
                  t_collapse_all * 1e3);

    /* One group of a million: 1,000 roots of 999 children each. Open by default (one group),
     * collapsed to a single row, then opened root by root. */
    static char kids[1000][8];
    char(*cids)[16] = xmalloc(N * sizeof *cids);
    for (uint32_t r = 0; r < 1000; r++)
        snprintf(kids[r], sizeof kids[r], "r%u", (unsigned)r);
    for (uint32_t i = 0; i < N; i++) {
        uint32_t r = i / 1000, k = i % 1000;
        m[i].correlation = span_c("one");
        if (k == 0) {
            m[i].id = span_c(kids[r]);
            m[i].causation = span_c("");
        } else {
            snprintf(cids[i], sizeof cids[i], "r%u.%u", (unsigned)r, (unsigned)k);
            m[i].id = span_c(cids[i]);
            m[i].causation = span_c(kids[r]);
        }
    }
    assert_int_equal(tree_build(&f, m, N, NULL), ST_OK);
    treeview_free(&tv);
    tv = treeview_new(false);
    t0 = now_s();
    treeview_rebuild(tv, &f);
    double t_open = now_s() - t0;
    assert_int_equal(treeview_rows(tv), 1 + N);
    t0 = now_s();
    treeview_collapse_all(tv);
    double t_coll = now_s() - t0;
    assert_int_equal(treeview_rows(tv), 1);
    assert_int_equal(treeview_materialised(tv), 0);
    assert_true(treeview_expand(tv, 0));
    assert_int_equal(treeview_rows(tv), 1001);
    t0 = now_s();
    assert_true(treeview_expand(tv, 501));
    double t_root = now_s() - t0;
    assert_int_equal(treeview_rows(tv), 1001 + 999);
    s = row_str(tv, 502);
    assert_string_equal(s, "  ├─   r500.1");
    free(s);
    t0 = now_s();
    assert_true(treeview_collapse(tv, 501));
    double t_root_c = now_s() - t0;
    assert_int_equal(treeview_rows(tv), 1001);
    print_message("1M nodes in one group: view (all open) %.0f ms, collapse all %.3f ms, open "
                  "a root of 999 %.3f ms, close it %.3f ms\n",
                  t_open * 1e3, t_coll * 1e3, t_root * 1e3, t_root_c * 1e3);
    treeview_free(&tv);
    tree_free(&f);
    free(cids);
    free(m);
    free(corrs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_walk),
        cmocka_unit_test(test_deep_chain),
        cmocka_unit_test(test_indent_cap),
        cmocka_unit_test(test_million),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
