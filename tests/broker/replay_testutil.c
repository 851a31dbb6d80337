/*
 * replay_testutil: helpers of the replay engine's live tests (replay_testutil.h).
 */
#include "../testutil.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "decode.h"
#include "journal.h"
#include "replay_testutil.h"
#include "util.h"

char journal_dir[] = "/tmp/dlqx-replay-test-XXXXXX";

/* ---- building dead letters --------------------------------------------------------------- */

static void set_prop(struct message *m, enum prop_flag f, const char *v)
{
    props_set_string(&m->props, f, v, strlen(v));
}

struct message acemq_dead(const char *id, const char *body)
{
    struct message m;
    message_init(&m);
    m.body = bytes_dup(body, strlen(body));
    set_prop(&m, PROP_content_type, "application/json");
    set_prop(&m, PROP_message_id, id);
    m.props.delivery_mode = 2;
    m.props.present |= 1u << PROP_delivery_mode;
    m.headers_present = true;
    struct htable *h = m.headers;
    htable_add(h, "x-acemq-id", hval_cstring(id));
    htable_add(h, "x-acemq-type", hval_cstring("order.placed"));
    htable_add(h, "x-acemq-version", hval_int(HV_I32, 2));
    htable_add(h, "x-acemq-correlation", hval_cstring("corr-1"));
    htable_add(h, "x-acemq-attempt", hval_int(HV_I32, 5));
    htable_add(h, "x-acemq-first-seen", hval_int(HV_I64, 1767323045678));
    htable_add(h, "x-acemq-causation", hval_cstring("cause-0"));
    htable_add(h, "x-acemq-origin", hval_cstring("orders@host-7"));
    htable_add(h, "x-acemq-error", hval_cstring("gave up after 5 attempts: Timeout: db"));
    htable_add(h, "x-acemq-future", hval_cstring("kept as it is"));
    htable_add(h, "tenant", hval_cstring("acme"));
    htable_add(h, "acemq-replay-count", hval_int(HV_I32, 2));
    return m;
}

struct message plain(const char *id, const char *body)
{
    struct message m;
    message_init(&m);
    m.body = bytes_dup(body, strlen(body));
    set_prop(&m, PROP_message_id, id);
    set_prop(&m, PROP_content_type, "text/plain");
    m.props.delivery_mode = 2; /* persistent, as dead letters are; a copy is persistent too */
    m.props.present |= 1u << PROP_delivery_mode;
    m.headers_present = true;
    htable_add(m.headers, "n", hval_cstring(id));
    return m;
}

const char BQ_DEAD[] =
    "{\"job\":\"urn:babel:orders:ship\",\"trace_id\":\"t-9\",\"data\":{\"sku\":\"A/1\",\"qty\":3,"
    "\"price\":99.90,\"note\":\"caf\\u00e9 \xe2\x82\xac\"},\"meta\":{\"id\":\"bq-1\",\"queue\":"
    "\"t.ship\",\"lang\":\"php\",\"schema_version\":1,\"created_at\":1767323045678},"
    "\"attempts\":4,\"dead_letter\":{\"reason\":\"failed\",\"error\":\"boom\",\"exception\":"
    "\"RuntimeException\",\"failed_at\":1767323049999,\"original_queue\":\"t.ship\","
    "\"attempts\":4,\"lang\":\"php\"},\"x_extra\":[1,2]}";
/* What every BabelQueue redrive keeps: the same bytes without dead_letter, attempts 0. */
const char BQ_REPLAYED[] =
    "{\"job\":\"urn:babel:orders:ship\",\"trace_id\":\"t-9\",\"data\":{\"sku\":\"A/1\",\"qty\":3,"
    "\"price\":99.90,\"note\":\"caf\\u00e9 \xe2\x82\xac\"},\"meta\":{\"id\":\"bq-1\",\"queue\":"
    "\"t.ship\",\"lang\":\"php\",\"schema_version\":1,\"created_at\":1767323045678},"
    "\"attempts\":0,\"x_extra\":[1,2]}";

