/*
 * keyset: open addressing (linear probing) over seeded 64-bit hashes, at most half full.
 */
#include "keyset.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"

/* The seeds: the process's own, taken once, and moved on for every set. clock() is a system
 * call on this machine; taken for every set (one for each header table the snapshot writer
 * writes) it was 15% of `dlqx cat`. Each thread's own: the explorer's loader decodes on a
 * worker (ui/source_file.c). */
static _Thread_local uint64_t seed_base, seed_count;

void keyset_init(struct keyset *s, size_t expect)
{
    size_t cap = 16;
    while (cap / 2 < expect && cap < SIZE_MAX / 4 / sizeof *s->slot)
        cap *= 2;
    s->slot = xcalloc(cap, sizeof *s->slot);
    s->mask = cap - 1;
    s->n = 0;
    if (!seed_base)
        seed_base =
            hash_mix64((uint64_t)clock() ^ (uint64_t)time(NULL) ^ 0x9e3779b97f4a7c15ULL) | 1;
    seed_count++;
    s->seed =
        hash_mix64((uint64_t)(uintptr_t)s->slot ^ seed_base ^ (seed_count * 0xbf58476d1ce4e5b9ULL));
}

void keyset_free(struct keyset *s)
{
    free(s->slot);
    memset(s, 0, sizeof *s);
}

/* The slot holding key, or the free slot where it would go. */
static struct keyset_slot *find(const struct keyset *s, const unsigned char *key, size_t len,
                                uint64_t h)
{
    for (size_t i = (size_t)h & s->mask;; i = (i + 1) & s->mask) {
        struct keyset_slot *e = &s->slot[i];
        if (!e->key || (e->hash == h && e->len == len && (!len || memcmp(e->key, key, len) == 0)))
            return e;
    }
}

static void grow(struct keyset *s)
{
    struct keyset old = *s;
    size_t cap = (old.mask + 1) * 2;
    s->slot = xcalloc(cap, sizeof *s->slot);
    s->mask = cap - 1;
    for (size_t i = 0; i <= old.mask; i++)
        if (old.slot[i].key)
            *find(s, old.slot[i].key, old.slot[i].len, old.slot[i].hash) = old.slot[i];
    free(old.slot);
}

bool keyset_add(struct keyset *s, const void *key, size_t len)
{
    if (!s->slot)
        keyset_init(s, 0);
    if ((s->n + 1) * 2 > s->mask + 1)
        grow(s);
    const unsigned char *k = len ? key : (const unsigned char *)"";
    uint64_t h = hash_bytes(k, len, s->seed);
    struct keyset_slot *e = find(s, k, len, h);
    if (e->key)
        return false;
    *e = (struct keyset_slot){k, len, h};
    s->n++;
    return true;
}

bool keyset_has(const struct keyset *s, const void *key, size_t len)
{
    if (!s->slot)
        return false;
    const unsigned char *k = len ? key : (const unsigned char *)"";
    return find(s, k, len, hash_bytes(k, len, s->seed))->key != NULL;
}
