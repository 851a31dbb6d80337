/*
 * What the detail tests share (detail_testutil.h).
 */
#include "detail_testutil.h"

#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decode.h"
#include "snapshot.h"
#include "util.h"

struct sample load(const char *name)
{
    struct sample s = {NULL, 0};
    FILE *f = fopen(test_fixture_path(name), "rb");
    if (!f) {
        fail_msg("cannot open %s", name);
        return s;
    }
    struct snapshot_reader r;
    snapshot_reader_open(&r, f, name);
    for (;;) {
        struct message m;
        struct error err;
        enum snapshot_rc rc = snapshot_read(&r, &m, &err);
        if (rc == SNAP_EOF)
            break;
        if (rc != SNAP_RECORD)
            fail_msg("%s", err.msg);
        s.m = realloc(s.m, (s.n + 1) * sizeof *s.m);
        if (!s.m)
            abort();
        s.m[s.n++] = m;
    }
    snapshot_reader_close(&r);
    fclose(f);
    return s;
}

void unload(struct sample *s)
{
    for (size_t i = 0; i < s->n; i++)
        message_free(&s->m[i]);
    free(s->m);
}

int detail_setup(void **state)
{
    struct sample *s = malloc(sizeof *s);
    if (!s)
        return -1;
    *s = load("snapshots/incident.jsonl");
    *state = s;
    return 0;
}

int detail_teardown(void **state)
{
    unload(*state);
    free(*state);
    return 0;
}

const struct message *record(void **state, size_t i)
{
    struct sample *s = *state;
    if (i >= s->n)
        fail_msg("no record %zu", i);
    return &s->m[i];
}

/* The doc's text: every line (sections < 0), or only the given sections' lines (without the
 * blank line that separates a section from the next). A new string. */
static char *text_of(const struct detail_doc *doc, const int *sections, size_t n_sections)
{
    struct strbuf sb;
    sb_init(&sb);
    if (!n_sections) {
        detail_to_text(doc, &sb);
    } else {
        for (size_t k = 0; k < n_sections; k++) {
            struct detail_doc part = *doc;
            size_t first = doc->n, last = 0;
            for (size_t i = 0; i < doc->n; i++) {
                if ((int)doc->lines[i].section == sections[k] && doc->lines[i].len) {
                    first = first < i ? first : i;
                    last = i;
                }
            }
            if (first == doc->n)
                continue;
            part.lines = doc->lines + first;
            part.n = last - first + 1;
            detail_to_text(&part, &sb);
        }
    }
    sb_adds(&sb, "");
    return sb_detach(&sb, NULL);
}

char *render(const struct message *m, unsigned flags, int wrap, const int *sections,
             size_t n_sections)
{
    struct decoded d;
    decode_message(m, NOW, &d);
    struct detail_doc doc;
    struct detail_opts opts = {wrap, 0};
    detail_render_opts(&d, m, NOW, flags, &opts, &doc);
    char *t = text_of(&doc, sections, n_sections);
    detail_doc_free(&doc);
    decoded_free(&d);
    return t;
}

void assert_text(const char *got, const char *want)
{
    if (!got || !want) {
        fail_msg("no text");
        return;
    }
    if (strcmp(got, want) == 0)
        return;
    const char *g = got, *w = want;
    for (int line = 1;; line++) {
        const char *ge = strchr(g, '\n'), *we = strchr(w, '\n');
        size_t gl = ge ? (size_t)(ge - g) : strlen(g), wl = we ? (size_t)(we - w) : strlen(w);
        if (gl != wl || memcmp(g, w, gl) != 0) {
            print_error("line %d\n got: %.*s\nwant: %.*s\n", line, (int)gl, g, (int)wl, w);
            fail_msg("the text differs at line %d (whole text:\n%s)", line, got);
            return;
        }
        if (!ge || !we) {
            fail_msg("the text differs in length");
            return;
        }
        g = ge + 1;
        w = we + 1;
    }
}

struct message parse(const char *line)
{
    struct message m;
    struct error err;
    if (snapshot_parse_line(line, strlen(line), &m, &err) != ST_OK)
        fail_msg("%s", err.msg);
    return m;
}

void assert_line_safe(const struct detail_line *l, bool ascii, size_t rec)
{
    const unsigned char *p = (const unsigned char *)l->text;
    if (!utf8_valid(p, l->len))
        fail_msg("record %zu: not UTF-8: %s", rec, l->text);
    if (strlen(l->text) != l->len)
        fail_msg("record %zu: a NUL inside the line", rec);
    for (size_t i = 0; i < l->len; i++) {
        if (p[i] < 0x20 || p[i] == 0x7f)
            fail_msg("record %zu: byte 0x%02x in: %s", rec, p[i], l->text);
        if (ascii && p[i] >= 0x80)
            fail_msg("record %zu: non-ASCII byte 0x%02x in: %s", rec, p[i], l->text);
        if (p[i] == 0xC2 && i + 1 < l->len && p[i + 1] >= 0x80 && p[i + 1] <= 0x9F)
            fail_msg("record %zu: a C1 control in: %s", rec, l->text);
        if (p[i] == 0xE2 && i + 2 < l->len && p[i + 1] == 0x80 &&
            ((p[i + 2] >= 0x8B && p[i + 2] <= 0x8F) || (p[i + 2] >= 0xA8 && p[i + 2] <= 0xAE)))
            fail_msg("record %zu: a bidi or invisible character in: %s", rec, l->text);
        if (p[i] == 0xE2 && i + 2 < l->len && p[i + 1] == 0x81 && p[i + 2] >= 0xA0 &&
            p[i + 2] <= 0xAF)
            fail_msg("record %zu: an invisible format character in: %s", rec, l->text);
    }
    for (uint8_t s = 0; s < l->n_spans; s++)
        assert_true((size_t)l->spans[s].start + l->spans[s].len <= l->len);
    assert_true(l->indent >= 0);
}

bool doc_has(const struct detail_doc *doc, const char *needle)
{
    for (size_t i = 0; i < doc->n; i++)
        if (strstr(doc->lines[i].text, needle))
            return true;
    return false;
}

void detail_locale(void)
{
    if (!setlocale(LC_ALL, "C.UTF-8") && !setlocale(LC_ALL, "C.utf8") &&
        !setlocale(LC_ALL, "en_US.UTF-8"))
        setlocale(LC_ALL, "");
}
