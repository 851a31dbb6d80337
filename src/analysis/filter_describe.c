/*
 * filter_describe: printing a compiled filter back as a person should read it, in canonical
 * form that compiles to the same filter, and quoting a value for an expression. It is the
 * inverse of the parser in filter.c and shares only its types and tables (filter_internal.h).
 */
#include "filter.h"

#include <string.h>

#include "filter_internal.h"

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
        quote = filter_is_space(c) || c == '"' || c == '(' || c == ')' ||
                (!glob_form && c == '\\') ||
                (bare && (c == ':' || c == '=' || c == '<' || c == '>' || c == '!'));
        if (glob_form && c == '\\')
            i++;
    }
    struct word_typo ty;
    quote = quote || (bare && filter_word_typo(s, n, &ty)); /* "error~x" is refused bare */
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
            plain = !filter_is_space(c) && c != '"' && c != '(' && c != ')' && c != ':' &&
                    c != '=' && c != '<' && c != '>' && c != '!' && c != '\\';
        }
        if (plain)
            sb_add(out, t->header, t->header_len);
        else
            put_value(out, t->header, t->header_len, false, false, true);
    } else {
        sb_adds(out, filter_fields[t->field].name);
    }
    sb_adds(out, filter_op_text[t->op]);
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

static size_t searches(const struct node *nd, struct strbuf *out)
{
    if (nd->kind == N_TERM) {
        if (nd->t->field != F_ANY)
            return 0;
        if (out->len)
            sb_addc(out, ' ');
        describe_term(nd->t, out);
        return 1;
    }
    size_t n = 0;
    for (size_t i = 0; i < nd->n; i++)
        n += searches(nd->kids[i], out);
    return n;
}

size_t filter_searches(const struct filter *f, struct strbuf *out)
{
    struct strbuf own;
    sb_init(&own);
    size_t n = f && f->root ? searches(f->root, &own) : 0;
    if (own.len && out)
        sb_add(out, own.buf, own.len);
    sb_free(&own);
    return n;
}
