/*
 * snapshot_fast: a reader specialised for the snapshot's own keys and value shapes, in one
 * pass over the line with no JSON tree. It is sure or it declines: a line it reads in full is
 * the message the jansson reader (snapshot_parse_jansson) makes of it, and anything it does
 * not fully understand — an unknown or duplicate key, an escape in a key, a number that is
 * not a short integer, a typed value other than the plain integer, string, bytes and bool
 * kinds, base64 forms, a deep value, any error at all — makes it decline, and the caller
 * reads the line with jansson (which also words every error). See docs/snapshot-format.md,
 * "How dlqx reads it".
 *
 * Ownership: on true, *out holds a message the caller owns (message_free); on false, *out is
 * left freed and empty (message_init'ed state is the caller's to make again).
 */
#ifndef DLQX_SNAPSHOT_FAST_H
#define DLQX_SNAPSHOT_FAST_H

#include <stdbool.h>
#include <stddef.h>

#include "message.h"

/* Values nest at most this deep in the fast path (the headers' arrays and tables); deeper
 * lines go to jansson. */
#define SNAPSHOT_FAST_MAX_DEPTH 64

bool snapshot_fast_parse(const char *line, size_t len, struct message *out);

#endif
