/*
 * seed_amqp: dlqx-seed's AMQP session — login, topology declares, confirmed publishing with a
 * window in flight, basic.get/reject/nack, passive-declare depth checks and the final table.
 *
 * Two channels: declares and gets on one, publishing in confirm mode on the other, so that
 * confirms never land in the middle of a synchronous RPC. Every error is fatal and reported
 * as one sentence naming what was being done.
 */
#include "seed.h"

#include <amqp_tcp_socket.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hval_amqp.h"
#include "util.h"

#define CONNECT_TIMEOUT_S 5
#define CONFIRM_TIMEOUT_S 30
#define HEARTBEAT_S 30
#define FRAME_MAX 131072

/* Timeouts run on the monotonic clock: DLQX_NOW freezes the other one. */
static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void seed_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("dlqx-seed: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

const char *seed_name(struct seed *s, const char *base)
{
    xgrow((void **)&s->names, &s->capnames, s->nnames + 1, sizeof *s->names);
    char *n = xasprintf("%s%s", s->cfg->prefix, base);
    s->names[s->nnames++] = n;
    return n;
}

/* The password: the file's first line, without its line ending. Never echoed. */
static char *read_password(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        seed_fail("cannot read the password file %s: %s", path, strerror(errno));
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    buf[strcspn(buf, "\r\n")] = '\0';
    if (!buf[0])
        seed_fail("the password file %s is empty", path);
    char *p = xstrdup(buf);
    explicit_bzero(buf, sizeof buf);
    return p;
}

/* Whether the URL's user-info holds a password (amqp_parse_url would default one anyway). */
static bool url_has_password(const char *url)
{
    const char *p = strstr(url, "://");
    p = p ? p + 3 : url;
    size_t auth = strcspn(p, "/?#");
    const char *at = NULL;
    for (size_t i = 0; i < auth; i++)
        if (p[i] == '@')
            at = p + i;
    return at && memchr(p, ':', (size_t)(at - p)) != NULL;
}

static const char *reply_text(const amqp_bytes_t *b, char *out, size_t n)
{
    snprintf(out, n, "%.*s", (int)(b->len > 400 ? 400 : b->len), (const char *)b->bytes);
    return out;
}

/* Answers a server close (so the broker logs a clean close) and describes it. */
static void describe_close(struct seed *s, amqp_channel_t ch, const amqp_method_t *m, char *out,
                           size_t n, int *code)
{
    char text[420];
    if (m->id == AMQP_CONNECTION_CLOSE_METHOD) {
        const amqp_connection_close_t *c = m->decoded;
        *code = c->reply_code;
        snprintf(out, n, "%s", reply_text(&c->reply_text, text, sizeof text));
        amqp_connection_close_ok_t ok = {0};
        amqp_send_method(s->conn, 0, AMQP_CONNECTION_CLOSE_OK_METHOD, &ok);
    } else if (m->id == AMQP_CHANNEL_CLOSE_METHOD) {
        const amqp_channel_close_t *c = m->decoded;
        *code = c->reply_code;
        snprintf(out, n, "%s", reply_text(&c->reply_text, text, sizeof text));
        amqp_channel_close_ok_t ok = {0};
        amqp_send_method(s->conn, ch, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
    } else {
        *code = 0;
        snprintf(out, n, "unexpected method 0x%08x", (unsigned)m->id);
    }
}

/* 0 when r is normal; else the broker's reply code (with its text in out) or -1 for a
 * library error. */
static int reply_status(struct seed *s, amqp_channel_t ch, amqp_rpc_reply_t r, char *out, size_t n)
{
    switch (r.reply_type) {
    case AMQP_RESPONSE_NORMAL:
        return 0;
    case AMQP_RESPONSE_SERVER_EXCEPTION: {
        int code;
        describe_close(s, ch, &r.reply, out, n, &code);
        return code ? code : -1;
    }
    case AMQP_RESPONSE_LIBRARY_EXCEPTION:
        snprintf(out, n, "%s", amqp_error_string2(r.library_error));
        return -1;
    default:
        snprintf(out, n, "no reply");
        return -1;
    }
}

static void check_reply(struct seed *s, amqp_channel_t ch, const char *what)
{
    char text[512];
    if (reply_status(s, ch, amqp_get_rpc_reply(s->conn), text, sizeof text))
        seed_fail("%s failed: %s", what, text);
}

static void login_fail(const struct amqp_connection_info *ci, int code, const char *text)
{
    if (code == 403 || strstr(text, "ACCESS_REFUSED"))
        seed_fail("the broker refused user %s (bad credentials): check the password file",
                  ci->user);
    if (code == 530)
        seed_fail("user %s may not use vhost %s: %s", ci->user, ci->vhost, text);
    if (code == -1 && strstr(text, "closed"))
        seed_fail("the broker at %s:%d closed the connection during login (bad credentials, or not "
                  "an AMQP port?)",
                  ci->host, ci->port);
    seed_fail("login to %s:%d as %s failed: %s", ci->host, ci->port, ci->user, text);
}

/* Why a TCP connection fails ("Connection refused"): rabbitmq-c reports only "a socket error
 * occurred", so try once more with a plain connect to name the cause. */
static const char *connect_error(const char *host, int port, int rc)
{
    char svc[16];
    snprintf(svc, sizeof svc, "%d", port);
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai = NULL;
    int gai = getaddrinfo(host, svc, &hints, &ai);
    if (gai)
        return gai_strerror(gai);
    const char *why = amqp_error_string2(rc);
    int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd >= 0) {
        struct timeval tv = {CONNECT_TIMEOUT_S, 0};
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0)
            why = errno == EINPROGRESS || errno == EAGAIN ? "timed out" : strerror(errno);
        close(fd);
    }
    freeaddrinfo(ai);
    return why;
}

