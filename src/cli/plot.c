/* xengine plot — pictures of a schedule through gnuplot (docs/plots.md).
 *
 * From a graph, a schedule file and the instance options of `simulate`, writes into
 * --out-dir: per device the R, S and C matrices (stage by node, as in Checkmate's
 * figures), memory over the schedule against the budget, and a timeline of the devices
 * and copy links, serial and overlapped. Each picture is a data file (.dat), a gnuplot
 * script (.gp) that reads it, and the image gnuplot makes from them. The schedule is
 * replayed by the simulator first; an invalid one is refused. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "xengine/io.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: xengine plot GRAPH SCHEDULE.json [--devices D] [--budget B] [--costs F]\n"
            "                    [--batch N] [--inference] --out-dir DIR [--format png|svg]\n"
            "\n"
            "Replays SCHEDULE.json on the instance made from GRAPH and the device options (give\n"
            "the same ones as to 'xengine solve'), then draws through gnuplot, into DIR (made\n"
            "when missing, in a parent directory that exists):\n"
            "  rs.FMT        per device the R (computes), S (checkpoints at stage start) and\n"
            "                C (copies arriving) matrices, stage by node\n"
            "  memory.FMT    resident bytes per device after each event, against its budget\n"
            "  timeline.FMT  computes and copies per device and link: serial (one event after\n"
            "                another) and overlapped (the simulator's makespan model)\n"
            "with the data (.dat) and gnuplot scripts (.gp) beside them (docs/plots.md).\n"
            "gnuplot is run as XE_GNUPLOT when set, else 'gnuplot' from PATH.\n"
            "\n"
            "example:\n"
            "  xengine plot ../shared/graphs/checkmate_vgg16_b256_train.json vgg16.json \\\n"
            "      --devices gpu+cpu --budget 70%% --out-dir plots --format svg\n"
            "\n"
            "exit codes: 0 ok, 1 usage, 2 bad input or invalid schedule, 5 gnuplot missing or\n"
            "failed (or another internal error)\n");
}

/* ---- a growing text buffer ------------------------------------------------------------ */

typedef struct tbuf {
    char *p;
    size_t len, cap;
    int oom; /* set once an allocation failed; later appends are dropped */
} tbuf;

__attribute__((format(printf, 2, 3))) static void tb_printf(tbuf *b, const char *fmt, ...)
{
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int k = vsnprintf(b->p ? b->p + b->len : NULL, b->p ? room : 0, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->oom = 1;
            return;
        }
        if (b->p && (size_t)k < room) {
            b->len += (size_t)k;
            return;
        }
        size_t cap = b->cap ? b->cap : 4096;
        while (cap - b->len <= (size_t)k) cap *= 2;
        char *q = realloc(b->p, cap);
        if (!q) {
            b->oom = 1;
            return;
        }
        b->p = q;
        b->cap = cap;
    }
}

static void tb_free(tbuf *b)
{
    free(b->p);
    *b = (tbuf){0};
}

/* A gnuplot single-quoted string: '' stands for ', control characters become '?'. */
static void tb_quote(tbuf *b, const char *s)
{
    tb_printf(b, "'");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '\'') tb_printf(b, "''");
        else if (*p < 0x20 || *p == 0x7f) tb_printf(b, "?");
        else tb_printf(b, "%c", *p);
    }
    tb_printf(b, "'");
}

/* ---- the files of one run ------------------------------------------------------------- */

#define PLOT_MAX_FILES (3 * XE_MAX_DEV + 16)

typedef struct plot_run {
    const xe_instance *in;
    const xe_schedule *s;
    const xe_sim_result *res;
    const xe_sim_step *trace;
    const char *dir;
    const char *fmt; /* "png" or "svg" */
    char *written[PLOT_MAX_FILES]; /* paths written so far (owned) */
    char *backup[PLOT_MAX_FILES];  /* the previous file at written[i], moved aside (owned;
                                      NULL: none): put back if the plot fails */
    int nwritten;
    const char *input[4];          /* graph, schedule, devices, costs (NULL: none) */
} plot_run;

