/*
 * queues: the dead-letter queues — from the management API (type, depth, consumers, where
 * they come from, how fast they grow, where they live: the leader or home node and which
 * members are online, with the warnings of src/broker/qhealth.h), or the queues named on the
 * command line (passive declare), or, for snapshot files, the queues the messages were read
 * from. Enter opens a queue's dead letters (on a live broker: a snapshot, listed as it
 * arrives); Space marks queues, and Enter then opens every marked one as one set (as
 * `dlqx Q1 Q2` does), so that a causal chain across queues is one tree; they are read side by
 * side, a connection and a peek each (source_peek.c).
 *
 * With the management API the list refreshes itself every --refresh seconds (5 by default)
 * and on r: a job (JOB_QUEUES) steps a listing through libcurl's multi interface
 * (src/broker/mgmt_fetch.h) a few milliseconds at a time, so a slow or hung management
 * listener never holds a key. A queue growing since the last look (its depth up, or a rate of
 * publishes or of depth above zero) is marked; when the API stops answering, the last
 * listing stays on screen marked stale with its age, never replaced by zeros.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker_opts.h"
#include "app.h"
#include "dlqfind.h"
#include "filter.h"
#include "mgmt.h"
#include "mgmt_fetch.h"
#include "qhealth.h"
#include "sanitize.h"

/* Each request of a refresh gives up after this long (a hung listener shows as stale). */
#define QUEUES_POLL_TIMEOUT_MS 10000L

struct qrow {
    char *name;
    char *type;
    char *sources;
    char *where;   /* the leader or home node (sanitized); NULL unknown */
    char *members; /* "2/3 online", "-" */
    char *warning; /* the short form of the first placement warning; NULL none */
    char *why;     /* every placement warning in full, "; "-joined; NULL none */
    unsigned warn; /* QH_* */
    int64_t ready, unacked, consumers;
    double in_rate;    /* management API publish rate, -1 unknown */
    double growth;     /* messages/s: the API's depth rate, else between two looks; NAN */
    bool growing;      /* depth up since the last look, or a rate above zero */
    int64_t oldest_ms; /* snapshot files: the oldest first-seen */
    size_t count;      /* snapshot files: messages in the store */
    bool marked;       /* Space: opened together with the other marked ones */
};

struct queues_state {
    struct qrow *rows;
    size_t n;
    double looked_at; /* monotonic seconds of the last listing (0: none yet) */
    double asked_at;  /* when the refresh under way, or the last one, began */
    bool polling;     /* a refresh job is under way */
    bool listed;      /* a listing from the management API was installed */
    bool stale;       /* the last refresh failed: the rows are those of looked_at */
    char failure[512];
    char mode[256];
};

static void free_rows(struct qrow *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(rows[i].name);
        free(rows[i].type);
        free(rows[i].sources);
        free(rows[i].where);
        free(rows[i].members);
        free(rows[i].warning);
        free(rows[i].why);
    }
    free(rows);
}

