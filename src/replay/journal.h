/*
 * journal: the record of every write dlqx makes to a broker — JSON Lines, one object a line,
 * appended and fsync'd (docs/journal-format.md). Each intent is written (and synced) before
 * the publish or ack it announces; each outcome after the broker has answered. After a crash
 * the intents without an outcome, or with the outcome "unknown", are exactly the messages
 * that may have been sent twice —
 * never lost: journal_pending() lists them, `dlqx journal --pending` shows them.
 *
 * Records (every one has "v":1, "kind", "at" (RFC 3339 UTC, ms), "run"):
 *   run      a run begins: who (local user@host), broker (URL without password), vhost, user,
 *            op, source queue, how many planned, dry_run, dlqx version
 *   intent   seq (1, 2, … within the run), op (replay|reissue|move|delete), source, target
 *            {exchange, routing_key} (absent for delete), old_id, new_id, old_sha256,
 *            new_sha256, diff (the changed rows, restamp's diff_to_json)
 *   outcome  seq, result (done|kept|unknown|refused), reason (one sentence; not for done)
 *   end      a run ends: counts {done, kept, unknown[, refused]}, selected, how it ended
 *   resolution  a pending intent settled by `dlqx journal --reconcile`: seq, result, in_dlq,
 *            at_target, by, reason (the intent is no longer pending)
 * Unknown keys are ignored by readers; a torn last line (a crash mid-write) is skipped and
 * reported, and the next append starts on a fresh line.
 *
 * Credentials never reach the journal: broker URLs are written masked (url_mask).
 *
 * Ids (and any other string that is not valid UTF-8, or holds a NUL) are written as
 * {"base64": "..."}, the snapshot format's convention: journal_string_json writes that form,
 * bytes_from_json (hval_json.h) reads both forms back. A field that is NULL (does not apply,
 * or is not known) is left out of the record. "at" is clock_now_ms() (DLQX_NOW in tests). An
 * intent whose diff would make its line longer than JOURNAL_MAX_LINE is written without it
 * ("diff_omitted": true) rather than as a line readers skip.
 *
 * Ownership: journal_open returns a journal the caller closes with journal_close. Strings in
 * the records passed in are borrowed; journal_collect/journal_pending return new arrays the
 * caller releases with json_decref; journal_default_path a string the caller frees.
 */
#ifndef DLQX_JOURNAL_H
#define DLQX_JOURNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "status.h"

/* $DLQX_JOURNAL, else $XDG_STATE_HOME/dlqx/journal.jsonl, else
 * ~/.local/state/dlqx/journal.jsonl. A new string. */
char *journal_default_path(void);

struct journal;

/* Opens (creating it and its directory, mode 0600/0700) for appending. Takes an exclusive
 * advisory lock per write, so two dlqx processes can share one journal. */
enum status journal_open(const char *path, struct journal **out, struct error *err);
void journal_close(struct journal *j);
const char *journal_path(const struct journal *j);

struct journal_run {
    const char *run_id; /* a UUID; journal_new_run_id() */
    const char *op;     /* replay | reissue | move | delete */
    const char *broker; /* masked URL */
    const char *vhost;
    const char *user;   /* the broker user dlqx connected as */
    const char *source; /* the queue read */
    uint64_t planned;   /* 0: not known before the pass (a live selection): not written */
    bool dry_run;
};

struct journal_intent {
    const char *run_id;
    uint64_t seq;
    const char *op;
    const char *source;
    const char *exchange, *routing_key; /* NULL for delete */
    const char *old_id, *new_id;        /* new_id NULL for delete */
    size_t old_id_len, new_id_len;      /* ids may hold any bytes: lengths given */
    const char *old_sha256, *new_sha256;
    json_t *diff; /* borrowed; NULL: none */
    /* Or the diff already encoded (json_dumps, compact: a JSON array), used when diff is NULL:
     * a bulk pass holds thousands of diffs until their intents are written, and the text is
     * a fraction of the size of the tree. */
    const char *diff_text;
    size_t diff_text_len;
    uint32_t attempt; /* the run's attempt that sent it (journal_write_attempt); 0 or 1: the
                         first, not written */
};

/* JR_REFUSED: the broker refused the publish itself (403 ACCESS_REFUSED: the user may not
 * write to the target): no copy was accepted, the dead letter stays. Not pending. */
enum journal_result { JR_DONE, JR_KEPT, JR_UNKNOWN, JR_REFUSED };
const char *journal_result_name(enum journal_result r);

/* Held in memory (past 256 KB, written out — by the journal's thread once journal_commit has
 * started it), not yet on disk: journal_sync (or journal_commit) writes them (one write(2) for
 * all, under the lock) and syncs; journal_close writes what is left. */
enum status journal_write_run(struct journal *j, const struct journal_run *r, struct error *err);
enum status journal_write_intent(struct journal *j, const struct journal_intent *in,
                                 struct error *err);
enum status journal_write_outcome(struct journal *j, const char *run_id, uint64_t seq,
                                  enum journal_result res, const char *reason, struct error *err);
/* counts: kept includes refused; "refused" is written only when there are any. selected:
 * how many messages the run chose (a live selection learns it only as it reads; a dead letter
 * an attempt selects again after a lost connection counts again). attempts: written when
 * more than 1 (the run carried on after a lost connection, journal_write_attempt). */
