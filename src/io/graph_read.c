/* xengine io — reading graphs: xengine's own format, Checkmate and Moccasin node-link.
 *
 * Every schema is first read into plain node records and an edge list in file terms;
 * one builder then adds them to an xe_graph in the final (topological) numbering and
 * finalizes it. docs/formats.md describes the three schemas. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_util.h"
#include "xengine/io.h"

typedef struct nrec {
    const char *name; /* points into the JSON document or into num */
    const char *op;   /* NULL: "unknown" */
    int backward;
    int64_t mem, param_mem;
    double cost;
    char num[24];     /* decimal text of an integer name or id */
    int64_t id;       /* Checkmate: the node id */
} nrec;

typedef struct graph_parts {
    const char *name; /* graph name, may be NULL */
    int n, m;
    nrec *nodes;      /* [n] in file order */
    int *perm;        /* [n] final index -> file index */
    int *eu, *ev;     /* [m] edges in final indices */
} graph_parts;

static void parts_free(graph_parts *p)
{
    free(p->nodes);
    free(p->perm);
    free(p->eu);
    free(p->ev);
}

/* Element count for an allocation: at least 1, so that malloc(0) never happens. */
static size_t cnt(int n) { return n > 0 ? (size_t)n : 1; }

static int oom(const char *path, xe_err *err)
{
    return xe_err_set(err, XE_ENOMEM, "%s: out of memory", path);
}

/* Allocates n node records (identity perm) and m edges. */
static int parts_alloc(graph_parts *p, int n, int m, const char *path, xe_err *err)
{
    p->n = n;
    p->m = m;
    p->nodes = calloc(cnt(n), sizeof *p->nodes);
    p->perm = calloc(cnt(n), sizeof *p->perm);
    p->eu = calloc(cnt(m), sizeof *p->eu);
    p->ev = calloc(cnt(m), sizeof *p->ev);
    if (!p->nodes || !p->perm || !p->eu || !p->ev) return oom(path, err);
    for (int i = 0; i < n; i++) p->perm[i] = i;
    return XE_OK;
}

/* Checks that a JSON array fits an int count. */
static int array_len(const char *path, const json_t *root, const char *key, int *out,
                     xe_err *err)
{
    const json_t *a = json_object_get(root, key);
    if (!a || json_is_null(a)) return xe_err_set(err, XE_EPARSE, "%s: missing field \"%s\"", path, key);
    if (!json_is_array(a))
        return xe_err_set(err, XE_EPARSE, "%s: field \"%s\" must be an array", path, key);
    if (json_array_size(a) > (size_t)INT32_MAX / 4)
        return xe_err_set(err, XE_EINVAL, "%s: too many entries in \"%s\"", path, key);
    *out = (int)json_array_size(a);
    return XE_OK;
}

/* Validates the numeric fields of a node record (sizes are checked by the getters). */
static int check_cost(const char *path, const char *what, const char *key, double cost,
                      xe_err *err)
{
    if (cost < 0)
        return xe_err_set(err, XE_EINVAL, "%s: %s: field \"%s\" is negative (%g)", path, what,
                          key, cost);
    return XE_OK;
}

/* Adds parts to a new graph in the order of perm and finalizes it. */
static int build(const char *path, const graph_parts *p, xe_graph **out, xe_err *err)
{
    if (p->n == 0) return xe_err_set(err, XE_EINVAL, "%s: the graph has no nodes", path);
    const char **names = malloc(sizeof *names * cnt(p->n));
    if (!names) return oom(path, err);
    for (int i = 0; i < p->n; i++) {
        names[i] = p->nodes[i].name;
        if (xe_io_has_control(names[i])) {
            free(names);
            return xe_err_set(err, XE_EINVAL, "%s: node %d: name '%s' contains a control character",
                              path, i, p->nodes[i].name);
        }
    }
    xe_name_index uniq;
    int rc = xe_name_index_build(&uniq, names, p->n, path, "node", err);
    free(names);
    if (rc) return rc;
    xe_name_index_free(&uniq);

    xe_graph *g = xe_graph_new(p->name);
    if (!g) return oom(path, err);
    xe_err inner = {{0}};
    for (int i = 0; i < p->n; i++) {
        const nrec *r = &p->nodes[p->perm[i]];
        int k = xe_graph_add_node(g, r->name, r->op, r->backward, r->mem, r->param_mem,
                                  r->cost, &inner);
        if (k < 0) {
            xe_graph_free(g);
            return xe_err_set(err, k, "%s: %s", path, inner.msg);
        }
    }
    for (int j = 0; j < p->m; j++) {
        rc = xe_graph_add_edge(g, p->eu[j], p->ev[j], &inner);
        if (rc) {
            xe_graph_free(g);
            return xe_err_set(err, rc, "%s: %s", path, inner.msg);
        }
    }
    rc = xe_graph_finalize(g, &inner);
    if (rc) {
        xe_graph_free(g);
        return xe_err_set(err, rc, "%s: %s", path, inner.msg);
    }
    *out = g;
    return XE_OK;
}