static struct qrow *add_row(struct queues_state *s, size_t *cap)
{
    xgrow((void **)&s->rows, cap, s->n + 1, sizeof *s->rows);
    struct qrow *r = &s->rows[s->n++];
    memset(r, 0, sizeof *r);
    r->in_rate = -1;
    r->growth = (double)NAN; /* NAN is a float: clang -Wdouble-promotion */
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

/* Replaces the rows (old, n_old: the rows before), keeping the marks and the cursor on the
 * queue it was on: a refresh may reorder the list under the user. */
static void install(struct view *v, struct qrow *old, size_t n_old)
{
    struct queues_state *s = v->state;
    const char *under = v->cursor < n_old ? old[v->cursor].name : NULL;
    for (size_t i = 0; i < s->n; i++) {
        const struct qrow *o = find_old(old, n_old, s->rows[i].name);
        s->rows[i].marked = o && o->marked;
        if (under && strcmp(s->rows[i].name, under) == 0)
            v->cursor = i;
    }
    free_rows(old, n_old);
    v->lines = s->n;
    if (v->cursor >= s->n)
        v->cursor = s->n ? s->n - 1 : 0;
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

/* The short form of a warning, for the row. */
static const char *warn_short(unsigned bit)
{
    switch (bit) {
    case QH_UNAVAILABLE:
        return "UNAVAILABLE";
    case QH_BELOW_QUORUM:
        return "BELOW QUORUM";
    case QH_MEMBERS_DOWN:
        return "member offline";
    case QH_SINGLE_NODE:
        return "one node";
    default:
        return "deprecated policy";
    }
}

/* Where the queue lives and what is wrong with that. */
static void placement(struct qrow *r, const struct mgmt_queue *q, const struct qh_cluster *c)
{
    struct qhealth h;
    qhealth_eval(q, c, &h);
    struct strbuf sb;
    sb_init(&sb);
    if (h.where)
        sanitize_fit(&sb, h.where, strlen(h.where), 60, 0);
    r->where = h.where ? sb_detach(&sb, NULL) : NULL;
    qhealth_members(&h, &sb);
    r->members = sb_detach(&sb, NULL);
    r->warn = h.warn;
    for (unsigned bit = 1; bit && bit <= QH_WARN_LAST; bit <<= 1) {
        if (!(h.warn & bit))
            continue;
        if (!r->warning) {
            r->warning = xstrdup(warn_short(bit));
            if (bit == QH_UNAVAILABLE && h.down_node) {
                free(r->warning);
                struct strbuf w;
                sb_init(&w);
                sb_adds(&w, "UNAVAILABLE: ");
                sanitize_fit(&w, h.down_node, strlen(h.down_node), 40, 0);
                sb_adds(&w, " down");
                r->warning = sb_detach(&w, NULL);
            }
        }
        if (sb.len)
            sb_adds(&sb, "; ");
        qhealth_describe(q, &h, bit, &sb);
    }
    r->why = sb.len ? sb_detach(&sb, NULL) : NULL;
    sb_free(&sb);
    if (!qhealth_depth_known(&h)) /* never shown as empty */
        r->ready = r->unacked = -1;
}

/* Whether the queue was named on the command line (listed whatever its role). */
static bool named(const struct app *a, const char *name)
{
    for (int i = 0; i < a->n_queues; i++)
        if (strcmp(a->queues[i], name) == 0)
            return true;
    return false;
}

/* The rows of a listing: its DLQs and the queues named, compared with the rows of the last look (dt
 * s ago). */
static void rows_from_listing(struct app *a, struct queues_state *s, const struct mgmt_listing *li,
                              const struct qrow *old, size_t n_old, double dt)
{
    size_t cap = 0;
    struct error err;
    struct dlq_input in = {li->queues, li->nq, li->exchanges, li->nx, li->bindings, li->nb};
    struct dlq_report rep;
    if (dlqfind_run(&in, &rep, &err) != ST_OK) {
        app_message(a, true, "management API: %s", err.msg);
        return;
    }
    struct qh_cluster c = {li->nodes, li->nn, li->nodes_known};
    for (size_t i = 0; i < rep.n; i++) {
        const struct dlq_entry *e = &rep.entries[i];
        if (e->role != DLQ_ROLE_DLQ && !named(a, e->queue->name))
            continue;
        const struct mgmt_queue *q = e->queue;
        struct qrow *r = add_row(s, &cap);
        r->name = xstrdup(q->name);
        r->type = xstrdup(q->type ? q->type : "?");
        r->ready = q->ready;
        r->unacked = q->unacked;
        r->consumers = q->consumers;
        r->in_rate = q->publish_rate;
        placement(r, q, &c);
        const struct qrow *o = find_old(old, n_old, r->name);
        bool rose = o && o->ready >= 0 && r->ready > o->ready;
        if (!isnan(q->depth_rate))
            r->growth = q->depth_rate;
        else if (o && o->ready >= 0 && r->ready >= 0 && dt > 0.5)
            r->growth = (double)(r->ready - o->ready) / dt;
        r->growing = rose || r->in_rate > 0 || (!isnan(r->growth) && r->growth > 0);
        struct strbuf src;
        sb_init(&src);
        for (size_t k = 0; k < e->n_sources; k++) {
            if (k)
                sb_adds(&src, ", ");
            sb_adds(&src, li->queues[e->sources[k].queue].name);
        }
        r->sources = sb_detach(&src, NULL);
    }
    dlq_report_free(&rep);
}

/* --- the refresh: a job stepping a listing of the management API --------------------- */

struct poll {
    struct mgmt_fetch *f;
    struct view *v;
    enum mgmt_fetch_rc rc;
    struct error err;
};

static enum job_rc poll_step(struct app *a, struct job *j, double until)
{
    struct poll *p = j->state;
    (void)a;
    do {
        /* 3 ms of waiting on the sockets at most, then the keys are looked at again. */
        p->rc = mgmt_fetch_step(p->f, 3, &p->err);
        j->done = (uint64_t)mgmt_fetch_requests(p->f);
        if (p->rc != MGMT_FETCH_MORE)
            return JOB_DONE;
    } while (!job_yield(until));
    return JOB_MORE;
}

static void poll_describe(struct app *a, const struct job *j, struct strbuf *out)
{
    const struct poll *p = j->state;
    sb_addf(out, "refreshing the queues from the management API at %s", mgmt_display_url(a->mgmt));
    double waited = clock_mono_s() - j->started;
    if (waited >= 2)
        sb_addf(out, " (no answer for %.0f s)", waited);
    (void)p;
}

static void poll_end(struct app *a, struct job *j, bool cancelled)
{
    struct poll *p = j->state;
    struct queues_state *s = p->v->state;
    s->polling = false;
    if (!cancelled && p->f)
        mgmt_fetch_adopt(a->mgmt, p->f);
    if (!cancelled && p->rc == MGMT_FETCH_DONE) {
        struct mgmt_listing li;
        mgmt_fetch_take(p->f, &li);
        struct qrow *old = s->rows;
        size_t n_old = s->n;
        double now = clock_mono_s();
        s->rows = NULL;
        s->n = 0;
        rows_from_listing(a, s, &li, old, n_old, s->looked_at ? now - s->looked_at : 0);
        mgmt_listing_free(&li);
        s->looked_at = now;
        s->listed = true;
        s->stale = false;
        install(p->v, old, n_old);
    } else if (!cancelled) {
        s->stale = true;
        snprintf(s->failure, sizeof s->failure, "%s", p->err.msg);
        /* The first listing's failure on the message line too; later ones only make the
         * rows stale (the bottom line of the view says so), every few seconds. */
        if (!s->listed)
            app_message(a, true, "management API: %s", p->err.msg);
    } else {
        s->stale = s->listed;
        snprintf(s->failure, sizeof s->failure, "the refresh was cancelled");
    }
    mgmt_fetch_free(&p->f);
    free(p);
    j->state = NULL;
}

static const struct job_ops poll_ops = {poll_step, poll_describe, poll_end};

/* Starts a refresh unless one is under way. */
static void poll_start(struct app *a, struct view *v)
{
    struct queues_state *s = v->state;
    if (s->polling || !a->mgmt)
        return;
    char *vhost = NULL;
    conn_url_parts(a->broker->urls[0], NULL, &vhost, NULL);
    struct poll *p = xcalloc(1, sizeof *p);
    p->f = mgmt_fetch_start(a->mgmt, vhost ? vhost : "/", QUEUES_POLL_TIMEOUT_MS);
    p->v = v;
    free(vhost);
    s->polling = true;
    s->asked_at = clock_mono_s();
    snprintf(s->mode, sizeof s->mode, "dead-letter queues (management API %s)",
             mgmt_display_url(a->mgmt));
    job_start(a, JOB_QUEUES, &poll_ops, p);
}

/* Without the management API: the queues named, their depth by passive declare (AMQP). */
static void list_named(struct app *a, struct view *v)
{
    struct queues_state *s = v->state;
    struct qrow *old = s->rows;
    size_t n_old = s->n, cap = 0;
    double now = clock_mono_s(), dt = s->looked_at ? now - s->looked_at : 0;
    s->rows = NULL;
    s->n = 0;
    for (int i = 0; i < a->n_queues; i++)
        add_row(s, &cap)->name = xstrdup(a->queues[i]);
    snprintf(s->mode, sizeof s->mode, "the queues named (no management API)");
    int rc;
    struct conn *c = broker_connect(a->broker, &rc);
    for (size_t i = 0; c && i < s->n && conn_alive(c); i++) {
        uint32_t ready, consumers;
        enum conn_err kind;
        struct error err;
        if (conn_queue_inspect(c, 1, s->rows[i].name, &ready, &consumers, &kind, &err) == ST_OK) {
            s->rows[i].ready = ready;
            s->rows[i].consumers = consumers;
        }
        const struct qrow *o = find_old(old, n_old, s->rows[i].name);
        if (o && o->ready >= 0 && s->rows[i].ready >= 0 && dt > 0.5)
            s->rows[i].growth = (double)(s->rows[i].ready - o->ready) / dt;
        s->rows[i].growing = o && o->ready >= 0 && s->rows[i].ready > o->ready;
    }
    if (c)
        conn_close(c);
    s->looked_at = now;
    install(v, old, n_old);
}

static void relist(struct app *a, struct view *v)
{
    struct queues_state *s = v->state;
    if (app_source_is_broker(a) && a->mgmt) {
        poll_start(a, v);
    } else if (app_source_is_broker(a)) {
        list_named(a, v);
    } else {
        struct qrow *old = s->rows;
        size_t n_old = s->n;
        s->rows = NULL;
        s->n = 0;
        list_from_store(a, s);
        install(v, old, n_old);
    }
}

static void open_(struct app *a, struct view *v, void *with)
{
    (void)with;
    v->state = xcalloc(1, sizeof(struct queues_state));
    relist(a, v);
}

static void close_(struct app *a, struct view *v)
{
    struct queues_state *s = v->state;
    /* The refresh delivers to this view's state: it goes first. */
    if (s->polling)
        job_cancel(a, JOB_QUEUES);
    free_rows(s->rows, s->n);
    free(s);
    v->state = NULL;
}

static void tick(struct app *a, struct view *v)
{
    struct queues_state *s = v->state;
    if (app_source_is_broker(a) && a->mgmt && a->queues_refresh_s > 0 && !s->polling &&
        clock_mono_s() - s->asked_at >= a->queues_refresh_s)
        poll_start(a, v);
}

static void fmt_count(char *buf, size_t cap, int64_t v)
{
    if (v < 0)
        snprintf(buf, cap, "?");
    else
        snprintf(buf, cap, "%lld", (long long)v);
}

/* The bottom line of the view: where the rows come from and how old they are. */
static void draw_mode(struct app *a, struct queues_state *s, int y, int width)
{
    struct strbuf sb;
    sb_init(&sb);
    sb_adds(&sb, s->mode);
    enum ui_attr at = UA_DIM;
    if (app_source_is_broker(a) && a->mgmt) {
        char age[32];
        double now = clock_mono_s();
        duration_format(now - s->looked_at, age);
        if (!s->listed && s->polling)
            sb_adds(&sb, ": asking...");
        else if (!s->listed)
            sb_addf(&sb, ": no listing: %s", s->failure);
        else if (s->stale || (s->polling && now - s->asked_at > 2 * a->queues_refresh_s + 1)) {
            sb_addf(&sb, "  STALE: as of %s ago: %s", age,
                    s->stale ? s->failure : "the management API is not answering");
            at = UA_WARN;
        } else {
            sb_addf(&sb, "  as of %s ago", age);
            if (a->queues_refresh_s > 0)
                sb_addf(&sb, ", every %g s", a->queues_refresh_s);
        }
    }
    draw_text(y, 0, width, sb.buf ? sb.buf : "", sb.len, at);
    sb_free(&sb);
}

static void draw_row(struct app *a, const struct qrow *r, int y, int width, enum ui_attr at)
{
    char b1[32], b2[32], b3[32], b4[32], b5[32];
    fmt_count(b1, sizeof b1, r->ready);
    fmt_count(b2, sizeof b2, r->unacked);
    fmt_count(b3, sizeof b3, r->consumers);
    /* The API has no publish stats for dead-lettering: a DLQ that fills shows 0 or nothing
     * there, so the growth of its depth stands in, marked "~". */
    if (r->in_rate > 0)
        snprintf(b4, sizeof b4, "%.1f", r->in_rate);
    else if (!isnan(r->growth) && r->growth >= 0)
        snprintf(b4, sizeof b4, "~%.1f", r->growth);
    else if (r->in_rate == 0)
        snprintf(b4, sizeof b4, "0.0");
    else
        snprintf(b4, sizeof b4, "-");
    if (!isnan(r->growth))
        snprintf(b5, sizeof b5, "%+.1f", r->growth);
    else
        snprintf(b5, sizeof b5, "-");
    bool sel = at == UA_SELECTED;
    if (r->growing)
        draw_safe(y, 30, 1, a->ascii ? "^" : "\xe2\x96\xb2", sel ? at : UA_WARN); /* ▲ */
    draw_text(y, 32, 7, r->type ? r->type : "?", r->type ? strlen(r->type) : 1, at);
    draw_safe(y, 41, 7, b1, sel ? at : r->warn & QH_UNAVAILABLE ? UA_ERROR : at);
    draw_safe(y, 50, 7, b2, at);
    draw_safe(y, 59, 4, b3, at);
    draw_safe(y, 65, 6, b4, at);
    draw_safe(y, 73, 8, b5, sel ? at : r->growth > 0 ? UA_WARN : at);
    draw_safe(y, 83, 20, r->where ? r->where : "?", at);
    draw_safe(y, 105, 10, r->members ? r->members : "-", at);
    int x = 117;
    if (r->warning) {
        enum ui_attr wa = r->warn & (QH_UNAVAILABLE | QH_BELOW_QUORUM) ? UA_ERROR : UA_WARN;
        draw_safe(y, x, width - x, r->warning, sel ? at : wa);
        x += (int)strlen(r->warning) + 2;
    }
    if (r->sources && x < width)
        draw_text(y, x, width - x, r->sources, strlen(r->sources), at);
}

static void draw(struct app *a, struct view *v, int top, int height, int width)
{
    struct queues_state *s = v->state;
    bool files = !app_source_is_broker(a);
    /* A line above the bottom one says in full what is wrong with the queue under the
     * cursor. */
    int rows = height - (files ? 2 : 3);
    v->lines = s->n;
    v->rows_y = top + 1;
    view_scroll_to_cursor(v, (size_t)(rows > 0 ? rows : 1));
    draw_fill(top, 0, width, UA_HEADER);
    if (files)
        draw_safe(top, 0, width, "  QUEUE                         MESSAGES  OLDEST", UA_HEADER);
    else
        draw_safe(top, 0, width,
                  "  QUEUE                         TYPE     READY    UNACKED  CONS  IN/S    "
                  "GROWTH/S  NODE                  MEMBERS     SOURCE",
                  UA_HEADER);
    if (!s->n)
        draw_safe(top + 2, 2, width - 4,
                  files                   ? "no messages"
                  : s->polling            ? "asking the management API..."
                  : a->mgmt && !s->listed ? "no listing from the management API (r to try again)"
                                          : "no dead-letter queue found (r to look again)",
                  UA_DIM);
    for (int row = 0; row < rows; row++) {
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
        draw_text(y, 2, files ? 28 : 27, r->name, strlen(r->name), at); /* 27: the growing mark */
        if (!files) {
            draw_row(a, r, y, width, at);
            continue;
        }
        char b1[32], age[32];
        duration_format(((double)a->now_ms - (double)r->oldest_ms) / 1000.0, age);
        snprintf(b1, sizeof b1, "%zu", r->count);
        draw_safe(y, 32, 8, b1, at);
        draw_safe(y, 42, 12, age, at);
    }
    if (!files && v->cursor < s->n && s->rows[v->cursor].why)
        draw_safe(top + height - 2, 0, width, s->rows[v->cursor].why,
                  s->rows[v->cursor].warn & (QH_UNAVAILABLE | QH_BELOW_QUORUM) ? UA_ERROR
                                                                               : UA_WARN);
    draw_mode(a, s, top + height - 1, width);
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
    .tick = tick,
};

void app_queue_info(struct app *a, const char *queue, struct peek_queue_info *info)
{
    if (a->broker && a->mgmt)
        broker_queue_info(a->broker, queue, info, false, false, false);
}
