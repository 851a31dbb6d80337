/*
 * view_detail: one message in full — the document detail_render builds (src/analysis/detail.h),
 * painted line by line with a cursor line, scrolling both ways, sections that fold (Enter, or
 * h on a section), the body toggled between pretty, raw and hex (o), and search in the lines.
 *
 * The view owns its copy of the message (store_get), its decode and the document. The text
 * of the document is already sanitized, so it is drawn with draw_safe. The document is
 * wrapped at the width of the screen and built again when that changes; the cursor keeps
 * its place in its section across a rebuild, and folded sections stay folded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "app.h"
#include "detail.h"
#include "sanitize.h"
#include "store.h"
#include "ui.h"
#include "util.h"

enum body_mode { BM_PRETTY, BM_RAW, BM_HEX };

struct detail_state {
    struct message msg;
    struct decoded dec;
    bool loaded;
    char error[600];
    struct detail_doc doc;
    int doc_width;
    int64_t doc_now; /* the clock the ages were worked out at */
    enum body_mode body;
    unsigned folded; /* one bit per enum detail_section */
    size_t *vis;     /* the doc line of each visible line */
    size_t n_vis, vis_cap;
    size_t page; /* lines on the last page drawn */
};

#define HSCROLL_STEP 8

static enum ui_attr style_attr(enum detail_style s)
{
    switch (s) {
    case DS_TITLE:
        return UA_HEADER;
    case DS_LABEL:
        return UA_HEADER;
    case DS_DIM:
        return UA_DIM;
    case DS_ERROR:
        return UA_ERROR;
    case DS_WARN:
        return UA_WARN;
    case DS_ACCENT:
        return UA_ACCENT;
    case DS_GOOD:
        return UA_GOOD;
    case DS_VALUE:
    case DS_NORMAL:
    case DS_COUNT:
    default:
        return UA_NORMAL;
    }
}

static bool is_folded(const struct detail_state *st, enum detail_section s)
{
    return (unsigned)s < DSEC_COUNT && (st->folded >> s & 1u);
}

static void unload(struct detail_state *st)
{
    if (st->loaded) {
        decoded_free(&st->dec);
        message_free(&st->msg);
        st->loaded = false;
    }
}

static void load(struct app *a, struct view *v, struct detail_state *st)
{
    unload(st);
    st->error[0] = '\0';
    if (!a->store || v->arg == SIZE_MAX || v->arg >= store_count(a->store)) {
        snprintf(st->error, sizeof st->error, "this message is no longer in the snapshot");
        return;
    }
    struct error err;
    error_clear(&err);
    if (store_get(a->store, v->arg, &st->msg, &err) != ST_OK) {
        snprintf(st->error, sizeof st->error, "cannot read message %zu back: %s", v->arg, err.msg);
        return;
    }
    decode_message(&st->msg, a->now_ms, &st->dec);
    st->loaded = true;
}

static void rebuild_visible(struct view *v, struct detail_state *st)
{
    st->n_vis = 0;
    for (size_t i = 0; i < st->doc.n; i++) {
        const struct detail_line *l = &st->doc.lines[i];
        if (!l->heading && is_folded(st, l->section))
            continue;
        xgrow((void **)&st->vis, &st->vis_cap, st->n_vis + 1, sizeof *st->vis);
        st->vis[st->n_vis++] = i;
    }
    v->lines = st->n_vis;
    if (v->cursor >= st->n_vis)
        v->cursor = st->n_vis ? st->n_vis - 1 : 0;
    if (v->top > v->cursor)
        v->top = v->cursor;
}

/* The doc line under the cursor, or doc.n when there is none. */
static size_t cursor_line(const struct view *v, const struct detail_state *st)
{
    return v->cursor < st->n_vis ? st->vis[v->cursor] : st->doc.n;
}

static void set_cursor_line(struct view *v, struct detail_state *st, size_t line)
{
    for (size_t i = 0; i < st->n_vis; i++) {
        if (st->vis[i] >= line) {
            v->cursor = i;
            return;
        }
    }
    v->cursor = st->n_vis ? st->n_vis - 1 : 0;
}

