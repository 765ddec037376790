#include "support/shared_graph.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "xengine/io.h"

const char *xe_test_shared_graph(const char *file)
{
    static char path[512]; /* test helper: one path at a time */
    struct stat st;
    snprintf(path, sizeof path, "../shared/graphs/%s", file);
    if (stat(path, &st) != 0) {
        print_message("skipped: %s is absent\n", path);
        skip();
    }
    return path;
}

xe_instance *xe_test_shared_instance(const char *file, const char *preset, double frac)
{
    const char *path = xe_test_shared_graph(file);
    xe_err err = {{0}};
    xe_graph *g = NULL;
    int rc = xe_io_read_graph(path, &g, &err);
    if (rc) print_message("%s\n", err.msg);
    assert_int_equal(rc, XE_OK);
    xe_recipe r;
    assert_int_equal(xe_recipe_preset(preset, frac, &r, &err), XE_OK);
    xe_instance *in = NULL;
    assert_int_equal(xe_instance_from_recipe(g, &r, &in, &err), XE_OK);
    return in;
}
