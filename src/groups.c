/*
 * groups: the error normaliser (one pass, bounded by FINGERPRINT_MAX of output), the
 * exception finder, failure groups built in one pass over the store with hash tables, and the
 * arrivals timeline with its text rendering.
 */
#include "groups.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "filter.h"

/* ---- character classes (ASCII; bytes >= 0x80 are judged as UTF-8 sequences) ---- */

static inline bool is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

static inline bool is_alpha(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static inline bool is_alnum(unsigned char c)
{
    return is_digit(c) || is_alpha(c);
}

static inline bool is_hex(unsigned char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Length of the well-formed UTF-8 sequence at s[i] (no overlongs, surrogates or > U+10FFFF),
 * or 0 when it is not one. */
static size_t utf8_seq(const unsigned char *s, size_t i, size_t n)
{
    unsigned char c = s[i];
    size_t len;
    unsigned lo = 0x80, hi = 0xbf;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        lo = c == 0xe0 ? 0xa0 : 0x80;
        hi = c == 0xed ? 0x9f : 0xbf;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        lo = c == 0xf0 ? 0x90 : 0x80;
        hi = c == 0xf4 ? 0x8f : 0xbf;
    } else
        return 0;
    if (i + len > n || s[i + 1] < lo || s[i + 1] > hi)
        return 0;
    for (size_t k = 2; k < len; k++)
        if (s[i + k] < 0x80 || s[i + k] > 0xbf)
            return 0;
    return len;
}

/* A character that belongs to a word: ASCII letters, digits, _, and non-ASCII characters
 * other than the C1 controls. Returns its length in bytes, 0 when s[i] is not one. */
static size_t word_char(const unsigned char *s, size_t i, size_t n)
{
    if (s[i] < 0x80)
        return is_alnum(s[i]) || s[i] == '_';
    size_t k = utf8_seq(s, i, n);
    if (k == 2 && s[i] == 0xc2 && s[i + 1] < 0xa0)
        return 0; /* C1 control */
    return k;
}

static size_t word_end(const unsigned char *s, size_t i, size_t n)
{
    size_t k;
    while (i < n && (k = word_char(s, i, n)) != 0)
        i += k;
    return i;
}

static bool word_at(const unsigned char *s, size_t i, size_t n)
{
    return i < n && word_char(s, i, n) != 0;
}

/* ---- output ---- */

/* The normalised text is written into a fixed buffer (it is bounded) and copied out once. */
struct out {
    char buf[FINGERPRINT_MAX + 1];
    size_t len;
    bool space; /* a space is pending */
    bool full;
};

static void put(struct out *o, const void *p, size_t n)
{
    size_t sp = o->space && o->len;
    o->space = false;
    if (o->full || o->len + sp + n > FINGERPRINT_MAX) {
        o->full = true;
        return;
    }
    if (sp)
        o->buf[o->len++] = ' ';
    if (n == 1)
        o->buf[o->len++] = *(const char *)p;
    else
        memcpy(o->buf + o->len, p, n);
    o->len += n == 1 ? 0 : n;
}

static void puts_(struct out *o, const char *s)
{
    put(o, s, strlen(s));
}

/* ---- structured values, each tried at the start of a word ---- */

static size_t digits(const unsigned char *s, size_t i, size_t n, size_t max)
{
    size_t k = 0;
    while (i + k < n && k < max && is_digit(s[i + k]))
        k++;
    return k;
}

static size_t exact_digits(const unsigned char *s, size_t i, size_t n, size_t count)
{
    return digits(s, i, n, count) == count ? count : 0;
}

/* hh:mm[:ss[.frac]] at i; returns its length or 0. need_seconds: a bare time needs them. */
static size_t clock_time(const unsigned char *s, size_t i, size_t n, bool need_seconds)
{
    if (!exact_digits(s, i, n, 2) || i + 2 >= n || s[i + 2] != ':' || !exact_digits(s, i + 3, n, 2))
        return 0;
    size_t j = i + 5;
    if (j + 2 < n && s[j] == ':' && exact_digits(s, j + 1, n, 2)) {
        j += 3;
        if (j + 1 < n && (s[j] == '.' || s[j] == ',') && is_digit(s[j + 1])) {
            j++;
            while (j < n && is_digit(s[j]))
                j++;
        }
    } else if (need_seconds) {
        return 0;
    }
    return j - i;
}

static size_t zone(const unsigned char *s, size_t j, size_t n)
{
    if (j < n && (s[j] == 'Z' || s[j] == 'z'))
        return 1;
    if (j < n && (s[j] == '+' || s[j] == '-') && exact_digits(s, j + 1, n, 2)) {
        size_t k = 3;
        if (j + k < n && s[j + k] == ':')
            k++;
        if (exact_digits(s, j + k, n, 2))
            return k + 2;
        return 3;
    }
    return 0;
}

/* ISO dates and times: 2026-01-02, 2026-01-02T03:04:05.678Z, 2026-01-02 03:04, 03:04:05. */
static size_t iso_time(const unsigned char *s, size_t i, size_t n)
{
    size_t j;
    if (exact_digits(s, i, n, 4) && i + 4 < n && s[i + 4] == '-' && exact_digits(s, i + 5, n, 2) &&
        i + 7 < n && s[i + 7] == '-' && exact_digits(s, i + 8, n, 2)) {
        j = i + 10;
        size_t t;
        if (j < n && (s[j] == 'T' || s[j] == 't' || s[j] == ' ') &&
            (t = clock_time(s, j + 1, n, false)) != 0) {
            j += 1 + t;
            j += zone(s, j, n);
        }
    } else {
        size_t t = clock_time(s, i, n, true);
        if (!t)
            return 0;
        j = i + t;
        j += zone(s, j, n);
    }
    return word_at(s, j, n) ? 0 : j - i;
}

static size_t uuid_at(const unsigned char *s, size_t i, size_t n)
{
    static const size_t groups[] = {8, 4, 4, 4, 12};
    size_t j = i;
    for (int g = 0; g < 5; g++) {
        if (g) {
            if (j >= n || s[j] != '-')
                return 0;
            j++;
        }
        for (size_t k = 0; k < groups[g]; k++, j++)
            if (j >= n || !is_hex(s[j]))
                return 0;
    }
    return word_at(s, j, n) ? 0 : j - i;
}

static size_t ipv4_at(const unsigned char *s, size_t i, size_t n)
{
    size_t j = i;
    for (int part = 0; part < 4; part++) {
        if (part) {
            if (j >= n || s[j] != '.')
                return 0;
            j++;
        }
        size_t d = digits(s, j, n, 4);
        if (d == 0 || d > 3)
            return 0;
        j += d;
    }
    if (word_at(s, j, n) || (j + 1 < n && s[j] == '.' && is_digit(s[j + 1])))
        return 0;
    return j - i;
}

/* IPv6: hex groups and colons, with at least two colons and a digit (so Net::ReadTimeout and
 * Foo::Bar are not addresses). */
static size_t ipv6_at(const unsigned char *s, size_t i, size_t n)
{
    size_t j = i, colons = 0, run = 0;
    bool digit = false;
    while (j < n && (is_hex(s[j]) || s[j] == ':')) {
        if (s[j] == ':') {
            colons++;
            run = 0;
            if (j + 2 < n && s[j + 1] == ':' && s[j + 2] == ':')
                return 0;
        } else if (++run > 4) {
            return 0;
        }
        digit = digit || is_digit(s[j]);
        j++;
    }
    if (colons < 2 || !digit || word_at(s, j, n) || j - i < 3)
        return 0;
    return j - i;
}

static size_t email_at(const unsigned char *s, size_t i, size_t n)
{
    size_t j = i;
    while (j < n && (is_alnum(s[j]) || s[j] == '.' || s[j] == '_' || s[j] == '%' || s[j] == '+' ||
                     s[j] == '-'))
        j++;
    if (j == i || j >= n || s[j] != '@')
        return 0;
    size_t d = ++j, dots = 0, last_label = 0, label = 0;
    while (j < n && (is_alnum(s[j]) || s[j] == '-' || s[j] == '.')) {
        if (s[j] == '.') {
            if (label == 0)
                return 0;
            dots++;
            last_label = label;
            label = 0;
        } else {
            label++;
        }
        j++;
    }
    if (j > d && s[j - 1] == '.') { /* a sentence's full stop */
        j--;
        dots--;
        label = last_label;
    }
    if (dots == 0 || label < 2 || word_at(s, j, n))
        return 0;
    return j - i;
}

static size_t url_scheme(const unsigned char *s, size_t i, size_t n)
{
    size_t j = i;
    while (j < n && (is_alnum(s[j]) || s[j] == '+' || s[j] == '-' || s[j] == '.'))
        j++;
    if (j - i < 2 || j + 3 > n || memcmp(s + j, "://", 3) != 0)
        return 0;
    return j + 3 - i;
}

/* ---- words ---- */

/* One segment of a word (no underscores): numbers, hex and random ids become placeholders,
 * while words, class names and short version-like tokens (v1, sha256, OAuth2Error) stay. */
static void put_segment(struct out *o, const unsigned char *s, size_t n)
{
    size_t nd = 0, runs = 0, hex = 0, hexletters = 0;
    bool ascii = true;
    for (size_t k = 0; k < n; k++) {
        if (is_digit(s[k])) {
            nd++;
            runs += k == 0 || !is_digit(s[k - 1]);
        }
        if (is_hex(s[k])) {
            hex++;
            hexletters += !is_digit(s[k]);
        }
        ascii = ascii && s[k] < 0x80;
    }
    if (nd == n) {
        puts_(o, "<n>");
        return;
    }
    if (ascii && hex == n && ((nd && hexletters && n >= 6) || (!nd && n >= 16))) {
        puts_(o, "<id>");
        return;
    }
    if (ascii && runs >= 2 && n >= 8) {
        puts_(o, "<id>");
        return;
    }
    /* A leading number (30012ms, 5th) and long digit runs (ORD12345) go; short runs stay. */
    size_t k = 0;
    while (k < n) {
        if (is_digit(s[k])) {
            size_t e = k;
            while (e < n && is_digit(s[e]))
                e++;
            if (k == 0 || e - k >= 4)
                puts_(o, "<n>");
            else
                put(o, s + k, e - k);
            k = e;
        } else {
            size_t e = k;
            while (e < n && !is_digit(s[e]))
                e++;
            put(o, s + k, e - k);
            k = e;
        }
    }
}

static void put_word(struct out *o, const unsigned char *s, size_t n)
{
    size_t k = 0;
    while (k < n) {
        size_t e = k;
        while (e < n && s[e] != '_')
            e++;
        if (e > k)
            put_segment(o, s + k, e - k);
        while (e < n && s[e] == '_') {
            put(o, "_", 1);
            e++;
        }
        k = e;
    }
}

/* A number at a word start: digits, a fraction or more dotted parts, 0x hex, and a unit
 * (30012ms, 1.5s). Returns how much it took, 0 when the word is not a number. */
static size_t number_at(struct out *o, const unsigned char *s, size_t i, size_t n)
{
    size_t j = i;
    if (j + 2 < n && s[j] == '0' && (s[j + 1] == 'x' || s[j + 1] == 'X') && is_hex(s[j + 2])) {
        j += 2;
        while (j < n && is_hex(s[j]))
            j++;
        if (word_at(s, j, n))
            return 0;
        puts_(o, "<n>");
        return j - i;
    }
    j += digits(s, i, n, SIZE_MAX);
    while (j + 1 < n && (s[j] == '.' || s[j] == ',') && is_digit(s[j + 1]))
        j += 1 + digits(s, j + 1, n, SIZE_MAX);
    size_t unit = j;
    while (unit < n && is_alpha(s[unit]))
        unit++;
    if (word_at(s, unit, n))
        return 0; /* letters and digits again: an id, judged as a word */
    puts_(o, "<n>");
    if (unit > j)
        put(o, s + j, unit - j);
    return unit - i;
}

/* The longest quoted value starting at s[i] (a quote after a non-word character, closed by the
 * same quote before a non-word character); 0 when it is an apostrophe or never closed. */
static size_t quoted_at(const unsigned char *s, size_t i, size_t n)
{
    unsigned char q = s[i];
    if (i > 0 && word_at(s, i - 1, n))
        return 0;
    for (size_t j = i + 1; j < n && j < i + 1024; j++) {
        if (s[j] == '\\') {
            j++;
            continue;
        }
        if (s[j] == q && !word_at(s, j + 1, n))
            return j + 1 - i;
    }
    return 0;
}

static const char broker_prefix[] = "dead-lettered by the broker: ";

bool error_from_broker_text(const char *error, size_t len)
{
    return error && len >= sizeof broker_prefix - 1 &&
           memcmp(error, broker_prefix, sizeof broker_prefix - 1) == 0;
}

static uint64_t fp_hash(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 0xcbf29ce484222325ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= s[i];
        h *= 0x100000001b3ULL;
    }
    h ^= h >> 31;
    h *= 0x7fb5d329728ea185ULL;
    h ^= h >> 27;
    h *= 0x81dadef4bc2dd44dULL;
    return h ^ (h >> 33);
}

