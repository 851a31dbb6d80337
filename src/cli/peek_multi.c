/*
 * peek_multi: several queues peeked at once (peek_multi.h).
 *
 * One connection per queue, not one connection with a channel per queue: rabbitmq-c reads the
 * frames of a connection in one place (amqp_consume_message returns the next delivery of any
 * channel), and a peek drops deliveries that are not its own channel's (docs/peek.md), so two
 * peeks sharing a connection would throw away each other's messages; its connection state is
 * not safe to use from two threads either. A thread per queue reads its own socket, so a queue
 * that pauses does not hold up the others: the rate is the broker's.
 *
 * The threads share nothing but the stop flag and the counters (atomics), and stderr. The
 * main thread catches SIGINT, SIGTERM and SIGHUP (the workers block them), draws the progress
 * of all and sets every job's stop flag on a signal: each peek gives its messages back.
 */
#include "peek_multi.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "peek_job.h"
#include "sanitize.h"
#include "stopsig.h"

/* A file name's limit (NAME_MAX is 255), with room for the suffix and safefile's temporary
 * and .partial names. */
#define NAME_LEN_MAX 200

char *peek_multi_file_name(const char *queue, const char *suffix)
{
    static const char hex[] = "0123456789ABCDEF";
    struct strbuf sb;
    sb_init(&sb);
    for (const unsigned char *s = (const unsigned char *)queue; *s; s++) {
        unsigned char ch = *s;
        bool plain = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                     (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' ||
                     (ch == '.' && s != (const unsigned char *)queue);
        if (plain) {
            sb_addc(&sb, (char)ch);
        } else {
            sb_addc(&sb, '%');
            sb_addc(&sb, hex[ch >> 4]);
            sb_addc(&sb, hex[ch & 15]);
        }
    }
    if (sb.len == 0 || sb.len > NAME_LEN_MAX) {
        sb_free(&sb);
        return NULL;
    }
    sb_adds(&sb, suffix);
    return sb_detach(&sb, NULL);
}

struct worker {
    struct peek_job *j;
    pthread_t thread;
    bool started;
    _Atomic int done;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    peek_job_run(w->j, &w->j->stop);
    atomic_store(&w->done, 1);
    return NULL;
}

/* The directory: made when it is not there; anything but a directory is refused. */
static bool dir_ready(const char *dir)
{
    struct stat st;
    if (lstat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return true;
        san_eprintf("dlqx peek: %s is not a directory (with several queues -o names the "
                    "directory their snapshots are written to)\n",
                    dir);
        return false;
    }
    if (errno == ENOENT && mkdir(dir, 0700) == 0)
        return true;
    san_eprintf("dlqx peek: cannot make the directory %s: %s\n", dir, strerror(errno));
    return false;
}

static char *path_in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = xmalloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* Checked before anything is connected to: the names, the directory. */
static bool usage_ok(const struct peek_multi_opts *mo)
{
    if (!mo->dir || strcmp(mo->dir, "-") == 0) {
        san_eprintf("dlqx peek: several queues need -o DIR: each is written to DIR/QUEUE.jsonl\n");
        return false;
    }
    if (mo->report_file) {
        san_eprintf("dlqx peek: with several queues each report is written as "
                    "DIR/QUEUE.report.json (no --report)\n");
        return false;
    }
    for (size_t i = 0; i < mo->nq; i++) {
        for (size_t k = 0; k < i; k++)
            if (strcmp(mo->queues[i], mo->queues[k]) == 0) {
                san_eprintf("dlqx peek: %s is named twice\n", mo->queues[i]);
                return false;
            }
        char *f = peek_multi_file_name(mo->queues[i], ".jsonl");
        if (!f) {
            san_eprintf("dlqx peek: the queue name %s is too long for a file name\n",
                        mo->queues[i]);
            return false;
        }
        free(f);
    }
    return true;
}

static void show_progress(struct peek_job *jobs, size_t nq, double t0)
{
    unsigned long long done = 0, total = 0;
    for (size_t i = 0; i < nq; i++) {
        done += atomic_load(&jobs[i].done);
        total += atomic_load(&jobs[i].total);
    }
    fprintf(stderr, "\rdlqx: peek: %zu queues: %llu / %llu (%.0f s)", nq, done, total,
            clock_mono_s() - t0);
}

/* Runs the started jobs' threads until all end; a signal stops them all. */
static void run_all(struct peek_job *jobs, struct worker *ws, size_t nq)
{
    bool tty = isatty(STDERR_FILENO) != 0;
    double t0 = clock_mono_s();
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGHUP);
    stopsig_catch();
    pthread_sigmask(SIG_BLOCK, &block, &old);
    for (size_t i = 0; i < nq; i++) {
        ws[i].j = &jobs[i];
        if (jobs[i].rc != EXIT_OK)
            continue;
        if (pthread_create(&ws[i].thread, NULL, work, &ws[i]) != 0) {
            jobs[i].rc = EXIT_OSERR;
            san_eprintf("dlqx peek: %s: cannot start a thread\n", jobs[i].queue);
            continue;
        }
        ws[i].started = true;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    bool said = false;
    for (;;) {
        bool all = true;
        for (size_t i = 0; i < nq; i++)
            all = all && (!ws[i].started || atomic_load(&ws[i].done));
        if (all)
            break;
        if (stopsig_caught() && !said) {
            said = true;
            for (size_t i = 0; i < nq; i++)
                atomic_store(&jobs[i].stop, 1);
            if (tty)
                fputc('\n', stderr);
            san_eprintf("dlqx peek: stopping: every queue's messages are given back\n");
        }
        if (tty)
            show_progress(jobs, nq, t0);
        struct timespec ts = {0, 100000000L};
        nanosleep(&ts, NULL);
    }
    for (size_t i = 0; i < nq; i++)
        if (ws[i].started)
            pthread_join(ws[i].thread, NULL);
    if (tty)
        fputc('\n', stderr);
    stopsig_release();
}

int peek_multi(const struct broker_opts *b, const struct peek_multi_opts *mo)
{
    if (!usage_ok(mo))
        return EXIT_USAGE;
    if (!dir_ready(mo->dir))
        return EXIT_IOERR;
    size_t nq = mo->nq;
    struct peek_job *jobs = xcalloc(nq, sizeof *jobs);
    struct worker *ws = xcalloc(nq, sizeof *ws);
    char **paths = xcalloc(2 * nq, sizeof *paths);
    double t0 = clock_mono_s();
    /* Each queue is set up in turn (its connection, what the management API knows, its
     * files, its count and plan); a queue that cannot be is reported and left out. */
    for (size_t i = 0; i < nq; i++) {
        struct peek_job *j = &jobs[i];
        peek_job_init(j, mo->queues[i], mo->po);
        char *snap = peek_multi_file_name(j->queue, ".jsonl");
        char *rep = peek_multi_file_name(j->queue, ".report.json");
        paths[2 * i] = path_in(mo->dir, snap);
        paths[2 * i + 1] = path_in(mo->dir, rep);
        free(snap);
        free(rep);
        j->outfile = paths[2 * i];
        j->report_file = paths[2 * i + 1];
        if (peek_job_connect(j, b, mo->type_given, mo->limit_given, mo->dlx_given) &&
            peek_job_files(j))
            peek_job_plan(j, b);
    }
    run_all(jobs, ws, nq);
    int rc = EXIT_OK;
    size_t complete = 0;
    for (size_t i = 0; i < nq; i++) {
        struct peek_job *j = &jobs[i];
        if (ws[i].started)
            peek_job_summary(j);
        int qrc = peek_job_close(j);
        complete += qrc == EXIT_OK;
        if (qrc > rc)
            rc = qrc;
    }
    san_eprintf("dlqx peek: %zu queues at once in %.2f s: %zu complete, %zu not (exit %d)\n", nq,
                clock_mono_s() - t0, complete, nq - complete, rc);
    for (size_t i = 0; i < 2 * nq; i++)
        free(paths[i]);
    free(paths);
    free(ws);
    free(jobs);
    return rc;
}
