/* Reach windows (include/xengine/solvers.h, xe_rwindow_improve; docs/lns.md, "Reach
 * windows"): large-neighbourhood search over one device's compute sequences, each
 * window re-solved by the reach recursion of bound_reach.c.
 *
 * The schedule in hand is a compute sequence; each tensor is freed right after its last
 * read (seq_eval.h). For a window [i, j) of it, R0 is the set of tensors resident before
 * i (computed before i, read at i or later) and T the set the sequence needs from j on
 * (computed before j, read at j or later), plus the nodes computed only inside the
 * window that no other such node reads (else a node could end up never computed; the
 * others are their ancestors within the window, so they are computed again whenever
 * these are). The cheapest list that starts with R0 resident and ends with T resident
 * within the budget costs
 *
 *     w(S) = 0                                                    where S is in R0,
 *     w(S) = min over s in S with mem(S u inputs(s)) <= budget of
 *            c(s) + w((S \ {s}) u inputs(s))                      otherwise,
 *
 * the reach recursion (bound_reach.c) with every subset of R0 reached at no cost: the
 * list's last compute of a member s finds the other members and s's inputs resident.
 * (a T that does not fit the budget: no list; the window is passed over). Weighted A*
 * from T towards subsets of R0 (RW_WEIGHT), with
 * - the estimate: the cost of every node that must still be computed, once: the members
 *   outside R0 and their ancestors, an ancestor in R0 ending the walk (admissible; a
 *   child's is its parent's less c(s) and the forced members' where s lies outside R0
 *   and is no ancestor of another member outside R0, else walked again);
 * - forced members outside R0 (inputs all in S, no ancestor of another member) removed
 *   at their cost without branching, as in bound_reach.c (members in R0 are not: kept
 *   from the start they cost nothing but bytes);
 * - dominance by one-smaller subsets stored at no more cost (w is monotone in S);
 * - an upper bound: the window's cost in hand; g + h at or above it is pruned, so only
 *   cheaper lists are found, and a search that empties its heap proves there is none.
 * The list found is spliced in (computes no longer read dropped), evaluated, and kept
 * where cheaper. Its frees are implied as before, so every tensor the window leaves
 * resident was in some state of the path, and the sequence peaks within the budget. */
#define _GNU_SOURCE /* MAP_ANONYMOUS, mremap: the store (reach_int.h) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/sim.h"
#include "xengine/solvers.h"
#include "xengine/timer.h"

#include "reach_int.h"
#include "rng.h"
#include "seq_eval.h"

#define RW_DEFAULT_MAX_LEN 160
#define RW_DEFAULT_EXPANDED 100000L
#define RW_START_LEN 40
#define RW_MIN_LEN 4
/* The order of the search: g + RW_WEIGHT h (weighted A*), so that a cheaper list is met
 * sooner; the pruning against the window's cost uses g + h, so no cheaper list is lost,
 * but the one found first need not be the window's cheapest. On random_layered_n250, one
 * GPU at 60%, 20 s from the same start (222.724 s), three seeds: 192.3/185.0/174.0 s with
 * 1 (plain A*), 148.5/165.6/175.3 s with 1.5, 152.8/167.3/174.5 s with 2. */
#define RW_WEIGHT 1.5

#define HAS(S, v) (((S)[(v) >> 6] >> ((v)&63)) & 1)
#define ADD(S, v) ((S)[(v) >> 6] |= 1ULL << ((v)&63))

/* How one window's search ended. */
enum { RW_FOUND, RW_NONE_CHEAPER, RW_CAPPED, RW_STOPPED, RW_NOMEM };

typedef struct rw {
    xe_rsearch *x;       /* the store and the graph's ancestor tables */
    const xe_graph *g;
    const double *c;     /* [n] seconds */
    int n, W;
    const uint64_t *R0;  /* [W] the window's base set */
    uint64_t *seen;      /* [W] scratch of rw_estimate */
    int *stk;            /* [n] */
    int *log, *log0;     /* [n] forced members removed in one normalisation; at the start */
    int nlog0;
    int *path;           /* the list found, computes in time order */
    int npath, pathcap;
} rw;

void xe_rwindow_opts_default(xe_rwindow_opts *o)
{
    memset(o, 0, sizeof *o);
    o->time_limit = 1.0;
    o->seed = 1;
}

