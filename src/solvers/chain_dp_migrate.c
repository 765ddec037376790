/* The chain DP with a migration (docs/chain-dp.md, "Several devices"): the schedule starts
 * on the main device d and, at one point of the recursion, moves to another device e for
 * good. d computes path nodes keeping a nested stack of checkpoints, as in the one-device
 * recursion; at the migration point everything left runs on e, and d keeps its
 * checkpoints as a store from which e copies each one whenever it needs it (as often as
 * it needs it: e may free a copy right after the next path node and fetch it again for
 * the next tail instead of holding it; holding it through some children and then
 * dropping it is not in the class, docs/chain-dp.md).
 *
 * Mig(kind, s, m): x_s resident on d, m bytes of d for it and everything after; groups L..s
 * (kind 0) or L..s+1 (kind 1) still to run, ending on e. Choices:
 *   - migrate now: P(kind, s, L);
 *   - checkpoint s' on d (persistent, or for s' < L non-persistent): sweep x_{s+1}..x_{s'}
 *     on d keeping x_s, then Mig(0 or 1, s', m - |x_s|), then the tail P(kind, s, s'-1 or
 *     s') on e (for kind 1 with nothing left in the tail, x_s is freed right away).
 * P(kind, s, t): on e, with front(t) resident on e and x_s on d (copy seconds c_s per
 * fetch): run groups t..s (t..s+1), all of e's budget available. Choices:
 *   - fetch x_s and run the subproblem by e's own DP: c_s + Opt_e(kind, s, t, M_e);
 *   - skip an empty group t < L: P(kind, s, t-1);
 *   - fetch x_s, sweep x_{s+1}..x_{s'} on e freeing x_s after x_{s+1} (d still has it),
 *     child Opt_e(0 or 1, s', t, M_e) with all of e, then fetch x_s again in P(kind, s,
 *     s'-1 or s').
 * Mig is computed bottom-up as whole step functions of m (Pareto lists of (bytes, seconds)
 * as in chain_dp_table.c), P by memoised recursion at e's whole budget; both are exact in
 * bytes on both devices: after the migration d only copies out and frees, and e runs one
 * piece at a time holding only that piece. */
#include "chain_dp.h"

#include <math.h>
#include <stdlib.h>

#include "xengine/timer.h"

typedef struct mg_pt {
    int64_t req; /* bytes of d Mig needs */
    double cost; /* seconds */
    int choice;  /* -1 migrate now, s' persistent checkpoint, -10 - s' non-persistent */
} mg_pt;

typedef struct mg_front {
    mg_pt *p;
    int n;
} mg_front;

typedef struct mg_ctx {
    const xe_cdp_model *md, *me;
    xe_cdp_lazy *ze;
    int L, d, e;
    int64_t Bd, Me;
    double deadline;
    double *P;    /* [2][L+2][L+2] NAN: not computed; INFINITY: nothing fits */
    int *Pch;     /* [2][L+2][L+2] -3 nothing, -2 skip, -1 fetch + e's DP, s' / -10 - s' */
    mg_front *F;  /* [2][L+2] Pareto list of Mig(kind, s, .), req ascending, cost descending */
    xe_err *err;
} mg_ctx;

static double mg_copy(const mg_ctx *c, int s) { return s >= 0 ? xe_copy_cost(c->md->in, s, c->d, c->e) : 0.0; }

