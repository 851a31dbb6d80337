/*
 * detail: the document (lines, spans, wrapping of untrusted values), the body section, and
 * detail_render, which puts every section together in order.
 */
#include "detail.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"

const char *detail_section_title(enum detail_section s)
{
    static const char *const titles[DSEC_COUNT] = {
        [DSEC_SUMMARY] = "Summary",
        [DSEC_DEATH] = "Death history",
        [DSEC_REPLAY] = "Replay stamps",
        [DSEC_PATTERNS] = "Pattern headers",
        [DSEC_PROPERTIES] = "AMQP properties and delivery",
        [DSEC_HEADERS] = "Headers",
        [DSEC_DIALECT] = "Dialect",
        [DSEC_BODY] = "Body",
    };
    return (unsigned)s < DSEC_COUNT ? titles[s] : "?";
}

/* ---- lines ------------------------------------------------------------------------------ */

/* A line being put together: its text and its spans. */
struct lbuf {
    struct strbuf sb;
    struct detail_span spans[DETAIL_MAX_SPANS];
    uint8_t n;
    size_t cols; /* display columns so far */
};

static void lb_init(struct lbuf *lb)
{
    memset(lb, 0, sizeof *lb);
    sb_init(&lb->sb);
}

/* Appends safe text as a span of its own style. */
static void lb_span(struct lbuf *lb, enum detail_style st, const char *safe, size_t len)
{
    if (!len)
        return;
    if (lb->n < DETAIL_MAX_SPANS)
        lb->spans[lb->n++] = (struct detail_span){(uint32_t)lb->sb.len, (uint32_t)len, st};
    sb_add(&lb->sb, safe, len);
    lb->cols += sanitize_width(safe, len);
}

static void lb_pad(struct lbuf *lb, size_t to_cols)
{
    while (lb->cols < to_cols) {
        sb_addc(&lb->sb, ' ');
        lb->cols++;
    }
}

static struct detail_line *push(struct detail_doc *doc)
{
    xgrow((void **)&doc->lines, &doc->cap, doc->n + 1, sizeof *doc->lines);
    struct detail_line *l = &doc->lines[doc->n++];
    memset(l, 0, sizeof *l);
    l->section = doc->section;
    return l;
}

/* Adds the line (and empties lb). */
static void lb_commit(struct detail_doc *doc, struct lbuf *lb, int indent, enum detail_style st)
{
    struct detail_line *l = push(doc);
    if (!lb->sb.buf)
        sb_adds(&lb->sb, "");
    l->text = sb_detach(&lb->sb, &l->len);
    l->style = st;
    l->indent = indent < 0 ? 0 : indent;
    l->n_spans = lb->n;
    memcpy(l->spans, lb->spans, sizeof l->spans);
    lb_init(lb);
}

void detail_add_safe(struct detail_doc *doc, int indent, enum detail_style style, const char *safe,
                     size_t len)
{
    struct detail_line *l = push(doc);
    l->text = xstrndup(safe, len);
    l->len = len;
    l->style = style;
    l->indent = indent < 0 ? 0 : indent;
}

void detail_heading(struct detail_doc *doc, enum detail_section s)
{
    detail_heading_titled(doc, s, detail_section_title(s));
}

void detail_heading_titled(struct detail_doc *doc, enum detail_section s, const char *title)
{
    if (doc->n)
        detail_add_safe(doc, 0, DS_NORMAL, "", 0);
    doc->section = s;
    const char *t = title ? title : detail_section_title(s);
    detail_add_safe(doc, 0, DS_TITLE, t, strlen(t));
    doc->lines[doc->n - 1].heading = true;
}

void detail_doc_free(struct detail_doc *doc)
{
    for (size_t i = 0; i < doc->n; i++)
        free(doc->lines[i].text);
    free(doc->lines);
    memset(doc, 0, sizeof *doc);
}

/* ---- wrapping --------------------------------------------------------------------------- */

static unsigned san_flags(const struct detail_doc *doc)
{
    return (doc->flags & DETAIL_ASCII) ? SAN_ASCII : 0;
}

