/* Fuzz target: the devices reader, then an instance from the recipe it returns on the
 * tiny graph (budget fractions, speeds and link figures reach the arithmetic there). */
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xe_err err = {{0}};
    xe_recipe r;
    memset(&r, 0, sizeof r);
    if (xe_io_read_devices(xe_fuzz_file(data, size, ".json"), &r, &err) != XE_OK) {
        if (!err.msg[0] || strchr(err.msg, '\n')) abort();
        return 0;
    }
    if (r.ndev < 1 || r.ndev > XE_MAX_DEV) abort(); /* the reader promises 1..8 devices */
    xe_graph *g = xe_fuzz_tiny_graph();
    xe_instance *in = NULL;
    if (xe_instance_from_recipe(g, &r, &in, &err) != XE_OK) {
        xe_graph_free(g);
        return 0;
    }
    (void)xe_instance_validate(in, &err);
    xe_instance_free(in);
    return 0;
}
