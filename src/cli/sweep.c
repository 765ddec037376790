/* xengine sweep — cost against the GPU budget for the planner and the baselines, and the
 * largest batch each one fits (docs/sweep.md). */
#include <fcntl.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "xengine/cost.h"
#include "xengine/io.h"
#include "xengine/onnx.h"
#include "xengine/plan.h"
#include "xengine/sweep.h"

#define MAX_POINTS 1000

static void help(FILE *f)
{
    fprintf(f,
            "usage: xengine sweep MODEL|GRAPH [options]\n"
            "       xengine sweep MODEL.onnx --max-batch [--budget B] [options]\n"
            "\n"
            "For each budget of the GPU, a fraction of the no-recomputation peak, plans one\n"
            "training step with five methods and replays every schedule in the simulator:\n"
            "  planner         heuristic portfolio and the baselines as start, then LNS and\n"
            "                  the MILP within --time-limit (with its lower bound and gap)\n"
            "  gpu-only        everything on the GPU        cpu-only   everything on the CPU\n"
            "  checkpoint-all  no recomputation, on the GPU chen-sqrt  Chen's sqrt(n), on the GPU\n"
            "Costs are seconds per step (serial compute + copies); 'infeasible' where a method\n"
            "finds no schedule, 'not found' where the planner found none in its time but none\n"
            "is proven impossible, 'n/a' where the devices lack the method's device.\n"
            "With --max-batch: the largest batch each method fits into fixed budgets (binary\n"
            "search on the batch; the ONNX model is re-read and re-costed at every batch).\n"
            "\n"
            "options:\n"
            "  --devices D      preset gpu | cpu | gpu+cpu (default gpu+cpu), or a devices file\n"
            "  --batch N        ONNX model: batch size (default: the file's)\n"
            "  --costs FILE     per-node, per-device costs (not with --max-batch)\n"
            "  --from P --to P --step P   GPU budgets in %% of the peak (default 100%% to\n"
            "                   40%% in steps of 10%%; at most 1000 budgets)\n"
            "  --time-limit S   planner seconds per point (default 10; 0: start schedules only)\n"
            "  --threads N      CBC threads (default 1)\n"
            "  --csv F          also write the table as CSV (atomically: temporary file, rename)\n"
            "  --plot F         cost against budget through gnuplot, F ending in .png or .svg\n"
            "                   (gnuplot is XE_GNUPLOT when set, else 'gnuplot' from PATH)\n"
            "  --json           print one JSON object on one line instead of the table\n"
            "  --max-batch      largest batch per method instead of the budget sweep\n"
            "  --budget B       with --max-batch: GPU budget, bytes (\"12GiB\") or a %% of the\n"
            "                   peak at --batch (default 100%%); every budget is fixed in bytes\n"
            "                   at --batch and held for all batches\n"
            "  --batch-limit N  with --max-batch: largest batch tried (default 4096)\n"
            "  -v, --verbose    progress lines on stderr even when it is not a terminal (on\n"
            "                   one a single line is rewritten); -q, --quiet: none (wins over -v)\n"
            "\n"
            "examples:\n"
            "  xengine sweep tests/data/onnx/resnet18.onnx --batch 32 --time-limit 5 \\\n"
            "      --csv r18.csv --plot r18.png\n"
            "  xengine sweep tests/data/onnx/resnet18.onnx --batch 32 --max-batch --budget 60%%\n"
            "\n"
            "exit codes: 0 ok, 1 usage, 2 bad input, 5 internal error (gnuplot missing or\n"
            "failing, a schedule the simulator rejects, the CSV could not be written)\n");
}

/* "40%" or "40" (percent), > 0 and <= 10000; -1 when not. */
static double parse_pct(const char *s)
{
    char buf[64];
    size_t len = strlen(s);
    if (len == 0 || len >= sizeof buf) return -1;
    memcpy(buf, s, len + 1);
    if (buf[len - 1] == '%') buf[len - 1] = '\0';
    double x = 0;
    if (!xe_cli_decimal(buf, &x) || !(x > 0) || x > 10000) return -1;
    return x;
}

static const char *num(double x, char *buf, size_t cap)
{
    if (isfinite(x)) snprintf(buf, cap, "%.17g", x);
    else snprintf(buf, cap, "null");
    return buf;
}

/* A cost cell for the table and CSV: the seconds, or the reason there are none. */
static const char *cell_text(const xe_sweep_cell *c, int planner, char *buf, size_t cap)
{
    if (c->status == XE_SWEEP_FOUND) snprintf(buf, cap, "%.6f", c->cost);
    else if (planner && c->status == XE_SWEEP_NONE) snprintf(buf, cap, "not found");
    else snprintf(buf, cap, "%s", c->status == XE_SWEEP_NA ? "n/a" : "infeasible");
    return buf;
}

static const char *cell_status(const xe_sweep_cell *c, int planner)
{
    if (c->status == XE_SWEEP_FOUND) return "ok";
    if (c->status == XE_SWEEP_NA) return "n/a";
    if (planner && c->status == XE_SWEEP_NONE) return "not found";
    return planner && c->status == XE_SWEEP_PROVEN ? "infeasible (proven)" : "infeasible";
}