/* The bytes the sanitizer treats as one unit: a well-formed UTF-8 sequence, else one byte. */
static size_t unit_len(const unsigned char *s, size_t n)
{
    if (s[0] < 0xC2)
        return 1;
    size_t want = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : 2;
    return want <= n && utf8_valid(s, want) ? want : 1;
}

/* Appends to out the safe form of the units of s from *pos that fit avail columns, breaking
 * after a space when there is one in the last two thirds of the line, and never inside a
 * character or an escape. Advances *pos past the line and the spaces that end it. */
static void wrap_chunk(const unsigned char *s, size_t n, size_t *pos, size_t avail, unsigned san,
                       struct strbuf *out)
{
    size_t i = *pos, start = out->len, cols = 0;
    size_t brk_in = 0, brk_out = 0, brk_cols = 0;
    bool full = false;
    sb_add(out, "", 0);
    while (i < n) {
        size_t k = unit_len(s + i, n - i), before = out->len, w;
        if (s[i] >= 0x20 && s[i] < 0x7f) {
            sb_addc(out, (char)s[i]);
            w = 1;
        } else {
            sanitize_append(out, s + i, k, san);
            w = sanitize_width(out->buf + before, out->len - before);
        }
        if (cols + w > avail && cols > 0) {
            out->len = before;
            out->buf[before] = '\0';
            full = true;
            break;
        }
        cols += w;
        i += k;
        if (s[i - k] == ' ') {
            brk_in = i;
            brk_out = out->len;
            brk_cols = cols;
        }
    }
    /* A line that ends just before a space needs no earlier break. */
    if (full && s[i] != ' ' && brk_in > *pos && brk_cols * 3 >= avail) {
        out->len = brk_out;
        i = brk_in;
    }
    if (full) {
        while (out->len > start && out->buf[out->len - 1] == ' ')
            out->len--;
        out->buf[out->len] = '\0';
        while (i < n && s[i] == ' ')
            i++;
    }
    *pos = i;
}

static size_t avail_at(const struct detail_doc *doc, size_t col)
{
    if (doc->wrap <= 0)
        return 4096;
    size_t w = (size_t)doc->wrap;
    return w > col + 16 ? w - col : 16;
}

static void more_bytes(struct detail_doc *doc, int indent, size_t more)
{
    if (more)
        detail_add_textf(doc, indent, DS_DIM, "%s %zu more bytes", detail_glyph_more(doc), more);
}

void detail_add_kv(struct detail_doc *doc, int indent, const struct detail_kv *kv)
{
    unsigned san = san_flags(doc);
    struct lbuf lb;
    lb_init(&lb);
    struct strbuf t;
    sb_init(&t);
    if (kv->label) {
        size_t n = kv->label_len == SIZE_MAX ? strlen(kv->label) : kv->label_len;
        sanitize_fit(&t, kv->label, n, 60, san);
        lb_span(&lb, DS_LABEL, t.buf, t.len);
        sb_reset(&t);
    }
    if (kv->label_w > 0 || lb.cols > 0)
        lb_pad(&lb, lb.cols + 2 > (size_t)kv->label_w + 2 ? lb.cols + 2 : (size_t)kv->label_w + 2);
    if (kv->tag) {
        size_t at = lb.cols + (size_t)(kv->tag_w > 0 ? kv->tag_w : 0);
        sanitize_append(&t, kv->tag, strlen(kv->tag), san);
        lb_span(&lb, DS_DIM, t.buf, t.len);
        sb_reset(&t);
        lb_pad(&lb, (lb.cols > at ? lb.cols : at) + 1);
    }
    size_t col = (size_t)(indent < 0 ? 0 : indent) + lb.cols;
    const unsigned char *v = kv->value ? kv->value : (const unsigned char *)"";
    size_t n = kv->value_len == SIZE_MAX ? strlen((const char *)v) : kv->value_len;
    if (!kv->value)
        n = 0;
    size_t pos = 0, avail = avail_at(doc, col);
    int lines = 0;
    if (kv->value && n == 0) {
        /* An empty string is shown as one, not as nothing. */
        v = (const unsigned char *)"\"\"";
        n = 2;
    }
    int cont = (int)col;
    do {
        wrap_chunk(v, n, &pos, avail, san, &t);
        if (lines == 0) {
            lb_span(&lb, kv->style, t.buf, t.len);
        } else {
            lb_commit(doc, &lb, lines == 1 ? indent : cont, kv->style);
            lb_span(&lb, kv->style, t.buf, t.len);
        }
        sb_reset(&t);
        lines++;
    } while (pos < n && lines < DETAIL_VALUE_LINES_MAX);
    size_t last_cols = lb.cols + (lines == 1 ? (size_t)(indent < 0 ? 0 : indent) : col);
    if (kv->meaning && *kv->meaning) {
        /* The program's own text, sanitized all the same (DETAIL_ASCII, and to be sure). */
        struct strbuf m;
        sb_init(&m);
        sanitize_append(&m, kv->meaning, strlen(kv->meaning), san);
        size_t mw = sanitize_width(m.buf, m.len);
        if (doc->wrap <= 0 || last_cols + 3 + mw <= (size_t)doc->wrap || lb.sb.len == 0) {
            if (n)
                lb_pad(&lb, lb.cols + 3);
            lb_span(&lb, DS_DIM, m.buf, m.len);
            lb_commit(doc, &lb, lines == 1 ? indent : cont, kv->style);
        } else {
            lb_commit(doc, &lb, lines == 1 ? indent : cont, kv->style);
            const unsigned char *mp = (const unsigned char *)kv->meaning;
            size_t mpos = 0, mlen = strlen(kv->meaning);
            while (mpos < mlen) {
                wrap_chunk(mp, mlen, &mpos, avail, san, &t);
                detail_add_safe(doc, cont, DS_DIM, t.buf, t.len);
                sb_reset(&t);
            }
        }
        sb_free(&m);
    } else {
        lb_commit(doc, &lb, lines == 1 ? indent : cont, kv->style);
    }
    if (pos < n)
        more_bytes(doc, cont, n - pos);
    sb_free(&t);
    sb_free(&lb.sb);
}

