/*
 * cloudevents: CloudEvents on RabbitMQ (dialect `cloudevents`): binary mode with the
 * `cloudEvents_`, `cloudEvents:`, `ce_` or `ce-` prefixed headers, and structured mode
 * (`application/cloudevents+json`). The reader below is exported for the unit tests
 * (tests/test_dialect_cloudevents.c); the dialect itself is `dialect_cloudevents` (dialect.h).
 */
#ifndef DLQX_CLOUDEVENTS_H
#define DLQX_CLOUDEVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "message.h"
#include "traceparent.h"

enum ce_mode { CE_NONE, CE_BINARY, CE_STRUCTURED };

/* The binary-mode prefixes, in the order a tie is decided. */
enum ce_prefix {
    CE_PREFIX_AMQP,
    CE_PREFIX_AMQP_COLON,
    CE_PREFIX_KAFKA,
    CE_PREFIX_HTTP,
    CE_PREFIX_COUNT
};
const char *ce_prefix_name(enum ce_prefix p);

/* The context attributes the spec names (the rest are extensions). */
enum ce_attr {
    CE_ID,
    CE_SOURCE,
    CE_SPECVERSION,
    CE_TYPE, /* required */
    CE_SUBJECT,
    CE_DATACONTENTTYPE,
    CE_DATASCHEMA,
    CE_TIME,
    CE_ATTR_COUNT
};
const char *ce_attr_name(enum ce_attr a);

struct ce_value {
    bool present; /* the attribute is there, whatever its kind */
    bool text_ok; /* ... and reads as a UTF-8 string: text holds it */
    struct bytes text;
    const char *header; /* binary: the header's name (borrowed from the message) */
};

struct ce_event {
    enum ce_mode mode;
    enum ce_prefix prefix; /* binary mode */
    struct ce_value attr[CE_ATTR_COUNT];
    bool time_ok;
    int64_t time_ms;
    json_t *extensions;                    /* name -> value; never NULL after ce_read */
    char trace_id[TRACEPARENT_ID_LEN + 1]; /* "" unless the traceparent extension is valid */
    bool bad_name;                         /* an extension name that is not [a-z0-9] */
    const char *reject;                    /* static; NULL when its consumers would accept it */
    unsigned core_seen; /* binary: bit per required attribute found (1u << CE_ID, …) */
};

/* Which prefix holds the most required attributes, and how many (0: none); seen: their bits. */
size_t ce_binary_prefix(const struct htable *h, enum ce_prefix *best, unsigned *seen);
/* The header name of a required attribute under a prefix ("cloudEvents_id"): static. */
const char *ce_header_name(enum ce_prefix p, enum ce_attr a);

/* Whether a content type is application/cloudevents+json (case-insensitive, parameters
 * allowed). */
bool ce_structured_type(const struct bytes *content_type);

/* Recognition confidence: 80 for a structured event or a binary one with specversion and at
 * least three required attributes, 60 for two required attributes, else 0. */
int ce_recognise(const struct message *m, struct ce_event *ev);

/* Reads the event (after ce_recognise said it is one); fills attributes, extensions, time,
 * trace id and the acceptance verdict. ce_event_free releases it. */
void ce_read(const struct message *m, struct ce_event *ev);
void ce_event_free(struct ce_event *ev);

/* The span of the top-level member "id"'s value in a JSON object's text (what a structured
 * re-issue replaces); false when there is none or the text is not an object. Strings (with
 * their escapes) and nested values are skipped exactly; a key written with escapes ("\u0069d")
 * is not matched. */
bool ce_body_id_span(const unsigned char *s, size_t n, size_t *off, size_t *len);

#endif