enum { HAS_DASH = 1, HAS_COLON = 2, HAS_DOT = 4, HAS_AT = 8, HAS_SCHEME = 16 };

uint64_t error_fingerprint(const char *error, size_t len, struct strbuf *normalised)
{
    if (normalised)
        sb_reset(normalised);
    struct out o;
    o.len = 0;
    o.space = o.full = false;
    const unsigned char *s = (const unsigned char *)(error ? error : "");
    size_t n = !error ? 0 : len > FINGERPRINT_SCAN_MAX ? FINGERPRINT_SCAN_MAX : len;
    /* The broker's own errors are reason and queue: kept as they are, so they group by both. */
    bool verbatim = error_from_broker_text(error, len);
    bool in_url = false;
    unsigned has = (memchr(s, '-', n) ? HAS_DASH : 0) | (memchr(s, '.', n) ? HAS_DOT : 0) |
                   (memchr(s, '@', n) ? HAS_AT : 0);
    const unsigned char *colon = memchr(s, ':', n);
    if (colon) {
        has |= HAS_COLON;
        for (const unsigned char *q = colon; q && q + 2 < s + n;
             q = memchr(q + 1, ':', (size_t)(s + n - q - 1)))
            if (q[1] == '/' && q[2] == '/') {
                has |= HAS_SCHEME;
                break;
            }
    }
    size_t i = 0;
    while (i < n && !o.full) {
        unsigned char c = s[i];
        size_t k;
        if (c < 0x20 || c == 0x7f || c == ' ') {
            o.space = true;
            in_url = false;
            i++;
            continue;
        }
        if (c >= 0x80) {
            k = utf8_seq(s, i, n);
            if (k == 0) {
                put(&o, "\xef\xbf\xbd", 3); /* U+FFFD for a byte that is not UTF-8 */
                i++;
                continue;
            }
            if (k == 2 && c == 0xc2 && s[i + 1] < 0xa0) {
                o.space = true;
                i += 2;
                continue;
            }
        }
        if (verbatim) {
            k = c >= 0x80 ? utf8_seq(s, i, n) : 1;
            put(&o, s + i, k);
            i += k;
            continue;
        }
        if ((c == '"' || c == '\'' || c == '`') && (k = quoted_at(s, i, n)) != 0) {
            puts_(&o, "<str>");
            i += k;
            continue;
        }
        if (in_url && (c == '=' || c == '#')) {
            put(&o, &c, 1);
            puts_(&o, "<str>");
            i++;
            while (i < n && s[i] > ' ' && s[i] != '&' && s[i] != '"' && s[i] != '\'' &&
                   (c == '#' || s[i] != '#'))
                i++;
            continue;
        }
        bool start = word_at(s, i, n) && !(i > 0 && word_at(s, i - 1, n));
        if (c == ':' && i + 1 < n && s[i + 1] == ':' && !(i > 0 && word_at(s, i - 1, n)) &&
            (k = ipv6_at(s, i, n)) != 0) {
            puts_(&o, "<ip>");
            i += k;
            continue;
        }
        if (!start) {
            k = c >= 0x80 ? utf8_seq(s, i, n) : 1;
            put(&o, s + i, k);
            i += k;
            continue;
        }
        /* Each matcher needs a character the text may not hold at all: checked once. */
        bool digit = is_digit(c), hex = is_hex(c);
        if (digit && (has & (HAS_DASH | HAS_COLON)) && (k = iso_time(s, i, n)) != 0) {
            puts_(&o, "<time>");
        } else if (hex && (has & HAS_DASH) && (k = uuid_at(s, i, n)) != 0) {
            puts_(&o, "<id>");
        } else if ((digit && (has & HAS_DOT) && (k = ipv4_at(s, i, n)) != 0) ||
                   (hex && (has & HAS_COLON) && (k = ipv6_at(s, i, n)) != 0)) {
            puts_(&o, "<ip>");
        } else if ((has & HAS_AT) && (k = email_at(s, i, n)) != 0) {
            puts_(&o, "<email>");
        } else if ((has & HAS_SCHEME) && (k = url_scheme(s, i, n)) != 0) {
            put(&o, s + i, k);
            in_url = true;
        } else if (!is_digit(c) || (k = number_at(&o, s, i, n)) == 0) {
            k = word_end(s, i, n) - i;
            put_word(&o, s + i, k);
        }
        i += k;
    }
    uint64_t h = fp_hash(o.buf, o.len);
    if (normalised)
        sb_add(normalised, o.buf, o.len);
    return h;
}