/* The cost of every node that must still be computed before S is resident: the members
 * outside R0 and their ancestors, each walk ending at a node of R0. */
static double rw_estimate(rw *w, const uint64_t *S)
{
    const xe_graph *g = w->g;
    memset(w->seen, 0, sizeof *w->seen * (size_t)w->W);
    int sp = 0;
    double h = 0.0;
    for (int q = 0; q < w->W; q++)
        for (uint64_t b = S[q] & ~w->R0[q]; b; b &= b - 1) {
            int v = 64 * q + __builtin_ctzll(b);
            ADD(w->seen, v);
            w->stk[sp++] = v;
        }
    while (sp) {
        int v = w->stk[--sp];
        h += w->c[v];
        for (int k = g->pred_off[v]; k < g->pred_off[v + 1]; k++) {
            int u = g->pred[k];
            if (HAS(w->R0, u) || HAS(w->seen, u)) continue;
            ADD(w->seen, u);
            w->stk[sp++] = u;
        }
    }
    return h;
}

static int rw_in_base(const rw *w, const uint64_t *S)
{
    for (int q = 0; q < w->W; q++)
        if (S[q] & ~w->R0[q]) return 0;
    return 1;
}

/* Stores S (its estimate h, rw_estimate's) reached at cost g from `from` and pushes it
 * (ordered by g + RW_WEIGHT h) when new or cheaper and g + h is below ub. 0, or -1 at
 * the memory limit. */
static int rw_add(rw *w, const uint64_t *S, double g, double h, uint32_t from, double ub)
{
    xe_rsearch *x = w->x;
    int base = rw_in_base(w, S);
    if (base) h = 0.0;
    if (!(g + h < ub)) return 0; /* no cheaper list this way: h is admissible */
    int fail = 0;
    uint32_t id = xe_rs_improve(x, S, g, from, &fail);
    if (id == RS_NONE) return fail ? -1 : 0;
    return xe_rs_push(x, (rs_item){.f = g + RW_WEIGHT * h, .g = g, .id = id, .complete = base});
}

static int rw_path_push(rw *w, int v)
{
    if (w->npath == w->pathcap) {
        int nc = w->pathcap ? 2 * w->pathcap : 256;
        int *np = realloc(w->path, sizeof *np * (size_t)nc);
        if (!np) return -1;
        w->path = np;
        w->pathcap = nc;
    }
    w->path[w->npath++] = v;
    return 0;
}

/* The list from the base state `goal` to the start, computes in time order, into
 * w->path: each stored step read back (the member s and the forced members whose
 * removal turns (P \ {s}) u inputs(s) into the earlier state), then the start's forced
 * members. RW_FOUND, RW_NOMEM; -1 when a step does not read back (a bug). */
static int rw_read_back(rw *w, uint32_t goal)
{
    xe_rsearch *x = w->x;
    int W = w->W;
    uint64_t t[64];
    w->npath = 0;
    for (uint32_t id = goal; x->parent[id] != RS_NONE; id = x->parent[id]) {
        uint32_t to = x->parent[id];
        const uint64_t *P = x->keys + (size_t)to * (size_t)W, *C = x->keys + (size_t)id * (size_t)W;
        int found = 0;
        for (int q = 0; q < W && !found; q++)
            for (uint64_t b = P[q]; b && !found; b &= b - 1) {
                int s = 64 * q + __builtin_ctzll(b), nl = 0;
                xe_rs_step(x, P, s, t);
                double c = x->gbest[to] + w->c[s] + xe_rs_normalize(x, t, w->R0, w->log, &nl);
                if (memcmp(t, C, sizeof *t * (size_t)W) || c > x->gbest[id] + 1e-9 * fmax(1.0, fabs(x->gbest[id])))
                    continue;
                for (int k = nl - 1; k >= 0; k--)
                    if (rw_path_push(w, w->log[k])) return RW_NOMEM;
                if (rw_path_push(w, s)) return RW_NOMEM;
                found = 1;
            }
        if (!found) return -1;
    }
    for (int k = w->nlog0 - 1; k >= 0; k--)
        if (rw_path_push(w, w->log0[k])) return RW_NOMEM;
    return RW_FOUND;
}

