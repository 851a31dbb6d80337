/*
 * detail_headers: the sections read off the headers and properties — the pattern headers
 * explained (routing slip, route, reply-to, acemq-error, traceparent, tracestate), the AMQP
 * properties and delivery, and every header with its AMQP kind — and the parsers of the two
 * structured pattern headers.
 */
#include "detail.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyset.h"
#include "sanitize.h"

/* ---- traceparent ------------------------------------------------------------------------ */

static bool lower_hex(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
            return false;
    return true;
}

static bool all_zero(const unsigned char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != '0')
            return false;
    return true;
}

static unsigned hex_val(unsigned char c)
{
    return c <= '9' ? (unsigned)(c - '0') : (unsigned)(c - 'a' + 10);
}

static bool tp_fail(struct traceparent *out, const char *why)
{
    snprintf(out->why, sizeof out->why, "%s", why);
    out->valid = false;
    return false;
}

bool detail_traceparent_parse(const void *data, size_t n, struct traceparent *out)
{
    const unsigned char *s = data;
    memset(out, 0, sizeof *out);
    if (!s || n < 55) {
        snprintf(out->why, sizeof out->why, "%zu characters, 55 expected", n);
        return false;
    }
    if (s[2] != '-' || s[35] != '-' || s[52] != '-')
        return tp_fail(out, "the fields are not separated by '-' at 2, 35 and 52");
    if (!lower_hex(s, 2))
        return tp_fail(out, "the version is not two lowercase hex digits");
    if (s[0] == 'f' && s[1] == 'f')
        return tp_fail(out, "version ff is forbidden");
    if (!lower_hex(s + 3, 32))
        return tp_fail(out, "the trace id is not 32 lowercase hex digits");
    if (all_zero(s + 3, 32))
        return tp_fail(out, "the trace id is all zeros");
    if (!lower_hex(s + 36, 16))
        return tp_fail(out, "the parent id is not 16 lowercase hex digits");
    if (all_zero(s + 36, 16))
        return tp_fail(out, "the parent id is all zeros");
    if (!lower_hex(s + 53, 2))
        return tp_fail(out, "the flags are not two lowercase hex digits");
    bool v00 = s[0] == '0' && s[1] == '0';
    if (v00 && n != 55)
        return tp_fail(out, "version 00 is exactly 55 characters");
    /* A later version may add fields after a '-'. */
    if (!v00 && n > 55 && s[55] != '-')
        return tp_fail(out, "the flags are followed by something other than '-'");
    memcpy(out->version, s, 2);
    memcpy(out->trace_id, s + 3, 32);
    memcpy(out->parent_id, s + 36, 16);
    memcpy(out->flags, s + 53, 2);
    out->sampled = hex_val(s[54]) & 1u;
    out->valid = true;
    return true;
}

/* ---- routing slip ----------------------------------------------------------------------- */

static struct bytes member_text(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (json_is_string(v))
        return bytes_dup(json_string_value(v), json_string_length(v));
    if (v && !json_is_null(v)) {
        char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
        struct bytes b = bytes_from_cstr(s ? s : "");
        free(s);
        return b;
    }
    return bytes_dup("", 0);
}

static bool read_steps(const json_t *arr, const char *name, struct slip_step **out, size_t *n,
                       struct routing_slip *slip)
{
    if (!arr)
        return true;
    if (!json_is_array(arr)) {
        snprintf(slip->why, sizeof slip->why, "\"%s\" is not an array", name);
        return false;
    }
    size_t count = json_array_size(arr);
    *out = xcalloc(count ? count : 1, sizeof **out);
    for (size_t i = 0; i < count; i++) {
        const json_t *it = json_array_get(arr, i);
        struct slip_step *st = &(*out)[(*n)++];
        if (!json_is_object(it)) {
            snprintf(slip->why, sizeof slip->why, "%s[%zu] is not an object", name, i);
            return false;
        }
        st->name = member_text(it, "name");
        st->exchange = member_text(it, "exchange");
        st->routing_key = member_text(it, "routingKey");
        st->completed_at = member_text(it, "completedAt");
        const json_t *c = json_object_get(it, "completedAt");
        int64_t ms;
        if (json_is_integer(c)) {
            st->has_completed_ms = true;
            st->completed_ms = (int64_t)json_integer_value(c);
        } else if (json_is_string(c) &&
                   time_parse_rfc3339(json_string_value(c), json_string_length(c), &ms)) {
            st->has_completed_ms = true;
            st->completed_ms = ms;
        }
    }
    return true;
}

