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

static bool jansson_dump(struct strbuf *out, const json_t *j, size_t flags)
{
    return json_dump_callback(j, dump_cb, out, flags) == 0;
}

/* A string as jansson's dump writes it without JSON_ENSURE_ASCII or JSON_ESCAPE_SLASH: '"'
 * and '\\' escaped, \b \f \n \r \t by name, other bytes below 0x20 as \u00XX (upper-case
 * hex), everything else as it is (0x7f and UTF-8 included). False when it is not UTF-8. */
static bool string_out(struct strbuf *out, const char *s, size_t n)
{
    if (!utf8_valid(s, n))
        return false;
    sb_addc(out, '"');
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        sb_add(out, s + run, i - run);
        run = i + 1;
        switch (c) {
        case '"':
            sb_add(out, "\\\"", 2);
            break;
        case '\\':
            sb_add(out, "\\\\", 2);
            break;
        case '\b':
            sb_add(out, "\\b", 2);
            break;
        case '\f':
            sb_add(out, "\\f", 2);
            break;
        case '\n':
            sb_add(out, "\\n", 2);
            break;
        case '\r':
            sb_add(out, "\\r", 2);
            break;
        case '\t':
            sb_add(out, "\\t", 2);
            break;
        default: {
            static const char hex[] = "0123456789ABCDEF";
            char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
            sb_add(out, e, 6);
            break;
        }
        }
    }
    sb_add(out, s + run, n - run);
    sb_addc(out, '"');
    return true;
}

static void integer_out(struct strbuf *out, json_int_t v)
{
    char buf[24];
    char *p = buf + sizeof buf;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do
        *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (v < 0)
        *--p = '-';
    sb_add(out, p, (size_t)(buf + sizeof buf - p));
}

static bool value_out(struct strbuf *out, const json_t *j, size_t flags, int depth)
{
    if (depth > JSON_OUT_MAX_DEPTH)
        return false;
    switch (json_typeof(j)) {
    case JSON_OBJECT: {
        sb_addc(out, '{');
        const char *key;
        size_t keylen;
        json_t *v;
        bool first = true;
        json_object_keylen_foreach((json_t *)(uintptr_t)j, key, keylen, v)
        {
            if (!first)
                sb_addc(out, ',');
            first = false;
            if (memchr(key, '\0', keylen) || !string_out(out, key, keylen))
                return false;
            sb_addc(out, ':');
            if (!value_out(out, v, flags, depth + 1))
                return false;
        }
        sb_addc(out, '}');
        return true;
    }
    case JSON_ARRAY: {
        sb_addc(out, '[');
        size_t n = json_array_size(j);
        for (size_t i = 0; i < n; i++) {
            if (i)
                sb_addc(out, ',');
            if (!value_out(out, json_array_get(j, i), flags, depth + 1))
                return false;
        }
        sb_addc(out, ']');
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
        sb_add(out, "true", 4);
        return true;
    case JSON_FALSE:
        sb_add(out, "false", 5);
        return true;
    case JSON_NULL:
        sb_add(out, "null", 4);
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
