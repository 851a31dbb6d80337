/*
 * What the filter tests share (test_filter.c, test_filter_syntax.c): six hand-made dead letters
 * of the three dialects in a store at a fixed now, and checks that an expression selects
 * exactly the expected ones (on the store entry and on the message, which must agree) and
 * that its canonical description reads back the same.
 */
#ifndef DLQX_FILTER_TESTUTIL_H
#define DLQX_FILTER_TESTUTIL_H

#include "testutil.h"

#include "filter.h"
#include "store.h"

#define T0 1767323045678LL /* 2026-01-02T03:04:05.678Z: "now" in these tests */
#define MIN 60000LL
#define HOUR 3600000LL
#define DAY 86400000LL

/* The records, loaded by filter_setup (DLQX_NOW is T0), freed by filter_teardown. */
extern struct store *store_;
int filter_setup(void **state);
int filter_teardown(void **state);

/* expr selects exactly the records in want ("0 2 5"), on the store entries and on the
 * messages alike. */
void check(const char *expr, const char *want);
/* expr compiles and describes itself as want, which describes itself the same way. */
void assert_describe(const char *expr, const char *want);

#endif
