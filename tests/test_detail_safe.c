/*
 * detail_safe: what the message detail makes of values it cannot trust — the routing slip
 * and traceparent parsers with good and bad values, hostile records that must come out with
 * no control byte anywhere, and value wrapping (words, escapes, wide characters, widths).
 */
#include "detail_testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "detail.h"
#include "sanitize.h"
#include "snapshot.h"

/* ---- parsers ---------------------------------------------------------------------------- */

static void test_routing_slip_parse(void **state)
{
    (void)state;
    struct routing_slip s;
    const char *good = "{\"steps\":[{\"exchange\":\"x\",\"routingKey\":\"k\",\"name\":\"charge\"}],"
                       "\"done\":[{\"exchange\":\"\",\"routingKey\":\"v\",\"name\":\"validate\","
                       "\"completedAt\":\"2026-01-02T03:04:05Z\"},{\"name\":\"n\",\"completedAt\":"
                       "1767323045000}]}";
    assert_true(detail_slip_parse(good, strlen(good), &s));
    assert_int_equal(s.n_steps, 1);
    assert_int_equal(s.n_done, 2);
    assert_true(bytes_eq_cstr(&s.steps[0].name, "charge"));
    assert_true(bytes_eq_cstr(&s.steps[0].exchange, "x"));
    assert_true(bytes_eq_cstr(&s.steps[0].routing_key, "k"));
    assert_false(s.steps[0].has_completed_ms);
    assert_true(s.done[0].has_completed_ms);
    assert_int_equal(s.done[0].completed_ms, 1767323045000LL);
    assert_true(s.done[1].has_completed_ms);
    assert_int_equal(s.done[1].completed_ms, 1767323045000LL);
    assert_true(bytes_eq_cstr(&s.done[1].routing_key, ""));
    detail_slip_free(&s);

    /* Only steps, or only done, is a slip; so is a finished one. */
    assert_true(detail_slip_parse("{\"steps\":[]}", 12, &s));
    detail_slip_free(&s);
    assert_true(detail_slip_parse("{\"done\":[{\"name\":\"a\"}]}", 23, &s));
    assert_int_equal(s.n_done, 1);
    detail_slip_free(&s);

    static const struct {
        const char *in, *why;
    } bad[] = {
        {"not json", "not JSON: "},
        {"", "not JSON: "},
        {"[1,2]", "JSON but not an object"},
        {"{\"foo\":1}", "an object with neither \"steps\" nor \"done\""},
        {"{\"steps\":5}", "\"steps\" is not an array"},
        {"{\"steps\":[],\"done\":{}}", "\"done\" is not an array"},
        {"{\"steps\":[1]}", "steps[0] is not an object"},
        {"{\"done\":[{},\"x\"]}", "done[1] is not an object"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_false(detail_slip_parse(bad[i].in, strlen(bad[i].in), &s));
        assert_false(s.valid);
        if (strncmp(s.why, bad[i].why, strlen(bad[i].why)) != 0)
            fail_msg("%s: \"%s\", not \"%s\"", bad[i].in, s.why, bad[i].why);
        detail_slip_free(&s);
    }
    /* A NUL inside, and names of other types, are read without trouble. */
    assert_true(detail_slip_parse("{\"steps\":[{\"name\":7}]}\0junk", 22, &s));
    assert_true(bytes_eq_cstr(&s.steps[0].name, "7"));
    detail_slip_free(&s);
}

static void test_traceparent_parse(void **state)
{
    (void)state;
    struct traceparent tp;
    const char *ok = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    assert_true(detail_traceparent_parse(ok, strlen(ok), &tp));
    assert_string_equal(tp.version, "00");
    assert_string_equal(tp.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_string_equal(tp.parent_id, "00f067aa0ba902b7");
    assert_string_equal(tp.flags, "01");
    assert_true(tp.sampled);
    const char *unsampled = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-02";
    assert_true(detail_traceparent_parse(unsampled, strlen(unsampled), &tp));
    assert_false(tp.sampled);
    /* A later version may carry more fields. */
    const char *later = "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09-extra";
    assert_true(detail_traceparent_parse(later, strlen(later), &tp));
    assert_true(tp.sampled);

    static const struct {
        const char *in, *why;
    } bad[] = {
        {"", "0 characters, 55 expected"},
        {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", "52 characters, 55 expected"},
        {"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
         "the trace id is not 32 lowercase hex digits"},
        {"00-00000000000000000000000000000000-00f067aa0ba902b7-01", "the trace id is all zeros"},
        {"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "the parent id is all zeros"},
        {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902bz-01",
         "the parent id is not 16 lowercase hex digits"},
        {"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "version ff is forbidden"},
        {"0x-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
         "the version is not two lowercase hex digits"},
        {"00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
         "the fields are not separated by '-' at 2, 35 and 52"},
        {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
         "the flags are not two lowercase hex digits"},
        {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x",
         "version 00 is exactly 55 characters"},
        {"01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x",
         "the flags are followed by something other than '-'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_false(detail_traceparent_parse(bad[i].in, strlen(bad[i].in), &tp));
        if (strcmp(tp.why, bad[i].why) != 0)
            fail_msg("%s: \"%s\", not \"%s\"", bad[i].in, tp.why, bad[i].why);
    }
    assert_false(detail_traceparent_parse(NULL, 0, &tp));
}

/* ---- hostile records -------------------------------------------------------------------- */
static void test_hostile_records_are_safe(void **state)
{
    (void)state;
    struct sample s = load("snapshots/hostile.jsonl");
    assert_true(s.n >= 13);
    static const unsigned flag_sets[] = {0, DETAIL_BODY_RAW, DETAIL_BODY_HEX, DETAIL_ASCII,
                                         DETAIL_ASCII | DETAIL_BODY_HEX};
    for (size_t i = 0; i < s.n; i++) {
        struct decoded d;
        decode_message(&s.m[i], NOW, &d);
        for (size_t f = 0; f < sizeof flag_sets / sizeof *flag_sets; f++) {
            for (int wrap = -1; wrap <= 40; wrap += 41) {
                struct detail_doc doc;
                struct detail_opts opts = {wrap, 4096};
                detail_render_opts(&d, &s.m[i], NOW, flag_sets[f], &opts, &doc);
                assert_true(doc.n > 0);
                for (size_t k = 0; k < doc.n; k++)
                    assert_line_safe(&doc.lines[k], flag_sets[f] & DETAIL_ASCII, i);
                if (i == 0 && wrap < 0 && !(flag_sets[f] & DETAIL_ASCII)) {
                    /* ESC as \e, BEL as \x07, bidi overrides as \u{…}, CR LF as \r\n. */
                    assert_true(doc_has(&doc, "id-\\e[2J\\e[H\\e]0;pwned\\x07"));
                    assert_true(doc_has(&doc, "type\\e[31mred"));
                    assert_true(doc_has(&doc, "corr\\r\\nInjected: yes"));
                    assert_true(doc_has(&doc, "\\u{202e}evil\\u{202c}"));
                }
                if (i == 8 && wrap < 0 && !(flag_sets[f] & DETAIL_ASCII))
                    assert_true(doc_has(&doc, "\\u{202e}gnp.exe"));
                if (i == 2 && wrap < 0)
                    assert_true(doc_has(&doc, "\\xff\\xfe\\0id"));
                detail_doc_free(&doc);
            }
        }
        decoded_free(&d);
    }
    unload(&s);
}

/* ---- wrapping --------------------------------------------------------------------------- */

static void test_wrap_words(void **state)
{
    (void)state;
    struct detail_doc doc;
    memset(&doc, 0, sizeof doc);
    doc.wrap = 40;
    detail_add_field(&doc, 2, 8, "error",
                     "the quick brown fox jumps over the lazy dog and keeps on running far away",
                     DS_ERROR, "why");
    struct strbuf sb;
    sb_init(&sb);
    detail_to_text(&doc, &sb);
    assert_text(sb.buf, "  error     the quick brown fox jumps\n"
                        "            over the lazy dog and keeps\n"
                        "            on running far away   why\n");
    /* The first line carries the label, the value and their spans. */
    const struct detail_line *l = &doc.lines[0];
    assert_int_equal(l->n_spans, 2);
    assert_int_equal(l->spans[0].style, DS_LABEL);
    assert_int_equal(l->spans[1].style, DS_ERROR);
    assert_int_equal(doc.lines[1].indent, 12);
    assert_int_equal(doc.lines[2].spans[1].style, DS_DIM);
    sb_free(&sb);
    detail_doc_free(&doc);

    /* A meaning that does not fit goes under the value, wrapped too. */
    doc.wrap = 30;
    detail_add_field(&doc, 0, 4, "k", "0123456789012345678901", DS_VALUE,
                     "a meaning that is longer than the room");
    sb_init(&sb);
    detail_to_text(&doc, &sb);
    assert_text(sb.buf, "k     0123456789012345678901\n"
                        "      a meaning that is longer\n"
                        "      than the room\n");
    sb_free(&sb);
    detail_doc_free(&doc);
}

/* No line is wider than the wrap width; no escape or character is cut in two. */
static void test_wrap_escapes_and_wide(void **state)
{
    (void)state;
    struct strbuf v;
    sb_init(&v);
    for (int i = 0; i < 30; i++)
        sb_adds(&v, "ab\x1b\xe2\x80\xae\xe6\x97\xa5\xff");
    struct detail_doc doc;
    memset(&doc, 0, sizeof doc);
    doc.wrap = 33;
    detail_add_fieldb(&doc, 2, 6, "v", v.buf, v.len, DS_VALUE, NULL);
    assert_true(doc.n > 3);
    struct strbuf all;
    sb_init(&all);
    for (size_t i = 0; i < doc.n; i++) {
        const struct detail_line *l = &doc.lines[i];
        size_t w = (size_t)l->indent + sanitize_width(l->text, l->len);
        if (w > 33)
            fail_msg("line %zu is %zu columns: %s", i, w, l->text);
        assert_line_safe(l, false, i);
        assert_true(l->len > 0 && l->text[l->len - 1] != '\\');
        /* The first line holds the label: its value starts with its second span. */
        size_t from = i ? 0 : l->spans[1].start;
        sb_add(&all, l->text + from, l->len - from);
    }
    /* Put back together, the lines are the one-line sanitized value. */
    struct strbuf whole;
    sb_init(&whole);
    sanitize_append(&whole, v.buf, v.len, 0);
    assert_string_equal(all.buf, whole.buf);
    sb_free(&whole);
    sb_free(&all);
    detail_doc_free(&doc);

    /* A value too long to show whole stops, saying how much is left. */
    sb_reset(&v);
    for (int i = 0; i < 10000; i++)
        sb_addc(&v, 'A');
    doc.wrap = 50;
    detail_add_fieldb(&doc, 0, 4, "big", v.buf, v.len, DS_VALUE, NULL);
    assert_int_equal(doc.n, DETAIL_VALUE_LINES_MAX + 1);
    assert_string_equal(doc.lines[doc.n - 1].text, "\xe2\x80\xa6 8592 more bytes");
    detail_doc_free(&doc);
    sb_free(&v);
}

/* The error of a message wraps at the width given; without wrapping it is one line. */
static void test_wrap_width(void **state)
{
    static const int sections[] = {DSEC_SUMMARY};
    char *t = render(record(state, 7), 0, 60, sections, 1);
    assert_non_null(strstr(t, "  error         gave up after 5 attempts: Net::ReadTimeout:\n"
                              "                Net::ReadTimeout with #<TCPSocket:(closed)>\n"));
    for (const char *p = t; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (sanitize_width(p, n) > 60)
            fail_msg("wider than 60: %.*s", (int)n, p);
        p += n + (e ? 1 : 0);
    }
    free(t);
    t = render(record(state, 7), 0, -1, sections, 1);
    assert_non_null(strstr(t, "  error         gave up after 5 attempts: Net::ReadTimeout: "
                              "Net::ReadTimeout with #<TCPSocket:(closed)>   why the library "
                              "set it aside (x-acemq-error)\n"));
    free(t);
}

int main(void)
{
    detail_locale();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_routing_slip_parse),       cmocka_unit_test(test_traceparent_parse),
        cmocka_unit_test(test_hostile_records_are_safe), cmocka_unit_test(test_wrap_words),
        cmocka_unit_test(test_wrap_escapes_and_wide),    cmocka_unit_test(test_wrap_width),
    };
    return cmocka_run_group_tests_name("detail_safe", tests, detail_setup, detail_teardown);
}
