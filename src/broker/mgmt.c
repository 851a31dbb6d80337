/*
 * mgmt: the management HTTP API client's transport. The settings are checked and copied into
 * one libcurl easy handle (basic auth through CURLOPT_USERNAME/PASSWORD, TLS options, capped
 * responses); each request's failure is classified into enum mgmt_error with one sentence;
 * collections are fetched page by page. The list functions hand each page to the parsers of
 * mgmt_parse.c, kept apart (and public) so that the JSON can be read without a broker and
 * without libcurl.
 *
 * Measured on 3.10.8: paging needs `page` (the `pagination` flag alone does nothing; `name`
 * filters only with `page`), page_size is at most 500, an empty vhost answers page_count 0,
 * and a page past the end is HTTP 400 page_out_of_range. /api/bindings ignores paging. Every
 * refusal is HTTP 401 (never 403), told apart by its "reason"; a path outside the API answers
 * 406 to Accept: application/json.
 */
#include "mgmt.h"

#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "mgmt_internal.h"
#include "sanitize.h"
#include "util.h"

#define MGMT_DEFAULT_TIMEOUT_MS 30000L
#define MGMT_DEFAULT_CONNECT_MS 5000L
#define MGMT_DEFAULT_MAX_RESPONSE ((size_t)256 << 20)
#define MGMT_MAX_PAGE_SIZE 500
#define MGMT_MAX_PAGES 100000

static const char *const mgmt_error_msgs[] = {
#define X(e, msg, kind) msg,
    MGMT_ERROR_LIST(X)
#undef X
};

static const enum error_kind mgmt_error_kinds[] = {
#define X(e, msg, kind) kind,
    MGMT_ERROR_LIST(X)
#undef X
};

enum error_kind mgmt_error_kind(enum mgmt_error e)
{
    return (unsigned)e < sizeof mgmt_error_kinds / sizeof *mgmt_error_kinds ? mgmt_error_kinds[e]
                                                                            : ERRK_PROTOCOL;
}

const char *mgmt_error_str(enum mgmt_error e)
{
    if ((unsigned)e < sizeof mgmt_error_msgs / sizeof *mgmt_error_msgs)
        return mgmt_error_msgs[e];
    return "unknown management API error";
}

