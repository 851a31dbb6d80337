/* benchutil: what the broker benchmarks share (see benchutil.h). */
#include "benchutil.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static const char *bench_name = "bench";

void bench_set_name(const char *name)
{
    bench_name = name;
}

void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fflush(stdout);
    fprintf(stderr, "%s: error: ", bench_name);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

double cpu_s(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

double peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0; /* kilobytes on Linux */
}

void check_rpc(amqp_connection_state_t st, const char *what)
{
    amqp_rpc_reply_t r = amqp_get_rpc_reply(st);
    if (r.reply_type != AMQP_RESPONSE_NORMAL)
        die("%s failed (reply type %d, library error %s)", what, r.reply_type,
            r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION ? amqp_error_string2(r.library_error)
                                                            : "-");
}

unsigned long long number_arg(const char *opt, const char *s, unsigned long long min,
                              unsigned long long max)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || !*s || s[0] == '-' || v < min || v > max)
        die("%s takes a number from %llu to %llu", opt, min, max);
    return v;
}

uint32_t queue_depth(struct conn *c, amqp_channel_t ch, const char *queue)
{
    uint32_t ready = 0, consumers = 0;
    enum conn_err kind;
    struct error err;
    error_clear(&err);
    if (conn_queue_inspect(c, ch, queue, &ready, &consumers, &kind, &err) != ST_OK)
        die("%s", err.msg);
    return ready;
}

struct conn *bench_connect(const char *url, const char *password, const char *name,
                           amqp_channel_t ch)
{
    const char *urls[1] = {url};
    struct conn_opts o;
    memset(&o, 0, sizeof o);
    o.urls = urls;
    o.n_urls = 1;
    o.password = password;
    o.conn_name = name;
    o.timeout_ms = 60000;
    struct conn *c = NULL;
    enum conn_err kind;
    struct error err;
    error_clear(&err);
    if (conn_open(&o, &c, &kind, &err) != ST_OK)
        die("%s", err.msg);
    if (conn_channel_open(c, ch, &kind, &err) != ST_OK)
        die("%s", err.msg);
    return c;
}

struct conn *bench_connect_env(const char *name, amqp_channel_t ch)
{
    const char *url = getenv("DLQX_URL"), *pwfile = getenv("DLQX_PASSWORD_FILE");
    if (!url || !pwfile)
        die("DLQX_URL and DLQX_PASSWORD_FILE are needed (. DIR/env of scripts/broker)");
    char *password = NULL;
    struct error err;
    error_clear(&err);
    if (conn_read_password_file(pwfile, &password, &err) != ST_OK)
        die("%s", err.msg);
    struct conn *c = bench_connect(url, password, name, ch);
    conn_secret_free(password);
    return c;
}