bool detail_slip_parse(const void *s, size_t n, struct routing_slip *out)
{
    memset(out, 0, sizeof *out);
    json_error_t err;
    json_t *root = json_loadb(s ? s : "", n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    if (!root) {
        snprintf(out->why, sizeof out->why, "not JSON: %s (column %d)", err.text, err.column);
        return false;
    }
    bool ok = false;
    const json_t *steps = json_object_get(root, "steps"), *done = json_object_get(root, "done");
    if (!json_is_object(root))
        snprintf(out->why, sizeof out->why, "JSON but not an object");
    else if (!steps && !done)
        snprintf(out->why, sizeof out->why, "an object with neither \"steps\" nor \"done\"");
    else
        ok = read_steps(steps, "steps", &out->steps, &out->n_steps, out) &&
             read_steps(done, "done", &out->done, &out->n_done, out);
    json_decref(root);
    out->valid = ok;
    return ok;
}

static void steps_free(struct slip_step *st, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        bytes_free(&st[i].name);
        bytes_free(&st[i].exchange);
        bytes_free(&st[i].routing_key);
        bytes_free(&st[i].completed_at);
    }
    free(st);
}

void detail_slip_free(struct routing_slip *slip)
{
    steps_free(slip->steps, slip->n_steps);
    steps_free(slip->done, slip->n_done);
    memset(slip, 0, sizeof *slip);
}

/* ---- the pattern headers ---------------------------------------------------------------- */

#define PAT_W 12

/* The header's text, or NULL (with a warning line) when it is not a string or bytes. */
static const struct bytes *pattern_text(struct detail_doc *doc, const char *label,
                                        const struct hval *v)
{
    const struct bytes *b = hval_str(v);
    if (!b) {
        char kind[48];
        snprintf(kind, sizeof kind, "a header of kind %s, not a string", hkind_name(v->kind));
        detail_add_field(doc, 2, PAT_W, label, kind, DS_WARN, NULL);
    }
    return b;
}

static void slip_step_line(struct detail_doc *doc, const struct slip_step *st, const char *mark,
                           enum detail_style style, const char *state, int64_t now_ms)
{
    struct strbuf label, value;
    sb_init(&label);
    sb_init(&value);
    sb_addf(&label, "%s ", mark);
    if (st->name.len)
        sb_add(&label, st->name.data, st->name.len);
    else
        sb_adds(&label, "(unnamed)");
    sb_adds(&value, "exchange ");
    if (st->exchange.len)
        sb_add(&value, st->exchange.data, st->exchange.len);
    else
        sb_adds(&value, "(default)");
    sb_adds(&value, ", key ");
    sb_add(&value, st->routing_key.data ? (const void *)st->routing_key.data : "",
           st->routing_key.len);
    char when[DETAIL_TIME_MAX + 16] = "";
    if (st->has_completed_ms) {
        char t[DETAIL_TIME_MAX];
        detail_time(st->completed_ms, now_ms, t);
        snprintf(when, sizeof when, "%s %s", state, t);
    }
    struct detail_kv kv = {
        .label = label.buf,
        .label_len = label.len,
        .label_w = 16,
        .value = value.buf,
        .value_len = value.len,
        .style = style,
        .meaning = when[0] ? when : state,
    };
    detail_add_kv(doc, 4, &kv);
    sb_free(&label);
    sb_free(&value);
}

