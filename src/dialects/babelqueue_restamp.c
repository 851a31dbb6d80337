/*
 * babelqueue_restamp: BabelQueue's replay and re-issue (restamp.h has the rules): the copy's
 * body is the dead letter's own bytes edited by byte spans — a member removed, a value
 * replaced, one appended before the closing brace — so that key order, number text, escapes
 * and unknown keys stay exactly as the producer wrote them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "babelqueue_dialect.h"
#include "restamp_kit.h"
#include "util.h"

#define BQ_JSON_FLAGS (JSON_DECODE_ANY | JSON_ALLOW_NUL)

/* ---- the BabelQueue body: byte-span edits ---------------------------------------------- */

/* An edit of every member of one object named key (duplicates included). */
struct member_edit {
    const char *key;
    bool remove;
    char *value; /* the new value's JSON text (owned); NULL with sub: edit the value's members */
    bool append; /* when the object has no such member, add key:value before its '}' */
    const struct member_edit *sub;
    size_t nsub;
};

struct span_member {
    size_t ks, ke; /* the key token, quotes included */
    size_t vs, ve; /* the value */
};

static size_t skip_ws(const unsigned char *s, size_t n, size_t i)
{
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

/* The end of the string token at s[i] == '"', or 0 when it does not close. */
static size_t string_end(const unsigned char *s, size_t n, size_t i)
{
    for (i++; i < n; i++) {
        if (s[i] == '\\')
            i++;
        else if (s[i] == '"')
            return i + 1;
    }
    return 0;
}

/* The end of the value starting at i, or 0. Containers are walked without recursion. */
static size_t value_end(const unsigned char *s, size_t n, size_t i)
{
    if (i >= n)
        return 0;
    if (s[i] == '"')
        return string_end(s, n, i);
    if (s[i] != '{' && s[i] != '[') {
        size_t j = i;
        while (j < n && !strchr(",}] \t\r\n", s[j]) && s[j])
            j++;
        return j > i ? j : 0;
    }
    size_t depth = 0;
    while (i < n) {
        if (s[i] == '"') {
            if (!(i = string_end(s, n, i)))
                return 0;
            continue;
        }
        if (s[i] == '{' || s[i] == '[')
            depth++;
        else if ((s[i] == '}' || s[i] == ']') && --depth == 0)
            return i + 1;
        i++;
    }
    return 0;
}

/* The members of the object at s[open] == '{' (owned array) and the place of its '}'. */
static bool object_scan(const unsigned char *s, size_t n, size_t open, struct span_member **out,
                        size_t *count, size_t *close)
{
    size_t cap = 0, i = skip_ws(s, n, open + 1);
    *out = NULL;
    *count = 0;
    if (i < n && s[i] == '}') {
        *close = i;
        return true;
    }
    for (;;) {
        struct span_member m;
        m.ks = i;
        if (i >= n || s[i] != '"' || !(m.ke = string_end(s, n, i)))
            break;
        size_t j = skip_ws(s, n, m.ke);
        if (j >= n || s[j] != ':')
            break;
        m.vs = skip_ws(s, n, j + 1);
        if (!(m.ve = value_end(s, n, m.vs)))
            break;
        xgrow((void **)out, &cap, *count + 1, sizeof **out);
        (*out)[(*count)++] = m;
        j = skip_ws(s, n, m.ve);
        if (j < n && s[j] == '}') {
            *close = j;
            return true;
        }
        if (j >= n || s[j] != ',')
            break;
        i = skip_ws(s, n, j + 1);
    }
    free(*out);
    *out = NULL;
    return false;
}

/* Whether the key token s[ks, ke) decodes to key (escapes such as \u005f decoded). */
static bool key_is(const unsigned char *s, size_t ks, size_t ke, const char *key)
{
    size_t kl = strlen(key);
    if (!memchr(s + ks, '\\', ke - ks))
        return ke - ks == kl + 2 && memcmp(s + ks + 1, key, kl) == 0;
    json_error_t je;
    json_t *j = json_loadb((const char *)s + ks, ke - ks, BQ_JSON_FLAGS, &je);
    bool r = json_is_string(j) && json_string_length(j) == kl &&
             memcmp(json_string_value(j), key, kl) == 0;
    json_decref(j);
    return r;
}

/* Appends the object at s[open] with the edits applied: kept members, the separators and
 * white space between them, and every value not edited are copied byte for byte. */
static bool object_edit(const unsigned char *s, size_t n, size_t open,
                        const struct member_edit *eds, size_t neds, struct strbuf *out, size_t *end)
{
    struct span_member *m;
    size_t count, close, sub_end;
    if (!object_scan(s, n, open, &m, &count, &close))
        return false;
    *end = close + 1;
    bool ok = true, first = true, seen[8] = {false};
    if (neds > sizeof seen / sizeof *seen)
        neds = sizeof seen / sizeof *seen;
    sb_addc(out, '{');
    size_t lead_end = count ? m[0].ks : close;
    sb_add(out, s + open + 1, lead_end - open - 1);
    for (size_t k = 0; k < count && ok; k++) {
        const struct member_edit *e = NULL;
        for (size_t x = 0; x < neds && !e; x++)
            if (key_is(s, m[k].ks, m[k].ke, eds[x].key)) {
                e = &eds[x];
                seen[x] = true;
            }
        if (e && e->remove)
            continue;
        if (!first)
            sb_add(out, s + m[k - 1].ve, m[k].ks - m[k - 1].ve);
        first = false;
        sb_add(out, s + m[k].ks, m[k].vs - m[k].ks);
        if (e && e->value)
            sb_adds(out, e->value);
        else if (e && e->sub && s[m[k].vs] == '{')
            ok = object_edit(s, m[k].ve, m[k].vs, e->sub, e->nsub, out, &sub_end);
        else
            sb_add(out, s + m[k].vs, m[k].ve - m[k].vs);
    }
    for (size_t x = 0; x < neds && ok; x++) {
        if (seen[x] || !eds[x].append || !eds[x].value)
            continue;
        if (!first)
            sb_addc(out, ',');
        first = false;
        sb_addf(out, "\"%s\":%s", eds[x].key, eds[x].value);
    }
    size_t trail = count ? m[count - 1].ve : close;
    sb_add(out, s + trail, close - trail);
    sb_addc(out, '}');
    free(m);
    return ok;
}

/* The same edits on the parsed document, to check the bytes against. */
static void doc_edit(json_t *obj, const struct member_edit *eds, size_t neds)
{
    for (size_t x = 0; x < neds; x++) {
        json_t *cur = json_object_get(obj, eds[x].key);
        if (eds[x].remove) {
            json_object_del(obj, eds[x].key);
        } else if (eds[x].value && (cur || eds[x].append)) {
            json_object_set_new(obj, eds[x].key, json_loads(eds[x].value, BQ_JSON_FLAGS, NULL));
        } else if (eds[x].sub && json_is_object(cur)) {
            doc_edit(cur, eds[x].sub, eds[x].nsub);
        }
    }
}

/* A JSON string as jansson writes it (UTF-8 and '/' literal); NULL when not UTF-8. */
static char *json_text(const struct bytes *b)
{
    json_t *j = json_stringn(b->len ? (const char *)b->data : "", b->len);
    char *s = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
    json_decref(j);
    return s;
}

/* Sets (or adds, last one wins) the edit of key in a list of at most 8. */
static struct member_edit *edit_slot(struct member_edit *eds, size_t *n, const char *key)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(eds[i].key, key) == 0) {
            free(eds[i].value);
            memset(&eds[i], 0, sizeof eds[i]);
            eds[i].key = key;
            return &eds[i];
        }
    memset(&eds[*n], 0, sizeof eds[*n]);
    eds[*n].key = key;
    return &eds[(*n)++];
}

