/*
 * filter: a recursive-descent parser for the filter language into a small tree of AND, OR and
 * NOT over terms, the terms' matchers (globs, substrings, POSIX regexes, numbers, durations,
 * times) and the evaluation against a store entry or a message. docs/filter.md is the
 * reference for the language; this file's comments say why, not what.
 */
#include "filter.h"

#include <limits.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups.h"
#include "hval_json.h"

#define MAX_DEPTH 64     /* parentheses and negations: recursion is bounded */
#define MAX_REGEX 512    /* bytes of a regex's source */
#define MEMO_MAX (1u << 20) /* remembered regex and fingerprint results */

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
    F_ATTEMPT,
    F_AGE,
    F_SIZE,
    F_FIRST_SEEN,
    F_HEADER,
    F_BODY,
    F_COUNT,
    F_ANY = F_COUNT, /* a bare word */
};

static const struct field_info {
    const char *name, *alias;
    enum fkind kind;
    bool message; /* needs the message itself */
    bool ci;      /* `:` globs ignore case */
} fields[F_COUNT] = {
    [F_ID] = {"id", NULL, FK_TEXT, false, false},
    [F_TYPE] = {"type", NULL, FK_TEXT, false, true},
    [F_CORR] = {"correlation", "corr", FK_TEXT, false, false},
    [F_CAUSE] = {"causation", "cause", FK_TEXT, false, false},
    [F_QUEUE] = {"queue", NULL, FK_TEXT, false, true},
    [F_ERROR] = {"error", "err", FK_TEXT, false, true},
    [F_DIALECT] = {"dialect", NULL, FK_TEXT, false, true},
    [F_ORIGIN] = {"origin", NULL, FK_TEXT, true, true},
    [F_REASON] = {"reason", NULL, FK_TEXT, false, true},
    [F_FP] = {"fp", "fingerprint", FK_TEXT, false, true},
    [F_ATTEMPT] = {"attempt", "attempts", FK_NUMBER, false, false},
    [F_AGE] = {"age", NULL, FK_DURATION, false, false},
    [F_SIZE] = {"size", NULL, FK_SIZE, false, false},
    [F_FIRST_SEEN] = {"first_seen", "first-seen", FK_TIME, false, false},
    [F_HEADER] = {"header", NULL, FK_HEADER, true, true},
    [F_BODY] = {"body", NULL, FK_BODY, true, true},
};

enum op { OP_GLOB, OP_SUB, OP_RE, OP_EQ, OP_NE, OP_GT, OP_GE, OP_LT, OP_LE };
static const char *const op_text[] = {":", ":~", ":", "=", "!=", ">", ">=", "<", "<="};

struct term {
    enum field field;
    enum op op;
    bool icase;
    bool wrap;          /* the glob matches anywhere (bare words, body) */
    char *header;       /* F_HEADER: the name */
    size_t header_len;
    char *text;         /* the value, unescaped */
    size_t len;
    char *glob;         /* the value as a glob: wildcards bare, literal * ? \ escaped */
    size_t glob_len;
    bool has_re;
    regex_t re;
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
    struct node **run;  /* the same, cheapest first (for evaluating) */
    int cost;
    struct term *t;
};

/* Results of the costly terms (regexes, fingerprints) by a hash of the text they saw: the
 * errors of a million dead letters are a few thousand distinct texts. It grows to MEMO_MAX
 * slots, then starts over. */
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
    char *scratch;      /* STORE_TEXT_MAX bytes for the texts of an entry */
    struct memo *memo;  /* when a term needs it */
};

/* ---- small text helpers (ASCII case folding: no locale) ---- */

static inline unsigned char lower(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

static bool ci_eq(const char *a, size_t n, const char *b)
{
    size_t m = strlen(b);
    if (n != m)
        return false;
    for (size_t i = 0; i < n; i++)
        if (lower((unsigned char)a[i]) != lower((unsigned char)b[i]))
            return false;
    return true;
}

static bool ci_contains(const char *s, size_t n, const char *p, size_t m)
{
    if (m == 0)
        return true;
    if (m > n)
        return false;
    unsigned char f = lower((unsigned char)p[0]);
    for (size_t i = 0; i + m <= n; i++) {
        if (lower((unsigned char)s[i]) != f)
            continue;
        size_t k = 1;
        while (k < m && lower((unsigned char)s[i + k]) == lower((unsigned char)p[k]))
            k++;
        if (k == m)
            return true;
    }
    return false;
}

static size_t utf8_step(const char *s, size_t i, size_t n)
{
    size_t j = i + 1;
    if ((unsigned char)s[i] >= 0xc0)
        while (j < n && j < i + 4 && ((unsigned char)s[j] & 0xc0) == 0x80)
            j++;
    return j;
}

/* Globs: * any run, ? one character, \c the character c. Iterative with one backtrack point,
 * so any pattern runs in O(len(pattern) * len(text)). */
static bool glob_match(const char *p, size_t pn, const char *s, size_t sn, bool ci)
{
    size_t pi = 0, si = 0, star_p = SIZE_MAX, star_s = 0;
    while (si < sn) {
        if (pi < pn && p[pi] == '*') {
            star_p = ++pi;
            star_s = si;
            continue;
        }
        if (pi < pn && p[pi] == '?') {
            pi++;
            si = utf8_step(s, si, sn);
            continue;
        }
        if (pi < pn) {
            size_t q = pi;
            if (p[q] == '\\' && q + 1 < pn)
                q++;
            unsigned char a = (unsigned char)p[q], b = (unsigned char)s[si];
            if (ci ? lower(a) == lower(b) : a == b) {
                pi = q + 1;
                si++;
                continue;
            }
        }
        if (star_p == SIZE_MAX)
            return false;
        pi = star_p;
        si = ++star_s;
    }
    while (pi < pn && p[pi] == '*')
        pi++;
    return pi == pn;
}

static bool has_wildcard(const char *g, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (g[i] == '\\')
            i++;
        else if (g[i] == '*' || g[i] == '?')
            return true;
    }
    return false;
}

static uint64_t hash64(const void *p, size_t n, uint64_t seed)
{
    const unsigned char *s = p;
    uint64_t h = 1469598103934665603ULL ^ seed;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 1099511628211ULL;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdULL;
    return h ^ (h >> 33);
}

/* ---- numbers, durations, sizes, times ---- */

