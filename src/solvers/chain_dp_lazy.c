/* The chain DP top-down (docs/chain-dp.md, src/solvers/chain_dp.h): lazy evaluation at
 * the budgets queries reach, each result cached with the interval of budgets over which it
 * holds, delegation to other devices, and the schedule read back from either evaluation. */
#include "chain_dp.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/sim.h"
#include "xengine/timer.h"

/* ---- lazy evaluation ------------------------------------------------------------------ */

/* The same recursion evaluated top-down only at the budgets actually queried. A query of
 * (kind, s, t) at m returns the optimum there and an interval [lo, hi] of m over which
 * that value and choice stay optimal; the interval is cached, so a later query inside
 * it costs a binary search. Every function of the recursion is non-increasing in m, so:
 * below m the argmin's value holds down to its own interval's start (every other
 * candidate only grows), and above m it holds until the argmin's interval ends or a
 * candidate that could still beat it (its lower bound, everything computed once, is
 * below the optimum) changes value. */

typedef struct lz_ent {
    int64_t lo, hi; /* bytes: the entry holds for lo <= m <= hi */
    double cost;    /* seconds, INFINITY when infeasible; a lower bound when lbnd */
    int choice;     /* as xe_cdp_pt.choice */
    int lbnd;       /* 1: only "the optimum is at least cost" is known on [lo, hi] (an
                       evaluation cut short by its caller's bound) */
} lz_ent;

typedef struct lz_vec {
    double *lbs;  /* [cap] the largest cost of entries i..n-1: the value is at least lbs[i] at
                     every budget up to e[i].hi (it never grows with the budget), and lbs
                     does not grow with i */
    lz_ent *e;
    int n, cap;
} lz_vec;

struct xe_cdp_lazy {
    const xe_cdp_model *m;
    int L;
    lz_vec *v;    /* [2][L+2][L+2] cached intervals, sorted by lo, disjoint */
    double *pfc;  /* [L+2] pfc[p+1] = sum of FC over path nodes 0..p (pfc[0] = 0) */
    double *pgc;  /* [L+2] the same for group costs */
    double *lbt;  /* [2][L+2][L+2] lz_min_calc of (kind, s, t), t >= s */
    int64_t *mr;  /* [2][L+2][L+2] the least budget at which (kind, s, t) is feasible */
    int *hw;      /* [L+2] hw[t+1]: the highest path node p <= t whose group has work (L for
                     t = L: x_L is always computed), -1 when none */
    long nent;    /* evaluations done (entries cached) */
    xe_cdp_lazy **dz; /* [ndz] subproblems may be delegated to these (other devices, whole
                         budget each; not owned) */
    int ndz;
    double deadline;     /* xe_now() seconds after which evaluations stop; 0: none */
    unsigned long ticks; /* evaluations since the last clock read */
    int timed_out;       /* the deadline passed during an evaluation */
};

static inline int64_t sat_add(int64_t a, int64_t b) { return a > INT64_MAX - b ? INT64_MAX : a + b; }

/* Lower bound on the cost of (kind, s, t): every group of the subproblem, and every path
 * node from s+1 up to the highest one a group of it reads, computed once (an empty group
 * t < L may be skipped, and x_t with it). */
static double lz_min_calc(const xe_cdp_lazy *z, int kind, int s, int t)
{
    if (t < s) return 0.0;
    int top = z->hw[t + 1];
    double f = top > s ? z->pfc[top + 1] - z->pfc[s + 1] : 0.0;
    int g0 = kind == 0 ? s : s + 1;
    if (g0 < 0) g0 = 0;
    return f + (t >= g0 ? z->pgc[t + 1] - z->pgc[g0] : 0.0);
}

/* lz_min_calc from the table (the evaluations' most frequent computation). */
static inline double lz_min(const xe_cdp_lazy *z, int kind, int s, int t)
{
    return t < s ? 0.0 : z->lbt[cdp_tidx(z->L, kind, s, t)];
}

/* Fills z->lbt from z->pfc, z->pgc and z->hw. */
static void lz_min_table(xe_cdp_lazy *z)
{
    for (int kind = 0; kind < 2; kind++)
        for (int s = -1; s <= z->L; s++)
            for (int t = s; t <= z->L; t++) z->lbt[cdp_tidx(z->L, kind, s, t)] = lz_min_calc(z, kind, s, t);
}

/* Delegation (docs/chain-dp.md, "Several devices"): subproblem (kind, s, t), s < t, not
 * the whole problem, run on another device e: x_s and front(t) copied to e and freed on
 * d, the subproblem run on e by e's own DP with all of e's budget, the gradient it ends
 * with copied back and freed on e. */
static int lz_del_ok(const xe_cdp_lazy *z, int kind, int s, int tt)
{
    return z->ndz > 0 && s < tt && !(kind == 0 && s == -1 && tt == z->L);
}

