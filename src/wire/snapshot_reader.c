/*
 * snapshot_reader: the snapshot file read record by record (snapshot.h): its lines, the record
 * size limit, and snapshot_read, which parses each line (snapshot_parse_line, snapshot.c).
 */
#include "snapshot.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static size_t max_record_set; /* 0: not set */

bool snapshot_parse_size(const char *s, size_t *out)
{
    if (!s || *s < '0' || *s > '9')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return false;
    unsigned shift = 0;
    if (*end == 'K' || *end == 'k')
        shift = 10;
    else if (*end == 'M' || *end == 'm')
        shift = 20;
    else if (*end == 'G' || *end == 'g')
        shift = 30;
    if (shift)
        end++;
    if (*end || v == 0 || v > (SNAPSHOT_MAX_RECORD_MAX >> shift))
        return false;
    *out = (size_t)v << shift;
    return true;
}

void snapshot_set_max_record(size_t n)
{
    max_record_set = n;
}

size_t snapshot_max_record(void)
{
    if (max_record_set)
        return max_record_set;
    size_t n;
    if (snapshot_parse_size(getenv("DLQX_MAX_RECORD"), &n))
        return n;
    return SNAPSHOT_MAX_RECORD_DEFAULT;
}

bool snapshot_max_record_env_ok(struct error *err)
{
    const char *env = getenv("DLQX_MAX_RECORD");
    size_t n;
    if (!env || !*env || snapshot_parse_size(env, &n))
        return true;
    error_set(err, ST_EINVAL,
              "DLQX_MAX_RECORD: \"%.100s\" is not a size (a number of bytes, or with K, M or G: "
              "64M)",
              env);
    return false;
}

void snapshot_reader_open(struct snapshot_reader *r, FILE *f, const char *name)
{
    memset(r, 0, sizeof *r);
    r->f = f;
    r->name = name;
    r->max_record = snapshot_max_record();
    /* A pipe or a terminal is read with read(2), which gives what has come: a record is read
     * when its line is complete, not when a block is full. Nothing has read from such a FILE
     * before (stdin, or a file just opened), so no bytes wait in its own buffer. */
    r->fd = -1;
    int fd = fileno(f);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
        r->fd = fd;
}

/* "64 MiB", "3 KiB", "700 bytes": for messages. */
static void size_text(size_t n, char out[32])
{
    if (n >= ((size_t)1 << 30) && n % ((size_t)1 << 30) == 0)
        snprintf(out, 32, "%zu GiB", n >> 30);
    else if (n >= ((size_t)1 << 20) && n % ((size_t)1 << 20) == 0)
        snprintf(out, 32, "%zu MiB", n >> 20);
    else if (n >= ((size_t)1 << 10) && n % ((size_t)1 << 10) == 0)
        snprintf(out, 32, "%zu KiB", n >> 10);
    else
        snprintf(out, 32, "%zu bytes", n);
}

enum line_rc { LINE_OK, LINE_EOF, LINE_TOO_LONG, LINE_NO_MEMORY, LINE_IO_ERROR };

/* More bytes after r->end; false at the end of the file or on an error (r->eof, r->failed). */
static bool fill(struct snapshot_reader *r)
{
    if (r->eof || r->failed)
        return false;
    size_t room = r->cap - 1 - r->end; /* one byte kept for the NUL after a last line */
    ssize_t got;
    if (r->fd >= 0) {
        do
            got = read(r->fd, r->buf + r->end, room);
        while (got < 0 && errno == EINTR);
        if (got < 0)
            r->failed = true;
    } else {
        got = (ssize_t)fread(r->buf + r->end, 1, room, r->f);
        if (got == 0 && ferror(r->f))
            r->failed = true;
    }
    if (got <= 0) {
        if (!r->failed)
            r->eof = true;
        return false;
    }
    r->end += (size_t)got;
    return true;
}

/* Room after r->end: the unsplit bytes are moved to the front, and the block grown (up to
 * what a record of the limit needs) when they fill it. False when it cannot grow. */
static bool make_room(struct snapshot_reader *r, bool *no_memory)
{
    if (r->pos > 0) {
        r->base += r->pos;
        memmove(r->buf, r->buf + r->pos, r->end - r->pos);
        r->end -= r->pos;
        r->pos = 0;
    }
    if (r->cap && r->end + 1 < r->cap)
        return true;
    size_t want = r->cap ? r->cap * 2 : SNAPSHOT_READ_BLOCK;
    /* a record of the limit, its newline or one byte more (to tell a last line of max_record +
     * 1 bytes, still kept, from a longer one), and the NUL */
    size_t most = r->max_record + 3 > SNAPSHOT_READ_BLOCK ? r->max_record + 3 : SNAPSHOT_READ_BLOCK;
    if (want > most)
        want = most;
    if (want <= r->cap)
        return false;
    char *nb = realloc(r->buf, want);
    if (!nb) {
        *no_memory = true;
        return false;
    }
    r->buf = nb;
    r->cap = want;
    return true;
}

/* The next line, split in place: *line its first byte (NUL-terminated where the newline
 * was), *len its length without the newline. A line of more than r->max_record bytes (its
 * newline aside; one more for a last line without one, as the reader has always counted), or
 * one the block cannot grow to hold, is read to its end and dropped: *len is then its size. */
