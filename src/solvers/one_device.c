/* Everything on one device: the single-device planners on the instance restricted to
 * device d, mapped back (XEngine's and Checkmate's single-device comparison point). */
#include <stdlib.h>
#include <string.h>

#include "baseline_util.h"
#include "xengine/solvers.h"

int xe_one_device(const xe_instance *in, int d, xe_stages *out, xe_err *err)
{
    memset(out, 0, sizeof *out);
    if (d < 0 || d >= in->ndev)
        return xe_err_set(err, XE_EINVAL, "one-device: device %d does not exist (instance has %d)", d, in->ndev);
    const xe_graph *g = in->g;
    int n = g->n;
    for (int v = 0; v < n; v++)
        if (!xe_can_run(in, v, d))
            return xe_err_set(err, XE_EINFEASIBLE, "one-device: %s cannot run node %s", in->dev[d].name,
                              g->nodes[v].name);
    /* the restricted instance shares the graph; it owns only its cost arrays */
    xe_instance sub;
    memset(&sub, 0, sizeof sub);
    sub.g = in->g;
    sub.ndev = 1;
    sub.dev[0] = in->dev[d];
    sub.cost = malloc((size_t)(n ? n : 1) * sizeof *sub.cost);
    sub.copy = calloc((size_t)(n ? n : 1), sizeof *sub.copy);
    if (!sub.cost || !sub.copy) {
        free(sub.cost);
        free(sub.copy);
        return xe_err_set(err, XE_ENOMEM, "one-device: out of memory");
    }
    for (int v = 0; v < n; v++) sub.cost[v] = xe_cost(in, v, d);
    xe_stages a = {0}, b = {0};
    xe_err ea, eb;
    int ra = xe_heur_checkpoint_all(&sub, 0, &a, &ea);
    int rb = xe_heur_greedy(&sub, &b, &eb);
    int rc = XE_OK;
    const xe_stages *pick = NULL;
    if (ra == XE_OK && rb == XE_OK)
        pick = xe_stages_cost(&sub, &a) <= xe_stages_cost(&sub, &b) ? &a : &b;
    else if (ra == XE_OK)
        pick = &a;
    else if (rb == XE_OK)
        pick = &b;
    if (!pick) {
        if (ra != XE_EINFEASIBLE)
            rc = xe_err_set(err, ra, "one-device on %s: %s", in->dev[d].name, ea.msg);
        else if (rb != XE_EINFEASIBLE)
            rc = xe_err_set(err, rb, "one-device on %s: %s", in->dev[d].name, eb.msg);
        else
            rc = xe_err_set(err, XE_EINFEASIBLE, "one-device: no schedule on %s alone within %lld B (%s)",
                            in->dev[d].name, (long long)in->dev[d].budget, eb.msg);
    } else if (xe_stages_init(out, n, in->ndev)) {
        rc = xe_err_set(err, XE_ENOMEM, "one-device: out of memory for %d stages", n);
    } else {
        for (int t = 0; t < n; t++)
            for (int i = 0; i <= t; i++) {
                *xe_R(out, t, i, d) = *xe_R(pick, t, i, 0);
                *xe_S(out, t, i, d) = *xe_S(pick, t, i, 0);
            }
        xe_err e2;
        rc = xe_stages_check(in, out, &e2);
        if (rc) rc = xe_err_set(err, XE_EINTERNAL, "one-device: mapped stages fail the check: %s", e2.msg);
        double c;
        if (!rc) rc = xe_bl_stages_sim(in, out, "one-device", NULL, &c, err);
        if (rc) xe_stages_clear(out);
    }
    xe_stages_clear(&a);
    xe_stages_clear(&b);
    free(sub.cost);
    free(sub.copy);
    return rc;
}