void mgmt_global_init(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

void mgmt_global_cleanup(void)
{
    curl_global_cleanup();
}

enum mgmt_error mgmt_last_error(const struct mgmt *m)
{
    return m ? m->last : MGMT_CONFIG;
}

long mgmt_last_http_status(const struct mgmt *m)
{
    return m ? m->last_http : 0;
}

const char *mgmt_display_url(const struct mgmt *m)
{
    return m ? m->display : "";
}

char *mgmt_escape(const char *segment)
{
    char *e = curl_easy_escape(NULL, segment, (int)strlen(segment));
    if (!e) {
        fputs("dlqx: out of memory\n", stderr);
        abort();
    }
    char *r = xstrdup(e);
    curl_free(e);
    return r;
}

const char *mgmt_clip(char *buf, size_t cap, const char *s)
{
    struct strbuf sb;
    sb_init(&sb);
    sanitize_fit(&sb, s ? s : "", s ? strlen(s) : 0, 120, 0);
    snprintf(buf, cap, "%s", sb.buf ? sb.buf : "");
    sb_free(&sb);
    return buf;
}

enum status mgmt_fail(struct mgmt *m, enum mgmt_error kind, struct error *err, const char *fmt, ...)
{
    static const enum status map[] = {
        [MGMT_OK] = ST_OK,
        [MGMT_CONFIG] = ST_EINVAL,
        [MGMT_UNREACHABLE] = ST_EIO,
        [MGMT_TIMEOUT] = ST_EIO,
        [MGMT_TLS] = ST_EIO,
        [MGMT_AUTH] = ST_EINVAL,
        [MGMT_FORBIDDEN] = ST_EINVAL,
        [MGMT_VHOST_REFUSED] = ST_EINVAL,
        [MGMT_NOT_FOUND] = ST_ENOTFOUND,
        [MGMT_SERVER_ERROR] = ST_EIO,
        [MGMT_BAD_RESPONSE] = ST_EPARSE,
    };
    if (m)
        m->last = kind;
    if (err) {
        va_list ap;
        err->code = map[kind];
        err->kind = mgmt_error_kind(kind);
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return map[kind];
}

/* --- opening ------------------------------------------------------------------------- */

static size_t on_data(char *data, size_t size, size_t nmemb, void *ud)
{
    struct sink *s = ud;
    size_t n = size * nmemb;
    if (n > s->limit - s->sb.len) {
        s->too_big = true;
        return 0; /* libcurl stops with CURLE_WRITE_ERROR */
    }
    sb_add(&s->sb, data, n);
    return n;
}

/* What a handle must not share with the one it was duplicated from. */
static void own_options(struct mgmt *m)
{
    m->headers = curl_slist_append(NULL, "Accept: application/json");
    m->headers = curl_slist_append(m->headers, "Content-Type: application/json");
    curl_easy_setopt(m->curl, CURLOPT_HTTPHEADER, m->headers);
    curl_easy_setopt(m->curl, CURLOPT_USERNAME, m->user);
    curl_easy_setopt(m->curl, CURLOPT_PASSWORD, m->password);
    curl_easy_setopt(m->curl, CURLOPT_ERRORBUFFER, m->errbuf);
}

struct mgmt *mgmt_dup(const struct mgmt *m)
{
    struct mgmt *d = xcalloc(1, sizeof *d);
    d->curl = curl_easy_duphandle(m->curl);
    if (!d->curl) {
        fputs("dlqx: out of memory\n", stderr);
        abort();
    }
    d->bases = xcalloc(m->n_bases, sizeof *d->bases);
    for (size_t i = 0; i < m->n_bases; i++)
        d->bases[i] = xstrdup(m->bases[i]);
    d->n_bases = m->n_bases;
    mgmt_use_url(d, m->cur);
    d->user = xstrdup(m->user);
    d->password = xstrdup(m->password);
    d->timeout_ms = m->timeout_ms;
    d->max_response = m->max_response;
    d->page_size = m->page_size;
    own_options(d);
    return d;
}

enum status mgmt_open(const struct mgmt_config *cfg, struct mgmt **out, struct error *err)
{
    if (!cfg || !cfg->url || !*cfg->url)
        return mgmt_fail(NULL, MGMT_CONFIG, err, "no management API URL was given");
    if (!cfg->user || !*cfg->user)
        return mgmt_fail(NULL, MGMT_CONFIG, err, "no management API user was given");
    char **bases = NULL;
    size_t n_bases = 0;
    enum status st = mgmt_parse_urls(cfg->url, &bases, &n_bases, err);
    if (st != ST_OK)
        return st;
    struct mgmt *m = xcalloc(1, sizeof *m);
    m->bases = bases;
    m->n_bases = n_bases;
    mgmt_use_url(m, 0);
    m->user = xstrdup(cfg->user);
    m->password = xstrdup(cfg->password ? cfg->password : "");
    m->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : MGMT_DEFAULT_TIMEOUT_MS;
    m->max_response = cfg->max_response ? cfg->max_response : MGMT_DEFAULT_MAX_RESPONSE;
    m->page_size = cfg->page_size > 0 && cfg->page_size <= MGMT_MAX_PAGE_SIZE ? cfg->page_size
                                                                              : MGMT_MAX_PAGE_SIZE;
    m->curl = curl_easy_init();
    if (!m->curl) {
        mgmt_close(&m);
        return mgmt_fail(NULL, MGMT_CONFIG, err, "libcurl could not be initialised");
    }
    CURL *c = m->curl;
    own_options(m);
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
    curl_easy_setopt(c, CURLOPT_USERAGENT, "dlqx/0.1");
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, m->timeout_ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                     cfg->connect_timeout_ms > 0 ? cfg->connect_timeout_ms
                                                 : MGMT_DEFAULT_CONNECT_MS);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
#if LIBCURL_VERSION_NUM >= 0x075500
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
    curl_easy_setopt(c, CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
    /* Any encoding libcurl can decode; the cap applies to the decoded bytes. */
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)m->max_response);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, cfg->insecure_no_verify_peer ? 0L : 1L);
    curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, cfg->insecure_no_verify_host ? 0L : 2L);
    curl_easy_setopt(c, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
    if (cfg->ca_file)
        curl_easy_setopt(c, CURLOPT_CAINFO, cfg->ca_file);
    if (cfg->client_cert)
        curl_easy_setopt(c, CURLOPT_SSLCERT, cfg->client_cert);
    if (cfg->client_key)
        curl_easy_setopt(c, CURLOPT_SSLKEY, cfg->client_key);
    if (cfg->client_key_password)
        curl_easy_setopt(c, CURLOPT_KEYPASSWD, cfg->client_key_password);
    *out = m;
    return ST_OK;
}

