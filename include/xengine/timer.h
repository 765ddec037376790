/* xengine — the wall clock every solver and benchmark reads. */
#ifndef XENGINE_TIMER_H
#define XENGINE_TIMER_H

/* Seconds on the monotonic clock (CLOCK_MONOTONIC: not moved by changes of the system
 * time), from an arbitrary origin: only differences mean anything. Never fails. */
double xe_now(void);

#endif
