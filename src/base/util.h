/*
 * util: allocation that cannot fail silently, growable string buffers and the clock.
 *
 * Allocation failure is not recoverable in dlqx: x*alloc print one line and exit with status
 * 71 (EX_OSERR, "out of memory" in the README's exit status). The CLI gives jansson the same
 * allocator, so that no parser sees a NULL it might not handle.
 * The clock honours DLQX_NOW (epoch milliseconds) so that tests see fixed ages.
 */
#ifndef DLQX_UTIL_H
#define DLQX_UTIL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t size);
void *xrealloc(void *p, size_t n);
/* Grows *p (holding *cap elements of elem bytes) to hold at least need elements. */
void xgrow(void **p, size_t *cap, size_t need, size_t elem);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growable byte buffer, always NUL-terminated after len. */
struct strbuf {
    char *buf;
    size_t len;
    size_t cap;
};

void sb_init(struct strbuf *sb);
void sb_free(struct strbuf *sb);
void sb_reset(struct strbuf *sb);
/* Room for n more bytes and the NUL after them (sb_add's slow path). */
void sb_grow(struct strbuf *sb, size_t n);
/* Inline: the writers call them for every token, and a literal's strlen folds away. */
static inline void sb_add(struct strbuf *sb, const void *data, size_t n)
{
    if (sb->cap - sb->len <= n)
        sb_grow(sb, n);
    if (n)
        memcpy(sb->buf + sb->len, data, n);
    sb->len += n;
    sb->buf[sb->len] = '\0';
}
static inline void sb_addc(struct strbuf *sb, char c)
{
    sb_add(sb, &c, 1);
}
static inline void sb_adds(struct strbuf *sb, const char *s)
{
    sb_add(sb, s, strlen(s));
}
void sb_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Hands the buffer to the caller (who frees it); sb is left empty. */
char *sb_detach(struct strbuf *sb, size_t *len);

/* Milliseconds since the epoch: DLQX_NOW when set to a valid integer, else the real clock. */
int64_t clock_now_ms(void);
/* Its two halves, for a loop that asks a clock per message: DLQX_NOW (true, *ms set) when it
 * is set to a valid integer; the real clock. */
bool clock_fixed_ms(int64_t *ms);
int64_t clock_real_ms(void);
/* Seconds on the monotonic clock: for durations and rates, never for dates. */
double clock_mono_s(void);

/* Formats epoch milliseconds as RFC 3339 UTC ("2026-02-03T04:05:06.789Z"; no fraction when
 * ms is a whole second and with_ms is false). out must hold 32 bytes. */
/* An RFC 3339 time and, when now_ms is not 0, how long ago ("… (1h56m ago)", "… (in 5s)"). */
#define TIME_AGO_MAX 104
void time_format_ago(int64_t ms, int64_t now_ms, char out[TIME_AGO_MAX]);
void time_format_rfc3339(int64_t ms, bool with_ms, char out[32]);
/* Parses RFC 3339 ("2026-02-03T04:05:06Z", fraction and numeric offset allowed) into epoch ms. */
bool time_parse_rfc3339(const char *s, size_t n, int64_t *ms);
/* "4.2s", "3m", "5h12m", "2d3h": a short human duration, for tables. out must hold 32 bytes. */
void duration_format(double seconds, char out[32]);

/* The hash tables' mixer (splitmix64's finaliser) and a seeded hash of n bytes built on it:
 * for in-memory tables seeded per process (groups, the tree, the tree view, keysets), never
 * for anything written down. */
static inline uint64_t hash_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}
uint64_t hash_bytes(const void *p, size_t n, uint64_t seed);

/* pthread_create with every signal blocked in the new thread: a helper thread (the journal's
 * committer, the explorer's loaders) never takes a SIGINT, SIGTERM, SIGHUP or SIGWINCH meant
 * for the thread that waits for them, whose wait it would then not interrupt. */
int thread_start_quiet(pthread_t *t, void *(*fn)(void *), void *arg);

#endif
