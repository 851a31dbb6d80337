/* cloudevents: see cloudevents.h. */
#include "cloudevents.h"

#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "dialect.h"
#include "restamp_kit.h"
#include "util.h"

/* ---- the reader (exported for the unit tests: cloudevents.h) ---- */

static const char *const prefix_names[CE_PREFIX_COUNT] = {"cloudEvents_", "cloudEvents:", "ce_",
                                                          "ce-"};
static const char *const attr_names[CE_ATTR_COUNT] = {
    "id", "source", "specversion", "type", "subject", "datacontenttype", "dataschema", "time"};

const char *ce_prefix_name(enum ce_prefix p)
{
    return (unsigned)p < CE_PREFIX_COUNT ? prefix_names[p] : "";
}

const char *ce_attr_name(enum ce_attr a)
{
    return (unsigned)a < CE_ATTR_COUNT ? attr_names[a] : "";
}

static bool ascii_ieq(const unsigned char *a, const char *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char x = a[i], y = (unsigned char)b[i];
        if (x >= 'A' && x <= 'Z')
            x = (unsigned char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z')
            y = (unsigned char)(y - 'A' + 'a');
        if (x != y)
            return false;
    }
    return true;
}

/* The attribute name after a prefix, or NULL; *an its length. */
static const unsigned char *after_prefix(const struct bytes *key, enum ce_prefix p, size_t *an)
{
    size_t pl = strlen(prefix_names[p]);
    if (key->len <= pl || !ascii_ieq(key->data, prefix_names[p], pl))
        return NULL;
    *an = key->len - pl;
    return key->data + pl;
}

static int attr_index(const unsigned char *name, size_t n)
{
    for (int a = 0; a < CE_ATTR_COUNT; a++)
        if (strlen(attr_names[a]) == n && ascii_ieq(name, attr_names[a], n))
            return a;
    return -1;
}

const char *ce_header_name(enum ce_prefix p, enum ce_attr a)
{
    static const char *const names[CE_PREFIX_COUNT][4] = {
        {"cloudEvents_id", "cloudEvents_source", "cloudEvents_specversion", "cloudEvents_type"},
        {"cloudEvents:id", "cloudEvents:source", "cloudEvents:specversion", "cloudEvents:type"},
        {"ce_id", "ce_source", "ce_specversion", "ce_type"},
        {"ce-id", "ce-source", "ce-specversion", "ce-type"},
    };
    return (unsigned)p < CE_PREFIX_COUNT && (unsigned)a <= CE_TYPE ? names[p][a] : "";
}

size_t ce_binary_prefix(const struct htable *h, enum ce_prefix *best, unsigned *best_seen)
{
    unsigned seen[CE_PREFIX_COUNT] = {0};
    for (size_t i = 0; h && i < h->n; i++) {
        /* every prefix starts with a 'c' (any case): other names are none of them */
        const struct bytes *k = &h->e[i].key;
        if (!k->len || (k->data[0] | 0x20) != 'c')
            continue;
        for (int p = 0; p < CE_PREFIX_COUNT; p++) {
            size_t an;
            const unsigned char *a = after_prefix(&h->e[i].key, (enum ce_prefix)p, &an);
            int ai = a ? attr_index(a, an) : -1;
            if (ai >= 0 && ai <= CE_TYPE)
                seen[p] |= 1u << ai;
        }
    }
    size_t most = 0;
    *best = CE_PREFIX_AMQP;
    *best_seen = 0;
    for (int p = 0; p < CE_PREFIX_COUNT; p++) {
        size_t c = (size_t)__builtin_popcount(seen[p]);
        if (c > most) {
            most = c;
            *best = (enum ce_prefix)p;
            *best_seen = seen[p];
        }
    }
    return most;
}

bool ce_structured_type(const struct bytes *ct)
{
    static const char mt[] = "application/cloudevents+json";
    size_t n = sizeof mt - 1;
    if (!ct || ct->len < n || !ascii_ieq(ct->data, mt, n))
        return false;
    if (ct->len == n)
        return true;
    unsigned char c = ct->data[n];
    return c == ';' || c == ' ' || c == '\t';
}

int ce_recognise(const struct message *m, struct ce_event *ev)
{
    memset(ev, 0, sizeof *ev);
    if (ce_structured_type(props_string(&m->props, PROP_content_type))) {
        ev->mode = CE_STRUCTURED;
        return 80;
    }
    size_t n = ce_binary_prefix(m->headers, &ev->prefix, &ev->core_seen);
    if (n < 2)
        return 0;
    ev->mode = CE_BINARY;
    return (ev->core_seen & (1u << CE_SPECVERSION)) && n >= 3 ? 80 : 60;
}

