/*
 * safefile: writing a file without following a planted link, replacing a special file, or
 * putting a half-written file in the place of a good one (safefile.h).
 */
#include "safefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static void sf_free(struct safefile *sf)
{
    free(sf->target);
    free(sf->tmp);
    memset(sf, 0, sizeof *sf);
}

/* What a file that is not a regular file is, for the sentence that refuses it. */
static const char *kind_name(mode_t m)
{
    if (S_ISLNK(m))
        return "a symbolic link";
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISSOCK(m))
        return "a socket";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISCHR(m))
        return "a device that is not a terminal";
    return "not a regular file";
}

static bool is_null_device(const struct stat *st)
{
    struct stat null;
    return S_ISCHR(st->st_mode) && stat("/dev/null", &null) == 0 && S_ISCHR(null.st_mode) &&
           null.st_rdev == st->st_rdev;
}

static enum status refuse(const char *path, mode_t m, struct error *err)
{
    return error_set(err, ST_EINVAL,
                     "%s is %s: dlqx writes only a regular file (replaced whole), a pipe or a "
                     "terminal (use - for standard output)",
                     path, kind_name(m));
}

/* A FIFO, a terminal or the null device: written in place, as a stream. */
static enum status open_stream(struct safefile *sf, const char *path, const struct stat *st,
                               struct error *err)
{
    if (!S_ISFIFO(st->st_mode) && !S_ISCHR(st->st_mode))
        return refuse(path, st->st_mode, err);
    /* No O_CREAT: if it went away meanwhile, nothing is made in its place. */
    int fd = open(path, O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return error_set(err, ST_EIO, "cannot write %s: %s", path, strerror(errno));
    struct stat now;
    if (fstat(fd, &now) != 0 || now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
        close(fd);
        return error_set(err, ST_EIO, "cannot write %s: it was replaced while dlqx opened it",
                         path);
    }
    if (S_ISCHR(now.st_mode) && !isatty(fd) && !is_null_device(&now)) {
        close(fd);
        return refuse(path, now.st_mode, err);
    }
    sf->f = fdopen(fd, "wb");
    if (!sf->f) {
        int e = errno;
        close(fd);
        return error_set(err, ST_EIO, "cannot write %s: %s", path, strerror(e));
    }
    sf->target = xstrdup(path);
    sf->stream = true;
    return ST_OK;
}

/* Six characters nobody can guess, for the temporary file's name. */
static void random_suffix(char out[7])
{
    static const char set[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    static unsigned counter;
    unsigned char r[6];
    if (getrandom(r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        unsigned long long x = (unsigned long long)ts.tv_nsec ^
                               ((unsigned long long)getpid() << 20) ^ (++counter * 2654435761u);
        for (size_t i = 0; i < sizeof r; i++, x >>= 6)
            r[i] = (unsigned char)x;
    }
    for (size_t i = 0; i < sizeof r; i++)
        out[i] = set[r[i] % (sizeof set - 1)];
    out[6] = '\0';
}

/* A regular file or nothing: a new temporary file beside it. */
static enum status open_temp(struct safefile *sf, const char *path, const struct stat *old,
                             struct error *err)
{
    for (int tries = 0; tries < 64; tries++) {
        char sfx[7];
        random_suffix(sfx);
        char *tmp = xasprintf("%s.dlqx-%s", path, sfx);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
            int e = errno;
            free(tmp);
            if (e == EEXIST)
                continue;
            return error_set(err, ST_EIO, "cannot write %s: cannot create a file beside it: %s",
                             path, strerror(e));
        }
        if (old) {
            /* The file it replaces keeps its owner (where dlqx may give it) and its mode. */
            if ((old->st_uid != geteuid() || old->st_gid != getegid()) &&
                fchown(fd, old->st_uid, old->st_gid) != 0) {
                /* not allowed: the new file is dlqx's user's, still with the old mode */
            }
            if (fchmod(fd, old->st_mode & 0777) != 0) {
                int e = errno;
                close(fd);
                unlink(tmp);
                free(tmp);
                return error_set(err, ST_EIO, "cannot write %s: cannot keep its mode: %s", path,
                                 strerror(e));
            }
        }
        sf->f = fdopen(fd, "wb");
        if (!sf->f) {
            int e = errno;
            close(fd);
            unlink(tmp);
            free(tmp);
            return error_set(err, ST_EIO, "cannot write %s: %s", path, strerror(e));
        }
        sf->target = xstrdup(path);
        sf->tmp = tmp;
        return ST_OK;
    }
    return error_set(err, ST_EIO, "cannot write %s: every temporary name tried beside it exists",
                     path);
}

static enum status open_path(struct safefile *sf, const char *path, bool streams, struct error *err)
{
    memset(sf, 0, sizeof *sf);
    if (!path || !*path)
        return error_set(err, ST_EINVAL, "an output file needs a name");
    if (!streams && strcmp(path, "-") == 0)
        return error_set(err, ST_EINVAL, "standard output (-) is not a file: name a file");
    if (strcmp(path, "-") == 0) {
        sf->f = stdout;
        sf->target = xstrdup("-");
        sf->stream = sf->is_stdout = true;
        return ST_OK;
    }
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno != ENOENT)
            return error_set(err, ST_EIO, "cannot write %s: %s", path, strerror(errno));
        return open_temp(sf, path, NULL, err);
    }
    if (S_ISREG(st.st_mode))
        return open_temp(sf, path, &st, err);
    if (!streams) /* before it is opened: a FIFO's open waits for a reader */
        return error_set(err, ST_EINVAL, "%s is not a regular file: only a file is written here",
                         path);
    return open_stream(sf, path, &st, err);
}

