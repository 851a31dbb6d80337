/*
 * journal_commit: the journal's writes and syncs (journal_file.h). Until journal_commit is first
 * called they are made by the caller (journal_sync: write, then fsync). From then on they are a
 * thread's — a group commit: the caller hands over what it has written and gets a ticket; the
 * thread writes every hand-over waiting (one write(2) under the lock) and fsyncs once for all
 * of them, and the caller learns through journal_durable (and a descriptor it can poll) when
 * its ticket is on disk. A replay pass goes on reading confirms and the DLQ meanwhile, and
 * publishes a copy only once the ticket of its intent is durable (docs/journal-format.md).
 */
#include "journal_file.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

enum status jf_lock(struct journal *j, int op, struct error *err)
{
    while (flock(j->fd, op) != 0) {
        if (errno == EINTR)
            continue;
        return error_set(err, ST_EIO, "cannot lock the journal %s: %s", j->path, strerror(errno));
    }
    return ST_OK;
}
/* Whether the file (non-empty) does not end with a newline: a record torn by a crash. Called
 * with the lock held, so no writer that keeps the rules is in the middle of a line. */
enum status jf_torn(struct journal *j, bool *out, struct error *err)
{
    *out = false;
    struct stat sb;
    if (fstat(j->fd, &sb) != 0)
        return error_set(err, ST_EIO, "cannot read the journal %s: %s", j->path, strerror(errno));
    if (sb.st_size == 0)
        return ST_OK;
    char c;
    ssize_t n;
    do
        n = pread(j->rfd, &c, 1, sb.st_size - 1);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return error_set(err, ST_EIO, "cannot read the journal %s: %s", j->path, strerror(errno));
    *out = n == 1 && c != '\n';
    return ST_OK;
}
enum status jf_write_all(struct journal *j, const char *buf, size_t len, struct error *err)
{
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(j->fd, buf + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return error_set(err, ST_EIO, "cannot write to the journal %s: %s", j->path,
                             strerror(n < 0 ? errno : EIO));
        off += (size_t)n;
    }
    return ST_OK;
}
/* Under the lock: ends a torn last line, then appends lines (which end with '\n') in one
 * write — the newline that ends a torn line goes in the same write, before the records. */
static enum status append_lines(struct journal *j, const char *line, size_t len, struct error *err)
{
    enum status st = jf_lock(j, LOCK_EX, err);
    if (st != ST_OK)
        return st;
    bool t = false;
    st = jf_torn(j, &t, err);
    if (st == ST_OK) {
        if (t) {
            char *buf = xmalloc(len + 1);
            buf[0] = '\n';
            memcpy(buf + 1, line, len);
            st = jf_write_all(j, buf, len + 1, err);
            free(buf);
        } else {
            st = jf_write_all(j, line, len, err);
        }
    }
    struct error e2;
    enum status st2 = jf_lock(j, LOCK_UN, &e2);
    if (st == ST_OK && st2 != ST_OK) {
        if (err)
            *err = e2;
        st = st2;
    }
    return st;
}
/* The directory part of path: "." for a bare name, "/" for a file at the root. */
char *jf_dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return xstrdup(".");
    while (slash > path && slash[-1] == '/')
        slash--;
    if (slash == path)
        return xstrdup("/");
    return xstrndup(path, (size_t)(slash - path));
}

static enum status fsync_dir(const char *dir, struct error *err)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return error_set(err, ST_EIO, "cannot sync the journal directory %s: %s", dir,
                         strerror(errno));
    int rc;
    do
        rc = fsync(fd);
    while (rc != 0 && errno == EINTR);
    int e = errno;
    close(fd);
    if (rc != 0 && e != EINVAL) /* EINVAL: the file system cannot sync a directory */
        return error_set(err, ST_EIO, "cannot sync the journal directory %s: %s", dir, strerror(e));
    return ST_OK;
}

/* fsync of the file, then (the first time) of the directories whose entries are new: a new
 * file exists after a crash only once its directory entry is on disk too. */
static enum status sync_file(struct journal *j, struct error *err)
{
    int rc;
    do
        rc = fsync(j->fd);
    while (rc != 0 && errno == EINTR);
    if (rc != 0)
        return error_set(err, ST_EIO, "cannot sync the journal %s: %s", j->path, strerror(errno));
    char *dir = jf_dir_of(j->path);
    while (j->dirs_to_sync > 0) {
        enum status st = fsync_dir(dir, err);
        if (st != ST_OK) {
            free(dir);
            return st;
        }
        j->dirs_to_sync--;
        char *up = jf_dir_of(dir);
        free(dir);
        dir = up;
    }
    free(dir);
    return ST_OK;
}

/* ---- the group commit ------------------------------------------------------------------- */

struct journal_committer {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
    struct strbuf queue; /* lines handed over, not yet taken by the thread */
    uint64_t handed;     /* the ticket of the last hand-over */
    uint64_t durable;    /* every hand-over up to this one is written and synced */
    bool stop;
    bool failed; /* a write or sync failed: nothing more is written, err says why */
    struct error err;
    int wake; /* eventfd: counts the commits done (journal_wake_fd) */
};

