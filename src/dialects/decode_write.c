/*
 * decode_write: the `dlqx decode` record written straight into a buffer — the bytes that
 * dumping decoded_to_json's tree gives, without building the tree (decode spent most of its
 * time building it). Strings, integers, booleans and the record's own layout are written
 * here; the properties and headers by the snapshot writer's direct paths; the parts that are
 * jansson's own (the real age_s, the body's parsed JSON document, the dialect's own section)
 * are built as small trees and dumped by json_out_fast. Any doubt — a static string that is
 * not UTF-8 (where jansson would leave the key out), a flag it does not know, a part
 * json_out_fast declines — and it declines the whole record: the caller dumps
 * decoded_to_json, so the output is jansson's by construction. tests/test_decode_write.c
 * holds the two to each other.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "hval_json.h"
#include "json_out.h"
#include "keyset.h"
#include "snapshot.h"
#include "util.h"

#define KEY(out, lit) sb_add((out), lit, sizeof lit - 1)

/* bytes_to_json's value: a string when UTF-8, else {"base64":"…"}. */
void decode_write_text(struct strbuf *out, const void *data, size_t len)
{
    if (json_out_string(out, len ? data : "", len))
        return;
    char *b64 = base64_encode(data, len);
    KEY(out, "{\"base64\":\"");
    sb_adds(out, b64);
    KEY(out, "\"}");
    free(b64);
}

void decode_write_bytes(struct strbuf *out, const struct bytes *b)
{
    decode_write_text(out, b->data ? (const void *)b->data : "", b->len);
}

void decode_write_bytes_or_null(struct strbuf *out, const struct bytes *b)
{
    if (b && b->len)
        decode_write_bytes(out, b);
    else
        KEY(out, "null");
}

/* json_string(s): false when s is not UTF-8 (jansson gives NULL and the key is left out). */
static bool w_cstr(struct strbuf *out, const char *s)
{
    return json_out_string(out, s, strlen(s));
}

static void w_int(struct strbuf *out, long long v)
{
    json_out_integer(out, v);
}

static void w_bool(struct strbuf *out, bool b)
{
    if (b)
        KEY(out, "true");
    else
        KEY(out, "false");
}

static void w_time(struct strbuf *out, int64_t ms)
{
    char buf[32];
    time_format_rfc3339(ms, false, buf);
    sb_addc(out, '"');
    sb_adds(out, buf);
    sb_addc(out, '"');
}

/* A tree dumped by json_out_fast; the reference is taken. */
static bool w_tree(struct strbuf *out, json_t *j, size_t flags)
{
    bool ok = j && json_out_fast(out, j, flags | JSON_ENCODE_ANY);
    json_decref(j);
    return ok;
}

/* A real that is a whole number of thousandths below 10^12 in magnitude, as jansson dumps it
 * at JSON_REAL_PRECISION(15): such a decimal has at most 15 significant digits, so "%.15g"
 * prints it exactly, in fixed notation, trailing zeros dropped, and jansson adds ".0" when no
 * point is left. Ages are such reals (milliseconds over 1000); anything else (another
 * precision, -0.0, more digits) is false and goes to jansson (formatting it was 5% of
 * decode). */
static bool w_age(struct strbuf *out, double v, size_t flags)
{
    if (((flags >> 11) & 31) != 15)
        return false;
    if (v == 0.0 ? signbit(v) : !(fabs(v) < 1e12))
        return false;
    long long k = llround(v * 1000.0);
    if ((double)k / 1000.0 != v)
        return false;
    unsigned long long a = k < 0 ? 0ULL - (unsigned long long)k : (unsigned long long)k;
    if (k < 0)
        sb_addc(out, '-');
    json_out_integer(out, (long long)(a / 1000));
    unsigned f = (unsigned)(a % 1000);
    char frac[4] = {(char)('0' + f / 100), (char)('0' + f / 10 % 10), (char)('0' + f % 10), 0};
    size_t n = 3;
    while (n > 1 && frac[n - 1] == '0')
        n--;
    sb_addc(out, '.');
    sb_add(out, frac, n);
    return true;
}

