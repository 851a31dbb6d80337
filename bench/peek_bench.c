/*
 * peek_bench: what a snapshot of a live classic queue costs, measured against what the
 * client library alone can do and against the management API's "Get messages".
 *
 *   peek_bench rate --count 100000 --size 1024 [--rounds 3]   rates, same process, same queue
 *   peek_bench rss  --count 1000000 --size 1024 [--reuse]     dlqx alone: peak RSS, spill
 *
 * Both publish COUNT persistent AceMQ dead letters of SIZE bytes to a fresh classic queue
 * (publisher confirms, a window in flight), then read it holding everything and give it back
 * by closing the channel. "rate" alternates a plain rabbitmq-c consumer (the baseline) with
 * dlqx's peek_run into a store, checks after every round that the queue still holds COUNT
 * messages in their original order, and ends with the management API. "rss" runs only
 * dlqx's peek, in a process of its own so that nothing else inflates the peak.
 *
 * The broker comes from the environment scripts/broker writes (DLQX_URL, DLQX_PASSWORD_FILE,
 * DLQX_MGMT_URL). The password is read from its file and never put in a URL or argv.
 * Exit status: 0 when everything ran (a missed target is printed, not an error), 1 otherwise.
 */
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "benchutil.h"
#include "conn.h"
#include "peek.h"
#include "peek_held.h"
#include "store.h"
#include "util.h"

#define QUEUE "bench.peek.dlq"
#define CTL_CH 1  /* declares and passive declares (peek_run uses it too) */
#define READ_CH 2 /* the same channel number peek_run reads on */
#define PUB_CH 3
#define RATE_TARGET 0.85
#define RSS_TARGET_MB 400.0

struct config {
    const char *mode;
    uint32_t count;
    size_t size;
    int rounds;
    int window;
    bool reuse;
    uint32_t mgmt_count; /* 0: min(count, 10000) */
    const char *url, *password_file, *mgmt_url;
};

static double current_rss_mb(void)
{
    long pages = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return (double)resident * (double)sysconf(_SC_PAGESIZE) / (1024.0 * 1024.0);
}

static double mb(double bytes)
{
    return bytes / (1024.0 * 1024.0);
}

/* --- the messages ----------------------------------------------------------------------- */

static amqp_table_entry_t str_entry(const char *k, const char *v)
{
    amqp_table_entry_t e;
    e.key = amqp_cstring_bytes(k);
    e.value.kind = AMQP_FIELD_KIND_UTF8;
    e.value.value.bytes = amqp_cstring_bytes(v);
    return e;
}

static amqp_table_entry_t int_entry(const char *k, uint8_t kind, int64_t v)
{
    amqp_table_entry_t e;
    e.key = amqp_cstring_bytes(k);
    e.value.kind = kind;
    if (kind == AMQP_FIELD_KIND_I32)
        e.value.value.i32 = (int32_t)v;
    else
        e.value.value.i64 = v;
    return e;
}

/* --- publishing ------------------------------------------------------------------------- */

struct confirms {
    unsigned char *done; /* by delivery tag */
    uint64_t low;        /* every tag below is confirmed */
    uint64_t next;       /* the next tag to publish */
};

static void confirm_mark(struct confirms *c, uint64_t tag, bool multiple)
{
    if (tag < c->low || tag >= c->next)
        return;
    for (uint64_t t = multiple ? c->low : tag; t <= tag; t++)
        c->done[t] = 1;
    while (c->low < c->next && c->done[c->low])
        c->low++;
}

