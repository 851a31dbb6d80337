/*
 * celery: Celery's task messages (protocol 2 headers, protocol 1 bodies) behind the dialect
 * interface (dialect.h; the rules are in docs/dialects.md, "celery"). The dialect itself is
 * `dialect_celery`; what is declared here is for its unit tests.
 */
#ifndef DLQX_CELERY_H
#define DLQX_CELERY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hval.h"

/* An ISO 8601 time as Python's isoformat() writes it ("2026-12-05T07:44:38.454028+00:00";
 * without an offset it is read as UTC, Celery's default) into epoch ms. */
bool celery_iso_ms(const void *s, size_t n, int64_t *ms);

/* The kinds py-amqp writes a value back in after reading it (what Celery's move sends): every
 * integer within ±2147483647 an int32 (I), beyond it L; a float a double; bytes a string;
 * arrays and tables recursively; everything else as it was. In place. */
void celery_pyamqp_kinds(struct htable *t);

#endif
