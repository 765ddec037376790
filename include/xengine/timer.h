/* xengine — the wall clock every solver and benchmark reads, and the interrupt flag the
 * long-running phases poll beside it. */
#ifndef XENGINE_TIMER_H
#define XENGINE_TIMER_H

#include <signal.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Seconds on the monotonic clock (CLOCK_MONOTONIC: not moved by changes of the system
 * time), from an arbitrary origin: only differences mean anything. Never fails. */
double xe_now(void);

/* 1 once an optional interrupt flag (Ctrl-C in `xengine solve`: xe_plan_opts.interrupt,
 * passed down to LNS, descent, the MILP and the exact search) is set; 0 for NULL. */
static inline int xe_interrupted(const volatile sig_atomic_t *flag) { return flag && *flag; }

#ifdef __cplusplus
}
#endif

#endif
