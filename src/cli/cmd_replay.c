/*
 * cmd_replay: `dlqx replay`, `dlqx move` and `dlqx delete` — the writing commands for
 * scripts. Each says what it will do (the plan, from a snapshot when one is given), asks
 * unless --yes, then runs one pass of the replay engine (src/replay/replay.h): every copy confirmed
 * by the broker before its dead letter is removed, every step journaled.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "decode.h"
#include "editor.h"
#include "groups.h"
#include "journal.h"
#include "replay_cli.h"
#include "sanitize.h"
#include "stopsig.h"
#include "sha256.h"
#include "util.h"

static void usage(const char *cmd, FILE *to)
{
    if (strcmp(cmd, "delete") == 0)
        fputs(
            "usage: dlqx delete QUEUE (--id ID... | --filter EXPR | --group KEY | --all)\n"
            "                   [--snapshot FILE] [--dry-run] [--yes] [--json] [--journal FILE]\n",
            to);
    else if (strcmp(cmd, "move") == 0)
        fputs("usage: dlqx move QUEUE [--to-queue QUEUE | --to EXCHANGE:ROUTING_KEY]\n"
              "                 (--id ID... | --filter EXPR | --group KEY | --all)\n"
              "                 [--snapshot FILE] [--dry-run] [--rate N] [--ramp STEPS]\n"
              "                 [--window N] [--create-queue] [--yes] [--json] [--journal FILE]\n",
              to);
    else
        fputs(
            "usage: dlqx replay QUEUE (--id ID... | --filter EXPR | --group KEY | --all)\n"
            "                   [--with FIELD=VALUE]... [--body-file FILE | --edit]\n"
            "                   [--reissue] [--to EXCHANGE:ROUTING_KEY] [--bypass] [--keep-error]\n"
            "                   [--strip-fault] [--ack-queue QUEUE]\n"
            "                   [--snapshot FILE] [--dry-run] [--rate N] [--ramp STEPS] [--window "
            "N]\n"
            "                   [--canary[=SECONDS]] [--yes] [--json] [--journal FILE] [--force]\n",
            to);
    fputs(
        "       [--ignore-pending]: go on although the journal holds an interrupted run's intents\n"
        "       [--attempts N]: a lost node: carry on from the next URL, N attempts in all (5)\n"
        "       broker: [--url URL]... [--password-file FILE | --ask-password] [--read-only]\n"
        "               [--cacert FILE] [--cert FILE --key FILE] [--tls-no-verify]\n"
        "see dlqx(1) and docs/replay.md\n",
        to);
}

static bool number(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || v < 0)
        return false;
    *out = v;
    return true;
}

static bool read_file(const char *path, struct bytes *out)
{
    if (bytes_read_file(path, 0, out) == 0)
        return true;
    san_eprintf("dlqx: cannot read %s: %s\n", path, strerror(errno));
    return false;
}

/* Parses the command line into x; 0 on success, else an exit code. */
/* Adds one more condition to the selection: (what was selected) AND (EXPR). */
static void rcli_narrow(struct rcli *x, const char *expr)
{
    char *joined =
        x->filter_expr ? xasprintf("(%s) (%s)", x->filter_expr, expr) : xasprintf("%s", expr);
    free(x->filter_store);
    x->filter_store = joined;
    x->filter_expr = joined;
}

