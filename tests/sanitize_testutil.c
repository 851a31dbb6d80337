/*
 * What the sanitize tests share (sanitize_testutil.h).
 */
#ifndef _XOPEN_SOURCE
#define _XOPEN_SOURCE 700 /* wcwidth() */
#endif
#include "sanitize_testutil.h"

#include <locale.h>
#include <stdbool.h>
#include <wchar.h>

static bool have_utf8_locale;

void need_utf8(void)
{
    if (!have_utf8_locale) {
        /* A skipped test must not pass for a tested one: without the locale, fail. */
        fail_msg("no UTF-8 locale (C.UTF-8): the width tests cannot run");
    }
}

void sanitize_test_locale(void)
{
    if (!setlocale(LC_ALL, "C.UTF-8") && !setlocale(LC_ALL, "C.utf8") &&
        !setlocale(LC_ALL, "en_US.UTF-8"))
        setlocale(LC_ALL, "");
    have_utf8_locale = wcwidth(0x65E5) == 2 && wcwidth(0x301) == 0;
}

size_t utf8_encode(uint32_t cp, unsigned char out[4])
{
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | cp >> 6);
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | cp >> 12);
        out[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | cp >> 18);
    out[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}
