/*
 * replay_plan: which dead letters a replay takes — a multiset of (id, body digest), so that
 * exactly the messages a person chose are sent, and the same message twice means twice —
 * and whether a target routes, checked without publishing; and how fast the copies go out
 * (--rate and the --ramp's steps).
 */
#include "replay.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sha256.h"
#include "util.h"

#define CHECK_CHANNEL 1

/* ---- the plan: a multiset of (id, digest) ---------------------------------------------- */

struct plan_entry {
    struct bytes id;
    char sha[65];
    unsigned left;
    size_t tag_head, tag_tail; /* its tags not yet taken: a list through replay_plan.tags */
};

struct replay_plan {
    struct plan_entry *e;
    size_t n, cap;
    size_t *slots; /* open addressing over e by hash; SIZE_MAX empty */
    size_t nslots;
    struct plan_tag {
        size_t tag, next; /* next: the entry's next tag; SIZE_MAX ends its list */
    } * tags;             /* one per add, in the order of adding */
    size_t n_tags, cap_tags;
};

static uint64_t plan_hash(const struct bytes *id, const char *sha)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < id->len; i++)
        h = (h ^ id->data[i]) * 1099511628211ull;
    for (size_t i = 0; i < 64; i++)
        h = (h ^ (unsigned char)sha[i]) * 1099511628211ull;
    return h;
}

struct replay_plan *replay_plan_new(void)
{
    return xcalloc(1, sizeof(struct replay_plan));
}

void replay_plan_free(struct replay_plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n; i++)
        bytes_free(&p->e[i].id);
    free(p->e);
    free(p->slots);
    free(p->tags);
    free(p);
}

static size_t plan_find(const struct replay_plan *p, const struct bytes *id, const char *sha)
{
    if (!p->nslots)
        return SIZE_MAX;
    size_t mask = p->nslots - 1;
    for (size_t s = plan_hash(id, sha) & mask;; s = (s + 1) & mask) {
        size_t i = p->slots[s];
        if (i == SIZE_MAX)
            return SIZE_MAX;
        if (bytes_eq(&p->e[i].id, id) && memcmp(p->e[i].sha, sha, 64) == 0)
            return i;
    }
}

static void plan_rehash(struct replay_plan *p)
{
    size_t n = 16;
    while (n < p->n * 2 + 2)
        n *= 2;
    free(p->slots);
    p->slots = xmalloc(n * sizeof *p->slots);
    for (size_t i = 0; i < n; i++)
        p->slots[i] = SIZE_MAX;
    p->nslots = n;
    for (size_t i = 0; i < p->n; i++) {
        size_t s = plan_hash(&p->e[i].id, p->e[i].sha) & (n - 1);
        while (p->slots[s] != SIZE_MAX)
            s = (s + 1) & (n - 1);
        p->slots[s] = i;
    }
}

static void add_tag(struct replay_plan *p, struct plan_entry *e, size_t tag)
{
    xgrow((void **)&p->tags, &p->cap_tags, p->n_tags + 1, sizeof *p->tags);
    size_t k = p->n_tags++;
    p->tags[k].tag = tag;
    p->tags[k].next = SIZE_MAX;
    if (e->tag_tail == SIZE_MAX)
        e->tag_head = k;
    else
        p->tags[e->tag_tail].next = k;
    e->tag_tail = k;
}

static void plan_add(struct replay_plan *p, const struct bytes *id, const char sha256_hex[65],
                     size_t tag)
{
    size_t i = plan_find(p, id, sha256_hex);
    if (i != SIZE_MAX) {
        p->e[i].left++;
        add_tag(p, &p->e[i], tag);
        return;
    }
    xgrow((void **)&p->e, &p->cap, p->n + 1, sizeof *p->e);
    struct plan_entry *e = &p->e[p->n++];
    e->id = bytes_copy(id);
    memcpy(e->sha, sha256_hex, 64);
    e->sha[64] = '\0';
    e->left = 1;
    e->tag_head = e->tag_tail = SIZE_MAX;
    add_tag(p, e, tag);
    if (p->n * 2 + 2 > p->nslots)
        plan_rehash(p);
    else {
        size_t mask = p->nslots - 1;
        size_t s = plan_hash(id, sha256_hex) & mask;
        while (p->slots[s] != SIZE_MAX)
            s = (s + 1) & mask;
        p->slots[s] = p->n - 1;
    }
}

void replay_plan_add(struct replay_plan *p, const struct bytes *id, const char sha256_hex[65])
{
    plan_add(p, id, sha256_hex, SIZE_MAX);
}

size_t replay_plan_size(const struct replay_plan *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n; i++)
        n += p->e[i].left;
    return n;
}

