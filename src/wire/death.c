/*
 * death: reading RabbitMQ's x-death and related headers.
 */
#include "death.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

bool death_broker_header(const void *name, size_t len)
{
    static const char *const exact[] = {"x-death", "x-delivery-count", NULL};
    static const char *const prefixes[] = {"x-first-death-", "x-last-death-", NULL};
    /* every one of them starts "x-d", "x-f" or "x-l": most headers are refused here */
    const unsigned char *p = name;
    if (len < 7 || p[0] != 'x' || p[1] != '-' || (p[2] != 'd' && p[2] != 'f' && p[2] != 'l'))
        return false;
    for (size_t i = 0; exact[i]; i++)
        if (len == strlen(exact[i]) && memcmp(name, exact[i], len) == 0)
            return true;
    for (size_t i = 0; prefixes[i]; i++) {
        size_t n = strlen(prefixes[i]);
        if (len >= n && memcmp(name, prefixes[i], n) == 0)
            return true;
    }
    return false;
}

static void warn(struct death_summary *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void warn(struct death_summary *d, const char *fmt, ...)
{
    struct strbuf sb;
    va_list ap;
    sb_init(&sb);
    va_start(ap, fmt);
    sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    d->warnings = xrealloc(d->warnings, (d->n_warnings + 1) * sizeof *d->warnings);
    d->warnings[d->n_warnings++] = sb_detach(&sb, NULL);
}

static struct bytes text_or_empty(const struct hval *v)
{
    struct bytes b = {0, NULL};
    if (!hval_as_text(v, &b))
        b = bytes_dup("", 0);
    return b;
}

static bool time_of(const struct hval *v, int64_t *ms)
{
    if (!v)
        return false;
    if (v->kind == HV_TIMESTAMP) {
        if (v->v.u > (uint64_t)INT64_MAX / 1000)
            return false;
        *ms = (int64_t)v->v.u * 1000;
        return true;
    }
    int64_t s;
    if (hval_as_int64_lenient(v, &s) && s >= 0 && s <= INT64_MAX / 1000) {
        *ms = s * 1000;
        return true;
    }
    return false;
}

static void read_entry(struct death_summary *d, size_t idx, const struct htable *t,
                       struct death_entry *e)
{
    memset(e, 0, sizeof *e);
    e->queue = text_or_empty(htable_get(t, "queue"));
    e->reason = text_or_empty(htable_get(t, "reason"));
    e->exchange = text_or_empty(htable_get(t, "exchange"));
    const struct hval *count = htable_get(t, "count");
    e->count = 1;
    if (count && (!hval_as_int64_lenient(count, &e->count) || e->count < 0)) {
        warn(d, "x-death[%zu].count is not a count (%s)", idx, hkind_name(count->kind));
        e->count = 1;
    }
    const struct hval *tv = htable_get(t, "time");
    if (tv && !(e->has_time = time_of(tv, &e->time_ms)))
        warn(d, "x-death[%zu].time is not a time (%s)", idx, hkind_name(tv->kind));
    const struct hval *rk = htable_get(t, "routing-keys");
    if (rk && rk->kind == HV_ARRAY) {
        e->routing_keys = xcalloc(rk->v.arr.n ? rk->v.arr.n : 1, sizeof *e->routing_keys);
        for (size_t i = 0; i < rk->v.arr.n; i++) {
            struct bytes b;
            if (hval_as_text(&rk->v.arr.items[i], &b))
                e->routing_keys[e->n_routing_keys++] = b;
        }
    } else if (rk) {
        warn(d, "x-death[%zu].routing-keys is not an array (%s)", idx, hkind_name(rk->kind));
    }
    const struct hval *oe = htable_get(t, "original-expiration");
    if (oe && hval_as_text(oe, &e->original_expiration))
        e->has_original_expiration = true;
}

static void take_header(const struct htable *h, const char *name, struct bytes *out)
{
    const struct hval *v = htable_get(h, name);
    if (v)
        *out = text_or_empty(v);
}

void death_read(const struct htable *h, struct death_summary *d)
{
    memset(d, 0, sizeof *d);
    for (size_t i = 0; h && i < h->n; i++)
        if (death_broker_header(h->e[i].key.data, h->e[i].key.len))
            d->present = true;
    if (!d->present)
        return;

    const struct hval *xd = htable_get(h, "x-death");
    if (xd && xd->kind != HV_ARRAY) {
        warn(d, "x-death is not an array (%s): ignored", hkind_name(xd->kind));
    } else if (xd) {
        d->entries = xcalloc(xd->v.arr.n ? xd->v.arr.n : 1, sizeof *d->entries);
        for (size_t i = 0; i < xd->v.arr.n; i++) {
            const struct hval *it = &xd->v.arr.items[i];
            if (it->kind != HV_TABLE) {
                warn(d, "x-death[%zu] is not a table (%s): skipped", i, hkind_name(it->kind));
                continue;
            }
            struct death_entry *e = &d->entries[d->n_entries++];
            read_entry(d, i, it->v.tab, e);
            if (d->total <= INT64_MAX - e->count)
                d->total += e->count;
            if (e->has_time) {
                if (!d->has_times || e->time_ms < d->first_time_ms)
                    d->first_time_ms = e->time_ms;
                if (!d->has_times || e->time_ms > d->last_time_ms)
                    d->last_time_ms = e->time_ms;
                d->has_times = true;
            }
        }
    }

    take_header(h, "x-first-death-queue", &d->first_queue);
    take_header(h, "x-first-death-reason", &d->first_reason);
    take_header(h, "x-first-death-exchange", &d->first_exchange);
    take_header(h, "x-last-death-queue", &d->last_queue);
    take_header(h, "x-last-death-reason", &d->last_reason);
    take_header(h, "x-last-death-exchange", &d->last_exchange);
    if (d->n_entries) {
        const struct death_entry *oldest = &d->entries[d->n_entries - 1];
        const struct death_entry *newest = &d->entries[0];
        if (!d->first_queue.data && !d->first_reason.data && !d->first_exchange.data) {
            d->first_queue = bytes_copy(&oldest->queue);
            d->first_reason = bytes_copy(&oldest->reason);
            d->first_exchange = bytes_copy(&oldest->exchange);
        }
        if (!d->last_queue.data && !d->last_reason.data && !d->last_exchange.data) {
            d->last_queue = bytes_copy(&newest->queue);
            d->last_reason = bytes_copy(&newest->reason);
            d->last_exchange = bytes_copy(&newest->exchange);
        }
    }
    const struct hval *dc = htable_get(h, "x-delivery-count");
    if (dc) {
        d->has_delivery_count = hval_as_int64_lenient(dc, &d->delivery_count);
        if (!d->has_delivery_count)
            warn(d, "x-delivery-count is not a number (%s)", hkind_name(dc->kind));
    }
}

const struct bytes *death_first_routing_key(const struct death_summary *d)
{
    if (!d->n_entries)
        return NULL;
    /* The first death is the oldest entry, unless x-first-death-queue names another one. */
    const struct death_entry *e = &d->entries[d->n_entries - 1];
    for (size_t i = 0; d->first_queue.len && i < d->n_entries; i++) {
        if (bytes_eq(&d->entries[i].queue, &d->first_queue) &&
            (!d->first_reason.len || bytes_eq(&d->entries[i].reason, &d->first_reason))) {
            e = &d->entries[i];
            break;
        }
    }
    return e->n_routing_keys ? &e->routing_keys[0] : NULL;
}

void death_free(struct death_summary *d)
{
    for (size_t i = 0; i < d->n_entries; i++) {
        struct death_entry *e = &d->entries[i];
        bytes_free(&e->queue);
        bytes_free(&e->reason);
        bytes_free(&e->exchange);
        for (size_t k = 0; k < e->n_routing_keys; k++)
            bytes_free(&e->routing_keys[k]);
        free(e->routing_keys);
        bytes_free(&e->original_expiration);
    }
    free(d->entries);
    bytes_free(&d->first_queue);
    bytes_free(&d->first_reason);
    bytes_free(&d->first_exchange);
    bytes_free(&d->last_queue);
    bytes_free(&d->last_reason);
    bytes_free(&d->last_exchange);
    for (size_t i = 0; i < d->n_warnings; i++)
        free(d->warnings[i]);
    free(d->warnings);
    memset(d, 0, sizeof *d);
}
