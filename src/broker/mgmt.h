/*
 * mgmt: a client for RabbitMQ's management HTTP API (libcurl + jansson): the queues, exchanges
 * and bindings of a vhost, and the overview that says which broker this is.
 *
 * Credentials go to libcurl with CURLOPT_USERNAME / CURLOPT_PASSWORD, never into a URL, and are
 * never logged or shown; a URL in a message is the base URL without userinfo. Everything the
 * server sends is untrusted: sizes are capped, every JSON field is type-checked, and a field of
 * the wrong type reads as unknown (NULL or -1) rather than failing the listing.
 *
 * Errors: functions return enum status and fill struct error with one sentence; the kind of
 * failure (what the CLI maps to an exit code) is mgmt_last_error().
 *
 * Ownership: every char * and json_t * in the structs below is owned by the array that holds
 * it and released by the matching *_free; each json_t is a deep copy with one reference,
 * owned by the struct (json_incref it to keep it past *_free).
 */
#ifndef DLQX_MGMT_H
#define DLQX_MGMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "status.h"

/* The kinds of failure, with the error kind (status.h's ERROR_KIND_LIST, hence the exit
 * status) each is; a failing call sets err->kind from it. */
#define MGMT_ERROR_LIST(X)                                                                         \
    X(MGMT_OK, "ok", ERRK_NONE)                                                                    \
    X(MGMT_CONFIG, "invalid management API settings", ERRK_USAGE)                                  \
    X(MGMT_UNREACHABLE, "management API unreachable", ERRK_UNREACHABLE)                            \
    X(MGMT_TIMEOUT, "management API timed out", ERRK_UNREACHABLE)                                  \
    X(MGMT_TLS, "TLS failure", ERRK_TLS)                                                           \
    X(MGMT_AUTH, "credentials refused", ERRK_AUTH)                                                 \
    X(MGMT_FORBIDDEN, "not permitted", ERRK_ACCESS)                                                \
    /* as AMQP's login says it: the vhost, not a permission */                                     \
    X(MGMT_VHOST_REFUSED, "no permissions on the vhost", ERRK_VHOST)                               \
    X(MGMT_NOT_FOUND, "not found", ERRK_VHOST)                                                     \
    X(MGMT_SERVER_ERROR, "management API server error", ERRK_PROTOCOL)                             \
    X(MGMT_BAD_RESPONSE, "unusable response", ERRK_PROTOCOL)

enum mgmt_error {
#define X(e, msg, kind) e,
    MGMT_ERROR_LIST(X)
#undef X
};

const char *mgmt_error_str(enum mgmt_error e);
/* The error kind of e (ERRK_NONE for MGMT_OK). */
enum error_kind mgmt_error_kind(enum mgmt_error e);

struct mgmt_config {
    const char *url;         /* http://host:port/ or https://host:port/prefix/; no userinfo */
    const char *user;        /* required */
    const char *password;    /* from a file or a prompt, never from argv; may be "" */
    long timeout_ms;         /* whole request, 0 = 30000 */
    long connect_timeout_ms; /* 0 = 5000 */
    /* https only; the peer and its host name are verified unless told otherwise. */
    const char *ca_file;             /* PEM bundle; NULL = the system's */
    const char *client_cert;         /* PEM client certificate; NULL = none */
    const char *client_key;          /* PEM key for client_cert; NULL = in client_cert */
    const char *client_key_password; /* NULL = unencrypted key */
    bool insecure_no_verify_peer;
    bool insecure_no_verify_host;
    size_t max_response; /* bytes per listing (all of its pages), 0 = 256 MiB */
    int page_size;       /* queues/exchanges per page, 0 = 500 (the API's maximum); tests */
};

struct mgmt;

/* Global libcurl state: call once at program start and end (not thread-safe). */
void mgmt_global_init(void);
void mgmt_global_cleanup(void);

/* Checks cfg and prepares a client; no request is made. ST_EINVAL (MGMT_CONFIG) for a URL that
 * is not http(s), carries credentials, a query or a fragment, or for a missing user. The
 * strings in cfg are copied. *out is set only on success; release it with mgmt_close. */
enum status mgmt_open(const struct mgmt_config *cfg, struct mgmt **out, struct error *err);
/* A second client with m's settings and a handle of its own (for a listing stepped beside
 * m's own requests). Release it with mgmt_close. */
struct mgmt *mgmt_dup(const struct mgmt *m);
/* Releases the client (wiping the copy of the password) and sets *m to NULL. */
void mgmt_close(struct mgmt **m);

