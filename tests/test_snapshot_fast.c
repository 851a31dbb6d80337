/*
 * The snapshot reader's fast path held to the jansson reader, and the writer's direct path to
 * jansson's dump of the record: for generated records (every
 * header kind, random bytes) and hand-made hostile lines, with every prefix and many
 * one-byte changes of each, snapshot_parse_line gives the message snapshot_parse_jansson
 * gives (kind-exact, and the same empty-or-absent strings), or the same error; the lines
 * dlqx writes are read by the fast path itself (not handed to jansson); and the block reader
 * gives the same records from a file, a pipe and memory, lines across its blocks included.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "snapshot.h"
#include "snapshot_fast.h"
#include "util.h"

static unsigned long long rng = 88172645463325252ULL;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n ? (unsigned)(rng % n) : 0;
}

/* Where an empty string was set (data, len 0) and where it was left out ({0, NULL}) differ
 * for some readers of a message: the two paths must agree on that too. */
static bool same_presence(const struct bytes *a, const struct bytes *b)
{
    return (a->data == NULL) == (b->data == NULL);
}

static bool identical(const struct message *a, const struct message *b)
{
    if (!message_equal(a, b) || !same_presence(&a->queue, &b->queue) ||
        !same_presence(&a->exchange, &b->exchange) ||
        !same_presence(&a->routing_key, &b->routing_key) || !same_presence(&a->body, &b->body))
        return false;
    for (unsigned f = 0; f < PROP_delivery_mode; f++) {
        const struct bytes *x = props_string(&a->props, (enum prop_flag)f);
        const struct bytes *y = props_string(&b->props, (enum prop_flag)f);
        if ((x == NULL) != (y == NULL) || (x && !same_presence(x, y)))
            return false;
    }
    return true;
}

static long accepted, declined;

/* Under valgrind (scripts/test sets DLQX_TEST_MILLION there) a sample of the same work. */
static bool quick(void)
{
    return getenv("DLQX_TEST_MILLION") != NULL;
}

/* The differential check of one line; returns whether the fast path read it itself. */
static bool check_line(const char *line, size_t len)
{
    struct message fast, slow, both;
    struct error ef, es;
    error_clear(&ef);
    error_clear(&es);
    bool sure = snapshot_fast_parse(line, len, &fast);
    enum status ss = snapshot_parse_jansson(line, len, &slow, &es);
    enum status sb = snapshot_parse_line(line, len, &both, &ef);
    if (sure) {
        accepted++;
        if (ss != ST_OK)
            fail_msg("the fast path read a line jansson refuses (%s): %.*s", es.msg, (int)len,
                     line);
        if (!identical(&fast, &slow))
            fail_msg("the fast path read another message: %.*s", (int)len, line);
    } else {
        declined++;
    }
    if (sb != ss || (ss == ST_OK && !identical(&both, &slow)) ||
        (ss != ST_OK && (ef.code != es.code || strcmp(ef.msg, es.msg) != 0)))
        fail_msg("snapshot_parse_line and jansson differ on: %.*s", (int)len, line);
    if (sure)
        message_free(&fast);
    message_free(&slow);
    message_free(&both);
    return sure;
}

static void check_str(const char *line)
{
    check_line(line, strlen(line));
}

/* Every prefix of the line, and each byte replaced by a few that matter to a JSON reader. */
static void check_mutations(const char *line, size_t len)
{
    static const char subst[] = {'"',    '\\',   '{',    '}',    '[', ']', ',',
                                 ':',    '0',    '-',    'e',    '.', ' ', '\0',
                                 '\x1f', '\x80', '\xc3', '\xed', 'u', 'n', 't'};
    char *buf = xmalloc(len + 1);
    for (size_t cut = 0; cut < len; cut++)
        check_line(line, cut);
    for (size_t i = 0; i < len; i++) {
        memcpy(buf, line, len);
        for (size_t s = 0; s < sizeof subst; s++) {
            if (line[i] == subst[s])
                continue;
            buf[i] = subst[s];
            check_line(buf, len);
        }
        /* deleted, and doubled */
        memcpy(buf, line, i);
        memcpy(buf + i, line + i + 1, len - i - 1);
        check_line(buf, len - 1);
    }
    free(buf);
}

