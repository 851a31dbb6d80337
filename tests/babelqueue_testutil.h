/*
 * What the BabelQueue tests share (test_babelqueue.c, test_babelqueue_dead.c): pieces of the
 * seed's canonical envelope to build variants from, parsing a string or a fixture, and
 * checks of the fields and warnings.
 */
#ifndef DLQX_BABELQUEUE_TESTUTIL_H
#define DLQX_BABELQUEUE_TESTUTIL_H

#include "testutil.h"

#include <stdbool.h>

#include "babelqueue.h"

/* Pieces of the seed's canonical envelope, to build variants that differ in one member. */
#define JOB "\"job\":\"urn:babel:orders:created\""
#define TRACE "\"trace_id\":\"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b\""
#define DATA "\"data\":{\"order_id\":1042,\"amount\":99.90}"
#define META_V(v)                                                                                  \
    "\"meta\":{\"id\":\"f1e2d3c4-b5a6-4789-90ab-cdef01234567\",\"queue\":\"default\","             \
    "\"lang\":\"php\",\"schema_version\":" v ",\"created_at\":1749132727000}"
#define META META_V("1")
#define ATT "\"attempts\":0"

/* bq_parse of a string, of a fixture, and the reason alone. */
enum bq_reason parse(const char *s, struct bq_envelope *e);
enum bq_reason parse_fixture(const char *name, struct bq_envelope *e);
enum bq_reason reason_of(const char *s);
/* A warning of kind k whose text contains needle. */
bool has_warning(const struct bq_envelope *e, enum bq_warning_kind k, const char *needle);

#define assert_str(field, lit)                                                                     \
    do {                                                                                           \
        assert_non_null((field).s);                                                                \
        assert_int_equal((field).len, sizeof(lit) - 1);                                            \
        assert_memory_equal((field).s, lit, sizeof(lit) - 1);                                      \
    } while (0)

#endif
