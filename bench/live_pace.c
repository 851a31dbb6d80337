/*
 * live_pace: dead letters at a steady rate, for the explorer's live-mode benchmark
 * (bench/run-live-keys.py).
 *
 *   live_pace QUEUE RATE SECONDS CAUSES
 *
 * Publishes RATE messages a second for SECONDS seconds to QUEUE through the default exchange.
 * QUEUE is a work queue whose x-message-ttl is 0 and whose dead-letter exchange feeds the DLQ
 * under test, so the broker dead-letters every message at once: a steady stream of dead
 * letters, as a failing consumer makes them. Each message carries a Spring-style
 * x-exception-message naming one of CAUSES causes (round robin), so the groups move too. The
 * publishes are paced in 10 ms ticks against the monotonic clock (a late tick catches up, so
 * the mean rate holds). Prints how many it published and at what rate. The broker is DLQX_URL
 * with DLQX_PASSWORD_FILE.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <amqp.h>

#include "benchutil.h"
#include "conn.h"
#include "util.h"

enum { CH = 1, TICK_MS = 10 };

int main(int argc, char **argv)
{
    bench_set_name("live_pace");
    if (argc != 5) {
        fputs("usage: live_pace QUEUE RATE SECONDS CAUSES\n", stderr);
        return 2;
    }
    const char *queue = argv[1];
    long long rate = number_arg("RATE", argv[2], 1, 1000000);
    long long seconds = number_arg("SECONDS", argv[3], 1, 86400);
    long long causes = number_arg("CAUSES", argv[4], 1, 1000);
    struct conn *c = bench_connect_env("live_pace", CH);
    amqp_connection_state_t st = conn_state(c);

    const long long total = rate * seconds;
    const double start = clock_mono_s();
    long long sent = 0;
    while (sent < total) {
        double now = clock_mono_s();
        long long due = (long long)((now - start) * (double)rate) + 1;
        if (due > total)
            due = total;
        for (; sent < due; sent++) {
            char id[48], cause[96], body[64];
            snprintf(id, sizeof id, "pace-%010lld", sent + 1);
            snprintf(cause, sizeof cause, "order service failed: cause %lld of %lld",
                     sent % causes + 1, causes);
            snprintf(body, sizeof body, "{\"seq\":%lld}", sent + 1);
            amqp_table_entry_t h[1];
            h[0].key = amqp_cstring_bytes("x-exception-message");
            h[0].value.kind = AMQP_FIELD_KIND_UTF8;
            h[0].value.value.bytes = amqp_cstring_bytes(cause);
            amqp_basic_properties_t p;
            memset(&p, 0, sizeof p);
            p._flags = AMQP_BASIC_MESSAGE_ID_FLAG | AMQP_BASIC_CONTENT_TYPE_FLAG |
                       AMQP_BASIC_TYPE_FLAG | AMQP_BASIC_HEADERS_FLAG | AMQP_BASIC_TIMESTAMP_FLAG;
            p.message_id = amqp_cstring_bytes(id);
            p.content_type = amqp_cstring_bytes("application/json");
            p.type = amqp_cstring_bytes("OrderPlaced");
            p.headers = (amqp_table_t){1, h};
            p.timestamp = (uint64_t)time(NULL);
            if (amqp_basic_publish(st, CH, amqp_empty_bytes, amqp_cstring_bytes(queue), 0, 0, &p,
                                   amqp_cstring_bytes(body)) != AMQP_STATUS_OK)
                die("publishing message %lld failed", sent + 1);
        }
        struct timespec ts = {0, TICK_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    double span = clock_mono_s() - start;
    printf("live_pace: %lld published to %s in %.2f s (%.0f msg/s)\n", sent, queue, span,
           span > 0 ? (double)sent / span : 0.0);
    conn_close(c);
    return 0;
}
