/*
 * decode: the sample incident decoded dialect by dialect — ids, types, correlation,
 * attempts, errors, death history, where each message goes back to and whether its
 * consumer would accept it — and hostile records decoded without trusting a byte.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "babelqueue_dialect.h"
#include "decode.h"
#include "snapshot.h"

#define NOW 1767330000000LL

struct sample {
    struct message *m;
    size_t n;
};

static struct sample load(const char *name)
{
    struct sample s = {NULL, 0};
    FILE *f = fopen(test_fixture_path(name), "rb");
    assert_non_null(f);
    struct snapshot_reader r;
    snapshot_reader_open(&r, f, name);
    for (;;) {
        struct message m;
        struct error err;
        enum snapshot_rc rc = snapshot_read(&r, &m, &err);
        if (rc == SNAP_EOF)
            break;
        if (rc != SNAP_RECORD)
            fail_msg("%s", err.msg);
        s.m = realloc(s.m, (s.n + 1) * sizeof *s.m);
        s.m[s.n++] = m;
    }
    snapshot_reader_close(&r);
    fclose(f);
    return s;
}

static void unload(struct sample *s)
{
    for (size_t i = 0; i < s->n; i++)
        message_free(&s->m[i]);
    free(s->m);
}

static int setup(void **state)
{
    struct sample *s = malloc(sizeof *s);
    *s = load("snapshots/incident.jsonl");
    *state = s;
    return 0;
}

static int teardown(void **state)
{
    unload(*state);
    free(*state);
    return 0;
}

static void dec(void **state, size_t i, struct decoded *d)
{
    struct sample *s = *state;
    assert_true(i < s->n);
    decode_message(&s->m[i], NOW, d);
}

#define assert_bytes(b, str)                                                                       \
    do {                                                                                           \
        const struct bytes *b_ = (b);                                                              \
        if (!bytes_eq_cstr(b_, (str)))                                                             \
            fail_msg("%s is \"%.*s\", not \"%s\"", #b, (int)b_->len, (const char *)b_->data,       \
                     (str));                                                                       \
    } while (0)

static void test_acemq_set_aside(void **state)
{
    struct decoded d;
    dec(state, 1, &d);
    assert_ptr_equal(d.dialect, &dialect_acemq);
    assert_bytes(&d.env->id, "b0000000-0000-4000-8000-00000000000b");
    assert_bytes(&d.env->type, "payment.requested");
    assert_bytes(&d.env->correlation_id, "c0ffee00-0000-4000-8000-000000000001");
    assert_bytes(&d.env->causation_id, "a0000000-0000-4000-8000-00000000000a");
    assert_int_equal(d.env->attempt, 5);
    assert_bytes(&d.error,
                 "exhausted 5 attempts: TimeoutException: gateway timed out after 30000 ms");
    assert_false(d.error_from_broker);
    assert_true(d.accepted);
    assert_string_equal(d.source.how, "acemq-dlq-name");
    assert_bytes(&d.source.queue, "payments");
    assert_bytes(&d.source.exchange, "");
    assert_bytes(&d.source.routing_key, "payments");
    assert_false(d.death.present);
    assert_int_equal(d.body.kind, BODY_JSON);
    /* age in seconds from first-seen */
    assert_true(envelope_age_s(d.env, NOW) > 7004.3 && envelope_age_s(d.env, NOW) < 7004.4);
    decoded_free(&d);
}

static void test_acemq_broker_dead_lettered(void **state)
{
    struct decoded d;
    dec(state, 6, &d);
    assert_ptr_equal(d.dialect, &dialect_acemq);
    assert_true(d.death.present);
    assert_int_equal(d.death.total, 1);
    assert_bytes(&d.death.first_reason, "rejected");
    assert_bytes(&d.death.first_exchange, "orders-events");
    assert_bytes(&d.error, "dead-lettered by the broker: rejected from orders");
    assert_true(d.error_from_broker);
    /* The AceMQ rule wins over x-death: the DLQ's name without its suffix. */
    assert_string_equal(d.source.how, "acemq-dlq-name");
    assert_bytes(&d.source.queue, "orders");
    /* x-death is the broker's, not shown as an application header. */
    json_t *j = decoded_to_json(&d, NOW);
    assert_null(json_object_get(json_object_get(j, "headers"), "x-death"));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(j, "death"), "count")), 1);
    json_decref(j);
    decoded_free(&d);
}

