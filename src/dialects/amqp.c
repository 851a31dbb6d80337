/*
 * amqp: the plain AMQP dialect — what no framework claims, read from the message's own
 * properties and the broker's death history, so that nothing is unreadable.
 *
 *   id           message_id (else a name-based UUID of the message: dialect_derived_id)
 *   type         type (else the first death's routing key, the routing key, "message")
 *   correlation  correlation_id (else the id)
 *   attempt      the deaths the broker counted (x-death), else 1
 *   first seen   timestamp (else the first death's time, else when it was fetched)
 *   origin       app_id
 *   source       the first death's exchange and routing key (decode's default)
 *
 * Replay: body and properties unchanged, to the first death's exchange and routing key.
 * Re-issue: a new message_id, correlation_id = the old correlation.
 */
#include <string.h>

#include "decode.h"
#include "dialect.h"
#include "hval_json.h"
#include "restamp_kit.h"
#include "util.h"

static void decode(const struct dialect_input *x, struct decoded *out)
{
    const struct message *m = x->msg;
    const struct props *p = &m->props;
    struct envelope_init in;
    memset(&in, 0, sizeof in);
    const struct bytes *mid = props_string(p, PROP_message_id);
    struct bytes derived = {0, NULL};
    if (!mid || !mid->len) {
        derived = dialect_derived_id(m);
        in.id = derived;
        in.defaulted |= ED_ID;
    } else {
        in.id = *mid;
    }
    dialect_type_or_route(x, props_string(p, PROP_type), &in);
    const struct bytes *corr = props_string(p, PROP_correlation_id);
    if (corr && corr->len)
        in.correlation_id = *corr;
    else
        in.defaulted |= ED_CORRELATION;
    in.version = 1;
    in.defaulted |= ED_VERSION;
    /* Plain AMQP has no attempt counter: the broker's count of deaths stands in. */
    dialect_attempt_from_deaths(&in, x->death);
    if (!dialect_first_seen_fallback(x, &in.first_seen_ms))
        in.defaulted |= ED_FIRST_SEEN;
    const struct bytes *app = props_string(p, PROP_app_id);
    if (app)
        in.origin = *app;
    in.headers = m->headers;
    dialect_envelope(out, &in);
    bytes_free(&derived);
    out->accept_note = "plain AMQP: there are no consumer rules to fail";
    static const char *const from[NF_COUNT] = {
        [NF_ID] = "the message id (message_id property)",
        [NF_TYPE] = "the logical type (type property)",
        [NF_VERSION] = "plain AMQP has no schema version",
        [NF_CORRELATION] = "the whole causal chain (correlation_id)",
        [NF_CAUSATION] = "plain AMQP carries no causation",
        [NF_ATTEMPT] = "times the broker dead-lettered it (x-death)",
        [NF_FIRST_SEEN] = "first publish (timestamp property)",
        [NF_ORIGIN] = "the producing app (app_id property)",
        [NF_ERROR] = "",
    };
    memcpy(out->read_from, from, sizeof from);
}

/* Why each defaulted field took its default. */
static void fields(const struct decoded *d, int64_t now_ms, struct dfields *f)
{
    (void)now_ms;
    unsigned df = d->env->defaulted;
    if (df & ED_ID)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         "id: a name-based UUID of the message (no message_id property)");
    if (df & ED_TYPE) {
        const struct bytes *rk = death_first_routing_key(&d->death);
        const char *t;
        if (rk && rk->len && bytes_eq(rk, &d->env->type))
            t = "type: the first death's routing key (no type property)";
        else if (d->msg->routing_key.len && bytes_eq(&d->msg->routing_key, &d->env->type))
            t = "type: the routing key (no type property)";
        else
            t = "type: \"message\" (no type property, no routing key)";
        dfields_add_line(f, DF_DEFAULTS, DF_WARN, t);
    }
    if (df & ED_CORRELATION)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         "correlation: the id (no correlation_id property)");
    if (df & ED_ATTEMPT)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN, "attempt: 1 (no x-death to count)");
    if (df & ED_FIRST_SEEN)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         d->death.has_times
                             ? "first seen: the first death's time (no timestamp property)"
                             : "first seen: when it was fetched (no timestamp property)");
}

static json_t *to_json(const struct decoded *d)
{
    const struct message *m = d->msg;
    json_t *o = json_object();
    static const enum prop_flag shown[] = {PROP_message_id, PROP_correlation_id, PROP_type,
                                           PROP_app_id,     PROP_user_id,        PROP_reply_to};
    for (size_t i = 0; i < sizeof shown / sizeof *shown; i++) {
        const struct bytes *b = props_string(&m->props, shown[i]);
        json_object_set_new(o, prop_name(shown[i]),
                            b ? bytes_to_json(b->data ? (const void *)b->data : "", b->len)
                              : json_null());
    }
    json_object_set_new(o, "timestamp",
                        props_has(&m->props, PROP_timestamp)
                            ? json_integer((json_int_t)m->props.timestamp)
                            : json_null());
    return o;
}

static enum status build_plain(const struct decoded *d, const struct restamp_opts *o,
                               struct outgoing *out, struct error *err)
{
    struct props *p = &out->props;
    if (o->mode == RESTAMP_REISSUE) {
        const struct bytes *c = &d->env->correlation_id;
        props_set_string(p, PROP_correlation_id, c->data, c->len);
        props_set_string(p, PROP_message_id, out->id.data, out->id.len);
    }
    for (size_t i = 0; i < o->n_changes; i++) {
        const struct env_change *c = &o->changes[i];
        enum prop_flag pf;
        switch (c->field) {
        case EF_ID:
            if (!c->text.len)
                return error_set(err, ST_EINVAL, "the id cannot be empty");
            pf = PROP_message_id;
            break;
        case EF_TYPE:
            pf = PROP_type;
            break;
        case EF_CORRELATION:
            pf = PROP_correlation_id;
            break;
        case EF_HEADER_SET:
        case EF_HEADER_REMOVE: {
            enum status st = rk_header_change(out->headers, c, err);
            if (st != ST_OK)
                return st;
            continue;
        }
        default:
            return error_set(err, ST_EUNSUPPORTED,
                             "%s cannot be changed on a plain AMQP message: its properties have "
                             "no such field (id, type, correlation_id and header.NAME can be)",
                             rk_field_name(c->field));
        }
        if (c->text.len)
            props_set_string(p, pf, c->text.data, c->text.len);
        else
            rk_prop_clear(p, pf);
    }
    const struct bytes *mid = props_string(p, PROP_message_id);
    if (mid && mid->len) {
        bytes_free(&out->id);
        out->id = bytes_copy(mid);
    }
    return ST_OK;
}

static enum status restamp(const struct decoded *d, const struct restamp_opts *o,
                           const struct bytes *dlq, struct outgoing *out, struct error *err)
{
    (void)dlq;
    enum status st =
        rk_target_source(d, out, "it has no x-death history naming where it came from", err);
    return st == ST_OK ? build_plain(d, o, out, err) : st;
}

const struct dialect_ops dialect_amqp = {
    .name = "amqp",
    .title = "plain AMQP",
    .summary = "plain AMQP: read from its properties",
    .section = "AMQP",
    .decode = decode,
    .fields = fields,
    .to_json = to_json,
    .restamp = restamp,
    .replay_rule = "body and properties unchanged, to the first death's exchange and routing "
                   "key; a re-issue gets a new message_id",
};
