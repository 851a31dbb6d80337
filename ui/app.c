/*
 * app: the application — the view stack, the loop that never blocks for long (it wakes every
 * second to keep ages current), the title and status lines, prompts, and the data every view
 * reads: the store, the rows that pass the filter, the causal forest.
 */
#include "app.h"

#include <curses.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "filter.h"
#include "sanitize.h"
#include "term.h"
#include "ui.h"

struct view *app_view(struct app *a)
{
    return a->depth ? &a->stack[a->depth - 1] : NULL;
}

void app_push(struct app *a, const struct view_ops *ops, size_t arg)
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
        ops->open(a, v);
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

/* ---- the data ------------------------------------------------------------------------ */

bool app_row_matches(struct app *a, size_t i)
{
    /* The filter loads the message itself, and only when a term needs it. */
    return !a->filter || filter_match_entry(a->filter, a->store, i, a->now_ms);
}

void app_rebuild_rows(struct app *a)
{
    size_t n = a->store ? store_count(a->store) : 0;
    free(a->rows);
    a->rows = xcalloc(n ? n : 1, sizeof *a->rows);
    a->n_rows = 0;
    for (size_t i = 0; i < n; i++)
        if (app_row_matches(a, i))
            a->rows[a->n_rows++] = i;
    app_sort_rows(a);
}

void app_ensure_forest(struct app *a)
{
    if (a->forest_ready || !a->store)
        return;
    size_t n = store_count(a->store);
    /* The forest borrows its strings: they live in one buffer for as long as the forest. */
    free(a->forest_text);
    struct strbuf text;
    sb_init(&text);
    size_t *offs = xcalloc(n * 3 + 1, sizeof *offs);
    char buf[STORE_TEXT_MAX];
    for (size_t i = 0; i < n; i++) {
        const struct store_entry *e = store_entry_at(a->store, i);
        store_ref refs[3] = {e->id, e->correlation, e->causation};
        for (int k = 0; k < 3; k++) {
            size_t len = store_text(a->store, refs[k], buf);
            offs[i * 3 + (size_t)k] = text.len;
            sb_add(&text, buf, len);
            sb_addc(&text, '\0');
        }
    }
    a->forest_text = sb_detach(&text, NULL);
    struct tree_msg *msgs = xcalloc(n ? n : 1, sizeof *msgs);
    for (size_t i = 0; i < n; i++) {
        const char *id = a->forest_text + offs[i * 3];
        const char *co = a->forest_text + offs[i * 3 + 1];
        const char *ca = a->forest_text + offs[i * 3 + 2];
        msgs[i].id = (struct tree_span){id, strlen(id)};
        msgs[i].correlation = (struct tree_span){co, strlen(co)};
        msgs[i].causation = (struct tree_span){ca, strlen(ca)};
    }
    struct error err;
    if (tree_build(&a->forest, msgs, n, &err) != ST_OK)
        app_message(a, true, "the causal tree could not be built: %s", err.msg);
    else
        a->forest_ready = true;
    free(msgs);
    free(offs);
}

void app_data_changed(struct app *a)
{
    if (a->forest_ready) {
        /* Keep the forest object (views hold tags, not pointers); rebuild it on demand. */
        tree_free(&a->forest);
        tree_init(&a->forest);
        a->forest_ready = false;
    }
    app_rebuild_rows(a);
    app_reload_views(a);
}

/* ---- the screen ---------------------------------------------------------------------- */

static void draw_title(struct app *a)
{
    struct view *v = app_view(a);
    char left[512];
    size_t n = a->store ? store_count(a->store) : 0;
    snprintf(left, sizeof left, " dlqx  %s  %s%s", v ? v->ops->name : "",
             a->source_label ? a->source_label : "", a->read_only ? "  [read-only]" : "");
    draw_fill(0, 0, a->cols_on_screen, UA_TITLE);
    draw_text(0, 0, a->cols_on_screen, left, strlen(left), UA_TITLE);
    char right[128];
    if (a->filter)
        snprintf(right, sizeof right, "%zu of %zu  ", a->n_rows, n);
    else if (!n && a->source == SOURCE_BROKER)
        snprintf(right, sizeof right, "no snapshot yet (Enter on a queue)  ");
    else
        snprintf(right, sizeof right, "%zu messages  ", n);
    int w = (int)strlen(right);
    if (w < a->cols_on_screen)
        draw_text(0, a->cols_on_screen - w, w, right, (size_t)w, UA_TITLE);
}