static void test_acemq_replayed_and_framed(void **state)
{
    struct decoded d;
    dec(state, 7, &d);
    assert_true(d.replay.present);
    assert_bytes(&d.replay.from, "orders.dlq");
    assert_int_equal(d.replay.at_ms, 1767268800000LL);
    assert_int_equal(d.replay.count, 1);
    assert_non_null(htable_get(d.env->headers, "tenant"));
    decoded_free(&d);
    dec(state, 8, &d);
    assert_int_equal(d.body.kind, BODY_ENCRYPTED);
    assert_string_equal(d.body.key_id, "k-2026-01");
    assert_int_equal(d.env->route->n, 3);
    assert_non_null(htable_get(d.env->reserved_unknown, "x-acemq-lane"));
    decoded_free(&d);
    dec(state, 9, &d);
    assert_int_equal(d.body.kind, BODY_AVRO_REGISTERED);
    assert_int_equal(d.body.schema_id, 17);
    assert_string_equal(d.source.how, "acemq-dlq-name");
    assert_bytes(&d.source.queue, "inventory"); /* .parked */
    decoded_free(&d);
}

static void test_babelqueue_dead_letter(void **state)
{
    struct decoded d;
    dec(state, 10, &d);
    assert_ptr_equal(d.dialect, &dialect_babelqueue);
    assert_true(d.accepted);
    assert_null(d.reject_reason);
    assert_bytes(&d.env->id, "f1e2d3c4-b5a6-4789-90ab-cdef01234567");
    assert_bytes(&d.env->type, "urn:babel:orders:created");
    assert_bytes(&d.env->correlation_id, "7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b");
    assert_int_equal(d.env->causation_id.len, 0);
    assert_int_equal(d.env->attempt, 3);
    assert_int_equal(d.env->version, 1);
    assert_bytes(&d.env->origin, "php");
    assert_int_equal(d.env->first_seen_ms, 1767323043678LL);
    assert_bytes(&d.error, "App\\Exceptions\\GatewayTimeout: Payment gateway timeout");
    assert_string_equal(d.source.how, "dead_letter.original_queue");
    assert_bytes(&d.source.routing_key, "orders");
    json_t *j = decoded_to_json(&d, NOW);
    json_t *bq = json_object_get(j, "babelqueue");
    assert_non_null(bq);
    assert_string_equal(json_string_value(json_object_get(bq, "job_key")), "job");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(bq, "data"), "order_id")),
                     1042);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(bq, "dead_letter"), "original_queue")),
        "orders");
    json_decref(j);
    decoded_free(&d);
}

static void test_babelqueue_alias_and_rejections(void **state)
{
    struct decoded d;
    dec(state, 11, &d);
    assert_true(d.accepted);
    assert_int_equal(decoded_bq(&d)->job_key, BQ_JOB_KEY_URN);
    assert_bytes(&d.env->type, "urn:babel:billing:invoice-issued");
    assert_int_equal(d.env->attempt, 5);
    /* error and exception are null: the dead-letter reason stands in. */
    assert_bytes(&d.error, "max_attempts");
    /* 9007199254740993 is kept exact in the decoded data. */
    json_t *j = decoded_to_json(&d, NOW);
    json_t *data = json_object_get(json_object_get(j, "babelqueue"), "data");
    assert_true(json_integer_value(json_object_get(data, "big")) == 9007199254740993LL);
    json_decref(j);
    decoded_free(&d);

    dec(state, 12, &d);
    assert_false(d.accepted);
    assert_string_equal(d.reject_reason, "unsupported_schema_version");
    assert_int_equal(d.env->version, 2);
    decoded_free(&d);

    dec(state, 13, &d);
    assert_ptr_equal(d.dialect, &dialect_babelqueue);
    assert_false(d.accepted);
    assert_string_equal(d.reject_reason, "undecodable_body");
    assert_true(d.env->defaulted & ED_ID);
    assert_bytes(&d.error, "JsonException: Syntax error");
    decoded_free(&d);
}

static void test_babelqueue_through_broker_dlx(void **state)
{
    struct decoded d;
    dec(state, 14, &d);
    assert_ptr_equal(d.dialect, &dialect_babelqueue);
    assert_true(d.accepted);
    assert_true(d.death.present);
    assert_bytes(&d.death.first_reason, "expired");
    assert_bytes(&d.error, "dead-lettered by the broker: expired from notify");
    assert_string_equal(d.source.how, "meta.queue");
    assert_bytes(&d.source.queue, "notify");
    assert_true(d.death.entries[0].has_original_expiration);
    decoded_free(&d);
}

