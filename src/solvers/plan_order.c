/* The planner's low-peak topological orders (src/solvers/plan_int.h, docs/reorder.md). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/reorder.h"
#include "xengine/solvers.h"
#include "xengine/timer.h"

#include "plan_int.h"

/* The order search's passes and time (docs/reorder.md): 400 passes take 9 ms on
 * random_layered_n250; the time cap matters only on graphs of thousands of wide layers. */
#define XE_PLAN_ORDER_PASSES 400
#define XE_PLAN_ORDER_S 0.1
/* Where the graph order has a schedule: up to this many low-peak orders (seeds 1, 2, ...),
 * the portfolio in each, for XE_PLAN_REORDER_SHARE of the time left (1 s without a
 * limit; plan_int.h), the first always; the orders differ (random_layered_n100: peaks 38,660-42,430 B
 * over seeds 1-20, portfolio schedules 51.140-64.538 s at 70%). */
#define XE_PLAN_ORDER_CANDIDATES 16
/* With LNS or the MILP to follow, the low-peak order is taken only when its portfolio's
 * schedule is this much cheaper than the graph order's (or provably optimal): a small
 * lead does not last (random_layered_n100 one GPU at 90%, the first order alone: 48.283 s
 * against 48.412 s, 0.27% cheaper, but LNS in the graph order reaches 48.146 s and in the
 * low-peak order stays at 48.283 s); a larger one does (at 80%: 48.283 s against
 * 49.143 s, 1.75%, below the graph order's proven stage optimum, 48.866 s). */
#define XE_PLAN_REORDER_MARGIN 0.01
/* Further orders where neither order's portfolio nor the restarts found a schedule: at
 * most this many, for a tenth of the time left (at least min(2 s, a quarter of the
 * limit); XE_PLAN_MORE_ORDERS_DEFAULT_S without a limit), as the exact search (docs/reorder.md). */
#define XE_PLAN_MORE_ORDERS 32

/* The low-peak order's schedule replaces the graph order's when cheaper by this factor
 * (any cheaper where nothing follows the portfolio). */
double xe_plan_reorder_margin(const xe_plan_opts *o)
{
    return o->mode == XE_PLAN_HEURISTIC || o->feasibility ? 0.0 : XE_PLAN_REORDER_MARGIN;
}

/* FNV-1a hash of an order: seeds often give the same order (the first pass of
 * xe_order_low_peak is the same for every seed), which is then not planned again. */
static uint64_t order_hash(const int *order, int n)
{
    uint64_t h = 14695981039346656037ULL;
    for (int k = 0; k < n; k++) h = (h ^ (uint64_t)(unsigned)order[k]) * 1099511628211ULL;
    return h;
}

/* 1 when h is among seen[0..*nseen); else adds it (when there is room) and returns 0. */
static int seen_order(uint64_t h, uint64_t *seen, int *nseen, int cap)
{
    for (int k = 0; k < *nseen; k++)
        if (seen[k] == h) return 1;
    if (*nseen < cap) seen[(*nseen)++] = h;
    return 0;
}

/* The low-peak order of `seed` (xe_order_low_peak into order[n], with the search's
 * passes and time) and in relabelled in it: *p (new, the caller's) and *pk its peak; *p
 * stays NULL when that peak is not below `peak` or the order was tried before (seen,
 * seen_order). XE_OK or an error (out of memory). */
static int order_candidate(const xe_instance *in, uint64_t seed, double deadline, int64_t peak, int *order,
                           uint64_t *seen, int *nseen, int cap, xe_instance **p, int64_t *pk, xe_err *err)
{
    *p = NULL;
    int rc = xe_order_low_peak(in->g, seed, XE_PLAN_ORDER_PASSES, fmin(deadline, xe_now() + XE_PLAN_ORDER_S), order,
                               pk, err);
    if (rc || *pk >= peak || seen_order(order_hash(order, in->g->n), seen, nseen, cap)) return rc;
    return xe_instance_permute(in, order, p, err);
}

