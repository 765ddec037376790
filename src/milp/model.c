/* The heterogeneous rematerialization MILP (docs/formulation.md), built as arrays.
 *
 * Presolve (never cuts off an optimum): node i is live in stage t when i == t or i < t
 * and some descendant of i has index >= t; R, S, C of nodes that are not live are fixed
 * to 0 by not creating them (they could only add cost and memory). R[t][i][d] is not
 * created either where i's footprint (inputs + output) exceeds d's budget: it could
 * never satisfy the memory rows, and without it the LP bound knows so. */
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define IDX3(m, t, i, d) ((((int64_t)(t) * (m)->n) + (i)) * (m)->D + (d))
#define IDX4(m, t, i, d, e) (IDX3(m, t, i, d) * (m)->D + (e))

static int grow(void **p, int *cap, int need, size_t elem)
{
    if (need <= *cap) return 0;
    int c = *cap ? *cap : 1024;
    while (c < need) c *= 2;
    void *q = realloc(*p, (size_t)c * elem);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

static int add_col(xe_model *m, double obj, double lb, double ub, int isint)
{
    if (m->ncols == m->capcols) {
        int c = m->capcols ? 2 * m->capcols : 1024;
        double *o = realloc(m->obj, (size_t)c * sizeof *o);
        if (!o) return -1;
        m->obj = o;
        double *l = realloc(m->clb, (size_t)c * sizeof *l);
        if (!l) return -1;
        m->clb = l;
        double *u = realloc(m->cub, (size_t)c * sizeof *u);
        if (!u) return -1;
        m->cub = u;
        char *s = realloc(m->isint, (size_t)c);
        if (!s) return -1;
        m->isint = s;
        m->capcols = c;
    }
    m->obj[m->ncols] = obj;
    m->clb[m->ncols] = lb;
    m->cub[m->ncols] = ub;
    m->isint[m->ncols] = (char)isint;
    return m->ncols++;
}

/* Starts a row lb <= sum <= ub; entries follow with add_nz. */
static int add_row(xe_model *m, double lb, double ub)
{
    if (m->nrows == m->caprows) {
        int c = m->caprows ? 2 * m->caprows : 1024;
        double *l = realloc(m->rlb, (size_t)c * sizeof *l);
        if (!l) return -1;
        m->rlb = l;
        double *u = realloc(m->rub, (size_t)c * sizeof *u);
        if (!u) return -1;
        m->rub = u;
        m->caprows = c;
    }
    m->rlb[m->nrows] = lb;
    m->rub[m->nrows] = ub;
    return m->nrows++;
}

static int add_nz_row(xe_model *m, int row, int col, double val)
{
    if (col < 0) return 0; /* absent variable: fixed at 0 */
    if (m->nnz == m->capnz) {
        int c = m->capnz ? 2 * m->capnz : 4096;
        int *r = realloc(m->trow, (size_t)c * sizeof *r);
        if (!r) return -1;
        m->trow = r;
        int *k = realloc(m->tcol, (size_t)c * sizeof *k);
        if (!k) return -1;
        m->tcol = k;
        double *v = realloc(m->tval, (size_t)c * sizeof *v);
        if (!v) return -1;
        m->tval = v;
        m->capnz = c;
    }
    m->trow[m->nnz] = row;
    m->tcol[m->nnz] = col;
    m->tval[m->nnz] = val;
    m->nnz++;
    return 0;
}

/* Adds an entry to the row started last. */
static int add_nz(xe_model *m, int col, double val) { return add_nz_row(m, m->nrows - 1, col, val); }

void xe_model_clear(xe_model *m)
{
    free(m->iR);
    free(m->iS);
    free(m->iU);
    free(m->iC);
    free(m->iSig);
    free(m->fv);
    free(m->obj);
    free(m->clb);
    free(m->cub);
    free(m->isint);
    free(m->rlb);
    free(m->rub);
    free(m->trow);
    free(m->tcol);
    free(m->tval);
    memset(m, 0, sizeof *m);
}

static double mem_scale(const xe_instance *in)
{
    int64_t big = 0;
    for (int d = 0; d < in->ndev; d++)
        if (in->dev[d].budget > big) big = in->dev[d].budget;
    double s = 1.0;
    while ((double)big / s > 1e4) s *= 2.0;
    return s;
}

#define TRY(x)                                                                           \
    do {                                                                                 \
        if ((x) < 0) goto nomem;                                                         \
    } while (0)

/* P[t][j][d] = S + R + Cin, added with coefficient c. */
static int add_presence(xe_model *m, int t, int j, int d, double c)
{
    if (j < t && add_nz(m, m->iS[IDX3(m, t, j, d)], c)) return -1;
    if (add_nz(m, m->iR[IDX3(m, t, j, d)], c)) return -1;
    for (int e = 0; e < m->D; e++)
        if (e != d && add_nz(m, m->iC[IDX4(m, t, j, e, d)], c)) return -1;
    return 0;
}

static int has_presence(const xe_model *m, int t, int j, int d)
{
    if (j < t && m->iS[IDX3(m, t, j, d)] >= 0) return 1;
    if (m->iR[IDX3(m, t, j, d)] >= 0) return 1;
    for (int e = 0; e < m->D; e++)
        if (e != d && m->iC[IDX4(m, t, j, e, d)] >= 0) return 1;
    return 0;
}

static int add_free_var(xe_model *m, int *capfv, int t, int i, int k, int d)
{
    if (grow((void **)&m->fv, capfv, m->nfree + 1, sizeof *m->fv)) return -1;
    int c = add_col(m, 0.0, 0.0, 1.0, 1);
    if (c < 0) return -1;
    if (m->nfree == 0) m->free0 = c;
    XE_ASSERT(c == m->free0 + m->nfree, "FREE columns are contiguous");
    m->fv[m->nfree++] = (xe_free_var){t, i, k, d};
    return c;
}

int xe_model_build(const xe_instance *in, xe_model *m, xe_err *err)
{
    return xe_model_build_soft(in, NULL, 0.0, m, err);
}

int xe_model_build_soft(const xe_instance *in, const int64_t *soft, double weight, xe_model *m, xe_err *err)
{
    const xe_graph *g = in->g;
    int n = g->n, D = in->ndev;
    memset(m, 0, sizeof *m);
    m->n = n;
    m->D = D;
    m->mscale = mem_scale(in);
    size_t n3 = (size_t)(n ? n : 1) * n * D;
    int capfv = 0;
    int *urow = NULL;
    int *reach = xe_graph_reach(g);
    m->iR = malloc(n3 * sizeof *m->iR);
    m->iS = malloc(n3 * sizeof *m->iS);
    m->iU = malloc(n3 * sizeof *m->iU);
    m->iC = malloc(n3 * D * sizeof *m->iC);
    if (!reach || !m->iR || !m->iS || !m->iU || !m->iC) goto nomem;
    memset(m->iR, 0xff, n3 * sizeof *m->iR);
    memset(m->iS, 0xff, n3 * sizeof *m->iS);
    memset(m->iU, 0xff, n3 * sizeof *m->iU);
    memset(m->iC, 0xff, n3 * D * sizeof *m->iC);

    /* columns: R, S, C (objective), then U, then FREE */
    for (int t = 0; t < n; t++)
        for (int i = 0; i <= t; i++) {
            int live = i == t || reach[i] >= t;
            if (!live) continue;
            for (int d = 0; d < D; d++) {
                if (xe_can_run(in, i, d) && xe_graph_footprint(g, i) <= in->dev[d].budget) {
                    int c = add_col(m, xe_cost(in, i, d), 0, 1, 1);
                    TRY(c);
                    m->iR[IDX3(m, t, i, d)] = c;
                }
                if (i < t) {
                    int c = add_col(m, 0.0, 0, 1, 1);
                    TRY(c);
                    m->iS[IDX3(m, t, i, d)] = c;
                }
            }
            for (int d = 0; d < D; d++)
                for (int e = 0; e < D; e++) {
                    if (e == d) continue;
                    int src = m->iR[IDX3(m, t, i, d)] >= 0 || (i < t && m->iS[IDX3(m, t, i, d)] >= 0);
                    if (!src) continue;
                    int c = add_col(m, xe_copy_cost(in, i, d, e), 0, 1, 1);
                    TRY(c);
                    m->iC[IDX4(m, t, i, d, e)] = c;
                }
        }
    for (int t = 0; t < n; t++)
        for (int k = 0; k <= t; k++)
            for (int d = 0; d < D; d++) {
                double cap = (double)in->dev[d].budget / m->mscale;
                int c = add_col(m, 0.0, 0.0, cap, 0);
                TRY(c);
                m->iU[IDX3(m, t, k, d)] = c;
            }

    for (int t = 0; t < n; t++) {
        /* (1) first computation */
        TRY(add_row(m, 1.0, INFINITY));
        for (int d = 0; d < D; d++) TRY(add_nz(m, m->iR[IDX3(m, t, t, d)], 1.0));
        for (int i = 0; i <= t; i++)
            for (int d = 0; d < D; d++) {
                int r = m->iR[IDX3(m, t, i, d)];
                /* (3) dependencies */
                if (r >= 0)
                    for (int p = g->pred_off[i]; p < g->pred_off[i + 1]; p++) {
                        int j = g->pred[p];
                        TRY(add_row(m, -INFINITY, 0.0));
                        TRY(add_nz(m, r, 1.0));
                        TRY(add_presence(m, t, j, d, -1.0));
                    }
                /* (4) copy source */
                for (int e = 0; e < D; e++) {
                    int c = e == d ? -1 : m->iC[IDX4(m, t, i, d, e)];
                    if (c < 0) continue;
                    TRY(add_row(m, -INFINITY, 0.0));
                    TRY(add_nz(m, c, 1.0));
                    if (i < t) TRY(add_nz(m, m->iS[IDX3(m, t, i, d)], -1.0));
                    TRY(add_nz(m, r, -1.0));
                }
                /* (5) one presence */
                if (has_presence(m, t, i, d)) {
                    TRY(add_row(m, -INFINITY, 1.0));
                    TRY(add_presence(m, t, i, d, 1.0));
                }
                /* (6) checkpoint carry */
                if (t + 1 < n && m->iS[IDX3(m, t + 1, i, d)] >= 0) {
                    TRY(add_row(m, -INFINITY, 0.0));
                    TRY(add_nz(m, m->iS[IDX3(m, t + 1, i, d)], 1.0));
                    TRY(add_presence(m, t, i, d, -1.0));
                }
            }
    }

    /* (8) memory chain: U[t][k] - U[t][k-1] - mem_k (R + Cin) + sum mem FREE(.., k-1) = 0,
     * U[t][0] - sum mem S - mem_0 (R + Cin) = 0; the row of (t, k, d) is urow[..] */
    urow = malloc(n3 * sizeof *urow);
    if (!urow) goto nomem;
    for (int t = 0; t < n; t++)
        for (int d = 0; d < D; d++)
            for (int k = 0; k <= t; k++) {
                int u = m->iU[IDX3(m, t, k, d)];
                urow[IDX3(m, t, k, d)] = add_row(m, 0.0, 0.0);
                TRY(urow[IDX3(m, t, k, d)]);
                TRY(add_nz(m, u, 1.0));
                if (k == 0) {
                    for (int i = 0; i < t; i++)
                        TRY(add_nz(m, m->iS[IDX3(m, t, i, d)], -(double)g->nodes[i].mem / m->mscale));
                } else {
                    TRY(add_nz(m, m->iU[IDX3(m, t, k - 1, d)], -1.0));
                }
                double mk = (double)g->nodes[k].mem / m->mscale;
                TRY(add_nz(m, m->iR[IDX3(m, t, k, d)], -mk));
                for (int e = 0; e < D; e++)
                    if (e != d) TRY(add_nz(m, m->iC[IDX4(m, t, k, e, d)], -mk));
            }
    /* (7) FREE[t][i][k][d] for k = i and k in users(i), k <= t */
    for (int t = 0; t < n; t++)
        for (int d = 0; d < D; d++)
            for (int i = 0; i <= t; i++) {
                if (!has_presence(m, t, i, d)) continue;
                int keep = t + 1 < n ? m->iS[IDX3(m, t + 1, i, d)] : -1;
                int f_first = -1, f_last = -1; /* FREE columns of (t, i, d): contiguous */
                for (int q = -1; q < g->succ_off[i + 1] - g->succ_off[i]; q++) {
                    int k = q < 0 ? i : g->succ[g->succ_off[i] + q];
                    if (k >= t) break; /* a free after the last step changes no U row */
                    int rk = m->iR[IDX3(m, t, k, d)];
                    int act_any = rk >= 0;
                    if (k == i)
                        for (int e = 0; e < D; e++)
                            if (e != d) act_any |= m->iC[IDX4(m, t, i, e, d)] >= 0 || m->iC[IDX4(m, t, i, d, e)] >= 0;
                    if (!act_any) continue;
                    int f = add_free_var(m, &capfv, t, i, k, d);
                    TRY(f);
                    if (f_first < 0) f_first = f;
                    f_last = f;
                    /* FREE <= act */
                    TRY(add_row(m, -INFINITY, 0.0));
                    TRY(add_nz(m, f, 1.0));
                    TRY(add_nz(m, rk, -1.0));
                    if (k == i)
                        for (int e = 0; e < D; e++)
                            if (e != d) {
                                TRY(add_nz(m, m->iC[IDX4(m, t, i, e, d)], -1.0));
                                TRY(add_nz(m, m->iC[IDX4(m, t, i, d, e)], -1.0));
                            }
                    /* the free lowers U from step k + 1 on */
                    TRY(add_nz_row(m, urow[IDX3(m, t, k + 1, d)], f, (double)g->nodes[i].mem / m->mscale));
                }
                if (f_first < 0) continue;
                /* i is freed at most once per stage and device, only when present, and not
                 * when stage t+1 keeps it: sum_k FREE + S[t+1] <= P */
                TRY(add_row(m, -INFINITY, 0.0));
                for (int f = f_first; f <= f_last; f++) TRY(add_nz(m, f, 1.0));
                TRY(add_nz(m, keep, 1.0));
                TRY(add_presence(m, t, i, d, -1.0));
                /* no free before a later user j <= t that runs on d:
                 * sum_{k < j} FREE[t][i][k][d] + R[t][j][d] <= P */
                for (int p = g->succ_off[i]; p < g->succ_off[i + 1]; p++) {
                    int j = g->succ[p];
                    if (j > t || m->iR[IDX3(m, t, j, d)] < 0) continue;
                    int any = 0;
                    for (int f = f_first; f <= f_last; f++) any |= m->fv[f - m->free0].k < j;
                    if (!any) continue;
                    TRY(add_row(m, -INFINITY, 0.0));
                    for (int f = f_first; f <= f_last; f++)
                        if (m->fv[f - m->free0].k < j) TRY(add_nz(m, f, 1.0));
                    TRY(add_nz(m, m->iR[IDX3(m, t, j, d)], 1.0));
                    TRY(add_presence(m, t, i, d, -1.0));
                }
            }
    /* soft budgets: sigma[t][d] >= U[t][k][d] - soft[d] for every step k */
    if (soft) {
        m->iSig = malloc((size_t)(n ? n : 1) * D * sizeof *m->iSig);
        if (!m->iSig) goto nomem;
        for (int d = 0; d < D; d++) m->soft_units[d] = (double)soft[d] / m->mscale;
        for (int t = 0; t < n; t++)
            for (int d = 0; d < D; d++) {
                int sg = add_col(m, weight * m->mscale, 0.0, INFINITY, 0);
                TRY(sg);
                m->iSig[t * D + d] = sg;
                for (int k = 0; k <= t; k++) {
                    TRY(add_row(m, -INFINITY, m->soft_units[d]));
                    TRY(add_nz(m, m->iU[IDX3(m, t, k, d)], 1.0));
                    TRY(add_nz(m, sg, -1.0));
                }
            }
    }
    free(urow);
    free(reach);
    reach = NULL;
    return XE_OK;
nomem:
    free(reach);
    free(urow);
    xe_model_clear(m);
    return xe_err_set(err, XE_ENOMEM, "out of memory building the MILP");
}

int xe_model_add_knapsack(const xe_instance *in, xe_model *m, int t0, int t1, xe_err *err)
{
    const xe_graph *g = in->g;
    int n = m->n, D = m->D;
    if (t0 < 0) t0 = 0;
    if (t1 > n) t1 = n;
    uint8_t *is_in = calloc((size_t)(n ? n : 1), 1); /* inputs of the step's node k */
    if (!is_in) return xe_err_set(err, XE_ENOMEM, "out of memory building the MILP");
    for (int t = t0; t < t1; t++)
        for (int d = 0; d < D; d++) {
            double cap = (double)in->dev[d].budget / m->mscale;
            for (int k = 0; k <= t; k++) {
                for (int p = g->pred_off[k]; p < g->pred_off[k + 1]; p++) is_in[g->pred[p]] = 1;
                int before = m->nnz, ok = add_row(m, -INFINITY, cap) >= 0;
                /* what stage t+1 keeps among u < k is already held at step k ... */
                for (int u = 0; ok && t + 1 < n && u < k; u++)
                    if (!is_in[u]) ok = !add_nz(m, m->iS[IDX3(m, t + 1, u, d)], (double)g->nodes[u].mem / m->mscale);
                /* ... every checkpoint u >= k of stage t still is ... */
                for (int u = k; ok && u < t; u++)
                    ok = !add_nz(m, m->iS[IDX3(m, t, u, d)], (double)g->nodes[u].mem / m->mscale);
                /* ... and k runs with its inputs and output */
                if (ok) ok = !add_nz(m, m->iR[IDX3(m, t, k, d)], (double)xe_graph_footprint(g, k) / m->mscale);
                for (int p = g->pred_off[k]; p < g->pred_off[k + 1]; p++) is_in[g->pred[p]] = 0;
                if (!ok) {
                    free(is_in);
                    return xe_err_set(err, XE_ENOMEM, "out of memory building the MILP");
                }
                double all = 0;
                for (int z = before; z < m->nnz; z++) all += m->tval[z];
                if (all <= cap) { /* every column at 1 fits: the row never binds */
                    m->nnz = before;
                    m->nrows--;
                }
            }
        }
    free(is_in);
    return XE_OK;
}

int xe_model_start_values(const xe_instance *in, const xe_model *m, const xe_stages *st,
                          double *x, xe_err *err)
{
    int n = m->n, D = m->D;
    size_t n3 = (size_t)(n ? n : 1) * n * D;
    double *U = malloc(n3 * sizeof *U);
    uint8_t *FREE = malloc(n3 * (size_t)(n ? n : 1));
    if (!U || !FREE) {
        free(U);
        free(FREE);
        return xe_err_set(err, XE_ENOMEM, "out of memory preparing the MIP start");
    }
    int rc = xe_stages_eval(in, st, U, FREE, err);
    if (rc) goto out;
    memset(x, 0, (size_t)m->ncols * sizeof *x);
    for (int t = 0; t < n; t++)
        for (int i = 0; i < n; i++)
            for (int d = 0; d < D; d++) {
                int64_t a = IDX3(m, t, i, d);
                if (*xe_R(st, t, i, d)) {
                    if (m->iR[a] < 0) {
                        rc = xe_err_set(err, XE_EINVAL, "MIP start computes node %d in stage %d, where it is never needed", i, t);
                        goto out;
                    }
                    x[m->iR[a]] = 1;
                }
                if (*xe_S(st, t, i, d)) {
                    if (m->iS[a] < 0) {
                        rc = xe_err_set(err, XE_EINVAL, "MIP start keeps node %d into stage %d, where it is never needed", i, t);
                        goto out;
                    }
                    x[m->iS[a]] = 1;
                }
                for (int e = 0; e < D; e++)
                    if (e != d && *xe_C(st, t, i, d, e)) {
                        if (m->iC[IDX4(m, t, i, d, e)] < 0) {
                            rc = xe_err_set(err, XE_EINVAL, "MIP start copies node %d in stage %d, where it is never needed", i, t);
                            goto out;
                        }
                        x[m->iC[IDX4(m, t, i, d, e)]] = 1;
                    }
                if (i <= t && m->iU[a] >= 0) x[m->iU[a]] = U[a] / m->mscale;
            }
    for (int f = 0; f < m->nfree; f++) {
        const xe_free_var *v = &m->fv[f];
        x[m->free0 + f] = FREE[(((int64_t)v->t * n + v->i) * n + v->k) * D + v->d];
    }
    if (m->iSig) /* the overflow each stage has: the largest of its steps' excess */
        for (int t = 0; t < n; t++)
            for (int d = 0; d < D; d++) {
                int sg = m->iSig[t * D + d];
                double ub = 0;
                for (int k = 0; k <= t; k++) {
                    double over = x[m->iU[IDX3(m, t, k, d)]] - m->soft_units[d];
                    if (over > ub) ub = over;
                }
                x[sg] = ub;
            }
out:
    free(U);
    free(FREE);
    return rc;
}

int xe_model_extract(const xe_model *m, const double *x, xe_stages *st)
{
    int rc = xe_stages_init(st, m->n, m->D);
    if (rc) return rc;
    for (int t = 0; t < m->n; t++)
        for (int i = 0; i <= t; i++)
            for (int d = 0; d < m->D; d++) {
                int64_t a = IDX3(m, t, i, d);
                if (m->iR[a] >= 0 && x[m->iR[a]] > 0.5) *xe_R(st, t, i, d) = 1;
                if (m->iS[a] >= 0 && x[m->iS[a]] > 0.5) *xe_S(st, t, i, d) = 1;
                for (int e = 0; e < m->D; e++) {
                    int c = e == d ? -1 : m->iC[IDX4(m, t, i, d, e)];
                    if (c >= 0 && x[c] > 0.5) *xe_C(st, t, i, d, e) = 1;
                }
            }
    return XE_OK;
}

int xe_model_reduce(const xe_model *m, const uint8_t *fixed, const double *x, xe_model *sub, int *map,
                    double *objconst, xe_err *err)
{
    memset(sub, 0, sizeof *sub);
    sub->n = m->n;
    sub->D = m->D;
    sub->mscale = m->mscale;
    int *newcol = malloc((size_t)(m->ncols ? m->ncols : 1) * sizeof *newcol);
    int *newrow = malloc((size_t)(m->nrows ? m->nrows : 1) * sizeof *newrow);
    double *shift = calloc((size_t)(m->nrows ? m->nrows : 1), sizeof *shift);
    int *nfree = calloc((size_t)(m->nrows ? m->nrows : 1), sizeof *nfree);
    if (!newcol || !newrow || !shift || !nfree) goto nomem;
    *objconst = 0;
    for (int c = 0; c < m->ncols; c++) {
        if (fixed[c]) {
            newcol[c] = -1;
            *objconst += m->obj[c] * x[c];
            continue;
        }
        int k = add_col(sub, m->obj[c], m->clb[c], m->cub[c], m->isint[c]);
        TRY(k);
        map[k] = c;
        newcol[c] = k;
    }
    for (int z = 0; z < m->nnz; z++) {
        int c = m->tcol[z], r = m->trow[z];
        if (newcol[c] < 0) shift[r] += m->tval[z] * x[c];
        else nfree[r]++;
    }
    for (int r = 0; r < m->nrows; r++) {
        newrow[r] = -1;
        if (nfree[r] == 0) {
            double tol = 1e-6 * fmax(1.0, fabs(shift[r]));
            if (shift[r] < m->rlb[r] - tol || shift[r] > m->rub[r] + tol) {
                int rc = xe_err_set(err, XE_EINVAL, "the fixed part of the window violates MILP row %d (%g not in [%g, %g])", r,
                                    shift[r], m->rlb[r], m->rub[r]);
                free(newcol), free(newrow), free(shift), free(nfree);
                xe_model_clear(sub);
                return rc;
            }
            continue;
        }
        newrow[r] = add_row(sub, m->rlb[r] - shift[r], m->rub[r] - shift[r]);
        TRY(newrow[r]);
    }
    for (int z = 0; z < m->nnz; z++) {
        int c = newcol[m->tcol[z]], r = newrow[m->trow[z]];
        if (c < 0 || r < 0) continue;
        TRY(add_nz_row(sub, r, c, m->tval[z]));
    }
    free(newcol), free(newrow), free(shift), free(nfree);
    return XE_OK;
nomem:
    free(newcol), free(newrow), free(shift), free(nfree);
    xe_model_clear(sub);
    return xe_err_set(err, XE_ENOMEM, "out of memory reducing the MILP to a window");
}