/* The kind of the last failure (MGMT_OK after a success), and its HTTP status (0: none). */
enum mgmt_error mgmt_last_error(const struct mgmt *m);
long mgmt_last_http_status(const struct mgmt *m);
/* The base URL as shown in messages: scheme://host:port/path, without userinfo. Borrowed. */
const char *mgmt_display_url(const struct mgmt *m);

enum mgmt_queue_type {
    MGMT_QT_UNKNOWN,
    MGMT_QT_CLASSIC,
    MGMT_QT_QUORUM,
    MGMT_QT_STREAM,
    MGMT_QT_OTHER,
};

/* Where a derived setting came from: the queue's x- argument or its effective policy. */
enum mgmt_origin {
    MGMT_FROM_NONE,
    MGMT_FROM_ARGUMENT,
    MGMT_FROM_POLICY,
};

/* A list of node names from the API (members, online). Untrusted: at most MGMT_STRS_MAX
 * entries are kept (truncated says more were sent), each a string without NUL of at most
 * MGMT_NODE_NAME_MAX bytes; other elements are skipped. known: the field was an array. */
#define MGMT_STRS_MAX 64
#define MGMT_NODE_NAME_MAX 255
struct mgmt_strs {
    char **v;
    size_t n;
    bool known, truncated;
};
/* Whether list holds name. */
bool mgmt_strs_has(const struct mgmt_strs *list, const char *name);

struct mgmt_queue {
    char *name;  /* never NULL */
    char *vhost; /* never NULL */
    char *type;  /* as sent ("classic", "quorum", "stream"); NULL unknown */
    enum mgmt_queue_type qtype;
    char *state;                                 /* "running", …; NULL unknown */
    char *policy;                                /* the policy's name; NULL none or unknown */
    int64_t messages, ready, unacked, consumers; /* -1 unknown (they lag ~5 s) */
    double publish_rate; /* msg/s over the last sample; -1 unknown (no message_stats yet) */
    double depth_rate;   /* messages_details.rate: the depth's change per second (negative
                            when it drains); NAN unknown */
    /* The listing carried no stats for it: a queue younger than the stats interval (~5 s)
     * shows only its name, type and arguments, so its policy is not known yet either. */
    bool stats_pending;
    json_t *arguments;         /* an object, or NULL; owned */
    json_t *policy_definition; /* effective_policy_definition, an object, or NULL; owned */

    /* Resolved as the broker does: for the exchange, routing key and overflow the argument
     * wins over the policy; for the limits the smaller one applies. */
    char *dead_letter_exchange;    /* NULL: none; "" is the default exchange */
    char *dead_letter_routing_key; /* NULL: none (the message's own routing keys are used) */
    enum mgmt_origin dlx_origin, dlrk_origin;
    int64_t delivery_limit;                            /* quorum queues; -1 none */
    int64_t max_length, max_length_bytes, message_ttl; /* -1 none */
    char *overflow; /* "drop-head", "reject-publish", …; NULL default */

    /* Where it lives (3.10: every type has `node`; quorum queues and streams add `members`
     * and `online`, quorum queues `leader`). NULL / unknown when absent or of another type. */
    char *node;   /* a classic queue's home node; a replicated queue's leader's node */
    char *leader; /* quorum queues */
    struct mgmt_strs members, online;
};

enum mgmt_exchange_type {
    MGMT_EX_UNKNOWN,
    MGMT_EX_DIRECT,
    MGMT_EX_FANOUT,
    MGMT_EX_TOPIC,
    MGMT_EX_HEADERS,
    MGMT_EX_OTHER, /* plugins: x-delayed-message, x-consistent-hash, … */
};

struct mgmt_exchange {
    char *name;  /* never NULL; "" is the default exchange */
    char *vhost; /* never NULL */
    char *type;  /* as sent; NULL unknown */
    enum mgmt_exchange_type etype;
    bool internal;
    char *policy;             /* NULL none */
    json_t *arguments;        /* object or NULL; owned */
    char *alternate_exchange; /* argument, else the policy's; NULL none */
    bool alternate_unknown;   /* it has a policy whose definition could not be read */
};

enum mgmt_dest_type { MGMT_DEST_UNKNOWN, MGMT_DEST_QUEUE, MGMT_DEST_EXCHANGE };

struct mgmt_binding {
    char *vhost;       /* never NULL */
    char *source;      /* exchange; never NULL ("" = default exchange) */
    char *destination; /* never NULL */
    enum mgmt_dest_type dest_type;
    char *routing_key; /* NULL unknown */
    json_t *arguments; /* object or NULL; owned */
};