/* Builds the document again (new width, body mode or message), keeping the cursor at the
 * same distance from its section's title. */
static void render(struct app *a, struct view *v, struct detail_state *st, int width)
{
    enum detail_section sec = DSEC_SUMMARY;
    size_t off = 0;
    size_t cur = cursor_line(v, st);
    if (cur < st->doc.n) {
        sec = st->doc.lines[cur].section;
        size_t head = detail_section_first(&st->doc, sec);
        off = head <= cur ? cur - head : 0;
    }
    detail_doc_free(&st->doc);
    unsigned flags = (a->ascii ? DETAIL_ASCII : 0) | (st->body == BM_RAW ? DETAIL_BODY_RAW : 0) |
                     (st->body == BM_HEX ? DETAIL_BODY_HEX : 0) |
                     (a->ages_as_of_snapshot ? DETAIL_AS_OF_SNAPSHOT : 0);
    int64_t clock = app_age_clock(a);
    if (st->loaded) {
        struct detail_opts opts = {width < 40 ? 40 : width, 0};
        detail_render_opts(&st->dec, &st->msg, clock, flags, &opts, &st->doc);
    } else {
        st->doc.flags = flags;
        detail_add_text(&st->doc, 1, DS_ERROR, st->error, strlen(st->error));
    }
    st->doc_width = width;
    st->doc_now = clock;
    rebuild_visible(v, st);
    size_t head = detail_section_first(&st->doc, sec);
    if (head < st->doc.n) {
        size_t end = head + 1;
        while (end < st->doc.n && !st->doc.lines[end].heading)
            end++;
        set_cursor_line(v, st, head + off < end ? head + off : end - 1);
    } else {
        v->cursor = 0;
    }
}

static void detail_open(struct app *a, struct view *v, void *with)
{
    struct detail_state *st = xcalloc(1, sizeof *st);
    v->state = st;
    v->cursor = v->top = 0;
    v->hscroll = 0;
    load(a, v, st);
    render(a, v, st, a->cols_on_screen > 0 ? a->cols_on_screen : DETAIL_WRAP_DEFAULT);
    v->cursor = v->top = 0;
}

static void detail_close(struct app *a, struct view *v)
{
    struct detail_state *st = v->state;
    (void)a;
    if (!st)
        return;
    unload(st);
    detail_doc_free(&st->doc);
    free(st->vis);
    free(st);
    v->state = NULL;
}

/* Draws the bytes [p, p + n) at line column col (before the horizontal scroll); returns the
 * column after them. */
static size_t draw_segment(int y, int width, int hscroll, size_t col, const char *p, size_t n,
                           enum ui_attr attr, struct strbuf *tmp)
{
    size_t w = sanitize_width(p, n), hs = (size_t)(hscroll < 0 ? 0 : hscroll);
    if (n == 0 || col + w <= hs || (width > 0 && col >= hs + (size_t)width))
        return col + w;
    size_t off = 0, skipped = 0;
    if (col < hs)
        off = detail_skip_columns(p, n, hs - col, &skipped);
    size_t x = col + skipped - hs;
    if (x < (size_t)width && off < n) {
        /* Exactly the segment's columns (draw_safe pads), or up to the edge, where it is cut
         * with a mark. */
        size_t seg = w - skipped, room = (size_t)width - x;
        sb_reset(tmp);
        sb_add(tmp, p + off, n - off);
        draw_safe(y, (int)x, (int)(seg < room ? seg : room), tmp->buf, attr);
    }
    return col + w;
}

