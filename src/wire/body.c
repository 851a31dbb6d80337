/*
 * body: classifying a message body from its content type, content encoding and bytes, and
 * rendering it into plain lines. See body.h; the AceMQ frame layouts are those of the public
 * AceMQ libraries (acemq-ruby-amqp crypto.rb, patterns/claim_check.rb, codec/avro.rb;
 * acemq-go-amqp crypto/crypto.go; AceMq.Amqp.Crypto/LegacyDotNetBody.cs).
 */
#include "body.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_valid.h"

/* Above this, jansson is not run: parsing 100 MB to colour a viewer is not worth it. */
#define JSON_CHECK_MAX ((size_t)16 << 20)
/* Deeper JSON is shown without further indentation, so nesting cannot blow up the output. */
#define JSON_INDENT_MAX 64
/* How much of a key a summary shows. */
#define SUMMARY_KEY_MAX 40
/* How much of a store key the rendered description shows. */
#define RENDER_KEY_MAX 1024

#define ENC_NONCE 12
#define ENC_TAG 16
#define NET_IV 16
#define NET_TAG 32

/* ---- media types ---------------------------------------------------------------------- */

static char lower(char c)
{
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static bool is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static bool is_ows(unsigned char c)
{
    return c == ' ' || c == '\t';
}

static char *lower_dup(const unsigned char *s, size_t n)
{
    char *d = xstrndup((const char *)s, n);
    for (size_t i = 0; i < n; i++)
        d[i] = lower(d[i]);
    return d;
}

void body_media_parse(const void *s, size_t n, struct body_media *out)
{
    memset(out, 0, sizeof *out);
    out->present = true;
    const unsigned char *p = s, *end = p + n;
    /* A NUL cannot be in a media type; what follows one is junk. */
    const unsigned char *nul = n ? memchr(p, '\0', n) : NULL;
    if (nul)
        end = nul;
    while (p < end && is_ows(*p))
        p++;
    const unsigned char *t = p;
    while (p < end && is_tchar(*p))
        p++;
    size_t tlen = (size_t)(p - t);
    if (tlen == 0 || p >= end || *p != '/')
        return;
    const unsigned char *st = ++p;
    while (p < end && is_tchar(*p))
        p++;
    size_t slen = (size_t)(p - st);
    if (slen == 0)
        return;
    out->valid = true;
    out->type = xmalloc(tlen + 1 + slen + 1);
    for (size_t i = 0; i < tlen; i++)
        out->type[i] = lower((char)t[i]);
    out->type[tlen] = '/';
    for (size_t i = 0; i < slen; i++)
        out->type[tlen + 1 + i] = lower((char)st[i]);
    out->type[tlen + 1 + slen] = '\0';
    out->subtype = out->type + tlen + 1;

    /* Parameters: name=token or name="quoted"; anything unreadable is skipped to the next ';'. */
    while (p < end) {
        while (p < end && *p != ';')
            p++;
        if (p >= end)
            break;
        p++;
        while (p < end && is_ows(*p))
            p++;
        const unsigned char *nm = p;
        while (p < end && is_tchar(*p))
            p++;
        size_t nlen = (size_t)(p - nm);
        if (nlen == 0 || p >= end || *p != '=')
            continue;
        p++;
        struct strbuf v;
        sb_init(&v);
        if (p < end && *p == '"') {
            for (p++; p < end && *p != '"'; p++) {
                if (*p == '\\' && p + 1 < end)
                    p++;
                sb_addc(&v, (char)*p);
            }
            if (p < end)
                p++;
        } else {
            while (p < end && *p != ';' && !is_ows(*p))
                sb_addc(&v, (char)*p++);
        }
        if (out->nparams == BODY_MEDIA_MAX_PARAMS) {
            sb_free(&v);
            continue;
        }
        struct body_param *bp = &out->params[out->nparams++];
        bp->name = lower_dup(nm, nlen);
        bp->value = sb_detach(&v, NULL);
        if (!out->charset && strcmp(bp->name, "charset") == 0)
            out->charset = lower_dup((const unsigned char *)bp->value, strlen(bp->value));
    }
}

void body_media_free(struct body_media *m)
{
    free(m->type);
    free(m->charset);
    for (size_t i = 0; i < m->nparams; i++) {
        free(m->params[i].name);
        free(m->params[i].value);
    }
    memset(m, 0, sizeof *m);
}

const char *body_media_param(const struct body_media *m, const char *name)
{
    for (size_t i = 0; i < m->nparams; i++) {
        const char *a = m->params[i].name, *b = name;
        while (*a && lower(*a) == lower(*b))
            a++, b++;
        if (*a == '\0' && *b == '\0')
            return m->params[i].value;
    }
    return NULL;
}

/* What a media type tells us to expect. */
enum media_class {
    MC_NONE,    /* absent, or junk */
    MC_GENERIC, /* application/octet-stream and friends: says nothing */
    MC_UNKNOWN, /* a type dlqx does not know: the bytes decide */
    MC_JSON,
    MC_TEXT,
    MC_BINARY, /* a named binary format: never sniffed as text or as an encrypted frame */
    MC_ENCRYPTED,
    MC_AVRO_REGISTERED,
};

/* Media types by class, space-separated; "type/" stands for a whole top-level type. */
static const struct {
    enum media_class cls;
    const char *format;
    const char *types;
} media_rules[] = {
    {MC_ENCRYPTED, NULL, "application/vnd.acemq.encrypted"},
    {MC_AVRO_REGISTERED, "avro", "application/vnd.acemq.avro"},
    {MC_JSON, NULL, "application/json text/json application/x-json"},
    {MC_TEXT, "yaml", "application/yaml application/x-yaml text/yaml text/x-yaml"},
    {MC_TEXT, "toml", "application/toml text/toml"},
    {MC_TEXT, "xml", "application/xml text/xml"},
    {MC_TEXT, "csv", "text/csv"},
    {MC_TEXT, "html", "text/html"},
    {MC_TEXT, "ndjson", "application/x-ndjson"},
    {MC_TEXT, NULL, "text/ application/javascript application/x-www-form-urlencoded"},
    {MC_BINARY, "avro", "avro/ application/avro"},
    {MC_BINARY, "protobuf",
     "application/x-protobuf application/protobuf application/x-google-protobuf "
     "application/vnd.google.protobuf"},
    {MC_BINARY, "msgpack", "application/msgpack application/x-msgpack application/vnd.msgpack"},
    {MC_BINARY, "cbor", "application/cbor"},
    {MC_BINARY, "bson", "application/bson"},
    {MC_BINARY, "thrift", "application/x-thrift"},
    {MC_BINARY, "gzip", "application/gzip application/x-gzip"},
    {MC_BINARY, "zip", "application/zip"},
    {MC_BINARY, "pdf", "application/pdf"},
    {MC_BINARY, "image", "image/"},
    {MC_BINARY, "audio", "audio/"},
    {MC_BINARY, "video", "video/"},
    {MC_GENERIC, NULL,
     "application/octet-stream binary/octet-stream application/binary application/unknown"},
};

/* Whether type is one of the space-separated list (a "type/" entry matches a prefix). */
static bool type_in(const char *type, const char *list)
{
    size_t tl = strlen(type);
    for (const char *s = list; *s;) {
        size_t n = strcspn(s, " ");
        if (n && (s[n - 1] == '/' ? tl > n && strncmp(type, s, n) == 0
                                  : tl == n && strncmp(type, s, n) == 0))
            return true;
        s += n;
        s += *s == ' ';
    }
    return false;
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static enum media_class media_classify(const struct body_media *m, const char **format)
{
    *format = NULL;
    if (!m->valid)
        return MC_NONE;
    for (size_t i = 0; i < sizeof media_rules / sizeof media_rules[0]; i++)
        if (type_in(m->type, media_rules[i].types)) {
            *format = media_rules[i].format;
            return media_rules[i].cls;
        }
    /* Structured-syntax suffixes (RFC 6839): application/cloudevents+json and the like. */
    static const struct {
        const char *suffix, *format;
        enum media_class cls;
    } suffixes[] = {
        {"+json", NULL, MC_JSON},
        {"+xml", "xml", MC_TEXT},
        {"+yaml", "yaml", MC_TEXT},
        {"+avro", "avro", MC_BINARY},
    };
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++)
        if (has_suffix(m->subtype, suffixes[i].suffix)) {
            *format = suffixes[i].format;
            return suffixes[i].cls;
        }
    return MC_UNKNOWN;
}

/* ---- classification ------------------------------------------------------------------- */

const char *body_kind_name(enum body_kind k)
{
    static const char *const names[] = {
        [BODY_EMPTY] = "empty",
        [BODY_JSON] = "json",
        [BODY_TEXT] = "text",
        [BODY_BINARY] = "binary",
        [BODY_COMPRESSED] = "compressed",
        [BODY_ENCRYPTED] = "acemq encrypted",
        [BODY_CLAIM_CHECK] = "acemq claim-check",
        [BODY_AVRO_REGISTERED] = "avro",
        [BODY_MALFORMED_FRAME] = "malformed frame",
    };
    return (size_t)k < sizeof names / sizeof names[0] && names[k] ? names[k] : "?";
}

static void note(struct body_info *in, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(struct body_info *in, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(in->note, sizeof in->note, fmt, ap);
    va_end(ap);
}

/* Marks the body a malformed frame f, with why in the note. Returns true ("handled"). */
static bool malformed(struct body_info *in, enum body_frame f, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool malformed(struct body_info *in, enum body_frame f, const char *fmt, ...)
{
    in->kind = BODY_MALFORMED_FRAME;
    in->frame = f;
    in->payload_off = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(in->note, sizeof in->note, fmt, ap);
    va_end(ap);
    return true;
}

static bool json_ws(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Valid UTF-8 that reads as text: no NUL, no control bytes but tab, newline, CR, form feed. */
static bool looks_text(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((p[i] < 0x20 && (p[i] == 0 || !strchr("\t\n\r\f", p[i]))) || p[i] == 0x7f)
            return false;
    return utf8_valid(p, n);
}

/* A field read out of a frame: UTF-8 without NUL, or it is not one. */
static char *frame_string(const unsigned char *p, size_t n)
{
    if (memchr(p, '\0', n) || !utf8_valid(p, n))
        return NULL;
    return xstrndup((const char *)p, n);
}

static void json_check(struct body_info *in, const unsigned char *p, size_t n)
{
    if (n > JSON_CHECK_MAX)
        return;
    in->json_checked = true;
    /* The common case, a valid body, without building and freeing a tree; jansson decides
     * (and explains) everything the fast check is not sure of. */
    if (json_surely_valid(p, n)) {
        in->json_valid = true;
        return;
    }
    json_error_t e;
    json_t *j = json_loadb((const char *)p, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
    if (j) {
        in->json_valid = true;
        json_decref(j);
        return;
    }
    snprintf(in->json_error, sizeof in->json_error, "%s", e.text);
    in->json_line = e.line;
    in->json_column = e.column;
    in->json_position = (size_t)e.position;
}

/* AE 01 len key-id nonce[12] ciphertext tag[16]; when declared, also the two pre-0.4 framings
 * that start 01: Go's with a two-byte length, .NET's with a one-byte length. */
static bool parse_encrypted(struct body_info *in, const unsigned char *p, size_t n, bool declared)
{
    enum body_frame f = BODY_FRAME_ENCRYPTED;
    size_t hdr, idlen, after_min;
    if (p[0] == 0xAE) {
        if (n < 2)
            return malformed(in, f, "the body ends after the 0xAE magic byte");
        if (p[1] != 0x01)
            return malformed(in, f, "encryption framing version %u is not one AceMQ writes (1)",
                             p[1]);
        if (n < 3)
            return malformed(in, f, "the body ends before the key id length");
        hdr = 3, idlen = p[2], after_min = ENC_NONCE + ENC_TAG;
    } else if (declared && p[0] == 0x01 && n >= 3 && p[1] == 0) {
        /* A .NET body cannot have an empty key id, so a zero second byte is Go's length. */
        f = BODY_FRAME_ENCRYPTED_GO_OLD;
        hdr = 3, idlen = p[2], after_min = ENC_NONCE + ENC_TAG;
    } else if (declared && p[0] == 0x01 && n >= 2) {
        f = BODY_FRAME_ENCRYPTED_NET_OLD;
        hdr = 2, idlen = p[1], after_min = NET_IV + NET_TAG;
    } else if (p[0] == 0x01) {
        return malformed(in, f, "the body ends after its first byte");
    } else {
        return malformed(in, f, "the body does not start with 0xAE, the AceMQ encryption magic");
    }
    if (idlen == 0)
        return malformed(in, f, "the key id length is zero, so nothing names the key");
    if (idlen > n - hdr)
        return malformed(in, f, "the key id length (%zu) is more than the %zu bytes that follow",
                         idlen, n - hdr);
    char *id = frame_string(p + hdr, idlen);
    if (!id)
        return malformed(in, f, "the key id is not UTF-8 text");
    if (n - hdr - idlen < after_min) {
        malformed(in, f, "%zu bytes after the key id are too few for its %s and tag",
                  n - hdr - idlen, f == BODY_FRAME_ENCRYPTED_NET_OLD ? "IV" : "nonce");
        in->key_id = id; /* still worth showing: it names the key */
        return true;
    }
    in->kind = BODY_ENCRYPTED;
    in->frame = f;
    in->key_id = id;
    in->payload_off = hdr + idlen;
    return true;
}

static void classify(struct body_info *in, const unsigned char *p, size_t n, const struct bytes *ct,
                     bool allow_claim);

/* AC 01 00 payload | AC 01 01 store-key. A claim check keeps the delegate's content type, so
 * this is looked for under every one. False when the body is not a claim check. */
static bool parse_claim(struct body_info *in, const unsigned char *p, size_t n,
                        const struct bytes *ct, bool frames_ok)
{
    const enum body_frame f = BODY_FRAME_CLAIM_CHECKED;
    if (n < 2 || p[0] != 0xAC || p[1] != 0x01)
        return false;
    if (n < 3 || p[2] > 0x01) {
        if (!frames_ok)
            return false;
        if (n < 3)
            return malformed(in, f, "the body ends before the claim-check kind byte");
        return malformed(in, f, "claim-check kind 0x%02x is neither inline (00) nor a key (01)",
                         p[2]);
    }
    if (p[2] == 0x00) {
        in->kind = BODY_CLAIM_CHECK;
        in->frame = BODY_FRAME_CLAIM_INLINE;
        in->payload_off = 3;
        in->inner = xcalloc(1, sizeof *in->inner);
        classify(in->inner, p + 3, n - 3, ct, false);
        return true;
    }
    if (n == 3)
        return malformed(in, f, "the claim check carries no store key");
    in->store_key = frame_string(p + 3, n - 3);
    if (!in->store_key)
        return malformed(in, f, "the store key is not UTF-8 text");
    in->kind = BODY_CLAIM_CHECK;
    in->frame = f;
    in->payload_off = 3;
    return true;
}

/* 00 schema-id[4, big-endian] avro: Confluent's framing. */
static bool parse_avro(struct body_info *in, const unsigned char *p, size_t n)
{
    const enum body_frame f = BODY_FRAME_AVRO_REGISTERED;
    in->format = "avro";
    if (n < 5)
        return malformed(in, f, "the body is shorter than the 5-byte schema registry header");
    if (p[0] != 0x00)
        return malformed(in, f, "the body does not start with 0x00, the schema registry magic");
    in->kind = BODY_AVRO_REGISTERED;
    in->frame = f;
    in->schema_id = (uint32_t)p[1] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 8 | p[4];
    in->payload_off = 5;
    return true;
}

/* No useful content type: the bytes decide. Only '{' or '[' is tried as JSON (a bare "42" is
 * text), and a body that starts like JSON but does not parse stays text, its error kept. */
static void sniff(struct body_info *in, const unsigned char *p, size_t n)
{
    in->sniffed = true;
    if (looks_text(p, n)) {
        size_t i = 0;
        while (i < n && json_ws(p[i]))
            i++;
        if (i < n && (p[i] == '{' || p[i] == '[')) {
            json_check(in, p, n);
            if (in->json_valid) {
                in->kind = BODY_JSON;
                return;
            }
        }
        in->kind = BODY_TEXT;
        return;
    }
    in->kind = BODY_BINARY;
    if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
        in->format = "gzip";
}

static void classify(struct body_info *in, const unsigned char *p, size_t n, const struct bytes *ct,
                     bool allow_claim)
{
    in->len = n;
    if (ct)
        body_media_parse(ct->data, ct->len, &in->media);
    const char *format;
    enum media_class mc = media_classify(&in->media, &format);
    if (n == 0) {
        in->kind = BODY_EMPTY;
        return;
    }
    /* AE and AC are UTF-8 continuation bytes, so no text or JSON body starts with them: under
     * any textual, generic or unknown type a frame magic is a frame. Named binary formats may
     * start with any byte, so there only the claim check (which keeps its delegate's type) is
     * recognised, and only when its header is whole. */
    bool frames_ok = mc != MC_BINARY;
    if (allow_claim && parse_claim(in, p, n, ct, frames_ok))
        return;
    if (mc == MC_ENCRYPTED) {
        parse_encrypted(in, p, n, true);
        return;
    }
    if (frames_ok && n >= 2 && p[0] == 0xAE && p[1] == 0x01) {
        in->sniffed = true;
        parse_encrypted(in, p, n, false);
        return;
    }
    switch (mc) {
    case MC_AVRO_REGISTERED:
        parse_avro(in, p, n);
        return;
    case MC_JSON:
        in->kind = BODY_JSON;
        json_check(in, p, n);
        if (!in->json_checked)
            note(in, "over %zu MiB, so not checked as JSON", JSON_CHECK_MAX >> 20);
        return;
    case MC_TEXT:
        in->format = format;
        if (memchr(p, '\0', n) || !utf8_valid(p, n)) {
            in->kind = BODY_BINARY;
            note(in, "declared %s%s%s but not UTF-8 text: shown as bytes", in->media.type,
                 in->media.charset ? ", charset " : "", in->media.charset ? in->media.charset : "");
            return;
        }
        in->kind = BODY_TEXT;
        return;
    case MC_BINARY:
        in->kind = BODY_BINARY;
        in->format = format;
        note(in, "%s, shown as bytes", format);
        return;
    case MC_NONE:
    case MC_GENERIC:
    case MC_UNKNOWN:
    case MC_ENCRYPTED:
        break;
    }
    sniff(in, p, n);
}

struct compression {
    const char *token, *name;
};

static const struct compression compressions[] = {
    {"gzip", "gzip"},     {"x-gzip", "gzip"},       {"deflate", "deflate"},     {"br", "br"},
    {"zstd", "zstd"},     {"compress", "compress"}, {"x-compress", "compress"}, {"lz4", "lz4"},
    {"snappy", "snappy"},
};

/* The first compression named in a content_encoding list, or NULL. */
static const char *compression_of(const char *enc)
{
    const char *s = enc;
    while (*s) {
        while (*s == ' ' || *s == '\t' || *s == ',')
            s++;
        size_t n = strcspn(s, ", \t");
        for (size_t i = 0; i < sizeof compressions / sizeof compressions[0]; i++)
            if (strlen(compressions[i].token) == n && strncmp(s, compressions[i].token, n) == 0)
                return compressions[i].name;
        s += n;
    }
    return NULL;
}

void body_classify(const void *data, size_t len, const struct bytes *content_type,
                   const struct bytes *content_encoding, struct body_info *out)
{
    memset(out, 0, sizeof *out);
    const unsigned char *p = data;
    if (content_encoding) {
        const unsigned char *e = content_encoding->data;
        size_t n = content_encoding->len;
        const unsigned char *nul = n ? memchr(e, '\0', n) : NULL;
        if (nul)
            n = (size_t)(nul - e);
        while (n && is_ows(*e))
            e++, n--;
        while (n && is_ows(e[n - 1]))
            n--;
        out->encoding = lower_dup(e, n);
    }
    const char *comp = out->encoding ? compression_of(out->encoding) : NULL;
    if (comp && len > 0) {
        if (content_type)
            body_media_parse(content_type->data, content_type->len, &out->media);
        out->len = len;
        out->kind = BODY_COMPRESSED;
        out->format = comp;
        if (strcmp(comp, "gzip") == 0 && (len < 2 || p[0] != 0x1f || p[1] != 0x8b))
            note(out, "the body does not start with the gzip magic bytes 1f 8b");
        return;
    }
    classify(out, p, len, content_type, true);
    /* Say so when a content_encoding was ignored, unless something more important is said. */
    static const char *const harmless[] = {"",       "identity", "utf-8", "utf8",
                                           "binary", "7bit",     "8bit"};
    if (out->encoding && !comp && !out->note[0]) {
        bool ok = false;
        for (size_t i = 0; i < sizeof harmless / sizeof harmless[0]; i++)
            ok = ok || strcmp(out->encoding, harmless[i]) == 0;
        if (!ok)
            note(out, "content_encoding \"%.64s\" is not understood; the body is shown as it is",
                 out->encoding);
    }
}

void body_info_free(struct body_info *info)
{
    body_media_free(&info->media);
    free(info->encoding);
    free(info->key_id);
    free(info->store_key);
    if (info->inner) {
        body_info_free(info->inner);
        free(info->inner);
    }
    memset(info, 0, sizeof *info);
}

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
        if (json_ws(c))
            continue;
        switch (c) {
        case '"':
            in_str = true;
            sb_addc(out, '"');
            break;
        case '{':
        case '[': {
            size_t j = i + 1;
            while (j < k && json_ws(p[j]))
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
    if (v < 1024) {
        snprintf(out, 16, "%zu B", n);
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
    sb_addf(out, " %s", size);
}
