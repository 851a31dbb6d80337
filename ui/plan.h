/*
 * plan: the view that shows what a write will do before it is done, runs it with a progress
 * bar, and shows how it ended (ui/view_plan.c). The lists and the groups open it on the
 * dead letters they show.
 */
#ifndef DLQX_UI_PLAN_H
#define DLQX_UI_PLAN_H

#include <stddef.h>

#include "actions.h"
#include "replay.h"
#include "util.h"

struct app;

enum plan_op { PLAN_REPLAY, PLAN_REISSUE, PLAN_MOVE, PLAN_DELETE };

/* Opens the plan of op on store entries (copied); scope names them for the title ("this
 * message", "group …"). alt/n_alt/alt_scope (may be NULL/0) is the other set `a` switches to
 * (every message shown). Says why on the status line when it cannot (read-only, no broker,
 * entries from several queues). */
void plan_open(struct app *a, enum plan_op op, const size_t *entries, size_t n, const char *scope,
               const size_t *alt, size_t n_alt, const char *alt_scope);
/* R I M D where a view has a message under the cursor: that message, or every row shown. */
int plan_request(struct app *a, enum action act);

extern const struct view_ops view_plan_ops;

/* plan_pass.c: the pace of a pass (P) — copies per second (0: as fast as the broker
 * confirms) and a ramp before them: by default 100/s after the ramp 1,10,100, that default
 * ramp only for a pass larger than it; a ramp given with P always. */
struct plan_pace {
    double rate;
    struct replay_ramp_step ramp[REPLAY_MAX_RAMP];
    size_t n_ramp;
    char ramp_text[80]; /* as given (shown sanitized) */
    bool ramp_given;
};
void plan_pace_init(struct plan_pace *p);
/* "RATE [RAMP]" ("100 1,10,100", "500", "0", "50 1:5,10:50"; "-" for no ramp); false, with
 * the reason on the status line, for anything else (the pace stays as it was). */
bool plan_pace_set(struct app *a, struct plan_pace *p, const char *text);
/* The pace as P shows it to be edited ("100 1,10,100"). */
void plan_pace_text(const struct plan_pace *p, char *out, size_t len);
/* The engine's rate and ramp for a pass of `sendable` copies. */
void plan_pace_opts(const struct plan_pace *p, uint64_t sendable, struct replay_opts *o);
/* "pace: 100 copies/s after a ramp of 10 at 1/s, …: at least 41s" (raw: add_line sanitizes). */
void plan_pace_describe(const struct plan_pace *p, uint64_t sendable, struct strbuf *out);
/* The pass's progress screen: title ("replay the 3,000 shown of orders.dlq"), the bar, the
 * counts, the pace; below the minimum size only that the terminal is too small. */
void plan_progress_draw(struct app *a, const char *title, const struct plan_pace *pace,
                        uint64_t sendable, const struct replay_progress *p);
/* A pass a signal stopped: its summary on standard error (cmd_ui.c shows it once the
 * terminal is restored) and its exit status (a->exit_code, as `dlqx replay` gives it). */
/* Before a pass: whether the journal holds pending intents for QUEUE on this broker (an
 * interrupted run: each copy may have been sent while its dead letter is still in the queue,
 * so sending again makes a duplicate). The first time, says so on the message line with the
 * count and the first ids, and how to resolve them (dlqx journal --reconcile), and returns
 * false: nothing is sent. *warned remembers that it was said: the next y goes on. */
bool plan_pending_check(struct app *a, struct conn *c, const char *queue, bool *warned);
void plan_pass_stopped(struct app *a, const char *op, const struct replay_report *r,
                       const char *journal, size_t missing);

/* The pass as a job (JOB_PASS: job.h): the engine stepped a few milliseconds at a time
 * between keys (replay_step), the progress screen drawn by the plan view meanwhile
 * (plan_pass_draw), p or Space pausing it (plan_pass_pause: the action table's "pass" scope,
 * which the loop uses while a pass runs), Esc or Ctrl-g cancelling it: what is in flight is
 * settled and every outcome journaled (plan_pass_cancel). plan_pass_begin starts it with the
 * set-up rs (its connection and journal become the job's, closed when it ends; rs is left
 * empty) and the options o (copied; what they point to is borrowed until it ends); false, with
 * err, when it could not start (nothing was sent; rs is still the caller's). ended runs once,
 * when the pass is over (finished, cancelled, or at exit), with its report and the journal's
 * path (a signal's summary: plan_pass_stopped). */
struct replay_setup;
typedef void (*plan_pass_end_fn)(struct app *a, void *ctx, const struct replay_report *r,
                                 const char *journal_path);
bool plan_pass_begin(struct app *a, struct replay_setup *rs, const struct replay_opts *o,
                     const char *title, const struct plan_pace *pace, uint64_t sendable,
                     plan_pass_end_fn ended, void *ctx, struct error *err);
bool plan_pass_running(const struct app *a);
void plan_pass_pause(struct app *a);
void plan_pass_cancel(struct app *a);
void plan_pass_draw(struct app *a);

#endif
