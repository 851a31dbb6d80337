/*
 * restamp_diff: what a copy changes row by row (the target, every property, every header by
 * name as "kind:value", and the body line by line: JSON re-indented token by token, else text,
 * else hex lines, with an LCS line diff), and the diff's JSON form for the journal.
 */
#include "restamp_diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "body.h"
#include "hval.h"
#include "hval_json.h"
#include "json_out.h"
#include "sha256.h"
#include "util.h"

/* Beyond this many lines on either side, or this many bytes, a body is one pair of rows. */
#define DIFF_BODY_MAX_LINES 2000
#define DIFF_BODY_MAX_BYTES (1u << 20)

const char *diff_section_name(enum diff_section s)
{
    static const char *const names[] = {"target", "property", "header", "body"};
    return (size_t)s < sizeof names / sizeof *names ? names[s] : "?";
}

const char *diff_op_name(enum diff_op op)
{
    static const char *const names[] = {"same", "changed", "added", "removed"};
    return (size_t)op < sizeof names / sizeof *names ? names[op] : "?";
}

char diff_op_mark(enum diff_op op)
{
    static const char marks[] = {' ', '~', '+', '-'};
    return (size_t)op < sizeof marks ? marks[op] : '?';
}

/* A row's text as a C string: a NUL byte (which a C string cannot hold) is written \x00. */
static char *text_dup(const void *data, size_t len)
{
    const unsigned char *p = data;
    if (!p)
        return NULL;
    if (!memchr(p, '\0', len))
        return xstrndup((const char *)p, len);
    struct strbuf sb;
    sb_init(&sb);
    for (size_t i = 0; i < len; i++) {
        if (p[i])
            sb_addc(&sb, (char)p[i]);
        else
            sb_adds(&sb, "\\x00");
    }
    return sb_detach(&sb, NULL);
}

static size_t rows_cap(struct diff *d, size_t *cap)
{
    xgrow((void **)&d->rows, cap, d->n + 1, sizeof *d->rows);
    return d->n++;
}

/* Appends a row; old/new NULL when absent. The op follows from them unless forced. */
static void add_row(struct diff *d, size_t *cap, enum diff_section sec, const char *name,
                    const void *old, size_t olen, const void *nw, size_t nlen)
{
    enum diff_op op = !old                                                    ? DIFF_ADDED
                      : !nw                                                   ? DIFF_REMOVED
                      : olen == nlen && (!olen || memcmp(old, nw, olen) == 0) ? DIFF_SAME
                                                                              : DIFF_CHANGED;
    size_t k = rows_cap(d, cap);
    struct diff_row *r = &d->rows[k];
    r->section = sec;
    r->op = op;
    r->name = name ? xstrdup(name) : NULL;
    r->old_text = text_dup(old, olen);
    r->new_text = text_dup(nw, nlen);
    if (op != DIFF_SAME)
        d->changed++;
}

/* ---- properties and headers --------------------------------------------------------- */

static void prop_text(const struct props *p, enum prop_flag f, struct strbuf *out)
{
    const struct bytes *s = props_string(p, f);
    if (s) {
        sb_add(out, s->len ? (const void *)s->data : "", s->len);
    } else if (f == PROP_delivery_mode) {
        sb_addf(out, "%u", (unsigned)p->delivery_mode);
    } else if (f == PROP_priority) {
        sb_addf(out, "%u", (unsigned)p->priority);
    } else {
        struct hval v = hval_uint(HV_TIMESTAMP, p->timestamp);
        hval_format_scalar(&v, out);
    }
}

/* Whether property f, set on both sides, has the same value (then its two texts are the same:
 * prop_text is a function of the value). */
static bool prop_same(const struct props *a, const struct props *b, enum prop_flag f)
{
    const struct bytes *sa = props_string(a, f), *sb = props_string(b, f);
    if (sa || sb)
        return sa && sb && bytes_eq(sa, sb);
    if (f == PROP_delivery_mode)
        return a->delivery_mode == b->delivery_mode;
    if (f == PROP_priority)
        return a->priority == b->priority;
    return a->timestamp == b->timestamp;
}

/* changes_only: a property set to the same value on both sides (a row the same, left out) is
 * not rendered. */
