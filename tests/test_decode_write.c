/*
 * decode_write: decoded_write_json gives the bytes of jansson's dump of decoded_to_json — for
 * every record of every .jsonl in fixtures/ and fuzz/corpus/ (lines that are not snapshot
 * records are skipped), random one-byte changes of each, hand-made hostile records (strings
 * that are not UTF-8, NULs, controls, x-death of every shape, bodies of every kind, JSON
 * bodies with reals), and the records of tests/screen/gensnap ($DLQX_GENSNAP), each at several
 * instants (age_s, a real, changes with them). Where it declines it must have written
 * nothing; and on the common records it must not decline (a writer that always declined
 * would pass the comparison).
 */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decode.h"
#include "snapshot.h"
#include "util.h"

static const size_t FLAGS = JSON_COMPACT | JSON_REAL_PRECISION(15);
static const int64_t NOWS[] = {1767323000000LL, 0, 4102444800000LL, 1767323000123LL};

static long compared, written;

static int dump_cb(const char *buffer, size_t size, void *data)
{
    sb_add(data, buffer, size);
    return 0;
}

/* One message at each instant: direct == tree, or declined with nothing written. */
static void check_message(const struct message *m, const char *what)
{
    for (size_t t = 0; t < sizeof NOWS / sizeof *NOWS; t++) {
        struct decoded d;
        decode_message(m, NOWS[t], &d);
        json_t *j = decoded_to_json(&d, NOWS[t]);
        struct strbuf want, got;
        sb_init(&want);
        sb_init(&got);
        sb_adds(&got, "prefix");
        json_dump_callback(j, dump_cb, &want, FLAGS);
        bool ok = decoded_write_json(&d, NOWS[t], FLAGS, &got);
        if (ok) {
            written++;
            if (got.len - 6 != want.len || memcmp(got.buf + 6, want.buf, want.len) != 0)
                fail_msg("%s: direct and tree differ\n tree:   %s\n direct: %s", what, want.buf,
                         got.buf + 6);
        } else if (got.len != 6 || strcmp(got.buf, "prefix") != 0) {
            fail_msg("%s: declined after writing", what);
        }
        /* JSON_ENSURE_ASCII is jansson's: it declines, writing nothing. */
        got.len = 6;
        if (decoded_write_json(&d, NOWS[t], FLAGS | JSON_ENSURE_ASCII, &got) || got.len != 6)
            fail_msg("%s: wrote a record with JSON_ENSURE_ASCII", what);
        compared++;
        sb_free(&want);
        sb_free(&got);
        json_decref(j);
        decoded_free(&d);
    }
}

static bool check_line(const char *line, size_t len, const char *what)
{
    struct message m;
    struct error err;
    error_clear(&err);
    if (snapshot_parse_line(line, len, &m, &err) != ST_OK)
        return false;
    check_message(&m, what);
    message_free(&m);
    return true;
}

/* One-byte changes of a line, spread over it (a fixed stride): those that still read are compared
 * too. */
static void check_mutants(const char *line, size_t len, int count)
{
    static const char subst[] = {'"',    '\\',   '0',    '9', '-', '.', 'e', ' ', '\x01', '\x7f',
                                 '\x80', '\xc3', '\xff', 'a', '{', '}', '[', ']', 'n',    ','};
    char *buf = xmalloc(len + 1);
    static size_t step;
    for (int i = 0; i < count && len; i++) {
        memcpy(buf, line, len);
        step += 7919;
        buf[step % len] = subst[(step / 13) % sizeof subst];
        check_line(buf, len, "a mutant");
    }
    free(buf);
}

static long lines_read;

static void check_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        size_t len = (size_t)n;
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            len--;
        if (check_line(line, len, path)) {
            lines_read++;
            check_mutants(line, len, 25);
        }
    }
    free(line);
    fclose(f);
}

static void walk(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0)
            continue;
        size_t n = strlen(e->d_name);
        if (S_ISDIR(st.st_mode))
            walk(path);
        else if (n > 6 && strcmp(e->d_name + n - 6, ".jsonl") == 0)
            check_file(path);
    }
    closedir(d);
}

