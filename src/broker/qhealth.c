/*
 * qhealth: a queue's placement and its warnings (qhealth.h). What RabbitMQ 3.10's management
 * API was measured to send: every queue has `node` (a classic queue's home, a replicated
 * queue's leader's); quorum queues add `leader`, `members` and `online`, streams `members`
 * and `online`; a classic queue whose node is down is listed with `state` "down" and no
 * counts. Node names are untrusted: they were bounded by the parser and are sanitized here.
 */
#include "qhealth.h"

#include <stdio.h>
#include <string.h>

#include "sanitize.h"

static const char *const warn_names[] = {
#define X(e, v, name) name,
    QH_WARN_LIST(X)
#undef X
};

const char *qhealth_warn_name(unsigned bit)
{
    for (size_t i = 0; i < sizeof warn_names / sizeof *warn_names; i++)
        if (bit == 1u << i)
            return warn_names[i];
    return NULL;
}

/* RabbitMQ's deprecated features that a policy or a queue's arguments can use: classic queue
 * mirroring (deprecated August 2021, removed in 4.0) and its locator, queue-master-locator
 * (queue-leader-locator replaces it). The deprecated-features list of rabbitmq.com. */
static const char *const deprecated_keys[] = {
    "ha-mode",
    "ha-params",
    "ha-sync-mode",
    "ha-sync-batch-size",
    "ha-promote-on-shutdown",
    "ha-promote-on-failure",
    "queue-master-locator",
};

static void deprecated(const struct mgmt_queue *q, struct qhealth *h)
{
    size_t len = 0;
    for (size_t i = 0; i < sizeof deprecated_keys / sizeof *deprecated_keys; i++) {
        char arg[64];
        snprintf(arg, sizeof arg, "x-%s", deprecated_keys[i]);
        if (!json_object_get(q->policy_definition, deprecated_keys[i]) &&
            !json_object_get(q->arguments, arg))
            continue;
        h->warn |= QH_DEPRECATED;
        int w = snprintf(h->deprecated + len, sizeof h->deprecated - len, "%s%s", len ? ", " : "",
                         deprecated_keys[i]);
        if (w > 0 && (size_t)w < sizeof h->deprecated - len)
            len += (size_t)w;
    }
}

/* -1: not listed (unknown), 0: listed and not running, 1: running. */
static int node_running(const struct qh_cluster *c, const char *node)
{
    for (size_t i = 0; c && c->known && node && i < c->n; i++)
        if (strcmp(c->nodes[i].name, node) == 0)
            return c->nodes[i].running;
    return -1;
}

void qhealth_eval(const struct mgmt_queue *q, const struct qh_cluster *c, struct qhealth *h)
{
    memset(h, 0, sizeof *h);
    h->where = q->leader ? q->leader : q->node;
    h->replicated = q->members.known && q->members.n > 0;
    if (h->replicated) {
        h->members = q->members.n;
        for (size_t i = 0; i < q->members.n; i++)
            h->online += mgmt_strs_has(&q->online, q->members.v[i]);
    }
    bool state_down =
        q->state && (strcmp(q->state, "down") == 0 || strcmp(q->state, "crashed") == 0 ||
                     strcmp(q->state, "stopped") == 0);
    if (h->replicated && q->online.known) {
        if (h->online == 0 || state_down) {
            h->warn |= QH_UNAVAILABLE;
            h->down_node = h->where;
        } else if (q->qtype == MGMT_QT_QUORUM && h->online < h->members / 2 + 1) {
            h->warn |= QH_BELOW_QUORUM;
        } else if (h->online < h->members) {
            h->warn |= QH_MEMBERS_DOWN;
        }
    } else if (state_down || node_running(c, q->node) == 0) {
        h->warn |= QH_UNAVAILABLE;
        h->down_node = q->node;
    }
    if (q->qtype == MGMT_QT_CLASSIC && c && c->known && c->n > 1)
        h->warn |= QH_SINGLE_NODE;
    deprecated(q, h);
}

bool qhealth_depth_known(const struct qhealth *h)
{
    return !(h->warn & QH_UNAVAILABLE);
}

static void node_name(struct strbuf *out, const char *node)
{
    if (node)
        sanitize_fit(out, node, strlen(node), 60, 0);
    else
        sb_adds(out, "?");
}

void qhealth_members(const struct qhealth *h, struct strbuf *out)
{
    if (!h->replicated)
        sb_adds(out, "-");
    else
        sb_addf(out, "%zu/%zu online", h->online, h->members);
}

void qhealth_describe(const struct mgmt_queue *q, const struct qhealth *h, unsigned bit,
                      struct strbuf *out)
{
    switch (bit) {
    case QH_UNAVAILABLE:
        sb_adds(out, "unavailable: ");
        if (h->replicated) {
            sb_addf(out, "none of its %zu members is online", h->members);
        } else {
            sb_adds(out, "its node ");
            node_name(out, h->down_node);
            sb_adds(out, " is down");
        }
        sb_adds(out, " (depth unknown, not 0)");
        break;
    case QH_BELOW_QUORUM:
        sb_addf(out,
                "below quorum: %zu of its %zu members online, %zu needed: it takes and gives no "
                "messages",
                h->online, h->members, h->members / 2 + 1);
        break;
    case QH_MEMBERS_DOWN:
        sb_addf(out, "%zu of its %zu members offline (quorum holds)", h->members - h->online,
                h->members);
        for (size_t i = 0, k = 0; i < q->members.n; i++) {
            if (mgmt_strs_has(&q->online, q->members.v[i]))
                continue;
            sb_adds(out, k++ ? ", " : ": ");
            node_name(out, q->members.v[i]);
        }
        break;
    case QH_SINGLE_NODE:
        sb_adds(out, "a classic queue on one node (");
        node_name(out, q->node);
        sb_adds(out, ") of a cluster: its dead letters are gone while that node is");
        break;
    case QH_DEPRECATED:
        sb_adds(out, "deprecated: ");
        sb_adds(out, h->deprecated);
        if (q->policy) {
            sb_adds(out, " (policy ");
            sanitize_fit(out, q->policy, strlen(q->policy), 60, 0);
            sb_adds(out, ")");
        }
        sb_adds(out, strstr(h->deprecated, "ha-") ? ": classic queue mirroring is removed in "
                                                    "RabbitMQ 4.0, use quorum queues"
                                                  : ": use queue-leader-locator");
        break;
    default:
        break;
    }
}
