/*
 * seed_frameworks: the frameworks and file scenarios — dead letters read from dlqx snapshot
 * files (docs/snapshot-format.md) and published to a live broker exactly as recorded.
 *
 *   frameworks  every fixtures/<framework>/<case>.jsonl (a framework's folder is one holding a
 *               SOURCES.md), the expected copies (<case>.replay.jsonl, <case>.reissue.jsonl) and
 * the near-misses (nearmiss-*) left out: every framework's dead letters side by side on one node.
 *   file        the records of the files given with --from, for tests.
 *
 * Each record goes to its DLQ (the record's queue) with its properties, its headers (kinds and
 * order kept) and its body byte for byte, through the record's exchange and routing key
 * (declared as a direct exchange, the DLQ bound by that key) or the default exchange. The
 * queue a replay of it goes back to (the target dlqx's replay rule works out, else the decoded
 * source) is declared too, so that a replay has somewhere to go.
 *
 * x-death: RabbitMQ up to 3.12 keeps an x-death a client publishes, so a record with one is
 * published as recorded ("keep"). From 3.13 the broker owns the x-* headers (4.0 ignores a
 * client's x-death), so there a record with an x-death takes a real dead-letter pass instead
 * ("broker"): its other headers are published to the queue of its newest death, declared with
 * a dead-letter exchange to the DLQ, and rejected, so that the broker writes the x-death.
 * --x-death auto (the default) chooses by the broker's version; keep and broker force one.
 */
#include "seed.h"

#include <amqp.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "decode.h"
#include "restamp.h"
#include "snapshot.h"
#include "util.h"

#ifndef FIXTURES_DIR
#define FIXTURES_DIR "fixtures"
#endif

#define PROBE_CHANNEL 3

/* A queue a dead-letter pass goes through, and how many of its messages await the reject. */
struct pass_queue {
    char *name;
    char *dlx, *dlrk; /* its dead-letter exchange and routing key */
    long pending;
};

/* A DLQ name as a record gives it, and the name it was published to (another framework's
 * DLQ of the same name, or a queue already on the broker, gets the framework's name first). */
struct dlq_name {
    char *recorded, *owner, *actual;
    long records, passed;
};

struct fw {
    struct seed *s;
    bool pass; /* records with an x-death go through a dead-letter pass */
    bool probe_open;
    char **exchanges; /* exchanges this run declared or found */
    size_t nexchanges, capexchanges;
    struct pass_queue *passes;
    size_t npasses, cappasses;
    struct dlq_name *dlqs;
    size_t ndlqs, capdlqs;
    const char *framework; /* NULL in the file scenario */
    long files, records, kept_death, passed;
};

/* A string owned by the seed (freed by seed_close), for the table's notes. */
static const char *keep_str(struct seed *s, char *str)
{
    xgrow((void **)&s->names, &s->capnames, s->nnames + 1, sizeof *s->names);
    s->names[s->nnames++] = str;
    return str;
}

/* --- the broker's version, and whether things exist ------------------------------------- */

/* Whether the broker keeps an x-death that a client publishes: below 3.13. */
static bool broker_keeps_client_death(struct seed *s, char *version, size_t n)
{
    snprintf(version, n, "unknown");
    const amqp_table_t *t = amqp_get_server_properties(s->conn);
    for (int i = 0; t && i < t->num_entries; i++) {
        const amqp_table_entry_t *e = &t->entries[i];
        if (e->key.len == 7 && memcmp(e->key.bytes, "version", 7) == 0 &&
            (e->value.kind == AMQP_FIELD_KIND_UTF8 || e->value.kind == AMQP_FIELD_KIND_BYTES)) {
            const amqp_bytes_t *b = &e->value.value.bytes;
            snprintf(version, n, "%.*s", (int)(b->len > 40 ? 40 : b->len), (const char *)b->bytes);
        }
    }
    int major = 0, minor = 0;
    if (sscanf(version, "%d.%d", &major, &minor) != 2)
        return false; /* unknown: the broker's own pass is right on every version */
    return major < 3 || (major == 3 && minor < 13);
}

/* Whether a queue (or exchange) exists, by a passive declare on a channel of its own: a
 * missing one closes that channel (404), which is answered and reopened next time. */
