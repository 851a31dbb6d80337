/*
 * data: what the views make of the rows, computed once per generation of the data and kept —
 * the failure groups of the rows, and the causal forest of the store — each by a job (job.h)
 * so that a million messages never freeze the screen. Grouping runs a slice at a time; the
 * forest's spans (of the store's own bytes) are gathered a slice at a time and then linked by
 * tree_build on a worker thread (one call, ~0.3-0.6 s for a million), which touches nothing
 * but those spans and the bytes they name (the store goes only after app_forest_drop).
 *
 * Generations: a->store_gen changes with the store (a new snapshot), a->set_gen with the set
 * of rows (a filter, the end of reading). What was made for an older set stays on screen
 * until its replacement is ready; what was made for an older store is dropped at once (its
 * refs and indices mean nothing in the new one).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "groups.h"
#include "job.h"

/* Views that show the forest rebuild their rows from it. */
static void reload_views_of(struct app *a, const struct view_ops *ops)
{
    for (int i = 0; i < a->depth; i++)
        if (a->stack[i].ops == ops && ops->reload)
            ops->reload(a, &a->stack[i]);
}

/* ---- the failure groups -------------------------------------------------------------- */

struct groups_job {
    struct groups_builder *b; /* NULL while the rows' entries are being listed */
    uint32_t *indices;        /* owned; NULL: every entry */
    uint64_t store_gen, set_gen;
    size_t n_rows;
    bool replaced; /* a newer grouping took its place: its end says nothing */
    /* Listing a subset's entries in store order, in slices (ten million rows: 60 ms before
     * the first answer when it was done at once, issue #15): in[e] marks the rows' entries. */
    uint8_t *in;
    size_t n_store, mark_i, collect_i, k;
    uint64_t rows_gen; /* the order of a->rows the marks were made from */
};

/* The rows' entries in store order (the groups do not depend on the sort); false when the
 * time is up first. A sort installed meanwhile reorders a->rows: the marks start again. */
static bool groups_list_step(struct app *a, struct groups_job *g, double until)
{
    if (g->rows_gen != a->rows_gen) {
        memset(g->in, 0, g->n_store ? g->n_store : 1);
        g->mark_i = 0;
        g->rows_gen = a->rows_gen;
    }
    for (size_t tick = 1; g->mark_i < g->n_rows; g->mark_i++, tick++) {
        if (tick % 16384 == 0 && job_yield(until))
            return false;
        if (a->rows[g->mark_i] < g->n_store)
            g->in[a->rows[g->mark_i]] = 1;
    }
    for (size_t tick = 1; g->collect_i < g->n_store; g->collect_i++, tick++) {
        if (tick % 65536 == 0 && job_yield(until))
            return false;
        if (g->in[g->collect_i])
            g->indices[g->k++] = (uint32_t)g->collect_i;
    }
    free(g->in);
    g->in = NULL;
    struct groups_options opt;
    memset(&opt, 0, sizeof opt);
    opt.time = entry_time_dead_at;
    opt.indices = g->indices;
    opt.n_indices = g->k;
    g->b = groups_builder_new(a->store, &opt);
    return true;
}

static enum job_rc groups_step(struct app *a, struct job *j, double until)
{
    struct groups_job *g = j->state;
    if (!g->b && !groups_list_step(a, g, until)) {
        j->done = g->mark_i + g->collect_i;
        j->total = g->n_rows + g->n_store;
        return JOB_MORE;
    }
    while (groups_builder_step(g->b, 8192)) {
        j->done = groups_builder_done(g->b);
        j->total = groups_builder_total(g->b);
        if (job_yield(until))
            return JOB_MORE;
    }
    return JOB_DONE;
}

static void groups_describe(struct app *a, const struct job *j, struct strbuf *out)
{
    const struct groups_job *g = j->state;
    char n[32];
    (void)a;
    sb_addf(out, "grouping %s messages by cause", fmt_thousands(g->n_rows, n));
}

