/* cloudevents: see cloudevents.h. */
#include "cloudevents.h"

#include <stdio.h>
#include <string.h>

#include "util.h"

/* ---- the reader (exported for the unit tests: cloudevents.h) ---- */

static const char *const prefix_names[CE_PREFIX_COUNT] = {"cloudEvents_", "cloudEvents:", "ce_", "ce-"};
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

size_t ce_binary_prefix(const struct htable *h, enum ce_prefix *best)
{
    unsigned seen[CE_PREFIX_COUNT] = {0};
    for (size_t i = 0; h && i < h->n; i++)
        for (int p = 0; p < CE_PREFIX_COUNT; p++) {
            size_t an;
            const unsigned char *a = after_prefix(&h->e[i].key, (enum ce_prefix)p, &an);
            int ai = a ? attr_index(a, an) : -1;
            if (ai >= 0 && ai <= CE_TYPE)
                seen[p] |= 1u << ai;
        }
    size_t most = 0;
    *best = CE_PREFIX_AMQP;
    for (int p = 0; p < CE_PREFIX_COUNT; p++) {
        size_t c = (size_t)__builtin_popcount(seen[p]);
        if (c > most) {
            most = c;
            *best = (enum ce_prefix)p;
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

static void by_add(struct ce_event *ev, const void *name, size_t n)
{
    if (ev->nby >= CE_ATTR_COUNT)
        return;
    if (n >= sizeof ev->by[0])
        n = sizeof ev->by[0] - 1;
    memcpy(ev->by[ev->nby], name, n);
    ev->by[ev->nby][n] = '\0';
    ev->nby++;
}

int ce_recognise(const struct message *m, struct ce_event *ev)
{
    memset(ev, 0, sizeof *ev);
    if (ce_structured_type(props_string(&m->props, PROP_content_type))) {
        ev->mode = CE_STRUCTURED;
        by_add(ev, "content_type", 12);
        return 80;
    }
    enum ce_prefix p;
    size_t n = ce_binary_prefix(m->headers, &p);
    if (n < 2)
        return 0;
    ev->mode = CE_BINARY;
    ev->prefix = p;
    bool spec = false;
    for (size_t i = 0; i < m->headers->n; i++) {
        size_t an;
        const struct bytes *k = &m->headers->e[i].key;
        const unsigned char *a = after_prefix(k, p, &an);
        int ai = a ? attr_index(a, an) : -1;
        if (ai >= 0 && ai <= CE_TYPE) {
            by_add(ev, k->data, k->len);
            spec |= ai == CE_SPECVERSION;
        }
    }
    return spec && n >= 3 ? 80 : 60;
}

/* The first reason stands: "BEFORE" + "NAME" + "AFTER". */
static void set_reject(struct ce_event *ev, const char *before, const char *name, const char *after)
{
    if (!ev->reject[0])
        snprintf(ev->reject, sizeof ev->reject, "%s%s%s", before, name, after);
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
        set_reject(ev, "structured body is not valid JSON", "", "");
        return;
    }
    if (!json_is_object(root)) {
        set_reject(ev, "structured body is not a JSON object", "", "");
        json_decref(root);
        return;
    }
    bool bad_name = false;
    const char *key;
    json_t *val;
    json_object_foreach(root, key, val) {
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
    if (json_is_string(tp) && !traceparent_trace_id(json_string_value(tp), json_string_length(tp),
                                                    ev->trace_id))
        ev->trace_id[0] = '\0';
    if (ev->reject[0])
        return;
    for (int a = CE_ID; a <= CE_TYPE; a++) {
        const struct ce_value *cv = &ev->attr[a];
        if (!cv->present)
            set_reject(ev, "missing required attribute: ", attr_names[a], "");
        else if (!cv->text_ok)
            set_reject(ev, "attribute ", attr_names[a], " is not a string");
        else if (!cv->text.len)
            set_reject(ev, "attribute ", attr_names[a], " is empty");
    }
    const struct ce_value *sv = &ev->attr[CE_SPECVERSION];
    if (sv->text_ok && !bytes_eq_cstr(&sv->text, "1.0"))
        set_reject(ev, "unsupported specversion (not 1.0)", "", "");
    if (t->present && !ev->time_ok)
        set_reject(ev, "attribute time is not an RFC 3339 time", "", "");
    if (ev->bad_name)
        set_reject(ev, "invalid extension attribute name (not [a-z0-9])", "", "");
}

void ce_event_free(struct ce_event *ev)
{
    for (int a = 0; a < CE_ATTR_COUNT; a++)
        bytes_free(&ev->attr[a].text);
    json_decref(ev->extensions);
    ev->extensions = NULL;
}