static bool exists(struct fw *x, bool queue, const char *name)
{
    struct seed *s = x->s;
    if (!x->probe_open) {
        amqp_channel_open(s->conn, PROBE_CHANNEL);
        if (amqp_get_rpc_reply(s->conn).reply_type != AMQP_RESPONSE_NORMAL)
            seed_fail("opening a channel failed");
        x->probe_open = true;
    }
    if (queue)
        amqp_queue_declare(s->conn, PROBE_CHANNEL, amqp_cstring_bytes(name), 1, 0, 0, 0,
                           amqp_empty_table);
    else
        amqp_exchange_declare(s->conn, PROBE_CHANNEL, amqp_cstring_bytes(name),
                              amqp_cstring_bytes("direct"), 1, 0, 0, 0, amqp_empty_table);
    amqp_rpc_reply_t r = amqp_get_rpc_reply(s->conn);
    if (r.reply_type == AMQP_RESPONSE_NORMAL)
        return true;
    if (r.reply_type == AMQP_RESPONSE_SERVER_EXCEPTION && r.reply.id == AMQP_CHANNEL_CLOSE_METHOD) {
        const amqp_channel_close_t *c = r.reply.decoded;
        uint16_t code = c->reply_code;
        amqp_channel_close_ok_t ok = {0};
        amqp_send_method(s->conn, PROBE_CHANNEL, AMQP_CHANNEL_CLOSE_OK_METHOD, &ok);
        x->probe_open = false;
        if (code == 404)
            return false;
        seed_fail("checking %s %s: the broker answered %u", queue ? "queue" : "exchange", name,
                  code);
    }
    seed_fail("checking %s %s failed (the connection was lost?)", queue ? "queue" : "exchange",
              name);
}

static struct made_queue *made(struct seed *s, const char *name)
{
    for (size_t i = 0; i < s->nqueues; i++)
        if (strcmp(s->queues[i].name, name) == 0)
            return &s->queues[i];
    return NULL;
}

/* A queue this run declared, or one already there (left as it is, outside the table).
 * Returns whether this run made (or had made) it. */
static bool ensure_queue(struct fw *x, const char *name, const struct htable *args)
{
    if (made(x->s, name))
        return true;
    if (exists(x, true, name))
        return false;
    seed_queue(x->s, name, "classic", args, 0);
    return true;
}

/* An exchange: a direct one declared, unless one of that name is there (any type). The
 * default exchange ("") needs nothing. */
static void ensure_exchange(struct fw *x, const char *name)
{
    if (!*name)
        return;
    for (size_t i = 0; i < x->nexchanges; i++)
        if (strcmp(x->exchanges[i], name) == 0)
            return;
    if (!exists(x, false, name))
        seed_exchange(x->s, name, "direct");
    xgrow((void **)&x->exchanges, &x->capexchanges, x->nexchanges + 1, sizeof *x->exchanges);
    x->exchanges[x->nexchanges++] = xstrdup(name);
}

/* --- one record ---------------------------------------------------------------------------- */

/* A name from a record as a C string (copied); a NUL byte in it is fatal. */
static char *name_of(const struct bytes *b, const char *file, long line, const char *what)
{
    const char *c = bytes_cstr(b);
    if (!c)
        seed_fail("%s:%ld: the %s holds a NUL byte", file, line, what);
    return xstrdup(c);
}

/* The DLQ a record goes to: prefix + its queue, or, in the frameworks scenario, prefix +
 * framework + "." + its queue when another framework's records use that name or a queue of
 * that name was already on the broker (the incident's orders.dlq, say). */
static struct dlq_name *dlq_for(struct fw *x, const char *recorded)
{
    const char *owner = x->framework ? x->framework : "";
    for (size_t i = 0; i < x->ndlqs; i++)
        if (!strcmp(x->dlqs[i].recorded, recorded) && !strcmp(x->dlqs[i].owner, owner))
            return &x->dlqs[i];
    char *actual = xasprintf("%s%s", x->s->cfg->prefix, recorded);
    bool taken = made(x->s, actual) != NULL;
    for (size_t i = 0; i < x->ndlqs && !taken; i++)
        taken = !strcmp(x->dlqs[i].actual, actual);
    if (x->framework && (taken || exists(x, true, actual))) {
        free(actual);
        actual = xasprintf("%s%s.%s", x->s->cfg->prefix, x->framework, recorded);
    }
    if (!ensure_queue(x, actual, NULL))
        seed_fail("queue %s is already on the broker; use a fresh broker or --prefix", actual);
    xgrow((void **)&x->dlqs, &x->capdlqs, x->ndlqs + 1, sizeof *x->dlqs);
    struct dlq_name *d = &x->dlqs[x->ndlqs++];
    *d = (struct dlq_name){xstrdup(recorded), xstrdup(owner), actual, 0, 0};
    return d;
}

