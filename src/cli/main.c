/* xengine — command-line entry point: dispatches to the subcommands. */
#include <stdio.h>
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

int main(int argc, char **argv)
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
