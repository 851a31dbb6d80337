/*
 * journal_file: the journal's file and its writes (internal to the journal: journal.c and
 * journal_commit.c). Records are held in memory (struct journal.held) until a flush writes
 * them — one write(2) under an exclusive flock(2), after the newline that ends a torn last
 * line — and a sync fsyncs the file (and, the first time, the directories it created). Once
 * journal_commit has been called, every write and sync is the journal's own thread's: it takes
 * what is handed to it in order, so records land in the order they were written.
 */
#ifndef DLQX_JOURNAL_FILE_H
#define DLQX_JOURNAL_FILE_H

#include <stdbool.h>
#include <stddef.h>

#include "journal.h"
#include "util.h"

struct journal_committer;

struct journal {
    int fd;  /* O_WRONLY | O_APPEND */
    int rfd; /* O_RDONLY, to look at the last byte */
    char *path;
    char *who;          /* user@host */
    int dirs_to_sync;   /* directories whose entries are new: the file's, and those mkdir made */
    struct strbuf held; /* whole lines written since the last flush (the caller's thread) */
    struct journal_committer *cm; /* the thread that writes and syncs; NULL until started */
    bool inline_failed;           /* journal_commit without a thread failed (inline_err) */
    struct error inline_err;
    bool now_fixed; /* DLQX_NOW, read when the journal opened (not a getenv a record) */
    int64_t now_fixed_ms;
};

/* Every record's "v". */
#define JOURNAL_LINE_VERSION 1

/* The intent and outcome records as lines ('\n' included), written without a tree
 * (journal_line.c); NULL when it does not take the record (an intent with a diff tree, a line
 * longer than JOURNAL_MAX_LINE): the tree writes it. at: the record's time, RFC 3339. */
char *journal_intent_line(const struct journal_intent *in, const char *at, size_t *len);
char *journal_outcome_line(const char *run_id, uint64_t seq, const char *result, const char *reason,
                           const char *at, size_t *len);
/* The same records written through the jansson tree, as every record was before: what
 * test_journal_line compares journal_line.c's bytes with. */
char *journal_intent_line_tree(const struct journal_intent *in, const char *at, size_t *len);
char *journal_outcome_line_tree(const char *run_id, uint64_t seq, enum journal_result res,
                                const char *reason, const char *at, size_t *len);

/* Past this much held, a write flushes (without syncing), or hands it to the thread. */
#define JOURNAL_HOLD_MAX ((size_t)256 << 10)

enum status jf_lock(struct journal *j, int op, struct error *err);
/* Whether the file (non-empty) does not end with a newline; called with the lock held. */
enum status jf_torn(struct journal *j, bool *out, struct error *err);
enum status jf_write_all(struct journal *j, const char *buf, size_t len, struct error *err);
/* What is held, written (inline, or handed to the thread once it runs). On failure nothing of
 * it is kept: a record that could not be written must not land later, out of order. */
enum status jf_flush_held(struct journal *j, struct error *err);
/* journal_close's part: what is held is handed over, the thread writes and syncs everything
 * and ends. */
void jf_commit_stop(struct journal *j);
/* The directory part of path: "." for a bare name, "/" for a file at the root. */
char *jf_dir_of(const char *path);

#endif