static void confirm_pump(amqp_connection_state_t st, struct confirms *c)
{
    amqp_frame_t f;
    struct timeval tv = {60, 0};
    int rc = amqp_simple_wait_frame_noblock(st, &f, &tv);
    if (rc == AMQP_STATUS_TIMEOUT)
        die("no publisher confirm within 60 s (%" PRIu64 " outstanding)", c->next - c->low);
    if (rc != AMQP_STATUS_OK)
        die("lost the connection while publishing: %s", amqp_error_string2(rc));
    if (f.frame_type == AMQP_FRAME_METHOD) {
        switch (f.payload.method.id) {
        case AMQP_BASIC_ACK_METHOD: {
            const amqp_basic_ack_t *a = f.payload.method.decoded;
            confirm_mark(c, a->delivery_tag, a->multiple);
            break;
        }
        case AMQP_BASIC_NACK_METHOD:
            die("the broker nacked a publish");
        case AMQP_CHANNEL_CLOSE_METHOD:
        case AMQP_CONNECTION_CLOSE_METHOD:
            die("the broker closed the %s while publishing",
                f.payload.method.id == AMQP_CHANNEL_CLOSE_METHOD ? "channel" : "connection");
        default:
            break;
        }
    }
    if (!amqp_frames_enqueued(st))
        amqp_maybe_release_buffers(st);
}

static uint32_t depth(struct conn *c)
{
    return queue_depth(c, CTL_CH, QUEUE);
}

static void queue_fresh(struct conn *c)
{
    amqp_connection_state_t st = conn_state(c);
    amqp_queue_delete(st, CTL_CH, amqp_cstring_bytes(QUEUE), 0, 0);
    check_rpc(st, "deleting " QUEUE);
    amqp_table_entry_t arg = str_entry("x-queue-type", "classic");
    amqp_table_t args = {1, &arg};
    amqp_queue_declare(st, CTL_CH, amqp_cstring_bytes(QUEUE), 0, 1, 0, 0, args);
    check_rpc(st, "declaring " QUEUE);
}

static void publish(struct conn *c, const struct config *cfg)
{
    amqp_connection_state_t st = conn_state(c);
    queue_fresh(c);
    amqp_channel_open(st, PUB_CH);
    check_rpc(st, "opening the publishing channel");
    amqp_confirm_select(st, PUB_CH);
    check_rpc(st, "confirm.select");

    struct confirms cf = {xcalloc((size_t)cfg->count + 2, 1), 1, 1};
    char *body = xmalloc(cfg->size + 1);
    int64_t base_ms = clock_now_ms() - 86400000;
    char id[37], corr[37], first[96];
    double t0 = clock_mono_s();
    for (uint32_t i = 0; i < cfg->count; i++) {
        seq_uuid(id, 0x51a7u, i);
        seq_uuid(corr, 0xc022u, i / 10); /* ten messages per correlation */
        int n = snprintf(first, sizeof first,
                         "{\"orderId\":\"A-%07" PRIu32 "\",\"seq\":%" PRIu32
                         ",\"customer\":4711,\"pad\":\"",
                         i, i);
        size_t w = (size_t)n < cfg->size ? (size_t)n : 0;
        memcpy(body, first, w);
        memset(body + w, 'x', cfg->size - w);
        if (cfg->size >= w + 2) {
            body[cfg->size - 2] = '"';
            body[cfg->size - 1] = '}';
        }
        amqp_table_entry_t h[7] = {
            str_entry("x-acemq-id", id),
            str_entry("x-acemq-type", peek_types[i % 4]),
            int_entry("x-acemq-version", AMQP_FIELD_KIND_I32, 1),
            str_entry("x-acemq-correlation", corr),
            int_entry("x-acemq-attempt", AMQP_FIELD_KIND_I32, (int64_t)(i % 5) + 1),
            int_entry("x-acemq-first-seen", AMQP_FIELD_KIND_I64, base_ms + (int64_t)i),
            str_entry("x-acemq-error", peek_errors[i % 3]),
        };
        amqp_basic_properties_t p;
        memset(&p, 0, sizeof p);
        p._flags = AMQP_BASIC_CONTENT_TYPE_FLAG | AMQP_BASIC_DELIVERY_MODE_FLAG |
                   AMQP_BASIC_MESSAGE_ID_FLAG | AMQP_BASIC_HEADERS_FLAG;
        p.content_type = amqp_cstring_bytes("application/json");
        p.delivery_mode = 2;
        p.message_id = amqp_cstring_bytes(id);
        p.headers.num_entries = 7;
        p.headers.entries = h;
        amqp_bytes_t b = {cfg->size, body};
        int rc = amqp_basic_publish(st, PUB_CH, amqp_empty_bytes, amqp_cstring_bytes(QUEUE), 0, 0,
                                    &p, b);
        if (rc != AMQP_STATUS_OK)
            die("publishing failed: %s", amqp_error_string2(rc));
        cf.next++;
        while (cf.next - cf.low >= (uint64_t)cfg->window)
            confirm_pump(st, &cf);
    }
    while (cf.low < cf.next)
        confirm_pump(st, &cf);
    double dt = clock_mono_s() - t0;
    amqp_channel_close(st, PUB_CH, AMQP_REPLY_SUCCESS);
    free(body);
    free(cf.done);
    printf("publish: %" PRIu32 " x %zu B persistent, confirmed, window %d: %.2f s, %.0f msg/s\n",
           cfg->count, cfg->size, cfg->window, dt, cfg->count / dt);
    uint32_t d = depth(c);
    if (d != cfg->count)
        die("after publishing the queue holds %" PRIu32 " messages, not %" PRIu32, d, cfg->count);
}

