/*
 * store: compact index entries, a string arena with interning and 16-byte UUIDs, records in
 * memory up to a budget and in an unlinked temporary file past it.
 */
#include "store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "decode.h"
#include "snapshot.h"

#define DEFAULT_BUDGET (64u << 20)
#define ARENA_MAX UINT32_MAX
/* The arena is made of chunks that never move (a text never straddles two), so a text's
 * bytes stay where they are for the store's life (store_text_view) and growing copies
 * nothing. */
#define CHUNK_BITS 24
#define CHUNK_SIZE ((size_t)1 << CHUNK_BITS)
#define N_CHUNKS ((size_t)1 << (32 - CHUNK_BITS))
#define TAG_TEXT 0x00 /* varint length, bytes */
#define TAG_UUID 0x01 /* 16 bytes, shown as canonical lowercase */

struct intern {
    uint32_t *slots; /* arena refs, STORE_NONE empty */
    uint32_t mask;
    uint32_t count;
};

struct store {
    struct store_entry *e;
    size_t n, cap;
    unsigned char *chunk[N_CHUNKS];
    size_t arena_len; /* the next ref */
    size_t n_chunks;
    struct intern types; /* types, queues, errors and reject reasons share one table */
    struct strbuf mem;   /* records in memory */
    struct strbuf texts; /* append's scratch: a message's index texts (kept, not reallocated) */
    size_t budget;
    FILE *spill;
    uint64_t spill_len;
    uint64_t spill_pos; /* where the file position is (reads move it) */
    bool full;          /* the arena ran out: no more appends */
    char *rejects[32];
    uint16_t n_rejects;
    uint64_t seed;  /* of the interning table's hash: hostile texts cannot aim at its slots */
    int files[256]; /* store_file_add's descriptors, from 1 */
    struct file_seen {
        off_t size;
        struct timespec mtime;
    } seen[256]; /* each file as last seen: a record is read back only from the same file */
    unsigned n_files;
};

enum status store_new(size_t budget, const char *dir, struct store **out, struct error *err)
{
    struct store *s = xcalloc(1, sizeof *s);
    s->budget = budget ? budget : DEFAULT_BUDGET;
    s->seed = hash_mix64((uint64_t)(uintptr_t)s ^ (uint64_t)clock_now_ms());
    const char *tmp = dir ? dir : getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    char *path = xasprintf("%s/dlqx-store-XXXXXX", tmp);
    int fd = mkstemp(path);
    if (fd < 0) {
        error_set(err, ST_EIO, "cannot make a temporary file in %s: %s", tmp, strerror(errno));
        free(path);
        free(s);
        return ST_EIO;
    }
    /* Unlinked at once: the data never outlives the process. Close-on-exec: $EDITOR and any
     * other program started from here must not inherit every message body. */
    unlink(path);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    free(path);
    s->spill = fdopen(fd, "w+b");
    if (!s->spill) {
        close(fd);
        free(s);
        return error_set(err, ST_EIO, "cannot open the temporary file: %s", strerror(errno));
    }
    s->types.mask = 1023;
    s->types.slots = xmalloc((s->types.mask + 1) * sizeof *s->types.slots);
    memset(s->types.slots, 0xff, (s->types.mask + 1) * sizeof *s->types.slots);
    s->rejects[0] = xstrdup("");
    s->n_rejects = 1;
    *out = s;
    return ST_OK;
}

void store_free(struct store *s)
{
    if (!s)
        return;
    free(s->e);
    for (size_t c = 0; c < s->n_chunks; c++)
        free(s->chunk[c]);
    free(s->types.slots);
    sb_free(&s->mem);
    sb_free(&s->texts);
    if (s->spill)
        fclose(s->spill);
    for (unsigned f = 1; f <= s->n_files; f++)
        close(s->files[f]);
    for (uint16_t i = 0; i < s->n_rejects; i++)
        free(s->rejects[i]);
    free(s);
}

#if defined(__SSE2__)
#include <emmintrin.h>

