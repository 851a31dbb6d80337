/*
 * acemq_dialect: AceMQ behind the dialect interface (dialect.h). The envelope is read and
 * written by acemq.c exactly as AceMQ's own Envelope does; this file recognises it, says what
 * each field means, and holds AceMQ's replay and re-issue rules (restamp.h).
 *
 * Recognition: any header in the reserved x-acemq- namespace (confidence 95).
 * Source: the DLQ's name minus .dlq, .parked or .dead; else the first death.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "acemq.h"
#include "decode.h"
#include "dialect.h"
#include "hval_json.h"
#include "json_out.h"
#include "restamp_kit.h"
#include "util.h"

static int recognise(const struct dialect_input *in, struct dialect_match *m)
{
    const struct htable *h = in->msg->headers;
    for (size_t i = 0; h && i < h->n; i++)
        if (acemq_reserved_name(h->e[i].key.data, h->e[i].key.len)) {
            dialect_match_by(m, "x-acemq-*");
            return 95;
        }
    return 0;
}

/* The reasons the libraries write before the exception ("exhausted 5 attempts: ", "gave up
 * after 5 attempts: ", "retrying cannot help: ", …): everything up to a ": " that follows one
 * of these words. */
static size_t reason_prefix(const unsigned char *s, size_t n)
{
#define START(t)                                                                                   \
    {                                                                                              \
        t, sizeof t - 1                                                                            \
    }
    static const struct {
        const char *s;
        size_t n;
    } starts[] = {START("exhausted "),
                  START("gave up "),
                  START("rejected by the handler"),
                  START("retrying cannot help"),
                  START("could not be decoded"),
                  START("exceeded the maximum message age"),
                  START("the handler reported an unprocessable message")};
#undef START
    for (size_t i = 0; i < sizeof starts / sizeof *starts; i++) {
        size_t k = starts[i].n;
        if (n < k || s[0] != (unsigned char)starts[i].s[0] || memcmp(s, starts[i].s, k) != 0)
            continue;
        for (size_t j = k; j + 1 < n; j++)
            if (s[j] == ':' && s[j + 1] == ' ')
                return j + 2;
    }
    return 0;
}

/* An exception class name's bytes, as the libraries print it: Ruby's Net::ReadTimeout, Java's
 * simple or full names, Go's *errors.errorString; no spaces. 1: a letter; 2: a digit or one of
 * _.:$*\\ (a byte not listed: 0, not in a name) */
static const unsigned char class_kind[256] = {
    ['0'] = 2, ['1'] = 2, ['2'] = 2, ['3'] = 2, ['4'] = 2, ['5'] = 2, ['6'] = 2, ['7'] = 2,
    ['8'] = 2, ['9'] = 2, ['_'] = 2, ['.'] = 2, [':'] = 2, ['$'] = 2, ['*'] = 2, ['\\'] = 2,
#define L(c) [c] = 1, [c + 32] = 1
    L('A'),    L('B'),    L('C'),    L('D'),    L('E'),    L('F'),    L('G'),    L('H'),
    L('I'),    L('J'),    L('K'),    L('L'),    L('M'),    L('N'),    L('O'),    L('P'),
    L('Q'),    L('R'),    L('S'),    L('T'),    L('U'),    L('V'),    L('W'),    L('X'),
    L('Y'),    L('Z'),
#undef L
};

/* x-acemq-error as type and message: "exhausted 5 attempts: InventoryException: sku 4411 out
 * of stock" is InventoryException and "sku 4411 out of stock"; a reason without a class is the
 * message whole. The class: the bytes from at to the first ": " (not "::") before any space,
 * 1 to 200 bytes of class_kind, a letter among them. One pass: a byte that cannot be in a
 * name (a space among them) ends the search, as every longer candidate would hold it; the
 * letter is looked for once, at the ": ". */
static size_t error_class(const unsigned char *s, size_t n, size_t at)
{
    if (n < 2 || at >= n - 1)
        return 0;
    size_t end = n - 1 - at > 201 ? at + 201 : n - 1; /* a ':' here has a byte after it */
    for (size_t j = at; j < end; j++) {
        if (s[j] == ':') {
            if (s[j + 1] != ' ' || j == at || s[j - 1] == ':')
                continue;
            for (size_t i = at; i < j; i++)
                if (class_kind[s[i]] == 1)
                    return j - at;
            return 0; /* no letter: the space after this ':' ends the search */
        }
        if (!class_kind[s[j]])
            return 0;
    }
    return 0;
}

