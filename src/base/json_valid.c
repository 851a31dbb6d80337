/*
 * json_valid: the sure-or-unsure JSON check (see json_valid.h for the contract and why it
 * leaves some valid JSON to jansson).
 *
 * One pass over the bytes, no allocation, no recursion: the open arrays and objects are a bit
 * stack (1 = object), and the parser is a loop over three states — a value is expected, an
 * object key is expected, a value has just ended. String contents, the bulk of a typical body,
 * are skipped eight bytes at a time while no byte in the word is special (below 0x20, '"',
 * '\\', or 0x80 and above).
 */
#include "json_valid.h"

#include <stdint.h>
#include <string.h>

/* ---- string bytes ---------------------------------------------------------------------- */

/* What a byte is inside a string. The UTF-8 lead bytes are split by the range their second
 * byte must be in (RFC 3629 section 4): that is what refuses overlongs (C0, C1, E0 80-9F,
 * F0 80-8F), encoded surrogates (ED A0-BF) and code points above U+10FFFF (F4 90-BF, F5-FF). */
enum {
    P_, /* plain ASCII: 20-7F but '"' and '\\' */
    QU, /* '"', the end of the string */
    ES, /* '\\', an escape */
    BA, /* never valid here: a control byte, a continuation byte, C0, C1, F5-FF */
    U2, /* C2-DF, then 80-BF */
    E0, /* E0, then A0-BF 80-BF */
    U3, /* E1-EC, EE-EF, then 80-BF 80-BF */
    ED, /* ED, then 80-9F 80-BF */
    F0, /* F0, then 90-BF 80-BF 80-BF */
    U4, /* F1-F3, then 80-BF 80-BF 80-BF */
    F4, /* F4, then 80-8F 80-BF 80-BF */
};

static const uint8_t str_class[256] = {
    BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, /* 00-0F */
    BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, /* 10-1F */
    P_, P_, QU, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, /* 20-2F */
    P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, /* 30-3F */
    P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, /* 40-4F */
    P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, ES, P_, P_, P_, /* 50-5F */
    P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, /* 60-6F */
    P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, P_, /* 70-7F */
    BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, /* 80-8F */
    BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, /* 90-9F */
    BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, /* A0-AF */
    BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, /* B0-BF */
    BA, BA, U2, U2, U2, U2, U2, U2, U2, U2, U2, U2, U2, U2, U2, U2, /* C0-CF */
    U2, U2, U2, U2, U2, U2, U2, U2, U2, U2, U2, U2, U2, U2, U2, U2, /* D0-DF */
    E0, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, U3, ED, U3, U3, /* E0-EF */
    F0, U4, U4, U4, F4, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, BA, /* F0-FF */
};

#define ONES UINT64_C(0x0101010101010101)
#define HIGH UINT64_C(0x8080808080808080)

/* Nonzero when a byte of the word is not plain: below 0x20, '"', '\\', or 0x80 and above.
 * (x - ONES * n) & ~x & HIGH is nonzero exactly when a byte of x is below n, for n <= 0x80;
 * with n = 1 it finds a zero byte, so x ^ (ONES * c) finds a byte c. */
static inline uint64_t special8(uint64_t v)
{
    uint64_t q = v ^ (ONES * '"'), b = v ^ (ONES * '\\');
    return (((v - ONES * 0x20) & ~v) | ((q - ONES) & ~q) | ((b - ONES) & ~b) | v) & HIGH;
}

static inline bool in(unsigned char c, unsigned char lo, unsigned char hi)
{
    return c >= lo && c <= hi;
}

