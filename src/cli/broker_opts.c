/*
 * broker_opts: connection options shared by the broker commands.
 */
#include "broker_opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "util.h"

void broker_opts_init(struct broker_opts *b)
{
    memset(b, 0, sizeof *b);
}

void broker_opts_free(struct broker_opts *b)
{
    conn_secret_free(b->password);
    free(b->env_urls);
    for (size_t i = 0; i < 16; i++)
        free(b->url_store[i]);
    memset(b, 0, sizeof *b);
}

static const char *value(int argc, char **argv, int *i, const char *name)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (a[n] == '=')
        return a + n + 1;
    if (*i + 1 >= argc) {
        fprintf(stderr, "dlqx: %s needs a value\n", name);
        return NULL;
    }
    return argv[++*i];
}

static bool is(const char *a, const char *name)
{
    size_t n = strlen(name);
    return strncmp(a, name, n) == 0 && (a[n] == '\0' || a[n] == '=');
}

int broker_opts_parse(struct broker_opts *b, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    const char *v;
    if (is(a, "--url")) {
        if (!(v = value(argc, argv, i, "--url")))
            return -1;
        if (b->n_urls >= sizeof b->urls / sizeof *b->urls) {
            fprintf(stderr, "dlqx: at most 16 --url\n");
            return -1;
        }
        b->urls[b->n_urls++] = (char *)(uintptr_t)v;
        return 1;
    }
    if (is(a, "--password")) {
        /* Refused: a password on the command line is visible to everyone in ps. */
        fprintf(stderr, "dlqx: no --password: it would show in ps; use --password-file FILE, "
                        "DLQX_PASSWORD_FILE or --ask-password\n");
        return -1;
    }
    if (is(a, "--password-file")) {
        if (!(b->password_file = value(argc, argv, i, "--password-file")))
            return -1;
        return 1;
    }
    if (strcmp(a, "--ask-password") == 0) {
        b->ask_password = true;
        return 1;
    }
    if (is(a, "--cacert"))
        return (b->cacert = value(argc, argv, i, "--cacert")) ? 1 : -1;
    if (is(a, "--cert"))
        return (b->cert = value(argc, argv, i, "--cert")) ? 1 : -1;
    if (is(a, "--key"))
        return (b->key = value(argc, argv, i, "--key")) ? 1 : -1;
    if (strcmp(a, "--tls-no-verify") == 0) {
        b->tls_no_verify = true;
        return 1;
    }
    if (is(a, "--mgmt-url"))
        return (b->mgmt_url = value(argc, argv, i, "--mgmt-url")) ? 1 : -1;
    if (strcmp(a, "--no-mgmt") == 0) {
        b->no_mgmt = true;
        return 1;
    }
    if (strcmp(a, "--read-only") == 0) {
        b->read_only = true;
        return 1;
    }
    return 0;
}

static bool truthy(const char *v, size_t n)
{
    static const char *const yes[] = {"1", "true", "yes", "on"};
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        if (strlen(yes[i]) == n && strncasecmp(v, yes[i], n) == 0)
            return true;
    return false;
}

/* Takes dlqx's own query parameters off a URL (librabbitmq knows none): read_only=true marks
 * this connection read-only. An unknown parameter is an error, not silently ignored. */
