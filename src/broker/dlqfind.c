/*
 * dlqfind: the dead-letter graph of a broker's queues, built from what the management API
 * listed, and the DLQs, retry queues and lossy dead-lettering it reveals. No I/O.
 *
 * Routing follows the broker: a dead letter is published to the queue's dead-letter exchange
 * with the dead-letter routing key, or with the message's own routing keys when none is set
 * (then any binding of a direct or topic exchange may carry it). An exchange that routes a
 * message to no destination hands it to its alternate exchange.
 */
#include "dlqfind.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define MAX_ROUTE_DEPTH 16

static const struct {
    unsigned bit;
    const char *msg;
} why_msgs[] =
    {
#define X(e, v, msg) {v, msg},
        DLQ_WHY_LIST(X)
#undef X
},
  warn_msgs[] = {
#define X(e, v, msg) {v, msg},
      DLQ_WARN_LIST(X)
#undef X
};

const char *dlq_why_str(unsigned bit)
{
    for (size_t i = 0; i < sizeof why_msgs / sizeof *why_msgs; i++)
        if (why_msgs[i].bit == bit)
            return why_msgs[i].msg;
    return NULL;
}

const char *dlq_warn_str(unsigned bit)
{
    for (size_t i = 0; i < sizeof warn_msgs / sizeof *warn_msgs; i++)
        if (warn_msgs[i].bit == bit)
            return warn_msgs[i].msg;
    return NULL;
}

/* --- names ------------------------------------------------------------------------------ */

static bool is_sep(char c)
{
    return c == '.' || c == '-' || c == '_' || c == ':';
}

static bool ci_eq(const char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i]))
            return false;
    return true;
}

enum dlq_name_kind dlqfind_classify_name(const char *name, size_t *base_len)
{
    /* Suffixes seen in the wild: AceMQ (.dlq .parked, .NET .dead), BabelQueue (.dlq),
     * MassTransit (_error _skipped), NServiceBus (a queue named "error"), Azure (poison). */
    static const char *const dlq_tokens[] = {
        "dlq",
        "parked",
        "dead",
        "deadletter",
        "deadletters",
        "dead-letter",
        "dead-letters",
        "dead_letter",
        "dead_letters",
        "deadletterqueue",
        "dead-letter-queue",
        "dead_letter_queue",
        "error",
        "errors",
        "poison",
        "skipped",
    };
    static const char *const retry_tokens[] = {"retry", "retries"};
    size_t len = strlen(name), best = 0;
    bool dlq = false;
    for (size_t i = 0; i < sizeof dlq_tokens / sizeof *dlq_tokens; i++) {
        size_t t = strlen(dlq_tokens[i]);
        if (t > len || !ci_eq(name + len - t, dlq_tokens[i], t))
            continue;
        if (t == len || is_sep(name[len - t - 1])) {
            size_t b = t == len ? 0 : len - t - 1;
            if (!dlq || b < best) /* the longest suffix: "a.dead-letter" is based on "a" */
                best = b;
            dlq = true;
        }
    }
    if (dlq) {
        if (base_len)
            *base_len = best;
        return DLQ_NAME_DLQ;
    }
    /* A retry rung: <base><sep>retry, then the end, a separator or a digit (.retry.30s). */
    for (size_t p = 1; p < len; p++) {
        if (!is_sep(name[p - 1]))
            continue;
        for (size_t i = 0; i < sizeof retry_tokens / sizeof *retry_tokens; i++) {
            size_t t = strlen(retry_tokens[i]);
            if (p + t > len || !ci_eq(name + p, retry_tokens[i], t))
                continue;
            char after = name[p + t];
            if (after == '\0' || is_sep(after) || isdigit((unsigned char)after)) {
                if (base_len)
                    *base_len = p - 1;
                return DLQ_NAME_RETRY;
            }
        }
    }
    if (base_len)
        *base_len = 0;
    return DLQ_NAME_PLAIN;
}

/* --- topic matching --------------------------------------------------------------------- */

struct word {
    const char *s;
    size_t n;
};

/* As the broker splits: "" has no words, "a." has two ("a" and ""). */
static size_t split_words(const char *s, struct word **out)
{
    *out = NULL;
    if (!*s)
        return 0;
    size_t n = 1;
    for (const char *p = s; *p; p++)
        n += *p == '.';
    struct word *w = xmalloc(n * sizeof *w);
    size_t i = 0;
    const char *start = s;
    for (const char *p = s;; p++) {
        if (*p == '.' || !*p) {
            w[i].s = start;
            w[i].n = (size_t)(p - start);
            i++;
            start = p + 1;
            if (!*p)
                break;
        }
    }
    *out = w;
    return n;
}

