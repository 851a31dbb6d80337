/*
 * What the body tests share (test_body.c, test_body_frames.c): classifying and rendering a body
 * in one call, and checks of the text.
 */
#ifndef DLQX_BODY_TESTUTIL_H
#define DLQX_BODY_TESTUTIL_H

#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "body.h"

/* body_classify of a body with this content type (and encoding). */
void classify(const char *ct, const void *data, size_t len, struct body_info *out);
void classify_enc(const char *ct, const char *enc, const void *data, size_t len,
                  struct body_info *out);
/* body_render and body_summary into a string of their own (freed by the caller). */
char *render(const struct body_info *in, const void *data, size_t len, unsigned flags,
             size_t limit);
char *summary(const struct body_info *in);
/* Every rendered line: hexdump ASCII columns hold printable ASCII only. */
void assert_hex_ascii_clean(const char *text);

#define assert_render(in, data, len, flags, limit, expected)                                       \
    do {                                                                                           \
        char *got_ = render((in), (data), (len), (flags), (limit));                                \
        assert_string_equal(got_, (expected));                                                     \
        free(got_);                                                                                \
    } while (0)

#define assert_summary(in, expected)                                                               \
    do {                                                                                           \
        char *got_ = summary(in);                                                                  \
        assert_string_equal(got_, (expected));                                                     \
        free(got_);                                                                                \
    } while (0)

#endif