static void w_end(struct strbuf *out, const struct bytes *queue, const struct bytes *reason,
                  const struct bytes *exchange)
{
    KEY(out, "{\"queue\":");
    decode_write_bytes_or_null(out, queue);
    KEY(out, ",\"reason\":");
    decode_write_bytes_or_null(out, reason);
    KEY(out, ",\"exchange\":");
    if (exchange->data)
        decode_write_bytes(out, exchange);
    else
        KEY(out, "null");
    sb_addc(out, '}');
}

static void w_int_or_null(struct strbuf *out, bool has, long long v)
{
    if (has)
        w_int(out, v);
    else
        KEY(out, "null");
}

static bool w_death(struct strbuf *out, const struct death_summary *d)
{
    if (!d->present) {
        KEY(out, "null");
        return true;
    }
    KEY(out, "{\"count\":");
    w_int(out, d->total);
    KEY(out, ",\"reasons\":[");
    struct keyset seen;
    keyset_init(&seen, d->n_entries);
    bool first = true;
    for (size_t i = 0; i < d->n_entries; i++)
        if (keyset_add(&seen, d->entries[i].reason.data, d->entries[i].reason.len)) {
            if (!first)
                sb_addc(out, ',');
            first = false;
            decode_write_bytes(out, &d->entries[i].reason);
        }
    keyset_free(&seen);
    KEY(out, "],\"first\":");
    w_end(out, &d->first_queue, &d->first_reason, &d->first_exchange);
    KEY(out, ",\"last\":");
    w_end(out, &d->last_queue, &d->last_reason, &d->last_exchange);
    KEY(out, ",\"first_time_ms\":");
    w_int_or_null(out, d->has_times, d->first_time_ms);
    KEY(out, ",\"last_time_ms\":");
    w_int_or_null(out, d->has_times, d->last_time_ms);
    KEY(out, ",\"delivery_count\":");
    w_int_or_null(out, d->has_delivery_count, d->delivery_count);
    KEY(out, ",\"entries\":[");
    for (size_t i = 0; i < d->n_entries; i++) {
        const struct death_entry *e = &d->entries[i];
        if (i)
            sb_addc(out, ',');
        KEY(out, "{\"queue\":");
        decode_write_bytes(out, &e->queue);
        KEY(out, ",\"reason\":");
        decode_write_bytes(out, &e->reason);
        KEY(out, ",\"exchange\":");
        decode_write_bytes(out, &e->exchange);
        KEY(out, ",\"count\":");
        w_int(out, (long long)e->count);
        KEY(out, ",\"time_ms\":");
        w_int_or_null(out, e->has_time, e->time_ms);
        KEY(out, ",\"routing_keys\":[");
        for (size_t k = 0; k < e->n_routing_keys; k++) {
            if (k)
                sb_addc(out, ',');
            decode_write_bytes(out, &e->routing_keys[k]);
        }
        sb_addc(out, ']');
        if (e->has_original_expiration) {
            KEY(out, ",\"original_expiration\":");
            decode_write_bytes(out, &e->original_expiration);
        }
        sb_addc(out, '}');
    }
    KEY(out, "],\"warnings\":[");
    for (size_t i = 0; i < d->n_warnings; i++) {
        if (i)
            sb_addc(out, ',');
        if (!w_cstr(out, d->warnings[i]))
            return false;
    }
    KEY(out, "]}");
    return true;
}

static bool w_source(struct strbuf *out, const struct source *s)
{
    if (!s->how) {
        KEY(out, "null");
        return true;
    }
    KEY(out, "{\"queue\":");
    decode_write_bytes_or_null(out, &s->queue);
    KEY(out, ",\"exchange\":");
    decode_write_bytes(out, &s->exchange);
    KEY(out, ",\"routing_key\":");
    decode_write_bytes(out, &s->routing_key);
    KEY(out, ",\"how\":");
    if (!w_cstr(out, s->how))
        return false;
    sb_addc(out, '}');
    return true;
}

