/*
 * broker_version: the RabbitMQ version from connection.start, what it changes, and the
 * effective delivery limit (broker_version.h).
 */
#include "broker_version.h"

#include <stdio.h>
#include <string.h>

static void set_text(struct broker_version *v, const char *s, size_t len)
{
    size_t n = 0;
    for (size_t i = 0; i < len && n + 1 < sizeof v->text; i++)
        v->text[n++] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
    v->text[n] = '\0';
    if (!n)
        snprintf(v->text, sizeof v->text, "?");
}

static void unknown(struct broker_version *v)
{
    v->known = false;
    v->major = v->minor = v->patch = 0;
}

/* A decimal component of at most 4 digits at *s; advances *s. */
static bool component(const char **s, int *out)
{
    int n = 0, digits = 0;
    while (**s >= '0' && **s <= '9') {
        if (++digits > 4)
            return false;
        n = n * 10 + (**s - '0');
        (*s)++;
    }
    *out = n;
    return digits > 0;
}

bool broker_version_parse(const char *s, struct broker_version *out)
{
    unknown(out);
    set_text(out, s ? s : "", s ? strlen(s) : 0);
    if (!s)
        return false;
    const char *p = s;
    int major, minor, patch = 0;
    if (!component(&p, &major) || *p++ != '.' || !component(&p, &minor))
        return false;
    if (*p == '.' && !(p++, component(&p, &patch)))
        return false;
    /* What may follow: a pre-release (-rc.1) or build (+12.gabc) tag, nothing else. */
    if (*p && *p != '-' && *p != '+')
        return false;
    out->known = true;
    out->major = major;
    out->minor = minor;
    out->patch = patch;
    return true;
}

static const amqp_bytes_t *prop_string(const amqp_table_t *t, const char *key)
{
    size_t klen = strlen(key);
    for (int i = 0; t && t->entries && i < t->num_entries; i++) {
        const amqp_table_entry_t *e = &t->entries[i];
        if (e->key.len == klen && e->key.bytes && memcmp(e->key.bytes, key, klen) == 0 &&
            (e->value.kind == AMQP_FIELD_KIND_UTF8 || e->value.kind == AMQP_FIELD_KIND_BYTES))
            return &e->value.value.bytes;
    }
    return NULL;
}

void broker_version_from_props(const amqp_table_t *props, struct broker_version *out)
{
    const amqp_bytes_t *product = prop_string(props, "product");
    const amqp_bytes_t *version = prop_string(props, "version");
    char buf[sizeof out->text];
    size_t n = 0;
    if (version && version->bytes) {
        n = version->len < sizeof buf - 1 ? version->len : sizeof buf - 1;
        memcpy(buf, version->bytes, n);
    }
    buf[n] = '\0';
    /* A NUL inside the value cuts it: what is left must still parse as a whole version. */
    if (!version || memchr(buf, '\0', n) || version->len >= sizeof buf) {
        unknown(out);
        set_text(out, buf, strlen(buf));
        return;
    }
    broker_version_parse(buf, out);
    /* Another product speaking AMQP 0-9-1 (LavinMQ, Qpid…): its numbers are not RabbitMQ's. */
    if (!product || product->len != 8 || !product->bytes ||
        memcmp(product->bytes, "RabbitMQ", 8) != 0)
        unknown(out);
}

bool broker_version_at_least(const struct broker_version *v, int major, int minor)
{
    return v && v->known && (v->major > major || (v->major == major && v->minor >= minor));
}

void broker_traits_of(const struct broker_version *v, struct broker_traits *out)
{
    bool known = v && v->known;
    out->quorum_default_limit = !known || broker_version_at_least(v, 4, 0) ? 20 : -1;
    out->negative_limit_disables = known && broker_version_at_least(v, 4, 0);
    out->acquired_apart = known && broker_version_at_least(v, 4, 3);
    out->ignores_client_x_death = !known || broker_version_at_least(v, 3, 13);
}

const char *limit_origin_name(enum limit_origin o)
{
    switch (o) {
#define X(e, s)                                                                                    \
    case e:                                                                                        \
        return s;
        LIMIT_ORIGIN_LIST(X)
#undef X
    }
    return "?";
}

struct delivery_limit broker_delivery_limit(const struct broker_version *v, bool quorum,
                                            int64_t argument, int64_t policy,
                                            int64_t operator_policy)
{
    struct delivery_limit r = {-1, LIMIT_NONE};
    if (!quorum)
        return r;
    const int64_t vals[] = {argument, policy, operator_policy};
    const enum limit_origin from[] = {LIMIT_ARGUMENT, LIMIT_POLICY, LIMIT_OPERATOR_POLICY};
    bool asked_none = false;
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        if (vals[i] == BROKER_LIMIT_UNSET)
            continue;
        if (vals[i] < 0) {
            asked_none = true;
            continue;
        }
        /* The smaller wins; on a tie the earlier source (argument, policy, operator). */
        if (r.limit < 0 || vals[i] < r.limit) {
            r.limit = vals[i];
            r.origin = from[i];
        }
    }
    if (r.limit >= 0 || !v)
        return r;
    struct broker_traits t;
    broker_traits_of(v, &t);
    if (asked_none && t.negative_limit_disables) {
        r.origin = LIMIT_DISABLED;
        return r;
    }
    if (t.quorum_default_limit >= 0) {
        r.limit = t.quorum_default_limit;
        r.origin = LIMIT_DEFAULT;
    }
    return r;
}

/* An integer field, or BROKER_LIMIT_UNSET when absent or not an integer. */
static int64_t jlimit(const json_t *o, const char *key)
{
    const json_t *v = json_is_object(o) ? json_object_get(o, key) : NULL;
    return json_is_integer(v) ? (int64_t)json_integer_value(v) : BROKER_LIMIT_UNSET;
}

struct delivery_limit broker_delivery_limit_json(const struct broker_version *v, bool quorum,
                                                 const json_t *arguments, const json_t *policy,
                                                 const json_t *operator_policy)
{
    return broker_delivery_limit(v, quorum, jlimit(arguments, "x-delivery-limit"),
                                 jlimit(policy, "delivery-limit"),
                                 jlimit(operator_policy, "delivery-limit"));
}