static void groups_end(struct app *a, struct job *j, bool cancelled)
{
    struct groups_job *g = j->state;
    if (cancelled || g->store_gen != a->store_gen) {
        groups_builder_free(g->b);
        if (cancelled && !g->replaced && g->store_gen == a->store_gen) {
            a->groups_cancelled = true;
            app_message(a, true, "grouping cancelled (Enter in the groups view groups again)");
        }
    } else {
        struct groups *made = groups_builder_finish(g->b);
        groups_free(a->groups);
        a->groups = made;
        a->groups_store_gen = g->store_gen;
        a->groups_set_gen = g->set_gen;
        a->groups_rows = g->n_rows;
    }
    free(g->indices);
    free(g->in);
    free(g);
}

static const struct job_ops groups_ops = {groups_step, groups_describe, groups_end};

static bool groups_current(const struct app *a)
{
    return a->groups && a->groups_store_gen == a->store_gen && a->groups_set_gen == a->set_gen &&
           a->groups_rows == a->n_rows;
}

const struct groups *app_groups(struct app *a, bool *current)
{
    if (a->groups && a->groups_store_gen != a->store_gen) {
        groups_free(a->groups); /* refs into a store that is gone */
        a->groups = NULL;
    }
    *current = groups_current(a);
    if (*current || !a->store)
        return a->groups;
    const struct groups_job *run = job_state(a, JOB_GROUPS, &groups_ops);
    if (run && run->store_gen == a->store_gen && run->set_gen == a->set_gen &&
        run->n_rows == a->n_rows)
        return a->groups; /* on its way */
    if (app_rows_rescanning(a))
        return a->groups; /* the rows are being made again: group those when they are */
    if (a->groups_cancelled)
        return a->groups;
    app_group_again(a);
    *current = groups_current(a);
    return a->groups;
}

void app_group_again(struct app *a)
{
    /* A grouping of an older set still running is replaced, not cancelled by the user: its
     * end must not set the mark again (nor say "grouping cancelled") once this one runs. */
    struct groups_job *old = job_state(a, JOB_GROUPS, &groups_ops);
    if (old)
        old->replaced = true;
    a->groups_cancelled = false;
    struct groups_job *g = xcalloc(1, sizeof *g);
    g->store_gen = a->store_gen;
    g->set_gen = a->set_gen;
    g->n_rows = a->n_rows;
    g->n_store = store_count(a->store);
    if (a->filter || a->n_rows != g->n_store) {
        g->in = xcalloc(g->n_store ? g->n_store : 1, 1);
        g->indices = xmalloc((a->n_rows ? a->n_rows : 1) * sizeof *g->indices);
        g->rows_gen = a->rows_gen; /* marks made from this order of the rows */
    } else {
        struct groups_options opt;
        memset(&opt, 0, sizeof opt);
        opt.time = entry_time_dead_at;
        g->b = groups_builder_new(a->store, &opt);
    }
    job_start(a, JOB_GROUPS, &groups_ops, g);
}

/* ---- the causal forest --------------------------------------------------------------- */

/* Ids kept as UUIDs, formatted for the forest in blocks that never move (owned by the forest
 * that names them: a->forest_text). */
#define UUID_LEN 36
#define UUIDS_PER_BLOCK 1820
struct forest_texts {
    char **block;
    size_t n, cap;
    size_t count; /* UUIDs formatted */
};

static void texts_free(struct forest_texts *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n; i++)
        free(t->block[i]);
    free(t->block);
    free(t);
}

struct forest_job {
    uint64_t store_gen;
    size_t n, i; /* entries, and the next to gather */
    /* The id, correlation and causation of each entry as 12 bytes: the store's refs, whose
     * bytes its arena never moves (and the store outlives the forest: app_forest_drop), or
     * for an id kept as a UUID's 16 bytes (its bit in uuid) the number of its text in
     * texts. tree_build_from asks for the spans (a struct tree_msg a message would be 48 B,
     * 480 MB at ten million); each is cut at a NUL of its own as the forest has always read
     * them. */
    const struct store *store;
    uint32_t *refs;
    uint8_t *uuid;
    struct forest_texts *texts;
    bool building;
    /* the worker's: it reads the above and the bytes they name, writes forest, st and err,
     * then sets done */
    pthread_t thread;
    atomic_bool done;
    struct forest forest;
    enum status st;
    struct error err;
};

static void forest_job_free(struct forest_job *f)
{
    free(f->refs);
    free(f->uuid);
    texts_free(f->texts);
    tree_free(&f->forest);
    free(f);
}

