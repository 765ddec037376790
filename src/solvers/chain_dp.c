/* Exact dynamic program for training chains (docs/chain-dp.md).
 *
 * Opt(s, t, m): path node x_s is resident (s = -1: nothing, a virtual checkpoint of size
 * 0), so is front(t), the gradient produced before group t (nothing for t = L); m bytes
 * are available for these and everything the subproblem creates. Run groups t, t-1, ..., s
 * of backward nodes in order, ending with front(s-1) resident and x_s freed. Options:
 *   - base (s = t): run group s (its peak and cost are constants of the model);
 *   - skip (t < L, group t empty): Opt(s, t-1, m);
 *   - checkpoint s' in (s, t]: compute x_{s+1} .. x_{s'} from x_s, freeing each after its
 *     successor, keep x_{s'}; then Opt(s', t, m - |x_s|) and Opt(s, s'-1, m);
 *   - non-persistent checkpoint s' in (s, t): the same sweep, then Opt'(s', t, m - |x_s|)
 *     (x_{s'} serves groups t..s'+1 only and is freed) and Opt(s, s', m).
 * Opt'(s, t, m) is the same problem without group s (x_s only a source of recomputation);
 * it has the same choices with Opt' as the tail, and frees x_s right after computing
 * x_{s+1} when the tail has nothing left to do.
 * With other devices: x_s may be parked there while the child runs, or a whole
 * subproblem delegated to another device (run there by that device's own DP).
 * Two evaluations of the same recursion, both exact in bytes with no discretization
 * (Beaumont et al. 2019 discretize m instead): lazily, top-down at the budgets queries
 * reach, each result cached with the interval of m over which it holds (xe_chain_dp);
 * and bottom-up, each Opt(s, t, .) as its whole step function of m, the Pareto frontier
 * of (bytes needed, cost) pairs (revolve, which needs every number of slots; and the
 * tests' cross-check). */
#include "chain_dp.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/sim.h"
#include "xengine/timer.h"

/* ---- chain recognition ---------------------------------------------------------------- */

void xe_chain_clear(xe_chain *ch)
{
    free(ch->fread);
    memset(ch, 0, sizeof *ch);
}

int xe_chain_detect(const xe_graph *g, xe_chain *ch, xe_err *err)
{
    memset(ch, 0, sizeof *ch);
    int n = g->n;
    if (n < 1) return xe_err_set(err, XE_EUNSUPPORTED, "chain: graph %s has no nodes", g->name);
    if (xe_graph_npred(g, 0) != 0)
        return xe_err_set(err, XE_EUNSUPPORTED, "chain: node %s has inputs but comes first", g->nodes[0].name);
    int L = 0;
    while (L + 1 < n && xe_graph_npred(g, L + 1) == 1 && g->pred[g->pred_off[L + 1]] == L) L++;
    int nb = n - L - 1;
    int *fr = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *fr);
    if (!fr) return xe_err_set(err, XE_ENOMEM, "chain: out of memory");
    int last = L, gap = 0; /* gap: a node since the last read of `last` did not read it */
    for (int k = L + 1; k < n; k++) {
        int has_prev = 0, other = -1, nother = 0;
        for (int q = g->pred_off[k]; q < g->pred_off[k + 1]; q++) {
            int p = g->pred[q];
            if (p == k - 1)
                has_prev = 1;
            else {
                other = p;
                nother++;
            }
        }
        const char *why = NULL;
        if (!has_prev)
            why = "does not read its predecessor";
        else if (nother > 1)
            why = "reads more than one earlier node besides its predecessor";
        else if (nother == 1 && other > L)
            why = "reads a backward node other than its predecessor";
        else if (nother == 1 && other > last)
            why = "reads a forward node later than one read before it (reads must go backwards)";
        else if (nother == 1 && other == last && gap)
            why = "reads a forward node again after a backward node that does not read it";
        if (why) {
            free(fr);
            return xe_err_set(err, XE_EUNSUPPORTED, "chain: node %s (%d) %s", g->nodes[k].name, k, why);
        }
        fr[k - L - 1] = nother ? other : -1;
        gap = nother ? 0 : 1;
        if (nother) last = other;
    }
    ch->n = n;
    ch->L = L;
    ch->nb = nb;
    ch->fread = fr;
    return XE_OK;
}

