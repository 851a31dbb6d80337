/*
 * fuzz: what the harnesses and the seed maker share — the fixed clock, and the table that
 * turns fuzz_body's first input byte into the properties the body arrives with.
 *
 * fuzz_body's selector byte:
 *   bits 0-2  content_type, from fuzz_content_types (index 5 is "no content_type")
 *   bit 3     content_encoding "gzip"
 *   bit 4     app_id "babelqueue"
 *   bits 5-7  sanitizer flags: 5 SAN_ESCAPE_BACKSLASH, 6 SAN_ASCII, 7 SAN_PAD
 *
 * And the checks several harnesses make: the terminal-safety promise of sanitize.h
 * (fuzz_unsafe), the lossless snapshot round trip (fuzz_snapshot_round_trip) and which of
 * the broker's headers a copy may carry (fuzz_copy_header_ok).
 */
#ifndef DLQX_FUZZ_H
#define DLQX_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <locale.h>

#include "bytes.h"
#include "celery.h"
#include "decode.h"
#include "hval.h"
#include "message.h"
#include "restamp.h"
#include "sanitize.h"
#include "snapshot.h"
#include "status.h"
#include "util.h"

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

/* Widths come from wcwidth(): measure as a UTF-8 terminal would (for LLVMFuzzerInitialize). */
static inline void fuzz_utf8_locale(void)
{
    if (!setlocale(LC_ALL, "C.UTF-8"))
        setlocale(LC_ALL, "");
}

/* m (initialised here) with headers h (the message owns it from here), from queue
 * orders.dlq. */
static inline void fuzz_message_with(struct message *m, struct htable *h)
{
    message_init(m);
    htable_free(m->headers);
    m->headers = h;
    m->headers_present = true;
    m->queue = bytes_from_cstr("orders.dlq");
}

/* Prints "harness: what", then up to 512 bytes of p in hex, and aborts (below). */
static inline void fuzz_fail_bytes(const char *harness, const char *what, const void *p, size_t n)
    __attribute__((noreturn));

/* decode_message and decoded_to_json (dumped) of m; aborts when the record is NULL, or when
 * decoded_write_json (the record without its tree) writes other bytes than its dump. */
static inline void fuzz_decode(const struct message *m, const char *harness)
{
    struct decoded d;
    decode_message(m, FUZZ_NOW_MS, &d);
    json_t *rec = decoded_to_json(&d, FUZZ_NOW_MS);
    if (!rec) {
        fprintf(stderr, "%s: decoded_to_json returned NULL\n", harness);
        abort();
    }
    size_t flags = JSON_COMPACT | JSON_REAL_PRECISION(15);
    char *tree = json_dumps(rec, flags);
    struct strbuf direct;
    sb_init(&direct);
    if (tree && decoded_write_json(&d, FUZZ_NOW_MS, flags, &direct) &&
        strcmp(direct.buf, tree) != 0)
        fuzz_fail_bytes(harness, "decoded_write_json wrote otherwise than decoded_to_json's dump",
                        direct.buf, direct.len);
    sb_free(&direct);
    free(tree);
    json_decref(rec);
    decoded_free(&d);
}

/* Prints "harness: what", then up to 512 bytes of p in hex, and aborts. */
static inline void fuzz_fail_bytes(const char *harness, const char *what, const void *p, size_t n)
{
    fprintf(stderr, "%s: %s\n  bytes (%zu):", harness, what, n);
    for (size_t i = 0; i < n && i < 512; i++)
        fprintf(stderr, " %02x", ((const unsigned char *)p)[i]);
    fprintf(stderr, "\n");
    abort();
}

/* The code points sanitize.h promises never to let through. */
static inline bool fuzz_forbidden_cp(uint32_t cp)
{
    return (cp >= 0x80 && cp <= 0x9F) || cp == 0x061C || cp == 0x180E ||
           (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) ||
           (cp >= 0x2060 && cp <= 0x206F) || cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFB) ||
           (cp >= 0xE0000 && cp <= 0xE007F);
}

/* NULL when s[0..len) keeps sanitize.h's promise for flags — valid UTF-8, no C0 control (a
 * '\n' only with SAN_KEEP_NEWLINES), no DEL, none of the code points it escapes (C1, bidi
 * and invisible format characters, U+2028/9, the tag block), pure ASCII with SAN_ASCII —
 * else what is wrong, with *at the offending byte. */
static inline const char *fuzz_unsafe(const char *str, size_t len, unsigned flags, size_t *at)
{
    const unsigned char *s = (const unsigned char *)str;
    *at = 0;
    if (!utf8_valid(s, len))
        return "output is not valid UTF-8";
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        *at = i;
        if (c < 0x80) {
            if ((c < 0x20 && !(c == '\n' && (flags & SAN_KEEP_NEWLINES))) || c == 0x7F)
                return "a control byte in the output";
            i++;
            continue;
        }
        if (flags & SAN_ASCII)
            return "non-ASCII output with SAN_ASCII";
        /* Well-formed (checked above): decode the code point. */
        size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        uint32_t cp = c & (n == 2 ? 0x1Fu : n == 3 ? 0x0Fu : 0x07u);
        for (size_t k = 1; k < n; k++)
            cp = cp << 6 | (s[i + k] & 0x3Fu);
        if (fuzz_forbidden_cp(cp))
            return "an escaped code point in the output";
        i += n;
    }
    return NULL;
}

/* The snapshot format is lossless: snapshot_format of m (into *line, reset first) ends with
 * its newline and parses back into a message_equal message. NULL when it holds, else what
 * failed (err says why a line did not parse). */
static inline const char *fuzz_snapshot_round_trip(const struct message *m, struct strbuf *line,
                                                   struct error *err)
{
    sb_reset(line);
    snapshot_format(m, line);
    if (!line->len || line->buf[line->len - 1] != '\n')
        return "snapshot_format did not end its line with a newline";
    struct message back;
    error_clear(err);
    if (snapshot_parse_line(line->buf, line->len - 1, &back, err) != ST_OK) {
        message_free(&back);
        return "the written line does not parse back";
    }
    bool same = message_equal(m, &back);
    message_free(&back);
    return same ? NULL : "the written line parses back into a different message";
}

/* Whether a copy restamp_build made of d in mode may carry the header k = v. Never the
 * delivery's counters (x-delivery-count, x-stream-offset). A move carries the dead letter as
 * it is. After a replay or re-issue no other header the broker owns, except on a replay whose
 * framework's own tool keeps the death history (Celery's move, MassTransit's shovel), and then
 * only the dead letter's own value, in the kinds that tool writes (Celery's in py-amqp's). */
static inline bool fuzz_copy_header_ok(const struct decoded *d, enum restamp_mode mode,
                                       const struct bytes *k, const struct hval *v)
{
    if (bytes_eq_cstr(k, "x-delivery-count") || bytes_eq_cstr(k, "x-stream-offset"))
        return false;
    if (mode == RESTAMP_MOVE || !restamp_broker_owned((const char *)k->data, k->len))
        return true;
    const struct hval *mine = htable_get(d->msg->headers, (const char *)k->data);
    if (mode != RESTAMP_REPLAY || !mine)
        return false;
    struct htable *t = htable_new();
    htable_add(t, "v", hval_copy(mine));
    if (d->dialect == &dialect_celery)
        celery_pyamqp_kinds(t);
    bool same = hval_equal(&t->e[0].val, v);
    htable_free(t);
    return same;
}

#endif
