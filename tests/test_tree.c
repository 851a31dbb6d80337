/*
 * test_tree: the causal forest — linking, placeholders, cycles, duplicates, queries, tags
 * across rebuilds and a randomised check against a brute-force reading of the rules. The
 * rendered text, escaping, ids with NUL bytes and deep chains: test_tree_render.c.
 */
#include "tree_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tree.h"
#include "util.h"

static void test_empty(void **state)
{
    struct forest f;
    tree_init(&f);
    struct error err;
    assert_int_equal(tree_build(&f, NULL, 0, &err), ST_OK);
    assert_int_equal(tree_node_count(&f), 0);
    assert_int_equal(tree_root_count(&f), 0);
    assert_int_equal(tree_group_count(&f), 0);
    assert_int_equal(tree_group_find(&f, "", 0), TREE_NONE);
    assert_int_equal(tree_find(&f, "", 0, "a", 1, NULL, 0), 0);
    assert_int_equal(tree_find_id(&f, "a", 1, NULL, 0), 0);
    struct tree_walk w;
    uint32_t v;
    tree_walk_all(&f, &w);
    assert_false(tree_walk_next(&f, &w, &v, NULL));
    assert_render(&f, 0, "");
    tree_free(&f);
    tree_free(&f); /* twice is harmless */
}

static void test_invalid(void **state)
{
    static const struct row ok[] = {{"k", "a", ""}};
    struct forest f;
    tree_init(&f);
    build_rows(&f, ok, 1);
    /* A failed rebuild leaves the forest empty, not holding the previous set. */
    struct tree_msg m = {{"a", 1}, {NULL, 3}, {NULL, 0}};
    struct error err;
    assert_int_equal(tree_build(&f, &m, 1, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "correlation"));
    assert_int_equal(tree_node_count(&f), 0);
    assert_int_equal(tree_group_find(&f, "k", 1), TREE_NONE);
    assert_int_equal(tree_find(&f, "k", 1, "a", 1, NULL, 0), 0);
    assert_render(&f, 0, "");
    /* A bad message deep in the input is found before anything reads its bytes. */
    struct tree_msg many[30];
    for (int i = 0; i < 30; i++) {
        many[i].id = span_c("x");
        many[i].correlation = span_c("k");
        many[i].causation = span_c("");
    }
    many[25].causation.data = NULL;
    many[25].causation.len = 5;
    many[20].correlation.data = NULL;
    assert_int_equal(tree_build(&f, many, 30, &err), ST_EINVAL);
    assert_string_equal(err.msg, "message 20: correlation id has a length but no data");
    many[20].correlation.data = "k";
    assert_int_equal(tree_build(&f, many, 30, &err), ST_EINVAL);
    assert_string_equal(err.msg, "message 25: causation id has a length but no data");
    assert_int_equal(tree_node_count(&f), 0);
    /* Too many is refused before the array is looked at. */
    assert_int_equal(tree_build(&f, NULL, (size_t)TREE_MAX_MESSAGES + 1, &err), ST_ERANGE);
    tree_free(&f);
}

static void test_chain_out_of_order(void **state)
{
    /* c caused by b caused by a, delivered backwards. */
    static const struct row rows[] = {{"k", "c", "b"}, {"k", "b", "a"}, {"k", "a", ""}};
    struct forest f;
    tree_init(&f);
    build_rows(&f, rows, 3);
    assert_int_equal(tree_node_count(&f), 3);
    assert_int_equal(tree_root_count(&f), 1);
    assert_int_equal(f.parent[0], 1);
    assert_int_equal(f.parent[1], 2);
    assert_int_equal(f.parent[2], TREE_NONE);
    assert_int_equal(tree_depth(&f, 0), 2);
    assert_int_equal(tree_depth(&f, 2), 0);
    assert_int_equal(tree_node_message(&f, 1), 1);
    assert_render(&f, TREE_RENDER_ASCII, "correlation k (3 messages)\na\n`- b\n   `- c\n");
    tree_free(&f);
}

static const struct row branching[] = {
    {"k", "a", ""},  {"k", "b", "a"}, {"k", "c", "a"}, {"k", "d", "b"},
    {"k", "e", "c"}, {"k", "f", "b"}, {"k", "g", ""},
};

