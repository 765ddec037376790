/* Stage matrices R, S, C: allocation, the MILP's memory accounting (docs/formulation.md
 * constraints 1-8) and conversion to an event list. */
#include "xengine/stages.h"

#include <stdlib.h>
#include <string.h>

int xe_stages_init(xe_stages *st, int n, int ndev)
{
    size_t nn = (size_t)n * (size_t)n * (size_t)ndev;
    st->n = n;
    st->ndev = ndev;
    st->R = calloc(nn ? nn : 1, 1);
    st->S = calloc(nn ? nn : 1, 1);
    st->C = calloc(nn ? nn * (size_t)ndev : 1, 1);
    if (!st->R || !st->S || !st->C) {
        xe_stages_clear(st);
        return XE_ENOMEM;
    }
    return XE_OK;
}

void xe_stages_clear(xe_stages *st)
{
    free(st->R);
    free(st->S);
    free(st->C);
    memset(st, 0, sizeof *st);
}

int xe_stages_copy(xe_stages *dst, const xe_stages *src)
{
    int rc = xe_stages_init(dst, src->n, src->ndev);
    if (rc) return rc;
    size_t nn = (size_t)src->n * (size_t)src->n * (size_t)src->ndev;
    memcpy(dst->R, src->R, nn);
    memcpy(dst->S, src->S, nn);
    memcpy(dst->C, src->C, nn * (size_t)src->ndev);
    return XE_OK;
}

static int cin(const xe_stages *st, int t, int i, int d)
{
    int s = 0;
    for (int e = 0; e < st->ndev; e++)
        if (e != d) s += *xe_C(st, t, i, e, d);
    return s;
}

static int cout_(const xe_stages *st, int t, int i, int d)
{
    int s = 0;
    for (int e = 0; e < st->ndev; e++)
        if (e != d) s += *xe_C(st, t, i, d, e);
    return s;
}

static int presence(const xe_stages *st, int t, int i, int d)
{
    return (i < t ? *xe_S(st, t, i, d) : 0) + *xe_R(st, t, i, d) + cin(st, t, i, d);
}

static int keep_next(const xe_stages *st, int t, int i, int d)
{
    return t + 1 < st->n ? *xe_S(st, t + 1, i, d) : 0;
}

/* 1 when some user j of i with k < j <= t is computed on d in stage t. */
static int used_later(const xe_graph *g, const xe_stages *st, int t, int i, int k, int d)
{
    for (int p = g->succ_off[i]; p < g->succ_off[i + 1]; p++) {
        int j = g->succ[p];
        if (j > k && j <= t && *xe_R(st, t, j, d)) return 1;
    }
    return 0;
}

static int check_structure(const xe_instance *in, const xe_stages *st, int t, xe_err *err)
{
    const xe_graph *g = in->g;
    int n = st->n, D = st->ndev;
    int first = 0;
    for (int d = 0; d < D; d++) first += *xe_R(st, t, t, d);
    if (!first) return xe_err_set(err, XE_EINVAL, "stage %d does not compute node %d", t, t);
    for (int i = 0; i < n; i++)
        for (int d = 0; d < D; d++) {
            if (i >= t && *xe_S(st, t, i, d))
                return xe_err_set(err, XE_EINVAL, "stage %d keeps node %d, not computed yet", t, i);
            int any_c = 0;
            for (int e = 0; e < D; e++) any_c |= *xe_C(st, t, i, d, e);
            if (i > t && (*xe_R(st, t, i, d) || any_c))
                return xe_err_set(err, XE_EINVAL, "stage %d touches node %d > %d", t, i, t);
            if (*xe_C(st, t, i, d, d))
                return xe_err_set(err, XE_EINVAL, "stage %d copies node %d from device %d to itself", t, i, d);
        }
    for (int i = 0; i <= t; i++)
        for (int d = 0; d < D; d++) {
            if (*xe_R(st, t, i, d) && !xe_can_run(in, i, d))
                return xe_err_set(err, XE_EINVAL, "stage %d computes node %d on device %s, which cannot run it", t, i, in->dev[d].name);
            if (presence(st, t, i, d) > 1)
                return xe_err_set(err, XE_EINVAL, "stage %d: node %d is made present twice on device %s", t, i, in->dev[d].name);
            for (int e = 0; e < D; e++)
                if (e != d && *xe_C(st, t, i, d, e) && !((i < t && *xe_S(st, t, i, d)) || *xe_R(st, t, i, d)))
                    return xe_err_set(err, XE_EINVAL, "stage %d copies node %d from %s, where it is not", t, i, in->dev[d].name);
            if (*xe_R(st, t, i, d))
                for (int p = g->pred_off[i]; p < g->pred_off[i + 1]; p++)
                    if (!presence(st, t, g->pred[p], d))
                        return xe_err_set(err, XE_EINVAL, "stage %d computes node %d on %s without its input %d", t, i, in->dev[d].name, g->pred[p]);
            if (keep_next(st, t, i, d) && !presence(st, t, i, d))
                return xe_err_set(err, XE_EINVAL, "stage %d keeps node %d on %s, which is not there", t + 1, i, in->dev[d].name);
        }
    return XE_OK;
}

