/*
 * filter_hint: the parser's "did you mean": the nearest field name to an unknown one, and the
 * terms that read as a field with a mistyped operator — `error~x`, `type;x`, `header.t~a`,
 * `attempt=>3`, `age>>1h` — which the parser refuses with the form they were meant to have
 * rather than reading them as bare-word searches (a one-character typo that turns
 * `-error:~Declined` into `-"error~Declined"` widens a delete to everything). Pure functions
 * over the expression's text; the parser (filter.c) words the error and checks that the form
 * it suggests compiles.
 */
#include <stdio.h>
#include <string.h>

#include "filter_internal.h"

size_t filter_edit_distance(const char *a, size_t n, const char *b)
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
            size_t cost = filter_lower((unsigned char)a[i - 1]) == (unsigned char)b[j - 1] ? 0 : 1;
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

int filter_near_field(const char *name, size_t n, size_t max)
{
    int best = -1;
    size_t best_d = max + 1;
    for (int k = 0; k < F_COUNT; k++) {
        const char *cand[2] = {filter_fields[k].name, filter_fields[k].alias};
        for (int c = 0; c < 2; c++) {
            if (!cand[c])
                continue;
            size_t d = filter_edit_distance(name, n, cand[c]);
            /* Short names are near only by one edit: "ip" is not "id"'s typo by two. */
            size_t limit = strlen(cand[c]) <= 3 && max > 1 ? 1 : max;
            if (d < best_d && d <= limit) {
                best_d = d;
                best = k;
            }
        }
    }
    return best;
}

static int exact_field(const char *name, size_t n)
{
    for (int k = 0; k < F_COUNT; k++)
        if (filter_ci_eq(name, n, filter_fields[k].name) ||
            (filter_fields[k].alias && filter_ci_eq(name, n, filter_fields[k].alias)))
            return k;
    return -1;
}

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

static bool numeric(enum field f)
{
    enum fkind k = filter_fields[f].kind;
    return k == FK_NUMBER || k == FK_DURATION || k == FK_SIZE || k == FK_TIME;
}

bool filter_word_typo(const char *w, size_t n, struct word_typo *out)
{
    memset(out, 0, sizeof *out);
    size_t i = 0;
    if (n > 7 && filter_ci_eq(w, 7, "header.")) {
        /* Header names hold dots and dashes: only ~ ; ! end one. */
        for (i = 7; i < n && w[i] != '~' && w[i] != ';' && w[i] != '!' && w[i] != '\\'; i++)
            ;
        if (i == 7 || i >= n || w[i] == '\\')
            return false;
        out->field = F_HEADER;
    } else {
        while (i < n && name_char(w[i]))
            i++;
        if (i == 0 || i >= n)
            return false;
        int k = exact_field(w, i);
        if (k < 0 && i >= 3)
            k = filter_near_field(w, i, 1);
        if (k < 0 || k == F_HEADER)
            return false;
        out->field = (enum field)k;
        out->near = !filter_ci_eq(w, i, filter_fields[k].name) &&
                    !(filter_fields[k].alias && filter_ci_eq(w, i, filter_fields[k].alias));
    }
    out->name_len = i;
    out->op_len = 1;
    switch (w[i]) {
    case '~':
        out->op = ":~";
        out->sure = true;
        break;
    case ';':
        out->op = ":";
        out->sure = true;
        break;
    case '!':
        out->op = "!=";
        break;
    case '.':
        out->op = ">";
        break;
    case ',':
        out->op = "<";
        break;
    default:
        return false;
    }
    /* The keys of > and < unshifted: only where a comparison is what the field takes. */
    if ((w[i] == '.' || w[i] == ',') && (out->field == F_HEADER || !numeric(out->field)))
        return false;
    return true;
}

const char *filter_op_typo(const char *run, size_t n)
{
    static const char *const typos[][2] = {
        {"=>", ">="}, {"=<", "<="}, {">>", ">"},   {"<<", "<"},   {"=!", "!="},  {"=~", ":~"},
        {"<>", "!="}, {"><", "!="}, {"!==", "!="}, {">==", ">="}, {"<==", "<="}, {"===", "="},
    };
    for (size_t k = 0; k < sizeof typos / sizeof *typos; k++)
        if (strlen(typos[k][0]) == n && memcmp(run, typos[k][0], n) == 0)
            return typos[k][1];
    return NULL;
}

/* ---- the refusals ---- */

/* Whether a suggested form compiles (its own typos are not looked for). */
static bool compiles(const struct strbuf *expr)
{
    struct filter *f = NULL;
    struct error scratch;
    bool ok = filter_compile_hints(expr->buf ? expr->buf : "", &f, NULL, &scratch, false) == ST_OK;
    filter_free(f);
    return ok;
}

/* The operators as they may be written after a field name. */
static bool valid_op(const char *s, size_t n)
{
    static const char *const ops[] = {":", ":~", "=", "==", "!=", ">", ">=", "<", "<="};
    for (size_t k = 0; k < sizeof ops / sizeof *ops; k++)
        if (strlen(ops[k]) == n && memcmp(s, ops[k], n) == 0)
            return true;
    return false;
}

