/*
 * peek_report: the words of a peek — the names of queue kinds and of the ways a peek ends,
 * the plan said before a peek pays anything (peek_plan), and the report as JSON. No I/O.
 */
#include "peek.h"

#include <stdio.h>
#include <string.h>

#include "util.h"

const char *queue_kind_name(enum queue_kind k)
{
    switch (k) {
    case QK_CLASSIC:
        return "classic";
    case QK_QUORUM:
        return "quorum";
    case QK_STREAM:
        return "stream";
    case QK_UNKNOWN:
    default:
        return "unknown";
    }
}

bool queue_kind_parse(const char *s, enum queue_kind *out)
{
    static const enum queue_kind kinds[] = {QK_CLASSIC, QK_QUORUM, QK_STREAM};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        if (strcmp(s, queue_kind_name(kinds[i])) == 0) {
            *out = kinds[i];
            return true;
        }
    }
    return false;
}

const char *peek_end_name(enum peek_end e)
{
    switch (e) {
    case PEEK_COMPLETE:
        return "complete";
    case PEEK_LIMIT:
        return "limit";
    case PEEK_CANCELLED:
        return "cancelled";
    case PEEK_IDLE:
        return "idle";
    case PEEK_REFUSED_LIMIT:
        return "refused-delivery-limit";
    case PEEK_CONNECTION_LOST:
        return "connection-lost";
    case PEEK_CHANNEL_CLOSED:
    default:
        return "channel-closed";
    }
}

struct delivery_limit peek_delivery_limit(const struct peek_queue_info *q,
                                          const struct broker_version *v)
{
    struct broker_version unknown_version = {.known = false, .text = "?"};
    /* q->delivery_limit is already the smallest of argument, policy and operator policy. */
    struct delivery_limit r =
        broker_delivery_limit(v ? v : &unknown_version, q->kind == QK_QUORUM,
                              q->delivery_limit >= 0 ? q->delivery_limit : BROKER_LIMIT_UNSET,
                              BROKER_LIMIT_UNSET, BROKER_LIMIT_UNSET);
    if (r.origin == LIMIT_ARGUMENT)
        r.origin = LIMIT_QUEUE;
    return r;
}

void peek_plan(const struct peek_opts *o, const struct broker_version *v, uint32_t ready,
               uint32_t consumers, struct strbuf *out)
{
    const struct peek_queue_info *q = &o->info;
    struct delivery_limit lim = peek_delivery_limit(q, v);
    sb_addf(out, "%s queue, %u message%s ready, %u consumer%s.", queue_kind_name(q->kind), ready,
            ready == 1 ? "" : "s", consumers, consumers == 1 ? "" : "s");
    switch (q->kind) {
    case QK_STREAM:
        sb_adds(out, " A stream is read by offset: nothing in it changes.");
        break;
    case QK_QUORUM:
        sb_adds(out, " dlqx holds every message it reads and then gives them all back in order: "
                     "each message's x-delivery-count goes up by 1 and it is marked "
                     "redelivered.");
        if (lim.limit >= 0) {
            sb_addf(out,
                    " The delivery limit is %lld%s: a message returned past it is %s by the "
                    "broker.",
                    (long long)lim.limit,
                    lim.origin != LIMIT_DEFAULT ? ""
                    : v && v->known
                        ? " (RabbitMQ 4.x's default for a quorum queue without one)"
                        : " (the broker's version is not known: dlqx assumes RabbitMQ 4.x's "
                          "default for a quorum queue without one)",
                    q->has_dlx ? "dead-lettered"
                               : "DROPPED (the queue has no dead-letter exchange)");
            if (!o->force)
                sb_addf(out,
                        " dlqx reads one message at a time and stops at the first one already "
                        "delivered %lld times or more (--force reads on).",
                        (long long)(lim.limit > 0 ? lim.limit - 1 : 0));
        } else {
            sb_adds(out, " No delivery limit is known for it (give --delivery-limit if it has "
                         "one set by a policy the management API cannot show).");
        }
        break;
    case QK_CLASSIC:
        sb_adds(out, " dlqx holds every message it reads and then gives them all back in order "
                     "by closing its channel: each is marked redelivered, nothing else changes.");
        break;
    case QK_UNKNOWN:
    default:
        sb_adds(out, " Its type is not known (no management API): it is worked out from the "
                     "deliveries; every message read is given back in order, marked "
                     "redelivered.");
        break;
    }
    if (consumers)
        sb_addf(out,
                " %u other consumer%s attached: messages %s holds are not in the snapshot, "
                "and messages dlqx gives back may go to %s.",
                consumers, consumers == 1 ? " is" : "s are", consumers == 1 ? "it" : "they",
                consumers == 1 ? "it" : "them");
}

