/*
 * testutil: fixture loading for the cmocka suites.
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>

#include "util.h"

const char *test_fixture_path(const char *relpath)
{
    static char path[4096];
    const char *dir = getenv("DLQX_FIXTURES");
    if (!dir || !*dir)
        dir = FIXTURES_DIR;
    snprintf(path, sizeof path, "%s/%s", dir, relpath);
    return path;
}

struct bytes test_read_file(const char *path)
{
    struct bytes b;
    if (bytes_read_file(path, 0, &b) != 0)
        fail_msg("cannot read %s", path);
    return b;
}

struct bytes test_read_fixture(const char *relpath)
{
    return test_read_file(test_fixture_path(relpath));
}