/* 1 (after the error line) when path is one of the command's input files: a plot file
 * never overwrites what it was drawn from. */
static int is_input(const plot_run *pr, const char *path)
{
    static const char *const what[4] = {"input graph", "schedule", "devices file", "costs file"};
    for (int k = 0; k < 4; k++)
        if (pr->input[k] && xe_cli_same_file(path, pr->input[k])) {
            fprintf(stderr, "xengine: error: %s: is the %s; refusing to overwrite it (choose another --out-dir)\n",
                    path, what[k]);
            return 1;
        }
    return 0;
}

static char *join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (!p) return NULL;
    memcpy(p, dir, a);
    p[a] = '/';
    memcpy(p + a + 1, name, b + 1);
    return p;
}

/* The file a plot run is about to replace at path (an earlier run's), moved aside to
 * PATH.xe-prev so that a failed run can put it back; NULL when there is none (or it
 * cannot be moved: then a failed run removes the new file and the old one is lost, as
 * before 2026-12-05, when a failed plot left an earlier run's images beside no data). */
static char *move_aside(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) return NULL;
    size_t n = strlen(path);
    char *b = malloc(n + 9);
    if (!b) return NULL;
    memcpy(b, path, n);
    memcpy(b + n, ".xe-prev", 9);
    if (rename(path, b) != 0) {
        free(b);
        return NULL;
    }
    return b;
}

/* Puts the earlier file moved aside (move_aside; NULL: none) back at path, over what is
 * there; frees prev. */
static void put_back(char *prev, const char *path)
{
    if (prev && rename(prev, path) != 0) unlink(prev);
    free(prev);
}

/* Writes b atomically as DIR/name and records it. Prints the error; returns an exit code. */
static int put_file(plot_run *pr, const char *name, const tbuf *b)
{
    xe_err err = {{0}};
    if (b->oom || pr->nwritten >= PLOT_MAX_FILES) {
        fprintf(stderr, "xengine: error: %s/%s: out of memory\n", pr->dir, name);
        return XE_EXIT_INTERNAL;
    }
    char *path = join(pr->dir, name);
    if (!path) {
        fprintf(stderr, "xengine: error: %s/%s: out of memory\n", pr->dir, name);
        return XE_EXIT_INTERNAL;
    }
    if (is_input(pr, path)) {
        free(path);
        return XE_EXIT_USAGE;
    }
    if (xe_io_check_writable(path, &err) != XE_OK) {
        fprintf(stderr, "xengine: error: %s\n", err.msg);
        free(path);
        return XE_EXIT_USAGE; /* an unwritable --out-dir, as for solve's -o */
    }
    char *prev = move_aside(path);
    if (xe_io_write_atomic(path, b->p ? b->p : "", b->len, &err) != XE_OK) {
        fprintf(stderr, "xengine: error: %s\n", err.msg);
        put_back(prev, path);
        free(path);
        return XE_EXIT_INTERNAL; /* the write itself failed (a full disk): as solve's */
    }
    pr->backup[pr->nwritten] = prev;
    pr->written[pr->nwritten++] = path;
    return XE_EXIT_OK;
}

/* Removes every file this run wrote and puts back the earlier run's files it replaced
 * (after a failure: no partial set of plots stays, and an earlier complete set does). */
static void remove_written(plot_run *pr)
{
    for (int i = 0; i < pr->nwritten; i++) {
        unlink(pr->written[i]);
        put_back(pr->backup[i], pr->written[i]);
        free(pr->written[i]);
    }
    pr->nwritten = 0;
}

/* After success: the earlier run's files moved aside are removed. */
static void free_written(plot_run *pr)
{
    for (int i = 0; i < pr->nwritten; i++) {
        if (pr->backup[i]) unlink(pr->backup[i]);
        free(pr->backup[i]);
        free(pr->written[i]);
    }
    pr->nwritten = 0;
}

/* ---- stages from the event list -------------------------------------------------------- */

