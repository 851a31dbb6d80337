/*
 * util: allocation, string buffers, the clock and time formatting.
 */
#include "util.h"

#include <signal.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exitcodes.h"

static void oom(size_t n)
{
    /* An error with its exit status (71, EX_OSERR), not a crash: atexit handlers restore the
     * terminal. */
    fprintf(stderr, "dlqx: out of memory (asked for %zu bytes)\n", n);
    exit(EXIT_OSERR);
}

void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        oom(n);
    return p;
}

void *xcalloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        oom(count * size);
    return p;
}

void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        oom(n);
    return q;
}

void xgrow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return;
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2 / elem)
            oom(SIZE_MAX);
        ncap *= 2;
    }
    *p = xrealloc(*p, ncap * elem);
    *cap = ncap;
}

char *xstrdup(const char *s)
{
    return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
    char *p = xmalloc(n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *xasprintf(const char *fmt, ...)
{
    struct strbuf sb;
    va_list ap;
    sb_init(&sb);
    va_start(ap, fmt);
    sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    return sb_detach(&sb, NULL);
}

void sb_init(struct strbuf *sb)
{
    sb->buf = NULL;
    sb->len = 0;
    sb->cap = 0;
}

void sb_free(struct strbuf *sb)
{
    free(sb->buf);
    sb_init(sb);
}

void sb_reset(struct strbuf *sb)
{
    sb->len = 0;
    if (sb->buf)
        sb->buf[0] = '\0';
}

void sb_grow(struct strbuf *sb, size_t n)
{
    if (n > SIZE_MAX - 1 - sb->len)
        oom(SIZE_MAX);
    xgrow((void **)&sb->buf, &sb->cap, sb->len + n + 1, 1);
}

void sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(NULL, 0, fmt, ap2);
    va_end(ap2);
    if (n < 0)
        return;
    xgrow((void **)&sb->buf, &sb->cap, sb->len + (size_t)n + 1, 1);
    vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
    sb->len += (size_t)n;
}

void sb_addf(struct strbuf *sb, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    sb_vaddf(sb, fmt, ap);
    va_end(ap);
}

char *sb_detach(struct strbuf *sb, size_t *len)
{
    char *p = sb->buf ? sb->buf : xstrdup("");
    if (len)
        *len = sb->len;
    sb_init(sb);
    return p;
}

double clock_mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool clock_fixed_ms(int64_t *ms)
{
    const char *fixed = getenv("DLQX_NOW");
    if (fixed && *fixed) {
        char *end;
        errno = 0;
        long long v = strtoll(fixed, &end, 10);
        if (errno == 0 && *end == '\0') {
            *ms = (int64_t)v;
            return true;
        }
    }
    return false;
}

int64_t clock_real_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t clock_now_ms(void)
{
    int64_t ms;
    return clock_fixed_ms(&ms) ? ms : clock_real_ms();
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (Howard Hinnant's
 * civil-from-days algorithm, written out here from its published description). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
    z += 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    unsigned doe = (unsigned)(z - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t yy = (int64_t)yoe + era * 400;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = yy + (*m <= 2);
}

void time_format_rfc3339(int64_t ms, bool with_ms, char out[32])
{
    int64_t secs = ms / 1000, frac = ms % 1000;
    if (frac < 0) {
        frac += 1000;
        secs -= 1;
    }
    int64_t days = secs / 86400, rem = secs % 86400;
    if (rem < 0) {
        rem += 86400;
        days -= 1;
    }
    int64_t y;
    unsigned mo, d;
    civil_from_days(days, &y, &mo, &d);
    int hh = (int)(rem / 3600), mi = (int)(rem % 3600 / 60), ss = (int)(rem % 60);
    if (y < 0 || y > 9999) {
        snprintf(out, 32, "%lld", (long long)ms);
        return;
    }
    /* "%04d-%02u-%02uT%02d:%02d:%02d[.%03d]Z", digit by digit (snprintf was 3% of decode) */
    const int field[] = {(int)y / 100, (int)y % 100, (int)mo, (int)d, hh, mi, ss};
    static const char before[7] = {0, 0, '-', '-', 'T', ':', ':'};
    char *p = out;
    for (int i = 0; i < 7; i++) {
        if (before[i])
            *p++ = before[i];
        *p++ = (char)('0' + field[i] / 10);
        *p++ = (char)('0' + field[i] % 10);
    }
    if (with_ms || frac) {
        *p++ = '.';
        *p++ = (char)('0' + frac / 100);
        *p++ = (char)('0' + frac / 10 % 10);
        *p++ = (char)('0' + frac % 10);
    }
    *p++ = 'Z';
    *p = '\0';
}

static bool digits(const char *s, size_t n, size_t at, size_t count, int *out)
{
    if (at + count > n)
        return false;
    int v = 0;
    for (size_t i = 0; i < count; i++) {
        char c = s[at + i];
        if (c < '0' || c > '9')
            return false;
        v = v * 10 + (c - '0');
    }
    *out = v;
    return true;
}

bool time_parse_rfc3339(const char *s, size_t n, int64_t *ms)
{
    int y, mo, d, hh, mi, ss;
    if (!digits(s, n, 0, 4, &y) || n < 20 || s[4] != '-' || !digits(s, n, 5, 2, &mo) ||
        s[7] != '-' || !digits(s, n, 8, 2, &d) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') ||
        !digits(s, n, 11, 2, &hh) || s[13] != ':' || !digits(s, n, 14, 2, &mi) || s[16] != ':' ||
        !digits(s, n, 17, 2, &ss))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || hh > 23 || mi > 59 || ss > 60)
        return false;
    size_t i = 19;
    int frac = 0;
    if (i < n && s[i] == '.') {
        i++;
        size_t start = i;
        int scale = 100;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            frac += (s[i] - '0') * scale;
            scale /= 10;
            i++;
        }
        if (i == start)
            return false;
    }
    int offset_min = 0;
    if (i < n && (s[i] == 'Z' || s[i] == 'z')) {
        i++;
    } else if (i < n && (s[i] == '+' || s[i] == '-')) {
        int oh, om;
        if (!digits(s, n, i + 1, 2, &oh) || i + 3 >= n || s[i + 3] != ':' ||
            !digits(s, n, i + 4, 2, &om))
            return false;
        offset_min = (oh * 60 + om) * (s[i] == '-' ? -1 : 1);
        i += 6;
    } else {
        return false;
    }
    if (i != n)
        return false;
    int64_t days = days_from_civil(y, (unsigned)mo, (unsigned)d);
    int64_t secs = days * 86400 + hh * 3600 + mi * 60 + ss - (int64_t)offset_min * 60;
    *ms = secs * 1000 + frac;
    return true;
}

