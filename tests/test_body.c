/*
 * test_body: body classification, rendering and summaries. The AceMQ samples come from the
 * vendored fixtures/acemq/codec-samples.json; frames are built here byte by byte from the
 * layouts in the AceMQ libraries (test_body_frames.c, with the hostile frames: every truncation
 * of valid ones).
 */
#include "body_testutil.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "body.h"
#include "util.h"

struct sample {
    const char *format, *content_type;
    struct bytes body;
};

/* The samples of codec-samples.json, decoded. */
static size_t load_samples(struct sample *out, size_t max, json_t **root)
{
    struct bytes f = test_read_fixture("acemq/codec-samples.json");
    json_error_t e;
    *root = json_loadb((const char *)f.data, f.len, 0, &e);
    bytes_free(&f);
    assert_non_null(*root);
    json_t *arr = json_object_get(*root, "samples");
    assert_true(json_is_array(arr));
    size_t n = json_array_size(arr);
    assert_true(n <= max);
    for (size_t i = 0; i < n; i++) {
        json_t *s = json_array_get(arr, i);
        out[i].format = json_string_value(json_object_get(s, "format"));
        out[i].content_type = json_string_value(json_object_get(s, "contentType"));
        const char *b64 = json_string_value(json_object_get(s, "bodyBase64"));
        assert_non_null(out[i].format);
        assert_non_null(out[i].content_type);
        assert_non_null(b64);
        assert_true(base64_decode(b64, strlen(b64), &out[i].body));
    }
    return n;
}

static void free_samples(struct sample *s, size_t n, json_t *root)
{
    for (size_t i = 0; i < n; i++)
        bytes_free(&s[i].body);
    json_decref(root);
}

static const struct sample *find_sample(const struct sample *s, size_t n, const char *format)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(s[i].format, format) == 0)
            return &s[i];
    fail_msg("no %s sample", format);
    return s; /* not reached: fail_msg does not return */
}

/* ---- the vendored samples -------------------------------------------------------------- */

static void test_samples_classify(void **state)
{
    static const struct {
        const char *format;
        enum body_kind kind;
        const char *fmt;
        const char *summary;
    } want[] = {
        {"yaml", BODY_TEXT, "yaml", "yaml"},
        {"toml", BODY_TEXT, "toml", "toml"},
        {"xml", BODY_TEXT, "xml", "xml"},
        {"protobuf", BODY_BINARY, "protobuf", "protobuf 94 B"},
        {"avro-fixed", BODY_BINARY, "avro", "avro 16 B"},
        {"avro-registered", BODY_AVRO_REGISTERED, "avro", "avro schema=1 21 B"},
    };
    struct sample s[32];
    json_t *root;
    size_t n = load_samples(s, 32, &root);
    assert_int_equal(n, 12); /* Java and Go, six formats each */
    for (size_t i = 0; i < n; i++) {
        size_t w = 0;
        while (w < sizeof want / sizeof want[0] && strcmp(want[w].format, s[i].format) != 0)
            w++;
        if (w == sizeof want / sizeof want[0])
            fail_msg("sample format %s has no expectation", s[i].format);
        struct body_info in;
        body_classify(s[i].body.data, s[i].body.len,
                      &(struct bytes){strlen(s[i].content_type),
                                      (unsigned char *)(uintptr_t)s[i].content_type},
                      NULL, &in);
        assert_int_equal(in.kind, want[w].kind);
        assert_string_equal(in.format, want[w].fmt);
        assert_false(in.sniffed);
        assert_string_equal(in.media.type, s[i].content_type);
        char *sum = summary(&in);
        assert_true(strncmp(sum, want[w].summary, strlen(want[w].summary)) == 0);
        free(sum);
        if (in.kind == BODY_AVRO_REGISTERED)
            assert_int_equal(in.schema_id, 1);
        if (in.kind == BODY_TEXT) {
            /* Text is shown exactly as it is (each sample ends in a newline or gets one). */
            char *got = render(&in, s[i].body.data, s[i].body.len, 0, BODY_NO_LIMIT);
            assert_memory_equal(got, s[i].body.data, s[i].body.len);
            assert_true(strlen(got) == s[i].body.len || strlen(got) == s[i].body.len + 1);
            free(got);
        }
        body_info_free(&in);
    }
    free_samples(s, n, root);
}

