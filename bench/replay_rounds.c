/* replay_rounds: replay_bench's shovel rounds (see replay_bench.h and replay_shovel.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "benchutil.h"
#include "replay_bench.h"
#include "replay_shovel.h"
#include "util.h"

/* The load average now ("1.02 0.98 0.77"), for every figure. */
static const char *load_now(void)
{
    static char buf[64];
    snprintf(buf, sizeof buf, "?");
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        double l1, l5, l15;
        if (fscanf(f, "%lf %lf %lf", &l1, &l5, &l15) == 3)
            snprintf(buf, sizeof buf, "%.2f %.2f %.2f", l1, l5, l15);
        fclose(f);
    }
    return buf;
}

/* --- the shovel rounds: RabbitMQ's own move against dlqx's replay and move -------------- */

/* RK_FLOOR: a bare pipelined mover (replay_floor.c), the most any AMQP client could show. */
enum { RK_SHOVEL, RK_REPLAY, RK_MOVE, RK_FLOOR, RK_N };
static const char *const rk_name[RK_N] = {"shovel (on-confirm)", "dlqx replay", "dlqx move",
                                          "bare mover (floor)"};

struct round_fig {
    double rate, cpu_us, broker_us;
};

/* One pass of kind k on a freshly seeded DLQ; every pass checked afterwards. */
static struct round_fig round_pass(int k, int round, const struct broker *brk,
                                   const struct shovel_api *api, const char *jdir,
                                   const struct config *cfg, int *pass, bool *failed)
{
    struct names nm;
    names_for(&nm, ++*pass);
    uint32_t n = cfg->count;
    seed(ctl(), cfg, &nm, n);
    struct round_fig f = {0, 0, 0};
    double b0 = broker_cpu_s(), c0 = cpu_s(), secs = 0, bpass = -2;
    uint64_t done = n;
    if (k == RK_SHOVEL) {
        char sname[96];
        snprintf(sname, sizeof sname, "%sshovel", nm.prefix);
        secs = shovel_pass(api, ctl(), CTL_CH, sname, nm.dlq, nm.src, n, 600.0);
    } else if (k == RK_FLOOR) {
        double cpu = 0;
        secs =
            floor_pass(brk, nm.dlq, nm.src, n, cfg->round_window ? cfg->round_window : 1000, &cpu);
        c0 = cpu_s() - cpu;
    } else {
        char *jpath = xasprintf("%s/journal-round%d-%d.jsonl", jdir, round, k);
        struct engine_result er =
            engine_pass(ctl(), brk, &nm, n, cfg->round_window,
                        k == RK_MOVE ? RESTAMP_MOVE : RESTAMP_REPLAY, jpath, cfg);
        unlink(jpath);
        free(jpath);
        /* The plan is read inside engine_pass, not timed: count only replay_run's CPU. */
        c0 = cpu_s() - er.cpu_s;
        bpass = er.broker_s; /* the node's, replay_run alone: the plan's read of the
                                whole DLQ before it is not dlqx's */
        secs = er.seconds;
        done = er.done;
        if (er.failed || er.cancelled) {
            check_nothing_lost(ctl(), &nm, n, (uint32_t)er.done, (uint32_t)er.unknown, rk_name[k]);
            *failed |= er.failed;
        }
    }
    double b1 = broker_cpu_s();
    f.rate = (double)done / secs;
    f.cpu_us = k == RK_SHOVEL ? 0 : (cpu_s() - c0) * 1e6 / (double)done;
    f.broker_us = bpass > -2           ? (bpass >= 0 ? bpass * 1e6 / (double)done : -1)
                  : b0 >= 0 && b1 >= 0 ? (b1 - b0) * 1e6 / (double)done
                                       : -1;
    printf("  round %d %-26s %7" PRIu64 " msgs in %6.2f s = %6.0f msg/s | client CPU %5.1f "
           "us/msg | broker CPU %5.1f us/msg | load %s\n",
           round, rk_name[k], done, secs, f.rate, f.cpu_us, f.broker_us, load_now());
    if (done == n)
        check_after(ctl(), &nm, n, rk_name[k], k == RK_REPLAY);
    drop(ctl(), &nm);
    return f;
}

