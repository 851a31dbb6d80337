/*
 * replay_bench: bulk replay of a dead-letter queue, pipelined confirms against one confirm
 * per message, in one run on the same broker.
 *
 *   replay_bench --count 100000 [--size 1024] [--windows 0,2000] [--w1-count N]
 *                [--seed-bin build/dlqx-seed] [--journal-dir DIR] [--prefetch P]
 *
 * Every pass starts from a DLQ freshly filled by dlqx-seed (`--scenario bulk`: N AceMQ
 * set-aside copies of SIZE bytes in P+bulk.dlq, a classic queue; their source P+bulk is a
 * quorum queue), with a prefix of its own, and replays all of it back to the source:
 *
 *   (a) baseline: the libraries' way, written plainly with rabbitmq-c — a consumer with manual
 *       acks; for each message the re-stamped copy is published to the source (mandatory, in
 *       confirm mode), the confirm for that very publish awaited (amqp_simple_wait_frame until
 *       its basic.ack), then the dead letter acked. One round trip per message; no journal.
 *   (b) dlqx's engine, replay_run with window 1: the same per-message discipline plus dlqx's
 *       journal (intent and outcome fsync'd) and the round trip that proves the ack.
 *   (c) dlqx's engine pipelined: replay_run with each window of --windows (0 = the default,
 *       1000), journal in a temporary directory.
 *   (r) --rounds R (3) rounds of RabbitMQ's own move, a dynamic shovel (ack-mode on-confirm,
 *       created and deleted through the management API: replay_shovel.c), dlqx replay and dlqx
 *       move (replay_run at the default window, RESTAMP_MOVE to the source), the order
 *       rotated each round, with client and broker CPU per message and the ratios dlqx/shovel
 *       (replay_rounds.c). bench/run-replay.sh enables rabbitmq_shovel on the node.
 *
 * The engine is driven as the UI and the CLI drive it: a plan of the exact dead letters (id
 * and body digest, read from the DLQ before the pass and not timed) and a select callback
 * that takes each planned message and builds its copy with restamp_build (RESTAMP_REPLAY).
 * After every pass the DLQ must be empty and the source must hold exactly N, every copy at
 * the source re-stamped (checked on its first message): otherwise the benchmark fails.
 * Between passes the queues and the exchange of the pass are deleted.
 *
 * The broker comes from the environment scripts/broker writes (DLQX_URL, DLQX_PASSWORD_FILE);
 * dlqx-seed reads the same. Exit status: 0 when every pass ran and checked out (a missed
 * target is printed, not an error), 1 otherwise.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <amqp.h>

#include "benchutil.h"
#include "conn.h"
#include "decode.h"
#include "journal.h"
#include "peek.h"
#include "replay.h"
#include "replay_baseline.h"
#include "replay_setup.h"
#include "replay_bench.h"
#include "replay_shovel.h"
#include "restamp.h"
#include "sha256.h"
#include "util.h"

#define PLAN_CH 4 /* reading the DLQ to make the plan */
#define RATIO_TARGET 5.0

static const char *fs_name(const char *path)
{
    struct statfs s;
    if (statfs(path, &s) != 0)
        return "?";
    switch ((unsigned long)s.f_type) {
    case 0xEF53UL:
        return "ext4";
    case 0x01021994UL:
        return "tmpfs";
    case 0x58465342UL:
        return "xfs";
    case 0x9123683EUL:
        return "btrfs";
    case 0x794C7630UL:
        return "overlayfs";
    default:
        return "other";
    }
}

/* --- the broker ------------------------------------------------------------------------- */

static uint32_t depth(struct conn *c, const char *q)
{
    return queue_depth(c, CTL_CH, q);
}

/* A quorum queue counts a moment late: polls (up to 10 s) until want. */
static uint32_t depth_settled(struct conn *c, const char *q, uint32_t want)
{
    uint32_t n = 0;
    for (int i = 0; i < 100; i++) {
        if ((n = depth(c, q)) == want)
            return n;
        usleep(100000);
    }
    return n;
}

static struct conn *connect_broker(const struct broker *b, const char *name)
{
    return bench_connect(b->url, b->password, name, CTL_CH);
}

