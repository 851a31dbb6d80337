/*
 * peek_input: a live queue read through a `dlqx peek` child (peek_input.h), shared by the
 * reading commands that take a QUEUE where they take snapshot files.
 */
#include "peek_input.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exitcodes.h"
#include "sanitize.h"
#include "util.h"

static const char *self_path;

void cli_peek_self(const char *argv0)
{
    self_path = argv0 && strchr(argv0, '/') ? argv0 : NULL;
}

pid_t cli_peek_child(const char *cmd, const char *queue, char **fwd, int n_fwd)
{
    int fd[2];
    if (pipe(fd) != 0) {
        san_eprintf("dlqx %s: cannot make a pipe: %s\n", cmd, strerror(errno));
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        san_eprintf("dlqx %s: cannot start the peek: %s\n", cmd, strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        char **av = xcalloc((size_t)n_fwd + 4, sizeof *av);
        int k = 0;
        av[k++] = (char *)(uintptr_t) "dlqx";
        av[k++] = (char *)(uintptr_t) "peek";
        av[k++] = (char *)(uintptr_t)queue;
        for (int j = 0; j < n_fwd; j++)
            av[k++] = fwd[j];
        av[k] = NULL;
        dup2(fd[1], STDOUT_FILENO);
        close(fd[0]);
        close(fd[1]);
        if (self_path)
            execv(self_path, av);
        execv("/proc/self/exe", av);
        san_eprintf("dlqx %s: cannot run dlqx peek: %s\n", cmd, strerror(errno));
        _exit(EXIT_IOERR);
    }
    dup2(fd[0], STDIN_FILENO);
    close(fd[0]);
    close(fd[1]);
    return pid;
}

enum bopt_next cli_broker_arg(struct broker_opts *b, int argc, char **argv, int *i, char **fwd,
                              int *n_fwd)
{
    int from = *i;
    enum bopt_next r = broker_opts_arg(b, argc, argv, i);
    if (r == BOPT_CONSUMED)
        for (int k = from; k <= *i; k++)
            fwd[(*n_fwd)++] = argv[k];
    return r;
}

int cli_peek_wait(pid_t pid)
{
    int st = 0;
    fclose(stdin); /* a peek still writing (the store refused a message) stops: EPIPE */
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(st) ? WEXITSTATUS(st) : EXIT_IOERR;
}
