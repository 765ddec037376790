/* xengine fuzzing — helpers shared by the libFuzzer targets (fuzz/, not part of the
 * library or the CLI; built only by fuzz/build.sh).
 *
 * The readers take paths, so each input is written to one temporary file per fuzzing
 * process (in /dev/shm when it exists) and the reader is run on that path. libFuzzer's
 * entry points carry no context, so the path and the fixed instance live in statics of
 * the harness; the library itself keeps no global state. */
#ifndef XE_FUZZ_UTIL_H
#define XE_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xengine/instance.h"
#include "xengine/io.h"

/* Writes data[0..size) to this process's temporary file (created on first use, removed
 * at exit) and returns its path. Aborts when the file cannot be written: that is a
 * harness failure, not a finding. */
const char *xe_fuzz_file(const uint8_t *data, size_t size, const char *suffix);

/* The instance of tests/data/tiny_graph.json (embedded) with the built-in recipe
 * `preset` ("gpu", "gpu+cpu") at 100%: a fresh one per call, owned by the caller.
 * Aborts on failure (the fixture is valid). */
xe_instance *xe_fuzz_tiny_instance(const char *preset);

/* The tiny graph alone (finalized, owned by the caller). */
xe_graph *xe_fuzz_tiny_graph(void);

#endif
