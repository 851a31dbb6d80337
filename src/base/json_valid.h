/*
 * json_valid: a fast, allocation-free check that a byte string is JSON jansson accepts.
 *
 * The contract is "sure or unsure", never "valid or invalid": json_surely_valid returns true
 * only when json_loadb(data, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, ...) would certainly
 * succeed, and false both for invalid input and for valid input it does not want to judge.
 * A false answer means "ask jansson", which decides and writes the error message (text, line,
 * column, position). So the fast path can only skip work, never change an answer.
 *
 * What it leaves to jansson, although RFC 8259 allows it (the rules there are jansson's own,
 * or those of strtod and json_int_t, and mimicking them is where a fast path goes wrong):
 *   - a \u escape of U+0000 (fine in a string with JSON_ALLOW_NUL, refused in an object key),
 *     and any \u escape in D800-DFFF (pairs are joined, lone halves refused);
 *   - a number with an exponent; an integer (no fraction) of more than 18 digits; a number
 *     with more than 300 digits before the point (integer and real overflow);
 *   - nesting deeper than JSON_VALID_MAX_DEPTH arrays and objects (jansson stops at 2048).
 * Everything else it answers as RFC 8259 does, which is as jansson does: whitespace is space,
 * tab, LF and CR only; one value of any kind, then only whitespace; no control byte in a
 * string; strict UTF-8 inside strings (so any byte 0x80 or above outside a string, a BOM
 * included, is refused). One difference, on the safe side: jansson 2.14 drops a raw NUL byte
 * that comes right after a number or a literal ("1\0" and "[true\0,2]" parse); this check
 * refuses every raw NUL, and jansson then accepts those as before.
 *
 * Iterative, with a fixed-size bit stack; reads only [data, data + len). data may be NULL
 * when len is 0.
 */
#ifndef DLQX_JSON_VALID_H
#define DLQX_JSON_VALID_H

#include <stdbool.h>
#include <stddef.h>

/* Nesting deeper than this is left to jansson. */
#define JSON_VALID_MAX_DEPTH 1000

/* True only when jansson would surely parse the bytes (JSON_DECODE_ANY | JSON_ALLOW_NUL);
 * false when they are not JSON or when it is not sure. */
bool json_surely_valid(const void *data, size_t len);

#endif