struct message bq_dead(void)
{
    struct message m;
    message_init(&m);
    m.body = bytes_dup(BQ_DEAD, strlen(BQ_DEAD));
    set_prop(&m, PROP_content_type, "application/json");
    set_prop(&m, PROP_content_encoding, "utf-8");
    set_prop(&m, PROP_type, "urn:babel:orders:ship");
    set_prop(&m, PROP_correlation_id, "t-9");
    set_prop(&m, PROP_message_id, "bq-1");
    set_prop(&m, PROP_app_id, "babelqueue");
    m.props.delivery_mode = 2;
    m.props.present |= 1u << PROP_delivery_mode;
    m.headers_present = true;
    htable_add(m.headers, "x-schema-version", hval_int(HV_I32, 1));
    htable_add(m.headers, "x-source-lang", hval_cstring("php"));
    htable_add(m.headers, "x-attempts", hval_int(HV_I32, 4));
    return m;
}

/* ---- a run with a plan, as the CLI and the UI make one ---------------------------------- */

static enum replay_action sel_cb(void *ctx, const struct message *m, uint64_t pos,
                                 struct outgoing *out, char *why, size_t whylen)
{
    struct sel *s = ctx;
    struct decoded d;
    decode_message(m, clock_now_ms(), &d);
    enum replay_action a = RA_SKIP;
    if (replay_plan_take_message(s->plan, m, &d)) {
        if (s->is_delete) {
            a = RA_DELETE;
        } else {
            struct restamp_opts ro;
            memset(&ro, 0, sizeof ro);
            ro.mode = s->mode;
            ro.dlq = s->dlq;
            ro.to_exchange = s->to_exchange;
            ro.to_routing_key = s->to_routing_key;
            ro.now_ms = 1770091506000; /* 2026-02-03T04:05:06Z */
            struct error err;
            a = restamp_build(&d, &ro, out, &err) == ST_OK ? RA_SEND : RA_KEEP;
            if (a == RA_KEEP)
                snprintf(why, whylen, "%s", err.msg);
        }
    }
    if (a != RA_SKIP && pos < sizeof s->chosen)
        s->chosen[pos] = 1;
    decoded_free(&d);
    return a;
}

static enum replay_ctl sel_progress(void *ctx, const struct replay_progress *p)
{
    struct sel *s = ctx;
    if (s->kill_after_done > 0 && p->done >= (uint64_t)s->kill_after_done && s->conn) {
        /* The network goes away under dlqx. */
        shutdown(amqp_get_sockfd(conn_state(s->conn)), SHUT_RDWR);
        s->kill_after_done = 0;
    }
    return RC_GO;
}

static void sel_outcome(void *ctx, uint64_t seq, uint64_t position, const struct bytes *old_id,
                        enum journal_result res, const char *reason)
{
    struct sel *s = ctx;
    s->outcomes[res]++;
    if (position == 0 || (position < sizeof s->chosen && s->chosen[position] != 1))
        s->bad_positions++;
    else if (position < sizeof s->chosen)
        s->chosen[position] = 2;
    if (reason)
        snprintf(s->last_reason, sizeof s->last_reason, "%s", reason);
}

void plan_add_msg(struct replay_plan *p, const struct message *m)
{
    struct decoded d;
    decode_message(m, clock_now_ms(), &d);
    replay_plan_add_message(p, m, &d);
    decoded_free(&d);
}

/* The explorer's way: a step of 2 ms at a time, cancelled once s->cancel_after_done are done. */
static struct replay_report run_stepped(struct conn *c, struct sel *s, const struct replay_opts *o,
                                        const char *path)
{
    struct replay *p = NULL;
    struct error err;
    enum conn_err k;
    error_clear(&err);
    if (replay_start(c, o, &p, &k, &err) != ST_OK)
        fail_msg("replay_start %s: %s", s->dlq, err.msg);
    snprintf(s->run_id, sizeof s->run_id, "%s", replay_report_now(p)->run_id);
    s->steps = 0;
    for (bool more = true; more; s->steps++) {
        more = replay_step(p, clock_mono_s() + 0.002);
        if (more && !s->pending_at_cancel && replay_report_now(p)->done >= s->cancel_after_done) {
            if (journal_collect(path, s->run_id, true, NULL, NULL, &s->pending_at_cancel, NULL,
                                NULL, &err) != ST_OK)
                fail_msg("journal: %s", err.msg);
            replay_cancel(p);
        }
    }
    struct replay_report r;
    replay_finish(p, &r, &k);
    return r;
}

