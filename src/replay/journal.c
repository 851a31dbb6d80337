/*
 * journal: appending records to the replay journal (held in memory until the next sync, then
 * written with one write(2) under an exclusive flock, so that processes sharing the file never
 * interleave bytes, and fsync'd) (docs/journal-format.md). Reading it back is journal_read.c's.
 */
#include "journal.h"
#include "journal_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uuid/uuid.h>

#include "bytes.h"
#include "json_out.h"
#include "urlmask.h"
#include "util.h"

/* ---- the path ---------------------------------------------------------------------------- */

static const char *home_dir(void)
{
    const char *h = getenv("HOME");
    if (h && *h)
        return h;
    struct passwd *pw = getpwuid(getuid());
    return pw && pw->pw_dir && *pw->pw_dir ? pw->pw_dir : ".";
}

char *journal_default_path(void)
{
    const char *p = getenv("DLQX_JOURNAL");
    if (p && *p)
        return xstrdup(p);
    /* The XDG base directory spec: a relative $XDG_STATE_HOME is invalid and ignored. */
    const char *state = getenv("XDG_STATE_HOME");
    if (state && state[0] == '/')
        return xasprintf("%s/dlqx/journal.jsonl", state);
    return xasprintf("%s/.local/state/dlqx/journal.jsonl", home_dir());
}

const char *journal_path(const struct journal *j)
{
    return j->path;
}

/* mkdir -p with mode 0700 for the directories it makes; *made counts them. */
static enum status mkdir_p(const char *dir, int *made, struct error *err)
{
    *made = 0;
    char *p = xstrdup(dir);
    size_t n = strlen(p);
    enum status st = ST_OK;
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != '\0')
            continue;
        if (p[i - 1] == '/')
            continue;
        char saved = p[i];
        p[i] = '\0';
        if (mkdir(p, 0700) == 0) {
            (*made)++;
        } else if (errno != EEXIST) {
            st = error_set(err, ST_EIO, "cannot create the journal directory %s: %s", p,
                           strerror(errno));
            break;
        } else {
            struct stat sb;
            if (stat(p, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
                st = error_set(err, ST_EIO, "cannot create the journal directory %s: %s", p,
                               strerror(ENOTDIR));
                break;
            }
        }
        p[i] = saved;
    }
    free(p);
    return st;
}

/* ---- writing ----------------------------------------------------------------------------- */

static char *local_who(void)
{
    char host[256];
    if (gethostname(host, sizeof host) != 0 || !host[0])
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    struct passwd *pw = getpwuid(geteuid());
    if (pw && pw->pw_name && *pw->pw_name)
        return xasprintf("%s@%s", pw->pw_name, host);
    return xasprintf("%ld@%s", (long)geteuid(), host);
}

enum status journal_open(const char *path, struct journal **out, struct error *err)
{
    *out = NULL;
    if (!path || !*path)
        return error_set(err, ST_EINVAL, "the journal needs a file name");
    char *dir = jf_dir_of(path);
    int made = 0;
    enum status st = mkdir_p(dir, &made, err);
    free(dir);
    if (st != ST_OK)
        return st;
    bool created = true;
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) {
        /* It exists: opened as it is, never created (a dangling symbolic link planted at
         * the name would otherwise make dlqx create the file it points to). */
        created = false;
        fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
        if (fd < 0 && errno == ENOENT)
            return error_set(err, ST_EIO,
                             "cannot open the journal %s: it is a symbolic link "
                             "to a file that does not exist",
                             path);
    }
    if (fd < 0)
        return error_set(err, ST_EIO, "cannot open the journal %s: %s", path, strerror(errno));
    int rfd = open(path, O_RDONLY | O_CLOEXEC);
    if (rfd < 0) {
        int e = errno;
        close(fd);
        return error_set(err, ST_EIO, "cannot open the journal %s: %s", path, strerror(e));
    }
    struct journal *j = xcalloc(1, sizeof *j);
    j->fd = fd;
    j->rfd = rfd;
    j->now_fixed = clock_fixed_ms(&j->now_fixed_ms);
    j->path = xstrdup(path);
    j->who = local_who();
    j->dirs_to_sync = created ? made + 1 : 0;
    if (!created) {
        /* A torn record from a crash: end its line now, so that the file is whole again. */
        bool t = false;
        if ((st = jf_lock(j, LOCK_EX, err)) == ST_OK) {
            if ((st = jf_torn(j, &t, err)) == ST_OK && t)
                st = jf_write_all(j, "\n", 1, err);
            struct error e2;
            if (jf_lock(j, LOCK_UN, &e2) != ST_OK && st == ST_OK) {
                if (err)
                    *err = e2;
                st = ST_EIO;
            }
        }
        if (st != ST_OK) {
            journal_close(j);
            return st;
        }
    }
    *out = j;
    return ST_OK;
}

