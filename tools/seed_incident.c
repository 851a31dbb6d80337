/*
 * seed_incident: the demo's scenario — a 3 a.m. incident (a payment gateway timing out) as it
 * looks across a broker's dead-letter queues:
 *   AceMQ set-aside copies (orders.dlq, payments.dlq, inventory.parked) with causal chains
 *   across queues, one with a missing middle, replayed copies, encrypted, Avro and claim-check
 *   bodies, an unknown x-acemq-* header, a route, and one hostile message;
 *   dead letters the broker made itself: rejected (orders), expired (emails), maxlen (audit),
 *   delivery_limit (jobs), and a BabelQueue queue with a user-configured DLX (notify);
 *   BabelQueue SDK dead letters (billing.dlq, notify.dlq), the urn alias, schema_version 2,
 *   raw and raw-wrapped undecodable bodies;
 *   a stream DLQ (events.dlq) with AceMQ copies and a plain producer's binary messages.
 */
#include "seed.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"

#define MIN_MS 60000L
#define HOUR_MS 3600000L

struct inc {
    struct seed *s;
    struct rng *r;
    const char *dlx, *orders_events, *notifications, *audit_dlx, *notify_dlx;
    const char *orders, *payments, *inventory, *jobs, *emails, *audit, *billing, *notify, *events;
    const char *orders_dlq, *payments_dlq, *inventory_dlq, *inventory_parked, *jobs_dlq,
        *emails_dlq, *audit_dead, *billing_dlq, *notify_dlq, *events_expired, *events_dlq;
};

static struct htable *args(const char *dlx, const char *dlrk)
{
    struct htable *a = htable_new();
    htable_add(a, "x-dead-letter-exchange", hval_cstring(dlx));
    if (dlrk)
        htable_add(a, "x-dead-letter-routing-key", hval_cstring(dlrk));
    return a;
}

/* An AceMQ source queue as the library declares it, with its .dlq (and .parked). */
static void acemq_source(struct inc *x, const char *q, const char *dlq, const char *parked,
                         const char *limit_arg, long limit)
{
    struct htable *a = args(x->dlx, dlq);
    if (limit_arg)
        htable_add(a, limit_arg, hval_int(HV_I64, limit));
    seed_queue(x->s, q, "quorum", a, 0);
    htable_free(a);
    seed_queue(x->s, dlq, "classic", NULL, 0);
    seed_bind(x->s, dlq, x->dlx, dlq);
    if (parked) {
        seed_queue(x->s, parked, "classic", NULL, 0);
        seed_bind(x->s, parked, x->dlx, parked);
    }
}

