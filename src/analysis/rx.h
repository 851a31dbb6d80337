/*
 * rx: the filter's regex engine (`body:/x+y/`, docs/filter.md "Regexes"). POSIX extended
 * syntax, as glibc's regcomp reads it with REG_EXTENDED, compiled into a Thompson automaton
 * and run as a set of states per character, so a match costs at most the subject's length
 * times the automaton's size: no regex can run away on a hostile message, whatever its
 * length (glibc's regexec is quadratic in the subject for an unanchored search).
 *
 * What it reads: literals, ., [bracket expressions] (ranges, ^ negation, [:class:], [=c=],
 * [.c.]), ^ $ anywhere, (groups), |, * + ? {m} {m,} {m,n} {,n} (counts up to 255, stacked
 * repeats allowed; in a count \0 is the digit and \, the comma, as glibc reads them), the GNU
 * escapes \w \W \s \S \b \B \< \> \` \' and \c for any other c.
 *
 * Characters: the subject and the regex are read as UTF-8, one character a step. A byte that
 * does not start a valid UTF-8 sequence is a character of its own which only the same byte
 * written in the regex matches: not ., not a bracket expression, not even a negated one (in
 * a bracket such a byte matches nothing; as the end of a range it is refused). To \b \< \>
 * it is the Latin-1 letter of its value, as in glibc. NUL is a character that . does not
 * match (a negated bracket does). ^ and $ match only at the ends of the subject (glibc also
 * matched one inside a regex next to a newline the regex read: a\n^b), and with RX_ICASE
 * \d (any escaped letter) matches d or D (glibc's matched nothing). Ignoring
 * case folds ASCII letters, and others as the locale's towlower/towupper do, and reads a
 * range's ends in upper case (glibc's way: [+-z] is [+-Z]); [:class:] is POSIX for ASCII
 * and the locale's iswctype beyond.
 *
 * Ownership: rx_compile returns a new automaton, freed by rx_free. Errors: a message (static
 * text) and the byte offset in the source where it was found.
 */
#ifndef DLQX_RX_H
#define DLQX_RX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RX_MAX_STATES 10000 /* the filter's bound on an automaton (nested {255} blow it) */
#define RX_MAX_COUNT 255    /* the largest repeat count */

enum rx_flags {
    RX_ICASE = 1,
};

enum rx_error {
    RX_OK,
    RX_SYNTAX,    /* not a regex this engine reads */
    RX_TOO_LARGE, /* the automaton would have more than max_states states */
};

struct rx;

/* What the last match cost: the automaton's states visited and transitions tried. Bounded by
 * 2 x (characters + 1) x rx_states(re). */
struct rx_stats {
    uint64_t steps;
    size_t chars; /* characters of the subject read */
};

/* Compiles src[0..n) (NULs included). NULL on failure, with *why (static text) and *at (byte
 * offset into src) when given. */
struct rx *rx_compile(const char *src, size_t n, int flags, size_t max_states, enum rx_error *code,
                      const char **why, size_t *at);

/* Whether re matches anywhere in s[0..n); st (optional) gets what it cost. */
bool rx_match(const struct rx *re, const char *s, size_t n, struct rx_stats *st);

/* The automaton's states. */
size_t rx_states(const struct rx *re);

void rx_free(struct rx *re);

#endif