void seed_connect(struct seed *s, const struct config *cfg)
{
    s->cfg = cfg;
    if (url_has_password(cfg->url))
        seed_fail("the URL carries a password, which `ps` would show; put it in --password-file");
    char *url = xstrdup(cfg->url);
    struct amqp_connection_info ci;
    amqp_default_connection_info(&ci);
    if (amqp_parse_url(url, &ci) != AMQP_STATUS_OK)
        seed_fail("cannot parse the URL (expected amqp://USER@HOST:PORT/VHOST)");
    if (ci.ssl)
        seed_fail(
            "amqps:// is not supported by dlqx-seed (it seeds local test brokers); use amqp://");
    char *password = read_password(cfg->password_file);

    s->conn = amqp_new_connection();
    amqp_socket_t *sock = amqp_tcp_socket_new(s->conn);
    if (!sock)
        seed_fail("cannot create a TCP socket");
    struct timeval tv = {CONNECT_TIMEOUT_S, 0};
    int rc = amqp_socket_open_noblock(sock, ci.host, ci.port, &tv);
    if (rc != AMQP_STATUS_OK)
        seed_fail("cannot connect to %s:%d (%s): is the broker running?", ci.host, ci.port,
                  connect_error(ci.host, ci.port, rc));

    /* Ask for connection.close on a failed login rather than a dropped socket. */
    amqp_table_entry_t caps[] = {
        {amqp_cstring_bytes("authentication_failure_close"),
         {AMQP_FIELD_KIND_BOOLEAN, {.boolean = 1}}},
        {amqp_cstring_bytes("publisher_confirms"), {AMQP_FIELD_KIND_BOOLEAN, {.boolean = 1}}},
        {amqp_cstring_bytes("consumer_cancel_notify"), {AMQP_FIELD_KIND_BOOLEAN, {.boolean = 1}}},
        {amqp_cstring_bytes("connection.blocked"), {AMQP_FIELD_KIND_BOOLEAN, {.boolean = 1}}},
    };
    amqp_table_entry_t props[] = {
        {amqp_cstring_bytes("product"),
         {AMQP_FIELD_KIND_UTF8, {.bytes = amqp_cstring_bytes("dlqx-seed")}}},
        {amqp_cstring_bytes("connection_name"),
         {AMQP_FIELD_KIND_UTF8, {.bytes = amqp_cstring_bytes("dlqx-seed")}}},
        {amqp_cstring_bytes("capabilities"), {AMQP_FIELD_KIND_TABLE, {.table = {4, caps}}}},
    };
    amqp_table_t pt = {3, props};
    amqp_rpc_reply_t r = amqp_login_with_properties(s->conn, ci.vhost, 0, FRAME_MAX, HEARTBEAT_S,
                                                    &pt, AMQP_SASL_METHOD_PLAIN, ci.user, password);
    explicit_bzero(password, strlen(password));
    free(password);
    char text[512];
    int code = reply_status(s, 0, r, text, sizeof text);
    if (code)
        login_fail(&ci, code, text);
    free(url);

    s->rpc = 1;
    s->pub = 2;
    amqp_channel_open(s->conn, s->rpc);
    check_reply(s, s->rpc, "opening a channel");
    amqp_channel_open(s->conn, s->pub);
    check_reply(s, s->pub, "opening a channel");
    amqp_confirm_select(s->conn, s->pub);
    check_reply(s, s->pub, "confirm.select");
    if (!s->window)
        s->window = 1000;
    s->done = xcalloc(s->window, 1);
    s->next_tag = s->low = 1;
    init_amqp_pool(&s->pool, 16384);
}

