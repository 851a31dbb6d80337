/*
 * groups: `dlqx groups [--json] [--filter EXPR] [FILE...|-]` — the explorer's failure groups
 * of snapshot files (or standard input): every group, fingerprint and type, with its key
 * (g:…, what --group takes), count, first and last dead-lettered, rate, type and cause, as a
 * table or one JSON object per group (docs/groups-format.md). The groups are the explorer's:
 * the same store, the same grouping (src/analysis/groups.h) and the same clock (entry_time_dead_at:
 * the newest x-death time, BabelQueue's failed_at, else first seen). --filter narrows the
 * messages first, with the explorer's filter language.
 *
 * `dlqx groups QUEUE` (one operand that is not a file, with a broker given by --url or
 * DLQX_URL): the queue is read as `dlqx peek QUEUE` reads it — every message given back, in
 * order — by a `dlqx peek` child whose snapshot comes through a pipe; its messages (the plan,
 * how complete the snapshot is) are on standard error and its failure is the exit status
 * (src/cli/peek_input.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker_opts.h"
#include "cli.h"
#include "filter.h"
#include "groups.h"
#include "hval_json.h"
#include "peek_input.h"
#include "sanitize.h"
#include "store.h"

struct groups_ctx {
    struct store *store;
    int64_t now_ms;
    bool full; /* the store refused a message: reported once, reading stops */
};

static bool add(struct message *m, bool *keep, void *vctx)
{
    struct groups_ctx *ctx = vctx;
    struct error err;
    /* The line the record was read from is kept as it is (as the explorer's loader
     * keeps it), not written anew. */
    const char *line;
    size_t len;
    cli_current_record(&line, &len);
    if (store_append_line(ctx->store, m, line, len, ctx->now_ms, &err) != ST_OK) {
        san_eprintf("dlqx groups: %s: the groups are of the messages before it\n", err.msg);
        ctx->full = true;
        return false;
    }
    return true;
}

static void usage(FILE *to)
{
    fputs("usage: dlqx groups [--json] [--filter EXPR] [--ascii|--utf8] [--max-record-size SIZE]\n"
          "                   [FILE...|- | QUEUE [broker options]]\n",
          to);
}

/* Arrivals per hour between the first and the last; < 0 when there is no span to measure. */
static double rate_per_hour(const struct group *grp)
{
    if (grp->count < 2 || grp->first_ms <= 0 || grp->last_ms <= grp->first_ms)
        return -1;
    return (double)grp->count * 3600000.0 / (double)(grp->last_ms - grp->first_ms);
}

static void when(int64_t ms, char out[32])
{
    if (ms > 0)
        time_format_rfc3339(ms, false, out);
    else
        snprintf(out, 32, "?");
}

static json_t *group_json(const struct store *s, const struct group *grp)
{
    char key[GROUP_KEY_TEXT], fp[17], t[32];
    group_key_text(grp->group_key, key);
    snprintf(fp, sizeof fp, "%016llx", (unsigned long long)grp->fingerprint);
    json_t *o = json_object();
    json_object_set_new(o, "group", json_string(key));
    json_object_set_new(o, "fingerprint", json_string(fp));
    json_object_set_new(o, "count", json_integer(grp->count));
    json_object_set_new(o, "type", bytes_to_json(grp->type, strlen(grp->type)));
    json_object_set_new(o, "exception", bytes_to_json(grp->exception, strlen(grp->exception)));
    json_object_set_new(o, "cause", bytes_to_json(grp->key, strlen(grp->key)));
    json_object_set_new(o, "from_broker", json_boolean(grp->from_broker));
    json_object_set_new(o, "first_dead_ms",
                        grp->first_ms > 0 ? json_integer(grp->first_ms) : json_null());
    when(grp->first_ms, t);
    json_object_set_new(o, "first_dead", grp->first_ms > 0 ? json_string(t) : json_null());
    json_object_set_new(o, "last_dead_ms",
                        grp->last_ms > 0 ? json_integer(grp->last_ms) : json_null());
    when(grp->last_ms, t);
    json_object_set_new(o, "last_dead", grp->last_ms > 0 ? json_string(t) : json_null());
    double r = rate_per_hour(grp);
    json_object_set_new(o, "rate_per_hour", r >= 0 ? json_real(r) : json_null());
    json_t *qs = json_array();
    char buf[STORE_TEXT_MAX];
    for (size_t i = 0; i < grp->n_queues; i++) {
        size_t n = store_text(s, grp->queues[i].queue, buf);
        json_array_append_new(qs, json_pack("{s:o,s:I}", "queue", bytes_to_json(buf, n), "count",
                                            (json_int_t)grp->queues[i].count));
    }
    json_object_set_new(o, "queues", qs);
    return o;
}

