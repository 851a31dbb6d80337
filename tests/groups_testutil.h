/*
 * What the groups tests share (test_groups.c, test_groups_timeline.c): the fixed times, dead
 * letters appended to a store, and two builds of groups compared.
 */
#ifndef DLQX_GROUPS_TESTUTIL_H
#define DLQX_GROUPS_TESTUTIL_H

#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "filter.h"
#include "groups.h"
#include "store.h"

#define T0 1767323045678LL /* 2026-01-02T03:04:05.678Z */
#define MIN 60000LL
#define HOUR 3600000LL

/* A dead letter to append to a store. */
struct dl {
    const char *type, *queue, *error; /* error NULL: a broker death (reason, from) */
    const char *reason, *from;
    int64_t first_seen;
};

/* d appended to s as entry i (fetched at T0 + i): AceMQ's headers when it has an error,
 * else a broker death in x-death. */
void append(struct store *s, const struct dl *d, size_t i);

/* Two builds of the same entries agree on everything a view shows. */
void assert_same_groups(const struct groups *x, const struct groups *y, size_t entries);

#endif
