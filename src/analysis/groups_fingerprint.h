/*
 * groups_fingerprint: one error's text read as the groups read it — its fingerprint (the text
 * with numbers, ids, times, addresses and quoted values normalised away), its exception, whether
 * the broker made it — and the group's key (a digest of a fingerprint and a type) with its
 * text form. Pure functions of their arguments: no store, no groups, nothing allocated but the
 * caller's strbuf. The filter (fp=, group=) and the groups both build on it.
 */
#ifndef DLQX_GROUPS_FINGERPRINT_H
#define DLQX_GROUPS_FINGERPRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "status.h"
#include "util.h"

/* ---- fingerprints ---- */

/* Normalised text is cut at this many bytes (long stack traces still group by their head). */
#define FINGERPRINT_MAX 2048
/* Errors are read up to this many bytes. */
#define FINGERPRINT_SCAN_MAX 65535 /* what the store keeps of a text */

/* Normalises error (untrusted bytes, not NUL-terminated; invalid UTF-8 and controls allowed)
 * into *normalised (reset first; may be NULL) and returns its 64-bit hash (the same on every
 * host and run: a fingerprint can be written down, as in the filter `fp=…`). Placeholders:
 * <n> numbers, <id> ids, <str> quoted values, <ip>, <email>, <time>. */
uint64_t error_fingerprint(const char *error, size_t len, struct strbuf *normalised);

/* The exception class in error, when recognisable ("exhausted 5 attempts: TimeoutException:
 * …" gives TimeoutException; "Net::ReadTimeout", "App\Exceptions\GatewayTimeout",
 * "java.net.SocketTimeoutException" are whole). For a broker-made error, its reason
 * ("rejected"). Returns the length of the span at error + *off; 0 when there is none. */
size_t error_exception(const char *error, size_t len, size_t *off);

/* Whether error is one the broker made ("dead-lettered by the broker: …"). */
bool error_from_broker_text(const char *error, size_t len);

/* ---- the group's key: one name for a group, wherever it is shown or typed ---- */

/* A group is a fingerprint and a type; its key is a 64-bit digest (SHA-256) of the two, the
 * same on every host and run, printed "g:" and 16 hex digits (group_key_text). The explorer's
 * groups view, `dlqx groups`, `dlqx decode` (its "group" field) print it, and the filter
 * `group=g:…` and `--group g:…` select by it: exactly the group's members. */
#define GROUP_KEY_TEXT 19 /* "g:" + 16 hex digits + NUL */
/* The type is read up to FINGERPRINT_SCAN_MAX bytes, as the store keeps it. */
uint64_t group_key(uint64_t fingerprint, const char *type, size_t type_len);
void group_key_text(uint64_t key, char out[GROUP_KEY_TEXT]);
/* Reads "g:HEX16" (s[0..n), any case); false with err saying why otherwise — a fingerprint
 * alone (16 hex digits, the form --group took before) is refused with the key's form. */
bool group_key_parse(const char *s, size_t n, uint64_t *key, struct error *err);

#endif
