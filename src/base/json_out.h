/*
 * json_out: jansson's compact dump of a JSON tree (JSON_COMPACT, with or without
 * JSON_REAL_PRECISION and JSON_ENCODE_ANY) written straight into a strbuf, without a callback
 * for every token. The bytes are jansson's: strings escaped as its dump escapes them, keys in
 * its order, integers in decimal, and each real dumped by jansson itself. Anything else —
 * JSON_ENSURE_ASCII or another flag, a string or key that is not valid UTF-8 or holds a NUL
 * in a key, a tree deeper than JSON_OUT_MAX_DEPTH — and it declines: the caller dumps the
 * whole value with jansson, so the result is jansson's by construction.
 *
 * Ownership: j is borrowed; the text is appended to out.
 */
#ifndef DLQX_JSON_OUT_H
#define DLQX_JSON_OUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "bytes.h"
#include "util.h"

#define JSON_OUT_MAX_DEPTH 256

/* Appends j as json_dump_callback(j, …, flags) would write it and returns true; or returns
 * false with nothing appended, and the caller dumps it with jansson (whose failures, and what
 * it writes before one, stay its own). */
bool json_out_fast(struct strbuf *out, const json_t *j, size_t flags);
/* '"', the n bytes at s and '"' appended when all n are printable ASCII that a JSON string
 * holds as they are; else false with out as it was. */
static inline bool json_out_plain(struct strbuf *out, const void *src, size_t n)
{
    const unsigned char *s = src;
    if (out->cap - out->len <= n + 2)
        sb_grow(out, n + 2);
    unsigned char *d = (unsigned char *)out->buf + out->len + 1;
    size_t i = 0;
#if defined(__SSE2__)
    if (n >= 16) {
        for (; i + 16 <= n; i += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
            _mm_storeu_si128((__m128i *)(void *)(d + i), v);
            if (json_unplain16(s + i, true))
                return false;
        }
        if (i < n) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + n - 16));
            _mm_storeu_si128((__m128i *)(void *)(d + n - 16), v);
            if (json_unplain16(s + n - 16, true))
                return false;
        }
        goto done;
    }
#endif
    if (n >= 8 && n <= 16) {
        /* the first and the last eight bytes (overlapping): checked and copied as two words,
         * without memcpy's call (most keys, names and ids are this short) */
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        if (json_unplain_ascii_word((const unsigned char *)&a) |
            json_unplain_ascii_word((const unsigned char *)&b))
            return false;
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 8) {
        /* every word, then the last eight bytes (which may overlap the one before) */
        for (; i + 8 <= n; i += 8)
            if (json_unplain_ascii_word(s + i))
                return false;
        if (i < n && json_unplain_ascii_word(s + n - 8))
            return false;
        memcpy(d, s, n);
    } else if (n >= 4) {
        /* the first and the last four bytes (overlapping), checked as one word */
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        uint64_t w = (uint64_t)a | (uint64_t)b << 32;
        if (json_unplain_ascii_word((const unsigned char *)&w))
            return false;
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n) {
        /* one to three bytes: the first, the middle and the last, each checked (a word of
         * copies of them) */
        unsigned char c0 = s[0], c1 = s[n / 2], c2 = s[n - 1];
        uint64_t w = 0x0101010101010101ULL * c0;
        w = (w & ~0xffffULL) | (uint64_t)c1 | (uint64_t)c2 << 8;
        if (json_unplain_ascii_word((const unsigned char *)&w))
            return false;
        d[0] = c0;
        d[n / 2] = c1;
        d[n - 1] = c2;
    }
#if defined(__SSE2__)
done:
#endif
    d[-1] = '"';
    d[n] = '"';
    out->len += n + 2;
    out->buf[out->len] = '\0';
    return true;
}

/* json_out_string's other strings (those json_out_plain declines). */
bool json_out_string_escaped(struct strbuf *out, const void *s, size_t n);
/* One string as jansson's compact dump writes it (quotes included); false, with nothing
 * appended, when it is not valid UTF-8. Inline: the writers call it for every string, and
 * most are plain (a call and a frame for each were a tenth of decode's writing). */
static inline bool json_out_string(struct strbuf *out, const void *s, size_t n)
{
    return json_out_plain(out, s, n) || json_out_string_escaped(out, s, n);
}
/* A signed integer in decimal, as jansson writes it. */
void json_out_integer(struct strbuf *out, long long v);

#endif
