/*
 * detail: the message detail as a person reads it — golden text for incident records (an
 * AceMQ set-aside copy with causation, a broker-made record with merged x-death entries, a
 * BabelQueue dead letter, an encrypted frame, replay stamps and a traceparent, hostile
 * defaults, pattern headers), the body modes, and every record rendered in order. The
 * parsers, hostile records and value wrapping are in test_detail_safe.c.
 */
#include "detail_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "detail.h"
#include "sanitize.h"
#include "snapshot.h"

/* ---- golden text ------------------------------------------------------------------------ */

static const char acemq_set_aside[] =
    "Summary\n"
    "  dialect       acemq   AceMQ envelope (x-acemq-* headers)\n"
    "  id            b0000000-0000-4000-8000-00000000000b   id and idempotency key (x-acemq-id)\n"
    "  type          payment.requested   the logical type (x-acemq-type)\n"
    "  version       1   schema version of the type (x-acemq-version)\n"
    "  correlation   c0ffee00-0000-4000-8000-000000000001   the whole causal chain "
    "(x-acemq-correlation)\n"
    "  causation     a0000000-0000-4000-8000-00000000000a   what caused this one "
    "(x-acemq-causation)\n"
    "  attempt       5   delivery attempt, from 1 (x-acemq-attempt)\n"
    "  age           1h56m   since first publish, until 2026-01-02T05:00:00Z (now)\n"
    "  first seen    2026-01-02T03:03:15.678Z   first publish (x-acemq-first-seen)\n"
    "  origin        payments@pod-2   the producer, service@host (x-acemq-origin)\n"
    "  error         exhausted 5 attempts: TimeoutException: gateway timed out after 30000 ms\n"
    "                why the library set it aside (x-acemq-error)\n"
    "  source        payments   where it came from: the DLQ's name minus .dlq/.parked/.dead\n"
    "  replay to     the default exchange, routing key payments   where a replay publishes it\n"
    "  consumer      accepted   an AceMQ consumer reads any envelope (bad fields take defaults)\n"
    "\n"
    "Death history\n"
    "  set aside by the AceMQ library itself (no broker dead-lettering: no x-death)\n"
    "  x-acemq-error   exhausted 5 attempts: TimeoutException: gateway timed out after 30000 ms\n"
    "                  why the library gave up on it\n"
    "\n"
    "AMQP properties and delivery\n"
    "  content_type      application/json\n"
    "  delivery_mode     2   persistent\n"
    "  message_id        b0000000-0000-4000-8000-00000000000b\n"
    "  headers           9 entries (below)\n"
    "  delivery\n"
    "    queue           payments.dlq   the queue it was read from\n"
    "    exchange        (default)   the exchange it was last published to\n"
    "    routing key     payments.dlq   the key it was last published with\n"
    "    redelivered     no\n"
    "    fetched at      2026-01-02T04:04:05.678Z   when dlqx read it\n"
    "\n"
    "Headers\n"
    "  AceMQ envelope headers, as sent (9)\n"
    "    x-acemq-id           (string)    b0000000-0000-4000-8000-00000000000b\n"
    "    x-acemq-type         (string)    payment.requested\n"
    "    x-acemq-version      (int32)     1\n"
    "    x-acemq-correlation  (string)    c0ffee00-0000-4000-8000-000000000001\n"
    "    x-acemq-attempt      (int32)     5\n"
    "    x-acemq-first-seen   (int64)     1767322995678\n"
    "    x-acemq-causation    (string)    a0000000-0000-4000-8000-00000000000a\n"
    "    x-acemq-origin       (string)    payments@pod-2\n"
    "    x-acemq-error        (string)    exhausted 5 attempts: TimeoutException: gateway timed "
    "out after\n"
    "                                     30000 ms\n"
    "\n"
    "Body\n"
    "  kind          json 53 B\n"
    "  content type  application/json\n"
    "  sha256        2ad015dd868478c5cf756e8b787d67d3fb006e543fa9ca85e85ce7c14515257f\n"
    "  shown         JSON re-indented, every token as sent\n"
    "\n"
    "  {\n"
    "    \"orderId\": \"A-1\",\n"
    "    \"amountCents\": 4250,\n"
    "    \"currency\": \"GBP\"\n"
    "  }\n";

