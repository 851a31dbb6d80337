/*
 * store: the snapshot store — a million dead letters in bounded memory.
 *
 * Every message appended is decoded once into a compact index entry (id, type, correlation,
 * causation, queue, error, attempt, first-seen, dialect, acceptance, body size) that views
 * can sort, filter and draw without touching the message again. The full record (its
 * snapshot line, lossless) is kept in memory up to a budget and spilled past it to a
 * temporary file that is unlinked at once, so nothing is left behind if dlqx dies. A record
 * read from a regular file is not copied at all: the store keeps where it is in that file.
 * Ids in the canonical UUID form are kept in 16 bytes; types and queues are interned.
 *
 * Ownership: store_new returns a store the caller frees with store_free. Strings returned by
 * store_text are valid until the next call that takes the same buffer.
 */
#ifndef DLQX_STORE_H
#define DLQX_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "envelope.h"
#include "message.h"
#include "status.h"
#include "util.h"

/* A string kept by the store: an offset into its arena. STORE_NONE: empty. */
typedef uint32_t store_ref;
#define STORE_NONE UINT32_MAX

enum store_entry_flag {
    SE_ACCEPTED = 1u << 0,
    SE_REDELIVERED = 1u << 1,
    SE_ERROR_FROM_BROKER = 1u << 2,
    SE_ID_DEFAULTED = 1u << 3,
    SE_IN_FILE = 1u << 4,       /* the record lives in the spill file */
    SE_DEAD_AT_KNOWN = 1u << 5, /* dead_at_ms was read off the message */
};

struct store_entry {
    uint64_t offset; /* of the record (memory or spill file) */
    uint32_t length; /* of the record, newline included */
    store_ref id, type, correlation, causation, queue, error;
    store_ref error_type; /* the exception's type (interned) */
    int64_t first_seen_ms;
    int64_t fetched_at_ms;
    int64_t dead_at_ms; /* when it failed: the dialect's failure time, else the newest x-death
                           time; 0 unknown (AceMQ set-aside copies carry neither) */
    int32_t attempt;
    uint32_t body_size;
    uint8_t dialect; /* its index in the dialects' table (dialect_at) */
    uint8_t flags;   /* enum store_entry_flag */
    uint16_t reject; /* index into the reject reasons (0: none) */
    uint8_t file;    /* 0: the record is the store's (memory or spill file); else it is in
                        the file store_file_add numbered so */
};

struct store;

/* memory_budget: bytes of records kept in memory before spilling (0: the default, 64 MiB).
 * spill_dir: where the temporary file goes (NULL: $TMPDIR or /tmp). */
enum status store_new(size_t memory_budget, const char *spill_dir, struct store **out,
                      struct error *err);
void store_free(struct store *s);

/* Decodes and keeps m (copied; the caller keeps m). */
enum status store_append(struct store *s, const struct message *m, int64_t now_ms,
                         struct error *err);
/* The same, keeping `line` (the message's record as read from a snapshot file, without its
 * newline) as its record instead of writing it again: for loading files fast. */
enum status store_append_line(struct store *s, const struct message *m, const char *line,
                              size_t len, int64_t now_ms, struct error *err);
/* A regular file the records of store_append_at are in: fd is duplicated (the store closes its
 * copy). Returns the file's number, 0 when it cannot be used (not a regular file, too many
 * files, no descriptor left): the caller appends with store_append_line then. The file must
 * not change while the store lives; if it does, store_get reports what it reads back. */
unsigned store_file_add(struct store *s, int fd);
/* store_append_line for a record that is line[0, len) and at `offset` in file `file` (from
 * store_file_add): only where it is is kept. */
enum status store_append_at(struct store *s, const struct message *m, unsigned file,
                            uint64_t offset, const char *line, size_t len, int64_t now_ms,
                            struct error *err);
/* What the store keeps of a message, decoded apart from the store: store_prepare touches no
 * store, so a worker thread can decode the next messages while the store takes these. */
enum { SP_ID, SP_TYPE, SP_CORRELATION, SP_CAUSATION, SP_QUEUE, SP_ERROR, SP_ERROR_TYPE, SP_N };
struct store_prep {
    uint32_t off[SP_N], len[SP_N]; /* the texts, in the strbuf given to store_prepare */
    bool correlation_is_id;
    uint8_t dialect, flags;
    int32_t attempt;
    uint32_t body_size;
    int64_t first_seen_ms, fetched_at_ms, dead_at_ms;
    const char *reject; /* a reason code (static), NULL when accepted */
};
/* Decodes m; its texts are appended to texts (each cut to STORE_TEXT_MAX - 1 bytes). */
void store_prepare(const struct message *m, int64_t now_ms, struct store_prep *p,
                   struct strbuf *texts);
/* store_prepare always by a whole decode (decode_message_ex), not reading an AceMQ message's
 * fields straight from its headers: the same answers (tests and fuzz_dialects hold the two
 * to each other). */
void store_prepare_decoded(const struct message *m, int64_t now_ms, struct store_prep *p,
                           struct strbuf *texts);
/* Whether store_prepare and store_prepare_decoded prepare m the same (for tests). */
bool store_prepare_agrees(const struct message *m, int64_t now_ms);
/* Keeps a prepared message whose record is len bytes (without the newline) at offset in file
 * (from store_file_add). texts: the buffer store_prepare filled. */
enum status store_append_prepared(struct store *s, const struct store_prep *p, const char *texts,
                                  unsigned file, uint64_t offset, uint32_t len, struct error *err);
size_t store_count(const struct store *s);
const struct store_entry *store_entry_at(const struct store *s, size_t i);

/* The text of a ref into buf (which must hold STORE_TEXT_MAX bytes); returns its length. */
#define STORE_TEXT_MAX 65536
size_t store_text(const struct store *s, store_ref r, char *buf);
/* The bytes of a ref kept as text, where they stay for the store's life (appends never move
 * them), *len their length; "" for STORE_NONE; NULL for an id kept as a UUID's 16 bytes
 * (store_text formats it). */
const unsigned char *store_text_view(const struct store *s, store_ref r, size_t *len);
/* Whether two refs hold the same text (cheap when both are interned or both UUIDs). */
bool store_text_eq(const struct store *s, store_ref a, store_ref b);
const char *store_reject_name(const struct store *s, uint16_t reject);

/* The full message back (a new message the caller frees). On failure *out is all zero and
 * owns nothing: message_free on it is harmless, and not calling it leaks nothing. */
enum status store_get(const struct store *s, size_t i, struct message *out, struct error *err);
/* Writes every record, in order, in the snapshot format. */
enum status store_write(const struct store *s, FILE *f, struct error *err);

/* Bytes the store holds in memory (index, arena, in-memory records), and on disk. */
size_t store_memory(const struct store *s);
uint64_t store_spilled(const struct store *s);

#endif
