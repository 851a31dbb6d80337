/*
 * seed: the parts of dlqx-seed that its scenarios share — the configuration, a deterministic
 * random source, the AMQP session (topology declares, confirmed publishing, basic.get with
 * reject/nack, depth checks and the final table) and the producers' wire forms (AceMQ and
 * BabelQueue), built with the core library so that they are what the libraries write.
 *
 * dlqx-seed is a batch tool: every failure is fatal. seed_fail prints one sentence on stderr
 * and exits 1.
 */
#ifndef DLQX_SEED_H
#define DLQX_SEED_H

#include <amqp.h>
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hval.h"
#include "message.h"

struct config {
    const char *url;           /* amqp://USER@HOST:PORT/VHOST, never with a password */
    const char *password_file; /* the password: the first line of this file */
    const char *scenario;      /* incident, bulk, quorum-limit, stream, frameworks, file */
    long count;                /* -1: the scenario's default */
    long size;                 /* body bytes (bulk, stream) */
    uint64_t seed;
    const char *prefix;     /* prepended to every queue and exchange name */
    const char *queue_type; /* bulk: classic or quorum */
    long window;            /* publishes awaiting confirms at most */
    long returns;           /* quorum-limit: requeues per message; -1: default */
    const char *fixtures;   /* frameworks: the fixtures directory; NULL: $DLQX_FIXTURES, else
                               the source tree's (FIXTURES_DIR) */
    char **from;            /* file: the snapshot files to publish (borrowed from argv) */
    size_t nfrom;
    char **declare; /* file: snapshot files whose records name queues to declare */
    size_t ndeclare;
    const char *x_death; /* frameworks, file: auto (NULL), keep or broker */
};

/* splitmix64: the same --seed gives the same ids, payloads and timings. */
struct rng {
    uint64_t s;
};

uint64_t rng_next(struct rng *r);
/* Uniform in [lo, hi]. */
int64_t rng_range(struct rng *r, int64_t lo, int64_t hi);
/* A random version-4 UUID, lower case. */
void rng_uuid(struct rng *r, char out[37]);
void rng_bytes(struct rng *r, void *out, size_t n);
/* One of n strings. */
const char *rng_pick(struct rng *r, const char *const *items, size_t n);
#define RNG_PICK(r, arr) rng_pick((r), (arr), sizeof(arr) / sizeof *(arr))

struct made_queue {
    char *name;
    const char *type; /* classic, quorum, stream */
    long expected;    /* messages expected at the end */
    const char *note; /* what it holds, for the table (static), or NULL */
};

struct seed {
    const struct config *cfg;
    amqp_connection_state_t conn;
    amqp_channel_t rpc; /* declares, passive declares, basic.get, acks */
    amqp_channel_t pub; /* confirm mode: publishing only */
    /* Publisher confirms: tags next_tag-1 .. low are in flight; done[] is a ring of window
     * slots marking tags the broker has confirmed out of order. */
    uint64_t next_tag, low;
    unsigned char *done;
    size_t window;
    uint64_t nacked, returned;
    char returned_to[256];
    char blocked[256]; /* why the broker blocked publishing; empty when it has not */
    uint64_t published;
    amqp_pool_t pool; /* properties of one publish; recycled after each */
    struct rng rng;
    int64_t now_ms; /* the scenario's "now": DLQX_NOW or the clock, read once */
    struct made_queue *queues;
    size_t nqueues, capqueues;
    char **names; /* interned prefixed names, freed by seed_close */
    size_t nnames, capnames;
};

void seed_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* Connects, logs in (heartbeat 30), opens the declare channel and the confirm channel. */
void seed_connect(struct seed *s, const struct config *cfg);
void seed_close(struct seed *s);

/* prefix + base, owned by s. */
const char *seed_name(struct seed *s, const char *base);

/* Durable exchange of the given type; a conflicting existing one is fatal. */
void seed_exchange(struct seed *s, const char *name, const char *type);
/* Durable queue of type classic/quorum/stream (x-queue-type is added for the latter two)
 * with extra arguments (may be NULL). It must be new or empty. expected: the depth the
 * final table checks. */
