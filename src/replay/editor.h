/*
 * editor: a new body from $VISUAL / $EDITOR. The current body is written to a private
 * temporary file (mode 0600, a suffix by content type so the editor highlights it), the
 * editor runs on the terminal, and the result is checked (JSON when the content type says
 * JSON); when it does not pass, the person is told why and may return to fix it or give up.
 * The dead letter is never touched: the edit is a new body for a new copy.
 *
 * The caller owns the terminal: a curses program leaves curses mode (def_prog_mode/endwin)
 * before calling and restores it after.
 *
 * Ownership: *out is a new body the caller frees (bytes_free).
 */
#ifndef DLQX_EDITOR_H
#define DLQX_EDITOR_H

#include <stdbool.h>
#include <stdio.h>

#include "bytes.h"
#include "status.h"

/* Asks on tty whether to edit again after a failed check: true to edit again. */
typedef bool (*editor_retry_fn)(void *ctx, const char *why);

/* Runs the editor on body. ST_OK with *out the new body (which may equal the old one);
 * ST_EINVAL when the person gave up (no body); ST_EIO when the editor could not run.
 * retry may be NULL: a failed check is then an error (ST_EPARSE) naming the problem. */
enum status editor_edit(const struct bytes *body, const struct bytes *content_type,
                        editor_retry_fn retry, void *ctx, struct bytes *out, struct error *err);

/* The editor command: $VISUAL, else $EDITOR, else "vi". Borrowed. */
const char *editor_command(void);

#endif