/* ---- the model ------------------------------------------------------------------------ */


/* Runs group s (0 <= s <= L) from the state {x_s, front(s)} resident: its peak (bytes or
 * units, including x_s and front(s)) and cost; appends the events when out != NULL.
 * Backward nodes run in order; a predecessor is freed right after its only reader, x_s
 * after its last reader in the group (x_L stays when it is the front and nothing read it). */
int xe_cdp_group_run(const xe_cdp_model *m, int s, int64_t *peak, double *cost, xe_schedule *out)
{
    const xe_chain *ch = m->ch;
    int xs = s, F = m->front[s + 1], d = m->d;
    int b = m->gbeg[s + 1], e = m->gend[s + 1];
    int64_t bytes = cdp_sz(m, xs) + (F != xs ? cdp_sz(m, F) : 0), pk = bytes;
    double c = 0.0;
    int lastread = -1;
    for (int k = b; k < e; k++)
        if (cdp_reads(ch, s, k)) lastread = k;
    int xs_res = 1, prev = F;
    for (int k = b; k < e; k++) {
        if (bytes + cdp_sz(m, k) > pk) pk = bytes + cdp_sz(m, k);
        c += m->uniform ? 0.0 : xe_cost(m->in, k, d);
        if (out && xe_schedule_push(out, XE_EV_COMPUTE, k, d, -1)) return XE_ENOMEM;
        bytes += cdp_sz(m, k);
        if (prev != xs) {
            if (out && xe_schedule_push(out, XE_EV_FREE, prev, d, -1)) return XE_ENOMEM;
            bytes -= cdp_sz(m, prev);
        }
        if (xs_res && k == lastread) {
            if (out && xe_schedule_push(out, XE_EV_FREE, xs, d, -1)) return XE_ENOMEM;
            bytes -= cdp_sz(m, xs);
            xs_res = 0;
        }
        prev = k;
    }
    if (xs_res && xs != prev && out && xe_schedule_push(out, XE_EV_FREE, xs, d, -1)) return XE_ENOMEM;
    *peak = pk;
    *cost = c;
    return XE_OK;
}

void xe_cdp_model_clear(xe_cdp_model *m)
{
    free(m->A);
    free(m->FC);
    free(m->D);
    free(m->GP);
    free(m->GC);
    free(m->gbeg);
    free(m->gend);
    free(m->front);
    free(m->odev);
    free(m->OC);
    memset(m, 0, sizeof *m);
}

/* xe_cdp_model_init, with check = 0 for the location class (chain_dp_loc.c), which
 * reads only the model's structure and sizes and its own per-device costs: a node d
 * cannot run is then no error (its FC and GC entries are meaningless). */
static int cdp_model_init(xe_cdp_model *m, const xe_instance *in, const xe_chain *ch, int d, int uniform,
                          int offload, int check, xe_err *err);

int xe_cdp_model_init(xe_cdp_model *m, const xe_instance *in, const xe_chain *ch, int d,
                      int uniform, int offload, xe_err *err)
{
    return cdp_model_init(m, in, ch, d, uniform, offload, 1, err);
}