/* ---- exceptions ---- */

static bool class_like(const char *s, size_t n, bool *strong)
{
    static const char *const suffixes[] = {"Error",   "Exception", "Timeout", "Fault",
                                           "Failure", "Declined",  "Refused", "Invalid",
                                           "NotFound", "Rejected", "Exceeded", "Unavailable"};
    size_t i = 0, comp = 0, last = 0;
    bool sep = false;
    if (n == 0 || n > 200)
        return false;
    while (i < n) {
        if (!(is_alpha((unsigned char)s[i]) || s[i] == '_'))
            return false;
        last = i;
        while (i < n && (is_alnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '$'))
            i++;
        comp++;
        if (i == n)
            break;
        if (s[i] == ':' && i + 1 < n && s[i + 1] == ':')
            i += 2;
        else if (s[i] == '.' || s[i] == '\\')
            i++;
        else
            return false;
        sep = true;
    }
    if (s[n - 1] == ':' || s[n - 1] == '.' || s[n - 1] == '\\')
        return false;
    if (!(s[last] >= 'A' && s[last] <= 'Z'))
        return false;
    *strong = sep && comp > 1;
    for (size_t k = 0; k < sizeof suffixes / sizeof *suffixes && !*strong; k++) {
        size_t m = strlen(suffixes[k]);
        *strong = n >= m && memcmp(s + n - m, suffixes[k], m) == 0;
    }
    return true;
}

