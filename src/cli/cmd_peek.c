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
#include "snapshot.h"

struct peek_cli {
    FILE *out;
    bool write_failed;
    bool show_progress;
    struct strbuf line;
};

static bool sink(void *vctx, struct message *m)
{
    struct peek_cli *ctx = vctx;
    sb_reset(&ctx->line);
    snapshot_format(m, &ctx->line);
    message_free(m);
    if (fwrite(ctx->line.buf, 1, ctx->line.len, ctx->out) != ctx->line.len) {
        ctx->write_failed = true;
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

static void usage(FILE *to)
{
    fputs("usage: dlqx peek QUEUE [--limit N] [-o FILE] [--report FILE]\n"
          "                 [--type classic|quorum|stream] [--delivery-limit N] [--dlx] [--force]\n"
          "                 [--url URL]... [--password-file FILE | --ask-password]\n"
          "                 [--cacert FILE] [--cert FILE --key FILE] [--tls-no-verify]\n",
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
        int r = broker_opts_parse(&b, argc, argv, &i);
        if (r < 0) {
            rc = EXIT_USAGE;
            goto out;
        }
        if (r > 0)
            continue;
        if ((strcmp(a, "--limit") == 0 || strcmp(a, "-n") == 0) && i + 1 < argc) {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(argv[++i], &end, 10);
            if (errno || *end || argv[i][0] == '-') {
                fprintf(stderr, "dlqx peek: --limit takes a number\n");
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
                fprintf(stderr, "dlqx peek: --type is classic, quorum or stream\n");
                rc = EXIT_USAGE;
                goto out;
            }
        } else if (strcmp(a, "--delivery-limit") == 0 && i + 1 < argc) {
            po.info.delivery_limit = strtoll(argv[++i], NULL, 10);
            limit_given = true;
        } else if (strcmp(a, "--dlx") == 0) {
            po.info.has_dlx = true;
            dlx_given = true;
        } else if (strcmp(a, "--force") == 0) {
            po.force = true;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            goto out;
        } else if (a[0] == '-') {
            fprintf(stderr, "dlqx peek: unknown option %s\n", a);
            rc = EXIT_USAGE;
            goto out;
        } else if (!po.queue) {
            po.queue = a;
        } else {
            fprintf(stderr, "dlqx peek: one queue at a time (got %s and %s)\n", po.queue, a);
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

    struct peek_cli ctx = {stdout, false, isatty(STDERR_FILENO) != 0, {NULL, 0, 0}};
    char *tmpname = NULL;
    if (outfile && strcmp(outfile, "-") != 0) {
        /* Written beside the target and renamed at the end: a half-written snapshot never
         * takes the place of a good one. */
        tmpname = xasprintf("%s.partial", outfile);
        ctx.out = fopen(tmpname, "wb");
        if (!ctx.out) {
            fprintf(stderr, "dlqx peek: cannot write %s: %s\n", tmpname, strerror(errno));
            free(tmpname);
            conn_close(c);
            rc = EXIT_IOERR;
            goto out;
        }
    }
    po.sink = sink;
    po.progress = progress;
    po.ctx = &ctx;

    uint32_t ready = 0, consumers = 0;
    enum conn_err kind = CONN_OK;
    struct error err;
    error_clear(&err);
    if (conn_queue_inspect(c, 1, po.queue, &ready, &consumers, &kind, &err) != ST_OK) {
        fprintf(stderr, "dlqx: %s\n", err.msg);
        rc = broker_exit_code(kind);
        if (kind == CONN_NOT_FOUND)
            broker_suggest_queue(&b, po.queue);
        goto done;
    }
    struct strbuf plan;
    sb_init(&plan);
    peek_plan(&po, ready, consumers, &plan);
    fprintf(stderr, "dlqx: %s on %s: %s\n", po.queue, conn_display_url(c), plan.buf);
    sb_free(&plan);

    struct peek_report rep;
    if (peek_run(c, &po, &rep, &kind, &err) != ST_OK) {
        fprintf(stderr, "dlqx: %s\n", err.msg);
        rc = broker_exit_code(kind);
        goto done;
    }
    if (ctx.show_progress)
        fputc('\n', stderr);
    fprintf(stderr, "dlqx: %s: %s in %.2f s", po.queue, rep.detail, rep.seconds);
    if (rep.seconds > 0 && rep.fetched)
        fprintf(stderr, " (%.0f msg/s)", (double)rep.fetched / rep.seconds);
    fputc('\n', stderr);
    if (rep.have_after)
        fprintf(stderr, "dlqx: %s: %u ready before, %u after%s\n", po.queue, rep.ready_before,
                rep.ready_after,
                rep.arrived_during ? " (new messages arrived during the peek)" : "");
    if (rep.kind == QK_QUORUM && rep.max_delivery_count >= 0)
        fprintf(stderr, "dlqx: %s: the highest x-delivery-count seen was %lld\n", po.queue,
                (long long)rep.max_delivery_count);
    if (report_file) {
        json_t *j = peek_report_json(po.queue, &rep);
        if (json_dump_file(j, report_file, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) != 0)
            fprintf(stderr, "dlqx peek: cannot write the report %s\n", report_file);
        json_decref(j);
    }
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
    if (ctx.out != stdout) {
        bool ok = fflush(ctx.out) == 0 && fsync(fileno(ctx.out)) == 0;
        ok = fclose(ctx.out) == 0 && ok;
        if (ok && (rc == EXIT_OK || rc == EXIT_INCOMPLETE || rc == EXIT_PEEK_REFUSED ||
                   rc == EXIT_CONNECTION_LOST)) {
            if (rename(tmpname, outfile) != 0) {
                fprintf(stderr, "dlqx peek: cannot rename %s: %s\n", tmpname, strerror(errno));
                rc = EXIT_IOERR;
            }
        } else {
            unlink(tmpname);
            if (!ok)
                rc = EXIT_IOERR;
        }
        free(tmpname);
    } else if (!cli_flush_stdout()) {
        rc = EXIT_IOERR;
    }
    sb_free(&ctx.line);
    conn_close(c);
out:
    broker_opts_free(&b);
    return rc;
}
