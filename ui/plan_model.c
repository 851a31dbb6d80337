/*
 * plan_model: the lines of a plan and of how its pass ended, and the edits that make it
 * again (plan_model.h). Every line is sanitised when it is added: the bytes of a message
 * (an id, a header, a body in the diff) reach the screen only as visible escapes.
 */
#include "plan_model.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sanitize.h"
#include "util.h"

const char *plan_op_name(enum plan_op op)
{
    static const char *const n[] = {"replay", "re-issue", "move", "delete"};
    return n[op];
}

static void lines_clear(struct plan_state *s)
{
    for (size_t i = 0; i < s->n_lines; i++)
        free(s->lines[i].text);
    s->n_lines = 0;
}

static void add_line(struct plan_state *s, enum ui_attr attr, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void add_line(struct plan_state *s, enum ui_attr attr, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    struct strbuf raw;
    sb_init(&raw);
    sb_vaddf(&raw, fmt, ap);
    va_end(ap);
    struct strbuf safe;
    sb_init(&safe);
    sanitize_append(&safe, raw.buf ? raw.buf : "", raw.len, 0);
    sb_free(&raw);
    xgrow((void **)&s->lines, &s->cap_lines, s->n_lines + 1, sizeof *s->lines);
    s->lines[s->n_lines].text = sb_detach(&safe, NULL);
    if (!s->lines[s->n_lines].text)
        s->lines[s->n_lines].text = xstrdup("");
    s->lines[s->n_lines++].attr = attr;
}

static void restamp_opts_of(const struct plan_state *s, struct restamp_opts *ro)
{
    memset(ro, 0, sizeof *ro);
    ro->mode = s->mode;
    ro->changes = s->changes;
    ro->n_changes = s->n_changes;
    ro->body = s->has_body ? &s->body : NULL;
    ro->to_exchange = s->to_exchange;
    ro->to_routing_key = s->to_routing_key;
    ro->dlq = s->queue;
    ro->now_ms = clock_now_ms();
}

enum status plan_model_copy(const struct plan_state *s, const struct decoded *d,
                            struct outgoing *out, struct error *err)
{
    struct restamp_opts ro;
    restamp_opts_of(s, &ro);
    return restamp_build(d, &ro, out, err);
}

static void note_target(struct plan_state *s, const struct outgoing *o)
{
    for (size_t i = 0; i < s->n_targets; i++)
        if (bytes_eq_cstr(&o->exchange, s->targets[i].exchange) &&
            bytes_eq_cstr(&o->routing_key, s->targets[i].routing_key)) {
            s->targets[i].n++;
            return;
        }
    if (s->n_targets == PLAN_TARGETS)
        return;
    s->targets[s->n_targets].exchange = xstrndup((const char *)o->exchange.data, o->exchange.len);
    s->targets[s->n_targets].routing_key =
        xstrndup((const char *)o->routing_key.data, o->routing_key.len);
    s->targets[s->n_targets].n = 1;
    snprintf(s->targets[s->n_targets].route, sizeof s->targets[0].route, "not checked");
    s->n_targets++;
}

static void targets_clear(struct plan_state *s)
{
    for (size_t i = 0; i < s->n_targets; i++) {
        free(s->targets[i].exchange);
        free(s->targets[i].routing_key);
    }
    s->n_targets = 0;
}

void plan_model_build(struct plan_state *s, struct store *store, unsigned san_flags,
                      plan_route_fn routes, void *ctx)
{
    lines_clear(s);
    targets_clear(s);
    s->sendable = s->kept = 0;
    s->kept_why[0] = '\0';
    struct diff shown;
    memset(&shown, 0, sizeof shown);
    char shown_why[300] = "";
    char shown_id[200] = "";
    const struct dialect_ops *shown_dialect = NULL;
    int64_t now = clock_now_ms();
    for (size_t k = 0; k < s->n; k++) {
        struct message m;
        struct error err;
        if (store_get(store, s->entries[k], &m, &err) != ST_OK) {
            s->kept++;
            snprintf(s->kept_why, sizeof s->kept_why, "%.200s", err.msg);
            continue;
        }
        struct decoded d;
        decode_message(&m, now, &d);
        if (k == s->at)
            shown_dialect = d.dialect;
        if (k == s->at)
            snprintf(shown_id, sizeof shown_id, "%.*s",
                     (int)(d.env->id.len > 150 ? 150 : d.env->id.len),
                     (const char *)d.env->id.data);
        if (s->op == PLAN_DELETE) {
            s->sendable++;
        } else {
            struct outgoing out;
            error_clear(&err);
            if (plan_model_copy(s, &d, &out, &err) == ST_OK) {
                s->sendable++;
                note_target(s, &out);
                if (k == s->at)
                    restamp_diff(&m, &out, &shown);
                outgoing_free(&out);
            } else {
                s->kept++;
                snprintf(s->kept_why, sizeof s->kept_why, "%.200s", err.msg);
                if (k == s->at)
                    snprintf(shown_why, sizeof shown_why, "%.280s", err.msg);
            }
        }
        decoded_free(&d);
        message_free(&m);
    }
    /* Whether each target routes: the caller's to ask (a passive declare, nothing published). */
    if (s->n_targets && routes)
        routes(s, ctx);
    add_line(s, UA_TITLE, "%s %s of %s: %llu to %s, %llu kept", plan_op_name(s->op), s->scope,
             s->queue, (unsigned long long)s->sendable, s->op == PLAN_DELETE ? "delete" : "send",
             (unsigned long long)s->kept);
    for (size_t i = 0; i < s->n_targets; i++)
        add_line(s, strncmp(s->targets[i].route, "routes", 6) == 0 ? UA_GOOD : UA_WARN,
                 "  %6llu → %s%s%s%s", (unsigned long long)s->targets[i].n,
                 s->targets[i].exchange[0] ? "exchange " : "queue ",
                 s->targets[i].exchange[0] ? s->targets[i].exchange : s->targets[i].routing_key,
                 s->targets[i].exchange[0] ? " key " : "",
                 s->targets[i].exchange[0] ? s->targets[i].routing_key : "");
    for (size_t i = 0; i < s->n_targets; i++)
        add_line(s, UA_DIM, "         %s", s->targets[i].route);
    if (s->kept)
        add_line(s, UA_WARN, "  kept (not sent): %s", s->kept_why);
    if (s->n_changes || s->has_body || s->to_routing_key)
        add_line(s, UA_ACCENT, "  edits: %s%s%s%s%s%s", s->with_text ? s->with_text : "",
                 s->has_body ? "  [new body]" : "",
                 !s->to_routing_key                  ? ""
                 : s->to_exchange && *s->to_exchange ? "  to exchange "
                                                     : "  to queue ",
                 s->to_exchange ? s->to_exchange : "",
                 s->to_routing_key && s->to_exchange && *s->to_exchange ? " key " : "",
                 s->to_routing_key ? s->to_routing_key : "");
    if (s->canary)
        add_line(s, UA_ACCENT, "  canary: one copy first, then the rest if it stays away (10 s)");
    if (s->op != PLAN_DELETE) {
        struct strbuf pace;
        sb_init(&pace);
        plan_pace_describe(&s->pace, s->sendable, &pace);
        add_line(s, UA_ACCENT, "  %s   P changes it", pace.buf);
        sb_free(&pace);
    }
    add_line(s, UA_NORMAL, "%s", "");
    add_line(s, UA_HEADER, "copy %zu of %zu: %s", s->at + 1, s->n, shown_id);
    /* What the framework's own tool does, which this copy follows (docs/dialects.md). */
    if (shown_dialect && s->op == PLAN_REPLAY && shown_dialect->replay_rule)
        add_line(s, UA_DIM, "  %s replay: %s", shown_dialect->title, shown_dialect->replay_rule);
    if (shown_why[0])
        add_line(s, UA_ERROR, "  kept: %s", shown_why);
    int last = -1;
    for (size_t i = 0; i < shown.n; i++) {
        const struct diff_row *r = &shown.rows[i];
        if ((int)r->section != last) {
            add_line(s, UA_HEADER, "  %-24s %-44s %s", diff_section_name(r->section), "dead letter",
                     "copy");
            last = (int)r->section;
        }
        char mark = diff_op_mark(r->op);
        enum ui_attr attr = r->op == DIFF_SAME      ? UA_NORMAL
                            : r->op == DIFF_ADDED   ? UA_GOOD
                            : r->op == DIFF_REMOVED ? UA_ERROR
                                                    : UA_WARN;
        /* Cells cut by display columns (never inside a character or an escape), marked
         * with "…" when cut, so that the columns line up whatever the bytes. */
        struct strbuf row;
        sb_init(&row);
        sb_addc(&row, mark);
        sb_addc(&row, ' ');
        const char *name = r->name ? r->name : "";
        sanitize_fit(&row, name, strlen(name), 24, SAN_PAD | san_flags);
        sb_addc(&row, ' ');
        const char *old = r->old_text ? r->old_text : "";
        sanitize_fit(&row, old, strlen(old), 44, SAN_PAD | san_flags);
        sb_addc(&row, ' ');
        if (r->new_text)
            sanitize_append(&row, r->new_text, strlen(r->new_text), san_flags);
        add_line(s, attr, "%s", row.buf ? row.buf : "");
        sb_free(&row);
    }
    diff_free(&shown);
}

void plan_model_summary(struct plan_state *s, size_t gone)
{
    lines_clear(s);
    const struct replay_report *r = &s->rep;
    add_line(s, UA_TITLE, "%s %s of %s: %s", plan_op_name(s->op), s->scope, s->queue, r->detail);
    add_line(s, r->unknown ? UA_WARN : UA_GOOD,
             "  done %llu   kept %llu   unknown %llu   not sent %llu   in %.1f s",
             (unsigned long long)r->done, (unsigned long long)r->kept,
             (unsigned long long)r->unknown, (unsigned long long)r->not_sent, r->seconds);
    for (size_t i = 0; i < r->n_reasons; i++)
        add_line(s, UA_WARN, "  %llu × %s", (unsigned long long)r->reasons[i].n,
                 r->reasons[i].text);
    if (r->have_after)
        add_line(s, UA_NORMAL, "  %s: %u ready before, %u after", s->queue, r->ready_before,
                 r->ready_after);
    if (r->unknown)
        add_line(s, UA_WARN,
                 "  possible duplicates are named in the journal: dlqx journal "
                 "--pending");
    add_line(s, UA_DIM, "  journal run %s", r->run_id);
    add_line(s, UA_NORMAL, "%s", "");
    if (gone == 1)
        add_line(s, UA_NORMAL, "%s",
                 "  the dead letter taken out is no longer listed (the tree marks it)");
    else if (gone)
        add_line(s, UA_NORMAL,
                 "  the %zu dead letters taken out are no longer listed (the tree marks "
                 "them)",
                 gone);
    add_line(s, UA_ACCENT, "  r takes a fresh snapshot of %s; Esc goes back", s->queue);
}

/* ---- edits ---------------------------------------------------------------------------- */

static void changes_clear(struct plan_state *s)
{
    for (size_t i = 0; i < s->n_changes; i++)
        env_change_release(&s->changes[i], &s->vals[i]);
    s->n_changes = 0;
}

bool plan_model_set_changes(struct plan_state *s, const char *text, struct error *err)
{
    changes_clear(s);
    char *copy = xstrdup(text);
    bool ok = true;
    for (char *tok = strtok(copy, " "); tok && ok; tok = strtok(NULL, " ")) {
        if (s->n_changes == PLAN_MAX_CHANGES)
            break;
        if (env_change_parse(tok, &s->changes[s->n_changes], &s->vals[s->n_changes], err) !=
            ST_OK) {
            ok = false;
        } else {
            s->n_changes++;
        }
    }
    free(copy);
    if (!ok)
        changes_clear(s);
    free(s->with_text);
    s->with_text = ok && *text ? xstrdup(text) : NULL;
    return ok;
}

bool plan_model_set_target(struct plan_state *s, const char *text, struct error *err)
{
    free(s->to_exchange);
    free(s->to_routing_key);
    s->to_exchange = s->to_routing_key = NULL;
    const char *colon = strchr(text, ':');
    if (*text && !colon) {
        error_set(err, ST_EINVAL, "a target is EXCHANGE:ROUTING_KEY");
        return false;
    }
    if (*text) {
        s->to_exchange = xstrndup(text, (size_t)(colon - text));
        s->to_routing_key = xstrdup(colon + 1);
    }
    return true;
}

bool plan_model_toggle_reissue(struct plan_state *s)
{
    if (s->op != PLAN_REPLAY && s->op != PLAN_REISSUE)
        return false;
    s->op = s->op == PLAN_REPLAY ? PLAN_REISSUE : PLAN_REPLAY;
    s->mode = s->op == PLAN_REPLAY ? RESTAMP_REPLAY : RESTAMP_REISSUE;
    return true;
}

bool plan_model_swap_scope(struct plan_state *s)
{
    if (!s->alt)
        return false;
    size_t *e = s->entries, n = s->n;
    char *sc = s->scope;
    s->entries = s->alt, s->n = s->n_alt, s->scope = s->alt_scope;
    s->alt = e, s->n_alt = n, s->alt_scope = sc;
    s->at = 0;
    return true;
}

struct plan_state *plan_model_new(enum plan_op op, const char *queue, const size_t *entries,
                                  size_t n, const char *scope, const size_t *alt, size_t n_alt,
                                  const char *alt_scope)
{
    struct plan_state *s = xcalloc(1, sizeof *s);
    s->op = op;
    s->mode = op == PLAN_REISSUE ? RESTAMP_REISSUE
              : op == PLAN_MOVE  ? RESTAMP_MOVE
                                 : RESTAMP_REPLAY;
    s->queue = xstrdup(queue);
    s->entries = xmalloc(n * sizeof *entries);
    memcpy(s->entries, entries, n * sizeof *entries);
    s->n = n;
    s->scope = xstrdup(scope);
    plan_pace_init(&s->pace);
    if (alt && n_alt > 1) {
        s->alt = xmalloc(n_alt * sizeof *alt);
        memcpy(s->alt, alt, n_alt * sizeof *alt);
        s->n_alt = n_alt;
        s->alt_scope = xstrdup(alt_scope);
    }
    if (op == PLAN_MOVE) {
        /* The parking queue beside the DLQ: orders.dlq → orders.parked. */
        size_t ql = strlen(queue);
        s->to_exchange = xstrdup("");
        s->to_routing_key = ql > 4 && strcmp(queue + ql - 4, ".dlq") == 0
                                ? xasprintf("%.*s.parked", (int)(ql - 4), queue)
                                : xasprintf("%s.parked", queue);
    }
    return s;
}

void plan_model_free(struct plan_state *s)
{
    if (!s)
        return;
    lines_clear(s);
    free(s->lines);
    targets_clear(s);
    changes_clear(s);
    free(s->with_text);
    bytes_free(&s->body);
    free(s->to_exchange);
    free(s->to_routing_key);
    free(s->entries);
    free(s->alt);
    free(s->queue);
    free(s->scope);
    free(s->alt_scope);
    free(s);
}
