/* Recompute-all (the guaranteed low-memory fallback) and the heuristic portfolio:
 * greedy, checkpoint-all and recompute-all, cheapest valid result wins
 * (docs/heuristic.md, "Portfolio" and "Minimum budget"). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stage_mem.h"
#include "xengine/solvers.h"
#include "xengine/timer.h"

int xe_heur_recompute_all(const xe_instance *in, int d, xe_stages *out, int64_t *peak, xe_err *err)
{
    const xe_graph *g = in->g;
    int n = g->n, D = in->ndev;
    memset(out, 0, sizeof *out);
    if (peak) *peak = 0;
    if (d < 0 || d >= D)
        return xe_err_set(err, XE_EINVAL, "recompute-all: device %d does not exist (instance has %d)", d, D);
    for (int v = 0; v < n; v++)
        if (!xe_can_run(in, v, d))
            return xe_err_set(err, XE_EINFEASIBLE, "recompute-all: device %s cannot run node %d (%s)", in->dev[d].name,
                              v, g->nodes[v].name);
    size_t n3 = (size_t)(n ? n : 1) * (size_t)(n ? n : 1) * (size_t)D;
    uint8_t *mark = malloc((size_t)(n ? n : 1));
    int *stack = malloc((size_t)(n ? n : 1) * sizeof *stack);
    double *U = malloc(n3 * sizeof *U);
    if (!mark || !stack || !U || xe_stages_init(out, n, D)) {
        free(mark), free(stack), free(U);
        xe_stages_clear(out);
        return xe_err_set(err, XE_ENOMEM, "recompute-all: out of memory for %d stages", n);
    }
    /* stage t: t and all its ancestors, found by a reverse search from t */
    for (int t = 0; t < n; t++) {
        memset(mark, 0, (size_t)n);
        int sp = 0;
        mark[t] = 1;
        stack[sp++] = t;
        while (sp) {
            int v = stack[--sp];
            *xe_R(out, t, v, d) = 1;
            for (int p = g->pred_off[v]; p < g->pred_off[v + 1]; p++) {
                int u = g->pred[p];
                if (!mark[u]) {
                    mark[u] = 1;
                    stack[sp++] = u;
                }
            }
        }
    }
    xe_err e2;
    int rc = xe_stages_eval(in, out, U, NULL, &e2);
    if (rc) {
        free(mark), free(stack), free(U);
        xe_stages_clear(out);
        return xe_err_set(err, rc == XE_ENOMEM ? rc : XE_EINTERNAL, "recompute-all on %s: %s", in->dev[d].name,
                          e2.msg);
    }
    double pk = 0;
    for (int t = 0; t < n; t++)
        for (int k = 0; k <= t; k++) pk = fmax(pk, U[((size_t)t * n + k) * D + d]);
    free(mark), free(stack), free(U);
    if (peak) *peak = (int64_t)llround(pk);
    if (pk > (double)in->dev[d].budget) {
        xe_stages_clear(out);
        return xe_err_set(err, XE_EINFEASIBLE, "recompute-all on %s needs %.0f bytes, budget %lld", in->dev[d].name,
                          pk, (long long)in->dev[d].budget);
    }
    rc = xe_stages_check(in, out, &e2);
    if (rc) {
        xe_stages_clear(out);
        return xe_err_set(err, rc, "recompute-all on %s: %s", in->dev[d].name, e2.msg);
    }
    return XE_OK;
}

/* Keeps cand, pruned, in best when it is cheaper (or best is empty); cand is consumed;
 * *cand_cost (may be NULL) = its cost. 1 when it was kept. */
static int keep_better(const xe_instance *in, xe_stages *best, double *best_cost, const char **which,
                       xe_stages *cand, const char *name, double *cand_cost)
{
    xe_stages_prune(in, cand);
    double c = xe_stages_cost(in, cand);
    if (cand_cost) *cand_cost = c;
    int kept = !best->R || c < *best_cost - 1e-12 * fmax(1.0, fabs(c));
    if (kept) {
        xe_stages_clear(best);
        *best = *cand;
        *best_cost = c;
        if (which) *which = name;
    } else {
        xe_stages_clear(cand);
    }
    memset(cand, 0, sizeof *cand);
    return kept;
}

