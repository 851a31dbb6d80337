/*
 * rows: the messages that pass the filter, in the order asked for (a->rows, which every view
 * reads), made by a job (job.h) a slice at a time: the filter over the store, then the sort —
 * the sort keys of the rows, for a text column the distinct texts merge-sorted into ranks,
 * then a stable counting sort (few distinct keys) or merge sort. A million rows are filtered
 * and sorted while the screen stays live; until the job ends the rows on screen are the old
 * ones, and cancelling it leaves them so.
 *
 * a->filter, a->sort_column and a->sort_reverse always say how a->rows were made; a job
 * carries the filter and order wanted, and installs them with the rows it made.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "filter.h"
#include "job.h"
#include "msort.h"

static const char *const sort_names[SORT_N] = {"as received", "age", "attempt", "type",
                                               "error",       "id",  "queue"};

const char *app_sort_name(int column)
{
    return column >= 0 && column < SORT_N ? sort_names[column] : "?";
}

/* The newest fetched_at_ms of the store: when the snapshot was read (0: nothing says). */
static int64_t snapshot_read_at(struct app *a)
{
    size_t n = a->store ? store_count(a->store) : 0;
    if (a->snapshot_ms_gen != a->store_gen || a->snapshot_ms_count != n) {
        int64_t newest = 0;
        for (size_t i = 0; i < n; i++) {
            const struct store_entry *e = store_entry_at(a->store, i);
            if (e->fetched_at_ms > newest)
                newest = e->fetched_at_ms;
        }
        a->snapshot_ms = newest;
        a->snapshot_ms_gen = a->store_gen;
        a->snapshot_ms_count = n;
    }
    return a->snapshot_ms;
}

int64_t app_age_clock(struct app *a)
{
    int64_t at = a->ages_as_of_snapshot ? snapshot_read_at(a) : 0;
    return at ? at : a->now_ms;
}

const char *app_age_clock_name(const struct app *a)
{
    return a->ages_as_of_snapshot ? "as of the snapshot" : "from now";
}

void app_age_clock_toggle(struct app *a)
{
    if (a->ages_as_of_snapshot) {
        a->ages_as_of_snapshot = false;
        app_message(a, false, "ages are counted from now (%s: as of the snapshot)",
                    action_keys(ACT_AGE_CLOCK));
        return;
    }
    int64_t at = snapshot_read_at(a);
    if (!at) {
        app_message(a, true,
                    "no message says when it was read (fetched_at_ms): ages stay counted from now");
        return;
    }
    char t[32];
    time_format_rfc3339(at, false, t);
    a->ages_as_of_snapshot = true;
    app_message(a, false, "ages are counted as of the snapshot, read at %s (%s: from now)", t,
                action_keys(ACT_AGE_CLOCK));
}

static bool is_gone(const struct app *a, size_t i)
{
    return a->gone && i < a->gone_cap && a->gone[i] != GONE_NONE;
}

bool app_row_matches(struct app *a, size_t i)
{
    /* The filter loads the message itself, and only when a term needs it. */
    return !is_gone(a, i) && (!a->filter || filter_match_entry(a->filter, a->store, i, a->now_ms));
}

/* ---- the job --------------------------------------------------------------------------- */

enum rows_phase { P_MARK, P_SCAN, P_KEYS, P_TEXT_SORT, P_TEXT_RANKS, P_RANKS, P_SORT, P_DONE };
enum rows_note { NOTE_NONE, NOTE_SORT, NOTE_REVERSE, NOTE_FILTER };

