/*
 * tree: builds the causal forest in linear time (own open-addressing hash indexes, no
 * sorting, no recursion) and answers the queries over it. tree_render.c draws it as
 * indented text.
 */
#include "tree.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

/* ---- hashing ---------------------------------------------------------------------------- */

#define K_GOLD 0x9e3779b97f4a7c15u
#define K_MUL 0xff51afd7ed558ccdu
#define K_OCC 0xc2b2ae3d27d4eb4fu
#define K_GROUP_TAG 0x2545f4914f6cdd1du

/* A bijective 64-bit finaliser (xor-shift / multiply rounds). */
static uint64_t load_le64(const unsigned char *p)
{
    return (uint64_t)p[0] | (uint64_t)p[1] << 8 | (uint64_t)p[2] << 16 | (uint64_t)p[3] << 24 |
           (uint64_t)p[4] << 32 | (uint64_t)p[5] << 40 | (uint64_t)p[6] << 48 |
           (uint64_t)p[7] << 56;
}

static uint64_t hash_step(uint64_t h, uint64_t w)
{
    h ^= w;
    h *= K_MUL;
    h ^= h >> 29;
    return h;
}

/* An FNV-1a-like hash that takes a little-endian word per step (a byte per step is too
 * slow for a million UUIDs). Unseeded and byte-order independent, because tags are built
 * from it and must be the same on every build. The length is mixed in first, so strings
 * that differ only by trailing NULs differ. */
static uint64_t tag_hash_bytes(const void *data, size_t len)
{
    const unsigned char *p = data;
    uint64_t h = 0xcbf29ce484222325u ^ ((uint64_t)len * K_GOLD);
    while (len >= 8) {
        h = hash_step(h, load_le64(p));
        p += 8;
        len -= 8;
    }
    if (len && p != data) {
        h = hash_step(h, load_le64(p + len - 8)); /* the last 8 bytes, overlapping */
    } else if (len) {
        uint64_t w = 0;
        for (size_t i = 0; i < len; i++)
            w |= (uint64_t)p[i] << (8 * i);
        h = hash_step(h, w);
    }
    return hash_mix64(h);
}

static uint64_t group_tag(uint64_t corr_hash)
{
    return hash_mix64(corr_hash ^ K_GROUP_TAG);
}

static uint64_t node_tag(uint64_t group_tag, uint64_t id_hash, uint32_t occurrence)
{
    return hash_mix64(group_tag ^ id_hash ^ (uint64_t)occurrence * K_OCC);
}

/* Keys of the indexes are seeded per forest, so that ids crafted to collide in the
 * (public) tag hash do not also pile up in one probe run. */
static uint64_t group_key(const struct forest *f, uint64_t corr_hash)
{
    return hash_mix64(corr_hash ^ f->seed);
}

static uint64_t id_key(const struct forest *f, uint32_t group, uint64_t id_hash)
{
    return hash_mix64(id_hash ^ f->seed ^ ((uint64_t)group + 1) * K_GOLD);
}

static bool span_eq(const void *a, size_t alen, const void *b, size_t blen)
{
    return alen == blen && (alen == 0 || memcmp(a, b, alen) == 0);
}

/* ---- the index -------------------------------------------------------------------------- */

/* Room for want entries at most two-thirds full; an old table of the right size is reused
 * (a rebuild then touches no fresh pages). */
static void index_alloc(struct tree_index *t, size_t want)
{
    size_t cap = 16;
    while (cap < want + want / 2)
        cap *= 2;
    if (t->slots && (size_t)t->mask + 1 != cap) {
        free(t->slots);
        t->slots = NULL;
    }
    if (!t->slots)
        t->slots = xmalloc(cap * sizeof *t->slots);
    memset(t->slots, 0xff, cap * sizeof *t->slots); /* entry = TREE_NONE */
    t->mask = (uint32_t)(cap - 1);
    t->count = 0;
}

