/*
 * ui_testutil: an explorer without a terminal for the unit tests of ui/ (rows, data, jobs,
 * the plan model) — an app whose store holds the dead letters a test describes, and the
 * work in progress driven to its end the way the loop drives it between keys.
 *
 * Ownership: uit_app returns an app the caller frees with uit_free (its store, rows, groups
 * and forest with it).
 */
#ifndef DLQX_UI_TESTUTIL_H
#define DLQX_UI_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "app.h"

#define UIT_NOW 1767323045678LL /* 2026-01-02T03:04:05.678Z: the app's clock */

/* One AceMQ dead letter (NULL fields are left out). */
struct uit_msg {
    const char *id, *type, *queue, *error, *correlation, *causation;
    int attempt;
    int64_t first_seen_ms, fetched_at_ms;
};

/* Appends the messages to a's store. */
void uit_append(struct app *a, const struct uit_msg *msgs, size_t n);
/* An app over these messages, its rows made (every message, as received). */
struct app *uit_app(const struct uit_msg *msgs, size_t n);
/* n dead letters made up from their number: id "m-<i>", attempt i % 7, type "type-<i % 5>",
 * queue "q<i % 3>.dlq", an error of i % 4 kinds, correlation "c-<i / 4>", each causing the
 * next of its correlation. */
struct app *uit_app_generated(size_t n);
/* Every job (and the forest's worker) to its end, as the loop would between keys. */
void uit_finish(struct app *a);
/* Stdin looks as if a key were waiting, so that each job's slice is the least it takes
 * (work is left for later whatever the machine's speed); uit_keys_idle undoes it. */
void uit_keys_waiting(void);
void uit_keys_idle(void);
/* The store entry of the message with this id, or SIZE_MAX. */
size_t uit_entry(struct app *a, const char *id);
void uit_free(struct app *a);

#endif
