/*
 * test_groups: error fingerprints (what is normalised away and what must stay), exceptions,
 * failure groups built from a store (membership, counts, first and last seen, queues, order,
 * broker-made deaths by reason and queue), a group's filter, the timeline (bucket choice,
 * counts, peak, trend, rendering), hostile errors, and a timed build over a million entries.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "filter.h"
#include "groups.h"
#include "store.h"

#define T0 1767323045678LL /* 2026-01-02T03:04:05.678Z */
#define MIN 60000LL
#define HOUR 3600000LL

static char *norm(const char *error, uint64_t *hash)
{
    struct strbuf sb;
    sb_init(&sb);
    uint64_t h = error_fingerprint(error, strlen(error), &sb);
    if (hash)
        *hash = h;
    if (!sb.buf)
        sb_adds(&sb, "");
    return sb_detach(&sb, NULL);
}

static void assert_norm(const char *error, const char *want)
{
    char *got = norm(error, NULL);
    if (strcmp(got, want) != 0)
        print_error("normalising [%s]\n  got  [%s]\n  want [%s]\n", error, got, want);
    assert_string_equal(got, want);
    free(got);
}

static uint64_t fp(const char *error)
{
    return error_fingerprint(error, strlen(error), NULL);
}

static void test_fingerprint_normalises(void **state)
{
    assert_norm("exhausted 5 attempts: TimeoutException: gateway timed out after 30012 ms",
                "exhausted <n> attempts: TimeoutException: gateway timed out after <n> ms");
    assert_norm("gave up after 5 attempts: Payments::Declined: order A-10400: upstream declined",
                "gave up after <n> attempts: Payments::Declined: order A-<n>: upstream declined");
    assert_norm("took 30012ms, then 1.5s, then 0x1F3A", "took <n>ms, then <n>s, then <n>");
    assert_norm("id 6f1c2a9e-1b2c-4d3e-8f90-0A1B2C3D4E5F failed", "id <id> failed");
    assert_norm("hash 3fa2b9c1d0e8 and deadbeefdeadbeef", "hash <id> and <id>");
    assert_norm("card tok_1Nq2xY3Z declined, tok_visa kept",
                "card tok_<id> declined, tok_visa kept");
    assert_norm("order ORD12345 and ORD-77 and user_42", "order ORD<n> and ORD-<n> and user_<n>");
    assert_norm("Duplicate entry 'A-1040' for key \"PRIMARY\" in `orders`",
                "Duplicate entry <str> for key <str> in <str>");
    assert_norm("can't parse the user's input", "can't parse the user's input");
    assert_norm("connect ECONNREFUSED 10.0.0.12:5672 and [::1]:80 and fe80::1ff:fe23:4567:890a",
                "connect ECONNREFUSED <ip>:<n> and [<ip>]:<n> and <ip>");
    assert_norm("mail to bob.smith+x@example.co.uk.", "mail to <email>.");
    assert_norm(
        "GET https://api.example.com:8443/v1/orders/12345?token=abc&page=2#top failed",
        "GET https://api.example.com:<n>/v1/orders/<n>?token=<str>&page=<str>#<str> failed");
    assert_norm("at 2026-01-02T03:04:05.123Z, 2026-01-02 03:04:05+01:00, 2026-01-02 and 03:04:05",
                "at <time>, <time>, <time> and <time>");
    assert_norm("#<Order:0x000055d5c1a2b3c8 @id=5 @state=\"new\"> is invalid",
                "#<Order:<n> @id=<n> @state=<str>> is invalid");
    assert_norm("Net::ReadTimeout with #<TCPSocket:(closed)>",
                "Net::ReadTimeout with #<TCPSocket:(closed)>");
    assert_norm("App\\Exceptions\\GatewayTimeout: upstream",
                "App\\Exceptions\\GatewayTimeout: upstream");
    /* Words with digits that are names, not values, stay. */
    assert_norm("OAuth2Error from sha256 check in v1 (utf8, x509, Base64Decoder, PT6H)",
                "OAuth2Error from sha256 check in v1 (utf8, x509, Base64Decoder, PT6H)");
    assert_norm("  many   spaces\tand\r\ncontrols\x01here  ", "many spaces and controls here");
    assert_norm("", "");
    /* The broker's errors are reason and queue, kept as they are (digits included). */
    assert_norm("dead-lettered by the broker: rejected from orders-7",
                "dead-lettered by the broker: rejected from orders-7");
    /* The hash is the same on every host and run: fp=… can be written down. */
    assert_int_equal(fp(""), 0x9edd53f3310a7fc5ULL);
    assert_int_equal(
        fp("exhausted 5 attempts: TimeoutException: gateway timed out after 30012 ms"),
        fp("exhausted <n> attempts: TimeoutException: gateway timed out after <n> ms"));
}