static void *committer_main(void *arg)
{
    struct journal *j = arg;
    struct journal_committer *cm = j->cm;
    struct strbuf work;
    sb_init(&work);
    pthread_mutex_lock(&cm->mu);
    for (;;) {
        while (!cm->stop && (cm->failed || cm->handed == cm->durable))
            pthread_cond_wait(&cm->work, &cm->mu);
        if (cm->failed || cm->handed == cm->durable)
            break; /* stopping, and nothing (more) can be written */
        struct strbuf t = work;
        work = cm->queue;
        cm->queue = t;
        uint64_t upto = cm->handed;
        pthread_mutex_unlock(&cm->mu);
        struct error e;
        error_clear(&e);
        enum status st = work.len ? append_lines(j, work.buf, work.len, &e) : ST_OK;
        if (st == ST_OK)
            st = sync_file(j, &e);
        sb_reset(&work);
        pthread_mutex_lock(&cm->mu);
        if (st != ST_OK) {
            cm->failed = true;
            cm->err = e;
            sb_reset(&cm->queue); /* never written after a record that failed */
        } else {
            cm->durable = upto;
        }
        pthread_cond_broadcast(&cm->done);
        uint64_t one = 1;
        ssize_t w = write(cm->wake, &one, sizeof one);
        (void)w; /* the counter cannot overflow a pass; a poller reads the state anyway */
    }
    pthread_mutex_unlock(&cm->mu);
    sb_free(&work);
    return NULL;
}

/* Starts the thread (once). False when it cannot be: the caller then writes inline. */
static bool committer_start(struct journal *j)
{
    if (j->cm)
        return true;
    struct journal_committer *cm = xcalloc(1, sizeof *cm);
    sb_init(&cm->queue);
    cm->wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (cm->wake < 0) {
        free(cm);
        return false;
    }
    pthread_mutex_init(&cm->mu, NULL);
    pthread_cond_init(&cm->work, NULL);
    pthread_cond_init(&cm->done, NULL);
    j->cm = cm;
    if (thread_start_quiet(&cm->thread, committer_main, j) != 0) {
        j->cm = NULL;
        pthread_cond_destroy(&cm->work);
        pthread_cond_destroy(&cm->done);
        pthread_mutex_destroy(&cm->mu);
        close(cm->wake);
        free(cm);
        return false;
    }
    return true;
}

/* Hands what is held to the thread (with the lock taken); the ticket that covers it. */
static uint64_t hand_over(struct journal *j)
{
    struct journal_committer *cm = j->cm;
    if (j->held.len || cm->handed == cm->durable) {
        /* Something new, or nothing in progress: a new ticket (an empty one still syncs, as
         * journal_sync always did). */
        sb_add(&cm->queue, j->held.buf ? j->held.buf : "", j->held.len);
        sb_reset(&j->held);
        cm->handed++;
        pthread_cond_signal(&cm->work);
    }
    return cm->handed;
}

enum status jf_flush_held(struct journal *j, struct error *err)
{
    if (!j->held.len)
        return ST_OK;
    if (j->cm) {
        pthread_mutex_lock(&j->cm->mu);
        hand_over(j);
        bool failed = j->cm->failed;
        if (failed && err)
            *err = j->cm->err;
        pthread_mutex_unlock(&j->cm->mu);
        return failed ? ST_EIO : ST_OK;
    }
    enum status st = append_lines(j, j->held.buf, j->held.len, err);
    sb_reset(&j->held);
    return st;
}

uint64_t journal_commit(struct journal *j)
{
    if (!committer_start(j)) {
        /* No thread: synced inline; a failure shows in journal_durable's next answer. */
        struct error e;
        if (!j->inline_failed && (jf_flush_held(j, &e) != ST_OK || sync_file(j, &e) != ST_OK)) {
            j->inline_failed = true;
            j->inline_err = e;
        }
        return 0;
    }
    pthread_mutex_lock(&j->cm->mu);
    uint64_t t = hand_over(j);
    pthread_mutex_unlock(&j->cm->mu);
    return t;
}

enum status journal_durable(struct journal *j, uint64_t *upto, struct error *err)
{
    *upto = 0;
    if (!j->cm) {
        if (j->inline_failed && err)
            *err = j->inline_err;
        return j->inline_failed ? ST_EIO : ST_OK;
    }
    uint64_t n;
    while (read(j->cm->wake, &n, sizeof n) > 0)
        ;
    pthread_mutex_lock(&j->cm->mu);
    *upto = j->cm->durable;
    bool failed = j->cm->failed;
    if (failed && err)
        *err = j->cm->err;
    pthread_mutex_unlock(&j->cm->mu);
    return failed ? ST_EIO : ST_OK;
}

int journal_wake_fd(const struct journal *j)
{
    return j->cm ? j->cm->wake : -1;
}

enum status journal_sync(struct journal *j, struct error *err)
{
    if (!j->cm) {
        enum status st = jf_flush_held(j, err);
        return st != ST_OK ? st : sync_file(j, err);
    }
    struct journal_committer *cm = j->cm;
    pthread_mutex_lock(&cm->mu);
    uint64_t t = hand_over(j);
    while (!cm->failed && cm->durable < t)
        pthread_cond_wait(&cm->done, &cm->mu);
    bool failed = cm->failed;
    if (failed && err)
        *err = cm->err;
    pthread_mutex_unlock(&cm->mu);
    return failed ? ST_EIO : ST_OK;
}

void jf_commit_stop(struct journal *j)
{
    struct journal_committer *cm = j->cm;
    if (!cm)
        return;
    pthread_mutex_lock(&cm->mu);
    if (j->held.len)
        hand_over(j);
    cm->stop = true;
    pthread_cond_signal(&cm->work);
    pthread_mutex_unlock(&cm->mu);
    pthread_join(cm->thread, NULL);
    pthread_cond_destroy(&cm->work);
    pthread_cond_destroy(&cm->done);
    pthread_mutex_destroy(&cm->mu);
    sb_free(&cm->queue);
    close(cm->wake);
    free(cm);
    j->cm = NULL;
}