/* The cheapest list from R0 to T below ub (seconds), A* as in the file comment, at most
 * max_exp states expanded: RW_FOUND (its cost in *cost, the list in w->path),
 * RW_NONE_CHEAPER (none below ub), RW_CAPPED (max_exp or the memory limit), RW_STOPPED
 * (deadline or interrupt), RW_NOMEM; -1 (a bug). */
static int rw_search(rw *w, const uint64_t *R0, const uint64_t *T, double ub, long max_exp, double deadline,
                     const volatile sig_atomic_t *intr, double *cost)
{
    xe_rsearch *x = w->x;
    int W = w->W;
    uint64_t S[64], t[64];
    w->R0 = R0;
    xe_rs_reset(x);
    /* the list ends with T resident: where T does not fit, no list does (T's forced
     * members, computed last, then fit too: everything resident lies in T) */
    if (xe_rs_mem(x, T) > x->budget) return RW_NONE_CHEAPER;
    memcpy(t, T, sizeof *t * (size_t)W);
    w->nlog0 = 0;
    double g0 = xe_rs_normalize(x, t, R0, w->log0, &w->nlog0);
    if (rw_add(w, t, g0, rw_estimate(w, t), RS_NONE, ub)) return RW_CAPPED;
    long own = 0;
    while (x->hn > 0) {
        if (xe_rs_stop(deadline, intr)) return RW_STOPPED;
        rs_item it = xe_rs_pop(x);
        if (it.g > x->gbest[it.id]) continue; /* stale */
        if (it.complete) {
            int r = rw_read_back(w, it.id);
            *cost = it.g;
            return r;
        }
        if (own++ >= max_exp) return RW_CAPPED;
        memcpy(S, x->keys + (size_t)it.id * (size_t)W, sizeof *S * (size_t)W);
        if (xe_rs_dominated(x, S, it.g)) continue;
        int64_t ms = xe_rs_mem(x, S);
        double h = rw_estimate(w, S);
        const xe_graph *g = w->g;
        for (int q = 0; q < W; q++)
            for (uint64_t b = S[q]; b; b &= b - 1) {
                int s = 64 * q + __builtin_ctzll(b);
                int64_t extra = 0;
                for (int k = g->pred_off[s]; k < g->pred_off[s + 1]; k++)
                    if (!HAS(S, g->pred[k])) extra += g->nodes[g->pred[k]].mem;
                if (ms + extra > x->budget) continue;
                xe_rs_step(x, S, s, t);
                double forced = xe_rs_normalize(x, t, R0, NULL, NULL);
                /* where s is outside R0 and no ancestor of another member outside R0,
                 * the walk loses s and the forced members, nothing else (s's inputs
                 * were in it through s); else it is walked again (s in R0 adds its
                 * inputs; an ancestor may or may not be reached past R0) */
                int walk = HAS(R0, s);
                const uint64_t *dv = w->x->desc + (size_t)s * (size_t)W;
                for (int k = 0; k < W && !walk; k++) walk = (dv[k] & S[k] & ~R0[k]) != 0;
                double hs = walk ? rw_estimate(w, t) : fmax(0.0, h - w->c[s] - forced);
                if (rw_add(w, t, it.g + w->c[s] + forced, hs, it.id, ub)) return RW_CAPPED;
                if (xe_rs_stop(deadline, intr)) return RW_STOPPED; /* a wide state's children
                    can take a good part of a second (a dense 4,000-node DAG: 0.57 s over a
                    1-s limit when only checked at each state popped) */
            }
    }
    return RW_NONE_CHEAPER;
}

/* The window [i, j) of seq[0..m) (last[]: each compute's last read, cnt[]: computes of
 * each node): R0 and T (file comment) and the window's cost. win[]: scratch [n]. */
static double rw_sets(const rw *w, const int *seq, const int *last, const int *cnt, int *win, int i, int j,
                      uint64_t *R0, uint64_t *T)
{
    const xe_graph *g = w->g;
    memset(R0, 0, sizeof *R0 * (size_t)w->W);
    memset(T, 0, sizeof *T * (size_t)w->W);
    for (int p = 0; p < j; p++) {
        if (p < i && last[p] >= i) ADD(R0, seq[p]);
        if (last[p] >= j) ADD(T, seq[p]);
    }
    memset(win, 0, sizeof *win * (size_t)w->n);
    double old = 0.0;
    for (int p = i; p < j; p++) {
        win[seq[p]]++;
        old += w->c[seq[p]];
    }
    for (int p = i; p < j; p++) {
        int v = seq[p];
        if (win[v] != cnt[v]) continue; /* computed outside the window too */
        int top = 1;
        for (int k = g->succ_off[v]; k < g->succ_off[v + 1] && top; k++) top = !(win[g->succ[k]] && win[g->succ[k]] == cnt[g->succ[k]]);
        if (top) ADD(T, v);
    }
    return old;
}