/* Splits the event list into stages (docs/plots.md): stage j ends with the j-th first
 * computation of a node together with the copies of that node and the frees right after
 * it. Fills stage_of[i] for each event; returns the number of stages (at most n + 1: a
 * trailing stage without a first computation), -1 when out of memory. */
static int split_stages(const xe_instance *in, const xe_schedule *s, int *stage_of)
{
    int n = in->g->n;
    unsigned char *seen = calloc((size_t)n + 1, 1);
    if (!seen) return -1;
    int stage = 0, open = 0, f = -1;
    for (int i = 0; i < s->len; i++) {
        const xe_event *e = &s->ev[i];
        if (open && !(e->kind == XE_EV_FREE || (e->kind == XE_EV_COPY && e->node == f))) {
            stage++;
            open = 0;
        }
        stage_of[i] = stage;
        if (e->kind == XE_EV_COMPUTE && !seen[e->node]) {
            seen[e->node] = 1;
            open = 1;
            f = e->node;
        }
    }
    free(seen);
    return s->len ? stage + 1 : 0;
}

/* ---- data files ------------------------------------------------------------------------ */

/* rs_D.dat: for every stage t and node i, "t i R S C" (counts of computes of i on d in
 * stage t, 1 when i is resident on d as stage t begins, copies of i arriving on d in
 * stage t). */
static int rs_data(plot_run *pr, const int *stage_of, int nst)
{
    const xe_instance *in = pr->in;
    const xe_schedule *s = pr->s;
    int n = in->g->n, nd = in->ndev;
    size_t cells = (size_t)nst * (size_t)n * (size_t)nd;
    int *R = calloc(cells ? cells : 1, sizeof *R), *C = calloc(cells ? cells : 1, sizeof *C);
    unsigned char *S = calloc(cells ? cells : 1, 1), *res = calloc((size_t)n * (size_t)nd, 1);
    int code = XE_EXIT_OK;
    if (!R || !C || !S || !res) {
        fprintf(stderr, "xengine: error: plot: out of memory for %d stages\n", nst);
        code = XE_EXIT_INTERNAL;
        goto done;
    }
#define CELL(t, i, d) (((size_t)(t) * (size_t)n + (size_t)(i)) * (size_t)nd + (size_t)(d))
    int cur = -1;
    for (int k = 0; k < s->len; k++) {
        const xe_event *e = &s->ev[k];
        int t = stage_of[k];
        while (cur < t) { /* a stage begins: snapshot what is resident */
            cur++;
            for (int i = 0; i < n; i++)
                for (int d = 0; d < nd; d++) S[CELL(cur, i, d)] = res[(size_t)i * nd + d];
        }
        switch (e->kind) {
        case XE_EV_COMPUTE:
            R[CELL(t, e->node, e->dev)]++;
            res[(size_t)e->node * nd + e->dev] = 1;
            break;
        case XE_EV_COPY:
            C[CELL(t, e->node, e->dst)]++;
            res[(size_t)e->node * nd + e->dst] = 1;
            break;
        default: res[(size_t)e->node * nd + e->dev] = 0; break;
        }
    }
    for (int d = 0; d < nd && !code; d++) {
        tbuf b = {0};
        tb_printf(&b, "# xengine plot: R, S, C of device %d (%s), stage by node; %d stages, %d nodes\n", d,
                  in->dev[d].name, nst, n);
        tb_printf(&b, "# stage node R S C\n");
        for (int t = 0; t < nst; t++)
            for (int i = 0; i < n; i++)
                tb_printf(&b, "%d %d %d %d %d\n", t, i, R[CELL(t, i, d)], S[CELL(t, i, d)], C[CELL(t, i, d)]);
        char name[32];
        snprintf(name, sizeof name, "rs_%d.dat", d);
        code = put_file(pr, name, &b);
        tb_free(&b);
    }
#undef CELL
done:
    free(R);
    free(C);
    free(S);
    free(res);
    return code;
}