void mgmt_close(struct mgmt **mp)
{
    struct mgmt *m = mp ? *mp : NULL;
    if (!m)
        return;
    if (m->curl)
        curl_easy_cleanup(m->curl);
    curl_slist_free_all(m->headers);
    if (m->password) {
        explicit_bzero(m->password, strlen(m->password));
        free(m->password);
    }
    free(m->user);
    for (size_t i = 0; i < m->n_bases; i++)
        free(m->bases[i]);
    free(m->bases);
    free(m->display);
    free(m);
    *mp = NULL;
}

/* --- requests ------------------------------------------------------------------------ */

static bool is_tls_error(CURLcode rc)
{
    switch (rc) {
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ENGINE_NOTFOUND:
    case CURLE_SSL_ENGINE_SETFAILED:
    case CURLE_SSL_ENGINE_INITFAILED:
    case CURLE_SSL_SHUTDOWN_FAILED:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_USE_SSL_FAILED:
        return true;
    default:
        return false;
    }
}

/* A transport failure as one sentence. */
static enum status transport_error(struct mgmt *m, CURLcode rc, const struct sink *s,
                                   const char *path, struct error *err)
{
    char why[160];
    mgmt_clip(why, sizeof why, m->errbuf[0] ? m->errbuf : curl_easy_strerror(rc));
    if (s->too_big || rc == CURLE_FILESIZE_EXCEEDED)
        return mgmt_fail(m, MGMT_BAD_RESPONSE, err,
                         "the management API at %s sent more than the %zu-byte limit for %s",
                         m->display, m->max_response, path);
    if (is_tls_error(rc))
        return mgmt_fail(m, MGMT_TLS, err, "TLS with the management API at %s failed: %s%s",
                         m->display, why,
                         strstr(why, "wrong version number") ? " (is it plain http?)" : "");
    if (rc == CURLE_OPERATION_TIMEDOUT)
        return mgmt_fail(m, MGMT_TIMEOUT, err,
                         "the management API at %s did not answer within %ld ms", m->display,
                         m->timeout_ms);
    if (rc == CURLE_UNSUPPORTED_PROTOCOL || rc == CURLE_WEIRD_SERVER_REPLY)
        return mgmt_fail(m, MGMT_BAD_RESPONSE, err,
                         "%s does not answer HTTP (%s): is that the AMQP port rather than the "
                         "management port?",
                         m->display, why);
    return mgmt_fail(m, MGMT_UNREACHABLE, err, "cannot reach the management API at %s: %s",
                     m->display, why);
}

