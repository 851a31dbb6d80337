/*
 * hval_json: typed header values in the snapshot file's JSON form (docs/snapshot-format.md).
 *
 * Plain JSON reads as the obvious AMQP kind (string → long string, integer → signed 64-bit,
 * fraction → double, true/false → bool, null → void, array → array, object → table).
 * Where another kind must be kept, a value is {"type": KIND, "value": V} (or "base64" for
 * bytes that are not UTF-8). hval_to_json writes the plain form whenever reading it back gives
 * the same kind, and the typed form otherwise, so an export keeps every type.
 *
 * Ownership: hval_to_json returns a new reference. hval_from_json borrows j and fills *out
 * with a value the caller owns.
 */
#ifndef DLQX_HVAL_JSON_H
#define DLQX_HVAL_JSON_H

#include <jansson.h>

#include "bytes.h"
#include "hval.h"
#include "json_out.h"
#include "status.h"
#include "util.h"

/* Arrays and tables that would open at HVAL_JSON_WIRE_DEPTH levels or deeper (counted from
 * the value given) are written {"type": "wire", "base64": …}: the AMQP wire form of the value,
 * one level deep. A snapshot record then stays within what a JSON reader reads (jansson stops
 * at 2,048 levels) whatever the depth of the headers, and reads back to the same value. */
#define HVAL_JSON_WIRE_DEPTH 1000

json_t *hval_to_json(const struct hval *v);
json_t *htable_to_json(const struct htable *t);
/* htable_to_json's compact dump written straight into out, for the common kinds (integers,
 * strings and bytes that are UTF-8, booleans, voids, arrays, plain tables, 64 levels deep);
 * false, with nothing appended, for anything else (a float, a decimal, bytes that are not
 * UTF-8, a table that needs the typed form, an unsigned value above 2^63-1), which the
 * caller then writes through htable_to_json. */
bool htable_write_json(const struct htable *t, struct strbuf *out);
/* path names the value in errors ("headers.x-death[0].count"). */
enum status hval_from_json(const json_t *j, const char *path, struct hval *out, struct error *err);
enum status htable_from_json(const json_t *j, const char *path, struct htable **out,
                             struct error *err);

/* An unsigned 64-bit integer: a JSON integer up to 2^63-1, a decimal string above (new
 * reference); and the reverse, which accepts either (path names the value in errors). */
json_t *u64_to_json(uint64_t u);
enum status u64_from_json(const json_t *j, const char *path, uint64_t *out, struct error *err);

/* Bytes as JSON: a string when valid UTF-8, else {"base64": "..."}. New reference. */
json_t *bytes_to_json(const void *data, size_t len);
/* The reverse; accepts a string or {"base64": "..."}. */
enum status bytes_from_json(const json_t *j, const char *path, struct bytes *out,
                            struct error *err);

/* For the record writers: */
/* pre, then s between quotes, then post (pre and post: 0 for none), in one step: s is
 * printable ASCII with nothing to escape. */
static inline void json_put_quoted(struct strbuf *out, char pre, const void *s, size_t n, char post)
{
    if (out->cap - out->len <= n + 4)
        sb_grow(out, n + 4);
    char *o = out->buf + out->len;
    if (pre)
        *o++ = pre;
    *o++ = '"';
    if (n)
        memcpy(o, s, n);
    o += n;
    *o++ = '"';
    if (post)
        *o++ = post;
    out->len = (size_t)(o - out->buf);
    *o = '\0';
}

/* json_out_string's output, printable ASCII (the usual header value) written at once. */
static inline bool json_put_string(struct strbuf *out, const void *s, size_t n)
{
    if (n <= 48 ? json_plain_ascii(s, n) : json_plain_prefix(s, n, true) == n) {
        json_put_quoted(out, 0, s, n, 0);
        return true;
    }
    return json_out_string(out, s, n);
}

#endif
