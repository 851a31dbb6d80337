/*
 * snapshot: the JSON Lines snapshot format's records parsed and written (the file's reader:
 * snapshot_reader.c).
 */
#include "snapshot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hval_json.h"
#include "json_out.h"
#include "snapshot_fast.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* SNAPSHOT_VERSION as text, for the records written directly. */
#define VERSION_TEXT_(v) #v
#define VERSION_TEXT(v) VERSION_TEXT_(v)
#define SNAPSHOT_VERSION_TEXT VERSION_TEXT(SNAPSHOT_VERSION)

enum status snapshot_parse_line(const char *line, size_t len, struct message *out,
                                struct error *err)
{
    if (snapshot_fast_parse(line, len, out))
        return ST_OK;
    return snapshot_parse_jansson(line, len, out, err);
}

enum status snapshot_parse_jansson(const char *line, size_t len, struct message *out,
                                   struct error *err)
{
    json_error_t je;
    json_t *j = json_loadb(line, len, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, &je);
    if (!j) {
        message_init(out);
        return error_set(err, ST_EPARSE, "not JSON (column %d): %s", je.column, je.text);
    }
    enum status st = snapshot_from_json(j, out, err);
    json_decref(j);
    return st;
}

static enum status string_field(const json_t *j, const char *key, struct bytes *out,
                                struct error *err)
{
    const json_t *v = json_object_get(j, key);
    if (!v || json_is_null(v))
        return ST_OK;
    bytes_free(out);
    return bytes_from_json(v, key, out, err);
}

static enum status props_from_json(const json_t *p, struct props *out, struct error *err)
{
    if (!json_is_object(p))
        return error_set(err, ST_EPARSE, "properties: expected an object");
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)(uintptr_t)p, key, v)
    {
        if (json_is_null(v))
            continue;
        unsigned f;
        for (f = 0; f < PROP_COUNT; f++)
            if (strcmp(prop_name((enum prop_flag)f), key) == 0)
                break;
        if (f == PROP_COUNT)
            return error_set(err, ST_EPARSE, "properties: unknown property \"%.64s\"", key);
        if (f < PROP_delivery_mode) {
            struct bytes b = {0, NULL};
            char path[96];
            snprintf(path, sizeof path, "properties.%s", key);
            enum status st = bytes_from_json(v, path, &b, err);
            if (st != ST_OK)
                return st;
            if (b.len > 255) {
                bytes_free(&b);
                return error_set(err, ST_ERANGE,
                                 "properties.%s: longer than 255 bytes (an AMQP short string)",
                                 key);
            }
            props_set_string(out, (enum prop_flag)f, b.data, b.len);
            bytes_free(&b);
            continue;
        }
        if (f == PROP_timestamp) {
            /* 64 unsigned bits: a decimal string above 2^63-1 (as the writer writes it) */
            if (!json_is_string(v) && (!json_is_integer(v) || json_integer_value(v) < 0))
                return error_set(err, ST_EPARSE,
                                 "properties.timestamp: expected a non-negative integer");
            enum status st = u64_from_json(v, "properties.timestamp", &out->timestamp, err);
            if (st != ST_OK)
                return st;
            out->present |= 1u << f;
            continue;
        }
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return error_set(err, ST_EPARSE, "properties.%s: expected a non-negative integer", key);
        json_int_t i = json_integer_value(v);
        {
            if (i > 255)
                return error_set(err, ST_ERANGE, "properties.%s: %lld is more than 255", key,
                                 (long long)i);
            if (f == PROP_delivery_mode)
                out->delivery_mode = (uint8_t)i;
            else
                out->priority = (uint8_t)i;
        }
        out->present |= 1u << f;
    }
    return ST_OK;
}

static const char *const known_keys[] = {
    "v",          "queue",   "exchange", "routing_key", "redelivered",   "fetched_at_ms",
    "properties", "headers", "body",     "body_base64", "stream_offset", NULL,
};