void journal_close(struct journal *j)
{
    if (!j)
        return;
    struct error e;
    jf_commit_stop(j); /* the thread writes and syncs what it was given, and ends */
    jf_flush_held(j, &e);
    sb_free(&j->held);
    close(j->fd);
    close(j->rfd);
    free(j->path);
    free(j->who);
    free(j);
}

void journal_new_run_id(char out[37])
{
    uuid_t u;
    uuid_generate_random(u);
    uuid_unparse_lower(u, out);
}

const char *journal_result_name(enum journal_result r)
{
    switch (r) {
    case JR_DONE:
        return "done";
    case JR_KEPT:
        return "kept";
    case JR_UNKNOWN:
        return "unknown";
    case JR_REFUSED:
        return "refused";
    }
    return "unknown";
}

json_t *journal_string_json(const void *data, size_t len)
{
    if (!len)
        return json_string("");
    if (utf8_valid(data, len) && !memchr(data, '\0', len))
        return json_stringn(data, len);
    char *b64 = base64_encode(data, len);
    json_t *o = json_object();
    json_object_set_new(o, "base64", json_string(b64));
    free(b64);
    return o;
}

static void set_str(json_t *o, const char *key, const char *s)
{
    if (s)
        json_object_set_new(o, key, journal_string_json(s, strlen(s)));
}

static json_t *u64(uint64_t v)
{
    return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

/* The members every record starts with. */
static json_t *record_new_at(const char *kind, const char *run_id, const char *at)
{
    json_t *o = json_object();
    json_object_set_new(o, "v", json_integer(JOURNAL_LINE_VERSION));
    json_object_set_new(o, "kind", json_string(kind));
    json_object_set_new(o, "at", json_string(at));
    set_str(o, "run", run_id);
    return o;
}

static json_t *record_new(const char *kind, const char *run_id)
{
    char at[32];
    time_format_rfc3339(clock_now_ms(), true, at);
    return record_new_at(kind, run_id, at);
}

/* The record's line: jansson's compact dump (json_out_fast writes the same bytes without its
 * callbacks, and declines what it does not write as jansson would), then '\n'. */
static char *dump_line(const json_t *o, size_t *len)
{
    const size_t flags = JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17);
    /* From jansson 2.8 on an object always keeps its members' order and JSON_PRESERVE_ORDER
     * changes nothing; json_out_fast writes them in that order but declines the flag, so with
     * it every record went to json_dumps (8% of a bulk replay's client CPU). */
#if JANSSON_VERSION_HEX >= 0x020800
    const size_t fast_flags = flags & ~(size_t)JSON_PRESERVE_ORDER;
#else
    const size_t fast_flags = flags;
#endif
    struct strbuf sb;
    sb_init(&sb);
    if (json_out_fast(&sb, o, fast_flags)) {
        sb_addc(&sb, '\n');
        return sb_detach(&sb, len);
    }
    sb_free(&sb);
    char *s = json_dumps(o, flags);
    if (!s)
        return NULL;
    size_t n = strlen(s);
    s = xrealloc(s, n + 2);
    s[n] = '\n';
    s[n + 1] = '\0';
    *len = n + 1;
    return s;
}

/* Holds a whole line (it ends with '\n') for the next flush; frees it. */
static enum status hold_line(struct journal *j, char *line, size_t len, struct error *err)
{
    enum status st;
    if (len > JOURNAL_MAX_LINE)
        st = error_set(err, ST_ERANGE,
                       "a journal record for %s would be %zu bytes, more than a reader accepts",
                       j->path, len);
    else {
        sb_add(&j->held, line, len);
        st = j->held.len > JOURNAL_HOLD_MAX ? jf_flush_held(j, err) : ST_OK;
    }
    free(line);
    return st;
}

/* Writes the record (and drops the reference). */
static enum status emit(struct journal *j, json_t *o, struct error *err)
{
    size_t len = 0;
    char *line = dump_line(o, &len);
    if (line && len > JOURNAL_MAX_LINE && json_object_get(o, "diff")) {
        /* A reader would skip so long a line, and with it the intent: keep the record,
         * drop the diff (the ids and digests still say what was sent). */
        free(line);
        json_object_del(o, "diff");
        json_object_set_new(o, "diff_omitted", json_true());
        line = dump_line(o, &len);
    }
    json_decref(o);
    if (!line)
        return error_set(err, ST_EINVAL, "a journal record for %s could not be encoded as JSON",
                         j->path);
    return hold_line(j, line, len, err);
}

