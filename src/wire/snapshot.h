/*
 * snapshot: the project's own file format — JSON Lines, one message per line, lossless
 * (docs/snapshot-format.md). The reader reports a malformed line with its line number and
 * goes on with the next one; it never stops a whole file for one bad record.
 *
 * Ownership: snapshot_reader_open borrows the FILE (the caller closes it). Messages read are
 * owned by the caller (message_free).
 */
#ifndef DLQX_SNAPSHOT_H
#define DLQX_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "message.h"
#include "status.h"
#include "util.h"

#define SNAPSHOT_VERSION 1

/* The record size limit: a line longer than this is not read into memory but reported
 * (SNAP_BAD_RECORD, ST_ERANGE, with its size) and skipped, and the next line is read.
 * 64 MiB unless DLQX_MAX_RECORD or --max-record-size (snapshot_set_max_record) says
 * otherwise; at most SNAPSHOT_MAX_RECORD_MAX (the store keeps a record's length in 32 bits). */
#define SNAPSHOT_MAX_RECORD_DEFAULT ((size_t)64 << 20)
#define SNAPSHOT_MAX_RECORD_MAX ((size_t)UINT32_MAX - 1)
/* The limit readers opened from now on use: the last snapshot_set_max_record, else
 * DLQX_MAX_RECORD when it is a valid size, else the default. */
size_t snapshot_max_record(void);
/* Whether DLQX_MAX_RECORD is unset, empty or a size; else false with the sentence in err
 * (every reader of files says it and stops before reading: exit 2). */
bool snapshot_max_record_env_ok(struct error *err);
void snapshot_set_max_record(size_t n);
/* A size: digits with an optional K, M or G (binary: KiB, MiB, GiB; "64M", "1G", "65536"),
 * from 1 to SNAPSHOT_MAX_RECORD_MAX. */
bool snapshot_parse_size(const char *s, size_t *out);

enum snapshot_rc {
    SNAP_RECORD, /* *out holds a message */
    SNAP_EOF,
    SNAP_BAD_RECORD, /* this line is malformed, over the record size limit (ST_ERANGE) or
                        could not be held for lack of memory (ST_ENOMEM): err says why, with
                        FILE:LINE; reading may go on */
    SNAP_IO_ERROR,   /* the file cannot be read further */
};

/* The reader takes the file in blocks of this size (read(2) on a pipe or a terminal, so that
 * a record is read as soon as its line has come; fread otherwise) and splits the lines in
 * place. */
#define SNAPSHOT_READ_BLOCK ((size_t)256 << 10)

struct snapshot_reader {
    FILE *f;
    const char *name; /* borrowed, for messages */
    long line;        /* number of the line last read, from 1 */
    char *buf;        /* the block: bytes [pos, end) are read and not yet split */
    size_t cap, pos, end;
    bool eof, failed;
    int fd;           /* >= 0: read(2) on it (a pipe or a terminal); -1: fread */
    const char *last; /* the text of the record last read (in buf), without its newline */
    size_t last_len;
    uint64_t last_offset; /* where last starts in the file (of a regular file read from its
                             start: the store points its records there) */
    uint64_t base;        /* the file offset of buf[0] */
    size_t max_record;    /* the record size limit (snapshot_max_record() when opened) */
};

void snapshot_reader_open(struct snapshot_reader *r, FILE *f, const char *name);
void snapshot_reader_close(struct snapshot_reader *r);
/* Reads the next record; blank lines are skipped. out is initialised by this call. */
enum snapshot_rc snapshot_read(struct snapshot_reader *r, struct message *out, struct error *err);
/* snapshot_read without the parse: the next record's line (blank lines skipped, a BOM and the
 * CR before a newline taken off), *line in the reader's block (NUL after it, valid until the
 * next call), r->line, last, last_len and last_offset set. SNAP_BAD_RECORD only for a line
 * over the limit or out of memory; a malformed one is the parse's to find
 * (snapshot_parse_line, whose error snapshot_read prefixes with "NAME:LINE: "). */
enum snapshot_rc snapshot_read_line(struct snapshot_reader *r, const char **line, size_t *len,
                                    struct error *err);

/* One line of JSON (without the newline) into a message: the fast path (snapshot_fast.h)
 * when it is sure, else jansson (snapshot_parse_jansson); the message, or the error, is the
 * same either way. */
enum status snapshot_parse_line(const char *line, size_t len, struct message *out,
                                struct error *err);
/* The same through jansson alone: the reference the fast path is held to. */
enum status snapshot_parse_jansson(const char *line, size_t len, struct message *out,
                                   struct error *err);
enum status snapshot_from_json(const json_t *j, struct message *out, struct error *err);
/* The message as a JSON object (new reference), keys in the documented order. */
json_t *snapshot_to_json(const struct message *m);
/* The record's "properties" object alone (new reference). */
json_t *snapshot_props_to_json(const struct props *props);
/* snapshot_props_to_json's compact dump written directly; false (nothing appended) when a
 * value needs more than a string or an integer (the caller dumps the tree then). */
struct strbuf;
bool snapshot_props_write(struct strbuf *out, const struct props *props);
/* Appends the record's line, with its newline. */
void snapshot_format(const struct message *m, struct strbuf *out);
enum status snapshot_write(FILE *f, const struct message *m, struct error *err);

/* The writer held to the reader, for tests and fuzz harnesses (wire -> snapshot -> read):
 * writes m as a record into line (reset first; it holds the record for a report), reads it
 * back with snapshot_parse_line and compares with message_equal (kind-exact, ordered, bytes
 * and float bits exact). ST_OK when the record reads back as the same message; otherwise err
 * says which step failed. m can come from anywhere: htable_decode_wire of a broker's table,
 * a record read, or a value built by hand. */
enum status snapshot_round_trip(const struct message *m, struct strbuf *line, struct error *err);

#endif