void detail_add_field(struct detail_doc *doc, int indent, int label_w, const char *label,
                      const char *value, enum detail_style style, const char *meaning)
{
    detail_add_fieldb(doc, indent, label_w, label, value, value ? strlen(value) : 0, style,
                      meaning);
}

void detail_add_fieldb(struct detail_doc *doc, int indent, int label_w, const char *label,
                       const void *value, size_t len, enum detail_style style, const char *meaning)
{
    struct detail_kv kv = {
        .label = label,
        .label_len = SIZE_MAX,
        .label_w = label_w,
        .value = value,
        .value_len = value ? len : 0,
        .style = style,
        .meaning = meaning,
    };
    detail_add_kv(doc, indent, &kv);
}

void detail_add_text(struct detail_doc *doc, int indent, enum detail_style style, const void *data,
                     size_t len)
{
    const unsigned char *s = data ? data : (const unsigned char *)"";
    if (!data)
        len = 0;
    struct strbuf t;
    sb_init(&t);
    size_t pos = 0;
    int lines = 0;
    indent = indent < 0 ? 0 : indent;
    do {
        int at = lines ? indent + 2 : indent;
        wrap_chunk(s, len, &pos, avail_at(doc, (size_t)at), san_flags(doc), &t);
        detail_add_safe(doc, at, style, t.buf, t.len);
        sb_reset(&t);
        lines++;
    } while (pos < len && lines < DETAIL_VALUE_LINES_MAX);
    if (pos < len)
        more_bytes(doc, indent + 2, len - pos);
    sb_free(&t);
}

void detail_add_textf(struct detail_doc *doc, int indent, enum detail_style style, const char *fmt,
                      ...)
{
    struct strbuf sb;
    sb_init(&sb);
    va_list ap;
    va_start(ap, fmt);
    sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    detail_add_text(doc, indent, style, sb.buf, sb.len);
    sb_free(&sb);
}

/* ---- small helpers ---------------------------------------------------------------------- */

const char *detail_glyph_times(const struct detail_doc *doc)
{
    return (doc->flags & DETAIL_ASCII) ? "x" : "\xc3\x97";
}

const char *detail_glyph_arrow(const struct detail_doc *doc)
{
    return (doc->flags & DETAIL_ASCII) ? "->" : "\xe2\x86\x92";
}

