/*
 * tapset: the taps that follow some DLQs (tap.h), set up from what the management API lists —
 * which queues feed each DLQ, and the DLQ's own bindings, which each tap copies. Shared by
 * `dlqx follow` and the explorer's live mode (ui/live.c): both find what to bind the same way
 * and say the same things about what a tap cannot see.
 *
 * What it says (which exchange a tap copies, a source that dead-letters through the default
 * exchange and is invisible to a tap, a binding it will not copy) goes to the caller's note
 * function as raw text (queue and exchange names are the broker's bytes: the caller sanitises),
 * each sentence about one DLQ starting with its name.
 *
 * Ownership: the connection and the management API are borrowed; the names are borrowed until
 * tapset_close, which deletes the taps (tap_close) and frees the listings.
 */
#ifndef DLQX_TAPSET_H
#define DLQX_TAPSET_H

#include <stdbool.h>
#include <stddef.h>

#include "conn.h"
#include "dlqfind.h"
#include "mgmt.h"
#include "status.h"
#include "tap.h"

enum { TAPSET_MAX = 16 };

/* One DLQ followed. */
struct tapset_queue {
    const char *name;           /* borrowed */
    const struct mgmt_queue *q; /* in the listing */
    bool tapped;                /* a tap is bound to at least one of its bindings */
    bool hidden; /* some (or all, when !tapped) of its dead letters cannot be tapped */
};

struct tapset {
    struct tapset_queue qs[TAPSET_MAX];
    int n;
    struct tap taps[TAPSET_MAX];
    unsigned n_taps;
    /* The listings (owned). */
    struct mgmt_queue *list_q;
    size_t nq;
    struct mgmt_exchange *list_x;
    size_t nx;
    struct mgmt_binding *list_b;
    size_t nb;
    struct dlq_report rep;
};

enum tapset_rc {
    TAPSET_OK,
    TAPSET_MGMT_FAILED, /* the management API (mgmt_last_error says how) */
    TAPSET_FIND_FAILED, /* the listing could not be read as DLQs */
    TAPSET_MISSING,     /* *missing names a queue that is not there */
    TAPSET_TAP_FAILED,  /* AMQP: *kind */
};

/* hidden: the sentence says some dead letters cannot be tapped. */
typedef void (*tapset_note_fn)(void *ctx, bool hidden, const char *text);

/* Lists the virtual host vhost, and taps each of the n names (at most TAPSET_MAX) on channel 1
 * of c: a stream is read from from_offset instead when from_offset is not NULL. On failure
 * err says why; the taps already made are ts's, for tapset_close. */
enum tapset_rc tapset_open(struct tapset *ts, struct conn *c, struct mgmt *m, const char *vhost,
                           const char *const *names, int n, const char *from_offset,
                           tapset_note_fn note, void *ctx, int *missing, enum conn_err *kind,
                           struct error *err);
/* Whether any DLQ has dead letters a tap cannot see. */
bool tapset_any_hidden(const struct tapset *ts);
/* Deletes the taps (when c still works; the broker does otherwise) and frees the listings.
 * Safe on a zeroed tapset. */
void tapset_close(struct tapset *ts, struct conn *c);

#endif