/* Where some device's budget is below the index order's no-recomputation peak:
 * topological orders with a lower peak (xe_order_low_peak, seeds 1, 2, ...), the
 * instance relabelled in each and the portfolio there (improved, no randomised restarts;
 * docs/reorder.md). When the graph order has a schedule (best_cost finite), up to
 * XE_PLAN_ORDER_CANDIDATES orders for `seconds` (the first always, unless the graph
 * order's portfolio took t_portfolio > seconds: then none, and a row saying so), stopping
 * at one as cheap as every node once, and at once when the first seed's order has no
 * lower peak; else the first order only (the exact search should not wait for more). The cheapest is kept. Emits row "reorder" when some order has a lower
 * peak. Returns 1 when its schedule is cheaper than best_cost by XE_PLAN_REORDER_MARGIN
 * (none in heuristic or feasibility mode), or optimal, or the only one: *in2 (owned by
 * the caller then), perm[n] (the order: node k of *in2 is node perm[k] of in) and *heur2
 * hold it, *which2 its member; 2 when neither order's portfolio found a schedule (*in2
 * and perm kept for the later phases, *heur2 empty); 0 when nothing changes (nothing
 * allocated); a negative XE_E* code with err set on errors (out of memory, a portfolio
 * failure). */
int xe_plan_reorder_phase(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double h_deadline,
                         double seconds, double t_portfolio, double best_cost, xe_instance **in2, int *perm,
                         xe_stages *heur2, const char **which2, xe_plan_aside *aside, xe_err *err)
{
    int n = in->g->n;
    *in2 = NULL;
    if (o->no_reorder || n < 3 || (o->feasibility && isfinite(best_cost))) return 0;
    int64_t peak = xe_instance_norecompute_peak(in->g);
    if (peak < 0) return xe_err_set(err, XE_ENOMEM, "plan: out of memory computing the peak");
    int tight = 0;
    for (int d = 0; d < in->ndev; d++) tight |= in->dev[d].budget < peak;
    if (!tight) return 0;
    double once = xe_bound_cheapest(in);
    /* within the gap asked for of every node once (the bound over every schedule): no
     * order can win what the caller would count (a 1,000-node DAG on gpu+cpu at 50%,
     * --heuristic-only: 7 orders' portfolios in 3.3 s for 2e-6 below a greedy within 7e-6
     * of it) */
    if (xe_plan_rel_gap(best_cost, once) <= o->rel_gap) return 0;
    /* the graph order has a schedule, and one more portfolio would not fit the share (a
     * failing one is not interrupted: 7 s on a random 2,000-node DAG whose graph-order
     * portfolio took 3.7 s) */
    if (!(seconds > 0)) { /* the time limit has passed */
        xe_plan_emit_not_run(o, res, "reorder", NAN, NAN);
        return 0;
    }
    if (isfinite(best_cost) && t_portfolio > seconds) {
        snprintf(res->reorder_status, sizeof res->reorder_status,
                 "not run (one portfolio took %.2f s, over its share of %.2f s)", t_portfolio, seconds);
        xe_plan_emit_heur(o, res, "reorder", res->reorder_status, INFINITY, 0.0);
        return 0;
    }
    double t0 = xe_now(), end = t0 + seconds;
    int ncand = isfinite(best_cost) ? XE_PLAN_ORDER_CANDIDATES : 1;
    int *order = malloc(((size_t)n + 1) * sizeof *order);
    if (!order) return xe_err_set(err, XE_ENOMEM, "plan: out of memory");
    double c = INFINITY; /* the best order's schedule's cost */
    const char *w = "greedy";
    xe_stages cand = {0};
    int rc = XE_OK, tried = 0, nseen = 0;
    uint64_t seen[XE_PLAN_ORDER_CANDIDATES];
    res->peak_index = peak;
    for (int seed = 1; tried < ncand && seed <= 4 * ncand && (seed == 1 || xe_now() < end); seed++) {
        int64_t pk;
        xe_instance *p;
        rc = order_candidate(in, (uint64_t)seed, INFINITY, peak, order, seen, &nseen, XE_PLAN_ORDER_CANDIDATES, &p,
                             &pk, err);
        if (rc) break;
        if (seed == 1) res->peak_order = pk;
        /* the first seed's order no lower: none is (the seeds share their first pass; on
         * the shared graphs and the ONNX fixtures, either seed 1 and all of seeds 1-64
         * give a lower peak, or none of them does), and trying the other 63 took up to
         * 0.14 s for nothing (a third of a 1-s limit in the ASan build) */
        if (seed == 1 && pk >= peak) break;
        if (!p) continue;
        tried++;
        const char *cw = "greedy";
        xe_err e2 = {{0}};
        int hrc = xe_heur_best_intr(p, &cand, &cw, 2, 0.0, h_deadline, o->interrupt, NULL, &e2); /* no diversification */
        if (hrc == XE_ETIMEOUT) hrc = XE_EINFEASIBLE; /* interrupted: none in this order */
        if (hrc != XE_OK && hrc != XE_EINFEASIBLE) {
            xe_instance_free(p);
            rc = xe_err_set(err, hrc, "heuristic failed in a low-peak order: %s", e2.msg);
            break;
        }
        double cc = hrc == XE_OK ? xe_stages_cost(p, &cand) : INFINITY;
        if (cc < c || !*in2) { /* the cheapest so far (or the first order, kept for later phases) */
            xe_instance_free(*in2);
            xe_stages_clear(heur2);
            *in2 = p;
            *heur2 = cand;
            memset(&cand, 0, sizeof cand);
            memcpy(perm, order, (size_t)n * sizeof *perm);
            res->peak_order = pk;
            c = cc;
            w = cw;
        } else {
            xe_instance_free(p);
            xe_stages_clear(&cand);
        }
        if (c <= once * (1 + 1e-12) || xe_plan_stopped(o)) break; /* every node once: nothing is cheaper */
    }
    free(order);
    if (rc) {
        xe_stages_clear(heur2);
        xe_instance_free(*in2);
        *in2 = NULL;
        return rc;
    }
    if (!*in2) return 0; /* no order with a lower peak */
    /* cheaper by the margin (LNS and the MILP follow in one order only, and the graph
     * order's search often closes a small lead), or as cheap as computing every node once
     * on its cheapest device: optimal over all schedules */
    double margin = xe_plan_reorder_margin(o);
    int take = isfinite(c) && (c < best_cost * (1 - margin) || (c < best_cost && c <= once * (1 + 1e-12)));
    /* cheaper, but not by the margin: kept aside (an event list in in's node ids) and
     * returned if nothing later beats it; before 2026-12-01 it was dropped, and `auto`
     * could write a dearer schedule than this row showed */
    int keep = !take && c < best_cost * (1 - 1e-12);
    if (keep) {
        xe_schedule_clear(&aside->events);
        xe_err e2 = {{0}};
        int crc = xe_stages_to_schedule(*in2, heur2, &aside->events, &e2);
        if (crc) {
            xe_stages_clear(heur2);
            xe_instance_free(*in2);
            *in2 = NULL;
            return xe_err_set(err, crc, "plan: low-peak order's schedule: %s", e2.msg);
        }
        xe_schedule_unpermute(&aside->events, perm);
        aside->cost = c;
        aside->bound = xe_bound_stage(*in2);
        aside->which = w;
        aside->peak = res->peak_order;
    }
    snprintf(res->reorder_status, sizeof res->reorder_status,
             "%s (%d low-peak order%s; peak %.1f%% of the graph order's)",
             !isfinite(c)  ? "no schedule found"
             : take        ? "valid, planned in it"
             : keep        ? "valid, cheaper by under 1%, kept aside"
                           : "valid, not cheaper",
             tried, tried == 1 ? "" : "s", 100.0 * (double)res->peak_order / (double)peak);
    xe_plan_emit_heur(o, res, "reorder", res->reorder_status, c, xe_now() - t0);
    if (!take && !isfinite(c) && !isfinite(best_cost))
        return 2; /* neither order has a schedule: *in2 stays for the restarts and descent */
    if (!take) {
        xe_stages_clear(heur2);
        xe_instance_free(*in2);
        *in2 = NULL;
        return 0;
    }
    *which2 = w;
    return 1;
}