enum status snapshot_from_json(const json_t *j, struct message *out, struct error *err)
{
    message_init(out);
    enum status st = ST_OK;
    if (!json_is_object(j)) {
        st = error_set(err, ST_EPARSE, "a record is a JSON object");
        goto fail;
    }
    const json_t *v = json_object_get(j, "v");
    if (v && (!json_is_integer(v) || json_integer_value(v) < 1)) {
        st = error_set(err, ST_EPARSE, "\"v\" must be a positive integer");
        goto fail;
    }
    if (v && json_integer_value(v) > SNAPSHOT_VERSION) {
        st = error_set(err, ST_EUNSUPPORTED,
                       "snapshot format version %lld is newer than this dlqx reads (%d)",
                       (long long)json_integer_value(v), SNAPSHOT_VERSION);
        goto fail;
    }
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)(uintptr_t)j, key, val)
    {
        bool known = false;
        for (size_t k = 0; known_keys[k]; k++)
            known = known || strcmp(known_keys[k], key) == 0;
        if (!known) {
            st = error_set(err, ST_EPARSE, "unknown key \"%.64s\"", key);
            goto fail;
        }
    }
    if ((st = string_field(j, "queue", &out->queue, err)) != ST_OK ||
        (st = string_field(j, "exchange", &out->exchange, err)) != ST_OK ||
        (st = string_field(j, "routing_key", &out->routing_key, err)) != ST_OK)
        goto fail;
    if ((v = json_object_get(j, "redelivered")) && !json_is_null(v)) {
        if (!json_is_boolean(v)) {
            st = error_set(err, ST_EPARSE, "\"redelivered\" must be true or false");
            goto fail;
        }
        out->redelivered = json_is_true(v);
    }
    if ((v = json_object_get(j, "fetched_at_ms")) && !json_is_null(v)) {
        if (!json_is_integer(v)) {
            st = error_set(err, ST_EPARSE, "\"fetched_at_ms\" must be an integer");
            goto fail;
        }
        out->fetched_at_ms = json_integer_value(v);
    }
    if ((v = json_object_get(j, "stream_offset")) && !json_is_null(v)) {
        if (!json_is_string(v) && (!json_is_integer(v) || json_integer_value(v) < 0)) {
            st = error_set(err, ST_EPARSE, "\"stream_offset\" must be a non-negative integer");
            goto fail;
        }
        if ((st = u64_from_json(v, "stream_offset", &out->stream_offset, err)) != ST_OK)
            goto fail;
        out->has_stream_offset = true;
    }
    if ((v = json_object_get(j, "properties")) && !json_is_null(v)) {
        if ((st = props_from_json(v, &out->props, err)) != ST_OK)
            goto fail;
    }
    if ((v = json_object_get(j, "headers")) && !json_is_null(v)) {
        struct htable *t;
        if ((st = htable_from_json(v, "headers", &t, err)) != ST_OK)
            goto fail;
        htable_free(out->headers);
        out->headers = t;
        out->headers_present = true;
    }
    const json_t *body = json_object_get(j, "body");
    const json_t *b64 = json_object_get(j, "body_base64");
    if (body && b64 && !json_is_null(body) && !json_is_null(b64)) {
        st = error_set(err, ST_EPARSE, "a record has \"body\" or \"body_base64\", not both");
        goto fail;
    }
    if (body && !json_is_null(body)) {
        if (!json_is_string(body)) {
            st = error_set(err, ST_EPARSE, "\"body\" must be a string (use body_base64 for bytes)");
            goto fail;
        }
        out->body = bytes_dup(json_string_value(body), json_string_length(body));
    } else if (b64 && !json_is_null(b64)) {
        if (!json_is_string(b64) ||
            !base64_decode(json_string_value(b64), json_string_length(b64), &out->body)) {
            st = error_set(err, ST_EPARSE, "\"body_base64\" is not valid base64");
            goto fail;
        }
    }
    return ST_OK;
fail:
    message_free(out);
    message_init(out);
    return st;
}

json_t *snapshot_props_to_json(const struct props *props)
{
    json_t *p = json_object();
    for (unsigned f = 0; f < PROP_COUNT; f++) {
        if (!props_has(props, (enum prop_flag)f))
            continue;
        const char *name = prop_name((enum prop_flag)f);
        if (f < PROP_delivery_mode) {
            const struct bytes *b = props_string(props, (enum prop_flag)f);
            json_object_set_new(p, name, bytes_to_json(b->data, b->len));
        } else if (f == PROP_delivery_mode) {
            json_object_set_new(p, name, json_integer(props->delivery_mode));
        } else if (f == PROP_priority) {
            json_object_set_new(p, name, json_integer(props->priority));
        } else {
            json_object_set_new(p, name, u64_to_json(props->timestamp));
        }
    }
    return p;
}

json_t *snapshot_to_json(const struct message *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "v", json_integer(SNAPSHOT_VERSION));
    json_object_set_new(o, "queue", bytes_to_json(m->queue.data, m->queue.len));
    json_object_set_new(o, "exchange", bytes_to_json(m->exchange.data, m->exchange.len));
    json_object_set_new(o, "routing_key", bytes_to_json(m->routing_key.data, m->routing_key.len));
    json_object_set_new(o, "redelivered", json_boolean(m->redelivered));
    json_object_set_new(o, "fetched_at_ms", json_integer(m->fetched_at_ms));
    if (m->has_stream_offset)
        json_object_set_new(o, "stream_offset", u64_to_json(m->stream_offset));
    json_object_set_new(o, "properties", snapshot_props_to_json(&m->props));
    if (m->headers_present)
        json_object_set_new(o, "headers", htable_to_json(m->headers));
    if (utf8_valid(m->body.data, m->body.len)) {
        json_object_set_new(
            o, "body", json_stringn(m->body.len ? (const char *)m->body.data : "", m->body.len));
    } else {
        char *b = base64_encode(m->body.data, m->body.len);
        json_object_set_new(o, "body_base64", json_string(b));
        free(b);
    }
    return o;
}

