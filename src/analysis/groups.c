/*
 * groups: failure groups built in one pass over the store with hash tables (or in steps, by
 * the builder), their members, queues and sort order, and the entry time accessors. The
 * fingerprint itself comes from groups_fingerprint.c and the arrivals timeline from
 * groups_timeline.c: this file is the grouping, index and sort machinery only.
 */
#include "groups.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- hash tables for the build ---- */

/* uint64 key -> uint32 value, open addressing; keys are stored + 1 so 0 marks a free slot. */
struct u64map {
    uint64_t *keys;
    uint32_t *vals;
    size_t mask, count;
    uint64_t seed;
};

static void u64map_init(struct u64map *m, uint64_t seed)
{
    m->mask = 255;
    m->count = 0;
    m->seed = seed;
    m->keys = xcalloc(m->mask + 1, sizeof *m->keys);
    m->vals = xmalloc((m->mask + 1) * sizeof *m->vals);
}

static void u64map_free(struct u64map *m)
{
    free(m->keys);
    free(m->vals);
}

static uint32_t *u64map_slot(struct u64map *m, uint64_t key, bool *found)
{
    if ((m->count + 1) * 2 > m->mask) {
        struct u64map g = {xcalloc((m->mask + 1) * 2, sizeof(uint64_t)), NULL, m->mask * 2 + 1,
                           m->count, m->seed};
        g.vals = xmalloc((g.mask + 1) * sizeof *g.vals);
        for (size_t i = 0; i <= m->mask; i++) {
            if (!m->keys[i])
                continue;
            size_t h = (size_t)hash_mix64(m->keys[i] ^ m->seed) & g.mask;
            while (g.keys[h])
                h = (h + 1) & g.mask;
            g.keys[h] = m->keys[i];
            g.vals[h] = m->vals[i];
        }
        u64map_free(m);
        *m = g;
    }
    uint64_t k = key + 1;
    size_t h = (size_t)hash_mix64(k ^ m->seed) & m->mask;
    while (m->keys[h] && m->keys[h] != k)
        h = (h + 1) & m->mask;
    *found = m->keys[h] != 0;
    if (!*found) {
        m->keys[h] = k;
        m->count++;
    }
    return &m->vals[h];
}

/* Interned texts: id by content (seeded hash, then compared). */
struct texts {
    struct strbuf buf;
    struct text_rec {
        uint32_t off, len;
    } * e;
    size_t n, cap;
    struct u64map by_hash; /* hash -> first id with it; collisions chain through next */
    uint32_t *next;
    size_t next_cap;
    uint64_t seed;
};

static void texts_init(struct texts *t, uint64_t seed)
{
    memset(t, 0, sizeof *t);
    sb_init(&t->buf);
    t->seed = seed;
    u64map_init(&t->by_hash, seed);
}

static void texts_free(struct texts *t)
{
    sb_free(&t->buf);
    free(t->e);
    free(t->next);
    u64map_free(&t->by_hash);
}

static uint32_t texts_intern(struct texts *t, const char *s, size_t n)
{
    bool found;
    uint64_t h = hash_bytes(s, n, t->seed);
    uint32_t *slot = u64map_slot(&t->by_hash, h, &found);
    if (found) {
        for (uint32_t id = *slot; id != UINT32_MAX; id = t->next[id])
            if (t->e[id].len == n && memcmp(t->buf.buf + t->e[id].off, s, n) == 0)
                return id;
    }
    xgrow((void **)&t->e, &t->cap, t->n + 1, sizeof *t->e);
    xgrow((void **)&t->next, &t->next_cap, t->n + 1, sizeof *t->next);
    uint32_t id = (uint32_t)t->n++;
    t->e[id].off = (uint32_t)t->buf.len;
    t->e[id].len = (uint32_t)n;
    sb_add(&t->buf, s, n);
    sb_addc(&t->buf, '\0');
    t->next[id] = found ? *slot : UINT32_MAX;
    *slot = id;
    return id;
}

/* ---- groups ---- */

struct fp_info {
    uint64_t hash;
    uint32_t exc_off, exc_len; /* in groups.exc */
    bool broker;
};

struct groups {
    struct group *g;
    size_t n;
    struct texts keys, types;
    struct strbuf exc;
    struct fp_info *fps;
    size_t n_fps, fps_cap;
    uint32_t *members;
    struct group_queue *queues;
    uint32_t *entry_group; /* per store entry; UINT32_MAX: not grouped */
    size_t n_entries, total;
};

int64_t entry_time_first_seen(const struct store *s, size_t i, void *ctx)
{
    (void)ctx;
    const struct store_entry *e = store_entry_at(s, i);
    return e ? e->first_seen_ms : 0;
}

