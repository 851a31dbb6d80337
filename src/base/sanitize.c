/*
 * sanitize: escapes untrusted bytes into terminal-safe UTF-8, measures and fits them to
 * columns (see sanitize.h for the escapes).
 *
 * The input is cut into units: a run of plain ASCII, one code point copied as-is, or one
 * ASCII escape. Fitting works on whole units, so an escape or a wide character is never
 * split. A 256-entry byte class table drives both the ASCII fast path and the UTF-8
 * decoder (Unicode table 3-7: no overlongs, no surrogates, nothing above U+10FFFF).
 */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* wcwidth() */
#endif

#include "sanitize.h"

#include <langinfo.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

/* Byte classes. B_L2 and above start a multi-byte sequence; each has a row in leads[]. */
enum byte_class {
    B_PLAIN,  /* printable ASCII other than backslash: copied as-is */
    B_CTRL,   /* C0 controls and DEL */
    B_BSLASH, /* '\\' */
    B_BAD,    /* 80-BF (continuations), C0-C1, F5-FF: never start one */
    B_L2,     /* C2-DF */
    B_E0,     /* E0: second byte A0-BF (no overlongs) */
    B_L3,     /* E1-EC, EE-EF */
    B_ED,     /* ED: second byte 80-9F (no surrogates) */
    B_F0,     /* F0: second byte 90-BF (no overlongs) */
    B_L4,     /* F1-F3 */
    B_F4,     /* F4: second byte 80-8F (nothing above U+10FFFF) */
};

#define X4(c) c, c, c, c
#define X16(c) X4(c), X4(c), X4(c), X4(c)

/* clang-format off */
static const unsigned char byte_class[] = {
    /* 0x00 */ X16(B_CTRL),
    /* 0x10 */ X16(B_CTRL),
    /* 0x20 */ X16(B_PLAIN),
    /* 0x30 */ X16(B_PLAIN),
    /* 0x40 */ X16(B_PLAIN),
    /* 0x50 */ X4(B_PLAIN), X4(B_PLAIN), X4(B_PLAIN), B_BSLASH, B_PLAIN, B_PLAIN, B_PLAIN,
    /* 0x60 */ X16(B_PLAIN),
    /* 0x70 */ X4(B_PLAIN), X4(B_PLAIN), X4(B_PLAIN), B_PLAIN, B_PLAIN, B_PLAIN, B_CTRL,
    /* 0x80 */ X16(B_BAD), X16(B_BAD), X16(B_BAD), X16(B_BAD),
    /* 0xC0 */ B_BAD, B_BAD, B_L2, B_L2, X4(B_L2), X4(B_L2), X4(B_L2),
    /* 0xD0 */ X16(B_L2),
    /* 0xE0 */ B_E0, B_L3, B_L3, B_L3, X4(B_L3), X4(B_L3), B_L3, B_ED, B_L3, B_L3,
    /* 0xF0 */ B_F0, B_L4, B_L4, B_L4, B_F4, B_BAD, B_BAD, B_BAD, X4(B_BAD), X4(B_BAD),
};
/* clang-format on */

#undef X4
#undef X16

_Static_assert(sizeof byte_class == 256, "one class per byte");

/* Per lead class (from B_L2 on): sequence length, allowed range of the second byte, and the
 * payload bits of the lead byte. */
static const struct utf8_lead {
    unsigned char len, lo, hi, mask;
} leads[] = {
    [B_L2 - B_L2] = {2, 0x80, 0xBF, 0x1F}, [B_E0 - B_L2] = {3, 0xA0, 0xBF, 0x0F},
    [B_L3 - B_L2] = {3, 0x80, 0xBF, 0x0F}, [B_ED - B_L2] = {3, 0x80, 0x9F, 0x0F},
    [B_F0 - B_L2] = {4, 0x90, 0xBF, 0x07}, [B_L4 - B_L2] = {4, 0x80, 0xBF, 0x07},
    [B_F4 - B_L2] = {4, 0x80, 0x8F, 0x07},
};

/* The letter of the short escape for a C0 control ("\n"), or 0 for \xNN. */
static const char c0_letter[32] = {
    ['\0'] = '0', ['\t'] = 't', ['\n'] = 'n', ['\r'] = 'r', [0x1B] = 'e',
};

static const char hexdig[] = "0123456789abcdef";

/* Decodes the well-formed sequence at s (n >= 1 bytes, s[0] >= 0x80) into *cp and returns
 * its length; 0 when s[0] does not start one, and the caller escapes s[0] alone and
 * resyncs at s[1], so a good character after a bad byte is never swallowed. */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned cls = byte_class[s[0]];
    if (cls < B_L2)
        return 0;
    const struct utf8_lead *L = &leads[cls - B_L2];
    if (n < L->len || s[1] < L->lo || s[1] > L->hi)
        return 0;
    uint32_t c = (uint32_t)(s[0] & L->mask) << 6 | (s[1] & 0x3Fu);
    for (size_t k = 2; k < L->len; k++) {
        if ((s[k] & 0xC0) != 0x80)
            return 0;
        c = c << 6 | (s[k] & 0x3Fu);
    }
    *cp = c;
    return L->len;
}