bool filter_unknown_field(struct parser *p, size_t at, const char *name, size_t n)
{
    char shown[200];
    filter_quote_for_error(name, n, shown, sizeof shown);
    const char *dot = memchr(name, '.', n);
    if (dot && filter_edit_distance(name, (size_t)(dot - name), "header") <= 2)
        return filter_fail_hint(p, at, "did you mean header.NAME?", "unknown field \"%s\"", shown);
    int best = filter_near_field(name, n, 2);
    char hint[300];
    if (best < 0) {
        snprintf(hint, sizeof hint, "to search for the text itself, put it in \"quotes\"");
        return filter_fail_hint(p, at, hint, "unknown field \"%s\"", shown);
    }
    snprintf(hint, sizeof hint, "did you mean %s?", filter_fields[best].name);
    /* The whole term with the name mended, when it then compiles: "did you mean type:x?". */
    size_t op = at + n, k = op;
    while (k < p->n && k - op < 3 && strchr(":=!<>~", p->s[k]) && p->s[k])
        k++;
    size_t end = valid_op(p->s + op, k - op) ? filter_value_end(p, k) : k;
    if (end > k) {
        struct strbuf sug;
        sb_init(&sug);
        sb_adds(&sug, filter_fields[best].name);
        sb_add(&sug, p->s + op, end - op);
        if (compiles(&sug)) {
            char term[200];
            filter_quote_for_error(sug.buf, sug.len, term, sizeof term);
            snprintf(hint, sizeof hint, "did you mean %s?", term);
        }
        sb_free(&sug);
    }
    return filter_fail_hint(p, at, hint, "unknown field \"%s\"", shown);
}

/* A bare word that reads as a field with a mistyped operator (`error~Declined`) is refused
 * with the form meant: read as a search it matches nothing, and `-error~Declined` all. */
bool filter_check_word(struct parser *p, size_t start, size_t end)
{
    /* A keyword in small letters between terms ("dialect:a or dialect:b") would be a search for
     * the word, and AND what the writer meant to OR: refused with the form meant. */
    static const char *const keywords[] = {"OR", "AND", "NOT"};
    for (size_t k = 0; p->hints && k < sizeof keywords / sizeof *keywords; k++) {
        size_t n = strlen(keywords[k]);
        if (end - start == n && filter_ci_eq(p->s + start, n, keywords[k]) &&
            memcmp(p->s + start, keywords[k], n) != 0) {
            char hint[160];
            snprintf(hint, sizeof hint,
                     "the keyword is %s, in capitals; to search for the word, put it in "
                     "\"quotes\"",
                     keywords[k]);
            filter_fail_hint(p, start, hint, "\"%.*s\" is not a keyword", (int)n, p->s + start);
            return false;
        }
    }
    struct word_typo ty;
    if (!p->hints || !filter_word_typo(p->s + start, end - start, &ty))
        return true;
    size_t rest = start + ty.name_len + ty.op_len;
    size_t rest_end = filter_value_end(p, rest); /* a "quoted" value after the word is its value */
    struct strbuf sug;
    sb_init(&sug);
    if (ty.field == F_HEADER)
        sb_add(&sug, p->s + start, ty.name_len);
    else
        sb_adds(&sug, filter_fields[ty.field].name);
    sb_adds(&sug, ty.op);
    sb_add(&sug, p->s + rest, rest_end - rest);
    bool ok = rest_end > rest && compiles(&sug);
    if (!ok && (!ty.sure || rest_end == rest)) {
        sb_free(&sug);
        return true;
    }
    char shown[200], hint[400];
    filter_quote_for_error(p->s + start, (rest_end > end ? rest_end : end) - start, shown,
                           sizeof shown);
    if (ok) {
        char term[200];
        filter_quote_for_error(sug.buf, sug.len, term, sizeof term);
        snprintf(hint, sizeof hint,
                 "did you mean %s? to search for the text itself, put it in \"quotes\"", term);
    } else {
        snprintf(hint, sizeof hint,
                 "a field takes one of : :~ :/ = != > >= < <=; to search for the text itself, "
                 "put it in \"quotes\"");
    }
    sb_free(&sug);
    return filter_fail_hint(p, start, hint, "\"%s\" looks like a field with a mistyped operator",
                            shown);
}

/* After a field and its operator, more operator characters (`attempt=>3`, `age>>1h`) are an
 * operator mistyped when the form meant compiles: "did you mean attempt>=3?". */
bool filter_check_op(struct parser *p, size_t start, size_t op_at)
{
    size_t k = op_at;
    while (k < p->n && k - op_at < 4 && p->s[k] && strchr("=<>!~", p->s[k]))
        k++;
    if (!p->hints || k <= p->pos)
        return true;
    const char *meant = filter_op_typo(p->s + op_at, k - op_at);
    size_t end = meant ? filter_value_end(p, k) : k;
    if (end == k)
        return true;
    struct strbuf sug;
    sb_init(&sug);
    sb_add(&sug, p->s + start, op_at - start);
    sb_adds(&sug, meant);
    sb_add(&sug, p->s + k, end - k);
    bool ok = compiles(&sug);
    if (ok) {
        char term[200], hint[300];
        filter_quote_for_error(sug.buf, sug.len, term, sizeof term);
        snprintf(hint, sizeof hint, "did you mean %s?", term);
        filter_fail_hint(p, op_at, hint, "mistyped operator \"%.*s\"", (int)(k - op_at),
                         p->s + op_at);
    }
    sb_free(&sug);
    return !ok;
}
