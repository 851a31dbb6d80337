/*
 * follow: every new dead letter of some DLQs, decoded, as it arrives, without touching the
 * DLQs. A tap queue of dlqx's own (tap.h) is bound like each DLQ; what a tap cannot see (dead
 * letters sent through the default exchange) is said on stderr, and such a DLQ's depth and
 * rate are shown from the management API instead. SIGINT, SIGTERM and SIGHUP end it and the
 * taps are deleted; the broker deletes them itself when the connection dies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker_opts.h"
#include "cli.h"
#include "decode.h"
#include "filter.h"
#include "mgmt.h"
#include "sanitize.h"
#include "stopsig.h"
#include "tap.h"
#include "tapset.h"

enum { MAX_QUEUES = TAPSET_MAX, POLL_S = 5 };

static void usage(FILE *to)
{
    fputs("usage: dlqx follow QUEUE... [--json | --format json|table] [--filter EXPR]\n"
          "                  [--from-offset first|last|next|N]   (streams)\n"
          "                  [--url URL]... [--password-file FILE | --ask-password]\n"
          "                  [--mgmt-url URL] [--cacert FILE] [--cert FILE --key FILE]\n",
          to);
}

/* What the tap set-up says (tapset.h), on stderr. */
static void note_stderr(void *ctx, bool hidden, const char *text)
{
    (void)ctx;
    (void)hidden;
    san_eprintf("dlqx follow: %s\n", text);
}

/* The depth and publish rate of the polled DLQs, from the management API. */
static void poll_depths(struct mgmt *m, const char *vhost, const struct tapset *ts,
                        const bool *polled)
{
    struct mgmt_queue *qs = NULL;
    size_t nq = 0;
    struct error err;
    if (mgmt_list_queues(m, vhost, &qs, &nq, &err) != ST_OK) {
        san_eprintf("dlqx follow: %s\n", err.msg);
        return;
    }
    for (int i = 0; i < ts->n; i++) {
        if (!polled[i])
            continue;
        for (size_t k = 0; k < nq; k++) {
            if (strcmp(qs[k].name, ts->qs[i].name) != 0)
                continue;
            char rate[32] = "unknown";
            if (qs[k].publish_rate >= 0)
                snprintf(rate, sizeof rate, "%.1f/s", qs[k].publish_rate);
            san_eprintf("dlqx follow: %s: %lld messages (management API, ~5 s behind), "
                        "arriving at %s\n",
                        ts->qs[i].name, (long long)qs[k].messages, rate);
        }
    }
    mgmt_queues_free(&qs, &nq);
}

struct follow_run {
    struct conn *c;
    struct mgmt *m;
    const char *vhost;
    const char *names[MAX_QUEUES];
    int n;
    struct tapset ts;
    bool polled[MAX_QUEUES]; /* its depth is shown instead */
    struct filter *filter;
    const char *from_offset; /* --from-offset: streams are read from it instead of tapped */
    struct cli_decode_out out;
};

/* Reads the taps until a signal, a lost connection or a failed write. */
static int follow_loop(struct follow_run *r, bool any_polled)
{
    double next_poll = 0;
    while (!stopsig_caught()) {
        if (any_polled && clock_mono_s() >= next_poll) {
            poll_depths(r->m, r->vhost, &r->ts, r->polled);
            next_poll = clock_mono_s() + POLL_S;
        }
        if (!r->ts.n_taps) {
            struct timespec ts = {0, 250000000L}; /* a signal ends it early */
            nanosleep(&ts, NULL);
            continue;
        }
        struct message msg;
        unsigned which;
        enum conn_err kind = CONN_OK;
        struct error err;
        enum tap_next got =
            tap_next(r->c, r->ts.taps, r->ts.n_taps, 250, &msg, &which, &kind, &err);
        if (got == TAP_TIMEOUT)
            continue;
        if (got == TAP_FAILED) {
            if (stopsig_caught())
                break;
            san_eprintf("dlqx follow: %s\n", err.msg);
            if (conn_alive(r->c))
                return broker_exit_code(kind);
            /* A restart, a shutdown, a network failure: the exclusive taps went with the
             * connection; what is dead-lettered from now on is in the DLQs, not shown. */
            unsigned queues = 0; /* taps, not streams read from an offset */
            for (unsigned i = 0; i < r->ts.n_taps; i++)
                queues += !r->ts.taps[i].stream;
            san_eprintf("dlqx follow: the connection is lost: %s and %s; run dlqx follow again "
                        "to go on\n",
                        !queues       ? "the stream reads ended with it"
                        : queues == 1 ? "the broker deleted the tap with it"
                                      : "the broker deleted the taps with it",
                        r->n == 1 ? "the DLQ keeps its dead letters"
                                  : "the DLQs keep their dead letters");
            return EXIT_CONNECTION_LOST;
        }
        int64_t now = clock_now_ms();
        r->out.now_ms = now;
        struct decoded d;
        decode_message(&msg, now, &d);
        if (!r->filter || filter_match_message(r->filter, &msg, &d, now)) {
            cli_decode_write(&r->out, &d);
            fflush(stdout);
        }
        decoded_free(&d);
        message_free(&msg);
        if (ferror(stdout))
            return EXIT_IOERR;
    }
    return EXIT_OK;
}