static bool parse_int(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    bool neg = false;
    if (i < n && (s[i] == '-' || s[i] == '+'))
        neg = s[i++] == '-';
    if (i == n)
        return false;
    uint64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > ((uint64_t)INT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    *out = neg ? -(int64_t)v : (int64_t)v;
    return true;
}

/* A decimal number (integer or with a fraction; no exponent, no inf/nan). */
static bool parse_number(const char *s, size_t n, double *d, int64_t *i, bool *is_int)
{
    if (parse_int(s, n, i)) {
        *is_int = true;
        *d = (double)*i;
        return true;
    }
    if (n == 0 || n > 64)
        return false;
    char buf[72];
    size_t digits = 0, dots = 0;
    for (size_t k = 0; k < n; k++) {
        if (s[k] >= '0' && s[k] <= '9')
            digits++;
        else if (s[k] == '.')
            dots++;
        else if (!(k == 0 && (s[k] == '-' || s[k] == '+')))
            return false;
    }
    if (!digits || dots != 1)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    *d = strtod(buf, NULL);
    *is_int = false;
    return true;
}

bool filter_parse_duration(const char *s, size_t n, int64_t *ms)
{
    static const struct {
        const char *u;
        int64_t ms;
    } units[] = {{"ms", 1},        {"s", 1000},      {"m", 60000},
                 {"h", 3600000},   {"d", 86400000},  {"w", 604800000}};
    if (n == 0)
        return false;
    int64_t total = 0;
    size_t i = 0;
    while (i < n) {
        size_t d0 = i;
        int64_t v = 0;
        while (i < n && s[i] >= '0' && s[i] <= '9') {
            if (v > (INT64_MAX - 9) / 10)
                return false;
            v = v * 10 + (s[i++] - '0');
        }
        size_t u0 = i;
        while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
            i++;
        if (i == d0 || u0 == d0)
            return false;
        int64_t mul = -1;
        if (u0 == i && i == n && total == 0)
            mul = 1000; /* a bare number is seconds */
        for (size_t k = 0; k < sizeof units / sizeof *units; k++)
            if (ci_eq(s + u0, i - u0, units[k].u))
                mul = units[k].ms;
        if (mul < 0 || v > (INT64_MAX - total) / mul)
            return false;
        total += v * mul;
    }
    *ms = total;
    return true;
}

static bool parse_size(const char *s, size_t n, int64_t *out)
{
    size_t i = 0;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    int64_t v;
    if (i == 0 || !parse_int(s, i, &v))
        return false;
    static const struct {
        const char *u;
        int64_t mul;
    } units[] = {{"", 1},          {"b", 1},          {"k", 1024},          {"kb", 1024},
                 {"kib", 1024},    {"m", 1048576},    {"mb", 1048576},      {"mib", 1048576},
                 {"g", 1073741824}, {"gb", 1073741824}, {"gib", 1073741824}};
    for (size_t k = 0; k < sizeof units / sizeof *units; k++) {
        if (ci_eq(s + i, n - i, units[k].u)) {
            if (v > INT64_MAX / units[k].mul)
                return false;
            *out = v * units[k].mul;
            return true;
        }
    }
    return false;
}

static bool parse_time(const char *s, size_t n, int64_t *ms)
{
    if (time_parse_rfc3339(s, n, ms))
        return true;
    if (n == 10 || n == 16 || n == 19) { /* 2026-01-02, 2026-01-02T03:04, …T03:04:05 (UTC) */
        char buf[32];
        static const char *const tail[] = {"T00:00:00Z", ":00Z", "Z"};
        const char *t = tail[n == 10 ? 0 : n == 16 ? 1 : 2];
        snprintf(buf, sizeof buf, "%.*s%s", (int)n, s, t);
        return time_parse_rfc3339(buf, strlen(buf), ms);
    }
    return false;
}

/* ---- parsing ---- */

struct parser {
    const char *s;
    size_t pos, n;
    int depth;
    struct filter *f;
    struct error *err;
    size_t err_at; /* byte offset of the problem */
    bool failed;
};

static size_t column_of(const char *s, size_t off)
{
    size_t col = 1;
    for (size_t i = 0; i < off; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            col++;
    return col;
}

/* Text from the expression, for an error message: controls escaped, cut at 40 bytes. */
static void quote_for_error(const char *s, size_t n, char *out, size_t cap)
{
    size_t w = 0;
    for (size_t i = 0; i < n && w + 5 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (i >= 40) {
            w += (size_t)snprintf(out + w, cap - w, "…");
            break;
        }
        if (c < 0x20 || c == 0x7f)
            w += (size_t)snprintf(out + w, cap - w, "\\x%02x", c);
        else
            out[w++] = (char)c;
    }
    out[w < cap ? w : cap - 1] = '\0';
}

static bool fail_at(struct parser *p, size_t at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool fail_at(struct parser *p, size_t at, const char *fmt, ...)
{
    if (p->failed)
        return false;
    p->failed = true;
    p->err_at = at;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    error_set(p->err, ST_EPARSE, "%s at column %zu", msg, column_of(p->s, at));
    return false;
}

/* Error messages quote the text in parentheses after the column where it helps, so the
 * column stays next to the problem: "unknown field "x" at column 1 (did you mean type?)". */
static bool fail_hint(struct parser *p, size_t at, const char *hint, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static bool fail_hint(struct parser *p, size_t at, const char *hint, const char *fmt, ...)
{
    if (p->failed)
        return false;
    p->failed = true;
    p->err_at = at;
    char msg[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    error_set(p->err, ST_EPARSE, "%s at column %zu (%s)", msg, column_of(p->s, at), hint);
    return false;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

static void skip_ws(struct parser *p)
{
    while (p->pos < p->n && is_space(p->s[p->pos]))
        p->pos++;
}

static bool at_boundary(const struct parser *p, size_t at)
{
    return at >= p->n || is_space(p->s[at]) || p->s[at] == '(' || p->s[at] == ')';
}

static bool keyword(const struct parser *p, const char *kw)
{
    size_t k = strlen(kw);
    return p->pos + k <= p->n && memcmp(p->s + p->pos, kw, k) == 0 && at_boundary(p, p->pos + k);
}

static bool op_char(const struct parser *p, size_t i)
{
    char c = p->s[i];
    return c == ':' || c == '=' || c == '<' || c == '>' ||
           (c == '!' && i + 1 < p->n && p->s[i + 1] == '=');
}

static char unescape(char c)
{
    return c == 'n' ? '\n' : c == 't' ? '\t' : c == 'r' ? '\r' : c;
}

/* Reads a value (quoted, or up to a space or an unbalanced ')') into text and glob forms. */
static bool read_value(struct parser *p, struct strbuf *text, struct strbuf *glob, bool name)
{
    size_t start = p->pos;
    bool quoted = p->pos < p->n && p->s[p->pos] == '"';
    if (quoted)
        p->pos++;
    int parens = 0;
    while (p->pos < p->n) {
        char c = p->s[p->pos];
        if (quoted && c == '"')
            break;
        if (!quoted && (is_space(c) || c == '"' || (c == ')' && parens == 0)))
            break;
        if (c == '\\' && p->pos + 1 < p->n) {
            char e = p->s[++p->pos];
            sb_addc(text, unescape(e));
            if (e == '*' || e == '?' || e == '\\')
                sb_addc(glob, '\\');
            sb_addc(glob, unescape(e));
            p->pos++;
            continue;
        }
        if (!quoted)
            parens += c == '(' ? 1 : c == ')' ? -1 : 0;
        if (c == '\\')
            sb_addc(glob, '\\'); /* a backslash at the very end is itself */
        sb_addc(text, c);
        sb_addc(glob, c);
        p->pos++;
    }
    if (quoted) {
        if (p->pos >= p->n)
            return fail_at(p, start, "unterminated quote");
        p->pos++;
        if (!at_boundary(p, p->pos) && !(name && op_char(p, p->pos)))
            return fail_at(p, p->pos, "expected a space after the closing quote");
    }
    return true;
}

static bool read_regex(struct parser *p, struct term *t, const char *what)
{
    size_t start = p->pos++; /* the opening / */
    struct strbuf src;
    sb_init(&src);
    while (p->pos < p->n && p->s[p->pos] != '/') {
        char c = p->s[p->pos];
        if (c == '\\' && p->pos + 1 < p->n) {
            char e = p->s[p->pos + 1];
            if (e >= '1' && e <= '9') {
                sb_free(&src);
                return fail_at(p, p->pos, "back-references are not supported in a regex");
            }
            if (e != '/')
                sb_addc(&src, '\\');
            sb_addc(&src, e);
            p->pos += 2;
            continue;
        }
        if (c == '{') { /* bounds: big ones make regcomp build huge automata */
            size_t k = p->pos + 1;
            long v = 0;
            while (k < p->n && ((p->s[k] >= '0' && p->s[k] <= '9') || p->s[k] == ',')) {
                v = p->s[k] == ',' ? 0 : v * 10 + (p->s[k] - '0');
                if (v > 255) {
                    sb_free(&src);
                    return fail_at(p, p->pos, "a regex repeat count over 255");
                }
                k++;
            }
        }
        sb_addc(&src, c);
        p->pos++;
    }
    if (p->pos >= p->n) {
        sb_free(&src);
        return fail_at(p, start, "unterminated regex after %s (close it with /)", what);
    }
    p->pos++;
    while (p->pos < p->n && !at_boundary(p, p->pos)) {
        if (p->s[p->pos] != 'i') {
            sb_free(&src);
            return fail_hint(p, p->pos, "only i, ignore case, is known", "unknown regex flag %c",
                             p->s[p->pos] >= 0x20 && p->s[p->pos] < 0x7f ? p->s[p->pos] : '?');
        }
        t->icase = true;
        p->pos++;
    }
    if (src.len == 0 || src.len > MAX_REGEX) {
        bool empty = src.len == 0;
        sb_free(&src);
        if (empty)
            return fail_at(p, start, "an empty regex after %s", what);
        return fail_at(p, start, "a regex longer than %d bytes", MAX_REGEX);
    }
    int rc = regcomp(&t->re, src.buf, REG_EXTENDED | REG_NOSUB | (t->icase ? REG_ICASE : 0));
    if (rc != 0) {
        char msg[160];
        regerror(rc, &t->re, msg, sizeof msg);
        regfree(&t->re);
        sb_free(&src);
        return fail_at(p, start, "invalid regex: %s", msg);
    }
    t->has_re = true;
    t->text = sb_detach(&src, &t->len);
    return true;
}

static size_t edit_distance(const char *a, size_t n, const char *b)
{
    size_t m = strlen(b), row[32];
    if (n >= 31 || m >= 31)
        return 99;
    for (size_t j = 0; j <= m; j++)
        row[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t up = row[j];
            size_t cost = lower((unsigned char)a[i - 1]) == (unsigned char)b[j - 1] ? 0 : 1;
            size_t best = diag + cost;
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[m];
}

static bool unknown_field(struct parser *p, size_t at, const char *name, size_t n)
{
    char shown[200];
    quote_for_error(name, n, shown, sizeof shown);
    const char *best = NULL;
    size_t best_d = 3;
    const char *dot = memchr(name, '.', n);
    if (dot && edit_distance(name, (size_t)(dot - name), "header") <= 2)
        return fail_hint(p, at, "did you mean header.NAME?", "unknown field \"%s\"", shown);
    for (int k = 0; k < F_COUNT; k++) {
        const char *cand[2] = {fields[k].name, fields[k].alias};
        for (int c = 0; c < 2; c++) {
            size_t d = cand[c] ? edit_distance(name, n, cand[c]) : 99;
            if (d < best_d && d <= (cand[c] && strlen(cand[c]) <= 3 ? 1u : 2u)) {
                best_d = d;
                best = fields[k].name;
            }
        }
    }
    char hint[300];
    if (best)
        snprintf(hint, sizeof hint, "did you mean %s?", best);
    else
        snprintf(hint, sizeof hint, "to search for the text itself, put it in \"quotes\"");
    return fail_hint(p, at, hint, "unknown field \"%s\"", shown);
}

static struct node *new_node(enum nkind k)
{
    struct node *nd = xcalloc(1, sizeof *nd);
    nd->kind = k;
    return nd;
}

static void node_add(struct node *nd, struct node *kid)
{
    /* Same-kind children are flattened: (a b) c is a b c. */
    if (kid->kind == nd->kind && kid->kind != N_TERM && kid->kind != N_NOT) {
        for (size_t i = 0; i < kid->n; i++)
            node_add(nd, kid->kids[i]);
        free(kid->kids);
        free(kid);
        return;
    }
    nd->kids = xrealloc(nd->kids, (nd->n + 1) * sizeof *nd->kids);
    nd->kids[nd->n++] = kid;
}

static void term_free(struct term *t)
{
    if (!t)
        return;
    if (t->has_re)
        regfree(&t->re);
    free(t->header);
    free(t->text);
    free(t->glob);
    free(t);
}

static void node_free(struct node *nd)
{
    if (!nd)
        return;
    for (size_t i = 0; i < nd->n; i++)
        node_free(nd->kids[i]);
    free(nd->kids);
    free(nd->run);
    term_free(nd->t);
    free(nd);
}

static const char *field_label(const struct term *t, char *buf, size_t cap)
{
    if (t->field == F_HEADER) {
        char shown[200];
        quote_for_error(t->header, t->header_len, shown, sizeof shown);
        snprintf(buf, cap, "header.%s%s", shown, op_text[t->op]);
    } else {
        snprintf(buf, cap, "%s%s", fields[t->field].name, op_text[t->op]);
    }
    return buf;
}

/* Whether the operator works on the field at all; checked before the value is read. */
static bool term_op_ok(struct parser *p, const struct term *t, size_t op_at)
{
    enum fkind k = fields[t->field].kind;
    if ((k == FK_TEXT || k == FK_BODY) && t->op >= OP_GT)
        return fail_hint(p, op_at, "> >= < <= work on attempt, age, size, first_seen and header.NAME",
                         "%s is text", fields[t->field].name);
    if (k != FK_TEXT && k != FK_BODY && k != FK_HEADER && (t->op == OP_SUB || t->op == OP_RE))
        return fail_hint(p, op_at, "use = != > >= < <=", "%s is a number",
                         fields[t->field].name);
    return true;
}

/* Reads the value's meaning for the field (numbers, durations, times, dialects). */
static bool term_value(struct parser *p, struct term *t, size_t vat)
{
    char label[240];
    field_label(t, label, sizeof label);
    enum fkind k = fields[t->field].kind;
    if ((k == FK_NUMBER || k == FK_SIZE || k == FK_DURATION || k == FK_TIME) && t->op == OP_GLOB)
        t->op = OP_EQ; /* attempt:3 is attempt=3 */
    switch (k) {
    case FK_NUMBER:
        if (!parse_int(t->text, t->len, &t->num))
            return fail_at(p, vat, "expected a number after %s", label);
        break;
    case FK_SIZE:
        if (!parse_size(t->text, t->len, &t->num))
            return fail_hint(p, vat, "bytes, or with a unit: 10k, 2MB", "expected a size after %s",
                             label);
        break;
    case FK_DURATION:
        if (!filter_parse_duration(t->text, t->len, &t->ms))
            return fail_hint(p, vat, "30s, 5m, 1h, 2d, 1w", "expected a duration after %s",
                             label);
        break;
    case FK_TIME:
        if (parse_time(t->text, t->len, &t->ms))
            break;
        if (filter_parse_duration(t->text, t->len, &t->ms)) {
            t->relative = true;
            break;
        }
        return fail_hint(p, vat, "2026-01-02T03:00:00Z, 2026-01-02, or a time ago like 1h",
                         "expected a time after %s", label);
    case FK_HEADER:
        if (t->op != OP_RE && t->op != OP_SUB && t->op != OP_GLOB)
            t->has_num = parse_number(t->text, t->len, &t->dnum, &t->num, &t->num_int);
        if (t->op >= OP_GT && !t->has_num)
            return fail_at(p, vat, "expected a number after %s", label);
        break;
    default:
        break;
    }
    if (t->field == F_DIALECT && t->op != OP_SUB && t->op != OP_RE &&
        !has_wildcard(t->glob, t->glob_len) && !ci_eq(t->text, t->len, "amqp") &&
        !ci_eq(t->text, t->len, "acemq") && !ci_eq(t->text, t->len, "babelqueue"))
    {
        char shown[200];
        quote_for_error(t->text, t->len, shown, sizeof shown);
        return fail_hint(p, vat, "amqp, acemq or babelqueue", "unknown dialect \"%s\"", shown);
    }
    return true;
}

/* The glob as matched: bare words and body globs match anywhere (*glob*). */
static void wrap_glob(struct term *t)
{
    char *g = xmalloc(t->glob_len + 3);
    g[0] = '*';
    memcpy(g + 1, t->glob, t->glob_len);
    g[t->glob_len + 1] = '*';
    g[t->glob_len + 2] = '\0';
    free(t->glob);
    t->glob = g;
    t->glob_len += 2;
    t->wrap = true;
}

static struct node *parse_or(struct parser *p);

static struct node *parse_term(struct parser *p)
{
    struct term *t = xcalloc(1, sizeof *t);
    t->id = p->f->n_terms++;
    struct strbuf text, glob;
    sb_init(&text);
    sb_init(&glob);
    size_t start = p->pos, name_end = p->pos;
    while (name_end < p->n && !at_boundary(p, name_end) && p->s[name_end] != '"' &&
           !op_char(p, name_end))
        name_end += p->s[name_end] == '\\' && name_end + 1 < p->n ? 2 : 1;
    bool header_quoted = name_end - start == 7 && name_end < p->n && p->s[name_end] == '"' &&
                         ci_eq(p->s + start, 7, "header.");
    if (p->s[start] == '"' || (!header_quoted && (name_end >= p->n || !op_char(p, name_end)))) {
        /* A bare word: a substring (or a glob) of id, type, error or queue. */
        t->field = F_ANY;
        if (!read_value(p, &text, &glob, false))
            goto fail;
        if (!text.len) {
            fail_at(p, start, "an empty search");
            goto fail;
        }
        t->text = sb_detach(&text, &t->len);
        t->glob = sb_detach(&glob, &t->glob_len);
        t->icase = true;
        t->op = OP_SUB;
        if (has_wildcard(t->glob, t->glob_len)) {
            t->op = OP_GLOB;
            wrap_glob(t);
        }
        goto done;
    }
    size_t nlen = name_end - start;
    const char *name = p->s + start;
    if (nlen == 0) {
        fail_at(p, start, "expected a field name before %c", p->s[start]);
        goto fail;
    }
    if (nlen > 7 && ci_eq(name, 7, "header.")) {
        t->field = F_HEADER;
        for (size_t k = 7; k < nlen; k++) /* header.a\:b is the header a:b */
            sb_addc(&text, name[k] == '\\' && k + 1 < nlen ? unescape(name[++k]) : name[k]);
        t->header = sb_detach(&text, &t->header_len);
    } else if (header_quoted) {
        t->field = F_HEADER;
        p->pos = name_end;
        if (!read_value(p, &text, &glob, true))
            goto fail;
        t->header = sb_detach(&text, &t->header_len);
        sb_reset(&glob);
        name_end = p->pos;
        if (name_end >= p->n || !op_char(p, name_end)) {
            fail_hint(p, name_end, "one of : = != > >= < <=",
                      "expected an operator after the header name");
            goto fail;
        }
    } else {
        int k;
        for (k = 0; k < F_COUNT; k++)
            if (ci_eq(name, nlen, fields[k].name) ||
                (fields[k].alias && ci_eq(name, nlen, fields[k].alias)))
                break;
        if (k == F_HEADER || ci_eq(name, nlen, "header.")) {
            fail_hint(p, start, "header.NAME, with the header's name", "expected a header name");
            goto fail;
        }
        if (k == F_COUNT) {
            unknown_field(p, start, name, nlen);
            goto fail;
        }
        t->field = (enum field)k;
    }
    /* The operator. */
    size_t op_at = name_end;
    p->pos = name_end;
    char c = p->s[p->pos++];
    if (c == ':') {
        t->op = OP_GLOB;
        if (p->pos < p->n && p->s[p->pos] == '~') {
            t->op = OP_SUB;
            p->pos++;
        } else if (p->pos < p->n && p->s[p->pos] == '/') {
            t->op = OP_RE;
        }
    } else if (c == '=') {
        t->op = OP_EQ;
        if (p->pos < p->n && p->s[p->pos] == '=')
            p->pos++; /* == reads as = */
    } else if (c == '!') {
        t->op = OP_NE;
        p->pos++;
    } else {
        bool eq = p->pos < p->n && p->s[p->pos] == '=';
        t->op = c == '>' ? (eq ? OP_GE : OP_GT) : (eq ? OP_LE : OP_LT);
        p->pos += eq;
    }
    if (!term_op_ok(p, t, op_at))
        goto fail;
    char label[240];
    field_label(t, label, sizeof label);
    if (t->op == OP_RE) {
        if (!read_regex(p, t, label))
            goto fail;
        goto done;
    }
    size_t vat = p->pos;
    bool quoted = vat < p->n && p->s[vat] == '"';
    if (!read_value(p, &text, &glob, false))
        goto fail;
    if (!text.len && !quoted) {
        fail_hint(p, vat, "use \"\" for an empty value", "expected a value after %s", label);
        goto fail;
    }
    t->text = sb_detach(&text, &t->len);
    t->glob = sb_detach(&glob, &t->glob_len);
    if (!term_value(p, t, vat))
        goto fail;
    t->icase = (t->op == OP_GLOB && fields[t->field].ci) || t->op == OP_SUB;
    if (t->field == F_BODY && t->op == OP_GLOB)
        wrap_glob(t);
done:
    sb_free(&text);
    sb_free(&glob);
    if (t->field != F_ANY && fields[t->field].message)
        p->f->needs_message = true;
    if (t->has_re || t->field == F_FP)
        p->f->needs_memo = true;
    struct node *nd = new_node(N_TERM);
    nd->t = t;
    return nd;
fail:
    sb_free(&text);
    sb_free(&glob);
    term_free(t);
    return NULL;
}
static struct node *parse_unary(struct parser *p)
{
    skip_ws(p);
    if (p->pos >= p->n)
        return NULL;
    if (++p->depth > MAX_DEPTH) {
        fail_at(p, p->pos, "nested more than %d deep", MAX_DEPTH);
        return NULL;
    }
    struct node *r = NULL;
    size_t at = p->pos;
    bool minus = p->s[at] == '-' && at + 1 < p->n && !is_space(p->s[at + 1]);
    if (minus || keyword(p, "NOT")) {
        p->pos += minus ? 1 : 3;
        struct node *kid = parse_unary(p);
        if (!kid) {
            fail_at(p, p->pos, "expected a term after %s", minus ? "-" : "NOT");
        } else {
            r = new_node(N_NOT);
            node_add(r, kid);
        }
    } else if (p->s[at] == '(') {
        p->pos++;
        r = parse_or(p);
        skip_ws(p);
        if (!r && !p->failed)
            fail_at(p, at, "empty parentheses");
        else if (r && (p->pos >= p->n || p->s[p->pos] != ')'))
            fail_at(p, at, "this ( is never closed");
        else
            p->pos++;
    } else if (p->s[at] == ')') {
        fail_at(p, at, "unexpected )");
    } else if (keyword(p, "OR") || keyword(p, "AND")) {
        fail_at(p, at, "expected a term before %s", p->s[at] == 'O' ? "OR" : "AND");
    } else {
        r = parse_term(p);
    }
    p->depth--;
    if (p->failed) {
        node_free(r);
        return NULL;
    }
    return r;
}

static struct node *parse_and(struct parser *p)
{
    struct node *all = NULL, *first = NULL;
    for (;;) {
        skip_ws(p);
        if (p->pos >= p->n || p->s[p->pos] == ')' || keyword(p, "OR"))
            break;
        if (keyword(p, "AND")) {
            size_t at = p->pos;
            if (!first) {
                fail_at(p, at, "expected a term before AND");
                break;
            }
            p->pos += 3;
            skip_ws(p);
            if (p->pos >= p->n || p->s[p->pos] == ')' || keyword(p, "OR") || keyword(p, "AND")) {
                fail_at(p, p->pos, "expected a term after AND");
                break;
            }
        }
        struct node *u = parse_unary(p);
        if (!u)
            break;
        if (!first) {
            first = u;
        } else {
            if (!all) {
                all = new_node(N_AND);
                node_add(all, first);
            }
            node_add(all, u);
        }
    }
    struct node *r = all ? all : first;
    if (p->failed) {
        node_free(r);
        return NULL;
    }
    return r;
}

static struct node *parse_or(struct parser *p)
{
    struct node *left = parse_and(p), *any = NULL;
    if (!left && !p->failed && keyword(p, "OR"))
        fail_at(p, p->pos, "expected a term before OR");
    while (left && !p->failed) {
        skip_ws(p);
        if (!keyword(p, "OR"))
            break;
        p->pos += 2;
        struct node *right = parse_and(p);
        if (!right) {
            fail_at(p, p->pos, "expected a term after OR");
            break;
        }
        if (!any) {
            any = new_node(N_OR);
            node_add(any, left);
        }
        node_add(any, right);
    }
    struct node *r = any ? any : left;
    if (p->failed) {
        node_free(r);
        return NULL;
    }
    return r;
}

/* AND and OR have no side effects, so their terms can run in any order: the entry's own
 * fields first, then the memoised costly ones, then what decodes or loads the message. A
 * filter like `header.tenant=acme type:x` then loads only the messages of type x. */
static int plan(struct node *nd)
{
    if (nd->kind == N_TERM) {
        const struct term *t = nd->t;
        if (t->field == F_HEADER || t->field == F_BODY)
            nd->cost = 3;
        else if (t->field == F_ORIGIN)
            nd->cost = 2;
        else
            nd->cost = t->has_re || t->field == F_FP || t->field == F_ANY;
        return nd->cost;
    }
    nd->cost = 0;
    for (size_t i = 0; i < nd->n; i++) {
        int c = plan(nd->kids[i]);
        nd->cost = c > nd->cost ? c : nd->cost;
    }
    if (nd->kind == N_NOT)
        return nd->cost;
    nd->run = xmalloc(nd->n * sizeof *nd->run);
    size_t w = 0;
    for (int c = 0; c <= 3; c++) /* stable: equal costs keep the order written */
        for (size_t i = 0; i < nd->n; i++)
            if (nd->kids[i]->cost == c)
                nd->run[w++] = nd->kids[i];
    return nd->cost;
}

enum status filter_compile_at(const char *expr, struct filter **out, size_t *column,
                              struct error *err)
{
    *out = NULL;
    if (column)
        *column = 0;
    struct filter *f = xcalloc(1, sizeof *f);
    struct parser p = {.s = expr ? expr : "", .f = f, .err = err};
    p.n = strlen(p.s);
    f->root = parse_or(&p);
    skip_ws(&p);
    if (!p.failed && p.pos < p.n) {
        if (p.s[p.pos] == ')')
            fail_at(&p, p.pos, "unexpected ) with no ( before it");
        else if (keyword(&p, "OR"))
            fail_at(&p, p.pos, "expected a term before OR");
        else
            fail_at(&p, p.pos, "unexpected text");
    }
    if (p.failed) {
        if (column)
            *column = column_of(p.s, p.err_at);
        node_free(f->root);
        f->root = NULL;
        filter_free(f);
        return ST_EPARSE;
    }
    if (f->root)
        plan(f->root);
    f->scratch = xmalloc(STORE_TEXT_MAX);
    if (f->needs_memo) {
        f->memo = xcalloc(1, sizeof *f->memo);
        f->memo->mask = 4095;
        f->memo->slot = xcalloc(f->memo->mask + 1, sizeof *f->memo->slot);
    }
    *out = f;
    return ST_OK;
}

enum status filter_compile(const char *expr, struct filter **out, struct error *err)
{
    return filter_compile_at(expr, out, NULL, err);
}

void filter_free(struct filter *f)
{
    if (!f)
        return;
    node_free(f->root);
    free(f->scratch);
    if (f->memo)
        free(f->memo->slot);
    free(f->memo);
    free(f);
}

bool filter_is_empty(const struct filter *f)
{
    return !f || !f->root;
}

bool filter_needs_message(const struct filter *f)
{
    return f && f->needs_message;
}


/* ---- evaluation ---- */

struct span {
    const char *p;
    size_t n;
};

/* What a term is evaluated against: a store entry (with its message loaded on demand) or a
 * message. Only the first fields are set up front: this runs a million times a scan. */
struct ectx {
    const struct filter *f;
    const struct store *s;
    const struct store_entry *e; /* NULL: message mode */
    size_t i;
    int64_t now;
    const struct message *m;
    const struct decoded *d;
    bool tried_m, own_m, own_d, tmp_init;
    struct message msg;
    struct decoded dec;
    struct strbuf tmp;
};

static const struct message *ctx_message(struct ectx *c)
{
    if (c->m || !c->e || c->tried_m)
        return c->m;
    c->tried_m = true;
    c->own_m = true;
    if (store_get(c->s, c->i, &c->msg, NULL) == ST_OK)
        c->m = &c->msg;
    return c->m;
}

static const struct decoded *ctx_decoded(struct ectx *c)
{
    if (c->d)
        return c->d;
    const struct message *m = ctx_message(c);
    if (!m)
        return NULL;
    decode_message_ex(m, c->now, DECODE_NO_BODY, &c->dec);
    c->own_d = true;
    c->d = &c->dec;
    return c->d;
}

static struct strbuf *ctx_tmp(struct ectx *c)
{
    if (!c->tmp_init) {
        sb_init(&c->tmp);
        c->tmp_init = true;
    }
    sb_reset(&c->tmp);
    return &c->tmp;
}

static void ctx_done(struct ectx *c)
{
    if (c->own_d)
        decoded_free(&c->dec);
    if (c->own_m)
        message_free(&c->msg);
    if (c->tmp_init)
        sb_free(&c->tmp);
}

static struct span bytes_span(const struct bytes *b)
{
    struct span s = {b->data ? (const char *)b->data : "", b->len};
    return s;
}

static struct span ref_span(struct ectx *c, store_ref r)
{
    struct span s = {c->f->scratch, 0};
    s.n = store_text(c->s, r, c->f->scratch);
    return s;
}

/* The reason the broker gave, from an error the broker made ("…: REASON from QUEUE"). */
static struct span broker_reason(struct span err)
{
    static const char prefix[] = "dead-lettered by the broker: ";
    struct span r = {"", 0};
    size_t k = sizeof prefix - 1;
    if (err.n < k || memcmp(err.p, prefix, k) != 0)
        return r;
    r.p = err.p + k;
    r.n = err.n - k;
    for (size_t i = 0; i + 6 <= r.n; i++)
        if (memcmp(r.p + i, " from ", 6) == 0) {
            r.n = i;
            break;
        }
    return r;
}

/* A field's text from the entry (fl is one the entry holds). */
static struct span entry_text(struct ectx *c, enum field fl)
{
    const struct store_entry *e = c->e;
    switch (fl) {
    case F_ID:
        return ref_span(c, e->id);
    case F_TYPE:
        return ref_span(c, e->type);
    case F_CORR:
        return ref_span(c, e->correlation);
    case F_CAUSE:
        return ref_span(c, e->causation);
    case F_QUEUE:
        return ref_span(c, e->queue);
    case F_ERROR:
        return ref_span(c, e->error);
    default:
        return (struct span){"", 0};
    }
}

/* The same field from the decoded message. */
static struct span decoded_text(const struct decoded *d, enum field fl)
{
    const struct envelope *env = d->env;
    switch (fl) {
    case F_ID:
        return bytes_span(&env->id);
    case F_TYPE:
        return bytes_span(&env->type);
    case F_CORR:
        return bytes_span(&env->correlation_id);
    case F_CAUSE:
        return bytes_span(&env->causation_id);
    case F_ERROR:
        return bytes_span(&d->error);
    case F_ORIGIN:
        return bytes_span(&env->origin);
    default:
        return (struct span){"", 0};
    }
}

/* The text of a field, value k (reason and bare words have several); false past the last. */
static bool field_text(struct ectx *c, enum field fl, int k, struct span *out)
{
    static const enum field any[] = {F_ID, F_TYPE, F_ERROR, F_QUEUE};
    if (fl == F_ANY)
        return k < 4 && field_text(c, any[k], 0, out);
    if (k > (fl == F_REASON ? 1 : 0))
        return false;
    const struct store_entry *e = c->e;
    const struct decoded *d = e && fl != F_ORIGIN ? NULL : ctx_decoded(c);
    *out = (struct span){"", 0};
    if (!e && !d)
        return k == 0;
    if (fl == F_DIALECT) {
        const char *name = dialect_name(e ? (enum dialect)e->dialect : d ? d->dialect : 0);
        *out = (struct span){name, strlen(name)};
    } else if (fl == F_REASON) {
        /* Values: the consumer's reject reason, then the broker's death reason. */
        const char *rej = e ? store_reject_name(c->s, e->reject)
                            : (d && d->reject_reason ? d->reject_reason : "");
        struct span r = {rej, strlen(rej)}, b = {"", 0};
        if (e ? (e->flags & SE_ERROR_FROM_BROKER) != 0 : d && d->error_from_broker)
            b = broker_reason(e ? entry_text(c, F_ERROR) : d ? decoded_text(d, F_ERROR) : b);
        if (k == 0)
            *out = r.n || !b.n ? r : b;
        else if (r.n && b.n)
            *out = b;
        else
            return false;
    } else if (fl == F_ORIGIN) {
        if (d)
            *out = decoded_text(d, fl);
    } else if (fl == F_QUEUE && !e) {
        *out = bytes_span(&c->m->queue);
    } else {
        *out = e ? entry_text(c, fl) : d ? decoded_text(d, fl) : *out;
    }
    return true;
}

static int64_t sat_sub(int64_t a, int64_t b)
{
    if (b < 0 && a > INT64_MAX + b)
        return INT64_MAX;
    if (b > 0 && a < INT64_MIN + b)
        return INT64_MIN;
    return a - b;
}

static bool cmp_ok(enum op op, int c)
{
    switch (op) {
    case OP_GT:
        return c > 0;
    case OP_GE:
        return c >= 0;
    case OP_LT:
        return c < 0;
    case OP_LE:
        return c <= 0;
    case OP_NE:
        return c != 0;
    default:
        return c == 0;
    }
}

static int cmp_i64(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

static bool memo_get(const struct filter *f, uint64_t key, bool *value)
{
    const struct memo *m = f->memo;
    for (size_t h = (size_t)key & m->mask; m->slot[h].key; h = (h + 1) & m->mask) {
        if (m->slot[h].key == key) {
            *value = m->slot[h].value;
            return true;
        }
    }
    return false;
}

static void memo_put(const struct filter *f, uint64_t key, bool value)
{
    struct memo *m = f->memo;
    if ((m->used + 1) * 2 > m->mask) {
        size_t cap = m->mask + 1 >= MEMO_MAX ? m->mask + 1 : (m->mask + 1) * 2;
        struct memo_slot *old = m->slot;
        size_t old_cap = m->mask + 1;
        m->slot = xcalloc(cap, sizeof *m->slot);
        m->mask = cap - 1;
        m->used = 0;
        for (size_t i = 0; i < old_cap && cap != old_cap; i++) /* at the cap: start over */
            if (old[i].key)
                memo_put(f, old[i].key, old[i].value);
        free(old);
    }
    size_t h = (size_t)key & m->mask;
    while (m->slot[h].key && m->slot[h].key != key)
        h = (h + 1) & m->mask;
    if (!m->slot[h].key)
        m->used++;
    m->slot[h].key = key;
    m->slot[h].value = value;
}

static bool re_match(const struct term *t, const char *s, size_t n)
{
#ifdef REG_STARTEND
    regmatch_t m[1];
    m[0].rm_so = 0;
    m[0].rm_eo = (regoff_t)(n > INT_MAX ? INT_MAX : n);
    return regexec(&t->re, s, 1, m, REG_STARTEND) == 0;
#else
    char *z = xstrndup(s, n);
    bool r = regexec(&t->re, z, 0, NULL, 0) == 0;
    free(z);
    return r;
#endif
}

/* The positive form of a text operator (NE is the negation of EQ, applied by the caller). */
static bool text_match(const struct filter *f, const struct term *t, struct span v)
{
    switch (t->op) {
    case OP_EQ:
    case OP_NE:
        return v.n == t->len && memcmp(v.p, t->text, v.n) == 0;
    case OP_SUB:
        return ci_contains(v.p, v.n, t->text, t->len);
    case OP_GLOB:
        return glob_match(t->glob, t->glob_len, v.p, v.n, t->icase);
    case OP_RE: {
        uint64_t key = hash64(v.p, v.n, t->id * 0x9e3779b97f4a7c15ULL + 1) | 1;
        bool r;
        if (memo_get(f, key, &r))
            return r;
        r = re_match(t, v.p, v.n);
        memo_put(f, key, r);
        return r;
    }
    default:
        return false;
    }
}

static const struct hval *header_get(const struct htable *h, const char *name, size_t n)
{
    if (!h)
        return NULL;
    for (size_t i = 0; i < h->n; i++)
        if (h->e[i].key.len == n && memcmp(h->e[i].key.data, name, n) == 0)
            return &h->e[i].val;
    for (size_t i = 0; i < h->n; i++) { /* Tenant finds tenant when there is no Tenant */
        size_t k = 0;
        if (h->e[i].key.len != n)
            continue;
        while (k < n && lower(h->e[i].key.data[k]) == lower((unsigned char)name[k]))
            k++;
        if (k == n)
            return &h->e[i].val;
    }
    return NULL;
}

static bool header_number(const struct hval *v, int64_t *i, double *d, bool *is_int)
{
    switch (v->kind) {
    case HV_I8:
    case HV_I16:
    case HV_I32:
    case HV_I64:
        *i = v->v.i;
        *d = (double)*i;
        *is_int = true;
        return true;
    case HV_U8:
    case HV_U16:
    case HV_U32:
    case HV_U64:
    case HV_TIMESTAMP:
        *is_int = v->v.u <= (uint64_t)INT64_MAX;
        *i = *is_int ? (int64_t)v->v.u : INT64_MAX;
        *d = (double)v->v.u;
        return true;
    case HV_F32:
    case HV_F64:
        *d = v->kind == HV_F32 ? (double)v->v.f32 : v->v.f64;
        *is_int = false;
        return *d == *d;
    case HV_DECIMAL: {
        double x = (double)v->v.dec.value;
        for (unsigned k = 0; k < v->v.dec.scale && k < 40; k++)
            x /= 10;
        *d = x;
        *is_int = false;
        return true;
    }
    case HV_STRING:
    case HV_BYTES: {
        size_t a = 0, b = v->v.s.len;
        const char *s = (const char *)v->v.s.data;
        while (a < b && is_space(s[a]))
            a++;
        while (b > a && is_space(s[b - 1]))
            b--;
        return parse_number(s + a, b - a, d, i, is_int);
    }
    default:
        return false;
    }
}

static struct span header_text(struct ectx *c, const struct hval *v)
{
    if (v->kind == HV_STRING || v->kind == HV_BYTES)
        return bytes_span(&v->v.s);
    struct strbuf *sb = ctx_tmp(c);
    switch (v->kind) {
    case HV_VOID:
        break;
    case HV_BOOL:
        sb_adds(sb, v->v.b ? "true" : "false");
        break;
    case HV_I8:
    case HV_I16:
    case HV_I32:
    case HV_I64:
        sb_addf(sb, "%lld", (long long)v->v.i);
        break;
    case HV_U8:
    case HV_U16:
    case HV_U32:
    case HV_U64:
        sb_addf(sb, "%llu", (unsigned long long)v->v.u);
        break;
    case HV_F32:
    case HV_F64:
        sb_addf(sb, "%.15g", v->kind == HV_F32 ? (double)v->v.f32 : v->v.f64);
        break;
    case HV_DECIMAL: {
        int64_t i;
        double d;
        bool is_int;
        header_number(v, &i, &d, &is_int);
        sb_addf(sb, "%.*f", v->v.dec.scale > 20 ? 20 : (int)v->v.dec.scale, d);
        break;
    }
    case HV_TIMESTAMP: {
        char t[32];
        time_format_rfc3339(v->v.u > (uint64_t)INT64_MAX / 1000 ? 0 : (int64_t)v->v.u * 1000,
                            false, t);
        sb_adds(sb, t);
        break;
    }
    default: { /* arrays and tables: their JSON, so x-death can be searched */
        json_t *j = hval_to_json(v);
        char *text = j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
        if (text)
            sb_adds(sb, text);
        free(text);
        json_decref(j);
        break;
    }
    }
    struct span s = {sb->buf ? sb->buf : "", sb->len};
    return s;
}

static bool eval_header(struct ectx *c, const struct term *t)
{
    const struct message *m = ctx_message(c);
    const struct hval *v = m ? header_get(m->headers, t->header, t->header_len) : NULL;
    if (!v)
        return t->op == OP_NE;
    if (t->has_num) {
        int64_t i;
        double d;
        bool is_int;
        if (header_number(v, &i, &d, &is_int)) {
            int r = is_int && t->num_int ? cmp_i64(i, t->num) : (d > t->dnum) - (d < t->dnum);
            return cmp_ok(t->op, r);
        }
        if (t->op >= OP_GT)
            return false;
    }
    bool r = text_match(c->f, t, header_text(c, v));
    return t->op == OP_NE ? !r : r;
}

static bool eval_term(struct ectx *c, const struct term *t)
{
    const struct store_entry *e = c->e;
    if (t->field == F_HEADER)
        return eval_header(c, t);
    if (t->field == F_BODY) {
        const struct message *m = ctx_message(c);
        struct span b = {"", 0};
        if (m)
            b = bytes_span(&m->body);
        bool r = text_match(c->f, t, b);
        return t->op == OP_NE ? !r : r;
    }
    if (t->field == F_FP) {
        struct span err = {"", 0};
        field_text(c, F_ERROR, 0, &err);
        uint64_t key = hash64(err.p, err.n, t->id * 0x9e3779b97f4a7c15ULL + 7) | 1;
        bool r;
        if (!memo_get(c->f, key, &r)) {
            char hex[17];
            snprintf(hex, sizeof hex, "%016llx",
                     (unsigned long long)error_fingerprint(err.p, err.n, NULL));
            r = text_match(c->f, t, (struct span){hex, 16});
            memo_put(c->f, key, r);
        }
        return t->op == OP_NE ? !r : r;
    }
    enum fkind k = t->field == F_ANY ? FK_TEXT : fields[t->field].kind;
    if (k == FK_TEXT) {
        struct span v;
        for (int slot = 0; field_text(c, t->field, slot, &v); slot++)
            if (text_match(c->f, t, v))
                return t->op != OP_NE;
        return t->op == OP_NE;
    }
    if (k == FK_SIZE) {
        int64_t n = e ? (int64_t)e->body_size
                      : (int64_t)(c->m->body.len > UINT32_MAX ? UINT32_MAX : c->m->body.len);
        return cmp_ok(t->op, cmp_i64(n, t->num));
    }
    const struct decoded *d = e ? NULL : ctx_decoded(c);
    if (!e && !d)
        return false;
    int64_t first_seen = e ? e->first_seen_ms : d->env->first_seen_ms;
    switch (k) {
    case FK_NUMBER: {
        int64_t a = e ? e->attempt : d->env->attempt;
        return cmp_ok(t->op, cmp_i64(a > INT32_MAX ? INT32_MAX : a, t->num));
    }
    case FK_DURATION:
        return cmp_ok(t->op, cmp_i64(sat_sub(c->now, first_seen), t->ms));
    case FK_TIME:
        return cmp_ok(t->op, cmp_i64(first_seen, t->relative ? sat_sub(c->now, t->ms) : t->ms));
    default:
        return false;
    }
}

static bool eval(struct ectx *c, const struct node *nd)
{
    switch (nd->kind) {
    case N_TERM:
        return eval_term(c, nd->t);
    case N_AND:
        for (size_t i = 0; i < nd->n; i++)
            if (!eval(c, nd->run[i]))
                return false;
        return true;
    case N_OR:
        for (size_t i = 0; i < nd->n; i++)
            if (eval(c, nd->run[i]))
                return true;
        return false;
    case N_NOT:
        return !eval(c, nd->kids[0]);
    }
    return false;
}

static void ctx_init(struct ectx *c, const struct filter *f, int64_t now)
{
    c->f = f;
    c->s = NULL;
    c->e = NULL;
    c->i = 0;
    c->now = now;
    c->m = NULL;
    c->d = NULL;
    c->tried_m = c->own_m = c->own_d = c->tmp_init = false;
}

bool filter_match_entry(const struct filter *f, const struct store *s, size_t i, int64_t now_ms)
{
    const struct store_entry *e = s ? store_entry_at(s, i) : NULL;
    if (!e)
        return false;
    if (!f || !f->root)
        return true;
    struct ectx c;
    ctx_init(&c, f, now_ms);
    c.s = s;
    c.e = e;
    c.i = i;
    bool r = eval(&c, f->root);
    ctx_done(&c);
    return r;
}

bool filter_match_message(const struct filter *f, const struct message *m,
                          const struct decoded *d, int64_t now_ms)
{
    if (!m)
        return false;
    if (!f || !f->root)
        return true;
    struct ectx c;
    ctx_init(&c, f, now_ms);
    c.m = m;
    c.d = d;
    bool r = eval(&c, f->root);
    ctx_done(&c);
    return r;
}

/* ---- describing ---- */

/* Appends a value in the form given (glob: backslash pairs are kept as they are), bare when it
 * reads back the same, else quoted. A bare word must not look like a field, an operator or a
 * keyword either. */
static void put_value(struct strbuf *out, const char *s, size_t n, bool glob_form, bool bare,
                      bool quote)
{
    quote = quote || n == 0 || s[0] == '~' || s[0] == '/' || s[0] == '"' ||
                 (bare && (s[0] == '-' || (n == 2 && !memcmp(s, "OR", 2)) ||
                           (n == 3 && (!memcmp(s, "AND", 3) || !memcmp(s, "NOT", 3)))));
    for (size_t i = 0; i < n && !quote; i++) {
        char c = s[i];
        quote = is_space(c) || c == '"' || c == '(' || c == ')' || (!glob_form && c == '\\') ||
                (bare && (c == ':' || c == '=' || c == '<' || c == '>' || c == '!'));
        if (glob_form && c == '\\')
            i++;
    }
    if (quote)
        sb_addc(out, '"');
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '\\' && glob_form && i + 1 < n) {
            sb_add(out, s + i, 2);
            i++;
        } else if (c == '\\' || (c == '"' && quote)) {
            sb_addc(out, '\\');
            sb_addc(out, c);
        } else if (quote && (c == '\n' || c == '\t' || c == '\r')) {
            sb_addc(out, '\\');
            sb_addc(out, c == '\n' ? 'n' : c == '\t' ? 't' : 'r');
        } else {
            sb_addc(out, c);
        }
    }
    if (quote)
        sb_addc(out, '"');
}

void filter_quote(const char *s, size_t n, bool literal, struct strbuf *out)
{
    struct strbuf g;
    sb_init(&g);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\\' || (literal && (s[i] == '*' || s[i] == '?')))
            sb_addc(&g, '\\');
        sb_addc(&g, s[i]);
    }
    put_value(out, g.buf ? g.buf : "", g.len, true, false, false);
    sb_free(&g);
}

static void describe_term(const struct term *t, struct strbuf *out)
{
    const char *g = t->glob ? t->glob : "";
    size_t gn = t->glob_len;
    if (t->wrap) {
        g++;
        gn -= 2;
    }
    if (t->field == F_ANY) { /* the glob form keeps \* literal in a substring search too */
        put_value(out, g, gn, true, true, false);
        return;
    }
    if (t->field == F_HEADER) {
        sb_adds(out, "header.");
        bool plain = t->header_len > 0;
        for (size_t i = 0; i < t->header_len && plain; i++) {
            char c = t->header[i];
            plain = !is_space(c) && c != '"' && c != '(' && c != ')' && c != ':' && c != '=' &&
                    c != '<' && c != '>' && c != '!' && c != '\\';
        }
        if (plain)
            sb_add(out, t->header, t->header_len);
        else
            put_value(out, t->header, t->header_len, false, false, true);
    } else {
        sb_adds(out, fields[t->field].name);
    }
    sb_adds(out, op_text[t->op]);
    if (t->op == OP_RE) {
        sb_addc(out, '/');
        for (size_t i = 0; i < t->len; i++) {
            if (t->text[i] == '\\' && i + 1 < t->len) {
                sb_add(out, t->text + i, 2);
                i++;
                continue;
            }
            if (t->text[i] == '/')
                sb_addc(out, '\\');
            sb_addc(out, t->text[i]);
        }
        sb_adds(out, t->icase ? "/i" : "/");
    } else if (t->op == OP_GLOB) {
        put_value(out, g, gn, true, false, false);
    } else {
        put_value(out, t->text, t->len, false, false, false);
    }
}

static void describe_node(const struct node *nd, struct strbuf *out)
{
    switch (nd->kind) {
    case N_TERM:
        describe_term(nd->t, out);
        break;
    case N_AND:
    case N_OR:
        for (size_t i = 0; i < nd->n; i++) {
            if (i)
                sb_adds(out, nd->kind == N_OR ? " OR " : " ");
            bool paren = nd->kind == N_AND && nd->kids[i]->kind == N_OR;
            if (paren)
                sb_addc(out, '(');
            describe_node(nd->kids[i], out);
            if (paren)
                sb_addc(out, ')');
        }
        break;
    case N_NOT: {
        const struct node *k = nd->kids[0];
        bool paren = k->kind == N_AND || k->kind == N_OR;
        sb_adds(out, paren ? "-(" : "-");
        describe_node(k, out);
        if (paren)
            sb_addc(out, ')');
        break;
    }
    }
}

void filter_describe(const struct filter *f, struct strbuf *out)
{
    if (f && f->root)
        describe_node(f->root, out);
}
