/*
 * cmd_ui: the interactive explorer's entry points —
 *   dlqx [BROKER OPTIONS]            the dead-letter queues of the broker
 *   dlqx [BROKER OPTIONS] QUEUE...   those queues' dead letters (a snapshot of each)
 *   dlqx open FILE...                snapshot files, no broker at all
 * While curses owns the terminal, standard error goes to a temporary file and is replayed
 * after the terminal is restored, so no library message can scribble over the screen. The
 * file (unlinked, 0600) and the saved standard error are close-on-exec, and while $EDITOR has
 * the terminal its standard error is the terminal again: it inherits neither.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker_opts.h"
#include "cmd_ui.h"
#include "exitcodes.h"
#include "snapshot_opts.h"
#include "app.h"
#include "mgmt.h"
#include "term.h"
#include "util.h"
#include "sanitize.h"
#include "snapshot.h"

static int saved_stderr = -1;
static FILE *captured;

/* An unlinked temporary file, close-on-exec (tmpfile(3) is not), or NULL. */
static FILE *private_tmpfile(void)
{
    const char *tmp = getenv("TMPDIR");
    char *path = xasprintf("%s/dlqx-stderr-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd >= 0)
        unlink(path);
    free(path);
    if (fd < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
        if (fd >= 0)
            close(fd);
        return NULL;
    }
    FILE *f = fdopen(fd, "w+");
    if (!f)
        close(fd);
    return f;
}

/* Standard error on the terminal again, the captured file rewound for reading: false when
 * it was not captured. */
static bool stderr_back(void)
{
    if (saved_stderr < 0 || !captured)
        return false;
    fflush(stderr);
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    saved_stderr = -1;
    rewind(captured);
    return true;
}

/* An exit() while standard error is captured (out of memory: util.c exits 71) still shows
 * what was written: the terminal is restored first (term.c's handler was registered later,
 * so it runs first), then the captured text is copied with a fixed buffer — nothing is
 * allocated on this path — every byte that is not printable ASCII or a newline shown as '?'. */
static void release_stderr_at_exit(void)
{
    if (!stderr_back())
        return;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, captured)) > 0) {
        for (size_t i = 0; i < n; i++)
            if (buf[i] != '\n' && ((unsigned char)buf[i] < 0x20 || (unsigned char)buf[i] >= 0x7f))
                buf[i] = '?';
        if (write(STDERR_FILENO, buf, n) < 0)
            break;
    }
}

static void capture_stderr(void)
{
    fflush(stderr);
    captured = private_tmpfile();
    if (!captured)
        return;
    saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
    if (saved_stderr < 0) {
        fclose(captured);
        captured = NULL;
        return;
    }
    dup2(fileno(captured), STDERR_FILENO);
    static bool registered;
    if (!registered) {
        registered = true;
        atexit(release_stderr_at_exit);
    }
}

void ui_stderr_pause(void)
{
    if (saved_stderr < 0)
        return;
    fflush(stderr);
    dup2(saved_stderr, STDERR_FILENO);
}

void ui_stderr_resume(void)
{
    if (saved_stderr < 0)
        return;
    fflush(stderr);
    dup2(fileno(captured), STDERR_FILENO);
}

static void release_stderr(void)
{
    if (!stderr_back())
        return;
    /* Read whole, then sanitized in one piece: a chunk boundary must not cut a code point. */
    struct strbuf all;
    sb_init(&all);
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, captured)) > 0)
        sb_add(&all, buf, n);
    san_fwrite(stderr, all.buf, all.len);
    sb_free(&all);
    fclose(captured);
    captured = NULL;
}

static void load_files(struct app *a)
{
    app_source_start(a);
}

static void load_queues(struct app *a)
{
    source_peek_open(a, a->queues, a->n_queues);
    app_switch(a, &view_messages_ops);
}

static void usage(FILE *to)
{
    fputs("usage: dlqx [--ascii] [--refresh SECONDS] [--no-bell] [BROKER OPTIONS] [QUEUE...]\n"
          "       dlqx open [--ascii] [--no-bell] [--max-record-size SIZE] FILE...\n"
          "keys: ? in the program; see dlqx(1)\n",
          to);
}