static int parse(struct rcli *x, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        enum bopt_next r = broker_opts_arg(&x->b, argc, argv, &i);
        if (r == BOPT_ERROR)
            return EXIT_USAGE;
        if (r == BOPT_CONSUMED)
            continue;
        bool more = i + 1 < argc;
        if (strcmp(a, "--id") == 0 && more) {
            if (x->n_ids == RCLI_MAX_IDS) {
                san_eprintf("dlqx %s: at most %d --id (use --filter or --snapshot)\n", x->cmd,
                            RCLI_MAX_IDS);
                return EXIT_USAGE;
            }
            x->ids[x->n_ids++] = argv[++i];
        } else if (strcmp(a, "--filter") == 0 && more) {
            /* Several --filter and --group narrow the selection together (AND): a later one
             * never replaces an earlier one, which would widen a delete. */
            rcli_narrow(x, argv[++i]);
        } else if (strcmp(a, "--group") == 0 && more) {
            /* The explorer's group: fingerprint and type, by its key (groups.h). */
            struct error gerr;
            uint64_t key;
            const char *g = argv[++i];
            if (!group_key_parse(g, strlen(g), &key, &gerr)) {
                san_eprintf("dlqx %s: --group: %s\n", x->cmd, gerr.msg);
                return EXIT_USAGE;
            }
            char *term = xasprintf("group=%s", g);
            rcli_narrow(x, term);
            free(term);
        } else if (strcmp(a, "--all") == 0) {
            x->all = true;
        } else if (strcmp(a, "--with") == 0 && more && !x->is_delete) {
            if (x->n_changes == RCLI_MAX_WITH) {
                san_eprintf("dlqx %s: at most %d --with\n", x->cmd, RCLI_MAX_WITH);
                return EXIT_USAGE;
            }
            struct error err;
            size_t k = x->n_changes;
            if (env_change_parse(argv[++i], &x->changes[k], &x->change_vals[k], &err) != ST_OK) {
                san_eprintf("dlqx %s: --with %s: %s\n", x->cmd, argv[i], err.msg);
                return EXIT_USAGE;
            }
            x->n_changes++;
        } else if (strcmp(a, "--body-file") == 0 && more && !x->is_delete) {
            x->body_file = argv[++i];
        } else if (strcmp(a, "--edit") == 0 && !x->is_delete) {
            x->edit = true;
        } else if (strcmp(a, "--reissue") == 0 && strcmp(x->cmd, "replay") == 0) {
            x->mode = RESTAMP_REISSUE;
        } else if ((strcmp(a, "--to") == 0 && more) && !x->is_delete) {
            const char *v = argv[++i];
            const char *colon = strchr(v, ':');
            free(x->to_store);
            if (!colon) {
                san_eprintf("dlqx %s: --to takes EXCHANGE:ROUTING_KEY (\":orders\" is the default "
                            "exchange to queue orders)\n",
                            x->cmd);
                return EXIT_USAGE;
            }
            x->to_store = xstrdup(v);
            x->to_store[colon - v] = '\0';
            x->to_exchange = x->to_store;
            x->to_routing_key = x->to_store + (colon - v) + 1;
        } else if (strcmp(a, "--to-queue") == 0 && more && strcmp(x->cmd, "move") == 0) {
            x->to_exchange = "";
            x->to_routing_key = argv[++i];
        } else if (strcmp(a, "--ignore-pending") == 0) {
            x->ignore_pending = true;
        } else if (strcmp(a, "--create-queue") == 0 && strcmp(x->cmd, "move") == 0) {
            x->create_queue = true;
        } else if (strcmp(a, "--bypass") == 0) {
            x->bypass = true;
        } else if (strcmp(a, "--keep-error") == 0) {
            x->keep_error = true;
        } else if (strcmp(a, "--strip-fault") == 0) {
            x->strip_fault = true;
        } else if (strcmp(a, "--ack-queue") == 0 && more) {
            x->ack_queue = argv[++i];
        } else if (strcmp(a, "--dry-run") == 0 || strcmp(a, "-n") == 0) {
            x->dry_run = true;
        } else if (strcmp(a, "--yes") == 0 || strcmp(a, "-y") == 0) {
            x->yes = true;
        } else if (strcmp(a, "--json") == 0) {
            x->json = true;
        } else if (strcmp(a, "--force") == 0) {
            x->force = true;
        } else if (strcmp(a, "--rate") == 0 && more) {
            if (!number(argv[++i], &x->rate)) {
                san_eprintf("dlqx %s: --rate takes messages per second\n", x->cmd);
                return EXIT_USAGE;
            }
        } else if (strcmp(a, "--ramp") == 0 && more) {
            struct error err;
            if (replay_ramp_parse(argv[++i], x->ramp, REPLAY_MAX_RAMP, &x->n_ramp, &err) != ST_OK) {
                san_eprintf("dlqx %s: %s\n", x->cmd, err.msg);
                return EXIT_USAGE;
            }
        } else if (strcmp(a, "--window") == 0 && more) {
            double w;
            if (!number(argv[++i], &w) || w < 1 || w > 65535) {
                san_eprintf("dlqx %s: --window takes 1 to 65535\n", x->cmd);
                return EXIT_USAGE;
            }
            x->window = (uint32_t)w;
        } else if (strcmp(a, "--attempts") == 0 && more) {
            double n;
            if (!number(argv[++i], &n) || n < 1 || n > 100 || n != (double)(uint32_t)n) {
                san_eprintf("dlqx %s: --attempts takes 1 to 100\n", x->cmd);
                return EXIT_USAGE;
            }
            x->attempts = (uint32_t)n;
        } else if (strncmp(a, "--canary", 8) == 0 && (a[8] == '\0' || a[8] == '=')) {
            double s = 10;
            if (a[8] == '=' && (!number(a + 9, &s) || s <= 0)) {
                san_eprintf("dlqx %s: --canary=SECONDS\n", x->cmd);
                return EXIT_USAGE;
            }
            x->canary_ms = (int)(s * 1000);
        } else if (strcmp(a, "--snapshot") == 0 && more) {
            x->snapshot = argv[++i];
        } else if (strcmp(a, "--journal") == 0 && more) {
            x->journal_path = argv[++i];
        } else if (strcmp(a, "--type") == 0 && more) {
            x->type_given = true;
            if (!queue_kind_parse(argv[++i], &x->kind)) {
                san_eprintf("dlqx %s: --type is classic, quorum or stream\n", x->cmd);
                return EXIT_USAGE;
            }
        } else if (strcmp(a, "--delivery-limit") == 0 && more) {
            x->delivery_limit = strtoll(argv[++i], NULL, 10);
            x->limit_given = true;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(x->cmd, stdout);
            return -1;
        } else if (a[0] == '-') {
            san_eprintf("dlqx %s: unknown option %s (or it needs a value)\n", x->cmd, a);
            return EXIT_USAGE;
        } else if (!x->queue) {
            x->queue = a;
        } else {
            san_eprintf("dlqx %s: one queue at a time (got %s and %s)\n", x->cmd, x->queue, a);
            return EXIT_USAGE;
        }
    }
    if (!x->queue) {
        usage(x->cmd, stderr);
        return EXIT_USAGE;
    }
    if (!x->n_ids && !x->filter_expr && !x->all) {
        san_eprintf(
            "dlqx %s: say which dead letters: --id ID, --filter EXPR, --group KEY or --all\n",
            x->cmd);
        return EXIT_USAGE;
    }
    if (x->filter_expr) {
        struct error err;
        if (filter_compile(x->filter_expr, &x->filter, &err) != ST_OK) {
            san_eprintf("dlqx %s: --filter: %s\n", x->cmd, err.msg);
            return EXIT_USAGE;
        }
        /* A field term one typo away is a search: say so before anything is confirmed. */
        struct strbuf words, shown;
        sb_init(&words);
        sb_init(&shown);
        size_t n = filter_searches(x->filter, &words);
        sanitize_append(&shown, words.buf, words.len, 0);
        if (n)
            san_eprintf(
                "dlqx %s: the filter holds %zu bare-word text search%s, matched anywhere in "
                "the id, type, error or queue: %s (a field is written field:value); %s\n",
                x->cmd, n, n == 1 ? "" : "es", shown.buf,
                x->dry_run ? "check the selection"
                : x->yes   ? "going ahead: --yes was given"
                           : "it needs a yes on the terminal or --yes");
        sb_free(&words);
        sb_free(&shown);
    }
    if (x->mode == RESTAMP_MOVE && !x->to_routing_key) {
        /* The parking queue beside the DLQ: orders.dlq → orders.parked. */
        size_t n = strlen(x->queue);
        static char parked[300];
        const char *suffix = ".dlq";
        if (n > 4 && strcmp(x->queue + n - 4, suffix) == 0)
            snprintf(parked, sizeof parked, "%.*s.parked", (int)(n - 4), x->queue);
        else
            snprintf(parked, sizeof parked, "%.250s.parked", x->queue);
        x->to_exchange = "";
        x->to_routing_key = parked;
    }
    if (x->create_queue && x->to_exchange && *x->to_exchange) {
        san_eprintf("dlqx move: --create-queue declares a queue: it goes with --to-queue "
                    "QUEUE or the default parking queue, not with --to EXCHANGE:KEY\n");
        return EXIT_USAGE;
    }
    if (x->mode == RESTAMP_MOVE && x->n_changes) {
        san_eprintf("dlqx move: a move sends the message as it is; use dlqx replay --with\n");
        return EXIT_USAGE;
    }
    if (x->edit && !x->snapshot) {
        san_eprintf("dlqx %s: --edit needs --snapshot FILE (the body to start from)\n", x->cmd);
        return EXIT_USAGE;
    }
    if (x->dry_run && !x->snapshot) {
        san_eprintf("dlqx %s: a dry run reads nothing from the queue — not even a requeue — so it "
                    "plans from a snapshot: dlqx peek %s -o FILE, then --snapshot FILE --dry-run\n",
                    x->cmd, x->queue);
        return EXIT_USAGE;
    }
    if (x->body_file && !read_file(x->body_file, &x->body))
        return EXIT_NOINPUT;
    x->has_body = x->body_file != NULL;
    return 0;
}

