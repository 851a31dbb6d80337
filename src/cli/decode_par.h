/*
 * decode_par: `dlqx decode` (without --filter) on worker threads. One worker at a time takes
 * the next lines of the input (the reader is sequential); each parses and decodes its own
 * batch into text, with a group memo of its own; the main thread writes the batches in file
 * order, each record's text and each malformed record's message where the serial path would
 * have written it. The output, the messages and the exit code are the serial path's.
 *
 * Ownership: decode_par_new borrows o (the main thread's decode output: format and clock)
 * until decode_par_free; each file's workers are joined before decode_par_file returns.
 */
#ifndef DLQX_CLI_DECODE_PAR_H
#define DLQX_CLI_DECODE_PAR_H

#include <stdbool.h>
#include <stdio.h>

#include "cli.h"

struct decode_par;

/* The number of workers to use: DLQX_THREADS if set (1: none, the serial path), else the
 * CPUs online; at most DECODE_PAR_MAX. -1 (said on stderr) when DLQX_THREADS is not a number
 * from 1 to DECODE_PAR_MAX. */
#define DECODE_PAR_MAX 8
int decode_par_workers(void);
/* workers >= 2; fallback reads a file serially when no thread can be had (with fallback_ctx). */
struct decode_par *decode_par_new(const struct cli_decode_out *o, int workers,
                                  cli_record_fn fallback, void *fallback_ctx);
/* A cli_file_fn (ctx: the decode_par): false after a write error on stdout. */
bool decode_par_file(FILE *f, const char *name, void *ctx, struct cli_inputs *stats);
void decode_par_free(struct decode_par *p);

#endif
