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
#include "dlqfind.h"
#include "filter.h"
#include "mgmt.h"
#include "sanitize.h"
#include "stopsig.h"
#include "tap.h"

enum { MAX_QUEUES = 16, POLL_S = 5 };

static void usage(FILE *to)
{
    fputs("usage: dlqx follow QUEUE... [--json | --format json|table] [--filter EXPR]\n"
          "                  [--from-offset first|last|next|N]   (streams)\n"
          "                  [--url URL]... [--password-file FILE | --ask-password]\n"
          "                  [--mgmt-url URL] [--cacert FILE] [--cert FILE --key FILE]\n",
          to);
}

/* One DLQ being followed. */
struct followed {
    const char *name;
    const struct mgmt_queue *q; /* in the listing */
    bool tapped;                /* a tap is bound to at least one of its bindings */
    bool polled;                /* its depth is shown instead */
};

/* Says on stderr where each of the DLQ's sources dead-letters (its dead-letter exchange and
 * routing key): the tap sees those through the DLQ's own bindings, which it copies (binding
 * the dead-letter exchange itself could route what the exchange would otherwise give its
 * alternate exchange), but not those through the default exchange; true when some are. */
static bool default_exchange_sources(const struct dlq_report *rep, const struct mgmt_queue *qs,
                                     const struct followed *f)
{
    const struct dlq_entry *e = dlq_report_find(rep, f->q->vhost, f->name);
    bool any = false;
    for (size_t k = 0; e && k < e->n_sources; k++) {
        const struct mgmt_queue *s = &qs[e->sources[k].queue];
        if (!s->dead_letter_exchange)
            continue;
        if (*s->dead_letter_exchange) {
            san_eprintf(
                "dlqx follow: %s: %s dead-letters to exchange %s, routing key %s%s%s\n", f->name,
                s->name, s->dead_letter_exchange, s->dead_letter_routing_key ? "\"" : "",
                s->dead_letter_routing_key ? s->dead_letter_routing_key : "(the message's own)",
                s->dead_letter_routing_key ? "\"" : "");
            continue;
        }
        any = true;
        san_eprintf("dlqx follow: %s: %s dead-letters to it through the default exchange, "
                    "which cannot be bound: follow does not see those dead letters\n",
                    f->name, s->name);
    }
    return any;
}

/* Binds the tap like every binding of the DLQ but the default exchange's. */
static enum status bind_like(struct conn *c, struct tap *t, const struct mgmt_binding *bs,
                             size_t nb, const struct followed *f, enum conn_err *kind,
                             struct error *err)
{
    for (size_t k = 0; k < nb; k++) {
        const struct mgmt_binding *b = &bs[k];
        if (b->dest_type != MGMT_DEST_QUEUE || strcmp(b->destination, f->name) != 0 ||
            strcmp(b->vhost, f->q->vhost) != 0 || !*b->source)
            continue;
        enum status s = tap_bind(c, t, b->source, b->routing_key, b->arguments, kind, err);
        if (s == ST_EUNSUPPORTED) {
            san_eprintf("dlqx follow: %s: not tapping exchange %s: %s\n", f->name, b->source,
                        err->msg);
            continue;
        }
        if (s != ST_OK)
            return s;
        san_eprintf("dlqx follow: %s: tapping exchange %s, routing key \"%s\"\n", f->name,
                    b->source, b->routing_key ? b->routing_key : "");
    }
    return ST_OK;
}

/* The depth and publish rate of the polled DLQs, from the management API. */
static void poll_depths(struct mgmt *m, const char *vhost, struct followed *fs, int n)
{
    struct mgmt_queue *qs = NULL;
    size_t nq = 0;
    struct error err;
    if (mgmt_list_queues(m, vhost, &qs, &nq, &err) != ST_OK) {
        san_eprintf("dlqx follow: %s\n", err.msg);
        return;
    }
    for (int i = 0; i < n; i++) {
        if (!fs[i].polled)
            continue;
        for (size_t k = 0; k < nq; k++) {
            if (strcmp(qs[k].name, fs[i].name) != 0)
                continue;
            char rate[32] = "unknown";
            if (qs[k].publish_rate >= 0)
                snprintf(rate, sizeof rate, "%.1f/s", qs[k].publish_rate);
            san_eprintf("dlqx follow: %s: %lld messages (management API, ~5 s behind), "
                        "arriving at %s\n",
                        fs[i].name, (long long)qs[k].messages, rate);
        }
    }
    mgmt_queues_free(&qs, &nq);
}