static void test_samples_hexdump(void **state)
{
    struct sample s[32];
    json_t *root;
    size_t n = load_samples(s, 32, &root);
    struct body_info in;

    /* Expected output is `hexdump -C` of the decoded bytes. */
    const struct sample *pb = find_sample(s, n, "protobuf");
    classify(pb->content_type, pb->body.data, pb->body.len, &in);
    assert_render(&in, pb->body.data, pb->body.len, 0, BODY_NO_LIMIT,
                  "protobuf, shown as bytes\n"
                  "00000000  0a 10 0a 07 6f 72 64 65  72 49 64 12 05 1a 03 41  |....orderId....A|\n"
                  "00000010  2d 31 0a 12 0a 08 63 75  73 74 6f 6d 65 72 12 06  |-1....customer..|\n"
                  "00000020  1a 04 61 63 6d 65 0a 17  0a 0a 74 6f 74 61 6c 43  |..acme....totalC|\n"
                  "00000030  65 6e 74 73 12 09 11 00  00 00 00 00 9a b0 40 0a  |ents..........@.|\n"
                  "00000040  11 0a 08 63 75 72 72 65  6e 63 79 12 05 1a 03 47  |...currency....G|\n"
                  "00000050  42 50 0a 0a 0a 04 70 61  69 64 12 02 20 01        |BP....paid.. .|\n");
    body_info_free(&in);

    const struct sample *af = find_sample(s, n, "avro-fixed");
    classify(af->content_type, af->body.data, af->body.len, &in);
    assert_render(
        &in, af->body.data, af->body.len, 0, BODY_NO_LIMIT,
        "avro, shown as bytes\n"
        "00000000  06 41 2d 31 08 61 63 6d  65 b4 42 06 47 42 50 01  |.A-1.acme.B.GBP.|\n");
    body_info_free(&in);

    /* The registered one: the schema id, then the Avro datum at its own offsets. */
    const struct sample *ar = find_sample(s, n, "avro-registered");
    classify(ar->content_type, ar->body.data, ar->body.len, &in);
    assert_render(
        &in, ar->body.data, ar->body.len, 0, BODY_NO_LIMIT,
        "avro, schema registry framing: schema id 1\n"
        "00000005  06 41 2d 31 08 61 63 6d  65 b4 42 06 47 42 50 01  |.A-1.acme.B.GBP.|\n");
    /* Forced hex shows the whole body from 0, framing included. */
    assert_render(&in, ar->body.data, ar->body.len, BODY_RENDER_HEX, BODY_NO_LIMIT,
                  "00000000  00 00 00 00 01 06 41 2d  31 08 61 63 6d 65 b4 42  |......A-1.acme.B|\n"
                  "00000010  06 47 42 50 01                                    |.GBP.|\n");
    body_info_free(&in);

    /* Without its content type a protobuf is just bytes: not text, not a frame. */
    classify(NULL, pb->body.data, pb->body.len, &in);
    assert_int_equal(in.kind, BODY_BINARY);
    assert_null(in.format);
    assert_true(in.sniffed);
    assert_summary(&in, "binary 94 B");
    body_info_free(&in);
    free_samples(s, n, root);
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void test_json_pretty(void **state)
{
    struct bytes body = test_read_fixture("bodies/order.json");
    struct bytes want = test_read_fixture("bodies/order.json.expected");
    struct body_info in;
    classify("application/json", body.data, body.len, &in);
    assert_int_equal(in.kind, BODY_JSON);
    assert_true(in.json_checked);
    assert_true(in.json_valid);
    char *got = render(&in, body.data, body.len, 0, BODY_NO_LIMIT);
    assert_string_equal(got, bytes_cstr(&want));
    free(got);
    assert_summary(&in, "json 257 B");
    /* Raw: as received, plus the final newline. */
    got = render(&in, body.data, body.len, BODY_RENDER_RAW, BODY_NO_LIMIT);
    assert_memory_equal(got, body.data, body.len);
    assert_string_equal(got + body.len, "\n");
    free(got);
    body_info_free(&in);

    /* Sniffed when there is no content type, or only a generic one. */
    classify(NULL, body.data, body.len, &in);
    assert_int_equal(in.kind, BODY_JSON);
    assert_true(in.sniffed);
    body_info_free(&in);
    classify("application/octet-stream", body.data, body.len, &in);
    assert_int_equal(in.kind, BODY_JSON);
    body_info_free(&in);
    /* A structured-syntax suffix is JSON too. */
    classify("application/cloudevents+json; charset=utf-8", body.data, body.len, &in);
    assert_int_equal(in.kind, BODY_JSON);
    assert_false(in.sniffed);
    body_info_free(&in);
    bytes_free(&body);
    bytes_free(&want);

    const char *small[][2] = {
        {"42", "42\n"},
        {" \"s\" ", "\"s\"\n"},
        {"[]", "[]\n"},
        {"{ }", "{}\n"},
        {"[{\"a\":[]},{}]", "[\n  {\n    \"a\": []\n  },\n  {}\n]\n"},
        {"{\"k\\\"{\":\"[,:]\"}", "{\n  \"k\\\"{\": \"[,:]\"\n}\n"},
    };
    for (size_t i = 0; i < sizeof small / sizeof small[0]; i++) {
        classify("application/json", small[i][0], strlen(small[i][0]), &in);
        assert_true(in.json_valid);
        assert_render(&in, small[i][0], strlen(small[i][0]), 0, BODY_NO_LIMIT, small[i][1]);
        body_info_free(&in);
    }
}

static void test_json_big_integer(void **state)
{
    const char *b = "{\"id\": 1,\n \"big\": 123456789012345678901234}";
    struct body_info in;
    classify("application/json", b, strlen(b), &in);
    assert_int_equal(in.kind, BODY_JSON);
    assert_true(in.json_checked);
    assert_false(in.json_valid);
    assert_string_equal(in.json_error, "too big integer");
    assert_int_equal(in.json_position, 42);
    assert_int_equal(in.json_line, 2);
    assert_int_equal(in.json_column, 32);
    assert_summary(&in, "json (invalid) 43 B");
    /* Shown as the text it is, under the reason (jansson quotes only tokens of <= 20). */
    assert_render(&in, b, strlen(b), 0, BODY_NO_LIMIT,
                  "not valid JSON: too big integer (line 2, column 32)\n"
                  "{\"id\": 1,\n \"big\": 123456789012345678901234}\n");
    body_info_free(&in);

    /* Just past INT64_MAX: jansson names the token. */
    const char *b20 = "[9223372036854775808]";
    classify("application/json", b20, strlen(b20), &in);
    assert_false(in.json_valid);
    assert_string_equal(in.json_error, "too big integer near '9223372036854775808'");
    assert_int_equal(in.json_line, 1);
    body_info_free(&in);

    /* Sniffed, a body that starts like JSON but is not stays text, with the reason kept. */
    const char *log = "[INFO] order A-1 shipped\n";
    classify(NULL, log, strlen(log), &in);
    assert_int_equal(in.kind, BODY_TEXT);
    assert_true(in.json_checked);
    assert_false(in.json_valid);
    assert_summary(&in, "text 25 B");
    assert_render(&in, log, strlen(log), 0, BODY_NO_LIMIT, log);
    body_info_free(&in);

    /* Declared JSON that is not even UTF-8 is shown as bytes. */
    const char bad[] = "{\"a\":\"\xff\"}";
    classify("application/json", bad, sizeof bad - 1, &in);
    assert_false(in.json_valid);
    char *got = render(&in, bad, sizeof bad - 1, 0, BODY_NO_LIMIT);
    assert_non_null(strstr(got, "not valid JSON: "));
    assert_non_null(strstr(got, "00000000  7b 22 61 22 3a 22 ff 22  7d  "));
    assert_non_null(strstr(got, "|{\"a\":\".\"}|\n"));
    free(got);
    body_info_free(&in);
}

/* ---- text, binary, empty, encodings ----------------------------------------------------- */

static void test_text_and_binary(void **state)
{
    struct body_info in;
    const char *t = "hello\nworld";
    classify("text/plain; charset=utf-8", t, strlen(t), &in);
    assert_int_equal(in.kind, BODY_TEXT);
    assert_null(in.format);
    assert_summary(&in, "text 11 B");
    assert_render(&in, t, strlen(t), 0, BODY_NO_LIMIT, "hello\nworld\n");
    body_info_free(&in);

    /* Invalid UTF-8 under text/plain is shown as bytes and says why. */
    const char latin[] = "caf\xe9";
    classify("text/plain; charset=ISO-8859-1", latin, 4, &in);
    assert_int_equal(in.kind, BODY_BINARY);
    assert_string_equal(
        in.note, "declared text/plain, charset iso-8859-1 but not UTF-8 text: shown as bytes");
    assert_render(&in, latin, 4, 0, BODY_NO_LIMIT,
                  "declared text/plain, charset iso-8859-1 but not UTF-8 text: shown as bytes\n"
                  "00000000  63 61 66 e9                                       |caf.|\n");
    assert_summary(&in, "binary 4 B");
    body_info_free(&in);

    /* A NUL is not text either. */
    classify("text/plain", "a\0b", 3, &in);
    assert_int_equal(in.kind, BODY_BINARY);
    body_info_free(&in);
    classify(NULL, "a\0b", 3, &in);
    assert_int_equal(in.kind, BODY_BINARY);
    body_info_free(&in);
    classify(NULL, "\0{}", 3, &in);
    assert_int_equal(in.kind, BODY_BINARY);
    assert_false(in.json_checked);
    body_info_free(&in);

    /* Sniffing: text with no content type, and control bytes are not text. */
    classify(NULL, "plain words\r\n", 13, &in);
    assert_int_equal(in.kind, BODY_TEXT);
    assert_true(in.sniffed);
    body_info_free(&in);
    classify(NULL,
             "\x01\x02"
             "abc",
             5, &in);
    assert_int_equal(in.kind, BODY_BINARY);
    body_info_free(&in);
    classify(NULL, "\x1f\x8b\x08\x00", 4, &in);
    assert_int_equal(in.kind, BODY_BINARY);
    assert_string_equal(in.format, "gzip");
    body_info_free(&in);

    /* Every byte value: the ASCII column holds printable ASCII and nothing else. */
    unsigned char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)i;
    classify("application/octet-stream", all, sizeof all, &in);
    assert_int_equal(in.kind, BODY_BINARY);
    char *got = render(&in, all, sizeof all, 0, BODY_NO_LIMIT);
    assert_hex_ascii_clean(got);
    assert_non_null(strstr(got, "00000020  20 21 22 23 24 25 26 27  28 29 2a 2b 2c 2d 2e 2f  "
                                "| !\"#$%&'()*+,-./|\n"));
    assert_non_null(strstr(got, "00000070  70 71 72 73 74 75 76 77  78 79 7a 7b 7c 7d 7e 7f  "
                                "|pqrstuvwxyz{|}~.|\n"));
    assert_non_null(strstr(got, "000000f0  f0 f1 f2 f3 f4 f5 f6 f7  f8 f9 fa fb fc fd fe ff  "
                                "|................|\n"));
    free(got);
    body_info_free(&in);
}