/* mem_D.dat: "event serial_end_s bytes budget" for every event. */
static int mem_data(plot_run *pr)
{
    const xe_instance *in = pr->in;
    int code = XE_EXIT_OK;
    for (int d = 0; d < in->ndev && !code; d++) {
        tbuf b = {0};
        tb_printf(&b, "# xengine plot: bytes resident on device %d (%s) after each event\n", d,
                  in->dev[d].name);
        tb_printf(&b, "# event serial_end_s bytes budget\n");
        for (int i = 0; i < pr->s->len; i++)
            tb_printf(&b, "%d %.9g %lld %lld\n", i, pr->trace[i].serial_end, (long long)pr->trace[i].bytes[d],
                      (long long)in->dev[d].budget);
        char name[32];
        snprintf(name, sizeof name, "mem_%d.dat", d);
        code = put_file(pr, name, &b);
        tb_free(&b);
    }
    return code;
}

/* Lane of an event on the timeline: compute lanes 0..ndev-1, then one lane per ordered
 * device pair that carries a copy, in (from, to) order. lane_of_pair[d][e] = -1 unused. */
static int copy_lanes(const plot_run *pr, int lane_of_pair[XE_MAX_DEV][XE_MAX_DEV])
{
    int nd = pr->in->ndev, used[XE_MAX_DEV][XE_MAX_DEV] = {{0}};
    for (int i = 0; i < pr->s->len; i++)
        if (pr->s->ev[i].kind == XE_EV_COPY) used[pr->s->ev[i].dev][pr->s->ev[i].dst] = 1;
    int lanes = nd;
    for (int d = 0; d < XE_MAX_DEV; d++)
        for (int e = 0; e < XE_MAX_DEV; e++) lane_of_pair[d][e] = (d < nd && e < nd && used[d][e]) ? lanes++ : -1;
    return lanes;
}

#define RGB_COMPUTE 0x1f77b4
#define RGB_RECOMPUTE 0xff7f0e
#define RGB_COPY 0x2ca02c

/* timeline.dat: "lane kind serial_start serial_end start end rgb node" for every compute
 * and copy (kind 0 compute, 1 recompute, 2 copy). */
static int timeline_data(plot_run *pr, int lane_of_pair[XE_MAX_DEV][XE_MAX_DEV])
{
    const xe_instance *in = pr->in;
    unsigned char *seen = calloc((size_t)in->g->n, 1);
    if (!seen) {
        fprintf(stderr, "xengine: error: plot: out of memory\n");
        return XE_EXIT_INTERNAL;
    }
    tbuf b = {0};
    tb_printf(&b, "# xengine plot: computes and copies; times in seconds, serial and overlapped\n");
    tb_printf(&b, "# lane kind serial_start serial_end start end rgb node\n");
    for (int i = 0; i < pr->s->len; i++) {
        const xe_event *e = &pr->s->ev[i];
        const xe_sim_step *st = &pr->trace[i];
        int lane, kind, rgb;
        if (e->kind == XE_EV_FREE) continue;
        if (e->kind == XE_EV_COMPUTE) {
            lane = e->dev;
            kind = seen[e->node] ? 1 : 0;
            rgb = kind ? RGB_RECOMPUTE : RGB_COMPUTE;
            seen[e->node] = 1;
        } else {
            lane = lane_of_pair[e->dev][e->dst];
            kind = 2;
            rgb = RGB_COPY;
        }
        tb_printf(&b, "%d %d %.9g %.9g %.9g %.9g %d %d\n", lane, kind, st->serial_start, st->serial_end,
                  st->start, st->end, rgb, e->node);
    }
    free(seen);
    int code = put_file(pr, "timeline.dat", &b);
    tb_free(&b);
    return code;
}

/* ---- gnuplot scripts ------------------------------------------------------------------- */

/* Terminal line and `set output outfile` (the caller passes outfile with -e; by hand the
 * script writes NAME.FMT). */
