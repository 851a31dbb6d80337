/*
 * ui: what the views share — the application state, the view interface (a vtable per view
 * file, as tig's view_ops and tmux's window_mode), the result flags of a request, and the
 * drawing calls (term.c, the one file that talks to curses; the core never does).
 *
 * Ownership: the app owns the store, the forest, the filter and the view stack. Views own
 * their state (v->state), released by ops->close.
 */
#ifndef DLQX_UI_H
#define DLQX_UI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "actions.h"
#include "job.h"
#include "source.h"
#include "store.h"
#include "tree.h"
#include "treeview.h"

struct app;
struct view;
struct broker_opts;
struct filter;
struct groups;
struct forest_job;
struct forest_texts;
struct live;

/* Attributes the views draw with; term.c maps them to colours (8 or 256) or, with NO_COLOR,
 * to bold/reverse/dim only. */
enum ui_attr {
    UA_NORMAL,
    UA_TITLE,    /* the top line */
    UA_HEADER,   /* column headers */
    UA_SELECTED, /* the cursor line */
    UA_STATUS,   /* the bottom line */
    UA_DIM,      /* secondary text */
    UA_ERROR,    /* errors, rejected messages */
    UA_WARN,     /* warnings, high attempts */
    UA_ACCENT,   /* ids, keys, emphasis */
    UA_GOOD,     /* accepted, healthy */
    UA_COUNT
};

/* What a request did, for the loop. */
enum {
    HR_UNHANDLED = 0,
    HR_HANDLED = 1 << 0,
    HR_REDRAW = 1 << 1,
    HR_QUIT = 1 << 2,
};

/* Where a search has got to, between the slices of a long one. */
struct search_pos {
    bool started;
    size_t at;                   /* the line last looked at */
    size_t done, total;          /* lines looked at, of lines to look at */
    const char *unit;            /* what the lines are, for the progress line ("messages") */
    uint64_t gen;                /* the view's: the generation of the lines it started on */
    struct treeview_search tree; /* the tree view's */
};
enum {
    SEARCH_FOUND,
    SEARCH_NONE,
    SEARCH_MORE,
    SEARCH_LOST, /* the lines it was looking through were made again meanwhile */
};

struct view_ops {
    const char *name;  /* shown in the title: "messages", "detail"… */
    enum action which; /* the action that opens it (ACT_VIEW_*), or ACT_NONE */
    /* Opens the view on v->arg (a message's index, or SIZE_MAX) with what its opener gave it
     * (with: app_push_with's; NULL from app_push). A view that takes it owns it from here (the
     * plan view keeps plan_open's state as v->state). */
    void (*open)(struct app *a, struct view *v, void *with);
    void (*close)(struct app *a, struct view *v);
    /* Draws rows [top, top + height) of the screen, width columns. */
    void (*draw)(struct app *a, struct view *v, int top, int height, int width);
    /* Handles an action; returns HR_* flags. Movement is usually left to view_move. */
    int (*request)(struct app *a, struct view *v, enum action act);
    /* Moves the cursor to the next (dir 1) or previous (dir -1) line matching text, working
     * until the monotonic clock passes until (views with few lines may ignore it): SEARCH_FOUND
     * (the cursor is on it), SEARCH_NONE, SEARCH_MORE (call again with the same pos, which
     * is zeroed before the first call) or SEARCH_LOST. NULL: the view cannot be searched. */
    int (*search)(struct app *a, struct view *v, const char *text, int dir, struct search_pos *pos,
                  double until);
    /* The data under the view changed (a new snapshot, a filter): rebuild, keep the cursor
     * on the same item where it still exists. NULL: nothing to do. */
    void (*reload)(struct app *a, struct view *v);
    /* One line for the status bar (position, counts…), or NULL. */
    void (*status)(struct app *a, struct view *v, struct strbuf *out);
    /* Called about once a second while the view is on top and the loop is idle: periodic
     * work (the queues view's refresh starts its job here). NULL: none. */
    void (*tick)(struct app *a, struct view *v);
};

struct view {
    const struct view_ops *ops;
    void *state;
    size_t cursor; /* the selected line */
    size_t top;    /* the first line drawn */
    size_t lines;  /* how many lines the view has */
    int hscroll;
    size_t arg; /* what it was opened on (a message index…); SIZE_MAX: nothing */
    int rows_y; /* the screen row line v->top was drawn on (set by draw; 0: no lines to
                   click on) */
};

#define VIEW_STACK_MAX 12

struct app {
    /* Where the messages come from (source.h): snapshot files, or a live broker's queues. */
    struct app_source src;
    struct broker_opts *broker; /* a broker source's (borrowed) */
    char **queues;              /* queues named on the command line */
    int n_queues;

