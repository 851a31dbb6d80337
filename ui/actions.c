/*
 * actions: names, keys and help of the actions (from ACTION_LIST), and the default key map.
 */
#include "actions.h"

#include "term.h"
#include <stddef.h>

static const char *const names[] = {
#define X(e, name, keys, help) name,
    ACTION_LIST(X)
#undef X
};
static const char *const keys[] = {
#define X(e, name, keys, help) keys,
    ACTION_LIST(X)
#undef X
};
static const char *const helps[] = {
#define X(e, name, keys, help) help,
    ACTION_LIST(X)
#undef X
};

const char *action_name(enum action a)
{
    return (unsigned)a < ACT_COUNT ? names[a] : "?";
}

const char *action_keys(enum action a)
{
    return (unsigned)a < ACT_COUNT ? keys[a] : "";
}

const char *action_help(enum action a)
{
    return (unsigned)a < ACT_COUNT ? helps[a] : "";
}

#define CTRL(c) TERM_KEY_CTRL(c)

/* The bindings, as the "keys" column of ACTION_LIST says. */
static const struct {
    int key;
    enum action act;
} bindings[] = {
    {'k', ACT_UP},
    {TERM_KEY_UP, ACT_UP},
    {'j', ACT_DOWN},
    {TERM_KEY_DOWN, ACT_DOWN},
    {TERM_KEY_PPAGE, ACT_PAGE_UP},
    {CTRL('b'), ACT_PAGE_UP},
    {TERM_KEY_NPAGE, ACT_PAGE_DOWN},
    {CTRL('f'), ACT_PAGE_DOWN},
    {' ', ACT_PAGE_DOWN},
    {CTRL('u'), ACT_HALF_UP},
    {CTRL('d'), ACT_HALF_DOWN},
    {'g', ACT_FIRST},
    {TERM_KEY_HOME, ACT_FIRST},
    {'G', ACT_LAST},
    {TERM_KEY_END, ACT_LAST},
    {'h', ACT_LEFT},
    {TERM_KEY_LEFT, ACT_LEFT},
    {'l', ACT_RIGHT},
    {TERM_KEY_RIGHT, ACT_RIGHT},
    {'\n', ACT_ENTER},
    {'\r', ACT_ENTER},
    {TERM_KEY_ENTER, ACT_ENTER},
    {27, ACT_BACK},
    {TERM_KEY_BACKSPACE, ACT_BACK},
    {127, ACT_BACK},
    {CTRL('g'), ACT_CANCEL},
    {'/', ACT_SEARCH},
    {'n', ACT_SEARCH_NEXT},
    {'N', ACT_SEARCH_PREV},
    {'f', ACT_FILTER},
    {'F', ACT_CLEAR_FILTER},
    {'s', ACT_SORT},
    {'S', ACT_REVERSE},
    {'1', ACT_VIEW_QUEUES},
    {'Q', ACT_VIEW_QUEUES},
    {'2', ACT_VIEW_MESSAGES},
    {'m', ACT_VIEW_MESSAGES},
    {'3', ACT_VIEW_GROUPS},
    {'e', ACT_VIEW_GROUPS},
    {'4', ACT_VIEW_TREE},
    {'t', ACT_VIEW_TREE},
    {'5', ACT_VIEW_TIMELINE},
    {'T', ACT_VIEW_TIMELINE},
    {'o', ACT_TOGGLE},
    {'A', ACT_AGE_CLOCK},
    {'r', ACT_REFRESH},
    {'R', ACT_REPLAY},
    {'I', ACT_REISSUE},
    {'M', ACT_MOVE},
    {'D', ACT_DELETE},
    {'y', ACT_CONFIRM},
    {'w', ACT_WITH},
    {'b', ACT_EDIT_BODY},
    {'>', ACT_TARGET},
    {'a', ACT_SCOPE},
    {'c', ACT_CANARY},
    {'P', ACT_RATE},
    {CTRL('r'), ACT_REFRESH},
    {CTRL('l'), ACT_REDRAW},
    {'?', ACT_HELP},
    {TERM_KEY_F1, ACT_HELP},
    {'q', ACT_QUIT},
};

enum action action_for_key(int key)
{
    for (size_t i = 0; i < sizeof bindings / sizeof *bindings; i++)
        if (bindings[i].key == key)
            return bindings[i].act;
    return ACT_NONE;
}

/* Keys that mean something else in one view, as the "keys" column says. */
static const struct {
    enum action view;
    int key;
    enum action act;
} in_view[] = {
    {ACT_VIEW_QUEUES, ' ', ACT_MARK},
};

enum action action_for_key_in(int key, enum action view)
{
    for (size_t i = 0; i < sizeof in_view / sizeof *in_view; i++)
        if (in_view[i].view == view && in_view[i].key == key)
            return in_view[i].act;
    return action_for_key(key);
}
