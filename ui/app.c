/*
 * app: the application — the view stack, the loop that never blocks for long (it wakes every
 * second to keep ages current, and gives the work in progress a slice between keys: job.h),
 * the title and status lines, prompts, the search (a job), and the keys' meanings that every
 * view shares: Esc goes back (on the first view it stops the work), Ctrl-g stops it anywhere.
 */
#include "app.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter.h"
#include "job.h"
#include "plan.h"
#include "sanitize.h"
#include "term.h"
#include "ui.h"

struct view *app_view(struct app *a)
{
    return a->depth ? &a->stack[a->depth - 1] : NULL;
}

void app_push(struct app *a, const struct view_ops *ops, size_t arg)
{
    app_push_with(a, ops, arg, NULL);
}

void app_push_with(struct app *a, const struct view_ops *ops, size_t arg, void *with)
{
    if (a->depth == VIEW_STACK_MAX) {
        /* Forget the oldest view rather than refuse. */
        struct view *old = &a->stack[0];
        if (old->ops->close)
            old->ops->close(a, old);
        memmove(&a->stack[0], &a->stack[1], (VIEW_STACK_MAX - 1) * sizeof a->stack[0]);
        a->depth--;
    }
    struct view *v = &a->stack[a->depth++];
    memset(v, 0, sizeof *v);
    v->ops = ops;
    v->arg = arg;
    if (ops->open)
        ops->open(a, v, with);
}

void app_pop(struct app *a)
{
    if (a->depth <= 1)
        return;
    struct view *v = &a->stack[--a->depth];
    if (v->ops->close)
        v->ops->close(a, v);
    memset(v, 0, sizeof *v);
}

void app_switch(struct app *a, const struct view_ops *ops)
{
    while (a->depth > 0) {
        struct view *v = &a->stack[--a->depth];
        if (v->ops->close)
            v->ops->close(a, v);
    }
    app_push(a, ops, SIZE_MAX);
}

void app_message(struct app *a, bool error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->message, sizeof a->message, fmt, ap);
    va_end(ap);
    a->message_is_error = error;
}

unsigned app_san_flags(const struct app *a)
{
    return a->ascii ? SAN_ASCII : 0;
}

void app_reload_views(struct app *a)
{
    for (int i = 0; i < a->depth; i++)
        if (a->stack[i].ops->reload)
            a->stack[i].ops->reload(a, &a->stack[i]);
}

int view_move(struct view *v, enum action act, size_t page)
{
    size_t n = v->lines;
    if (page < 1)
        page = 1;
    size_t old = v->cursor;
    switch (act) {
    case ACT_UP:
        if (v->cursor > 0)
            v->cursor--;
        break;
    case ACT_DOWN:
        if (v->cursor + 1 < n)
            v->cursor++;
        break;
    case ACT_PAGE_UP:
        v->cursor = v->cursor > page ? v->cursor - page : 0;
        break;
    case ACT_PAGE_DOWN:
        v->cursor = v->cursor + page < n ? v->cursor + page : (n ? n - 1 : 0);
        break;
    case ACT_HALF_UP:
        v->cursor = v->cursor > page / 2 ? v->cursor - page / 2 : 0;
        break;
    case ACT_HALF_DOWN:
        v->cursor = v->cursor + page / 2 < n ? v->cursor + page / 2 : (n ? n - 1 : 0);
        break;
    case ACT_FIRST:
        v->cursor = 0;
        break;
    case ACT_LAST:
        v->cursor = n ? n - 1 : 0;
        break;
    default:
        return HR_UNHANDLED;
    }
    view_scroll_to_cursor(v, page);
    return HR_HANDLED | (old != v->cursor ? HR_REDRAW : 0);
}