struct replay_report run_plan(struct conn *c, struct sel *s, uint32_t window, int canary_ms)
{
    char path[256];
    snprintf(path, sizeof path, "%s/journal.jsonl", journal_dir);
    struct journal *j = NULL;
    struct error err;
    if (journal_open(path, &j, &err) != ST_OK)
        fail_msg("%s", err.msg);
    memset(s->chosen, 0, sizeof s->chosen);
    s->bad_positions = 0;
    struct replay_opts o;
    memset(&o, 0, sizeof o);
    o.queue = s->dlq;
    o.kind = QK_CLASSIC;
    o.delivery_limit = -1;
    o.op = s->is_delete ? "delete" : restamp_mode_name(s->mode);
    o.expect = replay_plan_size(s->plan);
    o.window = window;
    o.rate = s->rate;
    o.ramp = s->ramp;
    o.n_ramp = s->n_ramp;
    o.canary_wait_ms = canary_ms;
    o.idle_timeout_ms = 3000;
    o.confirm_timeout_ms = 10000;
    o.journal = j;
    o.select = sel_cb;
    o.progress = sel_progress;
    o.outcome = sel_outcome;
    o.ctx = s;
    struct replay_report r;
    enum conn_err k;
    error_clear(&err);
    if (s->cancel_after_done)
        r = run_stepped(c, s, &o, path);
    else if (replay_run(c, &o, &r, &k, &err) != ST_OK)
        fail_msg("replay %s: %s", s->dlq, err.msg);
    journal_close(j);
    if (s->bad_positions)
        fail_msg("%u outcomes named a position select had not chosen (or twice)", s->bad_positions);
    return r;
}

/* The DLQ holds exactly `want` (in order). */
void expect_queue_at(struct conn *c, const char *q, const struct message *want, size_t n, int line)
{
    uint32_t depth0 = bt_depth(c, q); /* right after the pass */
    struct msglist got = bt_read_all(c, q, n);
    if (got.n != n)
        fail_msg("%s holds %zu messages, expected %zu", q, got.n, n);
    for (size_t i = 0; i < n; i++)
        if (!bt_same_message(&want[i], &got.m[i], false)) {
            /* Say what was there: the ids, in order, against those expected. */
            char have[512] = "", exp[512] = "";
            for (size_t k = 0; k < n && k < 12; k++) {
                const struct bytes *a = &got.m[k].props.message_id;
                const struct bytes *b = &want[k].props.message_id;
                size_t hl = strlen(have), el = strlen(exp);
                snprintf(have + hl, sizeof have - hl, " %.*s", (int)(a->len > 20 ? 20 : a->len),
                         a->data ? (const char *)a->data : "");
                snprintf(exp + el, sizeof exp - el, " %.*s", (int)(b->len > 20 ? 20 : b->len),
                         b->data ? (const char *)b->data : "");
            }
            /* And again, now that the read above has given everything back. */
            struct msglist again = bt_read_all(c, q, n);
            char have2[512] = "";
            for (size_t k = 0; k < again.n && k < 12; k++) {
                const struct bytes *a = &again.m[k].props.message_id;
                size_t hl = strlen(have2);
                snprintf(have2 + hl, sizeof have2 - hl, " %.*s", (int)(a->len > 20 ? 20 : a->len),
                         a->data ? (const char *)a->data : "");
            }
            msglist_free(&again);
            fail_msg("line %d: %s: message %zu differs from the one expected there (ids:%s; "
                     "expected:%s; depth right after the pass %u; read again:%s)",
                     line, q, i + 1, have, exp, depth0, have2);
        }
    msglist_free(&got);
}

