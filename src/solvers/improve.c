/* Local improvement of a valid stage schedule (docs/heuristic.md, "Local improvement"):
 * keep instead of recompute, keep after a local prune, copy earlier. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "stage_mem.h"
#include "xengine/solvers.h"
#include "xengine/timer.h"

/* At most this many rounds of moves (each over every candidate). */
#define IMPROVE_MAX_ROUNDS 8

typedef struct move_cand {
    int t, i, d;
    double gain;
} move_cand;

static int cmp_gain(const void *a, const void *b)
{
    double x = ((const move_cand *)a)->gain, y = ((const move_cand *)b)->gain;
    return (x < y) - (x > y);
}

double xe_heur_improve_seconds(const xe_instance *in) { return in->g->n > 300 ? 0.1 : 0.25; }

/* 1 when i is a zero-cost source on d: no inputs, runs on d at cost 0. */
static int free_source(const xe_instance *in, int i, int d)
{
    return xe_graph_npred(in->g, i) == 0 && xe_can_run(in, i, d) && xe_cost(in, i, d) == 0.0;
}

/* Zero-cost sources (free_source) of st, where no copy touches them: removed from every
 * checkpoint set after their first computation and recomputed in each stage where a
 * compute on d reads them. Computed at their own step, they are resident from there to
 * their last reader in the stage instead of from the stage's start: memory only drops,
 * the cost stays. Returns how many (node, device) pairs changed. */
static int purge_free_sources(const xe_instance *in, xe_stages *st)
{
    const xe_graph *g = in->g;
    int n = st->n, D = st->ndev, changed = 0;
    for (int i = 0; i < n; i++) {
        for (int d = 0; d < D; d++) {
            if (!free_source(in, i, d)) continue;
            int copied = 0;
            for (int t = 0; t < n && !copied; t++) copied = xe_heur_cin(st, t, i, d) || xe_heur_cout(st, t, i, d);
            if (copied) continue;
            int any = 0;
            for (int t = i + 1; t < n; t++) {
                if (!*xe_S(st, t, i, d)) continue;
                int read = 0;
                for (int q = g->succ_off[i]; q < g->succ_off[i + 1] && !read; q++)
                    read = g->succ[q] <= t && *xe_R(st, t, g->succ[q], d);
                *xe_S(st, t, i, d) = 0;
                *xe_R(st, t, i, d) = (uint8_t)read;
                any = 1;
            }
            changed += any;
        }
    }
    return changed;
}

static int improve_moves(const xe_instance *in, xe_stages *st, double max_seconds, int moves, xe_err *err);

int xe_heur_improve(const xe_instance *in, xe_stages *st, double max_seconds, xe_err *err)
{
    /* the copy moves evaluate up to t - s stages per try, O(n^2) per candidate: above
     * XE_IMPROVE_COPY_MAX_N nodes they would take the whole time for nothing found (a
     * 1,000-node training chain on two devices: 0.43 s instead of 0.24 s, same cost) */
    int moves = in->g->n <= XE_IMPROVE_COPY_MAX_N ? XE_IMPROVE_ALL : XE_IMPROVE_KEEP | XE_IMPROVE_ROUNDS;
    return xe_heur_improve_ex(in, st, max_seconds, moves, err);
}

int xe_heur_improve_ex(const xe_instance *in, xe_stages *st, double max_seconds, int moves, xe_err *err)
{
    double t0 = xe_now();
    int rc = improve_moves(in, st, max_seconds, moves, err);
    if (rc) return rc;
    /* again from the schedule with its zero-cost sources recomputed where read, the
     * cheaper kept: the room they free can let the moves keep a dearer tensor
     * (random_layered_n100 one GPU at 70%: 51.184 s instead of 51.322 s); no copy where
     * the graph has none (most models) or no time is left */
    int any = 0;
    for (int i = 0; i < st->n && !any; i++)
        for (int d = 0; d < st->ndev && !any; d++) any = free_source(in, i, d);
    double left = max_seconds - (xe_now() - t0);
    if (!any || !(left > 0)) return XE_OK;
    xe_stages alt;
    if (xe_stages_copy(&alt, st)) return xe_err_set(err, XE_ENOMEM, "improve: out of memory");
    if (purge_free_sources(in, &alt) > 0) {
        xe_err e2;
        if (xe_stages_check(in, &alt, &e2) == XE_OK) {
            rc = improve_moves(in, &alt, left, moves, err);
            if (rc == XE_OK && xe_stages_cost(in, &alt) < xe_stages_cost(in, st) * (1 - 1e-12)) {
                xe_stages t = *st;
                *st = alt;
                alt = t;
            }
        }
    }
    xe_stages_clear(&alt);
    return rc;
}

