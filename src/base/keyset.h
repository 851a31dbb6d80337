/*
 * keyset: a set of byte strings, for scanning a header table (or any list of names) in
 * linear time. "Have I seen this key before?" costs O(1) expected instead of a comparison
 * with every key before it: a 25,000-entry table (one 128 KB frame) used to cost 312 million
 * comparisons in table_is_plain alone.
 *
 * The hash is seeded per set (its address and the clock), so that keys chosen by a producer
 * cannot be made to collide on purpose; a lookup compares bytes only when the full 64-bit
 * hashes are equal.
 *
 * Ownership: the set borrows the keys it is given (they must outlive it, unchanged);
 * keyset_free releases only the set's own slots. A zeroed struct keyset is an empty set.
 */
#ifndef DLQX_KEYSET_H
#define DLQX_KEYSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct keyset_slot {
    const unsigned char *key; /* borrowed; NULL marks a free slot (an empty key is "") */
    size_t len;
    uint64_t hash;
};

struct keyset {
    struct keyset_slot *slot;
    size_t mask, n; /* mask + 1 slots (a power of two), n of them used */
    uint64_t seed;
};

/* An empty set ready for about expect keys (0: it grows as needed). */
void keyset_init(struct keyset *s, size_t expect);
void keyset_free(struct keyset *s);
/* Adds key; true when it was not in the set yet (false: an equal key was there already). */
bool keyset_add(struct keyset *s, const void *key, size_t len);
bool keyset_has(const struct keyset *s, const void *key, size_t len);

#endif