static struct tree_span forest_get(void *ctx, uint32_t i, int what)
{
    const struct forest_job *f = ctx;
    uint32_t r = f->refs[(size_t)i * 3 + (size_t)what];
    if (f->uuid[i] & (1u << what))
        return (struct tree_span){f->texts->block[r / UUIDS_PER_BLOCK] +
                                      (size_t)(r % UUIDS_PER_BLOCK) * UUID_LEN,
                                  UUID_LEN};
    size_t len;
    const unsigned char *p = store_text_view(f->store, r, &len);
    const unsigned char *nul = memchr(p, '\0', len);
    return (struct tree_span){p, nul ? (size_t)(nul - p) : len};
}

static void *forest_worker(void *arg)
{
    struct forest_job *f = arg;
    error_clear(&f->err);
    f->st = tree_build_from(&f->forest, forest_get, f, f->n, &f->err);
    tree_compact(&f->forest); /* the views never need its index of ids (issue #15) */
    free(f->refs);            /* the forest keeps the bytes, not the refs */
    free(f->uuid);
    f->refs = NULL;
    f->uuid = NULL;
    atomic_store(&f->done, true);
    return NULL;
}

/* The ref of message i's span `what`, or (a UUID) the number of its text. */
static void forest_gather(struct forest_job *f, size_t i, int what, store_ref r, char *buf)
{
    size_t len;
    if (store_text_view(f->store, r, &len)) {
        f->refs[i * 3 + (size_t)what] = r;
        return;
    }
    struct forest_texts *t = f->texts;
    if (t->count == t->n * UUIDS_PER_BLOCK) {
        xgrow((void **)&t->block, &t->cap, t->n + 1, sizeof *t->block);
        t->block[t->n++] = xmalloc(UUIDS_PER_BLOCK * UUID_LEN);
    }
    store_text(f->store, r, buf); /* a UUID: 36 characters */
    memcpy(t->block[t->count / UUIDS_PER_BLOCK] + (t->count % UUIDS_PER_BLOCK) * UUID_LEN, buf,
           UUID_LEN);
    f->refs[i * 3 + (size_t)what] = (uint32_t)t->count++;
    f->uuid[i] |= (uint8_t)(1u << what);
}

static enum job_rc forest_step(struct app *a, struct job *j, double until)
{
    struct forest_job *f = j->state;
    if (f->building) {
        if (!atomic_load(&f->done))
            return JOB_WAIT;
        pthread_join(f->thread, NULL);
        return JOB_DONE;
    }
    char buf[STORE_TEXT_MAX];
    for (unsigned tick = 1; f->i < f->n; f->i++, tick++) {
        if (tick % 4096 == 0 && job_yield(until)) {
            j->done = f->i;
            j->total = f->n;
            return JOB_MORE;
        }
        const struct store_entry *e = store_entry_at(a->store, f->i);
        forest_gather(f, f->i, 0, e->id, buf);
        if (e->correlation == e->id) { /* the same text: the same span */
            f->refs[f->i * 3 + 1] = f->refs[f->i * 3];
            f->uuid[f->i] |= (uint8_t)((f->uuid[f->i] & 1u) << 1);
        } else {
            forest_gather(f, f->i, 1, e->correlation, buf);
        }
        forest_gather(f, f->i, 2, e->causation, buf);
    }
    f->building = true;
    j->done = j->total = 0; /* linking: no measure of how far it has got */
    if (pthread_create(&f->thread, NULL, forest_worker, f) != 0) {
        forest_worker(f); /* no thread to be had: here, then */
        return JOB_DONE;
    }
    return JOB_WAIT;
}

static void forest_describe(struct app *a, const struct job *j, struct strbuf *out)
{
    const struct forest_job *f = j->state;
    char n[32];
    (void)a;
    sb_addf(out, "%s the causal tree of %s messages", f->building ? "linking" : "reading",
            fmt_thousands(f->n, n));
}

/* A worker that was still linking when its job was cancelled: joined when it is done. */
static void reap(struct app *a, bool wait)
{
    struct forest_job *f = a->forest_orphan;
    if (!f || (!wait && !atomic_load(&f->done)))
        return;
    pthread_join(f->thread, NULL);
    forest_job_free(f);
    a->forest_orphan = NULL;
}