/* The bench's own control connection (declares, depths, the plan, deletes). rabbitmq-c sends
 * heartbeats only from inside its calls, so one left idle while a pass runs on a connection
 * of its own, or while dlqx-seed fills a queue, would be closed by the broker for missed
 * heartbeats: it is closed before those (ctl_drop) and opened again when next needed (and
 * after 20 s idle, to be sure). */
static const struct broker *g_brk;
static struct conn *g_ctl;
static double g_ctl_used;

struct conn *ctl(void)
{
    double t = clock_mono_s();
    if (g_ctl && (t - g_ctl_used > 20.0 || !conn_alive(g_ctl))) {
        conn_close(g_ctl);
        g_ctl = NULL;
    }
    if (!g_ctl)
        g_ctl = connect_broker(g_brk, "dlqx replay_bench");
    g_ctl_used = t;
    return g_ctl;
}

static void ctl_drop(void)
{
    if (g_ctl)
        conn_close(g_ctl);
    g_ctl = NULL;
}

void names_for(struct names *n, int pass)
{
    snprintf(n->prefix, sizeof n->prefix, "rb%ld-%d-", (long)getpid(), pass);
    snprintf(n->src, sizeof n->src, "%sbulk", n->prefix);
    snprintf(n->dlq, sizeof n->dlq, "%sbulk.dlq", n->prefix);
    snprintf(n->dlx, sizeof n->dlx, "%sacemq.dlx", n->prefix);
}

void drop(struct conn *c, const struct names *n)
{
    amqp_connection_state_t st = conn_state(c);
    amqp_queue_delete(st, CTL_CH, amqp_cstring_bytes(n->src), 0, 0);
    check_rpc(st, "deleting the source queue");
    amqp_queue_delete(st, CTL_CH, amqp_cstring_bytes(n->dlq), 0, 0);
    check_rpc(st, "deleting the DLQ");
    amqp_exchange_delete(st, CTL_CH, amqp_cstring_bytes(n->dlx), 0);
    check_rpc(st, "deleting the dead-letter exchange");
}

/* Fills P+bulk.dlq with count messages (dlqx-seed, which reads DLQX_URL and
 * DLQX_PASSWORD_FILE from the environment) and checks the depth. */
void seed(struct conn *c, const struct config *cfg, const struct names *n, uint32_t count)
{
    char *cmd = xasprintf("'%s' --scenario bulk --count %" PRIu32 " --size %zu --prefix '%s' 2>&1",
                          cfg->seed_bin, count, cfg->size, n->prefix);
    (void)c;
    ctl_drop(); /* it would idle while dlqx-seed runs */
    FILE *p = popen(cmd, "r");
    if (!p)
        die("cannot run %s: %s", cfg->seed_bin, strerror(errno));
    char line[512], all[4096] = "";
    size_t used = 0;
    while (fgets(line, sizeof line, p)) {
        if (strncmp(line, "published ", 10) == 0)
            printf("  seed: %s", line);
        size_t l = strlen(line);
        if (used + l < sizeof all) {
            memcpy(all + used, line, l + 1);
            used += l;
        }
    }
    int rc = pclose(p);
    free(cmd);
    if (rc != 0)
        die("dlqx-seed failed (status %d):\n%s", rc, all);
    c = ctl();
    uint32_t d = depth(c, n->dlq);
    if (d != count)
        die("after seeding %s holds %" PRIu32 " messages, not %" PRIu32, n->dlq, d, count);
    if (depth(c, n->src) != 0)
        die("after seeding the source %s is not empty", n->src);
}

/* --- (b), (c): dlqx's engine ------------------------------------------------------------- */

struct sel {
    struct replay_plan *plan;
    const char *dlq;
    int64_t now_ms;
    enum restamp_mode mode; /* RESTAMP_REPLAY, or RESTAMP_MOVE to to_queue */
    const char *to_queue;
    uint64_t keep_reasons;
    char last_reason[300];
    double started, last_print, limit_s;
    bool progress, cancelled;
};

/* As the UI and the CLI select with a plan: the exact dead letter (id and body digest), its
 * copy built by restamp. */
