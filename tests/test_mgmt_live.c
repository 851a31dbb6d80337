/*
 * The management client against a real RabbitMQ node: DLQX_MGMT_URL and DLQX_BROKER_DIR (the
 * password is in DIR/password, user dlqx), as scripts/broker sets them. Without them this
 * suite FAILS: the test runner is expected to start a broker for it.
 *
 * Everything is built in a vhost of its own (with a name that needs percent-encoding) through
 * the management API itself, and that vhost and a throwaway user are deleted at the end.
 */
#include "testutil.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "dlqfind.h"
#include "mgmt.h"
#include "mgmt_fetch.h"
#include "util.h"

struct live {
    char *url;
    char *password;
    char *vhost;  /* ours, deleted at the end */
    char *evhost; /* percent-encoded */
    char *nobody; /* a user without permissions, deleted at the end */
    const char *amqp_port;
    struct mgmt *m;
};

static char *read_password(const char *dir)
{
    char *path = xasprintf("%s/password", dir);
    FILE *f = fopen(path, "r");
    free(path);
    if (!f)
        return NULL;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        buf[--n] = '\0';
    return xstrdup(buf);
}

static struct mgmt *open_client(const struct live *l, const char *url, const char *password,
                                int page_size, size_t max_response, long timeout_ms)
{
    struct mgmt_config cfg = {
        .url = url,
        .user = "dlqx",
        .password = password,
        .page_size = page_size,
        .max_response = max_response,
        .timeout_ms = timeout_ms,
        .connect_timeout_ms = timeout_ms,
    };
    struct mgmt *m = NULL;
    struct error err;
    if (mgmt_open(&cfg, &m, &err) != ST_OK)
        fail_msg("mgmt_open(%s): %s", url, err.msg);
    assert_non_null(m);
    return m;
}

