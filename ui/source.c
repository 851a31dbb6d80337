/*
 * source: the app's side of its source of messages (source.h) — starting it, giving it its
 * slices, stopping it, its progress line — and the fresh store every source fills.
 */
#include "source.h"

#include <stdlib.h>

#include "app.h"
#include "ui.h"

void app_source_set(struct app *a, const struct source_ops *ops, void *state)
{
    app_source_free(a);
    a->src.ops = ops;
    a->src.state = state;
    app_source_relabel(a);
}

void app_source_relabel(struct app *a)
{
    if (!a->src.ops)
        return;
    free(a->source_label);
    a->source_label = xstrdup(a->src.ops->label(a, a->src.state));
}

bool app_source_fresh_store(struct app *a)
{
    struct store *s = NULL;
    struct error err;
    if (store_new(0, NULL, &s, &err) != ST_OK) {
        app_message(a, true, "%s", err.msg);
        return false;
    }
    app_forest_drop(a);
    store_free(a->store);
    a->store = s;
    a->src.stopped = false; /* a new set: partial only if this reading stops too */
    app_data_changed(a);
    return true;
}

bool app_source_start(struct app *a)
{
    if (!a->src.ops)
        return false;
    /* A source still reading is stopped by its start, which waits for what it gives back. */
    a->src.running = a->src.ops->start(a, a->src.state);
    app_source_relabel(a);
    return a->src.running;
}

bool app_source_busy(const struct app *a)
{
    return a->src.running;
}

bool app_source_step(struct app *a, double until)
{
    if (!a->src.running)
        return false;
    a->src.running = a->src.ops->step(a, a->src.state, until);
    return a->src.running;
}

bool app_source_cancel(struct app *a)
{
    if (!a->src.running)
        return false;
    a->src.running = a->src.ops->cancel(a, a->src.state);
    a->src.stopped = true;
    return true;
}

bool app_source_stopped(const struct app *a)
{
    return a->src.stopped;
}

void app_source_mark_stopped(struct app *a)
{
    a->src.stopped = true;
}

void app_source_status(struct app *a, struct strbuf *out)
{
    if (a->src.running)
        a->src.ops->status(a, a->src.state, out);
}

bool app_source_is_broker(const struct app *a)
{
    return a->src.ops && a->src.ops->broker;
}

void app_source_free(struct app *a)
{
    if (!a->src.ops)
        return;
    a->src.running = false;
    a->src.ops->free(a, a->src.state); /* which stops it, waiting for what it gives back */
    a->src.ops = NULL;
    a->src.state = NULL;
}

void app_refresh(struct app *a)
{
    app_source_start(a);
}
