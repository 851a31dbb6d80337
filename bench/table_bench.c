/*
 * table_bench: what a large header table costs per message, against a small one and against
 * librabbitmq's own decode of the same frame, to show that every scan of a header table is
 * linear (issue 18.5: a 25,000-entry table cost 2.3 s per message when table_is_plain
 * compared keys pairwise). Figures only; nothing here passes or fails.
 *
 *   table_bench [--rounds N]      (default 20; the best round of each row is printed)
 *
 * The table: N entries of a distinct 3-byte printable key and a void value (5 bytes each on
 * the wire), so that 25,000 of them fit in one 128 KB frame (125,004 bytes). Rows, per
 * message, for N = 25 and N = 25,000:
 *   - librabbitmq: amqp_decode_table of the frame alone (the floor: what any client pays);
 *   - peek: what dlqx does with a delivery's headers in a snapshot — htable_decode_wire
 *     (librabbitmq's decode and the copy into dlqx's table), then store_append (decode,
 *     index, and the lossless record written by snapshot_format);
 *   - decode: decode_message and the `dlqx decode` record (decoded_to_json, json_dumps);
 *   - detail: the message detail as the explorer shows it (detail_render).
 * Then, per row, the cost per entry at 25,000 over the cost per entry at 25 (1.0 is linear;
 * pairwise scans make it ~1,000) and dlqx's peek over librabbitmq's decode at 25,000.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <amqp.h>
#include <jansson.h>

#include "decode.h"
#include "detail.h"
#include "hval_amqp.h"
#include "message.h"
#include "store.h"
#include "util.h"

#define NOW_MS 1767326645678LL
#define BIG 25000
#define SMALL 25

enum row { ROW_LIBRABBITMQ, ROW_PEEK, ROW_DECODE, ROW_DETAIL, ROW_COUNT };
static const char *const row_names[ROW_COUNT] = {"librabbitmq decode", "peek", "decode record",
                                                 "detail"};

static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* The frame: 4-byte big-endian length, then n entries of key (3 printable bytes) and 'V'. */
static struct bytes frame(size_t n)
{
    size_t len = 4 + n * 5;
    unsigned char *p = xmalloc(len);
    size_t body = len - 4;
    p[0] = (unsigned char)(body >> 24);
    p[1] = (unsigned char)(body >> 16);
    p[2] = (unsigned char)(body >> 8);
    p[3] = (unsigned char)body;
    for (size_t i = 0; i < n; i++) {
        unsigned char *e = p + 4 + i * 5;
        e[0] = 3;
        e[1] = (unsigned char)('!' + i / (94 * 94) % 94);
        e[2] = (unsigned char)('!' + i / 94 % 94);
        e[3] = (unsigned char)('!' + i % 94);
        e[4] = 'V';
    }
    struct bytes b = {len, p};
    return b;
}

static void fill_message(struct message *m, struct htable *h)
{
    message_init(m);
    htable_free(m->headers);
    m->headers = h;
    m->headers_present = true;
    m->queue = bytes_from_cstr("orders.dlq");
    m->routing_key = bytes_from_cstr("orders.dlq");
    m->body = bytes_from_cstr("{\"order\":42}");
    props_set_string(&m->props, PROP_content_type, "application/json", 16);
}

static struct htable *wire_decode(const struct bytes *f)
{
    struct htable *h = NULL;
    struct error err;
    error_clear(&err);
    if (htable_decode_wire(f->data, f->len, &h, &err) != ST_OK) {
        fprintf(stderr, "table_bench: %s\n", err.msg);
        exit(1);
    }
    return h;
}

/* One message through a row. The peek row starts from the frame and appends to s; the
 * decode and detail rows start from the message m (its headers already decoded). */
static void run_once(enum row r, const struct bytes *f, struct store *s, const struct message *m)
{
    struct error err;
    error_clear(&err);
    if (r == ROW_LIBRABBITMQ) {
        amqp_pool_t pool;
        init_amqp_pool(&pool, 4096);
        amqp_table_t t;
        size_t off = 0;
        amqp_bytes_t enc = {f->len, f->data};
        if (amqp_decode_table(enc, &pool, &t, &off) != AMQP_STATUS_OK) {
            fprintf(stderr, "table_bench: librabbitmq cannot decode the frame\n");
            exit(1);
        }
        empty_amqp_pool(&pool);
    } else if (r == ROW_PEEK) {
        struct message pm;
        fill_message(&pm, wire_decode(f));
        if (store_append(s, &pm, NOW_MS, &err) != ST_OK) {
            fprintf(stderr, "table_bench: %s\n", err.msg);
            exit(1);
        }
        message_free(&pm);
    } else {
        struct decoded d;
        decode_message(m, NOW_MS, &d);
        if (r == ROW_DECODE) {
            json_t *j = decoded_to_json(&d, NOW_MS);
            free(json_dumps(j, JSON_COMPACT));
            json_decref(j);
        } else {
            struct detail_doc doc;
            detail_render(&d, m, NOW_MS, 0, &doc);
            detail_doc_free(&doc);
        }
        decoded_free(&d);
    }
}

/* CPU seconds per message, best of rounds of per_round messages (a small table runs many a
 * round to be measurable); what a round needs is made before its clock starts. */
static double best(enum row r, const struct bytes *f, size_t per_round, int rounds)
{
    double b = 1e30;
    struct message m;
    fill_message(&m, wire_decode(f));
    for (int i = 0; i < rounds; i++) {
        struct store *s = NULL;
        struct error err;
        if (store_new(0, NULL, &s, &err) != ST_OK) {
            fprintf(stderr, "table_bench: %s\n", err.msg);
            exit(1);
        }
        double t0 = cpu_now();
        for (size_t k = 0; k < per_round; k++)
            run_once(r, f, s, &m);
        double t = (cpu_now() - t0) / (double)per_round;
        store_free(s);
        if (t < b)
            b = t;
    }
    message_free(&m);
    return b;
}

int main(int argc, char **argv)
{
    int rounds = 20;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc && atoi(argv[i + 1]) > 0) {
            rounds = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: table_bench [--rounds N]\n");
            return 2;
        }
    }
    struct bytes small = frame(SMALL), big = frame(BIG);
    printf("table_bench: header tables of %d and %d entries (3-byte keys, void values; the "
           "large one is a %zu-byte frame), CPU time per message, best of %d rounds\n",
           SMALL, BIG, big.len, rounds);
    double cost[ROW_COUNT][2];
    for (int r = 0; r < ROW_COUNT; r++) {
        best((enum row)r, &big, 1, 1); /* warm-up */
        cost[r][0] = best((enum row)r, &small, 1000, rounds);
        cost[r][1] = best((enum row)r, &big, 1, rounds);
        double per_small = cost[r][0] / SMALL, per_big = cost[r][1] / BIG;
        printf("  %-19s %5d entries %10.2f us/msg %7.1f ns/entry | %5d entries %10.2f ms/msg "
               "%7.1f ns/entry | per-entry ratio %6.2f\n",
               row_names[r], SMALL, cost[r][0] * 1e6, per_small * 1e9, BIG, cost[r][1] * 1e3,
               per_big * 1e9, per_big / per_small);
    }
    printf("  peek of a %d-entry table: %.2f ms/msg, %.1f x librabbitmq's decode of the same "
           "frame (%.2f ms)\n",
           BIG, cost[ROW_PEEK][1] * 1e3, cost[ROW_PEEK][1] / cost[ROW_LIBRABBITMQ][1],
           cost[ROW_LIBRABBITMQ][1] * 1e3);
    bytes_free(&small);
    bytes_free(&big);
    return 0;
}