/* Where no order's portfolio or restarts found a stage schedule: further low-peak
 * orders (xe_order_low_peak with seeds 2, 3, ...: other orders of about the same peak),
 * the portfolio in each, for `seconds` and at most XE_PLAN_MORE_ORDERS orders; the first
 * schedule found is kept: *in2 and perm then hold that order (the previous *in2 freed),
 * *heur2 its schedule, *which2 its member, and 1 is returned; 0 when none was found;
 * a negative XE_E* code on errors. Emits row "orders". random_layered_n250 one GPU at
 * 65%: the first order and the restarts find nothing, the order of seed 3 a schedule of
 * 133.732 s (1.065x) after 0.3 s, where the exact search's is 265 s (docs/reorder.md). */
int xe_plan_more_orders(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double seconds,
                       xe_instance **in2, int *perm, xe_stages *heur2, const char **which2, xe_err *err)
{
    int n = in->g->n;
    double t0 = xe_now(), end = t0 + seconds;
    int *order = malloc(((size_t)n + 1) * sizeof *order);
    if (!order) return xe_err_set(err, XE_ENOMEM, "plan: out of memory");
    int found = 0, tried = 0, rc = XE_OK, nseen = 0;
    double c = INFINITY;
    uint64_t seen[XE_PLAN_MORE_ORDERS + 1];
    seen_order(order_hash(perm, n), seen, &nseen, XE_PLAN_MORE_ORDERS + 1); /* the first order's */
    for (uint64_t seed = 2; !found && tried < XE_PLAN_MORE_ORDERS && seed <= 4 * XE_PLAN_MORE_ORDERS && xe_now() < end &&
                            !xe_plan_stopped(o);
         seed++) {
        int64_t pk;
        xe_instance *p;
        rc = order_candidate(in, seed, end, res->peak_index, order, seen, &nseen, XE_PLAN_MORE_ORDERS + 1, &p, &pk,
                             err);
        if (rc) break;
        if (!p) continue; /* none lower this time, or one already tried */
        tried++;
        const char *w = "greedy";
        xe_err e2 = {{0}};
        int hrc = xe_heur_best_intr(p, heur2, &w, 2, 0.0, end, o->interrupt, NULL, &e2); /* no diversification */
        if (hrc == XE_ETIMEOUT) hrc = XE_EINFEASIBLE; /* interrupted */
        if (hrc == XE_OK) {
            xe_instance_free(*in2);
            *in2 = p;
            memcpy(perm, order, (size_t)n * sizeof *perm);
            res->peak_order = pk;
            *which2 = w;
            c = xe_stages_cost(p, heur2);
            found = 1;
        } else {
            xe_instance_free(p);
            if (hrc != XE_EINFEASIBLE) {
                rc = xe_err_set(err, hrc, "heuristic failed in a low-peak order: %s", e2.msg);
                break;
            }
        }
    }
    free(order);
    if (rc) return rc;
    snprintf(res->orders_status, sizeof res->orders_status, "%s (%d more low-peak order%s tried)",
             found ? "valid, planned in it" : "no schedule found", tried, tried == 1 ? "" : "s");
    xe_plan_emit_heur(o, res, "orders", res->orders_status, c, xe_now() - t0);
    return found;
}

