/*
 * body_render: a classified body as plain lines — JSON re-indented token by token, text as
 * it is, everything else as a hexdump, frames described first — and as a one-line summary
 * for tables. See body.h.
 */
#include "body_internal.h"

#include <stdio.h>
#include <string.h>

/* Deeper JSON is shown without further indentation, so nesting cannot blow up the output. */
#define JSON_INDENT_MAX 64
/* How much of a key a summary shows. */
#define SUMMARY_KEY_MAX 40
/* How much of a store key the rendered description shows. */
#define RENDER_KEY_MAX 1024

/* ---- rendering ------------------------------------------------------------------------ */

void body_hexdump(const void *data, size_t len, size_t base, struct strbuf *out)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *p = data;
    for (size_t off = 0; off < len; off += 16) {
        size_t n = len - off < 16 ? len - off : 16;
        char line[96];
        size_t w = (size_t)snprintf(line, sizeof line, "%08zx  ", base + off);
        for (size_t i = 0; i < 16; i++) {
            if (i < n) {
                line[w++] = hex[p[off + i] >> 4];
                line[w++] = hex[p[off + i] & 15];
                line[w++] = ' ';
            } else {
                memcpy(line + w, "   ", 3), w += 3;
            }
            if (i == 7)
                line[w++] = ' ';
        }
        line[w++] = ' ';
        line[w++] = '|';
        for (size_t i = 0; i < n; i++) {
            unsigned char c = p[off + i];
            line[w++] = (c >= 0x20 && c <= 0x7e) ? (char)c : '.';
        }
        line[w++] = '|';
        line[w++] = '\n';
        sb_add(out, line, w);
    }
}

static void more_line(struct strbuf *out, size_t more)
{
    if (more)
        sb_addf(out, "\xe2\x80\xa6 %zu more bytes\n", more);
}

/* How many of n bytes fit the limit, cut back to a UTF-8 character boundary. */
static size_t text_cut(const unsigned char *p, size_t n, size_t limit)
{
    if (n <= limit)
        return n;
    size_t k = limit;
    while (k > 0 && (p[k] & 0xC0) == 0x80)
        k--;
    return k;
}

/* Ends what was appended since start with a newline, if anything was and it has none. */
static void end_line(struct strbuf *out, size_t start)
{
    if (out->len > start && out->buf[out->len - 1] != '\n')
        sb_addc(out, '\n');
}

static void render_hex(const unsigned char *p, size_t n, size_t base, size_t limit,
                       struct strbuf *out)
{
    size_t k = n < limit ? n : limit;
    body_hexdump(p, k, base, out);
    more_line(out, n - k);
}

static void render_text(const unsigned char *p, size_t n, size_t limit, struct strbuf *out)
{
    size_t k = text_cut(p, n, limit), start = out->len;
    sb_add(out, p, k);
    end_line(out, start);
    more_line(out, n - k);
}

static void newline_indent(struct strbuf *out, int depth)
{
    sb_addc(out, '\n');
    int d = depth < 0 ? 0 : depth > JSON_INDENT_MAX ? JSON_INDENT_MAX : depth;
    for (int i = 0; i < d; i++)
        sb_add(out, "  ", 2);
}

/* Re-indents valid JSON token by token, so every number, escape and duplicate key is shown
 * as it was sent (a jansson round trip would rewrite 1e2 as 100.0 and drop duplicates). */
static void render_json(const unsigned char *p, size_t n, size_t limit, struct strbuf *out)
{
    size_t k = text_cut(p, n, limit), start = out->len;
    int depth = 0;
    bool in_str = false, esc = false;
    for (size_t i = 0; i < k; i++) {
        unsigned char c = p[i];
        if (in_str) {
            sb_addc(out, (char)c);
            if (esc)
                esc = false;
            else if (c == '\\')
                esc = true;
            else if (c == '"')
                in_str = false;
            continue;
        }
        if (body_json_ws(c))
            continue;
        switch (c) {
        case '"':
            in_str = true;
            sb_addc(out, '"');
            break;
        case '{':
        case '[': {
            size_t j = i + 1;
            while (j < k && body_json_ws(p[j]))
                j++;
            sb_addc(out, (char)c);
            if (j < k && p[j] == (c == '{' ? '}' : ']')) {
                sb_addc(out, (char)p[j]);
                i = j;
            } else {
                newline_indent(out, ++depth);
            }
            break;
        }
        case '}':
        case ']':
            newline_indent(out, --depth);
            sb_addc(out, (char)c);
            break;
        case ',':
            sb_addc(out, ',');
            newline_indent(out, depth);
            break;
        case ':':
            sb_add(out, ": ", 2);
            break;
        default:
            sb_addc(out, (char)c);
        }
    }
    end_line(out, start);
    more_line(out, n - k);
}