/* Declares where a replay of m from dlq goes: dlqx's own replay rule's target (the same
 * restamp the CLI runs), else the decoded source. A named exchange is declared (direct) and the
 * queue bound to it by the routing key; the queue is the decoded source queue, else the routing
 * key, else the exchange's name. Nothing is declared when neither says anything. */
static void declare_target(struct fw *x, const struct message *m, const char *dlq)
{
    struct decoded d;
    decode_message(m, x->s->now_ms, &d);
    struct restamp_opts o = {.mode = RESTAMP_REPLAY, .dlq = dlq, .now_ms = x->s->now_ms};
    struct outgoing out;
    struct error err;
    const struct bytes *ex = &d.source.exchange, *rk = &d.source.routing_key;
    bool built = restamp_build(&d, &o, &out, &err) == ST_OK;
    if (built)
        ex = &out.exchange, rk = &out.routing_key;
    const char *exc = bytes_cstr(ex), *rkc = bytes_cstr(rk), *qc = bytes_cstr(&d.source.queue);
    const char *queue = qc && *qc ? qc : rkc && *rkc ? rkc : exc && *exc ? exc : NULL;
    if (exc && rkc && queue && strcmp(queue, dlq) != 0 && strlen(queue) <= 255 &&
        strlen(exc) <= 255 && strlen(rkc) <= 255) {
        ensure_queue(x, queue, NULL);
        if (*exc) {
            ensure_exchange(x, exc);
            seed_bind(x->s, queue, exc, rkc);
        }
    }
    if (built)
        outgoing_free(&out);
    decoded_free(&d);
}

/* The newest death's queue and exchange (x-death is newest first), when the x-death is an
 * array whose first entry is a table naming a queue. New strings, or false. */
static bool newest_death(const struct message *m, char **queue, char **exchange, char **key)
{
    const struct hval *xd = htable_get(m->headers, "x-death");
    if (!xd || xd->kind != HV_ARRAY || !xd->v.arr.n || xd->v.arr.items[0].kind != HV_TABLE)
        return false;
    const struct htable *e = xd->v.arr.items[0].v.tab;
    const struct hval *q = htable_get(e, "queue"), *ex = htable_get(e, "exchange"),
                      *rks = htable_get(e, "routing-keys");
    if (!q || q->kind != HV_STRING || !bytes_cstr(&q->v.s) || !q->v.s.len || q->v.s.len > 255)
        return false;
    *queue = xstrdup(bytes_cstr(&q->v.s));
    *exchange = xstrdup(ex && ex->kind == HV_STRING && bytes_cstr(&ex->v.s) && ex->v.s.len <= 255
                            ? bytes_cstr(&ex->v.s)
                            : "");
    const struct hval *k0 =
        rks && rks->kind == HV_ARRAY && rks->v.arr.n ? &rks->v.arr.items[0] : NULL;
    *key = xstrdup(k0 && k0->kind == HV_STRING && bytes_cstr(&k0->v.s) && k0->v.s.len <= 255
                       ? bytes_cstr(&k0->v.s)
                       : *queue);
    return true;
}

static struct pass_queue *find_pass(struct fw *x, const char *queue)
{
    for (size_t i = 0; i < x->npasses; i++)
        if (!strcmp(x->passes[i].name, queue))
            return &x->passes[i];
    return NULL;
}

/* Rejects what a pass queue holds once every publish is confirmed, so that the broker
 * dead-letters it into its DLQ. */
static void settle_pass(struct fw *x, struct pass_queue *p)
{
    seed_flush(x->s);
    long done = 0;
    for (int tries = 0; done < p->pending; tries++) {
        uint64_t tag;
        if (seed_get(x->s, p->name, &tag, NULL)) {
            seed_reject(x->s, tag);
            done++;
            continue;
        }
        if (tries > 500)
            seed_fail("queue %s gave %ld of the %ld messages its dead-letter pass published",
                      p->name, done, p->pending);
        struct timespec ts = {0, 20 * 1000000L};
        nanosleep(&ts, NULL);
    }
    p->pending = 0;
}

