/*
 * body_media: the properties that say what a body is — content_type parsed as a media type
 * (RFC 9110: type/subtype and parameters) and put in a class (JSON, text, a named binary
 * format, AceMQ's own types), and content_encoding read as a list of codings, the first
 * compression among them named. See body.h and body_internal.h.
 */
#include "body_internal.h"

#include <stdlib.h>
#include <string.h>

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

enum media_class body_media_class(const struct body_media *m, const char **format)
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

/* ---- content encodings ------------------------------------------------------------------ */

char *body_encoding_parse(const struct bytes *content_encoding)
{
    const unsigned char *e = content_encoding->data;
    size_t n = content_encoding->len;
    const unsigned char *nul = n ? memchr(e, '\0', n) : NULL;
    if (nul)
        n = (size_t)(nul - e);
    while (n && is_ows(*e))
        e++, n--;
    while (n && is_ows(e[n - 1]))
        n--;
    return lower_dup(e, n);
}

struct compression {
    const char *token, *name;
};

static const struct compression compressions[] = {
    {"gzip", "gzip"},     {"x-gzip", "gzip"},       {"deflate", "deflate"},     {"br", "br"},
    {"zstd", "zstd"},     {"compress", "compress"}, {"x-compress", "compress"}, {"lz4", "lz4"},
    {"snappy", "snappy"},
};

const char *body_compression(const char *enc)
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

bool body_encoding_harmless(const char *enc)
{
    static const char *const harmless[] = {"",       "identity", "utf-8", "utf8",
                                           "binary", "7bit",     "8bit"};
    for (size_t i = 0; i < sizeof harmless / sizeof harmless[0]; i++)
        if (strcmp(enc, harmless[i]) == 0)
            return true;
    return false;
}
