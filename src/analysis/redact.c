/*
 * redact: header globs and JSON paths in the body, replaced by markers of the same kind
 * (redact.h).
 */
#include "redact.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "hval.h"
#include "util.h"

enum seg_kind { SEG_KEY, SEG_INDEX, SEG_ANY };

struct seg {
    enum seg_kind kind;
    char *key;
    size_t index;
};

enum rule_kind { RULE_HEADER, RULE_BODY };

struct redact_rule {
    enum rule_kind kind;
    char *spec;      /* as given, for messages */
    char *glob;      /* RULE_HEADER: lower-cased */
    struct seg *seg; /* RULE_BODY: the path; none is the whole body */
    size_t nseg;
    long matched;
};

void redact_init(struct redactor *r)
{
    memset(r, 0, sizeof *r);
}

void redact_free(struct redactor *r)
{
    for (size_t i = 0; i < r->n; i++) {
        struct redact_rule *u = &r->rules[i];
        for (size_t k = 0; k < u->nseg; k++)
            free(u->seg[k].key);
        free(u->seg);
        free(u->spec);
        free(u->glob);
    }
    free(r->rules);
    memset(r, 0, sizeof *r);
}

static char *lower(const char *s, size_t n)
{
    char *out = xstrndup(s, n);
    for (char *p = out; *p; p++)
        *p = (char)tolower((unsigned char)*p);
    return out;
}

static void add_seg(struct redact_rule *u, enum seg_kind kind, char *key, size_t index)
{
    u->seg = xrealloc(u->seg, (u->nseg + 1) * sizeof *u->seg);
    u->seg[u->nseg++] = (struct seg){kind, key, index};
}

/* The path after "body" or "$": .NAME .* [N] [*] ["NAME"]. */
static enum status parse_path(struct redact_rule *u, const char *p, const char *field,
                              struct error *err)
{
    while (*p) {
        size_t at = (size_t)(p - field) + 1; /* the character, counted from 1 */
        if (p[0] == '.' && p[1] == '*' && (p[2] == '\0' || p[2] == '.' || p[2] == '[')) {
            add_seg(u, SEG_ANY, NULL, 0);
            p += 2;
        } else if (*p == '.') {
            size_t n = strcspn(p + 1, ".[");
            if (n == 0)
                return error_set(err, ST_EINVAL,
                                 "--redact %s: a name is missing after the "
                                 "dot at character %zu",
                                 u->spec, at);
            add_seg(u, SEG_KEY, xstrndup(p + 1, n), 0);
            p += 1 + n;
        } else if (strncmp(p, "[*]", 3) == 0) {
            add_seg(u, SEG_ANY, NULL, 0);
            p += 3;
        } else if (p[0] == '[' && p[1] == '"') {
            struct strbuf k;
            sb_init(&k);
            const char *q = p + 2;
            for (; *q && *q != '"'; q++) {
                if (*q == '\\' && q[1])
                    q++;
                sb_addc(&k, *q);
            }
            if (q[0] != '"' || q[1] != ']') {
                sb_free(&k);
                return error_set(err, ST_EINVAL,
                                 "--redact %s: the quoted name at character %zu is not "
                                 "closed with \"]",
                                 u->spec, at);
            }
            add_seg(u, SEG_KEY, sb_detach(&k, NULL), 0);
            p = q + 2;
        } else if (p[0] == '[' && isdigit((unsigned char)p[1])) {
            char *end;
            unsigned long long v = strtoull(p + 1, &end, 10);
            if (*end != ']')
                return error_set(err, ST_EINVAL,
                                 "--redact %s: the index at character %zu must "
                                 "be a number closed with ]",
                                 u->spec, at);
            add_seg(u, SEG_INDEX, NULL, (size_t)v);
            p = end + 1;
        } else {
            return error_set(err, ST_EINVAL,
                             "--redact %s: expected .NAME, [N], [\"NAME\"] or "
                             "* at character %zu",
                             u->spec, at);
        }
    }
    return ST_OK;
}

enum status redact_add(struct redactor *r, const char *field, struct error *err)
{
    struct redact_rule u;
    memset(&u, 0, sizeof u);
    u.spec = xstrdup(field);
    enum status st = ST_OK;
    const char *rest = NULL;
    if (!*field) {
        st = error_set(err, ST_EINVAL,
                       "--redact needs a field: header.NAME (a glob), body, "
                       "body.PATH or $.PATH");
    } else if (strncmp(field, "header.", 7) == 0 || strncmp(field, "headers.", 8) == 0) {
        const char *g = strchr(field, '.') + 1;
        if (!*g) {
            st = error_set(err, ST_EINVAL, "--redact %s: a header name is missing", field);
        } else {
            u.kind = RULE_HEADER;
            u.glob = lower(g, strlen(g));
        }
    } else if (strncmp(field, "body", 4) == 0 &&
               (field[4] == '\0' || field[4] == '.' || field[4] == '[')) {
        rest = field + 4;
    } else if (field[0] == '$' && (field[1] == '\0' || field[1] == '.' || field[1] == '[')) {
        rest = field + 1;
    } else {
        st = error_set(err, ST_EINVAL,
                       "--redact %s: a field is header.NAME (a glob), body, "
                       "body.PATH or $.PATH",
                       field);
    }
    if (st == ST_OK && rest) {
        u.kind = RULE_BODY;
        st = parse_path(&u, rest, field, err);
    }
    if (st != ST_OK) {
        for (size_t k = 0; k < u.nseg; k++)
            free(u.seg[k].key);
        free(u.seg);
        free(u.spec);
        free(u.glob);
        return st;
    }
    r->rules = xrealloc(r->rules, (r->n + 1) * sizeof *r->rules);
    r->rules[r->n++] = u;
    return ST_OK;
}

