/*
 * test_body_frames: AceMQ's frames (encrypted, legacy, claim-check, registered Avro) built here
 * byte by byte from the layouts in the AceMQ libraries; hostile frames are every truncation
 * of valid ones, and random bodies never crash the classifier or put a control byte in text.
 */
#include "body_testutil.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "util.h"

/* ---- AceMQ frames ---------------------------------------------------------------------- */

/* AE 01 len key-id, a 12-byte nonce, ct_len bytes of ciphertext, a 16-byte tag. */
static size_t build_encrypted(unsigned char *out, const char *key_id, size_t ct_len)
{
    size_t n = 0, id = strlen(key_id);
    out[n++] = 0xAE;
    out[n++] = 0x01;
    out[n++] = (unsigned char)id;
    memcpy(out + n, key_id, id), n += id;
    for (size_t i = 0; i < 12 + ct_len + 16; i++)
        out[n++] = (unsigned char)(0xA0 + i % 32);
    return n;
}

static void test_encrypted(void **state)
{
    unsigned char b[128];
    size_t n = build_encrypted(b, "k-2024", 30);
    assert_int_equal(n, 67);
    struct body_info in;
    classify("application/vnd.acemq.encrypted", b, n, &in);
    assert_int_equal(in.kind, BODY_ENCRYPTED);
    assert_int_equal(in.frame, BODY_FRAME_ENCRYPTED);
    assert_string_equal(in.key_id, "k-2024");
    assert_int_equal(in.payload_off, 9);
    assert_false(in.sniffed);
    assert_summary(&in, "acemq encrypted key=k-2024 67 B");
    assert_render(&in, b, n, 0, BODY_NO_LIMIT,
                  "acemq encrypted (AES-GCM), key id: k-2024\n"
                  "12-byte nonce, 30 bytes of ciphertext, 16-byte tag\n"
                  "00000009  a0 a1 a2 a3 a4 a5 a6 a7  a8 a9 aa ab ac ad ae af  |................|\n"
                  "00000019  b0 b1 b2 b3 b4 b5 b6 b7  b8 b9 ba bb bc bd be bf  |................|\n"
                  "00000029  a0 a1 a2 a3 a4 a5 a6 a7  a8 a9 aa ab ac ad ae af  |................|\n"
                  "00000039  b0 b1 b2 b3 b4 b5 b6 b7  b8 b9                    |..........|\n");
    body_info_free(&in);

    /* Recognised by its magic with no content type or a generic one, and under a text type
     * (AE cannot start UTF-8, so no text is misread). */
    static const char *const cts[] = {NULL, "application/octet-stream", "application/json",
                                      "text/plain", "application/x-custom"};
    for (size_t i = 0; i < sizeof cts / sizeof cts[0]; i++) {
        classify(cts[i], b, n, &in);
        assert_int_equal(in.kind, BODY_ENCRYPTED);
        assert_string_equal(in.key_id, "k-2024");
        assert_true(in.sniffed);
        body_info_free(&in);
    }
    /* But not inside a named binary format, whose first byte may be anything. */
    classify("avro/binary", b, n, &in);
    assert_int_equal(in.kind, BODY_BINARY);
    body_info_free(&in);

    /* A long key id is cut in the summary. */
    char longid[256];
    memset(longid, 'k', 255);
    longid[255] = '\0';
    unsigned char big[400];
    n = build_encrypted(big, longid, 1);
    classify("application/vnd.acemq.encrypted", big, n, &in);
    assert_int_equal(in.kind, BODY_ENCRYPTED);
    assert_int_equal(strlen(in.key_id), 255);
    assert_summary(&in, "acemq encrypted key=kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\xe2\x80\xa6 "
                        "287 B");
    body_info_free(&in);
}

static void test_encrypted_legacy(void **state)
{
    struct body_info in;
    /* Go up to 0.3.0: 01, two-byte length, key id, nonce, ciphertext+tag. */
    unsigned char go[64] = {0x01, 0x00, 0x04, 'g', 'o', '-', '1'};
    classify("application/vnd.acemq.encrypted", go, 7 + 12 + 16 + 5, &in);
    assert_int_equal(in.kind, BODY_ENCRYPTED);
    assert_int_equal(in.frame, BODY_FRAME_ENCRYPTED_GO_OLD);
    assert_string_equal(in.key_id, "go-1");
    assert_summary(&in, "acemq encrypted (legacy go) key=go-1 40 B");
    body_info_free(&in);
    /* .NET up to 0.3.0: 01, one-byte length, key id, IV, ciphertext, 32-byte tag. */
    unsigned char net[80] = {0x01, 0x03, 'n', 'e', 't'};
    classify("application/vnd.acemq.encrypted", net, 5 + 16 + 16 + 32, &in);
    assert_int_equal(in.kind, BODY_ENCRYPTED);
    assert_int_equal(in.frame, BODY_FRAME_ENCRYPTED_NET_OLD);
    assert_string_equal(in.key_id, "net");
    char *got = render(&in, net, 69, 0, BODY_NO_LIMIT);
    assert_non_null(strstr(got, "16-byte IV, 16 bytes of ciphertext, 32-byte tag\n00000005  "));
    free(got);
    body_info_free(&in);
    /* Legacy framings are only read when declared: 01 alone says nothing. */
    classify(NULL, net, 69, &in);
    assert_int_equal(in.kind, BODY_BINARY);
    body_info_free(&in);
}

