/*
 * conn_secret: passwords — read from a file (its mode checked) or the terminal (echo off),
 * taken out of a URL, wiped when freed — and the guard that makes the process undumpable
 * while one is held. No password leaves here in a form that can be shown.
 */
#include "conn.h"

#include <fcntl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

#include "util.h"

char *conn_url_password(const char *url)
{
    if (!url_has_password(url))
        return NULL;
    size_t n = strlen(url);
    char *buf = xstrdup(url);
    struct amqp_connection_info ci;
    amqp_default_connection_info(&ci);
    char *pw = NULL;
    if (amqp_parse_url(buf, &ci) == AMQP_STATUS_OK && ci.password)
        pw = xstrdup(ci.password);
    explicit_bzero(buf, n); /* cut with NULs by the parser: wipe it whole */
    free(buf);
    return pw;
}

void conn_secret_guard(void)
{
    /* No core dump and no ptrace by the same user while a password is in memory: a core of
     * a peek held it three times over (ours, rabbitmq-c's login frame, libcurl's copy). */
    prctl(PR_SET_DUMPABLE, 0L, 0L, 0L, 0L);
}

/* Wipes n bytes (a URL's copy that amqp_parse_url cut with NULs: strlen would stop short). */
void conn_secret_free_n(char *s, size_t n)
{
    if (!s)
        return;
    explicit_bzero(s, n);
    free(s);
}

void conn_secret_free(char *s)
{
    if (s)
        conn_secret_free_n(s, strlen(s));
}

static char *strip_line(char *s)
{
    size_t n = strcspn(s, "\r\n");
    s[n] = '\0';
    return s;
}

enum status conn_read_password_file(const char *path, char **out, struct error *err)
{
    conn_secret_guard();
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return error_set(err, ST_EIO, "cannot read the password file %s: %s", path,
                         strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return error_set(err, ST_EINVAL, "the password file %s is not a regular file", path);
    }
    if (sb.st_mode & (S_IROTH | S_IWOTH)) {
        close(fd);
        return error_set(err, ST_EINVAL,
                         "the password file %s can be read by anyone: chmod 600 it first", path);
    }
    char buf[4096];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n < 0)
        return error_set(err, ST_EIO, "cannot read the password file %s: %s", path,
                         strerror(errno));
    buf[n] = '\0';
    *out = xstrdup(strip_line(buf));
    explicit_bzero(buf, sizeof buf);
    return ST_OK;
}

enum status conn_prompt_password(const char *prompt, char **out, struct error *err)
{
    conn_secret_guard();
    int fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return error_set(err, ST_EIO, "cannot ask for a password: no terminal (%s)",
                         strerror(errno));
    struct termios old, quiet;
    bool restore = tcgetattr(fd, &old) == 0;
    if (restore) {
        quiet = old;
        quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
        quiet.c_lflag |= ICANON;
        tcsetattr(fd, TCSAFLUSH, &quiet);
    }
    if (write(fd, prompt, strlen(prompt)) < 0) {
        /* the prompt is a courtesy; reading still works */
    }
    char buf[4096];
    size_t len = 0;
    for (;;) {
        char ch;
        ssize_t n = read(fd, &ch, 1);
        if (n <= 0 || ch == '\n')
            break;
        if (len + 1 < sizeof buf)
            buf[len++] = ch;
    }
    buf[len] = '\0';
    if (restore)
        tcsetattr(fd, TCSAFLUSH, &old);
    if (write(fd, "\n", 1) < 0) {
        /* nothing to do */
    }
    close(fd);
    *out = xstrdup(strip_line(buf));
    explicit_bzero(buf, sizeof buf);
    return ST_OK;
}
