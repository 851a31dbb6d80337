/*
 * celery: Celery's task messages (docs/dialects.md, "celery"; fixtures/celery/SOURCES.md).
 *
 * Celery has no error queue and writes no failure headers: a task reaches a DLQ only through
 * the broker's dead-letter exchange, unchanged, when a worker rejects it. So everything
 * neutral is read from the task's own headers (protocol 2, celery/app/amqp.py as_task_v2) or
 * its body (protocol 1), and the failure from x-death:
 *
 *   id           header id (protocol 1: body id)
 *   type         header task
 *   correlation  root_id (else the id, as Celery defaults it)
 *   causation    parent_id, unless it is the task itself (retry() names itself as parent)
 *   attempt      retries (else the broker's death count)
 *   failed at    the newest x-death time (decode's default); source x-first-death-queue
 *
 * Every header is read by its kind: a value of another kind is absent, never converted.
 *
 * Replay: Celery's move (celery/contrib/migrate.py republish): every header kept, x-death
 * included, values in the kinds py-amqp writes them back in. Re-issue: a new task id (id
 * header and correlation_id), parent_id = the old id, root_id kept, retries 0, the broker's
 * death headers stripped (celery/app/task.py _filter_x_death_headers).
 */
#include "celery.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "dialect.h"
#include "hval_json.h"
#include "restamp_kit.h"
#include "util.h"

/* Bodies above this are not parsed (as body.c does not check JSON past 16 MiB). */
#define BODY_PARSE_MAX ((size_t)16 << 20)

/* A borrowed text: from a header's string value or a JSON string. */
struct txt {
    bool has;
    unsigned char *p;
    size_t n;
};

/* jansson's const values are shared, not read-only: a reference on one is a new reference. */
static json_t *jref(const json_t *v)
{
    return json_incref((json_t *)(uintptr_t)v);
}

/* What a task message says, from its headers (protocol 2) or its body (protocol 1). */
struct view {
    int protocol; /* 2 or 1 */
    json_t *body; /* the parsed body, owned; NULL: not JSON (or not parsed) */
    json_t *src;  /* protocol 1: the body object the fields are read from (borrowed) */
    struct txt id, task, root, parent, origin, group, shadow, lang, eta, expires, argsrepr,
        kwargsrepr;
    bool has_retries, has_group_index;
    int64_t retries, group_index;
    const char *reject;      /* NULL: a worker takes the body; else a reason code (static) */
    const char *accept_note; /* static */
};

/* ---- reading ------------------------------------------------------------------------- */

static struct txt htxt(const struct htable *h, const char *name)
{
    const struct hval *v = htable_get(h, name);
    struct txt t = {false, NULL, 0};
    if (v && v->kind == HV_STRING) {
        t.has = true;
        t.p = v->v.s.data ? v->v.s.data : (unsigned char *)"";
        t.n = v->v.s.len;
    }
    return t;
}

static struct txt jtxt(const json_t *o, const char *name)
{
    const json_t *v = json_object_get(o, name);
    struct txt t = {false, NULL, 0};
    if (json_is_string(v)) {
        t.has = true;
        t.p = (unsigned char *)(uintptr_t)json_string_value(v);
        t.n = json_string_length(v);
    }
    return t;
}

static bool jint(const json_t *o, const char *name, int64_t *out)
{
    const json_t *v = json_object_get(o, name);
    if (!json_is_integer(v))
        return false;
    *out = (int64_t)json_integer_value(v);
    return true;
}

static json_t *parse_body(const void *p, size_t n)
{
    if (!n || n > BODY_PARSE_MAX)
        return NULL;
    return json_loadb(p, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
}

static bool has_word(const void *hay, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    const char *h = hay;
    for (size_t i = 0; k <= n && i <= n - k; i++)
        if (h[i] == needle[0] && memcmp(h + i, needle, k) == 0)
            return true;
    return false;
}

static bool ci_contains(const struct bytes *b, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = 0; b && b->data && k <= b->len && i <= b->len - k; i++) {
        size_t j = 0;
        while (j < k && tolower(b->data[i + j]) == needle[j])
            j++;
        if (j == k)
            return true;
    }
    return false;
}