struct rows_job {
    struct filter *filter; /* the filter wanted (owned when own_filter, else a->filter) */
    char *filter_text;     /* owned when own_filter */
    bool own_filter;
    bool scan;       /* the set is made again with the filter (else: a->rows's set, reordered) */
    bool reset;      /* a new store: a->rows were emptied, cancelling shows every message */
    bool superseded; /* another job took over what this one wanted */
    enum rows_note note;
    int column;
    bool reverse;
    int64_t now_ms; /* ages are judged at the start */
    enum rows_phase phase;
    size_t scan_at, scan_end; /* store entries: the next to look at, and where the set ends */
    uint8_t *mark;            /* !scan: the store entries in the set */
    size_t mark_at, mark_n, mark_size; /* !scan: the rows marked so far, of a->rows's first
                                          mark_n; the store's entries when it started */
    uint32_t *asc;                     /* the rows in store order */
    size_t n_asc;
    struct ritem *items, *tmp;
    size_t k;
    /* a text column: its distinct texts */
    uint32_t *slot_ref, *slot_id; /* ref -> text number, open addressing */
    size_t slots;
    struct strbuf texts;
    size_t *off;      /* each text's offset in texts (past 4 GB of them too) */
    struct ritem *dt; /* their sort items (merged through tmp, which is as long as items) */
    size_t nd, cap_d;
    uint32_t *rank;
    size_t d;          /* P_TEXT_RANKS: the next of the sorted texts */
    uint32_t rank_now; /* and the rank of the one before */
    struct msort ms;
    bool sorting;
    char (*ubuf)[STORE_TEXT_MAX]; /* by id: two for the merge's UUIDs */
};

static void rows_job_free(struct rows_job *r)
{
    if (r->own_filter) {
        filter_free(r->filter);
        free(r->filter_text);
    }
    free(r->mark);
    free(r->asc);
    free(r->items);
    free(r->tmp);
    free(r->slot_ref);
    free(r->slot_id);
    sb_free(&r->texts);
    free(r->off);
    free(r->dt);
    free(r->rank);
    free(r->ubuf);
    free(r);
}

static bool text_column(int c)
{
    return c == SORT_TYPE || c == SORT_ERROR || c == SORT_ID || c == SORT_QUEUE;
}

static store_ref column_ref(const struct store_entry *e, int c)
{
    switch (c) {
    case SORT_TYPE:
        return e->type;
    case SORT_ERROR:
        return e->error;
    case SORT_ID:
        return e->id;
    case SORT_QUEUE:
        return e->queue;
    default:
        return STORE_NONE;
    }
}

static uint64_t signed_key(int64_t x)
{
    return (uint64_t)x ^ 0x8000000000000000ULL; /* order-preserving as unsigned */
}

static uint64_t hash32(uint32_t x)
{
    uint64_t h = (uint64_t)x * 0x9e3779b97f4a7c15ULL;
    return h ^ (h >> 29);
}

static uint64_t text_key(const char *buf, size_t len)
{
    uint64_t key = 0;
    for (size_t b = 0; b < 8; b++)
        key = key << 8 | (b < len ? (unsigned char)buf[b] : 0);
    return key;
}

/* Row k's sort item on its id: each row its own, its text read where it is when the first 8
 * bytes tie (the ids are near-unique: a table telling equal ones apart, ranks and a second
 * sort would cost 32 B a row, a copy of the texts ~13 B, pointers to them 8 B; issue #15). */
static void id_item(struct app *a, struct rows_job *r, size_t k, store_ref ref, char *buf)
{
    size_t len;
    const unsigned char *p = store_text_view(a->store, ref, &len);
    if (!p) { /* a UUID kept in 16 bytes */
        len = store_text(a->store, ref, buf);
        p = (const unsigned char *)buf;
    }
    r->items[k] = (struct ritem){text_key((const char *)p, len), r->asc[k], (uint32_t)len};
}