/* Working memory of the moves: an undo log of the entries a move changed (so a failed
 * move is taken back in the time it took), its cost change, and a work list of
 * (node, device) pairs whose residency may have become useless. */
typedef struct undo_ent {
    uint8_t *p;
    uint8_t old;
} undo_ent;

typedef struct improve_ws {
    int64_t *U;
    int *last;
    undo_ent *log;
    size_t nlog, caplog;
    double delta; /* seconds the move added (negative: saved) */
    double cost;  /* seconds: the schedule's cost, kept up to date by every kept move */
    int *work;    /* pairs j * ndev + d */
    uint8_t *queued;
    int nwork;
    int oom;
} improve_ws;

static void ws_set(improve_ws *w, uint8_t *p, uint8_t v)
{
    if (*p == v) return;
    if (w->nlog == w->caplog) {
        size_t cap = w->caplog ? 2 * w->caplog : 256;
        undo_ent *q = realloc(w->log, cap * sizeof *q);
        if (!q) {
            w->oom = 1;
            return;
        }
        w->log = q;
        w->caplog = cap;
    }
    w->log[w->nlog++] = (undo_ent){p, *p};
    *p = v;
}

static void set_R(const xe_instance *in, xe_stages *st, improve_ws *w, int q, int j, int d, uint8_t v)
{
    uint8_t *p = xe_R(st, q, j, d);
    if (*p == v) return;
    w->delta += v ? xe_cost(in, j, d) : -xe_cost(in, j, d);
    ws_set(w, p, v);
}

static void set_C(const xe_instance *in, xe_stages *st, improve_ws *w, int q, int j, int e, int d, uint8_t v)
{
    uint8_t *p = xe_C(st, q, j, e, d);
    if (*p == v) return;
    w->delta += v ? xe_copy_cost(in, j, e, d) : -xe_copy_cost(in, j, e, d);
    ws_set(w, p, v);
}

static void ws_begin(improve_ws *w)
{
    w->nlog = 0;
    w->delta = 0;
    w->oom = 0;
}

static void ws_undo(improve_ws *w)
{
    while (w->nlog) {
        undo_ent *u = &w->log[--w->nlog];
        *u->p = u->old;
    }
    w->delta = 0;
}

static void queue_pair(improve_ws *w, int D, int j, int d)
{
    int k = j * D + d;
    if (w->queued[k]) return;
    w->queued[k] = 1;
    w->work[w->nwork++] = k;
}

/* 1 when j on d in stage q is read: kept into q+1, copied out, or read by a user
 * computed on d later in the stage (xe_stages_prune's rule). */
static int needed(const xe_graph *g, const xe_stages *st, int q, int j, int d)
{
    if (q + 1 < st->n && *xe_S(st, q + 1, j, d)) return 1;
    if (xe_heur_cout(st, q, j, d)) return 1;
    for (int p = g->succ_off[j]; p < g->succ_off[j + 1]; p++) {
        int u = g->succ[p];
        if (u > j && u <= q && *xe_R(st, q, u, d)) return 1;
    }
    return 0;
}

/* xe_stages_prune for the queued (node, device) pairs only, through the undo log: in
 * every stage after j's first, j's residency on d that nothing needs is removed; a
 * removed recomputation queues its inputs on d, a removed copy in its source. Cost and
 * memory only go down. */
static void prune_queued(const xe_instance *in, xe_stages *st, improve_ws *w)
{
    const xe_graph *g = in->g;
    int D = st->ndev;
    while (w->nwork) {
        int k = w->work[--w->nwork], j = k / D, d = k % D;
        w->queued[k] = 0;
        for (int q = st->n - 1; q > j; q--) {
            if (!xe_heur_present(st, q, j, d) || needed(g, st, q, j, d)) continue;
            if (*xe_R(st, q, j, d)) {
                set_R(in, st, w, q, j, d, 0);
                for (int p = g->pred_off[j]; p < g->pred_off[j + 1]; p++) queue_pair(w, D, g->pred[p], d);
            }
            ws_set(w, xe_S(st, q, j, d), 0);
            for (int e = 0; e < D; e++)
                if (e != d && *xe_C(st, q, j, e, d)) {
                    set_C(in, st, w, q, j, e, d, 0);
                    queue_pair(w, D, j, e);
                }
        }
    }
}

