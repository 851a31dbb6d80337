/*
 * sha256: SHA-256 (FIPS 180-4), for body digests — how a replay later recognises the exact
 * dead letter it means to take — and for ids derived from content.
 */
#ifndef DLQX_SHA256_H
#define DLQX_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
    uint32_t h[8];
    uint64_t total;
    unsigned char buf[64];
    size_t used;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t len);
void sha256_final(struct sha256 *s, unsigned char out[32]);
/* One-shot digest as 64 lowercase hex digits plus NUL. */
void sha256_hex(const void *data, size_t len, char out[65]);

#endif
