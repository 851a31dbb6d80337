/*
 * stopsig: the signals that ask a command to stop — SIGINT (Ctrl-C), SIGTERM, and SIGHUP (the
 * SSH session dropped) — caught the same way by every command that must settle before it
 * exits (a pass's copies in flight, a tap queue to delete): the first sets a flag the work
 * polls; after it the signal's default action is back, so a second one ends dlqx at once.
 * No SA_RESTART: a wait in poll or read ends early with EINTR.
 *
 * Ownership: one process-wide flag; nothing is allocated.
 */
#ifndef DLQX_STOPSIG_H
#define DLQX_STOPSIG_H

/* Catches the three signals (and forgets one caught before). */
void stopsig_catch(void);
/* Gives them their default action again. */
void stopsig_release(void);
/* The signal caught since stopsig_catch, or 0. */
int stopsig_caught(void);

#endif
