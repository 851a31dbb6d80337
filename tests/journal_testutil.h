/*
 * What the journal tests share (test_journal.c, test_journal_writers.c): a private temporary
 * directory per run (setup, teardown) and paths in it, a journal opened or a status checked
 * with the error shown, raw bytes appended, and an intent written.
 */
#ifndef DLQX_JOURNAL_TESTUTIL_H
#define DLQX_JOURNAL_TESTUTIL_H

#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hval_json.h"
#include "journal.h"
#include "util.h"

/* This run's temporary directory (made by setup, removed by teardown). */
extern char tmpdir[64];

/* The group's setup: a fresh temporary directory, and DLQX_NOW fixed. */
int setup(void **state);

/* The group's teardown: the temporary directory removed with all in it. */
int teardown(void **state);

/* rel in the temporary directory (the caller frees it). */
char *tmp_path(const char *rel);

/* The journal at path, opened; fails the test with the error when it cannot be. */
struct journal *open_ok(const char *path);

/* st is ST_OK; fails the test with err's message when it is not. */
void ok(enum status st, const struct error *err);

/* n bytes appended to the file as they are (a torn line, another writer's bytes). */
void append_raw(const char *path, const char *s, size_t n);

/* An intent of run, number seq, for the dead letter old_id, appended to j. */
void intent(struct journal *j, const char *run, uint64_t seq, const char *old_id);

#endif