static inline int hexval(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c |= 0x20; /* lower case */
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

/* p is just after the opening quote. Returns the byte after the closing quote, or NULL when
 * the string is invalid, unterminated, or holds an escape left to jansson. */
static const unsigned char *scan_string(const unsigned char *p, const unsigned char *end)
{
    for (;;) {
        while (end - p >= 8) {
            uint64_t v;
            memcpy(&v, p, 8);
            if (special8(v))
                break;
            p += 8;
        }
        if (p == end)
            return NULL;
        size_t left = (size_t)(end - p);
        switch (str_class[*p]) {
        case P_:
            p++;
            break;
        case QU:
            return p + 1;
        case ES:
            if (left < 2)
                return NULL;
            switch (p[1]) {
            case '"':
            case '\\':
            case '/':
            case 'b':
            case 'f':
            case 'n':
            case 'r':
            case 't':
                p += 2;
                break;
            case 'u': {
                if (left < 6)
                    return NULL;
                unsigned cp = 0;
                for (int i = 2; i < 6; i++) {
                    int h = hexval(p[i]);
                    if (h < 0)
                        return NULL;
                    cp = cp << 4 | (unsigned)h;
                }
                /* NUL and the surrogates have rules of jansson's own: let it judge. */
                if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
                    return NULL;
                p += 6;
                break;
            }
            default:
                return NULL;
            }
            break;
        case U2:
            if (left < 2 || !in(p[1], 0x80, 0xBF))
                return NULL;
            p += 2;
            break;
        case E0:
            if (left < 3 || !in(p[1], 0xA0, 0xBF) || !in(p[2], 0x80, 0xBF))
                return NULL;
            p += 3;
            break;
        case U3:
            if (left < 3 || !in(p[1], 0x80, 0xBF) || !in(p[2], 0x80, 0xBF))
                return NULL;
            p += 3;
            break;
        case ED:
            if (left < 3 || !in(p[1], 0x80, 0x9F) || !in(p[2], 0x80, 0xBF))
                return NULL;
            p += 3;
            break;
        case F0:
            if (left < 4 || !in(p[1], 0x90, 0xBF) || !in(p[2], 0x80, 0xBF) || !in(p[3], 0x80, 0xBF))
                return NULL;
            p += 4;
            break;
        case U4:
            if (left < 4 || !in(p[1], 0x80, 0xBF) || !in(p[2], 0x80, 0xBF) || !in(p[3], 0x80, 0xBF))
                return NULL;
            p += 4;
            break;
        case F4:
            if (left < 4 || !in(p[1], 0x80, 0x8F) || !in(p[2], 0x80, 0xBF) || !in(p[3], 0x80, 0xBF))
                return NULL;
            p += 4;
            break;
        default: /* BA */
            return NULL;
        }
    }
}

/* ---- numbers, literals ------------------------------------------------------------------ */

static inline bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* The integer digits that surely fit: json_int_t is at least 64 bits, and 10^18 - 1 fits. */
#define INT_DIGITS_MAX 18
/* Before the point of a real: 10^300 is well below DBL_MAX (about 1.8e308). */
#define REAL_DIGITS_MAX 300

/* p is at '-' or a digit. Returns the byte after the number, or NULL when the number is
 * invalid or left to jansson (an exponent, or too many digits to be sure it fits). */
static const unsigned char *scan_number(const unsigned char *p, const unsigned char *end)
{
    if (*p == '-' && ++p == end)
        return NULL;
    const unsigned char *start = p;
    if (*p == '0')
        p++;
    else if (in(*p, '1', '9'))
        do
            p++;
        while (p < end && is_digit(*p));
    else
        return NULL;
    size_t int_digits = (size_t)(p - start);
    if (p < end && *p == '.') {
        p++;
        if (p == end || !is_digit(*p))
            return NULL;
        do
            p++;
        while (p < end && is_digit(*p));
        if (int_digits > REAL_DIGITS_MAX)
            return NULL;
    } else if (int_digits > INT_DIGITS_MAX) {
        return NULL;
    }
    /* An exponent is left to jansson; a digit here follows a leading zero (invalid). */
    if (p < end && (*p == 'e' || *p == 'E' || is_digit(*p)))
        return NULL;
    return p;
}

static inline const unsigned char *literal(const unsigned char *p, const unsigned char *end,
                                           const char *word, size_t n)
{
    if ((size_t)(end - p) < n || memcmp(p, word, n) != 0)
        return NULL;
    return p + n; /* "truex": the byte after is checked as what follows a value */
}

/* ---- structure -------------------------------------------------------------------------- */

static inline const unsigned char *skip_ws(const unsigned char *p, const unsigned char *end)
{
    while (p < end && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
        p++;
    return p;
}

bool json_surely_valid(const void *data, size_t len)
{
    if (len == 0)
        return false; /* and data may be NULL: no pointer arithmetic on it */
    const unsigned char *p = data, *end = p + len;
    /* Bit d set: the container at depth d (0-based) is an object. */
    uint64_t objects[(JSON_VALID_MAX_DEPTH + 63) / 64] = {0};
    size_t depth = 0;

value:
    p = skip_ws(p, end);
    if (p == end)
        return false;
    switch (*p) {
    case '{':
    case '[': {
        if (depth == JSON_VALID_MAX_DEPTH)
            return false;
        bool obj = *p == '{';
        uint64_t bit = UINT64_C(1) << (depth % 64);
        if (obj)
            objects[depth / 64] |= bit;
        else
            objects[depth / 64] &= ~bit;
        depth++;
        p = skip_ws(p + 1, end);
        if (p < end && *p == (obj ? '}' : ']')) {
            p++;
            depth--;
            goto after;
        }
        if (obj)
            goto key;
        goto value;
    }
    case '"':
        p = scan_string(p + 1, end);
        break;
    case '-':
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7':
    case '8':
    case '9':
        p = scan_number(p, end);
        break;
    case 't':
        p = literal(p, end, "true", 4);
        break;
    case 'f':
        p = literal(p, end, "false", 5);
        break;
    case 'n':
        p = literal(p, end, "null", 4);
        break;
    default:
        return false;
    }
    if (!p)
        return false;
    goto after;

key: /* after '{' or an object's ',' */
    p = skip_ws(p, end);
    if (p == end || *p != '"')
        return false;
    p = scan_string(p + 1, end);
    if (!p)
        return false;
    p = skip_ws(p, end);
    if (p == end || *p != ':')
        return false;
    p++;
    goto value;

after: /* a value has ended */
    p = skip_ws(p, end);
    if (depth == 0)
        return p == end;
    if (p == end)
        return false;
    bool in_object = (objects[(depth - 1) / 64] >> ((depth - 1) % 64)) & 1;
    if (*p == ',') {
        p++;
        if (in_object)
            goto key;
        goto value;
    }
    if (*p == (in_object ? '}' : ']')) {
        p++;
        depth--;
        goto after;
    }
    return false;
}