    struct store *store;
    /* The rows: store indices that pass a->filter, in the order of a->sort_column (rows.c;
     * made again by a job, which installs its filter and order with them). */
    size_t *rows;
    size_t n_rows;
    size_t rows_upto; /* store entries already considered for rows (more while reading) */
    int sort_column;  /* enum sort_column: SORT_ORDER = as received */
    bool sort_reverse;
    struct filter *filter;
    char *filter_text;
    char *search_text;
    /* Generations (data.c): the store was replaced; the set of rows changed; the rows were
     * made again (positions in them are void); the store or the forest changed (positions
     * in the tree are void). */
    uint64_t store_gen, set_gen, rows_gen, data_gen;
    /* Made from the data once per generation, by jobs (data.c). */
    struct forest forest; /* of the store's first forest_count entries */
    uint64_t forest_store_gen;
    size_t forest_count;
    bool forest_cancelled;
    struct groups *groups; /* of the rows of (groups_store_gen, groups_set_gen, groups_rows) */
    uint64_t groups_store_gen, groups_set_gen;
    size_t groups_rows;
    bool groups_cancelled;
    /* The timeline of the rows (view_timeline.c), kept between visits: made again when the
     * store, the set of rows, their count or the minute (the timeline runs up to now)
     * changes. */
    struct timeline *timeline;
    uint64_t timeline_store_gen, timeline_set_gen;
    size_t timeline_rows;
    int64_t timeline_minute;
    unsigned long timeline_made;      /* how many times it was made (the tests read it) */
    bool timeline_cancelled;          /* its job was stopped: made again at the next visit */
    struct job *jobs[JOB_KINDS];      /* the work in progress, by kind (job.h) */
    struct forest_job *forest_orphan; /* a cancelled forest its thread is still linking */

    int64_t now_ms;
    /* Ages as of the snapshot rather than from now (rows.c: app_age_clock): the newest
     * fetched_at_ms of the store, worked out again when the store changes. */
    bool ages_as_of_snapshot;
    int64_t snapshot_ms;
    uint64_t snapshot_ms_gen;
    size_t snapshot_ms_count;
    bool ascii;  /* no UTF-8 box drawing */
    int colours; /* 0 (NO_COLOR or none), 8 or 256 */
    bool read_only;

    struct view stack[VIEW_STACK_MAX];
    int depth;
    char message[512]; /* a one-off message for the status line */
    bool message_is_error;
    bool quit;
    int exit_code; /* app_run's: that of a pass a signal stopped (0 otherwise) */
    int rows_on_screen, cols_on_screen;

    struct forest_texts *forest_text;   /* ids the forest borrows that the store keeps as
                              UUIDs (the rest it borrows from the store) */
    char *source_label;                 /* shown in the title: the file or the queues */
    void (*after_start)(struct app *a); /* work to do once the screen is up (loading) */
    struct mgmt *mgmt;                  /* the management API, when there is one (a broker) */
    double queues_refresh_s; /* the queues view's refresh from the management API (--refresh;
                                0: only on r) */
    /* What passes from the explorer took out of their queue since the snapshot: by store
     * index, an enum gone_why (GONE_NONE: still there); NULL when nothing was. These are no
     * longer rows (nor in the groups, the timeline or a search); the tree marks them. */
    unsigned char *gone;
    size_t gone_cap, n_gone;
    /* Following the open queues as dead letters arrive (live.h); NULL before the first L. */
    struct live *live;
    bool no_bell; /* --no-bell: a new cause is flagged without the terminal's bell */
};

/* View stack. */
struct view *app_view(struct app *a);
void app_push(struct app *a, const struct view_ops *ops, size_t arg);
/* The same, with what the view opens on (open's with; the view owns it from then on and its
 * close frees it): the plan opens on the plan plan_open made. */
void app_push_with(struct app *a, const struct view_ops *ops, size_t arg, void *with);
void app_pop(struct app *a);
/* Replaces the whole stack with one view (the number keys). */
void app_switch(struct app *a, const struct view_ops *ops);
void app_message(struct app *a, bool error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Asks for a line of text on the bottom line; NULL when cancelled (Esc). */
char *app_prompt(struct app *a, const char *prompt, const char *initial);

/* Standard cursor movement over v->lines lines on a page of `page` lines: HR_* flags. */
int view_move(struct view *v, enum action act, size_t page);
/* Keeps the cursor on screen. */
void view_scroll_to_cursor(struct view *v, size_t page);

/* Drawing (term.c). Text from messages is sanitized here: callers pass raw bytes. */
void draw_text(int y, int x, int width, const void *data, size_t len, enum ui_attr attr);
void draw_textf(int y, int x, int width, enum ui_attr attr, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Text already safe (built by the views from sanitized parts and ASCII). */
void draw_safe(int y, int x, int width, const char *safe, enum ui_attr attr);
void draw_fill(int y, int x, int width, enum ui_attr attr);
/* A horizontal rule or tree glyphs in ASCII or UTF-8 as the app is set up. */
const char *glyph(const struct app *a, int which);
enum { G_VLINE, G_TEE, G_ELBOW, G_BLOCK, G_EXPANDED, G_COLLAPSED, G_COUNT };

/* The views. */
extern const struct view_ops view_queues_ops;
extern const struct view_ops view_messages_ops;
extern const struct view_ops view_groups_ops;
extern const struct view_ops view_detail_ops;
extern const struct view_ops view_tree_ops;
extern const struct view_ops view_timeline_ops;
extern const struct view_ops view_help_ops;

#endif