/* An HTTP failure as one sentence; the server's "reason" goes in when it helps. */
static enum status http_error(struct mgmt *m, long code, const struct sink *s, const char *path,
                              const char *vhost, struct error *err)
{
    const char *tag = NULL, *reason = NULL;
    json_t *j = json_loadb(s->sb.buf ? s->sb.buf : "", s->sb.len, 0, NULL);
    if (json_is_object(j)) {
        tag = json_string_value(json_object_get(j, "error"));
        reason = json_string_value(json_object_get(j, "reason"));
    }
    char r[160], u[160], v[160];
    mgmt_clip(r, sizeof r, reason ? reason : tag ? tag : "no reason given");
    mgmt_clip(u, sizeof u, m->user);
    mgmt_clip(v, sizeof v, vhost ? vhost : "");
    m->page_out_of_range = code == 400 && tag && strcmp(tag, "page_out_of_range") == 0;
    enum status st;
    if (code == 401 && reason && strstr(reason, "Not management user"))
        st = mgmt_fail(m, MGMT_FORBIDDEN, err,
                       "user %s may not use the management API at %s: it needs the management, "
                       "monitoring or administrator tag",
                       u, m->display);
    else if (code == 401 && reason && strstr(reason, "virtual host"))
        st = mgmt_fail(m, MGMT_VHOST_REFUSED, err, "user %s has no permissions on vhost %s at %s",
                       u, vhost ? v : "?", m->display);
    else if (code == 401)
        st = mgmt_fail(m, MGMT_AUTH, err,
                       "the management API at %s refused the credentials for user %s", m->display,
                       u);
    else if (code == 403)
        st = mgmt_fail(m, MGMT_FORBIDDEN, err,
                       "the management API at %s does not let user %s read %s: %s", m->display, u,
                       path, r);
    else if (code == 406) /* measured: what a path outside the API answers to JSON clients */
        st = mgmt_fail(m, MGMT_CONFIG, err,
                       "the management API is not at %s (HTTP 406 for %s): check the URL's path",
                       m->display, path);
    else if (code == 404 && vhost)
        st = mgmt_fail(m, MGMT_NOT_FOUND, err, "vhost %s does not exist at %s", v, m->display);
    else if (code == 404)
        st = mgmt_fail(m, MGMT_NOT_FOUND, err,
                       "the management API at %s has no %s (HTTP 404): check the URL's path",
                       m->display, path);
    else if (code >= 500)
        st = mgmt_fail(m, MGMT_SERVER_ERROR, err,
                       "the management API at %s failed with HTTP %ld for %s: %s", m->display, code,
                       path, r);
    else
        st = mgmt_fail(m, MGMT_BAD_RESPONSE, err,
                       "the management API at %s answered HTTP %ld for %s: %s", m->display, code,
                       path, r);
    json_decref(j);
    return st;
}

void mgmt_req_begin(struct mgmt *m, const char *path, size_t limit, struct sink *s)
{
    char *url = xasprintf("%s%s", m->base, path);
    const char *q = strchr(path, '?');
    snprintf(s->shown, sizeof s->shown, "%.*s", (int)(q ? (size_t)(q - path) : strlen(path)), path);
    s->limit = limit;
    s->too_big = false;
    sb_init(&s->sb);
    CURL *c = m->curl;
    m->errbuf[0] = '\0';
    m->last_http = 0;
    m->page_out_of_range = false;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, NULL);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, s);
    free(url);
}

enum status mgmt_req_end(struct mgmt *m, CURLcode rc, struct sink *s, const char *vhost,
                         bool any_status, struct strbuf *body, struct error *err)
{
    enum status st = ST_OK;
    if (rc != CURLE_OK) {
        st = transport_error(m, rc, s, s->shown, err);
    } else {
        curl_easy_getinfo(m->curl, CURLINFO_RESPONSE_CODE, &m->last_http);
        if (!any_status && (m->last_http < 200 || m->last_http > 299))
            st = http_error(m, m->last_http, s, s->shown, vhost, err);
    }
    if (st != ST_OK) {
        sb_free(&s->sb);
        return st;
    }
    m->last = MGMT_OK;
    *body = s->sb;
    return ST_OK;
}

