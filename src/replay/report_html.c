/*
 * report_html: the report (report.h) as one self-contained HTML page — inline CSS, each
 * timeline an inline SVG bar plot, no external resource and no script. Every string from a
 * dead letter or the command line is sanitised (sanitize.h; cut at REPORT_CELL_MAX
 * columns) and then escaped: < > & " ' as
 * character references, so that it is text in an element or an attribute and never markup.
 */
#include <string.h>

#include "report.h"
#include "sanitize.h"

static void h_text(struct strbuf *out, const char *raw)
{
    struct strbuf safe;
    sb_init(&safe);
    sanitize_fit(&safe, raw, strlen(raw), REPORT_CELL_MAX, 0);
    for (size_t k = 0; k < safe.len; k++) {
        switch (safe.buf[k]) {
        case '<':
            sb_adds(out, "&lt;");
            break;
        case '>':
            sb_adds(out, "&gt;");
            break;
        case '&':
            sb_adds(out, "&amp;");
            break;
        case '"':
            sb_adds(out, "&quot;");
            break;
        case '\'':
            sb_adds(out, "&#39;");
            break;
        default:
            sb_addc(out, safe.buf[k]);
        }
    }
    sb_free(&safe);
}

static void td_text(struct strbuf *out, const char *raw, const char *empty)
{
    sb_adds(out, "<td class=t>");
    if (*raw)
        h_text(out, raw);
    else
        sb_adds(out, empty);
    sb_adds(out, "</td>");
}

static void td_times(struct strbuf *out, int64_t first, int64_t last, double rate, bool going)
{
    char a[32], b[32];
    report_time(first, a);
    report_time(last, b);
    const char *status = report_status(going, last);
    sb_addf(out, "<td>%s</td><td>%s</td><td class=n>%.1f/min</td><td class=\"%s\">%s</td>", a, b,
            rate, going ? "going" : "stopped", status);
}

enum { PLOT_W = 720, PLOT_H = 130, PLOT_TOP = 18, PLOT_BOTTOM = 20 };

/* The timeline as bars, one a bucket, scaled to the busiest; the start and end below. */
static void svg_timeline(struct strbuf *out, const struct timeline *t)
{
    if (!t->n || !t->total) {
        sb_adds(out, "<p>no dated arrivals</p>\n");
        return;
    }
    uint32_t top = t->counts[t->peak] ? t->counts[t->peak] : 1;
    double w = (double)PLOT_W / (double)t->n;
    int h = PLOT_H - PLOT_TOP - PLOT_BOTTOM;
    sb_addf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" role=\"img\"><rect width=\"%d\" height=\"%d\" "
            "fill=\"#fafafa\"/>",
            PLOT_W, PLOT_H, PLOT_W, PLOT_H, PLOT_W, PLOT_H);
    for (size_t k = 0; k < t->n; k++) {
        if (!t->counts[k])
            continue;
        double bh = (double)t->counts[k] * h / top;
        sb_addf(out,
                "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#c0392b\">"
                "<title>%u</title></rect>",
                (double)k * w, PLOT_TOP + h - bh, w > 2 ? w - 1 : w, bh, t->counts[k]);
    }
    char a[32], b[32];
    report_time(t->start_ms, a);
    report_time(t->start_ms + (int64_t)t->n * t->bucket_ms, b);
    sb_addf(out,
            "<line x1=\"0\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#555\"/>"
            "<text x=\"2\" y=\"%d\" font-size=\"11\">%s</text>"
            "<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%s</text>"
            "<text x=\"2\" y=\"%d\" font-size=\"11\">peak %u</text></svg>\n",
            PLOT_TOP + h, PLOT_W, PLOT_TOP + h, PLOT_H - 5, a, PLOT_W - 2, PLOT_H - 5, b,
            PLOT_TOP - 5, t->counts[t->peak]);
    int64_t bms = t->bucket_ms;
    const char *unit = bms % 86400000 == 0 ? "day" : bms % 3600000 == 0 ? "hour" : "minute";
    int64_t per = bms % 86400000 == 0 ? 86400000 : bms % 3600000 == 0 ? 3600000 : 60000;
    sb_addf(out, "<p class=legend>%lld-%s buckets, %llu dated, %s", (long long)(bms / per), unit,
            (unsigned long long)t->total, timeline_trend_name(t->trend));
    if (t->undated)
        sb_addf(out, " (%llu undated)", (unsigned long long)t->undated);
    sb_adds(out, "</p>\n");
}