const char *detail_glyph_done(const struct detail_doc *doc)
{
    return (doc->flags & DETAIL_ASCII) ? "+" : "\xe2\x9c\x93";
}

const char *detail_glyph_more(const struct detail_doc *doc)
{
    return (doc->flags & DETAIL_ASCII) ? "..." : "\xe2\x80\xa6";
}

void detail_time(int64_t ms, int64_t now_ms, char out[DETAIL_TIME_MAX])
{
    time_format_ago(ms, now_ms, out);
}

/* ---- reading the doc -------------------------------------------------------------------- */

void detail_to_text(const struct detail_doc *doc, struct strbuf *out)
{
    for (size_t i = 0; i < doc->n; i++) {
        const struct detail_line *l = &doc->lines[i];
        for (int k = 0; k < l->indent && l->len; k++)
            sb_addc(out, ' ');
        sb_add(out, l->text, l->len);
        sb_addc(out, '\n');
    }
}

size_t detail_section_first(const struct detail_doc *doc, enum detail_section s)
{
    for (size_t i = 0; i < doc->n; i++)
        if (doc->lines[i].section == s && doc->lines[i].heading)
            return i;
    return doc->n;
}

static unsigned char fold(unsigned char c)
{
    return c >= 'A' && c <= 'Z' ? (unsigned char)(c - 'A' + 'a') : c;
}

bool detail_line_matches(const struct detail_line *l, const char *needle)
{
    size_t m = strlen(needle);
    if (m == 0)
        return true;
    for (size_t i = 0; i + m <= l->len; i++) {
        size_t k = 0;
        while (k < m && fold((unsigned char)l->text[i + k]) == fold((unsigned char)needle[k]))
            k++;
        if (k == m)
            return true;
    }
    return false;
}

size_t detail_skip_columns(const char *s, size_t len, size_t cols, size_t *skipped)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, done = 0;
    while (i < len && done < cols) {
        size_t k = unit_len(p + i, len - i);
        done += sanitize_width(s + i, k);
        i += k;
        /* Combining marks belong with the character before them. */
        while (i < len && p[i] >= 0x80 && sanitize_width(s + i, unit_len(p + i, len - i)) == 0)
            i += unit_len(p + i, len - i);
    }
    if (skipped)
        *skipped = done;
    return i;
}

/* ---- the body --------------------------------------------------------------------------- */

#define BODY_W 12

/* How body_render shows a body of this kind by default. */
static const char *body_mode(const struct body_info *b)
{
    switch (b->kind) {
    case BODY_EMPTY:
        return "nothing to show";
    case BODY_JSON:
        return b->json_valid ? "JSON re-indented, every token as sent" : "as received";
    case BODY_TEXT:
        return "as text";
    case BODY_ENCRYPTED:
    case BODY_CLAIM_CHECK:
    case BODY_AVRO_REGISTERED:
        return "the frame described, then its bytes";
    case BODY_BINARY:
    case BODY_COMPRESSED:
    case BODY_MALFORMED_FRAME:
    default:
        return "hexdump";
    }
}