static const char *const hand_made[] = {
    "{}",
    " { } ",
    "{\"v\":1}",
    "{\"v\":null}",
    "{\"v\":0}",
    "{\"v\":2}",
    "{\"v\":1.0}",
    "{\"v\":-1}",
    "{\"queue\":null,\"exchange\":null,\"routing_key\":null,\"redelivered\":null}",
    "{\"queue\":\"\",\"body\":\"\"}",
    "{\"queue\":{\"base64\":\"/w==\"}}",
    "{\"queue\":3}",
    "{\"queue\":\"a\",\"queue\":\"b\"}",
    "{\"queue\":\"a\" , \"exchange\" :\t\"x\"\r\n}",
    "{\"redelivered\":true}",
    "{\"redelivered\":1}",
    "{\"redelivered\":truee}",
    "{\"fetched_at_ms\":-0}",
    "{\"fetched_at_ms\":01}",
    "{\"fetched_at_ms\":1e3}",
    "{\"fetched_at_ms\":999999999999999999}",
    "{\"fetched_at_ms\":-999999999999999999}",
    "{\"fetched_at_ms\":9223372036854775807}",
    "{\"fetched_at_ms\":-9223372036854775808}",
    "{\"fetched_at_ms\":9223372036854775808}",
    "{\"fetched_at_ms\":123456789012345678901234567890}",
    "{\"fetched_at_ms\":-}",
    "{\"stream_offset\":42}",
    "{\"stream_offset\":-1}",
    "{\"stream_offset\":\"18446744073709551615\"}",
    "{\"properties\":null}",
    "{\"properties\":{}}",
    "{\"properties\":{\"content_type\":\"a\",\"content_type\":\"b\"}}",
    "{\"properties\":{\"colour\":null}}",
    "{\"properties\":{\"colour\":\"red\"}}",
    "{\"properties\":{\"message_id\":null,\"priority\":null}}",
    "{\"properties\":{\"delivery_mode\":2,\"priority\":255,\"timestamp\":1767323000}}",
    "{\"properties\":{\"delivery_mode\":256}}",
    "{\"properties\":{\"priority\":-1}}",
    "{\"properties\":{\"timestamp\":\"18446744073709551615\"}}",
    "{\"properties\":{\"timestamp\":-1}}",
    "{\"properties\":{\"user_id\":{\"base64\":\"/w==\"}}}",
    "{\"properties\":{\"app_id\":"
    "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    "aaaaa\"}}",
    "{\"headers\":null}",
    "{\"headers\":{}}",
    "{\"headers\":[1]}",
    "{\"headers\":{\"type\":\"table\",\"value\":{}}}",
    "{\"headers\":{\"type\":\"x\"}}",
    "{\"headers\":{\"a\":1,\"a\":2}}",
    "{\"headers\":{\"a\":{\"b\":1,\"b\":2}}}",
    "{\"headers\":{\"a\":null,\"b\":true,\"c\":false,\"d\":-7,\"e\":\"s\",\"f\":[],\"g\":{},"
    "\"h\":[1,[2,[3]],{\"i\":\"j\"}]}}",
    "{\"headers\":{\"a\":1.5,\"b\":1e300,\"c\":-0.0}}",
    "{\"headers\":{\"a\":{\"type\":\"int8\",\"value\":127},\"b\":{\"value\":-128,\"type\":\"int8\"}"
    ","
    "\"c\":{\"type\":\"int16\",\"value\":-32768},\"d\":{\"type\":\"int32\",\"value\":2147483647},"
    "\"e\":{\"type\":\"int64\",\"value\":-5},\"f\":{\"type\":\"uint8\",\"value\":255},"
    "\"g\":{\"type\":\"uint16\",\"value\":65535},\"h\":{\"type\":\"uint32\",\"value\":4294967295},"
    "\"i\":{\"type\":\"uint64\",\"value\":0},\"j\":{\"type\":\"timestamp\",\"value\":1767323000},"
    "\"k\":{\"type\":\"string\",\"value\":\"s\"},\"l\":{\"type\":\"bytes\",\"value\":\"b\"},"
    "\"m\":{\"type\":\"bool\",\"value\":true}}}",
    "{\"headers\":{\"a\":{\"type\":\"int8\",\"value\":128}}}",
    "{\"headers\":{\"a\":{\"type\":\"int8\",\"value\":-129}}}",
    "{\"headers\":{\"a\":{\"type\":\"uint8\",\"value\":-1}}}",
    "{\"headers\":{\"a\":{\"type\":\"uint32\",\"value\":4294967296}}}",
    "{\"headers\":{\"a\":{\"type\":\"uint64\",\"value\":\"18446744073709551615\"}}}",
    "{\"headers\":{\"a\":{\"type\":\"int32\",\"value\":\"5\"}}}",
    "{\"headers\":{\"a\":{\"type\":\"int32\",\"value\":5,\"extra\":1}}}",
    "{\"headers\":{\"a\":{\"type\":\"int32\"}}}",
    "{\"headers\":{\"a\":{\"type\":\"nope\",\"value\":1}}}",
    "{\"headers\":{\"a\":{\"type\":7,\"value\":1}}}",
    "{\"headers\":{\"a\":{\"type\":null,\"value\":1}}}",
    "{\"headers\":{\"a\":{\"type\":\"void\",\"value\":null}}}",
    "{\"headers\":{\"a\":{\"type\":\"void\"}}}",
    "{\"headers\":{\"a\":{\"type\":\"bool\",\"value\":1}}}",
    "{\"headers\":{\"a\":{\"type\":\"string\",\"base64\":\"/w==\"}}}",
    "{\"headers\":{\"a\":{\"type\":\"double\",\"value\":\"NaN\",\"bits\":\"7ff8000000000001\"}}}",
    "{\"headers\":{\"a\":{\"type\":\"decimal\",\"value\":{\"scale\":2,\"value\":5}}}}",
    "{\"headers\":{\"a\":{\"type\":\"table\",\"value\":[{\"key\":\"k\",\"value\":1},"
    "{\"key\":\"k\",\"value\":2}]}}}",
    "{\"headers\":{\"a\":{\"type\":\"wire\",\"base64\":\"SQAAAAU=\"}}}",
    "{\"headers\":{\"t\":{\"type\":\"string\",\"value\":\"int8\"},\"type\":1}}",
    "{\"headers\":{\"\\u0074ype\":1}}",
    "{\"headers\":{\"k\\u0000ey\":1}}",
    "{\"headers\":{\"\":1}}",
    "{\"headers\":{\"caf\xc3\xa9\":\"\xe2\x82\xac\xf0\x9f\x98\x80\"}}",
    "{\"body\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}",
    "{\"body\":\"\\u0000\\u001f\\u007f\\u0080\\u07ff\\u0800\\uffff\\uFFFE\"}",
    "{\"body\":\"\\ud83d\\ude00 \\uD834\\uDD1E\"}",
    "{\"body\":\"\\ud83d\"}",
    "{\"body\":\"\\ud83dx\"}",
    "{\"body\":\"\\ud83d\\u0041\"}",
    "{\"body\":\"\\ude00\"}",
    "{\"body\":\"\\u12\"}",
    "{\"body\":\"\\u12g4\"}",
    "{\"body\":\"\\x41\"}",
    "{\"body\":\"\\'\"}",
    "{\"body\":\"tab\tin\"}",
    "{\"body\":\"\xc0\x80\"}",
    "{\"body\":\"\xc1\xbf\"}",
    "{\"body\":\"\xe0\x9f\xbf\"}",
    "{\"body\":\"\xed\xa0\x80\"}",
    "{\"body\":\"\xed\x9f\xbf\"}",
    "{\"body\":\"\xf0\x8f\xbf\xbf\"}",
    "{\"body\":\"\xf4\x8f\xbf\xbf\"}",
    "{\"body\":\"\xf4\x90\x80\x80\"}",
    "{\"body\":\"\xf5\x80\x80\x80\"}",
    "{\"body\":\"\x80\"}",
    "{\"body\":\"\xc3\"}",
    "{\"body\":\"\xe2\x82\"}",
    "{\"body\":\"\xff\"}",
    "{\"body\":3}",
    "{\"body\":\"a\",\"body_base64\":\"YQ==\"}",
    "{\"body\":\"a\",\"body_base64\":null}",
    "{\"body\":null,\"body_base64\":\"YQ==\"}",
    "{\"body_base64\":null,\"body\":\"a\"}",
    "{\"body_base64\":\"\"}",
    "{\"body_base64\":\"AAEC/w==\"}",
    "{\"body_base64\":\"***\"}",
    "{\"body_base64\":\"YQ=\"}",
    "{\"body_base64\":\"\\u0059Q==\"}",
    "{\"unknown\":1}",
    "{\"queue\":\"a\"} x",
    "{\"queue\":\"a\"}}",
    "{\"queue\":\"a\",}",
    "{,}",
    "[]",
    "\"s\"",
    "{\"queue\" \"a\"}",
    "{\"queue\":\"a\"",
    "\xef\xbb\xbf{}",
};

