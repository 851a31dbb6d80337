/*
 * md5: MD5 (RFC 1321). Not for security: only to reproduce ids other tools derive with it
 * (ServiceControl's DeterministicGuid, the unique id ServicePulse knows a failed
 * NServiceBus message by).
 */
#ifndef DLQX_MD5_H
#define DLQX_MD5_H

#include <stddef.h>
#include <stdint.h>

struct md5 {
    uint32_t h[4];
    uint64_t total;
    unsigned char buf[64];
    size_t used;
};

void md5_init(struct md5 *s);
void md5_update(struct md5 *s, const void *data, size_t len);
void md5_final(struct md5 *s, unsigned char out[16]);
/* One-shot digest. */
void md5_digest(const void *data, size_t len, unsigned char out[16]);

#endif
