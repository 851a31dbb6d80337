/*
 * term: the one file that owns the terminal — curses set-up and tear-down, colours (8, 256,
 * none with NO_COLOR), the signal handlers that restore the terminal before anything is
 * printed, and the drawing calls the views use. SIGINT (and Ctrl-C read as a key), SIGTERM
 * and SIGHUP do not kill: they are noted (term_stop_signal) and the loop, a pass or a peek in
 * progress takes the graceful way out — a pass stops sending and settles what is in flight,
 * a peek gives every message back — before the terminal is restored; after a hang-up the
 * terminal is gone and nothing more is written to it. Every byte that came from a message passes
 * through the sanitizer here before curses sees it.
 */
#define _XOPEN_SOURCE_EXTENDED 1
#include "term.h"

#include <curses.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "sanitize.h"
#include "ui.h"

/* term.h's key codes are curses' own. */
_Static_assert(TERM_KEY_NONE == ERR, "TERM_KEY_NONE");
_Static_assert(TERM_KEY_DOWN == KEY_DOWN && TERM_KEY_UP == KEY_UP, "TERM_KEY_UP/DOWN");
_Static_assert(TERM_KEY_LEFT == KEY_LEFT && TERM_KEY_RIGHT == KEY_RIGHT, "TERM_KEY_LEFT/RIGHT");
_Static_assert(TERM_KEY_HOME == KEY_HOME && TERM_KEY_END == KEY_END, "TERM_KEY_HOME/END");
_Static_assert(TERM_KEY_NPAGE == KEY_NPAGE && TERM_KEY_PPAGE == KEY_PPAGE, "TERM_KEY_*PAGE");
_Static_assert(TERM_KEY_BACKSPACE == KEY_BACKSPACE, "TERM_KEY_BACKSPACE");
_Static_assert(TERM_KEY_F1 == KEY_F(1), "TERM_KEY_F1");
_Static_assert(TERM_KEY_ENTER == KEY_ENTER, "TERM_KEY_ENTER");
_Static_assert(TERM_KEY_MOUSE == KEY_MOUSE && TERM_KEY_RESIZE == KEY_RESIZE, "TERM_KEY_MOUSE");

static bool active;
static bool ascii_mode;
static attr_t attrs[UA_COUNT];
static volatile sig_atomic_t stop_signal;

/* The screen in memory (term_virtual): one cell per column, each a character's UTF-8 bytes
 * ("" after a wide character) and its attribute. NULL: the terminal. */
struct vcell {
    char ch[8];
    enum ui_attr attr;
};
static struct vcell *vscreen;
static int vrows, vcols;

/* Whether the terminal is still there: after a hang-up its ioctls fail (EIO). */
static bool terminal_alive(void)
{
    struct termios t;
    return tcgetattr(STDOUT_FILENO, &t) == 0;
}

static void restore(void)
{
    if (active) {
        active = false;
        if (stop_signal == SIGHUP && !terminal_alive())
            return; /* nothing to restore, nothing to write to */
        endwin();
    }
}

static void on_stop(int sig)
{
    if (!stop_signal)
        stop_signal = sig;
}

int term_stop_signal(void)
{
    return stop_signal;
}

bool term_gone(void)
{
    return stop_signal == SIGHUP && !terminal_alive();
}

