/*
 * cmd_replay: `dlqx replay`, `dlqx move` and `dlqx delete` — the writing commands for
 * scripts. Each says what it will do (the plan, from a snapshot when one is given), asks
 * unless --yes, then runs one pass of the replay engine (src/replay.h): every copy confirmed
 * by the broker before its dead letter is removed, every step journaled.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "decode.h"
#include "editor.h"
#include "journal.h"
#include "replay_cli.h"
#include "sanitize.h"
#include "sha256.h"
#include "util.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
    (void)sig;
    interrupted++;
    if (interrupted > 1)
        signal(SIGINT, SIG_DFL);
}

static void usage(const char *cmd, FILE *to)
{
    if (strcmp(cmd, "delete") == 0)
        fputs("usage: dlqx delete QUEUE (--id ID... | --filter EXPR | --group FP | --all)\n"
              "                   [--snapshot FILE] [--dry-run] [--yes] [--json] [--journal FILE]\n",
              to);
    else if (strcmp(cmd, "move") == 0)
        fputs("usage: dlqx move QUEUE [--to-queue QUEUE | --to EXCHANGE:ROUTING_KEY]\n"
              "                 (--id ID... | --filter EXPR | --group FP | --all)\n"
              "                 [--snapshot FILE] [--dry-run] [--rate N] [--window N] [--yes]\n"
              "                 [--json] [--journal FILE]\n",
              to);
    else
        fputs("usage: dlqx replay QUEUE (--id ID... | --filter EXPR | --group FP | --all)\n"
              "                   [--with FIELD=VALUE]... [--body-file FILE | --edit]\n"
              "                   [--reissue] [--to EXCHANGE:ROUTING_KEY] [--bypass] [--keep-error]\n"
              "                   [--snapshot FILE] [--dry-run] [--rate N] [--window N]\n"
              "                   [--canary[=SECONDS]] [--yes] [--json] [--journal FILE] [--force]\n",
              to);
    fputs("       broker: [--url URL]... [--password-file FILE | --ask-password] [--read-only]\n"
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
    fprintf(stderr, "dlqx: cannot read %s: %s\n", path, strerror(errno));
    return false;
}

/* Parses the command line into x; 0 on success, else an exit code. */
static int parse(struct rcli *x, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r = broker_opts_parse(&x->b, argc, argv, &i);
        if (r < 0)
            return EXIT_USAGE;
        if (r > 0)
            continue;
        bool more = i + 1 < argc;
        if (strcmp(a, "--id") == 0 && more) {
            if (x->n_ids == RCLI_MAX_IDS) {
                fprintf(stderr, "dlqx %s: at most %d --id (use --filter or --snapshot)\n", x->cmd,
                        RCLI_MAX_IDS);
                return EXIT_USAGE;
            }
            x->ids[x->n_ids++] = argv[++i];
        } else if (strcmp(a, "--filter") == 0 && more) {
            x->filter_expr = argv[++i];
        } else if (strcmp(a, "--group") == 0 && more) {
            free(x->filter_store);
            x->filter_store = xasprintf("fp=%s", argv[++i]);
            x->filter_expr = x->filter_store;
        } else if (strcmp(a, "--all") == 0) {
            x->all = true;
        } else if (strcmp(a, "--with") == 0 && more && !x->is_delete) {
            if (x->n_changes == RCLI_MAX_WITH) {
                fprintf(stderr, "dlqx %s: at most %d --with\n", x->cmd, RCLI_MAX_WITH);
                return EXIT_USAGE;
            }
            struct error err;
            size_t k = x->n_changes;
            if (env_change_parse(argv[++i], &x->changes[k], &x->change_vals[k], &err) != ST_OK) {
                fprintf(stderr, "dlqx %s: --with %s: %s\n", x->cmd, argv[i], err.msg);
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
                fprintf(stderr,
                        "dlqx %s: --to takes EXCHANGE:ROUTING_KEY (\":orders\" is the default "
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
        } else if (strcmp(a, "--bypass") == 0) {
            x->bypass = true;
        } else if (strcmp(a, "--keep-error") == 0) {
            x->keep_error = true;
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
                fprintf(stderr, "dlqx %s: --rate takes messages per second\n", x->cmd);
                return EXIT_USAGE;
            }
        } else if (strcmp(a, "--window") == 0 && more) {
            double w;
            if (!number(argv[++i], &w) || w < 1 || w > 65535) {
                fprintf(stderr, "dlqx %s: --window takes 1 to 65535\n", x->cmd);
                return EXIT_USAGE;
            }
            x->window = (uint32_t)w;
        } else if (strncmp(a, "--canary", 8) == 0 && (a[8] == '\0' || a[8] == '=')) {
            double s = 10;
            if (a[8] == '=' && (!number(a + 9, &s) || s <= 0)) {
                fprintf(stderr, "dlqx %s: --canary=SECONDS\n", x->cmd);
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
                fprintf(stderr, "dlqx %s: --type is classic, quorum or stream\n", x->cmd);
                return EXIT_USAGE;
            }
        } else if (strcmp(a, "--delivery-limit") == 0 && more) {
            x->delivery_limit = strtoll(argv[++i], NULL, 10);
            x->limit_given = true;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(x->cmd, stdout);
            return -1;
        } else if (a[0] == '-') {
            fprintf(stderr, "dlqx %s: unknown option %s (or it needs a value)\n", x->cmd, a);
            return EXIT_USAGE;
        } else if (!x->queue) {
            x->queue = a;
        } else {
            fprintf(stderr, "dlqx %s: one queue at a time (got %s and %s)\n", x->cmd, x->queue,
                    a);
            return EXIT_USAGE;
        }
    }
    if (!x->queue) {
        usage(x->cmd, stderr);
        return EXIT_USAGE;
    }
    if (!x->n_ids && !x->filter_expr && !x->all) {
        fprintf(stderr,
                "dlqx %s: say which dead letters: --id ID, --filter EXPR, --group FP or --all\n",
                x->cmd);
        return EXIT_USAGE;
    }
    if (x->filter_expr) {
        struct error err;
        if (filter_compile(x->filter_expr, &x->filter, &err) != ST_OK) {
            fprintf(stderr, "dlqx %s: --filter: %s\n", x->cmd, err.msg);
            return EXIT_USAGE;
        }
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
    if (x->mode == RESTAMP_MOVE && x->n_changes) {
        fprintf(stderr, "dlqx move: a move sends the message as it is; use dlqx replay --with\n");
        return EXIT_USAGE;
    }
    if (x->edit && !x->snapshot) {
        fprintf(stderr, "dlqx %s: --edit needs --snapshot FILE (the body to start from)\n",
                x->cmd);
        return EXIT_USAGE;
    }
    if (x->dry_run && !x->snapshot) {
        fprintf(stderr,
                "dlqx %s: a dry run reads nothing from the queue — not even a requeue — so it "
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
    bool want = c->plan ? replay_plan_take_message(c->plan->find, m, &d)
                        : rcli_selected(x, m, &d);
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
    return interrupted ? RC_CANCEL : RC_GO;
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
    sb_adds(&sb, res == JR_KEPT ? "kept " : "UNKNOWN ");
    sanitize_append(&sb, old_id->data, old_id->len, 0);
    sb_adds(&sb, ": ");
    sanitize_append(&sb, reason ? reason : "", reason ? strlen(reason) : 0, 0);
    fprintf(stderr, "dlqx: %s\n", sb.buf);
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
    fprintf(stderr, "dlqx: the edited body is not valid: %s\n", why);
    return ask("Edit it again?") == 1;
}

static int report(const struct rcli *x, const struct replay_report *r, const struct rcli_plan *p,
                  const char *journal)
{
    size_t missing = p ? replay_plan_size(p->find) : 0;
    if (x->json) {
        json_t *o = json_object();
        json_object_set_new(o, "run", json_string(r->run_id));
        json_object_set_new(o, "queue", json_string(x->queue));
        json_object_set_new(o, "op", json_string(x->is_delete ? "delete"
                                                              : restamp_mode_name(x->mode)));
        json_object_set_new(o, "end", json_string(replay_end_name(r->end)));
        json_object_set_new(o, "detail", json_string(r->detail));
        json_object_set_new(o, "taken", json_integer((json_int_t)r->taken));
        json_object_set_new(o, "selected", json_integer((json_int_t)r->selected));
        json_object_set_new(o, "done", json_integer((json_int_t)r->done));
        json_object_set_new(o, "kept", json_integer((json_int_t)r->kept));
        json_object_set_new(o, "unknown", json_integer((json_int_t)r->unknown));
        json_object_set_new(o, "not_sent", json_integer((json_int_t)r->not_sent));
        json_object_set_new(o, "not_found", json_integer((json_int_t)missing));
        json_object_set_new(o, "ready_before", json_integer(r->ready_before));
        json_object_set_new(o, "ready_after",
                            r->have_after ? json_integer(r->ready_after) : json_null());
        json_object_set_new(o, "canary_back", json_boolean(r->canary_back));
        json_t *why = json_array();
        for (size_t i = 0; i < r->n_reasons; i++)
            json_array_append_new(why, json_pack("{s:s,s:I}", "reason", r->reasons[i].text, "n",
                                                 (json_int_t)r->reasons[i].n));
        json_object_set_new(o, "reasons", why);
        json_object_set_new(o, "seconds", json_real(r->seconds));
        json_object_set_new(o, "journal", json_string(journal));
        char *s = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(6));
        printf("%s\n", s);
        free(s);
        json_decref(o);
    } else {
        struct strbuf sb;
        sb_init(&sb);
        sanitize_append(&sb, r->detail, strlen(r->detail), 0);
        fprintf(stderr, "dlqx %s: %s in %.2f s\n", x->cmd, sb.buf, r->seconds);
        for (size_t i = 0; i < r->n_reasons; i++) {
            sb_reset(&sb);
            sanitize_append(&sb, r->reasons[i].text, strlen(r->reasons[i].text), 0);
            fprintf(stderr, "dlqx %s:   %llu × %s\n", x->cmd,
                    (unsigned long long)r->reasons[i].n, sb.buf);
        }
        sb_free(&sb);
        if (missing)
            fprintf(stderr,
                    "dlqx %s: %zu planned dead letters were not in the queue (replayed or "
                    "removed since the snapshot?)\n",
                    x->cmd, missing);
        if (r->have_after)
            fprintf(stderr, "dlqx %s: %u ready before, %u after\n", x->cmd, r->ready_before,
                    r->ready_after);
        fprintf(stderr, "dlqx %s: journal %s, run %s\n", x->cmd, journal, r->run_id);
        if (r->unknown)
            fprintf(stderr,
                    "dlqx %s: %llu outcomes are unknown (possible duplicates, never losses): "
                    "dlqx journal --pending\n",
                    x->cmd, (unsigned long long)r->unknown);
    }
    return rcli_exit_code(r, missing);
}

static int run(struct rcli *x)
{
    struct rcli_plan plan;
    struct rcli_plan *p = NULL;
    int rc = EXIT_OK;
    struct conn *c = NULL;
    struct journal *j = NULL;
    char *jpath = NULL;
    x->now_ms = clock_now_ms();
    if (x->b.read_only && !x->dry_run) {
        fprintf(stderr,
                "dlqx %s: this connection is read-only (--read-only, DLQX_READ_ONLY or "
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
                fprintf(stderr, "dlqx %s: --edit works on one dead letter; the selection has "
                                "%llu\n",
                        x->cmd, (unsigned long long)p->selected);
                rc = EXIT_USAGE;
                goto out;
            }
            struct error err;
            const struct message *m = &p->examples[0];
            if (editor_edit(&m->body, props_string(&m->props, PROP_content_type), edit_retry,
                            NULL, &x->body, &err) != ST_OK) {
                fprintf(stderr, "dlqx %s: %s\n", x->cmd, err.msg);
                rc = EXIT_USAGE;
                goto out;
            }
            x->has_body = true;
            /* The plan again, with the new body. */
            rcli_plan_free(p);
            rcli_plan_build(x, p);
        }
    }
    if (!x->no_broker) {
        c = broker_connect(&x->b, &rc);
        if (!c && !x->dry_run)
            goto out;
    }
    rc = EXIT_OK;
    if (p) {
        rcli_plan_routes(p, c);
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
            fprintf(stderr, "dlqx %s: dry run: nothing was read from or written to the broker\n",
                    x->cmd);
            goto out;
        }
        if (p->sendable == 0) {
            fprintf(stderr, "dlqx %s: nothing to do\n", x->cmd);
            rc = p->selected ? EXIT_KEPT : EXIT_NOMATCH;
            goto out;
        }
    }
    if (!x->yes) {
        char q[400];
        const char *verb = x->is_delete ? "Delete" : x->mode == RESTAMP_MOVE ? "Move"
                           : x->mode == RESTAMP_REISSUE                   ? "Re-issue"
                                                                          : "Replay";
        if (p)
            snprintf(q, sizeof q, "%s %llu dead letters of %.200s?", verb,
                     (unsigned long long)p->sendable, x->queue);
        else
            snprintf(q, sizeof q, "%s every selected dead letter of %.200s (%s)?", verb,
                     x->queue, x->all ? "all of them" : x->filter_expr ? x->filter_expr : "by id");
        int yes = ask(q);
        if (yes < 0) {
            fprintf(stderr, "dlqx %s: no terminal to ask: give --yes to write\n", x->cmd);
            rc = EXIT_USAGE;
            goto out;
        }
        if (!yes) {
            fprintf(stderr, "dlqx %s: nothing was sent\n", x->cmd);
            rc = EXIT_DECLINED;
            goto out;
        }
    }
    jpath = x->journal_path ? xstrdup(x->journal_path) : journal_default_path();
    struct error err;
    error_clear(&err);
    if (journal_open(jpath, &j, &err) != ST_OK) {
        fprintf(stderr, "dlqx %s: %s: nothing was sent\n", x->cmd, err.msg);
        rc = EXIT_IOERR;
        goto out;
    }
    struct peek_queue_info info = {x->kind, x->type_given || x->limit_given ? x->delivery_limit
                                                                            : -1,
                                   false};
    if (!x->limit_given)
        info.delivery_limit = -1;
    broker_queue_info(&x->b, x->queue, &info, x->type_given, x->limit_given, false);
    struct run_ctx ctx = {x, p, isatty(STDERR_FILENO) != 0 && !x->json, 0};
    struct replay_opts o;
    memset(&o, 0, sizeof o);
    o.queue = x->queue;
    o.kind = info.kind;
    o.delivery_limit = info.delivery_limit;
    o.force = x->force;
    o.op = x->is_delete ? "delete" : restamp_mode_name(x->mode);
    o.expect = p ? replay_plan_size(p->find) : 0;
    o.window = x->window;
    o.rate = x->rate;
    o.canary_wait_ms = x->canary_ms;
    o.journal = j;
    o.select = select_cb;
    o.progress = progress_cb;
    o.outcome = outcome_cb;
    o.ctx = &ctx;
    signal(SIGINT, on_sigint);
    struct replay_report r;
    enum conn_err kind = CONN_OK;
    enum status st = replay_run(c, &o, &r, &kind, &err);
    signal(SIGINT, SIG_DFL);
    if (ctx.tty)
        fputs("\r\033[K", stderr);
    if (st != ST_OK) {
        fprintf(stderr, "dlqx %s: %s\n", x->cmd, err.msg);
        rc = broker_exit_code(kind);
        if (rc == EXIT_OK)
            rc = EXIT_IOERR;
        goto out;
    }
    rc = report(x, &r, p, jpath);
out:
    if (j)
        journal_close(j);
    free(jpath);
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