int64_t entry_time_dead_at(const struct store *s, size_t i, void *ctx)
{
    const struct store_entry *e = store_entry_at(s, i);
    if (!e)
        return 0;
    return e->dead_at_ms > 0 ? e->dead_at_ms : e->first_seen_ms;
}

int64_t entry_time_fetched(const struct store *s, size_t i, void *ctx)
{
    (void)ctx;
    const struct store_entry *e = store_entry_at(s, i);
    return e ? e->fetched_at_ms : 0;
}

struct qcount {
    uint32_t group, queue_id, count, first;
    store_ref ref;
};

static int qcount_cmp(const void *a, const void *b)
{
    const struct qcount *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return (x->first > y->first) - (x->first < y->first);
}

static int group_cmp(const void *a, const void *b)
{
    const struct group *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    if (x->last_ms != y->last_ms)
        return x->last_ms > y->last_ms ? -1 : 1;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    c = strcmp(x->type, y->type);
    if (c)
        return c;
    return (x->members[0] > y->members[0]) - (x->members[0] < y->members[0]);
}

struct sortrec {
    struct group g;
    uint32_t old;
};

static int sortrec_cmp(const void *a, const void *b)
{
    return group_cmp(&((const struct sortrec *)a)->g, &((const struct sortrec *)b)->g);
}

/* The fingerprint id of an error text (the normalised text interned). */
static uint32_t fingerprint_id(struct groups *g, const char *err, size_t n, struct strbuf *tmp)
{
    uint64_t h = error_fingerprint(err, n, tmp);
    uint32_t id = texts_intern(&g->keys, tmp->buf ? tmp->buf : "", tmp->len);
    if (id < g->n_fps)
        return id;
    xgrow((void **)&g->fps, &g->fps_cap, id + 1, sizeof *g->fps);
    struct fp_info *f = &g->fps[id];
    g->n_fps = id + 1;
    f->hash = h;
    f->broker = error_from_broker_text(err, n);
    size_t off, len = error_exception(err, n, &off);
    f->exc_off = (uint32_t)g->exc.len;
    /* An exception is class-like ASCII, or the broker's reason: cleaned of controls anyway. */
    for (size_t k = 0; k < len && k < 200; k++) {
        unsigned char c = (unsigned char)err[off + k];
        sb_addc(&g->exc, c < 0x20 || c == 0x7f ? '?' : (char)c);
    }
    f->exc_len = (uint32_t)(g->exc.len - f->exc_off);
    sb_addc(&g->exc, '\0');
    return id;
}

/* The build in steps: the per-entry pass (groups_builder_step) is most of the cost; the
 * rest (members, queues, the order) is done once by groups_builder_finish. */
struct groups_builder {
    const struct store *s; /* borrowed */
    struct groups *g;      /* being built (owned until finish) */
    entry_time_fn when;
    void *when_ctx;
    const uint32_t *indices; /* borrowed; NULL: entries 0..count-1 */
    size_t count, k;         /* entries to group, and the next one */
    struct u64map err_fp, type_id, queue_id, group_of, qc_of;
    struct texts queues;
    struct qcount *qc;
    size_t n_qc, qc_cap, cap, gk_cap;
    struct gkey {
        uint32_t fp, type;
    } * gk;        /* each group's key, until the texts stop growing */
    uint32_t *gid; /* per input position: its group (UINT32_MAX: skipped) */
    char *buf;
    struct strbuf tmp;
};

struct groups_builder *groups_builder_new(const struct store *s, const struct groups_options *opt)
{
    struct groups_builder *b = xcalloc(1, sizeof *b);
    struct groups *g = xcalloc(1, sizeof *g);
    b->s = s;
    b->g = g;
    uint64_t seed = hash_mix64((uint64_t)(uintptr_t)g ^ (uint64_t)clock());
    texts_init(&g->keys, seed);
    texts_init(&g->types, seed ^ 1);
    sb_init(&g->exc);
    b->when = opt && opt->time ? opt->time : entry_time_first_seen;
    b->when_ctx = opt ? opt->time_ctx : NULL;
    size_t total = store_count(s);
    b->indices = opt && opt->indices ? opt->indices : NULL;
    b->count = b->indices ? opt->n_indices : total;
    g->n_entries = total;
    g->entry_group = xmalloc((total ? total : 1) * sizeof *g->entry_group);
    /* Every entry in order: each step marks its own range (ten million cost 40 MB of writes
     * before the first answer, issue #15). A list of entries may name any: all now. */
    if (b->indices || !total)
        memset(g->entry_group, 0xff, (total ? total : 1) * sizeof *g->entry_group);
    u64map_init(&b->err_fp, seed ^ 2);
    u64map_init(&b->type_id, seed ^ 3);
    u64map_init(&b->queue_id, seed ^ 4);
    u64map_init(&b->group_of, seed ^ 5);
    u64map_init(&b->qc_of, seed ^ 6);
    texts_init(&b->queues, seed ^ 7);
    b->gid = xmalloc((b->count ? b->count : 1) * sizeof *b->gid);
    b->buf = xmalloc(STORE_TEXT_MAX);
    sb_init(&b->tmp);
    return b;
}

