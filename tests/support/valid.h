/* Validity of a stage schedule, shared by the solver tests. */
#ifndef XENGINE_TESTS_VALID_H
#define XENGINE_TESTS_VALID_H

#include "xengine/instance.h"
#include "xengine/stages.h"

/* Asserts (cmocka) that st passes xe_stages_check, that its event list
 * (xe_stages_to_schedule) replays in the independent simulator (xe_sim_run) at
 * xe_stages_cost(in, st) seconds (relative 1e-9), and that every device's simulated peak
 * stays within its budget. Prints the checker's or simulator's message on failure. */
void xe_test_assert_stages_valid(const xe_instance *in, const xe_stages *st);

#endif