static void test_fingerprint_groups_and_splits(void **state)
{
    /* Together: the attempt count and the timing differ. */
    assert_int_equal(
        fp("exhausted 5 attempts: TimeoutException: gateway timed out after 30012 ms"),
        fp("exhausted 3 attempts: TimeoutException: gateway timed out after 29998 ms"));
    assert_int_equal(fp("gave up after 5 attempts: Payments::Declined: order A-10400: upstream "
                        "processor said no"),
                     fp("gave up after 5 attempts: Payments::Declined: order A-10417: upstream "
                        "processor said no"));
    assert_int_equal(fp("sku 4411 out of stock"), fp("sku 98 out of stock"));
    assert_int_equal(fp("key 'abc' missing"), fp("key \"xyz-1\" missing"));
    /* Apart: another exception, another message, another broker reason or queue. */
    assert_int_not_equal(fp("exhausted 5 attempts: TimeoutException: gateway timed out"),
                         fp("exhausted 5 attempts: IOException: gateway timed out"));
    assert_int_not_equal(fp("gave up after 5 attempts: Net::ReadTimeout: x"),
                         fp("gave up after 5 attempts: Net::OpenTimeout: x"));
    assert_int_not_equal(fp("TimeoutException: gateway timed out"),
                         fp("TimeoutException: gateway refused"));
    assert_int_not_equal(fp("dead-lettered by the broker: rejected from orders"),
                         fp("dead-lettered by the broker: expired from orders"));
    assert_int_not_equal(fp("dead-lettered by the broker: rejected from orders-1"),
                         fp("dead-lettered by the broker: rejected from orders-2"));
    assert_int_not_equal(fp("OAuth2Error: bad"), fp("OAuth3Error: bad"));
}

static void assert_exception(const char *error, const char *want)
{
    size_t off = 99, n = error_exception(error, strlen(error), &off);
    char got[256];
    snprintf(got, sizeof got, "%.*s", (int)n, error + (n ? off : 0));
    if (strcmp(got, want) != 0)
        print_error("exception of [%s]: got [%s] want [%s]\n", error, got, want);
    assert_string_equal(got, want);
}

static void test_exceptions(void **state)
{
    assert_exception("exhausted 5 attempts: TimeoutException: gateway timed out",
                     "TimeoutException");
    assert_exception("gave up after 5 attempts: Net::ReadTimeout: Net::ReadTimeout with #<x>",
                     "Net::ReadTimeout");
    assert_exception("gave up after 3 attempts: Declined: card",
                     "Declined"); /* after AceMQ's words */
    assert_exception("retrying cannot help: ArgumentError: unknown carrier", "ArgumentError");
    assert_exception("could not be decoded: Avro::SchemaParseError: schema 17",
                     "Avro::SchemaParseError");
    assert_exception("App\\Exceptions\\GatewayTimeout: Payment gateway timeout",
                     "App\\Exceptions\\GatewayTimeout"); /* BabelQueue's exception: error */
    assert_exception("java.net.SocketTimeoutException: Read timed out",
                     "java.net.SocketTimeoutException");
    assert_exception("RuntimeError", "RuntimeError");
    assert_exception("dead-lettered by the broker: delivery_limit from orders", "delivery_limit");
    assert_exception("dead-lettered by the broker: expired", "expired");
    assert_exception("the handler reported an unprocessable message: audit log closed", "");
    assert_exception("Payment gateway timeout", "");
    assert_exception("timeout: connection refused", "");
    assert_exception("config.yaml: not found", "");
    assert_exception("HTTP: 500", "");
    assert_exception("", "");
}

static void test_fingerprint_hostile(void **state)
{
    struct strbuf sb;
    sb_init(&sb);
    /* Invalid UTF-8 becomes U+FFFD; C1 controls are spaces; the result is valid UTF-8. */
    const char bad[] = "caf\xc3\xa9 \xff\xfe broken \xe2\x82 \xc2\x85next \xed\xa0\x80 \"\\\"\" '";
    error_fingerprint(bad, sizeof bad - 1, &sb);
    assert_true(utf8_valid(sb.buf, sb.len));
    assert_non_null(strstr(sb.buf, "café"));
    assert_non_null(strstr(sb.buf, "\xef\xbf\xbd"));
    /* NULs, and 64 KB of everything. */
    error_fingerprint("a\0b\0c", 5, &sb);
    assert_string_equal(sb.buf, "a b c");
    size_t n = 70000;
    char *big = xmalloc(n);
    unsigned seed = 7;
    for (int round = 0; round < 40; round++) {
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            static const char mix[] = "0123456789abcdefXYZ:.-_@/'\"`\\ #<>[]()\x01\x80\xc3\xff";
            big[i] = round % 4 == 0   ? '1'
                     : round % 4 == 1 ? '\''
                                      : mix[(seed >> 16) % (sizeof mix - 1)];
        }
        uint64_t h = error_fingerprint(big, n, &sb);
        assert_true(sb.len <= FINGERPRINT_MAX);
        assert_true(utf8_valid(sb.buf ? sb.buf : "", sb.len));
        assert_int_equal(h, error_fingerprint(big, n, NULL));
        size_t off, k = error_exception(big, n, &off);
        assert_true(off + k <= n);
    }
    free(big);
    /* A long error is cut, not grown: 64 KB of digits is one number. */
    char *digits = xmalloc(65536);
    memset(digits, '7', 65536);
    error_fingerprint(digits, 65536, &sb);
    assert_string_equal(sb.buf, "<n>");
    free(digits);
    error_fingerprint(NULL, 5, &sb); /* no text, whatever the length says */
    assert_int_equal(sb.len, 0);
    sb_free(&sb);
}