/* Node id of the gradient (kind, s, t) ends with: front(s-1) for Opt, front(s) for Opt'. */
static int lz_del_end(const xe_cdp_model *m, int kind, int s) { return kind == 0 ? m->front[s >= 0 ? s : 0] : m->front[s + 1]; }

/* Bytes on d a delegated (kind, s, t) needs: its boundary before the copies out, the
 * returned gradient after. */
static int64_t lz_del_req(const xe_cdp_model *m, int kind, int s, int tt)
{
    int64_t r = (s >= 0 ? m->A[s + 1] : 0) + m->D[tt + 1], e = cdp_sz(m, lz_del_end(m, kind, s));
    return e > r ? e : r;
}

/* Seconds of the copies of a delegation to device e. */
static double lz_del_copies(const xe_cdp_model *m, int kind, int s, int tt, int e)
{
    const xe_instance *in = m->in;
    double c = xe_copy_cost(in, lz_del_end(m, kind, s), e, m->d);
    if (s >= 0) c += xe_copy_cost(in, s, m->d, e);
    if (tt < m->L) c += xe_copy_cost(in, m->front[tt + 1], m->d, e);
    return c;
}

/* mr[cdp_tidx(kind, s, t)]: the least budget at which (kind, s, t) has a schedule of the
 * class (INT64_MAX: none), by the recursion on requirements alone:
 * max(sweep floor, child's least + shift, tail's least), minimised over the choices. */
static void lz_minreq(const xe_cdp_lazy *z, int64_t *mr)
{
    const xe_cdp_model *m = z->m;
    int L = m->L;
    const int64_t *A = m->A + 1, *D = m->D + 1, *GP = m->GP + 1;
    for (int len = 0; len <= L + 1; len++)
        for (int s = -1; s + len <= L; s++) {
            int tt = s + len;
            int64_t As = s >= 0 ? A[s] : 0;
            for (int kind = 0; kind < 2; kind++) {
                int64_t best = INT64_MAX;
                if (len == 0) {
                    best = s < 0 ? 0 : kind == 0 ? GP[s] : As + D[s];
                } else {
                    if (tt < L && m->gend[tt + 1] == m->gbeg[tt + 1]) best = mr[cdp_tidx(L, kind, s, tt - 1)];
                    int park = s >= 0 && m->offload && m->odev[s + 1] >= 0;
                    int64_t req_hold = 0, req_free = 0;
                    for (int sp = s + 1; sp <= tt; sp++) {
                        int64_t prev = sp - 1 > s ? A[sp - 1] : 0;
                        int64_t rh = As + D[tt] + prev + A[sp];
                        int64_t rf = (sp == s + 1 ? As : 0) + D[tt] + prev + A[sp];
                        if (rh > req_hold) req_hold = rh;
                        if (rf > req_free) req_free = rf;
                        if (req_free >= best) break;
                        for (int np = 0; np < 2; np++) {
                            if (np && sp == tt) break;
                            int tail_hi = np ? sp : sp - 1;
                            int hold = kind == 0 || cdp_has_work(m, s + 1, tail_hi);
                            int64_t c = mr[cdp_tidx(L, np, sp, tt)], tl = hold ? mr[cdp_tidx(L, kind, s, tail_hi)] : 0;
                            if (c == INT64_MAX || tl == INT64_MAX) continue;
                            int64_t r = hold ? req_hold : req_free;
                            if (c + (hold ? As : 0) > r) r = c + (hold ? As : 0);
                            if (tl > r) r = tl;
                            if (r < best) best = r;
                            if (hold && park) { /* parked: the child has all of m */
                                r = req_free > c ? req_free : c;
                                if (tl > r) r = tl;
                                if (r < best) best = r;
                            }
                        }
                    }
                    for (int j = 0; j < z->ndz; j++) { /* delegated: d holds only the boundary */
                        int64_t r = lz_del_req(m, kind, s, tt);
                        const xe_cdp_lazy *ze = z->dz[j];
                        if (lz_del_ok(z, kind, s, tt) &&
                            ze->mr[cdp_tidx(L, kind, s, tt)] <= m->in->dev[ze->m->d].budget && r < best)
                            best = r;
                    }
                }
                mr[cdp_tidx(L, kind, s, tt)] = best;
            }
        }
}

void xe_cdp_lazy_free(xe_cdp_lazy *z)
{
    if (!z) return;
    if (z->v) {
        size_t nn = 2 * (size_t)(z->L + 2) * (size_t)(z->L + 2);
        for (size_t i = 0; i < nn; i++) {
            free(z->v[i].lbs);
            free(z->v[i].e);
        }
    }
    free(z->v);
    free(z->pfc);
    free(z->pgc);
    free(z->mr);
    free(z->lbt);
    free(z->hw);
    free(z->dz);
    free(z);
}

