/* xengine executor — a device's memory pool: exact accounting of the resident tensors
 * against the device's budget, with freed blocks kept for reuse within the budget
 * (include/xengine/exec.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xengine/exec.h"

void xe_pool_init(xe_pool *p, const char *dev, int64_t budget)
{
    memset(p, 0, sizeof *p);
    snprintf(p->dev, sizeof p->dev, "%s", dev ? dev : "");
    p->budget = budget;
}

void xe_pool_clear(xe_pool *p)
{
    XE_ASSERT(p->nalloc == 0, "pool cleared with live allocations");
    for (int i = 0; i < p->ncache; i++) free(p->cache_ptr[i]);
    free(p->cache_ptr);
    free(p->cache_bytes);
    p->cache_ptr = NULL;
    p->cache_bytes = NULL;
    p->ncache = p->cap_cache = 0;
    p->cached = p->used = p->peak = 0;
}

void xe_pool_reset_peak(xe_pool *p) { p->peak = p->used; }

/* Drops the oldest kept blocks until used + cached <= limit. */
static void trim(xe_pool *p, int64_t limit)
{
    int drop = 0;
    while (drop < p->ncache && p->used + p->cached > limit) {
        free(p->cache_ptr[drop]);
        p->cached -= p->cache_bytes[drop];
        drop++;
    }
    if (!drop) return;
    p->ncache -= drop;
    memmove(p->cache_ptr, p->cache_ptr + drop, (size_t)p->ncache * sizeof *p->cache_ptr);
    memmove(p->cache_bytes, p->cache_bytes + drop, (size_t)p->ncache * sizeof *p->cache_bytes);
}

int xe_pool_alloc(xe_pool *p, const char *node, int64_t bytes, void **out, xe_err *err)
{
    *out = NULL;
    if (bytes < 0 || bytes > XE_MAX_BYTES)
        return xe_err_set(err, XE_EINVAL, "device %s: allocating %lld B for %s: bad size", p->dev,
                          (long long)bytes, node);
    if (p->budget > 0 && p->used + bytes > p->budget)
        return xe_err_set(err, XE_EINFEASIBLE,
                          "device %s: allocating %lld B for %s would hold %lld B, over the budget of %lld B",
                          p->dev, (long long)bytes, node, (long long)(p->used + bytes), (long long)p->budget);
    if (bytes > 0) {
        for (int i = p->ncache - 1; i >= 0 && !*out; i--) /* newest first: warmest */
            if (p->cache_bytes[i] == bytes) {
                *out = p->cache_ptr[i];
                p->cached -= bytes;
                p->ncache--;
                memmove(p->cache_ptr + i, p->cache_ptr + i + 1, (size_t)(p->ncache - i) * sizeof *p->cache_ptr);
                memmove(p->cache_bytes + i, p->cache_bytes + i + 1, (size_t)(p->ncache - i) * sizeof *p->cache_bytes);
            }
        if (!*out) {
            if (p->budget > 0) trim(p, p->budget - bytes); /* room for the new block */
            size_t sz = ((size_t)bytes + 63) / 64 * 64;
            *out = aligned_alloc(64, sz);
            if (!*out)
                return xe_err_set(err, XE_ENOMEM, "device %s: out of memory allocating %lld B for %s", p->dev,
                                  (long long)bytes, node);
        }
    }
    p->used += bytes;
    p->nalloc++;
    if (p->used > p->peak) p->peak = p->used;
    return XE_OK;
}

void xe_pool_free(xe_pool *p, void *ptr, int64_t bytes)
{
    XE_ASSERT(p->used >= bytes && p->nalloc > 0, "pool: freeing more than was allocated");
    p->used -= bytes;
    p->nalloc--;
    if (!ptr) return;
    int64_t limit = p->budget > 0 ? p->budget : p->peak;
    if (p->ncache == p->cap_cache) {
        int cap = p->cap_cache ? 2 * p->cap_cache : 16;
        void **np = realloc(p->cache_ptr, (size_t)cap * sizeof *np);
        if (np) p->cache_ptr = np;
        int64_t *nb = realloc(p->cache_bytes, (size_t)cap * sizeof *nb);
        if (nb) p->cache_bytes = nb;
        if (!np || !nb) { /* cannot keep it: give it back */
            free(ptr);
            return;
        }
        p->cap_cache = cap;
    }
    p->cache_ptr[p->ncache] = ptr;
    p->cache_bytes[p->ncache++] = bytes;
    p->cached += bytes;
    trim(p, limit);
}
