/*
 * journal_read: reading the replay journal back line by line with a bounded line length, a
 * torn last line never trusted (journal_scan), and tying each intent to its run, its outcome
 * and its resolution (journal_collect, journal_pending) (docs/journal-format.md).
 */
#include "journal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/* ---- reading ----------------------------------------------------------------------------- */

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return false;
    return true;
}

/* One complete line (without its newline): a record for fn, or a malformed line. */
static bool line_done(const char *s, size_t len, bool oversized, journal_record_fn fn, void *ctx,
                      struct journal_scan_report *rep)
{
    if (!oversized && blank(s, len))
        return true;
    json_t *rec = NULL;
    if (!oversized) {
        if (len && s[len - 1] == '\r')
            len--;
        rec = json_loadb(s, len, 0, NULL);
        if (rec && (!json_is_object(rec) || !json_is_integer(json_object_get(rec, "v")) ||
                    !json_is_string(json_object_get(rec, "kind")))) {
            json_decref(rec);
            rec = NULL;
        }
    }
    if (!rec) {
        rep->malformed++;
        if (!rep->first_malformed_line)
            rep->first_malformed_line = rep->lines;
        return true;
    }
    rep->records++;
    bool go_on = fn ? fn(ctx, rec) : true;
    json_decref(rec);
    return go_on;
}

enum status journal_scan(const char *path, journal_record_fn fn, void *ctx,
                         struct journal_scan_report *rep, struct error *err)
{
    struct journal_scan_report local;
    if (!rep)
        rep = &local;
    memset(rep, 0, sizeof *rep);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return error_set(err, ST_ENOTFOUND, "no journal at %s", path);
        return error_set(err, ST_EIO, "cannot open the journal %s: %s", path, strerror(errno));
    }
    enum { CHUNK = 64 * 1024 };
    char *chunk = xmalloc(CHUNK);
    struct strbuf line;
    sb_init(&line);
    bool oversized = false, in_line = false, go_on = true;
    enum status st = ST_OK;
    while (go_on) {
        ssize_t n = read(fd, chunk, CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            st = error_set(err, ST_EIO, "cannot read the journal %s after line %llu: %s", path,
                           (unsigned long long)rep->lines, strerror(errno));
            break;
        }
        if (n == 0)
            break;
        const char *p = chunk, *end = chunk + n;
        while (p < end && go_on) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t take = (size_t)((nl ? nl : end) - p);
            if (!in_line) {
                in_line = true;
                rep->lines++;
            }
            if (!oversized) {
                if (line.len + take > JOURNAL_MAX_LINE) {
                    oversized = true;
                    sb_free(&line);
                    sb_init(&line);
                } else {
                    sb_add(&line, p, take);
                }
            }
            if (!nl)
                break;
            go_on = line_done(line.buf ? line.buf : "", line.len, oversized, fn, ctx, rep);
            sb_reset(&line);
            oversized = false;
            in_line = false;
            p = nl + 1;
        }
    }
    /* A last line without its newline was cut short by a crash: never trusted. */
    if (st == ST_OK && go_on && in_line)
        rep->torn_tail = true;
    sb_free(&line);
    free(chunk);
    close(fd);
    return st;
}

/* ---- pending ----------------------------------------------------------------------------- */

struct collect {
    const char *run_prefix;
    bool pending_only;
    journal_record_fn each;
    void *ctx;
    json_t *runs;    /* run id -> {broker, source} */
    json_t *waiting; /* "run seq" -> the intent (its copy in out), until its outcome comes */
    json_t *out;     /* every intent, or (pending_only) unused until the end */
    struct journal_summary sum;
};

/* "SEQ RUN": what ties an outcome to its intent. A new string; NULL when rec has neither. */
static char *key_of(const json_t *rec, const char **run)
{
    const json_t *r = json_object_get(rec, "run"), *s = json_object_get(rec, "seq");
    if (!json_is_string(r) || !json_is_integer(s))
        return NULL;
    *run = json_string_value(r);
    return xasprintf("%lld %s", (long long)json_integer_value(s), *run);
}