/* AceMQ's give-up sentences: what follows them is the exception's class. */
static bool giving_up(const char *s, size_t n)
{
    static const char *const prefixes[] = {
        "gave up",        "exhausted ",          "retrying cannot help", "could not be decoded",
        "rejected by the", "exceeded the maximum", "the handler reported",
    };
    for (size_t k = 0; k < sizeof prefixes / sizeof *prefixes; k++) {
        size_t m = strlen(prefixes[k]);
        if (n >= m && memcmp(s, prefixes[k], m) == 0)
            return true;
    }
    return false;
}

size_t error_exception(const char *error, size_t len, size_t *off)
{
    *off = 0;
    if (!error || !len)
        return 0;
    if (error_from_broker_text(error, len)) {
        size_t a = sizeof broker_prefix - 1, b = a;
        while (b < len && !(b + 6 <= len && memcmp(error + b, " from ", 6) == 0))
            b++;
        *off = a;
        return b - a;
    }
    size_t n = len > 1024 ? 1024 : len, a = 0, seg = 0;
    bool after_prefix = false;
    while (a < n) {
        size_t b = a;
        while (b < n && !(error[b] == ':' && (b + 1 == n || error[b + 1] == ' ')))
            b++;
        size_t x = a, y = b;
        while (x < y && error[x] == ' ')
            x++;
        while (y > x && error[y - 1] == ' ')
            y--;
        bool strong = false;
        if (class_like(error + x, y - x, &strong)) {
            bool camel = false;
            for (size_t k = x + 1; k < y && !camel; k++)
                camel = error[k] >= 'A' && error[k] <= 'Z' && error[k - 1] >= 'a' &&
                        error[k - 1] <= 'z';
            if (strong || after_prefix || (seg == 0 && camel && b < n)) {
                *off = x;
                return y - x;
            }
        }
        after_prefix = seg == 0 && giving_up(error + x, y - x);
        seg++;
        a = b + 1;
    }
    return 0;
}

/* ---- hash tables for the build ---- */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* uint64 key -> uint32 value, open addressing; keys are stored + 1 so 0 marks a free slot. */
struct u64map {
    uint64_t *keys;
    uint32_t *vals;
    size_t mask, count;
    uint64_t seed;
};

static void u64map_init(struct u64map *m, uint64_t seed)
{
    m->mask = 255;
    m->count = 0;
    m->seed = seed;
    m->keys = xcalloc(m->mask + 1, sizeof *m->keys);
    m->vals = xmalloc((m->mask + 1) * sizeof *m->vals);
}

static void u64map_free(struct u64map *m)
{
    free(m->keys);
    free(m->vals);
}

static uint32_t *u64map_slot(struct u64map *m, uint64_t key, bool *found)
{
    if ((m->count + 1) * 2 > m->mask) {
        struct u64map g = {xcalloc((m->mask + 1) * 2, sizeof(uint64_t)), NULL, m->mask * 2 + 1,
                           m->count, m->seed};
        g.vals = xmalloc((g.mask + 1) * sizeof *g.vals);
        for (size_t i = 0; i <= m->mask; i++) {
            if (!m->keys[i])
                continue;
            size_t h = (size_t)mix64(m->keys[i] ^ m->seed) & g.mask;
            while (g.keys[h])
                h = (h + 1) & g.mask;
            g.keys[h] = m->keys[i];
            g.vals[h] = m->vals[i];
        }
        u64map_free(m);
        *m = g;
    }
    uint64_t k = key + 1;
    size_t h = (size_t)mix64(k ^ m->seed) & m->mask;
    while (m->keys[h] && m->keys[h] != k)
        h = (h + 1) & m->mask;
    *found = m->keys[h] != 0;
    if (!*found) {
        m->keys[h] = k;
        m->count++;
    }
    return &m->vals[h];
}

/* Interned texts: id by content (seeded hash, then compared). */
struct texts {
    struct strbuf buf;
    struct text_rec {
        uint32_t off, len;
    } *e;
    size_t n, cap;
    struct u64map by_hash; /* hash -> first id with it; collisions chain through next */
    uint32_t *next;
    size_t next_cap;
    uint64_t seed;
};

static void texts_init(struct texts *t, uint64_t seed)
{
    memset(t, 0, sizeof *t);
    sb_init(&t->buf);
    t->seed = seed;
    u64map_init(&t->by_hash, seed);
}

static void texts_free(struct texts *t)
{
    sb_free(&t->buf);
    free(t->e);
    free(t->next);
    u64map_free(&t->by_hash);
}

static uint64_t seeded_hash(const void *p, size_t n, uint64_t seed)
{
    const unsigned char *s = p;
    uint64_t h = seed ^ 0x9e3779b97f4a7c15ULL;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        h = mix64(h ^ w) + i;
    }
    uint64_t w = 0;
    memcpy(&w, s + i, n - i);
    return mix64(h ^ w ^ ((uint64_t)n << 56));
}

