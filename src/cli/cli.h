/* xengine CLI — shared pieces of the subcommands (internal). */
#ifndef XE_CLI_H
#define XE_CLI_H

#include <stdio.h>

#include "xengine/instance.h"
#include "xengine/io.h"
#include "xengine/net.h"
#include "xengine/plan.h"
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
    const char *batch;   /* ONNX models: batch size replacing the file's, or NULL */
    int inference;       /* ONNX models: plan the inference graph instead of training
                            (1: --inference; 2: taken from a schedule file's summary) */
} xe_cli_inst_opts;

/* 1 when arg (its first len bytes) is an option that takes a value in some command: -o
 * or one of the long options (--budget, --output, ...). */
int xe_cli_takes_value(const char *arg, size_t len);

/* Parses --devices/--budget/--costs/--batch/--inference into o when argv[*i] is one of
 * them (advancing *i); returns 1 when consumed, 0 when not one of these, -1 on a
 * missing value. */
int xe_cli_inst_arg(int argc, char **argv, int *i, xe_cli_inst_opts *o);

/* Reads the graph, makes the instance, applies the costs file. An ONNX model (".onnx",
 * or a file starting with protobuf field 1) is read with xe_onnx_read, turned into its
 * training (or inference) graph and costed by the analytic model (include/xengine/cost.h).
 * On failure prints the one-line error and returns the exit code; *out is NULL then. */
int xe_cli_load_instance(const xe_cli_inst_opts *o, xe_instance **out);

/* The same with the devices dev_default when o has no --devices ("gpu+cpu" for the
 * planners, "cpu" for run and profile); for an ONNX model with net_out and map_out
 * non-NULL, the network and the training map are handed to the caller (free them with
 * xe_net_free and xe_train_map_clear), else freed; with recipe_out non-NULL, the device
 * recipe (preset or devices file) as read, before --budget is applied. */
int xe_cli_load_instance_net(const xe_cli_inst_opts *o, const char *dev_default, xe_net **net_out,
                             xe_train_map *map_out, xe_recipe *recipe_out, xe_instance **out);

/* 1 when path is an ONNX model: the extension ".onnx", or a first byte 0x08 (protobuf
 * field 1, ir_version, which exporters write first). */
int xe_cli_is_onnx(const char *path);

/* Refuses, before any planning, an output path the writers could not write
 * (xe_io_check_writable) or that is the input file itself; prints the error and returns
 * an exit code, 0 when fine. */
int xe_cli_check_output(const char *out, const char *input);

/* xe_cli_check_output against every input of o: the graph, the devices file (when not a
 * preset) and the costs file. Same file: same inode (a path, ./path, a symbolic or hard
 * link), or the same resolved path when one does not exist yet. "-" is refused. */
int xe_cli_check_output_inst(const char *out, const xe_cli_inst_opts *o);

/* 1 when a and b name the same file (as above). */
int xe_cli_same_file(const char *a, const char *b);

/* Refuses (exit code 1, one line) two outputs a (option a_opt) and b that are the same
 * file; NULL ones are fine. */
int xe_cli_check_outputs_differ(const char *a, const char *a_opt, const char *b, const char *b_opt);

/* run/profile --threads: refuses (exit code 1, one line) a value that is not a
 * comma-separated list of whole numbers from 1 to 4096; the count per device is checked
 * when the devices are known. */
int xe_cli_check_threads(const char *s);

/* Option-parsing tails shared by the subcommands. xe_cli_bad_arg prints "unknown option
 * 'A' (try --help)" when a starts with '-', else "unexpected argument 'A'", and returns
 * XE_EXIT_USAGE. xe_cli_whole parses v (option opt) as a whole number from lo to hi into
 * *out; xe_cli_seed parses v as an unsigned 64-bit seed (strtoull) into *out. Both return
 * 0, or print the usage error (one line) and return -1. */
int xe_cli_bad_arg(const char *a);
int xe_cli_whole(const char *opt, const char *v, long lo, long hi, int *out);
int xe_cli_seed(const char *v, unsigned long long *out);

/* A plain decimal number ("60", "0.5", "1e-3") into *x: 1 when v is one, finite, and
 * nothing else (no "0x10", "inf", "nan", spaces, trailing text); else 0. */
int xe_cli_decimal(const char *v, double *x);

/* The batch size of an ONNX model's network: the leading dimension of its data input,
 * 0 when it has none. */