static void test_claim_check(void **state)
{
    struct body_info in;
    /* Inline: the payload is the delegate's bytes under the delegate's content type. */
    const char inl[] = "\xAC\x01\x00{\"orderId\":\"A-1\"}";
    size_t n = sizeof inl - 1;
    classify("application/json", inl, n, &in);
    assert_int_equal(in.kind, BODY_CLAIM_CHECK);
    assert_int_equal(in.frame, BODY_FRAME_CLAIM_INLINE);
    assert_int_equal(in.payload_off, 3);
    assert_non_null(in.inner);
    assert_int_equal(in.inner->kind, BODY_JSON);
    assert_true(in.inner->json_valid);
    assert_null(in.store_key);
    assert_summary(&in, "acemq claim-check inline json 20 B");
    assert_render(&in, inl, n, 0, BODY_NO_LIMIT,
                  "acemq claim-check: payload inline (17 bytes)\n"
                  "{\n  \"orderId\": \"A-1\"\n}\n");
    body_info_free(&in);

    /* Checked: the rest is the store key. */
    const char chk[] = "\xAC\x01\x01s3://dlq-claims/orders/2026/A-1.json";
    n = sizeof chk - 1;
    classify("application/json", chk, n, &in);
    assert_int_equal(in.kind, BODY_CLAIM_CHECK);
    assert_int_equal(in.frame, BODY_FRAME_CLAIM_CHECKED);
    assert_string_equal(in.store_key, "s3://dlq-claims/orders/2026/A-1.json");
    assert_null(in.inner);
    assert_summary(&in, "acemq claim-check store-key=s3://dlq-claims/orders/2026/A-1.json 39 B");
    assert_render(&in, chk, n, 0, BODY_NO_LIMIT,
                  "acemq claim-check: the payload is in the store, key: "
                  "s3://dlq-claims/orders/2026/A-1.json\n");
    body_info_free(&in);

    /* Under a named binary type too (a claim check keeps its delegate's type), and with no
     * type at all. */
    classify("avro/binary", chk, n, &in);
    assert_int_equal(in.kind, BODY_CLAIM_CHECK);
    body_info_free(&in);
    classify(NULL, chk, n, &in);
    assert_int_equal(in.kind, BODY_CLAIM_CHECK);
    body_info_free(&in);

    /* A store key with a newline stays on its line; a long one is cut in the summary. */
    const char nl[] = "\xAC\x01\x01"
                      "a\nb-0123456789-0123456789-0123456789-0123456789";
    classify(NULL, nl, sizeof nl - 1, &in);
    assert_summary(&in, "acemq claim-check store-key=a\\x0ab-0123456789-0123456789-0123456789-012"
                        "\xe2\x80\xa6 50 B");
    char *got = render(&in, nl, sizeof nl - 1, 0, BODY_NO_LIMIT);
    assert_int_equal(strchr(got, '\n') - got, (long)strlen(got) - 1);
    free(got);
    body_info_free(&in);

    /* Inline wrapping an encrypted body: the encrypted codec inside a claim check. */
    unsigned char enc[80] = {0xAC, 0x01, 0x00};
    size_t en = 3 + build_encrypted(enc + 3, "k1", 4);
    classify("application/vnd.acemq.encrypted", enc, en, &in);
    assert_int_equal(in.kind, BODY_CLAIM_CHECK);
    assert_int_equal(in.inner->kind, BODY_ENCRYPTED);
    assert_summary(&in, "acemq claim-check inline acemq encrypted key=k1 40 B");
    body_info_free(&in);
}