static uint32_t texts_intern(struct texts *t, const char *s, size_t n)
{
    bool found;
    uint64_t h = seeded_hash(s, n, t->seed);
    uint32_t *slot = u64map_slot(&t->by_hash, h, &found);
    if (found) {
        for (uint32_t id = *slot; id != UINT32_MAX; id = t->next[id])
            if (t->e[id].len == n && memcmp(t->buf.buf + t->e[id].off, s, n) == 0)
                return id;
    }
    xgrow((void **)&t->e, &t->cap, t->n + 1, sizeof *t->e);
    xgrow((void **)&t->next, &t->next_cap, t->n + 1, sizeof *t->next);
    uint32_t id = (uint32_t)t->n++;
    t->e[id].off = (uint32_t)t->buf.len;
    t->e[id].len = (uint32_t)n;
    sb_add(&t->buf, s, n);
    sb_addc(&t->buf, '\0');
    t->next[id] = found ? *slot : UINT32_MAX;
    *slot = id;
    return id;
}

/* ---- groups ---- */

struct fp_info {
    uint64_t hash;
    uint32_t exc_off, exc_len; /* in groups.exc */
    bool broker;
};

struct groups {
    struct group *g;
    size_t n;
    struct texts keys, types;
    struct strbuf exc;
    struct fp_info *fps;
    size_t n_fps, fps_cap;
    uint32_t *members;
    struct group_queue *queues;
    uint32_t *entry_group; /* per store entry; UINT32_MAX: not grouped */
    size_t n_entries, total;
};

int64_t entry_time_first_seen(const struct store *s, size_t i, void *ctx)
{
    (void)ctx;
    const struct store_entry *e = store_entry_at(s, i);
    return e ? e->first_seen_ms : 0;
}

int64_t entry_time_dead_at(const struct store *s, size_t i, void *ctx)
{
    const struct store_entry *e = store_entry_at(s, i);
    if (!e)
        return 0;
    return e->dead_at_ms > 0 ? e->dead_at_ms : e->first_seen_ms;
}

int64_t entry_time_fetched(const struct store *s, size_t i, void *ctx)
{
    (void)ctx;
    const struct store_entry *e = store_entry_at(s, i);
    return e ? e->fetched_at_ms : 0;
}

struct qcount {
    uint32_t group, queue_id, count, first;
    store_ref ref;
};

static int qcount_cmp(const void *a, const void *b)
{
    const struct qcount *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return (x->first > y->first) - (x->first < y->first);
}

static int group_cmp(const void *a, const void *b)
{
    const struct group *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    if (x->last_ms != y->last_ms)
        return x->last_ms > y->last_ms ? -1 : 1;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    c = strcmp(x->type, y->type);
    if (c)
        return c;
    return (x->members[0] > y->members[0]) - (x->members[0] < y->members[0]);
}

struct sortrec {
    struct group g;
    uint32_t old;
};

static int sortrec_cmp(const void *a, const void *b)
{
    return group_cmp(&((const struct sortrec *)a)->g, &((const struct sortrec *)b)->g);
}

/* The fingerprint id of an error text (the normalised text interned). */
static uint32_t fingerprint_id(struct groups *g, const char *err, size_t n, struct strbuf *tmp)
{
    uint64_t h = error_fingerprint(err, n, tmp);
    uint32_t id = texts_intern(&g->keys, tmp->buf ? tmp->buf : "", tmp->len);
    if (id < g->n_fps)
        return id;
    xgrow((void **)&g->fps, &g->fps_cap, id + 1, sizeof *g->fps);
    struct fp_info *f = &g->fps[id];
    g->n_fps = id + 1;
    f->hash = h;
    f->broker = error_from_broker_text(err, n);
    size_t off, len = error_exception(err, n, &off);
    f->exc_off = (uint32_t)g->exc.len;
    /* An exception is class-like ASCII, or the broker's reason: cleaned of controls anyway. */
    for (size_t k = 0; k < len && k < 200; k++) {
        unsigned char c = (unsigned char)err[off + k];
        sb_addc(&g->exc, c < 0x20 || c == 0x7f ? '?' : (char)c);
    }
    f->exc_len = (uint32_t)(g->exc.len - f->exc_off);
    sb_addc(&g->exc, '\0');
    return id;
}

/* The build in steps: the per-entry pass (groups_builder_step) is most of the cost; the
 * rest (members, queues, the order) is done once by groups_builder_finish. */
struct groups_builder {
    const struct store *s; /* borrowed */
    struct groups *g;      /* being built (owned until finish) */
    entry_time_fn when;
    void *when_ctx;
    const uint32_t *indices; /* borrowed; NULL: entries 0..count-1 */
    size_t count, k;         /* entries to group, and the next one */
    struct u64map err_fp, type_id, queue_id, group_of, qc_of;
    struct texts queues;
    struct qcount *qc;
    size_t n_qc, qc_cap, cap, gk_cap;
    struct gkey {
        uint32_t fp, type;
    } *gk;         /* each group's key, until the texts stop growing */
    uint32_t *gid; /* per input position: its group (UINT32_MAX: skipped) */
    char *buf;
    struct strbuf tmp;
};