/* Sixteen lowercase hex digits (in memory order) packed into eight bytes, in the low bytes of
 * its 16-bit lanes; *ok gets a bit a digit that is one (0-9 and a-f, as uuid_pack has it). */
static inline __m128i hex16_pack(__m128i v, unsigned *ok)
{
    /* signed compares: a byte above 0x7f is below both ranges */
    __m128i digit = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)),
                                  _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
    __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('a' - 1)),
                                   _mm_cmplt_epi8(v, _mm_set1_epi8('f' + 1)));
    *ok = (unsigned)_mm_movemask_epi8(_mm_or_si128(digit, letter));
    __m128i nib = _mm_add_epi8(_mm_and_si128(v, _mm_set1_epi8(0x0f)),
                               _mm_and_si128(letter, _mm_set1_epi8(9)));
    /* each 16-bit lane: its first digit the high nibble, its second the low */
    return _mm_and_si128(_mm_or_si128(_mm_slli_epi16(nib, 4), _mm_srli_epi16(nib, 8)),
                         _mm_set1_epi16(0x00ff));
}
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HI8 0x8080808080808080ULL
#define ONE8(c) (0x0101010101010101ULL * (c))

/* Eight lowercase hex digits (in memory order) packed into four bytes; false when one of
 * them is not one (0-9 and a-f, as uuid_pack has it). A word at a time. */
static bool hex8_pack(const unsigned char *d, unsigned char out[4])
{
    uint64_t w;
    memcpy(&w, d, 8);
    if (w & HI8)
        return false;
    /* a byte's high bit: x >= lo (x + 0x80 - lo), x > hi (x + 0x7f - hi); no carries below 0x80 */
    uint64_t digit = (w + ONE8(0x80 - '0')) & ~(w + ONE8(0x7f - '9'));
    uint64_t letter = (w + ONE8(0x80 - 'a')) & ~(w + ONE8(0x7f - 'f'));
    if (((digit | letter) & HI8) != HI8)
        return false;
    uint64_t v = (w & ONE8(0x0f)) + ((letter & HI8) >> 7) * 9;
    /* each 16-bit lane: its first digit the high nibble, its second the low */
    uint64_t x = ((v & 0x000f000f000f000fULL) << 4) | ((v >> 8) & 0x000f000f000f000fULL);
    x = (x | (x >> 8)) & 0x0000ffff0000ffffULL;
    x = (x | (x >> 16)) & 0xffffffffULL;
    uint32_t y = (uint32_t)x;
    memcpy(out, &y, 4);
    return true;
}
#endif

