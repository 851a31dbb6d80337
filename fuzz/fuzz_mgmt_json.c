/*
 * fuzz_mgmt_json: a management API response (untrusted: the server, or whatever answers on
 * its port) through the parsers of mgmt_parse.c — queues, exchanges with policies, bindings,
 * the overview — as mgmt.c feeds them, page by page.
 *
 * Input: one selector byte, then the response body. Bits 0-1 pick the parser (queues,
 * exchanges, bindings, overview), bit 2 the vhost hint ("/" or none). For exchanges, the
 * policies are the body's "policies" member when it has one. The body is parsed by jansson
 * from exactly its bytes (ASan sees any read past them).
 *
 * Checks, beyond the sanitizers:
 *   - the documented rule of the item parsers: the response is an array of items or a page
 *     object holding "items" (else ST_EPARSE), and an item is kept exactly when it is an
 *     object whose key members (a queue's or exchange's name; a binding's source and
 *     destination) are strings without NUL and whose vhost is one or there is a hint — in
 *     order, with those names, the vhost being the hint only where the item had none;
 *   - a second page appends: parsing the same body again onto the result doubles it;
 *   - a queue's counts are -1 or more, and mgmt_queues_sort_unique leaves the queues in
 *     strictly increasing (vhost, name) order.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "fuzz.h"
#include "mgmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, const uint8_t *data, size_t size)
{
    fuzz_fail_bytes("fuzz_mgmt_json", what, data, size);
}

/* A member that a C string holds whole: a string without NUL. NULL otherwise. */
static const char *plain_str(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_string(v) || memchr(json_string_value(v), 0, json_string_length(v)))
        return NULL;
    return json_string_value(v);
}

/* Whether item o is kept, and the names it must be kept with. */
static bool kept(const json_t *o, const char *const keys[2], const char *hint, const char **k0,
                 const char **k1, const char **vhost)
{
    if (!json_is_object(o))
        return false;
    *k0 = plain_str(o, keys[0]);
    *k1 = keys[1] ? plain_str(o, keys[1]) : "";
    *vhost = plain_str(o, "vhost");
    if (!*vhost)
        *vhost = hint;
    return *k0 && *k1 && *vhost;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    unsigned sel = data[0];
    const char *hint = (sel & 4) ? "/" : NULL;
    json_t *j = json_loadb((const char *)data + 1, size - 1, JSON_ALLOW_NUL, NULL);
    if (!j)
        return 0;
    int kind = sel & 3;
    if (kind == 3) {
        struct mgmt_overview ov;
        mgmt_overview_from_json(j, &ov);
        mgmt_overview_free(&ov);
        json_decref(j);
        return 0;
    }
    static const char *const key_names[3][2] = {
        {"name", NULL}, {"name", NULL}, {"source", "destination"}};
    const char *const *keys = key_names[kind];
    const json_t *items = json_is_array(j) ? j : json_object_get(j, "items");
    const json_t *policies = json_is_object(j) ? json_object_get(j, "policies") : NULL;

    struct mgmt_queue *q = NULL;
    struct mgmt_exchange *x = NULL;
    struct mgmt_binding *b = NULL;
    size_t n = 0;
    enum status st = ST_OK;
    for (int page = 0; page < 2 && st == ST_OK; page++) {
        struct error err;
        if (kind == 0)
            st = mgmt_queues_from_json(j, hint, &q, &n, &err);
        else if (kind == 1)
            st = mgmt_exchanges_from_json(j, policies, hint, &x, &n, &err);
        else
            st = mgmt_bindings_from_json(j, hint, &b, &n, &err);
        if ((st == ST_OK) != json_is_array(items))
            fail(st == ST_OK ? "a response without items parsed" : "an array of items refused",
                 data, size);
    }
    if (st == ST_OK) {
        size_t want = 0;
        for (size_t i = 0; i < json_array_size(items); i++) {
            const char *k0, *k1, *vh;
            if (kept(json_array_get(items, i), keys, hint, &k0, &k1, &vh))
                want++;
        }
        if (n != 2 * want)
            fail("items kept are not those the rule keeps (twice, for two pages)", data, size);
        for (size_t r = 0, i = 0; r < n; i++) {
            const char *k0, *k1, *vh;
            if (!kept(json_array_get(items, i % json_array_size(items)), keys, hint, &k0, &k1, &vh))
                continue;
            const char *g0 = kind == 0 ? q[r].name : kind == 1 ? x[r].name : b[r].source;
            const char *g1 = kind == 2 ? b[r].destination : "";
            const char *gv = kind == 0 ? q[r].vhost : kind == 1 ? x[r].vhost : b[r].vhost;
            if (!g0 || !g1 || !gv || strcmp(g0, k0) || strcmp(g1, k1) || strcmp(gv, vh))
                fail("an item kept with other names than it had", data, size);
            if (kind == 0 &&
                (q[r].messages < -1 || q[r].ready < -1 || q[r].unacked < -1 ||
                 q[r].consumers < -1 || q[r].delivery_limit < -1 || q[r].max_length < -1 ||
                 q[r].max_length_bytes < -1 || q[r].message_ttl < -1 || !(q[r].publish_rate >= -1)))
                fail("a queue's count below -1 (unknown)", data, size);
            r++;
        }
        if (kind == 0) {
            n = mgmt_queues_sort_unique(q, n);
            for (size_t r = 1; r < n; r++) {
                int c = strcmp(q[r - 1].vhost, q[r].vhost);
                if (c > 0 || (c == 0 && strcmp(q[r - 1].name, q[r].name) >= 0))
                    fail("sorted queues are not in strictly increasing (vhost, name) order", data,
                         size);
            }
        }
    }
    mgmt_queues_free(&q, kind == 0 ? &n : &(size_t){0});
    mgmt_exchanges_free(&x, kind == 1 ? &n : &(size_t){0});
    mgmt_bindings_free(&b, kind == 2 ? &n : &(size_t){0});
    json_decref(j);
    return 0;
}
