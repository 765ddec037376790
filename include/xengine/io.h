/* xengine — files in and out (JSON through jansson; docs/formats.md).
 *
 * Every reader returns XE_OK or XE_EIO / XE_EPARSE / XE_EINVAL / XE_ENOMEM with a
 * one-line message in err that starts with the file's path. Writers write to PATH.tmp.XXXXXX
 * in the same directory and rename over PATH only when complete, so a failed write never
 * leaves a half-written file. */
#ifndef XENGINE_IO_H
#define XENGINE_IO_H

#include <stddef.h>

#include "xengine/instance.h"
#include "xengine/schedule.h"
#include "xengine/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether the writers below could write path: not an existing non-regular file (they
 * never replace a device, link or directory), nor an existing file the caller may not
 * write (e.g. mode 444; root may), and a writable directory. XE_EIO with
 * the reason otherwise. Lets a caller refuse a bad output before long work. */
int xe_io_check_writable(const char *path, xe_err *err);

/* The permission bits an output written to path gets: those of the file it replaces,
 * else 0644 (a temporary file from mkstemp is 0600 until set so). */
unsigned xe_io_output_mode(const char *path);

/* The name of a temporary file beside path for mkstemp, into buf (cap bytes): PATH.TAG.XXXXXX,
 * or DIR/.xengine.TAG.XXXXXX where path's last component would pass 255 bytes with the
 * suffix. 0, or -1 when buf is too small. */
int xe_io_temp_path(const char *path, const char *tag, char *buf, size_t cap);

/* Writes len bytes of data to path the way every writer here does: PATH.tmp.XXXXXX in
 * the same directory, fsync, rename over path. On failure the temporary file is removed,
 * path is left as it was and XE_EIO (message starting with path) is returned. SIGINT,
 * SIGTERM, SIGHUP and SIGQUIT are blocked in the calling thread from the temporary's
 * creation until it is renamed or removed (delivered after, they cannot leave it
 * behind). Used for the plot data and scripts of `xengine plot`. */
int xe_io_write_atomic(const char *path, const char *data, size_t len, xe_err *err);

/* The largest file the readers take, bytes: 2 GiB, protobuf's own limit for a model;
 * an endless input (/dev/zero, a pipe that never ends) stops there, not at the end of
 * memory. */
#define XE_IO_MAX_FILE_BYTES (INT64_C(2) << 30)

/* Reads the whole file at path (a pipe too: read to its end, no size asked) into *data
 * (malloc'd, the caller frees it; *len bytes, a NUL after them, so text can be scanned
 * as a string). XE_EIO (cannot open or read, naming path), XE_ENOMEM, XE_EINVAL (more
 * than XE_IO_MAX_FILE_BYTES). Every reader of files (the JSON formats, devices files,
 * ONNX models) reads through it or xe_io_read_text. */
int xe_io_read_all(const char *path, char **data, size_t *len, xe_err *err);

/* xe_io_read_all for text: refused with XE_EPARSE ("PATH: byte N: a NUL byte (KIND is
 * text)", kind e.g. "a JSON file"; NULL: "the file") at the first NUL byte, as soon as
 * it is read. */
int xe_io_read_text(const char *path, const char *kind, char **data, size_t *len, xe_err *err);

/* Reads a graph in any of the three schemas, detected from the content: xengine's own
 * ({"format": "xengine-graph", ...}), Checkmate node-link (nodes with cost_cpu/cost_ram)
 * and Moccasin node-link (nodes with out_cost/duration, links keyed "0"/"1",
 * graph.order). Node-link graphs are renumbered into their topological order. On XE_OK
 * *out is a finalized graph owned by the caller. */
int xe_io_read_graph(const char *path, xe_graph **out, xe_err *err);

/* Writes g in xengine's own graph format. */
int xe_io_write_graph(const char *path, const xe_graph *g, xe_err *err);

/* Reads a devices file into a recipe (docs/formats.md: devices with name, kind, budget as
 * bytes or "NN%", speed; link bandwidth and latency; time_unit), JSON or the paper's
 * lines. A leading UTF-8 byte order mark is skipped; a NUL byte anywhere is XE_EPARSE
 * ("PATH: byte N: a NUL byte"). */
int xe_io_read_devices(const char *path, xe_recipe *out, xe_err *err);

/* Reads a costs file and overwrites in->cost / in->copy for the nodes and device pairs it
 * names (by node name and device name); unknown names are XE_EINVAL (device names the
 * instance lacks can be skipped instead: xe_io_read_costs_ex). */
int xe_io_read_costs(const char *path, xe_instance *in, xe_err *err);

/* Writes the costs of in (every node, every device, every ordered pair); batch > 0: the
 * batch size they were measured or modelled at, written as "batch" (0: none). */
int xe_io_write_costs(const char *path, const xe_instance *in, int64_t batch, xe_err *err);

