/*
 * plan_pass: the pace of a pass from the plan and how the pass is shown — its progress while
 * it runs, and its summary on standard error when a signal stopped it (view_plan.c runs it).
 *
 * The pace is the engine's (replay.h): a rate in copies per second and a ramp before it. The
 * explorer's default is 100 copies a second after the ramp 1,10,100 (10 copies at 1/s, 100 at
 * 10/s, 1,000 at 100/s); that default ramp is used only for a pass larger than it, so that one
 * message or a handful go at once. A ramp given with P is always used.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay_setup.h"
#include "app.h"
#include "job.h"
#include "journal.h"
#include "plan.h"
#include "sanitize.h"
#include "term.h"
#include "util.h"

#define PLAN_RATE 100.0
#define PLAN_RAMP "1,10,100"
#define PLAN_RATE_MAX 1e6

void plan_pace_init(struct plan_pace *p)
{
    memset(p, 0, sizeof *p);
    p->rate = PLAN_RATE;
    struct error err;
    if (replay_ramp_parse(PLAN_RAMP, p->ramp, REPLAY_MAX_RAMP, &p->n_ramp, &err) == ST_OK)
        snprintf(p->ramp_text, sizeof p->ramp_text, "%s", PLAN_RAMP);
    else
        p->n_ramp = 0;
}

/* The ramp's copies in all. */
static uint64_t ramp_copies(const struct plan_pace *p)
{
    uint64_t n = 0;
    for (size_t i = 0; i < p->n_ramp; i++)
        n += p->ramp[i].copies;
    return n;
}

void plan_pace_opts(const struct plan_pace *p, uint64_t sendable, struct replay_opts *o)
{
    o->rate = p->rate;
    bool ramp = p->n_ramp && (p->ramp_given || sendable > ramp_copies(p));
    o->ramp = ramp ? p->ramp : NULL;
    o->n_ramp = ramp ? p->n_ramp : 0;
}

void plan_pace_text(const struct plan_pace *p, char *out, size_t len)
{
    if (p->n_ramp)
        snprintf(out, len, "%.10g %s", p->rate, p->ramp_text);
    else
        snprintf(out, len, "%.10g", p->rate);
}

bool plan_pace_set(struct app *a, struct plan_pace *p, const char *text)
{
    char rate_s[64] = "", ramp_s[80] = "", extra[2] = "";
    int n = sscanf(text, " %63s %79s %1s", rate_s, ramp_s, extra);
    char *end = rate_s;
    double rate = n >= 1 ? strtod(rate_s, &end) : -1;
    if (n < 1 || n > 2 || *end || !(rate >= 0 && rate <= PLAN_RATE_MAX) || rate_s[0] == '-' ||
        rate_s[0] == '+') {
        app_message(a, true,
                    "the pace is RATE [RAMP]: copies per second (0: as fast as the broker "
                    "confirms), then a ramp such as 1,10,100");
        return false;
    }
    struct replay_ramp_step steps[REPLAY_MAX_RAMP];
    size_t n_steps = 0;
    if (n == 2 && strcmp(ramp_s, "-") != 0) {
        struct error err;
        if (replay_ramp_parse(ramp_s, steps, REPLAY_MAX_RAMP, &n_steps, &err) != ST_OK) {
            app_message(a, true, "%s", err.msg);
            return false;
        }
    }
    p->rate = rate;
    memcpy(p->ramp, steps, n_steps * sizeof *steps);
    p->n_ramp = n_steps;
    snprintf(p->ramp_text, sizeof p->ramp_text, "%s", n_steps ? ramp_s : "");
    p->ramp_given = n_steps > 0;
    return true;
}

