/* Data-parallel loops of the distance kernels (smml._core._kdtree, smml._core._knn).
 *
 * smml_block_keys_*: exact distance keys of a block of points stored feature-major.
 * out[j] = the key of point j against q, where point j's feature f is B[f * stride + j]:
 * exactly smml._core._distances.exact_key (float64 subtraction q_f - p_f, squared or
 * absolute, summed in feature order starting from 0.0), computed for several points at
 * once. Each point's sum sees the same operations in the same order as the scalar
 * function, so the keys are bit for bit the same.
 *
 * smml_rank_sort: n (key, index) pairs with distinct indices sorted by (key, index), each
 * (with a payload) placed at its rank (the number of pairs before it), computed by comparing it with every
 * pair: O(n^2) branch-free comparisons, for the small n of a k-NN result (a heap sort of
 * 50 pairs costs more in mispredicted branches).
 *
 * smml_first_below_*: the first j < n with r[j] < top, or n: the candidate filter of the
 * brute-force k-NN scan (smml._core._knn), where almost no tile value passes; blocks of 32
 * values are tested branch-free, the block that holds one is searched value by value.
 *
 * The functions marked SMML_CLONED are compiled twice, portable and for AVX2, with the
 * same operations in the same order (the modules are compiled with -ffp-contract=off:
 * no fused multiply-add): both copies give the same bits, which tests/test_simd_paths.py
 * checks by forcing each one (SMML_SIMD, _platform.h). */
#ifndef SMML_CLONE_PASS
#ifndef SMML_SIMD_DIST_H
#define SMML_SIMD_DIST_H

#include <math.h>
#include "_platform.h"


/* the functions below, compiled portable (_base) and, with SMML_X86_DISPATCH, for
 * AVX2 (_avx2); the name without a suffix calls the copy of smml_isa() (_platform.h) */
#define SMML_CLONE_PASS 1
#define SMML_SFX(n) n##_base
#define SMML_CLONED static SMML_MAYBE_UNUSED
#include "_simd_dist.h"
#undef SMML_SFX
#undef SMML_CLONED
#if SMML_X86_DISPATCH
#define SMML_SFX(n) n##_avx2
#define SMML_CLONED static SMML_MAYBE_UNUSED SMML_TARGET_AVX2
#include "_simd_dist.h"
#undef SMML_SFX
#undef SMML_CLONED
#endif
#undef SMML_CLONE_PASS
#define smml_block_keys_d(...) SMML_PICK(smml_block_keys_d, __VA_ARGS__)
#define smml_block_keys_f(...) SMML_PICK(smml_block_keys_f, __VA_ARGS__)
#define smml_rank_sort(...) SMML_PICK(smml_rank_sort, __VA_ARGS__)
#define smml_first_below_d(...) SMML_PICK(smml_first_below_d, __VA_ARGS__)
#define smml_first_below_f(...) SMML_PICK(smml_first_below_f, __VA_ARGS__)


#endif  /* SMML_SIMD_DIST_H */

#else   /* SMML_CLONE_PASS: the multi-versioned functions */

/* metric codes: smml._core._distances (SQEUCLIDEAN, MANHATTAN, HAMMING) */
#define SMML_BODY(T)                                                            \
    ptrdiff_t f, j;                                                             \
    for (j = 0; j < n; j++)                                                     \
        out[j] = 0.0;                                                           \
    for (f = 0; f < d; f++) {                                                   \
        const T *SMML_RESTRICT col = B + f * stride;                                 \
        const double a = (double) q[f];                                         \
        if (metric == 0) {                                                      \
            for (j = 0; j < n; j++) {                                           \
                double t = a - (double) col[j];                                 \
                out[j] = out[j] + t * t;                                        \
            }                                                                   \
        } else if (metric == 1) {                                               \
            for (j = 0; j < n; j++)                                             \
                out[j] = out[j] + fabs(a - (double) col[j]);                    \
        } else {                                                                \
            const T qf = q[f];                                                  \
            for (j = 0; j < n; j++)                                             \
                out[j] = out[j] + (qf != col[j] ? 1.0 : 0.0);                   \
        }                                                                       \
    }

SMML_CLONED void SMML_SFX(smml_block_keys_d)(const double *SMML_RESTRICT q, const double *SMML_RESTRICT B,
                                          ptrdiff_t stride, ptrdiff_t n, ptrdiff_t d,
                                          int metric, double *SMML_RESTRICT out)
{
    SMML_BODY(double)
}

SMML_CLONED void SMML_SFX(smml_block_keys_f)(const float *SMML_RESTRICT q, const float *SMML_RESTRICT B,
                                          ptrdiff_t stride, ptrdiff_t n, ptrdiff_t d,
                                          int metric, double *SMML_RESTRICT out)
{
    SMML_BODY(float)
}

#undef SMML_BODY

/* Pairs of rank < cap are written to out_key / out_idx[rank], with their payload
 * pay[i] (any number carried along) to out_pay[rank]. */
SMML_CLONED void SMML_SFX(smml_rank_sort)(const double *SMML_RESTRICT key,
                                       const ptrdiff_t *SMML_RESTRICT idx,
                                       const ptrdiff_t *SMML_RESTRICT pay, ptrdiff_t n,
                                       ptrdiff_t cap, double *SMML_RESTRICT out_key,
                                       ptrdiff_t *SMML_RESTRICT out_idx,
                                       ptrdiff_t *SMML_RESTRICT out_pay)
{
    ptrdiff_t i, j, r;
    for (i = 0; i < n; i++) {
        const double ki = key[i];
        const ptrdiff_t ii = idx[i];
        r = 0;
        for (j = 0; j < n; j++)
            r += (key[j] < ki) | ((key[j] == ki) & (idx[j] < ii));
        if (r < cap) {
            out_key[r] = ki;
            out_idx[r] = ii;
            out_pay[r] = pay[i];
        }
    }
}

#define SMML_FIRST_BELOW(T, NAME)                                               \
    SMML_CLONED ptrdiff_t SMML_SFX(NAME)(const T *SMML_RESTRICT r, ptrdiff_t n, T top)  \
    {                                                                           \
        ptrdiff_t j = 0, u;                                                     \
        for (; j + 32 <= n; j += 32) {                                          \
            int any = 0;                                                        \
            for (u = 0; u < 32; u++)                                            \
                any |= r[j + u] < top;                                          \
            if (any)                                                            \
                break;                                                          \
        }                                                                       \
        for (; j < n; j++)                                                      \
            if (r[j] < top)                                                     \
                return j;                                                       \
        return n;                                                               \
    }

SMML_FIRST_BELOW(double, smml_first_below_d)
SMML_FIRST_BELOW(float, smml_first_below_f)
#undef SMML_FIRST_BELOW

#endif  /* SMML_CLONE_PASS */
