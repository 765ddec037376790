/* A solve in a child process: the only way to hold CBC to a wall-clock limit, since its
 * own limit is checked between phases (preprocessing and the root LP of a 100k-column
 * model can take minutes). The child writes a fixed header and, with a schedule, the
 * R, S and C matrices to a pipe; the parent waits with a deadline. */
#include "isolate.h"

#include "cbc_log.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include "xengine/timer.h"

typedef struct wire {
    int rc, status, has_sol, nvars, nrows, nints;
    double objective, bound, gap, solve_time, time_best, time_first;
    char msg[512];
} wire;

static int write_all(int fd, const void *p, size_t len)
{
    const char *c = p;
    while (len) {
        ssize_t k = write(fd, c, len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        c += k;
        len -= (size_t)k;
    }
    return 0;
}

/* Reads len bytes before the deadline, or until *intr (may be NULL) becomes nonzero,
 * which it checks every 50 ms; -1 on EOF, error, time out or interrupt (*late set). */
static int read_all(int fd, void *p, size_t len, double deadline, const volatile sig_atomic_t *intr, int *late)
{
    char *c = p;
    while (len) {
        double left = deadline - xe_now();
        if (left <= 0 || xe_interrupted(intr)) {
            *late = 1;
            return -1;
        }
        struct pollfd pf = {fd, POLLIN, 0};
        int r = poll(&pf, 1, (int)(fmin(left, intr ? 0.05 : left) * 1000.0) + 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) continue; /* time-out is caught at the loop head */
        ssize_t k = read(fd, c, len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        c += k;
        len -= (size_t)k;
    }
    return 0;
}

static void child(const xe_instance *in, const xe_milp_opts *o, xe_milp_solve_fn solve, int fd, pid_t parent)
{
    xe_milp_result r;
    xe_err e = {{0}};
    wire w;
    memset(&w, 0, sizeof w);
    /* A crash here must end this process, whatever handlers the caller installed (a
     * test framework's longjmp, a host's fault handler would run the caller's code in
     * the child): CBC 2.10 crashes in CglPreProcess::postProcess when its limit stops
     * preprocessing (seen in test_plan's 0.4 s solves); the parent then reads the end of
     * the pipe at once and reports a crash instead of waiting for its deadline. */
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t k = 0; k < sizeof fatal / sizeof *fatal; k++) signal(fatal[k], SIG_DFL);
#ifdef __linux__
    /* The solve must not outlive the planner: a planner killed (SIGTERM, SIGKILL: a
     * job runner's timeout) cannot kill its child, which ran on for the rest of its
     * limit at full CPU. The kernel sends SIGKILL when the forking thread ends; a parent
     * already gone before the prctl is caught by getppid. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(1);
#else
    (void)parent;
#endif
    /* what the solver's runtime prints when it dies ("terminate called after throwing an
     * instance of 'std::bad_alloc'", twice per neighbourhood under a memory limit: 36
     * lines in a new user's trial) is not the user's to read: the parent reports the
     * failure in one line. Kept with progress on (o->progress), whose lines this process
     * prints on stderr. */
    if (!o->progress) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0) {
            dup2(devnull, STDERR_FILENO);
            close(devnull);
        }
    }
    xe_cbc_log_after_fork();
    w.rc = solve(in, o, &r, &e);
    w.status = (int)r.status;
    w.objective = r.objective;
    w.bound = r.bound;
    w.gap = r.gap;
    w.solve_time = r.solve_time;
    w.time_best = r.time_best;
    w.time_first = r.time_first;
    w.nvars = r.nvars;
    w.nrows = r.nrows;
    w.nints = r.nints;
    w.has_sol = w.rc == XE_OK && r.sol.R != NULL;
    memcpy(w.msg, e.msg, sizeof w.msg);
    size_t nn = (size_t)in->g->n * (size_t)in->g->n * (size_t)in->ndev;
    int bad = write_all(fd, &w, sizeof w);
    if (!bad && w.has_sol)
        bad = write_all(fd, r.sol.R, nn) || write_all(fd, r.sol.S, nn) || write_all(fd, r.sol.C, nn * (size_t)in->ndev);
    _exit(bad ? 1 : 0);
}

int xe_milp_isolated(const xe_instance *in, const xe_milp_opts *o, xe_milp_solve_fn solve,
                     xe_milp_result *res, xe_err *err)
{
    memset(res, 0, sizeof *res);
    res->objective = INFINITY;
    res->bound = -INFINITY;
    res->gap = INFINITY;
    int fds[2];
    if (pipe(fds) != 0) return xe_err_set(err, XE_ESOLVER, "cannot create a pipe for the solver: %s", strerror(errno));
    fflush(NULL);
    double t0 = xe_now();
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return xe_err_set(err, XE_ESOLVER, "cannot start the solver process: %s", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        child(in, o, solve, fds[1], parent);
    }
    close(fds[1]);
    double deadline = t0 + o->time_limit + xe_milp_grace(o->time_limit);
    int late = 0, rc = XE_OK;
    wire w;
    if (read_all(fds[0], &w, sizeof w, deadline, o->interrupt, &late) == 0) {
        res->status = (xe_milp_status)w.status;
        res->objective = w.objective;
        res->bound = w.bound;
        res->gap = w.gap;
        res->solve_time = w.solve_time;
        res->time_best = w.time_best;
        res->time_first = w.time_first;
        res->nvars = w.nvars;
        res->nrows = w.nrows;
        res->nints = w.nints;
        rc = w.rc;
        if (rc) xe_err_set(err, rc, "%s", w.msg);
        if (rc == XE_OK && w.has_sol) {
            size_t nn = (size_t)in->g->n * (size_t)in->g->n * (size_t)in->ndev;
            if (xe_stages_init(&res->sol, in->g->n, in->ndev)) {
                rc = xe_err_set(err, XE_ENOMEM, "out of memory reading the solver's schedule");
            } else if (read_all(fds[0], res->sol.R, nn, deadline + 5, NULL, &late) ||
                       read_all(fds[0], res->sol.S, nn, deadline + 5, NULL, &late) ||
                       read_all(fds[0], res->sol.C, nn * (size_t)in->ndev, deadline + 5, NULL, &late) ||
                       xe_stages_check(in, &res->sol, err)) {
                xe_stages_clear(&res->sol);
                rc = xe_err_set(err, XE_ESOLVER, "the solver process returned an unusable schedule");
            }
        }
    } else if (late) {
        res->killed = 1;
        res->status = XE_MILP_NO_SOLUTION;
    } else {
        rc = xe_err_set(err, XE_ESOLVER, "the solver process ended without an answer");
    }
    int no_answer = rc == XE_ESOLVER && !late;
    close(fds[0]);
    if (late || rc) kill(pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (no_answer && WIFSIGNALED(st) && WTERMSIG(st) != SIGKILL) /* how it ended: e.g. SIGABRT for bad_alloc */
        xe_err_set(err, XE_ESOLVER, "the solver process ended without an answer (signal %d, %s)", WTERMSIG(st),
                   strsignal(WTERMSIG(st)));
    if (res->killed) res->solve_time = xe_now() - t0;
    return rc;
}

double xe_milp_grace(double time_limit) { return fmin(1.0, fmax(0.1, 0.1 * time_limit)); }

double xe_milp_limit_within(double seconds)
{
    if (seconds <= 1.1) return seconds - 0.1; /* limit < 1 s: grace 0.1 s */
    if (seconds <= 11.0) return seconds / 1.1; /* grace 10% of the limit */
    return seconds - 1.0;                     /* grace 1 s */
}