/* One request. path starts with "/api/"; the path without its query names it in messages.
 * On success *body holds the response (the caller frees it with sb_free). */
static enum status perform(struct mgmt *m, const char *method, const char *path,
                           const char *payload, const char *vhost, size_t limit, bool any_status,
                           struct strbuf *body, struct error *err)
{
    bool changes = strcmp(method, "GET") != 0;
    for (size_t tried = 1;; tried++) {
        struct sink s;
        mgmt_req_begin(m, path, limit, &s);
        CURL *c = m->curl;
        if (payload) {
            curl_easy_setopt(c, CURLOPT_POSTFIELDS, payload);
            curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(payload));
        }
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, changes ? method : NULL);
        CURLcode rc = curl_easy_perform(c);
        enum status st = mgmt_req_end(m, rc, &s, vhost, any_status, body, err);
        if (st == ST_OK || !mgmt_url_failover(m, rc, changes))
            return st;
        if (tried == m->n_bases) {
            if (!err)
                return st;
            size_t n = strlen(err->msg);
            snprintf(err->msg + n, sizeof err->msg - n,
                     " (and none of the other %zu management URLs answered)", m->n_bases - 1);
            return st;
        }
        mgmt_use_url(m, (m->cur + 1) % m->n_bases);
    }
}

enum status mgmt_parse_body(struct mgmt *m, const struct strbuf *b, const char *what, json_t **out,
                            struct error *err)
{
    json_error_t je;
    *out = json_loadb(b->buf ? b->buf : "", b->len, JSON_ALLOW_NUL, &je);
    if (!*out) {
        char t[160];
        return mgmt_fail(m, MGMT_BAD_RESPONSE, err,
                         "the management API at %s sent invalid JSON for %s: %s at line %d",
                         m->display, what, mgmt_clip(t, sizeof t, je.text), je.line);
    }
    return ST_OK;
}

/* A wrong path prefix answers 404 with the very body of a missing vhost: when a vhost's
 * collection is not found, ask for /api/overview to tell which it is. */
static enum status vhost_or_path(struct mgmt *m, const char *what, struct error *err)
{
    struct strbuf b;
    struct error probe;
    if (perform(m, "GET", "/api/overview?columns=node", NULL, NULL, 1 << 20, false, &b, &probe) ==
        ST_OK)
        sb_free(&b);
    else if (m->last == MGMT_NOT_FOUND)
        return mgmt_fail(
            m, MGMT_CONFIG, err,
            "the management API is not at %s (HTTP 404 for %s and /api/overview): check "
            "the URL's path",
            m->display, what);
    m->last = MGMT_NOT_FOUND;
    m->last_http = 404;
    return ST_ENOTFOUND;
}

static enum status get_json(struct mgmt *m, const char *path, const char *vhost, size_t *budget,
                            json_t **out, struct error *err)
{
    struct strbuf b;
    char what[200];
    const char *q = strchr(path, '?');
    snprintf(what, sizeof what, "%.*s", (int)(q ? (size_t)(q - path) : strlen(path)), path);
    /* "/api/queues/" with an empty vhost is "/api/queues": every vhost. Never widen. */
    if (vhost && !*vhost)
        return mgmt_fail(m, MGMT_NOT_FOUND, err,
                         "the empty vhost \"\" cannot be asked of the management API at %s (%s "
                         "would list every vhost)",
                         m->display, what);
    enum status st = perform(m, "GET", path, NULL, vhost, *budget, false, &b, err);
    if (st != ST_OK && vhost && m->last == MGMT_NOT_FOUND)
        return vhost_or_path(m, what, err);
    if (st != ST_OK)
        return st;
    *budget -= b.len;
    st = mgmt_parse_body(m, &b, what, out, err);
    sb_free(&b);
    return st;
}