enum status journal_write_end(struct journal *j, const char *run_id, uint64_t done, uint64_t kept,
                              uint64_t unknown, uint64_t refused, uint64_t selected,
                              uint32_t attempts, const char *how, struct error *err);
/* An attempt: the run's connection was lost (or hung) and the run carries on, on another node,
 * as attempt number `attempt` (2, 3, …) of the same run: its intents go on from seq `next_seq`
 * and carry "attempt". `unknown` says how many intents of the earlier attempts were left
 * unknown (possible duplicates, pending): their dead letters, never removed unless their
 * copy was confirmed, are read again and, when still in the queue, sent again. broker: the
 * node's URL without any password; reason: one sentence. */
struct journal_attempt {
    const char *run_id;
    uint32_t attempt;
    uint64_t next_seq;
    const char *broker;
    const char *reason;
    uint64_t unknown;
};
enum status journal_write_attempt(struct journal *j, const struct journal_attempt *a,
                                  struct error *err);

/* A resolution: `dlqx journal --reconcile` looked at the broker for a pending intent (run_id,
 * seq) and concluded `result` — "done" (the dead letter is gone from its queue: dlqx removes
 * it only after the copy's confirm), "duplicate" (still in the DLQ and its copy at the
 * target), "kept" (still in the DLQ, no copy at the target queue). at_target: 1, 0, or -1
 * (cannot tell: not written). by: the reconciling run's id. A reader treats the intent as no
 * longer pending. */
struct journal_resolution {
    const char *run_id;
    uint64_t seq;
    const char *result;
    bool in_dlq;
    int at_target;
    const char *by;
    const char *reason;
};
enum status journal_write_resolution(struct journal *j, const struct journal_resolution *r,
                                     struct error *err);

/* fsync: after it returns ST_OK every record written so far is on disk. */
enum status journal_sync(struct journal *j, struct error *err);

/* Group commit (a bulk pass): hands every record written so far to the journal's own thread,
 * which writes them with those handed over before (one write(2) under the lock) and fsyncs,
 * while the caller goes on; returns the ticket that covers them. Records land in the order
 * they were written, whether by this thread or by journal_sync (which, once the thread runs,
 * hands over and waits). The first call starts the thread; journal_close ends it after
 * everything handed over is on disk. */
uint64_t journal_commit(struct journal *j);
/* *upto: every ticket up to it is on disk (the records it covers and all before). A write or
 * sync that failed: ST_EIO with its error, and nothing written after it will ever be. */
enum status journal_durable(struct journal *j, uint64_t *upto, struct error *err);
/* A descriptor that becomes readable when a commit is done (poll it beside a socket; it is
 * drained by journal_durable), or -1 while the thread is not running. */
int journal_wake_fd(const struct journal *j);

/* A new random run id (UUID v4 text) in out. */
void journal_new_run_id(char out[37]);

/* len bytes as a JSON string when they are valid UTF-8 without NUL, else {"base64": "..."};
 * NULL data with len 0 is "". A new reference. */
json_t *journal_string_json(const void *data, size_t len);

/* ---- reading ------------------------------------------------------------------------- */

/* A line longer than this is malformed: it is skipped without being held in memory whole. */
#define JOURNAL_MAX_LINE ((size_t)16 << 20)

/* Called for each well-formed record (borrowed; valid during the call). Return false to stop. */
typedef bool (*journal_record_fn)(void *ctx, json_t *record);

struct journal_scan_report {
    uint64_t records;
    uint64_t malformed;            /* lines that are not a JSON object with v/kind (skipped) */
    bool torn_tail;                /* the last line had no newline (a crash mid-write) */
    uint64_t lines;                /* lines read, blank and torn ones included */
    uint64_t first_malformed_line; /* the number (from 1) of the first malformed line; 0: none */
};

/* Reads the journal at path from the start, calling fn for each well-formed record. Blank
 * lines are skipped; a final line without its newline is never passed to fn. A missing file
 * is ST_ENOTFOUND, a read error ST_EIO. rep may be NULL. */
enum status journal_scan(const char *path, journal_record_fn fn, void *ctx,
                         struct journal_scan_report *rep, struct error *err);

/* The intents that have no outcome, in file order (new references in a JSON array): each is
 * the intent record plus "run_broker"/"run_source" from its run record. */
enum status journal_pending(const char *path, json_t **out, struct error *err);

struct journal_summary {
    uint64_t runs;     /* run records */
    uint64_t intents;  /* intent records */
    uint64_t pending;  /* intents without an outcome, or with outcome "unknown" */
    uint64_t attempts; /* attempt records: runs carried on after a lost connection */
};

/* One pass that journal_pending and `dlqx journal` share: every intent in file order (a new
 * JSON array in *out; each element a new object: the intent record's members plus
 * "run_broker"/"run_source" from its run record when there is one and, unless pending_only,
 * "outcome": the outcome record when there is one). pending_only keeps only the intents
 * without an outcome or whose outcome is "unknown" (those carry "outcome" too). run_prefix, when
 * not NULL, keeps only the records of the runs whose id begins with it. each, when not NULL, is
 * called first for every well-formed record kept (borrowed, as journal_scan; false stops the pass,
 * which still returns ST_OK). sum and rep may be NULL. Errors are journal_scan's. */
enum status journal_collect(const char *path, const char *run_prefix, bool pending_only,
                            journal_record_fn each, void *ctx, json_t **out,
                            struct journal_summary *sum, struct journal_scan_report *rep,
                            struct error *err);

#endif
