/*
 * detail: everything known about one message, as a document of plain lines — the summary of
 * its envelope with what each field means, the death history as a timeline, the replay
 * stamps, the pattern headers explained (routing slip, route, reply-to, traceparent), the
 * AMQP properties and delivery, every header with its AMQP kind, the dialect's own section
 * (from its fields: dialect.h), and the body rendered by content type.
 *
 * A model, not a widget (docs/style.md: models never call curses): each line is text that is
 * already SANITIZED (valid UTF-8, no control character, no bidi override: what came from the
 * message is shown as visible escapes), a style, an indent and the section it belongs to, so
 * that the detail view only paints it and tests compare it as text.
 *
 * Ownership: detail_render fills a doc the caller releases with detail_doc_free. The decoded
 * message and the message are borrowed for the call only; the doc keeps nothing of them.
 * Nothing here fails: what cannot be read is shown as such.
 *
 * Split over four files: detail.c (the document, wrapping, the body), detail_summary.c (the
 * summary), detail_history.c (deaths, the dialect's death fields, replay stamps, the
 * dialect's section)
 * and detail_headers.c (pattern headers, properties, headers).
 */
#ifndef DLQX_DETAIL_H
#define DLQX_DETAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bytes.h"
#include "decode.h"
#include "message.h"
#include "util.h"

enum detail_style {
    DS_NORMAL,
    DS_TITLE,  /* a section's title */
    DS_LABEL,  /* a field's name */
    DS_VALUE,  /* a field's value */
    DS_DIM,    /* what a field means; secondary text */
    DS_ERROR,  /* errors, rejections */
    DS_WARN,   /* what could not be read, defaults, oddities */
    DS_ACCENT, /* ids, times, emphasis */
    DS_GOOD,   /* accepted */
    DS_COUNT
};

/* The sections, in the order they appear; a line's section is its fold key. */
enum detail_section {
    DSEC_SUMMARY,
    DSEC_DEATH,
    DSEC_REPLAY,
    DSEC_PATTERNS,
    DSEC_PROPERTIES,
    DSEC_HEADERS,
    DSEC_DIALECT, /* the dialect's own section, titled by it ("BabelQueue envelope") */
    DSEC_BODY,
    DSEC_COUNT
};

/* "Summary", "Death history", …: the section's title. */
const char *detail_section_title(enum detail_section s);

enum detail_flags {
    DETAIL_BODY_RAW = 1u << 0,       /* JSON as received rather than re-indented */
    DETAIL_BODY_HEX = 1u << 1,       /* the body as a hexdump, whatever it is */
    DETAIL_ASCII = 1u << 2,          /* pure ASCII output (SAN_ASCII, ASCII glyphs) */
    DETAIL_AS_OF_SNAPSHOT = 1u << 3, /* now_ms is when the snapshot was read, not now */
};

#define DETAIL_WRAP_DEFAULT 100
#define DETAIL_BODY_LIMIT (256u * 1024u)
/* A wrapped value stops after this many lines ("… N more bytes"). */
#define DETAIL_VALUE_LINES_MAX 32

/* A run of a line's text drawn in its own style (byte offsets into text). */
struct detail_span {
    uint32_t start, len;
    enum detail_style style;
};

#define DETAIL_MAX_SPANS 4

struct detail_line {
    char *text; /* owned; sanitized UTF-8, one line, NUL-terminated */
    size_t len;
    enum detail_style style; /* of the text outside the spans */
    int indent;              /* columns of blank before the text (not in text) */
    enum detail_section section;
    bool heading; /* the section's title line: the handle that folds the section */
    uint8_t n_spans;
    struct detail_span spans[DETAIL_MAX_SPANS];
};

struct detail_doc {
    struct detail_line *lines; /* owned */
    size_t n, cap;
    /* How it is being built (set by detail_render; read by the section renderers). */
    int wrap;       /* columns a line is wrapped at (indent included); 0: never wrapped */
    unsigned flags; /* enum detail_flags */
    enum detail_section section;  /* the section lines are added to */
    const struct dfields *fields; /* the dialect's fields, while detail_render runs */
};

struct detail_opts {
    int wrap;          /* columns, indent included; 0: DETAIL_WRAP_DEFAULT; < 0: no wrapping */
    size_t body_limit; /* body bytes shown; 0: DETAIL_BODY_LIMIT */
};

/* Renders every section of d (decoded from m, which d->msg also points at) into *out, which
 * is overwritten (not freed first). now_ms gives ages. flags: enum detail_flags. */
void detail_render(const struct decoded *d, const struct message *m, int64_t now_ms, unsigned flags,
                   struct detail_doc *out);
/* The same with a wrap width and a body limit (opts may be NULL: the defaults). */
void detail_render_opts(const struct decoded *d, const struct message *m, int64_t now_ms,
                        unsigned flags, const struct detail_opts *opts, struct detail_doc *out);
/* Releases the lines and clears *doc. Safe on a zeroed doc. */
void detail_doc_free(struct detail_doc *doc);

/* The doc as plain text: each line as its indent in spaces, its text and a newline. */
void detail_to_text(const struct detail_doc *doc, struct strbuf *out);

/* The index of a section's title line, or doc->n when the doc has no such section. */
size_t detail_section_first(const struct detail_doc *doc, enum detail_section s);
/* Whether needle (any bytes; compared ASCII-case-insensitively) occurs in the line's text. */
bool detail_line_matches(const struct detail_line *l, const char *needle);
/* The byte offset in the safe text s (len bytes) after skipping cols display columns; a wide
 * character straddling the edge is skipped whole. *skipped (may be NULL) gets the columns
 * actually skipped (cols, or cols + 1 for a straddling wide character). */