int xe_stages_eval(const xe_instance *in, const xe_stages *st, double *U, uint8_t *FREE, xe_err *err)
{
    const xe_graph *g = in->g;
    int n = st->n, D = st->ndev;
    if (n != g->n || D != in->ndev)
        return xe_err_set(err, XE_EINVAL, "stage matrices are %d x %d devices, instance is %d x %d", n, D, g->n, in->ndev);
    if (FREE) memset(FREE, 0, (size_t)n * n * n * D);
    for (int t = 0; t < n; t++) {
        int rc = check_structure(in, st, t, err);
        if (rc) return rc;
        for (int d = 0; d < D; d++) {
            double u = 0;
            for (int i = 0; i < t; i++) u += (double)g->nodes[i].mem * *xe_S(st, t, i, d);
            for (int k = 0; k <= t; k++) {
                u += (double)g->nodes[k].mem * (*xe_R(st, t, k, d) + cin(st, t, k, d));
                if (U) U[((int64_t)t * n + k) * D + d] = u;
                /* frees after step k: k itself, then its inputs (constraint 7) */
                int act_k = *xe_R(st, t, k, d) + cin(st, t, k, d) + cout_(st, t, k, d);
                if (act_k && !keep_next(st, t, k, d) && !used_later(g, st, t, k, k, d)) {
                    u -= (double)g->nodes[k].mem;
                    if (FREE) FREE[(((int64_t)t * n + k) * n + k) * D + d] = 1;
                }
                if (!*xe_R(st, t, k, d)) continue;
                for (int p = g->pred_off[k]; p < g->pred_off[k + 1]; p++) {
                    int i = g->pred[p];
                    if (!keep_next(st, t, i, d) && !used_later(g, st, t, i, k, d)) {
                        u -= (double)g->nodes[i].mem;
                        if (FREE) FREE[(((int64_t)t * n + i) * n + k) * D + d] = 1;
                    }
                }
            }
        }
    }
    return XE_OK;
}

int xe_stages_check(const xe_instance *in, const xe_stages *st, xe_err *err)
{
    int n = st->n, D = st->ndev;
    double *U = malloc((size_t)(n ? n : 1) * n * D * sizeof *U);
    if (!U) return xe_err_set(err, XE_ENOMEM, "out of memory checking a schedule");
    int rc = xe_stages_eval(in, st, U, NULL, err);
    for (int t = 0; rc == XE_OK && t < n; t++)
        for (int k = 0; rc == XE_OK && k <= t; k++)
            for (int d = 0; d < D; d++) {
                double u = U[((int64_t)t * n + k) * D + d];
                if (u > (double)in->dev[d].budget) {
                    rc = xe_err_set(err, XE_EINFEASIBLE, "stage %d step %d: %.0f bytes on %s exceed its budget %lld",
                                    t, k, u, in->dev[d].name, (long long)in->dev[d].budget);
                    break;
                }
            }
    free(U);
    return rc;
}

double xe_stages_cost(const xe_instance *in, const xe_stages *st)
{
    int n = st->n, D = st->ndev;
    double c = 0;
    for (int t = 0; t < n; t++)
        for (int i = 0; i <= t; i++)
            for (int d = 0; d < D; d++) {
                if (*xe_R(st, t, i, d)) c += xe_cost(in, i, d);
                for (int e = 0; e < D; e++)
                    if (e != d && *xe_C(st, t, i, d, e)) c += xe_copy_cost(in, i, d, e);
            }
    return c;
}

/* 1 when stage t needs i on d after i's own step: a user computed on d, a copy out of
 * d, or stage t+1 keeping it there. */
