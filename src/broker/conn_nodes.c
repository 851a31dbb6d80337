/*
 * conn_nodes: a connection's list of nodes — the order they are tried in (as given, or
 * shuffled with the kernel's random source), the failover of conn_open across them, and
 * conn_reopen, which moves a lost or hung connection to the next node with the same options
 * (the connection keeps its own copy of them).
 */
#include "conn.h"
#include "conn_internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "util.h"

/* A random number below bound (> 0), without modulo bias: from getrandom, the kernel's
 * CSPRNG (never blocks once the pool is initialised, which it is long before dlqx runs). */
static size_t random_below(size_t bound)
{
    uint32_t limit = UINT32_MAX - (uint32_t)(((uint64_t)UINT32_MAX + 1) % bound);
    for (;;) {
        uint32_t r = 0;
        ssize_t n = getrandom(&r, sizeof r, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n != (ssize_t)sizeof r)
            abort(); /* no random source at all: never silently in the given order */
        if (r <= limit)
            return (size_t)(r % (uint32_t)bound);
    }
}

void conn_order_make(enum conn_order how, size_t n, size_t *order)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    if (how != CONN_ORDER_SHUFFLE)
        return;
    /* Fisher-Yates: every permutation equally likely. */
    for (size_t i = n; i > 1; i--) {
        size_t j = random_below(i);
        size_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

const char *conn_order_name(enum conn_order how)
{
    return how == CONN_ORDER_SHUFFLE ? "shuffle" : "given";
}

bool conn_order_parse(const char *s, enum conn_order *out)
{
    if (strcmp(s, "given") == 0)
        *out = CONN_ORDER_GIVEN;
    else if (strcmp(s, "shuffle") == 0)
        *out = CONN_ORDER_SHUFFLE;
    else
        return false;
    return true;
}

static char *dup_or_null(const char *s)
{
    return s ? xstrdup(s) : NULL;
}

static struct conn_cfg *cfg_new(const struct conn_opts *o)
{
    struct conn_cfg *cfg = xcalloc(1, sizeof *cfg);
    cfg->o = *o;
    cfg->urls = xcalloc(o->n_urls ? o->n_urls : 1, sizeof *cfg->urls);
    for (size_t i = 0; i < o->n_urls; i++)
        cfg->urls[i] = xstrdup(o->urls[i]);
    cfg->o.urls = (const char *const *)cfg->urls;
    cfg->o.password = cfg->password = dup_or_null(o->password);
    cfg->o.cacert = cfg->cacert = dup_or_null(o->cacert);
    cfg->o.cert = cfg->cert = dup_or_null(o->cert);
    cfg->o.key = cfg->key = dup_or_null(o->key);
    cfg->o.conn_name = cfg->conn_name = dup_or_null(o->conn_name);
    cfg->order = xcalloc(o->n_urls ? o->n_urls : 1, sizeof *cfg->order);
    conn_order_make(o->order, o->n_urls, cfg->order);
    return cfg;
}

void conn_cfg_free(struct conn_cfg *cfg)
{
    if (!cfg)
        return;
    for (size_t i = 0; i < cfg->o.n_urls; i++)
        conn_secret_free(cfg->urls[i]);
    free(cfg->urls);
    conn_secret_free(cfg->password);
    free(cfg->cacert);
    free(cfg->cert);
    free(cfg->key);
    free(cfg->conn_name);
    free(cfg->order);
    free(cfg);
}

/* Tries every node once, in cfg's order from position `from` round: a refused, unreachable
 * or timed-out node moves on to the next; an authentication or vhost failure stops (the next
 * node would say the same). On success *out owns cfg; on a failure cfg is still the caller's. */
static enum status try_nodes(struct conn_cfg *cfg, size_t from, struct conn **out,
                             enum conn_err *kind, struct error *err)
{
    const struct conn_opts *o = &cfg->o;
    *out = NULL;
    if (!o->n_urls) {
        *kind = CONN_BAD_URL;
        return error_set(err, ST_EINVAL, "no broker URL (give --url or set DLQX_URL)");
    }
    struct strbuf tried;
    sb_init(&tried);
    enum status st = ST_EIO;
    for (size_t k = 0; k < o->n_urls; k++) {
        if (k > 0 && o->stop_requested && o->stop_requested()) {
            *kind = CONN_UNREACHABLE;
            error_set(err, st, "stopped by a signal before the next node was tried: %s",
                      tried.buf ? tried.buf : "");
            sb_free(&tried);
            return st;
        }
        size_t idx = cfg->order[(from + k) % o->n_urls];
        struct error e;
        enum conn_err ek = CONN_OK;
        error_clear(&e);
        st = conn_open_one(o->urls[idx], o, out, &ek, &e);
        *kind = ek;
        if (st == ST_OK) {
            (*out)->cfg = cfg;
            (*out)->url_index = idx;
            sb_free(&tried);
            return ST_OK;
        }
        if (ek != CONN_UNREACHABLE || o->n_urls == 1) {
            error_set(err, st, "%s", e.msg);
            sb_free(&tried);
            return st;
        }
        if (tried.len)
            sb_adds(&tried, "; ");
        sb_adds(&tried, e.msg);
    }
    error_set(err, st, "no broker answered: %s", tried.buf ? tried.buf : "");
    sb_free(&tried);
    return st;
}

enum status conn_open(const struct conn_opts *o, struct conn **out, enum conn_err *kind,
                      struct error *err)
{
    struct conn_cfg *cfg = cfg_new(o);
    enum conn_err k = CONN_OK;
    enum status st = try_nodes(cfg, 0, out, &k, err);
    if (st != ST_OK)
        conn_cfg_free(cfg);
    return conn_kinded(st, k, kind, err);
}

enum status conn_reopen(struct conn **c, enum conn_err *kind, struct error *err)
{
    struct conn *old = *c;
    *c = NULL;
    if (!old || !old->cfg) {
        conn_close(old);
        error_set(err, ST_EINVAL, "no connection to open again");
        return conn_kinded(ST_EINVAL, CONN_BAD_URL, kind, err);
    }
    struct conn_cfg *cfg = old->cfg;
    old->cfg = NULL;
    size_t pos = 0;
    for (size_t k = 0; k < cfg->o.n_urls; k++)
        if (cfg->order[k] == old->url_index)
            pos = k;
    /* Lost or hung: no polite connection.close, which would wait on a node that may never
     * answer; the socket is closed and the broker gives back what the connection held. */
    old->alive = false;
    conn_close(old);
    enum conn_err k = CONN_OK;
    enum status st = try_nodes(cfg, pos + 1, c, &k, err);
    if (st != ST_OK)
        conn_cfg_free(cfg);
    return conn_kinded(st, k, kind, err);
}

size_t conn_url_index(const struct conn *c)
{
    return c->url_index;
}

size_t conn_url_count(const struct conn *c)
{
    return c->cfg ? c->cfg->o.n_urls : 1;
}