/* The first reason stands. */
static void set_reject(struct ce_event *ev, const char *why)
{
    if (!ev->reject)
        ev->reject = why;
}

static bool ext_name_ok(const unsigned char *s, size_t n)
{
    if (!n || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9')))
            return false;
    return true;
}

/* A header value as a JSON value for the extensions object (what can be read; else null). */
static json_t *hval_to_ext(const struct hval *v)
{
    const struct bytes *b = hval_str(v);
    if (b)
        return utf8_valid(b->data, b->len) ? json_stringn((const char *)b->data, b->len)
                                           : json_null();
    if (hkind_is_signed(v->kind))
        return json_integer(v->v.i);
    if (hkind_is_unsigned(v->kind) && v->kind != HV_TIMESTAMP)
        return v->v.u <= (uint64_t)INT64_MAX ? json_integer((json_int_t)v->v.u) : json_null();
    if (v->kind == HV_BOOL)
        return json_boolean(v->v.b);
    if (v->kind == HV_TIMESTAMP && v->v.u <= (uint64_t)INT64_MAX / 1000) {
        char t[32];
        time_format_rfc3339((int64_t)v->v.u * 1000, false, t);
        return json_string(t);
    }
    return json_null();
}

static void take_text(struct ce_value *cv, const void *s, size_t n)
{
    cv->present = true;
    if (utf8_valid(s, n)) {
        cv->text_ok = true;
        cv->text = bytes_dup(s, n);
    }
}

static void read_binary(const struct message *m, struct ce_event *ev)
{
    bool bad_name = false;
    for (size_t i = 0; i < m->headers->n; i++) {
        const struct hentry *e = &m->headers->e[i];
        size_t an;
        const unsigned char *a = after_prefix(&e->key, ev->prefix, &an);
        if (!a)
            continue;
        int ai = attr_index(a, an);
        if (ai >= 0) {
            struct ce_value *cv = &ev->attr[ai];
            if (cv->present)
                continue; /* the first of a duplicated header */
            cv->header = (const char *)e->key.data;
            const struct bytes *b = hval_str(&e->val);
            if (b) {
                take_text(cv, b->data, b->len);
            } else {
                cv->present = true;
                if (ai == CE_TIME && e->val.kind == HV_TIMESTAMP &&
                    e->val.v.u <= (uint64_t)INT64_MAX / 1000) {
                    char t[32];
                    ev->time_ms = (int64_t)e->val.v.u * 1000;
                    ev->time_ok = true;
                    time_format_rfc3339(ev->time_ms, false, t);
                    cv->text = bytes_from_cstr(t);
                    cv->text_ok = true;
                }
            }
            continue;
        }
        char name[65];
        bool http = ev->prefix == CE_PREFIX_HTTP;
        if (an <= 64) {
            for (size_t j = 0; j < an; j++) {
                unsigned char c = a[j];
                name[j] = (char)(http && c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
            }
            name[an] = '\0';
        }
        if (an > 64 || !ext_name_ok((const unsigned char *)name, an)) {
            bad_name = true;
            continue;
        }
        if (!json_object_get(ev->extensions, name))
            json_object_set_new(ev->extensions, name, hval_to_ext(&e->val));
    }
    /* The AMQP binding: datacontenttype is the content-type property. */
    const struct bytes *ct = props_string(&m->props, PROP_content_type);
    if (ct && ct->len) {
        bytes_free(&ev->attr[CE_DATACONTENTTYPE].text);
        ev->attr[CE_DATACONTENTTYPE] = (struct ce_value){0};
        take_text(&ev->attr[CE_DATACONTENTTYPE], ct->data, ct->len);
    }
    ev->bad_name |= bad_name;
}

static void read_structured(const struct message *m, struct ce_event *ev)
{
    json_error_t jerr;
    json_t *root = json_loadb((const char *)m->body.data, m->body.len, JSON_ALLOW_NUL, &jerr);
    if (!root) {
        set_reject(ev, "structured body is not valid JSON");
        return;
    }
    if (!json_is_object(root)) {
        set_reject(ev, "structured body is not a JSON object");
        json_decref(root);
        return;
    }
    bool bad_name = false;
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val)
    {
        size_t kn = strlen(key);
        int ai = attr_index((const unsigned char *)key, kn);
        if (ai >= 0 && strcmp(key, attr_names[ai]) == 0) {
            struct ce_value *cv = &ev->attr[ai];
            if (json_is_string(val))
                take_text(cv, json_string_value(val), json_string_length(val));
            else
                cv->present = !json_is_null(val) || ai <= CE_TYPE;
            continue;
        }
        if (!strcmp(key, "data") || !strcmp(key, "data_base64"))
            continue;
        if (!ext_name_ok((const unsigned char *)key, kn)) {
            bad_name = true;
            continue;
        }
        json_object_set(ev->extensions, key, val);
    }
    json_decref(root);
    ev->bad_name |= bad_name;
}

void ce_read(const struct message *m, struct ce_event *ev)
{
    ev->extensions = json_object();
    if (ev->mode == CE_STRUCTURED)
        read_structured(m, ev);
    else if (ev->mode == CE_BINARY)
        read_binary(m, ev);
    struct ce_value *t = &ev->attr[CE_TIME];
    if (t->text_ok && !ev->time_ok)
        ev->time_ok = time_parse_rfc3339((const char *)t->text.data, t->text.len, &ev->time_ms);
    json_t *tp = json_object_get(ev->extensions, "traceparent");
    if (json_is_string(tp) &&
        !traceparent_trace_id(json_string_value(tp), json_string_length(tp), ev->trace_id))
        ev->trace_id[0] = '\0';
    if (ev->reject)
        return;
    static const char *const missing[4] = {
        "missing required attribute: id", "missing required attribute: source",
        "missing required attribute: specversion", "missing required attribute: type"};
    static const char *const not_string[4] = {
        "attribute id is not a string", "attribute source is not a string",
        "attribute specversion is not a string", "attribute type is not a string"};
    static const char *const empty[4] = {"attribute id is empty", "attribute source is empty",
                                         "attribute specversion is empty",
                                         "attribute type is empty"};
    for (int a = CE_ID; a <= CE_TYPE; a++) {
        const struct ce_value *cv = &ev->attr[a];
        if (!cv->present)
            set_reject(ev, missing[a]);
        else if (!cv->text_ok)
            set_reject(ev, not_string[a]);
        else if (!cv->text.len)
            set_reject(ev, empty[a]);
    }
    const struct ce_value *sv = &ev->attr[CE_SPECVERSION];
    if (sv->text_ok && !bytes_eq_cstr(&sv->text, "1.0"))
        set_reject(ev, "unsupported specversion (not 1.0)");
    if (t->present && !ev->time_ok)
        set_reject(ev, "attribute time is not an RFC 3339 time");
    if (ev->bad_name)
        set_reject(ev, "invalid extension attribute name (not [a-z0-9])");
}

void ce_event_free(struct ce_event *ev)
{
    for (int a = 0; a < CE_ATTR_COUNT; a++)
        bytes_free(&ev->attr[a].text);
    json_decref(ev->extensions);
    ev->extensions = NULL;
}

/* ---- the dialect ---------------------------------------------------------------------- */

static int recognise(const struct dialect_input *in, struct dialect_match *m)
{
    struct ce_event ev;
    int c = ce_recognise(in->msg, &ev);
    if (c && ev.mode == CE_STRUCTURED)
        dialect_match_by(m, "content_type");
    for (int a = CE_ID; c && ev.mode == CE_BINARY && a <= CE_TYPE; a++)
        if (ev.core_seen & (1u << a))
            dialect_match_by(m, ce_header_name(ev.prefix, (enum ce_attr)a));
    return c;
}

static const struct bytes *attr_text(const struct ce_event *ev, enum ce_attr a)
{
    const struct ce_value *v = &ev->attr[a];
    return v->text_ok && v->text.len ? &v->text : NULL;
}

static void decode(const struct dialect_input *x, struct decoded *out)
{
    const struct message *m = x->msg;
    struct ce_event *ev = calloc(1, sizeof *ev);
    if (!ev)
        abort();
    out->priv = ev;
    ce_recognise(m, ev);
    ce_read(m, ev);

    struct envelope_init in;
    memset(&in, 0, sizeof in);
    const struct bytes *id = attr_text(ev, CE_ID), *type = attr_text(ev, CE_TYPE);
    struct bytes derived = {0, NULL};
    if (id) {
        in.id = *id;
    } else {
        derived = dialect_derived_id(m);
        in.id = derived;
        in.defaulted |= ED_ID;
    }
    if (type) {
        in.type = *type;
    } else {
        in.defaulted |= ED_TYPE;
        in.type = dialect_type_by_route(x);
    }
    if (ev->trace_id[0])
        in.correlation_id = (struct bytes){TRACEPARENT_ID_LEN, (unsigned char *)ev->trace_id};
    else
        in.defaulted |= ED_CORRELATION;
    in.version = 1;
    in.defaulted |= ED_VERSION;
    dialect_attempt_from_deaths(&in, x->death);
    if (ev->time_ok) {
        in.first_seen_ms = ev->time_ms;
    } else {
        in.defaulted |= ED_FIRST_SEEN;
        dialect_first_seen_fallback(x, &in.first_seen_ms);
    }
    const struct bytes *src = attr_text(ev, CE_SOURCE);
    if (src)
        in.origin = *src;
    in.headers = m->headers;
    dialect_envelope(out, &in);
    bytes_free(&derived);
    out->accepted = ev->reject == NULL;
    out->reject_reason = ev->reject;
    out->accept_note = ev->reject ? "a CloudEvents SDK refuses it (the spec's required "
                                    "attributes, specversion 1.0, a valid time)"
                                  : "a valid CloudEvent (id, source, specversion 1.0, type)";
    static const char *const from[NF_COUNT] = {
        [NF_ID] = "the event id (id attribute; unique with source)",
        [NF_TYPE] = "the event type (type attribute)",
        [NF_VERSION] = "CloudEvents has no schema version (specversion is the spec's)",
        [NF_CORRELATION] = ("the trace id of the traceparent extension (CloudEvents has no "
                            "correlation attribute)"),
        [NF_CAUSATION] = "CloudEvents carries no causation",
        [NF_ATTEMPT] = "times the broker dead-lettered it (x-death)",
        [NF_FIRST_SEEN] = "when the occurrence happened (time attribute)",
        [NF_ORIGIN] = "the event's source attribute",
        [NF_ERROR] = "CloudEvents carries no failure: the broker's death",
        [NF_FAILED_AT] = "the newest x-death time",
    };
    memcpy(out->read_from, from, sizeof from);
}

static void release(struct decoded *d)
{
    if (d->priv) {
        ce_event_free(d->priv);
        free(d->priv);
    }
    d->priv = NULL;
}

static void add_attr(struct dfields *f, const struct ce_event *ev, enum ce_attr a,
                     const char *meaning)
{
    const struct ce_value *v = &ev->attr[a];
    if (v->text_ok)
        dfields_add(f, attr_names[a], attr_names[a], v->text.data ? (const void *)v->text.data : "",
                    v->text.len, meaning);
    else
        dfields_adds(f, attr_names[a], attr_names[a], v->present ? "(not a string)" : NULL, meaning)
            ->json = json_null();
}

static void fields(const struct decoded *d, int64_t now_ms, struct dfields *f)
{
    (void)now_ms;
    const struct ce_event *ev = d->priv;
    dfields_adds(f, "mode", "mode", ev->mode == CE_STRUCTURED ? "structured" : "binary",
                 ev->mode == CE_STRUCTURED ? "the whole event in the body "
                                             "(application/cloudevents+json)"
                                           : "attributes in prefixed headers, data in the body");
    dfields_adds(f, "prefix", "prefix", ev->mode == CE_BINARY ? ce_prefix_name(ev->prefix) : NULL,
                 "cloudEvents_ / cloudEvents: (AMQP binding), ce_ (Kafka), ce- (HTTP)");
    add_attr(f, ev, CE_SPECVERSION, "the CloudEvents version");
    add_attr(f, ev, CE_SUBJECT, "what the event is about, within its source");
    add_attr(f, ev, CE_DATACONTENTTYPE, "the data's media type");
    add_attr(f, ev, CE_DATASCHEMA, "the schema the data adheres to");
    add_attr(f, ev, CE_TIME, "when the occurrence happened");
    struct strbuf sb;
    sb_init(&sb);
    const char *key;
    json_t *val;
    json_object_foreach(ev->extensions, key, val)
    {
        if (sb.len)
            sb_adds(&sb, ", ");
        sb_adds(&sb, key);
        sb_addc(&sb, '=');
        char *t = json_dumps(val, JSON_ENCODE_ANY | JSON_COMPACT);
        if (t)
            sb_adds(&sb, t);
        free(t);
    }
    struct dfield *e = dfields_add(f, "extensions", "extensions", sb.len ? sb.buf : "", sb.len,
                                   "every other attribute (traceparent: the trace it belongs to)");
    e->json = json_deep_copy(ev->extensions);
    sb_free(&sb);
    unsigned df = d->env->defaulted;
    if (df & ED_ID)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN, "id: a name-based UUID (no id attribute)");
    if (df & ED_TYPE)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN, "type: the routing key (no type attribute)");
    if (df & ED_CORRELATION)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         "correlation: the id (no valid traceparent extension)");
    if (df & ED_ATTEMPT)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN, "attempt: 1 (no x-death to count)");
    if (df & ED_FIRST_SEEN)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN, "first seen: no valid time attribute");
}

