/*
 * term: set-up, tear-down and the loop's primitives (the drawing calls are in ui.h).
 */
#ifndef DLQX_UI_TERM_H
#define DLQX_UI_TERM_H

#include <stdbool.h>

struct app;

/* termcap.c: whether TERM is a terminal the explorer can draw on (known to terminfo, with
 * cursor addressing and clear); false, with one sentence on stderr naming the CLI, if not. */
bool term_capable(void);
/* Starts curses; -1 (reported) when there is no terminal. */
int term_init(struct app *a);
void term_done(void);
void term_size(struct app *a);
/* A key that stands for nothing (an escape sequence that was read and dropped). */
#define TERM_KEY_IGNORED (-2)
/* The next key, or ERR (-1) after timeout_ms (negative: wait). KEY_RESIZE on a resize. */
int term_key(int timeout_ms);
/* After term_key returned KEY_MOUSE: what the mouse did, and where (screen row, column). */
enum term_mouse { TM_NONE, TM_CLICK, TM_DOUBLE_CLICK, TM_WHEEL_UP, TM_WHEEL_DOWN };
enum term_mouse term_mouse_event(int *y, int *x);
/* Whether a key is waiting to be read (long work ends its slice early for it). */
bool term_input_pending(void);
void term_clear(void);
void term_flush(void);
void term_redraw_all(void);
/* While $EDITOR owns the terminal: standard error on the terminal again, then captured again
 * (ui/cmd_ui.c); nothing when it is not captured. */
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
