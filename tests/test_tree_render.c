/*
 * test_tree_render: the causal forest's rendered text — golden strings, the guides of deep
 * branches, one message's line of descent, hostile text escaped, custom escapes and labels,
 * ids with NUL bytes, a 200,000-deep chain and the indent cap.
 */
#include "tree_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tree.h"
#include "util.h"

static void test_render_deep_guides(void **state)
{
    /* Every level has a sibling still to come, so every guide column must be drawn. */
    static const struct row rows[] = {
        {"k", "a", ""},  {"k", "b", "a"}, {"k", "c", "b"}, {"k", "d", "c"}, {"k", "e", "d"},
        {"k", "f", "c"}, {"k", "g", "b"}, {"k", "h", "a"}, {"k", "i", "e"}, {"k", "j", "d"},
    };
    struct forest f;
    tree_init(&f);
    build_rows(&f, rows, 10);
    assert_render(&f, 0,
                  "correlation k (10 messages)\n"
                  "a\n"
                  "├─ b\n"
                  "│  ├─ c\n"
                  "│  │  ├─ d\n"
                  "│  │  │  ├─ e\n"
                  "│  │  │  │  └─ i\n"
                  "│  │  │  └─ j\n"
                  "│  │  └─ f\n"
                  "│  └─ g\n"
                  "└─ h\n");
    tree_free(&f);
}

static void test_nul_bytes(void **state)
{
    /* "a\0b", "a\0c", "a" and "a\0" are four different ids. */
    struct tree_msg m[5] = {
        {{"a\0b", 3}, {"k\0", 2}, {NULL, 0}}, {{"a\0c", 3}, {"k\0", 2}, {"a\0b", 3}},
        {{"a", 1}, {"k\0", 2}, {"a\0", 2}},   {{"a\0", 2}, {"k\0", 2}, {"a\0c", 3}},
        {{"z", 1}, {"k", 1}, {"a", 1}}, /* a different group: "k" is not "k\0" */
    };
    struct forest f;
    tree_init(&f);
    assert_int_equal(tree_build(&f, m, 5, NULL), ST_OK);
    assert_int_equal(tree_group_count(&f), 2);
    assert_int_equal(tree_node_count(&f), 6);
    assert_int_equal(f.parent[1], 0);
    assert_int_equal(f.parent[3], 1);
    assert_int_equal(f.parent[2], 3);
    assert_int_equal(tree_root_count(&f), 2);
    uint32_t v;
    assert_int_equal(tree_find(&f, "k\0", 2, "a\0", 2, &v, 1), 1);
    assert_int_equal(v, 3);
    assert_int_equal(tree_find(&f, "k", 1, "a", 1, &v, 1), 1);
    assert_int_equal(v, 5);
    assert_render(&f, TREE_RENDER_ASCII,
                  "correlation k\\x00 (4 messages)\n"
                  "a\\x00b\n"
                  "`- a\\x00c\n"
                  "   `- a\\x00\n"
                  "      `- a\n"
                  "\n"
                  "correlation k (1 message)\n"
                  "(not in this set) a\n"
                  "`- z\n");
    tree_free(&f);
}

static void test_escape_hostile(void **state)
{
    /* An id that would clear the screen and forge a line if it were written raw. */
    static const struct row rows[] = {{"k\x1b]0;x\x07", "\x1b[2J\nfake line", ""},
                                      {"k\x1b]0;x\x07", "c\\d", "gone\r\xff"}};
    struct forest f;
    tree_init(&f);
    build_rows(&f, rows, 2);
    char *got = render_str(&f, TREE_RENDER_ASCII);
    assert_null(strchr(got, '\x1b'));
    assert_null(strchr(got, '\r'));
    assert_null(strchr(got, '\x07'));
    assert_string_equal(got, "correlation k\\x1b]0;x\\x07 (2 messages)\n"
                             "\\x1b[2J\\x0afake line\n"
                             "(not in this set) gone\\x0d\\xff\n"
                             "`- c\\\\d\n");
    free(got);
    tree_free(&f);
}