static void diff_props(const struct props *a, const struct props *b, struct diff *d, size_t *cap,
                       bool changes_only)
{
    struct strbuf x, y;
    sb_init(&x);
    sb_init(&y);
    for (unsigned f = 0; f < PROP_COUNT; f++) {
        bool ha = props_has(a, (enum prop_flag)f), hb = props_has(b, (enum prop_flag)f);
        if ((!ha && !hb) || (changes_only && ha && hb && prop_same(a, b, (enum prop_flag)f)))
            continue;
        sb_reset(&x);
        sb_reset(&y);
        if (ha)
            prop_text(a, (enum prop_flag)f, &x);
        if (hb)
            prop_text(b, (enum prop_flag)f, &y);
        const char *tx = ha ? (x.buf ? x.buf : "") : NULL, *ty = hb ? (y.buf ? y.buf : "") : NULL;
        add_row(d, cap, DIFF_PROPERTY, prop_name((enum prop_flag)f), tx, x.len, ty, y.len);
    }
    sb_free(&x);
    sb_free(&y);
}

/* "kind:value": scalars as the detail view shows them, arrays and tables as their snapshot
 * JSON (hval_json), which keeps the kinds inside. */
static void hval_text(const struct hval *v, struct strbuf *out)
{
    sb_adds(out, hkind_name(v->kind));
    sb_addc(out, ':');
    if (v->kind == HV_ARRAY || v->kind == HV_TABLE) {
        json_t *j = hval_to_json(v);
        char *s = j ? json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY) : NULL;
        json_decref(j);
        if (s) {
            sb_adds(out, s);
            free(s);
            return;
        }
    }
    hval_format_scalar(v, out);
}

struct hkey {
    const struct bytes *key;
    size_t pos;   /* index in its table */
    size_t other; /* the paired entry's index in the other table, or SIZE_MAX */
};

