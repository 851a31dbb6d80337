/*
 * What the sanitize tests share (test_sanitize.c, test_sanitize_random.c): a UTF-8 locale for
 * the widths (and a failure, not a skip, without one), and UTF-8 encoding of a code point.
 */
#ifndef DLQX_SANITIZE_TESTUTIL_H
#define DLQX_SANITIZE_TESTUTIL_H

#include "testutil.h"

#include <stddef.h>
#include <stdint.h>

#define ELL "\xE2\x80\xA6" /* U+2026 */

/* Selects C.UTF-8 (or another UTF-8 locale); main() calls it before the tests. */
void sanitize_test_locale(void);
/* Fails the test when sanitize_test_locale found no UTF-8 locale with the usual widths. */
void need_utf8(void);
/* cp's UTF-8 bytes in out; their count. */
size_t utf8_encode(uint32_t cp, unsigned char out[4]);

#endif