/* A stand-in for the terminal sanitizer: counts its calls and brackets what it writes. */
static int escape_calls;
static void escape_brackets(struct strbuf *out, const void *data, size_t len)
{
    escape_calls++;
    sb_addc(out, '[');
    tree_escape_default(out, data, len);
    sb_addc(out, ']');
}

static void label_index(struct strbuf *out, const struct forest *f, uint32_t node, void *ctx)
{
    sb_addf(out, "%s#%u", (const char *)ctx, (unsigned)node);
}

static void test_custom_escape_and_label(void **state)
{
    static const struct row rows[] = {{"k", "a", ""}, {"k", "b", "m"}};
    struct forest f;
    tree_init(&f);
    build_rows(&f, rows, 2);
    struct strbuf sb;
    sb_init(&sb);
    escape_calls = 0;
    tree_render(&f, &sb, NULL, NULL, escape_brackets, TREE_RENDER_ASCII);
    assert_string_equal(sb.buf, "correlation [k] (2 messages)\n[a]\n(not in this set) [m]\n"
                                "`- [b]\n");
    assert_int_equal(escape_calls, 4);
    sb_reset(&sb);
    /* The label is the caller's; placeholders are still drawn by the module. */
    tree_render(&f, &sb, label_index, "msg", escape_brackets, TREE_RENDER_ASCII);
    assert_string_equal(sb.buf, "correlation [k] (2 messages)\nmsg#0\n(not in this set) [m]\n"
                                "`- msg#1\n");
    sb_free(&sb);
    tree_free(&f);
}

static const struct row small_forest[] = {
    {"order-7", "place", ""},       {"order-7", "charge", "place"},   {"order-7", "ship", "place"},
    {"order-7", "email", "charge"}, {"order-7", "refund", "dispute"}, {"order-9", "place", ""},
    {"order-7", "charge", "place"}, {"order-9", "audit", "place"},    {"order-7", "sms", "charge"},
};

static void test_render_golden(void **state)
{
    struct forest f;
    tree_init(&f);
    build_rows(&f, small_forest, 9);
    assert_render(&f, 0,
                  "correlation order-7 (7 messages)\n"
                  "place\n"
                  "├─ charge\n"
                  "│  ├─ email\n"
                  "│  └─ sms\n"
                  "├─ ship\n"
                  "└─ charge (duplicate)\n"
                  "(not in this set) dispute\n"
                  "└─ refund\n"
                  "\n"
                  "correlation order-9 (2 messages)\n"
                  "place\n"
                  "└─ audit\n");
    assert_render(&f, TREE_RENDER_ASCII,
                  "correlation order-7 (7 messages)\n"
                  "place\n"
                  "|- charge\n"
                  "|  |- email\n"
                  "|  `- sms\n"
                  "|- ship\n"
                  "`- charge (duplicate)\n"
                  "(not in this set) dispute\n"
                  "`- refund\n"
                  "\n"
                  "correlation order-9 (2 messages)\n"
                  "place\n"
                  "`- audit\n");
    tree_free(&f);
}

static void test_render_of(void **state)
{
    struct forest f;
    tree_init(&f);
    build_rows(&f, small_forest, 9);
    struct strbuf sb;
    sb_init(&sb);
    tree_render_of(&f, node_of(&f, "order-7", "charge"), &sb, NULL, NULL, NULL, 0);
    assert_string_equal(sb.buf, "correlation order-7 (7 messages)\n"
                                "place\n"
                                "└─ charge ◀\n"
                                "   ├─ email\n"
                                "   └─ sms\n");
    sb_reset(&sb);
    tree_render_of(&f, node_of(&f, "order-7", "email"), &sb, NULL, NULL, NULL, TREE_RENDER_ASCII);
    assert_string_equal(sb.buf, "correlation order-7 (7 messages)\n"
                                "place\n"
                                "`- charge\n"
                                "   `- email <\n");
    sb_reset(&sb);
    tree_render_of(&f, node_of(&f, "order-7", "place"), &sb, NULL, NULL, NULL,
                   TREE_RENDER_ASCII | TREE_RENDER_NO_MARKS);
    assert_string_equal(sb.buf, "correlation order-7 (7 messages)\n"
                                "place\n"
                                "|- charge\n"
                                "|  |- email\n"
                                "|  `- sms\n"
                                "|- ship\n"
                                "`- charge\n");
    sb_free(&sb);
    tree_free(&f);
}

