/* Software prefetch (reads only, no effect on results). The kernels that walk rows in an
 * order known in advance (an SGD epoch's shuffled order, a tree node's rows) ask for the
 * cache lines of a row some steps before they read it: without help each such row is a
 * cache (and TLB) miss. Compiles to nothing where __builtin_prefetch does not exist (MSVC).
 * Written in C and always_inline on purpose: GCC sees a separate function that only
 * prefetches as free of side effects and deletes the calls to it (checked on gcc 12: a
 * Cython `cdef inline` helper lost every prefetch instruction). */
#ifndef SMML_PREFETCH_H
#define SMML_PREFETCH_H

#include "smml_platform.h"

#if defined(__GNUC__) || defined(__clang__)
/* every cache line of the bytes [p, p + bytes) (bytes >= 1) */
static __inline__ __attribute__((always_inline)) void
smml_prefetch_span(const void *p, ptrdiff_t bytes) {
    const char *c = (const char *) p;
    ptrdiff_t off;
    for (off = 0; off < bytes; off += 64)
        __builtin_prefetch(c + off, 0, 3);
    __builtin_prefetch(c + bytes - 1, 0, 3);  /* the span need not start on a line */
}
#else
static __inline void
smml_prefetch_span(const void *p, ptrdiff_t bytes) {
    (void)p; (void)bytes;
}
#endif

#endif