static void test_hand_made_lines(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof hand_made / sizeof *hand_made; i++) {
        check_str(hand_made[i]);
        if (!quick() || i % 8 == 0)
            check_mutations(hand_made[i], strlen(hand_made[i]));
    }
    /* A NUL inside the line, and a line of the exact shape with a \u0000 in the body. */
    check_line("{\"body\":\"a\0b\"}", 14);
    check_line("{\"queue\":\"a\"}\0", 14);
    /* The fast path reads these itself (a mutation that makes it decline them fails here). */
    static const char *const fast_ones[] = {
        "{}",
        "{\"queue\":\"a\" , \"exchange\" :\t\"x\"\r\n}",
        "{\"properties\":{\"delivery_mode\":2,\"priority\":255,\"timestamp\":1767323000}}",
        "{\"body\":\"\\ud83d\\ude00 \\uD834\\uDD1E\"}",
        "{\"body\":\"\\u0000\\u001f\\u007f\\u0080\\u07ff\\u0800\\uffff\\uFFFE\"}",
        "{\"body\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}",
        "{\"headers\":{\"caf\xc3\xa9\":\"\xe2\x82\xac\xf0\x9f\x98\x80\"}}",
        "{\"body_base64\":\"AAEC/w==\"}",
        "{\"fetched_at_ms\":-999999999999999999}",
        "{\"stream_offset\":42}",
    };
    for (size_t i = 0; i < sizeof fast_ones / sizeof *fast_ones; i++)
        if (!check_line(fast_ones[i], strlen(fast_ones[i])))
            fail_msg("the fast path declined %s", fast_ones[i]);
    for (size_t i = 0; i < sizeof hand_made / sizeof *hand_made; i++)
        if (strstr(hand_made[i], "\"m\":{\"type\":\"bool\"") &&
            !check_line(hand_made[i], strlen(hand_made[i])))
            fail_msg("the fast path declined the typed values");
    /* A long line: a body of 3 MB, and headers nested past the fast path's depth. */
    size_t big = 3u << 20;
    char *line = xmalloc(big + 64);
    int n = snprintf(line, 64, "{\"queue\":\"q\",\"body\":\"");
    memset(line + n, 'x', big);
    for (size_t i = 0; i < big; i += 4096)
        line[n + i] = i % 8192 ? '\xc3' : 'y', line[n + i + 1] = i % 8192 ? '\xa9' : 'z';
    memcpy(line + n + big, "\"}", 3);
    assert_true(check_line(line, strlen(line)));
    free(line);
    struct strbuf deep;
    sb_init(&deep);
    sb_adds(&deep, "{\"headers\":{\"a\":");
    for (int i = 0; i < SNAPSHOT_FAST_MAX_DEPTH + 5; i++)
        sb_addc(&deep, '[');
    for (int i = 0; i < SNAPSHOT_FAST_MAX_DEPTH + 5; i++)
        sb_addc(&deep, ']');
    sb_adds(&deep, "}}");
    assert_false(check_line(deep.buf, deep.len)); /* declined, and jansson reads it */
    sb_free(&deep);
}