static void h_queue(struct strbuf *out, const struct report_queue *q)
{
    sb_adds(out, "<h3>");
    h_text(out, q->name);
    sb_addf(out, "</h3>\n<p>%u dead letter%s, %zu cause%s.</p>\n", q->count,
            q->count == 1 ? "" : "s", q->n_causes, q->n_causes == 1 ? "" : "s");
    svg_timeline(out, &q->timeline);
    sb_adds(out, "<table><tr><th>Count</th><th>First</th><th>Last</th><th>Rate now</th>"
                 "<th>Status</th><th>Group</th><th>Framework</th><th>Type</th><th>Sample id</th>"
                 "<th>Error</th></tr>\n");
    for (size_t k = 0; k < q->n_causes; k++) {
        const struct report_cause *c = &q->causes[k];
        sb_addf(out, "<tr><td class=n>%u</td>", c->count);
        td_times(out, c->first_ms, c->last_ms, c->rate_per_min, c->still_going);
        sb_addf(out, "<td><code>%s</code></td>", c->key);
        td_text(out, c->dialect, "-");
        td_text(out, c->type, "-");
        td_text(out, c->sample_id, "-");
        td_text(out, c->error, "(no error)");
        sb_adds(out, "</tr>\n");
    }
    sb_adds(out, "</table>\n");
}

static void h_journal(struct strbuf *out, const struct report *r)
{
    sb_adds(out, "<h2>Replayed</h2>\n<p>");
    if (!r->journal_path || !r->journal_found) {
        sb_adds(out, "no journal");
        if (r->journal_path) {
            sb_adds(out, " (");
            h_text(out, r->journal_path);
            sb_adds(out, ")");
        }
        sb_adds(out, ": nothing is recorded as replayed, moved or deleted.</p>\n");
        return;
    }
    sb_adds(out, "From the journal ");
    h_text(out, r->journal_path);
    if (r->journal_malformed)
        sb_addf(out, " (%llu malformed lines skipped)", (unsigned long long)r->journal_malformed);
    sb_adds(out, ".</p>\n");
    if (!r->n_replayed) {
        sb_adds(out, "<p>The journal records no runs.</p>\n");
        return;
    }
    sb_adds(out, "<table><tr><th>Queue</th><th>Runs</th><th>Ops</th><th>Done</th><th>Kept</th>"
                 "<th>Unknown</th></tr>\n");
    for (size_t k = 0; k < r->n_replayed; k++) {
        const struct report_replayed *p = &r->replayed[k];
        sb_adds(out, "<tr>");
        td_text(out, p->source, "-");
        sb_addf(out, "<td class=n>%llu", (unsigned long long)p->runs);
        if (p->dry_runs)
            sb_addf(out, " (%llu dry)", (unsigned long long)p->dry_runs);
        sb_addf(out,
                "</td><td class=n>%llu</td><td class=n>%llu</td><td class=n>%llu</td>"
                "<td class=n>%llu</td></tr>\n",
                (unsigned long long)p->ops, (unsigned long long)p->done,
                (unsigned long long)p->kept, (unsigned long long)p->unknown);
    }
    sb_adds(out, "</table>\n");
}

void report_html(const struct report *r, struct strbuf *out)
{
    char now[32];
    report_time(r->now_ms, now);
    sb_adds(out, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                 "<title>Dead-letter incident report</title>\n<style>\n"
                 "body{font-family:sans-serif;margin:2em;color:#222}\n"
                 "table{border-collapse:collapse;margin:.5em 0 1.5em;max-width:100%}\n"
                 "td,th{border:1px solid #ccc;padding:.25em .5em;text-align:left;"
                 "vertical-align:top}\n"
                 "th{background:#eee}td.n{text-align:right}\n"
                 "td.going{color:#c0392b;font-weight:bold}td.stopped{color:#27ae60}\n"
                 "td.n,td.going,td.stopped,code{white-space:nowrap}\n"
                 "td.t{overflow-wrap:anywhere;min-width:5em}td.t:last-child{min-width:14em}\n"
                 ".legend{color:#555;font-size:90%}\n"
                 "</style></head><body>\n<h1>Dead-letter incident report</h1>\n");
    sb_addf(out, "<p>As of %s: %llu dead letter%s in %zu queue%s.</p>\n", now,
            (unsigned long long)r->total, r->total == 1 ? "" : "s", r->n_queues,
            r->n_queues == 1 ? "" : "s");
    sb_adds(out, "<h2>Queues</h2>\n<table><tr><th>Queue</th><th>Dead letters</th><th>First</th>"
                 "<th>Last</th><th>Rate now</th><th>Status</th><th>Causes</th></tr>\n");
    for (size_t q = 0; q < r->n_queues; q++) {
        const struct report_queue *rq = &r->queues[q];
        sb_adds(out, "<tr>");
        td_text(out, rq->name, "(none)");
        sb_addf(out, "<td class=n>%u</td>", rq->count);
        td_times(out, rq->first_ms, rq->last_ms, rq->rate_per_min, rq->still_going);
        sb_addf(out, "<td class=n>%zu</td></tr>\n", rq->n_causes);
    }
    sb_adds(out, "</table>\n<h2>Timeline</h2>\n");
    svg_timeline(out, &r->timeline);
    sb_adds(out, "<h2>Causes by queue</h2>\n");
    for (size_t q = 0; q < r->n_queues; q++)
        h_queue(out, &r->queues[q]);
    h_journal(out, r);
    sb_adds(out, "</body></html>\n");
}
