/*
 * brokerutil: helpers for the suites that run against a real RabbitMQ node.
 */
#include "brokerutil.h"

#include "../testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hval_amqp.h"
#include "peek.h"
#include "util.h"

void msglist_free(struct msglist *l)
{
    for (size_t i = 0; i < l->n; i++)
        message_free(&l->m[i]);
    free(l->m);
    l->m = NULL;
    l->n = 0;
}

const char *bt_url(void)
{
    const char *u = getenv("DLQX_URL");
    if (!u || !*u)
        fail_msg("DLQX_URL is not set: this suite needs the test broker (tests/broker/run.sh)");
    return u;
}

const char *bt_password(void)
{
    static char *pw;
    if (pw)
        return pw;
    const char *f = getenv("DLQX_PASSWORD_FILE");
    if (!f || !*f)
        fail_msg("DLQX_PASSWORD_FILE is not set: this suite needs the test broker");
    struct error err;
    if (conn_read_password_file(f, &pw, &err) != ST_OK)
        fail_msg("%s", err.msg);
    return pw;
}

struct conn *bt_connect(void)
{
    const char *urls[1] = {bt_url()};
    struct conn_opts o;
    memset(&o, 0, sizeof o);
    o.urls = urls;
    o.n_urls = 1;
    o.password = bt_password();
    o.conn_name = "dlqx-tests";
    struct conn *c = NULL;
    struct error err;
    enum conn_err kind;
    if (conn_open(&o, &c, &kind, &err) != ST_OK)
        fail_msg("cannot connect to the test broker: %s", err.msg);
    if (conn_channel_open(c, 1, &kind, &err) != ST_OK)
        fail_msg("%s", err.msg);
    return c;
}

void bt_queue_delete(struct conn *c, const char *name)
{
    amqp_queue_delete(conn_state(c), 1, amqp_cstring_bytes(name), 0, 0);
    amqp_get_rpc_reply(conn_state(c));
}

void bt_queue_fresh(struct conn *c, const char *name, const struct htable *args)
{
    bt_queue_delete(c, name);
    amqp_pool_t pool;
    init_amqp_pool(&pool, 4096);
    amqp_table_t t = amqp_empty_table;
    if (args)
        htable_to_amqp(args, &pool, &t);
    amqp_queue_declare(conn_state(c), 1, amqp_cstring_bytes(name), 0, 1, 0, 0, t);
    struct error err;
    enum conn_err kind;
    if (conn_check_reply(c, 1, amqp_get_rpc_reply(conn_state(c)), "declaring a test queue", &kind,
                         &err) != ST_OK)
        fail_msg("%s", err.msg);
    empty_amqp_pool(&pool);
}

void bt_publish(struct conn *c, const char *exchange, const char *routing_key,
                const struct message *msgs, size_t n)
{
    amqp_connection_state_t st = conn_state(c);
    const amqp_channel_t ch = 3;
    struct error err;
    enum conn_err kind;
    if (conn_channel_open(c, ch, &kind, &err) != ST_OK)
        fail_msg("%s", err.msg);
    amqp_confirm_select(st, ch);
    if (conn_check_reply(c, ch, amqp_get_rpc_reply(st), "confirm.select", &kind, &err) != ST_OK)
        fail_msg("%s", err.msg);
    uint64_t acked = 0;
    for (size_t i = 0; i < n; i++) {
        amqp_pool_t pool;
        init_amqp_pool(&pool, 4096);
        amqp_basic_properties_t p;
        props_to_amqp(&msgs[i].props, msgs[i].headers, msgs[i].headers_present, &pool, &p);
        amqp_bytes_t body = {msgs[i].body.len, msgs[i].body.data};
        int rc = amqp_basic_publish(st, ch, amqp_cstring_bytes(exchange),
                                    amqp_cstring_bytes(routing_key), 0, 0, &p, body);
        empty_amqp_pool(&pool);
        if (rc != AMQP_STATUS_OK)
            fail_msg("publish failed: %s", amqp_error_string2(rc));
    }
    while (acked < n) {
        amqp_frame_t f;
        struct timeval tv = {30, 0};
        int rc = amqp_simple_wait_frame_noblock(st, &f, &tv);
        if (rc != AMQP_STATUS_OK)
            fail_msg("waiting for confirms: %s", amqp_error_string2(rc));
        if (f.frame_type != AMQP_FRAME_METHOD)
            continue;
        if (f.payload.method.id == AMQP_BASIC_ACK_METHOD) {
            const amqp_basic_ack_t *a = f.payload.method.decoded;
            acked = a->multiple ? a->delivery_tag : acked + 1;
        } else if (f.payload.method.id == AMQP_BASIC_NACK_METHOD) {
            fail_msg("the broker refused a test message");
        }
    }
    conn_channel_close(c, ch);
}