/* Whether the body looks like a protocol-1 task (a JSON object with task and id strings). A
 * cheap look first: recognise runs on every message. */
static json_t *protocol1_body(const void *body, size_t n)
{
    size_t i = 0;
    const char *b = body;
    while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n'))
        i++;
    if (i == n || b[i] != '{' || !has_word(body, n, "\"task\"") || !has_word(body, n, "\"id\""))
        return NULL;
    json_t *j = parse_body(body, n);
    if (json_is_object(j) && jtxt(j, "task").has && jtxt(j, "task").n && jtxt(j, "id").has &&
        jtxt(j, "id").n)
        return j;
    json_decref(j);
    return NULL;
}

/* How a worker takes the body (celery/worker/strategy.py, request.py). */
static void body_rule(const struct message *m, struct view *v, size_t len)
{
    const json_t *b = v->body;
    v->accept_note = "a worker takes it: [args, kwargs, embed] as JSON";
    if (v->protocol == 1 || json_is_object(b)) {
        /* Protocol 1, or a hybrid body (hybrid_to_proto2): args and kwargs from the object. */
        const json_t *a = json_object_get(b, "args"), *k = json_object_get(b, "kwargs");
        if (v->protocol == 2 && !a) {
            v->reject = "body-shape";
            v->accept_note = "a JSON object without args: not a task body";
        } else if ((a && !json_is_array(a)) || (k && !json_is_object(k))) {
            v->reject = "body-shape";
            v->accept_note = "args is not a list or kwargs not an object (InvalidTaskError)";
        } else {
            v->accept_note = "a worker takes it: args and kwargs from the body object";
        }
        return;
    }
    const struct bytes *ct = props_string(&m->props, PROP_content_type);
    if (ct && ct->len && !ci_contains(ct, "json")) {
        v->reject = "content-type";
        v->accept_note = "not JSON: Celery's default accept_content (json) refuses it "
                         "(ContentDisallowed); a worker set to accept it would take it";
    } else if (htxt(m->headers, "compression").has) {
        v->accept_note = "compressed: the body is not checked";
    } else if (len > BODY_PARSE_MAX) {
        v->accept_note = "over 16 MiB: the body is not checked";
    } else if (!b) {
        v->reject = "body-not-json";
        v->accept_note = "the body is not JSON: a worker acks it as undecodable and drops it";
    } else if (!json_is_array(b) || json_array_size(b) != 3 ||
               !json_is_array(json_array_get(b, 0)) || !json_is_object(json_array_get(b, 1)) ||
               !(json_is_object(json_array_get(b, 2)) || json_is_null(json_array_get(b, 2)))) {
        v->reject = "body-shape";
        v->accept_note = "not [args (list), kwargs (object), embed (object or null)]";
    }
}

static void view_read(const struct message *m, const void *body, size_t len, struct view *v)
{
    memset(v, 0, sizeof *v);
    const struct htable *h = m->headers;
    if (htable_get(h, "task")) {
        v->protocol = 2;
        v->id = htxt(h, "id");
        v->task = htxt(h, "task");
        v->root = htxt(h, "root_id");
        v->parent = htxt(h, "parent_id");
        v->origin = htxt(h, "origin");
        v->group = htxt(h, "group");
        v->shadow = htxt(h, "shadow");
        v->lang = htxt(h, "lang");
        v->eta = htxt(h, "eta");
        v->expires = htxt(h, "expires");
        v->argsrepr = htxt(h, "argsrepr");
        v->kwargsrepr = htxt(h, "kwargsrepr");
        v->has_retries = hval_integer(htable_get(h, "retries"), &v->retries);
        v->has_group_index = hval_integer(htable_get(h, "group_index"), &v->group_index);
        const struct bytes *ct = props_string(&m->props, PROP_content_type);
        if (!(ct && ct->len && !ci_contains(ct, "json")) && !htxt(h, "compression").has)
            v->body = parse_body(body, len);
    } else {
        v->protocol = 1;
        v->body = protocol1_body(body, len);
        v->src = v->body;
        const json_t *s = v->src;
        v->id = jtxt(s, "id");
        v->task = jtxt(s, "task");
        v->root = jtxt(s, "root_id");
        v->parent = jtxt(s, "parent_id");
        v->origin = jtxt(s, "origin");
        v->group = jtxt(s, "taskset");
        if (!v->group.has)
            v->group = jtxt(s, "group");
        v->eta = jtxt(s, "eta");
        v->expires = jtxt(s, "expires");
        v->has_retries = jint(s, "retries", &v->retries);
        v->has_group_index = jint(s, "group_index", &v->group_index);
    }
    if (v->has_retries && v->retries < 0)
        v->has_retries = false;
    body_rule(m, v, len);
}

