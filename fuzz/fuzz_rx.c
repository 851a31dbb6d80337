/*
 * fuzz_rx: the filter's regex engine (src/analysis/rx.h) against glibc's regexec, in the UTF-8
 * locale dlqx runs in.
 *
 * Input: one flags byte (bit 0: ignore case), then the regex up to the first NUL, then the
 * subject (its first 256 bytes: glibc's search is quadratic in it).
 *
 * Regexes that are not valid UTF-8 are only compiled and run (glibc reads a stray byte in
 * a bracket expression as the Latin-1 character, rx as nothing; rx.h). Checks:
 *   - rx_compile never fails on a regex glibc's regcomp accepts (it reads some that glibc
 *     refused, such as ranges past ASCII in C.UTF-8), unless the automaton is over
 *     RX_MAX_STATES or a count over 255 (the filter refuses those first): nothing is asked
 *     of glibc then (regcomp would build the whole expansion: 2.8 GB for {5815}{5815});
 *   - rx_match and regexec (REG_STARTEND) agree (regexes of up to 500 states, without many
 *     repeats: regcomp is slow on them), but for the differences rx.h documents: a ^ or $ inside a
 * regex next to a newline (skipped when the regex has ^ or $ and the subject a newline), and an
 *     escaped lowercase letter ignoring case (\d/i), encoded surrogates (glibc is not
 *     consistent about them), sequences past U+10FFFF, and ranges with i (skipped);
 *   - the cost stays linear: steps <= 2 x (characters + 1) x states.
 */
#include <locale.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rx.h"
#include "rx_internal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    if (!setlocale(LC_ALL, "C.UTF-8")) {
        fprintf(stderr, "fuzz_rx: no C.UTF-8 locale\n");
        abort();
    }
    return 0;
}

static bool valid_utf8(const char *s, size_t n)
{
    for (size_t i = 0, len; i < n; i += len)
        if (rx_decode((const unsigned char *)s, n, i, &len) >= RX_BAD)
            return false;
    return true;
}

/* An escaped lowercase ASCII letter other than the GNU escapes: glibc never matches one when
 * ignoring case (\d/i matches nothing); rx matches the letter, ignoring case (rx.h). */
static bool escaped_lower(const char *src)
{
    for (const char *b = strchr(src, '\\'); b && b[1]; b = strchr(b + 2, '\\'))
        if (b[1] >= 'a' && b[1] <= 'z' && !strchr("wsb", b[1]))
            return true;
    return false;
}

/* Repeats glibc's regcomp takes seconds over: three stacked (a?+++), or more than eight. */
static bool stacked_repeats(const char *src)
{
    size_t run = 0, all = 0;
    for (const char *c = src; *c; c++) {
        bool q = strchr("*+?{", *c) != NULL;
        run = q ? run + 1 : *c == '}' ? run : 0;
        all += q;
        if (run >= 3 || all > 8)
            return true;
    }
    return false;
}

/* An encoded surrogate (ed a0-bf ..): glibc's . matches one in some regexes and not in others
 * (_. matches _ and a surrogate, \w_. does not match 7_ and one); rx's . always does. And
 * f4-ff, which may begin a sequence past U+10FFFF: glibc reads one (f4 bf 98 80) as a
 * character, rx as four bytes of invalid UTF-8. */
static bool has_surrogate(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] >= 0xf4 ||
            (i + 1 < n && (unsigned char)s[i] == 0xed && ((unsigned char)s[i + 1] & 0xe0) == 0xa0))
            return true;
    return false;
}

/* With i, a range: glibc tests the subject's character in upper case only against the range
 * (its ends in upper case), so [S-\x7f]/i does not match h; rx tests h, H and h (left). */
/* rx_match, whose cost must stay within its bound. */
static bool run_checked(const struct rx *re, const char *src, const char *subj, size_t slen)
{
    struct rx_stats st;
    bool got = rx_match(re, subj, slen, &st);
    if (st.steps > 2 * (uint64_t)(st.chars + 1) * rx_states(re)) {
        fprintf(stderr, "fuzz_rx: /%s/ took %llu steps over %zu characters, %zu states\n", src,
                (unsigned long long)st.steps, st.chars, rx_states(re));
        abort();
    }
    return got;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int icase = data[0] & 1;
    const char *rest = (const char *)data + 1;
    size_t n = size - 1;
    const char *nul = memchr(rest, '\0', n);
    size_t rlen = nul ? (size_t)(nul - rest) : n;
    if (rlen > 512)
        return 0; /* the filter's bound */
    char *src = malloc(rlen + 1);
    memcpy(src, rest, rlen);
    src[rlen] = '\0';
    size_t slen = nul ? n - rlen - 1 : 0;
    if (slen > 256)
        slen = 256;
    /* NUL-terminated, though REG_STARTEND bounds it: ASan's regexec reads it as a string. */
    char *subj = malloc(slen + 1);
    if (slen)
        memcpy(subj, nul + 1, slen);
    subj[slen] = '\0';

    enum rx_error code;
    const char *why = "";
    size_t at = 0;
    struct rx *re = rx_compile(src, rlen, icase ? RX_ICASE : 0, RX_MAX_STATES, &code, &why, &at);
    /* Too large for rx, or a count over the filter's bound: glibc is not asked (it would
     * build the whole expansion first: [^]a-]{5815}{5815} took regcomp 2.8 GB, the
     * harness's out-of-memory in CI; rx refuses it at once). */
    if (!re && (code == RX_TOO_LARGE || strstr(why, "repeat count over"))) {
        free(subj);
        free(src);
        return 0;
    }
    /* Only rx is run: glibc reads a stray byte in a bracket as the Latin-1 character (rx.h
     * does not), and its regcomp is slow on big automata (stacked repeats), which it builds
     * before it finds a syntax error at the end. */
    if (!valid_utf8(src, rlen) || stacked_repeats(src) || (re && rx_states(re) > 500)) {
        if (re)
            run_checked(re, src, subj, slen);
        rx_free(re);
        free(subj);
        free(src);
        return 0;
    }
    regex_t g;
    int rc = regcomp(&g, src, REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0));
    if (rc == 0 && !re) {
        fprintf(stderr, "fuzz_rx: glibc accepts /%s/, rx does not: %s at %zu\n", src, why, at);
        abort();
    }
    if (rc == 0 && re) {
        bool got = run_checked(re, src, subj, slen);
        bool anchor = strchr(src, '^') || strchr(src, '$');
        if (!(anchor && memchr(subj, '\n', slen)) && !(icase && escaped_lower(src)) &&
            !has_surrogate(subj, slen) && !has_surrogate(src, rlen) &&
            !(icase && strchr(src, '-'))) {
            regmatch_t m[1] = {{.rm_so = 0, .rm_eo = (regoff_t)slen}};
            bool want = regexec(&g, subj, 1, m, REG_STARTEND) == 0;
            if (want != got) {
                fprintf(stderr, "fuzz_rx: /%s/%s on %zu bytes: glibc %d, rx %d\n", src,
                        icase ? "i" : "", slen, want, got);
                abort();
            }
        }
        regfree(&g);
    } else if (re) {
        run_checked(re, src, subj, slen);
    }
    if (rc == 0 && !re)
        regfree(&g);
    rx_free(re);
    free(subj);
    free(src);
    return 0;
}