static void test_branching(void **state)
{
    struct forest f;
    tree_init(&f);
    build_rows(&f, branching, 7);
    assert_int_equal(tree_root_count(&f), 2);
    uint32_t a = node_of(&f, "k", "a");
    assert_int_equal(tree_node_first_child(&f, a), 1);
    assert_int_equal(f.next_sibling[1], 2);
    assert_int_equal(f.next_sibling[2], TREE_NONE);
    assert_int_equal(f.size[a], 6);
    assert_render(&f, TREE_RENDER_ASCII,
                  "correlation k (7 messages)\n"
                  "a\n"
                  "|- b\n"
                  "|  |- d\n"
                  "|  `- f\n"
                  "`- c\n"
                  "   `- e\n"
                  "g\n");
    tree_free(&f);
}

static void test_ancestors_descendants(void **state)
{
    struct forest f;
    tree_init(&f);
    build_rows(&f, branching, 7);
    uint32_t d = node_of(&f, "k", "d");
    uint32_t out[8];
    assert_int_equal(tree_ancestors(&f, d, out, 8), 3);
    assert_int_equal(out[0], 3);
    assert_int_equal(out[1], 1);
    assert_int_equal(out[2], 0);
    /* A short buffer gets the start of the path and the full length. */
    out[1] = 99;
    assert_int_equal(tree_ancestors(&f, d, out, 1), 3);
    assert_int_equal(out[0], 3);
    assert_int_equal(out[1], 99);

    size_t n;
    const uint32_t *desc = tree_descendants(&f, node_of(&f, "k", "a"), &n);
    static const uint32_t want[] = {1, 3, 5, 2, 4}; /* b d f c e */
    assert_int_equal(n, 5);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(desc[i], want[i]);
    tree_descendants(&f, node_of(&f, "k", "e"), &n);
    assert_int_equal(n, 0);
    desc = tree_descendants(&f, node_of(&f, "k", "b"), &n);
    assert_int_equal(n, 2);
    assert_int_equal(desc[0], 3);
    assert_int_equal(desc[1], 5);
    assert_int_equal(tree_group_of(&f, 4), 0);
    tree_free(&f);
}

static void test_walk(void **state)
{
    struct forest f;
    tree_init(&f);
    build_rows(&f, branching, 7);
    struct tree_walk w;
    uint32_t v, depth;
    struct strbuf sb;
    sb_init(&sb);
    tree_walk_all(&f, &w);
    while (tree_walk_next(&f, &w, &v, &depth)) {
        sb_addf(&sb, "%.*s%u ", (int)f.id_len[v], f.id[v], (unsigned)depth);
        if (v == 1) /* b collapsed */
            tree_walk_skip(&f, &w, v);
    }
    assert_string_equal(sb.buf, "a0 b1 c1 e2 g0 ");
    sb_reset(&sb);
    tree_walk_subtree(&f, node_of(&f, "k", "c"), &w);
    while (tree_walk_next(&f, &w, &v, NULL))
        sb_add(&sb, f.id[v], 1);
    assert_string_equal(sb.buf, "ce");
    sb_free(&sb);
    tree_free(&f);
}

static void test_missing_middle(void **state)
{
    /* a -> b -> c -> d with b never seen: c and d still hang together, under b. */
    static const struct row rows[] = {{"k", "a", ""}, {"k", "c", "b"}, {"k", "d", "c"}};
    struct forest f;
    tree_init(&f);
    build_rows(&f, rows, 3);
    assert_int_equal(tree_node_count(&f), 4);
    assert_int_equal(tree_root_count(&f), 2);
    uint32_t b = node_of(&f, "k", "b");
    assert_int_equal(b, 3);
    assert_true(tree_node_flags(&f, b) & TREE_PLACEHOLDER);
    assert_int_equal(tree_node_message(&f, b), TREE_NONE);
    assert_int_equal(tree_node_parent(&f, b), TREE_NONE);
    assert_int_equal(tree_node_first_child(&f, b), 1);
    assert_int_equal(tree_depth(&f, 2), 2);
    assert_int_equal(tree_group_get(&f, 0)->n_messages, 3);
    assert_int_equal(tree_group_get(&f, 0)->n_nodes, 4);
    assert_render(&f, TREE_RENDER_ASCII,
                  "correlation k (3 messages)\na\n(not in this set) b\n`- c\n   `- d\n");
    tree_free(&f);
}