/* The marker of a header value's kind (a new value). */
static struct hval hval_marker(const struct hval *v)
{
    switch (v->kind) {
    case HV_STRING:
        return hval_cstring(REDACT_MARKER);
    case HV_BYTES:
        return hval_bytes(REDACT_MARKER, strlen(REDACT_MARKER));
    case HV_BOOL:
        return hval_bool(false);
    case HV_I8:
    case HV_I16:
    case HV_I32:
    case HV_I64:
        return hval_int(v->kind, 0);
    case HV_U8:
    case HV_U16:
    case HV_U32:
    case HV_U64:
    case HV_TIMESTAMP:
        return hval_uint(v->kind, 0);
    case HV_F32:
        return hval_f32(0);
    case HV_F64:
        return hval_f64(0);
    case HV_DECIMAL:
        return hval_decimal(0, 0);
    case HV_ARRAY:
        return hval_array();
    case HV_TABLE:
        return hval_table();
    case HV_VOID:
    default:
        return hval_void();
    }
}

static json_t *json_marker(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        return json_string(REDACT_MARKER);
    case JSON_INTEGER:
        return json_integer(0);
    case JSON_REAL:
        return json_real(0);
    case JSON_TRUE:
    case JSON_FALSE:
        return json_false();
    case JSON_ARRAY:
        return json_array();
    case JSON_OBJECT:
        return json_object();
    case JSON_NULL:
    default:
        return json_null();
    }
}

static long redact_headers(struct redact_rule *u, struct htable *t)
{
    long n = 0;
    for (size_t i = 0; i < t->n; i++) {
        struct hentry *e = &t->e[i];
        if (memchr(e->key.data, '\0', e->key.len))
            continue;
        char *name = lower((const char *)e->key.data, e->key.len);
        if (fnmatch(u->glob, name, 0) == 0) {
            struct hval m = hval_marker(&e->val);
            hval_free(&e->val);
            e->val = m;
            n++;
        }
        free(name);
    }
    return n;
}

/* The path from seg on, in node: redacts what it leads to. */
static long redact_json(json_t *node, const struct seg *s, size_t n)
{
    long count = 0;
    if (json_is_object(node) && s->kind != SEG_INDEX) {
        const char *key;
        json_t *val;
        void *tmp;
        json_object_foreach_safe(node, tmp, key, val)
        {
            if (s->kind == SEG_KEY && strcmp(key, s->key) != 0)
                continue;
            if (n == 1) {
                json_object_set_new(node, key, json_marker(val));
                count++;
            } else {
                count += redact_json(val, s + 1, n - 1);
            }
        }
    } else if (json_is_array(node) && s->kind != SEG_KEY) {
        for (size_t i = 0; i < json_array_size(node); i++) {
            if (s->kind == SEG_INDEX && i != s->index)
                continue;
            json_t *val = json_array_get(node, i);
            if (n == 1) {
                json_array_set_new(node, i, json_marker(val));
                count++;
            } else {
                count += redact_json(val, s + 1, n - 1);
            }
        }
    }
    return count;
}

static void set_body(struct message *m, const char *text, size_t len)
{
    bytes_free(&m->body);
    m->body = bytes_dup(text, len);
}

/* The body rules; returns how many values they redacted. */
static long redact_body(struct redactor *r, struct message *m)
{
    bool any = false, whole = false;
    for (size_t i = 0; i < r->n; i++) {
        if (r->rules[i].kind != RULE_BODY)
            continue;
        any = true;
        if (r->rules[i].nseg == 0) {
            whole = true;
            r->rules[i].matched++;
        }
    }
    if (!any || m->body.len == 0)
        return 0;
    if (whole) {
        set_body(m, REDACT_MARKER, strlen(REDACT_MARKER));
        return 1;
    }
    json_t *doc = utf8_valid(m->body.data, m->body.len)
                      ? json_loadb((const char *)m->body.data, m->body.len,
                                   JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL)
                      : NULL;
    if (!doc) {
        /* Not JSON: no path can be followed in it, so none of it is shared. */
        set_body(m, REDACT_MARKER, strlen(REDACT_MARKER));
        r->whole_bodies++;
        for (size_t i = 0; i < r->n; i++)
            r->rules[i].matched += r->rules[i].kind == RULE_BODY;
        return 1;
    }
    long n = 0;
    for (size_t i = 0; i < r->n; i++) {
        struct redact_rule *u = &r->rules[i];
        if (u->kind != RULE_BODY)
            continue;
        long k = redact_json(doc, u->seg, u->nseg);
        u->matched += k;
        n += k;
    }
    if (n) {
        char *text = json_dumps(doc, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
        set_body(m, text, strlen(text));
        free(text);
    }
    json_decref(doc);
    return n;
}

void redact_message(struct redactor *r, struct message *m)
{
    long n = 0;
    for (size_t i = 0; i < r->n; i++) {
        struct redact_rule *u = &r->rules[i];
        if (u->kind == RULE_HEADER && m->headers) {
            long k = redact_headers(u, m->headers);
            u->matched += k;
            n += k;
        }
    }
    n += redact_body(r, m);
    r->values += n;
    r->records += n > 0;
}

const char *redact_unmatched(const struct redactor *r, size_t *i)
{
    for (; *i < r->n; (*i)++)
        if (r->rules[*i].matched == 0)
            return r->rules[(*i)++].spec;
    return NULL;
}
