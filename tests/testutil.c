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

struct bytes test_read_fixture(const char *relpath)
{
    const char *path = test_fixture_path(relpath);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open fixture %s", path);
    struct strbuf sb;
    sb_init(&sb);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        sb_add(&sb, buf, n);
    fclose(f);
    size_t len;
    char *data = sb_detach(&sb, &len);
    struct bytes b = {len, (unsigned char *)data};
    return b;
}
