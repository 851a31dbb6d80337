/*
 * replay_bench.h: what replay_bench.c shares with replay_rounds.c (the shovel rounds): the
 * configuration, the bench's control connection, the names of a pass's queues, seeding, the
 * engine's pass and the checks after a pass. See replay_bench.c for the whole benchmark.
 *
 * Ownership: ctl() returns the bench's own connection (never closed by a caller); every
 * other function borrows what it is given. Any failure ends the process (die).
 */
#ifndef DLQX_REPLAY_BENCH_H
#define DLQX_REPLAY_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conn.h"
#include "restamp.h"

#define CTL_CH 1 /* declares, deletes, passive declares (replay_run checks on it too) */
#define MAX_WINDOWS 8

struct config {
    uint32_t count;
    uint32_t w1_count; /* (b)'s N; 0 = count */
    size_t size;
    uint32_t windows[MAX_WINDOWS];
    size_t n_windows;
    uint16_t prefetch; /* the baseline consumer's prefetch */
    const char *seed_bin;
    const char *journal_dir;
    bool keep_journal;
    bool run_a, run_b, run_c; /* --passes (for profiling one of them) */
    bool run_r;               /* the shovel rounds (--passes r) */
    uint32_t rounds;          /* --rounds: how many (default 3) */
    const char *shovel_uri;   /* --shovel-uri: the shovel's src-uri and dest-uri */
    uint32_t round_window;    /* --round-window: dlqx's window in the rounds (0: default) */
    double pass_limit_s;      /* > 0: an engine pass is cancelled after this long */
    bool progress;            /* print the engine's progress every 5 s */
};

/* A connection of its own for each measured pass (a pass that loses its connection leaves
 * the bench's own, which checks and cleans up, intact). */
struct broker {
    const char *url, *password;
};

struct names {
    char prefix[64];
    char src[96], dlq[96], dlx[96];
};

struct engine_result {
    double seconds, engine_seconds, cpu_s;
    double broker_s; /* the node's CPU seconds during replay_run alone (-1: unknown); the plan's
                        read of the whole DLQ before it is not counted */
    uint64_t done, unknown;
    uint64_t peak_active; /* the most copies read and not yet settled at once */
    uint32_t read_limit, read_consumers;
    bool cancelled, failed;
    char how[600];
    uint64_t journal_bytes;
};

struct conn *ctl(void);
void names_for(struct names *n, int pass);
void drop(struct conn *c, const struct names *n);
void seed(struct conn *c, const struct config *cfg, const struct names *n, uint32_t count);
struct engine_result engine_pass(struct conn *c, const struct broker *b, const struct names *nm,
                                 uint32_t n, uint32_t window, enum restamp_mode mode,
                                 const char *journal_path, const struct config *cfg);
void check_after(struct conn *c, const struct names *nm, uint32_t n, const char *what,
                 bool restamped);
void check_nothing_lost(struct conn *c, const struct names *nm, uint32_t n, uint32_t done,
                        uint32_t unknown, const char *what);

/* replay_floor.c: moves n messages from dlq to target as a bare pipelined client would
 * (prefetch window, confirms, acks with multiple; no journal); returns the seconds, *cpu the
 * client's CPU seconds. */
double floor_pass(const struct broker *b, const char *dlq, const char *target, uint32_t n,
                  uint32_t window, double *cpu);

/* replay_rounds.c: R rounds of the shovel, dlqx replay, dlqx move and the bare mover (the
 * order rotated each round), each on a fresh DLQ; prints each pass and the ratios; true if a pass
 * failed. */
bool shovel_rounds(const struct broker *brk, const char *jdir, const struct config *cfg, int *pass);

#endif
