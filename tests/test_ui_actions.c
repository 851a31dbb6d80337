/*
 * The explorer's one action table (ui/actions.h): every binding has help and every help line
 * a binding, no key is bound twice where it applies, the keys named are the keys read, and
 * the README's table of keys is the table's (DLQX_UPDATE_README=1 writes it again).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "actions.h"
#include "plan.h"
#include "term.h"
#include "testutil.h"
#include "ui_testutil.h"
#include "app.h"
#include "ui.h"
#include "util.h"

/* Where a binding may apply: a view (its name) or a pass under way. */
static bool known_scope(const char *scope)
{
    const struct view_ops *views[] = {&view_queues_ops, &view_messages_ops, &view_groups_ops,
                                      &view_detail_ops, &view_tree_ops,     &view_timeline_ops,
                                      &view_help_ops,   &view_plan_ops};
    for (size_t i = 0; i < sizeof views / sizeof *views; i++)
        if (strcmp(views[i]->name, scope) == 0)
            return true;
    return strcmp(scope, "pass") == 0;
}

static bool same_scope(const char *x, const char *y)
{
    return (!x && !y) || (x && y && strcmp(x, y) == 0);
}

/* Every help line has keys, each a key that is read; every action a name of its own. */
static void test_every_help_line_is_bound(void **state)
{
    (void)state;
    for (int a = 1; a < ACT_COUNT; a++) {
        const char *keys = action_keys((enum action)a), *p = keys;
        if (!*action_help((enum action)a) || !*keys)
            fail_msg("%s: no help or no keys", action_name((enum action)a));
        while (*p) {
            while (*p == ' ')
                p++;
            size_t len = strcspn(p, " ");
            int codes[3];
            if (action_key_codes(p, len, codes, 3) == 0)
                fail_msg("%s: \"%.*s\" is not a key name", action_name((enum action)a), (int)len,
                         p);
            p += len;
        }
        const char *scope = action_scope((enum action)a);
        if (scope && !known_scope(scope))
            fail_msg("%s: scope \"%s\" is no view", action_name((enum action)a), scope);
        for (int b = 1; b < a; b++)
            if (strcmp(action_name((enum action)a), action_name((enum action)b)) == 0)
                fail_msg("two actions are called %s", action_name((enum action)a));
    }
}

/* Every binding has help, is the only one of its key where it applies, and is what the key
 * does there. */
static void test_every_binding_has_help_and_acts(void **state)
{
    (void)state;
    const struct action_binding *b;
    size_t n = action_bindings(&b);
    assert_true(n > ACT_COUNT);
    for (size_t i = 0; i < n; i++) {
        if (b[i].act == ACT_NONE || !*action_help(b[i].act))
            fail_msg("key %d is bound to an action without help", b[i].key);
        for (size_t j = 0; j < i; j++)
            if (b[j].key == b[i].key && same_scope(b[j].scope, b[i].scope))
                fail_msg("key %d is bound twice in %s: %s and %s", b[i].key,
                         b[i].scope ? b[i].scope : "every view", action_name(b[j].act),
                         action_name(b[i].act));
        assert_int_equal(action_for_key_in(b[i].key, b[i].scope), b[i].act);
    }
}

static void test_keys_where_they_apply(void **state)
{
    (void)state;
    /* Space pages, marks a queue in the queues view, pauses a pass. */
    assert_int_equal(action_for_key_in(' ', "messages"), ACT_PAGE_DOWN);
    assert_int_equal(action_for_key_in(' ', "queues"), ACT_MARK);
    assert_int_equal(action_for_key_in(' ', "pass"), ACT_PAUSE);
    assert_int_equal(action_for_key(' '), ACT_PAGE_DOWN);
    /* p is a key only while a pass runs; Esc and Ctrl-g stop it. */
    assert_int_equal(action_for_key_in('p', "plan"), ACT_NONE);
    assert_int_equal(action_for_key_in('p', "pass"), ACT_PAUSE);
    assert_int_equal(action_for_key_in(TERM_KEY_ESC, "pass"), ACT_BACK);
    assert_int_equal(action_for_key_in(TERM_KEY_CTRL('g'), "pass"), ACT_CANCEL);
    /* One name, several codes. */
    assert_int_equal(action_for_key('\n'), ACT_ENTER);
    assert_int_equal(action_for_key('\r'), ACT_ENTER);
    assert_int_equal(action_for_key(TERM_KEY_ENTER), ACT_ENTER);
    assert_int_equal(action_for_key(TERM_KEY_DEL), ACT_BACK);
    assert_int_equal(action_for_key(TERM_KEY_BACKSPACE), ACT_BACK);
    assert_int_equal(action_for_key(TERM_KEY_F1), ACT_HELP);
    assert_int_equal(action_for_key(TERM_KEY_CTRL('l')), ACT_REDRAW);
    assert_int_equal(action_for_key(TERM_KEY_NONE), ACT_NONE);
    assert_int_equal(action_for_key('Z'), ACT_NONE);
    int codes[3];
    assert_int_equal(action_key_codes("Ctrl-", 5, codes, 3), 0);
    assert_int_equal(action_key_codes("Tab", 3, codes, 3), 0);
    char shown[64];
    action_keys_shown(ACT_MARK, shown, sizeof shown);
    assert_string_equal(shown, "Space (queues)");
    action_keys_shown(ACT_UP, shown, sizeof shown);
    assert_string_equal(shown, "k Up");
}

