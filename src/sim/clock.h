/* xengine simulator — internal: the concurrent-timing clock (makespan model of
 * docs/simulator.md). Used only by src/sim/sim.c; not part of the public API. */
#ifndef XENGINE_SIM_CLOCK_H
#define XENGINE_SIM_CLOCK_H

#include "xengine/instance.h"
#include "xengine/schedule.h"

typedef struct xe_sim_clock {
    int n, ndev;
    double *ready;    /* [n * ndev] end of the event that made v resident on d */
    double *lastread; /* [n * ndev] latest end of an event that read v on d (>= ready) */
    double *release;  /* [n * ndev] time v's last copy on d was freed (0 initially) */
    double compute_free[XE_MAX_DEV];            /* compute stream of d is free from */
    double copy_free[XE_MAX_DEV][XE_MAX_DEV];   /* copy stream d -> e is free from */
    double makespan;  /* latest end so far, seconds */
    double last_start, last_end; /* times of the event timed last (a free: its release) */
} xe_sim_clock;

/* Allocates the per-(node, device) arrays, all times 0. XE_ENOMEM on failure (c is then
 * safe to pass to xe_sim_clock_free). */
int xe_sim_clock_init(xe_sim_clock *c, int n, int ndev);

/* Frees the arrays. */
void xe_sim_clock_free(xe_sim_clock *c);

/* Times one event that the replay has already found valid (indices in range, inputs
 * resident, ...). Updates the streams, tensor times and makespan. */
void xe_sim_clock_event(xe_sim_clock *c, const xe_instance *in, const xe_event *e);

#endif
