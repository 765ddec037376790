/* xengine CLI — one updating progress line on a terminal.
 *
 * The solvers print progress as whole lines on stderr ("[milp]   3.0s  incumbent ...",
 * at most one a second). On a terminal `solve` shows them as one line rewritten in
 * place: while a solver runs, stderr is a pipe read by a small relay process, which
 * writes each progress line to the terminal as "\r<line>\033[K" and any other line
 * (a warning) as a line of its own. A process rather than a thread, so that the solver
 * may fork (src/milp/isolate.c) without a second thread in its parent. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

/* Writes all of buf to fd (EINTR retried; other errors drop the output). */
static void put(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t k = write(fd, buf, len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return;
        buf += k;
        len -= (size_t)k;
    }
}

/* The relay: lines from in, to the terminal out. Never returns. */
static void relay(int in, int out)
{
    char line[1024];
    size_t len = 0;
    int open_line = 0; /* a progress line is shown without its newline */
    char chunk[4096];
    ssize_t got = 0, at = 0;
    for (;;) {
        if (at == got) { /* refill: one read per chunk, not per byte */
            ssize_t k = read(in, chunk, sizeof chunk);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) break;
            got = k;
            at = 0;
        }
        char c = chunk[at++];
        if (c != '\n' && len + 1 < sizeof line) {
            line[len++] = c;
            continue;
        }
        if (c != '\n') continue; /* an overlong line is cut */
        if (len >= 2 && line[0] == '[' && memchr(line, ']', len < 12 ? len : 12)) { /* "[milp]", "[lns]", "[descent]" */
            put(out, "\r", 1);
            put(out, line, len);
            put(out, "\033[K", 3);
            open_line = 1;
        } else {
            if (open_line) put(out, "\n", 1);
            put(out, line, len);
            put(out, "\n", 1);
            open_line = 0;
        }
        len = 0;
    }
    if (len > 0) {
        if (open_line) put(out, "\n", 1);
        put(out, line, len);
        open_line = 1;
    }
    if (open_line) put(out, "\n", 1);
    _exit(0);
}

int xe_cli_progress_begin(xe_cli_progress *p)
{
    p->active = 0;
    if (!isatty(STDERR_FILENO)) return 0;
    int fds[2];
    if (pipe(fds) != 0) return 0;
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    if (saved < 0) {
        close(fds[0]);
        close(fds[1]);
        return 0;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        close(saved);
        return 0;
    }
    if (pid == 0) {
        signal(SIGINT, SIG_IGN); /* Ctrl-C: the relay outlives the solver to drain the pipe */
        close(fds[1]);
        relay(fds[0], saved);
    }
    close(fds[0]);
    if (dup2(fds[1], STDERR_FILENO) < 0) { /* leave stderr as it was */
        close(fds[1]);
        close(saved);
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        return 0;
    }
    close(fds[1]);
    p->active = 1;
    p->saved_fd = saved;
    p->pid = (int)pid;
    return 1;
}

void xe_cli_progress_end(xe_cli_progress *p)
{
    if (!p->active) return;
    fflush(stderr);
    dup2(p->saved_fd, STDERR_FILENO); /* closes our write end of the pipe: the relay sees EOF */
    close(p->saved_fd);
    while (waitpid((pid_t)p->pid, NULL, 0) < 0 && errno == EINTR) {
    }
    p->active = 0;
}
