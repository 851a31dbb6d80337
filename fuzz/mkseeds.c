/*
 * mkseeds: makes the harnesses' seed corpora from the fixtures, at run time (scripts/fuzz),
 * so that nothing generated is committed and the seeds follow the fixtures as they change.
 *
 *   fuzz_mkseeds FIXTURES_DIR OUT_DIR
 *
 * writes OUT_DIR/<harness>/<name> for
 *   fuzz_snapshot_line  every line of snapshots/NAME.jsonl (malformed ones too), and the
 *                       snapshot line of every message built from the other fixtures;
 *   fuzz_headers_wire   the AMQP wire form of each such message's headers, then its
 *                       routing key;
 *   fuzz_body           the selector byte for its properties (fuzz.h), then its body; and
 *                       every fixture file whole as a body;
 *   fuzz_wire_snapshot  depth (16 and 1000), shape, then the wire form of its headers;
 *   fuzz_properties_wire  its properties as librabbitmq encodes them (headers included);
 *   fuzz_snapshot_read  every snapshots/NAME.jsonl whole, as it is and with a huge first line;
 *   fuzz_error_text     selector 0 and each snapshot line; selector 2, a file name and each
 *                       snapshots/NAME.jsonl; selector 6 and the JSON headers of each record;
 *   fuzz_table_large    size 0 and 255, then the wire form of its headers;
 *   fuzz_fingerprint    its error, as decode_message reads it;
 *   fuzz_restamp        options 0x00, 0x15 and 0x46 (see the harness), then its snapshot line;
 *   fuzz_dialects       its snapshot line;
 *   fuzz_mgmt_json      each mgmt/NAME.json, with the selector its name says;
 *   fuzz_journal        each journal/NAME.jsonl whole.
 * The messages: each snapshot record (snapshots/ and every framework's fixtures folder);
 * each case of acemq/NAME.json with "cases" (routingKey,
 * messageId, contentType, headers, body); each sample with bodyBase64; each file in babelqueue/
 * as the body of a message with app_id "babelqueue".
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include <amqp.h>
#include <amqp_framing.h>

#include "decode.h"
#include "fuzz.h"
#include "hval_amqp.h"
#include "hval_json.h"
#include "message.h"
#include "snapshot.h"
#include "status.h"
#include "util.h"

static const char *out_dir;
static unsigned n_written;

static void make_dir(const char *path)
{
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "fuzz_mkseeds: cannot create %s: %s\n", path, strerror(errno));
        exit(1);
    }
}

static void write_seed(const char *harness, const char *name, const void *data, size_t len)
{
    char *path = xasprintf("%s/%s/%s", out_dir, harness, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0) {
        fprintf(stderr, "fuzz_mkseeds: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    n_written++;
    free(path);
}

/* A seed of one selector byte, then data. */
static void selector_seed(const char *harness, const char *name, uint8_t sel, const void *data,
                          size_t len)
{
    unsigned char *buf = xmalloc(len + 1);
    buf[0] = sel;
    if (len)
        memcpy(buf + 1, data, len);
    write_seed(harness, name, buf, len + 1);
    free(buf);
}

static void body_seed(const char *name, uint8_t sel, const void *body, size_t len)
{
    selector_seed("fuzz_body", name, sel, body, len);
}

