/*
 * decode_par: decode's records decoded by worker threads, written in file order (decode_par.h).
 */
#include "decode_par.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sanitize.h"
#include "snapshot.h"

#define PAR_LINES 1024        /* a batch: at most this many lines, */
#define PAR_BYTES (1u << 20)  /* and no more lines once it holds this many bytes */
#define PAR_AHEAD 8           /* batches made and not written: the workers then wait */
#define PAR_SMALL (64u << 10) /* a smaller file is read serially (unless DLQX_THREADS) */

/* What happened at one place of the input, in order: a line to decode; then, decoded, its
 * record's text (in out) or, malformed, its message (in msgs). */
enum ev_kind { EV_LINE, EV_RECORD, EV_BAD };
struct ev {
    enum ev_kind kind;
    bool oom;    /* EV_BAD: it could not be held */
    long lineno; /* EV_LINE */
    size_t off, len;
};

struct batch {
    struct ev ev[PAR_LINES];
    size_t n;
    struct strbuf raw;  /* the lines, each NUL-terminated */
    struct strbuf out;  /* the records' texts */
    struct strbuf msgs; /* the messages, each NUL-terminated */
    bool last;          /* the input ended (or failed: io_error says why) with it */
    bool io_failed;
    size_t io_error; /* its message in msgs */
    uint64_t seq;
    struct batch *next;
};

struct worker {
    struct decode_par *p;
    struct cli_decode_out o; /* the main thread's format and clock; its own memo and line */
    pthread_t thread;
};

struct decode_par {
    struct worker w[DECODE_PAR_MAX];
    int workers, running;
    bool forced; /* DLQX_THREADS was set: no file is too small */
    cli_record_fn fallback;
    void *fallback_ctx;
    /* one input's: */
    struct snapshot_reader r;
    pthread_mutex_t read_mu; /* the reader: one worker at a time */
    pthread_mutex_t mu;
    pthread_cond_t ready, room;
    /* under mu: */
    /* made, not written: batch seq in slot[seq % PAR_AHEAD], from next_take on */
    struct batch *slot[PAR_AHEAD];
    struct batch *spare; /* written, kept for the next (their buffers' pages stay mapped) */
    uint64_t next_take;
    bool stop;
    /* under read_mu: */
    uint64_t next_seq; /* the next batch read */
    bool ended;        /* the input ended (or failed) */
};

int decode_par_workers(void)
{
    const char *e = getenv("DLQX_THREADS");
    long n = 0;
    if (e && *e) {
        char *end;
        errno = 0;
        n = strtol(e, &end, 10);
        if (*end || errno || n < 1 || n > DECODE_PAR_MAX) {
            /* A typo is said, not taken for the default (as DLQX_MAX_RECORD's is). */
            struct strbuf sb;
            sb_init(&sb);
            sanitize_append(&sb, e, strnlen(e, 64), 0);
            san_eprintf("dlqx decode: DLQX_THREADS is %s: a number of threads from 1 to %d "
                        "(1: the main thread alone) is wanted\n",
                        sb.buf, DECODE_PAR_MAX);
            sb_free(&sb);
            return -1;
        }
        return (int)n;
    }
    n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    return n > DECODE_PAR_MAX ? DECODE_PAR_MAX : (int)n;
}

static void batch_free(struct batch *b)
{
    if (!b)
        return;
    sb_free(&b->raw);
    sb_free(&b->out);
    sb_free(&b->msgs);
    free(b);
}

static void set_bad(struct batch *b, struct ev *v, const struct error *err)
{
    v->kind = EV_BAD;
    v->oom = err->code == ST_ENOMEM;
    v->off = b->msgs.len;
    sb_adds(&b->msgs, err->msg);
    sb_addc(&b->msgs, '\0');
}

/* A batch, empty: a spare one or a new one. */
static struct batch *batch_get(struct decode_par *p)
{
    pthread_mutex_lock(&p->mu);
    struct batch *b = p->spare;
    if (b)
        p->spare = b->next;
    pthread_mutex_unlock(&p->mu);
    if (!b) {
        b = xcalloc(1, sizeof *b);
        sb_init(&b->raw);
        sb_init(&b->out);
        sb_init(&b->msgs);
    }
    return b;
}

