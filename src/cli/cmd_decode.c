/*
 * decode: every message of every input decoded, one JSON object per line (docs/decode-format.md),
 * or aligned columns for people with --format table; --filter EXPR keeps those the explorer's
 * filter selects (docs/filter.md). Each carries its failure group (groups.h): the error's
 * fingerprint and the group's key, as the explorer and `dlqx groups` print it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "decode.h"
#include "decode_par.h"
#include "filter.h"
#include "groups.h"
#include "json_out.h"
#include "sanitize.h"

struct decode_ctx {
    struct cli_decode_out o;
    bool write_failed;
    struct filter *filter; /* --filter (NULL: every message) */
};

struct filter *cli_filter_compile(const char *cmd, const char *expr)
{
    struct filter *f = NULL;
    struct error err;
    if (filter_compile(expr, &f, &err) != ST_OK) {
        struct strbuf sb;
        sb_init(&sb);
        sanitize_append(&sb, err.msg, strlen(err.msg), 0);
        san_eprintf("dlqx %s: --filter: %s\n", cmd, sb.buf);
        sb_free(&sb);
    }
    return f;
}

int cli_filter_option(const char *cmd, int argc, char **argv, int *i, struct filter **f)
{
    const char *a = argv[*i];
    if (strcmp(a, "--filter") != 0 && strncmp(a, "--filter=", 9) != 0)
        return 0;
    filter_free(*f);
    *f = NULL;
    if (a[8] != '=' && *i + 1 >= argc) {
        san_eprintf("dlqx %s: --filter needs an expression (docs/filter.md)\n", cmd);
        return -1;
    }
    *f = cli_filter_compile(cmd, a[8] == '=' ? a + 9 : argv[++*i]);
    return *f ? 1 : -1;
}

/* The group of the last messages, remembered (direct-mapped by a hash of the text): errors
 * and types repeat across a snapshot, and fingerprinting each error again was 10% of decode.
 * An entry answers only for the very bytes it was made from. */
enum { GROUP_MEMO = 1024, SHORT_MEMO = 1 << 16, SHORT_TEXT = 108 };
struct group_memo {
    uint64_t hash;
    char *text; /* error, or type + fingerprint */
    size_t len;
    uint64_t value; /* the fingerprint, or the group's key */
};
/* Errors of up to SHORT_TEXT bytes, which tend to differ by a number or an id (the same
 * fingerprint): 1024 entries missed 88% of the time on gensnap's mix, 64K hold them all.
 * The text is in the entry (two cache lines, fetched ahead by group_prefetch): the entry and
 * then its text, each a cache miss in a table of 2 MB, were 8% of decode by perf. */
struct short_memo {
    uint64_t hash;
    uint64_t value;
    uint32_t len1; /* the text's length + 1; 0: empty */
    char text[SHORT_TEXT];
};
/* One writer's memos (cli.h): the program's own (NULL in cli_decode_out), or a worker's. */
struct decode_memo {
    _Alignas(64) struct short_memo fp_short[SHORT_MEMO];
    struct group_memo fp_memo[GROUP_MEMO], key_memo[GROUP_MEMO];
    void *alloc; /* cli_decode_memo_new's */
};
static struct decode_memo own_memo;

struct decode_memo *cli_decode_memo_new(void)
{
    /* calloc's memory is aligned to 16: fp_short's entries are put on their cache lines */
    char *raw = xcalloc(1, sizeof(struct decode_memo) + 64);
    struct decode_memo *m = (struct decode_memo *)(raw + 64 - (uintptr_t)raw % 64);
    m->alloc = raw;
    return m;
}

static void group_memo_clear(struct decode_memo *m)
{
    for (size_t i = 0; i < GROUP_MEMO; i++) {
        free(m->fp_memo[i].text);
        free(m->key_memo[i].text);
        m->fp_memo[i].text = m->key_memo[i].text = NULL;
    }
}

void cli_decode_memo_free(struct decode_memo *m)
{
    if (!m)
        return;
    group_memo_clear(m);
    free(m->alloc);
}

/* The memo's index: hash_bytes, eight bytes a step (FNV-1a, a byte a step, was 5% of
 * decode by perf); an entry is still taken only for the very bytes it was made from. */
static uint64_t memo_hash(const void *p, size_t n)
{
    return hash_bytes(p, n, 0);
}

/* The hash of d's error, its short memo entry asked of the memory (group_of uses it later). */
static uint64_t group_prefetch(struct decode_memo *mm, const struct decoded *d)
{
    const char *err = d->error.data ? (const char *)d->error.data : "";
    uint64_t eh = memo_hash(err, d->error.len);
    if (d->error.len <= SHORT_TEXT) {
        const char *e = (const char *)&mm->fp_short[eh % SHORT_MEMO];
        __builtin_prefetch(e);
        __builtin_prefetch(e + 64);
    }
    return eh;
}

