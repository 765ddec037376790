/* Tests of the per-event trace that `xengine plot` draws (xe_sim_run_trace,
 * include/xengine/sim.h): bytes per device after each event, serial and overlapped start
 * and end times, all worked out by hand on the two-device example of docs/simulator.md.
 * The pictures themselves are checked by tests/cli/plot.sh. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "xengine/graph.h"
#include "xengine/instance.h"
#include "xengine/schedule.h"
#include "xengine/sim.h"

enum { CPU = 0, GPU = 1 };

/* a -> b, a -> c, b -> d, c -> d; mem a 100, b 50, c 30, d 10 bytes. Seconds on cpu / gpu:
 * a 8 / 2, b 6 / 3, c 4 / 2, d - / 2; a copy of a or b takes 5 s, of c or d 1 s.
 * Budgets: cpu 1000, gpu 150 bytes. */
static xe_instance *two_dev(void)
{
    static const char *const names[] = {"a", "b", "c", "d"};
    static const int64_t mem[] = {100, 50, 30, 10};
    static const int src[] = {0, 0, 1, 2}, dst[] = {1, 2, 3, 3};
    static const double cost[] = {8, 2, 6, 3, 4, 2, XE_NO_COST, 2};
    static const double copy[] = {5, 5, 1, 1};
    xe_err err = {{0}};
    xe_graph *g = xe_graph_new("t");
    assert_non_null(g);
    for (int v = 0; v < 4; v++) assert_int_equal(xe_graph_add_node(g, names[v], NULL, 0, mem[v], 0, 1.0, &err), v);
    for (int k = 0; k < 4; k++) assert_int_equal(xe_graph_add_edge(g, src[k], dst[k], &err), XE_OK);
    assert_int_equal(xe_graph_finalize(g, &err), XE_OK);
    xe_instance *in = xe_instance_new(g, 2);
    assert_non_null(in);
    snprintf(in->dev[CPU].name, sizeof in->dev[CPU].name, "cpu");
    snprintf(in->dev[GPU].name, sizeof in->dev[GPU].name, "gpu");
    in->dev[CPU].kind = XE_DEV_CPU;
    in->dev[GPU].kind = XE_DEV_GPU;
    in->dev[CPU].budget = 1000;
    in->dev[GPU].budget = 150;
    for (int v = 0; v < 4; v++)
        for (int d = 0; d < 2; d++) {
            in->cost[v * 2 + d] = cost[v * 2 + d];
            for (int e = 0; e < 2; e++) in->copy[(v * 2 + d) * 2 + e] = d == e ? 0.0 : copy[v];
        }
    return in;
}

static void push(xe_schedule *s, xe_event_kind k, int v, int d, int e)
{
    assert_int_equal(xe_schedule_push(s, k, v, d, e), XE_OK);
}

/*  i  event                bytes cpu gpu  serial      overlapped (docs/simulator.md)
 *  0  compute a on gpu          0   100    0 ..  2     0 ..  2
 *  1  copy a gpu -> cpu       100   100    2 ..  7     2 ..  7
 *  2  compute b on gpu        100   150    7 .. 10     2 ..  5  (beside the copy)
 *  3  free a on gpu           100    50   10           7        (after its last reader)
 *  4  compute c on cpu        130    50   10 .. 14     7 .. 11  (a arrives at 7)
 *  5  free a on cpu            30    50   14          11        (c read it until 11)
 *  6  copy c cpu -> gpu        30    80   14 .. 15    11 .. 12
 *  7  compute d on gpu         30    90   15 .. 17    12 .. 14 */
