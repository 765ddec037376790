/* Internal: CBC's own log, read while it solves, for the times of its improvements.
 *
 * Why: CBC 2.10's C interface hands its message callback (Cbc_registerCallBack) only to
 * the model it was registered on; the branch and bound runs on a copy (after
 * preprocessing) that prints to stdout and never calls back. Timing improvements by the
 * callback therefore saw only the MIP start and what preprocessing found: on U-Net at
 * 60% of the peak, one GPU, it said 0.65-0.66 s for an optimum CBC's log shows found at
 * 10.47 s. The log's own lines carry the objective and CBC's elapsed seconds
 * ("Integer solution of 32.385 found by ... (10.47 seconds)"), so the solve's stdout is
 * led into a pipe and a reader thread parses it line by line. */
#ifndef XE_MILP_CBC_LOG_H
#define XE_MILP_CBC_LOG_H

#include <pthread.h>

typedef struct xe_cbc_log {
    double t0;        /* xe_now() when the solve started (CBC's seconds count from here) */
    double objconst;  /* added to every objective in the log (a reduced window model) */
    int print;        /* 1: a progress line on stderr at most every second */
    /* what the log said so far (written by the reader thread; read after stop) */
    double incumbent; /* best objective seen; INFINITY before any */
    double bound;     /* latest "best possible"; -INFINITY before any */
    double tbest;     /* CBC's seconds at the last strict improvement; -1 before any */
    double tfirst;    /* CBC's seconds at the first solution; -1 before any */
    /* private */
    double last_print;
    int rfd, saved_stdout, running;
    pthread_t thread;
    char line[1024];
    size_t len;
} xe_cbc_log;

/* Leads stdout (fd 1) into a pipe read by a thread that parses CBC's log; t0 and
 * objconst as above. On any failure (pipe, dup, thread) stdout goes to /dev/null instead
 * and the times stay unknown (-1): never an error. Pair with xe_cbc_log_stop. Solves
 * in threads of one process take turns between the two calls (fd 1 is the process's).
 * Objectives below CBC's print precision (8 significant digits) are not told apart: an
 * improvement smaller than that is timed at the earlier solution. */
void xe_cbc_log_start(xe_cbc_log *lg, double t0, double objconst, int print);

/* Flushes stdout, gives fd 1 back, waits for the reader to reach the end of the log. */
void xe_cbc_log_stop(xe_cbc_log *lg);

/* In a forked child that will solve: the lock above starts free (the parent's holder,
 * if any, is not in the child). */
void xe_cbc_log_after_fork(void);

/* One progress line on stderr: "[milp] T s  incumbent V  bound B  gap G". */
void xe_cbc_log_print(const xe_cbc_log *lg);

/* Parses one line of CBC's log into lg (exposed for the tests): "Integer solution of V
 * found ... (T seconds)", "... improved solution from A to V (T seconds)" (the
 * feasibility pump's mini branch and bound) and "After N nodes, M on tree, V best
 * solution, best possible B (T seconds)". Other lines are ignored. */
void xe_cbc_log_line(xe_cbc_log *lg, const char *line);

#endif
