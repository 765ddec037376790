/* xengine CLI — shared pieces of the subcommands (internal). */
#ifndef XE_CLI_H
#define XE_CLI_H

#include "xengine/instance.h"
#include "xengine/schedule.h"
#include "xengine/sim.h"

/* Exit codes (documented in --help and README). */
enum {
    XE_EXIT_OK = 0,
    XE_EXIT_USAGE = 1,      /* bad command line */
    XE_EXIT_INPUT = 2,      /* unreadable or invalid input file */
    XE_EXIT_INFEASIBLE = 3, /* no schedule fits the budget */
    XE_EXIT_TIMEOUT = 4,    /* no schedule found, none proven impossible (time limit, heuristic only) */
    XE_EXIT_INTERNAL = 5    /* solver failure or a bug (a schedule the simulator rejects) */
};

/* Options that describe the instance, shared by solve and simulate. */
typedef struct xe_cli_inst_opts {
    const char *graph;   /* path */
    const char *devices; /* preset name (gpu, cpu, gpu+cpu) or devices file */
    const char *budget;  /* first device's budget: "80%", bytes, "12GiB"; NULL = preset */
    const char *costs;   /* costs file or NULL */
} xe_cli_inst_opts;

/* Parses --devices/--budget/--costs into o when argv[*i] is one of them (advancing *i);
 * returns 1 when consumed, 0 when not one of these, -1 on a missing value. */
int xe_cli_inst_arg(int argc, char **argv, int *i, xe_cli_inst_opts *o);

/* Reads the graph, makes the instance, applies the costs file. On failure prints the
 * one-line error and returns the exit code; *out is NULL then. */
int xe_cli_load_instance(const xe_cli_inst_opts *o, xe_instance **out);

/* Refuses, before any planning, an output path the writers could not write
 * (xe_io_check_writable) or that is the input file itself; prints the error and returns
 * an exit code, 0 when fine. */
int xe_cli_check_output(const char *out, const char *input);

/* Maps an XE_E* status to an exit code. */
int xe_cli_exit_code(int status);

/* Prints the per-device table and the totals of a simulated schedule on stdout. */
void xe_cli_print_summary(const xe_instance *in, const xe_sim_result *r);

/* Formats bytes as "3.06 GiB" into buf. */
const char *xe_cli_bytes(int64_t b, char *buf, size_t cap);

int xe_cli_solve(int argc, char **argv);
int xe_cli_simulate(int argc, char **argv);

#endif