static int cdp_model_init(xe_cdp_model *m, const xe_instance *in, const xe_chain *ch, int d, int uniform,
                          int offload, int check, xe_err *err)
{
    memset(m, 0, sizeof *m);
    const xe_graph *g = in->g;
    for (int v = 0; check && v < g->n; v++)
        if (!xe_can_run(in, v, d))
            return xe_err_set(err, XE_EINFEASIBLE, "chain: device %s cannot run node %s", in->dev[d].name,
                              g->nodes[v].name);
    int L = ch->L;
    size_t np = (size_t)L + 2;
    m->in = in;
    m->ch = ch;
    m->d = d;
    m->uniform = uniform;
    m->L = L;
    m->A = calloc(np, sizeof *m->A);
    m->FC = calloc(np, sizeof *m->FC);
    m->D = calloc(np, sizeof *m->D);
    m->GP = calloc(np, sizeof *m->GP);
    m->GC = calloc(np, sizeof *m->GC);
    m->gbeg = calloc(np, sizeof *m->gbeg);
    m->gend = calloc(np, sizeof *m->gend);
    m->front = calloc(np, sizeof *m->front);
    m->odev = malloc(np * sizeof *m->odev);
    m->OC = calloc(np, sizeof *m->OC);
    if (!m->A || !m->FC || !m->D || !m->GP || !m->GC || !m->gbeg || !m->gend || !m->front || !m->odev || !m->OC) {
        xe_cdp_model_clear(m);
        return xe_err_set(err, XE_ENOMEM, "chain: out of memory");
    }
    m->offload = offload && !uniform && in->ndev > 1;
    m->odev[0] = -1;
    for (int p = 0; p <= L; p++) {
        m->A[p + 1] = cdp_sz(m, p);
        m->FC[p + 1] = uniform ? 1.0 : xe_cost(in, p, d);
        m->odev[p + 1] = -1; /* park x_p on the device with the cheapest round trip */
        for (int e = 0; m->offload && e < in->ndev; e++) {
            if (e == d || in->dev[e].budget < cdp_sz(m, p)) continue;
            double rt = xe_copy_cost(in, p, d, e) + xe_copy_cost(in, p, e, d);
            if (m->odev[p + 1] < 0 || rt < m->OC[p + 1]) {
                m->odev[p + 1] = e;
                m->OC[p + 1] = rt;
            }
        }
    }
    /* groups: a backward node joins the group of the path node it reads, or, reading
     * none, the group of its predecessor (group L for the first one); contiguous and
     * in decreasing order of p since the reads are non-increasing */
    int k = L + 1;
    int cur_front = L;
    for (int p = L; p >= 0; p--) {
        m->front[p + 1] = cur_front;
        m->gbeg[p + 1] = k;
        while (k < g->n) {
            int f = ch->fread[k - L - 1];
            int grp = f >= 0 ? f : (k == L + 1 ? L : -2);
            if (grp == -2) grp = p; /* no read: stays with the group being filled */
            if (grp != p) break;
            k++;
        }
        m->gend[p + 1] = k;
        if (k > m->gbeg[p + 1]) cur_front = k - 1;
    }
    XE_ASSERT(k == g->n, "chain groups cover every backward node");
    m->front[0] = cur_front;
    m->gbeg[0] = m->gend[0] = g->n;
    for (int p = 0; p <= L; p++) {
        m->D[p + 1] = p == L ? 0 : cdp_sz(m, m->front[p + 1]);
        int rc = xe_cdp_group_run(m, p, &m->GP[p + 1], &m->GC[p + 1], NULL);
        XE_ASSERT(rc == XE_OK, "group_run without output cannot fail");
    }
    return XE_OK;
}


/* ---- the exact DP --------------------------------------------------------------------- */

/* The one-device DPs of the devices other than d that can run the whole chain, shared by
 * delegation and migration (each evaluated lazily at its whole budget; one cache for
 * both classes). me[e] / ze[e] for e != d; ze[e] NULL where e cannot run some node. */
typedef struct cdp_others {
    int ndev;
    xe_cdp_model *me;
    xe_cdp_lazy **ze;
} cdp_others;

static void cdp_others_free(cdp_others *o)
{
    for (int e = 0; o->me && e < o->ndev; e++) {
        if (o->ze) xe_cdp_lazy_free(o->ze[e]);
        xe_cdp_model_clear(&o->me[e]);
    }
    free(o->ze);
    free(o->me);
    memset(o, 0, sizeof *o);
}

