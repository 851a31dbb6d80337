/*
 * filter_text: the small text and number helpers of the filter language, shared by its parser
 * and its evaluation: ASCII case-insensitive comparison (no locale), globs, a hash for the
 * memo, and reading numbers, durations, sizes and times as docs/filter.md writes them. They
 * are kept apart so the parser and the matcher read as grammar and semantics only.
 */
#include "filter_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ---- small text helpers (ASCII case folding: no locale) ---- */

bool filter_ci_eq(const char *a, size_t n, const char *b)
{
    size_t m = strlen(b);
    if (n != m)
        return false;
    for (size_t i = 0; i < n; i++)
        if (filter_lower((unsigned char)a[i]) != filter_lower((unsigned char)b[i]))
            return false;
    return true;
}

bool filter_ci_contains(const char *s, size_t n, const char *p, size_t m)
{
    if (m == 0)
        return true;
    if (m > n)
        return false;
    unsigned char f = filter_lower((unsigned char)p[0]);
    for (size_t i = 0; i + m <= n; i++) {
        if (filter_lower((unsigned char)s[i]) != f)
            continue;
        size_t k = 1;
        while (k < m && filter_lower((unsigned char)s[i + k]) == filter_lower((unsigned char)p[k]))
            k++;
        if (k == m)
            return true;
    }
    return false;
}

static size_t utf8_step(const char *s, size_t i, size_t n)
{
    size_t j = i + 1;
    if ((unsigned char)s[i] >= 0xc0)
        while (j < n && j < i + 4 && ((unsigned char)s[j] & 0xc0) == 0x80)
            j++;
    return j;
}

/* Globs: * any run, ? one character, \c the character c. Iterative with one backtrack point,
 * so any pattern runs in O(len(pattern) * len(text)). */
bool filter_glob_match(const char *p, size_t pn, const char *s, size_t sn, bool ci)
{
    size_t pi = 0, si = 0, star_p = SIZE_MAX, star_s = 0;
    while (si < sn) {
        if (pi < pn && p[pi] == '*') {
            star_p = ++pi;
            star_s = si;
            continue;
        }
        if (pi < pn && p[pi] == '?') {
            pi++;
            si = utf8_step(s, si, sn);
            continue;
        }
        if (pi < pn) {
            size_t q = pi;
            if (p[q] == '\\' && q + 1 < pn)
                q++;
            unsigned char a = (unsigned char)p[q], b = (unsigned char)s[si];
            if (ci ? filter_lower(a) == filter_lower(b) : a == b) {
                pi = q + 1;
                si++;
                continue;
            }
        }
        if (star_p == SIZE_MAX)
            return false;
        pi = star_p;
        si = ++star_s;
    }
    while (pi < pn && p[pi] == '*')
        pi++;
    return pi == pn;
}

bool filter_has_wildcard(const char *g, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (g[i] == '\\')
            i++;
        else if (g[i] == '*' || g[i] == '?')
            return true;
    }
    return false;
}

uint64_t filter_hash64(const void *p, size_t n, uint64_t seed)
{
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ULL ^ seed;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ULL;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    return h ^ (h >> 33);
}

/* ---- numbers, durations, sizes, times ---- */

bool filter_parse_int(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    if (i == n)
        return false;
    uint64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > ((uint64_t)INT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = neg ? -(int64_t)v : (int64_t)v;
    return true;
}

/* A decimal number (integer or with a fraction; no exponent, no inf/nan). */
bool filter_parse_number(const char *s, size_t n, double *d, int64_t *i, bool *is_int)
{
    if (filter_parse_int(s, n, i)) {
        *is_int = true;
        *d = (double)*i;
        return true;
    }
    if (n == 0 || n > 64)
        return false;
    char buf[72];
    size_t digits = 0, dots = 0;
    for (size_t k = 0; k < n; k++) {
        if (s[k] >= '0' && s[k] <= '9')
            digits++;
        else if (s[k] == '.')
            dots++;
        else if (!(k == 0 && (s[k] == '-' || s[k] == '+')))
            return false;
    }
    if (!digits || dots != 1)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    *d = strtod(buf, NULL);
    *is_int = false;
    return true;
}

bool filter_parse_duration(const char *s, size_t n, int64_t *ms)
{
    static const struct {
        const char *u;
        int64_t ms;
    } units[] = {{"ms", 1},      {"s", 1000},     {"m", 60000},
                 {"h", 3600000}, {"d", 86400000}, {"w", 604800000}};
    if (n == 0)
        return false;
    int64_t total = 0;
    size_t i = 0;
    while (i < n) {
        size_t d0 = i;
        int64_t v = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (v > (INT64_MAX - 9) / 10)
                return false;
            v = v * 10 + (s[i++] - '0');
        }
        size_t u0 = i;
        while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
            i++;
        if (i == d0 || u0 == d0)
            return false;
        int64_t mul = -1;
        if (u0 == i && i == n && total == 0)
            mul = 1000; /* a bare number is seconds */
        for (size_t k = 0; k < sizeof units / sizeof *units; k++)
            if (filter_ci_eq(s + u0, i - u0, units[k].u))
                mul = units[k].ms;
        if (mul < 0 || v > (INT64_MAX - total) / mul)
            return false;
        total += v * mul;
    }
    *ms = total;
    return true;
}

bool filter_parse_size(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    int64_t v;
    if (i == 0 || !filter_parse_int(s, i, &v))
        return false;
    static const struct {
        const char *u;
        int64_t mul;
    } units[] = {{"", 1},           {"b", 1},           {"k", 1024},        {"kb", 1024},
                 {"kib", 1024},     {"m", 1048576},     {"mb", 1048576},    {"mib", 1048576},
                 {"g", 1073741824}, {"gb", 1073741824}, {"gib", 1073741824}};
    for (size_t k = 0; k < sizeof units / sizeof *units; k++) {
        if (filter_ci_eq(s + i, n - i, units[k].u)) {
            if (v > INT64_MAX / units[k].mul)
                return false;
            *out = v * units[k].mul;
            return true;
        }
    }
    return false;
}

bool filter_parse_time(const char *s, size_t n, int64_t *ms)
{
    if (time_parse_rfc3339(s, n, ms))
        return true;
    if (n == 10 || n == 16 || n == 19) { /* 2026-01-02, 2026-01-02T03:04, …T03:04:05 (UTC) */
        char buf[32];
        static const char *const tail[] = {"T00:00:00Z", ":00Z", "Z"};
        const char *t = tail[n == 10 ? 0 : n == 16 ? 1 : 2];
        snprintf(buf, sizeof buf, "%.*s%s", (int)n, s, t);
        return time_parse_rfc3339(buf, strlen(buf), ms);
    }
    return false;
}
