/*
 * fuzz_body: a message body with the properties it arrived with, through the body
 * classifier and renderer, the BabelQueue reader and the terminal sanitizer. The first
 * byte picks the properties and the sanitizer flags (fuzz.h); the rest is the body.
 *
 * Checks, beyond the sanitizers:
 *   - body_render writes whole lines (output ends in '\n'), with and without a limit;
 *   - what sanitize_append and sanitize_fit produce — from the raw body, the rendered body,
 *     the summary and the BabelQueue warnings — is valid UTF-8 with no C0 control (a '\n'
 *     only with SAN_KEEP_NEWLINES), no DEL, none of the code points sanitize.h escapes,
 *     and pure ASCII with SAN_ASCII; sanitize_fit stays within its width (exactly the width
 *     with SAN_PAD), writes one line, and returns the columns sanitize_width measures;
 *   - json_surely_valid of the body implies that jansson parses it (json_valid.h): the fast
 *     path of body_classify's JSON check may only ever skip jansson, never change its answer.
 */
#include <jansson.h>
#include <locale.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "babelqueue.h"
#include "body.h"
#include "bytes.h"
#include "fuzz.h"
#include "json_valid.h"
#include "sanitize.h"
#include "util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_utf8_locale();
    return 0;
}

static void fail(const char *what, const char *func, const struct strbuf *out, size_t at)
{
    fprintf(stderr, "fuzz_body: %s: %s (byte %zu of %zu)\n  output:", func, what, at, out->len);
    for (size_t i = 0; i < out->len && i < 512; i++)
        fprintf(stderr, " %02x", (unsigned char)out->buf[i]);
    fprintf(stderr, "\n");
    abort();
}

/* Checks the terminal-safety promise on out->buf[from..len). */
static void check_safe(const struct strbuf *out, size_t from, unsigned flags, const char *func)
{
    size_t at;
    const char *why = fuzz_unsafe(out->buf + from, out->len - from, flags, &at);
    if (why)
        fail(why, func, out, from + at);
}

static void sanitize_checked(const void *p, size_t n, unsigned flags)
{
    struct strbuf sb;
    sb_init(&sb);
    sb_adds(&sb, "> "); /* appending after existing text, as the views do */
    sanitize_append(&sb, p, n, flags);
    check_safe(&sb, 2, flags, "sanitize_append");
    sb_free(&sb);
}

static void fit_checked(const void *p, size_t n, int width, unsigned flags)
{
    struct strbuf sb;
    sb_init(&sb);
    int cols = sanitize_fit(&sb, p, n, width, flags);
    unsigned line_flags = flags & ~(unsigned)SAN_KEEP_NEWLINES; /* always one line */
    check_safe(&sb, 0, line_flags, "sanitize_fit");
    int max = width < 0 ? 0 : width;
    if (cols < 0 || cols > max)
        fail("returned more columns than the width", "sanitize_fit", &sb, 0);
    if ((flags & SAN_PAD) && cols != max)
        fail("SAN_PAD did not fill the width", "sanitize_fit", &sb, 0);
    if (sanitize_width(sb.buf, sb.len) != (size_t)cols)
        fail("returned columns differ from sanitize_width of the output", "sanitize_fit", &sb, 0);
    sb_free(&sb);
}

static void render_checked(const struct body_info *info, const uint8_t *p, size_t n, unsigned flags,
                           size_t limit, unsigned san)
{
    struct strbuf sb;
    sb_init(&sb);
    body_render(info, p, n, &sb, flags, limit);
    if (sb.len && sb.buf[sb.len - 1] != '\n')
        fail("rendered output does not end with a newline", "body_render", &sb, sb.len - 1);
    /* The viewer shows rendered lines through the sanitizer. */
    sanitize_checked(sb.buf, sb.len, san | SAN_KEEP_NEWLINES);
    sb_free(&sb);
}

/* The fast check is sure only of what jansson parses, with body.c's flags. */
static void json_differential(const uint8_t *p, size_t n)
{
    if (!json_surely_valid(p, n))
        return;
    json_error_t e;
    json_t *j = json_loadb((const char *)p, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
    if (!j) {
        fprintf(stderr,
                "fuzz_body: json_surely_valid is sure of a body jansson refuses: %s "
                "(line %d, column %d, position %d)\n  body:",
                e.text, e.line, e.column, e.position);
        for (size_t i = 0; i < n && i < 512; i++)
            fprintf(stderr, " %02x", p[i]);
        fprintf(stderr, "\n");
        abort();
    }
    json_decref(j);
}

static void babelqueue(const uint8_t *p, size_t n, bool app_id, unsigned san)
{
    struct bytes babel = bytes_from_cstr("babelqueue");
    struct bq_props props = {.app_id = app_id ? &babel : NULL};
    (void)bq_detect(p, n, &props);
    struct bq_envelope env;
    bq_parse(p, n, &props, &env);
    int64_t attempt;
    (void)bq_attempt(&env, &attempt);
    const char *q;
    size_t qn;
    if (bq_source_queue(&env, &q, &qn))
        sanitize_checked(q, qn, san);
    for (size_t i = 0; i < env.nwarnings; i++)
        sanitize_checked(env.warnings[i].text, strlen(env.warnings[i].text), san);
    bq_envelope_free(&env);
    bytes_free(&babel);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned sel = data[0];
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    unsigned san = ((sel & 0x20) ? SAN_ESCAPE_BACKSLASH : 0) | ((sel & 0x40) ? SAN_ASCII : 0) |
                   ((sel & 0x80) ? SAN_PAD : 0);

    json_differential(p, n);

    const char *ct_name = fuzz_content_types[sel & 7];
    struct bytes ct = ct_name ? bytes_from_cstr(ct_name) : (struct bytes){0, NULL};
    struct bytes gzip = bytes_from_cstr("gzip");
    struct body_info info;
    body_classify(p, n, ct_name ? &ct : NULL, (sel & FUZZ_SEL_GZIP) ? &gzip : NULL, &info);

    render_checked(&info, p, n, BODY_RENDER_DEFAULT, BODY_NO_LIMIT, san);
    render_checked(&info, p, n, BODY_RENDER_DEFAULT, n / 2, san);
    render_checked(&info, p, n, BODY_RENDER_RAW, 64, san);
    render_checked(&info, p, n, BODY_RENDER_HEX, 100, san);

    struct strbuf sum;
    sb_init(&sum);
    body_summary(&info, &sum);
    sanitize_checked(sum.buf, sum.len, san);
    fit_checked(sum.buf, sum.len, 24, san);
    sb_free(&sum);
    body_info_free(&info);

    babelqueue(p, n, (sel & FUZZ_SEL_BABELQUEUE) != 0, san);

    /* The body itself, as the raw view and a table cell show it. */
    sanitize_checked(p, n, san);
    sanitize_checked(p, n, san | SAN_KEEP_NEWLINES);
    static const int widths[] = {-1, 0, 1, 2, 7, 80};
    for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++)
        fit_checked(p, n, widths[i], san);

    bytes_free(&ct);
    bytes_free(&gzip);
    return 0;
}
