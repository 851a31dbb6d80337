/*
 * What the dialect suites share (test_dialect_*.c): the fixed now, a message from a snapshot
 * line or made by hand, one decoded, the dialect it is read as, and a replay or re-issue copy
 * built with the names of its headers checked.
 */
#ifndef DLQX_DIALECT_TESTUTIL_H
#define DLQX_DIALECT_TESTUTIL_H

#include "testutil.h"

#include <stdbool.h>

#include "decode.h"
#include "restamp.h"

#define NOW 1767330000000LL

/* A message and its decode, parsed from a snapshot line (dec: the line and the error printed
 * when it does not parse). */
struct dec {
    struct message m;
    struct decoded d;
};
void dec(struct dec *x, const char *line);
void dec_free(struct dec *x);
/* x decoded from line and its copy built into out (now NOW, the new id "new-id"): the status
 * restamp_build answers. */
enum status copy_of(const char *line, enum restamp_mode mode, struct dec *x, struct outgoing *out);

/* A new message from a snapshot line (fails on a bad one); the caller frees it (drop). */
struct message *msg_of(const char *line);
/* A new empty message in queue "error" with headers, read a second before NOW. */
struct message *msg(void);
/* A string header added. */
void hdr(struct message *m, const char *k, const char *v);
/* message_free and free. */
void drop(struct message *m);
/* Decodes m (dropped) and fails unless it is read as dialect with that confidence. */
void recog(struct message *m, const char *dialect, int confidence);

/* The copy restamp_build makes of a snapshot line's dead letter (now NOW, the new id
 * 11111111-2222-4333-8444-555555555555); build_copy fails when it is refused. */
struct built {
    struct message *m;
    struct decoded d;
    struct outgoing out;
    struct error err;
    enum status st;
};
void build_copy(struct built *b, const char *line, enum restamp_mode mode, bool strip);
void built_free(struct built *b);
/* Fails unless t's header names are exactly names (NULL-terminated), in order. */
void expect_names(const struct htable *t, const char *const *names);

#endif