static enum replay_action sel_cb(void *ctx, const struct message *m, uint64_t pos,
                                 struct outgoing *out, char *why, size_t whylen)
{
    struct sel *s = ctx;
    struct decoded d;
    decode_message(m, s->now_ms, &d);
    enum replay_action a = RA_SKIP;
    if (replay_plan_take_message(s->plan, m, &d)) {
        struct restamp_opts ro;
        memset(&ro, 0, sizeof ro);
        ro.mode = s->mode;
        ro.dlq = s->dlq;
        if (s->mode == RESTAMP_MOVE) {
            ro.to_exchange = "";
            ro.to_routing_key = s->to_queue;
        }
        ro.now_ms = s->now_ms;
        struct error err;
        error_clear(&err);
        if (restamp_build(&d, &ro, out, &err) == ST_OK) {
            a = RA_SEND;
        } else {
            snprintf(why, whylen, "%s", err.msg);
            a = RA_KEEP;
        }
    }
    decoded_free(&d);
    return a;
}

/* Progress every 5 s (--progress), and the time limit (--pass-limit). */
static enum replay_ctl sel_progress(void *ctx, const struct replay_progress *p)
{
    struct sel *s = ctx;
    double t = clock_mono_s(), el = t - s->started;
    if (s->progress && t - s->last_print >= 5.0) {
        s->last_print = t;
        fprintf(stderr,
                "  progress %6.1f s: %s, taken %" PRIu64 ", done %" PRIu64 ", in flight %" PRIu64
                ", %.0f msg/s, CPU %.1f s\n",
                el, p->phase, p->taken, p->done, p->in_flight, p->rate, cpu_s());
    }
    if (s->limit_s > 0 && el > s->limit_s && !s->cancelled) {
        s->cancelled = true;
        fprintf(stderr, "  the pass has run for %.0f s (--pass-limit): cancelling it\n", el);
    }
    return s->cancelled ? RC_CANCEL : RC_GO;
}

static void sel_outcome(void *ctx, uint64_t seq, uint64_t position, const struct bytes *old_id,
                        enum journal_result res, const char *reason)
{
    struct sel *s = ctx;
    if (res != JR_DONE && reason) {
        s->keep_reasons++;
        snprintf(s->last_reason, sizeof s->last_reason, "%s", reason);
    }
}

/* The plan: every dead letter in the DLQ, read by holding them all and closing the channel
 * (which gives them back in order). Not timed. */
static struct replay_plan *make_plan(struct conn *c, const char *dlq, uint32_t n)
{
    amqp_connection_state_t st = conn_state(c);
    enum conn_err kind;
    struct error err;
    error_clear(&err);
    if (conn_channel_open(c, PLAN_CH, &kind, &err) != ST_OK)
        die("%s", err.msg);
    amqp_basic_qos(st, PLAN_CH, 0, n <= 65535 ? (uint16_t)n : 0, 0);
    check_rpc(st, "basic.qos (plan)");
    amqp_basic_consume(st, PLAN_CH, amqp_cstring_bytes(dlq), amqp_empty_bytes, 0, 0, 0,
                       amqp_empty_table);
    check_rpc(st, "basic.consume (plan)");
    struct replay_plan *p = replay_plan_new();
    int64_t now = clock_now_ms();
    for (uint32_t i = 0; i < n; i++) {
        amqp_envelope_t e;
        amqp_maybe_release_buffers(st);
        struct timeval tv = {60, 0};
        amqp_rpc_reply_t r = amqp_consume_message(st, &e, &tv, 0);
        if (r.reply_type != AMQP_RESPONSE_NORMAL)
            die("reading %s for the plan: got %" PRIu32 " of %" PRIu32, dlq, i, n);
        struct message m;
        peek_message_from_envelope(&e, dlq, now, &m);
        amqp_destroy_envelope(&e);
        struct decoded d;
        decode_message(&m, now, &d);
        replay_plan_add_message(p, &m, &d);
        decoded_free(&d);
        message_free(&m);
    }
    conn_channel_close(c, PLAN_CH);
    if (depth_settled(c, dlq, n) != n)
        die("after reading the plan %s does not hold %" PRIu32 " messages", dlq, n);
    return p;
}

