/*
 * body: what a message body is, for display. Reads the content_type and content_encoding
 * properties and the bytes, names the body (JSON, text, binary, an AceMQ frame…), pulls out
 * what a frame says in the clear (key id, store key, schema id), and renders the body into
 * plain lines for a viewer: JSON re-indented, text as it is, everything else as a hexdump.
 *
 * Bodies are hostile: every length in a frame is checked against the bytes that are there,
 * and a frame that does not hold together is reported as malformed and shown as bytes.
 * Nothing is decompressed, decrypted or fetched.
 *
 * The rendered lines and the summary still hold untrusted text (JSON strings, text bodies,
 * key ids): the caller passes them through the terminal sanitizer. Only the hexdump's ASCII
 * column is guaranteed printable ASCII.
 *
 * The files: body_media.c (content_type and content_encoding), body.c (classifying: frames,
 * JSON, text, binary), body_render.c (the lines and the summary); body_internal.h is what
 * they share.
 */
#ifndef DLQX_BODY_H
#define DLQX_BODY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bytes.h"
#include "util.h"

/* A parsed media type: "Application/JSON; charset=UTF-8" gives type "application/json" and
 * charset "utf-8". Owns its strings. */
#define BODY_MEDIA_MAX_PARAMS 8

struct body_param {
    char *name;  /* lowercased (owned) */
    char *value; /* as written, quotes and escapes removed (owned) */
};

struct body_media {
    bool present;        /* a content_type property was given, even an empty or junk one */
    bool valid;          /* it parsed as type "/" subtype */
    char *type;          /* "type/subtype", lowercased; NULL unless valid (owned) */
    const char *subtype; /* points into type after the '/'; NULL unless valid */
    char *charset;       /* the charset parameter, lowercased; NULL when absent (owned) */
    size_t nparams;      /* parameters kept, at most BODY_MEDIA_MAX_PARAMS (the rest dropped) */
    struct body_param params[BODY_MEDIA_MAX_PARAMS];
};

/* Parses a content_type value (any bytes; n may be 0). Never fails: junk gives valid=false.
 * out is overwritten (not freed first); release it with body_media_free. */
void body_media_parse(const void *s, size_t n, struct body_media *out);
void body_media_free(struct body_media *m);
/* Borrowed value of a parameter (name compared case-insensitively), or NULL. */
const char *body_media_param(const struct body_media *m, const char *name);

enum body_kind {
    BODY_EMPTY,
    BODY_JSON,            /* declared JSON (or sniffed JSON that parses); see json_valid */
    BODY_TEXT,            /* UTF-8 text: text/ types, yaml, toml, xml, or sniffed */
    BODY_BINARY,          /* bytes; format names them when known ("protobuf", "avro") */
    BODY_COMPRESSED,      /* content_encoding is a compression: not decompressed, bytes */
    BODY_ENCRYPTED,       /* AceMQ encrypted frame; key_id set */
    BODY_CLAIM_CHECK,     /* AceMQ claim check; inline payload or store_key */
    BODY_AVRO_REGISTERED, /* 0x00 + 4-byte big-endian schema id + Avro; schema_id set */
    BODY_MALFORMED_FRAME, /* declared or looked like a frame and does not hold together */
};

/* Which frame, for the frame kinds and for BODY_MALFORMED_FRAME. */
enum body_frame {
    BODY_FRAME_NONE,
    BODY_FRAME_ENCRYPTED,         /* AE 01 len key-id nonce[12] ciphertext tag[16] */
    BODY_FRAME_ENCRYPTED_GO_OLD,  /* 01 len[2, BE] key-id nonce[12] ciphertext+tag (Go <= 0.3) */
    BODY_FRAME_ENCRYPTED_NET_OLD, /* 01 len key-id iv[16] ciphertext tag[32] (.NET <= 0.3) */
    BODY_FRAME_CLAIM_INLINE,      /* AC 01 00 payload */
    BODY_FRAME_CLAIM_CHECKED,     /* AC 01 01 store-key (the rest, UTF-8) */
    BODY_FRAME_AVRO_REGISTERED,   /* 00 schema-id[4, BE] avro */
};

struct body_info {
    enum body_kind kind;
    size_t len;              /* the body's length */
    struct body_media media; /* the content_type, parsed */
    char *encoding;          /* content_encoding trimmed and lowercased; NULL if absent (owned) */
    const char *format; /* static name: "yaml", "xml", "protobuf", "avro", "gzip"…; or NULL */
    bool sniffed;       /* the kind came from the bytes rather than the content type */
    char note[192];     /* one sentence explaining a fallback or a malformed frame, or "" */

    /* JSON (declared, or sniffed from a body starting '{' or '['). */
    bool json_checked; /* the body was checked as JSON (json_valid says how) */
    bool json_valid;
    char json_error[160]; /* jansson's text when not valid (may quote body bytes) */
    int json_line, json_column;
    size_t json_position; /* byte offset of the error */

    /* Frames. */
    enum body_frame frame;
    size_t payload_off;      /* where the bytes after the frame header start */
    char *key_id;            /* encrypted: the key id, when it could be read (owned) */
    char *store_key;         /* claim check: the store key (owned) */
    uint32_t schema_id;      /* registered Avro */
    struct body_info *inner; /* inline claim check: the payload's own classification (owned) */
};

/* Classifies a body. content_type and content_encoding are the properties as they arrived,
 * NULL when not set (props_string gives exactly that). out is overwritten (not freed first);
 * release with body_info_free. Does not keep data. Never fails. */
void body_classify(const void *data, size_t len, const struct bytes *content_type,
                   const struct bytes *content_encoding, struct body_info *out);
void body_info_free(struct body_info *info);

const char *body_kind_name(enum body_kind k);

enum body_render_flags {
    BODY_RENDER_DEFAULT = 0,
    BODY_RENDER_RAW = 1u << 0, /* JSON as received rather than re-indented */
    BODY_RENDER_HEX = 1u << 1, /* every body as a hexdump, frames and text included */
};

#define BODY_NO_LIMIT SIZE_MAX

/* Appends the body, classified as info, to out as '\n'-terminated lines: JSON re-indented
 * by two spaces (every token kept byte for byte: numbers, escapes and duplicate keys are shown
 * as sent), text as it is, binary as a hexdump (`00000000  7b 22 …  |{"…|`, 16 bytes a line),
 * frames as description lines then a hexdump of what follows the header. At most limit body
 * bytes are shown; the rest is announced by a "… N more bytes" line. data/len must be the
 * bytes that were classified. */
void body_render(const struct body_info *info, const void *data, size_t len, struct strbuf *out,
                 unsigned flags, size_t limit);

/* Appends a hexdump of data to out; offsets are labelled from base. */
void body_hexdump(const void *data, size_t len, size_t base, struct strbuf *out);

/* Appends a one-line summary for tables: "json 1.2 KB", "text 40 B", "protobuf 94 B",
 * "acemq encrypted key=k-2024 86 B", "avro schema=17 200 B". Keys are cut to 40 bytes. */
void body_summary(const struct body_info *info, struct strbuf *out);

/* "40 B", "1.2 KB", "3.0 MB" (powers of 1024). out must hold 16 bytes. */
void body_size_format(size_t n, char out[16]);

#endif
