/*
 * qhealth: where a queue lives and what that means for its dead letters — its type, its leader
 * or home node, its members and which are online — and the warnings an on-call engineer needs
 * in a cluster in trouble: a queue whose node is down (unavailable: its depth is unknown, never
 * 0), a quorum queue below quorum, a classic queue on one node of a cluster of several (its
 * dead letters are gone while that node is), and a policy or argument that RabbitMQ has
 * deprecated. Pure logic over what the management API listed (mgmt.h); no I/O.
 *
 * Ownership: struct qhealth borrows strings from the queue it was made from.
 */
#ifndef DLQX_QHEALTH_H
#define DLQX_QHEALTH_H

#include <stdbool.h>
#include <stddef.h>

#include "mgmt.h"
#include "util.h"

/* The warnings (bits of qhealth.warn): name, bit, the JSON name. */
#define QH_WARN_LIST(X)                                                                            \
    X(QH_UNAVAILABLE, 1u << 0, "unavailable")                                                      \
    X(QH_BELOW_QUORUM, 1u << 1, "below_quorum")                                                    \
    X(QH_MEMBERS_DOWN, 1u << 2, "members_offline")                                                 \
    X(QH_SINGLE_NODE, 1u << 3, "single_node")                                                      \
    X(QH_DEPRECATED, 1u << 4, "deprecated_policy")

enum qh_warn {
#define X(e, v, name) e = v,
    QH_WARN_LIST(X)
#undef X
};
#define QH_WARN_LAST QH_DEPRECATED

struct qhealth {
    unsigned warn;          /* QH_* bits */
    const char *down_node;  /* QH_UNAVAILABLE: the node that is down, when one is known */
    size_t members, online; /* members listed and how many of them are online */
    bool replicated;        /* members are known (quorum queues, streams) */
    const char *where;      /* the leader, else the node; NULL unknown */
    char deprecated[160];   /* QH_DEPRECATED: the keys, "ha-mode, queue-master-locator" */
};

/* What the management API said of the cluster: nodes NULL with known false when /api/nodes
 * could not be read (a user without the monitoring tag). */
struct qh_cluster {
    const struct mgmt_node *nodes;
    size_t n;
    bool known;
};

void qhealth_eval(const struct mgmt_queue *q, const struct qh_cluster *c, struct qhealth *h);
/* The JSON name of one bit ("below_quorum"), NULL for anything else. */
const char *qhealth_warn_name(unsigned bit);
/* One sentence for one bit of h->warn, sanitized (node names come from the broker). */
void qhealth_describe(const struct mgmt_queue *q, const struct qhealth *h, unsigned bit,
                      struct strbuf *out);
/* The members column, sanitized: "2/3 online", "3/3", or "-" (not replicated / unknown). */
void qhealth_members(const struct qhealth *h, struct strbuf *out);
/* Whether the depth the API gave can be shown: false when the queue is unavailable. */
bool qhealth_depth_known(const struct qhealth *h);

#endif