size_t groups_builder_step(struct groups_builder *b, size_t max)
{
    const struct store *s = b->s;
    struct groups *g = b->g;
    bool found;
    size_t end = max < b->count - b->k ? b->k + max : b->count;
    if (!b->indices && b->k < end)
        memset(g->entry_group + b->k, 0xff, (end - b->k) * sizeof *g->entry_group);
    for (; b->k < end; b->k++) {
        size_t k = b->k;
        size_t i = b->indices ? b->indices[k] : k;
        const struct store_entry *e = i < g->n_entries ? store_entry_at(s, i) : NULL;
        if (!e || g->entry_group[i] != UINT32_MAX) { /* out of range, or listed twice */
            b->gid[k] = UINT32_MAX;
            continue;
        }
        uint32_t *v = u64map_slot(&b->err_fp, e->error, &found);
        if (!found) {
            size_t n = store_text(s, e->error, b->buf);
            *v = fingerprint_id(g, b->buf, n, &b->tmp);
        }
        uint32_t fp = *v;
        v = u64map_slot(&b->type_id, e->type, &found);
        if (!found) {
            size_t n = store_text(s, e->type, b->buf);
            *v = texts_intern(&g->types, b->buf, n);
        }
        uint32_t type = *v;
        uint32_t *slot = u64map_slot(&b->group_of, (uint64_t)fp << 32 | type, &found);
        if (!found) {
            xgrow((void **)&g->g, &b->cap, g->n + 1, sizeof *g->g);
            xgrow((void **)&b->gk, &b->gk_cap, g->n + 1, sizeof *b->gk);
            b->gk[g->n].fp = fp;
            b->gk[g->n].type = type;
            struct group *ng = &g->g[g->n];
            memset(ng, 0, sizeof *ng);
            ng->fingerprint = g->fps[fp].hash;
            ng->from_broker = g->fps[fp].broker;
            ng->type_ref = e->type;
            ng->example = (uint32_t)i;
            ng->first_ms = INT64_MAX;
            ng->first_fetched_ms = INT64_MAX;
            *slot = (uint32_t)g->n++;
        }
        struct group *grp = &g->g[*slot];
        b->gid[k] = *slot;
        g->entry_group[i] = *slot;
        grp->count++;
        int64_t t = b->when(s, i, b->when_ctx);
        if (t > 0) {
            if (t < grp->first_ms)
                grp->first_ms = t;
            if (t > grp->last_ms) {
                grp->last_ms = t;
                grp->example = (uint32_t)i;
            }
        }
        if (e->fetched_at_ms > 0) {
            if (e->fetched_at_ms < grp->first_fetched_ms)
                grp->first_fetched_ms = e->fetched_at_ms;
            if (e->fetched_at_ms > grp->last_fetched_ms)
                grp->last_fetched_ms = e->fetched_at_ms;
        }
        v = u64map_slot(&b->queue_id, e->queue, &found);
        if (!found) {
            size_t n = store_text(s, e->queue, b->buf);
            *v = texts_intern(&b->queues, b->buf, n);
        }
        uint32_t *q = u64map_slot(&b->qc_of, (uint64_t)*slot << 32 | *v, &found);
        if (!found) {
            xgrow((void **)&b->qc, &b->qc_cap, b->n_qc + 1, sizeof *b->qc);
            b->qc[b->n_qc] = (struct qcount){*slot, *v, 0, (uint32_t)k, e->queue};
            *q = (uint32_t)b->n_qc++;
        }
        b->qc[*q].count++;
        g->total++;
    }
    return b->count - b->k;
}

size_t groups_builder_done(const struct groups_builder *b)
{
    return b ? b->k : 0;
}

size_t groups_builder_total(const struct groups_builder *b)
{
    return b ? b->count : 0;
}

static void builder_release(struct groups_builder *b)
{
    free(b->buf);
    sb_free(&b->tmp);
    free(b->gid);
    free(b->qc);
    free(b->gk);
    texts_free(&b->queues);
    u64map_free(&b->err_fp);
    u64map_free(&b->type_id);
    u64map_free(&b->queue_id);
    u64map_free(&b->group_of);
    u64map_free(&b->qc_of);
    free(b);
}

void groups_builder_free(struct groups_builder *b)
{
    if (!b)
        return;
    groups_free(b->g);
    builder_release(b);
}