size_t detail_skip_columns(const char *s, size_t len, size_t cols, size_t *skipped);

/* ---- building a doc (the section renderers; usable by any other renderer) -------------- */

/* Starts a section: a blank line (unless it is the first line) and its title. */
void detail_heading(struct detail_doc *doc, enum detail_section s);
/* The same with a title of the caller's (static or lasting as long as the doc is built). */
void detail_heading_titled(struct detail_doc *doc, enum detail_section s, const char *title);

/* label  [tag]  value  meaning: a field. The label and the value come from anywhere and are
 * sanitized here; the value is wrapped at doc->wrap with its continuation lines under it,
 * at most DETAIL_VALUE_LINES_MAX lines. tag and meaning are the program's own text. */
struct detail_kv {
    const void *label;
    size_t label_len; /* SIZE_MAX: label is a C string */
    int label_w;      /* the label is padded to this many columns */
    const char *tag;  /* shown dim between label and value, padded to tag_w; NULL: none */
    int tag_w;
    const void *value;
    size_t value_len;        /* SIZE_MAX: value is a C string */
    enum detail_style style; /* of the value */
    const char *meaning;     /* shown dim after the value; NULL: none */
};
void detail_add_kv(struct detail_doc *doc, int indent, const struct detail_kv *kv);
/* A field from C strings: label value, then meaning (may be NULL). */
void detail_add_field(struct detail_doc *doc, int indent, int label_w, const char *label,
                      const char *value, enum detail_style style, const char *meaning);
/* A field whose value is any bytes. */
void detail_add_fieldb(struct detail_doc *doc, int indent, int label_w, const char *label,
                       const void *value, size_t len, enum detail_style style, const char *meaning);
/* Any bytes as a line of one style, sanitized and wrapped (continuation indented by 2). */
void detail_add_text(struct detail_doc *doc, int indent, enum detail_style style, const void *data,
                     size_t len);
/* The same, formatted (the result is sanitized too, so arguments may be message bytes that
 * hold no NUL). */
void detail_add_textf(struct detail_doc *doc, int indent, enum detail_style style, const char *fmt,
                      ...) __attribute__((format(printf, 4, 5)));
/* An already safe line as it is: no wrapping, no sanitizing. For the body's lines. */
void detail_add_safe(struct detail_doc *doc, int indent, enum detail_style style, const char *safe,
                     size_t len);

/* Glyphs in UTF-8, or ASCII with DETAIL_ASCII: "×"/"x", "→"/"->", "✓"/"+", "…"/"...". */
const char *detail_glyph_times(const struct detail_doc *doc);
const char *detail_glyph_arrow(const struct detail_doc *doc);
const char *detail_glyph_done(const struct detail_doc *doc);
const char *detail_glyph_more(const struct detail_doc *doc);

/* An RFC 3339 time and, when now_ms is not 0, how long ago ("… (1h56m ago)"). */
#define DETAIL_TIME_MAX 104
void detail_time(int64_t ms, int64_t now_ms, char out[DETAIL_TIME_MAX]);

/* ---- the sections one at a time (detail_render calls them in this order) -------------- */

void detail_render_summary(struct detail_doc *doc, const struct decoded *d, int64_t now_ms);
void detail_render_death(struct detail_doc *doc, const struct decoded *d, int64_t now_ms);
void detail_render_replay(struct detail_doc *doc, const struct decoded *d, int64_t now_ms);
void detail_render_patterns(struct detail_doc *doc, const struct message *m, int64_t now_ms);
void detail_render_properties(struct detail_doc *doc, const struct message *m);
void detail_render_headers(struct detail_doc *doc, const struct decoded *d);
void detail_render_dialect(struct detail_doc *doc, const struct decoded *d);
/* The dialect's fields of one kind (doc->fields), each at indent + 2 per nesting level, labels
 * padded to label_w (14 when nested); returns how many were drawn. */
size_t detail_render_fields(struct detail_doc *doc, const struct decoded *d,
                            enum dfield_where where, int indent, int label_w);
void detail_render_body(struct detail_doc *doc, const struct decoded *d, size_t limit);

/* ---- pattern headers, parsed ------------------------------------------------------------ */

/* A W3C traceparent: version-traceid-parentid-flags (lowercase hex). */
struct traceparent {
    bool valid;
    char version[3], trace_id[33], parent_id[17], flags[3];
    bool sampled; /* flags bit 0 */
    char why[96]; /* when not valid: which rule it breaks */
};
/* Parses s (any bytes). Returns out->valid. */
bool detail_traceparent_parse(const void *s, size_t n, struct traceparent *out);

/* One step of an AceMQ routing slip. Strings are owned; empty when absent. */
struct slip_step {
    struct bytes name, exchange, routing_key;
    struct bytes completed_at; /* "done" steps: completedAt as written (text or a number) */
    bool has_completed_ms;
    int64_t completed_ms; /* completedAt read as RFC 3339 or epoch ms */
};

/* acemq-routing-slip: {"steps": [pending…], "done": [completed…]}. */
struct routing_slip {
    bool valid;
    struct slip_step *steps; /* the steps still to go, the next one first (owned) */
    size_t n_steps;
    struct slip_step *done; /* the steps done, oldest first (owned) */
    size_t n_done;
    char why[200]; /* when not valid: what is wrong (may quote the value: sanitize) */
};
/* Parses s (any bytes). Returns out->valid; release out with detail_slip_free either way. */
bool detail_slip_parse(const void *s, size_t n, struct routing_slip *out);
void detail_slip_free(struct routing_slip *slip);

#endif
