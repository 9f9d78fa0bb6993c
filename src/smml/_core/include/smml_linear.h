/* The linear learners' C helpers (smml._core._linear). */
#ifndef SMML_LINEAR_H
#define SMML_LINEAR_H

#include "smml_platform.h"

/* ---- prefetch the rows of the next SGD steps (smml._core._linear) ---- */
#define SMML_PREFETCH_AHEAD 8   /* steps ahead: ~ memory latency / time of a step */
#if defined(__GNUC__) || defined(__clang__)
static __inline__ __attribute__((always_inline)) void
smml_prefetch_row(const char *p, Py_ssize_t row_bytes) {
    Py_ssize_t off;
    for (off = 0; off < row_bytes; off += 64)
        __builtin_prefetch(p + off, 0, 3);
    __builtin_prefetch(p + row_bytes - 1, 0, 3);  /* a row need not start on a line */
}
static __inline__ __attribute__((always_inline)) void
smml_prefetch_step(const char *X0, Py_ssize_t row_bytes, const Py_ssize_t *idx,
                   Py_ssize_t k, Py_ssize_t n) {
    Py_ssize_t j;
    if (k == 0)
        for (j = 1; j < n && j < SMML_PREFETCH_AHEAD; j++)
            smml_prefetch_row(X0 + idx[j] * row_bytes, row_bytes);
    if (k + SMML_PREFETCH_AHEAD < n)
        smml_prefetch_row(X0 + idx[k + SMML_PREFETCH_AHEAD] * row_bytes, row_bytes);
}
#else
static CYTHON_INLINE void
smml_prefetch_step(const char *X0, Py_ssize_t row_bytes, const Py_ssize_t *idx,
                   Py_ssize_t k, Py_ssize_t n) {
    (void)X0; (void)row_bytes; (void)idx; (void)k; (void)n;
}
#endif

#endif
