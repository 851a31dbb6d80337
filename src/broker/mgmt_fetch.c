/*
 * mgmt_fetch: the stepped listing (mgmt_fetch.h). One request at a time on a handle of the
 * fetch's own, added to a multi handle that each step moves on without blocking beyond the
 * wait it was given; when a request ends it is classified as the blocking client classifies it
 * (mgmt_req_end), its JSON handed to the same parsers, and the next request begins: the
 * nodes (a refusal only leaves them unknown), the queues page by page, the policies (for the
 * exchanges' alternate exchanges; a refusal leaves those unknown, as mgmt_list_exchanges
 * does), the exchanges page by page, the bindings.
 */
#include "mgmt_fetch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mgmt_internal.h"

enum stage { S_NODES, S_QUEUES, S_POLICIES, S_EXCHANGES, S_BINDINGS, S_DONE };

struct mgmt_fetch {
    struct mgmt *m; /* owned: a duplicate of the caller's */
    CURLM *multi;
    char *vhost; /* NULL: every vhost */
    enum stage stage;
    long page;
    bool in_flight, failed;
    struct sink sink;
    size_t budget; /* bytes left for the collection being read */
    json_t *policies;
    struct mgmt_listing out;
    int requests;
    size_t moved; /* to the next management URL, for the request under way */
    struct error err;
};

void mgmt_listing_free(struct mgmt_listing *l)
{
    mgmt_nodes_free(&l->nodes, &l->nn);
    mgmt_queues_free(&l->queues, &l->nq);
    mgmt_exchanges_free(&l->exchanges, &l->nx);
    mgmt_bindings_free(&l->bindings, &l->nb);
    l->nodes_known = false;
}

struct mgmt_fetch *mgmt_fetch_start(const struct mgmt *m, const char *vhost, long timeout_ms)
{
    struct mgmt_fetch *f = xcalloc(1, sizeof *f);
    f->m = mgmt_dup(m);
    if (timeout_ms > 0) {
        f->m->timeout_ms = timeout_ms;
        curl_easy_setopt(f->m->curl, CURLOPT_TIMEOUT_MS, timeout_ms);
    }
    f->multi = curl_multi_init();
    if (!f->multi) {
        fputs("dlqx: out of memory\n", stderr);
        abort();
    }
    f->vhost = vhost ? xstrdup(vhost) : NULL;
    f->stage = S_NODES;
    f->page = 1;
    f->budget = f->m->max_response;
    error_clear(&f->err);
    return f;
}

static char *request_path(const struct mgmt_fetch *f)
{
    static const char *const what[] = {"nodes", "queues", "policies", "exchanges", "bindings"};
    if (f->stage == S_NODES)
        return xasprintf("/api/nodes?columns=%s", mgmt_node_columns);
    char *base = mgmt_collection_path(what[f->stage], f->vhost);
    char *p;
    if (f->stage == S_QUEUES || f->stage == S_EXCHANGES)
        p = xasprintf("%s?columns=%s&page=%ld&page_size=%d&pagination=true", base,
                      f->stage == S_QUEUES ? mgmt_queue_columns : mgmt_exchange_columns, f->page,
                      f->m->page_size);
    else if (f->stage == S_BINDINGS)
        p = xasprintf("%s?columns=%s", base, mgmt_binding_columns);
    else
        p = xstrdup(base);
    free(base);
    return p;
}

static void advance(struct mgmt_fetch *f)
{
    f->stage++;
    f->page = 1;
    f->budget = f->m->max_response;
}

/* A page of a paged collection (or the whole of it from a server that does not page). */
static enum status take_page(struct mgmt_fetch *f, json_t *j)
{
    const json_t *items = json_is_array(j) ? j : json_object_get(j, "items");
    if (!json_is_array(items))
        return mgmt_fail(f->m, MGMT_BAD_RESPONSE, &f->err,
                         "the management API at %s sent a page of %s without an items array",
                         f->m->display, f->sink.shown);
    enum status st =
        f->stage == S_QUEUES
            ? mgmt_queues_from_json(items, f->vhost, &f->out.queues, &f->out.nq, &f->err)
            : mgmt_exchanges_from_json(items, json_is_array(f->policies) ? f->policies : NULL,
                                       f->vhost, &f->out.exchanges, &f->out.nx, &f->err);
    const json_t *pc = json_object_get(j, "page_count");
    json_int_t count = json_is_integer(pc) ? json_integer_value(pc) : 1;
    if (st == ST_OK && (json_is_array(j) || json_array_size(items) == 0 || f->page >= count))
        advance(f);
    else
        f->page++;
    return st;
}

