/*
 * mgmt: the management HTTP API client. The transport half (libcurl: one easy handle, basic
 * auth through CURLOPT_USERNAME/PASSWORD, capped responses, failures classified into
 * enum mgmt_error) and the parsing half (jansson, every field type-checked) meet in the
 * list functions; the parsers are public so fixtures can be read without a broker.
 *
 * Measured on 3.10.8: `columns` accepts nested paths (message_stats.publish_details.rate), and
 * message_stats is absent until a queue has seen a publish; a queue younger than the stats
 * interval (5 s) is listed with only name, vhost, type and arguments. Paging needs `page` (the
 * `pagination` flag alone does nothing; `name` filters only with `page`), page_size is at
 * most 500, an empty vhost answers page_count 0, and a page past the end is HTTP 400
 * page_out_of_range. /api/bindings ignores paging. Every refusal is HTTP 401 (never 403),
 * told apart by its "reason"; a path outside the API answers 406 to Accept: application/json.
 */
#include "mgmt.h"

#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "sanitize.h"
#include "util.h"

#define MGMT_DEFAULT_TIMEOUT_MS 30000L
#define MGMT_DEFAULT_CONNECT_MS 5000L
#define MGMT_DEFAULT_MAX_RESPONSE ((size_t)256 << 20)
#define MGMT_MAX_PAGE_SIZE 500
#define MGMT_MAX_PAGES 100000

static const char QUEUE_COLUMNS[] =
    "name,vhost,type,messages,messages_ready,messages_unacknowledged,consumers,arguments,"
    "effective_policy_definition,policy,state,message_stats.publish_details.rate";
static const char EXCHANGE_COLUMNS[] = "name,vhost,type,internal,arguments,policy";
static const char BINDING_COLUMNS[] = "source,vhost,destination,destination_type,routing_key,"
                                      "arguments";
static const char OVERVIEW_COLUMNS[] = "product_name,product_version,rabbitmq_version,"
                                       "management_version,erlang_version,cluster_name,node,"
                                       "rates_mode";

struct mgmt {
    CURL *curl;
    struct curl_slist *headers;
    char *base;    /* scheme://host:port[/prefix], no trailing slash, no userinfo */
    char *display; /* base + "/" */
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

static const char *const mgmt_error_msgs[] = {
#define X(e, msg) msg,
    MGMT_ERROR_LIST(X)
#undef X
};

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

/* Text from the server or the user, made safe and short for one-line messages. */
static const char *clip(char *buf, size_t cap, const char *s)
{
    struct strbuf sb;
    sb_init(&sb);
    sanitize_fit(&sb, s ? s : "", s ? strlen(s) : 0, 120, 0);
    snprintf(buf, cap, "%s", sb.buf ? sb.buf : "");
    sb_free(&sb);
    return buf;
}

static enum status fail(struct mgmt *m, enum mgmt_error kind, struct error *err, const char *fmt,
                        ...) __attribute__((format(printf, 4, 5)));
static enum status fail(struct mgmt *m, enum mgmt_error kind, struct error *err, const char *fmt,
                        ...)
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
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return map[kind];
}

/* --- opening ------------------------------------------------------------------------- */

