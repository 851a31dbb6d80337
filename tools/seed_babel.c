/*
 * seed_babel: BabelQueue as its SDKs put it on the wire — the envelope (schema_version 1, or
 * what an SDK writes anyway), the dead_letter block an SDK adds when it gives up, and the AMQP
 * projection (type, correlation_id, message_id, app_id, content type and encoding, persistent;
 * native-typed x-schema-version, x-source-lang, x-attempts) — and the incident's SDK dead
 * letters: PHP, Python, Go, Java, Node and .NET failures, the urn alias, schema_version 2, and
 * undecodable bodies raw and wrapped.
 */
#include "seed.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_MS 60000L
#define HOUR_MS 3600000L

struct bq {
    struct seed *s;
    struct rng *r;
    const struct babel_queues *q;
};

static struct hval native_int(const char *lang, int64_t v)
{
    /* What each SDK's AMQP client writes for an integer: Go's amqp091 an int64, the others
     * an int32 while it fits. */
    return strcmp(lang, "go") == 0 ? hval_int(HV_I64, v) : hval_int(HV_I32, v);
}

void babel_publish(struct seed *s, const char *exchange, const char *rk, const struct babel_msg *m)
{
    json_t *meta = json_object();
    json_object_set_new(meta, "id", json_string(m->id));
    json_object_set_new(meta, "queue", json_string(m->queue));
    json_object_set_new(meta, "lang", json_string(m->lang));
    json_object_set_new(meta, "schema_version", json_integer(m->schema_version));
    json_object_set_new(meta, "created_at", json_integer(m->created_at));
    json_t *env = json_object();
    json_object_set_new(env, m->urn_alias ? "urn" : "job", json_string(m->job));
    json_object_set_new(env, "trace_id", json_string(m->trace_id));
    json_object_set_new(env, "data", m->data ? m->data : json_object());
    json_object_set_new(env, "meta", meta);
    json_object_set_new(env, "attempts", json_integer(m->attempts));
    if (m->dead) {
        json_t *dl = json_object();
        json_object_set_new(dl, "reason", json_string(m->reason));
        json_object_set_new(dl, "error", m->error ? json_string(m->error) : json_null());
        json_object_set_new(dl, "exception",
                            m->exception ? json_string(m->exception) : json_null());
        json_object_set_new(dl, "failed_at", json_integer(m->failed_at));
        json_object_set_new(dl, "original_queue", json_string(m->original_queue));
        json_object_set_new(dl, "attempts", json_integer(m->dl_attempts));
        json_object_set_new(dl, "lang", json_string(m->lang));
        json_object_set_new(env, "dead_letter", dl);
    }
    /* Python's json.dumps separates with ", " and ": "; the other SDKs write compact JSON. */
    size_t flags = strcmp(m->lang, "python") == 0 ? 0 : JSON_COMPACT;
    char *body = json_dumps(env, flags);
    json_decref(env);
    if (!body)
        seed_fail("encoding a BabelQueue envelope failed");

    struct props p;
    props_basic(&p, "application/json", m->id);
    props_set_string(&p, PROP_type, m->job, strlen(m->job));
    props_set_string(&p, PROP_correlation_id, m->trace_id, strlen(m->trace_id));
    props_set_string(&p, PROP_app_id, "babelqueue", 10);
    props_set_string(&p, PROP_content_encoding, "utf-8", 5);
    struct htable *h = htable_new();
    htable_add(h, "x-schema-version", native_int(m->lang, m->schema_version));
    htable_add(h, "x-source-lang", hval_cstring(m->lang));
    htable_add(h, "x-attempts", native_int(m->lang, m->attempts));
    if (m->traceparent)
        htable_add(h, "traceparent", hval_cstring(m->traceparent));
    seed_publish(s, exchange, rk, &p, h, body, strlen(body));
    htable_free(h);
    props_clear(&p);
    free(body);
}

/* --- the incident's SDK dead letters ----------------------------------------------------- */

static void babel_dead(struct bq *x, const char *dlq, const char *queue, const char *job,
                       const char *lang, const char *reason, const char *error,
                       const char *exception, json_t *data)
{
    char tid[37], mid[37], tp[64];
    rng_uuid(x->r, tid);
    rng_uuid(x->r, mid);
    int64_t created = x->s->now_ms - rng_range(x->r, 10 * MIN_MS, 4 * HOUR_MS);
    int attempts = (int)rng_range(x->r, 1, 5);
    char hex[33];
    size_t k = 0;
    for (const char *c = tid; *c; c++)
        if (*c != '-')
            hex[k++] = *c;
    hex[k] = '\0';
    snprintf(tp, sizeof tp, "00-%s-%016" PRIx64 "-01", hex, rng_next(x->r));
    int64_t failed_at = created + rng_range(x->r, 2000, 90000);
    bool with_tp = rng_range(x->r, 0, 1) != 0;
    struct babel_msg b = {.job = job,
                          .trace_id = tid,
                          .data = data,
                          .id = mid,
                          .queue = queue,
                          .lang = lang,
                          .schema_version = 1,
                          .created_at = created,
                          .attempts = attempts,
                          .dead = true,
                          .reason = reason,
                          .error = error,
                          .exception = exception,
                          .failed_at = failed_at,
                          .original_queue =
                              strcmp(queue, "billing") == 0 ? x->q->billing : x->q->notify,
                          .dl_attempts = attempts,
                          .traceparent = with_tp ? tp : NULL};
    if (strcmp(reason, "unknown_urn") == 0)
        b.urn_alias = true; /* an old Go producer that still writes "urn" */
    if (strcmp(reason, "poison") == 0 && strcmp(lang, "java") == 0)
        b.schema_version = 2;
    babel_publish(x->s, "", dlq, &b);
    seed_expect_add(x->s, dlq, 1);
}

