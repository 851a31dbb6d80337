/*
 * term: the one owner of the terminal (htop's CRT) — set-up and tear-down, the keys, the
 * cursor, handing the terminal to another program ($EDITOR) and taking it back; the drawing
 * calls are declared in ui.h and defined in term.c too. No other file in ui/ includes curses
 * (tests/curses_owner.sh checks it; termcap.c, which asks terminfo before the screen is
 * taken, is the one other): the keys the rest of ui/ compares with are the TERM_KEY_* below.
 *
 * Ownership: term.c holds curses' state for the whole run; nothing here is allocated for
 * the caller.
 */
#ifndef DLQX_UI_TERM_H
#define DLQX_UI_TERM_H

#include <stdbool.h>
#include <stddef.h>

#include "keys.h"

struct app;

/* A screen in memory instead of the terminal, rows × cols (0: the terminal again), for
 * tests: the drawing calls and term_size use it, nothing is written to the terminal, and
 * term_virtual_row reads what a person would see on row y (trailing blanks left out), with
 * the attribute (an enum ui_attr) of its first column; text is drawn in UTF-8. */
void term_virtual(int rows, int cols);
bool term_virtual_row(int y, char *out, size_t len, int *attr);
/* termcap.c: whether TERM is a terminal the explorer can draw on (known to terminfo, with
 * cursor addressing and clear); false, with one sentence on stderr naming the CLI, if not. */
bool term_capable(void);
/* Starts curses; -1 (reported) when there is no terminal. */
int term_init(struct app *a);
void term_done(void);
void term_size(struct app *a);

/* The next key, or TERM_KEY_NONE after timeout_ms (0: do not wait; negative: wait). */
int term_key(int timeout_ms);
/* After term_key returned TERM_KEY_MOUSE: what the mouse did, and where (row, column). */
enum term_mouse { TM_NONE, TM_CLICK, TM_DOUBLE_CLICK, TM_WHEEL_UP, TM_WHEEL_DOWN };
enum term_mouse term_mouse_event(int *y, int *x);
/* Whether a key is waiting to be read (long work ends its slice early for it). */
bool term_input_pending(void);
void term_clear(void);
void term_flush(void);
void term_redraw_all(void);
/* The terminal's bell (curses' beep: audible, or the screen flashes where the terminal says
 * so); on the screen in memory it is only counted, for the tests (term_bells). */
void term_bell(void);
unsigned term_bells(void);
/* The text cursor: shown at (y, x) while a line is typed, hidden otherwise. */
void term_cursor_at(int y, int x);
void term_cursor_hide(void);
/* Another program ($EDITOR) gets the terminal: curses steps aside and standard error is the
 * terminal's again; term_resume takes it back and the whole screen is drawn anew. */
void term_suspend(void);
void term_resume(void);
/* While $EDITOR owns the terminal: standard error on the terminal again, then captured again
 * (ui/cmd_ui.c); nothing when it is not captured. term_suspend and term_resume call them. */
void ui_stderr_pause(void);
void ui_stderr_resume(void);
/* The signal that asked the explorer to stop (SIGINT — or Ctrl-C read as a key —, SIGTERM,
 * SIGHUP), 0 while none did. The loop, a pass and a peek check it and take the graceful way
 * out; from then on term_key returns no key. */
int term_stop_signal(void);
/* Whether the terminal hung up (SIGHUP, and the terminal no longer answers): nothing is
 * drawn on it any more. */
bool term_gone(void);

#endif