/* ---- generated records ------------------------------------------------------------------ */

static struct bytes rnd_bytes(void)
{
    static const char *const pieces[] = {"a",
                                         "orders.dlq",
                                         "\"",
                                         "\\",
                                         "\n",
                                         "\x01",
                                         "\0",
                                         "\x7f",
                                         "\xc3\xa9",
                                         "\xe2\x80\xae",
                                         "\xf0\x9f\x98\x80",
                                         "\xff",
                                         "\xed\xa0\x80",
                                         "/",
                                         "type",
                                         "{}"};
    static const size_t plen[] = {1, 10, 1, 1, 1, 1, 1, 1, 2, 3, 4, 1, 3, 1, 4, 2};
    struct strbuf sb;
    sb_init(&sb);
    unsigned n = rnd(8);
    for (unsigned i = 0; i < n; i++) {
        unsigned k = rnd(sizeof plen / sizeof *plen);
        if (rnd(4) == 0 && k > 7)
            k = 1;
        sb_add(&sb, pieces[k], plen[k]);
    }
    struct bytes b = bytes_dup(sb.len ? sb.buf : "", sb.len);
    sb_free(&sb);
    return b;
}

static struct hval rnd_value(int depth);

static struct htable *rnd_table(int depth)
{
    struct htable *t = htable_new();
    unsigned n = rnd(5);
    static const char *const keys[] = {"x-death", "count", "type", "value", "a", "a", "k"};
    for (unsigned i = 0; i < n; i++) {
        if (rnd(5) == 0) {
            struct bytes k = rnd_bytes();
            if (k.len > 255)
                k.len = 255;
            htable_addn(t, k.data, k.len, rnd_value(depth + 1));
            bytes_free(&k);
        } else {
            htable_add(t, keys[rnd(7)], rnd_value(depth + 1));
        }
    }
    return t;
}

