/*
 * keys: the codes term_key returns besides characters (TERM_KEY_*). A header of its own, with
 * no dependency, so that the action table (actions.c) can name keys without the terminal's
 * header (term.h, which needs struct app, which needs the action table).
 *
 * Ownership: only constants.
 */
#ifndef DLQX_UI_KEYS_H
#define DLQX_UI_KEYS_H

/* What term_key returns besides characters: the keys' codes (curses' own values, checked
 * in term.c, so that the rest of ui/ needs no curses to compare with them). */
enum term_keycode {
    TERM_KEY_NONE = -1,    /* no key before the timeout */
    TERM_KEY_IGNORED = -2, /* a key that stands for nothing (a sequence read and dropped) */
    TERM_KEY_ESC = 27,
    TERM_KEY_DEL = 127, /* what most terminals send for Backspace */
    TERM_KEY_DOWN = 0402,
    TERM_KEY_UP = 0403,
    TERM_KEY_LEFT = 0404,
    TERM_KEY_RIGHT = 0405,
    TERM_KEY_HOME = 0406,
    TERM_KEY_BACKSPACE = 0407,
    TERM_KEY_F1 = 0411,
    TERM_KEY_NPAGE = 0522,
    TERM_KEY_PPAGE = 0523,
    TERM_KEY_ENTER = 0527,
    TERM_KEY_END = 0550,
    TERM_KEY_MOUSE = 0631,  /* then term_mouse_event says what the mouse did */
    TERM_KEY_RESIZE = 0632, /* the terminal changed size */
};
/* The key Ctrl and c make ('b' gives 2). */
#define TERM_KEY_CTRL(c) ((c)&0x1f)

#endif
