/*
 * mgmt_fetch: the listing that finding DLQs and their placement needs — the cluster's nodes,
 * the queues, the policies and exchanges, the bindings — fetched a step at a time through
 * libcurl's multi interface, so that a loop that must answer keys (the explorer's queues view)
 * never waits on the management API: a slow or hung listener costs a step its few
 * milliseconds, never more, and the fetch ends by the timeout given.
 *
 * Ownership: the fetch owns a client of its own (mgmt_dup) and what it has read so far; the
 * listing taken from it is the caller's, released with mgmt_listing_free.
 */
#ifndef DLQX_MGMT_FETCH_H
#define DLQX_MGMT_FETCH_H

#include <stdbool.h>
#include <stddef.h>

#include "mgmt.h"

struct mgmt_listing {
    struct mgmt_node *nodes;
    size_t nn;
    bool nodes_known; /* /api/nodes was read (a user without the monitoring tag may not) */
    struct mgmt_queue *queues;
    size_t nq;
    struct mgmt_exchange *exchanges;
    size_t nx;
    struct mgmt_binding *bindings;
    size_t nb;
};
void mgmt_listing_free(struct mgmt_listing *l);

struct mgmt_fetch;

enum mgmt_fetch_rc { MGMT_FETCH_MORE, MGMT_FETCH_DONE, MGMT_FETCH_FAILED };

/* Starts a listing of vhost (NULL: every vhost) with m's settings; nothing is sent until the
 * first step. timeout_ms bounds each request (0: m's). */
struct mgmt_fetch *mgmt_fetch_start(const struct mgmt *m, const char *vhost, long timeout_ms);
/* Moves the transfers on, waiting at most wait_ms for the sockets: MORE (call again), DONE
 * (take the listing) or FAILED (err says why, with the kind of mgmt_fetch_error). */
enum mgmt_fetch_rc mgmt_fetch_step(struct mgmt_fetch *f, int wait_ms, struct error *err);
/* After DONE: moves the listing into *out. */
void mgmt_fetch_take(struct mgmt_fetch *f, struct mgmt_listing *out);
/* The management URL the fetch went on to when the one it began with did not answer (a list of
 * them: mgmt_urls.c), taken by m, so that its next requests and fetches begin there. */
void mgmt_fetch_adopt(struct mgmt *m, const struct mgmt_fetch *f);
enum mgmt_error mgmt_fetch_error(const struct mgmt_fetch *f);
/* How many requests it has completed, for a progress line. */
int mgmt_fetch_requests(const struct mgmt_fetch *f);
/* Stops what is in flight and releases everything; sets *f to NULL. */
void mgmt_fetch_free(struct mgmt_fetch **f);

#endif
