/* Validity of a stage schedule and of a topological order, shared by the solver tests. */
#ifndef XENGINE_TESTS_VALID_H
#define XENGINE_TESTS_VALID_H

#include <stdint.h>

#include "xengine/instance.h"
#include "xengine/schedule.h"
#include "xengine/stages.h"

/* Asserts (cmocka) that st passes xe_stages_check, that its event list
 * (xe_stages_to_schedule) replays in the independent simulator (xe_sim_run) at
 * xe_stages_cost(in, st) seconds (relative 1e-9), and that every device's simulated peak
 * stays within its budget. Prints the checker's or simulator's message on failure. */
void xe_test_assert_stages_valid(const xe_instance *in, const xe_stages *st);

/* 1 when order[0..n) is a permutation of g's nodes with every input before its user. */
int xe_test_is_topological(const xe_graph *g, const int *order);

/* Asserts that s replays in the simulator on in (one device) within its budget; returns
 * its total time (seconds), *peak (may be NULL) its peak (bytes). Prints the simulator's
 * message on failure. */
double xe_test_replay_one(const xe_instance *in, const xe_schedule *s, int64_t *peak);

/* The exact one-device search's schedule of in (xe_pebble_schedule, no deadline) into
 * out (initialised here, caller-owned); asserts that it finds one. A start schedule for
 * the local searches' tests. */
void xe_test_pebble_start(const xe_instance *in, xe_schedule *out);

#endif