/* ---- output files ---------------------------------------------------------------------- */

/* A growing text buffer (open_memstream). */
typedef struct text {
    FILE *f;
    char *buf;
    size_t len;
} text;

static int text_open(text *t)
{
    t->buf = NULL;
    t->len = 0;
    t->f = open_memstream(&t->buf, &t->len);
    return t->f ? 0 : -1;
}

/* Closes t; 0 when every write succeeded. */
static int text_close(text *t)
{
    int bad = ferror(t->f);
    if (fclose(t->f)) bad = 1;
    t->f = NULL;
    return bad;
}

static int write_file(const char *path, text *t)
{
    xe_err err = {{0}};
    if (text_close(t)) {
        fprintf(stderr, "xengine: error: %s: out of memory while formatting\n", path);
        return XE_EXIT_INTERNAL;
    }
    int rc = xe_io_write_atomic(path, t->buf, t->len, &err);
    if (rc) fprintf(stderr, "xengine: error: %s\n", err.msg);
    return rc ? xe_cli_write_exit_code(rc) : XE_EXIT_OK;
}

/* gnuplot single-quoted string body: ' doubled, control characters dropped. */
static void gp_quote(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'') fputs("''", f);
        else if ((unsigned char)*s >= 32) fputc(*s, f);
    }
    fputc('\'', f);
}

typedef struct point {
    double pct;
    int64_t budget;
    xe_sweep_cell c[XE_SWEEP_NMETHODS];
} point;

static const char *const csv_name[XE_SWEEP_NMETHODS] = {"planner_s", "gpu_only_s", "cpu_only_s",
                                                        "checkpoint_all_s", "chen_sqrt_s"};

/* The plot: the script (with the data inline) next to the image, run, then removed;
 * gnuplot writes a temporary image renamed over `out` when it succeeds. */
static int write_plot(const char *out, const char *model, int64_t peak, const point *p, int np)
{
    size_t n = strlen(out);
    int svg = n >= 4 && !strcasecmp(out + n - 4, ".svg");
    char script[4096], tmpimg[4096], b[32];
    snprintf(script, sizeof script, "%s.tmp.gp.XXXXXX", out);
    int fd = mkstemp(script);
    if (fd < 0) {
        fprintf(stderr, "xengine: error: %s: cannot create a temporary file beside it\n", out);
        return XE_EXIT_USAGE;
    }
    snprintf(tmpimg, sizeof tmpimg, "%s.tmp.%ld", out, (long)getpid());
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(script);
        fprintf(stderr, "xengine: error: %s: cannot write its gnuplot script\n", out);
        return XE_EXIT_INTERNAL;
    }
    fprintf(f, "# xengine sweep: cost against GPU budget\n");
    if (svg) fprintf(f, "set terminal svg size 900,560 noenhanced font 'sans,11' background '#ffffff'\n");
    else fprintf(f, "set terminal pngcairo size 900,560 noenhanced font 'sans,11'\n");
    fprintf(f, "set output ");
    gp_quote(f, tmpimg);
    fprintf(f, "\nset title ");
    char title[1024];
    const char *base = strrchr(model, '/');
    snprintf(title, sizeof title, "%s: one training step against the GPU budget", base ? base + 1 : model);
    gp_quote(f, title);
    snprintf(title, sizeof title, "GPU budget, %% of the no-recomputation peak (100%% = %s)",
             xe_io_bytes(peak, b, sizeof b));
    fprintf(f, "\nset xlabel ");
    gp_quote(f, title);
    fprintf(f, "\nset ylabel 'seconds per step, log scale (serial compute + copies, simulated)'\n"
               "set logscale y\n"
               "set key outside right top\nset grid\nset xrange [*:*] reverse\n"
               "set datafile missing 'NaN'\n");
    int any = 0, has[XE_SWEEP_NMETHODS] = {0};
    for (int i = 0; i < np; i++)
        for (int m = 0; m < XE_SWEEP_NMETHODS; m++)
            if (p[i].c[m].status == XE_SWEEP_FOUND) has[m] = any = 1;
    if (!any) /* nothing to draw: fixed ranges, so that gnuplot draws the axes and the key */
        fprintf(f, "unset logscale y\nset yrange [0:1]\nset xrange [%.10g:%.10g]\nset label 'no method found a schedule' at "
                   "graph 0.5, 0.5 center\n", fmax(p[0].pct, p[np - 1].pct) + 1, fmin(p[0].pct, p[np - 1].pct) - 1);
    fprintf(f, "$sweep << EOD\n");
    for (int i = 0; i < np; i++) {
        fprintf(f, "%.10g", p[i].pct);
        for (int m = 0; m < XE_SWEEP_NMETHODS; m++)
            if (p[i].c[m].status == XE_SWEEP_FOUND) fprintf(f, " %.10g", p[i].c[m].cost);
            else fprintf(f, " NaN");
        fprintf(f, "\n");
    }
    /* a method without any schedule gets a key entry only: gnuplot refuses a plot
     * element whose points are all undefined */
    fprintf(f, "EOD\nplot");
    static const char *style[XE_SWEEP_NMETHODS] = {
        "lc rgb '#1f4e9c' lw 2.5 pt 7 ps 1.2", "lc rgb '#2ca02c' lw 1.5 pt 5 dt 2",
        "lc rgb '#17a0b8' lw 1.5 pt 9 dt 3", "lc rgb '#ff7f0e' lw 1.5 pt 11 dt 4 ps 1.4",
        "lc rgb '#d62728' lw 1.5 pt 13 dt 5 ps 1.4"};
    for (int m = 0; m < XE_SWEEP_NMETHODS; m++) {
        fprintf(f, "%s", m ? ", \\\n    " : " ");
        if (has[m])
            fprintf(f, "$sweep using 1:%d with linespoints %s title '%s'", m + 2, style[m],
                    xe_sweep_method_name(m));
        else
            fprintf(f, "keyentry with linespoints %s title '%s (%s)'", style[m], xe_sweep_method_name(m),
                    p[0].c[m].status == XE_SWEEP_NA ? "n/a" : "no schedule");
    }
    if (!any) fprintf(f, ", \\\n    -1 notitle"); /* below the y range: only the axes and the key */
    fprintf(f, "\n");
    int bad = ferror(f);
    if (fclose(f)) bad = 1;
    int code = XE_EXIT_OK;
    if (bad) {
        fprintf(stderr, "xengine: error: %s: cannot write its gnuplot script\n", out);
        code = XE_EXIT_INTERNAL;
    }
    if (!code) code = xe_cli_gnuplot_run(xe_cli_gnuplot_prog(), NULL, script, NULL, out); /* its script is temporary */
    int whole = code ? 1 : xe_cli_image_check(tmpimg);
    if (whole != 1) { /* gnuplot exits 0 on a full disk, the image cut short */
        fprintf(stderr, "xengine: error: %s: gnuplot wrote %s\n", out, whole < 0 ? "no image" : "an incomplete image (disk full?)");
        code = XE_EXIT_INTERNAL;
    }
    if (!code && rename(tmpimg, out) != 0) {
        fprintf(stderr, "xengine: error: %s: cannot rename the plot into place\n", out);
        code = XE_EXIT_INTERNAL;
    }
    unlink(script);
    if (code) unlink(tmpimg);
    return code;
}