struct groups_builder *groups_builder_new(const struct store *s, const struct groups_options *opt)
{
    struct groups_builder *b = xcalloc(1, sizeof *b);
    struct groups *g = xcalloc(1, sizeof *g);
    b->s = s;
    b->g = g;
    uint64_t seed = mix64((uint64_t)(uintptr_t)g ^ (uint64_t)clock());
    texts_init(&g->keys, seed);
    texts_init(&g->types, seed ^ 1);
    sb_init(&g->exc);
    b->when = opt && opt->time ? opt->time : entry_time_first_seen;
    b->when_ctx = opt ? opt->time_ctx : NULL;
    size_t total = store_count(s);
    b->indices = opt && opt->indices ? opt->indices : NULL;
    b->count = b->indices ? opt->n_indices : total;
    g->n_entries = total;
    g->entry_group = xmalloc((total ? total : 1) * sizeof *g->entry_group);
    memset(g->entry_group, 0xff, (total ? total : 1) * sizeof *g->entry_group);
    u64map_init(&b->err_fp, seed ^ 2);
    u64map_init(&b->type_id, seed ^ 3);
    u64map_init(&b->queue_id, seed ^ 4);
    u64map_init(&b->group_of, seed ^ 5);
    u64map_init(&b->qc_of, seed ^ 6);
    texts_init(&b->queues, seed ^ 7);
    b->gid = xmalloc((b->count ? b->count : 1) * sizeof *b->gid);
    b->buf = xmalloc(STORE_TEXT_MAX);
    sb_init(&b->tmp);
    return b;
}

size_t groups_builder_step(struct groups_builder *b, size_t max)
{
    const struct store *s = b->s;
    struct groups *g = b->g;
    bool found;
    size_t end = max < b->count - b->k ? b->k + max : b->count;
    for (; b->k < end; b->k++) {
        size_t k = b->k;
        size_t i = b->indices ? b->indices[k] : k;
        const struct store_entry *e = i < g->n_entries ? store_entry_at(s, i) : NULL;
        if (!e || g->entry_group[i] != UINT32_MAX) { /* out of range, or listed twice */
            b->gid[k] = UINT32_MAX;
            continue;
        }
        uint32_t *v = u64map_slot(&b->err_fp, e->error, &found);
        if (!found) {
            size_t n = store_text(s, e->error, b->buf);
            *v = fingerprint_id(g, b->buf, n, &b->tmp);
        }
        uint32_t fp = *v;
        v = u64map_slot(&b->type_id, e->type, &found);
        if (!found) {
            size_t n = store_text(s, e->type, b->buf);
            *v = texts_intern(&g->types, b->buf, n);
        }
        uint32_t type = *v;
        uint32_t *slot = u64map_slot(&b->group_of, (uint64_t)fp << 32 | type, &found);
        if (!found) {
            xgrow((void **)&g->g, &b->cap, g->n + 1, sizeof *g->g);
            xgrow((void **)&b->gk, &b->gk_cap, g->n + 1, sizeof *b->gk);
            b->gk[g->n].fp = fp;
            b->gk[g->n].type = type;
            struct group *ng = &g->g[g->n];
            memset(ng, 0, sizeof *ng);
            ng->fingerprint = g->fps[fp].hash;
            ng->from_broker = g->fps[fp].broker;
            ng->type_ref = e->type;
            ng->example = (uint32_t)i;
            ng->first_ms = INT64_MAX;
            ng->first_fetched_ms = INT64_MAX;
            *slot = (uint32_t)g->n++;
        }
        struct group *grp = &g->g[*slot];
        b->gid[k] = *slot;
        g->entry_group[i] = *slot;
        grp->count++;
        int64_t t = b->when(s, i, b->when_ctx);
        if (t > 0) {
            if (t < grp->first_ms)
                grp->first_ms = t;
            if (t > grp->last_ms) {
                grp->last_ms = t;
                grp->example = (uint32_t)i;
            }
        }
        if (e->fetched_at_ms > 0) {
            if (e->fetched_at_ms < grp->first_fetched_ms)
                grp->first_fetched_ms = e->fetched_at_ms;
            if (e->fetched_at_ms > grp->last_fetched_ms)
                grp->last_fetched_ms = e->fetched_at_ms;
        }
        v = u64map_slot(&b->queue_id, e->queue, &found);
        if (!found) {
            size_t n = store_text(s, e->queue, b->buf);
            *v = texts_intern(&b->queues, b->buf, n);
        }
        uint32_t *q = u64map_slot(&b->qc_of, (uint64_t)*slot << 32 | *v, &found);
        if (!found) {
            xgrow((void **)&b->qc, &b->qc_cap, b->n_qc + 1, sizeof *b->qc);
            b->qc[b->n_qc] = (struct qcount){*slot, *v, 0, (uint32_t)k, e->queue};
            *q = (uint32_t)b->n_qc++;
        }
        b->qc[*q].count++;
        g->total++;
    }
    return b->count - b->k;
}

size_t groups_builder_done(const struct groups_builder *b)
{
    return b ? b->k : 0;
}

size_t groups_builder_total(const struct groups_builder *b)
{
    return b ? b->count : 0;
}

static void builder_release(struct groups_builder *b)
{
    free(b->buf);
    sb_free(&b->tmp);
    free(b->gid);
    free(b->qc);
    free(b->gk);
    texts_free(&b->queues);
    u64map_free(&b->err_fp);
    u64map_free(&b->type_id);
    u64map_free(&b->queue_id);
    u64map_free(&b->group_of);
    u64map_free(&b->qc_of);
    free(b);
}

void groups_builder_free(struct groups_builder *b)
{
    if (!b)
        return;
    groups_free(b->g);
    builder_release(b);
}

struct groups *groups_builder_finish(struct groups_builder *b)
{
    groups_builder_step(b, SIZE_MAX);
    struct groups *g = b->g;
    size_t count = b->count, total = g->n_entries, n_qc = b->n_qc;
    const uint32_t *indices = b->indices;
    uint32_t *gid = b->gid;

    /* Members: a counting sort by group, so each group's indices come out ascending. */
    g->members = xmalloc((g->total ? g->total : 1) * sizeof *g->members);
    size_t *fill = xcalloc(g->n ? g->n : 1, sizeof *fill);
    for (size_t j = 0, off = 0; j < g->n; j++) {
        fill[j] = off;
        off += g->g[j].count;
    }
    for (size_t j = 0; j < g->n; j++)
        g->g[j].members = g->members + fill[j];
    for (size_t k = 0; k < count; k++)
        if (gid[k] != UINT32_MAX)
            g->members[fill[gid[k]]++] = (uint32_t)(indices ? indices[k] : k);
    free(fill);
    /* Members are in input order; a caller's index list may not be sorted. */
    if (indices)
        for (size_t j = 0; j < g->n; j++)
            for (size_t a = 1; a < g->g[j].count; a++) { /* insertion sort: usually sorted */
                uint32_t x = g->g[j].members[a];
                uint32_t *m = g->members + (g->g[j].members - g->members);
                size_t c = a;
                while (c > 0 && m[c - 1] > x) {
                    m[c] = m[c - 1];
                    c--;
                }
                m[c] = x;
            }