/* b kept for batch_get. */
static void batch_put(struct decode_par *p, struct batch *b)
{
    sb_reset(&b->raw);
    sb_reset(&b->out);
    sb_reset(&b->msgs);
    b->n = 0;
    b->last = b->io_failed = false;
    pthread_mutex_lock(&p->mu);
    b->next = p->spare;
    p->spare = b;
    pthread_mutex_unlock(&p->mu);
}

/* Lines of the input into b until it is full or the input ends. */
static void read_lines(struct snapshot_reader *r, struct batch *b)
{
    while (b->n < PAR_LINES && b->raw.len < PAR_BYTES) {
        const char *line = NULL;
        size_t len = 0;
        struct error err;
        error_clear(&err);
        enum snapshot_rc rc = snapshot_read_line(r, &line, &len, &err);
        if (rc == SNAP_EOF || rc == SNAP_IO_ERROR) {
            if (rc == SNAP_IO_ERROR) {
                b->io_failed = true;
                b->io_error = b->msgs.len;
                sb_adds(&b->msgs, err.msg);
                sb_addc(&b->msgs, '\0');
            }
            b->last = true;
            return;
        }
        if (rc == SNAP_BAD_RECORD) {
            set_bad(b, &b->ev[b->n++], &err);
            continue;
        }
        struct ev *v = &b->ev[b->n++];
        v->kind = EV_LINE;
        v->lineno = r->line;
        v->off = b->raw.len;
        v->len = len;
        sb_add(&b->raw, line, len);
        sb_addc(&b->raw, '\0');
    }
}

static bool stopped(struct decode_par *p)
{
    pthread_mutex_lock(&p->mu);
    bool stop = p->stop;
    pthread_mutex_unlock(&p->mu);
    return stop;
}

/* The next batch of the input into b, numbered; false when the input had ended already (or
 * the writer stopped). */
static bool read_batch(struct decode_par *p, struct batch *b)
{
    pthread_mutex_lock(&p->read_mu);
    bool go = !p->ended && !stopped(p);
    if (go) {
        b->seq = p->next_seq++;
        read_lines(&p->r, b);
        p->ended = b->last;
    }
    pthread_mutex_unlock(&p->read_mu);
    return go;
}

/* Each line of b parsed and decoded into b->out (snapshot_read's message when malformed). */
static void decode_batch(struct worker *w, struct batch *b)
{
    w->o.sink = &b->out;
    for (size_t i = 0; i < b->n; i++) {
        struct ev *v = &b->ev[i];
        if (v->kind != EV_LINE)
            continue;
        struct message m;
        struct error e;
        error_clear(&e);
        if (snapshot_parse_line(b->raw.buf + v->off, v->len, &m, &e) != ST_OK) {
            message_free(&m);
            struct error full;
            error_clear(&full);
            error_set(&full, e.code, "%s:%ld: %s", w->p->r.name, v->lineno, e.msg);
            set_bad(b, v, &full);
            continue;
        }
        size_t at = b->out.len;
        cli_decode_one(&w->o, &m);
        message_free(&m);
        v->kind = EV_RECORD;
        v->off = at;
        v->len = b->out.len - at;
    }
    w->o.sink = NULL;
}

static void *work(void *arg)
{
    struct worker *w = arg;
    struct decode_par *p = w->p;
    for (;;) {
        struct batch *b = batch_get(p);
        if (!read_batch(p, b)) {
            batch_put(p, b);
            break;
        }
        decode_batch(w, b);
        bool last = b->last; /* b is the writer's once it is in its slot */
        pthread_mutex_lock(&p->mu);
        /* Its slot is free once the writer is within PAR_AHEAD of it: the batch the writer
         * waits for always has its slot. */
        while (b->seq - p->next_take >= PAR_AHEAD && !p->stop)
            pthread_cond_wait(&p->room, &p->mu);
        bool stop = p->stop;
        if (!stop) {
            p->slot[b->seq % PAR_AHEAD] = b;
            pthread_cond_signal(&p->ready);
        }
        pthread_mutex_unlock(&p->mu);
        if (stop)
            batch_put(p, b);
        if (stop || last)
            break;
    }
    return NULL;
}

/* The next batch in file order, waited for. */
static struct batch *take(struct decode_par *p)
{
    pthread_mutex_lock(&p->mu);
    struct batch **at;
    while (!*(at = &p->slot[p->next_take % PAR_AHEAD]))
        pthread_cond_wait(&p->ready, &p->mu);
    struct batch *b = *at;
    *at = NULL;
    p->next_take++;
    pthread_cond_broadcast(&p->room);
    pthread_mutex_unlock(&p->mu);
    return b;
}

