/*
 * report_md: the report (report.h) in markdown — a summary table per queue, the timelines as
 * text sparklines in code blocks, a table of causes per queue and the replays from the journal.
 * Every string from a dead letter or the command line is sanitised (sanitize.h: one line, no
 * controls, cut at REPORT_CELL_MAX columns) and then escaped for markdown: | ` \ * _ [ ] as
 * backslash escapes, < > & as entities, so that it can neither break a table nor become markup.
 */
#include <string.h>

#include "report.h"
#include "sanitize.h"

static void md_text(struct strbuf *out, const char *raw)
{
    struct strbuf safe;
    sb_init(&safe);
    sanitize_fit(&safe, raw, strlen(raw), REPORT_CELL_MAX, 0);
    for (size_t k = 0; k < safe.len; k++) {
        char c = safe.buf[k];
        if (c == '<')
            sb_adds(out, "&lt;");
        else if (c == '>')
            sb_adds(out, "&gt;");
        else if (c == '&')
            sb_adds(out, "&amp;");
        else {
            if (strchr("|`\\*_[]", c))
                sb_addc(out, '\\');
            sb_addc(out, c);
        }
    }
    sb_free(&safe);
}

static void md_cell_text(struct strbuf *out, const char *raw, const char *empty)
{
    sb_adds(out, " ");
    if (*raw)
        md_text(out, raw);
    else
        sb_adds(out, empty);
    sb_adds(out, " |");
}

static void md_times(struct strbuf *out, int64_t first, int64_t last, double rate, bool going)
{
    char a[32], b[32];
    report_time(first, a);
    report_time(last, b);
    sb_addf(out, " %s | %s | %.1f/min | %s |", a, b, rate, report_status(going, last));
}

static void md_timeline(struct strbuf *out, const struct timeline *t)
{
    sb_adds(out, "```\n");
    timeline_render(t, 60, 0, out);
    sb_adds(out, "```\n\n");
}

static void md_cause(struct strbuf *out, const struct report_cause *c)
{
    sb_addf(out, "| %u |", c->count);
    md_times(out, c->first_ms, c->last_ms, c->rate_per_min, c->still_going);
    sb_addf(out, " %s |", c->key);
    md_cell_text(out, c->dialect, "-");
    md_cell_text(out, c->type, "-");
    md_cell_text(out, c->sample_id, "-");
    md_cell_text(out, c->error, "(no error)");
    sb_addc(out, '\n');
}

static void md_queue(struct strbuf *out, const struct report_queue *q)
{
    sb_adds(out, "### ");
    md_text(out, q->name);
    sb_addf(out, "\n\n%u dead letter%s, %zu cause%s.\n\n", q->count, q->count == 1 ? "" : "s",
            q->n_causes, q->n_causes == 1 ? "" : "s");
    md_timeline(out, &q->timeline);
    sb_adds(out, "| Count | First | Last | Rate now | Status | Group | Framework | Type | "
                 "Sample id | Error |\n"
                 "|---:|---|---|---:|---|---|---|---|---|---|\n");
    for (size_t k = 0; k < q->n_causes; k++)
        md_cause(out, &q->causes[k]);
    sb_addc(out, '\n');
}

static void md_journal(struct strbuf *out, const struct report *r)
{
    sb_adds(out, "## Replayed\n\n");
    if (!r->journal_path || !r->journal_found) {
        sb_adds(out, "no journal");
        if (r->journal_path) {
            sb_adds(out, " (");
            md_text(out, r->journal_path);
            sb_adds(out, ")");
        }
        sb_adds(out, ": nothing is recorded as replayed, moved or deleted.\n");
        return;
    }
    sb_adds(out, "From the journal ");
    md_text(out, r->journal_path);
    if (r->journal_malformed)
        sb_addf(out, " (%llu malformed lines skipped)", (unsigned long long)r->journal_malformed);
    sb_adds(out, ".\n\n");
    if (!r->n_replayed) {
        sb_adds(out, "The journal records no runs.\n");
        return;
    }
    sb_adds(out, "| Queue | Runs | Ops | Done | Kept | Unknown |\n"
                 "|---|---:|---:|---:|---:|---:|\n");
    for (size_t k = 0; k < r->n_replayed; k++) {
        const struct report_replayed *p = &r->replayed[k];
        sb_adds(out, "|");
        md_cell_text(out, p->source, "-");
        sb_addf(out, " %llu", (unsigned long long)p->runs);
        if (p->dry_runs)
            sb_addf(out, " (%llu dry)", (unsigned long long)p->dry_runs);
        sb_addf(out, " | %llu | %llu | %llu | %llu |\n", (unsigned long long)p->ops,
                (unsigned long long)p->done, (unsigned long long)p->kept,
                (unsigned long long)p->unknown);
    }
}

void report_markdown(const struct report *r, struct strbuf *out)
{
    char now[32];
    report_time(r->now_ms, now);
    sb_addf(out,
            "# Dead-letter incident report\n\nAs of %s: %llu dead letter%s in %zu queue%s.\n\n",
            now, (unsigned long long)r->total, r->total == 1 ? "" : "s", r->n_queues,
            r->n_queues == 1 ? "" : "s");
    sb_adds(out, "## Queues\n\n| Queue | Dead letters | First | Last | Rate now | Status | "
                 "Causes |\n|---|---:|---|---|---:|---|---:|\n");
    for (size_t q = 0; q < r->n_queues; q++) {
        const struct report_queue *rq = &r->queues[q];
        sb_adds(out, "|");
        md_cell_text(out, rq->name, "(none)");
        sb_addf(out, " %u |", rq->count);
        md_times(out, rq->first_ms, rq->last_ms, rq->rate_per_min, rq->still_going);
        sb_addf(out, " %zu |\n", rq->n_causes);
    }
    sb_adds(out, "\n## Timeline\n\n");
    md_timeline(out, &r->timeline);
    sb_adds(out, "## Causes by queue\n\n");
    for (size_t q = 0; q < r->n_queues; q++)
        md_queue(out, &r->queues[q]);
    md_journal(out, r);
}