static void split_error(const struct bytes *e, struct decoded *out)
{
    if (!e->len)
        return;
    const unsigned char *s = e->data;
    size_t n = e->len, at = reason_prefix(s, n), k = error_class(s, n, at);
    if (k)
        dialect_set_error(out, s + at, k, s + at + k + 2, n - at - k - 2, NULL, 0);
    else
        dialect_set_error(out, NULL, 0, s + at, n - at, NULL, 0);
}

/* Whether AceMQ's answer (its ceiling, for any x-acemq-* header) wins whatever the others
 * say: no dialect before it can say as much (a tie goes to the earlier), none after it more,
 * and every one has a ceiling (dialect.c's table; dialect_recognise's rule). */
static bool acemq_decides_now(void)
{
    bool after = false;
    for (size_t i = 0; i < dialect_count(); i++) {
        const struct dialect_ops *o = dialect_at(i);
        if (o == &dialect_acemq)
            after = true;
        else if (o != &dialect_amqp && o->recognise &&
                 (!o->ceiling || o->ceiling > dialect_acemq.ceiling ||
                  (!after && o->ceiling == dialect_acemq.ceiling)))
            return false;
    }
    return after;
}

/* acemq_decides_now, worked out once (the table is constant; any thread may ask first). */
static bool acemq_decides(void)
{
    static atomic_int known; /* 0: not yet; 1: no; 2: yes */
    int k = atomic_load_explicit(&known, memory_order_relaxed);
    if (!k) {
        k = acemq_decides_now() ? 2 : 1;
        atomic_store_explicit(&known, k, memory_order_relaxed);
    }
    return k == 2;
}

bool decode_index_acemq(const struct message *m, int64_t now_ms, struct decoded_index *out)
{
    /* AceMQ reads it (its recognise says 95, the most any dialect says, and it comes first),
     * nothing of the broker's dead-lettering is there to read, and no traceparent can stand
     * in for a missing correlation. */
    const struct htable *h = m->headers;
    bool acemq = false;
    for (size_t i = 0; i < h->n; i++) {
        const struct bytes *k = &h->e[i].key;
        if (acemq_reserved_name(k->data, k->len))
            acemq = true;
        else if (death_broker_header(k->data, k->len) || bytes_eq_cstr(k, "traceparent"))
            return false;
    }
    struct envelope_init in;
    if (!acemq || !acemq_decides() ||
        !acemq_fields(h, &m->routing_key, props_string(&m->props, PROP_message_id), now_ms, &in,
                      out->buf))
        return false;
    out->dialect = &dialect_acemq;
    out->id = in.id;
    out->type = in.type;
    /* as envelope.c's build: the correlation defaults to the id, attempts from 1 */
    out->correlation_id = in.correlation_id.len ? in.correlation_id : in.id;
    out->causation_id = in.causation_id;
    out->attempt = in.attempt < 1 ? 1 : in.attempt;
    out->first_seen_ms = in.first_seen_ms;
    out->defaulted = in.defaulted;
    out->error = in.error;
    out->error_type = (struct bytes){0, NULL};
    if (in.error.len) {
        size_t at = reason_prefix(in.error.data, in.error.len);
        size_t k = error_class(in.error.data, in.error.len, at);
        out->error_type = (struct bytes){k, in.error.data + at};
    }
    return true;
}

static void decode(const struct dialect_input *x, struct decoded *out)
{
    const struct message *m = x->msg;
    struct bytes digest = {0, NULL};
    if (!htable_get(m->headers, ACEMQ_ID)) {
        const struct bytes *mid = props_string(&m->props, PROP_message_id);
        if (!mid || !mid->len) {
            /* acemq_from_headers makes the stand-in id from the message's digest. */
            digest = dialect_identity_digest(m);
        }
    }
    envelope_free(out->env);
    out->env = NULL;
    if (acemq_from_headers(m->headers, &m->routing_key, props_string(&m->props, PROP_message_id),
                           digest.len ? &digest : NULL, x->now_ms, &out->env, NULL) != ST_OK)
        out->env = NULL;
    bytes_free(&digest);
    if (out->env)
        split_error(&out->env->error, out);
    size_t n = acemq_source_queue(&m->queue);
    if (n) {
        dialect_source_queue(out, "acemq-dlq-name", m->queue.data, n);
        out->source.how_text = "the DLQ's name minus .dlq/.parked/.dead";
    }
    out->accept_note = "an AceMQ consumer reads any envelope (bad fields take defaults)";
    static const char *const from[NF_COUNT] = {
        [NF_ID] = "id and idempotency key (x-acemq-id)",
        [NF_TYPE] = "the logical type (x-acemq-type)",
        [NF_VERSION] = "schema version of the type (x-acemq-version)",
        [NF_CORRELATION] = "the whole causal chain (x-acemq-correlation)",
        [NF_CAUSATION] = "what caused this one (x-acemq-causation)",
        [NF_ATTEMPT] = "delivery attempt, from 1 (x-acemq-attempt)",
        [NF_FIRST_SEEN] = "first publish (x-acemq-first-seen)",
        [NF_ORIGIN] = "the producer, service@host (x-acemq-origin)",
        [NF_ERROR] = "why the library set it aside (x-acemq-error)",
    };
    memcpy(out->read_from, from, sizeof from);
    if (out->env && !out->env->causation_id.len)
        out->read_from[NF_CAUSATION] = "a chain root: nothing caused it";
}