void plan_pace_describe(const struct plan_pace *p, uint64_t sendable, struct strbuf *out)
{
    struct replay_opts o;
    memset(&o, 0, sizeof o);
    plan_pace_opts(p, sendable, &o);
    if (o.rate > 0)
        sb_addf(out, "pace: %.10g copies/s", o.rate);
    else
        sb_adds(out, "pace: as fast as the broker confirms");
    if (o.n_ramp) {
        sb_adds(out, " after a ramp of");
        for (size_t i = 0; i < o.n_ramp; i++)
            sb_addf(out, "%s %llu at %.10g/s", i ? "," : "", (unsigned long long)o.ramp[i].copies,
                    o.ramp[i].rate);
    } else if (p->n_ramp) {
        sb_addf(out, " (no ramp %s: the pass is not larger than it)", p->ramp_text);
    }
    double t = replay_pace_seconds(&o, sendable);
    char d[32];
    if (t > 0 && t < 10) {
        sb_addf(out, ": at least %.1f s", t);
    } else if (t > 0) {
        duration_format(t, d);
        sb_addf(out, ": at least %s", d);
    }
}

void plan_progress_draw(struct app *a, const char *title, const struct plan_pace *pace,
                        uint64_t sendable, const struct replay_progress *p)
{
    term_size(a);
    if (app_too_small(a)) {
        app_draw_too_small(a);
        return;
    }
    int top = 1, w = a->cols_on_screen;
    for (int y = top; y < a->rows_on_screen - 1; y++)
        draw_fill(y, 0, w, UA_NORMAL);
    draw_textf(top + 1, 2, w - 4, UA_TITLE, "%s — %s%s", title, p->phase,
               p->paused ? " (paused)" : "");
    uint64_t settled = p->done + p->kept + p->unknown;
    int bar = w - 20 > 10 ? w - 20 : 10;
    int filled = p->total ? (int)((double)bar * (double)settled / (double)p->total) : 0;
    struct strbuf sb;
    sb_init(&sb);
    sb_addc(&sb, '[');
    for (int i = 0; i < bar; i++)
        sb_adds(&sb, i < filled ? glyph(a, G_BLOCK) : " ");
    sb_addc(&sb, ']');
    draw_safe(top + 3, 2, w - 4, sb.buf, UA_ACCENT);
    sb_free(&sb);
    char eta[32] = "?";
    if (p->eta_s >= 0)
        duration_format(p->eta_s, eta);
    draw_textf(top + 5, 2, w - 4, UA_NORMAL,
               "read %llu/%llu   done %llu   kept %llu   unknown %llu   in flight %llu",
               (unsigned long long)p->taken, (unsigned long long)p->total,
               (unsigned long long)p->done, (unsigned long long)p->kept,
               (unsigned long long)p->unknown, (unsigned long long)p->in_flight);
    struct replay_opts o;
    memset(&o, 0, sizeof o);
    plan_pace_opts(pace, sendable, &o);
    char paced[160] = "unpaced";
    if (o.rate > 0)
        snprintf(paced, sizeof paced, "pace %.10g/s%s%s", o.rate,
                 o.n_ramp ? " after the ramp " : "", o.n_ramp ? pace->ramp_text : "");
    draw_textf(top + 6, 2, w - 4, UA_NORMAL, "%.0f copies/s (%s)   ETA %s", p->rate, paced, eta);
    draw_textf(top + 8, 2, w - 4, UA_DIM,
               "p pauses   Esc cancels (copies in flight are settled; the rest stays)");
    term_flush();
}