/* ---- a store of dead letters ---- */

struct dl {
    const char *type, *queue, *error; /* error NULL: a broker death (reason, from) */
    const char *reason, *from;
    int64_t first_seen;
};

static void append(struct store *s, const struct dl *d, size_t i)
{
    struct message m;
    message_init(&m);
    m.queue = bytes_from_cstr(d->queue);
    m.fetched_at_ms = T0 + (int64_t)i;
    m.headers_present = true;
    char id[64];
    snprintf(id, sizeof id, "m-%zu", i);
    if (d->error) {
        htable_add(m.headers, "x-acemq-id", hval_cstring(id));
        htable_add(m.headers, "x-acemq-type", hval_cstring(d->type));
        htable_add(m.headers, "x-acemq-first-seen", hval_int(HV_I64, d->first_seen));
        htable_add(m.headers, "x-acemq-error", hval_cstring(d->error));
    } else {
        props_set_string(&m.props, PROP_message_id, id, strlen(id));
        props_set_string(&m.props, PROP_type, d->type, strlen(d->type));
        m.props.present |= 1u << PROP_timestamp;
        m.props.timestamp = (uint64_t)(d->first_seen / 1000);
        struct hval death = hval_table();
        htable_add(death.v.tab, "count", hval_int(HV_I64, 1));
        htable_add(death.v.tab, "queue", hval_cstring(d->from));
        htable_add(death.v.tab, "reason", hval_cstring(d->reason));
        struct hval arr = hval_array();
        harray_add(&arr.v.arr, death);
        htable_add(m.headers, "x-death", arr);
    }
    struct error err;
    assert_int_equal(store_append(s, &m, T0, &err), ST_OK);
    message_free(&m);
}

static const struct dl incident[] = {
    /* 0-4: one bug, five messages, two queues */
    {"payment.charge", "payments.dlq",
     "exhausted 5 attempts: TimeoutException: gateway timed out after 30012 ms", NULL, NULL,
     T0 - 50 * MIN},
    {"payment.charge", "payments.dlq",
     "exhausted 3 attempts: TimeoutException: gateway timed out after 29998 ms", NULL, NULL,
     T0 - 40 * MIN},
    {"payment.charge", "payments.gateway.dlq",
     "exhausted 5 attempts: TimeoutException: gateway timed out after 30000 ms", NULL, NULL,
     T0 - 30 * MIN},
    {"payment.charge", "payments.dlq",
     "exhausted 4 attempts: TimeoutException: gateway timed out after 31000 ms", NULL, NULL,
     T0 - 20 * MIN},
    {"payment.charge", "payments.gateway.dlq",
     "exhausted 5 attempts: TimeoutException: gateway timed out after 30500 ms", NULL, NULL,
     T0 - 45 * MIN},
    /* 5-7: declined orders, different order ids */
    {"order.placed", "orders.dlq",
     "gave up after 5 attempts: Payments::Declined: order A-10400: upstream said no", NULL, NULL,
     T0 - 10 * MIN},
    {"order.placed", "orders.dlq",
     "gave up after 5 attempts: Payments::Declined: order A-10417: upstream said no", NULL, NULL,
     T0 - 9 * MIN},
    {"order.placed", "orders.dlq",
     "gave up after 2 attempts: Payments::Declined: order A-2: upstream said no", NULL, NULL,
     T0 - 8 * MIN},
    /* 8: the same timeout text on another type: its own group */
    {"refund.issue", "payments.dlq",
     "exhausted 5 attempts: TimeoutException: gateway timed out after 30001 ms", NULL, NULL,
     T0 - 5 * MIN},
    /* 9: another exception with the same words: its own group */
    {"payment.charge", "payments.dlq",
     "exhausted 5 attempts: IOException: gateway timed out after 30012 ms", NULL, NULL,
     T0 - 5 * MIN},
    /* 10-13: the broker: rejected from orders (x2), expired from orders, rejected from emails */
    {"order.placed", "orders.dlq", NULL, "rejected", "orders", T0 - 60 * MIN},
    {"order.placed", "orders.dlq", NULL, "rejected", "orders", T0 - 61 * MIN},
    {"order.placed", "orders.dlq", NULL, "expired", "orders", T0 - 62 * MIN},
    {"order.placed", "orders.dlq", NULL, "rejected", "emails", T0 - 63 * MIN},
};
#define N_INCIDENT (sizeof incident / sizeof *incident)

static struct store *incident_store(void)
{
    struct store *s = NULL;
    struct error err;
    assert_int_equal(store_new(0, NULL, &s, &err), ST_OK);
    for (size_t i = 0; i < N_INCIDENT; i++)
        append(s, &incident[i], i);
    return s;
}

static char *members_str(const struct group *g)
{
    struct strbuf sb;
    sb_init(&sb);
    for (uint32_t k = 0; k < g->count; k++)
        sb_addf(&sb, "%s%u", k ? " " : "", g->members[k]);
    return sb_detach(&sb, NULL);
}