int xe_rwindow_improve(const xe_instance *in, const xe_schedule *start, const xe_rwindow_opts *o, xe_schedule *out,
                       xe_rwindow_result *res, xe_err *err)
{
    double t0 = xe_now();
    memset(res, 0, sizeof *res);
    xe_schedule_clear(out);
    const xe_graph *g = in->g;
    int n = g->n;
    if (in->ndev != 1 || !(o->time_limit > 0) || o->max_len < 0 || o->max_expanded < 0 || o->max_windows < 0 || n < 1)
        return xe_err_set(err, XE_EINVAL, "reach windows: need one device, a time limit > 0 and options >= 0");
    xe_sim_result sr;
    xe_err e2;
    if (xe_sim_run(in, start, &sr, &e2) != XE_OK)
        return xe_err_set(err, XE_EINVAL, "reach windows: the start is not valid: %s", e2.msg);
    if (sr.dev[0].peak > in->dev[0].budget)
        return xe_err_set(err, XE_EINVAL, "reach windows: the start peaks at %lld B, above the budget %lld B",
                          (long long)sr.dev[0].peak, (long long)in->dev[0].budget);
    int m = 0;
    for (int k = 0; k < start->len; k++) {
        if (start->ev[k].kind == XE_EV_COMPUTE) m++;
        else if (start->ev[k].kind != XE_EV_FREE)
            return xe_err_set(err, XE_EINVAL, "reach windows: the start has an event other than compute and free");
    }
    int cap = xe_seq_cap(m, n);
    double deadline = t0 + o->time_limit;
    int max_len = o->max_len > 0 ? o->max_len : RW_DEFAULT_MAX_LEN;
    long max_exp = o->max_expanded > 0 ? o->max_expanded : RW_DEFAULT_EXPANDED;
    int *seq = malloc((size_t)cap * sizeof *seq), *cand = malloc((size_t)cap * sizeof *cand);
    int *last = malloc((size_t)cap * sizeof *last), *cnt = calloc((size_t)n, sizeof *cnt);
    int *ccnt = malloc((size_t)n * sizeof *ccnt), *win = malloc((size_t)n * sizeof *win);
    xe_seq_eval e;
    int rc = xe_seq_eval_init(&e, in, cap);
    rw w = {.g = g, .c = e.cost, .n = n, .W = (n + 63) / 64};
    w.seen = malloc(sizeof *w.seen * (size_t)w.W);
    w.stk = malloc(sizeof *w.stk * (size_t)n);
    w.log = malloc(sizeof *w.log * (size_t)n);
    w.log0 = malloc(sizeof *w.log0 * (size_t)n);
    uint64_t R0[64], T[64];
    if (rc || !seq || !cand || !last || !cnt || !ccnt || !win || !w.seen || !w.stk || !w.log || !w.log0) {
        rc = xe_err_set(err, XE_ENOMEM, "reach windows: out of memory for %d computes", cap);
        goto out;
    }
    m = 0;
    for (int k = 0; k < start->len; k++)
        if (start->ev[k].kind == XE_EV_COMPUTE) seq[m++] = start->ev[k].node;
    for (int k = 0; k < m; k++) cnt[seq[k]]++;
    double cur, over;
    int64_t peak;
    if (!xe_seq_drop_dead(&e, seq, &m, cnt, &cur, &over, &peak) || over > 0) {
        rc = xe_err_set(err, XE_EINTERNAL, "reach windows: the start's computes do not replay as the simulator did");
        goto out;
    }
    memcpy(last, e.last, (size_t)m * sizeof *last);
    res->start_cost = cur;
    w.x = n <= XE_BOUND_SEARCH_MAX_NODES ? xe_rsearch_new(in, o->max_bytes) : NULL;
    uint64_t rs = o->seed;
    int len = RW_START_LEN < max_len ? RW_START_LEN : max_len;
    while (w.x && m >= 1) {
        if (xe_rs_stop(deadline, o->interrupt) || (o->target > 0 && cur <= o->target) ||
            (o->max_windows > 0 && res->windows >= o->max_windows))
            break;
        if (len > m) len = m;
        int lo = len / 2 > 1 ? len / 2 : 1;
        int L = lo + (int)(xe_splitmix64(&rs) % (uint64_t)(len - lo + 1));
        int i = (int)(xe_splitmix64(&rs) % (uint64_t)(m - L + 1));
        if (xe_splitmix64(&rs) & 1) { /* around a recomputation, drawn at random */
            int p = (int)(xe_splitmix64(&rs) % (uint64_t)m), tries = 0;
            while (cnt[seq[p]] < 2 && tries++ < m) p = (p + 1) % m;
            i = p - L / 2 < 0 ? 0 : p - L / 2 > m - L ? m - L : p - L / 2;
        }
        int j = i + L;
        double old = rw_sets(&w, seq, last, cnt, win, i, j, R0, T);
        double found = INFINITY;
        int r = rw_search(&w, R0, T, old - 1e-9 * fmax(1.0, old), max_exp, deadline, o->interrupt, &found);
        if (r == RW_STOPPED) break;
        res->windows++;
        if (r == RW_NOMEM) {
            rc = xe_err_set(err, XE_ENOMEM, "reach windows: out of memory");
            goto out;
        }
        if (r < 0) {
            rc = xe_err_set(err, XE_EINTERNAL, "reach windows: a path of window [%d, %d) does not read back", i, j);
            goto out;
        }
        if (r == RW_CAPPED) {
            res->capped++;
            len = len * 3 / 4 > RW_MIN_LEN ? len * 3 / 4 : RW_MIN_LEN;
            if (len > max_len) len = max_len;
            continue;
        }
        len = len + 1 + len / 8 < max_len ? len + 1 + len / 8 : max_len;
        if (r != RW_FOUND) continue;
        int cm = i + w.npath + (m - j);
        if (cm > cap) continue; /* a longer list than the room kept: not taken */
        memcpy(cand, seq, (size_t)i * sizeof *cand);
        if (w.npath) memcpy(cand + i, w.path, (size_t)w.npath * sizeof *cand);
        memcpy(cand + i + w.npath, seq + j, (size_t)(m - j) * sizeof *cand);
        memset(ccnt, 0, (size_t)n * sizeof *ccnt);
        for (int k = 0; k < cm; k++) ccnt[cand[k]]++;
        double cc;
        if (!xe_seq_drop_dead(&e, cand, &cm, ccnt, &cc, &over, &peak) || over > 0 || !(cc <= cur - (old - found) + 1e-9 * fmax(1.0, cur))) {
            rc = xe_err_set(err, XE_EINTERNAL,
                            "reach windows: window [%d, %d) re-solved at %.9g s does not give a valid sequence of %.9g s", i,
                            j, found, cur - (old - found));
            goto out;
        }
        if (!(cc < cur * (1 - 1e-12))) continue;
        int *tmp = seq;
        seq = cand;
        cand = tmp;
        m = cm;
        memcpy(cnt, ccnt, (size_t)n * sizeof *cnt);
        memcpy(last, e.last, (size_t)m * sizeof *last);
        cur = cc;
        res->improved++;
        res->time_best = xe_now() - t0;
    }
    /* the schedule of the cheapest sequence: e holds its evaluation after one more pass */
    if (!xe_seq_evaluate(&e, seq, m, 1, &cur, &over, &peak) || over > 0) {
        rc = xe_err_set(err, XE_EINTERNAL, "reach windows: the sequence kept is not valid");
        goto out;
    }
    rc = xe_seq_write(in, &e, seq, m, cur, out, "reach windows", err);
    res->cost = cur;
    res->max_len = len;
out:
    res->time_total = xe_now() - t0;
    xe_rsearch_free(w.x);
    free(w.path);
    free(w.seen);
    free(w.stk);
    free(w.log);
    free(w.log0);
    free(seq);
    free(cand);
    free(last);
    free(cnt);
    free(ccnt);
    free(win);
    xe_seq_eval_free(&e);
    return rc;
}