bool ce_body_id_span(const unsigned char *s, size_t n, size_t *off, size_t *len)
{
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    if (i >= n || s[i] != '{')
        return false;
    int depth = 0;
    bool want_key = true, is_id = false;
    size_t vstart = 0;
    for (; i < n; i++) {
        unsigned char c = s[i];
        if (c == '"') {
            size_t st = i++;
            while (i < n && s[i] != '"')
                i += s[i] == '\\' ? 2 : 1;
            if (i >= n)
                return false;
            if (depth == 1 && want_key)
                is_id = i - st == 3 && s[st + 1] == 'i' && s[st + 2] == 'd';
            continue;
        }
        if (c == '{' || c == '[') {
            depth++;
            if (depth == 1)
                want_key = true;
        } else if (c == '}' || c == ']' || (c == ',' && depth == 1)) {
            if (depth == 1 && !want_key && is_id) {
                size_t e = i;
                while (e > vstart && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\n' ||
                                      s[e - 1] == '\r'))
                    e--;
                *off = vstart;
                *len = e - vstart;
                return true;
            }
            if (c == ',')
                want_key = true;
            else
                depth--;
        } else if (c == ':' && depth == 1 && want_key) {
            want_key = false;
            vstart = i + 1;
            while (vstart < n && (s[vstart] == ' ' || s[vstart] == '\t' || s[vstart] == '\n' ||
                                  s[vstart] == '\r'))
                vstart++;
        }
    }
    return false;
}