void babel_sdk_dead_letters(struct seed *s, const struct babel_queues *q)
{
    struct bq ctx = {s, &s->rng, q}, *x = &ctx;
    char err[300];
    for (int i = 0; i < 3; i++) {
        snprintf(err, sizeof err,
                 "cURL error 28: Operation timed out after %d milliseconds with 0 "
                 "bytes received",
                 (int)rng_range(x->r, 30000, 30090));
        int invoice = (int)rng_range(x->r, 1000, 9999);
        int cents = (int)rng_range(x->r, 100, 99999);
        babel_dead(x, x->q->billing_dlq, "billing", "urn:babel:billing:invoice.charge", "php",
                   "failed", err, "GuzzleHttp\\Exception\\ConnectException",
                   json_pack("{s:i,s:i,s:s}", "invoice_id", invoice, "amount_cents", cents,
                             "currency", "EUR"));
    }
    for (int i = 0; i < 2; i++) {
        snprintf(err, sizeof err,
                 "HTTPSConnectionPool(host='api.psp.example', port=443): Read "
                 "timed out. (read timeout=%d)",
                 10 + i * 5);
        babel_dead(x, x->q->billing_dlq, "billing", "urn:babel:billing:refund.issue", "python",
                   "failed", err, "requests.exceptions.ReadTimeout",
                   json_pack("{s:i,s:s}", "refund_id", (int)rng_range(x->r, 100, 999), "reason",
                             "duplicate"));
    }
    babel_dead(x, x->q->billing_dlq, "billing", "urn:babel:billing:ledger.post", "go",
               "max_attempts", "pq: deadlock detected", "*pq.Error",
               json_pack("{s:i}", "entry", 88123));
    babel_dead(x, x->q->billing_dlq, "billing", "urn:babel:billing:invoice.void", "go",
               "unknown_urn", "no handler is mapped to urn:babel:billing:invoice.void", NULL,
               json_pack("{s:i}", "invoice_id", 4410));
    babel_dead(x, x->q->billing_dlq, "billing", "urn:babel:billing:invoice.charge", "java",
               "poison", "unsupported_schema_version: meta.schema_version 2 is not supported",
               "com.babelqueue.envelope.UnsupportedSchemaException",
               json_pack("{s:i}", "invoice_id", 4411));
    for (int i = 0; i < 3; i++) {
        snprintf(err, sizeof err,
                 "Twilio error 21211: The 'To' number +1555010%04d is not a "
                 "valid phone number.",
                 (int)rng_range(x->r, 0, 9999));
        babel_dead(x, x->q->notify_dlq, "notify", "urn:babel:notify:sms.send", "node", "failed",
                   err, "RestException", json_pack("{s:s}", "template", "otp"));
    }
    for (int i = 0; i < 2; i++)
        babel_dead(x, x->q->notify_dlq, "notify", "urn:babel:notify:push.send", "dotnet", "failed",
                   "Response status code does not indicate success: 410 (Gone).",
                   "System.Net.Http.HttpRequestException",
                   json_pack("{s:s}", "device", i ? "ios" : "android"));

    /* Undecodable: wrapped as {"raw": …, "dead_letter": …} by PHP, and left raw by Node. */
    const char *raw = "{\"job\": \"urn:babel:billing:invoice.charge\", \"data\": {oops";
    json_t *dl =
        json_pack("{s:s,s:s,s:s,s:I,s:s,s:i,s:s}", "reason", "poison", "error", "Syntax error",
                  "exception", "JsonException", "failed_at", (json_int_t)(s->now_ms - 47 * MIN_MS),
                  "original_queue", x->q->billing, "attempts", 1, "lang", "php");
    json_t *w = json_pack("{s:s,s:o}", "raw", raw, "dead_letter", dl);
    char *body = json_dumps(w, JSON_COMPACT);
    json_decref(w);
    struct props p;
    props_basic(&p, "application/json", NULL);
    props_set_string(&p, PROP_app_id, "babelqueue", 10);
    props_set_string(&p, PROP_content_encoding, "utf-8", 5);
    struct htable *h = htable_new();
    htable_add(h, "x-source-lang", hval_cstring("php"));
    seed_publish(s, "", x->q->billing_dlq, &p, h, body, strlen(body));
    free(body);
    htable_free(h);
    static const char truncated[] = "{\"job\":\"urn:babel:notify:sms.send\",\"trace_id\":\"9c1e";
    seed_publish(s, "", x->q->notify_dlq, &p, NULL, truncated, sizeof truncated - 1);
    props_clear(&p);
    seed_expect_add(s, x->q->billing_dlq, 1);
    seed_expect_add(s, x->q->notify_dlq, 1);
}
