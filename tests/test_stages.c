/* Stage matrices: pruning of what nothing reads (hand-built cases); the event list of
 * xe_stages_to_schedule and the U / FREE accounting of xe_stages_eval against slow,
 * literal reference implementations written here (random valid matrices and the
 * heuristic's, 1 and 2 devices). */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "support/randinst.h"
#include "xengine/solvers.h"
#include "xengine/stages.h"

/* Chain 0 -> 1 -> 2 -> 3 (10 bytes each, cost 1), one device, budget 100. */
static xe_instance *chain4(void)
{
    xe_err err;
    xe_graph *g = xe_graph_new("chain");
    for (int v = 0; v < 4; v++) {
        char nm[8];
        snprintf(nm, sizeof nm, "n%d", v);
        assert_int_equal(xe_graph_add_node(g, nm, NULL, 0, 10, 0, 1.0, &err), v);
        if (v) assert_int_equal(xe_graph_add_edge(g, v - 1, v, &err), XE_OK);
    }
    assert_int_equal(xe_graph_finalize(g, &err), XE_OK);
    xe_instance *in = xe_instance_new(g, 1);
    for (int v = 0; v < 4; v++) in->cost[v] = 1.0;
    in->dev[0].budget = 100;
    return in;
}

/* Checkpoint-all (stage t computes t, keeps t-1's output for it) plus, in stage 3, the
 * recomputations of 0 and 1: node 2 is checkpointed, so 1's output is read by nothing
 * and 0's only by the useless 1. Pruning removes both (2 entries: the second only once
 * the first is gone), cost 6 -> 4, and the memory of every step does not go up; the
 * needed recomputation of 0 feeding 1 in stage 1 (no checkpoint of 0 there) stays. */
static void test_prune_useless_recomputations(void **state)
{
    (void)state;
    xe_instance *in = chain4();
    xe_stages st;
    assert_int_equal(xe_stages_init(&st, 4, 1), XE_OK);
    for (int t = 0; t < 4; t++) *xe_R(&st, t, t, 0) = 1;
    *xe_R(&st, 1, 0, 0) = 1;                   /* stage 1 recomputes 0 for 1: needed */
    *xe_S(&st, 2, 1, 0) = 1;                   /* 1 kept for 2 */
    *xe_S(&st, 3, 2, 0) = 1;                   /* 2 kept for 3 */
    *xe_R(&st, 3, 0, 0) = *xe_R(&st, 3, 1, 0) = 1; /* useless */
    /* stage 0 computed 0, but stage 1 recomputes it rather than keeping it */
    xe_err err = {{0}};
    assert_int_equal(xe_stages_check(in, &st, &err), XE_OK);
    assert_true(fabs(xe_stages_cost(in, &st) - 7.0) < 1e-12);
    double before[16] = {0}, after[16] = {0}; /* eval fills steps k <= t only */
    assert_int_equal(xe_stages_eval(in, &st, before, NULL, &err), XE_OK);
    assert_int_equal(xe_stages_prune(in, &st), 2);
    assert_int_equal(*xe_R(&st, 3, 0, 0), 0);
    assert_int_equal(*xe_R(&st, 3, 1, 0), 0);
    assert_int_equal(*xe_R(&st, 1, 0, 0), 1);
    assert_int_equal(xe_stages_check(in, &st, &err), XE_OK);
    assert_true(fabs(xe_stages_cost(in, &st) - 5.0) < 1e-12);
    assert_int_equal(xe_stages_eval(in, &st, after, NULL, &err), XE_OK);
    for (int i = 0; i < 16; i++) assert_true(after[i] <= before[i]);
    assert_int_equal(xe_stages_prune(in, &st), 0); /* a fixpoint */
    xe_stages_clear(&st);
    xe_instance_free(in);
}

/* A checkpoint carried through a stage that never reads it, and dropped after: it and
 * the carry into it go (S[2][0] is read by nothing in stage 2 and not kept for 3, then
 * S[1][0] is read by stage 1's compute of 1 so it stays). */