uint32_t bt_depth(struct conn *c, const char *queue)
{
    uint32_t n = 0;
    struct error err;
    enum conn_err kind;
    if (conn_queue_inspect(c, 1, queue, &n, NULL, &kind, &err) != ST_OK)
        fail_msg("%s", err.msg);
    return n;
}

uint32_t bt_depth_settled(struct conn *c, const char *queue, uint32_t want)
{
    uint32_t n = 0;
    for (int i = 0; i < 100; i++) {
        if ((n = bt_depth(c, queue)) == want)
            return n;
        usleep(100000);
    }
    return n;
}

struct msglist bt_read_all(struct conn *c, const char *queue, size_t expect)
{
    amqp_connection_state_t st = conn_state(c);
    const amqp_channel_t ch = 4;
    struct error err;
    enum conn_err kind;
    if (conn_channel_open(c, ch, &kind, &err) != ST_OK)
        fail_msg("%s", err.msg);
    amqp_basic_qos(st, ch, 0, expect <= 65535 ? (uint16_t)expect : 0, 0);
    amqp_get_rpc_reply(st);
    amqp_basic_consume(st, ch, amqp_cstring_bytes(queue), amqp_empty_bytes, 0, 0, 0,
                       amqp_empty_table);
    if (conn_check_reply(c, ch, amqp_get_rpc_reply(st), "consume", &kind, &err) != ST_OK)
        fail_msg("%s", err.msg);
    struct msglist l = {xcalloc(expect ? expect : 1, sizeof(struct message)), 0};
    while (l.n < expect) {
        amqp_envelope_t e;
        amqp_maybe_release_buffers(st);
        struct timeval tv = {10, 0};
        amqp_rpc_reply_t r = amqp_consume_message(st, &e, &tv, 0);
        if (r.reply_type != AMQP_RESPONSE_NORMAL)
            fail_msg("reading %s: got %zu of %zu", queue, l.n, expect);
        peek_message_from_envelope(&e, queue, 0, &l.m[l.n++]);
        amqp_destroy_envelope(&e);
    }
    conn_channel_close(c, ch);
    /* A quorum queue takes a moment to put returned messages back: do not let the next read
     * race it. */
    bt_depth_settled(c, queue, (uint32_t)expect);
    return l;
}

static void add_every_kind(struct htable *h, unsigned i)
{
    htable_add(h, "i8", hval_int(HV_I8, -(int64_t)(i % 100)));
    htable_add(h, "u8", hval_uint(HV_U8, i % 256));
    htable_add(h, "i16", hval_int(HV_I16, -(int64_t)i));
    htable_add(h, "u16", hval_uint(HV_U16, i));
    htable_add(h, "i32", hval_int(HV_I32, (int64_t)i * 1000));
    htable_add(h, "u32", hval_uint(HV_U32, (uint64_t)i * 7));
    htable_add(h, "i64", hval_int(HV_I64, (int64_t)i * 1000000007LL));
    htable_add(h, "f32", hval_f32((float)i / 3.0f));
    htable_add(h, "f64", hval_f64((double)i / 7.0));
    htable_add(h, "dec", hval_decimal(2, i));
    htable_add(h, "ts", hval_uint(HV_TIMESTAMP, 1767323045 + i));
    htable_add(h, "bool", hval_bool(i & 1));
    htable_add(h, "void", hval_void());
    htable_add(h, "bytes", hval_bytes("\x00\xff\x10", 3));
    struct hval arr = hval_array();
    harray_add(&arr.v.arr, hval_cstring("a"));
    harray_add(&arr.v.arr, hval_int(HV_I32, (int64_t)i));
    htable_add(h, "arr", arr);
    struct hval tab = hval_table();
    htable_add(tab.v.tab, "nested", hval_cstring("yes"));
    htable_add(h, "tab", tab);
}