int xe_cdp_lazy_new(const xe_cdp_model *m, xe_cdp_lazy **out, xe_err *err)
{
    *out = NULL;
    xe_cdp_lazy *z = calloc(1, sizeof *z);
    if (!z) return xe_err_set(err, XE_ENOMEM, "chain dp: out of memory");
    int L = m->L;
    z->m = m;
    z->L = L;
    z->v = calloc(2 * (size_t)(L + 2) * (size_t)(L + 2), sizeof *z->v);
    z->pfc = calloc((size_t)L + 2, sizeof *z->pfc);
    z->pgc = calloc((size_t)L + 2, sizeof *z->pgc);
    z->mr = malloc(2 * (size_t)(L + 2) * (size_t)(L + 2) * sizeof *z->mr);
    z->lbt = malloc(2 * (size_t)(L + 2) * (size_t)(L + 2) * sizeof *z->lbt);
    z->hw = malloc(((size_t)L + 2) * sizeof *z->hw);
    if (!z->v || !z->pfc || !z->pgc || !z->mr || !z->lbt || !z->hw) {
        xe_cdp_lazy_free(z);
        return xe_err_set(err, XE_ENOMEM, "chain dp: out of memory (L = %d)", L);
    }
    for (int p = 0; p <= L; p++) {
        z->pfc[p + 1] = z->pfc[p] + m->FC[p + 1];
        z->pgc[p + 1] = z->pgc[p] + m->GC[p + 1];
    }
    z->hw[0] = -1;
    for (int p = 0; p <= L; p++)
        z->hw[p + 1] = p == L || m->gend[p + 1] > m->gbeg[p + 1] ? p : z->hw[p];
    lz_min_table(z);
    lz_minreq(z, z->mr);
    *out = z;
    return XE_OK;
}

int xe_cdp_lazy_delegate(xe_cdp_lazy *z, xe_cdp_lazy *ze, xe_err *err)
{
    const xe_cdp_model *m = z->m;
    if (m->offload || ze->m->offload || ze->ndz || ze->L != z->L || ze->m->d == m->d || ze->m->uniform ||
        m->uniform)
        return xe_err_set(err, XE_EINVAL, "chain dp: delegation needs two plain models of the same chain on two "
                                          "devices, without parking");
    xe_cdp_lazy **q = realloc(z->dz, (size_t)(z->ndz + 1) * sizeof *q);
    if (!q) return xe_err_set(err, XE_ENOMEM, "chain dp: out of memory");
    z->dz = q;
    z->dz[z->ndz++] = ze;
    /* lower bounds: each node at its cheapest device among d and the delegates (copies
     * only add); least budgets: with delegation as one more choice */
    double of = 0.0, og = 0.0; /* the old prefix sums at p */
    for (int p = 0; p <= z->L; p++) {
        double f0 = z->pfc[p + 1] - of, g0 = z->pgc[p + 1] - og; /* old per-node bounds */
        of = z->pfc[p + 1];
        og = z->pgc[p + 1];
        double fc = ze->m->FC[p + 1] < f0 ? ze->m->FC[p + 1] : f0;
        double gc = ze->m->GC[p + 1] < g0 ? ze->m->GC[p + 1] : g0;
        z->pfc[p + 1] = z->pfc[p] + fc;
        z->pgc[p + 1] = z->pgc[p] + gc;
    }
    lz_min_table(z);
    lz_minreq(z, z->mr);
    return XE_OK;
}

long xe_cdp_lazy_entries(const xe_cdp_lazy *z) { return z->nent; }

static int lz_eval(xe_cdp_lazy *z, int kind, int s, int tt, int64_t mm, double ub, lz_ent *out);

/* Looks (kind, s, t) up at m without evaluating: 1 with *out the exact entry holding m;
 * else 0 with *lb a lower bound on the value at every budget up to *lbhi (a bound entry
 * holding m, or the cost of the next cached entry above m, which holds up to its end, or
 * the compute-once bound, whichever is largest), and *pos the insertion index. */
static inline __attribute__((always_inline)) int lz_peek(const xe_cdp_lazy *z, int at, int64_t mm, lz_ent *out,
                                                         double *lb, int64_t *lbhi, int *pos)
{
    const lz_vec *v = &z->v[at];
    int lo = 0; /* first entry with lo > mm (branch-free binary search) */
    if (v->n > 0) {
        const lz_ent *b = v->e;
        int n = v->n;
        while (n > 1) {
            int half = n / 2;
            b = b[half].lo <= mm ? b + half : b;
            n -= half;
        }
        lo = (int)(b - v->e) + (b->lo <= mm);
    }
    *pos = lo;
    *lb = z->lbt[at];
    *lbhi = INT64_MAX;
    if (lo > 0 && v->e[lo - 1].hi >= mm) {
        *out = v->e[lo - 1];
        if (!out->lbnd) return 1;
        if (out->cost > *lb) {
            *lb = out->cost;
            *lbhi = out->hi;
        }
    }
    if (lo < v->n && v->e[lo].cost > *lb) {
        *lb = v->e[lo].cost;
        *lbhi = v->e[lo].hi;
    }
    return 0;
}