/* ---- running ---------------------------------------------------------------------------- */

struct run_ctx {
    struct rcli *x;
    struct rcli_plan *plan; /* NULL: select live by ids/filter/all */
    bool tty;
    uint64_t shown;
};

static enum replay_action select_cb(void *vctx, const struct message *m, uint64_t position,
                                    struct outgoing *out, char *why, size_t whylen)
{
    struct run_ctx *c = vctx;
    struct rcli *x = c->x;
    struct decoded d;
    decode_message(m, x->now_ms, &d);
    bool want = c->plan ? replay_plan_take_message(c->plan->find, m, &d) : rcli_selected(x, m, &d);
    enum replay_action a = RA_SKIP;
    if (want && x->is_delete) {
        a = RA_DELETE;
    } else if (want) {
        struct error err;
        error_clear(&err);
        if (rcli_build(x, &d, out, &err) == ST_OK) {
            a = RA_SEND;
        } else {
            snprintf(why, whylen, "%s", err.msg);
            a = RA_KEEP;
        }
    }
    decoded_free(&d);
    return a;
}

/* A new attempt after a lost connection: a dead letter the earlier one did not remove is
 * looked for again. */
static void again_cb(void *vctx, const struct bytes *old_id, const char sha256_hex[65])
{
    struct run_ctx *c = vctx;
    if (c->plan)
        replay_plan_add(c->plan->find, old_id, sha256_hex);
}

