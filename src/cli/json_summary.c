/* xengine CLI — the `--json` summary of solve and simulate: one JSON object on one line
 * of stdout, for scripts (README, "Output for scripts"). */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "xengine/graph.h"

/* A finite number, or null (unknown bound, gap of a heuristic-only run). */
static json_t *num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

/* A JSON string of s (null for NULL). A path need not be UTF-8, which JSON strings
 * must be: then every byte from 0x80 up is shown as '?' (the JSON stays valid, and the
 * exit code the real one, not "out of memory"). */
static json_t *str_or_null(const char *s)
{
    if (!s) return json_null();
    if (xe_utf8_valid(s)) return json_string(s);
    char *c = strdup(s);
    if (!c) return NULL;
    for (char *p = c; *p; p++)
        if ((unsigned char)*p >= 0x80) *p = '?';
    json_t *v = json_string(c);
    free(c);
    return v;
}

/* Sets key to v (stealing it); 1 when v or the set failed. */
static int put(json_t *o, const char *key, json_t *v)
{
    if (!v) return 1;
    return json_object_set_new(o, key, v) != 0;
}

static json_t *devices(const xe_instance *in, const xe_sim_result *r)
{
    json_t *a = json_array();
    int bad = !a;
    for (int d = 0; d < in->ndev && !bad; d++) {
        const xe_sim_device *s = &r->dev[d];
        json_t *o = json_object();
        bad = !o || json_array_append_new(a, o) != 0;
        if (bad) break;
        bad = put(o, "name", json_string(in->dev[d].name)) ||
              put(o, "kind", json_string(in->dev[d].kind == XE_DEV_GPU ? "gpu" : "cpu")) ||
              put(o, "budget_bytes", json_integer(in->dev[d].budget)) ||
              put(o, "peak_bytes", json_integer(s->peak)) ||
              put(o, "use", num(in->dev[d].budget > 0 ? (double)s->peak / (double)in->dev[d].budget : NAN)) ||
              put(o, "compute_time_s", json_real(s->compute_time)) ||
              put(o, "copy_in_time_s", json_real(s->copy_in_time)) ||
              put(o, "computes", json_integer(s->computes)) ||
              put(o, "recomputes", json_integer(s->recomputes)) ||
              put(o, "copies_in", json_integer(s->copies_in));
    }
    if (bad) {
        json_decref(a);
        return NULL;
    }
    return a;
}

const char *xe_cli_exit_status(int code)
{
    switch (code) {
    case XE_EXIT_OK: return "ok";
    case XE_EXIT_USAGE: return "usage";
    case XE_EXIT_INPUT: return "bad input";
    case XE_EXIT_INFEASIBLE: return "infeasible";
    case XE_EXIT_TIMEOUT: return "no schedule";
    default: return "internal error";
    }
}

int xe_cli_print_json(FILE *f, const xe_cli_json *j)
{
    json_t *o = json_object();
    int bad = !o;
    if (!bad)
        bad = put(o, "command", json_string(j->command)) ||
              put(o, "status", json_string(j->status ? j->status : xe_cli_exit_status(j->exit_code))) ||
              put(o, "exit_code", json_integer(j->exit_code)) || put(o, "graph", str_or_null(j->graph)) ||
              put(o, "schedule", str_or_null(j->schedule));
    if (!bad && j->method)
        bad = put(o, "method", json_string(j->method)) || put(o, "objective_s", num(j->objective)) ||
              put(o, "bound_s", num(j->bound)) || put(o, "gap", num(j->gap)) ||
              put(o, "solve_time_s", num(j->solve_time));
    if (!bad && j->method && j->bound_scope)
        bad = put(o, "bound_scope", json_string(j->bound_scope)) || put(o, "bound_any_s", num(j->bound_any)) ||
              put(o, "gap_any", num(j->gap_any));
    if (!bad && j->nrows > 0) { /* solve: each method's own row (README) */
        json_t *a = json_array();
        bad = put(o, "methods", a);
        for (int k = 0; k < j->nrows && k < (int)(sizeof j->rows / sizeof j->rows[0]) && !bad; k++) {
            json_t *r = json_object();
            bad = !r || json_array_append_new(a, r) != 0;
            if (!bad)
                bad = put(r, "method", str_or_null(j->rows[k].method)) ||
                      put(r, "status", str_or_null(j->rows[k].status)) ||
                      put(r, "objective_s", num(j->rows[k].objective)) || put(r, "bound_s", num(j->rows[k].bound)) ||
                      put(r, "gap", num(j->rows[k].gap)) || put(r, "time_s", num(j->rows[k].time));
        }
    }
    if (!bad && j->budget_lower > 0)
        bad = put(o, "budget_lower_bytes", json_integer(j->budget_lower)) ||
              put(o, "budget_found_bytes", j->budget_found > 0 ? json_integer(j->budget_found) : json_null()) ||
              put(o, "budget_exact", json_boolean(j->budget_exact));
    if (!bad && j->in && j->sim)
        bad = put(o, "total_time_s", json_real(j->sim->total_time)) ||
              put(o, "makespan_s", json_real(j->sim->makespan)) || put(o, "events", json_integer(j->events)) ||
              put(o, "computes", json_integer(j->sim->computes)) ||
              put(o, "recomputes", json_integer(j->sim->recomputes)) ||
              put(o, "copies", json_integer(j->sim->copies)) || put(o, "frees", json_integer(j->sim->frees)) ||
              put(o, "devices", devices(j->in, j->sim));
    char *text = bad ? NULL : json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    json_decref(o);
    if (!text) {
        fprintf(stderr, "xengine: error: out of memory writing the JSON summary\n");
        return XE_EXIT_INTERNAL;
    }
    fprintf(f, "%s\n", text);
    fflush(f);
    free(text);
    return XE_EXIT_OK;
}

int xe_cli_has_arg(int argc, char **argv, const char *arg)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], arg)) return 1;
        if (xe_cli_takes_value(argv[i], strlen(argv[i]))) i++; /* "-o --json": -o's value, not the flag */
    }
    return 0;
}

int xe_cli_fail_json(int json, const char *command, int code, const char *graph, const char *schedule)
{
    if (json) {
        xe_cli_json js = {.command = command, .exit_code = code, .graph = graph, .schedule = schedule};
        xe_cli_print_json(stdout, &js);
    }
    return code;
}