__attribute__((noinline)) struct engine_result engine_pass(struct conn *c, const struct broker *b,
                                                           const struct names *nm, uint32_t n,
                                                           uint32_t window, enum restamp_mode mode,
                                                           const char *journal_path,
                                                           const struct config *cfg)
{
    struct replay_plan *plan = make_plan(c, nm->dlq, n);
    ctl_drop(); /* it would idle while the pass runs */
    /* Its own connection (a name operators see, a long timeout), given to the set-up. */
    struct replay_setup rs;
    struct replay_setup_args ra = {.conn = connect_broker(b, "dlqx replay_bench (engine)"),
                                   .journal_path = journal_path,
                                   .queue = nm->dlq,
                                   .op = restamp_mode_name(mode),
                                   .kind = QK_CLASSIC, /* what the management API tells dlqx */
                                   .delivery_limit = -1,
                                   .expect = replay_plan_size(plan)};
    struct error err;
    error_clear(&err);
    if (replay_setup_open(&rs, &ra, &err) != ST_OK)
        die("%s", err.msg);
    struct sel s;
    memset(&s, 0, sizeof s);
    s.plan = plan;
    s.dlq = nm->dlq;
    s.mode = mode;
    s.to_queue = nm->src;
    s.now_ms = clock_now_ms();
    s.progress = cfg->progress;
    s.limit_s = cfg->pass_limit_s;
    struct replay_opts o = rs.opts;
    o.window = window;
    o.idle_timeout_ms = 60000;
    o.confirm_timeout_ms = 60000;
    o.select = sel_cb;
    o.outcome = sel_outcome;
    o.progress = sel_progress;
    o.ctx = &s;
    struct replay_report r;
    enum conn_err kind = CONN_OK;
    double t0 = clock_mono_s(), c0 = cpu_s(), b0 = broker_cpu_s();
    s.started = s.last_print = t0;
    enum status st = replay_run(rs.conn, &o, &r, &kind, &err);
    double dt = clock_mono_s() - t0, dc = cpu_s() - c0, b1 = broker_cpu_s();
    if (st != ST_OK)
        die("replay_run: %s", err.msg);
    struct conn *ec = rs.conn; /* given: the set-up only borrowed it */
    replay_setup_close(&rs);
    conn_close(ec);
    struct engine_result res;
    memset(&res, 0, sizeof res);
    res.seconds = dt;
    res.engine_seconds = r.seconds;
    res.cpu_s = dc;
    res.broker_s = b0 >= 0 && b1 >= 0 ? b1 - b0 : -1;
    res.done = r.done;
    res.unknown = r.unknown;
    res.peak_active = r.peak_active;
    res.read_limit = r.read_limit;
    res.read_consumers = r.read_consumers;
    res.cancelled = s.cancelled && r.end == RE_CANCELLED;
    if (res.cancelled) {
        printf("  CANCELLED after %.0f s (--pass-limit): %" PRIu64 " done of %" PRIu32 ", %" PRIu64
               " not sent (still in the DLQ): %s\n",
               dt, r.done, n, r.not_sent, r.detail);
    } else if (r.done != n || r.kept || r.unknown || replay_plan_size(plan)) {
        res.failed = true;
        snprintf(res.how, sizeof res.how,
                 "ended %s after %.1f s: %" PRIu64 " done, %" PRIu64 " kept, %" PRIu64
                 " unknown of %" PRIu32 ", %" PRIu64 " read: %.300s%s%.150s",
                 replay_end_name(r.end), dt, r.done, r.kept, r.unknown, n, r.taken, r.detail,
                 s.last_reason[0] ? "; last reason: " : "", s.last_reason);
        printf("  FAILED: replay_run (window %" PRIu32 ") %s\n", window, res.how);
    }
    replay_plan_free(plan);
    struct stat sb;
    if (stat(journal_path, &sb) == 0)
        res.journal_bytes = (uint64_t)sb.st_size;
    return res;
}

/* --- checks ------------------------------------------------------------------------------ */

/* The DLQ is empty, the source holds exactly n, and its first message is a replayed copy
 * (restamped), or the dead letter as it was (a move, the shovel: x-acemq-error kept). */
