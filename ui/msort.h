/*
 * msort: a stable merge sort of (key, position) items done in slices between clock checks,
 * for the explorer's long sorts (rows.c): a step merges until the time is up and carries on
 * where it stopped at the next.
 *
 * Ownership: the arrays are the caller's; msort_step swaps them as it merges (m->a holds the
 * sorted items when it returns true, m->b the other array).
 */
#ifndef DLQX_UI_MSORT_H
#define DLQX_UI_MSORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct ritem {
    uint64_t key; /* the sort key; for the distinct texts, their first 8 bytes (big-endian) */
    uint32_t pos; /* the row's store entry (ties: store order); for a distinct text, its number */
    uint32_t len; /* a text's length (distinct texts only) */
};

struct msort {
    struct ritem *a, *b; /* runs of width are sorted in a; merged into b */
    size_t n, width, lo, i, j, o;
    bool merging;
    const char *texts; /* distinct texts: compared whole when their first 8 bytes tie */
    const size_t *off; /* (borrowed) */
    /* or the texts are the ids of the store's entries, pos the entry (read where they are;
     * a UUID's formatted into ubuf) */
    const struct store *ids;
    char (*ubuf)[STORE_TEXT_MAX]; /* two, owned by the caller */
    bool desc;                    /* keys and texts descending (positions still ascending) */
};

void msort_init(struct msort *m, struct ritem *items, struct ritem *tmp, size_t n);
/* Merges until the clock passes until (job_yield); true when the whole array is sorted. */
bool msort_step(struct msort *m, double until);

#endif
