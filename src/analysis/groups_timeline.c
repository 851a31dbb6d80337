/*
 * groups_timeline: the arrivals timeline — a histogram of entry times with its bucket size,
 * peak and trend (timeline_build) — and its rendering as a sparkline and a legend in plain
 * text (timeline_render). Apart from the grouping (groups.c): it only reads entry times
 * through the accessor and shares no state with the groups.
 */
#include "groups.h"

#include <stdlib.h>
#include <string.h>

/* ---- timeline ---- */

const char *timeline_trend_name(enum timeline_trend t)
{
    switch (t) {
    case TREND_QUIET:
        return "stopped";
    case TREND_FALLING:
        return "falling";
    case TREND_STEADY:
        return "steady";
    case TREND_RISING:
        return "rising";
    case TREND_NONE:
    default:
        return "no dated arrivals";
    }
}

/* The smallest bucket from the ladder that shows the span in at most max buckets. */
static int64_t choose_bucket(int64_t lo, int64_t hi, size_t max)
{
    static const int64_t ladder[] = {
        60000LL,    300000LL,   900000LL,   1800000LL,   3600000LL,    10800000LL,
        21600000LL, 43200000LL, 86400000LL, 604800000LL, 2592000000LL, 31536000000LL,
    };
    for (size_t k = 0; k < sizeof ladder / sizeof *ladder; k++)
        if ((uint64_t)(hi / ladder[k] - lo / ladder[k]) + 1 <= max)
            return ladder[k];
    /* Wider than a year a bucket: days, so that floor(hi/b) - floor(lo/b) < max. */
    int64_t day = 86400000LL, span = hi - lo;
    if (max < 2)
        return (hi / day + 1) * day;
    int64_t b = span / (int64_t)(max - 1) + 1;
    return (b / day + 1) * day;
}

void timeline_build(const struct store *s, const struct timeline_options *opt, struct timeline *out)
{
    memset(out, 0, sizeof *out);
    entry_time_fn when = opt && opt->time ? opt->time : entry_time_first_seen;
    void *ctx = opt ? opt->time_ctx : NULL;
    size_t max = opt && opt->max_buckets ? opt->max_buckets : 60;
    size_t count = opt && opt->indices ? opt->n_indices : store_count(s);
    int64_t lo = INT64_MAX, hi = 0;
    for (size_t k = 0; k < count; k++) {
        size_t i = opt && opt->indices ? opt->indices[k] : k;
        if (i >= store_count(s))
            continue;
        int64_t t = when(s, i, ctx);
        if (t <= 0) {
            out->undated++;
            continue;
        }
        lo = t < lo ? t : lo;
        hi = t > hi ? t : hi;
    }
    if (hi == 0) {
        out->trend = TREND_NONE;
        return;
    }
    int64_t now = opt ? opt->now_ms : 0;
    if (now > hi)
        hi = now;
    int64_t b = opt && opt->bucket_ms > 0 ? opt->bucket_ms : choose_bucket(lo, hi, max);
    /* A bucket given by the caller may make too many: the span is cut at the newest end. */
    if ((uint64_t)(hi / b - lo / b) >= 100000)
        lo = hi - b * 99999;
    out->bucket_ms = b;
    out->start_ms = lo / b * b;
    out->n = (size_t)(hi / b - lo / b) + 1;
    out->counts = xcalloc(out->n, sizeof *out->counts);
    for (size_t k = 0; k < count; k++) {
        size_t i = opt && opt->indices ? opt->indices[k] : k;
        if (i >= store_count(s))
            continue;
        int64_t t = when(s, i, ctx);
        if (t <= 0)
            continue;
        if (t < out->start_ms) { /* cut off above */
            out->undated++;
            continue;
        }
        size_t at = (size_t)((t - out->start_ms) / b);
        if (at < out->n && out->counts[at] < UINT32_MAX)
            out->counts[at]++;
        out->total++;
    }
    bool seen = false;
    for (size_t k = 0; k < out->n; k++) {
        if (!out->counts[k])
            continue;
        if (!seen)
            out->first = k;
        seen = true;
        out->last = k;
        if (out->counts[k] > out->counts[out->peak])
            out->peak = k;
    }
    if (!seen) {
        out->trend = TREND_NONE;
        return;
    }
    /* The trend: the recent window's rate against the average since the first arrival. When
     * now falls inside the last bucket, that bucket counts for the part that has elapsed (and
     * not at all before a quarter of it, when its count says nothing yet). */
    size_t w = opt && opt->window ? opt->window : 3;
    double part = 1.0;
    size_t end = out->n;
    if (now > 0 && now >= out->start_ms + (int64_t)(out->n - 1) * b) {
        part = (double)(now - (out->start_ms + (int64_t)(out->n - 1) * b) + 1) / (double)b;
        if (part < 0.25 && out->n > 1) {
            end = out->n - 1;
            part = 1.0;
        }
    }
    if (w > end)
        w = end;
    double recent = 0;
    for (size_t k = end - w; k < end; k++)
        recent += out->counts[k];
    double span = (double)(end > out->first ? end - out->first : 1) - 1.0 + part;
    double wlen = (double)w - 1.0 + part;
    out->recent_rate = wlen > 0 ? recent / wlen : 0;
    out->average_rate = span > 0 ? (double)out->total / span : 0;
    out->still_going = recent > 0;
    if (!out->still_going)
        out->trend = TREND_QUIET;
    else if (out->recent_rate > 1.5 * out->average_rate)
        out->trend = TREND_RISING;
    else if (out->recent_rate < 0.5 * out->average_rate)
        out->trend = TREND_FALLING;
    else
        out->trend = TREND_STEADY;
}