static void view_free(struct view *v)
{
    json_decref(v->body);
    memset(v, 0, sizeof *v);
}

static struct bytes tb(const struct txt *t)
{
    return t->has ? (struct bytes){t->n, t->p} : (struct bytes){0, NULL};
}

/* ---- times --------------------------------------------------------------------------- */

bool celery_iso_ms(const void *s, size_t n, int64_t *ms)
{
    if (time_parse_rfc3339(s, n, ms))
        return true;
    /* Python's isoformat() of a naive datetime: no offset. Celery's default is UTC. */
    char buf[64];
    if (n < 19 || n + 1 >= sizeof buf || memchr(s, '+', n) ||
        memchr((const char *)s + 10, '-', n - 10))
        return false;
    memcpy(buf, s, n);
    buf[n] = 'Z';
    return time_parse_rfc3339(buf, n + 1, ms);
}

/* ---- recognise and decode ------------------------------------------------------------ */

static int recognise(const struct dialect_input *in, struct dialect_match *m)
{
    const struct htable *h = in->msg->headers;
    const struct hval *task = htable_get(h, "task");
    if (task) {
        struct txt t = htxt(h, "task"), id = htxt(h, "id");
        if (!t.has || !t.n || !id.has || !id.n)
            return 0;
        dialect_match_by(m, "task");
        dialect_match_by(m, "id");
        struct txt lang = htxt(h, "lang");
        if (lang.has && lang.n == 2 && memcmp(lang.p, "py", 2) == 0) {
            dialect_match_by(m, "lang");
            return 80;
        }
        return 70;
    }
    json_t *j = protocol1_body(in->body, in->body_len);
    if (!j)
        return 0;
    json_decref(j);
    dialect_match_by(m, "body.task");
    dialect_match_by(m, "body.id");
    return 60;
}