/* The longest wait between two deliveries: the broker pauses now and then (garbage
 * collection of a channel holding a million unacked messages, paging), and a pause longer
 * than peek_run's idle timeout ends a peek as incomplete. */
struct gap {
    double last, max;
    uint64_t n, at;
};

static void gap_tick(struct gap *g)
{
    double t = clock_mono_s();
    if (g->n && t - g->last > g->max) {
        g->max = t - g->last;
        g->at = g->n;
    }
    g->last = t;
    g->n++;
}

/* --- the baseline: a plain rabbitmq-c consumer that keeps what it got ------------------- */

/* Holds count messages of the queue and gives them back by closing the channel. Returns the
 * held messages (the caller frees them) and the time from the first request to the close.
 * Not inlined, so that a profiler can be told to count only inside it (and dlqx_hold):
 *   valgrind --tool=callgrind '--toggle-collect=baseline_hold*' --toggle-collect=dlqx_hold
 * (gcc may rename it baseline_hold.constprop.0). */
__attribute__((noinline)) static struct held **baseline_hold(struct conn *c, uint32_t count,
                                                             double *seconds, struct gap *gap)
{
    amqp_connection_state_t st = conn_state(c);
    struct held **held = xmalloc((size_t)count * sizeof *held);
    double t0 = clock_mono_s();
    uint32_t there = depth(c); /* a consumer must know how many to hold, as peek_run does */
    if (there != count)
        die("the queue holds %" PRIu32 " messages, not %" PRIu32, there, count);
    amqp_channel_open(st, READ_CH);
    check_rpc(st, "opening the reading channel");
    amqp_basic_qos(st, READ_CH, 0, count <= 65535 ? (uint16_t)count : 0, 0);
    check_rpc(st, "basic.qos");
    amqp_basic_consume(st, READ_CH, amqp_cstring_bytes(QUEUE), amqp_empty_bytes, 0, 0, 0,
                       amqp_empty_table);
    check_rpc(st, "basic.consume");
    for (uint32_t got = 0; got < count;) {
        amqp_envelope_t e;
        amqp_maybe_release_buffers(st);
        struct timeval tv = {60, 0};
        amqp_rpc_reply_t r = amqp_consume_message(st, &e, &tv, 0);
        if (r.reply_type != AMQP_RESPONSE_NORMAL)
            die("the baseline consumer stopped after %" PRIu32 " messages (reply %d, %s)", got,
                r.reply_type,
                r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION
                    ? amqp_error_string2(r.library_error)
                    : "-");
        held[got++] = held_copy(&e);
        amqp_destroy_envelope(&e);
        gap_tick(gap);
    }
    amqp_channel_close(st, READ_CH, AMQP_REPLY_SUCCESS);
    *seconds = clock_mono_s() - t0;
    return held;
}

/* --- dlqx: peek_run into a store -------------------------------------------------------- */