static void test_acemq_set_aside(void **state)
{
    char *t = render(record(state, 1), 0, 0, NULL, 0);
    assert_text(t, acemq_set_aside);
    free(t);
}

static const char broker_merged[] =
    "Summary\n"
    "  dialect       amqp   plain AMQP: read from its properties\n"
    "  id            aa6550b3-83fa-51f2-a84b-fb79af3be5fe   defaulted (see below)\n"
    "  type          emails.send   defaulted (see below)\n"
    "  version       1   plain AMQP has no schema version\n"
    "  correlation   aa6550b3-83fa-51f2-a84b-fb79af3be5fe   defaulted (see below)\n"
    "  causation     (none)   plain AMQP carries no causation\n"
    "  attempt       5   times the broker dead-lettered it (x-death)\n"
    "  age           1h55m   since first publish, until 2026-01-02T05:00:00Z (now)\n"
    "  first seen    2026-01-02T03:04:06Z   defaulted (see below)\n"
    "  origin        (none)   the producing app (app_id property)\n"
    "  error         dead-lettered by the broker: expired from emails.retry\n"
    "                worked out from x-death: no library wrote an error\n"
    "  source        emails   where it came from: the first x-death entry\n"
    "  replay to     exchange mail, routing key emails.send   where a replay publishes it\n"
    "  consumer      accepted   plain AMQP: there are no consumer rules to fail\n"
    "  defaulted     id: a name-based UUID of the message (no message_id property)\n"
    "                type: the first death's routing key (no type property)\n"
    "                correlation: the id (no correlation_id property)\n"
    "                first seen: the first death's time (no timestamp property)\n"
    "\n"
    "Death history\n"
    "  dead-lettered 5 times by the broker, first 2026-01-02T03:04:06Z, last 2026-01-02T03:04:11Z\n"
    "  2026-01-02T03:04:06Z  rejected ×3  from emails (exchange mail, key emails.send)\n"
    "                        a consumer rejected it without requeue\n"
    "  2026-01-02T03:04:11Z  expired ×2  from emails.retry (the default exchange, key emails)\n"
    "                        its time to live ran out in the queue\n"
    "  (the broker merges deaths by queue and reason: an entry's time is its first death)\n"
    "  first death     rejected in emails, via exchange mail   x-first-death-*\n"
    "  last death      expired in emails.retry, via the default exchange   the newest entry\n"
    "\n"
    "AMQP properties and delivery\n"
    "  content_type      application/json\n"
    "  content_encoding  gzip\n"
    "  headers           4 entries (below)\n"
    "  delivery\n"
    "    queue           emails.error   the queue it was read from\n"
    "    exchange        dlx   the exchange it was last published to\n"
    "    routing key     emails   the key it was last published with\n"
    "    redelivered     no\n"
    "    fetched at      2026-01-02T04:04:05.678Z   when dlqx read it\n"
    "\n"
    "Headers\n"
    "  the broker's death headers, raw (4)\n"
    "    never sent back on replay\n"
    "    x-death                 (array)     2 items\n"
    "      [0]   (table)     6 entries\n"
    "        count         (int64)     2\n"
    "        exchange      (string)    \"\"\n"
    "        queue         (string)    emails.retry\n"
    "        reason        (string)    expired\n"
    "        routing-keys  (array)     1 item\n"
    "          [0]   (string)    emails\n"
    "        time          (timestamp) 1767323051 (2026-01-02T03:04:11Z)\n"
    "      [1]   (table)     6 entries\n"
    "        count         (int64)     3\n"
    "        exchange      (string)    mail\n"
    "        queue         (string)    emails\n"
    "        reason        (string)    rejected\n"
    "        routing-keys  (array)     1 item\n"
    "          [0]   (string)    emails.send\n"
    "        time          (timestamp) 1767323046 (2026-01-02T03:04:06Z)\n"
    "    x-first-death-exchange  (string)    mail\n"
    "    x-first-death-queue     (string)    emails\n"
    "    x-first-death-reason    (string)    rejected\n"
    "\n"
    "Body\n"
    "  kind          compressed (gzip) 24 B\n"
    "  content type  application/json\n"
    "  encoding      gzip   compressed: not decompressed here\n"
    "  sha256        8da602d8995ac76234f0fc6eb1ba6586fbd453903a53779de4e9b7c4031b3702\n"
    "  shown         hexdump\n"
    "\n"
    "  compressed (gzip), shown as bytes\n"
    "  00000000  1f 8b 08 00 00 00 00 00  00 00 00 00 00 00 00 00  |................|\n"
    "  00000010  00 00 00 00 00 00 00 00                           |........|\n";

