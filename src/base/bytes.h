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

struct bytes {
    size_t len;
    unsigned char *data;
};

struct bytes bytes_dup(const void *data, size_t len);
struct bytes bytes_from_cstr(const char *s);
struct bytes bytes_copy(const struct bytes *b);
void bytes_free(struct bytes *b);
bool bytes_eq(const struct bytes *a, const struct bytes *b);
bool bytes_eq_cstr(const struct bytes *a, const char *s);
bool bytes_has_prefix(const struct bytes *a, const char *prefix);
/* The contents as a C string: NULL when b holds a NUL byte; "" for the empty value. */
const char *bytes_cstr(const struct bytes *b);

/* Whether data is well-formed UTF-8 (no overlongs, no surrogates, <= U+10FFFF). */
bool utf8_valid(const void *data, size_t len);

/* The length of the longest prefix of data that a JSON string holds as it is: no byte below
 * 0x20, no '"', no '\\', and (when ascii_only) no byte above 0x7f. Eight bytes at a time. */
size_t json_plain_prefix(const void *data, size_t len, bool ascii_only);

/* The whole of a file, at most max bytes (0: no limit): 0 on success; else -1 with errno set
 * (EFBIG when it is larger than max). *out is the caller's to free. */
int bytes_read_file(const char *path, size_t max, struct bytes *out);

/* Standard base64 (RFC 4648, with padding). decode accepts no whitespace; false on error. */
char *base64_encode(const void *data, size_t len);
bool base64_decode(const char *s, size_t n, struct bytes *out);

#endif