/* Makes queue (made by this run, empty) again with other arguments. */
static void remake_queue(struct fw *x, const char *queue, const struct htable *args,
                         const char *file, long line)
{
    struct seed *s = x->s;
    struct made_queue *q = made(s, queue);
    amqp_queue_delete(s->conn, s->rpc, amqp_cstring_bytes(queue), 0, 1);
    if (amqp_get_rpc_reply(s->conn).reply_type != AMQP_RESPONSE_NORMAL)
        seed_fail("%s:%ld: queue %s is a DLQ here and the source of a dead-letter pass; seed "
                  "that file on its own",
                  file, line, queue);
    long expected = q->expected;
    free(q->name);
    *q = s->queues[--s->nqueues];
    seed_queue(s, queue, "classic", args, expected);
}

/* The dead-letter pass: the record without its broker-owned headers, published to the queue
 * of its newest death (declared with a dead-letter exchange to the DLQ: the record's exchange
 * and routing key, or the default exchange to the DLQ), through that death's exchange. The
 * rejects come after every publish is confirmed (finish_passes). */
static bool publish_through_dlx(struct fw *x, struct message *m, struct dlq_name *d,
                                const char *file, long line)
{
    struct seed *s = x->s;
    char *dq, *dex, *dkey;
    if (!newest_death(m, &dq, &dex, &dkey))
        return false;
    const char *prefix = s->cfg->prefix;
    char *src = xasprintf("%s%s", prefix, dq);
    char *srcx = *dex ? xasprintf("%s%s", prefix, dex) : xstrdup("");
    char *dlx = m->exchange.len ? xasprintf("%s%s", prefix, bytes_cstr(&m->exchange)) : NULL;
    if (!strcmp(src, d->actual))
        seed_fail("%s:%ld: the record's newest death is in its own DLQ %s", file, line, src);
    struct htable *args = htable_new();
    htable_add(args, "x-dead-letter-exchange", hval_cstring(dlx ? dlx : ""));
    htable_add(args, "x-dead-letter-routing-key",
               hval_cstring(dlx ? bytes_cstr(&m->routing_key) : d->actual));
    const char *dlrk = dlx ? bytes_cstr(&m->routing_key) : d->actual;
    struct made_queue *q = made(s, src);
    struct pass_queue *p = find_pass(x, src);
    if (p && (strcmp(p->dlx, dlx ? dlx : "") || strcmp(p->dlrk, dlrk))) {
        /* Another record's pass went through this queue to another DLQ (two frameworks'
         * "orders"): those are dead-lettered first, then the queue is made again. */
        settle_pass(x, p);
        remake_queue(x, src, args, file, line);
        free(p->dlx), free(p->dlrk);
        p->dlx = xstrdup(dlx ? dlx : ""), p->dlrk = xstrdup(dlrk);
    } else if (q && !p) {
        /* Declared earlier as another record's replay target (empty, no arguments): made again
         * with the dead-letter exchange. A DLQ holding dead letters cannot be. */
        remake_queue(x, src, args, file, line);
    } else if (!q && !p) {
        if (exists(x, true, src))
            seed_fail("%s:%ld: queue %s (the dead-letter pass's source) is already on the broker; "
                      "use a fresh broker or --prefix",
                      file, line, src);
        seed_queue(s, src, "classic", args, 0);
    }
    if (dlx) {
        ensure_exchange(x, dlx);
        seed_bind(s, d->actual, dlx, bytes_cstr(&m->routing_key));
    }
    if (*srcx) {
        ensure_exchange(x, srcx);
        seed_bind(s, src, srcx, dkey);
    }
    struct htable *h = htable_copy(m->headers);
    for (size_t i = h->n; i-- > 0;)
        if (restamp_broker_owned((const char *)h->e[i].key.data, h->e[i].key.len)) {
            char *k = xasprintf("%.*s", (int)h->e[i].key.len, (const char *)h->e[i].key.data);
            htable_remove(h, k);
            free(k);
        }
    seed_publish(s, srcx, *srcx ? dkey : src, &m->props, m->headers_present ? h : NULL,
                 m->body.data, m->body.len);
    htable_free(h);
    htable_free(args);
    if (!p) {
        xgrow((void **)&x->passes, &x->cappasses, x->npasses + 1, sizeof *x->passes);
        p = &x->passes[x->npasses++];
        *p = (struct pass_queue){xstrdup(src), xstrdup(dlx ? dlx : ""), xstrdup(dlrk), 0};
    }
    p->pending++;
    free(src), free(srcx), free(dlx), free(dq), free(dex), free(dkey);
    return true;
}