static int sb_dump_cb(const char *buffer, size_t size, void *data)
{
    sb_add(data, buffer, size);
    return 0;
}

/* The escape of c (a byte below 0x20, '"' or '\\') at o, as jansson writes it; its length. */
static inline size_t body_escape(char *o, unsigned char c)
{
    static const char hex[] = "0123456789ABCDEF";
    char e = 0;
    switch (c) {
    case '"':
        e = '"';
        break;
    case '\\':
        e = '\\';
        break;
    case '\b':
        e = 'b';
        break;
    case '\f':
        e = 'f';
        break;
    case '\n':
        e = 'n';
        break;
    case '\r':
        e = 'r';
        break;
    case '\t':
        e = 't';
        break;
    default:
        memcpy(o, "\\u00", 4);
        o[4] = hex[c >> 4];
        o[5] = hex[c & 15];
        return 6;
    }
    o[0] = '\\';
    o[1] = e;
    return 2;
}

#if defined(__SSE2__)
/* The bytes of the sixteen at p that a body's string cannot hold as they are: below 0x20 or
 * above 0x7f (both below 0x20 as signed bytes), '"' and '\\'. */
static inline __m128i body_bad16(__m128i v)
{
    return _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                        _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                     _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
}
#endif

/* The body as a JSON string, escaped exactly as jansson's compact dump escapes it (so the
 * fast path below and snapshot_to_json write the same bytes), in one pass that checks it is
 * UTF-8 as it goes: false, with out as it was, when it is not (utf8_valid's answer). The
 * bytes are copied as they are scanned, sixteen at a time (a chunk is stored whole, and the
 * part after a byte to escape written again after the escape): room for the body and one
 * chunk more is made first, and more only when escapes need it. */
static bool body_string_append(struct strbuf *out, const unsigned char *s, size_t n)
{
    size_t start = out->len;
    if (out->cap - out->len <= n + 24)
        sb_grow(out, n + 24);
    char *o = out->buf + out->len;
    *o++ = '"';
    size_t i = 0;
    while (i < n) {
        unsigned char c;
#if defined(__SSE2__)
        unsigned m = 0;
        while (i + 16 <= n) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
            _mm_storeu_si128((__m128i *)(void *)o, v);
            m = (unsigned)_mm_movemask_epi8(body_bad16(v));
            if (m)
                break;
            i += 16;
            o += 16;
        }
        if (m) { /* s[i + j] is not plain: the bytes before it are stored */
            size_t j = (size_t)__builtin_ctz(m);
            i += j;
            o += j;
            c = s[i];
        } else
#endif
        {
            if (i == n)
                break;
            c = s[i];
            if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
                *o++ = (char)c;
                i++;
                continue;
            }
        }
        if (c >= 0x80) {
            size_t k = utf8_char_len(s + i, n - i);
            if (!k) {
                out->len = start;
                out->buf[start] = '\0';
                return false;
            }
            memcpy(o, s + i, k);
            o += k;
            i += k;
        } else {
            /* room for this escape, the rest of the body and a chunk's store after it */
            size_t at = (size_t)(o - out->buf);
            if (out->cap - at <= n - i + 24) {
                out->len = at;
                sb_grow(out, n - i + 24);
                o = out->buf + at;
            }
            o += body_escape(o, c);
            i++;
        }
    }
    *o++ = '"';
    out->len = (size_t)(o - out->buf);
    out->buf[out->len] = '\0';
    return true;
}

static void json_value_append(struct strbuf *out, json_t *v)
{
    size_t flags = JSON_COMPACT | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY;
    if (!json_out_fast(out, v, flags))
        json_dump_callback(v, sb_dump_cb, out, flags);
    json_decref(v);
}

/* bytes_to_json's value, written directly when it is a string. */
static void bytes_append(struct strbuf *out, const struct bytes *b)
{
    if (!json_put_string(out, b->data, b->len))
        json_value_append(out, bytes_to_json(b->data, b->len));
}

