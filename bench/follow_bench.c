/*
 * follow_bench: the two ends of the follow benchmark (bench/run-follow.sh).
 *
 *   follow_bench tap EXCHANGE ROUTING_KEY COUNT
 *       the baseline: a bare rabbitmq-c consumer of a tap like dlqx's (server-named,
 *       exclusive, auto-delete, x-max-length 10000, x-message-ttl 60 s, bound to EXCHANGE with
 *       ROUTING_KEY, consumed with no-ack); each delivery is read whole and dropped. Says
 *       "ready" on stderr once it consumes.
 *   follow_bench lines COUNT
 *       counts the lines of standard input (dlqx follow --json's output, one dead letter a
 *       line), and nothing else.
 *
 * Either stops at COUNT, or 3 s after the last arrival (a tap that overflowed never gives
 * COUNT), and prints one line: how many arrived, the seconds from the first to the last, that
 * rate, and its own CPU time. The broker is DLQX_URL with DLQX_PASSWORD_FILE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <amqp.h>

#include "benchutil.h"
#include "conn.h"
#include "util.h"

enum { CH = 1, IDLE_MS = 3000, FIRST_MS = 120000 };

static void report(const char *what, unsigned long n, unsigned long count, double first,
                   double last)
{
    double span = n > 1 ? last - first : 0;
    printf("%s: %lu of %lu arrived, first to last %.2f s, %.0f msg/s, cpu %.2f s\n", what, n, count,
           span, span > 0 ? (double)(n - 1) / span : 0.0, cpu_s());
}

static int tap(const char *exchange, const char *key, unsigned long count)
{
    struct conn *c = bench_connect_env("follow_bench tap", CH);
    amqp_connection_state_t st = conn_state(c);
    amqp_table_entry_t args[2];
    args[0].key = amqp_cstring_bytes("x-max-length");
    args[0].value.kind = AMQP_FIELD_KIND_I64;
    args[0].value.value.i64 = 10000;
    args[1].key = amqp_cstring_bytes("x-message-ttl");
    args[1].value.kind = AMQP_FIELD_KIND_I64;
    args[1].value.value.i64 = 60000;
    amqp_queue_declare_ok_t *ok =
        amqp_queue_declare(st, CH, amqp_empty_bytes, 0, 0, 1, 1, (amqp_table_t){2, args});
    check_rpc(st, "declaring the tap");
    amqp_bytes_t name = amqp_bytes_malloc_dup(ok->queue);
    amqp_queue_bind(st, CH, name, amqp_cstring_bytes(exchange), amqp_cstring_bytes(key),
                    amqp_empty_table);
    check_rpc(st, "binding the tap");
    amqp_basic_consume(st, CH, name, amqp_empty_bytes, 0, 1, 1, amqp_empty_table);
    check_rpc(st, "consuming the tap");
    fputs("ready\n", stderr);
    unsigned long n = 0;
    double first = 0, last = 0;
    while (n < count) {
        int wait = n ? IDLE_MS : FIRST_MS;
        struct timeval tv = {wait / 1000, (wait % 1000) * 1000};
        amqp_envelope_t e;
        amqp_maybe_release_buffers(st);
        amqp_rpc_reply_t r = amqp_consume_message(st, &e, &tv, 0);
        if (r.reply_type == AMQP_RESPONSE_LIBRARY_EXCEPTION &&
            r.library_error == AMQP_STATUS_TIMEOUT)
            break;
        if (r.reply_type != AMQP_RESPONSE_NORMAL)
            die("reading the tap: reply type %d", (int)r.reply_type);
        last = clock_mono_s();
        if (!n++)
            first = last;
        amqp_destroy_envelope(&e);
    }
    report("bare tap consumer", n, count, first, last);
    amqp_bytes_free(name);
    conn_close(c);
    return 0;
}

static int lines(unsigned long count)
{
    static char buf[1 << 16];
    unsigned long n = 0;
    double first = 0, last = 0;
    while (n < count) {
        fd_set fds;
        FD_ZERO(&fds);
        FD_SET(0, &fds);
        int wait = n ? IDLE_MS : FIRST_MS;
        struct timeval tv = {wait / 1000, (wait % 1000) * 1000};
        if (select(1, &fds, NULL, NULL, &tv) <= 0)
            break;
        ssize_t got = read(0, buf, sizeof buf);
        if (got <= 0)
            break;
        double now = clock_mono_s();
        for (ssize_t i = 0; i < got; i++) {
            if (buf[i] != '\n')
                continue;
            last = now;
            if (!n++)
                first = now;
        }
    }
    report("dlqx follow --json", n, count, first, last);
    return 0;
}

int main(int argc, char **argv)
{
    bench_set_name("follow_bench");
    if (argc == 5 && strcmp(argv[1], "tap") == 0)
        return tap(argv[2], argv[3], (unsigned long)number_arg("COUNT", argv[4], 1, 100000000));
    if (argc == 3 && strcmp(argv[1], "lines") == 0)
        return lines((unsigned long)number_arg("COUNT", argv[2], 1, 100000000));
    fputs("usage: follow_bench tap EXCHANGE ROUTING_KEY COUNT | follow_bench lines COUNT\n",
          stderr);
    return 2;
}