/* Replay: the plain AMQP rule (CloudEvents has no replay tool). Re-issue: a new event id in
 * the place the id is (the same header, or the body's top-level "id"), nothing else changed. */
static enum status restamp(const struct decoded *d, const struct restamp_opts *o,
                           const struct bytes *dlq, struct outgoing *out, struct error *err)
{
    (void)dlq;
    const struct ce_event *ev = d->priv;
    enum status st =
        rk_target_source(d, out, "it has no x-death history naming where it came from", err);
    if (st != ST_OK)
        return st;
    if (o->mode == RESTAMP_REISSUE) {
        if (ev->mode == CE_BINARY) {
            const char *h =
                ev->attr[CE_ID].header ? ev->attr[CE_ID].header : ce_header_name(ev->prefix, CE_ID);
            rk_header_put_text(out->headers, h, out->id.data, out->id.len);
        } else {
            size_t off, len;
            if (ev->reject && !strncmp(ev->reject, "structured body", 15))
                return error_set(err, ST_EUNSUPPORTED,
                                 "this structured CloudEvent's body is not a JSON object: there "
                                 "is no id to renew (give a new body)");
            if (!ce_body_id_span(out->body.data, out->body.len, &off, &len))
                return error_set(err, ST_EUNSUPPORTED,
                                 "this structured CloudEvent has no top-level \"id\" member to "
                                 "give a new id");
            json_t *j = json_stringn((const char *)out->id.data, out->id.len);
            char *t = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
            json_decref(j);
            if (!t)
                return error_set(err, ST_EINVAL, "the new id is not UTF-8");
            struct strbuf sb;
            sb_init(&sb);
            sb_add(&sb, out->body.data, off);
            sb_adds(&sb, t);
            sb_add(&sb, out->body.data + off + len, out->body.len - off - len);
            free(t);
            size_t nl;
            char *nb = sb_detach(&sb, &nl);
            bytes_free(&out->body);
            out->body = (struct bytes){nl, (unsigned char *)nb};
        }
    }
    for (size_t i = 0; i < o->n_changes; i++) {
        const struct env_change *c = &o->changes[i];
        if (c->field != EF_HEADER_SET && c->field != EF_HEADER_REMOVE)
            return error_set(err, ST_EUNSUPPORTED,
                             "%s cannot be changed on a CloudEvent here (header.NAME can)",
                             rk_field_name(c->field));
        st = rk_header_change(out->headers, c, err);
        if (st != ST_OK)
            return st;
    }
    return ST_OK;
}

const struct dialect_ops dialect_cloudevents = {
    .name = "cloudevents",
    .title = "CloudEvents",
    .summary = "CloudEvent (cloudEvents_ / cloudEvents: / ce_ / ce- headers, or "
               "application/cloudevents+json)",
    .section = "CloudEvents attributes",
    .recognise = recognise,
    .ceiling = 80,
    .decode = decode,
    .release = release,
    .fields = fields,
    .restamp = restamp,
    .replay_rule = "the message as it was (the broker's headers dropped), to the first death's "
                   "exchange and routing key; a re-issue gets a new event id",
};
