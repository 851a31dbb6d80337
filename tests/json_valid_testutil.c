#include "json_valid_testutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool jansson_accepts(const void *s, size_t n)
{
    json_error_t e;
    json_t *j = json_loadb(s, n, FLAGS, &e);
    json_decref(j);
    return j != NULL;
}

void dump(const char *what, const void *s, size_t n)
{
    const unsigned char *p = s;
    fprintf(stderr, "%s (%zu bytes):", what, n);
    for (size_t i = 0; i < n && i < 200; i++)
        fprintf(stderr, (p[i] >= 0x20 && p[i] < 0x7f) ? " %c" : " %02x", p[i]);
    fprintf(stderr, "%s\n", n > 200 ? " ..." : "");
}

bool sure(const void *s, size_t n, bool *accepted)
{
    unsigned char *copy = malloc(n ? n : 1);
    assert_non_null(copy);
    if (n)
        memcpy(copy, s, n);
    bool got = json_surely_valid(n ? copy : NULL, n);
    free(copy);
    bool ok = jansson_accepts(s, n);
    if (got && !ok) {
        dump("sure of JSON jansson refuses", s, n);
        fail();
    }
    if (accepted)
        *accepted = ok;
    return got;
}

bool may_be_unsure(const unsigned char *s, size_t n)
{
    size_t run = 0, open = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c == '\0')
            return true;
        run = (c >= '0' && c <= '9') ? run + 1 : 0;
        if (run >= 19)
            return true;
        if ((c == 'e' || c == 'E') && i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9')
            return true;
        if (c == '[' || c == '{')
            open++;
        if (c == '\\' && i + 5 < n && s[i + 1] == 'u') {
            char hex[5] = {(char)s[i + 2], (char)s[i + 3], (char)s[i + 4], (char)s[i + 5], 0};
            char *end;
            unsigned long cp = strtoul(hex, &end, 16);
            if (*end == '\0' && (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF)))
                return true;
        }
    }
    return open > JSON_VALID_MAX_DEPTH;
}

void expect_complete(const void *s, size_t n)
{
    bool ok;
    bool got = sure(s, n, &ok);
    if (ok && !got && !may_be_unsure(s, n)) {
        dump("unsure of plain JSON jansson accepts", s, n);
        fail();
    }
}

const char *expect_name(enum expect e)
{
    return e == SURE ? "sure" : e == UNSURE ? "unsure (jansson accepts)" : "invalid";
}

void check_case(const void *s, size_t n, enum expect want)
{
    bool ok;
    bool got = sure(s, n, &ok);
    enum expect is = got ? SURE : ok ? UNSURE : INVALID;
    if (is != want) {
        dump("input", s, n);
        fail_msg("expected %s, got %s", expect_name(want), expect_name(is));
    }
}
