/*
 * fixtures: every framework's fixtures decoded as the framework's own tool reads them.
 *
 * For every fixtures/<framework>/<case>.jsonl that has a <case>.expect.json beside it, each
 * record is decoded (now fixed at 1767330000000, as the CLI tests fix DLQX_NOW) and its decode
 * record (docs/decode-format.md) must contain the expected object: a deep subset — every key
 * the expectation gives must be there with an equal value; objects are compared the same
 * way, arrays element by element and of the same length. The expectations are data written
 * from the frameworks' sources (fixtures/<framework>/SOURCES.md), not from dlqx's output.
 *
 * Also: every record of those files decodes without a crash, its detail renders, and its
 * JSON can be written; a dialect named in an expectation exists; every dialect in the table
 * has at least one expected record (so a framework's fixtures cannot go missing silently).
 */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decode.h"
#include "detail.h"
#include "snapshot.h"

#define NOW 1767330000000LL

static int failures;

static void print_path(char *path, size_t n, const char *base, const char *key, size_t index,
                       bool is_index)
{
    if (is_index)
        snprintf(path, n, "%s[%zu]", base, index);
    else
        snprintf(path, n, "%s%s%s", base, *base ? "." : "", key);
}

/* Whether want is a deep subset of got; says where it is not. */
static bool subset(json_t *want, const json_t *got, const char *path, const char *where)
{
    if (json_is_object(want)) {
        if (!json_is_object(got)) {
            print_error("%s: %s: want an object, got %s\n", where, path,
                        got ? json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT) : "(absent)");
            return false;
        }
        const char *k;
        json_t *v;
        bool ok = true;
        json_object_foreach(want, k, v)
        {
            char sub[512];
            print_path(sub, sizeof sub, path, k, 0, false);
            ok = subset(v, json_object_get(got, k), sub, where) && ok;
        }
        return ok;
    }
    if (json_is_array(want)) {
        if (!json_is_array(got) || json_array_size(got) != json_array_size(want)) {
            char *w = json_dumps(want, JSON_ENCODE_ANY | JSON_COMPACT);
            char *g = got ? json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
            print_error("%s: %s:\n    want %s\n    got  %s\n", where, path, w, g ? g : "(absent)");
            free(w);
            free(g);
            return false;
        }
        bool ok = true;
        for (size_t i = 0; i < json_array_size(want); i++) {
            char sub[512];
            print_path(sub, sizeof sub, path, NULL, i, true);
            ok = subset(json_array_get(want, i), json_array_get(got, i), sub, where) && ok;
        }
        return ok;
    }
    if (got && json_equal(want, got))
        return true;
    /* 3 and 3.0 are the same number to a reader of the record. */
    if (json_is_number(want) && json_is_number(got) &&
        json_number_value(want) == json_number_value(got))
        return true;
    char *w = json_dumps(want, JSON_ENCODE_ANY | JSON_COMPACT);
    char *g = got ? json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
    print_error("%s: %s:\n    want %s\n    got  %s\n", where, path, w, g ? g : "(absent)");
    free(w);
    free(g);
    return false;
}

static bool has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n >= m && strcmp(s + n - m, suf) == 0;
}

/* Decodes every record of one .jsonl; checks it against the expectation when there is one.
 * Returns the number of records. */