/* A request that must succeed with 2xx. path is printf-formatted. */
static void api(struct mgmt *m, const char *method, const char *body, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void api(struct mgmt *m, const char *method, const char *body, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    struct strbuf p;
    sb_init(&p);
    sb_vaddf(&p, fmt, ap);
    va_end(ap);
    long code = 0;
    struct error err;
    if (mgmt_request(m, method, p.buf, body, &code, NULL, &err) != ST_OK)
        fail_msg("%s %s: %s", method, p.buf, err.msg);
    if (code < 200 || code > 299)
        fail_msg("%s %s: HTTP %ld", method, p.buf, code);
    sb_free(&p);
}

static int setup(void **state)
{
    const char *url = getenv("DLQX_MGMT_URL"), *dir = getenv("DLQX_BROKER_DIR");
    if (!url || !*url || !dir || !*dir) {
        fprintf(stderr, "test_mgmt_live: DLQX_MGMT_URL and DLQX_BROKER_DIR must name a running "
                        "broker (scripts/broker start; . DIR/env)\n");
        return -1;
    }
    struct live *l = xcalloc(1, sizeof *l);
    l->password = read_password(dir);
    if (!l->password) {
        fprintf(stderr, "test_mgmt_live: cannot read %s/password\n", dir);
        free(l);
        return -1;
    }
    mgmt_global_init();
    l->url = xstrdup(url);
    l->amqp_port = getenv("DLQX_AMQP_PORT");
    l->vhost = xasprintf("dlqx live/ä %%+%ld", (long)getpid());
    l->evhost = mgmt_escape(l->vhost);
    l->nobody = xasprintf("dlqx-live-nobody-%ld", (long)getpid());
    l->m = open_client(l, l->url, l->password, 0, 0, 0);
    api(l->m, "PUT", "{}", "/api/vhosts/%s", l->evhost);
    api(l->m, "PUT", "{\"configure\":\".*\",\"write\":\".*\",\"read\":\".*\"}",
        "/api/permissions/%s/dlqx", l->evhost);
    *state = l;
    return 0;
}

static int teardown(void **state)
{
    struct live *l = *state;
    if (!l)
        return 0;
    long code = 0;
    char *p = xasprintf("/api/vhosts/%s", l->evhost);
    mgmt_request(l->m, "DELETE", p, NULL, &code, NULL, NULL);
    free(p);
    p = xasprintf("/api/users/%s", l->nobody);
    mgmt_request(l->m, "DELETE", p, NULL, &code, NULL, NULL);
    free(p);
    mgmt_close(&l->m);
    mgmt_global_cleanup();
    explicit_bzero(l->password, strlen(l->password));
    free(l->password);
    free(l->url);
    free(l->vhost);
    free(l->evhost);
    free(l->nobody);
    free(l);
    return 0;
}

static void test_overview(void **state)
{
    struct live *l = *state;
    struct mgmt_overview o;
    struct error err;
    if (mgmt_overview(l->m, &o, &err) != ST_OK)
        fail_msg("%s", err.msg);
    assert_non_null(o.rabbitmq_version);
    assert_non_null(o.cluster_name);
    assert_non_null(o.node);
    assert_int_equal(mgmt_last_error(l->m), MGMT_OK);
    assert_int_equal(mgmt_last_http_status(l->m), 200);
    mgmt_overview_free(&o);
}

static void build_topology(struct live *l)
{
    struct mgmt *m = l->m;
    const char *v = l->evhost;
    api(m, "PUT", "{\"type\":\"direct\",\"durable\":true}", "/api/exchanges/%s/acemq.dlx", v);
    api(m, "PUT", "{\"type\":\"fanout\",\"durable\":true}", "/api/exchanges/%s/dlx", v);
    api(m, "PUT", "{\"type\":\"topic\",\"durable\":true}", "/api/exchanges/%s/lost.dlx", v);
    api(m, "PUT",
        "{\"durable\":true,\"arguments\":{\"x-queue-type\":\"quorum\","
        "\"x-dead-letter-exchange\":\"acemq.dlx\",\"x-dead-letter-routing-key\":\"orders.dlq\","
        "\"x-delivery-limit\":5}}",
        "/api/queues/%s/orders", v);
    api(m, "PUT", "{\"durable\":true}", "/api/queues/%s/orders.dlq", v);
    api(m, "POST", "{\"routing_key\":\"orders.dlq\"}", "/api/bindings/%s/e/acemq.dlx/q/orders.dlq",
        v);
    api(m, "PUT", "{\"durable\":true}", "/api/queues/%s/billing", v);
    api(m, "PUT", "{\"durable\":true}", "/api/queues/%s/billing.dlq", v);
    api(m, "PUT",
        "{\"pattern\":\"^billing$\",\"apply-to\":\"queues\",\"definition\":"
        "{\"dead-letter-exchange\":\"\",\"dead-letter-routing-key\":\"billing.dlq\"}}",
        "/api/policies/%s/billing-dlx", v);
    api(m, "PUT", "{\"durable\":true,\"arguments\":{\"x-dead-letter-exchange\":\"dlx\"}}",
        "/api/queues/%s/notify", v);
    api(m, "PUT", "{\"durable\":true}", "/api/queues/%s/notify.dead", v);
    api(m, "POST", "{\"routing_key\":\"\"}", "/api/bindings/%s/e/dlx/q/notify.dead", v);
    api(m, "PUT", "{\"durable\":true,\"arguments\":{\"x-queue-type\":\"stream\"}}",
        "/api/queues/%s/events", v);
    api(m, "PUT", "{\"durable\":true}", "/api/queues/%s/jobs", v);
    api(m, "PUT", "{\"durable\":true}", "/api/queues/%s/jobs.parked", v);
    api(m, "PUT",
        "{\"durable\":true,\"arguments\":{\"x-dead-letter-exchange\":\"lost.dlx\","
        "\"x-dead-letter-routing-key\":\"lost\"}}",
        "/api/queues/%s/lost", v);
    api(m, "PUT",
        "{\"durable\":true,\"arguments\":{\"x-message-ttl\":30000,"
        "\"x-dead-letter-exchange\":\"\",\"x-dead-letter-routing-key\":\"orders\"}}",
        "/api/queues/%s/orders.retry.30s", v);
}

static const struct dlq_entry *find(const struct dlq_report *r, const struct live *l,
                                    const char *name)
{
    const struct dlq_entry *e = dlq_report_find(r, l->vhost, name);
    if (!e)
        fail_msg("queue %s was not listed", name);
    assert_non_null(e);
    return e;
}

static bool sourced_by(const struct dlq_entry *e, const struct mgmt_queue *q, const char *name)
{
    for (size_t i = 0; i < e->n_sources; i++)
        if (strcmp(q[e->sources[i].queue].name, name) == 0)
            return true;
    return false;
}

/* Measured on 3.10: a new queue's policy, effective_policy_definition, counts and state are
 * absent from the listing until its first stats emission (about 5 s), and a policy shows at
 * the first emission after it applied. Wait for both. */
static void list_when_settled(struct live *l, struct mgmt_queue **q, size_t *nq)
{
    struct error err;
    for (int tries = 0;; tries++) {
        if (mgmt_list_queues(l->m, l->vhost, q, nq, &err) != ST_OK)
            fail_msg("%s", err.msg);
        bool settled = true;
        for (size_t i = 0; i < *nq; i++) {
            const struct mgmt_queue *x = &(*q)[i];
            settled = settled && !x->stats_pending;
            /* The policy reaches the listing at the queue's next emission after it applies,
             * which may come after the first one (measured: both orders happen). */
            if (strcmp(x->name, "billing") == 0 && !x->policy)
                settled = false;
        }
        if (settled)
            return;
        if (tries == 60)
            fail_msg("queue stats did not appear within 30 s");
        mgmt_queues_free(q, nq);
        nanosleep(&(struct timespec){0, 500 * 1000 * 1000}, NULL);
    }
}

static void test_discovery(void **state)
{
    struct live *l = *state;
    build_topology(l);
    struct mgmt_queue *q = NULL;
    struct mgmt_exchange *x = NULL;
    struct mgmt_binding *b = NULL;
    size_t nq = 0, nx = 0, nb = 0;
    struct error err;
    list_when_settled(l, &q, &nq);
    if (mgmt_list_exchanges(l->m, l->vhost, &x, &nx, &err) != ST_OK ||
        mgmt_list_bindings(l->m, l->vhost, &b, &nb, &err) != ST_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(nq, 11);
    for (size_t i = 0; i < nq; i++)
        assert_string_equal(q[i].vhost, l->vhost);
    struct dlq_input in = {q, nq, x, nx, b, nb};
    struct dlq_report r;
    assert_int_equal(dlqfind_run(&in, &r, &err), ST_OK);

    const struct dlq_entry *e = find(&r, l, "orders.dlq");
    assert_int_equal(e->role, DLQ_ROLE_DLQ);
    assert_true(e->why & DLQ_WHY_TARGET);
    assert_true(sourced_by(e, q, "orders"));
    assert_int_equal(find(&r, l, "orders")->queue->qtype, MGMT_QT_QUORUM);
    assert_int_equal(find(&r, l, "orders")->queue->delivery_limit, 5);
    assert_int_equal(find(&r, l, "orders")->role, DLQ_ROLE_QUEUE);

    e = find(&r, l, "billing.dlq");
    assert_int_equal(e->role, DLQ_ROLE_DLQ);
    assert_true(e->why & DLQ_WHY_TARGET); /* the policy's DLX, measured live */
    assert_true(sourced_by(e, q, "billing"));
    assert_int_equal(find(&r, l, "billing")->queue->dlx_origin, MGMT_FROM_POLICY);

    e = find(&r, l, "notify.dead");
    assert_int_equal(e->role, DLQ_ROLE_DLQ);
    assert_true(e->why & DLQ_WHY_TARGET);
    assert_true(sourced_by(e, q, "notify"));

    e = find(&r, l, "jobs.parked");
    assert_int_equal(e->role, DLQ_ROLE_DLQ);
    assert_int_equal(e->why, DLQ_WHY_NAMED);
    assert_true(sourced_by(e, q, "jobs"));

    assert_int_equal(find(&r, l, "events")->role, DLQ_ROLE_QUEUE);
    assert_int_equal(find(&r, l, "events")->queue->qtype, MGMT_QT_STREAM);
    assert_int_equal(find(&r, l, "orders.retry.30s")->role, DLQ_ROLE_RETRY);
    assert_int_equal(find(&r, l, "lost")->warn, DLQ_WARN_DROPS);
    assert_int_equal(r.n_dlq, 4);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(r.entries[i].role, DLQ_ROLE_DLQ);

    dlq_report_free(&r);
    mgmt_queues_free(&q, &nq);
    mgmt_exchanges_free(&x, &nx);
    mgmt_bindings_free(&b, &nb);
}

static void test_paging(void **state)
{
    struct live *l = *state;
    struct mgmt *small = open_client(l, l->url, l->password, 2, 0, 0);
    struct mgmt_queue *q = NULL, *all = NULL;
    size_t nq = 0, nall = 0;
    struct error err;
    if (mgmt_list_queues(small, l->vhost, &q, &nq, &err) != ST_OK)
        fail_msg("%s", err.msg);
    /* 11 queues in pages of 2: six pages were followed. */
    assert_int_equal(nq, 11);
    assert_non_null(q);
    for (size_t i = 1; i < nq; i++)
        assert_true(strcmp(q[i - 1].name, q[i].name) < 0);
    /* Every vhost at once (vhost NULL) includes ours, with the vhost filled in. (Full pages:
     * the broker may hold many other queues.) */
    if (mgmt_list_queues(l->m, NULL, &all, &nall, &err) != ST_OK)
        fail_msg("%s", err.msg);
    size_t ours = 0;
    for (size_t i = 0; i < nall; i++)
        ours += strcmp(all[i].vhost, l->vhost) == 0;
    assert_int_equal(ours, 11);
    mgmt_queues_free(&q, &nq);
    mgmt_queues_free(&all, &nall);
    /* The default vhost, "/" sent as %2F. */
    if (mgmt_list_queues(small, "/", &q, &nq, &err) != ST_OK)
        fail_msg("%s", err.msg);
    for (size_t i = 0; i < nq; i++)
        assert_string_equal(q[i].vhost, "/");
    mgmt_queues_free(&q, &nq);

    struct mgmt_exchange *x = NULL;
    size_t nx = 0;
    if (mgmt_list_exchanges(small, l->vhost, &x, &nx, &err) != ST_OK)
        fail_msg("%s", err.msg);
    assert_true(nx >= 10); /* 7 built in, 3 of ours */
    mgmt_exchanges_free(&x, &nx);
    mgmt_close(&small);
    assert_null(small);
}

/* An error must name its cause and never show the password. */
static void expect_error(struct mgmt *m, enum status st, const struct error *err,
                         enum mgmt_error kind, const char *needle, const char *password)
{
    if (st == ST_OK)
        fail_msg("expected %s, got success", mgmt_error_str(kind));
    if (mgmt_last_error(m) != kind)
        fail_msg("expected %s, got %s: %s", mgmt_error_str(kind),
                 mgmt_error_str(mgmt_last_error(m)), err->msg);
    if (needle && !strstr(err->msg, needle))
        fail_msg("message \"%s\" does not mention \"%s\"", err->msg, needle);
    if (password && *password && strstr(err->msg, password))
        fail_msg("message \"%s\" shows the password", err->msg);
    assert_int_equal(err->code, st);
}

static int closed_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
    close(s);
    return ntohs(a.sin_port);
}

/* A listening socket on loopback that never accepts or answers, and its URL. */
static int hung_listener(char **url)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(s, 4), 0);
    assert_int_equal(getsockname(s, (struct sockaddr *)&a, &len), 0);
    *url = xasprintf("http://127.0.0.1:%d/", ntohs(a.sin_port));
    return s;
}