enum status safefile_open(struct safefile *sf, const char *path, struct error *err)
{
    return open_path(sf, path, true, err);
}

enum status safefile_open_regular(struct safefile *sf, const char *path, struct error *err)
{
    return open_path(sf, path, false, err);
}

/* The directory part of path, for its fsync: "." for a bare name. */
static char *dir_part(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return xstrdup(".");
    return slash == path ? xstrdup("/") : xstrndup(path, (size_t)(slash - path));
}

/* A rename is durable once the directory that holds it is. */
static void sync_dir(const char *path)
{
    char *dir = dir_part(path);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

static enum status close_stream(struct safefile *sf, struct error *err)
{
    enum status st = ST_OK;
    const char *name = sf->is_stdout ? "standard output" : sf->target;
    if (fflush(sf->f) != 0 || ferror(sf->f))
        st = error_set(err, ST_EIO, "cannot write %s: %s", name, strerror(errno));
    if (!sf->is_stdout && fclose(sf->f) != 0 && st == ST_OK)
        st = error_set(err, ST_EIO, "cannot write %s: %s", name, strerror(errno));
    sf_free(sf);
    return st;
}

/* Everything written reaches the disk, or the temporary file is removed. */
static enum status close_temp(struct safefile *sf, struct error *err)
{
    bool ok = fflush(sf->f) == 0 && !ferror(sf->f) && fsync(fileno(sf->f)) == 0;
    int e = errno;
    if (fclose(sf->f) != 0 && ok) {
        ok = false;
        e = errno;
    }
    sf->f = NULL;
    if (ok)
        return ST_OK;
    unlink(sf->tmp);
    enum status st = error_set(err, ST_EIO, "cannot write %s: %s", sf->target, strerror(e));
    sf_free(sf);
    return st;
}

/* Renames the finished temporary file to name; on failure it is kept, and err says where. */
static enum status rename_to(struct safefile *sf, const char *name, struct error *err)
{
    /* Looked at again: what is not a regular file there (planted, or put there during the
     * write) is left alone, not replaced. */
    struct stat st;
    if (lstat(name, &st) == 0 && !S_ISREG(st.st_mode))
        return error_set(err, ST_EIO, "%s is %s: it is left alone, and what dlqx wrote is in %s",
                         name, kind_name(st.st_mode), sf->tmp);
    if (rename(sf->tmp, name) != 0)
        return error_set(err, ST_EIO, "cannot rename %s to %s: %s (what dlqx wrote is kept)",
                         sf->tmp, name, strerror(errno));
    sync_dir(name);
    return ST_OK;
}

enum status safefile_commit(struct safefile *sf, struct error *err)
{
    if (sf->stream)
        return close_stream(sf, err);
    enum status st = close_temp(sf, err);
    if (st != ST_OK)
        return st;
    st = rename_to(sf, sf->target, err);
    sf_free(sf);
    return st;
}

enum status safefile_keep_incomplete(struct safefile *sf, char **kept, struct error *err)
{
    *kept = NULL;
    if (sf->stream)
        return close_stream(sf, err);
    enum status st = close_temp(sf, err);
    if (st != ST_OK)
        return st;
    char *name = xasprintf("%s%s", sf->target, SAFEFILE_INCOMPLETE_SUFFIX);
    st = rename_to(sf, name, err);
    if (st == ST_OK)
        *kept = name;
    else
        free(name);
    sf_free(sf);
    return st;
}

void safefile_discard(struct safefile *sf)
{
    if (sf->stream) {
        if (!sf->is_stdout)
            fclose(sf->f);
    } else if (sf->f) {
        fclose(sf->f);
        unlink(sf->tmp);
    }
    sf_free(sf);
}