/* A canonical lowercase UUID (8-4-4-4-12) packed into 16 bytes. */
static bool uuid_pack(const unsigned char *s, size_t n, unsigned char out[16])
{
    if (n != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-')
        return false;
#if defined(__SSE2__) || (defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__)
    unsigned char d[32];
    memcpy(d, s, 8);
    memcpy(d + 8, s + 9, 4);
    memcpy(d + 12, s + 14, 4);
    memcpy(d + 16, s + 19, 4);
    memcpy(d + 20, s + 24, 12);
#if defined(__SSE2__)
    unsigned ok0, ok1;
    __m128i p0 = hex16_pack(_mm_loadu_si128((const __m128i *)(const void *)d), &ok0);
    __m128i p1 = hex16_pack(_mm_loadu_si128((const __m128i *)(const void *)(d + 16)), &ok1);
    if ((ok0 & ok1) != 0xffff)
        return false;
    _mm_storeu_si128((__m128i *)(void *)out, _mm_packus_epi16(p0, p1));
    return true;
#else
    return hex8_pack(d, out) && hex8_pack(d + 8, out + 4) && hex8_pack(d + 16, out + 8) &&
           hex8_pack(d + 24, out + 12);
#endif
#else
    /* a lowercase hex digit's value plus one; 0 for any other byte */
    static const unsigned char hex1[256] = {
        ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,
        ['6'] = 7,  ['7'] = 8,  ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12,
        ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    };
    /* where each byte's two digits start */
    static const unsigned char at2[16] = {0,  2,  4,  6,  9,  11, 14, 16,
                                          19, 21, 24, 26, 28, 30, 32, 34};
    unsigned bad = 0;
    for (size_t k = 0; k < 16; k++) {
        unsigned hi = hex1[s[at2[k]]], lo = hex1[s[at2[k] + 1]];
        bad |= (hi == 0) | (lo == 0);
        out[k] = (unsigned char)((hi - 1) << 4 | (lo - 1));
    }
    return !bad;
#endif
}

static unsigned char *at(const struct store *s, size_t r)
{
    return s->chunk[r >> CHUNK_BITS] + (r & (CHUNK_SIZE - 1));
}

/* Room for n bytes (n < CHUNK_SIZE) at arena_len, in one chunk. */
static bool arena_reserve(struct store *s, size_t n, struct error *err)
{
    size_t end = s->arena_len + n;
    if (((end - 1) >> CHUNK_BITS) != (s->arena_len >> CHUNK_BITS))
        end = ((s->arena_len >> CHUNK_BITS) + 1) * CHUNK_SIZE + n; /* the next chunk */
    if (end >= ARENA_MAX) {
        s->full = true;
        error_set(err, ST_ERANGE, "the snapshot store is full (4 GiB of ids and texts)");
        return false;
    }
    s->arena_len = end - n;
    while (s->n_chunks <= (s->arena_len >> CHUNK_BITS))
        s->chunk[s->n_chunks++] = xmalloc(CHUNK_SIZE);
    return true;
}

static store_ref arena_put(struct store *s, const unsigned char *data, size_t n, struct error *err)
{
    if (n == 0)
        return STORE_NONE;
    unsigned char u[16];
    if (uuid_pack(data, n, u)) {
        if (!arena_reserve(s, 17, err))
            return STORE_NONE;
        store_ref r = (store_ref)s->arena_len;
        unsigned char *p = at(s, r);
        p[0] = TAG_UUID;
        memcpy(p + 1, u, 16);
        s->arena_len += 17;
        return r;
    }
    if (n > STORE_TEXT_MAX - 1)
        n = STORE_TEXT_MAX - 1;
    if (!arena_reserve(s, n + 6, err))
        return STORE_NONE;
    store_ref r = (store_ref)s->arena_len;
    unsigned char *p = at(s, r), *w = p;
    *w++ = TAG_TEXT;
    size_t v = n;
    do {
        unsigned char b = v & 0x7f;
        v >>= 7;
        *w++ = (unsigned char)(b | (v ? 0x80 : 0));
    } while (v);
    memcpy(w, data, n);
    s->arena_len += (size_t)(w - p) + n;
    return r;
}

/* A view of a TAG_TEXT entry (NULL for a UUID). */
static const unsigned char *text_view(const struct store *s, store_ref r, size_t *n)
{
    const unsigned char *p = at(s, r);
    if (*p != TAG_TEXT)
        return NULL;
    p++;
    size_t v = 0;
    unsigned shift = 0;
    while (*p & 0x80) {
        v |= (size_t)(*p++ & 0x7f) << shift;
        shift += 7;
    }
    v |= (size_t)*p++ << shift;
    *n = v;
    return p;
}

static void intern_grow(struct store *s)
{
    struct intern *t = &s->types;
    uint32_t ncap = (t->mask + 1) * 2;
    uint32_t *slots = xmalloc(ncap * sizeof *slots);
    memset(slots, 0xff, ncap * sizeof *slots);
    for (uint32_t i = 0; i <= t->mask; i++) {
        if (t->slots[i] == STORE_NONE)
            continue;
        size_t n = 0;
        const unsigned char *p = text_view(s, t->slots[i], &n);
        uint32_t h = (uint32_t)hash_bytes(p, n, s->seed) & (ncap - 1);
        while (slots[h] != STORE_NONE)
            h = (h + 1) & (ncap - 1);
        slots[h] = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->mask = ncap - 1;
}

/* Interned text: types, queues and errors repeat a lot. A text that is a UUID is not interned. */
static store_ref intern(struct store *s, const unsigned char *data, size_t n, struct error *err)
{
    if (n == 0)
        return STORE_NONE;
    if (n > STORE_TEXT_MAX - 1)
        n = STORE_TEXT_MAX - 1;
    unsigned char u[16];
    if (uuid_pack(data, n, u))
        return arena_put(s, data, n, err);
    struct intern *t = &s->types;
    if ((t->count + 1) * 2 > t->mask)
        intern_grow(s);
    uint32_t h = (uint32_t)hash_bytes(data, n, s->seed) & t->mask;
    while (t->slots[h] != STORE_NONE) {
        size_t m = 0;
        const unsigned char *p = text_view(s, t->slots[h], &m);
        if (p && m == n && memcmp(p, data, n) == 0)
            return t->slots[h];
        h = (h + 1) & t->mask;
    }
    store_ref r = arena_put(s, data, n, err);
    if (r != STORE_NONE) {
        t->slots[h] = r;
        t->count++;
    }
    return r;
}

size_t store_text(const struct store *s, store_ref r, char *buf)
{
    if (r == STORE_NONE) {
        buf[0] = '\0';
        return 0;
    }
    const unsigned char *p = at(s, r);
    if (*p == TAG_UUID) {
        static const char hex[] = "0123456789abcdef";
        size_t w = 0;
        for (int i = 0; i < 16; i++) {
            if (i == 4 || i == 6 || i == 8 || i == 10)
                buf[w++] = '-';
            buf[w++] = hex[p[1 + i] >> 4];
            buf[w++] = hex[p[1 + i] & 15];
        }
        buf[w] = '\0';
        return w;
    }
    size_t n = 0;
    const unsigned char *t = text_view(s, r, &n);
    if (!t) {
        buf[0] = '\0';
        return 0;
    }
    memcpy(buf, t, n);
    buf[n] = '\0';
    return n;
}

const unsigned char *store_text_view(const struct store *s, store_ref r, size_t *len)
{
    *len = 0;
    if (r == STORE_NONE)
        return (const unsigned char *)"";
    return text_view(s, r, len);
}

bool store_text_eq(const struct store *s, store_ref a, store_ref b)
{
    if (a == b)
        return true;
    if (a == STORE_NONE || b == STORE_NONE)
        return false;
    const unsigned char *pa = at(s, a), *pb = at(s, b);
    if (*pa == TAG_UUID && *pb == TAG_UUID)
        return memcmp(pa + 1, pb + 1, 16) == 0;
    if (*pa != *pb)
        return false;
    size_t na = 0, nb = 0;
    const unsigned char *ta = text_view(s, a, &na), *tb = text_view(s, b, &nb);
    return na == nb && memcmp(ta, tb, na) == 0;
}

const char *store_reject_name(const struct store *s, uint16_t reject)
{
    return reject < s->n_rejects ? s->rejects[reject] : "?";
}

static uint16_t reject_index(struct store *s, const char *name)
{
    if (!name)
        return 0;
    for (uint16_t i = 1; i < s->n_rejects; i++)
        if (strcmp(s->rejects[i], name) == 0)
            return i;
    if (s->n_rejects >= sizeof s->rejects / sizeof *s->rejects)
        return 0;
    s->rejects[s->n_rejects] = xstrdup(name);
    return s->n_rejects++;
}

/* Where a record goes: line (NULL: m written anew), and when file is not 0, the record is
 * line, at offset in that file. */
struct where {
    const char *line;
    size_t len;
    unsigned file;
    uint64_t offset;
};

static enum status append(struct store *s, const struct message *m, const struct where *w,
                          int64_t now_ms, struct error *err);

enum status store_append(struct store *s, const struct message *m, int64_t now_ms,
                         struct error *err)
{
    struct where w = {0};
    return append(s, m, &w, now_ms, err);
}

enum status store_append_line(struct store *s, const struct message *m, const char *line,
                              size_t len, int64_t now_ms, struct error *err)
{
    struct where w = {.line = line, .len = len};
    return append(s, m, &w, now_ms, err);
}

unsigned store_file_add(struct store *s, int fd)
{
    struct stat st;
    if (s->n_files + 1 >= sizeof s->files / sizeof *s->files || fstat(fd, &st) != 0 ||
        !S_ISREG(st.st_mode))
        return 0;
    int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (copy < 0)
        return 0;
    s->files[++s->n_files] = copy;
    s->seen[s->n_files].size = st.st_size;
    s->seen[s->n_files].mtime = st.st_mtim;
    return s->n_files;
}

/* Whether file f is still the file its records were read from. It may have grown (a snapshot
 * still being written); written again in place (a shell's `>` onto it, an editor) it is not:
 * shorter than it was, or changed at the same size. The byte after a record is checked too
 * (record()), which a rewrite that grew it seldom leaves a newline. */
static enum status file_same(struct store *s, unsigned f, struct error *err)
{
    struct stat st;
    struct file_seen *w = &s->seen[f];
    if (fstat(s->files[f], &st) != 0)
        return error_set(err, ST_EIO, "cannot read a record back from its file: %s",
                         strerror(errno));
    bool same_time = st.st_mtim.tv_sec == w->mtime.tv_sec && st.st_mtim.tv_nsec == w->mtime.tv_nsec;
    if (st.st_size < w->size || (st.st_size == w->size && !same_time))
        return error_set(err, ST_EIO,
                         "the snapshot file was written again since dlqx read it (it is %s): "
                         "open it again to see what it holds now",
                         st.st_size < w->size ? "shorter" : "changed");
    w->size = st.st_size;
    w->mtime = st.st_mtim;
    return ST_OK;
}

enum status store_append_at(struct store *s, const struct message *m, unsigned file,
                            uint64_t offset, const char *line, size_t len, int64_t now_ms,
                            struct error *err)
{
    struct where w = {.line = line, .len = len, .file = file, .offset = offset};
    if (file > s->n_files || len >= UINT32_MAX)
        w.file = 0;
    return append(s, m, &w, now_ms, err);
}

static void prep_text(struct strbuf *texts, struct store_prep *p, int k, const struct bytes *b)
{
    size_t n = b->len > STORE_TEXT_MAX - 1 ? STORE_TEXT_MAX - 1 : b->len;
    p->off[k] = (uint32_t)texts->len;
    p->len[k] = (uint32_t)n;
    sb_add(texts, (const char *)b->data, n);
}

/* store_prepare for an AceMQ message that needs no decode (decode.h: decode_index_acemq). */
static bool prepare_acemq(const struct message *m, int64_t now_ms, struct store_prep *p,
                          struct strbuf *texts)
{
    struct decoded_index x;
    if (!decode_index_acemq(m, now_ms, &x))
        return false;
    memset(p, 0, sizeof *p);
    prep_text(texts, p, SP_ID, &x.id);
    prep_text(texts, p, SP_TYPE, &x.type);
    p->correlation_is_id = bytes_eq(&x.correlation_id, &x.id);
    if (!p->correlation_is_id)
        prep_text(texts, p, SP_CORRELATION, &x.correlation_id);
    prep_text(texts, p, SP_CAUSATION, &x.causation_id);
    prep_text(texts, p, SP_QUEUE, &m->queue);
    prep_text(texts, p, SP_ERROR, &x.error);
    prep_text(texts, p, SP_ERROR_TYPE, &x.error_type);
    p->first_seen_ms = x.first_seen_ms;
    p->fetched_at_ms = m->fetched_at_ms;
    p->attempt = x.attempt > INT32_MAX ? INT32_MAX : (int32_t)x.attempt;
    p->body_size = m->body.len > UINT32_MAX ? UINT32_MAX : (uint32_t)m->body.len;
    p->dialect = (uint8_t)dialect_index(x.dialect);
    p->flags = (uint8_t)(SE_ACCEPTED | (m->redelivered ? SE_REDELIVERED : 0) |
                         (x.defaulted & ED_ID ? SE_ID_DEFAULTED : 0));
    return true;
}

void store_prepare(const struct message *m, int64_t now_ms, struct store_prep *p,
                   struct strbuf *texts)
{
    if (!prepare_acemq(m, now_ms, p, texts))
        store_prepare_decoded(m, now_ms, p, texts);
}

static bool prep_same(const struct store_prep *a, const char *ta, const struct store_prep *b,
                      const char *tb)
{
    for (int k = 0; k < SP_N; k++)
        if (a->len[k] != b->len[k] ||
            (a->len[k] && memcmp(ta + a->off[k], tb + b->off[k], a->len[k]) != 0))
            return false;
    bool reject =
        a->reject == b->reject || (a->reject && b->reject && strcmp(a->reject, b->reject) == 0);
    return reject && a->correlation_is_id == b->correlation_is_id && a->dialect == b->dialect &&
           a->flags == b->flags && a->attempt == b->attempt && a->body_size == b->body_size &&
           a->first_seen_ms == b->first_seen_ms && a->fetched_at_ms == b->fetched_at_ms &&
           a->dead_at_ms == b->dead_at_ms;
}

bool store_prepare_agrees(const struct message *m, int64_t now_ms)
{
    struct store_prep a, b;
    struct strbuf ta, tb;
    sb_init(&ta);
    sb_init(&tb);
    store_prepare(m, now_ms, &a, &ta);
    store_prepare_decoded(m, now_ms, &b, &tb);
    bool same = prep_same(&a, ta.buf, &b, tb.buf);
    sb_free(&ta);
    sb_free(&tb);
    return same;
}

void store_prepare_decoded(const struct message *m, int64_t now_ms, struct store_prep *p,
                           struct strbuf *texts)
{
    struct decoded d;
    decode_message_ex(m, now_ms, DECODE_NO_BODY, &d);
    memset(p, 0, sizeof *p);
    const struct envelope *env = d.env;
    prep_text(texts, p, SP_ID, &env->id);
    prep_text(texts, p, SP_TYPE, &env->type);
    p->correlation_is_id = bytes_eq(&env->correlation_id, &env->id);
    if (!p->correlation_is_id)
        prep_text(texts, p, SP_CORRELATION, &env->correlation_id);
    prep_text(texts, p, SP_CAUSATION, &env->causation_id);
    prep_text(texts, p, SP_QUEUE, &m->queue);
    prep_text(texts, p, SP_ERROR, &d.error);
    prep_text(texts, p, SP_ERROR_TYPE, &d.error_type);
    p->first_seen_ms = env->first_seen_ms;
    p->fetched_at_ms = m->fetched_at_ms;
    p->attempt = env->attempt > INT32_MAX ? INT32_MAX : (int32_t)env->attempt;
    p->body_size = m->body.len > UINT32_MAX ? UINT32_MAX : (uint32_t)m->body.len;
    p->dialect = (uint8_t)dialect_index(d.dialect);
    p->flags = (uint8_t)((d.accepted ? SE_ACCEPTED : 0) | (m->redelivered ? SE_REDELIVERED : 0) |
                         (d.error_from_broker ? SE_ERROR_FROM_BROKER : 0) |
                         (env->defaulted & ED_ID ? SE_ID_DEFAULTED : 0));
    p->reject = d.reject_reason;
    p->dead_at_ms = d.failed_at_ms;
    if (p->dead_at_ms)
        p->flags |= SE_DEAD_AT_KNOWN;
    decoded_free(&d);
}

/* The index entry of a prepared message, at s->n (not counted yet). */
static struct store_entry *put_entry(struct store *s, const struct store_prep *p, const char *texts,
                                     struct error *err)
{
    xgrow((void **)&s->e, &s->cap, s->n + 1, sizeof *s->e);
    struct store_entry *e = &s->e[s->n];
    memset(e, 0, sizeof *e);
#define TEXT(k) (const unsigned char *)(p->len[k] ? texts + p->off[k] : ""), p->len[k]
    e->id = arena_put(s, TEXT(SP_ID), err);
    e->type = intern(s, TEXT(SP_TYPE), err);
    e->correlation = p->correlation_is_id ? e->id : arena_put(s, TEXT(SP_CORRELATION), err);
    e->causation = arena_put(s, TEXT(SP_CAUSATION), err);
    e->queue = intern(s, TEXT(SP_QUEUE), err);
    e->error = intern(s, TEXT(SP_ERROR), err);
    e->error_type = intern(s, TEXT(SP_ERROR_TYPE), err);
#undef TEXT
    e->first_seen_ms = p->first_seen_ms;
    e->fetched_at_ms = p->fetched_at_ms;
    e->attempt = p->attempt;
    e->body_size = p->body_size;
    e->dialect = p->dialect;
    e->flags = p->flags;
    e->reject = reject_index(s, p->reject);
    e->dead_at_ms = p->dead_at_ms;
    return e;
}

enum status store_append_prepared(struct store *s, const struct store_prep *p, const char *texts,
                                  unsigned file, uint64_t offset, uint32_t len, struct error *err)
{
    if (!file || file > s->n_files || len == UINT32_MAX)
        return error_set(err, ST_EINVAL, "a prepared record must be in a file of the store");
    struct store_entry *e = put_entry(s, p, texts, err);
    if (s->full)
        return error_set(err, ST_ERANGE, "the snapshot store is full (4 GiB of ids and texts)");
    e->file = (uint8_t)file;
    e->offset = offset;
    e->length = len;
    s->n++;
    return ST_OK;
}

static enum status append(struct store *s, const struct message *m, const struct where *w,
                          int64_t now_ms, struct error *err)
{
    const char *line = w->line;
    size_t line_len = w->len;
    struct store_prep p;
    sb_reset(&s->texts);
    store_prepare(m, now_ms, &p, &s->texts);
    struct store_entry *e = put_entry(s, &p, s->texts.buf, err);
    if (s->full)
        return error_set(err, ST_ERANGE, "the snapshot store is full (4 GiB of ids and texts)");

    /* The record, lossless: where it is in its file, the line it was read from, or the
     * message written anew. */
    size_t before = s->mem.len;
    if (w->file) {
        e->file = (uint8_t)w->file;
        e->offset = w->offset;
        e->length = (uint32_t)line_len; /* without its newline */
    } else if (s->mem.len < s->budget) {
        if (line) {
            sb_add(&s->mem, line, line_len);
            sb_addc(&s->mem, '\n');
        } else {
            snapshot_format(m, &s->mem);
        }
        e->offset = before;
        e->length = (uint32_t)(s->mem.len - before);
    } else {
        struct strbuf rec;
        sb_init(&rec);
        if (line) {
            sb_add(&rec, line, line_len);
            sb_addc(&rec, '\n');
        } else {
            snapshot_format(m, &rec);
        }
        /* Appends only: the file position is the end unless a read moved it. */
        if ((s->spill_pos != s->spill_len &&
             fseeko(s->spill, (off_t)s->spill_len, SEEK_SET) != 0) ||
            fwrite(rec.buf, 1, rec.len, s->spill) != rec.len) {
            sb_free(&rec);
            return error_set(err, ST_EIO, "cannot write the store's temporary file: %s",
                             strerror(errno));
        }
        e->offset = s->spill_len;
        e->length = (uint32_t)rec.len;
        e->flags |= SE_IN_FILE;
        s->spill_len += rec.len;
        s->spill_pos = s->spill_len;
        sb_free(&rec);
    }
    s->n++;
    return ST_OK;
}

size_t store_count(const struct store *s)
{
    return s->n;
}

const struct store_entry *store_entry_at(const struct store *s, size_t i)
{
    return i < s->n ? &s->e[i] : NULL;
}

static enum status record(const struct store *s, const struct store_entry *e, struct strbuf *out,
                          struct error *err)
{
    sb_reset(out);
    if (e->file) {
        /* The bytes of the line as read, then the newline the record has in the store; the
         * byte after it in the file ends the line (a newline, a CR before one, or the end). */
        enum status fs = file_same((struct store *)(uintptr_t)s, e->file, err);
        if (fs != ST_OK)
            return fs;
        xgrow((void **)&out->buf, &out->cap, (size_t)e->length + 3, 1);
        size_t got = 0;
        while (got < (size_t)e->length + 1) {
            ssize_t n = pread(s->files[e->file], out->buf + got, e->length + 1 - got,
                              (off_t)(e->offset + got));
            if (n < 0 && errno == EINTR)
                continue;
            if (n == 0 && got == e->length)
                break; /* the last line, without a newline */
            if (n <= 0)
                return error_set(err, ST_EIO, "cannot read a record back from its file: %s",
                                 n < 0 ? strerror(errno) : "the file is shorter than it was");
            got += (size_t)n;
        }
        if (got > e->length && out->buf[e->length] != '\n' && out->buf[e->length] != '\r')
            return error_set(err, ST_EIO,
                             "the snapshot file was written again since dlqx read it (a record "
                             "no longer ends where it did): open it again to see what it holds "
                             "now");
        got = e->length;
        out->buf[got] = '\n';
        out->len = got + 1;
        out->buf[out->len] = '\0';
        return ST_OK;
    }
    if (!(e->flags & SE_IN_FILE)) {
        sb_add(out, s->mem.buf + e->offset, e->length);
        return ST_OK;
    }
    xgrow((void **)&out->buf, &out->cap, (size_t)e->length + 1, 1);
    struct store *ms = (struct store *)(uintptr_t)s;
    ms->spill_pos = UINT64_MAX; /* a read moves the position */
    if (fseeko(s->spill, (off_t)e->offset, SEEK_SET) != 0 ||
        fread(out->buf, 1, e->length, s->spill) != e->length)
        return error_set(err, ST_EIO, "cannot read the store's temporary file: %s",
                         strerror(errno ? errno : EIO));
    out->len = e->length;
    out->buf[out->len] = '\0';
    return ST_OK;
}

enum status store_get(const struct store *s, size_t i, struct message *out, struct error *err)
{
    /* On failure *out owns nothing (the explorer's callers keep no message then). */
    memset(out, 0, sizeof *out);
    if (i >= s->n)
        return error_set(err, ST_EINVAL, "no message %zu in the store", i);
    struct strbuf line;
    sb_init(&line);
    enum status st = record(s, &s->e[i], &line, err);
    if (st == ST_OK)
        st = snapshot_parse_line(line.buf, line.len ? line.len - 1 : 0, out, err);
    if (st != ST_OK) {
        message_free(out);
        memset(out, 0, sizeof *out);
    }
    sb_free(&line);
    return st;
}

enum status store_write(const struct store *s, FILE *f, struct error *err)
{
    struct strbuf line;
    sb_init(&line);
    for (size_t i = 0; i < s->n; i++) {
        enum status st = record(s, &s->e[i], &line, err);
        if (st != ST_OK) {
            sb_free(&line);
            return st;
        }
        if (fwrite(line.buf, 1, line.len, f) != line.len) {
            sb_free(&line);
            return error_set(err, ST_EIO, "write failed: %s", strerror(errno));
        }
    }
    sb_free(&line);
    return ST_OK;
}

size_t store_memory(const struct store *s)
{
    return s->cap * sizeof *s->e + s->arena_len + s->mem.cap +
           (s->types.mask + 1) * sizeof *s->types.slots;
}

uint64_t store_spilled(const struct store *s)
{
    return s->spill_len;
}
