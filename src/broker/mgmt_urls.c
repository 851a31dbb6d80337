/*
 * mgmt_urls: the management API's URLs. A cluster has one management listener per node, and
 * any of them answers for the whole cluster, so dlqx takes a comma-separated list of them
 * (--mgmt-url or DLQX_MGMT_URL): a request goes to the URL that last answered and, when its
 * node cannot be reached, to the next one in the list, so that a dead or hung node does not
 * take the queues' health away with it. The list is written by hand (or by a script):
 * /api/nodes names the nodes but not where their management listeners are.
 */
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>

#include "mgmt_internal.h"
#include "util.h"

/* Validates one URL and gives its base without userinfo, query or trailing slash. */
static enum status parse_base(const char *url, char **base, struct error *err)
{
    CURLU *u = curl_url();
    char *part = NULL, *full = NULL;
    enum status st = ST_OK;
    if (!u)
        return mgmt_fail(NULL, MGMT_CONFIG, err, "out of memory parsing the management URL");
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK) {
        st = mgmt_fail(NULL, MGMT_CONFIG, err,
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
        st = mgmt_fail(NULL, MGMT_CONFIG, err, "the management URL is not a valid URL");
        goto out;
    }
    char shown[160];
    mgmt_clip(shown, sizeof shown, full);
    if (creds) {
        st = mgmt_fail(NULL, MGMT_CONFIG, err,
                       "the management URL %s must not carry credentials: give the user separately "
                       "and the password in a file",
                       shown);
        goto out;
    }
    if (curl_url_get(u, CURLUPART_SCHEME, &part, 0) != CURLUE_OK ||
        (strcmp(part, "http") != 0 && strcmp(part, "https") != 0)) {
        st = mgmt_fail(NULL, MGMT_CONFIG, err,
                       "the management URL %s must start with http:// or https://", shown);
        goto out;
    }
    curl_free(part);
    part = NULL;
    if (curl_url_get(u, CURLUPART_QUERY, &part, 0) == CURLUE_OK ||
        curl_url_get(u, CURLUPART_FRAGMENT, &part, 0) == CURLUE_OK) {
        st = mgmt_fail(NULL, MGMT_CONFIG, err,
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

static void free_bases(char **bases, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(bases[i]);
    free(bases);
}

enum status mgmt_parse_urls(const char *list, char ***bases, size_t *n, struct error *err)
{
    char **v = xcalloc(MGMT_MAX_URLS, sizeof *v);
    size_t k = 0;
    const char *p = list;
    for (;;) {
        size_t len = strcspn(p, ",");
        const char *a = p, *z = p + len;
        while (a < z && (*a == ' ' || *a == '\t'))
            a++;
        while (z > a && (z[-1] == ' ' || z[-1] == '\t'))
            z--;
        enum status st = ST_OK;
        if (a == z)
            st = mgmt_fail(NULL, MGMT_CONFIG, err,
                           "the management URL list has an empty entry (URL %zu): give the "
                           "URLs separated by commas, e.g. http://node1:15672/,http://node2:15672/",
                           k + 1);
        else if (k == MGMT_MAX_URLS)
            st = mgmt_fail(NULL, MGMT_CONFIG, err, "the management URL list has more than %d URLs",
                           MGMT_MAX_URLS);
        if (st == ST_OK) {
            char *one = xstrndup(a, (size_t)(z - a));
            st = parse_base(one, &v[k], err);
            free(one);
        }
        if (st != ST_OK) {
            free_bases(v, k);
            return st;
        }
        k++;
        if (!p[len])
            break;
        p += len + 1;
    }
    *bases = v;
    *n = k;
    return ST_OK;
}

void mgmt_use_url(struct mgmt *m, size_t i)
{
    m->cur = i;
    m->base = m->bases[i];
    free(m->display);
    m->display = xasprintf("%s/", m->base);
}

bool mgmt_url_failover(const struct mgmt *m, CURLcode rc, bool changes)
{
    if (m->n_bases < 2)
        return false;
    if (changes) /* it may have been carried out: sent again, it would be twice */
        return rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST;
    return m->last == MGMT_UNREACHABLE || m->last == MGMT_TIMEOUT ||
           (m->last == MGMT_SERVER_ERROR && m->last_http == 503);
}
