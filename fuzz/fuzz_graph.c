/* Fuzz target: the graph reader (all three schemas), then what the CLI does next with a
 * graph: an instance from the gpu+cpu recipe, its validation and the budget figures. */
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xe_err err = {{0}};
    xe_graph *g = NULL;
    if (xe_io_read_graph(xe_fuzz_file(data, size, ".json"), &g, &err) != XE_OK) {
        if (g) abort(); /* a failed read returns no graph */
        if (!err.msg[0] || strchr(err.msg, '\n')) abort(); /* one line, always */
        return 0;
    }
    (void)xe_instance_norecompute_peak(g);
    (void)xe_instance_min_footprint(g);
    xe_recipe r;
    xe_instance *in = NULL;
    if (xe_recipe_preset("gpu+cpu", 0.8, &r, &err) != XE_OK) abort();
    if (xe_instance_from_recipe(g, &r, &in, &err) != XE_OK) {
        xe_graph_free(g);
        return 0;
    }
    (void)xe_instance_validate(in, &err);
    xe_instance_free(in);
    return 0;
}
