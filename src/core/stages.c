/* Stage matrices R, S, C: allocation, the MILP's memory accounting (docs/formulation.md
 * constraints 1-8) and conversion to an event list. */
#include "xengine/stages.h"

#include <math.h>
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

int xe_stages_equal(const xe_stages *a, const xe_stages *b)
{
    if (a->n != b->n || a->ndev != b->ndev || !a->R || !b->R) return 0;
    size_t nn = (size_t)a->n * (size_t)a->n * (size_t)a->ndev;
    if (memcmp(a->R, b->R, nn) || memcmp(a->S, b->S, nn)) return 0;
    return a->C == b->C || (a->C && b->C && !memcmp(a->C, b->C, nn * (size_t)a->ndev)); /* C NULL: no copies */
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

static int all_zero(const uint8_t *p, size_t len)
{
    uint64_t acc = 0;
    size_t q = 0;
    for (; q + 8 <= len; q += 8) {
        uint64_t w;
        memcpy(&w, p + q, 8);
        acc |= w;
    }
    for (; q < len; q++) acc |= p[q];
    return acc == 0;
}

/* 1 when stage t leaves untouched what it must: no checkpoint of i >= t, no compute or
 * copy of i > t. A quick scan of contiguous rows; the caller re-runs the exact per-entry
 * checks (in their order) only to name a violation. */
static int zero_regions_ok(const xe_stages *st, int t)
{
    int n = st->n, D = st->ndev;
    if (!all_zero(xe_S(st, t, t, 0), (size_t)(n - t) * D)) return 0;
    if (t + 1 < n && !all_zero(xe_R(st, t, t + 1, 0), (size_t)(n - t - 1) * D)) return 0;
    if (t + 1 < n && !all_zero(xe_C(st, t, t + 1, 0, 0), (size_t)(n - t - 1) * D * D)) return 0;
    return 1;
}

/* Sets mark[q / width] for every q < len with p[q] != 0, skipping zero words 8
 * bytes at a time. */
static void mark_rows(const uint8_t *p, size_t len, int width, uint8_t *mark)
{
    for (size_t q = 0; q < len;) {
        if (q % 8 == 0 && q + 8 <= len) {
            uint64_t w;
            memcpy(&w, p + q, 8);
            if (!w) {
                q += 8;
                continue;
            }
        }
        if (p[q]) mark[q / (size_t)width] = 1;
        q++;
    }
}

/* The nodes i <= t that stage t touches on some device: computed, kept, copied, or kept
 * by stage t+1; increasing, in act, returning their count. Every other i <= t has
 * all-zero R, S, C and next-stage S entries, so no constraint, memory term, free or
 * event involves it. mark[n] must be all zero and is left so. O(t * ndev^2 / 8 + m). */
static int stage_active(const xe_stages *st, int t, uint8_t *mark, int *act)
{
    int n = st->n, D = st->ndev, m = 0;
    mark_rows(xe_R(st, t, 0, 0), (size_t)(t + 1) * D, D, mark);
    mark_rows(xe_S(st, t, 0, 0), (size_t)t * D, D, mark);
    mark_rows(xe_C(st, t, 0, 0, 0), (size_t)(t + 1) * D * D, D * D, mark);
    if (t + 1 < n) mark_rows(xe_S(st, t + 1, 0, 0), (size_t)(t + 1) * D, D, mark);
    for (int i = 0; i <= t;) {
        if (i % 8 == 0 && i + 8 <= t + 1) {
            uint64_t w;
            memcpy(&w, mark + i, 8);
            if (!w) {
                i += 8;
                continue;
            }
        }
        if (mark[i]) {
            act[m++] = i;
            mark[i] = 0;
        }
        i++;
    }
    return m;
}

/* act[0..m) = stage_active(st, t). */
static int check_structure(const xe_instance *in, const xe_stages *st, int t, const int *act, int m, xe_err *err)
{
    const xe_graph *g = in->g;
    int n = st->n, D = st->ndev;
    int first = 0;
    for (int d = 0; d < D; d++) first += *xe_R(st, t, t, d);
    if (!first) return xe_err_set(err, XE_EINVAL, "stage %d does not compute node %d", t, t);
    int scan = !zero_regions_ok(st, t);
    for (int q = 0; !scan && q < m; q++)
        for (int d = 0; d < D; d++)
            if (*xe_C(st, t, act[q], d, d)) scan = 1;
    for (int i = 0; scan && i < n; i++) /* then this loop returns an error */
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
    for (int q = 0; q < m; q++) /* inactive i <= t satisfy every check below */
        for (int d = 0; d < D; d++) {
            int i = act[q];
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

/* lastuse[i] = the latest user j <= t of i computed on d in stage t, or -1, for the
 * active i (act[0..m), increasing; a computed node's inputs are present, so active); so
 * used_later(g, st, t, i, k, d) == (lastuse[i] > k). O(m + their edges). */
static void last_users(const xe_graph *g, const xe_stages *st, int t, int d, const int *act, int m, int *lastuse)
{
    for (int q = 0; q < m; q++) lastuse[act[q]] = -1;
    for (int q = 0; q < m; q++) { /* increasing j: the last write is the latest user */
        int j = act[q];
        if (*xe_R(st, t, j, d))
            for (int p = g->pred_off[j]; p < g->pred_off[j + 1]; p++) lastuse[g->pred[p]] = j;
    }
}

/* Stage t's memory (act[0..m) its active steps, from stage_active): row[k * D + d] for
 * k <= t when row is given (U's row t), FREE as xe_stages_eval's when given. */
static void eval_stage(const xe_instance *in, const xe_stages *st, int t, const int *act, int m, int *lastuse,
                       double *row, uint8_t *FREE)
{
    const xe_graph *g = in->g;
    int n = st->n, D = st->ndev;
    for (int d = 0; d < D; d++) {
        last_users(g, st, t, d, act, m, lastuse);
        /* only active steps change u (adding the zero terms of the others would not
         * change the double either); the row still gets every step */
        double u = 0;
        for (int a = 0; a < m && act[a] < t; a++) u += (double)g->nodes[act[a]].mem * *xe_S(st, t, act[a], d);
        int q = 0; /* act[q] = the next active step */
        for (int k = 0; k <= t; k++) {
            if (q == m || act[q] != k) { /* an inactive step: u unchanged */
                if (row) {
                    row[(int64_t)k * D + d] = u;
                    continue;
                }
                if (q == m) break;
                k = act[q]; /* without a row, jump to the next active step */
            }
            q++;
            u += (double)g->nodes[k].mem * (*xe_R(st, t, k, d) + cin(st, t, k, d));
            if (row) row[(int64_t)k * D + d] = u;
            /* frees after step k: k itself, then its inputs (constraint 7) */
            int act_k = *xe_R(st, t, k, d) + cin(st, t, k, d) + cout_(st, t, k, d);
            if (act_k && !keep_next(st, t, k, d) && lastuse[k] <= k) {
                u -= (double)g->nodes[k].mem;
                if (FREE) FREE[(((int64_t)t * n + k) * n + k) * D + d] = 1;
            }
            if (!*xe_R(st, t, k, d)) continue;
            for (int p = g->pred_off[k]; p < g->pred_off[k + 1]; p++) {
                int i = g->pred[p];
                if (!keep_next(st, t, i, d) && lastuse[i] <= k) {
                    u -= (double)g->nodes[i].mem;
                    if (FREE) FREE[(((int64_t)t * n + i) * n + k) * D + d] = 1;
                }
            }
        }
    }
}

/* xe_stages_eval's work, with stage t's memory handed to row_fn (ctx, t, row: U's row t,
 * [n * D]) as each stage is evaluated when row_fn is given (one row in memory, not n);
 * the structure of every stage is checked before any row is made, so the first
 * structural error comes first as in xe_stages_eval. row_fn returns XE_OK to go on. */
typedef int (*stage_row_fn)(void *ctx, int t, const double *row, xe_err *err);
static int eval_stages(const xe_instance *in, const xe_stages *st, double *U, uint8_t *FREE, stage_row_fn row_fn,
                       void *ctx, xe_err *err)
{
    const xe_graph *g = in->g;
    int n = st->n, D = st->ndev;
    if (n != g->n || D != in->ndev)
        return xe_err_set(err, XE_EINVAL, "stage matrices are %d x %d devices, instance is %d x %d", n, D, g->n, in->ndev);
    if (FREE) memset(FREE, 0, (size_t)n * n * n * D);
    size_t n1 = (size_t)(n ? n : 1);
    int *lastuse = malloc(n1 * sizeof *lastuse), *act = malloc(n1 * sizeof *act);
    uint8_t *mark = calloc(n1, 1);
    double *row = row_fn ? malloc(n1 * (size_t)D * sizeof *row) : NULL;
    int rc = XE_OK;
    if (!lastuse || !mark || !act || (row_fn && !row)) {
        rc = xe_err_set(err, XE_ENOMEM, "out of memory evaluating stage matrices (%d nodes)", n);
        goto done;
    }
    if (row_fn) /* every stage's structure first */
        for (int t = 0; t < n && rc == XE_OK; t++) {
            int m = stage_active(st, t, mark, act);
            rc = check_structure(in, st, t, act, m, err);
        }
    for (int t = 0; t < n && rc == XE_OK; t++) {
        int m = stage_active(st, t, mark, act);
        if (!row_fn) rc = check_structure(in, st, t, act, m, err);
        if (rc) break;
        double *r = row_fn ? row : U ? U + (size_t)t * n1 * (size_t)D : NULL;
        eval_stage(in, st, t, act, m, lastuse, r, FREE);
        if (row_fn) rc = row_fn(ctx, t, row, err);
    }
done:
    free(lastuse);
    free(mark);
    free(act);
    free(row);
    return rc;
}

int xe_stages_eval(const xe_instance *in, const xe_stages *st, double *U, uint8_t *FREE, xe_err *err)
{
    return eval_stages(in, st, U, FREE, NULL, NULL, err);
}

/* xe_stages_check's row test: the first step and device of stage t over its budget. */
static int check_row(void *ctx, int t, const double *row, xe_err *err)
{
    const xe_instance *in = ctx;
    int D = in->ndev;
    for (int k = 0; k <= t; k++)
        for (int d = 0; d < D; d++) {
            double u = row[(int64_t)k * D + d];
            if (u > (double)in->dev[d].budget)
                return xe_err_set(err, XE_EINFEASIBLE, "stage %d step %d: %.0f bytes on %s exceed its budget %lld", t,
                                  k, u, in->dev[d].name, (long long)in->dev[d].budget);
        }
    return XE_OK;
}

int xe_stages_check(const xe_instance *in, const xe_stages *st, xe_err *err)
{
    /* one stage's row at a time: n x devices doubles, where the whole U took 8 B x n x n x
     * devices (3.2 GB at 20,000 nodes on one device until 2026-12-05) */
    return eval_stages(in, st, NULL, NULL, check_row, (void *)in, err);
}

/* xe_stages_max_use's row test: the largest use per device so far. */
typedef struct max_use_ctx {
    int D;
    double *maxu;
} max_use_ctx;

static int max_row(void *ctx, int t, const double *row, xe_err *err)
{
    (void)err;
    max_use_ctx *c = ctx;
    for (int k = 0; k <= t; k++)
        for (int d = 0; d < c->D; d++) c->maxu[d] = fmax(c->maxu[d], row[(int64_t)k * c->D + d]);
    return XE_OK;
}

int xe_stages_max_use(const xe_instance *in, const xe_stages *st, double *maxu, xe_err *err)
{
    for (int d = 0; d < in->ndev; d++) maxu[d] = 0;
    max_use_ctx c = {.D = in->ndev, .maxu = maxu};
    return eval_stages(in, st, NULL, NULL, max_row, &c, err);
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
    size_t nd = (size_t)(n ? n : 1) * D;
    int *last = malloc(nd * sizeof *last);
    uint8_t *res = calloc(nd, 1);
    /* per stage, the (i, d) whose last touch is step k, in increasing (i, d) order:
     * bucket k is due[due_off[k] .. due_off[k + 1]), holding i * D + d */
    int *due_off = malloc((size_t)(n + 2) * sizeof *due_off);
    int *due = malloc(nd * sizeof *due);
    int *act = malloc(nd * sizeof *act);
    uint8_t *mark = calloc(nd, 1);
    if (!last || !res || !due_off || !due || !mark || !act) {
        free(last);
        free(res);
        free(due_off);
        free(due);
        free(mark);
        free(act);
        return xe_err_set(err, XE_ENOMEM, "out of memory building the event list (%d nodes)", n);
    }
#define PUSH(k, v, a, b)                                                                 \
    do {                                                                                 \
        if (xe_schedule_push(out, (k), (v), (a), (b))) {                                \
            rc = xe_err_set(err, XE_ENOMEM, "out of memory building the event list");    \
            goto done;                                                                   \
        }                                                                                \
    } while (0)
    for (int t = 0; t < n; t++) {
        /* only the active i <= t can be resident, touched or kept (stage_active); nodes
         * i > t: nothing before stage i computes them, so res stays 0 there */
        int m = stage_active(st, t, mark, act);
        for (int k = 0; k <= t + 1; k++) due_off[k] = 0;
        for (int a = 0; a < m; a++)
            for (int d = 0; d < D; d++) {
                int i = act[a];
                XE_ASSERT(res[i * D + d] == (i < t ? *xe_S(st, t, i, d) : 0), "residency equals the checkpoints at a stage start");
                last[i * D + d] = last_touch(g, st, t, i, d);
                /* a checkpoint this stage never touches and the next does not keep */
                if (res[i * D + d] && last[i * D + d] < 0 && !keep_next(st, t, i, d)) {
                    PUSH(XE_EV_FREE, i, d, -1);
                    res[i * D + d] = 0;
                }
                if (last[i * D + d] >= 0 && !keep_next(st, t, i, d)) due_off[last[i * D + d] + 1]++;
            }
        for (int k = 0; k <= t; k++) due_off[k + 1] += due_off[k];
        for (int a = 0; a < m; a++) /* increasing (i, d): each bucket stays sorted */
            for (int d = 0; d < D; d++) {
                int i = act[a];
                if (last[i * D + d] >= 0 && !keep_next(st, t, i, d)) due[due_off[last[i * D + d]]++] = i * D + d;
            }
        for (int k = t; k > 0; k--) due_off[k] = due_off[k - 1]; /* undo the fill's shift */
        due_off[0] = 0;
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
            /* tensors whose last touch in the stage is step k, not kept by stage t+1 */
            for (int q = due_off[k]; q < due_off[k + 1]; q++)
                if (res[due[q]]) {
                    PUSH(XE_EV_FREE, due[q] / D, due[q] % D, -1);
                    res[due[q]] = 0;
                }
        }
        for (int a = 0; a < m; a++)
            for (int d = 0; d < D; d++) {
                int i = act[a];
                if (res[i * D + d] && !keep_next(st, t, i, d)) {
                    PUSH(XE_EV_FREE, i, d, -1);
                    res[i * D + d] = 0;
                }
            }
    }
#undef PUSH
done:
    free(last);
    free(res);
    free(due_off);
    free(due);
    free(mark);
    free(act);
    return rc;
}

int xe_stages_from_schedule(const xe_instance *in, const xe_schedule *s, xe_stages *out, xe_err *err)
{
    return xe_stages_from_schedule_ex(in, s, 0, out, err);
}

int xe_stages_from_schedule_ex(const xe_instance *in, const xe_schedule *s, int prune, xe_stages *out, xe_err *err)
{
    int n = in->g->n, D = in->ndev;
    if (xe_stages_init(out, n, D)) return xe_err_set(err, XE_ENOMEM, "out of memory for %d stages", n);
    uint8_t *res = calloc((size_t)(n ? n : 1) * D, 1);
    if (!res) {
        xe_stages_clear(out);
        return xe_err_set(err, XE_ENOMEM, "out of memory for %d stages", n);
    }
    int rc = XE_OK, t = 0, begun = 0; /* t: the stage running (next first computation) */
    for (int k = 0; k < s->len && rc == XE_OK; k++) {
        const xe_event *e = &s->ev[k];
        if (e->node < 0 || e->node >= n || e->dev < 0 || e->dev >= D) {
            rc = xe_err_set(err, XE_EUNSUPPORTED, "event %d names no node or device of the instance", k);
        } else if (e->kind == XE_EV_COPY) {
            rc = xe_err_set(err, XE_EUNSUPPORTED, "event %d is a copy (not converted)", k);
        } else if (e->kind == XE_EV_FREE) {
            res[e->node * D + e->dev] = 0;
        } else if (t >= n) {
            rc = xe_err_set(err, XE_EUNSUPPORTED, "event %d computes node %d after the last node's first computation", k, e->node);
        } else {
            int v = e->node, d = e->dev;
            if (!begun) { /* stage t starts: its checkpoints are what is resident now */
                for (int i = 0; i < t; i++)
                    for (int q = 0; q < D; q++) *xe_S(out, t, i, q) = res[i * D + q];
                begun = 1;
            }
            if (v > t) {
                rc = xe_err_set(err, XE_EUNSUPPORTED, "event %d computes node %d before node %d (first computations out of index order)", k, v, t);
            } else if (*xe_R(out, t, v, d)) {
                rc = xe_err_set(err, XE_EUNSUPPORTED, "event %d computes node %d a second time in stage %d", k, v, t);
            } else {
                *xe_R(out, t, v, d) = 1;
                res[v * D + d] = 1;
                if (v == t) t++, begun = 0;
            }
        }
    }
    free(res);
    if (rc == XE_OK && t < n) rc = xe_err_set(err, XE_EUNSUPPORTED, "node %d is never computed", t);
    if (rc == XE_OK && prune) xe_stages_prune(in, out);
    if (rc == XE_OK) {
        xe_err e2 = {{0}};
        int c = xe_stages_check(in, out, &e2);
        if (c == XE_ENOMEM) rc = xe_err_set(err, XE_ENOMEM, "%s", e2.msg);
        else if (c) rc = xe_err_set(err, XE_EUNSUPPORTED, "not a valid stage schedule: %s", e2.msg);
    }
    if (rc) xe_stages_clear(out);
    return rc;
}
