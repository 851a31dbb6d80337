/*
 * What the json_valid tests share (test_json_valid.c, test_json_valid_exhaustive.c): the
 * oracle (jansson), the check run on an exact-size copy that fails when it is sure of what
 * jansson refuses, and the expected answers.
 */
#ifndef DLQX_JSON_VALID_TESTUTIL_H
#define DLQX_JSON_VALID_TESTUTIL_H

#include "testutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_valid.h"

#define FLAGS (JSON_DECODE_ANY | JSON_ALLOW_NUL)

/* The oracle: whether jansson parses these n bytes (FLAGS). */
bool jansson_accepts(const void *s, size_t n);

/* The input on stderr, printable bytes as they are, the others in hex (200 at the most). */
void dump(const char *what, const void *s, size_t n);

/* json_surely_valid on a copy of exactly n bytes, so that a sanitizer build catches any read
 * past the end; fails when it is sure of something jansson refuses. */
bool sure(const void *s, size_t n, bool *accepted);

/* Whether input jansson accepts holds something the check is allowed to be unsure of: an
 * exponent, a \u escape of NUL or a surrogate, 19 digits in a row, deep nesting — or a raw
 * NUL byte, which jansson 2.14 drops when it comes right after a number or a literal ("1\0",
 * "[true\0]", "[1\0,2]" parse), although it is not JSON. Crude (it does not know strings from
 * the rest), so it may excuse too much, never too little. */
bool may_be_unsure(const unsigned char *s, size_t n);

/* Sure, or else jansson refuses it or it holds something the check may be unsure of. */
void expect_complete(const void *s, size_t n);

/* The answer an input must get. */
enum expect {
    SURE,    /* valid, and the check says so */
    UNSURE,  /* jansson accepts, the check leaves it to jansson (false) */
    INVALID, /* jansson refuses, so the check must */
};

/* The expected answer's name, for a failure's message. */
const char *expect_name(enum expect e);

/* The check's answer for these n bytes is want; prints the input when it is not. */
void check_case(const void *s, size_t n, enum expect want);

#endif