enum status mgmt_request(struct mgmt *m, const char *method, const char *path, const char *body,
                         long *http_status, json_t **resp, struct error *err)
{
    struct strbuf b;
    if (resp)
        *resp = NULL;
    enum status st = perform(m, method, path, body, NULL, m->max_response, true, &b, err);
    if (st != ST_OK)
        return st;
    if (http_status)
        *http_status = m->last_http;
    if (resp && b.len > 0)
        *resp = json_loadb(b.buf, b.len, JSON_ALLOW_NUL, NULL);
    sb_free(&b);
    return ST_OK;
}

/* "/api/<what>" or "/api/<what>/<vhost>" */
char *mgmt_collection_path(const char *what, const char *vhost)
{
    if (!vhost)
        return xasprintf("/api/%s", what);
    char *e = mgmt_escape(vhost);
    char *p = xasprintf("/api/%s/%s", what, e);
    free(e);
    return p;
}

typedef enum status (*page_fn)(const json_t *items, const char *vhost, void *ctx,
                               struct error *err);

/* Fetches every page of a paged collection, handing each page's items to fn. */
static enum status get_paged(struct mgmt *m, const char *what, const char *vhost,
                             const char *columns, page_fn fn, void *ctx, struct error *err)
{
    char *base = mgmt_collection_path(what, vhost);
    size_t budget = m->max_response;
    enum status st = ST_OK;
    for (long page = 1; page <= MGMT_MAX_PAGES; page++) {
        char *path = xasprintf("%s?columns=%s&page=%ld&page_size=%d&pagination=true", base, columns,
                               page, m->page_size);
        json_t *j = NULL;
        st = get_json(m, path, vhost, &budget, &j, err);
        free(path);
        if (st != ST_OK) {
            /* Queues deleted while paging shrink the last page away: that is the end. */
            if (page > 1 && m->page_out_of_range) {
                error_clear(err);
                m->last = MGMT_OK;
                st = ST_OK;
            }
            break;
        }
        if (json_is_array(j)) { /* a server that does not page sent everything */
            st = fn(j, vhost, ctx, err);
            json_decref(j);
            break;
        }
        const json_t *items = json_object_get(j, "items");
        const json_t *pc = json_object_get(j, "page_count");
        if (!json_is_array(items)) {
            json_decref(j);
            st = mgmt_fail(m, MGMT_BAD_RESPONSE, err,
                           "the management API at %s sent a page of %s without an items array",
                           m->display, what);
            break;
        }
        st = fn(items, vhost, ctx, err);
        json_int_t count = json_is_integer(pc) ? json_integer_value(pc) : 1;
        bool last = st != ST_OK || json_array_size(items) == 0 || page >= count;
        json_decref(j);
        if (last)
            break;
    }
    free(base);
    return st;
}

struct queues_ctx {
    struct mgmt_queue **out;
    size_t *n;
};

static enum status queues_page(const json_t *items, const char *vhost, void *ctx, struct error *err)
{
    struct queues_ctx *q = ctx;
    return mgmt_queues_from_json(items, vhost, q->out, q->n, err);
}

enum status mgmt_list_queues(struct mgmt *m, const char *vhost, struct mgmt_queue **out, size_t *n,
                             struct error *err)
{
    *out = NULL;
    *n = 0;
    struct queues_ctx ctx = {out, n};
    enum status st = get_paged(m, "queues", vhost, mgmt_queue_columns, queues_page, &ctx, err);
    if (st != ST_OK) {
        mgmt_queues_free(out, n);
        return st;
    }
    *n = mgmt_queues_sort_unique(*out, *n);
    return ST_OK;
}

struct exchanges_ctx {
    struct mgmt_exchange **out;
    size_t *n;
    const json_t *policies;
};

