/*
 * rx_bench: a regex on a hostile body, dlqx's engine (src/analysis/rx.h) against glibc's
 * regexec (what the filter used before), in the same run: `x+y` and the other blow-ups over
 * a body of N 'x' (CPU time of one match each). glibc is run only up to --glibc-max bytes (it
 * is quadratic: 1 MB would take half an hour).
 *
 *   rx_bench [--glibc-max BYTES]     (default 70000)
 */
#include <locale.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rx.h"

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    size_t glibc_max = 70000;
    if (argc == 3 && !strcmp(argv[1], "--glibc-max"))
        glibc_max = (size_t)strtoull(argv[2], NULL, 10);
    else if (argc != 1) {
        fprintf(stderr, "usage: rx_bench [--glibc-max BYTES]\n");
        return 2;
    }
    if (!setlocale(LC_ALL, "C.UTF-8")) {
        fprintf(stderr, "rx_bench: no C.UTF-8 locale\n");
        return 1;
    }
    static const char *const res[] = {"x+y", "(x+x+)+y", ".*.*.*=", "[a-z]+[0-9]"};
    static const size_t sizes[] = {16000, 70000, 1u << 20, 16u << 20};
    char *s = malloc(sizes[3]);
    if (!s)
        return 1;
    memset(s, 'x', sizes[3]);
    printf("%-12s %10s %12s %12s %8s\n", "regex", "bytes", "rx s", "glibc s", "ratio");
    for (size_t r = 0; r < sizeof res / sizeof *res; r++) {
        struct rx *re = rx_compile(res[r], strlen(res[r]), 0, RX_MAX_STATES, NULL, NULL, NULL);
        regex_t g;
        if (!re || regcomp(&g, res[r], REG_EXTENDED | REG_NOSUB) != 0)
            return 1;
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            size_t n = sizes[k];
            double t0 = cpu_s();
            bool a = rx_match(re, s, n, NULL);
            double t1 = cpu_s();
            printf("%-12s %10zu %12.4f", res[r], n, t1 - t0);
            if (n <= glibc_max) {
                regmatch_t m[1] = {{.rm_so = 0, .rm_eo = (regoff_t)n}};
                bool b = regexec(&g, s, 1, m, REG_STARTEND) == 0;
                double t2 = cpu_s();
                printf(" %12.4f %7.0fx%s", t2 - t1, (t2 - t1) / (t1 - t0),
                       a != b ? "  DIFFERENT" : "");
            }
            printf("\n");
        }
        regfree(&g);
        rx_free(re);
    }
    free(s);
    /* The common case: a short error text, matched a million times (the filter memoises by
     * text, so this is a scan of a million distinct errors). */
    static const char err[] = "Declined: payment gateway timed out after 30000 ms (attempt 3)";
    static const char *const common[] = {"timed out after 29[0-9]+ ms", "gateway|refused",
                                         "^Declined: .*attempt [0-9]+"};
    for (size_t r = 0; r < sizeof common / sizeof *common; r++) {
        struct rx *re =
            rx_compile(common[r], strlen(common[r]), 0, RX_MAX_STATES, NULL, NULL, NULL);
        regex_t g;
        if (!re || regcomp(&g, common[r], REG_EXTENDED | REG_NOSUB) != 0)
            return 1;
        size_t hits_rx = 0, hits_glibc = 0, n = sizeof err - 1;
        double t0 = cpu_s();
        for (int i = 0; i < 1000000; i++)
            hits_rx += rx_match(re, err, n, NULL);
        double t1 = cpu_s();
        for (int i = 0; i < 1000000; i++) {
            regmatch_t m[1] = {{.rm_so = 0, .rm_eo = (regoff_t)n}};
            hits_glibc += regexec(&g, err, 1, m, REG_STARTEND) == 0;
        }
        double t2 = cpu_s();
        printf("1M x %zu bytes /%s/: rx %.3f s, glibc %.3f s (rx %.2fx glibc's time)%s\n", n,
               common[r], t1 - t0, t2 - t1, (t1 - t0) / (t2 - t1),
               hits_rx != hits_glibc ? "  DIFFERENT" : "");
        regfree(&g);
        rx_free(re);
    }
    return 0;
}