static int needed_on(const xe_graph *g, const xe_stages *st, int t, int i, int d)
{
    return keep_next(st, t, i, d) || cout_(st, t, i, d) || used_later(g, st, t, i, i, d);
}

int xe_stages_prune(const xe_instance *in, xe_stages *st)
{
    const xe_graph *g = in->g;
    int n = st->n, D = st->ndev, removed = 0, changed = 1;
    while (changed) {
        changed = 0;
        for (int t = n - 1; t >= 0; t--)
            for (int i = t - 1; i >= 0; i--) /* users before their inputs */
                for (int d = 0; d < D; d++) {
                    if (!presence(st, t, i, d) || needed_on(g, st, t, i, d)) continue;
                    uint8_t *r = xe_R(st, t, i, d), *s = xe_S(st, t, i, d);
                    removed += *r + *s;
                    *r = *s = 0;
                    for (int e = 0; e < D; e++)
                        if (e != d && *xe_C(st, t, i, e, d)) {
                            *xe_C(st, t, i, e, d) = 0;
                            removed++;
                        }
                    changed = 1;
                }
    }
    return removed;
}

/* Last step of stage t that touches i on d (its own step when computed, copied in or
 * out there; a user's step when that user runs on d), or -1. */
static int last_touch(const xe_graph *g, const xe_stages *st, int t, int i, int d)
{
    int last = -1;
    if (i <= t && (*xe_R(st, t, i, d) || cin(st, t, i, d) || cout_(st, t, i, d))) last = i;
    for (int p = g->succ_off[i]; p < g->succ_off[i + 1]; p++) {
        int j = g->succ[p];
        if (j <= t && *xe_R(st, t, j, d) && j > last) last = j;
    }
    return last;
}

int xe_stages_to_schedule(const xe_instance *in, const xe_stages *st, xe_schedule *out, xe_err *err)
{
    const xe_graph *g = in->g;
    int n = st->n, D = st->ndev;
    int rc = xe_stages_eval(in, st, NULL, NULL, err);
    if (rc) return rc;
    int *last = malloc((size_t)(n ? n : 1) * D * sizeof *last);
    uint8_t *res = calloc((size_t)(n ? n : 1) * D, 1);
    if (!last || !res) {
        free(last);
        free(res);
        return xe_err_set(err, XE_ENOMEM, "out of memory building the event list");
    }
#define PUSH(k, v, a, b)                                                                 \
    do {                                                                                 \
        if (xe_schedule_push(out, (k), (v), (a), (b))) {                                \
            rc = xe_err_set(err, XE_ENOMEM, "out of memory building the event list");    \
            goto done;                                                                   \
        }                                                                                \
    } while (0)
    for (int t = 0; t < n; t++) {
        for (int i = 0; i < n; i++)
            for (int d = 0; d < D; d++) {
                XE_ASSERT(res[i * D + d] == (i < t ? *xe_S(st, t, i, d) : 0), "residency equals the checkpoints at a stage start");
                last[i * D + d] = i <= t ? last_touch(g, st, t, i, d) : -1;
                /* a checkpoint this stage never touches and the next does not keep */
                if (res[i * D + d] && last[i * D + d] < 0 && !keep_next(st, t, i, d)) {
                    PUSH(XE_EV_FREE, i, d, -1);
                    res[i * D + d] = 0;
                }
            }
        for (int k = 0; k <= t; k++) {
            for (int d = 0; d < D; d++)
                if (*xe_R(st, t, k, d)) {
                    PUSH(XE_EV_COMPUTE, k, d, -1);
                    res[k * D + d] = 1;
                }
            for (int d = 0; d < D; d++)
                for (int e = 0; e < D; e++)
                    if (e != d && *xe_C(st, t, k, d, e)) {
                        PUSH(XE_EV_COPY, k, d, e);
                        res[k * D + e] = 1;
                    }
            for (int i = 0; i <= k; i++)
                for (int d = 0; d < D; d++)
                    if (res[i * D + d] && last[i * D + d] == k && !keep_next(st, t, i, d)) {
                        PUSH(XE_EV_FREE, i, d, -1);
                        res[i * D + d] = 0;
                    }
        }
        for (int i = 0; i < n; i++)
            for (int d = 0; d < D; d++)
                if (res[i * D + d] && !keep_next(st, t, i, d)) {
                    PUSH(XE_EV_FREE, i, d, -1);
                    res[i * D + d] = 0;
                }
    }
#undef PUSH
done:
    free(last);
    free(res);
    return rc;
}
