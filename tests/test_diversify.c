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
 *     (first_cost = the returned cost);
 *   - the same call on an idle and on a loaded machine (one thread more than the cores
 *     spinning beside it) returns the same schedule, matrix for matrix: the
 *     diversification stops by a work count, not the clock (ResNet-18's graph at batch
 *     32, the main job's, needs 121 runs for its cheaper schedule, where a slower
 *     machine's 0.2 s gave 52; U-Net one GPU 80%, where the 0.2 s found it after 0.17 s). */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "brute/brute.h"
#include "support/randinst.h"
#include "support/shared_graph.h"
#include "support/valid.h"
#include "xengine/cost.h"
#include "xengine/net.h"
#include "xengine/onnx.h"
#include "xengine/solvers.h"
#include "xengine/stages.h"
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

static void *spin(void *arg)
{
    atomic_int *stop = arg;
    volatile double x = 1.0;
    while (!atomic_load(stop)) x = x * 1.0000001 + 1e-9;
    return NULL;
}

/* The main job's instance (scripts/run.sh): ResNet-18 at batch 32, GPU + CPU, GPU at 50%. */
static xe_instance *resnet18_main_job(void)
{
    xe_err err;
    xe_net *net = NULL;
    xe_graph *g = NULL;
    xe_train_map map;
    xe_recipe r;
    xe_instance *in = NULL;
    assert_int_equal(xe_onnx_read("tests/data/onnx/resnet18.onnx", 32, &net, &err), XE_OK);
    assert_int_equal(xe_net_training_graph(net, &g, &map, &err), XE_OK);
    assert_int_equal(xe_cost_recipe_preset("gpu+cpu", 0.5, &r, &err), XE_OK);
    assert_int_equal(xe_cost_instance(net, g, &map, &r, &in, &err), XE_OK);
    xe_train_map_clear(&map);
    xe_net_free(net);
    return in;
}

/* The portfolio on in, first as it is, then beside one spinning thread more than the
 * machine has cores (so the call gets at most half a core): the same schedule, which
 * the diversification found (w1 "greedy-diverse"). */
static void same_under_load(xe_instance *in, const char *label)
{
    xe_err err;
    xe_stages idle, loaded;
    const char *w1 = NULL, *w2 = NULL;
    assert_int_equal(xe_heur_best_ex(in, &idle, &w1, 1, 0.0, &err), XE_OK);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int nspin = (int)(cores > 0 && cores < 64 ? cores + 1 : 3);
    atomic_int stop;
    atomic_init(&stop, 0);
    pthread_t th[65];
    for (int k = 0; k < nspin; k++) assert_int_equal(pthread_create(&th[k], NULL, spin, &stop), 0);
    double t0 = xe_now();
    int rc = xe_heur_best_ex(in, &loaded, &w2, 1, 0.0, &err);
    double t_loaded = xe_now() - t0;
    atomic_store(&stop, 1);
    for (int k = 0; k < nspin; k++) pthread_join(th[k], NULL);
    assert_int_equal(rc, XE_OK);
    print_message("%s: %s %.6f s, %s %.6f s beside %d spinning threads (call %.2f s)\n", label, w1,
                  xe_stages_cost(in, &idle), w2, xe_stages_cost(in, &loaded), nspin, t_loaded);
    assert_string_equal(w1, "greedy-diverse");
    assert_string_equal(w1, w2);
    assert_true(xe_stages_equal(&idle, &loaded));
    xe_stages_clear(&idle);
    xe_stages_clear(&loaded);
}

static void test_load_independent(void **state)
{
    (void)state;
    xe_instance *in = resnet18_main_job();
    same_under_load(in, "ResNet-18 batch 32, GPU + CPU 50%");
    xe_instance_free(in);
    /* the diversification's cheaper schedule came after 0.17 of 0.2 s here */
    in = xe_test_shared_instance("checkmate_vgg_unet_b32_train.json", "gpu", 0.8);
    same_under_load(in, "U-Net one GPU 80%");
    xe_instance_free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unet),
        cmocka_unit_test(test_tiny),
        cmocka_unit_test(test_load_independent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
