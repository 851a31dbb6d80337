/*
 * queues: the dead-letter queues — from the management API (type, depth, consumers, where
 * they come from, how fast they grow), or the queues named on the command line (passive
 * declare), or, for snapshot files, the queues the messages were read from. Enter opens a
 * queue's dead letters (on a live broker: a snapshot, listed as it arrives); Space marks
 * queues, and Enter then opens every marked one as one set (as `dlqx Q1 Q2` does), so that
 * a causal chain across queues is one tree.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker_opts.h"
#include "app.h"
#include "dlqfind.h"
#include "filter.h"
#include "mgmt.h"

struct qrow {
    char *name;
    char *type;
    char *sources;
    int64_t ready, unacked, consumers;
    double in_rate;    /* management API publish rate, -1 unknown */
    double growth;     /* messages/s between the last two looks, NAN unknown */
    int64_t oldest_ms; /* snapshot files: the oldest first-seen */
    size_t count;      /* snapshot files: messages in the store */
    bool marked;       /* Space: opened together with the other marked ones */
};

struct queues_state {
    struct qrow *rows;
    size_t n;
    double looked_at; /* monotonic seconds of the last listing */
    char mode[256];
};

static void free_rows(struct queues_state *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->rows[i].name);
        free(s->rows[i].type);
        free(s->rows[i].sources);
    }
    free(s->rows);
    s->rows = NULL;
    s->n = 0;
}

static struct qrow *add_row(struct queues_state *s, size_t *cap)
{
    xgrow((void **)&s->rows, cap, s->n + 1, sizeof *s->rows);
    struct qrow *r = &s->rows[s->n++];
    memset(r, 0, sizeof *r);
    r->in_rate = -1;
    r->growth = 0.0 / 0.0;
    r->ready = r->unacked = r->consumers = -1;
    return r;
}

static const struct qrow *find_old(const struct qrow *old, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(old[i].name, name) == 0)
            return &old[i];
    return NULL;
}

static void list_from_store(struct app *a, struct queues_state *s)
{
    size_t cap = 0;
    size_t n = a->store ? store_count(a->store) : 0;
    char buf[STORE_TEXT_MAX];
    for (size_t i = 0; i < n; i++) {
        const struct store_entry *e = store_entry_at(a->store, i);
        store_text(a->store, e->queue, buf);
        struct qrow *r = NULL;
        for (size_t k = 0; k < s->n; k++)
            if (strcmp(s->rows[k].name, buf) == 0)
                r = &s->rows[k];
        if (!r) {
            r = add_row(s, &cap);
            r->name = xstrdup(buf);
            r->oldest_ms = e->first_seen_ms;
        }
        r->count++;
        if (e->first_seen_ms < r->oldest_ms)
            r->oldest_ms = e->first_seen_ms;
    }
    snprintf(s->mode, sizeof s->mode, "queues in the snapshot");
}

static void list_from_broker(struct app *a, struct queues_state *s, const struct qrow *old,
                             size_t n_old, double dt)
{
    size_t cap = 0;
    struct error err;
    error_clear(&err);
    if (a->mgmt) {
        struct mgmt_queue *qs = NULL;
        struct mgmt_exchange *xs = NULL;
        struct mgmt_binding *bs = NULL;
        size_t nq = 0, nx = 0, nb = 0;
        char *vhost = NULL;
        conn_url_parts(a->broker->urls[0], NULL, &vhost, NULL);
        if (mgmt_list_queues(a->mgmt, vhost, &qs, &nq, &err) == ST_OK &&
            mgmt_list_exchanges(a->mgmt, vhost, &xs, &nx, &err) == ST_OK &&
            mgmt_list_bindings(a->mgmt, vhost, &bs, &nb, &err) == ST_OK) {
            struct dlq_input in = {qs, nq, xs, nx, bs, nb};
            struct dlq_report rep;
            if (dlqfind_run(&in, &rep, &err) == ST_OK) {
                for (size_t i = 0; i < rep.n; i++) {
                    const struct dlq_entry *e = &rep.entries[i];
                    if (e->role != DLQ_ROLE_DLQ)
                        continue;
                    struct qrow *r = add_row(s, &cap);
                    r->name = xstrdup(e->queue->name);
                    r->type = xstrdup(e->queue->type ? e->queue->type : "?");
                    r->ready = e->queue->ready;
                    r->unacked = e->queue->unacked;
                    r->consumers = e->queue->consumers;
                    r->in_rate = e->queue->publish_rate;
                    struct strbuf src;
                    sb_init(&src);
                    for (size_t k = 0; k < e->n_sources; k++) {
                        if (k)
                            sb_adds(&src, ", ");
                        sb_adds(&src, qs[e->sources[k].queue].name);
                    }
                    r->sources = sb_detach(&src, NULL);
                }
                dlq_report_free(&rep);
                snprintf(s->mode, sizeof s->mode, "dead-letter queues (management API %s)",
                         mgmt_display_url(a->mgmt));
            }
        } else {
            app_message(a, true, "management API: %s", err.msg);
        }
        mgmt_queues_free(&qs, &nq);
        mgmt_exchanges_free(&xs, &nx);
        mgmt_bindings_free(&bs, &nb);
        free(vhost);
    }
    if (!s->n && a->n_queues) {
        for (int i = 0; i < a->n_queues; i++) {
            struct qrow *r = add_row(s, &cap);
            r->name = xstrdup(a->queues[i]);
        }
        snprintf(s->mode, sizeof s->mode, "the queues named (no management API)");
    }
    /* Exact depth and consumers by passive declare, and growth since the last look. */
    int rc;
    struct conn *c = broker_connect(a->broker, &rc);
    for (size_t i = 0; c && i < s->n && conn_alive(c); i++) {
        uint32_t ready, consumers;
        enum conn_err kind;
        if (conn_queue_inspect(c, 1, s->rows[i].name, &ready, &consumers, &kind, &err) == ST_OK) {
            s->rows[i].ready = ready;
            s->rows[i].consumers = consumers;
        }
        const struct qrow *o = find_old(old, n_old, s->rows[i].name);
        if (o && o->ready >= 0 && s->rows[i].ready >= 0 && dt > 0.5)
            s->rows[i].growth = (double)(s->rows[i].ready - o->ready) / dt;
    }
    if (c)
        conn_close(c);
}

