/* Event-list simulated annealing on one device (include/xengine/anneal.h,
 * docs/anneal.md). The state is a compute sequence; frees are implied (right after each
 * tensor's last read), so evaluating a sequence is one scan: the last read of every
 * compute, then the resident bytes as a prefix sum of +mem at a compute and -mem after
 * its last read. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/anneal.h"
#include "xengine/sim.h"
#include "xengine/timer.h"

#include "rng.h"
#include "seq_eval.h"

/* `move` takes a compute at most this far (in computes), except one move in four,
 * which may take it up to half the sequence away (docs/anneal.md, "Tuning"). */
#define XE_ANNEAL_MOVE_REACH 20
/* Defaults (docs/anneal.md, "Tuning"). */
#define XE_ANNEAL_MOVES_PER_COMPUTE 2000
#define XE_ANNEAL_MIN_ROUND 200000
#define XE_ANNEAL_MAX_ROUND 2000000
#define XE_ANNEAL_T_HOT 0.6
#define XE_ANNEAL_T_COLD 0.004
#define XE_ANNEAL_PENALTY 10.0

void xe_anneal_opts_default(xe_anneal_opts *o)
{
    memset(o, 0, sizeof *o);
    o->time_limit = 1.0;
    o->seed = 1;
}

/* A uniform draw in [0, k), k >= 1. */
static int sa_below(uint64_t *rs, int k)
{
    return (int)(xe_splitmix64(rs) % (uint64_t)k);
}

/* A uniform draw in [0, 1). */
static double sa_unit(uint64_t *rs)
{
    return (double)(xe_splitmix64(rs) >> 11) * (1.0 / 9007199254740992.0);
}

/* Proposes one move of seq[0..m) into cand; returns the candidate's length, or -1 when
 * the draw gives no move (a delete of a node computed once, an insert with no earlier
 * compute of the input). cnt[v]: how often seq computes v. */
static int sa_propose(const xe_graph *g, const int *seq, int m, const int *cnt, int cap, uint64_t *rs, int *cand)
{
    int kind = sa_below(rs, 3);
    int k = sa_below(rs, m);
    if (kind == 0) { /* delete */
        if (cnt[seq[k]] < 2) return -1;
        memcpy(cand, seq, (size_t)k * sizeof *cand);
        memcpy(cand + k, seq + k + 1, (size_t)(m - k - 1) * sizeof *cand);
        return m - 1;
    }
    if (kind == 1) { /* insert an input's compute before a reader */
        int v = seq[k];
        int np = g->pred_off[v + 1] - g->pred_off[v];
        if (np == 0 || m + 1 > cap) return -1;
        int u = g->pred[g->pred_off[v] + sa_below(rs, np)];
        int prev = k - 1;
        while (prev >= 0 && seq[prev] != u) prev--;
        if (prev < 0) return -1;
        int p = prev + 1 + sa_below(rs, k - prev);
        memcpy(cand, seq, (size_t)p * sizeof *cand);
        cand[p] = u;
        memcpy(cand + p + 1, seq + p, (size_t)(m - p) * sizeof *cand);
        return m + 1;
    }
    /* move: out at k, back in at p of the remaining m - 1 */
    int far = (xe_splitmix64(rs) & 3) == 0 && m > 4;
    int w = 1 + sa_below(rs, far ? m / 2 : XE_ANNEAL_MOVE_REACH);
    int p = k + sa_below(rs, 2 * w + 1) - w;
    if (p < 0) p = 0;
    if (p > m - 1) p = m - 1;
    if (p == k) return -1;
    int v = seq[k];
    if (p < k) { /* seq[p..k) shifts right by one */
        memcpy(cand, seq, (size_t)p * sizeof *cand);
        cand[p] = v;
        memcpy(cand + p + 1, seq + p, (size_t)(k - p) * sizeof *cand);
        memcpy(cand + k + 1, seq + k + 1, (size_t)(m - k - 1) * sizeof *cand);
    } else { /* seq(k..p] shifts left by one */
        memcpy(cand, seq, (size_t)k * sizeof *cand);
        memcpy(cand + k, seq + k + 1, (size_t)(p - k) * sizeof *cand);
        cand[p] = v;
        memcpy(cand + p + 1, seq + p + 1, (size_t)(m - p - 1) * sizeof *cand);
    }
    return m;
}