static struct hval rnd_value(int depth)
{
    unsigned k = rnd(depth > 4 ? 16 : 18);
    struct hval v;
    switch (k) {
    case 0:
        return hval_void();
    case 1:
        return hval_bool(rnd(2));
    case 2:
        return hval_int(HV_I8, (int8_t)rnd(256));
    case 3:
        return hval_uint(HV_U8, rnd(256));
    case 4:
        return hval_int(HV_I16, (int16_t)rnd(65536));
    case 5:
        return hval_uint(HV_U16, rnd(65536));
    case 6:
        return hval_int(HV_I32, (int32_t)(rng >> 3));
    case 7:
        return hval_uint(HV_U32, (uint32_t)(rng >> 5));
    case 8:
        return hval_int(HV_I64, rnd(3) ? (int64_t)rnd(100000) - 50000 : (int64_t)rng);
    case 9:
        return hval_uint(HV_U64, rnd(2) ? rnd(1000) : rng);
    case 10:
        return hval_uint(HV_TIMESTAMP, rnd(2) ? 1767323000u : rng);
    case 11:
        return hval_f32(rnd(2) ? 1.5f : -0.0f);
    case 12:
        return hval_f64(rnd(2) ? 0.1 : 1e300);
    case 13:
        return hval_decimal((uint8_t)rnd(256), (uint32_t)rng);
    case 14:
    case 15: {
        struct bytes b = rnd_bytes();
        v = k == 14 ? hval_string(b.data, b.len) : hval_bytes(b.data, b.len);
        bytes_free(&b);
        return v;
    }
    case 16:
        v = hval_array();
        for (unsigned i = rnd(4); i > 0; i--)
            harray_add(&v.v.arr, rnd_value(depth + 1));
        return v;
    default:
        v = hval_void();
        v.kind = HV_TABLE;
        v.v.tab = rnd_table(depth);
        return v;
    }
}

static void rnd_message(struct message *m)
{
    message_init(m);
    if (rnd(2))
        m->queue = rnd_bytes();
    if (rnd(2))
        m->exchange = rnd_bytes();
    if (rnd(2))
        m->routing_key = rnd_bytes();
    m->redelivered = rnd(2);
    m->fetched_at_ms = rnd(4) ? 1767330000000LL + rnd(1000) : (int64_t)rng;
    if (rnd(3) == 0) {
        m->has_stream_offset = true;
        m->stream_offset = rnd(2) ? rnd(100) : rng;
    }
    for (unsigned f = 0; f < PROP_delivery_mode; f++) {
        if (rnd(3) == 0) {
            struct bytes b = rnd_bytes();
            props_set_string(&m->props, (enum prop_flag)f, b.data, b.len);
            bytes_free(&b);
        }
    }
    if (rnd(2)) {
        m->props.present |= 1u << PROP_delivery_mode;
        m->props.delivery_mode = (uint8_t)rnd(3);
    }
    if (rnd(3) == 0) {
        m->props.present |= 1u << PROP_timestamp;
        m->props.timestamp = rnd(2) ? 1767323000u : rng;
    }
    if (rnd(4)) {
        m->headers_present = true;
        htable_free(m->headers);
        m->headers = rnd_table(0);
    }
    if (rnd(2))
        m->body = rnd_bytes();
}

static int dump_cb(const char *buffer, size_t size, void *data)
{
    sb_add(data, buffer, size);
    return 0;
}

