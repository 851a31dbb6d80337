/*
 * journal_reconcile: the journal's pending intents against the broker. Before a writing
 * command's pass, an interrupted run's pending intents for the same queue on the same broker
 * are named (replay_pending_for, replay_setup.c); `dlqx journal --reconcile` looks, without
 * removing anything, at the DLQ and at the target queue of each pending intent — is the dead letter
 * still there, is its copy at the target — and writes a resolution record for each it can settle
 * (docs/journal-format.md), saying per message what it concluded and what to do.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "decode.h"
#include "hval_json.h"
#include "journal.h"
#include "replay_cli.h"
#include "replay_setup.h"
#include "sanitize.h"
#include "sha256.h"
#include "util.h"

static const char *jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* ---- what is in a queue ---------------------------------------------------------------- */

struct seen_queue {
    char *name;
    bool known;   /* read whole: the multiset below is the queue's content */
    bool missing; /* there is no such queue */
    uint32_t consumers;
    struct replay_plan *has; /* (envelope id, body digest) of each message */
    char why[300];           /* when not known */
};

static bool seen_sink(void *ctx, struct message *m)
{
    struct seen_queue *q = ctx;
    struct decoded d;
    decode_message(m, clock_now_ms(), &d);
    char sha[65];
    sha256_hex(m->body.len ? (const void *)m->body.data : "", m->body.len, sha);
    replay_plan_add(q->has, &d.env->id, sha);
    decoded_free(&d);
    message_free(m);
    return true;
}

/* Reads queue name whole, as a peek does (every message given back, in order). */
static void see_queue(struct conn *c, const struct broker_opts *b, struct seen_queue *q)
{
    q->has = replay_plan_new();
    uint32_t ready = 0;
    enum conn_err kind = CONN_OK;
    struct error err;
    error_clear(&err);
    if (conn_queue_inspect(c, 1, q->name, &ready, &q->consumers, &kind, &err) != ST_OK) {
        q->missing = kind == CONN_NOT_FOUND;
        q->known = q->missing;
        snprintf(q->why, sizeof q->why, "%.290s", err.msg);
        return;
    }
    struct peek_opts po;
    memset(&po, 0, sizeof po);
    po.queue = q->name;
    po.info.kind = QK_UNKNOWN;
    po.info.delivery_limit = -1;
    broker_queue_info(b, q->name, &po.info, false, false, false);
    po.sink = seen_sink;
    po.ctx = q;
    struct peek_report rep;
    if (peek_run(c, &po, &rep, &kind, &err) != ST_OK) {
        snprintf(q->why, sizeof q->why, "%.290s", err.msg);
        return;
    }
    q->known = rep.end == PEEK_COMPLETE;
    if (!q->known)
        snprintf(q->why, sizeof q->why, "it could not be read whole: %.260s", rep.detail);
}

static struct seen_queue *seen_get(struct seen_queue **qs, size_t *n, const char *name,
                                   struct conn *c, const struct broker_opts *b)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp((*qs)[i].name, name) == 0)
            return &(*qs)[i];
    *qs = xrealloc(*qs, (*n + 1) * sizeof **qs);
    struct seen_queue *q = &(*qs)[(*n)++];
    memset(q, 0, sizeof *q);
    q->name = xstrdup(name);
    see_queue(c, b, q);
    return q;
}

/* ---- --reconcile ----------------------------------------------------------------------- */

static bool take(struct seen_queue *q, const json_t *in, const char *id_key, const char *sha_key)
{
    struct bytes id = {0, NULL};
    const char *sha = jstr(in, sha_key);
    if (!sha || strlen(sha) != 64 ||
        bytes_from_json(json_object_get(in, id_key), id_key, &id, NULL) != ST_OK)
        return false;
    bool hit = replay_plan_take(q->has, &id, sha);
    bytes_free(&id);
    return hit;
}

static void say(const json_t *in, const char *what, const char *todo)
{
    struct strbuf sb;
    sb_init(&sb);
    struct bytes id = {0, NULL};
    const char *run = jstr(in, "run");
    sb_adds(&sb, "dlqx journal: ");
    sanitize_append(&sb, run ? run : "?", run ? (strlen(run) > 8 ? 8 : strlen(run)) : 1, 0);
    sb_adds(&sb, "#");
    char seq[24];
    snprintf(seq, sizeof seq, "%lld ", (long long)json_integer_value(json_object_get(in, "seq")));
    sb_adds(&sb, seq);
    if (bytes_from_json(json_object_get(in, "old_id"), "old_id", &id, NULL) == ST_OK) {
        sanitize_append(&sb, id.data, id.len > 120 ? 120 : id.len, 0);
        bytes_free(&id);
    }
    sb_adds(&sb, ": ");
    sanitize_append(&sb, what, strlen(what), 0);
    if (todo) {
        sb_adds(&sb, " — ");
        sanitize_append(&sb, todo, strlen(todo), 0);
    }
    fprintf(stdout, "%s\n", sb.buf);
    sb_free(&sb);
}