/* The number of the text of ref, adding it when new. */
static uint32_t text_id(struct app *a, struct rows_job *r, store_ref ref, char *buf)
{
    if ((r->nd + 1) * 2 > r->slots) {
        size_t ns = r->slots ? r->slots * 2 : 1024;
        uint32_t *sr = xmalloc(ns * sizeof *sr), *si = xmalloc(ns * sizeof *si);
        memset(si, 0xff, ns * sizeof *si); /* UINT32_MAX: a free slot */
        for (size_t k = 0; k < r->slots; k++) {
            if (r->slot_id[k] == UINT32_MAX)
                continue;
            size_t h = hash32(r->slot_ref[k]) & (ns - 1);
            while (si[h] != UINT32_MAX)
                h = (h + 1) & (ns - 1);
            sr[h] = r->slot_ref[k];
            si[h] = r->slot_id[k];
        }
        free(r->slot_ref);
        free(r->slot_id);
        r->slot_ref = sr;
        r->slot_id = si;
        r->slots = ns;
    }
    size_t h = hash32(ref) & (r->slots - 1);
    while (r->slot_id[h] != UINT32_MAX) {
        if (r->slot_ref[h] == ref)
            return r->slot_id[h];
        h = (h + 1) & (r->slots - 1);
    }
    size_t len = store_text(a->store, ref, buf);
    size_t was = r->cap_d;
    xgrow((void **)&r->dt, &r->cap_d, r->nd + 1, sizeof *r->dt);
    if (r->cap_d != was)
        r->off = xrealloc(r->off, r->cap_d * sizeof *r->off);
    uint32_t id = (uint32_t)r->nd++;
    r->off[id] = r->texts.len;
    sb_add(&r->texts, buf, len);
    r->dt[id] = (struct ritem){text_key(buf, len), id, (uint32_t)len};
    r->slot_ref[h] = ref;
    r->slot_id[h] = id;
    return id;
}

/* A stable counting sort when the keys span little; false when they span too much. */
static bool counting_sort(struct rows_job *r)
{
    size_t n = r->n_asc;
    if (!n)
        return true;
    uint64_t lo = r->items[0].key, hi = lo;
    for (size_t i = 1; i < n; i++) {
        uint64_t k = r->items[i].key;
        lo = k < lo ? k : lo;
        hi = k > hi ? k : hi;
    }
    if (hi - lo >= (uint64_t)1 << 20 || hi - lo > 4 * (uint64_t)n)
        return false;
    size_t range = (size_t)(hi - lo) + 1;
    size_t *at = xcalloc(range + 1, sizeof *at);
    for (size_t i = 0; i < n; i++)
        at[r->items[i].key - lo + 1]++;
    for (size_t v = 1; v <= range; v++)
        at[v] += at[v - 1];
    for (size_t i = 0; i < n; i++)
        r->tmp[at[r->items[i].key - lo]++] = r->items[i];
    free(at);
    struct ritem *t = r->items;
    r->items = r->tmp;
    r->tmp = t;
    return true;
}

static bool out_of_time(unsigned *tick, double until)
{
    return ++*tick % 1024 == 0 && job_yield(until);
}

static double log2_of(size_t n)
{
    double l = 0;
    while (n > 1) {
        n >>= 1;
        l++;
    }
    return l;
}

/* Per mille, over the phases: the filter (when there is one) is most of the work. */
static void progress(struct app *a, const struct rows_job *r, struct job *j)
{
    double scan_share = r->column == SORT_ORDER ? 1.0 : r->scan && r->filter ? 0.7 : 0.1;
    double rest = 1.0 - scan_share, p = 0;
    size_t end = r->scan ? store_count(a->store) : r->scan_end;
    size_t n = r->n_asc ? r->n_asc : 1;
    switch (r->phase) {
    case P_MARK:
        break;
    case P_SCAN:
        p = scan_share * (double)r->scan_at / (double)(end ? end : 1);
        break;
    case P_KEYS:
        p = scan_share + rest * 0.3 * (double)r->k / (double)n;
        break;
    case P_TEXT_SORT:
        p = scan_share + rest * (0.3 + 0.2 * log2_of(r->ms.width) / (log2_of(r->nd) + 1));
        break;
    case P_TEXT_RANKS:
        p = scan_share + rest * 0.5;
        break;
    case P_RANKS:
        p = scan_share + rest * (0.5 + 0.1 * (double)r->k / (double)n);
        break;
    case P_SORT:
        p = scan_share +
            rest * (0.6 + 0.4 * (r->sorting ? log2_of(r->ms.width) / (log2_of(n) + 1) : 0));
        break;
    case P_DONE:
        p = 1;
        break;
    }
    j->total = 1000;
    j->done = (uint64_t)(p * 1000);
}