/* Finds the DLQs, sets up the taps and follows. */
static int follow(struct follow_run *r)
{
    struct error err;
    enum conn_err kind = CONN_OK;
    int missing = -1, rc = EXIT_OK;
    switch (tapset_open(&r->ts, r->c, r->m, r->vhost, r->names, r->n, r->from_offset, note_stderr,
                        NULL, &missing, &kind, &err)) {
    case TAPSET_OK:
        break;
    case TAPSET_MGMT_FAILED:
        san_eprintf("dlqx follow: %s\n", err.msg);
        rc = broker_mgmt_exit(mgmt_last_error(r->m));
        goto out;
    case TAPSET_FIND_FAILED:
        san_eprintf("dlqx follow: %s\n", err.msg);
        rc = EXIT_PROTOCOL;
        goto out;
    case TAPSET_MISSING:
        san_eprintf("dlqx follow: %s\n", err.msg);
        broker_suggest_from(r->ts.list_q, r->ts.nq, r->vhost, r->names[missing]);
        rc = EXIT_QUEUE_MISSING;
        goto out;
    case TAPSET_TAP_FAILED:
        san_eprintf("dlqx follow: %s: %s\n", r->ts.qs[r->ts.n - 1].name, err.msg);
        rc = conn_alive(r->c) ? broker_exit_code(kind) : EXIT_CONNECTION_LOST;
        goto out;
    }
    bool any_polled = false;
    for (int i = 0; i < r->ts.n; i++) {
        const struct tapset_queue *f = &r->ts.qs[i];
        if (!f->hidden)
            continue;
        if (f->q->qtype == MGMT_QT_STREAM)
            san_eprintf("dlqx follow: %s is a stream: --from-offset next reads what reaches "
                        "it from now on, whichever way (first: from its start), without "
                        "changing it\n",
                        f->name);
        san_eprintf("dlqx follow: %s: %s; its depth and rate from the management API every "
                    "%d s instead\n",
                    f->name,
                    f->tapped ? "some of its dead letters cannot be tapped"
                              : "nothing that feeds it can be tapped",
                    POLL_S);
        r->polled[i] = true;
        any_polled = true;
    }
    san_eprintf("dlqx follow: following %d queue%s on %s (taps hold at most %d messages, each "
                "for %d s); Ctrl-C ends it\n",
                r->n, r->n == 1 ? "" : "s", conn_display_url(r->c), TAP_MAX_LENGTH,
                TAP_MESSAGE_TTL_MS / 1000);
    rc = follow_loop(r, any_polled);
out:
    tapset_close(&r->ts, r->c);
    return rc;
}

int cmd_follow(int argc, char **argv)
{
    struct broker_opts b;
    broker_opts_init(&b);
    struct follow_run r;
    memset(&r, 0, sizeof r);
    enum cli_format format = CLI_FORMAT_TABLE;
    int rc = EXIT_OK, fo;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        enum bopt_next bn = broker_opts_arg(&b, argc, argv, &i);
        if (bn == BOPT_ERROR) {
            rc = EXIT_USAGE;
            goto out;
        }
        if (bn == BOPT_CONSUMED)
            continue;
        if (strcmp(a, "--json") == 0) {
            format = CLI_FORMAT_JSON;
        } else if (strcmp(a, "--format") == 0 && i + 1 < argc) {
            const char *v = argv[++i];
            if (strcmp(v, "json") == 0 || strcmp(v, "table") == 0) {
                format = v[0] == 'j' ? CLI_FORMAT_JSON : CLI_FORMAT_TABLE;
            } else {
                san_eprintf("dlqx follow: --format is json or table\n");
                rc = EXIT_USAGE;
                goto out;
            }
        } else if ((fo = cli_filter_option("follow", argc, argv, &i, &r.filter)) != 0) {
            if (fo < 0) {
                rc = EXIT_USAGE;
                goto out;
            }
        } else if (strcmp(a, "--from-offset") == 0 && i + 1 < argc) {
            r.from_offset = argv[++i];
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            goto out;
        } else if (a[0] == '-') {
            san_eprintf("dlqx follow: unknown option %s\n", a);
            rc = EXIT_USAGE;
            goto out;
        } else if (r.n < MAX_QUEUES) {
            r.names[r.n++] = a;
        } else {
            san_eprintf("dlqx follow: at most %d queues\n", MAX_QUEUES);
            rc = EXIT_USAGE;
            goto out;
        }
    }
    if (!r.n) {
        usage(stderr);
        rc = EXIT_USAGE;
        goto out;
    }
    if (!broker_opts_finish(&b)) {
        rc = EXIT_USAGE;
        goto out;
    }
    if (b.no_mgmt || !b.mgmt_url) {
        san_eprintf("dlqx follow: the management API is needed to find what feeds a DLQ "
                    "(--mgmt-url or DLQX_MGMT_URL)\n");
        rc = EXIT_USAGE;
        goto out;
    }
    r.m = broker_mgmt(&b, &rc);
    if (!r.m)
        goto out;
    r.c = broker_connect(&b, &rc);
    if (!r.c)
        goto out;
    r.vhost = conn_vhost(r.c);
    cli_decode_setup(&r.out, format, -1);
    if (format == CLI_FORMAT_TABLE)
        cli_decode_header(&r.out);
    stopsig_catch();
    rc = follow(&r);
    if (stopsig_caught())
        san_eprintf("dlqx follow: stopped; the taps are deleted\n");
    stopsig_release();
    sb_free(&r.out.line);
    if (!cli_flush_stdout())
        rc = EXIT_IOERR;
out:
    if (r.c)
        conn_close(r.c);
    mgmt_close(&r.m);
    filter_free(r.filter);
    broker_opts_free(&b);
    return rc;
}
