/*
 * filter_internal: the types the filter's files share (terms, the tree of nodes, the compiled
 * filter and its memo) and the helpers they call across files. Only filter*.c include it;
 * everything outside sees the opaque struct filter of filter.h.
 */
#ifndef DLQX_FILTER_INTERNAL_H
#define DLQX_FILTER_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "filter.h"
#include "rx.h"

enum fkind { FK_TEXT, FK_NUMBER, FK_DURATION, FK_TIME, FK_SIZE, FK_HEADER, FK_BODY };

enum field {
    F_ID,
    F_TYPE,
    F_CORR,
    F_CAUSE,
    F_QUEUE,
    F_ERROR,
    F_DIALECT,
    F_ORIGIN,
    F_REASON,
    F_FP,
    F_GROUP,
    F_ATTEMPT,
    F_AGE,
    F_SIZE,
    F_FIRST_SEEN,
    F_EXCEPTION,
    F_FAILED_AT,
    F_HEADER,
    F_BODY,
    F_COUNT,
    F_ANY = F_COUNT, /* a bare word */
};

struct field_info {
    const char *name, *alias;
    enum fkind kind;
    bool message; /* needs the message itself */
    bool ci;      /* `:` globs ignore case */
};

/* The fields by enum field (defined in filter.c). */
extern const struct field_info filter_fields[F_COUNT];

enum op { OP_GLOB, OP_SUB, OP_RE, OP_EQ, OP_NE, OP_GT, OP_GE, OP_LT, OP_LE };
/* Each operator as written, by enum op (defined in filter.c). */
extern const char *const filter_op_text[];

struct term {
    enum field field;
    enum op op;
    bool icase;
    bool wrap;    /* the glob matches anywhere (bare words, body) */
    char *header; /* F_HEADER: the name */
    size_t header_len;
    char *text; /* the value, unescaped */
    size_t len;
    char *glob; /* the value as a glob: wildcards bare, literal * ? \ escaped */
    size_t glob_len;
    bool has_re;
    struct rx *re;         /* owned */
    bool has_num, num_int; /* a numeric value (attempt, size, header) */
    int64_t num;
    double dnum;
    int64_t ms;    /* age, first_seen */
    bool relative; /* first_seen written as a duration ago */
    uint32_t id;   /* for the memo */
};

enum nkind { N_TERM, N_AND, N_OR, N_NOT };

struct node {
    enum nkind kind;
    struct node **kids; /* as written (for describing) */
    size_t n;
    struct node **run; /* the same, cheapest first (for evaluating) */
    int cost;
    struct term *t;
};

/* Results of the costly terms (regexes, fingerprints) by a hash of the text they saw: the
 * errors of a million dead letters are a few thousand distinct texts. It grows to MEMO_MAX
 * slots (filter_eval.c), then starts over. */
struct memo_slot {
    uint64_t key; /* 0: empty */
    bool value;
};

struct memo {
    struct memo_slot *slot;
    size_t mask, used;
};

struct filter {
    struct node *root; /* NULL: everything */
    bool needs_message, needs_memo;
    uint32_t n_terms;
    char *scratch;     /* STORE_TEXT_MAX bytes for the texts of an entry */
    struct memo *memo; /* when a term needs it */
};

/* ---- small text helpers (filter_text.c; ASCII case folding: no locale) ---- */

static inline unsigned char filter_lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

static inline bool filter_is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* a[0..n) equals the string b, ignoring ASCII case. */
bool filter_ci_eq(const char *a, size_t n, const char *b);
/* s[0..n) contains p[0..m), ignoring ASCII case. */
bool filter_ci_contains(const char *s, size_t n, const char *p, size_t m);
/* The glob p (* any run, ? one character, \c the character c) matches all of s; ci ignores
 * ASCII case. */
bool filter_glob_match(const char *p, size_t pn, const char *s, size_t sn, bool ci);
/* The glob has a bare * or ?. */
bool filter_has_wildcard(const char *g, size_t n);
uint64_t filter_hash64(const void *p, size_t n, uint64_t seed);

