/*
 * plan: what a replay, re-issue, move or delete will do, shown before anything is sent —
 * the side-by-side diff of each copy (n/N step through them), its target and whether it
 * routes, how many will be sent and what will be kept and why — then, on `y`, the pass itself
 * with a progress bar (p pauses, Esc cancels: what is in flight is settled, the rest stays),
 * and its summary. Edits (`w` fields, `b` the body in $EDITOR, `>` the target) make a new
 * plan; the dead letters are never touched until the broker has their copies. The lines and
 * the edits are the model's (plan_model.c, no curses, unit-tested); this file is the view:
 * the keys, the broker (whether a target routes, the pass) and $EDITOR.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "broker_opts.h"
#include "decode.h"
#include "editor.h"
#include "journal.h"
#include "replay_setup.h"
#include "plan.h"
#include "plan_model.h"
#include "replay.h"
#include "restamp.h"
#include "sanitize.h"
#include "sha256.h"
#include "term.h"
#include "util.h"

/* Whether each target routes: a passive declare on the broker, nothing published. */
static void check_routes(struct plan_state *s, void *ctx)
{
    struct app *a = ctx;
    if (!a->broker)
        return;
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

static void rebuild(struct app *a, struct plan_state *s)
{
    plan_model_build(s, a->store, app_san_flags(a), check_routes, a);
}

/* ---- the pass --------------------------------------------------------------------------- */

struct run_ctx {
    struct app *a;
    struct plan_state *s;
    struct replay_plan *find;  /* the plan's dead letters, each tagged with its store index */
    struct replay_plan *taken; /* those the pass took, tagged: a new attempt puts back some */
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

/* Which row the dead letter at position (in the pass's current attempt) is. */
static void pos_entry_set(struct run_ctx *c, uint64_t position, size_t entry)
{
    if (position >= c->cap_pos) {
        size_t was = c->cap_pos;
        xgrow((void **)&c->pos_entry, &c->cap_pos, position + 1, sizeof *c->pos_entry);
        for (size_t i = was; i < c->cap_pos; i++)
            c->pos_entry[i] = SIZE_MAX;
    }
    c->pos_entry[position] = entry;
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
        replay_plan_add_tagged(c->taken, m, &d, entry);
        pos_entry_set(c, position, entry);
        if (c->s->op == PLAN_DELETE) {
            act = RA_DELETE;
        } else {
            struct error err;
            error_clear(&err);
            act = plan_model_copy(c->s, &d, out, &err) == ST_OK ? RA_SEND : RA_KEEP;
            if (act == RA_KEEP)
                snprintf(why, whylen, "%s", err.msg);
        }
    }
    decoded_free(&d);
    return act;
}

/* A new attempt after a lost node: a dead letter the attempt before took but did not remove
 * (its copy's confirm was lost: pending in the journal) is looked for again, with its row. */
static void again_cb(void *vctx, const struct bytes *old_id, const char sha256_hex[65])
{
    struct run_ctx *c = vctx;
    size_t entry = SIZE_MAX;
    if (replay_plan_take_id_tagged(c->taken, old_id, sha256_hex, &entry))
        replay_plan_add_id_tagged(c->find, old_id, sha256_hex, entry);
}

/* A dead letter the lost attempt took and whose copy was confirmed, given back by the queue:
 * the pass removes it (its outcome comes at position), so its row goes as the others do. */
static void confirmed_again_cb(void *vctx, const struct bytes *old_id, const char sha256_hex[65],
                               uint64_t position)
{
    struct run_ctx *c = vctx;
    size_t entry = SIZE_MAX;
    if (!replay_plan_take_id_tagged(c->taken, old_id, sha256_hex, &entry))
        entry = SIZE_MAX;
    pos_entry_set(c, position, entry);
}

/* The pass is over (plan_pass.c ran it as a job): its summary replaces the plan. */
static void pass_ended(struct app *a, void *ctx, const struct replay_report *r,
                       const char *journal_path)
{
    struct run_ctx *c = ctx;
    struct plan_state *s = c->s;
    s->rep = *r;
    s->ran = true;
    if (term_stop_signal())
        plan_pass_stopped(a, plan_op_name(s->op), &s->rep, journal_path, replay_plan_size(c->find));
    replay_plan_free(c->find);
    replay_plan_free(c->taken);
    free(c->pos_entry);
    if (c->gone)
        app_rows_drop_gone(a); /* the list, the groups and the timeline lose them */
    plan_model_summary(s, c->gone);
    app_message(a, r->kept || r->unknown, "%s: %llu done, %llu kept, %llu unknown",
                plan_op_name(s->op), (unsigned long long)r->done, (unsigned long long)r->kept,
                (unsigned long long)r->unknown);
    free(c);
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
    if (app_source_busy(a)) {
        /* The snapshot's peek holds messages of the queue until it ends: a pass now would not
         * find them. */
        app_message(a, true,
                    "nothing sent: the snapshot is still being read (dlqx holds its messages "
                    "until it is done); y again then");
        return;
    }
    struct run_ctx *c = xcalloc(1, sizeof *c);
    *c = (struct run_ctx){a, s, replay_plan_new(), replay_plan_new(), false, NULL, 0, 0};
    for (size_t k = 0; k < s->n; k++) {
        struct message m;
        struct error err;
        if (store_get(a->store, s->entries[k], &m, &err) != ST_OK)
            continue;
        struct decoded d;
        decode_message(&m, clock_now_ms(), &d);
        replay_plan_add_tagged(c->find, &m, &d, s->entries[k]);
        decoded_free(&d);
        message_free(&m);
    }
    struct peek_queue_info info = {QK_UNKNOWN, -1, false};
    app_queue_info(a, s->queue, &info);
    struct replay_setup rs;
    struct replay_setup_args ra = {.broker = a->broker,
                                   .queue = s->queue,
                                   .op =
                                       s->op == PLAN_DELETE ? "delete" : restamp_mode_name(s->mode),
                                   .kind = info.kind,
                                   .delivery_limit = info.delivery_limit,
                                   .expect = replay_plan_size(c->find)};
    struct error err;
    error_clear(&err);
    if (replay_setup_open(&rs, &ra, &err) != ST_OK ||
        !plan_pending_check(a, rs.conn, s->queue, &s->pending_warned)) {
        if (err.msg[0])
            app_message(a, true, "%s: nothing was sent", err.msg);
        replay_setup_close(&rs);
        replay_plan_free(c->find);
        replay_plan_free(c->taken);
        free(c);
        return;
    }
    c->removes = info.kind != QK_STREAM;
    struct replay_opts o = rs.opts;
    o.canary_wait_ms = s->canary ? 10000 : 0;
    if (s->op != PLAN_DELETE)
        plan_pace_opts(&s->pace, s->sendable, &o);
    o.select = select_cb;
    o.outcome = outcome_cb;
    o.again = again_cb;
    o.confirmed_again = confirmed_again_cb;
    o.ctx = c;
    char title[600];
    snprintf(title, sizeof title, "%s %s of %s", plan_op_name(s->op), s->scope, s->queue);
    /* From here the pass is a job: the loop steps it between keys, and pass_ended sums it up. */
    if (!plan_pass_begin(a, &rs, &o, title, &s->pace, s->sendable, pass_ended, c, &err)) {
        app_message(a, true, "%s: nothing was sent", err.msg);
        replay_setup_close(&rs);
        replay_plan_free(c->find);
        replay_plan_free(c->taken);
        free(c);
    }
}

/* ---- edits ------------------------------------------------------------------------------ */

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

static void open_(struct app *a, struct view *v, void *with)
{
    struct plan_state *s = with; /* plan_open's, the view's from here */
    v->state = s;
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
    /* A pass still under way ends first (cancelled: what is in flight is settled). */
    plan_pass_cancel(a);
    plan_model_free(s);
    v->state = NULL;
}

static void draw(struct app *a, struct view *v, int top, int height, int width)
{
    struct plan_state *s = v->state;
    if (!s)
        return;
    if (plan_pass_running(a)) {
        plan_pass_draw(a);
        return;
    }
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
    if (plan_pass_running(a)) {
        /* A pass under way (the table's "pass" scope): p or Space pauses it or goes on, Esc
         * or Ctrl-g cancels it (what is in flight is settled), nothing else acts. */
        if (act == ACT_PAUSE)
            plan_pass_pause(a);
        else if (act == ACT_BACK || act == ACT_CANCEL)
            plan_pass_cancel(a);
        return HR_HANDLED | HR_REDRAW;
    }
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
            app_message(a, true, "a %s sends the message as it is", plan_op_name(s->op));
            return HR_HANDLED | HR_REDRAW;
        }
        char *t = app_prompt(
            a, "with (type=… header.NAME=… -header.NAME): ", s->with_text ? s->with_text : "");
        struct error err;
        error_clear(&err);
        if (t && plan_model_set_changes(s, t, &err))
            rebuild(a, s);
        else if (t)
            app_message(a, true, "%s", err.msg);
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
            struct error err;
            error_clear(&err);
            if (!plan_model_set_target(s, t, &err))
                app_message(a, true, "%s", err.msg);
            free(t);
            rebuild(a, s);
        }
        return HR_HANDLED | HR_REDRAW;
    }
    case ACT_REISSUE:
    case ACT_REPLAY:
        if (plan_model_toggle_reissue(s))
            rebuild(a, s);
        return HR_HANDLED | HR_REDRAW;
    case ACT_SCOPE: {
        if (!plan_model_swap_scope(s)) {
            app_message(a, true, "there is no other set of messages here");
            return HR_HANDLED | HR_REDRAW;
        }
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
                s ? plan_op_name(s->op) : "send",
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
    struct plan_state *s = plan_model_new(op, queue, entries, n, scope, alt, n_alt, alt_scope);
    free(queue);
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
