/*
 * status: the one status enum of the core, its message table, and an error out-parameter
 * that carries the detail. Every core function that can fail returns enum status and, when
 * given a struct error, fills it with one sentence naming the cause and, where the cause is one
 * the user acts on (the broker unreachable, a login refused, a queue missing), its kind: each
 * kind of ERROR_KIND_LIST maps to one exit status of EXIT_LIST (exitcodes.h), so a command
 * exits with error_exit_code(err, ...) and no layer keeps a table of its own.
 */
#ifndef DLQX_STATUS_H
#define DLQX_STATUS_H

#include "exitcodes.h"

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

/* The kind of a failure and the exit status it means. ERRK_NONE: no kind (the caller picks
 * the exit status). */
#define ERROR_KIND_LIST(X)                                                                         \
    X(ERRK_NONE, EXIT_OK)                                                                          \
    X(ERRK_USAGE, EXIT_USAGE)                                                                      \
    X(ERRK_DATA, EXIT_DATAERR)                                                                     \
    X(ERRK_NOINPUT, EXIT_NOINPUT)                                                                  \
    X(ERRK_NOMEM, EXIT_OSERR)                                                                      \
    X(ERRK_IO, EXIT_IOERR)                                                                         \
    X(ERRK_UNREACHABLE, EXIT_UNREACHABLE)                                                          \
    X(ERRK_AUTH, EXIT_AUTH)                                                                        \
    X(ERRK_VHOST, EXIT_VHOST)                                                                      \
    X(ERRK_TLS, EXIT_TLS)                                                                          \
    X(ERRK_ACCESS, EXIT_ACCESS)                                                                    \
    X(ERRK_QUEUE_MISSING, EXIT_QUEUE_MISSING)                                                      \
    X(ERRK_LOST, EXIT_CONNECTION_LOST)                                                             \
    X(ERRK_PROTOCOL, EXIT_PROTOCOL)

enum error_kind {
#define X(kind, exit) kind,
    ERROR_KIND_LIST(X)
#undef X
};

struct error {
    enum status code;
    enum error_kind kind; /* ERRK_NONE unless the failing layer knows what it means */
    char msg[512];
};

/* The exit status of a kind (EXIT_OK for ERRK_NONE). */
int error_kind_exit(enum error_kind k);
/* The exit status err's kind means, or fallback when it has none. */
int error_exit_code(const struct error *err, int fallback);

const char *status_str(enum status s);
/* Sets err (when not NULL; its kind to ERRK_NONE) and returns code, so callers can
 * `return error_set(...)`. */
enum status error_set(struct error *err, enum status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void error_clear(struct error *err);
/* Sets err's kind (when err is not NULL) and returns code. */
enum status error_kind_set(struct error *err, enum status code, enum error_kind kind);

#endif
