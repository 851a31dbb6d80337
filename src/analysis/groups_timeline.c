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

void timeline_begin(struct timeline_builder *b, const struct store *s,
                    const struct timeline_options *opt, struct timeline *out)
{
    memset(b, 0, sizeof *b);
    memset(out, 0, sizeof *out);
    if (opt)
        b->opt = *opt;
    if (!b->opt.time)
        b->opt.time = entry_time_first_seen;
    if (!b->opt.max_buckets)
        b->opt.max_buckets = 60;
    if (!b->opt.window)
        b->opt.window = 3;
    b->s = s;
    b->out = out;
    b->count = b->opt.indices ? b->opt.n_indices : store_count(s);
    b->lo = INT64_MAX;
    b->hi = 0;
}

/* Entry k's time, 0 for one out of the store's range. */
static int64_t time_at(const struct timeline_builder *b, size_t k)
{
    size_t i = b->opt.indices ? b->opt.indices[k] : k;
    if (i >= store_count(b->s))
        return -1;
    int64_t t = b->opt.time(b->s, i, b->opt.time_ctx);
    return t <= 0 ? 0 : t;
}

/* The span seen: the buckets. false when nothing is dated. */
static bool span_done(struct timeline_builder *b)
{
    struct timeline *out = b->out;
    int64_t lo = b->lo, hi = b->hi;
    if (hi == 0) {
        out->trend = TREND_NONE;
        return false;
    }
    int64_t now = b->opt.now_ms;
    if (now > hi)
        hi = now;
    int64_t bk =
        b->opt.bucket_ms > 0 ? b->opt.bucket_ms : choose_bucket(lo, hi, b->opt.max_buckets);
    /* A bucket given by the caller may make too many: the span is cut at the newest end. */
    if ((uint64_t)(hi / bk - lo / bk) >= 100000)
        lo = hi - bk * 99999;
    out->bucket_ms = bk;
    out->start_ms = lo / bk * bk;
    out->n = (size_t)(hi / bk - lo / bk) + 1;
    out->counts = xcalloc(out->n, sizeof *out->counts);
    return true;
}

/* The peak and the trend, once every entry is counted. */
static void counts_done(const struct timeline_builder *b)
{
    struct timeline *out = b->out;
    int64_t now = b->opt.now_ms, bk = out->bucket_ms;
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
    size_t w = b->opt.window;
    double part = 1.0;
    size_t end = out->n;
    if (now > 0 && now >= out->start_ms + (int64_t)(out->n - 1) * bk) {
        part = (double)(now - (out->start_ms + (int64_t)(out->n - 1) * bk) + 1) / (double)bk;
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

size_t timeline_step(struct timeline_builder *b, size_t max)
{
    struct timeline *out = b->out;
    while (max && b->pass < 2) {
        size_t end = max < b->count - b->k ? b->k + max : b->count;
        max -= end - b->k;
        for (; b->k < end; b->k++) {
            int64_t t = time_at(b, b->k);
            if (t < 0)
                continue;
            if (b->pass == 0) {
                if (!t) {
                    out->undated++;
                    continue;
                }
                b->lo = t < b->lo ? t : b->lo;
                b->hi = t > b->hi ? t : b->hi;
                continue;
            }
            if (!t)
                continue;
            if (t < out->start_ms) { /* cut off above */
                out->undated++;
                continue;
            }
            size_t at = (size_t)((t - out->start_ms) / out->bucket_ms);
            if (at < out->n && out->counts[at] < UINT32_MAX)
                out->counts[at]++;
            out->total++;
        }
        if (b->k < b->count)
            break;
        b->k = 0;
        if (b->pass++ == 0) {
            if (!span_done(b))
                b->pass = 2;
        } else {
            counts_done(b);
        }
    }
    return b->pass == 0 ? 2 * b->count - b->k : b->pass == 1 ? b->count - b->k : 0;
}

void timeline_build(const struct store *s, const struct timeline_options *opt, struct timeline *out)
{
    struct timeline_builder b;
    timeline_begin(&b, s, opt, out);
    while (timeline_step(&b, SIZE_MAX))
        ;
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
