/*
 * cat: rewrite snapshot records in the canonical form dlqx writes (every type explicit), so a
 * hand-written record can be checked and normalised, and several files joined into one.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "sanitize.h"
#include "snapshot.h"

struct cat_ctx {
    bool write_failed;
};

static bool cat_record(struct message *m, bool *keep, void *vctx)
{
    struct cat_ctx *ctx = vctx;
    struct error err;
    if (snapshot_write(stdout, m, &err) != ST_OK) {
        ctx->write_failed = true;
        return false;
    }
    return true;
}

int cmd_cat(int argc, char **argv)
{
    int first = 1;
    for (; first < argc; first++) {
        if (strcmp(argv[first], "--") == 0) {
            first++;
            break;
        }
        if (argv[first][0] != '-' || strcmp(argv[first], "-") == 0)
            break;
        int mr = cli_max_record_option(argc, argv, &first);
        if (mr < 0)
            return EXIT_USAGE;
        if (mr > 0)
            continue;
        san_eprintf("dlqx cat: unknown option %s\n", argv[first]);
        return EXIT_USAGE;
    }
    struct cat_ctx ctx = {false};
    struct cli_inputs stats;
    cli_read_inputs(argv + first, argc - first, cat_record, &ctx, &stats);
    if (!cli_flush_stdout() || ctx.write_failed)
        return EXIT_IOERR;
    return cli_exit_code(&stats);
}