int xe_heur_restarts(const xe_instance *in, double max_seconds, xe_stages *best, double *best_cost,
                     const char **which, double *found_cost, int *replaced, xe_err *err)
{
    xe_stages cand;
    if (found_cost) *found_cost = INFINITY;
    if (replaced) *replaced = 0;
    int rc = xe_heur_greedy_random(in, XE_PORTFOLIO_RANDOM_SEED, max_seconds, &cand, NULL, err);
    if (rc) return rc;
    int kept = keep_better(in, best, best_cost, which, &cand, "greedy-random", found_cost);
    if (replaced) *replaced = kept;
    return XE_OK;
}

/* Randomised diversification (docs/heuristic.md): the greedy decides stage by stage and
 * its eviction scores look at one tensor at a time, so its schedule (and the local
 * improvement from it) can sit far from the optimum where another eviction order would
 * not; randomised runs (eviction scores times U[1, 9), xe_heur_greedy_random) from
 * seeds 2, 3, ..., each improved for at most imp_s, replace *out when cheaper, for
 * XE_PORTFOLIO_DIVERSE_RUNS runs or XE_PORTFOLIO_DIVERSE_S seconds (within deadline),
 * stopping at the every-node-once bound. U-Net one GPU 80%: 31.620 s (the MILP's optimum)
 * where the greedy and its improvement stop at 31.665 s. Only on graphs of up to
 * XE_PORTFOLIO_DIVERSE_MAX_N nodes (a run takes milliseconds there; 0.8 s on a 5,000-node
 * chain). XE_OK or an error (out of memory). */
static int diversify(const xe_instance *in, xe_stages *out, const char **which, double imp_s, double deadline,
                     double t0, xe_heur_times *times, xe_err *err)
{
    double once = xe_bound_cheapest(in), best = xe_stages_cost(in, out);
    if (in->g->n > XE_PORTFOLIO_DIVERSE_MAX_N || best <= once * (1 + 1e-12)) return XE_OK;
    /* a tenth of what is left before the deadline, at most XE_PORTFOLIO_DIVERSE_S */
    double now = xe_now(), end = fmin(now + XE_PORTFOLIO_DIVERSE_S, now + 0.1 * (deadline - now));
    xe_err e2;
    for (uint64_t s = 1; s <= XE_PORTFOLIO_DIVERSE_RUNS && xe_now() < end; s++) {
        xe_stages cand;
        int rc = xe_heur_greedy_random(in, XE_PORTFOLIO_RANDOM_SEED + s, 0.0, &cand, NULL, &e2);
        if (rc == XE_EINFEASIBLE) continue; /* this run found nothing */
        if (rc) return xe_err_set(err, rc, "%s", e2.msg);
        double left = fmin(imp_s, end - xe_now());
        if (left > 0) rc = xe_heur_improve(in, &cand, left, &e2);
        if (rc) {
            xe_stages_clear(&cand);
            return xe_err_set(err, rc, "%s", e2.msg);
        }
        double c = xe_stages_cost(in, &cand);
        if (c < best * (1 - 1e-12)) {
            xe_stages t = *out;
            *out = cand;
            cand = t;
            best = c;
            if (which) *which = "greedy-diverse";
            if (times) times->best_at = xe_now() - t0;
        }
        xe_stages_clear(&cand);
        if (best <= once * (1 + 1e-12)) break;
    }
    return XE_OK;
}

int xe_heur_best(const xe_instance *in, xe_stages *out, const char **which, xe_err *err)
{
    return xe_heur_best_ex(in, out, which, 1, XE_PORTFOLIO_RANDOM_S, err);
}

int xe_heur_best_ex(const xe_instance *in, xe_stages *out, const char **which, int improve, double random_seconds,
                    xe_err *err)
{
    return xe_heur_best_within(in, out, which, improve, random_seconds, INFINITY, err);
}

int xe_heur_best_within(const xe_instance *in, xe_stages *out, const char **which, int improve,
                        double random_seconds, double deadline, xe_err *err)
{
    return xe_heur_best_timed(in, out, which, improve, random_seconds, deadline, NULL, err);
}