/* Rejected three times, then expired twice: the merged entries oldest first. */
static void test_broker_merged_deaths(void **state)
{
    char *t = render(record(state, 17), 0, 0, NULL, 0);
    assert_text(t, broker_merged);
    free(t);
}

static const char babelqueue_dead_letter[] =
    "Summary\n"
    "  dialect       babelqueue   BabelQueue envelope (a JSON body)\n"
    "  id            f1e2d3c4-b5a6-4789-90ab-cdef01234567   the message id (meta.id)\n"
    "  type          urn:babel:orders:created   the job's URN (job)\n"
    "  version       1   envelope schema version (meta.schema_version)\n"
    "  correlation   7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b   the whole causal chain (trace_id)\n"
    "  causation     (none)   BabelQueue carries none (a parent is the traceparent header)\n"
    "  attempt       3   delivery attempts, from 0 (dead_letter.attempts)\n"
    "  age           1h55m   since first publish, until 2026-01-02T05:00:00Z (now)\n"
    "  first seen    2026-01-02T03:04:03.678Z   first publish (meta.created_at)\n"
    "  origin        php   the producer's language (meta.lang)\n"
    "  error         App\\Exceptions\\GatewayTimeout: Payment gateway timeout\n"
    "                dead_letter.exception: dead_letter.error\n"
    "  failed at     2026-01-02T03:04:06.678Z (1h55m ago)   dead_letter.failed_at\n"
    "  source        orders   where it came from: dead_letter.original_queue\n"
    "  replay to     the default exchange, routing key orders   where a replay publishes it\n"
    "  consumer      accepted   the envelope satisfies every consumer rule\n"
    "Death history\n"
    "  dead_letter  BabelQueue's block, written by the SDK that gave up\n"
    "    reason          failed   the handler threw\n"
    "    error           Payment gateway timeout   the error's message\n"
    "    exception       App\\Exceptions\\GatewayTimeout   the error's class or type\n"
    "    failed at       2026-01-02T03:04:06.678Z (1h55m ago)\n"
    "    original queue  orders   where it was consumed from\n"
    "    attempts        3   delivery attempts when it failed\n"
    "    lang            php   the SDK that dead-lettered it\n"
    "BabelQueue envelope\n"
    "  detected             app_id   the app_id property is \"babelqueue\"\n"
    "  job                  urn:babel:orders:created   the job's URN: which handler\n"
    "  trace_id             7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b   the whole causal chain\n"
    "  attempts             3   delivery attempts, from 0\n"
    "  data                 an object of 2 members   the job's arguments (in the body)\n"
    "  meta.id              f1e2d3c4-b5a6-4789-90ab-cdef01234567   the message id\n"
    "  meta.queue           orders   the queue it was sent to\n"
    "  meta.lang            php   the producer's SDK\n"
    "  meta.schema_version  1   must be the integer 1\n"
    "  meta.created_at      1767323043678 (2026-01-02T03:04:03.678Z)   first publish, epoch ms\n";

