/*
 * What the tree tests share (test_tree.c, test_tree_render.c, and the treeview tests through
 * treeview_testutil.h): forests built from rows of C strings, a node looked up by id, and the
 * rendered text compared with a golden string.
 */
#ifndef DLQX_TREE_TESTUTIL_H
#define DLQX_TREE_TESTUTIL_H

#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tree.h"
#include "util.h"

/* A message as three C strings: correlation, id, causation ("" = none). */
struct row {
    const char *corr, *id, *cause;
};

/* A span over a C string (its NUL not included). */
struct tree_span span_c(const char *s);

/* Builds from rows; the tree_msg array is freed right away, since the forest must not
 * keep it (the strings are literals and outlive it). */
void build_rows(struct forest *f, const struct row *rows, size_t n);

/* The only (or first) node with this id in this group; fails when there is none. */
uint32_t node_of(const struct forest *f, const char *corr, const char *id);

/* tree_render's text as a C string (the caller frees it). */
char *render_str(const struct forest *f, unsigned flags);

/* The rendered text is exactly want; both are printed when it is not. */
void assert_render(const struct forest *f, unsigned flags, const char *want);

#endif