static void test_errors(void **state)
{
    struct live *l = *state;
    struct error err;
    struct mgmt_queue *q = NULL;
    size_t nq = 0;
    struct mgmt_overview o;

    struct mgmt *m = open_client(l, l->url, "wrong-password-xyzzy", 0, 0, 0);
    enum status st = mgmt_overview(m, &o, &err);
    expect_error(m, st, &err, MGMT_AUTH, "refused the credentials for user dlqx",
                 "wrong-password-xyzzy");
    assert_int_equal(mgmt_last_http_status(m), 401);
    mgmt_close(&m);

    char *url = xasprintf("http://127.0.0.1:%d/", closed_port());
    m = open_client(l, url, l->password, 0, 0, 0);
    st = mgmt_list_queues(m, "/", &q, &nq, &err);
    expect_error(m, st, &err, MGMT_UNREACHABLE, url, l->password);
    assert_int_equal(err.code, ST_EIO);
    assert_int_equal(nq, 0);
    mgmt_close(&m);
    free(url);

    st = mgmt_list_queues(l->m, "dlqx-no-such-vhost", &q, &nq, &err);
    expect_error(l->m, st, &err, MGMT_NOT_FOUND, "vhost dlqx-no-such-vhost does not exist",
                 l->password);
    assert_int_equal(err.code, ST_ENOTFOUND);
    struct mgmt_binding *b = NULL;
    size_t nb = 0;
    st = mgmt_list_bindings(l->m, "dlqx-no-such-vhost", &b, &nb, &err);
    expect_error(l->m, st, &err, MGMT_NOT_FOUND, NULL, l->password);
    /* A wrong path prefix: 3.10 answers JSON clients 406 there. */
    url = xasprintf("%.*s/nope/", (int)(strlen(l->url) - (l->url[strlen(l->url) - 1] == '/')),
                    l->url);
    m = open_client(l, url, l->password, 0, 0, 0);
    st = mgmt_list_queues(m, "dlqx-no-such-vhost", &q, &nq, &err);
    expect_error(m, st, &err, MGMT_CONFIG, "check the URL's path", l->password);
    st = mgmt_overview(m, &o, &err);
    expect_error(m, st, &err, MGMT_CONFIG, "check the URL's path", l->password);
    mgmt_close(&m);
    free(url);

    /* A user the API knows but who may not read the vhost: 3.10 says 401, not 403. */
    char *body = xasprintf("{\"password\":\"%s\",\"tags\":\"monitoring\"}", "nobody-pw-1");
    api(l->m, "PUT", body, "/api/users/%s", l->nobody);
    free(body);
    struct mgmt_config cfg = {.url = l->url, .user = l->nobody, .password = "nobody-pw-1"};
    assert_int_equal(mgmt_open(&cfg, &m, &err), ST_OK);
    st = mgmt_list_queues(m, l->vhost, &q, &nq, &err);
    expect_error(m, st, &err, MGMT_VHOST_REFUSED, "has no permissions on vhost", "nobody-pw-1");
    mgmt_close(&m);

    /* The response cap. */
    m = open_client(l, l->url, l->password, 0, 100, 0);
    st = mgmt_list_queues(m, l->vhost, &q, &nq, &err);
    expect_error(m, st, &err, MGMT_BAD_RESPONSE, "limit", l->password);
    mgmt_close(&m);

    /* https to a plain-http port. */
    const char *hostport = strstr(l->url, "://");
    assert_non_null(hostport);
    url = xasprintf("https%s", hostport);
    m = open_client(l, url, l->password, 0, 0, 0);
    st = mgmt_overview(m, &o, &err);
    expect_error(m, st, &err, MGMT_TLS, "TLS", l->password);
    mgmt_close(&m);
    free(url);

    /* The AMQP port is not HTTP. */
    if (l->amqp_port) {
        url = xasprintf("http://127.0.0.1:%s", l->amqp_port);
        m = open_client(l, url, l->password, 0, 0, 0);
        st = mgmt_overview(m, &o, &err);
        expect_error(m, st, &err, MGMT_BAD_RESPONSE, "AMQP port", l->password);
        mgmt_close(&m);
        free(url);
    }

    /* A server that accepts and never answers. */
    int s = hung_listener(&url);
    m = open_client(l, url, l->password, 0, 0, 300);
    st = mgmt_overview(m, &o, &err);
    expect_error(m, st, &err, MGMT_TIMEOUT, "300 ms", l->password);
    mgmt_close(&m);
    free(url);
    close(s);
}

