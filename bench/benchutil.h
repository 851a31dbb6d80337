/*
 * benchutil: what the broker benchmarks (peek_bench, replay_bench) share: dying with one
 * line, this process's CPU time and peak RSS, checking a synchronous reply, a numeric
 * option, a queue's depth and a connection of the bench's own.
 *
 * Ownership: nothing here keeps state but the program name bench_set_name gives die() (a
 * string the caller keeps alive, normally a literal). bench_connect returns a connection the
 * caller closes with conn_close. die() never returns: it flushes stdout, prints
 * "NAME: error: ..." on stderr and exits with status 1.
 */
#ifndef DLQX_BENCHUTIL_H
#define DLQX_BENCHUTIL_H

#include <stdint.h>

#include <amqp.h>

#include "conn.h"

/* The name die() prints first (the benchmark's, e.g. "peek_bench"). */
void bench_set_name(const char *name);

void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

/* This process's CPU time (user + system): what the client itself spends, apart from the
 * broker and other tenants of the machine. */
double cpu_s(void);

/* This process's peak resident set size, in MB. */
double peak_rss_mb(void);

/* Dies (naming what) unless the last synchronous method on st had a normal reply. */
void check_rpc(amqp_connection_state_t st, const char *what);

/* The decimal number s given to option opt, from min to max; dies otherwise. */
unsigned long long number_arg(const char *opt, const char *s, unsigned long long min,
                              unsigned long long max);

/* How many messages queue holds ready (a passive declare on channel ch); dies on failure. */
uint32_t queue_depth(struct conn *c, amqp_channel_t ch, const char *queue);

/* A connection to url (name: what operators see; a 60 s timeout) with channel ch open. */
struct conn *bench_connect(const char *url, const char *password, const char *name,
                           amqp_channel_t ch);
/* The same for the broker of the environment scripts/broker writes (DLQX_URL, the password
 * from DLQX_PASSWORD_FILE, which is wiped once used); dies when either is missing. */
struct conn *bench_connect_env(const char *name, amqp_channel_t ch);

#endif