struct dlqx_sink {
    struct store *store;
    struct error err;
    bool failed;
    bool sample_rss; /* rss mode: watch where the peak happens */
    double max_rss_mb;
    size_t store_mem_at_max;
    struct gap gap;
};

static bool sink(void *vctx, struct message *m)
{
    struct dlqx_sink *s = vctx;
    gap_tick(&s->gap);
    enum status st = store_append(s->store, m, m->fetched_at_ms, &s->err);
    message_free(m);
    if (st != ST_OK) {
        s->failed = true;
        return false;
    }
    return true;
}

static bool progress(void *vctx, uint64_t done, uint64_t total)
{
    struct dlqx_sink *s = vctx;
    if (s->sample_rss && (done % 16384 == 0 || done == total)) {
        double r = current_rss_mb();
        if (r > s->max_rss_mb) {
            s->max_rss_mb = r;
            s->store_mem_at_max = store_memory(s->store);
        }
    }
    return true;
}

__attribute__((noinline)) static struct store *dlqx_hold(struct conn *c, uint32_t count,
                                                         struct dlqx_sink *ctx,
                                                         struct peek_report *rep, double *seconds)
{
    struct error err;
    error_clear(&err);
    if (store_new(0, NULL, &ctx->store, &err) != ST_OK)
        die("%s", err.msg);
    error_clear(&ctx->err);
    struct peek_opts po;
    memset(&po, 0, sizeof po);
    po.queue = QUEUE;
    po.info.kind = QK_CLASSIC; /* what the management API tells dlqx */
    po.info.delivery_limit = -1;
    /* The default (5 s) ended a 1M peek as "idle" at 567,294 messages once: the broker paused
     * longer than that. The benchmark measures the peek, so it waits; the pause is printed. */
    po.idle_timeout_ms = 60000;
    po.sink = sink;
    po.progress = progress;
    po.ctx = ctx;
    enum conn_err kind = CONN_OK;
    double t0 = clock_mono_s();
    enum status st = peek_run(c, &po, rep, &kind, &err);
    *seconds = clock_mono_s() - t0;
    if (st != ST_OK)
        die("peek_run: %s", err.msg);
    if (ctx->failed)
        die("store_append: %s", ctx->err.msg);
    if (rep->end != PEEK_COMPLETE || rep->fetched != count)
        die("peek ended %s after %" PRIu64 " of %" PRIu32 ": %s", peek_end_name(rep->end),
            rep->fetched, count, rep->detail);
    return ctx->store;
}

static bool store_in_order(const struct store *s, uint32_t count)
{
    char buf[STORE_TEXT_MAX];
    if (store_count(s) != count)
        return false;
    for (uint32_t i = 0; i < count; i++) {
        size_t n = store_text(s, store_entry_at(s, i)->id, buf);
        int64_t q = seq_of(buf, n);
        if (q != (int64_t)i) {
            printf("  dlqx: ORDER CHANGED: position %" PRIu32 " holds message #%" PRId64 "\n", i,
                   q);
            return false;
        }
    }
    return true;
}

/* --- the management API ----------------------------------------------------------------- */

static size_t curl_collect(char *data, size_t size, size_t n, void *ctx)
{
    sb_add(ctx, data, size * n);
    return size * n;
}

static char *url_user(const char *url)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    const char *at = strchr(p, '@');
    if (!at)
        return xstrdup("guest");
    const char *colon = memchr(p, ':', (size_t)(at - p));
    return xstrndup(p, (size_t)((colon ? colon : at) - p));
}

/* POST .../get for n messages with requeue; returns the seconds it took, sets *distinct (how
 * many different messages came back) and *in_order (whether they came in queue order). */
