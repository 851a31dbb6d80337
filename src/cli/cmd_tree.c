/*
 * tree: the causal forest of every message read — grouped by correlation, linked by
 * causation — as an indented text tree, as JSON Lines nodes (--json), or for one message its
 * ancestors and descendants (--of ID).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "decode.h"
#include "filter.h"
#include "hval_json.h"
#include "json_out.h"
#include "sanitize.h"
#include "tree.h"

struct item {
    struct bytes id, correlation, causation, type, queue, error; /* in block */
    unsigned char *block; /* the six strings' bytes, one allocation (six were 4% of tree) */
    int64_t attempt;
    const struct dialect_ops *dialect;
    bool accepted;
};

struct tree_ctx {
    struct item *items;
    size_t n, cap;
    int64_t now_ms;
    unsigned san_flags;
    struct filter *filter; /* --filter: only the messages it selects (their causes stay) */
};

static bool collect(struct message *m, bool *keep, void *vctx)
{
    struct tree_ctx *ctx = vctx;
    if (ctx->n >= TREE_MAX_MESSAGES)
        return false;
    struct decoded d;
    /* The tree shows nothing of the body: its digest and classification are skipped (a
     * filter may ask for them). */
    decode_message_ex(m, ctx->now_ms, ctx->filter ? 0 : DECODE_NO_BODY, &d);
    if (ctx->filter && !filter_match_message(ctx->filter, m, &d, ctx->now_ms)) {
        decoded_free(&d);
        return true;
    }
    xgrow((void **)&ctx->items, &ctx->cap, ctx->n + 1, sizeof *ctx->items);
    struct item *it = &ctx->items[ctx->n++];
    const struct bytes *from[] = {
        &d.env->id, &d.env->correlation_id, &d.env->causation_id, &d.env->type, &m->queue,
        &d.error};
    struct bytes *to[] = {&it->id,   &it->correlation, &it->causation,
                          &it->type, &it->queue,       &it->error};
    size_t total = 0;
    for (size_t i = 0; i < 6; i++)
        total += from[i]->data ? from[i]->len + 1 : 0;
    unsigned char *p = it->block = total ? xmalloc(total) : NULL;
    for (size_t i = 0; i < 6; i++) { /* as bytes_copy: absent stays absent, a NUL after */
        *to[i] = (struct bytes){0, NULL};
        if (!from[i]->data)
            continue;
        *to[i] = (struct bytes){from[i]->len, p};
        if (from[i]->len)
            memcpy(p, from[i]->data, from[i]->len);
        p[from[i]->len] = '\0';
        p += from[i]->len + 1;
    }
    it->attempt = d.env->attempt;
    it->dialect = d.dialect;
    it->accepted = d.accepted;
    decoded_free(&d);
    return true;
}

static unsigned escape_flags;

static void escape(struct strbuf *out, const void *data, size_t len)
{
    sanitize_append(out, data, len, escape_flags);
}

static void label(struct strbuf *out, const struct forest *f, uint32_t node, void *vctx)
{
    const struct tree_ctx *ctx = vctx;
    const struct item *it = &ctx->items[tree_node_message(f, node)];
    sanitize_append(out, it->id.data, it->id.len, ctx->san_flags);
    sb_adds(out, "  ");
    sanitize_append(out, it->type.data, it->type.len, ctx->san_flags);
    sb_adds(out, "  [");
    sanitize_append(out, it->queue.data, it->queue.len, ctx->san_flags);
    sb_adds(out, "]  attempt ");
    json_out_integer(out, (long long)it->attempt); /* "%lld" without vsnprintf (5% of tree) */
    if (it->error.len) {
        sb_adds(out, "  ");
        sanitize_fit(out, it->error.data, it->error.len, 72, ctx->san_flags);
    }
}

static json_t *node_id_json(const struct forest *f, uint32_t node)
{
    size_t len;
    const unsigned char *id = tree_node_id(f, node, &len);
    return bytes_to_json(id, len);
}