/* The request that ended with rc: its answer taken in, the next one chosen. */
static enum status finish_request(struct mgmt_fetch *f, CURLcode rc)
{
    struct strbuf body;
    struct error e;
    error_clear(&e);
    enum status st = mgmt_req_end(f->m, rc, &f->sink, f->vhost, false, &body, &e);
    if (st != ST_OK && mgmt_url_failover(f->m, rc, false) && ++f->moved < f->m->n_bases) {
        mgmt_use_url(f->m, (f->m->cur + 1) % f->m->n_bases); /* the same request there */
        return ST_OK;
    }
    if (st != ST_OK && f->moved >= f->m->n_bases) {
        size_t n = strlen(e.msg);
        snprintf(e.msg + n, sizeof e.msg - n,
                 " (and none of the other %zu management URLs answered)", f->m->n_bases - 1);
    }
    f->moved = 0;
    if (st != ST_OK) {
        enum mgmt_error k = f->m->last;
        bool refused = k == MGMT_AUTH || k == MGMT_FORBIDDEN || k == MGMT_VHOST_REFUSED;
        if ((f->stage == S_NODES && k != MGMT_TIMEOUT && k != MGMT_UNREACHABLE) ||
            (f->stage == S_POLICIES && refused) ||
            (f->page > 1 && f->m->page_out_of_range)) { /* queues deleted while paging */
            f->m->last = MGMT_OK;
            advance(f);
            return ST_OK;
        }
        f->err = e;
        return st;
    }
    f->budget -= body.len < f->budget ? body.len : f->budget;
    json_t *j = NULL;
    st = mgmt_parse_body(f->m, &body, f->sink.shown, &j, &f->err);
    sb_free(&body);
    if (st != ST_OK)
        return st;
    switch (f->stage) {
    case S_NODES:
        f->out.nodes_known =
            json_is_array(j) && mgmt_nodes_from_json(j, &f->out.nodes, &f->out.nn, NULL) == ST_OK;
        advance(f);
        break;
    case S_POLICIES:
        f->policies = json_incref(j);
        advance(f);
        break;
    case S_QUEUES:
    case S_EXCHANGES:
        st = take_page(f, j);
        break;
    case S_BINDINGS:
        st = mgmt_take_bindings(f->m, j, f->vhost, &f->out.bindings, &f->out.nb, &f->err);
        f->out.nq = mgmt_queues_sort_unique(f->out.queues, f->out.nq);
        advance(f);
        break;
    case S_DONE:
        break;
    }
    json_decref(j);
    return st;
}

static void begin_request(struct mgmt_fetch *f)
{
    char *path = request_path(f);
    mgmt_req_begin(f->m, path, f->budget, &f->sink);
    free(path);
    curl_multi_add_handle(f->multi, f->m->curl);
    f->in_flight = true;
}

enum mgmt_fetch_rc mgmt_fetch_step(struct mgmt_fetch *f, int wait_ms, struct error *err)
{
    if (!f->failed && f->stage != S_DONE && f->vhost && !*f->vhost) {
        /* "/api/queues/" with an empty vhost is "/api/queues": every vhost. Never widen. */
        mgmt_fail(f->m, MGMT_NOT_FOUND, &f->err,
                  "the empty vhost \"\" cannot be asked of the management API at %s",
                  f->m->display);
        f->failed = true;
    }
    if (!f->failed && f->stage != S_DONE) {
        if (!f->in_flight)
            begin_request(f);
        int running = 0;
        curl_multi_perform(f->multi, &running);
        if (running && wait_ms > 0) {
            curl_multi_wait(f->multi, NULL, 0, wait_ms, NULL);
            curl_multi_perform(f->multi, &running);
        }
        int left;
        CURLMsg *msg;
        while ((msg = curl_multi_info_read(f->multi, &left)) != NULL) {
            if (msg->msg != CURLMSG_DONE)
                continue;
            CURLcode rc = msg->data.result;
            curl_multi_remove_handle(f->multi, f->m->curl);
            f->in_flight = false;
            f->requests++;
            if (finish_request(f, rc) != ST_OK)
                f->failed = true;
            break;
        }
    }
    if (f->failed) {
        if (err)
            *err = f->err;
        return MGMT_FETCH_FAILED;
    }
    return f->stage == S_DONE ? MGMT_FETCH_DONE : MGMT_FETCH_MORE;
}

void mgmt_fetch_take(struct mgmt_fetch *f, struct mgmt_listing *out)
{
    *out = f->out;
    memset(&f->out, 0, sizeof f->out);
}

void mgmt_fetch_adopt(struct mgmt *m, const struct mgmt_fetch *f)
{
    if (m->n_bases == f->m->n_bases && m->cur != f->m->cur)
        mgmt_use_url(m, f->m->cur);
}

enum mgmt_error mgmt_fetch_error(const struct mgmt_fetch *f)
{
    return f->failed ? f->m->last : MGMT_OK;
}

int mgmt_fetch_requests(const struct mgmt_fetch *f)
{
    return f->requests;
}

void mgmt_fetch_free(struct mgmt_fetch **fp)
{
    struct mgmt_fetch *f = fp ? *fp : NULL;
    if (!f)
        return;
    if (f->in_flight) {
        curl_multi_remove_handle(f->multi, f->m->curl);
        sb_free(&f->sink.sb);
    }
    curl_multi_cleanup(f->multi);
    mgmt_close(&f->m);
    json_decref(f->policies);
    mgmt_listing_free(&f->out);
    free(f->vhost);
    free(f);
    *fp = NULL;
}