int xe_heur_best_timed(const xe_instance *in, xe_stages *out, const char **which, int improve,
                       double random_seconds, double deadline, xe_heur_times *times, xe_err *err)
{
    double t0 = xe_now();
    if (times) *times = (xe_heur_times){NAN, INFINITY, NAN};
    memset(out, 0, sizeof *out);
    if (which) *which = "none";
    double best_cost = INFINITY, imp_s = 0;
    int diverse = 0; /* the randomised diversification follows (set after the improvement) */
    xe_stages cand;
    xe_err first = {{0}}, e2;
    /* the greedy's best, and its other scoring's best (improved too, below) */
    xe_stages second;
    int rc = xe_heur_greedy_pair(in, improve != 0, deadline, &cand, &second, &first);
    int greedy_found = rc == XE_OK;
    if (rc == XE_OK) keep_better(in, out, &best_cost, which, &cand, "greedy", NULL);
    else if (rc != XE_EINFEASIBLE) return xe_err_set(err, rc, "%s", first.msg);
    rc = XE_OK;
    /* the simple lower bound is attained: nothing can beat the greedy */
    if (out->R && best_cost <= xe_bound_cheapest(in) * (1 + 1e-12)) goto done;
    for (int d = 0; d < in->ndev && !(out->R && xe_now() > deadline); d++) {
        int crc = xe_heur_checkpoint_all(in, d, &cand, &e2);
        if (crc == XE_OK) {
            keep_better(in, out, &best_cost, which, &cand, "checkpoint-all", NULL);
            continue; /* recompute-all computes a superset: never cheaper on d */
        }
        if (crc == XE_EINFEASIBLE) crc = xe_heur_recompute_all(in, d, &cand, NULL, &e2);
        if (crc == XE_OK) keep_better(in, out, &best_cost, which, &cand, "recompute-all", NULL);
        else if (crc != XE_EINFEASIBLE) {
            rc = xe_err_set(err, crc, "%s", e2.msg);
            goto done;
        }
    }
    /* the greedy found nothing (recompute-all may have: a costly schedule): randomised
     * greedy restarts for what is left of random_seconds; the cheaper schedule stays */
    double left = random_seconds - (xe_now() - t0);
    int restarted = !greedy_found && left > 0;
    if (restarted) {
        int rrc = xe_heur_restarts(in, left, out, &best_cost, which, NULL, NULL, &e2);
        if (rrc != XE_OK && rrc != XE_EINFEASIBLE) {
            rc = xe_err_set(err, rrc, "%s", e2.msg);
            goto done;
        }
    }
    if (!out->R) {
        rc = xe_err_set(err, XE_EINFEASIBLE, "%s", first.msg);
        goto done;
    }
    imp_s = xe_heur_improve_seconds(in);
    if (restarted) /* after the restarts: end within 0.1 s of random_seconds */
        imp_s = fmin(imp_s, fmax(0.01, random_seconds + 0.1 - (xe_now() - t0)));
    imp_s = fmin(imp_s, deadline - xe_now());
    if (!improve || !(imp_s > 0)) goto done;
    rc = xe_heur_improve(in, out, imp_s, err);
    /* the greedy's other scoring, improved the same way, when it came within 1% of the
     * best before: which of the two improves further is not known before (U-Net on one
     * GPU at 90%: 31.58 s against the best's 31.505 s, improved to the optimum 31.355 s
     * while the best stays) */
    if (rc == XE_OK && second.R && xe_stages_cost(in, &second) <= 1.01 * best_cost) {
        double imp2 = fmin(imp_s, deadline - xe_now());
        if (imp2 > 0) rc = xe_heur_improve(in, &second, imp2, err);
        if (rc == XE_OK && xe_stages_cost(in, &second) < xe_stages_cost(in, out) * (1 - 1e-12)) {
            xe_stages t = *out;
            *out = second;
            second = t;
            if (which) *which = "greedy";
        }
    }
    diverse = improve == 1 && greedy_found && !restarted;
done:
    if (times && rc == XE_OK && out->R) { /* the deterministic part's schedule */
        times->first_at = times->best_at = xe_now() - t0;
        times->first_cost = xe_stages_cost(in, out);
    }
    if (rc == XE_OK && diverse) rc = diversify(in, out, which, imp_s, deadline, t0, times, err);
    xe_stages_clear(&second);
    if (rc) xe_stages_clear(out);
    return rc;
}