static json_t *node_json(const struct tree_ctx *ctx, const struct forest *f, uint32_t node)
{
    const struct tree_group *g = tree_group_get(f, tree_group_of(f, node));
    unsigned flags = tree_node_flags(f, node);
    uint32_t parent = tree_node_parent(f, node);
    json_t *o = json_object();
    json_object_set_new(o, "id", node_id_json(f, node));
    json_object_set_new(o, "parent", parent == TREE_NONE ? json_null() : node_id_json(f, parent));
    json_t *children = json_array();
    for (uint32_t c = tree_node_first_child(f, node); c != TREE_NONE;
         c = tree_node_next_sibling(f, c))
        json_array_append_new(children, node_id_json(f, c));
    json_object_set_new(o, "children", children);
    json_object_set_new(o, "placeholder", json_boolean(flags & TREE_PLACEHOLDER));
    json_object_set_new(o, "correlation_id", bytes_to_json(g->correlation, g->correlation_len));
    json_object_set_new(o, "depth", json_integer(tree_depth(f, node)));
    json_object_set_new(o, "duplicate", json_boolean(flags & TREE_DUPLICATE));
    json_object_set_new(o, "cycle_broken", json_boolean(flags & TREE_CYCLE_BROKEN));
    json_object_set_new(o, "self_caused", json_boolean(flags & TREE_SELF_CAUSED));
    uint32_t mi = tree_node_message(f, node);
    if (mi != TREE_NONE) {
        const struct item *it = &ctx->items[mi];
        json_object_set_new(o, "type", bytes_to_json(it->type.data, it->type.len));
        json_object_set_new(o, "queue", bytes_to_json(it->queue.data, it->queue.len));
        json_object_set_new(o, "dialect", json_string(it->dialect->name));
        json_object_set_new(
            o, "error", it->error.len ? bytes_to_json(it->error.data, it->error.len) : json_null());
    }
    return o;
}

static int dump_cb(const char *buffer, size_t size, void *data)
{
    return fwrite(buffer, 1, size, data) == size ? 0 : -1;
}

static void usage(FILE *to)
{
    fputs("usage: dlqx tree [--json] [--ascii|--utf8] [--of ID] [--filter EXPR] "
          "[FILE...|-]\n",
          to);
}

