/* A schedule replayed by the independent simulator (include/xengine/solvers.h). */
#include <math.h>

#include "xengine/sim.h"
#include "xengine/solvers.h"

int xe_schedule_replay(const xe_instance *in, const xe_schedule *s, double cost, xe_sim_result *res, xe_err *err)
{
    int rc = xe_sim_run(in, s, res, err);
    if (rc) return rc;
    if (fabs(res->total_time - cost) > 1e-6 * fmax(1.0, cost))
        return xe_err_set(err, XE_EINTERNAL, "simulated time %.9g differs from the plan's %.9g (a bug)",
                          res->total_time, cost);
    return XE_OK;
}

int xe_stages_replay(const xe_instance *in, const xe_stages *st, xe_sim_result *res, xe_err *err)
{
    xe_schedule s;
    xe_schedule_init(&s);
    int rc = xe_stages_to_schedule(in, st, &s, err);
    if (rc == XE_OK) rc = xe_schedule_replay(in, &s, xe_stages_cost(in, st), res, err);
    xe_schedule_clear(&s);
    return rc;
}
