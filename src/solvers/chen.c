/* Chen et al. 2016 ("Training deep nets with sublinear memory cost", sec. 4) as
 * Checkmate implements its baselines (core/solvers/strategy_chen.py, with S from
 * gen_s_matrix_fixed_checkpoints and R from solve_r_opt in core/utils/solver_common.py):
 * a set of checkpoint nodes fixes S, R is the cheapest recomputation that S needs. The
 * segment ladder follows the graph (first to last backward reader of the segment) instead
 * of Checkmate's index arithmetic, and unused tensors are pruned, so each segment is
 * recomputed once and every tensor freed after its last reader (docs/baselines.md). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "baseline_util.h"

/* Number of forward nodes: the prefix with backward == 0. */
static int forward_count(const xe_graph *g)
{
    int T = 0;
    while (T < g->n && !g->nodes[T].backward) T++;
    return T;
}

/* ap[v] = 1 for forward nodes v that no forward edge (u, w), u < v < w, jumps over. */
static void articulation(const xe_graph *g, int T, uint8_t *ap)
{
    int reach = -1;
    for (int v = 0; v < T; v++) {
        ap[v] = reach <= v;
        for (int q = g->succ_off[v]; q < g->succ_off[v + 1]; q++)
            if (g->succ[q] < T && g->succ[q] > reach) reach = g->succ[q];
    }
    for (int v = T; v < g->n; v++) ap[v] = 0;
}

