/*
 * snapshot_opts: the option every reader of snapshot files shares (decode, tree, cat, groups
 * and the explorer's `open`): the record size limit. It sets the snapshot reader's limit, a
 * process-wide setting (snapshot_set_max_record); nothing is allocated.
 */
#ifndef DLQX_SNAPSHOT_OPTS_H
#define DLQX_SNAPSHOT_OPTS_H

/* --max-record-size SIZE (or =SIZE) at argv[*i]: sets the record size limit of every snapshot
 * reader and moves *i past its value. 1: it was that option; 0: it was not; -1: its value is
 * not a size (the error is printed: exit with EXIT_USAGE). */
int options_max_record(int argc, char **argv, int *i);

#endif