void view_scroll_to_cursor(struct view *v, size_t page)
{
    if (page < 1)
        page = 1;
    if (v->lines && v->cursor >= v->lines)
        v->cursor = v->lines - 1;
    if (v->cursor < v->top)
        v->top = v->cursor;
    if (v->cursor >= v->top + page)
        v->top = v->cursor - page + 1;
}

/* ---- the screen ---------------------------------------------------------------------- */

static void draw_title(struct app *a)
{
    struct view *v = app_view(a);
    char left[512];
    size_t n = a->store ? store_count(a->store) : 0;
    snprintf(left, sizeof left, " dlqx  %s  %s%s%s", v ? v->ops->name : "",
             a->source_label ? a->source_label : "",
             a->read_only ? "  [read-only]" : "  [read-write]",
             a->ages_as_of_snapshot ? "  [ages as of the snapshot]" : "");
    draw_fill(0, 0, a->cols_on_screen, UA_TITLE);
    char right[224], live[96];
    live_title(a, live, sizeof live);
    /* What a pass took out of the queue since the snapshot is not counted, but said. */
    size_t gone = a->n_gone < n ? a->n_gone : n;
    char since[80] = "";
    if (gone)
        snprintf(since, sizeof since, " (%zu gone since the snapshot)", gone);
    /* A reading stopped part-way: said until the next start (the message line's "reading
     * stopped" goes at a key); short, so that the count still fits 60 columns with the above. */
    if (app_source_stopped(a))
        snprintf(since + strlen(since), sizeof since - strlen(since), ", partial");
    if (a->filter)
        snprintf(right, sizeof right, "%s%zu of %zu%s  ", live, a->n_rows, n - gone, since);
    else if (!n && app_source_is_broker(a))
        snprintf(right, sizeof right, "no snapshot yet (Enter on a queue)  ");
    else
        snprintf(right, sizeof right, "%s%zu messages%s  ", live, n - gone, since);
    /* The left half cut (with "…") where the right one begins: the two never overlap. */
    int w = (int)strlen(right);
    int room = w + 1 < a->cols_on_screen ? a->cols_on_screen - w - 1 : a->cols_on_screen;
    draw_text(0, 0, room, left, strlen(left), UA_TITLE);
    if (w + 1 < a->cols_on_screen)
        draw_text(0, a->cols_on_screen - w, w, right, (size_t)w, UA_TITLE);
}

static void draw_status(struct app *a)
{
    int y = a->rows_on_screen - 1;
    draw_fill(y, 0, a->cols_on_screen, UA_STATUS);
    struct strbuf sb, work;
    sb_init(&sb);
    sb_init(&work);
    app_work_status(a, &work);
    sb_adds(&sb, " ");
    if (a->message[0]) {
        sb_adds(&sb, a->message);
        if (work.len)
            sb_adds(&sb, "  |  ");
    } else if (!work.len) {
        struct view *v = app_view(a);
        if (v && v->ops->status)
            v->ops->status(a, v, &sb);
        if (a->filter_text) {
            sb_adds(&sb, "  filter: ");
            sb_adds(&sb, a->filter_text);
        }
        sb_adds(&sb, "   ? help  q quit");
    }
    if (work.len)
        sb_add(&sb, work.buf, work.len);
    draw_text(y, 0, a->cols_on_screen, sb.buf ? sb.buf : "", sb.len,
              a->message_is_error && a->message[0] ? UA_ERROR : UA_STATUS);
    sb_free(&work);
    sb_free(&sb);
}

bool app_too_small(const struct app *a)
{
    return a->rows_on_screen < APP_MIN_ROWS || a->cols_on_screen < APP_MIN_COLS;
}

/* "terminal too small: 40×10, dlqx needs at least 60×12", broken between words over as many
 * lines as it takes. */