static void draw_line(struct app *a, struct view *v, struct detail_state *st, size_t idx, int y,
                      int width, struct strbuf *tmp)
{
    const struct detail_line *l = &st->doc.lines[st->vis[idx]];
    bool sel = idx == v->cursor;
    enum ui_attr base = sel ? UA_SELECTED : style_attr(l->style);
    draw_fill(y, 0, width, sel ? UA_SELECTED : UA_NORMAL);
    size_t col = (size_t)(l->indent < 0 ? 0 : l->indent);
    if (l->heading) {
        const char *g = glyph(a, is_folded(st, l->section) ? G_COLLAPSED : G_EXPANDED);
        col =
            draw_segment(y, width, v->hscroll, col, g, strlen(g), sel ? UA_SELECTED : UA_DIM, tmp);
        col = draw_segment(y, width, v->hscroll, col, " ", 1, sel ? UA_SELECTED : UA_NORMAL, tmp);
        base = sel ? UA_SELECTED : UA_TITLE;
        /* The title as a tag: one column of its colour either side. */
        col = draw_segment(y, width, v->hscroll, col, " ", 1, base, tmp);
        col = draw_segment(y, width, v->hscroll, col, l->text, l->len, base, tmp);
        draw_segment(y, width, v->hscroll, col, " ", 1, base, tmp);
        return;
    }
    size_t at = 0;
    for (uint8_t s = 0; s <= l->n_spans; s++) {
        size_t start = s < l->n_spans ? l->spans[s].start : l->len;
        if (start > l->len)
            start = l->len;
        if (start > at)
            col = draw_segment(y, width, v->hscroll, col, l->text + at, start - at, base, tmp);
        if (s == l->n_spans)
            break;
        size_t end = start + l->spans[s].len;
        if (end > l->len)
            end = l->len;
        enum ui_attr attr = sel ? UA_SELECTED : style_attr(l->spans[s].style);
        col = draw_segment(y, width, v->hscroll, col, l->text + start, end - start, attr, tmp);
        at = end;
    }
}

static void detail_draw(struct app *a, struct view *v, int top, int height, int width)
{
    struct detail_state *st = v->state;
    if (!st || height <= 0 || width <= 0)
        return;
    /* Wrapped at the screen's width; ages move on with the clock. */
    if (width != st->doc_width || app_age_clock(a) / 1000 != st->doc_now / 1000)
        render(a, v, st, width);
    st->page = (size_t)height;
    view_scroll_to_cursor(v, st->page);
    struct strbuf tmp;
    sb_init(&tmp);
    for (int y = 0; y < height; y++) {
        size_t idx = v->top + (size_t)y;
        if (idx < st->n_vis)
            draw_line(a, v, st, idx, top + y, width, &tmp);
        else
            draw_fill(top + y, 0, width, UA_NORMAL);
    }
    sb_free(&tmp);
}

/* Folds or unfolds the section under the cursor; a folded section keeps the cursor on its
 * title. */
static void fold(struct view *v, struct detail_state *st, bool want_folded)
{
    size_t cur = cursor_line(v, st);
    if (cur >= st->doc.n)
        return;
    enum detail_section s = st->doc.lines[cur].section;
    size_t head = detail_section_first(&st->doc, s);
    if (want_folded)
        st->folded |= 1u << s;
    else
        st->folded &= ~(1u << s);
    rebuild_visible(v, st);
    set_cursor_line(v, st, head < st->doc.n ? head : 0);
    view_scroll_to_cursor(v, st->page ? st->page : 1);
}

static size_t widest_line(const struct detail_state *st)
{
    size_t w = 0;
    for (size_t i = 0; i < st->n_vis; i++) {
        const struct detail_line *l = &st->doc.lines[st->vis[i]];
        size_t k = (size_t)l->indent + sanitize_width(l->text, l->len);
        if (k > w)
            w = k;
    }
    return w;
}

static const char *body_mode_name(enum body_mode m)
{
    return m == BM_RAW ? "raw" : m == BM_HEX ? "hex" : "pretty";
}

