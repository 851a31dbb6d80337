/*
 * The explorer's live mode (ui/live.c) over a feed of the test's own (live.h's struct
 * live_feed), and its report (ui/export.c): arrivals join the store and the rows and are marked
 * "+" in the messages view, the title counts them, a cause not seen before is flagged on the
 * bottom line with the bell (not with --no-bell, and once), a failing feed or a new store stops
 * following and the feed is closed (the taps deleted), the groups view shows the rate now; E
 * writes markdown or html and refuses what is not a regular file. Drawn on a screen in memory.
 */
#include "ui_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "live.h"
#include "term.h"
#include "testutil.h"

static const struct uit_msg snapshot[] = {
    {"old-1", "order.placed", "orders.dlq", "TimeoutException: gateway timed out after 30 s", NULL,
     NULL, 1, 0, 0},
    {"old-2", "order.placed", "orders.dlq", "TimeoutException: gateway timed out after 31 s", NULL,
     NULL, 1, 0, 0},
    {"old-3", "order.placed", "orders.dlq", "InventoryException: sku 4411 out of stock", NULL, NULL,
     2, 0, 0},
};

/* The feed: messages given one at a time, then nothing (or a failure). */
struct fake {
    struct uit_msg msgs[8];
    size_t n, at;
    bool fail_at_end;
    bool closed;
};

static enum live_next fake_next(void *ctx, struct message *out, char *why, size_t why_len)
{
    struct fake *f = ctx;
    if (f->at == f->n) {
        if (!f->fail_at_end)
            return LIVE_NONE;
        snprintf(why, why_len, "the connection was closed by the broker");
        return LIVE_FAILED;
    }
    const struct uit_msg *d = &f->msgs[f->at++];
    message_init(out);
    out->queue = bytes_from_cstr(d->queue);
    out->fetched_at_ms = clock_now_ms();
    out->headers_present = true;
    htable_add(out->headers, "x-acemq-id", hval_cstring(d->id));
    htable_add(out->headers, "x-acemq-type", hval_cstring(d->type));
    htable_add(out->headers, "x-acemq-error", hval_cstring(d->error));
    htable_add(out->headers, "x-acemq-attempt", hval_int(HV_I32, d->attempt));
    htable_add(out->headers, "x-acemq-first-seen",
               hval_int(HV_I64, d->first_seen_ms ? d->first_seen_ms : UIT_NOW - 30000));
    return LIVE_MESSAGE;
}

static void fake_close(void *ctx)
{
    struct fake *f = ctx;
    f->closed = true;
}

static const struct live_feed fake_ops = {fake_next, fake_close};

static void add(struct fake *f, const char *id, const char *error)
{
    f->msgs[f->n++] =
        (struct uit_msg){id, "order.placed", "orders.dlq", error, NULL, NULL, 1, 0, 0};
}

/* The loop between keys until the feed is read and the views have taken it in (the views
 * take arrivals in at most every 0.2 s). */
