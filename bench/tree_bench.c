/*
 * tree_bench: times tree_build (into a fresh forest, and as a rebuild of one that already
 * has its arrays) and a full render on 10k, 100k and 1M synthetic messages, and prints the
 * cost per message, to show that building the causal forest is linear. Figures only;
 * nothing here passes or fails.
 *
 * The mix: conversations of a few shapes (fan-out, chains up to 30 long, random trees),
 * UUID-like ids, 5% of messages dropped so their children name a missing parent, 1%
 * delivered twice, and delivery order shuffled within a window of 64 so conversations
 * interleave and children often arrive before their parents. TREE_BENCH_N adds one size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "tree.h"
#include "util.h"

#define ID_LEN 36

struct corpus {
    char *arena; /* ID_LEN bytes per generated id */
    struct tree_msg *msgs;
    size_t n;
};

static uint64_t rng_state = 0x853c49e6748fea9bu;

static uint32_t rng(uint32_t n)
{
    rng_state = rng_state * 6364136223846793005u + 1442695040888963407u;
    return (uint32_t)((rng_state >> 33) % n);
}

static void make_uuid(char *out)
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < ID_LEN; i++)
        out[i] = (i == 8 || i == 13 || i == 18 || i == 23) ? '-' : hex[rng(16)];
}

/* n messages (exactly), conversation by conversation, then locally shuffled. */
static void corpus_make(struct corpus *c, size_t n)
{
    rng_state = 0x853c49e6748fea9bu;             /* the same mix for every size */
    c->arena = xmalloc(2 * n * ID_LEN + ID_LEN); /* ids of dropped messages too */
    c->msgs = xcalloc(n, sizeof *c->msgs);
    c->n = 0;
    size_t ids = 0;
    while (c->n < n) {
        const char *corr = c->arena + ids * ID_LEN;
        make_uuid(c->arena + ids++ * ID_LEN);
        uint32_t shape = rng(10), size = 0;
        if (shape < 5)
            size = 2 + rng(12); /* fan-out */
        else if (shape < 8)
            size = 2 + rng(29); /* chain */
        else
            size = 1 + rng(20); /* random tree */
        size_t base = ids;
        for (uint32_t k = 0; k < size && c->n < n; k++) {
            if (ids >= 2 * n)
                break;
            char *id = c->arena + ids++ * ID_LEN;
            make_uuid(id);
            const char *cause = NULL;
            if (k > 0) {
                uint32_t parent = shape < 5 ? (k < 4 ? 0 : rng(4)) : shape < 8 ? k - 1 : rng(k);
                cause = c->arena + (base + parent) * ID_LEN;
            }
            if (rng(100) < 5)
                continue; /* lost: its children name a missing parent */
            int copies = rng(100) < 1 ? 2 : 1;
            for (int d = 0; d < copies && c->n < n; d++) {
                struct tree_msg *m = &c->msgs[c->n++];
                m->id.data = id;
                m->id.len = ID_LEN;
                m->correlation.data = corr;
                m->correlation.len = ID_LEN;
                m->causation.data = cause;
                m->causation.len = cause ? ID_LEN : 0;
            }
        }
    }
    for (size_t i = 0; i + 1 < c->n; i++) {
        size_t w = c->n - i < 64 ? c->n - i : 64;
        size_t j = i + rng((uint32_t)w);
        struct tree_msg t = c->msgs[i];
        c->msgs[i] = c->msgs[j];
        c->msgs[j] = t;
    }
}

static void corpus_free(struct corpus *c)
{
    free(c->arena);
    free(c->msgs);
}

/* CPU time of this thread, not wall time: on a shared machine the wall clock also counts
 * the time spent waiting for a CPU, which says nothing about the algorithm. (Memory shared
 * with busy neighbours still shows.) */
