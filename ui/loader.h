/*
 * loader: a snapshot file read and decoded by worker threads, for the explorer's loop to hand
 * to the store (ui/source_file.c). One reader at a time takes the next lines (the reader is
 * sequential); each worker parses and decodes its own batch (store_prepare, which needs no
 * store); the loop takes the batches in file order.
 *
 * Ownership: loader_start borrows the reader until loader_stop, which joins the workers and
 * frees what the loop did not take. A batch taken is the caller's (loader_batch_free).
 */
#ifndef DLQX_UI_LOADER_H
#define DLQX_UI_LOADER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"
#include "store.h"

#define LOADER_BATCH 2048

struct loader_item {
    struct store_prep p;
    uint64_t offset; /* the record's place in the file, and its length without the newline */
    uint32_t len;
};

struct loader_batch {
    struct loader_item item[LOADER_BATCH];
    size_t n;
    struct strbuf texts; /* the items' texts (store_prepare) */
    long bad;            /* malformed records among its lines, the first named: */
    char first_bad[256];
    bool last; /* the file ended (or failed: error says why) with it */
    char error[256];
    uint64_t seq;      /* its place in the file */
    struct strbuf raw; /* (the worker's) its lines, each NUL-terminated */
    struct loader_batch *next;
};

struct loader;

/* Starts up to `workers` threads on r (at least one); NULL when no thread can be had. */
struct loader *loader_start(struct snapshot_reader *r, int64_t now_ms, int workers);
/* The next batch in file order, waiting until the clock passes until; NULL when none came. */
struct loader_batch *loader_take(struct loader *l, double until);
void loader_batch_free(struct loader_batch *b);
/* Stops and joins the workers; frees l and what was not taken. */
void loader_stop(struct loader *l);

#endif
