/*
 * dialect: the one interface every framework's dead letters are read through.
 *
 * A dialect is one file (or one small folder) under src/dialects/ that exports one
 * `const struct dialect_ops dialect_NAME` and is registered in one table (dialect.c). Nothing
 * else in dlqx knows a framework: decode asks every dialect to recognise a message and lets
 * the most confident one read it; the JSON record, the detail view, the filter, the groups,
 * the tree and replay all go through struct decoded and these hooks. Adding a framework is a
 * new file and a line in the table — no switch anywhere else.
 *
 * The hooks, in the order a message meets them:
 *   recognise  how sure the dialect is that the message is its own: 0 (not mine) .. 100, and
 *              the header or property names that decided. The highest wins; a tie goes to the
 *              earlier entry in the table. Plain AMQP answers 1 for everything, so every
 *              message is read by someone. The scale: 90+ the framework's decisive failure-copy
 *              headers; 60-89 its own identity headers or body envelope without failure
 *              information; 30-59 weak hints (a queue name's suffix alone).
 *   decode     fills the neutral envelope (dialect_envelope), the neutral error fields, the
 *              failure time, where it goes back (source), the consumer's acceptance rule, what
 *              each neutral field was read from (read_from) and the dialect's own state
 *              (priv). It never fails: what cannot be read takes its default and says so
 *              (envelope.defaulted, and a DF_DEFAULTS note from `fields`).
 *   release    frees priv (NULL when the dialect keeps none).
 *   fields     the dialect's own fields, for the detail view and the JSON record: each with
 *              its label, its value and what it means (struct dfield). Called only when they
 *              are shown, so that loading a million messages does not build them.
 *   to_json    the dialect's own object in the decode record ("nservicebus": {…}); NULL: the
 *              object is made from `fields` (every field with a key).
 *   write_json to_json's object dumped (JSON_COMPACT), written straight into out; false
 *              when it cannot be sure of jansson's bytes (out is then cut back and to_json's
 *              tree dumped). NULL: to_json. Held to to_json by tests/test_decode_write.c.
 *   restamp    the replay and re-issue rules (restamp.h; a move is the same for every
 *              dialect and never reaches the dialect). restamp_kit.h has the common parts.
 *
 * The neutral fields a dialect fills (decode.h's struct decoded), with the framework's own
 * names in docs/dialects.md:
 *   env->id, type, version, correlation_id (the whole chain), causation_id (the direct
 *   cause), attempt, first_seen_ms, origin, headers (the application's own);
 *   error_type, error_message, stack_trace (empty: not known), error (TYPE: MESSAGE, or
 *   whichever is known; decode works it out from the broker's death when the dialect leaves
 *   it empty), failed_at_ms (0: decode takes the newest x-death time), source (empty: decode
 *   takes the first death's exchange and routing key), accepted and reject_reason.
 *
 * Ownership: the ops are static and live forever. Everything decode puts in struct decoded is
 * owned by it and freed by decoded_free (which calls release for priv). fields fills a list
 * the caller frees with dfields_free.
 */
#ifndef DLQX_DIALECT_H
#define DLQX_DIALECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "bytes.h"
#include "death.h"
#include "envelope.h"
#include "message.h"
#include "status.h"
#include "util.h"

struct decoded;
struct restamp_opts;
struct outgoing;

/* What a dialect is given to recognise and decode a message. Everything is borrowed. */
struct dialect_input {
    const struct message *msg;
    const void *body; /* the body's bytes; never NULL ("" when empty) */
    size_t body_len;
    const struct death_summary *death; /* the x-death history, already read */
    int64_t now_ms;
};

#define DIALECT_BY_MAX 6
/* What recognise answers besides its confidence: the names that decided (static strings: the
 * dialect's own literals, never message bytes). */
struct dialect_match {
    int confidence; /* 0..100 */
    const char *by[DIALECT_BY_MAX];
    int n_by;
};
/* Adds a name to m->by (ignored past DIALECT_BY_MAX). */
void dialect_match_by(struct dialect_match *m, const char *name);

/* ---- the dialect's own fields ------------------------------------------------------------- */

enum dfield_style { DF_VALUE, DF_ACCENT, DF_ERROR, DF_WARN, DF_DIM, DF_GOOD };
enum dfield_where {
    DF_DIALECT,  /* the dialect's own section of the detail view ("NServiceBus headers") */
    DF_DEATH,    /* the death history section: what the framework wrote when it gave up */
    DF_DEFAULTS, /* a note under the summary: why a neutral field took its default */
};

/* One field. label NULL: a line of text (the value) rather than label + value. key NULL: shown
 * in the detail only, not in the JSON object made from the fields. */
struct dfield {
    const char *key;   /* JSON key (static), snake_case; NULL: detail only */
    char *label;       /* owned; as shown in the detail */
    char *meaning;     /* owned; what it means, shown dim after the value; NULL: none */
    struct bytes text; /* owned; the value as text (raw message bytes: sanitised when drawn) */
    json_t *json;      /* owned; the value in the JSON object; NULL: text as a string (null
                          when text.data is NULL) */
    uint8_t style;     /* enum dfield_style */
    uint8_t where;     /* enum dfield_where */
    uint8_t indent;    /* nesting level: 0 top, 1 under the field before it, … */
    uint8_t label_w;   /* columns the label is padded to; 0: the section's default */
};