/* The seeds one message gives; with_line false when its snapshot line is already a seed. */
static void message_seeds(const char *name, const struct message *m, bool with_line)
{
    if (with_line) {
        struct strbuf line;
        sb_init(&line);
        snapshot_format(m, &line);
        write_seed("fuzz_snapshot_line", name, line.buf, line.len - 1); /* without the \n */
        sb_free(&line);
    }
    struct bytes wire = {0, NULL};
    if (htable_encode_wire(m->headers, &wire, NULL) == ST_OK) {
        struct strbuf sb;
        sb_init(&sb);
        sb_add(&sb, wire.data, wire.len);
        sb_add(&sb, m->routing_key.data, m->routing_key.len > 255 ? 255 : m->routing_key.len);
        write_seed("fuzz_headers_wire", name, sb.buf, sb.len);
        sb_free(&sb);
        selector_seed("fuzz_table_large", name, 0, wire.data, wire.len); /* 16 KB, unique */
        char *big = xasprintf("%s-128k", name);
        struct strbuf tb;
        sb_init(&tb);
        sb_add(&tb, "\xff\x01", 2); /* 128 KB, with duplicates */
        sb_add(&tb, wire.data, wire.len);
        write_seed("fuzz_table_large", big, tb.buf, tb.len);
        sb_free(&tb);
        free(big);
        bytes_free(&wire);
    }
    if (htable_encode_wire(m->headers, &wire, NULL) == ST_OK) {
        /* Nested 16 levels (tables and arrays), and 1,000 (deeper is the known regression
         * fuzz_wire_snapshot-depth-2046, which names the bug when it fails). */
        static const unsigned char heads[2][3] = {{0x00, 0x10, 0x55}, {0x03, 0xe8, 0x00}};
        for (int k = 0; k < 2; k++) {
            struct strbuf sb;
            sb_init(&sb);
            sb_add(&sb, heads[k], 3);
            sb_add(&sb, wire.data, wire.len);
            char *n = xasprintf("%s-depth%d", name, k);
            write_seed("fuzz_wire_snapshot", n, sb.buf, sb.len);
            free(n);
            sb_free(&sb);
        }
        bytes_free(&wire);
    }
    amqp_pool_t pool;
    init_amqp_pool(&pool, 4096);
    amqp_basic_properties_t ap;
    props_to_amqp(&m->props, m->headers, m->headers_present, &pool, &ap);
    size_t cap = 1u << 20;
    unsigned char *pbuf = xmalloc(cap);
    int plen = amqp_encode_properties(AMQP_BASIC_CLASS, &ap, (amqp_bytes_t){cap, pbuf});
    if (plen > 0)
        write_seed("fuzz_properties_wire", name, pbuf, (size_t)plen);
    free(pbuf);
    empty_amqp_pool(&pool);
    struct decoded d;
    decode_message(m, FUZZ_NOW_MS, &d);
    if (d.error.len)
        write_seed("fuzz_fingerprint", name, d.error.data, d.error.len);
    decoded_free(&d);
    struct strbuf rl;
    sb_init(&rl);
    snapshot_format(m, &rl);
    write_seed("fuzz_dialects", name, rl.buf, rl.len - 1);
    static const uint8_t restamp_opts[] = {0x00, 0x15, 0x46};
    for (size_t k = 0; k < sizeof restamp_opts; k++) {
        char *n = xasprintf("%s-%02x", name, restamp_opts[k]);
        selector_seed("fuzz_restamp", n, restamp_opts[k], rl.buf, rl.len - 1);
        free(n);
    }
    sb_free(&rl);
    const struct bytes *ct = props_string(&m->props, PROP_content_type);
    const struct bytes *app = props_string(&m->props, PROP_app_id);
    uint8_t sel = fuzz_body_selector(ct ? (const char *)ct->data : NULL, ct ? ct->len : 0,
                                     app ? (const char *)app->data : NULL, app ? app->len : 0);
    body_seed(name, sel, m->body.data, m->body.len);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    struct strbuf sb;
    sb_init(&sb);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        sb_add(&sb, buf, n);
    fclose(f);
    return sb_detach(&sb, len);
}

