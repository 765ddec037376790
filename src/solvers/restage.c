/* The stage form of an event list outside the stage structure (docs/reorder.md,
 * "Restaging"): relabel in first-computation order, and cut a stage wherever the list
 * recomputes in an order a stage cannot hold, with an empty node that ends it. */
#include "xengine/reorder.h"

#include <stdlib.h>
#include <string.h>

/* Walk state: new ids of the original nodes (-1 before their first computation), the
 * augmented event list, and the order (map[k] = original node of new node k, -1 for an
 * empty stage end). */
typedef struct restage_walk {
    const xe_instance *in;
    int n, D, next, last; /* next new id; last: new id of the stage's latest compute */
    int *id, *map;
    uint8_t *res;     /* [n][D] resident now (original ids) */
    uint8_t *at_open; /* [n][D] resident when the running stage opened */
    int opened;       /* the running stage has opened (at_open taken) */
    xe_schedule out;  /* events in new ids */
} restage_walk;

/* Ends the running stage with an empty node of its own. */
static int close_with_empty(restage_walk *w, xe_err *err)
{
    int k = w->next++;
    w->map[k] = -1;
    if (xe_schedule_push(&w->out, XE_EV_COMPUTE, k, 0, 0)) return xe_err_set(err, XE_ENOMEM, "restage: out of memory");
    w->last = -1;
    w->opened = 0;
    return XE_OK;
}

static int walk_compute(restage_walk *w, int k, int v, int d, xe_err *err)
{
    int D = w->D;
    if (w->res[v * D + d]) return XE_OK; /* already resident: the compute changes nothing */
    const xe_graph *g = w->in->g;
    for (int j = g->pred_off[v]; j < g->pred_off[v + 1]; j++)
        if (!w->res[g->pred[j] * D + d])
            return xe_err_set(err, XE_EINVAL, "restage: event %d computes %s without its input %s resident (not a "
                              "valid schedule)", k, g->nodes[v].name, g->nodes[g->pred[j]].name);
    int first = w->id[v] < 0;
    if (first) {
        w->id[v] = w->next++;
        w->map[w->id[v]] = v;
    } else if (w->opened && (w->id[v] <= w->last || w->at_open[v * D + d])) {
        /* a stage computes each node once, in index order, and what it held when it
         * opened stays until its last use there: cut the stage here (stricter than
         * needed on several devices, where a stage may compute a node once per device:
         * an empty node more, the schedule the same) */
        int rc = close_with_empty(w, err);
        if (rc) return rc;
    }
    if (!w->opened) {
        memcpy(w->at_open, w->res, (size_t)w->n * D);
        w->opened = 1;
    }
    if (xe_schedule_push(&w->out, XE_EV_COMPUTE, w->id[v], d, 0)) return xe_err_set(err, XE_ENOMEM, "restage: out of memory");
    w->res[v * D + d] = 1;
    w->last = w->id[v];
    if (first) w->last = -1, w->opened = 0; /* the first computation ends its stage */
    return XE_OK;
}

int xe_instance_restage(const xe_instance *in, const xe_schedule *s, xe_instance **out, int **map_out,
                        xe_stages *st, xe_err *err)
{
    *out = NULL;
    *map_out = NULL;
    memset(st, 0, sizeof *st);
    int n = in->g->n, D = in->ndev;
    restage_walk w = {.in = in, .n = n, .D = D, .last = -1};
    xe_schedule_init(&w.out);
    /* each computation adds at most one empty node */
    int ncomp = 0;
    for (int k = 0; k < s->len; k++) ncomp += s->ev[k].kind == XE_EV_COMPUTE;
    size_t cap = (size_t)n + (size_t)ncomp + 1;
    w.id = malloc(((size_t)n + 1) * sizeof *w.id);
    w.map = malloc(cap * sizeof *w.map);
    w.res = calloc((size_t)(n ? n : 1) * D, 1);
    w.at_open = calloc((size_t)(n ? n : 1) * D, 1);
    int rc = (w.id && w.map && w.res && w.at_open) ? XE_OK : xe_err_set(err, XE_ENOMEM, "restage: out of memory");
    for (int v = 0; rc == XE_OK && v < n; v++) w.id[v] = -1;
    int firsts = 0;
    for (int k = 0; rc == XE_OK && k < s->len && firsts < n; k++) {
        const xe_event *e = &s->ev[k];
        if (e->node < 0 || e->node >= n || e->dev < 0 || e->dev >= D) {
            rc = xe_err_set(err, XE_EINVAL, "restage: event %d names no node or device of the instance", k);
        } else if (e->kind == XE_EV_COPY) {
            rc = xe_err_set(err, XE_EUNSUPPORTED, "restage: event %d is a copy (only compute and free events are restaged)", k);
        } else if (e->kind == XE_EV_FREE) {
            int x = e->node * D + e->dev;
            if (w.res[x]) { /* (a free of what is not resident changes nothing) */
                w.res[x] = 0;
                if (xe_schedule_push(&w.out, XE_EV_FREE, w.id[e->node], e->dev, 0))
                    rc = xe_err_set(err, XE_ENOMEM, "restage: out of memory");
            }
        } else {
            int was_new = w.id[e->node] < 0;
            rc = walk_compute(&w, k, e->node, e->dev, err);
            firsts += was_new;
        }
    }
    if (rc == XE_OK && firsts < n) rc = xe_err_set(err, XE_EINVAL, "restage: the schedule never computes %d of the %d nodes", n - firsts, n);
    int N = w.next;
    if (rc == XE_OK) rc = xe_instance_relabel(in, w.map, N, out, err);
    if (rc == XE_OK) {
        /* pruned before the check: a checkpoint the list frees before any step of its
         * stage touches it would otherwise be held to the stage's end (and the MILP has
         * no S for what nothing reads) */
        xe_err e2 = {{0}};
        rc = xe_stages_from_schedule_ex(*out, &w.out, 1, st, &e2);
        if (rc) {
            xe_err_set(err, rc, "restage: %s", e2.msg);
            xe_instance_free(*out);
            *out = NULL;
        }
    }
    free(w.id);
    free(w.res);
    free(w.at_open);
    xe_schedule_clear(&w.out);
    if (rc) {
        free(w.map);
        return rc;
    }
    *map_out = w.map;
    return XE_OK;
}

void xe_schedule_unrestage(xe_schedule *s, const int *map)
{
    int m = 0;
    for (int k = 0; k < s->len; k++) {
        int v = map[s->ev[k].node];
        if (v < 0) continue; /* an empty stage end */
        s->ev[m] = s->ev[k];
        s->ev[m++].node = v;
    }
    s->len = m;
}
