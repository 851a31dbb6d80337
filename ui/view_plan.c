/*
 * plan: what a replay, re-issue, move or delete will do, shown before anything is sent —
 * the side-by-side diff of each copy (n/N step through them), its target and whether it
 * routes, how many will be sent and what will be kept and why — then, on `y`, the pass itself
 * with a progress bar (p pauses, Esc cancels: what is in flight is settled, the rest stays),
 * and its summary. Edits (`w` fields, `b` the body in $EDITOR, `>` the target) make a new
 * plan; the dead letters are never touched until the broker has their copies.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "../src/cli/broker_opts.h"
#include "decode.h"
#include "editor.h"
#include "journal.h"
#include "plan.h"
#include "replay.h"
#include "restamp.h"
#include "sanitize.h"
#include "sha256.h"
#include "term.h"
#include "util.h"

#define PLAN_MAX_CHANGES 32
#define PLAN_TARGETS 6

struct pline {
    char *text; /* safe */
    enum ui_attr attr;
};

struct plan_state {
    enum plan_op op;
    enum restamp_mode mode;
    char *queue;
    size_t *entries;
    size_t n;
    char *scope; /* "this message", "the 1,234 shown", "group …" */
    size_t *alt; /* the other set (ACT_SCOPE), with its name; NULL: none */
    size_t n_alt;
    char *alt_scope;
    size_t at; /* the copy shown */
    /* edits */
    char *with_text;
    struct env_change changes[PLAN_MAX_CHANGES];
    struct hval vals[PLAN_MAX_CHANGES];
    size_t n_changes;
    struct bytes body;
    bool has_body;
    char *to_exchange, *to_routing_key;
    bool canary;
    struct plan_pace pace; /* P */
    bool pending_warned;   /* the journal's pending intents were said (plan_pending_check) */
    /* the plan */
    uint64_t sendable, kept;
    char kept_why[240];
    struct {
        char *exchange, *routing_key;
        uint64_t n;
        char route[300];
    } targets[PLAN_TARGETS];
    size_t n_targets;
    struct pline *lines;
    size_t n_lines, cap_lines;
    /* the pass */
    bool ran;
    struct replay_report rep;
    double started;
};

static const char *op_name(enum plan_op op)
{
    static const char *const n[] = {"replay", "re-issue", "move", "delete"};
    return n[op];
}

static void lines_clear(struct plan_state *s)
{
    for (size_t i = 0; i < s->n_lines; i++)
        free(s->lines[i].text);
    s->n_lines = 0;
}

