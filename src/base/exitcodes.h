/*
 * exitcodes: the one table of dlqx's exit statuses — every command's, the explorer's and the
 * allocators' — with each status's name, number and meaning. The man page (docs/dlqx.1, EXIT
 * STATUS) and the README list the same numbers; tests/test_exitcodes.c checks both ways.
 *
 * Nothing here allocates: exit_code_name and exit_code_meaning return static strings.
 */
#ifndef DLQX_EXITCODES_H
#define DLQX_EXITCODES_H

#define EXIT_LIST(X)                                                                               \
    X(EXIT_OK, 0, "success")                                                                       \
    X(EXIT_NOMATCH, 1, "tree --of found no message or cause with that id")                         \
    X(EXIT_USAGE, 2, "usage error; for the explorer also no terminal it can draw on")              \
    X(EXIT_PENDING, 3, "journal: intents without an outcome (possible duplicates)")                \
    X(EXIT_UNREACHABLE, 10, "the broker cannot be reached")                                        \
    X(EXIT_AUTH, 11, "the broker refused the login")                                               \
    X(EXIT_VHOST, 12, "the virtual host does not exist or may not be used")                        \
    X(EXIT_TLS, 13, "a TLS error")                                                                 \
    X(EXIT_ACCESS, 14, "access refused")                                                           \
    X(EXIT_QUEUE_MISSING, 15, "the queue does not exist")                                          \
    X(EXIT_PEEK_REFUSED, 16, "the peek stopped at the quorum delivery limit")                      \
    X(EXIT_CONNECTION_LOST, 17, "the connection was lost")                                         \
    X(EXIT_INCOMPLETE, 18, "the snapshot is incomplete")                                           \
    X(EXIT_PROTOCOL, 19, "another protocol error")                                                 \
    X(EXIT_KEPT, 20, "some selected dead letters were kept")                                       \
    X(EXIT_UNKNOWN, 21, "some outcomes are unknown, or pending intents stopped the pass")          \
    X(EXIT_CANARY, 22, "the canary came back to the dead-letter queue")                            \
    X(EXIT_READ_ONLY, 23, "the connection is read-only: nothing was written")                      \
    X(EXIT_DECLINED, 24, "declined at the confirmation")                                           \
    X(EXIT_DATAERR, 65, "one or more records were malformed and skipped")                          \
    X(EXIT_NOINPUT, 66, "an input file could not be opened")                                       \
    X(EXIT_OSERR, 71, "out of memory")                                                             \
    X(EXIT_IOERR, 74, "a read or write failed")

enum exit_code {
#define X(name, number, meaning) name = number,
    EXIT_LIST(X)
#undef X
};

/* The name ("EXIT_USAGE") and meaning of an exit status, or NULL for a number not in the
 * table. Static strings. */
const char *exit_code_name(int code);
const char *exit_code_meaning(int code);

#endif