static int hkey_cmp(const void *pa, const void *pb)
{
    const struct hkey *a = pa, *b = pb;
    size_t n = a->key->len < b->key->len ? a->key->len : b->key->len;
    int c = n ? memcmp(a->key->data, b->key->data, n) : 0;
    if (c)
        return c;
    if (a->key->len != b->key->len)
        return a->key->len < b->key->len ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static struct hkey *hkeys_sorted(const struct htable *t)
{
    struct hkey *k = xcalloc(t->n ? t->n : 1, sizeof *k);
    for (size_t i = 0; i < t->n; i++)
        k[i] = (struct hkey){&t->e[i].key, i, SIZE_MAX};
    if (t->n > 24) {
        qsort(k, t->n, sizeof *k, hkey_cmp);
        return k;
    }
    /* A few headers (most tables): an insertion sort, without qsort's buffer and indirect calls.
     * hkey_cmp is a total order (positions differ), so the order is qsort's. */
    for (size_t i = 1; i < t->n; i++) {
        struct hkey v = k[i];
        size_t j = i;
        for (; j > 0 && hkey_cmp(&k[j - 1], &v) > 0; j--)
            k[j] = k[j - 1];
        k[j] = v;
    }
    return k;
}

/* The n-th header of a name in one table is paired with the n-th of that name in the other
 * (duplicates are kept on the wire). Sorted, so a hostile table costs n log n. */
/* changes_only: a header the same in kind and value on both sides (its row would be the same
 * and left out) is not rendered at all — an x-death table kept by a move is most of the work. */
static void diff_headers(const struct htable *a, const struct htable *b, struct diff *d,
                         size_t *cap, bool changes_only)
{
    struct hkey *ka = hkeys_sorted(a), *kb = hkeys_sorted(b);
    size_t *pair_a = xcalloc(a->n ? a->n : 1, sizeof *pair_a);
    bool *paired_b = xcalloc(b->n ? b->n : 1, sizeof *paired_b);
    for (size_t i = 0; i < a->n; i++)
        pair_a[i] = SIZE_MAX;
    size_t i = 0, j = 0;
    while (i < a->n && j < b->n) {
        /* Compare by name only; within one name both runs are in table order. */
        struct hkey x = ka[i], y = kb[j];
        x.pos = y.pos = 0;
        int c = hkey_cmp(&x, &y);
        if (c < 0) {
            i++;
        } else if (c > 0) {
            j++;
        } else {
            pair_a[ka[i].pos] = kb[j].pos;
            paired_b[kb[j].pos] = true;
            i++;
            j++;
        }
    }
    struct strbuf x, y;
    sb_init(&x);
    sb_init(&y);
    for (size_t k = 0; k < a->n + b->n; k++) {
        bool from_a = k < a->n;
        size_t ia = from_a ? k : SIZE_MAX, ib = from_a ? pair_a[k] : k - a->n;
        if (!from_a && paired_b[ib])
            continue;
        const struct hentry *ea = ia != SIZE_MAX ? &a->e[ia] : NULL;
        const struct hentry *eb = ib != SIZE_MAX ? &b->e[ib] : NULL;
        const struct hentry *named = ea ? ea : eb;
        if (!named || (changes_only && ea && eb && hval_equal(&ea->val, &eb->val)))
            continue;
        sb_reset(&x);
        sb_reset(&y);
        if (ea)
            hval_text(&ea->val, &x);
        if (eb)
            hval_text(&eb->val, &y);
        char *name = text_dup(named->key.len ? (const void *)named->key.data : "", named->key.len);
        size_t before = d->changed;
        add_row(d, cap, DIFF_HEADER, name, ea ? x.buf : NULL, x.len, eb ? y.buf : NULL, y.len);
        /* The same text in another kind's clothing is still a change. */
        struct diff_row *r = &d->rows[d->n - 1];
        if (r->op == DIFF_SAME && ea && eb && !hval_equal(&ea->val, &eb->val)) {
            r->op = DIFF_CHANGED;
            d->changed = before + 1;
        }
        free(name);
    }
    sb_free(&x);
    sb_free(&y);
    free(ka);
    free(kb);
    free(pair_a);
    free(paired_b);
}

/* ---- the body ----------------------------------------------------------------------- */

struct lines {
    struct strbuf text;
    const char **p;
    size_t *len;
    size_t n, cap, lcap;
};

static void lines_split(struct lines *l)
{
    const char *s = l->text.buf ? l->text.buf : "";
    size_t start = 0;
    for (size_t i = 0; i <= l->text.len; i++) {
        if (i < l->text.len && s[i] != '\n')
            continue;
        if (i == l->text.len && i == start)
            break; /* a final newline ends the last line; it does not start one */
        xgrow((void **)&l->p, &l->cap, l->n + 1, sizeof *l->p);
        xgrow((void **)&l->len, &l->lcap, l->n + 1, sizeof *l->len);
        l->p[l->n] = s + start;
        l->len[l->n++] = i - start;
        start = i + 1;
    }
}

static void lines_free(struct lines *l)
{
    sb_free(&l->text);
    free(l->p);
    free(l->len);
}

/* Whether a content type says JSON: it contains "json", in any case. */
static bool says_json(const struct bytes *ct)
{
    for (size_t i = 0; ct && i + 4 <= ct->len; i++)
        if (strncasecmp((const char *)ct->data + i, "json", 4) == 0)
            return true;
    return false;
}

static bool ct_json(const struct props *p)
{
    return says_json(props_string(p, PROP_content_type));
}

static json_t *json_parse(const struct bytes *b, json_error_t *je)
{
    return json_loadb(b && b->len ? (const char *)b->data : "", b ? b->len : 0,
                      JSON_DECODE_ANY | JSON_ALLOW_NUL, je);
}

static bool parses(const struct bytes *b)
{
    json_error_t je;
    json_t *j = json_parse(b, &je);
    json_decref(j);
    return j != NULL;
}

static bool is_text(const struct bytes *b)
{
    return !(b->len && memchr(b->data, '\0', b->len)) && utf8_valid(b->data, b->len);
}

enum body_mode { BM_JSON, BM_TEXT, BM_HEX };

static void render(const struct bytes *b, enum body_mode mode, struct lines *l)
{
    const void *p = b->len ? (const void *)b->data : "";
    sb_init(&l->text);
    if (mode == BM_JSON) {
        /* body_render.c re-indents token by token: number text, escapes and duplicate keys stay as
         * sent (a jansson round trip would print 99.90 as 99.900000000000006). */
        struct body_info info;
        struct bytes ct = {16, (unsigned char *)"application/json"};
        body_classify(p, b->len, &ct, NULL, &info);
        if (info.kind == BODY_JSON && info.json_valid)
            body_render(&info, p, b->len, &l->text, BODY_RENDER_DEFAULT, BODY_NO_LIMIT);
        else
            mode = BM_TEXT;
        body_info_free(&info);
    }
    if (mode == BM_TEXT)
        sb_add(&l->text, p, b->len);
    else if (mode == BM_HEX)
        body_hexdump(p, b->len, 0, &l->text);
    lines_split(l);
}

static void body_summary_row(struct diff *d, size_t *cap, const struct bytes *a,
                             const struct bytes *b)
{
    char sa[65], sb[65];
    sha256_hex(a->len ? (const void *)a->data : "", a->len, sa);
    sha256_hex(b->len ? (const void *)b->data : "", b->len, sb);
    char *ta = xasprintf("(%zu bytes, sha256 %s)", a->len, sa);
    char *tb = xasprintf("(%zu bytes, sha256 %s)", b->len, sb);
    if (bytes_eq(a, b)) {
        add_row(d, cap, DIFF_BODY, NULL, ta, strlen(ta), tb, strlen(tb));
    } else {
        add_row(d, cap, DIFF_BODY, NULL, ta, strlen(ta), NULL, 0);
        add_row(d, cap, DIFF_BODY, NULL, NULL, 0, tb, strlen(tb));
    }
    free(ta);
    free(tb);
}

static bool line_eq(const struct lines *a, size_t i, const struct lines *b, size_t j)
{
    return a->len[i] == b->len[j] && memcmp(a->p[i], b->p[j], a->len[i]) == 0;
}

static void diff_body(const struct message *old, const struct outgoing *copy, struct diff *d,
                      size_t *cap, bool changes_only)
{
    const struct bytes *a = &old->body, *b = &copy->body;
    if (changes_only && bytes_eq(a, b))
        return;
    if (a->len > DIFF_BODY_MAX_BYTES || b->len > DIFF_BODY_MAX_BYTES) {
        body_summary_row(d, cap, a, b);
        return;
    }
    enum body_mode mode = BM_HEX;
    if (ct_json(&old->props) && ct_json(&copy->props) && parses(a) && parses(b))
        mode = BM_JSON;
    else if (is_text(a) && is_text(b))
        mode = BM_TEXT;
    struct lines la, lb;
    memset(&la, 0, sizeof la);
    memset(&lb, 0, sizeof lb);
    render(a, mode, &la);
    render(b, mode, &lb);
    if (la.n > DIFF_BODY_MAX_LINES || lb.n > DIFF_BODY_MAX_LINES) {
        body_summary_row(d, cap, a, b);
        lines_free(&la);
        lines_free(&lb);
        return;
    }
    /* Common prefix and suffix, then an LCS table over what is left (at most 2000²). */
    size_t pre = 0, suf = 0;
    while (pre < la.n && pre < lb.n && line_eq(&la, pre, &lb, pre))
        pre++;
    while (suf < la.n - pre && suf < lb.n - pre &&
           line_eq(&la, la.n - 1 - suf, &lb, lb.n - 1 - suf))
        suf++;
    size_t n = la.n - pre - suf, m = lb.n - pre - suf, w = m + 1;
    uint16_t *t = xcalloc((n + 1) * w, sizeof *t);
    for (size_t i = n; i-- > 0;)
        for (size_t j = m; j-- > 0;)
            t[i * w + j] = line_eq(&la, pre + i, &lb, pre + j)
                               ? (uint16_t)(t[(i + 1) * w + j + 1] + 1)
                               : (t[(i + 1) * w + j] >= t[i * w + j + 1] ? t[(i + 1) * w + j]
                                                                         : t[i * w + j + 1]);
    for (size_t k = 0; k < pre; k++)
        add_row(d, cap, DIFF_BODY, NULL, la.p[k], la.len[k], lb.p[k], lb.len[k]);
    size_t i = 0, j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && line_eq(&la, pre + i, &lb, pre + j)) {
            add_row(d, cap, DIFF_BODY, NULL, la.p[pre + i], la.len[pre + i], lb.p[pre + j],
                    lb.len[pre + j]);
            i++;
            j++;
        } else if (i < n && (j == m || t[(i + 1) * w + j] >= t[i * w + j + 1])) {
            add_row(d, cap, DIFF_BODY, NULL, la.p[pre + i], la.len[pre + i], NULL, 0);
            i++;
        } else {
            add_row(d, cap, DIFF_BODY, NULL, NULL, 0, lb.p[pre + j], lb.len[pre + j]);
            j++;
        }
    }
    for (size_t k = 0; k < suf; k++)
        add_row(d, cap, DIFF_BODY, NULL, la.p[la.n - suf + k], la.len[la.n - suf + k],
                lb.p[lb.n - suf + k], lb.len[lb.n - suf + k]);
    free(t);
    lines_free(&la);
    lines_free(&lb);
}

