/*
 * The snapshot store: every message comes back exactly, from memory or from the spill file,
 * the index holds the decoded fields, and memory stays bounded by the budget.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snapshot.h"
#include "dialect.h"
#include "store.h"

static void make(struct message *m, size_t i)
{
    message_init(m);
    char id[64], body[1100];
    snprintf(id, sizeof id, "%08zx-0000-4000-8000-%012zx", i, i * 7);
    m->queue = bytes_from_cstr(i % 3 ? "orders.dlq" : "payments.dlq");
    m->routing_key = bytes_from_cstr("orders.dlq");
    m->fetched_at_ms = 1767330000000LL + (int64_t)i;
    m->headers_present = true;
    htable_add(m->headers, "x-acemq-id", hval_cstring(id));
    htable_add(m->headers, "x-acemq-type", hval_cstring(i % 2 ? "order.placed" : "payment.charge"));
    htable_add(m->headers, "x-acemq-attempt", hval_int(HV_I32, (int64_t)(i % 5) + 1));
    htable_add(m->headers, "x-acemq-first-seen", hval_int(HV_I64, 1767323045678LL + (int64_t)i));
    if (i % 4 == 0)
        htable_add(m->headers, "x-acemq-causation", hval_cstring("not-a-uuid-cause"));
    char err[128];
    snprintf(err, sizeof err, "exhausted 5 attempts: TimeoutException: %zu ms", 30000 + i % 17);
    htable_add(m->headers, "x-acemq-error", hval_cstring(err));
    memset(body, 'x', sizeof body);
    int n = snprintf(body, 40, "{\"n\":%zu,\"pad\":\"", i);
    body[n] = 'x';
    memcpy(body + sizeof body - 2, "\"}", 2);
    m->body = bytes_dup(body, i % 11 == 0 ? 7 : sizeof body);
    if (i % 11 == 0)
        memcpy(m->body.data, "\xff\x00\x01\x02\x03\x04\x05", 7); /* binary */
}

static void test_round_trip_and_spill(void **state)
{
    struct store *s = NULL;
    struct error err;
    assert_int_equal(store_new(1u << 20, NULL, &s, &err), ST_OK);
    enum { N = 20000 };
    for (size_t i = 0; i < N; i++) {
        struct message m;
        make(&m, i);
        assert_int_equal(store_append(s, &m, 1767330000000LL, &err), ST_OK);
        message_free(&m);
    }
    assert_int_equal(store_count(s), N);
    /* The budget is 1 MiB of records: the rest went to the file. */
    assert_true(store_spilled(s) > 10u << 20);
    char buf[STORE_TEXT_MAX];
    for (size_t i = 0; i < N; i += 997) {
        struct message want, got;
        make(&want, i);
        assert_int_equal(store_get(s, i, &got, &err), ST_OK);
        assert_true(message_equal(&want, &got));
        const struct store_entry *e = store_entry_at(s, i);
        assert_non_null(e);
        char id[64];
        snprintf(id, sizeof id, "%08zx-0000-4000-8000-%012zx", i, i * 7);
        store_text(s, e->id, buf);
        assert_string_equal(buf, id);
        store_text(s, e->type, buf);
        assert_string_equal(buf, i % 2 ? "order.placed" : "payment.charge");
        store_text(s, e->queue, buf);
        assert_string_equal(buf, i % 3 ? "orders.dlq" : "payments.dlq");
        assert_true(store_text_eq(s, e->id, e->correlation)); /* correlation defaults to id */
        if (i % 4 == 0) {
            store_text(s, e->causation, buf);
            assert_string_equal(buf, "not-a-uuid-cause");
        } else {
            assert_int_equal(e->causation, STORE_NONE);
        }
        assert_int_equal(e->attempt, (int32_t)(i % 5) + 1);
        assert_int_equal(e->first_seen_ms, 1767323045678LL + (int64_t)i);
        assert_true(e->flags & SE_ACCEPTED);
        assert_ptr_equal(dialect_at(e->dialect), &dialect_acemq);
        /* In memory up to the budget (records of about 1.3 KB: some 700 fit), then the file. */
        assert_int_equal(!!(e->flags & SE_IN_FILE), i >= 997);
        message_free(&want);
        message_free(&got);
    }
    /* Interned: the same error text is one string. */
    assert_true(store_entry_at(s, 0)->error == store_entry_at(s, 17)->error);
    assert_false(store_entry_at(s, 0)->error == store_entry_at(s, 1)->error);
    store_free(s);
}

