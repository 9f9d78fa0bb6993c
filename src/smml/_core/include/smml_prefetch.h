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

/* three spans at once: what a histogram pass reads of one row (its codes, its weight, its
 * target; smml._core._histogram.hist_build) */
static __inline__ __attribute__((always_inline)) void
smml_prefetch_row3(const void *a, ptrdiff_t na, const void *b, ptrdiff_t nb, const void *c, ptrdiff_t nc) {
    smml_prefetch_span(a, na);
    smml_prefetch_span(b, nb);
    smml_prefetch_span(c, nc);
}

/* a tree node's test fields (smml._core._tree_predict): the record's first 18 bytes, which may
 * straddle two cache lines */
static __inline__ __attribute__((always_inline)) void
smml_prefetch_node(const char *p) {
    __builtin_prefetch(p, 0, 3);
    __builtin_prefetch(p + 17, 0, 3);
}
#else
static __inline void
smml_prefetch_span(const void *p, ptrdiff_t bytes) {
    (void)p; (void)bytes;
}
static __inline void
smml_prefetch_row3(const void *a, ptrdiff_t na, const void *b, ptrdiff_t nb, const void *c, ptrdiff_t nc) {
    (void)a; (void)na; (void)b; (void)nb; (void)c; (void)nc;
}
static __inline void
smml_prefetch_node(const char *p) { (void)p; }
#endif

#endif