static void topology(struct inc *x)
{
    struct seed *s = x->s;
#define NAME(field, base) x->field = seed_name(s, base)
    NAME(dlx, "acemq.dlx");
    NAME(orders_events, "orders-events");
    NAME(notifications, "notifications");
    NAME(audit_dlx, "audit.dlx");
    NAME(notify_dlx, "notify.dlx");
    NAME(orders, "orders");
    NAME(payments, "payments");
    NAME(inventory, "inventory");
    NAME(jobs, "jobs");
    NAME(emails, "emails");
    NAME(audit, "audit");
    NAME(billing, "billing");
    NAME(notify, "notify");
    NAME(events, "events");
    NAME(orders_dlq, "orders.dlq");
    NAME(payments_dlq, "payments.dlq");
    NAME(inventory_dlq, "inventory.dlq");
    NAME(inventory_parked, "inventory.parked");
    NAME(jobs_dlq, "jobs.dlq");
    NAME(emails_dlq, "emails.dlq");
    NAME(audit_dead, "audit.dead");
    NAME(billing_dlq, "billing.dlq");
    NAME(notify_dlq, "notify.dlq");
    NAME(events_expired, "events.expired");
    NAME(events_dlq, "events.dlq");
#undef NAME
    seed_exchange(s, x->dlx, "direct");
    seed_exchange(s, seed_name(s, "acemq.retry"), "direct");
    seed_exchange(s, x->orders_events, "topic");
    seed_exchange(s, x->notifications, "topic");
    seed_exchange(s, x->audit_dlx, "fanout");
    seed_exchange(s, x->notify_dlx, "fanout");

    acemq_source(x, x->orders, x->orders_dlq, NULL, NULL, 0);
    seed_bind(s, x->orders, x->orders_events, "order.*");
    acemq_source(x, x->payments, x->payments_dlq, NULL, NULL, 0);
    acemq_source(x, x->inventory, x->inventory_dlq, x->inventory_parked, NULL, 0);
    acemq_source(x, x->jobs, x->jobs_dlq, NULL, "x-delivery-limit", 2);

    /* Queues whose owners configured dead-lettering by hand. */
    struct htable *a = args(x->dlx, x->emails_dlq);
    htable_add(a, "x-message-ttl", hval_int(HV_I64, 1));
    seed_queue(s, x->emails, "classic", a, 0);
    htable_free(a);
    seed_bind(s, x->emails, x->notifications, "email.*");
    seed_queue(s, x->emails_dlq, "classic", NULL, 0);
    seed_bind(s, x->emails_dlq, x->dlx, x->emails_dlq);

    a = args(x->audit_dlx, NULL);
    htable_add(a, "x-max-length", hval_int(HV_I64, 5));
    htable_add(a, "x-overflow", hval_cstring("drop-head"));
    seed_queue(s, x->audit, "classic", a, 0);
    htable_free(a);
    seed_queue(s, x->audit_dead, "classic", NULL, 0);
    seed_bind(s, x->audit_dead, x->audit_dlx, "");

    seed_queue(s, x->billing, "classic", NULL, 0);
    seed_queue(s, x->billing_dlq, "classic", NULL, 0);
    a = args(x->notify_dlx, NULL);
    seed_queue(s, x->notify, "classic", a, 0);
    htable_free(a);
    seed_queue(s, x->notify_dlq, "classic", NULL, 0);
    seed_bind(s, x->notify_dlq, x->notify_dlx, "");

    /* RabbitMQ 3.10 drops what a DLX routes to a stream, so expired events land in a classic
     * queue and are moved into the stream DLQ as a shovel would (see broker_made). */
    a = args("", x->events_expired);
    htable_add(a, "x-message-ttl", hval_int(HV_I64, 1));
    seed_queue(s, x->events, "classic", a, 0);
    htable_free(a);
    seed_queue(s, x->events_expired, "classic", NULL, 0);
    seed_queue(s, x->events_dlq, "stream", NULL, 0);
}

/* --- AceMQ set-aside copies -------------------------------------------------------------- */

static void setaside(struct inc *x, const char *dlq, const struct ace_msg *m)
{
    ace_publish(x->s, "", dlq, m);
    seed_expect_add(x->s, dlq, 1);
}

static const char *const pods[] = {"pod-1", "pod-2", "pod-3", "pod-4", "pod-7", "pod-9"};

static const char *origin(struct inc *x, const char *service, char *buf, size_t n)
{
    snprintf(buf, n, "%s@%s", service, RNG_PICK(x->r, pods));
    return buf;
}

/* Application headers most AceMQ producers here set: a tenant and a W3C traceparent. */
static struct htable *app_headers(struct inc *x)
{
    static const char *const tenants[] = {"acme", "globex", "initech", "umbrella"};
    struct htable *h = htable_new();
    htable_add(h, "tenant", hval_cstring(RNG_PICK(x->r, tenants)));
    unsigned char b[24];
    rng_bytes(x->r, b, sizeof b);
    char tp[64];
    int n = snprintf(tp, sizeof tp, "00-");
    for (int i = 0; i < 16; i++)
        n += snprintf(tp + n, sizeof tp - (size_t)n, "%02x", b[i]);
    n += snprintf(tp + n, sizeof tp - (size_t)n, "-");
    for (int i = 16; i < 24; i++)
        n += snprintf(tp + n, sizeof tp - (size_t)n, "%02x", b[i]);
    snprintf(tp + n, sizeof tp - (size_t)n, "-01");
    htable_add(h, "traceparent", hval_cstring(tp));
    return h;
}

/* Random values are drawn one statement at a time throughout: the order in which function
 * arguments and initializers are evaluated is unspecified, and the same seed must give the
 * same messages whatever the compiler. */
static int order_body(struct inc *x, char *out, size_t n, const char *order)
{
    int qty = (int)rng_range(x->r, 1, 4);
    int price = (int)rng_range(x->r, 199, 24999);
    int customer = (int)rng_range(x->r, 1, 9999);
    int sku = (int)rng_range(x->r, 1000, 9999);
    const char *currency = rng_range(x->r, 0, 1) ? "EUR" : "GBP";
    return snprintf(
        out, n,
        "{\"orderId\":\"%s\",\"customerId\":\"cus-%04d\",\"lines\":[{\"sku\":\"SKU-%d\","
        "\"qty\":%d,\"priceCents\":%d}],\"totalCents\":%d,\"currency\":\"%s\"}",
        order, customer, sku, qty, price, qty * price, currency);
}

