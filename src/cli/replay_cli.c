/*
 * replay_cli: the selection of dead letters, the copy of each, and the plan read from a
 * snapshot and printed before anything is sent (src/cli/replay_cli.h).
 */
#include "replay_cli.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sanitize.h"
#include "sha256.h"
#include "util.h"

#define PLAN_EXAMPLES 3

bool rcli_selected(const struct rcli *x, const struct message *m, const struct decoded *d)
{
    if (x->n_ids) {
        bool hit = false;
        for (size_t i = 0; i < x->n_ids && !hit; i++)
            hit = bytes_eq_cstr(&d->env->id, x->ids[i]);
        if (!hit)
            return false;
    }
    if (x->filter && !filter_match_message(x->filter, m, d, x->now_ms))
        return false;
    return x->n_ids || x->filter || x->all;
}

void rcli_restamp_opts(const struct rcli *x, struct restamp_opts *ro)
{
    memset(ro, 0, sizeof *ro);
    ro->mode = x->mode;
    ro->changes = x->changes;
    ro->n_changes = x->n_changes;
    ro->body = x->has_body ? &x->body : NULL;
    ro->to_exchange = x->to_exchange;
    ro->to_routing_key = x->to_routing_key;
    ro->dlq = x->queue;
    ro->bq_bypass = x->bypass;
    ro->keep_error = x->keep_error;
    ro->strip_fault = x->strip_fault;
    ro->ack_queue = x->ack_queue != NULL;
    ro->ack_queue_name = x->ack_queue;
    ro->now_ms = x->now_ms ? x->now_ms : clock_now_ms();
}

enum status rcli_build(const struct rcli *x, const struct decoded *d, struct outgoing *out,
                       struct error *err)
{
    struct restamp_opts ro;
    rcli_restamp_opts(x, &ro);
    return restamp_build(d, &ro, out, err);
}

/* ---- the plan ------------------------------------------------------------------------- */

struct plan_ctx {
    struct rcli *x;
    struct rcli_plan *p;
};

static void plan_kept(struct rcli_plan *p, const char *why)
{
    for (size_t i = 0; i < p->n_kept; i++)
        if (strcmp(p->kept[i].text, why) == 0) {
            p->kept[i].n++;
            return;
        }
    if (p->n_kept < sizeof p->kept / sizeof p->kept[0]) {
        size_t n = strlen(why);
        if (n >= sizeof p->kept[0].text)
            n = sizeof p->kept[0].text - 1;
        memcpy(p->kept[p->n_kept].text, why, n);
        p->kept[p->n_kept].text[n] = '\0';
        p->kept[p->n_kept++].n = 1;
    }
}

static void plan_target(struct rcli_plan *p, const struct outgoing *o)
{
    for (size_t i = 0; i < p->n_targets; i++)
        if (bytes_eq_cstr(&o->exchange, p->targets[i].exchange) &&
            bytes_eq_cstr(&o->routing_key, p->targets[i].routing_key)) {
            p->targets[i].n++;
            return;
        }
    p->targets = xrealloc(p->targets, (p->n_targets + 1) * sizeof *p->targets);
    struct rcli_target *t = &p->targets[p->n_targets++];
    memset(t, 0, sizeof *t);
    t->exchange = xstrndup((const char *)o->exchange.data, o->exchange.len);
    t->routing_key = xstrndup((const char *)o->routing_key.data, o->routing_key.len);
    t->n = 1;
    t->route = ROUTE_ERROR;
    snprintf(t->route_text, sizeof t->route_text, "not checked");
}

static json_t *bytes_json(const struct bytes *b)
{
    if (utf8_valid(b->data, b->len) && !memchr(b->data, 0, b->len))
        return json_stringn((const char *)b->data, b->len);
    char *b64 = base64_encode(b->data, b->len);
    json_t *o = json_pack("{s:s}", "base64", b64);
    free(b64);
    return o;
}

