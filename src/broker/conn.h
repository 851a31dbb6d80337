/*
 * conn: one AMQP connection to a RabbitMQ node — RabbitMQ URI syntax (amqp:// and amqps://
 * with TLS), the password from a file or a prompt rather than the URI, heartbeats, a
 * connection name operators can see, failover across several URLs, and every failure turned
 * into one sentence naming its cause plus a kind the CLI maps to an exit code.
 *
 * Credentials never leave this module in a form that can be shown: conn_display_url() is the
 * URL without any password, and no message written here contains one.
 *
 * Ownership: conn_open returns a connection the caller closes with conn_close. A connection
 * is not thread-safe (librabbitmq's is not).
 */
#ifndef DLQX_CONN_H
#define DLQX_CONN_H

#include <stdbool.h>
#include <stddef.h>

#include <amqp.h>

#include "broker_version.h"
#include "status.h"
#include "urlmask.h"

/* Why a connection or an operation failed, and the error kind (status.h's ERROR_KIND_LIST,
 * hence the exit status) each is. The functions below that fill a kind also set err->kind. */
#define CONN_ERR_LIST(X)                                                                           \
    X(CONN_OK, "ok", ERRK_NONE)                                                                    \
    X(CONN_BAD_URL, "bad URL", ERRK_USAGE)                                                         \
    X(CONN_UNREACHABLE, "broker unreachable", ERRK_UNREACHABLE)                                    \
    X(CONN_AUTH, "authentication failed", ERRK_AUTH)                                               \
    X(CONN_VHOST, "virtual host missing or not allowed", ERRK_VHOST)                               \
    X(CONN_TLS, "TLS error", ERRK_TLS)                                                             \
    X(CONN_ACCESS, "access refused", ERRK_ACCESS)                                                  \
    X(CONN_NOT_FOUND, "not found", ERRK_QUEUE_MISSING)                                             \
    X(CONN_PRECONDITION, "precondition failed", ERRK_PROTOCOL)                                     \
    X(CONN_LOCKED, "resource locked", ERRK_PROTOCOL)                                               \
    X(CONN_LOST, "connection lost", ERRK_LOST)                                                     \
    X(CONN_PROTOCOL, "protocol error", ERRK_PROTOCOL)

enum conn_err {
#define X(e, s, kind) e,
    CONN_ERR_LIST(X)
#undef X
};

const char *conn_err_name(enum conn_err e);
/* The error kind of e (ERRK_NONE for CONN_OK). */
enum error_kind conn_err_kind(enum conn_err e);

/* The order the nodes of a list are tried in: as given, or shuffled (the kernel's random
 * source, getrandom) once per conn_open, so that many clients spread over a cluster. */
enum conn_order { CONN_ORDER_GIVEN, CONN_ORDER_SHUFFLE };

/* Seconds between heartbeats unless told otherwise. rabbitmq-c counts a connection lost when
 * nothing has come from the node for two intervals in every wait for a frame or a reply, so a
 * hung (SIGSTOPped) node is noticed within about 10 s; conn_publish checks the same before it
 * sends, and a send stuck on a full buffer ends after four intervals (TCP_USER_TIMEOUT). */
#define CONN_DEFAULT_HEARTBEAT_S 5

struct conn_opts {
    const char *const *urls; /* one or more amqp:// or amqps:// URIs (the nodes of a cluster) */
    size_t n_urls;
    enum conn_order order;  /* how the urls are tried (CONN_ORDER_GIVEN: in order) */
    const char *password;   /* when set, used instead of any password in the URI */
    const char *cacert;     /* amqps: CA bundle (default: the system's) */
    const char *cert, *key; /* amqps: client certificate and key */
    bool tls_no_verify;     /* amqps: do not verify the peer or its host name (explicit) */
    /* > 0; 0: CONN_DEFAULT_HEARTBEAT_S. Never off: without heartbeats a send to a hung node
     * waits forever (rabbitmq-c bounds a blocked send only by the heartbeat's deadline). */
    int heartbeat_s;
    int timeout_ms;        /* connect and RPC timeout; 0: the default (10 s) */
    const char *conn_name; /* shown to operators; NULL: "dlqx@HOSTNAME" */
    /* May be NULL. When it returns non-zero (a signal asked dlqx to stop) after a node failed,
     * no further node is tried: each can take the whole connect timeout. */
    int (*stop_requested)(void);
};