bool dlqfind_topic_match(const char *pattern, const char *key)
{
    struct word *pw, *kw;
    size_t np = split_words(pattern, &pw), nk = split_words(key, &kw);
    /* prev[j]: the pattern's first i words match the key's first j words. Quadratic at
     * worst, never exponential, whatever a hostile binding holds. */
    bool *prev = xcalloc(nk + 1, sizeof *prev), *cur = xcalloc(nk + 1, sizeof *cur);
    prev[0] = true;
    for (size_t i = 0; i < np; i++) {
        const struct word *w = &pw[i];
        bool hash = w->n == 1 && w->s[0] == '#', star = w->n == 1 && w->s[0] == '*';
        cur[0] = hash && prev[0];
        for (size_t j = 1; j <= nk; j++) {
            if (hash)
                cur[j] = prev[j] || cur[j - 1];
            else
                cur[j] = prev[j - 1] &&
                         (star || (w->n == kw[j - 1].n && memcmp(w->s, kw[j - 1].s, w->n) == 0));
        }
        bool *t = prev;
        prev = cur;
        cur = t;
    }
    bool r = prev[nk];
    free(prev);
    free(cur);
    free(pw);
    free(kw);
    return r;
}

/* --- indexes ---------------------------------------------------------------------------- */

/* A sorted index entry: (vhost, name) and the position in the input array. */
struct key {
    const char *vhost, *name;
    size_t i;
};

struct ctx {
    const struct dlq_input *in;
    struct key *queues;    /* by (vhost, name) */
    struct key *exchanges; /* by (vhost, name) */
    struct key *bindings;  /* by (vhost, source), then input order */
    /* Per dead letter being routed: seen[first binding position of an exchange] is 1 when
     * visited on a possible route, 2 on a definite one; touched lists what to reset. Each
     * position is touched at most twice. */
    unsigned char *seen;
    size_t *touched;
    size_t n_touched;
};

static int pair_cmp(const char *v1, const char *n1, const char *v2, const char *n2)
{
    int c = strcmp(v1, v2);
    return c ? c : strcmp(n1, n2);
}

static int key_cmp(const void *a, const void *b)
{
    const struct key *x = a, *y = b;
    int c = pair_cmp(x->vhost, x->name, y->vhost, y->name);
    return c ? c : (x->i > y->i) - (x->i < y->i);
}

static struct key *index_sort(struct key *k, size_t n)
{
    qsort(k, n, sizeof *k, key_cmp);
    return k;
}