/* 1 when stages s..t of st fit every budget (exact stage accounting). */
static int stages_fit(const xe_instance *in, const xe_stages *st, int s, int t, improve_ws *w)
{
    for (int q = s; q <= t; q++) {
        int kk, dd;
        xe_heur_stage_eval(in, st, q, w->U, w->last);
        if (xe_heur_worst_overflow(in, q, w->U, &kk, &dd) > 0) return 0;
    }
    return 1;
}

/* Keeps i on d as a checkpoint through stages s+1..t: S = 1, no recomputation or copy
 * in; what the removed recomputations read on d and the removed copies' sources are
 * queued for prune_queued. */
static void keep_apply(const xe_instance *in, xe_stages *st, int s, int t, int i, int d, improve_ws *w)
{
    const xe_graph *g = in->g;
    int D = st->ndev;
    for (int q = s + 1; q <= t; q++) {
        ws_set(w, xe_S(st, q, i, d), 1);
        if (*xe_R(st, q, i, d)) {
            set_R(in, st, w, q, i, d, 0);
            for (int p = g->pred_off[i]; p < g->pred_off[i + 1]; p++) queue_pair(w, D, g->pred[p], d);
        }
        for (int e = 0; e < D; e++)
            if (e != d && *xe_C(st, q, i, e, d)) {
                set_C(in, st, w, q, i, e, d, 0);
                queue_pair(w, D, i, e);
            }
    }
}

/* Move 1: keep i on d since s, the latest earlier stage where it is present there, and
 * give up what was resident only to recompute or copy it in later (VGG16 on GPU + CPU
 * at 80%: block1_conv1 held on the GPU to recompute block1_conv2 late, once move 2 has
 * moved block1_conv1's copy to the CPU earlier). Kept when stages s..t fit (the pruning
 * only lowers memory elsewhere). Returns 1 when applied. */
static int move_keep(const xe_instance *in, xe_stages *st, int t, int i, int d, improve_ws *w)
{
    int s = t - 1;
    while (s >= i && !xe_heur_present(st, s, i, d)) s--;
    if (s < i) return 0;
    ws_begin(w);
    keep_apply(in, st, s, t, i, d, w);
    prune_queued(in, st, w);
    if (!w->oom && w->delta < 0 && stages_fit(in, st, s, t, w)) return 1;
    ws_undo(w);
    return 0;
}

/* Move 2 (several devices): copy i to d from device e at step i of an earlier stage s
 * where i is on e (computed there, or kept) and not on d, and keep it on d through
 * s+1..t instead of recomputing or copying it in later; a recomputation on e that only
 * fed the old copy goes. Sources tried: for each e, the earliest such stage, then the
 * latest. Kept when stages s..t fit and the cost falls, or, with allow_equal, does not
 * rise: an equal-cost move (a copy moved earlier) can free e for move 1 in the next
 * round. VGG16 on GPU + CPU at 50%: block1_conv1 recomputed on the GPU at the end to be
 * copied to the CPU; copied at its first computation instead (21.357 s -> 20.972 s).
 * Returns 1 when applied. */
static int move_copy_earlier(const xe_instance *in, xe_stages *st, int t, int i, int d, int allow_equal, improve_ws *w)
{
    int D = st->ndev;
    double tol = 1e-12 * fabs(w->cost) * (allow_equal ? 1 : -1);
    for (int e = 0; e < D; e++) {
        if (e == d) continue;
        int first = -1, lastq = -1;
        for (int s = i; s < t; s++) {
            int on_e = *xe_R(st, s, i, e) || (s > i && *xe_S(st, s, i, e));
            if (!on_e || xe_heur_present(st, s, i, d)) continue;
            if (first < 0) first = s;
            lastq = s;
        }
        for (int k = 0; k < 2 && first >= 0; k++) {
            int s = k == 0 ? first : lastq;
            if (k == 1 && lastq == first) break;
            ws_begin(w);
            set_C(in, st, w, s, i, e, d, 1);
            keep_apply(in, st, s, t, i, d, w);
            prune_queued(in, st, w);
            if (!w->oom && w->delta <= tol && stages_fit(in, st, s, t, w))
                return 1;
            ws_undo(w);
        }
    }
    return 0;
}

/* One round: every recomputation or incoming copy of i on d in a later stage, most
 * expensive first, tried with move 1, then move 2; then xe_stages_prune. *moved = 1 when
 * a move was kept. */