static enum job_rc rows_step(struct app *a, struct job *j, double until)
{
    struct rows_job *r = j->state;
    unsigned tick = 0;
    char *buf = NULL;
    enum job_rc rc = JOB_MORE;
    if (r->phase == P_MARK) {
        /* a->rows only grows at its end meanwhile (the loader): its first mark_n stay. */
        for (; r->mark_at < r->mark_n; r->mark_at++) {
            if (out_of_time(&tick, until))
                goto out;
            if (a->rows[r->mark_at] < r->mark_size)
                r->mark[a->rows[r->mark_at]] = 1;
        }
        r->phase = P_SCAN;
    }
    if (r->phase == P_SCAN) {
        size_t end = r->scan ? store_count(a->store) : r->scan_end;
        if (r->scan)
            r->asc = xrealloc(r->asc, (end ? end : 1) * sizeof *r->asc);
        for (; r->scan_at < end; r->scan_at++) {
            if (out_of_time(&tick, until))
                goto out;
            size_t i = r->scan_at;
            if (r->scan ? !is_gone(a, i) &&
                              (!r->filter || filter_match_entry(r->filter, a->store, i, r->now_ms))
                        : r->mark[i])
                r->asc[r->n_asc++] = (uint32_t)i;
        }
        r->scan_end = end;
        free(r->mark);
        r->mark = NULL;
        r->phase = P_KEYS;
        if (r->column == SORT_ORDER) {
            if (r->reverse)
                for (size_t i = 0; i < r->n_asc / 2; i++) {
                    size_t t = r->asc[i];
                    r->asc[i] = r->asc[r->n_asc - 1 - i];
                    r->asc[r->n_asc - 1 - i] = t;
                }
            r->phase = P_DONE;
            rc = JOB_DONE;
            goto out;
        }
        r->items = xmalloc((r->n_asc ? r->n_asc : 1) * sizeof *r->items);
    }
    if (r->phase == P_KEYS) {
        bool text = text_column(r->column);
        if (text)
            buf = xmalloc(STORE_TEXT_MAX);
        for (; r->k < r->n_asc; r->k++) {
            if (out_of_time(&tick, until))
                goto out;
            const struct store_entry *e = store_entry_at(a->store, r->asc[r->k]);
            uint64_t key = 0;
            if (r->column == SORT_ID) {
                id_item(a, r, r->k, e->id, buf);
                continue;
            }
            if (text)
                key = text_id(a, r, column_ref(e, r->column), buf);
            else if (r->column == SORT_AGE)
                key = ~signed_key(e->first_seen_ms); /* ages ascending: the newest first */
            else if (r->column == SORT_ATTEMPT)
                key = signed_key(e->attempt);
            r->items[r->k] = (struct ritem){key, r->asc[r->k], 0};
        }
        free(r->asc); /* the items name the entries (issue #15: 4 B a row) */
        r->asc = NULL;
        if (r->column == SORT_ID) {
            /* The rows sorted on their ids at once: no ranks (issue #15: 16 B a row less,
             * and one merge sort instead of two). */
            r->tmp = xmalloc((r->n_asc ? r->n_asc : 1) * sizeof *r->tmp);
            msort_init(&r->ms, r->items, r->tmp, r->n_asc);
            r->ubuf = xmalloc(2 * sizeof *r->ubuf);
            r->ms.ids = a->store;
            r->ms.ubuf = r->ubuf;
            r->ms.desc = r->reverse;
            r->sorting = true;
            r->phase = P_SORT;
        } else if (text) {
            free(r->slot_ref); /* the texts are numbered: memory for the sorts (issue #15) */
            free(r->slot_id);
            r->slot_ref = r->slot_id = NULL;
            /* The rows' own sort needs tmp later: the texts, never more than the rows, are
             * merged through it now (not an array of their own: memory, issue #15). */
            r->tmp = xmalloc((r->n_asc ? r->n_asc : 1) * sizeof *r->tmp);
            msort_init(&r->ms, r->dt, r->tmp, r->nd);
            r->ms.texts = r->texts.buf;
            r->ms.off = r->off;
            r->phase = P_TEXT_SORT;
        } else {
            r->phase = P_SORT;
        }
    }
    if (r->phase == P_TEXT_SORT) {
        if (!msort_step(&r->ms, until))
            goto out;
        r->rank = xmalloc((r->nd ? r->nd : 1) * sizeof *r->rank);
        r->d = 0;
        r->rank_now = 0;
        r->phase = P_TEXT_RANKS;
    }
    if (r->phase == P_TEXT_RANKS) {
        /* Equal texts get equal ranks; ranks start at 1. */
        const struct ritem *sorted = r->ms.a;
        for (; r->d < r->nd; r->d++) {
            if (out_of_time(&tick, until))
                goto out;
            size_t d = r->d;
            const struct ritem *t = &sorted[d], *p = d ? &sorted[d - 1] : NULL;
            if (!p || p->key != t->key || p->len != t->len ||
                memcmp(r->texts.buf + r->off[p->pos], r->texts.buf + r->off[t->pos], t->len))
                r->rank_now++;
            r->rank[t->pos] = r->rank_now;
        }
        sb_free(&r->texts); /* ranked: the texts are not needed again */
        free(r->off);
        r->off = NULL;
        free(r->dt); /* tmp, as long as the rows, stays for their sort */
        r->dt = NULL;
        r->k = 0;
        r->phase = P_RANKS;
    }
    if (r->phase == P_RANKS) {
        for (; r->k < r->n_asc; r->k++) {
            if (out_of_time(&tick, until))
                goto out;
            r->items[r->k].key = r->rank[r->items[r->k].key];
        }
        free(r->rank);
        r->rank = NULL;
        r->phase = P_SORT;
    }
    if (r->phase == P_SORT) {
        if (!r->sorting) {
            if (!r->tmp)
                r->tmp = xmalloc((r->n_asc ? r->n_asc : 1) * sizeof *r->tmp);
            if (r->reverse)
                for (size_t i = 0; i < r->n_asc; i++)
                    r->items[i].key = ~r->items[i].key;
            if (counting_sort(r)) {
                r->phase = P_DONE;
                rc = JOB_DONE;
                goto out;
            }
            msort_init(&r->ms, r->items, r->tmp, r->n_asc);
            r->sorting = true;
        }
        if (!msort_step(&r->ms, until))
            goto out;
        r->items = r->ms.a;
        r->tmp = r->ms.b;
        r->phase = P_DONE;
        rc = JOB_DONE;
    }
out:
    free(buf);
    progress(a, r, j);
    return rc;
}

