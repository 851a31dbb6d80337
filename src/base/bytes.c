/*
 * bytes: owned byte strings, UTF-8 validation and base64.
 */
#include "bytes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

struct bytes bytes_dup(const void *data, size_t len)
{
    struct bytes b = {0, NULL};
    b.data = xmalloc(len + 1);
    if (len)
        memcpy(b.data, data, len);
    b.data[len] = '\0';
    b.len = len;
    return b;
}

struct bytes bytes_from_cstr(const char *s)
{
    return bytes_dup(s, strlen(s));
}

struct bytes bytes_copy(const struct bytes *b)
{
    if (!b->data)
        return (struct bytes){0, NULL};
    return bytes_dup(b->data, b->len);
}

bool bytes_eq(const struct bytes *a, const struct bytes *b)
{
    return a->len == b->len && (a->len == 0 || memcmp(a->data, b->data, a->len) == 0);
}

bool bytes_eq_cstr(const struct bytes *a, const char *s)
{
    /* Byte by byte, stopping at the first difference: the dialects compare each header's
     * name with dozens of names that share a prefix (a strlen of each was 4% of dlqx tree). */
    for (size_t i = 0; i < a->len; i++)
        if (s[i] == '\0' || (unsigned char)s[i] != a->data[i])
            return false;
    return s[a->len] == '\0';
}

bool bytes_has_prefix(const struct bytes *a, const char *prefix)
{
    size_t n = strlen(prefix);
    return a->len >= n && memcmp(a->data, prefix, n) == 0;
}

const char *bytes_cstr(const struct bytes *b)
{
    if (!b->data)
        return "";
    if (memchr(b->data, '\0', b->len))
        return NULL;
    return (const char *)b->data;
}

/* Sixteen bytes at a time with SSE2 (every x86-64 has it), else eight in a word. The word
 * tests are exact about the first byte that is such a byte: the borrows of x - k run only
 * upwards from a byte that is one, so the lowest flagged byte is a true one. */
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define ONES 0x0101010101010101ULL
#define HIGHS 0x8080808080808080ULL

static inline uint64_t word_at(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof w);
    return w;
}

/* High bit of each byte of x that is below k (k <= 0x80), exact up to the lowest one. */
static inline uint64_t some_below(uint64_t x, unsigned k)
{
    return (x - ONES * k) & ~x & HIGHS;
}

static inline uint64_t some_equal(uint64_t x, unsigned c)
{
    return some_below(x ^ (ONES * c), 1);
}

/* The flags of the bytes of a word that a JSON string cannot hold as they are. */
static inline uint64_t word_unplain(uint64_t w, uint64_t high)
{
    return (w & high) | some_below(w, 0x20) | some_equal(w, '"') | some_equal(w, '\\');
}

size_t json_plain_prefix(const void *data, size_t len, bool ascii_only)
{
    const unsigned char *s = data;
    size_t i = 0;
#if defined(__SSE2__)
    if (len >= 16) {
        for (; i + 16 <= len; i += 16) {
            unsigned mask = json_unplain16(s + i, ascii_only);
            if (mask)
                return i + (size_t)__builtin_ctz(mask);
        }
        if (i == len)
            return len;
        /* the last sixteen bytes, of which those before i are known plain */
        unsigned mask = json_unplain16(s + len - 16, ascii_only) >> (i - (len - 16));
        return mask ? i + (size_t)__builtin_ctz(mask) : len;
    }
#endif
    uint64_t high = ascii_only ? HIGHS : 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t f = word_unplain(word_at(s + i), high);
        if (f) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            return i + (size_t)__builtin_ctzll(f) / 8;
#else
            break;
#endif
        }
    }
    for (; i < len; i++) {
        unsigned char c = s[i];
        if (c < 0x20 || c == '"' || c == '\\' || (ascii_only && c >= 0x80))
            break;
    }
    return i;
}

