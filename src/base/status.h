/*
 * status: the one status enum of the core, its message table, and an error out-parameter
 * that carries the detail. Every core function that can fail returns enum status and, when
 * given a struct error, fills it with one sentence naming the cause.
 */
#ifndef DLQX_STATUS_H
#define DLQX_STATUS_H

#define STATUS_LIST(X)                                                                             \
    X(ST_OK, "ok")                                                                                 \
    X(ST_EINVAL, "invalid argument")                                                               \
    X(ST_EPARSE, "malformed input")                                                                \
    X(ST_ERESERVED, "reserved header name")                                                        \
    X(ST_ERANGE, "value out of range")                                                             \
    X(ST_EIO, "input/output error")                                                                \
    X(ST_ENOTFOUND, "not found")                                                                   \
    X(ST_EUNSUPPORTED, "unsupported")                                                              \
    X(ST_ENOMEM, "out of memory")

enum status {
#define X(e, msg) e,
    STATUS_LIST(X)
#undef X
};

struct error {
    enum status code;
    char msg[512];
};

const char *status_str(enum status s);
/* Sets err (when not NULL) and returns code, so callers can `return error_set(...)`. */
enum status error_set(struct error *err, enum status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void error_clear(struct error *err);

#endif
