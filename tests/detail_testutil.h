/*
 * What the detail tests share (test_detail.c, test_detail_safe.c): the incident snapshot
 * loaded as the suite's state, rendering a record's detail to text at a fixed now, a
 * line-by-line text comparison, and the check that a rendered line holds nothing a
 * terminal acts on.
 */
#ifndef DLQX_DETAIL_TESTUTIL_H
#define DLQX_DETAIL_TESTUTIL_H

#include "testutil.h"

#include <stdbool.h>

#include "detail.h"
#include "message.h"

#define NOW 1767330000000LL

struct sample {
    struct message *m;
    size_t n;
};

/* Every record of a snapshot fixture, and their release. */
struct sample load(const char *name);
void unload(struct sample *s);
/* The suite's state: snapshots/incident.jsonl. */
int detail_setup(void **state);
int detail_teardown(void **state);
/* Record i of the suite's state. */
const struct message *record(void **state, size_t i);
/* A UTF-8 locale, for the widths (the C library's when it has none of the usual names). */
void detail_locale(void);

/* The detail's text at NOW: every line (n_sections 0), or only the given sections' lines
 * (without the blank line that separates a section from the next). A new string. */
char *render(const struct message *m, unsigned flags, int wrap, const int *sections,
             size_t n_sections);
/* Compares line by line, so that a failure names the first line that differs. */
void assert_text(const char *got, const char *want);
/* One snapshot line as a message. */
struct message parse(const char *line);

/* Nothing a terminal acts on: valid UTF-8, no C0, DEL, C1, bidi control or line separator. */
void assert_line_safe(const struct detail_line *l, bool ascii, size_t rec);
/* Some line of the doc contains needle. */
bool doc_has(const struct detail_doc *doc, const char *needle);

#endif