static bool plan_record(struct message *m, bool *keep, void *vctx)
{
    struct plan_ctx *c = vctx;
    struct rcli *x = c->x;
    struct rcli_plan *p = c->p;
    /* The snapshot's dead letters were read from this queue: the copy's stamps say so. */
    struct decoded d;
    decode_message(m, x->now_ms, &d);
    if (!rcli_selected(x, m, &d)) {
        decoded_free(&d);
        return true;
    }
    p->selected++;
    char sha[65];
    sha256_hex(m->body.data, m->body.len, sha);
    json_t *row = x->json && x->dry_run ? json_object() : NULL;
    if (row) {
        json_object_set_new(row, "id", bytes_json(&d.env->id));
        json_object_set_new(row, "sha256", json_string(sha));
    }
    bool ok = true;
    if (x->is_delete) {
        p->sendable++;
        replay_plan_add_message(p->find, m, &d);
        if (row)
            json_object_set_new(row, "action", json_string("delete"));
    } else {
        struct outgoing out;
        struct error err;
        error_clear(&err);
        if (rcli_build(x, &d, &out, &err) == ST_OK) {
            p->sendable++;
            replay_plan_add_message(p->find, m, &d);
            plan_target(p, &out);
            if (row) {
                json_object_set_new(row, "action", json_string(restamp_mode_name(x->mode)));
                json_object_set_new(row, "new_id", bytes_json(&out.id));
                json_object_set_new(row, "exchange", bytes_json(&out.exchange));
                json_object_set_new(row, "routing_key", bytes_json(&out.routing_key));
                json_object_set_new(row, "target_how",
                                    json_string(out.target_how ? out.target_how : "?"));
                struct diff df;
                restamp_diff(m, &out, &df);
                json_object_set_new(row, "diff", diff_to_json(&df));
                diff_free(&df);
            }
            outgoing_free(&out);
        } else {
            ok = false;
            plan_kept(p, err.msg);
            if (row) {
                json_object_set_new(row, "action", json_string("keep"));
                json_object_set_new(row, "why", json_string(err.msg));
            }
        }
    }
    if (row)
        json_array_append_new(p->dry, row);
    decoded_free(&d);
    if (ok && p->n_examples < PLAN_EXAMPLES) {
        p->examples[p->n_examples++] = *m;
        *keep = true;
    }
    return true;
}

bool rcli_plan_build(struct rcli *x, struct rcli_plan *p)
{
    memset(p, 0, sizeof *p);
    p->find = replay_plan_new();
    p->examples = xcalloc(PLAN_EXAMPLES, sizeof *p->examples);
    if (x->json && x->dry_run)
        p->dry = json_array();
    struct plan_ctx c = {x, p};
    struct cli_inputs stats;
    char *files[1] = {(char *)(uintptr_t)x->snapshot};
    cli_read_inputs(files, 1, plan_record, &c, &stats);
    if (stats.open_failed || stats.io_failed || stats.bad_limit)
        return false;
    if (stats.bad_records)
        san_eprintf("dlqx %s: %ld malformed records in the snapshot were skipped\n", x->cmd,
                    stats.bad_records);
    return true;
}

void rcli_plan_free(struct rcli_plan *p)
{
    replay_plan_free(p->find);
    for (size_t i = 0; i < p->n_targets; i++) {
        free(p->targets[i].exchange);
        free(p->targets[i].routing_key);
    }
    free(p->targets);
    for (size_t i = 0; i < p->n_examples; i++)
        message_free(&p->examples[i]);
    free(p->examples);
    json_decref(p->dry);
    memset(p, 0, sizeof *p);
}

void rcli_plan_routes(struct rcli_plan *p, struct conn *c)
{
    for (size_t i = 0; i < p->n_targets; i++) {
        struct rcli_target *t = &p->targets[i];
        if (!c) {
            t->route = ROUTE_ERROR;
            snprintf(t->route_text, sizeof t->route_text, "not checked (no broker)");
            continue;
        }
        t->route =
            replay_check_route(c, t->exchange, t->routing_key, t->route_text, sizeof t->route_text);
    }
}