static void decode(const struct dialect_input *x, struct decoded *out)
{
    const struct message *m = x->msg;
    struct view v;
    view_read(m, x->body, x->body_len, &v);
    struct envelope_init in;
    memset(&in, 0, sizeof in);
    in.attempt_from_zero = true;
    struct bytes derived = {0, NULL};
    if (v.id.has && v.id.n) {
        in.id = tb(&v.id);
    } else {
        derived = dialect_derived_id(m);
        in.id = derived;
        in.defaulted |= ED_ID;
    }
    struct bytes task = {4, (unsigned char *)"task"};
    if (v.task.has && v.task.n) {
        in.type = tb(&v.task);
    } else {
        in.type = task;
        in.defaulted |= ED_TYPE;
    }
    if (v.root.has && v.root.n)
        in.correlation_id = tb(&v.root);
    else
        in.defaulted |= ED_CORRELATION;
    struct bytes parent = tb(&v.parent);
    if (v.parent.has && v.parent.n && !bytes_eq(&parent, &in.id))
        in.causation_id = parent;
    in.version = 1;
    in.defaulted |= ED_VERSION;
    if (v.has_retries) {
        in.attempt = v.retries;
    } else {
        in.attempt = x->death->total > 0 ? x->death->total : 1;
        in.defaulted |= ED_ATTEMPT;
    }
    in.first_seen_ms = dialect_first_seen_by_broker(x);
    in.defaulted |= ED_FIRST_SEEN;
    in.origin = tb(&v.origin);
    in.headers = m->headers;
    dialect_envelope(out, &in);
    bytes_free(&derived);

    const struct death_summary *d = x->death;
    if (d->first_queue.len) {
        const struct bytes *rk = death_first_routing_key(d);
        const struct bytes *ex = &d->first_exchange;
        dialect_source_route(out, "x-first-death-queue", d->first_queue.data, d->first_queue.len,
                             ex->data ? (const void *)ex->data : "", ex->len,
                             rk ? (const void *)rk->data : d->first_queue.data,
                             rk ? rk->len : d->first_queue.len);
        out->source.how_text = "where it first died (x-first-death-queue, x-death)";
    }
    out->accepted = !v.reject;
    out->reject_reason = v.reject;
    out->accept_note = v.accept_note;
    static const char *const from[NF_COUNT] = {
        [NF_ID] = "the task id (id header; also the correlation_id property)",
        [NF_TYPE] = "the task's registered name (task header)",
        [NF_VERSION] = "Celery has no schema version",
        [NF_CORRELATION] = "the first task of the workflow (root_id)",
        [NF_CAUSATION] = "the task that sent this one (parent_id)",
        [NF_ATTEMPT] = "retry() calls so far (retries; 0 on a first run)",
        [NF_FIRST_SEEN] = "Celery writes no sent time: the first death's time",
        [NF_ORIGIN] = "the sending process, gen<pid>@host (origin)",
        [NF_ERROR] = "Celery writes no exception into the message: the broker's death",
        [NF_FAILED_AT] = "when the broker dead-lettered it (x-death)",
    };
    static const char *const from1[NF_COUNT] = {
        [NF_ID] = "the task id (the body's id, protocol 1)",
        [NF_TYPE] = "the task's registered name (the body's task, protocol 1)",
        [NF_VERSION] = "Celery has no schema version",
        [NF_CORRELATION] = "protocol 1 has no root_id: the id",
        [NF_CAUSATION] = "protocol 1 has no parent_id",
        [NF_ATTEMPT] = "retry() calls so far (the body's retries)",
        [NF_FIRST_SEEN] = "Celery writes no sent time: the first death's time",
        [NF_ORIGIN] = "protocol 1 names no sender",
        [NF_ERROR] = "Celery writes no exception into the message: the broker's death",
        [NF_FAILED_AT] = "when the broker dead-lettered it (x-death)",
    };
    memcpy(out->read_from, v.protocol == 1 ? from1 : from, sizeof from);
    view_free(&v);
}

/* ---- the dialect's own fields -------------------------------------------------------- */

static void add_txt(struct dfields *f, const char *key, const char *label, const struct txt *t,
                    const char *meaning)
{
    if (t->has)
        dfields_add(f, key, label, t->p, t->n, meaning);
    else
        dfields_adds(f, key, label, NULL, meaning);
}

static void add_time(struct dfields *f, const char *key, const char *label, const struct txt *t,
                     const char *meaning)
{
    int64_t ms;
    if (t->has && celery_iso_ms(t->p, t->n, &ms))
        dfields_add_time(f, key, label, ms, meaning);
    else
        dfields_adds(f, key, label, NULL, meaning);
}

/* A JSON value as a field (its compact text; JSON as it is). v borrowed; NULL: absent. */
static void add_json(struct dfields *f, const char *key, const char *label, const json_t *v,
                     const char *meaning)
{
    if (!v) {
        dfields_adds(f, key, label, NULL, meaning);
        return;
    }
    char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    struct dfield *d = dfields_add(f, key, label, s ? s : "", s ? strlen(s) : 0, meaning);
    free(s);
    d->json = jref(v);
}

/* A number from a header (integer or float) or JSON, as JSON; NULL: none. */
static json_t *num_json_h(const struct hval *v)
{
    int64_t i;
    if (hval_integer(v, &i))
        return json_integer((json_int_t)i);
    if (v && v->kind == HV_F64)
        return json_real(v->v.f64); /* NULL for NaN and infinities */
    if (v && v->kind == HV_F32)
        return json_real((double)v->v.f32);
    return NULL;
}