void plan_pass_stopped(struct app *a, const char *op, const struct replay_report *r,
                       const char *journal, size_t missing)
{
    int sig = term_stop_signal();
    struct strbuf sb;
    sb_init(&sb);
    sanitize_append(&sb, r->detail, strlen(r->detail), 0);
    san_eprintf("dlqx %s: stopped by %s: %s in %.2f s\n", op,
                sig == SIGHUP    ? "a hang-up (SIGHUP)"
                : sig == SIGTERM ? "SIGTERM"
                                 : "Ctrl-C (SIGINT)",
                sb.buf ? sb.buf : "", r->seconds);
    for (size_t i = 0; i < r->n_reasons; i++) {
        sb_reset(&sb);
        sanitize_append(&sb, r->reasons[i].text, strlen(r->reasons[i].text), 0);
        san_eprintf("dlqx %s:   %llu × %s\n", op, (unsigned long long)r->reasons[i].n, sb.buf);
    }
    if (r->have_after)
        san_eprintf("dlqx %s: %u ready before, %u after\n", op, r->ready_before, r->ready_after);
    sb_reset(&sb);
    sanitize_append(&sb, journal, strlen(journal), 0);
    san_eprintf("dlqx %s: journal %s, run %s\n", op, sb.buf, r->run_id);
    if (r->unknown)
        san_eprintf("dlqx %s: %llu outcomes are unknown (possible duplicates, never losses): dlqx "
                    "journal --pending\n",
                    op, (unsigned long long)r->unknown);
    sb_free(&sb);
    a->exit_code = replay_exit_code(r, missing);
}

bool plan_pending_check(struct app *a, struct conn *c, const char *queue, bool *warned)
{
    if (*warned)
        return true;
    char *jpath = journal_default_path();
    json_t *pend = replay_pending_for(jpath, a->broker, c, queue, NULL);
    free(jpath);
    size_t n = json_array_size(pend);
    if (n) {
        struct strbuf ids;
        sb_init(&ids);
        replay_pending_ids(pend, 3, &ids);
        app_message(a, true,
                    "nothing sent: %zu %s of an interrupted run pending here (dlqx journal "
                    "--reconcile); y sends anyway, maybe twice: %s",
                    n, n == 1 ? "intent" : "intents", ids.buf ? ids.buf : "");
        sb_free(&ids);
        *warned = true;
    }
    json_decref(pend);
    return n == 0;
}

/* ---- the pass as a job ------------------------------------------------------------------ */

/* A pass under way (JOB_PASS): the engine stepped a few milliseconds at a time between keys,
 * its progress as the engine last said it, and what to do when it ends. */
struct pass_job {
    struct replay *p;
    struct replay_opts o; /* the caller's, with our progress callback; borrowed by p */
    /* the caller's options, for their callbacks and their ctx: the engine gives all of them
     * one ctx, ours */
    struct replay_opts theirs;
    struct replay_setup rs; /* the connection and the journal: closed when it ends */
    char *title;
    const struct plan_pace *pace;
    uint64_t sendable;
    size_t planned;
    struct replay_progress last;
    bool have_last, paused;
    plan_pass_end_fn ended;
    void *ctx;
};

static enum replay_ctl pass_progress(void *ctx, const struct replay_progress *p)
{
    struct pass_job *pj = ctx;
    pj->last = *p;
    pj->have_last = true;
    if (pj->theirs.progress)
        pj->theirs.progress(pj->theirs.ctx, p);
    /* SIGINT, SIGTERM, SIGHUP: cancelled as Esc does (what is in flight is settled). */
    if (term_stop_signal())
        return RC_CANCEL;
    return pj->paused ? RC_PAUSE : RC_GO;
}

static enum replay_action pass_select(void *ctx, const struct message *m, uint64_t position,
                                      struct outgoing *out, char *why, size_t whylen)
{
    struct pass_job *pj = ctx;
    return pj->theirs.select(pj->theirs.ctx, m, position, out, why, whylen);
}

static void pass_outcome(void *ctx, uint64_t seq, uint64_t position, const struct bytes *old_id,
                         enum journal_result res, const char *reason)
{
    struct pass_job *pj = ctx;
    if (pj->theirs.outcome)
        pj->theirs.outcome(pj->theirs.ctx, seq, position, old_id, res, reason);
}

static void pass_again(void *ctx, const struct bytes *old_id, const char sha256_hex[65])
{
    struct pass_job *pj = ctx;
    if (pj->theirs.again)
        pj->theirs.again(pj->theirs.ctx, old_id, sha256_hex);
}

static void pass_confirmed_again(void *ctx, const struct bytes *old_id, const char sha256_hex[65],
                                 uint64_t position)
{
    struct pass_job *pj = ctx;
    if (pj->theirs.confirmed_again)
        pj->theirs.confirmed_again(pj->theirs.ctx, old_id, sha256_hex, position);
}