static void routing_slip(struct detail_doc *doc, const struct hval *v, int64_t now_ms)
{
    const struct bytes *b = pattern_text(doc, "routing slip", v);
    if (!b)
        return;
    struct routing_slip slip;
    if (!detail_slip_parse(b->data, b->len, &slip)) {
        struct strbuf sb;
        sb_init(&sb);
        sb_addf(&sb, "not a routing slip: %s", slip.why);
        detail_add_fieldb(doc, 2, PAT_W, "routing slip", sb.buf, sb.len, DS_WARN, NULL);
        detail_add_fieldb(doc, 2, PAT_W, "", b->data, b->len, DS_DIM, NULL);
        sb_free(&sb);
        detail_slip_free(&slip);
        return;
    }
    struct strbuf sb;
    sb_init(&sb);
    sb_addf(&sb, "%zu done, %zu to go", slip.n_done, slip.n_steps);
    if (slip.n_steps) {
        sb_adds(&sb, "; next: ");
        if (slip.steps[0].name.len)
            sb_add(&sb, slip.steps[0].name.data, slip.steps[0].name.len);
        else
            sb_adds(&sb, "(unnamed)");
    } else {
        sb_adds(&sb, "; finished");
    }
    detail_add_fieldb(doc, 2, PAT_W, "routing slip", sb.buf, sb.len, DS_VALUE,
                      "acemq-routing-slip: the steps it travels");
    sb_free(&sb);
    for (size_t i = 0; i < slip.n_done; i++)
        slip_step_line(doc, &slip.done[i], detail_glyph_done(doc), DS_DIM, "done", now_ms);
    for (size_t i = 0; i < slip.n_steps; i++)
        slip_step_line(doc, &slip.steps[i], i == 0 ? detail_glyph_arrow(doc) : " ",
                       i == 0 ? DS_ACCENT : DS_VALUE, i == 0 ? "next" : "pending", now_ms);
    detail_slip_free(&slip);
}

static void route(struct detail_doc *doc, const struct htable *h)
{
    const struct hval *rv = htable_get(h, ACEMQ_ROUTE), *pv = htable_get(h, ACEMQ_ROUTE_POSITION),
                      *iv = htable_get(h, ACEMQ_ROUTE_ID);
    int64_t pos = -1;
    bool has_pos = pv && hval_as_int64_lenient(pv, &pos);
    /* Split the pipeline on commas; mark where it is. */
    struct bytes steps[64];
    size_t n = 0;
    const struct bytes *rb = rv ? hval_str(rv) : NULL;
    if (rv && !rb) {
        pattern_text(doc, "route", rv);
    } else if (rb) {
        struct strbuf sb;
        sb_init(&sb);
        size_t start = 0;
        for (size_t i = 0; i <= rb->len; i++) {
            if (i < rb->len && rb->data[i] != ',')
                continue;
            if (n < sizeof steps / sizeof *steps)
                steps[n++] = (struct bytes){i - start, rb->data + start};
            start = i + 1;
        }
        for (size_t i = 0; i < n; i++) {
            if (i)
                sb_addf(&sb, " %s ", detail_glyph_arrow(doc));
            bool here = has_pos && pos >= 0 && (size_t)pos == i;
            if (here)
                sb_addc(&sb, '[');
            sb_add(&sb, steps[i].data, steps[i].len);
            if (here)
                sb_addc(&sb, ']');
        }
        detail_add_fieldb(doc, 2, PAT_W, "route", sb.buf, sb.len, DS_VALUE,
                          "a declared pipeline (x-acemq-route)");
        sb_free(&sb);
    } else {
        detail_add_field(doc, 2, PAT_W, "route", "(absent)", DS_WARN,
                         "x-acemq-route is missing: the three go together");
    }
    if (pv && !has_pos) {
        struct strbuf sb;
        sb_init(&sb);
        hval_format_scalar(pv, &sb);
        detail_add_fieldb(doc, 4, 10, "position", sb.buf, sb.len, DS_WARN, "not a number");
        sb_free(&sb);
    } else if (pv) {
        char at[160];
        if (pos >= 0 && (size_t)pos < n)
            snprintf(at, sizeof at, "%lld: step %lld of %zu", (long long)pos, (long long)pos + 1,
                     n);
        else if (rb && pos >= 0 && (size_t)pos == n)
            snprintf(at, sizeof at, "%lld: past the last step", (long long)pos);
        else
            snprintf(at, sizeof at, "%lld: outside the route (%zu steps)", (long long)pos, n);
        bool bad = !(pos >= 0 && (size_t)pos <= n);
        detail_add_field(doc, 4, 10, "position", at, bad ? DS_WARN : DS_VALUE,
                         "x-acemq-route-position, from 0");
        if (pos >= 0 && (size_t)pos < n)
            detail_add_fieldb(doc, 4, 10, "at", steps[pos].data, steps[pos].len, DS_ACCENT,
                              "the step it is at");
    }
    if (iv) {
        struct strbuf sb;
        sb_init(&sb);
        hval_format_scalar(iv, &sb);
        detail_add_fieldb(doc, 4, 10, "route id", sb.buf, sb.len, DS_ACCENT, "x-acemq-route-id");
        sb_free(&sb);
    }
}

