/*
 * journal_line: the two records a bulk pass writes for every message — its intent and its
 * outcome — written as text straight into a buffer, without a jansson tree. Built as a tree
 * and dumped (journal.c's record_new and emit), they cost a bulk replay 50,000 instructions a
 * message of its client's ~200,000 (callgrind, 2026-12-07): 15 allocations, the dump, the
 * frees. The bytes are the tree's, member for member and in the same order (the tree keeps
 * its members' insertion order, jansson >= 2.8): test_journal_line compares the two writers
 * on every shape of record, ids of any bytes included. A record this writer does not take
 * (an intent with a diff tree; one longer than a reader accepts, whose diff is dropped) goes
 * through the tree as before.
 */
#include <string.h>

#include <jansson.h>

#include "bytes.h"
#include "journal.h"
#include "journal_file.h"
#include "json_out.h"
#include "util.h"

/* A string literal appended (its length counted by the compiler). */
#define LIT(sb, s) sb_add((sb), (s), sizeof(s) - 1)

/* journal_string_json's choice, written: the bytes as a JSON string when they are valid UTF-8
 * without NUL, else {"base64":"..."}; NULL data with len 0 is "". */
static void jl_string(struct strbuf *sb, const void *data, size_t len)
{
    if (!len) {
        LIT(sb, "\"\"");
        return;
    }
    if (utf8_valid(data, len) && !memchr(data, '\0', len) && json_out_string(sb, data, len))
        return;
    char *b64 = base64_encode(data, len);
    LIT(sb, "{\"base64\":");
    json_out_string(sb, b64, strlen(b64)); /* ASCII: never declined */
    sb_addc(sb, '}');
    free(b64);
}

/* ,"key": — the keys are this file's own lower-case ASCII names, which JSON writes as they
 * are. */
static void jl_key(struct strbuf *sb, const char *key)
{
    LIT(sb, ",\"");
    sb_adds(sb, key);
    LIT(sb, "\":");
}

/* ,"key": then the string (a NULL s writes nothing, as journal.c's set_str). */
static void jl_member_str(struct strbuf *sb, const char *key, const char *s)
{
    if (!s)
        return;
    jl_key(sb, key);
    jl_string(sb, s, strlen(s));
}

static void jl_member_u64(struct strbuf *sb, const char *key, uint64_t v)
{
    jl_key(sb, key);
    json_out_integer(sb, v > (uint64_t)INT64_MAX ? INT64_MAX : (long long)v);
}

/* {"v":1,"kind":KIND,"at":AT,"run":RUN — the members every record starts with. */
static void jl_start(struct strbuf *sb, const char *kind, const char *at, const char *run_id)
{
    LIT(sb, "{\"v\":");
    json_out_integer(sb, JOURNAL_LINE_VERSION);
    jl_member_str(sb, "kind", kind);
    jl_member_str(sb, "at", at);
    jl_member_str(sb, "run", run_id);
}

char *journal_intent_line(const struct journal_intent *in, const char *at, size_t *len)
{
    if (in->diff)
        return NULL;
    struct strbuf sb;
    sb_init(&sb);
    sb_grow(&sb, 512 + (in->diff_text ? in->diff_text_len : 0)); /* one allocation, mostly */
    jl_start(&sb, "intent", at, in->run_id);
    jl_member_u64(&sb, "seq", in->seq);
    jl_member_str(&sb, "op", in->op);
    jl_member_str(&sb, "source", in->source);
    if (in->exchange) {
        LIT(&sb, ",\"target\":{\"exchange\":");
        jl_string(&sb, in->exchange, strlen(in->exchange));
        LIT(&sb, ",\"routing_key\":");
        jl_string(&sb, in->routing_key ? in->routing_key : "",
                  in->routing_key ? strlen(in->routing_key) : 0);
        sb_addc(&sb, '}');
    }
    if (in->old_id) {
        LIT(&sb, ",\"old_id\":");
        jl_string(&sb, in->old_id, in->old_id_len);
    }
    if (in->new_id) {
        LIT(&sb, ",\"new_id\":");
        jl_string(&sb, in->new_id, in->new_id_len);
    }
    jl_member_str(&sb, "old_sha256", in->old_sha256);
    jl_member_str(&sb, "new_sha256", in->new_sha256);
    if (in->attempt > 1)
        jl_member_u64(&sb, "attempt", in->attempt);
    if (in->diff_text && in->diff_text_len) {
        LIT(&sb, ",\"diff\":");
        sb_add(&sb, in->diff_text, in->diff_text_len);
    }
    LIT(&sb, "}\n");
    if (sb.len > JOURNAL_MAX_LINE) {
        sb_free(&sb);
        return NULL;
    }
    return sb_detach(&sb, len);
}

char *journal_outcome_line(const char *run_id, uint64_t seq, const char *result, const char *reason,
                           const char *at, size_t *len)
{
    struct strbuf sb;
    sb_init(&sb);
    sb_grow(&sb, 256 + (reason ? strlen(reason) : 0));
    jl_start(&sb, "outcome", at, run_id);
    jl_member_u64(&sb, "seq", seq);
    jl_member_str(&sb, "result", result);
    jl_member_str(&sb, "reason", reason);
    LIT(&sb, "}\n");
    if (sb.len > JOURNAL_MAX_LINE) {
        sb_free(&sb);
        return NULL;
    }
    return sb_detach(&sb, len);
}
