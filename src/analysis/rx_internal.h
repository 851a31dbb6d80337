/*
 * rx_internal: the automaton rx.c builds and rx_match.c runs (see rx.h for the language).
 */
#ifndef DLQX_RX_INTERNAL_H
#define DLQX_RX_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <wctype.h>

#include "rx.h"

/* A character: a Unicode scalar value from valid UTF-8, or RX_BAD + the byte for a byte that
 * starts no valid sequence. */
#define RX_BAD 0x110000u
#define RX_MAX_CLASSES 16

enum rx_op {
    RX_CHAR,   /* x: the character (folded when ignoring case) */
    RX_SET,    /* x: index into sets */
    RX_SPLIT,  /* out and out1 */
    RX_ASSERT, /* x: enum rx_assert */
    RX_MATCH,
};

enum rx_assert {
    RXA_BOL,  /* ^ \` */
    RXA_EOL,  /* $ \' */
    RXA_WORD, /* \b */
    RXA_NOTWORD,
    RXA_BEGIN, /* \< */
    RXA_END,   /* \> */
};

struct rx_state {
    uint8_t op;
    uint32_t x;
    int32_t out, out1;
};

struct rx_range {
    uint32_t lo, hi;
};

/* A bracket expression (or . \w \s): ASCII in a bitmap, the rest as ranges and classes. */
struct rx_set {
    uint32_t ascii[4];
    struct rx_range *ranges; /* owned */
    size_t n_ranges;
    wctype_t classes[RX_MAX_CLASSES]; /* asked only of characters past ASCII */
    size_t n_classes;
    bool negated;
    bool dot; /* . : the one set an encoded surrogate is in (glibc's way) */
};

struct rx {
    struct rx_state *st; /* owned */
    size_t n_st;
    int32_t start;
    struct rx_set *sets; /* owned */
    size_t n_sets;
    bool icase;
    /* The first bytes a match can start with, when no thread is alive: none of 0x80-0xbf, so
     * a byte found is where a character starts (rx_prepare_skip). */
    bool skip;
    uint32_t first[8];
};

/* The character at s[i] (i < n) and its length in bytes. */
uint32_t rx_decode(const unsigned char *s, size_t n, size_t i, size_t *len);
/* Case folding as the matcher does it (ASCII, then the locale's towlower). */
uint32_t rx_fold(uint32_t c);
/* Sets re->skip and re->first from the automaton. */
void rx_prepare_skip(struct rx *re);
/* The other way: ASCII, then the locale's towupper. */
uint32_t rx_upper(uint32_t c);
/* ASCII and the locale's classes: a word character (\w, \b). */
bool rx_is_word(uint32_t c);

#endif