/* Texts stay where they are while the store grows past a chunk of its arena (16 MiB): the
 * forest borrows them. Ids in the UUID form have no bytes to lend (NULL). */
static void test_text_views_stay(void **state)
{
    struct store *s = NULL;
    struct error err;
    assert_int_equal(store_new(1u << 20, NULL, &s, &err), ST_OK);
    enum { N = 400, LEN = 50000 };
    char *cause = malloc(LEN + 1);
    assert_non_null(cause);
    const unsigned char *first = NULL;
    for (size_t i = 0; i < N; i++) {
        struct message m;
        make(&m, i * 4 + 1); /* no causation of its own */
        memset(cause, 'a' + (int)(i % 26), LEN);
        snprintf(cause, 16, "%08zu", i);
        cause[8] = '-';
        cause[LEN] = '\0';
        htable_add(m.headers, "x-acemq-causation", hval_cstring(cause));
        assert_int_equal(store_append(s, &m, 1767330000000LL, &err), ST_OK);
        message_free(&m);
        if (i == 0) {
            size_t len = 0;
            first = store_text_view(s, store_entry_at(s, 0)->causation, &len);
            assert_non_null(first);
            assert_int_equal(len, LEN);
        }
    }
    assert_true(store_memory(s) > (size_t)N * LEN);
    char *buf = malloc(STORE_TEXT_MAX);
    assert_non_null(buf);
    for (size_t i = 0; i < N; i++) {
        const struct store_entry *e = store_entry_at(s, i);
        size_t len = 0, n = store_text(s, e->causation, buf);
        const unsigned char *v = store_text_view(s, e->causation, &len);
        assert_non_null(v);
        assert_int_equal(len, n);
        assert_memory_equal(v, buf, n);
        if (i == 0)
            assert_ptr_equal(v, first);
        assert_null(store_text_view(s, e->id, &len)); /* a UUID's 16 bytes */
    }
    size_t len = 1;
    const unsigned char *none = store_text_view(s, STORE_NONE, &len);
    assert_non_null(none);
    assert_int_equal(len, 0);
    free(buf);
    free(cause);
    store_free(s);
    (void)state;
}

