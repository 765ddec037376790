/* The portfolio's randomised diversification (docs/heuristic.md, "Randomised
 * diversification"; xe_heur_best_timed):
 *   - U-Net (checkmate_vgg_unet_b32_train from ../shared/graphs; skipped, saying so, when
 *     absent) on one GPU at 80%, 70%, 60% and 50% of the peak: the deterministic part's
 *     schedule (times.first_cost) is not the cheapest; the returned one is strictly
 *     cheaper ("greedy-diverse"), valid in the simulator, not below the LP relaxation's
 *     bound, and found no later than the call returned (first_at <= best_at <= total);
 *   - random tiny instances (1-2 devices): the returned schedule is valid, never dearer
 *     than the deterministic part's, and never cheaper than the brute-force stage optimum;
 *     with the improvement off (improve = 0) there is no diversification
 *     (first_cost = the returned cost). */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "brute/brute.h"
#include "support/randinst.h"
#include "support/shared_graph.h"
#include "support/valid.h"
#include "xengine/solvers.h"
#include "xengine/timer.h"

static void test_unet(void **state)
{
    (void)state;
    static const double fracs[] = {0.8, 0.7, 0.6, 0.5};
    for (size_t k = 0; k < sizeof fracs / sizeof *fracs; k++) {
        xe_instance *in = xe_test_shared_instance("checkmate_vgg_unet_b32_train.json", "gpu", fracs[k]);
        xe_err err;
        xe_stages st;
        const char *which = NULL;
        xe_heur_times t;
        double t0 = xe_now();
        assert_int_equal(xe_heur_best_timed(in, &st, &which, 1, 0.0, INFINITY, &t, &err), XE_OK);
        double total = xe_now() - t0, c = xe_stages_cost(in, &st);
        xe_test_assert_stages_valid(in, &st);
        double lp = -INFINITY;
        int inf = 0;
        assert_int_equal(xe_bound_lp(in, 30, 0, &lp, &inf, &err), XE_OK);
        print_message("U-Net one GPU %.0f%%: deterministic %.4f s at %.3f s, diversified %.4f s (%s) at %.3f s, "
                      "call %.3f s, LP bound %.4f s\n",
                      100 * fracs[k], t.first_cost, t.first_at, c, which, t.best_at, total, lp);
        assert_true(c < t.first_cost * (1 - 1e-9));
        assert_string_equal(which, "greedy-diverse");
        assert_true(c >= lp * (1 - 1e-9));
        assert_true(t.first_at <= t.best_at && t.best_at <= total);
        xe_stages_clear(&st);
        xe_instance_free(in);
    }
}

static void test_tiny(void **state)
{
    (void)state;
    int improved = 0, runs = 0;
    for (uint64_t seed = 1; seed <= 120; seed++) {
        int ndev = 1 + (int)(seed % 2), n = 5 + (int)(seed % 3);
        if (ndev == 2 && n > 6) n = 6;
        xe_instance *in = xe_test_random_instance(seed, n, ndev, (int)(seed % 3 == 0));
        assert_non_null(in);
        xe_err err;
        double opt = INFINITY;
        int brc = xe_bf_stage_solve(in, &opt, NULL, &err);
        xe_stages st;
        xe_heur_times t;
        int rc = xe_heur_best_timed(in, &st, NULL, 1, 0.0, INFINITY, &t, &err);
        if (rc == XE_OK) {
            assert_int_equal(brc, XE_OK); /* a schedule refutes stage infeasibility */
            xe_test_assert_stages_valid(in, &st);
            double c = xe_stages_cost(in, &st);
            assert_true(c <= t.first_cost * (1 + 1e-12));
            assert_true(c >= opt * (1 - 1e-9));
            improved += c < t.first_cost * (1 - 1e-12);
            runs++;
            xe_stages_clear(&st);
            assert_int_equal(xe_heur_best_timed(in, &st, NULL, 0, 0.0, INFINITY, &t, &err), XE_OK);
            assert_true(xe_stages_cost(in, &st) == t.first_cost);
            xe_stages_clear(&st);
        }
        xe_instance_free(in);
    }
    print_message("diversification: cheaper than the deterministic part on %d of %d tiny instances\n", improved, runs);
    assert_true(runs > 60);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unet),
        cmocka_unit_test(test_tiny),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
