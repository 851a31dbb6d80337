/*
 * dlqx-seed: fills a real RabbitMQ node with dead letters made the way production makes them
 * (AceMQ set-aside copies, BabelQueue SDK dead letters, and dead letters the broker itself
 * made: rejected, expired, maxlen, delivery_limit), for dlqx's tests, demo and benchmarks.
 *
 * This file: options, the random source, AceMQ's wire form (through the core's envelope and
 * acemq_to_headers), and the bulk, quorum-limit and stream scenarios. The incident scenario
 * is in seed_incident.c, BabelQueue's wire form and SDK dead letters in seed_babel.c, the AMQP
 * session in seed_amqp.c. Everything but what the broker stamps follows from --seed and the
 * clock (DLQX_NOW fixes the clock).
 */
#include "seed.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "acemq.h"
#include "envelope.h"
#include "util.h"

static const char usage[] =
    "usage: dlqx-seed --url amqp://USER@HOST:PORT/VHOST --password-file FILE\n"
    "                 [--scenario incident|bulk|quorum-limit|stream|frameworks|file|flood]\n"
    "                 [--count N] [--size BYTES] [--seed S] [--prefix P]\n"
    "                 [--queue-type classic|quorum] [--returns R] [--window N]\n"
    "                 [--fixtures DIR] [--from FILE...] [--declare FILE] [--x-death MODE]\n"
    "\n"
    "Fills a RabbitMQ node with realistic dead letters for dlqx (see tools/README.md).\n"
    "  --url            the broker (default $DLQX_URL); never put the password in it\n"
    "  --password-file  a file whose first line is the password (default $DLQX_PASSWORD_FILE)\n"
    "  --scenario       incident (default): a 3 a.m. incident across many DLQs\n"
    "                   bulk: N AceMQ dead letters (default 100000) in bulk.dlq, for benchmarks\n"
    "                   quorum-limit: N (default 10) in quorum qlimit.dlq, delivery limit 3,\n"
    "                                 each already delivered and requeued --returns times\n"
    "                   stream: N (default 10000) dead letters in the stream stream.dlq\n"
    "                   frameworks: every framework's dead letters from the fixtures\n"
    "                               (fixtures/<framework>/*.jsonl), each in its DLQ\n"
    "                   file: the records of the --from snapshot files, as recorded\n"
    "                   flood: N (default 25000) messages that expire at once in flood,\n"
    "                          dead-lettered by the broker through flood.dlx to flood.dlq\n"
    "  --count N        how many (incident: the independent failures, default 40)\n"
    "  --size BYTES     body size for bulk, quorum-limit, stream, flood (default 1024, >= 128)\n"
    "  --seed S         the random seed (default 1): same seed, same messages\n"
    "  --prefix P       prepended to every queue and exchange name (default none)\n"
    "  --queue-type T   bulk and flood: the DLQ is classic (default) or quorum\n"
    "  --returns R      quorum-limit only: requeues per message, 0..3 (default 2; at 3 the\n"
    "                   next requeue, a browse's included, makes the broker drop it)\n"
    "  --window N       publishes in flight awaiting confirms (default 1000)\n"
    "  --fixtures DIR   frameworks only: the fixtures directory (default $DLQX_FIXTURES,\n"
    "                   else the source tree's)\n"
    "  --from FILE...   file only: snapshot files to publish (repeatable; the arguments\n"
    "                   after the options are more)\n"
    "  --declare FILE   file only: declare the queue each record of FILE names, bound to its\n"
    "                   exchange by its routing key (where copies are expected; repeatable)\n"
    "  --x-death MODE   frameworks, file: a record with an x-death is published with it\n"
    "                   (keep), or dead-lettered by the broker through a DLX (broker);\n"
    "                   auto (default): keep below RabbitMQ 3.13, broker from 3.13\n"
    "exit status: 0 done and verified, 1 failure (one sentence on stderr), 2 usage\n";

/* --- random ------------------------------------------------------------------------- */

