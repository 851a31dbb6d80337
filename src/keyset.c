/*
 * keyset: open addressing (linear probing) over seeded 64-bit hashes, at most half full.
 */
#include "keyset.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"

static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* Eight bytes at a time, each word mixed in with the running hash (so that no difference
 * between two keys can be cancelled out without knowing the seed). */
static uint64_t key_hash(const unsigned char *p, size_t n, uint64_t seed)
{
    uint64_t h = seed;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = mix(h ^ w) + i;
    }
    uint64_t w = 0;
    if (n > i)
        memcpy(&w, p + i, n - i);
    return mix(h ^ w ^ ((uint64_t)n << 56) ^ (uint64_t)n);
}

void keyset_init(struct keyset *s, size_t expect)
{
    size_t cap = 16;
    while (cap / 2 < expect && cap < SIZE_MAX / 4 / sizeof *s->slot)
        cap *= 2;
    s->slot = xcalloc(cap, sizeof *s->slot);
    s->mask = cap - 1;
    s->n = 0;
    s->seed = mix((uint64_t)(uintptr_t)s->slot ^ (uint64_t)clock() ^ 0x9e3779b97f4a7c15ULL);
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
    uint64_t h = key_hash(k, len, s->seed);
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
    return find(s, k, len, key_hash(k, len, s->seed))->key != NULL;
}