/* Steps f to its end, each step bounded by 5 ms of waiting; gives the longest step (s). */
static enum mgmt_fetch_rc fetch_run(struct mgmt_fetch *f, struct error *err, double *longest)
{
    enum mgmt_fetch_rc rc = MGMT_FETCH_MORE;
    *longest = 0;
    for (int i = 0; i < 200000 && rc == MGMT_FETCH_MORE; i++) {
        double t = clock_mono_s();
        rc = mgmt_fetch_step(f, 5, err);
        if (clock_mono_s() - t > *longest)
            *longest = clock_mono_s() - t;
    }
    return rc;
}

/* The stepped listing (the explorer's queues view) reads what the blocking one does, pages
 * included, with the nodes and the queues' placement; against a listener that never answers
 * no step waits longer than it was told, and the fetch ends by its timeout. */
static void test_fetch(void **state)
{
    struct live *l = *state;
    struct mgmt *m = open_client(l, l->url, l->password, 2, 0, 0);
    struct mgmt_queue *q = NULL;
    size_t nq = 0;
    struct error err;
    list_when_settled(l, &q, &nq);
    struct mgmt_fetch *f = mgmt_fetch_start(m, l->vhost, 0);
    double longest;
    if (fetch_run(f, &err, &longest) != MGMT_FETCH_DONE)
        fail_msg("fetch: %s", err.msg);
    assert_true(mgmt_fetch_requests(f) > 6); /* pages of 2 */
    struct mgmt_listing li;
    mgmt_fetch_take(f, &li);
    mgmt_fetch_free(&f);
    assert_null(f);
    assert_int_equal(li.nq, nq);
    for (size_t i = 0; i < nq; i++)
        assert_string_equal(li.queues[i].name, q[i].name);
    assert_true(li.nodes_known);
    assert_true(li.nn >= 1 && li.nodes[0].running);
    struct mgmt_exchange *x = NULL;
    struct mgmt_binding *b = NULL;
    size_t nx = 0, nb = 0;
    if (mgmt_list_exchanges(m, l->vhost, &x, &nx, &err) != ST_OK ||
        mgmt_list_bindings(m, l->vhost, &b, &nb, &err) != ST_OK)
        fail_msg("%s", err.msg);
    assert_int_equal(li.nx, nx);
    assert_int_equal(li.nb, nb);
    for (size_t i = 0; i < li.nq; i++) {
        if (strcmp(li.queues[i].name, "orders") != 0)
            continue;
        assert_int_equal(li.queues[i].qtype, MGMT_QT_QUORUM);
        assert_string_equal(li.queues[i].leader, li.nodes[0].name);
        assert_int_equal(li.queues[i].members.n, 1);
        assert_true(mgmt_strs_has(&li.queues[i].online, li.nodes[0].name));
    }
    mgmt_listing_free(&li);
    mgmt_exchanges_free(&x, &nx);
    mgmt_bindings_free(&b, &nb);
    mgmt_queues_free(&q, &nq);
    mgmt_close(&m);

    /* A listener that accepts and never answers: a hung management API. */
    char *url;
    int s = hung_listener(&url);
    m = open_client(l, url, l->password, 0, 0, 0);
    double t0 = clock_mono_s();
    f = mgmt_fetch_start(m, "/", 600);
    assert_int_equal(fetch_run(f, &err, &longest), MGMT_FETCH_FAILED);
    assert_int_equal(mgmt_fetch_error(f), MGMT_TIMEOUT);
    assert_non_null(strstr(err.msg, "600 ms"));
    double took = clock_mono_s() - t0;
    assert_true(took >= 0.5 && took < 3.0);
    assert_true(longest < 0.05); /* 5 ms asked; a loaded machine's scheduling allowed for */
    mgmt_fetch_free(&f);
    /* Stopped while in flight: nothing leaks, nothing waits. */
    f = mgmt_fetch_start(m, "/", 0);
    assert_int_equal(mgmt_fetch_step(f, 5, &err), MGMT_FETCH_MORE);
    mgmt_fetch_free(&f);
    mgmt_close(&m);
    free(url);
    close(s);
}