/* The entry of (kind, s, t) holding m when its value is below ub (seconds; INFINITY:
 * always): cached, or evaluated and cached; otherwise possibly only a bound entry (lbnd,
 * cost >= ub). -1: no memory. */
static int lz_query(xe_cdp_lazy *z, int kind, int s, int tt, int64_t mm, double ub, lz_ent *out)
{
    double lb;
    int64_t lbhi;
    int pos;
    int at = cdp_tidx(z->L, kind, s, tt);
    if (lz_peek(z, at, mm, out, &lb, &lbhi, &pos)) return 0;
    if (lb >= ub) {
        *out = (lz_ent){mm, lbhi, lb, -1, 1};
        return 0;
    }
    lz_ent e;
    if (lz_eval(z, kind, s, tt, mm, ub, &e)) return -1;
    XE_ASSERT(e.lo <= mm && mm <= e.hi, "a lazy entry holds the budget it was evaluated at");
    lz_vec *v = &z->v[at];
    lz_ent old;
    int had = lz_peek(z, at, mm, &old, &lb, &lbhi, &pos);
    XE_ASSERT(!had, "no exact entry appears during its own evaluation");
    if (pos > 0 && v->e[pos - 1].hi >= mm) { /* a bound entry holding m: replaced */
        memmove(v->e + pos - 1, v->e + pos, (size_t)(v->n - pos) * sizeof *v->e);
        memmove(v->lbs + pos - 1, v->lbs + pos, (size_t)(v->n - pos) * sizeof *v->lbs);
        v->n--;
        pos--;
    }
    if (v->n == v->cap) {
        int cap = v->cap ? 2 * v->cap : 4;
        lz_ent *q = realloc(v->e, (size_t)cap * sizeof *q);
        if (!q) return -1;
        v->e = q;
        double *l = realloc(v->lbs, (size_t)cap * sizeof *l);
        if (!l) return -1;
        v->lbs = l;
        v->cap = cap;
    }
    /* entries are disjoint: the new one lies between pos-1 and pos; clip to them */
    if (pos > 0 && e.lo <= v->e[pos - 1].hi) e.lo = v->e[pos - 1].hi + 1;
    if (pos < v->n && e.hi >= v->e[pos].lo) e.hi = v->e[pos].lo - 1;
    memmove(v->e + pos + 1, v->e + pos, (size_t)(v->n - pos) * sizeof *v->e);
    memmove(v->lbs + pos + 1, v->lbs + pos, (size_t)(v->n - pos) * sizeof *v->lbs);
    v->e[pos] = e;
    v->n++;
    for (int i = pos; i >= 0; i--) { /* the suffix maxima up to pos; below, once one is unchanged,
                                        so are the rest */
        double x = v->e[i].cost;
        if (i + 1 < v->n && v->lbs[i + 1] > x) x = v->lbs[i + 1];
        if (i < pos && v->lbs[i] == x) break;
        v->lbs[i] = x;
    }
    z->nent++;
    *out = e;
    return 0;
}

/* Running minimum over the candidates of one evaluation. */
typedef struct lz_acc {
    double best;
    int choice;
    int64_t blo, bhi; /* the argmin's own interval */
    int64_t hcap;     /* the smallest end of a stretch over which some other candidate is
                         known not to beat the optimum (beyond it, it might) */
    double lbmin;     /* the least of the lower bounds of the candidates set aside, each
                         valid on [0, hcap]: with no argmin, the value is at least this */
} lz_acc;

static inline void lz_fold(lz_acc *a, int64_t hi)
{
    if (hi < a->hcap) a->hcap = hi;
}

static inline void lz_note(lz_acc *a, double bound)
{
    if (bound < a->lbmin) a->lbmin = bound;
}

/* A candidate set aside: at least bound at every budget up to hi. */
static inline void lz_aside(lz_acc *a, double bound, int64_t hi)
{
    lz_fold(a, hi);
    lz_note(a, bound);
}

/* A candidate of value val on [lo, hi] (its components constant there; INFINITY:
 * infeasible there); lb: its value's lower bound at every budget. */
static void lz_offer(lz_acc *a, double val, double lb, int64_t lo, int64_t hi, int choice)
{
    if (val < a->best) {
        if (a->best < INFINITY) lz_aside(a, a->best, a->bhi); /* the old argmin may drop again */
        a->best = val;
        a->choice = choice;
        a->blo = lo;
        a->bhi = hi;
    } else if (lb < a->best) {
        lz_aside(a, val, hi);
    } else {
        lz_note(a, lb);
    }
}

/* One component's cache v looked up at budget x for a candidate costing pre + (the
 * component) + post: entries are sorted and disjoint and lbs does not grow with i, so
 * scanning down from the last entry while entries end at or above x finds the cut valid
 * furthest up, the first i where pre + lbs[i] + post shows the candidate cannot go below
 * best: 1 with *at = i. Else 0 with *at the exact entry holding x, or -1 (none, or only a
 * bound entry: to evaluate). */