static void assert_members(const struct group *g, const char *want)
{
    char *got = members_str(g);
    if (strcmp(got, want) != 0)
        print_error("group [%s]: members [%s], want [%s]\n", g->key, got, want);
    assert_string_equal(got, want);
    free(got);
}

static void test_groups_from_store(void **state)
{
    struct store *s = incident_store();
    struct groups *g = groups_build(s, NULL);
    assert_int_equal(groups_total(g), N_INCIDENT);
    assert_int_equal(groups_count(g), 7);
    char buf[STORE_TEXT_MAX];

    /* By count, then the latest last seen. */
    const struct group *a = groups_at(g, 0);
    assert_non_null(a);
    assert_int_equal(a->count, 5);
    assert_string_equal(a->key,
                        "exhausted <n> attempts: TimeoutException: gateway timed out after <n> ms");
    assert_string_equal(a->exception, "TimeoutException");
    assert_string_equal(a->type, "payment.charge");
    assert_false(a->from_broker);
    assert_members(a, "0 1 2 3 4");
    assert_int_equal(a->first_ms, T0 - 50 * MIN);
    assert_int_equal(a->last_ms, T0 - 20 * MIN);
    assert_int_equal(a->example, 3); /* the latest */
    assert_int_equal(a->first_fetched_ms, T0);
    assert_int_equal(a->last_fetched_ms, T0 + 4);
    assert_int_equal(a->fingerprint,
                     fp("exhausted 1 attempts: TimeoutException: gateway timed out after 1 ms"));
    assert_int_equal(a->n_queues, 2);
    store_text(s, a->queues[0].queue, buf);
    assert_string_equal(buf, "payments.dlq");
    assert_int_equal(a->queues[0].count, 3);
    store_text(s, a->queues[1].queue, buf);
    assert_string_equal(buf, "payments.gateway.dlq");
    assert_int_equal(a->queues[1].count, 2);

    const struct group *b = groups_at(g, 1);
    assert_int_equal(b->count, 3);
    assert_string_equal(b->exception, "Payments::Declined");
    assert_string_equal(b->type, "order.placed");
    assert_members(b, "5 6 7");

    const struct group *c = groups_at(g, 2); /* broker: rejected from orders */
    assert_int_equal(c->count, 2);
    assert_true(c->from_broker);
    assert_string_equal(c->key, "dead-lettered by the broker: rejected from orders");
    assert_string_equal(c->exception, "rejected");
    assert_members(c, "10 11");
    assert_int_equal(c->first_ms, (T0 - 61 * MIN) / 1000 * 1000); /* timestamps are seconds */

    /* Four groups of one, by last seen (latest first), then by key. */
    const char *want_keys[] = {
        "exhausted <n> attempts: IOException: gateway timed out after <n> ms",
        "exhausted <n> attempts: TimeoutException: gateway timed out after <n> ms",
        "dead-lettered by the broker: expired from orders",
        "dead-lettered by the broker: rejected from emails",
    };
    for (size_t k = 3; k < 7; k++) {
        const struct group *x = groups_at(g, k);
        assert_int_equal(x->count, 1);
        assert_string_equal(x->key, want_keys[k - 3]);
    }
    assert_string_equal(groups_at(g, 4)->type, "refund.issue");
    assert_string_equal(groups_at(g, 3)->exception, "IOException");
    assert_null(groups_at(g, 7));

    /* Every entry knows its group. */
    for (size_t k = 0; k < groups_count(g); k++) {
        const struct group *x = groups_at(g, k);
        for (uint32_t j = 0; j < x->count; j++)
            assert_int_equal(groups_of_entry(g, x->members[j]), k);
    }
    assert_int_equal(groups_of_entry(g, 999), SIZE_MAX);

    /* A group's filter selects exactly its members. */
    for (size_t k = 0; k < groups_count(g); k++) {
        const struct group *x = groups_at(g, k);
        struct strbuf expr;
        sb_init(&expr);
        group_filter_expr(x, &expr);
        struct filter *f = NULL;
        struct error err;
        assert_int_equal(filter_compile(expr.buf, &f, &err), ST_OK);
        uint32_t j = 0;
        for (size_t i = 0; i < store_count(s); i++) {
            bool in = j < x->count && x->members[j] == i;
            j += in;
            if (filter_match_entry(f, s, i, T0) != in)
                fail_msg("%s: entry %zu", expr.buf, i);
        }
        filter_free(f);
        sb_free(&expr);
    }
    groups_free(g);

    /* Grouping a subset (a filter's result, in any order), with another clock. */
    uint32_t pick[] = {13, 6, 5, 0, 6};
    struct groups_options opt = {.time = entry_time_fetched, .indices = pick, .n_indices = 5};
    g = groups_build(s, &opt);
    assert_int_equal(groups_total(g), 4); /* 6 is listed twice, grouped once */
    assert_int_equal(groups_count(g), 3);
    assert_members(groups_at(g, 0), "5 6");
    assert_int_equal(groups_at(g, 0)->first_ms, T0 + 5);
    assert_int_equal(groups_at(g, 0)->last_ms, T0 + 6);
    assert_int_equal(groups_of_entry(g, 1), SIZE_MAX);
    groups_free(g);

    /* An empty store. */
    struct store *e = NULL;
    struct error err;
    assert_int_equal(store_new(0, NULL, &e, &err), ST_OK);
    g = groups_build(e, NULL);
    assert_int_equal(groups_count(g), 0);
    assert_null(groups_at(g, 0));
    groups_free(g);
    groups_free(NULL);
    store_free(e);
    store_free(s);
}

