/*
 * mgmt_parse: the management API's JSON turned into the structs of mgmt.h: queues (with their
 * dead-letter settings resolved from arguments and the effective policy), exchanges (with the
 * alternate exchange, from /api/policies when a policy sets it), bindings and the overview,
 * and their release. No I/O: the transport in mgmt.c feeds these page by page, and fixtures
 * are read without a broker, so all that the server may get wrong is checked here, once.
 *
 * Everything is untrusted: each field goes through one of the typed readers below, and a
 * field that is absent or of the wrong type reads as unknown (NULL or -1). Measured on
 * 3.10.8: message_stats is absent until a queue has seen a publish, and a queue younger than
 * the stats interval (5 s) is listed with only name, vhost, type and arguments.
 */
#include "mgmt.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "broker_version.h"
#include "mgmt_internal.h"
#include "util.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* `columns` accepts nested paths (message_stats.publish_details.rate). */
const char mgmt_queue_columns[] =
    "name,vhost,type,messages,messages_ready,messages_unacknowledged,consumers,arguments,"
    "effective_policy_definition,policy,state,message_stats.publish_details.rate,messages_details."
    "rate,node,leader,"
    "members,online";
const char mgmt_exchange_columns[] = "name,vhost,type,internal,arguments,policy";
const char mgmt_binding_columns[] = "source,vhost,destination,destination_type,routing_key,"
                                    "arguments";
const char mgmt_node_columns[] = "name,running";
const char mgmt_overview_columns[] = "product_name,product_version,rabbitmq_version,"
                                     "management_version,erlang_version,cluster_name,node,"
                                     "rates_mode";

/* --- field readers: o may be NULL or not an object, which reads as absent ---------------- */

/* A string field as a new string, or NULL when absent, of another type, or holding a NUL. */
static char *jstr(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_string(v))
        return NULL;
    size_t len = json_string_length(v);
    const char *s = json_string_value(v);
    if (memchr(s, '\0', len))
        return NULL;
    return xstrndup(s, len);
}

/* A non-negative integer field, or -1. */
static int64_t jcount(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_integer(v) || json_integer_value(v) < 0)
        return -1;
    return (int64_t)json_integer_value(v);
}

/* A non-negative number field (integer or real), or -1. */
static double jrate(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_number(v) || json_number_value(v) < 0)
        return -1;
    return json_number_value(v);
}

/* An object field as a deep copy (one reference, the caller's), or NULL. */
static json_t *jobject_copy(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    return json_is_object(v) ? json_deep_copy(v) : NULL;
}

/* A list of node names: an array, of which only strings without NUL of a node name's length
 * are kept, at most MGMT_STRS_MAX of them. */
static void jstrs(const json_t *o, const char *key, struct mgmt_strs *out)
{
    const json_t *v = json_object_get(o, key);
    memset(out, 0, sizeof *out);
    if (!json_is_array(v))
        return;
    out->known = true;
    size_t count = json_array_size(v), cap = 0;
    for (size_t i = 0; i < count; i++) {
        const json_t *e = json_array_get(v, i);
        if (!json_is_string(e) || json_string_length(e) > MGMT_NODE_NAME_MAX ||
            memchr(json_string_value(e), '\0', json_string_length(e)))
            continue;
        if (out->n == MGMT_STRS_MAX) {
            out->truncated = true;
            break;
        }
        xgrow((void **)&out->v, &cap, out->n + 1, sizeof *out->v);
        out->v[out->n++] = xstrndup(json_string_value(e), json_string_length(e));
    }
}