static void gateway_timeout(struct inc *x, char *err, size_t n, int attempts)
{
    snprintf(err, n, "exhausted %d attempts: TimeoutException: gateway timed out after %d ms",
             attempts, (int)rng_range(x->r, 30001, 30150));
}

/* order.placed (orders.dlq) -> payment.requested (payments.dlq) -> payment.charge
 * (payments.dlq); with missing_middle the payment.requested is in no queue (it was handled). */
static void chain(struct inc *x, int k, bool missing_middle, bool fan_out)
{
    char a1[37], a2[37], a3[37], a4[37], order[24], body[400], err[600], org[64];
    rng_uuid(x->r, a1);
    rng_uuid(x->r, a2);
    rng_uuid(x->r, a3);
    snprintf(order, sizeof order, "A-%05d", 10400 + k);
    int64_t t0 = x->s->now_ms - rng_range(x->r, 20 * MIN_MS, 150 * MIN_MS);
    struct htable *h = app_headers(x);

    int n = order_body(x, body, sizeof body, order);
    snprintf(err, sizeof err,
             "gave up after 5 attempts: Payments::Declined: order %s: upstream "
             "payment did not settle within %d s",
             order, (int)rng_range(x->r, 300, 330));
    origin(x, "checkout", org, sizeof org);
    struct ace_msg m = {.id = a1,
                        .type = "order.placed",
                        .origin = org,
                        .error = err,
                        .attempt = 5,
                        .first_seen_ms = t0,
                        .content_type = "application/json",
                        .body = body,
                        .body_len = (size_t)n,
                        .headers = h};
    setaside(x, x->orders_dlq, &m);

    if (!missing_middle) {
        n = snprintf(body, sizeof body,
                     "{\"orderId\":\"%s\",\"amountCents\":%d,\"currency\":\"EUR\","
                     "\"method\":\"card\"}",
                     order, (int)rng_range(x->r, 500, 90000));
        gateway_timeout(x, err, sizeof err, 5);
        origin(x, "orders", org, sizeof org);
        int64_t t = t0 + rng_range(x->r, 80, 400);
        m = (struct ace_msg){.id = a2,
                             .type = "payment.requested",
                             .correlation = a1,
                             .causation = a1,
                             .origin = org,
                             .error = err,
                             .attempt = 5,
                             .first_seen_ms = t,
                             .content_type = "application/json",
                             .body = body,
                             .body_len = (size_t)n,
                             .headers = h};
        setaside(x, x->payments_dlq, &m);
    }
    n = snprintf(body, sizeof body,
                 "{\"orderId\":\"%s\",\"token\":\"tok_%08" PRIx64 "\",\"psp\":"
                 "\"adyen\"}",
                 order, rng_next(x->r) & 0xffffffffu);
    gateway_timeout(x, err, sizeof err, 3);
    origin(x, "payments", org, sizeof org);
    int64_t t3 = t0 + rng_range(x->r, 400, 900);
    m = (struct ace_msg){.id = a3,
                         .type = "payment.charge",
                         .correlation = a1,
                         .causation = a2,
                         .origin = org,
                         .error = err,
                         .attempt = 3,
                         .first_seen_ms = t3,
                         .content_type = "application/json",
                         .body = body,
                         .body_len = (size_t)n,
                         .headers = h};
    setaside(x, x->payments_dlq, &m);

    if (fan_out) {
        /* The order also asked the warehouse, whose consumer could not read the message. */
        rng_uuid(x->r, a4);
        n = snprintf(body, sizeof body, "{\"orderId\":\"%s\",\"sku\":\"SKU-4411\",\"qty\":2,",
                     order);
        snprintf(err, sizeof err,
                 "could not be decoded: JSON::ParserError: unexpected token at '%s'",
                 strstr(body, "\"qty\""));
        origin(x, "orders", org, sizeof org);
        int64_t t4 = t0 + rng_range(x->r, 50, 200);
        m = (struct ace_msg){.id = a4,
                             .type = "inventory.reserve",
                             .correlation = a1,
                             .causation = a1,
                             .origin = org,
                             .error = err,
                             .attempt = 1,
                             .first_seen_ms = t4,
                             .content_type = "application/json",
                             .body = body,
                             .body_len = (size_t)n,
                             .headers = h};
        setaside(x, x->inventory_parked, &m);
    }
    htable_free(h);
}