/* The task names of a list of signatures (or of one signature), in order; reversed for a
 * chain, which Celery pops from its end. A new array; NULL when v is neither. */
static json_t *sig_names(const json_t *v, bool reversed)
{
    if (json_is_object(v)) {
        json_t *a = json_array();
        const json_t *t = json_object_get(v, "task");
        json_array_append_new(a, json_is_string(t) ? jref(t) : json_null());
        return a;
    }
    if (!json_is_array(v))
        return NULL;
    json_t *a = json_array();
    size_t n = json_array_size(v);
    for (size_t i = 0; i < n; i++) {
        const json_t *s = json_array_get(v, reversed ? n - 1 - i : i);
        const json_t *t = json_is_object(s) ? json_object_get(s, "task") : NULL;
        json_array_append_new(a, json_is_string(t) ? jref(t) : json_null());
    }
    return a;
}

static void add_names(struct dfields *f, const char *key, const char *label, const json_t *v,
                      bool reversed, const char *meaning)
{
    json_t *a = sig_names(v, reversed);
    add_json(f, key, label, a, meaning);
    json_decref(a);
}

static void notes(const struct decoded *d, const struct view *v, struct dfields *f)
{
    unsigned df = d->env->defaulted;
    if (df & ED_ID)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         "id: a name-based UUID of the message (no id that is a string)");
    if (df & ED_VERSION)
        dfields_add_line(f, DF_DEFAULTS, DF_DIM, "version: 1 (a Celery task has no version)");
    if (df & ED_CORRELATION)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         v->protocol == 1 ? "correlation: the id (protocol 1 has no root_id)"
                                          : "correlation: the id (root_id absent, void or not "
                                            "a string), as Celery defaults it");
    if (df & ED_ATTEMPT)
        dfields_add_line(f, DF_DEFAULTS, DF_WARN,
                         "attempt: the broker's death count (retries absent or not an integer)");
    if (df & ED_FIRST_SEEN)
        dfields_add_line(f, DF_DEFAULTS, DF_DIM,
                         d->death.has_times
                             ? "first seen: the first death's time (Celery writes no sent time)"
                             : "first seen: when it was read (Celery writes no sent time)");
    struct bytes parent = tb(&v->parent);
    if (v->parent.has && v->parent.n && bytes_eq(&parent, &d->env->id))
        dfields_add_line(f, DF_DEFAULTS, DF_DIM,
                         "causation: none (parent_id is the task itself: retry() sends it from "
                         "inside the task)");
    dfields_add_line(f, DF_DEATH, DF_DIM,
                     "Celery writes no exception into the message: look the task id up in the "
                     "result backend, the worker's log or Flower");
}

