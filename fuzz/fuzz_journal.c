/*
 * fuzz_journal: a journal file (what dlqx wrote before a crash, or what someone edited)
 * through the reader — journal_scan, and journal_collect and journal_pending that `dlqx
 * journal` and a replay's recovery are built on.
 *
 * Input: the file. It is read twice: whole (X), and cut after its last newline (P: what was
 * surely written whole).
 *
 * Checks, beyond the sanitizers:
 *   - a torn record is never accepted as complete: journal_scan of X passes exactly the
 *     records it passes for P (compared as JSON), and says torn_tail exactly when X goes on
 *     past its last newline, with one line more than P then;
 *   - the intents, pending intents and outcomes journal_collect and journal_pending find in X
 *     are those they find in P: a cut-off outcome never settles an intent, a cut-off intent
 *     never becomes one;
 *   - records + malformed lines <= lines.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <jansson.h>

#include "fuzz.h"
#include "journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const uint8_t *data, size_t size)
{
    fuzz_fail_bytes("fuzz_journal", what, data, size);
}

static bool collect_record(void *ctx, json_t *record)
{
    json_array_append(ctx, record);
    return true;
}

struct reading {
    enum status st;
    json_t *records; /* every record journal_scan passed, in order */
    struct journal_scan_report rep;
    json_t *all, *pending, *pending2; /* journal_collect (all, pending only), journal_pending */
};

static void read_journal(const uint8_t *p, size_t n, struct reading *r)
{
    memset(r, 0, sizeof *r);
    r->records = json_array();
    int fd = memfd_create("journal", MFD_CLOEXEC);
    if (fd < 0 || (n && write(fd, p, n) != (ssize_t)n)) {
        perror("fuzz_journal: memfd");
        abort();
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    struct error err;
    r->st = journal_scan(path, collect_record, r->records, &r->rep, &err);
    if (r->st == ST_OK) {
        if (journal_collect(path, NULL, false, NULL, NULL, &r->all, NULL, NULL, &err) != ST_OK ||
            journal_collect(path, NULL, true, NULL, NULL, &r->pending, NULL, NULL, &err) != ST_OK ||
            journal_pending(path, &r->pending2, &err) != ST_OK) {
            fprintf(stderr, "fuzz_journal: a journal that scans does not collect: %s\n", err.msg);
            abort();
        }
    }
    close(fd);
}

static void reading_free(struct reading *r)
{
    json_decref(r->records);
    json_decref(r->all);
    json_decref(r->pending);
    json_decref(r->pending2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t cut = size;
    while (cut && data[cut - 1] != '\n')
        cut--;
    struct reading x, p;
    read_journal(data, size, &x);
    read_journal(data, cut, &p);
    if (x.st != ST_OK || p.st != ST_OK)
        fail("a journal in memory could not be read", data, size);
    if (!json_equal(x.records, p.records))
        fail("the records read differ from those of the file cut after its last newline", data,
             size);
    if (x.rep.records != json_array_size(x.records))
        fail("rep.records is not the number of records passed", data, size);
    if (x.rep.torn_tail != (cut < size) || p.rep.torn_tail)
        fail("torn_tail is not whether the file goes on past its last newline", data, size);
    if (x.rep.lines != p.rep.lines + (cut < size))
        fail("the torn line is not counted as one line more", data, size);
    if (x.rep.records + x.rep.malformed > x.rep.lines)
        fail("more records and malformed lines than lines", data, size);
    if (!json_equal(x.all, p.all) || !json_equal(x.pending, p.pending) ||
        !json_equal(x.pending2, p.pending2))
        fail("a torn last line changed the intents, the pending ones or their outcomes", data,
             size);
    reading_free(&x);
    reading_free(&p);
    return 0;
}
