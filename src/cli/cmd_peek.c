/*
 * peek: a complete, decoded-ready snapshot of one queue, written in the snapshot format, while
 * the queue afterwards holds exactly the same messages in the same order. It says what the
 * peek will cost before it starts and how complete the snapshot is when it ends.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker_opts.h"
#include "cli.h"
#include "peek.h"
#include "safefile.h"
#include "sanitize.h"
#include "snapshot.h"

struct peek_cli {
    FILE *out; /* the snapshot's file, or a spool for a stream (failover must forget) */
    bool write_failed;
    int write_errno;
    bool show_progress;
    struct strbuf line;
    const char *queue;
};

static bool sink(void *vctx, struct message *m)
{
    struct peek_cli *ctx = vctx;
    sb_reset(&ctx->line);
    snapshot_format(m, &ctx->line);
    message_free(m);
    if (fwrite(ctx->line.buf, 1, ctx->line.len, ctx->out) != ctx->line.len) {
        ctx->write_failed = true;
        ctx->write_errno = errno;
        return false;
    }
    return true;
}

static bool progress(void *vctx, uint64_t done, uint64_t total)
{
    struct peek_cli *ctx = vctx;
    if (ctx->show_progress)
        fprintf(stderr, "\rdlqx: peek: %llu / %llu", (unsigned long long)done,
                (unsigned long long)total);
    return true;
}

/* A read again on another node (failover): what the lost read wrote goes. The output is a
 * temporary file beside the target, or a spool for a stream (written out at the end). */
