/*
 * replay_testutil: what the replay engine's live tests share — dead letters built as the
 * libraries write them (AceMQ, BabelQueue, plain), a pass over a plan run as the CLI and the
 * explorer run one (with its journal, outcomes checked against the positions chosen), the
 * exact contents of a queue asserted in order, and a consumer in a child process that records
 * when each copy arrives at a target (for the pacing tests).
 */
#ifndef DLQX_REPLAY_TESTUTIL_H
#define DLQX_REPLAY_TESTUTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "brokerutil.h"
#include "replay.h"
#include "restamp.h"

/* The directory of the tests' journal (mkdtemp'd by main). */
extern char journal_dir[];
/* A BabelQueue dead letter and the body every redrive of it writes. */
extern const char BQ_DEAD[];
extern const char BQ_REPLAYED[];

/* A pass that takes its plan's dead letters (see sel_cb in replay_testutil.c). */
struct sel {
    struct replay_plan *plan;
    const char *dlq;
    enum restamp_mode mode;
    const char *to_exchange, *to_routing_key;
    bool is_delete;
    /* pacing */
    double rate;
    const struct replay_ramp_step *ramp;
    size_t n_ramp;
    /* fault injection */
    int kill_after_done;
    /* > 0: the pass is stepped (replay_step, 2 ms slices) and cancelled once this many are
     * done; pending_at_cancel then holds the journal's intents of the run without an outcome
     * at that moment (a new reference, the caller's), steps how many steps it took. */
    uint64_t cancel_after_done;
    json_t *pending_at_cancel;
    char run_id[37];
    int steps;
    struct conn *conn;
    uint64_t outcomes[4]; /* by enum journal_result */
    char last_reason[512];
    /* Each outcome names the position select saw, once: chosen[pos] 1 chosen, 2 settled. */
    unsigned char chosen[8192];
    unsigned bad_positions;
};

/* A consumer of a target queue in a child process (arrivals_start). */
struct arrivals {
    pid_t pid;
    int fd;
};

struct message acemq_dead(const char *id, const char *body);
struct message plain(const char *id, const char *body);
struct message bq_dead(void);
void plan_add_msg(struct replay_plan *p, const struct message *m);
struct replay_report run_plan(struct conn *c, struct sel *s, uint32_t window, int canary_ms);
void expect_queue_at(struct conn *c, const char *q, const struct message *want, size_t n, int line);
struct sel sel_for(const char *dlq, const char *exchange, const char *routing_key);
struct message *numbered(const char *prefix, size_t n);
void fresh(struct conn *c, const char *q);
struct arrivals arrivals_start(const char *q, size_t n);
size_t arrivals_end(struct arrivals a, double *t, size_t max);
/* How many of the gaps between t[from..to) are shorter than min (the first such in *at). The
 * times are taken at a consumer: on a loaded machine it can be descheduled and then read two
 * copies in one go, so one short gap says nothing of the sender's pace; two do. */
size_t short_gaps(const double *t, size_t from, size_t to, double min, size_t *at);
#define expect_queue(c, q, want, n) expect_queue_at(c, q, want, n, __LINE__)

#endif