static bool memo_get(const struct group_memo *m, uint64_t h, const void *p, size_t n, uint64_t *v)
{
    if (!m->text || m->hash != h || m->len != n || memcmp(m->text, p, n) != 0)
        return false;
    *v = m->value;
    return true;
}

static void memo_put(struct group_memo *m, uint64_t h, const void *p, size_t n, uint64_t v)
{
    free(m->text);
    m->text = xmalloc(n + 1);
    memcpy(m->text, p, n);
    m->hash = h, m->len = n, m->value = v;
}

/* The fingerprint of the error err (n bytes, hash eh), by the memo. */
static uint64_t error_fp(struct decode_memo *mm, const char *err, size_t n, uint64_t eh)
{
    uint64_t h;
    if (n > SHORT_TEXT) {
        struct group_memo *fm = &mm->fp_memo[eh % GROUP_MEMO];
        if (!memo_get(fm, eh, err, n, &h)) {
            h = error_fingerprint(err, n, NULL);
            memo_put(fm, eh, err, n, h);
        }
        return h;
    }
    struct short_memo *sm = &mm->fp_short[eh % SHORT_MEMO];
    if (sm->hash == eh && sm->len1 == n + 1 && memcmp(sm->text, err, n) == 0)
        return sm->value;
    h = error_fingerprint(err, n, NULL);
    sm->hash = eh, sm->value = h, sm->len1 = (uint32_t)n + 1;
    memcpy(sm->text, err, n);
    return h;
}

/* The message's group (groups.h): its error's fingerprint and the group's key; eh is
 * group_prefetch's. */
static void group_of(struct decode_memo *mm, const struct decoded *d, uint64_t eh, char fp[17],
                     char key[GROUP_KEY_TEXT])
{
    const char *err = d->error.data ? (const char *)d->error.data : "";
    uint64_t h = error_fp(mm, err, d->error.len, eh);
    uint64_t fpv = h;
    for (int i = 15; i >= 0; i--, h >>= 4) /* "%016llx" */
        fp[i] = "0123456789abcdef"[h & 15];
    fp[16] = '\0';
    h = fpv;
    const struct bytes *t = &d->env->type;
    const char *type = t->data ? (const char *)t->data : "";
    /* the type's bytes, then the fingerprint's */
    char stack[256];
    size_t n = t->len + sizeof h;
    char *kb = n <= sizeof stack ? stack : xmalloc(n);
    memcpy(kb, type, t->len);
    memcpy(kb + t->len, &h, sizeof h);
    uint64_t k, kh = memo_hash(kb, n);
    struct group_memo *km = &mm->key_memo[kh % GROUP_MEMO];
    if (!memo_get(km, kh, kb, n, &k)) {
        k = group_key(h, type, t->len);
        memo_put(km, kh, kb, n, k);
    }
    if (kb != stack)
        free(kb);
    group_key_text(k, key);
}

static struct decode_memo *memo_of(const struct cli_decode_out *o)
{
    return o->memo ? o->memo : &own_memo;
}

/* A record's text to its output: stdout, or o->sink (DEL escaped as cli_write_json does). */
static void emit(struct cli_decode_out *o, const char *text, size_t len, bool ascii)
{
    if (!o->sink) {
        cli_write_json(text, len, ascii, stdout);
        return;
    }
    if (!ascii) {
        sb_add(o->sink, text, len);
        return;
    }
    size_t from = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] != 0x7f)
            continue;
        sb_add(o->sink, text + from, i - from);
        sb_adds(o->sink, "\\u007f");
        from = i + 1;
    }
    sb_add(o->sink, text + from, len - from);
}

static int dump_cb(const char *buffer, size_t size, void *data)
{
    sb_add(data, buffer, size);
    return 0;
}

/* Column widths of the table format; the error takes what is left. */
enum { W_AGE = 8, W_ATT = 3, W_DIALECT = 12, W_QUEUE = 22, W_TYPE = 30, W_ID = 36 };
enum { W_GROUP = GROUP_KEY_TEXT - 1, W_ERROR = 70 };

static void cell(struct strbuf *sb, const struct bytes *b, int width, unsigned flags)
{
    sanitize_fit(sb, b->data, b->len, width, flags | SAN_PAD);
    sb_adds(sb, "  ");
}

static void cell_s(struct strbuf *sb, const char *s, int width, unsigned flags)
{
    sanitize_fit(sb, s, strlen(s), width, flags | SAN_PAD);
    sb_adds(sb, "  ");
}