static void test_empty(void **state)
{
    struct body_info in;
    classify("application/json", "", 0, &in);
    assert_int_equal(in.kind, BODY_EMPTY);
    assert_summary(&in, "empty");
    assert_render(&in, "", 0, 0, BODY_NO_LIMIT, "(empty body)\n");
    assert_render(&in, "", 0, BODY_RENDER_HEX, BODY_NO_LIMIT, "(empty body)\n");
    body_info_free(&in);
    classify(NULL, NULL, 0, &in);
    assert_int_equal(in.kind, BODY_EMPTY);
    assert_false(in.media.present);
    body_info_free(&in);
}

static void test_content_encoding(void **state)
{
    struct body_info in;
    const unsigned char gz[] = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03};
    classify_enc("application/json", " GZIP ", gz, sizeof gz, &in);
    assert_int_equal(in.kind, BODY_COMPRESSED);
    assert_string_equal(in.format, "gzip");
    assert_string_equal(in.encoding, "gzip");
    assert_string_equal(in.media.type, "application/json");
    assert_summary(&in, "compressed (gzip) 10 B");
    assert_render(&in, gz, sizeof gz, 0, BODY_NO_LIMIT,
                  "compressed (gzip), shown as bytes\n"
                  "00000000  1f 8b 08 00 00 00 00 00  00 03                    |..........|\n");
    body_info_free(&in);

    /* deflate, and a gzip body that is not one. */
    classify_enc(NULL, "deflate", "xyz", 3, &in);
    assert_int_equal(in.kind, BODY_COMPRESSED);
    assert_summary(&in, "compressed (deflate) 3 B");
    body_info_free(&in);
    classify_enc(NULL, "x-gzip", "{}", 2, &in);
    assert_int_equal(in.kind, BODY_COMPRESSED);
    assert_string_equal(in.note, "the body does not start with the gzip magic bytes 1f 8b");
    body_info_free(&in);

    /* A charset in content_encoding (a common mistake) changes nothing and says nothing. */
    classify_enc("application/json", "utf-8", "{}", 2, &in);
    assert_int_equal(in.kind, BODY_JSON);
    assert_string_equal(in.note, "");
    body_info_free(&in);
    /* An unknown one is not applied, and that is said. */
    classify_enc("text/plain", "base64", "aGk=", 4, &in);
    assert_int_equal(in.kind, BODY_TEXT);
    assert_non_null(strstr(in.note, "\"base64\" is not understood"));
    body_info_free(&in);
}