static void test_write_is_the_snapshot(void **state)
{
    struct store *s = NULL;
    struct error err;
    assert_int_equal(store_new(4096, NULL, &s, &err), ST_OK);
    struct strbuf want;
    sb_init(&want);
    for (size_t i = 0; i < 50; i++) {
        struct message m;
        make(&m, i);
        snapshot_format(&m, &want);
        assert_int_equal(store_append(s, &m, 0, &err), ST_OK);
        message_free(&m);
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_int_equal(store_write(s, f, &err), ST_OK);
    fclose(f);
    assert_int_equal(len, want.len);
    assert_memory_equal(text, want.buf, len);
    free(text);
    sb_free(&want);
    store_free(s);
}

static void test_hostile_and_rejected(void **state)
{
    struct store *s = NULL;
    struct error err;
    assert_int_equal(store_new(0, NULL, &s, &err), ST_OK);
    FILE *f = fopen(test_fixture_path("snapshots/hostile.jsonl"), "rb");
    assert_non_null(f);
    struct snapshot_reader r;
    snapshot_reader_open(&r, f, "hostile");
    struct message m;
    size_t n = 0;
    while (snapshot_read(&r, &m, &err) == SNAP_RECORD) {
        assert_int_equal(store_append(s, &m, 0, &err), ST_OK);
        struct message back;
        assert_int_equal(store_get(s, n, &back, &err), ST_OK);
        assert_true(message_equal(&m, &back));
        message_free(&back);
        message_free(&m);
        n++;
    }
    snapshot_reader_close(&r);
    fclose(f);
    assert_int_equal(store_count(s), n);
    const struct store_entry *e = store_entry_at(s, 5);
    assert_non_null(e);
    assert_false(e->flags & SE_ACCEPTED);
    assert_string_equal(store_reject_name(s, e->reject), "malformed_json");
    store_free(s);
}

/* What a program started from here ($EDITOR, through the shell) would hold open: the store's
 * temporary file (every message body) must not be among them. */
static void test_spill_file_not_inherited(void **state)
{
    (void)state;
    struct store *s = NULL;
    struct error err;
    assert_int_equal(store_new(0, NULL, &s, &err), ST_OK);
    /* nor a snapshot file whose records it reads back (store_file_add's own descriptor) */
    char path[] = "/tmp/dlqx-store-records-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(store_file_add(s, fd), 1);
    close(fd);
    FILE *p = popen("ls -l /proc/$$/fd", "r");
    assert_non_null(p);
    char line[512];
    int lines = 0, inherited = 0;
    while (fgets(line, sizeof line, p)) {
        lines++;
        if (strstr(line, "dlqx-store-")) {
            fprintf(stderr, "inherited: %s", line);
            inherited++;
        }
    }
    assert_int_equal(pclose(p), 0);
    assert_true(lines >= 3); /* the listing ran: at least stdin, stdout, stderr */
    assert_int_equal(inherited, 0);
    unlink(path);
    store_free(s);
}

/* A record the store cannot read back is an error that leaves nothing to free (it leaked the
 * message's empty header table: 216 bytes per look in the explorer), and headers nested past
 * what JSON readers read come back exactly (they were written but unreadable). */
static void test_unreadable_record(void **state)
{
    struct store *s = NULL;
    struct error err;
    assert_int_equal(store_new(0, NULL, &s, &err), ST_OK);
    struct message m;
    make(&m, 1);
    const char bad[] = "{\"v\":1,\"queue\":";
    assert_int_equal(store_append_line(s, &m, bad, sizeof bad - 1, 0, &err), ST_OK);
    struct message back;
    memset(&back, 0x5a, sizeof back);
    assert_int_not_equal(store_get(s, 0, &back, &err), ST_OK);
    assert_null(back.headers);
    assert_null(back.body.data);
    assert_int_not_equal(store_get(s, 7, &back, &err), ST_OK);
    assert_null(back.headers);

    struct hval v = hval_int(HV_I8, 1);
    for (int i = 0; i < 2100; i++) {
        struct hval a = hval_array();
        harray_add(&a.v.arr, v);
        v = a;
    }
    htable_add(m.headers, "deep", v);
    assert_int_equal(store_append(s, &m, 0, &err), ST_OK);
    if (store_get(s, 1, &back, &err) != ST_OK)
        fail_msg("a deep record does not come back: %s", err.msg);
    assert_true(message_equal(&m, &back));
    message_free(&back);
    message_free(&m);
    store_free(s);
}

/* Only a canonical lowercase UUID is kept as 16 bytes; anything near one (upper case, a
 * letter past f, a dash moved or added) is kept as its text, and every id comes back as it
 * was given. */
static void test_uuid_ids(void **state)
{
    (void)state;
    static const struct {
        const char *id;
        bool packed;
    } cases[] = {
        {"0123abcd-ef45-4678-9abc-def012345678", true},
        {"0123ABCD-ef45-4678-9abc-def012345678", false},
        {"0123abcd-ef45-4678-9abc-def01234567A", false},
        {"0123abcd-ef45-4678-9abc-def01234567g", false},
        {"g123abcd-ef45-4678-9abc-def012345678", false},
        {"0123abcd-ef45-4678-9abc-def0123456-8", false},
        {"-123abcd-ef45-4678-9abc-def012345678", false},
        {"0123abcd-ef45-4678-9abc-def012345678a", false},
        {"0123abcdef45-4678-9abc-def012345678-", false},
        {"0123abc:-ef45-4678-9abc-def012345678", false},
        {"0123abcd-ef45-4678-9abc-def01234567/", false},
        {"ffffffff-ffff-ffff-ffff-ffffffffffff", true},
        {"00000000-0000-0000-0000-000000000000", true},
    };
    struct store *s = NULL;
    struct error err;
    assert_int_equal(store_new(0, NULL, &s, &err), ST_OK);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct message m;
        message_init(&m);
        m.queue = bytes_from_cstr("q.dlq");
        m.headers_present = true;
        htable_add(m.headers, "x-acemq-id", hval_cstring(cases[i].id));
        assert_int_equal(store_append(s, &m, 1767330000000LL, &err), ST_OK);
        message_free(&m);
        const struct store_entry *e = store_entry_at(s, i);
        char buf[STORE_TEXT_MAX];
        store_text(s, e->id, buf);
        assert_string_equal(buf, cases[i].id);
        size_t len = 0;
        assert_int_equal(store_text_view(s, e->id, &len) == NULL, cases[i].packed);
    }
    store_free(s);
}