static void relist(struct app *a, struct view *v)
{
    struct queues_state *s = v->state;
    struct qrow *old = s->rows;
    size_t n_old = s->n;
    s->rows = NULL;
    s->n = 0;
    double now = clock_mono_s(), dt = s->looked_at ? now - s->looked_at : 0;
    if (app_source_is_broker(a))
        list_from_broker(a, s, old, n_old, dt);
    else
        list_from_store(a, s);
    s->looked_at = now;
    for (size_t i = 0; i < s->n; i++) {
        const struct qrow *o = find_old(old, n_old, s->rows[i].name);
        s->rows[i].marked = o && o->marked;
    }
    struct queues_state tmp = {old, n_old, 0, ""};
    free_rows(&tmp);
    v->lines = s->n;
    if (v->cursor >= s->n)
        v->cursor = s->n ? s->n - 1 : 0;
}

static void open_(struct app *a, struct view *v, void *with)
{
    v->state = xcalloc(1, sizeof(struct queues_state));
    relist(a, v);
}

static void close_(struct app *a, struct view *v)
{
    free_rows(v->state);
    free(v->state);
    v->state = NULL;
}

static void fmt_count(char *buf, size_t cap, int64_t v)
{
    if (v < 0)
        snprintf(buf, cap, "?");
    else
        snprintf(buf, cap, "%lld", (long long)v);
}

static void draw(struct app *a, struct view *v, int top, int height, int width)
{
    struct queues_state *s = v->state;
    v->lines = s->n;
    v->rows_y = top + 1;
    view_scroll_to_cursor(v, (size_t)(height > 2 ? height - 2 : 1));
    draw_fill(top, 0, width, UA_HEADER);
    bool files = !app_source_is_broker(a);
    if (files)
        draw_safe(top, 0, width, "  QUEUE                         MESSAGES  OLDEST", UA_HEADER);
    else
        draw_safe(top, 0, width,
                  "  QUEUE                         TYPE     READY    UNACKED  CONS  IN/S    "
                  "GROWTH/S  SOURCE",
                  UA_HEADER);
    if (!s->n) {
        draw_safe(top + 2, 2, width - 4,
                  files ? "no messages" : "no dead-letter queue found (r to look again)", UA_DIM);
    }
    for (int row = 0; row < height - 2; row++) {
        size_t i = v->top + (size_t)row;
        if (i >= s->n)
            break;
        const struct qrow *r = &s->rows[i];
        int y = top + 1 + row;
        enum ui_attr at = i == v->cursor ? UA_SELECTED : UA_NORMAL;
        if (i == v->cursor)
            draw_fill(y, 0, width, UA_SELECTED);
        if (r->marked)
            draw_safe(y, 0, 2, "*", at);
        draw_text(y, 2, 28, r->name, strlen(r->name), at);
        char b1[32], b2[32], b3[32], b4[32], b5[32];
        if (files) {
            char age[32];
            duration_format(((double)a->now_ms - (double)r->oldest_ms) / 1000.0, age);
            snprintf(b1, sizeof b1, "%zu", r->count);
            draw_safe(y, 32, 8, b1, at);
            draw_safe(y, 42, 12, age, at);
            continue;
        }
        fmt_count(b1, sizeof b1, r->ready);
        fmt_count(b2, sizeof b2, r->unacked);
        fmt_count(b3, sizeof b3, r->consumers);
        /* The API has no publish stats for dead-lettering: a DLQ that fills shows 0 or
         * nothing there, so its growth between two looks (r) stands in, marked "~". */
        if (r->in_rate > 0)
            snprintf(b4, sizeof b4, "%.1f", r->in_rate);
        else if (r->growth == r->growth && r->growth >= 0)
            snprintf(b4, sizeof b4, "~%.1f", r->growth);
        else if (r->in_rate == 0)
            snprintf(b4, sizeof b4, "0.0");
        else
            snprintf(b4, sizeof b4, "-");
        if (r->growth == r->growth)
            snprintf(b5, sizeof b5, "%+.1f", r->growth);
        else
            snprintf(b5, sizeof b5, "-");
        draw_text(y, 32, 7, r->type ? r->type : "?", r->type ? strlen(r->type) : 1, at);
        draw_safe(y, 41, 7, b1, at);
        draw_safe(y, 50, 7, b2, at);
        draw_safe(y, 59, 4, b3, at);
        draw_safe(y, 65, 6, b4, at);
        draw_safe(y, 73, 8, b5, at == UA_SELECTED ? at : r->growth > 0 ? UA_WARN : at);
        if (r->sources)
            draw_text(y, 83, width - 83, r->sources, strlen(r->sources), at);
    }
    draw_text(top + height - 1, 0, width, s->mode, strlen(s->mode), UA_DIM);
}