static void strs_free(struct mgmt_strs *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

bool mgmt_strs_has(const struct mgmt_strs *l, const char *name)
{
    for (size_t i = 0; name && i < l->n; i++)
        if (strcmp(l->v[i], name) == 0)
            return true;
    return false;
}

/* --- the members of a struct, as one table that reads and releases them --------------- */

enum jkind {
    J_KEY,    /* char *: a string the item is skipped without (a name, a binding's ends) */
    J_VHOST,  /* char *: a string, else the caller's vhost hint, else the item is skipped */
    J_STR,    /* char *: a string; NULL unknown */
    J_COUNT,  /* int64_t: a non-negative integer; -1 unknown */
    J_OBJECT, /* json_t *: an object, deep-copied; NULL unknown */
    J_OWNED,  /* char *: derived by the parser, not read here, but owned all the same */
    J_STRS,   /* struct mgmt_strs: an array of node names (jstrs) */
};

struct jfield {
    const char *key; /* the JSON field; NULL for J_OWNED */
    enum jkind kind;
    size_t offset; /* of the member, of the type its kind says */
};

/* Reads o's fields into the (zeroed) struct at dst; false when a J_KEY or J_VHOST is missing,
 * and then what was read is still to be released. */
static bool fields_read(const json_t *o, const struct jfield *f, size_t n, const char *vhost_hint,
                        void *dst)
{
    bool whole = true;
    for (size_t i = 0; i < n; i++) {
        void *m = (char *)dst + f[i].offset;
        switch (f[i].kind) {
        case J_KEY:
        case J_VHOST:
        case J_STR:
            *(char **)m = jstr(o, f[i].key);
            if (!*(char **)m && f[i].kind == J_VHOST && vhost_hint)
                *(char **)m = xstrdup(vhost_hint);
            if (!*(char **)m && f[i].kind != J_STR)
                whole = false;
            break;
        case J_COUNT:
            *(int64_t *)m = jcount(o, f[i].key);
            break;
        case J_OBJECT:
            *(json_t **)m = jobject_copy(o, f[i].key);
            break;
        case J_STRS:
            jstrs(o, f[i].key, m);
            break;
        case J_OWNED:
            break;
        }
    }
    return whole;
}

/* Frees the strings and drops the references that the struct at dst owns. */
static void fields_release(const struct jfield *f, size_t n, void *dst)
{
    for (size_t i = 0; i < n; i++) {
        void *m = (char *)dst + f[i].offset;
        if (f[i].kind == J_OBJECT)
            json_decref(*(json_t **)m);
        else if (f[i].kind == J_STRS)
            strs_free(m);
        else if (f[i].kind != J_COUNT)
            free(*(char **)m);
    }
}

/* What each struct is made of, as the API names it. */
#define QUEUE(m) offsetof(struct mgmt_queue, m)
#define EXCHANGE(m) offsetof(struct mgmt_exchange, m)
#define BINDING(m) offsetof(struct mgmt_binding, m)
#define OVERVIEW(m) offsetof(struct mgmt_overview, m)
/* clang-format off */
static const struct jfield queue_fields[] = {
    {"name", J_KEY, QUEUE(name)},             {"vhost", J_VHOST, QUEUE(vhost)},
    {"type", J_STR, QUEUE(type)},             {"arguments", J_OBJECT, QUEUE(arguments)},
    {"state", J_STR, QUEUE(state)},           {"policy", J_STR, QUEUE(policy)},
    {"messages", J_COUNT, QUEUE(messages)},   {"messages_ready", J_COUNT, QUEUE(ready)},
    {"consumers", J_COUNT, QUEUE(consumers)}, {"messages_unacknowledged", J_COUNT, QUEUE(unacked)},
    {"effective_policy_definition", J_OBJECT, QUEUE(policy_definition)},
    {NULL, J_OWNED, QUEUE(dead_letter_exchange)}, {NULL, J_OWNED, QUEUE(dead_letter_routing_key)},
    {NULL, J_OWNED, QUEUE(overflow)},
    {"node", J_STR, QUEUE(node)},             {"leader", J_STR, QUEUE(leader)},
    {"members", J_STRS, QUEUE(members)},      {"online", J_STRS, QUEUE(online)},
};
static const struct jfield exchange_fields[] = {
    {"name", J_KEY, EXCHANGE(name)},          {"vhost", J_VHOST, EXCHANGE(vhost)},
    {"type", J_STR, EXCHANGE(type)},          {"policy", J_STR, EXCHANGE(policy)},
    {"arguments", J_OBJECT, EXCHANGE(arguments)}, {NULL, J_OWNED, EXCHANGE(alternate_exchange)},
};
static const struct jfield binding_fields[] = {
    {"source", J_KEY, BINDING(source)},       {"vhost", J_VHOST, BINDING(vhost)},
    {"destination", J_KEY, BINDING(destination)}, {"routing_key", J_STR, BINDING(routing_key)},
    {"arguments", J_OBJECT, BINDING(arguments)},
};
static const struct jfield node_fields[] = {
    {"name", J_KEY, offsetof(struct mgmt_node, name)},
};
static const struct jfield overview_fields[] = {
    {"product_name", J_STR, OVERVIEW(product_name)},
    {"rabbitmq_version", J_STR, OVERVIEW(rabbitmq_version)},
    {"management_version", J_STR, OVERVIEW(management_version)},
    {"erlang_version", J_STR, OVERVIEW(erlang_version)},
    {"cluster_name", J_STR, OVERVIEW(cluster_name)}, {"node", J_STR, OVERVIEW(node)},
    {"rates_mode", J_STR, OVERVIEW(rates_mode)},
};
/* clang-format on */

/* --- the items of a listing ------------------------------------------------------------ */

/* Sets the members of an item that are derived from what fields_read read. ctx is the
 * parser's own. */
typedef void (*item_finish_fn)(const json_t *o, void *item, const void *ctx);

/* What an element of a listing is made of. */
struct item_kind {
    const char *what; /* for messages: "queues" */
    size_t size;
    const struct jfield *fields;
    size_t nfields;
    item_finish_fn finish;
};

/* Appends to *out (*n elements of kind k) an element for each item of j, the array of items
 * or a page object holding "items"; items that are not objects or lack a J_KEY or J_VHOST
 * member are skipped. */
static enum status read_items(const json_t *j, const struct item_kind *k, const char *vhost_hint,
                              const void *ctx, void **out, size_t *n, struct error *err)
{
    const json_t *items = json_is_array(j) ? j : json_object_get(j, "items");
    if (!json_is_array(items))
        return error_set(err, ST_EPARSE, "the %s response is neither an array nor a page of items",
                         k->what);
    size_t cap = *n, count = json_array_size(items);
    if (count == 0)
        return ST_OK;
    xgrow(out, &cap, *n + count, k->size);
    for (size_t i = 0; i < count; i++) {
        const json_t *o = json_array_get(items, i);
        if (!json_is_object(o))
            continue;
        void *item = (char *)*out + *n * k->size;
        memset(item, 0, k->size);
        if (!fields_read(o, k->fields, k->nfields, vhost_hint, item)) {
            fields_release(k->fields, k->nfields, item);
            continue;
        }
        k->finish(o, item, ctx);
        (*n)++;
    }
    return ST_OK;
}

/* Releases the *n elements of kind k in *p and the array itself, and resets both. */
static void items_free(void **p, size_t *n, const struct item_kind *k)
{
    for (size_t i = 0; *p && i < *n; i++)
        fields_release(k->fields, k->nfields, (char *)*p + i * k->size);
    free(*p);
    *p = NULL;
    *n = 0;
}

/* --- queues ---------------------------------------------------------------------------- */

/* A string setting: the x- argument wins over the policy's key (as the broker resolves
 * dead-letter-exchange, dead-letter-routing-key and overflow). */
static char *resolve_str(const struct mgmt_queue *q, const char *arg, const char *key,
                         enum mgmt_origin *origin)
{
    char *v = q->arguments ? jstr(q->arguments, arg) : NULL;
    enum mgmt_origin o = MGMT_FROM_ARGUMENT;
    if (!v && q->policy_definition) {
        v = jstr(q->policy_definition, key);
        o = MGMT_FROM_POLICY;
    }
    if (origin)
        *origin = v ? o : MGMT_FROM_NONE;
    return v;
}

/* A limit: the smaller of argument and policy (message-ttl, max-length, delivery-limit). */
static int64_t resolve_min(const struct mgmt_queue *q, const char *arg, const char *key)
{
    int64_t a = q->arguments ? jcount(q->arguments, arg) : -1;
    int64_t p = q->policy_definition ? jcount(q->policy_definition, key) : -1;
    if (a < 0)
        return p;
    if (p < 0)
        return a;
    return a < p ? a : p;
}

static enum mgmt_queue_type queue_type_of(const char *t)
{
    if (!t)
        return MGMT_QT_UNKNOWN;
    if (strcmp(t, "classic") == 0)
        return MGMT_QT_CLASSIC;
    if (strcmp(t, "quorum") == 0)
        return MGMT_QT_QUORUM;
    if (strcmp(t, "stream") == 0)
        return MGMT_QT_STREAM;
    return MGMT_QT_OTHER;
}

static void queue_finish(const json_t *o, void *item, const void *ctx)
{
    struct mgmt_queue *q = item;
    (void)ctx;
    if (!q->type && q->arguments) /* older servers: only the argument says */
        q->type = jstr(q->arguments, "x-queue-type");
    q->qtype = queue_type_of(q->type);
    q->stats_pending =
        !json_object_get(o, "messages") && !json_object_get(o, "effective_policy_definition");
    const json_t *ms = json_object_get(o, "message_stats");
    q->publish_rate = jrate(json_object_get(ms, "publish_details"), "rate");
    const json_t *dr = json_object_get(json_object_get(o, "messages_details"), "rate");
    q->depth_rate =
        json_is_number(dr) && isfinite(json_number_value(dr)) ? json_number_value(dr) : (double)NAN;
    q->dead_letter_exchange =
        resolve_str(q, "x-dead-letter-exchange", "dead-letter-exchange", &q->dlx_origin);
    q->dead_letter_routing_key =
        resolve_str(q, "x-dead-letter-routing-key", "dead-letter-routing-key", &q->dlrk_origin);
    q->overflow = resolve_str(q, "x-overflow", "overflow", NULL);
    /* The effective policy definition already holds the operator policy, merged by the
     * broker (measured on 3.10: a policy of 30 and an operator policy of 7 read 7). The
     * version's default is the peek's to add (peek_delivery_limit): not known here. */
    q->delivery_limit =
        broker_delivery_limit_json(NULL, true, q->arguments, q->policy_definition, NULL).limit;
    q->max_length = resolve_min(q, "x-max-length", "max-length");
    q->max_length_bytes = resolve_min(q, "x-max-length-bytes", "max-length-bytes");
    q->message_ttl = resolve_min(q, "x-message-ttl", "message-ttl");
}

static const struct item_kind queue_kind = {"queues", sizeof(struct mgmt_queue), queue_fields,
                                            NELEM(queue_fields), queue_finish};

enum status mgmt_queues_from_json(const json_t *j, const char *vhost_hint, struct mgmt_queue **out,
                                  size_t *n, struct error *err)
{
    return read_items(j, &queue_kind, vhost_hint, NULL, (void **)out, n, err);
}

/* --- exchanges ------------------------------------------------------------------------- */

static enum mgmt_exchange_type exchange_type_of(const char *t)
{
    static const struct {
        const char *name;
        enum mgmt_exchange_type type;
    } types[] = {{"direct", MGMT_EX_DIRECT},
                 {"fanout", MGMT_EX_FANOUT},
                 {"topic", MGMT_EX_TOPIC},
                 {"headers", MGMT_EX_HEADERS}};
    if (!t)
        return MGMT_EX_UNKNOWN;
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (strcmp(t, types[i].name) == 0)
            return types[i].type;
    return MGMT_EX_OTHER;
}

/* The definition of policy `name` in vhost, from /api/policies' array, or NULL. */
static const json_t *policy_definition(const json_t *policies, const char *vhost, const char *name)
{
    for (size_t i = 0; i < json_array_size(policies); i++) {
        const json_t *p = json_array_get(policies, i);
        const char *pn = json_string_value(json_object_get(p, "name"));
        const char *pv = json_string_value(json_object_get(p, "vhost"));
        const json_t *def = json_object_get(p, "definition");
        if (pn && pv && strcmp(pn, name) == 0 && strcmp(pv, vhost) == 0 && json_is_object(def))
            return def;
    }
    return NULL;
}

/* ctx: /api/policies' array, or NULL. */
static void exchange_finish(const json_t *o, void *item, const void *ctx)
{
    struct mgmt_exchange *x = item;
    const json_t *policies = ctx;
    x->etype = exchange_type_of(x->type);
    x->internal = json_is_true(json_object_get(o, "internal"));
    /* For exchanges the argument wins over the policy. */
    if (x->arguments)
        x->alternate_exchange = jstr(x->arguments, "alternate-exchange");
    if (!x->alternate_exchange && x->policy) {
        const json_t *def =
            json_is_array(policies) ? policy_definition(policies, x->vhost, x->policy) : NULL;
        if (def)
            x->alternate_exchange = jstr(def, "alternate-exchange");
        else
            x->alternate_unknown = true;
    }
}

static const struct item_kind exchange_kind = {"exchanges", sizeof(struct mgmt_exchange),
                                               exchange_fields, NELEM(exchange_fields),
                                               exchange_finish};

enum status mgmt_exchanges_from_json(const json_t *j, const json_t *policies,
                                     const char *vhost_hint, struct mgmt_exchange **out, size_t *n,
                                     struct error *err)
{
    return read_items(j, &exchange_kind, vhost_hint, policies, (void **)out, n, err);
}

/* --- bindings and the overview --------------------------------------------------------- */

static void binding_finish(const json_t *o, void *item, const void *ctx)
{
    struct mgmt_binding *b = item;
    (void)ctx;
    const char *dt = json_string_value(json_object_get(o, "destination_type"));
    b->dest_type = !dt                           ? MGMT_DEST_UNKNOWN
                   : strcmp(dt, "queue") == 0    ? MGMT_DEST_QUEUE
                   : strcmp(dt, "exchange") == 0 ? MGMT_DEST_EXCHANGE
                                                 : MGMT_DEST_UNKNOWN;
}

static const struct item_kind binding_kind = {
    "bindings", sizeof(struct mgmt_binding), binding_fields, NELEM(binding_fields), binding_finish};

enum status mgmt_bindings_from_json(const json_t *j, const char *vhost_hint,
                                    struct mgmt_binding **out, size_t *n, struct error *err)
{
    return read_items(j, &binding_kind, vhost_hint, NULL, (void **)out, n, err);
}

static void node_finish(const json_t *o, void *item, const void *ctx)
{
    struct mgmt_node *nd = item;
    (void)ctx;
    nd->running = json_is_true(json_object_get(o, "running"));
}

static const struct item_kind node_kind = {"nodes", sizeof(struct mgmt_node), node_fields,
                                           NELEM(node_fields), node_finish};

enum status mgmt_nodes_from_json(const json_t *j, struct mgmt_node **out, size_t *n,
                                 struct error *err)
{
    return read_items(j, &node_kind, NULL, NULL, (void **)out, n, err);
}

void mgmt_nodes_free(struct mgmt_node **p, size_t *n)
{
    items_free((void **)p, n, &node_kind);
}

void mgmt_overview_from_json(const json_t *j, struct mgmt_overview *o)
{
    memset(o, 0, sizeof *o);
    if (!json_is_object(j))
        return;
    fields_read(j, overview_fields, NELEM(overview_fields), NULL, o);
    if (!o->rabbitmq_version)
        o->rabbitmq_version = jstr(j, "product_version");
}

/* --- release --------------------------------------------------------------------------- */

void mgmt_queues_free(struct mgmt_queue **p, size_t *n)
{
    items_free((void **)p, n, &queue_kind);
}

void mgmt_exchanges_free(struct mgmt_exchange **p, size_t *n)
{
    items_free((void **)p, n, &exchange_kind);
}

void mgmt_bindings_free(struct mgmt_binding **p, size_t *n)
{
    items_free((void **)p, n, &binding_kind);
}

void mgmt_overview_free(struct mgmt_overview *o)
{
    fields_release(overview_fields, NELEM(overview_fields), o);
    memset(o, 0, sizeof *o);
}

/* --- sorting -------------------------------------------------------------------------- */

static int queue_cmp(const void *a, const void *b)
{
    const struct mgmt_queue *x = a, *y = b;
    int c = strcmp(x->vhost, y->vhost);
    return c ? c : strcmp(x->name, y->name);
}

size_t mgmt_queues_sort_unique(struct mgmt_queue *q, size_t n)
{
    if (n < 2)
        return n;
    /* qsort is not stable, so which duplicate survives is arbitrary: they describe the
     * same queue a few milliseconds apart. */
    qsort(q, n, sizeof *q, queue_cmp);
    size_t w = 1;
    for (size_t r = 1; r < n; r++) {
        if (queue_cmp(&q[w - 1], &q[r]) == 0)
            fields_release(queue_fields, NELEM(queue_fields), &q[r]);
        else
            q[w++] = q[r];
    }
    return w;
}
