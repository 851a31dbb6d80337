/*
 * peek_multi: `dlqx peek Q1 Q2 ... -o DIR`: several queues peeked at once, each on a connection
 * and channel of its own in a thread of its own, each into DIR/QUEUE.jsonl with its report
 * DIR/QUEUE.report.json — every queue exactly as a peek of it alone (peek_job.c).
 */
#ifndef DLQX_PEEK_MULTI_H
#define DLQX_PEEK_MULTI_H

#include <stdbool.h>
#include <stddef.h>

#include "broker_opts.h"
#include "peek.h"

struct peek_multi_opts {
    const char *const *queues; /* as given (more than one) */
    size_t nq;
    const char *dir;         /* -o: the directory (made, mode 0700, when it is not there) */
    const char *report_file; /* must be NULL: each queue's report is written in dir */
    const struct peek_opts *po;
    bool type_given, limit_given, dlx_given;
};

/* File name of a queue's snapshot in the directory: the name with every byte but
 * [A-Za-z0-9._-] (and a leading '.') as %XX, then suffix. NULL when it would be too long. */
char *peek_multi_file_name(const char *queue, const char *suffix);

/* Runs the peeks; the exit code is the highest of the queues' own. */
int peek_multi(const struct broker_opts *b, const struct peek_multi_opts *mo);

#endif