struct dfields {
    struct dfield *v;
    size_t n, cap;
};

/* Appends a field and returns it (for setting style, where, indent, json). label, meaning and
 * the value are copied; value may hold any bytes. */
struct dfield *dfields_add(struct dfields *f, const char *key, const char *label, const void *value,
                           size_t len, const char *meaning);
/* The same with a C-string value (NULL: the field is shown as "(absent)", dim, JSON null). */
struct dfield *dfields_adds(struct dfields *f, const char *key, const char *label,
                            const char *value, const char *meaning);
/* A header's value as a field: text as detail shows a scalar, JSON in the snapshot's typed
 * form. NULL value: "(absent)". */
struct dfield *dfields_add_hval(struct dfields *f, const char *key, const char *label,
                                const struct hval *value, const char *meaning);
/* An integer, and a time (epoch ms shown as RFC 3339 UTC, JSON the integer). */
struct dfield *dfields_add_int(struct dfields *f, const char *key, const char *label, int64_t v,
                               const char *meaning);
struct dfield *dfields_add_time(struct dfields *f, const char *key, const char *label, int64_t ms,
                                const char *meaning);
/* A yes/no value (JSON true/false). */
struct dfield *dfields_add_yes_no(struct dfields *f, const char *key, const char *label, bool v,
                                  const char *meaning);
/* An integer when there is one (has), else "(absent)" as dfields_adds shows NULL. */
struct dfield *dfields_add_int_opt(struct dfields *f, const char *key, const char *label, bool has,
                                   int64_t v, const char *meaning);
/* Bytes when there are any, else "(absent)": an empty value is shown as absent. */
struct dfield *dfields_add_nonempty(struct dfields *f, const char *key, const char *label,
                                    const struct bytes *b, const char *meaning);
/* A line of text in a section (label NULL), and a note on a defaulted field. */
struct dfield *dfields_add_line(struct dfields *f, enum dfield_where where, enum dfield_style style,
                                const char *text);
void dfields_free(struct dfields *f);
/* The fields with a key as one JSON object (a new reference). */
json_t *dfields_to_json(const struct dfields *f);

/* ---- the interface -------------------------------------------------------------------- */

struct dialect_ops {
    const char *name;    /* the `dialect` value in every output: "nservicebus" */
    const char *title;   /* as a person writes it: "NServiceBus" */
    const char *summary; /* what the dialect reads, one line for the detail view:
                            "NServiceBus fault copy (NServiceBus.* headers)" */
    const char *section; /* the title of its detail section: "NServiceBus headers" */
    int (*recognise)(const struct dialect_input *in, struct dialect_match *m);
    /* The most recognise ever answers (0: not said). A dialect whose ceiling cannot beat the
     * best answer so far is not asked: an AceMQ message (95) is not searched for the others'
     * headers and body shapes. dialect_recognise asserts every answer against it. */
    int ceiling;
    void (*decode)(const struct dialect_input *in, struct decoded *out);
    void (*release)(struct decoded *d);
    void (*fields)(const struct decoded *d, int64_t now_ms, struct dfields *out);
    json_t *(*to_json)(const struct decoded *d);
    bool (*write_json)(const struct decoded *d, struct strbuf *out);
    /* Builds the REPLAY or REISSUE copy (see restamp.h and restamp_kit.h). dlq is the queue
     * the dead letter is read from (never NULL; may be empty). */
    enum status (*restamp)(const struct decoded *d, const struct restamp_opts *o,
                           const struct bytes *dlq, struct outgoing *out, struct error *err);
    const char *replay_rule; /* one line: what a replay keeps, strips and adds, and where it
                                goes (shown in the plan and the detail) */
};

/* The table, in tie-break order. dialect_at(i) for i < dialect_count(); NULL beyond. */
size_t dialect_count(void);
const struct dialect_ops *dialect_at(size_t i);
/* The entry's index in the table (what the store keeps in a byte); 0 for NULL. */
size_t dialect_index(const struct dialect_ops *d);
/* By name (exact), or NULL. */
const struct dialect_ops *dialect_by_name(const char *name, size_t len);
/* "amqp, acemq, babelqueue, …": every name, for messages and help. Static. */
const char *dialect_names(void);

/* Asks every dialect; the winner and its match. Never NULL (plain AMQP answers everything). */
const struct dialect_ops *dialect_recognise(const struct dialect_input *in,
                                            struct dialect_match *m);

/* The table's entries. */
extern const struct dialect_ops dialect_amqp;
extern const struct dialect_ops dialect_acemq;
extern const struct dialect_ops dialect_babelqueue;
extern const struct dialect_ops dialect_celery;
extern const struct dialect_ops dialect_nservicebus;
extern const struct dialect_ops dialect_rebus;
extern const struct dialect_ops dialect_spring;
extern const struct dialect_ops dialect_cloudevents;
extern const struct dialect_ops dialect_masstransit;
extern const struct dialect_ops dialect_wolverine;