/* Fills order[0..n) with 0..n-1 in the order `how` says (shuffled: each permutation equally
 * likely, from getrandom). */
void conn_order_make(enum conn_order how, size_t n, size_t *order);
/* "given" or "shuffle"; parse: false for anything else. */
const char *conn_order_name(enum conn_order how);
bool conn_order_parse(const char *s, enum conn_order *out);

struct conn;

/* Connects to the first URL that answers, in opts->order (conn_nodes.c). A refused,
 * unreachable or timed-out node moves on to the next URL; an authentication or vhost failure
 * stops (the next node would say the same). *kind says why it failed. The connection keeps
 * its own copy of opts (the caller's strings may go). */
enum status conn_open(const struct conn_opts *opts, struct conn **out, enum conn_err *kind,
                      struct error *err);
/* After c was lost or hung: closes it and connects to the next node in the order, starting
 * after the node c was on and wrapping round (so the node that failed is tried last), with
 * the same options (conn keeps its own copy of them). *c is replaced by the new connection
 * (on failure *c is NULL and the old one is closed). The old one is closed without the
 * connection.close handshake (a hung node would never answer it): the broker gives back
 * what its channels held as for any connection that drops. */
enum status conn_reopen(struct conn **c, enum conn_err *kind, struct error *err);
/* Index into the options' urls of the node c is connected to. */
size_t conn_url_index(const struct conn *c);
/* How many nodes c's options name (conn_reopen tries each at most once). */
size_t conn_url_count(const struct conn *c);
void conn_close(struct conn *c);

amqp_connection_state_t conn_state(const struct conn *c);
/* amqp[s]://user@host:port/vhost — never a password. Borrowed. */
const char *conn_display_url(const struct conn *c);
const char *conn_vhost(const struct conn *c);
const char *conn_user(const struct conn *c);
/* The broker's version as its connection.start said it (printable ASCII, "?" when none). */
const char *conn_server_version(const struct conn *c);
/* The same, parsed: which RabbitMQ this is and so what its limits are (broker_version.h). */
const struct broker_version *conn_broker_version(const struct conn *c);
/* Whether the connection is still usable (no connection-level error seen). */
bool conn_alive(const struct conn *c);

/* amqp_basic_publish (never immediate), but a node silent for 1.5 heartbeat intervals is taken
 * as hung first (AMQP_STATUS_HEARTBEAT_TIMEOUT, c marked dead): rabbitmq-c 0.11 would wait for
 * it with no deadline. Every publish of dlqx goes through here. Returns an AMQP_STATUS_*. */
int conn_publish(struct conn *c, amqp_channel_t ch, amqp_bytes_t exchange, amqp_bytes_t routing_key,
                 bool mandatory, const amqp_basic_properties_t *props, amqp_bytes_t body);

/* TCP_CORK on (what is sent is held to fill whole segments) or off (everything held goes out
 * now). A bulk replay corks while it publishes a batch and acks what was confirmed, and uncorks
 * before it waits: the broker then reads many frames a segment, not one publish or ack each.
 * Only ever a delay (Linux sends a corked segment after 200 ms anyway); nothing reorders. */
void conn_cork(struct conn *c, bool on);

/* Opens channel ch. */
enum status conn_channel_open(struct conn *c, amqp_channel_t ch, enum conn_err *kind,
                              struct error *err);
/* Closes channel ch (a no-op when the broker already closed it), then drops the frames
 * rabbitmq-c kept while it waited for the close-ok: deliveries that were in flight on ch are
 * given back by the broker with the channel, and must not come out of the next read as new
 * ones (on a channel opened again with the same number their delivery tags would name other
 * messages). Every frame kept is dropped, so call it when no other channel of c expects
 * asynchronous frames (deliveries, confirms); synchronous replies are never kept. */
void conn_channel_close(struct conn *c, amqp_channel_t ch);

/* Turns an RPC reply into a status: ST_OK, or an error naming what was being done (`what`,
 * e.g. "declaring queue orders.dlq") and why. A channel the broker closed is acknowledged
 * (close-ok) so the connection stays usable; a closed connection marks c dead. */
enum status conn_check_reply(struct conn *c, amqp_channel_t ch, amqp_rpc_reply_t r,
                             const char *what, enum conn_err *kind, struct error *err);