/* Two builds of the same entries agree on everything a view shows. */
static void assert_same_groups(const struct groups *x, const struct groups *y, size_t entries)
{
    assert_int_equal(groups_count(x), groups_count(y));
    assert_int_equal(groups_total(x), groups_total(y));
    for (size_t k = 0; k < groups_count(x); k++) {
        const struct group *a = groups_at(x, k), *b = groups_at(y, k);
        assert_string_equal(a->key, b->key);
        assert_string_equal(a->type, b->type);
        assert_string_equal(a->exception, b->exception);
        assert_int_equal(a->fingerprint, b->fingerprint);
        assert_int_equal(a->count, b->count);
        assert_int_equal(a->first_ms, b->first_ms);
        assert_int_equal(a->last_ms, b->last_ms);
        assert_int_equal(a->example, b->example);
        assert_int_equal(a->n_queues, b->n_queues);
        for (size_t q = 0; q < a->n_queues; q++) {
            assert_int_equal(a->queues[q].queue, b->queues[q].queue);
            assert_int_equal(a->queues[q].count, b->queues[q].count);
        }
        for (uint32_t j = 0; j < a->count; j++)
            assert_int_equal(a->members[j], b->members[j]);
    }
    for (size_t i = 0; i < entries; i++)
        assert_int_equal(groups_of_entry(x, i), groups_of_entry(y, i));
}

/* The stepped build (the UI's, a slice between keys) gives what the one-shot build gives,
 * whatever the slices; entries added after it started are left out; it can be abandoned. */
static void test_groups_in_steps(void **state)
{
    struct store *s = incident_store();
    size_t n = store_count(s);
    struct groups *whole = groups_build(s, NULL);
    for (size_t slice = 1; slice <= n + 1; slice += 3) {
        struct groups_builder *b = groups_builder_new(s, NULL);
        assert_int_equal(groups_builder_total(b), n);
        size_t left = n, steps = 0;
        while (left) {
            size_t before = groups_builder_done(b);
            left = groups_builder_step(b, slice);
            assert_int_equal(groups_builder_done(b),
                             before + (slice < n - before ? slice : n - before));
            assert_int_equal(left, n - groups_builder_done(b));
            steps++;
        }
        assert_int_equal(steps, (n + slice - 1) / slice);
        struct groups *g = groups_builder_finish(b);
        assert_same_groups(g, whole, n);
        groups_free(g);
    }
    groups_free(whole);

    /* A subset, in any order, with repeats; finish without a step does every step. */
    uint32_t pick[] = {13, 6, 5, 0, 6, 2};
    struct groups_options opt = {.time = entry_time_fetched, .indices = pick, .n_indices = 6};
    whole = groups_build(s, &opt);
    struct groups_builder *b = groups_builder_new(s, &opt);
    assert_int_equal(groups_builder_step(b, 4), 2);
    struct groups *g = groups_builder_finish(b);
    assert_same_groups(g, whole, n);
    groups_free(g);
    b = groups_builder_new(s, &opt);
    g = groups_builder_finish(b);
    assert_same_groups(g, whole, n);
    groups_free(g);
    groups_free(whole);

    /* Abandoned, at the start and half way. */
    groups_builder_free(groups_builder_new(s, NULL));
    b = groups_builder_new(s, NULL);
    groups_builder_step(b, n / 2);
    groups_builder_free(b);
    groups_builder_free(NULL);

    /* The store grows while a build is under way (a file still being read): what was there
     * when it started is grouped, the rest is not, and an index past it is skipped. */
    b = groups_builder_new(s, NULL);
    groups_builder_step(b, 2);
    static const struct dl late_one = {"order.placed", "late.dlq", "a late error", NULL, NULL, T0};
    append(s, &late_one, n);
    g = groups_builder_finish(b);
    assert_int_equal(groups_total(g), n);
    assert_int_equal(groups_of_entry(g, n), SIZE_MAX);
    groups_free(g);
    uint32_t late[] = {0, (uint32_t)n};
    struct groups_options lo = {.indices = late, .n_indices = 2};
    b = groups_builder_new(s, &lo);
    g = groups_builder_finish(b);
    assert_int_equal(groups_total(g), 2); /* entry n existed when this build started */
    groups_free(g);
    store_free(s);
}

/* ---- timeline ---- */

static struct store *times_store(const int64_t *ago_min, size_t n)
{
    struct store *s = NULL;
    struct error err;
    assert_int_equal(store_new(0, NULL, &s, &err), ST_OK);
    for (size_t i = 0; i < n; i++) {
        struct dl d = {"t", "q.dlq", "boom", NULL, NULL, T0 - ago_min[i] * MIN};
        append(s, &d, i);
    }
    return s;
}

