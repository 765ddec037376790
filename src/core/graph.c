/* Graph construction, validation (cycles, order) and CSR indexing. */
#include "xengine/graph.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static char *dup_str(const char *s)
{
    size_t len = strlen(s);
    char *p = malloc(len + 1);
    if (p) memcpy(p, s, len + 1);
    return p;
}

int xe_utf8_valid(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        unsigned c = *p;
        int n;
        unsigned min;
        if (c < 0x80) {
            p++;
            continue;
        } else if ((c & 0xe0) == 0xc0) {
            n = 1, min = 0x80, c &= 0x1f;
        } else if ((c & 0xf0) == 0xe0) {
            n = 2, min = 0x800, c &= 0x0f;
        } else if ((c & 0xf8) == 0xf0) {
            n = 3, min = 0x10000, c &= 0x07;
        } else {
            return 0; /* a continuation byte first, or 0xf8..0xff */
        }
        for (int k = 1; k <= n; k++) {
            if ((p[k] & 0xc0) != 0x80) return 0; /* also stops at the NUL */
            c = (c << 6) | (p[k] & 0x3f);
        }
        if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff)) return 0;
        p += n + 1;
    }
    return 1;
}

xe_graph *xe_graph_new(const char *name)
{
    xe_graph *g = calloc(1, sizeof *g);
    if (!g) return NULL;
    g->name = dup_str(name ? name : "");
    if (!g->name) {
        free(g);
        return NULL;
    }
    return g;
}

void xe_graph_free(xe_graph *g)
{
    if (!g) return;
    for (int v = 0; v < g->n; v++) {
        free(g->nodes[v].name);
        free(g->nodes[v].op);
    }
    free(g->nodes);
    free(g->esrc);
    free(g->edst);
    free(g->pred_off);
    free(g->pred);
    free(g->succ_off);
    free(g->succ);
    free(g->name);
    free(g);
}

int xe_graph_add_node(xe_graph *g, const char *name, const char *op, int backward,
                      int64_t mem, int64_t param_mem, double cost, xe_err *err)
{
    if (g->finalized) return xe_err_set(err, XE_EINVAL, "graph is finalized; cannot add node %s", name);
    if (mem > XE_MAX_BYTES || param_mem > XE_MAX_BYTES)
        return xe_err_set(err, XE_EINVAL, "node %d (%s): size above 2^53 bytes", g->n, name);
    if (mem < 0) return xe_err_set(err, XE_EINVAL, "node %d (%s): negative output size %lld", g->n, name, (long long)mem);
    if (param_mem < 0) return xe_err_set(err, XE_EINVAL, "node %d (%s): negative parameter size %lld", g->n, name, (long long)param_mem);
    if (!(cost >= 0.0) || isinf(cost)) return xe_err_set(err, XE_EINVAL, "node %d (%s): cost must be a finite number >= 0", g->n, name);
    if (g->n == g->cap_nodes) {
        int cap = g->cap_nodes ? 2 * g->cap_nodes : 16;
        xe_node *p = realloc(g->nodes, (size_t)cap * sizeof *p);
        if (!p) return xe_err_set(err, XE_ENOMEM, "out of memory adding node %s", name);
        g->nodes = p;
        g->cap_nodes = cap;
    }
    xe_node *nd = &g->nodes[g->n];
    nd->name = dup_str(name);
    nd->op = dup_str(op ? op : "unknown");
    if (!nd->name || !nd->op) {
        free(nd->name);
        free(nd->op);
        return xe_err_set(err, XE_ENOMEM, "out of memory adding node %s", name);
    }
    nd->backward = backward ? 1 : 0;
    nd->mem = mem;
    nd->param_mem = param_mem;
    nd->cost = cost;
    return g->n++;
}