static void test_shared_missing_parent(void **state)
{
    static const struct row rows[] = {
        {"k", "x", "m"}, {"k", "r", ""}, {"k", "y", "m"}, {"k", "z", "y"}};
    struct forest f;
    tree_init(&f);
    build_rows(&f, rows, 4);
    assert_int_equal(tree_node_count(&f), 5); /* one placeholder */
    uint32_t m = node_of(&f, "k", "m");
    assert_int_equal(f.parent[0], m);
    assert_int_equal(f.parent[2], m);
    /* The placeholder stands where its first child, x, stood: before r. */
    assert_int_equal(tree_group_get(&f, 0)->first_root, m);
    assert_render(&f, TREE_RENDER_ASCII,
                  "correlation k (4 messages)\n(not in this set) m\n|- x\n`- y\n   `- z\nr\n");
    tree_free(&f);
}

/* Every message names its own missing parent: the node arrays and the index must grow to
 * twice the input while the build runs. */
static void test_many_placeholders(void **state)
{
    enum { N = 10000 };
    char(*ids)[2][12] = xmalloc(N * sizeof *ids);
    struct tree_msg *m = xcalloc(N, sizeof *m);
    for (uint32_t i = 0; i < N; i++) {
        snprintf(ids[i][0], sizeof ids[i][0], "m%u", (unsigned)i);
        snprintf(ids[i][1], sizeof ids[i][1], "gone%u", (unsigned)i);
        m[i].id = span_c(ids[i][0]);
        m[i].correlation = span_c("k");
        m[i].causation = span_c(ids[i][1]);
    }
    struct forest f;
    tree_init(&f);
    assert_int_equal(tree_build(&f, m, N, NULL), ST_OK);
    assert_int_equal(tree_node_count(&f), 2 * N);
    assert_int_equal(tree_root_count(&f), N);
    for (uint32_t i = 0; i < N; i++) {
        uint32_t p = f.parent[i];
        assert_int_equal(p, N + i);
        assert_true(f.flags[p] & TREE_PLACEHOLDER);
        assert_int_equal(node_of(&f, "k", ids[i][1]), p);
        assert_int_equal(f.order[2 * i], p); /* each placeholder stands where its child did */
    }
    tree_free(&f);
    free(m);
    free(ids);
}

static void test_groups(void **state)
{
    static const struct row rows[] = {
        {"two", "a", ""}, {"one", "b", ""},  {"two", "c", "a"},
        {"", "d", ""},    {"one", "a", "b"}, {"", "e", "d"},
    };
    struct forest f;
    tree_init(&f);
    build_rows(&f, rows, 6);
    assert_int_equal(tree_group_count(&f), 3);
    assert_int_equal(tree_group_find(&f, "two", 3), 0);
    assert_int_equal(tree_group_find(&f, "one", 3), 1);
    assert_int_equal(tree_group_find(&f, "", 0), 2);
    assert_int_equal(tree_group_find(&f, "three", 5), TREE_NONE);
    /* "a" in group one is not "a" in group two. */
    assert_int_equal(node_of(&f, "two", "a"), 0);
    assert_int_equal(node_of(&f, "one", "a"), 4);
    assert_int_equal(f.parent[4], 1);
    assert_int_equal(f.parent[2], 0);
    uint32_t both[4];
    assert_int_equal(tree_find_id(&f, "a", 1, both, 4), 2);
    assert_int_equal(both[0], 0);
    assert_int_equal(both[1], 4);
    assert_render(&f, TREE_RENDER_ASCII,
                  "correlation two (2 messages)\na\n`- c\n"
                  "\n"
                  "correlation one (2 messages)\nb\n`- a\n"
                  "\n"
                  "no correlation (2 messages)\nd\n`- e\n");
    struct tree_walk w;
    uint32_t v;
    tree_walk_group(&f, 1, &w);
    assert_true(tree_walk_next(&f, &w, &v, NULL));
    assert_int_equal(v, 1);
    assert_true(tree_walk_next(&f, &w, &v, NULL));
    assert_int_equal(v, 4);
    assert_false(tree_walk_next(&f, &w, &v, NULL));
    tree_free(&f);
}

