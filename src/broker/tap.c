/*
 * tap: declare, bind, read and delete dlqx's own copy-queue of a DLQ (tap.h).
 */
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "peek.h"
#include "util.h"

static amqp_table_entry_t int_entry(const char *k, int64_t v)
{
    amqp_table_entry_t e;
    e.key = amqp_cstring_bytes(k);
    e.value.kind = AMQP_FIELD_KIND_I64;
    e.value.value.i64 = v;
    return e;
}

enum status tap_open(struct conn *c, amqp_channel_t ch, const char *label, unsigned index,
                     struct tap *t, enum conn_err *kind, struct error *err)
{
    memset(t, 0, sizeof *t);
    t->ch = ch;
    t->label = label;
    amqp_connection_state_t st = conn_state(c);
    amqp_table_entry_t args[2] = {int_entry("x-max-length", TAP_MAX_LENGTH),
                                  int_entry("x-message-ttl", TAP_MESSAGE_TTL_MS)};
    amqp_table_t table = {2, args};
    /* passive 0, durable 0, exclusive 1, auto-delete 1 */
    amqp_queue_declare_ok_t *ok = amqp_queue_declare(st, ch, amqp_empty_bytes, 0, 0, 1, 1, table);
    enum status s =
        conn_check_reply(c, ch, amqp_get_rpc_reply(st), "declaring the tap queue", kind, err);
    if (s != ST_OK)
        return s;
    t->name = xstrndup(ok->queue.bytes, ok->queue.len);
    snprintf(t->consumer, sizeof t->consumer, "dlqx-tap-%u", index);
    amqp_basic_consume(st, ch, amqp_cstring_bytes(t->name), amqp_cstring_bytes(t->consumer), 0, 1,
                       1, amqp_empty_table);
    return conn_check_reply(c, ch, amqp_get_rpc_reply(st), "reading the tap queue", kind, err);
}

enum status tap_open_stream(struct conn *c, amqp_channel_t ch, const char *stream,
                            const char *offset, unsigned index, struct tap *t, enum conn_err *kind,
                            struct error *err)
{
    memset(t, 0, sizeof *t);
    t->ch = ch;
    t->label = stream;
    t->stream = true;
    t->name = xstrdup(stream);
    snprintf(t->consumer, sizeof t->consumer, "dlqx-tap-%u", index);
    amqp_connection_state_t st = conn_state(c);
    amqp_table_entry_t arg;
    arg.key = amqp_cstring_bytes("x-stream-offset");
    char *end;
    long long n = strtoll(offset, &end, 10);
    if (*offset && !*end && n >= 0) {
        arg = int_entry("x-stream-offset", n);
    } else {
        arg.value.kind = AMQP_FIELD_KIND_UTF8;
        arg.value.value.bytes = amqp_cstring_bytes(offset);
    }
    /* A stream consumer needs a prefetch (the no-ack taps on the channel ignore it). */
    amqp_basic_qos(st, ch, 0, 1000, 0);
    enum status s =
        conn_check_reply(c, ch, amqp_get_rpc_reply(st), "setting the prefetch", kind, err);
    if (s != ST_OK)
        return s;
    amqp_basic_consume(st, ch, amqp_cstring_bytes(stream), amqp_cstring_bytes(t->consumer), 0, 0, 0,
                       (amqp_table_t){1, &arg});
    char *what = xasprintf("reading stream \"%s\" from offset %s", stream, offset);
    s = conn_check_reply(c, ch, amqp_get_rpc_reply(st), what, kind, err);
    free(what);
    return s;
}

/* One binding argument as AMQP: false for a JSON value it has no simple form for. */
static bool arg_entry(const char *k, const json_t *v, amqp_table_entry_t *e)
{
    e->key = amqp_cstring_bytes(k);
    if (json_is_string(v)) {
        e->value.kind = AMQP_FIELD_KIND_UTF8;
        e->value.value.bytes = amqp_cstring_bytes(json_string_value(v));
    } else if (json_is_integer(v)) {
        e->value.kind = AMQP_FIELD_KIND_I64;
        e->value.value.i64 = json_integer_value(v);
    } else if (json_is_real(v)) {
        e->value.kind = AMQP_FIELD_KIND_F64;
        e->value.value.f64 = json_real_value(v);
    } else if (json_is_boolean(v)) {
        e->value.kind = AMQP_FIELD_KIND_BOOLEAN;
        e->value.value.boolean = json_is_true(v);
    } else {
        return false;
    }
    return true;
}