/* The first position whose (vhost, name) is not below the given one. */
static size_t lower_bound(const struct key *k, size_t n, const char *vhost, const char *name)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pair_cmp(k[mid].vhost, k[mid].name, vhost, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static size_t find(const struct key *k, size_t n, const char *vhost, const char *name)
{
    size_t p = lower_bound(k, n, vhost, name);
    if (p < n && pair_cmp(k[p].vhost, k[p].name, vhost, name) == 0)
        return k[p].i;
    return SIZE_MAX;
}

static size_t find_queue(const struct ctx *c, const char *vhost, const char *name)
{
    return find(c->queues, c->in->n_queues, vhost, name);
}

static size_t find_exchange(const struct ctx *c, const char *vhost, const char *name)
{
    return find(c->exchanges, c->in->n_exchanges, vhost, name);
}

static void ctx_init(struct ctx *c, const struct dlq_input *in)
{
    c->in = in;
    c->queues = xmalloc((in->n_queues + 1) * sizeof *c->queues);
    for (size_t i = 0; i < in->n_queues; i++)
        c->queues[i] = (struct key){in->queues[i].vhost, in->queues[i].name, i};
    index_sort(c->queues, in->n_queues);
    c->exchanges = xmalloc((in->n_exchanges + 1) * sizeof *c->exchanges);
    for (size_t i = 0; i < in->n_exchanges; i++)
        c->exchanges[i] = (struct key){in->exchanges[i].vhost, in->exchanges[i].name, i};
    index_sort(c->exchanges, in->n_exchanges);
    c->bindings = xmalloc((in->n_bindings + 1) * sizeof *c->bindings);
    for (size_t i = 0; i < in->n_bindings; i++)
        c->bindings[i] = (struct key){in->bindings[i].vhost, in->bindings[i].source, i};
    index_sort(c->bindings, in->n_bindings);
    c->seen = xcalloc(in->n_bindings + 1, 1);
    c->touched = xmalloc((2 * in->n_bindings + 1) * sizeof *c->touched);
    c->n_touched = 0;
}

/* --- routing ---------------------------------------------------------------------------- */

struct route {
    struct dlq_link *t;
    size_t n, cap;
    bool missing; /* the dead-letter exchange does not exist */
    bool own_key; /* default exchange, message's own routing key */
    bool unsure;  /* an alternate exchange set by a policy we could not read */
};

static void links_add(struct dlq_link **v, size_t *n, size_t *cap, size_t queue, unsigned how)
{
    for (size_t i = 0; i < *n; i++) {
        if ((*v)[i].queue == queue) {
            /* A definite route beats a possible one. */
            if (how == DLQ_WHY_TARGET && (*v)[i].how == DLQ_WHY_MAYBE)
                (*v)[i].how = DLQ_WHY_TARGET;
            return;
        }
    }
    xgrow((void **)v, cap, *n + 1, sizeof **v);
    (*v)[(*n)++] = (struct dlq_link){queue, how};
}

/* Whether a binding carries key (NULL: the message's own, unknown) through an exchange of
 * type t: 0, DLQ_WHY_TARGET or DLQ_WHY_MAYBE. */
static unsigned binding_match(enum mgmt_exchange_type t, const char *bkey, const char *key)
{
    switch (t) {
    case MGMT_EX_FANOUT:
        return DLQ_WHY_TARGET;
    case MGMT_EX_DIRECT:
        if (!key)
            return DLQ_WHY_TARGET;
        if (!bkey)
            return DLQ_WHY_MAYBE;
        return strcmp(bkey, key) == 0 ? DLQ_WHY_TARGET : 0;
    case MGMT_EX_TOPIC:
        if (!key)
            return DLQ_WHY_TARGET;
        if (!bkey)
            return DLQ_WHY_MAYBE;
        return dlqfind_topic_match(bkey, key) ? DLQ_WHY_TARGET : 0;
    default: /* headers, plugins, unknown: depends on what we cannot see */
        return DLQ_WHY_MAYBE;
    }
}

/* Routes key through exchange into r. Like the broker, each exchange is visited once per
 * dead letter (twice at most here: a possible route may later turn out definite), so a
 * tangle of exchange-to-exchange bindings costs linear time. */
static void route(struct ctx *c, const char *vhost, const char *exchange, const char *key,
                  unsigned how, size_t depth, struct route *r)
{
    const struct dlq_input *in = c->in;
    if (!*exchange) { /* the default exchange: the routing key names the queue */
        if (!key) {
            r->own_key = true;
            return;
        }
        size_t q = find_queue(c, vhost, key);
        if (q != SIZE_MAX)
            links_add(&r->t, &r->n, &r->cap, q, how);
        return;
    }
    size_t xi = find_exchange(c, vhost, exchange);
    enum mgmt_exchange_type type = MGMT_EX_UNKNOWN;
    if (xi != SIZE_MAX) {
        type = in->exchanges[xi].etype;
    } else if (in->n_exchanges > 0) {
        if (depth == 0)
            r->missing = true;
        return;
    }
    if (depth >= MAX_ROUTE_DEPTH)
        return;
    size_t nb = in->n_bindings, p0 = lower_bound(c->bindings, nb, vhost, exchange);
    bool has_bindings =
        p0 < nb && pair_cmp(c->bindings[p0].vhost, c->bindings[p0].name, vhost, exchange) == 0;
    if (has_bindings) {
        unsigned char need = how == DLQ_WHY_TARGET ? 2 : 1;
        if (c->seen[p0] >= need)
            return;
        c->seen[p0] = need;
        c->touched[c->n_touched++] = p0;
    }
    bool definite = false, possible = false;
    for (size_t p = p0; has_bindings && p < nb; p++) {
        const struct mgmt_binding *b = &in->bindings[c->bindings[p].i];
        if (pair_cmp(b->vhost, b->source, vhost, exchange) != 0)
            break;
        unsigned m = binding_match(type, b->routing_key, key);
        if (!m)
            continue;
        unsigned eff = how == DLQ_WHY_MAYBE || m == DLQ_WHY_MAYBE ? DLQ_WHY_MAYBE : DLQ_WHY_TARGET;
        if (eff == DLQ_WHY_TARGET)
            definite = true;
        else
            possible = true;
        if (b->dest_type == MGMT_DEST_EXCHANGE) {
            route(c, vhost, b->destination, key, eff, depth + 1, r);
        } else {
            size_t q = find_queue(c, vhost, b->destination);
            if (q != SIZE_MAX)
                links_add(&r->t, &r->n, &r->cap, q, eff);
        }
    }
    if (!definite && xi != SIZE_MAX) {
        const struct mgmt_exchange *x = &in->exchanges[xi];
        if (x->alternate_exchange)
            route(c, vhost, x->alternate_exchange, key, possible ? DLQ_WHY_MAYBE : how, depth + 1,
                  r);
        else if (x->alternate_unknown)
            r->unsure = true;
    }
}

/* --- the report ------------------------------------------------------------------------- */

static bool dead_letters(const struct mgmt_queue *q)
{
    return q->dead_letter_exchange && q->qtype != MGMT_QT_STREAM; /* streams never do */
}

static bool has_link(const struct dlq_entry *e, size_t queue, bool targets)
{
    const struct dlq_link *v = targets ? e->targets : e->sources;
    size_t n = targets ? e->n_targets : e->n_sources;
    for (size_t i = 0; i < n; i++)
        if (v[i].queue == queue && v[i].how == DLQ_WHY_TARGET)
            return true;
    return false;
}

static int role_rank(enum dlq_role r)
{
    return r == DLQ_ROLE_DLQ ? 0 : r == DLQ_ROLE_RETRY ? 1 : 2;
}

static int entry_cmp(const void *a, const void *b)
{
    const struct dlq_entry *x = a, *y = b;
    int c = role_rank(x->role) - role_rank(y->role);
    if (c)
        return c;
    if (x->role == DLQ_ROLE_DLQ && x->queue->messages != y->queue->messages)
        return x->queue->messages > y->queue->messages ? -1 : 1; /* -1 (unknown) sorts last */
    return pair_cmp(x->queue->vhost, x->queue->name, y->queue->vhost, y->queue->name);
}

/* Where one queue's dead letters go, and what is wrong with that. */
static void source_edges(struct ctx *c, size_t si, struct dlq_entry *e)
{
    const struct mgmt_queue *q = &c->in->queues[si];
    if (q->qtype == MGMT_QT_QUORUM && q->delivery_limit >= 0 && !q->dead_letter_exchange)
        e->warn |= DLQ_WARN_LIMIT_NO_DLX;
    if (!dead_letters(q))
        return;
    struct route r = {0};
    route(c, q->vhost, q->dead_letter_exchange, q->dead_letter_routing_key, DLQ_WHY_TARGET, 0, &r);
    for (size_t i = 0; i < c->n_touched; i++)
        c->seen[c->touched[i]] = 0;
    c->n_touched = 0;
    bool self = false;
    size_t w = 0;
    for (size_t i = 0; i < r.n; i++) {
        if (r.t[i].queue == si)
            self = true;
        else
            r.t[w++] = r.t[i];
    }
    r.n = w;
    if (r.missing)
        e->warn |= DLQ_WARN_NO_EXCHANGE;
    else if (r.own_key)
        e->warn |= DLQ_WARN_OWN_KEY;
    if (self)
        e->warn |= DLQ_WARN_LOOP;
    else if (r.n == 0 && !r.missing && !r.own_key && !r.unsure)
        e->warn |= DLQ_WARN_DROPS;
    e->targets = r.t;
    e->n_targets = r.n;
}

/* A TTL queue that dead-letters into a queue that dead-letters back into it is a delay
 * queue (the retry pattern), unless the other side looks more like one. */
static bool is_delay_queue(const struct dlq_input *in, const struct dlq_entry *all, size_t si)
{
    const struct mgmt_queue *s = &in->queues[si];
    if (s->message_ttl < 0)
        return false;
    const struct dlq_entry *e = &all[si];
    for (size_t i = 0; i < e->n_targets; i++) {
        size_t ti = e->targets[i].queue;
        if (e->targets[i].how != DLQ_WHY_TARGET || !has_link(&all[ti], si, true))
            continue;
        const struct mgmt_queue *t = &in->queues[ti];
        if (t->message_ttl < 0 || (s->consumers <= 0 && t->consumers > 0))
            return true;
    }
    return false;
}

/* S -> T leads home when T dead-letters into S and S sends its messages back, by TTL (a
 * DLQ that redrives itself) or being a DLQ by name (reject to redrive). */
static bool is_return_edge(const struct dlq_input *in, const struct dlq_entry *all,
                           const enum dlq_name_kind *kind, size_t si, size_t ti)
{
    return (in->queues[si].message_ttl >= 0 || kind[si] == DLQ_NAME_DLQ) &&
           has_link(&all[ti], si, true);
}

enum status dlqfind_run(const struct dlq_input *in, struct dlq_report *out, struct error *err)
{
    if (!in || !out)
        return error_set(err, ST_EINVAL, "dlqfind_run needs an input and a report");
    memset(out, 0, sizeof *out);
    size_t n = in->n_queues;
    struct ctx c;
    ctx_init(&c, in);

    /* Entries in input order while the graph is built; sorted at the end. */
    struct dlq_entry *e = xcalloc(n ? n : 1, sizeof *e);
    for (size_t i = 0; i < n; i++) {
        e[i].queue = &in->queues[i];
        e[i].index = i;
        e[i].base = SIZE_MAX;
        source_edges(&c, i, &e[i]);
    }
    enum dlq_name_kind *kind = xcalloc(n ? n : 1, sizeof *kind);
    for (size_t i = 0; i < n; i++) {
        size_t blen = 0;
        kind[i] = dlqfind_classify_name(in->queues[i].name, &blen);
        if (kind[i] != DLQ_NAME_PLAIN && blen > 0) {
            char *base = xstrndup(in->queues[i].name, blen);
            size_t b = find_queue(&c, in->queues[i].vhost, base);
            free(base);
            if (b != i)
                e[i].base = b;
        }
        /* A DLQ by name stays one even with a TTL back to its source (auto-redrive). */
        if (kind[i] == DLQ_NAME_RETRY || (kind[i] == DLQ_NAME_PLAIN && is_delay_queue(in, e, i)))
            e[i].role = DLQ_ROLE_RETRY;
    }
    /* Invert the edges (each source appears once per target, so no duplicate check). Only
     * edges out of non-retry queues that do not lead home make a DLQ of their target, but
     * once it is one, every queue that feeds it is listed. */
    size_t *caps = xcalloc(n ? n : 1, sizeof *caps);
    for (size_t si = 0; si < n; si++) {
        for (size_t k = 0; k < e[si].n_targets; k++) {
            size_t ti = e[si].targets[k].queue;
            struct dlq_entry *t = &e[ti];
            xgrow((void **)&t->sources, &caps[ti], t->n_sources + 1, sizeof *t->sources);
            t->sources[t->n_sources++] = (struct dlq_link){si, e[si].targets[k].how};
            if (e[si].role != DLQ_ROLE_RETRY && !is_return_edge(in, e, kind, si, ti))
                t->why |= e[si].targets[k].how;
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (kind[i] == DLQ_NAME_DLQ)
            e[i].why |= DLQ_WHY_NAMED;
        if (e[i].why & DLQ_WHY_TARGET)
            e[i].why &= ~(unsigned)DLQ_WHY_MAYBE;
        if (e[i].role != DLQ_ROLE_RETRY && e[i].why) {
            e[i].role = DLQ_ROLE_DLQ;
            if ((e[i].why & DLQ_WHY_NAMED) && e[i].base != SIZE_MAX)
                links_add(&e[i].sources, &e[i].n_sources, &caps[i], e[i].base, DLQ_WHY_NAMED);
        } else {
            e[i].why = 0;
            if (e[i].role != DLQ_ROLE_RETRY) {
                /* A plain queue keeps no sources: edges into it are retries coming home. */
                free(e[i].sources);
                e[i].sources = NULL;
                e[i].n_sources = 0;
            }
        }
        out->n_dlq += e[i].role == DLQ_ROLE_DLQ;
        out->n_retry += e[i].role == DLQ_ROLE_RETRY;
        out->n_warn += e[i].warn != 0;
    }
    free(kind);
    free(caps);
    qsort(e, n, sizeof *e, entry_cmp);
    out->entries = e;
    out->n = n;
    out->pos = xmalloc((n ? n : 1) * sizeof *out->pos);
    for (size_t i = 0; i < n; i++)
        out->pos[e[i].index] = i;
    out->by_name = xmalloc((n ? n : 1) * sizeof *out->by_name);
    for (size_t i = 0; i < n; i++)
        out->by_name[i] = c.queues[i].i;
    free(c.queues);
    free(c.exchanges);
    free(c.bindings);
    free(c.seen);
    free(c.touched);
    return ST_OK;
}

void dlq_report_free(struct dlq_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->entries[i].sources);
        free(r->entries[i].targets);
    }
    free(r->entries);
    free(r->pos);
    free(r->by_name);
    memset(r, 0, sizeof *r);
}

const struct dlq_entry *dlq_report_find(const struct dlq_report *r, const char *vhost,
                                        const char *name)
{
    if (!r || r->n == 0)
        return NULL;
    /* by_name indexes the input queues, reached through any entry's queue pointer. */
    const struct mgmt_queue *base = r->entries[r->pos[0]].queue;
    size_t lo = 0, hi = r->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct mgmt_queue *q = &base[r->by_name[mid]];
        int cmp = pair_cmp(q->vhost, q->name, vhost, name);
        if (cmp == 0)
            return &r->entries[r->pos[r->by_name[mid]]];
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}
