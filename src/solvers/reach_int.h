/* The reach search's state store, shared by the reach bound (bound_reach.c) and the
 * reach windows (reach_window.c). Internal to the library.
 *
 * A state is a set of nodes, W words of bits; the store keeps each set once (a hash
 * table over the keys), its least cost g found and the state it was reached from, and a
 * binary heap of (f, g, id) items for A*. Its arrays are mapped (mapped.h) and grow by
 * mremap, so that a search may run on the planner's second thread without allocating.
 * The including file defines _GNU_SOURCE first. */
#ifndef XENGINE_SOLVERS_REACH_INT_H
#define XENGINE_SOLVERS_REACH_INT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "xengine/solvers.h"

#define RS_NONE UINT32_MAX

/* A heap entry: a stored state, the f and g it was pushed with (stale when g is above
 * the state's stored cost), and whether it is a completed path (f exact). */
typedef struct rs_item {
    double f, g;
    uint32_t id;
    int complete;
} rs_item;

struct xe_rsearch {
    const xe_instance *in;
    const xe_graph *g;
    int n, W, target;
    int64_t budget;
    double *c;       /* [n] cost on the device, seconds */
    double *extra;   /* [n] lower bounds on reach({v}) - once(anc*(v)) (the table) */
    uint64_t *anc;   /* [n][W] v and its ancestors */
    uint64_t *desc;  /* [n][W] v's descendants (not v) */
    double rest;     /* every node outside anc*(target) once */
    int *lastr;      /* [n] scratch: last reader within anc*(S) */
    uint64_t *a, *t, *u; /* [W] scratch sets */
    size_t max_bytes, bytes;
    /* stored states: keys [cap][W], best cost [cap], parent [cap] (the state it was
     * reached from: the next one in time; RS_NONE for the start) */
    uint64_t *keys;
    double *gbest;
    uint32_t *parent;
    size_t keys_bytes, gbest_bytes, parent_bytes;
    uint32_t nstates, cap;
    uint64_t *slot;  /* hash slots as in bound_search.c: 0 empty, else id + 1 and the
                        hash's high 32 bits */
    size_t hcap;
    rs_item *heap;
    size_t hn, heapcap;
    uint32_t goal;   /* the completed state of the cheapest path, RS_NONE until found */
    int full;        /* memory limit reached */
    int ran;
    double result;   /* xe_rsearch_run's return */
    int exact;
};

#define HAS(S, v) (((S)[(v) >> 6] >> ((v)&63)) & 1)

/* Empties the store (states and heap; arrays kept). */
void xe_rs_reset(xe_rsearch *x);
/* The id of the stored set S (W words), or RS_NONE; with `add`, stores it when absent
 * (cost INFINITY, parent RS_NONE), and *fail = 1 when the memory limit stops that. */
uint32_t xe_rs_find(xe_rsearch *x, const uint64_t *S, int add, int *fail);
/* Stores S reached at cost g (seconds) from `from` where that is cheaper than its stored
 * cost: its id, with its cost and parent set; RS_NONE where it is not cheaper, or (with
 * *fail = 1) at the memory limit. */
uint32_t xe_rs_improve(xe_rsearch *x, const uint64_t *S, double g, uint32_t from, int *fail);
/* Heap: push (0, or -1 at the memory limit) and pop of the least f (ties: larger g);
 * pop only while x->hn > 0. */
int xe_rs_push(xe_rsearch *x, rs_item it);
rs_item xe_rs_pop(xe_rsearch *x);
/* Bytes of the set S. */
int64_t xe_rs_mem(const xe_rsearch *x, const uint64_t *S);
/* 1 when some one-smaller subset of S is stored at cost <= g (reach is monotone). */
int xe_rs_dominated(xe_rsearch *x, const uint64_t *S, double g);
/* Removes S's forced members (bound_reach.c's file comment: inputs all in S, no
 * ancestor of another member), highest index first, except those in keep (NULL: none);
 * returns their cost (seconds); with `log`, appends them in the order removed (*nlog
 * counts; room for the graph's nodes). */
double xe_rs_normalize(const xe_rsearch *x, uint64_t *S, const uint64_t *keep, int *log, int *nlog);
/* (S \ {s}) u inputs(s) into out (W words). */
void xe_rs_step(const xe_rsearch *x, const uint64_t *S, int s, uint64_t *out);
/* 1 at the deadline (xe_now() seconds; 0: none) or once *intr is set (NULL: never). */
int xe_rs_stop(double deadline, const volatile sig_atomic_t *intr);

#endif
