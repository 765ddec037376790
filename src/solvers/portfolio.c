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

/* checkpoint-all's or recompute-all's work in greedy passes, at most, and the
 * improvement's beyond its seconds (its copy and final check): see xe_heur_best_intr. */
#define XE_PORTFOLIO_BASELINE_PASSES 4.0
#define XE_PORTFOLIO_IMPROVE_PASSES 5.0

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
    uint8_t *mark = malloc((size_t)(n ? n : 1));
    int *stack = malloc((size_t)(n ? n : 1) * sizeof *stack);
    double maxu[XE_MAX_DEV];
    if (!mark || !stack || xe_stages_init(out, n, D)) {
        free(mark), free(stack);
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
    /* its peak, one stage at a time (the whole U took 8 B x n x n x devices) */
    int rc = xe_stages_max_use(in, out, maxu, &e2);
    if (rc) {
        free(mark), free(stack);
        xe_stages_clear(out);
        return xe_err_set(err, rc == XE_ENOMEM ? rc : XE_EINTERNAL, "recompute-all on %s: %s", in->dev[d].name,
                          e2.msg);
    }
    double pk = maxu[d];
    free(mark), free(stack);
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
    return xe_heur_restarts_within(in, max_seconds, INFINITY, best, best_cost, which, found_cost, replaced, err);
}

int xe_heur_restarts_within(const xe_instance *in, double max_seconds, double deadline, xe_stages *best,
                            double *best_cost, const char **which, double *found_cost, int *replaced, xe_err *err)
{
    xe_stages cand;
    if (found_cost) *found_cost = INFINITY;
    if (replaced) *replaced = 0;
    int rc = xe_heur_greedy_random_within(in, XE_PORTFOLIO_RANDOM_SEED, max_seconds, deadline, &cand, NULL, err);
    if (rc) return rc;
    int kept = keep_better(in, best, best_cost, which, &cand, "greedy-random", found_cost);
    if (replaced) *replaced = kept;
    return XE_OK;
}

/* Randomised diversification (docs/heuristic.md): the greedy decides stage by stage and
 * its eviction scores look at one tensor at a time, so its schedule (and the local
 * improvement from it) can sit far from the optimum where another eviction order would
 * not; randomised runs (eviction scores times U[1, 9), xe_heur_greedy_random) from
 * seeds 2, 3, ..., each with the quick improvement (one round of keeps,
 * XE_IMPROVE_KEEP), replace *out as soon as one is cheaper; the cheapest run then gets
 * the whole improvement (xe_heur_improve) and replaces *out when that makes it cheaper.
 * At most XE_PORTFOLIO_DIVERSE_RUNS runs and XE_PORTFOLIO_DIVERSE_WORK work (greedy passes
 * and rounds of keeps; a share of it when the deadline is less than
 * XE_PORTFOLIO_DIVERSE_FULL_S away), stopping at the every-node-once bound; the runs and
 * the final improvement stop early only after XE_PORTFOLIO_DIVERSE_S seconds or half of
 * what is left before deadline (before 2026-11-30 the runs had 0.2 s of wall clock, so the
 * result changed with the machine: the main job's came out 0.028829 s instead of the
 * README's 0.028822 s on a slower machine, 52 runs in 0.2 s; 121 find it). U-Net one
 * GPU 80%: 31.620 s (the MILP's optimum) where the greedy and its improvement stop at
 * 31.665 s. Only on graphs of up to XE_PORTFOLIO_DIVERSE_MAX_N nodes (a run takes
 * milliseconds there; 0.8 s on a 5,000-node chain). XE_OK or an error (out of memory). */