/* Code points that must not reach the terminal raw: C1 controls, bidi controls and
 * invisible format characters that can spoof or reorder text, line/paragraph separators,
 * and the tag block. Ordered so that common text leaves after one or two compares. */
static bool cp_hidden(uint32_t cp)
{
    if (cp < 0xA0)
        return cp >= 0x80;
    if (cp < 0x2000)
        return cp == 0x061C || cp == 0x180E;
    if (cp < 0x2070)
        return (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202E) || cp >= 0x2060;
    if (cp < 0xFEFF)
        return false;
    if (cp < 0x10000)
        return cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFB);
    return cp >= 0xE0000 && cp <= 0xE007F;
}

/* Columns of one code point. Needs a UTF-8 LC_CTYPE (see sanitize.h). */
static int cp_width(uint32_t cp)
{
    if (cp < 0x80)
        return 1;
#if WCHAR_MAX < 0x10FFFF
    if (cp > WCHAR_MAX)
        return 1;
#endif
    int w = wcwidth((wchar_t)cp);
    return w < 0 ? 1 : w;
}

/* One unit of output that is not a plain ASCII run. text points into the input (raw) or
 * into esc (an ASCII escape, as many columns wide as it is long). */
struct san_unit {
    const char *text;
    size_t len;
    uint32_t cp; /* the code point, when raw */
    bool raw;
    char esc[12]; /* longest: "\u{10ffff}" */
};

static void unit_esc_byte(struct san_unit *u, unsigned char c)
{
    u->esc[0] = '\\';
    u->esc[1] = 'x';
    u->esc[2] = hexdig[c >> 4];
    u->esc[3] = hexdig[c & 15];
    u->len = 4;
}

static void unit_esc_cp(struct san_unit *u, uint32_t cp)
{
    char *o = u->esc;
    int shift = 20;
    while (shift > 0 && !(cp >> shift))
        shift -= 4;
    *o++ = '\\';
    *o++ = 'u';
    *o++ = '{';
    for (; shift >= 0; shift -= 4)
        *o++ = hexdig[cp >> shift & 15];
    *o++ = '}';
    u->len = (size_t)(o - u->esc);
}

/* Reads the unit at s (n >= 1 bytes) into *u and returns how many input bytes it used.
 * The SAN_KEEP_NEWLINES cases are the caller's. */
static size_t unit_next(const unsigned char *s, size_t n, unsigned flags, struct san_unit *u)
{
    unsigned char c = s[0];
    u->raw = false;
    u->text = u->esc;
    if (c < 0x80) {
        if (c == '\\' && (flags & SAN_ESCAPE_BACKSLASH)) {
            u->esc[0] = u->esc[1] = '\\';
            u->len = 2;
        } else if (c < 0x20 && c0_letter[c]) {
            u->esc[0] = '\\';
            u->esc[1] = c0_letter[c];
            u->len = 2;
        } else if (c < 0x20 || c == 0x7F) {
            unit_esc_byte(u, c);
        } else {
            u->raw = true;
            u->cp = c;
            u->text = (const char *)s;
            u->len = 1;
        }
        return 1;
    }
    uint32_t cp;
    size_t k = utf8_next(s, n, &cp);
    if (k == 0) {
        unit_esc_byte(u, c);
        return 1;
    }
    if ((flags & SAN_ASCII) || cp_hidden(cp)) {
        unit_esc_cp(u, cp);
    } else {
        u->raw = true;
        u->cp = cp;
        u->text = (const char *)s;
        u->len = k;
    }
    return k;
}

/* Makes room for extra more bytes and guarantees out->buf is a (possibly empty) string. */
static void sb_reserve(struct strbuf *out, size_t extra)
{
    xgrow((void **)&out->buf, &out->cap, out->len + extra + 1, 1);
    out->buf[out->len] = '\0';
}

void sanitize_append(struct strbuf *out, const void *data, size_t len, unsigned flags)
{
    const unsigned char *s = data;
    bool keep_nl = flags & SAN_KEEP_NEWLINES;
    size_t col = 0; /* columns since the last newline, for tab stops (only with keep_nl) */
    size_t i = 0;

    /* The output is never shorter than the input. */
    sb_reserve(out, len);
    while (i < len) {
        size_t j = i;
        while (j < len && byte_class[s[j]] == B_PLAIN)
            j++;
        if (j > i) {
            sb_add(out, s + i, j - i);
            col += j - i;
            i = j;
            if (i == len)
                break;
        }
        if (keep_nl && s[i] == '\n') {
            sb_addc(out, '\n');
            col = 0;
            i++;
            continue;
        }
        if (keep_nl && s[i] == '\t') {
            size_t pad = 8 - col % 8;
            sb_add(out, "        ", pad);
            col += pad;
            i++;
            continue;
        }
        struct san_unit u;
        i += unit_next(s + i, len - i, flags, &u);
        sb_add(out, u.text, u.len);
        if (keep_nl)
            col += u.raw ? (size_t)cp_width(u.cp) : u.len;
    }
}

