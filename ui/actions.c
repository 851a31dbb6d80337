/*
 * actions: names, keys, scopes and help of the actions (from ACTION_LIST), and the key map
 * read from the same keys column: the names the help shows are the names bound.
 */
#include "actions.h"

#include <stdio.h>
#include <string.h>

#include "keys.h"

static const char *const names[] = {
#define X(e, name, keys, scope, help, handler) name,
    ACTION_LIST(X)
#undef X
};
static const char *const keys[] = {
#define X(e, name, keys, scope, help, handler) keys,
    ACTION_LIST(X)
#undef X
};
static const char *const scopes[] = {
#define X(e, name, keys, scope, help, handler) scope,
    ACTION_LIST(X)
#undef X
};
static const char *const helps[] = {
#define X(e, name, keys, scope, help, handler) help,
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

const char *action_scope(enum action a)
{
    return (unsigned)a < ACT_COUNT ? scopes[a] : NULL;
}

const char *action_help(enum action a)
{
    return (unsigned)a < ACT_COUNT ? helps[a] : "";
}

void action_keys_shown(enum action a, char *out, size_t len)
{
    const char *scope = action_scope(a);
    if (scope)
        snprintf(out, len, "%s (%s)", action_keys(a), scope);
    else
        snprintf(out, len, "%s", action_keys(a));
}

/* The keys with names of more than one character. */
static const struct {
    const char *name;
    int codes[3];
    int n;
} named[] = {
    {"Space", {' '}, 1},           {"Enter", {'\n', '\r', TERM_KEY_ENTER}, 3},
    {"Esc", {TERM_KEY_ESC}, 1},    {"Backspace", {TERM_KEY_BACKSPACE, TERM_KEY_DEL}, 2},
    {"Up", {TERM_KEY_UP}, 1},      {"Down", {TERM_KEY_DOWN}, 1},
    {"Left", {TERM_KEY_LEFT}, 1},  {"Right", {TERM_KEY_RIGHT}, 1},
    {"Home", {TERM_KEY_HOME}, 1},  {"End", {TERM_KEY_END}, 1},
    {"PgUp", {TERM_KEY_PPAGE}, 1}, {"PgDn", {TERM_KEY_NPAGE}, 1},
    {"F1", {TERM_KEY_F1}, 1},
};

int action_key_codes(const char *name, size_t len, int *codes, int max)
{
    if (max < 1 || len == 0)
        return 0;
    if (len == 1 && name[0] > ' ' && name[0] < 0x7f) {
        codes[0] = (unsigned char)name[0];
        return 1;
    }
    if (len == 6 && strncmp(name, "Ctrl-", 5) == 0 && name[5] >= 'a' && name[5] <= 'z') {
        codes[0] = TERM_KEY_CTRL(name[5]);
        return 1;
    }
    for (size_t i = 0; i < sizeof named / sizeof *named; i++) {
        if (strlen(named[i].name) != len || strncmp(named[i].name, name, len) != 0)
            continue;
        int n = named[i].n < max ? named[i].n : max;
        memcpy(codes, named[i].codes, (size_t)n * sizeof *codes);
        return n;
    }
    return 0;
}

/* Every key of every action, with room to spare (Enter and Backspace are several codes). */
#define BINDINGS_MAX (ACT_COUNT * 8)
static struct action_binding bindings[BINDINGS_MAX];
static size_t n_bindings;

static void read_bindings(void)
{
    for (int a = 0; a < ACT_COUNT; a++) {
        const char *p = keys[a];
        while (*p) {
            while (*p == ' ')
                p++;
            size_t len = strcspn(p, " ");
            int codes[3];
            int n = action_key_codes(p, len, codes, 3);
            for (int k = 0; k < n && n_bindings < BINDINGS_MAX; k++)
                bindings[n_bindings++] =
                    (struct action_binding){codes[k], (enum action)a, scopes[a]};
            p += len;
        }
    }
}

size_t action_bindings(const struct action_binding **out)
{
    if (!n_bindings)
        read_bindings();
    *out = bindings;
    return n_bindings;
}

enum action action_for_key_in(int key, const char *scope)
{
    const struct action_binding *b;
    size_t n = action_bindings(&b);
    enum action everywhere = ACT_NONE;
    for (size_t i = 0; i < n; i++) {
        if (b[i].key != key)
            continue;
        if (!b[i].scope && everywhere == ACT_NONE)
            everywhere = b[i].act;
        else if (b[i].scope && scope && strcmp(b[i].scope, scope) == 0)
            return b[i].act;
    }
    return everywhere;
}

enum action action_for_key(int key)
{
    return action_for_key_in(key, NULL);
}