/* ---- media types ----------------------------------------------------------------------- */

static void test_media_parse(void **state)
{
    struct body_media m;
    const char *ct = "Application/JSON; charset=UTF-8";
    body_media_parse(ct, strlen(ct), &m);
    assert_true(m.present);
    assert_true(m.valid);
    assert_string_equal(m.type, "application/json");
    assert_string_equal(m.subtype, "json");
    assert_string_equal(m.charset, "utf-8");
    assert_string_equal(body_media_param(&m, "CHARSET"), "UTF-8");
    body_media_free(&m);

    ct = "  text/plain ;format=flowed;  Charset=\"us-\\\"ascii\" ; junk ; x=1";
    body_media_parse(ct, strlen(ct), &m);
    assert_true(m.valid);
    assert_string_equal(m.type, "text/plain");
    assert_string_equal(m.charset, "us-\"ascii");
    assert_int_equal(m.nparams, 3);
    assert_string_equal(body_media_param(&m, "format"), "flowed");
    assert_string_equal(body_media_param(&m, "x"), "1");
    assert_null(body_media_param(&m, "junk"));
    body_media_free(&m);

    /* Junk is tolerated and reported invalid. */
    static const char *const junk[] = {"",
                                       "json",
                                       "/",
                                       "application/",
                                       "/json",
                                       ";;",
                                       "appli cation/json",
                                       "\"application/json\""};
    for (size_t i = 0; i < sizeof junk / sizeof junk[0]; i++) {
        body_media_parse(junk[i], strlen(junk[i]), &m);
        assert_true(m.present);
        assert_false(m.valid);
        assert_null(m.type);
        body_media_free(&m);
    }
    /* A NUL ends it; an unterminated quote ends with the input. */
    body_media_parse("text/plain\0; charset=x", 22, &m);
    assert_true(m.valid);
    assert_null(m.charset);
    body_media_free(&m);
    body_media_parse("text/csv; charset=\"utf-8", 24, &m);
    assert_string_equal(m.charset, "utf-8");
    body_media_free(&m);
    /* At most BODY_MEDIA_MAX_PARAMS are kept. */
    ct = "a/b;p1=1;p2=2;p3=3;p4=4;p5=5;p6=6;p7=7;p8=8;p9=9;charset=late";
    body_media_parse(ct, strlen(ct), &m);
    assert_int_equal(m.nparams, BODY_MEDIA_MAX_PARAMS);
    assert_null(m.charset);
    body_media_free(&m);

    /* Odd casing and parameters do not change the classification. */
    struct body_info in;
    classify("Application/JSON; charset=UTF-8", "{\"a\":1}", 7, &in);
    assert_int_equal(in.kind, BODY_JSON);
    assert_true(in.json_valid);
    assert_string_equal(in.media.charset, "utf-8");
    body_info_free(&in);
    classify("TEXT/YAML", "a: 1\n", 5, &in);
    assert_int_equal(in.kind, BODY_TEXT);
    assert_string_equal(in.format, "yaml");
    body_info_free(&in);
    classify("application/problem+xml", "<a/>", 4, &in);
    assert_string_equal(in.format, "xml");
    body_info_free(&in);
}