/* Everything but the broker's death headers, as app_headers_json gives it. */
static bool w_headers(struct strbuf *out, const struct htable *h, size_t flags)
{
    struct hentry stack[16]; /* most tables: no allocation */
    struct htable view = {0, h->n, h->n > 16 ? xmalloc(h->n * sizeof *h->e) : stack, false, false};
    for (size_t i = 0; i < h->n; i++)
        if (!death_broker_header(h->e[i].key.data, h->e[i].key.len))
            view.e[view.n++] = h->e[i];
    bool ok = htable_write_json(&view, out) || w_tree(out, htable_to_json(&view), flags);
    if (view.e != stack)
        free(view.e);
    return ok;
}

/* json_object_set_new(o, key, bytes_to_json(s, strlen(s))), written. */
static void w_opt_text(struct strbuf *out, const char *key, const char *s)
{
    sb_adds(out, key);
    decode_write_text(out, s, strlen(s));
}

/* ---- the body's JSON document, copied ---------------------------------------------------
 * jansson's dump of json_loadb(body) is the body itself without its white space when the
 * body holds no escape but \" \\ \b \f \n \r \t, no real, no -0, no integer of more than
 * 18 digits, no object with a key twice and no more than 64 levels: such a body is copied
 * token by token (parsing and dumping it was 7% of decode). Anything else is false, and
 * jansson reads and dumps it. */
struct jcur {
    const unsigned char *p, *end;
    int depth;
};

static void j_ws(struct jcur *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

/* A string at c->p, copied; its raw bytes (between the quotes) in *s, *n. */
static bool j_string(struct jcur *c, struct strbuf *out, const unsigned char **s, size_t *n)
{
    const unsigned char *start = ++c->p;
    while (c->p < c->end && *c->p != '"') {
        if (*c->p < 0x20)
            return false;
        if (*c->p == '\\') {
            if (c->end - c->p < 2 || !memchr("\"\\bfnrt", c->p[1], 7))
                return false;
            c->p++;
        }
        c->p++;
    }
    if (c->p >= c->end)
        return false;
    *s = start;
    *n = (size_t)(c->p - start);
    sb_addc(out, '"');
    sb_add(out, start, *n);
    sb_addc(out, '"');
    c->p++;
    return true;
}

static bool j_value(struct jcur *c, struct strbuf *out);

/* After a member or an element: 1 on a comma (copied), 0 on close (copied), -1 else. */
static int j_next(struct jcur *c, struct strbuf *out, char close)
{
    j_ws(c);
    if (c->p < c->end && (*c->p == ',' || *c->p == close)) {
        sb_addc(out, (char)*c->p);
        return *c->p++ == ',' ? 1 : 0;
    }
    return -1;
}

static bool j_object(struct jcur *c, struct strbuf *out)
{
    enum { MAX_KEYS = 64 };
    const unsigned char *keys[MAX_KEYS];
    size_t lens[MAX_KEYS], nk = 0;
    c->p++;
    sb_addc(out, '{');
    j_ws(c);
    if (c->p < c->end && *c->p == '}') {
        c->p++;
        sb_addc(out, '}');
        return true;
    }
    for (;;) {
        j_ws(c);
        if (c->p >= c->end || *c->p != '"' || nk == MAX_KEYS ||
            !j_string(c, out, &keys[nk], &lens[nk]))
            return false;
        for (size_t i = 0; i < nk; i++)
            if (lens[i] == lens[nk] && memcmp(keys[i], keys[nk], lens[nk]) == 0)
                return false; /* jansson keeps one of them */
        nk++;
        j_ws(c);
        if (c->p >= c->end || *c->p != ':')
            return false;
        c->p++;
        sb_addc(out, ':');
        if (!j_value(c, out))
            return false;
        int next = j_next(c, out, '}');
        if (next <= 0)
            return next == 0;
    }
}

static bool j_array(struct jcur *c, struct strbuf *out)
{
    c->p++;
    sb_addc(out, '[');
    j_ws(c);
    if (c->p < c->end && *c->p == ']') {
        c->p++;
        sb_addc(out, ']');
        return true;
    }
    for (;;) {
        if (!j_value(c, out))
            return false;
        int next = j_next(c, out, ']');
        if (next <= 0)
            return next == 0;
    }
}

static bool j_literal(struct jcur *c, struct strbuf *out, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0)
        return false;
    sb_add(out, word, n);
    c->p += n;
    return true;
}

