/*
 * acemq: reading and writing the x-acemq-* envelope headers.
 */
#include "acemq.h"

#include <string.h>

#include "util.h"

/* The reserved names, each with its length: a name is compared only with those of its length
 * (bytes_eq_cstr with each in turn, through their shared "x-acemq-", was 6% of dlqx tree). */
#define NAME(s)                                                                                    \
    {                                                                                              \
        s, sizeof s - 1                                                                            \
    }
static const struct {
    const char *s;
    size_t n;
} known_reserved[] = {
    NAME(ACEMQ_ID),        NAME(ACEMQ_TYPE),    NAME(ACEMQ_VERSION),    NAME(ACEMQ_CORRELATION),
    NAME(ACEMQ_CAUSATION), NAME(ACEMQ_ATTEMPT), NAME(ACEMQ_FIRST_SEEN), NAME(ACEMQ_ORIGIN),
    NAME(ACEMQ_ERROR),     NAME(ACEMQ_CLAIM),   NAME(ACEMQ_ROUTE),      NAME(ACEMQ_ROUTE_POSITION),
    NAME(ACEMQ_ROUTE_ID),
};
#undef NAME
/* known_reserved's indexes, in its order; [FIRST_ROUTE..12]: the route's names */
enum {
    K_ID,
    K_TYPE,
    K_VERSION,
    K_CORRELATION,
    K_CAUSATION,
    K_ATTEMPT,
    K_FIRST_SEEN,
    K_ORIGIN,
    K_ERROR,
    K_CLAIM,
    FIRST_ROUTE
};

/* The index of k in known_reserved, or -1. */
static int reserved_index(const struct bytes *k)
{
    for (size_t i = 0; i < sizeof known_reserved / sizeof *known_reserved; i++)
        if (k->len == known_reserved[i].n && memcmp(k->data, known_reserved[i].s, k->len) == 0)
            return (int)i;
    return -1;
}

bool acemq_detect(const struct htable *headers)
{
    for (size_t i = 0; headers && i < headers->n; i++)
        if (acemq_reserved_name(headers->e[i].key.data, headers->e[i].key.len))
            return true;
    return false;
}

/* text(value): "" when absent or not text-like (AceMQ reads such a value as empty), as
 * hval_as_text reads it, borrowed (an integer written into buf). */
static struct bytes text(const struct hval *v, char buf[24])
{
    static unsigned char empty[1];
    struct bytes b = {0, empty};
    if (!v)
        return b;
    if (v->kind == HV_STRING || v->kind == HV_BYTES) {
        if (v->v.s.data)
            b = v->v.s;
        return b;
    }
    struct bytes t; /* rare: an id or error written as a number ("%lld" fits in buf) */
    if (!hval_as_text(v, &t))
        return b;
    size_t n = t.len < 23 ? t.len : 23;
    memcpy(buf, t.data, n);
    buf[n] = '\0';
    bytes_free(&t);
    return (struct bytes){n, (unsigned char *)buf};
}

static void add_copy(struct htable **t, const struct hentry *e)
{
    if (!*t)
        *t = htable_new();
    htable_addn(*t, e->key.data, e->key.len, hval_copy(&e->val));
}

static int64_t number(const struct hval *v, int64_t fallback, bool *defaulted)
{
    int64_t n;
    if (hval_as_int64_lenient(v, &n)) {
        *defaulted = false;
        return n;
    }
    *defaulted = true;
    return fallback;
}

/* The envelope's own fields from own[] as acemq_from_headers reads them, borrowed (from the
 * headers' values, message_id, routing_key, a static text or buf); the id is left empty when
 * it would be derived from the message's digest (no id header's text, no message_id). */