static void test_cross_group(void **state)
{
    /* b names a as its cause, but a is in another conversation. */
    static const struct row rows[] = {{"g1", "a", ""}, {"g2", "b", "a"}};
    struct forest f;
    tree_init(&f);
    build_rows(&f, rows, 2);
    assert_int_equal(tree_node_count(&f), 3);
    assert_int_equal(f.first_child[0], TREE_NONE);
    uint32_t ph = node_of(&f, "g2", "a");
    assert_int_equal(ph, 2);
    assert_true(f.flags[ph] & TREE_PLACEHOLDER);
    assert_int_equal(tree_group_of(&f, ph), 1);
    assert_int_equal(f.parent[1], ph);
    assert_int_equal(tree_find_id(&f, "a", 1, NULL, 0), 2);
    tree_free(&f);
}

static void test_self_reference(void **state)
{
    /* The third message is a copy of the first, and also names itself. */
    static const struct row rows[] = {{"k", "a", "a"}, {"k", "b", "a"}, {"k", "a", "a"}};
    struct forest f;
    tree_init(&f);
    build_rows(&f, rows, 3);
    assert_int_equal(f.parent[2], TREE_NONE);
    assert_int_equal(f.flags[2], TREE_SELF_CAUSED | TREE_DUPLICATE);
    assert_int_equal(f.parent[0], TREE_NONE);
    assert_true(f.flags[0] & TREE_SELF_CAUSED);
    assert_false(f.flags[0] & TREE_CYCLE_BROKEN);
    assert_int_equal(f.parent[1], 0);
    assert_render(&f, TREE_RENDER_ASCII,
                  "correlation k (3 messages)\na (caused itself)\n`- b\n"
                  "a (duplicate) (caused itself)\n");
    tree_free(&f);
}

static void test_two_cycle(void **state)
{
    static const struct row rows[] = {{"k", "b", "a"}, {"k", "a", "b"}};
    struct forest f;
    tree_init(&f);
    build_rows(&f, rows, 2);
    assert_int_equal(tree_root_count(&f), 1);
    assert_int_equal(f.parent[0], TREE_NONE);
    assert_true(f.flags[0] & TREE_CYCLE_BROKEN);
    assert_int_equal(f.parent[1], 0);
    assert_false(f.flags[1] & TREE_CYCLE_BROKEN);
    assert_render(&f, TREE_RENDER_ASCII, "correlation k (2 messages)\nb (cycle broken)\n`- a\n");
    tree_free(&f);
}

static void test_three_cycle(void **state)
{
    /* c -> a -> b -> c (each caused by the one before); c comes first, so c is the root. */
    static const struct row rows[] = {{"k", "c", "b"}, {"k", "a", "c"}, {"k", "b", "a"}};
    struct forest f;
    tree_init(&f);
    build_rows(&f, rows, 3);
    assert_int_equal(tree_root_count(&f), 1);
    assert_int_equal(f.parent[0], TREE_NONE);
    assert_int_equal(f.parent[1], 0);
    assert_int_equal(f.parent[2], 1);
    assert_render(&f, TREE_RENDER_ASCII | TREE_RENDER_NO_MARKS,
                  "correlation k (3 messages)\nc\n`- a\n   `- b\n");
    tree_free(&f);
}

static void test_cycle_with_tail(void **state)
{
    /* A normal tree (r, s) beside a cycle x <-> y that has tails t and u hanging off it.
     * The walk from t enters the cycle; the cycle's first member in input order is y, not
     * the tail t, and not x. */
    static const struct row rows[] = {
        {"k", "r", ""},  {"k", "t", "x"}, {"k", "y", "x"},
        {"k", "x", "y"}, {"k", "s", "r"}, {"k", "u", "y"},
    };
    struct forest f;
    tree_init(&f);
    build_rows(&f, rows, 6);
    assert_int_equal(tree_root_count(&f), 2);
    assert_true(f.flags[2] & TREE_CYCLE_BROKEN);
    assert_false(f.flags[3] & TREE_CYCLE_BROKEN);
    assert_false(f.flags[1] & TREE_CYCLE_BROKEN);
    assert_render(&f, TREE_RENDER_ASCII,
                  "correlation k (6 messages)\n"
                  "r\n"
                  "`- s\n"
                  "y (cycle broken)\n"
                  "|- x\n"
                  "|  `- t\n"
                  "`- u\n");
    tree_free(&f);
}

