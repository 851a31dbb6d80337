/*
 * queues: the dead-letter queues of a broker — with the management API, every queue with its
 * type, depth, consumers, arguments and effective policy, which queues dead-letter into which,
 * and which lose their dead letters; without it, the queues named on the command line with
 * their depth from a passive declare. It says which mode it is in.
 */
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "broker_opts.h"
#include "cli.h"
#include "dlqfind.h"
#include "mgmt.h"
#include "peek.h"
#include "qhealth.h"
#include "sanitize.h"
#include "suggest.h"

static void cell(struct strbuf *sb, const char *s, int width)
{
    sanitize_fit(sb, s ? s : "", s ? strlen(s) : 0, width, SAN_PAD);
    sb_adds(sb, "  ");
}

static void num(char *buf, size_t cap, int64_t v)
{
    if (v < 0)
        snprintf(buf, cap, "?");
    else
        snprintf(buf, cap, "%lld", (long long)v);
}

static json_t *str_or_null(const char *s)
{
    return s ? json_string(s) : json_null();
}

/* What IN/S shows: the API's publish rate when it has one above zero, else the growth of the
 * depth between the two samples (the API has no publish stats for dead-lettering, so a DLQ
 * that fills shows 0 or nothing there), else the API's 0. NAN: unknown. */
static double in_rate(const struct mgmt_queue *q, double growth, const char **source)
{
    *source = NULL;
    if (q->publish_rate > 0) {
        *source = "api";
        return q->publish_rate;
    }
    if (!isnan(growth) && growth >= 0) {
        *source = "depth";
        return growth;
    }
    if (q->publish_rate == 0) {
        *source = "api";
        return 0;
    }
    return NAN;
}

static json_t *count_or_null(int64_t v, bool known)
{
    return known && v >= 0 ? json_integer(v) : json_null();
}

static json_t *strs_json(const struct mgmt_strs *l)
{
    if (!l->known)
        return json_null();
    json_t *a = json_array();
    for (size_t i = 0; i < l->n; i++)
        json_array_append_new(a, json_string(l->v[i]));
    return a;
}

/* Where the queue lives and what is wrong with that: the fields #13 asks for. */
static void placement_json(json_t *o, const struct mgmt_queue *q, const struct qhealth *h)
{
    json_object_set_new(o, "state", str_or_null(q->state));
    json_object_set_new(o, "available", json_boolean(qhealth_depth_known(h)));
    json_object_set_new(o, "node", str_or_null(q->node));
    json_object_set_new(o, "leader", str_or_null(q->leader));
    json_object_set_new(o, "members", strs_json(&q->members));
    json_object_set_new(o, "online", strs_json(&q->online));
    json_t *w = json_array();
    for (unsigned bit = 1; bit && bit <= QH_WARN_LAST; bit <<= 1) {
        if (!(h->warn & bit))
            continue;
        struct strbuf sb;
        sb_init(&sb);
        qhealth_describe(q, h, bit, &sb);
        json_array_append_new(w, json_pack("{s:s,s:s}", "warning", qhealth_warn_name(bit), "text",
                                           sb.buf ? sb.buf : ""));
        sb_free(&sb);
    }
    json_object_set_new(o, "placement_warnings", w);
}