/* ---- xengine's own format ---------------------------------------------------------- */

/* Node i of the "nodes" array, which must be an object; fills what = "node i" for the
 * messages of the caller. NULL (and err set) when it is not an object. */
static const json_t *node_object(const char *path, const json_t *root, int i, char *what, size_t cap,
                                 xe_err *err)
{
    const json_t *o = json_array_get(json_object_get(root, "nodes"), (size_t)i);
    snprintf(what, cap, "node %d", i);
    if (!json_is_object(o)) xe_err_set(err, XE_EPARSE, "%s: %s must be an object", path, what);
    return json_is_object(o) ? o : NULL;
}

static int read_own(const char *path, const json_t *root, graph_parts *p, xe_err *err)
{
    const json_t *ver = json_object_get(root, "version");
    if (ver && !(json_is_integer(ver) && json_integer_value(ver) == 1))
        return xe_err_set(err, XE_EPARSE, "%s: unsupported \"version\" (expected 1)", path);
    int rc = xe_json_get_str(path, "graph", root, "name", 1, &p->name, err);
    int n, m = 0;
    if (!rc) rc = array_len(path, root, "nodes", &n, err);
    const json_t *je = json_object_get(root, "edges"); /* optional; null counts as absent */
    if (!rc && je && !json_is_null(je)) rc = array_len(path, root, "edges", &m, err);
    if (!rc) rc = parts_alloc(p, n, m, path, err);
    if (rc) return rc;

    for (int i = 0; i < n; i++) {
        nrec *r = &p->nodes[i];
        char what[32];
        const json_t *o = node_object(path, root, i, what, sizeof what, err);
        if (!o) return XE_EPARSE;
        r->op = NULL;
        r->backward = 0;
        r->param_mem = 0;
        rc = xe_json_get_str(path, what, o, "name", 0, &r->name, err);
        if (!rc) rc = xe_json_get_str(path, what, o, "op", 1, &r->op, err);
        if (!rc) rc = xe_json_get_bool(path, what, o, "backward", 1, &r->backward, err);
        if (!rc) rc = xe_json_get_bytes(path, what, o, "mem", 0, &r->mem, err);
        if (!rc) rc = xe_json_get_bytes(path, what, o, "param_mem", 1, &r->param_mem, err);
        if (!rc) rc = xe_json_get_num(path, what, o, "cost", 0, &r->cost, err);
        if (!rc) rc = check_cost(path, what, "cost", r->cost, err);
        if (rc) return rc;
    }
    const json_t *edges = json_object_get(root, "edges");
    for (int j = 0; j < m; j++) {
        const json_t *e = json_array_get(edges, (size_t)j);
        int64_t uv[2];
        if (!json_is_array(e) || json_array_size(e) != 2 ||
            xe_json_as_int(json_array_get(e, 0), INT64_MIN, INT64_MAX, &uv[0]) ||
            xe_json_as_int(json_array_get(e, 1), INT64_MIN, INT64_MAX, &uv[1]))
            return xe_err_set(err, XE_EPARSE, "%s: edge %d must be a pair [u, v] of node indices",
                              path, j);
        for (int k = 0; k < 2; k++)
            if (uv[k] < 0 || uv[k] >= n)
                return xe_err_set(err, XE_EINVAL,
                                  "%s: edge %d: node %" PRId64 " does not exist (%d nodes)",
                                  path, j, uv[k], n);
        p->eu[j] = (int)uv[0];
        p->ev[j] = (int)uv[1];
    }
    return XE_OK;
}