static void rows_describe(struct app *a, const struct job *j, struct strbuf *out)
{
    const struct rows_job *r = j->state;
    char n[32];
    bool scanning = r->phase == P_MARK || r->phase == P_SCAN;
    if (scanning && r->scan && r->filter) {
        sb_addf(out, "filtering %s messages", fmt_thousands(store_count(a->store), n));
        return;
    }
    size_t count = scanning ? (r->scan ? store_count(a->store) : r->scan_end) : r->n_asc;
    if (r->column == SORT_ORDER)
        sb_addf(out, "listing %s messages", fmt_thousands(count, n));
    else
        sb_addf(out, "sorting %s messages by %s", fmt_thousands(count, n),
                app_sort_name(r->column));
}

/* Every messages view keeps its cursor on the message it was on. */
static void keep_cursors(struct app *a, const size_t *old_rows, size_t old_n)
{
    for (int d = 0; d < a->depth; d++) {
        struct view *v = &a->stack[d];
        if (v->ops != &view_messages_ops || v->cursor >= old_n)
            continue;
        size_t keep = old_rows[v->cursor];
        for (size_t i = 0; i < a->n_rows; i++)
            if (a->rows[i] == keep) {
                v->cursor = i;
                break;
            }
    }
}

static void install(struct app *a, struct rows_job *r)
{
    free(r->tmp); /* done with: their memory for the new rows (issue #15) */
    r->tmp = NULL;
    size_t *rows = xmalloc((r->n_asc ? r->n_asc : 1) * sizeof *rows);
    if (r->column == SORT_ORDER)
        for (size_t i = 0; i < r->n_asc; i++)
            rows[i] = r->asc[i];
    else
        for (size_t i = 0; i < r->n_asc; i++)
            rows[i] = r->items[i].pos;
    size_t *old = a->rows, old_n = a->n_rows;
    a->rows = rows;
    a->n_rows = r->n_asc;
    a->rows_upto = r->scan_end;
    a->rows_gen++;
    a->sort_column = r->column;
    a->sort_reverse = r->reverse;
    if (r->own_filter) {
        filter_free(a->filter);
        free(a->filter_text);
        a->filter = r->filter;
        a->filter_text = r->filter_text;
        r->own_filter = false;
    }
    if (r->scan) {
        a->set_gen++;
        app_reload_views(a);
    } else {
        keep_cursors(a, old, old_n);
    }
    free(old);
    switch (r->note) {
    case NOTE_SORT:
        app_message(a, false, "sorted by %s", app_sort_name(a->sort_column));
        break;
    case NOTE_REVERSE:
        app_message(a, false, "sorted by %s, %s", app_sort_name(a->sort_column),
                    a->sort_reverse ? "reversed" : "forward");
        break;
    case NOTE_FILTER:
        if (a->filter)
            app_message(a, false, "%zu messages match", a->n_rows);
        else
            app_message(a, false, "filter cleared");
        break;
    case NOTE_NONE:
        break;
    }
}