/* P(kind, s, t) (file comment); 0 with *val, or an error code. */
static int mg_P(mg_ctx *c, int kind, int s, int t, double *val)
{
    int at = cdp_tidx(c->L, kind, s, t);
    if (!isnan(c->P[at])) {
        *val = c->P[at];
        return XE_OK;
    }
    if (c->deadline > 0 && xe_now() > c->deadline) return xe_err_set(c->err, XE_ETIMEOUT, "chain dp: time limit reached");
    const xe_cdp_model *me = c->me;
    double best = INFINITY, v;
    int ch = -1, rc;
    if (kind == 1 && t == s) {
        best = 0.0; /* x_s served only as a source: nothing left, nothing fetched */
        ch = -3;
    } else {
        double cs = mg_copy(c, s);
        if ((rc = xe_cdp_lazy_sub(c->ze, kind, s, t, c->Me, &v, c->err))) return rc;
        best = cs + v;
        if (t > s && t < c->L && me->gend[t + 1] == me->gbeg[t + 1]) {
            if ((rc = mg_P(c, kind, s, t - 1, &v))) return rc;
            if (v < best) {
                best = v;
                ch = -2;
            }
        }
        double fc = 0.0;
        int64_t hold = 0, fr = 0;
        for (int sp = s + 1; s >= 0 && sp <= t; sp++) {
            cdp_sweep_step(me, s, sp, t, &fc, &hold, &fr);
            if (fr > c->Me || !(cs + fc < best)) break; /* the sweep only grows */
            for (int np = 0; np <= (sp < t); np++) {
                double vc, vt;
                int thi = np ? sp : sp - 1;
                double lbt = xe_cdp_lazy_lb(c->ze, kind, s, thi); /* the tail's */
                if (!(cs + fc + xe_cdp_lazy_lb(c->ze, np, sp, t) + lbt < best)) continue;
                if ((rc = xe_cdp_lazy_sub(c->ze, np, sp, t, c->Me, &vc, c->err))) return rc;
                if (!(cs + fc + vc + lbt < best)) continue;
                if ((rc = mg_P(c, kind, s, thi, &vt))) return rc;
                if (cs + fc + vc + vt < best) {
                    best = cs + fc + vc + vt;
                    ch = np ? -10 - sp : sp;
                }
            }
        }
    }
    c->P[at] = best;
    c->Pch[at] = ch;
    *val = best;
    return XE_OK;
}

static int mg_cmp(const void *a, const void *b)
{
    const mg_pt *x = a, *y = b;
    if (x->req != y->req) return x->req < y->req ? -1 : 1;
    return x->cost < y->cost ? -1 : x->cost > y->cost;
}

/* Fills F(kind, s) from the lists above it (file comment). */
static int mg_front_fill(mg_ctx *c, int kind, int s)
{
    const xe_cdp_model *md = c->md;
    int L = c->L, rc;
    int64_t As = s >= 0 ? md->A[s + 1] : 0;
    size_t cap = 1, n = 0;
    for (int sp = s + 1; sp <= L; sp++) cap += (size_t)c->F[sp + 1].n + (size_t)c->F[(L + 2) + sp + 1].n;
    mg_pt *buf = malloc(cap * sizeof *buf);
    if (!buf) return xe_err_set(c->err, XE_ENOMEM, "chain dp: out of memory");
    double v;
    if ((rc = mg_P(c, kind, s, L, &v))) goto out;
    if (v < INFINITY && As <= c->Bd) buf[n++] = (mg_pt){As, v, -1};
    double fc = 0.0;
    int64_t hold = 0, fr = 0;
    for (int sp = s + 1; sp <= L; sp++) {
        cdp_sweep_step(md, s, sp, L, &fc, &hold, &fr);
        if (fr > c->Bd) break;
        for (int np = 0; np <= (sp < L); np++) {
            int thi = np ? sp : sp - 1;
            int keep = kind == 0 || cdp_has_work(md, s + 1, thi);
            int64_t sweep = keep ? hold : fr, shift = keep ? As : 0;
            if (sweep > c->Bd) continue;
            double vt = 0.0;
            if (keep && (rc = mg_P(c, kind, s, thi, &vt))) goto out;
            if (vt == INFINITY) continue;
            const mg_front *ch = &c->F[np * (L + 2) + sp + 1];
            for (int q = 0; q < ch->n; q++) {
                int64_t r = ch->p[q].req + shift;
                if (r > c->Bd) break;
                if (r < sweep && q + 1 < ch->n && ch->p[q + 1].req + shift <= sweep) continue; /* a cheaper one
                                                                                                  needs no more */
                buf[n++] = (mg_pt){r > sweep ? r : sweep, fc + ch->p[q].cost + vt, np ? -10 - sp : sp};
            }
        }
    }
    qsort(buf, n, sizeof *buf, mg_cmp);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (k == 0 || buf[i].cost < buf[k - 1].cost) buf[k++] = buf[i];
    mg_front *f = &c->F[kind * (L + 2) + s + 1];
    f->p = buf; /* owned by c->F from here on, also when empty */
    f->n = (int)k;
    return XE_OK;
out:
    free(buf);
    return rc;
}

/* The point of F(kind, s) at budget m: the last one needing at most m (NULL: none). */
static const mg_pt *mg_at(const mg_ctx *c, int kind, int s, int64_t m)
{
    const mg_front *f = &c->F[kind * (c->L + 2) + s + 1];
    const mg_pt *r = NULL;
    for (int q = 0; q < f->n && f->p[q].req <= m; q++) r = &f->p[q];
    return r;
}