/* The same for a librabbitmq status code (AMQP_STATUS_*). */
enum status conn_check_status(struct conn *c, int status, const char *what, enum conn_err *kind,
                              struct error *err);

/* The frame that interrupted a consume (amqp_consume_message's AMQP_STATUS_UNEXPECTED_STATE),
 * read and told apart (conn_frame.c), for every reader of a consumer: the peek and the taps.
 * CONN_FRAME_LOST: the connection failed or the broker closed it (a shutdown, a restart);
 * CONN_FRAME_CHANNEL: the broker closed a channel; CONN_FRAME_CANCELLED: the broker cancelled a
 * consumer (its queue deleted) — each with *kind and err saying why ("WHAT: …"); CONN_FRAME_OTHER:
 * a frame that is none of these (nothing to handle). */
enum conn_frame { CONN_FRAME_OTHER, CONN_FRAME_LOST, CONN_FRAME_CHANNEL, CONN_FRAME_CANCELLED };
enum conn_frame conn_read_interrupt(struct conn *c, const char *what, enum conn_err *kind,
                                    struct error *err);
/* The same for a frame already read. */
enum conn_frame conn_frame_interrupt(struct conn *c, const amqp_frame_t *f, const char *what,
                                     enum conn_err *kind, struct error *err);

/* Passive queue.declare: whether it exists, its ready count and consumer count. A missing
 * queue is ST_ENOTFOUND with kind CONN_NOT_FOUND (the channel is reopened for the caller).
 * A quorum queue's count comes from its leader, and when the leader does not answer in time
 * (a node that has just started and is not yet connected to it; a leader being elected)
 * RabbitMQ answers 0 and 0 (rabbit_quorum_queue:stat's {ok, 0, 0}), what an empty queue
 * nobody reads says too; a new leader may also answer with a count of its own until it has
 * caught up. The callers ask again while the answer is unsure, in their steps (the peek's
 * settling count in peek.c, the pass's count_step in replay.c). */
enum status conn_queue_inspect(struct conn *c, amqp_channel_t ch, const char *queue,
                               uint32_t *messages, uint32_t *consumers, enum conn_err *kind,
                               struct error *err);

/* Reads a password: the first line of a file (mode checked: a world-readable file is
 * refused), or the terminal with echo off. The result is the caller's to free (and wipe).
 * Both make the process undumpable first (conn_secret_guard). */
enum status conn_read_password_file(const char *path, char **out, struct error *err);
enum status conn_prompt_password(const char *prompt, char **out, struct error *err);
/* conn_secret.c. Overwrites (explicit_bzero, never optimised away) and frees a secret. */
void conn_secret_free(char *s);
/* The same for n bytes: a URL's copy that amqp_parse_url cut with NULs (strlen stops short). */
void conn_secret_free_n(char *s, size_t n);
/* Makes the process undumpable (prctl PR_SET_DUMPABLE 0): no core file and no ptrace by the
 * same user while a password is held. Reset by exec, so $EDITOR is unaffected. */
void conn_secret_guard(void);

/* The user and virtual host a URL names (librabbitmq's defaults, guest and /, when it names
 * none). New strings; false for a URL that does not parse. */
bool conn_url_parts(const char *url, char **user, char **vhost, char **host);

/* The password a URL carries, as librabbitmq reads it (percent-decoded), or NULL when it
 * carries none or does not parse. Owned by the caller: conn_secret_free it. */
char *conn_url_password(const char *url);

/* conn_url.c: what a URL was read as, for messages (scheme, user, host, port, vhost; never
 * the password), appended to out. */
struct strbuf;
void conn_url_describe(const char *url, struct strbuf *out);
/* Whether the URL names the empty vhost "" (amqp://host:port/ — the default vhost is
 * amqp://host:port or amqp://host:port/%2F). */
bool conn_url_empty_vhost(const char *url);
/* For a URL of the empty vhost, appends one clause saying so and how to name the default
 * vhost; nothing otherwise. */
void conn_url_vhost_hint(const char *url, struct strbuf *out);
/* false, with one sentence that says what the URL was read as, for a URL that is not an
 * amqp:// or amqps:// RabbitMQ URI. */
bool conn_url_check(const char *url, struct error *err);

#endif