static bool restart(void *vctx)
{
    struct peek_cli *ctx = vctx;
    if (ctx->write_failed || fflush(ctx->out) != 0 || ftruncate(fileno(ctx->out), 0) != 0)
        return false;
    rewind(ctx->out);
    if (ctx->show_progress)
        fputc('\n', stderr);
    san_eprintf("dlqx: %s: the node was lost; reading the queue again from the start on the next "
                "node\n",
                ctx->queue);
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

static void usage(FILE *to)
{
    fputs(
        "usage: dlqx peek QUEUE [--limit N] [-o FILE] [--report FILE]\n"
        "                 [--type classic|quorum|stream] [--delivery-limit N] [--dlx] [--force]\n"
        "                 [--url URL]... [--password-file FILE | --ask-password]\n"
        "                 [--cacert FILE] [--cert FILE --key FILE] [--tls-no-verify]\n"
        "                 [--node-order given|shuffle] [--heartbeat S] [--peek-attempts N]\n"
        "  --peek-attempts N  reads of the queue in all when nodes are lost (default 3; 1: none):\n"
        "                     a read that loses its node starts again on the next one\n",
        to);
}

int cmd_peek(int argc, char **argv)
{
    struct broker_opts b;
    broker_opts_init(&b);
    struct peek_opts po;
    memset(&po, 0, sizeof po);
    po.info.kind = QK_UNKNOWN;
    po.info.delivery_limit = -1;
    const char *outfile = NULL;
    const char *report_file = NULL;
    bool type_given = false, limit_given = false, dlx_given = false;
    int rc = EXIT_OK;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        enum bopt_next r = broker_opts_arg(&b, argc, argv, &i);
        if (r == BOPT_ERROR) {
            rc = EXIT_USAGE;
            goto out;
        }
        if (r == BOPT_CONSUMED)
            continue;
        if ((strcmp(a, "--limit") == 0 || strcmp(a, "-n") == 0) && i + 1 < argc) {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(argv[++i], &end, 10);
            if (errno || *end || argv[i][0] == '-') {
                san_eprintf("dlqx peek: --limit takes a number\n");
                rc = EXIT_USAGE;
                goto out;
            }
            po.limit = v;
        } else if ((strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) && i + 1 < argc) {
            outfile = argv[++i];
        } else if (strcmp(a, "--report") == 0 && i + 1 < argc) {
            report_file = argv[++i];
        } else if (strcmp(a, "--type") == 0 && i + 1 < argc) {
            type_given = true;
            if (!queue_kind_parse(argv[++i], &po.info.kind)) {
                san_eprintf("dlqx peek: --type is classic, quorum or stream\n");
                rc = EXIT_USAGE;
                goto out;
            }
        } else if (strcmp(a, "--delivery-limit") == 0 && i + 1 < argc) {
            po.info.delivery_limit = strtoll(argv[++i], NULL, 10);
            limit_given = true;
        } else if (strcmp(a, "--dlx") == 0) {
            po.info.has_dlx = true;
            dlx_given = true;
        } else if (strcmp(a, "--peek-attempts") == 0 && i + 1 < argc) {
            char *end;
            errno = 0;
            unsigned long v = strtoul(argv[++i], &end, 10);
            if (errno || *end || argv[i][0] < '1' || argv[i][0] > '9' || v > 100) {
                san_eprintf("dlqx peek: --peek-attempts takes a number from 1 to 100\n");
                rc = EXIT_USAGE;
                goto out;
            }
            po.attempts = (unsigned)v;
        } else if (strcmp(a, "--force") == 0) {
            po.force = true;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            goto out;
        } else if (a[0] == '-') {
            san_eprintf("dlqx peek: unknown option %s\n", a);
            rc = EXIT_USAGE;
            goto out;
        } else if (!po.queue) {
            po.queue = a;
        } else {
            san_eprintf("dlqx peek: one queue at a time (got %s and %s)\n", po.queue, a);
            rc = EXIT_USAGE;
            goto out;
        }
    }
    if (!po.queue) {
        usage(stderr);
        rc = EXIT_USAGE;
        goto out;
    }
    if (!broker_opts_finish(&b)) {
        rc = EXIT_USAGE;
        goto out;
    }
    struct conn *c = broker_connect(&b, &rc);
    if (!c)
        goto out;
    broker_queue_info(&b, po.queue, &po.info, type_given, limit_given, dlx_given);

    struct peek_cli ctx = {stdout, false, 0, isatty(STDERR_FILENO) != 0, {NULL, 0, 0}, po.queue};
    /* Both files are opened before anything is read (a peek has a cost: a target dlqx will
     * not write is refused first). safefile: written beside the target and renamed only
     * when complete; a pipe or a terminal is written as a stream. */
    struct safefile out_sf, rep_sf;
    struct error ferr;
    if (safefile_open(&out_sf, outfile ? outfile : "-", &ferr) != ST_OK) {
        san_eprintf("dlqx peek: %s\n", ferr.msg);
        conn_close(c);
        rc = EXIT_IOERR;
        goto out;
    }
    if (report_file && safefile_open(&rep_sf, report_file, &ferr) != ST_OK) {
        san_eprintf("dlqx peek: the report: %s\n", ferr.msg);
        safefile_discard(&out_sf);
        conn_close(c);
        rc = EXIT_IOERR;
        goto out;
    }
    ctx.out = out_sf.f;
    /* Failover forgets what a lost read wrote: a stream cannot be taken back, so it is
     * spooled (an unlinked temporary file) and written out when the peek ends. */
    FILE *spool = NULL;
    if (out_sf.stream && po.attempts != 1) {
        spool = tmpfile();
        if (!spool) {
            san_eprintf("dlqx peek: cannot make a temporary file: %s\n", strerror(errno));
            safefile_discard(&out_sf);
            if (report_file)
                safefile_discard(&rep_sf);
            conn_close(c);
            rc = EXIT_IOERR;
            goto out;
        }
        ctx.out = spool;
    }
    bool out_sf_stdout = out_sf.is_stdout, peek_ran = false;
    struct peek_report rep;
    memset(&rep, 0, sizeof rep);
    po.sink = sink;
    po.progress = progress;
    po.ctx = &ctx;
    po.conn = &c;
    po.restart = restart;

    uint32_t ready = 0, consumers = 0;
    enum conn_err kind = CONN_OK;
    struct error err;
    error_clear(&err);
    if (conn_queue_inspect(c, 1, po.queue, &ready, &consumers, &kind, &err) != ST_OK) {
        san_eprintf("dlqx: %s\n", err.msg);
        rc = broker_exit_code(kind);
        if (kind == CONN_NOT_FOUND)
            broker_suggest_queue(&b, po.queue);
        goto done;
    }
    struct strbuf plan;
    sb_init(&plan);
    peek_plan(&po, conn_broker_version(c), ready, consumers, &plan);
    san_eprintf("dlqx: %s on %s: %s\n", po.queue, conn_display_url(c), plan.buf);
    sb_free(&plan);

    if (peek_run(c, &po, &rep, &kind, &err) != ST_OK) {
        san_eprintf("dlqx: %s\n", err.msg);
        rc = broker_exit_code(kind);
        goto done;
    }
    peek_ran = true;
    if (ctx.show_progress)
        fputc('\n', stderr);
    if (rep.attempts > 1 || rep.lost[0])
        san_eprintf("dlqx: %s: %u attempt%s (%s)%s\n", po.queue, rep.attempts,
                    rep.attempts == 1 ? "" : "s", rep.lost,
                    rep.kind == QK_QUORUM ? "; on a quorum queue each was a delivery of every "
                                            "message it read"
                                          : "");
    san_eprintf("dlqx: %s: %s in %.2f s", po.queue, rep.detail, rep.seconds);
    if (rep.seconds > 0 && rep.fetched)
        san_eprintf(" (%.0f msg/s)", (double)rep.fetched / rep.seconds);
    fputc('\n', stderr);
    if (rep.have_after)
        san_eprintf("dlqx: %s: %u ready before, %u after%s\n", po.queue, rep.ready_before,
                    rep.ready_after,
                    rep.arrived_during ? " (new messages arrived during the peek)" : "");
    if (rep.kind == QK_QUORUM && rep.max_delivery_count >= 0)
        san_eprintf("dlqx: %s: the highest x-delivery-count seen was %lld\n", po.queue,
                    (long long)rep.max_delivery_count);
    switch (rep.end) {
    case PEEK_COMPLETE:
    case PEEK_LIMIT:
        rc = EXIT_OK;
        break;
    case PEEK_REFUSED_LIMIT:
        rc = EXIT_PEEK_REFUSED;
        break;
    case PEEK_CONNECTION_LOST:
        rc = EXIT_CONNECTION_LOST;
        break;
    case PEEK_CANCELLED:
        rc = ctx.write_failed ? EXIT_IOERR : EXIT_INCOMPLETE;
        break;
    case PEEK_IDLE:
    case PEEK_CHANNEL_CLOSED:
        /* The broker refusing the read (403: no read permission) is access refused, not an
         * incomplete snapshot. */
        rc = kind == CONN_ACCESS ? EXIT_ACCESS : EXIT_INCOMPLETE;
        break;
    default:
        rc = EXIT_INCOMPLETE;
        break;
    }
done:
    if (spool) {
        if (peek_ran && !ctx.write_failed && !spool_out(spool, out_sf.f)) {
            ctx.write_failed = true;
            ctx.write_errno = errno;
            rc = EXIT_IOERR;
        }
        fclose(spool);
    }
    if (report_file) {
        /* Written whenever the peek ran (how it ended is what it is for); else discarded. */
        if (peek_ran) {
            json_t *j = peek_report_json(po.queue, &rep);
            bool wrote = json_dumpf(j, rep_sf.f, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) == 0 &&
                         fputc('\n', rep_sf.f) != EOF;
            json_decref(j);
            if (!wrote) {
                san_eprintf("dlqx peek: cannot write the report %s: %s\n", report_file,
                            strerror(errno));
                safefile_discard(&rep_sf);
                rc = rc == EXIT_OK ? EXIT_IOERR : rc;
            } else if (safefile_commit(&rep_sf, &ferr) != ST_OK) {
                san_eprintf("dlqx peek: the report: %s\n", ferr.msg);
                rc = rc == EXIT_OK ? EXIT_IOERR : rc;
            }
        } else {
            safefile_discard(&rep_sf);
        }
    }
    if (rc == EXIT_OK) {
        if (safefile_commit(&out_sf, &ferr) != ST_OK) {
            if (!out_sf_stdout || errno != EPIPE)
                san_eprintf("dlqx peek: %s\n", ferr.msg);
            rc = EXIT_IOERR;
        }
    } else if (peek_ran && !ctx.write_failed &&
               (rc == EXIT_INCOMPLETE || rc == EXIT_PEEK_REFUSED || rc == EXIT_CONNECTION_LOST)) {
        /* An incomplete snapshot never takes the place of the file: it is kept beside it,
         * named as what it is. */
        char *kept = NULL;
        if (safefile_keep_incomplete(&out_sf, &kept, &ferr) != ST_OK) {
            san_eprintf("dlqx peek: %s\n", ferr.msg);
            rc = EXIT_IOERR;
        } else if (kept) {
            san_eprintf("dlqx peek: the snapshot is incomplete: it is kept as %s, not as %s\n",
                        kept, outfile);
            free(kept);
        }
    } else {
        safefile_discard(&out_sf);
        if (ctx.write_failed && !(out_sf_stdout && ctx.write_errno == EPIPE))
            san_eprintf("dlqx peek: cannot write %s: %s\n",
                        out_sf_stdout ? "standard output" : outfile, strerror(ctx.write_errno));
        if (ctx.write_failed)
            rc = EXIT_IOERR;
    }
    sb_free(&ctx.line);
    conn_close(c);
out:
    broker_opts_free(&b);
    return rc;
}