void seed_close(struct seed *s)
{
    if (s->conn) {
        amqp_channel_close(s->conn, s->pub, AMQP_REPLY_SUCCESS);
        amqp_channel_close(s->conn, s->rpc, AMQP_REPLY_SUCCESS);
        amqp_connection_close(s->conn, AMQP_REPLY_SUCCESS);
        amqp_destroy_connection(s->conn);
        s->conn = NULL;
    }
    empty_amqp_pool(&s->pool);
    free(s->done);
    for (size_t i = 0; i < s->nqueues; i++)
        free(s->queues[i].name);
    free(s->queues);
    for (size_t i = 0; i < s->nnames; i++)
        free(s->names[i]);
    free(s->names);
}

/* --- topology --------------------------------------------------------------------------- */

static void conflict_or_fail(struct seed *s, const char *kind, const char *name)
{
    char text[512];
    int code = reply_status(s, s->rpc, amqp_get_rpc_reply(s->conn), text, sizeof text);
    if (code == 406)
        seed_fail("%s %s exists with other arguments; use a fresh broker or --prefix (%s)", kind,
                  name, text);
    if (code)
        seed_fail("declaring %s %s failed: %s", kind, name, text);
}

void seed_exchange(struct seed *s, const char *name, const char *type)
{
    amqp_exchange_declare(s->conn, s->rpc, amqp_cstring_bytes(name), amqp_cstring_bytes(type), 0, 1,
                          0, 0, amqp_empty_table);
    conflict_or_fail(s, "exchange", name);
}

void seed_queue(struct seed *s, const char *name, const char *type, const struct htable *args,
                long expected)
{
    struct htable *a = args ? htable_copy(args) : htable_new();
    if (strcmp(type, "classic") != 0)
        htable_set(a, "x-queue-type", hval_cstring(type));
    amqp_pool_t pool;
    init_amqp_pool(&pool, 4096);
    amqp_table_t t;
    htable_to_amqp(a, &pool, &t);
    amqp_queue_declare_ok_t *ok =
        amqp_queue_declare(s->conn, s->rpc, amqp_cstring_bytes(name), 0, 1, 0, 0, t);
    empty_amqp_pool(&pool);
    htable_free(a);
    conflict_or_fail(s, "queue", name);
    if (ok && ok->message_count)
        seed_fail("queue %s already holds %" PRIu32 " messages; use a fresh broker or --prefix",
                  name, ok->message_count);
    xgrow((void **)&s->queues, &s->capqueues, s->nqueues + 1, sizeof *s->queues);
    s->queues[s->nqueues++] = (struct made_queue){xstrdup(name), type, expected, NULL};
}

void seed_bind(struct seed *s, const char *queue, const char *exchange, const char *key)
{
    amqp_queue_bind(s->conn, s->rpc, amqp_cstring_bytes(queue), amqp_cstring_bytes(exchange),
                    amqp_cstring_bytes(key), amqp_empty_table);
    char what[600];
    snprintf(what, sizeof what, "binding queue %s to exchange %s", queue, exchange);
    check_reply(s, s->rpc, what);
}

/* --- confirmed publishing ------------------------------------------------------------- */

static void mark(struct seed *s, uint64_t tag, bool multiple, bool nack)
{
    if (tag < s->low || tag >= s->next_tag)
        return; /* already counted, or not ours */
    uint64_t from = multiple ? s->low : tag;
    for (uint64_t t = from; t <= tag; t++) {
        unsigned char *d = &s->done[t % s->window];
        if (!*d && nack)
            s->nacked++;
        *d = 1;
    }
    while (s->low < s->next_tag && s->done[s->low % s->window]) {
        s->done[s->low % s->window] = 0;
        s->low++;
    }
}

