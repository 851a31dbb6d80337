/*
 * peek_job: one queue's peek as `dlqx peek` runs it (peek_job.h).
 */
#include "peek_job.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sanitize.h"
#include "snapshot.h"

static bool sink(void *vctx, struct message *m)
{
    struct peek_job *j = vctx;
    sb_reset(&j->line);
    snapshot_format(m, &j->line);
    message_free(m);
    if (fwrite(j->line.buf, 1, j->line.len, j->out) != j->line.len) {
        j->write_failed = true;
        j->write_errno = errno;
        return false;
    }
    return true;
}

static bool progress(void *vctx, uint64_t done, uint64_t total)
{
    struct peek_job *j = vctx;
    atomic_store(&j->done, (unsigned long long)done);
    atomic_store(&j->total, (unsigned long long)total);
    if (j->show_progress)
        fprintf(stderr, "\rdlqx: peek: %llu / %llu", (unsigned long long)done,
                (unsigned long long)total);
    return !atomic_load(&j->stop);
}

/* A read again on another node (failover): what the lost read wrote goes. The output is a
 * temporary file beside the target, or a spool for a stream (written out at the end). */
static bool restart(void *vctx)
{
    struct peek_job *j = vctx;
    if (j->write_failed || fflush(j->out) != 0 || ftruncate(fileno(j->out), 0) != 0)
        return false;
    rewind(j->out);
    if (j->show_progress)
        fputc('\n', stderr);
    san_eprintf("dlqx: %s: the node was lost; reading the queue again from the start on the next "
                "node\n",
                j->queue);
    return true;
}

/* The spool (a failover-ready peek to a stream) copied to the stream. */
static bool spool_out(FILE *spool, FILE *to)
{
    char buf[65536];
    size_t n;
    if (fflush(spool) != 0)
        return false;
    rewind(spool);
    while ((n = fread(buf, 1, sizeof buf, spool)) > 0)
        if (fwrite(buf, 1, n, to) != n)
            return false;
    return !ferror(spool);
}

void peek_job_init(struct peek_job *j, const char *queue, const struct peek_opts *po)
{
    memset(j, 0, sizeof *j);
    j->queue = queue;
    j->po = *po;
    j->po.queue = queue;
    j->po.sink = sink;
    j->po.progress = progress;
    j->po.ctx = j;
    j->po.conn = &j->c;
    j->po.restart = restart;
    j->out = stdout;
    j->rc = EXIT_OK;
    error_clear(&j->err);
}

bool peek_job_connect(struct peek_job *j, const struct broker_opts *b, bool type_given,
                      bool limit_given, bool dlx_given)
{
    j->c = broker_connect(b, &j->rc);
    if (!j->c)
        return false;
    broker_queue_info(b, j->queue, &j->po.info, type_given, limit_given, dlx_given);
    return true;
}

bool peek_job_files(struct peek_job *j)
{
    /* Both files are opened before anything is read (a peek has a cost: a target dlqx will
     * not write is refused first). safefile: written beside the target and renamed only
     * when complete; a pipe or a terminal is written as a stream. */
    struct error ferr;
    if (safefile_open(&j->out_sf, j->outfile ? j->outfile : "-", &ferr) != ST_OK) {
        san_eprintf("dlqx peek: %s\n", ferr.msg);
        j->rc = EXIT_IOERR;
        return false;
    }
    if (j->report_file && safefile_open(&j->rep_sf, j->report_file, &ferr) != ST_OK) {
        san_eprintf("dlqx peek: the report: %s\n", ferr.msg);
        safefile_discard(&j->out_sf);
        j->rc = EXIT_IOERR;
        return false;
    }
    j->out = j->out_sf.f;
    /* Failover forgets what a lost read wrote: a stream cannot be taken back, so it is
     * spooled (an unlinked temporary file) and written out when the peek ends. */
    if (j->out_sf.stream && j->po.attempts != 1) {
        j->spool = tmpfile();
        if (!j->spool) {
            san_eprintf("dlqx peek: cannot make a temporary file: %s\n", strerror(errno));
            safefile_discard(&j->out_sf);
            if (j->report_file)
                safefile_discard(&j->rep_sf);
            j->rc = EXIT_IOERR;
            return false;
        }
        j->out = j->spool;
    }
    j->files_open = true;
    return true;
}

bool peek_job_plan(struct peek_job *j, const struct broker_opts *b)
{
    uint32_t ready = 0, consumers = 0;
    j->kind = CONN_OK;
    if (conn_queue_inspect(j->c, 1, j->queue, &ready, &consumers, &j->kind, &j->err) != ST_OK) {
        san_eprintf("dlqx: %s\n", j->err.msg);
        j->rc = broker_exit_code(j->kind);
        if (j->kind == CONN_NOT_FOUND)
            broker_suggest_queue(b, j->queue);
        return false;
    }
    struct strbuf plan;
    sb_init(&plan);
    peek_plan(&j->po, conn_broker_version(j->c), ready, consumers, &plan);
    san_eprintf("dlqx: %s on %s: %s\n", j->queue, conn_display_url(j->c), plan.buf);
    sb_free(&plan);
    return true;
}

void peek_job_run(struct peek_job *j, _Atomic int *stop)
{
    struct peek *p;
    memset(&j->rep, 0, sizeof j->rep);
    if (peek_start(j->c, &j->po, &p, &j->kind, &j->err) == ST_OK) {
        while (peek_step(p, clock_mono_s() + (stop ? 0.2 : 1.0)))
            if (stop && atomic_load(stop))
                peek_cancel(p);
        if (peek_finish(p, &j->rep, &j->kind, &j->err) == ST_OK) {
            j->peek_ran = true;
            return;
        }
    }
    j->rc = broker_exit_code(j->kind);
}

