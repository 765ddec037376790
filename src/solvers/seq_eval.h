/* Compute sequences on one device, shared by the event-list annealing (anneal.c) and
 * the reach windows (reach_window.c). Internal to the library.
 *
 * A sequence is the order of the computes; its frees are implied: each tensor is freed
 * right after its last read (at once when nothing reads it), so evaluating it is one
 * scan: the last read of every compute, then the resident bytes as a prefix sum of +mem
 * at a compute and -mem after its last read. */
#ifndef XENGINE_SOLVERS_SEQ_EVAL_H
#define XENGINE_SOLVERS_SEQ_EVAL_H

#include <stdint.h>

#include "xengine/error.h"
#include "xengine/instance.h"
#include "xengine/schedule.h"

/* Scratch of one evaluation, sized for `cap` computes (xe_seq_eval_init). */
typedef struct xe_seq_eval {
    const xe_graph *g;
    double *cost;       /* [n] seconds on the device */
    int64_t budget;     /* bytes */
    int *cur;           /* [n] position of each node's latest compute so far, -1 none */
    int *last;          /* [cap] last read of the compute at each position (itself if none) */
    int64_t *delta;     /* [cap + 1] change of the resident bytes at each position */
} xe_seq_eval;

/* Room for a sequence that starts with m computes of an n-node graph to grow: 4 m + 4 n
 * + 64 computes, at most INT32_MAX / 2. */
int xe_seq_cap(int m, int n);
/* Allocates e for sequences of up to cap computes on in's device 0 (e->cost filled from
 * it): XE_OK, or XE_ENOMEM with nothing left allocated. */
int xe_seq_eval_init(xe_seq_eval *e, const xe_instance *in, int cap);
/* Frees what xe_seq_eval_init allocated (a zeroed e: no-op). */
void xe_seq_eval_free(xe_seq_eval *e);
/* Evaluates seq[0..m) (m <= the scratch's capacity): 0 when some compute lacks an input
 * or (check_all) some node is never computed; else 1 with *cost (seconds), *over (bytes
 * above the budget summed over the computes) and *peak (bytes). Leaves e->last for the
 * frees. */
int xe_seq_evaluate(xe_seq_eval *e, const int *seq, int m, int check_all, double *cost, double *over, int64_t *peak);
/* Removes from seq[0..*m) every compute that nothing reads while its node is computed
 * elsewhere too (cnt[v]: computes of v, kept up to date), in passes until none is left.
 * Returns 1 with the evaluation of what is left (in e and *cost, *over, *peak), 0 when
 * seq is not valid. */
int xe_seq_drop_dead(xe_seq_eval *e, int *seq, int *m, int *cnt, double *cost, double *over, int64_t *peak);
/* Writes the schedule of seq[0..m) (computes, each followed by the frees of the tensors
 * read for the last time there; e holds seq's evaluation, its cost `cost` seconds) into
 * *out (cleared first) and replays it: XE_OK, XE_ENOMEM, or XE_EINTERNAL when the
 * simulator disagrees with the evaluation (invalid, over the budget, another cost); the
 * messages start with `who`. */
int xe_seq_write(const xe_instance *in, const xe_seq_eval *e, const int *seq, int m, double cost, xe_schedule *out,
                 const char *who, xe_err *err);

#endif
