/*
 * job: the slots of the jobs in progress, the slice the loop gives them, the progress line
 * they share with the source that reads, and stopping them (job.h).
 */
#include "job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "term.h"
#include "ui.h"

bool job_yield(double until)
{
    return clock_mono_s() >= until || term_input_pending();
}

const char *fmt_thousands(uint64_t n, char *out)
{
    char digits[32];
    int len = snprintf(digits, sizeof digits, "%llu", (unsigned long long)n);
    int w = 0;
    for (int i = 0; i < len; i++) {
        if (i && (len - i) % 3 == 0)
            out[w++] = ',';
        out[w++] = digits[i];
    }
    out[w] = '\0';
    return out;
}

/* Takes the job out of its slot first: its end hook may start another of the same kind. */
static void finish(struct app *a, enum job_kind kind, bool cancelled)
{
    struct job *j = a->jobs[kind];
    if (!j)
        return;
    a->jobs[kind] = NULL;
    j->ops->end(a, j, cancelled);
    free(j);
}

void job_start(struct app *a, enum job_kind kind, const struct job_ops *ops, void *state)
{
    finish(a, kind, true);
    struct job *j = xcalloc(1, sizeof *j);
    j->ops = ops;
    j->state = state;
    j->started = clock_mono_s();
    a->jobs[kind] = j;
    /* The first slice now: small work is done before anything is drawn. */
    if (ops->step(a, j, j->started + 0.02) == JOB_DONE && a->jobs[kind] == j)
        finish(a, kind, false);
}

void *job_state(const struct app *a, enum job_kind kind, const struct job_ops *ops)
{
    const struct job *j = a->jobs[kind];
    return j && j->ops == ops ? j->state : NULL;
}

void job_cancel(struct app *a, enum job_kind kind)
{
    finish(a, kind, true);
}

void job_cancel_all(struct app *a)
{
    for (int k = 0; k < JOB_KINDS; k++)
        finish(a, (enum job_kind)k, true);
}

bool app_busy(const struct app *a)
{
    if (app_source_busy(a) || live_active(a))
        return true;
    for (int k = 0; k < JOB_KINDS; k++)
        if (a->jobs[k])
            return true;
    return false;
}

enum job_rc app_work(struct app *a, int budget_ms, bool *ended)
{
    double start = clock_mono_s();
    /* With the source still reading, the jobs get half the slice and the reading the rest. */
    bool reading = app_source_busy(a);
    double until = start + (reading ? budget_ms / 2 : budget_ms) / 1000.0;
    bool more = false, waiting = false;
    /* The foremost job that can advance gets the slice; the others wait their turn. */
    for (int k = 0; k < JOB_KINDS && !more; k++) {
        struct job *j = a->jobs[k];
        if (!j)
            continue;
        enum job_rc rc = j->ops->step(a, j, until);
        if (rc == JOB_DONE) {
            if (a->jobs[k] == j)
                finish(a, (enum job_kind)k, false);
            *ended = true;
            more = true; /* its end may have started another: look again next time */
        } else if (rc == JOB_MORE) {
            more = true;
        } else {
            waiting = true;
        }
    }
    if (reading) {
        double left = start + budget_ms / 1000.0 - clock_mono_s();
        if (!app_source_step(a, clock_mono_s() + (left > 0.002 ? left : 0.002)))
            *ended = true;
        more = more || app_source_busy(a);
    }
    if (live_active(a)) {
        /* Following: a slice of a few milliseconds; the feed never waits on the broker. */
        enum job_rc rc = live_step(a, clock_mono_s() + budget_ms / 1000.0, ended);
        more = more || rc == JOB_MORE;
        waiting = waiting || rc == JOB_WAIT;
    }
    if (more)
        return JOB_MORE;
    return waiting ? JOB_WAIT : JOB_DONE;
}

bool app_cancel_work(struct app *a)
{
    for (int k = 0; k < JOB_KINDS; k++)
        if (a->jobs[k]) {
            finish(a, (enum job_kind)k, true);
            return true;
        }
    return app_source_cancel(a);
}

const char *app_cancel_key(const struct app *a)
{
    /* Esc goes back from a view opened on another; on the first view it stops the work. */
    return a->depth <= 1 ? "Esc" : "Ctrl-g";
}

void app_work_status(struct app *a, struct strbuf *out)
{
    for (int k = 0; k < JOB_KINDS; k++) {
        const struct job *j = a->jobs[k];
        if (!j)
            continue;
        j->ops->describe(a, j, out);
        sb_adds(out, a->ascii ? "..." : "\xe2\x80\xa6"); /* … */
        if (j->total)
            sb_addf(out, " %d%%",
                    (int)(100.0 * (double)(j->done < j->total ? j->done : j->total) /
                          (double)j->total));
        sb_addf(out, "  %s cancels", app_cancel_key(a));
        return;
    }
    app_source_status(a, out);
}