static void index_free(struct tree_index *t)
{
    free(t->slots);
    t->slots = NULL;
    t->mask = 0;
    t->count = 0;
}

/* Inserts without looking: the caller has checked that the key is absent. */
static void index_put(struct tree_index *t, uint64_t key, uint32_t entry)
{
    uint32_t i = (uint32_t)key & t->mask;
    while (t->slots[i].entry != TREE_NONE)
        i = (i + 1) & t->mask;
    t->slots[i].entry = entry;
    t->slots[i].check = (uint32_t)(key >> 32);
    t->count++;
}

typedef uint64_t (*tree_key_fn)(const struct forest *f, uint32_t entry);

/* Doubles the index when it is over 70% full; key_of gives the key of an entry again (a
 * rare event, not worth keeping every key around for). */
static void index_reserve(const struct forest *f, struct tree_index *t, tree_key_fn key_of)
{
    size_t cap = (size_t)t->mask + 1;
    if ((size_t)t->count + 1 <= cap / 10 * 7)
        return;
    struct tree_slot *old = t->slots;
    t->slots = NULL;
    index_alloc(t, cap + cap / 3); /* twice cap */
    for (size_t i = 0; i < cap; i++)
        if (old[i].entry != TREE_NONE)
            index_put(t, key_of(f, old[i].entry), old[i].entry);
    free(old);
}

/* Candidates for key, one at a time: *pos starts as TREE_NONE; returns TREE_NONE at the end
 * of the probe run. The caller compares the actual bytes. */
static uint32_t index_next(const struct tree_index *t, uint64_t key, uint32_t *pos)
{
    if (!t->slots)
        return TREE_NONE;
    uint32_t check = (uint32_t)(key >> 32);
    uint32_t i = *pos == TREE_NONE ? (uint32_t)key & t->mask : (*pos + 1) & t->mask;
    for (;; i = (i + 1) & t->mask) {
        if (t->slots[i].entry == TREE_NONE) {
            *pos = i;
            return TREE_NONE;
        }
        if (t->slots[i].check == check) {
            *pos = i;
            return t->slots[i].entry;
        }
    }
}

static uint32_t group_lookup(const struct forest *f, uint64_t key, const void *corr, size_t len)
{
    uint32_t pos = TREE_NONE, g;
    while ((g = index_next(&f->by_group, key, &pos)) != TREE_NONE) {
        const struct tree_group *gr = &f->groups[g];
        if (span_eq(gr->correlation, gr->correlation_len, corr, len))
            return g;
    }
    return TREE_NONE;
}

static uint32_t id_lookup(const struct forest *f, uint64_t key, uint32_t group, const void *id,
                          size_t len)
{
    uint32_t pos = TREE_NONE, v;
    while ((v = index_next(&f->by_id, key, &pos)) != TREE_NONE) {
        if (f->group[v] == group && span_eq(f->id[v], f->id_len[v], id, len))
            return v;
    }
    return TREE_NONE;
}

/* ---- building --------------------------------------------------------------------------- */

void tree_init(struct forest *f)
{
    memset(f, 0, sizeof *f);
}

/* The per-node arrays, for growing and freeing them together. */
/* clang-format off */
#define NODE_ARRAYS(X)                                                                          \
    X(id) X(id_len) X(tag) X(parent) X(first_child) X(next_sibling) X(next_dup)                \
    X(group) X(depth) X(pre) X(size) X(occurrence) X(flags) X(order)
/* clang-format on */

void tree_free(struct forest *f)
{
#define X(a) free(f->a);
    NODE_ARRAYS(X)
#undef X
    free(f->groups);
    index_free(&f->by_group);
    index_free(&f->by_id);
    tree_init(f);
}

static void nodes_reserve(struct forest *f, size_t need)
{
    if (need <= f->node_cap)
        return;
    size_t cap = need + need / 8 + 16;
#define X(a) f->a = xrealloc(f->a, cap * sizeof *f->a);
    NODE_ARRAYS(X)
#undef X
    f->node_cap = cap;
}