/* Independent failures, varied so that grouping has work to do. */
static void noise(struct inc *x, long count)
{
    for (long i = 0; i < count; i++) {
        char id[37], body[400], err[400], org[64], order[24];
        rng_uuid(x->r, id);
        snprintf(order, sizeof order, "A-%05ld", 20000 + i);
        struct htable *h = app_headers(x);
        int n = order_body(x, body, sizeof body, order);
        struct ace_msg m = {.id = id,
                            .content_type = "application/json",
                            .body = body,
                            .body_len = (size_t)n,
                            .headers = h,
                            .attempt = 5,
                            .first_seen_ms =
                                x->s->now_ms - rng_range(x->r, 5 * MIN_MS, 6 * HOUR_MS)};
        const char *dlq = x->orders_dlq;
        int64_t pick = rng_range(x->r, 0, 99);
        if (pick < 45) { /* the incident itself: the gateway, in the last 40 minutes */
            m.type = "payment.charge";
            m.origin = (origin(x, "payments", org, sizeof org));
            m.attempt = 3;
            m.first_seen_ms = x->s->now_ms - rng_range(x->r, 2 * MIN_MS, 40 * MIN_MS);
            gateway_timeout(x, err, sizeof err, 3);
            dlq = x->payments_dlq;
        } else if (pick < 65) {
            m.type = "order.placed";
            m.origin = origin(x, "checkout", org, 64);
            snprintf(err, sizeof err,
                     "exhausted 5 attempts: InventoryException: sku %d out of stock",
                     (int)rng_range(x->r, 1000, 9999));
        } else if (pick < 80) {
            m.type = "order.placed";
            m.origin = origin(x, "checkout", org, 64);
            m.attempt = 3;
            int net = (int)rng_range(x->r, 0, 9);
            int host = (int)rng_range(x->r, 2, 250);
            snprintf(err, sizeof err,
                     "gave up after 3 attempts: Faraday::ConnectionFailed: Failed "
                     "to open TCP connection to tax-api.internal:443 (Connection refused - "
                     "connect(2) for \"10.4.%d.%d\" port 443)",
                     net, host);
        } else if (pick < 90) {
            m.type = "payment.refund";
            m.origin = origin(x, "support", org, 64);
            m.attempt = 1;
            snprintf(err, sizeof err,
                     "the handler reported an unprocessable message: "
                     "ValidationException: amountCents must be positive, got -%d",
                     (int)rng_range(x->r, 1, 5000));
            dlq = x->payments_dlq;
        } else {
            m.type = "order.placed";
            m.origin = origin(x, "checkout", org, 64);
            m.attempt = 2;
            m.first_seen_ms = x->s->now_ms - rng_range(x->r, 6 * HOUR_MS + MIN_MS, 9 * HOUR_MS);
            snprintf(err, sizeof err,
                     "gave up on a message older than 21600 seconds: "
                     "Net::ReadTimeout: Net::ReadTimeout with #<TCPSocket:(closed)>");
        }
        m.error = err;
        setaside(x, dlq, &m);
        htable_free(h);
    }
}

static size_t avro_long(unsigned char *p, int64_t v)
{
    uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    size_t n = 0;
    do {
        p[n] = (unsigned char)(z & 0x7f);
        z >>= 7;
        if (z)
            p[n] |= 0x80;
        n++;
    } while (z);
    return n;
}

static size_t avro_string(unsigned char *p, const char *s)
{
    size_t n = avro_long(p, (int64_t)strlen(s));
    memcpy(p + n, s, strlen(s));
    return n + strlen(s);
}