/* ---- the budget sweep ------------------------------------------------------------------ */

typedef struct opts {
    xe_cli_inst_opts io;
    double from, to, step, time_limit;
    int threads, json, progress, max_batch;
    int json_done; /* the JSON object was printed (else a failure prints the short one) */
    long long batch_limit;
    const char *csv, *plot;
} opts;

static void progress_line(const opts *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress_line(const opts *o, const char *fmt, ...)
{
    if (!o->progress) return;
    va_list ap;
    va_start(ap, fmt);
    if (o->progress == 2) fputs("\r", stderr); /* a terminal: one line, rewritten */
    vfprintf(stderr, fmt, ap);
    fputs(o->progress == 2 ? "\033[K" : "\n", stderr);
    va_end(ap);
    fflush(stderr);
}

/* Clears the terminal's progress line before the results. */
static void progress_done(const opts *o)
{
    if (o->progress == 2) fputs("\r\033[K", stderr);
}
/* Budgets from --from to --to by --step, counted up to MAX_POINTS + 1. */
static int sweep_points(const opts *o)
{
    int np = 0;
    double dir = o->to <= o->from ? -1 : 1;
    while (np <= MAX_POINTS && dir * (o->from + dir * o->step * np - o->to) <= 1e-9 * fmax(o->from, o->to)) np++;
    return np;
}

/* The swept device's budget at a fraction of the no-recomputation peak, bytes, at least
 * 1 B as xe_instance_from_recipe gives a 0-B peak's fraction (xe_plan refuses a budget of
 * 0: a graph of 0-B tensors at 50%, or 0.01% of a small peak on gpu+cpu, where the CPU
 * then computes everything). */
static int64_t point_budget(double frac, int64_t peak)
{
    int64_t b = (int64_t)xe_budget_of_frac(frac, peak);
    return b < 1 ? 1 : b;
}

static int sweep_budgets(opts *o)
{
    xe_instance *in = NULL;
    int code = xe_cli_load_instance(&o->io, &in);
    if (code) return code;
    xe_err merr = {{0}};
    if (xe_plan_memory_check(in, 0, &merr)) { /* as solve: before the table, not at its first row */
        fprintf(stderr, "xengine: error: %s: %s\n", o->io.graph, merr.msg);
        xe_instance_free(in);
        return XE_EXIT_INTERNAL;
    }
    xe_sweep_opts so;
    xe_sweep_opts_default(in, &so);
    so.time_limit = o->time_limit;
    so.threads = o->threads;
    int64_t peak = xe_instance_norecompute_peak(in->g);
    double dir = o->to <= o->from ? -1 : 1;
    int np = sweep_points(o); /* <= MAX_POINTS: xe_cli_sweep refuses more */
    point *p = calloc((size_t)np, sizeof *p);
    if (!p) {
        xe_instance_free(in);
        fprintf(stderr, "xengine: error: sweep: out of memory\n");
        return XE_EXIT_INTERNAL;
    }
    char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32];
    if (!o->json) {
        printf("xengine sweep: %s: %d nodes, %d device%s", o->io.graph, in->g->n, in->ndev, in->ndev > 1 ? "s" : "");
        for (int d = 0; d < in->ndev; d++)
            printf("%s%s %s", d ? ", " : " (", in->dev[d].name,
                   d == so.swept ? "swept" : xe_io_bytes(in->dev[d].budget, b1, sizeof b1));
        printf(")\n100%% = no-recomputation peak = %s; planner: %g s per point; costs: seconds per step\n",
               xe_io_bytes(peak, b1, sizeof b1), o->time_limit);
        printf("%7s %11s %12s %12s %7s %14s %12s %12s %15s %12s\n", "budget", "bytes", "planner", "bound", "gap",
               "planner_from", "gpu-only", "cpu-only", "checkpoint-all", "chen-sqrt");
        fflush(stdout);
    }
    /* smallest budget first: the planner's schedule at one budget also fits every larger
     * one, so it seeds the next point and the planner's cost never rises with the budget */
    xe_err err = {{0}};
    xe_stages seed = {0}, keep = {0};
    xe_schedule seed_ev, keep_ev; /* the same for a kept event list (outside the stages) */
    xe_schedule_init(&seed_ev);
    xe_schedule_init(&keep_ev);
    double seed_ev_cost = INFINITY, keep_ev_cost = INFINITY;
    for (int i = 0; i < np; i++) {
        p[i].pct = o->from + dir * o->step * i;
        p[i].budget = point_budget(p[i].pct / 100.0, peak);
    }
    for (int k = 0; k < np && !code; k++) {
        int i = dir < 0 ? np - 1 - k : k;
        in->dev[so.swept].budget = p[i].budget;
        so.seed = seed.R ? &seed : NULL;
        so.keep = &keep;
        so.seed_events = seed_ev.len ? &seed_ev : NULL;
        so.seed_events_cost = seed_ev_cost;
        so.keep_events = &keep_ev;
        so.keep_events_cost = &keep_ev_cost;
        progress_line(o, "[sweep] %d/%d: %g%% (%s) ...", k + 1, np, p[i].pct, xe_io_bytes(p[i].budget, b1, sizeof b1));
        int rc = xe_sweep_point(in, &so, p[i].c, &err);
        if (rc) {
            fprintf(stderr, "xengine: error: %s: at %g%%: %s\n", o->io.graph, p[i].pct, err.msg);
            code = xe_cli_exit_code(rc);
            break;
        }
        if (p[i].c[XE_SWEEP_PLANNER].status == XE_SWEEP_FOUND) { /* exactly one of keep, keep_ev is set */
            xe_stages t = seed;
            seed = keep;
            keep = t;
            xe_schedule te = seed_ev;
            seed_ev = keep_ev;
            keep_ev = te;
            seed_ev_cost = keep_ev_cost;
        }
    }
    xe_stages_clear(&seed);
    xe_stages_clear(&keep);
    xe_schedule_clear(&seed_ev);
    xe_schedule_clear(&keep_ev);
    progress_done(o);
    /* a lower bound at a budget bounds every smaller budget too; the stage bounds do
     * not bound an event list (the exact search's, restaged or not, carried, or another
     * order's: outside_stages), which keeps its own */
    double rb = -INFINITY;
    for (int k = 0; k < np && !code; k++) {
        xe_sweep_cell *pl = &p[dir < 0 ? k : np - 1 - k].c[XE_SWEEP_PLANNER];
        if (pl->outside_stages) continue;
        if (isfinite(pl->bound)) rb = fmax(rb, pl->bound);
        if (isfinite(rb) && pl->status != XE_SWEEP_PROVEN) pl->bound = fmin(rb, pl->cost);
    }
    for (int i = 0; i < np && !code && !o->json; i++) {
        const xe_sweep_cell *pl = &p[i].c[XE_SWEEP_PLANNER];
        double gap = pl->status == XE_SWEEP_FOUND && pl->cost > 0 ? (pl->cost - pl->bound) / pl->cost : NAN;
        char g[16];
        if (isfinite(gap)) snprintf(g, sizeof g, "%.2f%%", 100 * gap);
        else snprintf(g, sizeof g, "-");
        char bd[32];
        if (isfinite(pl->bound)) snprintf(bd, sizeof bd, "%.6f", pl->bound);
        else snprintf(bd, sizeof bd, "-");
        printf("%6g%% %11s %12s %12s %7s %14s %12s %12s %15s %12s\n", p[i].pct,
               xe_io_bytes(p[i].budget, b1, sizeof b1), cell_text(pl, 1, b2, sizeof b2), bd, g,
               *pl->which ? pl->which : "-", cell_text(&p[i].c[1], 0, b3, sizeof b3),
               cell_text(&p[i].c[2], 0, b4, sizeof b4), cell_text(&p[i].c[3], 0, b5, sizeof b5),
               cell_text(&p[i].c[4], 0, b6, sizeof b6));
    }
    if (!code && !o->json)
        printf("every schedule above was replayed by the simulator; planner_from: the method whose schedule the "
               "planner kept\n");
    if (!code && o->csv) {
        text t;
        if (text_open(&t)) {
            fprintf(stderr, "xengine: error: %s: out of memory\n", o->csv);
            code = XE_EXIT_INTERNAL;
        } else {
            fprintf(t.f, "budget_pct,budget_bytes");
            for (int m = 0; m < XE_SWEEP_NMETHODS; m++) {
                fprintf(t.f, ",%s", csv_name[m]);
                if (m == 0) fprintf(t.f, ",planner_bound_s,planner_gap,planner_from");
            }
            fprintf(t.f, "\n");
            for (int i = 0; i < np; i++) {
                const xe_sweep_cell *pl = &p[i].c[0];
                fprintf(t.f, "%g,%lld", p[i].pct, (long long)p[i].budget);
                for (int m = 0; m < XE_SWEEP_NMETHODS; m++) {
                    const xe_sweep_cell *c = &p[i].c[m];
                    if (c->status == XE_SWEEP_FOUND) fprintf(t.f, ",%.9g", c->cost);
                    else fprintf(t.f, ",%s", cell_status(c, m == 0));
                    if (m == 0) {
                        if (isfinite(pl->bound)) fprintf(t.f, ",%.9g", pl->bound);
                        else fprintf(t.f, ",");
                        if (pl->status == XE_SWEEP_FOUND && pl->cost > 0) {
                            /* a comma in the name ("greedy, low-peak order") would add a
                             * column: "; " in the CSV */
                            fprintf(t.f, ",%.6g,", (pl->cost - pl->bound) / pl->cost);
                            for (const char *q = pl->which; *q; q++) fputc(*q == ',' ? ';' : *q, t.f);
                        } else {
                            fprintf(t.f, ",,");
                        }
                    }
                }
                fprintf(t.f, "\n");
            }
            code = write_file(o->csv, &t);
            free(t.buf);
            if (!code && !o->json) printf("wrote %s\n", o->csv);
        }
    }
    if (!code && o->plot) {
        code = write_plot(o->plot, o->io.graph, peak, p, np);
        if (!code && !o->json) printf("wrote %s\n", o->plot);
    }
    if (o->json) {
        o->json_done = 1;
        printf("{\"command\": \"sweep\", \"exit_code\": %d, \"status\": \"%s\", \"peak_bytes\": %lld, "
               "\"time_limit_s\": %s, \"points\": [",
               code, xe_cli_exit_status(code), (long long)peak, num(o->time_limit, b1, sizeof b1));
        for (int i = 0; i < np && !code; i++) {
            printf("%s{\"budget_pct\": %s, \"budget_bytes\": %lld", i ? ", " : "", num(p[i].pct, b1, sizeof b1),
                   (long long)p[i].budget);
            for (int m = 0; m < XE_SWEEP_NMETHODS; m++) {
                const xe_sweep_cell *c = &p[i].c[m];
                printf(", \"%s\": {\"status\": \"%s\", \"cost_s\": %s", xe_sweep_method_name(m), cell_status(c, m == 0),
                       num(c->cost, b1, sizeof b1));
                if (m == 0)
                    printf(", \"bound_s\": %s, \"from\": \"%s\", \"time_s\": %.3f", num(c->bound, b2, sizeof b2),
                           c->which, c->time);
                printf(", \"peak_bytes\": %lld, \"recomputes\": %d, \"copies\": %d}", (long long)c->peak,
                       c->recomputes, c->copies);
            }
            printf("}");
        }
        printf("]}\n");
    }
    free(p);
    xe_instance_free(in);
    return code;
}