static bool j_value(struct jcur *c, struct strbuf *out)
{
    j_ws(c);
    if (c->p >= c->end)
        return false;
    const unsigned char *s;
    size_t n;
    bool ok;
    switch (*c->p) {
    case '{':
    case '[':
        if (++c->depth > 64)
            return false;
        ok = *c->p == '{' ? j_object(c, out) : j_array(c, out);
        c->depth--;
        return ok;
    case '"':
        return j_string(c, out, &s, &n);
    case 't':
        return j_literal(c, out, "true");
    case 'f':
        return j_literal(c, out, "false");
    case 'n':
        return j_literal(c, out, "null");
    default: {
        const unsigned char *start = c->p;
        if (*c->p == '-')
            c->p++;
        const unsigned char *digits = c->p;
        while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
            c->p++;
        size_t nd = (size_t)(c->p - digits);
        if (nd == 0 || nd > 18 || (nd > 1 && *digits == '0') ||
            (*digits == '0' && digits != start) ||
            (c->p < c->end && (*c->p == '.' || *c->p == 'e' || *c->p == 'E')))
            return false;
        sb_add(out, start, (size_t)(c->p - start));
        return true;
    }
    }
}

/* The body's document as jansson's dump writes it, or false with nothing appended. */
static bool w_json_copy(struct strbuf *out, const void *body, size_t len)
{
    size_t start = out->len;
    if (!utf8_valid(body, len))
        return false;
    struct jcur c = {body, (const unsigned char *)body + len, 0};
    bool ok = j_value(&c, out);
    j_ws(&c);
    if (ok && c.p == c.end)
        return true;
    out->len = start;
    out->buf[start] = '\0';
    return false;
}

