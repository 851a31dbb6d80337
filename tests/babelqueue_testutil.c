/*
 * What the BabelQueue tests share (babelqueue_testutil.h).
 */
#include "babelqueue_testutil.h"

#include <string.h>

#include "util.h"

enum bq_reason parse(const char *s, struct bq_envelope *e)
{
    return bq_parse(s, strlen(s), NULL, e);
}

enum bq_reason parse_fixture(const char *name, struct bq_envelope *e)
{
    struct bytes b = test_read_fixture(name);
    enum bq_reason r = bq_parse(b.data, b.len, NULL, e);
    bytes_free(&b);
    return r;
}

enum bq_reason reason_of(const char *s)
{
    struct bq_envelope e;
    enum bq_reason r = parse(s, &e);
    bq_envelope_free(&e);
    return r;
}

bool has_warning(const struct bq_envelope *e, enum bq_warning_kind k, const char *needle)
{
    for (size_t i = 0; i < e->nwarnings; i++)
        if (e->warnings[i].kind == k && strstr(e->warnings[i].text, needle))
            return true;
    return false;
}