/* ---- the largest batch ----------------------------------------------------------------- */

typedef struct build_ctx {
    const char *path;
    xe_recipe r; /* budgets fixed in bytes */
} build_ctx;

static int build_batch(void *vctx, int64_t b, xe_instance **out, xe_err *err)
{
    build_ctx *c = vctx;
    xe_net *net = NULL;
    xe_graph *g = NULL;
    xe_train_map map = {0};
    *out = NULL;
    int rc = xe_onnx_read(c->path, b, &net, err);
    if (rc == XE_OK) rc = xe_net_training_graph(net, &g, &map, err);
    if (rc == XE_OK && (rc = xe_cost_instance(net, g, &map, &c->r, out, err)) == XE_OK) g = NULL;
    if (rc == XE_OK && (rc = xe_instance_validate(*out, err))) {
        xe_instance_free(*out);
        *out = NULL;
    }
    if (rc) { /* "batch B: why", the model's path once (its reader's messages start with it) */
        size_t k = strlen(c->path);
        const char *why = !strncmp(err->msg, c->path, k) && !strncmp(err->msg + k, ": ", 2) ? err->msg + k + 2 : err->msg;
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", why);
        xe_err_set(err, rc, "batch %lld: %s", (long long)b, msg);
    }
    xe_graph_free(g);
    xe_train_map_clear(&map);
    xe_net_free(net);
    return rc;
}