int xe_graph_add_edge(xe_graph *g, int u, int v, xe_err *err)
{
    if (g->finalized) return xe_err_set(err, XE_EINVAL, "graph is finalized; cannot add edge %d -> %d", u, v);
    if (u < 0 || u >= g->n || v < 0 || v >= g->n)
        return xe_err_set(err, XE_EINVAL, "edge %d -> %d names a node that does not exist (graph has %d nodes)", u, v, g->n);
    if (g->m == g->cap_edges) {
        int cap = g->cap_edges ? 2 * g->cap_edges : 32;
        int *s = realloc(g->esrc, (size_t)cap * sizeof *s);
        if (!s) return xe_err_set(err, XE_ENOMEM, "out of memory adding edge");
        g->esrc = s;
        int *d = realloc(g->edst, (size_t)cap * sizeof *d);
        if (!d) return xe_err_set(err, XE_ENOMEM, "out of memory adding edge");
        g->edst = d;
        g->cap_edges = cap;
    }
    g->esrc[g->m] = u;
    g->edst[g->m] = v;
    g->m++;
    return XE_OK;
}

/* Finds a node on a cycle (Kahn's algorithm leaves it unprocessed), or -1. */
static int find_cycle_node(const xe_graph *g, int *indeg, int *queue)
{
    memset(indeg, 0, (size_t)g->n * sizeof *indeg);
    for (int e = 0; e < g->m; e++) indeg[g->edst[e]]++;
    int head = 0, tail = 0;
    for (int v = 0; v < g->n; v++)
        if (indeg[v] == 0) queue[tail++] = v;
    while (head < tail) {
        int u = queue[head++];
        for (int e = 0; e < g->m; e++) /* O(n m), only on the error path */
            if (g->esrc[e] == u && --indeg[g->edst[e]] == 0) queue[tail++] = g->edst[e];
    }
    for (int v = 0; v < g->n; v++)
        if (indeg[v] > 0) return v;
    return -1;
}

