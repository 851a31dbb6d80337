/*
 * groups: failures grouped by a fingerprint of their error, and the arrivals timeline.
 *
 * The fingerprint is the error with its variable parts normalised away — numbers, durations,
 * UUIDs and hex ids, mixed letter-and-digit ids, quoted values, IP and e-mail addresses,
 * URLs' variable parts, ISO timestamps — while the exception class and the message's words
 * stay. A group is every entry with the same fingerprint and the same type: this is how a
 * person sees that 40,000 dead letters are three bugs. Errors the broker made ("dead-lettered
 * by the broker: REASON from QUEUE") are kept verbatim, so they group by reason and queue.
 *
 * The timeline is a histogram of arrivals over time with its peak and its trend ("is it still
 * going?"), rendered into plain text for any view.
 *
 * Times come from a pluggable accessor (entry_time_fn): the store records when a message was
 * first seen (first_seen_ms) and fetched (fetched_at_ms); the moment it was dead-lettered is
 * what a DLQ timeline wants, and the accessor is where that plugs in.
 *
 * The fingerprint and the group's key, pure text work on one error, are groups_fingerprint.h's
 * (the filter needs them and not the groups).
 *
 * Ownership: groups_build returns groups the caller frees with groups_free; every pointer in a
 * struct group is owned by the groups and valid until groups_free. Store refs (type, queues)
 * need the store they were built from. A struct timeline owns its counts (timeline_free).
 */
#ifndef DLQX_GROUPS_H
#define DLQX_GROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "groups_fingerprint.h"
#include "store.h"
#include "util.h"

/* ---- time of an entry ---- */

/* Epoch milliseconds of entry i for a timeline or a group's first/last (<= 0: unknown, left
 * out). ctx is the caller's. */
typedef int64_t (*entry_time_fn)(const struct store *s, size_t i, void *ctx);

/* The accessors the store supports today. */
int64_t entry_time_first_seen(const struct store *s, size_t i, void *ctx);
int64_t entry_time_fetched(const struct store *s, size_t i, void *ctx);
/* When it was dead-lettered where the message says (BabelQueue's failed_at, the newest
 * x-death time), else when it was first seen: the arrival time the timeline shows. */
int64_t entry_time_dead_at(const struct store *s, size_t i, void *ctx);

/* ---- groups ---- */

struct group_queue {
    store_ref queue; /* in the store */
    uint32_t count;
};

struct group {
    uint64_t fingerprint;  /* error_fingerprint of the error */
    uint64_t group_key;    /* group_key of the fingerprint and the type: the group's name */
    const char *key;       /* the normalised error ("" for messages without one) */
    const char *exception; /* "" when not recognised */
    const char *type;      /* the message type, as text */
    store_ref type_ref;    /* the same, in the store */
    bool from_broker;      /* the broker made the error: grouped by reason and queue */
    uint32_t count;
    int64_t first_ms, last_ms; /* min and max of the time accessor (0: none known) */
    int64_t first_fetched_ms, last_fetched_ms; /* when dlqx took them (0: unknown) */
    const struct group_queue *queues;          /* by count, descending, then by first appearance */
    size_t n_queues;
    uint32_t example;        /* an entry: the latest by the time accessor (ties: lowest) */
    const uint32_t *members; /* count entry indices, ascending */
};

struct groups_options {
    entry_time_fn time; /* NULL: entry_time_first_seen */
    void *time_ctx;
    /* Group only these entries (borrowed; indices into the store). NULL: every entry. */
    const uint32_t *indices;
    size_t n_indices;
};

struct groups;

/* O(n) in the entries (each distinct error text is fingerprinted once). opt may be NULL.
 * Groups are sorted by count (descending), then last_ms (latest first), then key and type. */
struct groups *groups_build(const struct store *s, const struct groups_options *opt);
void groups_free(struct groups *g);

/* The same build in steps, for a caller that must stay responsive (a million entries take
 * ~0.1 s): groups_builder_new takes what groups_build takes (opt's index list is BORROWED
 * until finish or free; the store must not be freed meanwhile, but may grow: entries added
 * after groups_builder_new are not grouped), groups_builder_step groups at most max more
 * entries and returns how many are left, groups_builder_finish does the rest and returns the
 * groups (what groups_build would have returned; the builder is consumed), and
 * groups_builder_free abandons a build. */