/* At a million messages the indexes and the id bytes are beyond the caches and each probe
 * would stall on a miss. So each pass hashes a string AHEAD messages in advance, keeps the
 * hash (or key) in a small ring and prefetches the slot it will probe, and build_parents
 * also what the slot names, so that the misses overlap instead of queueing. */
#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif
#define AHEAD 16u
#define RING 64u /* a power of two above 3 * AHEAD */

static const struct tree_slot *first_slot(const struct tree_index *t, uint64_t key)
{
    return &t->slots[(uint32_t)key & t->mask];
}

static uint64_t group_key_of(const struct forest *f, uint32_t g)
{
    return group_key(f, tag_hash_bytes(f->groups[g].correlation, f->groups[g].correlation_len));
}

static uint64_t node_key_of(const struct forest *f, uint32_t v)
{
    return id_key(f, f->group[v], tag_hash_bytes(f->id[v], f->id_len[v]));
}

/* The input: an array of messages, or a function that gives their spans. */
struct tree_in {
    const struct tree_msg *msgs;
    tree_span_fn get;
    void *ctx;
};

static struct tree_span in_span(const struct tree_in *in, uint32_t i, int what)
{
    if (!in->msgs)
        return in->get(in->ctx, i, what);
    const struct tree_msg *m = &in->msgs[i];
    return what == 0 ? m->id : what == 1 ? m->correlation : m->causation;
}

static enum status check_msg(const struct tree_in *in, uint32_t i, struct error *err)
{
    struct tree_span spans[3] = {in_span(in, i, 0), in_span(in, i, 1), in_span(in, i, 2)};
    const struct tree_span *sp[3] = {&spans[0], &spans[1], &spans[2]};
    static const char *const what[3] = {"id", "correlation id", "causation id"};
    for (int k = 0; k < 3; k++) {
        if (sp[k]->len && !sp[k]->data)
            return error_set(err, ST_EINVAL, "message %zu: %s has a length but no data", (size_t)i,
                             what[k]);
        if (sp[k]->len > UINT32_MAX)
            return error_set(err, ST_ERANGE, "message %zu: %s is too long", (size_t)i, what[k]);
    }
    return ST_OK;
}

/* Checks message j (the first look at it) and hashes its correlation id into *h. */
static enum status groups_ahead(struct forest *f, const struct tree_in *in, uint32_t j, uint64_t *h,
                                struct error *err)
{
    enum status st = check_msg(in, j, err);
    if (st != ST_OK)
        return st;
    struct tree_span c = in_span(in, j, 1);
    *h = tag_hash_bytes(c.data, c.len);
    PREFETCH(first_slot(&f->by_group, group_key(f, *h)));
    return ST_OK;
}

/* Groups every message by correlation id; groups in order of first appearance. The index
 * starts at the size the previous build needed (rebuilds are usually of similar sets).
 * The input is checked here too, each message before anything reads it (that saves a
 * sweep over the input). */
