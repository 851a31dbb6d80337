/*
 * replay_setup: the set-up of a pass (connection, journal, the common replay_opts), its exit
 * status, and the journal's pending intents for a queue.
 */
#include "replay_setup.h"

#include <stdlib.h>
#include <string.h>

#include "exitcodes.h"
#include "hval_json.h"
#include "sanitize.h"
#include "urlmask.h"
#include "util.h"

enum status replay_setup_open(struct replay_setup *s, const struct replay_setup_args *a,
                              struct error *err)
{
    memset(s, 0, sizeof *s);
    s->conn = a->conn;
    if (!s->conn) {
        enum status st = broker_open(a->broker, &s->conn, err);
        if (st != ST_OK)
            return st;
        s->own_conn = true;
    }
    s->journal_path = a->journal_path ? xstrdup(a->journal_path) : journal_default_path();
    enum status st = journal_open(s->journal_path, &s->journal, err);
    if (st != ST_OK) {
        error_kind_set(err, st, ERRK_IO);
        replay_setup_close(s);
        return st;
    }
    struct replay_opts *o = &s->opts;
    o->queue = a->queue;
    o->kind = a->kind;
    o->delivery_limit = a->delivery_limit;
    o->op = a->op;
    o->expect = a->expect;
    o->journal = s->journal;
    return ST_OK;
}

void replay_setup_close(struct replay_setup *s)
{
    if (s->journal)
        journal_close(s->journal);
    free(s->journal_path);
    if (s->own_conn && s->conn)
        conn_close(s->conn);
    memset(s, 0, sizeof *s);
}

int replay_exit_code(const struct replay_report *r, size_t missing)
{
    if (r->end == RE_CANARY)
        return EXIT_CANARY;
    if (r->end == RE_CONNECTION_LOST)
        return EXIT_CONNECTION_LOST;
    if (r->unknown)
        return EXIT_UNKNOWN;
    if (r->refused)
        return EXIT_ACCESS; /* the broker refused the publishes: nothing sent, nothing pending */
    if (r->end == RE_REFUSED_LIMIT)
        return EXIT_PEEK_REFUSED;
    if (r->kept || missing || r->not_sent || r->end == RE_CANCELLED || r->end == RE_IDLE ||
        r->end == RE_CHANNEL_CLOSED)
        return EXIT_KEPT;
    return 0;
}

static const char *jstr(const json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* Whether the intent's run was on the broker c is connected to: the same vhost and the URL
 * of c or of one of b's (masked, as the journal writes it). */
static bool same_broker(const json_t *in, const struct broker_opts *b, struct conn *c)
{
    const char *vh = jstr(in, "run_vhost"), *url = jstr(in, "run_broker");
    if (!url || (vh && strcmp(vh, conn_vhost(c)) != 0))
        return false;
    bool same = false;
    char *m = url_mask(conn_display_url(c));
    same = strcmp(m, url) == 0;
    free(m);
    for (size_t i = 0; i < b->n_urls && !same; i++) {
        m = url_mask(b->urls[i]);
        same = strcmp(m, url) == 0;
        free(m);
    }
    return same;
}

json_t *replay_pending_for(const char *jpath, const struct broker_opts *b, struct conn *c,
                           const char *queue, json_t **others)
{
    json_t *all = NULL, *mine = json_array();
    if (others)
        *others = json_array();
    struct error err;
    if (journal_pending(jpath, &all, &err) != ST_OK)
        return mine; /* no journal yet (or unreadable: `dlqx journal` says why) */
    size_t i;
    json_t *in;
    json_array_foreach(all, i, in)
    {
        const char *src = jstr(in, "run_source");
        bool q = !queue || (src && strcmp(src, queue) == 0);
        if (q && same_broker(in, b, c))
            json_array_append(mine, in);
        else if (others)
            json_array_append(*others, in);
    }
    json_decref(all);
    return mine;
}

/* The first few old ids of the intents, sanitized, comma-separated, into sb. */
void replay_pending_ids(const json_t *intents, size_t max, struct strbuf *sb)
{
    size_t i;
    json_t *in;
    json_array_foreach(intents, i, in)
    {
        if (i == max) {
            sb_adds(sb, ", …");
            break;
        }
        struct bytes id = {0, NULL};
        if (i)
            sb_adds(sb, ", ");
        if (bytes_from_json(json_object_get(in, "old_id"), "old_id", &id, NULL) == ST_OK) {
            sanitize_append(sb, id.data, id.len > 80 ? 80 : id.len, 0);
            bytes_free(&id);
        } else {
            sb_adds(sb, "?");
        }
    }
}
