/*
 * broker_opts: connection options shared by the broker commands and the explorer.
 */
#include "broker_opts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sanitize.h"
#include "stopsig.h"
#include "util.h"

void broker_opts_init(struct broker_opts *b)
{
    memset(b, 0, sizeof *b);
}

void broker_opts_free(struct broker_opts *b)
{
    /* The URLs' copies may hold a password too (env_urls is cut by strtok: its whole length). */
    conn_secret_free(b->password);
    if (b->env_urls) {
        explicit_bzero(b->env_urls, b->env_urls_len);
        free(b->env_urls);
    }
    free(b->mgmt_store);
    for (size_t i = 0; i < 16; i++)
        conn_secret_free(b->url_store[i]);
    memset(b, 0, sizeof *b);
}

static const char *value(int argc, char **argv, int *i, const char *name, struct error *err)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (a[n] == '=')
        return a + n + 1;
    if (*i + 1 >= argc) {
        error_set(err, ST_EINVAL, "%s needs a value", name);
        error_kind_set(err, ST_EINVAL, ERRK_USAGE);
        return NULL;
    }
    return argv[++*i];
}

static bool is(const char *a, const char *name)
{
    size_t n = strlen(name);
    return strncmp(a, name, n) == 0 && (a[n] == '\0' || a[n] == '=');
}

/* An option that takes a value: *to set, or BOPT_ERROR with err filled. */
static enum bopt_next valued(const char **to, int argc, char **argv, int *i, const char *name,
                             struct error *err)
{
    *to = value(argc, argv, i, name, err);
    return *to ? BOPT_CONSUMED : BOPT_ERROR;
}

static enum bopt_next usage_error(struct error *err, const char *msg)
{
    error_set(err, ST_EINVAL, "%s", msg);
    error_kind_set(err, ST_EINVAL, ERRK_USAGE);
    return BOPT_ERROR;
}

enum bopt_next broker_opts_next(struct broker_opts *b, int argc, char **argv, int *i,
                                struct error *err)
{
    const char *a = argv[*i];
    const char *v;
    if (is(a, "--url")) {
        if (!(v = value(argc, argv, i, "--url", err)))
            return BOPT_ERROR;
        if (b->n_urls >= sizeof b->urls / sizeof *b->urls)
            return usage_error(err, "at most 16 --url");
        if (*v) /* --url= (empty) names no broker: as if no --url were given */
            b->urls[b->n_urls++] = (char *)(uintptr_t)v;
        return BOPT_CONSUMED;
    }
    if (is(a, "--password")) /* refused: a password on the command line shows in ps */
        return usage_error(err, "no --password: it would show in ps; use --password-file FILE, "
                                "DLQX_PASSWORD_FILE or --ask-password");
    if (is(a, "--password-file"))
        return valued(&b->password_file, argc, argv, i, "--password-file", err);
    if (is(a, "--cacert"))
        return valued(&b->cacert, argc, argv, i, "--cacert", err);
    if (is(a, "--cert"))
        return valued(&b->cert, argc, argv, i, "--cert", err);
    if (is(a, "--key"))
        return valued(&b->key, argc, argv, i, "--key", err);
    if (is(a, "--mgmt-url"))
        return valued(&b->mgmt_url, argc, argv, i, "--mgmt-url", err);
    if (is(a, "--node-order")) {
        if (!(v = value(argc, argv, i, "--node-order", err)))
            return BOPT_ERROR;
        if (!conn_order_parse(v, &b->order))
            return usage_error(err, "--node-order is given (the nodes in the order of the URLs) "
                                    "or shuffle (a random order)");
        b->order_given = true;
        return BOPT_CONSUMED;
    }
    if (is(a, "--heartbeat")) {
        if (!(v = value(argc, argv, i, "--heartbeat", err)))
            return BOPT_ERROR;
        if (!broker_parse_heartbeat("--heartbeat", v, &b->heartbeat_s, err)) {
            error_kind_set(err, ST_EINVAL, ERRK_USAGE);
            return BOPT_ERROR;
        }
        b->heartbeat_given = true;
        return BOPT_CONSUMED;
    }
    bool *flag = strcmp(a, "--ask-password") == 0    ? &b->ask_password
                 : strcmp(a, "--tls-no-verify") == 0 ? &b->tls_no_verify
                 : strcmp(a, "--no-mgmt") == 0       ? &b->no_mgmt
                 : strcmp(a, "--read-only") == 0     ? &b->read_only
                                                     : NULL;
    if (!flag)
        return BOPT_NOT_MINE;
    *flag = true;
    return BOPT_CONSUMED;
}