/* v >= 0 in decimal at p; the end. */
static char *put_decimal(char *p, long long v)
{
    char t[24];
    int n = 0;
    do
        t[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n)
        *p++ = t[--n];
    return p;
}

/* "%s%lld%c%02lld%c" without snprintf (it was 5% of dlqx decode --format table) */
static void duration_parts(char out[32], bool neg, long long a, char ua, long long b, char ub)
{
    char *p = out;
    if (neg)
        *p++ = '-';
    p = put_decimal(p, a);
    *p++ = ua;
    if (b < 10)
        *p++ = '0';
    p = put_decimal(p, b);
    *p++ = ub;
    *p = '\0';
}

void duration_format(double seconds, char out[32])
{
    if (seconds != seconds) {
        snprintf(out, 32, "?");
        return;
    }
    const char *sign = "";
    if (seconds < 0) {
        sign = "-";
        seconds = -seconds;
    }
    if (seconds < 60) {
        snprintf(out, 32, "%s%.1fs", sign, seconds);
        return;
    }
    long long s = (long long)seconds;
    bool neg = *sign != '\0';
    if (s < 0) /* beyond long long: as snprintf wrote it */
        snprintf(out, 32, "%s%lldd%02lldh", sign, s / 86400, s % 86400 / 3600);
    else if (s < 3600)
        duration_parts(out, neg, s / 60, 'm', s % 60, 's');
    else if (s < 86400)
        duration_parts(out, neg, s / 3600, 'h', s % 3600 / 60, 'm');
    else
        duration_parts(out, neg, s / 86400, 'd', s % 86400 / 3600, 'h');
}

uint64_t hash_bytes(const void *p, size_t n, uint64_t seed)
{
    /* Eight bytes at a time, each word mixed in with the running hash (so that no difference
     * between two keys can be cancelled out without knowing the seed). */
    const unsigned char *s = p;
    uint64_t h = seed ^ 0x9e3779b97f4a7c15ULL;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = hash_mix64(h ^ w) + i;
    }
    uint64_t w = 0;
    if (n > i)
        memcpy(&w, s + i, n - i);
    return hash_mix64(h ^ w ^ ((uint64_t)n << 56));
}

void time_format_ago(int64_t ms, int64_t now_ms, char out[TIME_AGO_MAX])
{
    char t[32], dur[32];
    time_format_rfc3339(ms, false, t);
    if (!now_ms || ms < -INT64_MAX / 2 || ms > INT64_MAX / 2 || now_ms < -INT64_MAX / 2 ||
        now_ms > INT64_MAX / 2) {
        snprintf(out, TIME_AGO_MAX, "%s", t);
        return;
    }
    double s = (double)(now_ms - ms) / 1000.0;
    duration_format(s < 0 ? -s : s, dur);
    snprintf(out, TIME_AGO_MAX, "%s (%s %s)", t, s < 0 ? "in" : dur, s < 0 ? dur : "ago");
}

int thread_start_quiet(pthread_t *t, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
