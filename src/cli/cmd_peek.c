/*
 * peek: a complete, decoded-ready snapshot of one queue, written in the snapshot format, while
 * the queue afterwards holds exactly the same messages in the same order. It says what the
 * peek will cost before it starts and how complete the snapshot is when it ends. Several
 * queues are peeked at once, each into a file of its own in a directory (peek_multi.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker_opts.h"
#include "cli.h"
#include "peek.h"
#include "peek_job.h"
#include "peek_multi.h"
#include "sanitize.h"

static void usage(FILE *to)
{
    fputs(
        "usage: dlqx peek QUEUE [--limit N] [-o FILE] [--report FILE]\n"
        "       dlqx peek QUEUE QUEUE... -o DIR [--limit N]   (each at once, on a connection\n"
        "                 of its own: DIR/QUEUE.jsonl and DIR/QUEUE.report.json)\n"
        "                 [--type classic|quorum|stream] [--delivery-limit N] [--dlx] [--force]\n"
        "                 [--url URL]... [--password-file FILE | --ask-password]\n"
        "                 [--cacert FILE] [--cert FILE --key FILE] [--tls-no-verify]\n"
        "                 [--node-order given|shuffle] [--heartbeat S] [--peek-attempts N]\n"
        "                 [--idle-timeout S]\n"
        "  --idle-timeout S   end the read as incomplete after S seconds without a delivery\n"
        "                     (default 30; 5 when other consumers are attached)\n"
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
    const char **queues = xcalloc((size_t)argc, sizeof *queues);
    size_t nq = 0;
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
        } else if (strcmp(a, "--idle-timeout") == 0 && i + 1 < argc) {
            char *end;
            errno = 0;
            unsigned long v = strtoul(argv[++i], &end, 10);
            if (errno || *end || argv[i][0] < '1' || argv[i][0] > '9' || v > 86400) {
                san_eprintf("dlqx peek: --idle-timeout takes seconds from 1 to 86400\n");
                rc = EXIT_USAGE;
                goto out;
            }
            po.idle_timeout_ms = (int)v * 1000;
        } else if (strcmp(a, "--force") == 0) {
            po.force = true;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            goto out;
        } else if (a[0] == '-') {
            san_eprintf("dlqx peek: unknown option %s\n", a);
            rc = EXIT_USAGE;
            goto out;
        } else {
            queues[nq++] = a;
        }
    }
    if (nq == 0) {
        usage(stderr);
        rc = EXIT_USAGE;
        goto out;
    }
    if (!broker_opts_finish(&b)) {
        rc = EXIT_USAGE;
        goto out;
    }
    if (nq > 1) {
        struct peek_multi_opts mo = {queues, nq,         outfile,     report_file,
                                     &po,    type_given, limit_given, dlx_given};
        rc = peek_multi(&b, &mo);
        goto out;
    }
    struct peek_job j;
    peek_job_init(&j, queues[0], &po);
    j.outfile = outfile;
    j.report_file = report_file;
    j.show_progress = isatty(STDERR_FILENO) != 0;
    if (peek_job_connect(&j, &b, type_given, limit_given, dlx_given) && peek_job_files(&j) &&
        peek_job_plan(&j, &b)) {
        peek_job_run(&j, NULL);
        peek_job_summary(&j);
    }
    rc = peek_job_close(&j);
out:
    free(queues);
    broker_opts_free(&b);
    return rc;
}
