/*
 * cat: rewrite snapshot records in the canonical form dlqx writes (every type explicit), so a
 * hand-written record can be checked and normalised, and several files joined into one;
 * with --redact, values taken out for sharing (src/analysis/redact.h). On a terminal (or --ascii)
 * every character outside printable ASCII is written as a JSON \uXXXX escape, as decode does,
 * so that C1 controls, DEL and bidi overrides in a message cannot act on the terminal; the
 * record reads back the same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "redact.h"
#include "sanitize.h"
#include "snapshot.h"

struct cat_ctx {
    bool write_failed;
    bool ascii;
    struct redactor red;
    struct strbuf line, esc;
};

/* One code point of valid UTF-8 at s (n bytes left): its value and length, or 0 for a byte
 * that does not start one (then U+FFFD is written: snapshot_format writes only valid UTF-8,
 * so this is never expected). */
static size_t utf8_next(const unsigned char *s, size_t n, unsigned *cp)
{
    size_t len = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc0 ? 2 : 0;
    if (len == 0 || len > n || !utf8_valid(s, len))
        return 0;
    unsigned v = s[0] & (0x7f >> len);
    for (size_t i = 1; i < len; i++)
        v = (v << 6) | (s[i] & 0x3f);
    *cp = v;
    return len;
}

/* The JSON line with every character outside printable ASCII as \uXXXX (surrogate pairs
 * above U+FFFF). Such characters can only be inside strings, where the escape means the
 * same. */
static void ascii_json(const char *line, size_t len, struct strbuf *out)
{
    const unsigned char *s = (const unsigned char *)line;
    for (size_t i = 0; i < len;) {
        if (s[i] < 0x7f) {
            sb_addc(out, (char)s[i++]);
            continue;
        }
        unsigned cp = 0xfffd;
        size_t k = s[i] == 0x7f ? 1 : utf8_next(s + i, len - i, &cp);
        if (s[i] == 0x7f)
            cp = 0x7f;
        i += k ? k : 1;
        if (cp > 0xffff) {
            cp -= 0x10000;
            sb_addf(out, "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
        } else {
            sb_addf(out, "\\u%04x", cp);
        }
    }
}

static bool cat_record(struct message *m, bool *keep, void *vctx)
{
    struct cat_ctx *ctx = vctx;
    if (ctx->red.n)
        redact_message(&ctx->red, m);
    sb_reset(&ctx->line);
    snapshot_format(m, &ctx->line);
    const struct strbuf *w = &ctx->line;
    if (ctx->ascii) {
        sb_reset(&ctx->esc);
        ascii_json(ctx->line.buf, ctx->line.len, &ctx->esc);
        w = &ctx->esc;
    }
    if (fwrite(w->buf, 1, w->len, stdout) != w->len) {
        ctx->write_failed = true;
        return false;
    }
    return true;
}

static void usage(FILE *to)
{
    fputs("usage: dlqx cat [--redact FIELD]... [--ascii|--utf8] [FILE...|-]\n"
          "  FIELD: header.GLOB, body, body.PATH or $.PATH (PATH: .NAME [N] [\"NAME\"] *)\n",
          to);
}

int cmd_cat(int argc, char **argv)
{
    struct cat_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    redact_init(&ctx.red);
    sb_init(&ctx.line);
    sb_init(&ctx.esc);
    int ascii = -1, rc = EXIT_OK;
    int first = 1;
    for (; first < argc; first++) {
        const char *a = argv[first];
        if (strcmp(a, "--") == 0) {
            first++;
            break;
        }
        if (a[0] != '-' || strcmp(a, "-") == 0)
            break;
        int mr = options_max_record(argc, argv, &first);
        if (mr < 0) {
            rc = EXIT_USAGE;
            goto out;
        }
        if (mr > 0)
            continue;
        if (strcmp(a, "--redact") == 0 || strncmp(a, "--redact=", 9) == 0) {
            const char *field = a[8] == '=' ? a + 9 : (first + 1 < argc ? argv[++first] : "");
            struct error err;
            if (redact_add(&ctx.red, field, &err) != ST_OK) {
                san_eprintf("dlqx cat: %s\n", err.msg);
                rc = EXIT_USAGE;
                goto out;
            }
        } else if (strcmp(a, "--ascii") == 0) {
            ascii = 1;
        } else if (strcmp(a, "--utf8") == 0) {
            ascii = 0;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            goto out;
        } else {
            san_eprintf("dlqx cat: unknown option %s\n", a);
            rc = EXIT_USAGE;
            goto out;
        }
    }
    ctx.ascii = ascii < 0 ? isatty(STDOUT_FILENO) != 0 : ascii == 1;
    struct cli_inputs stats;
    cli_read_inputs(argv + first, argc - first, cat_record, &ctx, &stats);
    if (ctx.red.n) {
        san_eprintf("dlqx cat: redacted %ld value%s in %ld of %ld record%s", ctx.red.values,
                    ctx.red.values == 1 ? "" : "s", ctx.red.records, stats.records,
                    stats.records == 1 ? "" : "s");
        if (ctx.red.whole_bodies)
            san_eprintf("; %ld bod%s not JSON, redacted whole", ctx.red.whole_bodies,
                        ctx.red.whole_bodies == 1 ? "y was" : "ies were");
        fputc('\n', stderr);
        size_t i = 0;
        for (const char *f; (f = redact_unmatched(&ctx.red, &i));)
            san_eprintf("dlqx cat: --redact %s matched nothing (misspelt?)\n", f);
    }
    if (!cli_flush_stdout() || ctx.write_failed)
        rc = EXIT_IOERR;
    else
        rc = cli_exit_code(&stats);
out:
    redact_free(&ctx.red);
    sb_free(&ctx.line);
    sb_free(&ctx.esc);
    return rc;
}
