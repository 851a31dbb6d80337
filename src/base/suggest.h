/*
 * suggest: the close names of a name that was not found (a mistyped queue), for "did you
 * mean" — pure, no I/O. A candidate is close when its edit distance (insertions, deletions,
 * substitutions and swaps of two neighbours, letters compared without case) is small for the
 * name's length, or when one contains the other (a missing prefix such as "prod." or a
 * missing ".dlq"). The closest come first; ties by name.
 */
#ifndef DLQX_SUGGEST_H
#define DLQX_SUGGEST_H

#include <stddef.h>

/* The edit distance of a and b (optimal string alignment), case-insensitive for ASCII;
 * SIZE_MAX when either is longer than 255 bytes (too long to be a typo of the other). */
size_t suggest_distance(const char *a, const char *b);

/* Fills out[] with the indexes into names[] of at most max close names of want, best first,
 * and returns how many. names equal to want are not suggested. */
size_t suggest_names(const char *want, const char *const *names, size_t n, size_t *out, size_t max);

#endif
