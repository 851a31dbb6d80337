/*
 * report: the model of `dlqx report` (src/replay/report.h) — queues and causes with their
 * counts, first and last, rate now and still going at a fixed now; the journal's runs and
 * outcomes per source queue, and "no journal"; the renderings escape what the messages hold.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "store.h"

#define NOW 1767323045678LL /* 2026-01-02T03:04:05.678Z */
#define MIN 60000LL

struct dl {
    const char *queue, *type, *error, *id;
    int64_t at;
};

static void append(struct store *s, const struct dl *d)
{
    struct message m;
    message_init(&m);
    m.queue = bytes_from_cstr(d->queue);
    m.fetched_at_ms = NOW;
    m.headers_present = true;
    htable_add(m.headers, "x-acemq-id", hval_cstring(d->id));
    htable_add(m.headers, "x-acemq-type", hval_cstring(d->type));
    htable_add(m.headers, "x-acemq-first-seen", hval_int(HV_I64, d->at));
    htable_add(m.headers, "x-acemq-error", hval_cstring(d->error));
    struct error err;
    assert_int_equal(store_append(s, &m, NOW, &err), ST_OK);
    message_free(&m);
}

static const struct dl letters[] = {
    {"orders.dlq", "order.placed", "TimeoutException: gateway timed out after 30000 ms", "o-1",
     NOW - 30 * MIN},
    {"orders.dlq", "order.placed", "TimeoutException: gateway timed out after 30012 ms", "o-2",
     NOW - 2 * MIN},
    {"orders.dlq", "order.placed", "TimeoutException: gateway timed out after 29998 ms", "o-3",
     NOW - 1 * MIN},
    {"orders.dlq", "order.cancelled", "ArgumentError: <b>bad</b> | `x`", "o-4", NOW - 120 * MIN},
    {"payments.dlq", "payment.charge", "CryptoException: key revoked", "p-1", NOW - 90 * MIN},
};

static struct store *incident(void)
{
    struct store *s;
    struct error err;
    assert_int_equal(store_new(0, NULL, &s, &err), ST_OK);
    for (size_t k = 0; k < sizeof letters / sizeof *letters; k++)
        append(s, &letters[k]);
    return s;
}

static void test_queues_and_causes(void **state)
{
    struct store *s = incident();
    struct report r;
    struct error err;
    assert_int_equal(report_build(s, NOW, NULL, &r, &err), ST_OK);
    /* As of the snapshot's end (every fetch at NOW), or the clock when earlier. */
    assert_int_equal(report_as_of(s, NOW + 60 * MIN), NOW);
    assert_int_equal(report_as_of(s, NOW - MIN), NOW - MIN);
    store_free(s);
    assert_int_equal(r.total, 5);
    assert_int_equal(r.n_queues, 2);
    const struct report_queue *q = &r.queues[0];
    assert_string_equal(q->name, "orders.dlq");
    assert_int_equal(q->count, 4);
    assert_int_equal(q->first_ms, NOW - 120 * MIN);
    assert_int_equal(q->last_ms, NOW - 1 * MIN);
    assert_true(q->still_going);
    assert_int_equal(q->n_causes, 2);
    const struct report_cause *c = &q->causes[0];
    assert_int_equal(c->count, 3);
    assert_string_equal(c->type, "order.placed");
    assert_string_equal(c->dialect, "AceMQ");
    assert_string_equal(c->sample_id, "o-3"); /* the latest */
    assert_string_equal(c->error, "TimeoutException: gateway timed out after 29998 ms");
    assert_int_equal(c->first_ms, NOW - 30 * MIN);
    assert_int_equal(c->last_ms, NOW - MIN);
    assert_true(c->still_going);
    /* Two in the window 03:02:00 .. now (2 min 5.678 s): a little under one a minute. */
    assert_true(c->rate_per_min > 0.9 && c->rate_per_min < 1.0);
    const struct report_cause *old = &q->causes[1];
    assert_int_equal(old->count, 1);
    assert_false(old->still_going);
    assert_true(old->rate_per_min == 0);
    assert_string_equal(r.queues[1].name, "payments.dlq");
    assert_false(r.queues[1].still_going);
    assert_int_equal(r.timeline.total, 5);
    assert_null(r.journal_path);
    report_free(&r);
}