static double mgmt_get(const struct config *cfg, const char *password, uint32_t n, size_t *returned,
                       size_t *distinct, bool *in_order)
{
    CURL *h = curl_easy_init();
    if (!h)
        die("curl_easy_init failed");
    char *url = xasprintf("%sapi/queues/%%2F/%s/get", cfg->mgmt_url, QUEUE);
    char *post = xasprintf("{\"count\":%" PRIu32 ",\"ackmode\":\"ack_requeue_true\","
                           "\"encoding\":\"auto\",\"truncate\":50000}",
                           n);
    char *user = url_user(cfg->url);
    struct strbuf resp;
    sb_init(&resp);
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_USERNAME, user);
    curl_easy_setopt(h, CURLOPT_PASSWORD, password);
    curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, post);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, curl_collect);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &resp);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 900L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    double t0 = clock_mono_s();
    CURLcode rc = curl_easy_perform(h);
    double dt = clock_mono_s() - t0;
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    if (rc != CURLE_OK)
        die("management API get: %s", curl_easy_strerror(rc));
    if (code != 200)
        die("management API get: HTTP %ld: %.200s", code, resp.buf ? resp.buf : "");
    json_error_t jerr;
    json_t *arr = json_loadb(resp.buf, resp.len, 0, &jerr);
    if (!json_is_array(arr))
        die("management API get: not a JSON array (%s)", jerr.text);
    *returned = json_array_size(arr);
    unsigned char *seen = xcalloc((size_t)cfg->count + 1, 1);
    *distinct = 0;
    *in_order = true;
    for (size_t i = 0; i < *returned; i++) {
        const char *mid = json_string_value(
            json_object_get(json_object_get(json_array_get(arr, i), "properties"), "message_id"));
        int64_t s = mid ? seq_of(mid, strlen(mid)) : -1;
        if (s != (int64_t)i)
            *in_order = false;
        if (s >= 0 && s < (int64_t)cfg->count && !seen[s]++)
            (*distinct)++;
    }
    free(seen);
    json_decref(arr);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    sb_free(&resp);
    free(user);
    free(post);
    free(url);
    return dt;
}

/* --- the modes -------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void check_depth(struct conn *c, uint32_t count, const char *after)
{
    uint32_t d = depth(c);
    if (d != count)
        die("after %s the queue holds %" PRIu32 " messages, not %" PRIu32 ": aborting", after, d,
            count);
}

/* The management API's get gives its messages back as its channel closes, which may finish
 * after the HTTP answer: wait (up to 10 s) for the depth before checking it. */
static void wait_depth(struct conn *c, uint32_t count, const char *after)
{
    double until = clock_mono_s() + 10;
    while (depth(c) != count && clock_mono_s() < until)
        nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL);
    check_depth(c, count, after);
}