/* b's records and messages, as cli_read_one and the serial decode write them; false at a
 * write error (stdout's error flag set, as the serial path stops). */
static bool write_batch(const struct batch *b, struct cli_inputs *stats)
{
    for (size_t i = 0; i < b->n; i++) {
        const struct ev *v = &b->ev[i];
        if (v->kind == EV_BAD) {
            san_eprintf("dlqx: %s (record skipped)\n", b->msgs.buf + v->off);
            if (v->oom)
                stats->out_of_memory = true;
            stats->bad_records++;
            continue;
        }
        stats->records++;
        fwrite(b->out.buf + v->off, 1, v->len, stdout);
        if (ferror(stdout))
            return false;
    }
    if (b->io_failed) {
        san_eprintf("dlqx: %s\n", b->msgs.buf + b->io_error);
        stats->io_failed = true;
    }
    return true;
}

/* Joins the workers (stopping them) and frees what was not written. */
static void stop_workers(struct decode_par *p)
{
    pthread_mutex_lock(&p->mu);
    p->stop = true;
    pthread_cond_broadcast(&p->room);
    pthread_mutex_unlock(&p->mu);
    for (int i = 0; i < p->running; i++)
        pthread_join(p->w[i].thread, NULL);
    p->running = 0;
    for (int i = 0; i < PAR_AHEAD; i++) {
        batch_free(p->slot[i]);
        p->slot[i] = NULL;
    }
    pthread_mutex_destroy(&p->mu);
    pthread_mutex_destroy(&p->read_mu);
    pthread_cond_destroy(&p->ready);
    pthread_cond_destroy(&p->room);
}

bool decode_par_file(FILE *f, const char *name, void *ctx, struct cli_inputs *stats)
{
    struct decode_par *p = ctx;
    /* A pipe or a terminal stays serial: each record is written when its line has come. */
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode) ||
        (!p->forced && st.st_size < (off_t)PAR_SMALL))
        return cli_read_one(f, name, p->fallback, p->fallback_ctx, stats);
    snapshot_reader_open(&p->r, f, name);
    pthread_mutex_init(&p->mu, NULL);
    pthread_mutex_init(&p->read_mu, NULL);
    pthread_cond_init(&p->ready, NULL);
    pthread_cond_init(&p->room, NULL);
    p->next_seq = p->next_take = 0;
    p->ended = p->stop = false;
    while (p->running < p->workers &&
           thread_start_quiet(&p->w[p->running].thread, work, &p->w[p->running]) == 0)
        p->running++;
    if (!p->running) { /* nothing read yet */
        stop_workers(p);
        snapshot_reader_close(&p->r);
        return cli_read_one(f, name, p->fallback, p->fallback_ctx, stats);
    }
    bool go_on = true, last = false;
    while (go_on && !last) {
        struct batch *b = take(p);
        last = b->last;
        go_on = write_batch(b, stats);
        batch_put(p, b);
    }
    int saved = errno; /* the write's, for cli_flush_stdout's message */
    stop_workers(p);
    snapshot_reader_close(&p->r);
    errno = saved;
    return go_on;
}

struct decode_par *decode_par_new(const struct cli_decode_out *o, int workers,
                                  cli_record_fn fallback, void *fallback_ctx)
{
    struct decode_par *p = xcalloc(1, sizeof *p);
    const char *e = getenv("DLQX_THREADS");
    p->forced = e && *e;
    p->workers = workers < DECODE_PAR_MAX ? workers : DECODE_PAR_MAX;
    p->fallback = fallback;
    p->fallback_ctx = fallback_ctx;
    for (int i = 0; i < p->workers; i++) {
        struct worker *w = &p->w[i];
        w->p = p;
        w->o = *o;
        sb_init(&w->o.line);
        w->o.memo = cli_decode_memo_new();
        w->o.sink = NULL;
    }
    return p;
}

void decode_par_free(struct decode_par *p)
{
    if (!p)
        return;
    while (p->spare) {
        struct batch *b = p->spare;
        p->spare = b->next;
        batch_free(b);
    }
    for (int i = 0; i < p->workers; i++) {
        sb_free(&p->w[i].o.line);
        cli_decode_memo_free(p->w[i].o.memo);
    }
    free(p);
}
