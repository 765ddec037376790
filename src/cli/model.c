/* xengine CLI — loading an ONNX model for execution (run, profile). */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

void xe_cli_model_free(xe_cli_model *m)
{
    xe_instance_free(m->inst);
    xe_train_map_clear(&m->map);
    xe_net_free(m->net);
    memset(m, 0, sizeof *m);
}

/* --threads (its form checked by xe_cli_check_threads): one count per device. A count
 * list that does not match the devices is a bad option value (exit 1), like --threads 0. */
static int parse_threads(const char *s, int ndev, int *threads, xe_err *err)
{
    int n = 1;
    for (const char *c = s; *c; c++) n += *c == ',';
    if (n != ndev)
        return xe_err_set(err, XE_EINVAL, "--threads: '%s' gives %d thread count%s for %d device%s (one per device, "
                                          "comma-separated)", s, n, n == 1 ? "" : "s", ndev, ndev == 1 ? "" : "s");
    const char *p = s;
    for (int d = 0; d < ndev; d++) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 4096 || (*end && *end != ','))
            return xe_err_set(err, XE_EINVAL, "--threads: '%s' is not a list of whole numbers from 1 to 4096", s);
        threads[d] = (int)v;
        p = *end ? end + 1 : end;
    }
    return XE_OK;
}

const char *xe_cli_threads_str(int threads, char *buf, size_t cap)
{
    if (threads > 0) snprintf(buf, cap, "%d", threads);
    else snprintf(buf, cap, "all");
    return buf;
}

int xe_cli_model_load(const xe_cli_inst_opts *o, const char *threads, xe_cli_model *m)
{
    xe_err err = {{0}};
    memset(m, 0, sizeof *m);
    if (o->inference == 2) { /* taken from the schedule file (xe_cli_batch_from_schedule) */
        fprintf(stderr, "xengine: error: %s: the schedule was planned for the inference graph; the executor runs "
                        "training steps only\n", o->graph);
        return XE_EXIT_INPUT;
    }
    if (o->inference) {
        fprintf(stderr, "xengine: error: %s: --inference: the executor runs training steps only\n", o->graph);
        return XE_EXIT_USAGE;
    }
    int code = xe_cli_load_instance_net(o, "cpu", &m->net, &m->map, NULL, &m->inst);
    if (code) return code;
    for (int d = 0; d < m->inst->ndev; d++) {
        const char *name = m->inst->dev[d].name, *e = name + strlen(name);
        while (e > name && isdigit((unsigned char)e[-1])) e--;
        m->threads[d] = *e ? atoi(e) : 0;
        if (m->threads[d] > 4096) m->threads[d] = 0;
    }
    int rc = threads ? parse_threads(threads, m->inst->ndev, m->threads, &err) : XE_OK;
    if (rc) {
        fprintf(stderr, "xengine: error: %s\n", err.msg);
        xe_cli_model_free(m);
        return XE_EXIT_USAGE; /* a value on the command line */
    }
    return XE_EXIT_OK;
}