static void gp_head(tbuf *b, const plot_run *pr, const char *name, int w, int h)
{
    tb_printf(b, "# xengine plot: %s (run: gnuplot %s.gp)\n", name, name);
    tb_printf(b, "if (!exists(\"outfile\")) outfile = '%s.%s'\n", name, pr->fmt);
    if (!strcmp(pr->fmt, "png"))
        tb_printf(b, "set terminal pngcairo size %d,%d noenhanced font 'sans,10'\n", w, h);
    else
        tb_printf(b, "set terminal svg size %d,%d noenhanced font 'sans,10' background '#ffffff'\n", w, h);
    tb_printf(b, "set output outfile\n");
}

static void gp_rs(tbuf *b, const plot_run *pr, int nst)
{
    const xe_instance *in = pr->in;
    int nd = in->ndev, n = in->g->n;
    gp_head(b, pr, "rs", 1500, 460 * nd);
    tb_printf(b, "set multiplot layout %d,3 title ", nd);
    char t[160];
    snprintf(t, sizeof t, "%s: R, S, C matrices (stage by node), %d stages", in->g->name[0] ? in->g->name : "graph",
             nst);
    tb_quote(b, t);
    tb_printf(b, "\nunset colorbox\nset cbrange [0:1]\nset xrange [-0.5:%d.5]\nset yrange [%d.5:-0.5]\n", n - 1,
              nst - 1);
    tb_printf(b, "set xlabel 'node'\nset ylabel 'stage'\nset size ratio -1\nset tics out\n");
    static const char *what[3] = {"R: computes", "S: resident at stage start", "C: copies arriving"};
    static const char *color[3] = {"#1f77b4", "#d62728", "#2ca02c"};
    for (int d = 0; d < nd; d++)
        for (int k = 0; k < 3; k++) {
            char title[128];
            snprintf(title, sizeof title, "%s on %s", what[k], in->dev[d].name);
            tb_printf(b, "set palette defined (0 '#ffffff', 1 '%s')\nset title ", color[k]);
            tb_quote(b, title);
            tb_printf(b, "\nplot 'rs_%d.dat' using 2:1:($%d > 0 ? 1 : 0) with image notitle\n", d, 3 + k);
        }
    tb_printf(b, "unset multiplot\n");
}

/* Bytes unit for a device's axis: the largest of B, KiB, MiB, GiB, TiB not above x. */
static void byte_unit(int64_t x, const char **name, double *div)
{
    static const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double v = (double)x, f = 1.0;
    int k = 0;
    while (v >= 1024.0 && k < 4) {
        v /= 1024.0;
        f *= 1024.0;
        k++;
    }
    *name = u[k];
    *div = f;
}

static void gp_memory(tbuf *b, const plot_run *pr)
{
    const xe_instance *in = pr->in;
    int nd = in->ndev;
    gp_head(b, pr, "memory", 1000, 320 * nd);
    tb_printf(b, "set multiplot layout %d,1\nset xlabel 'event'\nset key outside right top\nset grid ytics\n", nd);
    tb_printf(b, "set xrange [-0.5:%d.5]\n", pr->s->len > 0 ? pr->s->len - 1 : 0);
    for (int d = 0; d < nd; d++) {
        const char *un;
        double div;
        byte_unit(in->dev[d].budget > pr->res->dev[d].peak ? in->dev[d].budget : pr->res->dev[d].peak, &un, &div);
        char title[160], pk[32], bu[32];
        snprintf(title, sizeof title, "%s: peak %s of budget %s", in->dev[d].name,
                 xe_io_bytes(pr->res->dev[d].peak, pk, sizeof pk), xe_io_bytes(in->dev[d].budget, bu, sizeof bu));
        tb_printf(b, "set title ");
        tb_quote(b, title);
        tb_printf(b, "\nset ylabel '%s'\nset yrange [0:%.9g]\n", un, 1.08 * (double)in->dev[d].budget / div + 1e-9);
        tb_printf(b,
                  "plot 'mem_%d.dat' using 1:($3/%.17g) with fillsteps fs solid 0.35 lc rgb '#1f77b4' title 'resident', \\\n"
                  "     '' using 1:($3/%.17g) with steps lc rgb '#1f77b4' notitle, \\\n"
                  "     '' using 1:($4/%.17g) with lines dt 2 lw 2 lc rgb '#d62728' title 'budget'\n",
                  d, div, div, div);
    }
    tb_printf(b, "unset multiplot\n");
}

