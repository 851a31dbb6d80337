/*
 * json_plain: the length of a run of "plain" string bytes — printable ASCII that a JSON
 * string holds as it is (0x20-0x7f except '"' and '\\'): what the snapshot reader scans and
 * what the writers copy without a second look. Eight bytes at a time: the readers' and
 * writers' byte-by-byte loops were a fifth of `dlqx decode`.
 */
#ifndef DLQX_JSON_PLAIN_H
#define DLQX_JSON_PLAIN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline int json_plain_byte(unsigned char c)
{
    return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

/* How many bytes from p (at most n) are plain before the first that is not. */
static inline size_t json_plain_run(const unsigned char *p, size_t n)
{
    const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
        /* Each test is exact as a yes/no for the whole word: some byte below 0x20, some
         * byte 0x80 or above, some byte equal to '"' or '\\' (a zero after the xor). */
        uint64_t special = ((w - ones * 0x20) & ~w) | w | ((q - ones) & ~q) | ((b - ones) & ~b);
        special &= highs;
        if (special) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            /* Exact for the first one too: a borrow only reaches the bytes after a byte that
             * is special itself, so the lowest flag is the first special byte. */
            return i + (size_t)__builtin_ctzll(special) / 8;
#else
            break;
#endif
        }
    }
    while (i < n && json_plain_byte(p[i]))
        i++;
    return i;
}

#endif