/* Stage matrices on device d from the checkpoint set ck (ck[v] = 1), Checkmate's rules. */
static int chen_build(const xe_instance *in, int d, const uint8_t *ck, const char *what, xe_stages *out,
                      xe_err *err)
{
    const xe_graph *g = in->g;
    int n = g->n, T = forward_count(g);
    memset(out, 0, sizeof *out);
    if (d < 0 || d >= in->ndev)
        return xe_err_set(err, XE_EINVAL, "%s: device %d does not exist (instance has %d)", what, d, in->ndev);
    for (int v = 0; v < n; v++)
        if (!xe_can_run(in, v, d))
            return xe_err_set(err, XE_EINFEASIBLE, "%s: device %s cannot run node %s", what, in->dev[d].name,
                              g->nodes[v].name);
    size_t nn = (size_t)n * (size_t)n;
    uint8_t *S = calloc(nn ? nn : 1, 1), *R = calloc(nn ? nn : 1, 1);
    int *cks = malloc((size_t)(n + 1) * sizeof *cks), *seg = malloc((size_t)(n + 1) * sizeof *seg);
    int *first = malloc((size_t)(n + 1) * sizeof *first), *last = malloc((size_t)(n + 1) * sizeof *last);
    if (!S || !R || !cks || !seg || !first || !last) {
        free(S);
        free(R);
        free(cks);
        free(seg);
        free(first);
        free(last);
        return xe_err_set(err, XE_ENOMEM, "%s: out of memory", what);
    }
#define SS(t, i) S[(size_t)(t) * n + (i)]
#define RR(t, i) R[(size_t)(t) * n + (i)]
    int nck = 0;
    for (int v = 0; v < n; v++)
        if (ck[v]) cks[nck++] = v;
    /* seg[v]: index of the segment holding forward non-checkpoint v (segments run from 0
     * and from each checkpoint to the next one; the last one to T), -1 for checkpoints
     * and backward nodes */
    for (int v = 0, sg = 0; v < n; v++) {
        if (ck[v]) sg++;
        seg[v] = v < T && !ck[v] ? sg : -1;
    }
    /* backward tensors kept until their backward users (setup_implied_s_backwards); every
     * input resident when its user's stage begins, except a segment's tensors at the first
     * backward stage that reads its segment (recomputed there, below) */
    for (int sg = 0; sg <= nck; sg++) first[sg] = n, last[sg] = -1;
    for (int e = 0; e < g->m; e++) {
        int u = g->esrc[e], v = g->edst[e];
        if (seg[u] >= 0 && g->nodes[v].backward) {
            if (v < first[seg[u]]) first[seg[u]] = v;
            if (v > last[seg[u]]) last[seg[u]] = v;
        }
    }
    for (int e = 0; e < g->m; e++) {
        int u = g->esrc[e], v = g->edst[e];
        if (g->nodes[u].backward && g->nodes[v].backward)
            for (int t = u + 1; t <= v; t++) SS(t, u) = 1;
        if (!(seg[u] >= 0 && v == first[seg[u]])) SS(v, u) = 1;
    }
    /* checkpoints kept from their stage on (the stripe) */
    for (int t = 1; t < n; t++)
        for (int c = 0; c < nck; c++)
            if (cks[c] < t) SS(t, cks[c]) = 1;
    for (int v = 0; v < T; v++) {
        int sg = seg[v];
        if (sg < 0) continue;
        int end = sg < nck ? cks[sg] : T;
        /* forward block: kept through the segment's forward pass, up to the stage of the
         * checkpoint that closes it */
        for (int t = v + 1; t <= end && t < n; t++) SS(t, v) = 1;
        /* ladder: kept from the stage after the segment's first backward reader (which
         * recomputes the segment: solve_r_opt below) to its last reader. A segment whose
         * backward starts right after its forward block (the last one, or the one closed
         * by the loss, as Checkmate's ladder for it) is not dropped in between */
        int from = sg == nck || first[sg] == end + 1 ? end + 1 : first[sg] + 1;
        for (int t = from; t <= last[sg] && t < n; t++) SS(t, v) = 1;
    }
    /* solve_r_opt: R[t][t] = 1; R[t][v] where S[t+1] keeps v but S[t] does not; then the
     * inputs of everything computed in stage t that S[t] does not hold */
    for (int t = 0; t < n; t++) {
        RR(t, t) = 1;
        if (t + 1 < n)
            for (int v = 0; v <= t; v++)
                if (SS(t + 1, v) && !SS(t, v)) RR(t, v) = 1;
        for (int v = t; v >= 0; v--) {
            if (!RR(t, v)) continue;
            for (int q = g->pred_off[v]; q < g->pred_off[v + 1]; q++) {
                int u = g->pred[q];
                if (!RR(t, u) && !SS(t, u)) RR(t, u) = 1;
            }
        }
    }
    int rc = xe_stages_init(out, n, in->ndev);
    if (rc) {
        free(S);
        free(R);
        free(cks);
        free(seg);
        free(first);
        free(last);
        return xe_err_set(err, XE_ENOMEM, "%s: out of memory for %d stages", what, n);
    }
    for (int t = 0; t < n; t++)
        for (int i = 0; i <= t; i++) {
            if (RR(t, i)) *xe_R(out, t, i, d) = 1;
            if (i < t && SS(t, i)) *xe_S(out, t, i, d) = 1;
        }
#undef SS
#undef RR
    free(S);
    free(R);
    free(cks);
    free(seg);
    free(first);
    free(last);
    /* Checkmate's S keeps whole segments; drop what no later step reads, so each tensor
     * is freed after its last use as Chen's schedule (and its MXNet planner) does */
    xe_stages_prune(in, out);
    /* structure by the stage rules; memory by the simulator (the stage accounting U counts
     * a step's outputs before its frees, so it can exceed the replay's true peak) */
    xe_err e2;
    rc = xe_stages_eval(in, out, NULL, NULL, &e2);
    if (rc) {
        xe_stages_clear(out);
        if (rc == XE_ENOMEM) return xe_err_set(err, rc, "%s: out of memory", what);
        return xe_err_set(err, XE_EINTERNAL, "%s: Checkmate's rules gave invalid stages: %s", what, e2.msg);
    }
    double cost;
    rc = xe_bl_stages_sim(in, out, what, NULL, &cost, err);
    if (rc) xe_stages_clear(out);
    return rc;
}

/* The candidates of Chen's checkpoints: *T forward nodes, ap[v] = 1 for the forward
 * articulation points, ck zeroed (both n bytes, owned by the caller: free both). */