/* ---- node-link common -------------------------------------------------------------- */

/* Text of a node key (string, or integer as decimal) into buf; NULL when ill-typed. */
static const char *key_of(const json_t *v, char *buf, size_t cap)
{
    if (json_is_string(v)) return json_string_value(v);
    return xe_json_key_text(v, buf, cap) == 0 ? buf : NULL;
}

static const char *graph_name(const json_t *root)
{
    const json_t *g = json_object_get(root, "graph");
    const json_t *nm = json_is_object(g) ? json_object_get(g, "name") : NULL;
    return json_is_string(nm) ? json_string_value(nm) : NULL;
}

/* ---- Checkmate node-link ----------------------------------------------------------- */

/* qsort has no context argument in C11: sort (id, file index) pairs instead. */
typedef struct id_pair {
    int64_t id;
    int idx;
} id_pair;

static int cmp_pair(const void *a, const void *b)
{
    const id_pair *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static int find_id(const id_pair *ids, int n, int64_t id)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (ids[mid].id == id) return mid;
        if (ids[mid].id < id) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

static int read_checkmate(const char *path, const json_t *root, graph_parts *p, xe_err *err)
{
    int n, m;
    int rc = array_len(path, root, "nodes", &n, err);
    if (!rc) rc = array_len(path, root, "links", &m, err);
    if (!rc) rc = parts_alloc(p, n, m, path, err);
    if (rc) return rc;
    p->name = graph_name(root);
    id_pair *ids = malloc(sizeof *ids * cnt(n));
    if (!ids) return oom(path, err);

    for (int i = 0; i < n && !rc; i++) {
        nrec *r = &p->nodes[i];
        char what[32];
        const json_t *o = node_object(path, root, i, what, sizeof what, err);
        if (!o) {
            rc = XE_EPARSE;
            break;
        }
        const json_t *id = json_object_get(o, "id");
        if (!id) {
            rc = xe_err_set(err, XE_EPARSE, "%s: %s: missing field \"id\"", path, what);
        } else if (xe_json_as_int(id, INT64_MIN, INT64_MAX, &r->id)) {
            rc = xe_err_set(err, XE_EPARSE, "%s: %s: field \"id\" must be an integer", path,
                            what);
        }
        if (rc) break;
        snprintf(r->num, sizeof r->num, "%" PRId64, r->id);
        r->name = r->num;
        r->op = NULL;
        r->backward = 0;
        r->param_mem = 0;
        rc = xe_json_get_str(path, what, o, "name", 1, &r->name, err);
        if (!rc) rc = xe_json_get_bool(path, what, o, "backward", 1, &r->backward, err);
        if (!rc) rc = xe_json_get_num(path, what, o, "cost_cpu", 0, &r->cost, err);
        if (!rc) rc = check_cost(path, what, "cost_cpu", r->cost, err);
        if (!rc) rc = xe_json_get_bytes(path, what, o, "cost_ram", 0, &r->mem, err);
        ids[i].id = r->id;
        ids[i].idx = i;
    }
    if (!rc) {
        qsort(ids, (size_t)n, sizeof *ids, cmp_pair);
        for (int i = 0; i < n; i++) {
            p->perm[i] = ids[i].idx;
            if (i > 0 && ids[i].id == ids[i - 1].id) {
                rc = xe_err_set(err, XE_EINVAL, "%s: duplicate node id %" PRId64, path, ids[i].id);
                break;
            }
        }
    }
    const json_t *links = json_object_get(root, "links");
    static const char *const ends[2] = {"source", "target"};
    for (int j = 0; j < m && !rc; j++) {
        const json_t *l = json_array_get(links, (size_t)j);
        int at[2];
        for (int k = 0; k < 2 && !rc; k++) {
            const json_t *v = json_is_object(l) ? json_object_get(l, ends[k]) : NULL;
            int64_t id;
            if (!v || xe_json_as_int(v, INT64_MIN, INT64_MAX, &id)) {
                rc = xe_err_set(err, XE_EPARSE, "%s: link %d: field \"%s\" must be a node id",
                                path, j, ends[k]);
            } else if ((at[k] = find_id(ids, n, id)) < 0) {
                rc = xe_err_set(err, XE_EINVAL, "%s: link %d: %s %" PRId64 " is not a node id",
                                path, j, ends[k], id);
            }
        }
        if (!rc) {
            p->eu[j] = at[0];
            p->ev[j] = at[1];
        }
    }
    free(ids);
    return rc;
}

/* ---- Moccasin node-link ------------------------------------------------------------ */

static int read_moccasin(const char *path, const json_t *root, graph_parts *p, xe_err *err)
{
    int n, m;
    int rc = array_len(path, root, "nodes", &n, err);
    if (!rc) rc = array_len(path, root, "links", &m, err);
    if (!rc) rc = parts_alloc(p, n, m, path, err);
    if (rc) return rc;
    p->name = graph_name(root);

    for (int i = 0; i < n; i++) {
        nrec *r = &p->nodes[i];
        char what[32];
        const json_t *o = node_object(path, root, i, what, sizeof what, err);
        if (!o) return XE_EPARSE;
        const json_t *nm = json_object_get(o, "name");
        if (!nm) return xe_err_set(err, XE_EPARSE, "%s: %s: missing field \"name\"", path, what);
        r->name = key_of(nm, r->num, sizeof r->num);
        if (!r->name)
            return xe_err_set(err, XE_EPARSE, "%s: %s: field \"name\" must be a string or an integer",
                              path, what);
        r->op = NULL;
        r->backward = 0;
        r->param_mem = 0;
        rc = xe_json_get_bytes(path, what, o, "out_cost", 0, &r->mem, err);
        if (!rc) rc = xe_json_get_bytes(path, what, o, "param_cost", 1, &r->param_mem, err);
        if (!rc) rc = xe_json_get_num(path, what, o, "duration", 0, &r->cost, err);
        if (!rc) rc = check_cost(path, what, "duration", r->cost, err);
        if (rc) return rc;
    }

    const char **names = malloc(sizeof *names * cnt(n));
    int *pos = malloc(sizeof *pos * cnt(n)); /* file index -> final index */
    if (!names || !pos) {
        free(names);
        free(pos);
        return oom(path, err);
    }
    for (int i = 0; i < n; i++) {
        names[i] = p->nodes[i].name;
        pos[i] = i;
    }
    xe_name_index idx;
    rc = xe_name_index_build(&idx, names, n, path, "node", err);
    free(names);
    if (rc) {
        free(pos);
        return rc;
    }

    const json_t *g = json_object_get(root, "graph");
    const json_t *order = json_is_object(g) ? json_object_get(g, "order") : NULL;
    if (order) {
        if (!json_is_array(order)) {
            rc = xe_err_set(err, XE_EPARSE, "%s: \"graph.order\" must be an array", path);
        } else if (json_array_size(order) != (size_t)n) {
            rc = xe_err_set(err, XE_EINVAL, "%s: \"graph.order\" has %zu entries for %d nodes",
                            path, json_array_size(order), n);
        }
        for (int i = 0; i < n; i++) pos[i] = -1;
        for (int k = 0; k < n && !rc; k++) {
            char buf[24];
            const char *key = key_of(json_array_get(order, (size_t)k), buf, sizeof buf);
            int f = key ? xe_name_index_find(&idx, key) : -1;
            if (!key) {
                rc = xe_err_set(err, XE_EPARSE, "%s: graph.order[%d] must be a node name", path, k);
            } else if (f < 0) {
                rc = xe_err_set(err, XE_EINVAL, "%s: graph.order[%d]: no node named '%s'", path,
                                k, key);
            } else if (pos[f] >= 0) {
                rc = xe_err_set(err, XE_EINVAL, "%s: graph.order lists node '%s' twice", path, key);
            } else {
                pos[f] = k;
                p->perm[k] = f;
            }
        }
    }

    const json_t *links = json_object_get(root, "links");
    static const char *const ends[2] = {"0", "1"};
    for (int j = 0; j < m && !rc; j++) {
        const json_t *l = json_array_get(links, (size_t)j);
        int at[2];
        for (int k = 0; k < 2 && !rc; k++) {
            const json_t *v = json_is_object(l) ? json_object_get(l, ends[k]) : NULL;
            char buf[24];
            const char *key = v ? key_of(v, buf, sizeof buf) : NULL;
            int f = key ? xe_name_index_find(&idx, key) : -1;
            if (!key) {
                rc = xe_err_set(err, XE_EPARSE, "%s: link %d: field \"%s\" must be a node name",
                                path, j, ends[k]);
            } else if (f < 0) {
                rc = xe_err_set(err, XE_EINVAL, "%s: link %d: no node named '%s'", path, j, key);
            } else {
                at[k] = pos[f];
            }
        }
        if (!rc) {
            p->eu[j] = at[0];
            p->ev[j] = at[1];
        }
    }
    xe_name_index_free(&idx);
    free(pos);
    return rc;
}

/* ---- detection --------------------------------------------------------------------- */

typedef enum { SCHEMA_UNKNOWN, SCHEMA_CHECKMATE, SCHEMA_MOCCASIN } nl_schema;

static nl_schema detect_node_link(const json_t *root)
{
    const json_t *nodes = json_object_get(root, "nodes");
    const json_t *links = json_object_get(root, "links");
    const json_t *n0 = json_array_get(nodes, 0); /* NULL when not an array or empty */
    const json_t *l0 = json_array_get(links, 0);
    const json_t *g = json_object_get(root, "graph");
    if (json_object_get(n0, "cost_ram") || json_object_get(n0, "cost_cpu") ||
        json_object_get(l0, "source"))
        return SCHEMA_CHECKMATE;
    if (json_object_get(n0, "out_cost") || json_object_get(n0, "duration") ||
        json_object_get(l0, "0") || json_object_get(g, "order"))
        return SCHEMA_MOCCASIN;
    return SCHEMA_UNKNOWN;
}

int xe_io_read_graph(const char *path, xe_graph **out, xe_err *err)
{
    *out = NULL;
    json_t *root;
    int rc = xe_json_load(path, &root, err);
    if (rc) return rc;
    graph_parts p = {0};
    const json_t *jf = json_object_get(root, "format");
    if (jf && !json_is_null(jf)) {
        rc = xe_json_check_format(path, root, "xengine-graph", 1, err);
        if (!rc) rc = read_own(path, root, &p, err);
    } else if (json_object_get(root, "nodes") && json_object_get(root, "links")) {
        const json_t *jn = json_object_get(root, "nodes"), *jd = json_object_get(root, "directed");
        if (json_is_array(jn) && json_array_size(jn) == 0) {
            /* no node tells the schema apart: nothing to read, build() names the empty graph */
        } else if (json_is_false(jd)) { /* networkx's undirected graphs: no producer and reader */
            rc = xe_err_set(err, XE_EINVAL,
                            "%s: \"directed\": false: an undirected graph has no data flow "
                            "(each link must go from the producer to the reader)",
                            path);
        } else if (jd && !json_is_null(jd) && !json_is_true(jd)) { /* "false" as a string was read as true */
            rc = xe_err_set(err, XE_EPARSE, "%s: \"directed\" must be true or false", path);
        } else if (json_object_get(root, "graph") && !json_is_null(json_object_get(root, "graph")) &&
                   !json_is_object(json_object_get(root, "graph"))) {
            rc = xe_err_set(err, XE_EPARSE, "%s: \"graph\" must be an object (networkx's graph attributes)", path);
        } else {
            switch (detect_node_link(root)) {
            case SCHEMA_CHECKMATE: rc = read_checkmate(path, root, &p, err); break;
            case SCHEMA_MOCCASIN: rc = read_moccasin(path, root, &p, err); break;
            default:
                rc = xe_err_set(err, XE_EPARSE,
                                "%s: unrecognised node-link graph: nodes need cost_cpu/cost_ram "
                                "(Checkmate) or out_cost/duration (Moccasin)",
                                path);
            }
        }
    } else {
        rc = xe_err_set(err, XE_EPARSE,
                        "%s: not a graph file: expected \"format\": \"xengine-graph\" or a "
                        "node-link graph with \"nodes\" and \"links\"",
                        path);
    }
    if (!rc) rc = build(path, &p, out, err);
    parts_free(&p);
    json_decref(root);
    return rc;
}