void cli_decode_header(struct cli_decode_out *ctx)
{
    struct strbuf *sb = &ctx->line;
    sb_reset(sb);
    cell_s(sb, "AGE", W_AGE, ctx->san_flags);
    cell_s(sb, "ATT", W_ATT, ctx->san_flags);
    cell_s(sb, "DIALECT", W_DIALECT, ctx->san_flags);
    cell_s(sb, "QUEUE", W_QUEUE, ctx->san_flags);
    cell_s(sb, "TYPE", W_TYPE, ctx->san_flags);
    cell_s(sb, "ID", W_ID, ctx->san_flags);
    cell_s(sb, "GROUP", W_GROUP, ctx->san_flags);
    sb_adds(sb, "ERROR\n");
    fwrite(sb->buf, 1, sb->len, stdout);
}

static void table_row(struct cli_decode_out *ctx, const struct decoded *d)
{
    struct strbuf *sb = &ctx->line;
    const struct envelope *e = d->env;
    char age[32], att[24];
    uint64_t eh = group_prefetch(memo_of(ctx), d);
    sb_reset(sb);
    duration_format(envelope_age_s(e, ctx->now_ms), age);
    if (e->attempt >= 0 && e->attempt < 1000000) { /* "%lld" without snprintf (5% of it) */
        char t[8], *p = att;
        int n = 0;
        long long v = e->attempt;
        do
            t[n++] = (char)('0' + v % 10);
        while ((v /= 10) != 0);
        while (n)
            *p++ = t[--n];
        *p = '\0';
    } else {
        snprintf(att, sizeof att, "%lld", (long long)e->attempt);
    }
    cell_s(sb, age, W_AGE, ctx->san_flags);
    cell_s(sb, att, W_ATT, ctx->san_flags);
    char dialect[24];
    /* "%s%s" of the name and the mark, cut to the buffer as snprintf cuts it */
    size_t dn = strlen(d->dialect->name), w = dn < sizeof dialect - 1 ? dn : sizeof dialect - 1;
    memcpy(dialect, d->dialect->name, w);
    if (!d->accepted && w < sizeof dialect - 1)
        dialect[w++] = '!';
    dialect[w] = '\0';
    cell_s(sb, dialect, W_DIALECT, ctx->san_flags);
    cell(sb, &d->msg->queue, W_QUEUE, ctx->san_flags);
    cell(sb, &e->type, W_TYPE, ctx->san_flags);
    cell(sb, &e->id, W_ID, ctx->san_flags);
    char fp[17], key[GROUP_KEY_TEXT];
    group_of(memo_of(ctx), d, eh, fp, key);
    cell_s(sb, key, W_GROUP, ctx->san_flags);
    if (!d->accepted && d->reject_reason) {
        sb_addc(sb, '[');
        sb_adds(sb, d->reject_reason);
        sb_adds(sb, "] ");
    }
    sanitize_fit(sb, d->error.data, d->error.len, W_ERROR, ctx->san_flags);
    while (sb->len && sb->buf[sb->len - 1] == ' ')
        sb->len--;
    sb_addc(sb, '\n');
    emit(ctx, sb->buf, sb->len, false);
}

void cli_decode_write(struct cli_decode_out *ctx, const struct decoded *d)
{
    if (ctx->format == CLI_FORMAT_TABLE) {
        table_row(ctx, d);
        return;
    }
    char fp[17], key[GROUP_KEY_TEXT];
    uint64_t eh = group_prefetch(memo_of(ctx), d);
    sb_reset(&ctx->line);
    /* The record written directly (decoded_write_json), the group's keys after it; the tree
     * dumped by jansson when it declines. The group is found after the record is written,
     * when its memo entry has come. */
    bool direct = decoded_write_json(d, ctx->now_ms, ctx->json_flags, &ctx->line);
    group_of(memo_of(ctx), d, eh, fp, key);
    if (direct) {
        ctx->line.len--; /* its closing brace */
        sb_adds(&ctx->line, ",\"fingerprint\":");
        bool ok = json_out_string(&ctx->line, fp, strlen(fp));
        sb_adds(&ctx->line, ",\"group\":");
        if (ok && json_out_string(&ctx->line, key, strlen(key))) {
            sb_adds(&ctx->line, "}\n");
            emit(ctx, ctx->line.buf, ctx->line.len, false);
            return;
        }
        sb_reset(&ctx->line);
    }
    json_t *j = decoded_to_json(d, ctx->now_ms);
    json_object_set_new(j, "fingerprint", json_string(fp));
    json_object_set_new(j, "group", json_string(key));
    if (!json_out_fast(&ctx->line, j, ctx->json_flags))
        json_dump_callback(j, dump_cb, &ctx->line, ctx->json_flags);
    sb_addc(&ctx->line, '\n');
    emit(ctx, ctx->line.buf, ctx->line.len, (ctx->json_flags & JSON_ENSURE_ASCII) != 0);
    json_decref(j);
}

