/* Fuzz target: the costs reader on the tiny gpu+cpu instance, then the instance check
 * the CLI runs after it. A failed read must leave the costs as they were. */
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    xe_err err = {{0}};
    xe_instance *in = xe_fuzz_tiny_instance("gpu+cpu");
    size_t nc = (size_t)in->g->n * (size_t)in->ndev, ncp = nc * (size_t)in->ndev;
    double *cost0 = malloc(nc * sizeof *cost0), *copy0 = malloc(ncp * sizeof *copy0);
    if (!cost0 || !copy0) abort();
    memcpy(cost0, in->cost, nc * sizeof *cost0);
    memcpy(copy0, in->copy, ncp * sizeof *copy0);
    if (xe_io_read_costs(xe_fuzz_file(data, size, ".json"), in, &err) != XE_OK) {
        if (!err.msg[0] || strchr(err.msg, '\n')) abort();
        if (memcmp(cost0, in->cost, nc * sizeof *cost0) || memcmp(copy0, in->copy, ncp * sizeof *copy0))
            abort(); /* docs/formats.md: a failed read changes nothing */
    } else {
        (void)xe_instance_validate(in, &err);
    }
    free(cost0);
    free(copy0);
    xe_instance_free(in);
    return 0;
}