static void test_prune_unread_checkpoint(void **state)
{
    (void)state;
    xe_instance *in = chain4();
    xe_stages st;
    assert_int_equal(xe_stages_init(&st, 4, 1), XE_OK);
    for (int t = 0; t < 4; t++) *xe_R(&st, t, t, 0) = 1;
    *xe_S(&st, 1, 0, 0) = 1;
    *xe_S(&st, 2, 0, 0) = 1; /* unread in stage 2 */
    *xe_S(&st, 2, 1, 0) = 1;
    *xe_S(&st, 3, 2, 0) = 1;
    xe_err err = {{0}};
    assert_int_equal(xe_stages_check(in, &st, &err), XE_OK);
    assert_int_equal(xe_stages_prune(in, &st), 1);
    assert_int_equal(*xe_S(&st, 2, 0, 0), 0);
    assert_int_equal(*xe_S(&st, 1, 0, 0), 1);
    assert_int_equal(xe_stages_check(in, &st, &err), XE_OK);
    xe_stages_clear(&st);
    xe_instance_free(in);
}

/* ---- Reference implementations: direct transcriptions of the definitions in
 * include/xengine/stages.h, no precomputation, O(T n^2) and worse. ---- */

static int is_pred(const xe_graph *g, int i, int j) /* edge i -> j */
{
    for (int p = g->pred_off[j]; p < g->pred_off[j + 1]; p++)
        if (g->pred[p] == i) return 1;
    return 0;
}

static int ref_cin(const xe_stages *st, int t, int i, int d)
{
    int c = 0;
    for (int e = 0; e < st->ndev; e++)
        if (e != d) c += *xe_C(st, t, i, e, d);
    return c;
}

static int ref_cout(const xe_stages *st, int t, int i, int d)
{
    int c = 0;
    for (int e = 0; e < st->ndev; e++)
        if (e != d) c += *xe_C(st, t, i, d, e);
    return c;
}

static int ref_keep(const xe_stages *st, int t, int i, int d) { return t + 1 < st->n && *xe_S(st, t + 1, i, d); }

/* some user j of i, k < j <= t, computed on d in stage t */
static int ref_used_after(const xe_graph *g, const xe_stages *st, int t, int i, int k, int d)
{
    for (int j = k + 1; j <= t; j++)
        if (*xe_R(st, t, j, d) && is_pred(g, i, j)) return 1;
    return 0;
}

/* last step of stage t touching i on d, or -1 */
static int ref_last_touch(const xe_graph *g, const xe_stages *st, int t, int i, int d)
{
    for (int j = t; j > i; j--)
        if (*xe_R(st, t, j, d) && is_pred(g, i, j)) return j;
    if (*xe_R(st, t, i, d) || ref_cin(st, t, i, d) || ref_cout(st, t, i, d)) return i;
    return -1;
}

static void ev_push(xe_event *ev, int *len, int cap, xe_event_kind k, int v, int d, int e)
{
    assert_true(*len < cap);
    ev[*len].kind = k;
    ev[*len].node = v;
    ev[*len].dev = d;
    ev[*len].dst = e;
    (*len)++;
}

/* The event list of xe_stages_to_schedule's contract, for valid st. */
static int ref_schedule(const xe_instance *in, const xe_stages *st, xe_event *ev, int cap)
{
    const xe_graph *g = in->g;
    int n = st->n, D = st->ndev, len = 0;
    uint8_t *res = calloc((size_t)n * D, 1);
    assert_non_null(res);
    for (int t = 0; t < n; t++) {
        for (int i = 0; i < n; i++)
            for (int d = 0; d < D; d++) {
                assert_int_equal(res[i * D + d], i < t ? *xe_S(st, t, i, d) : 0);
                if (res[i * D + d] && ref_last_touch(g, st, t, i, d) < 0 && !ref_keep(st, t, i, d)) {
                    ev_push(ev, &len, cap, XE_EV_FREE, i, d, -1);
                    res[i * D + d] = 0;
                }
            }
        for (int k = 0; k <= t; k++) {
            for (int d = 0; d < D; d++)
                if (*xe_R(st, t, k, d)) {
                    ev_push(ev, &len, cap, XE_EV_COMPUTE, k, d, -1);
                    res[k * D + d] = 1;
                }
            for (int d = 0; d < D; d++)
                for (int e = 0; e < D; e++)
                    if (e != d && *xe_C(st, t, k, d, e)) {
                        ev_push(ev, &len, cap, XE_EV_COPY, k, d, e);
                        res[k * D + e] = 1;
                    }
            for (int i = 0; i <= k; i++)
                for (int d = 0; d < D; d++)
                    if (res[i * D + d] && ref_last_touch(g, st, t, i, d) == k && !ref_keep(st, t, i, d)) {
                        ev_push(ev, &len, cap, XE_EV_FREE, i, d, -1);
                        res[i * D + d] = 0;
                    }
        }
        for (int i = 0; i < n; i++)
            for (int d = 0; d < D; d++)
                if (res[i * D + d] && !ref_keep(st, t, i, d)) {
                    ev_push(ev, &len, cap, XE_EV_FREE, i, d, -1);
                    res[i * D + d] = 0;
                }
    }
    free(res);
    return len;
}

