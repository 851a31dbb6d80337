/*
 * stopsig: SIGINT, SIGTERM and SIGHUP as a request to stop (stopsig.h).
 */
#include "stopsig.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t caught;

static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};

static void on_stop(int sig)
{
    caught = sig;
    /* The next one is not caught: a second Ctrl-C ends dlqx at once. */
    signal(sig, SIG_DFL);
}

static void set_all(void (*handler)(int))
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++)
        sigaction(stop_signals[i], &sa, NULL);
}

void stopsig_catch(void)
{
    caught = 0;
    set_all(on_stop);
}

void stopsig_release(void)
{
    set_all(SIG_DFL);
}

int stopsig_caught(void)
{
    return caught;
}