/* Writes the record with an encoded diff as its last member, "diff" (and drops the
 * reference): the record's line, its closing brace replaced by ,"diff":TEXT}. */
static enum status emit_with_text(struct journal *j, json_t *o, const char *text, size_t n,
                                  struct error *err)
{
    static const char key[] = ",\"diff\":";
    size_t len = 0;
    char *line = dump_line(o, &len);
    if (line && len + n + sizeof key > JOURNAL_MAX_LINE) {
        free(line);
        json_object_set_new(o, "diff_omitted", json_true());
        return emit(j, o, err);
    }
    json_decref(o);
    if (!line || len < 2 || line[len - 2] != '}') {
        free(line);
        return error_set(err, ST_EINVAL, "a journal record for %s could not be encoded as JSON",
                         j->path);
    }
    size_t at = len - 2; /* the closing brace */
    size_t total = at + sizeof key - 1 + n + 2;
    line = xrealloc(line, total + 1);
    memcpy(line + at, key, sizeof key - 1);
    memcpy(line + at + sizeof key - 1, text, n);
    memcpy(line + total - 2, "}\n", 3);
    return hold_line(j, line, total, err);
}

enum status journal_write_run(struct journal *j, const struct journal_run *r, struct error *err)
{
    if (!r->run_id || !r->op)
        return error_set(err, ST_EINVAL, "a journal run record needs a run id and an op");
    json_t *o = record_new("run", r->run_id);
    json_object_set_new(o, "who", json_string(j->who));
    if (r->broker) {
        /* Masked again: a URL with a password must never reach the file. */
        char *masked = url_mask(r->broker);
        set_str(o, "broker", masked);
        free(masked);
    }
    set_str(o, "vhost", r->vhost);
    set_str(o, "user", r->user);
    set_str(o, "op", r->op);
    set_str(o, "source", r->source);
    if (r->planned) /* 0: not known before the pass (a live selection) */
        json_object_set_new(o, "planned", u64(r->planned));
    json_object_set_new(o, "dry_run", json_boolean(r->dry_run));
    json_object_set_new(o, "dlqx", json_string(DLQX_VERSION_STRING));
    return emit(j, o, err);
}

/* The intent as a tree (every intent before journal_line.c; now those it does not take). */
static json_t *intent_tree(const struct journal_intent *in, const char *at)
{
    json_t *o = record_new_at("intent", in->run_id, at);
    json_object_set_new(o, "seq", u64(in->seq));
    set_str(o, "op", in->op);
    set_str(o, "source", in->source);
    if (in->exchange) {
        json_t *t = json_object();
        set_str(t, "exchange", in->exchange);
        json_object_set_new(t, "routing_key",
                            journal_string_json(in->routing_key ? in->routing_key : "",
                                                in->routing_key ? strlen(in->routing_key) : 0));
        json_object_set_new(o, "target", t);
    }
    if (in->old_id)
        json_object_set_new(o, "old_id", journal_string_json(in->old_id, in->old_id_len));
    if (in->new_id)
        json_object_set_new(o, "new_id", journal_string_json(in->new_id, in->new_id_len));
    set_str(o, "old_sha256", in->old_sha256);
    set_str(o, "new_sha256", in->new_sha256);
    if (in->attempt > 1)
        json_object_set_new(o, "attempt", json_integer(in->attempt));
    if (in->diff)
        json_object_set(o, "diff", in->diff);
    return o;
}

static json_t *outcome_tree(const char *run_id, uint64_t seq, enum journal_result res,
                            const char *reason, const char *at)
{
    json_t *o = record_new_at("outcome", run_id, at);
    json_object_set_new(o, "seq", u64(seq));
    json_object_set_new(o, "result", json_string(journal_result_name(res)));
    set_str(o, "reason", reason);
    return o;
}

char *journal_intent_line_tree(const struct journal_intent *in, const char *at, size_t *len)
{
    json_t *o = intent_tree(in, at);
    char *line = dump_line(o, len);
    json_decref(o);
    if (line && !in->diff && in->diff_text && in->diff_text_len) {
        static const char key[] = ",\"diff\":";
        size_t end = *len - 2, total = end + sizeof key - 1 + in->diff_text_len + 2;
        line = xrealloc(line, total + 1);
        memcpy(line + end, key, sizeof key - 1);
        memcpy(line + end + sizeof key - 1, in->diff_text, in->diff_text_len);
        memcpy(line + total - 2, "}\n", 3);
        *len = total;
    }
    return line;
}