/* A value read out of a frame, on one line: C0 controls and DEL written as \xNN so that a
 * hostile key cannot start a line of its own, and cut at max bytes. Not a terminal sanitizer. */
static void add_field(struct strbuf *out, const char *s, size_t max)
{
    if (!s)
        s = "";
    size_t n = strlen(s);
    size_t k = text_cut((const unsigned char *)s, n, max);
    for (size_t i = 0; i < k; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            sb_addf(out, "\\x%02x", c);
        else
            sb_addc(out, (char)c);
    }
    if (k < n)
        sb_adds(out, "\xe2\x80\xa6");
}

static const char *frame_name(enum body_frame f)
{
    switch (f) {
    case BODY_FRAME_ENCRYPTED:
    case BODY_FRAME_ENCRYPTED_GO_OLD:
    case BODY_FRAME_ENCRYPTED_NET_OLD:
        return "acemq encrypted";
    case BODY_FRAME_CLAIM_INLINE:
    case BODY_FRAME_CLAIM_CHECKED:
        return "acemq claim-check";
    case BODY_FRAME_AVRO_REGISTERED:
        return "avro";
    case BODY_FRAME_NONE:
        break;
    }
    return "frame";
}

static void render_encrypted(const struct body_info *in, size_t n, struct strbuf *out)
{
    size_t rest = n - in->payload_off;
    switch (in->frame) {
    case BODY_FRAME_ENCRYPTED_GO_OLD:
        sb_adds(out, "acemq encrypted, legacy Go framing (acemq-go-amqp <= 0.3.0), key id: ");
        break;
    case BODY_FRAME_ENCRYPTED_NET_OLD:
        sb_adds(out, "acemq encrypted, legacy .NET framing (AES-256-CBC + HMAC-SHA-256, "
                     "AceMq.Amqp <= 0.3.0), key id: ");
        break;
    default:
        sb_adds(out, "acemq encrypted (AES-GCM), key id: ");
    }
    add_field(out, in->key_id, 255);
    if (in->frame == BODY_FRAME_ENCRYPTED_NET_OLD)
        sb_addf(out, "\n16-byte IV, %zu bytes of ciphertext, 32-byte tag\n",
                rest - NET_IV - NET_TAG);
    else
        sb_addf(out, "\n12-byte nonce, %zu bytes of ciphertext, 16-byte tag\n",
                rest - ENC_NONCE - ENC_TAG);
}

void body_render(const struct body_info *info, const void *data, size_t len, struct strbuf *out,
                 unsigned flags, size_t limit)
{
    const unsigned char *p = data;
    size_t off = info->payload_off;
    if (info->len != len || off > len) {
        /* Not the bytes that were classified: show them and trust nothing else. */
        sb_adds(out, "(the body does not match its classification; shown as bytes)\n");
        flags |= BODY_RENDER_HEX;
    }
    if ((flags & BODY_RENDER_HEX) && len > 0) {
        render_hex(p, len, 0, limit, out);
        return;
    }
    switch (info->kind) {
    case BODY_EMPTY:
        sb_adds(out, "(empty body)\n");
        break;
    case BODY_JSON:
        if (info->json_valid && !(flags & BODY_RENDER_RAW)) {
            render_json(p, len, limit, out);
            break;
        }
        if (info->json_checked && !info->json_valid) {
            /* jansson's text may quote body bytes: kept to its one line. */
            sb_adds(out, "not valid JSON: ");
            add_field(out, info->json_error, sizeof info->json_error);
            sb_addf(out, " (line %d, column %d)\n", info->json_line, info->json_column);
        }
        if (!memchr(p, '\0', len) && utf8_valid(p, len))
            render_text(p, len, limit, out);
        else
            render_hex(p, len, 0, limit, out);
        break;
    case BODY_TEXT:
        render_text(p, len, limit, out);
        break;
    case BODY_BINARY:
        if (info->note[0])
            sb_addf(out, "%s\n", info->note);
        render_hex(p, len, 0, limit, out);
        break;
    case BODY_COMPRESSED:
        sb_addf(out, "compressed (%s), shown as bytes\n", info->format);
        if (info->note[0])
            sb_addf(out, "%s\n", info->note);
        render_hex(p, len, 0, limit, out);
        break;
    case BODY_ENCRYPTED:
        render_encrypted(info, len, out);
        render_hex(p + off, len - off, off, limit, out);
        break;
    case BODY_CLAIM_CHECK:
        if (info->frame == BODY_FRAME_CLAIM_CHECKED) {
            sb_adds(out, "acemq claim-check: the payload is in the store, key: ");
            add_field(out, info->store_key, limit < RENDER_KEY_MAX ? limit : RENDER_KEY_MAX);
            sb_addc(out, '\n');
        } else {
            sb_addf(out, "acemq claim-check: payload inline (%zu bytes)\n", len - off);
            body_render(info->inner, p + off, len - off, out, flags, limit);
        }
        break;
    case BODY_AVRO_REGISTERED:
        sb_addf(out, "avro, schema registry framing: schema id %u\n", (unsigned)info->schema_id);
        render_hex(p + off, len - off, off, limit, out);
        break;
    case BODY_MALFORMED_FRAME:
        sb_addf(out, "malformed %s frame: %s", frame_name(info->frame), info->note);
        if (info->key_id) {
            sb_adds(out, " (key id: ");
            add_field(out, info->key_id, 255);
            sb_addc(out, ')');
        }
        sb_adds(out, "; shown as bytes\n");
        render_hex(p, len, 0, limit, out);
        break;
    }
}

