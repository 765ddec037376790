/* CBC's log led through a pipe into a parser thread (see cbc_log.h for why). */
#include "cbc_log.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xengine/timer.h"

/* fd 1 belongs to the process: one solve at a time leads it into its pipe. Solves in
 * threads of one process (isolate = 0) therefore take turns from xe_cbc_log_start to
 * xe_cbc_log_stop; without it a second solve saved the first one's pipe as "stdout" and
 * the first reader never saw the end of its log (a hang). The only mutable state at file
 * scope, and it is a lock: reset in a forked solver child (xe_cbc_log_after_fork). */
static pthread_mutex_t stdout_lock = PTHREAD_MUTEX_INITIALIZER;

void xe_cbc_log_after_fork(void) { pthread_mutex_init(&stdout_lock, NULL); }

/* CBC's elapsed seconds at the end of a line: the number in its last "(... seconds)";
 * -1 when there is none. */
static double line_seconds(const char *line)
{
    const char *open = strrchr(line, '(');
    if (!open || !strstr(open, " seconds)")) return -1.0;
    char *end;
    double s = strtod(open + 1, &end);
    return end != open + 1 && isfinite(s) && s >= 0 ? s : -1.0;
}

/* 1 when v is a strict improvement (it is then the incumbent, timed at secs). */
static int improved(xe_cbc_log *lg, double v, double secs)
{
    if (!(v < lg->incumbent - 1e-9 * fmax(1.0, fabs(v)))) return 0;
    lg->incumbent = v;
    if (secs >= 0) {
        lg->tbest = secs;
        if (lg->tfirst < 0) lg->tfirst = secs;
    } else { /* no time on the line: unknown, the caller's fallback applies */
        lg->tbest = -1;
    }
    return 1;
}

void xe_cbc_log_print(const xe_cbc_log *lg)
{
    double t = xe_now();
    char inc[32] = "-", bnd[32] = "-", gap[32] = "-";
    if (isfinite(lg->incumbent)) snprintf(inc, sizeof inc, "%.6g", lg->incumbent);
    if (isfinite(lg->bound)) snprintf(bnd, sizeof bnd, "%.6g", lg->bound);
    if (isfinite(lg->incumbent) && isfinite(lg->bound) && lg->incumbent > 0)
        snprintf(gap, sizeof gap, "%.2f%%", (lg->incumbent - lg->bound) / lg->incumbent * 100.0);
    fprintf(stderr, "[milp] %7.1fs  incumbent %-12s bound %-12s gap %s\n", t - lg->t0, inc, bnd, gap);
}

/* The number right after key at p (p points at key): 1 with *v set when there is a
 * finite one, else 0. */
static int num_after(const char *p, const char *key, double *v)
{
    char *end;
    const char *s = p + strlen(key);
    *v = strtod(s, &end);
    return end != s && isfinite(*v);
}

void xe_cbc_log_line(xe_cbc_log *lg, const char *line)
{
    const char *p;
    double v, bd;
    int better = 0;
    if ((p = strstr(line, "Integer solution of "))) {
        /* Cbc0004I, 0012I, 0016I, 0024I, 0033I: "... of V found ... (T seconds)" */
        if (!num_after(p, "Integer solution of ", &v)) return;
        better = improved(lg, v + lg->objconst, line_seconds(line));
    } else if ((p = strstr(line, "improved solution from ")) && (p = strstr(p, " to "))) {
        /* the feasibility pump's mini branch and bound (Cbc0038I): "... improved solution
         * from A to B (T seconds)"; its Cbc0012I line comes only when the pump ends */
        if (!num_after(p, " to ", &v)) return;
        better = improved(lg, v + lg->objconst, line_seconds(line));
    } else if ((p = strstr(line, "After ")) && strstr(line, " best solution, best possible ")) {
        /* Cbc0010I: "After N nodes, M on tree, V best solution, best possible B (T seconds)" */
        const char *q = strstr(p, " on tree, ");
        if (!q) return;
        const char *b = strstr(q, "best possible ");
        if (!b) return;
        if (num_after(q, " on tree, ", &v) && v < 1e49) better = improved(lg, v + lg->objconst, line_seconds(line));
        if (num_after(b, "best possible ", &bd) && fabs(bd) < 1e49) lg->bound = bd + lg->objconst;
    } else {
        return;
    }
    double t = xe_now();
    if (lg->print && (better || t - lg->last_print >= 1.0)) { /* every improvement, else at most 1/s */
        lg->last_print = t;
        xe_cbc_log_print(lg);
    }
}

