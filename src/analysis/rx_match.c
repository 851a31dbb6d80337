/*
 * rx_match: running the automaton rx.c builds over a subject, Thompson's way. The states the
 * automaton can be in are kept as one list per position; each character moves every state of
 * the list at most once, and the start state joins the list at every position (a search
 * anywhere). A state enters a list at most once, so a position costs at most twice the
 * automaton's size, whatever the regex and the subject: there is no backtracking to run away.
 */
#include "rx.h"

#include <stdlib.h>
#include <string.h>
#include <wctype.h>

#include "rx_internal.h"
#include "util.h"

uint32_t rx_decode(const unsigned char *s, size_t n, size_t i, size_t *len)
{
    unsigned char b = s[i];
    *len = 1;
    if (b < 0x80)
        return b;
    size_t need;
    uint32_t c, min;
    if (b >= 0xc2 && b <= 0xdf) {
        need = 1, c = b & 0x1f, min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
        need = 2, c = b & 0x0f, min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
        need = 3, c = b & 0x07, min = 0x10000;
    } else {
        return RX_BAD + b;
    }
    if (n - i <= need)
        return RX_BAD + b;
    for (size_t k = 1; k <= need; k++) {
        if ((s[i + k] & 0xc0) != 0x80)
            return RX_BAD + b;
        c = c << 6 | (s[i + k] & 0x3f);
    }
    if (c < min || c > 0x10ffff)
        return RX_BAD + b; /* overlong, or past Unicode; a surrogate is a character, as glibc
                              has it */
    *len = need + 1;
    return c;
}

uint32_t rx_fold(uint32_t c)
{
    if (c < 128)
        return c >= 'A' && c <= 'Z' ? c + 32 : c;
    if (c >= RX_BAD)
        return c;
    wint_t l = towlower((wint_t)c);
    return l >= 128 && l < RX_BAD ? (uint32_t)l : c; /* ASCII letters fold only to ASCII */
}

uint32_t rx_upper(uint32_t c)
{
    if (c < 128)
        return c >= 'a' && c <= 'z' ? c - 32 : c;
    if (c >= RX_BAD)
        return c;
    wint_t u = towupper((wint_t)c);
    return u >= 128 && u < RX_BAD ? (uint32_t)u : c;
}