static char *render(const struct timeline *t, size_t width, unsigned flags)
{
    struct strbuf sb;
    sb_init(&sb);
    timeline_render(t, width, flags, &sb);
    return sb_detach(&sb, NULL);
}

static void assert_render(const struct timeline *t, size_t width, unsigned flags, const char *want)
{
    char *got = render(t, width, flags);
    if (strcmp(got, want) != 0)
        print_error("--- got ---\n%s--- want ---\n%s", got, want);
    assert_string_equal(got, want);
    free(got);
}

/* timeline_begin and timeline_step in slices of 1, 3 and 7 looks make what timeline_build
 * makes; the looks left count down to 0 (two a entry). */
static void test_timeline_in_steps(void **state)
{
    (void)state;
    static const int64_t burst[] = {40, 31, 30, 30, 0, 30, 29, 29, 28, 20};
    struct store *s = times_store(burst, 10);
    struct timeline_options opt = {.now_ms = T0};
    const uint32_t some[] = {9, 2, 3, 40, 7};
    for (int with = 0; with < 2; with++) {
        if (with) {
            opt.indices = some;
            opt.n_indices = 5;
        }
        struct timeline want;
        timeline_build(s, &opt, &want);
        static const size_t slices[] = {1, 3, 7};
        for (size_t k = 0; k < 3; k++) {
            struct timeline_builder b;
            struct timeline got;
            timeline_begin(&b, s, &opt, &got);
            size_t left = 2 * b.count, now;
            while ((now = timeline_step(&b, slices[k])) != 0) {
                assert_true(now < left);
                left = now;
            }
            assert_int_equal(got.n, want.n);
            assert_int_equal(got.bucket_ms, want.bucket_ms);
            assert_int_equal(got.start_ms, want.start_ms);
            assert_int_equal(got.total, want.total);
            assert_int_equal(got.undated, want.undated);
            assert_int_equal(got.peak, want.peak);
            assert_int_equal(got.trend, want.trend);
            for (size_t i = 0; i < want.n; i++)
                assert_int_equal(got.counts[i], want.counts[i]);
            timeline_free(&got);
        }
        timeline_free(&want);
    }
    store_free(s);
}

static void test_timeline(void **state)
{
    /* 40 minutes: per-minute buckets; a burst 30 minutes ago, quiet since. */
    static const int64_t burst[] = {40, 31, 30, 30, 30, 30, 29, 29, 28, 20};
    struct store *s = times_store(burst, 10);
    struct timeline t;
    struct timeline_options opt = {.now_ms = T0};
    timeline_build(s, &opt, &t);
    assert_int_equal(t.bucket_ms, MIN);
    assert_int_equal(t.start_ms, (T0 - 40 * MIN) / MIN * MIN);
    assert_int_equal(t.n, 41);
    assert_int_equal(t.total, 10);
    assert_int_equal(t.undated, 0);
    assert_int_equal(t.first, 0);
    assert_int_equal(t.last, 20);
    assert_int_equal(t.peak, 10);
    assert_int_equal(t.counts[10], 4);
    assert_int_equal(t.counts[9], 1);
    assert_int_equal(t.counts[11], 2);
    assert_false(t.still_going);
    assert_int_equal(t.trend, TREND_QUIET);
    assert_render(&t, 80, TIMELINE_ASCII,
                  ":        :@=:       :                    \n"
                  "2026-01-02 02:24 .. 2026-01-02 03:05 UTC, 1m a column, 10 total, peak 4 at "
                  "2026-01-02 02:34, stopped\n");
    timeline_free(&t);

    /* The same, squeezed into 20 columns: three buckets a column (two would take 21). */
    timeline_build(s, &opt, &t);
    assert_render(&t, 20, 0,
                  "▂  █▂ ▂       \n"
                  "2026-01-02 02:24 .. 2026-01-02 03:05 UTC, 3m a column, 10 total, peak 4 at "
                  "2026-01-02 02:34, stopped\n");
    timeline_free(&t);
    store_free(s);

    /* Ten hours: the per-minute and five-minute ladders are too fine for 60 buckets. */
    static const int64_t spread[] = {600, 400, 300, 200, 100, 10, 5, 3, 2, 1, 1, 0};
    s = times_store(spread, 12);
    timeline_build(s, &opt, &t);
    assert_int_equal(t.bucket_ms, 15 * MIN);
    assert_true(t.n <= 60);
    assert_int_equal(t.total, 12);
    assert_true(t.still_going);
    assert_int_equal(t.trend, TREND_RISING); /* 7 in the last 20 minutes of 10 hours */
    assert_int_equal(t.counts[t.n - 1], 5);  /* 03:00 to 03:15: 4, 3, 2, 1, 1 minutes ago */
    assert_int_equal(t.counts[t.n - 2], 2);
    timeline_free(&t);
    /* With an hour a bucket, chosen by the caller. */
    opt.bucket_ms = HOUR;
    timeline_build(s, &opt, &t);
    assert_int_equal(t.n, 11);
    assert_int_equal(t.start_ms % HOUR, 0);
    timeline_free(&t);
    store_free(s);

    /* Steady, then falling. */
    static const int64_t steady[] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
    s = times_store(steady, 10);
    opt.bucket_ms = 0;
    opt.now_ms = T0 + 30000; /* half of the last minute has gone */
    timeline_build(s, &opt, &t);
    assert_int_equal(t.trend, TREND_STEADY);
    timeline_free(&t);
    store_free(s);
    static const int64_t falling[] = {10, 10, 10, 10, 10, 10, 9, 9, 9, 9, 9, 2};
    s = times_store(falling, 12);
    opt.now_ms = T0;
    timeline_build(s, &opt, &t);
    assert_int_equal(t.trend, TREND_FALLING);
    timeline_free(&t);
    store_free(s);

    /* Nothing dated, nothing at all. */
    s = times_store(NULL, 0);
    timeline_build(s, NULL, &t);
    assert_int_equal(t.n, 0);
    assert_int_equal(t.trend, TREND_NONE);
    assert_render(&t, 10, 0, "\nno dated arrivals\n");
    timeline_free(&t);
    store_free(s);
    /* A time from the far past and one from the far future do not blow up the buckets. */
    static const int64_t wild[] = {-30000000, 0};
    s = times_store(wild, 2);
    struct timeline_options huge = {.max_buckets = 50};
    timeline_build(s, &huge, &t);
    assert_true(t.n <= 50);
    assert_int_equal(t.total, 2);
    timeline_free(&t);
    store_free(s);
}

