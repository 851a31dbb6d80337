/*
 * actions: the one table of everything a key can do (tig's REQ_INFO and keymap). One list
 * gives the action enum, the names, the key bindings, where each binding applies, the help
 * text and the function that carries the action out — so the help view (view_help.c), the
 * keys the loop reads (app.c), the README's table of keys (checked by tests/test_ui_actions.c)
 * and what happens cannot disagree.
 *
 * X(ACTION, "name", "keys", "scope", "what it does", handler)
 *
 *   keys     key names, separated by spaces, exactly as the help shows them: a character
 *            ("k", "?", ">"), Space, Enter, Esc, Backspace, Up, Down, Left, Right, Home, End,
 *            PgUp, PgDn, F1, Ctrl-x. These names are the bindings: actions.c reads them.
 *   scope    NULL: every view; else where the binding applies, in place of any other binding
 *            of the same key there — a view's name (its view_ops.name: "queues") or "pass"
 *            (the plan view while its pass runs: only Esc, Ctrl-g and this scope's keys act).
 *   handler  what app_handle calls when the view on top did not handle the action (app.c;
 *            act_view: only a view acts on it).
 *
 * Ownership: nothing here is allocated; the strings are the table's.
 */
#ifndef DLQX_UI_ACTIONS_H
#define DLQX_UI_ACTIONS_H

#include <stddef.h>

