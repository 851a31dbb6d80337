/*
 * peek_input: a live QUEUE as the input of a reading command (`dlqx groups QUEUE`, `dlqx report
 * QUEUE`): the queue is read as `dlqx peek QUEUE` reads it — every message given back, in order
 * — by a `dlqx peek` child whose snapshot comes through a pipe on our standard input; its
 * messages are on standard error and its exit status is the command's failure. The broker
 * options are parsed here and kept, with their values, for the child.
 *
 * Ownership: the argument vectors are borrowed (argv's strings); fwd is the caller's array of at
 * least argc pointers.
 */
#ifndef DLQX_PEEK_INPUT_H
#define DLQX_PEEK_INPUT_H

#include <sys/types.h>

#include "broker_opts.h"

/* The program the child runs: argv0 when it names a path (has a '/'), else /proc/self/exe.
 * main() gives it argv[0]: under a wrapper (valgrind) /proc/self/exe is the wrapper's tool,
 * not dlqx. */
void cli_peek_self(const char *argv0);
/* Starts `dlqx peek QUEUE FWD...` with its standard output on our standard input. The child's
 * pid, or -1 (the reason said, prefixed with "dlqx CMD: "). */
pid_t cli_peek_child(const char *cmd, const char *queue, char **fwd, int n_fwd);

/* A broker option at argv[*i]: taken into b, and kept with its value in fwd (the peek child's
 * arguments). An error is reported here. */
enum bopt_next cli_broker_arg(struct broker_opts *b, int argc, char **argv, int *i, char **fwd,
                              int *n_fwd);

/* Waits for the peek child after the input was read (closing standard input first, so that a
 * peek still writing stops): its exit status. */
int cli_peek_wait(pid_t pid);

#endif
