/*
 * spring: Spring AMQP and Spring Cloud Stream's rabbit binder (dialect `spring`).
 *
 * The helpers below are the dialect's parsers, exported for its unit tests
 * (tests/test_dialect_spring.c); the dialect itself is `dialect_spring` (dialect.h).
 */
#ifndef DLQX_SPRING_H
#define DLQX_SPRING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hval.h"

/* The most exception types one trace keeps (head first); past it the innermost still wins. */
#define SPRING_MAX_CHAIN 16
/* The longest text read as a Java class name. */
#define SPRING_MAX_TYPE 1024

struct spring_span {
    size_t off, len; /* into the parsed text */
};

/* What Throwable.printStackTrace's text says. Spans point into the text given. */
struct spring_trace {
    size_t ntypes;                              /* exception types found (<= SPRING_MAX_CHAIN) */
    size_t elided;                              /* causes past the limit, not kept (but the last) */
    struct spring_span types[SPRING_MAX_CHAIN]; /* head first; the last is the innermost cause */
    bool has_root_message;
    struct spring_span root_message; /* the innermost's message, its first line */
    bool truncated;                  /* the text does not end with a line end: it was cut */
};

/* Reads a stack trace: the head line's type, then every `Caused by: ` line at column 0 that
 * follows a frame line (a line starting with a tab) or another such cause line; a
 * `Caused by:` after a message line is part of that message. A type must be a Java class name
 * ([A-Za-z0-9_$.] and non-ASCII bytes, no empty segment, at most SPRING_MAX_TYPE bytes); a
 * cause line whose type is not one is skipped. Line ends \n or \r\n. */
void spring_trace_parse(const unsigned char *s, size_t n, struct spring_trace *out);

/* Whether s[0..n) is a Java class name as above. */
bool spring_java_type(const unsigned char *s, size_t n);

/* The RepublishMessageRecoverer's truncated message: it ends with `...`, is at least 100
 * bytes, and the trace holds its first 97 bytes followed by `...`. */
bool spring_message_truncated(const struct bytes *msg, const struct bytes *trace);

/* A header read as Spring's consumer reads it: text from a string or bytes value holding
 * UTF-8 (the Java client hands `x` over as byte[]); NULL otherwise. */
const struct bytes *spring_text(const struct hval *v);

/* `retry-count` as DefaultMessagePropertiesConverter reads it: any integer kind (a Number);
 * false for anything else (then Spring falls back to x-death's count). */
bool spring_retry_count(const struct hval *v, int64_t *out);

/* Spring Cloud Stream's DLQ name: `<queue>.dlq` whose queue is `<exchange>.<group>` for the
 * original (destination) exchange. Spans into dlq. */
bool spring_scs_dlq(const struct bytes *dlq, const struct bytes *orig_exchange,
                    struct spring_span *consumer_queue, struct spring_span *group);

#endif
