/* The single entry point of the baselines (xe_baseline_run) and their shared helper. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "baseline_util.h"
#include "xengine/sim.h"
#include "xengine/solvers.h"

int xe_bl_stages_sim(const xe_instance *in, const xe_stages *st, const char *what, xe_schedule *out,
                     double *cost, xe_err *err)
{
    xe_schedule s;
    xe_schedule_init(&s);
    xe_err e2;
    int rc = xe_stages_to_schedule(in, st, &s, &e2);
    if (rc) {
        xe_schedule_clear(&s);
        return xe_err_set(err, rc == XE_ENOMEM ? rc : XE_EINTERNAL, "%s: %s", what, e2.msg);
    }
    xe_sim_result res;
    rc = xe_sim_run(in, &s, &res, &e2);
    if (rc == XE_EINVAL) {
        /* over a budget, or broken? replay once more with unbounded budgets */
        xe_instance loose = *in;
        for (int d = 0; d < loose.ndev; d++) loose.dev[d].budget = INT64_MAX / 4;
        xe_err e3;
        int r3 = xe_sim_run(&loose, &s, &res, &e3);
        xe_schedule_clear(&s);
        if (r3 == XE_OK) return xe_err_set(err, XE_EINFEASIBLE, "%s does not fit: %s", what, e2.msg);
        return xe_err_set(err, r3 == XE_ENOMEM ? r3 : XE_EINTERNAL, "%s: the simulator rejects the schedule: %s",
                          what, e3.msg);
    }
    if (rc) {
        xe_schedule_clear(&s);
        return xe_err_set(err, rc, "%s: simulator: %s", what, e2.msg);
    }
    *cost = res.total_time;
    if (out && xe_schedule_append(out, &s)) rc = xe_err_set(err, XE_ENOMEM, "%s: out of memory", what);
    xe_schedule_clear(&s);
    return rc;
}

typedef enum { M_CKALL, M_CHEN_SQRT, M_CHEN_GREEDY, M_REVOLVE, M_CHAIN_DP, M_ONE_DEV } method;

/* One single-device method on device d: events into out (cleared first), *cost. */
static int run_on(const xe_instance *in, method m, int d, double deadline, xe_schedule *out, double *cost,
                  xe_err *err)
{
    out->len = 0;
    xe_stages st = {0};
    int rc;
    const char *what = "";
    switch (m) {
    case M_REVOLVE: return xe_revolve(in, d, out, cost, NULL, err);
    case M_CHAIN_DP: return xe_chain_dp_within(in, d, deadline, out, cost, err);
    case M_CKALL:
        what = "checkpoint-all";
        rc = xe_heur_checkpoint_all(in, d, &st, err);
        break;
    case M_CHEN_SQRT:
        what = "chen-sqrt";
        rc = xe_chen_sqrt(in, d, &st, err);
        break;
    case M_CHEN_GREEDY:
        what = "chen-greedy";
        rc = xe_chen_greedy_budget(in, d, &st, NULL, err);
        break;
    default:
        what = "one-device";
        rc = xe_one_device(in, d, &st, err);
        break;
    }
    if (rc == XE_OK) rc = xe_bl_stages_sim(in, &st, what, out, cost, err);
    xe_stages_clear(&st);
    return rc;
}

/* Appends s to the NUL-terminated buf of cap bytes, cut to fit. */
static void append(char *buf, size_t cap, const char *s)
{
    size_t u = strlen(buf), k = strlen(s);
    if (u + 1 >= cap) return;
    if (k > cap - 1 - u) k = cap - 1 - u;
    memcpy(buf + u, s, k);
    buf[u + k] = 0;
}

int xe_baseline_run(const xe_instance *in, const char *name, xe_schedule *out, double *cost, xe_err *err)
{
    return xe_baseline_run_within(in, name, INFINITY, out, cost, err);
}

int xe_baseline_run_within(const xe_instance *in, const char *name, double deadline, xe_schedule *out, double *cost,
                           xe_err *err)
{
    static const struct {
        const char *name;
        method m;
    } tab[] = {{"checkpoint-all", M_CKALL}, {"chen-sqrt", M_CHEN_SQRT}, {"chen-greedy", M_CHEN_GREEDY},
               {"revolve", M_REVOLVE},      {"chain-dp", M_CHAIN_DP},   {"one-device", M_ONE_DEV}};
    out->len = 0;
    if (!name) return xe_err_set(err, XE_EUNSUPPORTED, "baseline: no method named");
    if (strcmp(name, "fastest-device") == 0) return xe_fastest_device(in, out, cost, err);
    if (strncmp(name, "one-device:", 11) == 0) {
        char *end;
        long d = strtol(name + 11, &end, 10);
        if (end == name + 11 || *end || d < 0 || d >= in->ndev)
            return xe_err_set(err, XE_EINVAL, "baseline %s: device index must be 0..%d", name, in->ndev - 1);
        return run_on(in, M_ONE_DEV, (int)d, deadline, out, cost, err);
    }
    int which = -1;
    for (size_t k = 0; k < sizeof tab / sizeof tab[0]; k++)
        if (strcmp(name, tab[k].name) == 0) which = (int)k;
    if (which < 0)
        return xe_err_set(err, XE_EUNSUPPORTED,
                          "baseline %s: unknown method (checkpoint-all, chen-sqrt, chen-greedy, revolve, chain-dp, "
                          "one-device, one-device:<d>, fastest-device)",
                          name);
    method m = tab[which].m;
    if (m == M_REVOLVE || m == M_CHAIN_DP) {
        xe_chain ch;
        int rc = xe_chain_detect(in->g, &ch, err);
        if (rc) return rc;
        xe_chain_clear(&ch);
    }
    /* every device in turn; the cheapest valid schedule */
    xe_schedule tmp;
    xe_schedule_init(&tmp);
    double best = INFINITY;
    int rc = XE_OK, found = 0;
    xe_err last; /* why each device failed, "starting on <dev>: ..." joined when several */
    last.msg[0] = 0;
    for (int d = 0; d < in->ndev; d++) {
        double c;
        xe_err e2;
        int r = run_on(in, m, d, deadline, &tmp, &c, &e2);
        if (r == XE_EINFEASIBLE) {
            if (in->ndev == 1) last = e2;
            else {
                if (last.msg[0]) append(last.msg, sizeof last.msg, "; ");
                append(last.msg, sizeof last.msg, "starting on ");
                append(last.msg, sizeof last.msg, in->dev[d].name);
                append(last.msg, sizeof last.msg, ": ");
                append(last.msg, sizeof last.msg, e2.msg);
            }
            continue;
        }
        if (r) {
            rc = xe_err_set(err, r, "%s", e2.msg);
            break;
        }
        if (c < best) {
            xe_schedule sw = *out;
            *out = tmp;
            tmp = sw;
            best = c;
            found = 1;
        }
    }
    xe_schedule_clear(&tmp);
    if (rc) {
        out->len = 0;
        return rc;
    }
    if (!found) return xe_err_set(err, XE_EINFEASIBLE, "%s", last.msg[0] ? last.msg : "baseline: no device");
    *cost = best;
    return XE_OK;
}