enum { W_COUNT = 7, W_TIME = 24, W_RATE = 9, W_KEY = GROUP_KEY_TEXT - 1, W_TYPE = 28 };

static void cell(struct strbuf *sb, const char *s, int width, unsigned flags)
{
    sanitize_fit(sb, s, strlen(s), width, flags | SAN_PAD);
    sb_adds(sb, "  ");
}

static void table_row(struct strbuf *sb, const struct group *grp, unsigned flags)
{
    char count[24], first[32], last[32], rate[32], key[GROUP_KEY_TEXT];
    snprintf(count, sizeof count, "%7u", grp->count);
    when(grp->first_ms, first);
    when(grp->last_ms, last);
    double r = rate_per_hour(grp);
    if (r < 0)
        snprintf(rate, sizeof rate, "-");
    else if (r >= 60)
        snprintf(rate, sizeof rate, "%.1f/min", r / 60);
    else
        snprintf(rate, sizeof rate, "%.1f/h", r);
    group_key_text(grp->group_key, key);
    cell(sb, count, W_COUNT, flags);
    cell(sb, first, W_TIME, flags);
    cell(sb, last, W_TIME, flags);
    cell(sb, rate, W_RATE, flags);
    cell(sb, key, W_KEY, flags);
    cell(sb, grp->type, W_TYPE, flags);
    struct strbuf cause;
    sb_init(&cause);
    if (*grp->exception) {
        sb_adds(&cause, grp->exception);
        sb_adds(&cause, "  ");
    }
    sb_adds(&cause, *grp->key ? grp->key : "(no error)");
    sanitize_fit(sb, cause.buf, cause.len, 100, flags);
    sb_free(&cause);
    while (sb->len && sb->buf[sb->len - 1] == ' ')
        sb->len--;
    sb_addc(sb, '\n');
}

static void table(const struct groups *g, unsigned flags)
{
    struct strbuf sb;
    sb_init(&sb);
    cell(&sb, "  COUNT", W_COUNT, flags);
    cell(&sb, "FIRST DEAD-LETTERED", W_TIME, flags);
    cell(&sb, "LAST DEAD-LETTERED", W_TIME, flags);
    cell(&sb, "RATE", W_RATE, flags);
    cell(&sb, "GROUP", W_KEY, flags);
    cell(&sb, "TYPE", W_TYPE, flags);
    sb_adds(&sb, "CAUSE\n");
    for (size_t k = 0; k < groups_count(g); k++)
        table_row(&sb, groups_at(g, k), flags);
    fwrite(sb.buf ? sb.buf : "", 1, sb.len, stdout);
    sb_free(&sb);
}

