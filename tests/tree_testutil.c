#include "tree_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tree_span span_c(const char *s)
{
    struct tree_span sp = {s, strlen(s)};
    return sp;
}

void build_rows(struct forest *f, const struct row *rows, size_t n)
{
    struct tree_msg *msgs = xcalloc(n ? n : 1, sizeof *msgs);
    for (size_t i = 0; i < n; i++) {
        msgs[i].correlation = span_c(rows[i].corr);
        msgs[i].id = span_c(rows[i].id);
        msgs[i].causation = span_c(rows[i].cause);
    }
    struct error err;
    assert_int_equal(tree_build(f, msgs, n, &err), ST_OK);
    free(msgs);
}

uint32_t node_of(const struct forest *f, const char *corr, const char *id)
{
    uint32_t v = TREE_NONE;
    size_t k = tree_find(f, corr, strlen(corr), id, strlen(id), &v, 1);
    if (!k)
        fail_msg("no node %s/%s", corr, id);
    return v;
}

char *render_str(const struct forest *f, unsigned flags)
{
    struct strbuf sb;
    sb_init(&sb);
    tree_render(f, &sb, NULL, NULL, NULL, flags);
    return sb_detach(&sb, NULL);
}

void assert_render(const struct forest *f, unsigned flags, const char *want)
{
    char *got = render_str(f, flags);
    if (strcmp(got, want) != 0)
        print_error("--- got ---\n%s--- want ---\n%s", got, want);
    assert_string_equal(got, want);
    free(got);
}