static void test_babelqueue_dead_letter(void **state)
{
    static const int sections[] = {DSEC_SUMMARY, DSEC_DEATH, DSEC_DIALECT};
    char *t = render(record(state, 10), 0, 0, sections, 3);
    assert_text(t, babelqueue_dead_letter);
    free(t);
}

static const char encrypted_frame[] =
    "Pattern headers\n"
    "  route         validate → [charge] → ship   a declared pipeline (x-acemq-route)\n"
    "    position    1: step 2 of 3   x-acemq-route-position, from 0\n"
    "    at          charge   the step it is at\n"
    "    route id    b0c1d2e3   x-acemq-route-id\n"
    "Headers\n"
    "  AceMQ envelope headers, as sent (11)\n"
    "    x-acemq-id              (string)    a3000000-0000-4000-8000-0000000000a3\n"
    "    x-acemq-type            (string)    card.tokenised\n"
    "    x-acemq-version         (int32)     1\n"
    "    x-acemq-correlation     (string)    a3000000-0000-4000-8000-0000000000a3\n"
    "    x-acemq-attempt         (int32)     5\n"
    "    x-acemq-first-seen      (int64)     1767323040678\n"
    "    x-acemq-origin          (string)    orders@pod-7\n"
    "    x-acemq-error           (string)    exhausted 5 attempts: CryptoException: key k-2026-01 "
    "revoked\n"
    "    x-acemq-route           (string)    validate,charge,ship\n"
    "    x-acemq-route-position  (int8)      1\n"
    "    x-acemq-route-id        (string)    b0c1d2e3\n"
    "  unknown x-acemq-* headers (1)\n"
    "    a newer AceMQ library's headers: kept and written back on replay\n"
    "    x-acemq-lane  (int16)     7\n"
    "Body\n"
    "  kind          acemq encrypted key=k-2026-01 60 B\n"
    "  content type  application/vnd.acemq.encrypted\n"
    "  sha256        813e5f23091e733804c927a2e23f36fd0d5b88fbfa4e6df8817247a76c430034\n"
    "  key id        k-2026-01   readable without the key; nothing is decrypted\n"
    "  shown         the frame described, then its bytes\n"
    "\n"
    "  acemq encrypted (AES-GCM), key id: k-2026-01\n"
    "  12-byte nonce, 20 bytes of ciphertext, 16-byte tag\n"
    "  0000000c  00 01 02 03 04 05 06 07  08 09 0a 0b 0c 0d 0e 0f  |................|\n"
    "  0000001c  10 11 12 13 14 15 16 17  18 19 1a 1b 1c 1d 1e 1f  |................|\n"
    "  0000002c  20 21 22 23 24 25 26 27  28 29 2a 2b 2c 2d 2e 2f  | !\"#$%&'()*+,-./|\n";

/* An encrypted frame on a declared route, with a header from a newer AceMQ library. */
static void test_encrypted_frame(void **state)
{
    static const int sections[] = {DSEC_PATTERNS, DSEC_HEADERS, DSEC_BODY};
    char *t = render(record(state, 8), 0, 0, sections, 3);
    assert_text(t, encrypted_frame);
    free(t);
}

static const char replayed[] =
    "Replay stamps\n"
    "  replayed 1 time, last from orders.dlq at 2026-01-01T12:00:00Z (17h00m ago)\n"
    "  acemq-replayed-from  (string) orders.dlq   the queue the last replay read it from\n"
    "  acemq-replayed-at    (string) 2026-01-01T12:00:00Z   when (RFC 3339; older Java wrote epoch "
    "ms)\n"
    "  acemq-replay-count   (int32)  1   replays so far; the next one writes +1\n"
    "  a replay keeps the id, correlation, causation and first-seen, sets the attempt back to 1 "
    "and\n"
    "    clears x-acemq-error\n"
    "Pattern headers\n"
    "  traceparent   00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01   W3C trace context\n"
    "    version     00\n"
    "    trace id    4bf92f3577b34da6a3ce929d0e0e4736   the whole distributed trace\n"
    "    parent id   00f067aa0ba902b7   the span that sent it\n"
    "    flags       01   sampled\n";

