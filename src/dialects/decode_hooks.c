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

static void set_bytes(struct bytes *b, const void *p, size_t n)
{
    bytes_free(b);
    if (p && n)
        *b = bytes_dup(p, n);
}

void dialect_set_error(struct decoded *out, const void *type, size_t type_len, const void *message,
                       size_t message_len, const void *stack, size_t stack_len)
{
    set_bytes(&out->error_type, type, type_len);
    set_bytes(&out->error_message, message, message_len);
    set_bytes(&out->stack_trace, stack, stack_len);
}

void dialect_source_queue(struct decoded *out, const char *how, const void *queue, size_t n)
{
    dialect_source_route(out, how, queue, n, "", 0, queue, n);
}

void dialect_source_route(struct decoded *out, const char *how, const void *queue, size_t qn,
                          const void *exchange, size_t en, const void *routing_key, size_t rn)
{
    struct source *s = &out->source;
    bytes_free(&s->queue);
    bytes_free(&s->exchange);
    bytes_free(&s->routing_key);
    s->how = how;
    s->how_text = NULL;
    s->queue = bytes_dup(qn ? queue : "", qn);
    s->exchange = bytes_dup(en ? exchange : "", en);
    s->routing_key = bytes_dup(rn ? routing_key : "", rn);
}