/* ---- printing ------------------------------------------------------------------------- */

static void put_safe(FILE *to, const char *s, size_t n, int width)
{
    struct strbuf sb;
    sb_init(&sb);
    if (width > 0)
        sanitize_fit(&sb, s, n, width, SAN_PAD);
    else
        sanitize_append(&sb, s, n, 0);
    if (sb.len)
        fwrite(sb.buf, 1, sb.len, to);
    sb_free(&sb);
}

void rcli_print_diff(const struct diff *d, FILE *to, int width)
{
    int col = width >= 100 ? (width - 30) / 2 : 0;
    enum diff_section last = (enum diff_section) - 1;
    for (size_t i = 0; i < d->n; i++) {
        const struct diff_row *r = &d->rows[i];
        if (r->section == DIFF_BODY && r->op == DIFF_SAME && d->n > 60)
            continue; /* long bodies: only what changed */
        if (r->section != last) {
            fprintf(to, "  %s\n", diff_section_name(r->section));
            last = r->section;
        }
        fprintf(to, "   %c ", diff_op_mark(r->op));
        if (r->name) {
            put_safe(to, r->name, strlen(r->name), 24);
            fputc(' ', to);
        }
        const char *o = r->old_text ? r->old_text : "";
        const char *n = r->new_text ? r->new_text : "";
        if (col > 0) {
            put_safe(to, o, strlen(o), col);
            fputs(r->op == DIFF_SAME ? "   " : " → ", to);
            put_safe(to, n, strlen(n), 0);
        } else if (r->op == DIFF_CHANGED) {
            put_safe(to, o, strlen(o), 0);
            fputs(" → ", to);
            put_safe(to, n, strlen(n), 0);
        } else {
            put_safe(to, r->op == DIFF_REMOVED ? o : n, strlen(r->op == DIFF_REMOVED ? o : n), 0);
        }
        fputc('\n', to);
    }
}

void rcli_plan_print(const struct rcli *x, const struct rcli_plan *p, FILE *to)
{
    const char *verb = x->is_delete ? "delete" : restamp_mode_name(x->mode);
    fprintf(to, "dlqx %s: ", x->cmd);
    put_safe(to, x->queue, strlen(x->queue), 0);
    fprintf(to, ": %llu selected in the snapshot, %llu to %s\n", (unsigned long long)p->selected,
            (unsigned long long)p->sendable, verb);
    for (size_t i = 0; i < p->n_examples; i++) {
        struct decoded d;
        decode_message(&p->examples[i], x->now_ms, &d);
        fprintf(to, "\n%s of ", verb);
        put_safe(to, (const char *)d.env->id.data, d.env->id.len, 0);
        fputc('\n', to);
        if (!x->is_delete) {
            struct outgoing out;
            struct error err;
            if (rcli_build(x, &d, &out, &err) == ST_OK) {
                struct diff df;
                restamp_diff(&p->examples[i], &out, &df);
                rcli_print_diff(&df, to, 120);
                diff_free(&df);
                outgoing_free(&out);
            }
        }
        decoded_free(&d);
    }
    if (p->sendable > p->n_examples && p->n_examples)
        fprintf(to, "\n… and %llu more\n", (unsigned long long)(p->sendable - p->n_examples));
    if (p->n_targets)
        fputs("\ntargets:\n", to);
    for (size_t i = 0; i < p->n_targets; i++) {
        const struct rcli_target *t = &p->targets[i];
        fprintf(to, "  %6llu → %s", (unsigned long long)t->n,
                t->exchange[0] ? "exchange " : "queue ");
        put_safe(to, t->exchange[0] ? t->exchange : t->routing_key,
                 strlen(t->exchange[0] ? t->exchange : t->routing_key), 0);
        if (t->exchange[0]) {
            fputs(" routing key ", to);
            put_safe(to, t->routing_key, strlen(t->routing_key), 0);
        }
        fputs(": ", to);
        put_safe(to, t->route_text, strlen(t->route_text), 0);
        fputc('\n', to);
    }
    if (p->n_kept)
        fputs("\nkept (nothing will be sent for these):\n", to);
    for (size_t i = 0; i < p->n_kept; i++) {
        fprintf(to, "  %6llu  ", (unsigned long long)p->kept[i].n);
        put_safe(to, p->kept[i].text, strlen(p->kept[i].text), 0);
        fputc('\n', to);
    }
}