static void traceparent(struct detail_doc *doc, const struct hval *v)
{
    const struct bytes *b = pattern_text(doc, "traceparent", v);
    if (!b)
        return;
    struct traceparent tp;
    if (!detail_traceparent_parse(b->data, b->len, &tp)) {
        char why[128];
        snprintf(why, sizeof why, "not W3C: %s", tp.why);
        detail_add_fieldb(doc, 2, PAT_W, "traceparent", b->data, b->len, DS_WARN, why);
        return;
    }
    detail_add_fieldb(doc, 2, PAT_W, "traceparent", b->data, b->len, DS_VALUE, "W3C trace context");
    detail_add_field(doc, 4, 10, "version", tp.version, DS_VALUE, NULL);
    detail_add_field(doc, 4, 10, "trace id", tp.trace_id, DS_ACCENT, "the whole distributed trace");
    detail_add_field(doc, 4, 10, "parent id", tp.parent_id, DS_ACCENT, "the span that sent it");
    detail_add_field(doc, 4, 10, "flags", tp.flags, DS_VALUE,
                     tp.sampled ? "sampled" : "not sampled");
}

static void tracestate(struct detail_doc *doc, const struct hval *v)
{
    const struct bytes *b = pattern_text(doc, "tracestate", v);
    if (!b)
        return;
    size_t members = 0;
    bool in = false;
    for (size_t i = 0; i < b->len; i++) {
        unsigned char c = b->data[i];
        if (c == ',') {
            in = false;
        } else if (c != ' ' && c != '\t' && !in) {
            in = true;
            members++;
        }
    }
    char m[64];
    snprintf(m, sizeof m, "%zu vendor entr%s (W3C tracestate)", members,
             members == 1 ? "y" : "ies");
    detail_add_fieldb(doc, 2, PAT_W, "tracestate", b->data, b->len, DS_VALUE, m);
}