static bool url_params(struct broker_opts *b, size_t i)
{
    const char *u = b->urls[i];
    const char *q = strchr(u, '?');
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
            if (truthy(v, vlen))
                b->read_only = true;
        } else {
            char *masked = conn_mask_url(u);
            fprintf(stderr, "dlqx: %s: unknown URL parameter \"%.*s\" (dlqx knows read_only=true)\n",
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

bool broker_opts_finish(struct broker_opts *b)
{
    if (!b->n_urls) {
        const char *env = getenv("DLQX_URL");
        if (env && *env) {
            b->env_urls = xstrdup(env);
            for (char *tok = strtok(b->env_urls, ", "); tok && b->n_urls < 16;
                 tok = strtok(NULL, ", "))
                b->urls[b->n_urls++] = tok;
        }
    }
    if (!b->n_urls) {
        fprintf(stderr, "dlqx: no broker: give --url amqp://user@host:port/vhost or set DLQX_URL\n");
        return false;
    }
    for (size_t i = 0; i < b->n_urls; i++)
        if (!url_params(b, i))
            return false;
    for (size_t i = 0; i < b->n_urls; i++) {
        struct error uerr;
        if (!conn_url_check(b->urls[i], &uerr)) {
            fprintf(stderr, "dlqx: %s\n", uerr.msg);
            return false;
        }
    }
    const char *ro = getenv("DLQX_READ_ONLY");
    if (ro && truthy(ro, strlen(ro)))
        b->read_only = true;
    for (size_t i = 0; i < b->n_urls; i++) {
        const char *u = b->urls[i];
        const char *at = strchr(u, '@');
        const char *scheme = strstr(u, "://");
        if (scheme && at && memchr(scheme + 3, ':', (size_t)(at - scheme - 3)) &&
            !getenv("DLQX_ALLOW_URL_PASSWORD")) {
            /* Allowed (RabbitMQ URIs carry them), but never shown: warn once. */
            char *masked = conn_mask_url(u);
            fprintf(stderr,
                    "dlqx: note: %s carries a password; prefer --password-file (a URL on the "
                    "command line shows in ps)\n",
                    masked);
            free(masked);
        }
    }
    if (!b->mgmt_url) {
        const char *env = getenv("DLQX_MGMT_URL");
        if (env && *env)
            b->mgmt_url = env;
    }
    if (!b->password_file) {
        const char *env = getenv("DLQX_PASSWORD_FILE");
        if (env && *env)
            b->password_file = env;
    }
    struct error err;
    if (b->password_file) {
        if (conn_read_password_file(b->password_file, &b->password, &err) != ST_OK) {
            fprintf(stderr, "dlqx: %s\n", err.msg);
            return false;
        }
    } else if (b->ask_password) {
        if (conn_prompt_password("password: ", &b->password, &err) != ST_OK) {
            fprintf(stderr, "dlqx: %s\n", err.msg);
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
}

int broker_exit_code(enum conn_err k)
{
    switch (k) {
    case CONN_OK:
        return EXIT_OK;
    case CONN_BAD_URL:
        return EXIT_USAGE;
    case CONN_UNREACHABLE:
        return EXIT_UNREACHABLE;
    case CONN_AUTH:
        return EXIT_AUTH;
    case CONN_VHOST:
        return EXIT_VHOST;
    case CONN_TLS:
        return EXIT_TLS;
    case CONN_ACCESS:
        return EXIT_ACCESS;
    case CONN_NOT_FOUND:
        return EXIT_QUEUE_MISSING;
    case CONN_LOST:
        return EXIT_CONNECTION_LOST;
    case CONN_PRECONDITION:
    case CONN_LOCKED:
    case CONN_PROTOCOL:
    default:
        return EXIT_PROTOCOL;
    }
}

struct conn *broker_connect(const struct broker_opts *b, int *exit_code)
{
    struct conn_opts o;
    broker_opts_conn(b, &o);
    struct conn *c = NULL;
    enum conn_err kind = CONN_OK;
    struct error err;
    error_clear(&err);
    if (conn_open(&o, &c, &kind, &err) != ST_OK) {
        fprintf(stderr, "dlqx: %s\n", err.msg);
        *exit_code = broker_exit_code(kind);
        return NULL;
    }
    enum conn_err k2;
    if (conn_channel_open(c, 1, &k2, &err) != ST_OK) {
        fprintf(stderr, "dlqx: %s\n", err.msg);
        *exit_code = broker_exit_code(k2);
        conn_close(c);
        return NULL;
    }
    *exit_code = EXIT_OK;
    return c;
}
