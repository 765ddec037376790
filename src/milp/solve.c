/* CBC driver: loads the model of model.c, hands it a MIP start, solves under the time
 * limit and gap, reports progress, and reads back a validated stage schedule. */
#include <coin/Cbc_C_Interface.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cbc_log.h"
#include "isolate.h"
#include "model.h"
#include "xengine/milp.h"
#include "xengine/timer.h"

void xe_milp_opts_default(xe_milp_opts *o)
{
    o->time_limit = 60.0;
    o->rel_gap = 1e-4;
    o->threads = 1;
    o->progress = 0;
    o->start = NULL;
    o->isolate = 0;
    o->fix = NULL;
    o->fix_t0 = 0;
    o->fix_t1 = 0;
    o->relax = 0;
    o->free_nodes = NULL;
    o->soft_budget = NULL;
    o->soft_weight = 0.0;
    o->knapsack = 0;
    o->interrupt = NULL;
}

const char *xe_milp_status_str(xe_milp_status s)
{
    switch (s) {
    case XE_MILP_OPTIMAL: return "optimal";
    case XE_MILP_FEASIBLE: return "feasible (time limit)";
    case XE_MILP_INFEASIBLE: return "infeasible";
    case XE_MILP_NO_SOLUTION: return "no solution (time limit)";
    }
    return "unknown";
}

void xe_milp_result_clear(xe_milp_result *res)
{
    xe_stages_clear(&res->sol);
}

/* Compressed-column form of the triplets. */
static int to_csc(const xe_model *m, int **start, int **index, double **value)
{
    *start = calloc((size_t)m->ncols + 1, sizeof **start);
    *index = malloc((size_t)(m->nnz ? m->nnz : 1) * sizeof **index);
    *value = malloc((size_t)(m->nnz ? m->nnz : 1) * sizeof **value);
    if (!*start || !*index || !*value) return -1;
    for (int z = 0; z < m->nnz; z++) (*start)[m->tcol[z] + 1]++;
    for (int c = 0; c < m->ncols; c++) (*start)[c + 1] += (*start)[c];
    int *fill = calloc((size_t)m->ncols + 1, sizeof *fill);
    if (!fill) return -1;
    for (int z = 0; z < m->nnz; z++) {
        int c = m->tcol[z];
        int at = (*start)[c] + fill[c]++;
        (*index)[at] = m->trow[z];
        (*value)[at] = m->tval[z];
    }
    free(fill);
    return 0;
}