static int cmp_edge(const void *a, const void *b)
{
    const int *x = a, *y = b; /* pairs (dst, src) */
    if (x[0] != y[0]) return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

int xe_graph_finalize(xe_graph *g, xe_err *err)
{
    if (g->finalized) return XE_OK;
    /* names go into JSON files (schedules, graphs, costs), which hold UTF-8 only: refused
     * here, when the graph is read, not when the output is written after the work */
    if (!xe_utf8_valid(g->name)) return xe_err_set(err, XE_EINVAL, "the graph's name is not valid UTF-8");
    for (int v = 0; v < g->n; v++) {
        if (!xe_utf8_valid(g->nodes[v].name))
            return xe_err_set(err, XE_EINVAL, "node %d: name is not valid UTF-8", v);
        if (!xe_utf8_valid(g->nodes[v].op))
            return xe_err_set(err, XE_EINVAL, "node %d: op is not valid UTF-8", v);
    }
    int64_t total = 0;
    for (int v = 0; v < g->n; v++) {
        total += g->nodes[v].mem; /* each <= 2^53: no overflow before the check below */
        if (total > XE_MAX_BYTES)
            return xe_err_set(err, XE_EINVAL, "the node outputs add up to more than 2^53 bytes");
    }
    for (int e = 0; e < g->m; e++)
        if (g->esrc[e] == g->edst[e])
            return xe_err_set(err, XE_EINVAL, "self-loop on node %d (%s): a cycle", g->esrc[e], g->nodes[g->esrc[e]].name);
    for (int e = 0; e < g->m; e++) {
        if (g->esrc[e] < g->edst[e]) continue;
        int *tmp = malloc(2 * (size_t)(g->n + 1) * sizeof *tmp);
        if (!tmp) return xe_err_set(err, XE_ENOMEM, "out of memory checking for cycles");
        int c = find_cycle_node(g, tmp, tmp + g->n + 1);
        free(tmp);
        if (c >= 0)
            return xe_err_set(err, XE_EINVAL, "the graph has a cycle through node %d (%s)", c, g->nodes[c].name);
        return xe_err_set(err, XE_EINVAL, "nodes are not in topological order: edge %d (%s) -> %d (%s)",
                          g->esrc[e], g->nodes[g->esrc[e]].name, g->edst[e], g->nodes[g->edst[e]].name);
    }
    /* sort by (dst, src), dedup */
    int *pairs = malloc(2 * (size_t)(g->m ? g->m : 1) * sizeof *pairs);
    g->pred_off = calloc((size_t)g->n + 1, sizeof *g->pred_off);
    g->succ_off = calloc((size_t)g->n + 1, sizeof *g->succ_off);
    if (!pairs || !g->pred_off || !g->succ_off) {
        free(pairs);
        return xe_err_set(err, XE_ENOMEM, "out of memory indexing the graph");
    }
    for (int e = 0; e < g->m; e++) {
        pairs[2 * e] = g->edst[e];
        pairs[2 * e + 1] = g->esrc[e];
    }
    qsort(pairs, (size_t)g->m, 2 * sizeof *pairs, cmp_edge);
    int m = 0;
    for (int e = 0; e < g->m; e++) {
        if (m > 0 && pairs[2 * (m - 1)] == pairs[2 * e] && pairs[2 * (m - 1) + 1] == pairs[2 * e + 1]) continue;
        pairs[2 * m] = pairs[2 * e];
        pairs[2 * m + 1] = pairs[2 * e + 1];
        m++;
    }
    g->m = m;
    size_t cnt = (size_t)(m ? m : 1);
    g->pred = malloc(cnt * sizeof *g->pred);
    g->succ = malloc(cnt * sizeof *g->succ);
    if (!g->pred || !g->succ) {
        free(pairs);
        return xe_err_set(err, XE_ENOMEM, "out of memory indexing the graph");
    }
    for (int e = 0; e < m; e++) {
        g->esrc[e] = pairs[2 * e + 1];
        g->edst[e] = pairs[2 * e];
        g->pred_off[g->edst[e] + 1]++;
        g->succ_off[g->esrc[e] + 1]++;
    }
    free(pairs);
    for (int v = 0; v < g->n; v++) {
        g->pred_off[v + 1] += g->pred_off[v];
        g->succ_off[v + 1] += g->succ_off[v];
    }
    /* edges are sorted by (dst, src): preds come out ascending per dst */
    for (int e = 0; e < m; e++) g->pred[e] = g->esrc[e];
    /* succ: place by src; iterating edges in (dst) order keeps each list ascending */
    int *fill = calloc((size_t)g->n + 1, sizeof *fill);
    if (!fill) return xe_err_set(err, XE_ENOMEM, "out of memory indexing the graph");
    for (int e = 0; e < m; e++) {
        int u = g->esrc[e];
        g->succ[g->succ_off[u] + fill[u]++] = g->edst[e];
    }
    free(fill);
    g->finalized = 1;
    return XE_OK;
}

int xe_graph_last_use(const xe_graph *g, int v)
{
    int k = g->succ_off[v + 1] - g->succ_off[v];
    return k ? g->succ[g->succ_off[v + 1] - 1] : -1;
}

int64_t xe_graph_footprint(const xe_graph *g, int v)
{
    int64_t f = g->nodes[v].mem;
    for (int p = g->pred_off[v]; p < g->pred_off[v + 1]; p++) f += g->nodes[g->pred[p]].mem;
    return f;
}

int64_t xe_graph_total_mem(const xe_graph *g)
{
    int64_t s = 0;
    for (int v = 0; v < g->n; v++) s += g->nodes[v].mem;
    return s;
}

int *xe_graph_reach(const xe_graph *g)
{
    int *reach = malloc((size_t)(g->n ? g->n : 1) * sizeof *reach);
    if (!reach) return NULL;
    for (int i = g->n - 1; i >= 0; i--) {
        int r = -1;
        for (int p = g->succ_off[i]; p < g->succ_off[i + 1]; p++) {
            int j = g->succ[p];
            if (j > r) r = j;
            if (reach[j] > r) r = reach[j];
        }
        reach[i] = r;
    }
    return reach;
}