static int run_rate(struct conn *c, const struct config *cfg, const char *password)
{
    publish(c, cfg);
    uint32_t n = cfg->count;
    double base[64], dl[64], bcpu[64], dcpu[64];
    int rounds = cfg->rounds;
    bool order_ok = true;
    /* One round of each first, untimed: the broker's first read after a publish pays for
     * paging and caches that no later round sees. */
    for (int r = -1; r < rounds; r++) {
        double bt, dt, c0 = cpu_s();
        struct gap bgap = {0, 0, 0, 0};
        struct held **h = baseline_hold(c, n, &bt, &bgap);
        double bc = (cpu_s() - c0) * 1e6 / n;
        check_depth(c, n, "a baseline round");
        order_ok &= held_in_order(h, n, "baseline");
        held_free(h, n);

        struct dlqx_sink ctx;
        memset(&ctx, 0, sizeof ctx);
        struct peek_report rep;
        c0 = cpu_s();
        struct store *s = dlqx_hold(c, n, &ctx, &rep, &dt);
        double dc = (cpu_s() - c0) * 1e6 / n;
        check_depth(c, n, "a dlqx round");
        order_ok &= store_in_order(s, n);
        size_t smem = store_memory(s);
        uint64_t spill = store_spilled(s);
        store_free(s);
        if (r < 0) {
            printf("warm-up: baseline %.0f msg/s, dlqx %.0f msg/s (not counted)\n", n / bt, n / dt);
            continue;
        }
        base[r] = n / bt;
        dl[r] = n / dt;
        bcpu[r] = bc;
        dcpu[r] = dc;
        printf("round %d: baseline %6.0f msg/s (%.2f s, CPU %.1f us/msg, max gap %.2f s) | dlqx "
               "%6.0f msg/s (%.2f s, CPU %.1f us/msg, max gap %.2f s; store %.1f MB, %.1f MB "
               "spilled) | ratio %.2f\n",
               r + 1, base[r], bt, bc, bgap.max, dl[r], dt, dc, ctx.gap.max, mb((double)smem),
               mb((double)spill), dl[r] / base[r]);
    }
    double mb_ = median(base, rounds), md = median(dl, rounds);
    double ratio = md / mb_;
    printf("median: baseline %.0f msg/s, dlqx %.0f msg/s (%d rounds of %" PRIu32 " x %zu B)\n", mb_,
           md, rounds, n, cfg->size);
    printf("ratio dlqx/baseline: %.2f (target >= %.2f)%s\n", ratio, RATE_TARGET,
           ratio >= RATE_TARGET ? "" : "  ** below target **");
    double mbc = median(bcpu, rounds), mdc = median(dcpu, rounds);
    printf("client CPU per message (median): baseline %.1f us, dlqx %.1f us (%.1fx): at most "
           "%.0f msg/s for dlqx on one core with an infinitely fast broker\n",
           mbc, mdc, mdc / mbc, 1e6 / mdc);
    printf("queue order after every round: %s\n", order_ok ? "intact" : "CHANGED");

    uint32_t mn = cfg->mgmt_count ? cfg->mgmt_count : (n < 10000 ? n : 10000);
    size_t returned = 0, distinct = 0;
    bool got_in_order = false;
    double mt = mgmt_get(cfg, password, mn, &returned, &distinct, &got_in_order);
    wait_depth(c, n, "the management API get");
    printf("management API get-messages: N=%" PRIu32 " (of %" PRIu32 "), %.2f s, %.0f msg/s; "
           "%zu returned, %zu distinct, %s\n",
           mn, n, mt, mn / mt, returned, distinct,
           got_in_order ? "in queue order" : "NOT in queue order");
    if (returned != mn)
        die("the management API returned %zu messages, not %" PRIu32, returned, mn);
    printf("ratio dlqx/mgmt: %.1f\n", md / (mn / mt));
    double vt;
    struct gap vgap = {0, 0, 0, 0};
    struct held **h = baseline_hold(c, n, &vt, &vgap);
    bool after = held_in_order(h, n, "after the management API get");
    held_free(h, n);
    check_depth(c, n, "the order check");
    printf("queue order after the management API get: %s (all %" PRIu32 " read back by a "
           "consumer)\n",
           after ? "intact" : "CHANGED", n);
    return 0;
}

static int run_rss(struct conn *c, const struct config *cfg)
{
    uint32_t n = cfg->count;
    if (cfg->reuse && depth(c) == n)
        printf("publish: reusing the %" PRIu32 " messages already in " QUEUE "\n", n);
    else
        publish(c, cfg);
    double rss_before = peak_rss_mb(), cur_before = current_rss_mb();
    struct dlqx_sink ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.sample_rss = true;
    struct peek_report rep;
    double dt;
    struct store *s = dlqx_hold(c, n, &ctx, &rep, &dt);
    double rss_after = peak_rss_mb(), cur_after = current_rss_mb();
    check_depth(c, n, "the peek");
    bool order = store_in_order(s, n);
    struct mallinfo2 mi = mallinfo2();
    size_t smem = store_memory(s);
    printf("dlqx peek of %" PRIu32 " x %zu B into a store (default budget): %.2f s, %.0f msg/s "
           "(peek_run's own %.2f s)\n",
           n, cfg->size, dt, n / dt, rep.seconds);
    printf("longest wait between two deliveries: %.2f s (before message %" PRIu64 ")\n",
           ctx.gap.max, ctx.gap.at + 1);
    printf("peak RSS before the peek: %.1f MB (current %.1f MB)\n", rss_before, cur_before);
    printf("peak RSS after the peek:  %.1f MB (current %.1f MB; sampled peak %.1f MB with the "
           "store at %.1f MB)\n",
           rss_after, cur_after, ctx.max_rss_mb, mb((double)ctx.store_mem_at_max));
    printf("peak RSS: %.1f MB (target <= %.0f MB)%s\n", rss_after, RSS_TARGET_MB,
           rss_after <= RSS_TARGET_MB ? "" : "  ** below target **");
    printf("store_memory(): %.1f MB; store_spilled(): %.1f MB\n", mb((double)smem),
           mb((double)store_spilled(s)));
    printf("malloc: arena %.1f MB, mmap'd %.1f MB, in use %.1f MB, free in arena %.1f MB, "
           "releasable top %.1f MB\n",
           mb((double)mi.arena), mb((double)mi.hblkhd), mb((double)mi.uordblks + (double)mi.hblkhd),
           mb((double)mi.fordblks), mb((double)mi.keepcost));
    printf("queue after the peek: %" PRIu32 " messages, order %s\n", depth(c),
           order ? "intact" : "CHANGED");
    store_free(s);
    return order ? 0 : 1;
}