static inline __attribute__((always_inline)) int lz_scan(const lz_vec *v, int64_t x, double pre, double post,
                                                         double best, int *at)
{
    int i = v->n - 1;
    for (; i >= 0 && v->e[i].hi >= x; i--)
        if (!(pre + v->lbs[i] + post < best)) {
            *at = i;
            return 1;
        }
    *at = i + 1 < v->n && v->e[i + 1].lo <= x && !v->e[i + 1].lbnd ? i + 1 : -1;
    return 0;
}

/* Candidate: add seconds, then child (ckind, sp, tt) at m - sh, then the tail (kind, s,
 * tail_hi) at m (none when has_tail is 0), feasible from floor_req bytes. A component
 * not yet evaluated is first bounded from below by the cache; when the bound already
 * shows the candidate cannot beat the optimum found, it is not evaluated, and the cut
 * is the one valid up to the largest budget (lz_vec.lbs), so that the entry being
 * evaluated holds over as wide an interval as the cache can prove. Inlined: the
 * evaluations' innermost step. */
static inline __attribute__((always_inline)) int lz_cand(xe_cdp_lazy *z, lz_acc *a, int64_t mm,
                                                         double add, int ckind, int sp, int tt, int64_t sh, int kind,
                                                         int s, int tail_hi, int has_tail, int64_t floor_req,
                                                         int choice)
{
    int cat = cdp_tidx(z->L, ckind, sp, tt), tat = cdp_tidx(z->L, kind, s, tail_hi);
    double lb_tail = has_tail ? lz_min(z, kind, s, tail_hi) : 0.0;
    double lb = add + z->lbt[cat] + lb_tail;
    if (!(lb < a->best)) { /* can never beat the optimum found */
        lz_note(a, lb);
        return 0;
    }
    if (mm < floor_req) {
        lz_offer(a, INFINITY, lb, 0, floor_req - 1, choice);
        return 0;
    }
    int64_t cmr = z->mr[cat];
    if (cmr == INT64_MAX) return 0; /* never feasible */
    if (mm - sh < cmr) {
        lz_offer(a, INFINITY, lb, 0, sat_add(cmr - 1, sh), choice);
        return 0;
    }
    if (has_tail) {
        int64_t tmr = z->mr[tat];
        if (tmr == INT64_MAX) return 0;
        if (mm < tmr) {
            lz_offer(a, INFINITY, lb, 0, tmr - 1, choice);
            return 0;
        }
    }
    const lz_vec *cv = &z->v[cat];
    int i;
    if (lz_scan(cv, mm - sh, add, lb_tail, a->best, &i)) {
        lz_aside(a, add + cv->lbs[i] + lb_tail, sat_add(cv->e[i].hi, sh));
        return 0;
    }
    lz_ent c;
    if (i >= 0) {
        c = cv->e[i];
    } else {
        if (lz_query(z, ckind, sp, tt, mm - sh, a->best - add - lb_tail, &c)) return -1;
        if (c.lbnd) { /* at least the bound: not below the optimum up to its end */
            lz_aside(a, add + c.cost + lb_tail, sat_add(c.hi, sh));
            return 0;
        }
    }
    int64_t lo = c.lo + sh > floor_req ? c.lo + sh : floor_req, hi = sat_add(c.hi, sh);
    if (c.cost == INFINITY) {
        lz_offer(a, INFINITY, lb, lo, hi, choice);
        return 0;
    }
    double part = add + c.cost;
    if (!(part + lb_tail < a->best)) { /* cannot beat it while the child stays constant */
        lz_aside(a, part + lb_tail, hi);
        return 0;
    }
    double val = part;
    if (has_tail) { /* the same scan of the tail's cache, at m */
        const lz_vec *tv = &z->v[tat];
        int j;
        if (lz_scan(tv, mm, part, 0.0, a->best, &j)) {
            lz_aside(a, part + tv->lbs[j], hi < tv->e[j].hi ? hi : tv->e[j].hi);
            return 0;
        }
        lz_ent t;
        if (j >= 0) {
            t = tv->e[j];
        } else {
            if (lz_query(z, kind, s, tail_hi, mm, a->best - part, &t)) return -1;
            if (t.lbnd) {
                lz_aside(a, part + t.cost, hi < t.hi ? hi : t.hi);
                return 0;
            }
        }
        if (t.lo > lo) lo = t.lo;
        if (t.hi < hi) hi = t.hi;
        val = t.cost == INFINITY ? INFINITY : part + t.cost;
    }
    lz_offer(a, val, lb, lo, hi, choice);
    return 0;
}

/* Evaluates the candidates of (kind, s, tt) at m; only choice `only` when only != INT_MIN
 * (a hint tried first), else all. */
