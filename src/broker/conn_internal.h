/*
 * conn_internal: what conn.c (one node: the socket, TLS, login, errors) and conn_nodes.c (the
 * list of nodes: their order, failover, reopening) share. Not for use outside src/broker/conn*.c.
 */
#ifndef DLQX_CONN_INTERNAL_H
#define DLQX_CONN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include <amqp.h>

#include "broker_version.h"
#include "conn.h"

/* The connection's own copy of its options (conn_opts borrows from the caller; a connection
 * outlives them, and conn_reopen needs them). o's pointers point into this struct's copies. */
struct conn_cfg {
    struct conn_opts o;
    char **urls; /* copies; a URL may carry a password: wiped when freed */
    char *password, *cacert, *cert, *key, *conn_name;
    size_t *order; /* indices into urls, in the order they are tried */
};
void conn_cfg_free(struct conn_cfg *cfg);

struct conn {
    amqp_connection_state_t st;
    char *display_url;
    char *vhost;
    char *user;
    struct broker_version version; /* from connection.start */
    bool alive;
    struct conn_cfg *cfg; /* owned; NULL for a connection conn_open_one made alone */
    size_t url_index;     /* into cfg's urls */
    double heard_at;      /* clock_mono_s when node_silent last found the node talking */
    bool tls;             /* amqps: the stream is rabbitmq-c's TLS layer's */
};

/* Whether the node has sent nothing for 1.5 heartbeat intervals (asked at most every 0.1 s
 * while it talks): a hung node (conn.c). */
bool conn_node_silent(struct conn *c);
/* Connects to one URL with options o (conn.c). */
enum status conn_open_one(const char *url, const struct conn_opts *o, struct conn **out,
                          enum conn_err *kind, struct error *err);
/* *kind (when asked for) and, on a failure, err's kind set from k. Returns st. */
enum status conn_kinded(enum status st, enum conn_err k, enum conn_err *kind, struct error *err);

#endif
