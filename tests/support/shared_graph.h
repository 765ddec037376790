/* Tests that read ../shared/graphs (present for developers and CI, never copied into
 * the repo) go through these, so every one skips the same way where it is absent. */
#ifndef XENGINE_TESTS_SHARED_GRAPH_H
#define XENGINE_TESTS_SHARED_GRAPH_H

#include "xengine/instance.h"

/* "../shared/graphs/<file>" relative to the repo root (the tests' working directory);
 * static storage, overwritten by the next call. When the file is absent: prints
 * "skipped: ... is absent" and ends the current cmocka test with skip(). */
const char *xe_test_shared_graph(const char *file);

/* Reads the shared graph and builds the instance of preset ("gpu", "cpu", "gpu+cpu")
 * with the first device at frac of the no-recomputation peak; asserts success, skips
 * like xe_test_shared_graph. Free with xe_instance_free. */
xe_instance *xe_test_shared_instance(const char *file, const char *preset, double frac);

#endif
