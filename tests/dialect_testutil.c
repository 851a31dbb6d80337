/* dialect_testutil: see dialect_testutil.h. */
#include "dialect_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"

void dec(struct dec *x, const char *line)
{
    struct error err;
    error_clear(&err);
    if (snapshot_parse_line(line, strlen(line), &x->m, &err) != ST_OK) {
        fprintf(stderr, "%s: %s\n", line, err.msg);
        fail();
    }
    decode_message(&x->m, NOW, &x->d);
}

void dec_free(struct dec *x)
{
    decoded_free(&x->d);
    message_free(&x->m);
}

enum status copy_of(const char *line, enum restamp_mode mode, struct dec *x, struct outgoing *out)
{
    dec(x, line);
    struct restamp_opts o = {.mode = mode, .now_ms = NOW, .new_id = "new-id"};
    struct error err;
    error_clear(&err);
    memset(out, 0, sizeof *out);
    return restamp_build(&x->d, &o, out, &err);
}

struct message *msg_of(const char *line)
{
    struct message *m = calloc(1, sizeof *m);
    struct error err;
    if (snapshot_parse_line(line, strlen(line), m, &err) != ST_OK)
        fail_msg("bad test record: %s", err.msg);
    return m;
}

struct message *msg(void)
{
    struct message *m = xcalloc(1, sizeof *m);
    message_init(m);
    m->queue = bytes_from_cstr("error");
    m->headers_present = true;
    m->fetched_at_ms = NOW - 1000;
    return m;
}

void hdr(struct message *m, const char *k, const char *v)
{
    htable_add(m->headers, k, hval_cstring(v));
}

void drop(struct message *m)
{
    message_free(m);
    free(m);
}

void recog(struct message *m, const char *dialect, int confidence)
{
    struct decoded d;
    decode_message(m, NOW, &d);
    if (strcmp(d.dialect->name, dialect) != 0 || d.match.confidence != confidence)
        fail_msg("read as %s (%d), not %s (%d)", d.dialect->name, d.match.confidence, dialect,
                 confidence);
    decoded_free(&d);
    drop(m);
}

void build_copy(struct built *b, const char *line, enum restamp_mode mode, bool strip)
{
    memset(b, 0, sizeof *b);
    b->m = msg_of(line);
    decode_message(b->m, NOW, &b->d);
    struct restamp_opts o;
    memset(&o, 0, sizeof o);
    o.mode = mode;
    o.strip_fault = strip;
    o.now_ms = NOW;
    o.new_id = "11111111-2222-4333-8444-555555555555";
    b->st = restamp_build(&b->d, &o, &b->out, &b->err);
    if (b->st != ST_OK)
        fail_msg("restamp: %s", b->err.msg);
}

void built_free(struct built *b)
{
    outgoing_free(&b->out);
    decoded_free(&b->d);
    message_free(b->m);
    free(b->m);
}

void expect_names(const struct htable *t, const char *const *names)
{
    size_t n = 0;
    while (names[n])
        n++;
    if (t->n != n)
        fail_msg("%zu headers, not %zu", t->n, n);
    for (size_t i = 0; i < n; i++)
        if (!bytes_eq_cstr(&t->e[i].key, names[i]))
            fail_msg("header %zu is %.*s, not %s", i, (int)t->e[i].key.len,
                     (const char *)t->e[i].key.data, names[i]);
}