/* What a header of the envelope looked like, for a default's explanation. */
static void header_state(const struct htable *h, const char *name, struct strbuf *out)
{
    const struct hval *v = htable_get(h, name);
    if (!v)
        sb_addf(out, "%s absent", name);
    else if (hval_str(v) && hval_str(v)->len == 0)
        sb_addf(out, "%s is empty", name);
    else if (hval_str(v))
        sb_addf(out, "%s is not a number", name);
    else if (v->kind == HV_VOID)
        sb_addf(out, "%s is void", name);
    else
        sb_addf(out, "%s is %s %s, unreadable", name,
                v->kind == HV_ARRAY || v->kind == HV_I8 ? "an" : "a", hkind_name(v->kind));
}

static void note(struct dfields *f, struct strbuf *sb)
{
    dfields_add_line(f, DF_DEFAULTS, DF_WARN, sb->buf ? sb->buf : "");
    sb_reset(sb);
}

static void fields(const struct decoded *d, int64_t now_ms, struct dfields *f)
{
    (void)now_ms;
    const struct htable *h = d->msg->headers;
    unsigned df = d->env->defaulted;
    struct strbuf sb;
    sb_init(&sb);
    if (d->env->error.len) {
        if (!d->death.present)
            dfields_add_line(f, DF_DEATH, DF_VALUE,
                             "set aside by the AceMQ library itself (no broker dead-lettering: "
                             "no x-death)");
        struct dfield *e = dfields_add(f, NULL, "x-acemq-error", d->env->error.data,
                                       d->env->error.len, "why the library gave up on it");
        e->where = DF_DEATH;
        e->style = DF_ERROR;
        e->label_w = 14;
    }
    struct bytes id = {0, NULL};
    bool id_header = hval_as_text(htable_get(h, ACEMQ_ID), &id) && id.len;
    bytes_free(&id);
    if (df & ED_ID) {
        sb_adds(&sb, "id: a name-based UUID of the message (");
        header_state(h, ACEMQ_ID, &sb);
        sb_adds(&sb, ", no message_id property)");
        note(f, &sb);
    } else if (!id_header) {
        sb_adds(&sb, "id: the message_id property (");
        header_state(h, ACEMQ_ID, &sb);
        sb_adds(&sb, ")");
        note(f, &sb);
    }
    static const struct {
        unsigned bit;
        const char *name, *header;
    } rows[] = {
        {ED_TYPE, "type", ACEMQ_TYPE},
        {ED_VERSION, "version: 1", ACEMQ_VERSION},
        {ED_CORRELATION, "correlation: the id", ACEMQ_CORRELATION},
        {ED_ATTEMPT, "attempt: 1", ACEMQ_ATTEMPT},
        {ED_FIRST_SEEN, "first seen: when it was read", ACEMQ_FIRST_SEEN},
    };
    for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
        if (!(df & rows[i].bit))
            continue;
        if (rows[i].bit == ED_TYPE)
            sb_adds(&sb, d->msg->routing_key.len ? "type: the routing key"
                                                 : "type: \"message\" (no routing key)");
        else
            sb_adds(&sb, rows[i].name);
        sb_adds(&sb, " (");
        header_state(h, rows[i].header, &sb);
        sb_adds(&sb, ")");
        note(f, &sb);
    }
    sb_free(&sb);
}

static json_t *bj(const struct bytes *b)
{
    return bytes_to_json(b->data ? (const void *)b->data : "", b->len);
}

