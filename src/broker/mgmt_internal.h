/*
 * mgmt_internal: what the management client's files share. The transport (mgmt.c) asks the
 * API for exactly the columns that the parsers (mgmt_parse.c) read, so the lists live beside
 * the parsers and are declared here; the stepped listing (mgmt_fetch.c) drives the same handle
 * set-up and the same classification of failures through libcurl's multi interface. Only
 * mgmt*.c include it.
 */
#ifndef DLQX_MGMT_INTERNAL_H
#define DLQX_MGMT_INTERNAL_H

#include <curl/curl.h>

#include "mgmt.h"
#include "util.h"

/* The `columns` query of each listing: comma-separated, nested paths allowed. */
extern const char mgmt_queue_columns[];
extern const char mgmt_exchange_columns[];
extern const char mgmt_binding_columns[];
extern const char mgmt_overview_columns[];
extern const char mgmt_node_columns[];

struct mgmt {
    CURL *curl;
    struct curl_slist *headers;
    /* The management URLs given (one per node of a cluster, say), each as
     * scheme://host:port[/prefix] without a trailing slash or userinfo; requests go to
     * bases[cur] and move on to the next when it cannot be reached (mgmt_urls.c). */
    char **bases;
    size_t n_bases, cur;
    const char *base; /* bases[cur] */
    char *display;    /* base + "/" */
    char *user;
    char *password;
    long timeout_ms;
    size_t max_response;
    int page_size;
    enum mgmt_error last;
    long last_http;
    bool page_out_of_range; /* the last failure was HTTP 400 page_out_of_range */
    char errbuf[CURL_ERROR_SIZE];
};

/* Text from the server or the user, made safe and short for one-line messages. */
const char *mgmt_clip(char *buf, size_t cap, const char *s);

/* mgmt_urls.c: the list of management URLs. mgmt_parse_urls checks each URL of a comma-
 * separated list (at most MGMT_MAX_URLS; white space around each is ignored) and gives their
 * bases; mgmt_use_url makes bases[i] the one requests go to. mgmt_url_failover says whether a
 * request that failed with rc (kind m->last) may be sent again to the next URL: the node did
 * not answer (unreachable, timed out, 503), and for a request that changes something only
 * when it cannot have reached the node (connection refused or no such host). */
#define MGMT_MAX_URLS 16
enum status mgmt_parse_urls(const char *list, char ***bases, size_t *n, struct error *err);
void mgmt_use_url(struct mgmt *m, size_t i);
bool mgmt_url_failover(const struct mgmt *m, CURLcode rc, bool changes);

/* Where a response goes: capped at limit bytes. */
struct sink {
    struct strbuf sb;
    size_t limit;
    bool too_big;
    char shown[200]; /* the path without its query, for messages */
};

/* Sets m's handle up for a GET of path (which starts with "/api/") into s. */
void mgmt_req_begin(struct mgmt *m, const char *path, size_t limit, struct sink *s);
/* After the transfer ended with rc: the failure classified into err (and m->last), or the
 * response moved into *body (the caller frees it). any_status: any HTTP status succeeds. */
enum status mgmt_req_end(struct mgmt *m, CURLcode rc, struct sink *s, const char *vhost,
                         bool any_status, struct strbuf *body, struct error *err);
/* The body as JSON (*out a new reference), or MGMT_BAD_RESPONSE naming what. */
enum status mgmt_parse_body(struct mgmt *m, const struct strbuf *b, const char *what, json_t **out,
                            struct error *err);
/* "/api/<what>" or "/api/<what>/<vhost>" (vhost escaped); the caller frees. */
char *mgmt_collection_path(const char *what, const char *vhost);
/* Sets m->last and fills err with one sentence; returns the status of kind. */
enum status mgmt_fail(struct mgmt *m, enum mgmt_error kind, struct error *err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* The answer to a bindings listing: a JSON array parsed into *out (mgmt_bindings_from_json),
 * else MGMT_BAD_RESPONSE. The blocking listing and the stepped one (mgmt_fetch.c) both take it
 * so. */
enum status mgmt_take_bindings(struct mgmt *m, const json_t *j, const char *vhost,
                               struct mgmt_binding **out, size_t *n, struct error *err);

#endif