static void draw_status(struct app *a)
{
    int y = a->rows_on_screen - 1;
    draw_fill(y, 0, a->cols_on_screen, UA_STATUS);
    struct strbuf sb;
    sb_init(&sb);
    if (a->message[0]) {
        sb_adds(&sb, " ");
        sb_adds(&sb, a->message);
    } else {
        struct view *v = app_view(a);
        sb_adds(&sb, " ");
        if (v && v->ops->status)
            v->ops->status(a, v, &sb);
        if (a->filter_text) {
            sb_adds(&sb, "  filter: ");
            sb_adds(&sb, a->filter_text);
        }
        sb_adds(&sb, "   ? help  q quit");
    }
    draw_text(y, 0, a->cols_on_screen, sb.buf ? sb.buf : "", sb.len,
              a->message_is_error && a->message[0] ? UA_ERROR : UA_STATUS);
    sb_free(&sb);
}

void app_draw(struct app *a)
{
    term_size(a);
    term_clear();
    if (a->rows_on_screen < 5 || a->cols_on_screen < 20) {
        draw_safe(0, 0, a->cols_on_screen, "dlqx: the terminal is too small", UA_ERROR);
        term_flush();
        return;
    }
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
    curs_set(1);
    for (;;) {
        int y = a->rows_on_screen - 1;
        draw_fill(y, 0, a->cols_on_screen, UA_NORMAL);
        struct strbuf shown;
        sb_init(&shown);
        sb_adds(&shown, prompt);
        sanitize_append(&shown, line.buf ? line.buf : "", line.len, 0);
        draw_safe(y, 0, a->cols_on_screen, shown.buf, UA_NORMAL);
        int cx = (int)sanitize_width(shown.buf, shown.len);
        move(y, cx < a->cols_on_screen ? cx : a->cols_on_screen - 1);
        sb_free(&shown);
        refresh();
        int ch = term_key(-1);
        if (ch == 27) {
            sb_free(&line);
            curs_set(0);
            return NULL;
        }
        if (ch == '\n' || ch == '\r' || ch == KEY_ENTER)
            break;
        if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
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
        if (ch == 21) { /* Ctrl-u */
            sb_reset(&line);
            continue;
        }
        if (ch == KEY_RESIZE) {
            term_size(a);
            app_draw(a);
            continue;
        }
        if (ch >= 0x20 && ch < 0x100 && ch != 0x7f && line.len < 1000)
            sb_addc(&line, (char)ch);
    }
    curs_set(0);
    return sb_detach(&line, NULL);
}

/* ---- the loop ------------------------------------------------------------------------ */

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
    if (!v->ops->search(a, v, a->search_text, dir))
        app_message(a, true, "not found: %s", a->search_text);
}

bool app_set_filter(struct app *a, const char *text)
{
    if (!text || !*text) {
        filter_free(a->filter);
        a->filter = NULL;
        free(a->filter_text);
        a->filter_text = NULL;
        app_data_changed(a);
        app_message(a, false, "filter cleared");
        return true;
    }
    struct filter *f = NULL;
    struct error err;
    error_clear(&err);
    if (filter_compile(text, &f, &err) != ST_OK) {
        app_message(a, true, "filter: %s", err.msg);
        return false;
    }
    filter_free(a->filter);
    a->filter = f;
    free(a->filter_text);
    a->filter_text = xstrdup(text);
    app_data_changed(a);
    app_message(a, false, "%zu messages match", a->n_rows);
    return true;
}