static void diff_all(const struct message *old, const struct outgoing *copy, bool changes_only,
                     struct diff *out)
{
    memset(out, 0, sizeof *out);
    size_t cap = 0;
    /* changes_only: a target the same on both sides (a row the same, left out) is not added. */
    if (!changes_only || !bytes_eq(&old->exchange, &copy->exchange))
        add_row(out, &cap, DIFF_TARGET, "exchange",
                old->exchange.len ? (const void *)old->exchange.data : "", old->exchange.len,
                copy->exchange.len ? (const void *)copy->exchange.data : "", copy->exchange.len);
    if (!changes_only || !bytes_eq(&old->routing_key, &copy->routing_key))
        add_row(out, &cap, DIFF_TARGET, "routing_key",
                old->routing_key.len ? (const void *)old->routing_key.data : "",
                old->routing_key.len,
                copy->routing_key.len ? (const void *)copy->routing_key.data : "",
                copy->routing_key.len);
    diff_props(&old->props, &copy->props, out, &cap, changes_only);
    struct htable empty = {0, 0, NULL, false, false};
    diff_headers(old->headers ? old->headers : &empty, copy->headers ? copy->headers : &empty, out,
                 &cap, changes_only);
    diff_body(old, copy, out, &cap, changes_only);
}

void restamp_diff(const struct message *old, const struct outgoing *copy, struct diff *out)
{
    diff_all(old, copy, false, out);
}

