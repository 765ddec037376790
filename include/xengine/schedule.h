/* xengine — a schedule: the ordered event list of ../shared/PROBLEM.md.
 *
 *   compute v on d       every input of v resident on d; then v resident on d
 *   copy v from d to e   v resident on d; then also resident on e (counts there)
 *   free v on d          v resident on d; then no longer
 *
 * The schedule owns its event array. */
#ifndef XENGINE_SCHEDULE_H
#define XENGINE_SCHEDULE_H

#include "xengine/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { XE_EV_COMPUTE = 0, XE_EV_COPY = 1, XE_EV_FREE = 2 } xe_event_kind;

typedef struct xe_event {
    xe_event_kind kind;
    int node; /* node index */
    int dev;  /* device of compute / free; source device of a copy */
    int dst;  /* destination device of a copy; -1 otherwise */
} xe_event;

typedef struct xe_schedule {
    xe_event *ev;
    int len, cap;
} xe_schedule;

/* Zero-initialises s (no allocation). */
void xe_schedule_init(xe_schedule *s);
/* Frees the event array and re-initialises s. */
void xe_schedule_clear(xe_schedule *s);
/* Appends one event; XE_ENOMEM when growth fails (s unchanged). */
int xe_schedule_push(xe_schedule *s, xe_event_kind kind, int node, int dev, int dst);
/* Appends every event of src to s, in order; XE_ENOMEM when growth fails (s then keeps
 * its length from before the call). */
int xe_schedule_append(xe_schedule *s, const xe_schedule *src);

#ifdef __cplusplus
}
#endif

#endif