static void test_journal_counts(void **state)
{
    char path[] = "/tmp/dlqx-report-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    const char *at = "\"at\":\"2026-01-02T04:00:00.000Z\"";
    fprintf(f,
            "{\"v\":1,\"kind\":\"run\",%s,\"run\":\"r1\",\"op\":\"replay\","
            "\"source\":\"orders.dlq\",\"dry_run\":false}\n",
            at);
    for (int k = 1; k <= 3; k++)
        fprintf(f,
                "{\"v\":1,\"kind\":\"intent\",%s,\"run\":\"r1\",\"seq\":%d,\"op\":\"replay\","
                "\"source\":\"orders.dlq\"}\n",
                at, k);
    fprintf(f, "{\"v\":1,\"kind\":\"outcome\",%s,\"run\":\"r1\",\"seq\":1,\"result\":\"done\"}\n",
            at);
    fprintf(f, "{\"v\":1,\"kind\":\"outcome\",%s,\"run\":\"r1\",\"seq\":2,\"result\":\"kept\"}\n",
            at);
    fclose(f);
    struct store *s = incident();
    struct report r;
    struct error err;
    assert_int_equal(report_build(s, NOW, path, &r, &err), ST_OK);
    assert_true(r.journal_found);
    assert_int_equal(r.n_replayed, 1);
    assert_string_equal(r.replayed[0].source, "orders.dlq");
    assert_int_equal(r.replayed[0].runs, 1);
    assert_int_equal(r.replayed[0].ops, 3);
    assert_int_equal(r.replayed[0].done, 1);
    assert_int_equal(r.replayed[0].kept, 1);
    assert_int_equal(r.replayed[0].unknown, 1); /* no outcome yet */
    report_free(&r);
    unlink(path);
    /* Missing: no journal, not an error. */
    assert_int_equal(report_build(s, NOW, path, &r, &err), ST_OK);
    assert_false(r.journal_found);
    assert_int_equal(r.n_replayed, 0);
    struct strbuf md;
    sb_init(&md);
    report_markdown(&r, &md);
    assert_non_null(strstr(md.buf, "no journal"));
    report_free(&r);
    sb_free(&md);
    store_free(s);
}

/* An arrival seconds before now is going, whatever came long before it; a long error is cut. */
static void test_just_now_and_long(void **state)
{
    struct store *s;
    struct error err;
    assert_int_equal(store_new(0, NULL, &s, &err), ST_OK);
    char longer[1200];
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    const struct dl d[] = {{"q", "t", longer, "old", NOW - 600 * MIN},
                           {"q", "t", longer, "new", NOW - 4000}};
    append(s, &d[0]);
    append(s, &d[1]);
    struct report r;
    assert_int_equal(report_build(s, NOW, NULL, &r, &err), ST_OK);
    store_free(s);
    assert_int_equal(r.queues[0].n_causes, 1);
    assert_true(r.queues[0].causes[0].still_going);
    assert_true(r.queues[0].causes[0].rate_per_min >= 0.3);
    struct strbuf md;
    sb_init(&md);
    report_markdown(&r, &md);
    report_free(&r);
    assert_non_null(strstr(md.buf, "xxx…"));
    assert_null(strstr(md.buf, longer + sizeof longer - 1 - REPORT_CELL_MAX));
    sb_free(&md);
}

static void test_renderings_escape(void **state)
{
    struct store *s = incident();
    struct report r;
    struct error err;
    assert_int_equal(report_build(s, NOW, NULL, &r, &err), ST_OK);
    store_free(s);
    struct strbuf md, html;
    sb_init(&md);
    sb_init(&html);
    report_markdown(&r, &md);
    report_html(&r, &html);
    report_free(&r);
    assert_null(strstr(md.buf, "<b>"));
    assert_non_null(strstr(md.buf, "&lt;b&gt;bad&lt;/b&gt; \\| \\`x\\`"));
    assert_null(strstr(html.buf, "<b>"));
    assert_non_null(strstr(html.buf, "&lt;b&gt;bad&lt;/b&gt; | `x`"));
    assert_non_null(strstr(html.buf, "<svg"));
    assert_null(strstr(html.buf, "<script"));
    assert_non_null(strstr(md.buf, "still going"));
    sb_free(&md);
    sb_free(&html);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queues_and_causes),
        cmocka_unit_test(test_journal_counts),
        cmocka_unit_test(test_just_now_and_long),
        cmocka_unit_test(test_renderings_escape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