/* From here on the phases plan in the low-peak order in2: its schedule st (found by
 * phase `name`) is the best; the stage bound becomes in2's, the graph order's is kept
 * apart in *lb_index (the reported bound is the lesser: docs/reorder.md). */
void xe_plan_adopt_order(const xe_instance *in2, const xe_stages *st, const char *name, double t_start,
                        xe_plan_result *res, const xe_instance **cur, const xe_stages **best, double *best_cost,
                        double *lb, double *lb_index)
{
    *cur = in2;
    *best = st;
    *best_cost = xe_stages_cost(in2, st);
    res->name = name;
    res->search_order = 0; /* a low-peak order's; take_search_order sets it after */
    res->time_best = xe_now() - t_start;
    res->reordered = 1;
    xe_plan_trace(res, res->time_best, *best_cost);
    *lb_index = fmin(*lb_index, *lb);
    *lb = xe_bound_stage(in2);
}

/* Plans from here on in the search bound's path order: in3 (the instance relabelled in
 * `order`, moved into *in2) with its schedule st (moved into *heur2), found by `name`. */
static void take_search_order(const xe_instance *in, xe_instance *in3, xe_stages *st, const int *order, int64_t pk,
                              const char *name, double t_start, xe_plan_result *res, xe_instance **in2, int *perm,
                              xe_stages *heur2, const xe_instance **cur, const xe_stages **best, double *best_cost,
                              double *lb, double *lb_index)
{
    xe_stages_clear(heur2);
    *heur2 = *st;
    memset(st, 0, sizeof *st);
    xe_instance_free(*in2);
    *in2 = in3;
    memcpy(perm, order, (size_t)in->g->n * sizeof *perm);
    if (res->peak_index <= 0) res->peak_index = xe_instance_norecompute_peak(in->g);
    res->peak_order = pk;
    xe_plan_adopt_order(*in2, heur2, name, t_start, res, cur, best, best_cost, lb, lb_index);
    res->search_order = 1;
}