void app_draw_too_small(struct app *a)
{
    term_clear();
    char text[160];
    const char *x = a->ascii ? "x" : "\xc3\x97";
    snprintf(text, sizeof text, "terminal too small: %d%s%d, dlqx needs at least %d%s%d",
             a->cols_on_screen, x, a->rows_on_screen, APP_MIN_COLS, x, APP_MIN_ROWS);
    int w = a->cols_on_screen > 0 ? a->cols_on_screen : 1;
    const char *p = text;
    for (int y = 0; *p && y < a->rows_on_screen; y++) {
        size_t len = strlen(p), cut = len;
        if ((int)sanitize_width(p, len) > w) {
            cut = 0;
            for (size_t i = 0; i < len; i++)
                if (p[i] == ' ' && (int)sanitize_width(p, i) <= w)
                    cut = i;
            if (!cut)
                cut = (size_t)w; /* one long word: cut (ASCII here but for ×) */
        }
        char line[160];
        snprintf(line, sizeof line, "%.*s", (int)cut, p);
        draw_safe(y, 0, w, line, UA_ERROR);
        p += cut;
        while (*p == ' ')
            p++;
    }
    term_flush();
}

void app_draw(struct app *a)
{
    term_size(a);
    if (app_too_small(a)) {
        app_draw_too_small(a);
        return;
    }
    term_clear();
    draw_title(a);
    struct view *v = app_view(a);
    if (v && v->ops->draw)
        v->ops->draw(a, v, 1, a->rows_on_screen - 2, a->cols_on_screen);
    draw_status(a);
    term_flush();
}

size_t app_page(const struct app *a)
{
    int h = a->rows_on_screen - 3; /* title, header line, status */
    return h > 1 ? (size_t)h : 1;
}

char *app_prompt(struct app *a, const char *prompt, const char *initial)
{
    struct strbuf line;
    sb_init(&line);
    if (initial)
        sb_adds(&line, initial);
    for (;;) {
        int y = a->rows_on_screen - 1;
        draw_fill(y, 0, a->cols_on_screen, UA_NORMAL);
        struct strbuf shown;
        sb_init(&shown);
        sb_adds(&shown, prompt);
        sanitize_append(&shown, line.buf ? line.buf : "", line.len, 0);
        draw_safe(y, 0, a->cols_on_screen, shown.buf, UA_NORMAL);
        int cx = (int)sanitize_width(shown.buf, shown.len);
        term_cursor_at(y, cx < a->cols_on_screen ? cx : a->cols_on_screen - 1);
        sb_free(&shown);
        term_flush();
        /* The work in progress goes on while the user types. */
        /* Never a wait without end: a signal (term_stop_signal) ends the prompt. */
        int ch = term_key(app_busy(a) ? 20 : 250);
        if (term_stop_signal()) {
            sb_free(&line);
            term_cursor_hide();
            return NULL;
        }
        if (ch == TERM_KEY_NONE) {
            bool ended = false;
            if (app_busy(a))
                app_work(a, 20, &ended);
            continue;
        }
        if (ch == TERM_KEY_ESC) {
            sb_free(&line);
            term_cursor_hide();
            return NULL;
        }
        if (ch == '\n' || ch == '\r' || ch == TERM_KEY_ENTER)
            break;
        if (ch == TERM_KEY_BACKSPACE || ch == TERM_KEY_DEL || ch == TERM_KEY_CTRL('h')) {
            /* remove one UTF-8 character */
            while (line.len > 0) {
                unsigned char c = (unsigned char)line.buf[--line.len];
                if ((c & 0xC0) != 0x80)
                    break;
            }
            if (line.buf)
                line.buf[line.len] = '\0';
            continue;
        }
        if (ch == TERM_KEY_CTRL('u')) {
            sb_reset(&line);
            continue;
        }
        if (ch == TERM_KEY_RESIZE) {
            term_size(a);
            app_draw(a);
            if (app_too_small(a)) {
                /* Nothing is typed blind: the prompt is cancelled. */
                sb_free(&line);
                term_cursor_hide();
                return NULL;
            }
            continue;
        }
        if (ch >= 0x20 && ch < 0x100 && ch != 0x7f && line.len < 1000)
            sb_addc(&line, (char)ch);
    }
    term_cursor_hide();
    return sb_detach(&line, NULL);
}