static void gp_timeline(tbuf *b, const plot_run *pr, int lanes, int lane_of_pair[XE_MAX_DEV][XE_MAX_DEV])
{
    const xe_instance *in = pr->in;
    double total = pr->res->total_time;
    const char *tu = "s";
    double tf = 1.0;
    if (total > 0 && total < 1e-3) {
        tu = "us";
        tf = 1e6;
    } else if (total > 0 && total < 1.0) {
        tu = "ms";
        tf = 1e3;
    }
    gp_head(b, pr, "timeline", 1400, 2 * (60 * lanes + 140));
    tb_printf(b, "set multiplot layout 2,1\nset xlabel 'time (%s)'\nset yrange [%d.6:-0.6]\n", tu, lanes - 1);
    tb_printf(b, "set ytics (");
    for (int d = 0; d < in->ndev; d++) {
        tb_printf(b, "%s", d ? ", " : "");
        tb_quote(b, in->dev[d].name);
        tb_printf(b, " %d", d);
    }
    for (int d = 0; d < in->ndev; d++)
        for (int e = 0; e < in->ndev; e++)
            if (lane_of_pair[d][e] >= 0) {
                char nm[80];
                snprintf(nm, sizeof nm, "%s->%s", in->dev[d].name, in->dev[e].name);
                tb_printf(b, ", ");
                tb_quote(b, nm);
                tb_printf(b, " %d", lane_of_pair[d][e]);
            }
    tb_printf(b, ")\nset grid xtics\nset key outside right top\nset style fill solid 0.9 border lc rgb '#ffffff'\n");
    tb_printf(b, "set xrange [0:%.9g]\n", total * tf * 1.001 + 1e-12);
    static const char *panel[2] = {"serial: one event after another, %.6g %s",
                                   "overlapped: one stream per device and per link, makespan %.6g %s"};
    for (int k = 0; k < 2; k++) {
        char title[160];
        snprintf(title, sizeof title, panel[k], (k ? pr->res->makespan : total) * tf, tu);
        tb_printf(b, "set title ");
        tb_quote(b, title);
        int c0 = k ? 5 : 3; /* start column; the end is the next one */
        tb_printf(b,
                  "\nplot 'timeline.dat' using (($%d+$%d)/2*%g):1:(($%d-$%d)/2*%g):(0.35):7 with boxxyerror lc rgb variable notitle, \\\n"
                  "     NaN with boxes lc rgb '#%06x' title 'compute', \\\n"
                  "     NaN with boxes lc rgb '#%06x' title 'recompute', \\\n"
                  "     NaN with boxes lc rgb '#%06x' title 'copy'\n",
                  c0, c0 + 1, tf, c0 + 1, c0, tf, RGB_COMPUTE, RGB_RECOMPUTE, RGB_COPY);
    }
    tb_printf(b, "unset multiplot\n");
}

/* ---- running gnuplot ------------------------------------------------------------------- */

/* Draws NAME.FMT from NAME.gp into NAME.FMT.tmp.PID, renamed by the caller. */
static int draw(plot_run *pr, const char *prog, const char *name, char *tmp, size_t tmpcap)
{
    char script[64];
    snprintf(script, sizeof script, "%s.gp", name);
    snprintf(tmp, tmpcap, "%s.%s.tmp.%ld", name, pr->fmt, (long)getpid());
    return xe_cli_gnuplot_run(prog, pr->dir, script, tmp, NULL);
}

/* ---- the command ----------------------------------------------------------------------- */

/* *made = 1 when the directory was made here (removed again if the plot fails). */
static int make_dir(const char *dir, int *made)
{
    struct stat st;
    *made = 0;
    if (stat(dir, &st) == 0) {
        if (S_ISDIR(st.st_mode)) return XE_EXIT_OK;
        fprintf(stderr, "xengine: error: %s: --out-dir exists and is not a directory\n", dir);
        return XE_EXIT_USAGE;
    }
    if (mkdir(dir, 0777) != 0) {
        fprintf(stderr, "xengine: error: %s: cannot make the --out-dir: %s\n", dir, strerror(errno));
        return XE_EXIT_USAGE;
    }
    *made = 1;
    return XE_EXIT_OK;
}