static int detail_request(struct app *a, struct view *v, enum action act)
{
    struct detail_state *st = v->state;
    if (!st)
        return HR_UNHANDLED;
    size_t cur = cursor_line(v, st);
    const struct detail_line *l = cur < st->doc.n ? &st->doc.lines[cur] : NULL;
    switch (act) {
    case ACT_AGE_CLOCK:
        app_age_clock_toggle(a);
        return HR_HANDLED | HR_REDRAW;
    case ACT_TOGGLE: {
        bool json = st->loaded && st->dec.body.kind == BODY_JSON && st->dec.body.json_valid;
        st->body = st->body == BM_PRETTY ? (json ? BM_RAW : BM_HEX)
                   : st->body == BM_RAW  ? BM_HEX
                                         : BM_PRETTY;
        render(a, v, st, st->doc_width);
        app_message(a, false, "body: %s", body_mode_name(st->body));
        return HR_HANDLED | HR_REDRAW;
    }
    case ACT_ENTER:
        if (!l)
            return HR_HANDLED;
        fold(v, st, !is_folded(st, l->section));
        return HR_HANDLED | HR_REDRAW;
    case ACT_LEFT:
        if (v->hscroll > 0) {
            v->hscroll = v->hscroll > HSCROLL_STEP ? v->hscroll - HSCROLL_STEP : 0;
        } else if (l && l->heading && !is_folded(st, l->section)) {
            /* On a section's title, h folds it (and l unfolds it). */
            fold(v, st, true);
        }
        return HR_HANDLED | HR_REDRAW;
    case ACT_RIGHT: {
        if (l && l->heading && is_folded(st, l->section)) {
            fold(v, st, false);
            return HR_HANDLED | HR_REDRAW;
        }
        size_t widest = widest_line(st), page = (size_t)(st->doc_width > 0 ? st->doc_width : 1);
        if (widest > page && (size_t)v->hscroll + page < widest + HSCROLL_STEP)
            v->hscroll += HSCROLL_STEP;
        return HR_HANDLED | HR_REDRAW;
    }
    case ACT_UP:
    case ACT_DOWN:
    case ACT_PAGE_UP:
    case ACT_PAGE_DOWN:
    case ACT_HALF_UP:
    case ACT_HALF_DOWN:
    case ACT_FIRST:
    case ACT_LAST:
        v->lines = st->n_vis;
        return view_move(v, act, st->page ? st->page : 1);
    default:
        return HR_UNHANDLED;
    }
}

/* Looks through every line, folded sections included (a match there unfolds it), from the
 * line after (or before) the cursor, round the end. */
static int detail_search(struct app *a, struct view *v, const char *text, int dir,
                         struct search_pos *p, double until)
{
    struct detail_state *st = v->state;
    (void)a;
    (void)p;
    (void)until; /* one message: looked through at once */
    if (!st || !st->doc.n || !text)
        return SEARCH_NONE;
    size_t n = st->doc.n, cur = cursor_line(v, st);
    if (cur >= n)
        cur = 0;
    for (size_t k = 1; k <= n; k++) {
        size_t i = dir < 0 ? (cur + n - k % n) % n : (cur + k) % n;
        const struct detail_line *l = &st->doc.lines[i];
        if (!detail_line_matches(l, text))
            continue;
        if (!l->heading && is_folded(st, l->section)) {
            st->folded &= ~(1u << l->section);
            rebuild_visible(v, st);
        }
        set_cursor_line(v, st, i);
        /* A match beyond the right edge scrolls the line into view from its start. */
        v->hscroll = 0;
        view_scroll_to_cursor(v, st->page ? st->page : 1);
        return SEARCH_FOUND;
    }
    return SEARCH_NONE;
}

static void detail_reload(struct app *a, struct view *v)
{
    struct detail_state *st = v->state;
    if (!st)
        return;
    load(a, v, st);
    render(a, v, st, st->doc_width > 0 ? st->doc_width : DETAIL_WRAP_DEFAULT);
}

static void detail_status(struct app *a, struct view *v, struct strbuf *out)
{
    struct detail_state *st = v->state;
    if (!st)
        return;
    const char *gone = app_gone_name(a, v->arg);
    if (gone)
        sb_addf(out, "%s from the explorer: no longer in its queue  ", gone);
    sb_addf(out, "line %zu/%zu", st->n_vis ? v->cursor + 1 : 0, st->n_vis);
    sb_addf(out, "  body: %s", body_mode_name(st->body));
    if (st->folded)
        sb_adds(out, "  (folded)");
    if (v->hscroll)
        sb_addf(out, "  col +%d", v->hscroll);
}

const struct view_ops view_detail_ops = {
    .name = "detail",
    .which = ACT_NONE,
    .open = detail_open,
    .close = detail_close,
    .draw = detail_draw,
    .request = detail_request,
    .search = detail_search,
    .reload = detail_reload,
    .status = detail_status,
};