static void fields(const struct decoded *d, int64_t now_ms, struct dfields *f)
{
    (void)now_ms;
    const struct message *m = d->msg;
    const struct htable *h = m->headers;
    struct view v;
    view_read(m, m->body.data ? (const void *)m->body.data : "", m->body.len, &v);
    notes(d, &v, f);
    bool p2 = v.protocol == 2;
    dfields_add_int(f, "protocol", "protocol", v.protocol,
                    p2 ? "task protocol 2: the task in the headers"
                       : "task protocol 1: everything in the body");
    add_txt(f, "task", "task", &v.task, "the registered task name");
    add_txt(f, "root_id", "root_id", &v.root, "the first task of the workflow");
    add_txt(f, "parent_id", "parent_id", &v.parent, "the task that sent this one");
    add_txt(f, "group", "group", &v.group, "the group it belongs to");
    dfields_add_int_opt(f, "group_index", "group_index", v.has_group_index, v.group_index,
                        "its place in the group");
    dfields_add_int_opt(f, "retries", "retries", v.has_retries, v.retries, "retry() calls so far");
    dfields_add_int(f, "death_count", "deaths", d->death.total,
                    "times the broker dead-lettered it (x-death)");
    add_txt(f, "eta", "eta", &v.eta, "not to run before");
    add_time(f, "eta_ms", "eta (UTC)", &v.eta, NULL);
    add_txt(f, "expires", "expires", &v.expires, "a worker revokes it after this, unrun");
    add_time(f, "expires_ms", "expires (UTC)", &v.expires, NULL);
    const struct hval *tl = p2 ? htable_get(h, "timelimit") : NULL;
    const json_t *jtl = p2 ? NULL : json_object_get(v.src, "timelimit");
    json_t *hard = NULL, *soft = NULL;
    if (tl && tl->kind == HV_ARRAY && tl->v.arr.n == 2) {
        hard = num_json_h(&tl->v.arr.items[0]);
        soft = num_json_h(&tl->v.arr.items[1]);
    } else if (json_is_array(jtl) && json_array_size(jtl) == 2) {
        hard = json_is_number(json_array_get(jtl, 0)) ? jref(json_array_get(jtl, 0)) : NULL;
        soft = json_is_number(json_array_get(jtl, 1)) ? jref(json_array_get(jtl, 1)) : NULL;
    }
    add_json(f, "time_limit", "time_limit", hard, "seconds before the worker kills it");
    add_json(f, "soft_time_limit", "soft_time_limit", soft,
             "seconds before SoftTimeLimitExceeded is raised in it");
    json_decref(hard);
    json_decref(soft);
    add_txt(f, "argsrepr", "argsrepr", &v.argsrepr, "repr of the arguments, as sent");
    add_txt(f, "kwargsrepr", "kwargsrepr", &v.kwargsrepr, "repr of the keyword arguments");
    add_txt(f, "shadow", "shadow", &v.shadow, "the name shown in logs instead of the task's");
    add_txt(f, "lang", "lang", &v.lang, "the sender's language");
    const struct hval *ir = p2 ? htable_get(h, "ignore_result") : NULL;
    if (ir && ir->kind == HV_BOOL)
        add_json(f, "ignore_result", "ignore_result", ir->v.b ? json_true() : json_false(),
                 "no result is stored");
    int64_t nesting;
    if (p2 && hval_integer(htable_get(h, "replaced_task_nesting"), &nesting))
        dfields_add_int(f, "replaced_task_nesting", "replaced_task_nesting", nesting,
                        "times it was replaced (Task.replace)");
    /* The body: [args, kwargs, embed] (protocol 2), or the protocol-1 object. */
    const json_t *b = v.body, *args = NULL, *kwargs = NULL, *embed = NULL;
    if (p2 && json_is_array(b)) {
        args = json_array_get(b, 0);
        kwargs = json_array_get(b, 1);
        embed = json_array_get(b, 2);
    } else if (json_is_object(b)) {
        args = json_object_get(b, "args");
        kwargs = json_object_get(b, "kwargs");
        embed = b;
    }
    add_json(f, "args", "args", args, "the positional arguments");
    add_json(f, "kwargs", "kwargs", kwargs, "the keyword arguments");
    if (!json_is_object(embed))
        embed = NULL;
    add_names(f, "callbacks", "callbacks", json_object_get(embed, "callbacks"), false,
              "tasks run with its result (link)");
    add_names(f, "errbacks", "errbacks", json_object_get(embed, "errbacks"), false,
              "tasks run on its failure (link_error)");
    add_names(f, "chain", "chain", json_object_get(embed, "chain"), true,
              "the chain's next tasks, in the order they run");
    const json_t *chord = json_object_get(embed, "chord");
    const json_t *ct = json_is_object(chord) ? json_object_get(chord, "task") : NULL;
    if (json_is_string(ct))
        dfields_add(f, "chord", "chord", json_string_value(ct), json_string_length(ct),
                    "the chord's body, run when the group is done");
    else
        dfields_adds(f, "chord", "chord", NULL, "the chord's body, run when the group is done");
    view_free(&v);
}

/* ---- replay and re-issue ------------------------------------------------------------- */