/* The writer's direct path gives the bytes of jansson's dump of snapshot_to_json. */
static void same_as_tree(const struct message *m, const struct strbuf *line)
{
    struct strbuf tree;
    sb_init(&tree);
    json_t *o = snapshot_to_json(m);
    json_dump_callback(o, dump_cb, &tree, JSON_COMPACT | JSON_REAL_PRECISION(17));
    sb_addc(&tree, '\n');
    json_decref(o);
    if (tree.len != line->len || memcmp(tree.buf, line->buf, tree.len) != 0)
        fail_msg("snapshot_format wrote %s, the tree %s", line->buf, tree.buf);
    sb_free(&tree);
}

/* Written records read back identical through the fast path (read -> write -> read), and
 * a line from dlqx's writer whose every value the fast path knows is read by it. */
static void test_generated_records(void **state)
{
    (void)state;
    struct strbuf line, again;
    sb_init(&line);
    sb_init(&again);
    long before = accepted;
    int records = quick() ? 2000 : 20000;
    for (int i = 0; i < records; i++) {
        struct message m;
        rnd_message(&m);
        sb_reset(&line);
        snapshot_format(&m, &line);
        same_as_tree(&m, &line);
        check_line(line.buf, line.len - 1);
        struct message back;
        struct error err;
        error_clear(&err);
        if (snapshot_parse_line(line.buf, line.len - 1, &back, &err) != ST_OK)
            fail_msg("a written record does not read back: %s: %s", err.msg, line.buf);
        assert_true(message_equal(&m, &back));
        sb_reset(&again);
        snapshot_format(&back, &again);
        assert_string_equal(line.buf, again.buf);
        message_free(&back);
        message_free(&m);
        if (i < (quick() ? 2 : 40))
            check_mutations(line.buf, line.len - 1);
    }
    /* Most generated records hold something only jansson reads (a float, a decimal, bytes
     * that are not UTF-8); a good share are still the fast path's. */
    if (accepted - before < records / 10)
        fail_msg("the fast path read only %ld of the generated lines", accepted - before);
    /* The shape of tests/screen/gensnap's records (bench/run-read.sh): all fast. */
    const char *gs =
        "{\"v\":1,\"queue\":\"payments.dlq\",\"exchange\":\"\",\"routing_key\":\"payments.dlq\","
        "\"redelivered\":false,\"fetched_at_ms\":1767330000000,\"properties\":{\"content_type\":"
        "\"application/json\",\"delivery_mode\":2,\"message_id\":\"m-00000001-2\"},\"headers\":"
        "{\"x-acemq-id\":\"m-00000001-2\",\"x-acemq-type\":\"payment.charge\",\"x-acemq-version\":"
        "{\"type\":\"int32\",\"value\":1},\"x-acemq-correlation\":\"c-00000001\","
        "\"x-acemq-causation\":\"m-00000001-1\",\"x-acemq-attempt\":{\"type\":\"int32\","
        "\"value\":3},\"x-acemq-first-seen\":1767243601296,\"x-acemq-error\":\"retrying cannot "
        "help: ArgumentError: unknown carrier \\\"dhl-29634\\\"\"},\"body\":\"{\\\"n\\\":5}\"}";
    assert_true(check_line(gs, strlen(gs)));
    if (!quick())
        check_mutations(gs, strlen(gs));
    sb_free(&line);
    sb_free(&again);
}

/* ---- the block reader ------------------------------------------------------------------ */

static char *make_file_text(size_t *len, int records)
{
    struct strbuf sb;
    sb_init(&sb);
    sb_adds(&sb, "\xef\xbb\xbf");
    for (int i = 0; i < records; i++) {
        size_t pad = (size_t)rnd(3) == 0 ? rnd(70000) : rnd(300);
        sb_addf(&sb, "{\"queue\":\"q%d\",\"body\":\"", i);
        for (size_t k = 0; k < pad; k++)
            sb_addc(&sb, (char)('a' + k % 26));
        sb_adds(&sb, i % 7 == 3 ? "\"}\r\n" : "\"}\n");
        if (i % 11 == 5)
            sb_adds(&sb, "\n  \n{broken\n");
    }
    sb_adds(&sb, "{\"queue\":\"last\"}"); /* no final newline */
    *len = sb.len;
    return sb.buf;
}

