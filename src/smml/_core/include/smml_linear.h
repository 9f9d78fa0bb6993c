/* The linear learners' C helpers (smml._core._linear). */
#ifndef SMML_LINEAR_H
#define SMML_LINEAR_H

#include "smml_platform.h"
#include "smml_prefetch.h"

/* ---- prefetch the rows of the next SGD steps (smml._core._linear) ---- */
#define SMML_PREFETCH_AHEAD 8   /* steps ahead: ~ memory latency / time of a step */
static SMML_ALWAYS_INLINE void
smml_prefetch_step(const char *X0, Py_ssize_t row_bytes, const Py_ssize_t *idx,
                   Py_ssize_t k, Py_ssize_t n) {
    Py_ssize_t j;
    if (k == 0)
        for (j = 1; j < n && j < SMML_PREFETCH_AHEAD; j++)
            smml_prefetch_span(X0 + idx[j] * row_bytes, row_bytes);
    if (k + SMML_PREFETCH_AHEAD < n)
        smml_prefetch_span(X0 + idx[k + SMML_PREFETCH_AHEAD] * row_bytes, row_bytes);
}

#endif