int xe_plan_search_order(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double t_start,
                         xe_plan_bound *bs, xe_instance **in2, int *perm, xe_stages *heur2, const xe_instance **cur,
                         const xe_stages **best, double *best_cost, double *lb, double *lb_index, xe_err *err)
{
    int n = in->g->n;
    double once = xe_bound_cheapest(in);
    if (o->no_reorder || !bs->running || bs->path_asked || !(*best_cost > once * (1 + 1e-12))) return 0;
    double t0 = xe_now();
    int *order = malloc((size_t)n * sizeof *order);
    if (!order) return xe_err_set(err, XE_ENOMEM, "plan: out of memory");
    int a = xe_plan_bound_order(bs, order); /* 1: no drops, 2: drops (the order filled either way) */
    int64_t pk = a >= 1 ? xe_order_peak(in->g, order) : -1;
    xe_instance *in3 = NULL;
    xe_stages st = {0};
    xe_err e2 = {{0}};
    int rc = a < 0 ? a : XE_OK, stop = 0;
    xe_plan_row r = {.method = "search-order", .bound = NAN, .gap = NAN, .milp_status = -1};
    if (a == 1 && pk >= 0 && pk <= in->dev[0].budget) { /* as the path says; checked all the same */
        rc = xe_instance_permute(in, order, &in3, &e2);
        int crc = rc == XE_OK ? xe_heur_checkpoint_all(in3, 0, &st, &e2) : rc;
        if (crc == XE_ENOMEM) rc = XE_ENOMEM;
        if (rc == XE_OK && crc == XE_OK) {
            take_search_order(in, in3, &st, order, pk, "search-order", t_start, res, in2, perm, heur2, cur, best,
                              best_cost, lb, lb_index);
            in3 = NULL;
            r.status = "every node once in the search bound's order: optimal";
            r.objective = *best_cost;
            r.bound = once;
            r.gap = xe_plan_rel_gap(*best_cost, once);
            stop = 1;
        }
    } else if (a == 2 && !xe_plan_stopped(o)) {
        /* the relaxed game's cheapest path has drops: its order of first computes is a
         * stage order whose class holds schedules that follow the path (a drop and its
         * restore are a free and a recomputation within a later stage), which the graph
         * order's and the low-peak orders' classes may miss (an 8-node graph whose stage
         * optimum in its own order is 0.040 s, 0.029 s in the path's: tests/test_reorder.c) */
        rc = xe_instance_permute(in, order, &in3, &e2);
        const char *w = "greedy";
        double end = xe_now() + fmin(XE_PLAN_SEARCH_ORDER_S, fmax(0.0, xe_plan_time_left(o, t_start)));
        int hrc = rc == XE_OK ? xe_heur_best_intr(in3, &st, &w, 2, 0.0, end, o->interrupt, NULL, &e2) : rc;
        if (hrc == XE_ENOMEM) rc = XE_ENOMEM;
        double c = rc == XE_OK && hrc == XE_OK ? xe_stages_cost(in3, &st) : INFINITY;
        int take = c < *best_cost * (1 - 1e-12);
        if (take) {
            take_search_order(in, in3, &st, order, pk, w, t_start, res, in2, perm, heur2, cur, best, best_cost, lb,
                              lb_index);
            in3 = NULL;
        }
        r.status = take           ? "the search bound's order (its path recomputes): valid, planned in it"
                   : isfinite(c) ? "the search bound's order (its path recomputes): valid, not cheaper"
                                 : "the search bound's order (its path recomputes): no schedule found";
        r.objective = c;
    }
    xe_instance_free(in3);
    xe_stages_clear(&st);
    if (rc == XE_OK && r.status) {
        if (o->phase) o->phase(o->ctx, "search-order");
        r.time = xe_now() - t0;
        xe_plan_emit(o, res, &r);
    }
    free(order);
    if (rc == XE_ENOMEM) return xe_err_set(err, XE_ENOMEM, "plan: out of memory adopting the search bound's order");
    return stop;
}