bool snapshot_props_write(struct strbuf *out, const struct props *p)
{
    size_t start = out->len;
    sb_addc(out, '{');
    /* the names (plain ASCII) with their lengths, in enum prop_flag's order */
    static const struct {
        const char *s;
        size_t n;
    } names[PROP_COUNT] = {
#define X(name) {#name, sizeof #name - 1},
        PROP_STRING_LIST(X)
#undef X
            {"delivery_mode", 13},
        {"priority", 8},
        {"timestamp", 9},
    };
    bool first = true;
    /* only the set properties, in order (a bit above PROP_COUNT is not one) */
    for (uint32_t bits = p->present & ((1u << PROP_COUNT) - 1); bits; bits &= bits - 1) {
        unsigned f = (unsigned)__builtin_ctz(bits);
        json_put_quoted(out, first ? 0 : ',', names[f].s, names[f].n, ':');
        first = false;
        bool ok = true;
        if (f < PROP_delivery_mode) {
            const struct bytes *b = props_string(p, (enum prop_flag)f);
            ok = json_put_string(out, b->data, b->len);
        } else if (f == PROP_delivery_mode) {
            json_out_integer(out, p->delivery_mode);
        } else if (f == PROP_priority) {
            json_out_integer(out, p->priority);
        } else if (p->timestamp <= (uint64_t)INT64_MAX) {
            json_out_integer(out, (long long)p->timestamp);
        } else {
            ok = false;
        }
        if (!ok) {
            out->len = start;
            out->buf[start] = '\0';
            return false;
        }
    }
    sb_addc(out, '}');
    return true;
}

/* The record without building it as a JSON tree: the keys, strings, integers, properties
 * and the common header kinds written here, the rest (non-UTF-8 strings, floats, decimals,
 * typed tables, big unsigned values) through jansson. The output is byte for byte what
 * dumping snapshot_to_json gives (tests hold them to it). */
void snapshot_format(const struct message *m, struct strbuf *out)
{
    sb_adds(out, "{\"v\":" SNAPSHOT_VERSION_TEXT ",\"queue\":");
    bytes_append(out, &m->queue);
    sb_adds(out, ",\"exchange\":");
    bytes_append(out, &m->exchange);
    sb_adds(out, ",\"routing_key\":");
    bytes_append(out, &m->routing_key);
    sb_adds(out, m->redelivered ? ",\"redelivered\":true,\"fetched_at_ms\":"
                                : ",\"redelivered\":false,\"fetched_at_ms\":");
    json_out_integer(out, (long long)m->fetched_at_ms);
    if (m->has_stream_offset) {
        sb_adds(out, ",\"stream_offset\":");
        json_value_append(out, u64_to_json(m->stream_offset));
    }
    sb_adds(out, ",\"properties\":");
    if (!snapshot_props_write(out, &m->props))
        json_value_append(out, snapshot_props_to_json(&m->props));
    if (m->headers_present) {
        sb_adds(out, ",\"headers\":");
        if (!htable_write_json(m->headers, out))
            json_value_append(out, htable_to_json(m->headers));
    }
    const unsigned char *b = m->body.data ? m->body.data : (const unsigned char *)"";
    size_t before = out->len;
    sb_adds(out, ",\"body\":");
    if (!body_string_append(out, b, m->body.len)) {
        out->len = before;
        out->buf[before] = '\0';
        char *b64 = base64_encode(b, m->body.len);
        sb_adds(out, ",\"body_base64\":\"");
        sb_adds(out, b64);
        sb_addc(out, '"');
        free(b64);
    }
    sb_adds(out, "}\n");
}

enum status snapshot_write(FILE *f, const struct message *m, struct error *err)
{
    struct strbuf sb;
    sb_init(&sb);
    snapshot_format(m, &sb);
    size_t w = fwrite(sb.buf, 1, sb.len, f);
    size_t want = sb.len;
    sb_free(&sb);
    if (w != want)
        return error_set(err, ST_EIO, "write failed: %s", strerror(errno));
    return ST_OK;
}

enum status snapshot_round_trip(const struct message *m, struct strbuf *line, struct error *err)
{
    sb_reset(line);
    snapshot_format(m, line);
    if (!line->len || line->buf[line->len - 1] != '\n')
        return error_set(err, ST_EINVAL, "the record written does not end with a newline");
    struct message back;
    struct error e;
    error_clear(&e);
    if (snapshot_parse_line(line->buf, line->len - 1, &back, &e) != ST_OK) {
        message_free(&back);
        return error_set(err, ST_EPARSE, "the record written does not read back: %s", e.msg);
    }
    bool same = message_equal(m, &back);
    message_free(&back);
    if (!same)
        return error_set(err, ST_EINVAL, "the record written reads back as a different message");
    return ST_OK;
}
