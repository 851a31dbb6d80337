/*
 * rx: reading a regex (rx.h says which) into a small tree, then building the Thompson
 * automaton from it. The tree knows the size of the automaton each of its nodes will build,
 * so a regex whose automaton is too large (nested {255}) is refused before anything is built;
 * running the automaton is rx_match.c.
 */
#include "rx.h"

#include <stdlib.h>
#include <string.h>

#include "rx_internal.h"
#include "util.h"

#define RX_MAX_SOURCE 4096 /* bytes of source: the tree and the parser's recursion are bounded */
#define RX_MAX_DEPTH 200   /* nested groups */
#define RX_INF 0xffff      /* no upper bound on a repeat */

enum anode_kind { A_EMPTY, A_CHAR, A_SET, A_ASSERT, A_CAT, A_ALT, A_REP };

struct anode {
    uint8_t kind;
    uint32_t x;        /* A_CHAR: the character; A_SET: the set; A_ASSERT: the assertion */
    int32_t a, b;      /* children */
    uint16_t min, max; /* A_REP */
    uint64_t size;     /* states it builds, saturated at limit + 1 */
};

struct rxp {
    const unsigned char *s;
    size_t n, pos;
    struct anode *nodes;
    size_t n_nodes, cap;
    struct rx *re;
    uint64_t limit;
    int depth;
    const char *why;
    size_t at;
    enum rx_error code;
};

static bool fail(struct rxp *p, size_t at, const char *why)
{
    if (!p->why) {
        p->why = why;
        p->at = at;
        p->code = RX_SYNTAX;
    }
    return false;
}

static uint64_t sat(const struct rxp *p, uint64_t v)
{
    return v > p->limit ? p->limit + 1 : v;
}

static int32_t node(struct rxp *p, enum anode_kind k, uint32_t x, int32_t a, int32_t b)
{
    if (p->n_nodes == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 32;
        p->nodes = xrealloc(p->nodes, p->cap * sizeof *p->nodes);
    }
    struct anode *nd = &p->nodes[p->n_nodes];
    *nd = (struct anode){.kind = (uint8_t)k, .x = x, .a = a, .b = b};
    switch (k) {
    case A_EMPTY:
        nd->size = 0;
        break;
    case A_CAT:
        nd->size = sat(p, p->nodes[a].size + p->nodes[b].size);
        break;
    case A_ALT:
        nd->size = sat(p, 1 + p->nodes[a].size + p->nodes[b].size);
        break;
    default:
        nd->size = 1;
        break;
    }
    return (int32_t)p->n_nodes++;
}

static int32_t repeat(struct rxp *p, int32_t a, unsigned min, unsigned max)
{
    int32_t r = node(p, A_REP, 0, a, -1);
    struct anode *nd = &p->nodes[r];
    nd->min = (uint16_t)min;
    nd->max = (uint16_t)max;
    uint64_t s = p->nodes[a].size;
    if (s == 0)
        nd->size = 0; /* repeating what matches only the empty string builds nothing */
    else if (max == RX_INF)
        nd->size = sat(p, min * s + s + 1);
    else
        nd->size = sat(p, min * s + (max - min) * (s + 1));
    return r;
}

/* ---- sets ---- */

static struct rx_set *new_set(struct rxp *p, uint32_t *index)
{
    struct rx *re = p->re;
    re->sets = xrealloc(re->sets, (re->n_sets + 1) * sizeof *re->sets);
    *index = (uint32_t)re->n_sets;
    struct rx_set *set = &re->sets[re->n_sets++];
    memset(set, 0, sizeof *set);
    return set;
}

static void set_add(struct rx_set *set, uint32_t lo, uint32_t hi)
{
    for (; lo <= hi && lo < 128; lo++)
        set->ascii[lo >> 5] |= 1u << (lo & 31);
    if (lo > hi)
        return;
    set->ranges = xrealloc(set->ranges, (set->n_ranges + 1) * sizeof *set->ranges);
    set->ranges[set->n_ranges++] = (struct rx_range){lo, hi};
}

static bool ascii_in_class(const char *name, unsigned c)
{
    bool upper = c >= 'A' && c <= 'Z', lower = c >= 'a' && c <= 'z', digit = c >= '0' && c <= '9';
    bool graph = c > 32 && c < 127;
    if (!strcmp(name, "alpha"))
        return upper || lower;
    if (!strcmp(name, "digit"))
        return digit;
    if (!strcmp(name, "alnum"))
        return upper || lower || digit;
    if (!strcmp(name, "upper"))
        return upper;
    if (!strcmp(name, "lower"))
        return lower;
    if (!strcmp(name, "space"))
        return c == ' ' || (c >= '\t' && c <= '\r');
    if (!strcmp(name, "blank"))
        return c == ' ' || c == '\t';
    if (!strcmp(name, "punct"))
        return graph && !upper && !lower && !digit;
    if (!strcmp(name, "print"))
        return graph || c == ' ';
    if (!strcmp(name, "graph"))
        return graph;
    if (!strcmp(name, "cntrl"))
        return c < 32 || c == 127;
    if (!strcmp(name, "xdigit"))
        return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    return false;
}

