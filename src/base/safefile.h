/*
 * safefile: every file dlqx writes (a snapshot, a peek report) goes through here, so that a
 * half-written file never takes the place of a good one, a planted symbolic link is never
 * followed, and a special file is never replaced by a regular one.
 *
 * The target is looked at without following a symbolic link (lstat):
 *   - missing or a regular file: the data goes to a new temporary file beside it
 *     (TARGET.dlqx-XXXXXX, created O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600 — or the mode of
 *     the file it will replace), which is fsync'ed and renamed over the target only by
 *     safefile_commit; safefile_keep_incomplete renames it to TARGET.partial instead and
 *     leaves the target as it was;
 *   - a FIFO, a terminal or the null device (or "-": standard output): written as a stream,
 *     in place (nothing to rename, and nothing can be taken back);
 *   - anything else — a symbolic link, a directory, a socket, another device — is refused
 *     with a sentence naming what it is.
 *
 * Ownership: the struct is the caller's; safefile_open fills it, and exactly one of commit,
 * keep_incomplete or discard ends it (each frees what open took, even on failure).
 */
#ifndef DLQX_SAFEFILE_H
#define DLQX_SAFEFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "status.h"

/* The suffix an incomplete file is kept under, beside its target. */
#define SAFEFILE_INCOMPLETE_SUFFIX ".partial"

struct safefile {
    FILE *f;      /* write here */
    char *target; /* the name asked for */
    char *tmp;    /* the temporary file; NULL when the target is a stream */
    bool stream;  /* a FIFO, a terminal, the null device or standard output */
    bool is_stdout;
};

/* Opens path for writing ("-" is standard output). On failure nothing was created and err
 * says why in one sentence that names the file. */
enum status safefile_open(struct safefile *sf, const char *path, struct error *err);
/* The same for a caller that must not wait and writes files only (the explorer): a new file or
 * a regular one; "-", a FIFO (whose open waits for a reader), a terminal or a device is refused
 * before anything is opened, as safefile_open refuses a link, a directory or a socket. */
enum status safefile_open_regular(struct safefile *sf, const char *path, struct error *err);
/* The file is complete: flush, fsync, rename over the target (and fsync its directory). On
 * failure the temporary file is removed and the target is as it was. */
enum status safefile_commit(struct safefile *sf, struct error *err);
/* The file is incomplete: it is kept as TARGET.partial (a new name returned in *kept, the
 * caller frees it; NULL for a stream, which cannot be taken back), the target is left as it
 * was. On failure the temporary file is removed. */
enum status safefile_keep_incomplete(struct safefile *sf, char **kept, struct error *err);
/* Nothing of it is wanted: the temporary file is removed (a stream is closed). */
void safefile_discard(struct safefile *sf);

#endif