static void test_replay_stamps_and_traceparent(void **state)
{
    static const int sections[] = {DSEC_REPLAY, DSEC_PATTERNS};
    char *t = render(record(state, 7), 0, 0, sections, 2);
    assert_text(t, replayed);
    free(t);
}

static const char hostile_defaults[] =
    "Summary\n"
    "  dialect       acemq   AceMQ envelope (x-acemq-* headers)\n"
    "  id            ok   id and idempotency key (x-acemq-id)\n"
    "  type          evil.dlq   defaulted (see below)\n"
    "  version       1   defaulted (see below)\n"
    "  correlation   ok   defaulted (see below)\n"
    "  causation     (none)   a chain root: nothing caused it\n"
    "  attempt       1   defaulted (see below)\n"
    "  age           0.0s   since first publish, until 2026-01-02T05:00:00Z (now)\n"
    "  first seen    2026-01-02T05:00:00Z   defaulted (see below)\n"
    "  origin        (none)   the producer, service@host (x-acemq-origin)\n"
    "  error         (none)   nothing says why\n"
    "  source        evil   where it came from: the DLQ's name minus .dlq/.parked/.dead\n"
    "  replay to     the default exchange, routing key evil   where a replay publishes it\n"
    "  consumer      accepted   an AceMQ consumer reads any envelope (bad fields take defaults)\n"
    "  defaulted     type: the routing key (x-acemq-type is an array, unreadable)\n"
    "                version: 1 (x-acemq-version is not a number)\n"
    "                correlation: the id (x-acemq-correlation is void)\n"
    "                attempt: 1 (x-acemq-attempt is a table, unreadable)\n"
    "                first seen: when it was read (x-acemq-first-seen is a double, unreadable)\n";

/* Every envelope header of the wrong type: each default says what it replaced. */
static void test_hostile_defaults(void **state)
{
    static const int sections[] = {DSEC_SUMMARY};
    struct sample s = load("snapshots/hostile.jsonl");
    assert_true(s.n > 1);
    char *t = render(&s.m[1], 0, 0, sections, 1);
    assert_text(t, hostile_defaults);
    free(t);
    unload(&s);
}

static const char slip_good[] =
    "Pattern headers\n"
    "  routing slip  1 done, 2 to go; next: charge   acemq-routing-slip: the steps it travels\n"
    "    ✓ validate        exchange (default), key validate   done 2026-01-02T03:04:05Z (1h55m "
    "ago)\n"
    "    → charge          exchange payments, key payments.charge   next\n"
    "      ship            exchange (default), key ship   pending\n"
    "  reply to      amq.rabbitmq.reply-to.g1   where the responder sends its reply "
    "(acemq-reply-to)\n"
    "  acemq-error   responder failed: timeout   a request/reply failure the responder sent back\n"
    "  traceparent   00-00000000000000000000000000000000-00f067aa0ba902b7-01\n"
    "                not W3C: the trace id is all zeros\n"
    "  tracestate    rojo=00f067aa0ba902b7,congo=t61rcWkgMzE   2 vendor entries (W3C tracestate)\n";

static const char slip_bad[] =
    "Pattern headers\n"
    "  routing slip  not a routing slip: \"steps\" is not an array\n"
    "                {\"steps\":5}\n"
    "  route         (absent)   x-acemq-route is missing: the three go together\n"
    "    position    9: outside the route (0 steps)   x-acemq-route-position, from 0\n"
    "  traceparent   a header of kind int32, not a string\n";