/* The length of the prefix of s in ASCII, at least up to the last whole word of it; len
 * when all of it is. */
static inline size_t ascii_words(const unsigned char *s, size_t len)
{
    size_t i = 0;
#if defined(__SSE2__)
    if (len >= 16) {
        for (; i + 16 <= len; i += 16)
            if (_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(const void *)(s + i))))
                return i;
        if (i < len &&
            !_mm_movemask_epi8(_mm_loadu_si128((const __m128i *)(const void *)(s + len - 16))))
            return len;
        return i;
    }
#endif
    while (i + 8 <= len && !(word_at(s + i) & HIGHS))
        i += 8;
    return i;
}

bool utf8_valid(const void *data, size_t len)
{
    const unsigned char *s = data;
    size_t i = 0;
    while (i < len) {
        i += ascii_words(s + i, len - i);
        if (i >= len)
            break;
        unsigned c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t k = utf8_char_len(s + i, len - i);
        if (!k)
            return false;
        i += k;
    }
    return true;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *base64_encode(const void *data, size_t len)
{
    const unsigned char *s = data;
    size_t olen = (len + 2) / 3 * 4;
    char *out = xmalloc(olen + 1), *o = out;
    size_t i = 0;
    for (; i + 2 < len; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (unsigned)s[i + 1] << 8 | s[i + 2];
        *o++ = b64[v >> 18 & 63];
        *o++ = b64[v >> 12 & 63];
        *o++ = b64[v >> 6 & 63];
        *o++ = b64[v & 63];
    }
    if (i < len) {
        unsigned v = (unsigned)s[i] << 16 | (i + 1 < len ? (unsigned)s[i + 1] << 8 : 0);
        *o++ = b64[v >> 18 & 63];
        *o++ = b64[v >> 12 & 63];
        *o++ = i + 1 < len ? b64[v >> 6 & 63] : '=';
        *o++ = '=';
    }
    *o = '\0';
    return out;
}

static int b64val(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+')
        return 62;
    if (c == '/')
        return 63;
    return -1;
}

bool base64_decode(const char *s, size_t n, struct bytes *out)
{
    if (n % 4 != 0)
        return false;
    size_t pad = 0;
    if (n >= 1 && s[n - 1] == '=')
        pad++;
    if (n >= 2 && s[n - 2] == '=')
        pad++;
    size_t olen = n / 4 * 3 - pad;
    unsigned char *o = xmalloc(olen + 1);
    size_t w = 0;
    for (size_t i = 0; i < n; i += 4) {
        int v[4];
        for (int k = 0; k < 4; k++) {
            unsigned char c = (unsigned char)s[i + k];
            if (c == '=' && i + 4 == n && k >= 4 - (int)pad) {
                v[k] = 0;
                continue;
            }
            v[k] = b64val(c);
            if (v[k] < 0) {
                free(o);
                return false;
            }
        }
        unsigned t =
            (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 | (unsigned)v[3];
        unsigned char tri[3] = {(unsigned char)(t >> 16), (unsigned char)(t >> 8),
                                (unsigned char)t};
        for (int k = 0; k < 3 && w < olen; k++)
            o[w++] = tri[k];
    }
    o[olen] = '\0';
    out->data = o;
    out->len = olen;
    return true;
}

int bytes_read_file(const char *path, size_t max, struct bytes *out)
{
    *out = (struct bytes){0, NULL};
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    struct strbuf sb;
    sb_init(&sb);
    char buf[65536];
    size_t n;
    int saved = 0;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        if (max && sb.len + n > max) {
            saved = EFBIG;
            break;
        }
        sb_add(&sb, buf, n);
    }
    if (!saved && ferror(f))
        saved = errno ? errno : EIO;
    fclose(f);
    if (saved) {
        sb_free(&sb);
        errno = saved;
        return -1;
    }
    size_t len = 0;
    out->data = (unsigned char *)sb_detach(&sb, &len);
    out->len = len;
    return 0;
}
