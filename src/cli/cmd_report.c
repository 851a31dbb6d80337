/*
 * report: `dlqx report [--format markdown|html] [-o FILE] [--journal FILE|--no-journal]
 * [FILE...|-]` — the incident summary of snapshot files: per queue and per cause the count,
 * first and last dead-lettered, the rate now, still going or stopped, framework, type, a
 * sample id and the error; the timelines; and what the journal records as replayed
 * (src/replay/report.h, docs/report-format.md). The report is as of the snapshot's end (its
 * latest fetch), or clock_now_ms() (DLQX_NOW in tests) when that is earlier. The output goes
 * through safefile: written beside FILE and renamed when complete.
 *
 * `dlqx report QUEUE` (one operand that is not a file, with a broker given by --url or
 * DLQX_URL): the queue is read as `dlqx groups QUEUE` reads it, by a `dlqx peek` child
 * (peek_input.h): every message given back; the peek's failure is the exit status, and then
 * no report is written.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "journal.h"
#include "peek_input.h"
#include "report.h"
#include "safefile.h"
#include "sanitize.h"
#include "store.h"

struct report_ctx {
    struct store *store;
    int64_t now_ms;
    bool full;
};

static bool add(struct message *m, bool *keep, void *vctx)
{
    struct report_ctx *ctx = vctx;
    struct error err;
    /* The line the record was read from is kept as it is (as the explorer's loader
     * keeps it), not written anew. */
    const char *line;
    size_t len;
    cli_current_record(&line, &len);
    if (store_append_line(ctx->store, m, line, len, ctx->now_ms, &err) != ST_OK) {
        san_eprintf("dlqx report: %s: the report is of the messages before it\n", err.msg);
        ctx->full = true;
        return false;
    }
    return true;
}

static void usage(FILE *to)
{
    fputs("usage: dlqx report [--format markdown|html] [-o FILE] [--journal FILE|--no-journal]\n"
          "                   [--max-record-size SIZE] [FILE...|- | QUEUE [broker options]]\n",
          to);
}

/* The value of an option at argv[*i] (--opt VALUE or --opt=VALUE), or NULL when argv[*i] is
 * not it; *missing when it is but has no value. */
static const char *option_value(int argc, char **argv, int *i, const char *name, bool *missing)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n) != 0)
        return NULL;
    if (a[n] == '=')
        return a + n + 1;
    if (a[n])
        return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

static int write_out(const char *path, const struct strbuf *text)
{
    struct safefile sf;
    struct error err;
    if (safefile_open(&sf, path, &err) != ST_OK) {
        san_eprintf("dlqx report: %s\n", err.msg);
        return EXIT_IOERR;
    }
    if (fwrite(text->buf ? text->buf : "", 1, text->len, sf.f) != text->len) {
        san_eprintf("dlqx report: cannot write the report\n");
        safefile_discard(&sf);
        return EXIT_IOERR;
    }
    if (safefile_commit(&sf, &err) != ST_OK) {
        san_eprintf("dlqx report: %s\n", err.msg);
        return EXIT_IOERR;
    }
    return EXIT_OK;
}