static enum replay_ctl progress_cb(void *vctx, const struct replay_progress *p)
{
    struct run_ctx *c = vctx;
    if (c->tty) {
        char eta[32] = "";
        if (p->eta_s >= 0)
            duration_format(p->eta_s, eta);
        fprintf(stderr,
                "\r\033[Kdlqx %s: %s  read %llu/%llu  done %llu  kept %llu  unknown %llu  "
                "%.0f/s%s%s",
                c->x->cmd, p->phase, (unsigned long long)p->taken, (unsigned long long)p->total,
                (unsigned long long)p->done, (unsigned long long)p->kept,
                (unsigned long long)p->unknown, p->rate, eta[0] ? "  ETA " : "", eta);
    }
    return stopsig_caught() ? RC_CANCEL : RC_GO;
}

static void outcome_cb(void *vctx, uint64_t seq, uint64_t position, const struct bytes *old_id,
                       enum journal_result res, const char *reason)
{
    struct run_ctx *c = vctx;
    if (res == JR_DONE || c->x->json)
        return;
    if (c->shown++ >= 20) {
        if (c->shown == 22)
            fputs("dlqx: (further kept messages are in the journal)\n", stderr);
        return;
    }
    struct strbuf sb;
    sb_init(&sb);
    sb_adds(&sb, c->tty ? "\r\033[K" : "");
    sb_adds(&sb, res == JR_KEPT ? "kept " : res == JR_REFUSED ? "refused " : "UNKNOWN ");
    sanitize_append(&sb, old_id->data, old_id->len, 0);
    sb_adds(&sb, ": ");
    sanitize_append(&sb, reason ? reason : "", reason ? strlen(reason) : 0, 0);
    if (c->tty) /* the progress line goes first; the escape is ours, not the message's */
        fputs("\r\033[K", stderr);
    san_eprintf("dlqx: %s\n", sb.buf);
    sb_free(&sb);
}

