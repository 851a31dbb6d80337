/*
 * groups_fingerprint: reading an error's text — the normaliser behind error_fingerprint (one
 * pass, bounded by FINGERPRINT_MAX of output: numbers, times, ids, addresses and quoted values
 * become placeholders), the exception finder (error_exception) and the broker-made test.
 * Apart from the grouping (groups.c) because it is pure text work on one error at a time: it
 * knows nothing of stores, hash tables or the order of groups. And the group's key, a digest of
 * a fingerprint and a type.
 */
#include "groups_fingerprint.h"

#include <stdio.h>
#include <string.h>

#include "sha256.h"

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
 * Foo::Bar are not addresses). On 0, *none_before is a position such that it is 0 at every
 * start from i up to it too (the scan of a start inside the same run fails the same way): the
 * caller skips them, or a long run of hex and colons ("A:A:A:...") was scanned again from
 * each of its words. */
static size_t ipv6_at(const unsigned char *s, size_t i, size_t n, size_t *none_before)
{
    size_t j = i, colons = 0, run = 0, group = i;
    bool digit = false;
    while (j < n && (is_hex(s[j]) || s[j] == ':')) {
        if (s[j] == ':') {
            colons++;
            run = 0;
            group = j + 1;
            if (j + 2 < n && s[j + 1] == ':' && s[j + 2] == ':') {
                *none_before = j + 1;
                return 0;
            }
        } else if (++run > 4) {
            *none_before = group + 1; /* a start before the group's end meets it whole */
            return 0;
        }
        digit = digit || is_digit(s[j]);
        j++;
    }
    if (colons < 2 || !digit || word_at(s, j, n) || j - i < 3) {
        *none_before = j; /* a later start sees fewer colons and digits, the same end */
        return 0;
    }
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
    size_t i = 0, no_ip6 = 0; /* ipv6_at is 0 at every start before no_ip6 */
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
            i >= no_ip6 && (k = ipv6_at(s, i, n, &no_ip6)) != 0) {
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
                   (hex && (has & HAS_COLON) && i >= no_ip6 &&
                    (k = ipv6_at(s, i, n, &no_ip6)) != 0)) {
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
    static const char *const suffixes[] = {"Error",    "Exception", "Timeout",  "Fault",
                                           "Failure",  "Declined",  "Refused",  "Invalid",
                                           "NotFound", "Rejected",  "Exceeded", "Unavailable"};
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
        "gave up",         "exhausted ",           "retrying cannot help", "could not be decoded",
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

/* ---- the group's key ---- */

uint64_t group_key(uint64_t fingerprint, const char *type, size_t type_len)
{
    /* SHA-256, not a fast hash: a hostile dead letter must not be able to craft a type whose
     * key is another group's and so join a delete of that group. */
    unsigned char fp[8], digest[32];
    if (type_len > FINGERPRINT_SCAN_MAX)
        type_len = FINGERPRINT_SCAN_MAX; /* as the store keeps it */
    for (int k = 0; k < 8; k++)
        fp[k] = (unsigned char)(fingerprint >> (56 - 8 * k));
    struct sha256 h;
    sha256_init(&h);
    sha256_update(&h, "dlqx-group-1", 12);
    sha256_update(&h, fp, sizeof fp);
    sha256_update(&h, type ? type : "", type ? type_len : 0);
    sha256_final(&h, digest);
    uint64_t key = 0;
    for (int k = 0; k < 8; k++)
        key = key << 8 | digest[k];
    return key;
}

void group_key_text(uint64_t key, char out[GROUP_KEY_TEXT])
{
    /* "g:%016llx" by table: snprintf was a tenth of group_of */
    out[0] = 'g';
    out[1] = ':';
    for (int i = 17; i >= 2; i--, key >>= 4)
        out[i] = "0123456789abcdef"[key & 15];
    out[18] = '\0';
}

static bool hex16(const char *s, size_t n, uint64_t *v)
{
    if (n != 16)
        return false;
    *v = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            return false;
        *v = *v << 4 | (uint64_t)d;
    }
    return true;
}

bool group_key_parse(const char *s, size_t n, uint64_t *key, struct error *err)
{
    uint64_t v;
    if (n > 2 && (s[0] == 'g' || s[0] == 'G') && s[1] == ':' && hex16(s + 2, n - 2, &v)) {
        *key = v;
        return true;
    }
    if (hex16(s, n, &v))
        error_set(err, ST_EINVAL,
                  "%016llx is a fingerprint alone, which spans every type: a group is a "
                  "fingerprint and a type, named by a key g: and 16 hex digits as dlqx groups, "
                  "dlqx decode and the explorer show it (fp=%016llx selects the fingerprint "
                  "across types)",
                  (unsigned long long)v, (unsigned long long)v);
    else
        error_set(err, ST_EINVAL,
                  "a group key is g: and 16 hex digits, as dlqx groups, dlqx decode and the "
                  "explorer show it");
    return false;
}