/* ---- local improvement: keep instead of recompute ---- */

typedef struct move_cand {
    int t, i, d;
    double gain;
} move_cand;

static int cmp_gain(const void *a, const void *b)
{
    double x = ((const move_cand *)a)->gain, y = ((const move_cand *)b)->gain;
    return (x < y) - (x > y);
}

double xe_heur_improve_seconds(const xe_instance *in) { return in->g->n > 300 ? 0.1 : 0.25; }

/* 1 when i is a zero-cost source on d: no inputs, runs on d at cost 0. */
static int free_source(const xe_instance *in, int i, int d)
{
    return xe_graph_npred(in->g, i) == 0 && xe_can_run(in, i, d) && xe_cost(in, i, d) == 0.0;
}

/* Zero-cost sources (free_source) of st, where no copy touches them: removed from every
 * checkpoint set after their first computation and recomputed in each stage where a
 * compute on d reads them. Computed at their own step, they are resident from there to
 * their last reader in the stage instead of from the stage's start: memory only drops,
 * the cost stays. Returns how many (node, device) pairs changed. */
static int purge_free_sources(const xe_instance *in, xe_stages *st)
{
    const xe_graph *g = in->g;
    int n = st->n, D = st->ndev, changed = 0;
    for (int i = 0; i < n; i++) {
        for (int d = 0; d < D; d++) {
            if (!free_source(in, i, d)) continue;
            int copied = 0;
            for (int t = 0; t < n && !copied; t++) copied = xe_heur_cin(st, t, i, d) || xe_heur_cout(st, t, i, d);
            if (copied) continue;
            int any = 0;
            for (int t = i + 1; t < n; t++) {
                if (!*xe_S(st, t, i, d)) continue;
                int read = 0;
                for (int q = g->succ_off[i]; q < g->succ_off[i + 1] && !read; q++)
                    read = g->succ[q] <= t && *xe_R(st, t, g->succ[q], d);
                *xe_S(st, t, i, d) = 0;
                *xe_R(st, t, i, d) = (uint8_t)read;
                any = 1;
            }
            changed += any;
        }
    }
    return changed;
}

static int improve_moves(const xe_instance *in, xe_stages *st, double max_seconds, xe_err *err);

int xe_heur_improve(const xe_instance *in, xe_stages *st, double max_seconds, xe_err *err)
{
    double t0 = xe_now();
    int rc = improve_moves(in, st, max_seconds, err);
    if (rc) return rc;
    /* again from the schedule with its zero-cost sources recomputed where read, the
     * cheaper kept: the room they free can let the moves keep a dearer tensor
     * (random_layered_n100 one GPU at 70%: 51.184 s instead of 51.322 s); no copy where
     * the graph has none (most models) or no time is left */
    int any = 0;
    for (int i = 0; i < st->n && !any; i++)
        for (int d = 0; d < st->ndev && !any; d++) any = free_source(in, i, d);
    double left = max_seconds - (xe_now() - t0);
    if (!any || !(left > 0)) return XE_OK;
    xe_stages alt;
    if (xe_stages_copy(&alt, st)) return xe_err_set(err, XE_ENOMEM, "improve: out of memory");
    if (purge_free_sources(in, &alt) > 0) {
        xe_err e2;
        if (xe_stages_check(in, &alt, &e2) == XE_OK) {
            rc = improve_moves(in, &alt, left, err);
            if (rc == XE_OK && xe_stages_cost(in, &alt) < xe_stages_cost(in, st) * (1 - 1e-12)) {
                xe_stages t = *st;
                *st = alt;
                alt = t;
            }
        }
    }
    xe_stages_clear(&alt);
    return rc;
}

