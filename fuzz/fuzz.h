/*
 * fuzz: what the harnesses and the seed maker share — the fixed clock, and the table that
 * turns fuzz_body's first input byte into the properties the body arrives with.
 *
 * fuzz_body's selector byte:
 *   bits 0-2  content_type, from fuzz_content_types (index 5 is "no content_type")
 *   bit 3     content_encoding "gzip"
 *   bit 4     app_id "babelqueue"
 *   bits 5-7  sanitizer flags: 5 SAN_ESCAPE_BACKSLASH, 6 SAN_ASCII, 7 SAN_PAD
 */
#ifndef DLQX_FUZZ_H
#define DLQX_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* 2026-01-02T04:04:05.678Z: the "now" every harness decodes at, so runs are repeatable. */
#define FUZZ_NOW_MS INT64_C(1767326645678)

#define FUZZ_CT_NONE 5
#define FUZZ_SEL_GZIP 0x08u
#define FUZZ_SEL_BABELQUEUE 0x10u

static const char *const fuzz_content_types[8] = {
    "application/json",
    "text/plain; charset=utf-8",
    "application/vnd.acemq.encrypted",
    "application/vnd.acemq.avro",
    "application/octet-stream",
    NULL,
    "application/yaml",
    "avro/binary",
};

/* The selector (bits 0-4) that best matches a fixture's properties; ct and app_id may be
 * NULL. Unknown content types map to "none", so the body is sniffed. */
static inline uint8_t fuzz_body_selector(const char *ct, size_t ct_len, const char *app_id,
                                         size_t app_len)
{
    uint8_t sel = FUZZ_CT_NONE;
    for (uint8_t i = 0; ct && i < 8; i++) {
        const char *t = fuzz_content_types[i];
        size_t n = t ? strlen(t) : 0;
        /* "text/plain; charset=utf-8" matches any text/plain */
        size_t cmp = t && strchr(t, ';') ? (size_t)(strchr(t, ';') - t) : n;
        if (t && ct_len >= cmp && strncmp(ct, t, cmp) == 0) {
            sel = i;
            break;
        }
    }
    if (app_id && app_len == 10 && memcmp(app_id, "babelqueue", 10) == 0)
        sel |= FUZZ_SEL_BABELQUEUE;
    return sel;
}

#endif