static const char slip_line[] =
    "{\"v\":1,\"queue\":\"orders.dlq\",\"routing_key\":\"orders.dlq\",\"headers\":{"
    "\"x-acemq-id\":\"s1\",\"acemq-routing-slip\":\"{\\\"steps\\\":[{\\\"exchange\\\":"
    "\\\"payments\\\",\\\"routingKey\\\":\\\"payments.charge\\\",\\\"name\\\":\\\"charge\\\"},"
    "{\\\"exchange\\\":\\\"\\\",\\\"routingKey\\\":\\\"ship\\\",\\\"name\\\":\\\"ship\\\"}],"
    "\\\"done\\\":[{\\\"exchange\\\":\\\"\\\",\\\"routingKey\\\":\\\"validate\\\",\\\"name\\\":"
    "\\\"validate\\\",\\\"completedAt\\\":\\\"2026-01-02T03:04:05Z\\\"}]}\","
    "\"acemq-reply-to\":\"amq.rabbitmq.reply-to.g1\",\"acemq-error\":\"responder failed: "
    "timeout\",\"traceparent\":\"00-00000000000000000000000000000000-00f067aa0ba902b7-01\","
    "\"tracestate\":\"rojo=00f067aa0ba902b7,congo=t61rcWkgMzE\"},\"body\":\"x\"}";

static const char slip_bad_line[] =
    "{\"v\":1,\"queue\":\"orders.dlq\",\"routing_key\":\"orders.dlq\",\"headers\":{"
    "\"x-acemq-id\":\"s2\",\"acemq-routing-slip\":\"{\\\"steps\\\":5}\",\"traceparent\":"
    "{\"type\":\"int32\",\"value\":7},\"x-acemq-route-position\":9},\"body\":\"x\"}";

/* The slip's steps done and to go; reply-to, acemq-error, tracestate; bad values as such. */
static void test_pattern_headers(void **state)
{
    static const int sections[] = {DSEC_PATTERNS};
    struct message m = parse(slip_line);
    char *t = render(&m, 0, 0, sections, 1);
    assert_text(t, slip_good);
    free(t);
    message_free(&m);
    m = parse(slip_bad_line);
    t = render(&m, 0, 0, sections, 1);
    assert_text(t, slip_bad);
    free(t);
    message_free(&m);
    /* No pattern header at all: no section. */
    t = render(record(state, 0), 0, 0, sections, 1);
    assert_string_equal(t, "");
    free(t);
}

/* ---- the body --------------------------------------------------------------------------- */

static void test_body_modes(void **state)
{
    static const int sections[] = {DSEC_BODY};
    char *t = render(record(state, 0), DETAIL_BODY_RAW, 0, sections, 1);
    assert_non_null(strstr(t, "  shown         JSON as received\n\n"
                              "  {\"orderId\":\"A-1\",\"sku\":4411,\"qty\":2}\n"));
    free(t);
    t = render(record(state, 0), DETAIL_BODY_HEX, 0, sections, 1);
    assert_non_null(strstr(t, "  shown         hexdump of every byte\n\n"
                              "  00000000  7b 22 6f 72 64 65 72 49  64 22 3a 22 41 2d 31 22  "
                              "|{\"orderId\":\"A-1\"|\n"));
    free(t);
    /* Text keeps its lines, tabs expanded, control bytes escaped. */
    struct message m = parse("{\"properties\":{\"content_type\":\"text/plain\"},"
                             "\"body\":\"one\\ttab\\nline \\u001b[2J two\\r\\n\"}");
    t = render(&m, 0, 0, sections, 1);
    assert_non_null(strstr(t, "\n  one     tab\n  line \\e[2J two\\r\n"));
    free(t);
    message_free(&m);
    /* The limit is honoured and announced. */
    struct decoded d;
    decode_message(record(state, 10), NOW, &d);
    struct detail_doc doc;
    struct detail_opts opts = {0, 40};
    detail_render_opts(&d, record(state, 10), NOW, 0, &opts, &doc);
    assert_true(doc_has(&doc, "\xe2\x80\xa6 423 more bytes"));
    detail_doc_free(&doc);
    decoded_free(&d);
}

/* ---- the document ----------------------------------------------------------------------- */