/* U and FREE of xe_stages_eval's contract (same summation order, so equal doubles). */
static void ref_eval(const xe_instance *in, const xe_stages *st, double *U, uint8_t *FREE)
{
    const xe_graph *g = in->g;
    int n = st->n, D = st->ndev;
    memset(FREE, 0, (size_t)n * n * n * D);
    for (int t = 0; t < n; t++)
        for (int d = 0; d < D; d++) {
            double u = 0;
            for (int i = 0; i < t; i++) u += (double)g->nodes[i].mem * *xe_S(st, t, i, d);
            for (int k = 0; k <= t; k++) {
                u += (double)g->nodes[k].mem * (*xe_R(st, t, k, d) + ref_cin(st, t, k, d));
                U[((int64_t)t * n + k) * D + d] = u;
                int act = *xe_R(st, t, k, d) + ref_cin(st, t, k, d) + ref_cout(st, t, k, d);
                if (act && !ref_keep(st, t, k, d) && !ref_used_after(g, st, t, k, k, d)) {
                    u -= (double)g->nodes[k].mem;
                    FREE[(((int64_t)t * n + k) * n + k) * D + d] = 1;
                }
                if (!*xe_R(st, t, k, d)) continue;
                for (int i = 0; i < k; i++)
                    if (is_pred(g, i, k) && !ref_keep(st, t, i, d) && !ref_used_after(g, st, t, i, k, d)) {
                        u -= (double)g->nodes[i].mem;
                        FREE[(((int64_t)t * n + i) * n + k) * D + d] = 1;
                    }
            }
        }
}

static uint64_t mix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int present(const xe_stages *st, int t, int i, int d)
{
    return (i < t && *xe_S(st, t, i, d)) || *xe_R(st, t, i, d) || ref_cin(st, t, i, d);
}

/* Makes i present on d in stage t (need-driven, processed from late steps to early):
 * a checkpoint where stage t-1 had it, else a copy from a device holding it, else a
 * (re)computation on d or on a device that can run it plus a copy. Marks the inputs of
 * a computation as needed on its device. */
static void make_present(const xe_instance *in, xe_stages *st, const uint8_t *prev, uint8_t *need, int t, int i,
                         int d, uint64_t *s)
{
    const xe_graph *g = in->g;
    int D = st->ndev;
    if (present(st, t, i, d)) return;
    if (prev[i * D + d]) {
        *xe_S(st, t, i, d) = 1;
        return;
    }
    int src = -1;
    for (int e = 0; e < D && src < 0; e++)
        if (e != d && ((i < t && *xe_S(st, t, i, e)) || *xe_R(st, t, i, e))) src = e;
    for (int e = 0; e < D && src < 0; e++)
        if (e != d && prev[i * D + e]) {
            *xe_S(st, t, i, e) = 1;
            src = e;
        }
    if (src < 0) {
        int c = d;
        if (!xe_can_run(in, i, d) || (D > 1 && mix(s) % 4 == 0))
            for (int e = 0; e < D; e++)
                if (e != d && xe_can_run(in, i, e) && !present(st, t, i, e)) c = e;
        if (!xe_can_run(in, i, c)) c = d;
        assert_true(xe_can_run(in, i, c));
        *xe_R(st, t, i, c) = 1;
        for (int p = g->pred_off[i]; p < g->pred_off[i + 1]; p++) need[g->pred[p] * D + c] = 1;
        if (c == d) return;
        src = c;
    }
    *xe_C(st, t, i, src, d) = 1;
}