static enum status build_groups(struct forest *f, const struct tree_in *in, uint32_t n,
                                uint32_t hint, struct error *err)
{
    uint64_t ring[RING];
    index_alloc(&f->by_group, hint > 64 ? hint : 64);
    enum status st = ST_OK;
    for (uint32_t j = 0; j < n && j < AHEAD && st == ST_OK; j++)
        st = groups_ahead(f, in, j, &ring[j % RING], err);
    for (uint32_t i = 0; i < n && st == ST_OK; i++) {
        if (i + AHEAD < n &&
            (st = groups_ahead(f, in, i + AHEAD, &ring[(i + AHEAD) % RING], err)) != ST_OK)
            break;
        struct tree_span corr = in_span(in, i, 1), id = in_span(in, i, 0);
        const struct tree_span *c = &corr;
        uint64_t h = ring[i % RING], key = group_key(f, h);
        uint32_t g = group_lookup(f, key, c->data, c->len);
        if (g == TREE_NONE) {
            g = f->n_groups++;
            xgrow((void **)&f->groups, &f->group_cap, f->n_groups, sizeof *f->groups);
            struct tree_group *gr = &f->groups[g];
            gr->correlation = c->data;
            gr->correlation_len = c->len;
            gr->tag = group_tag(h);
            gr->first_root = TREE_NONE;
            gr->n_roots = gr->n_messages = gr->n_nodes = gr->pre = 0;
            index_reserve(f, &f->by_group, group_key_of);
            index_put(&f->by_group, key, g);
        }
        f->groups[g].n_messages++;
        f->tag[i] = f->groups[g].tag; /* for build_ids, which reads it in order */
        f->group[i] = g;
        f->id[i] = id.data;
        f->id_len[i] = (uint32_t)id.len;
    }
    return st;
}

static uint64_t ids_ahead(struct forest *f, uint32_t j)
{
    uint64_t h = tag_hash_bytes(f->id[j], f->id_len[j]);
    PREFETCH(first_slot(&f->by_id, id_key(f, f->group[j], h)));
    return h;
}

/* Indexes every message by (group, id); later copies join the first one's dup chain.
 * last[first] is the tail of that chain; first_of[i] the first node with i's id. */
static void build_ids(struct forest *f, uint32_t *last, uint32_t *first_of, uint32_t n)
{
    uint64_t ring[RING];
    for (uint32_t j = 0; j < n && j < AHEAD; j++)
        ring[j % RING] = ids_ahead(f, j);
    for (uint32_t i = 0; i < n; i++) {
        if (i + AHEAD < n)
            ring[(i + AHEAD) % RING] = ids_ahead(f, i + AHEAD);
        uint64_t h = ring[i % RING], key = id_key(f, f->group[i], h);
        uint32_t first = id_lookup(f, key, f->group[i], f->id[i], f->id_len[i]);
        f->next_dup[i] = TREE_NONE;
        f->occurrence[i] = 0;
        f->flags[i] = 0;
        if (first == TREE_NONE) {
            index_put(&f->by_id, key, i);
            last[i] = first_of[i] = i;
        } else {
            first_of[i] = first;
            uint32_t tail = last[first];
            f->next_dup[tail] = i;
            last[first] = i;
            f->occurrence[i] = f->occurrence[tail] + 1;
            /* Messages without an id are not copies of each other; they still get
             * distinct occurrences so that their tags differ. */
            if (f->id_len[i])
                f->flags[i] = TREE_DUPLICATE;
        }
        f->tag[i] = node_tag(f->tag[i], h, f->occurrence[i]);
    }
}

/* build_parents looks at message j three times before it links it: stage 0 hashes its
 * cause and prefetches the slot; stage 1 (the slot now in cache) prefetches the node the
 * slot names; stage 2 prefetches that node's id bytes, which the lookup will compare. */
static uint64_t parents_stage0(struct forest *f, const struct tree_in *in, uint32_t j)
{
    struct tree_span c = in_span(in, j, 2);
    const struct tree_span *cause = &c;
    f->parent[j] = TREE_NONE;
    if (!cause->len)
        return 0;
    uint64_t key = id_key(f, f->group[j], tag_hash_bytes(cause->data, cause->len));
    PREFETCH(first_slot(&f->by_id, key));
    return key;
}

static void parents_stage(const struct forest *f, const struct tree_in *in, uint32_t j,
                          uint64_t key, int stage)
{
    if (!in_span(in, j, 2).len)
        return;
    uint32_t e = first_slot(&f->by_id, key)->entry;
    if (e == TREE_NONE)
        return;
    if (stage == 1) {
        PREFETCH(&f->id[e]);
        PREFETCH(&f->id_len[e]);
        PREFETCH(&f->group[e]);
    } else {
        PREFETCH(f->id[e]);
    }
}