static const char *bq_refusal(enum env_field f)
{
    static const char *const why[] = {
        [EF_ID] = "meta.id is the producer's and immutable (a re-issue mints a new one)",
        [EF_VERSION] = "meta.schema_version is the envelope's schema, not the job's version",
        [EF_CAUSATION] = "BabelQueue envelopes have no causation field (a parent link is the W3C "
                         "traceparent header)",
        [EF_FIRST_SEEN] = "meta.created_at is the producer's and immutable",
        [EF_ORIGIN] = "meta.lang is the producer's and immutable",
        [EF_ERROR] = "the error lives in dead_letter, which a replay removes",
        [EF_CLAIM] = "BabelQueue envelopes have no claim field",
    };
    return (size_t)f < sizeof why / sizeof *why && why[f] ? why[f] : "no such field";
}

/* dead_letter.original_queue, else meta.queue — of the dead letter, else of its new body. */
static enum status bq_target(const struct decoded *d, const struct bq_envelope *replacement,
                             struct outgoing *out, struct error *err)
{
    const struct source *s = &d->source;
    bool orig = s->how && strcmp(s->how, "dead_letter.original_queue") == 0;
    if ((orig || (s->how && strcmp(s->how, "meta.queue") == 0)) && s->routing_key.len) {
        rk_target(out, s->how, "", 0, s->routing_key.data, s->routing_key.len);
        return ST_OK;
    }
    const char *q;
    size_t qn;
    if (replacement && bq_source_queue(replacement, &q, &qn) && qn) {
        bool o = replacement->dead_letter.original_queue.s &&
                 replacement->dead_letter.original_queue.len;
        rk_target(out, o ? "dead_letter.original_queue" : "meta.queue", "", 0, q, qn);
        return ST_OK;
    }
    return rk_no_target(d, "neither dead_letter.original_queue nor meta.queue names a queue", err);
}