/* 1 yes, 0 no, -1 there is no terminal to ask on. */
static int ask(const char *question)
{
    int fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return -1;
    FILE *tty = fdopen(fd, "r+");
    if (!tty) {
        close(fd);
        return -1;
    }
    fprintf(tty, "%s [y/N] ", question);
    fflush(tty);
    char line[32] = "";
    bool yes = fgets(line, sizeof line, tty) && (line[0] == 'y' || line[0] == 'Y');
    fclose(tty);
    return yes ? 1 : 0;
}

static bool edit_retry(void *ctx, const char *why)
{
    san_eprintf("dlqx: the edited body is not valid: %s\n", why);
    return ask("Edit it again?") == 1;
}

/* The journal's pending intents for this queue on this broker (an interrupted run: each copy
 * may have been sent while its dead letter is still in the DLQ): named, and the pass refused
 * (EXIT_UNKNOWN, as the run that left them) unless --ignore-pending or a yes on the terminal.
 * 0 to go on. */
static int pending_check(const struct rcli *x, struct conn *c)
{
    char *jpath = x->journal_path ? xstrdup(x->journal_path) : journal_default_path();
    json_t *pend = replay_pending_for(jpath, &x->b, c, x->queue, NULL);
    size_t n = json_array_size(pend);
    int rc = 0;
    if (n) {
        struct strbuf ids, q;
        sb_init(&ids);
        sb_init(&q);
        replay_pending_ids(pend, 5, &ids);
        sanitize_append(&q, x->queue, strlen(x->queue), 0);
        san_eprintf("dlqx %s: the journal holds %zu pending %s for %s on this broker, from a run "
                    "that did not finish (each copy may have been sent while its dead letter is "
                    "still in the queue: sending it again makes a duplicate): %s\n"
                    "dlqx %s: dlqx journal --reconcile checks each against the broker and resolves "
                    "it; dlqx journal --pending lists them\n",
                    x->cmd, n, n == 1 ? "intent" : "intents", q.buf, ids.buf, x->cmd);
        sb_free(&ids);
        sb_free(&q);
        if (x->ignore_pending) {
            san_eprintf("dlqx %s: going on (--ignore-pending)\n", x->cmd);
        } else {
            int yes = x->yes ? -1 : ask("Go on anyway?");
            if (yes == 0)
                rc = EXIT_DECLINED;
            else if (yes < 0) {
                san_eprintf("dlqx %s: nothing was sent; give --ignore-pending to go on "
                            "anyway\n",
                            x->cmd);
                rc = EXIT_UNKNOWN;
            }
        }
    }
    json_decref(pend);
    free(jpath);
    return rc;
}

