/*
 * rebus_details: Rebus's rbs2-error-details header read back into its parts.
 *
 * Rebus writes "{Message}: {Details}" of the ExceptionInfo it hands the error handler
 * (rebus-org/Rebus: Rebus/Retry/PoisonQueues/DeadletterQueueErrorHandler.cs GetErrorDetails):
 * - after retries: Message "{N} unhandled exceptions", Details = each tracked failure as
 *   "{DateTimeOffset in the current culture}: {exception.ToString()}", joined by two line ends
 *   (Rebus/Retry/Simple/DefaultRetryStep.cs GetAggregateException, Rebus/Retry/ExceptionInfo.cs);
 * - a manual dead-letter: "{exception.Message}: {exception.ToString()}";
 * - auto-forward on exception: "Caught exception: {exception}" (AutoForwardOnException...);
 * - a forward: "{exception}" (ForwardTransportMessageStep).
 * The value may be cut short (ErrorDetailsHeaderMaxLength; Rebus.RabbitMq's 64 KiB per header).
 *
 * Offsets index the text given; nothing is copied. The text is untrusted: any bytes.
 */
#ifndef DLQX_REBUS_DETAILS_H
#define DLQX_REBUS_DETAILS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dotnet_text.h"

enum rebus_details_form {
    RD_EMPTY,     /* nothing there */
    RD_AGGREGATE, /* "N unhandled exceptions: time: exception…" */
    RD_MESSAGE,   /* "message: exception" (a manual dead-letter) */
    RD_CAUGHT,    /* "Caught exception: exception" */
    RD_EXCEPTION, /* "exception" alone */
    RD_TEXT,      /* none of these: free text */
};

struct rebus_failure {
    bool has_time;
    int64_t time_ms;
    size_t time_off, time_len;       /* the time as written (culture-dependent) */
    size_t details_off, details_len; /* exception.ToString() (or the free text) */
    bool has_exception;              /* details start with a .NET type name */
    struct dotnet_exception exc;     /* offsets into the whole text */
};

#define REBUS_MAX_FAILURES 32 /* more are counted, not kept */

struct rebus_details {
    enum rebus_details_form form;
    bool has_count;
    int64_t count; /* N of "N unhandled exceptions" */
    size_t n;      /* failures kept */
    size_t seen;   /* failures found (n <= seen) */
    struct rebus_failure f[REBUS_MAX_FAILURES];
    bool has_latest;
    int64_t latest_ms; /* the newest time of any failure */
};

void rebus_details_parse(const void *s, size_t n, struct rebus_details *out);
/* The failure whose exception names the error: the last one kept (the newest tracked
 * failure; a synthetic delivery-count failure comes first). NULL when there is none. */
const struct rebus_failure *rebus_details_last(const struct rebus_details *d);

#endif