int xe_plan_search_late(const xe_instance *in, const xe_plan_opts *o, xe_plan_result *res, double t_start,
                        xe_plan_bound *bs, xe_err *err)
{
    int n = in->g->n;
    double once = xe_bound_cheapest(in);
    if (o->no_reorder || in->ndev != 1 || !bs->running || bs->path_asked ||
        (isfinite(res->objective) && !(res->objective > once * (1 + 1e-12))))
        return 0;
    double t0 = xe_now();
    int *order = malloc((size_t)n * sizeof *order);
    if (!order) return xe_err_set(err, XE_ENOMEM, "plan: out of memory");
    int a = xe_plan_bound_order(bs, order); /* 1: no drops */
    int64_t pk = a == 1 ? xe_order_peak(in->g, order) : -1;
    int rc = a < 0 ? xe_err_set(err, a, "plan: out of memory reading the search bound's path") : XE_OK, took = 0;
    if (rc == XE_OK && a == 1 && pk >= 0 && pk <= in->dev[0].budget) { /* as the path says; replayed all the same */
        xe_schedule s;
        xe_schedule_init(&s);
        xe_err e2 = {{0}};
        double c = INFINITY;
        int drc = xe_plan_once_in_order(in, 0, order, &s, &c, &e2);
        if (drc == XE_ENOMEM) {
            rc = xe_err_set(err, drc, "plan: %s", e2.msg);
        } else if (drc == XE_OK && c < res->objective) {
            double t = xe_now() - t_start;
            xe_plan_take_dtr(res, &s, c, t, "search-order");
            res->reordered = res->search_order = 1;
            if (res->peak_index <= 0) res->peak_index = xe_instance_norecompute_peak(in->g);
            res->peak_order = pk;
            xe_plan_trace(res, t, c);
            took = 1;
        }
        xe_schedule_clear(&s);
    }
    free(order);
    if (rc) return rc;
    if (took) {
        if (o->phase) o->phase(o->ctx, "search-order");
        xe_plan_row r = {.method = "search-order",
                         .status = "every node once in the search bound's order (its search ended after the "
                                   "phases): optimal",
                         .objective = res->objective,
                         .bound = once,
                         .gap = xe_plan_rel_gap(res->objective, once),
                         .time = xe_now() - t0,
                         .milp_status = -1};
        xe_plan_emit(o, res, &r);
    }
    return took;
}
