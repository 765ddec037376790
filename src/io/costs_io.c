/* xengine io — per-device compute and copy costs by node and device name. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"
#include "xengine/io.h"

static int find_dev(const xe_instance *in, const char *name)
{
    for (int d = 0; d < in->ndev; d++)
        if (strcmp(in->dev[d].name, name) == 0) return d;
    return -1;
}

static int unit_scale(const char *path, const json_t *root, double *scale, xe_err *err)
{
    static const struct {
        const char *name;
        double s;
    } units[] = {{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
    const char *u = "s";
    int rc = xe_json_get_str(path, "costs file", root, "unit", 1, &u, err);
    if (rc) return rc;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
        if (strcmp(u, units[i].name) == 0) {
            *scale = units[i].s;
            return XE_OK;
        }
    return xe_err_set(err, XE_EINVAL, "%s: unknown unit \"%s\" (s, ms, us or ns)", path, u);
}

/* A device name of the file that the instance lacks: XE_EINVAL naming it (what), unless
 * the caller asked to skip such entries; then it is noted in r (once per name). */
static int unknown_dev(const char *path, const char *name, xe_costs_read *r, xe_err *err, const char *what)
{
    if (!r->skip_unknown_devices) return xe_err_set(err, XE_EINVAL, "%s: %s", path, what);
    size_t len = strlen(r->skipped);
    const char *p = r->skipped;
    size_t nl = strlen(name);
    while (*p) { /* already noted? */
        const char *end = strchr(p, ',');
        size_t l = end ? (size_t)(end - p) : strlen(p);
        if (l == nl && strncmp(p, name, nl) == 0) return XE_OK;
        p = end ? end + 2 : p + l;
    }
    if (len + nl + 3 < sizeof r->skipped) /* names past the buffer are counted, not listed */
        snprintf(r->skipped + len, sizeof r->skipped - len, "%s%s", len ? ", " : "", name);
    r->nskipped++;
    return XE_OK;
}

/* "compute": {node: {device: seconds | null}} into cost (a copy of in->cost); *known
 * counts the entries for devices of the instance. */
static int read_compute(const char *path, const json_t *comp, const xe_instance *in,
                        const xe_name_index *nodes, double scale, double *cost, xe_costs_read *r,
                        int64_t *known, xe_err *err)
{
    const char *node;
    json_t *per;
    json_object_foreach((json_t *)comp, node, per) {
        int v = xe_name_index_find(nodes, node);
        if (v < 0)
            return xe_err_set(err, XE_EINVAL, "%s: compute: no node named '%s' (costs for another graph? this one is "
                              "'%.100s')", path, node, in->g->name);
        if (!json_is_object(per))
            return xe_err_set(err, XE_EPARSE, "%s: compute: node '%s' must map device names to seconds",
                              path, node);
        const char *dev;
        json_t *val;
        json_object_foreach(per, dev, val) {
            int d = find_dev(in, dev);
            if (d < 0) {
                char what[160];
                snprintf(what, sizeof what, "compute: node '%s': no device named '%s'", node, dev);
                int rc = unknown_dev(path, dev, r, err, what);
                if (rc) return rc;
                continue;
            }
            ++*known;
            r->ncompute[d]++;
            double c;
            if (json_is_null(val)) {
                c = XE_NO_COST;
            } else if (json_is_number(val) && isfinite(json_number_value(val))) {
                c = json_number_value(val) * scale;
                if (c < 0)
                    return xe_err_set(err, XE_EINVAL, "%s: compute: node '%s' on '%s': negative cost",
                                      path, node, dev);
            } else {
                return xe_err_set(err, XE_EPARSE,
                                  "%s: compute: node '%s' on '%s': must be a number or null", path,
                                  node, dev);
            }
            cost[(int64_t)v * in->ndev + d] = c;
        }
    }
    return XE_OK;
}

/* "copy": {node: {"from->to": seconds}} into copy (a copy of in->copy); *known as for
 * read_compute (a pair counts when both devices are the instance's). */