static void test_avro_registered(void **state)
{
    const unsigned char b[] = {0x00, 0x00, 0x00, 0x00, 0x11, 0x06, 'A', '-', '1'};
    struct body_info in;
    classify("application/vnd.acemq.avro", b, sizeof b, &in);
    assert_int_equal(in.kind, BODY_AVRO_REGISTERED);
    assert_int_equal(in.schema_id, 17);
    assert_int_equal(in.payload_off, 5);
    assert_summary(&in, "avro schema=17 9 B");
    assert_render(&in, b, sizeof b, 0, BODY_NO_LIMIT,
                  "avro, schema registry framing: schema id 17\n"
                  "00000005  06 41 2d 31                                       |.A-1|\n");
    body_info_free(&in);
    /* The full 32-bit range, unsigned. */
    const unsigned char hi[] = {0x00, 0xff, 0xff, 0xff, 0xfe};
    classify("application/vnd.acemq.avro", hi, sizeof hi, &in);
    assert_int_equal(in.schema_id, 4294967294u);
    body_info_free(&in);
    /* One zero byte is no magic: without the content type it is not read as a frame. */
    classify(NULL, b, sizeof b, &in);
    assert_int_equal(in.kind, BODY_BINARY);
    body_info_free(&in);
}

/* Every truncation of a valid frame, and the named hostile cases: no crash, no read past the
 * body (ASan/valgrind), a malformed frame shown as bytes. */