static void rows_end(struct app *a, struct job *j, bool cancelled)
{
    struct rows_job *r = j->state;
    if (!cancelled) {
        install(a, r);
    } else if (r->superseded) {
        /* the job that took over says what happens */
    } else if (r->reset) {
        /* The rows of the old store are gone: show every message as it came. */
        filter_free(a->filter);
        a->filter = NULL;
        free(a->filter_text);
        a->filter_text = NULL;
        size_t n = store_count(a->store);
        free(a->rows);
        a->rows = xmalloc((n ? n : 1) * sizeof *a->rows);
        for (size_t i = 0; i < n; i++)
            a->rows[i] = i;
        a->n_rows = n;
        a->rows_upto = n;
        a->sort_column = SORT_ORDER;
        a->sort_reverse = false;
        a->rows_gen++;
        a->set_gen++;
        app_reload_views(a);
        app_message(a, true, "cancelled: every message, as received, no filter");
    } else if (r->own_filter) {
        app_message(a, true, "filter cancelled: the list is as it was");
    } else {
        app_message(a, true, "sort cancelled: the list is as it was");
    }
    rows_job_free(r);
}

static const struct job_ops rows_ops = {rows_step, rows_describe, rows_end};

/* Starts the rows job for the wanted filter and order. filter/text: a new filter (owned;
 * text NULL with filter NULL clears it), or keep (use the one wanted so far). */
static void rows_start(struct app *a, bool new_filter, struct filter *filter, char *text,
                       int column, bool reverse, bool scan, bool reset, enum rows_note note)
{
    struct rows_job *r = xcalloc(1, sizeof *r);
    sb_init(&r->texts);
    struct rows_job *old = job_state(a, JOB_ROWS, &rows_ops);
    if (old) {
        old->superseded = true;
        scan = scan || old->scan;
        reset = reset || old->reset;
        if (!new_filter && old->own_filter) {
            /* The filter it was about to apply is still wanted. */
            new_filter = true;
            filter = old->filter;
            text = old->filter_text;
            old->own_filter = false;
            if (note == NOTE_NONE)
                note = old->note;
        }
    }
    if (new_filter) {
        r->filter = filter;
        r->filter_text = text;
        r->own_filter = true;
        scan = true;
    } else {
        r->filter = a->filter;
    }
    r->scan = scan;
    r->reset = reset;
    r->note = note;
    r->column = column;
    r->reverse = reverse;
    r->now_ms = a->now_ms;
    if (!scan) {
        /* The set as it is (rows read later join it when the loader gets to them). */
        size_t n = store_count(a->store);
        r->mark = xcalloc(n ? n : 1, 1); /* marked a slice at a time (P_MARK) */
        r->mark_n = a->n_rows;
        r->mark_size = n;
        r->phase = P_MARK;
        r->scan_end = a->rows_upto < n ? a->rows_upto : n;
        r->asc = xmalloc((a->n_rows ? a->n_rows : 1) * sizeof *r->asc);
    }
    job_start(a, JOB_ROWS, &rows_ops, r);
}