struct groups_builder;
struct groups_builder *groups_builder_new(const struct store *s, const struct groups_options *opt);
size_t groups_builder_step(struct groups_builder *b, size_t max);
size_t groups_builder_done(const struct groups_builder *b);  /* entries looked at */
size_t groups_builder_total(const struct groups_builder *b); /* of these */
struct groups *groups_builder_finish(struct groups_builder *b);
void groups_builder_free(struct groups_builder *b);

size_t groups_count(const struct groups *g);
const struct group *groups_at(const struct groups *g, size_t k);
/* The group entry i fell into (an index for groups_at), or SIZE_MAX when it was not grouped. */
size_t groups_of_entry(const struct groups *g, size_t i);
/* How many entries were grouped. */
size_t groups_total(const struct groups *g);

/* A filter that selects the group: `group=g:…` (see filter.h), appended to out. */
void group_filter_expr(const struct group *grp, struct strbuf *out);

/* ---- timeline ---- */

enum timeline_trend {
    TREND_NONE,    /* nothing dated */
    TREND_QUIET,   /* nothing in the recent buckets: it has stopped */
    TREND_FALLING, /* the recent rate is under half the average */
    TREND_STEADY,
    TREND_RISING, /* the recent rate is over one and a half times the average */
};

const char *timeline_trend_name(enum timeline_trend t);

struct timeline {
    int64_t start_ms; /* of bucket 0, aligned to a multiple of bucket_ms (UTC) */
    int64_t bucket_ms;
    size_t n;            /* buckets */
    uint32_t *counts;    /* n counts (owned) */
    uint64_t total;      /* dated entries counted */
    uint64_t undated;    /* entries whose time is unknown (<= 0), or older than a caller's
                            bucket_ms can reach in 100,000 buckets */
    size_t peak;         /* bucket with the most (the earliest of equals) */
    size_t first, last;  /* first and last non-empty buckets (0 when total is 0) */
    double recent_rate;  /* arrivals per bucket over the recent window */
    double average_rate; /* per bucket from the first arrival to the end */
    enum timeline_trend trend;
    bool still_going; /* something arrived in the recent window */
};

struct timeline_options {
    int64_t bucket_ms;  /* 0: the smallest of 1m 5m 15m 30m 1h 3h 6h 12h 1d 1w 30d 365d
                           that fits max_buckets, else whole days */
    size_t max_buckets; /* for the automatic choice (0: 60) */
    int64_t now_ms;     /* > 0: the timeline runs up to now, so a quiet end shows */
    size_t window;      /* recent buckets for the trend (0: 3) */
    entry_time_fn time; /* NULL: entry_time_first_seen */
    void *time_ctx;
    const uint32_t *indices; /* only these entries (NULL: all) */
    size_t n_indices;
};

/* Builds the histogram (opt may be NULL). An empty store gives n == 0 and TREND_NONE. */
void timeline_build(const struct store *s, const struct timeline_options *opt,
                    struct timeline *out);
void timeline_free(struct timeline *t);
/* The same build in steps, for a caller that must stay responsive (ten million entries take
 * ~0.25 s): timeline_begin takes what timeline_build takes (opt is copied, its index list
 * BORROWED until the last step; the store may grow meanwhile: entries added after
 * timeline_begin are not counted), timeline_step looks at most max more entries and returns
 * how many looks are left (two a entry: the span, then the counts; 0: out is made, what
 * timeline_build would have made). A plain value: nothing to free but out. */
struct timeline_builder {
    const struct store *s;
    struct timeline_options opt;
    struct timeline *out;
    size_t count, k;
    int pass; /* 0: the span; 1: the counts; 2: done */
    int64_t lo, hi;
};
void timeline_begin(struct timeline_builder *b, const struct store *s,
                    const struct timeline_options *opt, struct timeline *out);
size_t timeline_step(struct timeline_builder *b, size_t max);

enum timeline_render_flag {
    TIMELINE_ASCII = 1u << 0, /* " .:-=+*#@" instead of the block characters */
};

/* Two lines into out (appended): a sparkline of at most width columns (buckets merged when
 * there are more), and a legend: span, bucket size, total, peak and trend. */
void timeline_render(const struct timeline *t, size_t width, unsigned flags, struct strbuf *out);

#endif