/* R rounds of the three passes, the order rotated each round; the ratios from the means. */
bool shovel_rounds(const struct broker *brk, const char *jdir, const struct config *cfg, int *pass)
{
    const char *mg = getenv("DLQX_MGMT_URL"), *user = getenv("DLQX_BROKER_USER");
    if (!mg || !*mg)
        die("--rounds needs DLQX_MGMT_URL (scripts/broker env)");
    struct shovel_api api = {mg, user && *user ? user : "dlqx", brk->password, cfg->shovel_uri};
    char *net = NULL;
    if (strcmp(cfg->shovel_uri, "net") == 0) {
        /* Over TCP as dlqx connects: amqp://USER:PASSWORD@HOST:PORT/VHOST from DLQX_URL
         * (scripts/broker's passwords are alphanumeric: nothing to escape). */
        const char *at = strchr(brk->url, '@');
        if (strncmp(brk->url, "amqp://", 7) != 0 || !at)
            die("--shovel-uri net needs DLQX_URL as amqp://USER@HOST:PORT/VHOST");
        net = xasprintf("%.*s:%s%s", (int)(at - brk->url), brk->url, brk->password, at);
        api.src_uri = net;
    }
    struct round_fig sum[RK_N];
    memset(sum, 0, sizeof sum);
    double ratio_min[RK_N] = {0, 1e9, 1e9, 1e9}, ratio_max[RK_N] = {0, 0, 0, 0};
    bool failed = false;
    printf("== %" PRIu32 " rounds of: the shovel (src/dest uri %s, ack-mode on-confirm, "
           "prefetch 1000), dlqx replay, dlqx move, a bare mover (window %" PRIu32 "%s); %" PRIu32
           " x %zu B each, target the source (quorum)\n",
           cfg->rounds, net ? "amqp://USER:PASSWORD@ (TCP, as dlqx)" : cfg->shovel_uri,
           cfg->round_window ? cfg->round_window : 1000, cfg->round_window ? "" : ", the default",
           cfg->count, cfg->size);
    for (uint32_t r = 0; r < cfg->rounds; r++) {
        struct round_fig f[RK_N];
        for (int i = 0; i < RK_N; i++) {
            int k = (int)((r + (uint32_t)i) % RK_N);
            f[k] = round_pass(k, (int)r + 1, brk, &api, jdir, cfg, pass, &failed);
        }
        for (int k = 0; k < RK_N; k++) {
            sum[k].rate += f[k].rate;
            sum[k].cpu_us += f[k].cpu_us;
            sum[k].broker_us += f[k].broker_us;
            double q = f[k].rate / f[RK_SHOVEL].rate;
            if (k != RK_SHOVEL && q < ratio_min[k])
                ratio_min[k] = q;
            if (k != RK_SHOVEL && q > ratio_max[k])
                ratio_max[k] = q;
        }
    }
    double R = (double)cfg->rounds;
    printf("== the shovel rounds (means over %" PRIu32 ")\n", cfg->rounds);
    for (int k = 0; k < RK_N; k++)
        printf("  %-28s %7.0f msg/s | client CPU %5.1f us/msg | broker CPU %5.1f us/msg\n",
               rk_name[k], sum[k].rate / R, sum[k].cpu_us / R, sum[k].broker_us / R);
    static const double target[RK_N] = {0, 1.2, 1.3, 0};
    for (int k = RK_REPLAY; k < RK_FLOOR; k++) {
        double q = sum[k].rate / sum[RK_SHOVEL].rate;
        printf("ratio %s / shovel: %.2fx (rounds %.2f-%.2f; target >= %.1fx)%s\n", rk_name[k], q,
               ratio_min[k], ratio_max[k], target[k], q >= target[k] ? "" : "  ** below target **");
    }
    double fq = sum[RK_FLOOR].rate / sum[RK_SHOVEL].rate;
    printf("ratio bare mover / shovel: %.2fx (rounds %.2f-%.2f): the most an AMQP client shows "
           "here, with none of dlqx's work\n",
           fq, ratio_min[RK_FLOOR], ratio_max[RK_FLOOR]);
    for (int k = RK_REPLAY; k < RK_FLOOR; k++)
        printf("ratio %s / bare mover: %.2fx\n", rk_name[k], sum[k].rate / sum[RK_FLOOR].rate);
    free(net);
    return failed;
}
