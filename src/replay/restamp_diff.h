/*
 * restamp_diff: what a copy changes against its dead letter, row by row — shown before sending
 * (the CLI's dry run, the explorer's plan) and kept in the journal. The copy itself is built by
 * restamp (src/dialects/restamp.h); this is the replay layer's, since it renders bodies and
 * header values as the detail view does (src/analysis/detail.h).
 */
#ifndef DLQX_RESTAMP_DIFF_H
#define DLQX_RESTAMP_DIFF_H

#include <jansson.h>

#include "restamp.h"

enum diff_section { DIFF_TARGET, DIFF_PROPERTY, DIFF_HEADER, DIFF_BODY };
enum diff_op { DIFF_SAME, DIFF_CHANGED, DIFF_ADDED, DIFF_REMOVED };

/* "target", "property", "header", "body"; "same", "changed", "added", "removed". */
const char *diff_section_name(enum diff_section s);
const char *diff_op_name(enum diff_op op);
/* The column a diff line starts with: ' ' same, '~' changed, '+' added, '-' removed. */
char diff_op_mark(enum diff_op op);

/* One row: a property, a header, the target or one body line. Text is the value as shown
 * (typed header values as "kind:value" with hval.h's kind names, e.g. "int64:3",
 * "string:acme"; arrays and tables as their snapshot JSON), unsanitised: the UI and the CLI
 * sanitise before drawing. A NUL byte is written as \x00 (a C string cannot hold it). */
struct diff_row {
    enum diff_section section;
    enum diff_op op;
    char *name;     /* property or header name; "exchange"/"routing_key"; NULL for body lines */
    char *old_text; /* NULL when added */
    char *new_text; /* NULL when removed */
};

struct diff {
    struct diff_row *rows;
    size_t n;
    size_t changed; /* rows that are not DIFF_SAME */
};

/* Old = the dead letter as it sits in the DLQ (queue, exchange and routing key it arrived
 * with); new = the copy. Rows: the target (exchange, routing_key), every property set on
 * either side, every header (the n-th of a name paired with the n-th of that name; old order,
 * then the added ones), then the body line by line with an LCS diff: JSON re-indented token by
 * token (body_render) when both content types say JSON and both parse, else text lines when
 * both are UTF-8, else hex lines of 16 bytes. Beyond 2000 lines or 1 MiB on either side the
 * body is one row (unchanged) or a removed/added pair, "(N bytes, sha256 …)". */
void restamp_diff(const struct message *old, const struct outgoing *copy, struct diff *out);
void diff_free(struct diff *d);
/* Only the changed rows, as a JSON array of {section, op, name, old, new} (new reference);
 * absent texts are null, text that is not UTF-8 is {"base64": …} (bytes_to_json). */
json_t *diff_to_json(const struct diff *d);
/* diff_to_json(restamp_diff(old, copy)) without the work of rendering a body that did not
 * change (the rows it would add are all the same): what the journal records. */
json_t *restamp_changes_json(const struct message *old, const struct outgoing *copy);
/* The same as json_dumps(restamp_changes_json(old, copy), JSON_COMPACT | JSON_PRESERVE_ORDER),
 * byte for byte, written without building the tree (a bulk replay keeps one for every copy
 * until its intent is written); *len its length. Owned by the caller (free); NULL only where
 * json_dumps would fail. */
char *restamp_changes_text(const struct message *old, const struct outgoing *copy, size_t *len);

#endif