static void test_plain_amqp(void **state)
{
    struct decoded d;
    dec(state, 15, &d);
    assert_ptr_equal(d.dialect, &dialect_amqp);
    assert_bytes(&d.env->id, "audit-1");
    assert_bytes(&d.env->type, "audit.write"); /* no type property: the first death's key */
    assert_bytes(&d.env->correlation_id, "audit-1");
    assert_bytes(&d.env->origin, "auth-service");
    assert_int_equal(d.env->first_seen_ms, (1767323045678LL - 3000) / 1000 * 1000);
    assert_string_equal(d.source.how, "x-death");
    assert_bytes(&d.source.exchange, "audit-x");
    assert_bytes(&d.source.routing_key, "audit.write");
    assert_bytes(&d.source.queue, "audit");
    assert_int_equal(d.body.kind, BODY_TEXT);
    decoded_free(&d);

    dec(state, 16, &d);
    assert_bytes(&d.env->type, "image.resize");
    assert_bytes(&d.env->correlation_id, "batch-7");
    assert_true(d.death.has_delivery_count);
    assert_int_equal(d.death.delivery_count, 20);
    assert_bytes(&d.death.first_reason, "delivery_limit");
    assert_true(d.env->defaulted & ED_ID);
    decoded_free(&d);

    /* Rejected three times then expired twice: five deaths; back to the first one's place. */
    dec(state, 17, &d);
    assert_int_equal(d.death.total, 5);
    assert_int_equal(d.env->attempt, 5);
    assert_bytes(&d.death.first_queue, "emails");
    assert_bytes(&d.death.last_queue, "emails.retry");
    assert_bytes(&d.source.exchange, "mail");
    assert_bytes(&d.source.routing_key, "emails.send");
    assert_int_equal(d.body.kind, BODY_COMPRESSED);
    decoded_free(&d);
}

static void test_nothing_at_all(void **state)
{
    struct sample *s = *state;
    struct decoded d, d2;
    dec(state, 18, &d);
    assert_ptr_equal(d.dialect, &dialect_amqp);
    assert_bytes(&d.env->type, "message");
    assert_true(d.env->defaulted & ED_ID);
    assert_null(d.source.how);
    assert_int_equal(d.body.kind, BODY_BINARY);
    /* The stand-in id is the same every time the message is read. */
    decode_message(&s->m[18], NOW + 5, &d2);
    assert_true(bytes_eq(&d.env->id, &d2.env->id));
    /* And differs for a different message. */
    struct decoded d3;
    dec(state, 17, &d3);
    assert_false(bytes_eq(&d.env->id, &d3.env->id));
    decoded_free(&d);
    decoded_free(&d2);
    decoded_free(&d3);
}

/* The neutral fields docs/decode-format.md's table documents (the first column's `names`; the
 * dialect objects' row and the CLI's fingerprint and group are not decode_message's). */
static size_t documented_fields(char names[][40], size_t max)
{
    struct bytes doc = test_read_file(FIXTURES_DIR "/../docs/decode-format.md");
    const char *s = (const char *)doc.data, *end = s + doc.len;
    const char *start = strstr(s, "## The neutral fields");
    assert_non_null(start);
    const char *stop = strstr(start + 3, "\n## ");
    stop = stop ? stop : end;
    size_t n = 0;
    for (const char *l = start; l && l < stop; l = memchr(l, '\n', (size_t)(stop - l))) {
        l++;
        if (strncmp(l, "| `", 3) != 0)
            continue;
        const char *cell_end = strchr(l + 1, '|');
        if (!cell_end || memchr(l, '/', (size_t)(cell_end - l)))
            continue;
        for (const char *p = l; p < cell_end;) {
            const char *a = memchr(p, '`', (size_t)(cell_end - p));
            if (!a)
                break;
            const char *b = memchr(a + 1, '`', (size_t)(cell_end - a - 1));
            if (!b)
                break;
            size_t len = (size_t)(b - a - 1);
            if (len && len < 40 && n < max && strncmp(a + 1, "fingerprint", len) != 0 &&
                strncmp(a + 1, "group", len) != 0) {
                memcpy(names[n], a + 1, len);
                names[n++][len] = 0;
            }
            p = b + 1;
        }
    }
    bytes_free(&doc);
    return n;
}

