/*
 * exitcodes: the exit statuses the man page (docs/dlqx.1, EXIT STATUS) and the README (its
 * exit table) document are exactly EXIT_LIST's: every status in the table is documented with
 * its number, and no document names a status the table does not have.
 */
#include "testutil.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"
#include "exitcodes.h"
#include "mgmt.h"
#include "replay_setup.h"

#ifndef SOURCE_ROOT
#error SOURCE_ROOT must name the source tree
#endif

#define MAX_CODES 64

static const int table[] = {
#define X(name, number, meaning) number,
    EXIT_LIST(X)
#undef X
};
#define N_TABLE (sizeof table / sizeof *table)

/* The numbers of the man page's EXIT STATUS section: each `.TP` followed by `.B N`. */
static size_t man_codes(const char *text, int *out)
{
    size_t n = 0;
    const char *p = strstr(text, "\n.SH EXIT STATUS\n");
    if (!p)
        return 0;
    p += strlen("\n.SH EXIT STATUS\n");
    const char *end = strstr(p, "\n.SH ");
    if (!end)
        end = p + strlen(p);
    while ((p = strstr(p, ".TP\n.B ")) && p < end && n < MAX_CODES) {
        p += strlen(".TP\n.B ");
        char *e;
        long v = strtol(p, &e, 10);
        if (e != p && (*e == '\n' || *e == ' '))
            out[n++] = (int)v;
    }
    return n;
}

/* The numbers of the README's exit table: the rows after the header `| exit | meaning |`. */
static size_t readme_codes(const char *text, int *out)
{
    size_t n = 0;
    const char *p = strstr(text, "\n| exit | meaning |\n");
    if (!p)
        return 0;
    p = strchr(p + 1, '\n') + 1; /* the header */
    p = strchr(p, '\n') + 1;     /* |---|---| */
    while (strncmp(p, "| ", 2) == 0 && n < MAX_CODES) {
        char *e;
        long v = strtol(p + 2, &e, 10);
        if (e != p + 2 && strncmp(e, " |", 2) == 0)
            out[n++] = (int)v;
        const char *nl = strchr(p, '\n');
        if (!nl)
            break;
        p = nl + 1;
    }
    return n;
}

static bool has(const int *v, size_t n, int x)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == x)
            return true;
    return false;
}

/* Whether doc lists exactly the table's numbers, each once; why names the first difference. */
static bool agrees(const char *what, const int *doc, size_t n, char *why, size_t whylen)
{
    for (size_t i = 0; i < N_TABLE; i++)
        if (!has(doc, n, table[i])) {
            snprintf(why, whylen, "%s does not document exit status %d (%s)", what, table[i],
                     exit_code_name(table[i]));
            return false;
        }
    for (size_t i = 0; i < n; i++) {
        if (!exit_code_name(doc[i])) {
            snprintf(why, whylen, "%s documents exit status %d, which EXIT_LIST does not have",
                     what, doc[i]);
            return false;
        }
        if (has(doc, i, doc[i])) {
            snprintf(why, whylen, "%s documents exit status %d twice", what, doc[i]);
            return false;
        }
    }
    return true;
}

static char *read_text(const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", SOURCE_ROOT, rel);
    struct bytes b = test_read_file(path);
    char *s = malloc(b.len + 1);
    assert_non_null(s);
    memcpy(s, b.data, b.len);
    s[b.len] = '\0';
    bytes_free(&b);
    return s;
}

static void check(const char *what, size_t (*codes)(const char *, int *), const char *rel)
{
    char *text = read_text(rel);
    int doc[MAX_CODES];
    size_t n = codes(text, doc);
    char why[300] = "";
    bool ok = agrees(what, doc, n, why, sizeof why);
    if (!ok)
        fail_msg("%s", why);
    free(text);
}

static void test_man_page(void **state)
{
    (void)state;
    check("docs/dlqx.1", man_codes, "docs/dlqx.1");
}

static void test_readme(void **state)
{
    (void)state;
    check("README.md", readme_codes, "README.md");
}