static int read_copy(const char *path, const json_t *cp, const xe_instance *in,
                     const xe_name_index *nodes, double scale, double *copy, xe_costs_read *r,
                     int64_t *known, xe_err *err)
{
    const char *node;
    json_t *per;
    json_object_foreach((json_t *)cp, node, per) {
        int v = xe_name_index_find(nodes, node);
        if (v < 0)
            return xe_err_set(err, XE_EINVAL, "%s: copy: no node named '%s' (costs for another graph? this one is "
                              "'%.100s')", path, node, in->g->name);
        if (!json_is_object(per))
            return xe_err_set(err, XE_EPARSE,
                              "%s: copy: node '%s' must map \"from->to\" device pairs to seconds",
                              path, node);
        const char *pair;
        json_t *val;
        json_object_foreach(per, pair, val) {
            const char *arrow = strstr(pair, "->");
            if (!arrow)
                return xe_err_set(err, XE_EPARSE, "%s: copy: node '%s': key \"%s\" is not \"from->to\"",
                                  path, node, pair);
            char from[sizeof in->dev[0].name] = "";
            size_t flen = (size_t)(arrow - pair);
            int d = -1, e = find_dev(in, arrow + 2);
            if (flen < sizeof from) {
                memcpy(from, pair, flen);
                from[flen] = '\0';
                d = find_dev(in, from);
            }
            if (d < 0 || e < 0) {
                char what[160];
                snprintf(what, sizeof what, "copy: node '%s': \"%s\" names an unknown device", node, pair);
                int rc = XE_OK;
                if (d < 0) rc = unknown_dev(path, flen < sizeof from ? from : pair, r, err, what);
                if (!rc && e < 0) rc = unknown_dev(path, arrow + 2, r, err, what);
                if (rc) return rc;
                continue;
            }
            ++*known;
            if (d == e)
                return xe_err_set(err, XE_EINVAL, "%s: copy: node '%s': \"%s\" copies a device to itself",
                                  path, node, pair);
            if (!json_is_number(val) || !isfinite(json_number_value(val)))
                return xe_err_set(err, XE_EPARSE, "%s: copy: node '%s' \"%s\": must be a number", path,
                                  node, pair);
            double c = json_number_value(val) * scale;
            if (c < 0)
                return xe_err_set(err, XE_EINVAL, "%s: copy: node '%s' \"%s\": negative cost", path,
                                  node, pair);
            copy[((int64_t)v * in->ndev + d) * in->ndev + e] = c;
        }
    }
    return XE_OK;
}

int xe_io_read_costs(const char *path, xe_instance *in, xe_err *err)
{
    return xe_io_read_costs_batch(path, in, NULL, err);
}

int xe_io_read_costs_batch(const char *path, xe_instance *in, int64_t *batch, xe_err *err)
{
    xe_costs_read r = {0};
    int rc = xe_io_read_costs_ex(path, in, &r, err);
    if (!rc && batch) *batch = r.batch;
    return rc;
}

