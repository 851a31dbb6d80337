/*
 * decode_hooks: the helpers of dialect.h that write into struct decoded — the envelope, the
 * neutral error fields, where the message came from. Here and not in dialect.c, so that the
 * dialect table needs nothing of decode.h (decode.h includes dialect.h: the other way round
 * would make the two one module).
 */
#include "decode.h"

#include "dialect.h"
#include "util.h"

void dialect_envelope(struct decoded *out, const struct envelope_init *init)
{
    envelope_free(out->env);
    out->env = NULL;
    if (envelope_new(init, &out->env, NULL) == ST_OK && out->env)
        return;
    struct envelope_init min = {.id = init->id,
                                .type = init->type,
                                .version = 1,
                                .attempt = init->attempt,
                                .attempt_from_zero = init->attempt_from_zero,
                                .first_seen_ms = init->first_seen_ms,
                                .defaulted = init->defaulted};
    if (envelope_new(&min, &out->env, NULL) != ST_OK)
        out->env = NULL; /* decode makes the last-resort one */
}

void dialect_envelope_app_headers(struct decoded *out, struct envelope_init *in,
                                  const struct message *m,
                                  bool (*framework)(const struct bytes *name, const void *ctx),
                                  const void *ctx)
{
    struct htable *own = htable_new();
    for (size_t i = 0; i < m->headers->n; i++) {
        const struct hentry *e = &m->headers->e[i];
        if (!framework(&e->key, ctx))
            htable_addn(own, e->key.data, e->key.len, hval_copy(&e->val));
    }
    in->headers = own;
    dialect_envelope(out, in);
    htable_free(own);
    in->headers = NULL;
}

void dialect_fault_copy_head(struct dfields *f, const struct decoded *d, bool fault_copy,
                             const char *endpoint, const char *stack_meaning)
{
    if (fault_copy && !d->death.present) {
        struct strbuf sb;
        sb_init(&sb);
        sb_adds(&sb, "moved to the error queue by the ");
        sb_adds(&sb, endpoint);
        sb_adds(&sb, " endpoint itself (no broker dead-lettering: no x-death)");
        dfields_add_line(f, DF_DEATH, DF_VALUE, sb.buf);
        sb_free(&sb);
    }
    if (d->stack_trace.len) {
        struct dfield *e = dfields_add(f, NULL, "stack trace", d->stack_trace.data,
                                       d->stack_trace.len, stack_meaning);
        e->where = DF_DEATH;
        e->style = DF_ERROR;
    }
}

/* Copies of the k strings (p[i], n[i]) in one new allocation, returned (NULL when none is
 * kept), each NUL-terminated as bytes_dup's; a string is absent ({0, NULL}) when keep_empty
 * is false and it is empty or NULL, else always there. One allocation where there were
 * three (they were 2% of dlqx groups). */
static unsigned char *pack(struct bytes *to[], const void *const p[], const size_t n[], size_t k,
                           bool keep_empty)
{
    size_t total = 0;
    for (size_t i = 0; i < k; i++)
        if (keep_empty || (p[i] && n[i]))
            total += n[i] + 1;
    unsigned char *block = total ? xmalloc(total) : NULL, *w = block;
    for (size_t i = 0; i < k; i++) {
        *to[i] = (struct bytes){0, NULL};
        if (!keep_empty && !(p[i] && n[i]))
            continue;
        if (n[i])
            memcpy(w, p[i], n[i]);
        w[n[i]] = '\0';
        *to[i] = (struct bytes){n[i], w};
        w += n[i] + 1;
    }
    return block;
}

/* Frees the strings: their block when they are in one, else each of them. */
static void unpack(struct bytes *b[], size_t k, unsigned char **block)
{
    for (size_t i = 0; i < k; i++)
        if (*block)
            *b[i] = (struct bytes){0, NULL};
        else
            bytes_free(b[i]);
    free(*block);
    *block = NULL;
}

void dialect_set_error(struct decoded *out, const void *type, size_t type_len, const void *message,
                       size_t message_len, const void *stack, size_t stack_len)
{
    struct bytes *to[] = {&out->error_type, &out->error_message, &out->stack_trace};
    const void *p[] = {type, message, stack};
    const size_t n[] = {type_len, message_len, stack_len};
    struct bytes next[3];
    struct bytes *nt[] = {&next[0], &next[1], &next[2]};
    unsigned char *block = pack(nt, p, n, 3, false); /* before the old ones go */
    unpack(to, 3, &out->error_parts);
    for (size_t i = 0; i < 3; i++)
        *to[i] = next[i];
    out->error_parts = block;
}

void decoded_error_parts_free(struct decoded *d)
{
    struct bytes *b[] = {&d->error_type, &d->error_message, &d->stack_trace};
    unpack(b, 3, &d->error_parts);
}

void source_free(struct source *s)
{
    struct bytes *b[] = {&s->queue, &s->exchange, &s->routing_key};
    unpack(b, 3, &s->block);
}

void dialect_source_queue(struct decoded *out, const char *how, const void *queue, size_t n)
{
    dialect_source_route(out, how, queue, n, "", 0, queue, n);
}

void dialect_source_route(struct decoded *out, const char *how, const void *queue, size_t qn,
                          const void *exchange, size_t en, const void *routing_key, size_t rn)
{
    struct source *s = &out->source;
    const void *p[] = {queue, exchange, routing_key};
    const size_t n[] = {qn, en, rn};
    struct bytes next[3];
    struct bytes *nt[] = {&next[0], &next[1], &next[2]};
    unsigned char *block = pack(nt, p, n, 3, true); /* before the old ones go */
    source_free(s);
    s->how = how;
    s->how_text = NULL;
    s->queue = next[0];
    s->exchange = next[1];
    s->routing_key = next[2];
    s->block = block;
}