/* Reads one frame (waiting up to the confirm timeout when block) and handles it. */
static bool pump(struct seed *s, bool block)
{
    struct timeval tv = {block ? CONFIRM_TIMEOUT_S : 0, 0};
    amqp_frame_t f;
    int rc = amqp_simple_wait_frame_noblock(s->conn, &f, &tv);
    if (rc == AMQP_STATUS_TIMEOUT) {
        if (block && s->blocked[0])
            seed_fail("the broker has blocked publishers (%s) and confirmed nothing for %d s",
                      s->blocked, CONFIRM_TIMEOUT_S);
        if (block)
            seed_fail("no publisher confirm from the broker within %d s (%" PRIu64 " outstanding)",
                      CONFIRM_TIMEOUT_S, s->next_tag - s->low);
        return false;
    }
    if (rc != AMQP_STATUS_OK)
        seed_fail("lost the connection while publishing: %s", amqp_error_string2(rc));
    if (f.frame_type != AMQP_FRAME_METHOD)
        return true;
    char text[512];
    int code;
    switch (f.payload.method.id) {
    case AMQP_BASIC_ACK_METHOD: {
        const amqp_basic_ack_t *a = f.payload.method.decoded;
        mark(s, a->delivery_tag, a->multiple, false);
        break;
    }
    case AMQP_BASIC_NACK_METHOD: {
        const amqp_basic_nack_t *a = f.payload.method.decoded;
        mark(s, a->delivery_tag, a->multiple, true);
        break;
    }
    case AMQP_BASIC_RETURN_METHOD: {
        /* An unroutable mandatory publish: the return, its content, then the ack. */
        const amqp_basic_return_t *r = f.payload.method.decoded;
        if (!s->returned++)
            snprintf(s->returned_to, sizeof s->returned_to, "exchange \"%.*s\", key %.*s",
                     (int)r->exchange.len, (const char *)r->exchange.bytes, (int)r->routing_key.len,
                     (const char *)r->routing_key.bytes);
        amqp_message_t m;
        amqp_rpc_reply_t rr = amqp_read_message(s->conn, f.channel, &m, 0);
        if (rr.reply_type != AMQP_RESPONSE_NORMAL)
            seed_fail("reading a returned message failed");
        amqp_destroy_message(&m);
        break;
    }
    case AMQP_CONNECTION_BLOCKED_METHOD: {
        /* A memory or disk alarm: publishes wait (and the confirm timeout says why). */
        const amqp_connection_blocked_t *b = f.payload.method.decoded;
        reply_text(&b->reason, s->blocked, sizeof s->blocked);
        fprintf(stderr, "dlqx-seed: the broker blocked publishing: %s\n", s->blocked);
        break;
    }
    case AMQP_CONNECTION_UNBLOCKED_METHOD:
        s->blocked[0] = '\0';
        break;
    case AMQP_CHANNEL_CLOSE_METHOD:
    case AMQP_CONNECTION_CLOSE_METHOD:
        describe_close(s, f.channel, &f.payload.method, text, sizeof text, &code);
        seed_fail("the broker closed the %s while publishing: %s",
                  f.payload.method.id == AMQP_CHANNEL_CLOSE_METHOD ? "channel" : "connection",
                  text);
    default:
        break;
    }
    if (!amqp_frames_enqueued(s->conn))
        amqp_maybe_release_buffers(s->conn);
    return true;
}

void seed_publish(struct seed *s, const char *exchange, const char *rk, const struct props *p,
                  const struct htable *headers, const void *body, size_t len)
{
    amqp_basic_properties_t ap;
    props_to_amqp(p, headers, headers != NULL, &s->pool, &ap);
    amqp_bytes_t b = {len, (void *)(uintptr_t)body};
    int rc = amqp_basic_publish(s->conn, s->pub, amqp_cstring_bytes(exchange),
                                amqp_cstring_bytes(rk), 1, 0, &ap, b);
    recycle_amqp_pool(&s->pool);
    if (rc != AMQP_STATUS_OK)
        seed_fail("publishing to %s failed: %s", rk, amqp_error_string2(rc));
    s->next_tag++;
    s->published++;
    /* Keep the pipe moving (and heartbeats answered) without a syscall per message. */
    if ((s->published & 63) == 0)
        while (pump(s, false))
            ;
    while (s->next_tag - s->low >= s->window)
        pump(s, true);
}

void seed_flush(struct seed *s)
{
    while (s->low < s->next_tag)
        pump(s, true);
    if (s->nacked)
        seed_fail("the broker refused %" PRIu64 " messages (basic.nack)", s->nacked);
    if (s->returned)
        seed_fail("%" PRIu64 " messages were unroutable (first: %s)", s->returned, s->returned_to);
}

/* --- reading back ---------------------------------------------------------------------- */