static void on_fatal(int sig)
{
    /* Restore the terminal first, then die of the same signal. */
    restore();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void set_attr(enum ui_attr a, short pair, short fg, short bg, attr_t extra, int colours)
{
    if (colours > 0) {
        init_pair(pair, fg, bg);
        attrs[a] = COLOR_PAIR(pair) | extra;
    } else {
        attrs[a] = extra;
    }
}

int term_init(struct app *a)
{
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
        san_eprintf("dlqx: the interactive view needs a terminal (use dlqx decode or "
                    "dlqx tree in scripts)\n");
        return -1;
    }
    initscr();
    active = true;
    atexit(restore);
    /* curses' own SIGINT and SIGTERM handlers exit(1) at once: replaced. No SA_RESTART, so
     * that a wait for a key ends early. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGSEGV, on_fatal);
    signal(SIGABRT, on_fatal);
    signal(SIGBUS, on_fatal);
    cbreak();
    noecho();
    nonl();
    keypad(stdscr, TRUE);
    set_escdelay(25);
    curs_set(0);
    /* The wheel and clicks (hold Shift to select text with the mouse, as in htop). Presses,
     * not clicks: curses would hold a click back to see whether a second one follows. */
    mousemask(BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
    mouseinterval(0);
    const char *nc = getenv("NO_COLOR");
    int colours = 0;
    if (!(nc && *nc) && has_colors()) {
        start_color();
        use_default_colors();
        colours = COLORS >= 256 ? 256 : 8;
    }
    a->colours = colours;
    ascii_mode = a->ascii;
    short bg = -1;
    set_attr(UA_NORMAL, 1, -1, bg, A_NORMAL, colours);
    set_attr(UA_TITLE, 2, COLOR_BLACK, COLOR_CYAN, A_BOLD, colours);
    set_attr(UA_HEADER, 3, COLOR_CYAN, bg, A_BOLD | A_UNDERLINE, colours);
    set_attr(UA_SELECTED, 4, COLOR_BLACK, COLOR_WHITE, A_REVERSE * (colours == 0), colours);
    set_attr(UA_STATUS, 5, COLOR_BLACK, COLOR_CYAN, colours ? A_NORMAL : A_REVERSE, colours);
    set_attr(UA_DIM, 6, colours >= 256 ? 244 : COLOR_BLUE, bg, colours ? A_NORMAL : A_DIM, colours);
    set_attr(UA_ERROR, 7, COLOR_RED, bg, colours ? A_NORMAL : A_BOLD, colours);
    set_attr(UA_WARN, 8, COLOR_YELLOW, bg, colours ? A_NORMAL : A_BOLD, colours);
    set_attr(UA_ACCENT, 9, COLOR_MAGENTA, bg, A_NORMAL, colours);
    set_attr(UA_GOOD, 10, COLOR_GREEN, bg, A_NORMAL, colours);
    if (colours == 0) {
        attrs[UA_TITLE] = A_REVERSE | A_BOLD;
        attrs[UA_HEADER] = A_BOLD | A_UNDERLINE;
        attrs[UA_SELECTED] = A_REVERSE;
    }
    getmaxyx(stdscr, a->rows_on_screen, a->cols_on_screen);
    return 0;
}

void term_done(void)
{
    restore();
}

void term_size(struct app *a)
{
    if (vscreen) {
        a->rows_on_screen = vrows;
        a->cols_on_screen = vcols;
        return;
    }
    getmaxyx(stdscr, a->rows_on_screen, a->cols_on_screen);
}

/* The rest of an escape sequence curses did not recognise (a TERM that does not match the
 * terminal): read it whole, map the common keys, and never let its bytes count as keys of
 * their own ("\e[4~" is not Esc, '[', '4' and '~'). */
static int escape_sequence(void)
{
    /* curses has waited ESCDELAY (25 ms) after the Esc already: what followed it then is in
     * its buffer. A little more for a sequence split across reads; a lone Esc pays only this
     * much beyond ESCDELAY (it is a key people press to go back). */
    timeout(10);
    int c = getch();
    if (c == ERR)
        return 27; /* a real Esc */
    if (c != '[' && c != 'O') {
        ungetch(c); /* Alt+key: Esc, then the key */
        return 27;
    }
    int param = 0, final = ERR;
    for (int i = 0; i < 16; i++) {
        int d = getch();
        if (d == ERR)
            break;
        if (d >= '0' && d <= '9') {
            param = param * 10 + (d - '0');
            continue;
        }
        if (d == ';')
            continue;
        final = d;
        break;
    }
    switch (final) {
    case 'A':
        return KEY_UP;
    case 'B':
        return KEY_DOWN;
    case 'C':
        return KEY_RIGHT;
    case 'D':
        return KEY_LEFT;
    case 'H':
        return KEY_HOME;
    case 'F':
        return KEY_END;
    case '~':
        switch (param) {
        case 1:
        case 7:
            return KEY_HOME;
        case 4:
        case 8:
            return KEY_END;
        case 5:
            return KEY_PPAGE;
        case 6:
            return KEY_NPAGE;
        default:
            return TERM_KEY_IGNORED;
        }
    default:
        return TERM_KEY_IGNORED;
    }
}

/* Whether the terminal hung up: its side of the line reports a hang-up or an error. */
static bool hung_up(void)
{
    struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL));
}

