/*
 * replay_cli: what `dlqx replay`, `dlqx move` and `dlqx delete` share — the parsed command
 * (no globals), the selection of dead letters, the plan read from a snapshot, and printing
 * the plan (the diff, the target and whether it routes) before anything is sent.
 */
#ifndef DLQX_REPLAY_CLI_H
#define DLQX_REPLAY_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "broker_opts.h"
#include "envelope.h"
#include "filter.h"
#include "replay.h"
#include "replay_setup.h"
#include "restamp.h"

#define RCLI_MAX_IDS 256
#define RCLI_MAX_WITH 64

struct rcli {
    const char *cmd; /* "replay", "move", "delete" */
    struct broker_opts b;
    const char *queue;
    enum restamp_mode mode;
    bool is_delete;
    /* selection */
    const char *ids[RCLI_MAX_IDS];
    size_t n_ids;
    const char *filter_expr;
    char *filter_store; /* owned: --group's expression */
    struct filter *filter;
    bool all;
    /* the copy */
    struct env_change changes[RCLI_MAX_WITH];
    struct hval change_vals[RCLI_MAX_WITH];
    size_t n_changes;
    const char *to_exchange, *to_routing_key;
    char *to_store; /* owned: the --to value split in two */
    const char *body_file;
    struct bytes body; /* replacement body (owned), when has_body */
    bool has_body, edit;
    bool bypass, keep_error;
    bool strip_fault;      /* strip the framework's fault headers where its own tool keeps them */
    const char *ack_queue; /* NServiceBus: ServiceControl.Retry.AcknowledgementQueue; NULL: none */
    /* how */
    bool dry_run, yes, json, force;
    bool create_queue;   /* move: declare the target queue when it does not exist */
    bool ignore_pending; /* go on although the journal holds pending intents for the queue */
    double rate;
    struct replay_ramp_step ramp[REPLAY_MAX_RAMP]; /* --ramp */
    size_t n_ramp;
    uint32_t window;
    uint32_t attempts; /* --attempts: 0 = REPLAY_DEFAULT_ATTEMPTS; 1: no failover */
    int canary_ms;
    const char *snapshot;
    const char *journal_path;
    enum queue_kind kind;
    int64_t delivery_limit;
    bool type_given, limit_given;
    int64_t now_ms;
    bool no_broker; /* a dry run with no broker given: routes are not checked */
};

/* Whether m (decoded as d) is selected by ids / filter / --all. */
bool rcli_selected(const struct rcli *x, const struct message *m, const struct decoded *d);

/* The restamp options for this command and dead letter. */
void rcli_restamp_opts(const struct rcli *x, struct restamp_opts *ro);

/* Builds the copy of one dead letter (or explains why there is none): ST_OK or an error
 * whose message is the reason it is kept (restamp refuses a copy back onto the DLQ). */
enum status rcli_build(const struct rcli *x, const struct decoded *d, struct outgoing *out,
                       struct error *err);

/* ---- the plan from a snapshot ---------------------------------------------------------- */

struct rcli_target {
    char *exchange, *routing_key;
    uint64_t n;
    enum route_check route;
    char route_text[300];
};

struct rcli_plan {
    struct replay_plan *find; /* what the run looks for: id + body digest */
    uint64_t selected;        /* records the selection chose */
    uint64_t sendable;        /* ... of which a copy can be built (or deletes) */
    struct rcli_target *targets;
    size_t n_targets;
    struct {
        char text[240];
        uint64_t n;
    } kept[8];
    size_t n_kept;
    struct message *examples; /* the first few selected dead letters, for the diffs */
    size_t n_examples;
    json_t *dry; /* --dry-run --json: one object per selected record (new reference) */
};

/* Reads the snapshot and works out the plan; false after reporting an error. */
bool rcli_plan_build(struct rcli *x, struct rcli_plan *p);
void rcli_plan_free(struct rcli_plan *p);
/* Checks each target's route on c (may be NULL: "not checked, no broker"). */
void rcli_plan_routes(struct rcli_plan *p, struct conn *c);
/* The plan as a person reads it (diffs of the examples, targets, routes, kept). */
void rcli_plan_print(const struct rcli *x, const struct rcli_plan *p, FILE *to);
/* One copy's diff, sanitized, two columns when width allows. */
void rcli_print_diff(const struct diff *d, FILE *to, int width);
/* The pass's report on standard error (or, with --json, standard output); the exit status. */
int rcli_report(const struct rcli *x, const struct replay_report *r, const struct rcli_plan *p,
                const char *journal);

/* ---- the journal's pending intents (journal_reconcile.c) ------------------------------- */

/* `dlqx journal --reconcile`: checks each pending intent (of runs whose id begins with
 * run_prefix, when given) on the broker b names, writes a resolution for each it can settle,
 * and says per message what it found and what to do. The exit code: 0 none left pending, 3
 * some are, or a broker or journal failure's. */
int rcli_reconcile(const char *jpath, struct broker_opts *b, const char *run_prefix);

#endif