static int improve_round(const xe_instance *in, xe_stages *st, double t0, double max_seconds, int moves,
                         int allow_equal, improve_ws *w, move_cand **cand, size_t *cap, int *moved, xe_err *err)
{
    int n = st->n, D = st->ndev;
    size_t nc = 0;
    *moved = 0;
    for (int t = 1; t < n; t++)
        for (int i = 0; i < t; i++)
            for (int d = 0; d < D; d++) {
                double gain = *xe_R(st, t, i, d) ? xe_cost(in, i, d) : 0;
                for (int e = 0; e < D; e++)
                    if (e != d && *xe_C(st, t, i, e, d)) gain += xe_copy_cost(in, i, e, d);
                if (!(gain > 0)) continue;
                if (nc == *cap) {
                    move_cand *q = realloc(*cand, 2 * *cap * sizeof *q);
                    if (!q) return xe_err_set(err, XE_ENOMEM, "improve: out of memory");
                    *cand = q;
                    *cap *= 2;
                }
                (*cand)[nc++] = (move_cand){t, i, d, gain};
            }
    qsort(*cand, nc, sizeof **cand, cmp_gain);
    w->cost = xe_stages_cost(in, st);
    for (size_t c = 0; c < nc; c++) {
        if (xe_now() - t0 > max_seconds) break;
        int t = (*cand)[c].t, i = (*cand)[c].i, d = (*cand)[c].d;
        if (!*xe_R(st, t, i, d) && !xe_heur_cin(st, t, i, d)) continue; /* gone already */
        int kept = move_keep(in, st, t, i, d, w);
        if (!kept && !w->oom && D > 1 && (moves & XE_IMPROVE_COPY))
            kept = move_copy_earlier(in, st, t, i, d, allow_equal, w);
        if (w->oom) return xe_err_set(err, XE_ENOMEM, "improve: out of memory");
        if (kept) {
            w->cost += w->delta;
            *moved = 1;
        }
    }
    xe_stages_prune(in, st);
    return XE_OK;
}

/* Rounds of strict improvements until none is found; then, on several devices, one
 * round that also keeps equal-cost copies moved earlier, followed by strict rounds, kept
 * only when the schedule became cheaper (else the state before it is restored). */
static int improve_moves(const xe_instance *in, xe_stages *st, double max_seconds, int moves, xe_err *err)
{
    int n = st->n, D = st->ndev;
    double t0 = xe_now();
    xe_stages orig, before_equal = {0};
    if (xe_stages_copy(&orig, st)) return xe_err_set(err, XE_ENOMEM, "improve: out of memory");
    improve_ws w = {0};
    w.U = malloc((size_t)(n ? n : 1) * D * sizeof *w.U);
    w.last = malloc((size_t)(n ? n : 1) * D * sizeof *w.last);
    w.work = malloc((size_t)(n ? n : 1) * D * sizeof *w.work);
    w.queued = calloc((size_t)(n ? n : 1) * D, 1);
    size_t cap = 1024;
    move_cand *cand = malloc(cap * sizeof *cand);
    int rc = XE_OK;
    if (!w.U || !w.last || !w.work || !w.queued || !cand) {
        rc = xe_err_set(err, XE_ENOMEM, "improve: out of memory");
        goto out;
    }
    int equal_round = -1;
    double cost_before_equal = 0;
    int rounds = moves & XE_IMPROVE_ROUNDS ? IMPROVE_MAX_ROUNDS : 1;
    for (int round = 0; round < rounds && xe_now() - t0 <= max_seconds; round++) {
        int moved;
        rc = improve_round(in, st, t0, max_seconds, moves, round == equal_round, &w, &cand, &cap, &moved, err);
        if (rc) goto out;
        if (moved) continue;
        if (equal_round >= 0 || D < 2 || !(moves & XE_IMPROVE_COPY)) break;
        /* a strict local optimum: one round with equal-cost copies moved earlier */
        if (xe_stages_copy(&before_equal, st)) {
            rc = xe_err_set(err, XE_ENOMEM, "improve: out of memory");
            goto out;
        }
        cost_before_equal = xe_stages_cost(in, st);
        equal_round = round + 1;
    }
    if (before_equal.R && !(xe_stages_cost(in, st) < cost_before_equal * (1 - 1e-12))) {
        xe_stages t = *st;
        *st = before_equal;
        before_equal = t;
    }
    /* safety net: the moves keep every structural rule by construction; verify it */
    xe_err e2;
    if (xe_stages_check(in, st, &e2) != XE_OK || xe_stages_cost(in, st) > xe_stages_cost(in, &orig)) {
        xe_stages_clear(st);
        *st = orig;
        memset(&orig, 0, sizeof orig);
    }
out:
    xe_stages_clear(&orig);
    xe_stages_clear(&before_equal);
    free(w.U), free(w.last), free(w.log), free(w.work), free(w.queued), free(cand);
    return rc;
}
