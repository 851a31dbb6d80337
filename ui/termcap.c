/*
 * termcap: whether the terminal can show the explorer at all, asked of terminfo before the
 * screen is taken over. A TERM that is unset, unknown, a hard-copy terminal or one without
 * cursor addressing and a way to clear the screen (TERM=dumb, an editor's shell buffer) would
 * give a blank screen that still acts on keys — `R` … `y` would replay blind — so the
 * explorer refuses to start there and names the commands that work anywhere. Its own file:
 * <term.h> defines a macro for every capability name.
 */
#include <curses.h>
#include <ncursesw/term.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sanitize.h"
#include "term.h"

static bool has_string(const char *cap)
{
    char *s = tigetstr(cap);
    return s && s != (char *)-1 && *s;
}

bool term_capable(void)
{
    const char *t = getenv("TERM");
    const char *why = NULL;
    int err = 0;
    if (!t || !*t) {
        why = "TERM is not set";
    } else if (setupterm(NULL, STDOUT_FILENO, &err) != OK) {
        why = err == 1   ? "is a hard-copy terminal"
              : err == 0 ? "is not in the terminfo database"
                         : "cannot be looked up (no terminfo database)";
    } else {
        if (tigetflag("hc") > 0)
            why = "is a hard-copy terminal";
        else if (!has_string("cup"))
            why = "cannot move the cursor";
        else if (!has_string("clear"))
            why = "cannot clear the screen";
        del_curterm(cur_term);
    }
    if (!why)
        return true;
    struct strbuf name;
    sb_init(&name);
    if (t && *t)
        sanitize_append(&name, t, strlen(t), SAN_ASCII);
    if (t && *t)
        san_eprintf("dlqx: the terminal (TERM=%s) %s, so the explorer cannot draw on it; "
                    "the command line works anywhere: dlqx queues, peek, decode, tree, "
                    "journal, replay --dry-run (dlqx help lists them)\n",
                    name.buf ? name.buf : "", why);
    else
        san_eprintf("dlqx: %s, so the explorer cannot draw on the terminal; the command "
                    "line works anywhere: dlqx queues, peek, decode, tree, journal, replay "
                    "--dry-run (dlqx help lists them)\n",
                    why);
    sb_free(&name);
    return false;
}
