/*
 * test_treeview: the model of the interactive tree — golden row text, expand/collapse,
 * placeholders and cycles, focus mode, search, state that survives a rebuild (same tags stay
 * expanded, the cursor stays on its tag), a random walk checked against a brute-force
 * layout, and scale: a 100,000-deep chain and a million nodes collapsed (timed, printed).
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tree.h"
#include "treeview.h"
#include "util.h"

/* A message as three C strings: correlation, id, causation ("" = none). */
struct row {
    const char *corr, *id, *cause;
};

static struct tree_span span_c(const char *s)
{
    struct tree_span sp = {s, strlen(s)};
    return sp;
}

/* Builds f from rows (a rebuild in place when f already holds a forest, as the app does). */
static void build_rows(struct forest *f, const struct row *rows, size_t n)
{
    struct tree_msg *msgs = xcalloc(n ? n : 1, sizeof *msgs);
    for (size_t i = 0; i < n; i++) {
        msgs[i].correlation = span_c(rows[i].corr);
        msgs[i].id = span_c(rows[i].id);
        msgs[i].causation = span_c(rows[i].cause);
    }
    struct error err;
    assert_int_equal(tree_build(f, msgs, n, &err), ST_OK);
    free(msgs);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char *row_str(const struct treeview *tv, size_t row)
{
    struct strbuf sb;
    sb_init(&sb);
    treeview_row_text(tv, row, &sb);
    sb_addc(&sb, '\0');
    return sb_detach(&sb, NULL);
}

/* Every row, one a line; the cursor's line starts with '*', the others with ' '. */
static char *dump(const struct treeview *tv)
{
    struct strbuf sb;
    sb_init(&sb);
    for (size_t r = 0; r < treeview_rows(tv); r++) {
        sb_addc(&sb, r == treeview_cursor(tv) ? '*' : ' ');
        treeview_row_text(tv, r, &sb);
        sb_addc(&sb, '\n');
    }
    sb_addc(&sb, '\0');
    return sb_detach(&sb, NULL);
}

static void assert_dump(const struct treeview *tv, const char *want)
{
    char *got = dump(tv);
    if (strcmp(got, want) != 0)
        print_error("--- got ---\n%s--- want ---\n%s", got, want);
    assert_string_equal(got, want);
    free(got);
}

/* The only (or first) node with this id in this group; fails when there is none. */
static uint32_t node_of(const struct forest *f, const char *corr, const char *id)
{
    uint32_t v = TREE_NONE;
    if (!tree_find(f, corr, strlen(corr), id, strlen(id), &v, 1))
        fail_msg("no node %s/%s", corr, id);
    return v;
}

static size_t row_of(const struct treeview *tv, const struct forest *f, const char *corr,
                     const char *id)
{
    return treeview_row_of_node(tv, node_of(f, corr, id));
}

static const struct row small_forest[] = {
    {"order-7", "place", ""},       {"order-7", "charge", "place"},   {"order-7", "ship", "place"},
    {"order-7", "email", "charge"}, {"order-7", "refund", "dispute"}, {"order-9", "place", ""},
    {"order-7", "charge", "place"}, {"order-9", "audit", "place"},    {"order-7", "sms", "charge"},
};

static const char small_utf8[] = "*▾ correlation order-7 (7 messages, 1 missing)\n"
                                 "   ▾ place\n"
                                 "   ├─ ▾ charge\n"
                                 "   │  ├─   email\n"
                                 "   │  └─   sms\n"
                                 "   ├─   ship\n"
                                 "   └─   charge (duplicate)\n"
                                 "   ▾ (not in this set) dispute\n"
                                 "   └─   refund\n"
                                 " ▾ correlation order-9 (2 messages)\n"
                                 "   ▾ place\n"
                                 "   └─   audit\n";

static void test_empty(void **state)
{
    struct treeview *tv = treeview_new(false);
    assert_int_equal(treeview_rows(tv), 0);
    treeview_rebuild(tv, NULL);
    assert_int_equal(treeview_rows(tv), 0);
    assert_int_equal(treeview_cursor(tv), 0);
    struct treeview_row r;
    assert_false(treeview_row(tv, 0, &r));
    assert_false(treeview_expand(tv, 0));
    assert_false(treeview_collapse(tv, 0));
    assert_false(treeview_toggle(tv, 0));
    treeview_expand_all_under(tv, 0);
    treeview_collapse_all(tv);
    treeview_expand_all(tv);
    treeview_set_cursor(tv, 5);
    assert_int_equal(treeview_cursor(tv), 0);
    assert_int_equal(treeview_search(tv, "x", 1), SIZE_MAX);
    assert_int_equal(treeview_jump(tv, 0), SIZE_MAX);
    assert_int_equal(treeview_parent_row(tv, 0), SIZE_MAX);
    treeview_focus(tv, 0);
    assert_false(treeview_focused(tv));
    struct forest f;
    tree_init(&f);
    build_rows(&f, NULL, 0);
    treeview_rebuild(tv, &f);
    assert_dump(tv, "");
    char *s = row_str(tv, 3);
    assert_string_equal(s, "");
    free(s);
    treeview_free(&tv);
    assert_null(tv);
    treeview_free(&tv); /* twice is harmless */
    tree_free(&f);
}

static void test_golden(void **state)
{
    struct forest f;
    tree_init(&f);
    build_rows(&f, small_forest, 9);
    struct treeview *tv = treeview_new(false);
    treeview_rebuild(tv, &f);
    assert_dump(tv, small_utf8);
    treeview_set_ascii(tv, true);
    assert_dump(tv, "*v correlation order-7 (7 messages, 1 missing)\n"
                    "   v place\n"
                    "   |- v charge\n"
                    "   |  |-   email\n"
                    "   |  `-   sms\n"
                    "   |-   ship\n"
                    "   `-   charge (duplicate)\n"
                    "   v (not in this set) dispute\n"
                    "   `-   refund\n"
                    " v correlation order-9 (2 messages)\n"
                    "   v place\n"
                    "   `-   audit\n");
    /* What the UI reads to choose attributes. */
    struct treeview_row r;
    assert_true(treeview_row(tv, 0, &r));
    assert_int_equal(r.kind, TV_ROW_GROUP);
    assert_int_equal(r.node, TREE_NONE);
    assert_int_equal(r.message, TREE_NONE);
    assert_true(r.expandable && r.expanded);
    assert_true(treeview_row(tv, 3, &r));
    assert_int_equal(r.kind, TV_ROW_NODE);
    assert_int_equal(r.message, 3); /* email is input message 3 = store entry 3 */
    assert_int_equal(r.depth, 2);
    assert_false(r.expandable);
    assert_true(treeview_row(tv, 7, &r));
    assert_true(r.flags & TREE_PLACEHOLDER);
    assert_int_equal(r.message, TREE_NONE);
    assert_true(treeview_row(tv, 6, &r));
    assert_true(r.flags & TREE_DUPLICATE);
    assert_false(treeview_row(tv, 12, &r));
    /* The pieces the UI draws in different colours. */
    struct strbuf sb;
    sb_init(&sb);
    treeview_row_prefix(tv, 6, &sb);
    sb_adds(&sb, "|");
    treeview_row_body(tv, 6, &sb);
    sb_adds(&sb, "|");
    treeview_row_marks(tv, 6, &sb);
    assert_string_equal(sb.buf, "  `-   |charge| (duplicate)");
    sb_reset(&sb);
    treeview_row_marks(tv, 0, &sb);
    assert_int_equal(sb.len, 0);
    sb_free(&sb);
    treeview_free(&tv);
    tree_free(&f);
}

static void test_expand_collapse(void **state)
{
    struct forest f;
    tree_init(&f);
    build_rows(&f, small_forest, 9);
    struct treeview *tv = treeview_new(true);
    treeview_rebuild(tv, &f);
    /* Collapsing charge while the cursor is on email (below it) moves the cursor to charge. */
    treeview_set_cursor(tv, row_of(tv, &f, "order-7", "email"));
    assert_int_equal(treeview_cursor(tv), 3);
    assert_false(treeview_expand(tv, 2)); /* already open */
    assert_true(treeview_collapse(tv, 2));
    assert_false(treeview_collapse(tv, 2));
    assert_dump(tv, " v correlation order-7 (7 messages, 1 missing)\n"
                    "   v place\n"
                    "*  |- > charge\n"
                    "   |-   ship\n"
                    "   `-   charge (duplicate)\n"
                    "   v (not in this set) dispute\n"
                    "   `-   refund\n"
                    " v correlation order-9 (2 messages)\n"
                    "   v place\n"
                    "   `-   audit\n");
    assert_int_equal(treeview_row_of_node(tv, node_of(&f, "order-7", "email")), SIZE_MAX);
    /* Leaves cannot be opened or closed. */
    assert_false(treeview_expand(tv, 3));
    assert_false(treeview_collapse(tv, 3));
    assert_false(treeview_toggle(tv, 3));
    /* The cursor stays on its item as rows come and go above it. */
    treeview_set_cursor(tv, 8);
    assert_true(treeview_toggle(tv, 2));
    assert_int_equal(treeview_cursor(tv), 10);
    assert_true(treeview_toggle(tv, 1)); /* place */
    assert_int_equal(treeview_cursor(tv), 5);
    assert_dump(tv, " v correlation order-7 (7 messages, 1 missing)\n"
                    "   > place\n"
                    "   v (not in this set) dispute\n"
                    "   `-   refund\n"
                    " v correlation order-9 (2 messages)\n"
                    "*  v place\n"
                    "   `-   audit\n");
    assert_true(treeview_expand(tv, 1));
    /* charge kept its own state while its parent was closed. */
    assert_int_equal(row_of(tv, &f, "order-7", "sms"), 4);
    /* Parents: a node's parent, a root's group header; a header has none. */
    assert_int_equal(treeview_parent_row(tv, 4), 2);
    assert_int_equal(treeview_parent_row(tv, 1), 0);
    assert_int_equal(treeview_parent_row(tv, 0), SIZE_MAX);
    assert_int_equal(treeview_parent_row(tv, 99), SIZE_MAX);
    /* Closing a group with the cursor inside moves it to the header. */
    treeview_set_cursor(tv, 4);
    assert_true(treeview_collapse(tv, 0));
    assert_dump(tv, "*> correlation order-7 (7 messages, 1 missing)\n"
                    " v correlation order-9 (2 messages)\n"
                    "   v place\n"
                    "   `-   audit\n");
    assert_int_equal(treeview_row_of_group(tv, 1), 1);
    assert_int_equal(treeview_row_of_group(tv, 2), SIZE_MAX);
    assert_true(treeview_expand(tv, 0));
    assert_false(treeview_expand(tv, 0));
    assert_dump(tv, "*v correlation order-7 (7 messages, 1 missing)\n"
                    "   v place\n"
                    "   |- v charge\n"
                    "   |  |-   email\n"
                    "   |  `-   sms\n"
                    "   |-   ship\n"
                    "   `-   charge (duplicate)\n"
                    "   v (not in this set) dispute\n"
                    "   `-   refund\n"
                    " v correlation order-9 (2 messages)\n"
                    "   v place\n"
                    "   `-   audit\n");
    /* Collapse all: groups and nodes; opening a group then shows its roots only. */
    treeview_set_cursor(tv, 3);
    treeview_collapse_all(tv);
    assert_dump(tv, "*> correlation order-7 (7 messages, 1 missing)\n"
                    " > correlation order-9 (2 messages)\n");
    assert_int_equal(treeview_materialised(tv), 0);
    assert_true(treeview_expand(tv, 0));
    assert_dump(tv, "*v correlation order-7 (7 messages, 1 missing)\n"
                    "   > place\n"
                    "   > (not in this set) dispute\n"
                    " > correlation order-9 (2 messages)\n");
    /* Expand all under one node, then under a header. */
    treeview_expand_all_under(tv, 1);
    assert_dump(tv, "*v correlation order-7 (7 messages, 1 missing)\n"
                    "   v place\n"
                    "   |- v charge\n"
                    "   |  |-   email\n"
                    "   |  `-   sms\n"
                    "   |-   ship\n"
                    "   `-   charge (duplicate)\n"
                    "   > (not in this set) dispute\n"
                    " > correlation order-9 (2 messages)\n");
    treeview_expand_all_under(tv, 8);
    assert_int_equal(treeview_rows(tv), 11);
    treeview_expand_all_under(tv, 7);
    assert_int_equal(treeview_rows(tv), 12);
    treeview_collapse_all(tv);
    /* Jump: opens the group and the ancestors, nothing else. */
    assert_int_equal(treeview_jump(tv, node_of(&f, "order-7", "sms")), 4);
    assert_dump(tv, " v correlation order-7 (7 messages, 1 missing)\n"
                    "   v place\n"
                    "   |- v charge\n"
                    "   |  |-   email\n"
                    "*  |  `-   sms\n"
                    "   |-   ship\n"
                    "   `-   charge (duplicate)\n"
                    "   > (not in this set) dispute\n"
                    " > correlation order-9 (2 messages)\n");
    assert_int_equal(treeview_jump(tv, 999), SIZE_MAX);
    treeview_expand_all(tv);
    assert_int_equal(treeview_rows(tv), 12);
    assert_int_equal(treeview_cursor(tv), 4);
    treeview_set_cursor(tv, 1000);
    assert_int_equal(treeview_cursor(tv), 11);
    treeview_free(&tv);
    tree_free(&f);
}

static void test_cycles_and_marks(void **state)
{
    static const struct row rows[] = {
        {"k", "r", ""},  {"k", "t", "x"}, {"k", "y", "x"}, {"k", "x", "y"},
        {"k", "s", "r"}, {"k", "u", "y"}, {"k", "a", "a"}, {"k", "a", "a"},
    };
    struct forest f;
    tree_init(&f);
    build_rows(&f, rows, 8);
    struct treeview *tv = treeview_new(false);
    treeview_rebuild(tv, &f);
    assert_dump(tv, "*▾ correlation k (8 messages)\n"
                    "   ▾ r\n"
                    "   └─   s\n"
                    "   ▾ y (cycle broken)\n"
                    "   ├─ ▾ x\n"
                    "   │  └─   t\n"
                    "   └─   u\n"
                    "     a (caused itself)\n"
                    "     a (duplicate) (caused itself)\n");
    /* Several placeholders, and an empty correlation. */
    static const struct row ph[] = {
        {"", "b", "a"}, {"", "c", "a"}, {"", "e", "d"}, {"", "", ""}, {"", "only", ""},
    };
    build_rows(&f, ph, 5);
    treeview_rebuild(tv, &f);
    assert_dump(tv, "*▾ no correlation (5 messages, 2 missing)\n"
                    "   ▾ (not in this set) a\n"
                    "   ├─   b\n"
                    "   └─   c\n"
                    "   ▾ (not in this set) d\n"
                    "   └─   e\n"
                    "     (no id)\n"
                    "     only\n");
    treeview_free(&tv);
    tree_free(&f);
}

static void test_hostile_text(void **state)
{
    static const struct row rows[] = {{"k\x1b]0;x\x07", "\x1b[2J\nfake line", ""},
                                      {"k\x1b]0;x\x07", "c\\d", "gone\r\xff"},
                                      {"\342\200\256evil", "\302\23331m", ""}};
    struct forest f;
    tree_init(&f);
    build_rows(&f, rows, 3);
    struct treeview *tv = treeview_new(true);
    treeview_rebuild(tv, &f);
    char *got = dump(tv);
    for (const char *p = got; *p; p++)
        assert_true(*p == '\n' || ((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f));
    assert_string_equal(got, "*v correlation k\\e]0;x\\x07 (2 messages, 1 missing)\n"
                             "     \\e[2J\\nfake line\n"
                             "   v (not in this set) gone\\r\\xff\n"
                             "   `-   c\\d\n"
                             " v correlation \\u{202e}evil (1 message)\n"
                             "     \\u{9b}31m\n");
    free(got);
    /* UTF-8 mode keeps printable text but still escapes bidi and C1 controls. */
    treeview_set_ascii(tv, false);
    got = row_str(tv, 4);
    assert_string_equal(got, "▾ correlation \\u{202e}evil (1 message)");
    free(got);
    /* Long correlation ids are cut in the header. */
    static const struct row longc[] = {
        {"0123456789abcdef0123456789abcdef0123456789abcdef", "a", ""}};
    build_rows(&f, longc, 1);
    treeview_rebuild(tv, &f);
    got = row_str(tv, 0);
    assert_string_equal(got, "▾ correlation 0123456789abcdef0123456789abcdef0123456… (1 message)");
    free(got);
    treeview_free(&tv);
    tree_free(&f);
}

static void label_msg(struct strbuf *out, const struct forest *f, uint32_t node, void *ctx)
{
    sb_addf(out, "%s#%u", (const char *)ctx, (unsigned)tree_node_message(f, node));
}

static void test_label(void **state)
{
    static const struct row rows[] = {{"k", "a", ""}, {"k", "b", "m"}};
    struct forest f;
    tree_init(&f);
    build_rows(&f, rows, 2);
    struct treeview *tv = treeview_new(true);
    treeview_set_label(tv, label_msg, "msg");
    treeview_rebuild(tv, &f);
    assert_dump(tv, "*v correlation k (2 messages, 1 missing)\n"
                    "     msg#0\n"
                    "   v (not in this set) m\n"
                    "   `-   msg#1\n");
    /* Search goes over what the label says. */
    assert_int_equal(treeview_search(tv, "MSG#1", 1), 3);
    treeview_free(&tv);
    tree_free(&f);
}

static void test_search(void **state)
{
    struct forest f;
    tree_init(&f);
    build_rows(&f, small_forest, 9);
    struct treeview *tv = treeview_new(true);
    treeview_rebuild(tv, &f);
    assert_int_equal(treeview_search(tv, "sms", 1), 4);
    assert_int_equal(treeview_cursor(tv), 4);
    /* Case-insensitive, forwards with wrap-around, and backwards. */
    assert_int_equal(treeview_search(tv, "PLACE", 1), 10);
    assert_int_equal(treeview_search(tv, "place", 1), 1);
    assert_int_equal(treeview_search(tv, "place", -1), 10);
    assert_int_equal(treeview_search(tv, "order-9", -1), 9);
    assert_int_equal(treeview_search(tv, "order-", 1), 0);
    /* Placeholders by their id. */
    assert_int_equal(treeview_search(tv, "dispute", 1), 7);
    /* No match: nothing moves. */
    assert_int_equal(treeview_search(tv, "nothing", 1), SIZE_MAX);
    assert_int_equal(treeview_search(tv, "", 1), SIZE_MAX);
    assert_int_equal(treeview_search(tv, NULL, 1), SIZE_MAX);
    assert_int_equal(treeview_cursor(tv), 7);
    /* Hidden nodes are found and shown. */
    treeview_collapse_all(tv);
    assert_int_equal(treeview_rows(tv), 2);
    assert_int_equal(treeview_search(tv, "email", 1), 3);
    assert_dump(tv, " v correlation order-7 (7 messages, 1 missing)\n"
                    "   v place\n"
                    "   |- v charge\n"
                    "*  |  |-   email\n"
                    "   |  `-   sms\n"
                    "   |-   ship\n"
                    "   `-   charge (duplicate)\n"
                    "   > (not in this set) dispute\n"
                    " > correlation order-9 (2 messages)\n");
    assert_int_equal(treeview_search(tv, "audit", -1), 10);
    treeview_free(&tv);
    tree_free(&f);
}

/* 300 groups: collapsed by default. */
static struct row *many_groups(size_t groups, char (**names)[32])
{
    *names = xcalloc(groups, sizeof **names);
    struct row *rows = xcalloc(groups * 3, sizeof *rows);
    for (size_t g = 0; g < groups; g++) {
        snprintf((*names)[g], sizeof(*names)[g], "g%03zu", g);
        rows[3 * g] = (struct row){(*names)[g], "a", ""};
        rows[3 * g + 1] = (struct row){(*names)[g], "b", "a"};
        rows[3 * g + 2] = (struct row){(*names)[g], "c", "b"};
    }
    return rows;
}

static void test_default_by_group_count(void **state)
{
    char(*names)[32];
    struct row *rows = many_groups(TREEVIEW_AUTO_EXPAND_GROUPS + 1, &names);
    struct forest f;
    tree_init(&f);
    build_rows(&f, rows, 3 * TREEVIEW_AUTO_EXPAND_GROUPS);
    struct treeview *tv = treeview_new(true);
    treeview_rebuild(tv, &f);
    assert_int_equal(treeview_rows(tv), 4 * TREEVIEW_AUTO_EXPAND_GROUPS); /* open */
    /* One more group: collapsed, as long as the user has not chosen anything. */
    build_rows(&f, rows, 3 * (TREEVIEW_AUTO_EXPAND_GROUPS + 1));
    treeview_rebuild(tv, &f);
    assert_int_equal(treeview_rows(tv), TREEVIEW_AUTO_EXPAND_GROUPS + 1);
    assert_int_equal(treeview_materialised(tv), 0);
    /* Once the user opens one, the default stays put. */
    assert_true(treeview_expand(tv, 5));
    build_rows(&f, rows, 3 * 10);
    treeview_rebuild(tv, &f);
    assert_int_equal(treeview_rows(tv), 10 + 3);
    assert_int_equal(treeview_expanded_groups(tv), 1);
    treeview_free(&tv);
    tree_free(&f);
    free(rows);
    free(names);
}

static void test_focus(void **state)
{
    enum { G = 300 };
    char(*names)[32];
    struct row *rows = many_groups(G, &names);
    struct forest f;
    tree_init(&f);
    build_rows(&f, rows, 3 * G);
    struct treeview *tv = treeview_new(true);
    treeview_rebuild(tv, &f);
    assert_int_equal(treeview_rows(tv), G);
    /* Focus on message g150/c (store entry 452): only its group, opened down to it. */
    uint32_t c = node_of(&f, "g150", "c");
    assert_int_equal(c, 452);
    treeview_focus(tv, c);
    assert_true(treeview_focused(tv));
    assert_dump(tv, " v correlation g150 (3 messages)\n"
                    "   v a\n"
                    "   `- v b\n"
                    "*     `-   c\n");
    assert_false(treeview_collapse(tv, 0)); /* the focused group stays open */
    assert_int_equal(treeview_row_of_node(tv, node_of(&f, "g151", "a")), SIZE_MAX);
    assert_int_equal(treeview_row_of_group(tv, 151), SIZE_MAX);
    assert_int_equal(treeview_jump(tv, node_of(&f, "g151", "a")), SIZE_MAX);
    assert_true(treeview_collapse(tv, 1));
    assert_int_equal(treeview_cursor(tv), 1);
    /* Search stays inside the group. */
    assert_int_equal(treeview_search(tv, "g151", 1), SIZE_MAX);
    assert_int_equal(treeview_search(tv, "b", 1), 2);
    /* Collapse all keeps the focused group open, with its roots. */
    treeview_collapse_all(tv);
    assert_dump(tv, " v correlation g150 (3 messages)\n"
                    "*  > a\n");
    treeview_jump(tv, node_of(&f, "g150", "b"));
    /* The focus survives a rebuild in which the group moved. */
    struct row *more = xcalloc(3 * G + 1, sizeof *more);
    more[0] = (struct row){"new", "z", ""};
    memcpy(more + 1, rows, 3 * G * sizeof *rows);
    build_rows(&f, more, 3 * G + 1);
    treeview_rebuild(tv, &f);
    assert_true(treeview_focused(tv));
    assert_dump(tv, " v correlation g150 (3 messages)\n"
                    "   v a\n"
                    "*  `- > b\n");
    /* Back to the whole forest: the group stays open and the cursor on b. */
    treeview_focus(tv, TREE_NONE);
    assert_false(treeview_focused(tv));
    assert_int_equal(treeview_rows(tv), G + 1 + 2);
    char *s = row_str(tv, treeview_cursor(tv));
    assert_string_equal(s, "  `- > b");
    free(s);
    assert_int_equal(treeview_cursor(tv), 153);
    /* A focused group that goes away leaves no rows; when it comes back, so does the cursor. */
    treeview_focus(tv, node_of(&f, "g150", "c"));
    build_rows(&f, rows, 3 * 100);
    treeview_rebuild(tv, &f);
    assert_int_equal(treeview_rows(tv), 0);
    assert_int_equal(treeview_cursor(tv), 0);
    build_rows(&f, rows, 3 * G);
    treeview_rebuild(tv, &f);
    s = row_str(tv, treeview_cursor(tv));
    assert_string_equal(s, "     `-   c");
    free(s);
    treeview_free(&tv);
    tree_free(&f);
    free(more);
    free(rows);
    free(names);
}

static void test_rebuild_keeps_state(void **state)
{
    struct forest f;
    tree_init(&f);
    build_rows(&f, small_forest, 9);
    struct treeview *tv = treeview_new(true);
    treeview_rebuild(tv, &f);
    assert_true(treeview_collapse(tv, 2)); /* charge */
    treeview_set_cursor(tv, row_of(tv, &f, "order-7", "refund"));
    /* More messages: a new group first, the missing cause arrives, new children (one under
     * the collapsed charge), all in a new order. The forest is rebuilt in place. */
    static const struct row after[] = {
        {"order-1", "x", ""},
        {"order-7", "sms", "charge"},
        {"order-7", "dispute", ""},
        {"order-7", "place", ""},
        {"order-7", "charge", "place"},
        {"order-7", "ship", "place"},
        {"order-7", "receipt", "charge"},
        {"order-7", "email", "charge"},
        {"order-7", "refund", "dispute"},
        {"order-9", "place", ""},
        {"order-7", "charge", "place"},
        {"order-9", "audit", "place"},
        {"order-7", "gift", "ship"},
    };
    build_rows(&f, after, 13);
    treeview_rebuild(tv, &f);
    assert_dump(tv, " v correlation order-1 (1 message)\n"
                    "     x\n"
                    " v correlation order-7 (10 messages)\n"
                    "   v dispute\n"
                    "*  `-   refund\n"
                    "   v place\n"
                    "   |- > charge\n"
                    "   |- v ship\n"
                    "   |  `-   gift\n"
                    "   `-   charge (duplicate)\n"
                    " v correlation order-9 (2 messages)\n"
                    "   v place\n"
                    "   `-   audit\n");
    /* The placeholder's state went to the message that filled it. */
    assert_true(treeview_collapse(tv, 3));
    static const struct row again[] = {
        {"order-7", "refund", "dispute"},
        {"order-7", "place", ""},
        {"order-7", "dispute", ""},
    };
    build_rows(&f, again, 3);
    treeview_rebuild(tv, &f);
    assert_dump(tv, " v correlation order-7 (3 messages)\n"
                    "     place\n"
                    "*  > dispute\n");
    /* The cursor's node is gone: it goes to the nearest ancestor that survives. */
    assert_true(treeview_expand(tv, 2));
    treeview_set_cursor(tv, 3);
    static const struct row gone[] = {{"order-7", "place", ""}, {"order-7", "dispute", ""}};
    build_rows(&f, gone, 2);
    treeview_rebuild(tv, &f);
    assert_dump(tv, " v correlation order-7 (2 messages)\n"
                    "     place\n"
                    "*    dispute\n");
    /* Its group is gone too: the same row number, clamped. */
    static const struct row other[] = {{"a", "1", ""}, {"b", "1", ""}};
    build_rows(&f, other, 2);
    treeview_rebuild(tv, &f);
    assert_dump(tv, " v correlation a (1 message)\n"
                    "     1\n"
                    "*v correlation b (1 message)\n"
                    "     1\n");
    /* Cursor on a header: stays on it when groups are added before it. */
    static const struct row other2[] = {{"z", "1", ""}, {"a", "1", ""}, {"b", "1", ""}};
    build_rows(&f, other2, 3);
    treeview_rebuild(tv, &f);
    assert_int_equal(treeview_cursor(tv), 4);
    /* Cursor on a node hidden by a newly arrived collapsed parent: goes to that parent. */
    treeview_collapse_all(tv);
    static const struct row p1[] = {{"k", "p", ""}, {"k", "c", "m"}};
    build_rows(&f, p1, 2);
    treeview_rebuild(tv, &f);
    treeview_expand(tv, 0);
    assert_int_equal(treeview_search(tv, "c", 1), 3);
    static const struct row p2[] = {{"k", "p", ""}, {"k", "c", "m"}, {"k", "m", "p"}};
    build_rows(&f, p2, 3);
    treeview_rebuild(tv, &f);
    assert_dump(tv, " v correlation k (3 messages)\n"
                    "*  > p\n");
    assert_int_equal(treeview_cursor(tv), 1);
    treeview_free(&tv);
    tree_free(&f);
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
        cmocka_unit_test(test_empty),           cmocka_unit_test(test_golden),
        cmocka_unit_test(test_expand_collapse), cmocka_unit_test(test_cycles_and_marks),
        cmocka_unit_test(test_hostile_text),    cmocka_unit_test(test_label),
        cmocka_unit_test(test_search),          cmocka_unit_test(test_default_by_group_count),
        cmocka_unit_test(test_focus),           cmocka_unit_test(test_rebuild_keeps_state),
        cmocka_unit_test(test_random_walk),     cmocka_unit_test(test_deep_chain),
        cmocka_unit_test(test_indent_cap),      cmocka_unit_test(test_million),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