int term_key(int timeout_ms)
{
    if (stop_signal) {
        /* Stopping: no key counts any more (after a hang-up none can come). */
        if (timeout_ms > 0)
            napms(timeout_ms < 20 ? timeout_ms : 20);
        return ERR;
    }
    timeout(timeout_ms);
    int c = getch();
    if (c == ERR && hung_up()) {
        /* The terminal went without a SIGHUP reaching dlqx (a shell that does not pass it
         * on): the same hang-up. */
        stop_signal = SIGHUP;
        return ERR;
    }
    if (c == 3) {
        /* Ctrl-C as a key (a terminal without ISIG): the same as SIGINT. */
        stop_signal = SIGINT;
        return ERR;
    }
    return c == 27 ? escape_sequence() : c;
}

enum term_mouse term_mouse_event(int *y, int *x)
{
    MEVENT ev;
    if (getmouse(&ev) != OK)
        return TM_NONE;
    *y = ev.y;
    *x = ev.x;
    if (ev.bstate & BUTTON4_PRESSED)
        return TM_WHEEL_UP;
    if (ev.bstate & BUTTON5_PRESSED)
        return TM_WHEEL_DOWN;
    if (!(ev.bstate & BUTTON1_PRESSED))
        return TM_NONE;
    /* A second press on the same place soon after the first is a double click. */
    static double last;
    static int last_y = -1, last_x = -1;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    double t = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
    bool twice = ev.y == last_y && ev.x == last_x && t - last < 0.4;
    last = twice ? 0 : t;
    last_y = ev.y;
    last_x = ev.x;
    return twice ? TM_DOUBLE_CLICK : TM_CLICK;
}

bool term_input_pending(void)
{
    struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
    return poll(&p, 1, 0) > 0;
}

static void vfill(int y, int x, int width, enum ui_attr attr)
{
    for (int c = x; y >= 0 && y < vrows && c < x + width && c < vcols; c++)
        if (c >= 0)
            vscreen[y * vcols + c] = (struct vcell){" ", attr};
}

/* Safe, fitted text into the cells from (y, x), as curses would place it. */
static void vput(int y, int x, const char *text, enum ui_attr attr)
{
    size_t len = strlen(text);
    for (size_t i = 0; i < len && x < vcols && y >= 0 && y < vrows;) {
        size_t n = 1;
        while (i + n < len && ((unsigned char)text[i + n] & 0xC0) == 0x80 && n < 7)
            n++;
        int w = (int)sanitize_width(text + i, n);
        if (x >= 0) {
            struct vcell *cell = &vscreen[y * vcols + x];
            memcpy(cell->ch, text + i, n);
            cell->ch[n] = '\0';
            cell->attr = attr;
            if (w == 2 && x + 1 < vcols)
                vscreen[y * vcols + x + 1] = (struct vcell){"", attr};
        }
        x += w > 0 ? w : 0;
        i += n;
    }
}

void term_virtual(int rows, int cols)
{
    free(vscreen);
    vscreen = NULL;
    vrows = vcols = 0;
    if (rows <= 0 || cols <= 0)
        return;
    vscreen = calloc((size_t)rows * (size_t)cols, sizeof *vscreen);
    if (!vscreen)
        return;
    vrows = rows;
    vcols = cols;
    for (int y = 0; y < rows; y++)
        vfill(y, 0, cols, UA_NORMAL);
}

