/* xengine simulator — replays an event list, checks every rule of ../shared/PROBLEM.md
 * (preconditions, per-device memory, every node computed) and gathers the statistics of
 * xe_sim_result. Timing under concurrency is delegated to makespan.c. Shares no code
 * with the formulation (docs/simulator.md). */
#include "xengine/sim.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "clock.h"

typedef struct replay {
    const xe_instance *in;
    unsigned char *resident; /* [n * ndev] 1 when v's output is resident on d */
    unsigned char *computed; /* [n] 1 once v was computed anywhere */
    int64_t bytes[XE_MAX_DEV];
} replay;

static int is_resident(const replay *r, int v, int d)
{
    return r->resident[(size_t)v * (size_t)r->in->ndev + (size_t)d];
}

static void set_resident(replay *r, int v, int d, unsigned char on)
{
    r->resident[(size_t)v * (size_t)r->in->ndev + (size_t)d] = on;
}

static const char *node_name(const xe_instance *in, int v) { return in->g->nodes[v].name; }
static const char *dev_name(const xe_instance *in, int d) { return in->dev[d].name; }

/* "relu1", or "#17" when v is out of range. */
static void node_label(const xe_instance *in, int v, char *buf, size_t size)
{
    if (v >= 0 && v < in->g->n)
        snprintf(buf, size, "%s", node_name(in, v));
    else
        snprintf(buf, size, "#%d", v);
}

static void dev_label(const xe_instance *in, int d, char *buf, size_t size)
{
    if (d >= 0 && d < in->ndev)
        snprintf(buf, size, "%s", dev_name(in, d));
    else
        snprintf(buf, size, "#%d", d);
}

/* "compute relu1 on gpu", "copy x from cpu to gpu", "free x on cpu". */
static void event_label(const xe_instance *in, const xe_event *e, char *buf, size_t size)
{
    char nb[160], db[40], eb[40];
    node_label(in, e->node, nb, sizeof nb);
    dev_label(in, e->dev, db, sizeof db);
    switch (e->kind) {
    case XE_EV_COMPUTE: snprintf(buf, size, "compute %s on %s", nb, db); break;
    case XE_EV_COPY:
        dev_label(in, e->dst, eb, sizeof eb);
        snprintf(buf, size, "copy %s from %s to %s", nb, db, eb);
        break;
    case XE_EV_FREE: snprintf(buf, size, "free %s on %s", nb, db); break;
    default: snprintf(buf, size, "kind %d", (int)e->kind); break;
    }
}

