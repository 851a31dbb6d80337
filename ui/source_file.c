/*
 * source_file: snapshot files as the explorer's source (source.h) — read a slice of records
 * at a time into the store, the rows joined as they come; the malformed records skipped,
 * counted and the first one named.
 *
 * A regular file is read and decoded by worker threads (loader.h), one per CPU, in batches,
 * while the loop gives the store the batches before them (store_append_prepared) and keeps
 * answering keys; the records stay in the file (store_file_add). Standard input, and
 * anything else, is read on the loop a slice at a time and copied into the store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "job.h"
#include "loader.h"
#include "snapshot.h"
#include "source.h"
#include "ui.h"

struct file_src {
    char **files;
    int n_files;
    int file; /* the one being read: an index into files */
    FILE *in;
    struct snapshot_reader r;
    unsigned in_store;     /* the file's number in the store (store_file_add), 0: copied there */
    struct loader *loader; /* reading f->in on a worker (which owns r and in meanwhile) */
    long bad;
    char first_bad[256];
    double started;
};

void *source_file_new(char *const *files, int n)
{
    struct file_src *f = xcalloc(1, sizeof *f);
    f->files = xcalloc((size_t)n + 1, sizeof *f->files);
    for (int i = 0; i < n; i++)
        f->files[i] = xstrdup(files[i]);
    f->n_files = n;
    return f;
}

static void close_file(struct file_src *f)
{
    loader_stop(f->loader);
    f->loader = NULL;
    if (!f->in)
        return;
    snapshot_reader_close(&f->r);
    if (f->in != stdin)
        fclose(f->in);
    f->in = NULL;
}

/* Reading ended (cancelled: stopped, or an error): what depends on the whole set (the order,
 * the groups, the forest) is made again. */
static void finish(struct app *a, struct file_src *f, bool cancelled)
{
    close_file(f);
    size_t n = store_count(a->store);
    if (cancelled)
        app_source_mark_stopped(a);
    if (f->bad)
        app_message(a, true, "%ld malformed records skipped (first: %s)", f->bad, f->first_bad);
    else if (cancelled)
        app_message(a, true, "reading stopped: %zu messages read", n);
    else
        app_message(a, false, "%zu messages read", n);
    app_rows_complete(a);
}

static bool start(struct app *a, void *state)
{
    struct file_src *f = state;
    close_file(f);
    if (!app_source_fresh_store(a))
        return false;
    f->started = clock_mono_s();
    f->file = -1;
    f->bad = 0;
    f->first_bad[0] = '\0';
    return true;
}

/* A slice of records between clock checks: false when the file ended or failed. */
static bool read_records(struct app *a, struct file_src *f, bool *failed)
{
    struct error err;
    for (int k = 0; k < 256; k++) {
        struct message m;
        enum snapshot_rc rc = snapshot_read(&f->r, &m, &err);
        if (rc == SNAP_EOF || rc == SNAP_IO_ERROR) {
            if (rc == SNAP_IO_ERROR)
                app_message(a, true, "%s", err.msg);
            close_file(f);
            return false;
        }
        if (rc == SNAP_BAD_RECORD) {
            if (!f->bad++)
                snprintf(f->first_bad, sizeof f->first_bad, "%.200s", err.msg);
            message_free(&m);
            continue;
        }
        bool ok = (f->in_store ? store_append_at(a->store, &m, f->in_store, f->r.last_offset,
                                                 f->r.last, f->r.last_len, a->now_ms, &err)
                               : store_append_line(a->store, &m, f->r.last, f->r.last_len,
                                                   a->now_ms, &err)) == ST_OK;
        message_free(&m);
        if (!ok) {
            app_message(a, true, "%s", err.msg);
            *failed = true;
            return false;
        }
    }
    return true;
}

/* The batches the loader has ready, into the store: false when the file ended or failed. */
static bool take_batches(struct app *a, struct file_src *f, double until, bool *failed)
{
    struct loader_batch *b;
    while ((b = loader_take(f->loader, until))) {
        struct error err;
        for (size_t i = 0; i < b->n; i++) {
            const struct loader_item *it = &b->item[i];
            if (store_append_prepared(a->store, &it->p, b->texts.buf, f->in_store, it->offset,
                                      it->len, &err) != ST_OK) {
                app_message(a, true, "%s", err.msg);
                loader_batch_free(b);
                *failed = true;
                return false;
            }
        }
        if (b->bad && !f->bad)
            snprintf(f->first_bad, sizeof f->first_bad, "%s", b->first_bad);
        f->bad += b->bad;
        bool last = b->last;
        if (b->error[0])
            app_message(a, true, "%s", b->error);
        loader_batch_free(b);
        if (last) {
            close_file(f);
            return false;
        }
        if (job_yield(until))
            break;
    }
    return true;
}

static bool step(struct app *a, void *state, double until)
{
    struct file_src *f = state;
    /* A key that is waiting ends the slice: it is answered before more is read. */
    while (!job_yield(until)) {
        if (!f->in) {
            if (++f->file >= f->n_files) {
                finish(a, f, false);
                return false;
            }
            const char *name = f->files[f->file];
            f->in = strcmp(name, "-") == 0 ? stdin : fopen(name, "rb");
            if (!f->in) {
                app_message(a, true, "cannot open %s", name);
                continue;
            }
            snapshot_reader_open(&f->r, f->in, name);
            /* A regular file's records stay where they are (its position is 0: just opened);
             * standard input's are copied, whatever it is. */
            f->in_store = f->in == stdin ? 0 : store_file_add(a->store, fileno(f->in));
            if (f->in_store) {
                long cpus = sysconf(_SC_NPROCESSORS_ONLN);
                f->loader = loader_start(&f->r, a->now_ms, cpus > 1 ? (int)cpus : 1);
            }
        }
        bool failed = false;
        if (f->loader ? !take_batches(a, f, until, &failed) && failed
                      : !read_records(a, f, &failed) && failed) {
            finish(a, f, true);
            return false;
        }
    }
    app_rows_extend(a);
    return true;
}

static bool cancel(struct app *a, void *state)
{
    finish(a, state, true);
    return false;
}

static void status(struct app *a, void *state, struct strbuf *out)
{
    const struct file_src *f = state;
    char n[32], r[32];
    size_t count = store_count(a->store);
    double el = clock_mono_s() - f->started;
    sb_addf(out, "reading%s %s messages (%s/s)  %s stops", a->ascii ? "..." : "\xe2\x80\xa6",
            fmt_thousands(count, n), fmt_thousands(el > 0 ? (uint64_t)((double)count / el) : 0, r),
            app_cancel_key(a));
}

static const char *label(const struct app *a, void *state)
{
    const struct file_src *f = state;
    (void)a;
    return f->n_files == 1 ? f->files[0] : "several snapshot files";
}

static void free_(struct app *a, void *state)
{
    struct file_src *f = state;
    (void)a;
    close_file(f);
    for (int i = 0; i < f->n_files; i++)
        free(f->files[i]);
    free(f->files);
    free(f);
}

const struct source_ops source_file_ops = {
    .name = "files",
    .broker = false,
    .start = start,
    .step = step,
    .cancel = cancel,
    .status = status,
    .label = label,
    .free = free_,
};
