/* Internal interface of the exact one-device search (src/solvers/pebble.c: the memo,
 * the member orders and the recursion reach(S, B); pebble_schedule.c: schedules read
 * back from its witnesses, cleaned up, and the candidates xe_pebble_schedule keeps the
 * cheapest of). docs/pebble.md describes both. Not part of the public API. Sets of
 * tensors are bitsets of W 64-bit words; budgets and sizes are bytes. */
#ifndef XENGINE_SOLVERS_PEBBLE_INT_H
#define XENGINE_SOLVERS_PEBBLE_INT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "xengine/pebble.h"
#include "xengine/timer.h"

#define EMPTY_SLOT INT64_MIN

/* Most passes of xe_pebble_schedule with the ALAP order's ties drawn at random. */
#define XE_PEBBLE_RANDOM_PASSES 64
/* Their noise on the longest path to a sink, in nodes, every other pass (the others
 * shuffle ties only): on random_layered_n250 and n100 one GPU at 55-75%, neither kind
 * of pass wins everywhere; a spread of 3 was worse than 1.5 on three of four. */
#define XE_PEBBLE_SPREAD 1.5

struct xe_pebble {
    const xe_graph *g;
    int W;             /* 64-bit words per set */
    size_t max_bytes;  /* memo limit */
    /* memo: open addressing, cap a power of two */
    size_t cap, used;
    uint64_t *keys;    /* [cap * W] */
    int64_t *yes_at;   /* [cap]: smallest budget proven reachable, INT64_MAX if none;
                          EMPTY_SLOT marks a free slot */
    int64_t *no_at;    /* [cap]: largest budget proven unreachable, -1 if none */
    int *choice;       /* [cap]: the last-computed tensor of the reachable answer */
    int full;          /* the memo could not grow: new sets are not stored */
    /* search */
    int maxdepth;
    uint64_t **lv;     /* [maxdepth]: the set at each recursion depth, W words each,
                          allocated when first reached */
    int *ch;           /* [maxdepth]: emit_node's chain of choices */
    size_t *fo;        /* [maxdepth + 1]: emit_node's forced members of step k are
                          fz[fo[k] .. fo[k + 1]) */
    int *fz;           /* [fz_cap]: those members, every step's in a row (grown there) */
    size_t fz_cap;
    uint64_t *start;   /* [W]: the set a search in turns starts from, restored each round */
    double deadline;
    long expansions;
    int timed_out;
    const volatile sig_atomic_t *intr; /* xe_pebble_set_interrupt: nonzero acts as the deadline */
    xe_pebble_refine_fn refine;        /* xe_pebble_set_refine (NULL: none) */
    void *refine_ctx;
    /* member orders (docs/pebble.md, "Two orders"): order 0 tries the highest index
     * first, order 1 the latest position in the as-late-as-possible order (alap_rank,
     * alap_node); the search in progress uses `order` */
    int order;
    int only;          /* -1: the orders in turn (xe_pebble_node); 0 or 1: that one only */
    int mode;          /* xe_pebble_set_order's setting: what `only` returns to */
    int forced;        /* 1: forced members taken without branching (drop_forced); the
                          search and emit_node must agree on it */
    int forced_mode;   /* xe_pebble_set_forced's setting: what `forced` returns to */
    int *alap_rank;    /* [n]: position of v in the ALAP order (a randomised variant of it
                          during xe_pebble_schedule's random passes) */
    int *alap_node;    /* [n]: node at each position */
    uint64_t **rk;     /* [maxdepth]: the set at each depth in ALAP positions, W words,
                          allocated when first needed */
};

/* 1 once the caller's interrupt flag (xe_pebble_set_interrupt) is set. */
static inline int pb_interrupted(const xe_pebble *p) { return xe_interrupted(p->intr); }

/* Set buffer k (< maxdepth) of sets[] (p->lv or p->rk), W words, allocated when first
 * needed; NULL when out of memory. */
static inline uint64_t *pb_depth_set(const xe_pebble *p, uint64_t **sets, int k)
{
    if (!sets[k]) sets[k] = malloc((size_t)p->W * sizeof *sets[k]);
    return sets[k];
}

/* The set buffer of recursion depth k. */
static inline uint64_t *pb_level(xe_pebble *p, int k) { return pb_depth_set(p, p->lv, k); }

/* Membership, insertion and removal of node v in set s. */
static inline int pb_has(const uint64_t *s, int v) { return (int)((s[v >> 6] >> (v & 63)) & 1u); }
static inline void pb_add(uint64_t *s, int v) { s[v >> 6] |= UINT64_C(1) << (v & 63); }
static inline void pb_del(uint64_t *s, int v) { s[v >> 6] &= ~(UINT64_C(1) << (v & 63)); }

/* pebble.c (each function's contract is at its definition) */
int pb_alap_order(xe_pebble *p, uint64_t *seed, double spread);
size_t pb_find_slot(const xe_pebble *p, const uint64_t *s);
void pb_memo_reset(xe_pebble *p);
int pb_is_empty(const uint64_t *s, int W);
int64_t pb_drop_forced(const xe_graph *g, uint64_t *S, int W, int *rec, size_t *nrec);
xe_pebble_answer pb_reach(xe_pebble *p, int depth, int64_t msize, int64_t B);
xe_pebble_answer pb_reach_in_turns(xe_pebble *p, int k, int64_t msize, int64_t budget, double deadline);

#endif