static void pump(struct app *a, struct fake *f)
{
    double end = clock_mono_s() + 1.0;
    while (clock_mono_s() < end) {
        bool ended = false;
        app_work(a, 20, &ended);
        bool jobs = false;
        for (int k = 0; k < JOB_KINDS; k++)
            jobs = jobs || a->jobs[k];
        if (f->at == f->n && !jobs && clock_mono_s() > end - 0.7)
            break;
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
}

/* A file's text, NUL-terminated (the caller frees it). */
static char *read_file(const char *path)
{
    struct bytes b = test_read_file(path);
    char *s = xmalloc(b.len + 1);
    memcpy(s, b.data, b.len);
    s[b.len] = '\0';
    bytes_free(&b);
    return s;
}

static char screen[60][512];

static int shot(struct app *a)
{
    a->now_ms = UIT_NOW;
    app_draw(a);
    int y = 0;
    while (y < 60 && term_virtual_row(y, screen[y], sizeof screen[y], NULL))
        y++;
    return y;
}

static const char *line_with(int rows, const char *text)
{
    for (int y = 0; y < rows; y++)
        if (strstr(screen[y], text))
            return screen[y];
    for (int y = 0; y < rows; y++)
        print_error("%2d|%s\n", y, screen[y]);
    fail_msg("\"%s\" is not on the screen", text);
    abort(); /* not reached: fail_msg ends the test (and -O3 sees no NULL returned) */
}

static void test_arrivals_marked_and_counted(void **state)
{
    (void)state;
    struct app *a = uit_app(snapshot, 3);
    term_virtual(30, 120);
    app_push(a, &view_messages_ops, SIZE_MAX);
    struct fake f = {0};
    add(&f, "new-1", "TimeoutException: gateway timed out after 32 s");
    add(&f, "new-2", "TimeoutException: gateway timed out after 33 s");
    live_start(a, &fake_ops, &f, "orders.dlq");
    assert_true(live_active(a));
    pump(a, &f);
    assert_int_equal(store_count(a->store), 5);
    assert_int_equal(a->n_rows, 5);
    assert_int_equal(live_arrivals(a), 2);
    assert_false(live_is_new(a, uit_entry(a, "old-3")));
    assert_true(live_is_new(a, uit_entry(a, "new-1")));
    int rows = shot(a);
    assert_non_null(strstr(screen[0], "LIVE 2 new 2/min  5 messages"));
    assert_int_equal(line_with(rows, " new-1 ")[0], '+');
    assert_int_equal(line_with(rows, " new-2 ")[0], '+');
    assert_int_not_equal(line_with(rows, " old-1 ")[0], '+');
    /* The same cause as the snapshot's (numbers normalised away): no flag, no bell. */
    assert_null(strstr(a->message, "new cause"));
    live_stop(a, NULL);
    assert_true(f.closed);
    assert_false(live_active(a));
    /* What arrived stays marked after a stop; the title no longer says LIVE. */
    assert_true(live_is_new(a, uit_entry(a, "new-2")));
    shot(a);
    assert_null(strstr(screen[0], "LIVE"));
    uit_free(a);
    term_virtual(0, 0);
}

static void test_new_cause_flagged_once_with_the_bell(void **state)
{
    (void)state;
    struct app *a = uit_app(snapshot, 3);
    term_virtual(30, 120);
    app_push(a, &view_messages_ops, SIZE_MAX);
    struct fake f = {0};
    add(&f, "new-1", "PaymentDeclined: card \x1b[31mexpired\x1b[0m for order 17");
    add(&f, "new-2", "PaymentDeclined: card \x1b[31mexpired\x1b[0m for order 18");
    f.msgs[0].queue = "orders\x1b[2J.dlq"; /* a queue name is the broker's bytes */
    unsigned bells = term_bells();
    live_start(a, &fake_ops, &f, "orders.dlq");
    pump(a, &f);
    assert_int_equal(term_bells(), bells + 1); /* once: new-2 is the same cause */
    assert_non_null(strstr(a->message, "new cause: PaymentDeclined: card "));
    assert_non_null(strstr(a->message, "in orders"));
    assert_null(strchr(a->message, '\x1b')); /* sanitised */
    assert_true(a->message_is_error);
    /* --no-bell: flagged, silently. */
    a->no_bell = true;
    a->message[0] = '\0';
    add(&f, "new-3", "NullPointerException at Checkout.total");
    pump(a, &f);
    assert_int_equal(term_bells(), bells + 1);
    assert_non_null(strstr(a->message, "new cause: NullPointerException at Checkout.total"));
    /* A cause of the snapshot is not new, even hidden by a filter. */
    assert_true(app_set_filter(a, "error:~Inventory"));
    uit_keys_idle();
    a->message[0] = '\0';
    add(&f, "new-4", "InventoryException: sku 9 out of stock");
    pump(a, &f);
    assert_null(strstr(a->message, "new cause"));
    uit_free(a);
    term_virtual(0, 0);
}

static void test_stops(void **state)
{
    (void)state;
    struct app *a = uit_app(snapshot, 3);
    app_push(a, &view_messages_ops, SIZE_MAX);
    /* A feed that fails: stopped, said as an error, the feed closed. */
    struct fake f = {0};
    add(&f, "new-1", "boom");
    f.fail_at_end = true;
    live_start(a, &fake_ops, &f, "orders.dlq");
    pump(a, &f);
    assert_false(live_active(a));
    assert_true(f.closed);
    assert_int_equal(a->n_rows, 4); /* what arrived before is kept */
    assert_non_null(strstr(a->message, "live: stopped: the connection was closed by the broker"));
    assert_true(a->message_is_error);
    /* A new store (r: a fresh snapshot): following stops, the feed is closed. */
    struct fake g = {0};
    live_start(a, &fake_ops, &g, "orders.dlq");
    assert_true(live_active(a));
    assert_true(app_source_fresh_store(a));
    bool changed = false;
    assert_int_equal(live_step(a, clock_mono_s() + 0.01, &changed), JOB_DONE);
    assert_true(changed);
    assert_false(live_active(a));
    assert_true(g.closed);
    assert_false(live_is_new(a, 0));
    /* Freeing the app closes a feed still open. */
    struct fake h = {0};
    live_start(a, &fake_ops, &h, "orders.dlq");
    uit_free(a);
    assert_true(h.closed);
}

static void test_live_key_refused_without_a_broker(void **state)
{
    (void)state;
    struct app *a = uit_app(snapshot, 3);
    app_push(a, &view_messages_ops, SIZE_MAX);
    app_handle(a, ACT_LIVE);
    assert_false(live_active(a));
    assert_non_null(strstr(a->message, "live needs a broker"));
    app_switch(a, &view_queues_ops);
    app_handle(a, ACT_LIVE);
    assert_non_null(strstr(a->message, "from the messages, groups or timeline view"));
    uit_free(a);
}

static void test_groups_rate_column(void **state)
{
    (void)state;
    struct app *a = uit_app(snapshot, 3);
    term_virtual(30, 140);
    app_push(a, &view_groups_ops, SIZE_MAX);
    int rows = shot(a);
    assert_null(strstr(screen[1], "/MIN"));
    struct fake f = {0};
    /* Dead-lettered 1 and 2 minutes before the app's now, and one 10 minutes before. */
    add(&f, "new-1", "TimeoutException: gateway timed out after 40 s");
    f.msgs[0].first_seen_ms = UIT_NOW - 60000;
    add(&f, "new-2", "TimeoutException: gateway timed out after 41 s");
    f.msgs[1].first_seen_ms = UIT_NOW - 120000;
    add(&f, "new-3", "TimeoutException: gateway timed out after 42 s");
    f.msgs[2].first_seen_ms = UIT_NOW - 600000;
    live_start(a, &fake_ops, &f, "orders.dlq");
    pump(a, &f);
    rows = shot(a);
    assert_non_null(strstr(screen[1], "  COUNT    /MIN  FIRST     LAST      TYPE"));
    /* old-1, old-2 (30 s before), new-1, new-2: 4 in the last three minutes, 1.3 a minute. */
    const char *timeouts = line_with(rows, "TimeoutException");
    assert_true(strncmp(timeouts, "      5     1.3  ", 17) == 0);
    const char *inventory = line_with(rows, "InventoryException");
    assert_true(strncmp(inventory, "      1     0.3  ", 17) == 0);
    uit_free(a);
    term_virtual(0, 0);
}

static void test_export(void **state)
{
    (void)state;
    struct app *a = uit_app(snapshot, 3);
    char dir[] = "/tmp/dlqx-export-XXXXXX";
    assert_non_null(mkdtemp(dir));
    setenv("DLQX_JOURNAL", "/nonexistent/dlqx-journal.jsonl", 1);
    char path[256], msg[600];
    snprintf(path, sizeof path, "%s/incident.md", dir);
    assert_true(export_report(a, path, msg, sizeof msg));
    assert_non_null(strstr(msg, "report of 3 dead letters written to"));
    assert_non_null(strstr(msg, "(markdown)"));
    char *text = read_file(path);
    assert_non_null(strstr(text, "# Dead-letter incident report"));
    assert_non_null(strstr(text, "orders.dlq"));
    free(text);
    snprintf(path, sizeof path, "%s/incident.htm", dir);
    assert_true(export_report(a, path, msg, sizeof msg));
    assert_non_null(strstr(msg, "(html)"));
    unlink(path);
    snprintf(path, sizeof path, "%s/incident.HTML", dir);
    assert_true(export_report(a, path, msg, sizeof msg));
    assert_non_null(strstr(msg, "(html)"));
    text = read_file(path);
    assert_non_null(strstr(text, "<svg"));
    free(text);
    /* A FIFO (which would wait for a reader), a directory, standard output: refused. */
    snprintf(path, sizeof path, "%s/fifo", dir);
    assert_int_equal(mkfifo(path, 0600), 0);
    assert_false(export_report(a, path, msg, sizeof msg));
    assert_non_null(strstr(msg, "is not a regular file"));
    unlink(path);
    assert_false(export_report(a, dir, msg, sizeof msg));
    assert_false(export_report(a, "-", msg, sizeof msg));
    snprintf(path, sizeof path, "%s/incident.md", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/incident.HTML", dir);
    unlink(path);
    rmdir(dir);
    uit_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arrivals_marked_and_counted),
        cmocka_unit_test(test_new_cause_flagged_once_with_the_bell),
        cmocka_unit_test(test_stops),
        cmocka_unit_test(test_live_key_refused_without_a_broker),
        cmocka_unit_test(test_groups_rate_column),
        cmocka_unit_test(test_export),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
