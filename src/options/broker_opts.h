/*
 * broker_opts: the options every broker command and the explorer share — where the broker is
 * and how to log in — parsed once into a struct (no globals); connecting with them, the
 * management API client they name, and the exit code for each kind of failure (from the error
 * kinds: status.h, exitcodes.h). The options layer: above broker, below replay, cli and ui.
 *
 * Ownership: the struct points into argv and the environment; what it allocates (the password,
 * copies of URLs) is its own and broker_opts_free wipes and frees it.
 *
 *   --url URL (repeatable; or DLQX_URL, comma-separated)   cluster nodes, tried in order
 *   --node-order given|shuffle (or DLQX_NODE_ORDER)        that order, or a random one
 *   --heartbeat S (or DLQX_HEARTBEAT; 1-600, default 5)    a hung node is noticed in 2 S
 *   --password-file FILE (or DLQX_PASSWORD_FILE)           the password, never on the command line
 *   --ask-password                                         prompt for it on the terminal
 *   --cacert FILE --cert FILE --key FILE --tls-no-verify   amqps://
 *   --mgmt-url URL (or DLQX_MGMT_URL), --no-mgmt           the management API
 *   --read-only (or DLQX_READ_ONLY=1, or ?read_only=true    nothing is written to this broker
 *   on a URL: the per-connection setting; true/false, 1/0, yes/no, on/off, any case; empty
 *   is unset; any other value is an error, exit 2 — read-only fails closed)
 */
#ifndef DLQX_BROKER_OPTS_H
#define DLQX_BROKER_OPTS_H

#include <stdbool.h>
#include <stddef.h>

#include "conn.h"

struct broker_opts {
    char *urls[16];
    size_t n_urls;
    char *password; /* read from a file or prompt (owned, wiped on free) */
    const char *password_file;
    bool ask_password;
    const char *cacert, *cert, *key;
    bool tls_no_verify;
    const char *mgmt_url;
    bool no_mgmt;
    char *env_urls;      /* owned copy of DLQX_URL that urls[] point into */
    size_t env_urls_len; /* its length before strtok cut it (to wipe it whole) */
    char *url_store[16]; /* owned: URLs with their dlqx query parameters taken off */
    bool read_only;      /* --read-only, DLQX_READ_ONLY, or ?read_only=true on a URL */
    char *mgmt_store;    /* owned: mgmt_url with the scheme a URL without one takes */
    bool order_given, heartbeat_given; /* on the command line (else from the environment) */
    enum conn_order order;             /* --node-order, DLQX_NODE_ORDER (default: given) */
    int heartbeat_s; /* --heartbeat, DLQX_HEARTBEAT: 1-600 (0: unset, the default 5) */
    /* Whether a signal asked dlqx to stop (conn_opts.stop_requested): the caller's, or NULL
     * for stopsig_caught (the commands that catch SIGINT, SIGTERM and SIGHUP). */
    int (*stop_requested)(void);
};

void broker_opts_init(struct broker_opts *b);
void broker_opts_free(struct broker_opts *b);
enum bopt_next {
    BOPT_NOT_MINE = 0, /* argv[*i] is not a broker option: the caller's */
    BOPT_CONSUMED = 1, /* it was, with its value: *i is on its last word */
    BOPT_ERROR = -1,   /* a usage error: err says why (kind ERRK_USAGE; exit EXIT_USAGE) */
};
/* The one argv loop step of every broker command and of the explorer: consumes argv[*i] (and
 * its value) when it is a broker option. Nothing is printed. */
enum bopt_next broker_opts_next(struct broker_opts *b, int argc, char **argv, int *i,
                                struct error *err);
/* The same for a command's loop: an error is said on stderr ("dlqx: why"), and the caller
 * exits EXIT_USAGE. */
enum bopt_next broker_opts_arg(struct broker_opts *b, int argc, char **argv, int *i);
/* Applies the environment and reads the password; false after reporting an error. */
bool broker_opts_finish(struct broker_opts *b);
/* --heartbeat's value: 1 to 600 seconds. 0 (which would turn heartbeats off) and anything else
 * is false with err saying why (where: the option or variable named in it). */
bool broker_parse_heartbeat(const char *where, const char *v, int *out, struct error *err);
/* 1 for 1/true/yes/on, 0 for 0/false/no/off (case-insensitive), -1 for anything else. */
int broker_parse_bool(const char *v, size_t n);
/* The management API's URLs (one, or several separated by commas: one per node of a cluster):
 * each as given, or with https:// (an amqps:// broker) or http:// before one that names no
 * scheme (host:port/). A new string. */
char *broker_mgmt_url_default(const char *mgmt_url, bool amqps);
/* Whether basic auth to one of these management URLs goes unencrypted where it matters: plain
 * http:// to a host other than this machine's loopback, or any plain http:// for an amqps://
 * broker. */
bool broker_mgmt_plain(const char *mgmt_url, bool amqps);
void broker_opts_conn(const struct broker_opts *b, struct conn_opts *o);
int broker_exit_code(enum conn_err k);
struct mgmt;
/* The management API client for these options (the AMQP URL's user and the same password),
 * or NULL when there is none (no --mgmt-url, or --no-mgmt; *exit_code then stays 0) or it
 * cannot be set up (reported; *exit_code set). */
struct mgmt *broker_mgmt(const struct broker_opts *b, int *exit_code);
/* The exit code for a management API failure. */
int broker_mgmt_exit(int mgmt_error);

struct peek_queue_info;
/* Fills what the management API knows of a queue (type, delivery limit, dead-letter exchange),
 * leaving the parts given on the command line alone. Says so on stderr when there is no API. */
void broker_queue_info(const struct broker_opts *b, const char *queue, struct peek_queue_info *info,
                       bool type_given, bool limit_given, bool dlx_given);

struct mgmt_queue;
/* Says on stderr which queues of the listing (of vhost; NULL: of any) have names close to
 * want, a queue that is not there. */
void broker_suggest_from(const struct mgmt_queue *qs, size_t nq, const char *vhost,
                         const char *want);
/* After "there is no queue": says on stderr which queues of the vhost have close names
 * (from the management API), or that close names need the management API. */
void broker_suggest_queue(const struct broker_opts *b, const char *queue);

/* Connects to the first URL that answers and opens channel 1; on a failure *out is NULL and
 * err says why (its kind gives the exit status). Nothing is printed. */
enum status broker_open(const struct broker_opts *b, struct conn **out, struct error *err);
/* broker_open, reporting a failure on stderr; NULL then, with *exit_code set. */
struct conn *broker_connect(const struct broker_opts *b, int *exit_code);

#endif