static int lz_cands(xe_cdp_lazy *z, lz_acc *a, int kind, int s, int tt, int64_t mm, int only)
{
    const xe_cdp_model *m = z->m;
    int L = m->L;
    int64_t As = s >= 0 ? m->A[s + 1] : 0;
    int all = only == INT_MIN;
    if (tt < L && m->gend[tt + 1] == m->gbeg[tt + 1] && (all || only == -2)) {
        lz_ent e;
        if (lz_query(z, kind, s, tt - 1, mm, a->best, &e)) return -1;
        if (e.lbnd)
            lz_aside(a, e.cost, e.hi);
        else
            lz_offer(a, e.cost, lz_min(z, kind, s, tt - 1), e.lo, e.hi, -2);
    }
    int park = s >= 0 && m->offload && m->odev[s + 1] >= 0;
    int osp = -1; /* the checkpoint of the hint */
    if (!all) {
        int c = only;
        if (c >= XE_CDP_OFF) c -= XE_CDP_OFF;
        else if (c <= -10 - XE_CDP_OFF) c += XE_CDP_OFF;
        osp = c <= -10 ? -10 - c : c;
        if (osp <= s || osp > tt) return 0;
    }
    double fcost = 0.0;
    int64_t req_hold = 0, req_free = 0;
    for (int sp = s + 1; sp <= tt; sp++) {
        cdp_sweep_step(m, s, sp, tt, &fcost, &req_hold, &req_free);
        if (req_free > mm) { /* this and every later sweep needs more than m */
            lz_fold(a, req_free - 1);
            break;
        }
        if (!all && sp != osp) continue;
        /* every candidate from here on costs at least this (the bound grows with sp, the
         * non-persistent and parked variants of sp are not below it): stop when it
         * cannot beat the optimum found */
        double lbp = fcost + lz_min(z, 0, sp, tt) + lz_min(z, kind, s, sp - 1);
        if (all && !(lbp < a->best)) {
            lz_note(a, lbp);
            break;
        }
        int hold = kind == 0 || cdp_has_work(m, s + 1, sp - 1);
        if ((all || only == sp) && lz_cand(z, a, mm, fcost, 0, sp, tt, hold ? As : 0, kind, s, sp - 1, hold,
                                           hold ? req_hold : req_free, sp))
            return -1;
        if (hold && park && (all || only == sp + XE_CDP_OFF) &&
            lz_cand(z, a, mm, fcost + m->OC[s + 1], 0, sp, tt, 0, kind, s, sp - 1, 1, req_free, sp + XE_CDP_OFF))
            return -1;
        if (sp < tt) {
            hold = kind == 0 || cdp_has_work(m, s + 1, sp);
            if ((all || only == -10 - sp) &&
                lz_cand(z, a, mm, fcost, 1, sp, tt, hold ? As : 0, kind, s, sp, hold, hold ? req_hold : req_free,
                        -10 - sp))
                return -1;
            if (hold && park && (all || only == -10 - sp - XE_CDP_OFF) &&
                lz_cand(z, a, mm, fcost + m->OC[s + 1], 1, sp, tt, 0, kind, s, sp, 1, req_free,
                        -10 - sp - XE_CDP_OFF))
                return -1;
        }
    }
    return 0;
}

/* Evaluates (kind, s, t) at m. With ub < INFINITY, candidates that cannot go below ub
 * are not evaluated, and when none does the result is a bound entry (cost: the least of
 * the candidates' lower bounds, at least ub). */
