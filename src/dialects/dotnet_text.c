/* dotnet_text: see dotnet_text.h. */
#include "dotnet_text.h"

#include <string.h>

static bool leap(int y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

bool dotnet_date_valid(int y, int m, int d)
{
    static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (y < 1 || y > 9999 || m < 1 || m > 12 || d < 1)
        return false;
    int max = mdays[m - 1] + (m == 2 && leap(y) ? 1 : 0);
    return d <= max;
}

int64_t dotnet_days_from_civil(int y, int m, int d)
{
    /* days before the year, the month and the day, counted from 0001-01-01 */
    static const int before[12] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334};
    int64_t yy = y - 1;
    int64_t days = yy * 365 + yy / 4 - yy / 100 + yy / 400;
    days += before[m - 1] + (m > 2 && leap(y) ? 1 : 0) + (d - 1);
    return days - 719162; /* 0001-01-01 to 1970-01-01 */
}

static int64_t civil_ms(int y, int mo, int d, int h, int mi, int s)
{
    return (dotnet_days_from_civil(y, mo, d) * 86400 + (int64_t)h * 3600 + mi * 60 + s) * 1000;
}

bool nsb_wire_time_parse(const void *sv, size_t n, int64_t *ms)
{
    static const char format[] = "yyyy-MM-dd HH:mm:ss:ffffff Z";
    const unsigned char *s = sv;
    if (n != sizeof format - 1)
        return false;
    int f[7] = {0}; /* y M d H m s f */
    static const char letters[] = "yMdHmsf";
    for (size_t i = 0; i < n; i++) {
        const char *at = strchr(letters, format[i]);
        if (!at || format[i] == ' ')
            continue; /* a separator: NServiceBus does not check it */
        if (s[i] < '0' || s[i] > '9')
            return false;
        int k = (int)(at - letters);
        f[k] = f[k] * 10 + (s[i] - '0');
    }
    if (!dotnet_date_valid(f[0], f[1], f[2]) || f[3] > 23 || f[4] > 59 || f[5] > 59)
        return false;
    *ms = civil_ms(f[0], f[1], f[2], f[3], f[4], f[5]) + f[6] / 1000;
    return true;
}

void nsb_wire_time_format(int64_t ms, char out[29])
{
    int64_t days = ms >= 0 ? ms / 86400000 : -((-ms + 86399999) / 86400000);
    int64_t rem = ms - days * 86400000;
    /* civil from days (Howard Hinnant's algorithm, restated) */
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int d = (int)(doy - (153 * mp + 2) / 5 + 1);
    int m = (int)(mp < 10 ? mp + 3 : mp - 9);
    int y = (int)(yoe + era * 400 + (m <= 2 ? 1 : 0));
    int h = (int)(rem / 3600000), mi = (int)(rem / 60000 % 60), s = (int)(rem / 1000 % 60);
    int us = (int)(rem % 1000) * 1000;
    if (y < 0 || y > 9999)
        y = 0;
    const int vals[7] = {y, m, d, h, mi, s, us};
    const int widths[7] = {4, 2, 2, 2, 2, 2, 6};
    const char seps[7] = {'-', '-', ' ', ':', ':', ':', ' '};
    size_t at = 0;
    for (int k = 0; k < 7; k++) {
        int v = vals[k];
        for (int w = widths[k] - 1; w >= 0; w--) {
            out[at + (size_t)w] = (char)('0' + v % 10);
            v /= 10;
        }
        at += (size_t)widths[k];
        out[at++] = seps[k];
    }
    out[at++] = 'Z';
    out[at] = '\0';
}

/* n digits at s[i..] into *v; false unless all are digits and within len. */
static bool digits(const unsigned char *s, size_t len, size_t i, size_t count, int *v)
{
    if (i + count > len)
        return false;
    int x = 0;
    for (size_t k = 0; k < count; k++) {
        if (s[i + k] < '0' || s[i + k] > '9')
            return false;
        x = x * 10 + (s[i + k] - '0');
    }
    *v = x;
    return true;
}