/* Re-issue (a new message, caused by the old one): BabelQueue has no causation field, so the
 * link to the dead letter is not carried in the envelope; trace_id keeps the chain. */
static enum status build_bq(const struct decoded *d, const struct restamp_opts *o, bool need_target,
                            struct outgoing *out, struct error *err)
{
    struct bq_envelope own;
    const struct bq_envelope *b = decoded_bq(d);
    const struct bytes *body = o->body ? o->body : &d->msg->body;
    memset(&own, 0, sizeof own);
    if (o->body) {
        bq_parse(body->len ? (const void *)body->data : "", body->len, NULL, &own);
        b = &own;
        if (own.reason == BQ_MALFORMED_JSON || own.reason == BQ_NOT_AN_OBJECT ||
            own.reason == BQ_UNDECODABLE_BODY) {
            error_set(err, ST_EPARSE, "the new body is not a BabelQueue envelope: %s (%s)",
                      bq_reason_name(own.reason), bq_reason_text(own.reason));
            bq_envelope_free(&own);
            return ST_EPARSE;
        }
    } else if (!json_is_object(b->doc) || b->raw_wrapped) {
        return error_set(err, ST_EUNSUPPORTED,
                         "this BabelQueue dead letter cannot be replayed as it is: %s (%s); "
                         "give it a new body to send",
                         bq_reason_name(b->reason), bq_reason_text(b->reason));
    }
    if (bq_detect_doc(b->doc, NULL) == BQ_DETECT_NONE) {
        bq_envelope_free(&own);
        return error_set(err, o->body ? ST_EPARSE : ST_EUNSUPPORTED,
                         "the body is not a BabelQueue envelope (no job or urn beside meta, "
                         "trace_id, data or attempts)%s",
                         o->body ? "" : ": give it a new body to send");
    }
    enum status st = need_target ? bq_target(d, b, out, err) : ST_OK;