static bool collect_one(void *vc, json_t *rec)
{
    struct collect *c = vc;
    const json_t *runv = json_object_get(rec, "run");
    const char *run = json_is_string(runv) ? json_string_value(runv) : "";
    if (c->run_prefix && strncmp(run, c->run_prefix, strlen(c->run_prefix)) != 0)
        return true;
    if (c->each && !c->each(c->ctx, rec))
        return false;
    const char *kind = json_string_value(json_object_get(rec, "kind"));
    char *key = NULL;
    if (strcmp(kind, "run") == 0) {
        c->sum.runs++;
        json_t *info = json_object();
        json_t *b = json_object_get(rec, "broker"), *s = json_object_get(rec, "source");
        json_t *vh = json_object_get(rec, "vhost");
        if (b)
            json_object_set(info, "broker", b);
        if (s)
            json_object_set(info, "source", s);
        if (vh)
            json_object_set(info, "vhost", vh);
        json_object_set_new(c->runs, run, info);
    } else if (strcmp(kind, "intent") == 0) {
        if (!(key = key_of(rec, &run)))
            return true;
        c->sum.intents++;
        json_t *copy = json_copy(rec);
        const json_t *info = json_object_get(c->runs, run);
        json_t *b = json_object_get(info, "broker"), *s = json_object_get(info, "source");
        json_t *vh = json_object_get(info, "vhost");
        if (b)
            json_object_set(copy, "run_broker", b);
        if (s)
            json_object_set(copy, "run_source", s);
        if (vh)
            json_object_set(copy, "run_vhost", vh);
        json_object_set(c->waiting, key, copy);
        if (!c->pending_only)
            json_array_append(c->out, copy);
        json_decref(copy);
    } else if (strcmp(kind, "outcome") == 0) {
        if (!(key = key_of(rec, &run)))
            return true;
        json_t *in = json_object_get(c->waiting, key);
        if (in) {
            /* An outcome "unknown" (dlqx could not learn whether the copy arrived) leaves the
             * intent in doubt, as a missing outcome does: it stays pending, with its reason. */
            const char *res = json_string_value(json_object_get(rec, "result"));
            json_object_set(in, "outcome", rec);
            if (!res || strcmp(res, "unknown") != 0)
                json_object_del(c->waiting, key);
        }
    } else if (strcmp(kind, "attempt") == 0) {
        /* The run carried on, on another node, after a lost connection: its intents from here
         * carry "attempt"; those left unknown before stay pending (possible duplicates). */
        c->sum.attempts++;
    } else if (strcmp(kind, "resolution") == 0) {
        /* `dlqx journal --reconcile` looked at the broker and settled a pending intent. */
        if (!(key = key_of(rec, &run)))
            return true;
        json_t *in = json_object_get(c->waiting, key);
        if (in) {
            json_object_set(in, "resolution", rec);
            json_object_del(c->waiting, key);
        }
    }
    free(key);
    return true;
}

enum status journal_collect(const char *path, const char *run_prefix, bool pending_only,
                            journal_record_fn each, void *ctx, json_t **out,
                            struct journal_summary *sum, struct journal_scan_report *rep,
                            struct error *err)
{
    *out = NULL;
    struct collect c = {run_prefix,    pending_only,  each,         ctx,
                        json_object(), json_object(), json_array(), {0, 0, 0, 0}};
    enum status st = journal_scan(path, collect_one, &c, rep, err);
    /* waiting holds the intents without an outcome, in the order they were added. */
    c.sum.pending = json_object_size(c.waiting);
    if (st == ST_OK && pending_only) {
        const char *k;
        json_t *v;
        json_object_foreach(c.waiting, k, v)
        {
            json_array_append(c.out, v);
        }
    }
    json_decref(c.runs);
    json_decref(c.waiting);
    if (st != ST_OK) {
        json_decref(c.out);
        return st;
    }
    if (sum)
        *sum = c.sum;
    *out = c.out;
    return ST_OK;
}

enum status journal_pending(const char *path, json_t **out, struct error *err)
{
    return journal_collect(path, NULL, true, NULL, NULL, out, NULL, NULL, err);
}