void cli_decode_setup(struct cli_decode_out *o, enum cli_format format, int ascii)
{
    bool tty = isatty(STDOUT_FILENO);
    /* On a terminal, JSON is written in ASCII (\uXXXX) so that bidi controls and C1 codes in
     * a message cannot act on it; into a pipe it is plain UTF-8 unless --ascii. */
    if (ascii < 0)
        ascii = tty;
    o->format = format;
    o->json_flags = JSON_COMPACT | JSON_REAL_PRECISION(15) | (ascii ? JSON_ENSURE_ASCII : 0);
    o->san_flags = ascii && !tty ? SAN_ASCII : 0;
    o->now_ms = clock_now_ms();
    o->memo = NULL;
    o->sink = NULL;
    sb_init(&o->line);
}

void cli_decode_one(struct cli_decode_out *o, const struct message *m)
{
    struct decoded d;
    /* The table shows nothing of the body: its digest and classification are skipped (a
     * filter may ask for them). */
    decode_message_ex(m, o->now_ms, o->format == CLI_FORMAT_TABLE ? DECODE_NO_BODY : 0, &d);
    cli_decode_write(o, &d);
    decoded_free(&d);
}

static bool decode_record(struct message *m, bool *keep, void *vctx)
{
    (void)keep;
    struct decode_ctx *ctx = vctx;
    if (!ctx->filter) {
        cli_decode_one(&ctx->o, m);
    } else {
        struct decoded d;
        decode_message_ex(m, ctx->o.now_ms, 0, &d);
        if (filter_match_message(ctx->filter, m, &d, ctx->o.now_ms))
            cli_decode_write(&ctx->o, &d);
        decoded_free(&d);
    }
    if (ferror(stdout)) {
        ctx->write_failed = true;
        return false;
    }
    return true;
}

int cmd_decode(int argc, char **argv)
{
    struct decode_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    enum cli_format format = CLI_FORMAT_JSON;
    int ascii = -1, fo, mr;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (strcmp(a, "--format") == 0 || strncmp(a, "--format=", 9) == 0) {
            const char *v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : "");
            if (strcmp(v, "json") == 0) {
                format = CLI_FORMAT_JSON;
            } else if (strcmp(v, "table") == 0) {
                format = CLI_FORMAT_TABLE;
            } else {
                san_eprintf("dlqx decode: --format is json or table\n");
                filter_free(ctx.filter);
                return EXIT_USAGE;
            }
        } else if ((fo = cli_filter_option("decode", argc, argv, &i, &ctx.filter)) != 0) {
            if (fo < 0)
                return EXIT_USAGE;
        } else if ((mr = options_max_record(argc, argv, &i)) != 0) {
            if (mr < 0) {
                filter_free(ctx.filter);
                return EXIT_USAGE;
            }
        } else if (strcmp(a, "--ascii") == 0) {
            ascii = 1;
        } else if (strcmp(a, "--utf8") == 0) {
            ascii = 0;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            puts("usage: dlqx decode [--format json|table] [--filter EXPR] [--ascii|--utf8]\n"
                 "                   [--max-record-size SIZE] [FILE...|-]");
            filter_free(ctx.filter);
            return EXIT_OK;
        } else if (a[0] == '-' && a[1]) {
            san_eprintf("dlqx decode: unknown option %s\n", a);
            filter_free(ctx.filter);
            return EXIT_USAGE;
        } else {
            break;
        }
    }
    int workers = decode_par_workers(); /* a typo in DLQX_THREADS: nothing written */
    if (workers < 0) {
        filter_free(ctx.filter);
        return EXIT_USAGE;
    }
    cli_decode_setup(&ctx.o, format, ascii);
    if (format == CLI_FORMAT_TABLE)
        cli_decode_header(&ctx.o);
    struct cli_inputs stats;
    /* Worker threads unless --filter (decode_par.h): the output is the same */
    if (ctx.filter)
        workers = 1;
    if (workers > 1) {
        struct decode_par *par = decode_par_new(&ctx.o, workers, decode_record, &ctx);
        cli_read_files(argv + i, argc - i, decode_par_file, par, &stats);
        decode_par_free(par);
    } else {
        cli_read_inputs(argv + i, argc - i, decode_record, &ctx, &stats);
    }
    sb_free(&ctx.o.line);
    group_memo_clear(&own_memo);
    filter_free(ctx.filter);
    if (!cli_flush_stdout() || ctx.write_failed)
        return EXIT_IOERR;
    return cli_exit_code(&stats);
}
