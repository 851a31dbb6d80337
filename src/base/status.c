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
        err->msg[0] = '\0';
    }
}