static void test_fixtures_and_corpus(void **state)
{
    (void)state;
    walk(FIXTURES_DIR);
    walk(FIXTURES_DIR "/../fuzz/corpus");
    print_message("%ld records of fixtures/ and fuzz/corpus/, %ld compared, %ld written\n",
                  lines_read, compared, written);
    assert_true(lines_read > 100);
    assert_true(written * 10 > compared * 9); /* the direct path is the common one */
}

static const char *const hostile[] = {
    "{}",
    "{\"queue\":{\"base64\":\"/w==\"},\"exchange\":{\"base64\":\"gA==\"},"
    "\"routing_key\":\"a\\u0000b\",\"body_base64\":\"/wAB\"}",
    "{\"properties\":{\"content_type\":{\"base64\":\"/w==\"},\"message_id\":\"\\u0001\\\"\\\\\","
    "\"timestamp\":\"18446744073709551615\",\"correlation_id\":\"\xe2\x80\xae\"}}",
    "{\"properties\":{\"content_type\":\"application/json\"},\"body\":\"{\\\"a\\\":1.5,"
    "\\\"b\\\":[1e300,-0.0,0.1],\\\"c\\\":\\\"\\\\u0000\\\",\\\"a\\\":2}\"}",
    "{\"properties\":{\"content_type\":\"application/json\"},\"body\":\"{\\\"a\\\":\"}",
    "{\"properties\":{\"content_type\":\"application/json\"},\"body\":\" { \\\"k\\\" : [ 1 ,"
    " -2, 0, -0, true , false,null, 123456789012345678, -123456789012345678, {} , [ ] ],"
    " \\\"s\\\\n\\\\\\\"\\\\\\\\\\\\t\\\\b\\\\f\\\\r\\\":\\\"\xc3\xa9\\u007f\\\",\\\"n\\\":{"
    "\\\"a\\\":"
    "{\\\"b\\\":[[[]]]}}}\\n\"}",
    "{\"properties\":{\"content_type\":\"application/json\"},\"body\":\"[1234567890123456789,"
    "\\\"\\\\/\\\\u0041\\\"]\"}",
    "{\"properties\":{\"content_type\":\"application/json\"},\"body\":\"\\\"top\\\"\"}",
    "{\"properties\":{\"content_type\":\"application/json\"},\"body\":\"{\\\"u\\\":"
    "\\\"a\\\\/b\\\"}\"}",
    "{\"properties\":{\"content_type\":\"application/json\"},\"body\":\"3.25\"}",
    "{\"properties\":{\"content_type\":{\"base64\":\"dGV4dC9wbGFpbjsgY2hhcnNldD3/"
    "\"}},\"body\":\"x\"}",
    "{\"headers\":{\"x-death\":[{\"queue\":\"q\",\"reason\":\"rejected\",\"exchange\":\"\","
    "\"count\":2,\"time\":{\"type\":\"timestamp\",\"value\":1767323000},"
    "\"routing-keys\":[\"a\",{\"type\":\"bytes\",\"base64\":\"/w==\"}],"
    "\"original-expiration\":\"100\"},{\"queue\":{\"type\":\"bytes\",\"base64\":\"/w==\"},"
    "\"reason\":\"expired\",\"count\":-1},{\"reason\":\"rejected\"},7,null],"
    "\"x-first-death-queue\":\"q\",\"x-first-death-reason\":\"rejected\","
    "\"x-last-death-exchange\":{\"type\":\"bytes\",\"base64\":\"/w==\"},"
    "\"x-delivery-count\":{\"type\":\"uint64\",\"value\":\"18446744073709551615\"}}}",
    "{\"headers\":{\"x-death\":{\"queue\":\"q\"},\"x-death-2\":1.5,\"f\":{\"type\":\"float\","
    "\"value\":0.1},\"d\":{\"type\":\"decimal\",\"value\":{\"scale\":2,\"value\":5}},"
    "\"\xc3\xa9\":{\"type\":\"table\",\"value\":[{\"key\":\"k\",\"value\":1},"
    "{\"key\":\"k\",\"value\":2}]}}}",
    "{\"headers\":{\"x-acemq-id\":\"\",\"x-acemq-type\":\"\\u0000\",\"x-acemq-attempt\":"
    "{\"type\":\"uint64\",\"value\":\"18446744073709551615\"},\"x-acemq-first-seen-ms\":"
    "-9223372036854775808,\"x-acemq-error\":\"\\ud83d\\ude00\\n\\t\",\"x-acemq-version\":\"x\"}}",
    "{\"headers\":{\"x-acemq-replayed-from\":\"q\",\"x-acemq-replayed-at\":\"not a time\","
    "\"x-acemq-replayed-count\":{\"type\":\"int8\",\"value\":-3}}}",
    "{\"headers\":{\"NServiceBus.MessageId\":\"m\",\"NServiceBus.ExceptionInfo.Message\":"
    "{\"type\":\"bytes\",\"base64\":\"/w==\"},\"NServiceBus.TimeOfFailure\":"
    "\"2026-01-01 10:00:00:000000 Z\",\"NServiceBus.FailedQ\":\"q@m\"}}",
    "{\"headers\":{\"MT-Fault-Message\":\"\\u001f\",\"MT-Reason\":\"fault\","
    "\"content_type\":\"application/vnd.masstransit+json\"},\"body\":\"{\\\"message\\\":{}}\"}",
    "{\"headers\":{\"rbs2-msg-id\":\"r\",\"rbs2-error-details\":\"e\\r\\nat x\"}}",
    "{\"headers\":{\"id\":\"c\",\"task\":\"t\",\"lang\":\"py\",\"retries\":1.5}}",
    "{\"headers\":{\"ce-id\":\"1\",\"ce-source\":\"/s\",\"ce-type\":\"t\",\"ce-specversion\":"
    "\"1.0\",\"ce-time\":\"2026-13-45T99:99:99Z\"}}",
    "{\"headers\":{\"x-exception-message\":\"m\",\"x-exception-stacktrace\":\"s\","
    "\"x-original-queue\":\"\\u007f\"}}",
    "{\"properties\":{\"type\":\"\xc3\xa9\"},\"headers\":{\"X-Wolverine-Id\":\"w\"}}",
    "{\"body_base64\":\"T2JqAQ==\",\"properties\":{\"content_type\":\"avro/binary\"}}",
    "{\"body_base64\":\"AAAAAAU=\",\"properties\":{\"content_type\":\"application/*+avro\"}}",
    "{\"body\":\"\\u001b[31mred\\u001b[0m \xe2\x80\xae\"}",
};