int xe_anneal(const xe_instance *in, const xe_schedule *start, const xe_anneal_opts *o, xe_schedule *out,
              xe_anneal_result *res, xe_err *err)
{
    double t0 = xe_now();
    memset(res, 0, sizeof *res);
    xe_schedule_clear(out);
    const xe_graph *g = in->g;
    int n = g->n;
    if (in->ndev != 1 || !(o->time_limit > 0) || o->round_moves < 0 || o->max_rounds < 0 || !(o->t_hot >= 0) || !(o->t_cold >= 0) ||
        !(o->penalty >= 0) || n < 1)
        return xe_err_set(err, XE_EINVAL, "anneal: needs one device, a time limit > 0 and options >= 0");
    xe_sim_result sr;
    xe_err e2;
    if (xe_sim_run(in, start, &sr, &e2) != XE_OK)
        return xe_err_set(err, XE_EINVAL, "anneal: the start is not valid: %s", e2.msg);
    if (sr.dev[0].peak > in->dev[0].budget)
        return xe_err_set(err, XE_EINVAL, "anneal: the start peaks at %lld B, above the budget %lld B",
                          (long long)sr.dev[0].peak, (long long)in->dev[0].budget);
    int m = 0;
    for (int i = 0; i < start->len; i++) m += start->ev[i].kind == XE_EV_COMPUTE;
    /* room for the sequence to grow: inserts stop at cap */
    int cap = xe_seq_cap(m, n);
    int *seq = malloc((size_t)cap * sizeof *seq), *cand = malloc((size_t)cap * sizeof *cand);
    int *best = malloc((size_t)cap * sizeof *best), *cnt = calloc((size_t)n, sizeof *cnt);
    xe_seq_eval e;
    int rc = xe_seq_eval_init(&e, in, cap);
    const double *cost = e.cost;
    if (!seq || !cand || !best || !cnt || rc) {
        rc = xe_err_set(err, XE_ENOMEM, "anneal: out of memory for %d computes", cap);
        goto out;
    }
    m = 0;
    for (int i = 0; i < start->len; i++)
        if (start->ev[i].kind == XE_EV_COMPUTE) seq[m++] = start->ev[i].node;
    double mean_cost = 0, mean_mem = 0;
    for (int v = 0; v < n; v++) {
        mean_cost += cost[v] / n;
        mean_mem += (double)g->nodes[v].mem / n;
    }
    double cur_cost, cur_over;
    int64_t cur_peak;
    if (!xe_seq_evaluate(&e, seq, m, 1, &cur_cost, &cur_over, &cur_peak) || cur_over > 0) {
        rc = xe_err_set(err, XE_EINTERNAL, "anneal: the start's computes do not replay as the simulator did");
        goto out;
    }
    res->start_cost = cur_cost;
    double best_cost = cur_cost;
    int64_t best_peak = cur_peak;
    int bm = m;
    memcpy(best, seq, (size_t)m * sizeof *best);
    double unit = mean_cost > 0 ? mean_cost : 1.0;
    double lambda = (o->penalty > 0 ? o->penalty : XE_ANNEAL_PENALTY) * unit / (mean_mem > 0 ? mean_mem : 1.0);
    double t_hot = (o->t_hot > 0 ? o->t_hot : XE_ANNEAL_T_HOT) * unit;
    double t_cold = (o->t_cold > 0 ? o->t_cold : XE_ANNEAL_T_COLD) * unit;
    if (t_cold > t_hot) t_cold = t_hot;
    int64_t round = o->round_moves > 0 ? o->round_moves : (int64_t)XE_ANNEAL_MOVES_PER_COMPUTE * m;
    if (o->round_moves <= 0 && round < XE_ANNEAL_MIN_ROUND) round = XE_ANNEAL_MIN_ROUND;
    if (o->round_moves <= 0 && round > XE_ANNEAL_MAX_ROUND) round = XE_ANNEAL_MAX_ROUND;
    double deadline = t0 + o->time_limit;
    int stop = 0;
    for (int r = 0; !stop && !(o->max_rounds > 0 && r >= o->max_rounds); r++) {
        uint64_t rs = o->seed + (uint64_t)r;
        m = bm; /* each round from the cheapest valid sequence */
        memcpy(seq, best, (size_t)m * sizeof *seq);
        memset(cnt, 0, (size_t)n * sizeof *cnt);
        for (int k = 0; k < m; k++) cnt[seq[k]]++;
        cur_cost = best_cost;
        cur_over = 0;
        double energy = cur_cost;
        /* the temperature falls geometrically from t_hot to t_cold over the round */
        double temp = t_hot, cool = pow(t_cold / t_hot, 1.0 / (double)round);
        int64_t it = 0;
        for (; it < round; it++) {
            if ((it & 255) == 0 && (xe_now() >= deadline || (o->interrupt && *o->interrupt) ||
                                    (o->target > 0 && best_cost <= o->target))) {
                stop = 1;
                break;
            }
            res->moves++;
            temp *= cool;
            int cm = sa_propose(g, seq, m, cnt, cap, &rs, cand);
            if (cm < 0) continue;
            double cc, co;
            int64_t cp;
            if (!xe_seq_evaluate(&e, cand, cm, 0, &cc, &co, &cp)) continue;
            double ce = cc + lambda * co;
            if (ce > energy && !(sa_unit(&rs) < exp((energy - ce) / temp))) continue;
            /* accepted: the counts follow the length change */
            if (cm < m) { /* a delete: find the node that lost a compute */
                int k = 0;
                while (k < cm && cand[k] == seq[k]) k++;
                cnt[seq[k]]--;
            } else if (cm > m) {
                int k = 0;
                while (k < m && cand[k] == seq[k]) k++;
                cnt[cand[k]]++;
            }
            int *t = seq;
            seq = cand;
            cand = t;
            m = cm;
            energy = ce;
            if (co == 0 && cc < best_cost * (1 - 1e-12)) {
                best_cost = cc;
                best_peak = cp;
                bm = m;
                memcpy(best, seq, (size_t)m * sizeof *best);
                res->time_best = xe_now() - t0;
            }
        }
        if (!stop) res->rounds++;
        else res->partial = it > 0;
    }
    /* the cheapest sequence without computes nothing reads (zero-cost ones ride along);
     * dropping them lowers no byte count above its own and no cost below zero */
    memset(cnt, 0, (size_t)n * sizeof *cnt);
    for (int k = 0; k < bm; k++) cnt[best[k]]++;
    if (!xe_seq_drop_dead(&e, best, &bm, cnt, &best_cost, &cur_over, &best_peak) || cur_over > 0) {
        rc = xe_err_set(err, XE_EINTERNAL, "anneal: the cheapest sequence is not valid");
        goto out;
    }
    rc = xe_seq_write(in, &e, best, bm, best_cost, out, "anneal", err);
    res->cost = best_cost;
    res->peak = best_peak;
out:
    res->time_total = xe_now() - t0;
    free(seq);
    free(cand);
    free(best);
    free(cnt);
    xe_seq_eval_free(&e);
    return rc;
}