enum status tap_bind(struct conn *c, struct tap *t, const char *exchange, const char *routing_key,
                     json_t *arguments, enum conn_err *kind, struct error *err)
{
    if (!exchange || !*exchange) {
        if (kind)
            *kind = CONN_PRECONDITION;
        return error_set(err, ST_EINVAL, "the default exchange cannot be bound");
    }
    size_t n = json_is_object(arguments) ? json_object_size(arguments) : 0;
    amqp_table_entry_t *args = n ? xcalloc(n, sizeof *args) : NULL;
    amqp_table_t table = {0, args};
    const char *k;
    json_t *v;
    json_object_foreach(arguments, k, v)
    {
        if (!arg_entry(k, v, &args[table.num_entries++])) {
            /* Bound without it the tap could match more than the DLQ does, and a message the
             * exchange could not route (to its alternate exchange) would then route. */
            free(args);
            if (kind)
                *kind = CONN_OK;
            return error_set(err, ST_EUNSUPPORTED,
                             "the binding's argument \"%s\" is of a kind dlqx does not copy", k);
        }
    }
    amqp_connection_state_t st = conn_state(c);
    amqp_queue_bind(st, t->ch, amqp_cstring_bytes(t->name), amqp_cstring_bytes(exchange),
                    amqp_cstring_bytes(routing_key ? routing_key : ""), table);
    char *what = xasprintf("binding the tap to exchange \"%s\"", exchange);
    enum status s = conn_check_reply(c, t->ch, amqp_get_rpc_reply(st), what, kind, err);
    free(what);
    free(args);
    if (s == ST_OK)
        t->n_bindings++;
    return s;
}

enum tap_next tap_next(struct conn *c, const struct tap *taps, unsigned n, int timeout_ms,
                       struct message *out, unsigned *which, enum conn_err *kind, struct error *err)
{
    amqp_connection_state_t st = conn_state(c);
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    for (;;) {
        amqp_envelope_t e;
        amqp_maybe_release_buffers(st);
        amqp_rpc_reply_t rep = amqp_consume_message(st, &e, &tv, 0);
        if (rep.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
            rep.library_error == AMQP_STATUS_TIMEOUT)
            return TAP_TIMEOUT;
        if (rep.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
            rep.library_error == AMQP_STATUS_UNEXPECTED_STATE) {
            /* A shutdown or restart closes the connection; anything it does not end (a frame
             * not for the taps) is passed over. */
            if (conn_read_interrupt(c, "reading the tap", kind, err) != CONN_FRAME_OTHER)
                return TAP_FAILED;
            continue;
        }
        if (rep.reply_type != AMQP_RESPONSE_NORMAL) {
            conn_check_reply(c, n ? taps[0].ch : 1, rep, "reading the tap", kind, err);
            return TAP_FAILED;
        }
        for (unsigned i = 0; i < n; i++) {
            if (e.channel == taps[i].ch && e.consumer_tag.len == strlen(taps[i].consumer) &&
                memcmp(e.consumer_tag.bytes, taps[i].consumer, e.consumer_tag.len) == 0) {
                peek_message_from_envelope(&e, taps[i].label, clock_now_ms(), out);
                if (taps[i].stream) /* credit for the next; a stream is not changed */
                    amqp_basic_ack(st, taps[i].ch, e.delivery_tag, 0);
                *which = i;
                amqp_destroy_envelope(&e);
                return TAP_MESSAGE;
            }
        }
        amqp_destroy_envelope(&e); /* not a tap's */
    }
}

void tap_close(struct conn *c, struct tap *t)
{
    if (t->name && c && conn_alive(c) && t->stream) {
        amqp_connection_state_t st = conn_state(c);
        amqp_basic_cancel(st, t->ch, amqp_cstring_bytes(t->consumer));
        enum conn_err kind;
        struct error err;
        conn_check_reply(c, t->ch, amqp_get_rpc_reply(st), "ending the stream read", &kind, &err);
    } else if (t->name && c && conn_alive(c)) {
        amqp_connection_state_t st = conn_state(c);
        amqp_queue_delete(st, t->ch, amqp_cstring_bytes(t->name), 0, 0);
        enum conn_err kind;
        struct error err;
        conn_check_reply(c, t->ch, amqp_get_rpc_reply(st), "deleting the tap queue", &kind, &err);
    }
    free(t->name);
    t->name = NULL;
}