static void test_hostile_frames(void **state)
{
    struct body_info in;
    static const struct {
        const char *ct;
        const char *bytes;
        size_t len;
        enum body_frame frame;
        const char *note;
    } cases[] = {
        {"application/vnd.acemq.encrypted", "\xAE", 1, BODY_FRAME_ENCRYPTED,
         "the body ends after the 0xAE magic byte"},
        {"application/vnd.acemq.encrypted", "\xAE\x01", 2, BODY_FRAME_ENCRYPTED,
         "the body ends before the key id length"},
        {NULL, "\xAE\x01", 2, BODY_FRAME_ENCRYPTED, "the body ends before the key id length"},
        {NULL, "\xAE\x01\x00rest", 7, BODY_FRAME_ENCRYPTED,
         "the key id length is zero, so nothing names the key"},
        {NULL, "\xAE\x01\xFFk-1", 6, BODY_FRAME_ENCRYPTED,
         "the key id length (255) is more than the 3 bytes that follow"},
        {"application/vnd.acemq.encrypted", "\xAE\x02\x01k", 4, BODY_FRAME_ENCRYPTED,
         "encryption framing version 2 is not one AceMQ writes (1)"},
        {"application/vnd.acemq.encrypted", "\xAE\x01\x02\xff\xfe", 5, BODY_FRAME_ENCRYPTED,
         "the key id is not UTF-8 text"},
        {"application/vnd.acemq.encrypted", "\xAE\x01\x02k\0", 5, BODY_FRAME_ENCRYPTED,
         "the key id is not UTF-8 text"},
        {"application/vnd.acemq.encrypted", "{\"plain\":true}", 14, BODY_FRAME_ENCRYPTED,
         "the body does not start with 0xAE, the AceMQ encryption magic"},
        {"application/vnd.acemq.encrypted", "\x01", 1, BODY_FRAME_ENCRYPTED,
         "the body ends after its first byte"},
        {"application/vnd.acemq.encrypted", "\x01\x00\x09k", 4, BODY_FRAME_ENCRYPTED_GO_OLD,
         "the key id length (9) is more than the 1 bytes that follow"},
        {NULL, "\xAC\x01", 2, BODY_FRAME_CLAIM_CHECKED,
         "the body ends before the claim-check kind byte"},
        {NULL, "\xAC\x01\x01", 3, BODY_FRAME_CLAIM_CHECKED, "the claim check carries no store key"},
        {"application/json", "\xAC\x01\x07x", 4, BODY_FRAME_CLAIM_CHECKED,
         "claim-check kind 0x07 is neither inline (00) nor a key (01)"},
        {NULL, "\xAC\x01\x01\xc0\xaf", 5, BODY_FRAME_CLAIM_CHECKED,
         "the store key is not UTF-8 text"},
        {"application/vnd.acemq.avro", "\x00\x00\x11", 3, BODY_FRAME_AVRO_REGISTERED,
         "the body is shorter than the 5-byte schema registry header"},
        {"application/vnd.acemq.avro", "{\"a\":1}", 7, BODY_FRAME_AVRO_REGISTERED,
         "the body does not start with 0x00, the schema registry magic"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        classify(cases[i].ct, cases[i].bytes, cases[i].len, &in);
        assert_int_equal(in.kind, BODY_MALFORMED_FRAME);
        assert_int_equal(in.frame, cases[i].frame);
        assert_string_equal(in.note, cases[i].note);
        char *got = render(&in, cases[i].bytes, cases[i].len, 0, BODY_NO_LIMIT);
        assert_true(strncmp(got, "malformed ", 10) == 0);
        assert_non_null(strstr(got, "; shown as bytes\n00000000  "));
        assert_hex_ascii_clean(got);
        free(got);
        char *sum = summary(&in);
        assert_non_null(strstr(sum, "(malformed)"));
        free(sum);
        body_info_free(&in);
    }

    /* Key id readable but no room for nonce and tag: malformed, the key still named. */
    unsigned char b[128];
    size_t n = build_encrypted(b, "k-2024", 0);
    classify(NULL, b, n - 1, &in);
    assert_int_equal(in.kind, BODY_MALFORMED_FRAME);
    assert_string_equal(in.key_id, "k-2024");
    assert_string_equal(in.note, "27 bytes after the key id are too few for its nonce and tag");
    char *got = render(&in, b, n - 1, 0, 0);
    assert_string_equal(got, "malformed acemq encrypted frame: 27 bytes after the key id are too "
                             "few for its nonce and tag (key id: k-2024); shown as bytes\n"
                             "\xe2\x80\xa6 36 more bytes\n");
    free(got);
    body_info_free(&in);

    /* AE alone without a content type is too little to call a frame. */
    classify(NULL, "\xAE", 1, &in);
    assert_int_equal(in.kind, BODY_BINARY);
    body_info_free(&in);

    /* Every prefix of every valid frame under every content type. */
    unsigned char frames[4][96];
    size_t lens[4];
    lens[0] = build_encrypted(frames[0], "key", 5);
    memcpy(frames[1], "\xAC\x01\x00{\"a\":[1,2]}", lens[1] = 14);
    memcpy(frames[2], "\xAC\x01\x01store/key", lens[2] = 12);
    memcpy(frames[3], "\x00\x00\x00\x00\x11\x02\x04", lens[3] = 7);
    static const char *const cts[] = {NULL,
                                      "application/vnd.acemq.encrypted",
                                      "application/vnd.acemq.avro",
                                      "application/json",
                                      "text/plain",
                                      "application/octet-stream",
                                      "avro/binary",
                                      "garbage"};
    for (size_t f = 0; f < 4; f++)
        for (size_t c = 0; c < sizeof cts / sizeof cts[0]; c++)
            for (size_t k = 0; k <= lens[f]; k++) {
                /* A copy of exactly k bytes, so ASan sees any read past the end. */
                unsigned char *copy = xmalloc(k ? k : 1);
                memcpy(copy, frames[f], k);
                classify(cts[c], copy, k, &in);
                for (size_t lim = 0; lim < 20; lim += 7) {
                    char *r = render(&in, copy, k, 0, lim);
                    assert_hex_ascii_clean(r);
                    free(r);
                }
                char *s = summary(&in);
                assert_true(s[0] != '\0' && !strchr(s, '\n'));
                free(s);
                body_info_free(&in);
                free(copy);
            }
}

/* Deterministic junk under every content type: no crash, every output '\n'-terminated, the
 * hexdump columns clean, the summary one line. */
static void test_random_bodies(void **state)
{
    static const char *const cts[] = {NULL,
                                      "application/vnd.acemq.encrypted",
                                      "application/vnd.acemq.avro",
                                      "application/json",
                                      "text/plain",
                                      "application/x-protobuf",
                                      "application/octet-stream"};
    uint32_t seed = 12345;
    unsigned char *buf = xmalloc(300);
    for (int iter = 0; iter < 3000; iter++) {
        seed = seed * 1103515245u + 12345u;
        size_t n = (seed >> 8) % 300;
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = (unsigned char)(seed >> 16);
        }
        /* Bias towards the magic bytes so the frame parsers see plenty of near misses. */
        static const unsigned char starts[][3] = {{0xAE, 1, 0}, {0xAC, 1, 1}, {0xAC, 1, 0},
                                                  {0, 0, 0},    {1, 0, 3},    {'{', '"', 'a'}};
        if (n >= 3 && iter % 2)
            memcpy(buf, starts[iter % 6], 3);
        if (n >= 3 && iter % 4 == 1)
            buf[2] = (unsigned char)(n - 3 + (seed >> 30) - 1);
        struct body_info in;
        unsigned char *copy = xmalloc(n ? n : 1);
        memcpy(copy, buf, n);
        classify(cts[iter % 7], copy, n, &in);
        char *r = render(&in, copy, n, iter % 3 == 0 ? BODY_RENDER_HEX : 0,
                         iter % 5 == 0 ? (size_t)(seed % 40) : BODY_NO_LIMIT);
        assert_true(r[0] != '\0' && r[strlen(r) - 1] == '\n');
        assert_hex_ascii_clean(r);
        free(r);
        char *sum = summary(&in);
        assert_null(strchr(sum, '\n'));
        free(sum);
        body_info_free(&in);
        free(copy);
    }
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_encrypted),      cmocka_unit_test(test_encrypted_legacy),
        cmocka_unit_test(test_claim_check),    cmocka_unit_test(test_avro_registered),
        cmocka_unit_test(test_hostile_frames), cmocka_unit_test(test_random_bodies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
