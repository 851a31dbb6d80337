/*
 * What the body tests share (body_testutil.h).
 */
#include "body_testutil.h"

#include "util.h"

void classify(const char *ct, const void *data, size_t len, struct body_info *out)
{
    struct bytes b = {ct ? strlen(ct) : 0, (unsigned char *)(uintptr_t)ct};
    body_classify(data, len, ct ? &b : NULL, NULL, out);
}

void classify_enc(const char *ct, const char *enc, const void *data, size_t len,
                  struct body_info *out)
{
    struct bytes b = {ct ? strlen(ct) : 0, (unsigned char *)(uintptr_t)ct};
    struct bytes e = {strlen(enc), (unsigned char *)(uintptr_t)enc};
    body_classify(data, len, ct ? &b : NULL, &e, out);
}

char *render(const struct body_info *in, const void *data, size_t len, unsigned flags, size_t limit)
{
    struct strbuf sb;
    sb_init(&sb);
    body_render(in, data, len, &sb, flags, limit);
    return sb_detach(&sb, NULL);
}

char *summary(const struct body_info *in)
{
    struct strbuf sb;
    sb_init(&sb);
    body_summary(in, &sb);
    return sb_detach(&sb, NULL);
}

/* Every rendered line: hexdump ASCII columns hold printable ASCII only. */
void assert_hex_ascii_clean(const char *text)
{
    for (const char *line = text; *line;) {
        const char *eol = strchr(line, '\n');
        assert_non_null(eol);
        const char *bar = memchr(line, '|', (size_t)(eol - line));
        if (bar && eol - line > 10 && line[8] == ' ' && line[9] == ' ')
            for (const char *c = bar; c < eol; c++)
                assert_true(*c >= 0x20 && *c <= 0x7e);
        line = eol + 1;
    }
}