static double elapsed_ms(struct timespec a, struct timespec b)
{
    return (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
}

/* A million dead letters with errors that differ in their numbers: three bugs. */
static void test_million(void **state)
{
#ifdef __SANITIZE_ADDRESS__
    size_t n = 100000; /* building the store is slow under the sanitizers */
#else
    size_t n = 1000000;
#endif
    const char *n_env = getenv("DLQX_TEST_MILLION");
    if (n_env && *n_env)
        n = (size_t)strtoul(n_env, NULL, 10);
    struct store *s = NULL;
    struct error err;
    assert_int_equal(store_new(0, NULL, &s, &err), ST_OK);
    struct message m;
    message_init(&m);
    m.headers_present = true;
    static const char *const queues[] = {"payments.dlq", "orders.dlq", "payments.gateway.dlq"};
    for (size_t i = 0; i < n; i++) {
        char id[64], text[160];
        snprintf(id, sizeof id, "%08zx-0000-4000-8000-%012zx", i, i);
        switch (i % 3) {
        case 0:
            snprintf(text, sizeof text,
                     "exhausted %zu attempts: TimeoutException: gateway timed out after %zu ms",
                     i % 5 + 1, 29000 + i % 3000);
            break;
        case 1:
            snprintf(
                text, sizeof text,
                "gave up after %zu attempts: Payments::Declined: order A-%zu: upstream said no",
                i % 5 + 1, 10000 + i % 50000);
            break;
        default:
            snprintf(text, sizeof text,
                     "exhausted 5 attempts: CryptoException: key k-2026-%02zu revoked", i % 12 + 1);
        }
        bytes_free(&m.queue);
        m.queue = bytes_from_cstr(queues[i % 3 == 0 ? (i / 3) % 2 * 2 : i % 3 == 1]);
        htable_set(m.headers, "x-acemq-id", hval_cstring(id));
        htable_set(m.headers, "x-acemq-type",
                   hval_cstring(i % 3 == 1 ? "order.placed" : "payment.charge"));
        htable_set(m.headers, "x-acemq-first-seen",
                   hval_int(HV_I64, T0 - (int64_t)(i % 1440) * MIN));
        htable_set(m.headers, "x-acemq-error", hval_cstring(text));
        assert_int_equal(store_append(s, &m, T0, &err), ST_OK);
    }
    message_free(&m);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct groups *g = groups_build(s, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    print_message("million: %zu entries in %zu groups, built in %.1f ms\n", n, groups_count(g),
                  elapsed_ms(t0, t1));
    assert_int_equal(groups_count(g), 3);
    assert_int_equal(groups_total(g), n);
    for (size_t k = 0; k < groups_count(g); k++) {
        const struct group *x = groups_at(g, k);
        print_message("million:   %7u  %-22s %s (%zu queues)\n", x->count, x->exception, x->key,
                      x->n_queues);
    }
    assert_int_equal(groups_at(g, 0)->n_queues, 2);
    /* In the UI's slices: the same groups, and the longest slice is what a key may wait. */
    double longest = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct groups_builder *b = groups_builder_new(s, NULL);
    for (;;) {
        struct timespec a, z;
        clock_gettime(CLOCK_MONOTONIC, &a);
        size_t left = groups_builder_step(b, 16384);
        clock_gettime(CLOCK_MONOTONIC, &z);
        if (elapsed_ms(a, z) > longest)
            longest = elapsed_ms(a, z);
        if (!left)
            break;
    }
    struct groups *stepped = groups_builder_finish(b);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    print_message("million: in slices of 16384: %.1f ms in all, the longest slice %.1f ms\n",
                  elapsed_ms(t0, t1), longest);
    assert_same_groups(stepped, g, n);
    groups_free(stepped);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    struct timeline t;
    struct timeline_options opt = {.now_ms = T0};
    timeline_build(s, &opt, &t);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    print_message("million: timeline of %zu buckets of %lld ms in %.1f ms\n", t.n,
                  (long long)t.bucket_ms, elapsed_ms(t0, t1));
    assert_int_equal(t.total, n);
    timeline_free(&t);
    groups_free(g);
    store_free(s);
}

/* One name for a group, fingerprint and type (issue 16.4): its key, what decode computes from a
 * message's error and type, is the explorer's group; the filter group=KEY selects exactly its
 * members, where fp= alone spans the types; a fingerprint alone is refused as a key. */
static void test_group_keys(void **state)
{
    struct store *s = incident_store();
    struct groups *g = groups_build(s, NULL);
    char buf[STORE_TEXT_MAX], tbuf[STORE_TEXT_MAX];
    size_t spans = 0;
    for (size_t k = 0; k < groups_count(g); k++) {
        const struct group *x = groups_at(g, k);
        assert_int_equal(x->group_key, group_key(x->fingerprint, x->type, strlen(x->type)));
        for (size_t j = 0; j < k; j++)
            assert_true(groups_at(g, j)->group_key != x->group_key);
        char text[GROUP_KEY_TEXT], upper[GROUP_KEY_TEXT];
        group_key_text(x->group_key, text);
        assert_int_equal(strlen(text), GROUP_KEY_TEXT - 1);
        assert_memory_equal(text, "g:", 2);
        uint64_t back = 0;
        struct error err;
        assert_true(group_key_parse(text, strlen(text), &back, &err));
        assert_int_equal(back, x->group_key);
        for (size_t c = 0; c < sizeof upper; c++)
            upper[c] = (char)(text[c] >= 'a' && text[c] <= 'f' ? text[c] - 32 : text[c]);
        upper[0] = 'G';
        assert_true(group_key_parse(upper, strlen(upper), &back, &err));
        assert_int_equal(back, x->group_key);
        /* fp= alone selects this group and every other type's with the fingerprint. */
        char expr[64];
        snprintf(expr, sizeof expr, "fp=%016llx", (unsigned long long)x->fingerprint);
        struct filter *f = NULL;
        assert_int_equal(filter_compile(expr, &f, &err), ST_OK);
        size_t by_fp = 0;
        for (size_t i = 0; i < store_count(s); i++)
            by_fp += filter_match_entry(f, s, i, T0);
        filter_free(f);
        assert_true(by_fp >= x->count);
        spans += by_fp > x->count;
    }
    assert_true(spans > 0); /* the incident has a fingerprint in several types */
    /* What decode computes from an entry's own error and type is the group it is in. */
    for (size_t i = 0; i < store_count(s); i++) {
        const struct store_entry *e = store_entry_at(s, i);
        size_t en = store_text(s, e->error, buf), tn = store_text(s, e->type, tbuf);
        const struct group *x = groups_at(g, groups_of_entry(g, i));
        assert_non_null(x);
        assert_int_equal(group_key(error_fingerprint(buf, en, NULL), tbuf, tn), x->group_key);
    }
    /* Refused: a fingerprint alone (the old --group), and what is not a key. */
    static const char *const bad[] = {"",
                                      "g:",
                                      "g:123",
                                      "g:0123456789abcdefa",
                                      "g:0123456789abcdeg",
                                      "x:0123456789abcdef",
                                      "g0123456789abcdef"};
    uint64_t key;
    struct error err;
    assert_false(group_key_parse("0123456789abcdef", 16, &key, &err));
    assert_non_null(strstr(err.msg, "0123456789abcdef is a fingerprint alone"));
    assert_non_null(strstr(err.msg, "fp=0123456789abcdef"));
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        error_clear(&err);
        assert_false(group_key_parse(bad[k], strlen(bad[k]), &key, &err));
        assert_non_null(strstr(err.msg, "a group key is g: and 16 hex digits"));
    }
    /* The key is the same on every host and run: a written-down key keeps its group. It is the
     * first 8 bytes of SHA-256("dlqx-group-1", the fingerprint big-endian, the type), as
     * Python's hashlib gives them. */
    assert_int_equal(group_key(0x0123456789abcdefULL, "order.placed", 12), 0xd91b4a1326feaf96ULL);
    groups_free(g);
    store_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fingerprint_normalises),
        cmocka_unit_test(test_fingerprint_groups_and_splits),
        cmocka_unit_test(test_exceptions),
        cmocka_unit_test(test_fingerprint_hostile),
        cmocka_unit_test(test_groups_from_store),
        cmocka_unit_test(test_groups_in_steps),
        cmocka_unit_test(test_group_keys),
        cmocka_unit_test(test_timeline),
        cmocka_unit_test(test_timeline_in_steps),
        cmocka_unit_test(test_million),
    };
    return cmocka_run_group_tests_name("groups", tests, NULL, NULL);
}