/* Validates the URL and gives the base without userinfo, query or trailing slash. */
static enum status parse_base(const char *url, char **base, struct error *err)
{
    CURLU *u = curl_url();
    char *part = NULL, *full = NULL;
    enum status st = ST_OK;
    if (!u)
        return fail(NULL, MGMT_CONFIG, err, "out of memory parsing the management URL");
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK) {
        st = fail(NULL, MGMT_CONFIG, err,
                  "the management URL is not a valid http:// or https:// URL");
        goto out;
    }
    bool creds = false;
    if (curl_url_get(u, CURLUPART_USER, &part, 0) == CURLUE_OK)
        creds = true;
    curl_free(part);
    part = NULL;
    if (curl_url_get(u, CURLUPART_PASSWORD, &part, 0) == CURLUE_OK)
        creds = true;
    curl_free(part);
    part = NULL;
    curl_url_set(u, CURLUPART_USER, NULL, 0);
    curl_url_set(u, CURLUPART_PASSWORD, NULL, 0);
    curl_url_set(u, CURLUPART_OPTIONS, NULL, 0);
    if (curl_url_get(u, CURLUPART_URL, &full, 0) != CURLUE_OK) {
        st = fail(NULL, MGMT_CONFIG, err, "the management URL is not a valid URL");
        goto out;
    }
    char shown[160];
    clip(shown, sizeof shown, full);
    if (creds) {
        st = fail(NULL, MGMT_CONFIG, err,
                  "the management URL %s must not carry credentials: give the user separately "
                  "and the password in a file",
                  shown);
        goto out;
    }
    if (curl_url_get(u, CURLUPART_SCHEME, &part, 0) != CURLUE_OK ||
        (strcmp(part, "http") != 0 && strcmp(part, "https") != 0)) {
        st = fail(NULL, MGMT_CONFIG, err,
                  "the management URL %s must start with http:// or https://", shown);
        goto out;
    }
    curl_free(part);
    part = NULL;
    if (curl_url_get(u, CURLUPART_QUERY, &part, 0) == CURLUE_OK ||
        curl_url_get(u, CURLUPART_FRAGMENT, &part, 0) == CURLUE_OK) {
        st = fail(NULL, MGMT_CONFIG, err,
                  "the management URL %s must not have a query or a fragment", shown);
        goto out;
    }
    size_t len = strlen(full);
    while (len > 0 && full[len - 1] == '/')
        len--;
    *base = xstrndup(full, len);
out:
    curl_free(part);
    curl_free(full);
    curl_url_cleanup(u);
    return st;
}

static size_t on_data(char *data, size_t size, size_t nmemb, void *ud);

struct sink {
    struct strbuf sb;
    size_t limit;
    bool too_big;
};

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