/* ---- the loop ------------------------------------------------------------------------ */

/* A search is a job: the view looks a slice at a time (a million rows take about a second),
 * and the cursor jumps when it finds. It stops when the view it searches is no longer on top
 * or what it searched was made again. */
struct search_job {
    int depth;
    const struct view_ops *ops;
    char *text;
    int dir;
    struct search_pos pos;
    int rc;
    bool superseded;
};

static enum job_rc search_step(struct app *a, struct job *j, double until)
{
    struct search_job *s = j->state;
    struct view *v = app_view(a);
    if (a->depth != s->depth || !v || v->ops != s->ops) {
        s->rc = SEARCH_LOST;
        return JOB_DONE;
    }
    s->rc = v->ops->search(a, v, s->text, s->dir, &s->pos, until);
    j->done = s->pos.done;
    j->total = s->pos.total;
    return s->rc == SEARCH_MORE ? JOB_MORE : JOB_DONE;
}

static void search_describe(struct app *a, const struct job *j, struct strbuf *out)
{
    const struct search_job *s = j->state;
    char n[32];
    (void)a;
    sb_addf(out, "searching %s %s for \"%s\"", fmt_thousands(s->pos.total, n),
            s->pos.unit ? s->pos.unit : "lines", s->text);
}

static void search_end(struct app *a, struct job *j, bool cancelled)
{
    struct search_job *s = j->state;
    if (cancelled && !s->superseded)
        app_message(a, true, "search cancelled: %s", s->text);
    else if (!cancelled && s->rc == SEARCH_LOST)
        app_message(a, true, "search stopped: the list changed under it");
    else if (!cancelled && s->rc == SEARCH_NONE)
        app_message(a, true, "not found: %s", s->text);
    free(s->text);
    free(s);
}

static const struct job_ops search_ops = {search_step, search_describe, search_end};

static void do_search(struct app *a, int dir)
{
    struct view *v = app_view(a);
    if (!v || !v->ops->search) {
        app_message(a, true, "this view cannot be searched");
        return;
    }
    if (!a->search_text) {
        app_message(a, true, "no search yet: / to search");
        return;
    }
    struct search_job *s = xcalloc(1, sizeof *s);
    s->depth = a->depth;
    s->ops = v->ops;
    s->text = xstrdup(a->search_text);
    s->dir = dir;
    struct search_job *old = job_state(a, JOB_SEARCH, &search_ops);
    if (old)
        old->superseded = true; /* n pressed again: this one takes over, quietly */
    job_start(a, JOB_SEARCH, &search_ops, s);
}

/* ---- what the actions do (the handler column of ACTION_LIST) --------------------------- */

/* Only a view acts on it (Enter, o, y…): where none did, the screen is drawn again. */
static int act_view(struct app *a, enum action act)
{
    (void)a;
    (void)act;
    return HR_REDRAW;
}

static int act_move(struct app *a, enum action act)
{
    return view_move(app_view(a), act, app_page(a)) | HR_REDRAW;
}

static int act_quit(struct app *a, enum action act)
{
    if (a->depth > 1) {
        app_pop(a);
        return HR_REDRAW;
    }
    return HR_QUIT;
}

/* Back; only where there is nothing to go back to does Esc stop the work. */
static int act_back(struct app *a, enum action act)
{
    if (a->depth > 1)
        app_pop(a);
    else
        app_cancel_work(a);
    return HR_REDRAW;
}

static int act_cancel(struct app *a, enum action act)
{
    if (!app_cancel_work(a))
        app_message(a, false, "nothing to stop");
    return HR_REDRAW;
}

static int act_redraw(struct app *a, enum action act)
{
    term_redraw_all();
    return HR_REDRAW;
}

