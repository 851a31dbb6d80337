/*
 * What the treeview tests share (test_treeview.c, test_treeview_scale.c) beyond the tree
 * tests' helpers (tree_testutil.h): one row's text as a C string.
 */
#ifndef DLQX_TREEVIEW_TESTUTIL_H
#define DLQX_TREEVIEW_TESTUTIL_H

#include "tree_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tree.h"
#include "treeview.h"
#include "util.h"

/* Row row's text as a C string (the caller frees it). */
char *row_str(const struct treeview *tv, size_t row);

#endif
