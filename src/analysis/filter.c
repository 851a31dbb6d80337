/*
 * filter: compiling the filter language (docs/filter.md is the reference). A recursive-descent
 * parser turns an expression into a small tree of AND, OR and NOT over terms, with the error
 * messages (the column, a did-you-mean hint) for what it cannot read. The pieces around it
 * have files of their own: filter_text.c (text and number helpers), filter_eval.c (matching
 * an entry or a message, and the order terms run in), filter_describe.c (printing a filter
 * back). This file's comments say why, not what.
 */
#include "filter.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "filter_internal.h"
#include "groups_fingerprint.h"

#define MAX_DEPTH 64  /* parentheses and negations: recursion is bounded */
#define MAX_REGEX 512 /* bytes of a regex's source */

/* The fields of the language: their names, what their values are, whether they need the
 * message itself. The parser reads them, evaluation and describing look them up. */
const struct field_info filter_fields[F_COUNT] = {
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
    [F_GROUP] = {"group", NULL, FK_TEXT, false, false},
    [F_ATTEMPT] = {"attempt", "attempts", FK_NUMBER, false, false},
    [F_AGE] = {"age", NULL, FK_DURATION, false, false},
    [F_SIZE] = {"size", NULL, FK_SIZE, false, false},
    [F_FIRST_SEEN] = {"first_seen", "first-seen", FK_TIME, false, false},
    [F_EXCEPTION] = {"exception", "error_type", FK_TEXT, false, true},
    [F_FAILED_AT] = {"failed_at", "failed-at", FK_TIME, false, false},
    [F_HEADER] = {"header", NULL, FK_HEADER, true, true},
    [F_BODY] = {"body", NULL, FK_BODY, true, true},
};

const char *const filter_op_text[] = {":", ":~", ":", "=", "!=", ">", ">=", "<", "<="};

/* ---- parsing (the parser's state is struct parser, filter_internal.h) ---- */

/* The names this file calls them by; filter_hint.c reports through them too. */
#define quote_for_error filter_quote_for_error
#define fail_hint filter_fail_hint

static size_t column_of(const char *s, size_t off)
{
    size_t col = 1;
    for (size_t i = 0; i < off; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            col++;
    return col;
}

/* Text from the expression, for an error message: controls escaped, cut at 40 bytes. */
void quote_for_error(const char *s, size_t n, char *out, size_t cap)
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
bool fail_hint(struct parser *p, size_t at, const char *hint, const char *fmt, ...)
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

static void skip_ws(struct parser *p)
{
    while (p->pos < p->n && filter_is_space(p->s[p->pos]))
        p->pos++;
}

static bool at_boundary(const struct parser *p, size_t at)
{
    return at >= p->n || filter_is_space(p->s[at]) || p->s[at] == '(' || p->s[at] == ')';
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
        if (!quoted && (filter_is_space(c) || c == '"' || (c == ')' && parens == 0)))
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
    /* dlqx's own engine (rx.h), linear in what it matches. glibc's regcomp is not asked even
     * to vet: stacked repeats ('?+++++++++++) take it seconds to compile. */
    enum rx_error code;
    const char *why = NULL;
    t->re = rx_compile(src.buf, src.len, t->icase ? RX_ICASE : 0, RX_MAX_STATES, &code, &why, NULL);
    if (!t->re) {
        sb_free(&src);
        if (code == RX_TOO_LARGE)
            return fail_hint(p, start, "use smaller repeat counts",
                             "a regex too large: its automaton would have over %d states",
                             RX_MAX_STATES);
        return fail_at(p, start, "invalid regex: %s", why);
    }
    t->has_re = true;
    t->text = sb_detach(&src, &t->len);
    return true;
}

size_t filter_value_end(const struct parser *p, size_t from)
{
    struct parser q = *p;
    struct error scratch;
    struct strbuf a, b;
    sb_init(&a);
    sb_init(&b);
    q.err = &scratch;
    q.failed = false;
    q.pos = from;
    bool ok = from < p->n && read_value(&q, &a, &b, false);
    sb_free(&a);
    sb_free(&b);
    return ok ? q.pos : from;
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
    rx_free(t->re);
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
        snprintf(buf, cap, "header.%s%s", shown, filter_op_text[t->op]);
    } else {
        snprintf(buf, cap, "%s%s", filter_fields[t->field].name, filter_op_text[t->op]);
    }
    return buf;
}

/* Whether the operator works on the field at all; checked before the value is read. */
static bool term_op_ok(struct parser *p, const struct term *t, size_t op_at)
{
    enum fkind k = filter_fields[t->field].kind;
    if (t->field == F_GROUP && (t->op == OP_SUB || t->op == OP_RE || t->op >= OP_GT))
        return fail_hint(p, op_at, "group=g:… or group!=g:…, with the key dlqx groups shows",
                         "group takes a group key");
    if ((k == FK_TEXT || k == FK_BODY) && t->op >= OP_GT)
        return fail_hint(
            p, op_at, "> >= < <= work on attempt, age, size, first_seen, failed_at and header.NAME",
            "%s is text", filter_fields[t->field].name);
    if (k != FK_TEXT && k != FK_BODY && k != FK_HEADER && (t->op == OP_SUB || t->op == OP_RE))
        return fail_hint(p, op_at, "use = != > >= < <=", "%s is a number",
                         filter_fields[t->field].name);
    return true;
}

