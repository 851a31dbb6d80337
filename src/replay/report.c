/*
 * report: the model of `dlqx report` (report.h) — the dead letters per queue and per cause
 * with their counts, times, rate now and whether they are still arriving, the timelines, and
 * what the journal records of the replays. The renderings are report_md.c and report_html.c.
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "dialect.h"
#include "journal.h"

enum { RATE_BUCKET_MS = 60000, RATE_WINDOW = 3 };

static char *text_of(const struct store *s, store_ref r)
{
    static char buf[STORE_TEXT_MAX];
    size_t n = store_text(s, r, buf);
    return xstrndup(buf, n);
}

/* Per-minute buckets up to now (the timeline's rule): still going when something arrived in
 * the recent window (the last RATE_WINDOW minutes); the rate is what arrived in that window
 * over the minutes of it that have passed (at least one, so that an arrival at now is not a
 * rate of thousands a minute). */
static void rate_now(const struct store *s, const uint32_t *idx, size_t n, int64_t now_ms,
                     double *rate, bool *going)
{
    /* Only the entries that can fall in the window (a minute to spare): a group of a month
     * would otherwise make 43,200 buckets to look at the last three. */
    uint32_t *recent = xcalloc(n ? n : 1, sizeof *recent);
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        if (now_ms <= 0 || entry_time_dead_at(s, idx[k], NULL) >=
                               now_ms - (int64_t)(RATE_WINDOW + 1) * RATE_BUCKET_MS)
            recent[m++] = idx[k];
    struct timeline t;
    struct timeline_options opt = {.bucket_ms = RATE_BUCKET_MS,
                                   .now_ms = now_ms,
                                   .window = RATE_WINDOW,
                                   .time = entry_time_dead_at,
                                   .indices = recent,
                                   .n_indices = m};
    timeline_build(s, &opt, &t);
    free(recent);
    *going = t.still_going;
    *rate = 0;
    if (t.still_going) {
        size_t w = t.n < RATE_WINDOW ? t.n : RATE_WINDOW;
        int64_t from = t.start_ms + (int64_t)(t.n - w) * t.bucket_ms;
        int64_t end = now_ms > 0 ? now_ms : t.start_ms + (int64_t)t.n * t.bucket_ms;
        double minutes = (double)(end - from + 1) / 60000.0;
        uint64_t sum = 0;
        for (size_t k = t.n - w; k < t.n; k++)
            sum += t.counts[k];
        *rate = (double)sum / (minutes < 1 ? 1 : minutes);
    }
    timeline_free(&t);
}

static void cause_from_group(const struct store *s, const struct group *g, int64_t now_ms,
                             struct report_cause *c)
{
    group_key_text(g->group_key, c->key);
    c->type = xstrdup(g->type);
    c->exception = xstrdup(g->exception);
    c->cause = xstrdup(g->key);
    const struct store_entry *e = store_entry_at(s, g->example);
    c->error = text_of(s, e->error);
    c->sample_id = text_of(s, e->id);
    const struct dialect_ops *d = dialect_at(e->dialect);
    c->dialect = d ? d->title : "?";
    c->from_broker = g->from_broker;
    c->count = g->count;
    c->first_ms = g->first_ms;
    c->last_ms = g->last_ms;
    rate_now(s, g->members, g->count, now_ms, &c->rate_per_min, &c->still_going);
}

static void build_queue(const struct store *s, const uint32_t *idx, size_t n, int64_t now_ms,
                        struct report_queue *q)
{
    q->name = text_of(s, store_entry_at(s, idx[0])->queue);
    q->count = (uint32_t)n;
    struct groups_options gopt = {.time = entry_time_dead_at, .indices = idx, .n_indices = n};
    struct groups *g = groups_build(s, &gopt);
    q->n_causes = groups_count(g);
    q->causes = xcalloc(q->n_causes ? q->n_causes : 1, sizeof *q->causes);
    for (size_t k = 0; k < q->n_causes; k++) {
        const struct group *grp = groups_at(g, k);
        cause_from_group(s, grp, now_ms, &q->causes[k]);
        if (grp->first_ms > 0 && (!q->first_ms || grp->first_ms < q->first_ms))
            q->first_ms = grp->first_ms;
        if (grp->last_ms > q->last_ms)
            q->last_ms = grp->last_ms;
    }
    groups_free(g);
    rate_now(s, idx, n, now_ms, &q->rate_per_min, &q->still_going);
    struct timeline_options topt = {
        .now_ms = now_ms, .time = entry_time_dead_at, .indices = idx, .n_indices = n};
    timeline_build(s, &topt, &q->timeline);
}

