/*
 * snapshot_str: the pieces of a JSON string that snapshot_fast.c reads as jansson reads
 * them: a UTF-8 sequence's length (RFC 3629), a \u escape's code point (surrogate pairs
 * whole) and a code point written back as UTF-8.
 */
#ifndef DLQX_SNAPSHOT_STR_H
#define DLQX_SNAPSHOT_STR_H

#include <stddef.h>

/* The length of the well-formed UTF-8 sequence at p (RFC 3629: no overlongs, no encoded
 * surrogates, nothing above U+10FFFF — jansson's utf8_check_full), or 0. */
static inline size_t utf8_seq(const unsigned char *p, const unsigned char *end)
{
    unsigned c = p[0], lo = 0x80, hi = 0xBF;
    size_t n;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2;
    else if (c == 0xE0)
        n = 3, lo = 0xA0;
    else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
        n = 3;
    else if (c == 0xED)
        n = 3, hi = 0x9F;
    else if (c == 0xF0)
        n = 4, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3)
        n = 4;
    else if (c == 0xF4)
        n = 4, hi = 0x8F;
    else
        return 0;
    if ((size_t)(end - p) < n || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return n;
}

static inline int hex4(const unsigned char *p)
{
    int v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned char h = p[i];
        int d;
        if (h >= '0' && h <= '9')
            d = h - '0';
        else if (h >= 'a' && h <= 'f')
            d = h - 'a' + 10;
        else if (h >= 'A' && h <= 'F')
            d = h - 'A' + 10;
        else
            return -1;
        v = v * 16 + d;
    }
    return v;
}

/* The code point of the \u escape at p (p[0] == '\\', p[1] == 'u'), a surrogate pair taken
 * whole; *used is the escape's length. -1 when it is not one jansson reads (a lone
 * surrogate, a bad hex digit). */
static inline long escape_u(const unsigned char *p, const unsigned char *end, size_t *used)
{
    if (end - p < 6)
        return -1;
    int u = hex4(p + 2);
    if (u < 0 || (u >= 0xDC00 && u <= 0xDFFF))
        return -1;
    *used = 6;
    if (u < 0xD800 || u > 0xDBFF)
        return u;
    if (end - p < 12 || p[6] != '\\' || p[7] != 'u')
        return -1;
    int lo = hex4(p + 8);
    if (lo < 0xDC00 || lo > 0xDFFF)
        return -1;
    *used = 12;
    return 0x10000 + (((long)u - 0xD800) << 10) + (lo - 0xDC00);
}

static inline size_t put_utf8(unsigned char *o, long cp)
{
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | (cp >> 6));
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | (cp >> 12));
        o[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | (cp >> 18));
    o[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

#endif
