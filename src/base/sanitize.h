/*
 * sanitize: makes untrusted bytes (ids, header names and values, error strings, bodies)
 * safe to print on a terminal, and measures them in display columns.
 *
 * Everything that came from a message goes through here before it reaches the screen: the
 * output is always valid UTF-8 with no C0/C1 control, no DEL and no bidi or invisible
 * format character, so a message cannot move the cursor, set the title, make the terminal
 * answer (DECRQSS, OSC 52), reorder text or break column alignment. What it cannot show
 * as-is it writes as a plain-ASCII escape:
 *   \n \t \r \e \0        the common C0 controls (\e is ESC)
 *   \xNN                  any other C0 control, DEL, and each byte of invalid UTF-8
 *   \u{hex}               C1 controls (U+0080-U+009F), bidi/format characters, and with
 *                         SAN_ASCII every non-ASCII code point
 *   \\                    a backslash, with SAN_ESCAPE_BACKSLASH
 * The escaped code points are U+0080-U+009F, U+061C, U+180E, U+200B-U+200F,
 * U+2028-U+202E, U+2060-U+206F, U+FEFF, U+FFF9-U+FFFB and U+E0000-U+E007F.
 *
 * Decoding is done here and does not depend on the locale. Widths use wcwidth(), which
 * does: the program must call setlocale(LC_ALL, "") (or set LC_CTYPE) to a UTF-8 locale,
 * or East Asian wide characters and combining marks are counted as one column each.
 * Nothing here allocates except by growing the caller's strbuf.
 */
#ifndef DLQX_SANITIZE_H
#define DLQX_SANITIZE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "util.h"

enum sanitize_flags {
    /* Keep \n as a real newline and expand \t to spaces (tab stops every 8 columns, counted
     * from the start of the call or the last newline): for multi-line body views.
     * Ignored by sanitize_fit, which always produces one line. */
    SAN_KEEP_NEWLINES = 1u << 0,
    /* Write a backslash as \\ so that the output is unambiguous (reversible). */
    SAN_ESCAPE_BACKSLASH = 1u << 1,
    /* Pure ASCII output: every non-ASCII code point as \u{hex}, and "~" instead of "…" as the
     * truncation mark. For terminals or locales that are not UTF-8. */
    SAN_ASCII = 1u << 2,
    /* sanitize_fit: pad with spaces to exactly width columns. */
    SAN_PAD = 1u << 3,
};

/* Appends to out the safe form of len bytes at data (any bytes: NULs, invalid UTF-8).
 * flags: SAN_KEEP_NEWLINES, SAN_ESCAPE_BACKSLASH, SAN_ASCII. data may be NULL when len is 0.
 * Cannot fail (allocation failure aborts, as everywhere in dlqx). */
void sanitize_append(struct strbuf *out, const void *data, size_t len, unsigned flags);

/* Display columns of an already sanitized string (one line), using wcwidth() for each code
 * point. Code points wcwidth() does not know, and bytes that are not UTF-8, count as 1. */
size_t sanitize_width(const char *safe_utf8, size_t len);

/* Appends the safe form of data cut to at most width columns (negative means 0), never
 * splitting a code point, a wide character or an escape: when everything does not fit, the
 * longest prefix that fits in width - 1 columns is kept and "…" (or "~" with SAN_ASCII) is
 * added. With SAN_PAD the result is padded with spaces to exactly width columns. Combining
 * marks that follow the last kept character are kept. Stops reading data as soon as it is
 * full, so it is cheap on a large body. Returns the number of columns appended.
 * flags: SAN_ESCAPE_BACKSLASH, SAN_ASCII, SAN_PAD. */
int sanitize_fit(struct strbuf *out, const void *data, size_t len, int width, unsigned flags);

/* Whether data looks like text for the body viewer: well-formed UTF-8, no NUL, and at most
 * one control character (C0 other than \t \n \r, DEL, C1) per 16 code points. The empty
 * string is text. */
bool sanitize_is_text(const void *data, size_t len);

/* Error and status text for standard error (or a log): appends the safe form of len bytes at
 * text, as sanitize_append with flags does, except that each '\n' stays a real newline (a tab
 * is written \t). The whole message is sanitized, so it does not matter which part of it came
 * from input: a file name, a key, jansson's "near '...'" or a broker's reply. Idempotent
 * without SAN_ESCAPE_BACKSLASH (sanitizing safe text gives the same text).
 * flags: SAN_ESCAPE_BACKSLASH, SAN_ASCII. */
void sanitize_message(struct strbuf *out, const void *text, size_t len, unsigned flags);

/* The one way dlqx prints a message that may hold input-derived text to a terminal stream:
 * formats like fprintf, passes the whole result through sanitize_message and writes it in one
 * piece. The format is program text ('\n' allowed, no other control: a progress line's
 * "\r\033[K" is written apart with fputs). With SAN_ASCII when the locale's character set is
 * not UTF-8 (then a UTF-8 byte such as 0x9B could act as a C1 control). Returns what fwrite
 * returned (bytes written). */
size_t san_fprintf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
size_t san_vfprintf(FILE *f, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* san_fprintf(stderr, ...): every error message of the CLI and the explorer. */
#define san_eprintf(...) san_fprintf(stderr, __VA_ARGS__)
/* Writes len bytes of text (e.g. what was captured from stderr) through sanitize_message. */
size_t san_fwrite(FILE *f, const void *text, size_t len);

#endif