void check_after(struct conn *c, const struct names *nm, uint32_t n, const char *what,
                 bool restamped)
{
    uint32_t d = depth(c, nm->dlq);
    uint32_t s = depth_settled(c, nm->src, n);
    if (d != 0 || s != n)
        die("after %s the DLQ holds %" PRIu32 " (expected 0) and the source %" PRIu32
            " (expected %" PRIu32 ")",
            what, d, s, n);
    amqp_connection_state_t st = conn_state(c);
    amqp_maybe_release_buffers(st);
    amqp_rpc_reply_t r = amqp_basic_get(st, CTL_CH, amqp_cstring_bytes(nm->src), 1);
    if (r.reply_type != AMQP_RESPONSE_NORMAL || r.reply.id != AMQP_BASIC_GET_OK_METHOD)
        die("after %s: basic.get on the source failed", what);
    amqp_message_t m;
    if (amqp_read_message(st, CTL_CH, &m, 0).reply_type != AMQP_RESPONSE_NORMAL)
        die("after %s: reading a copy failed", what);
    bool attempt1 = false, from = false, error_gone = true;
    if (m.properties._flags & AMQP_BASIC_HEADERS_FLAG) {
        const amqp_table_t *h = &m.properties.headers;
        for (int i = 0; i < h->num_entries; i++) {
            amqp_bytes_t k = h->entries[i].key;
            if (key_is(k, "x-acemq-attempt"))
                attempt1 = field_int(&h->entries[i].value) == 1;
            else if (key_is(k, "acemq-replayed-from"))
                from = h->entries[i].value.kind == AMQP_FIELD_KIND_UTF8 &&
                       key_is(h->entries[i].value.value.bytes, nm->dlq);
            else if (key_is(k, "x-acemq-error"))
                error_gone = false;
        }
    }
    amqp_destroy_message(&m);
    if (!restamped) {
        if (error_gone || from)
            die("after %s the first copy at the source is not the dead letter as it was", what);
        printf("  check: DLQ 0, source %" PRIu32 ", copies as they were: ok\n", s);
        return;
    }
    if (!attempt1 || !from || !error_gone)
        die("after %s the first copy at the source is not re-stamped (attempt 1: %d, "
            "replayed-from: %d, error cleared: %d)",
            what, attempt1, from, error_gone);
    printf("  check: DLQ 0, source %" PRIu32 ", copies re-stamped: ok\n", s);
}

/* After a pass that was cancelled or failed: every message is in the DLQ or its copy at the
 * source (nothing lost), the source holds the ones done plus at most the unknown ones, and
 * the DLQ has lost only the ones done. */
void check_nothing_lost(struct conn *c, const struct names *nm, uint32_t n, uint32_t done,
                        uint32_t unknown, const char *what)
{
    uint32_t s = 0, d = 0;
    for (int i = 0; i < 100; i++) { /* a dead connection's messages come back a moment late */
        s = depth(c, nm->src);
        d = depth(c, nm->dlq);
        if (s + d >= n && s >= done && d <= n - done && d + done >= n)
            break;
        usleep(100000);
    }
    if (s + d < n || s < done || s > done + unknown || d > n - done)
        die("after %s the DLQ holds %" PRIu32 " and the source %" PRIu32 " (%" PRIu32
            " done, %" PRIu32 " unknown): messages were LOST or counted wrong",
            what, d, s, done, unknown);
    printf("  check: DLQ %" PRIu32 " + source %" PRIu32 " = %" PRIu32 " of %" PRIu32 " (%" PRIu32
           " possible duplicates, all counted unknown): nothing lost: ok\n",
           d, s, d + s, n, d + s - n);
}

/* --- main -------------------------------------------------------------------------------- */

