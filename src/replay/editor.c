/*
 * editor: runs $VISUAL/$EDITOR on a temporary copy of a body and checks what comes back.
 */
#include "editor.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "restamp.h"
#include "util.h"

#define EDIT_MAX (64u * 1024 * 1024) /* a body larger than this is refused on read-back */

const char *editor_command(void)
{
    const char *e = getenv("VISUAL");
    if (!e || !*e)
        e = getenv("EDITOR");
    return e && *e ? e : "vi";
}

static const char *suffix_for(const struct bytes *ct)
{
    const char *s = ct ? bytes_cstr(ct) : NULL;
    if (!s)
        return ".txt";
    if (strstr(s, "json"))
        return ".json";
    if (strstr(s, "xml"))
        return ".xml";
    if (strstr(s, "yaml"))
        return ".yaml";
    return ".txt";
}

static enum status write_all(int fd, const void *data, size_t n, const char *path,
                             struct error *err)
{
    const unsigned char *p = data;
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return error_set(err, ST_EIO, "%s: %s", path, strerror(errno));
        p += w;
        n -= (size_t)w;
    }
    return ST_OK;
}

static enum status read_back(const char *path, struct bytes *out, struct error *err)
{
    if (bytes_read_file(path, EDIT_MAX, out) == 0)
        return ST_OK;
    if (errno == EFBIG)
        return error_set(err, ST_ERANGE, "the edited body is larger than %u MiB", EDIT_MAX >> 20);
    return error_set(err, ST_EIO, "%s: %s", path, strerror(errno));
}

/* Runs "$EDITOR path" through the shell, as git and crontab do, so EDITOR may carry flags. */
static enum status run_editor(const char *path, struct error *err)
{
    pid_t pid = fork();
    if (pid < 0)
        return error_set(err, ST_EIO, "cannot start the editor: %s", strerror(errno));
    if (pid == 0) {
        char *cmd = xasprintf("%s \"$1\"", editor_command());
        execl("/bin/sh", "sh", "-c", cmd, "sh", path, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return error_set(err, ST_EIO, "waiting for the editor: %s", strerror(errno));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return error_set(err, ST_EIO,
                         "the editor (%s) failed (exit status %d): the body is "
                         "unchanged",
                         editor_command(), WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return ST_OK;
}

enum status editor_edit(const struct bytes *body, const struct bytes *content_type,
                        editor_retry_fn retry, void *ctx, struct bytes *out, struct error *err)
{
    memset(out, 0, sizeof *out);
    const char *tmp = getenv("TMPDIR");
    char *path =
        xasprintf("%s/dlqx-body-XXXXXX%s", tmp && *tmp ? tmp : "/tmp", suffix_for(content_type));
    int fd = mkstemps(path, (int)strlen(suffix_for(content_type)));
    if (fd < 0) {
        enum status st =
            error_set(err, ST_EIO, "cannot create a temporary file: %s", strerror(errno));
        free(path);
        return st;
    }
    enum status st = write_all(fd, body->data, body->len, path, err);
    close(fd);
    while (st == ST_OK) {
        if ((st = run_editor(path, err)) != ST_OK)
            break;
        struct bytes edited = {0};
        if ((st = read_back(path, &edited, err)) != ST_OK)
            break;
        struct error why;
        error_clear(&why);
        if (restamp_check_body(content_type, &edited, &why) == ST_OK) {
            *out = edited;
            break;
        }
        bytes_free(&edited);
        if (!retry) {
            st = error_set(err, ST_EPARSE, "%s", why.msg);
            break;
        }
        if (!retry(ctx, why.msg)) {
            st = error_set(err, ST_EINVAL, "the edit was abandoned: %s", why.msg);
            break;
        }
    }
    unlink(path);
    free(path);
    return st;
}