int rcli_reconcile(const char *jpath, struct broker_opts *b, const char *run_prefix)
{
    int rc = EXIT_OK;
    struct conn *c = broker_connect(b, &rc);
    if (!c)
        return rc;
    json_t *others = NULL;
    json_t *pend = replay_pending_for(jpath, b, c, NULL, &others);
    struct journal *j = NULL;
    struct error err;
    error_clear(&err);
    struct seen_queue *qs = NULL;
    size_t nq = 0, resolved = 0, left = 0;
    char by[37];
    journal_new_run_id(by);
    size_t i;
    json_t *in;
    json_array_foreach(pend, i, in)
    {
        const char *run = jstr(in, "run");
        if (run_prefix && (!run || strncmp(run, run_prefix, strlen(run_prefix)) != 0))
            continue;
        const char *src = jstr(in, "run_source") ? jstr(in, "run_source") : jstr(in, "source");
        const char *op = jstr(in, "op");
        if (!run || !src || !op) {
            say(in, "the intent names no run, source or op: cannot tell", NULL);
            left++;
            continue;
        }
        struct seen_queue *dq = seen_get(&qs, &nq, src, c, b);
        if (!dq->known) {
            char what[600];
            snprintf(what, sizeof what,
                     "cannot tell whether the dead letter is still in %.100s "
                     "(%.280s); it stays pending",
                     src, dq->why);
            say(in, what, NULL);
            left++;
            continue;
        }
        bool in_dlq = take(dq, in, "old_id", "old_sha256");
        bool is_delete = strcmp(op, "delete") == 0;
        int at_target = -1;
        char tq_note[200] = "";
        const json_t *t = json_object_get(in, "target");
        const char *tex = jstr(t, "exchange"), *trk = jstr(t, "routing_key");
        if (!is_delete && tex && !*tex && trk) {
            struct seen_queue *tq = seen_get(&qs, &nq, trk, c, b);
            if (tq->known && (tq->missing || tq->consumers == 0))
                at_target = take(tq, in, "new_id", "new_sha256") ? 1 : 0;
            else if (tq->known)
                snprintf(tq_note, sizeof tq_note,
                         "queue %.100s has %u consumers, which may have taken the copy", trk,
                         tq->consumers);
            else
                snprintf(tq_note, sizeof tq_note, "%.190s", tq->why);
        } else if (!is_delete) {
            snprintf(tq_note, sizeof tq_note,
                     "its target is exchange %.100s: dlqx can look only into a queue",
                     tex ? tex : "?");
        }
        const char *result = NULL;
        char what[700], todo[400] = "";
        if (is_delete) {
            result = in_dlq ? "kept" : "done";
            snprintf(what, sizeof what,
                     in_dlq ? "still in %s: the delete did not happen" : "gone from %s: deleted",
                     src);
        } else if (!in_dlq) {
            result = "done";
            snprintf(what, sizeof what,
                     "gone from %.100s: dlqx removes a dead letter only after the broker has "
                     "confirmed its copy, so the copy was delivered%s",
                     src, at_target == 0 ? " (and has been taken from the target since)" : "");
        } else if (at_target == 1) {
            result = "duplicate";
            snprintf(what, sizeof what, "sent and still in %.100s: its copy is at %.100s", src,
                     trk);
            snprintf(todo, sizeof todo,
                     "a duplicate if you replay it again; dlqx delete %.100s --id ID removes the "
                     "dead letter",
                     src);
        } else if (at_target == 0) {
            result = "kept";
            snprintf(what, sizeof what, "still in %.100s and no copy at queue %.100s: not sent",
                     src, trk);
            snprintf(todo, sizeof todo, "it can be replayed again");
        } else {
            snprintf(what, sizeof what,
                     "still in %.100s; whether its copy was delivered cannot be told (%.200s); "
                     "it stays pending",
                     src, tq_note);
            snprintf(todo, sizeof todo,
                     "look for its new_id at the target before you replay it again");
            say(in, what, todo);
            left++;
            continue;
        }
        if (!j && journal_open(jpath, &j, &err) != ST_OK) {
            san_eprintf("dlqx journal: %s: nothing was resolved\n", err.msg);
            rc = EXIT_IOERR;
            break;
        }
        struct journal_resolution res = {
            run,       (uint64_t)json_integer_value(json_object_get(in, "seq")),
            result,    in_dlq,
            at_target, by,
            what};
        if (journal_write_resolution(j, &res, &err) != ST_OK) {
            san_eprintf("dlqx journal: %s\n", err.msg);
            rc = EXIT_IOERR;
            break;
        }
        say(in, what, todo[0] ? todo : NULL);
        resolved++;
    }
    if (j && journal_sync(j, &err) != ST_OK) {
        san_eprintf("dlqx journal: %s\n", err.msg);
        rc = EXIT_IOERR;
    }
    if (j)
        journal_close(j);
    struct strbuf shown;
    sb_init(&shown);
    sanitize_append(&shown, conn_display_url(c), strlen(conn_display_url(c)), 0);
    san_eprintf("dlqx journal: %zu resolved, %zu still pending on %s", resolved, left, shown.buf);
    if (json_array_size(others))
        san_eprintf("; %zu pending on other brokers or vhosts were not checked (reconcile "
                    "with --url for each)",
                    json_array_size(others));
    fputc('\n', stderr);
    sb_free(&shown);
    for (size_t k = 0; k < nq; k++) {
        free(qs[k].name);
        replay_plan_free(qs[k].has);
    }
    free(qs);
    json_decref(pend);
    json_decref(others);
    conn_close(c);
    if (rc == EXIT_OK && (left || json_array_size(others)))
        rc = 3; /* still pending: as `dlqx journal --pending` */
    return rc;
}