/* One of each odd case. */
static void specials(struct inc *x)
{
    struct seed *s = x->s;
    char id[37], id2[37], body[512], err[300], org[64], at[32];
    unsigned char bin[256];
    size_t n;

    /* Replayed by a current library (RFC 3339 stamp), failed again. */
    rng_uuid(x->r, id);
    struct htable *h = app_headers(x);
    htable_add(h, "acemq-replayed-from", hval_cstring(x->payments_dlq));
    time_format_rfc3339(s->now_ms - 52 * MIN_MS - 17000, false, at);
    htable_add(h, "acemq-replayed-at", hval_cstring(at));
    htable_add(h, "acemq-replay-count", hval_int(HV_I32, 1));
    n = (size_t)snprintf(body, sizeof body,
                         "{\"orderId\":\"A-09817\",\"token\":\"tok_4f1c\","
                         "\"psp\":\"adyen\"}");
    gateway_timeout(x, err, sizeof err, 3);
    struct ace_msg m = {.id = id,
                        .type = "payment.charge",
                        .origin = (origin(x, "payments", org, sizeof org)),
                        .error = err,
                        .attempt = 3,
                        .first_seen_ms = s->now_ms - 5 * HOUR_MS,
                        .content_type = "application/json",
                        .body = body,
                        .body_len = n,
                        .headers = h};
    setaside(x, x->payments_dlq, &m);
    htable_free(h);

    /* Replayed twice, the second time by an older Java library (epoch-ms stamp, a long). */
    rng_uuid(x->r, id);
    h = htable_new();
    htable_add(h, "acemq-replayed-from", hval_cstring(x->orders_dlq));
    htable_add(h, "acemq-replayed-at", hval_int(HV_I64, s->now_ms - 3 * HOUR_MS));
    htable_add(h, "acemq-replay-count", hval_int(HV_I64, 2));
    n = (size_t)order_body(x, body, sizeof body, "A-07700");
    snprintf(err, sizeof err, "exhausted 5 attempts: InventoryException: sku 7700 out of stock");
    m = (struct ace_msg){.id = id,
                         .type = "order.placed",
                         .origin = "checkout@pod-3",
                         .error = err,
                         .attempt = 5,
                         .first_seen_ms = s->now_ms - 30 * HOUR_MS,
                         .content_type = "application/json",
                         .body = body,
                         .body_len = n,
                         .headers = h};
    setaside(x, x->orders_dlq, &m);
    htable_free(h);

    /* Encrypted: AE 01 <len> <key id> <12 nonce> <ciphertext> <16 tag>. */
    rng_uuid(x->r, id);
    static const char key[] = "payments-2026-01";
    bin[0] = 0xAE, bin[1] = 0x01, bin[2] = (unsigned char)(sizeof key - 1);
    memcpy(bin + 3, key, sizeof key - 1);
    n = 3 + sizeof key - 1;
    rng_bytes(x->r, bin + n, 12 + 61 + 16);
    n += 12 + 61 + 16;
    m = (struct ace_msg){.id = id,
                         .type = "card.vaulted",
                         .origin = origin(x, "vault", org, 64),
                         .error = "exhausted 5 attempts: AEADBadTagException: Tag mismatch!",
                         .attempt = 5,
                         .first_seen_ms = s->now_ms - 25 * MIN_MS,
                         .content_type = "application/vnd.acemq.encrypted",
                         .body = bin,
                         .body_len = n};
    setaside(x, x->payments_dlq, &m);

    /* Avro with a schema id the registry does not know: 00 <id be32> <record>. */
    rng_uuid(x->r, id);
    unsigned char *p = bin;
    *p++ = 0x00, *p++ = 0, *p++ = 0, *p++ = 0, *p++ = 17;
    p += avro_string(p, "A-08812");
    p += avro_string(p, "acme");
    p += avro_long(p, 4250);
    p += avro_string(p, "GBP");
    *p++ = 1;
    m = (struct ace_msg){.id = id,
                         .type = "order.placed",
                         .version = 3,
                         .origin = origin(x, "checkout-java", org, 64),
                         .error = "the handler reported an unprocessable message: "
                                  "SchemaNotFoundException: schema 17 is not in the registry",
                         .attempt = 1,
                         .first_seen_ms = s->now_ms - 70 * MIN_MS,
                         .content_type = "application/vnd.acemq.avro",
                         .body = bin,
                         .body_len = (size_t)(p - bin)};
    setaside(x, x->orders_dlq, &m);

    /* A claim check (AC 01 01 <store key>), a route, and a header from a newer library. */
    rng_uuid(x->r, id);
    rng_uuid(x->r, id2);
    n = (size_t)snprintf((char *)bin, sizeof bin,
                         "\xAC\x01\x01"
                         "claims/2026/01/%s",
                         id2);
    struct htable *route = htable_new(), *unknown = htable_new();
    htable_add(route, "x-acemq-route", hval_cstring("validate,reserve,ship"));
    htable_add(route, "x-acemq-route-position", hval_int(HV_I32, 1));
    htable_add(route, "x-acemq-route-id", hval_cstring(id2));
    htable_add(unknown, "x-acemq-future", hval_cstring("set by acemq-java 3.0"));
    char claim[80];
    snprintf(claim, sizeof claim, "s3://acme-claims/claims/2026/01/%s", id2);
    m = (struct ace_msg){.id = id,
                         .type = "inventory.snapshot",
                         .origin = "warehouse@pod-1",
                         .error = "retrying cannot help: ArgumentError: warehouse \"LHR-9\" is not "
                                  "configured",
                         .claim = claim,
                         .attempt = 1,
                         .first_seen_ms = s->now_ms - 2 * HOUR_MS,
                         .content_type = "application/json",
                         .body = bin,
                         .body_len = n,
                         .route = route,
                         .unknown = unknown};
    setaside(x, x->inventory_parked, &m);
    htable_free(route);
    htable_free(unknown);

    /* YAML the consumer could not parse. */
    rng_uuid(x->r, id);
    n = (size_t)snprintf(body, sizeof body, "sku: SKU-2210\nqty: 3\n  warehouse: LHR-2\n");
    m = (struct ace_msg){.id = id,
                         .type = "inventory.adjust",
                         .origin = "warehouse@pod-4",
                         .error = "could not be decoded: Psych::SyntaxError: (<unknown>): mapping "
                                  "values are not allowed in this context at line 3 column 12",
                         .attempt = 1,
                         .first_seen_ms = s->now_ms - 3 * HOUR_MS,
                         .content_type = "application/yaml",
                         .body = body,
                         .body_len = n};
    setaside(x, x->inventory_parked, &m);

    /* Hostile: terminal escapes and a bidi override in the type, the error and the body. */
    rng_uuid(x->r, id);
    n = (size_t)snprintf(body, sizeof body,
                         "\033[31mALERT\033[0m refund approved \u202Egnp.exe\u202C\r\n"
                         "\033]8;;https://evil.example/\aclick here\033]8;;\a\033[1A\033[2K"
                         "\033[?1049h\033P+q\033\\");
    m = (struct ace_msg){.id = id,
                         .type = "order.placed\033[2J\033[H\033]0;owned\a",
                         .origin = "checkout@pod-7\u202E",
                         .error = "exhausted 5 attempts: \u202ERuntimeException\u202C: "
                                  "\033[1;32mall good\033[0m\033[8m hidden",
                         .attempt = 5,
                         .first_seen_ms = s->now_ms - 33 * MIN_MS,
                         .content_type = "text/plain; charset=utf-8",
                         .body = body,
                         .body_len = n};
    setaside(x, x->orders_dlq, &m);
}

