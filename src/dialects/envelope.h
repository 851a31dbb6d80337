/*
 * envelope: the one neutral, immutable envelope every dialect decodes into.
 *
 * Fields follow the AceMQ envelope (the richest of the dialects); every other dialect fills
 * the same fields from its own places (dialect.h, docs/dialects.md). An envelope is built
 * once by envelope_new, handed out as `const struct envelope *`, and never changed: a change
 * is envelope_with(), which returns a new envelope and leaves the old one untouched.
 *
 * Ownership: envelope_new/envelope_with return an envelope the caller frees with
 * envelope_free. The init struct and changes are borrowed (copied in); envelope_take takes
 * the init's bytes and tables instead. An envelope's strings and empty tables live in its
 * own allocation (envelope_free frees them): never free or change them one by one.
 */
#ifndef DLQX_ENVELOPE_H
#define DLQX_ENVELOPE_H

#include <stdbool.h>
#include <stdint.h>

#include "bytes.h"
#include "hval.h"
#include "status.h"

/* Which fields took their default rather than a value read off the message. */
enum env_defaulted {
    ED_ID = 1u << 0,
    ED_TYPE = 1u << 1,
    ED_VERSION = 1u << 2,
    ED_CORRELATION = 1u << 3,
    ED_ATTEMPT = 1u << 4,
    ED_FIRST_SEEN = 1u << 5,
};

struct envelope {
    bool attempt_from_zero; /* attempts count from 0 (no clamp to 1): BabelQueue, Celery… */
    struct bytes id;
    struct bytes type;
    int64_t version;             /* >= 1 */
    struct bytes correlation_id; /* never empty: defaults to id */
    struct bytes causation_id;   /* empty: none */
    int64_t attempt;             /* >= 1 for AceMQ; BabelQueue counts from 0 */
    int64_t first_seen_ms;
    struct bytes origin;
    struct bytes error; /* why it was set aside; empty: none */
    struct bytes claim;
    unsigned defaulted;              /* enum env_defaulted bits */
    struct htable *headers;          /* the application's own headers; never NULL */
    struct htable *route;            /* AceMQ route triple, carried opaquely; never NULL */
    struct htable *reserved_unknown; /* x-acemq-* names not known here, kept; never NULL */
};

/* What envelope_new copies in. Empty bytes mean "absent". Tables may be NULL (empty). */
struct envelope_init {
    bool attempt_from_zero; /* attempt may be 0; else it is clamped to at least 1 */
    struct bytes id, type, correlation_id, causation_id, origin, error, claim;
    int64_t version, attempt, first_seen_ms;
    unsigned defaulted;
    const struct htable *headers, *route, *reserved_unknown;
    /* When true, header names in the reserved x-acemq- namespace are refused (ST_ERESERVED),
     * as AceMQ's Envelope.new does. Dialects without a reserved namespace set it false. */
    bool refuse_reserved;
};

enum status envelope_new(const struct envelope_init *init, const struct envelope **out,
                         struct error *err);
/* envelope_new, taking rather than copying: in's bytes and tables (the caller's own, from
 * malloc, or empty) become the envelope's, and in is left empty, whatever the answer. The
 * envelope is the one envelope_new gives for the same init. */
enum status envelope_take(struct envelope_init *in, const struct envelope **out, struct error *err);
/* Between the two: in's strings copied (borrowed), its tables taken (set to NULL in in,
 * whatever the answer). */
enum status envelope_take_tables(struct envelope_init *in, const struct envelope **out,
                                 struct error *err);
void envelope_free(const struct envelope *e);
/* Every field, headers, route and unknown reserved names included (kind-exact, ordered). */
bool envelope_equal(const struct envelope *a, const struct envelope *b);

/* Whether name is in AceMQ's reserved namespace (the x-acemq- prefix). */
bool acemq_reserved_name(const void *name, size_t len);

enum env_field {
    EF_ID,
    EF_TYPE,
    EF_VERSION,
    EF_CORRELATION,
    EF_CAUSATION,
    EF_ATTEMPT,
    EF_FIRST_SEEN,
    EF_ORIGIN,
    EF_ERROR,
    EF_CLAIM,
    EF_HEADER_SET,    /* header = name, value = the new value (copied) */
    EF_HEADER_REMOVE, /* header = name */
};

struct env_change {
    enum env_field field;
    struct bytes text;        /* for the string fields (empty clears where allowed) */
    int64_t number;           /* for version, attempt, first_seen */
    const char *header;       /* for EF_HEADER_* */
    const struct hval *value; /* for EF_HEADER_SET (borrowed) */
    bool untyped; /* EF_HEADER_SET written without a kind (header.NAME=V): a string, which
                     restamp reads as the kind of the header it replaces (restamp.h) */
};

/* A new envelope: e with the changes applied in order. e is untouched. Setting a reserved
 * header name, or a change that cannot apply, is an error and nothing is returned. */
enum status envelope_with(const struct envelope *e, const struct env_change *changes, size_t n,
                          const struct envelope **out, struct error *err);

/* Parses "field=value" (type=…, version=3, header.tenant=acme, -header.tenant, …) into a
 * change. Text values are borrowed from s via the returned change (owned copies in *hv and
 * change->text are released with env_change_release). */
enum status env_change_parse(const char *s, struct env_change *out, struct hval *hv,
                             struct error *err);
void env_change_release(struct env_change *c, struct hval *hv);
/* val (text) as a header value of kind (as header.NAME:KIND=VALUE reads it): ST_EINVAL when it
 * is not one or does not fit, ST_EUNSUPPORTED for kinds text cannot give (decimal, array...). */
enum status env_change_value(enum hkind kind, const char *name, const char *val, struct hval *hv,
                             struct error *err);

/* The id that stands in for a message that carries none: a name-based UUID (version 5) of
 * digest, so that the same message reads with the same id every time (where the libraries
 * would mint a random one). A new string the caller frees. */
struct bytes envelope_derived_id(const struct bytes *digest);

/* Age in seconds at now_ms. */
double envelope_age_s(const struct envelope *e, int64_t now_ms);

#endif
