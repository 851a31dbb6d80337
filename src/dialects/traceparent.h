/*
 * traceparent: the W3C Trace Context `traceparent` value (Trace Context level 1, section 3.2):
 * `VERSION-TRACEID-PARENTID-FLAGS`, lower-case hex. Used to link a message whose correlation
 * defaulted into the causal tree by its trace id (decode.c's post-step; the cloudevents dialect
 * for its distributed-tracing extension).
 */
#ifndef DLQX_TRACEPARENT_H
#define DLQX_TRACEPARENT_H

#include <stdbool.h>
#include <stddef.h>

#include "hval.h"

#define TRACEPARENT_ID_LEN 32

/* True when s[0..n) is a valid traceparent; then out holds the trace id (32 lower-case hex
 * digits and a NUL). Invalid: a version of `ff` or not two lower-case hex digits, an all-zero
 * trace id or parent id, upper-case hex, version 00 not exactly 55 characters, a higher version
 * whose 56th character is not `-`. */
bool traceparent_trace_id(const void *s, size_t n, char out[TRACEPARENT_ID_LEN + 1]);

/* The same for a header value: a string or bytes value; any other kind is not a traceparent. */
bool traceparent_from_hval(const struct hval *v, char out[TRACEPARENT_ID_LEN + 1]);

#endif
