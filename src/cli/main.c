/* xengine — command-line entry point: dispatches to the subcommands. */
#include <errno.h>
#include <signal.h>
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
        int is_value = i >= 3 && xe_cli_takes_value(argv[i - 1], strlen(argv[i - 1]));
        if (!eq || is_value || !xe_cli_takes_value(argv[i], (size_t)(eq - argv[i]))) {
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

/* 1 when v, given as the value of an option, is an option itself: "--anything", or one of
 * the short flags (-o, -q, -v, -h). A negative number ("-5") is left to the option. */
static int looks_like_option(const char *v)
{
    if (v[0] == '-' && v[1] == '-' && v[2]) return 1;
    return !strcmp(v, "-o") || !strcmp(v, "-q") || !strcmp(v, "-v") || !strcmp(v, "-h");
}

/* A usage error found before the command runs: for solve, simulate and sweep with a
 * real --json, the JSON object too (the message is printed already). Returns the exit
 * code. */
static int early_usage_error(int argc, char **argv)
{
    const char *cmd = argv[1], *pos[2] = {NULL, NULL};
    int npos = 0;
    for (int k = 2; k < argc; k++) { /* the positional arguments: GRAPH [SCHEDULE] */
        if (xe_cli_takes_value(argv[k], strlen(argv[k]))) k++;
        else if (argv[k][0] != '-' && npos < 2) pos[npos++] = argv[k];
    }
    int json = xe_cli_has_arg(argc - 1, argv + 1, "--json");
    if (!strcmp(cmd, "solve") || !strcmp(cmd, "sweep"))
        xe_cli_fail_json(json, cmd, XE_EXIT_USAGE, pos[0], NULL);
    else if (!strcmp(cmd, "simulate"))
        xe_cli_fail_json(json, cmd, XE_EXIT_USAGE, pos[0], pos[1]);
    return XE_EXIT_USAGE;
}

/* An option that takes a value followed by another option ("-o --json", "--budget -q")
 * is a forgotten value: refused here, once for every command, before the command reads
 * "--json" both as -o's file name and as its own flag. A value that starts with "--"
 * can still be given attached: --output=--json. Returns 0, or prints the usage error
 * (and, for solve, simulate and sweep with a real --json, the JSON object) and returns
 * the exit code. */
static int check_values(int argc, char **argv)
{
    for (int i = 2; i + 1 < argc; i++) {
        if (!xe_cli_takes_value(argv[i], strlen(argv[i]))) continue;
        if (looks_like_option(argv[i + 1])) {
            fprintf(stderr, "xengine: error: %s needs a value; found the option '%s' (a value that looks like an "
                            "option goes after '=': %s=VALUE)\n",
                    argv[i], argv[i + 1], !strcmp(argv[i], "-o") ? "--output" : argv[i]);
            return early_usage_error(argc, argv);
        }
        i++; /* the value */
    }
    return 0;
}

/* An option that takes a value given twice with different values (--costs a --costs b:
 * the first file was silently ignored; -o and --output are one option) is refused. argv
 * is the split vector (--opt=value as two words). */
static int check_repeats(int argc, char **argv)
{
    for (int i = 2; i + 1 < argc; i++) {
        if (!xe_cli_takes_value(argv[i], strlen(argv[i]))) continue;
        const char *a = !strcmp(argv[i], "-o") ? "--output" : argv[i];
        for (int j = i + 2; j + 1 < argc; j++) {
            if (!xe_cli_takes_value(argv[j], strlen(argv[j]))) continue;
            const char *b = !strcmp(argv[j], "-o") ? "--output" : argv[j];
            if (!strcmp(a, b) && strcmp(argv[i + 1], argv[j + 1])) {
                fprintf(stderr, "xengine: error: %s given twice, as '%s' and '%s' (give it once)\n", argv[i],
                        argv[i + 1], argv[j + 1]);
                return early_usage_error(argc, argv);
            }
            j++; /* its value */
        }
        i++; /* the value */
    }
    return 0;
}

int main(int argc, char **argv)
{
    /* stdout line by line also into a pipe, so that with 2>&1 an error line comes after
     * the lines printed before it (a new user's trial: run's refusal came first, its
     * header and notes after) */
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* a closed pipe reader (`xengine solve ... | head -1`) makes writes to stdout fail
     * (reported at the end, exit 5) instead of killing the process before its schedule
     * is written; a file-size limit makes a write fail with EFBIG (the writer then
     * removes its temporary and says so) instead of killing it mid-write. Both killed
     * the process, silently, before 2026-12-05 (a new user's trial). */
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN);
    int n = 0, nnames = 0;
    char **names = NULL;
    char **v = split_long_opts(argc, argv, &n, &names, &nnames);
    if (!v) {
        fprintf(stderr, "xengine: error: out of memory\n");
        return XE_EXIT_INTERNAL;
    }
    int code = argc > 2 && argv[1][0] != '-' ? check_values(argc, argv) : 0;
    if (!code && n > 2 && v[1][0] != '-') code = check_repeats(n, v);
    if (!code) code = dispatch(n, v);
    /* stdout is the result with --json (and the summary tables without): a write that
     * failed there (a full disk, /dev/full, a closed pipe reader) must not end in exit 0 */
    errno = 0;
    int flush_failed = fflush(stdout) != 0, flush_errno = errno;
    if (flush_failed || ferror(stdout)) {
        fprintf(stderr, "xengine: error: cannot write to standard output: %s\n",
                flush_failed && flush_errno ? strerror(flush_errno) : "write error");
        if (code == 0) code = XE_EXIT_INTERNAL;
    }
    for (int i = 0; i < nnames; i++) free(names[i]);
    free(names);
    free(v);
    return code;
}