void detail_render_patterns(struct detail_doc *doc, const struct message *m, int64_t now_ms)
{
    const struct htable *h = m->headers;
    const struct hval *slip = htable_get(h, "acemq-routing-slip");
    const struct hval *reply = htable_get(h, "acemq-reply-to");
    const struct hval *err = htable_get(h, "acemq-error");
    const struct hval *tp = htable_get(h, "traceparent"), *ts = htable_get(h, "tracestate");
    bool has_route = htable_get(h, ACEMQ_ROUTE) || htable_get(h, ACEMQ_ROUTE_POSITION) ||
                     htable_get(h, ACEMQ_ROUTE_ID);
    if (!slip && !reply && !err && !tp && !ts && !has_route)
        return;
    detail_heading(doc, DSEC_PATTERNS);
    if (slip)
        routing_slip(doc, slip, now_ms);
    if (has_route)
        route(doc, h);
    const struct bytes *b;
    if (reply && (b = pattern_text(doc, "reply to", reply)))
        detail_add_fieldb(doc, 2, PAT_W, "reply to", b->data, b->len, DS_ACCENT,
                          "where the responder sends its reply (acemq-reply-to)");
    if (err && (b = pattern_text(doc, "acemq-error", err)))
        detail_add_fieldb(doc, 2, PAT_W, "acemq-error", b->data, b->len, DS_ERROR,
                          "a request/reply failure the responder sent back");
    if (tp)
        traceparent(doc, tp);
    if (ts)
        tracestate(doc, ts);
}

/* ---- properties and delivery ------------------------------------------------------------ */

#define PROP_W 16

void detail_render_properties(struct detail_doc *doc, const struct message *m)
{
    const struct props *p = &m->props;
    char buf[64];
    detail_heading(doc, DSEC_PROPERTIES);
    /* In the order of the AMQP basic properties. */
    static const struct {
        enum prop_flag f;
        const char *meaning;
    } order[] = {
        {PROP_content_type, NULL},
        {PROP_content_encoding, NULL},
        {PROP_delivery_mode, NULL},
        {PROP_priority, "0 to 255; the queue's max-priority caps it"},
        {PROP_correlation_id, NULL},
        {PROP_reply_to, "where replies go"},
        {PROP_expiration, "per-message TTL, in milliseconds"},
        {PROP_message_id, NULL},
        {PROP_timestamp, NULL},
        {PROP_type, NULL},
        {PROP_user_id, "checked by the broker against the publisher's login"},
        {PROP_app_id, NULL},
        {PROP_cluster_id, "deprecated in AMQP 0-9-1"},
    };
    bool any = false;
    for (size_t i = 0; i < sizeof order / sizeof *order; i++) {
        enum prop_flag f = order[i].f;
        if (!props_has(p, f))
            continue;
        any = true;
        if (f == PROP_delivery_mode) {
            snprintf(buf, sizeof buf, "%u", (unsigned)p->delivery_mode);
            bool known = p->delivery_mode == 1 || p->delivery_mode == 2;
            detail_add_field(doc, 2, PROP_W, prop_name(f), buf, known ? DS_VALUE : DS_WARN,
                             p->delivery_mode == 2   ? "persistent"
                             : p->delivery_mode == 1 ? "transient (not persistent)"
                                                     : "neither 1 (transient) nor 2 (persistent)");
        } else if (f == PROP_priority) {
            snprintf(buf, sizeof buf, "%u", (unsigned)p->priority);
            detail_add_field(doc, 2, PROP_W, prop_name(f), buf, DS_VALUE, order[i].meaning);
        } else if (f == PROP_timestamp) {
            char t[32] = "";
            if (p->timestamp <= (uint64_t)INT64_MAX / 1000)
                time_format_rfc3339((int64_t)p->timestamp * 1000, false, t);
            snprintf(buf, sizeof buf, "%llu%s%s%s", (unsigned long long)p->timestamp,
                     t[0] ? " (" : "", t, t[0] ? ")" : "");
            detail_add_field(doc, 2, PROP_W, prop_name(f), buf, DS_ACCENT,
                             "seconds since the epoch");
        } else {
            const struct bytes *b = props_string(p, f);
            detail_add_fieldb(doc, 2, PROP_W, prop_name(f), b ? b->data : NULL, b ? b->len : 0,
                              f == PROP_message_id || f == PROP_correlation_id ? DS_ACCENT
                                                                               : DS_VALUE,
                              order[i].meaning);
        }
    }
    if (!any)
        detail_add_text(doc, 2, DS_DIM, "(no properties set)", 19);
    size_t nh = m->headers ? m->headers->n : 0;
    if (nh)
        snprintf(buf, sizeof buf, "%zu entr%s (below)", nh, nh == 1 ? "y" : "ies");
    else
        snprintf(buf, sizeof buf, "set, empty");
    detail_add_field(doc, 2, PROP_W, "headers", m->headers_present ? buf : "(not set)",
                     m->headers_present ? DS_VALUE : DS_DIM, NULL);

    detail_add_text(doc, 2, DS_LABEL, "delivery", 8);
    detail_add_fieldb(doc, 4, PROP_W - 2, "queue", m->queue.data, m->queue.len, DS_ACCENT,
                      "the queue it was read from");
    if (m->exchange.len)
        detail_add_fieldb(doc, 4, PROP_W - 2, "exchange", m->exchange.data, m->exchange.len,
                          DS_VALUE, "the exchange it was last published to");
    else
        detail_add_field(doc, 4, PROP_W - 2, "exchange", "(default)", DS_VALUE,
                         "the exchange it was last published to");
    detail_add_fieldb(doc, 4, PROP_W - 2, "routing key", m->routing_key.data, m->routing_key.len,
                      DS_VALUE, "the key it was last published with");
    detail_add_field(doc, 4, PROP_W - 2, "redelivered", m->redelivered ? "yes" : "no",
                     m->redelivered ? DS_WARN : DS_VALUE,
                     m->redelivered ? "delivered before and not acked" : NULL);
    if (m->fetched_at_ms) {
        time_format_rfc3339(m->fetched_at_ms, false, buf);
        detail_add_field(doc, 4, PROP_W - 2, "fetched at", buf, DS_ACCENT, "when dlqx read it");
    }
    if (m->has_stream_offset) {
        snprintf(buf, sizeof buf, "%llu", (unsigned long long)m->stream_offset);
        detail_add_field(doc, 4, PROP_W - 2, "stream offset", buf, DS_VALUE,
                         "its place in the stream");
    }
}