/* ---- what the actions do: the handler column ----------------------------------------- */

static const struct uit_msg two[] = {
    {"a", "order.placed", "orders.dlq", "boom", "c", NULL, 1, 0, 0},
    {"b", "order.placed", "orders.dlq", "boom", "c", "a", 2, 0, 0},
};

static void test_handlers(void **state)
{
    (void)state;
    struct app *a = uit_app(two, 2);
    app_push(a, &view_messages_ops, SIZE_MAX);
    /* Movement, the view's own. */
    app_handle(a, ACT_DOWN);
    assert_int_equal(app_view(a)->cursor, 1);
    assert_int_equal(app_selected_message(a), 1);
    /* Help opens on top; q goes back. */
    app_handle(a, ACT_HELP);
    assert_ptr_equal(app_view(a)->ops, &view_help_ops);
    assert_int_equal(a->depth, 2);
    assert_int_equal(app_handle(a, ACT_QUIT) & HR_QUIT, 0);
    assert_int_equal(a->depth, 1);
    /* The tree of the message under the cursor; Esc back. */
    app_handle(a, ACT_VIEW_TREE);
    assert_ptr_equal(app_view(a)->ops, &view_tree_ops);
    assert_int_equal(app_view(a)->arg, 1);
    uit_finish(a);
    app_handle(a, ACT_BACK);
    assert_ptr_equal(app_view(a)->ops, &view_messages_ops);
    /* A number key replaces the stack; the same one again does nothing more. */
    app_handle(a, ACT_VIEW_GROUPS);
    uit_finish(a);
    assert_ptr_equal(app_view(a)->ops, &view_groups_ops);
    assert_int_equal(a->depth, 1);
    assert_int_equal(app_handle(a, ACT_VIEW_GROUPS), HR_HANDLED);
    /* Nothing to stop; a filter cleared; writing refused on a read-only source. */
    app_handle(a, ACT_CANCEL);
    assert_string_equal(a->message, "nothing to stop");
    app_switch(a, &view_messages_ops);
    app_handle(a, ACT_REPLAY);
    assert_true(a->message_is_error);
    assert_non_null(strstr(a->message, "read-only"));
    /* q on the first view quits. */
    assert_true(app_handle(a, ACT_QUIT) & HR_QUIT);
    uit_free(a);
}

/* ---- the README's table of keys ------------------------------------------------------ */

#define README_BEGIN "<!-- keys: made from ui/actions.h"
#define README_END "<!-- /keys -->"

static void readme_table(struct strbuf *out)
{
    sb_adds(out, README_BEGIN " by tests/test_ui_actions.c (DLQX_UPDATE_README=1 "
                              "writes it again); edit the table there, not here -->\n");
    sb_adds(out, "| keys | where | action | what it does |\n|---|---|---|---|\n");
    for (int a = 1; a < ACT_COUNT; a++) {
        const char *p = action_keys((enum action)a);
        sb_adds(out, "|");
        while (*p) {
            while (*p == ' ')
                p++;
            size_t len = strcspn(p, " ");
            sb_adds(out, " `");
            sb_add(out, p, len);
            sb_adds(out, "`");
            p += len;
        }
        const char *scope = action_scope((enum action)a);
        sb_addf(out, " | %s | %s | %s |\n", scope ? scope : "every view",
                action_name((enum action)a), action_help((enum action)a));
    }
}

static void test_readme_keys_table(void **state)
{
    (void)state;
    const char *path = SOURCE_ROOT "/README.md";
    struct bytes file = test_read_file(path);
    char *readme = xstrndup((const char *)file.data, file.len);
    bytes_free(&file);
    char *begin = strstr(readme, README_BEGIN);
    char *end = begin ? strstr(begin, README_END) : NULL;
    if (!begin || !end)
        fail_msg("README.md has no table of keys between \"%s\" and \"%s\"", README_BEGIN,
                 README_END);
    struct strbuf want;
    sb_init(&want);
    readme_table(&want);
    size_t have_len = (size_t)(end - begin);
    bool same = have_len == want.len && memcmp(begin, want.buf, want.len) == 0;
    const char *update = getenv("DLQX_UPDATE_README");
    if (!same && update && strcmp(update, "1") == 0) {
        FILE *f = fopen(path, "wb");
        assert_non_null(f);
        fwrite(readme, 1, (size_t)(begin - readme), f);
        fwrite(want.buf, 1, want.len, f);
        fputs(end, f);
        assert_int_equal(fclose(f), 0);
        same = true;
    }
    if (!same)
        fail_msg("README.md's table of keys is not the action table's: run this test with "
                 "DLQX_UPDATE_README=1 to write it again");
    sb_free(&want);
    free(readme);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_help_line_is_bound),
        cmocka_unit_test(test_every_binding_has_help_and_acts),
        cmocka_unit_test(test_keys_where_they_apply),
        cmocka_unit_test(test_handlers),
        cmocka_unit_test(test_readme_keys_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
