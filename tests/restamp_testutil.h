/*
 * What the restamp tests share (test_restamp.c, test_restamp_diff.c): dead letters to build,
 * one build of a copy checked to leave the dead letter untouched, and kind-exact checks.
 */
#ifndef DLQX_RESTAMP_TESTUTIL_H
#define DLQX_RESTAMP_TESTUTIL_H

#include "testutil.h"

#include <string.h>

#include "decode.h"
#include "restamp_diff.h"

#define NOW 1780000000123LL
#define NOW_RFC3339 "2026-05-28T20:26:40Z"

struct message *msg_new(const char *queue, const char *rk, const char *ct, const char *body);
void set_prop(struct message *m, enum prop_flag f, const char *v);
/* x-death as RabbitMQ writes it: one entry. */
struct hval xdeath(const char *queue, const char *exchange, const char *rk);

#define BQ_META                                                                                    \
    "\"meta\":{\"id\":\"m-1\",\"queue\":\"q\",\"lang\":\"go\",\"schema_version\":1,"               \
    "\"created_at\":1749132727000}"

struct message *acemq_simple(void);
struct message *bq_msg(const char *body);
struct message *plain_msg(void);

struct run {
    struct message *m, *orig;
    struct decoded d;
    const struct envelope *env;
    struct outgoing out;
    struct error err;
    enum status st;
};

/* Decodes m (taken), builds the copy, and checks the dead letter and its envelope are
 * untouched. */
enum status run(struct run *r, struct message *m, const struct restamp_opts *o);
void run_free(struct run *r);

#define assert_ok(r)                                                                               \
    do {                                                                                           \
        if ((r)->st != ST_OK)                                                                      \
            fail_msg("restamp failed: %s: %s", status_str((r)->st), (r)->err.msg);                 \
    } while (0)

#define assert_bytes(b, str)                                                                       \
    do {                                                                                           \
        const struct bytes *b_ = (b);                                                              \
        if (!bytes_eq_cstr(b_, (str)))                                                             \
            fail_msg("%s is \"%.*s\", not \"%s\"", #b, (int)b_->len,                               \
                     b_->data ? (const char *)b_->data : "", (str));                               \
    } while (0)

#define assert_contains(s, sub)                                                                    \
    do {                                                                                           \
        if (!strstr((s), (sub)))                                                                   \
            fail_msg("\"%s\" does not say \"%s\"", (s), (sub));                                    \
    } while (0)

struct hx {
    const char *name;
    struct hval v;
};

/* Exactly these headers, in this order, kind-exact. Frees the expected values. */
void assert_headers(const struct htable *t, struct hx *want, size_t n);

#define ASSERT_HEADERS(t, ...)                                                                     \
    do {                                                                                           \
        struct hx w_[] = {__VA_ARGS__};                                                            \
        assert_headers((t), w_, sizeof w_ / sizeof *w_);                                           \
    } while (0)

struct changes {
    struct env_change c[8];
    struct hval hv[8];
    size_t n;
};

void changes_parse(struct changes *cs, const char *const *specs);
void changes_free(struct changes *cs);
/* Builds with the one change spec, expecting status want and an error that says says. */
void expect_change(struct message *m, const char *spec, enum status want, const char *says);

#endif