static bool set_class(struct rxp *p, struct rx_set *set, const char *name, size_t at)
{
    static const char *const known[] = {"alpha", "digit", "alnum", "upper", "lower", "space",
                                        "blank", "punct", "print", "graph", "cntrl", "xdigit"};
    bool ok = false;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        ok = ok || !strcmp(name, known[i]);
    if (!ok)
        return fail(p, at, "unknown character class");
    if (set->n_classes == RX_MAX_CLASSES)
        return fail(p, at, "too many character classes in one bracket expression");
    for (unsigned c = 0; c < 128; c++)
        if (ascii_in_class(name, c))
            set_add(set, c, c);
    set->classes[set->n_classes++] = wctype(name);
    return true;
}

/* [:name:], [=c=] or [.c.] at p->pos (at its '['): the class is added to set, or the single
 * character is returned in *c. */
static bool bracket_item(struct rxp *p, struct rx_set *set, uint32_t *c, bool *is_class)
{
    size_t at = p->pos;
    unsigned char kind = p->s[at + 1];
    size_t k = at + 2;
    while (k + 1 < p->n && !(p->s[k] == kind && p->s[k + 1] == ']'))
        k++;
    if (k + 1 >= p->n)
        return fail(p, at, "unterminated [: [= or [. in a bracket expression");
    size_t len = k - (at + 2);
    p->pos = k + 2;
    *is_class = kind == ':';
    if (kind == ':') {
        char name[16];
        if (len >= sizeof name)
            return fail(p, at, "unknown character class");
        memcpy(name, p->s + at + 2, len);
        name[len] = '\0';
        return set_class(p, set, name, at);
    }
    size_t clen = 0;
    if (len == 0 || (*c = rx_decode(p->s, at + 2 + len, at + 2, &clen), clen != len))
        return fail(p, at, "only single characters are supported in [= =] and [. .]");
    return true;
}

static bool bracket_char(struct rxp *p, struct rx_set *set, uint32_t *c, bool *is_class)
{
    *is_class = false;
    if (p->s[p->pos] == '[' && p->pos + 1 < p->n &&
        (p->s[p->pos + 1] == ':' || p->s[p->pos + 1] == '=' || p->s[p->pos + 1] == '.'))
        return bracket_item(p, set, c, is_class);
    size_t len;
    *c = rx_decode(p->s, p->n, p->pos, &len);
    p->pos += len;
    return true;
}

static int32_t parse_bracket(struct rxp *p)
{
    size_t open = p->pos++;
    uint32_t index;
    struct rx_set *set = new_set(p, &index);
    if (p->pos < p->n && p->s[p->pos] == '^') {
        set->negated = true;
        p->pos++;
    }
    for (bool first = true;; first = false) {
        if (p->pos >= p->n)
            return fail(p, open, "unmatched ["), -1;
        if (p->s[p->pos] == ']' && !first) {
            p->pos++;
            break;
        }
        size_t at = p->pos;
        uint32_t lo = 0, hi;
        bool is_class;
        if (!bracket_char(p, set, &lo, &is_class))
            return -1;
        bool range = p->pos + 1 < p->n && p->s[p->pos] == '-' && p->s[p->pos + 1] != ']';
        if (is_class) {
            if (range)
                return fail(p, at, "a range cannot start at a character class"), -1;
            continue;
        }
        hi = lo;
        if (range) {
            p->pos++;
            if (!bracket_char(p, set, &hi, &is_class))
                return -1;
            if (is_class)
                return fail(p, at, "a range cannot end at a character class"), -1;
            if (p->re->icase) { /* glibc reads the ends in upper case: [+-z]/i is [+-Z]/i */
                lo = rx_upper(lo);
                hi = rx_upper(hi);
            }
            if (hi < lo || hi >= RX_BAD)
                return fail(p, at, "invalid range in a bracket expression"), -1;
        }
        set_add(set, lo, hi);
    }
    return node(p, A_SET, index, -1, -1);
}

/* \w \W \s \S, and . (every character but NUL). */
static int32_t class_set(struct rxp *p, const char *class, bool negated, bool underscore)
{
    uint32_t index;
    struct rx_set *set = new_set(p, &index);
    set->negated = negated;
    if (class)
        set_class(p, set, class, p->pos);
    if (underscore)
        set_add(set, '_', '_');
    if (!class && !underscore) {
        set_add(set, 0, 0);
        set->dot = true;
    }
    return node(p, A_SET, index, -1, -1);
}