struct msglist bt_mixed_messages(size_t n, unsigned seed)
{
    struct msglist l = {xcalloc(n ? n : 1, sizeof(struct message)), n};
    for (size_t i = 0; i < n; i++) {
        struct message *m = &l.m[i];
        message_init(m);
        unsigned k = (unsigned)i + seed;
        char id[64];
        snprintf(id, sizeof id, "m-%u-%06zu", seed, i);
        props_set_string(&m->props, PROP_message_id, id, strlen(id));
        m->props.present |= 1u << PROP_delivery_mode;
        m->props.delivery_mode = 2;
        m->headers_present = true;
        switch (k % 4) {
        case 0: { /* AceMQ */
            htable_add(m->headers, "x-acemq-id", hval_cstring(id));
            htable_add(m->headers, "x-acemq-type", hval_cstring("order.placed"));
            htable_add(m->headers, "x-acemq-version", hval_int(HV_I32, 1));
            htable_add(m->headers, "x-acemq-attempt", hval_int(HV_I32, (int64_t)(k % 5) + 1));
            htable_add(m->headers, "x-acemq-first-seen", hval_int(HV_I64, 1767323045678LL + k));
            htable_add(m->headers, "x-acemq-error",
                       hval_cstring("exhausted 5 attempts: TimeoutException: slow"));
            props_set_string(&m->props, PROP_content_type, "application/json", 16);
            char body[64];
            snprintf(body, sizeof body, "{\"orderId\":\"A-%zu\"}", i);
            m->body = bytes_from_cstr(body);
            break;
        }
        case 1: { /* BabelQueue */
            props_set_string(&m->props, PROP_app_id, "babelqueue", 10);
            props_set_string(&m->props, PROP_content_type, "application/json", 16);
            htable_add(m->headers, "x-attempts", hval_int(HV_I64, 3));
            char body[512];
            snprintf(body, sizeof body,
                     "{\"job\":\"urn:babel:orders:created\",\"trace_id\":\"t-%zu\",\"data\":"
                     "{\"n\":%zu},\"meta\":{\"id\":\"%s\",\"queue\":\"orders\",\"lang\":\"go\","
                     "\"schema_version\":1,\"created_at\":1767323045678},\"attempts\":3}",
                     i, i, id);
            m->body = bytes_from_cstr(body);
            break;
        }
        case 2: /* every header kind, binary body */
            add_every_kind(m->headers, k);
            props_set_string(&m->props, PROP_content_type, "application/octet-stream", 24);
            m->body = bytes_dup("\xde\xad\xbe\xef\x00\x01\x02", 7);
            break;
        default: /* plain, text, many properties */
            props_set_string(&m->props, PROP_type, "audit.write", 11);
            props_set_string(&m->props, PROP_correlation_id, "batch-1", 7);
            props_set_string(&m->props, PROP_app_id, "auth-service", 12);
            props_set_string(&m->props, PROP_reply_to, "replies", 7);
            m->props.present |= 1u << PROP_priority | 1u << PROP_timestamp;
            m->props.priority = (uint8_t)(k % 10);
            m->props.timestamp = 1767323045u + k;
            m->body = bytes_from_cstr("user 17 logged in \xe2\x80\xae with bidi");
            break;
        }
    }
    return l;
}

static int entry_cmp(const void *pa, const void *pb)
{
    const struct hentry *a = pa, *b = pb;
    size_t n = a->key.len < b->key.len ? a->key.len : b->key.len;
    int c = n ? memcmp(a->key.data, b->key.data, n) : 0;
    return c ? c : (a->key.len > b->key.len) - (a->key.len < b->key.len);
}

/* quorum: a quorum queue re-encodes the headers sorted by name when it adds x-delivery-count
 * on a return, so the order of the headers is compared only for the other queue types. */
static bool headers_equal_ignoring(const struct htable *a, const struct htable *b,
                                   const char *ignore)
{
    struct htable *x = htable_copy(a), *y = htable_copy(b);
    if (ignore) {
        htable_remove(x, ignore);
        htable_remove(y, ignore);
        if (x->n > 1)
            qsort(x->e, x->n, sizeof *x->e, entry_cmp);
        if (y->n > 1)
            qsort(y->e, y->n, sizeof *y->e, entry_cmp);
    }
    bool eq = htable_equal(x, y);
    htable_free(x);
    htable_free(y);
    return eq;
}

bool bt_same_message(const struct message *a, const struct message *b, bool ignore_dc)
{
    if (a->props.present != b->props.present || !bytes_eq(&a->body, &b->body))
        return false;
    for (unsigned f = 0; f < PROP_delivery_mode; f++) {
        const struct bytes *x = props_string(&a->props, (enum prop_flag)f);
        const struct bytes *y = props_string(&b->props, (enum prop_flag)f);
        if ((x == NULL) != (y == NULL) || (x && !bytes_eq(x, y)))
            return false;
    }
    if (a->props.delivery_mode != b->props.delivery_mode ||
        a->props.priority != b->props.priority || a->props.timestamp != b->props.timestamp)
        return false;
    return headers_equal_ignoring(a->headers, b->headers, ignore_dc ? "x-delivery-count" : NULL);
}
