/* xengine — command-line entry point: dispatches to the subcommands. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#ifndef XE_VERSION
#define XE_VERSION "unknown" /* set by CMakeLists.txt from the project version */
#endif

static void usage(FILE *f)
{
    fprintf(f,
            "usage: xengine COMMAND [options]\n"
            "\n"
            "Plans memory-bounded training steps across devices (CPU + GPU): where each\n"
            "operator runs, which tensors are kept, recomputed, copied or freed.\n"
            "\n"
            "commands:\n"
            "  solve GRAPH [options] -o SCHEDULE.json   plan a schedule (MILP + heuristic start)\n"
            "  simulate GRAPH SCHEDULE.json [options]   validate any schedule, print its summary\n"
            "  plot GRAPH SCHEDULE.json --out-dir DIR   draw R/S/C, memory and timeline (gnuplot)\n"
            "  sweep MODEL|GRAPH [options]              cost against GPU budget, largest batch, per method\n"
            "  profile MODEL.onnx [options] -o COSTS.json  measure every operator and copy (oneDNN)\n"
            "  run MODEL.onnx SCHEDULE.json [options]   execute a schedule, measured vs predicted\n"
            "  export-graph MODEL.onnx -o GRAPH.json    write a model's training graph (and costs)\n"
            "\n"
            "Run 'xengine COMMAND --help' for the options of a command; 'xengine --version'\n"
            "prints the version.\n"
            "exit codes: 0 ok, 1 usage, 2 bad input, 3 infeasible budget (proven), 4 no schedule\n"
            "found (time limit or --heuristic-only) but none proven impossible, 5 internal error\n"
            "(also: gnuplot missing or failing in plot)\n");
}

/* The long options that take a value, in every command (to keep in step with their
 * parsers; a flag such as --json stays whole, and is refused as an unknown option with
 * "=..." attached). */
static const char *const value_opts[] = {"--batch",  "--batch-limit", "--budget", "--costs",  "--costs-out",
                                         "--csv",    "--devices",     "--format", "--from",   "--gap",
                                         "--method", "--out-dir",     "--output", "--plot",   "--repeat",
                                         "--runs",   "--seed",        "--step",   "--threads", "--time-limit",
                                         "--to",     "--warmup"};

/* 1 when arg (len bytes of it) is one of value_opts, or -o. */
static int takes_value(const char *arg, size_t len)
{
    if (len == 2 && !strncmp(arg, "-o", 2)) return 1;
    for (size_t k = 0; k < sizeof value_opts / sizeof *value_opts; k++)
        if (strlen(value_opts[k]) == len && !strncmp(arg, value_opts[k], len)) return 1;
    return 0;
}

/* argv with every "--name=value" after the command split into "--name" "value" where
 * --name takes a value and the argument is not itself the value of the option before it
 * (the commands parse the separate form only: "--budget=50%" was an unknown option). Into
 * *out (malloc'd: the array and the names, recorded in *names to free; NULL when out of
 * memory). */
static char **split_long_opts(int argc, char **argv, int *out_argc, char ***names, int *nnames)
{
    char **v = malloc(sizeof *v * (size_t)(2 * argc + 1));
    char **nm = malloc(sizeof *nm * (size_t)(argc + 1));
    if (!v || !nm) {
        free(v);
        free(nm);
        return NULL;
    }
    int k = 0, m = 0;
    for (int i = 0; i < argc; i++) {
        const char *eq = i >= 2 && !strncmp(argv[i], "--", 2) ? strchr(argv[i], '=') : NULL;
        int is_value = i >= 3 && takes_value(argv[i - 1], strlen(argv[i - 1]));
        if (!eq || is_value || !takes_value(argv[i], (size_t)(eq - argv[i]))) {
            v[k++] = argv[i];
            continue;
        }
        size_t len = (size_t)(eq - argv[i]);
        char *name = malloc(len + 1);
        if (!name) {
            for (int j = 0; j < m; j++) free(nm[j]);
            free(nm);
            free(v);
            return NULL;
        }
        memcpy(name, argv[i], len);
        name[len] = '\0';
        nm[m++] = name;
        v[k++] = name;
        v[k++] = (char *)(eq + 1);
    }
    v[k] = NULL;
    *out_argc = k;
    *names = nm;
    *nnames = m;
    return v;
}

static int dispatch(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return XE_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return XE_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("xengine %s\n", XE_VERSION);
        return XE_EXIT_OK;
    }
    if (!strcmp(argv[1], "solve")) return xe_cli_solve(argc - 1, argv + 1);
    if (!strcmp(argv[1], "simulate")) return xe_cli_simulate(argc - 1, argv + 1);
    if (!strcmp(argv[1], "export-graph")) return xe_cli_export_graph(argc - 1, argv + 1);
    if (!strcmp(argv[1], "plot")) return xe_cli_plot(argc - 1, argv + 1);
    if (!strcmp(argv[1], "sweep")) return xe_cli_sweep(argc - 1, argv + 1);
    if (!strcmp(argv[1], "run")) return xe_cli_run(argc - 1, argv + 1);
    if (!strcmp(argv[1], "profile")) return xe_cli_profile(argc - 1, argv + 1);
    fprintf(stderr, "xengine: error: unknown command '%s' (try 'xengine --help')\n", argv[1]);
    return XE_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    int n = 0, nnames = 0;
    char **names = NULL;
    char **v = split_long_opts(argc, argv, &n, &names, &nnames);
    if (!v) {
        fprintf(stderr, "xengine: error: out of memory\n");
        return XE_EXIT_INTERNAL;
    }
    int code = dispatch(n, v);
    for (int i = 0; i < nnames; i++) free(names[i]);
    free(names);
    free(v);
    return code;
}
