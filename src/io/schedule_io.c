/* xengine io — schedules (event lists) with an optional simulator summary. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "json_util.h"
#include "xengine/io.h"

static const char *const op_names[3] = {"compute", "copy", "free"};

static int find_dev(const xe_instance *in, const char *name)
{
    for (int d = 0; d < in->ndev; d++)
        if (strcmp(in->dev[d].name, name) == 0) return d;
    return -1;
}

static const char *kind_name(xe_device_kind k) { return k == XE_DEV_GPU ? "gpu" : "cpu"; }

/* ---- writing ----------------------------------------------------------------------- */

static json_t *device_list(const xe_instance *in)
{
    json_t *a = json_array();
    int bad = !a;
    for (int d = 0; d < in->ndev && !bad; d++) {
        json_t *o = json_object();
        bad = !o || xe_json_push(a, o) || xe_json_put(o, "name", json_string(in->dev[d].name)) ||
              xe_json_put(o, "kind", json_string(kind_name(in->dev[d].kind))) ||
              xe_json_put(o, "budget", json_integer(in->dev[d].budget));
    }
    if (bad) {
        json_decref(a);
        return NULL;
    }
    return a;
}

static json_t *event_obj(const xe_instance *in, const xe_event *e)
{
    json_t *o = json_object();
    if (!o) return NULL;
    int bad = xe_json_put(o, "op", json_string(op_names[e->kind])) ||
              xe_json_put(o, "node", json_integer(e->node)) ||
              xe_json_put(o, "name", json_string(in->g->nodes[e->node].name));
    if (!bad && e->kind == XE_EV_COPY)
        bad = xe_json_put(o, "from", json_string(in->dev[e->dev].name)) ||
              xe_json_put(o, "to", json_string(in->dev[e->dst].name));
    else if (!bad)
        bad = xe_json_put(o, "device", json_string(in->dev[e->dev].name));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *summary_obj(const xe_instance *in, const xe_sim_result *sum)
{
    json_t *o = json_object();
    json_t *devs = json_array();
    int bad = !o || !devs || xe_json_put(o, "total_time_s", xe_json_num(sum->total_time)) ||
              xe_json_put(o, "makespan_s", xe_json_num(sum->makespan)) ||
              xe_json_put(o, "computes", json_integer(sum->computes)) ||
              xe_json_put(o, "recomputes", json_integer(sum->recomputes)) ||
              xe_json_put(o, "copies", json_integer(sum->copies)) ||
              xe_json_put(o, "frees", json_integer(sum->frees)) ||
              xe_json_put(o, "devices", json_incref(devs));
    int nd = sum->ndev < in->ndev ? sum->ndev : in->ndev;
    for (int d = 0; d < nd && !bad; d++) {
        const xe_sim_device *sd = &sum->dev[d];
        json_t *x = json_object();
        bad = !x || xe_json_push(devs, x) || xe_json_put(x, "name", json_string(in->dev[d].name)) ||
              xe_json_put(x, "peak_bytes", json_integer(sd->peak)) ||
              xe_json_put(x, "budget_bytes", json_integer(in->dev[d].budget)) ||
              xe_json_put(x, "compute_time_s", xe_json_num(sd->compute_time)) ||
              xe_json_put(x, "copy_in_time_s", xe_json_num(sd->copy_in_time)) ||
              xe_json_put(x, "computes", json_integer(sd->computes)) ||
              xe_json_put(x, "recomputes", json_integer(sd->recomputes)) ||
              xe_json_put(x, "copies_in", json_integer(sd->copies_in));
    }
    json_decref(devs);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* Checks that every event names existing nodes and devices (the writer indexes by them). */
static int check_events(const char *path, const xe_instance *in, const xe_schedule *s,
                        xe_err *err)
{
    for (int i = 0; i < s->len; i++) {
        const xe_event *e = &s->ev[i];
        int ok = e->kind >= XE_EV_COMPUTE && e->kind <= XE_EV_FREE && e->node >= 0 &&
                 e->node < in->g->n && e->dev >= 0 && e->dev < in->ndev;
        if (ok && e->kind == XE_EV_COPY) ok = e->dst >= 0 && e->dst < in->ndev && e->dst != e->dev;
        if (!ok)
            return xe_err_set(err, XE_EINVAL,
                              "%s: event %d (kind %d, node %d, device %d, dst %d) names a node or "
                              "device that does not exist",
                              path, i, (int)e->kind, e->node, e->dev, e->dst);
    }
    return XE_OK;
}

int xe_io_write_schedule(const char *path, const xe_instance *in, const xe_schedule *s,
                         const xe_sim_result *sum, const char *extra_json, xe_err *err)
{
    int rc = check_events(path, in, s, err);
    if (rc) return rc;
    json_t *extra = NULL;
    if (extra_json) {
        json_error_t jerr;
        extra = json_loads(extra_json, 0, &jerr);
        if (!json_is_object(extra)) {
            json_decref(extra);
            return xe_err_set(err, XE_EINVAL, "%s: the extra summary text is not a JSON object%s%s",
                              path, extra ? "" : ": ", extra ? "" : jerr.text);
        }
    }
    json_t *root = json_object();
    json_t *evs = json_array();
    int bad = !root || !evs || xe_json_put(root, "format", json_string("xengine-schedule")) ||
              xe_json_put(root, "version", json_integer(1)) ||
              xe_json_put(root, "graph", json_string(in->g->name)) ||
              xe_json_put(root, "devices", device_list(in)) ||
              xe_json_put(root, "events", json_incref(evs));
    for (int i = 0; i < s->len && !bad; i++) bad = xe_json_push(evs, event_obj(in, &s->ev[i]));
    if (!bad && (sum || extra)) {
        json_t *so = sum ? summary_obj(in, sum) : json_object();
        if (so && extra && json_object_update(so, extra) != 0) {
            json_decref(so);
            so = NULL;
        }
        bad = xe_json_put(root, "summary", so); /* steals so; fails on NULL */
    }
    rc = bad ? xe_err_set(err, XE_ENOMEM,
                          "%s: cannot build the JSON (out of memory, or a name that is not UTF-8)",
                          path)
             : xe_json_write_file(path, root, err);
    json_decref(extra);
    json_decref(evs);
    json_decref(root);
    return rc;
}

/* ---- reading ----------------------------------------------------------------------- */

static int event_dev(const char *path, int i, const json_t *o, const char *key,
                     const xe_instance *in, int *out, xe_err *err)
{
    char what[32];
    snprintf(what, sizeof what, "event %d", i);
    const char *name;
    int rc = xe_json_get_str(path, what, o, key, 0, &name, err);
    if (rc) return rc;
    *out = find_dev(in, name);
    if (*out < 0)
        return xe_err_set(err, XE_EINVAL, "%s: %s: \"%s\": no device named '%s'", path, what, key,
                          name);
    return XE_OK;
}

/* Node of an event: "node" (index) and/or "name"; when both are given they must agree. */
static int event_node(const char *path, int i, const json_t *o, const xe_instance *in,
                      const xe_name_index *idx, int *out, xe_err *err)
{
    const json_t *jn = json_object_get(o, "node");
    const json_t *js = json_object_get(o, "name");
    int v = -1;
    if (jn && !json_is_null(jn)) {
        int64_t x;
        if (xe_json_as_int(jn, INT64_MIN, INT64_MAX, &x))
            return xe_err_set(err, XE_EPARSE, "%s: event %d: field \"node\" must be a node index",
                              path, i);
        if (x < 0 || x >= in->g->n)
            return xe_err_set(err, XE_EINVAL, "%s: event %d: node %" PRId64 " does not exist (%d nodes)",
                              path, i, x, in->g->n);
        v = (int)x;
    }
    if (js && !json_is_null(js)) {
        if (!json_is_string(js))
            return xe_err_set(err, XE_EPARSE, "%s: event %d: field \"name\" must be a string", path, i);
        int w = xe_name_index_find(idx, json_string_value(js));
        if (w < 0)
            return xe_err_set(err, XE_EINVAL, "%s: event %d: no node named '%s'", path, i,
                              json_string_value(js));
        if (v >= 0 && v != w)
            return xe_err_set(err, XE_EINVAL, "%s: event %d: node %d is '%s', not '%s'", path, i, v,
                              in->g->nodes[v].name, json_string_value(js));
        v = w;
    }
    if (v < 0)
        return xe_err_set(err, XE_EPARSE, "%s: event %d: needs \"node\" (index) or \"name\"", path, i);
    *out = v;
    return XE_OK;
}

static int read_event(const char *path, int i, const json_t *o, const xe_instance *in,
                      const xe_name_index *idx, xe_schedule *out, xe_err *err)
{
    char what[32];
    snprintf(what, sizeof what, "event %d", i);
    if (!json_is_object(o)) return xe_err_set(err, XE_EPARSE, "%s: %s must be an object", path, what);
    const char *op;
    int rc = xe_json_get_str(path, what, o, "op", 0, &op, err);
    if (rc) return rc;
    int kind = -1;
    for (int k = 0; k < 3; k++)
        if (strcmp(op, op_names[k]) == 0) kind = k;
    if (kind < 0)
        return xe_err_set(err, XE_EINVAL, "%s: %s: unknown op \"%s\" (compute, copy or free)", path,
                          what, op);
    int v = -1, d = -1, e = -1;
    rc = event_node(path, i, o, in, idx, &v, err);
    if (!rc && kind == XE_EV_COPY) {
        rc = event_dev(path, i, o, "from", in, &d, err);
        if (!rc) rc = event_dev(path, i, o, "to", in, &e, err);
        if (!rc && d == e)
            rc = xe_err_set(err, XE_EINVAL, "%s: %s: copy from '%s' to itself", path, what,
                            in->dev[d].name);
    } else if (!rc) {
        rc = event_dev(path, i, o, "device", in, &d, err);
    }
    if (!rc && xe_schedule_push(out, (xe_event_kind)kind, v, d, e) != XE_OK)
        rc = xe_err_set(err, XE_ENOMEM, "%s: out of memory", path);
    return rc;
}

/* The file's "devices" list, when present, may only name devices of the instance, each
 * once (a device listed twice would claim two budgets; run's pools use the claim). */
static int check_devices(const char *path, const json_t *root, const xe_instance *in,
                         xe_err *err)
{
    const json_t *devs = json_object_get(root, "devices");
    if (!devs || json_is_null(devs)) return XE_OK;
    if (!json_is_array(devs)) return xe_err_set(err, XE_EPARSE, "%s: \"devices\" must be an array", path);
    for (size_t k = 0; k < json_array_size(devs); k++) {
        char what[32];
        snprintf(what, sizeof what, "device %zu", k);
        const char *name;
        int rc = xe_json_get_str(path, what, json_array_get(devs, k), "name", 0, &name, err);
        if (rc) return rc;
        int d = find_dev(in, name);
        if (d < 0)
            return xe_err_set(err, XE_EINVAL, "%s: %s: no device named '%s' in the instance", path,
                              what, name);
        for (size_t j = 0; j < k; j++) {
            const char *other = json_string_value(json_object_get(json_array_get(devs, j), "name"));
            if (other && find_dev(in, other) == d)
                return xe_err_set(err, XE_EINVAL, "%s: %s: device '%s' is listed twice (also device %zu)", path,
                                  what, name, j);
        }
        /* a stated kind must be the device's (the instance's devices file or preset says
         * which; a schedule planned for other devices is not this one's) */
        const json_t *kd = json_object_get(json_array_get(devs, k), "kind");
        if (kd && !json_is_null(kd) &&
            (!json_is_string(kd) || strcasecmp(json_string_value(kd), kind_name(in->dev[d].kind)) != 0))
            return xe_err_set(err, XE_EINVAL, "%s: %s ('%s'): kind %s%s%s, but the device '%s' is a %s", path, what,
                              name, json_is_string(kd) ? "'" : "", json_is_string(kd) ? json_string_value(kd) : "of the wrong type",
                              json_is_string(kd) ? "'" : "", name, kind_name(in->dev[d].kind));
        /* the executor's pools use the stated budget: it must be a byte count, at least
         * 1 as every device's (0 was taken as "none" by run, without a word, before
         * 2026-12-05) */
        const json_t *b = json_object_get(json_array_get(devs, k), "budget");
        int64_t v;
        if (b && !json_is_null(b) && xe_json_as_int(b, 1, INT64_MAX, &v) != 0) {
            char text[64];
            if (json_is_string(b)) snprintf(text, sizeof text, "\"%.40s\"", json_string_value(b));
            else if (json_is_number(b)) snprintf(text, sizeof text, "%g", json_number_value(b));
            else snprintf(text, sizeof text, "of the wrong type");
            return xe_err_set(err, json_is_number(b) ? XE_EINVAL : XE_EPARSE,
                              "%s: %s ('%s'): budget %s is not a whole number of bytes >= 1", path, what, name,
                              text);
        }
    }
    return XE_OK;
}

/* The claims of a parsed schedule file whose devices passed check_devices. */
static void fill_claims(const json_t *root, const xe_instance *in, xe_schedule_claims *c)
{
    for (int d = 0; d < XE_MAX_DEV; d++) c->budget[d] = -1;
    c->graph[0] = '\0';
    c->total_time = NAN;
    const json_t *devs = json_object_get(root, "devices");
    for (size_t k = 0; json_is_array(devs) && k < json_array_size(devs); k++) {
        const json_t *o = json_array_get(devs, k);
        const json_t *b = json_object_get(o, "budget");
        int64_t v;
        if (b && xe_json_as_int(b, 1, INT64_MAX, &v) == 0)
            c->budget[find_dev(in, json_string_value(json_object_get(o, "name")))] = v;
    }
    const json_t *gname = json_object_get(root, "graph");
    if (json_is_string(gname)) snprintf(c->graph, sizeof c->graph, "%s", json_string_value(gname));
    const json_t *tt = json_object_get(json_object_get(root, "summary"), "total_time_s");
    if (json_is_number(tt)) c->total_time = json_number_value(tt);
    for (int d = 0; d < XE_MAX_DEV; d++) c->peak[d] = -1;
    const json_t *sd = json_object_get(json_object_get(root, "summary"), "devices");
    for (size_t k = 0; json_is_array(sd) && k < json_array_size(sd); k++) {
        const json_t *o = json_array_get(sd, k);
        const json_t *nm = json_object_get(o, "name");
        int d = json_is_string(nm) ? find_dev(in, json_string_value(nm)) : -1;
        int64_t v;
        if (d >= 0 && xe_json_as_int(json_object_get(o, "peak_bytes"), 0, INT64_MAX, &v) == 0) c->peak[d] = v;
    }
}

static int read_schedule(const char *path, const xe_instance *in, xe_schedule *out, xe_schedule_claims *claims,
                         xe_err *err)
{
    json_t *root;
    int rc = xe_json_load(path, &root, err);
    if (rc) return rc;
    int len0 = out->len;
    const char **names = NULL;
    xe_name_index idx = {0};
    rc = xe_json_check_format(path, root, "xengine-schedule", 0, err);
    const json_t *ver = json_object_get(root, "version");
    if (!rc && ver && !(json_is_integer(ver) && json_integer_value(ver) == 1))
        rc = xe_err_set(err, XE_EPARSE, "%s: unsupported \"version\" (expected 1)", path);
    if (!rc) rc = check_devices(path, root, in, err);
    const json_t *summ = json_object_get(root, "summary");
    if (!rc && summ && !json_is_null(summ) && !json_is_object(summ))
        rc = xe_err_set(err, XE_EPARSE, "%s: \"summary\" must be an object", path);
    if (!rc && claims) fill_claims(root, in, claims);
    const json_t *evs = json_object_get(root, "events");
    if (!rc && !json_is_array(evs)) rc = xe_err_set(err, XE_EPARSE, "%s: missing array \"events\"", path);
    if (!rc) {
        names = malloc(sizeof *names * (size_t)(in->g->n > 0 ? in->g->n : 1));
        if (!names) rc = xe_err_set(err, XE_ENOMEM, "%s: out of memory", path);
    }
    if (!rc) {
        for (int v = 0; v < in->g->n; v++) names[v] = in->g->nodes[v].name;
        rc = xe_name_index_build(&idx, names, in->g->n, path, "node", err);
    }
    for (size_t i = 0; !rc && i < json_array_size(evs); i++) {
        if (i > (size_t)INT32_MAX - 1) {
            rc = xe_err_set(err, XE_EINVAL, "%s: too many events", path);
            break;
        }
        rc = read_event(path, (int)i, json_array_get(evs, i), in, &idx, out, err);
    }
    /* an event naming nodes the graph does not have: say so where the file names another
     * graph (a schedule passed with the wrong graph said only "node 7 is '20', not '8'") */
    const json_t *gname = json_object_get(root, "graph");
    if (rc == XE_EINVAL && json_is_string(gname) && strcmp(json_string_value(gname), in->g->name) != 0) {
        size_t len = strlen(err->msg);
        snprintf(err->msg + len, sizeof err->msg - len, " (the schedule is for graph '%.100s', this is '%.100s')",
                 json_string_value(gname), in->g->name);
    }
    if (rc) out->len = len0;
    xe_name_index_free(&idx);
    free(names);
    json_decref(root);
    return rc;
}

int xe_io_read_schedule(const char *path, const xe_instance *in, xe_schedule *out, xe_err *err)
{
    return read_schedule(path, in, out, NULL, err);
}

int xe_io_schedule_model(const char *path, int64_t *batch, int *inference, xe_err *err)
{
    *batch = 0;
    *inference = -1;
    json_t *root;
    xe_err e;
    if (xe_json_load(path, &root, &e)) return XE_OK;
    const json_t *summary = json_object_get(root, "summary");
    int rc = xe_json_batch(path, summary, "summary.batch", batch, err);
    const json_t *v = json_object_get(summary, "inference");
    if (!rc && v && json_is_boolean(v)) *inference = json_is_true(v);
    else if (!rc && v && !json_is_null(v))
        rc = xe_err_set(err, XE_EINVAL, "%s: summary.inference must be true or false", path);
    json_decref(root);
    return rc;
}

int xe_io_read_schedule_claims(const char *path, const xe_instance *in, xe_schedule *out, xe_schedule_claims *c,
                               xe_err *err)
{
    return read_schedule(path, in, out, c, err);
}