int cmd_ui(int argc, char **argv, bool open_files)
{
    struct app a;
    memset(&a, 0, sizeof a);
    tree_init(&a.forest);
    /* Snapshot files have no broker to write to; a broker is written to unless --read-only,
     * DLQX_READ_ONLY or read_only=true on a URL says otherwise (set below). */
    a.read_only = true;
    const char *lc = getenv("LC_ALL");
    if (!lc || !*lc)
        lc = getenv("LC_CTYPE");
    if (!lc || !*lc)
        lc = getenv("LANG");
    a.ascii = !(lc && (strstr(lc, "UTF-8") || strstr(lc, "utf-8") || strstr(lc, "UTF8") ||
                       strstr(lc, "utf8")));
    a.queues_refresh_s = 5.0; /* the queues view's refresh; --refresh */
    struct broker_opts b;
    broker_opts_init(&b);
    b.stop_requested = term_stop_signal; /* the explorer notes its signals itself (term.c) */
    char **names = xcalloc((size_t)argc + 1, sizeof *names);
    int n = 0, rc = EXIT_OK;
    for (int i = 0; i < argc; i++) {
        if (!open_files) {
            enum bopt_next r = broker_opts_arg(&b, argc, argv, &i);
            if (r == BOPT_ERROR) {
                rc = EXIT_USAGE;
                goto out;
            }
            if (r == BOPT_CONSUMED)
                continue;
        }
        int mr = open_files ? options_max_record(argc, argv, &i) : 0;
        if (mr < 0) {
            rc = EXIT_USAGE;
            goto out;
        }
        if (mr > 0) {
            continue;
        } else if (strcmp(argv[i], "--ascii") == 0) {
            a.ascii = true;
        } else if (strcmp(argv[i], "--no-bell") == 0) {
            a.no_bell = true;
        } else if (strcmp(argv[i], "--utf8") == 0) {
            a.ascii = false;
        } else if (!open_files && strcmp(argv[i], "--refresh") == 0) {
            char *end = NULL;
            const char *v = i + 1 < argc ? argv[++i] : "";
            a.queues_refresh_s = *v ? strtod(v, &end) : -1;
            if (!*v || *end ||
                !(a.queues_refresh_s == 0 ||
                  (a.queues_refresh_s >= 1 && a.queues_refresh_s <= 3600))) {
                san_eprintf("dlqx: --refresh takes seconds from 1 to 3600, or 0 (the queues "
                            "view refreshes only on r)\n");
                rc = EXIT_USAGE;
                goto out;
            }
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            goto out;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            san_eprintf("dlqx: unknown option %s\n", argv[i]);
            usage(stderr);
            rc = EXIT_USAGE;
            goto out;
        } else {
            names[n++] = argv[i];
        }
    }
    const struct view_ops *first = &view_queues_ops;
    struct error lerr;
    if (!snapshot_max_record_env_ok(&lerr)) {
        /* As decode, tree and cat: a limit that is not a size stops before anything is read. */
        san_eprintf("dlqx: %s\n", lerr.msg);
        rc = EXIT_USAGE;
        goto out;
    }
    if (open_files) {
        if (!n) {
            usage(stderr);
            rc = EXIT_USAGE;
            goto out;
        }
        app_source_set(&a, &source_file_ops, source_file_new(names, n));
        a.after_start = load_files;
        first = &view_messages_ops;
    } else {
        if (!broker_opts_finish(&b)) {
            rc = EXIT_USAGE;
            goto out;
        }
        a.broker = &b;
        a.read_only = b.read_only;
        mgmt_global_init();
        a.mgmt = broker_mgmt(&b, &rc);
        rc = EXIT_OK;
        /* Check the broker answers before the screen is taken over. */
        struct conn *c = broker_connect(&b, &rc);
        if (!c)
            goto out;
        app_source_set(&a, &source_peek_ops, source_peek_new(conn_display_url(c)));
        /* A mistyped queue is an error here, not an empty list on the screen. */
        for (int i = 0; i < n && rc == EXIT_OK; i++) {
            enum conn_err kind = CONN_OK;
            struct error err;
            error_clear(&err);
            if (conn_queue_inspect(c, 1, names[i], NULL, NULL, &kind, &err) != ST_OK) {
                san_eprintf("dlqx: %s\n", err.msg);
                rc = broker_exit_code(kind);
                if (kind == CONN_NOT_FOUND)
                    broker_suggest_queue(&b, names[i]);
            }
        }
        conn_close(c);
        if (rc != EXIT_OK)
            goto out;
        if (n) {
            a.queues = xcalloc((size_t)n, sizeof *a.queues);
            for (int i = 0; i < n; i++)
                a.queues[i] = xstrdup(names[i]);
            a.n_queues = n;
            a.after_start = load_queues;
            first = &view_messages_ops;
        }
    }
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        san_eprintf("dlqx: the interactive view needs a terminal; for scripts use dlqx "
                    "peek, decode and tree\n");
        rc = EXIT_USAGE;
        goto out;
    }
    if (!term_capable()) {
        rc = EXIT_USAGE;
        goto out;
    }
    if (!a.store) {
        struct error err;
        if (store_new(0, NULL, &a.store, &err) != ST_OK) {
            san_eprintf("dlqx: %s\n", err.msg);
            rc = EXIT_IOERR;
            goto out;
        }
    }
    capture_stderr();
    rc = app_run(&a, first);
    release_stderr();
out:
    if (a.mgmt)
        mgmt_close(&a.mgmt);
    for (int i = 0; i < a.n_queues; i++)
        free(a.queues[i]);
    free(a.queues);
    app_free(&a);
    free(names);
    broker_opts_free(&b);
    return rc;
}