static enum job_rc pass_step(struct app *a, struct job *j, double until)
{
    struct pass_job *pj = j->state;
    (void)a;
    /* Slices of a few milliseconds: a key waits for one at most. */
    do {
        double slice = clock_mono_s() + 0.003;
        if (!replay_step(pj->p, slice < until ? slice : until))
            return JOB_DONE;
    } while (!job_yield(until));
    const struct replay_report *r = replay_report_now(pj->p);
    j->done = r->done + r->kept + r->unknown;
    j->total = pj->planned;
    return JOB_MORE;
}

static void pass_describe(struct app *a, const struct job *j, struct strbuf *out)
{
    const struct pass_job *pj = j->state;
    (void)a;
    sb_addf(out, "%s%s", pj->title, pj->paused ? " (paused: p or Space goes on)" : "");
}

static void pass_end(struct app *a, struct job *j, bool cancelled)
{
    struct pass_job *pj = j->state;
    if (cancelled)
        replay_cancel(pj->p);
    /* What is in flight is settled, each outcome journaled, before the pass is over. */
    struct replay_report r;
    enum conn_err kind;
    replay_finish(pj->p, &r, &kind);
    pj->ended(a, pj->ctx, &r, pj->rs.journal_path);
    replay_setup_close(&pj->rs);
    free(pj->title);
    free(pj);
}

static const struct job_ops pass_ops = {pass_step, pass_describe, pass_end};

bool plan_pass_begin(struct app *a, struct replay_setup *rs, const struct replay_opts *o,
                     const char *title, const struct plan_pace *pace, uint64_t sendable,
                     plan_pass_end_fn ended, void *ctx, struct error *err)
{
    struct pass_job *pj = xcalloc(1, sizeof *pj);
    pj->o = *o;
    pj->theirs = *o;
    pj->o.select = pass_select;
    pj->o.progress = pass_progress;
    pj->o.outcome = pass_outcome;
    pj->o.again = pass_again;
    pj->o.confirmed_again = pass_confirmed_again;
    pj->o.ctx = pj;
    /* A lost node: the pass goes on from the next URL as the next attempt of its run
     * (docs/replay.md, "On a cluster"); conn_reopen replaces the set-up's connection, which
     * the job owns from below on, so pass_end closes the live one. */
    pj->o.reopen = &pj->rs.conn;
    pj->title = xstrdup(title);
    pj->pace = pace;
    pj->sendable = sendable;
    pj->planned = o->expect;
    pj->ended = ended;
    pj->ctx = ctx;
    enum conn_err kind;
    if (replay_start(rs->conn, &pj->o, &pj->p, &kind, err) != ST_OK) {
        free(pj->title);
        free(pj);
        return false;
    }
    /* The set-up is the job's from here (rs is left empty: closing it does nothing). */
    pj->rs = *rs;
    memset(rs, 0, sizeof *rs);
    job_start(a, JOB_PASS, &pass_ops, pj);
    return true;
}

bool plan_pass_running(const struct app *a)
{
    return job_state(a, JOB_PASS, &pass_ops) != NULL;
}

void plan_pass_pause(struct app *a)
{
    struct pass_job *pj = job_state(a, JOB_PASS, &pass_ops);
    if (pj)
        pj->paused = !pj->paused;
}

void plan_pass_cancel(struct app *a)
{
    job_cancel(a, JOB_PASS);
}

void plan_pass_draw(struct app *a)
{
    struct pass_job *pj = job_state(a, JOB_PASS, &pass_ops);
    if (!pj)
        return;
    struct replay_progress p = pj->last;
    if (!pj->have_last) {
        memset(&p, 0, sizeof p);
        p.phase = "starting";
        p.total = pj->planned;
        p.eta_s = -1;
    }
    p.paused = pj->paused;
    plan_progress_draw(a, pj->title, pj->pace, pj->sendable, &p);
}