void peek_job_summary(struct peek_job *j)
{
    const struct peek_report *r = &j->rep;
    if (!j->peek_ran) {
        san_eprintf("dlqx: %s\n", j->err.msg);
        return;
    }
    if (j->show_progress)
        fputc('\n', stderr);
    if (r->attempts > 1 || r->lost[0])
        san_eprintf("dlqx: %s: %u attempt%s (%s)%s\n", j->queue, r->attempts,
                    r->attempts == 1 ? "" : "s", r->lost,
                    r->kind == QK_QUORUM ? "; on a quorum queue each was a delivery of every "
                                           "message it read"
                                         : "");
    san_eprintf("dlqx: %s: %s in %.2f s", j->queue, r->detail, r->seconds);
    if (r->seconds > 0 && r->fetched)
        san_eprintf(" (%.0f msg/s)", (double)r->fetched / r->seconds);
    fputc('\n', stderr);
    if (r->count_unsure)
        san_eprintf("dlqx: %s: %s\n", j->queue, PEEK_UNSURE_TEXT);
    if (r->have_after)
        san_eprintf("dlqx: %s: %u ready before, %u after%s\n", j->queue, r->ready_before,
                    r->ready_after,
                    r->arrived_during ? " (new messages arrived during the peek)" : "");
    if (r->kind == QK_QUORUM && r->max_delivery_count >= 0)
        san_eprintf("dlqx: %s: the highest x-delivery-count seen was %lld\n", j->queue,
                    (long long)r->max_delivery_count);
    switch (r->end) {
    case PEEK_COMPLETE:
    case PEEK_LIMIT:
        j->rc = EXIT_OK;
        break;
    case PEEK_REFUSED_LIMIT:
        j->rc = EXIT_PEEK_REFUSED;
        break;
    case PEEK_CONNECTION_LOST:
        j->rc = EXIT_CONNECTION_LOST;
        break;
    case PEEK_CANCELLED:
        j->rc = j->write_failed ? EXIT_IOERR : EXIT_INCOMPLETE;
        break;
    case PEEK_IDLE:
    case PEEK_CHANNEL_CLOSED:
        /* The broker refusing the read (403: no read permission) is access refused, not an
         * incomplete snapshot. */
        j->rc = j->kind == CONN_ACCESS ? EXIT_ACCESS : EXIT_INCOMPLETE;
        break;
    default:
        j->rc = EXIT_INCOMPLETE;
        break;
    }
}

/* The report: written whenever the peek ran (how it ended is what it is for); else
 * discarded. */
static void close_report(struct peek_job *j)
{
    struct error ferr;
    if (!j->peek_ran) {
        safefile_discard(&j->rep_sf);
        return;
    }
    json_t *jr = peek_report_json(j->queue, &j->rep);
    bool wrote = json_dumpf(jr, j->rep_sf.f, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) == 0 &&
                 fputc('\n', j->rep_sf.f) != EOF;
    json_decref(jr);
    if (!wrote) {
        san_eprintf("dlqx peek: cannot write the report %s: %s\n", j->report_file, strerror(errno));
        safefile_discard(&j->rep_sf);
        j->rc = j->rc == EXIT_OK ? EXIT_IOERR : j->rc;
    } else if (safefile_commit(&j->rep_sf, &ferr) != ST_OK) {
        san_eprintf("dlqx peek: the report: %s\n", ferr.msg);
        j->rc = j->rc == EXIT_OK ? EXIT_IOERR : j->rc;
    }
}

static void close_snapshot(struct peek_job *j)
{
    struct error ferr;
    bool to_stdout = j->out_sf.is_stdout;
    if (j->rc == EXIT_OK) {
        if (safefile_commit(&j->out_sf, &ferr) != ST_OK) {
            if (!to_stdout || errno != EPIPE)
                san_eprintf("dlqx peek: %s\n", ferr.msg);
            j->rc = EXIT_IOERR;
        }
    } else if (j->peek_ran && !j->write_failed &&
               (j->rc == EXIT_INCOMPLETE || j->rc == EXIT_PEEK_REFUSED ||
                j->rc == EXIT_CONNECTION_LOST)) {
        /* An incomplete snapshot never takes the place of the file: it is kept beside it,
         * named as what it is. */
        char *kept = NULL;
        if (safefile_keep_incomplete(&j->out_sf, &kept, &ferr) != ST_OK) {
            san_eprintf("dlqx peek: %s\n", ferr.msg);
            j->rc = EXIT_IOERR;
        } else if (kept) {
            san_eprintf("dlqx peek: the snapshot is incomplete: it is kept as %s, not as %s\n",
                        kept, j->outfile);
            free(kept);
        }
    } else {
        safefile_discard(&j->out_sf);
        if (j->write_failed && !(to_stdout && j->write_errno == EPIPE))
            san_eprintf("dlqx peek: cannot write %s: %s\n",
                        to_stdout ? "standard output" : j->outfile, strerror(j->write_errno));
        if (j->write_failed)
            j->rc = EXIT_IOERR;
    }
}

int peek_job_close(struct peek_job *j)
{
    if (j->files_open) {
        if (j->spool) {
            if (j->peek_ran && !j->write_failed && !spool_out(j->spool, j->out_sf.f)) {
                j->write_failed = true;
                j->write_errno = errno;
                j->rc = EXIT_IOERR;
            }
            fclose(j->spool);
            j->spool = NULL;
        }
        if (j->report_file)
            close_report(j);
        close_snapshot(j);
        j->files_open = false;
    }
    sb_free(&j->line);
    conn_close(j->c);
    j->c = NULL;
    return j->rc;
}
