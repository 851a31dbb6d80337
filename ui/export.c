/*
 * export: `E` — the incident report (src/replay/report.h, what `dlqx report` writes) of what
 * the explorer holds: every dead letter of its store (the snapshot and what arrived live), as
 * of now or of the snapshot's end, and what the journal says was replayed. Markdown, or html
 * for a name ending .html or .htm. The file is written as every file dlqx writes (safefile.h:
 * a temporary file renamed over a regular one, no symbolic link followed); a FIFO, a terminal
 * or a device is refused here, where the screen is the terminal's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "app.h"
#include "journal.h"
#include "live.h"
#include "report.h"
#include "safefile.h"
#include "ui.h"

static bool ends_with_ci(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcasecmp(s + n - k, suffix) == 0;
}

bool export_report(struct app *a, const char *path, char *msg, size_t len)
{
    if (!path || !*path || strcmp(path, "-") == 0) {
        snprintf(msg, len, "the report needs a file name (standard output is the screen)");
        return false;
    }
    if (!a->store || !store_count(a->store)) {
        snprintf(msg, len, "nothing to report: no dead letters here");
        return false;
    }
    bool html = ends_with_ci(path, ".html") || ends_with_ci(path, ".htm");
    struct error err;
    error_clear(&err);
    struct safefile sf;
    /* Only a new file or a regular one: opening a FIFO would wait for a reader with the screen
     * frozen, and a terminal or a device is not where a report goes. */
    if (safefile_open_regular(&sf, path, &err) != ST_OK) {
        snprintf(msg, len, "%s", err.msg);
        return false;
    }
    char *journal = journal_default_path();
    struct strbuf text;
    sb_init(&text);
    uint64_t n = 0;
    enum status st = report_render(a->store, clock_now_ms(), journal, html, &text, &n, &err);
    free(journal);
    if (st != ST_OK) {
        sb_free(&text);
        safefile_discard(&sf);
        snprintf(msg, len, "the journal: %s", err.msg);
        return false;
    }
    unsigned long long total = (unsigned long long)n;
    bool wrote = fwrite(text.buf ? text.buf : "", 1, text.len, sf.f) == text.len;
    sb_free(&text);
    if (!wrote) {
        safefile_discard(&sf);
        snprintf(msg, len, "cannot write %s", path);
        return false;
    }
    if (safefile_commit(&sf, &err) != ST_OK) {
        snprintf(msg, len, "%s", err.msg);
        return false;
    }
    snprintf(msg, len, "report of %llu dead letter%s written to %s (%s)", total,
             total == 1 ? "" : "s", path, html ? "html" : "markdown");
    return true;
}

int act_export(struct app *a, enum action act)
{
    (void)act;
    char *path = app_prompt(a, "report to (FILE.md or FILE.html): ", NULL);
    if (!path)
        return HR_REDRAW;
    char msg[600];
    bool ok = export_report(a, path, msg, sizeof msg);
    app_message(a, !ok, "%s", msg);
    free(path);
    return HR_REDRAW;
}