static void test_json_deep(void **state)
{
    /* 100 levels: valid, and indentation stops growing at 64 levels. */
    char deep[256];
    memset(deep, '[', 100);
    memset(deep + 100, ']', 100);
    struct body_info in;
    classify("application/json", deep, 200, &in);
    assert_true(in.json_valid);
    char *got = render(&in, deep, 200, 0, BODY_NO_LIMIT);
    size_t lines = 0;
    for (char *l = got; *l; l = strchr(l, '\n') + 1, lines++)
        assert_true(strspn(l, " ") <= 128);
    assert_int_equal(lines, 199); /* the innermost [] stays on one line */
    free(got);
    body_info_free(&in);
    /* Deeper than jansson goes: reported, shown as text. */
    char *very = xmalloc(5000);
    memset(very, '[', 2500);
    memset(very + 2500, ']', 2500);
    classify("application/json", very, 5000, &in);
    assert_false(in.json_valid);
    assert_non_null(strstr(in.json_error, "depth"));
    body_info_free(&in);
    free(very);
}

/* ---- limits, sizes, misuse ------------------------------------------------------------- */

static void test_limit(void **state)
{
    struct body_info in;
    const char *t = "0123456789abcdefghij";
    classify("text/plain", t, 20, &in);
    assert_render(&in, t, 20, 0, 8, "01234567\n\xe2\x80\xa6 12 more bytes\n");
    assert_render(&in, t, 20, 0, 20, "0123456789abcdefghij\n");
    assert_render(&in, t, 20, BODY_RENDER_HEX, 17,
                  "00000000  30 31 32 33 34 35 36 37  38 39 61 62 63 64 65 66  |0123456789abcdef|\n"
                  "00000010  67                                                |g|\n"
                  "\xe2\x80\xa6 3 more bytes\n");
    body_info_free(&in);

    /* The cut never splits a UTF-8 character. */
    const char *u = "ab\xc3\xa9\xc3\xa9";
    classify("text/plain", u, 6, &in);
    assert_render(&in, u, 6, 0, 3, "ab\n\xe2\x80\xa6 4 more bytes\n");
    assert_render(&in, u, 6, 0, 4, "ab\xc3\xa9\n\xe2\x80\xa6 2 more bytes\n");
    body_info_free(&in);

    /* JSON: the first N bytes re-indented, then the count. */
    const char *j = "{\"a\":[1,2,3],\"b\":\"xyz\"}";
    classify("application/json", j, strlen(j), &in);
    assert_render(&in, j, strlen(j), 0, 9,
                  "{\n  \"a\": [\n    1,\n    2\n\xe2\x80\xa6 14 more bytes\n");
    body_info_free(&in);

    /* A frame: the limit is on the bytes dumped after the description. */
    const unsigned char av[] = {0, 0, 0, 0, 7, 1, 2, 3, 4, 5, 6};
    classify("application/vnd.acemq.avro", av, sizeof av, &in);
    assert_render(&in, av, sizeof av, 0, 2,
                  "avro, schema registry framing: schema id 7\n"
                  "00000005  01 02                                             |..|\n"
                  "\xe2\x80\xa6 4 more bytes\n");
    body_info_free(&in);
}