char *journal_outcome_line_tree(const char *run_id, uint64_t seq, enum journal_result res,
                                const char *reason, const char *at, size_t *len)
{
    json_t *o = outcome_tree(run_id, seq, res, reason, at);
    char *line = dump_line(o, len);
    json_decref(o);
    return line;
}

enum status journal_write_intent(struct journal *j, const struct journal_intent *in,
                                 struct error *err)
{
    if (!in->run_id || !in->op || in->seq == 0)
        return error_set(err, ST_EINVAL,
                         "a journal intent needs a run id, an op and a sequence number from 1");
    char at[32];
    time_format_rfc3339(j->now_fixed ? j->now_fixed_ms : clock_real_ms(), true, at);
    size_t len = 0;
    char *line = journal_intent_line(in, at, &len);
    if (line)
        return hold_line(j, line, len, err);
    json_t *o = intent_tree(in, at);
    if (!in->diff && in->diff_text && in->diff_text_len)
        return emit_with_text(j, o, in->diff_text, in->diff_text_len, err);
    return emit(j, o, err);
}

enum status journal_write_outcome(struct journal *j, const char *run_id, uint64_t seq,
                                  enum journal_result res, const char *reason, struct error *err)
{
    if (!run_id || seq == 0)
        return error_set(err, ST_EINVAL,
                         "a journal outcome needs a run id and a sequence number from 1");
    char at[32];
    time_format_rfc3339(j->now_fixed ? j->now_fixed_ms : clock_real_ms(), true, at);
    size_t len = 0;
    char *line = journal_outcome_line(run_id, seq, journal_result_name(res), reason, at, &len);
    if (line)
        return hold_line(j, line, len, err);
    return emit(j, outcome_tree(run_id, seq, res, reason, at), err);
}

enum status journal_write_end(struct journal *j, const char *run_id, uint64_t done, uint64_t kept,
                              uint64_t unknown, uint64_t refused, uint64_t selected,
                              uint32_t attempts, const char *how, struct error *err)
{
    if (!run_id)
        return error_set(err, ST_EINVAL, "a journal end record needs a run id");
    json_t *o = record_new("end", run_id);
    json_t *c = json_object();
    json_object_set_new(c, "done", u64(done));
    json_object_set_new(c, "kept", u64(kept));
    json_object_set_new(c, "unknown", u64(unknown));
    if (refused)
        json_object_set_new(c, "refused", u64(refused));
    json_object_set_new(o, "counts", c);
    json_object_set_new(o, "selected", u64(selected));
    if (attempts > 1)
        json_object_set_new(o, "attempts", json_integer(attempts));
    set_str(o, "how", how);
    return emit(j, o, err);
}

enum status journal_write_attempt(struct journal *j, const struct journal_attempt *a,
                                  struct error *err)
{
    if (!a->run_id || a->attempt < 2 || a->next_seq == 0)
        return error_set(err, ST_EINVAL,
                         "a journal attempt needs a run id, an attempt number from 2 and the "
                         "next sequence number");
    json_t *o = record_new("attempt", a->run_id);
    json_object_set_new(o, "attempt", json_integer(a->attempt));
    json_object_set_new(o, "next_seq", u64(a->next_seq));
    set_str(o, "broker", a->broker);
    json_object_set_new(o, "unknown", u64(a->unknown));
    set_str(o, "reason", a->reason);
    return emit(j, o, err);
}

enum status journal_write_resolution(struct journal *j, const struct journal_resolution *r,
                                     struct error *err)
{
    if (!r->run_id || !r->seq || !r->result)
        return error_set(err, ST_EINVAL,
                         "a journal resolution needs a run id, a sequence "
                         "number and a result");
    json_t *o = record_new("resolution", r->run_id);
    json_object_set_new(o, "seq", u64(r->seq));
    json_object_set_new(o, "result", json_string(r->result));
    json_object_set_new(o, "in_dlq", json_boolean(r->in_dlq));
    if (r->at_target >= 0)
        json_object_set_new(o, "at_target", json_boolean(r->at_target));
    set_str(o, "by", r->by);
    set_str(o, "reason", r->reason);
    return emit(j, o, err);
}