/* The check itself fails on a document that misses a status, adds one, or names one twice. */
static void test_check_fails(void **state)
{
    (void)state;
    char why[300];
    int doc[MAX_CODES];
    memcpy(doc, table, sizeof table);
    assert_true(agrees("t", doc, N_TABLE, why, sizeof why));
    assert_false(agrees("t", doc, N_TABLE - 1, why, sizeof why));
    assert_non_null(strstr(why, "does not document"));
    doc[N_TABLE] = 99;
    assert_false(agrees("t", doc, N_TABLE + 1, why, sizeof why));
    assert_non_null(strstr(why, "99"));
    doc[N_TABLE] = table[0];
    assert_false(agrees("t", doc, N_TABLE + 1, why, sizeof why));
    assert_non_null(strstr(why, "twice"));

    const char *man = "x\n.SH EXIT STATUS\n.TP\n.B 0\nok\n.TP\n.B 99\nno\n.SH NEXT\n.TP\n.B 5\n";
    assert_int_equal(man_codes(man, doc), 2);
    assert_int_equal(doc[1], 99);
    const char *md = "x\n| exit | meaning |\n|---|---|\n| 0 | ok |\n| 7 | seven |\n\nafter\n";
    assert_int_equal(readme_codes(md, doc), 2);
    assert_int_equal(doc[1], 7);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(exit_code_name(15), "EXIT_QUEUE_MISSING");
    assert_non_null(exit_code_meaning(EXIT_OSERR));
    assert_null(exit_code_name(99));
}

/* The kinds of the broker layer's failures give the exit statuses the man page names. */
static void test_kinds(void **state)
{
    (void)state;
    assert_int_equal(error_kind_exit(conn_err_kind(CONN_NOT_FOUND)), EXIT_QUEUE_MISSING);
    assert_int_equal(error_kind_exit(conn_err_kind(CONN_LOCKED)), EXIT_PROTOCOL);
    assert_int_equal(error_kind_exit(conn_err_kind(CONN_OK)), EXIT_OK);
    assert_int_equal(error_kind_exit(mgmt_error_kind(MGMT_TIMEOUT)), EXIT_UNREACHABLE);
    assert_int_equal(error_kind_exit(mgmt_error_kind(MGMT_NOT_FOUND)), EXIT_VHOST);

    struct error err;
    error_set(&err, ST_EIO, "x");
    assert_int_equal(error_exit_code(&err, 42), 42);
    /* conn_open sets the error's kind: no URL is a usage error. */
    struct conn_opts o;
    memset(&o, 0, sizeof o);
    struct conn *c = NULL;
    assert_int_not_equal(conn_open(&o, &c, NULL, &err), ST_OK);
    assert_int_equal(err.kind, ERRK_USAGE);
    assert_int_equal(error_exit_code(&err, 42), EXIT_USAGE);
    /* and error_set forgets it again */
    error_set(&err, ST_EIO, "y");
    assert_int_equal(err.kind, ERRK_NONE);
}

/* replay_setup_open: a broker that does not answer is the unreachable kind (exit 10), and
 * nothing is left open. */
static void test_setup_unreachable(void **state)
{
    (void)state;
    struct broker_opts b;
    broker_opts_init(&b);
    b.urls[b.n_urls++] = (char *)(uintptr_t) "amqp://guest@127.0.0.1:1/";
    struct replay_setup_args a = {.broker = &b,
                                  .journal_path = "/nonexistent/j",
                                  .queue = "q",
                                  .op = "replay",
                                  .delivery_limit = -1};
    struct replay_setup s;
    struct error err;
    error_clear(&err);
    assert_int_not_equal(replay_setup_open(&s, &a, &err), ST_OK);
    assert_int_equal(error_exit_code(&err, 0), EXIT_UNREACHABLE);
    assert_null(s.conn);
    assert_null(s.journal);
    replay_setup_close(&s);
    broker_opts_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_man_page),    cmocka_unit_test(test_readme),
        cmocka_unit_test(test_check_fails), cmocka_unit_test(test_names),
        cmocka_unit_test(test_kinds),       cmocka_unit_test(test_setup_unreachable),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