int64_t xe_cli_net_batch(const xe_net *net);

/* Bytes the executor and the profiler hold outside any pool for a network: each
 * parameter twice (value and gradient), the data input and the labels once. */
double xe_cli_net_data_bytes(const xe_net *net);

/* "note: device 'gpu' (kind gpu) runs on this machine's CPU here ..." for the first
 * device of kind gpu in `in`: the executor and the profiler run every device as a oneDNN
 * CPU engine (docs/executor.md); `what` names the command ("measured", "run"). */
void xe_cli_gpu_on_cpu_note(const xe_instance *in, const char *what);

/* simulate/plot/run of an ONNX model (o->graph) with a schedule file: *stated = the batch
 * the file states (xe_io_schedule_model; 0: none). Without --batch, a stated batch becomes
 * o->batch (its text in buf) and 1 is returned (the caller prints a note), else 0; -1
 * (the error printed) when the file states a batch that is not one. The graph it states
 * (the same call) likewise: the inference graph sets o->inference = 2 (the
 * note below says so); the training graph with --inference given is -1 ("drop
 * --inference"). */
int xe_cli_batch_from_schedule(xe_cli_inst_opts *o, const char *schedule, char *buf, size_t cap, int64_t *stated);

/* The note for a stated batch (above) on stdout: taken from the file (taken = 1), or
 * differing from --batch; first the note for an inference graph taken from the file.
 * Nothing when the file states none or they agree. */
void xe_cli_batch_note(const xe_cli_inst_opts *o, int taken, int64_t stated);

/* simulate/plot: the one error line of a schedule the simulator rejects (why: its
 * message), on stderr, naming path; where the file states a budget (bytes) for a device
 * that differs from the one it was checked against, the first such is added in words
 * (the notes below come only with a valid schedule, which needs them least). */
void xe_cli_invalid_schedule(const char *path, const xe_instance *in, const xe_schedule_claims *c, const char *why);

/* simulate/plot: the notes on stdout where the schedule file's claims (c) differ from
 * the instance it was checked against: its budgets (bytes) against the devices', the
 * graph it names against in's, and, with r (else NULL), its summary's step time (seconds)
 * against the simulator's; preceded by the batch note (xe_cli_batch_note). */
void xe_cli_claims_notes(const xe_cli_inst_opts *o, const xe_instance *in, const xe_schedule_claims *c,
                         const xe_sim_result *r, int taken, int64_t stated);

/* "note: the file's summary states a peak of X on D; the replay here gives Y ..." for the
 * first device where the summary's stated peak (c->peak) differs from r's: tensor sizes
 * differ, so the schedule was planned for another batch (or graph); with an ONNX model
 * and no batch stated (stated <= 0), the note says to give it with --batch. Nothing
 * where they agree or nothing is stated. */
void xe_cli_peak_note(const xe_cli_inst_opts *o, const xe_instance *in, const xe_schedule_claims *c,
                      const xe_sim_result *r, int64_t stated);

/* run/profile: refuses (exit code 1, one line) a readable MODEL that is not ONNX. */
int xe_cli_check_model(const char *path, const char *command);

/* Maps an XE_E* status to an exit code. */
int xe_cli_exit_code(int status);

/* Exit code of a failed write of an output (schedule, graph, costs, CSV) whose path was
 * checked writable before the work: an I/O error is then the disk's (full), not the
 * input's, so XE_EIO gives XE_EXIT_INTERNAL (5); any other status as xe_cli_exit_code. */
int xe_cli_write_exit_code(int status);

/* Prints the per-device table and the totals of a simulated schedule on stdout. */
void xe_cli_print_summary(const xe_instance *in, const xe_sim_result *r);

/* gnuplot (src/cli/gnuplot.c). xe_cli_gnuplot_prog: $XE_GNUPLOT when set and not empty,
 * else "gnuplot" (static or environment string). xe_cli_gnuplot_require: that program
 * when it can be executed (searched in PATH when it has no slash), else NULL with one
 * error line on stderr (prefixed by "WHAT: " when what is not NULL: the image it was to
 * draw). xe_cli_gnuplot_run: runs `prog
 * [-e "outfile='OUT'"] SCRIPT` (no -e when out is NULL) in dir (the current directory
 * when NULL), its output captured; XE_EXIT_OK when it exited 0, else one error line on
 * stderr naming `shown` (dir/script when NULL; the image when the script is temporary)
 * and the line of gnuplot's output that names the error, and XE_EXIT_INTERNAL. */
