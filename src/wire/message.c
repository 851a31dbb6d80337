/*
 * message: the raw message record and its AMQP basic properties.
 */
#include "message.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static const char *const prop_names[] = {
#define X(name) #name,
    PROP_STRING_LIST(X)
#undef X
        "delivery_mode",
    "priority",
    "timestamp",
};

const char *prop_name(enum prop_flag f)
{
    return (unsigned)f < PROP_COUNT ? prop_names[f] : "?";
}

struct bytes *props_slot(struct props *p, enum prop_flag f)
{
    switch (f) {
#define X(name)                                                                                    \
    case PROP_##name:                                                                              \
        return &p->name;
        PROP_STRING_LIST(X)
#undef X
    default:
        return NULL;
    }
}

const struct bytes *props_string(const struct props *p, enum prop_flag f)
{
    if (!props_has(p, f))
        return NULL;
    return props_slot((struct props *)(uintptr_t)p, f);
}

void props_set_string(struct props *p, enum prop_flag f, const void *data, size_t len)
{
    struct bytes *slot = props_slot(p, f);
    if (!slot)
        return;
    bytes_free(slot);
    *slot = bytes_dup(data, len);
    p->present |= 1u << f;
}

void message_init(struct message *m)
{
    memset(m, 0, sizeof *m);
    m->headers = htable_new();
}

void message_free(struct message *m)
{
    bytes_free(&m->queue);
    bytes_free(&m->exchange);
    bytes_free(&m->routing_key);
#define X(name) bytes_free(&m->props.name);
    PROP_STRING_LIST(X)
#undef X
    htable_free(m->headers);
    m->headers = NULL;
    bytes_free(&m->body);
}

struct message *message_copy(const struct message *src)
{
    struct message *m = xmalloc(sizeof *m);
    *m = *src;
    m->queue = bytes_copy(&src->queue);
    m->exchange = bytes_copy(&src->exchange);
    m->routing_key = bytes_copy(&src->routing_key);
    for (unsigned f = 0; f < PROP_delivery_mode; f++) {
        struct bytes *slot = props_slot(&m->props, (enum prop_flag)f);
        *slot = bytes_copy(slot);
    }
    m->headers = htable_copy(src->headers);
    m->body = bytes_copy(&src->body);
    return m;
}

bool message_equal(const struct message *a, const struct message *b)
{
    if (!bytes_eq(&a->queue, &b->queue) || !bytes_eq(&a->exchange, &b->exchange) ||
        !bytes_eq(&a->routing_key, &b->routing_key) || a->redelivered != b->redelivered ||
        a->fetched_at_ms != b->fetched_at_ms || a->props.present != b->props.present ||
        a->headers_present != b->headers_present || !bytes_eq(&a->body, &b->body) ||
        a->has_stream_offset != b->has_stream_offset ||
        (a->has_stream_offset && a->stream_offset != b->stream_offset))
        return false;
    for (unsigned f = 0; f < PROP_delivery_mode; f++) {
        struct bytes *x = props_slot((struct props *)(uintptr_t)&a->props, (enum prop_flag)f);
        struct bytes *y = props_slot((struct props *)(uintptr_t)&b->props, (enum prop_flag)f);
        if (!bytes_eq(x, y))
            return false;
    }
    if (props_has(&a->props, PROP_delivery_mode) &&
        a->props.delivery_mode != b->props.delivery_mode)
        return false;
    if (props_has(&a->props, PROP_priority) && a->props.priority != b->props.priority)
        return false;
    if (props_has(&a->props, PROP_timestamp) && a->props.timestamp != b->props.timestamp)
        return false;
    return htable_equal(a->headers, b->headers);
}