static const struct view_ops *view_for(enum action act)
{
    switch (act) {
    case ACT_VIEW_QUEUES:
        return &view_queues_ops;
    case ACT_VIEW_MESSAGES:
        return &view_messages_ops;
    case ACT_VIEW_GROUPS:
        return &view_groups_ops;
    case ACT_VIEW_TREE:
        return &view_tree_ops;
    case ACT_VIEW_TIMELINE:
        return &view_timeline_ops;
    case ACT_HELP:
        return &view_help_ops;
    default:
        return NULL;
    }
}

int app_handle(struct app *a, enum action act)
{
    struct view *v = app_view(a);
    if (!v)
        return HR_QUIT;
    /* The view first: it may give keys its own meaning. */
    int r = v->ops->request ? v->ops->request(a, v, act) : HR_UNHANDLED;
    if (r & (HR_HANDLED | HR_QUIT))
        return r;
    switch (act) {
    case ACT_QUIT:
        if (a->depth > 1) {
            app_pop(a);
            return HR_REDRAW;
        }
        return HR_QUIT;
    case ACT_BACK:
        app_pop(a);
        return HR_REDRAW;
    case ACT_REDRAW:
        term_redraw_all();
        return HR_REDRAW;
    case ACT_SEARCH: {
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
    case ACT_SEARCH_NEXT:
        do_search(a, 1);
        return HR_REDRAW;
    case ACT_SEARCH_PREV:
        do_search(a, -1);
        return HR_REDRAW;
    case ACT_FILTER: {
        char *text = app_prompt(a, "filter: ", a->filter_text);
        if (text)
            app_set_filter(a, text);
        free(text);
        return HR_REDRAW;
    }
    case ACT_CLEAR_FILTER:
        app_set_filter(a, NULL);
        return HR_REDRAW;
    case ACT_REFRESH:
        app_refresh(a);
        return HR_REDRAW;
    case ACT_HELP:
        app_push(a, &view_help_ops, SIZE_MAX);
        return HR_REDRAW;
    case ACT_VIEW_TREE: {
        /* From a message: its tree. Elsewhere: the whole forest. */
        size_t arg = app_selected_message(a);
        app_push(a, &view_tree_ops, arg);
        return HR_REDRAW;
    }
    default: {
        const struct view_ops *ops = view_for(act);
        if (ops) {
            if (ops == v->ops)
                return HR_HANDLED;
            app_switch(a, ops);
            return HR_REDRAW;
        }
        return view_move(v, act, app_page(a)) | HR_REDRAW;
    }
    }
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
    while (!a->quit) {
        int ch = term_key(a->loader ? 0 : 1000);
        int64_t now = clock_now_ms();
        if (ch == ERR && a->loader) {
            /* Read on between keys; redraw a few times a second. */
            bool more = app_load_step(a, 40);
            struct timespec ts;
            clock_gettime(CLOCK_MONOTONIC, &ts);
            double t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
            if (!more || t - last_draw > 0.25) {
                app_draw(a);
                last_draw = t;
            }
            continue;
        }
        if (ch == 27 && a->loader) {
            app_load_cancel(a);
            app_draw(a);
            continue;
        }
        if (ch == ERR) {
            /* Ages move on (to the second). */
            if (now / 1000 != a->now_ms / 1000) {
                a->now_ms = now;
                app_draw(a);
            }
            continue;
        }
        a->now_ms = now;
        if (ch == KEY_RESIZE) {
            app_draw(a);
            continue;
        }
        if (!a->loader)
            a->message[0] = '\0';
        enum action act = action_for_key(ch);
        if (act == ACT_NONE)
            continue;
        int r = app_handle(a, act);
        if (r & HR_QUIT)
            break;
        app_draw(a);
    }
    while (a->depth > 0) {
        struct view *v = &a->stack[--a->depth];
        if (v->ops->close)
            v->ops->close(a, v);
    }
    term_done();
    return 0;
}

void app_free(struct app *a)
{
    if (a->loader)
        app_load_cancel(a);
    store_free(a->store);
    a->store = NULL;
    if (a->forest_ready)
        tree_free(&a->forest);
    free(a->forest_text);
    free(a->rows);
    filter_free(a->filter);
    free(a->filter_text);
    free(a->search_text);
    free(a->source_label);
}
