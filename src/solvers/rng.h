/* Internal: the seeded generator of the randomised searches (LNS, budget descent):
 * splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators",
 * OOPSLA 2014). The state is the caller's: no global state. */
#ifndef XE_SOLVERS_RNG_H
#define XE_SOLVERS_RNG_H

#include <stdint.h>

/* Next 64 random bits; advances *s. */
static inline uint64_t xe_splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#endif
