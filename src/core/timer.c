/* The monotonic wall clock (include/xengine/timer.h). */
#include <time.h>

#include "xengine/timer.h"

double xe_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
