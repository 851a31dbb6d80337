/*
 * bytes: an owned, length-counted byte string (may hold NULs, need not be UTF-8).
 *
 * A struct bytes owns data (malloc'd, with a NUL after len for convenience) unless it is
 * the empty value {0, NULL}. bytes_free() clears it.
 */
#ifndef DLQX_BYTES_H
#define DLQX_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct bytes {
    size_t len;
    unsigned char *data;
};

struct bytes bytes_dup(const void *data, size_t len);
struct bytes bytes_from_cstr(const char *s);
struct bytes bytes_copy(const struct bytes *b);
/* Inline, free not called for the empty value: a message's free passes fourteen fields,
 * most of them empty. */
static inline void bytes_free(struct bytes *b)
{
    if (b->data)
        free(b->data);
    b->data = NULL;
    b->len = 0;
}
bool bytes_eq(const struct bytes *a, const struct bytes *b);
bool bytes_eq_cstr(const struct bytes *a, const char *s);
bool bytes_has_prefix(const struct bytes *a, const char *prefix);
/* The contents as a C string: NULL when b holds a NUL byte; "" for the empty value. */
const char *bytes_cstr(const struct bytes *b);

/* Whether data is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF). */
bool utf8_valid(const void *data, size_t len);

/* The length of the UTF-8 sequence at s (n > 0 bytes, s[0] >= 0x80) as utf8_valid judges
 * it (no overlong, no surrogate, <= U+10FFFF); 0 when it is not one. */
static inline size_t utf8_char_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0], min, cp;
    size_t need;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 1;
        min = 0x80;
        cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 2;
        min = 0x800;
        cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3;
        min = 0x10000;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (need >= n)
        return 0;
    for (size_t k = 1; k <= need; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[k] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return need + 1;
}

/* The length of the longest prefix of data that a JSON string holds as it is: no byte below
 * 0x20, no '"', no '\\', and (when ascii_only) no byte above 0x7f. Eight bytes at a time. */
size_t json_plain_prefix(const void *data, size_t len, bool ascii_only);

/* Whether all n bytes of data are printable ASCII that a JSON string holds as they are
 * (json_plain_prefix(data, n, true) == n); a text of 8 to 24 bytes (most header keys) in
 * two or three words, and (SSE2) one of 17 to 48 in three sixteens, without a call. */
static inline uint64_t json_unplain_ascii_word(const unsigned char *p)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    uint64_t w;
    memcpy(&w, p, sizeof w);
    uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
    /* exact as a whole: a byte below 0x20, a quote, a backslash or a high byte */
    return (w | ((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b)) & highs;
}
#if defined(__SSE2__)
#include <emmintrin.h>
/* The flags (one bit a byte) of the sixteen bytes at p that a JSON string cannot hold as
 * they are (with ascii_only, bytes above 0x7f too). */
static inline unsigned json_unplain16(const unsigned char *p, bool ascii_only)
{
    const __m128i ctl = _mm_set1_epi8(0x1f), quote = _mm_set1_epi8('"'), bsl = _mm_set1_epi8('\\');
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i bad = _mm_or_si128(_mm_cmpeq_epi8(_mm_min_epu8(v, ctl), v),
                               _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bsl)));
    unsigned mask = (unsigned)_mm_movemask_epi8(bad);
    if (ascii_only)
        mask |= (unsigned)_mm_movemask_epi8(v);
    return mask;
}
#endif
static inline bool json_plain_ascii(const void *data, size_t n)
{
    const unsigned char *s = data;
#if defined(__SSE2__)
    /* 17 to 48 bytes (ids, most string values): three sixteens, overlapping */
    if (n > 16 && n <= 48)
        return !(json_unplain16(s, true) | json_unplain16(s + (n > 32 ? 16 : n - 16), true) |
                 json_unplain16(s + n - 16, true));
#endif
    if (n < 8 || n > 24)
        return json_plain_prefix(s, n, true) == n;
    return !(json_unplain_ascii_word(s) | json_unplain_ascii_word(s + (n > 16 ? 8 : n - 8)) |
             json_unplain_ascii_word(s + n - 8));
}

/* The whole of a file, at most max bytes (0: no limit): 0 on success; else -1 with errno set
 * (EFBIG when it is larger than max). *out is the caller's to free. */
int bytes_read_file(const char *path, size_t max, struct bytes *out);

/* Standard base64 (RFC 4648, with padding). decode accepts no whitespace; false on error. */
char *base64_encode(const void *data, size_t len);
bool base64_decode(const char *s, size_t n, struct bytes *out);

#endif