static void own_fields(const struct hval *const own[FIRST_ROUTE], const struct bytes *routing_key,
                       const struct bytes *message_id, int64_t now_ms, struct envelope_init *in,
                       char buf[7][24])
{
    struct bytes id = text(own[K_ID], buf[0]);
    if (!id.len && message_id && message_id->len)
        id = *message_id;
    struct bytes type = text(own[K_TYPE], buf[1]);
    if (!type.len) {
        in->defaulted |= ED_TYPE;
        if (routing_key && routing_key->len)
            type = *routing_key;
        else
            type = (struct bytes){7, (unsigned char *)"message"};
    }
    struct bytes corr = text(own[K_CORRELATION], buf[2]);
    if (!corr.len)
        in->defaulted |= ED_CORRELATION;
    bool dv, da, df;
    in->version = number(own[K_VERSION], 1, &dv);
    in->attempt = number(own[K_ATTEMPT], 1, &da);
    in->first_seen_ms = number(own[K_FIRST_SEEN], now_ms, &df);
    in->defaulted |= (dv ? ED_VERSION : 0) | (da ? ED_ATTEMPT : 0) | (df ? ED_FIRST_SEEN : 0);

    in->id = id;
    in->type = type;
    in->correlation_id = corr;
    in->causation_id = text(own[K_CAUSATION], buf[3]);
    in->origin = text(own[K_ORIGIN], buf[4]);
    in->error = text(own[K_ERROR], buf[5]);
    in->claim = text(own[K_CLAIM], buf[6]);
}

bool acemq_fields(const struct htable *h, const struct bytes *routing_key,
                  const struct bytes *message_id, int64_t now_ms, struct envelope_init *in,
                  char buf[7][24])
{
    memset(in, 0, sizeof *in);
    const struct hval *own[FIRST_ROUTE] = {NULL};
    for (size_t i = 0; h && i < h->n; i++) {
        const struct hentry *e = &h->e[i];
        if (!acemq_reserved_name(e->key.data, e->key.len))
            continue;
        int r = reserved_index(&e->key);
        if (r >= 0 && r < FIRST_ROUTE && !own[r])
            own[r] = &e->val;
    }
    own_fields(own, routing_key, message_id, now_ms, in, buf);
    return in->id.len != 0;
}

enum status acemq_from_headers(const struct htable *h, const struct bytes *routing_key,
                               const struct bytes *message_id, const struct bytes *digest,
                               int64_t now_ms, const struct envelope **out, struct error *err)
{
    struct envelope_init in;
    memset(&in, 0, sizeof in);
    in.refuse_reserved = false; /* the split below already keeps them apart */

    /* made when a header goes in: the envelope has empty ones of its own */
    struct htable *app = NULL, *route = NULL, *unknown = NULL;
    /* One pass: the envelope's own headers (the first of each name, as htable_get finds it)
     * are noted as they are met, not looked up by name one by one. */
    const struct hval *own[FIRST_ROUTE] = {NULL};
    for (size_t i = 0; h && i < h->n; i++) {
        const struct hentry *e = &h->e[i];
        if (!acemq_reserved_name(e->key.data, e->key.len)) {
            add_copy(&app, e);
            continue;
        }
        int r = reserved_index(&e->key);
        if (r >= FIRST_ROUTE)
            add_copy(&route, e);
        else if (r < 0)
            add_copy(&unknown, e);
        else if (!own[r])
            own[r] = &e->val;
    }

    /* The strings are borrowed: the envelope copies them into its own block. */
    char buf[7][24];
    struct bytes derived = {0, NULL};
    own_fields(own, routing_key, message_id, now_ms, &in, buf);
    if (!in.id.len) {
        in.id = derived = envelope_derived_id(digest);
        in.defaulted |= ED_ID;
    }
    in.headers = app;
    in.route = route;
    in.reserved_unknown = unknown;
    /* the tables are this function's own: taken, not copied and freed */
    enum status st = envelope_take_tables(&in, out, err);
    bytes_free(&derived);
    return st;
}

static struct hval int_header(int64_t v)
{
    /* Java writes version and attempt as int; a value beyond int keeps its width as long. */
    if (v >= INT32_MIN && v <= INT32_MAX)
        return hval_int(HV_I32, v);
    return hval_int(HV_I64, v);
}

static void put_text(struct htable *t, const char *name, const struct bytes *b)
{
    htable_addn(t, name, strlen(name), hval_string(b->data ? (const void *)b->data : "", b->len));
}

