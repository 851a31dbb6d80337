/*
 * json_out: jansson's compact dump of a JSON tree (JSON_COMPACT, with or without
 * JSON_REAL_PRECISION and JSON_ENCODE_ANY) written straight into a strbuf, without a callback
 * for every token. The bytes are jansson's: strings escaped as its dump escapes them, keys in
 * its order, integers in decimal, and each real dumped by jansson itself. Anything else —
 * JSON_ENSURE_ASCII or another flag, a string or key that is not valid UTF-8 or holds a NUL
 * in a key, a tree deeper than JSON_OUT_MAX_DEPTH — and it declines: the caller dumps the
 * whole value with jansson, so the result is jansson's by construction.
 *
 * Ownership: j is borrowed; the text is appended to out.
 */
#ifndef DLQX_JSON_OUT_H
#define DLQX_JSON_OUT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "util.h"

#define JSON_OUT_MAX_DEPTH 256

/* Appends j as json_dump_callback(j, …, flags) would write it and returns true; or returns
 * false with nothing appended, and the caller dumps it with jansson (whose failures, and what
 * it writes before one, stay its own). */
bool json_out_fast(struct strbuf *out, const json_t *j, size_t flags);
/* One string as jansson's compact dump writes it (quotes included); false, with nothing
 * appended, when it is not valid UTF-8. */
bool json_out_string(struct strbuf *out, const void *s, size_t n);
/* A signed integer in decimal, as jansson writes it. */
void json_out_integer(struct strbuf *out, long long v);

#endif
