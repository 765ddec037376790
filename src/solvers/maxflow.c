/* Dinic's maximum flow (maxflow.h). The edges are kept in pairs (edge k and its
 * residual twin k ^ 1) in one array; each vertex lists its edges through `next`. The
 * blocking-flow search is an explicit stack, not recursion, so a long level graph
 * cannot overflow the C stack. */
#include "maxflow.h"

#include <math.h>
#include <stdlib.h>

struct xe_flow {
    int nv, ne, cap_e;
    int *head;   /* [nv] first edge of each vertex, -1: none */
    int *next;   /* [cap_e] next edge of the same tail */
    int *to;     /* [cap_e] head vertex of each edge */
    double *res; /* [cap_e] residual capacity */
    int *level;  /* [nv] BFS level from s, -1: unreached */
    int *iter;   /* [nv] next edge to try in the blocking-flow search */
    int *queue;  /* [nv] BFS queue, then the search's vertex stack */
    int *via;    /* [nv] edge by which the search entered each vertex on the stack */
};

xe_flow *xe_flow_new(int nv)
{
    if (nv < 2) return NULL;
    xe_flow *f = calloc(1, sizeof *f);
    if (!f) return NULL;
    f->nv = nv;
    f->head = malloc(sizeof *f->head * (size_t)nv);
    f->level = malloc(sizeof *f->level * (size_t)nv);
    f->iter = malloc(sizeof *f->iter * (size_t)nv);
    f->queue = malloc(sizeof *f->queue * (size_t)nv);
    f->via = malloc(sizeof *f->via * (size_t)nv);
    if (!f->head || !f->level || !f->iter || !f->queue || !f->via) {
        xe_flow_free(f);
        return NULL;
    }
    xe_flow_clear(f);
    return f;
}

void xe_flow_free(xe_flow *f)
{
    if (!f) return;
    free(f->head);
    free(f->next);
    free(f->to);
    free(f->res);
    free(f->level);
    free(f->iter);
    free(f->queue);
    free(f->via);
    free(f);
}

void xe_flow_clear(xe_flow *f)
{
    f->ne = 0;
    for (int v = 0; v < f->nv; v++) f->head[v] = -1;
}

/* Grows the edge arrays to hold at least need edges; 0 or -1 (unchanged). */
static int reserve(xe_flow *f, int need)
{
    if (need <= f->cap_e) return 0;
    int cap = f->cap_e ? f->cap_e : 64;
    while (cap < need) cap *= 2;
    int *next = realloc(f->next, sizeof *next * (size_t)cap);
    if (!next) return -1;
    f->next = next;
    int *to = realloc(f->to, sizeof *to * (size_t)cap);
    if (!to) return -1;
    f->to = to;
    double *res = realloc(f->res, sizeof *res * (size_t)cap);
    if (!res) return -1;
    f->res = res;
    f->cap_e = cap;
    return 0;
}

int xe_flow_add(xe_flow *f, int a, int b, double cap)
{
    if (reserve(f, f->ne + 2)) return -1;
    int k = f->ne;
    f->to[k] = b;
    f->res[k] = cap;
    f->next[k] = f->head[a];
    f->head[a] = k;
    f->to[k + 1] = a;
    f->res[k + 1] = 0.0;
    f->next[k + 1] = f->head[b];
    f->head[b] = k + 1;
    f->ne += 2;
    return 0;
}

/* BFS levels over residual edges above eps; 1 when t is reached. */
static int levels(xe_flow *f, int s, int t, double eps)
{
    for (int v = 0; v < f->nv; v++) f->level[v] = -1;
    int qh = 0, qt = 0;
    f->queue[qt++] = s;
    f->level[s] = 0;
    while (qh < qt) {
        int a = f->queue[qh++];
        for (int k = f->head[a]; k >= 0; k = f->next[k])
            if (f->res[k] > eps && f->level[f->to[k]] < 0) {
                f->level[f->to[k]] = f->level[a] + 1;
                f->queue[qt++] = f->to[k];
            }
    }
    return f->level[t] >= 0;
}

/* One augmenting path in the level graph from s to t (iterative depth-first search with
 * the current-edge pointers iter), its bottleneck pushed; the amount, 0 when none. */
static double augment(xe_flow *f, int s, int t, double eps)
{
    int *stack = f->queue, top = 0;
    stack[top++] = s;
    while (top > 0) {
        int a = stack[top - 1];
        if (a == t) {
            double d = INFINITY;
            for (int i = 1; i < top; i++) d = fmin(d, f->res[f->via[i]]);
            if (isinf(d)) return INFINITY; /* a path of infinite edges only */
            for (int i = 1; i < top; i++) {
                f->res[f->via[i]] -= d;
                f->res[f->via[i] ^ 1] += d;
            }
            return d;
        }
        int k = f->iter[a];
        for (; k >= 0; k = f->next[k])
            if (f->res[k] > eps && f->level[f->to[k]] == f->level[a] + 1) break;
        f->iter[a] = k;
        if (k < 0) { /* a dead end: no later path passes through a */
            f->level[a] = -1;
            top--;
            if (top > 0) f->iter[stack[top - 1]] = f->next[f->iter[stack[top - 1]]];
            continue;
        }
        f->via[top] = k;
        stack[top++] = f->to[k];
    }
    return 0.0;
}

double xe_flow_max(xe_flow *f, int s, int t)
{
    double big = 0.0; /* the largest finite capacity: the scale of the threshold */
    for (int k = 0; k < f->ne; k++)
        if (isfinite(f->res[k]) && f->res[k] > big) big = f->res[k];
    double eps = 1e-12 * big, total = 0.0;
    while (levels(f, s, t, eps)) {
        for (int v = 0; v < f->nv; v++) f->iter[v] = f->head[v];
        double d;
        while ((d = augment(f, s, t, eps)) > 0.0) {
            if (isinf(d)) return INFINITY;
            total += d;
        }
    }
    return total;
}