const char *xe_cli_gnuplot_prog(void);
const char *xe_cli_gnuplot_require(const char *what);
int xe_cli_gnuplot_run(const char *prog, const char *dir, const char *script, const char *out, const char *shown);
/* Whether the image gnuplot wrote at path is whole: 1 for a PNG ending with its IEND chunk
 * or an SVG ending with </svg>; 0 for one cut short (gnuplot exits 0 on a full disk with
 * the image truncated); -1 when path is missing, unreadable or empty. */
int xe_cli_image_check(const char *path);


int xe_cli_solve(int argc, char **argv);
int xe_cli_simulate(int argc, char **argv);
int xe_cli_export_graph(int argc, char **argv);
int xe_cli_plot(int argc, char **argv);
/* sweep.c: cost against budget and the largest batch per method (docs/sweep.md). */
int xe_cli_sweep(int argc, char **argv);

/* One method's own row of `solve --json` ("methods": [...]). */
typedef struct xe_cli_json_row {
    const char *method, *status;
    double objective, bound, gap, time; /* seconds, gap a fraction; not finite: null */
} xe_cli_json_row;

/* --json: the summary of solve or simulate for scripts (json_summary.c). Strings may be
 * NULL (written as null); numbers that are not finite are written as null. */
typedef struct xe_cli_json {
    const char *command;  /* "solve", "simulate" */
    const char *status;   /* e.g. "optimal", "valid"; NULL: from exit_code */
    int exit_code;
    const char *graph, *schedule; /* paths */
    const char *method;   /* solve: "milp", "greedy"; NULL: no objective fields */
    double objective, bound, gap, solve_time; /* seconds; gap as a fraction */
    /* solve: what `bound` covers ("stage schedules" or "every schedule"; NULL: not
     * written) and the bound of every schedule (xe_plan_result.bound_any) with its gap,
     * written as bound_scope, bound_any_s and gap_any */
    const char *bound_scope;
    double bound_any, gap_any;
    const xe_instance *in;    /* with sim: the per-device table and totals, else omitted */
    const xe_sim_result *sim;
    int events;
    int nrows;            /* solve: rows of methods[], one per method run (0: omitted) */
    xe_cli_json_row rows[XE_PLAN_MAX_ROWS]; /* every row xe_plan can emit */
    /* solve without a schedule (exit 3, 4): the first device's budgets the tool can
     * vouch for, bytes: every schedule needs at least budget_lower; a schedule is known
     * at budget_found (0: none); budget_exact: lower = found is the smallest budget that
     * admits any schedule. Written when budget_lower > 0. */
    long long budget_lower, budget_found;
    int budget_exact;
} xe_cli_json;

/* Prints j as one JSON object on one line of f; returns an exit code (5 when out of
 * memory, with the message on stderr). */
int xe_cli_print_json(FILE *f, const xe_cli_json *j);

/* 1 when arg is one of argv[1..argc): a flag looked up before parsing (--json, so that a
 * usage error still prints the JSON object). The value of an option that takes one
 * (xe_cli_takes_value) is skipped, never taken for the flag. */
int xe_cli_has_arg(int argc, char **argv, const char *arg);

/* A command that fails before its own output (its message already on stderr): with json,
 * the short JSON object on stdout (command, status of `code`, exit_code, the paths,
 * NULL printed as null). Returns code. */
int xe_cli_fail_json(int json, const char *command, int code, const char *graph, const char *schedule);

/* "ok", "usage", "bad input", "infeasible", "no schedule", "internal error". */
const char *xe_cli_exit_status(int code);

/* One updating progress line on a terminal (progress.c): between begin and end, stderr
 * goes through a relay process that shows the solvers' "[milp] ..." / "[lns] ..." lines
 * rewritten in place ("\r...") and passes any other line through. begin does nothing
 * (returns 0) when stderr is not a terminal or the relay cannot be started; end restores
 * stderr and waits for the relay. Print nothing on stdout in between. */
typedef struct xe_cli_progress {
    int active, saved_fd, pid;
} xe_cli_progress;
int xe_cli_progress_begin(xe_cli_progress *p);
void xe_cli_progress_end(xe_cli_progress *p);

/* run.c / profile.c: execute a schedule, profile a model (include/xengine/exec.h). */
int xe_cli_run(int argc, char **argv);
int xe_cli_profile(int argc, char **argv);

#endif