/* Records of a regular file stay there: the store keeps where each line is (the reader's
 * last_offset) and reads it back, past a BOM, a CR before a newline, blank lines, a record
 * over the size limit and blocks of the reader; nothing is copied or spilled, and the store
 * writes the file's records out as they were read. */
static void test_records_in_their_file(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    struct strbuf want;
    sb_init(&want);
    fputs("\xEF\xBB\xBF", f);
    enum { N = 600, BIG = 302 };
    for (size_t i = 0; i < N; i++) {
        struct message m;
        make(&m, i);
        if (i == BIG) { /* the reader's block grows to hold it, then shrinks after it */
            bytes_free(&m.body);
            m.body.data = xmalloc(9u << 20);
            m.body.len = 9u << 20;
            memset(m.body.data, 'b', m.body.len);
        }
        struct strbuf line;
        sb_init(&line);
        snapshot_format(&m, &line);
        sb_add(&want, line.buf, line.len);
        if (i == 3) /* CRLF */
            line.buf[line.len - 1] = '\r', sb_addc(&line, '\n');
        if (i == 5)
            fputs("\n  \n", f);
        if (i == 7) { /* over the limit: skipped, and the offsets after it still right */
            for (int k = 0; k < 2500000; k++) /* more than a block of the reader */
                fputs("{\"v\":1}", f);
            fputc('\n', f);
        }
        fwrite(line.buf, 1, line.len, f);
        sb_free(&line);
        message_free(&m);
    }
    rewind(f);
    snapshot_set_max_record(16u << 20);
    struct store *s = NULL;
    struct error err;
    assert_int_equal(store_new(1u << 16, NULL, &s, &err), ST_OK);
    unsigned file = store_file_add(s, fileno(f));
    assert_int_equal(file, 1);
    struct snapshot_reader r;
    snapshot_reader_open(&r, f, "t");
    size_t n = 0, bad = 0;
    enum snapshot_rc rc;
    struct message m;
    while ((rc = snapshot_read(&r, &m, &err)) != SNAP_EOF) {
        if (rc == SNAP_BAD_RECORD) {
            bad++;
            message_free(&m);
            continue;
        }
        assert_int_equal(rc, SNAP_RECORD);
        assert_int_equal(store_append_at(s, &m, file, r.last_offset, r.last, r.last_len, 0, &err),
                         ST_OK);
        message_free(&m);
        n++;
    }
    snapshot_reader_close(&r);
    snapshot_set_max_record(SNAPSHOT_MAX_RECORD_DEFAULT);
    fclose(f); /* the store has its own descriptor */
    assert_int_equal(bad, 1);
    assert_int_equal(n, N);
    assert_int_equal(store_spilled(s), 0);
    for (size_t i = 0; i < N; i += i < BIG && i + 7 > BIG ? 1 : 7) {
        if (i == BIG)
            continue;
        struct message w, got;
        make(&w, i);
        if (store_get(s, i, &got, &err) != ST_OK)
            fail_msg("record %zu: %s", i, err.msg);
        assert_true(message_equal(&w, &got));
        assert_int_equal(store_entry_at(s, i)->file, 1);
        message_free(&w);
        message_free(&got);
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    assert_non_null(out);
    assert_int_equal(store_write(s, out, &err), ST_OK);
    fclose(out);
    assert_int_equal(len, want.len);
    assert_memory_equal(buf, want.buf, len);
    free(buf);
    sb_free(&want);
    int p[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(store_file_add(s, p[0]), 0); /* not a regular file */
    close(p[0]);
    close(p[1]);
    store_free(s);
}

/* A file written again while its records are in the store (a shell's `>` onto the snapshot
 * open in the explorer) is refused, not read as if it were the same: shorter, or grown with its
 * lines moved. A file that only grew (still being written) is read as before. */
static void test_file_written_again(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    struct strbuf all;
    sb_init(&all);
    for (size_t i = 0; i < 20; i++) {
        struct message m;
        make(&m, i);
        snapshot_format(&m, &all);
        message_free(&m);
    }
    fwrite(all.buf, 1, all.len, f);
    fflush(f);
    rewind(f);
    struct store *s = NULL;
    struct error err;
    assert_int_equal(store_new(0, NULL, &s, &err), ST_OK);
    unsigned file = store_file_add(s, fileno(f));
    assert_int_equal(file, 1);
    struct snapshot_reader r;
    snapshot_reader_open(&r, f, "t");
    struct message m, got;
    while (snapshot_read(&r, &m, &err) == SNAP_RECORD) {
        assert_int_equal(store_append_at(s, &m, file, r.last_offset, r.last, r.last_len, 0, &err),
                         ST_OK);
        message_free(&m);
    }
    snapshot_reader_close(&r);
    assert_int_equal(store_count(s), 20);
    int fd = fileno(f);
    /* Grown: read as before. */
    assert_int_equal(pwrite(fd, all.buf, 200, (off_t)all.len), 200);
    assert_int_equal(store_get(s, 3, &got, &err), ST_OK);
    message_free(&got);
    /* Written again, longer, every line one byte later: refused. */
    struct strbuf again;
    sb_init(&again);
    sb_addc(&again, ' ');
    sb_add(&again, all.buf, all.len);
    sb_add(&again, all.buf, 400);
    assert_int_equal(ftruncate(fd, 0), 0);
    assert_int_equal(pwrite(fd, again.buf, again.len, 0), (ssize_t)again.len);
    assert_int_equal(store_get(s, 3, &got, &err), ST_EIO);
    assert_non_null(strstr(err.msg, "written again"));
    /* Shorter: refused. */
    assert_int_equal(ftruncate(fd, (off_t)all.len / 2), 0);
    assert_int_equal(store_get(s, 0, &got, &err), ST_EIO);
    assert_non_null(strstr(err.msg, "written again"));
    sb_free(&again);
    sb_free(&all);
    fclose(f);
    store_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_and_spill),
        cmocka_unit_test(test_text_views_stay),
        cmocka_unit_test(test_write_is_the_snapshot),
        cmocka_unit_test(test_hostile_and_rejected),
        cmocka_unit_test(test_spill_file_not_inherited),
        cmocka_unit_test(test_unreadable_record),
        cmocka_unit_test(test_uuid_ids),
        cmocka_unit_test(test_records_in_their_file),
        cmocka_unit_test(test_file_written_again),
    };
    return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
