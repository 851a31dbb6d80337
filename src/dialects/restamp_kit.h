/*
 * restamp_kit: the parts of a replay or re-issue that dialects share — for their restamp hook
 * (dialect.h). restamp_build has already done the common work when a hook is called:
 *
 *   out->props     the dead letter's properties, delivery_mode 2 unless it said 1
 *   out->headers   its headers less the broker-owned ones (x-death, x-first-death-*,
 *                  x-last-death-*, x-delivery-count, x-stream-offset)
 *   out->body      its body, or the replacement (o->body), checked against the content type
 *   out->id        the envelope id; on a re-issue the new id (o->new_id, else a UUID v4)
 *   out->old_id    the dead letter's id
 *   target         set when one was given (out->target_how "explicit"); else the hook sets
 *                  it (rk_target_source for the usual rule: the source decode found)
 *
 * and after the hook it refuses a target that is the DLQ itself and digests the bodies. The
 * hook applies the dialect's rules (what is stripped, reset, added) and o->changes
 * (rk_apply_changes with a map of which header or property carries each envelope field).
 *
 * Ownership: every function takes or copies as it says; names are copied.
 */
#ifndef DLQX_RESTAMP_KIT_H
#define DLQX_RESTAMP_KIT_H

#include "decode.h"
#include "restamp.h"

/* The target: exchange and routing key (copied), and what it was worked out from (static). */
void rk_target(struct outgoing *out, const char *how, const void *exchange, size_t exchange_len,
               const void *routing_key, size_t routing_key_len);
/* Whether a target is set already (an explicit one). */
bool rk_has_target(const struct outgoing *out);
/* The usual rule: unless a target is set, the source decode found (its exchange and routing
 * key; how = the source's how). None: ST_ENOTFOUND naming why_none and --to. */
enum status rk_target_source(const struct decoded *d, struct outgoing *out, const char *why_none,
                             struct error *err);
/* ST_ENOTFOUND: "there is no target for this DIALECT dead letter (WHY): give --to …". */
enum status rk_no_target(const struct decoded *d, const char *why, struct error *err);

/* Replaces the first header named name (keeping its place), drops later ones, appends when
 * there is none. Takes ownership of v. */
void rk_header_put(struct htable *t, const char *name, struct hval v);
/* The same with a string value (longstr). */
void rk_header_put_text(struct htable *t, const char *name, const void *s, size_t n);
/* Removes every header whose name is in names (NULL-terminated); a name ending in '*' is a
 * prefix ("NServiceBus.ExceptionInfo.*"). Exact, case-sensitive. Returns how many went. */
size_t rk_headers_strip(struct htable *t, const char *const *names);
/* Whether name matches one of names (as rk_headers_strip matches). */
bool rk_name_in(const void *name, size_t len, const char *const *names);
/* The dead letter's headers as they are, the broker's death history included (only
 * x-delivery-count and x-stream-offset dropped), for a dialect whose own tool keeps them
 * (Celery's move). Replaces out->headers. */
void rk_headers_keep_broker(const struct decoded *d, struct outgoing *out);
/* A copy of h less the broker-owned headers (what every replay leaves out). A new table. */
struct htable *rk_headers_without_broker(const struct htable *h);
/* A counter in the kind the old value had (an integer that fits, or a decimal string), else
 * a long; rk_counter_set sets every header named name that way (none: nothing). */
struct hval rk_counter_like(const struct hval *old, int64_t v);
void rk_counter_set(struct htable *t, const char *name, int64_t v);
/* header.NAME=V and -header.NAME on a table (set: last one wins in place; remove: every one,
 * ST_ENOTFOUND when there is none). */
enum status rk_header_change(struct htable *t, const struct env_change *c, struct error *err);

void rk_prop_set(struct props *p, enum prop_flag f, const void *s, size_t n);
void rk_prop_clear(struct props *p, enum prop_flag f);

/* Which header and/or property carries an envelope field in a dialect. */
struct rk_field {
    enum env_field field;
    const char *header; /* set to the new value (text fields: a string, keeping a bytes kind;
                           number fields: in the old kind); NULL: none */
    int prop;           /* enum prop_flag also set, or -1 */
};
/* Applies o->changes: header.* on out->headers; a field in map on its header and property;
 * an id change also becomes out->id. Any other field is ST_EUNSUPPORTED naming what this
 * dialect can change. An empty id is refused. */
enum status rk_apply_changes(const struct decoded *d, const struct restamp_opts *o,
                             const struct rk_field *map, size_t n, struct outgoing *out,
                             struct error *err);
/* "id", "type", "correlation_id", …: the name of a field in messages. */
const char *rk_field_name(enum env_field f);

#endif