/* ---- the report ------------------------------------------------------------------------- */

int rcli_report(const struct rcli *x, const struct replay_report *r, const struct rcli_plan *p,
                const char *journal)
{
    size_t missing = p ? replay_plan_size(p->find) : 0;
    if (x->json) {
        json_t *o = json_object();
        json_object_set_new(o, "run", json_string(r->run_id));
        json_object_set_new(o, "queue", json_string(x->queue));
        json_object_set_new(o, "op",
                            json_string(x->is_delete ? "delete" : restamp_mode_name(x->mode)));
        json_object_set_new(o, "end", json_string(replay_end_name(r->end)));
        json_object_set_new(o, "detail", json_string(r->detail));
        json_object_set_new(o, "taken", json_integer((json_int_t)r->taken));
        json_object_set_new(o, "selected", json_integer((json_int_t)r->selected));
        json_object_set_new(o, "done", json_integer((json_int_t)r->done));
        json_object_set_new(o, "kept", json_integer((json_int_t)r->kept));
        json_object_set_new(o, "unknown", json_integer((json_int_t)r->unknown));
        json_object_set_new(o, "refused", json_integer((json_int_t)r->refused));
        json_object_set_new(o, "not_sent", json_integer((json_int_t)r->not_sent));
        json_object_set_new(o, "not_found", json_integer((json_int_t)missing));
        json_object_set_new(o, "ready_before", json_integer(r->ready_before));
        json_object_set_new(o, "count_unsure", json_boolean(r->count_unsure));
        json_object_set_new(o, "ready_after",
                            r->have_after ? json_integer(r->ready_after) : json_null());
        json_object_set_new(o, "canary_back", json_boolean(r->canary_back));
        json_object_set_new(o, "attempts", json_integer(r->attempts));
        json_object_set_new(o, "resent", json_integer((json_int_t)r->resent));
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
        san_eprintf("dlqx %s: %s in %.2f s\n", x->cmd, sb.buf, r->seconds);
        for (size_t i = 0; i < r->n_reasons; i++) {
            sb_reset(&sb);
            sanitize_append(&sb, r->reasons[i].text, strlen(r->reasons[i].text), 0);
            san_eprintf("dlqx %s:   %llu × %s\n", x->cmd, (unsigned long long)r->reasons[i].n,
                        sb.buf);
        }
        sb_free(&sb);
        if (missing)
            san_eprintf("dlqx %s: %zu planned dead letters were not in the queue (replayed or "
                        "removed since the snapshot?)\n",
                        x->cmd, missing);
        if (r->have_after)
            san_eprintf("dlqx %s: %u ready before, %u after\n", x->cmd, r->ready_before,
                        r->ready_after);
        san_eprintf("dlqx %s: journal %s, run %s\n", x->cmd, journal, r->run_id);
        if (r->attempts > 1) {
            sb_init(&sb);
            sanitize_append(&sb, r->node, strlen(r->node), 0);
            san_eprintf("dlqx %s: %u attempts: the connection was lost %u %s and the run carried "
                        "on, last on %s; %llu dead letters left unknown were found again and "
                        "re-sent\n",
                        x->cmd, r->attempts, r->attempts - 1, r->attempts == 2 ? "time" : "times",
                        sb.buf, (unsigned long long)r->resent);
            sb_free(&sb);
        }
        if (r->unknown)
            san_eprintf("dlqx %s: %llu outcomes are unknown (possible duplicates, never losses): "
                        "dlqx journal --pending\n",
                        x->cmd, (unsigned long long)r->unknown);
    }
    return replay_exit_code(r, missing);
}