static int by_count(const void *a, const void *b)
{
    const struct report_queue *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* ---- the journal ---- */

static const char *str_member(const json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? v : "(not text)";
}

static struct report_replayed *replayed_for(struct report *r, const char *source)
{
    for (size_t k = 0; k < r->n_replayed; k++)
        if (strcmp(r->replayed[k].source, source) == 0)
            return &r->replayed[k];
    r->replayed = xrealloc(r->replayed, (r->n_replayed + 1) * sizeof *r->replayed);
    struct report_replayed *p = &r->replayed[r->n_replayed++];
    memset(p, 0, sizeof *p);
    p->source = xstrdup(source);
    return p;
}

static bool count_run(void *ctx, json_t *rec)
{
    const char *kind = json_string_value(json_object_get(rec, "kind"));
    if (kind && strcmp(kind, "run") == 0) {
        struct report_replayed *p = replayed_for(ctx, str_member(rec, "source"));
        p->runs++;
        if (json_is_true(json_object_get(rec, "dry_run")))
            p->dry_runs++;
    }
    return true;
}

static enum status read_journal(struct report *r, const char *path, struct error *err)
{
    r->journal_path = xstrdup(path);
    json_t *intents = NULL;
    struct journal_scan_report rep;
    memset(&rep, 0, sizeof rep);
    enum status st = journal_collect(path, NULL, false, count_run, r, &intents, NULL, &rep, err);
    if (st == ST_ENOTFOUND)
        return ST_OK;
    if (st != ST_OK)
        return st;
    r->journal_found = true;
    r->journal_malformed = rep.malformed;
    size_t k;
    json_t *in;
    json_array_foreach(intents, k, in)
    {
        struct report_replayed *p = replayed_for(r, str_member(in, "source"));
        p->ops++;
        const char *res =
            json_string_value(json_object_get(json_object_get(in, "outcome"), "result"));
        if (res && strcmp(res, "done") == 0)
            p->done++;
        else if (res && (strcmp(res, "kept") == 0 || strcmp(res, "refused") == 0))
            p->kept++;
        else
            p->unknown++;
    }
    json_decref(intents);
    return ST_OK;
}

/* ---- the report ---- */

enum status report_build(const struct store *s, int64_t now_ms, const char *journal_path,
                         struct report *out, struct error *err)
{
    memset(out, 0, sizeof *out);
    out->now_ms = now_ms;
    size_t n = store_count(s);
    out->total = n;
    struct timeline_options topt = {.now_ms = now_ms, .time = entry_time_dead_at};
    timeline_build(s, &topt, &out->timeline);
    /* The queues: entries grouped by queue name, in order of first appearance. */
    char **names = xcalloc(n ? n : 1, sizeof *names);
    size_t *queue_of = xcalloc(n ? n : 1, sizeof *queue_of);
    size_t nq = 0;
    for (size_t i = 0; i < n; i++) {
        char *name = text_of(s, store_entry_at(s, i)->queue);
        size_t q = 0;
        while (q < nq && strcmp(names[q], name) != 0)
            q++;
        if (q == nq)
            names[nq++] = name;
        else
            free(name);
        queue_of[i] = q;
    }
    out->queues = xcalloc(nq ? nq : 1, sizeof *out->queues);
    out->n_queues = nq;
    uint32_t *idx = xcalloc(n ? n : 1, sizeof *idx);
    for (size_t q = 0; q < nq; q++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (queue_of[i] == q)
                idx[m++] = (uint32_t)i;
        build_queue(s, idx, m, now_ms, &out->queues[q]);
        free(names[q]);
    }
    free(idx);
    free(names);
    free(queue_of);
    qsort(out->queues, nq, sizeof *out->queues, by_count);
    if (journal_path) {
        enum status st = read_journal(out, journal_path, err);
        if (st != ST_OK) {
            report_free(out);
            return st;
        }
    }
    return ST_OK;
}

void report_free(struct report *r)
{
    for (size_t q = 0; q < r->n_queues; q++) {
        struct report_queue *rq = &r->queues[q];
        for (size_t k = 0; k < rq->n_causes; k++) {
            struct report_cause *c = &rq->causes[k];
            free(c->type);
            free(c->exception);
            free(c->cause);
            free(c->error);
            free(c->sample_id);
        }
        free(rq->causes);
        free(rq->name);
        timeline_free(&rq->timeline);
    }
    free(r->queues);
    for (size_t k = 0; k < r->n_replayed; k++)
        free(r->replayed[k].source);
    free(r->replayed);
    free(r->journal_path);
    timeline_free(&r->timeline);
    memset(r, 0, sizeof *r);
}

void report_time(int64_t ms, char out[32])
{
    if (ms <= 0) {
        strcpy(out, "-");
        return;
    }
    time_format_rfc3339(ms, false, out);
    char *dot = strchr(out, '.');
    if (dot)
        strcpy(dot, "Z");
    char *t = strchr(out, 'T');
    if (t)
        *t = ' ';
}

const char *report_status(bool still_going, int64_t last_ms)
{
    if (last_ms <= 0)
        return "no dates";
    return still_going ? "still going" : "stopped";
}

int64_t report_as_of(const struct store *s, int64_t clock_ms)
{
    int64_t end = 0;
    for (size_t i = 0; i < store_count(s); i++) {
        int64_t t = store_entry_at(s, i)->fetched_at_ms;
        end = t > end ? t : end;
    }
    return end > 0 && (clock_ms <= 0 || end < clock_ms) ? end : clock_ms;
}

enum status report_render(const struct store *s, int64_t clock_ms, const char *journal_path,
                          bool html, struct strbuf *out, uint64_t *total, struct error *err)
{
    struct report r;
    enum status st = report_build(s, report_as_of(s, clock_ms), journal_path, &r, err);
    if (st != ST_OK)
        return st;
    if (html)
        report_html(&r, out);
    else
        report_markdown(&r, out);
    if (total)
        *total = r.total;
    report_free(&r);
    return ST_OK;
}