static int plot_all(plot_run *pr, const char *prog)
{
    static const char *const names[3] = {"rs", "memory", "timeline"};
    const xe_instance *in = pr->in;
    int len = pr->s->len;
    int *stage_of = malloc(sizeof *stage_of * (size_t)(len > 0 ? len : 1));
    int lane_of_pair[XE_MAX_DEV][XE_MAX_DEV];
    char tmp[3][160] = {{0}};
    int code = XE_EXIT_OK;
    if (!stage_of) {
        fprintf(stderr, "xengine: error: plot: out of memory for %d events\n", len);
        code = XE_EXIT_INTERNAL;
        goto done;
    }
    int nst = split_stages(in, pr->s, stage_of);
    if (nst < 0) {
        fprintf(stderr, "xengine: error: plot: out of memory\n");
        code = XE_EXIT_INTERNAL;
        goto done;
    }
    int lanes = copy_lanes(pr, lane_of_pair);
    code = rs_data(pr, stage_of, nst);
    if (!code) code = mem_data(pr);
    if (!code) code = timeline_data(pr, lane_of_pair);
    for (int k = 0; k < 3 && !code; k++) {
        tbuf b = {0};
        if (k == 0) gp_rs(&b, pr, nst);
        else if (k == 1) gp_memory(&b, pr);
        else gp_timeline(&b, pr, lanes, lane_of_pair);
        char name[32];
        snprintf(name, sizeof name, "%s.gp", names[k]);
        code = put_file(pr, name, &b);
        tb_free(&b);
    }
    for (int k = 0; k < 3 && !code; k++) code = draw(pr, prog, names[k], tmp[k], sizeof tmp[k]);
    /* every image made: rename them into place together; check each is whole */
    for (int k = 0; k < 3 && !code; k++) {
        char *from = join(pr->dir, tmp[k]);
        char final[64];
        snprintf(final, sizeof final, "%s.%s", names[k], pr->fmt);
        char *to = join(pr->dir, final);
        struct stat st;
        int whole = from ? xe_cli_image_check(from) : -1; /* 1 whole, 0 cut short, -1 none */
        if (!from || !to) {
            fprintf(stderr, "xengine: error: plot: out of memory\n");
            code = XE_EXIT_INTERNAL;
        } else if (is_input(pr, to)) {
            code = XE_EXIT_USAGE;
        } else if (stat(from, &st) != 0 || whole < 0) {
            fprintf(stderr, "xengine: error: %s: gnuplot wrote no image\n", to);
            code = XE_EXIT_INTERNAL;
        } else if (whole == 0) {
            fprintf(stderr, "xengine: error: %s: gnuplot wrote an incomplete image (%lld bytes; disk full?)\n", to,
                    (long long)st.st_size);
            code = XE_EXIT_INTERNAL;
        } else if (pr->nwritten >= PLOT_MAX_FILES) {
            fprintf(stderr, "xengine: error: %s: out of memory\n", to);
            code = XE_EXIT_INTERNAL;
        } else {
            char *prev = move_aside(to);
            if (rename(from, to) != 0) {
                fprintf(stderr, "xengine: error: %s: cannot rename the image into place: %s\n", to, strerror(errno));
                put_back(prev, to);
                code = XE_EXIT_INTERNAL;
                free(from);
                free(to);
                continue;
            }
            pr->backup[pr->nwritten] = prev;
            pr->written[pr->nwritten++] = to;
            to = NULL;
            tmp[k][0] = '\0';
        }
        free(from);
        free(to);
    }
done:
    for (int k = 0; k < 3; k++) /* leftovers of a failed run */
        if (tmp[k][0]) {
            char *p = join(pr->dir, tmp[k]);
            if (p) unlink(p);
            free(p);
        }
    free(stage_of);
    return code;
}