/* A method's status in --max-batch's CSV and JSON: "n/a" (no device of its kind),
 * "infeasible" (no batch fits), "limit reached" where it fits --batch-limit itself
 * (larger batches not tried; the table's '+'; "ok" before 2026-12-05, which read as a
 * proven largest batch), else "ok". mb: its largest batch, 0 for none. */
static const char *max_batch_status(const xe_sweep_cell *c, int64_t mb, long long limit)
{
    return c->status == XE_SWEEP_NA ? "n/a" : mb <= 0 ? "infeasible" : mb == limit ? "limit reached" : "ok";
}

static int sweep_max_batch(opts *o)
{
    if (!xe_cli_is_onnx(o->io.graph)) {
        fprintf(stderr, "xengine: error: %s: --max-batch needs an ONNX model (a graph file has no batch "
                        "dimension to grow)\n", o->io.graph);
        return XE_EXIT_USAGE;
    }
    if (o->io.costs) {
        fprintf(stderr, "xengine: error: --costs: measured costs hold for one batch; --max-batch re-costs "
                        "the model at every batch with the analytic model\n");
        return XE_EXIT_USAGE;
    }
    /* the base instance: budgets resolved at --batch, then fixed in bytes */
    xe_cli_inst_opts bo = o->io;
    bo.budget = NULL;
    xe_instance *in = NULL;
    xe_net *net = NULL; /* the model as read (at --batch when given): its batch is the base */
    xe_train_map map = {0};
    build_ctx ctx = {.path = o->io.graph};
    int code = xe_cli_load_instance_net(&bo, "gpu+cpu", &net, &map, &ctx.r, &in);
    if (code) return code;
    int64_t base_batch = 0;
    for (int t = 0; t < net->nt; t++)
        if (net->t[t].role == XE_T_INPUT && net->t[t].rank > 0) base_batch = net->t[t].dim[0];
    xe_net_free(net);
    xe_train_map_clear(&map);
    xe_err err = {{0}};
    int rc = XE_OK;
    xe_sweep_opts so;
    xe_sweep_opts_default(in, &so);
    so.time_limit = o->time_limit;
    so.threads = o->threads;
    int64_t peak = xe_instance_norecompute_peak(in->g);
    if (rc == XE_OK && o->io.budget) {
        int64_t bytes = 0;
        double frac = 0;
        rc = xe_io_parse_budget("--budget", o->io.budget, &bytes, &frac, &err);
        if (rc == XE_OK) in->dev[so.swept].budget = bytes ? bytes : point_budget(frac, peak);
    }
    if (rc) {
        fprintf(stderr, "xengine: error: %s\n", err.msg);
        xe_instance_free(in);
        return xe_cli_exit_code(rc);
    }
    for (int d = 0; d < in->ndev; d++) {
        ctx.r.budget_bytes[d] = in->dev[d].budget;
        ctx.r.budget_frac[d] = 0;
    }
    /* the search starts at batch 1: a model that does not build there (a batch fixed in
     * a Reshape) is refused before the table's header (after it, naming the method and
     * the path twice but not the batch, before 2026-12-05) */
    xe_instance *one = NULL;
    if ((rc = build_batch(&ctx, 1, &one, &err))) {
        fprintf(stderr, "xengine: error: %s: %s (--max-batch grows the batch from 1)\n", o->io.graph, err.msg);
        xe_instance_free(in);
        return xe_cli_exit_code(rc);
    }
    xe_instance_free(one);
    char b1[32], b2[32], peak_col[24];
    snprintf(peak_col, sizeof peak_col, "%.18s_peak", in->dev[so.swept].name); /* the swept device's */
    if (!o->json) {
        printf("xengine sweep --max-batch: %s: budgets fixed at", o->io.graph);
        for (int d = 0; d < in->ndev; d++)
            printf("%s %s %s", d ? "," : "", in->dev[d].name, xe_io_bytes(in->dev[d].budget, b1, sizeof b1));
        printf(" (no-recomputation peak at batch %lld: %s); planner: at most %g s per probe\n", (long long)base_batch,
               xe_io_bytes(peak, b2, sizeof b2), o->time_limit);
        printf("%-15s %10s %12s %14s %12s %14s %7s\n", "method", "max_batch", "cost_s", "ms_per_sample",
               peak_col, "planner_from", "probes");
        fflush(stdout);
    }
    xe_instance_free(in);
    int64_t mb[XE_SWEEP_NMETHODS] = {0};
    xe_sweep_cell cells[XE_SWEEP_NMETHODS];
    for (int m = 0; m < XE_SWEEP_NMETHODS && !code; m++) {
        int probes = 0;
        progress_line(o, "[sweep] largest batch for %s ...", xe_sweep_method_name(m));
        rc = xe_sweep_max_batch(build_batch, &ctx, m, &so, o->batch_limit, &mb[m], &cells[m], &probes, &err);
        if (rc) {
            fprintf(stderr, "xengine: error: %s: %s: %s\n", o->io.graph, xe_sweep_method_name(m), err.msg);
            code = xe_cli_exit_code(rc);
            break;
        }
        progress_done(o);
        const xe_sweep_cell *c = &cells[m];
        if (o->json) continue;
        if (c->status == XE_SWEEP_NA) {
            printf("%-15s %10s\n", xe_sweep_method_name(m), "n/a");
        } else if (mb[m] == 0) {
            printf("%-15s %10s %12s %14s %12s %14s %7d\n", xe_sweep_method_name(m), "infeasible", "-", "-", "-", "-",
                   probes);
        } else {
            printf("%-15s %9lld%s %12.6f %14.4f %12s %14s %7d\n", xe_sweep_method_name(m), (long long)mb[m],
                   mb[m] == o->batch_limit ? "+" : " ", c->cost, 1e3 * c->cost / (double)mb[m],
                   xe_io_bytes(c->peak, b1, sizeof b1), m == 0 ? c->which : "-", probes);
        }
        fflush(stdout);
    }
    int64_t ub = 0;
    if (!code) {
        progress_line(o, "[sweep] largest batch not ruled out by the footprint bound ...");
        rc = xe_sweep_batch_upper(build_batch, &ctx, o->batch_limit, &ub, NULL, &err);
        progress_done(o);
        if (rc) {
            fprintf(stderr, "xengine: error: %s: %s\n", o->io.graph, err.msg);
            code = xe_cli_exit_code(rc);
        } else if (!o->json) {
            if (ub == o->batch_limit)
                printf("upper bound: no batch up to --batch-limit %lld is ruled out by the footprint bound\n",
                       o->batch_limit);
            else
                printf("upper bound: no schedule exists above batch %lld (from batch %lld some node with its inputs "
                       "fits no device)\n", (long long)ub, (long long)ub + 1);
        }
    }
    if (!code && !o->json)
        printf("max_batch: largest batch whose step the method fits (binary search; '+': --batch-limit reached); "
               "cost_s at that batch, replayed by the simulator; ms_per_sample = cost_s / max_batch; %s: the "
               "swept device's peak there; probes: batches planned by the search\n",
               peak_col);
    if (!code && o->csv) {
        text t;
        if (text_open(&t)) {
            code = XE_EXIT_INTERNAL;
            fprintf(stderr, "xengine: error: %s: out of memory\n", o->csv);
        } else {
            fprintf(t.f, "method,max_batch,cost_s,gpu_peak_bytes,status\n");
            for (int m = 0; m < XE_SWEEP_NMETHODS; m++) {
                const xe_sweep_cell *c = &cells[m];
                if (c->status == XE_SWEEP_FOUND && mb[m] > 0)
                    fprintf(t.f, "%s,%lld,%.9g,%lld,%s\n", xe_sweep_method_name(m), (long long)mb[m], c->cost,
                            (long long)c->peak, max_batch_status(c, mb[m], o->batch_limit));
                else
                    fprintf(t.f, "%s,0,,,%s\n", xe_sweep_method_name(m), max_batch_status(c, 0, o->batch_limit));
            }
            code = write_file(o->csv, &t);
            free(t.buf);
            if (!code && !o->json) printf("wrote %s\n", o->csv);
        }
    }
    if (o->json) {
        o->json_done = 1;
        /* upper_bound_batch: null where nothing up to the limit is ruled out (the limit was
         * printed there before 2026-12-05, which read as a proven largest batch) */
        char ubs[32];
        if (ub > 0 && ub < o->batch_limit) snprintf(ubs, sizeof ubs, "%lld", (long long)ub);
        else snprintf(ubs, sizeof ubs, "null");
        printf("{\"command\": \"sweep\", \"mode\": \"max-batch\", \"exit_code\": %d, \"status\": \"%s\", "
               "\"batch_limit\": %lld, \"upper_bound_batch\": %s, \"methods\": [",
               code, xe_cli_exit_status(code), o->batch_limit, ubs);
        for (int m = 0; m < XE_SWEEP_NMETHODS && !code; m++)
            printf("%s{\"method\": \"%s\", \"status\": \"%s\", \"max_batch\": %lld, \"cost_s\": %s, "
                   "\"gpu_peak_bytes\": %lld}",
                   m ? ", " : "", xe_sweep_method_name(m),
                   max_batch_status(&cells[m], mb[m], o->batch_limit), (long long)mb[m],
                   mb[m] ? num(cells[m].cost, b1, sizeof b1) : "null", (long long)cells[m].peak);
        printf("]}\n");
    }
    return code;
}