void app_sort_wanted(const struct app *a, int *column, bool *reverse)
{
    const struct rows_job *r = job_state(a, JOB_ROWS, &rows_ops);
    *column = r ? r->column : a->sort_column;
    *reverse = r ? r->reverse : a->sort_reverse;
}

const char *app_filter_wanted(const struct app *a)
{
    const struct rows_job *r = job_state(a, JOB_ROWS, &rows_ops);
    return r && r->own_filter ? r->filter_text : a->filter_text;
}

void app_set_sort(struct app *a, int column, bool reverse)
{
    int was;
    bool was_rev;
    app_sort_wanted(a, &was, &was_rev);
    rows_start(a, false, NULL, NULL, column, reverse, false, false,
               column == was ? NOTE_REVERSE : NOTE_SORT);
}

bool app_set_filter(struct app *a, const char *text)
{
    int column;
    bool reverse;
    app_sort_wanted(a, &column, &reverse);
    if (!text || !*text) {
        rows_start(a, true, NULL, NULL, column, reverse, true, false, NOTE_FILTER);
        return true;
    }
    struct filter *f = NULL;
    struct error err;
    error_clear(&err);
    if (filter_compile(text, &f, &err) != ST_OK) {
        app_message(a, true, "filter: %s", err.msg);
        return false;
    }
    rows_start(a, true, f, xstrdup(text), column, reverse, true, false, NOTE_FILTER);
    return true;
}

void app_rows_reset(struct app *a)
{
    /* The rows were positions in the old store: none of them means anything now. */
    free(a->rows);
    a->rows = NULL;
    a->n_rows = 0;
    a->rows_upto = 0;
    a->rows_gen++;
    a->set_gen++;
    int column;
    bool reverse;
    app_sort_wanted(a, &column, &reverse);
    rows_start(a, false, NULL, NULL, column, reverse, true, true, NOTE_NONE);
}

void app_rows_extend(struct app *a)
{
    size_t n = store_count(a->store);
    if (n <= a->rows_upto)
        return;
    a->rows = xrealloc(a->rows, (a->n_rows + (n - a->rows_upto)) * sizeof *a->rows);
    for (size_t i = a->rows_upto; i < n; i++)
        if (app_row_matches(a, i))
            a->rows[a->n_rows++] = i;
    a->rows_upto = n;
}

void app_rows_complete(struct app *a)
{
    app_rows_extend(a);
    int column;
    bool reverse;
    app_sort_wanted(a, &column, &reverse);
    /* Rows read after a sort were added at the end: put them in their place. */
    if (column != SORT_ORDER || reverse || job_state(a, JOB_ROWS, &rows_ops))
        rows_start(a, false, NULL, NULL, column, reverse, false, false, NOTE_NONE);
    a->set_gen++; /* what was made of part of the set (groups, forest) is made again */
    app_reload_views(a);
}

bool app_rows_rescanning(const struct app *a)
{
    const struct rows_job *r = job_state(a, JOB_ROWS, &rows_ops);
    return r && r->scan;
}

/* ---- what passes took away ----------------------------------------------------------- */

void app_mark_gone(struct app *a, size_t entry, enum gone_why why)
{
    size_t n = a->store ? store_count(a->store) : 0;
    if (entry >= n || why == GONE_NONE)
        return;
    if (entry >= a->gone_cap) {
        a->gone = xrealloc(a->gone, n);
        memset(a->gone + a->gone_cap, GONE_NONE, n - a->gone_cap);
        a->gone_cap = n;
    }
    if (a->gone[entry] == GONE_NONE)
        a->n_gone++;
    a->gone[entry] = (unsigned char)why;
}

void app_rows_drop_gone(struct app *a)
{
    int column;
    bool reverse;
    app_sort_wanted(a, &column, &reverse);
    rows_start(a, false, NULL, NULL, column, reverse, true, false, NOTE_NONE);
}

const char *app_gone_name(const struct app *a, size_t entry)
{
    static const char *const names[] = {NULL, "replayed", "re-issued", "moved", "deleted"};
    if (!is_gone(a, entry) || a->gone[entry] >= sizeof names / sizeof names[0])
        return NULL;
    return names[a->gone[entry]];
}