int xe_cli_plot(int argc, char **argv)
{
    xe_cli_inst_opts io = {0};
    const char *path = NULL, *dir = NULL, *fmt = "png";
    for (int i = 1; i < argc; i++) {
        int c = xe_cli_inst_arg(argc, argv, &i, &io);
        if (c < 0) return XE_EXIT_USAGE;
        if (c) continue;
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return XE_EXIT_OK;
        } else if (!strcmp(a, "--out-dir") || !strcmp(a, "--format")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "xengine: error: %s needs a value\n", a);
                return XE_EXIT_USAGE;
            }
            if (!strcmp(a, "--out-dir")) dir = argv[++i];
            else fmt = argv[++i];
        } else if (a[0] != '-' && !io.graph) {
            io.graph = a;
        } else if (a[0] != '-' && !path) {
            path = a;
        } else {
            return xe_cli_bad_arg(a);
        }
    }
    if (!io.graph || !path || !dir) {
        fprintf(stderr, "xengine: error: need GRAPH, SCHEDULE.json and --out-dir DIR (try --help)\n");
        return XE_EXIT_USAGE;
    }
    if (strcmp(fmt, "png") != 0 && strcmp(fmt, "svg") != 0) {
        fprintf(stderr, "xengine: error: --format must be png or svg, not '%s'\n", fmt);
        return XE_EXIT_USAGE;
    }
    if (!*dir) {
        fprintf(stderr, "xengine: error: --out-dir must not be empty\n");
        return XE_EXIT_USAGE;
    }
    const char *prog = xe_cli_gnuplot_require(NULL);
    if (!prog) return XE_EXIT_INTERNAL;

    xe_instance *in = NULL;
    char bbuf[32];
    int64_t stated = 0;
    int taken = xe_cli_batch_from_schedule(&io, path, bbuf, sizeof bbuf, &stated); /* as simulate */
    int code = taken < 0 ? XE_EXIT_INPUT : xe_cli_load_instance(&io, &in);
    if (code) return code;
    xe_schedule s;
    xe_schedule_init(&s);
    xe_err err = {{0}};
    xe_sim_result r;
    xe_sim_step *trace = NULL;
    xe_schedule_claims c;
    int rc = xe_io_read_schedule_claims(path, in, &s, &c, &err);
    if (rc != XE_OK) {
        fprintf(stderr, "xengine: error: %s\n", err.msg);
        code = xe_cli_exit_code(rc);
    } else if (!(trace = malloc(sizeof *trace * (size_t)(s.len > 0 ? s.len : 1)))) {
        fprintf(stderr, "xengine: error: %s: out of memory for %d events\n", path, s.len);
        code = XE_EXIT_INTERNAL;
    } else if ((rc = xe_sim_run_trace(in, &s, &r, trace, &err)) != XE_OK) {
        xe_cli_invalid_schedule(path, in, &c, err.msg);
        code = XE_EXIT_INPUT;
    } else if (s.len == 0) {
        fprintf(stderr, "xengine: error: %s: the schedule has no events\n", path);
        code = XE_EXIT_INPUT;
    }
    int made = 0;
    if (!code) code = make_dir(dir, &made);
    if (!code) {
        plot_run pr = {.in = in, .s = &s, .res = &r, .trace = trace, .dir = dir, .fmt = fmt,
                       .input = {io.graph, path, io.devices, io.costs}};
        code = plot_all(&pr, prog);
        if (code) {
            remove_written(&pr);
            if (made) rmdir(dir); /* empty again: a failed plot leaves nothing behind */
        } else {
            xe_cli_claims_notes(&io, in, &c, &r, taken, stated);
            printf("xengine plot: %s: %d events, %d device%s; wrote %d files:\n", path, s.len, in->ndev, in->ndev == 1 ? "" : "s", pr.nwritten);
            for (int i = 0; i < pr.nwritten; i++) printf("  %s\n", pr.written[i]);
            free_written(&pr);
        }
    }
    free(trace);
    xe_schedule_clear(&s);
    xe_instance_free(in);
    return code;
}