static void publish_record(struct fw *x, struct message *m, const char *file, long line)
{
    struct seed *s = x->s;
    if (!m->queue.len)
        seed_fail("%s:%ld: the record names no queue (its DLQ)", file, line);
    char *recorded = name_of(&m->queue, file, line, "queue");
    char *exchange = name_of(&m->exchange, file, line, "exchange");
    char *key = name_of(&m->routing_key, file, line, "routing key");
    struct dlq_name *d = dlq_for(x, recorded);
    bool has_death = htable_get(m->headers, "x-death") != NULL;
    if (has_death && x->pass && publish_through_dlx(x, m, d, file, line)) {
        d->passed++;
        x->passed++;
    } else {
        const char *hdr_ex = "";
        char *pex = NULL;
        if (*exchange) {
            pex = xasprintf("%s%s", s->cfg->prefix, exchange);
            ensure_exchange(x, pex);
            seed_bind(s, d->actual, pex, key);
            hdr_ex = pex;
        }
        /* The default exchange routes by queue name: the DLQ's, whatever the record's key. */
        seed_publish(s, hdr_ex, *hdr_ex ? key : d->actual, &m->props,
                     m->headers_present ? m->headers : NULL, m->body.data, m->body.len);
        free(pex);
        x->kept_death += has_death;
    }
    declare_target(x, m, d->actual);
    seed_expect_add(s, d->actual, 1);
    d->records++;
    x->records++;
    free(recorded), free(exchange), free(key);
}

/* Reads every record of a snapshot file (publish is false) or publishes it; a record that
 * does not read is fatal. Every file is read once before anything is published, so that a bad
 * record publishes nothing. */
static void read_file(struct fw *x, const char *path, bool publish)
{
    FILE *f = fopen(path, "r");
    if (!f)
        seed_fail("cannot read %s: %s", path, strerror(errno));
    struct snapshot_reader r;
    snapshot_reader_open(&r, f, path);
    struct message m;
    struct error err;
    enum snapshot_rc rc;
    long n = 0;
    while ((rc = snapshot_read(&r, &m, &err)) == SNAP_RECORD) {
        if (publish)
            publish_record(x, &m, path, r.line);
        message_free(&m);
        n++;
    }
    if (rc != SNAP_EOF)
        seed_fail("%s", err.msg);
    snapshot_reader_close(&r);
    fclose(f);
    if (!n)
        seed_fail("%s holds no records", path);
    x->files += publish;
}

static void finish_passes(struct fw *x)
{
    seed_flush(x->s);
    for (size_t i = 0; i < x->npasses; i++)
        settle_pass(x, &x->passes[i]);
}

static void fw_init(struct fw *x, struct seed *s)
{
    memset(x, 0, sizeof *x);
    x->s = s;
    char version[48];
    bool keeps = broker_keeps_client_death(s, version, sizeof version);
    const char *mode = s->cfg->x_death ? s->cfg->x_death : "auto";
    x->pass = !strcmp(mode, "broker") || (!strcmp(mode, "auto") && !keeps);
    printf("RabbitMQ %s: records with an x-death are %s (--x-death %s)\n", version,
           x->pass ? "dead-lettered by the broker (a reject through a DLX)"
                   : "published with their recorded x-death",
           mode);
}

static void fw_finish(struct fw *x, const char *what)
{
    finish_passes(x);
    for (size_t i = 0; i < x->ndlqs; i++) {
        struct dlq_name *d = &x->dlqs[i];
        const char *pl = d->records == 1 ? "" : "s";
        char *note =
            *d->owner ? xasprintf("%s: %ld dead letter%s (%ld by a broker pass)", d->owner,
                                  d->records, pl, d->passed)
                      : xasprintf("%ld record%s (%ld by a broker pass)", d->records, pl, d->passed);
        seed_note(x->s, d->actual, keep_str(x->s, note));
        free(d->recorded), free(d->owner), free(d->actual);
    }
    for (size_t i = 0; i < x->npasses; i++)
        free(x->passes[i].name), free(x->passes[i].dlx), free(x->passes[i].dlrk);
    for (size_t i = 0; i < x->nexchanges; i++)
        free(x->exchanges[i]);
    free(x->passes), free(x->exchanges), free(x->dlqs);
    if (x->probe_open)
        amqp_channel_close(x->s->conn, PROBE_CHANNEL, AMQP_REPLY_SUCCESS);
    printf("%s: %ld records from %ld files (%ld with their recorded x-death, %ld dead-lettered "
           "by the broker)\n",
           what, x->records, x->files, x->kept_death, x->passed);
}