/* Random structurally valid stage matrices (budgets ignored). */
static void random_stages(const xe_instance *in, xe_stages *st, uint64_t seed)
{
    const xe_graph *g = in->g;
    int n = g->n, D = in->ndev;
    uint64_t s = seed;
    assert_int_equal(xe_stages_init(st, n, D), XE_OK);
    uint8_t *prev = calloc((size_t)n * D, 1), *need = calloc((size_t)n * D, 1);
    assert_non_null(prev);
    assert_non_null(need);
    for (int t = 0; t < n; t++) {
        memset(need, 0, (size_t)n * D);
        for (int i = 0; i < t; i++) /* random checkpoints among what stage t-1 held */
            for (int d = 0; d < D; d++)
                if (prev[i * D + d] && mix(&s) % 3 == 0) *xe_S(st, t, i, d) = 1;
        for (int d = 0; d < D; d++) /* node t on one or more devices that can run it */
            if (xe_can_run(in, t, d) && (mix(&s) % 2 == 0 || !need[t * D + d])) {
                need[t * D + d] = 1;
                if (mix(&s) % 2) break;
            }
        int any = 0;
        for (int d = 0; d < D; d++) any |= need[t * D + d];
        assert_true(any);
        for (int d = 0; d < D; d++)
            if (need[t * D + d]) {
                *xe_R(st, t, t, d) = 1;
                for (int p = g->pred_off[t]; p < g->pred_off[t + 1]; p++) need[g->pred[p] * D + d] = 1;
            }
        for (int k = t - 1; k >= 0; k--)
            for (int d = 0; d < D; d++)
                if (need[k * D + d]) make_present(in, st, prev, need, t, k, d, &s);
        for (int k = 0; k <= t; k++) { /* extra recomputations and copies, forward */
            for (int d = 0; d < D; d++) {
                if (k == t || present(st, t, k, d) || !xe_can_run(in, k, d) || mix(&s) % 5) continue;
                int ok = 1;
                for (int p = g->pred_off[k]; p < g->pred_off[k + 1]; p++) ok &= present(st, t, g->pred[p], d);
                if (ok) *xe_R(st, t, k, d) = 1;
            }
            for (int d = 0; d < D; d++)
                for (int e = 0; e < D; e++)
                    if (e != d && ((k < t && *xe_S(st, t, k, d)) || *xe_R(st, t, k, d)) && !present(st, t, k, e) &&
                        mix(&s) % 3 == 0)
                        *xe_C(st, t, k, d, e) = 1;
        }
        for (int i = 0; i < n; i++)
            for (int d = 0; d < D; d++) prev[i * D + d] = i <= t && present(st, t, i, d);
    }
    free(prev);
    free(need);
}

/* Library vs reference: event list event for event, U and FREE. */
static void compare(const xe_instance *in, const xe_stages *st)
{
    int n = st->n, D = st->ndev;
    xe_err err = {{0}};
    size_t nu = (size_t)n * n * D;
    double *U = malloc(nu * sizeof *U), *Uref = malloc(nu * sizeof *Uref);
    uint8_t *F = malloc(nu * n), *Fref = malloc(nu * n);
    assert_true(U && Uref && F && Fref);
    for (size_t q = 0; q < nu; q++) U[q] = Uref[q] = -1.0; /* entries k > t stay untouched */
    assert_int_equal(xe_stages_eval(in, st, U, F, &err), XE_OK);
    ref_eval(in, st, Uref, Fref);
    assert_memory_equal(U, Uref, nu * sizeof *U);
    assert_memory_equal(F, Fref, nu * n);
    int cap = 4 * n * n * D * (D + 1) + 16;
    xe_event *ev = malloc((size_t)cap * sizeof *ev);
    assert_non_null(ev);
    int len = ref_schedule(in, st, ev, cap);
    xe_schedule sch;
    xe_schedule_init(&sch);
    assert_int_equal(xe_stages_to_schedule(in, st, &sch, &err), XE_OK);
    assert_int_equal(sch.len, len);
    for (int q = 0; q < len; q++) {
        assert_int_equal(sch.ev[q].kind, ev[q].kind);
        assert_int_equal(sch.ev[q].node, ev[q].node);
        assert_int_equal(sch.ev[q].dev, ev[q].dev);
        assert_int_equal(sch.ev[q].dst, ev[q].dst);
    }
    xe_schedule_clear(&sch);
    free(ev);
    free(U);
    free(Uref);
    free(F);
    free(Fref);
}