/* The line collected so far, parsed and emptied. */
static void parse_line(xe_cbc_log *lg)
{
    lg->line[lg->len] = '\0';
    xe_cbc_log_line(lg, lg->line);
    lg->len = 0;
}

static void *reader(void *arg)
{
    xe_cbc_log *lg = arg;
    char buf[4096];
    for (;;) {
        ssize_t k = read(lg->rfd, buf, sizeof buf);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        for (ssize_t i = 0; i < k; i++) {
            if (buf[i] == '\n') parse_line(lg);
            else if (lg->len + 1 < sizeof lg->line) lg->line[lg->len++] = buf[i]; /* a longer line
                                                                is cut: none we parse is */
        }
    }
    if (lg->len) parse_line(lg); /* the last line, without its newline */
    return NULL;
}

/* fd 1 onto /dev/null (nothing when /dev/null cannot be opened). */
static void devnull_onto_stdout(void)
{
    int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0 && devnull != STDOUT_FILENO) {
        dup2(devnull, STDOUT_FILENO);
        close(devnull);
    }
}

/* The fallback without a reader: stdout saved, then onto /dev/null; times unknown. */
static void to_devnull(xe_cbc_log *lg)
{
    lg->saved_stdout = dup(STDOUT_FILENO);
    if (lg->saved_stdout >= 0) devnull_onto_stdout();
}

void xe_cbc_log_start(xe_cbc_log *lg, double t0, double objconst, int print)
{
    memset(lg, 0, sizeof *lg);
    lg->t0 = t0;
    lg->objconst = objconst;
    lg->print = print;
    lg->incumbent = INFINITY;
    lg->bound = -INFINITY;
    lg->tbest = lg->tfirst = -1;
    lg->last_print = t0;
    lg->rfd = lg->saved_stdout = -1;
    pthread_mutex_lock(&stdout_lock); /* released by xe_cbc_log_stop */
    fflush(stdout);
    /* stdout closed: occupy fd 1 first, so the pipe below cannot land on it */
    if (fcntl(STDOUT_FILENO, F_GETFD) == -1) devnull_onto_stdout();
    int fds[2];
    if (pipe(fds) != 0) {
        to_devnull(lg);
        return;
    }
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    lg->saved_stdout = dup(STDOUT_FILENO);
    if (lg->saved_stdout < 0 || dup2(fds[1], STDOUT_FILENO) < 0) {
        if (lg->saved_stdout >= 0) close(lg->saved_stdout);
        lg->saved_stdout = -1;
        close(fds[0]);
        close(fds[1]);
        to_devnull(lg);
        return;
    }
    close(fds[1]); /* fd 1 is now the only write end: the reader sees EOF when it goes */
    lg->rfd = fds[0];
    /* progress asked for: CBC's lines reach the reader as printed, not per 4 KiB block
     * (glibc allows the change after output; stdout stays line-buffered afterwards) */
    if (print) setvbuf(stdout, NULL, _IOLBF, BUFSIZ);
    if (pthread_create(&lg->thread, NULL, reader, lg) != 0) {
        close(lg->rfd);
        lg->rfd = -1;
        devnull_onto_stdout();
        return;
    }
    lg->running = 1;
}

void xe_cbc_log_stop(xe_cbc_log *lg)
{
    fflush(stdout);
    if (lg->saved_stdout >= 0) {
        dup2(lg->saved_stdout, STDOUT_FILENO); /* closes the pipe's write end */
        close(lg->saved_stdout);
        lg->saved_stdout = -1;
    }
    if (lg->running) {
        pthread_join(lg->thread, NULL);
        lg->running = 0;
    }
    if (lg->rfd >= 0) close(lg->rfd);
    lg->rfd = -1;
    pthread_mutex_unlock(&stdout_lock);
}
