/*
 * body_internal: what the body files share and nothing outside them sees — the class a media
 * type puts a body in, the reading of content_encoding, the sizes of the AceMQ frames' parts
 * and JSON's white space. Only body*.c include it; everything else uses body.h.
 */
#ifndef DLQX_BODY_INTERNAL_H
#define DLQX_BODY_INTERNAL_H

#include <stdbool.h>

#include "body.h"

/* The AceMQ encrypted frames' fixed parts (body.c reads them, body_render.c describes them). */
#define ENC_NONCE 12
#define ENC_TAG 16
#define NET_IV 16
#define NET_TAG 32

/* ---- media types and content encodings (body_media.c) ----------------------------------- */

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

/* The class of a parsed media type; *format gets the static name of a known format, or NULL. */
enum media_class body_media_class(const struct body_media *m, const char **format);

/* A content_encoding property: cut at a NUL, trimmed and lowercased. A new string. */
char *body_encoding_parse(const struct bytes *content_encoding);
/* The first compression named in a content_encoding list (as body_encoding_parse gives it),
 * or NULL. */
const char *body_compression(const char *enc);
/* Whether an encoding that is not a compression says nothing about the bytes ("identity",
 * "utf-8", "7bit"…), so that ignoring it needs no note. */
bool body_encoding_harmless(const char *enc);

/* ---- shared by classifying and rendering ------------------------------------------------ */

static inline bool body_json_ws(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

#endif
