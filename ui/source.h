/*
 * source: where the explorer's messages come from, behind one interface the loop steps
 * (ncdu's dir_output, which joins a filesystem scan and a JSON import; tmux's modes):
 * snapshot files (source_file.c) and a live peek of a broker's queues (source_peek.c). A
 * source starts into a fresh store (the app's), then reads a slice at a time between keys —
 * the loop gives it the rest of each slice the jobs leave (job.c) — so the first screen shows
 * as soon as there is a screenful and every key is answered while it reads. Stopping it keeps
 * what was read; a peek gives every message back to its queue as it stops. Adding a source is a
 * new file and its ops, never a switch elsewhere.
 *
 * Ownership: the app owns its source (a->src: the ops and their state), set once by cmd_ui.c
 * and freed by app_source_free; the state is the source's own, released by ops->free (which
 * stops a source still reading). The store a source fills is the app's.
 */
#ifndef DLQX_UI_SOURCE_H
#define DLQX_UI_SOURCE_H

#include <stdbool.h>

#include "util.h"

struct app;
struct peek_queue_info;

struct source_ops {
    const char *name; /* "files", "broker" */
    /* Whether the queues view lists the broker's queues (and Enter peeks them) rather than the
     * queues of the messages in the store; a broker is also what a pass writes to. */
    bool broker;
    /* Starts reading (again) into a fresh store: false, with the reason on the message line,
     * when nothing is being read. */
    bool (*start)(struct app *a, void *state);
    /* Reads until the monotonic clock (clock_mono_s) passes until or a key is waiting (a few
     * milliseconds past it at most); false when it has finished (it then said how on the
     * message line, and the rows are complete). */
    bool (*step)(struct app *a, void *state, double until);
    /* Stops reading; what was read is kept, and a peek gives every message back. True when
     * it goes on for a while (the giving back, in steps) and then ends as a step does. */
    bool (*cancel)(struct app *a, void *state);
    /* The progress line while it reads ("reading… 523,000 messages (65,000/s)  Esc stops"). */
    void (*status)(struct app *a, void *state, struct strbuf *out);
    /* What the title names as the source: the file, the broker, the queues peeked. */
    const char *(*label)(const struct app *a, void *state);
    void (*free)(struct app *a, void *state);
};

struct app_source {
    const struct source_ops *ops;
    void *state;
    bool running; /* between a start and the step that finished it, or a cancel */
    bool stopped; /* stopped before its end (a cancel, or an error): the set is partial */
};

/* The snapshot files named (copied); nothing is read until app_source_start. */
void *source_file_new(char *const *files, int n);
extern const struct source_ops source_file_ops;
/* A broker (a->broker); label: what the title shows before a queue is opened (copied). */
void *source_peek_new(const char *label);
extern const struct source_ops source_peek_ops;
/* Opens the queues (copied) on a broker source: a fresh store, filled a slice at a time by a
 * peek of each in turn (a causal chain across them is one tree). False, with the reason on
 * the message line, when the broker or the first queue cannot be read. */
bool source_peek_open(struct app *a, char *const *queues, int n);
/* The queues opened on a broker source (borrowed): how many, 0 when none (or files). */
int source_peek_queues(const struct app *a, char *const **queues);

/* source.c: the app's side. */
void app_source_set(struct app *a, const struct source_ops *ops, void *state);
bool app_source_start(struct app *a);
bool app_source_busy(const struct app *a);
/* One slice; false when there is nothing (more) to read. */
bool app_source_step(struct app *a, double until);
/* Stops the source when it reads: false when it did not. */
bool app_source_cancel(struct app *a);
/* The last reading stopped before its end (cancelled, or failed: for a broker, any queue not
 * read to its end): what is shown is partial, and the title says so until the next reading's
 * fresh store. */
bool app_source_stopped(const struct app *a);
/* For a source's own step: it ended early (an error); see app_source_stopped. */
void app_source_mark_stopped(struct app *a);
void app_source_status(struct app *a, struct strbuf *out);
bool app_source_is_broker(const struct app *a);
void app_source_free(struct app *a);
/* For the sources: a fresh, empty store replaces the app's (false, said, when none can be
 * made), and the title's label. */
bool app_source_fresh_store(struct app *a);
void app_source_relabel(struct app *a);
/* r: read the files again, or snapshot the same queues again (on a broker with no queue
 * opened yet: the views look again). */
void app_refresh(struct app *a);
/* What the management API knows of a queue (type, delivery limit, DLX), when it is there. */
void app_queue_info(struct app *a, const char *queue, struct peek_queue_info *info);

#endif