/* 400 random valid stage matrices (1 and 2 devices, 1..14 nodes), every event equal to
 * the reference; the events are also non-trivial (frees of checkpoints, copies). */
static void test_schedule_vs_reference_random(void **state)
{
    (void)state;
    int copies = 0, frees = 0;
    for (int r = 0; r < 400; r++) {
        int D = 1 + r % 2, n = 1 + r % 14;
        xe_instance *in = xe_test_random_instance(7000 + (uint64_t)r, n, D, 1);
        assert_non_null(in);
        xe_stages st;
        random_stages(in, &st, 0x5eed + (uint64_t)r);
        compare(in, &st);
        xe_schedule sch;
        xe_schedule_init(&sch);
        xe_err err = {{0}};
        assert_int_equal(xe_stages_to_schedule(in, &st, &sch, &err), XE_OK);
        for (int q = 0; q < sch.len; q++) {
            copies += sch.ev[q].kind == XE_EV_COPY;
            frees += sch.ev[q].kind == XE_EV_FREE;
        }
        xe_schedule_clear(&sch);
        xe_stages_clear(&st);
        xe_instance_free(in);
    }
    assert_true(copies > 100);
    assert_true(frees > 1000);
}

/* The heuristic's stage matrices (before and after xe_stages_prune) on 300 random
 * instances, 1 and 2 devices; at least a third of them are feasible. */
static void test_schedule_vs_reference_heuristic(void **state)
{
    (void)state;
    int solved = 0;
    for (int r = 0; r < 300; r++) {
        int D = 1 + r % 2, n = 2 + r % 13;
        xe_instance *in = xe_test_random_instance(9100 + (uint64_t)r, n, D, r % 3 != 0);
        assert_non_null(in);
        xe_stages st;
        memset(&st, 0, sizeof st);
        xe_err err = {{0}};
        if (xe_heur_best(in, &st, NULL, &err) == XE_OK) {
            solved++;
            compare(in, &st);
            xe_stages_prune(in, &st);
            compare(in, &st);
            xe_stages_clear(&st);
        }
        xe_instance_free(in);
    }
    assert_true(solved >= 100);
}

/* The stage-at-a-time check and peak (xe_stages_check, xe_stages_max_use) against the
 * whole U of xe_stages_eval: on 300 random instances' portfolio schedules, max_use is
 * U's largest entry per device; with every budget set to that peak the check passes, and
 * one byte below it on a device it fails naming that device, at the first overflowing
 * (stage, step) of U in order. */
static void test_check_streaming_vs_whole_u(void **state)
{
    (void)state;
    int checked = 0;
    for (int r = 0; r < 300; r++) {
        int D = 1 + r % 2, n = 2 + r % 13;
        xe_instance *in = xe_test_random_instance(7300 + (uint64_t)r, n, D, r % 3 != 0);
        assert_non_null(in);
        xe_stages st;
        memset(&st, 0, sizeof st);
        xe_err err = {{0}};
        if (xe_heur_best(in, &st, NULL, &err) != XE_OK) {
            xe_instance_free(in);
            continue;
        }
        double *U = malloc((size_t)n * n * D * sizeof *U);
        assert_non_null(U);
        assert_int_equal(xe_stages_eval(in, &st, U, NULL, &err), XE_OK);
        double whole[2] = {0, 0}, maxu[2] = {-1, -1};
        for (int t = 0; t < n; t++)
            for (int k = 0; k <= t; k++)
                for (int d = 0; d < D; d++) whole[d] = fmax(whole[d], U[((size_t)t * n + k) * D + d]);
        assert_int_equal(xe_stages_max_use(in, &st, maxu, &err), XE_OK);
        for (int d = 0; d < D; d++) {
            assert_true(maxu[d] == whole[d]);
            in->dev[d].budget = (int64_t)whole[d];
        }
        assert_int_equal(xe_stages_check(in, &st, &err), XE_OK);
        for (int d = 0; d < D; d++) {
            if (whole[d] < 1) continue;
            in->dev[d].budget = (int64_t)whole[d] - 1;
            /* the first (stage, step, device) of U over the budgets, in order */
            int ft = -1, fk = -1, fd = -1;
            for (int t = 0; t < n && ft < 0; t++)
                for (int k = 0; k <= t && ft < 0; k++)
                    for (int e = 0; e < D && ft < 0; e++)
                        if (U[((size_t)t * n + k) * D + e] > (double)in->dev[e].budget) ft = t, fk = k, fd = e;
            assert_true(ft >= 0);
            assert_int_equal(xe_stages_check(in, &st, &err), XE_EINFEASIBLE);
            char want[160];
            snprintf(want, sizeof want, "stage %d step %d: ", ft, fk);
            assert_true(strncmp(err.msg, want, strlen(want)) == 0);
            assert_non_null(strstr(err.msg, in->dev[fd].name));
            in->dev[d].budget = (int64_t)whole[d];
            checked++;
        }
        free(U);
        xe_stages_clear(&st);
        xe_instance_free(in);
    }
    print_message("stage-at-a-time check against the whole U: %d budgets one byte below a peak\n", checked);
    assert_true(checked >= 150);
}