static bool w_body(struct strbuf *out, const struct decoded *d, size_t flags)
{
    const struct message *m = d->msg;
    const struct body_info *b = &d->body;
    KEY(out, "{\"size\":");
    w_int(out, (long long)m->body.len);
    KEY(out, ",\"kind\":");
    if (!w_cstr(out, body_kind_name(b->kind)))
        return false;
    KEY(out, ",\"format\":");
    if (b->format ? !w_cstr(out, b->format) : (KEY(out, "null"), false))
        return false;
    KEY(out, ",\"content_type\":");
    if (b->media.type ? !w_cstr(out, b->media.type) : (KEY(out, "null"), false))
        return false;
    KEY(out, ",\"sha256\":");
    if (!w_cstr(out, d->body_sha256))
        return false;
    /* the summary written in place, and quoted when it needs no escape (nearly always) */
    KEY(out, ",\"summary\":\"");
    size_t at = out->len;
    body_summary(b, out);
    size_t sn = out->len - at;
    if (json_plain_prefix(out->buf + at, sn, true) == sn) {
        sb_addc(out, '"');
    } else {
        char *text = xmalloc(sn + 1);
        memcpy(text, out->buf + at, sn);
        out->len = at - 1;
        decode_write_text(out, text, sn);
        free(text);
    }
    if (b->note[0])
        w_opt_text(out, ",\"note\":", b->note);
    if (b->key_id)
        w_opt_text(out, ",\"key_id\":", b->key_id);
    if (b->store_key)
        w_opt_text(out, ",\"store_key\":", b->store_key);
    if (b->kind == BODY_AVRO_REGISTERED) {
        KEY(out, ",\"schema_id\":");
        w_int(out, b->schema_id);
    }
    if (b->json_checked && !b->json_valid) {
        KEY(out, ",\"json_error\":{\"text\":");
        decode_write_text(out, b->json_error, strlen(b->json_error));
        KEY(out, ",\"line\":");
        w_int(out, b->json_line);
        KEY(out, ",\"column\":");
        w_int(out, b->json_column);
        sb_addc(out, '}');
    }
    const void *data = m->body.data ? (const void *)m->body.data : "";
    KEY(out, ",\"text\":");
    if (!json_out_string(out, data, m->body.len)) {
        out->len -= sizeof ",\"text\":" - 1;
        char *b64 = base64_encode(data, m->body.len);
        KEY(out, ",\"base64\":\"");
        sb_adds(out, b64);
        sb_addc(out, '"');
        free(b64);
    }
    if (b->kind == BODY_JSON && b->json_valid) {
        KEY(out, ",\"json\":");
        if (w_json_copy(out, data, m->body.len)) {
            sb_addc(out, '}');
            return true;
        }
        out->len -= sizeof ",\"json\":" - 1;
        json_t *doc = json_loadb(data, m->body.len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
        if (doc) {
            KEY(out, ",\"json\":");
            if (!w_tree(out, doc, flags))
                return false;
        }
    }
    sb_addc(out, '}');
    return true;
}

static void w_replay(struct strbuf *out, const struct acemq_replay *r)
{
    if (!r->present) {
        KEY(out, "null");
        return;
    }
    KEY(out, "{\"from\":");
    decode_write_bytes_or_null(out, &r->from);
    KEY(out, ",\"at_ms\":");
    w_int_or_null(out, r->has_at, r->at_ms);
    KEY(out, ",\"at\":");
    if (r->has_at)
        w_time(out, r->at_ms);
    else
        KEY(out, "null");
    KEY(out, ",\"at_unreadable\":");
    w_bool(out, r->at_unreadable);
    KEY(out, ",\"count\":");
    w_int(out, r->count);
    sb_addc(out, '}');
}

/* The names of the defaulted fields (defaulted_to_json), all ASCII. */
void decode_write_defaulted(struct strbuf *out, unsigned d)
{
    static const struct {
        unsigned bit;
        const char *json;
    } names[] = {
        {ED_ID, "\"id\""},           {ED_TYPE, "\"type\""},
        {ED_VERSION, "\"version\""}, {ED_CORRELATION, "\"correlation_id\""},
        {ED_ATTEMPT, "\"attempt\""}, {ED_FIRST_SEEN, "\"first_seen_ms\""},
    };
    sb_addc(out, '[');
    bool first = true;
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        if (d & names[i].bit) {
            if (!first)
                sb_addc(out, ',');
            first = false;
            sb_adds(out, names[i].json);
        }
    sb_addc(out, ']');
}

/* The record's own keys: a dialect named like one of them would replace it in the tree. */
static bool name_is_a_key(const char *name)
{
    static const char *const keys[] = {
        "dialect",
        "id",
        "type",
        "version",
        "correlation_id",
        "causation_id",
        "attempt",
        "first_seen_ms",
        "first_seen",
        "age_s",
        "origin",
        "error",
        "error_from_broker",
        "error_type",
        "error_message",
        "stack_trace",
        "failed_at_ms",
        "failed_at",
        "recognised",
        "queue",
        "exchange",
        "routing_key",
        "redelivered",
        "source",
        "death",
        "headers",
        "accepted",
        "reject_reason",
        "defaulted",
        "replay",
        "properties",
        "body",
    };
    /* the first byte first: a strcmp with each of 32 names was 2% of decode */
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (keys[i][0] == name[0] && strcmp(name, keys[i]) == 0)
            return true;
    return false;
}

static bool w_record(struct strbuf *out, const struct decoded *d, int64_t now_ms, size_t flags)
{
    const struct envelope *e = d->env;
    const struct message *m = d->msg;
    KEY(out, "{\"dialect\":");
    if (!w_cstr(out, d->dialect->name) || name_is_a_key(d->dialect->name))
        return false;
    KEY(out, ",\"id\":");
    decode_write_bytes(out, &e->id);
    KEY(out, ",\"type\":");
    decode_write_bytes(out, &e->type);
    KEY(out, ",\"version\":");
    w_int(out, e->version);
    KEY(out, ",\"correlation_id\":");
    decode_write_bytes(out, &e->correlation_id);
    KEY(out, ",\"causation_id\":");
    decode_write_bytes_or_null(out, &e->causation_id);
    KEY(out, ",\"attempt\":");
    w_int(out, e->attempt);
    KEY(out, ",\"first_seen_ms\":");
    w_int(out, e->first_seen_ms);
    KEY(out, ",\"first_seen\":");
    w_time(out, e->first_seen_ms);
    double age = envelope_age_s(e, now_ms);
    if (!isfinite(age)) /* json_real refuses it: the key is left out */
        return false;
    KEY(out, ",\"age_s\":");
    if (!w_age(out, age, flags) && !w_tree(out, json_real(age), flags))
        return false;
    KEY(out, ",\"origin\":");
    decode_write_bytes_or_null(out, &e->origin);
    KEY(out, ",\"error\":");
    decode_write_bytes_or_null(out, &d->error);
    KEY(out, ",\"error_from_broker\":");
    w_bool(out, d->error_from_broker);
    KEY(out, ",\"error_type\":");
    decode_write_bytes_or_null(out, &d->error_type);
    KEY(out, ",\"error_message\":");
    decode_write_bytes_or_null(out, &d->error_message);
    KEY(out, ",\"stack_trace\":");
    decode_write_bytes_or_null(out, &d->stack_trace);
    KEY(out, ",\"failed_at_ms\":");
    w_int_or_null(out, d->failed_at_ms != 0, d->failed_at_ms);
    KEY(out, ",\"failed_at\":");
    if (d->failed_at_ms)
        w_time(out, d->failed_at_ms);
    else
        KEY(out, "null");
    KEY(out, ",\"recognised\":{\"confidence\":");
    w_int(out, d->match.confidence);
    KEY(out, ",\"by\":[");
    for (int i = 0; i < d->match.n_by; i++) {
        if (i)
            sb_addc(out, ',');
        if (!w_cstr(out, d->match.by[i]))
            return false;
    }
    KEY(out, "]},\"queue\":");
    decode_write_bytes(out, &m->queue);
    KEY(out, ",\"exchange\":");
    decode_write_bytes(out, &m->exchange);
    KEY(out, ",\"routing_key\":");
    decode_write_bytes(out, &m->routing_key);
    KEY(out, ",\"redelivered\":");
    w_bool(out, m->redelivered);
    KEY(out, ",\"source\":");
    if (!w_source(out, &d->source))
        return false;
    KEY(out, ",\"death\":");
    if (!w_death(out, &d->death))
        return false;
    KEY(out, ",\"headers\":");
    if (!w_headers(out, e->headers, flags))
        return false;
    KEY(out, ",\"accepted\":");
    w_bool(out, d->accepted);
    KEY(out, ",\"reject_reason\":");
    if (d->reject_reason ? !w_cstr(out, d->reject_reason) : (KEY(out, "null"), false))
        return false;
    KEY(out, ",\"defaulted\":");
    decode_write_defaulted(out, e->defaulted);
    KEY(out, ",\"replay\":");
    w_replay(out, &d->replay);
    KEY(out, ",\"properties\":");
    if (!snapshot_props_write(out, &m->props) &&
        !w_tree(out, snapshot_props_to_json(&m->props), flags))
        return false;
    KEY(out, ",\"body\":");
    if (!w_body(out, d, flags))
        return false;
    sb_addc(out, ',');
    json_out_string(out, d->dialect->name, strlen(d->dialect->name));
    sb_addc(out, ':');
    size_t own = out->len;
    if (!(d->dialect->write_json && d->dialect->write_json(d, out))) {
        out->len = own;
        if (!w_tree(out, decoded_own_json(d, now_ms), flags))
            return false;
    }
    sb_addc(out, '}');
    return true;
}

bool decoded_write_json(const struct decoded *d, int64_t now_ms, size_t flags, struct strbuf *out)
{
    size_t start = out->len;
    size_t own = JSON_COMPACT | JSON_REAL_PRECISION(31);
    if ((flags & JSON_COMPACT) && !(flags & ~own) && w_record(out, d, now_ms, flags))
        return true;
    out->len = start;
    if (out->buf)
        out->buf[start] = '\0';
    return false;
}
