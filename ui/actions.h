/*
 * actions: the one table of everything a key can do (tig's REQ_INFO idea). The list
 * generates the action enum, the names, the default keys and the help text, so that the help
 * view and the key bindings can never disagree.
 *
 * X(ACTION, "name", "keys as shown in help", "what it does")
 */
#ifndef DLQX_UI_ACTIONS_H
#define DLQX_UI_ACTIONS_H

#define ACTION_LIST(X)                                                                             \
    X(ACT_NONE, "none", "", "")                                                                    \
    X(ACT_UP, "up", "k Up", "move up")                                                             \
    X(ACT_DOWN, "down", "j Down", "move down")                                                     \
    X(ACT_PAGE_UP, "page-up", "PgUp Ctrl-b", "one page up")                                        \
    X(ACT_PAGE_DOWN, "page-down", "PgDn Ctrl-f Space", "one page down")                            \
    X(ACT_HALF_UP, "half-up", "Ctrl-u", "half a page up")                                          \
    X(ACT_HALF_DOWN, "half-down", "Ctrl-d", "half a page down")                                    \
    X(ACT_FIRST, "first", "g Home", "go to the first line")                                        \
    X(ACT_LAST, "last", "G End", "go to the last line")                                            \
    X(ACT_LEFT, "left", "h Left", "scroll left / collapse")                                        \
    X(ACT_RIGHT, "right", "l Right", "scroll right / expand")                                      \
    X(ACT_ENTER, "enter", "Enter", "open the selection")                                           \
    X(ACT_MARK, "mark", "Space (queues)",                                                          \
      "queues: mark or unmark; Enter opens the marked together")                                   \
    X(ACT_BACK, "back", "Esc Backspace", "back; on the first view, stop the work in progress")     \
    X(ACT_CANCEL, "cancel", "Ctrl-g", "stop the reading, sort, filter or search in progress")      \
    X(ACT_SEARCH, "search", "/", "search the decoded fields")                                      \
    X(ACT_SEARCH_NEXT, "search-next", "n", "next match")                                           \
    X(ACT_SEARCH_PREV, "search-prev", "N", "previous match")                                       \
    X(ACT_FILTER, "filter", "f", "filter with an expression (see Filters)")                        \
    X(ACT_CLEAR_FILTER, "clear-filter", "F", "clear the filter")                                   \
    X(ACT_SORT, "sort", "s", "sort by the next column")                                            \
    X(ACT_REVERSE, "reverse", "S", "reverse the sort")                                             \
    X(ACT_VIEW_QUEUES, "queues", "1 Q", "the dead-letter queues")                                  \
    X(ACT_VIEW_MESSAGES, "messages", "2 m", "the dead letters")                                    \
    X(ACT_VIEW_GROUPS, "groups", "3 e", "failures grouped by cause")                               \
    X(ACT_VIEW_TREE, "tree", "4 t", "the causal tree (of the selected message)")                   \
    X(ACT_VIEW_TIMELINE, "timeline", "5 T", "arrivals over time")                                  \
    X(ACT_TOGGLE, "toggle", "o", "expand or collapse (tree); raw or pretty (body)")                \
    X(ACT_AGE_CLOCK, "age-clock", "A", "ages from now, or as of the snapshot (when it was read)")  \
    X(ACT_REFRESH, "refresh", "r Ctrl-r", "take a fresh snapshot")                                 \
    X(ACT_REPLAY, "replay", "R", "replay: the message (or group) back where it came from")         \
    X(ACT_REISSUE, "re-issue", "I", "re-issue: a new message caused by this one")                  \
    X(ACT_MOVE, "move", "M", "move as it is to the parking queue (or another)")                    \
    X(ACT_DELETE, "delete", "D", "delete (ack and drop), journaled")                               \
    X(ACT_CONFIRM, "send", "y", "plan: send (nothing is sent without it)")                         \
    X(ACT_WITH, "with", "w", "plan: edit fields and headers of the copy (type=… header.X=…)")      \
    X(ACT_EDIT_BODY, "edit-body", "b", "plan: a new body in $EDITOR")                              \
    X(ACT_TARGET, "target", ">", "plan: another target (EXCHANGE:ROUTING_KEY)")                    \
    X(ACT_SCOPE, "scope", "a", "plan: this message, or every message shown")                       \
    X(ACT_CANARY, "canary", "c", "plan: send one first and watch for it to come back")             \
    X(ACT_RATE, "pace", "P", "plan: copies per second and the ramp (100/s after 1,10,100)")        \
    X(ACT_REDRAW, "redraw", "Ctrl-l", "redraw the screen")                                         \
    X(ACT_HELP, "help", "? F1", "this help")                                                       \
    X(ACT_QUIT, "quit", "q", "quit (back, in a view opened from another)")

enum action {
#define X(e, name, keys, help) e,
    ACTION_LIST(X)
#undef X
        ACT_COUNT
};

const char *action_name(enum action a);
const char *action_keys(enum action a);
const char *action_help(enum action a);
/* The action a key (a character or a TERM_KEY_* code, term.h) is bound to. */
enum action action_for_key(int key);
/* The same in a view (its ACT_VIEW_* action): a few keys mean something else there (Space
 * marks a queue in the queues view, and pages elsewhere). */
enum action action_for_key_in(int key, enum action view);

#endif
