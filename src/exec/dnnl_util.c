/* xengine executor — the oneDNN device runtime: engines, streams, thread counts,
 * memory descriptors and cached primitives. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "kern.h"

int xe_kdev_init(xe_kdev *k, int threads, xe_err *err)
{
    memset(k, 0, sizeof *k);
    k->threads = threads > 0 ? threads : omp_get_num_procs();
    if (dnnl_engine_create(&k->eng, dnnl_cpu, 0) != dnnl_success)
        return xe_err_set(err, XE_EINTERNAL, "oneDNN: cannot create a CPU engine");
    if (dnnl_stream_create(&k->strm, k->eng, dnnl_stream_default_flags) != dnnl_success) {
        dnnl_engine_destroy(k->eng);
        k->eng = NULL;
        return xe_err_set(err, XE_EINTERNAL, "oneDNN: cannot create a CPU stream");
    }
    return XE_OK;
}

void xe_kdev_clear(xe_kdev *k)
{
    if (k->strm) dnnl_stream_destroy(k->strm);
    if (k->eng) dnnl_engine_destroy(k->eng);
    memset(k, 0, sizeof *k);
}

void xe_kdev_enter(const xe_kdev *k)
{
    /* oneDNN's OpenMP runtime sizes its parallel regions by omp_get_max_threads() of
     * the calling thread, and keys its primitive cache by that count too. */
    omp_set_num_threads(k->threads);
}

int xe_omp_threads(void) { return omp_get_max_threads(); }
void xe_omp_set_threads(int n) { omp_set_num_threads(n); }

void xe_kslot_clear(xe_kslot *s)
{
    for (int i = 0; i < XE_KSLOT_MAX; i++)
        if (s->prim[i]) dnnl_primitive_destroy(s->prim[i]);
    memset(s, 0, sizeof *s);
}

int xe_md_strided(dnnl_memory_desc_t *md, int rank, const int64_t *dim, const int64_t *strides)
{
    dnnl_dims_t d, s;
    for (int i = 0; i < rank; i++) {
        d[i] = dim[i];
        s[i] = strides[i];
    }
    return dnnl_memory_desc_init_by_strides(md, rank, d, dnnl_f32, s) == dnnl_success ? XE_OK : XE_EINTERNAL;
}

int xe_md_plain(dnnl_memory_desc_t *md, int rank, const int64_t *dim)
{
    int64_t s[XE_MAX_RANK];
    int64_t acc = 1;
    for (int i = rank - 1; i >= 0; i--) {
        s[i] = acc;
        acc *= dim[i];
    }
    return xe_md_strided(md, rank, dim, s);
}

const char *xe_kname(const xe_kargs *a) { return a->net->op[a->k].name; }

int xe_prim_get(const xe_kargs *a, int i, const void *op_desc, const void *hint_desc,
                dnnl_primitive_t *out, xe_err *err)
{
    XE_ASSERT(i >= 0 && i < XE_KSLOT_MAX, "primitive slot out of range");
    if (a->slot && a->slot->prim[i]) {
        *out = a->slot->prim[i];
        return XE_OK;
    }
    dnnl_primitive_desc_t hint = NULL, pd = NULL;
    dnnl_status_t st;
    if (hint_desc && (st = dnnl_primitive_desc_create(&hint, hint_desc, NULL, a->dev->eng, NULL)) != dnnl_success)
        return xe_err_set(err, XE_EUNSUPPORTED, "op %s: oneDNN has no forward primitive for it (status %d)",
                          xe_kname(a), (int)st);
    st = dnnl_primitive_desc_create(&pd, op_desc, NULL, a->dev->eng, hint);
    if (hint) dnnl_primitive_desc_destroy(hint);
    if (st != dnnl_success)
        return xe_err_set(err, XE_EUNSUPPORTED, "op %s: oneDNN has no primitive for it (status %d)", xe_kname(a),
                          (int)st);
    dnnl_primitive_t p = NULL;
    st = dnnl_primitive_create(&p, pd);
    dnnl_primitive_desc_destroy(pd);
    if (st != dnnl_success)
        return xe_err_set(err, XE_EINTERNAL, "op %s: oneDNN cannot create the primitive (status %d)", xe_kname(a),
                          (int)st);
    XE_ASSERT(a->slot != NULL, "kernel called without a primitive slot");
    a->slot->prim[i] = p;
    *out = p;
    return XE_OK;
}

int xe_prim_exec(const xe_kargs *a, dnnl_primitive_t prim, int nargs, const xe_karg *args, xe_err *err)
{
    dnnl_exec_arg_t ea[16];
    XE_ASSERT(nargs <= 16, "too many primitive arguments");
    int made = 0, rc = XE_OK;
    for (; made < nargs; made++) {
        if (dnnl_memory_create(&ea[made].memory, args[made].md, a->dev->eng, (void *)args[made].ptr) !=
            dnnl_success) {
            rc = xe_err_set(err, XE_EINTERNAL, "op %s: oneDNN cannot wrap a buffer", xe_kname(a));
            break;
        }
        ea[made].arg = args[made].arg;
    }
    if (!rc) {
        dnnl_status_t st = dnnl_primitive_execute(prim, a->dev->strm, nargs, ea);
        if (st == dnnl_success) st = dnnl_stream_wait(a->dev->strm);
        if (st != dnnl_success)
            rc = xe_err_set(err, XE_EINTERNAL, "op %s: oneDNN execution failed (status %d)", xe_kname(a), (int)st);
    }
    for (int i = 0; i < made; i++) dnnl_memory_destroy(ea[i].memory);
    return rc;
}