bool broker_parse_heartbeat(const char *where, const char *v, int *out, struct error *err)
{
    char *end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10);
    bool digits = *v >= '0' && *v <= '9' && end && !*end && errno == 0;
    if (digits && n == 0) {
        error_set(err, ST_EINVAL,
                  "%s 0 would turn heartbeats off: a hung node would then hold dlqx for good (a "
                  "send to it never returns); give 1 to 600 seconds",
                  where);
        return false;
    }
    if (!digits || n < 1 || n > 600) {
        error_set(err, ST_EINVAL, "%s takes a number of seconds from 1 to 600", where);
        return false;
    }
    *out = (int)n;
    return true;
}

/* A yes or a no, case-insensitive: 1 for 1/true/yes/on, 0 for 0/false/no/off, -1 for
 * anything else (which is an error, never a silent no: read-only must fail closed). */
int broker_parse_bool(const char *v, size_t n)
{
    static const char *const words[] = {"1", "true", "yes", "on", "0", "false", "no", "off"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (strlen(words[i]) == n && strncasecmp(v, words[i], n) == 0)
            return i < 4;
    return -1;
}

/* Reports a read-only setting that is neither a yes nor a no (the value shown made safe). */
static void bad_read_only(const char *where, const char *v, size_t n)
{
    struct strbuf sb;
    sb_init(&sb);
    sanitize_append(&sb, v, n > 40 ? 40 : n, SAN_ESCAPE_BACKSLASH);
    san_eprintf("dlqx: %s\"%s%s\" is neither a yes nor a no: give 1, true, yes or on to refuse "
                "every write (0, false, no or off to allow them)\n",
                where, sb.buf ? sb.buf : "", n > 40 ? "..." : "");
    sb_free(&sb);
}

/* Takes dlqx's own query parameters off a URL (librabbitmq knows none): read_only=true marks
 * this connection read-only. An unknown parameter is an error, not silently ignored. */
static bool url_params(struct broker_opts *b, size_t i)
{
    const char *u = b->urls[i];
    const char *at = url_userinfo_end(u); /* a '?' in a password is not the query */
    const char *q = strchr(at ? at : u, '?');
    if (!q)
        return true;
    for (const char *p = q + 1; *p;) {
        size_t n = strcspn(p, "&");
        const char *eq = memchr(p, '=', n);
        size_t klen = eq ? (size_t)(eq - p) : n;
        const char *v = eq ? eq + 1 : "true";
        size_t vlen = eq ? n - klen - 1 : 4;
        if ((klen == 9 && strncmp(p, "read_only", 9) == 0) ||
            (klen == 8 && strncmp(p, "readonly", 8) == 0)) {
            int yes = vlen ? broker_parse_bool(v, vlen) : 0; /* empty: not set */
            if (yes < 0) {
                bad_read_only("the URL parameter read_only=", v, vlen);
                return false;
            }
            if (yes)
                b->read_only = true;
        } else {
            char *masked = url_mask(u);
            san_eprintf("dlqx: %s: unknown URL parameter \"%.*s\" (dlqx knows read_only=true)\n",
                        masked, (int)(klen > 40 ? 40 : klen), p);
            free(masked);
            return false;
        }
        p += n;
        if (*p == '&')
            p++;
    }
    b->url_store[i] = xstrndup(u, (size_t)(q - u));
    b->urls[i] = b->url_store[i];
    return true;
}

char *broker_mgmt_url_default(const char *mgmt_url, bool amqps)
{
    struct strbuf sb;
    sb_init(&sb);
    const char *p = mgmt_url;
    for (;;) {
        size_t len = strcspn(p, ",");
        size_t lead = strspn(p, " \t");
        if (lead > len)
            lead = len;
        const char *u = p + lead;
        size_t n = len - lead;
        if (sb.len)
            sb_adds(&sb, ",");
        bool has_scheme = false;
        for (size_t i = 0; i + 2 < n && !has_scheme; i++)
            has_scheme = memcmp(u + i, "://", 3) == 0;
        if (n && !has_scheme)
            sb_addf(&sb, "%s://", amqps ? "https" : "http");
        sb_add(&sb, u, n);
        if (!p[len])
            break;
        p += len + 1;
    }
    return sb.buf ? sb.buf : xstrdup("");
}

/* One URL of the list. */
static bool mgmt_plain_one(const char *url, bool amqps)
{
    if (strncasecmp(url, "http://", 7) != 0)
        return false;
    if (amqps)
        return true;
    const char *h = url + 7;
    const char *at = strchr(h, '@'); /* refused later, but not taken for the host */
    if (at && at < h + strcspn(h, "/"))
        h = at + 1;
    size_t n = *h == '[' ? strcspn(h, "]") + 1 : strcspn(h, ":/");
    bool loopback = (n == 9 && strncasecmp(h, "localhost", 9) == 0) ||
                    (n >= 4 && strncmp(h, "127.", 4) == 0) ||
                    (n == 5 && strncmp(h, "[::1]", 5) == 0);
    return !loopback;
}

bool broker_mgmt_plain(const char *mgmt_url, bool amqps)
{
    for (const char *p = mgmt_url;;) {
        size_t len = strcspn(p, ",");
        size_t lead = strspn(p, " \t");
        char *one = xstrndup(p + (lead < len ? lead : len), lead < len ? len - lead : 0);
        bool plain = mgmt_plain_one(one, amqps);
        free(one);
        if (plain)
            return true;
        if (!p[len])
            return false;
        p += len + 1;
    }
}

/* Says when TLS options are given where nothing is TLS, and when the management API's basic
 * auth would go over plain http. The management URL without a scheme takes the broker's. */
static void tls_notes(struct broker_opts *b)
{
    bool amqps = false;
    for (size_t i = 0; i < b->n_urls; i++)
        if (strncasecmp(b->urls[i], "amqps://", 8) == 0)
            amqps = true;
    bool mgmt = b->mgmt_url && *b->mgmt_url && !b->no_mgmt;
    if (mgmt) {
        b->mgmt_store = broker_mgmt_url_default(b->mgmt_url, amqps);
        b->mgmt_url = b->mgmt_store;
    }
    bool https = mgmt && strncasecmp(b->mgmt_url, "https://", 8) == 0;
    const char *tls[] = {b->cacert ? "--cacert" : NULL, b->cert ? "--cert" : NULL,
                         b->key ? "--key" : NULL, b->tls_no_verify ? "--tls-no-verify" : NULL};
    struct strbuf given;
    sb_init(&given);
    for (size_t i = 0; i < sizeof tls / sizeof *tls; i++)
        if (tls[i])
            sb_addf(&given, "%s%s", given.len ? ", " : "", tls[i]);
    if (given.len && !amqps && !https)
        san_eprintf("dlqx: warning: %s ignored: no URL here is amqps:// or https:// (the "
                    "connection is not encrypted)\n",
                    given.buf);
    sb_free(&given);
    if (mgmt && broker_mgmt_plain(b->mgmt_url, amqps)) {
        char *shown = url_mask(b->mgmt_url);
        struct strbuf sb;
        sb_init(&sb);
        sanitize_append(&sb, shown, strlen(shown), SAN_ESCAPE_BACKSLASH);
        san_eprintf("dlqx: warning: the management API %s is plain http: the password goes over "
                    "the network unencrypted%s; give --mgmt-url https://...\n",
                    sb.buf, amqps ? " although the broker is amqps://" : "");
        sb_free(&sb);
        free(shown);
    }
}

bool broker_opts_finish(struct broker_opts *b)
{
    if (!b->n_urls) {
        const char *env = getenv("DLQX_URL");
        if (env && *env) {
            b->env_urls = xstrdup(env);
            b->env_urls_len = strlen(env);
            for (char *tok = strtok(b->env_urls, ", "); tok && b->n_urls < 16;
                 tok = strtok(NULL, ", "))
                b->urls[b->n_urls++] = tok;
        }
    }
    if (!b->n_urls) {
        san_eprintf("dlqx: no broker: give --url amqp://user@host:port/vhost or set DLQX_URL\n");
        return false;
    }
    for (size_t i = 0; i < b->n_urls; i++)
        if (!url_params(b, i))
            return false;
    const char *eo = getenv("DLQX_NODE_ORDER");
    if (!b->order_given && eo && *eo && !conn_order_parse(eo, &b->order)) {
        struct strbuf sb;
        sb_init(&sb);
        sanitize_append(&sb, eo, strlen(eo) > 40 ? 40 : strlen(eo), SAN_ESCAPE_BACKSLASH);
        san_eprintf("dlqx: DLQX_NODE_ORDER=\"%s\" is neither given nor shuffle\n",
                    sb.buf ? sb.buf : "");
        sb_free(&sb);
        return false;
    }
    const char *eh = getenv("DLQX_HEARTBEAT");
    if (!b->heartbeat_given && eh && *eh) {
        struct error herr;
        if (!broker_parse_heartbeat("DLQX_HEARTBEAT", eh, &b->heartbeat_s, &herr)) {
            san_eprintf("dlqx: %s\n", herr.msg);
            return false;
        }
    }
    const char *ro = getenv("DLQX_READ_ONLY");
    if (ro && *ro) { /* empty: not set */
        int yes = broker_parse_bool(ro, strlen(ro));
        if (yes < 0) {
            bad_read_only("DLQX_READ_ONLY=", ro, strlen(ro));
            return false;
        }
        if (yes)
            b->read_only = true;
    }
    for (size_t i = 0; i < b->n_urls; i++) {
        const char *u = b->urls[i];
        if (!url_has_password(u))
            continue;
        conn_secret_guard(); /* a password in memory: no core dump from here on */
        if (!getenv("DLQX_ALLOW_URL_PASSWORD")) {
            /* Allowed (RabbitMQ URIs carry them), but never shown: warn once. */
            char *masked = url_mask(u);
            san_eprintf("dlqx: note: %s carries a password; prefer --password-file (a URL on the "
                        "command line shows in ps)\n",
                        masked);
            free(masked);
        }
    }
    /* After the password guard above: a URL that holds one is checked undumpable. */
    for (size_t i = 0; i < b->n_urls; i++) {
        struct error uerr;
        if (!conn_url_check(b->urls[i], &uerr)) {
            san_eprintf("dlqx: %s\n", uerr.msg);
            return false;
        }
    }
    if (!b->mgmt_url) {
        const char *env = getenv("DLQX_MGMT_URL");
        if (env && *env)
            b->mgmt_url = env;
    }
    tls_notes(b);
    if (!b->password_file) {
        const char *env = getenv("DLQX_PASSWORD_FILE");
        if (env && *env)
            b->password_file = env;
    }
    struct error err;
    if (b->password_file) {
        if (conn_read_password_file(b->password_file, &b->password, &err) != ST_OK) {
            san_eprintf("dlqx: %s\n", err.msg);
            return false;
        }
    } else if (b->ask_password) {
        if (conn_prompt_password("password: ", &b->password, &err) != ST_OK) {
            san_eprintf("dlqx: %s\n", err.msg);
            return false;
        }
    }
    return true;
}

void broker_opts_conn(const struct broker_opts *b, struct conn_opts *o)
{
    memset(o, 0, sizeof *o);
    o->urls = (const char *const *)b->urls;
    o->n_urls = b->n_urls;
    o->password = b->password;
    o->cacert = b->cacert;
    o->cert = b->cert;
    o->key = b->key;
    o->tls_no_verify = b->tls_no_verify;
    o->order = b->order;
    o->heartbeat_s = b->heartbeat_s;
    o->stop_requested = b->stop_requested ? b->stop_requested : stopsig_caught;
}

int broker_exit_code(enum conn_err k)
{
    return error_kind_exit(conn_err_kind(k));
}

enum status broker_open(const struct broker_opts *b, struct conn **out, struct error *err)
{
    struct conn_opts o;
    broker_opts_conn(b, &o);
    *out = NULL;
    enum status st = conn_open(&o, out, NULL, err);
    if (st != ST_OK)
        return st;
    if ((st = conn_channel_open(*out, 1, NULL, err)) != ST_OK) {
        conn_close(*out);
        *out = NULL;
    }
    return st;
}

struct conn *broker_connect(const struct broker_opts *b, int *exit_code)
{
    struct conn *c = NULL;
    struct error err;
    error_clear(&err);
    if (broker_open(b, &c, &err) != ST_OK) {
        san_eprintf("dlqx: %s\n", err.msg);
        *exit_code = error_exit_code(&err, EXIT_PROTOCOL);
        return NULL;
    }
    *exit_code = EXIT_OK;
    return c;
}

enum bopt_next broker_opts_arg(struct broker_opts *b, int argc, char **argv, int *i)
{
    struct error err;
    enum bopt_next r = broker_opts_next(b, argc, argv, i, &err);
    if (r == BOPT_ERROR)
        san_eprintf("dlqx: %s\n", err.msg);
    return r;
}