#define ACTION_LIST(X)                                                                             \
    X(ACT_NONE, "none", "", NULL, "", act_view)                                                    \
    X(ACT_UP, "up", "k Up", NULL, "move up", act_move)                                             \
    X(ACT_DOWN, "down", "j Down", NULL, "move down", act_move)                                     \
    X(ACT_PAGE_UP, "page-up", "PgUp Ctrl-b", NULL, "one page up", act_move)                        \
    X(ACT_PAGE_DOWN, "page-down", "PgDn Ctrl-f Space", NULL, "one page down", act_move)            \
    X(ACT_HALF_UP, "half-up", "Ctrl-u", NULL, "half a page up", act_move)                          \
    X(ACT_HALF_DOWN, "half-down", "Ctrl-d", NULL, "half a page down", act_move)                    \
    X(ACT_FIRST, "first", "g Home", NULL, "go to the first line", act_move)                        \
    X(ACT_LAST, "last", "G End", NULL, "go to the last line", act_move)                            \
    X(ACT_LEFT, "left", "h Left", NULL, "scroll left / collapse", act_move)                        \
    X(ACT_RIGHT, "right", "l Right", NULL, "scroll right / expand", act_move)                      \
    X(ACT_ENTER, "enter", "Enter", NULL, "open the selection", act_view)                           \
    X(ACT_MARK, "mark", "Space", "queues",                                                         \
      "queues: mark or unmark; Enter opens the marked together", act_view)                         \
    X(ACT_BACK, "back", "Esc Backspace", NULL,                                                     \
      "back; on the first view, stop the work in progress", act_back)                              \
    X(ACT_CANCEL, "cancel", "Ctrl-g", NULL,                                                        \
      "stop the reading, sort, filter or search in progress", act_cancel)                          \
    X(ACT_SEARCH, "search", "/", NULL, "search the decoded fields", act_search)                    \
    X(ACT_SEARCH_NEXT, "search-next", "n", NULL, "next match", act_search_again)                   \
    X(ACT_SEARCH_PREV, "search-prev", "N", NULL, "previous match", act_search_again)               \
    X(ACT_FILTER, "filter", "f", NULL, "filter with an expression (see Filters)", act_filter)      \
    X(ACT_CLEAR_FILTER, "clear-filter", "F", NULL, "clear the filter", act_clear_filter)           \
    X(ACT_SORT, "sort", "s", NULL, "sort by the next column", act_view)                            \
    X(ACT_REVERSE, "reverse", "S", NULL, "reverse the sort", act_view)                             \
    X(ACT_VIEW_QUEUES, "queues", "1 Q", NULL, "the dead-letter queues", act_switch)                \
    X(ACT_VIEW_MESSAGES, "messages", "2 m", NULL, "the dead letters", act_switch)                  \
    X(ACT_VIEW_GROUPS, "groups", "3 e", NULL, "failures grouped by cause", act_switch)             \
    X(ACT_VIEW_TREE, "tree", "4 t", NULL, "the causal tree (of the selected message)", act_tree)   \
    X(ACT_VIEW_TIMELINE, "timeline", "5 T", NULL, "arrivals over time", act_switch)                \
    X(ACT_TOGGLE, "toggle", "o", NULL, "expand or collapse (tree); raw or pretty (body)",          \
      act_view)                                                                                    \
    X(ACT_AGE_CLOCK, "age-clock", "A", NULL,                                                       \
      "ages from now, or as of the snapshot (when it was read)", act_view)                         \
    X(ACT_REFRESH, "refresh", "r Ctrl-r", NULL, "take a fresh snapshot", act_refresh)              \
    X(ACT_LIVE, "live", "L", NULL, "follow the queue live, + marks arrivals (L again stops)",      \
      act_live)                                                                                    \
    X(ACT_EXPORT, "export", "E", NULL, "write the incident report (FILE.md or FILE.html)",         \
      act_export)                                                                                  \
    X(ACT_REPLAY, "replay", "R", NULL, "replay: the message (or group) back where it came from",   \
      plan_request)                                                                                \
    X(ACT_REISSUE, "re-issue", "I", NULL, "re-issue: a new message caused by this one",            \
      plan_request)                                                                                \
    X(ACT_MOVE, "move", "M", NULL, "move as it is to the parking queue (or another)",              \
      plan_request)                                                                                \
    X(ACT_DELETE, "delete", "D", NULL, "delete (ack and drop), journaled", plan_request)           \
    X(ACT_CONFIRM, "send", "y", NULL, "plan: send (nothing is sent without it)", act_view)         \
    X(ACT_WITH, "with", "w", NULL,                                                                 \
      "plan: edit fields and headers of the copy (type=… header.X=…)", act_view)                   \
    X(ACT_EDIT_BODY, "edit-body", "b", NULL, "plan: a new body in $EDITOR", act_view)              \
    X(ACT_TARGET, "target", ">", NULL, "plan: another target (EXCHANGE:ROUTING_KEY)", act_view)    \
    X(ACT_SCOPE, "scope", "a", NULL, "plan: this message, or every message shown", act_view)       \
    X(ACT_CANARY, "canary", "c", NULL, "plan: send one first and watch for it to come back",       \
      act_view)                                                                                    \
    X(ACT_RATE, "pace", "P", NULL, "plan: copies per second and the ramp (100/s after 1,10,100)",  \
      act_view)                                                                                    \
    X(ACT_PAUSE, "pause", "p Space", "pass", "a pass under way: pause it, or go on", act_view)     \
    X(ACT_REDRAW, "redraw", "Ctrl-l", NULL, "redraw the screen", act_redraw)                       \
    X(ACT_HELP, "help", "? F1", NULL, "this help", act_help)                                       \
    X(ACT_QUIT, "quit", "q", NULL, "quit (back, in a view opened from another)", act_quit)

enum action {
#define X(e, name, keys, scope, help, handler) e,
    ACTION_LIST(X)
#undef X
        ACT_COUNT
};

const char *action_name(enum action a);
/* The key names as the table gives them ("k Up"). */
const char *action_keys(enum action a);
/* Where its keys apply: NULL for every view, else a view's name or "pass". */
const char *action_scope(enum action a);
const char *action_help(enum action a);
/* The keys as the help shows them: "k Up", "Space (queues)". */
void action_keys_shown(enum action a, char *out, size_t len);

/* The action a key (a character or a TERM_KEY_* code, term.h) is bound to in scope (a view's
 * name, "pass", or NULL: the bindings of every view only). A binding of the scope comes
 * before one of every view: Space marks a queue in the queues view and pages elsewhere. */
enum action action_for_key_in(int key, const char *scope);
enum action action_for_key(int key);

/* The key codes one key name stands for (Enter: '\n', '\r' and the keypad's Enter): how
 * many (at most max), 0 for a name that is not a key. */
int action_key_codes(const char *name, size_t name_len, int *codes, int max);
/* The bindings the table makes, in its order (made at the first call). */
struct action_binding {
    int key;
    enum action act;
    const char *scope;
};
size_t action_bindings(const struct action_binding **out);

#endif