    /* The mode's edits, then the changes, each a member of the top-level object. */
    struct member_edit top[8], meta[8];
    size_t ntop = 0, nmeta = 0;
    edit_slot(top, &ntop, "dead_letter")->remove = true;
    struct member_edit *ed = edit_slot(top, &ntop, "attempts");
    ed->value = xstrdup("0");
    ed->append = true;
    /* The forbidden legacy keys: the SDKs' decoders drop them (with a warning) and their
     * encoders never write them, so a redrive through an SDK loses them (conformance
     * forbidden_keys). */
    edit_slot(top, &ntop, "timestamp")->remove = true;
    static const char *const meta_forbidden[] = {"max_retries", "attempts", "source", "ts"};
    for (size_t i = 0; i < sizeof meta_forbidden / sizeof *meta_forbidden; i++)
        edit_slot(meta, &nmeta, meta_forbidden[i])->remove = true;
    if (o->mode == RESTAMP_REISSUE) {
        ed = edit_slot(meta, &nmeta, "id");
        ed->value = json_text(&out->id);
        ed->append = true;
        ed = edit_slot(meta, &nmeta, "created_at");
        ed->value = xasprintf("%lld", (long long)o->now_ms);
        ed->append = true;
        props_set_string(&out->props, PROP_message_id, out->id.data, out->id.len);
    }
    ed = edit_slot(top, &ntop, "meta");
    ed->sub = meta;
    ed->nsub = nmeta;
    /* x-attempts mirrors attempts (native-typed, as the producers write it). */
    rk_counter_set(out->headers, "x-attempts", 0);
    if (o->bq_bypass)
        htable_set(out->headers, "bq-replay-bypass", hval_cstring("1"));
    for (size_t i = 0; i < o->n_changes && st == ST_OK; i++) {
        const struct env_change *c = &o->changes[i];
        const char *key = NULL;
        enum prop_flag pf = PROP_type;
        if (c->field == EF_TYPE) {
            key = b->job_key == BQ_JOB_KEY_URN ? "urn" : "job";
        } else if (c->field == EF_CORRELATION) {
            key = "trace_id";
            pf = PROP_correlation_id;
        } else if (c->field == EF_ATTEMPT) {
            ed = edit_slot(top, &ntop, "attempts");
            ed->value = xasprintf("%lld", (long long)c->number);
            ed->append = true;
            rk_counter_set(out->headers, "x-attempts", c->number);
            continue;
        } else if (c->field == EF_HEADER_SET || c->field == EF_HEADER_REMOVE) {
            st = rk_header_change(out->headers, c, err);
            continue;
        } else {
            st = error_set(err, ST_EUNSUPPORTED, "%s cannot be changed on a BabelQueue message: %s",
                           rk_field_name(c->field), bq_refusal(c->field));
            break;
        }
        char *v = json_text(&c->text);
        if (!v) {
            st =
                error_set(err, ST_EINVAL, "the new %s is not valid UTF-8", rk_field_name(c->field));
            break;
        }
        ed = edit_slot(top, &ntop, key);
        ed->value = v;
        ed->append = true;
        if (props_has(&out->props, pf))
            props_set_string(&out->props, pf, c->text.data, c->text.len);
    }

    struct strbuf sb;
    sb_init(&sb);
    const unsigned char *s = body->len ? body->data : (const unsigned char *)"";
    size_t open = skip_ws(s, body->len, 0), end = 0;
    if (st == ST_OK) {
        sb_add(&sb, s, open);
        if (open >= body->len || s[open] != '{' ||
            !object_edit(s, body->len, open, top, ntop, &sb, &end))
            st = error_set(err, ST_EPARSE, "the BabelQueue body could not be scanned for editing");
    }
    struct bq_envelope nb;
    memset(&nb, 0, sizeof nb);
    if (st == ST_OK) {
        /* After the object: the trailing white space, as it was. */
        sb_add(&sb, s + end, body->len - end);
        bq_parse(sb.buf, sb.len, NULL, &nb);
        json_t *want = json_deep_copy(b->doc);
        doc_edit(want, top, ntop);
        if (nb.reason != BQ_OK)
            st = error_set(err, ST_EPARSE,
                           "the BabelQueue consumers would reject the edited envelope: %s (%s)",
                           bq_reason_name(nb.reason), bq_reason_text(nb.reason));
        else if (!json_equal(want, nb.doc))
            st = error_set(err, ST_EPARSE,
                           "the edited BabelQueue body does not read as the edit meant (a bug)");
        json_decref(want);
    }
    if (st == ST_OK) {
        size_t len;
        char *nbody = sb_detach(&sb, &len);
        bytes_free(&out->body);
        out->body = (struct bytes){len, (unsigned char *)nbody};
        /* The AMQP projection: message_id = meta.id (the body wins). */
        if (nb.meta.id.s) {
            bytes_free(&out->id);
            out->id = bytes_dup(nb.meta.id.s, nb.meta.id.len);
            if (props_has(&out->props, PROP_message_id))
                props_set_string(&out->props, PROP_message_id, out->id.data, out->id.len);
        }
    }
    sb_free(&sb);
    bq_envelope_free(&nb);
    for (size_t i = 0; i < ntop; i++)
        free(top[i].value);
    for (size_t i = 0; i < nmeta; i++)
        free(meta[i].value);
    bq_envelope_free(&own);
    return st;
}

enum status bq_restamp(const struct decoded *d, const struct restamp_opts *o,
                       const struct bytes *dlq, struct outgoing *out, struct error *err)
{
    (void)dlq;
    return build_bq(d, o, !rk_has_target(out), out, err);
}