bool rx_is_word(uint32_t c)
{
    if (c < 128)
        return c == '_' || (c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z');
    /* A byte of invalid UTF-8 is, to \b \< \>, the Latin-1 character of its value: glibc's
     * choice, kept so that the two agree on every subject. */
    return iswalnum((wint_t)(c >= RX_BAD ? c - RX_BAD : c));
}

static bool set_raw(const struct rx_set *set, uint32_t c)
{
    if (c < 128)
        return set->ascii[c >> 5] >> (c & 31) & 1;
    for (size_t i = 0; i < set->n_ranges; i++)
        if (c >= set->ranges[i].lo && c <= set->ranges[i].hi)
            return true;
    for (size_t i = 0; i < set->n_classes; i++)
        if (iswctype((wint_t)c, set->classes[i]))
            return true;
    return false;
}

static bool set_has(const struct rx_set *set, uint32_t c, bool icase)
{
    if (c >= RX_BAD)
        return false; /* a byte of invalid UTF-8 is in no bracket expression, even [^…] */
    if (c >= 0xd800 && c <= 0xdfff)
        return set->dot; /* nor is a surrogate, which only . matches */
    bool in = set_raw(set, c) || (icase && (set_raw(set, rx_fold(c)) || set_raw(set, rx_upper(c))));
    return in != set->negated;
}

/* ---- skipping ahead: with no thread alive, only a byte that can start a match matters ---- */

static void first_add(struct rx *re, unsigned b)
{
    if (b >= 0x80 && b <= 0xbf)
        re->skip = false; /* not where a character starts: do not skip at all */
    re->first[b >> 5] |= 1u << (b & 31);
}

static void first_add_lead_bytes(struct rx *re)
{
    for (unsigned b = 0xc2; b <= 0xf4; b++)
        first_add(re, b);
}

static void first_of(struct rx *re, const struct rx_state *st)
{
    if (st->op == RX_SET) {
        for (unsigned c = 0; c < 128; c++)
            if (set_has(&re->sets[st->x], c, re->icase))
                first_add(re, c);
        first_add_lead_bytes(re); /* conservative: any character past ASCII */
    } else if (st->x >= RX_BAD) {
        first_add(re, st->x - RX_BAD);
    } else if (st->x < 128) {
        first_add(re, st->x);
        if (re->icase)
            first_add(re, rx_upper(st->x));
    } else if (re->icase) {
        first_add_lead_bytes(re);
    } else {
        first_add(re, st->x < 0x800     ? 0xc0 | st->x >> 6
                      : st->x < 0x10000 ? 0xe0 | st->x >> 12
                                        : 0xf0 | st->x >> 18);
    }
}

void rx_prepare_skip(struct rx *re)
{
    /* The states the start reaches without a character, assertions taken as holding. */
    re->skip = true;
    memset(re->first, 0, sizeof re->first);
    bool *seen = xcalloc(re->n_st, sizeof *seen);
    int32_t *stack = xmalloc(re->n_st * sizeof *stack);
    size_t top = 0;
    stack[top++] = re->start;
    seen[re->start] = true;
    while (top && re->skip) {
        const struct rx_state *st = &re->st[stack[--top]];
        int32_t to[2] = {-1, -1};
        if (st->op == RX_MATCH)
            re->skip = false; /* the empty string matches */
        else if (st->op == RX_SPLIT)
            to[0] = st->out, to[1] = st->out1;
        else if (st->op == RX_ASSERT)
            to[0] = st->out;
        else
            first_of(re, st);
        for (int k = 0; k < 2; k++)
            if (to[k] >= 0 && !seen[to[k]]) {
                seen[to[k]] = true;
                stack[top++] = to[k];
            }
    }
    free(seen);
    free(stack);
}

/* The character that ends at q (0 < q <= n), as reading from the start would find it. */
static uint32_t char_before(const unsigned char *s, size_t q)
{
    size_t k = q - 1, len;
    while (k > 0 && q - k < 4 && (s[k] & 0xc0) == 0x80)
        k--;
    uint32_t c = rx_decode(s, q, k, &len);
    return k + len == q ? c : RX_BAD + s[q - 1];
}

/* Where the lists are built: the position's neighbours decide the assertions. */
struct run {
    const struct rx *re;
    int32_t *stack;
    uint32_t *mark; /* the stamp of the list a state is in */
    uint32_t stamp;
    uint32_t prev, next; /* the characters around the position; UINT32_MAX: none */
    bool bol, eol, matched;
    uint64_t steps;
};

static bool holds(const struct run *r, uint32_t kind)
{
    bool before = r->prev != UINT32_MAX && rx_is_word(r->prev);
    bool after = r->next != UINT32_MAX && rx_is_word(r->next);
    switch (kind) {
    case RXA_BOL:
        return r->bol;
    case RXA_EOL:
        return r->eol;
    case RXA_WORD:
        return before != after;
    case RXA_NOTWORD:
        return before == after;
    case RXA_BEGIN:
        return !before && after;
    case RXA_END:
        return before && !after;
    default:
        return false;
    }
}

/* Adds s and what it reaches without a character to list (the consuming states and MATCH). */
static void add(struct run *r, int32_t s, int32_t *list, size_t *n)
{
    const struct rx_state *st = r->re->st;
    size_t top = 0;
    if (r->mark[s] == r->stamp)
        return;
    r->mark[s] = r->stamp;
    r->stack[top++] = s;
    while (top) {
        int32_t i = r->stack[--top];
        int32_t to[2] = {-1, -1};
        r->steps++;
        switch (st[i].op) {
        case RX_SPLIT:
            to[0] = st[i].out, to[1] = st[i].out1;
            break;
        case RX_ASSERT:
            if (holds(r, st[i].x))
                to[0] = st[i].out;
            break;
        case RX_MATCH:
            r->matched = true;
            break;
        default:
            list[(*n)++] = i;
            break;
        }
        for (int k = 0; k < 2; k++)
            if (to[k] >= 0 && r->mark[to[k]] != r->stamp) {
                r->mark[to[k]] = r->stamp;
                r->stack[top++] = to[k];
            }
    }
}

bool rx_match(const struct rx *re, const char *subject, size_t n, struct rx_stats *stats)
{
    const unsigned char *s = (const unsigned char *)subject;
    size_t ns = re->n_st;
    enum { SMALL = 128 };
    int32_t small[4 * SMALL];
    uint32_t small_mark[SMALL];
    int32_t *mem = ns <= SMALL ? small : xmalloc(4 * ns * sizeof *mem);
    struct run r = {.re = re, .stack = mem, .prev = UINT32_MAX, .bol = true};
    r.mark = ns <= SMALL ? small_mark : xcalloc(ns, sizeof *r.mark);
    for (size_t i = 0; ns <= SMALL && i < ns; i++)
        r.mark[i] = 0;
    int32_t *cur = mem + ns, *nxt = mem + 2 * ns;
    size_t ncur = 0, nnxt, pos = 0, len = 0, chars = 0;
    uint32_t c = n ? rx_decode(s, n, 0, &len) : UINT32_MAX;
    r.next = c;
    r.eol = n == 0;
    r.stamp = 1;
    add(&r, re->start, cur, &ncur);
    while (!r.matched && pos < n) {
        /* Move over c (at pos, len bytes) into the list of the next position. */
        size_t at = pos + len, len2 = 0;
        uint32_t c2 = at < n ? rx_decode(s, n, at, &len2) : UINT32_MAX;
        r.prev = c;
        r.next = c2;
        r.bol = false;
        r.eol = at == n;
        r.stamp++;
        nnxt = 0;
        uint32_t folded = re->icase ? rx_fold(c) : c;
        for (size_t k = 0; k < ncur; k++) {
            const struct rx_state *st = &re->st[cur[k]];
            bool ok = st->op == RX_CHAR ? st->x == folded : set_has(&re->sets[st->x], c, re->icase);
            r.steps++;
            if (ok)
                add(&r, st->out, nxt, &nnxt);
        }
        if (nnxt == 0 && re->skip && at < n && !(re->first[s[at] >> 5] >> (s[at] & 31) & 1)) {
            /* Nothing alive: on to the next byte a match can start with (a character's
             * first byte, so the characters read from there are those read from the start). */
            size_t q = at;
            while (q < n && !(re->first[s[q] >> 5] >> (s[q] & 31) & 1))
                q++;
            if (q == n) {
                chars++;
                break; /* and the empty string does not match: skip is false then */
            }
            at = q;
            c2 = rx_decode(s, n, at, &len2);
            r.prev = char_before(s, at);
            r.next = c2;
            r.eol = false;
        }
        add(&r, re->start, nxt, &nnxt);
        int32_t *t = cur;
        cur = nxt;
        nxt = t;
        ncur = nnxt;
        pos = at;
        c = c2;
        len = len2;
        chars++;
    }
    if (stats) {
        stats->steps = r.steps;
        stats->chars = chars;
    }
    if (ns > SMALL) {
        free(mem);
        free(r.mark);
    }
    return r.matched;
}