/* Reads the value's meaning for the field (numbers, durations, times, dialects). */
static bool term_value(struct parser *p, struct term *t, size_t vat)
{
    char label[240];
    field_label(t, label, sizeof label);
    enum fkind k = filter_fields[t->field].kind;
    if ((k == FK_NUMBER || k == FK_SIZE || k == FK_DURATION || k == FK_TIME) && t->op == OP_GLOB)
        t->op = OP_EQ; /* attempt:3 is attempt=3 */
    switch (k) {
    case FK_NUMBER:
        if (!filter_parse_int(t->text, t->len, &t->num))
            return fail_at(p, vat, "expected a number after %s", label);
        break;
    case FK_SIZE:
        if (!filter_parse_size(t->text, t->len, &t->num))
            return fail_hint(p, vat, "bytes, or with a unit: 10k, 2MB", "expected a size after %s",
                             label);
        break;
    case FK_DURATION:
        if (!filter_parse_duration(t->text, t->len, &t->ms))
            return fail_hint(p, vat, "30s, 5m, 1h, 2d, 1w", "expected a duration after %s", label);
        break;
    case FK_TIME:
        if (filter_parse_time(t->text, t->len, &t->ms))
            break;
        if (filter_parse_duration(t->text, t->len, &t->ms)) {
            t->relative = true;
            break;
        }
        return fail_hint(p, vat, "2026-01-02T03:00:00Z, 2026-01-02, or a time ago like 1h",
                         "expected a time after %s", label);
    case FK_HEADER:
        if (t->op != OP_RE && t->op != OP_SUB && t->op != OP_GLOB)
            t->has_num = filter_parse_number(t->text, t->len, &t->dnum, &t->num, &t->num_int);
        if (t->op >= OP_GT && !t->has_num)
            return fail_at(p, vat, "expected a number after %s", label);
        break;
    default:
        break;
    }
    if (t->field == F_GROUP) { /* group:g:… is group=g:… */
        struct error why;
        uint64_t key;
        if (t->op == OP_GLOB)
            t->op = OP_EQ;
        if (!group_key_parse(t->text, t->len, &key, &why))
            return fail_hint(p, vat, why.msg, "expected a group key after %s", label);
        t->num = (int64_t)key;
    }
    if (t->field == F_DIALECT && t->op != OP_SUB && t->op != OP_RE &&
        !filter_has_wildcard(t->glob, t->glob_len)) {
        bool known = false;
        for (size_t i = 0; i < dialect_count() && !known; i++)
            known = filter_ci_eq(t->text, t->len, dialect_at(i)->name);
        if (!known) {
            char shown[200];
            quote_for_error(t->text, t->len, shown, sizeof shown);
            return fail_hint(p, vat, dialect_names(), "unknown dialect \"%s\"", shown);
        }
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
                         filter_ci_eq(p->s + start, 7, "header.");
    if (p->s[start] == '"' || (!header_quoted && (name_end >= p->n || !op_char(p, name_end)))) {
        /* A bare word: a substring (or a glob) of id, type, error or queue. */
        t->field = F_ANY;
        if (!read_value(p, &text, &glob, false))
            goto fail;
        if (!text.len) {
            fail_at(p, start, "an empty search");
            goto fail;
        }
        if (p->s[start] != '"' && !filter_check_word(p, start, p->pos))
            goto fail;
        t->text = sb_detach(&text, &t->len);
        t->glob = sb_detach(&glob, &t->glob_len);
        t->icase = true;
        t->op = OP_SUB;
        if (filter_has_wildcard(t->glob, t->glob_len)) {
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
    if (nlen > 7 && filter_ci_eq(name, 7, "header.")) {
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
            fail_hint(p, name_end,
                      "one of : = != > >= < <=", "expected an operator after the header name");
            goto fail;
        }
    } else {
        int k;
        for (k = 0; k < F_COUNT; k++)
            if (filter_ci_eq(name, nlen, filter_fields[k].name) ||
                (filter_fields[k].alias && filter_ci_eq(name, nlen, filter_fields[k].alias)))
                break;
        if (k == F_HEADER || filter_ci_eq(name, nlen, "header.")) {
            fail_hint(p, start, "header.NAME, with the header's name", "expected a header name");
            goto fail;
        }
        if (k == F_COUNT) {
            filter_unknown_field(p, start, name, nlen);
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
    if (t->op != OP_GLOB && t->op != OP_SUB && t->op != OP_RE && !filter_check_op(p, start, op_at))
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
    t->icase = (t->op == OP_GLOB && filter_fields[t->field].ci) || t->op == OP_SUB;
    if (t->field == F_BODY && t->op == OP_GLOB)
        wrap_glob(t);
done:
    sb_free(&text);
    sb_free(&glob);
    if (t->field != F_ANY && filter_fields[t->field].message)
        p->f->needs_message = true;
    if (t->has_re || t->field == F_FP || t->field == F_GROUP)
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
    bool minus = p->s[at] == '-' && at + 1 < p->n && !filter_is_space(p->s[at + 1]);
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

enum status filter_compile_hints(const char *expr, struct filter **out, size_t *column,
                                 struct error *err, bool hints)
{
    *out = NULL;
    if (column)
        *column = 0;
    struct filter *f = xcalloc(1, sizeof *f);
    struct parser p = {.s = expr ? expr : "", .f = f, .err = err, .hints = hints};
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
        filter_plan(f->root);
    f->scratch = xmalloc(STORE_TEXT_MAX);
    if (f->needs_memo) {
        f->memo = xcalloc(1, sizeof *f->memo);
        f->memo->mask = 4095;
        f->memo->slot = xcalloc(f->memo->mask + 1, sizeof *f->memo->slot);
    }
    *out = f;
    return ST_OK;
}

enum status filter_compile_at(const char *expr, struct filter **out, size_t *column,
                              struct error *err)
{
    return filter_compile_hints(expr, out, column, err, true);
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