static int cdp_others_new(const xe_instance *in, const xe_chain *ch, int d, cdp_others *o, xe_err *err)
{
    o->ndev = in->ndev;
    o->me = calloc((size_t)in->ndev, sizeof *o->me);
    o->ze = calloc((size_t)in->ndev, sizeof *o->ze);
    if (!o->me || !o->ze) {
        cdp_others_free(o);
        return xe_err_set(err, XE_ENOMEM, "chain dp: out of memory");
    }
    for (int e = 0; e < in->ndev; e++) {
        if (e == d) continue;
        xe_err e2;
        int r2 = xe_cdp_model_init(&o->me[e], in, ch, e, 0, 0, &e2);
        if (r2 == XE_EINFEASIBLE) continue; /* e cannot run every node */
        if (!r2) r2 = xe_cdp_lazy_new(&o->me[e], &o->ze[e], &e2);
        if (r2) {
            cdp_others_free(o);
            return xe_err_set(err, r2, "%s", e2.msg);
        }
    }
    return XE_OK;
}

/* The migration DP (chain_dp_migrate.c) from device md->d to each other device of o; the
 * cheapest one's events appended to out, its cost in *pred (INFINITY, nothing appended,
 * when none fits). */
static int cdp_migrate_best(const cdp_others *o, const xe_cdp_model *md, double deadline, double *pred,
                            xe_schedule *out, xe_err *err)
{
    int start = out->len;
    *pred = INFINITY;
    xe_schedule tmp;
    xe_schedule_init(&tmp);
    int rc = XE_OK;
    for (int e = 0; e < o->ndev && !rc; e++) {
        if (!o->ze[e]) continue;
        double c = INFINITY;
        tmp.len = 0;
        xe_cdp_lazy_set_deadline(o->ze[e], deadline);
        rc = xe_cdp_migrate(md, &o->me[e], o->ze[e], deadline, &c, &tmp, err);
        xe_cdp_lazy_set_deadline(o->ze[e], 0.0);
        if (!rc && c < *pred) {
            out->len = start;
            if (xe_schedule_append(out, &tmp)) rc = xe_err_set(err, XE_ENOMEM, "chain dp: out of memory");
            *pred = c;
        }
    }
    xe_schedule_clear(&tmp);
    if (rc) out->len = start;
    return rc;
}

/* xe_cdp_run_within with the other devices' DPs given (o; needed for lazy >= 2). */
static int cdp_run(const xe_instance *in, const xe_chain *ch, int d, int offload, int lazy, double deadline,
                   const cdp_others *o, xe_schedule *out, double *cost, int *over_park, xe_err *err);

int xe_cdp_run(const xe_instance *in, const xe_chain *ch, int d, int offload, int lazy, xe_schedule *out,
               double *cost, int *over_park, xe_err *err)
{
    return xe_cdp_run_within(in, ch, d, offload, lazy, 0.0, out, cost, over_park, err);
}

int xe_cdp_run_within(const xe_instance *in, const xe_chain *ch, int d, int offload, int lazy, double deadline,
                      xe_schedule *out, double *cost, int *over_park, xe_err *err)
{
    cdp_others o = {0, NULL, NULL};
    *over_park = 0;
    if (lazy >= 2 && offload)
        return xe_err_set(err, XE_EINVAL, "chain dp: delegation or migration and parking are not combined");
    int rc = lazy >= 2 ? cdp_others_new(in, ch, d, &o, err) : XE_OK;
    if (!rc) rc = cdp_run(in, ch, d, offload, lazy, deadline, &o, out, cost, over_park, err);
    cdp_others_free(&o);
    return rc;
}

