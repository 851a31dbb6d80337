/*
 * tap: a queue of dlqx's own that receives a copy of what reaches a dead-letter queue, so new
 * dead letters can be watched without touching the DLQ (AMQP side only; which bindings to copy
 * is the caller's, from the management API).
 *
 * The tap is declared server-named, exclusive and auto-delete, with x-max-length and
 * x-message-ttl: the broker removes it when the connection goes (a crash, SIGKILL), and a tap
 * whose reader stops cannot grow past its limits meanwhile. It is bound with the same
 * exchange, routing key and arguments as the DLQ's own bindings, so it receives exactly what
 * those bindings route to the DLQ; it is read with no-ack (a copy is nobody's to give back).
 * The default exchange cannot be bound: a DLQ fed through it (dead-lettered with the DLQ's name
 * as the routing key) is invisible to a tap, and the caller must say so.
 *
 * Ownership: the connection is borrowed. tap_open fills a struct tap whose name is its own;
 * tap_close deletes the queue (when the connection still works) and frees the name.
 * Messages from tap_next are the caller's (message_free).
 */
#ifndef DLQX_TAP_H
#define DLQX_TAP_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "conn.h"
#include "message.h"
#include "status.h"

/* The limits of every tap queue: a tap left unread holds at most this many messages, each for
 * at most this long. */
enum { TAP_MAX_LENGTH = 10000, TAP_MESSAGE_TTL_MS = 60000 };

struct tap {
    char *name;          /* the server-assigned queue name; owned */
    char consumer[32];   /* the consumer tag */
    amqp_channel_t ch;   /* the channel it is consumed on */
    const char *label;   /* the DLQ it taps (borrowed): the queue of the messages it gives */
    unsigned n_bindings; /* bindings made */
    bool stream;         /* name is a stream read from an offset (tap_open_stream), not a tap */
};

/* Declares a tap queue on channel ch (open) of c and starts consuming it (no-ack), with the
 * consumer tag "dlqx-tap-INDEX". label names the DLQ (borrowed until tap_close). */
enum status tap_open(struct conn *c, amqp_channel_t ch, const char *label, unsigned index,
                     struct tap *t, enum conn_err *kind, struct error *err);
/* Reads the stream `stream` itself from offset ("first", "last", "next", or a number) instead
 * of a tap: a stream is not changed by reading it (the acks only grant credit), so this sees
 * what reaches it whichever way it is fed, the default exchange included. tap_close cancels
 * the consumer and deletes nothing. */
enum status tap_open_stream(struct conn *c, amqp_channel_t ch, const char *stream,
                            const char *offset, unsigned index, struct tap *t, enum conn_err *kind,
                            struct error *err);
/* Binds the tap to exchange (never "", the default exchange: ST_EINVAL) with routing_key and
 * arguments (a JSON object of the management API's binding, or NULL). Strings, integers, reals
 * and booleans are copied; an argument of another kind is ST_EUNSUPPORTED and nothing is
 * bound (a looser binding could route what the exchange would give its alternate exchange). */
enum status tap_bind(struct conn *c, struct tap *t, const char *exchange, const char *routing_key,
                     json_t *arguments, enum conn_err *kind, struct error *err);

enum tap_next { TAP_MESSAGE, TAP_TIMEOUT, TAP_FAILED };
/* Waits up to timeout_ms for a delivery on any of the n taps (all on one connection):
 * TAP_MESSAGE with *out filled (its queue is the tapped DLQ's name, its exchange and routing key
 * those it was dead-lettered with) and *which its tap's index in taps, TAP_TIMEOUT, or
 * TAP_FAILED with *kind and err saying why. A signal ends the wait early as a timeout. */
enum tap_next tap_next(struct conn *c, const struct tap *taps, unsigned n, int timeout_ms,
                       struct message *out, unsigned *which, enum conn_err *kind,
                       struct error *err);
/* Deletes the tap queue (when the connection still works; else the broker does, as it is
 * exclusive) and frees its name; for a stream, cancels its consumer. Safe on a tap tap_open
 * did not fill. */
void tap_close(struct conn *c, struct tap *t);

#endif