static void usage(void)
{
    fputs("usage: peek_bench rate [--count N] [--size B] [--rounds R] [--window W] "
          "[--mgmt-count N]\n"
          "       peek_bench rss  [--count N] [--size B] [--window W] [--reuse]\n"
          "environment: DLQX_URL, DLQX_PASSWORD_FILE, DLQX_MGMT_URL (scripts/broker env)\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    bench_set_name("peek_bench");
    struct config cfg = {.count = 100000, .size = 1024, .rounds = 3, .window = 1000};
    if (argc < 2 || (strcmp(argv[1], "rate") != 0 && strcmp(argv[1], "rss") != 0))
        usage();
    cfg.mode = argv[1];
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        bool more = i + 1 < argc;
        if (strcmp(a, "--count") == 0 && more)
            cfg.count = (uint32_t)number_arg(a, argv[++i], 1, 50000000);
        else if (strcmp(a, "--size") == 0 && more)
            cfg.size = (size_t)number_arg(a, argv[++i], 1, 1u << 20);
        else if (strcmp(a, "--rounds") == 0 && more)
            cfg.rounds = (int)number_arg(a, argv[++i], 1, 64);
        else if (strcmp(a, "--window") == 0 && more)
            cfg.window = (int)number_arg(a, argv[++i], 1, 1000000);
        else if (strcmp(a, "--mgmt-count") == 0 && more)
            cfg.mgmt_count = (uint32_t)number_arg(a, argv[++i], 1, 1000000);
        else if (strcmp(a, "--reuse") == 0)
            cfg.reuse = true;
        else
            usage();
    }
    cfg.url = getenv("DLQX_URL");
    cfg.password_file = getenv("DLQX_PASSWORD_FILE");
    cfg.mgmt_url = getenv("DLQX_MGMT_URL");
    if (!cfg.url || !cfg.password_file || (!cfg.mgmt_url && strcmp(cfg.mode, "rate") == 0))
        die("DLQX_URL, DLQX_PASSWORD_FILE and DLQX_MGMT_URL must be set (. $dir/env)");
    if (cfg.mgmt_count > cfg.count)
        cfg.mgmt_count = cfg.count;

    struct error err;
    error_clear(&err);
    char *password = NULL;
    if (conn_read_password_file(cfg.password_file, &password, &err) != ST_OK)
        die("%s", err.msg);
    struct conn *c = bench_connect(cfg.url, password, "dlqx peek_bench", CTL_CH);
    printf("peek_bench %s: %s, RabbitMQ %s, %" PRIu32 " x %zu B\n", cfg.mode, conn_display_url(c),
           conn_server_version(c), cfg.count, cfg.size);
    int rc;
    if (strcmp(cfg.mode, "rate") == 0) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        rc = run_rate(c, &cfg, password);
        curl_global_cleanup();
    } else {
        rc = run_rss(c, &cfg);
    }
    conn_close(c);
    conn_secret_free(password);
    return rc;
}