/* A move's target queue (through the default exchange) that does not exist: with
 * --create-queue it is to be declared (*declare), else the move is refused before anything is
 * read, with a sentence (EXIT_KEPT: every dead letter would be kept). The plan's targets say
 * which when there is a plan; otherwise a passive declare does. 0 when the move can go. */
static int move_target_check(const struct rcli *x, struct conn *c, struct rcli_plan *p,
                             bool *declare)
{
    *declare = false;
    if (x->mode != RESTAMP_MOVE || x->is_delete || !c || !x->to_routing_key ||
        (x->to_exchange && *x->to_exchange))
        return 0;
    enum route_check rc = ROUTE_YES;
    char text[300] = "";
    struct rcli_target *t = NULL;
    for (size_t i = 0; p && i < p->n_targets; i++)
        if (!p->targets[i].exchange[0] && strcmp(p->targets[i].routing_key, x->to_routing_key) == 0)
            t = &p->targets[i];
    if (t)
        rc = t->route;
    else if (!p)
        rc = replay_check_route(c, "", x->to_routing_key, text, sizeof text);
    if (rc != ROUTE_NO)
        return 0;
    struct strbuf q;
    sb_init(&q);
    sanitize_append(&q, x->to_routing_key, strlen(x->to_routing_key), 0);
    if (x->create_queue) {
        *declare = true;
        if (!x->dry_run)
            san_eprintf("dlqx move: queue %s does not exist: it is declared (durable, of the DLQ's "
                        "type) before the move\n",
                        q.buf);
        if (t)
            snprintf(t->route_text, sizeof t->route_text,
                     "does not exist yet: --create-queue declares it (durable, of the DLQ's "
                     "type) before the move");
        sb_free(&q);
        return 0;
    }
    san_eprintf("dlqx move: queue %s does not exist, so every dead letter would be kept: %s; "
                "give --create-queue to declare it (durable, of the DLQ's type), or --to-queue "
                "another\n",
                q.buf, x->dry_run ? "the move would do nothing" : "nothing was moved");
    sb_free(&q);
    return EXIT_KEPT;
}

