/*
 * sha256: a straightforward SHA-256 from the FIPS 180-4 description.
 */
#include "sha256.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));
}

static void block(struct sha256 *s, const unsigned char *p)
{
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4], f = s->h[5],
             g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t S1 = ror(e, 6) ^ ror(e, 11) ^ ror(e, 25);
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = h + S1 + ch + K[i] + w[i];
        uint32_t S0 = ror(a, 2) ^ ror(a, 13) ^ ror(a, 22);
        uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
        uint32_t t2 = S0 + maj;
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    s->h[0] += a;
    s->h[1] += b;
    s->h[2] += c;
    s->h[3] += d;
    s->h[4] += e;
    s->h[5] += f;
    s->h[6] += g;
    s->h[7] += h;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>

/* The same block with the x86 SHA extensions (SHA-NI), where the processor has them: the
 * portable block was 7% of `dlqx decode` (a digest of every body). The state is kept in the
 * order the instructions want (ABEF, CDGH) for the 64 rounds, four at a time. */
__attribute__((target("sha,sse4.1,ssse3"))) static void block_ni(struct sha256 *s,
                                                                 const unsigned char *p)
{
    const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
    __m128i t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&s->h[0]), 0xB1);
    __m128i efgh = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&s->h[4]), 0x1B);
    __m128i abef = _mm_alignr_epi8(t, efgh, 8);
    __m128i cdgh = _mm_blend_epi16(efgh, t, 0xF0);
    const __m128i abef0 = abef, cdgh0 = cdgh;
    __m128i w[4];
    for (int i = 0; i < 4; i++)
        w[i] = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), swap);
    for (int r = 0; r < 16; r++) {
        /* w[r & 3] holds words 4r..4r+3 */
        __m128i m = _mm_add_epi32(w[r & 3], _mm_loadu_si128((const __m128i *)&K[4 * r]));
        cdgh = _mm_sha256rnds2_epu32(cdgh, abef, m);
        abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(m, 0x0E));
        if (r < 12) { /* words 4r+16..4r+19 from the four groups before them */
            __m128i x = _mm_sha256msg1_epu32(w[r & 3], w[(r + 1) & 3]);
            x = _mm_add_epi32(x, _mm_alignr_epi8(w[(r + 3) & 3], w[(r + 2) & 3], 4));
            w[r & 3] = _mm_sha256msg2_epu32(x, w[(r + 3) & 3]);
        }
    }
    abef = _mm_add_epi32(abef, abef0);
    cdgh = _mm_add_epi32(cdgh, cdgh0);
    t = _mm_shuffle_epi32(abef, 0x1B);
    cdgh = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)&s->h[0], _mm_blend_epi16(t, cdgh, 0xF0));
    _mm_storeu_si128((__m128i *)&s->h[4], _mm_alignr_epi8(cdgh, t, 8));
}

/* Asked once; atomic: decode's worker threads (src/cli/decode_par.c) may ask it together. */
static bool have_sha_ni(void)
{
    static _Atomic int known = -1;
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (k < 0) {
        unsigned a, b, c, d;
        bool sse = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_1) && (c & bit_SSSE3);
        k = sse && __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA);
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k;
}

static void block_any(struct sha256 *s, const unsigned char *p)
{
    if (have_sha_ni())
        block_ni(s, p);
    else
        block(s, p);
}
#else
static void block_any(struct sha256 *s, const unsigned char *p)
{
    block(s, p);
}
#endif

void sha256_init(struct sha256 *s)
{
    static const uint32_t init[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, init, sizeof init);
    s->total = 0;
    s->used = 0;
}

void sha256_update(struct sha256 *s, const void *data, size_t len)
{
    const unsigned char *p = data;
    s->total += len;
    if (s->used) {
        size_t take = 64 - s->used < len ? 64 - s->used : len;
        memcpy(s->buf + s->used, p, take);
        s->used += take;
        p += take;
        len -= take;
        if (s->used == 64) {
            block_any(s, s->buf);
            s->used = 0;
        }
    }
    while (len >= 64) {
        block_any(s, p);
        p += 64;
        len -= 64;
    }
    if (len) {
        memcpy(s->buf, p, len);
        s->used = len;
    }
}

void sha256_final(struct sha256 *s, unsigned char out[32])
{
    uint64_t bits = s->total * 8;
    /* The padding in the buffer directly: a sha256_update for each zero byte was a third of
     * the time sha256_hex took on a small body. */
    s->buf[s->used++] = 0x80;
    if (s->used > 56) {
        memset(s->buf + s->used, 0, 64 - s->used);
        block_any(s, s->buf);
        s->used = 0;
    }
    memset(s->buf + s->used, 0, 56 - s->used);
    for (int i = 0; i < 8; i++)
        s->buf[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
    block_any(s, s->buf);
    s->used = 0;
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (unsigned char)(s->h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
        out[4 * i + 3] = (unsigned char)s->h[i];
    }
}

void sha256_hex(const void *data, size_t len, char out[65])
{
    struct sha256 s;
    unsigned char d[32];
    sha256_init(&s);
    sha256_update(&s, data, len);
    sha256_final(&s, d);
    /* by table: snprintf for each byte was a tenth of the time sha256_hex took */
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = hex[d[i] >> 4];
        out[2 * i + 1] = hex[d[i] & 15];
    }
    out[64] = '\0';
}