/* Sets err to "event I (LABEL): DETAIL" and returns XE_EINVAL. */
__attribute__((format(printf, 5, 6))) static int fail(xe_err *err, const xe_instance *in,
                                                     int i, const xe_event *e,
                                                     const char *fmt, ...)
{
    char label[256], detail[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    event_label(in, e, label, sizeof label);
    return xe_err_set(err, XE_EINVAL, "event %d (%s): %s", i, label, detail);
}

/* Kind known, node and device(s) in range, copy between two different devices. */
static int check_indices(const xe_instance *in, int i, const xe_event *e, xe_err *err)
{
    if (e->kind != XE_EV_COMPUTE && e->kind != XE_EV_COPY && e->kind != XE_EV_FREE)
        return fail(err, in, i, e, "unknown event kind %d", (int)e->kind);
    if (e->node < 0 || e->node >= in->g->n)
        return fail(err, in, i, e, "node index %d out of range (graph has %d nodes)", e->node,
                    in->g->n);
    if (e->dev < 0 || e->dev >= in->ndev)
        return fail(err, in, i, e, "device index %d out of range (instance has %d devices)",
                    e->dev, in->ndev);
    if (e->kind == XE_EV_COPY) {
        if (e->dst < 0 || e->dst >= in->ndev)
            return fail(err, in, i, e,
                        "destination device index %d out of range (instance has %d devices)",
                        e->dst, in->ndev);
        if (e->dst == e->dev)
            return fail(err, in, i, e, "source and destination are the same device");
    }
    return XE_OK;
}

static void raise_bytes(replay *r, xe_sim_device *sd, int d, int64_t add)
{
    r->bytes[d] += add;
    if (r->bytes[d] > sd->peak) sd->peak = r->bytes[d];
}

static int do_compute(replay *r, xe_sim_result *res, int i, const xe_event *e, xe_err *err)
{
    const xe_instance *in = r->in;
    const xe_graph *g = in->g;
    int v = e->node, d = e->dev;
    if (!xe_can_run(in, v, d))
        return fail(err, in, i, e, "%s cannot run %s", dev_name(in, d), node_name(in, v));
    if (is_resident(r, v, d))
        return fail(err, in, i, e,
                    "%s is already resident on %s (computing it again in place of a "
                    "resident copy is not allowed; free it first)",
                    node_name(in, v), dev_name(in, d));
    for (int p = g->pred_off[v]; p < g->pred_off[v + 1]; p++) {
        int u = g->pred[p];
        if (!is_resident(r, u, d))
            return fail(err, in, i, e, "input %s is not resident on %s", node_name(in, u),
                        dev_name(in, d));
    }
    /* The inputs are resident already, so the bytes during the compute are the
     * current residents plus v's output. */
    int64_t during = r->bytes[d] + g->nodes[v].mem;
    if (during > in->dev[d].budget)
        return fail(err, in, i, e, "memory on %s would be %" PRId64 " bytes, budget %" PRId64,
                    dev_name(in, d), during, in->dev[d].budget);
    xe_sim_device *sd = &res->dev[d];
    double c = xe_cost(in, v, d);
    raise_bytes(r, sd, d, g->nodes[v].mem);
    set_resident(r, v, d, 1);
    sd->computes++;
    sd->compute_time += c;
    res->computes++;
    res->total_time += c;
    if (r->computed[v]) {
        sd->recomputes++;
        res->recomputes++;
    }
    r->computed[v] = 1;
    return XE_OK;
}

static int do_copy(replay *r, xe_sim_result *res, int i, const xe_event *e, xe_err *err)
{
    const xe_instance *in = r->in;
    int v = e->node, d = e->dev, t = e->dst;
    if (!is_resident(r, v, d))
        return fail(err, in, i, e, "%s is not resident on %s", node_name(in, v),
                    dev_name(in, d));
    if (is_resident(r, v, t))
        return fail(err, in, i, e, "%s is already resident on %s", node_name(in, v),
                    dev_name(in, t));
    int64_t after = r->bytes[t] + in->g->nodes[v].mem;
    if (after > in->dev[t].budget)
        return fail(err, in, i, e, "memory on %s would be %" PRId64 " bytes, budget %" PRId64,
                    dev_name(in, t), after, in->dev[t].budget);
    xe_sim_device *sd = &res->dev[t];
    double c = xe_copy_cost(in, v, d, t);
    raise_bytes(r, sd, t, in->g->nodes[v].mem);
    set_resident(r, v, t, 1);
    sd->copies_in++;
    sd->copy_in_time += c;
    res->copies++;
    res->total_time += c;
    return XE_OK;
}

static int do_free(replay *r, xe_sim_result *res, int i, const xe_event *e, xe_err *err)
{
    const xe_instance *in = r->in;
    int v = e->node, d = e->dev;
    if (!is_resident(r, v, d))
        return fail(err, in, i, e, "%s is not resident on %s", node_name(in, v),
                    dev_name(in, d));
    set_resident(r, v, d, 0);
    r->bytes[d] -= in->g->nodes[v].mem;
    res->frees++;
    return XE_OK;
}

static int replay_events(replay *r, xe_sim_clock *clk, const xe_schedule *s,
                         xe_sim_result *res, xe_sim_step *trace, xe_err *err)
{
    const xe_instance *in = r->in;
    for (int i = 0; i < s->len; i++) {
        const xe_event *e = &s->ev[i];
        double serial_start = res->total_time;
        int rc = check_indices(in, i, e, err);
        if (rc == XE_OK) {
            switch (e->kind) {
            case XE_EV_COMPUTE: rc = do_compute(r, res, i, e, err); break;
            case XE_EV_COPY: rc = do_copy(r, res, i, e, err); break;
            default: rc = do_free(r, res, i, e, err); break;
            }
        }
        if (rc != XE_OK) {
            res->bad_event = i;
            return rc;
        }
        xe_sim_clock_event(clk, in, e);
        res->makespan = clk->makespan;
        if (trace) {
            xe_sim_step *st = &trace[i];
            for (int d = 0; d < XE_MAX_DEV; d++) st->bytes[d] = d < in->ndev ? r->bytes[d] : 0;
            st->serial_start = serial_start;
            st->serial_end = res->total_time;
            st->start = clk->last_start;
            st->end = clk->last_end;
        }
    }
    for (int v = 0; v < in->g->n; v++) {
        if (!r->computed[v]) {
            res->bad_event = s->len;
            return xe_err_set(err, XE_EINVAL, "node %s was never computed", node_name(in, v));
        }
    }
    return XE_OK;
}

int xe_sim_run(const xe_instance *in, const xe_schedule *s, xe_sim_result *res, xe_err *err)
{
    return xe_sim_run_trace(in, s, res, NULL, err);
}

int xe_sim_run_trace(const xe_instance *in, const xe_schedule *s, xe_sim_result *res,
                     xe_sim_step *trace, xe_err *err)
{
    xe_sim_result local;
    if (!res) res = &local;
    *res = (xe_sim_result){.ndev = in ? in->ndev : 0, .bad_event = -1};
    XE_ASSERT(in && in->g && in->g->finalized, "xe_sim_run needs a finalized instance");
    XE_ASSERT(in->ndev >= 1 && in->ndev <= XE_MAX_DEV, "device count out of range");
    XE_ASSERT(s && (s->len == 0 || s->ev), "xe_sim_run needs a schedule");

    int n = in->g->n;
    size_t cells = (size_t)n * (size_t)in->ndev;
    replay r = {.in = in};
    r.resident = calloc(cells ? cells : 1, 1);
    r.computed = calloc(n ? (size_t)n : 1, 1);
    xe_sim_clock clk;
    int rc = xe_sim_clock_init(&clk, n, in->ndev);
    if (!r.resident || !r.computed || rc != XE_OK) {
        rc = xe_err_set(err, XE_ENOMEM, "simulator: out of memory for %d nodes", n);
    } else {
        rc = replay_events(&r, &clk, s, res, trace, err);
    }
    xe_sim_clock_free(&clk);
    free(r.resident);
    free(r.computed);
    return rc;
}
