/* Internal: running a solve in a child process under a hard wall-clock limit. */
#ifndef XE_MILP_ISOLATE_H
#define XE_MILP_ISOLATE_H

#include "xengine/milp.h"

typedef int (*xe_milp_solve_fn)(const xe_instance *in, const xe_milp_opts *o, xe_milp_result *res,
                                xe_err *err);

/* Runs solve(in, o, ...) in a forked child and reads its result back through a pipe.
 * The child is killed (SIGKILL) at o->time_limit + a grace (xe_milp_grace: 10% of it,
 * from 0.1 s to 1 s) of wall time; then res says XE_MILP_NO_SOLUTION (or keeps nothing)
 * with res->killed = 1 and XE_OK is returned. A returned schedule is re-checked here
 * with xe_stages_check. Errors of the child come back as its status and message;
 * XE_ESOLVER when fork or the pipe fail, or when the child ends without an answer (a
 * crash: fatal signals take their default action in the child, whatever handlers the
 * caller installed). */
int xe_milp_isolated(const xe_instance *in, const xe_milp_opts *o, xe_milp_solve_fn solve,
                     xe_milp_result *res, xe_err *err);

#endif