static json_t *entry_json(const struct mgmt_queue *qs, const struct dlq_entry *e,
                          const struct qhealth *h, double growth)
{
    const struct mgmt_queue *q = e->queue;
    bool known = qhealth_depth_known(h);
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(q->name));
    json_object_set_new(o, "vhost", json_string(q->vhost));
    json_object_set_new(o, "type", str_or_null(q->type));
    json_object_set_new(o, "messages", count_or_null(q->messages, known));
    json_object_set_new(o, "ready", count_or_null(q->ready, known));
    json_object_set_new(o, "unacked", count_or_null(q->unacked, known));
    json_object_set_new(o, "consumers",
                        q->consumers >= 0 ? json_integer(q->consumers) : json_null());
    json_object_set_new(o, "publish_rate",
                        q->publish_rate >= 0 ? json_real(q->publish_rate) : json_null());
    const char *source;
    double in = in_rate(q, growth, &source);
    json_object_set_new(o, "in_rate", isnan(in) ? json_null() : json_real(in));
    json_object_set_new(o, "in_rate_source", str_or_null(source));
    json_object_set_new(o, "depth_rate", isnan(growth) ? json_null() : json_real(growth));
    json_object_set_new(o, "role",
                        json_string(e->role == DLQ_ROLE_DLQ     ? "dlq"
                                    : e->role == DLQ_ROLE_RETRY ? "retry"
                                                                : "queue"));
    json_t *why = json_array();
    for (unsigned bit = 1; bit && bit <= DLQ_WHY_NAMED; bit <<= 1)
        if (e->why & bit)
            json_array_append_new(why, json_string(dlq_why_str(bit)));
    json_object_set_new(o, "why", why);
    json_t *src = json_array();
    for (size_t i = 0; i < e->n_sources; i++)
        json_array_append_new(src, json_string(qs[e->sources[i].queue].name));
    json_object_set_new(o, "sources", src);
    json_t *tgt = json_array();
    for (size_t i = 0; i < e->n_targets; i++)
        json_array_append_new(tgt, json_string(qs[e->targets[i].queue].name));
    json_object_set_new(o, "dead_letters_to", tgt);
    json_t *warn = json_array();
    for (unsigned bit = 1; bit && bit <= DLQ_WARN_LOOP; bit <<= 1)
        if (e->warn & bit)
            json_array_append_new(warn, json_string(dlq_warn_str(bit)));
    json_object_set_new(o, "warnings", warn);
    json_object_set_new(o, "dead_letter_exchange", str_or_null(q->dead_letter_exchange));
    json_object_set_new(o, "dead_letter_routing_key", str_or_null(q->dead_letter_routing_key));
    json_object_set_new(o, "delivery_limit",
                        q->delivery_limit >= 0 ? json_integer(q->delivery_limit) : json_null());
    json_object_set_new(o, "policy", str_or_null(q->policy));
    placement_json(o, q, h);
    return o;
}

static bool named(char **names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return true;
    return false;
}