static int run(struct rcli *x)
{
    struct rcli_plan plan;
    struct rcli_plan *p = NULL;
    int rc = EXIT_OK;
    struct conn *c = NULL;
    struct replay_setup rs;
    memset(&rs, 0, sizeof rs);
    x->now_ms = clock_now_ms();
    if (x->b.read_only && !x->dry_run) {
        san_eprintf("dlqx %s: this connection is read-only (--read-only, DLQX_READ_ONLY or "
                    "read_only=true on the URL): nothing was written\n",
                    x->cmd);
        return EXIT_READ_ONLY;
    }
    if (x->snapshot) {
        p = &plan;
        if (!rcli_plan_build(x, p)) {
            rcli_plan_free(p);
            return EXIT_NOINPUT;
        }
        if (x->edit) {
            if (p->n_examples != 1 || p->selected != 1) {
                san_eprintf("dlqx %s: --edit works on one dead letter; the selection has "
                            "%llu\n",
                            x->cmd, (unsigned long long)p->selected);
                rc = EXIT_USAGE;
                goto out;
            }
            struct error err;
            const struct message *m = &p->examples[0];
            if (editor_edit(&m->body, props_string(&m->props, PROP_content_type), edit_retry, NULL,
                            &x->body, &err) != ST_OK) {
                san_eprintf("dlqx %s: %s\n", x->cmd, err.msg);
                rc = EXIT_USAGE;
                goto out;
            }
            x->has_body = true;
            /* The plan again, with the new body. */
            rcli_plan_free(p);
            rcli_plan_build(x, p);
        }
    }
    double connected_at = 0;
    if (!x->no_broker) {
        c = broker_connect(&x->b, &rc);
        if (!c && !x->dry_run)
            goto out;
        connected_at = clock_mono_s();
    }
    rc = EXIT_OK;
    bool declare = false;
    int missing = 0;
    if (p) {
        rcli_plan_routes(p, c);
        missing = move_target_check(x, c, p, &declare);
        if (x->dry_run && x->json) {
            size_t n = json_array_size(p->dry);
            for (size_t i = 0; i < n; i++) {
                char *s = json_dumps(json_array_get(p->dry, i), JSON_COMPACT);
                printf("%s\n", s);
                free(s);
            }
        } else {
            rcli_plan_print(x, p, x->dry_run ? stdout : stderr);
        }
        if (x->dry_run) {
            san_eprintf("dlqx %s: dry run: nothing was read from or written to the broker\n",
                        x->cmd);
            /* The exit status says what the real run would: 20 when some would be kept. */
            if (p->n_kept) {
                san_eprintf("dlqx %s: dry run: %llu selected dead letters would be kept\n", x->cmd,
                            (unsigned long long)(p->selected - p->sendable));
                rc = EXIT_KEPT;
            }
            if (missing)
                rc = missing;
            goto out;
        }
        if (missing) {
            rc = missing;
            goto out;
        }
        if (p->sendable == 0) {
            san_eprintf("dlqx %s: nothing to do\n", x->cmd);
            rc = p->selected ? EXIT_KEPT : EXIT_NOMATCH;
            goto out;
        }
    }
    if ((rc = pending_check(x, c)) != 0)
        goto out;
    if (!p && (rc = move_target_check(x, c, NULL, &declare)) != 0)
        goto out;
    if (!x->yes) {
        char q[400];
        const char *verb = x->is_delete                 ? "Delete"
                           : x->mode == RESTAMP_MOVE    ? "Move"
                           : x->mode == RESTAMP_REISSUE ? "Re-issue"
                                                        : "Replay";
        if (p)
            snprintf(q, sizeof q, "%s %llu dead letters of %.200s?", verb,
                     (unsigned long long)p->sendable, x->queue);
        else
            snprintf(q, sizeof q, "%s every selected dead letter of %.200s (%s)?", verb, x->queue,
                     x->all           ? "all of them"
                     : x->filter_expr ? x->filter_expr
                                      : "by id");
        int yes = ask(q);
        if (yes < 0) {
            san_eprintf("dlqx %s: no terminal to ask: give --yes to write\n", x->cmd);
            rc = EXIT_USAGE;
            goto out;
        }
        if (!yes) {
            san_eprintf("dlqx %s: nothing was sent\n", x->cmd);
            rc = EXIT_DECLINED;
            goto out;
        }
    }
    /* A question answered (or a slow check) left the connection idle: rabbitmq-c sends
     * heartbeats only from its own calls, so after two intervals (10 s by default) the broker
     * has closed it, and even before that a publish would take the silent node for a hung one.
     * A new connection costs milliseconds; a pass begun on a dead one would fail, or spend an
     * attempt (test: replay_live.sh, confirm-after-idle). */
    if (c && clock_mono_s() - connected_at > 1.0) {
        conn_close(c);
        c = broker_connect(&x->b, &rc);
        if (!c)
            goto out;
        rc = EXIT_OK;
    }
    struct peek_queue_info info = {x->kind,
                                   x->type_given || x->limit_given ? x->delivery_limit : -1, false};
    if (!x->limit_given)
        info.delivery_limit = -1;
    broker_queue_info(&x->b, x->queue, &info, x->type_given, x->limit_given, false);
    struct replay_setup_args ra = {.conn = c,
                                   .journal_path = x->journal_path,
                                   .queue = x->queue,
                                   .op = x->is_delete ? "delete" : restamp_mode_name(x->mode),
                                   .kind = info.kind,
                                   .delivery_limit = info.delivery_limit,
                                   .expect = p ? replay_plan_size(p->find) : 0};
    struct error err;
    error_clear(&err);
    if (replay_setup_open(&rs, &ra, &err) != ST_OK) {
        san_eprintf("dlqx %s: %s: nothing was sent\n", x->cmd, err.msg);
        rc = error_exit_code(&err, EXIT_IOERR);
        goto out;
    }
    if (declare) {
        enum conn_err dk = CONN_OK;
        if (replay_declare_queue(c, x->to_routing_key, info.kind, &dk, &err) != ST_OK) {
            struct strbuf m;
            sb_init(&m);
            sanitize_append(&m, err.msg, strlen(err.msg), 0);
            san_eprintf("dlqx move: %s: nothing was moved\n", m.buf);
            sb_free(&m);
            rc = dk == CONN_OK ? EXIT_USAGE : broker_exit_code(dk);
            goto out;
        }
        san_eprintf("dlqx move: declared queue %s (durable, %s, like the DLQ)\n", x->to_routing_key,
                    queue_kind_name(info.kind));
    }
    struct run_ctx ctx = {x, p, isatty(STDERR_FILENO) != 0 && !x->json, 0};
    struct replay_opts o = rs.opts;
    o.force = x->force;
    o.window = x->window;
    o.rate = x->rate;
    o.ramp = x->ramp;
    o.n_ramp = x->n_ramp;
    o.canary_wait_ms = x->canary_ms;
    o.select = select_cb;
    o.progress = progress_cb;
    o.outcome = outcome_cb;
    o.ctx = &ctx;
    /* A lost node: the pass carries on from the next URL (conn_reopen replaces c). */
    o.reopen = x->attempts == 1 ? NULL : &c;
    o.max_attempts = x->attempts;
    o.again = p ? again_cb : NULL;
    stopsig_catch();
    struct replay_report r;
    enum conn_err kind = CONN_OK;
    enum status st = replay_run(rs.conn, &o, &r, &kind, &err);
    stopsig_release();
    if (ctx.tty)
        fputs("\r\033[K", stderr);
    if (st != ST_OK) {
        san_eprintf("dlqx %s: %s\n", x->cmd, err.msg);
        rc = broker_exit_code(kind);
        /* conn_queue_inspect's words: the queue itself is missing (not an exchange). */
        if (kind == CONN_NOT_FOUND && strncmp(err.msg, "there is no queue", 17) == 0)
            broker_suggest_queue(&x->b, x->queue);
        if (rc == EXIT_OK)
            rc = EXIT_IOERR;
        goto out;
    }
    rc = rcli_report(x, &r, p, rs.journal_path);
out:
    replay_setup_close(&rs);
    if (c)
        conn_close(c);
    if (p)
        rcli_plan_free(p);
    return rc;
}

