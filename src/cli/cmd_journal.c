/*
 * journal: what dlqx has written to brokers, read back from the replay journal
 * (docs/journal-format.md) — one line per intent with what became of it, or with --pending
 * only the intents without an outcome (the copies that may have been sent twice after a
 * crash; exit status 3 when there are any), or the records themselves as JSON Lines.
 */
#include <langinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "hval_json.h"
#include "journal.h"
#include "replay_cli.h"
#include "sanitize.h"

static const char usage_text[] =
    "usage: dlqx journal [--pending] [--json] [--run ID] [--file PATH]\n"
    "       dlqx journal --reconcile [--run ID] [--file PATH] [BROKER OPTIONS]\n"
    "\n"
    "What dlqx has written to brokers (replays, re-issues, moves, deletes): one line per\n"
    "intent with its time, run, op, source -> target, old id -> new id, and what became of it\n"
    "(done, kept, unknown, or PENDING: no outcome was written, e.g. after a crash).\n"
    "\n"
    "  --pending    only the intents without an outcome or with outcome unknown: each may\n"
    "               have been sent (a possible duplicate), none was lost; exit status 3 when\n"
    "               there are any, 0 when none\n"
    "  --json       the records (with --pending: the pending intents) as JSON Lines\n"
    "  --run ID     only the runs whose id begins with ID (the table shows 8 characters)\n"
    "  --reconcile  check each pending intent on the broker, without removing anything: is\n"
    "               the dead letter still in its queue, is its copy at the target queue; write\n"
    "               a resolution for each that can be told (done, duplicate, kept), say what\n"
    "               to do; exit status 3 when some stay pending\n"
    "  --file PATH  the journal to read (default: $DLQX_JOURNAL, else\n"
    "               $XDG_STATE_HOME/dlqx/journal.jsonl, else ~/.local/state/dlqx/journal.jsonl)\n"
    "\n"
    "A summary (runs, intents, pending) and any skipped lines are reported on standard error.\n"
    "See docs/journal-format.md.\n";

struct jctx {
    struct strbuf line;
    size_t json_flags;
    bool write_failed;
};

static void print_json(struct jctx *c, const json_t *o)
{
    sb_reset(&c->line);
    char *s = json_dumps(o, c->json_flags);
    sb_adds(&c->line, s ? s : "{}");
    sb_addc(&c->line, '\n');
    free(s);
    if (!cli_write_json(c->line.buf, c->line.len, (c->json_flags & JSON_ENSURE_ASCII) != 0,
                        stdout) ||
        ferror(stdout))
        c->write_failed = true;
}

static bool print_record(void *vc, json_t *rec)
{
    struct jctx *c = vc;
    print_json(c, rec);
    return !c->write_failed;
}

/* A string field (or its {"base64"} form) made safe for the terminal; false when absent. */
static bool add_field(struct strbuf *out, const json_t *o, const char *key, size_t max_bytes,
                      unsigned san)
{
    const json_t *v = json_object_get(o, key);
    if (!v || json_is_null(v))
        return false;
    struct bytes b = {0, NULL};
    if (bytes_from_json(v, key, &b, NULL) != ST_OK) {
        sb_adds(out, "?");
        return true;
    }
    sanitize_append(out, b.data, b.len < max_bytes ? b.len : max_bytes, san);
    bytes_free(&b);
    return true;
}

static bool same_field(const json_t *o, const char *a, const char *b)
{
    const json_t *x = json_object_get(o, a), *y = json_object_get(o, b);
    return x && y && json_equal(x, y);
}

enum { COL_AT, COL_RUN, COL_OP, COL_ROUTE, COL_IDS, COL_RESULT, COL_REASON, NCOL };

static const char *const col_head[NCOL] = {
    "TIME",   "RUN",   "OP", "SOURCE \xe2\x86\x92 TARGET", "OLD ID \xe2\x86\x92 NEW ID",
    "RESULT", "REASON"};