static void add_line(struct plan_state *s, enum ui_attr attr, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_line(struct plan_state *s, enum ui_attr attr, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    struct strbuf raw;
    sb_init(&raw);
    sb_vaddf(&raw, fmt, ap);
    va_end(ap);
    struct strbuf safe;
    sb_init(&safe);
    sanitize_append(&safe, raw.buf ? raw.buf : "", raw.len, 0);
    sb_free(&raw);
    xgrow((void **)&s->lines, &s->cap_lines, s->n_lines + 1, sizeof *s->lines);
    s->lines[s->n_lines].text = sb_detach(&safe, NULL);
    if (!s->lines[s->n_lines].text)
        s->lines[s->n_lines].text = xstrdup("");
    s->lines[s->n_lines++].attr = attr;
}

static void restamp_opts_of(const struct plan_state *s, struct restamp_opts *ro)
{
    memset(ro, 0, sizeof *ro);
    ro->mode = s->mode;
    ro->changes = s->changes;
    ro->n_changes = s->n_changes;
    ro->body = s->has_body ? &s->body : NULL;
    ro->to_exchange = s->to_exchange;
    ro->to_routing_key = s->to_routing_key;
    ro->dlq = s->queue;
    ro->now_ms = clock_now_ms();
}

/* The copy of one dead letter, or why there is none. */
static enum status build_copy(const struct plan_state *s, const struct decoded *d,
                              struct outgoing *out, struct error *err)
{
    struct restamp_opts ro;
    restamp_opts_of(s, &ro);
    return restamp_build(d, &ro, out, err);
}

static void note_target(struct plan_state *s, const struct outgoing *o)
{
    for (size_t i = 0; i < s->n_targets; i++)
        if (bytes_eq_cstr(&o->exchange, s->targets[i].exchange) &&
            bytes_eq_cstr(&o->routing_key, s->targets[i].routing_key)) {
            s->targets[i].n++;
            return;
        }
    if (s->n_targets == PLAN_TARGETS)
        return;
    s->targets[s->n_targets].exchange = xstrndup((const char *)o->exchange.data, o->exchange.len);
    s->targets[s->n_targets].routing_key =
        xstrndup((const char *)o->routing_key.data, o->routing_key.len);
    s->targets[s->n_targets].n = 1;
    snprintf(s->targets[s->n_targets].route, sizeof s->targets[0].route, "not checked");
    s->n_targets++;
}

static void targets_clear(struct plan_state *s)
{
    for (size_t i = 0; i < s->n_targets; i++) {
        free(s->targets[i].exchange);
        free(s->targets[i].routing_key);
    }
    s->n_targets = 0;
}

/* The plan made again: counts and targets over every entry, the diff of the one shown. */
static void rebuild(struct app *a, struct plan_state *s)
{
    lines_clear(s);
    targets_clear(s);
    s->sendable = s->kept = 0;
    s->kept_why[0] = '\0';
    struct diff shown;
    memset(&shown, 0, sizeof shown);
    char shown_why[300] = "";
    char shown_id[200] = "";
    const struct dialect_ops *shown_dialect = NULL;
    int64_t now = clock_now_ms();
    for (size_t k = 0; k < s->n; k++) {
        struct message m;
        struct error err;
        if (store_get(a->store, s->entries[k], &m, &err) != ST_OK) {
            s->kept++;
            snprintf(s->kept_why, sizeof s->kept_why, "%.200s", err.msg);
            continue;
        }
        struct decoded d;
        decode_message(&m, now, &d);
        if (k == s->at)
            shown_dialect = d.dialect;
        if (k == s->at)
            snprintf(shown_id, sizeof shown_id, "%.*s",
                     (int)(d.env->id.len > 150 ? 150 : d.env->id.len),
                     (const char *)d.env->id.data);
        if (s->op == PLAN_DELETE) {
            s->sendable++;
        } else {
            struct outgoing out;
            error_clear(&err);
            if (build_copy(s, &d, &out, &err) == ST_OK) {
                s->sendable++;
                note_target(s, &out);
                if (k == s->at)
                    restamp_diff(&m, &out, &shown);
                outgoing_free(&out);
            } else {
                s->kept++;
                snprintf(s->kept_why, sizeof s->kept_why, "%.200s", err.msg);
                if (k == s->at)
                    snprintf(shown_why, sizeof shown_why, "%.280s", err.msg);
            }
        }
        decoded_free(&d);
        message_free(&m);
    }
    /* Whether each target routes: a passive declare, nothing published. */
    if (s->n_targets && a->broker) {
        int rc = 0;
        struct conn *c = broker_connect(a->broker, &rc);
        for (size_t i = 0; i < s->n_targets; i++) {
            if (c)
                replay_check_route(c, s->targets[i].exchange, s->targets[i].routing_key,
                                   s->targets[i].route, sizeof s->targets[i].route);
            else
                snprintf(s->targets[i].route, sizeof s->targets[i].route,
                         "not checked: cannot connect");
        }
        if (c)
            conn_close(c);
    }
    add_line(s, UA_TITLE, "%s %s of %s: %llu to %s, %llu kept", op_name(s->op), s->scope, s->queue,
             (unsigned long long)s->sendable, s->op == PLAN_DELETE ? "delete" : "send",
             (unsigned long long)s->kept);
    for (size_t i = 0; i < s->n_targets; i++)
        add_line(s, strncmp(s->targets[i].route, "routes", 6) == 0 ? UA_GOOD : UA_WARN,
                 "  %6llu → %s%s%s: %s", (unsigned long long)s->targets[i].n,
                 s->targets[i].exchange[0] ? "exchange " : "queue ",
                 s->targets[i].exchange[0] ? s->targets[i].exchange : s->targets[i].routing_key,
                 s->targets[i].exchange[0] ? " key " : "",
                 s->targets[i].exchange[0] ? s->targets[i].routing_key : "");
    for (size_t i = 0; i < s->n_targets; i++)
        add_line(s, UA_DIM, "         %s", s->targets[i].route);
    if (s->kept)
        add_line(s, UA_WARN, "  kept (not sent): %s", s->kept_why);
    if (s->n_changes || s->has_body || s->to_routing_key)
        add_line(s, UA_ACCENT, "  edits: %s%s%s%s%s", s->with_text ? s->with_text : "",
                 s->has_body ? "  [new body]" : "", s->to_routing_key ? "  to " : "",
                 s->to_exchange ? s->to_exchange : "", s->to_routing_key ? s->to_routing_key : "");
    if (s->canary)
        add_line(s, UA_ACCENT, "  canary: one copy first, then the rest if it stays away (10 s)");
    if (s->op != PLAN_DELETE) {
        struct strbuf pace;
        sb_init(&pace);
        plan_pace_describe(&s->pace, s->sendable, &pace);
        add_line(s, UA_ACCENT, "  %s   P changes it", pace.buf);
        sb_free(&pace);
    }
    add_line(s, UA_NORMAL, "%s", "");
    add_line(s, UA_HEADER, "copy %zu of %zu: %s", s->at + 1, s->n, shown_id);
    /* What the framework's own tool does, which this copy follows (docs/dialects.md). */
    if (shown_dialect && s->op == PLAN_REPLAY && shown_dialect->replay_rule)
        add_line(s, UA_DIM, "  %s replay: %s", shown_dialect->title, shown_dialect->replay_rule);
    if (shown_why[0])
        add_line(s, UA_ERROR, "  kept: %s", shown_why);
    int last = -1;
    for (size_t i = 0; i < shown.n; i++) {
        const struct diff_row *r = &shown.rows[i];
        if ((int)r->section != last) {
            add_line(s, UA_HEADER, "  %-24s %-44s %s", diff_section_name(r->section), "dead letter",
                     "copy");
            last = (int)r->section;
        }
        char mark = diff_op_mark(r->op);
        enum ui_attr attr = r->op == DIFF_SAME      ? UA_NORMAL
                            : r->op == DIFF_ADDED   ? UA_GOOD
                            : r->op == DIFF_REMOVED ? UA_ERROR
                                                    : UA_WARN;
        /* Cells cut by display columns (never inside a character or an escape), marked
         * with "…" when cut, so that the columns line up whatever the bytes. */
        struct strbuf row;
        sb_init(&row);
        sb_addc(&row, mark);
        sb_addc(&row, ' ');
        const char *name = r->name ? r->name : "";
        sanitize_fit(&row, name, strlen(name), 24, SAN_PAD | app_san_flags(a));
        sb_addc(&row, ' ');
        const char *old = r->old_text ? r->old_text : "";
        sanitize_fit(&row, old, strlen(old), 44, SAN_PAD | app_san_flags(a));
        sb_addc(&row, ' ');
        if (r->new_text)
            sanitize_append(&row, r->new_text, strlen(r->new_text), app_san_flags(a));
        add_line(s, attr, "%s", row.buf ? row.buf : "");
        sb_free(&row);
    }
    diff_free(&shown);
}

/* ---- the pass --------------------------------------------------------------------------- */

struct run_ctx {
    struct app *a;
    struct plan_state *s;
    struct replay_plan *find; /* the plan's dead letters, each tagged with its store index */
    bool paused;
    bool removes;      /* a done outcome takes the dead letter out of the queue (not a stream) */
    size_t *pos_entry; /* by position in the DLQ: the store index select matched, or SIZE_MAX */
    size_t cap_pos;
    size_t gone; /* dead letters the pass took out */
};

static enum gone_why gone_why_of(const struct plan_state *s)
{
    switch (s->op) {
    case PLAN_DELETE:
        return GONE_DELETED;
    case PLAN_MOVE:
        return GONE_MOVED;
    default:
        return s->mode == RESTAMP_REISSUE ? GONE_REISSUED : GONE_REPLAYED;
    }
}

static void outcome_cb(void *vctx, uint64_t seq, uint64_t position, const struct bytes *old_id,
                       enum journal_result res, const char *reason)
{
    struct run_ctx *c = vctx;
    if (res != JR_DONE || !c->removes || position >= c->cap_pos ||
        c->pos_entry[position] == SIZE_MAX)
        return;
    app_mark_gone(c->a, c->pos_entry[position], gone_why_of(c->s));
    c->pos_entry[position] = SIZE_MAX;
    c->gone++;
}

static enum replay_action select_cb(void *vctx, const struct message *m, uint64_t position,
                                    struct outgoing *out, char *why, size_t whylen)
{
    struct run_ctx *c = vctx;
    struct decoded d;
    decode_message(m, clock_now_ms(), &d);
    enum replay_action act = RA_SKIP;
    size_t entry = SIZE_MAX;
    if (replay_plan_take_tagged(c->find, m, &d, &entry)) {
        if (position >= c->cap_pos) {
            size_t was = c->cap_pos;
            xgrow((void **)&c->pos_entry, &c->cap_pos, position + 1, sizeof *c->pos_entry);
            for (size_t i = was; i < c->cap_pos; i++)
                c->pos_entry[i] = SIZE_MAX;
        }
        c->pos_entry[position] = entry;
        if (c->s->op == PLAN_DELETE) {
            act = RA_DELETE;
        } else {
            struct error err;
            error_clear(&err);
            act = build_copy(c->s, &d, out, &err) == ST_OK ? RA_SEND : RA_KEEP;
            if (act == RA_KEEP)
                snprintf(why, whylen, "%s", err.msg);
        }
    }
    decoded_free(&d);
    return act;
}

static enum replay_ctl progress_cb(void *vctx, const struct replay_progress *p)
{
    struct run_ctx *c = vctx;
    /* SIGINT, SIGTERM, SIGHUP: cancelled as Esc does (what is in flight is settled). */
    if (term_stop_signal())
        return RC_CANCEL;
    /* The keys of a pass (the table's "pass" scope): Esc and Ctrl-g cancel, p pauses. */
    enum action act = action_for_key_in(term_key(0), "pass");
    if (act == ACT_BACK || act == ACT_CANCEL)
        return RC_CANCEL;
    if (act == ACT_PAUSE)
        c->paused = !c->paused;
    char title[600];
    snprintf(title, sizeof title, "%s %s of %s", op_name(c->s->op), c->s->scope, c->s->queue);
    plan_progress_draw(c->a, title, &c->s->pace, c->s->sendable, p);
    return c->paused ? RC_PAUSE : RC_GO;
}

static void run_pass(struct app *a, struct plan_state *s)
{
    if (a->read_only) {
        app_message(a, true,
                    "read-only: nothing is written (--read-only, DLQX_READ_ONLY or "
                    "read_only=true on the URL)");
        return;
    }
    if (!a->broker) {
        app_message(a, true, "no broker: a snapshot file can be read, not written back");
        return;
    }
    if (!s->sendable) {
        app_message(a, true, "nothing to send: every dead letter of the plan would be kept");
        return;
    }
    struct run_ctx c = {a, s, replay_plan_new(), false, false, NULL, 0, 0};
    for (size_t k = 0; k < s->n; k++) {
        struct message m;
        struct error err;
        if (store_get(a->store, s->entries[k], &m, &err) != ST_OK)
            continue;
        struct decoded d;
        decode_message(&m, clock_now_ms(), &d);
        replay_plan_add_tagged(c.find, &m, &d, s->entries[k]);
        decoded_free(&d);
        message_free(&m);
    }
    int rc = 0;
    struct conn *conn = broker_connect(a->broker, &rc);
    if (!conn) {
        app_message(a, true, "cannot connect to the broker: nothing was sent");
        replay_plan_free(c.find);
        return;
    }
    if (!plan_pending_check(a, conn, s->queue, &s->pending_warned)) {
        conn_close(conn);
        replay_plan_free(c.find);
        return;
    }
    char *path = journal_default_path();
    struct journal *j = NULL;
    struct error err;
    error_clear(&err);
    if (journal_open(path, &j, &err) != ST_OK) {
        app_message(a, true, "%s: nothing was sent", err.msg);
        free(path);
        conn_close(conn);
        replay_plan_free(c.find);
        return;
    }
    struct peek_queue_info info = {QK_UNKNOWN, -1, false};
    app_queue_info(a, s->queue, &info);
    c.removes = info.kind != QK_STREAM;
    struct replay_opts o;
    memset(&o, 0, sizeof o);
    o.queue = s->queue;
    o.kind = info.kind;
    o.delivery_limit = info.delivery_limit;
    o.op = s->op == PLAN_DELETE ? "delete" : restamp_mode_name(s->mode);
    o.expect = replay_plan_size(c.find);
    o.canary_wait_ms = s->canary ? 10000 : 0;
    if (s->op != PLAN_DELETE)
        plan_pace_opts(&s->pace, s->sendable, &o);
    o.journal = j;
    o.select = select_cb;
    o.progress = progress_cb;
    o.outcome = outcome_cb;
    o.ctx = &c;
    enum conn_err kind;
    if (replay_run(conn, &o, &s->rep, &kind, &err) != ST_OK)
        app_message(a, true, "%s: nothing was sent", err.msg);
    else
        s->ran = true;
    if (s->ran && term_stop_signal())
        plan_pass_stopped(a, op_name(s->op), &s->rep, path, replay_plan_size(c.find));
    journal_close(j);
    free(path);
    conn_close(conn);
    replay_plan_free(c.find);
    free(c.pos_entry);
    if (c.gone)
        app_rows_drop_gone(a); /* the list, the groups and the timeline lose them */
    if (s->ran) {
        lines_clear(s);
        const struct replay_report *r = &s->rep;
        add_line(s, UA_TITLE, "%s %s of %s: %s", op_name(s->op), s->scope, s->queue, r->detail);
        add_line(s, r->unknown ? UA_WARN : UA_GOOD,
                 "  done %llu   kept %llu   unknown %llu   not sent %llu   in %.1f s",
                 (unsigned long long)r->done, (unsigned long long)r->kept,
                 (unsigned long long)r->unknown, (unsigned long long)r->not_sent, r->seconds);
        for (size_t i = 0; i < r->n_reasons; i++)
            add_line(s, UA_WARN, "  %llu × %s", (unsigned long long)r->reasons[i].n,
                     r->reasons[i].text);
        if (r->have_after)
            add_line(s, UA_NORMAL, "  %s: %u ready before, %u after", s->queue, r->ready_before,
                     r->ready_after);
        if (r->unknown)
            add_line(s, UA_WARN,
                     "  possible duplicates are named in the journal: dlqx journal "
                     "--pending");
        add_line(s, UA_DIM, "  journal run %s", r->run_id);
        add_line(s, UA_NORMAL, "%s", "");
        if (c.gone == 1)
            add_line(s, UA_NORMAL, "%s",
                     "  the dead letter taken out is no longer listed (the tree marks it)");
        else if (c.gone)
            add_line(s, UA_NORMAL,
                     "  the %zu dead letters taken out are no longer listed (the tree marks "
                     "them)",
                     c.gone);
        add_line(s, UA_ACCENT, "  r takes a fresh snapshot of %s; Esc goes back", s->queue);
        app_message(a, r->kept || r->unknown, "%s: %llu done, %llu kept, %llu unknown",
                    op_name(s->op), (unsigned long long)r->done, (unsigned long long)r->kept,
                    (unsigned long long)r->unknown);
    }
}

/* ---- edits ------------------------------------------------------------------------------ */

static void changes_clear(struct plan_state *s)
{
    for (size_t i = 0; i < s->n_changes; i++)
        env_change_release(&s->changes[i], &s->vals[i]);
    s->n_changes = 0;
}

/* "type=x header.a=b -header.c": each word a change. */
static bool set_changes(struct app *a, struct plan_state *s, const char *text)
{
    changes_clear(s);
    char *copy = xstrdup(text);
    bool ok = true;
    for (char *tok = strtok(copy, " "); tok && ok; tok = strtok(NULL, " ")) {
        if (s->n_changes == PLAN_MAX_CHANGES)
            break;
        struct error err;
        if (env_change_parse(tok, &s->changes[s->n_changes], &s->vals[s->n_changes], &err) !=
            ST_OK) {
            app_message(a, true, "%s", err.msg);
            ok = false;
        } else {
            s->n_changes++;
        }
    }
    free(copy);
    if (!ok)
        changes_clear(s);
    free(s->with_text);
    s->with_text = ok && *text ? xstrdup(text) : NULL;
    return ok;
}

static void edit_body(struct app *a, struct plan_state *s)
{
    if (s->op == PLAN_DELETE || s->op == PLAN_MOVE)
        return;
    struct message m;
    struct error err;
    if (store_get(a->store, s->entries[s->at], &m, &err) != ST_OK) {
        app_message(a, true, "%s", err.msg);
        return;
    }
    const struct bytes *start = s->has_body ? &s->body : &m.body;
    struct bytes edited = {0};
    term_suspend();
    enum status st =
        editor_edit(start, props_string(&m.props, PROP_content_type), NULL, NULL, &edited, &err);
    term_resume();
    message_free(&m);
    if (st != ST_OK) {
        app_message(a, true, "%s", err.msg);
        return;
    }
    bytes_free(&s->body);
    s->body = edited;
    s->has_body = true;
    app_message(a, false, "a new body for the copies (%zu bytes)", edited.len);
}

/* ---- the view --------------------------------------------------------------------------- */

static void open_(struct app *a, struct view *v)
{
    struct plan_state *s = v->state; /* plan_open's */
    if (!s)
        return;
    draw_textf(a->rows_on_screen - 1, 0, a->cols_on_screen, UA_STATUS,
               " planning %zu dead letters…", s->n);
    term_flush();
    rebuild(a, s);
    v->lines = s->n_lines;
}

static void close_(struct app *a, struct view *v)
{
    struct plan_state *s = v->state;
    if (!s)
        return;
    lines_clear(s);
    free(s->lines);
    targets_clear(s);
    changes_clear(s);
    free(s->with_text);
    bytes_free(&s->body);
    free(s->to_exchange);
    free(s->to_routing_key);
    free(s->entries);
    free(s->alt);
    free(s->queue);
    free(s->scope);
    free(s->alt_scope);
    free(s);
    v->state = NULL;
}

static void draw(struct app *a, struct view *v, int top, int height, int width)
{
    struct plan_state *s = v->state;
    if (!s)
        return;
    v->lines = s->n_lines;
    view_scroll_to_cursor(v, (size_t)(height > 0 ? height : 1));
    for (int row = 0; row < height; row++) {
        size_t i = v->top + (size_t)row;
        draw_fill(top + row, 0, width, UA_NORMAL);
        if (i < s->n_lines)
            draw_safe(top + row, 0, width, s->lines[i].text,
                      i == v->cursor ? UA_SELECTED : s->lines[i].attr);
    }
}

static int request(struct app *a, struct view *v, enum action act)
{
    struct plan_state *s = v->state;
    if (!s)
        return HR_UNHANDLED;
    if (s->ran) {
        if (act == ACT_REFRESH) {
            app_pop(a);
            app_refresh(a);
            return HR_HANDLED | HR_REDRAW;
        }
        return view_move(v, act, app_page(a));
    }
    switch (act) {
    case ACT_CONFIRM:
        run_pass(a, s);
        v->lines = s->n_lines;
        v->cursor = v->top = 0;
        return HR_HANDLED | HR_REDRAW;
    case ACT_SEARCH_NEXT:
    case ACT_SEARCH_PREV:
        if (act == ACT_SEARCH_NEXT && s->at + 1 < s->n)
            s->at++;
        else if (act == ACT_SEARCH_PREV && s->at > 0)
            s->at--;
        rebuild(a, s);
        return HR_HANDLED | HR_REDRAW;
    case ACT_WITH: {
        if (s->op == PLAN_DELETE || s->op == PLAN_MOVE) {
            app_message(a, true, "a %s sends the message as it is", op_name(s->op));
            return HR_HANDLED | HR_REDRAW;
        }
        char *t = app_prompt(
            a, "with (type=… header.NAME=… -header.NAME): ", s->with_text ? s->with_text : "");
        if (t && set_changes(a, s, t))
            rebuild(a, s);
        free(t);
        return HR_HANDLED | HR_REDRAW;
    }
    case ACT_EDIT_BODY:
        edit_body(a, s);
        rebuild(a, s);
        return HR_HANDLED | HR_REDRAW;
    case ACT_TARGET: {
        if (s->op == PLAN_DELETE)
            return HR_HANDLED;
        char *t = app_prompt(a,
                             "target EXCHANGE:ROUTING_KEY (:queue for a queue; empty: the "
                             "dialect's own): ",
                             "");
        if (t) {
            free(s->to_exchange);
            free(s->to_routing_key);
            s->to_exchange = s->to_routing_key = NULL;
            char *colon = strchr(t, ':');
            if (*t && !colon) {
                app_message(a, true, "a target is EXCHANGE:ROUTING_KEY");
            } else if (*t) {
                s->to_exchange = xstrndup(t, (size_t)(colon - t));
                s->to_routing_key = xstrdup(colon + 1);
            }
            free(t);
            rebuild(a, s);
        }
        return HR_HANDLED | HR_REDRAW;
    }
    case ACT_REISSUE:
    case ACT_REPLAY:
        if (s->op == PLAN_REPLAY || s->op == PLAN_REISSUE) {
            s->op = s->op == PLAN_REPLAY ? PLAN_REISSUE : PLAN_REPLAY;
            s->mode = s->op == PLAN_REPLAY ? RESTAMP_REPLAY : RESTAMP_REISSUE;
            rebuild(a, s);
        }
        return HR_HANDLED | HR_REDRAW;
    case ACT_SCOPE: {
        if (!s->alt) {
            app_message(a, true, "there is no other set of messages here");
            return HR_HANDLED | HR_REDRAW;
        }
        size_t *e = s->entries, n = s->n;
        char *sc = s->scope;
        s->entries = s->alt, s->n = s->n_alt, s->scope = s->alt_scope;
        s->alt = e, s->n_alt = n, s->alt_scope = sc;
        s->at = 0;
        rebuild(a, s);
        v->cursor = v->top = 0;
        return HR_HANDLED | HR_REDRAW;
    }
    case ACT_CANARY:
        s->canary = !s->canary;
        rebuild(a, s);
        return HR_HANDLED | HR_REDRAW;
    case ACT_RATE: {
        if (s->op == PLAN_DELETE) {
            app_message(a, true, "a delete sends nothing: it has no pace");
            return HR_HANDLED | HR_REDRAW;
        }
        char now[160];
        plan_pace_text(&s->pace, now, sizeof now);
        char *t = app_prompt(a, "pace: RATE copies/s (0: unpaced) [RAMP, e.g. 1,10,100]: ", now);
        if (t && plan_pace_set(a, &s->pace, t))
            rebuild(a, s);
        free(t);
        return HR_HANDLED | HR_REDRAW;
    }
    default:
        return view_move(v, act, app_page(a));
    }
}

static void status(struct app *a, struct view *v, struct strbuf *out)
{
    struct plan_state *s = v->state;
    if (s && s->ran)
        sb_adds(out, "done  r: fresh snapshot  Esc: back");
    else
        sb_addf(out,
                "y: %s  n/N: copy  w: with  b: body  >: target  R: %s  a: scope  "
                "c: canary  P: pace  Esc: nothing is sent",
                s ? op_name(s->op) : "send",
                s && s->op == PLAN_REISSUE ? "replay instead" : "re-issue instead");
}

const struct view_ops view_plan_ops = {
    .name = "plan",
    .which = ACT_NONE,
    .open = open_,
    .close = close_,
    .draw = draw,
    .request = request,
    .status = status,
};

void plan_open(struct app *a, enum plan_op op, const size_t *entries, size_t n, const char *scope,
               const size_t *alt, size_t n_alt, const char *alt_scope)
{
    if (!n || !a->store)
        return;
    if (a->read_only) {
        app_message(a, true, "read-only: dlqx writes nothing here (%s)",
                    a->broker ? "--read-only, DLQX_READ_ONLY or read_only=true on the URL"
                              : "a snapshot file has no broker to write to");
        return;
    }
    /* One pass reads one queue: every entry must come from the same one. */
    struct message m;
    struct error err;
    if (store_get(a->store, entries[0], &m, &err) != ST_OK) {
        app_message(a, true, "%s", err.msg);
        return;
    }
    char *queue = xstrndup((const char *)m.queue.data, m.queue.len);
    message_free(&m);
    for (size_t k = 1; k < n; k++) {
        const struct store_entry *e = store_entry_at(a->store, entries[k]);
        const struct store_entry *e0 = store_entry_at(a->store, entries[0]);
        if (e && e0 && !store_text_eq(a->store, e->queue, e0->queue)) {
            app_message(a, true,
                        "these dead letters come from several queues: a pass reads one "
                        "(filter by queue= first)");
            free(queue);
            return;
        }
    }
    struct plan_state *s = xcalloc(1, sizeof *s);
    s->op = op;
    s->mode = op == PLAN_REISSUE ? RESTAMP_REISSUE
              : op == PLAN_MOVE  ? RESTAMP_MOVE
                                 : RESTAMP_REPLAY;
    s->queue = queue;
    s->entries = xmalloc(n * sizeof *entries);
    memcpy(s->entries, entries, n * sizeof *entries);
    s->n = n;
    s->scope = xstrdup(scope);
    plan_pace_init(&s->pace);
    if (alt && n_alt > 1) {
        s->alt = xmalloc(n_alt * sizeof *alt);
        memcpy(s->alt, alt, n_alt * sizeof *alt);
        s->n_alt = n_alt;
        s->alt_scope = xstrdup(alt_scope);
    }
    if (op == PLAN_MOVE) {
        /* The parking queue beside the DLQ: orders.dlq → orders.parked. */
        size_t ql = strlen(queue);
        s->to_exchange = xstrdup("");
        s->to_routing_key = ql > 4 && strcmp(queue + ql - 4, ".dlq") == 0
                                ? xasprintf("%.*s.parked", (int)(ql - 4), queue)
                                : xasprintf("%s.parked", queue);
    }
    app_push_with(a, &view_plan_ops, SIZE_MAX, s);
}

int plan_request(struct app *a, enum action act)
{
    enum plan_op op = act == ACT_REISSUE  ? PLAN_REISSUE
                      : act == ACT_MOVE   ? PLAN_MOVE
                      : act == ACT_DELETE ? PLAN_DELETE
                                          : PLAN_REPLAY;
    size_t i = app_selected_message(a);
    if (i == SIZE_MAX) {
        app_message(a, true, "no dead letter under the cursor");
        return HR_HANDLED | HR_REDRAW;
    }
    char all[64];
    snprintf(all, sizeof all, "the %zu shown", a->n_rows);
    plan_open(a, op, &i, 1, "this message", a->rows, a->n_rows, all);
    return HR_HANDLED | HR_REDRAW;
}