static void snapshot_file(const char *path, const char *base)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    unsigned lineno = 0;
    while ((n = getline(&line, &cap, f)) >= 0) {
        lineno++;
        size_t len = (size_t)n;
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            len--;
        if (!len)
            continue;
        /* The framework's folder in the name: two frameworks may both have typical.jsonl. */
        const char *end = strrchr(path, '/'), *dir = end;
        while (dir && dir > path && dir[-1] != '/')
            dir--;
        char *name = dir && end && strncmp(dir, "snapshots/", 10) != 0
                         ? xasprintf("snapshot-%.*s-%s-%u", (int)(end - dir), dir, base, lineno)
                         : xasprintf("snapshot-%s-%u", base, lineno);
        write_seed("fuzz_snapshot_line", name, line, len);
        selector_seed("fuzz_error_text", name, 0, line, len);
        struct message m;
        if (snapshot_parse_line(line, len, &m, NULL) == ST_OK) {
            message_seeds(name, &m, false);
            json_t *hj = htable_to_json(m.headers);
            char *text = json_dumps(hj, JSON_COMPACT | JSON_ENCODE_ANY);
            if (text)
                selector_seed("fuzz_error_text", name, 6, text, strlen(text));
            free(text);
            json_decref(hj);
        }
        message_free(&m);
        free(name);
    }
    free(line);
    fclose(f);
    /* The whole file: through the line layer, as it is and with a huge first line; and with
     * a file name, for the errors that name it. */
    size_t flen;
    char *whole = read_file(path, &flen);
    if (whole) {
        char *name = xasprintf("snapshot-%s", base);
        selector_seed("fuzz_snapshot_read", name, 0x00, whole, flen);
        char *huge = xasprintf("snapshot-%s-huge", base);
        selector_seed("fuzz_snapshot_read", huge, 0x81, whole, flen);
        struct strbuf sb;
        sb_init(&sb);
        sb_adds(&sb, base);
        sb_addc(&sb, '\n');
        sb_add(&sb, whole, flen);
        selector_seed("fuzz_error_text", name, 2, sb.buf, sb.len);
        sb_free(&sb);
        free(huge);
        free(name);
        free(whole);
    }
}

static void set_prop(struct message *m, enum prop_flag f, const json_t *s)
{
    if (json_is_string(s))
        props_set_string(&m->props, f, json_string_value(s), json_string_length(s));
}

static void acemq_file(const char *path, const char *base)
{
    size_t len;
    char *text = read_file(path, &len);
    if (!text)
        return;
    char *name = xasprintf("acemq-%s", base);
    body_seed(name, 0 /* application/json */, text, len);
    free(name);
    json_t *doc = json_loadb(text, len, 0, NULL);
    free(text);
    if (!doc)
        return;

    size_t i;
    json_t *c;
    json_array_foreach(json_object_get(doc, "cases"), i, c)
    {
        struct message m;
        message_init(&m);
        const json_t *rk = json_object_get(c, "routingKey");
        if (json_is_string(rk)) {
            m.routing_key = bytes_dup(json_string_value(rk), json_string_length(rk));
            m.queue = bytes_from_cstr("orders.dlq");
        }
        set_prop(&m, PROP_message_id, json_object_get(c, "messageId"));
        set_prop(&m, PROP_content_type, json_object_get(c, "contentType"));
        struct htable *h;
        const json_t *hj = json_object_get(c, "headers");
        if (hj && htable_from_json(hj, "headers", &h, NULL) == ST_OK) {
            htable_free(m.headers);
            m.headers = h;
            m.headers_present = true;
        }
        const json_t *body = json_object_get(c, "body");
        if (json_is_string(body))
            m.body = bytes_dup(json_string_value(body), json_string_length(body));
        name = xasprintf("acemq-%s-case%zu", base, i);
        message_seeds(name, &m, true);
        free(name);
        message_free(&m);
    }
    json_array_foreach(json_object_get(doc, "samples"), i, c)
    {
        const json_t *b64 = json_object_get(c, "bodyBase64");
        struct message m;
        message_init(&m);
        if (!json_is_string(b64) ||
            !base64_decode(json_string_value(b64), json_string_length(b64), &m.body)) {
            message_free(&m);
            continue;
        }
        set_prop(&m, PROP_content_type, json_object_get(c, "contentType"));
        name = xasprintf("acemq-%s-sample%zu", base, i);
        message_seeds(name, &m, true);
        free(name);
        message_free(&m);
    }
    json_decref(doc);
}

static void babelqueue_file(const char *path, const char *base)
{
    size_t len;
    char *text = read_file(path, &len);
    if (!text)
        return;
    struct message m;
    message_init(&m);
    props_set_string(&m.props, PROP_app_id, "babelqueue", 10);
    props_set_string(&m.props, PROP_content_type, "application/json", 16);
    m.queue = bytes_from_cstr("orders.dlq");
    m.body = bytes_dup(text, len);
    char *name = xasprintf("babelqueue-%s", base);
    message_seeds(name, &m, true);
    free(name);
    /* And as a body that must be recognised by its shape alone. */
    name = xasprintf("babelqueue-%s-shape", base);
    body_seed(name, FUZZ_CT_NONE, text, len);
    free(name);
    message_free(&m);
    free(text);
}

