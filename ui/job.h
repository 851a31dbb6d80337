/*
 * job: long work done a slice at a time from the loop (ncdu's and tig's lesson: the loop
 * never blocks), with one progress line and one way to stop it. Sorting and filtering a
 * million rows, a search that has to look through all of them, grouping them and building
 * their causal forest are jobs; the source reading its messages (source.h) is not, but the
 * same line and the same key report and stop.
 *
 * At most one job of each kind runs; starting one cancels the one of its kind. A job's first
 * slice runs at once, so that small work (every fixture, most real queues) is finished before
 * the screen is drawn again; what is left advances between keys.
 *
 * Ownership: a job owns its state until its end hook runs (once: finished or cancelled).
 */
#ifndef DLQX_UI_JOB_H
#define DLQX_UI_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

struct app;

/* In the order they are worked on, shown and cancelled: a pass to the broker first (plan.h:
 * it holds dead letters), the search next (the user is waiting for it), the rows next (the
 * groups are made from them); the queues view's refresh from the management API last. */
enum job_kind {
    JOB_PASS,
    JOB_SEARCH,
    JOB_ROWS,
    JOB_GROUPS,
    JOB_TIMELINE,
    JOB_FOREST,
    JOB_QUEUES,
    JOB_KINDS
};

enum job_rc {
    JOB_MORE, /* call again */
    JOB_WAIT, /* waiting on something else (a thread): call again in a while */
    JOB_DONE,
};

struct job;

struct job_ops {
    /* Works until the monotonic clock (clock_mono_s) passes until, or a key is waiting. */
    enum job_rc (*step)(struct app *a, struct job *j, double until);
    /* What it does, for the progress line: "sorting 1,000,000 messages by age". */
    void (*describe)(struct app *a, const struct job *j, struct strbuf *out);
    /* Finished (install the result) or cancelled; releases j->state. */
    void (*end)(struct app *a, struct job *j, bool cancelled);
};

struct job {
    const struct job_ops *ops;
    void *state;
    uint64_t done, total; /* progress; total 0: unknown */
    double started;
};

/* Seconds on the monotonic clock. */
/* Whether a slice should end: the clock passed until, or a key is waiting. */
bool job_yield(double until);

/* Starts a job (cancelling the one of its kind) and runs its first slice. */
void job_start(struct app *a, enum job_kind kind, const struct job_ops *ops, void *state);
/* The state of the job of that kind when it is running with these ops, else NULL. */
void *job_state(const struct app *a, enum job_kind kind, const struct job_ops *ops);
void job_cancel(struct app *a, enum job_kind kind);
/* Ends every job as cancelled (at exit). */
void job_cancel_all(struct app *a);

/* Whether there is work in progress (a job or the source reading). */
bool app_busy(const struct app *a);
/* One slice of the work in progress, about budget_ms; returns JOB_DONE when nothing is left
 * to do, JOB_WAIT when all of it is waiting. *ended is set when something finished (the
 * screen wants a redraw). */
enum job_rc app_work(struct app *a, int budget_ms, bool *ended);
/* Stops the foremost work (the job first shown, else the source); false when there is none. */
bool app_cancel_work(struct app *a);
/* The progress line of the foremost work ("sorting 1,000,000 messages by age… 43%  Esc
 * cancels"); nothing when there is none. */
void app_work_status(struct app *a, struct strbuf *out);
/* The key that stops the work from the view on screen, for the progress lines. */
const char *app_cancel_key(const struct app *a);
/* 1234567 as "1,234,567" into out (at least 32 bytes). */
const char *fmt_thousands(uint64_t n, char *out);

#endif
