/*
 * fuzz_table_large: header tables past 16 KB — up to 65 KB (a frame carries 128 KB) — made from a
 * small one, through every reader of headers. The other harnesses see tables of a few KB at
 * most (their -max_len); the encoder's buffer growth, the JSON writer's choice between a plain
 * object and the list of pairs, and every scan of a table (src/base/keyset.c) are only exercised at
 * this size here.
 *
 * Input: one byte s, one byte of flags, then an AMQP field table in wire form. The table is
 * repeated until its wire form passes 16 KiB + s x 192 bytes (16-65 KB): copy c of an entry
 * keeps its key with "#c" appended (hex; the key cut to 248 bytes first), or, when bit 0 of
 * the flags is set, copies 2k and 2k+1 share a key (duplicates, as the wire allows).
 *
 * Checks, beyond the sanitizers:
 *   - the table encodes (it fits a frame) and decodes back htable_equal;
 *   - htable_to_json writes a plain object exactly when the keys are unique, valid UTF-8,
 *     without NUL and without "type" (checked here by sorting the keys), and the snapshot
 *     round trip (fuzz_snapshot_round_trip) gives a message_equal message;
 *   - decode_message, decoded_to_json and detail_render accept it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "decode.h"
#include "detail.h"
#include "fuzz.h"
#include "hval_amqp.h"
#include "hval_json.h"
#include "message.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what, size_t n, const struct error *err)
{
    fprintf(stderr, "fuzz_table_large: %s (%zu entries)%s%s\n", what, n,
            err && err->msg[0] ? ": " : "", err && err->msg[0] ? err->msg : "");
    abort();
}

static int key_cmp(const void *pa, const void *pb)
{
    const struct bytes *a = *(const struct bytes *const *)pa, *b = *(const struct bytes *const *)pb;
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->data, b->data, n) : 0;
    return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* What table_is_plain must decide, decided another way. */
static bool plain_expected(const struct htable *t)
{
    const struct bytes **k = xcalloc(t->n ? t->n : 1, sizeof *k);
    bool plain = true;
    for (size_t i = 0; i < t->n; i++) {
        k[i] = &t->e[i].key;
        if (!utf8_valid(k[i]->data, k[i]->len) || (k[i]->len && memchr(k[i]->data, 0, k[i]->len)) ||
            bytes_eq_cstr(k[i], "type"))
            plain = false;
    }
    qsort(k, t->n, sizeof *k, key_cmp);
    for (size_t i = 1; plain && i < t->n; i++)
        if (key_cmp(&k[i - 1], &k[i]) == 0)
            plain = false;
    free(k);
    return plain;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    size_t target = 16384 + (size_t)data[0] * 192;
    bool dups = data[1] & 1;
    struct htable *small = NULL;
    if (htable_decode_wire(data + 2, size - 2, &small, NULL) != ST_OK)
        return 0;
    size_t small_len = 4 + ((size_t)data[2] << 24 | (size_t)data[3] << 16 | (size_t)data[4] << 8 |
                            (size_t)data[5]);
    if (!small->n || small_len <= 4) {
        htable_free(small);
        return 0;
    }
    struct htable *h = htable_new();
    for (size_t c = 0, len = 4; len <= target; c++) {
        for (size_t i = 0; i < small->n; i++) {
            const struct hentry *e = &small->e[i];
            size_t suffix = dups ? c / 2 : c;
            char key[256];
            size_t kl = e->key.len > 248 ? 248 : e->key.len;
            if (kl)
                memcpy(key, e->key.data, kl);
            int k = c ? snprintf(key + kl, sizeof key - kl, "#%zx", suffix) : 0;
            htable_addn(h, key, kl + (size_t)k, hval_copy(&e->val));
            len += 1 + kl + (size_t)k + 1; /* at least: key length, key, kind */
        }
        len += small_len - 4;
    }
    htable_free(small);

    struct error err;
    error_clear(&err);
    struct bytes wire = {0, NULL};
    if (htable_encode_wire(h, &wire, &err) != ST_OK)
        fail("a table that fits a frame does not encode", h->n, &err);
    struct htable *again = NULL;
    if (htable_decode_wire(wire.data, wire.len, &again, &err) != ST_OK)
        fail("an encoded table does not decode", h->n, &err);
    if (!htable_equal(h, again))
        fail("encode then decode gives a different table", h->n, NULL);
    htable_free(again);
    bytes_free(&wire);

    json_t *j = htable_to_json(h);
    bool typed = json_is_object(j) && json_object_get(j, "type");
    if (typed == plain_expected(h))
        fail(typed ? "a table of unique plain keys written typed"
                   : "a table needing the typed form written as a plain object",
             h->n, NULL);
    json_decref(j);

    struct message m;
    fuzz_message_with(&m, h);
    m.body = bytes_from_cstr("{}");
    struct strbuf line;
    sb_init(&line);
    const char *why = fuzz_snapshot_round_trip(&m, &line, &err);
    if (why)
        fail(why, h->n, &err);
    sb_free(&line);

    struct decoded d;
    decode_message(&m, FUZZ_NOW_MS, &d);
    json_t *rec = decoded_to_json(&d, FUZZ_NOW_MS);
    if (!rec)
        fail("decoded_to_json returned NULL", h->n, NULL);
    free(json_dumps(rec, JSON_COMPACT));
    json_decref(rec);
    struct detail_doc doc;
    detail_render(&d, &m, FUZZ_NOW_MS, 0, &doc);
    detail_doc_free(&doc);
    decoded_free(&d);
    message_free(&m);
    return 0;
}