static enum status exchanges_page(const json_t *items, const char *vhost, void *ctx,
                                  struct error *err)
{
    struct exchanges_ctx *x = ctx;
    return mgmt_exchanges_from_json(items, x->policies, vhost, x->out, x->n, err);
}

enum status mgmt_list_exchanges(struct mgmt *m, const char *vhost, struct mgmt_exchange **out,
                                size_t *n, struct error *err)
{
    *out = NULL;
    *n = 0;
    /* Policies first (a small list): the alternate exchange may be set by one. A user who may
     * not read them still gets the exchanges, with alternate_unknown where it matters. */
    char *ppath = mgmt_collection_path("policies", vhost);
    size_t budget = m->max_response;
    json_t *policies = NULL;
    enum status st = get_json(m, ppath, vhost, &budget, &policies, err);
    free(ppath);
    if (st != ST_OK) {
        if (m->last != MGMT_AUTH && m->last != MGMT_FORBIDDEN && m->last != MGMT_VHOST_REFUSED)
            return st;
        error_clear(err);
        policies = NULL;
    }
    struct exchanges_ctx ctx = {out, n, json_is_array(policies) ? policies : NULL};
    st = get_paged(m, "exchanges", vhost, mgmt_exchange_columns, exchanges_page, &ctx, err);
    json_decref(policies);
    if (st != ST_OK)
        mgmt_exchanges_free(out, n);
    return st;
}

enum status mgmt_list_bindings(struct mgmt *m, const char *vhost, struct mgmt_binding **out,
                               size_t *n, struct error *err)
{
    *out = NULL;
    *n = 0;
    char *base = mgmt_collection_path("bindings", vhost);
    char *path = xasprintf("%s?columns=%s", base, mgmt_binding_columns);
    size_t budget = m->max_response;
    json_t *j = NULL;
    enum status st = get_json(m, path, vhost, &budget, &j, err);
    free(path);
    free(base);
    if (st != ST_OK)
        return st;
    st = mgmt_take_bindings(m, j, vhost, out, n, err);
    json_decref(j);
    return st;
}

enum status mgmt_take_bindings(struct mgmt *m, const json_t *j, const char *vhost,
                               struct mgmt_binding **out, size_t *n, struct error *err)
{
    if (!json_is_array(j))
        return mgmt_fail(m, MGMT_BAD_RESPONSE, err,
                         "the management API at %s sent bindings that are not an array",
                         m->display);
    return mgmt_bindings_from_json(j, vhost, out, n, err);
}

enum status mgmt_overview(struct mgmt *m, struct mgmt_overview *out, struct error *err)
{
    memset(out, 0, sizeof *out);
    char *path = xasprintf("/api/overview?columns=%s", mgmt_overview_columns);
    size_t budget = m->max_response;
    json_t *j = NULL;
    enum status st = get_json(m, path, NULL, &budget, &j, err);
    free(path);
    if (st != ST_OK)
        return st;
    if (!json_is_object(j)) {
        json_decref(j);
        return mgmt_fail(m, MGMT_BAD_RESPONSE, err,
                         "the management API at %s sent an overview that is not an object",
                         m->display);
    }
    mgmt_overview_from_json(j, out);
    json_decref(j);
    return ST_OK;
}

enum status mgmt_list_nodes(struct mgmt *m, struct mgmt_node **out, size_t *n, struct error *err)
{
    *out = NULL;
    *n = 0;
    char *path = xasprintf("/api/nodes?columns=%s", mgmt_node_columns);
    size_t budget = m->max_response;
    json_t *j = NULL;
    enum status st = get_json(m, path, NULL, &budget, &j, err);
    free(path);
    if (st != ST_OK)
        return st;
    st = json_is_array(j)
             ? mgmt_nodes_from_json(j, out, n, err)
             : mgmt_fail(m, MGMT_BAD_RESPONSE, err,
                         "the management API at %s sent nodes that are not an array", m->display);
    json_decref(j);
    return st;
}