static void test_every_record_in_order(void **state)
{
    struct sample *s = *state;
    for (size_t i = 0; i < s->n; i++) {
        struct decoded d;
        decode_message(&s->m[i], NOW, &d);
        struct detail_doc doc;
        detail_render(&d, &s->m[i], NOW, 0, &doc);
        assert_true(doc.n > 10);
        assert_true(doc.lines[0].heading);
        assert_int_equal(doc.lines[0].section, DSEC_SUMMARY);
        int last = -1;
        for (size_t k = 0; k < doc.n; k++) {
            const struct detail_line *l = &doc.lines[k];
            assert_true((int)l->section >= last);
            last = (int)l->section;
            assert_line_safe(l, false, i);
            if (l->heading)
                assert_string_equal(l->text, l->section == DSEC_DIALECT
                                                 ? d.dialect->section
                                                 : detail_section_title(l->section));
        }
        assert_int_equal(last, DSEC_BODY);
        assert_int_equal(detail_section_first(&doc, DSEC_SUMMARY), 0);
        assert_true(detail_section_first(&doc, DSEC_BODY) < doc.n);
        bool bq = d.dialect == &dialect_babelqueue;
        assert_true((detail_section_first(&doc, DSEC_DIALECT) < doc.n) == bq);
        assert_true((detail_section_first(&doc, DSEC_REPLAY) < doc.n) == d.replay.present);
        detail_doc_free(&doc);
        /* For a terminal that is not UTF-8: nothing but ASCII, glyphs and meanings included. */
        detail_render(&d, &s->m[i], NOW, DETAIL_ASCII, &doc);
        for (size_t k = 0; k < doc.n; k++)
            assert_line_safe(&doc.lines[k], true, i);
        detail_doc_free(&doc);
        decoded_free(&d);
    }
}

static void test_helpers(void **state)
{
    (void)state;
    struct detail_line l;
    memset(&l, 0, sizeof l);
    l.text = (char *)(uintptr_t) "Zo\xc3\xab \xe6\x97\xa5\xe6\x9c\xac x";
    l.len = strlen(l.text);
    size_t skipped;
    /* "Zoë 日本 x": Z o ë space 日(2) 本(2) space x */
    assert_int_equal(detail_skip_columns(l.text, l.len, 3, &skipped), 4);
    assert_int_equal(skipped, 3);
    /* Two columns in, 日 is cut: it is skipped whole. */
    assert_int_equal(detail_skip_columns(l.text, l.len, 5, &skipped), 8);
    assert_int_equal(skipped, 6);
    assert_int_equal(detail_skip_columns(l.text, l.len, 100, &skipped), l.len);
    assert_int_equal(skipped, 10);
    assert_true(detail_line_matches(&l, "ZOË") == false); /* ASCII folding only */
    assert_true(detail_line_matches(&l, "zo\xc3\xab"));
    assert_true(detail_line_matches(&l, " X"));
    assert_true(detail_line_matches(&l, ""));
    assert_false(detail_line_matches(&l, "y"));

    char t[DETAIL_TIME_MAX];
    detail_time(NOW - 90000, NOW, t);
    assert_string_equal(t, "2026-01-02T04:58:30Z (1m30s ago)");
    detail_time(NOW + 5000, NOW, t);
    assert_string_equal(t, "2026-01-02T05:00:05Z (in 5.0s)");
    detail_time(NOW + 1, 0, t);
    assert_string_equal(t, "2026-01-02T05:00:00.001Z");
}

int main(void)
{
    detail_locale();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_acemq_set_aside),
        cmocka_unit_test(test_broker_merged_deaths),
        cmocka_unit_test(test_babelqueue_dead_letter),
        cmocka_unit_test(test_encrypted_frame),
        cmocka_unit_test(test_replay_stamps_and_traceparent),
        cmocka_unit_test(test_hostile_defaults),
        cmocka_unit_test(test_pattern_headers),
        cmocka_unit_test(test_body_modes),
        cmocka_unit_test(test_every_record_in_order),
        cmocka_unit_test(test_helpers),
    };
    return cmocka_run_group_tests_name("detail", tests, detail_setup, detail_teardown);
}