static void test_json_fields_documented(void **state)
{
    char fields[80][40];
    size_t nf = documented_fields(fields, 80);
    assert_true(nf >= 25); /* the table was found and read */
    struct sample *s = *state;
    for (size_t i = 0; i < s->n; i++) {
        struct decoded d;
        decode_message(&s->m[i], NOW, &d);
        json_t *j = decoded_to_json(&d, NOW);
        for (size_t k = 0; k < nf; k++)
            if (!json_object_get(j, fields[k]))
                fail_msg("record %zu has no \"%s\" (docs/decode-format.md documents it)", i,
                         fields[k]);
        assert_non_null(json_object_get(j, d.dialect->name));
        char *text = json_dumps(j, JSON_COMPACT);
        assert_non_null(text);
        free(text);
        json_decref(j);
        decoded_free(&d);
    }
}

static void test_hostile_records(void **state)
{
    struct sample s = load("snapshots/hostile.jsonl");
    assert_true(s.n >= 10);
    for (size_t i = 0; i < s.n; i++) {
        struct decoded d;
        decode_message(&s.m[i], NOW, &d);
        json_t *j = decoded_to_json(&d, NOW);
        char *text = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);
        if (!text) {
            fail_msg("record %zu does not serialise", i);
            return;
        }
        /* ENSURE_ASCII output never carries a raw control byte. */
        for (char *p = text; *p; p++)
            assert_true((unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f);
        free(text);
        json_decref(j);
        if (i == 1) {
            /* Wrong header types take their defaults, one by one. */
            assert_bytes(&d.env->id, "ok");
            assert_true(d.env->defaulted & ED_ATTEMPT);
            assert_true(d.env->defaulted & ED_VERSION);
            assert_true(d.env->defaulted & ED_FIRST_SEEN);
            assert_int_equal(d.env->first_seen_ms, NOW);
            assert_bytes(&d.env->type, "evil.dlq");
            assert_bytes(&d.env->correlation_id, "ok");
        }
        if (i == 5) {
            assert_false(d.accepted);
            assert_string_equal(d.reject_reason, "malformed_json");
        }
        if (i == 6) {
            assert_false(d.accepted);
            assert_string_equal(d.reject_reason, "missing_urn");
        }
        decoded_free(&d);
    }
    unload(&s);
}

/* Found by the fuzzers: times from the wire at the edges of int64 must not overflow. */
static void test_extreme_times(void **state)
{
    static const char *const lines[] = {
        "{\"fetched_at_ms\":-9223372036823354707}",
        "{\"headers\":{\"x-acemq-first-seen\":-9223372036854775808}}",
        "{\"properties\":{\"app_id\":\"babelqueue\",\"timestamp\":9223372036854775807}}",
        "{\"properties\":{\"timestamp\":9223372036854775807}}",
        "{\"headers\":{\"x-acemq-id\":\"a\",\"acemq-replayed-at\":"
        "{\"type\":\"timestamp\",\"value\":\"18446744073709551615\"}}}",
    };
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        struct message m;
        struct error err;
        if (snapshot_parse_line(lines[i], strlen(lines[i]), &m, &err) != ST_OK)
            fail_msg("%s", err.msg);
        struct decoded d;
        decode_message(&m, NOW, &d);
        json_t *j = decoded_to_json(&d, NOW);
        assert_non_null(j);
        json_decref(j);
        if (i == 4)
            assert_false(d.replay.has_at);
        decoded_free(&d);
        message_free(&m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_acemq_set_aside),
        cmocka_unit_test(test_acemq_broker_dead_lettered),
        cmocka_unit_test(test_acemq_replayed_and_framed),
        cmocka_unit_test(test_babelqueue_dead_letter),
        cmocka_unit_test(test_babelqueue_alias_and_rejections),
        cmocka_unit_test(test_babelqueue_through_broker_dlx),
        cmocka_unit_test(test_plain_amqp),
        cmocka_unit_test(test_nothing_at_all),
        cmocka_unit_test(test_json_fields_documented),
        cmocka_unit_test(test_hostile_records),
        cmocka_unit_test(test_extreme_times),
    };
    return cmocka_run_group_tests_name("decode", tests, setup, teardown);
}