struct groups *groups_builder_finish(struct groups_builder *b)
{
    groups_builder_step(b, SIZE_MAX);
    struct groups *g = b->g;
    size_t count = b->count, total = g->n_entries, n_qc = b->n_qc;
    const uint32_t *indices = b->indices;
    uint32_t *gid = b->gid;

    /* Members: a counting sort by group, so each group's indices come out ascending. */
    g->members = xmalloc((g->total ? g->total : 1) * sizeof *g->members);
    size_t *fill = xcalloc(g->n ? g->n : 1, sizeof *fill);
    for (size_t j = 0, off = 0; j < g->n; j++) {
        fill[j] = off;
        off += g->g[j].count;
    }
    for (size_t j = 0; j < g->n; j++)
        g->g[j].members = g->members + fill[j];
    for (size_t k = 0; k < count; k++)
        if (gid[k] != UINT32_MAX)
            g->members[fill[gid[k]]++] = (uint32_t)(indices ? indices[k] : k);
    free(fill);
    /* Members are in input order; a caller's index list may not be sorted. */
    if (indices)
        for (size_t j = 0; j < g->n; j++)
            for (size_t a = 1; a < g->g[j].count; a++) { /* insertion sort: usually sorted */
                uint32_t x = g->g[j].members[a];
                uint32_t *m = g->members + (g->g[j].members - g->members);
                size_t c = a;
                while (c > 0 && m[c - 1] > x) {
                    m[c] = m[c - 1];
                    c--;
                }
                m[c] = x;
            }

    /* Queues per group, by count. */
    struct qcount *qc = b->qc;
    if (n_qc)
        qsort(qc, n_qc, sizeof *qc, qcount_cmp);
    g->queues = xmalloc((n_qc ? n_qc : 1) * sizeof *g->queues);
    for (size_t j = 0; j < n_qc; j++) {
        g->queues[j].queue = qc[j].ref;
        g->queues[j].count = qc[j].count;
        struct group *grp = &g->g[qc[j].group];
        if (!grp->n_queues)
            grp->queues = &g->queues[j];
        grp->n_queues++;
    }

    for (size_t j = 0; j < g->n; j++) {
        struct group *grp = &g->g[j];
        uint32_t fp = b->gk[j].fp, type = b->gk[j].type;
        grp->key = g->keys.buf.buf + g->keys.e[fp].off;
        grp->type = g->types.buf.buf + g->types.e[type].off;
        grp->group_key = group_key(grp->fingerprint, grp->type, g->types.e[type].len);
        grp->exception = g->exc.buf + g->fps[fp].exc_off;
        if (grp->first_ms == INT64_MAX)
            grp->first_ms = 0;
        if (grp->first_fetched_ms == INT64_MAX)
            grp->first_fetched_ms = 0;
    }
    builder_release(b);
    /* Sort, then renumber entry_group to the sorted order. */
    struct sortrec *rec = xmalloc((g->n ? g->n : 1) * sizeof *rec);
    for (size_t j = 0; j < g->n; j++) {
        rec[j].g = g->g[j];
        rec[j].old = (uint32_t)j;
    }
    if (g->n)
        qsort(rec, g->n, sizeof *rec, sortrec_cmp);
    uint32_t *rank = xmalloc((g->n ? g->n : 1) * sizeof *rank);
    for (size_t j = 0; j < g->n; j++) {
        g->g[j] = rec[j].g;
        rank[rec[j].old] = (uint32_t)j;
    }
    for (size_t i = 0; i < total; i++)
        if (g->entry_group[i] != UINT32_MAX)
            g->entry_group[i] = rank[g->entry_group[i]];
    free(rank);
    free(rec);
    return g;
}

struct groups *groups_build(const struct store *s, const struct groups_options *opt)
{
    return groups_builder_finish(groups_builder_new(s, opt));
}

void groups_free(struct groups *g)
{
    if (!g)
        return;
    free(g->g);
    texts_free(&g->keys);
    texts_free(&g->types);
    sb_free(&g->exc);
    free(g->fps);
    free(g->members);
    free(g->queues);
    free(g->entry_group);
    free(g);
}

size_t groups_count(const struct groups *g)
{
    return g ? g->n : 0;
}

const struct group *groups_at(const struct groups *g, size_t k)
{
    return g && k < g->n ? &g->g[k] : NULL;
}

size_t groups_of_entry(const struct groups *g, size_t i)
{
    if (!g || i >= g->n_entries || g->entry_group[i] == UINT32_MAX)
        return SIZE_MAX;
    return g->entry_group[i];
}

size_t groups_total(const struct groups *g)
{
    return g ? g->total : 0;
}

void group_filter_expr(const struct group *grp, struct strbuf *out)
{
    char key[GROUP_KEY_TEXT];
    group_key_text(grp->group_key, key);
    sb_addf(out, "group=%s", key);
}