enum status mgmt_open(const struct mgmt_config *cfg, struct mgmt **out, struct error *err)
{
    if (!cfg || !cfg->url || !*cfg->url)
        return fail(NULL, MGMT_CONFIG, err, "no management API URL was given");
    if (!cfg->user || !*cfg->user)
        return fail(NULL, MGMT_CONFIG, err, "no management API user was given");
    char *base = NULL;
    enum status st = parse_base(cfg->url, &base, err);
    if (st != ST_OK)
        return st;
    struct mgmt *m = xcalloc(1, sizeof *m);
    m->base = base;
    m->display = xasprintf("%s/", base);
    m->user = xstrdup(cfg->user);
    m->password = xstrdup(cfg->password ? cfg->password : "");
    m->timeout_ms = cfg->timeout_ms > 0 ? cfg->timeout_ms : MGMT_DEFAULT_TIMEOUT_MS;
    m->max_response = cfg->max_response ? cfg->max_response : MGMT_DEFAULT_MAX_RESPONSE;
    m->page_size = cfg->page_size > 0 && cfg->page_size <= MGMT_MAX_PAGE_SIZE ? cfg->page_size
                                                                              : MGMT_MAX_PAGE_SIZE;
    m->curl = curl_easy_init();
    if (!m->curl) {
        mgmt_close(&m);
        return fail(NULL, MGMT_CONFIG, err, "libcurl could not be initialised");
    }
    CURL *c = m->curl;
    m->headers = curl_slist_append(NULL, "Accept: application/json");
    m->headers = curl_slist_append(m->headers, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, m->headers);
    curl_easy_setopt(c, CURLOPT_USERNAME, m->user);
    curl_easy_setopt(c, CURLOPT_PASSWORD, m->password);
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
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, m->errbuf);
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
    free(m->base);
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
    clip(why, sizeof why, m->errbuf[0] ? m->errbuf : curl_easy_strerror(rc));
    if (s->too_big || rc == CURLE_FILESIZE_EXCEEDED)
        return fail(m, MGMT_BAD_RESPONSE, err,
                    "the management API at %s sent more than the %zu-byte limit for %s", m->display,
                    m->max_response, path);
    if (is_tls_error(rc))
        return fail(m, MGMT_TLS, err, "TLS with the management API at %s failed: %s%s", m->display,
                    why, strstr(why, "wrong version number") ? " (is it plain http?)" : "");
    if (rc == CURLE_OPERATION_TIMEDOUT)
        return fail(m, MGMT_TIMEOUT, err, "the management API at %s did not answer within %ld ms",
                    m->display, m->timeout_ms);
    if (rc == CURLE_UNSUPPORTED_PROTOCOL || rc == CURLE_WEIRD_SERVER_REPLY)
        return fail(m, MGMT_BAD_RESPONSE, err,
                    "%s does not answer HTTP (%s): is that the AMQP port rather than the "
                    "management port?",
                    m->display, why);
    return fail(m, MGMT_UNREACHABLE, err, "cannot reach the management API at %s: %s", m->display,
                why);
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
    clip(r, sizeof r, reason ? reason : tag ? tag : "no reason given");
    clip(u, sizeof u, m->user);
    clip(v, sizeof v, vhost ? vhost : "");
    m->page_out_of_range = code == 400 && tag && strcmp(tag, "page_out_of_range") == 0;
    enum status st;
    if (code == 401 && reason && strstr(reason, "Not management user"))
        st = fail(m, MGMT_FORBIDDEN, err,
                  "user %s may not use the management API at %s: it needs the management, "
                  "monitoring or administrator tag",
                  u, m->display);
    else if (code == 401 && reason && strstr(reason, "virtual host"))
        st = fail(m, MGMT_VHOST_REFUSED, err, "user %s has no permissions on vhost %s at %s", u,
                  vhost ? v : "?", m->display);
    else if (code == 401)
        st = fail(m, MGMT_AUTH, err, "the management API at %s refused the credentials for user %s",
                  m->display, u);
    else if (code == 403)
        st = fail(m, MGMT_FORBIDDEN, err,
                  "the management API at %s does not let user %s read %s: %s", m->display, u, path,
                  r);
    else if (code == 406) /* measured: what a path outside the API answers to JSON clients */
        st = fail(m, MGMT_CONFIG, err,
                  "the management API is not at %s (HTTP 406 for %s): check the URL's path",
                  m->display, path);
    else if (code == 404 && vhost)
        st = fail(m, MGMT_NOT_FOUND, err, "vhost %s does not exist at %s", v, m->display);
    else if (code == 404)
        st = fail(m, MGMT_NOT_FOUND, err,
                  "the management API at %s has no %s (HTTP 404): check the URL's path", m->display,
                  path);
    else if (code >= 500)
        st = fail(m, MGMT_SERVER_ERROR, err,
                  "the management API at %s failed with HTTP %ld for %s: %s", m->display, code,
                  path, r);
    else
        st =
            fail(m, MGMT_BAD_RESPONSE, err, "the management API at %s answered HTTP %ld for %s: %s",
                 m->display, code, path, r);
    json_decref(j);
    return st;
}

/* One request. path starts with "/api/"; shown (the path without its query) names it in
 * messages. On success *body holds the response (the caller frees it with sb_free). */
static enum status perform(struct mgmt *m, const char *method, const char *path,
                           const char *payload, const char *vhost, size_t limit, bool any_status,
                           struct strbuf *body, struct error *err)
{
    char *url = xasprintf("%s%s", m->base, path);
    char shown[200];
    const char *q = strchr(path, '?');
    snprintf(shown, sizeof shown, "%.*s", (int)(q ? (size_t)(q - path) : strlen(path)), path);
    struct sink s = {.limit = limit};
    sb_init(&s.sb);
    CURL *c = m->curl;
    m->errbuf[0] = '\0';
    m->last_http = 0;
    m->page_out_of_range = false;
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
    if (payload) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, payload);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(payload));
    }
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, strcmp(method, "GET") == 0 ? NULL : method);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &s);
    CURLcode rc = curl_easy_perform(c);
    free(url);
    enum status st = ST_OK;
    if (rc != CURLE_OK) {
        st = transport_error(m, rc, &s, shown, err);
    } else {
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &m->last_http);
        if (!any_status && (m->last_http < 200 || m->last_http > 299))
            st = http_error(m, m->last_http, &s, shown, vhost, err);
    }
    if (st != ST_OK) {
        sb_free(&s.sb);
        return st;
    }
    m->last = MGMT_OK;
    *body = s.sb;
    return ST_OK;
}