static json_t *bj_or_null(const struct bytes *b)
{
    return b && b->len ? bj(b) : json_null();
}

static json_t *to_json(const struct decoded *d)
{
    const struct envelope *e = d->env;
    const struct htable *h = d->msg->headers;
    json_t *o = json_object();
    envelope_head_to_json(o, e);
    json_object_set_new(o, "origin", bj_or_null(&e->origin));
    json_object_set_new(o, "error", bj_or_null(&e->error));
    json_object_set_new(o, "claim", bj_or_null(&e->claim));
    json_object_set_new(o, "route", e->route->n ? htable_to_json(e->route) : json_null());
    json_object_set_new(o, "unknown_reserved", htable_to_json(e->reserved_unknown));
    json_object_set_new(o, "defaulted", defaulted_to_json(e->defaulted));
    static const char *const patterns[] = {"acemq-reply-to", "acemq-routing-slip", "acemq-error",
                                           "traceparent",    "tracestate",         NULL};
    for (size_t i = 0; patterns[i]; i++) {
        const struct hval *v = htable_get(h, patterns[i]);
        if (v)
            json_object_set_new(o, patterns[i], hval_to_json(v));
    }
    return o;
}

/* Whether h holds one of to_json's patterns (as htable_get of each finds it): one pass over
 * the headers, a key's first byte and length first (five htable_gets, a strlen and a scan
 * each, were 1.5% of decode). */
static bool has_pattern_header(const struct htable *h)
{
    static const struct {
        const char *s;
        size_t n;
    } patterns[] = {{"acemq-reply-to", 14},
                    {"acemq-routing-slip", 18},
                    {"acemq-error", 11},
                    {"traceparent", 11},
                    {"tracestate", 10}};
    for (size_t i = 0; h && i < h->n; i++) {
        const struct bytes *k = &h->e[i].key;
        if (!k->len || (k->data[0] != 'a' && k->data[0] != 't'))
            continue;
        for (size_t j = 0; j < sizeof patterns / sizeof *patterns; j++)
            if (k->len == patterns[j].n && memcmp(k->data, patterns[j].s, k->len) == 0)
                return true;
    }
    return false;
}

/* to_json's object written directly (dialect.h, write_json): false when a header of the
 * patterns is there (hval_to_json's forms are jansson's) or a table needs jansson. */
static bool write_json(const struct decoded *d, struct strbuf *out)
{
    const struct envelope *e = d->env;
    const struct htable *h = d->msg->headers;
    if (has_pattern_header(h))
        return false;
    sb_adds(out, "{\"id\":");
    decode_write_bytes(out, &e->id);
    sb_adds(out, ",\"type\":");
    decode_write_bytes(out, &e->type);
    sb_adds(out, ",\"version\":");
    json_out_integer(out, e->version);
    sb_adds(out, ",\"correlation_id\":");
    decode_write_bytes(out, &e->correlation_id);
    sb_adds(out, ",\"causation_id\":");
    decode_write_bytes_or_null(out, &e->causation_id);
    sb_adds(out, ",\"attempt\":");
    json_out_integer(out, e->attempt);
    sb_adds(out, ",\"first_seen_ms\":");
    json_out_integer(out, e->first_seen_ms);
    sb_adds(out, ",\"origin\":");
    decode_write_bytes_or_null(out, &e->origin);
    sb_adds(out, ",\"error\":");
    decode_write_bytes_or_null(out, &e->error);
    sb_adds(out, ",\"claim\":");
    decode_write_bytes_or_null(out, &e->claim);
    sb_adds(out, ",\"route\":");
    if (!e->route->n)
        sb_adds(out, "null");
    else if (!htable_write_json(e->route, out))
        return false;
    sb_adds(out, ",\"unknown_reserved\":");
    if (!htable_write_json(e->reserved_unknown, out))
        return false;
    sb_adds(out, ",\"defaulted\":");
    decode_write_defaulted(out, e->defaulted);
    sb_addc(out, '}');
    return true;
}

