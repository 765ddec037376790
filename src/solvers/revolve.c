/* Griewank's binomial checkpointing ("revolve", Griewank & Walther, ACM TOMS 26(1), 2000)
 * for training chains: the chain recursion of chain_dp*.c (bottom-up, chain_dp_table.c)
 * run on the uniform abstraction (every tensor one slot, every forward step one unit,
 * backward steps free), which is the setting where revolve is optimal; its Pareto
 * frontier gives, for every number of slots c, the fewest forward steps (Griewank's
 * binomial bound). The schedules are then
 * replayed with the real sizes and costs; the one with the most slots that fits wins. */
#include <math.h>
#include <stdint.h>

#include "chain_dp.h"
#include "xengine/sim.h"

int xe_revolve(const xe_instance *in, int d, xe_schedule *out, double *cost, int *slots, xe_err *err)
{
    if (d < 0 || d >= in->ndev)
        return xe_err_set(err, XE_EINVAL, "revolve: device %d does not exist (instance has %d)", d, in->ndev);
    xe_chain ch;
    int rc = xe_chain_detect(in->g, &ch, err);
    if (rc) return rc;
    xe_cdp_model m;
    xe_cdp_table t;
    rc = xe_cdp_model_init(&m, in, &ch, d, 1, 0, err);
    if (rc) goto out_chain;
    rc = xe_cdp_solve(&m, INT64_MAX, &t, err);
    if (rc) goto out_model;
    const xe_cdp_pt *top;
    int ntop;
    xe_cdp_top(&t, &top, &ntop);
    xe_schedule tryit;
    xe_schedule_init(&tryit);
    rc = XE_EINFEASIBLE;
    int start = out->len;
    for (int q = ntop - 1; q >= 0; q--) {
        tryit.len = 0;
        xe_err e2;
        int r2 = xe_cdp_emit(&m, &t, top[q].req, &tryit, &e2);
        if (r2) {
            rc = xe_err_set(err, r2, "revolve: %s", e2.msg);
            break;
        }
        xe_sim_result res;
        r2 = xe_sim_run(in, &tryit, &res, &e2);
        if (r2 == XE_ENOMEM) {
            rc = xe_err_set(err, r2, "revolve: simulator out of memory");
            break;
        }
        if (r2 != XE_OK) continue; /* overflows with the real sizes: fewer slots */
        if (xe_schedule_append(out, &tryit)) {
            rc = xe_err_set(err, XE_ENOMEM, "revolve: out of memory");
            out->len = start;
            goto out_try;
        }
        *cost = res.total_time;
        if (slots) *slots = (int)top[q].req;
        rc = XE_OK;
        break;
    }
    if (rc == XE_EINFEASIBLE)
        xe_err_set(err, rc, "revolve: %s: no binomial schedule fits %lld B on %s", in->g->name,
                   (long long)in->dev[d].budget, in->dev[d].name);
out_try:
    xe_schedule_clear(&tryit);
    xe_cdp_table_clear(&t);
out_model:
    xe_cdp_model_clear(&m);
out_chain:
    xe_chain_clear(&ch);
    return rc;
}