static int chen_points(const xe_graph *g, int *T, uint8_t **ap, uint8_t **ck, const char *what, xe_err *err)
{
    int n = g->n;
    *T = forward_count(g);
    *ap = calloc((size_t)(n ? n : 1), 1);
    *ck = calloc((size_t)(n ? n : 1), 1);
    if (!*ap || !*ck) {
        free(*ap), free(*ck);
        *ap = *ck = NULL;
        return xe_err_set(err, XE_ENOMEM, "%s: out of memory", what);
    }
    articulation(g, *T, *ap);
    return XE_OK;
}

int xe_chen_sqrt(const xe_instance *in, int d, xe_stages *out, xe_err *err)
{
    const xe_graph *g = in->g;
    int n = g->n, T;
    uint8_t *ap, *ck;
    if (chen_points(g, &T, &ap, &ck, "chen-sqrt", err)) {
        memset(out, 0, sizeof *out);
        return XE_ENOMEM;
    }
    int nap = 0;
    for (int v = 0; v < n; v++) nap += ap[v];
    int k = (int)floor(sqrt((double)nap));
    int idx = 0;
    if (k >= 1)
        for (int v = 0; v < n; v++)
            if (ap[v]) {
                if ((idx + 1) % k == 0) ck[v] = 1;
                idx++;
            }
    int rc = chen_build(in, d, ck, "chen-sqrt", out, err);
    free(ap);
    free(ck);
    return rc;
}

static int greedy_set(const xe_graph *g, int T, const uint8_t *ap, int64_t seg, uint8_t *ck)
{
    int64_t temp = 0;
    int nck = 0;
    memset(ck, 0, (size_t)g->n);
    for (int v = 0; v < T; v++) {
        temp += g->nodes[v].mem;
        if (ap[v] && temp > seg) {
            temp = 0;
            ck[v] = 1;
            nck++;
        }
    }
    return nck;
}

int xe_chen_greedy(const xe_instance *in, int d, int64_t segment_bytes, xe_stages *out, xe_err *err)
{
    const xe_graph *g = in->g;
    int T;
    uint8_t *ap, *ck;
    if (chen_points(g, &T, &ap, &ck, "chen-greedy", err)) {
        memset(out, 0, sizeof *out);
        return XE_ENOMEM;
    }
    greedy_set(g, T, ap, segment_bytes, ck);
    int rc = chen_build(in, d, ck, "chen-greedy", out, err);
    free(ap);
    free(ck);
    return rc;
}

int xe_chen_greedy_budget(const xe_instance *in, int d, xe_stages *out, int64_t *segment_bytes, xe_err *err)
{
    const xe_graph *g = in->g;
    int T;
    uint8_t *ap, *ck;
    memset(out, 0, sizeof *out);
    if (chen_points(g, &T, &ap, &ck, "chen-greedy", err)) return XE_ENOMEM;
    int64_t fwd = 0;
    for (int v = 0; v < T; v++) fwd += g->nodes[v].mem;
    double best = INFINITY;
    int rc = XE_OK, nfit = 0;
    xe_err last;
    last.msg[0] = 0;
    for (int k = 0; k <= 64; k++) {
        int64_t seg = fwd / 64 * k + (fwd % 64) * k / 64;
        greedy_set(g, T, ap, seg, ck);
        xe_stages st;
        xe_err e2;
        int r = chen_build(in, d, ck, "chen-greedy", &st, &e2);
        if (r == XE_EINFEASIBLE) {
            last = e2;
            continue;
        }
        if (r) {
            rc = xe_err_set(err, r, "%s", e2.msg);
            break;
        }
        double c = xe_stages_cost(in, &st); /* equals the replay's total_time */
        if (c < best) {
            best = c;
            xe_stages_clear(out);
            *out = st;
            if (segment_bytes) *segment_bytes = seg;
            nfit++;
        } else
            xe_stages_clear(&st);
    }
    free(ap);
    free(ck);
    if (rc) {
        xe_stages_clear(out);
        return rc;
    }
    if (!nfit)
        return xe_err_set(err, XE_EINFEASIBLE, "chen-greedy: no segment size fits %lld B on %s (%s)",
                          (long long)in->dev[d >= 0 && d < in->ndev ? d : 0].budget,
                          in->dev[d >= 0 && d < in->ndev ? d : 0].name, last.msg);
    return XE_OK;
}
