/*
 * Snapshot file: records read with their defaults, written back losslessly, and malformed
 * lines reported with their line number without stopping the file.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"

static void parse_ok(const char *line, struct message *m)
{
    struct error err;
    error_clear(&err);
    if (snapshot_parse_line(line, strlen(line), m, &err) != ST_OK)
        fail_msg("parse failed: %s", err.msg);
}

static void test_defaults(void **state)
{
    struct message m;
    parse_ok("{}", &m);
    assert_int_equal(m.queue.len, 0);
    assert_false(m.redelivered);
    assert_int_equal(m.fetched_at_ms, 0);
    assert_int_equal(m.props.present, 0);
    assert_false(m.headers_present);
    assert_non_null(m.headers);
    assert_int_equal(m.body.len, 0);
    message_free(&m);
}

static void test_hand_written_record(void **state)
{
    struct message m;
    parse_ok("{\"v\":1,\"queue\":\"orders.dlq\",\"exchange\":\"\",\"routing_key\":\"orders.dlq\","
             "\"redelivered\":true,\"fetched_at_ms\":1767323045678,"
             "\"properties\":{\"content_type\":\"application/json\",\"delivery_mode\":2,"
             "\"priority\":5,\"timestamp\":1767323000,\"message_id\":\"m-1\"},"
             "\"headers\":{\"x-acemq-attempt\":{\"type\":\"int32\",\"value\":3},"
             "\"tenant\":\"acme\"},\"body\":\"{\\\"id\\\":\\\"o-1\\\"}\"}",
             &m);
    assert_true(bytes_eq_cstr(&m.queue, "orders.dlq"));
    assert_true(m.redelivered);
    assert_int_equal(m.fetched_at_ms, 1767323045678LL);
    assert_true(bytes_eq_cstr(props_string(&m.props, PROP_content_type), "application/json"));
    assert_true(bytes_eq_cstr(props_string(&m.props, PROP_message_id), "m-1"));
    assert_null(props_string(&m.props, PROP_type));
    assert_int_equal(m.props.delivery_mode, 2);
    assert_int_equal(m.props.priority, 5);
    assert_int_equal(m.props.timestamp, 1767323000);
    assert_true(m.headers_present);
    assert_int_equal(htable_get(m.headers, "x-acemq-attempt")->kind, HV_I32);
    assert_true(bytes_eq_cstr(&m.body, "{\"id\":\"o-1\"}"));
    message_free(&m);
}

static int dump_cb(const char *buffer, size_t size, void *data)
{
    sb_add(data, buffer, size);
    return 0;
}

/* The fast writer and the JSON tree write the same bytes. */
static void same_as_tree(const struct message *m)
{
    struct strbuf fast, tree;
    sb_init(&fast);
    sb_init(&tree);
    snapshot_format(m, &fast);
    json_t *o = snapshot_to_json(m);
    json_dump_callback(o, dump_cb, &tree, JSON_COMPACT | JSON_REAL_PRECISION(17));
    sb_addc(&tree, '\n');
    json_decref(o);
    assert_string_equal(fast.buf, tree.buf);
    sb_free(&fast);
    sb_free(&tree);
}

static void round_trip(const struct message *m)
{
    same_as_tree(m);
    struct strbuf sb;
    sb_init(&sb);
    snapshot_format(m, &sb);
    assert_true(sb.len > 0 && sb.buf[sb.len - 1] == '\n');
    assert_null(memchr(sb.buf, '\n', sb.len - 1)); /* one line */
    struct message back;
    struct error err;
    error_clear(&err);
    if (snapshot_parse_line(sb.buf, sb.len - 1, &back, &err) != ST_OK)
        fail_msg("re-read failed: %s in %s", err.msg, sb.buf);
    assert_true(message_equal(m, &back));
    /* And writing the re-read record gives the same line. */
    struct strbuf sb2;
    sb_init(&sb2);
    snapshot_format(&back, &sb2);
    assert_string_equal(sb.buf, sb2.buf);
    sb_free(&sb);
    sb_free(&sb2);
    message_free(&back);
}