static int cmd_write(const char *cmd, int argc, char **argv)
{
    struct rcli x;
    memset(&x, 0, sizeof x);
    x.cmd = cmd;
    x.kind = QK_UNKNOWN;
    x.delivery_limit = -1;
    x.mode = strcmp(cmd, "move") == 0 ? RESTAMP_MOVE : RESTAMP_REPLAY;
    x.is_delete = strcmp(cmd, "delete") == 0;
    broker_opts_init(&x.b);
    int rc = parse(&x, argc, argv);
    if (rc < 0) {
        rc = EXIT_OK;
    } else if (rc == 0) {
        const char *env = getenv("DLQX_URL");
        x.no_broker = x.dry_run && !x.b.n_urls && !(env && *env);
        if (x.no_broker)
            rc = run(&x);
        else if (!broker_opts_finish(&x.b))
            rc = EXIT_USAGE;
        else
            rc = run(&x);
    }
    for (size_t i = 0; i < x.n_changes; i++)
        env_change_release(&x.changes[i], &x.change_vals[i]);
    filter_free(x.filter);
    free(x.filter_store);
    bytes_free(&x.body);
    free(x.to_store);
    broker_opts_free(&x.b);
    if (!cli_flush_stdout() && rc == EXIT_OK)
        rc = EXIT_IOERR;
    return rc;
}

int cmd_replay(int argc, char **argv)
{
    return cmd_write("replay", argc, argv);
}

int cmd_move(int argc, char **argv)
{
    return cmd_write("move", argc, argv);
}

int cmd_delete(int argc, char **argv)
{
    return cmd_write("delete", argc, argv);
}