/* ---- helpers for decode hooks ------------------------------------------------------------ */

/* The stable stand-in id of a message that carries none: a name-based UUID (v5) of its
 * identity digest (SHA-256 of its headers' wire form, routing key and body), so that the same
 * message reads with the same id every time. New bytes the caller frees. */
struct bytes dialect_derived_id(const struct message *m);
struct bytes dialect_identity_digest(const struct message *m);
/* envelope_new(init) into out->env; when it refuses (it should not: dialects pass what they
 * read), a minimal envelope with the id and type alone, so that out->env is never NULL. */
void dialect_envelope(struct decoded *out, const struct envelope_init *init);
/* dialect_envelope with the application's own headers: a copy of m's headers less every one
 * framework(name, ctx) claims as the framework's (in->headers is left NULL). */
void dialect_envelope_app_headers(struct decoded *out, struct envelope_init *in,
                                  const struct message *m,
                                  bool (*framework)(const struct bytes *name, const void *ctx),
                                  const void *ctx);
/* The head of a .NET transport's fields (NServiceBus, Rebus): on a fault copy without x-death,
 * the note that the ENDPOINT endpoint itself moved it to the error queue; the stack trace
 * (when there is one) in the death section, with what it is (stack_meaning). */
void dialect_fault_copy_head(struct dfields *f, const struct decoded *d, bool fault_copy,
                             const char *endpoint, const char *stack_meaning);
/* Sets out->error_type / error_message / stack_trace (copies; NULL or empty: leave unset). */
void dialect_set_error(struct decoded *out, const void *type, size_t type_len, const void *message,
                       size_t message_len, const void *stack, size_t stack_len);
/* Where it goes back: the queue (default exchange, routing key = queue), or an exchange and
 * routing key. how: static text naming what it was read from ("NServiceBus.FailedQ"). */
void dialect_source_queue(struct decoded *out, const char *how, const void *queue, size_t n);
void dialect_source_route(struct decoded *out, const char *how, const void *queue, size_t qn,
                          const void *exchange, size_t en, const void *routing_key, size_t rn);
/* The id the .NET transports' way: a string header, else the message_id property, else the
 * derived id (ED_ID added to *defaulted; *owned holds it and the caller frees it after
 * dialect_envelope). Returns 0, 1 or 2: which one. */
int dialect_id_of(const struct message *m, const char *header, struct bytes *id,
                  struct bytes *owned, unsigned *defaulted);
/* The type the .NET transports' way: own (the framework's name, already cut from its
 * assembly) when not empty, else the type property, else "message" (ED_TYPE added). Returns
 * 0, 1 or 2: which one. */
int dialect_type_of(const struct message *m, struct bytes own, struct envelope_init *in);
/* The .NET transports' fault copy (NServiceBus, Rebus): either failure header with the id
 * header 95, without it 90; the id header alone 70 (the names that decided added to mt);
 * else 0 (the caller then looks for its header prefix). */
int dialect_recognise_fault_copy(const struct message *m, struct dialect_match *mt,
                                 const char *id_header, const char *fault_a, const char *fault_b);
/* The broker's deaths as the attempt where a framework writes none, else 1 (ED_ATTEMPT). */
void dialect_attempt_from_deaths(struct envelope_init *in, const struct death_summary *d);
/* When it was first seen, for a dialect whose framework writes no time: the broker's first
 * death, else when it was read, else now. */
int64_t dialect_first_seen_by_broker(const struct dialect_input *x);
/* The same with the timestamp property (seconds, when it fits in ms) first. True when it came
 * from the property (the others are defaults). */
bool dialect_first_seen_fallback(const struct dialect_input *x, int64_t *ms);
/* The type of a message whose framework names none: the routing key of its first death, else
 * its routing key, else "message" (static or borrowed from x). */
struct bytes dialect_type_by_route(const struct dialect_input *x);
/* in->type: own when it is not empty, else dialect_type_by_route (ED_TYPE added). */
void dialect_type_or_route(const struct dialect_input *x, const struct bytes *own,
                           struct envelope_init *in);
/* A line "NAME WHAT" added to a dialect's warnings (shown with its fields). */
void dialect_warn(struct strbuf *warnings, const char *name, const char *what);
/* "NAME is KIND, not a string: not read" for every name (NULL-terminated) the message has
 * with a value that is not a string. */
void dialect_warn_not_strings(const struct message *m, const char *const *names,
                              struct strbuf *warnings);
/* A header's value as text when it is a string (longstr or bytes); NULL otherwise. */
const struct bytes *dialect_header_text(const struct message *m, const char *name);
/* Whether the message has a header of that name (any kind). */
bool dialect_has_header(const struct message *m, const char *name);
/* A header read as an integer: any integer kind, or a decimal string; false otherwise. */
bool dialect_header_int(const struct message *m, const char *name, int64_t *out);

#endif
