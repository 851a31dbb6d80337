/*
 * live: the explorer following the open queues as new dead letters arrive (`L` in the
 * messages, groups and timeline views). A feed the loop steps like a source (job.c gives it a
 * slice between keys, a few milliseconds, never a wait on the broker): each arrival is a copy
 * read from a tap of dlqx's own (src/broker/tapset.h, as `dlqx follow`), appended to the store
 * and marked new; the rows, the groups and the timeline take it in; a cause (an error
 * fingerprint) not seen before in this session is flagged on the bottom line with the bell.
 * The DLQ is never touched: the rows of the snapshot stay where the peek gave them back.
 *
 * The feed behind struct live_feed is a tap set on a broker (live.c) or, in the tests, a list
 * of messages. Stopping (L again, a new snapshot, quitting, a signal) deletes the taps.
 *
 * What the loop calls (live_active, live_step, live_title, live_free, and the handlers of L
 * and E) is declared in app.h, so that the loop needs nothing of this header.
 *
 * Ownership: the app owns its live state (a->live), made at the first L and freed by
 * live_free; what was seen (the causes, which entries arrived) outlives a stop.
 */
#ifndef DLQX_UI_LIVE_H
#define DLQX_UI_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "groups.h"
#include "message.h"

struct app;

/* Where arrivals come from. next: LIVE_MESSAGE with *out filled (the caller's), LIVE_NONE
 * when nothing waits (it never waits), LIVE_FAILED with why (at least 256 bytes). close ends
 * it and releases ctx. */
enum live_next { LIVE_MESSAGE, LIVE_NONE, LIVE_FAILED };
struct live_feed {
    enum live_next (*next)(void *ctx, struct message *out, char *why, size_t why_len);
    void (*close)(void *ctx);
};

/* Starts following from feed (ctx is its own until its close); label names what is followed
 * ("orders.dlq"). The causes of the whole store count as seen. */
void live_start(struct app *a, const struct live_feed *feed, void *ctx, const char *label);
/* Stops following (the feed is closed: the taps are deleted); why, when not NULL, goes on
 * the message line. */
void live_stop(struct app *a, const char *why);
/* Whether store entry i arrived while following (the messages view marks it). */
bool live_is_new(const struct app *a, size_t entry);
/* How many arrived (since the first L on this store), and at what rate (per minute, over the
 * last minute). */
uint64_t live_arrivals(const struct app *a);
double live_rate_per_min(const struct app *a, int64_t now_ms);
/* The group's arrivals per minute over the three minutes before now (when dead-lettered, as
 * the timeline counts), as the report's "rate now". */
double live_group_rate(const struct app *a, const struct group *g, int64_t now_ms);

/* Writes the report of the app's store (markdown, or html for a name ending .html or .htm) to
 * path: a new file or a regular one replaced whole (safefile.h); anything else is refused.
 * False with why in msg; true with what was written in msg. */
bool export_report(struct app *a, const char *path, char *msg, size_t len);

#endif