/* A pass that replays its plan's dead letters to exchange:routing_key ("" : a queue). */
struct sel sel_for(const char *dlq, const char *exchange, const char *routing_key)
{
    struct sel s;
    memset(&s, 0, sizeof s);
    s.plan = replay_plan_new();
    s.dlq = dlq;
    s.mode = RESTAMP_REPLAY;
    s.to_exchange = exchange;
    s.to_routing_key = routing_key;
    return s;
}

/* n plain messages "P-0000", "P-0001", … (id and body alike), in an array to free. */
struct message *numbered(const char *prefix, size_t n)
{
    struct message *m = xcalloc(n ? n : 1, sizeof *m);
    for (size_t i = 0; i < n; i++) {
        char id[32];
        snprintf(id, sizeof id, "%.8s-%04zu", prefix, i);
        m[i] = plain(id, id);
    }
    return m;
}

void fresh(struct conn *c, const char *q)
{
    bt_queue_fresh(c, q, NULL);
}

/* ---- pacing, measured at the target ------------------------------------------------------ */

/* A consumer of queue q in a child process (a connection of its own): it takes each message
 * as it arrives and writes the monotonic time of its arrival (a double) to a pipe, until it
 * has n or 60 s have passed. Returns once its consumer is attached. */

struct arrivals arrivals_start(const char *q, size_t n)
{
    int p[2];
    if (pipe(p) != 0)
        fail_msg("pipe");
    pid_t pid = fork();
    if (pid < 0)
        fail_msg("fork");
    if (pid == 0) {
        close(p[0]);
        struct conn *c = bt_connect();
        amqp_connection_state_t st = conn_state(c);
        amqp_channel_open(st, 5);
        amqp_get_rpc_reply(st);
        amqp_basic_consume(st, 5, amqp_cstring_bytes(q), amqp_empty_bytes, 0, 1, 0,
                           amqp_empty_table);
        if (amqp_get_rpc_reply(st).reply_type != AMQP_RESPONSE_NORMAL)
            _exit(2);
        char ready = 'r';
        if (write(p[1], &ready, 1) != 1)
            _exit(3);
        double until = clock_mono_s() + 60;
        for (size_t got = 0; got < n && clock_mono_s() < until;) {
            amqp_envelope_t e;
            struct timeval tv = {1, 0};
            amqp_maybe_release_buffers(st);
            amqp_rpc_reply_t r = amqp_consume_message(st, &e, &tv, 0);
            if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
                r.library_error == AMQP_STATUS_TIMEOUT)
                continue;
            if (r.reply_type != AMQP_RESPONSE_NORMAL)
                _exit(4);
            double t = clock_mono_s();
            amqp_destroy_envelope(&e);
            if (write(p[1], &t, sizeof t) != sizeof t)
                _exit(5);
            got++;
        }
        _exit(0);
    }
    close(p[1]);
    char ready = 0;
    if (read(p[0], &ready, 1) != 1 || ready != 'r')
        fail_msg("the consumer of %s did not start", q);
    return (struct arrivals){pid, p[0]};
}

/* The arrival times (up to max), once the child has them all. */
size_t arrivals_end(struct arrivals a, double *t, size_t max)
{
    size_t n = 0;
    while (n < max && read(a.fd, &t[n], sizeof t[n]) == (ssize_t)sizeof t[n])
        n++;
    close(a.fd);
    int status = 0;
    kill(a.pid, SIGTERM);
    waitpid(a.pid, &status, 0);
    return n;
}

/* How many gaps between consecutive arrivals from..to-1 are under min (indexes from 0). */
size_t short_gaps(const double *t, size_t from, size_t to, double min, size_t *at)
{
    size_t n = 0;
    for (size_t i = from + 1; i < to; i++)
        if (t[i] - t[i - 1] < min && !n++)
            *at = i;
    return n;
}