static void usage(void)
{
    fputs(
        "usage: replay_bench [--count N] [--size B] [--windows W[,W...]] [--w1-count N]\n"
        "                    [--seed-bin PATH] [--journal-dir DIR] [--prefetch P] "
        "[--keep-journal] [--passes abcr]\n"
        "                    [--pass-limit S] [--progress] [--rounds R] [--shovel-uri U]\n"
        "  --windows: pipelined windows for replay_run (0 = its default, 1000); default 0,2000\n"
        "  --w1-count: N for the window-1 pass (default: --count)\n"
        "  --passes: which passes to run, e.g. c (default abcr; r: the shovel rounds)\n"
        "  --rounds R: rounds of shovel, dlqx replay, dlqx move (default 3)\n"
        "  --shovel-uri U: the shovel's src-uri and dest-uri (default amqp://, direct; net: over\n"
        "                TCP as dlqx connects, DLQX_URL with the password)\n"
        "  --pass-limit S: cancel an engine pass after S seconds (its figure is then partial)\n"
        "  --progress: the engine's progress every 5 s (stderr)\n"
        "environment: DLQX_URL, DLQX_PASSWORD_FILE (scripts/broker env)\n",
        stderr);
    exit(2);
}

static void parse_windows(struct config *cfg, const char *s)
{
    cfg->n_windows = 0;
    char *dup = xstrdup(s), *save = NULL;
    for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        if (cfg->n_windows == MAX_WINDOWS)
            die("--windows takes at most %d windows", MAX_WINDOWS);
        char *end;
        errno = 0;
        unsigned long v = strtoul(t, &end, 10);
        if (errno || *end || !*t || v > 65535 || v == 1)
            die("--windows: \"%s\" is not a window from 2 to 65535 (or 0)", t);
        cfg->windows[cfg->n_windows++] = (uint32_t)v;
    }
    free(dup);
    if (!cfg->n_windows)
        die("--windows needs at least one window");
}

struct figure {
    char name[64];
    uint32_t n;
    double seconds, cpu_us;
    double rate;
    bool partial; /* cancelled by --pass-limit, or failed: n is what was done by then */
    bool failed;
};