static size_t check_file(const char *dir, const char *name, size_t *cases_per_dialect)
{
    char path[2048], expect_path[2100];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(expect_path, sizeof expect_path, "%.*s.expect.json", (int)(strlen(path) - 6), path);
    /* .replay.jsonl and .reissue.jsonl are what a replay must write, not dead letters. */
    if (has_suffix(name, ".replay.jsonl") || has_suffix(name, ".reissue.jsonl"))
        return 0;
    json_t *expect = NULL;
    struct stat st;
    if (stat(expect_path, &st) == 0) {
        json_error_t je;
        expect = json_load_file(expect_path, 0, &je);
        if (!json_is_array(expect)) {
            print_error("%s: not a JSON array (%s, line %d)\n", expect_path, je.text, je.line);
            failures++;
            json_decref(expect);
            return 0;
        }
    }
    if (!expect)
        return 0; /* a snapshot of another test's (malformed on purpose, a journal…) */
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    struct snapshot_reader r;
    snapshot_reader_open(&r, f, path);
    size_t n = 0;
    for (;;) {
        struct message m;
        struct error err;
        error_clear(&err);
        enum snapshot_rc rc = snapshot_read(&r, &m, &err);
        if (rc == SNAP_EOF)
            break;
        if (rc != SNAP_RECORD) {
            print_error("%s: %s\n", path, err.msg);
            failures++;
            if (rc == SNAP_IO_ERROR)
                break;
            continue;
        }
        struct decoded d;
        decode_message(&m, NOW, &d);
        json_t *rec = decoded_to_json(&d, NOW);
        char *text = json_dumps(rec, JSON_COMPACT);
        if (!text) {
            print_error("%s record %zu: the decode record cannot be written as JSON\n", path,
                        n + 1);
            failures++;
        }
        free(text);
        struct detail_doc doc;
        detail_render(&d, &m, NOW, 0, &doc);
        assert_true(doc.n > 5);
        detail_doc_free(&doc);
        if (expect) {
            char where[2200];
            snprintf(where, sizeof where, "%s record %zu", path, n + 1);
            json_t *want = json_array_get(expect, n);
            if (!want) {
                print_error("%s: no expectation for record %zu\n", expect_path, n + 1);
                failures++;
            } else {
                if (!subset(want, rec, "", where))
                    failures++;
                const char *dn = json_string_value(json_object_get(want, "dialect"));
                const struct dialect_ops *ops = dn ? dialect_by_name(dn, strlen(dn)) : NULL;
                if (dn && !ops) {
                    print_error("%s: dialect \"%s\" is not in the table\n", where, dn);
                    failures++;
                }
                if (ops)
                    cases_per_dialect[dialect_index(ops)]++;
            }
        }
        json_decref(rec);
        decoded_free(&d);
        message_free(&m);
        n++;
    }
    snapshot_reader_close(&r);
    fclose(f);
    if (expect && json_array_size(expect) != n) {
        print_error("%s: %zu expectations for %zu records\n", expect_path, json_array_size(expect),
                    n);
        failures++;
    }
    json_decref(expect);
    return n;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_every_fixture(void **state)
{
    (void)state;
    const char *root = getenv("DLQX_FIXTURES") ? getenv("DLQX_FIXTURES") : FIXTURES_DIR;
    size_t cases[64] = {0}, records = 0, files = 0;
    assert_true(dialect_count() <= sizeof cases / sizeof *cases);
    DIR *top = opendir(root);
    assert_non_null(top);
    struct dirent *e;
    while ((e = readdir(top))) {
        if (e->d_name[0] == '.')
            continue;
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", root, e->d_name);
        DIR *sub = opendir(dir);
        if (!sub)
            continue;
        char **names = NULL;
        size_t nn = 0, cap = 0;
        struct dirent *x;
        while ((x = readdir(sub))) {
            if (!has_suffix(x->d_name, ".jsonl"))
                continue;
            if (nn == cap) {
                cap = cap ? cap * 2 : 16;
                names = realloc(names, cap * sizeof *names);
                assert_non_null(names);
            }
            names[nn++] = strdup(x->d_name);
        }
        closedir(sub);
        if (nn)
            qsort(names, nn, sizeof *names, by_name);
        for (size_t i = 0; i < nn; i++) {
            records += check_file(dir, names[i], cases);
            files++;
            free(names[i]);
        }
        free(names);
    }
    closedir(top);
    printf("fixtures: %zu records in %zu files\n", records, files);
    for (size_t i = 0; i < dialect_count(); i++) {
        printf("  %-12s %zu expected records\n", dialect_at(i)->name, cases[i]);
        if (!cases[i]) {
            print_error(
                "no fixture expects the dialect %s: add fixtures/<framework>/*.expect.json\n",
                dialect_at(i)->name);
            failures++;
        }
    }
    assert_int_equal(failures, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_fixture),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
