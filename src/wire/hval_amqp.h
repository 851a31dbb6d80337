/*
 * hval_amqp: conversion between dlqx's typed values and librabbitmq's field tables, and the
 * AMQP wire encoding of a table (through librabbitmq's own codec, so that what dlqx writes
 * is what the broker reads).
 *
 * Ownership: hval_from_amqp_* return values the caller owns (deep copies: the amqp_* input
 * may live in a connection's pool that is about to be recycled). htable_to_amqp allocates
 * the output table, its entries and their bytes in pool; it borrows nothing from t after it
 * returns.
 */
#ifndef DLQX_HVAL_AMQP_H
#define DLQX_HVAL_AMQP_H

#include <amqp.h>

#include "hval.h"
#include "message.h"
#include "status.h"

struct hval hval_from_amqp(const amqp_field_value_t *v);
struct htable *htable_from_amqp(const amqp_table_t *t);
void hval_to_amqp(const struct hval *v, amqp_pool_t *pool, amqp_field_value_t *out);
void htable_to_amqp(const struct htable *t, amqp_pool_t *pool, amqp_table_t *out);

/* A table in AMQP wire form (4-byte length prefix, then entries). */
enum status htable_decode_wire(const void *data, size_t len, struct htable **out,
                               struct error *err);
enum status htable_encode_wire(const struct htable *t, struct bytes *out, struct error *err);
/* One field value in wire form, as it follows its key in a table: the type octet, then the
 * value. hval_decode_wire refuses bytes after the value. */
enum status hval_encode_wire(const struct hval *v, struct bytes *out, struct error *err);
enum status hval_decode_wire(const void *data, size_t len, struct hval *out, struct error *err);

/* AMQP basic properties to and from the message model. Properties' bytes are copied. */
void props_from_amqp(const amqp_basic_properties_t *p, struct props *out, struct htable **headers,
                     bool *headers_present);
void props_to_amqp(const struct props *p, const struct htable *headers, bool headers_present,
                   amqp_pool_t *pool, amqp_basic_properties_t *out);

#endif