static int cdp_run(const xe_instance *in, const xe_chain *ch, int d, int offload, int lazy, double deadline,
                   const cdp_others *o, xe_schedule *out, double *cost, int *over_park, xe_err *err)
{
    xe_cdp_model m;
    xe_cdp_table t;
    xe_cdp_lazy *z = NULL;
    memset(&t, 0, sizeof t);
    int start = out->len;
    /* the location class places every node on a device that runs it: d need not run all */
    int rc = cdp_model_init(&m, in, ch, d, 0, offload, lazy != 4, err);
    if (rc) return rc;
    int64_t B = in->dev[d].budget;
    double pred = INFINITY;
    if (lazy == 3) {
        rc = cdp_migrate_best(o, &m, deadline, &pred, out, err);
        if (rc) goto out_model;
    } else if (lazy == 4) {
        if (in->ndev != 2) {
            rc = xe_err_set(err, XE_EINFEASIBLE, "chain dp: the location class needs exactly two devices");
            goto out_model;
        }
        rc = xe_cdp_loc(&m, 1 - d, deadline, &pred, out, err);
        if (rc) goto out_model;
    } else if (lazy) {
        rc = xe_cdp_lazy_new(&m, &z, err);
        if (rc) goto out_model;
        for (int e = 0; lazy == 2 && e < o->ndev; e++)
            if (o->ze[e] && (rc = xe_cdp_lazy_delegate(z, o->ze[e], err))) goto out_table;
        xe_cdp_lazy_set_deadline(z, deadline); /* its delegates' too */
        rc = xe_cdp_lazy_query(z, B, &pred, err);
        xe_cdp_lazy_set_deadline(z, 0.0); /* the answer is in the cache: its reconstruction runs to the end */
    } else {
        rc = xe_cdp_solve(&m, B, &t, err);
        if (rc) goto out_model;
        const xe_cdp_pt *top;
        int ntop;
        xe_cdp_top(&t, &top, &ntop);
        for (int q = 0; q < ntop && top[q].req <= B; q++) pred = top[q].cost;
    }
    if (rc) goto out_table;
    if (pred == INFINITY) {
        rc = xe_err_set(err, XE_EINFEASIBLE, "chain dp: %s: no schedule of the DP class fits %lld B on %s",
                        in->g->name, (long long)B, in->dev[d].name);
        goto out_table;
    }
    rc = lazy >= 3 ? XE_OK : lazy ? xe_cdp_lazy_emit(z, B, out, err) : xe_cdp_emit(&m, &t, B, out, err);
    if (rc) goto out_table;
    /* judge the result: the replay of only the appended events */
    xe_schedule view = {out->ev + start, out->len - start, out->len - start};
    xe_sim_result res;
    xe_err e2;
    rc = xe_sim_run(in, &view, &res, &e2);
    if (rc == XE_ENOMEM) {
        rc = xe_err_set(err, rc, "chain dp: simulator out of memory");
        goto out_table;
    }
    if (rc && m.offload && res.bad_event >= 0 && res.bad_event < view.len &&
        view.ev[res.bad_event].kind == XE_EV_COPY && view.ev[res.bad_event].dst != d) {
        *over_park = 1;
        rc = xe_err_set(err, XE_EINFEASIBLE, "chain dp: parked checkpoints overflow: %s", e2.msg);
        goto out_table;
    }
    if (rc && lazy == 4) {
        /* the location class does not count the other device's memory: the schedule is
         * refused as "nothing fits" only when it replays with that memory unbounded (any
         * other fault stays an internal error) */
        xe_instance unbounded = *in;
        unbounded.dev[1 - d].budget = xe_graph_total_mem(in->g);
        xe_sim_result r2;
        xe_err e3;
        if (xe_sim_run(&unbounded, &view, &r2, &e3) == XE_OK) {
            rc = xe_err_set(err, XE_EINFEASIBLE, "chain dp: the location class overflows the other device: %s", e2.msg);
            goto out_table;
        }
    }
    if (rc) {
        rc = xe_err_set(err, XE_EINTERNAL, "chain dp: the simulator rejects the DP schedule: %s", e2.msg);
        goto out_table;
    }
    if (fabs(res.total_time - pred) > 1e-9 * (fabs(pred) > 1.0 ? fabs(pred) : 1.0)) {
        rc = xe_err_set(err, XE_EINTERNAL, "chain dp: predicted cost %.17g but the simulator counts %.17g", pred,
                        res.total_time);
        goto out_table;
    }
    *cost = res.total_time;
out_table:
    if (rc) out->len = start;
    xe_cdp_table_clear(&t);
    xe_cdp_lazy_free(z);
out_model:
    xe_cdp_model_clear(&m);
    return rc;
}

