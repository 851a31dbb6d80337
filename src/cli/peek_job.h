/*
 * peek_job: one queue's peek as `dlqx peek` runs it — its snapshot file (and report), the plan
 * said before it starts, the summary and the exit code after — shared by the peek of one queue
 * (cmd_peek.c) and of several at once (peek_multi.c), so that each queue of several gets
 * exactly what a peek of it alone gets.
 *
 * Ownership: the struct is the caller's (zeroed, then peek_job_init); the connection in c is
 * the job's from peek_job_connect until peek_job_close, which also commits or keeps or
 * discards the files. queue, outfile and report_file are borrowed.
 */
#ifndef DLQX_PEEK_JOB_H
#define DLQX_PEEK_JOB_H

#include <stdbool.h>
#include <stdio.h>

#include "broker_opts.h"
#include "peek.h"
#include "safefile.h"

struct peek_job {
    const char *queue;
    const char *outfile;     /* NULL: standard output */
    const char *report_file; /* NULL: none */
    struct peek_opts po;
    struct conn *c;
    /* the sink's: */
    FILE *out; /* the snapshot's file, or a spool for a stream (failover must forget) */
    bool write_failed;
    int write_errno;
    bool show_progress; /* "\rdlqx: peek: N / M" on stderr (one queue on a terminal) */
    struct strbuf line;
    /* set by peek_job_progress for another thread to read (several queues): */
    _Atomic unsigned long long done, total;
    _Atomic int stop;
    /* the files: */
    struct safefile out_sf, rep_sf;
    bool files_open;
    FILE *spool;
    bool peek_ran;
    struct peek_report rep;
    enum conn_err kind;
    struct error err;
    int rc;
};

/* The job for queue with the options in *po (copied; the sink, progress and failover are the
 * job's). */
void peek_job_init(struct peek_job *j, const char *queue, const struct peek_opts *po);
/* Connects (broker_connect) and asks the management API about the queue (broker_queue_info);
 * false with j->rc set when it cannot. */
bool peek_job_connect(struct peek_job *j, const struct broker_opts *b, bool type_given,
                      bool limit_given, bool dlx_given);
/* Opens the snapshot's file (and the report's) before anything is read; false with j->rc set
 * (said on stderr) when dlqx will not write one. */
bool peek_job_files(struct peek_job *j);
/* Counts the queue and says the plan on stderr; false with j->rc set (a missing queue: with
 * the close names) when it cannot. */
bool peek_job_plan(struct peek_job *j, const struct broker_opts *b);
/* The peek itself, start to finish (peek_start/step/finish); stop (may be NULL) is polled
 * between steps and cancels the peek when set. Sets j->rc when the peek could not start. */
void peek_job_run(struct peek_job *j, _Atomic int *stop);
/* After peek_job_run: the summary on stderr and j->rc from how the peek ended. */
void peek_job_summary(struct peek_job *j);
/* Writes the report, commits the snapshot (or keeps it as FILE.partial, or discards it),
 * closes the connection; returns the job's exit code. */
int peek_job_close(struct peek_job *j);

#endif
