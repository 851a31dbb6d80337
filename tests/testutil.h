/*
 * testutil: helpers shared by the cmocka suites (cmocka's headers need the includes below
 * in this order).
 */
#ifndef DLQX_TESTUTIL_H
#define DLQX_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "bytes.h"

/* Reads a whole file; fails the test when it cannot. */
struct bytes test_read_file(const char *path);
/* Reads a whole file under the fixtures directory; fails the test when it cannot. */
struct bytes test_read_fixture(const char *relpath);
/* The absolute path of a fixture (static buffer). */
const char *test_fixture_path(const char *relpath);

#endif