void detail_render_body(struct detail_doc *doc, const struct decoded *d, size_t limit)
{
    const struct message *m = d->msg;
    const struct body_info *b = &d->body;
    struct strbuf sb;
    sb_init(&sb);
    detail_heading(doc, DSEC_BODY);

    body_summary(b, &sb);
    detail_add_fieldb(doc, 2, BODY_W, "kind", sb.buf, sb.len, DS_ACCENT,
                      b->sniffed ? "worked out from the bytes" : NULL);
    sb_reset(&sb);
    const struct bytes *ct = props_string(&m->props, PROP_content_type);
    if (!ct)
        detail_add_field(doc, 2, BODY_W, "content type", "(none)", DS_DIM, NULL);
    else if (b->media.valid)
        detail_add_field(doc, 2, BODY_W, "content type", b->media.type, DS_VALUE, NULL);
    else
        detail_add_fieldb(doc, 2, BODY_W, "content type", ct->data, ct->len, DS_WARN,
                          "not a media type");
    if (b->media.charset)
        detail_add_field(doc, 2, BODY_W, "charset", b->media.charset, DS_VALUE, NULL);
    if (b->encoding)
        detail_add_field(doc, 2, BODY_W, "encoding", b->encoding, DS_VALUE,
                         b->kind == BODY_COMPRESSED ? "compressed: not decompressed here" : NULL);
    if (d->body_sha256[0])
        detail_add_field(doc, 2, BODY_W, "sha256", d->body_sha256, DS_DIM, NULL);
    if (b->key_id)
        detail_add_field(doc, 2, BODY_W, "key id", b->key_id, DS_ACCENT,
                         "readable without the key; nothing is decrypted");
    if (b->store_key)
        detail_add_field(doc, 2, BODY_W, "store key", b->store_key, DS_ACCENT,
                         "where the claim-checked payload lives; not fetched");
    if (b->kind == BODY_AVRO_REGISTERED) {
        char id[16];
        snprintf(id, sizeof id, "%u", (unsigned)b->schema_id);
        detail_add_field(doc, 2, BODY_W, "schema id", id, DS_ACCENT,
                         "the schema registry's id; the schema is not fetched");
    }
    if (b->json_checked && !b->json_valid) {
        char where[64];
        snprintf(where, sizeof where, "line %d, column %d", b->json_line, b->json_column);
        detail_add_field(doc, 2, BODY_W, "json error", b->json_error, DS_ERROR, where);
    }
    if (b->note[0])
        detail_add_field(doc, 2, BODY_W, "note", b->note, DS_WARN, NULL);
    unsigned rf = 0;
    const char *mode = body_mode(b);
    if (doc->flags & DETAIL_BODY_HEX) {
        rf = BODY_RENDER_HEX;
        mode = "hexdump of every byte";
    } else if (doc->flags & DETAIL_BODY_RAW) {
        rf = BODY_RENDER_RAW;
        if (b->kind == BODY_JSON)
            mode = "JSON as received";
    }
    detail_add_field(doc, 2, BODY_W, "shown", mode, DS_DIM, NULL);
    detail_add_safe(doc, 0, DS_NORMAL, "", 0);

    body_render(b, m->body.data ? (const void *)m->body.data : "", m->body.len, &sb, rf,
                limit ? limit : DETAIL_BODY_LIMIT);
    struct strbuf safe;
    sb_init(&safe);
    sanitize_append(&safe, sb.buf, sb.len, SAN_KEEP_NEWLINES | san_flags(doc));
    const char *p = safe.buf ? safe.buf : "", *end = p + safe.len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        detail_add_safe(doc, 2, DS_NORMAL, p, n);
        p += n + (nl ? 1 : 0);
    }
    sb_free(&safe);
    sb_free(&sb);
}

/* ---- everything ------------------------------------------------------------------------- */

void detail_render_opts(const struct decoded *d, const struct message *m, int64_t now_ms,
                        unsigned flags, const struct detail_opts *opts, struct detail_doc *out)
{
    memset(out, 0, sizeof *out);
    out->flags = flags;
    out->wrap = DETAIL_WRAP_DEFAULT;
    size_t limit = DETAIL_BODY_LIMIT;
    if (opts && opts->wrap)
        out->wrap = opts->wrap < 0 ? 0 : opts->wrap;
    if (opts && opts->body_limit)
        limit = opts->body_limit;
    /* The decoded message points at its message; m is the same one, named for the reader. */
    struct decoded dd = *d;
    if (!dd.msg)
        dd.msg = m;
    struct dfields fields = {0};
    if (dd.dialect && dd.dialect->fields)
        dd.dialect->fields(&dd, now_ms, &fields);
    out->fields = &fields;
    detail_render_summary(out, &dd, now_ms);
    detail_render_death(out, &dd, now_ms);
    detail_render_replay(out, &dd, now_ms);
    detail_render_patterns(out, dd.msg, now_ms);
    detail_render_properties(out, dd.msg);
    detail_render_headers(out, &dd);
    detail_render_dialect(out, &dd);
    detail_render_body(out, &dd, limit);
    out->fields = NULL;
    dfields_free(&fields);
}

void detail_render(const struct decoded *d, const struct message *m, int64_t now_ms, unsigned flags,
                   struct detail_doc *out)
{
    detail_render_opts(d, m, now_ms, flags, NULL, out);
}