uint64_t rng_next(struct rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

int64_t rng_range(struct rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

void rng_bytes(struct rng *r, void *out, size_t n)
{
    unsigned char *p = out;
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(rng_next(r) >> 24);
}

void rng_uuid(struct rng *r, char out[37])
{
    unsigned char b[16];
    rng_bytes(r, b, sizeof b);
    b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
    b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

const char *rng_pick(struct rng *r, const char *const *items, size_t n)
{
    return items[rng_next(r) % n];
}

/* --- producers' wire forms ------------------------------------------------------------ */

void props_clear(struct props *p)
{
#define X(name) bytes_free(&p->name);
    PROP_STRING_LIST(X)
#undef X
    memset(p, 0, sizeof *p);
}

void props_basic(struct props *p, const char *content_type, const char *message_id)
{
    memset(p, 0, sizeof *p);
    if (content_type)
        props_set_string(p, PROP_content_type, content_type, strlen(content_type));
    if (message_id)
        props_set_string(p, PROP_message_id, message_id, strlen(message_id));
    p->delivery_mode = 2;
    p->present |= 1u << PROP_delivery_mode;
}

/* A borrowed view of a C string (NULL: absent). */
static struct bytes view(const char *s)
{
    return s ? (struct bytes){strlen(s), (unsigned char *)(uintptr_t)s} : (struct bytes){0, NULL};
}

void ace_publish(struct seed *s, const char *exchange, const char *rk, const struct ace_msg *m)
{
    struct envelope_init in;
    memset(&in, 0, sizeof in);
    in.id = view(m->id);
    in.type = view(m->type);
    in.correlation_id = view(m->correlation);
    in.causation_id = view(m->causation);
    in.origin = view(m->origin);
    in.claim = view(m->claim);
    in.version = m->version ? m->version : 1;
    in.attempt = m->attempt ? m->attempt : 1;
    in.first_seen_ms = m->first_seen_ms;
    in.headers = m->headers;
    in.reserved_unknown = m->unknown;
    in.route = m->route;
    in.refuse_reserved = true; /* as Envelope.new does */
    const struct envelope *e, *out;
    struct error err;
    if (envelope_new(&in, &e, &err) != ST_OK)
        seed_fail("building an AceMQ envelope failed: %s", err.msg);
    out = e;
    if (m->error) {
        /* The set-aside copy: the same envelope with(error: reason); attempt not advanced. */
        struct env_change c = {.field = EF_ERROR, .text = view(m->error)};
        if (envelope_with(e, &c, 1, &out, &err) != ST_OK)
            seed_fail("building an AceMQ set-aside copy failed: %s", err.msg);
    }
    struct bytes key = view(rk);
    struct htable *h = acemq_to_headers(out, &key);
    struct props p;
    props_basic(&p, m->content_type, m->id);
    if (m->expiration)
        props_set_string(&p, PROP_expiration, m->expiration, strlen(m->expiration));
    seed_publish(s, exchange, rk, &p, h, m->body, m->body_len);
    props_clear(&p);
    htable_free(h);
    if (out != e)
        envelope_free(out);
    envelope_free(e);
}

/* --- bulk, quorum-limit, stream -------------------------------------------------------- */

static const char *const bulk_types[] = {"order.placed", "payment.charge", "invoice.issued",
                                         "shipment.requested", "stock.reserved"};
static const char *const bulk_origins[] = {"checkout@pod-7", "checkout@pod-3", "payments@pod-2",
                                           "billing@pod-5", "warehouse@pod-1"};

/* One AceMQ set-aside copy of exactly size body bytes, for the benchmark queues. */
static void bulk_one(struct seed *s, const char *dlq, long i, size_t size, char *body)
{
    struct rng *r = &s->rng;
    char id[37], err[200];
    rng_uuid(r, id);
    int customer = (int)rng_range(r, 1, 9999);
    int total = (int)rng_range(r, 100, 250000);
    int n = snprintf(body, size + 1,
                     "{\"orderId\":\"B-%07ld\",\"seq\":%ld,\"customer\":\"cus-%04d\","
                     "\"totalCents\":%d,\"pad\":\"",
                     i + 1, i, customer, total);
    static const char alpha[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_";
    for (size_t k = (size_t)n; k < size - 2; k++)
        body[k] = alpha[rng_next(r) & 63];
    memcpy(body + size - 2, "\"}", 3);
    int attempts = (int)rng_range(r, 3, 5);
    switch (rng_next(r) % 4) {
    case 0:
        snprintf(err, sizeof err,
                 "exhausted %d attempts: TimeoutException: gateway timed out "
                 "after %d ms",
                 attempts, (int)rng_range(r, 30000, 30150));
        break;
    case 1:
        snprintf(err, sizeof err, "exhausted %d attempts: InventoryException: sku %d out of stock",
                 attempts, (int)rng_range(r, 1000, 9999));
        break;
    case 2:
        snprintf(err, sizeof err,
                 "gave up after %d attempts: Net::ReadTimeout: Net::ReadTimeout "
                 "with #<TCPSocket:(closed)>",
                 attempts);
        break;
    default:
        snprintf(err, sizeof err,
                 "the handler reported an unprocessable message: "
                 "ValidationException: totalCents must be positive, got -%d",
                 (int)rng_range(r, 1, 500));
        break;
    }
    const char *type = RNG_PICK(r, bulk_types);
    const char *origin = RNG_PICK(r, bulk_origins);
    int64_t first_seen = s->now_ms - rng_range(r, 60000, 6 * 3600000L);
    struct ace_msg m = {
        .id = id,
        .type = type,
        .origin = origin,
        .error = err,
        .attempt = attempts,
        .first_seen_ms = first_seen,
        .content_type = "application/json",
        .body = body,
        .body_len = size,
    };
    ace_publish(s, "", dlq, &m);
}

/* AceMQ's standard source-queue arguments (quorum, dead-lettering to acemq.dlx). */
static struct htable *acemq_source_args(struct seed *s, const char *dlq)
{
    struct htable *a = htable_new();
    htable_add(a, "x-dead-letter-exchange", hval_cstring(seed_name(s, "acemq.dlx")));
    htable_add(a, "x-dead-letter-routing-key", hval_cstring(dlq));
    return a;
}

static void fill(struct seed *s, const char *dlq, long count, size_t size, const char *what)
{
    char *body = xmalloc(size + 1);
    double t0 = clock_mono_s();
    for (long i = 0; i < count; i++)
        bulk_one(s, dlq, i, size, body);
    seed_flush(s);
    double dt = clock_mono_s() - t0;
    free(body);
    printf("published %ld %s of %zu bytes to %s in %.2f s (%.0f msg/s, confirmed)\n", count, what,
           size, dlq, dt, dt > 0 ? (double)count / dt : 0.0);
}

static void scenario_bulk(struct seed *s, long count, size_t size)
{
    const char *qt = s->cfg->queue_type ? s->cfg->queue_type : "classic";
    if (strcmp(qt, "classic") != 0 && strcmp(qt, "quorum") != 0)
        seed_fail("--queue-type is classic or quorum, not %s", qt);
    const char *src = seed_name(s, "bulk"), *dlq = seed_name(s, "bulk.dlq");
    seed_exchange(s, seed_name(s, "acemq.dlx"), "direct");
    struct htable *a = acemq_source_args(s, dlq);
    seed_queue(s, src, "quorum", a, 0);
    seed_note(s, src, "AceMQ source (replay target)");
    htable_free(a);
    seed_queue(s, dlq, qt, NULL, count);
    seed_note(s, dlq, "AceMQ set-aside copies");
    seed_bind(s, dlq, seed_name(s, "acemq.dlx"), dlq);
    fill(s, dlq, count, size, "AceMQ set-aside copies");
}

static void scenario_stream(struct seed *s, long count, size_t size)
{
    const char *dlq = seed_name(s, "stream.dlq");
    seed_queue(s, dlq, "stream", NULL, count);
    seed_note(s, dlq, "AceMQ set-aside copies");
    fill(s, dlq, count, size, "AceMQ set-aside copies");
}

/* Every message delivered and requeued `returns` times, so that x-delivery-count is that
 * and a browse that requeues adds to it. basic.get, not a consumer: a consumer would be
 * handed the requeued messages again at once. */
static void scenario_qlimit(struct seed *s, long count, size_t size, int returns)
{
    const char *dlq = seed_name(s, "qlimit.dlq");
    struct htable *a = htable_new();
    htable_add(a, "x-delivery-limit", hval_int(HV_I64, 3));
    seed_queue(s, dlq, "quorum", a, count);
    seed_note(s, dlq, "x-delivery-limit 3, no DLX: over the limit is dropped");
    htable_free(a);
    fill(s, dlq, count, size, "AceMQ set-aside copies");
    for (int round = 0; count > 0 && round < returns; round++) {
        uint64_t tag = 0, last = 0;
        long got = 0;
        int64_t seen_min = INT64_MAX, seen_max = -1;
        struct message msg;
        while (got < count && seed_get(s, dlq, &tag, &msg)) {
            int64_t dc = 0;
            hval_as_int64_lenient(htable_get(msg.headers, "x-delivery-count"), &dc);
            seen_min = dc < seen_min ? dc : seen_min;
            seen_max = dc > seen_max ? dc : seen_max;
            message_free(&msg);
            last = tag, got++;
        }
        if (got != count)
            seed_fail("round %d: basic.get on %s gave %ld of %ld messages", round + 1, dlq, got,
                      count);
        if (seen_min != round || seen_max != round)
            seed_fail("round %d: x-delivery-count was %" PRId64 "..%" PRId64 ", expected %d",
                      round + 1, seen_min, seen_max, round);
        seed_nack_requeue(s, last, true);
        seed_wait_depth(s, dlq, count, 10000);
    }
    /* RabbitMQ 3.10 drops (no DLX here) a message whose count goes above the limit. */
    printf("delivered and requeued every message of %s %d times: x-delivery-count is %d of "
           "x-delivery-limit 3; it survives %d more requeue%s (a browse's included) and the one "
           "after drops it\n",
           dlq, returns, returns, 3 - returns, 3 - returns == 1 ? "" : "s");
}

/* count messages through a queue whose x-message-ttl 0 dead-letters each at once (reason
 * expired) through a direct exchange to the DLQ, in order: the broker's own dead-lettering at
 * its own rate, for follow's tests and benchmark (the queues may exist already, empty, with the
 * same arguments: follow taps the DLQ before the flood). Ids flood-0000001.., in order. */
static void scenario_flood(struct seed *s, long count, size_t size)
{
    const char *src = seed_name(s, "flood"), *dlq = seed_name(s, "flood.dlq");
    const char *dlx = seed_name(s, "flood.dlx");
    seed_exchange(s, dlx, "direct");
    seed_queue(s, dlq, s->cfg->queue_type ? s->cfg->queue_type : "classic", NULL, count);
    seed_note(s, dlq, "expired from flood, in order");
    seed_bind(s, dlq, dlx, dlq);
    struct htable *a = htable_new();
    htable_add(a, "x-message-ttl", hval_int(HV_I64, 0));
    htable_add(a, "x-dead-letter-exchange", hval_cstring(dlx));
    htable_add(a, "x-dead-letter-routing-key", hval_cstring(dlq));
    seed_queue(s, src, "classic", a, 0);
    seed_note(s, src, "x-message-ttl 0: dead-letters all it gets");
    htable_free(a);
    char *body = xmalloc(size + 1);
    struct props p;
    char id[32];
    double t0 = clock_mono_s();
    for (long i = 0; i < count; i++) {
        int n = snprintf(body, size + 1, "{\"seq\":%ld,\"pad\":\"", i + 1);
        memset(body + n, 'x', size - 2 - (size_t)n);
        memcpy(body + size - 2, "\"}", 3);
        snprintf(id, sizeof id, "flood-%07ld", i + 1);
        props_basic(&p, "application/json", id);
        seed_publish(s, "", src, &p, NULL, body, size);
        props_clear(&p);
    }
    seed_flush(s);
    double dt = clock_mono_s() - t0;
    free(body);
    printf("published %ld messages of %zu bytes to %s in %.2f s (%.0f msg/s, confirmed)\n", count,
           size, src, dt, dt > 0 ? (double)count / dt : 0.0);
}

int main(int argc, char **argv)
{
    struct config cfg = {
        .url = getenv("DLQX_URL"),
        .password_file = getenv("DLQX_PASSWORD_FILE"),
        .scenario = "incident",
        .count = -1,
        .size = 1024,
        .seed = 1,
        .prefix = "",
        .window = 1000,
        .returns = -1,
    };
    static const struct option opts[] = {
        {"url", required_argument, NULL, 'u'},      {"password-file", required_argument, NULL, 'p'},
        {"scenario", required_argument, NULL, 's'}, {"count", required_argument, NULL, 'n'},
        {"size", required_argument, NULL, 'z'},     {"seed", required_argument, NULL, 'S'},
        {"prefix", required_argument, NULL, 'P'},   {"queue-type", required_argument, NULL, 't'},
        {"window", required_argument, NULL, 'w'},   {"returns", required_argument, NULL, 'r'},
        {"fixtures", required_argument, NULL, 'F'}, {"from", required_argument, NULL, 'f'},
        {"declare", required_argument, NULL, 'd'},  {"x-death", required_argument, NULL, 'x'},
        {"help", no_argument, NULL, 'h'},           {NULL, 0, NULL, 0},
    };
    int c;
    char *end;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'u':
            cfg.url = optarg;
            break;
        case 'p':
            cfg.password_file = optarg;
            break;
        case 's':
            cfg.scenario = optarg;
            break;
        case 'P':
            cfg.prefix = optarg;
            break;
        case 't':
            cfg.queue_type = optarg;
            break;
        case 'r':
            if (strlen(optarg) != 1 || optarg[0] < '0' || optarg[0] > '3') {
                fprintf(stderr, "dlqx-seed: --returns takes 0, 1, 2 or 3, not \"%s\"\n", optarg);
                return 2;
            }
            cfg.returns = optarg[0] - '0';
            break;
        case 'n':
        case 'z':
        case 'w':
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (errno || *end || !*optarg || v < 0 || (c == 'z' && (v < 128 || v > 64 << 20)) ||
                (c == 'w' && (v < 1 || v > 65535))) {
                fprintf(stderr, "dlqx-seed: --%s takes %s, not \"%s\"\n",
                        c == 'n'   ? "count"
                        : c == 'z' ? "size"
                                   : "window",
                        c == 'n'   ? "a count"
                        : c == 'z' ? "a byte size from 128 to 64 MiB"
                                   : "a number from 1 to 65535",
                        optarg);
                return 2;
            }
            *(c == 'n' ? &cfg.count : c == 'z' ? &cfg.size : &cfg.window) = v;
            break;
        case 'S':
            errno = 0;
            cfg.seed = strtoull(optarg, &end, 10);
            if (errno || *end || !*optarg) {
                fprintf(stderr, "dlqx-seed: --seed takes an unsigned integer, not \"%s\"\n",
                        optarg);
                return 2;
            }
            break;
        case 'F':
            cfg.fixtures = optarg;
            break;
        case 'f':
        case 'd': {
            char ***list = c == 'f' ? &cfg.from : &cfg.declare;
            size_t *n = c == 'f' ? &cfg.nfrom : &cfg.ndeclare;
            size_t cap = *n;
            xgrow((void **)list, &cap, *n + 1, sizeof **list);
            (*list)[(*n)++] = optarg;
            break;
        }
        case 'x':
            if (strcmp(optarg, "auto") && strcmp(optarg, "keep") && strcmp(optarg, "broker")) {
                fprintf(stderr, "dlqx-seed: --x-death takes auto, keep or broker, not \"%s\"\n",
                        optarg);
                return 2;
            }
            cfg.x_death = optarg;
            break;
        case 'h':
            fputs(usage, stdout);
            return 0;
        default:
            fputs(usage, stderr);
            return 2;
        }
    }
    enum { SC_INCIDENT, SC_BULK, SC_QLIMIT, SC_STREAM, SC_FRAMEWORKS, SC_FILE, SC_FLOOD } sc;
    bool file_sc = !strcmp(cfg.scenario, "file");
    for (; file_sc && optind < argc; optind++) {
        size_t cap = cfg.nfrom;
        xgrow((void **)&cfg.from, &cap, cfg.nfrom + 1, sizeof *cfg.from);
        cfg.from[cfg.nfrom++] = argv[optind];
    }
    if (optind < argc || !cfg.url || !cfg.password_file) {
        fprintf(stderr, "dlqx-seed: %s\n%s",
                optind < argc ? "unexpected argument" : "--url and --password-file are required",
                usage);
        free(cfg.from), free(cfg.declare);
        return 2;
    }
    if (!strcmp(cfg.scenario, "incident"))
        sc = SC_INCIDENT;
    else if (!strcmp(cfg.scenario, "bulk"))
        sc = SC_BULK;
    else if (!strcmp(cfg.scenario, "quorum-limit"))
        sc = SC_QLIMIT;
    else if (!strcmp(cfg.scenario, "stream"))
        sc = SC_STREAM;
    else if (!strcmp(cfg.scenario, "frameworks"))
        sc = SC_FRAMEWORKS;
    else if (file_sc)
        sc = SC_FILE;
    else if (!strcmp(cfg.scenario, "flood"))
        sc = SC_FLOOD;
    else {
        fprintf(stderr,
                "dlqx-seed: unknown scenario \"%s\" (incident, bulk, quorum-limit, stream, "
                "frameworks, file, flood)\n",
                cfg.scenario);
        free(cfg.from), free(cfg.declare);
        return 2;
    }
    const char *misplaced = cfg.fixtures && sc != SC_FRAMEWORKS ? "--fixtures applies to the "
                                                                  "frameworks scenario only"
                            : (cfg.nfrom || cfg.ndeclare) && sc != SC_FILE
                                ? "--from and --declare apply to the file scenario only"
                            : sc == SC_FILE && !cfg.nfrom ? "the file scenario needs --from FILE"
                            : cfg.x_death && sc != SC_FILE && sc != SC_FRAMEWORKS
                                ? "--x-death applies to the frameworks and file scenarios only"
                                : NULL;
    if (misplaced) {
        fprintf(stderr, "dlqx-seed: %s\n", misplaced);
        free(cfg.from), free(cfg.declare);
        return 2;
    }
    if (cfg.queue_type && sc != SC_BULK && sc != SC_FLOOD) {
        fprintf(stderr, "dlqx-seed: --queue-type applies to the bulk and flood scenarios only\n");
        free(cfg.from), free(cfg.declare);
        return 2;
    }
    if (cfg.returns >= 0 && sc != SC_QLIMIT) {
        fprintf(stderr, "dlqx-seed: --returns applies to the quorum-limit scenario only\n");
        free(cfg.from), free(cfg.declare);
        return 2;
    }

    struct seed s;
    memset(&s, 0, sizeof s);
    s.rng.s = cfg.seed;
    s.window = (size_t)cfg.window;
    s.now_ms = clock_now_ms();
    double t0 = clock_mono_s();
    seed_connect(&s, &cfg);
    size_t size = (size_t)cfg.size;
    switch (sc) {
    case SC_INCIDENT:
        scenario_incident(&s);
        break;
    case SC_BULK:
        scenario_bulk(&s, cfg.count < 0 ? 100000 : cfg.count, size);
        break;
    case SC_QLIMIT:
        scenario_qlimit(&s, cfg.count < 0 ? 10 : cfg.count, size,
                        cfg.returns < 0 ? 2 : (int)cfg.returns);
        break;
    case SC_STREAM:
        scenario_stream(&s, cfg.count < 0 ? 10000 : cfg.count, size);
        break;
    case SC_FRAMEWORKS:
        scenario_frameworks(&s);
        break;
    case SC_FILE:
        scenario_file(&s);
        break;
    case SC_FLOOD:
        scenario_flood(&s, cfg.count < 0 ? 25000 : cfg.count, size);
        break;
    }
    seed_flush(&s);
    printf("\n");
    bool ok = seed_report(&s);
    printf("\nscenario %s, seed %" PRIu64 "%s%s%s: %" PRIu64 " messages published in %.1f s%s\n",
           cfg.scenario, cfg.seed, *cfg.prefix ? ", prefix \"" : "", cfg.prefix,
           *cfg.prefix ? "\"" : "", s.published, clock_mono_s() - t0,
           ok ? ", depths verified" : "");
    seed_close(&s);
    free(cfg.from), free(cfg.declare);
    return ok ? 0 : 1;
}