static void test_config(void **state)
{
    struct live *l = *state;
    struct mgmt *m = NULL;
    struct error err;
    struct mgmt_config cfg = {.url = "http://dlqx:s3cret-in-url@127.0.0.1:1/", .user = "dlqx"};
    assert_int_equal(mgmt_open(&cfg, &m, &err), ST_EINVAL);
    assert_null(m);
    assert_non_null(strstr(err.msg, "must not carry credentials"));
    assert_null(strstr(err.msg, "s3cret-in-url"));
    cfg.url = "ftp://127.0.0.1/";
    assert_int_equal(mgmt_open(&cfg, &m, &err), ST_EINVAL);
    cfg.url = "http://127.0.0.1:1/?x=1";
    assert_int_equal(mgmt_open(&cfg, &m, &err), ST_EINVAL);
    cfg.url = "not a url";
    assert_int_equal(mgmt_open(&cfg, &m, &err), ST_EINVAL);
    cfg.url = l->url;
    cfg.user = NULL;
    assert_int_equal(mgmt_open(&cfg, &m, &err), ST_EINVAL);
    /* A path prefix is kept; the trailing slash is not doubled. */
    cfg.user = "dlqx";
    cfg.url = "http://127.0.0.1:1/rabbit//";
    assert_int_equal(mgmt_open(&cfg, &m, &err), ST_OK);
    assert_string_equal(mgmt_display_url(m), "http://127.0.0.1:1/rabbit/");
    mgmt_close(&m);
    char *e = mgmt_escape("/");
    assert_string_equal(e, "%2F");
    free(e);
    e = mgmt_escape("a b+ä");
    assert_string_equal(e, "a%20b%2B%C3%A4");
    free(e);
}

