/*
 * app: the loop and the application-level operations the views and the command call.
 */
#ifndef DLQX_UI_APP_H
#define DLQX_UI_APP_H

#include "decode.h"
#include "peek.h"
#include "ui.h"

/* Runs the UI, starting on `first`; returns the exit status. */
int app_run(struct app *a, const struct view_ops *first);
void app_free(struct app *a);
void app_draw(struct app *a);
int app_handle(struct app *a, enum action act);
/* Lines a view has for its rows (screen less title, header and status). */
size_t app_page(const struct app *a);

bool app_row_matches(struct app *a, size_t i);
/* Compiles and applies a filter (NULL or "" clears it); false, with the reason on the status
 * line, when it does not compile. */
bool app_set_filter(struct app *a, const char *text);
void app_sort_rows(struct app *a); /* view_messages.c: by a->sort_column */
void app_data_changed(struct app *a);
void app_reload_views(struct app *a);
/* The store index of the message the user is on, or SIZE_MAX. */
size_t app_selected_message(struct app *a);

/* source.c */
/* Starts reading the snapshot files into a fresh store. The loop then reads them a slice at a
 * time (app_load_step) between keys, so the first screen shows as soon as there is a
 * screenful and the program stays responsive; Esc stops reading (what was read is kept). */
bool app_load_files(struct app *a);
/* Reads for about budget_ms; false when there is nothing (more) to read. */
bool app_load_step(struct app *a, int budget_ms);
void app_load_cancel(struct app *a);
/* Takes a snapshot of the queues into a fresh store, with a progress bar (count, rate, ETA);
 * Esc cancels and the queues are left as they were. */
bool app_peek_queues(struct app *a, char **queues, int n);
/* What the management API knows of a queue (type, delivery limit, DLX), when it is there. */
void app_queue_info(struct app *a, const char *queue, struct peek_queue_info *info);
/* r: read the files again, or snapshot the same queues again. */
void app_refresh(struct app *a);
/* A progress line on the bottom row; returns false when the user pressed Esc. */
bool app_progress(struct app *a, const char *what, uint64_t done, uint64_t total,
                  double started_s);

#endif