void seed_queue(struct seed *s, const char *name, const char *type, const struct htable *args,
                long expected);
void seed_bind(struct seed *s, const char *queue, const char *exchange, const char *key);

/* Publishes through the confirm channel (mandatory), keeping at most s->window unconfirmed.
 * headers may be NULL (no headers property). */
void seed_publish(struct seed *s, const char *exchange, const char *rk, const struct props *p,
                  const struct htable *headers, const void *body, size_t len);
/* Waits until every publish is confirmed; a nack or an unroutable message is fatal. */
void seed_flush(struct seed *s);

/* basic.get with manual ack on the declare channel: false when the queue is empty. out (when
 * not NULL) receives the message, which the caller frees with message_free. */
bool seed_get(struct seed *s, const char *queue, uint64_t *tag, struct message *out);
void seed_ack(struct seed *s, uint64_t tag);
void seed_reject(struct seed *s, uint64_t tag); /* requeue=false */
void seed_nack_requeue(struct seed *s, uint64_t tag, bool multiple);
/* Messages ready, by passive declare. */
long seed_depth(struct seed *s, const char *queue);
/* Polls until queue holds want messages; fatal after timeout_ms. */
void seed_wait_depth(struct seed *s, const char *queue, long want, long timeout_ms);

/* What queue holds, for the final table (a static string). */
void seed_note(struct seed *s, const char *queue, const char *note);
/* Adds n to the depth the final table expects of queue (declared earlier). */
void seed_expect_add(struct seed *s, const char *queue, long n);
/* The depth the final table expects of queue. */
long seed_expected(const struct seed *s, const char *queue);
/* Prints the table (queue, type, messages) of every queue made; false on a mismatch. */
bool seed_report(struct seed *s);

void props_clear(struct props *p);
/* A props value with content type, message id and delivery mode 2. */
void props_basic(struct props *p, const char *content_type, const char *message_id);

/* An AceMQ message. error NULL: the producer's original; else the library's set-aside copy
 * (the envelope with(error: …)). Strings may be NULL (absent). */
struct ace_msg {
    const char *id, *type, *correlation, *causation, *origin, *error, *claim;
    int64_t version, attempt, first_seen_ms;
    const char *content_type;
    const void *body;
    size_t body_len;
    const char *expiration;       /* per-message TTL (originals only) */
    const struct htable *headers; /* application headers (borrowed), may be NULL */
    const struct htable *unknown; /* unknown x-acemq-* names (borrowed), may be NULL */
    const struct htable *route;   /* the x-acemq-route triple (borrowed), may be NULL */
};

/* Publishes m to exchange/rk with headers = acemq_to_headers(envelope), content_type kept,
 * message_id = id, persistent. The set-aside path: exchange "" and rk = "<queue>.dlq". */
void ace_publish(struct seed *s, const char *exchange, const char *rk, const struct ace_msg *m);

/* A BabelQueue envelope (optionally with a dead_letter block) and its AMQP projection. */
struct babel_msg {
    const char *job;
    bool urn_alias; /* write "urn" instead of "job" */
    const char *trace_id;
    json_t *data; /* stolen */
    const char *id, *queue, *lang;
    int64_t schema_version, created_at, attempts;
    bool dead;                              /* add dead_letter{…} */
    const char *reason, *error, *exception; /* error/exception NULL: JSON null */
    int64_t failed_at, dl_attempts;
    const char *original_queue;
    const char *traceparent; /* NULL: none */
};

void babel_publish(struct seed *s, const char *exchange, const char *rk, const struct babel_msg *m);

/* The incident's BabelQueue queues (prefixed names, declared by the caller). */
struct babel_queues {
    const char *billing, *billing_dlq, *notify, *notify_dlq;
};

/* SDK dead letters on billing_dlq and notify_dlq (16), counted into their expected depths. */
void babel_sdk_dead_letters(struct seed *s, const struct babel_queues *q);

/* The scenarios. */
void scenario_incident(struct seed *s);
/* Dead letters read from snapshot files, published as recorded (seed_frameworks.c): every
 * framework's fixtures, or the --from files. */
void scenario_frameworks(struct seed *s);
void scenario_file(struct seed *s);

#endif