/* One more DP class (xe_cdp_run_within's lazy = 2 or 3, no parking) against the result so
 * far (rc: XE_OK with its events at out[start..] and *cost, or XE_EINFEASIBLE): the
 * cheaper one is left in out and *cost. Returns the new rc (XE_OK, XE_EINFEASIBLE, or
 * the class's error with out cut back to start; a time-out of this class keeps a
 * schedule already found). */
static int cdp_keep_cheaper(const xe_instance *in, const xe_chain *ch, int d, int lazy, double deadline,
                            const cdp_others *o, int rc, int start, xe_schedule *out, double *cost, xe_err *err)
{
    xe_schedule alt;
    xe_schedule_init(&alt);
    double c2 = INFINITY;
    int over = 0;
    xe_err e2;
    int r2 = cdp_run(in, ch, d, 0, lazy, deadline, o, &alt, &c2, &over, &e2);
    if (r2 == XE_OK && (rc != XE_OK || c2 < *cost)) {
        out->len = start;
        if (xe_schedule_append(out, &alt) == XE_OK) {
            rc = XE_OK;
            *cost = c2;
        } else {
            out->len = start;
            rc = xe_err_set(err, XE_ENOMEM, "chain dp: out of memory");
        }
    } else if (r2 == XE_ETIMEOUT && rc == XE_OK) {
        /* out of time in this class: the schedule already found stands */
    } else if (r2 != XE_OK && r2 != XE_EINFEASIBLE) {
        out->len = start;
        rc = xe_err_set(err, r2, "%s", e2.msg);
    }
    xe_schedule_clear(&alt);
    return rc;
}

int xe_chain_dp(const xe_instance *in, int d, xe_schedule *out, double *cost, xe_err *err)
{
    return xe_chain_dp_within(in, d, 0.0, out, cost, err);
}

int xe_chain_dp_within(const xe_instance *in, int d, double deadline, xe_schedule *out, double *cost, xe_err *err)
{
    if (d < 0 || d >= in->ndev)
        return xe_err_set(err, XE_EINVAL, "chain dp: device %d does not exist (instance has %d)", d, in->ndev);
    xe_chain ch;
    int rc = xe_chain_detect(in->g, &ch, err);
    if (rc) return rc;
    int over = 0;
    int start = out->len;
    rc = xe_cdp_run_within(in, &ch, d, 1, 1, deadline, out, cost, &over, err);
    if (over) rc = xe_cdp_run_within(in, &ch, d, 0, 1, deadline, out, cost, &over, err); /* without parking */
    /* with other devices, the same class with delegation of subproblems instead of
     * parking, with a migration (chain_dp_migrate.c), and on two devices the location
     * class (chain_dp_loc.c); the cheapest is kept */
    if ((rc == XE_OK || rc == XE_EINFEASIBLE) && in->ndev > 1) {
        cdp_others o; /* the other devices' DPs, one cache for both classes */
        int r2 = cdp_others_new(in, &ch, d, &o, err);
        if (r2) {
            out->len = start;
            rc = r2;
        }
        for (int lazy = 2; !r2 && lazy <= (in->ndev == 2 ? 4 : 3) && (rc == XE_OK || rc == XE_EINFEASIBLE); lazy++)
            rc = cdp_keep_cheaper(in, &ch, d, lazy, deadline, &o, rc, start, out, cost, err);
        if (!r2) cdp_others_free(&o);
    }
    xe_chain_clear(&ch);
    return rc;
}