static int act_search(struct app *a, enum action act)
{
    char *text = app_prompt(a, "/", NULL);
    if (text && *text) {
        free(a->search_text);
        a->search_text = text;
        do_search(a, 1);
    } else {
        free(text);
    }
    return HR_REDRAW;
}

static int act_search_again(struct app *a, enum action act)
{
    do_search(a, act == ACT_SEARCH_PREV ? -1 : 1);
    return HR_REDRAW;
}

static int act_filter(struct app *a, enum action act)
{
    char *text = app_prompt(a, "filter: ", app_filter_wanted(a));
    if (text)
        app_set_filter(a, text);
    free(text);
    return HR_REDRAW;
}

static int act_clear_filter(struct app *a, enum action act)
{
    app_set_filter(a, NULL);
    return HR_REDRAW;
}

static int act_refresh(struct app *a, enum action act)
{
    app_refresh(a);
    return HR_REDRAW;
}

static int act_help(struct app *a, enum action act)
{
    app_push(a, &view_help_ops, SIZE_MAX);
    return HR_REDRAW;
}

/* From a message: its tree. Elsewhere: the whole forest. */
static int act_tree(struct app *a, enum action act)
{
    app_push(a, &view_tree_ops, app_selected_message(a));
    return HR_REDRAW;
}

/* The number keys: the view that action opens (its view_ops.which) replaces the stack. */
static int act_switch(struct app *a, enum action act)
{
    static const struct view_ops *const views[] = {&view_queues_ops, &view_messages_ops,
                                                   &view_groups_ops, &view_timeline_ops};
    for (size_t i = 0; i < sizeof views / sizeof *views; i++) {
        if (views[i]->which != act)
            continue;
        const struct view *v = app_view(a);
        if (v && views[i] == v->ops)
            return HR_HANDLED;
        app_switch(a, views[i]);
        return HR_REDRAW;
    }
    return act_move(a, act);
}

static int (*const handlers[ACT_COUNT])(struct app *a, enum action act) = {
#define X(e, name, keys, scope, help, handler) handler,
    ACTION_LIST(X)
#undef X
};

int app_handle(struct app *a, enum action act)
{
    struct view *v = app_view(a);
    if (!v)
        return HR_QUIT;
    /* The view first: it may give keys its own meaning. */
    int r = v->ops->request ? v->ops->request(a, v, act) : HR_UNHANDLED;
    if (r & (HR_HANDLED | HR_QUIT))
        return r;
    return (unsigned)act < ACT_COUNT ? handlers[act](a, act) : HR_UNHANDLED;
}

/* The mouse, through the actions the keys have: the wheel moves three lines, a click on a
 * line moves the cursor there (line by line, so every view keeps its own idea of moving), a
 * double click opens it. */
static int app_mouse(struct app *a)
{
    int y, x, r = HR_UNHANDLED;
    enum term_mouse m = term_mouse_event(&y, &x);
    struct view *v = app_view(a);
    if (m == TM_NONE || !v)
        return r;
    if (m == TM_WHEEL_UP || m == TM_WHEEL_DOWN) {
        for (int i = 0; i < 3; i++)
            r |= app_handle(a, m == TM_WHEEL_UP ? ACT_UP : ACT_DOWN);
        return r;
    }
    if (!v->rows_y || y < v->rows_y || y >= a->rows_on_screen - 1)
        return r;
    size_t line = v->top + (size_t)(y - v->rows_y);
    if (line >= v->lines)
        return r;
    while (v->cursor != line && !(r & HR_QUIT)) {
        size_t was = v->cursor;
        r |= app_handle(a, line > v->cursor ? ACT_DOWN : ACT_UP);
        if (app_view(a) != v || v->cursor == was)
            return r; /* the view went, or it cannot get there (a tree row that moved) */
    }
    if (m == TM_DOUBLE_CLICK)
        r |= app_handle(a, ACT_ENTER);
    return r;
}

