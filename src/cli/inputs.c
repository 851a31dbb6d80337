/*
 * inputs: reading the records of every input file for the subcommands.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sanitize.h"
#include "snapshot.h"

static void sanitize_name(const char *in, char *out, size_t cap)
{
    /* File names reach the terminal in messages: keep them printable. */
    size_t w = 0;
    for (; *in && w + 5 < cap; in++) {
        unsigned char c = (unsigned char)*in;
        if (c < 0x20 || c == 0x7f)
            w += (size_t)snprintf(out + w, cap - w, "\\x%02x", c);
        else
            out[w++] = (char)c;
    }
    out[w] = '\0';
}

/* The text of the record being handed to the callback (cli_current_record). */
static const char *current_line;
static size_t current_len;

void cli_current_record(const char **line, size_t *len)
{
    *line = current_line;
    *len = current_len;
}

bool cli_read_one(FILE *f, const char *name, cli_record_fn fn, void *ctx, struct cli_inputs *stats)
{
    struct snapshot_reader r;
    snapshot_reader_open(&r, f, name);
    bool go_on = true;
    for (;;) {
        struct message m;
        struct error err;
        error_clear(&err);
        enum snapshot_rc rc = snapshot_read(&r, &m, &err);
        if (rc == SNAP_EOF)
            break;
        if (rc == SNAP_IO_ERROR) {
            san_eprintf("dlqx: %s\n", err.msg);
            stats->io_failed = true;
            break;
        }
        if (rc == SNAP_BAD_RECORD) {
            san_eprintf("dlqx: %s (record skipped)\n", err.msg);
            if (err.code == ST_ENOMEM)
                stats->out_of_memory = true;
            stats->bad_records++;
            message_free(&m);
            continue;
        }
        stats->records++;
        bool keep = false;
        current_line = r.last;
        current_len = r.last_len;
        go_on = fn(&m, &keep, ctx);
        current_line = NULL;
        current_len = 0;
        if (!keep)
            message_free(&m);
        if (!go_on)
            break;
    }
    snapshot_reader_close(&r);
    return go_on;
}

struct one_by_one {
    cli_record_fn fn;
    void *ctx;
};

static bool read_one(FILE *f, const char *name, void *vctx, struct cli_inputs *stats)
{
    struct one_by_one *o = vctx;
    return cli_read_one(f, name, o->fn, o->ctx, stats);
}

void cli_read_inputs(char **files, int nfiles, cli_record_fn fn, void *ctx,
                     struct cli_inputs *stats)
{
    struct one_by_one o = {fn, ctx};
    cli_read_files(files, nfiles, read_one, &o, stats);
}

void cli_read_files(char **files, int nfiles, cli_file_fn fn, void *ctx, struct cli_inputs *stats)
{
    memset(stats, 0, sizeof *stats);
    struct error lerr;
    if (!snapshot_max_record_env_ok(&lerr)) {
        san_eprintf("dlqx: %s\n", lerr.msg);
        stats->bad_limit = true;
        return;
    }
    if (nfiles == 0) {
        fn(stdin, "(stdin)", ctx, stats);
        return;
    }
    for (int i = 0; i < nfiles; i++) {
        char shown[512];
        sanitize_name(files[i], shown, sizeof shown);
        if (strcmp(files[i], "-") == 0) {
            if (!fn(stdin, "(stdin)", ctx, stats))
                return;
            continue;
        }
        FILE *f = fopen(files[i], "rb");
        if (!f) {
            san_eprintf("dlqx: cannot open %s: %s\n", shown, strerror(errno));
            stats->open_failed = true;
            continue;
        }
        bool go_on = fn(f, shown, ctx, stats);
        fclose(f);
        if (!go_on)
            return;
    }
}

int cli_exit_code(const struct cli_inputs *stats)
{
    if (stats->bad_limit)
        return EXIT_USAGE;
    if (stats->out_of_memory)
        return EXIT_OSERR;
    if (stats->io_failed)
        return EXIT_IOERR;
    if (stats->open_failed)
        return EXIT_NOINPUT;
    if (stats->bad_records)
        return EXIT_DATAERR;
    return EXIT_OK;
}

bool cli_flush_stdout(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        if (errno != EPIPE)
            san_eprintf("dlqx: write error: %s\n", strerror(errno));
        return false;
    }
    return true;
}

bool cli_write_json(const char *text, size_t len, bool ascii, FILE *f)
{
    if (!ascii)
        return fwrite(text, 1, len, f) == len;
    size_t from = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] != 0x7f)
            continue;
        if (fwrite(text + from, 1, i - from, f) != i - from || fputs("\\u007f", f) == EOF)
            return false;
        from = i + 1;
    }
    return fwrite(text + from, 1, len - from, f) == len - from;
}

int cli_json_ascii_cb(const char *buffer, size_t size, void *file)
{
    return cli_write_json(buffer, size, true, file) ? 0 : -1;
}