static const char *const col_head_ascii[NCOL] = {
    "TIME", "RUN", "OP", "SOURCE -> TARGET", "OLD ID -> NEW ID", "RESULT", "REASON"};
/* Columns are as wide as their widest cell, up to these. */
static const int max_width[NCOL] = {24, 12, 8, 48, 76, 18, 120};

struct row {
    struct strbuf cell[NCOL];
};

static void build_row(struct row *r, const json_t *in, unsigned san, const char *arrow)
{
    for (int k = 0; k < NCOL; k++)
        sb_init(&r->cell[k]);
    add_field(&r->cell[COL_AT], in, "at", 64, san);
    add_field(&r->cell[COL_RUN], in, "run", 8, san);
    /* An intent of a later attempt (the run carried on after a lost connection): RUN#N. */
    const json_t *att = json_object_get(in, "attempt");
    if (json_is_integer(att) && json_integer_value(att) > 1 && json_integer_value(att) < 1000)
        sb_addf(&r->cell[COL_RUN], "#%lld", (long long)json_integer_value(att));
    add_field(&r->cell[COL_OP], in, "op", 64, san);
    struct strbuf *route = &r->cell[COL_ROUTE];
    add_field(route, in, "source", 1024, san);
    const json_t *t = json_object_get(in, "target");
    if (json_is_object(t)) {
        sb_adds(route, arrow);
        struct strbuf ex;
        sb_init(&ex);
        /* The default exchange routes to the queue the key names: show just the key. */
        if (add_field(&ex, t, "exchange", 1024, san) && ex.len) {
            sb_add(route, ex.buf, ex.len);
            sb_addc(route, ':');
        }
        sb_free(&ex);
        add_field(route, t, "routing_key", 1024, san);
    }
    struct strbuf *ids = &r->cell[COL_IDS];
    add_field(ids, in, "old_id", 1024, san);
    if (json_object_get(in, "new_id") && !same_field(in, "old_id", "new_id")) {
        sb_adds(ids, arrow);
        add_field(ids, in, "new_id", 1024, san);
    }
    const json_t *oc = json_object_get(in, "outcome");
    const json_t *rs = json_object_get(in, "resolution");
    if (json_is_object(rs)) {
        /* Settled by --reconcile: what it found, in place of the missing or unknown outcome. */
        sb_adds(&r->cell[COL_RESULT], "resolved ");
        if (!add_field(&r->cell[COL_RESULT], rs, "result", 16, san))
            sb_adds(&r->cell[COL_RESULT], "?");
        add_field(&r->cell[COL_REASON], rs, "reason", 2048, san);
    } else if (!oc) {
        sb_adds(&r->cell[COL_RESULT], "PENDING");
    } else {
        if (!add_field(&r->cell[COL_RESULT], oc, "result", 16, san))
            sb_adds(&r->cell[COL_RESULT], "?");
        add_field(&r->cell[COL_REASON], oc, "reason", 2048, san);
    }
}

static void row_free(struct row *r)
{
    for (int k = 0; k < NCOL; k++)
        sb_free(&r->cell[k]);
}