static bool shown(const struct dlq_entry *e, bool all, char **names, int n_names)
{
    return n_names ? named(names, n_names, e->queue->name) : all || e->role == DLQ_ROLE_DLQ;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* The management API's counts lag by some seconds: where AMQP is at hand, a passive declare
 * gives the exact ready count and consumers of each queue shown (those of the connection's
 * vhost). With an interval, a second look that long after the first gives each queue's
 * growth (growth[i], messages/s; NAN unknown). */
static void exact_counts(const struct broker_opts *b, struct dlq_report *rep, bool all,
                         char **names, int n_names, double interval, double *growth, bool *exact,
                         bool *amqp_failed, bool *other_vhosts)
{
    for (size_t i = 0; i < rep->n; i++)
        growth[i] = NAN;
    int rc;
    struct conn *c = broker_connect(b, &rc);
    if (!c) {
        *amqp_failed = true;
        return;
    }
    *exact = true;
    int64_t *first = xcalloc(rep->n ? rep->n : 1, sizeof *first);
    double *at = xcalloc(rep->n ? rep->n : 1, sizeof *at);
    for (int pass = 0; pass < (interval > 0 ? 2 : 1); pass++) {
        if (pass)
            sleep_s(interval);
        for (size_t i = 0; i < rep->n && conn_alive(c); i++) {
            struct dlq_entry *e = &rep->entries[i];
            if (!shown(e, all, names, n_names))
                continue;
            if (strcmp(e->queue->vhost, conn_vhost(c)) != 0) {
                *other_vhosts = true;
                continue;
            }
            uint32_t ready, consumers;
            enum conn_err kind;
            struct error err;
            /* The report borrows the listing; its counts are ours to correct. */
            struct mgmt_queue *q = (struct mgmt_queue *)(uintptr_t)e->queue;
            if (conn_queue_inspect(c, 1, q->name, &ready, &consumers, &kind, &err) != ST_OK) {
                first[i] = -1;
                continue;
            }
            double now = clock_mono_s();
            if (pass && first[i] >= 0 && now > at[i])
                growth[i] = ((double)ready - (double)first[i]) / (now - at[i]);
            first[i] = ready;
            at[i] = now;
            q->ready = ready;
            q->consumers = consumers;
            if (q->unacked >= 0)
                q->messages = ready + q->unacked;
        }
    }
    free(first);
    free(at);
    conn_close(c);
}

/* The placement warnings of the queues shown, one sentence each, under the table. */
static void placement_warnings(struct strbuf *sb, const struct dlq_report *rep,
                               const struct qhealth *health, bool all, char **names, int n_names)
{
    bool any = false;
    for (size_t i = 0; i < rep->n; i++) {
        const struct dlq_entry *e = &rep->entries[i];
        if (!shown(e, all, names, n_names))
            continue;
        for (unsigned bit = 1; bit && bit <= QH_WARN_LAST; bit <<= 1) {
            if (!(health[i].warn & bit))
                continue;
            if (!any)
                sb_adds(sb, "\nwhere the dead letters live:\n");
            any = true;
            sb_adds(sb, "  ");
            sanitize_append(sb, e->queue->name, strlen(e->queue->name), 0);
            sb_adds(sb, ": ");
            qhealth_describe(e->queue, &health[i], bit, sb);
            sb_addc(sb, '\n');
        }
    }
}

static int with_mgmt(const struct broker_opts *b, struct mgmt *m, const char *vhost, bool json,
                     bool all, char **names, int n_names, double interval)
{
    struct mgmt_queue *qs = NULL;
    struct mgmt_exchange *xs = NULL;
    struct mgmt_binding *bs = NULL;
    struct mgmt_node *nodes = NULL;
    size_t nq = 0, nx = 0, nb = 0, nn = 0;
    struct qh_cluster cluster = {NULL, 0, false};
    struct error err;
    error_clear(&err);
    int rc = EXIT_OK;
    if (mgmt_list_queues(m, vhost, &qs, &nq, &err) != ST_OK ||
        mgmt_list_exchanges(m, vhost, &xs, &nx, &err) != ST_OK ||
        mgmt_list_bindings(m, vhost, &bs, &nb, &err) != ST_OK) {
        san_eprintf("dlqx: %s\n", err.msg);
        rc = broker_mgmt_exit(mgmt_last_error(m));
        goto out;
    }
    /* The cluster's nodes: a user without the monitoring tag may not read them, and then
     * nothing is guessed about the cluster. */
    if (mgmt_list_nodes(m, &nodes, &nn, &err) == ST_OK)
        cluster = (struct qh_cluster){nodes, nn, true};
    error_clear(&err);
    struct dlq_input in = {qs, nq, xs, nx, bs, nb};
    struct dlq_report rep;
    if (dlqfind_run(&in, &rep, &err) != ST_OK) {
        san_eprintf("dlqx: %s\n", err.msg);
        rc = EXIT_PROTOCOL;
        goto out;
    }
    /* The vhost column: when the rows come from more than one vhost. */
    bool vhost_column = false;
    for (size_t i = 1; i < nq && !vhost_column; i++)
        vhost_column = strcmp(qs[i].vhost, qs[0].vhost) != 0;
    for (int i = 0; i < n_names; i++) {
        bool found = false;
        for (size_t k = 0; k < nq && !found; k++)
            found = strcmp(qs[k].name, names[i]) == 0;
        if (found)
            continue;
        struct strbuf sb;
        sb_init(&sb);
        sb_adds(&sb, "dlqx: there is no queue \"");
        sanitize_append(&sb, names[i], strlen(names[i]), 0);
        if (vhost) {
            sb_adds(&sb, "\" in virtual host \"");
            sanitize_append(&sb, vhost, strlen(vhost), 0);
            sb_adds(&sb, "\"\n");
        } else {
            sb_adds(&sb, "\" in any virtual host\n");
        }
        fputs(sb.buf, stderr);
        sb_free(&sb);
        broker_suggest_from(qs, nq, vhost, names[i]);
        rc = EXIT_QUEUE_MISSING;
    }
    bool exact = false, amqp_failed = false, other_vhosts = false;
    double *growth = xcalloc(rep.n ? rep.n : 1, sizeof *growth);
    struct qhealth *health = xcalloc(rep.n ? rep.n : 1, sizeof *health);
    for (size_t i = 0; i < rep.n; i++)
        qhealth_eval(rep.entries[i].queue, &cluster, &health[i]);
    exact_counts(b, &rep, all, names, n_names, interval, growth, &exact, &amqp_failed,
                 &other_vhosts);
    struct strbuf sb;
    sb_init(&sb);
    sb_addf(&sb, "dlqx: management API at %s: %zu queues in ", mgmt_display_url(m), nq);
    if (vhost) {
        sb_adds(&sb, "vhost ");
        sanitize_append(&sb, vhost, strlen(vhost), 0);
    } else {
        sb_adds(&sb, "every vhost");
    }
    sb_addf(&sb, ", %zu dead-letter queues%s; counts %s%s", rep.n_dlq,
            rep.n_warn ? ", and queues that lose their dead letters (see below)" : "",
            exact         ? "exact (passive declare)"
            : amqp_failed ? "from the management API (they lag a few seconds): the AMQP "
                            "connection failed (above), so peek and replay would too"
                          : "from the management API (they lag a few seconds)",
            exact && other_vhosts ? " in the URL's vhost, from the management API in the others"
                                  : "");
    if (exact && interval > 0)
        sb_addf(&sb, "; IN/S is the API's publish rate, or ~N the depth's growth over %.1f s",
                interval);
    sb_addc(&sb, '\n');
    fputs(sb.buf, stderr);
    sb_reset(&sb);
    if (!json) {
        if (vhost_column)
            cell(&sb, "VHOST", 12);
        cell(&sb, "QUEUE", 28);
        cell(&sb, "TYPE", 7);
        cell(&sb, "READY", 7);
        cell(&sb, "UNACKED", 7);
        cell(&sb, "CONS", 4);
        cell(&sb, "IN/S", 6);
        cell(&sb, "NODE", 20);
        cell(&sb, "MEMBERS", 10);
        cell(&sb, "ROLE", 5);
        sb_adds(&sb, "SOURCE\n");
    }
    for (size_t i = 0; i < rep.n; i++) {
        const struct dlq_entry *e = &rep.entries[i];
        if (!shown(e, all, names, n_names))
            continue;
        if (json) {
            json_t *o = entry_json(qs, e, &health[i], growth[i]);
            char *line = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
            sb_adds(&sb, line ? line : "{}");
            sb_addc(&sb, '\n');
            free(line);
            json_decref(o);
            continue;
        }
        const struct mgmt_queue *q = e->queue;
        char ready[24], unacked[24], cons[24], rate[24];
        bool known = qhealth_depth_known(&health[i]);
        num(ready, sizeof ready, known ? q->ready : -1);
        num(unacked, sizeof unacked, known ? q->unacked : -1);
        num(cons, sizeof cons, q->consumers);
        const char *source;
        double inbound = in_rate(q, growth[i], &source);
        if (isnan(inbound))
            snprintf(rate, sizeof rate, "-");
        else
            snprintf(rate, sizeof rate, "%s%.1f", strcmp(source, "depth") == 0 ? "~" : "", inbound);
        if (vhost_column)
            cell(&sb, q->vhost, 12);
        cell(&sb, q->name, 28);
        cell(&sb, q->type ? q->type : "?", 7);
        cell(&sb, ready, 7);
        cell(&sb, unacked, 7);
        cell(&sb, cons, 4);
        cell(&sb, rate, 6);
        cell(&sb, health[i].where ? health[i].where : "?", 20);
        struct strbuf mem;
        sb_init(&mem);
        qhealth_members(&health[i], &mem);
        cell(&sb, mem.buf, 10);
        sb_free(&mem);
        cell(&sb, e->role == DLQ_ROLE_DLQ ? "dlq" : e->role == DLQ_ROLE_RETRY ? "retry" : "", 5);
        for (size_t k = 0; k < e->n_sources; k++) {
            if (k)
                sb_adds(&sb, ", ");
            const char *n = qs[e->sources[k].queue].name;
            sanitize_append(&sb, n, strlen(n), 0);
        }
        if (!e->n_sources && e->role == DLQ_ROLE_DLQ)
            sb_adds(&sb, "(named like a DLQ; no queue dead-letters here)");
        sb_addc(&sb, '\n');
    }
    if (!json && rep.n_warn) {
        sb_adds(&sb, "\nqueues that lose dead letters:\n");
        for (size_t i = 0; i < rep.n; i++) {
            const struct dlq_entry *e = &rep.entries[i];
            for (unsigned bit = 1; bit && bit <= DLQ_WARN_LOOP; bit <<= 1) {
                if (!(e->warn & bit))
                    continue;
                sb_adds(&sb, "  ");
                sanitize_append(&sb, e->queue->name, strlen(e->queue->name), 0);
                sb_adds(&sb, ": ");
                sb_adds(&sb, dlq_warn_str(bit));
                sb_addc(&sb, '\n');
            }
        }
    }
    if (!json)
        placement_warnings(&sb, &rep, health, all, names, n_names);
    fwrite(sb.buf ? sb.buf : "", 1, sb.len, stdout);
    sb_free(&sb);
    free(growth);
    free(health);
    dlq_report_free(&rep);
out:
    mgmt_queues_free(&qs, &nq);
    mgmt_exchanges_free(&xs, &nx);
    mgmt_bindings_free(&bs, &nb);
    mgmt_nodes_free(&nodes, &nn);
    return rc;
}

static int without_mgmt(const struct broker_opts *b, char **names, int n, bool json)
{
    if (n == 0) {
        san_eprintf("dlqx queues: without the management API (give --mgmt-url or set "
                    "DLQX_MGMT_URL), name the queues to look at\n");
        return EXIT_USAGE;
    }
    int rc = EXIT_OK;
    struct conn *c = broker_connect(b, &rc);
    if (!c)
        return rc;
    san_eprintf("dlqx: no management API: the queues named, with their depth from a passive "
                "declare on %s (types and policies unknown)\n",
                conn_display_url(c));
    struct strbuf sb;
    sb_init(&sb);
    if (!json) {
        cell(&sb, "QUEUE", 28);
        cell(&sb, "READY", 7);
        sb_adds(&sb, "CONSUMERS\n");
    }
    for (int i = 0; i < n; i++) {
        uint32_t ready = 0, consumers = 0;
        enum conn_err kind;
        struct error err;
        if (conn_queue_inspect(c, 1, names[i], &ready, &consumers, &kind, &err) != ST_OK) {
            san_eprintf("dlqx: %s\n", err.msg);
            rc = broker_exit_code(kind);
            if (kind == CONN_NOT_FOUND)
                broker_suggest_queue(b, names[i]);
            if (!conn_alive(c))
                break;
            continue;
        }
        if (json) {
            json_t *o = json_pack(
                "{s:s,s:s,s:n,s:i,s:i,s:s}", "name", names[i], "vhost", conn_vhost(c), "type",
                "ready", (json_int_t)ready, "consumers", (json_int_t)consumers, "role",
                dlqfind_classify_name(names[i], NULL) == DLQ_NAME_DLQ ? "dlq" : "queue");
            char *line = o ? json_dumps(o, JSON_COMPACT) : NULL;
            sb_adds(&sb, line ? line : "{}");
            sb_addc(&sb, '\n');
            free(line);
            json_decref(o);
        } else {
            char r[24], k[24];
            snprintf(r, sizeof r, "%u", ready);
            snprintf(k, sizeof k, "%u", consumers);
            cell(&sb, names[i], 28);
            cell(&sb, r, 7);
            sb_adds(&sb, k);
            sb_addc(&sb, '\n');
        }
    }
    fwrite(sb.buf ? sb.buf : "", 1, sb.len, stdout);
    sb_free(&sb);
    conn_close(c);
    return rc;
}

int cmd_queues(int argc, char **argv)
{
    struct broker_opts b;
    broker_opts_init(&b);
    bool json = false, all = false, all_vhosts = false;
    double interval = 1.0;
    char **names = xcalloc((size_t)argc, sizeof *names);
    int n = 0, rc = EXIT_OK;
    for (int i = 1; i < argc; i++) {
        enum bopt_next r = broker_opts_arg(&b, argc, argv, &i);
        if (r == BOPT_ERROR) {
            rc = EXIT_USAGE;
            goto out;
        }
        if (r == BOPT_CONSUMED)
            continue;
        if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--all") == 0) {
            all = true;
        } else if (strcmp(argv[i], "--all-vhosts") == 0) {
            all_vhosts = true;
        } else if (strncmp(argv[i], "--interval", 10) == 0 &&
                   (argv[i][10] == '\0' || argv[i][10] == '=')) {
            const char *v = argv[i][10] == '=' ? argv[i] + 11 : i + 1 < argc ? argv[++i] : NULL;
            char *end = NULL;
            interval = v && *v ? strtod(v, &end) : -1;
            if (!v || !*v || *end || !(interval >= 0 && interval <= 60)) {
                san_eprintf("dlqx queues: --interval takes seconds from 0 to 60 (0: one "
                            "look, the rate from the management API only)\n");
                rc = EXIT_USAGE;
                goto out;
            }
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            puts("usage: dlqx queues [--json] [--all] [--all-vhosts] [--interval SECONDS] "
                 "[QUEUE...]\n"
                 "                   [--url URL] [--mgmt-url URL] [--password-file FILE] "
                 "[--no-mgmt]");
            goto out;
        } else if (argv[i][0] == '-') {
            san_eprintf("dlqx queues: unknown option %s\n", argv[i]);
            rc = EXIT_USAGE;
            goto out;
        } else {
            names[n++] = argv[i];
        }
    }
    if (!broker_opts_finish(&b)) {
        rc = EXIT_USAGE;
        goto out;
    }
    if (b.no_mgmt || !b.mgmt_url) {
        rc = without_mgmt(&b, names, n, json);
    } else {
        struct mgmt *m = broker_mgmt(&b, &rc);
        if (!m)
            goto out;
        char *vhost = NULL;
        conn_url_parts(b.urls[0], NULL, &vhost, NULL);
        if (!all_vhosts && conn_url_empty_vhost(b.urls[0])) {
            /* Listed, the empty vhost would be every vhost: say what was read instead. */
            struct strbuf sb;
            sb_init(&sb);
            char *masked = url_mask(b.urls[0]);
            sb_adds(&sb, "dlqx: ");
            sanitize_append(&sb, masked, strlen(masked), 0);
            sb_adds(&sb, " names no vhost to list (read as ");
            conn_url_describe(b.urls[0], &sb);
            sb_adds(&sb, "): ");
            conn_url_vhost_hint(b.urls[0], &sb);
            sb_adds(&sb, " (--all-vhosts lists every vhost)\n");
            fputs(sb.buf, stderr);
            sb_free(&sb);
            free(masked);
            rc = EXIT_VHOST;
        } else {
            rc = with_mgmt(&b, m,
                           all_vhosts ? NULL
                           : vhost    ? vhost
                                      : "/",
                           json, all, names, n, interval);
        }
        free(vhost);
        mgmt_close(&m);
    }
    if (!cli_flush_stdout())
        rc = EXIT_IOERR;
out:
    free(names);
    broker_opts_free(&b);
    return rc;
}