bool dotnet_roundtrip_parse(const void *sv, size_t n, int64_t *ms, int *offset_min)
{
    const unsigned char *s = sv;
    int y, mo, d, h, mi, se;
    if (!digits(s, n, 0, 4, &y) || n < 20 || s[4] != '-' || !digits(s, n, 5, 2, &mo) ||
        s[7] != '-' || !digits(s, n, 8, 2, &d) || s[10] != 'T' || !digits(s, n, 11, 2, &h) ||
        s[13] != ':' || !digits(s, n, 14, 2, &mi) || s[16] != ':' || !digits(s, n, 17, 2, &se))
        return false;
    if (!dotnet_date_valid(y, mo, d) || h > 23 || mi > 59 || se > 59)
        return false;
    size_t i = 19;
    int frac_ms = 0;
    if (i < n && s[i] == '.') {
        size_t start = ++i;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (i - start < 3)
                frac_ms = frac_ms * 10 + (s[i] - '0');
            i++;
        }
        size_t got = i - start;
        if (got == 0 || got > 7)
            return false;
        for (size_t k = got; k < 3; k++)
            frac_ms *= 10;
    }
    int off = 0;
    if (i < n && s[i] == 'Z') {
        i++;
    } else if (i < n && (s[i] == '+' || s[i] == '-')) {
        int oh, om;
        if (!digits(s, n, i + 1, 2, &oh) || i + 3 >= n || s[i + 3] != ':' ||
            !digits(s, n, i + 4, 2, &om) || om > 59 || oh * 60 + om > 14 * 60)
            return false;
        off = (oh * 60 + om) * (s[i] == '-' ? -1 : 1);
        i += 6;
    } else {
        return false;
    }
    if (i != n)
        return false;
    *ms = civil_ms(y, mo, d, h, mi, se) + frac_ms - (int64_t)off * 60000;
    *offset_min = off;
    return true;
}

/* 1 to maxd digits at s[*i]; advances *i. */
static bool number(const unsigned char *s, size_t n, size_t *i, size_t maxd, int *v, size_t *nd)
{
    size_t k = 0;
    int x = 0;
    while (*i + k < n && k < maxd && s[*i + k] >= '0' && s[*i + k] <= '9') {
        x = x * 10 + (s[*i + k] - '0');
        k++;
    }
    if (k == 0 || (*i + k < n && s[*i + k] >= '0' && s[*i + k] <= '9'))
        return false;
    *i += k;
    *v = x;
    if (nd)
        *nd = k;
    return true;
}

/* A space, a no-break space (C2 A0) or a narrow no-break space (E2 80 AF); advances *i. */
static bool space(const unsigned char *s, size_t n, size_t *i)
{
    if (*i < n && s[*i] == ' ') {
        *i += 1;
        return true;
    }
    if (*i + 1 < n && s[*i] == 0xC2 && s[*i + 1] == 0xA0) {
        *i += 2;
        return true;
    }
    if (*i + 2 < n && s[*i] == 0xE2 && s[*i + 1] == 0x80 && s[*i + 2] == 0xAF) {
        *i += 3;
        return true;
    }
    return false;
}

