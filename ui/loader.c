/*
 * loader: snapshot lines decoded by worker threads, the batches handed on in order (loader.h).
 */
#include "loader.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util.h"

#define MAX_WORKERS 4
#define BATCHES_AHEAD 8 /* the workers wait when this many are made and not taken */

struct loader {
    pthread_t thread[MAX_WORKERS];
    int workers;
    pthread_mutex_t mu;
    pthread_cond_t ready, room;
    /* under mu: */
    struct loader_batch *done; /* made, not taken: in seq order */
    int queued;
    uint64_t next_seq;  /* the next batch a worker reads */
    uint64_t next_take; /* the next the loop takes */
    bool ended;         /* the reader reached the end (or failed) */
    bool stop;
    pthread_mutex_t read_mu; /* the reader: one worker at a time */
    struct snapshot_reader *r;
    int64_t now_ms;
};

void loader_batch_free(struct loader_batch *b)
{
    if (!b)
        return;
    sb_free(&b->texts);
    sb_free(&b->raw);
    free(b);
}

/* The next lines into b (under read_mu); false when the reader had ended already. */
static bool read_batch(struct loader *l, struct loader_batch *b, long *lineno)
{
    pthread_mutex_lock(&l->read_mu);
    pthread_mutex_lock(&l->mu);
    bool ended = l->ended || l->stop;
    b->seq = l->next_seq++;
    pthread_mutex_unlock(&l->mu);
    if (ended) {
        pthread_mutex_unlock(&l->read_mu);
        return false;
    }
    while (b->n < LOADER_BATCH) {
        const char *line = NULL;
        size_t len = 0;
        struct error err;
        enum snapshot_rc rc = snapshot_read_line(l->r, &line, &len, &err);
        if (rc == SNAP_EOF || rc == SNAP_IO_ERROR) {
            if (rc == SNAP_IO_ERROR)
                snprintf(b->error, sizeof b->error, "%.250s", err.msg);
            b->last = true;
            break;
        }
        if (rc == SNAP_BAD_RECORD) {
            if (!b->bad++)
                snprintf(b->first_bad, sizeof b->first_bad, "%.200s", err.msg);
            continue;
        }
        struct loader_item *it = &b->item[b->n];
        lineno[b->n] = l->r->line;
        it->offset = l->r->last_offset;
        it->len = len >= UINT32_MAX ? UINT32_MAX : (uint32_t)len;
        /* where its text starts, until it is parsed */
        it->p.off[0] = (uint32_t)b->raw.len;
        sb_add(&b->raw, line, len);
        sb_addc(&b->raw, '\0');
        b->n++;
    }
    if (b->last) {
        pthread_mutex_lock(&l->mu);
        l->ended = true;
        pthread_mutex_unlock(&l->mu);
    }
    pthread_mutex_unlock(&l->read_mu);
    return true;
}

/* Parses and decodes b's lines; a malformed one is dropped from it, counted. */
static void decode_batch(struct loader *l, struct loader_batch *b, const long *lineno)
{
    size_t w = 0;
    for (size_t i = 0; i < b->n; i++) {
        struct loader_item it = b->item[i];
        const char *line = b->raw.buf + it.p.off[0];
        struct message m;
        struct error e;
        error_clear(&e);
        if (snapshot_parse_line(line, it.len, &m, &e) != ST_OK) {
            message_free(&m);
            if (!b->bad++ || !b->first_bad[0]) {
                char full[sizeof e.msg + 64];
                snprintf(full, sizeof full, "%s:%ld: %s", l->r->name, lineno[i], e.msg);
                snprintf(b->first_bad, sizeof b->first_bad, "%.200s", full);
            }
            continue;
        }
        store_prepare(&m, l->now_ms, &it.p, &b->texts);
        message_free(&m);
        b->item[w++] = it;
    }
    b->n = w;
    sb_free(&b->raw);
}

static void *worker(void *arg)
{
    struct loader *l = arg;
    long *lineno = xmalloc(LOADER_BATCH * sizeof *lineno);
    for (;;) {
        struct loader_batch *b = xcalloc(1, sizeof *b);
        sb_init(&b->texts);
        sb_init(&b->raw);
        if (!read_batch(l, b, lineno)) {
            loader_batch_free(b);
            break;
        }
        decode_batch(l, b, lineno);
        bool last = b->last; /* b is the loop's once it is in done */
        pthread_mutex_lock(&l->mu);
        /* The batch the loop waits for always goes in: the others wait for room. */
        while (l->queued >= BATCHES_AHEAD && b->seq != l->next_take && !l->stop)
            pthread_cond_wait(&l->room, &l->mu);
        bool stop = l->stop;
        if (!stop) {
            struct loader_batch **at = &l->done;
            while (*at && (*at)->seq < b->seq)
                at = &(*at)->next;
            b->next = *at;
            *at = b;
            l->queued++;
            pthread_cond_broadcast(&l->ready);
        }
        pthread_mutex_unlock(&l->mu);
        if (stop)
            loader_batch_free(b);
        if (stop || last)
            break;
    }
    free(lineno);
    return NULL;
}

struct loader_batch *loader_take(struct loader *l, double until)
{
    pthread_mutex_lock(&l->mu);
    while (!l->done || l->done->seq != l->next_take) {
        double left = until - clock_mono_s();
        if (left <= 0)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        long ns = ts.tv_nsec + (long)(left * 1e9);
        ts.tv_sec += ns / 1000000000L;
        ts.tv_nsec = ns % 1000000000L;
        pthread_cond_timedwait(&l->ready, &l->mu, &ts);
    }
    struct loader_batch *b = l->done && l->done->seq == l->next_take ? l->done : NULL;
    if (b) {
        l->done = b->next;
        b->next = NULL;
        l->queued--;
        l->next_take++;
        pthread_cond_broadcast(&l->room);
    }
    pthread_mutex_unlock(&l->mu);
    return b;
}

struct loader *loader_start(struct snapshot_reader *r, int64_t now_ms, int workers)
{
    struct loader *l = xcalloc(1, sizeof *l);
    l->r = r;
    l->now_ms = now_ms;
    pthread_mutex_init(&l->mu, NULL);
    pthread_mutex_init(&l->read_mu, NULL);
    pthread_cond_init(&l->ready, NULL);
    pthread_cond_init(&l->room, NULL);
    if (workers < 1)
        workers = 1;
    if (workers > MAX_WORKERS)
        workers = MAX_WORKERS;
    while (l->workers < workers && thread_start_quiet(&l->thread[l->workers], worker, l) == 0)
        l->workers++;
    if (!l->workers) {
        loader_stop(l);
        return NULL;
    }
    return l;
}

void loader_stop(struct loader *l)
{
    if (!l)
        return;
    pthread_mutex_lock(&l->mu);
    l->stop = true;
    pthread_cond_broadcast(&l->room);
    pthread_mutex_unlock(&l->mu);
    for (int i = 0; i < l->workers; i++)
        pthread_join(l->thread[i], NULL);
    while (l->done) {
        struct loader_batch *b = l->done;
        l->done = b->next;
        loader_batch_free(b);
    }
    pthread_mutex_destroy(&l->mu);
    pthread_mutex_destroy(&l->read_mu);
    pthread_cond_destroy(&l->ready);
    pthread_cond_destroy(&l->room);
    free(l);
}