size_t app_selected_message(struct app *a)
{
    struct view *v = app_view(a);
    if (v && v->ops == &view_messages_ops && v->cursor < a->n_rows)
        return a->rows[v->cursor];
    if (v && v->ops == &view_detail_ops)
        return v->arg;
    return SIZE_MAX;
}

int app_run(struct app *a, const struct view_ops *first)
{
    if (term_init(a) != 0)
        return 1;
    a->now_ms = clock_now_ms();
    app_push(a, first, SIZE_MAX);
    if (a->after_start)
        a->after_start(a);
    app_draw(a);
    double last_draw = 0;
    enum job_rc work = app_busy(a) ? JOB_MORE : JOB_DONE;
    while (!a->quit && !term_stop_signal()) {
        /* Waiting for a key only as long as the work in progress can wait. */
        int ch = term_key(work == JOB_MORE ? 0 : work == JOB_WAIT ? 20 : 1000);
        int64_t now = clock_now_ms();
        if (ch == TERM_KEY_NONE && work != JOB_DONE) {
            /* Work on between keys; redraw when something ended, else a few times a second. */
            bool ended = false;
            work = app_work(a, 20, &ended);
            double t = clock_mono_s();
            if (ended || work == JOB_DONE || t - last_draw > 0.25) {
                a->now_ms = clock_now_ms();
                app_draw(a);
                last_draw = t;
            }
            continue;
        }
        if (ch == TERM_KEY_NONE) {
            struct view *top = app_view(a);
            if (top && top->ops->tick)
                top->ops->tick(a, top);
            /* Ages move on (to the second). */
            if (now / 1000 != a->now_ms / 1000) {
                a->now_ms = now;
                app_draw(a);
            }
            work = app_busy(a) ? JOB_MORE : JOB_DONE;
            continue;
        }
        a->now_ms = now;
        if (ch == TERM_KEY_RESIZE) {
            app_draw(a);
            continue;
        }
        if (app_too_small(a)) {
            /* Below the minimum size nothing acts but going back, stopping and quitting:
             * nothing may be planned, sent or deleted on a screen that cannot show it. */
            enum action act = ch == TERM_KEY_MOUSE ? ACT_NONE : action_for_key(ch);
            if (act != ACT_QUIT && act != ACT_BACK && act != ACT_CANCEL && act != ACT_REDRAW) {
                app_draw(a);
                continue;
            }
        }
        a->message[0] = '\0';
        if (ch == TERM_KEY_MOUSE) {
            if (app_mouse(a) & HR_QUIT)
                break;
            app_draw(a);
            work = app_busy(a) ? JOB_MORE : JOB_DONE;
            continue;
        }
        /* A pass under way takes the keys of its own scope (plan.h: p and Space pause it). */
        enum action act = action_for_key_in(ch, plan_pass_running(a) ? "pass"
                                                : a->depth ? a->stack[a->depth - 1].ops->name
                                                           : NULL);
        if (act == ACT_NONE)
            continue;
        int r = app_handle(a, act);
        if (r & HR_QUIT)
            break;
        app_draw(a);
        work = app_busy(a) ? JOB_MORE : JOB_DONE;
    }
    /* q, or a signal (a peek it stopped has given every message back; the jobs end in
     * app_free): the terminal is restored. */
    while (a->depth > 0) {
        struct view *v = &a->stack[--a->depth];
        if (v->ops->close)
            v->ops->close(a, v);
    }
    term_done();
    return a->exit_code;
}

void app_free(struct app *a)
{
    live_free(a); /* the taps deleted */
    app_source_free(a);
    app_data_free(a);
    store_free(a->store);
    a->store = NULL;
    free(a->rows);
    free(a->gone);
    filter_free(a->filter);
    free(a->filter_text);
    free(a->search_text);
    free(a->source_label);
}
