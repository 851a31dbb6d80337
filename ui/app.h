/*
 * app: the loop and the application-level operations the views and the command call.
 */
#ifndef DLQX_UI_APP_H
#define DLQX_UI_APP_H

#include "decode.h"
#include "peek.h"
#include "ui.h"

/* The sanitizer's flags for this screen (SAN_ASCII without a UTF-8 locale or with --ascii). */
unsigned app_san_flags(const struct app *a);

/* Runs the UI, starting on `first`; returns the exit status. */
int app_run(struct app *a, const struct view_ops *first);
void app_free(struct app *a);
void app_draw(struct app *a);
/* The least the views need (the plan's progress, the columns of the lists, the title's two
 * halves). Below it every view shows only "terminal too small: W×H, dlqx needs at least
 * 60×12" and no key acts but q, Esc, Ctrl-g and Ctrl-l. */
#define APP_MIN_COLS 60
#define APP_MIN_ROWS 12
bool app_too_small(const struct app *a);
void app_draw_too_small(struct app *a);
int app_handle(struct app *a, enum action act);
/* Lines a view has for its rows (screen less title, header and status). */
size_t app_page(const struct app *a);

void app_reload_views(struct app *a);

/* rows.c: the rows, made again in steps (job.h) when the filter, the order or the data
 * change. The setters compile and start; the rows, the filter and the order change together
 * when the job is done (at once for small sets). */
enum sort_column {
    SORT_ORDER,
    SORT_AGE,
    SORT_ATTEMPT,
    SORT_TYPE,
    SORT_ERROR,
    SORT_ID,
    SORT_QUEUE,
    SORT_N
};
const char *app_sort_name(int column);
/* The clock ages are counted at: now, or — after ACT_AGE_CLOCK — as of the snapshot (the
 * newest fetched_at_ms of the messages loaded). Filters always count from now. */
int64_t app_age_clock(struct app *a);
/* Switches the clock (refused, with a message, when no message says when it was read). */
void app_age_clock_toggle(struct app *a);
/* "from now" or "as of the snapshot", for the views' status lines. */
const char *app_age_clock_name(const struct app *a);
/* Whether store entry i passes the filter of the rows. */
bool app_row_matches(struct app *a, size_t i);
/* Applies a filter (NULL or "" clears it); false, with the reason on the status line, when
 * it does not compile. */
bool app_set_filter(struct app *a, const char *text);
void app_set_sort(struct app *a, int column, bool reverse);
/* The order and filter wanted: the job's when one is under way, else the rows'. */
void app_sort_wanted(const struct app *a, int *column, bool *reverse);
const char *app_filter_wanted(const struct app *a);
/* A new store: no rows until they are made from it. */
void app_rows_reset(struct app *a);
/* While files are read: the new entries join the rows (filtered; sorting waits). */
void app_rows_extend(struct app *a);
/* Reading ended: the rows are sorted as asked and what depends on the set is made again. */
void app_rows_complete(struct app *a);
/* Whether the set of rows is being made again (a filter, a new store). */
bool app_rows_rescanning(const struct app *a);
/* A dead letter a pass took out of its queue (replayed, re-issued, moved, deleted). After
 * marking, app_rows_drop_gone makes the rows again without them. */
enum gone_why { GONE_NONE, GONE_REPLAYED, GONE_REISSUED, GONE_MOVED, GONE_DELETED };
void app_mark_gone(struct app *a, size_t entry, enum gone_why why);
void app_rows_drop_gone(struct app *a);
/* "replayed", …, or NULL while the message is still in its queue. */
const char *app_gone_name(const struct app *a, size_t entry);

/* data.c: what is made from the rows and the store, once per generation. */
/* The failure groups of the rows; *current is false while they are being made (those of an
 * earlier set, or NULL, are returned meanwhile). Starts the job when needed. */
const struct groups *app_groups(struct app *a, bool *current);
void app_group_again(struct app *a); /* after a cancel */
bool app_groups_building(const struct app *a);
/* Whether a->forest is the forest of the whole store; starts building it when not. */
bool app_forest(struct app *a);
void app_build_forest(struct app *a); /* after a cancel */
bool app_forest_building(const struct app *a);
/* Before the store is freed: the forest (and a build under way) that read its bytes go. */
void app_forest_drop(struct app *a);
/* The store was replaced: everything made from the old one is dropped and made again. */
void app_data_changed(struct app *a);
void app_data_free(struct app *a);

/* The store index of the message the user is on, or SIZE_MAX. */
size_t app_selected_message(struct app *a);

/* live.c: following the open queues (live.h). The handler of L starts or stops it; the loop
 * steps it (job.c): live_step reads what the feed has until the monotonic clock passes until
 * (a few ms at most) and returns JOB_MORE when it stopped with more to read, JOB_WAIT when the
 * feed is empty, JOB_DONE when not following; *changed when something arrived or it stopped.
 * live_title: "LIVE 12 new 4/min  " for the title ("" when not following). live_free stops it
 * (the taps deleted) and frees what was seen. */
int act_live(struct app *a, enum action act);
bool live_active(const struct app *a);
enum job_rc live_step(struct app *a, double until, bool *changed);
void live_title(const struct app *a, char *out, size_t len);
void live_free(struct app *a);
/* export.c: the handler of E, the report of what the explorer holds to a file named on the
 * prompt line (live.h: export_report). */
int act_export(struct app *a, enum action act);

/* source.h: where the messages come from (app_source_*, app_refresh, app_queue_info). */

#endif