/* xe_io_read_costs that also gives, from the same parse, the batch the file states
 * ("batch", written by `xengine profile` and `export-graph` for ONNX models; 0 when absent
 * or null); XE_EINVAL naming the file, nothing read, when it is not a whole number from 1
 * to 10^9. */
int xe_io_read_costs_batch(const char *path, xe_instance *in, int64_t *batch, xe_err *err);

/* Options and report of xe_io_read_costs_ex. */
typedef struct xe_costs_read {
    /* in: 1 = entries for device names the instance lacks are skipped, not refused (a
     * file profiled for gpu+cpu read for the GPU alone); they are reported below */
    int skip_unknown_devices;
    int64_t batch;     /* out: the batch the file states, 0 when absent or null */
    int64_t ncompute[XE_MAX_DEV]; /* out: compute entries read per device of the instance */
    int nskipped;      /* out: distinct device names skipped (past the 128 bytes of skipped[], a
                          name is no longer listed, so a repeat of it counts again) */
    char skipped[128]; /* out: those names, ", "-separated ("" when none; cut when long) */
} xe_costs_read;

/* xe_io_read_costs_batch with the options of r (caller-owned; its outputs are reset
 * first). With skip_unknown_devices, a file with no entry for any device of the instance
 * is still XE_EINVAL ("no cost for a device of this instance"), nothing read; a copy pair
 * counts for the instance only when both its devices do. Other errors as
 * xe_io_read_costs_batch. */
int xe_io_read_costs_ex(const char *path, xe_instance *in, xe_costs_read *r, xe_err *err);

/* Writes a schedule: devices, events (node by index and name, device by name) and,
 * when sum != NULL, a summary object (per-device peak, times, counts; extra key/values
 * from the caller in `extra_json`, a JSON object text or NULL). */
int xe_io_write_schedule(const char *path, const xe_instance *in, const xe_schedule *s,
                         const xe_sim_result *sum, const char *extra_json, xe_err *err);

/* What a schedule file states beside its events, for `simulate` and `run` to compare
 * with or use: the budgets of the instance's devices (budget[d] bytes, -1 where the file
 * states none), the graph's name ("graph"; "" when absent, cut at 127 bytes) and the
 * step time of its summary ("summary" key "total_time_s", seconds; NAN when absent), and
 * the peak its summary states per device of the instance ("summary" "devices" entries'
 * "peak_bytes", by name; -1 where none): sizes depend on the batch, costs do not enter. */
typedef struct xe_schedule_claims {
    int64_t budget[XE_MAX_DEV];
    char graph[128];
    double total_time;
    int64_t peak[XE_MAX_DEV];
} xe_schedule_claims;

/* What a schedule file states about the ONNX model it was planned for, from one parse
 * of its summary (written by `xengine solve` for ONNX models): *batch = its "batch", 0
 * when it states none (absent or null); *inference = its "inference": 1 (the inference
 * graph), 0 (the training graph), -1 (absent or null). Both are "none" when the file
 * cannot be read as a schedule (the full read reports that): XE_OK. XE_EINVAL with err
 * naming the file for a batch that is not a whole number from 1 to 10^9 (before
 * 2026-12-01 such a value was ignored without a word) or an inference that is not true
 * or false. */
int xe_io_schedule_model(const char *path, int64_t *batch, int *inference, xe_err *err);
/* xe_io_read_schedule and the file's claims (c) from one parse; c is filled once the
 * devices list has passed its checks. Errors as xe_io_read_schedule. */
int xe_io_read_schedule_claims(const char *path, const xe_instance *in, xe_schedule *out, xe_schedule_claims *c,
                               xe_err *err);

/* Reads a schedule written by xe_io_write_schedule (or by hand) for instance in:
 * node indices must exist and match names when both are given; device names must
 * exist. Events are appended to out. */
int xe_io_read_schedule(const char *path, const xe_instance *in, xe_schedule *out,
                        xe_err *err);

/* Parses a budget: "NN%" (sets *frac = NN/100, the fraction of the no-recomputation
 * peak) or a size: plain bytes "12345" (a whole number: "1.5" is XE_EINVAL), or with a
 * unit "500MB", "12GiB" (sets *bytes, rounded down to whole bytes). Numbers are decimal ("0x1000", "inf" are refused).
 * Exactly one of the two is set. XE_EPARSE when not of this form, XE_EINVAL when not
 * > 0 (a size below 1 byte); the message starts with `what` (a path or an option name).
 * A percentage that comes to less than 1 byte is refused when the instance is made. */
int xe_io_parse_budget(const char *what, const char *s, int64_t *bytes, double *frac, xe_err *err);

/* Formats b bytes as "3.06 GiB" (binary units, two decimals; whole bytes below 1 KiB:
 * "512 B") into buf (cap bytes) and returns buf: the sizes of messages and tables. */
const char *xe_io_bytes(int64_t b, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
