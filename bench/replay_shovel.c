/* replay_shovel: the dynamic-shovel pass of replay_bench (see replay_shovel.h). */
#include "replay_shovel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "benchutil.h"
#include "util.h"

static size_t discard(char *data, size_t size, size_t n, void *ctx)
{
    (void)data;
    (void)ctx;
    return size * n;
}

/* PUT (body) or GET (body NULL) on api/parameters/shovel/%2F/NAME; the HTTP status (a GET
 * of a shovel that is gone: 404); dies when the request fails or a PUT is not 2xx. */
static long shovel_request(const struct shovel_api *api, const char *name, const char *body)
{
    const char *base = api->mgmt_url;
    size_t bl = strlen(base);
    char *url = xasprintf("%s%sapi/parameters/shovel/%%2F/%s", base,
                          bl && base[bl - 1] == '/' ? "" : "/", name);
    CURL *h = curl_easy_init();
    if (!h)
        die("curl_easy_init failed");
    struct curl_slist *hdrs = curl_slist_append(NULL, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_USERNAME, api->user);
    curl_easy_setopt(h, CURLOPT_PASSWORD, api->password);
    curl_easy_setopt(h, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, body ? "PUT" : "GET");
    if (body)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(h, CURLOPT_TIMEOUT, 60L);
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    CURLcode rc = curl_easy_perform(h);
    long code = 0;
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
    curl_slist_free_all(hdrs);
    curl_easy_cleanup(h);
    if (rc != CURLE_OK || (body && (code < 200 || code > 299)))
        die("management API %s %s: %s, HTTP %ld (is rabbitmq_shovel enabled?)",
            body ? "PUT" : "GET", url, curl_easy_strerror(rc), code);
    free(url);
    return code;
}

double shovel_pass(const struct shovel_api *api, struct conn *c, uint16_t ch, const char *name,
                   const char *dlq, const char *dest, uint32_t n, double limit_s)
{
    /* Queue names come from the bench itself (rb<pid>-<pass>-…): no JSON escaping needed. */
    char *body = xasprintf("{\"value\":{\"src-protocol\":\"amqp091\",\"src-uri\":\"%s\","
                           "\"src-queue\":\"%s\",\"dest-protocol\":\"amqp091\","
                           "\"dest-uri\":\"%s\",\"dest-queue\":\"%s\","
                           "\"ack-mode\":\"on-confirm\",\"src-delete-after\":\"queue-length\"}}",
                           api->src_uri, dlq, api->src_uri, dest);
    double t0 = clock_mono_s();
    shovel_request(api, name, body);
    free(body);
    uint32_t d = n, s = 0;
    for (;;) {
        d = queue_depth(c, ch, dlq);
        s = queue_depth(c, ch, dest);
        if (d == 0 && s == n)
            break;
        if (clock_mono_s() - t0 > limit_s)
            die("the shovel %s has not moved %u messages in %.0f s (DLQ %u, target %u)", name, n,
                limit_s, d, s);
        usleep(5000);
    }
    double dt = clock_mono_s() - t0;
    /* The last copies' acks may still be on their way (a classic queue's depth counts only the
     * ready messages): a shovel deleted now gives them back to the DLQ (267 once). With
     * src-delete-after queue-length, as the management UI's "Move messages" makes it, the
     * shovel deletes itself once every message it counted at the start was confirmed at the
     * target and acked at the source; the pass is timed to the depths, as before, but the
     * checks after wait for that. */
    while (shovel_request(api, name, NULL) != 404) {
        if (clock_mono_s() - t0 > limit_s)
            die("the shovel %s moved its %u messages but did not end in %.0f s", name, n, limit_s);
        usleep(20000);
    }
    return dt;
}

double broker_cpu_s(void)
{
    const char *dir = getenv("DLQX_BROKER_DIR");
    if (!dir || !*dir)
        return -1;
    char path[4096];
    snprintf(path, sizeof path, "%s/rabbitmq.pid", dir);
    FILE *f = fopen(path, "r");
    long pid = 0;
    if (!f)
        return -1;
    if (fscanf(f, "%ld", &pid) != 1)
        pid = 0;
    fclose(f);
    if (pid <= 0)
        return -1;
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    f = fopen(path, "r");
    if (!f)
        return -1;
    char buf[2048];
    size_t l = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[l] = 0;
    char *p = strrchr(buf, ')'); /* the fields after the command's name */
    if (!p)
        return -1;
    unsigned long long ut = 0, stime = 0;
    /* ") S ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime" */
    if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &stime) != 2)
        return -1;
    return (double)(ut + stime) / (double)sysconf(_SC_CLK_TCK);
}