static int lz_eval(xe_cdp_lazy *z, int kind, int s, int tt, int64_t mm, double ub, lz_ent *out)
{
    if (z->deadline > 0 && (++z->ticks & 255) == 0 && xe_now() > z->deadline) {
        z->timed_out = 1; /* unwinds like a failure; xe_cdp_lazy_query tells them apart */
        return -1;
    }
    const xe_cdp_model *m = z->m;
    const int64_t *A = m->A + 1, *D = m->D + 1, *GP = m->GP + 1;
    const double *GC = m->GC + 1;
    int64_t As = s >= 0 ? A[s] : 0;
    if (tt == s) {
        int64_t req = 0;
        double c = 0.0;
        if (s >= 0 && kind == 0) {
            req = GP[s];
            c = GC[s];
        } else if (s >= 0) {
            req = As + D[s];
        }
        *out = mm >= req ? (lz_ent){req, INT64_MAX, c, -3, 0} : (lz_ent){0, req - 1, INFINITY, -3, 0};
        return 0;
    }
    int64_t mr = z->mr[cdp_tidx(z->L, kind, s, tt)];
    if (mm < mr) { /* infeasible below its least budget */
        *out = (lz_ent){0, mr - 1, INFINITY, -1, 0};
        return 0;
    }
    lz_acc a = {ub, -1, 0, INT64_MAX, INT64_MAX, INFINITY}; /* ub: a virtual candidate, choice -1 */
    if (lz_del_ok(z, kind, s, tt)) {
        int64_t req = lz_del_req(m, kind, s, tt);
        for (int j = 0; j < z->ndz; j++) {
            xe_cdp_lazy *ze = z->dz[j];
            int e = ze->m->d;
            double cp = lz_del_copies(m, kind, s, tt, e), lb = cp + lz_min(ze, kind, s, tt);
            if (!(lb < a.best)) {
                lz_note(&a, lb);
                continue;
            }
            if (mm < req) {
                lz_offer(&a, INFINITY, lb, 0, req - 1, XE_CDP_DEL - j);
                continue;
            }
            lz_ent r; /* a constant of m: e's whole budget */
            if (lz_query(ze, kind, s, tt, m->in->dev[e].budget, a.best - cp, &r)) return -1;
            if (r.lbnd) /* a constant of m: at least this everywhere */
                lz_note(&a, cp + r.cost);
            else if (r.cost < INFINITY)
                lz_offer(&a, cp + r.cost, lb, req, INT64_MAX, XE_CDP_DEL - j);
        }
    }
    /* hint: the choice of the nearest cached entry of this subproblem */
    const lz_vec *v = &z->v[cdp_tidx(z->L, kind, s, tt)];
    int hint = INT_MIN;
    {
        int lo = 0, hi = v->n;
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (v->e[mid].lo <= mm) lo = mid + 1;
            else hi = mid;
        }
        if (lo < v->n && !v->e[lo].lbnd && v->e[lo].cost < INFINITY) hint = v->e[lo].choice;
        else if (lo > 0 && !v->e[lo - 1].lbnd && v->e[lo - 1].cost < INFINITY) hint = v->e[lo - 1].choice;
    }
    if (hint != INT_MIN && lz_cands(z, &a, kind, s, tt, mm, hint)) return -1;
    if (lz_cands(z, &a, kind, s, tt, mm, INT_MIN)) return -1;
    if (a.choice == -1) /* nothing below ub: at least lbmin (>= ub) here and below, up to
                           hcap; exactly infeasible when every candidate is */
        *out = (lz_ent){0, a.hcap, a.lbmin, -1, a.lbmin < INFINITY};
    else
        *out = (lz_ent){a.blo, a.bhi < a.hcap ? a.bhi : a.hcap, a.best, a.choice, 0};
    return 0;
}

/* The deadline of z's evaluations and of its delegates' (0: none; chain_dp.h). */
void xe_cdp_lazy_set_deadline(xe_cdp_lazy *z, double deadline)
{
    z->deadline = deadline;
    for (int j = 0; j < z->ndz; j++) z->dz[j]->deadline = deadline;
}

int xe_cdp_lazy_sub(xe_cdp_lazy *z, int kind, int s, int t, int64_t budget, double *cost, xe_err *err)
{
    lz_ent e;
    if (lz_query(z, kind, s, t, budget, INFINITY, &e)) {
        int late = z->timed_out;
        for (int j = 0; j < z->ndz; j++) late |= z->dz[j]->timed_out;
        return late ? xe_err_set(err, XE_ETIMEOUT, "chain dp: time limit reached")
                    : xe_err_set(err, XE_ENOMEM, "chain dp: out of memory");
    }
    XE_ASSERT(!e.lbnd, "an unbounded query returns an exact entry");
    *cost = e.cost;
    return XE_OK;
}

double xe_cdp_lazy_lb(const xe_cdp_lazy *z, int kind, int s, int t) { return lz_min(z, kind, s, t); }

int xe_cdp_lazy_query(xe_cdp_lazy *z, int64_t budget, double *cost, xe_err *err)
{
    return xe_cdp_lazy_sub(z, 0, -1, z->L, budget, cost, err);
}

/* ---- reconstruction ------------------------------------------------------------------- */

/* The choice of (kind, s, t) at budget m (from the frontier table or the lazy cache):
 * 0, -1 when nothing fits (XE_EINFEASIBLE), -2 out of memory. */
typedef struct pick_ctx {
    const xe_cdp_table *t;
    xe_cdp_lazy *z;
} pick_ctx;

static int pick(const pick_ctx *pc, int kind, int s, int tt, int64_t budget, int *choice)
{
    if (pc->z) {
        lz_ent e;
        if (lz_query(pc->z, kind, s, tt, budget, INFINITY, &e)) return -2;
        if (e.cost == INFINITY) return -1;
        *choice = e.choice;
        return 0;
    }
    const xe_cdp_table *t = pc->t;
    int at = cdp_tidx(t->L, kind, s, tt);
    const xe_cdp_pt *p = t->pts + t->off[at];
    int k = -1;
    for (int q = 0; q < t->cnt[at] && p[q].req <= budget; q++) k = q;
    if (k < 0) return -1;
    *choice = p[k].choice;
    return 0;
}