static enum status build_acemq(const struct decoded *d, const struct restamp_opts *o,
                               const struct bytes *dlq, struct outgoing *out, struct error *err)
{
    const struct envelope *e = d->env;
    struct envelope_init in = {.attempt_from_zero = e->attempt_from_zero,
                               .id = e->id,
                               .type = e->type,
                               .correlation_id = e->correlation_id,
                               .causation_id = e->causation_id,
                               .origin = e->origin,
                               .error = e->error,
                               .claim = e->claim,
                               .version = e->version,
                               .attempt = e->attempt,
                               .first_seen_ms = e->first_seen_ms,
                               .defaulted = e->defaulted,
                               .route = e->route,
                               .reserved_unknown = e->reserved_unknown};
    struct htable *app = htable_copy(e->headers);
    struct bytes empty = {0, NULL};
    if (o->mode == RESTAMP_REPLAY) {
        if (!o->keep_error) {
            in.attempt = 1;
            in.error = empty;
            in.defaulted &= ~(unsigned)ED_ATTEMPT;
        }
        /* Whole seconds, as the libraries write it: 2026-02-03T04:05:06Z. */
        int64_t s = o->now_ms / 1000 - (o->now_ms % 1000 < 0);
        char at[32];
        time_format_rfc3339(s * 1000, false, at);
        int64_t count = d->replay.count < INT64_MAX ? d->replay.count + 1 : INT64_MAX;
        rk_header_put(app, ACEMQ_REPLAYED_FROM,
                      hval_string(dlq->len ? (const void *)dlq->data : "", dlq->len));
        rk_header_put(app, ACEMQ_REPLAYED_AT, hval_cstring(at));
        /* An int, as the Java library's `int` writes it (and the seed's current-library
         * replays carry); a count beyond it stays a long rather than wrapping. */
        rk_header_put(app, ACEMQ_REPLAY_COUNT,
                      count <= INT32_MAX ? hval_int(HV_I32, count) : hval_int(HV_I64, count));
    } else {
        /* A new message: a new id caused by the old one, correlated as the old one was
         * (written out even when it had defaulted to the old id); not a replay. */
        in.id = out->id;
        in.causation_id = e->id;
        in.correlation_id = e->correlation_id;
        in.attempt = 1;
        in.error = empty;
        in.first_seen_ms = o->now_ms;
        in.defaulted &= ~(unsigned)(ED_ID | ED_ATTEMPT | ED_FIRST_SEEN | ED_CORRELATION);
        htable_remove(app, ACEMQ_REPLAYED_FROM);
        htable_remove(app, ACEMQ_REPLAYED_AT);
        htable_remove(app, ACEMQ_REPLAY_COUNT);
    }
    in.headers = app;
    in.refuse_reserved = true;
    const struct envelope *mid = NULL, *fin = NULL;
    enum status st = envelope_new(&in, &mid, err);
    htable_free(app);
    if (st != ST_OK)
        return st;
    st = envelope_with(mid, o->changes, o->n_changes, &fin, err);
    envelope_free(mid);
    if (st != ST_OK)
        return st;
    struct htable *all = acemq_to_headers(fin, &out->routing_key);
    htable_free(out->headers);
    out->headers = rk_headers_without_broker(all);
    out->headers_present = true;
    htable_free(all);
    bytes_free(&out->id);
    out->id = bytes_copy(&fin->id);
    props_set_string(&out->props, PROP_message_id, fin->id.data, fin->id.len);
    envelope_free(fin);
    return ST_OK;
}

static enum status restamp(const struct decoded *d, const struct restamp_opts *o,
                           const struct bytes *dlq, struct outgoing *out, struct error *err)
{
    if (!rk_has_target(out)) {
        const struct source *s = &d->source;
        size_t n;
        if (s->how && strcmp(s->how, "acemq-dlq-name") == 0 && s->routing_key.len)
            rk_target(out, "acemq-dlq-name", "", 0, s->routing_key.data, s->routing_key.len);
        else if ((n = acemq_source_queue(dlq)) != 0)
            rk_target(out, "acemq-dlq-name", "", 0, dlq->data, n);
        else
            return rk_no_target(d, "the queue's name has no .dlq, .parked or .dead suffix", err);
    }
    return build_acemq(d, o, dlq, out, err);
}

const struct dialect_ops dialect_acemq = {
    .name = "acemq",
    .title = "AceMQ",
    .summary = "AceMQ envelope (x-acemq-* headers)",
    .section = "AceMQ envelope",
    .recognise = recognise,
    .ceiling = 95,
    .decode = decode,
    .fields = fields,
    .to_json = to_json,
    .write_json = write_json,
    .restamp = restamp,
    .replay_rule = "same id, correlation, causation and first-seen; attempt back to 1, "
                   "x-acemq-error cleared, acemq-replayed-* stamped; to the DLQ's source queue",
};
