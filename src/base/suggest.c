/*
 * suggest: close names of a name that was not found (see suggest.h).
 */
#include "suggest.h"

#include <stdint.h>
#include <string.h>

#define SUGGEST_MAX_LEN 255

static unsigned char fold(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

size_t suggest_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > SUGGEST_MAX_LEN || lb > SUGGEST_MAX_LEN)
        return SIZE_MAX;
    /* Three rows of the dynamic programme: two back (for swaps), one back, this one. */
    size_t r0[SUGGEST_MAX_LEN + 1], r1[SUGGEST_MAX_LEN + 1], r2[SUGGEST_MAX_LEN + 1];
    size_t *pp = r0, *p = r1, *cur = r2;
    for (size_t j = 0; j <= lb; j++)
        p[j] = j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = i;
        unsigned char ca = fold((unsigned char)a[i - 1]);
        for (size_t j = 1; j <= lb; j++) {
            unsigned char cb = fold((unsigned char)b[j - 1]);
            size_t best = p[j - 1] + (ca != cb);
            if (p[j] + 1 < best)
                best = p[j] + 1;
            if (cur[j - 1] + 1 < best)
                best = cur[j - 1] + 1;
            if (i > 1 && j > 1 && ca == fold((unsigned char)b[j - 2]) &&
                fold((unsigned char)a[i - 2]) == cb && pp[j - 2] + 1 < best)
                best = pp[j - 2] + 1;
            cur[j] = best;
        }
        size_t *t = pp;
        pp = p;
        p = cur;
        cur = t;
    }
    return p[lb];
}

static int contains_folded(const char *hay, const char *needle)
{
    size_t lh = strlen(hay), ln = strlen(needle);
    if (ln > lh)
        return 0;
    for (size_t i = 0; i + ln <= lh; i++) {
        size_t k = 0;
        while (k < ln && fold((unsigned char)hay[i + k]) == fold((unsigned char)needle[k]))
            k++;
        if (k == ln)
            return 1;
    }
    return 0;
}

/* The score of a candidate (lower is closer), SIZE_MAX when it is not close. */
static size_t score(const char *want, const char *name)
{
    size_t lw = strlen(want), ln = strlen(name);
    if (!lw || !ln || strcmp(want, name) == 0)
        return SIZE_MAX;
    size_t d = suggest_distance(want, name);
    size_t shorter = lw < ln ? lw : ln;
    /* About one typo in five letters, at least one, at most three. */
    size_t limit = lw / 5;
    if (limit < 1)
        limit = 1;
    if (limit > 3)
        limit = 3;
    if (d != SIZE_MAX && d <= limit && d < shorter)
        return d;
    /* One inside the other, of at least four letters: a prefix or suffix left out. */
    if (shorter >= 4 && (lw < ln ? contains_folded(name, want) : contains_folded(want, name)))
        return limit + 1 + (lw > ln ? lw - ln : ln - lw);
    return SIZE_MAX;
}

size_t suggest_names(const char *want, const char *const *names, size_t n, size_t *out, size_t max)
{
    size_t got = 0;
    size_t scores[16];
    if (max > sizeof scores / sizeof *scores)
        max = sizeof scores / sizeof *scores;
    for (size_t i = 0; i < n && max; i++) {
        size_t s = score(want, names[i]);
        if (s == SIZE_MAX)
            continue;
        /* Insertion into the best-first list (ties by name, then by position). */
        size_t at = got;
        while (at > 0 && (s < scores[at - 1] ||
                          (s == scores[at - 1] && strcmp(names[i], names[out[at - 1]]) < 0)))
            at--;
        if (at >= max)
            continue;
        size_t end = got < max ? got : max - 1;
        for (size_t k = end; k > at; k--) {
            scores[k] = scores[k - 1];
            out[k] = out[k - 1];
        }
        scores[at] = s;
        out[at] = i;
        if (got < max)
            got++;
    }
    return got;
}