/* ---- summary -------------------------------------------------------------------------- */

/* Integer arithmetic, so that a locale set by the UI cannot turn "1.2 KB" into "1,2 KB". */
void body_size_format(size_t n, char out[16])
{
    static const char *const units[] = {"KB", "MB", "GB", "TB", "PB", "EB"};
    const int nunits = (int)(sizeof units / sizeof units[0]);
    uint64_t v = n, div = 1024;
    if (v < 1024) { /* "%zu B" without snprintf (a tenth of decode's record writing) */
        char *p = out;
        if (v >= 1000)
            *p++ = (char)('0' + v / 1000);
        if (v >= 100)
            *p++ = (char)('0' + v / 100 % 10);
        if (v >= 10)
            *p++ = (char)('0' + v / 10 % 10);
        *p++ = (char)('0' + v % 10);
        memcpy(p, " B", 3);
        return;
    }
    int u = 0;
    while (u + 1 < nunits && v / div >= 1024)
        div <<= 10, u++;
    uint64_t tenths = v / div * 10 + (v % div * 10 + div / 2) / div;
    if (tenths >= 10240 && u + 1 < nunits) { /* 1023.96 KB reads better as 1.0 MB */
        div <<= 10, u++;
        tenths = v / div * 10 + (v % div * 10 + div / 2) / div;
    }
    /* tenths < 10240 here; the modulo only tells the compiler the output fits. */
    snprintf(out, 16, "%u.%u %s", (unsigned)(tenths / 10 % 10000), (unsigned)(tenths % 10),
             units[u]);
}

/* The words before the size. */
static void summary_words(const struct body_info *in, struct strbuf *out)
{
    switch (in->kind) {
    case BODY_EMPTY:
        sb_adds(out, "empty");
        return;
    case BODY_JSON:
        sb_adds(out, in->json_checked && !in->json_valid ? "json (invalid)" : "json");
        return;
    case BODY_TEXT:
        sb_adds(out, in->format ? in->format : "text");
        return;
    case BODY_BINARY:
        sb_adds(out, in->format ? in->format : "binary");
        return;
    case BODY_COMPRESSED:
        sb_addf(out, "compressed (%s)", in->format);
        return;
    case BODY_ENCRYPTED:
        sb_adds(out, in->frame == BODY_FRAME_ENCRYPTED_GO_OLD    ? "acemq encrypted (legacy go)"
                     : in->frame == BODY_FRAME_ENCRYPTED_NET_OLD ? "acemq encrypted (legacy .net)"
                                                                 : "acemq encrypted");
        sb_adds(out, " key=");
        add_field(out, in->key_id, SUMMARY_KEY_MAX);
        return;
    case BODY_CLAIM_CHECK:
        if (in->frame == BODY_FRAME_CLAIM_CHECKED) {
            sb_adds(out, "acemq claim-check store-key=");
            add_field(out, in->store_key, SUMMARY_KEY_MAX);
        } else {
            sb_adds(out, "acemq claim-check inline ");
            if (in->inner)
                summary_words(in->inner, out);
        }
        return;
    case BODY_AVRO_REGISTERED:
        sb_addf(out, "avro schema=%u", (unsigned)in->schema_id);
        return;
    case BODY_MALFORMED_FRAME:
        sb_addf(out, "%s (malformed)", frame_name(in->frame));
        return;
    }
}

void body_summary(const struct body_info *info, struct strbuf *out)
{
    summary_words(info, out);
    if (info->kind == BODY_EMPTY)
        return;
    char size[16];
    body_size_format(info->len, size);
    sb_addc(out, ' ');
    sb_adds(out, size);
}