static void forest_end(struct app *a, struct job *j, bool cancelled)
{
    struct forest_job *f = j->state;
    if (cancelled && f->store_gen == a->store_gen) {
        a->forest_cancelled = true;
        app_message(a, true, "the causal tree was not built (Enter in the tree view builds it)");
    }
    if (f->building && !atomic_load(&f->done)) {
        reap(a, true); /* at most one left behind */
        a->forest_orphan = f;
        return;
    }
    if (!cancelled && f->store_gen == a->store_gen) {
        if (f->st != ST_OK) {
            app_message(a, true, "the causal tree could not be built: %s", f->err.msg);
            a->forest_cancelled = true;
        } else {
            tree_free(&a->forest);
            a->forest = f->forest;
            tree_init(&f->forest);
            texts_free(a->forest_text);
            a->forest_text = f->texts;
            f->texts = NULL;
            a->forest_store_gen = f->store_gen;
            a->forest_count = f->n;
            a->data_gen++;
            reload_views_of(a, &view_tree_ops);
        }
    }
    forest_job_free(f);
}

static const struct job_ops forest_ops = {forest_step, forest_describe, forest_end};

bool app_forest(struct app *a)
{
    reap(a, false);
    if (!a->store)
        return true;
    size_t n = store_count(a->store);
    if (a->forest_store_gen == a->store_gen && a->forest_count == n)
        return true;
    const struct forest_job *run = job_state(a, JOB_FOREST, &forest_ops);
    if ((run && run->store_gen == a->store_gen && run->n == n) || a->forest_cancelled)
        return false;
    app_build_forest(a);
    return a->forest_store_gen == a->store_gen && a->forest_count == n;
}

void app_build_forest(struct app *a)
{
    a->forest_cancelled = false;
    struct forest_job *f = xcalloc(1, sizeof *f);
    f->store_gen = a->store_gen;
    f->n = store_count(a->store);
    f->store = a->store;
    f->refs = xmalloc((f->n ? f->n : 1) * 3 * sizeof *f->refs);
    f->uuid = xcalloc(f->n ? f->n : 1, 1);
    f->texts = xcalloc(1, sizeof *f->texts);
    tree_init(&f->forest);
    atomic_init(&f->done, false);
    job_start(a, JOB_FOREST, &forest_ops, f);
}

bool app_forest_building(const struct app *a)
{
    return job_state(a, JOB_FOREST, &forest_ops) != NULL;
}

bool app_groups_building(const struct app *a)
{
    return job_state(a, JOB_GROUPS, &groups_ops) != NULL;
}

/* ---- a new store ------------------------------------------------------------------------ */

void app_forest_drop(struct app *a)
{
    /* The forest and a build under way read the store's bytes: both go before it does (a
     * worker still linking is waited for). The generation first: not the user's doing. */
    a->store_gen++;
    job_cancel(a, JOB_FOREST);
    reap(a, true);
    tree_free(&a->forest);
    tree_init(&a->forest);
    a->forest_count = 0;
    texts_free(a->forest_text);
    a->forest_text = NULL;
}

void app_data_changed(struct app *a)
{
    /* The generations first: the jobs cancelled here see that it is not the user's doing (a
     * search under way sees it too, and stops by itself). */
    a->store_gen++;
    a->data_gen++;
    job_cancel(a, JOB_GROUPS);
    job_cancel(a, JOB_TIMELINE); /* its builder reads the store */
    job_cancel(a, JOB_FOREST);
    a->forest_cancelled = a->groups_cancelled = a->timeline_cancelled = false;
    groups_free(a->groups);
    a->groups = NULL;
    /* Keep the forest object (views hold tags, not pointers); rebuild it on demand. */
    tree_free(&a->forest);
    tree_init(&a->forest);
    a->forest_count = 0;
    /* A fresh snapshot shows what is in the queues now: nothing is gone from it. */
    free(a->gone);
    a->gone = NULL;
    a->gone_cap = a->n_gone = 0;
    app_rows_reset(a);
    app_reload_views(a);
}

void app_data_free(struct app *a)
{
    job_cancel_all(a);
    reap(a, true);
    groups_free(a->groups);
    a->groups = NULL;
    tree_free(&a->forest);
    texts_free(a->forest_text);
    a->forest_text = NULL;
    if (a->timeline)
        timeline_free(a->timeline);
    free(a->timeline);
    a->timeline = NULL;
}
