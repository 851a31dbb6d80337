/*
 * gensnap: N synthetic dead letters in the snapshot format, deterministic, for the screen
 * tests and the UI benchmark (a million rows opened and scrolled). A realistic mix: AceMQ
 * set-aside copies with causal chains, a few causes with varying numbers in their errors,
 * several queues, ages spread over a day.
 * usage: gensnap N > FILE
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 1000;
    static const char *const queues[] = {"orders.dlq", "payments.dlq", "shipping.dlq",
                                         "billing.dlq"};
    static const char *const types[] = {"order.placed", "payment.requested", "payment.charge",
                                        "shipment.requested", "invoice.issued"};
    /* The part before the number, and after it. */
    static const char *const errors[][2] = {
        {"exhausted 5 attempts: TimeoutException: gateway timed out after ", " ms"},
        {"gave up after 5 attempts: Payments::Declined: order A-", ": upstream refused"},
        {"retrying cannot help: ArgumentError: unknown carrier \\\"dhl-", "\\\""},
        {"exhausted 3 attempts: SQLException: deadlock on row ", ""},
    };
    const long long t0 = 1767243600000LL; /* a day before the tests' fixed now */
    unsigned long x = 88172645463325252UL;
    for (long i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        long q = (long)(x % 4), t = (long)((x >> 8) % 5), e = (long)((x >> 16) % 4);
        long chain = i / 3, pos = i % 3;
        long long first = t0 + (long long)(i * 86400000LL / (n ? n : 1));
        char cause[64] = "";
        if (pos)
            snprintf(cause, sizeof cause, ",\"x-acemq-causation\":\"m-%08ld-%ld\"", chain, pos - 1);
        char err[160];
        snprintf(err, sizeof err, "%s%ld%s", errors[e][0], 29000 + (long)((x >> 24) % 2000),
                 errors[e][1]);
        printf("{\"v\":1,\"queue\":\"%s\",\"exchange\":\"\",\"routing_key\":\"%s\","
               "\"redelivered\":false,\"fetched_at_ms\":1767330000000,"
               "\"properties\":{\"content_type\":\"application/json\",\"delivery_mode\":2,"
               "\"message_id\":\"m-%08ld-%ld\"},\"headers\":{\"x-acemq-id\":\"m-%08ld-%ld\","
               "\"x-acemq-type\":\"%s\",\"x-acemq-version\":{\"type\":\"int32\",\"value\":1},"
               "\"x-acemq-correlation\":\"c-%08ld\"%s,\"x-acemq-attempt\":{\"type\":\"int32\","
               "\"value\":%ld},\"x-acemq-first-seen\":%lld,\"x-acemq-error\":\"%s\"},"
               "\"body\":\"{\\\"n\\\":%ld}\"}\n",
               queues[q], queues[q], chain, pos, chain, pos, types[t], chain, cause,
               1 + (long)((x >> 32) % 5), first, err, i);
    }
    return 0;
}
