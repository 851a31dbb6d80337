/*
 * filter: the filter language of the `/` search, the list filter and `--filter EXPR`
 * (docs/filter.md is the reference), compiled once and evaluated against store entries.
 *
 *   type:order.* error:~timeout attempt>3 age>1h header.tenant=acme
 *
 * Terms side by side are ANDed, OR binds looser, `-term` / NOT negate, parentheses group.
 * A bare word searches id, type, error and queue; one that reads as a field with a mistyped
 * operator (`error~x`, `type;x`, `attempt=>3`) is refused with the form meant, since as a
 * search `-error~x` would select everything. `group=g:…` is a failure group (groups.h). Evaluation
 * reads only the store's index entry unless a term needs the message itself (header.NAME, body,
 * origin): then the message is loaded with store_get, and only when evaluation reaches that term.
 * AND and OR run the entry's own terms first, so `header.t=a type:x` loads nothing for entries
 * whose type is not x.
 *
 * Ownership: filter_compile returns a filter the caller frees with filter_free. The filter
 * keeps a private memo of expensive results (regex, fingerprints) that it updates while
 * matching: a filter is used by one thread at a time. Everything matched against is borrowed.
 * Errors: filter_compile reports one sentence with the column of the problem; matching never
 * fails (a message that cannot be loaded has no headers and no body).
 */
#ifndef DLQX_FILTER_H
#define DLQX_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "decode.h"
#include "message.h"
#include "status.h"
#include "store.h"
#include "util.h"

struct filter;

/* Compiles expr (untrusted, any bytes). An empty or blank expression matches everything.
 * On error *out is NULL and err says what and where: `unknown field "tpye" at column 1 (did you
 * mean type?)`. */
enum status filter_compile(const char *expr, struct filter **out, struct error *err);
/* The same, also giving the 1-based column (in characters) of the problem for a caret; 0 when
 * compiled. column may be NULL. */
enum status filter_compile_at(const char *expr, struct filter **out, size_t *column,
                              struct error *err);
void filter_free(struct filter *f);

/* Whether f matches everything (the empty filter; a NULL filter is empty too). */
bool filter_is_empty(const struct filter *f);
/* Whether some term reads the message itself (header.NAME, body, origin): matching an entry
 * then may cost a store_get. */
bool filter_needs_message(const struct filter *f);

/* The bare-word searches in f (terms without a field, which match a substring of the id, type,
 * error or queue), in canonical form and separated by spaces, appended to out (may be NULL);
 * returns how many. A field term one typo away reads as one, so a command that deletes by a
 * filter says when it holds searches. */
size_t filter_searches(const struct filter *f, struct strbuf *out);

/* Entry i of s at now_ms (ages). Reads the entry only, unless a term it reaches needs the
 * message. false for an index out of range. */
bool filter_match_entry(const struct filter *f, const struct store *s, size_t i, int64_t now_ms);
/* A message the caller holds. d is its decoded form when the caller has one (borrowed; NULL:
 * decoded here when a term needs the envelope). Gives the same answers as filter_match_entry
 * on the entry of that message. */
bool filter_match_message(const struct filter *f, const struct message *m, const struct decoded *d,
                          int64_t now_ms);

/* The filter as a person should read it back, in canonical form (normalised spacing,
 * parentheses only where needed, values quoted only where needed); it compiles to the same
 * filter. "" for the empty filter. Appends to out. */
void filter_describe(const struct filter *f, struct strbuf *out);

/* Appends s as a filter value: bare when it can be, else "quoted" with backslash escapes
 * (wildcards escaped when literal is true, so the value matches only itself). */
void filter_quote(const char *s, size_t n, bool literal, struct strbuf *out);

/* Ages and durations as the language writes them ("90s", "1h30m", "2d"): parses a duration
 * into milliseconds; false when s is not one. */
bool filter_parse_duration(const char *s, size_t n, int64_t *ms);

#endif