#define MG_PUSH(k, v, a, b)                                                                                 \
    do {                                                                                                   \
        if (xe_schedule_push(out, (k), (v), (a), (b))) return xe_err_set(c->err, XE_ENOMEM, "chain dp: out of memory"); \
    } while (0)

static int mg_emit_P(mg_ctx *c, int kind, int s, int t, xe_schedule *out)
{
    int ch = c->Pch[cdp_tidx(c->L, kind, s, t)], d = c->d, e = c->e;
    if (ch == -3) return XE_OK;
    if (ch == -2) return mg_emit_P(c, kind, s, t - 1, out);
    if (s >= 0) MG_PUSH(XE_EV_COPY, s, d, e);
    if (ch == -1) return xe_cdp_lazy_emit_sub(c->ze, kind, s, t, c->Me, out, c->err);
    int np = ch <= -10, sp = np ? -10 - ch : ch;
    for (int j = s + 1; j <= sp; j++) {
        MG_PUSH(XE_EV_COMPUTE, j, e, -1);
        MG_PUSH(XE_EV_FREE, j == s + 1 ? s : j - 1, e, -1);
    }
    int rc = xe_cdp_lazy_emit_sub(c->ze, np, sp, t, c->Me, out, c->err);
    return rc ? rc : mg_emit_P(c, kind, s, np ? sp : sp - 1, out);
}

static int mg_emit(mg_ctx *c, int kind, int s, int64_t m, xe_schedule *out)
{
    const mg_pt *p = mg_at(c, kind, s, m);
    XE_ASSERT(p, "a migration point chosen above has a point below");
    int d = c->d, rc;
    if (p->choice == -1) {
        if ((rc = mg_emit_P(c, kind, s, c->L, out))) return rc;
        if (s >= 0) MG_PUSH(XE_EV_FREE, s, d, -1);
        return XE_OK;
    }
    int np = p->choice <= -10, sp = np ? -10 - p->choice : p->choice, thi = np ? sp : sp - 1;
    int keep = kind == 0 || cdp_has_work(c->md, s + 1, thi);
    for (int j = s + 1; j <= sp; j++) {
        MG_PUSH(XE_EV_COMPUTE, j, d, -1);
        if (j - 1 > s) MG_PUSH(XE_EV_FREE, j - 1, d, -1);
        if (j == s + 1 && !keep && s >= 0) MG_PUSH(XE_EV_FREE, s, d, -1);
    }
    int64_t As = s >= 0 ? c->md->A[s + 1] : 0;
    if ((rc = mg_emit(c, np, sp, keep ? m - As : m, out))) return rc;
    if (!keep) return XE_OK;
    if ((rc = mg_emit_P(c, kind, s, thi, out))) return rc;
    if (s >= 0) MG_PUSH(XE_EV_FREE, s, d, -1);
    return XE_OK;
}

int xe_cdp_migrate(const xe_cdp_model *md, const xe_cdp_model *me, xe_cdp_lazy *ze, double deadline,
                   double *cost, xe_schedule *out, xe_err *err)
{
    int L = md->L;
    size_t nt = 2 * (size_t)(L + 2) * (size_t)(L + 2);
    mg_ctx c = {md, me, ze, L, md->d, me->d, md->in->dev[md->d].budget, md->in->dev[me->d].budget, deadline,
                malloc(nt * sizeof(double)), malloc(nt * sizeof(int)), calloc(2 * (size_t)(L + 2), sizeof(mg_front)),
                err};
    int rc = XE_OK;
    *cost = INFINITY;
    if (!c.P || !c.Pch || !c.F) {
        rc = xe_err_set(err, XE_ENOMEM, "chain dp: out of memory");
        goto done;
    }
    for (size_t i = 0; i < nt; i++) c.P[i] = NAN;
    for (int s = L; s >= -1 && !rc; s--)
        for (int kind = 0; kind < 2 && !rc; kind++) rc = mg_front_fill(&c, kind, s);
    if (rc) goto done;
    const mg_pt *top = mg_at(&c, 0, -1, c.Bd);
    if (!top) goto done;
    int start = out->len;
    rc = mg_emit(&c, 0, -1, c.Bd, out);
    if (rc) out->len = start;
    else *cost = top->cost;
done:
    for (int i = 0; c.F && i < 2 * (L + 2); i++) free(c.F[i].p);
    free(c.F);
    free(c.P);
    free(c.Pch);
    return rc;
}