static enum status parse_body(struct mgmt *m, const struct strbuf *b, const char *what,
                              json_t **out, struct error *err)
{
    json_error_t je;
    *out = json_loadb(b->buf ? b->buf : "", b->len, JSON_ALLOW_NUL, &je);
    if (!*out) {
        char t[160];
        return fail(m, MGMT_BAD_RESPONSE, err,
                    "the management API at %s sent invalid JSON for %s: %s at line %d", m->display,
                    what, clip(t, sizeof t, je.text), je.line);
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
        return fail(m, MGMT_CONFIG, err,
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
    enum status st = perform(m, "GET", path, NULL, vhost, *budget, false, &b, err);
    if (st != ST_OK && vhost && m->last == MGMT_NOT_FOUND)
        return vhost_or_path(m, what, err);
    if (st != ST_OK)
        return st;
    *budget -= b.len;
    st = parse_body(m, &b, what, out, err);
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
static char *collection_path(const char *what, const char *vhost)
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
    char *base = collection_path(what, vhost);
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
            st = fail(m, MGMT_BAD_RESPONSE, err,
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
    enum status st = get_paged(m, "queues", vhost, QUEUE_COLUMNS, queues_page, &ctx, err);
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
    char *ppath = collection_path("policies", vhost);
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
    st = get_paged(m, "exchanges", vhost, EXCHANGE_COLUMNS, exchanges_page, &ctx, err);
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
    char *base = collection_path("bindings", vhost);
    char *path = xasprintf("%s?columns=%s", base, BINDING_COLUMNS);
    size_t budget = m->max_response;
    json_t *j = NULL;
    enum status st = get_json(m, path, vhost, &budget, &j, err);
    free(path);
    free(base);
    if (st != ST_OK)
        return st;
    if (!json_is_array(j)) {
        json_decref(j);
        return fail(m, MGMT_BAD_RESPONSE, err,
                    "the management API at %s sent bindings that are not an array", m->display);
    }
    st = mgmt_bindings_from_json(j, vhost, out, n, err);
    json_decref(j);
    return st;
}

enum status mgmt_overview(struct mgmt *m, struct mgmt_overview *out, struct error *err)
{
    memset(out, 0, sizeof *out);
    char *path = xasprintf("/api/overview?columns=%s", OVERVIEW_COLUMNS);
    size_t budget = m->max_response;
    json_t *j = NULL;
    enum status st = get_json(m, path, NULL, &budget, &j, err);
    free(path);
    if (st != ST_OK)
        return st;
    if (!json_is_object(j)) {
        json_decref(j);
        return fail(m, MGMT_BAD_RESPONSE, err,
                    "the management API at %s sent an overview that is not an object", m->display);
    }
    mgmt_overview_from_json(j, out);
    json_decref(j);
    return ST_OK;
}

/* --- parsing ------------------------------------------------------------------------- */

/* A string field, or NULL when absent, of another type, or holding a NUL. */
static char *jstr(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_string(v))
        return NULL;
    size_t len = json_string_length(v);
    const char *s = json_string_value(v);
    if (memchr(s, '\0', len))
        return NULL;
    return xstrndup(s, len);
}

/* A non-negative integer field, or -1. */
static int64_t jcount(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return -1;
    return (int64_t)json_integer_value(v);
}

static json_t *jobject_copy(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_object(v) ? json_deep_copy(v) : NULL;
}

static const json_t *items_of(const json_t *j)
{
    if (json_is_array(j))
        return j;
    if (json_is_object(j) && json_is_array(json_object_get(j, "items")))
        return json_object_get(j, "items");
    return NULL;
}

/* A string setting: the x- argument wins over the policy's key (as the broker resolves
 * dead-letter-exchange, dead-letter-routing-key and overflow). */
static char *resolve_str(const struct mgmt_queue *q, const char *arg, const char *key,
                         enum mgmt_origin *origin)
{
    char *v = q->arguments ? jstr(q->arguments, arg) : NULL;
    enum mgmt_origin o = MGMT_FROM_ARGUMENT;
    if (!v && q->policy_definition) {
        v = jstr(q->policy_definition, key);
        o = MGMT_FROM_POLICY;
    }
    if (origin)
        *origin = v ? o : MGMT_FROM_NONE;
    return v;
}

/* A limit: the smaller of argument and policy (message-ttl, max-length, delivery-limit). */
static int64_t resolve_min(const struct mgmt_queue *q, const char *arg, const char *key)
{
    int64_t a = q->arguments ? jcount(q->arguments, arg) : -1;
    int64_t p = q->policy_definition ? jcount(q->policy_definition, key) : -1;
    if (a < 0)
        return p;
    if (p < 0)
        return a;
    return a < p ? a : p;
}

static enum mgmt_queue_type queue_type_of(const char *t)
{
    if (!t)
        return MGMT_QT_UNKNOWN;
    if (strcmp(t, "classic") == 0)
        return MGMT_QT_CLASSIC;
    if (strcmp(t, "quorum") == 0)
        return MGMT_QT_QUORUM;
    if (strcmp(t, "stream") == 0)
        return MGMT_QT_STREAM;
    return MGMT_QT_OTHER;
}

static void queue_read(const json_t *o, char *name, char *vhost, struct mgmt_queue *q)
{
    memset(q, 0, sizeof *q);
    q->name = name;
    q->vhost = vhost;
    q->arguments = jobject_copy(o, "arguments");
    q->policy_definition = jobject_copy(o, "effective_policy_definition");
    q->type = jstr(o, "type");
    if (!q->type && q->arguments) /* older servers: only the argument says */
        q->type = jstr(q->arguments, "x-queue-type");
    q->qtype = queue_type_of(q->type);
    q->state = jstr(o, "state");
    q->policy = jstr(o, "policy");
    q->messages = jcount(o, "messages");
    q->ready = jcount(o, "messages_ready");
    q->unacked = jcount(o, "messages_unacknowledged");
    q->consumers = jcount(o, "consumers");
    q->publish_rate = -1;
    q->stats_pending =
        !json_object_get(o, "messages") && !json_object_get(o, "effective_policy_definition");
    const json_t *ms = json_object_get(o, "message_stats");
    const json_t *rate = json_object_get(json_object_get(ms, "publish_details"), "rate");
    if (json_is_number(rate) && json_number_value(rate) >= 0)
        q->publish_rate = json_number_value(rate);
    q->dead_letter_exchange =
        resolve_str(q, "x-dead-letter-exchange", "dead-letter-exchange", &q->dlx_origin);
    q->dead_letter_routing_key =
        resolve_str(q, "x-dead-letter-routing-key", "dead-letter-routing-key", &q->dlrk_origin);
    q->overflow = resolve_str(q, "x-overflow", "overflow", NULL);
    q->delivery_limit = resolve_min(q, "x-delivery-limit", "delivery-limit");
    q->max_length = resolve_min(q, "x-max-length", "max-length");
    q->max_length_bytes = resolve_min(q, "x-max-length-bytes", "max-length-bytes");
    q->message_ttl = resolve_min(q, "x-message-ttl", "message-ttl");
}

/* name and vhost of an item, or false when it cannot be identified. */
static bool ident(const json_t *o, const char *name_key, const char *vhost_hint, char **name,
                  char **vhost)
{
    *name = json_is_object(o) ? jstr(o, name_key) : NULL;
    if (!*name)
        return false;
    *vhost = jstr(o, "vhost");
    if (!*vhost && vhost_hint)
        *vhost = xstrdup(vhost_hint);
    if (!*vhost) {
        free(*name);
        return false;
    }
    return true;
}

static enum status not_items(const char *what, struct error *err)
{
    return error_set(err, ST_EPARSE, "the %s response is neither an array nor a page of items",
                     what);
}

enum status mgmt_queues_from_json(const json_t *j, const char *vhost_hint, struct mgmt_queue **out,
                                  size_t *n, struct error *err)
{
    const json_t *items = items_of(j);
    if (!items)
        return not_items("queues", err);
    size_t cap = *n, k = json_array_size(items);
    if (k == 0)
        return ST_OK;
    xgrow((void **)out, &cap, *n + k, sizeof **out);
    for (size_t i = 0; i < k; i++) {
        const json_t *o = json_array_get(items, i);
        char *name, *vhost;
        if (ident(o, "name", vhost_hint, &name, &vhost))
            queue_read(o, name, vhost, &(*out)[(*n)++]);
    }
    return ST_OK;
}

static enum mgmt_exchange_type exchange_type_of(const char *t)
{
    static const struct {
        const char *name;
        enum mgmt_exchange_type type;
    } types[] = {{"direct", MGMT_EX_DIRECT},
                 {"fanout", MGMT_EX_FANOUT},
                 {"topic", MGMT_EX_TOPIC},
                 {"headers", MGMT_EX_HEADERS}};
    if (!t)
        return MGMT_EX_UNKNOWN;
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (strcmp(t, types[i].name) == 0)
            return types[i].type;
    return MGMT_EX_OTHER;
}

/* The definition of policy `name` in vhost, from /api/policies' array, or NULL. */
static const json_t *policy_definition(const json_t *policies, const char *vhost, const char *name)
{
    for (size_t i = 0; i < json_array_size(policies); i++) {
        const json_t *p = json_array_get(policies, i);
        const char *pn = json_string_value(json_object_get(p, "name"));
        const char *pv = json_string_value(json_object_get(p, "vhost"));
        const json_t *def = json_object_get(p, "definition");
        if (pn && pv && strcmp(pn, name) == 0 && strcmp(pv, vhost) == 0 && json_is_object(def))
            return def;
    }
    return NULL;
}

enum status mgmt_exchanges_from_json(const json_t *j, const json_t *policies,
                                     const char *vhost_hint, struct mgmt_exchange **out, size_t *n,
                                     struct error *err)
{
    const json_t *items = items_of(j);
    if (!items)
        return not_items("exchanges", err);
    size_t cap = *n, k = json_array_size(items);
    if (k == 0)
        return ST_OK;
    xgrow((void **)out, &cap, *n + k, sizeof **out);
    for (size_t i = 0; i < k; i++) {
        const json_t *o = json_array_get(items, i);
        char *name, *vhost;
        if (!ident(o, "name", vhost_hint, &name, &vhost))
            continue;
        struct mgmt_exchange *x = &(*out)[(*n)++];
        memset(x, 0, sizeof *x);
        x->name = name;
        x->vhost = vhost;
        x->type = jstr(o, "type");
        x->etype = exchange_type_of(x->type);
        x->internal = json_is_true(json_object_get(o, "internal"));
        x->policy = jstr(o, "policy");
        x->arguments = jobject_copy(o, "arguments");
        /* For exchanges the argument wins over the policy. */
        if (x->arguments)
            x->alternate_exchange = jstr(x->arguments, "alternate-exchange");
        if (!x->alternate_exchange && x->policy) {
            const json_t *def =
                json_is_array(policies) ? policy_definition(policies, vhost, x->policy) : NULL;
            if (def)
                x->alternate_exchange = jstr(def, "alternate-exchange");
            else
                x->alternate_unknown = true;
        }
    }
    return ST_OK;
}

enum status mgmt_bindings_from_json(const json_t *j, const char *vhost_hint,
                                    struct mgmt_binding **out, size_t *n, struct error *err)
{
    const json_t *items = items_of(j);
    if (!items)
        return not_items("bindings", err);
    size_t cap = *n, k = json_array_size(items);
    if (k == 0)
        return ST_OK;
    xgrow((void **)out, &cap, *n + k, sizeof **out);
    for (size_t i = 0; i < k; i++) {
        const json_t *o = json_array_get(items, i);
        char *source, *vhost;
        if (!ident(o, "source", vhost_hint, &source, &vhost))
            continue;
        char *dest = jstr(o, "destination");
        if (!dest) {
            free(source);
            free(vhost);
            continue;
        }
        struct mgmt_binding *b = &(*out)[(*n)++];
        memset(b, 0, sizeof *b);
        b->vhost = vhost;
        b->source = source;
        b->destination = dest;
        const char *dt = json_string_value(json_object_get(o, "destination_type"));
        b->dest_type = !dt                           ? MGMT_DEST_UNKNOWN
                       : strcmp(dt, "queue") == 0    ? MGMT_DEST_QUEUE
                       : strcmp(dt, "exchange") == 0 ? MGMT_DEST_EXCHANGE
                                                     : MGMT_DEST_UNKNOWN;
        b->routing_key = jstr(o, "routing_key");
        b->arguments = jobject_copy(o, "arguments");
    }
    return ST_OK;
}

void mgmt_overview_from_json(const json_t *j, struct mgmt_overview *o)
{
    memset(o, 0, sizeof *o);
    if (!json_is_object(j))
        return;
    o->product_name = jstr(j, "product_name");
    o->rabbitmq_version = jstr(j, "rabbitmq_version");
    if (!o->rabbitmq_version)
        o->rabbitmq_version = jstr(j, "product_version");
    o->management_version = jstr(j, "management_version");
    o->erlang_version = jstr(j, "erlang_version");
    o->cluster_name = jstr(j, "cluster_name");
    o->node = jstr(j, "node");
    o->rates_mode = jstr(j, "rates_mode");
}

static void queue_clear(struct mgmt_queue *q)
{
    free(q->name);
    free(q->vhost);
    free(q->type);
    free(q->state);
    free(q->policy);
    json_decref(q->arguments);
    json_decref(q->policy_definition);
    free(q->dead_letter_exchange);
    free(q->dead_letter_routing_key);
    free(q->overflow);
}

void mgmt_queues_free(struct mgmt_queue **p, size_t *n)
{
    for (size_t i = 0; *p && i < *n; i++)
        queue_clear(&(*p)[i]);
    free(*p);
    *p = NULL;
    *n = 0;
}

void mgmt_exchanges_free(struct mgmt_exchange **p, size_t *n)
{
    for (size_t i = 0; *p && i < *n; i++) {
        struct mgmt_exchange *x = &(*p)[i];
        free(x->name);
        free(x->vhost);
        free(x->type);
        free(x->policy);
        free(x->alternate_exchange);
        json_decref(x->arguments);
    }
    free(*p);
    *p = NULL;
    *n = 0;
}

void mgmt_bindings_free(struct mgmt_binding **p, size_t *n)
{
    for (size_t i = 0; *p && i < *n; i++) {
        struct mgmt_binding *b = &(*p)[i];
        free(b->vhost);
        free(b->source);
        free(b->destination);
        free(b->routing_key);
        json_decref(b->arguments);
    }
    free(*p);
    *p = NULL;
    *n = 0;
}

void mgmt_overview_free(struct mgmt_overview *o)
{
    free(o->product_name);
    free(o->rabbitmq_version);
    free(o->management_version);
    free(o->erlang_version);
    free(o->cluster_name);
    free(o->node);
    free(o->rates_mode);
    memset(o, 0, sizeof *o);
}

static int queue_cmp(const void *a, const void *b)
{
    const struct mgmt_queue *x = a, *y = b;
    int c = strcmp(x->vhost, y->vhost);
    return c ? c : strcmp(x->name, y->name);
}

size_t mgmt_queues_sort_unique(struct mgmt_queue *q, size_t n)
{
    if (n < 2)
        return n;
    /* qsort is not stable, so which duplicate survives is arbitrary: they describe the
     * same queue a few milliseconds apart. */
    qsort(q, n, sizeof *q, queue_cmp);
    size_t w = 1;
    for (size_t r = 1; r < n; r++) {
        if (queue_cmp(&q[w - 1], &q[r]) == 0)
            queue_clear(&q[r]);
        else
            q[w++] = q[r];
    }
    return w;
}
