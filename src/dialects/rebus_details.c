/* rebus_details: see rebus_details.h. */
#include "rebus_details.h"

#include <string.h>

static const char AGG[] = " unhandled exceptions: ";
static const char CAUGHT[] = "Caught exception: ";

/* "time: " at s[i..]: the time's length plus 2 in *len. */
static bool time_head(const unsigned char *s, size_t n, size_t i, int64_t *ms, size_t *len)
{
    size_t used;
    if (!dotnet_culture_time_parse(s + i, n - i, ms, &used))
        return false;
    if (i + used + 2 > n || s[i + used] != ':' || s[i + used + 1] != ' ')
        return false;
    *len = used + 2;
    return true;
}

/* The next entry boundary after from: a blank line (LF LF or CR LF CR LF) followed by
 * "time: ". *next gets where that entry starts; returns where this one ends (n: none). */
static size_t next_entry(const unsigned char *s, size_t n, size_t from, size_t *next)
{
    for (size_t i = from; i + 1 < n; i++) {
        if (s[i] != '\n')
            continue;
        size_t j;
        size_t end;
        if (s[i + 1] == '\n') {
            j = i + 2;
            end = i;
        } else if (i + 2 < n && s[i + 1] == '\r' && s[i + 2] == '\n') {
            j = i + 3;
            end = i;
        } else {
            continue;
        }
        if (end > from && s[end - 1] == '\r')
            end--;
        int64_t ms;
        size_t len;
        if (j < n && s[j] >= '0' && s[j] <= '9' && time_head(s, n, j, &ms, &len)) {
            *next = j;
            return end;
        }
    }
    *next = n;
    return n;
}

static void set_exception(const unsigned char *s, struct rebus_failure *f)
{
    struct dotnet_exception e;
    f->has_exception = dotnet_exception_parse(s + f->details_off, f->details_len, &e);
    if (f->has_exception) {
        e.type_off += f->details_off;
        e.msg_off += f->details_off;
        f->exc = e;
    }
}

static void add(const unsigned char *s, struct rebus_details *d, const struct rebus_failure *f)
{
    d->seen++;
    if (f->has_time && (!d->has_latest || f->time_ms > d->latest_ms)) {
        d->has_latest = true;
        d->latest_ms = f->time_ms;
    }
    if (d->n < REBUS_MAX_FAILURES) {
        d->f[d->n] = *f;
        set_exception(s, &d->f[d->n]);
        d->n++;
    }
}

static bool leading_count(const unsigned char *s, size_t n, int64_t *count, size_t *after)
{
    size_t i = 0;
    int64_t v = 0;
    bool overflow = false;
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        if (v > (INT64_MAX - 9) / 10)
            overflow = true;
        else
            v = v * 10 + (s[i] - '0');
        i++;
    }
    if (i == 0 || n - i < sizeof AGG - 1 || memcmp(s + i, AGG, sizeof AGG - 1) != 0)
        return false;
    *count = overflow ? -1 : v;
    *after = i + sizeof AGG - 1;
    return true;
}

static void aggregate(const unsigned char *s, size_t n, size_t pos, struct rebus_details *d)
{
    while (pos < n) {
        struct rebus_failure f = {0};
        size_t hl = 0;
        f.has_time = time_head(s, n, pos, &f.time_ms, &hl);
        if (f.has_time) {
            f.time_off = pos;
            f.time_len = hl - 2;
        }
        size_t start = pos + hl, next;
        size_t end = next_entry(s, n, start, &next);
        f.details_off = start;
        f.details_len = end - start;
        add(s, d, &f);
        pos = next;
    }
}

void rebus_details_parse(const void *sv, size_t n, struct rebus_details *d)
{
    const unsigned char *s = sv;
    memset(d, 0, sizeof *d);
    if (n == 0) {
        d->form = RD_EMPTY;
        return;
    }
    size_t after;
    int64_t count;
    if (leading_count(s, n, &count, &after)) {
        d->form = RD_AGGREGATE;
        if (count >= 0) {
            d->has_count = true;
            d->count = count;
        }
        aggregate(s, n, after, d);
        return;
    }
    struct rebus_failure f = {0};
    if (n >= sizeof CAUGHT - 1 && memcmp(s, CAUGHT, sizeof CAUGHT - 1) == 0) {
        d->form = RD_CAUGHT;
        f.details_off = sizeof CAUGHT - 1;
        f.details_len = n - f.details_off;
        add(s, d, &f);
        return;
    }
    /* "message: Type: message…": the first ": " after which an exception starts whose
     * message begins with the text before it */
    int tries = 0;
    for (size_t i = 0; i + 2 < n && tries < 32; i++) {
        if (s[i] != ':' || s[i + 1] != ' ')
            continue;
        tries++; /* each try reads to the end: a bounded number keeps this linear */
        struct dotnet_exception e;
        if (!dotnet_exception_parse(s + i + 2, n - i - 2, &e))
            continue;
        if (e.msg_len >= i && memcmp(s + i + 2 + e.msg_off, s, i) == 0) {
            d->form = RD_MESSAGE;
            f.details_off = i + 2;
            f.details_len = n - f.details_off;
            add(s, d, &f);
            return;
        }
    }
    f.details_off = 0;
    f.details_len = n;
    add(s, d, &f);
    d->form = d->f[0].has_exception ? RD_EXCEPTION : RD_TEXT;
}

const struct rebus_failure *rebus_details_last(const struct rebus_details *d)
{
    return d->n ? &d->f[d->n - 1] : NULL;
}
