/*
 * test_treeview: the model of the interactive tree — golden row text, expand/collapse,
 * placeholders and cycles, focus mode, search, state that survives a rebuild (same tags stay
 * expanded, the cursor stays on its tag). The random walk and the scale tests:
 * test_treeview_scale.c.
 */
#include "treeview_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tree.h"
#include "treeview.h"
#include "util.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_empty),           cmocka_unit_test(test_golden),
        cmocka_unit_test(test_expand_collapse), cmocka_unit_test(test_cycles_and_marks),
        cmocka_unit_test(test_hostile_text),    cmocka_unit_test(test_label),
        cmocka_unit_test(test_search),          cmocka_unit_test(test_default_by_group_count),
        cmocka_unit_test(test_focus),           cmocka_unit_test(test_rebuild_keeps_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
