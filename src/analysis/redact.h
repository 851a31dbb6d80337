/*
 * redact: takes values out of messages before a snapshot is shared (`dlqx cat --redact`), so
 * that the record stays a valid snapshot of the same shape (docs/snapshot-format.md,
 * "Redacting").
 *
 * A field is one of
 *   header.GLOB    headers whose name matches GLOB (fnmatch: * ? [...]), case-insensitively;
 *                  the whole value, whatever its kind (nested tables are not looked into)
 *   body           the whole body
 *   body.PATH, $.PATH, body[N]…, $[N]…
 *                  a JSON path in the body: .NAME, ["NAME"], [N], and * (.* or [*]) for every
 *                  member or element
 * A redacted value keeps its kind: a string becomes "[redacted]", a number 0, a boolean
 * false, an array or a table/object empty, null/void stays. A body that a body path cannot be
 * applied to — not JSON (binary, compressed, text) — is replaced whole by "[redacted]": what
 * cannot be looked into cannot be shared.
 *
 * Ownership: the redactor owns its rules (redact_free).
 */
#ifndef DLQX_REDACT_H
#define DLQX_REDACT_H

#include <stdbool.h>
#include <stddef.h>

#include "message.h"
#include "status.h"

#define REDACT_MARKER "[redacted]"

struct redact_rule;

struct redactor {
    struct redact_rule *rules;
    size_t n;
    long values;       /* values redacted so far */
    long whole_bodies; /* bodies redacted whole because they were not JSON */
    long records;      /* records in which something was redacted */
};

void redact_init(struct redactor *r);
void redact_free(struct redactor *r);
/* Adds one field; err says what is wrong with it. */
enum status redact_add(struct redactor *r, const char *field, struct error *err);
/* Redacts m in place, counting into r. */
void redact_message(struct redactor *r, struct message *m);
/* The fields that matched nothing so far, one after another (i from 0): NULL at the end. */
const char *redact_unmatched(const struct redactor *r, size_t *i);

#endif