bool seed_get(struct seed *s, const char *queue, uint64_t *tag, struct message *out)
{
    char what[300];
    snprintf(what, sizeof what, "basic.get on queue %s", queue);
    amqp_rpc_reply_t r = amqp_basic_get(s->conn, s->rpc, amqp_cstring_bytes(queue), 0);
    char text[512];
    if (reply_status(s, s->rpc, r, text, sizeof text))
        seed_fail("%s failed: %s", what, text);
    if (r.reply.id == AMQP_BASIC_GET_EMPTY_METHOD)
        return false;
    const amqp_basic_get_ok_t *ok = r.reply.decoded;
    *tag = ok->delivery_tag;
    if (out) {
        message_init(out);
        out->queue = bytes_from_cstr(queue);
        out->exchange = bytes_dup(ok->exchange.bytes, ok->exchange.len);
        out->routing_key = bytes_dup(ok->routing_key.bytes, ok->routing_key.len);
        out->redelivered = ok->redelivered;
    }
    amqp_message_t m;
    r = amqp_read_message(s->conn, s->rpc, &m, 0);
    if (reply_status(s, s->rpc, r, text, sizeof text))
        seed_fail("%s failed: %s", what, text);
    if (out) {
        props_from_amqp(&m.properties, &out->props, &out->headers, &out->headers_present);
        out->body = bytes_dup(m.body.bytes, m.body.len);
    }
    amqp_destroy_message(&m);
    amqp_maybe_release_buffers(s->conn);
    return true;
}

void seed_ack(struct seed *s, uint64_t tag)
{
    int rc = amqp_basic_ack(s->conn, s->rpc, tag, 0);
    if (rc != AMQP_STATUS_OK)
        seed_fail("basic.ack failed: %s", amqp_error_string2(rc));
}

void seed_reject(struct seed *s, uint64_t tag)
{
    int rc = amqp_basic_reject(s->conn, s->rpc, tag, 0);
    if (rc != AMQP_STATUS_OK)
        seed_fail("basic.reject failed: %s", amqp_error_string2(rc));
}

void seed_nack_requeue(struct seed *s, uint64_t tag, bool multiple)
{
    int rc = amqp_basic_nack(s->conn, s->rpc, tag, multiple, 1);
    if (rc != AMQP_STATUS_OK)
        seed_fail("basic.nack failed: %s", amqp_error_string2(rc));
}

long seed_depth(struct seed *s, const char *queue)
{
    amqp_queue_declare_ok_t *ok = amqp_queue_declare(s->conn, s->rpc, amqp_cstring_bytes(queue), 1,
                                                     0, 0, 0, amqp_empty_table);
    char what[300];
    snprintf(what, sizeof what, "checking the depth of queue %s", queue);
    check_reply(s, s->rpc, what);
    long n = ok ? (long)ok->message_count : 0;
    amqp_maybe_release_buffers(s->conn);
    return n;
}

void seed_wait_depth(struct seed *s, const char *queue, long want, long timeout_ms)
{
    int64_t until = mono_ms() + timeout_ms;
    long n;
    while ((n = seed_depth(s, queue)) != want) {
        if (mono_ms() > until)
            seed_fail("queue %s holds %ld messages after %.1f s, expected %ld", queue, n,
                      (double)timeout_ms / 1000.0, want);
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
}

static struct made_queue *find_queue(const struct seed *s, const char *name)
{
    for (size_t i = 0; i < s->nqueues; i++)
        if (strcmp(s->queues[i].name, name) == 0)
            return &s->queues[i];
    seed_fail("internal: queue %s was never declared", name);
}

void seed_note(struct seed *s, const char *queue, const char *note)
{
    find_queue(s, queue)->note = note;
}

void seed_expect_add(struct seed *s, const char *queue, long n)
{
    find_queue(s, queue)->expected += n;
}

long seed_expected(const struct seed *s, const char *queue)
{
    return find_queue(s, queue)->expected;
}

bool seed_report(struct seed *s)
{
    bool ok = true;
    printf("%-32s %-8s %9s  %s\n", "queue", "type", "messages", "what");
    for (size_t i = 0; i < s->nqueues; i++) {
        const struct made_queue *q = &s->queues[i];
        long n = seed_depth(s, q->name);
        /* A stream's count trails its confirms by up to a second or so. */
        for (int64_t until = mono_ms() + 30000; n != q->expected && mono_ms() < until;) {
            struct timespec ts = {0, 50 * 1000000L};
            nanosleep(&ts, NULL);
            n = seed_depth(s, q->name);
        }
        bool match = q->expected < 0 || n == q->expected;
        printf("%-32s %-8s %9ld  %s%s\n", q->name, q->type, n, q->note ? q->note : "",
               match ? "" : " (unexpected)");
        if (!match) {
            fprintf(stderr, "dlqx-seed: queue %s holds %ld messages where %ld were expected\n",
                    q->name, n, q->expected);
            ok = false;
        }
    }
    return ok;
}