static uint32_t placeholder_add(struct forest *f, const struct tree_span *id, uint32_t g,
                                uint64_t h, uint64_t key)
{
    uint32_t p = f->n_nodes++;
    nodes_reserve(f, f->n_nodes);
    f->id[p] = id->data;
    f->id_len[p] = (uint32_t)id->len;
    f->tag[p] = node_tag(f->groups[g].tag, h, 0);
    f->parent[p] = f->next_dup[p] = TREE_NONE;
    f->group[p] = g;
    f->occurrence[p] = 0;
    f->flags[p] = TREE_PLACEHOLDER;
    index_reserve(f, &f->by_id, node_key_of);
    index_put(&f->by_id, key, p);
    return p;
}

/* Sets each message's parent, creating placeholders for causes missing from the group.
 * A cause that is the message's own id finds the first copy of the message in the index
 * (build_ids left it in pre[], which placeholders may move: hence no cached pointer), so
 * the bytes need not be compared twice. */
static void build_parents(struct forest *f, const struct tree_in *in, uint32_t n)
{
    uint64_t ring[RING]; /* keys, by message */
    for (uint32_t j = 0; j < n && j < 3 * AHEAD; j++)
        ring[j % RING] = parents_stage0(f, in, j);
    for (uint32_t i = 0; i < n; i++) {
        if (i + 3 * AHEAD < n)
            ring[(i + 3 * AHEAD) % RING] = parents_stage0(f, in, i + 3 * AHEAD);
        if (i + 2 * AHEAD < n)
            parents_stage(f, in, i + 2 * AHEAD, ring[(i + 2 * AHEAD) % RING], 1);
        if (i + AHEAD < n)
            parents_stage(f, in, i + AHEAD, ring[(i + AHEAD) % RING], 2);
        struct tree_span c = in_span(in, i, 2);
        const struct tree_span *cause = &c;
        if (!cause->len)
            continue;
        uint32_t g = f->group[i];
        uint64_t key = ring[i % RING];
        uint32_t p = id_lookup(f, key, g, cause->data, cause->len);
        if (p == TREE_NONE)
            p = placeholder_add(f, cause, g, tag_hash_bytes(cause->data, cause->len), key);
        if (p == f->pre[i])
            f->flags[i] |= TREE_SELF_CAUSED;
        else
            f->parent[i] = p;
    }
}

/* Parent links form a graph where every node has at most one out-edge, so a walk up from
 * any node either reaches a root or runs into a cycle. Each walk stamps the nodes it passes;
 * meeting its own stamp means a cycle, meeting an older stamp means known ground. Every
 * node is passed at most twice in all. Placeholders never have a parent. */
static void build_break_cycles(struct forest *f, uint32_t *mark, uint32_t n)
{
    memset(mark, 0, (size_t)n * sizeof *mark);
    for (uint32_t s = 0; s < n; s++) {
        if (mark[s])
            continue;
        uint32_t stamp = s + 1, v = s;
        while (v < n && !mark[v]) {
            mark[v] = stamp;
            v = f->parent[v];
        }
        if (v >= n || mark[v] != stamp)
            continue;
        /* v is on a cycle: its earliest member in input order becomes the root. */
        uint32_t first = v;
        for (uint32_t u = f->parent[v]; u != v; u = f->parent[u])
            if (u < first)
                first = u;
        f->parent[first] = TREE_NONE;
        f->flags[first] |= TREE_CYCLE_BROKEN;
    }
}

static void link_append(struct forest *f, uint32_t *head, uint32_t *last, uint32_t v)
{
    if (*last == TREE_NONE)
        *head = v;
    else
        f->next_sibling[*last] = v;
    *last = v;
}

/* Child and root lists in input order; a placeholder takes its place among the roots where
 * its first child would have been. */
