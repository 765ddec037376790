/* Memory for the searches that run on the planner's second thread (bound_search.c,
 * bound_reach.c): mapped directly, never through malloc, and kept out of forked children.
 * Internal to the library.
 *
 * The planner forks CBC processes while a search runs on its thread (docs/lns.md,
 * "Bounds" 6): a fork while another thread is inside the allocator can leave the child a
 * locked one, and every page shared copy-on-write made each write of the search a page
 * copy (random_layered_n100 at 70%: 0.97 million states expanded in a 60-s solve against
 * 2.8 million beside a separate solve process). So the large arrays are mmap'ed with
 * MADV_DONTFORK and grow with mremap. The including file defines _GNU_SOURCE first. */
#ifndef XENGINE_SOLVERS_MAPPED_H
#define XENGINE_SOLVERS_MAPPED_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

/* bytes of zeroed memory (as from calloc); NULL when out of memory. */
static inline void *xe_map(size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
#ifdef MADV_DONTFORK
    (void)madvise(p, bytes, MADV_DONTFORK); /* a hint: without it only slower */
#endif
    return p;
}

/* Unmaps p of `bytes` (NULL: no-op). */
static inline void xe_unmap(void *p, size_t bytes)
{
    if (p) munmap(p, bytes);
}

/* A mapping of nbytes holding the first oldbytes of p (which it replaces); NULL (p kept)
 * when out of memory. On Linux mremap moves the pages instead of copying them: growing
 * the state arrays by copy took 2.4 s at 2 million states of a 1,000-node graph, and the
 * searches check their stop flag only between states, so a solve overran its time limit
 * by that much. */
static inline void *xe_remap(void *p, size_t oldbytes, size_t nbytes)
{
#ifdef MREMAP_MAYMOVE
    void *q = mremap(p, oldbytes, nbytes, MREMAP_MAYMOVE);
    if (q == MAP_FAILED) return NULL;
#ifdef MADV_DONTFORK
    (void)madvise(q, nbytes, MADV_DONTFORK); /* the grown part too */
#endif
    return q;
#else
    void *q = xe_map(nbytes);
    if (!q) return NULL;
    memcpy(q, p, oldbytes);
    xe_unmap(p, oldbytes);
    return q;
#endif
}

/* The hash of a key of `words` 64-bit words; callers store its high 32 bits in the key's
 * hash slot and pick the slot by them, so that a table grows without reading a key
 * again. */
static inline uint64_t xe_hash_words(const uint64_t *k, int words)
{
    uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < words; i++) {
        h ^= k[i];
        h *= 0xff51afd7ed558ccdULL;
        h ^= h >> 32;
    }
    return h;
}

/* Hash tables of tagged slots (bound_search.c, bound_reach.c): a slot is 0 when empty,
 * else an entry whose high 32 bits are its key's hash's and pick its home slot. */
static inline size_t xe_slot_home(uint64_t e, size_t hcap)
{
    return (size_t)(e >> 32) & (hcap - 1);
}

/* Doubles the table *slot of *hcap slots (a power of two) within a memory limit: a new
 * mapping holding every entry, the old one unmapped, *bytes (the caller's count of its
 * mapped bytes) raised by the growth. 0, or -1 (the table kept) at 2^32 slots, when
 * *bytes would pass max_bytes, or when out of memory. */
static inline int xe_slots_grow(uint64_t **slot, size_t *hcap, size_t *bytes, size_t max_bytes)
{
    size_t ncap = *hcap * 2, extra = *hcap * sizeof **slot; /* the new table less the old */
    if (ncap > ((size_t)1 << 32) || *bytes + 2 * extra > max_bytes) return -1;
    uint64_t *ns = xe_map(ncap * sizeof *ns);
    if (!ns) return -1;
    for (size_t i = 0; i < *hcap; i++) {
        uint64_t e = (*slot)[i];
        if (!e) continue;
        size_t j = xe_slot_home(e, ncap);
        while (ns[j]) j = (j + 1) & (ncap - 1);
        ns[j] = e;
    }
    xe_unmap(*slot, *hcap * sizeof **slot);
    *slot = ns;
    *hcap = ncap;
    *bytes += extra;
    return 0;
}

#endif