/* The report's sentence on how the peek ended (peek.h). */
void peek_report_describe(struct peek_report *r, const struct error *err)
{
    if (r->detail[0]) /* said already: a refusal, a read again that could not be made */
        return;
    const char *why = err && err->msg[0] ? err->msg : "";
    switch (r->end) {
    case PEEK_COMPLETE:
        snprintf(r->detail, sizeof r->detail, "complete: %llu of %u messages",
                 (unsigned long long)r->fetched, r->ready_before);
        break;
    case PEEK_LIMIT:
        snprintf(r->detail, sizeof r->detail, "the first %llu of %u messages (--limit)",
                 (unsigned long long)r->fetched, r->ready_before);
        break;
    case PEEK_CANCELLED:
        snprintf(r->detail, sizeof r->detail,
                 "cancelled after %llu of %u messages; all were given back",
                 (unsigned long long)r->fetched, r->ready_before);
        break;
    case PEEK_IDLE:
        snprintf(r->detail, sizeof r->detail,
                 "incomplete: the queue delivered %llu of %u messages and then nothing for a "
                 "while (other consumers may hold the rest)",
                 (unsigned long long)r->fetched, r->ready_before);
        break;
    case PEEK_CONNECTION_LOST:
        snprintf(
            r->detail, sizeof r->detail,
            "incomplete: %.300s after %llu of %u messages; the broker gives back every message "
            "dlqx held, so none is lost",
            why, (unsigned long long)r->fetched, r->ready_before);
        break;
    case PEEK_CHANNEL_CLOSED:
        snprintf(
            r->detail, sizeof r->detail,
            "incomplete: %.300s after %llu of %u messages; the broker gives back every message "
            "dlqx held",
            why, (unsigned long long)r->fetched, r->ready_before);
        break;
    case PEEK_REFUSED_LIMIT:
    default:
        break;
    }
}

json_t *peek_report_json(const char *queue, const struct peek_report *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "queue", json_string(queue));
    json_object_set_new(o, "type", json_string(queue_kind_name(r->kind)));
    json_object_set_new(o, "complete", json_boolean(r->end == PEEK_COMPLETE));
    json_object_set_new(o, "end", json_string(peek_end_name(r->end)));
    json_object_set_new(o, "detail", json_string(r->detail));
    json_object_set_new(o, "fetched", json_integer((json_int_t)r->fetched));
    json_object_set_new(o, "ready_before", json_integer(r->ready_before));
    json_object_set_new(o, "ready_after",
                        r->have_after ? json_integer(r->ready_after) : json_null());
    json_object_set_new(o, "consumers_before", json_integer(r->consumers_before));
    json_object_set_new(o, "count_unsure", json_boolean(r->count_unsure));
    json_object_set_new(o, "arrived_during", json_integer((json_int_t)r->arrived_during));
    json_object_set_new(o, "already_redelivered", json_integer((json_int_t)r->redelivered_seen));
    json_object_set_new(o, "max_delivery_count",
                        r->max_delivery_count >= 0 ? json_integer(r->max_delivery_count)
                                                   : json_null());
    json_object_set_new(o, "at_risk", json_integer((json_int_t)r->at_risk));
    json_object_set_new(o, "delivery_limit",
                        r->limit.limit >= 0 ? json_integer(r->limit.limit) : json_null());
    json_object_set_new(o, "delivery_limit_origin",
                        json_string(limit_origin_name(r->limit.origin)));
    json_object_set_new(o, "broker_version",
                        json_string(r->broker_version[0] ? r->broker_version : "?"));
    json_object_set_new(o, "attempts", json_integer(r->attempts ? r->attempts : 1));
    json_object_set_new(o, "nodes_lost", r->lost[0] ? json_string(r->lost) : json_null());
    json_object_set_new(o, "node", r->last_node[0] ? json_string(r->last_node) : json_null());
    json_object_set_new(o, "seconds", json_real(r->seconds));
    return o;
}