static void build_links(struct forest *f, uint32_t *last_child, uint32_t n)
{
    uint32_t *last_root = xmalloc(((size_t)f->n_groups + 1) * sizeof *last_root);
    for (uint32_t g = 0; g < f->n_groups; g++)
        last_root[g] = TREE_NONE;
    for (uint32_t v = 0; v < f->n_nodes; v++)
        last_child[v] = f->first_child[v] = f->next_sibling[v] = TREE_NONE;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t g = f->group[i], p = f->parent[i], root = TREE_NONE;
        if (p == TREE_NONE)
            root = i;
        else if (p >= n && last_child[p] == TREE_NONE)
            root = p; /* a placeholder, at its first child */
        if (root != TREE_NONE) {
            link_append(f, &f->groups[g].first_root, &last_root[g], root);
            f->groups[g].n_roots++;
            f->n_roots++;
        }
        if (p != TREE_NONE)
            link_append(f, &f->first_child[p], &last_child[p], i);
    }
    free(last_root);
}

/* Pre-order numbering, depth and subtree sizes, without a stack: parent and sibling links
 * are enough to find the way back up. */
static void build_order(struct forest *f)
{
    uint32_t pos = 0;
    for (uint32_t g = 0; g < f->n_groups; g++) {
        struct tree_group *gr = &f->groups[g];
        gr->pre = pos;
        for (uint32_t r = gr->first_root; r != TREE_NONE; r = f->next_sibling[r]) {
            uint32_t v = r, depth = 0;
            bool done = false;
            while (!done) {
                f->pre[v] = pos;
                f->depth[v] = depth;
                f->order[pos++] = v;
                if (f->first_child[v] != TREE_NONE) {
                    v = f->first_child[v];
                    depth++;
                    continue;
                }
                for (;;) { /* close finished subtrees on the way up */
                    f->size[v] = pos - f->pre[v];
                    if (v == r) {
                        done = true;
                        break;
                    }
                    if (f->next_sibling[v] != TREE_NONE) {
                        v = f->next_sibling[v];
                        break;
                    }
                    v = f->parent[v];
                    depth--;
                }
            }
        }
        gr->n_nodes = pos - gr->pre;
    }
    assert(pos == f->n_nodes); /* every node hangs off a root once cycles are broken */
}

static enum status build(struct forest *f, const struct tree_in *in, size_t n, struct error *err)
{
    /* Keep the arrays (and their pages) for reuse; forget the contents. */
    uint32_t prev_groups = f->n_groups;
    f->n_nodes = f->n_messages = f->n_groups = f->n_roots = 0;
    if (n > TREE_MAX_MESSAGES)
        return error_set(err, ST_ERANGE, "%zu messages is more than a forest can hold", n);
    uint32_t nm = (uint32_t)n;
    int anchor;
    f->seed = hash_mix64((uint64_t)clock_now_ms() ^ (uint64_t)(uintptr_t)&anchor);
    nodes_reserve(f, (size_t)nm + nm / 16 + 1); /* room for some placeholders */
    f->n_messages = f->n_nodes = nm;

    index_alloc(&f->by_id, (size_t)nm + nm / 16);

    enum status st = build_groups(f, in, nm, prev_groups < nm ? prev_groups : nm, err);
    if (st != ST_OK) {
        f->n_nodes = f->n_messages = f->n_groups = 0;
        return st;
    }
    /* depth[] and pre[] are only filled by the last pass, so until then they are scratch
     * (dup chain tails, cycle stamps, last children; first copies): no allocation per
     * build. */
    build_ids(f, f->depth, f->pre, nm);
    build_parents(f, in, nm);
    build_break_cycles(f, f->depth, nm);
    build_links(f, f->depth, nm);
    build_order(f);
    error_clear(err);
    return ST_OK;
}

enum status tree_build(struct forest *f, const struct tree_msg *msgs, size_t n, struct error *err)
{
    struct tree_in in = {msgs, NULL, NULL};
    return build(f, &in, n, err);
}

