/* xengine CLI — internal: an ONNX model with its training graph and costed instance,
 * for the commands that execute it (run, profile). */
#ifndef XE_CLI_MODEL_H
#define XE_CLI_MODEL_H

#include "cli.h"
#include "xengine/exec.h"
#include "xengine/net.h"

typedef struct xe_cli_model {
    xe_net *net;
    xe_train_map map;
    xe_instance *inst;             /* owns the training graph */
    int threads[XE_MAX_DEV];       /* OpenMP threads per device */
} xe_cli_model;

/* A device's OpenMP thread count for the tables: the number, or "all" for 0 (every core,
 * OpenMP's default). Returns buf. */
const char *xe_cli_threads_str(int threads, char *buf, size_t cap);

/* Reads o->graph (ONNX, --batch), builds the training graph, the devices (preset or
 * devices file, --budget), the analytic costs and then o->costs when given. Threads per
 * device: `threads` ("1,2": one count per device) or, when NULL, the number the device's
 * name ends with ("cpu2" -> 2), else every core (0). Prints the one-line error and
 * returns an exit code. */
int xe_cli_model_load(const xe_cli_inst_opts *o, const char *threads, xe_cli_model *m);
void xe_cli_model_free(xe_cli_model *m);

#endif
