/*
 * replay_setup: what every pass needs before replay_run, set up one way for `dlqx replay`,
 * `move` and `delete`, the explorer's plan and the replay bench — the connection (opened from
 * the broker options, or one the caller already has), the journal (opened for appending at
 * the path given, else journal_default_path()), and the parts of struct replay_opts every pass
 * fills alike (the queue, its kind and delivery limit, the journal op, the plan's size, the
 * journal). The caller adds its callbacks and its pace, and runs replay_run(s.conn, &s.opts…).
 *
 * And what the writing commands and the explorer share around a pass: the exit status of its
 * report, and the journal's pending intents for a queue (an interrupted run's).
 *
 * Ownership: replay_setup_open fills a struct replay_setup that owns its journal, its journal
 * path and the connection it opened (a connection given in the args is borrowed);
 * replay_setup_close releases them. The strings in the args are borrowed by s.opts.
 */
#ifndef DLQX_REPLAY_SETUP_H
#define DLQX_REPLAY_SETUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "broker_opts.h"
#include "journal.h"
#include "replay.h"

struct replay_setup_args {
    struct conn *conn;                /* a connection already open (borrowed), or NULL: */
    const struct broker_opts *broker; /* ... open one with these (broker_open) */
    const char *journal_path;         /* NULL: journal_default_path() */
    const char *queue;                /* the DLQ */
    const char *op;                   /* journal op: replay | reissue | move | delete */
    enum queue_kind kind;             /* as the management API or the options say */
    int64_t delivery_limit;           /* quorum: -1 none */
    uint64_t expect;                  /* the plan's size; 0: read the whole queue */
};

struct replay_setup {
    struct conn *conn;       /* the pass's connection */
    bool own_conn;           /* opened here: replay_setup_close closes it */
    struct journal *journal; /* owned */
    char *journal_path;      /* owned */
    struct replay_opts opts; /* queue, kind, delivery_limit, op, expect, journal filled */
};

/* Opens the connection (unless given) and the journal, and fills s->opts. On a failure
 * nothing is left open, and err says why: a connection's failure with its kind (the exit
 * status), a journal's with ERRK_IO. */
enum status replay_setup_open(struct replay_setup *s, const struct replay_setup_args *a,
                              struct error *err);
/* Closes the journal, and the connection when it was opened here; s is zeroed. */
void replay_setup_close(struct replay_setup *s);

/* The exit status of a pass (the writing commands', and the explorer's when a signal stopped
 * one): missing is how many planned dead letters were not found. */
int replay_exit_code(const struct replay_report *r, size_t missing);

/* The pending intents of jpath for queue (NULL: any) whose run was on the broker c is
 * connected to (same vhost; its URL or one of b's): a new array, empty when there are none
 * or no journal. others (may be NULL): a new array of the rest. */
json_t *replay_pending_for(const char *jpath, const struct broker_opts *b, struct conn *c,
                           const char *queue, json_t **others);
/* The first max old ids of the intents, sanitized and comma-separated, appended to sb. */
void replay_pending_ids(const json_t *intents, size_t max, struct strbuf *sb);

#endif
