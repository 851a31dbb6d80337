/*
 * status: messages for the status codes and the error out-parameter.
 */
#include "status.h"

#include <stdarg.h>
#include <stdio.h>

static const char *const status_msgs[] = {
#define X(e, msg) msg,
    STATUS_LIST(X)
#undef X
};

const char *status_str(enum status s)
{
    if ((unsigned)s < sizeof status_msgs / sizeof *status_msgs)
        return status_msgs[s];
    return "unknown status";
}

enum status error_set(struct error *err, enum status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        err->code = code;
        err->kind = ERRK_NONE;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

void error_clear(struct error *err)
{
    if (err) {
        err->code = ST_OK;
        err->kind = ERRK_NONE;
        err->msg[0] = '\0';
    }
}

enum status error_kind_set(struct error *err, enum status code, enum error_kind kind)
{
    if (err)
        err->kind = kind;
    return code;
}

int error_kind_exit(enum error_kind k)
{
    static const int exits[] = {
#define X(kind, exit) [kind] = exit,
        ERROR_KIND_LIST(X)
#undef X
    };
    return (unsigned)k < sizeof exits / sizeof *exits ? exits[k] : EXIT_PROTOCOL;
}

int error_exit_code(const struct error *err, int fallback)
{
    return err && err->kind != ERRK_NONE ? error_kind_exit(err->kind) : fallback;
}