static void test_duplicates(void **state)
{
    static const struct row rows[] = {
        {"k", "a", ""}, {"k", "b", "a"}, {"k", "a", ""}, {"k", "c", "a"}, {"k", "a", "b"},
    };
    struct forest f;
    tree_init(&f);
    build_rows(&f, rows, 5);
    assert_int_equal(tree_node_count(&f), 5);
    /* Children link to the first a. */
    assert_int_equal(f.parent[1], 0);
    assert_int_equal(f.parent[3], 0);
    assert_false(f.flags[0] & TREE_DUPLICATE);
    assert_true(f.flags[2] & TREE_DUPLICATE);
    assert_true(f.flags[4] & TREE_DUPLICATE);
    assert_int_equal(f.occurrence[2], 1);
    assert_int_equal(f.occurrence[4], 2);
    /* The third copy names b as its cause, which is fine: it is not the first a. */
    assert_int_equal(f.parent[4], 1);
    uint64_t t0 = f.tag[0], t2 = f.tag[2];
    assert_true(t0 != t2 && t2 != f.tag[4]);
    uint32_t all[3];
    assert_int_equal(tree_find(&f, "k", 1, "a", 1, all, 3), 3);
    assert_int_equal(all[0], 0);
    assert_int_equal(all[1], 2);
    assert_int_equal(all[2], 4);
    assert_render(&f, TREE_RENDER_ASCII,
                  "correlation k (5 messages)\n"
                  "a\n"
                  "|- b\n"
                  "|  `- a (duplicate)\n"
                  "`- c\n"
                  "a (duplicate)\n");
    tree_free(&f);
}

static void test_empty_ids(void **state)
{
    /* Messages without an id are not copies of one another, and nothing can name them. */
    static const struct row rows[] = {{"k", "", ""}, {"k", "", ""}};
    struct forest f;
    tree_init(&f);
    build_rows(&f, rows, 2);
    assert_false(f.flags[1] & TREE_DUPLICATE);
    assert_true(f.tag[0] != f.tag[1]);
    assert_int_equal(tree_find_id(&f, "", 0, NULL, 0), 0);
    assert_render(&f, TREE_RENDER_ASCII, "correlation k (2 messages)\n(no id)\n(no id)\n");
    tree_free(&f);
}

/* Tags survive a rebuild in which messages were added before, between and after. */
static void test_tags_stable(void **state)
{
    static const struct row before[] = {
        {"k", "a", ""}, {"k", "b", "a"}, {"k", "a", ""}, {"k", "c", "missing"}, {"j", "a", ""},
    };
    static const struct row after[] = {
        {"new", "z", ""}, {"k", "a", ""},       {"k", "b", "a"},
        {"j", "q", "a"},  {"k", "a", ""},       {"k", "c", "missing"},
        {"j", "a", ""},   {"k", "missing", ""}, {"k", "a", ""},
    };
    struct forest f1, f2;
    tree_init(&f1);
    tree_init(&f2);
    build_rows(&f1, before, 5);
    build_rows(&f2, after, 9);
    for (uint32_t v = 0; v < tree_node_count(&f1); v++) {
        const struct tree_group *g1 = tree_group_get(&f1, tree_group_of(&f1, v));
        size_t len;
        const unsigned char *id = tree_node_id(&f1, v, &len);
        uint32_t found[4];
        size_t k = tree_find(&f2, g1->correlation, g1->correlation_len, id, len, found, 4);
        assert_true(k > f1.occurrence[v]);
        uint32_t v2 = found[f1.occurrence[v]];
        assert_true(tree_node_tag(&f1, v) == tree_node_tag(&f2, v2));
        assert_true(g1->tag == tree_group_get(&f2, tree_group_of(&f2, v2))->tag);
    }
    /* The placeholder for "missing" hands its tag to the message that filled it. */
    uint32_t ph = node_of(&f1, "k", "missing");
    assert_true(f1.flags[ph] & TREE_PLACEHOLDER);
    assert_false(f2.flags[node_of(&f2, "k", "missing")] & TREE_PLACEHOLDER);
    /* Different groups, ids and copies all have different tags. */
    assert_true(f1.tag[0] != f1.tag[4]);
    assert_true(f1.tag[0] != f1.tag[1]);
    assert_true(f1.tag[0] != f1.tag[2]);
    /* Ids that differ only in their last bytes (past a whole word) get different tags. */
    static const struct row similar[] = {{"k", "request-0001", ""},
                                         {"k", "request-0002", ""},
                                         {"k", "request-1001", ""},
                                         {"k", "request-00001", ""}};
    build_rows(&f2, similar, 4);
    for (uint32_t i = 0; i < 4; i++)
        for (uint32_t j = 0; j < i; j++)
            assert_true(f2.tag[i] != f2.tag[j]);
    /* Rebuilding a forest in place gives the same tags again. */
    uint64_t t = f1.tag[3];
    build_rows(&f1, before, 5);
    assert_true(f1.tag[3] == t);
    tree_free(&f1);
    tree_free(&f2);
}

