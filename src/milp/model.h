/* Internal: the MILP of docs/formulation.md as plain arrays, built before any solver
 * sees it (src/milp/model.c), so the CBC driver only loads and solves. */
#ifndef XE_MILP_MODEL_H
#define XE_MILP_MODEL_H

#include <stdint.h>

#include "xengine/instance.h"
#include "xengine/stages.h"

typedef struct xe_free_var {
    int t, i, k, d;
} xe_free_var;

typedef struct xe_model {
    int n, D;
    double mscale;       /* bytes per memory unit in the rows (a power of two) */
    int *iR, *iS, *iU;   /* [n][n][D] column index, -1 when the variable does not exist */
    int *iC;             /* [n][n][D][D] */
    int *iSig;           /* [n][D] overflow column of (stage, device), NULL without soft
                            budgets (xe_model_build_soft) */
    double soft_units[XE_MAX_DEV]; /* soft budgets in memory units, with iSig */
    int nfree;
    xe_free_var *fv;     /* FREE columns, in column order starting at col free0 */
    int free0;
    /* columns */
    int ncols, capcols;
    double *obj, *clb, *cub;
    char *isint;
    /* rows, as triplets */
    int nrows, caprows;
    double *rlb, *rub;
    int nnz, capnz;
    int *trow, *tcol;
    double *tval;
} xe_model;

/* Builds the model for in; XE_ENOMEM on allocation failure. Free with xe_model_clear. */
int xe_model_build(const xe_instance *in, xe_model *m, xe_err *err);

/* The same model with soft budgets (docs/lns.md, "Budget descent"): soft[d] bytes per
 * device, at most in's budget (which stays the hard cap of every U). For every stage t
 * and device d an overflow column sigma[t][d] >= 0 (memory units), rows
 * U[t][k][d] - sigma[t][d] <= soft[d] for every step k, and sigma in the objective with
 * weight `weight` seconds per byte of overflow. soft == NULL: the plain
 * model. XE_ENOMEM. */
int xe_model_build_soft(const xe_instance *in, const int64_t *soft, double weight, xe_model *m, xe_err *err);
void xe_model_clear(xe_model *m);

/* Knapsack rows (docs/formulation.md, constraint 9), appended to a built model for the
 * stages t0 <= t < t1 (clamped to [0, n)): for every stage t, step k <= t and device d,
 *   sum_{u < k, u not an input of k} mem_u S[t+1][u][d] + sum_{k <= u < t} mem_u S[t][u][d]
 *     + footprint(k) R[t][k][d] <= budget[d]
 * (bytes / m->mscale). At step k every checkpoint u >= k of stage t is still held (a
 * tensor is freed only at its own step or a user's), every u < k that stage t+1 keeps
 * is held already, and k runs with its inputs and output: each row holds at every valid
 * schedule. Rows that can never bind (all their coefficients fit) are left out. Binary
 * columns only, where the budget rows (8) go through the continuous U: the LP bound does
 * not move, but CBC's cuts (knapsack covers) see them. About (t1 - t0) n rows and
 * (t1 - t0) n^2 / 2 entries per device. XE_ENOMEM. */
int xe_model_add_knapsack(const xe_instance *in, xe_model *m, int t0, int t1, xe_err *err);

/* Column values [ncols] for a stage schedule that passed xe_stages_check (MIP start). */
int xe_model_start_values(const xe_instance *in, const xe_model *m, const xe_stages *st,
                          double *x, xe_err *err);

/* Reads R, S, C from a column vector (rounded at 0.5) into st (initialised here). */
int xe_model_extract(const xe_model *m, const double *x, xe_stages *st);

/* Substitutes the columns with fixed[c] != 0 by their values x[c] (window solves of
 * LNS): sub gets every other column of m, in order (map[k] = m's column of sub's column
 * k; map has room for m->ncols), and every row with at least one of them, its bounds
 * shifted by the fixed part; a row left with no free column is checked against x
 * (XE_EINVAL when violated by more than 1e-6). *objconst = sum of obj[c] * x[c] over the
 * fixed columns. sub owns only its column, row and triplet arrays (xe_model_clear). */
int xe_model_reduce(const xe_model *m, const uint8_t *fixed, const double *x, xe_model *sub, int *map,
                    double *objconst, xe_err *err);

#endif