static bool plan_take(struct replay_plan *p, const struct bytes *id, const char sha256_hex[65],
                      size_t *tag)
{
    size_t i = plan_find(p, id, sha256_hex);
    if (i == SIZE_MAX || p->e[i].left == 0)
        return false;
    struct plan_entry *e = &p->e[i];
    e->left--;
    size_t k = e->tag_head;
    if (tag)
        *tag = k != SIZE_MAX ? p->tags[k].tag : SIZE_MAX;
    if (k != SIZE_MAX) {
        e->tag_head = p->tags[k].next;
        if (e->tag_head == SIZE_MAX)
            e->tag_tail = SIZE_MAX;
    }
    return true;
}

bool replay_plan_take(struct replay_plan *p, const struct bytes *id, const char sha256_hex[65])
{
    return plan_take(p, id, sha256_hex, NULL);
}

/* The body's digest: the decoding's when it made one. */
static const char *body_digest(const struct message *m, const struct decoded *d, char buf[65])
{
    if (d->body_sha256[0] && d->msg == m)
        return d->body_sha256;
    sha256_hex(m->body.len ? (const void *)m->body.data : "", m->body.len, buf);
    return buf;
}

void replay_plan_add_message(struct replay_plan *p, const struct message *m,
                             const struct decoded *d)
{
    char sha[65];
    replay_plan_add(p, &d->env->id, body_digest(m, d, sha));
}

bool replay_plan_take_message(struct replay_plan *p, const struct message *m,
                              const struct decoded *d)
{
    char sha[65];
    return plan_take(p, &d->env->id, body_digest(m, d, sha), NULL);
}

void replay_plan_add_tagged(struct replay_plan *p, const struct message *m, const struct decoded *d,
                            size_t tag)
{
    char sha[65];
    plan_add(p, &d->env->id, body_digest(m, d, sha), tag);
}

bool replay_plan_take_tagged(struct replay_plan *p, const struct message *m,
                             const struct decoded *d, size_t *tag)
{
    char sha[65];
    return plan_take(p, &d->env->id, body_digest(m, d, sha), tag);
}

void replay_plan_add_id_tagged(struct replay_plan *p, const struct bytes *id,
                               const char sha256_hex[65], size_t tag)
{
    plan_add(p, id, sha256_hex, tag);
}

bool replay_plan_take_id_tagged(struct replay_plan *p, const struct bytes *id,
                                const char sha256_hex[65], size_t *tag)
{
    return plan_take(p, id, sha256_hex, tag);
}

/* ---- checks ----------------------------------------------------------------------------- */

enum route_check replay_check_route(struct conn *c, const char *exchange, const char *routing_key,
                                    char *out, size_t outlen)
{
    amqp_connection_state_t st = conn_state(c);
    struct error err;
    enum conn_err kind;
    if (!exchange || !*exchange) {
        uint32_t n = 0, cons = 0;
        enum status s = conn_queue_inspect(c, CHECK_CHANNEL, routing_key, &n, &cons, &kind, &err);
        if (s == ST_OK) {
            snprintf(out, outlen,
                     "routes: the default exchange delivers to queue %.120s (%u ready, "
                     "%u consumers)",
                     routing_key, n, cons);
            return ROUTE_YES;
        }
        if (kind == CONN_NOT_FOUND) {
            snprintf(out, outlen,
                     "does not route: there is no queue %.120s for the default exchange to "
                     "deliver to",
                     routing_key);
            return ROUTE_NO;
        }
        snprintf(out, outlen, "could not check the route: %.200s", err.msg);
        return ROUTE_ERROR;
    }
    /* Channel 1 is always open on a dlqx connection (conn_open); a failed passive declare
     * closes it, so it is opened again below. */
    amqp_exchange_declare(st, CHECK_CHANNEL, amqp_cstring_bytes(exchange), amqp_empty_bytes, 1, 0,
                          0, 0, amqp_empty_table);
    amqp_rpc_reply_t rep = amqp_get_rpc_reply(st);
    if (rep.reply_type == AMQP_RESPONSE_NORMAL) {
        snprintf(out, outlen,
                 "exchange %.120s exists; whether routing key %.120s reaches a queue is only "
                 "known when the copy is published (mandatory: an unroutable copy comes back and "
                 "its dead letter stays)",
                 exchange, routing_key ? routing_key : "");
        return ROUTE_EXCHANGE_ONLY;
    }
    conn_check_reply(c, CHECK_CHANNEL, rep, "checking the exchange", &kind, &err);
    enum conn_err reopen_kind;
    struct error reopen_err;
    if (conn_alive(c) && kind != CONN_OK)
        conn_channel_open(c, CHECK_CHANNEL, &reopen_kind, &reopen_err);
    if (kind == CONN_NOT_FOUND) {
        snprintf(out, outlen, "does not route: exchange %.120s does not exist", exchange);
        return ROUTE_NO;
    }
    snprintf(out, outlen, "could not check the route: %.200s", err.msg);
    return ROUTE_ERROR;
}