/* 100,000 conversations that all use the ids "start" and "next": each is its own tree.
 * (Also keeps the index honest: were the group not part of the key, this would be a
 * single probe run of 200,000 and the build quadratic.) */
static void test_many_groups_same_ids(void **state)
{
    enum { G = 100000 };
    char(*corrs)[12] = xmalloc(G * sizeof *corrs);
    struct tree_msg *m = xcalloc(2 * G, sizeof *m);
    for (uint32_t g = 0; g < G; g++) {
        snprintf(corrs[g], sizeof corrs[g], "c%u", (unsigned)g);
        m[g].correlation = m[G + g].correlation = span_c(corrs[g]);
        m[g].id = span_c("start");
        m[G + g].id = span_c("next");
        m[G + g].causation = span_c("start");
    }
    struct forest f;
    tree_init(&f);
    assert_int_equal(tree_build(&f, m, 2 * G, NULL), ST_OK);
    assert_int_equal(tree_group_count(&f), G);
    assert_int_equal(tree_root_count(&f), G);
    assert_int_equal(tree_node_count(&f), 2 * G);
    for (uint32_t g = 0; g < G; g++) {
        assert_int_equal(f.parent[G + g], g);
        assert_false(f.flags[g] & TREE_DUPLICATE);
    }
    assert_int_equal(tree_find_id(&f, "next", 4, NULL, 0), G);
    tree_free(&f);
    free(m);
    free(corrs);
}

/* ---- randomised check against a brute-force reading of the rules ------------------------ */

static uint64_t rng_state;
static uint32_t rng(uint32_t n)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)(rng_state >> 33) % n;
}

/* The first message index with this (group, id), or TREE_NONE. */
static uint32_t brute_first(const struct tree_msg *m, uint32_t n, struct tree_span corr,
                            struct tree_span id)
{
    for (uint32_t j = 0; j < n; j++)
        if (m[j].correlation.len == corr.len &&
            !memcmp(m[j].correlation.data, corr.data, corr.len) && m[j].id.len == id.len &&
            !memcmp(m[j].id.data, id.data, id.len))
            return j;
    return TREE_NONE;
}

/* The message the rules make i's parent; TREE_NONE for none or a placeholder. */
static uint32_t brute_parent(const struct tree_msg *m, uint32_t n, uint32_t i)
{
    if (!m[i].causation.len || (m[i].causation.len == m[i].id.len &&
                                !memcmp(m[i].causation.data, m[i].id.data, m[i].id.len)))
        return TREE_NONE;
    return brute_first(m, n, m[i].correlation, m[i].causation);
}

/* tree_compact: tree_find gives what it gave before, from the group's nodes; every node is
 * found by its tag; the next build (the caller's next round) allocates what went. */