struct follow_run {
    struct conn *c;
    struct mgmt *m;
    const char *vhost;
    struct followed fs[MAX_QUEUES];
    int n;
    struct tap taps[MAX_QUEUES];
    unsigned n_taps;
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
            poll_depths(r->m, r->vhost, r->fs, r->n);
            next_poll = clock_mono_s() + POLL_S;
        }
        if (!r->n_taps) {
            struct timespec ts = {0, 250000000L}; /* a signal ends it early */
            nanosleep(&ts, NULL);
            continue;
        }
        struct message msg;
        unsigned which;
        enum conn_err kind = CONN_OK;
        struct error err;
        enum tap_next got = tap_next(r->c, r->taps, r->n_taps, 250, &msg, &which, &kind, &err);
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
            for (unsigned i = 0; i < r->n_taps; i++)
                queues += !r->taps[i].stream;
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
    struct mgmt_queue *qs = NULL;
    struct mgmt_exchange *xs = NULL;
    struct mgmt_binding *bs = NULL;
    size_t nq = 0, nx = 0, nb = 0;
    struct error err;
    error_clear(&err);
    struct dlq_report rep;
    memset(&rep, 0, sizeof rep);
    int rc = EXIT_OK;
    if (mgmt_list_queues(r->m, r->vhost, &qs, &nq, &err) != ST_OK ||
        mgmt_list_exchanges(r->m, r->vhost, &xs, &nx, &err) != ST_OK ||
        mgmt_list_bindings(r->m, r->vhost, &bs, &nb, &err) != ST_OK) {
        san_eprintf("dlqx follow: %s\n", err.msg);
        rc = broker_mgmt_exit(mgmt_last_error(r->m));
        goto out;
    }
    struct dlq_input in = {qs, nq, xs, nx, bs, nb};
    if (dlqfind_run(&in, &rep, &err) != ST_OK) {
        san_eprintf("dlqx follow: %s\n", err.msg);
        rc = EXIT_PROTOCOL;
        goto out;
    }
    bool any_polled = false;
    for (int i = 0; i < r->n; i++) {
        struct followed *f = &r->fs[i];
        for (size_t k = 0; k < nq && !f->q; k++)
            if (strcmp(qs[k].name, f->name) == 0)
                f->q = &qs[k];
        if (!f->q) {
            san_eprintf("dlqx follow: there is no queue \"%s\" in virtual host \"%s\"\n", f->name,
                        r->vhost);
            broker_suggest_from(qs, nq, r->vhost, f->name);
            rc = EXIT_QUEUE_MISSING;
            goto out;
        }
        enum conn_err kind = CONN_OK;
        struct tap *t = &r->taps[r->n_taps];
        if (r->from_offset && f->q->qtype == MGMT_QT_STREAM) {
            if (tap_open_stream(r->c, 1, f->name, r->from_offset, r->n_taps, t, &kind, &err) !=
                ST_OK) {
                san_eprintf("dlqx follow: %s: %s\n", f->name, err.msg);
                tap_close(r->c, t);
                rc = conn_alive(r->c) ? broker_exit_code(kind) : EXIT_CONNECTION_LOST;
                goto out;
            }
            san_eprintf("dlqx follow: %s: reading the stream from offset %s (reading a stream "
                        "does not change it)\n",
                        f->name, r->from_offset);
            f->tapped = true;
            r->n_taps++;
            continue;
        }
        if (r->from_offset)
            san_eprintf("dlqx follow: %s is not a stream (--from-offset is for streams): it is "
                        "tapped\n",
                        f->name);
        if (tap_open(r->c, 1, f->name, r->n_taps, t, &kind, &err) != ST_OK ||
            bind_like(r->c, t, bs, nb, f, &kind, &err) != ST_OK) {
            san_eprintf("dlqx follow: %s: %s\n", f->name, err.msg);
            tap_close(r->c, t);
            rc = conn_alive(r->c) ? broker_exit_code(kind) : EXIT_CONNECTION_LOST;
            goto out;
        }
        bool hidden = default_exchange_sources(&rep, qs, f);
        if (t->n_bindings) {
            f->tapped = true;
            r->n_taps++;
        } else {
            tap_close(r->c, t);
            hidden = true;
        }
        if (hidden) {
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
            f->polled = true;
            any_polled = true;
        }
    }
    san_eprintf("dlqx follow: following %d queue%s on %s (taps hold at most %d messages, each "
                "for %d s); Ctrl-C ends it\n",
                r->n, r->n == 1 ? "" : "s", conn_display_url(r->c), TAP_MAX_LENGTH,
                TAP_MESSAGE_TTL_MS / 1000);
    rc = follow_loop(r, any_polled);
out:
    for (unsigned i = 0; i < r->n_taps; i++)
        tap_close(r->c, &r->taps[i]);
    dlq_report_free(&rep);
    mgmt_queues_free(&qs, &nq);
    mgmt_exchanges_free(&xs, &nx);
    mgmt_bindings_free(&bs, &nb);
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
            r.fs[r.n++].name = a;
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