/* --- dead letters the broker makes -------------------------------------------------------- */

/* Takes count messages from queue with basic.get and rejects them (requeue=false). */
static void reject_all(struct inc *x, const char *queue, long count)
{
    uint64_t tag;
    for (long i = 0; i < count; i++) {
        if (!seed_get(x->s, queue, &tag, NULL))
            seed_fail("queue %s held %ld messages to reject, not %ld", queue, i, count);
        seed_reject(x->s, tag);
    }
}

static void ace_original(struct inc *x, const char *exchange, const char *rk, const char *type,
                         const char *service, const char *expiration, const char *body)
{
    char id[37], org[64];
    rng_uuid(x->r, id);
    origin(x, service, org, sizeof org);
    int64_t t = x->s->now_ms - rng_range(x->r, 1000, 20000);
    struct ace_msg m = {.id = id,
                        .type = type,
                        .origin = org,
                        .first_seen_ms = t,
                        .content_type = "application/json",
                        .body = body,
                        .body_len = strlen(body),
                        .expiration = expiration};
    ace_publish(x->s, exchange, rk, &m);
}

static void broker_made(struct inc *x)
{
    struct seed *s = x->s;
    char body[400];
    /* rejected: a consumer without AceMQ's library rejects (requeue=false) from orders. */
    for (int i = 0; i < 6; i++) {
        char order[16];
        snprintf(order, sizeof order, "A-%05d", 30000 + i);
        order_body(x, body, sizeof body, order);
        ace_original(x, x->orders_events, "order.placed", "order.placed", "checkout", NULL, body);
    }
    /* expired: 1 ms queue TTL; three also carry a per-message TTL (original-expiration). */
    for (int i = 0; i < 8; i++) {
        snprintf(body, sizeof body,
                 "{\"template\":\"receipt\",\"to\":\"customer%04d@example.com\"}",
                 (int)rng_range(x->r, 1, 9999));
        ace_original(x, x->notifications, "email.send", "email.send", "mailer",
                     i < 3 ? "60000" : NULL, body);
    }
    /* delivery_limit: the consumer keeps failing and requeueing. */
    for (int i = 0; i < 4; i++) {
        snprintf(body, sizeof body, "{\"report\":\"daily-settlement\",\"day\":\"2026-01-%02d\"}",
                 i + 1);
        ace_original(x, "", x->jobs, "report.generate", "scheduler", NULL, body);
    }
    /* maxlen: an audit trail capped at 5, oldest dropped. Plain AMQP: properties only. */
    for (int i = 0; i < 17; i++) {
        char mid[32];
        snprintf(mid, sizeof mid, "audit-%06d", 500 + i);
        int len =
            snprintf(body, sizeof body, "{\"actor\":\"user-%d\",\"action\":\"%s\",\"seq\":%d}",
                     (int)rng_range(x->r, 1, 40), i % 2 ? "login" : "refund.approve", 500 + i);
        struct props p;
        props_basic(&p, "application/json", mid);
        props_set_string(&p, PROP_type, "audit.entry", 11);
        props_set_string(&p, PROP_app_id, "audit-writer", 12);
        p.timestamp = (uint64_t)(s->now_ms / 1000 - 600 + i);
        p.present |= 1u << PROP_timestamp;
        seed_publish(s, "", x->audit, &p, NULL, body, (size_t)len);
        props_clear(&p);
    }
    /* BabelQueue through a DLX its user configured: x-death and no dead_letter block. */
    for (int i = 0; i < 4; i++) {
        char tid[37], mid[37];
        rng_uuid(x->r, tid);
        rng_uuid(x->r, mid);
        json_t *d = json_pack("{s:i,s:s}", "user_id", (int)rng_range(x->r, 1000, 99999), "period",
                              "weekly");
        struct babel_msg b = {.job = "urn:babel:notify:email.digest",
                              .trace_id = tid,
                              .data = d,
                              .id = mid,
                              .queue = "notify",
                              .lang = "node",
                              .schema_version = 1,
                              .created_at = s->now_ms - rng_range(x->r, 60000, 600000)};
        babel_publish(s, "", x->notify, &b);
    }
    /* A plain producer's binary messages: 4 expire from events, 2 go straight to the stream. */
    for (int i = 0; i < 6; i++) {
        unsigned char bin[256];
        char mid[32];
        size_t len = (size_t)rng_range(x->r, 48, 200);
        rng_bytes(x->r, bin, len);
        snprintf(mid, sizeof mid, "tlm-%08d", 7000 + i);
        struct props p;
        props_basic(&p, "application/octet-stream", mid);
        props_set_string(&p, PROP_type, "telemetry.batch", 15);
        props_set_string(&p, PROP_app_id, "legacy-exporter", 15);
        p.timestamp = (uint64_t)(s->now_ms / 1000 - 120 + i);
        p.present |= 1u << PROP_timestamp;
        seed_publish(s, "", i < 4 ? x->events : x->events_dlq, &p, NULL, bin, len);
        props_clear(&p);
    }
    seed_flush(s);

    reject_all(x, x->orders, 6);
    reject_all(x, x->notify, 4);
    /* jobs: get and requeue until the broker gives up on each (limit 2: the third return).
     * Dead-lettering is asynchronous: jobs can look empty before jobs.dlq is full. */
    uint64_t tag;
    int requeues = 0;
    while (seed_depth(s, x->jobs_dlq) < 4) {
        if (seed_get(s, x->jobs, &tag, NULL)) {
            seed_nack_requeue(s, tag, false);
            if (++requeues > 200)
                seed_fail("queue %s still delivers after 200 requeues: is x-delivery-limit "
                          "ignored?",
                          x->jobs);
        } else {
            struct timespec ts = {0, 20 * 1000000L};
            nanosleep(&ts, NULL);
        }
    }
    seed_expect_add(s, x->orders_dlq, 6);
    seed_expect_add(s, x->notify_dlq, 4);
    seed_expect_add(s, x->emails_dlq, 8);
    seed_expect_add(s, x->audit_dead, 12);
    seed_expect_add(s, x->audit, 5);
    seed_expect_add(s, x->jobs_dlq, 4);
    const char *wait[] = {x->orders_dlq, x->notify_dlq, x->emails_dlq, x->audit_dead, x->jobs_dlq};
    for (size_t i = 0; i < sizeof wait / sizeof *wait; i++)
        seed_wait_depth(s, wait[i], seed_expected(s, wait[i]), 30000);

    /* Move the expired events into the stream as a shovel would: every property and header
     * sent, acked only after the confirm. (The stream keeps x-first-death-* but drops the
     * x-death array: it stores no arrays or tables in headers.) */
    seed_wait_depth(s, x->events_expired, 4, 30000);
    uint64_t tags[4];
    for (int i = 0; i < 4; i++) {
        struct message m;
        if (!seed_get(s, x->events_expired, &tags[i], &m))
            seed_fail("queue %s emptied while moving it", x->events_expired);
        seed_publish(s, "", x->events_dlq, &m.props, m.headers_present ? m.headers : NULL,
                     m.body.data, m.body.len);
        message_free(&m);
    }
    seed_flush(s);
    for (int i = 0; i < 4; i++)
        seed_ack(s, tags[i]);
    seed_expect_add(s, x->events_dlq, 4);
    seed_wait_depth(s, x->events_dlq, seed_expected(s, x->events_dlq), 30000);
    printf(
        "the broker dead-lettered 6 rejected (orders), 8 expired (emails), 12 maxlen (audit), "
        "4 delivery_limit (jobs), 4 rejected BabelQueue (notify), 4 expired binary (events, moved "
        "into the stream %s)\n",
        x->events_dlq);
}