static void test_trace_two_devices(void **state)
{
    (void)state;
    xe_instance *in = two_dev();
    xe_schedule s;
    xe_schedule_init(&s);
    push(&s, XE_EV_COMPUTE, 0, GPU, -1);
    push(&s, XE_EV_COPY, 0, GPU, CPU);
    push(&s, XE_EV_COMPUTE, 1, GPU, -1);
    push(&s, XE_EV_FREE, 0, GPU, -1);
    push(&s, XE_EV_COMPUTE, 2, CPU, -1);
    push(&s, XE_EV_FREE, 0, CPU, -1);
    push(&s, XE_EV_COPY, 2, CPU, GPU);
    push(&s, XE_EV_COMPUTE, 3, GPU, -1);
    static const int64_t cpu[8] = {0, 100, 100, 100, 130, 30, 30, 30};
    static const int64_t gpu[8] = {100, 100, 150, 50, 50, 50, 80, 90};
    static const double s0[8] = {0, 2, 7, 10, 10, 14, 14, 15}, s1[8] = {2, 7, 10, 10, 14, 14, 15, 17};
    static const double o0[8] = {0, 2, 2, 7, 7, 11, 11, 12}, o1[8] = {2, 7, 5, 7, 11, 11, 12, 14};
    xe_sim_step tr[8];
    xe_sim_result res;
    xe_err err = {{0}};
    assert_int_equal(xe_sim_run_trace(in, &s, &res, tr, &err), XE_OK);
    int64_t peak[2] = {0, 0};
    for (int i = 0; i < 8; i++) {
        assert_int_equal(tr[i].bytes[CPU], cpu[i]);
        assert_int_equal(tr[i].bytes[GPU], gpu[i]);
        for (int d = 2; d < XE_MAX_DEV; d++) assert_int_equal(tr[i].bytes[d], 0);
        assert_float_equal(tr[i].serial_start, s0[i], 1e-12);
        assert_float_equal(tr[i].serial_end, s1[i], 1e-12);
        assert_float_equal(tr[i].start, o0[i], 1e-12);
        assert_float_equal(tr[i].end, o1[i], 1e-12);
        for (int d = 0; d < 2; d++)
            if (tr[i].bytes[d] > peak[d]) peak[d] = tr[i].bytes[d];
    }
    /* the trace agrees with the summary: peaks, serial total, makespan */
    assert_int_equal(peak[CPU], res.dev[CPU].peak);
    assert_int_equal(peak[GPU], res.dev[GPU].peak);
    assert_float_equal(tr[7].serial_end, res.total_time, 1e-12);
    assert_float_equal(tr[7].end, res.makespan, 1e-12);

    /* xe_sim_run gives the same result without a trace */
    xe_sim_result plain;
    assert_int_equal(xe_sim_run(in, &s, &plain, &err), XE_OK);
    assert_int_equal(plain.dev[GPU].peak, res.dev[GPU].peak);
    assert_float_equal(plain.makespan, res.makespan, 0);
    assert_float_equal(plain.total_time, res.total_time, 0);
    xe_schedule_clear(&s);
    xe_instance_free(in);
}

/* An invalid event stops the trace: entries from it on keep what the caller put there. */
static void test_trace_stops_at_bad_event(void **state)
{
    (void)state;
    xe_instance *in = two_dev();
    xe_schedule s;
    xe_schedule_init(&s);
    push(&s, XE_EV_COMPUTE, 0, GPU, -1);
    push(&s, XE_EV_COMPUTE, 3, GPU, -1); /* d's inputs b and c are not resident */
    push(&s, XE_EV_FREE, 0, GPU, -1);
    xe_sim_step tr[3];
    memset(tr, 0, sizeof tr);
    tr[1].serial_end = tr[2].serial_end = -7.0;
    xe_sim_result res;
    xe_err err = {{0}};
    assert_int_equal(xe_sim_run_trace(in, &s, &res, tr, &err), XE_EINVAL);
    assert_int_equal(res.bad_event, 1);
    assert_int_equal(tr[0].bytes[GPU], 100);
    assert_float_equal(tr[0].serial_end, 2.0, 1e-12);
    assert_float_equal(tr[1].serial_end, -7.0, 0);
    assert_float_equal(tr[2].serial_end, -7.0, 0);
    assert_int_equal(tr[1].bytes[GPU], 0);
    xe_schedule_clear(&s);
    xe_instance_free(in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_trace_two_devices),
        cmocka_unit_test(test_trace_stops_at_bad_event),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