size_t sanitize_width(const char *safe_utf8, size_t len)
{
    const unsigned char *s = (const unsigned char *)safe_utf8;
    size_t w = 0, i = 0;
    while (i < len) {
        uint32_t cp;
        size_t k;
        if (s[i] < 0x80 || (k = utf8_next(s + i, len - i, &cp)) == 0) {
            w++;
            i++;
            continue;
        }
        w += (size_t)cp_width(cp);
        i += k;
    }
    return w;
}

int sanitize_fit(struct strbuf *out, const void *data, size_t len, int width, unsigned flags)
{
    const unsigned char *s = data;
    const char *ellipsis = (flags & SAN_ASCII) ? "~" : "\xE2\x80\xA6"; /* U+2026, 1 column */
    int col = 0;
    /* The last point where the output still leaves a column for the ellipsis. */
    size_t cut_len = out->len;
    int cut_col = 0;
    bool truncated = false;
    size_t i = 0;

    /* SAN_KEEP_NEWLINES needs nothing here: unit_next() escapes \n and \t regardless. */
    if (width < 0)
        width = 0;
    sb_reserve(out, 0);
    while (i < len) {
        if (byte_class[s[i]] == B_PLAIN) {
            if (col == width) {
                truncated = true;
                break;
            }
            size_t room = (size_t)(width - col), j = i;
            while (j < len && j - i < room && byte_class[s[j]] == B_PLAIN)
                j++;
            int before = col;
            sb_add(out, s + i, j - i);
            col += (int)(j - i);
            i = j;
            /* before < width, so the cut point lies in this run or at its end. */
            if (col <= width - 1) {
                cut_len = out->len;
                cut_col = col;
            } else if (before <= width - 1) {
                cut_len = out->len - (size_t)(col - (width - 1));
                cut_col = width - 1;
            }
            continue;
        }
        struct san_unit u;
        size_t used = unit_next(s + i, len - i, flags, &u);
        int w = u.raw ? cp_width(u.cp) : (int)u.len;
        if (w > width - col) {
            truncated = true;
            break;
        }
        sb_add(out, u.text, u.len);
        col += w;
        i += used;
        if (col <= width - 1) {
            cut_len = out->len;
            cut_col = col;
        }
    }
    if (truncated) {
        out->len = cut_len;
        out->buf[cut_len] = '\0';
        col = cut_col;
        if (width > 0) {
            sb_adds(out, ellipsis);
            col++;
        }
    }
    if (flags & SAN_PAD) {
        for (; col < width; col++)
            sb_addc(out, ' ');
    }
    return col;
}

bool sanitize_is_text(const void *data, size_t len)
{
    const unsigned char *s = data;
    size_t i = 0, cps = 0, controls = 0;
    while (i < len) {
        unsigned char c = s[i];
        cps++;
        if (c < 0x80) {
            if (c == 0)
                return false;
            if (byte_class[c] == B_CTRL && c != '\t' && c != '\n' && c != '\r')
                controls++;
            i++;
            continue;
        }
        uint32_t cp;
        size_t k = utf8_next(s + i, len - i, &cp);
        if (k == 0)
            return false;
        if (cp < 0xA0)
            controls++;
        i += k;
    }
    return controls * 16 <= cps;
}

void sanitize_message(struct strbuf *out, const void *text, size_t len, unsigned flags)
{
    const unsigned char *s = text;
    flags &= SAN_ESCAPE_BACKSLASH | SAN_ASCII;
    sb_reserve(out, len);
    while (len) {
        const unsigned char *nl = memchr(s, '\n', len);
        size_t line = nl ? (size_t)(nl - s) : len;
        sanitize_append(out, s, line, flags);
        if (!nl)
            break;
        sb_addc(out, '\n');
        s += line + 1;
        len -= line + 1;
    }
}

/* SAN_ASCII unless the locale (set by main) is UTF-8. */
static unsigned stream_flags(void)
{
    const char *cs = nl_langinfo(CODESET);
    if (cs && (strcmp(cs, "UTF-8") == 0 || strcmp(cs, "utf8") == 0))
        return 0;
    return SAN_ASCII;
}

size_t san_fwrite(FILE *f, const void *text, size_t len)
{
    struct strbuf sb;
    sb_init(&sb);
    sanitize_message(&sb, text, len, stream_flags());
    size_t w = sb.len ? fwrite(sb.buf, 1, sb.len, f) : 0;
    sb_free(&sb);
    return w;
}

size_t san_vfprintf(FILE *f, const char *fmt, va_list ap)
{
    struct strbuf raw;
    sb_init(&raw);
    sb_vaddf(&raw, fmt, ap);
    size_t w = san_fwrite(f, raw.buf, raw.len);
    sb_free(&raw);
    return w;
}

size_t san_fprintf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t w = san_vfprintf(f, fmt, ap);
    va_end(ap);
    return w;
}