/* ---- the grammar: alternation, branch, piece (an atom and its repeats), atom ---- */

static int32_t parse_alt(struct rxp *p);

static int32_t literal(struct rxp *p, size_t at)
{
    size_t len;
    uint32_t c = rx_decode(p->s, p->n, at, &len);
    p->pos = at + len;
    return node(p, A_CHAR, p->re->icase ? rx_fold(c) : c, -1, -1);
}

static int32_t parse_atom(struct rxp *p, bool *anchor)
{
    size_t at = p->pos;
    unsigned char c = p->s[at];
    *anchor = false;
    switch (c) {
    case '(': {
        if (++p->depth > RX_MAX_DEPTH)
            return fail(p, at, "groups nested too deep"), -1;
        p->pos++;
        int32_t r = parse_alt(p);
        if (r < 0)
            return -1;
        if (p->pos >= p->n || p->s[p->pos] != ')')
            return fail(p, at, "unmatched ("), -1;
        p->pos++;
        p->depth--;
        return r;
    }
    case '*':
    case '+':
    case '?':
    case '{':
        return fail(p, at, "a repeat with nothing before it"), -1;
    case '.':
        p->pos++;
        return class_set(p, NULL, true, false);
    case '[':
        return parse_bracket(p);
    case '^':
    case '$':
        p->pos++;
        *anchor = true;
        return node(p, A_ASSERT, c == '^' ? RXA_BOL : RXA_EOL, -1, -1);
    case '\\':
        break;
    default:
        return literal(p, at);
    }
    if (at + 1 >= p->n)
        return fail(p, at, "a backslash at the end"), -1;
    unsigned char e = p->s[at + 1];
    static const char asserts[] = "`'bB<>";
    static const enum rx_assert kinds[] = {RXA_BOL,     RXA_EOL,   RXA_WORD,
                                           RXA_NOTWORD, RXA_BEGIN, RXA_END};
    const char *k = e ? strchr(asserts, e) : NULL;
    if (k) {
        p->pos = at + 2;
        *anchor = true;
        return node(p, A_ASSERT, kinds[k - asserts], -1, -1);
    }
    if (e == 'w' || e == 'W' || e == 's' || e == 'S') {
        p->pos = at + 2;
        bool w = e == 'w' || e == 'W';
        return class_set(p, w ? "alnum" : "space", e == 'W' || e == 'S', w);
    }
    return literal(p, at + 1);
}

static bool read_count(struct rxp *p, unsigned *v, bool *given)
{
    *v = 0;
    *given = false;
    for (;;) {
        /* glibc reads an escaped 0 in a count as the digit ({\0,3} is {0,3}); \1-\9 are
         * back references there, and refused. */
        bool esc0 = p->pos + 1 < p->n && p->s[p->pos] == '\\' && p->s[p->pos + 1] == '0';
        if (!esc0 && !(p->pos < p->n && p->s[p->pos] >= '0' && p->s[p->pos] <= '9'))
            break;
        p->pos += esc0;
        *v = *v * 10 + (unsigned)(p->s[p->pos++] - '0');
        *given = true;
        if (*v > RX_MAX_COUNT)
            return fail(p, p->pos, "a repeat count over 255");
    }
    return true;
}

/* After an atom: * + ? {m} {m,} {m,n} {,n}, any number of them. */
static int32_t parse_repeats(struct rxp *p, int32_t atom, bool anchor)
{
    while (p->pos < p->n) {
        size_t at = p->pos;
        unsigned char c = p->s[at];
        unsigned min, max;
        if (c == '*' || c == '+' || c == '?') {
            min = c == '+';
            max = c == '?' ? 1 : RX_INF;
            p->pos++;
        } else if (c == '{') {
            bool has_min, has_max, comma;
            p->pos++;
            if (!read_count(p, &min, &has_min))
                return -1;
            comma = p->pos < p->n && p->s[p->pos] == ',';
            if (!comma && p->pos + 1 < p->n && p->s[p->pos] == '\\' && p->s[p->pos + 1] == ',')
                comma = true, p->pos++; /* glibc reads an escaped comma there as a comma */
            p->pos += comma;
            if (!read_count(p, &max, &has_max))
                return -1;
            if (p->pos >= p->n || p->s[p->pos] != '}' || (!has_min && !has_max && !comma))
                return fail(p, at, "an invalid repeat count"), -1;
            p->pos++;
            if (!comma)
                max = min;
            else if (!has_max)
                max = RX_INF;
            if (max < min)
                return fail(p, at, "a repeat count whose bounds are reversed"), -1;
        } else {
            break;
        }
        if (anchor)
            return fail(p, at, "a repeat after an anchor"), -1;
        atom = repeat(p, atom, min, max);
    }
    return atom;
}