bool term_virtual_row(int y, char *out, size_t len, int *attr)
{
    if (!vscreen || y < 0 || y >= vrows || len == 0)
        return false;
    size_t w = 0, end = 0;
    for (int x = 0; x < vcols; x++) {
        const char *ch = vscreen[y * vcols + x].ch;
        size_t n = strlen(ch);
        if (w + n >= len)
            break;
        memcpy(out + w, ch, n);
        w += n;
        if (n && strcmp(ch, " ") != 0)
            end = w;
    }
    out[end] = '\0';
    if (attr)
        *attr = (int)vscreen[y * vcols].attr;
    return true;
}

void term_clear(void)
{
    if (vscreen) {
        for (int y = 0; y < vrows; y++)
            vfill(y, 0, vcols, UA_NORMAL);
        return;
    }
    erase();
}

void term_flush(void)
{
    if (!vscreen && !term_gone())
        refresh();
}

static unsigned bells;

void term_bell(void)
{
    bells++;
    if (!vscreen && !term_gone())
        beep();
}

unsigned term_bells(void)
{
    return bells;
}

void term_redraw_all(void)
{
    if (!vscreen)
        clearok(stdscr, TRUE);
}

void term_cursor_at(int y, int x)
{
    if (vscreen)
        return;
    curs_set(1);
    move(y, x);
}

void term_cursor_hide(void)
{
    if (!vscreen)
        curs_set(0);
}

void term_suspend(void)
{
    def_prog_mode();
    endwin();
    ui_stderr_pause();
}

void term_resume(void)
{
    ui_stderr_resume();
    reset_prog_mode();
    term_redraw_all();
}

/* Text made safe and fitted, on the terminal or the screen in memory. */
static void put(int y, int x, const char *fitted, enum ui_attr attr)
{
    if (vscreen) {
        vput(y, x, fitted, attr);
        return;
    }
    attron(attrs[attr]);
    mvaddstr(y, x, fitted);
    attroff(attrs[attr]);
}

void draw_safe(int y, int x, int width, const char *safe, enum ui_attr attr)
{
    if (width <= 0)
        return;
    struct strbuf sb;
    sb_init(&sb);
    /* Already sanitized, but fitted (and re-checked: sanitizing safe text is the identity). */
    sanitize_fit(&sb, safe, strlen(safe), width, SAN_PAD | (ascii_mode ? SAN_ASCII : 0));
    put(y, x, sb.buf ? sb.buf : "", attr);
    sb_free(&sb);
}

void draw_text(int y, int x, int width, const void *data, size_t len, enum ui_attr attr)
{
    if (width <= 0)
        return;
    struct strbuf sb;
    sb_init(&sb);
    sanitize_fit(&sb, data, len, width, SAN_PAD | (ascii_mode ? SAN_ASCII : 0));
    put(y, x, sb.buf ? sb.buf : "", attr);
    sb_free(&sb);
}

void draw_textf(int y, int x, int width, enum ui_attr attr, const char *fmt, ...)
{
    struct strbuf sb;
    va_list ap;
    sb_init(&sb);
    va_start(ap, fmt);
    sb_vaddf(&sb, fmt, ap);
    va_end(ap);
    draw_text(y, x, width, sb.buf, sb.len, attr);
    sb_free(&sb);
}

void draw_fill(int y, int x, int width, enum ui_attr attr)
{
    if (width <= 0)
        return;
    if (vscreen) {
        vfill(y, x, width, attr);
        return;
    }
    attron(attrs[attr]);
    mvhline(y, x, ' ', width);
    attroff(attrs[attr]);
}

const char *glyph(const struct app *a, int which)
{
    static const char *const utf8[G_COUNT] = {"│", "├─", "└─", "█", "▾", "▸"};
    static const char *const ascii[G_COUNT] = {"|", "|-", "`-", "#", "v", ">"};
    if ((unsigned)which >= G_COUNT)
        return "";
    return a->ascii ? ascii[which] : utf8[which];
}