enum status replay_declare_queue(struct conn *c, const char *name, enum queue_kind type,
                                 enum conn_err *kind, struct error *err)
{
    if (type != QK_CLASSIC && type != QK_QUORUM && type != QK_STREAM) {
        if (kind)
            *kind = CONN_OK;
        return error_set(err, ST_EINVAL,
                         "cannot declare queue %.200s: the DLQ's type is not known (no "
                         "management API); say it with --type classic, quorum or stream",
                         name);
    }
    amqp_connection_state_t st = conn_state(c);
    amqp_table_entry_t arg;
    arg.key = amqp_cstring_bytes("x-queue-type");
    arg.value.kind = AMQP_FIELD_KIND_UTF8;
    arg.value.value.bytes = amqp_cstring_bytes(queue_kind_name(type));
    amqp_table_t args = {1, &arg};
    amqp_queue_declare(st, CHECK_CHANNEL, amqp_cstring_bytes(name), 0, 1, 0, 0, args);
    char *what = xasprintf("declaring queue %.200s (durable, %s)", name, queue_kind_name(type));
    enum conn_err k = CONN_OK;
    enum status s = conn_check_reply(c, CHECK_CHANNEL, amqp_get_rpc_reply(st), what, &k, err);
    free(what);
    if (s != ST_OK && conn_alive(c)) {
        enum conn_err rk;
        struct error re;
        conn_channel_open(c, CHECK_CHANNEL, &rk, &re); /* the failure closed it */
    }
    if (kind)
        *kind = k;
    return s;
}

/* ---- pacing ---------------------------------------------------------------------------- */

#define RAMP_STEP_SECONDS 10.0
#define RAMP_MAX_RATE 1e6

static bool ramp_number(const char *s, const char **end, double *out)
{
    char *e;
    errno = 0;
    double v = strtod(s, &e);
    if (e == s || errno || !isfinite(v) || *s == '-' || *s == '+' || *s == ' ')
        return false;
    *end = e;
    *out = v;
    return true;
}

enum status replay_ramp_parse(const char *text, struct replay_ramp_step *steps, size_t max,
                              size_t *n, struct error *err)
{
    *n = 0;
    if (!text || !*text)
        return error_set(err, ST_EINVAL, "--ramp takes RATE[:COPIES],… (e.g. 1,10,100)");
    const char *p = text;
    for (;;) {
        if (*n == max)
            return error_set(err, ST_EINVAL, "--ramp takes at most %zu steps", max);
        double rate, copies = 0;
        const char *e;
        if (!ramp_number(p, &e, &rate) || rate <= 0 || rate > RAMP_MAX_RATE)
            return error_set(err, ST_EINVAL,
                             "--ramp: step %zu: the rate must be a number of copies per second "
                             "above 0 (at most 1000000)",
                             *n + 1);
        if (*e == ':') {
            if (!ramp_number(e + 1, &e, &copies) || copies < 1 || copies != floor(copies) ||
                copies > 1e15)
                return error_set(err, ST_EINVAL,
                                 "--ramp: step %zu: COPIES must be a whole number from 1", *n + 1);
        } else {
            copies = ceil(rate * RAMP_STEP_SECONDS);
            if (copies < 1)
                copies = 1;
        }
        steps[*n].rate = rate;
        steps[*n].copies = (uint64_t)copies;
        (*n)++;
        if (*e == '\0')
            return ST_OK;
        if (*e != ',' || e[1] == '\0')
            return error_set(err, ST_EINVAL,
                             "--ramp: steps are RATE or RATE:COPIES separated by commas (e.g. "
                             "1,10,100 or 1:5,10:50)");
        p = e + 1;
    }
}

double replay_pace_rate(const struct replay_opts *o, uint64_t published, uint64_t *step_left)
{
    uint64_t upto = 0;
    for (size_t i = 0; o->ramp && i < o->n_ramp; i++) {
        upto += o->ramp[i].copies;
        if (published < upto) {
            if (step_left)
                *step_left = upto - published;
            return o->ramp[i].rate;
        }
    }
    if (step_left)
        *step_left = UINT64_MAX;
    return o->rate > 0 ? o->rate : 0;
}

uint64_t replay_pace_burst(double rate)
{
    double b = floor(rate / 100);
    return b < 1 ? 1 : b > 65535 ? 65535 : (uint64_t)b;
}

double replay_pace_seconds(const struct replay_opts *o, uint64_t copies)
{
    double t = 0;
    uint64_t left = copies;
    for (size_t i = 0; o->ramp && i < o->n_ramp && left; i++) {
        uint64_t k = o->ramp[i].copies < left ? o->ramp[i].copies : left;
        t += (double)k / o->ramp[i].rate;
        left -= k;
    }
    if (left && o->rate > 0)
        t += (double)left / o->rate;
    return t;
}