int cmd_groups(int argc, char **argv)
{
    struct filter *filter = NULL;
    int fo, mr;
    bool json = false;
    int ascii = -1, i = 1, n_fwd = 0;
    enum bopt_next br;
    char **fwd = xcalloc((size_t)argc + 1, sizeof *fwd); /* broker options, for the peek */
    struct broker_opts b;
    broker_opts_init(&b);
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if ((br = cli_broker_arg(&b, argc, argv, &i, fwd, &n_fwd)) != BOPT_NOT_MINE) {
            if (br == BOPT_ERROR)
                goto usage_out;
        } else if ((fo = cli_filter_option("groups", argc, argv, &i, &filter)) != 0) {
            if (fo < 0)
                goto usage_out;
        } else if ((mr = options_max_record(argc, argv, &i)) != 0) {
            if (mr < 0)
                goto usage_out;
        } else if (strcmp(a, "--json") == 0) {
            json = true;
        } else if (strcmp(a, "--utf8") == 0 || strcmp(a, "--ascii") == 0) {
            ascii = a[2] == 'a';
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            filter_free(filter);
            broker_opts_free(&b);
            free(fwd);
            return EXIT_OK;
        } else if (a[0] == '-' && a[1]) {
            san_eprintf("dlqx groups: unknown option %s\n", a);
            usage(stderr);
            goto usage_out;
        } else {
            break;
        }
    }
    bool tty = isatty(STDOUT_FILENO);
    if (ascii < 0)
        ascii = tty;
    struct groups_ctx ctx = {.now_ms = clock_now_ms()};
    struct error err;
    if (store_new(0, NULL, &ctx.store, &err) != ST_OK) {
        san_eprintf("dlqx groups: %s\n", err.msg);
        filter_free(filter);
        return EXIT_IOERR;
    }
    /* One operand that is no file, and a broker: a queue, read as dlqx peek reads it. */
    const char *env_url = getenv("DLQX_URL");
    pid_t peek = -1;
    char *from_stdin[] = {(char *)(uintptr_t) "-"};
    /* Broker options may follow the QUEUE too (dlqx groups orders.dlq --url …). */
    char **inputs = xcalloc((size_t)argc + 1, sizeof *inputs);
    int n_inputs = 0;
    for (int j = i; j < argc; j++) {
        enum bopt_next r = argv[j][0] == '-' && argv[j][1]
                               ? cli_broker_arg(&b, argc, argv, &j, fwd, &n_fwd)
                               : BOPT_NOT_MINE;
        if (r == BOPT_ERROR) {
            filter_free(filter);
            store_free(ctx.store);
            broker_opts_free(&b);
            free(fwd);
            free(inputs);
            return EXIT_USAGE;
        }
        if (r == BOPT_NOT_MINE)
            inputs[n_inputs++] = argv[j];
    }
    char **operands = inputs;
    if (n_inputs == 1 && strcmp(inputs[0], "-") != 0 && access(inputs[0], F_OK) != 0 &&
        (b.n_urls || (env_url && *env_url))) {
        peek = cli_peek_child("groups", inputs[0], fwd, n_fwd);
        if (peek < 0) {
            filter_free(filter);
            store_free(ctx.store);
            broker_opts_free(&b);
            free(fwd);
            free(operands);
            return EXIT_IOERR;
        }
        inputs = from_stdin;
        n_inputs = 1;
    } else if (n_fwd) {
        san_eprintf("dlqx groups: broker options go with a QUEUE (one name that is not a file)\n");
        filter_free(filter);
        store_free(ctx.store);
        broker_opts_free(&b);
        free(fwd);
        free(operands);
        return EXIT_USAGE;
    }
    broker_opts_free(&b);
    free(fwd);
    struct cli_inputs stats;
    cli_read_inputs(inputs, n_inputs, add, &ctx, &stats);
    free(operands);
    int peek_rc = EXIT_OK;
    if (peek > 0)
        peek_rc = cli_peek_wait(peek);
    size_t n = store_count(ctx.store);
    uint32_t *pick = filter ? xmalloc((n ? n : 1) * sizeof *pick) : NULL;
    size_t picked = 0;
    for (size_t k = 0; filter && k < n; k++)
        if (filter_match_entry(filter, ctx.store, k, ctx.now_ms))
            pick[picked++] = (uint32_t)k;
    struct groups_options opt = {.time = entry_time_dead_at, .indices = pick, .n_indices = picked};
    struct groups *g = groups_build(ctx.store, &opt);
    if (json) {
        for (size_t k = 0; k < groups_count(g); k++) {
            json_t *o = group_json(ctx.store, groups_at(g, k));
            char *line = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6) |
                                           (ascii ? JSON_ENSURE_ASCII : 0));
            cli_write_json(line, strlen(line), ascii, stdout);
            fputc('\n', stdout);
            free(line);
            json_decref(o);
        }
    } else {
        table(g, ascii && !tty ? SAN_ASCII : 0);
    }
    groups_free(g);
    free(pick);
    filter_free(filter);
    store_free(ctx.store);
    int rc = cli_exit_code(&stats);
    if (!cli_flush_stdout())
        return EXIT_IOERR;
    if (ctx.full && rc == EXIT_OK)
        rc = EXIT_DATAERR;
    if (peek_rc != EXIT_OK) /* the peek's failure (no such queue, incomplete, ...) first */
        rc = peek_rc;
    return rc;
usage_out:
    filter_free(filter);
    broker_opts_free(&b);
    free(fwd);
    return EXIT_USAGE;
}