json_t *restamp_changes_json(const struct message *old, const struct outgoing *copy)
{
    struct diff d;
    diff_all(old, copy, true, &d);
    json_t *j = diff_to_json(&d);
    diff_free(&d);
    return j;
}

/* One text of a row as diff_to_json's text_json holds it, written as json_dumps writes it;
 * false (the caller falls back to jansson) for what is not valid UTF-8, which text_json holds
 * as {"base64": …}. */
static bool text_out(struct strbuf *sb, const char *s)
{
    if (!s) {
        sb_adds(sb, "null");
        return true;
    }
    size_t n = strlen(s);
    return utf8_valid(s, n) && json_out_string(sb, s, n);
}

/* diff_to_json(d) dumped with JSON_COMPACT | JSON_PRESERVE_ORDER, written directly; false
 * when a text needs jansson's own dump. */
static bool diff_text(struct strbuf *sb, const struct diff *d)
{
    bool first = true;
    sb_addc(sb, '[');
    for (size_t i = 0; i < d->n; i++) {
        const struct diff_row *r = &d->rows[i];
        if (r->op == DIFF_SAME)
            continue;
        sb_adds(sb, first ? "{\"section\":\"" : ",{\"section\":\"");
        first = false;
        /* The section's and op's names are lower-case letters: as json_dumps writes them. */
        sb_adds(sb, diff_section_name(r->section));
        sb_adds(sb, "\",\"op\":\"");
        sb_adds(sb, diff_op_name(r->op));
        sb_adds(sb, "\",\"name\":");
        if (!text_out(sb, r->name))
            return false;
        sb_adds(sb, ",\"old\":");
        if (!text_out(sb, r->old_text))
            return false;
        sb_adds(sb, ",\"new\":");
        if (!text_out(sb, r->new_text))
            return false;
        sb_addc(sb, '}');
    }
    sb_addc(sb, ']');
    return true;
}

char *restamp_changes_text(const struct message *old, const struct outgoing *copy, size_t *len)
{
    struct diff d;
    diff_all(old, copy, true, &d);
    struct strbuf sb;
    sb_init(&sb);
    sb_grow(&sb, 1024); /* a re-stamp's few changed rows, in one allocation */
    char *out;
    if (diff_text(&sb, &d)) {
        out = sb_detach(&sb, len);
    } else {
        sb_free(&sb);
        json_t *j = diff_to_json(&d);
        out = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
        *len = out ? strlen(out) : 0;
        json_decref(j);
    }
    diff_free(&d);
    return out;
}

void diff_free(struct diff *d)
{
    for (size_t i = 0; d && i < d->n; i++) {
        free(d->rows[i].name);
        free(d->rows[i].old_text);
        free(d->rows[i].new_text);
    }
    if (d) {
        free(d->rows);
        memset(d, 0, sizeof *d);
    }
}

static json_t *text_json(const char *s)
{
    return s ? bytes_to_json(s, strlen(s)) : json_null();
}

json_t *diff_to_json(const struct diff *d)
{
    json_t *a = json_array();
    for (size_t i = 0; i < d->n; i++) {
        const struct diff_row *r = &d->rows[i];
        if (r->op == DIFF_SAME)
            continue;
        json_t *o = json_object();
        json_object_set_new(o, "section", json_string(diff_section_name(r->section)));
        json_object_set_new(o, "op", json_string(diff_op_name(r->op)));
        json_object_set_new(o, "name", text_json(r->name));
        json_object_set_new(o, "old", text_json(r->old_text));
        json_object_set_new(o, "new", text_json(r->new_text));
        json_array_append_new(a, o);
    }
    return a;
}