static int request(struct app *a, struct view *v, enum action act)
{
    struct queues_state *s = v->state;
    switch (act) {
    case ACT_MARK:
        if (v->cursor >= s->n)
            return HR_HANDLED;
        s->rows[v->cursor].marked = !s->rows[v->cursor].marked;
        if (v->cursor + 1 < s->n)
            v->cursor++;
        return HR_HANDLED | HR_REDRAW;
    case ACT_ENTER: {
        if (v->cursor >= s->n)
            return HR_HANDLED;
        /* The marked queues, or the one under the cursor when none is marked. */
        char **q = xcalloc(s->n, sizeof *q);
        int k = 0;
        for (size_t i = 0; i < s->n; i++)
            if (s->rows[i].marked)
                q[k++] = s->rows[i].name;
        if (!k)
            q[k++] = s->rows[v->cursor].name;
        if (app_source_is_broker(a)) {
            /* The peek goes on a slice at a time, the list filling as it comes. */
            bool ok = source_peek_open(a, q, k);
            /* On top of the queues, so that q comes back here; a queue gone since the
             * listing leaves the message line saying so, and the queues view. */
            if (ok || (a->store && store_count(a->store))) {
                /* Opened: the next Enter is about the queue under the cursor again. */
                for (size_t i = 0; i < s->n; i++)
                    s->rows[i].marked = false;
                app_push(a, &view_messages_ops, SIZE_MAX);
            } else {
                relist(a, v);
            }
        } else {
            struct strbuf expr;
            sb_init(&expr);
            for (int i = 0; i < k; i++) {
                sb_adds(&expr, i ? " OR queue=" : "queue=");
                filter_quote(q[i], strlen(q[i]), true, &expr);
            }
            if (app_set_filter(a, expr.buf))
                app_push(a, &view_messages_ops, SIZE_MAX);
            sb_free(&expr);
        }
        free(q);
        return HR_HANDLED | HR_REDRAW;
    }
    case ACT_REFRESH:
        relist(a, v);
        return HR_HANDLED | HR_REDRAW;
    default:
        return view_move(v, act, app_page(a));
    }
}

static void reload(struct app *a, struct view *v)
{
    if (!app_source_is_broker(a))
        relist(a, v);
}

static void status(struct app *a, struct view *v, struct strbuf *out)
{
    struct queues_state *s = v->state;
    size_t marked = 0;
    for (size_t i = 0; i < s->n; i++)
        marked += s->rows[i].marked;
    if (marked)
        sb_addf(out, "%zu queues, %zu marked  Space mark  Enter open the marked  r refresh", s->n,
                marked);
    else
        sb_addf(out, "%zu queues  Space mark  Enter open  r refresh", s->n);
}

const struct view_ops view_queues_ops = {
    .name = "queues",
    .which = ACT_VIEW_QUEUES,
    .open = open_,
    .close = close_,
    .draw = draw,
    .request = request,
    .reload = reload,
    .status = status,
};

void app_queue_info(struct app *a, const char *queue, struct peek_queue_info *info)
{
    if (a->broker && a->mgmt)
        broker_queue_info(a->broker, queue, info, false, false, false);
}
