/*
 * ui_testutil: an explorer without a terminal (ui_testutil.h).
 */
#include "ui_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

static void header(struct message *m, const char *name, const char *value)
{
    if (value)
        htable_add(m->headers, name, hval_cstring(value));
}

void uit_append(struct app *a, const struct uit_msg *msgs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct uit_msg *d = &msgs[i];
        struct message m;
        message_init(&m);
        m.queue = bytes_from_cstr(d->queue ? d->queue : "orders.dlq");
        m.fetched_at_ms = d->fetched_at_ms ? d->fetched_at_ms : UIT_NOW - 1000;
        m.headers_present = true;
        header(&m, "x-acemq-id", d->id);
        header(&m, "x-acemq-type", d->type);
        header(&m, "x-acemq-error", d->error);
        header(&m, "x-acemq-correlation", d->correlation);
        header(&m, "x-acemq-causation", d->causation);
        htable_add(m.headers, "x-acemq-attempt", hval_int(HV_I32, d->attempt));
        htable_add(m.headers, "x-acemq-first-seen",
                   hval_int(HV_I64, d->first_seen_ms ? d->first_seen_ms : UIT_NOW - 60000));
        struct error err;
        assert_int_equal(store_append(a->store, &m, UIT_NOW, &err), ST_OK);
        message_free(&m);
    }
}

struct app *uit_app(const struct uit_msg *msgs, size_t n)
{
    struct app *a = xcalloc(1, sizeof *a);
    tree_init(&a->forest);
    a->read_only = true;
    /* no source (a->src): the store is filled here, as snapshot files already read */
    a->now_ms = UIT_NOW;
    a->rows_on_screen = 40;
    a->cols_on_screen = 120;
    struct error err;
    assert_int_equal(store_new(0, NULL, &a->store, &err), ST_OK);
    uit_append(a, msgs, n);
    app_data_changed(a); /* the rows are made from the new store */
    uit_finish(a);
    return a;
}

struct app *uit_app_generated(size_t n)
{
    static const char *const errors[] = {
        "exhausted 5 attempts: TimeoutException: gateway timed out after 30000 ms",
        "gave up: Payments::Declined: order A-17: upstream said no",
        "InventoryException: sku 4411 out of stock", NULL};
    struct uit_msg *msgs = xcalloc(n ? n : 1, sizeof *msgs);
    char **text = xcalloc(n * 5 + 1, sizeof *text);
    for (size_t i = 0; i < n; i++) {
        char **t = &text[i * 5];
        t[0] = xasprintf("m-%zu", i);
        t[1] = xasprintf("type-%zu", i % 5);
        t[2] = xasprintf("q%zu.dlq", i % 3);
        t[3] = xasprintf("c-%zu", i / 4);
        t[4] = i % 4 ? xasprintf("m-%zu", i - 1) : NULL;
        msgs[i] = (struct uit_msg){t[0], t[1], t[2],         errors[i % 4],
                                   t[3], t[4], (int)(i % 7), UIT_NOW - 1000 * (int64_t)(i % 11 + 1),
                                   0};
    }
    struct app *a = uit_app(msgs, n);
    for (size_t i = 0; i < n * 5; i++)
        free(text[i]);
    free(text);
    free(msgs);
    return a;
}

void uit_finish(struct app *a)
{
    for (int i = 0; i < 1000000 && app_busy(a); i++) {
        bool ended = false;
        if (app_work(a, 20, &ended) == JOB_WAIT) {
            struct timespec ts = {0, 1000000};
            nanosleep(&ts, NULL);
        }
    }
    assert_false(app_busy(a));
}

static int saved_stdin = -1;

void uit_keys_waiting(void)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(write(p[1], "x", 1), 1);
    if (saved_stdin < 0)
        saved_stdin = dup(STDIN_FILENO);
    dup2(p[0], STDIN_FILENO);
    close(p[0]);
    close(p[1]);
}

void uit_keys_idle(void)
{
    if (saved_stdin < 0)
        return;
    dup2(saved_stdin, STDIN_FILENO);
    close(saved_stdin);
    saved_stdin = -1;
}

size_t uit_entry(struct app *a, const char *id)
{
    char buf[STORE_TEXT_MAX];
    for (size_t i = 0; i < store_count(a->store); i++) {
        size_t len = store_text(a->store, store_entry_at(a->store, i)->id, buf);
        if (len == strlen(id) && memcmp(buf, id, len) == 0)
            return i;
    }
    return SIZE_MAX;
}

void uit_free(struct app *a)
{
    /* The views left open, as app_run closes them when it returns. */
    while (a->depth > 0) {
        struct view *v = &a->stack[--a->depth];
        if (v->ops->close)
            v->ops->close(a, v);
    }
    app_free(a);
    free(a);
}