    /* Queues per group, by count. */
    struct qcount *qc = b->qc;
    if (n_qc)
        qsort(qc, n_qc, sizeof *qc, qcount_cmp);
    g->queues = xmalloc((n_qc ? n_qc : 1) * sizeof *g->queues);
    for (size_t j = 0; j < n_qc; j++) {
        g->queues[j].queue = qc[j].ref;
        g->queues[j].count = qc[j].count;
        struct group *grp = &g->g[qc[j].group];
        if (!grp->n_queues)
            grp->queues = &g->queues[j];
        grp->n_queues++;
    }

    for (size_t j = 0; j < g->n; j++) {
        struct group *grp = &g->g[j];
        uint32_t fp = b->gk[j].fp, type = b->gk[j].type;
        grp->key = g->keys.buf.buf + g->keys.e[fp].off;
        grp->type = g->types.buf.buf + g->types.e[type].off;
        grp->exception = g->exc.buf + g->fps[fp].exc_off;
        if (grp->first_ms == INT64_MAX)
            grp->first_ms = 0;
        if (grp->first_fetched_ms == INT64_MAX)
            grp->first_fetched_ms = 0;
    }
    builder_release(b);
    /* Sort, then renumber entry_group to the sorted order. */
    struct sortrec *rec = xmalloc((g->n ? g->n : 1) * sizeof *rec);
    for (size_t j = 0; j < g->n; j++) {
        rec[j].g = g->g[j];
        rec[j].old = (uint32_t)j;
    }
    if (g->n)
        qsort(rec, g->n, sizeof *rec, sortrec_cmp);
    uint32_t *rank = xmalloc((g->n ? g->n : 1) * sizeof *rank);
    for (size_t j = 0; j < g->n; j++) {
        g->g[j] = rec[j].g;
        rank[rec[j].old] = (uint32_t)j;
    }
    for (size_t i = 0; i < total; i++)
        if (g->entry_group[i] != UINT32_MAX)
            g->entry_group[i] = rank[g->entry_group[i]];
    free(rank);
    free(rec);
    return g;
}

struct groups *groups_build(const struct store *s, const struct groups_options *opt)
{
    return groups_builder_finish(groups_builder_new(s, opt));
}

void groups_free(struct groups *g)
{
    if (!g)
        return;
    free(g->g);
    texts_free(&g->keys);
    texts_free(&g->types);
    sb_free(&g->exc);
    free(g->fps);
    free(g->members);
    free(g->queues);
    free(g->entry_group);
    free(g);
}

size_t groups_count(const struct groups *g)
{
    return g ? g->n : 0;
}

const struct group *groups_at(const struct groups *g, size_t k)
{
    return g && k < g->n ? &g->g[k] : NULL;
}

size_t groups_of_entry(const struct groups *g, size_t i)
{
    if (!g || i >= g->n_entries || g->entry_group[i] == UINT32_MAX)
        return SIZE_MAX;
    return g->entry_group[i];
}

size_t groups_total(const struct groups *g)
{
    return g ? g->total : 0;
}

void group_filter_expr(const struct group *grp, struct strbuf *out)
{
    sb_addf(out, "fp=%016llx type=", (unsigned long long)grp->fingerprint);
    filter_quote(grp->type, strlen(grp->type), false, out);
}

/* ---- timeline ---- */

const char *timeline_trend_name(enum timeline_trend t)
{
    switch (t) {
    case TREND_QUIET:
        return "stopped";
    case TREND_FALLING:
        return "falling";
    case TREND_STEADY:
        return "steady";
    case TREND_RISING:
        return "rising";
    case TREND_NONE:
    default:
        return "no dated arrivals";
    }
}

/* The smallest bucket from the ladder that shows the span in at most max buckets. */
static int64_t choose_bucket(int64_t lo, int64_t hi, size_t max)
{
    static const int64_t ladder[] = {
        60000LL,     300000LL,     900000LL,     1800000LL,    3600000LL,     10800000LL,
        21600000LL,  43200000LL,   86400000LL,   604800000LL,  2592000000LL,  31536000000LL,
    };
    for (size_t k = 0; k < sizeof ladder / sizeof *ladder; k++)
        if ((uint64_t)(hi / ladder[k] - lo / ladder[k]) + 1 <= max)
            return ladder[k];
    /* Wider than a year a bucket: days, so that floor(hi/b) - floor(lo/b) < max. */
    int64_t day = 86400000LL, span = hi - lo;
    if (max < 2)
        return (hi / day + 1) * day;
    int64_t b = span / (int64_t)(max - 1) + 1;
    return (b / day + 1) * day;
}