#define DEEP 200000

static void test_deep_chain(void **state)
{
    /* Message i is caused by message i - 1; built forwards, then backwards. */
    char(*ids)[12] = xmalloc(DEEP * sizeof *ids);
    struct tree_msg *m = xcalloc(DEEP, sizeof *m);
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < DEEP; i++)
            snprintf(ids[i], sizeof ids[i], "m%u", (unsigned)i);
        for (uint32_t i = 0; i < DEEP; i++) {
            uint32_t at = pass ? DEEP - 1 - i : i;
            m[at].id = span_c(ids[i]);
            m[at].correlation = span_c("deep");
            m[at].causation = i ? span_c(ids[i - 1]) : span_c("");
        }
        struct forest f;
        tree_init(&f);
        assert_int_equal(tree_build(&f, m, DEEP, NULL), ST_OK);
        assert_int_equal(tree_root_count(&f), 1);
        uint32_t root = pass ? DEEP - 1 : 0, leaf = pass ? 0 : DEEP - 1;
        assert_int_equal(tree_depth(&f, leaf), DEEP - 1);
        assert_int_equal(tree_ancestors(&f, leaf, NULL, 0), DEEP);
        size_t n;
        tree_descendants(&f, root, &n);
        assert_int_equal(n, DEEP - 1);
        if (!pass) {
            struct strbuf sb;
            sb_init(&sb);
            tree_render_of(&f, leaf, &sb, NULL, NULL, NULL, TREE_RENDER_ASCII);
            size_t lines = 0;
            for (size_t i = 0; i < sb.len; i++)
                lines += sb.buf[i] == '\n';
            assert_int_equal(lines, DEEP + 1);
            /* Indentation stops growing: output stays linear in the chain's length. */
            assert_true(sb.len < (size_t)DEEP * (3 * TREE_RENDER_INDENT_MAX + 40));
            assert_non_null(strstr(sb.buf, "`- [depth 199999] m199999 <\n"));
            sb_free(&sb);
        }
        tree_free(&f);
    }
    /* A 200,000-long cycle. */
    for (uint32_t i = 0; i < DEEP; i++) {
        m[i].id = span_c(ids[i]);
        m[i].causation = span_c(ids[(i + 1) % DEEP]);
    }
    struct forest f;
    tree_init(&f);
    assert_int_equal(tree_build(&f, m, DEEP, NULL), ST_OK);
    assert_int_equal(tree_root_count(&f), 1);
    assert_true(f.flags[0] & TREE_CYCLE_BROKEN);
    assert_int_equal(f.size[0], DEEP);
    tree_free(&f);
    free(m);
    free(ids);
}

static void test_indent_cap(void **state)
{
    enum { N = TREE_RENDER_INDENT_MAX + 3 };
    char ids[N][8];
    struct tree_msg m[N];
    for (int i = 0; i < N; i++) {
        snprintf(ids[i], sizeof ids[i], "%d", i);
        m[i].id = span_c(ids[i]);
        m[i].correlation = span_c("");
        m[i].causation = i ? span_c(ids[i - 1]) : span_c("");
    }
    struct forest f;
    tree_init(&f);
    assert_int_equal(tree_build(&f, m, N, NULL), ST_OK);
    char *got = render_str(&f, TREE_RENDER_ASCII);
    struct strbuf want;
    sb_init(&want);
    for (int i = 0; i < (int)TREE_RENDER_INDENT_MAX - 1; i++)
        sb_adds(&want, "   ");
    sb_addf(&want, "`- [depth %d] %d\n", N - 1, N - 1);
    size_t wl = want.len;
    assert_true(strlen(got) > wl);
    assert_string_equal(got + strlen(got) - wl, want.buf);
    sb_free(&want);
    free(got);
    tree_free(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_render_deep_guides), cmocka_unit_test(test_nul_bytes),
        cmocka_unit_test(test_escape_hostile),     cmocka_unit_test(test_custom_escape_and_label),
        cmocka_unit_test(test_render_golden),      cmocka_unit_test(test_render_of),
        cmocka_unit_test(test_deep_chain),         cmocka_unit_test(test_indent_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