/* --- the scenarios --------------------------------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

/* The case files of a framework's folder: <case>.jsonl, not the expected copies nor near-misses. */
static int case_file(const struct dirent *e)
{
    const char *n = e->d_name;
    return n[0] != '.' && ends_with(n, ".jsonl") && !ends_with(n, ".replay.jsonl") &&
           !ends_with(n, ".reissue.jsonl") && strncmp(n, "nearmiss-", 9) != 0;
}

static int visible(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

/* One folder of the fixtures directory: its case files read (publish false) or published
 * when it is a framework's (it holds a SOURCES.md). Returns whether it is. */
static bool framework_folder(struct fw *x, const char *dir, const char *name, bool publish)
{
    char *fwdir = xasprintf("%s/%s", dir, name);
    char *sources = xasprintf("%s/SOURCES.md", fwdir);
    struct stat st;
    struct dirent **cases = NULL;
    int ncases = 0;
    if (stat(sources, &st) == 0)
        ncases = scandir(fwdir, &cases, case_file, alphasort);
    x->framework = name;
    for (int j = 0; j < ncases; j++) {
        char *path = xasprintf("%s/%s", fwdir, cases[j]->d_name);
        read_file(x, path, publish);
        free(path);
        free(cases[j]);
    }
    free(cases);
    free(sources);
    free(fwdir);
    return ncases > 0;
}

void scenario_frameworks(struct seed *s)
{
    const char *dir = s->cfg->fixtures;
    if (!dir || !*dir)
        dir = getenv("DLQX_FIXTURES");
    if (!dir || !*dir)
        dir = FIXTURES_DIR;
    struct dirent **fws;
    int nfw = scandir(dir, &fws, visible, alphasort);
    if (nfw < 0)
        seed_fail("cannot read the fixtures directory %s: %s", dir, strerror(errno));
    struct fw x;
    fw_init(&x, s);
    printf("fixtures: %s\n", dir);
    int frameworks = 0;
    for (int i = 0; i < nfw; i++)
        frameworks += framework_folder(&x, dir, fws[i]->d_name, false);
    if (!frameworks)
        seed_fail("no framework's dead letters in %s (a folder with a SOURCES.md and *.jsonl "
                  "cases)",
                  dir);
    for (int i = 0; i < nfw; i++)
        framework_folder(&x, dir, fws[i]->d_name, true);
    for (int i = 0; i < nfw; i++)
        free(fws[i]);
    free(fws);
    fw_finish(&x, "frameworks");
}

/* Declares, empty, the queue each record of the file names, bound to the record's exchange by
 * its routing key: the places where copies are expected (a test's expected copies). Names are
 * taken as they are (no prefix): they are where dlqx's replay will publish. */
static void declare_file(struct fw *x, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        seed_fail("cannot read %s: %s", path, strerror(errno));
    struct snapshot_reader r;
    snapshot_reader_open(&r, f, path);
    struct message m;
    struct error err;
    enum snapshot_rc rc;
    while ((rc = snapshot_read(&r, &m, &err)) == SNAP_RECORD) {
        char *q = name_of(&m.queue, path, r.line, "queue");
        char *ex = name_of(&m.exchange, path, r.line, "exchange");
        char *rk = name_of(&m.routing_key, path, r.line, "routing key");
        if (!*q)
            seed_fail("%s:%ld: the record names no queue", path, r.line);
        ensure_queue(x, q, NULL);
        if (*ex) {
            ensure_exchange(x, ex);
            seed_bind(x->s, q, ex, rk);
        }
        free(q), free(ex), free(rk);
        message_free(&m);
    }
    if (rc != SNAP_EOF)
        seed_fail("%s", err.msg);
    snapshot_reader_close(&r);
    fclose(f);
}

void scenario_file(struct seed *s)
{
    if (!s->cfg->nfrom)
        seed_fail("the file scenario needs --from FILE");
    struct fw x;
    fw_init(&x, s);
    for (size_t i = 0; i < s->cfg->ndeclare; i++)
        declare_file(&x, s->cfg->declare[i]);
    for (size_t i = 0; i < s->cfg->nfrom; i++)
        read_file(&x, s->cfg->from[i], false);
    for (size_t i = 0; i < s->cfg->nfrom; i++)
        read_file(&x, s->cfg->from[i], true);
    fw_finish(&x, "file");
}
