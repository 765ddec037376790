/* xengine — the independent simulator: replays any schedule and judges it.
 *
 * Shares no code with the formulation or the stage matrices (docs/simulator.md). It
 * checks ../shared/PROBLEM.md's validity rules event by event — preconditions, and on
 * every device, at every moment, resident bytes (during a compute: its inputs and its
 * output together) <= budget — and that every node was computed at least once. */
#ifndef XENGINE_SIM_H
#define XENGINE_SIM_H

#include <stdint.h>

#include "xengine/instance.h"
#include "xengine/schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct xe_sim_device {
    int64_t peak;        /* bytes: highest resident total on this device */
    double compute_time; /* seconds of computes run on this device */
    double copy_in_time; /* seconds of copies arriving on this device */
    int computes;        /* compute events on this device */
    int recomputes;      /* compute events of nodes already computed before (anywhere) */
    int copies_in;       /* copies arriving on this device */
} xe_sim_device;

typedef struct xe_sim_result {
    int ndev;
    xe_sim_device dev[XE_MAX_DEV];
    double total_time; /* serial sum of all compute and copy times, seconds (objective) */
    double makespan;   /* seconds with one compute stream per device and one copy stream
                          per ordered device pair running concurrently (docs/simulator.md) */
    int computes, recomputes, copies, frees;
    int bad_event;     /* index of the first invalid event, -1 when valid; the schedule's
                          length when every event was valid but a node was never computed */
} xe_sim_result;

/* Replays s on in. Returns XE_OK when valid; XE_EINVAL when not, with err naming the
 * event index, its kind, node and device and the broken rule ("event 12 (compute relu1
 * on gpu): input conv1 is not resident on gpu"), and res->bad_event set. res is filled as
 * far as the replay got. No allocation survives the call. */
int xe_sim_run(const xe_instance *in, const xe_schedule *s, xe_sim_result *res, xe_err *err);

/* One replayed event, for plots and traces (docs/plots.md). */
typedef struct xe_sim_step {
    int64_t bytes[XE_MAX_DEV]; /* bytes resident on each device right after the event; for
                                  a compute this is also its total while it runs (its
                                  inputs were resident already), so the maximum over the
                                  steps of device d is dev[d].peak */
    double serial_start, serial_end; /* seconds: events one after another (total_time) */
    double start, end;               /* seconds under the concurrent model of makespan;
                                        a free takes no time: start = end = the moment
                                        its slot is released */
} xe_sim_step;

/* xe_sim_run that also records every event: trace[i] for i = 0 .. s->len - 1 (caller-
 * allocated, s->len entries; NULL records nothing). Entries from an invalid event on
 * are left as they were. Same return values, messages and result as xe_sim_run. */
int xe_sim_run_trace(const xe_instance *in, const xe_schedule *s, xe_sim_result *res,
                     xe_sim_step *trace, xe_err *err);

#ifdef __cplusplus
}
#endif

#endif
