/*
 * conn_url: what dlqx read a broker URL as, for the messages about it — scheme, user, host,
 * port and vhost, never the password — and the check every URL passes before it is used.
 *
 * By the URI spec (and so for librabbitmq and RabbitMQ's own clients) the path of
 * amqp://host:port/ is the empty vhost "", not the default vhost "/": that one is
 * amqp://host:port (no path) or amqp://host:port/%2F. Most clients print the first form,
 * so the messages say which one was read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <amqp.h>

#include "conn.h"
#include "sanitize.h"
#include "util.h"

static void quoted(struct strbuf *sb, const char *s)
{
    sb_addc(sb, '"');
    sanitize_append(sb, s, strlen(s), 0);
    sb_addc(sb, '"');
}

/* The parts librabbitmq reads from an amqp:// form of the URL; false when it reads none. */
static bool parts(const char *url, struct strbuf *out)
{
    char *buf = xstrdup(url);
    struct amqp_connection_info ci;
    amqp_default_connection_info(&ci);
    bool ok = amqp_parse_url(buf, &ci) == AMQP_STATUS_OK;
    if (ok) {
        sb_adds(out, ", user ");
        quoted(out, ci.user);
        sb_adds(out, ", host ");
        quoted(out, ci.host);
        sb_addf(out, ", port %d, vhost ", ci.port);
        quoted(out, ci.vhost);
        if (!*ci.vhost)
            sb_adds(out, " (the empty vhost)");
        else if (strcmp(ci.vhost, "/") == 0)
            sb_adds(out, " (the default vhost)");
    }
    conn_secret_free(buf);
    return ok;
}

void conn_url_describe(const char *url, struct strbuf *out)
{
    const char *sep = strstr(url, "://");
    if (!sep) {
        sb_adds(out, "no scheme (amqp[s]://user@host:port/vhost)");
        return;
    }
    size_t n = (size_t)(sep - url);
    sb_adds(out, "scheme \"");
    sanitize_append(out, url, n > 20 ? 20 : n, 0);
    sb_adds(out, n > 20 ? "...\"" : "\"");
    bool amqp =
        (n == 4 && strncmp(url, "amqp", 4) == 0) || (n == 5 && strncmp(url, "amqps", 5) == 0);
    /* Another scheme: the rest as it would read after amqp:// */
    char *as_amqp = amqp ? xstrdup(url) : xasprintf("amqp%s", sep);
    if (!parts(as_amqp, out))
        sb_adds(out, ", the rest not understood as user@host:port/vhost");
    conn_secret_free(as_amqp);
}

bool conn_url_empty_vhost(const char *url)
{
    char *vhost = NULL;
    bool empty = conn_url_parts(url, NULL, &vhost, NULL) && vhost && !*vhost;
    free(vhost);
    return empty;
}

void conn_url_vhost_hint(const char *url, struct strbuf *out)
{
    if (!conn_url_empty_vhost(url))
        return;
    char *buf = xstrdup(url);
    struct amqp_connection_info ci;
    amqp_default_connection_info(&ci);
    if (amqp_parse_url(buf, &ci) == AMQP_STATUS_OK) {
        struct strbuf base;
        sb_init(&base);
        sb_addf(&base, "%s://", ci.ssl ? "amqps" : "amqp");
        sanitize_append(&base, ci.user, strlen(ci.user), 0);
        sb_addc(&base, '@');
        sanitize_append(&base, ci.host, strlen(ci.host), 0);
        sb_addf(&base, ":%d", ci.port);
        sb_addf(out,
                "the path \"/\" names the empty vhost \"\" (as the URI spec reads it); for the "
                "default vhost write %s or %s/%%2F",
                base.buf, base.buf);
        sb_free(&base);
    }
    conn_secret_free(buf);
}

bool conn_url_check(const char *url, struct error *err)
{
    char *masked = url_mask(url);
    struct strbuf shown, read;
    sb_init(&shown);
    sb_init(&read);
    sanitize_append(&shown, masked, strlen(masked), 0);
    free(masked);
    conn_url_describe(url, &read);
    bool ok = true;
    if (strncmp(url, "amqp://", 7) != 0 && strncmp(url, "amqps://", 8) != 0) {
        error_set(err, ST_EINVAL, "%s is not an amqp:// or amqps:// URL (read as %s)",
                  shown.buf ? shown.buf : "\"\"", read.buf);
        ok = false;
    } else if (!conn_url_parts(url, NULL, NULL, NULL)) {
        error_set(err, ST_EINVAL, "%s is not a valid RabbitMQ URI (read as %s)", shown.buf,
                  read.buf);
        ok = false;
    }
    sb_free(&shown);
    sb_free(&read);
    return ok;
}