static void plain_file(const char *path, const char *base)
{
    size_t len;
    char *text = read_file(path, &len);
    if (!text)
        return;
    char *name = xasprintf("bodies-%s", base);
    body_seed(name, FUZZ_CT_NONE, text, len);
    free(name);
    free(text);
}

static void mgmt_file(const char *path, const char *base)
{
    size_t len;
    char *text = read_file(path, &len);
    if (!text)
        return;
    /* fuzz_mgmt_json's selector: 0 queues, 1 exchanges, 2 bindings, 3 overview; 4 a hint */
    uint8_t sel = strncmp(base, "exchanges", 9) == 0  ? 1
                  : strncmp(base, "bindings", 8) == 0 ? 2
                  : strncmp(base, "overview", 8) == 0 ? 3
                  : strncmp(base, "policies", 8) == 0 ? 1
                                                      : 0;
    char *name = xasprintf("mgmt-%s", base);
    selector_seed("fuzz_mgmt_json", name, sel, text, len);
    char *hinted = xasprintf("mgmt-%s-hint", base);
    selector_seed("fuzz_mgmt_json", hinted, sel | 4, text, len);
    free(hinted);
    free(name);
    free(text);
}

static void journal_file(const char *path, const char *base)
{
    size_t len;
    char *text = read_file(path, &len);
    if (!text)
        return;
    char *name = xasprintf("journal-%s", base);
    write_seed("fuzz_journal", name, text, len);
    free(name);
    free(text);
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* Calls fn on every regular file of fixtures/sub whose name ends in suffix. */
static void each_file(const char *fixtures, const char *sub, const char *suffix,
                      void (*fn)(const char *path, const char *base))
{
    char *dir = xasprintf("%s/%s", fixtures, sub);
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "fuzz_mkseeds: %s: %s (skipped)\n", dir, strerror(errno));
        free(dir);
        return;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.' || !has_suffix(de->d_name, suffix))
            continue;
        char *path = xasprintf("%s/%s", dir, de->d_name);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            fn(path, de->d_name);
        free(path);
    }
    closedir(d);
    free(dir);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fuzz_mkseeds FIXTURES_DIR OUT_DIR\n");
        return 2;
    }
    out_dir = argv[2];
    make_dir(out_dir);
    static const char *const harnesses[] = {
        "fuzz_snapshot_line",   "fuzz_headers_wire",  "fuzz_body",       "fuzz_wire_snapshot",
        "fuzz_properties_wire", "fuzz_snapshot_read", "fuzz_error_text", "fuzz_table_large",
        "fuzz_fingerprint",     "fuzz_restamp",       "fuzz_mgmt_json",  "fuzz_journal",
        "fuzz_dialects",
    };
    for (size_t i = 0; i < sizeof harnesses / sizeof *harnesses; i++) {
        char *p = xasprintf("%s/%s", out_dir, harnesses[i]);
        make_dir(p);
        free(p);
    }
    each_file(argv[1], "snapshots", ".jsonl", snapshot_file);
    /* Every framework's dead letters: fixtures/FRAMEWORK/NAME.jsonl. */
    DIR *top = opendir(argv[1]);
    struct dirent *fe;
    while (top && (fe = readdir(top))) {
        static const char *const skip[] = {"snapshots",  "journal", "acemq",
                                           "babelqueue", "bodies",  "mgmt"};
        bool other = fe->d_name[0] == '.';
        for (size_t i = 0; i < sizeof skip / sizeof *skip && !other; i++)
            other = strcmp(fe->d_name, skip[i]) == 0;
        if (!other)
            each_file(argv[1], fe->d_name, ".jsonl", snapshot_file);
    }
    if (top)
        closedir(top);
    each_file(argv[1], "acemq", ".json", acemq_file);
    each_file(argv[1], "babelqueue", ".json", babelqueue_file);
    each_file(argv[1], "bodies", "", plain_file);
    each_file(argv[1], "mgmt", ".json", mgmt_file);
    each_file(argv[1], "journal", ".jsonl", journal_file);
    printf("fuzz_mkseeds: %u seeds in %s\n", n_written, out_dir);
    return 0;
}
