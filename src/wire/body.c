/*
 * body: classifying a message body from its content type, content encoding and bytes: the
 * AceMQ frames, registered Avro, JSON checked, text and binary told apart. See body.h; the
 * media types and encodings are read in body_media.c, the rendering and the summary are
 * body_render.c's. The AceMQ frame layouts are those of the public AceMQ libraries
 * (acemq-ruby-amqp crypto.rb, patterns/claim_check.rb, codec/avro.rb; acemq-go-amqp
 * crypto/crypto.go; AceMq.Amqp.Crypto/LegacyDotNetBody.cs).
 */
#include "body_internal.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_valid.h"

/* Above this, jansson is not run: parsing 100 MB to colour a viewer is not worth it. */
#define JSON_CHECK_MAX ((size_t)16 << 20)

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
        while (i < n && body_json_ws(p[i]))
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
    enum media_class mc = body_media_class(&in->media, &format);
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

void body_classify(const void *data, size_t len, const struct bytes *content_type,
                   const struct bytes *content_encoding, struct body_info *out)
{
    memset(out, 0, sizeof *out);
    const unsigned char *p = data;
    if (content_encoding)
        out->encoding = body_encoding_parse(content_encoding);
    const char *comp = out->encoding ? body_compression(out->encoding) : NULL;
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
    if (out->encoding && !comp && !out->note[0] && !body_encoding_harmless(out->encoding))
        note(out, "content_encoding \"%.64s\" is not understood; the body is shown as it is",
             out->encoding);
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