static void stream_dlq(struct inc *x)
{
    for (int i = 0; i < 4; i++) {
        char id[37], body[200], err[200], org[64];
        rng_uuid(x->r, id);
        int n = snprintf(body, sizeof body, "{\"customerId\":\"cus-%04d\",\"fields\":[\"email\"]}",
                         (int)rng_range(x->r, 1, 9999));
        snprintf(err, sizeof err,
                 "exhausted 3 attempts: SearchIndexException: index customers_v%d "
                 "is read-only (flood-stage watermark exceeded)",
                 (int)rng_range(x->r, 6, 7));
        origin(x, "crm", org, sizeof org);
        int64_t t = x->s->now_ms - rng_range(x->r, MIN_MS, 2 * HOUR_MS);
        struct ace_msg m = {.id = id,
                            .type = "customer.updated",
                            .origin = org,
                            .error = err,
                            .attempt = 3,
                            .first_seen_ms = t,
                            .content_type = "application/json",
                            .body = body,
                            .body_len = (size_t)n};
        setaside(x, x->events_dlq, &m);
    }
    seed_expect_add(x->s, x->events_dlq, 2); /* the two binary ones published straight there */
}

static void notes(struct inc *x)
{
    const struct {
        const char *queue, *note;
    } n[] = {
#define N(field, text) {x->field, text}
        N(orders, "AceMQ source (quorum, DLX acemq.dlx)"),
        N(orders_dlq, "AceMQ set-aside copies; x-death rejected; hostile; avro; replayed"),
        N(payments, "AceMQ source (quorum, DLX acemq.dlx)"),
        N(payments_dlq, "AceMQ set-aside copies (gateway timeouts); encrypted; replayed"),
        N(inventory, "AceMQ source (quorum, DLX acemq.dlx)"),
        N(inventory_dlq, "empty"),
        N(inventory_parked, "AceMQ undecodable; claim check, route, x-acemq-future"),
        N(jobs, "AceMQ source (quorum, x-delivery-limit 2)"),
        N(jobs_dlq, "x-death delivery_limit"),
        N(emails, "classic, x-message-ttl 1, DLX acemq.dlx"),
        N(emails_dlq, "x-death expired (3 with original-expiration)"),
        N(audit, "classic, x-max-length 5 drop-head: the 5 newest"),
        N(audit_dead, "x-death maxlen (plain AMQP)"),
        N(billing, "BabelQueue source"),
        N(billing_dlq, "BabelQueue SDK dead letters; urn alias; schema 2; raw-wrapped"),
        N(notify, "BabelQueue source, DLX notify.dlx"),
        N(notify_dlq, "BabelQueue SDK dead letters; x-death rejected; raw body"),
        N(events, "classic, x-message-ttl 1, DLX to events.expired"),
        N(events_expired, "emptied into events.dlq (shovel-style)"),
        N(events_dlq, "stream: AceMQ copies; plain binary (x-death lost)"),
#undef N
    };
    for (size_t i = 0; i < sizeof n / sizeof *n; i++)
        seed_note(x->s, n[i].queue, n[i].note);
}

void scenario_incident(struct seed *s)
{
    struct inc x = {.s = s, .r = &s->rng};
    long count = s->cfg->count < 0 ? 40 : s->cfg->count;
    topology(&x);
    notes(&x);
    for (int k = 0; k < 6; k++)
        chain(&x, k, false, k == 0);
    chain(&x, 6, true, false);
    noise(&x, count);
    specials(&x);
    struct babel_queues bq = {x.billing, x.billing_dlq, x.notify, x.notify_dlq};
    babel_sdk_dead_letters(s, &bq);
    stream_dlq(&x);
    seed_flush(s);
    printf("published %" PRIu64 " dead letters straight to their DLQs, as the AceMQ library and "
           "the BabelQueue SDKs set them aside\n",
           s->published);
    broker_made(&x);
}
