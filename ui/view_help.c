/*
 * help: every key and what it does, one line per action of the table the bindings are read
 * from (actions.h: its keys, where they apply, its name and help), then the filter language
 * in brief.
 */
#include <stdio.h>
#include <string.h>

#include "app.h"

static const char *const filter_help[] = {
    "",
    "Filters (f): terms are ANDed; OR, NOT/-term and ( ) combine them",
    "  type:order.*        glob          error:~timeout      substring, any case",
    "  queue=orders.dlq    exact         error:/time(d)?out/i  regular expression",
    "  attempt>3  age>1h  size>=1024     header.tenant=acme  dialect:babelqueue",
    "  a bare word searches id, type, error and queue (as / does)",
    "See docs/filter.md and dlqx(1) for every field and operator.",
    "",
    "Mouse: the wheel scrolls, a click selects a line, a double click opens it (Enter).",
    "",
    "Ages: AGE (messages) since first publish; FIRST/LAST (groups) since dead-lettered",
    "(x-death time, dead_letter.failed_at). Counted from now, or as of the snapshot (A: when",
    "it was read, its newest fetched_at); filters count from now. The detail gives UTC times.",
    "",
    "Live (L): a tap of dlqx's own copies each new dead letter (the queue is not touched);",
    "arrivals are marked + in the messages, the groups show /MIN (the last three minutes),",
    "a new cause is named on the bottom line with the bell (dlqx --no-bell: without it).",
};

static size_t n_lines(void)
{
    return (ACT_COUNT - 1) + 2 + sizeof filter_help / sizeof *filter_help;
}

static void open_(struct app *a, struct view *v, void *with)
{
    v->lines = n_lines();
}

static void draw(struct app *a, struct view *v, int top, int height, int width)
{
    v->lines = n_lines();
    v->rows_y = top + 1;
    view_scroll_to_cursor(v, (size_t)(height > 1 ? height - 1 : 1));
    draw_fill(top, 0, width, UA_HEADER);
    draw_safe(top, 0, width, "KEYS                  ACTION", UA_HEADER);
    for (int row = 0; row < height - 1; row++) {
        size_t i = v->top + (size_t)row;
        int y = top + 1 + row;
        if (i < ACT_COUNT - 1) {
            enum action act = (enum action)(i + 1);
            char keys[64], line[256];
            action_keys_shown(act, keys, sizeof keys);
            snprintf(line, sizeof line, "%-20s  %-14s %s", keys, action_name(act),
                     action_help(act));
            draw_safe(y, 0, width, line, i == v->cursor ? UA_SELECTED : UA_NORMAL);
        } else if (i < ACT_COUNT - 1 + 2) {
            continue;
        } else if (i - (ACT_COUNT - 1 + 2) < sizeof filter_help / sizeof *filter_help) {
            draw_safe(y, 0, width, filter_help[i - (ACT_COUNT - 1 + 2)],
                      i == v->cursor ? UA_SELECTED : UA_DIM);
        }
    }
}

static int request(struct app *a, struct view *v, enum action act)
{
    if (act == ACT_HELP)
        return HR_HANDLED; /* already here */
    return view_move(v, act, app_page(a));
}

static void status(struct app *a, struct view *v, struct strbuf *out)
{
    sb_adds(out, "help  q or Esc: back");
}

const struct view_ops view_help_ops = {
    .name = "help",
    .which = ACT_HELP,
    .open = open_,
    .draw = draw,
    .request = request,
    .status = status,
};
