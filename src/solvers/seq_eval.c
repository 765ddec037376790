/* Compute sequences on one device (seq_eval.h): evaluation, dead computes, the schedule. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/sim.h"

#include "seq_eval.h"

int xe_seq_cap(int m, int n)
{
    int64_t cap = 4 * (int64_t)m + 4 * (int64_t)n + 64;
    return cap > INT32_MAX / 2 ? INT32_MAX / 2 : (int)cap;
}

int xe_seq_eval_init(xe_seq_eval *e, const xe_instance *in, int cap)
{
    int n = in->g->n;
    *e = (xe_seq_eval){.g = in->g, .budget = in->dev[0].budget};
    e->cost = malloc((size_t)n * sizeof *e->cost);
    e->cur = malloc((size_t)n * sizeof *e->cur);
    e->last = malloc((size_t)cap * sizeof *e->last);
    e->delta = malloc(((size_t)cap + 1) * sizeof *e->delta);
    if (!e->cost || !e->cur || !e->last || !e->delta) {
        xe_seq_eval_free(e);
        return XE_ENOMEM;
    }
    for (int v = 0; v < n; v++) e->cost[v] = xe_cost(in, v, 0);
    return XE_OK;
}

void xe_seq_eval_free(xe_seq_eval *e)
{
    free(e->cost);
    free(e->cur);
    free(e->last);
    free(e->delta);
    *e = (xe_seq_eval){0};
}

/* Evaluates seq[0..m): 0 when some compute lacks an input or (check_all) some node is
 * never computed; else 1 with *cost (seconds), *over (bytes above the budget summed over
 * the computes) and *peak (bytes). Leaves e->last for the frees. The moves keep every
 * node computed (a delete needs a second compute), so the search passes check_all 0. */
int xe_seq_evaluate(xe_seq_eval *e, const int *seq, int m, int check_all, double *cost, double *over, int64_t *peak)
{
    const xe_graph *g = e->g;
    for (int v = 0; v < g->n; v++) e->cur[v] = -1;
    double c = 0;
    for (int k = 0; k < m; k++) {
        int v = seq[k];
        for (int i = g->pred_off[v]; i < g->pred_off[v + 1]; i++) {
            int u = g->pred[i];
            if (e->cur[u] < 0) return 0;
            e->last[e->cur[u]] = k;
        }
        e->cur[v] = k;
        e->last[k] = k;
        c += e->cost[v];
    }
    for (int v = 0; check_all && v < g->n; v++)
        if (e->cur[v] < 0) return 0;
    memset(e->delta, 0, ((size_t)m + 1) * sizeof *e->delta);
    for (int k = 0; k < m; k++) {
        int64_t b = g->nodes[seq[k]].mem;
        e->delta[k] += b;
        e->delta[e->last[k] + 1] -= b;
    }
    int64_t r = 0, pk = 0;
    double ov = 0;
    for (int k = 0; k < m; k++) {
        r += e->delta[k];
        if (r > pk) pk = r;
        if (r > e->budget) ov += (double)(r - e->budget);
    }
    *cost = c;
    *over = ov;
    *peak = pk;
    return 1;
}

/* Removes from seq[0..*m) every compute that nothing reads while its node is computed
 * elsewhere too (cnt[v]: computes of v), in passes until none is left: the moves keep
 * zero-cost ones, which change neither the cost nor, once dropped, the validity, and a
 * dead compute only adds bytes at its own step and keeps its inputs resident. Returns 1
 * with the evaluation of what is left (in e and *cost, *over, *peak), 0 when seq is not
 * valid. */
int xe_seq_drop_dead(xe_seq_eval *e, int *seq, int *m, int *cnt, double *cost, double *over, int64_t *peak)
{
    for (int again = 1; again;) {
        again = 0;
        if (!xe_seq_evaluate(e, seq, *m, 1, cost, over, peak)) return 0;
        int w = 0;
        for (int k = 0; k < *m; k++) {
            if (e->last[k] == k && cnt[seq[k]] > 1) {
                cnt[seq[k]]--;
                again = 1;
                continue;
            }
            seq[w++] = seq[k];
        }
        *m = w;
    }
    return 1; /* the last pass dropped nothing: e, *cost, *over, *peak are of seq as it is */
}

/* Writes the schedule of seq[0..m) (computes, each followed by the frees of the tensors
 * read for the last time there; e holds seq's evaluation, its cost `cost`) into *out and
 * replays it: XE_OK, XE_ENOMEM, or XE_EINTERNAL when the simulator disagrees with the
 * evaluation (invalid, over the budget, another cost). */
int xe_seq_write(const xe_instance *in, const xe_seq_eval *e, const int *seq, int m, double cost, xe_schedule *out,
                 const char *who, xe_err *err)
{
    xe_schedule_clear(out);
    /* the frees at position k, grouped by a counting sort on last[] */
    int *head = malloc(((size_t)m + 1) * sizeof *head);
    int *next = malloc((size_t)m * sizeof *next);
    if (!head || !next) {
        free(head);
        free(next);
        return xe_err_set(err, XE_ENOMEM, "%s: out of memory", who);
    }
    for (int k = 0; k <= m; k++) head[k] = -1;
    for (int j = m - 1; j >= 0; j--) {
        next[j] = head[e->last[j]];
        head[e->last[j]] = j;
    }
    int rc = XE_OK;
    for (int k = 0; k < m && rc == XE_OK; k++) {
        rc = xe_schedule_push(out, XE_EV_COMPUTE, seq[k], 0, -1);
        for (int j = head[k]; j >= 0 && rc == XE_OK; j = next[j]) rc = xe_schedule_push(out, XE_EV_FREE, seq[j], 0, -1);
    }
    free(head);
    free(next);
    if (rc != XE_OK) {
        xe_schedule_clear(out);
        return xe_err_set(err, XE_ENOMEM, "%s: out of memory", who);
    }
    xe_sim_result sr;
    xe_err e2;
    if (xe_sim_run(in, out, &sr, &e2) != XE_OK || sr.dev[0].peak > in->dev[0].budget ||
        fabs(sr.total_time - cost) > 1e-9 * fmax(1.0, cost)) {
        xe_schedule_clear(out);
        return xe_err_set(err, XE_EINTERNAL, "%s: the simulator rejects the schedule found (%s)", who, e2.msg);
    }
    return XE_OK;
}