static void test_hostile(void **state)
{
    (void)state;
    long before = compared, w0 = written;
    for (size_t i = 0; i < sizeof hostile / sizeof *hostile; i++) {
        if (!check_line(hostile[i], strlen(hostile[i]), hostile[i]))
            fail_msg("not a snapshot record: %s", hostile[i]);
        check_mutants(hostile[i], strlen(hostile[i]), 200);
    }
    print_message("hostile: %ld compared, %ld written\n", compared - before, written - w0);
    assert_true(compared > before);
}

/* The generated mix of the benchmarks (tests/screen/gensnap), when DLQX_GENSNAP names it. */
static void test_gensnap(void **state)
{
    (void)state;
    const char *gen = getenv("DLQX_GENSNAP");
    if (!gen) {
        print_message("DLQX_GENSNAP not set: skipped\n");
        return;
    }
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "'%s' 3000", gen);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    long read = 0, before = written;
    while ((n = getline(&line, &cap, p)) > 0) {
        size_t len = (size_t)n;
        while (len && line[len - 1] == '\n')
            len--;
        assert_true(check_line(line, len, "gensnap"));
        if (read++ % 50 == 0)
            check_mutants(line, len, 20);
    }
    free(line);
    assert_int_equal(pclose(p), 0);
    assert_int_equal(read, 3000);
    assert_true(written - before >= 3000 * 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fixtures_and_corpus),
        cmocka_unit_test(test_hostile),
        cmocka_unit_test(test_gensnap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
