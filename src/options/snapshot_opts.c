/*
 * snapshot_opts: --max-record-size.
 */
#include "snapshot_opts.h"

#include <stddef.h>
#include <string.h>

#include "sanitize.h"
#include "snapshot.h"

int options_max_record(int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    static const char opt[] = "--max-record-size";
    size_t n = sizeof opt - 1;
    if (strncmp(a, opt, n) != 0 || (a[n] != '\0' && a[n] != '='))
        return 0;
    const char *v = a[n] == '=' ? a + n + 1 : (*i + 1 < argc ? argv[++*i] : NULL);
    size_t size;
    if (!v || !snapshot_parse_size(v, &size)) {
        san_eprintf("dlqx: --max-record-size takes a size: a number of bytes, or with K, M or G "
                    "(64M, 1G; at most 4G - 2)\n");
        return -1;
    }
    snapshot_set_max_record(size);
    return 1;
}
