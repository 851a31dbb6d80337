/*
 * cli: what the subcommands share — reading every record of every input file,
 * and reporting malformed records without stopping.
 */
#ifndef DLQX_CLI_H
#define DLQX_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "exitcodes.h"
#include "message.h"
#include "snapshot_opts.h"
#include "util.h"

struct filter;

/* Exit codes: EXIT_LIST in exitcodes.h. */

/* Called for each record; the message is borrowed for the call unless the callback sets
 * *keep (then it owns it). Returns false to stop. */
typedef bool (*cli_record_fn)(struct message *m, bool *keep, void *ctx);

struct cli_inputs {
    long records;
    long bad_records;
    bool open_failed;
    bool io_failed;
    bool out_of_memory; /* a record could not be held (it was skipped; the others were read) */
    bool bad_limit;     /* DLQX_MAX_RECORD is not a size: nothing was read */
};

/* Reads every file in files (or stdin for none or "-"), calling fn per record; malformed
 * records are reported on stderr as "dlqx: FILE:LINE: why" and skipped. */
void cli_read_inputs(char **files, int nfiles, cli_record_fn fn, void *ctx,
                     struct cli_inputs *stats);
/* The same, fn reading each opened input (name sanitised for messages; stats its to update);
 * fn returns false to stop. cli_read_one is cli_read_inputs's fn: the records one by one. */
typedef bool (*cli_file_fn)(FILE *f, const char *name, void *ctx, struct cli_inputs *stats);
void cli_read_files(char **files, int nfiles, cli_file_fn fn, void *ctx, struct cli_inputs *stats);
bool cli_read_one(FILE *f, const char *name, cli_record_fn fn, void *ctx, struct cli_inputs *stats);
int cli_exit_code(const struct cli_inputs *stats);
/* Inside a cli_record_fn: the text the record was read from (without its newline; valid for
 * the call), or NULL, for store_append_line. */
void cli_current_record(const char **line, size_t *len);

/* Writes JSON text to f. With ascii (JSON on a terminal, already dumped with
 * JSON_ENSURE_ASCII) DEL is written as \u007f too: jansson escapes every other control and
 * every non-ASCII character but leaves DEL raw. False on a write error. */
bool cli_write_json(const char *text, size_t len, bool ascii, FILE *f);
/* A json_dump_callback for a FILE* in ascii mode (cli_write_json with ascii). */
int cli_json_ascii_cb(const char *buffer, size_t size, void *file);

int cmd_decode(int argc, char **argv);
int cmd_tree(int argc, char **argv);
int cmd_cat(int argc, char **argv);
int cmd_peek(int argc, char **argv);
int cmd_queues(int argc, char **argv);
int cmd_journal(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_move(int argc, char **argv);
int cmd_delete(int argc, char **argv);
int cmd_groups(int argc, char **argv);
int cmd_follow(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* --filter EXPR of the reading commands (cmd_decode.c): the compiled filter, or NULL after
 * "dlqx CMD: --filter: why" on stderr (the caller exits 2). */
struct filter *cli_filter_compile(const char *cmd, const char *expr);
/* argv[*i] as `--filter EXPR` / `--filter=EXPR`: 0 when it is another argument, 1 when *f is
 * the new filter (the old one freed; *i past the expression), -1 after reporting an error (*f
 * freed and NULL; the caller exits 2). */
int cli_filter_option(const char *cmd, int argc, char **argv, int *i, struct filter **f);

/* The output of decode (cmd_decode.c), which follow shares: a decoded message as one JSON
 * object per line (the decode record with its fingerprint and group) or a sanitised table
 * row. cli_decode_setup fills o (ascii: 1 --ascii, 0 --utf8, -1 ASCII on a terminal); the
 * caller sb_frees o->line. A writer on another thread than the main one has a memo and a
 * sink of its own (decode_par.c): the program's memo and stdout are the main thread's. */
enum cli_format { CLI_FORMAT_JSON, CLI_FORMAT_TABLE };
struct decode_memo; /* the groups of the last messages, remembered (cmd_decode.c) */
struct cli_decode_out {
    enum cli_format format;
    size_t json_flags;
    unsigned san_flags;
    int64_t now_ms; /* for ages */
    struct strbuf line;
    struct decode_memo *memo; /* NULL: the program's own */
    struct strbuf *sink;      /* non-NULL: the output is appended to it, not written to stdout */
};
struct decoded;
void cli_decode_setup(struct cli_decode_out *o, enum cli_format format, int ascii);
void cli_decode_header(struct cli_decode_out *o);
void cli_decode_write(struct cli_decode_out *o, const struct decoded *d);
/* m decoded and written as decode writes it without --filter. */
void cli_decode_one(struct cli_decode_out *o, const struct message *m);
struct decode_memo *cli_decode_memo_new(void);
void cli_decode_memo_free(struct decode_memo *m);

/* Writes s to stdout and fails the program's exit status on error (EPIPE included). */
bool cli_flush_stdout(void);

#endif
