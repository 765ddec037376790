/* xengine io — writing a graph in xengine's own format (docs/formats.md). */
#include "json_util.h"
#include "xengine/io.h"

int xe_io_write_graph(const char *path, const xe_graph *g, xe_err *err)
{
    if (!g->finalized)
        return xe_err_set(err, XE_EINVAL, "%s: the graph must be finalized before writing", path);
    json_t *root = json_object();
    json_t *nodes = json_array();
    json_t *edges = json_array();
    int bad = !root || !nodes || !edges;
    if (!bad) {
        bad = xe_json_put(root, "format", json_string("xengine-graph")) ||
              xe_json_put(root, "version", json_integer(1)) ||
              xe_json_put(root, "name", json_string(g->name)) ||
              xe_json_put(root, "nodes", json_incref(nodes)) ||
              xe_json_put(root, "edges", json_incref(edges));
    }
    for (int v = 0; v < g->n && !bad; v++) {
        const xe_node *nd = &g->nodes[v];
        json_t *o = json_object();
        bad = !o || xe_json_push(nodes, o) ||
              xe_json_put(o, "name", json_string(nd->name)) ||
              xe_json_put(o, "op", json_string(nd->op)) ||
              xe_json_put(o, "backward", json_boolean(nd->backward)) ||
              xe_json_put(o, "mem", json_integer(nd->mem)) ||
              xe_json_put(o, "param_mem", json_integer(nd->param_mem)) ||
              xe_json_put(o, "cost", json_real(nd->cost));
    }
    for (int e = 0; e < g->m && !bad; e++) {
        json_t *pair = json_array();
        bad = !pair || xe_json_push(edges, pair) ||
              xe_json_push(pair, json_integer(g->esrc[e])) ||
              xe_json_push(pair, json_integer(g->edst[e]));
    }
    int rc = bad ? xe_err_set(err, XE_ENOMEM, "%s: cannot build the JSON (out of memory, or a name that is not UTF-8)", path)
                 : xe_json_write_file(path, root, err);
    json_decref(nodes);
    json_decref(edges);
    json_decref(root);
    return rc;
}