static int improve_moves(const xe_instance *in, xe_stages *st, double max_seconds, xe_err *err)
{
    int n = st->n, D = st->ndev;
    double t0 = xe_now();
    xe_stages orig;
    if (xe_stages_copy(&orig, st)) return xe_err_set(err, XE_ENOMEM, "improve: out of memory");
    int64_t *U = malloc((size_t)(n ? n : 1) * D * sizeof *U);
    int *last = malloc((size_t)(n ? n : 1) * D * sizeof *last);
    uint8_t *saveR = malloc((size_t)(n ? n : 1) * 1), *saveS = malloc((size_t)(n ? n : 1));
    uint8_t *saveC = malloc((size_t)(n ? n : 1) * D);
    size_t cap = 1024, nc = 0;
    move_cand *cand = malloc(cap * sizeof *cand);
    int rc = XE_OK;
    if (!U || !last || !saveR || !saveS || !saveC || !cand) {
        rc = xe_err_set(err, XE_ENOMEM, "improve: out of memory");
        goto out;
    }
    /* candidates: every recomputation or incoming copy of i on d in a later stage */
    for (int t = 1; t < n; t++)
        for (int i = 0; i < t; i++)
            for (int d = 0; d < D; d++) {
                double gain = *xe_R(st, t, i, d) ? xe_cost(in, i, d) : 0;
                for (int e = 0; e < D; e++)
                    if (e != d && *xe_C(st, t, i, e, d)) gain += xe_copy_cost(in, i, e, d);
                if (!(gain > 0)) continue;
                if (nc == cap) {
                    move_cand *q = realloc(cand, 2 * cap * sizeof *cand);
                    if (!q) {
                        rc = xe_err_set(err, XE_ENOMEM, "improve: out of memory");
                        goto out;
                    }
                    cand = q;
                    cap *= 2;
                }
                cand[nc++] = (move_cand){t, i, d, gain};
            }
    qsort(cand, nc, sizeof *cand, cmp_gain);
    for (size_t c = 0; c < nc; c++) {
        if (xe_now() - t0 > max_seconds) break;
        int t = cand[c].t, i = cand[c].i, d = cand[c].d;
        if (!*xe_R(st, t, i, d) && !xe_heur_cin(st, t, i, d)) continue; /* gone already */
        /* the latest earlier stage where i is present on d */
        int s = t - 1;
        while (s >= i && !xe_heur_present(st, s, i, d)) s--;
        if (s < i) continue;
        /* keep i on d through stages s+1..t: S = 1, no recomputation or copy in */
        for (int q = s + 1; q <= t; q++) {
            int k = q - (s + 1);
            saveR[k] = *xe_R(st, q, i, d);
            saveS[k] = *xe_S(st, q, i, d);
            *xe_S(st, q, i, d) = 1;
            *xe_R(st, q, i, d) = 0;
            for (int e = 0; e < D; e++)
                if (e != d) {
                    saveC[k * D + e] = *xe_C(st, q, i, e, d);
                    *xe_C(st, q, i, e, d) = 0;
                }
        }
        int ok = 1;
        for (int q = s; q <= t && ok; q++) {
            int kk, dd;
            xe_heur_stage_eval(in, st, q, U, last);
            if (xe_heur_worst_overflow(in, q, U, &kk, &dd) > 0) ok = 0;
        }
        if (!ok)
            for (int q = s + 1; q <= t; q++) {
                int k = q - (s + 1);
                *xe_R(st, q, i, d) = saveR[k];
                *xe_S(st, q, i, d) = saveS[k];
                for (int e = 0; e < D; e++)
                    if (e != d) *xe_C(st, q, i, e, d) = saveC[k * D + e];
            }
    }
    xe_stages_prune(in, st);
    /* safety net: the moves keep every structural rule by construction; verify it */
    xe_err e2;
    if (xe_stages_check(in, st, &e2) != XE_OK || xe_stages_cost(in, st) > xe_stages_cost(in, &orig)) {
        xe_stages_clear(st);
        *st = orig;
        memset(&orig, 0, sizeof orig);
    }
out:
    xe_stages_clear(&orig);
    free(U), free(last), free(saveR), free(saveS), free(saveC), free(cand);
    return rc;
}