/* Every kind of structural violation is still reported, with the same message as the
 * per-entry checks: a checkpoint of a node not computed yet, a compute and a copy of a
 * later node, a copy from a device to itself. */
static void test_eval_rejects_zero_region_entries(void **state)
{
    (void)state;
    xe_instance *in = xe_test_random_instance(4242, 6, 2, 1);
    assert_non_null(in);
    xe_stages base;
    random_stages(in, &base, 99);
    xe_err err = {{0}};
    assert_int_equal(xe_stages_eval(in, &base, NULL, NULL, &err), XE_OK);
    struct {
        int which, t, i, d, e;
        const char *msg;
    } cases[] = {
        {0, 2, 4, 1, 0, "stage 2 keeps node 4, not computed yet"},
        {0, 3, 3, 0, 0, "stage 3 keeps node 3, not computed yet"},
        {1, 1, 5, 0, 0, "stage 1 touches node 5 > 1"},
        {2, 4, 5, 1, 0, "stage 4 touches node 5 > 4"},
        {2, 3, 2, 1, 1, "stage 3 copies node 2 from device 1 to itself"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        xe_stages st;
        assert_int_equal(xe_stages_copy(&st, &base), XE_OK);
        if (cases[c].which == 0) *xe_S(&st, cases[c].t, cases[c].i, cases[c].d) = 1;
        if (cases[c].which == 1) *xe_R(&st, cases[c].t, cases[c].i, cases[c].d) = 1;
        if (cases[c].which == 2) *xe_C(&st, cases[c].t, cases[c].i, cases[c].d, cases[c].e) = 1;
        assert_int_equal(xe_stages_eval(in, &st, NULL, NULL, &err), XE_EINVAL);
        assert_string_equal(err.msg, cases[c].msg);
        xe_schedule sch;
        xe_schedule_init(&sch);
        assert_int_equal(xe_stages_to_schedule(in, &st, &sch, &err), XE_EINVAL);
        assert_int_equal(sch.len, 0);
        xe_schedule_clear(&sch);
        xe_stages_clear(&st);
    }
    xe_stages_clear(&base);
    xe_instance_free(in);
}

/* xe_stages_from_schedule inverts xe_stages_to_schedule: on the heuristic's pruned
 * stage matrices of 300 random one-device instances, the event list converts back to
 * the same R and S (to_schedule frees as early as the structure allows, so what is
 * resident when a stage's first compute runs is exactly its checkpoints), and the cost
 * is the same. */
static void test_from_schedule_round_trip(void **state)
{
    (void)state;
    int solved = 0;
    for (int r = 0; r < 300; r++) {
        int n = 2 + r % 13;
        xe_instance *in = xe_test_random_instance(12100 + (uint64_t)r, n, 1, 0);
        assert_non_null(in);
        xe_stages st, back;
        memset(&st, 0, sizeof st);
        xe_err err = {{0}};
        if (xe_heur_best(in, &st, NULL, &err) == XE_OK) {
            solved++;
            xe_stages_prune(in, &st);
            xe_schedule sch;
            xe_schedule_init(&sch);
            assert_int_equal(xe_stages_to_schedule(in, &st, &sch, &err), XE_OK);
            assert_int_equal(xe_stages_from_schedule(in, &sch, &back, &err), XE_OK);
            size_t nn = (size_t)n * (size_t)n;
            assert_memory_equal(back.R, st.R, nn);
            assert_memory_equal(back.S, st.S, nn);
            assert_true(fabs(xe_stages_cost(in, &back) - xe_stages_cost(in, &st)) < 1e-9);
            xe_schedule_clear(&sch);
            xe_stages_clear(&back);
            xe_stages_clear(&st);
        }
        xe_instance_free(in);
    }
    assert_true(solved >= 100);
}

/* Event lists outside the stage structure are refused, each naming the problem: a copy,
 * first computations out of index order, a node computed twice in one stage, a node
 * never computed; and one over the budget (chain4 keeping 0 to the end: 30 bytes while
 * 2 is computed) converts at 30 bytes, with 0 a checkpoint of stage 3, and is refused
 * by the stage check at 20. */
static void test_from_schedule_refuses(void **state)
{
    (void)state;
    xe_instance *in = chain4();
    xe_err err = {{0}};
    xe_stages out;
    struct { const char *what; int len; xe_event ev[10]; } cases[] = {
        {"a copy", 2, {{XE_EV_COMPUTE, 0, 0, -1}, {XE_EV_COPY, 0, 0, 0}}},
        {"out of index order", 2, {{XE_EV_COMPUTE, 1, 0, -1}, {XE_EV_COMPUTE, 0, 0, -1}}},
        {"a second time", 6, {{XE_EV_COMPUTE, 0, 0, -1}, {XE_EV_FREE, 0, 0, -1}, {XE_EV_COMPUTE, 0, 0, -1},
                               {XE_EV_FREE, 0, 0, -1}, {XE_EV_COMPUTE, 0, 0, -1}, {XE_EV_COMPUTE, 1, 0, -1}}},
        {"never computed", 3, {{XE_EV_COMPUTE, 0, 0, -1}, {XE_EV_COMPUTE, 1, 0, -1}, {XE_EV_COMPUTE, 2, 0, -1}}},
    };
    const char *expect[] = {"is a copy", "out of index order", "a second time in stage 1", "node 3 is never computed"};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        xe_schedule s = {cases[k].ev, cases[k].len, cases[k].len};
        assert_int_equal(xe_stages_from_schedule(in, &s, &out, &err), XE_EUNSUPPORTED);
        assert_non_null(strstr(err.msg, expect[k]));
        assert_null(out.R);
    }
    /* all four computed, 0 kept to the end: stage 2 holds 0, 1, 2 = 30 bytes */
    xe_event keep0[] = {{XE_EV_COMPUTE, 0, 0, -1}, {XE_EV_COMPUTE, 1, 0, -1}, {XE_EV_COMPUTE, 2, 0, -1},
                        {XE_EV_FREE, 1, 0, -1}, {XE_EV_COMPUTE, 3, 0, -1}};
    xe_schedule s = {keep0, 5, 5};
    in->dev[0].budget = 30;
    assert_int_equal(xe_stages_from_schedule(in, &s, &out, &err), XE_OK);
    assert_true(fabs(xe_stages_cost(in, &out) - 4.0) < 1e-12);
    assert_int_equal(*xe_S(&out, 3, 0, 0), 1); /* 0 is a checkpoint of stage 3 */
    xe_stages_clear(&out);
    in->dev[0].budget = 20;
    assert_int_equal(xe_stages_from_schedule(in, &s, &out, &err), XE_EUNSUPPORTED);
    assert_non_null(strstr(err.msg, "not a valid stage schedule"));
    xe_instance_free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_prune_useless_recomputations),
        cmocka_unit_test(test_prune_unread_checkpoint),
        cmocka_unit_test(test_schedule_vs_reference_random),
        cmocka_unit_test(test_schedule_vs_reference_heuristic),
        cmocka_unit_test(test_check_streaming_vs_whole_u),
        cmocka_unit_test(test_eval_rejects_zero_region_entries),
        cmocka_unit_test(test_from_schedule_round_trip),
        cmocka_unit_test(test_from_schedule_refuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