static enum line_rc read_line(struct snapshot_reader *r, char **line, size_t *len)
{
    size_t scanned = 0; /* bytes after pos known to hold no newline */
    bool dropping = false, no_memory = false;
    size_t dropped = 0;
    for (;;) {
        char *from = r->buf ? r->buf + r->pos + scanned : NULL;
        char *nl = from ? memchr(from, '\n', r->end - r->pos - scanned) : NULL;
        if (nl) {
            size_t n = (size_t)(nl - (r->buf + r->pos));
            if (dropping || n > r->max_record) {
                *len = dropped + n;
                r->pos += n + 1;
                return no_memory ? LINE_NO_MEMORY : LINE_TOO_LONG;
            }
            *nl = '\0';
            *line = r->buf + r->pos;
            *len = n;
            r->pos += n + 1;
            return LINE_OK;
        }
        scanned = r->end - r->pos;
        if (!dropping && scanned > r->max_record + 1)
            dropping = true; /* over the limit whatever follows */
        if (dropping) {
            dropped += scanned;
            r->base += r->end;
            r->pos = r->end = 0;
            scanned = 0;
        }
        if (!make_room(r, &no_memory)) {
            /* The block cannot grow: the line is dropped, read to its end. */
            dropping = true;
            dropped += r->end - r->pos;
            r->base += r->end;
            r->pos = r->end = 0;
            scanned = 0;
            if (!r->cap && !make_room(r, &no_memory))
                return LINE_IO_ERROR;
        }
        if (!fill(r)) {
            if (r->failed)
                return LINE_IO_ERROR;
            size_t n = r->end - r->pos;
            if (!dropping && n == 0)
                return LINE_EOF;
            if (dropping || n > r->max_record + 1) {
                *len = dropped + n;
                r->pos = r->end;
                return dropped + n == 0 ? LINE_EOF : (no_memory ? LINE_NO_MEMORY : LINE_TOO_LONG);
            }
            r->buf[r->end] = '\0';
            *line = r->buf + r->pos;
            *len = n;
            r->pos = r->end;
            return LINE_OK;
        }
    }
}

void snapshot_reader_close(struct snapshot_reader *r)
{
    free(r->buf);
    r->buf = NULL;
    r->cap = r->pos = r->end = 0;
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return false;
    return true;
}

/* A block grown for one big record is not kept for the small ones after it. */
static void shrink(struct snapshot_reader *r)
{
    size_t held = r->end - r->pos;
    if (r->cap <= ((size_t)8 << 20) || held + 1 >= SNAPSHOT_READ_BLOCK)
        return;
    char *nb = malloc(SNAPSHOT_READ_BLOCK);
    if (!nb)
        return;
    memcpy(nb, r->buf + r->pos, held);
    r->base += r->pos;
    free(r->buf);
    r->buf = nb;
    r->cap = SNAPSHOT_READ_BLOCK;
    r->pos = 0;
    r->end = held;
}

enum snapshot_rc snapshot_read_line(struct snapshot_reader *r, const char **line, size_t *len,
                                    struct error *err)
{
    shrink(r);
    for (;;) {
        errno = 0;
        size_t n = 0;
        char *s = NULL;
        enum line_rc lr = read_line(r, &s, &n);
        if (lr == LINE_IO_ERROR) {
            error_set(err, ST_EIO, "%s: read error after line %ld: %s", r->name, r->line,
                      strerror(errno ? errno : EIO));
            return SNAP_IO_ERROR;
        }
        if (lr == LINE_EOF)
            return SNAP_EOF;
        r->line++;
        if (lr != LINE_OK) {
            char limit[32];
            size_text(r->max_record, limit);
            if (lr == LINE_TOO_LONG)
                error_set(err, ST_ERANGE,
                          "%s:%ld: a record of %zu bytes is over the record size limit (%s; "
                          "raise it with --max-record-size or DLQX_MAX_RECORD)",
                          r->name, r->line, n, limit);
            else
                error_set(err, ST_ENOMEM,
                          "%s:%ld: out of memory reading a record of %zu bytes (the others are "
                          "read)",
                          r->name, r->line, n);
            return SNAP_BAD_RECORD;
        }
        size_t l = n;
        if (l && s[l - 1] == '\r')
            l--;
        if (r->line == 1 && l >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
            s += 3;
            l -= 3;
        }
        if (blank(s, l))
            continue;
        r->last = s;
        r->last_len = l;
        r->last_offset = r->base + (uint64_t)(s - r->buf);
        *line = s;
        *len = l;
        return SNAP_RECORD;
    }
}

enum snapshot_rc snapshot_read(struct snapshot_reader *r, struct message *out, struct error *err)
{
    const char *s = NULL;
    size_t len = 0;
    enum snapshot_rc rc = snapshot_read_line(r, &s, &len, err);
    if (rc == SNAP_BAD_RECORD)
        message_init(out);
    if (rc != SNAP_RECORD)
        return rc;
    struct error e;
    error_clear(&e);
    if (snapshot_parse_line(s, len, out, &e) != ST_OK) {
        error_set(err, e.code, "%s:%ld: %s", r->name, r->line, e.msg);
        return SNAP_BAD_RECORD;
    }
    return SNAP_RECORD;
}