/* ---- numbers, sizes and times (filter_text.c; durations: filter_parse_duration) ---- */

bool filter_parse_int(const char *s, size_t n, int64_t *out);
/* A decimal number (integer or with a fraction; no exponent, no inf/nan). */
bool filter_parse_number(const char *s, size_t n, double *d, int64_t *i, bool *is_int);
/* Bytes, or with a unit: 10k, 2MB, 1GiB. */
bool filter_parse_size(const char *s, size_t n, int64_t *out);
/* RFC 3339, or a UTC date with an optional time of day (2026-01-02, 2026-01-02T03:04). */
bool filter_parse_time(const char *s, size_t n, int64_t *ms);

/* ---- the parser's state, for filter.c and filter_hint.c ---- */

/* The state of one compile (filter.c). */
struct parser {
    const char *s;
    size_t pos, n;
    int depth;
    struct filter *f;
    struct error *err;
    size_t err_at; /* byte offset of the problem */
    bool failed;
    bool hints; /* look for typos (not while checking a suggestion) */
};

/* The parser's error, with a hint in parentheses after the column: always false. */
bool filter_fail_hint(struct parser *p, size_t at, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Text from the expression for an error message: controls escaped, cut at 40 bytes. */
void filter_quote_for_error(const char *s, size_t n, char *out, size_t cap);
/* Where a value read at from ends (quoted or bare, as the parser reads one); from when none
 * can be read there. Nothing is reported. */
size_t filter_value_end(const struct parser *p, size_t from);
/* filter_compile_at; hints false: no typos are looked for (checking a suggestion). */
enum status filter_compile_hints(const char *expr, struct filter **out, size_t *column,
                                 struct error *err, bool hints);

/* ---- did you mean (filter_hint.c) ---- */

/* Edit distance of a[0..n) (ASCII case folded) to b; 99 for names over 30 bytes. */
size_t filter_edit_distance(const char *a, size_t n, const char *b);
/* The field (enum field) whose name or alias is nearest to name[0..n), within max edits (one
 * for names of three letters or fewer); -1 when none is. */
int filter_near_field(const char *name, size_t n, size_t max);

/* A bare word (as written, w[0..n)) that reads as a field with a mistyped operator. */
struct word_typo {
    enum field field; /* F_HEADER for header.NAME */
    size_t name_len;  /* the field as written: w[0..name_len) */
    size_t op_len;    /* the mistyped operator after it */
    const char *op;   /* the operator it stands for: ":~" for ~, ":" for ;, "!=" for ! ... */
    bool near;        /* the name itself is a typo of the field's (by one edit) */
    bool sure;        /* ~ and ; : a typo even when the form meant does not compile */
};
/* Whether w reads as FIELD TYPO ...: `error~x`, `type;x`, `header.t~a`, `eror~x`, `type!x`,
 * `attempt.3` (the > key unshifted; `.` and `,` on number, age, size and time fields only). */
bool filter_word_typo(const char *w, size_t n, struct word_typo *out);
/* The operator meant by a run of operator characters that is not one (`=>` is >=, `>>` is >,
 * `=~` is :~ ...), or NULL. */
const char *filter_op_typo(const char *run, size_t n);

/* The parser's refusals that come with a suggestion (filter_hint.c); each returns false after
 * reporting, true when there is nothing to refuse. An unknown field at..at+n: the nearest
 * name, with the whole term when it then compiles ("did you mean type:x?"). */
bool filter_unknown_field(struct parser *p, size_t at, const char *name, size_t n);
/* A bare word at start..end that reads as a field with a mistyped operator. */
bool filter_check_word(struct parser *p, size_t start, size_t end);
/* After the field at start and its operator at op_at (p->pos past it): more operator
 * characters that make a mistyped operator. */
bool filter_check_op(struct parser *p, size_t start, size_t op_at);

/* ---- evaluation order (filter_eval.c) ---- */

/* Sets the cost of nd and its kids and their run order (cheapest first); returns the cost. */
int filter_plan(struct node *nd);

#endif