static int32_t parse_branch(struct rxp *p)
{
    int32_t acc = -1;
    while (p->pos < p->n && p->s[p->pos] != '|' && !(p->s[p->pos] == ')' && p->depth > 0)) {
        bool anchor;
        int32_t a = parse_atom(p, &anchor);
        if (a < 0 || (a = parse_repeats(p, a, anchor)) < 0)
            return -1;
        acc = acc < 0 ? a : node(p, A_CAT, 0, acc, a);
    }
    return acc < 0 ? node(p, A_EMPTY, 0, -1, -1) : acc;
}

static int32_t parse_alt(struct rxp *p)
{
    int32_t left = parse_branch(p);
    while (left >= 0 && p->pos < p->n && p->s[p->pos] == '|') {
        p->pos++;
        int32_t right = parse_branch(p);
        left = right < 0 ? -1 : node(p, A_ALT, 0, left, right);
    }
    return left;
}

/* ---- building the automaton, back to front: each node is built with its continuation ---- */

static int32_t add_state(struct rx *re, enum rx_op op, uint32_t x, int32_t out, int32_t out1)
{
    re->st[re->n_st] = (struct rx_state){.op = (uint8_t)op, .x = x, .out = out, .out1 = out1};
    return (int32_t)re->n_st++;
}

static int32_t emit(const struct rxp *p, int32_t i, int32_t next)
{
    const struct anode *nd = &p->nodes[i];
    struct rx *re = p->re;
    if (nd->size == 0)
        return next;
    switch (nd->kind) {
    case A_CHAR:
        return add_state(re, RX_CHAR, nd->x, next, -1);
    case A_SET:
        return add_state(re, RX_SET, nd->x, next, -1);
    case A_ASSERT:
        return add_state(re, RX_ASSERT, nd->x, next, -1);
    case A_CAT:
        return emit(p, nd->a, emit(p, nd->b, next));
    case A_ALT: {
        int32_t b = emit(p, nd->b, next);
        int32_t a = emit(p, nd->a, next);
        return add_state(re, RX_SPLIT, 0, a, b);
    }
    case A_REP: {
        int32_t cur = next;
        if (nd->max == RX_INF) {
            int32_t loop = add_state(re, RX_SPLIT, 0, -1, next);
            re->st[loop].out = emit(p, nd->a, loop);
            cur = loop;
        } else {
            for (unsigned k = nd->min; k < nd->max; k++)
                cur = add_state(re, RX_SPLIT, 0, emit(p, nd->a, cur), next);
        }
        for (unsigned k = 0; k < nd->min; k++)
            cur = emit(p, nd->a, cur);
        return cur;
    }
    default:
        return next;
    }
}

struct rx *rx_compile(const char *src, size_t n, int flags, size_t max_states, enum rx_error *code,
                      const char **why, size_t *at)
{
    struct rx *re = xcalloc(1, sizeof *re);
    re->icase = flags & RX_ICASE;
    struct rxp p = {.s = (const unsigned char *)src, .n = n, .re = re, .limit = max_states};
    int32_t root = -1;
    if (n > RX_MAX_SOURCE)
        fail(&p, RX_MAX_SOURCE, "a regex longer than 4096 bytes");
    else if ((root = parse_alt(&p)) >= 0 && p.pos < n)
        fail(&p, p.pos, "unexpected text"); /* not reached: ) at the top is a literal */
    if (!p.why && p.nodes[root].size + 1 > max_states) {
        p.why = "the regex's automaton is too large";
        p.at = 0;
        p.code = RX_TOO_LARGE;
    }
    if (p.why) {
        if (code)
            *code = p.code;
        if (why)
            *why = p.why;
        if (at)
            *at = p.at;
        free(p.nodes);
        rx_free(re);
        return NULL;
    }
    re->st = xmalloc((p.nodes[root].size + 1) * sizeof *re->st);
    int32_t match = add_state(re, RX_MATCH, 0, -1, -1);
    re->start = emit(&p, root, match);
    free(p.nodes);
    rx_prepare_skip(re);
    if (code)
        *code = RX_OK;
    return re;
}

size_t rx_states(const struct rx *re)
{
    return re ? re->n_st : 0;
}

void rx_free(struct rx *re)
{
    if (!re)
        return;
    for (size_t i = 0; i < re->n_sets; i++)
        free(re->sets[i].ranges);
    free(re->sets);
    free(re->st);
    free(re);
}