/* ---- headers ---------------------------------------------------------------------------- */

#define HDR_DEPTH_MAX 10
#define HDR_ITEMS_MAX 100
#define HDR_TAG_W 11

/* The label width for a table's names: the widest, within bounds. */
static int names_width(const struct htable *t)
{
    size_t w = 6;
    struct strbuf sb;
    sb_init(&sb);
    for (size_t i = 0; t && i < t->n; i++) {
        sb_reset(&sb);
        sanitize_fit(&sb, t->e[i].key.data, t->e[i].key.len, 28, 0);
        size_t k = sanitize_width(sb.buf ? sb.buf : "", sb.len);
        if (k > w)
            w = k;
    }
    sb_free(&sb);
    return (int)w;
}

static void hval_lines(struct detail_doc *doc, int indent, int name_w, const void *name,
                       size_t name_len, const struct hval *v, int depth)
{
    char tag[24];
    snprintf(tag, sizeof tag, "(%s)", hkind_name(v->kind));
    struct strbuf sb;
    sb_init(&sb);
    hval_format_scalar(v, &sb);
    bool container = v->kind == HV_ARRAY || v->kind == HV_TABLE;
    struct detail_kv kv = {
        .label = name,
        .label_len = name_len,
        .label_w = name_w,
        .tag = tag,
        .tag_w = HDR_TAG_W,
        .value = sb.buf,
        .value_len = sb.len,
        .style = container ? DS_DIM : DS_VALUE,
    };
    detail_add_kv(doc, indent, &kv);
    sb_free(&sb);
    if (!container)
        return;
    size_t n = v->kind == HV_ARRAY ? v->v.arr.n : v->v.tab ? v->v.tab->n : 0;
    if (n && depth >= HDR_DEPTH_MAX) {
        detail_add_text(doc, indent + 2, DS_DIM, "(nested deeper: not shown)", 26);
        return;
    }
    int w = v->kind == HV_TABLE ? names_width(v->v.tab) : 4;
    for (size_t i = 0; i < n && i < HDR_ITEMS_MAX; i++) {
        if (v->kind == HV_ARRAY) {
            char idx[24];
            int k = snprintf(idx, sizeof idx, "[%zu]", i);
            hval_lines(doc, indent + 2, w, idx, (size_t)k, &v->v.arr.items[i], depth + 1);
        } else {
            const struct hentry *e = &v->v.tab->e[i];
            hval_lines(doc, indent + 2, w, e->key.data, e->key.len, &e->val, depth + 1);
        }
    }
    if (n > HDR_ITEMS_MAX)
        detail_add_textf(doc, indent + 2, DS_DIM, "%s %zu more", detail_glyph_more(doc),
                         n - HDR_ITEMS_MAX);
}