struct htable *acemq_to_headers(const struct envelope *e, const struct bytes *routing_key)
{
    struct htable *t = htable_new();
    put_text(t, ACEMQ_ID, &e->id);
    if (e->type.len)
        put_text(t, ACEMQ_TYPE, &e->type);
    else if (routing_key && routing_key->len)
        put_text(t, ACEMQ_TYPE, routing_key);
    else
        htable_add(t, ACEMQ_TYPE, hval_cstring("message"));
    htable_add(t, ACEMQ_VERSION, int_header(e->version));
    put_text(t, ACEMQ_CORRELATION, e->correlation_id.len ? &e->correlation_id : &e->id);
    htable_add(t, ACEMQ_ATTEMPT, int_header(e->attempt));
    htable_add(t, ACEMQ_FIRST_SEEN, hval_int(HV_I64, e->first_seen_ms));
    /* Absent rather than empty. */
    if (e->causation_id.len)
        put_text(t, ACEMQ_CAUSATION, &e->causation_id);
    if (e->origin.len)
        put_text(t, ACEMQ_ORIGIN, &e->origin);
    if (e->error.len)
        put_text(t, ACEMQ_ERROR, &e->error);
    if (e->claim.len)
        put_text(t, ACEMQ_CLAIM, &e->claim);
    for (size_t i = 0; i < e->route->n; i++)
        htable_addn(t, e->route->e[i].key.data, e->route->e[i].key.len,
                    hval_copy(&e->route->e[i].val));
    for (size_t i = 0; i < e->reserved_unknown->n; i++)
        htable_addn(t, e->reserved_unknown->e[i].key.data, e->reserved_unknown->e[i].key.len,
                    hval_copy(&e->reserved_unknown->e[i].val));
    for (size_t i = 0; i < e->headers->n; i++)
        htable_addn(t, e->headers->e[i].key.data, e->headers->e[i].key.len,
                    hval_copy(&e->headers->e[i].val));
    return t;
}

void acemq_replay_read(const struct htable *h, struct acemq_replay *out)
{
    memset(out, 0, sizeof *out);
    /* The first of each name, as htable_get finds it, in one pass over the headers (three
     * htable_get were 1.4% of dlqx groups, for stamps most messages do not carry). */
    static const char *const names[3] = {ACEMQ_REPLAYED_FROM, ACEMQ_REPLAYED_AT,
                                         ACEMQ_REPLAY_COUNT};
    static const size_t lens[3] = {sizeof ACEMQ_REPLAYED_FROM - 1, sizeof ACEMQ_REPLAYED_AT - 1,
                                   sizeof ACEMQ_REPLAY_COUNT - 1};
    const struct hval *found[3] = {NULL, NULL, NULL};
    for (size_t i = 0; h && i < h->n; i++) {
        const struct bytes *k = &h->e[i].key;
        if (k->len < sizeof ACEMQ_REPLAYED_AT - 1 || k->data[0] != 'a')
            continue;
        for (size_t j = 0; j < 3; j++)
            if (!found[j] && k->len == lens[j] && memcmp(k->data, names[j], lens[j]) == 0)
                found[j] = &h->e[i].val;
    }
    const struct hval *from = found[0], *at = found[1], *count = found[2];
    out->present = from || at || count;
    if (from && !hval_as_text(from, &out->from))
        out->from = bytes_dup("", 0);
    if (at) {
        const struct bytes *s = hval_str(at);
        int64_t ms;
        if (s && time_parse_rfc3339((const char *)s->data, s->len, &ms)) {
            out->has_at = true;
            out->at_ms = ms;
        } else if (hval_as_int64_lenient(at, &ms)) {
            out->has_at = true;
            out->at_ms = ms;
        } else if (at->kind == HV_TIMESTAMP && at->v.u <= (uint64_t)INT64_MAX / 1000) {
            out->has_at = true;
            out->at_ms = (int64_t)(at->v.u * 1000);
        } else {
            out->at_unreadable = true;
        }
    }
    int64_t c;
    if (count && hval_as_int64_lenient(count, &c) && c > 0)
        out->count = c;
}

void acemq_replay_free(struct acemq_replay *r)
{
    bytes_free(&r->from);
}

size_t acemq_source_queue(const struct bytes *dlq)
{
    static const char *const suffixes[] = {".dlq", ".parked", ".dead", NULL};
    for (size_t i = 0; suffixes[i]; i++) {
        size_t n = strlen(suffixes[i]);
        if (dlq->len > n && memcmp(dlq->data + dlq->len - n, suffixes[i], n) == 0)
            return dlq->len - n;
    }
    return 0;
}
