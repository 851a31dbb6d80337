/*
 * json_out: a compact JSON writer that gives jansson's bytes (see json_out.h). `dlqx decode`
 * spent 45% of its time in json_dump_callback, a call back for every token and every run of
 * a string; this writes into the buffer directly.
 */
#include "json_out.h"

#include <string.h>

#include "bytes.h"

static int dump_cb(const char *buffer, size_t size, void *data)
{
    sb_add(data, buffer, size);
    return 0;
}

/* sb_add, with the common case (room enough) inline: a call and a grow check for every
 * byte of punctuation was half of this writer's time. */
static inline void put(struct strbuf *o, const void *p, size_t n)
{
    if (o->len + n < o->cap) {
        memcpy(o->buf + o->len, p, n);
        o->len += n;
        o->buf[o->len] = '\0';
    } else {
        sb_add(o, p, n);
    }
}

static inline void putc1(struct strbuf *o, char c)
{
    if (o->len + 1 < o->cap) {
        o->buf[o->len++] = c;
        o->buf[o->len] = '\0';
    } else {
        sb_add(o, &c, 1);
    }
}

static bool jansson_dump(struct strbuf *out, const json_t *j, size_t flags)
{
    return json_dump_callback(j, dump_cb, out, flags) == 0;
}

/* A string as jansson's dump writes it without JSON_ENSURE_ASCII or JSON_ESCAPE_SLASH: '"'
 * and '\\' escaped, \b \f \n \r \t by name, other bytes below 0x20 as \u00XX (upper-case
 * hex), everything else as it is (0x7f and UTF-8 included). False when it is not UTF-8. */
static bool string_escaped(struct strbuf *out, const char *s, size_t n)
{
    size_t plain = json_plain_prefix(s, n, true);
    /* the bytes before plain are ASCII: the rest starts a character */
    if (!utf8_valid(s + plain, n - plain))
        return false;
    putc1(out, '"');
    size_t run = 0;
    for (size_t i = plain; i < n; i++) {
        i += json_plain_prefix(s + i, n - i, false);
        if (i == n)
            break;
        unsigned char c = (unsigned char)s[i];
        put(out, s + run, i - run);
        run = i + 1;
        switch (c) {
        case '"':
            put(out, "\\\"", 2);
            break;
        case '\\':
            put(out, "\\\\", 2);
            break;
        case '\b':
            put(out, "\\b", 2);
            break;
        case '\f':
            put(out, "\\f", 2);
            break;
        case '\n':
            put(out, "\\n", 2);
            break;
        case '\r':
            put(out, "\\r", 2);
            break;
        case '\t':
            put(out, "\\t", 2);
            break;
        default: {
            static const char hex[] = "0123456789ABCDEF";
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            put(out, e, 6);
            break;
        }
        }
    }
    put(out, s + run, n - run);
    putc1(out, '"');
    return true;
}

static bool string_out(struct strbuf *out, const char *s, size_t n)
{
    /* The common case, printable ASCII with nothing to escape, checked as it is copied
     * (a scan, then a copy, was a fifth of decode's writing); anything else is undone. */
    return json_out_plain(out, s, n) || string_escaped(out, s, n);
}

/* Two digits at a time: a time in milliseconds (13 digits) in 7 steps, not 13. */
static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324"
                                     "25262728293031323334353637383940414243444546474849"
                                     "50515253545556575859606162636465666768697071727374"
                                     "75767778798081828384858687888990919293949596979899";

static void integer_out(struct strbuf *out, long long v)
{
    if (v >= 0 && v < 10) { /* a version, an attempt, a delivery mode */
        putc1(out, (char)('0' + v));
        return;
    }
    /* the digits end at buf + 24; 24 bytes from the first are copied at once (a fixed size:
     * no call), of which the number's are kept */
    char buf[48];
    char *p = buf + 24;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    while (u >= 100) {
        unsigned r = (unsigned)(u % 100);
        u /= 100;
        p -= 2;
        memcpy(p, digit_pairs + 2 * r, 2);
    }
    if (u >= 10) {
        p -= 2;
        memcpy(p, digit_pairs + 2 * u, 2);
    } else {
        *--p = (char)('0' + u);
    }
    if (v < 0)
        *--p = '-';
    size_t n = (size_t)(buf + 24 - p);
    if (out->cap - out->len <= 24)
        sb_grow(out, 24);
    memcpy(out->buf + out->len, p, 24);
    out->len += n;
    out->buf[out->len] = '\0';
}

static bool value_out(struct strbuf *out, const json_t *j, size_t flags, int depth)
{
    if (depth > JSON_OUT_MAX_DEPTH)
        return false;
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        putc1(out, '{');
        const char *key;
        size_t keylen;
        json_t *v;
        bool first = true;
        json_object_keylen_foreach((json_t *)(uintptr_t)j, key, keylen, v)
        {
            if (!first)
                putc1(out, ',');
            first = false;
            if (memchr(key, '\0', keylen) || !string_out(out, key, keylen))
                return false;
            putc1(out, ':');
            if (!value_out(out, v, flags, depth + 1))
                return false;
        }
        putc1(out, '}');
        return true;
    }
    case JSON_ARRAY: {
        putc1(out, '[');
        size_t n = json_array_size(j);
        for (size_t i = 0; i < n; i++) {
            if (i)
                putc1(out, ',');
            if (!value_out(out, json_array_get(j, i), flags, depth + 1))
                return false;
        }
        putc1(out, ']');
        return true;
    }
    case JSON_STRING:
        return string_out(out, json_string_value(j), json_string_length(j));
    case JSON_INTEGER:
        integer_out(out, json_integer_value(j));
        return true;
    case JSON_REAL:
        /* jansson's own dtostr (precision, the ".0" it adds, its exponent form) */
        return jansson_dump(out, j, flags | JSON_ENCODE_ANY);
    case JSON_TRUE:
        put(out, "true", 4);
        return true;
    case JSON_FALSE:
        put(out, "false", 5);
        return true;
    case JSON_NULL:
        put(out, "null", 4);
        return true;
    default:
        return false;
    }
}

bool json_out_fast(struct strbuf *out, const json_t *j, size_t flags)
{
    size_t start = out->len;
    /* Only JSON_COMPACT, JSON_ENCODE_ANY and a real precision are this writer's. */
    size_t own = JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(31);
    bool ok = j && (flags & JSON_COMPACT) && !(flags & ~own) &&
              (json_is_object(j) || json_is_array(j) || (flags & JSON_ENCODE_ANY)) &&
              value_out(out, j, flags, 0);
    if (!ok) {
        out->len = start;
        if (out->buf)
            out->buf[start] = '\0';
    }
    return ok;
}

bool json_out_string_escaped(struct strbuf *out, const void *s, size_t n)
{
    size_t start = out->len;
    if (string_escaped(out, n ? s : "", n))
        return true;
    out->len = start;
    if (out->buf)
        out->buf[start] = '\0';
    return false;
}

void json_out_integer(struct strbuf *out, long long v)
{
    integer_out(out, v);
}