int cmd_report(int argc, char **argv)
{
    bool html = false, no_journal = false, missing = false;
    const char *outfile = "-", *journal = NULL, *v;
    int i = 1, mr, n_files = 0, n_fwd = 0;
    bool operands_only = false;
    char **files = xcalloc((size_t)argc + 1, sizeof *files);
    char **fwd = xcalloc((size_t)argc + 1, sizeof *fwd); /* broker options, for the peek */
    enum bopt_next br;
    struct broker_opts b;
    broker_opts_init(&b);
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (operands_only || a[0] != '-' || !a[1]) {
            files[n_files++] = argv[i];
            continue;
        }
        if (strcmp(a, "--") == 0) {
            operands_only = true;
            continue;
        }
        if ((br = cli_broker_arg(&b, argc, argv, &i, fwd, &n_fwd)) != BOPT_NOT_MINE) {
            if (br == BOPT_ERROR)
                goto usage_out;
        } else if ((mr = options_max_record(argc, argv, &i)) != 0) {
            if (mr < 0)
                goto usage_out;
        } else if ((v = option_value(argc, argv, &i, "--format", &missing)) != NULL) {
            if (strcmp(v, "html") != 0 && strcmp(v, "markdown") != 0 && strcmp(v, "md") != 0) {
                san_eprintf("dlqx report: --format: %s is not markdown or html\n", v);
                goto usage_out;
            }
            html = strcmp(v, "html") == 0;
        } else if ((v = option_value(argc, argv, &i, "-o", &missing)) != NULL ||
                   (v = option_value(argc, argv, &i, "--output", &missing)) != NULL) {
            outfile = v;
        } else if ((v = option_value(argc, argv, &i, "--journal", &missing)) != NULL) {
            journal = v;
            no_journal = false;
        } else if (missing) {
            san_eprintf("dlqx report: %s needs a value\n", a);
            usage(stderr);
            goto usage_out;
        } else if (strcmp(a, "--no-journal") == 0) {
            no_journal = true;
            journal = NULL;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            free(files);
            free(fwd);
            broker_opts_free(&b);
            return cli_flush_stdout() ? EXIT_OK : EXIT_IOERR;
        } else if (a[0] == '-' && a[1]) {
            san_eprintf("dlqx report: unknown option %s\n", a);
            usage(stderr);
            goto usage_out;
        }
    }
    /* One operand that is no file, and a broker: a queue, read as dlqx peek reads it. */
    const char *env_url = getenv("DLQX_URL");
    char *from_stdin[] = {(char *)(uintptr_t) "-"};
    char **inputs = files;
    pid_t peek = -1;
    if (n_files == 1 && strcmp(files[0], "-") != 0 && access(files[0], F_OK) != 0 &&
        (b.n_urls || (env_url && *env_url))) {
        peek = cli_peek_child("report", files[0], fwd, n_fwd);
        if (peek < 0) {
            free(files);
            free(fwd);
            broker_opts_free(&b);
            return EXIT_IOERR;
        }
        inputs = from_stdin;
    } else if (n_fwd) {
        san_eprintf("dlqx report: broker options go with a QUEUE (one name that is not a file)\n");
        goto usage_out;
    } else {
        for (int j = 0; j < n_files; j++)
            if (strcmp(files[j], "-") != 0 && access(files[j], F_OK) != 0) {
                san_eprintf("dlqx report: %s: no such file (a QUEUE is read from a broker: "
                            "give --url or DLQX_URL)\n",
                            files[j]);
                free(files);
                free(fwd);
                broker_opts_free(&b);
                return EXIT_NOINPUT;
            }
    }
    free(fwd);
    broker_opts_free(&b);
    struct report_ctx ctx = {.now_ms = clock_now_ms()};
    struct error err;
    if (store_new(0, NULL, &ctx.store, &err) != ST_OK) {
        san_eprintf("dlqx report: %s\n", err.msg);
        free(files);
        if (peek > 0)
            cli_peek_wait(peek);
        return EXIT_IOERR;
    }
    struct cli_inputs stats;
    cli_read_inputs(inputs, peek > 0 ? 1 : n_files, add, &ctx, &stats);
    free(files);
    /* The peek's failure (no such queue, incomplete, ...) first: no report of a part. */
    int peek_rc = peek > 0 ? cli_peek_wait(peek) : EXIT_OK;
    if (peek_rc != EXIT_OK) {
        store_free(ctx.store);
        return peek_rc;
    }
    char *default_journal = NULL;
    if (!no_journal && !journal)
        journal = default_journal = journal_default_path();
    struct strbuf text;
    sb_init(&text);
    enum status st = report_render(ctx.store, ctx.now_ms, journal, html, &text, NULL, &err);
    free(default_journal);
    store_free(ctx.store);
    if (st != ST_OK) {
        sb_free(&text);
        san_eprintf("dlqx report: the journal: %s\n", err.msg);
        return EXIT_IOERR;
    }
    int rc = write_out(outfile, &text);
    sb_free(&text);
    if (rc != EXIT_OK)
        return rc;
    if (strcmp(outfile, "-") == 0 && !cli_flush_stdout())
        return EXIT_IOERR;
    rc = cli_exit_code(&stats);
    if (ctx.full && rc == EXIT_OK)
        rc = EXIT_DATAERR;
    return rc;
usage_out:
    free(files);
    free(fwd);
    broker_opts_free(&b);
    return EXIT_USAGE;
}