static void print_figure(const struct figure *f, const char *extra)
{
    printf("  %-38s %7" PRIu32 " msgs in %7.2f s = %7.0f msg/s | client CPU %6.1f us/msg%s%s\n",
           f->name, f->n, f->seconds, f->rate, f->cpu_us,
           f->failed    ? " | FAILED (done before it ended)"
           : f->partial ? " | PARTIAL: cancelled by --pass-limit"
                        : "",
           extra);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    bench_set_name("replay_bench");
    struct config cfg = {.count = 100000,
                         .size = 1024,
                         .prefetch = 256,
                         .seed_bin = "build/dlqx-seed",
                         .run_a = true,
                         .run_b = true,
                         .run_c = true,
                         .run_r = true,
                         .rounds = 3,
                         .shovel_uri = "amqp://"};
    parse_windows(&cfg, "0,2000");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        if (strcmp(a, "--count") == 0 && more)
            cfg.count = (uint32_t)number_arg(a, argv[++i], 1, 10000000);
        else if (strcmp(a, "--w1-count") == 0 && more)
            cfg.w1_count = (uint32_t)number_arg(a, argv[++i], 1, 10000000);
        else if (strcmp(a, "--size") == 0 && more)
            cfg.size = (size_t)number_arg(a, argv[++i], 128, 1u << 20);
        else if (strcmp(a, "--windows") == 0 && more)
            parse_windows(&cfg, argv[++i]);
        else if (strcmp(a, "--prefetch") == 0 && more)
            cfg.prefetch = (uint16_t)number_arg(a, argv[++i], 1, 65535);
        else if (strcmp(a, "--seed-bin") == 0 && more)
            cfg.seed_bin = argv[++i];
        else if (strcmp(a, "--journal-dir") == 0 && more)
            cfg.journal_dir = argv[++i];
        else if (strcmp(a, "--keep-journal") == 0)
            cfg.keep_journal = true;
        else if (strcmp(a, "--progress") == 0)
            cfg.progress = true;
        else if (strcmp(a, "--pass-limit") == 0 && more)
            cfg.pass_limit_s = (double)number_arg(a, argv[++i], 1, 86400);
        else if (strcmp(a, "--passes") == 0 && more) {
            const char *ps = argv[++i];
            cfg.run_a = strchr(ps, 'a') != NULL;
            cfg.run_b = strchr(ps, 'b') != NULL;
            cfg.run_c = strchr(ps, 'c') != NULL;
            cfg.run_r = strchr(ps, 'r') != NULL;
            if (!*ps || strspn(ps, "abcr") != strlen(ps))
                die("--passes takes letters from abcr");
        } else if (strcmp(a, "--rounds") == 0 && more)
            cfg.rounds = (uint32_t)number_arg(a, argv[++i], 1, 100);
        else if (strcmp(a, "--round-window") == 0 && more)
            cfg.round_window = (uint32_t)number_arg(a, argv[++i], 2, 65535);
        else if (strcmp(a, "--shovel-uri") == 0 && more) {
            cfg.shovel_uri = argv[++i];
        } else
            usage();
    }
    if (!cfg.w1_count)
        cfg.w1_count = cfg.count;
    const char *url = getenv("DLQX_URL"), *pwfile = getenv("DLQX_PASSWORD_FILE");
    if (!url || !*url || !pwfile || !*pwfile)
        die("DLQX_URL and DLQX_PASSWORD_FILE must be set (. $dir/env)");
    if (access(cfg.seed_bin, X_OK) != 0)
        die("no dlqx-seed at %s (--seed-bin)", cfg.seed_bin);

    /* The journals: a temporary directory of their own. */
    char *jdir;
    if (cfg.journal_dir) {
        jdir = xstrdup(cfg.journal_dir);
        if (mkdir(jdir, 0700) != 0 && errno != EEXIST)
            die("cannot create %s: %s", jdir, strerror(errno));
    } else {
        const char *t = getenv("TMPDIR");
        jdir = xasprintf("%s/dlqx-replay-bench-XXXXXX", t && *t ? t : "/tmp");
        if (!mkdtemp(jdir))
            die("mkdtemp %s: %s", jdir, strerror(errno));
    }

    struct error err;
    error_clear(&err);
    char *password = NULL;
    if (conn_read_password_file(pwfile, &password, &err) != ST_OK)
        die("%s", err.msg);
    struct broker brk = {url, password};
    g_brk = &brk;
    struct conn *c = ctl();
    bool any_failed = false;
    printf("replay_bench: %s, RabbitMQ %s; %" PRIu32 " x %zu B AceMQ dead letters per pass "
           "(dlqx-seed --scenario bulk), DLQ classic -> source quorum, persistent\n",
           conn_display_url(c), conn_server_version(c), cfg.count, cfg.size);
    printf("journals in %s (%s)\n", jdir, fs_name(jdir));

    struct figure figs[2 + MAX_WINDOWS];
    size_t nf = 0;
    int pass = 0;

    int ia = -1, ib = -1;
    /* (a) */
    if (cfg.run_a) {
        struct names nm;
        names_for(&nm, ++pass);
        printf("== (a) baseline, rabbitmq-c: consume (prefetch %u), publish, wait for its "
               "confirm, ack — one confirm per message, no journal\n",
               (unsigned)cfg.prefetch);
        seed(ctl(), &cfg, &nm, cfg.count);
        ctl_drop(); /* it would idle while the pass runs */
        double c0 = cpu_s();
        struct conn *bc = connect_broker(&brk, "dlqx replay_bench (baseline)");
        double dt = baseline_pass(bc, nm.dlq, nm.src, cfg.count, cfg.prefetch);
        conn_close(bc);
        struct figure f = {"(a) baseline, one confirm per message",
                           cfg.count,
                           dt,
                           (cpu_s() - c0) * 1e6 / cfg.count,
                           cfg.count / dt,
                           false,
                           false};
        ia = (int)nf;
        figs[nf++] = f;
        print_figure(&f, "");
        c = ctl();
        check_after(c, &nm, cfg.count, "the baseline", true);
        drop(c, &nm);
    }
    /* (b) and (c) */
    for (size_t w = 0; w <= cfg.n_windows; w++) {
        uint32_t window = w == 0 ? 1 : cfg.windows[w - 1];
        uint32_t n = w == 0 ? cfg.w1_count : cfg.count;
        if ((w == 0 && !cfg.run_b) || (w > 0 && !cfg.run_c))
            continue;
        struct names nm;
        names_for(&nm, ++pass);
        char name[64];
        if (window == 1)
            snprintf(name, sizeof name, "(b) dlqx replay_run, window 1");
        else if (window == 0)
            snprintf(name, sizeof name, "(c) dlqx replay_run, window 1000 (dflt)");
        else
            snprintf(name, sizeof name, "(c) dlqx replay_run, window %" PRIu32, window);
        printf("== %s\n", name);
        seed(ctl(), &cfg, &nm, n);
        char *jpath = xasprintf("%s/journal-w%" PRIu32 ".jsonl", jdir, window);
        /* The plan is read inside engine_pass, before replay_run, and not timed. */
        struct engine_result er =
            engine_pass(ctl(), &brk, &nm, n, window, RESTAMP_REPLAY, jpath, &cfg);
        c = ctl();
        struct figure f;
        memset(&f, 0, sizeof f);
        snprintf(f.name, sizeof f.name, "%s", name);
        f.n = (uint32_t)er.done;
        f.seconds = er.seconds;
        f.cpu_us = er.done ? er.cpu_s * 1e6 / (double)er.done : 0;
        f.rate = (double)er.done / er.seconds;
        f.partial = er.cancelled || er.failed;
        f.failed = er.failed;
        if (window == 1)
            ib = (int)nf;
        figs[nf++] = f;
        char extra[200];
        snprintf(extra, sizeof extra,
                 " | journal %.1f MB, %.0f B/msg | at most %" PRIu64 " copies unsettled "
                 "(limit %" PRIu32 ", %" PRIu32 " consumer%s)",
                 (double)er.journal_bytes / 1048576.0,
                 er.done ? (double)er.journal_bytes / (double)er.done : 0.0, er.peak_active,
                 er.read_limit, er.read_consumers, er.read_consumers == 1 ? "" : "s");
        print_figure(&f, extra);
        if (er.cancelled || er.failed) {
            check_nothing_lost(c, &nm, n, (uint32_t)er.done, (uint32_t)er.unknown, name);
            any_failed |= er.failed;
        } else
            check_after(c, &nm, n, name, true);
        drop(c, &nm);
        if (!cfg.keep_journal)
            unlink(jpath);
        free(jpath);
    }

    if (cfg.run_r)
        any_failed |= shovel_rounds(&brk, jdir, &cfg, &pass);

    printf("== figures (%" PRIu32 " x %zu B, RabbitMQ %s, peak RSS %.1f MB)\n", cfg.count, cfg.size,
           conn_server_version(ctl()), peak_rss_mb());
    for (size_t i = 0; i < nf; i++)
        print_figure(&figs[i], "");
    size_t first_c = (size_t)(ia >= 0) + (size_t)(ib >= 0), best = first_c;
    for (size_t i = first_c; i < nf; i++)
        if (figs[i].rate > figs[best].rate)
            best = i;
    if (ia >= 0) {
        double a = figs[ia].rate;
        for (size_t i = first_c; i < nf; i++) {
            double r = figs[i].rate / a;
            printf("ratio %s / (a): %.2fx (target >= %.0fx)%s%s\n", figs[i].name + 4, r,
                   RATIO_TARGET, r >= RATIO_TARGET ? "" : "  ** below target **",
                   figs[i].partial ? " (partial: the pass was cancelled)" : "");
        }
    }
    if (ib >= 0)
        for (size_t i = first_c; i < nf; i++)
            printf("ratio %s / (b): %.2fx%s\n", figs[i].name + 4, figs[i].rate / figs[ib].rate,
                   figs[i].partial || figs[ib].partial ? " (from a partial figure)" : "");
    if (ia >= 0 && ib >= 0)
        printf("ratio (b) / (a): %.2f (what the journal's fsyncs and the ack proof cost at one "
               "confirm per message)%s\n",
               figs[ib].rate / figs[ia].rate, figs[ib].partial ? " (from a partial figure)" : "");
    if (ia >= 0 && best < nf)
        printf("best pipelined: %s, %.0f msg/s, %.2fx the baseline\n", figs[best].name + 4,
               figs[best].rate, figs[best].rate / figs[ia].rate);

    if (!cfg.keep_journal)
        rmdir(jdir);
    free(jdir);
    conn_close(g_ctl);
    conn_secret_free(password);
    if (any_failed)
        printf("replay_bench: a pass FAILED (see above); nothing was lost\n");
    return any_failed ? 1 : 0;
}