/* The command line into *op, and its checks; 0 to go on, -1 after --help, or an exit
 * code. */
static int sweep_parse(int argc, char **argv, opts *op)
{
    int verbose = 0, quiet = 0, limit_given = 0, range_given = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int c = xe_cli_inst_arg(argc, argv, &i, &op->io);
        if (c < 0) return XE_EXIT_USAGE;
        if (c) continue;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help(stdout);
            return -1;
        } else if (!strcmp(a, "--json")) {
            op->json = 1;
        } else if (!strcmp(a, "--max-batch")) {
            op->max_batch = 1;
        } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
            verbose = 1;
        } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--from") || !strcmp(a, "--to") || !strcmp(a, "--step") || !strcmp(a, "--time-limit") ||
                   !strcmp(a, "--threads") || !strcmp(a, "--csv") || !strcmp(a, "--plot") ||
                   !strcmp(a, "--batch-limit")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "xengine: error: %s needs a value\n", a);
                return XE_EXIT_USAGE;
            }
            const char *v = argv[++i];
            if (!strcmp(a, "--csv")) {
                op->csv = v;
            } else if (!strcmp(a, "--plot")) {
                op->plot = v;
            } else if (!strcmp(a, "--from") || !strcmp(a, "--to") || !strcmp(a, "--step")) {
                double x = parse_pct(v);
                if (x < 0) {
                    fprintf(stderr, "xengine: error: %s: '%s' is not a percentage above 0 and at most 10000 (e.g. 40%%)\n",
                            a, v);
                    return XE_EXIT_USAGE;
                }
                *(a[2] == 'f' ? &op->from : a[2] == 's' ? &op->step : &op->to) = x;
                range_given = 1;
            } else {
                double x = 0;
                int whole = !strcmp(a, "--threads") || !strcmp(a, "--batch-limit");
                if (!xe_cli_decimal(v, &x) || x < 0 || (whole && (x != floor(x) || x < 1 || x > 1e9))) {
                    fprintf(stderr, "xengine: error: %s: '%s' is not %s\n", a, v,
                            whole ? "a whole number >= 1" : "a number of seconds >= 0");
                    return XE_EXIT_USAGE;
                }
                if (!strcmp(a, "--time-limit")) op->time_limit = x;
                else if (!strcmp(a, "--threads")) op->threads = x > 64 ? 64 : (int)x;
                else op->batch_limit = (long long)x, limit_given = 1;
            }
        } else if (a[0] != '-' && !op->io.graph) {
            op->io.graph = a;
        } else {
            return xe_cli_bad_arg(a);
        }
    }
    if (!op->io.graph) {
        fprintf(stderr, "xengine: error: need MODEL or GRAPH (try --help)\n");
        return XE_EXIT_USAGE;
    }
    if (op->io.inference) {
        fprintf(stderr, "xengine: error: --inference is not supported: sweeps plan training steps\n");
        return XE_EXIT_USAGE;
    }
    if (limit_given && !op->max_batch) { /* accepted silently before 2026-12-05 */
        fprintf(stderr, "xengine: error: --batch-limit applies to --max-batch (the largest batch tried there)\n");
        return XE_EXIT_USAGE;
    }
    if (range_given && op->max_batch) { /* ignored without a word before 2026-12-05 */
        fprintf(stderr, "xengine: error: --from/--to/--step set the budget sweep's points; --max-batch uses one "
                        "budget (--budget)\n");
        return XE_EXIT_USAGE;
    }
    if (op->io.budget && !op->max_batch) {
        fprintf(stderr, "xengine: error: --budget applies to --max-batch; the sweep sets budgets with "
                        "--from/--to/--step\n");
        return XE_EXIT_USAGE;
    }
    if (op->plot) {
        size_t n = strlen(op->plot);
        if (op->max_batch) {
            fprintf(stderr, "xengine: error: --plot draws the budget sweep, not --max-batch\n");
            return XE_EXIT_USAGE;
        }
        if (n < 4 || (strcasecmp(op->plot + n - 4, ".png") && strcasecmp(op->plot + n - 4, ".svg"))) {
            fprintf(stderr, "xengine: error: --plot: '%s' must end in .png or .svg\n", op->plot);
            return XE_EXIT_USAGE;
        }
        /* before the sweep, as plot does: it used to run the whole sweep, write --csv and
         * then fail naming gnuplot's temporary script */
        if (!xe_cli_gnuplot_require(op->plot)) return XE_EXIT_INTERNAL;
    }
    if (!op->max_batch && sweep_points(op) > MAX_POINTS) {
        fprintf(stderr, "xengine: error: --from %g%% --to %g%% --step %g%% makes %.0f points; the maximum is %d "
                        "(use a larger --step)\n",
                op->from, op->to, op->step, floor(fabs(op->to - op->from) / op->step + 1e-9) + 1, MAX_POINTS);
        return XE_EXIT_USAGE;
    }
    if (access(op->io.graph, R_OK) != 0) {
        fprintf(stderr, "xengine: error: %s: cannot open: %s\n", op->io.graph, strerror(errno));
        return XE_EXIT_INPUT;
    }
    int code = XE_EXIT_OK;
    if (op->csv && (code = xe_cli_check_output_inst(op->csv, &op->io))) return code;
    if (op->plot && (code = xe_cli_check_output_inst(op->plot, &op->io))) return code;
    if ((code = xe_cli_check_outputs_differ(op->csv, "--csv", op->plot, "--plot"))) return code;
    op->progress = quiet ? 0 : isatty(STDERR_FILENO) ? 2 : verbose;
    return 0;
}

static int sweep_cmd(int argc, char **argv, opts *o)
{
    int code = sweep_parse(argc, argv, o);
    if (code) return code == -1 ? XE_EXIT_OK : code;
    return o->max_batch ? sweep_max_batch(o) : sweep_budgets(o);
}

/* xengine sweep; with --json anywhere on the command line, a failure before the sweep's
 * own JSON object (a usage error, an unreadable model, ...) still prints one, with its
 * status and exit code, as solve and simulate do (README). */
int xe_cli_sweep(int argc, char **argv)
{
    opts o = {.from = 100, .to = 40, .step = 10, .time_limit = 10, .threads = 1, .batch_limit = 4096};
    int code = sweep_cmd(argc, argv, &o);
    if (code && !o.json_done) xe_cli_fail_json(xe_cli_has_arg(argc, argv, "--json"), "sweep", code, o.io.graph, NULL);
    return code;
}
