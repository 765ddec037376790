/* xengine CLI — loading an ONNX model for execution (run, profile). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "xengine/cost.h"
#include "xengine/io.h"
#include "xengine/onnx.h"

void xe_cli_model_free(xe_cli_model *m)
{
    xe_instance_free(m->inst);
    xe_train_map_clear(&m->map);
    xe_net_free(m->net);
    memset(m, 0, sizeof *m);
}

static int parse_threads(const char *s, int ndev, int *threads, xe_err *err)
{
    const char *p = s;
    for (int d = 0; d < ndev; d++) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 4096)
            return xe_err_set(err, XE_EINVAL, "--threads: '%s' is not one whole number >= 1 per device (%d)", s, ndev);
        threads[d] = (int)v;
        p = end;
        if (d + 1 < ndev && *p++ != ',')
            return xe_err_set(err, XE_EINVAL, "--threads: '%s' needs %d comma-separated counts", s, ndev);
    }
    if (*p) return xe_err_set(err, XE_EINVAL, "--threads: '%s' has more counts than the %d devices", s, ndev);
    return XE_OK;
}

int xe_cli_model_load(const xe_cli_inst_opts *o, const char *threads, xe_cli_model *m)
{
    xe_err err = {{0}};
    xe_graph *g = NULL;
    xe_recipe r;
    memset(m, 0, sizeof *m);
    int64_t batch = 0;
    int rc;
    if (o->inference) {
        rc = xe_err_set(&err, XE_EINVAL, "--inference: the executor runs training steps only");
        goto fail;
    }
    if (o->batch) {
        char *end;
        long long b = strtoll(o->batch, &end, 10);
        if (*end || end == o->batch || b < 1 || b > 1000000000) {
            rc = xe_err_set(&err, XE_EINVAL, "--batch: '%s' is not a whole number from 1 to 1e9", o->batch);
            goto fail;
        }
        batch = b;
    }
    if ((rc = xe_onnx_read(o->graph, batch, &m->net, &err))) goto fail;
    if ((rc = xe_net_training_graph(m->net, &g, &m->map, &err))) {
        char msg[sizeof err.msg];
        snprintf(msg, sizeof msg, "%s", err.msg);
        xe_err_set(&err, rc, "%s: %s", o->graph, msg);
        goto fail;
    }
    const char *dev = o->devices ? o->devices : "cpu";
    if (!strcmp(dev, "gpu") || !strcmp(dev, "cpu") || !strcmp(dev, "gpu+cpu"))
        rc = xe_cost_recipe_preset(dev, 1.0, &r, &err);
    else
        rc = xe_io_read_devices(dev, &r, &err);
    if (rc) goto fail;
    if (o->budget) {
        int64_t bytes = 0;
        double frac = 0;
        if ((rc = xe_io_parse_budget("--budget", o->budget, &bytes, &frac, &err))) goto fail;
        r.budget_bytes[0] = bytes;
        r.budget_frac[0] = frac;
    }
    if ((rc = xe_cost_instance(m->net, g, &m->map, &r, &m->inst, &err))) goto fail;
    g = NULL;
    if (o->costs && (rc = xe_io_read_costs(o->costs, m->inst, &err))) goto fail;
    if ((rc = xe_instance_validate(m->inst, &err))) goto fail;
    for (int d = 0; d < m->inst->ndev; d++) {
        const char *name = m->inst->dev[d].name, *e = name + strlen(name);
        while (e > name && isdigit((unsigned char)e[-1])) e--;
        m->threads[d] = *e ? atoi(e) : 0;
        if (m->threads[d] > 4096) m->threads[d] = 0;
    }
    if (threads && (rc = parse_threads(threads, m->inst->ndev, m->threads, &err))) goto fail;
    return XE_EXIT_OK;
fail:
    fprintf(stderr, "xengine: error: %s\n", err.msg);
    xe_graph_free(g);
    xe_cli_model_free(m);
    return xe_cli_exit_code(rc);
}