static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* What the forest holds, from its public fields (arrays at their allocated capacity). */
static size_t forest_bytes(const struct forest *f)
{
    size_t per_node = sizeof *f->id + sizeof *f->id_len + sizeof *f->tag + sizeof *f->parent +
                      sizeof *f->first_child + sizeof *f->next_sibling + sizeof *f->next_dup +
                      sizeof *f->group + sizeof *f->depth + sizeof *f->pre + sizeof *f->size +
                      sizeof *f->occurrence + sizeof *f->flags + sizeof *f->order;
    return f->node_cap * per_node + f->group_cap * sizeof *f->groups +
           ((size_t)f->by_id.mask + 1 + (size_t)f->by_group.mask + 1) * sizeof(struct tree_slot);
}

struct result {
    double cold_ns, build_ns, render_ns; /* per message: fresh build, rebuild, render */
};

static double build_once(struct forest *f, const struct corpus *c)
{
    double t0 = now_ns();
    if (tree_build(f, c->msgs, c->n, NULL) != ST_OK) {
        fprintf(stderr, "tree_build failed\n");
        exit(1);
    }
    return now_ns() - t0;
}

static struct result bench_size(size_t n, int reps)
{
    struct corpus c;
    corpus_make(&c, n);
    struct forest f;
    struct result r = {1e300, 1e300, 1e300};
    /* Into a fresh forest each time: allocation and first-touch page faults included. */
    for (int i = 0; i < (reps + 2) / 3; i++) {
        tree_init(&f);
        double t = build_once(&f, &c);
        if (t < r.cold_ns)
            r.cold_ns = t;
        tree_free(&f);
    }
    /* Rebuilding one forest, as a refreshing view does: its arrays are reused. */
    tree_init(&f);
    for (int i = 0; i < reps; i++) {
        double t = build_once(&f, &c);
        if (t < r.build_ns)
            r.build_ns = t;
    }
    struct strbuf sb;
    sb_init(&sb);
    for (int i = 0; i < reps; i++) {
        sb_reset(&sb);
        double t0 = now_ns();
        tree_render(&f, &sb, NULL, NULL, NULL, 0);
        double t = now_ns() - t0;
        if (t < r.render_ns)
            r.render_ns = t;
    }
    r.cold_ns /= (double)n;
    r.build_ns /= (double)n;
    r.render_ns /= (double)n;
    printf("%8zu msgs %8u nodes %6u placeholders %6u groups | fresh build %6.1f ns/msg | "
           "rebuild %7.2f ms %6.1f ns/msg | render %6.1f ns/msg | forest %5.1f MB\n",
           n, (unsigned)f.n_nodes, (unsigned)(f.n_nodes - f.n_messages), (unsigned)f.n_groups,
           r.cold_ns, r.build_ns * (double)n / 1e6, r.build_ns, r.render_ns,
           (double)forest_bytes(&f) / 1e6);
    sb_free(&sb);
    tree_free(&f);
    corpus_free(&c);
    return r;
}

int main(void)
{
    printf("tree_build: causal forest of synthetic dead-lettered messages "
           "(CPU time, best of N runs each)\n");
    struct result r10k = bench_size(10000, 200);
    bench_size(100000, 30);
    struct result r1m = bench_size(1000000, 8);
    printf("per-message ratio 1M / 10k: rebuild %.2f, fresh build %.2f, render %.2f\n",
           r1m.build_ns / r10k.build_ns, r1m.cold_ns / r10k.cold_ns,
           r1m.render_ns / r10k.render_ns);
    /* TREE_BENCH_N: one more size (e.g. 10000000, issue #15), built twice. */
    const char *more = getenv("TREE_BENCH_N");
    if (more && *more) {
        size_t n = (size_t)strtoull(more, NULL, 10);
        if (n > 0) {
            struct result rn = bench_size(n, 2);
            printf("per-message ratio %zu / 1M: rebuild %.2f, fresh build %.2f, render %.2f\n", n,
                   rn.build_ns / r1m.build_ns, rn.cold_ns / r1m.cold_ns,
                   rn.render_ns / r1m.render_ns);
        }
    }
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) == 0)
        printf("peak RSS of the whole run (corpus included): %.1f MB\n",
               (double)ru.ru_maxrss / 1024.0);
    return 0;
}