static void test_lossless_binary_and_hostile(void **state)
{
    struct message m;
    message_init(&m);
    m.queue = bytes_dup("q\xff\x1b[2J", 7); /* not UTF-8, with an escape */
    m.exchange = bytes_from_cstr("ex");
    m.routing_key = bytes_dup("rk\0nul", 6);
    m.redelivered = true;
    m.fetched_at_ms = -5;
    props_set_string(&m.props, PROP_content_type, "application/octet-stream", 24);
    props_set_string(&m.props, PROP_user_id, "", 0); /* present but empty */
    props_set_string(&m.props, PROP_cluster_id, "c\xc3\x28", 3);
    m.props.present |= 1u << PROP_delivery_mode;
    m.props.delivery_mode = 1;
    m.props.present |= 1u << PROP_timestamp;
    m.props.timestamp = 0;
    m.headers_present = true;
    htable_add(m.headers, "x-death", hval_array());
    htable_add(m.headers, "bin", hval_bytes("\x00\x01", 2));
    htable_add(m.headers, "u64", hval_uint(HV_U64, UINT64_MAX));
    m.body = bytes_dup("\xAE\x01\x04key1\x00\xff\xfe", 10);
    m.has_stream_offset = true;
    m.stream_offset = 42;
    round_trip(&m);
    message_free(&m);

    /* Empty headers table present vs absent are different records. */
    message_init(&m);
    m.headers_present = true;
    round_trip(&m);
    message_free(&m);
    message_init(&m);
    m.body = bytes_from_cstr("text with \"quotes\", \\ and \xe2\x80\xae bidi");
    round_trip(&m);
    message_free(&m);
}

static void test_sample_files_round_trip(void **state)
{
    static const char *const samples[] = {"snapshots/incident.jsonl", "snapshots/hostile.jsonl"};
    for (size_t s = 0; s < sizeof samples / sizeof *samples; s++) {
        FILE *f = fopen(test_fixture_path(samples[s]), "rb");
        assert_non_null(f);
        struct snapshot_reader r;
        snapshot_reader_open(&r, f, samples[s]);
        long records = 0;
        for (;;) {
            struct message m;
            struct error err;
            enum snapshot_rc rc = snapshot_read(&r, &m, &err);
            if (rc == SNAP_EOF)
                break;
            if (rc != SNAP_RECORD)
                fail_msg("%s", err.msg);
            round_trip(&m);
            message_free(&m);
            records++;
        }
        assert_true(records >= 10);
        snapshot_reader_close(&r);
        fclose(f);
    }
}

static void expect_error(const char *line, const char *needle)
{
    struct message m;
    struct error err;
    error_clear(&err);
    assert_int_not_equal(snapshot_parse_line(line, strlen(line), &m, &err), ST_OK);
    if (!strstr(err.msg, needle))
        fail_msg("error \"%s\" does not mention \"%s\"", err.msg, needle);
    message_free(&m);
}

static void test_errors(void **state)
{
    expect_error("not json", "not JSON");
    expect_error("[1,2]", "a record is a JSON object");
    expect_error("{\"v\":2}", "newer than this dlqx reads");
    expect_error("{\"v\":\"1\"}", "positive integer");
    expect_error("{\"queu\":\"x\"}", "unknown key \"queu\"");
    expect_error("{\"redelivered\":1}", "true or false");
    expect_error("{\"properties\":{\"delivery_mode\":300}}", "more than 255");
    expect_error("{\"properties\":{\"colour\":\"red\"}}", "unknown property");
    expect_error("{\"properties\":{\"timestamp\":-1}}", "non-negative");
    expect_error("{\"body\":\"a\",\"body_base64\":\"YQ==\"}", "not both");
    expect_error("{\"body_base64\":\"***\"}", "not valid base64");
    expect_error("{\"body\":3}", "must be a string");
    expect_error("{\"headers\":[1]}", "expected an object");
    expect_error("{\"headers\":{\"a\":{\"type\":\"int8\",\"value\":999}}}",
                 "headers.a: 999 is out of range for int8");
    expect_error("{\"queue\":\"a\",\"queue\":\"b\"}", "duplicate");
}