static void test_sizes_and_misuse(void **state)
{
    static const struct {
        size_t n;
        const char *s;
    } sizes[] = {{0, "0 B"},          {40, "40 B"},        {1023, "1023 B"},
                 {1024, "1.0 KB"},    {1229, "1.2 KB"},    {1048524, "1023.9 KB"},
                 {1048575, "1.0 MB"}, {3145728, "3.0 MB"}, {(size_t)5 << 30, "5.0 GB"},
                 {1075, "1.0 KB"},    {1076, "1.1 KB"}};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        char out[16];
        body_size_format(sizes[i].n, out);
        assert_string_equal(out, sizes[i].s);
    }
    char out[16];
    body_size_format(SIZE_MAX, out);
    assert_string_equal(out, sizeof(size_t) == 8 ? "16.0 EB" : "4.0 GB");

    /* Rendering bytes other than those classified does not trust the offsets. */
    const unsigned char av[] = {0, 0, 0, 0, 7, 1, 2};
    struct body_info in;
    classify("application/vnd.acemq.avro", av, sizeof av, &in);
    assert_render(&in, av, 3, 0, BODY_NO_LIMIT,
                  "(the body does not match its classification; shown as bytes)\n"
                  "00000000  00 00 00                                          |...|\n");
    body_info_free(&in);
    assert_string_equal(body_kind_name(BODY_CLAIM_CHECK), "acemq claim-check");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_samples_classify),
        cmocka_unit_test(test_samples_hexdump),
        cmocka_unit_test(test_json_pretty),
        cmocka_unit_test(test_json_big_integer),
        cmocka_unit_test(test_json_deep),
        cmocka_unit_test(test_text_and_binary),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_content_encoding),
        cmocka_unit_test(test_media_parse),
        cmocka_unit_test(test_limit),
        cmocka_unit_test(test_sizes_and_misuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
