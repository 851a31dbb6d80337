/*
 * masstransit_parse: MassTransit's URNs, .NET times, endpoint addresses and attempt counts
 * (masstransit.h), apart from the dialect (masstransit.c) so that each stays readable.
 */
#include "masstransit.h"

#include <string.h>

#include "util.h"

static const char URN_PREFIX[] = "urn:message:";

/* ---- the parsers ------------------------------------------------------- */

bool mt_urn_type(const void *urn, size_t n, struct bytes *type)
{
    const char *s = urn;
    size_t p = sizeof URN_PREFIX - 1;
    *type = (struct bytes){0, NULL};
    if (!s || !n)
        return false;
    if (n >= p && memcmp(s, URN_PREFIX, p) == 0) {
        if (n == p)
            return false;
        *type = bytes_dup(s + p, n - p);
        for (size_t i = 0; i < type->len; i++)
            if (type->data[i] == ':')
                type->data[i] = '.';
        return true;
    }
    *type = bytes_dup(s, n);
    return true;
}

bool mt_parse_time(const void *s, size_t n, int64_t *ms)
{
    if (!s || n < 19 || n > 64)
        return false;
    if (time_parse_rfc3339(s, n, ms))
        return true;
    char buf[72]; /* no zone: UTC */
    memcpy(buf, s, n);
    buf[n] = 'Z';
    return time_parse_rfc3339(buf, n + 1, ms);
}

static int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static struct bytes pct_decode(const unsigned char *s, size_t n)
{
    struct bytes b = bytes_dup(s, n);
    size_t w = 0;
    for (size_t i = 0; i < n; i++) {
        int h, l;
        if (s[i] == '%' && i + 2 < n && (h = hexval(s[i + 1])) >= 0 &&
            (l = hexval(s[i + 2])) >= 0) {
            b.data[w++] = (unsigned char)(h * 16 + l);
            i += 2;
        } else {
            b.data[w++] = s[i];
        }
    }
    b.len = w;
    return b;
}

bool mt_has_prefix_ci(const unsigned char *s, size_t n, const char *p)
{
    size_t k = strlen(p);
    if (n < k)
        return false;
    for (size_t i = 0; i < k; i++) {
        unsigned char a = s[i], c = (unsigned char)p[i];
        if (a >= 'A' && a <= 'Z')
            a = (unsigned char)(a - 'A' + 'a');
        if (a != c)
            return false;
    }
    return true;
}

bool mt_address_queue(const void *uri, size_t n, struct bytes *queue, struct bytes *vhost)
{
    const unsigned char *s = uri;
    *queue = (struct bytes){0, NULL};
    if (vhost)
        *vhost = (struct bytes){0, NULL};
    if (!s || !n)
        return false;
    size_t end = n;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '?' || s[i] == '#') {
            end = i;
            break;
        }
    size_t start;
    bool full = false;
    if (mt_has_prefix_ci(s, end, "queue:"))
        start = 6;
    else if (mt_has_prefix_ci(s, end, "exchange:"))
        start = 9;
    else {
        static const char *const schemes[] = {"rabbitmq://", "rabbitmqs://", "amqp://", "amqps://"};
        size_t i = 0;
        for (; i < sizeof schemes / sizeof *schemes; i++)
            if (mt_has_prefix_ci(s, end, schemes[i]))
                break;
        if (i == sizeof schemes / sizeof *schemes)
            return false;
        start = strlen(schemes[i]);
        while (start < end && s[start] != '/') /* the authority */
            start++;
        full = true;
    }
    /* the path's segments: the last is the queue, one before it the vhost */
    size_t seg_s[2] = {0, 0}, seg_e[2] = {0, 0};
    int nseg = 0;
    for (size_t i = start; i < end;) {
        while (i < end && s[i] == '/')
            i++;
        if (i >= end)
            break;
        size_t b = i;
        while (i < end && s[i] != '/')
            i++;
        seg_s[0] = seg_s[1];
        seg_e[0] = seg_e[1];
        seg_s[1] = b;
        seg_e[1] = i;
        nseg++;
    }
    if (!nseg)
        return false;
    struct bytes q = pct_decode(s + seg_s[1], seg_e[1] - seg_s[1]);
    if (!q.len || q.len > 255) {
        bytes_free(&q);
        return false;
    }
    *queue = q;
    if (vhost && full)
        *vhost = nseg >= 2 ? pct_decode(s + seg_s[0], seg_e[0] - seg_s[0]) : bytes_from_cstr("/");
    return true;
}

int64_t mt_attempts(int64_t retries, int64_t redeliveries)
{
    if (retries < 0)
        retries = 0;
    if (redeliveries < 0)
        redeliveries = 0;
    if (retries >= INT32_MAX || redeliveries >= INT32_MAX)
        return INT32_MAX;
    int64_t a = (retries + 1) * (redeliveries + 1);
    return a > INT32_MAX ? INT32_MAX : a;
}