static int emit_rec(const xe_cdp_model *m, const pick_ctx *pc, int kind, int s, int tt, int64_t budget,
                    xe_schedule *out)
{
    int L = m->L, ch = 0;
    int pr = pick(pc, kind, s, tt, budget, &ch);
    if (pr == -2) return XE_ENOMEM;
    if (pr < 0) return XE_EINFEASIBLE;
    if (ch == -3) {
        if (s < 0) return XE_OK;
        if (kind == 1) return s < L && xe_schedule_push(out, XE_EV_FREE, s, m->d, -1) ? XE_ENOMEM : XE_OK;
        int64_t pk;
        double c;
        return xe_cdp_group_run(m, s, &pk, &c, out);
    }
    if (ch == -2) return emit_rec(m, pc, kind, s, tt - 1, budget, out);
    if (ch <= XE_CDP_DEL && ch > XE_CDP_DEL - 64) {
        xe_cdp_lazy *ze = pc->z->dz[XE_CDP_DEL - ch];
        int d = m->d, e = ze->m->d, fr = tt < L ? m->front[tt + 1] : -1, en = lz_del_end(m, kind, s);
        if ((s >= 0 && (xe_schedule_push(out, XE_EV_COPY, s, d, e) || xe_schedule_push(out, XE_EV_FREE, s, d, -1))) ||
            (fr >= 0 && (xe_schedule_push(out, XE_EV_COPY, fr, d, e) || xe_schedule_push(out, XE_EV_FREE, fr, d, -1))))
            return XE_ENOMEM;
        pick_ctx pe = {NULL, ze};
        int rc = emit_rec(ze->m, &pe, kind, s, tt, m->in->dev[e].budget, out);
        if (rc) return rc;
        if (xe_schedule_push(out, XE_EV_COPY, en, e, d) || xe_schedule_push(out, XE_EV_FREE, en, e, -1))
            return XE_ENOMEM;
        return XE_OK;
    }
    int park = 0;
    if (ch >= XE_CDP_OFF) {
        park = 1;
        ch -= XE_CDP_OFF;
    } else if (ch <= -10 - XE_CDP_OFF) {
        park = 1;
        ch += XE_CDP_OFF;
    }
    int np = ch <= -10;
    int sp = np ? -10 - ch : ch;
    int tail_hi = np ? sp : sp - 1;
    int hold = kind == 0 || cdp_has_work(m, s + 1, tail_hi);
    int d = m->d, e = park ? m->odev[s + 1] : -1;
    for (int j = s + 1; j <= sp; j++) {
        if (xe_schedule_push(out, XE_EV_COMPUTE, j, d, -1)) return XE_ENOMEM;
        if (j - 1 > s && xe_schedule_push(out, XE_EV_FREE, j - 1, d, -1)) return XE_ENOMEM;
        if (j == s + 1 && park &&
            (xe_schedule_push(out, XE_EV_COPY, s, d, e) || xe_schedule_push(out, XE_EV_FREE, s, d, -1)))
            return XE_ENOMEM;
        if (j == s + 1 && !hold && s >= 0 && xe_schedule_push(out, XE_EV_FREE, s, d, -1)) return XE_ENOMEM;
    }
    int64_t As = s >= 0 ? m->A[s + 1] : 0;
    int rc = emit_rec(m, pc, np, sp, tt, budget - (hold && !park ? As : 0), out);
    if (rc || !hold) return rc;
    if (park && (xe_schedule_push(out, XE_EV_COPY, s, e, d) || xe_schedule_push(out, XE_EV_FREE, s, e, -1)))
        return XE_ENOMEM;
    return emit_rec(m, pc, kind, s, tail_hi, budget, out);
}

int xe_cdp_emit(const xe_cdp_model *m, const xe_cdp_table *t, int64_t budget, xe_schedule *out,
                xe_err *err)
{
    pick_ctx pc = {t, NULL};
    int rc = emit_rec(m, &pc, 0, -1, m->L, budget, out);
    if (rc == XE_ENOMEM) return xe_err_set(err, rc, "chain dp: out of memory");
    if (rc == XE_EINFEASIBLE)
        return xe_err_set(err, rc, "chain dp: no schedule of the class fits %lld on %s", (long long)budget,
                          m->in->dev[m->d].name);
    return rc;
}

int xe_cdp_lazy_emit_sub(xe_cdp_lazy *z, int kind, int s, int t, int64_t budget, xe_schedule *out, xe_err *err)
{
    pick_ctx pc = {NULL, z};
    int rc = emit_rec(z->m, &pc, kind, s, t, budget, out);
    if (rc == XE_ENOMEM) return xe_err_set(err, rc, "chain dp: out of memory");
    if (rc == XE_EINFEASIBLE)
        return xe_err_set(err, rc, "chain dp: no schedule of the class fits %lld on %s", (long long)budget,
                          z->m->in->dev[z->m->d].name);
    return rc;
}

int xe_cdp_lazy_emit(xe_cdp_lazy *z, int64_t budget, xe_schedule *out, xe_err *err)
{
    return xe_cdp_lazy_emit_sub(z, 0, -1, z->L, budget, out, err);
}