static int diversify(const xe_instance *in, xe_stages *out, const char **which, double imp_s, double deadline,
                     double t0, const volatile sig_atomic_t *intr, xe_heur_times *times, xe_err *err)
{
    double once = xe_bound_cheapest(in), best = xe_stages_cost(in, out);
    if (in->g->n > XE_PORTFOLIO_DIVERSE_MAX_N || best <= once * (1 + 1e-12)) return XE_OK;
    /* work left, in greedy passes and rounds of keeps of xe_heur_pass_work each; with a
     * deadline less than XE_PORTFOLIO_DIVERSE_FULL_S from the call's start, that share of
     * it (the call's time to its deadline rounded to 0.1 s, so the same limit gives the
     * same work) */
    double work = XE_PORTFOLIO_DIVERSE_WORK, unit = xe_heur_pass_work(in);
    if (isfinite(deadline))
        work *= fmin(1.0, fmax(0.0, round(10.0 * (deadline - t0)) / 10.0) / XE_PORTFOLIO_DIVERSE_FULL_S);
    /* a cap for machines far slower than this one: half of what is left before the
     * deadline, at most XE_PORTFOLIO_DIVERSE_S */
    double now = xe_now(), end = fmin(now + XE_PORTFOLIO_DIVERSE_S, now + 0.5 * (deadline - now));
    double end_runs = now + 0.8 * (end - now); /* the rest: the final improvement */
    xe_err e2;
    /* the runs get the quick improvement (one round of keeps); the cheapest of them then
     * the whole one, which takes up to ten times longer (docs/heuristic.md) */
    xe_stages div = {0};
    double div_cost = INFINITY;
    int rc = XE_OK;
    for (uint64_t s = 1; s <= XE_PORTFOLIO_DIVERSE_RUNS && work > 0 && xe_now() < end_runs && !xe_interrupted(intr);
         s++) {
        xe_stages cand;
        long passes = 0;
        rc = xe_heur_greedy_random_ex(in, XE_PORTFOLIO_RANDOM_SEED + s, 0.0, &cand, NULL, &passes, &e2);
        work -= (double)(passes + 1) * unit;
        if (rc == XE_EINFEASIBLE) { /* this run found nothing */
            rc = XE_OK;
            continue;
        }
        if (rc) break;
        double left = fmin(imp_s, end_runs - xe_now());
        if (left > 0) rc = xe_heur_improve_ex(in, &cand, left, XE_IMPROVE_KEEP, &e2);
        if (rc) {
            xe_stages_clear(&cand);
            break;
        }
        double c = xe_stages_cost(in, &cand);
        if (c < div_cost * (1 - 1e-12)) {
            xe_stages t = div;
            div = cand;
            cand = t;
            div_cost = c;
        }
        xe_stages_clear(&cand);
        if (div_cost < best * (1 - 1e-12) && div.R) { /* already cheaper: in hand now */
            xe_stages cp;
            if (xe_stages_copy(&cp, &div)) {
                rc = xe_err_set(&e2, XE_ENOMEM, "diversification: out of memory");
                break;
            }
            xe_stages_clear(out);
            *out = cp;
            best = div_cost;
            if (which) *which = "greedy-diverse";
            if (times) times->best_at = xe_now() - t0;
        }
        if (div_cost <= once * (1 + 1e-12)) break;
    }
    if (rc == XE_OK && div.R && !xe_interrupted(intr)) {
        double left = fmin(imp_s, end - xe_now());
        if (left > 0) rc = xe_heur_improve(in, &div, left, &e2);
        if (rc == XE_OK && keep_better(in, out, &best, which, &div, "greedy-diverse", NULL) && times)
            times->best_at = xe_now() - t0;
    }
    xe_stages_clear(&div);
    return rc ? xe_err_set(err, rc, "%s", e2.msg) : XE_OK;
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
    return xe_heur_best_intr(in, out, which, improve, random_seconds, deadline, NULL, times, err);
}

int xe_heur_best_intr(const xe_instance *in, xe_stages *out, const char **which, int improve, double random_seconds,
                      double deadline, const volatile sig_atomic_t *intr, xe_heur_times *times, xe_err *err)
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
    int rc = xe_heur_greedy_pair_intr(in, improve != 0, deadline, intr, &cand, &second, &first);
    int greedy_found = rc == XE_OK;
    if (rc == XE_OK) keep_better(in, out, &best_cost, which, &cand, "greedy", NULL);
    else if (rc != XE_EINFEASIBLE) return xe_err_set(err, rc, "%s", first.msg); /* XE_ETIMEOUT: interrupted */
    rc = XE_OK;
    /* the simple lower bound is attained: nothing can beat the greedy */
    if (out->R && best_cost <= xe_bound_cheapest(in) * (1 + 1e-12)) goto done;
    /* past the deadline only without a schedule, and not beyond its grace: checking
     * checkpoint-all's stage matrices took over 50 s on a 40,000-node graph after a 5-s
     * limit */
    double hard = fmax(deadline, t0) + XE_HEUR_GRACE_S;
    /* with a schedule in hand, none starts that would end past the deadline: recompute-all
     * builds and evaluates n^2 D cells, about XE_PORTFOLIO_BASELINE_PASSES passes of work
     * (8.6 s on a 10,000-node chain on gpu+cpu, where it then did not fit) */
    double base_s = XE_PORTFOLIO_BASELINE_PASSES * xe_heur_pass_seconds(in);
    for (int d = 0; d < in->ndev && !(out->R && (xe_now() + base_s > deadline || xe_interrupted(intr))) &&
                    xe_now() <= hard;
         d++) {
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
     * greedy restarts for random_seconds of work (XE_HEUR_PASS_RATE: not what the
     * clock leaves of it, so that the answer does not depend on the machine); the
     * cheaper schedule stays */
    int restarted = !greedy_found && random_seconds > 0 && !xe_interrupted(intr);
    if (restarted) {
        int rrc = xe_heur_restarts(in, random_seconds, out, &best_cost, which, NULL, NULL, &e2);
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
    imp_s = fmin(imp_s, deadline - xe_now());
    /* the improvement's copy and final check come on top of its seconds: about
     * XE_PORTFOLIO_IMPROVE_PASSES passes of work (7.6-9.5 s on a 10,000-node chain on
     * gpu+cpu, for 0.5 s of moves); none starts that would end past the deadline */
    double imp_over = XE_PORTFOLIO_IMPROVE_PASSES * xe_heur_pass_seconds(in);
    if (!improve || !(imp_s > 0) || xe_now() + imp_s + imp_over > deadline || xe_interrupted(intr)) goto done;
    rc = xe_heur_improve(in, out, imp_s, err);
    /* the greedy's other scoring, improved the same way, when it came within 1% of the
     * best before: which of the two improves further is not known before (U-Net on one
     * GPU at 90%: 31.58 s against the best's 31.505 s, improved to the optimum 31.355 s
     * while the best stays) */
    if (rc == XE_OK && second.R && xe_stages_cost(in, &second) <= 1.01 * best_cost) {
        double imp2 = fmin(imp_s, deadline - xe_now());
        if (imp2 > 0 && xe_now() + imp2 + imp_over <= deadline) rc = xe_heur_improve(in, &second, imp2, err);
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
    if (rc == XE_OK && diverse) rc = diversify(in, out, which, imp_s, deadline, t0, intr, times, err);
    xe_stages_clear(&second);
    if (rc) xe_stages_clear(out);
    return rc;
}
