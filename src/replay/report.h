/*
 * report: the incident summary `dlqx report` writes — the model (report_build: per queue and
 * per cause, from a store, its failure groups and timelines, and what the journal says was
 * replayed) and its two renderings, markdown (report_markdown, report_md.c) and a
 * self-contained HTML page with inline SVG plots (report_html, report_html.c).
 *
 * The model holds the raw text of the dead letters (queue names, types, errors, ids: any
 * bytes); the renderers sanitise every such string and escape it for their format, so nothing
 * raw reaches the output.
 *
 * "Now" is the caller's (report_as_of: the snapshot's end, or the clock if earlier).
 * "Rate now" and "still going" are the timeline's (groups.h): per-minute buckets up to now, the
 * recent window of the last three minutes; still going means something arrived in it.
 *
 * Ownership: report_build fills a struct report the caller frees with report_free; every
 * string and array in it is owned by it. The store may be freed after report_build.
 */
#ifndef DLQX_REPORT_H
#define DLQX_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "groups.h"
#include "status.h"
#include "store.h"
#include "util.h"

/* The renderers cut a string longer than this many columns (sanitize_fit: "…" at the end). */
#define REPORT_CELL_MAX 300

/* One cause (a failure group) in one queue. */
struct report_cause {
    char key[GROUP_KEY_TEXT];       /* g:… (what --group takes) */
    char *type, *exception, *cause; /* the group's type, exception class, normalised error */
    char *error;                    /* the sample's error, verbatim */
    char *sample_id;                /* the latest dead letter's message id */
    const char *dialect;            /* the framework, as a person writes it (static) */
    bool from_broker;
    uint32_t count;
    int64_t first_ms, last_ms; /* 0: unknown */
    double rate_per_min;       /* over the recent window (the last 3 minutes before now) */
    bool still_going;
};

struct report_queue {
    char *name;
    uint32_t count;
    int64_t first_ms, last_ms;
    double rate_per_min;
    bool still_going;
    struct timeline timeline;    /* the queue's arrivals (automatic buckets, up to now) */
    struct report_cause *causes; /* by count, descending (the groups' order) */
    size_t n_causes;
};

/* What the journal says was done to one source queue. */
struct report_replayed {
    char *source;
    uint64_t runs, ops;           /* run records, intents */
    uint64_t done, kept, unknown; /* outcomes; kept includes refused; unknown: none yet too */
    uint64_t dry_runs;            /* of the runs, dry runs */
};

struct report {
    int64_t now_ms;
    uint64_t total;              /* dead letters */
    struct timeline timeline;    /* all of them */
    struct report_queue *queues; /* by count, descending, then name */
    size_t n_queues;
    char *journal_path;               /* NULL: no journal was looked at */
    bool journal_found;               /* false: "no journal" */
    uint64_t journal_malformed;       /* lines skipped */
    struct report_replayed *replayed; /* by source, in order of first appearance */
    size_t n_replayed;
};

/* Builds the report of every entry of s at now_ms. journal_path NULL: no journal; a missing
 * file is no journal (journal_found false), any other read error fails with err set. */
enum status report_build(const struct store *s, int64_t now_ms, const char *journal_path,
                         struct report *out, struct error *err);
void report_free(struct report *r);

/* The moment a report of s is as of: the snapshot's end (the latest fetched_at) when it is
 * before clock_ms (a snapshot of an hour ago is reported as it was then), else clock_ms. */
int64_t report_as_of(const struct store *s, int64_t clock_ms);

/* The renderings, appended to out. */
void report_markdown(const struct report *r, struct strbuf *out);
void report_html(const struct report *r, struct strbuf *out);
/* The whole way from a store to a rendered report, for every writer of one (dlqx report, the
 * explorer's E): built of s as of clock_ms (report_as_of) with journal_path as report_build
 * takes it, rendered as html or markdown and appended to out; *total (may be NULL) gets how many
 * dead letters it covers. On error nothing is appended and err says why (the journal). */
enum status report_render(const struct store *s, int64_t clock_ms, const char *journal_path,
                          bool html, struct strbuf *out, uint64_t *total, struct error *err);

/* Shared by the renderers: ms as "2026-01-02 03:04:05Z" ("-" when unknown), into out[32]. */
void report_time(int64_t ms, char out[32]);
/* "still going", "stopped", or "no dates" when nothing was dated (last_ms 0). */
const char *report_status(bool still_going, int64_t last_ms);

#endif