static void print_table(const json_t *intents, unsigned san, bool *write_failed)
{
    size_t n = json_array_size(intents);
    if (!n)
        return;
    const char *arrow = san & SAN_ASCII ? " -> " : " \xe2\x86\x92 ";
    const char *const *head = san & SAN_ASCII ? col_head_ascii : col_head;
    struct row *rows = xcalloc(n, sizeof *rows);
    int width[NCOL];
    for (int k = 0; k < NCOL; k++)
        width[k] = (int)sanitize_width(head[k], strlen(head[k]));
    for (size_t i = 0; i < n; i++) {
        build_row(&rows[i], json_array_get(intents, i), san, arrow);
        for (int k = 0; k < NCOL; k++) {
            int w = (int)sanitize_width(rows[i].cell[k].buf ? rows[i].cell[k].buf : "",
                                        rows[i].cell[k].len);
            if (w > width[k])
                width[k] = w < max_width[k] ? w : max_width[k];
        }
    }
    struct strbuf sb;
    sb_init(&sb);
    for (size_t i = 0; i <= n; i++) {
        sb_reset(&sb);
        for (int k = 0; k < NCOL; k++) {
            const char *s = i ? rows[i - 1].cell[k].buf : head[k];
            size_t len = i ? rows[i - 1].cell[k].len : strlen(head[k]);
            bool last = k == NCOL - 1;
            /* The cells are already safe: fitting them only cuts and pads. */
            sanitize_fit(&sb, s ? s : "", len, width[k], last ? 0 : SAN_PAD);
            if (!last)
                sb_adds(&sb, "  ");
        }
        while (sb.len && sb.buf[sb.len - 1] == ' ')
            sb.len--;
        sb_addc(&sb, '\n');
        if (fwrite(sb.buf, 1, sb.len, stdout) != sb.len)
            *write_failed = true;
    }
    sb_free(&sb);
    for (size_t i = 0; i < n; i++)
        row_free(&rows[i]);
    free(rows);
}