/* /api/nodes: the cluster's nodes (a user without the monitoring tag may not read it). */
struct mgmt_node {
    char *name; /* never NULL */
    bool running;
};

struct mgmt_overview {
    char *product_name, *rabbitmq_version, *management_version, *erlang_version;
    char *cluster_name, *node, *rates_mode; /* each NULL when unknown */
};

/* GET /api/queues[/vhost]?columns=…, page by page, vhost NULL = every vhost the user may see.
 * *out (NULL when *n is 0) is sorted by vhost then name, duplicates from pages that shifted
 * under concurrent changes removed. ST_ENOTFOUND (MGMT_NOT_FOUND) when the vhost does not
 * exist, ST_EINVAL (MGMT_CONFIG) when the URL's path does not lead to the API. On failure *out
 * is NULL and *n 0. Release with mgmt_queues_free. */
enum status mgmt_list_queues(struct mgmt *m, const char *vhost, struct mgmt_queue **out, size_t *n,
                             struct error *err);
/* GET /api/exchanges[/vhost] (paged) and /api/policies[/vhost] for alternate exchanges set by
 * policy (when the user may not read policies, alternate_unknown says so). */
enum status mgmt_list_exchanges(struct mgmt *m, const char *vhost, struct mgmt_exchange **out,
                                size_t *n, struct error *err);
/* GET /api/bindings[/vhost] (the API does not page bindings). Includes the default exchange's
 * implicit binding of every queue. */
enum status mgmt_list_bindings(struct mgmt *m, const char *vhost, struct mgmt_binding **out,
                               size_t *n, struct error *err);
/* GET /api/nodes?columns=name,running. Release with mgmt_nodes_free. */
enum status mgmt_list_nodes(struct mgmt *m, struct mgmt_node **out, size_t *n, struct error *err);
/* GET /api/overview. Release with mgmt_overview_free. */
enum status mgmt_overview(struct mgmt *m, struct mgmt_overview *out, struct error *err);

/* Parsers of API responses, without I/O (for fixtures): j is the array of items or a page
 * object holding "items". Items that are not objects or lack a name are skipped; results are
 * appended to *out and *n (which may start as NULL/0). vhost_hint fills a missing vhost (NULL:
 * such items are skipped). policies (NULL allowed) is /api/policies' array, for exchanges'
 * alternate exchanges. ST_EPARSE when j is neither an array nor a page object. */
enum status mgmt_queues_from_json(const json_t *j, const char *vhost_hint, struct mgmt_queue **out,
                                  size_t *n, struct error *err);
enum status mgmt_exchanges_from_json(const json_t *j, const json_t *policies,
                                     const char *vhost_hint, struct mgmt_exchange **out, size_t *n,
                                     struct error *err);
enum status mgmt_bindings_from_json(const json_t *j, const char *vhost_hint,
                                    struct mgmt_binding **out, size_t *n, struct error *err);
void mgmt_overview_from_json(const json_t *j, struct mgmt_overview *out);
/* Nodes without a name are skipped; running is false unless it is true. */
enum status mgmt_nodes_from_json(const json_t *j, struct mgmt_node **out, size_t *n,
                                 struct error *err);

/* Each frees the array and what it holds, and sets *p to NULL and *n to 0. */
void mgmt_queues_free(struct mgmt_queue **p, size_t *n);
void mgmt_exchanges_free(struct mgmt_exchange **p, size_t *n);
void mgmt_bindings_free(struct mgmt_binding **p, size_t *n);
void mgmt_overview_free(struct mgmt_overview *o);
void mgmt_nodes_free(struct mgmt_node **p, size_t *n);

/* Sorts queues by vhost then name and drops later duplicates; returns the new count. */
size_t mgmt_queues_sort_unique(struct mgmt_queue *q, size_t n);

/* For tests: sends a request with an optional JSON body (PUT, POST, DELETE, GET) to path
 * (which starts with "/api/", its parts already escaped) and gives the HTTP status. Fails
 * only on transport errors; any HTTP status is a success here. *resp (may be NULL) gets the
 * parsed JSON response or NULL. */
enum status mgmt_request(struct mgmt *m, const char *method, const char *path, const char *body,
                         long *http_status, json_t **resp, struct error *err);
/* One path segment (a vhost, a queue name) percent-encoded by curl_easy_escape: everything but
 * A-Z a-z 0-9 - . _ ~ ("/" becomes %2F). The caller frees. */
char *mgmt_escape(const char *segment);

#endif
