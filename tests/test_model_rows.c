/* Every row of the MILP (docs/formulation.md, src/milp/model.c) holds at every valid
 * stage schedule, not only at an optimal one: a row that cuts off a valid schedule
 * (a wrong strengthening, e.g. of the free rows of constraint 7) fails here even when
 * the optimum happens to survive it.
 *
 * On seeded random tiny instances (1-2 devices, with and without copy costs) it builds
 * many valid schedules: random ones (random checkpoints among what the previous stage
 * had, random extra recomputations, inputs brought by a copy or a recomputation at
 * random), the heuristic portfolio's, checkpoint-all, recompute-all and the brute-force
 * optimum; each must pass xe_stages_check, then its column values
 * (xe_model_start_values: R, S, C, U, and every allowed FREE) must satisfy every column
 * bound and every row of the model within 1e-7 units, the knapsack rows of constraint 9
 * (xe_model_add_knapsack, appended for every stage) included. The counts are asserted,
 * so the test cannot pass on nothing. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../src/milp/model.h"
#include "../src/solvers/rng.h"
#include "brute/brute.h"
#include "support/randinst.h"
#include "xengine/solvers.h"
#include "xengine/stages.h"

static int present(const xe_stages *st, int t, int i, int d)
{
    int p = *xe_R(st, t, i, d) || (i < t && *xe_S(st, t, i, d));
    for (int e = 0; e < st->ndev; e++)
        if (e != d) p |= *xe_C(st, t, i, e, d);
    return p;
}

/* Makes node j present on device d at its step of stage t: a copy from a device where
 * it is checkpointed or computed in this stage, or a recomputation on d (its missing
 * inputs brought first, in turn), or a recomputation elsewhere and a copy. Returns 0
 * when none of these is possible. */
static int bring(const xe_instance *in, xe_stages *st, int t, int j, int d, uint64_t *rng)
{
    if (present(st, t, j, d)) return 1;
    const xe_graph *g = in->g;
    int D = st->ndev, src = -1, nsrc = 0;
    for (int e = 0; e < D; e++)
        if (e != d && (*xe_R(st, t, j, e) || (j < t && *xe_S(st, t, j, e))) && xe_splitmix64(rng) % (uint64_t)++nsrc == 0)
            src = e;
    int can = xe_can_run(in, j, d);
    if (src >= 0 && (!can || xe_splitmix64(rng) % 2)) {
        *xe_C(st, t, j, src, d) = 1;
        return 1;
    }
    int on = can ? d : -1;
    for (int e = 0; on < 0 && e < D; e++)
        if (e != d && xe_can_run(in, j, e) && !present(st, t, j, e)) on = e;
    if (on < 0) return 0;
    *xe_R(st, t, j, on) = 1;
    for (int p = g->pred_off[j]; p < g->pred_off[j + 1]; p++)
        if (!bring(in, st, t, g->pred[p], on, rng)) return 0;
    if (on != d) *xe_C(st, t, j, on, d) = 1;
    return 1;
}

/* A random stage schedule; 0 when the generator got stuck (no device for a node). */
static int random_schedule(const xe_instance *in, const int *reach, xe_stages *st, uint64_t *rng)
{
    int n = in->g->n, D = in->ndev;
    assert_int_equal(xe_stages_init(st, n, D), XE_OK);
    for (int t = 0; t < n; t++) {
        if (t > 0) /* checkpoints: a random part of what stage t-1 had, where still needed */
            for (int i = 0; i < t; i++)
                for (int d = 0; d < D; d++)
                    if (reach[i] >= t && present(st, t - 1, i, d) && xe_splitmix64(rng) % 3)
                        *xe_S(st, t, i, d) = 1;
        int d = (int)(xe_splitmix64(rng) % (uint64_t)D);
        for (int k = 0; k < D && !xe_can_run(in, t, d); k++) d = (d + 1) % D;
        if (!bring(in, st, t, t, d, rng)) return 0;
        for (int j = 0; j < t; j++) /* some work nothing in this stage needs */
            if (reach[j] >= t && xe_splitmix64(rng) % 8 == 0) {
                int e = (int)(xe_splitmix64(rng) % (uint64_t)D);
                if (!bring(in, st, t, j, e, rng)) return 0;
            }
    }
    return 1;
}

typedef struct counts {
    int random_valid, random_tried, heuristics, optima;
    long knapsack_rows; /* rows xe_model_add_knapsack appended (that can bind) */
} counts;