void timeline_free(struct timeline *t)
{
    free(t->counts);
    memset(t, 0, sizeof *t);
}

static void put_minute(struct strbuf *out, int64_t ms)
{
    char buf[32];
    time_format_rfc3339(ms / 60000 * 60000, false, buf); /* 2026-01-02T03:04:00Z */
    buf[16] = '\0';
    buf[10] = ' ';
    sb_adds(out, buf);
}

static void put_bucket(struct strbuf *out, int64_t ms)
{
    static const struct {
        int64_t ms;
        const char *unit;
    } units[] = {
        {604800000LL, "w"}, {86400000LL, "d"}, {3600000LL, "h"}, {60000LL, "m"}, {1000LL, "s"}};
    for (size_t k = 0; k < sizeof units / sizeof *units; k++)
        if (ms % units[k].ms == 0) {
            sb_addf(out, "%lld%s", (long long)(ms / units[k].ms), units[k].unit);
            return;
        }
    sb_addf(out, "%lldms", (long long)ms);
}

void timeline_render(const struct timeline *t, size_t width, unsigned flags, struct strbuf *out)
{
    static const char *const blocks[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    static const char ascii[] = " .:-=+*#@";
    if (!t->n || !t->total) {
        sb_adds(out, "\nno dated arrivals");
        if (t->undated)
            sb_addf(out, " (%llu undated)", (unsigned long long)t->undated);
        sb_addc(out, '\n');
        return;
    }
    if (width == 0)
        width = 1;
    size_t per = (t->n + width - 1) / width, cols = (t->n + per - 1) / per;
    uint64_t top = 0;
    for (size_t c = 0; c < cols; c++) {
        uint64_t sum = 0;
        for (size_t k = c * per; k < (c + 1) * per && k < t->n; k++)
            sum += t->counts[k];
        top = sum > top ? sum : top;
    }
    for (size_t c = 0; c < cols; c++) {
        uint64_t sum = 0;
        for (size_t k = c * per; k < (c + 1) * per && k < t->n; k++)
            sum += t->counts[k];
        size_t level = sum ? (size_t)((sum * 8 + top - 1) / top) : 0;
        if (flags & TIMELINE_ASCII)
            sb_addc(out, ascii[level]);
        else
            sb_adds(out, blocks[level]);
    }
    sb_addc(out, '\n');
    put_minute(out, t->start_ms);
    sb_adds(out, " .. ");
    put_minute(out, t->start_ms + (int64_t)t->n * t->bucket_ms);
    sb_adds(out, " UTC, ");
    put_bucket(out, t->bucket_ms * (int64_t)per);
    sb_addf(out, " a column, %llu total, peak %u at ", (unsigned long long)t->total,
            t->counts[t->peak]);
    put_minute(out, t->start_ms + (int64_t)t->peak * t->bucket_ms);
    sb_addf(out, ", %s", timeline_trend_name(t->trend));
    if (t->undated)
        sb_addf(out, " (%llu undated)", (unsigned long long)t->undated);
    sb_addc(out, '\n');
}