static const char *plural(uint64_t n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

int cmd_journal(int argc, char **argv)
{
    bool pending = false, json = false, reconcile = false;
    const char *run = NULL, *file = NULL;
    struct broker_opts b;
    broker_opts_init(&b);
    int brc = EXIT_OK;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        enum bopt_next br = broker_opts_arg(&b, argc, argv, &i);
        if (br == BOPT_ERROR) {
            broker_opts_free(&b);
            return EXIT_USAGE;
        }
        if (br == BOPT_CONSUMED)
            continue;
        if (strcmp(a, "--reconcile") == 0) {
            reconcile = true;
        } else if (strcmp(a, "--pending") == 0) {
            pending = true;
        } else if (strcmp(a, "--json") == 0) {
            json = true;
        } else if (strcmp(a, "--run") == 0 || strncmp(a, "--run=", 6) == 0 ||
                   strcmp(a, "--file") == 0 || strncmp(a, "--file=", 7) == 0) {
            bool is_run = a[2] == 'r';
            size_t n = is_run ? 5 : 6;
            const char *v = a[n] == '=' ? a + n + 1 : i + 1 < argc ? argv[++i] : NULL;
            if (!v || !*v) {
                san_eprintf("dlqx journal: %s needs a value\n", is_run ? "--run" : "--file");
                broker_opts_free(&b);
                return EXIT_USAGE;
            }
            *(is_run ? &run : &file) = v;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage_text, stdout);
            broker_opts_free(&b);
            return cli_flush_stdout() ? EXIT_OK : EXIT_IOERR;
        } else {
            struct strbuf sb;
            sb_init(&sb);
            sanitize_append(&sb, a, strlen(a), 0);
            san_eprintf("dlqx journal: %s %s (see dlqx journal --help)\n",
                        a[0] == '-' ? "unknown option" : "unexpected argument", sb.buf);
            sb_free(&sb);
            broker_opts_free(&b);
            return EXIT_USAGE;
        }
    }
    if (reconcile) {
        if (json || pending) {
            san_eprintf("dlqx journal: --reconcile goes without --pending and --json\n");
            brc = EXIT_USAGE;
        } else if (!broker_opts_finish(&b)) {
            brc = EXIT_USAGE;
        } else {
            char *jp = file ? xstrdup(file) : journal_default_path();
            brc = rcli_reconcile(jp, &b, run);
            free(jp);
            if (!cli_flush_stdout() && brc == EXIT_OK)
                brc = EXIT_IOERR;
        }
        broker_opts_free(&b);
        return brc;
    }
    broker_opts_free(&b);
    const char *cs = nl_langinfo(CODESET);
    bool utf8 = cs && (strcmp(cs, "UTF-8") == 0 || strcmp(cs, "utf8") == 0);
    unsigned san = utf8 ? 0 : SAN_ASCII;
    struct jctx c;
    memset(&c, 0, sizeof c);
    sb_init(&c.line);
    /* On a terminal JSON is ASCII, so that bidi controls in an id cannot act on it. */
    c.json_flags =
        JSON_COMPACT | JSON_PRESERVE_ORDER | (isatty(STDOUT_FILENO) ? JSON_ENSURE_ASCII : 0);

    char *path = file ? xstrdup(file) : journal_default_path();
    struct strbuf shown;
    sb_init(&shown);
    sanitize_append(&shown, path, strlen(path), san);

    json_t *intents = NULL;
    struct journal_summary sum;
    struct journal_scan_report rep;
    struct error err;
    error_clear(&err);
    /* --json without --pending prints every record as it is read; the pass still sums. */
    enum status st =
        journal_collect(path, run, pending || json, json && !pending ? print_record : NULL, &c,
                        &intents, &sum, &rep, &err);
    int rc = EXIT_OK;
    if (st == ST_ENOTFOUND) {
        san_eprintf("dlqx: no journal at %s (nothing has been written to a broker yet)\n",
                    shown.buf);
        rc = pending ? EXIT_OK : EXIT_NOINPUT;
        goto out;
    }
    if (st != ST_OK) {
        struct strbuf m;
        sb_init(&m);
        sanitize_append(&m, err.msg, strlen(err.msg), san);
        san_eprintf("dlqx: %s\n", m.buf);
        sb_free(&m);
        rc = EXIT_IOERR;
        goto out;
    }
    if (json && pending) {
        for (size_t i = 0; i < json_array_size(intents) && !c.write_failed; i++)
            print_json(&c, json_array_get(intents, i));
    } else if (!json) {
        print_table(intents, san, &c.write_failed);
    }
    if (!cli_flush_stdout() || c.write_failed) {
        rc = EXIT_IOERR;
        goto out;
    }
    if (rep.torn_tail)
        san_eprintf("dlqx: %s: the last line is incomplete (a write cut short, as by a crash) and "
                    "was skipped\n",
                    shown.buf);
    if (rep.malformed)
        san_eprintf("dlqx: %s: %llu malformed %s skipped (the first is line %llu)\n", shown.buf,
                    (unsigned long long)rep.malformed, plural(rep.malformed, "line", "lines"),
                    (unsigned long long)rep.first_malformed_line);
    if (run && !sum.runs && !sum.intents) {
        struct strbuf r;
        sb_init(&r);
        sanitize_append(&r, run, strlen(run), san);
        san_eprintf("dlqx: no run %s in %s\n", r.buf, shown.buf);
        sb_free(&r);
        rc = EXIT_NOMATCH;
        goto out;
    }
    char attempts[96] = "";
    if (sum.attempts)
        snprintf(attempts, sizeof attempts, " (%llu new %s after a lost connection)",
                 (unsigned long long)sum.attempts, plural(sum.attempts, "attempt", "attempts"));
    san_eprintf("dlqx: %s: %llu %s%s, %llu %s, %llu pending\n", shown.buf,
                (unsigned long long)sum.runs, plural(sum.runs, "run", "runs"), attempts,
                (unsigned long long)sum.intents, plural(sum.intents, "intent", "intents"),
                (unsigned long long)sum.pending);
    /* --pending answers one question, is any copy in doubt: 3 or 0. What was skipped is
     * reported above; a line cut short is never an intent whose copy was sent (the publish
     * waits for the intent's fsync). */
    if (pending)
        rc = sum.pending ? EXIT_PENDING : EXIT_OK;
    else if (rep.malformed)
        rc = EXIT_DATAERR;
out:
    json_decref(intents);
    sb_free(&shown);
    sb_free(&c.line);
    free(path);
    return rc;
}