/* Asserts that the column values of st satisfy every bound and row of m. */
static void assert_rows_hold(const xe_instance *in, const xe_model *m, const xe_stages *st, uint64_t seed, const char *who)
{
    xe_err err = {{0}};
    double *x = calloc((size_t)m->ncols + 1, sizeof *x);
    double *act = calloc((size_t)m->nrows + 1, sizeof *act);
    assert_non_null(x);
    assert_non_null(act);
    int rc = xe_model_start_values(in, m, st, x, &err);
    if (rc) print_error("seed %llu, %s: %s\n", (unsigned long long)seed, who, err.msg);
    assert_int_equal(rc, XE_OK);
    for (int c = 0; c < m->ncols; c++) {
        if (x[c] < m->clb[c] - 1e-7 || x[c] > m->cub[c] + 1e-7) {
            print_error("seed %llu, %s: column %d = %g outside [%g, %g]\n", (unsigned long long)seed, who, c, x[c],
                        m->clb[c], m->cub[c]);
            fail();
        }
    }
    for (int k = 0; k < m->nnz; k++) act[m->trow[k]] += m->tval[k] * x[m->tcol[k]];
    for (int r = 0; r < m->nrows; r++) {
        double tol = 1e-7 * fmax(1.0, fmax(isfinite(m->rlb[r]) ? fabs(m->rlb[r]) : 0, isfinite(m->rub[r]) ? fabs(m->rub[r]) : 0));
        if (act[r] < m->rlb[r] - tol || act[r] > m->rub[r] + tol) {
            print_error("seed %llu, %s: row %d = %.9g outside [%g, %g]\n", (unsigned long long)seed, who, r, act[r],
                        m->rlb[r], m->rub[r]);
            fail();
        }
    }
    free(x);
    free(act);
}

static void check_if_valid(const xe_instance *in, const xe_model *m, xe_stages *st, uint64_t seed, const char *who,
                           int *count)
{
    xe_err err = {{0}};
    if (xe_stages_check(in, st, &err) == XE_OK) {
        assert_rows_hold(in, m, st, seed, who);
        ++*count;
    }
    xe_stages_clear(st);
}

static void one_instance(uint64_t seed, int n, int ndev, int copy, counts *cnt)
{
    xe_instance *in = xe_test_random_instance(seed, n, ndev, copy);
    assert_non_null(in);
    int *reach = xe_graph_reach(in->g);
    assert_non_null(reach);
    int64_t all = 0;
    for (int v = 0; v < n; v++) all += in->g->nodes[v].mem;
    int64_t budgets[XE_MAX_DEV];
    for (int d = 0; d < ndev; d++) budgets[d] = in->dev[d].budget;
    uint64_t rng = seed * 7919 + 17;
    xe_err err = {{0}};
    for (int pass = 0; pass < 2; pass++) { /* the instance's budgets, then room for all */
        for (int d = 0; d < ndev; d++) in->dev[d].budget = pass ? 2 * all : budgets[d];
        xe_model m;
        assert_int_equal(xe_model_build(in, &m, &err), XE_OK);
        int base_rows = m.nrows;
        assert_int_equal(xe_model_add_knapsack(in, &m, 0, n, &err), XE_OK);
        cnt->knapsack_rows += m.nrows - base_rows;
        for (int k = 0; k < 8; k++) {
            xe_stages st;
            cnt->random_tried++;
            if (random_schedule(in, reach, &st, &rng)) check_if_valid(in, &m, &st, seed, "random schedule", &cnt->random_valid);
            else xe_stages_clear(&st);
        }
        xe_stages st;
        if (xe_heur_best(in, &st, NULL, &err) == XE_OK) check_if_valid(in, &m, &st, seed, "portfolio", &cnt->heuristics);
        else xe_stages_clear(&st);
        for (int d = 0; d < ndev; d++) {
            if (xe_heur_checkpoint_all(in, d, &st, &err) == XE_OK) check_if_valid(in, &m, &st, seed, "checkpoint-all", &cnt->heuristics);
            else xe_stages_clear(&st);
            int64_t peak;
            if (xe_heur_recompute_all(in, d, &st, &peak, &err) == XE_OK) check_if_valid(in, &m, &st, seed, "recompute-all", &cnt->heuristics);
            else xe_stages_clear(&st);
        }
        double cost;
        xe_bf_stages b;
        if (pass == 0 && n * ndev <= 12 && xe_bf_stage_solve(in, &cost, &b, &err) == XE_OK) {
            assert_int_equal(xe_stages_init(&st, n, ndev), XE_OK);
            for (int t = 0; t < n; t++)
                for (int i = 0; i < n; i++)
                    for (int d = 0; d < ndev; d++) {
                        *xe_R(&st, t, i, d) = b.R[t][i][d];
                        *xe_S(&st, t, i, d) = b.S[t][i][d];
                        for (int e = 0; e < ndev; e++) *xe_C(&st, t, i, d, e) = b.C[t][i][d][e];
                    }
            check_if_valid(in, &m, &st, seed, "brute-force optimum", &cnt->optima);
        }
        xe_model_clear(&m);
    }
    free(reach);
    xe_instance_free(in);
}

static void test_rows_hold_at_valid_schedules(void **state)
{
    (void)state;
    counts cnt = {0};
    for (uint64_t s = 1; s <= 240; s++) {
        int ndev = s % 3 == 0 ? 1 : 2, copy = s % 2 == 0;
        int n = 2 + (int)(s % 6); /* 2..7 nodes */
        one_instance(s, n, ndev, copy, &cnt);
    }
    print_message("model rows (%ld knapsack rows among them) hold at %d random valid schedules (of %d generated), %d heuristic schedules, %d brute-force optima\n",
                  cnt.knapsack_rows, cnt.random_valid, cnt.random_tried, cnt.heuristics, cnt.optima);
    assert_true(cnt.knapsack_rows >= 500);
    assert_true(cnt.random_valid >= 1500);
    assert_true(cnt.heuristics >= 600);
    assert_true(cnt.optima >= 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows_hold_at_valid_schedules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
