/*
 * death: RabbitMQ's dead-letter history (x-death, x-first-death-*, x-last-death-*,
 * x-delivery-count) read into the summary a person needs — how many times, why, from which
 * queue and exchange, first and last time.
 *
 * x-death is an array of tables, most recent first; the broker merges entries by
 * {queue, reason} and keeps the time, exchange and routing keys of the first such event.
 * Everything is read leniently and what cannot be read becomes a warning, never an abort.
 *
 * Ownership: death_read fills a struct the caller releases with death_free.
 */
#ifndef DLQX_DEATH_H
#define DLQX_DEATH_H

#include <stdbool.h>
#include <stdint.h>

#include "hval.h"

struct death_entry {
    struct bytes queue, reason, exchange;
    struct bytes *routing_keys;
    size_t n_routing_keys;
    int64_t count; /* 1 when absent or unreadable */
    bool has_time;
    int64_t time_ms; /* the broker writes seconds; kept here as ms */
    bool has_original_expiration;
    struct bytes original_expiration;
};

struct death_summary {
    bool present; /* any death header at all */
    struct death_entry *entries;
    size_t n_entries;
    int64_t total; /* sum of the counts */
    /* x-first-death-* when set, else the last (oldest) entry */
    struct bytes first_queue, first_reason, first_exchange;
    /* x-last-death-* (RabbitMQ 3.13+) when set, else the first (newest) entry */
    struct bytes last_queue, last_reason, last_exchange;
    bool has_times;
    int64_t first_time_ms, last_time_ms; /* over every entry */
    bool has_delivery_count;
    int64_t delivery_count; /* x-delivery-count (quorum queues) */
    char **warnings;        /* what could not be read, for display */
    size_t n_warnings;
};

void death_read(const struct htable *headers, struct death_summary *out);
void death_free(struct death_summary *d);

/* Whether a header is one the broker owns (never sent back on replay). */
bool death_broker_header(const void *name, size_t len);

/* The first death's routing key (the first of its routing-keys), or NULL. Borrowed. */
const struct bytes *death_first_routing_key(const struct death_summary *d);

#endif