static void test_reader_skips_bad_lines(void **state)
{
    const char text[] = "{\"queue\":\"a\"}\n"
                        "\n"
                        "{broken\n"
                        "{\"queue\":\"b\"}\r\n"
                        "{\"v\":9}\n"
                        "{\"queue\":\"c\"}"; /* no final newline */
    FILE *f = fmemopen((void *)(uintptr_t)text, sizeof text - 1, "r");
    struct snapshot_reader r;
    snapshot_reader_open(&r, f, "mem.jsonl");
    const char *want_queue[] = {"a", NULL, "b", NULL, "c"};
    const long want_line[] = {1, 3, 4, 5, 6};
    for (int i = 0; i < 5; i++) {
        struct message m;
        struct error err;
        error_clear(&err);
        enum snapshot_rc rc = snapshot_read(&r, &m, &err);
        assert_int_equal(r.line, want_line[i]);
        if (want_queue[i]) {
            assert_int_equal(rc, SNAP_RECORD);
            assert_true(bytes_eq_cstr(&m.queue, want_queue[i]));
        } else {
            assert_int_equal(rc, SNAP_BAD_RECORD);
            char prefix[32];
            snprintf(prefix, sizeof prefix, "mem.jsonl:%ld:", want_line[i]);
            assert_true(strncmp(err.msg, prefix, strlen(prefix)) == 0);
        }
        message_free(&m);
    }
    struct message m;
    assert_int_equal(snapshot_read(&r, &m, NULL), SNAP_EOF);
    snapshot_reader_close(&r);
    fclose(f);
}

/* The record size limit: a line longer than the limit is named with its size and skipped
 * (not read into memory), the lines after it are read, and a line of exactly the limit is a
 * record. */
static void test_reader_record_limit(void **state)
{
    const char text[] = "{\"queue\":\"a\"}\n"
                        "{\"queue\":\"abcd\"}\r\n" /* 16 bytes, then \r: 17 */
                        "{\"queue\":\"abc\"}\n"    /* 15 */
                        "{\"queue\":\"abcd\"}\n"   /* 16: exactly the limit */
                        "{\"queue\":\"abcdefgh\"}\n"
                        "{\"queue\":\"b\"}\n"
                        "{\"queue\":\"abcdefghijk\"}"; /* no final newline */
    FILE *f = fmemopen((void *)(uintptr_t)text, sizeof text - 1, "r");
    struct snapshot_reader r;
    snapshot_reader_open(&r, f, "mem.jsonl");
    assert_int_equal(r.max_record, SNAPSHOT_MAX_RECORD_DEFAULT);
    r.max_record = 16;
    const char *want_queue[] = {"a", NULL, "abc", "abcd", NULL, "b", NULL};
    const char *want_err[] = {NULL,
                              "mem.jsonl:2: a record of 17 bytes is over the record size "
                              "limit (16 bytes;",
                              NULL,
                              NULL,
                              "mem.jsonl:5: a record of 20 bytes",
                              NULL,
                              "mem.jsonl:7: a record of 23 bytes"};
    for (int i = 0; i < 7; i++) {
        struct message m;
        struct error err;
        error_clear(&err);
        enum snapshot_rc rc = snapshot_read(&r, &m, &err);
        assert_int_equal(r.line, i + 1);
        if (want_queue[i]) {
            assert_int_equal(rc, SNAP_RECORD);
            assert_true(bytes_eq_cstr(&m.queue, want_queue[i]));
        } else {
            assert_int_equal(rc, SNAP_BAD_RECORD);
            assert_int_equal(err.code, ST_ERANGE);
            if (strncmp(err.msg, want_err[i], strlen(want_err[i])) != 0)
                fail_msg("got \"%s\", want \"%s…\"", err.msg, want_err[i]);
        }
        message_free(&m);
    }
    struct message m;
    assert_int_equal(snapshot_read(&r, &m, NULL), SNAP_EOF);
    snapshot_reader_close(&r);
    fclose(f);

    size_t n = 0;
    assert_true(snapshot_parse_size("64M", &n));
    assert_int_equal(n, (size_t)64 << 20);
    assert_true(snapshot_parse_size("1g", &n));
    assert_int_equal(n, (size_t)1 << 30);
    assert_true(snapshot_parse_size("100", &n));
    assert_int_equal(n, 100);
    assert_true(snapshot_parse_size("3K", &n));
    assert_int_equal(n, 3072);
    static const char *const bad[] = {
        "", "0", "-1", "12Q", "1MB", " 1", "4G", "99999999999999999999", "K"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (snapshot_parse_size(bad[i], &n))
            fail_msg("\"%s\" was taken as a size", bad[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_hand_written_record),
        cmocka_unit_test(test_lossless_binary_and_hostile),
        cmocka_unit_test(test_sample_files_round_trip),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_reader_skips_bad_lines),
        cmocka_unit_test(test_reader_record_limit),
    };
    return cmocka_run_group_tests_name("snapshot", tests, NULL, NULL);
}