bool dotnet_culture_time_parse(const void *sv, size_t n, int64_t *ms, size_t *used)
{
    const unsigned char *s = sv;
    size_t i = 0, nd1, nd3;
    int a, b, c;
    if (!number(s, n, &i, 4, &a, &nd1) || i >= n)
        return false;
    unsigned char sep = s[i];
    if (sep != '/' && sep != '.' && sep != '-')
        return false;
    i++;
    if (!number(s, n, &i, 2, &b, NULL) || i >= n || s[i] != sep)
        return false;
    i++;
    if (!number(s, n, &i, 4, &c, &nd3))
        return false;
    int y, mo, d;
    if (nd1 == 4) { /* yyyy-MM-dd, yyyy/MM/dd, yyyy.MM.dd */
        y = a, mo = b, d = c;
    } else if (nd3 == 4) {
        y = c;
        if (sep == '/' && a <= 12)
            mo = a, d = b; /* invariant, en-US */
        else
            d = a, mo = b; /* en-GB, fr, de (.), nl (-) */
    } else {
        return false;
    }
    if (sep == '.' && i < n && s[i] == '.')
        i++; /* some cultures end the date with a dot */
    if (!dotnet_date_valid(y, mo, d) || !space(s, n, &i))
        return false;
    int h, mi, se;
    if (!number(s, n, &i, 2, &h, NULL) || i >= n || s[i] != ':')
        return false;
    i++;
    if (!number(s, n, &i, 2, &mi, NULL) || i >= n || s[i] != ':')
        return false;
    i++;
    if (!number(s, n, &i, 2, &se, NULL))
        return false;
    size_t save = i;
    if (space(s, n, &i) && i + 1 < n && (s[i] == 'A' || s[i] == 'P') && s[i + 1] == 'M') {
        if (h < 1 || h > 12)
            return false;
        h = h % 12 + (s[i] == 'P' ? 12 : 0);
        i += 2;
    } else {
        i = save;
    }
    if (h > 23 || mi > 59 || se > 59 || !space(s, n, &i) || i >= n || (s[i] != '+' && s[i] != '-'))
        return false;
    int sign = s[i] == '-' ? -1 : 1;
    i++;
    int oh, om;
    size_t ohd;
    if (!number(s, n, &i, 2, &oh, &ohd) || ohd != 2 || i >= n || s[i] != ':')
        return false;
    i++;
    if (!digits(s, n, i, 2, &om) || om > 59 || oh * 60 + om > 14 * 60)
        return false;
    i += 2;
    *ms = civil_ms(y, mo, d, h, mi, se) - (int64_t)sign * (oh * 60 + om) * 60000;
    *used = i;
    return true;
}

static bool type_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '+' || c == '`' || c >= 0x80;
}

/* Where the message ends: the first line end followed by " ---> " or by three spaces and a
 * non-space; n when there is none. */
static size_t message_end(const unsigned char *s, size_t from, size_t n)
{
    for (size_t i = from; i < n; i++) {
        if (s[i] != '\n')
            continue;
        size_t end = (i > from && s[i - 1] == '\r') ? i - 1 : i;
        size_t j = i + 1;
        if (j + 5 <= n && memcmp(s + j, " ---> ", 5) == 0)
            return end;
        if (j + 4 <= n && memcmp(s + j, "   ", 3) == 0 && s[j + 3] != ' ' && s[j + 3] != '\n' &&
            s[j + 3] != '\r')
            return end;
    }
    return n;
}

bool dotnet_exception_parse(const void *sv, size_t n, struct dotnet_exception *out)
{
    const unsigned char *s = sv;
    size_t i = 0;
    if (n == 0 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
        return false;
    int depth = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c == '[') {
            depth++;
        } else if (c == ']') {
            if (depth == 0)
                return false;
            depth--;
        } else if (depth > 0) {
            if (c == '\n' || c == '\r')
                return false;
        } else if (!type_char(c)) {
            break;
        }
        i++;
    }
    if (depth != 0 || s[i - 1] == '.')
        return false;
    out->type_off = 0;
    out->type_len = i;
    /* " (0x80131904)" or " (111)" after the type */
    if (i + 2 < n && s[i] == ' ' && s[i + 1] == '(') {
        size_t j = i + 2;
        while (j < n && j < i + 24 && s[j] != ')' && s[j] != '\n')
            j++;
        if (j < n && s[j] == ')')
            i = j + 1;
    }
    if (i == n || s[i] == '\n' || s[i] == '\r') { /* no message */
        out->msg_off = i;
        out->msg_len = 0;
        return true;
    }
    if (i + 1 >= n || s[i] != ':' || s[i + 1] != ' ') {
        if (i + 1 == n && s[i] == ':') {
            out->msg_off = n;
            out->msg_len = 0;
            return true;
        }
        return false;
    }
    i += 2;
    size_t end = message_end(s, i, n);
    out->msg_off = i;
    out->msg_len = end - i;
    return true;
}