void timeline_build(const struct store *s, const struct timeline_options *opt,
                    struct timeline *out)
{
    memset(out, 0, sizeof *out);
    entry_time_fn when = opt && opt->time ? opt->time : entry_time_first_seen;
    void *ctx = opt ? opt->time_ctx : NULL;
    size_t max = opt && opt->max_buckets ? opt->max_buckets : 60;
    size_t count = opt && opt->indices ? opt->n_indices : store_count(s);
    int64_t lo = INT64_MAX, hi = 0;
    for (size_t k = 0; k < count; k++) {
        size_t i = opt && opt->indices ? opt->indices[k] : k;
        if (i >= store_count(s))
            continue;
        int64_t t = when(s, i, ctx);
        if (t <= 0) {
            out->undated++;
            continue;
        }
        lo = t < lo ? t : lo;
        hi = t > hi ? t : hi;
    }
    if (hi == 0) {
        out->trend = TREND_NONE;
        return;
    }
    int64_t now = opt ? opt->now_ms : 0;
    if (now > hi)
        hi = now;
    int64_t b = opt && opt->bucket_ms > 0 ? opt->bucket_ms : choose_bucket(lo, hi, max);
    /* A bucket given by the caller may make too many: the span is cut at the newest end. */
    if ((uint64_t)(hi / b - lo / b) >= 100000)
        lo = hi - b * 99999;
    out->bucket_ms = b;
    out->start_ms = lo / b * b;
    out->n = (size_t)(hi / b - lo / b) + 1;
    out->counts = xcalloc(out->n, sizeof *out->counts);
    for (size_t k = 0; k < count; k++) {
        size_t i = opt && opt->indices ? opt->indices[k] : k;
        if (i >= store_count(s))
            continue;
        int64_t t = when(s, i, ctx);
        if (t <= 0)
            continue;
        if (t < out->start_ms) { /* cut off above */
            out->undated++;
            continue;
        }
        size_t at = (size_t)((t - out->start_ms) / b);
        if (at < out->n && out->counts[at] < UINT32_MAX)
            out->counts[at]++;
        out->total++;
    }
    bool seen = false;
    for (size_t k = 0; k < out->n; k++) {
        if (!out->counts[k])
            continue;
        if (!seen)
            out->first = k;
        seen = true;
        out->last = k;
        if (out->counts[k] > out->counts[out->peak])
            out->peak = k;
    }
    if (!seen) {
        out->trend = TREND_NONE;
        return;
    }
    /* The trend: the recent window's rate against the average since the first arrival. When
     * now falls inside the last bucket, that bucket counts for the part that has elapsed (and
     * not at all before a quarter of it, when its count says nothing yet). */
    size_t w = opt && opt->window ? opt->window : 3;
    double part = 1.0;
    size_t end = out->n;
    if (now > 0 && now >= out->start_ms + (int64_t)(out->n - 1) * b) {
        part = (double)(now - (out->start_ms + (int64_t)(out->n - 1) * b) + 1) / (double)b;
        if (part < 0.25 && out->n > 1) {
            end = out->n - 1;
            part = 1.0;
        }
    }
    if (w > end)
        w = end;
    double recent = 0;
    for (size_t k = end - w; k < end; k++)
        recent += out->counts[k];
    double span = (double)(end > out->first ? end - out->first : 1) - 1.0 + part;
    double wlen = (double)w - 1.0 + part;
    out->recent_rate = wlen > 0 ? recent / wlen : 0;
    out->average_rate = span > 0 ? (double)out->total / span : 0;
    out->still_going = recent > 0;
    if (!out->still_going)
        out->trend = TREND_QUIET;
    else if (out->recent_rate > 1.5 * out->average_rate)
        out->trend = TREND_RISING;
    else if (out->recent_rate < 0.5 * out->average_rate)
        out->trend = TREND_FALLING;
    else
        out->trend = TREND_STEADY;
}

void timeline_free(struct timeline *t)
{
    free(t->counts);
    memset(t, 0, sizeof *t);
}

static void put_minute(struct strbuf *out, int64_t ms)
{
    char buf[32];
    time_format_rfc3339(ms / 60000 * 60000, false, buf); /* 2026-01-02T03:04:00Z */
    buf[16] = '\0';
    buf[10] = ' ';
    sb_adds(out, buf);
}

static void put_bucket(struct strbuf *out, int64_t ms)
{
    static const struct {
        int64_t ms;
        const char *unit;
    } units[] = {{604800000LL, "w"}, {86400000LL, "d"}, {3600000LL, "h"}, {60000LL, "m"},
                 {1000LL, "s"}};
    for (size_t k = 0; k < sizeof units / sizeof *units; k++)
        if (ms % units[k].ms == 0) {
            sb_addf(out, "%lld%s", (long long)(ms / units[k].ms), units[k].unit);
            return;
        }
    sb_addf(out, "%lldms", (long long)ms);
}

void timeline_render(const struct timeline *t, size_t width, unsigned flags, struct strbuf *out)
{
    static const char *const blocks[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
    static const char ascii[] = " .:-=+*#@";
    if (!t->n || !t->total) {
        sb_adds(out, "\nno dated arrivals");
        if (t->undated)
            sb_addf(out, " (%llu undated)", (unsigned long long)t->undated);
        sb_addc(out, '\n');
        return;
    }
    if (width == 0)
        width = 1;
    size_t per = (t->n + width - 1) / width, cols = (t->n + per - 1) / per;
    uint64_t top = 0;
    for (size_t c = 0; c < cols; c++) {
        uint64_t sum = 0;
        for (size_t k = c * per; k < (c + 1) * per && k < t->n; k++)
            sum += t->counts[k];
        top = sum > top ? sum : top;
    }
    for (size_t c = 0; c < cols; c++) {
        uint64_t sum = 0;
        for (size_t k = c * per; k < (c + 1) * per && k < t->n; k++)
            sum += t->counts[k];
        size_t level = sum ? (size_t)((sum * 8 + top - 1) / top) : 0;
        if (flags & TIMELINE_ASCII)
            sb_addc(out, ascii[level]);
        else
            sb_adds(out, blocks[level]);
    }
    sb_addc(out, '\n');
    put_minute(out, t->start_ms);
    sb_adds(out, " .. ");
    put_minute(out, t->start_ms + (int64_t)t->n * t->bucket_ms);
    sb_adds(out, " UTC, ");
    put_bucket(out, t->bucket_ms * (int64_t)per);
    sb_addf(out, " a column, %llu total, peak %u at ", (unsigned long long)t->total,
            t->counts[t->peak]);
    put_minute(out, t->start_ms + (int64_t)t->peak * t->bucket_ms);
    sb_addf(out, ", %s", timeline_trend_name(t->trend));
    if (t->undated)
        sb_addf(out, " (%llu undated)", (unsigned long long)t->undated);
    sb_addc(out, '\n');
}
