/*
 * babelqueue_dialect: BabelQueue behind the dialect interface (dialect.h). The envelope is
 * read by babelqueue.c exactly as the SDKs read it; babelqueue_dialect.c recognises and decodes
 * it and says what each field means; babelqueue_restamp.c holds its replay and re-issue rules
 * (byte-span edits of the body, so that nothing else in it changes).
 */
#ifndef DLQX_BABELQUEUE_DIALECT_H
#define DLQX_BABELQUEUE_DIALECT_H

#include "babelqueue.h"
#include "decode.h"

/* The parsed envelope of a message BabelQueue read; NULL for any other dialect. Borrowed. */
const struct bq_envelope *decoded_bq(const struct decoded *d);

/* The restamp hook (babelqueue_restamp.c). */
enum status bq_restamp(const struct decoded *d, const struct restamp_opts *o,
                       const struct bytes *dlq, struct outgoing *out, struct error *err);

#endif