/* Every record as the line-by-line reading of the same text gives it. */
static void read_all(FILE *f, const char *text, size_t len)
{
    struct snapshot_reader r;
    snapshot_reader_open(&r, f, "t");
    const char *p = text;
    const char *end = text + len;
    long line = 0, records = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
        line++;
        const char *s = p;
        size_t k = n;
        if (k && s[k - 1] == '\r')
            k--;
        if (line == 1 && k >= 3 && memcmp(s, "\xef\xbb\xbf", 3) == 0)
            s += 3, k -= 3;
        p += n + (nl != NULL);
        size_t b = 0;
        while (b < k && (s[b] == ' ' || s[b] == '\t' || s[b] == '\r'))
            b++;
        if (b == k)
            continue;
        struct message want, got;
        struct error e1, e2;
        error_clear(&e1);
        error_clear(&e2);
        enum status st = snapshot_parse_jansson(s, k, &want, &e1);
        enum snapshot_rc rc = snapshot_read(&r, &got, &e2);
        assert_int_equal(r.line, line);
        if (st == ST_OK) {
            assert_int_equal(rc, SNAP_RECORD);
            assert_true(identical(&want, &got));
            assert_int_equal(r.last_len, k);
            assert_memory_equal(r.last, s, k);
            records++;
        } else {
            assert_int_equal(rc, SNAP_BAD_RECORD);
        }
        message_free(&want);
        message_free(&got);
    }
    struct message m;
    assert_int_equal(snapshot_read(&r, &m, NULL), SNAP_EOF);
    assert_int_equal(snapshot_read(&r, &m, NULL), SNAP_EOF);
    snapshot_reader_close(&r);
    assert_true(records > 100);
}

static void test_block_reader(void **state)
{
    (void)state;
    size_t len;
    char *text = make_file_text(&len, 400);
    assert_true(len > 3 * SNAPSHOT_READ_BLOCK);
    /* memory */
    FILE *f = fmemopen(text, len, "r");
    read_all(f, text, len);
    fclose(f);
    /* a file */
    f = tmpfile();
    assert_int_equal(fwrite(text, 1, len, f), len);
    rewind(f);
    read_all(f, text, len);
    fclose(f);
    /* a pipe, written in uneven pieces by a child */
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        size_t off = 0;
        while (off < len) {
            size_t n = 1 + (size_t)rnd(9000);
            if (n > len - off)
                n = len - off;
            if (write(fds[1], text + off, n) != (ssize_t)n)
                break;
            off += n;
        }
        free(text); /* valgrind checks the child's heap too */
        _exit(off == len ? 0 : 1);
    }
    close(fds[1]);
    f = fdopen(fds[0], "r");
    read_all(f, text, len);
    fclose(f);
    int status = 0;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    free(text);
}

/* Header keys and string values the reader pooled (hval.h) behave as owned ones: changed,
 * removed, copied, moved out and freed in any order (ASan and valgrind check the frees). */
static void test_pooled_headers(void **state)
{
    (void)state;
    static const char line[] =
        "{\"v\":1,\"queue\":\"q\",\"headers\":{\"a\":\"one\",\"b\":\"t\\u00e9\\n\","
        "\"c\":{\"type\":\"bytes\",\"value\":\"x\"},\"d\":[\"e\"],\"f\":3},\"body\":\"\"}";
    struct message m;
    assert_true(snapshot_fast_parse(line, sizeof line - 1, &m));
    const struct hval *b = htable_get(m.headers, "b");
    assert_non_null(b);
    assert_true(b->pooled);
    assert_int_equal(b->v.s.len, 4);
    assert_memory_equal(b->v.s.data, "t\xc3\xa9\n", 5);
    struct htable *copy = htable_copy(m.headers);
    assert_true(htable_equal(copy, m.headers));
    assert_false(copy->e[0].key_pooled || copy->e[0].val.pooled);
    struct hval moved = m.headers->e[1].val; /* moved out: outlives the table */
    m.headers->e[1].val = hval_void();
    htable_set(m.headers, "a", hval_cstring("two"));
    assert_int_equal(htable_remove(m.headers, "f"), 1);
    htable_add(m.headers, "g", hval_cstring("new"));
    message_free(&m);
    assert_memory_equal(moved.v.s.data, "t\xc3\xa9\n", 5);
    hval_free(&moved);
    htable_free(copy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_made_lines),
        cmocka_unit_test(test_generated_records),
        cmocka_unit_test(test_block_reader),
        cmocka_unit_test(test_pooled_headers),
    };
    int rc = cmocka_run_group_tests_name("snapshot_fast", tests, NULL, NULL);
    printf("# fast path: %ld lines read, %ld declined to jansson\n", accepted, declined);
    return rc;
}