int xe_io_read_costs_ex(const char *path, xe_instance *in, xe_costs_read *r, xe_err *err)
{
    r->batch = 0;
    memset(r->ncompute, 0, sizeof r->ncompute);
    r->nskipped = 0;
    r->skipped[0] = '\0';
    json_t *root;
    int rc = xe_json_load(path, &root, err);
    if (rc) return rc;
    /* checked also where nobody asks for it (a JSON graph's costs): a bad value is a sign
     * of a bad file either way (accepted there before 2026-12-05) */
    if ((rc = xe_json_batch(path, root, "\"batch\"", &r->batch, err))) {
        json_decref(root);
        return rc;
    }
    const xe_graph *g = in->g;
    size_t nc = (size_t)g->n * (size_t)in->ndev;
    size_t ncp = nc * (size_t)in->ndev;
    double *cost = malloc(sizeof *cost * (nc ? nc : 1));
    double *copy = malloc(sizeof *copy * (ncp ? ncp : 1));
    const char **names = malloc(sizeof *names * (size_t)(g->n > 0 ? g->n : 1));
    xe_name_index idx = {0};
    if (!cost || !copy || !names) rc = xe_err_set(err, XE_ENOMEM, "%s: out of memory", path);
    if (!rc) {
        memcpy(cost, in->cost, sizeof *cost * nc);
        memcpy(copy, in->copy, sizeof *copy * ncp);
        for (int v = 0; v < g->n; v++) names[v] = g->nodes[v].name;
        rc = xe_name_index_build(&idx, names, g->n, path, "node", err);
    }
    double scale = 1.0;
    if (!rc) rc = xe_json_check_format(path, root, "xengine-costs", 0, err);
    if (!rc) rc = unit_scale(path, root, &scale, err);
    const json_t *comp = json_object_get(root, "compute");
    const json_t *cp = json_object_get(root, "copy");
    if (json_is_null(comp)) comp = NULL; /* null counts as absent (docs/formats.md) */
    if (json_is_null(cp)) cp = NULL;
    /* a file with neither is not a costs file (a graph or "{}" given by mistake): an
     * error, not a solve with no costs changed */
    if (!rc && !comp && !cp)
        rc = xe_err_set(err, XE_EPARSE, "%s: not a costs file: it has neither \"compute\" nor \"copy\"", path);
    if (!rc && comp && !json_is_object(comp))
        rc = xe_err_set(err, XE_EPARSE, "%s: \"compute\" must be an object", path);
    if (!rc && cp && !json_is_object(cp))
        rc = xe_err_set(err, XE_EPARSE, "%s: \"copy\" must be an object", path);
    /* likewise sections that set nothing ({"compute": {}}) */
    if (!rc && (comp ? json_object_size(comp) : 0) + (cp ? json_object_size(cp) : 0) == 0)
        rc = xe_err_set(err, XE_EPARSE, "%s: not a costs file: its \"compute\" and \"copy\" set no cost", path);
    int64_t known = 0;
    if (!rc && comp) rc = read_compute(path, comp, in, &idx, scale, cost, r, &known, err);
    if (!rc && cp) rc = read_copy(path, cp, in, &idx, scale, copy, r, &known, err);
    /* skipping is for a file of more devices than the instance's, not for one of none of
     * them (another machine's file, or every name misspelt) */
    if (!rc && !known && r->nskipped) {
        char devs[XE_MAX_DEV * 34] = "";
        for (int d = 0; d < in->ndev; d++)
            snprintf(devs + strlen(devs), sizeof devs - strlen(devs), "%s%s", d ? ", " : "", in->dev[d].name);
        rc = xe_err_set(err, XE_EINVAL, "%s: names none of the devices planned for (%s), only %s", path, devs,
                        r->skipped);
    }
    if (!rc) {
        memcpy(in->cost, cost, sizeof *cost * nc);
        memcpy(in->copy, copy, sizeof *copy * ncp);
    }
    xe_name_index_free(&idx);
    free(names);
    free(cost);
    free(copy);
    json_decref(root);
    return rc;
}


int xe_io_write_costs(const char *path, const xe_instance *in, int64_t batch, xe_err *err)
{
    const xe_graph *g = in->g;
    json_t *root = json_object();
    json_t *comp = json_object();
    json_t *cp = json_object();
    int bad = !root || !comp || !cp;
    if (!bad)
        bad = xe_json_put(root, "format", json_string("xengine-costs")) ||
              xe_json_put(root, "unit", json_string("s")) ||
              (batch > 0 && xe_json_put(root, "batch", json_integer((json_int_t)batch))) ||
              xe_json_put(root, "compute", json_incref(comp)) ||
              xe_json_put(root, "copy", json_incref(cp));
    for (int v = 0; v < g->n && !bad; v++) {
        json_t *pc = json_object();
        bad = !pc || xe_json_put(comp, g->nodes[v].name, pc);
        for (int d = 0; d < in->ndev && !bad; d++) {
            double c = xe_cost(in, v, d);
            bad = xe_json_put(pc, in->dev[d].name, c < 0 ? json_null() : json_real(c));
        }
        if (in->ndev < 2 || bad) continue;
        json_t *pp = json_object();
        bad = !pp || xe_json_put(cp, g->nodes[v].name, pp);
        for (int d = 0; d < in->ndev && !bad; d++)
            for (int e = 0; e < in->ndev && !bad; e++) {
                if (d == e) continue;
                char key[2 * sizeof in->dev[0].name + 4];
                snprintf(key, sizeof key, "%s->%s", in->dev[d].name, in->dev[e].name);
                bad = xe_json_put(pp, key, json_real(xe_copy_cost(in, v, d, e)));
            }
    }
    int rc = bad ? xe_err_set(err, XE_ENOMEM,
                              "%s: cannot build the JSON (out of memory, or a name that is not UTF-8)",
                              path)
                 : xe_json_write_file(path, root, err);
    json_decref(comp);
    json_decref(cp);
    json_decref(root);
    return rc;
}