/* A list of management URLs (one per node of a cluster): a request goes on to the next URL
 * when a node is dead (connection refused) or hung (no answer in time), the client stays with
 * the one that answered, and a list none of whose URLs answers says so. A change (PUT) is sent
 * again only when it cannot have arrived. Each URL of the list is checked like a single one. */
static void test_url_list(void **state)
{
    struct live *l = *state;
    struct error err;
    char *dead = xasprintf("http://127.0.0.1:%d/", closed_port());
    char *hung;
    int s = hung_listener(&hung);
    char *list = xasprintf("%s , %s,%s", dead, hung, l->url);
    struct mgmt *m = open_client(l, list, l->password, 0, 0, 400);
    assert_string_equal(mgmt_display_url(m), dead);
    struct mgmt_overview o;
    if (mgmt_overview(m, &o, &err) != ST_OK)
        fail_msg("overview through the list: %s", err.msg);
    mgmt_overview_free(&o);
    assert_int_equal(strncmp(mgmt_display_url(m), l->url, strlen(mgmt_display_url(m))), 0);
    /* The stepped listing begins where the client is, and the client takes where it ended. */
    struct mgmt *m2 = open_client(l, list, l->password, 0, 0, 400);
    struct mgmt_fetch *f = mgmt_fetch_start(m2, l->vhost, 0);
    double longest;
    if (fetch_run(f, &err, &longest) != MGMT_FETCH_DONE)
        fail_msg("fetch through the list: %s", err.msg);
    assert_string_equal(mgmt_display_url(m2), dead);
    mgmt_fetch_adopt(m2, f);
    assert_string_equal(mgmt_display_url(m2), mgmt_display_url(m));
    mgmt_fetch_free(&f);
    mgmt_close(&m2);
    mgmt_close(&m);
    free(list);

    /* None answers: one error, the last URL's, saying the others did not answer either. */
    list = xasprintf("%s,%s", dead, hung);
    m = open_client(l, list, l->password, 0, 0, 400);
    enum status st = mgmt_overview(m, &o, &err);
    assert_int_equal(st, ST_EIO);
    assert_non_null(strstr(err.msg, "none of the other 1 management URLs answered"));
    /* A PUT to a hung node (where the client stayed) may have been carried out: it is not
     * sent again elsewhere. */
    assert_string_equal(mgmt_display_url(m), hung);
    long code = 0;
    st = mgmt_request(m, "PUT", "/api/vhosts/dlqx-never", "{}", &code, NULL, &err);
    assert_int_equal(st, ST_EIO);
    assert_null(strstr(err.msg, "none of the other"));
    mgmt_close(&m);
    free(list);

    /* Each URL is checked: a bad one anywhere in the list, or an empty entry, is refused. */
    struct mgmt_config cfg = {.user = "dlqx", .password = ""};
    list = xasprintf("%s,http://dlqx:s3cret@127.0.0.1:1/", l->url);
    cfg.url = list;
    m = NULL;
    assert_int_equal(mgmt_open(&cfg, &m, &err), ST_EINVAL);
    assert_null(m);
    assert_non_null(strstr(err.msg, "must not carry credentials"));
    assert_null(strstr(err.msg, "s3cret"));
    free(list);
    cfg.url = "http://127.0.0.1:1/,,http://127.0.0.1:2/";
    assert_int_equal(mgmt_open(&cfg, &m, &err), ST_EINVAL);
    assert_non_null(strstr(err.msg, "empty entry (URL 2)"));
    free(dead);
    free(hung);
    close(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config),    cmocka_unit_test(test_overview),
        cmocka_unit_test(test_discovery), cmocka_unit_test(test_paging),
        cmocka_unit_test(test_errors),    cmocka_unit_test(test_fetch),
        cmocka_unit_test(test_url_list),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