enum status tree_build_from(struct forest *f, tree_span_fn get, void *ctx, size_t n,
                            struct error *err)
{
    struct tree_in in = {NULL, get, ctx};
    return build(f, &in, n, err);
}

/* ---- queries ---------------------------------------------------------------------------- */

size_t tree_ancestors(const struct forest *f, uint32_t node, uint32_t *out, size_t cap)
{
    size_t k = 0;
    for (uint32_t v = node; v != TREE_NONE; v = f->parent[v], k++)
        if (k < cap)
            out[k] = v;
    return k;
}

const uint32_t *tree_descendants(const struct forest *f, uint32_t node, size_t *count)
{
    *count = f->size[node] - 1;
    return f->order + f->pre[node] + 1;
}

uint32_t tree_group_find(const struct forest *f, const void *corr, size_t corr_len)
{
    if (!f->n_groups)
        return TREE_NONE;
    uint64_t key = group_key(f, tag_hash_bytes(corr, corr_len));
    return group_lookup(f, key, corr, corr_len);
}

/* tree_find on a compacted forest: the group's nodes with the id, the lowest numbers (input
 * order) first. */
static size_t find_in_group(const struct forest *f, uint32_t g, const void *id, size_t id_len,
                            uint32_t *out, size_t cap)
{
    const struct tree_group *gr = &f->groups[g];
    size_t k = 0;
    for (uint32_t i = gr->pre; i < gr->pre + gr->n_nodes; i++) {
        uint32_t v = f->order[i];
        if (!span_eq(f->id[v], f->id_len[v], id, id_len))
            continue;
        size_t at = k < cap ? k : cap; /* insert v in order among the first cap */
        while (at > 0 && out[at - 1] > v)
            at--;
        if (at < cap) {
            size_t move = (k < cap ? k : cap - 1) - at;
            memmove(out + at + 1, out + at, move * sizeof *out);
            out[at] = v;
        }
        k++;
    }
    return k;
}

size_t tree_find(const struct forest *f, const void *corr, size_t corr_len, const void *id,
                 size_t id_len, uint32_t *out, size_t cap)
{
    uint32_t g = tree_group_find(f, corr, corr_len);
    if (g == TREE_NONE)
        return 0;
    if (!f->next_dup)
        return find_in_group(f, g, id, id_len, out, cap);
    uint32_t v = id_lookup(f, id_key(f, g, tag_hash_bytes(id, id_len)), g, id, id_len);
    size_t k = 0;
    for (; v != TREE_NONE; v = f->next_dup[v], k++)
        if (k < cap)
            out[k] = v;
    return k;
}

uint32_t tree_find_tagged(const struct forest *f, const void *corr, size_t corr_len, const void *id,
                          size_t id_len, uint64_t tag)
{
    uint32_t g = tree_group_find(f, corr, corr_len);
    if (g == TREE_NONE)
        return TREE_NONE;
    const struct tree_group *gr = &f->groups[g];
    for (uint32_t i = gr->pre; i < gr->pre + gr->n_nodes; i++) {
        uint32_t v = f->order[i];
        if (f->tag[v] == tag && span_eq(f->id[v], f->id_len[v], id, id_len))
            return v;
    }
    return TREE_NONE;
}

void tree_compact(struct forest *f)
{
    index_free(&f->by_id);
    free(f->next_dup);
    free(f->occurrence);
    f->next_dup = f->occurrence = NULL;
    f->node_cap = 0; /* the next build allocates them again */
}

size_t tree_find_id(const struct forest *f, const void *id, size_t id_len, uint32_t *out,
                    size_t cap)
{
    size_t k = 0;
    if (!id_len)
        return 0;
    for (uint32_t i = 0; i < f->n_nodes; i++) {
        uint32_t v = f->order[i];
        if (span_eq(f->id[v], f->id_len[v], id, id_len)) {
            if (k < cap)
                out[k] = v;
            k++;
        }
    }
    return k;
}