static int solve_here(const xe_instance *in, const xe_milp_opts *o, xe_milp_result *res, xe_err *err)
{
    double t_entry = xe_now(); /* the limit covers building the model too */
    memset(res, 0, sizeof *res);
    res->objective = INFINITY;
    res->bound = -INFINITY;
    res->gap = INFINITY;
    if (!(o->time_limit > 0) || !(o->rel_gap >= 0) || o->threads < 1)
        return xe_err_set(err, XE_EINVAL, "time limit must be > 0, gap >= 0, threads >= 1");
    if (o->start) {
        int rc = xe_stages_check(in, o->start, err);
        if (rc) return rc == XE_ENOMEM ? rc : xe_err_set(err, XE_EINVAL, "the starting schedule is not valid: %s", err ? err->msg : "");
    }
    if (o->fix) {
        int rc = xe_stages_check(in, o->fix, err);
        if (rc) return rc == XE_ENOMEM ? rc : xe_err_set(err, XE_EINVAL, "the schedule to fix is not valid: %s", err ? err->msg : "");
        if (o->fix_t0 < 0 || o->fix_t0 > o->fix_t1 || (o->fix_t0 == o->fix_t1 && !o->free_nodes) || o->fix_t1 > in->g->n)
            return xe_err_set(err, XE_EINVAL, "window [%d, %d) is not a stage range of the %d-node graph", o->fix_t0,
                              o->fix_t1, in->g->n);
    }
    xe_model m, sub;
    memset(&sub, 0, sizeof sub);
    int rc = xe_model_build_soft(in, o->soft_budget, o->soft_weight, &m, err);
    if (rc) return rc;
    if (o->knapsack && !o->fix) {
        rc = xe_model_add_knapsack(in, &m, 0, in->g->n, err);
        if (rc) {
            xe_model_clear(&m);
            return rc;
        }
    }
    const xe_model *lm = &m; /* the model CBC sees */
    int *map = NULL;
    uint8_t *fixed = NULL;
    double objconst = 0, *xfix = NULL, *xfull = NULL;
    int *start = NULL, *index = NULL;
    double *value = NULL, *x0 = NULL;
    Cbc_Model *cbc = NULL;
    double start_cost = INFINITY;
    if (o->fix) {
        xfix = malloc((size_t)(m.ncols ? m.ncols : 1) * sizeof *xfix);
        fixed = calloc((size_t)(m.ncols ? m.ncols : 1), 1);
        map = malloc((size_t)(m.ncols ? m.ncols : 1) * sizeof *map);
        if (!xfix || !fixed || !map) {
            rc = xe_err_set(err, XE_ENOMEM, "out of memory preparing the window");
            goto done;
        }
        rc = xe_model_start_values(in, &m, o->fix, xfix, err);
        if (rc) goto done;
        int n = m.n, D = m.D;
        const uint8_t *fn = o->free_nodes;
        int fcur = 0;
        for (int t = 0; t < n; t++) {
            while (fcur < m.nfree && m.fv[fcur].t < t) fcur++;
            int out_rsc = t < o->fix_t0 || t >= o->fix_t1;
            int out_uf = t < o->fix_t0 - 1 || t >= o->fix_t1;
            int any = !out_uf;
            for (int i = 0; i <= t; i++) {
                int keep_free = fn && fn[i];
                for (int d = 0; d < D; d++) {
                    int64_t a = ((int64_t)t * n + i) * D + d;
                    int fx = out_rsc && !keep_free;
                    if (m.iR[a] >= 0) fixed[m.iR[a]] = (uint8_t)fx;
                    if (m.iS[a] >= 0) fixed[m.iS[a]] = (uint8_t)fx;
                    for (int e = 0; e < D; e++)
                        if (e != d && m.iC[a * D + e] >= 0) fixed[m.iC[a * D + e]] = (uint8_t)fx;
                    if (!fx && (m.iR[a] >= 0 || m.iS[a] >= 0)) any = 1;
                }
            }
            while (fn && !any && fcur < m.nfree && m.fv[fcur].t <= t) { /* FREE columns are ordered by t */
                if (m.fv[fcur].t == t && (fn[m.fv[fcur].i] || fn[m.fv[fcur].k])) any = 1;
                fcur++;
            }
            for (int k = 0; k <= t; k++)
                for (int d = 0; d < D; d++) {
                    int u = m.iU[((int64_t)t * n + k) * D + d];
                    if (u >= 0) fixed[u] = (uint8_t)!any;
                }
            if (m.iSig) /* a stage's overflow is free with its memory */
                for (int d = 0; d < D; d++) fixed[m.iSig[t * D + d]] = (uint8_t)!any;
        }
        for (int f = 0; f < m.nfree; f++) {
            const xe_free_var *v = &m.fv[f];
            int out_uf = v->t < o->fix_t0 - 1 || v->t >= o->fix_t1;
            fixed[m.free0 + f] = (uint8_t)(out_uf && !(fn && (fn[v->i] || fn[v->k])));
        }
        rc = xe_model_reduce(&m, fixed, xfix, &sub, map, &objconst, err);
        if (rc) goto done;
        lm = &sub;
        start_cost = xe_stages_cost(in, o->fix);
    } else if (o->start) {
        start_cost = xe_stages_cost(in, o->start);
    }
    res->nvars = lm->ncols;
    res->nrows = lm->nrows;
    for (int c = 0; c < lm->ncols; c++) res->nints += lm->isint[c];

    if (to_csc(lm, &start, &index, &value)) {
        rc = xe_err_set(err, XE_ENOMEM, "out of memory loading the MILP");
        goto done;
    }
    cbc = Cbc_newModel();
    if (!cbc) {
        rc = xe_err_set(err, XE_ESOLVER, "CBC could not create a model");
        goto done;
    }
    Cbc_loadProblem(cbc, lm->ncols, lm->nrows, start, index, value, lm->clb, lm->cub, lm->obj, lm->rlb, lm->rub);
    if (!o->relax)
        for (int c = 0; c < lm->ncols; c++)
            if (lm->isint[c]) Cbc_setInteger(cbc, c);
    char buf[64];
    snprintf(buf, sizeof buf, "%d", o->threads);
    Cbc_setParameter(cbc, "threads", buf);
    Cbc_setParameter(cbc, "timeMode", "elapsed");
    Cbc_setParameter(cbc, "integerTolerance", "1e-9");
    /* CBC 2.10's CglPreProcess::postProcess crashes on some window models (VGG16 on
     * GPU + CPU at 70%); windows are small enough without it */
    if (o->fix) Cbc_setParameter(cbc, "preprocess", "off");
    /* CBC's clock starts now: it gets what building the model left of the limit, so a
     * solve in a child process (isolate) ends within its limit plus the watchdog's grace */
    double cbc_limit = fmax(0.05, o->time_limit - (xe_now() - t_entry));
    Cbc_setMaximumSeconds(cbc, cbc_limit);
    Cbc_setAllowableFractionGap(cbc, o->rel_gap);
    Cbc_setAllowableGap(cbc, 1e-9);
    /* log level 1: CBC's log lines time its improvements (cbc_log.h) */
    Cbc_setLogLevel(cbc, o->relax ? 0 : 1);
    if (o->fix && !o->relax) {
        x0 = malloc((size_t)(lm->ncols ? lm->ncols : 1) * sizeof *x0);
        int *idx = malloc((size_t)(lm->ncols ? lm->ncols : 1) * sizeof *idx);
        if (!x0 || !idx) {
            free(idx);
            rc = xe_err_set(err, XE_ENOMEM, "out of memory preparing the MIP start");
            goto done;
        }
        for (int k = 0; k < lm->ncols; k++) {
            idx[k] = k;
            x0[k] = xfix[map[k]];
        }
        Cbc_setMIPStartI(cbc, lm->ncols, idx, x0);
        free(idx);
    } else if (o->start && !o->relax) {
        x0 = malloc((size_t)m.ncols * sizeof *x0);
        int *idx = malloc((size_t)m.ncols * sizeof *idx);
        if (!x0 || !idx) {
            free(idx);
            rc = xe_err_set(err, XE_ENOMEM, "out of memory preparing the MIP start");
            goto done;
        }
        rc = xe_model_start_values(in, &m, o->start, x0, err);
        if (rc) {
            free(idx);
            goto done;
        }
        for (int c = 0; c < m.ncols; c++) idx[c] = c;
        Cbc_setMIPStartI(cbc, m.ncols, idx, x0);
        free(idx);
    }
    /* CBC's log (stdout) goes to a parser for the times of its improvements and the
     * progress lines (cbc_log.h: the message callback misses the branch and bound); our
     * own output, also on stdout, stays clean */
    xe_cbc_log lg;
    double t0 = xe_now();
    if (!o->relax) xe_cbc_log_start(&lg, t0, objconst, o->progress && !o->fix);
    Cbc_solve(cbc);
    res->solve_time = xe_now() - t0;
    if (!o->relax) xe_cbc_log_stop(&lg);

    if (o->relax) {
        if (Cbc_isProvenInfeasible(cbc) && !Cbc_isSecondsLimitReached(cbc) &&
            !(res->solve_time >= 0.95 * cbc_limit))
            res->status = XE_MILP_INFEASIBLE;
        else res->status = XE_MILP_NO_SOLUTION;
        if (Cbc_isProvenOptimal(cbc)) res->bound = Cbc_getObjValue(cbc) + objconst;
        goto done;
    }
    const double *x = Cbc_getColSolution(cbc);
    int have = Cbc_numberSavedSolutions(cbc) > 0 || Cbc_isProvenOptimal(cbc);
    double best = Cbc_getBestPossibleObjValue(cbc) + objconst;
    /* CBC 2.10 stopped by its seconds limit inside preprocessing can report "proven
     * infeasible" for a feasible model (seen on VGG16 at 70% with limits of 1-3 s): an
     * infeasibility claim counts only when CBC finished before its limit. */
    int limit_hit = Cbc_isSecondsLimitReached(cbc) || res->solve_time >= 0.95 * cbc_limit;
    if (Cbc_isProvenInfeasible(cbc) && !have && !limit_hit) {
        res->status = XE_MILP_INFEASIBLE;
        goto done;
    }
    if ((!have || !x) && o->start && !o->fix && !Cbc_isSecondsLimitReached(cbc) && cbc_limit - res->solve_time > 0.1) {
        /* CBC 2.10 sometimes gives up on a MIP start without searching at all (seen with
         * six or more devices: "Illegal index ... in ClpModel::getColumnName"): search
         * once more without it, in the time left. */
        xe_milp_opts again = *o;
        again.start = NULL;
        again.time_limit = cbc_limit - res->solve_time;
        double spent = res->solve_time;
        if (cbc) Cbc_deleteModel(cbc);
        cbc = NULL;
        free(start);
        free(index);
        free(value);
        free(x0);
        xe_model_clear(&m);
        xe_model_clear(&sub);
        free(map), free(fixed), free(xfix);
        rc = solve_here(in, &again, res, err);
        res->solve_time += spent;
        res->time_best += spent; /* counted from the first Cbc_solve */
        res->time_first = 0.0;   /* there was a start (o->start) */
        return rc;
    }
    if (!have || !x) {
        res->status = XE_MILP_NO_SOLUTION;
        res->bound = best;
        goto done;
    }
    if (o->fix) {
        xfull = malloc((size_t)(m.ncols ? m.ncols : 1) * sizeof *xfull);
        if (!xfull) {
            rc = xe_err_set(err, XE_ENOMEM, "out of memory reading the solution");
            goto done;
        }
        memcpy(xfull, xfix, (size_t)m.ncols * sizeof *xfull);
        for (int k = 0; k < lm->ncols; k++) xfull[map[k]] = x[k];
        x = xfull;
    }
    rc = xe_model_extract(&m, x, &res->sol);
    if (rc) {
        rc = xe_err_set(err, XE_ENOMEM, "out of memory reading the solution");
        goto done;
    }
    xe_stages_prune(in, &res->sol); /* drop computes nothing reads (zero-cost nodes) */
    rc = xe_stages_check(in, &res->sol, err);
    if (rc) {
        rc = xe_err_set(err, XE_ESOLVER, "CBC's solution fails the stage check (numerical trouble): %s", err ? err->msg : "");
        xe_stages_clear(&res->sol);
        goto done;
    }
    res->objective = xe_stages_cost(in, &res->sol);
    res->bound = fmin(best, res->objective);
    res->status = Cbc_isProvenOptimal(cbc) ? XE_MILP_OPTIMAL : XE_MILP_FEASIBLE;
    /* proven optimal within rel_gap: the optimum is at least objective (1 - rel_gap), also
     * where CBC's best bound stays lower (it stops at the objective's increment when the
     * costs share one, e.g. integer costs: bound 20.67, objective 21). Whole model only: a
     * window's bound is its own; a soft model's objective is not the schedule's time */
    if (res->status == XE_MILP_OPTIMAL && !o->fix && !o->soft_budget)
        res->bound = xe_milp_proven_bound(res->objective, res->bound, o->rel_gap);
    res->gap = res->objective > 0 ? (res->objective - res->bound) / res->objective : 0.0;
    if (res->gap < 0) res->gap = 0;
    /* the times of the log's last strict improvement and first solution, where the log
     * saw the objective CBC returned (else unknown: the whole solve time) */
    double cbc_obj = Cbc_getObjValue(cbc) + objconst;
    int log_has_it = isfinite(lg.incumbent) && lg.incumbent <= cbc_obj + 1e-6 * fmax(1.0, fabs(cbc_obj));
    double tb = log_has_it && lg.tbest >= 0 ? fmin(lg.tbest, res->solve_time) : res->solve_time;
    res->time_best = !isfinite(start_cost) || res->objective < start_cost - 1e-9 * fmax(1.0, start_cost) ? tb : 0.0;
    res->time_first = (o->start || o->fix) ? 0.0 : lg.tfirst >= 0 ? fmin(lg.tfirst, res->solve_time) : res->solve_time;
    if (lg.print) {
        lg.incumbent = res->objective;
        lg.bound = res->bound;
        xe_cbc_log_print(&lg);
    }
done:
    if (cbc) Cbc_deleteModel(cbc);
    free(start);
    free(index);
    free(value);
    free(x0);
    free(xfull);
    free(map), free(fixed), free(xfix);
    xe_model_clear(&sub);
    xe_model_clear(&m);
    return rc;
}

int xe_milp_solve(const xe_instance *in, const xe_milp_opts *o, xe_milp_result *res, xe_err *err)
{
    if (!o->isolate) return solve_here(in, o, res, err);
    return xe_milp_isolated(in, o, solve_here, res, err);
}

double xe_milp_proven_bound(double objective, double bound, double rel_gap)
{
    if (!(objective > 0) || !isfinite(objective)) return bound;
    double b = objective * (1.0 - fmin(1.0, rel_gap));
    while (b < objective && (objective - b) / objective > rel_gap)
        b = nextafter(b, objective); /* the gap test then holds exactly, not 1 ulp above */
    return fmax(bound, b);
}