static void check_compact(struct forest *f, const char *const *names, const char *const *corrs)
{
    enum { C = 8 };
    uint32_t before[2][9][C], after[C];
    size_t count[2][9];
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < 9; k++)
            count[c][k] = tree_find(f, corrs[c], 1, names[k], strlen(names[k]), before[c][k], C);
    tree_compact(f);
    assert_null(f->next_dup);
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < 9; k++) {
            size_t n = tree_find(f, corrs[c], 1, names[k], strlen(names[k]), after, C);
            assert_int_equal(n, count[c][k]);
            for (size_t i = 0; i < n && i < C; i++)
                assert_int_equal(after[i], before[c][k][i]);
            if (n > 1) { /* a short out gets the first ones */
                uint32_t one;
                assert_int_equal(tree_find(f, corrs[c], 1, names[k], strlen(names[k]), &one, 1), n);
                assert_int_equal(one, before[c][k][0]);
            }
        }
    for (uint32_t v = 0; v < tree_node_count(f); v++) {
        const struct tree_group *g = tree_group_get(f, tree_group_of(f, v));
        size_t len;
        const unsigned char *id = tree_node_id(f, v, &len);
        assert_int_equal(
            tree_find_tagged(f, g->correlation, g->correlation_len, id, len, tree_node_tag(f, v)),
            v);
    }
}

static void test_random_forests(void **state)
{
    static const char *const names[] = {"a", "b", "c", "d", "e", "f", "g", "h", ""};
    static const char *const corrs[] = {"x", "y"};
    enum { N = 40 };
    struct tree_msg m[N];
    rng_state = 42;
    struct forest f; /* one forest for every round: rebuilds reuse its arrays */
    tree_init(&f);
    for (int round = 0; round < 300; round++) {
        uint32_t n = 1 + rng(N);
        for (uint32_t i = 0; i < n; i++) {
            m[i].correlation = span_c(corrs[rng(2)]);
            m[i].id = span_c(names[rng(8)]);
            m[i].causation = span_c(names[rng(9)]);
        }
        assert_int_equal(tree_build(&f, m, n, NULL), ST_OK);
        for (uint32_t i = 0; i < n; i++) {
            unsigned flags = tree_node_flags(&f, i);
            uint32_t first = brute_first(m, n, m[i].correlation, m[i].id);
            assert_int_equal(!!(flags & TREE_DUPLICATE), first != i);
            /* The parent the rules give, before cycles are broken. */
            uint32_t want = TREE_NONE;
            if (m[i].causation.len && strcmp(m[i].causation.data, m[i].id.data) != 0) {
                want = brute_first(m, n, m[i].correlation, m[i].causation);
                if (want == TREE_NONE) {
                    want = node_of(&f, m[i].correlation.data, m[i].causation.data);
                    assert_true(f.flags[want] & TREE_PLACEHOLDER);
                }
            }
            if (flags & TREE_CYCLE_BROKEN) {
                /* Following the rule-given parents from i comes back to i, and no member
                 * of that cycle comes before i in the input. */
                assert_int_equal(f.parent[i], TREE_NONE);
                uint32_t u = want, steps = 0;
                while (u != i) {
                    assert_true(u != TREE_NONE && u < n && u > i);
                    assert_true(++steps <= n);
                    u = brute_parent(m, n, u);
                }
            } else {
                assert_int_equal(f.parent[i], want);
            }
        }
        /* Every node is reached once, pre-order is consistent, siblings in input order. */
        uint32_t seen = 0;
        struct tree_walk w;
        uint32_t v, depth;
        tree_walk_all(&f, &w);
        while (tree_walk_next(&f, &w, &v, &depth)) {
            uint32_t p = f.parent[v], next = f.next_sibling[v];
            assert_int_equal(f.pre[v], seen++);
            assert_int_equal(depth, p == TREE_NONE ? 0 : tree_depth(&f, p) + 1);
            if (next != TREE_NONE && v < n && next < n)
                assert_true(next > v);
        }
        assert_int_equal(seen, tree_node_count(&f));
        if (round % 2 == 0)
            check_compact(&f, names, corrs);
    }
    tree_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_chain_out_of_order),
        cmocka_unit_test(test_branching),
        cmocka_unit_test(test_ancestors_descendants),
        cmocka_unit_test(test_walk),
        cmocka_unit_test(test_missing_middle),
        cmocka_unit_test(test_shared_missing_parent),
        cmocka_unit_test(test_many_placeholders),
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_cross_group),
        cmocka_unit_test(test_self_reference),
        cmocka_unit_test(test_two_cycle),
        cmocka_unit_test(test_three_cycle),
        cmocka_unit_test(test_cycle_with_tail),
        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_empty_ids),
        cmocka_unit_test(test_tags_stable),
        cmocka_unit_test(test_many_groups_same_ids),
        cmocka_unit_test(test_random_forests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