static void pyamqp_value(struct hval *v)
{
    int64_t i;
    switch (v->kind) {
    case HV_I8:
    case HV_I16:
    case HV_I32:
    case HV_I64:
    case HV_U8:
    case HV_U16:
    case HV_U32:
    case HV_U64:
        if (hval_integer(v, &i) && i >= -2147483647 && i <= 2147483647) {
            v->kind = HV_I32;
            v->v.i = i;
        } else if (hkind_is_signed(v->kind)) {
            /* py-amqp packs L as a signed 64-bit: the same bits */
            uint64_t u = (uint64_t)v->v.i;
            v->kind = HV_U64;
            v->v.u = u;
        } else {
            v->kind = HV_U64;
        }
        break;
    case HV_F32: {
        double dv = (double)v->v.f32;
        v->kind = HV_F64;
        v->v.f64 = dv;
        break;
    }
    case HV_BYTES:
        v->kind = HV_STRING;
        break;
    case HV_ARRAY:
        for (size_t k = 0; k < v->v.arr.n; k++)
            pyamqp_value(&v->v.arr.items[k]);
        break;
    case HV_TABLE:
        celery_pyamqp_kinds(v->v.tab);
        break;
    default:
        break;
    }
}

void celery_pyamqp_kinds(struct htable *t)
{
    for (size_t i = 0; t && i < t->n; i++)
        pyamqp_value(&t->e[i].val);
}

static enum status restamp(const struct decoded *d, const struct restamp_opts *o,
                           const struct bytes *dlq, struct outgoing *out, struct error *err)
{
    (void)dlq;
    bool p2 = htable_get(d->msg->headers, "task") != NULL;
    if (o->mode == RESTAMP_REISSUE && !p2)
        return error_set(err, ST_EUNSUPPORTED,
                         "a protocol-1 Celery task carries its id in the body: it can be "
                         "replayed, not re-issued");
    enum status st =
        rk_target_source(d, out, "it has no x-death history naming the queue it died in", err);
    if (st != ST_OK)
        return st;
    const struct envelope *e = d->env;
    if (o->mode == RESTAMP_REPLAY) {
        /* Celery's move: every header, the broker's death history included. */
        rk_headers_keep_broker(d, out);
    } else {
        /* out->headers come without the broker's headers, as Task.retry() strips them. */
        rk_header_put_text(out->headers, "id", out->id.data, out->id.len);
        props_set_string(&out->props, PROP_correlation_id, out->id.data, out->id.len);
        rk_header_put_text(out->headers, "parent_id", e->id.data, e->id.len);
        const struct hval *root = htable_get(out->headers, "root_id");
        if (!root || root->kind != HV_STRING || !root->v.s.len)
            rk_header_put_text(out->headers, "root_id", e->correlation_id.data,
                               e->correlation_id.len);
        rk_header_put(out->headers, "retries", hval_int(HV_I32, 0));
    }
    /* kombu's Producer.publish sends priority 0 when none is given (captured: Celery's move of a
     * dead letter without one). */
    if (!props_has(&out->props, PROP_priority)) {
        out->props.priority = 0;
        out->props.present |= 1u << PROP_priority;
    }
    /* What py-amqp writes back (before the edits: a kind given in --with stays). */
    celery_pyamqp_kinds(out->headers);
    static const struct rk_field map[] = {
        {EF_ID, "id", PROP_correlation_id}, {EF_TYPE, "task", -1},
        {EF_CORRELATION, "root_id", -1},    {EF_CAUSATION, "parent_id", -1},
        {EF_ATTEMPT, "retries", -1},        {EF_ORIGIN, "origin", -1},
    };
    return rk_apply_changes(d, o, map, p2 ? sizeof map / sizeof *map : 0, out, err);
}

const struct dialect_ops dialect_celery = {
    .name = "celery",
    .title = "Celery",
    .summary = "Celery task dead-lettered by the broker (task, id headers; no error written)",
    .section = "Celery task",
    .recognise = recognise,
    .ceiling = 80,
    .decode = decode,
    .fields = fields,
    .restamp = restamp,
    .replay_rule = "as Celery's move: every header kept, x-death included (py-amqp's kinds), "
                   "to the first death's exchange and routing key; a re-issue gets a new task "
                   "id, parent_id = the old id, retries 0, no x-death",
};