enum hdr_group { HG_APP, HG_ACEMQ, HG_UNKNOWN, HG_BROKER };

/* unknown: the names of the envelope's unknown x-acemq-* headers (a keyset, so that a table
 * of thousands of them is grouped in linear time). */
static enum hdr_group group_of(const struct keyset *unknown, const struct bytes *k)
{
    if (death_broker_header(k->data, k->len))
        return HG_BROKER;
    if (!acemq_reserved_name(k->data, k->len))
        return HG_APP;
    return keyset_has(unknown, k->data, k->len) ? HG_UNKNOWN : HG_ACEMQ;
}

void detail_render_headers(struct detail_doc *doc, const struct decoded *d)
{
    static const char *const titles[] = {
        [HG_APP] = "application headers",
        [HG_ACEMQ] = "AceMQ envelope headers, as sent",
        [HG_UNKNOWN] = "unknown x-acemq-* headers",
        [HG_BROKER] = "the broker's death headers, raw",
    };
    static const char *const notes[] = {
        [HG_APP] = NULL,
        [HG_ACEMQ] = NULL,
        [HG_UNKNOWN] = "a newer AceMQ library's headers: kept and written back on replay",
        [HG_BROKER] = "never sent back on replay",
    };
    const struct htable *h = d->msg->headers;
    detail_heading(doc, DSEC_HEADERS);
    if (!h || !h->n) {
        detail_add_text(doc, 2, DS_DIM, "(no headers)", 12);
        return;
    }
    const struct htable *u = d->env->reserved_unknown;
    struct keyset unknown;
    keyset_init(&unknown, u ? u->n : 0);
    for (size_t i = 0; u && i < u->n; i++)
        keyset_add(&unknown, u->e[i].key.data, u->e[i].key.len);
    for (int g = HG_APP; g <= HG_BROKER; g++) {
        size_t count = 0;
        struct htable sub = {0, 0, NULL, false, false};
        for (size_t i = 0; i < h->n; i++)
            if (group_of(&unknown, &h->e[i].key) == (enum hdr_group)g)
                count++;
        if (!count)
            continue;
        detail_add_textf(doc, 2, DS_LABEL, "%s (%zu)", titles[g], count);
        if (notes[g])
            detail_add_text(doc, 4, DS_DIM, notes[g], strlen(notes[g]));
        /* The label width over this group's names only. */
        sub.e = xcalloc(count, sizeof *sub.e);
        for (size_t i = 0; i < h->n; i++)
            if (group_of(&unknown, &h->e[i].key) == (enum hdr_group)g)
                sub.e[sub.n++] = h->e[i];
        int w = names_width(&sub);
        for (size_t i = 0; i < sub.n; i++)
            hval_lines(doc, 4, w, sub.e[i].key.data, sub.e[i].key.len, &sub.e[i].val, 0);
        free(sub.e); /* the entries are borrowed from h */
    }
    keyset_free(&unknown);
}
