/*
 * dotnet_text: the .NET texts NServiceBus and Rebus put in headers — their times and
 * Exception.ToString() — read the way those frameworks (and .NET) write them.
 *
 * Every reader takes bytes that came off a message (untrusted: any length, any bytes) and
 * never reads past n. Times come out as epoch milliseconds (fractions below a millisecond are
 * truncated toward the past).
 */
#ifndef DLQX_DOTNET_TEXT_H
#define DLQX_DOTNET_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether y-m-d is a date of the proleptic Gregorian calendar, years 1..9999 (.NET's range). */
bool dotnet_date_valid(int y, int m, int d);
/* Days from 1970-01-01 to y-m-d (a valid date). */
int64_t dotnet_days_from_civil(int y, int m, int d);

/* NServiceBus's wire time, "yyyy-MM-dd HH:mm:ss:ffffff Z" (DateTimeOffsetHelper): exactly 28
 * bytes, a digit in every digit place, fields in range. Like NServiceBus's own parser, the
 * separators are not looked at ("2020-10-31 13,59,25,359877 Z" reads). */
bool nsb_wire_time_parse(const void *s, size_t n, int64_t *ms);
/* The same format back (for tests and replay stamps); out must hold 29 bytes. */
void nsb_wire_time_format(int64_t ms, char out[29]);

/* A DateTimeOffset written with the round-trip format "O": 2026-01-02T05:40:11.2501253+01:00
 * (0 to 7 fraction digits; "Z" for a UTC DateTime). *offset_min gets the offset in minutes
 * (0 for Z); |offset| <= 14:00, as .NET allows. */
bool dotnet_roundtrip_parse(const void *s, size_t n, int64_t *ms, int *offset_min);

/* A DateTimeOffset written with ToString() in some culture, at the start of s: the date
 * (M/d/yyyy, dd/MM/yyyy, dd.MM.yyyy, d-M-yyyy, yyyy-MM-dd, yyyy/MM/dd), the time (H:mm:ss, with
 * AM/PM after a space, no-break space or narrow no-break space), then " +hh:mm". With slashes
 * the order is ambiguous: month first (the invariant culture and en-US) unless the first number
 * is above 12. *used gets the bytes read. */
bool dotnet_culture_time_parse(const void *s, size_t n, int64_t *ms, size_t *used);

/* Exception.ToString(): "Type: Message" then, on later lines, " ---> inner", "   at frame",
 * "   --- End of inner exception stack trace ---". The type is the first token when it looks
 * like a .NET type name (a "(0x80131904)" / "(111)" code after it is skipped); the message
 * runs to the first line that starts " ---> " or three spaces and a non-space (a stack frame
 * in any culture: "   at", "   bei", "   à"), without the line end before it. False when the
 * text does not start with a type name; type and message are offsets into s. */
struct dotnet_exception {
    size_t type_off, type_len;
    size_t msg_off, msg_len;
};
bool dotnet_exception_parse(const void *s, size_t n, struct dotnet_exception *out);

#endif