int cmd_tree(int argc, char **argv)
{
    struct filter *filter = NULL;
    int fo;
    bool json = false;
    int ascii = -1;
    const char *of = NULL;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        int mr = options_max_record(argc, argv, &i);
        if (mr < 0)
            return EXIT_USAGE;
        if (mr > 0) {
            continue;
        } else if (strcmp(a, "--json") == 0) {
            json = true;
        } else if (strcmp(a, "--ascii") == 0) {
            ascii = 1;
        } else if (strcmp(a, "--utf8") == 0) {
            ascii = 0;
        } else if (strcmp(a, "--of") == 0 || strncmp(a, "--of=", 5) == 0) {
            if (a[4] == '=') {
                of = a + 5;
            } else if (i + 1 < argc) {
                of = argv[++i];
            } else {
                usage(stderr);
                filter_free(filter);
                return EXIT_USAGE;
            }
        } else if ((fo = cli_filter_option("tree", argc, argv, &i, &filter)) != 0) {
            if (fo < 0)
                return EXIT_USAGE;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            filter_free(filter);
            return EXIT_OK;
        } else if (a[0] == '-' && a[1]) {
            san_eprintf("dlqx tree: unknown option %s\n", a);
            filter_free(filter);
            return EXIT_USAGE;
        } else {
            break;
        }
    }
    if (ascii < 0) {
        /* Box drawing only where the locale can show it. */
        const char *cs = getenv("LC_ALL");
        if (!cs || !*cs)
            cs = getenv("LC_CTYPE");
        if (!cs || !*cs)
            cs = getenv("LANG");
        ascii = !(cs && (strstr(cs, "UTF-8") || strstr(cs, "utf8") || strstr(cs, "UTF8") ||
                         strstr(cs, "utf-8")));
    }
    struct tree_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.now_ms = clock_now_ms();
    ctx.san_flags = ascii ? SAN_ASCII : 0;
    ctx.filter = filter;
    escape_flags = ctx.san_flags;
    struct cli_inputs stats;
    cli_read_inputs(argv + i, argc - i, collect, &ctx, &stats);
    if (ctx.n >= TREE_MAX_MESSAGES)
        san_eprintf("dlqx tree: only the first %u messages are shown\n",
                    (unsigned)TREE_MAX_MESSAGES);

    struct tree_msg *msgs = xcalloc(ctx.n ? ctx.n : 1, sizeof *msgs);
    for (size_t k = 0; k < ctx.n; k++) {
        msgs[k].id = tree_span_bytes(&ctx.items[k].id);
        msgs[k].correlation = tree_span_bytes(&ctx.items[k].correlation);
        msgs[k].causation = tree_span_bytes(&ctx.items[k].causation);
    }
    struct forest f;
    tree_init(&f);
    struct error err;
    int rc = cli_exit_code(&stats);
    if (tree_build(&f, msgs, ctx.n, &err) != ST_OK) {
        san_eprintf("dlqx tree: %s\n", err.msg);
        rc = EXIT_DATAERR;
        goto out;
    }
    unsigned rflags = ascii ? TREE_RENDER_ASCII : 0;
    struct strbuf sb;
    sb_init(&sb);
    if (of) {
        uint32_t found[64];
        size_t nf = tree_find_id(&f, of, strlen(of), found, 64);
        if (nf == 0) {
            struct strbuf shown;
            sb_init(&shown);
            sanitize_append(&shown, of, strlen(of), ctx.san_flags);
            san_eprintf("dlqx tree: no message or cause has the id %s\n", shown.buf);
            sb_free(&shown);
            if (rc == EXIT_OK)
                rc = EXIT_NOMATCH;
        }
        for (size_t k = 0; k < nf && k < 64; k++) {
            if (json) {
                size_t cap = tree_depth(&f, found[k]) + 1;
                uint32_t *anc = xcalloc(cap, sizeof *anc);
                size_t na = tree_ancestors(&f, found[k], anc, cap);
                for (size_t a = na; a-- > 0;) {
                    json_t *o = node_json(&ctx, &f, anc[a]);
                    json_object_set_new(o, "relation", json_string(a ? "ancestor" : "self"));
                    json_dump_callback(o, ascii ? cli_json_ascii_cb : dump_cb, stdout,
                                       JSON_COMPACT | (ascii ? JSON_ENSURE_ASCII : 0));
                    fputc('\n', stdout);
                    json_decref(o);
                }
                free(anc);
                size_t nd;
                const uint32_t *desc = tree_descendants(&f, found[k], &nd);
                for (size_t d = 0; d < nd; d++) {
                    json_t *o = node_json(&ctx, &f, desc[d]);
                    json_object_set_new(o, "relation", json_string("descendant"));
                    json_dump_callback(o, ascii ? cli_json_ascii_cb : dump_cb, stdout,
                                       JSON_COMPACT | (ascii ? JSON_ENSURE_ASCII : 0));
                    fputc('\n', stdout);
                    json_decref(o);
                }
            } else {
                if (k)
                    sb_addc(&sb, '\n');
                tree_render_of(&f, found[k], &sb, label, &ctx, escape, rflags);
            }
        }
    } else if (json) {
        struct tree_walk w;
        tree_walk_all(&f, &w);
        uint32_t node;
        while (tree_walk_next(&f, &w, &node, NULL)) {
            json_t *o = node_json(&ctx, &f, node);
            json_dump_callback(o, ascii ? cli_json_ascii_cb : dump_cb, stdout,
                               JSON_COMPACT | (ascii ? JSON_ENSURE_ASCII : 0));
            fputc('\n', stdout);
            json_decref(o);
        }
    } else {
        tree_render(&f, &sb, label, &ctx, escape, rflags);
    }
    fwrite(sb.buf ? sb.buf : "", 1, sb.len, stdout);
    sb_free(&sb);
out:
    tree_free(&f);
    free(msgs);
    for (size_t k = 0; k < ctx.n; k++)
        free(ctx.items[k].block);
    free(ctx.items);
    filter_free(filter);
    if (!cli_flush_stdout())
        return EXIT_IOERR;
    return rc;
}
