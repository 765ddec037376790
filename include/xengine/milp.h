/* xengine — the exact planner: heterogeneous rematerialization as a MILP solved by CBC.
 *
 * Variables R, S, C (binary), FREE (binary) and U (continuous), constraints and objective
 * as in docs/formulation.md: Checkmate's model (Jain et al., MLSys 2020, eqs. 1-8) with
 * one copy of it per device, linked by explicit copy variables; with one device it is
 * exactly Checkmate's model. Solved through CBC's C API (coin/Cbc_C_Interface.h). */
#ifndef XENGINE_MILP_H
#define XENGINE_MILP_H

#include <signal.h>

#include "xengine/instance.h"
#include "xengine/stages.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xe_milp_opts {
    double time_limit; /* wall seconds for building the model and solving it, > 0 (60) */
    double rel_gap;    /* stop when (incumbent - bound) / incumbent <= rel_gap (default 1e-4) */
    int threads;       /* CBC threads, >= 1 (default 1) */
    int progress;      /* 1: a line on stderr at each improvement, else at most every
                          second, while solving */
    const xe_stages *start; /* MIP start (must pass xe_stages_check), or NULL */
    int isolate;       /* 1: solve in a child process killed at time_limit + grace
                          (xe_milp_grace), since CBC checks its
                          own limit only between phases and overruns it on large
                          models (default 0). Either way CBC's log is read from fd 1
                          (src/milp/cbc_log.h): solves of one process's threads with
                          isolate 0 take turns */
    /* Window solve for large-neighbourhood search (docs/lns.md): when fix is non-NULL
     * (it must pass xe_stages_check), every R, S and C of the stages outside
     * [fix_t0, fix_t1) is fixed to fix's value (and U, FREE of the stages outside
     * [fix_t0 - 1, fix_t1) to the values fix implies); those columns are substituted
     * out before CBC sees the model. fix also serves as the MIP start. The result is a
     * schedule of the whole instance; res->bound is then only a bound for this window
     * (default NULL: solve the whole model). */
    const xe_stages *fix;
    int fix_t0, fix_t1;
    const uint8_t *free_nodes; /* with fix: [n] flags, or NULL; R, S, C of a flagged node
                          stay free in every stage (and FREE of the flagged node or of a
                          flagged user, U of every stage with a free column), so that
                          [fix_t0, fix_t1) may then be empty (default NULL) */
    const int64_t *soft_budget; /* [ndev] bytes, or NULL: budget descent (docs/lns.md):
                          in's budgets stay the hard caps (start and fix must fit them),
                          these are soft: each stage's overflow above them (the most of
                          its steps, per device) is paid soft_weight seconds per byte
                          in the objective; res->objective is still the schedule's time and
                          res->bound is not a bound on it (default NULL) */
    double soft_weight;
    int relax;         /* 1: solve the LP relaxation only; res->bound is its optimum
                          (a lower bound on the stage-class optimum), no schedule,
                          status XE_MILP_NO_SOLUTION, or XE_MILP_INFEASIBLE (default 0) */
    int knapsack;      /* 1: add the knapsack rows (docs/formulation.md, constraint 9;
                          about n^2 / 2 rows and n^3 / 6 entries per device) to a
                          whole-model solve (ignored with fix): the same optimum, the
                          same LP bound, often a faster CBC (default 0) */
    const volatile sig_atomic_t *interrupt; /* optional: when it becomes nonzero, an
                          isolated solve (isolate) stops within about 50 ms as at its time
                          limit (killed, no answer); ignored without isolate (default
                          NULL). For Ctrl-C in `xengine solve` */
} xe_milp_opts;

typedef enum {
    XE_MILP_OPTIMAL = 0,    /* proven optimal within rel_gap */
    XE_MILP_FEASIBLE = 1,   /* a schedule, time limit reached before proof */
    XE_MILP_INFEASIBLE = 2, /* proven: no stage schedule fits the budgets */
    XE_MILP_NO_SOLUTION = 3 /* time limit reached, no schedule and no proof */
} xe_milp_status;

typedef struct xe_milp_result {
    xe_milp_status status;
    double objective;  /* seconds (serial compute + copy time); INFINITY without schedule */
    double bound;      /* seconds: proven lower bound on the stage-structured optimum */
    double gap;        /* (objective - bound) / objective, 0 when optimal */
    double solve_time; /* wall seconds spent in CBC */
    double time_best;  /* seconds from the start of Cbc_solve until the returned
                          schedule's objective was first reached, as CBC's own log
                          times it (elapsed seconds; src/milp/cbc_log.h): 0 when it is
                          the MIP start; solve_time when the log does not show it.
                          Before 2026-11-30 the time came from CBC's message callback,
                          which never sees the branch and bound: it was the time of
                          the last improvement found before branching (too early) or
                          solve_time (too late) */
    double time_first; /* seconds from the start of Cbc_solve to CBC's first schedule,
                          as its log times it (0 with a MIP start; solve_time when
                          unknown) */
    int nvars, nrows, nints; /* model size */
    int killed;        /* 1 when the isolated solve was stopped at the hard limit */
    xe_stages sol;     /* owned: the schedule found (zeroed when none); xe_stages_clear */
} xe_milp_result;

/* Seconds an isolated solve (opts.isolate) may run past its time_limit before it is
 * killed: 10% of the limit, from 0.1 s to 1 s. */
double xe_milp_grace(double time_limit);

/* The largest time_limit (seconds) whose isolated solve ends, grace included, within
 * `seconds`; <= 0 when even a zero limit would not (callers then skip the solve). */
double xe_milp_limit_within(double seconds);

/* The bound of a whole-model answer CBC proved optimal within rel_gap: the largest of
 * `bound` (CBC's, seconds) and the least value b with (objective - b) / objective <=
 * rel_gap exactly in floating point (CBC's own bound may stay lower when it stops at the
 * objective's increment, e.g. 20.67 for an optimum of 21 with integer costs). `bound`
 * unchanged for a non-positive or non-finite objective. */
double xe_milp_proven_bound(double objective, double bound, double rel_gap);

/* Defaults described above. */
void xe_milp_opts_default(xe_milp_opts *o);

/* Builds and solves the model. Returns XE_OK with res filled whenever CBC ran (check
 * res->status); XE_ENOMEM, XE_ESOLVER (CBC failed), XE_EINVAL (bad start or options).
 * On XE_OK with a schedule, res->sol passed xe_stages_check. Free with xe_milp_result_clear. */
int xe_milp_solve(const xe_instance *in, const xe_milp_opts *o, xe_milp_result *res,
                  xe_err *err);
void xe_milp_result_clear(xe_milp_result *res);

const char *xe_milp_status_str(xe_milp_status s);

#ifdef __cplusplus
}
#endif

#endif
