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
 * smml_sort_entries: a longer k-NN result (more than the rank sort's 128 points: ties,
 * duplicates) of (key, index, row) records with distinct indices sorted by (key, index) in
 * place: insertion sorts of runs of 16, then merges through a scratch buffer, comparisons
 * and copies inlined (qsort's comparison callback and generic element copies cost 2.5x this
 * on results of 150 tied points).
 *
 * smml_first_below_*: the first j < n with r[j] < top, or n: the candidate filter of the
 * brute-force k-NN scan (smml._core._knn), where almost no tile value passes; blocks of 32
 * values are tested branch-free, the block that holds one is searched value by value.
 *
 * The functions marked SMML_CLONED are compiled twice, portable and for AVX2, with the
 * same operations in the same order (the modules are compiled with -ffp-contract=off:
 * no fused multiply-add): both copies give the same bits, which tests/test_simd_paths.py
 * checks by forcing each one (SMML_SIMD, smml_platform.h). */
#ifndef SMML_CLONE_PASS
#ifndef SMML_SIMD_DIST_H
#define SMML_SIMD_DIST_H

#include <math.h>
#include "smml_platform.h"


/* ---- the brute-force scan's candidate test (smml._core._knn) ---- */
#include <string.h>
/* Is any r[j] + t[j] < top (j < n)?  A branch-free test that compilers vectorise:
   GCC / clang vector extensions where available (the same IEEE additions and
   comparisons as the scalar loop, no FMA), a plain loop elsewhere. */
#if defined(__GNUC__) && ((__GNUC__ >= 9) || defined(__clang__))
typedef double smml_v2d __attribute__((vector_size(16)));
typedef float smml_v2f __attribute__((vector_size(8)));
typedef long long smml_v2l __attribute__((vector_size(16)));
static inline int smml_any_below_d(const double *r, const double *t, Py_ssize_t n, double top) {
    smml_v2l acc0 = {0, 0}, acc1 = {0, 0};
    smml_v2d vt = {top, top};
    Py_ssize_t j = 0;
    long long any;
    for (; j + 4 <= n; j += 4) {
        smml_v2d a0, a1, b0, b1;
        memcpy(&a0, r + j, sizeof a0);
        memcpy(&a1, r + j + 2, sizeof a1);
        memcpy(&b0, t + j, sizeof b0);
        memcpy(&b1, t + j + 2, sizeof b1);
        acc0 |= (smml_v2l)((a0 + b0) < vt);
        acc1 |= (smml_v2l)((a1 + b1) < vt);
    }
    acc0 |= acc1;
    any = acc0[0] | acc0[1];
    for (; j < n; j++) any |= (r[j] + t[j]) < top;
    return any != 0;
}
static inline int smml_any_below_f(const float *r, const double *t, Py_ssize_t n, double top) {
    smml_v2l acc0 = {0, 0}, acc1 = {0, 0};
    smml_v2d vt = {top, top};
    Py_ssize_t j = 0;
    long long any;
    for (; j + 4 <= n; j += 4) {
        smml_v2f f0, f1;
        smml_v2d b0, b1;
        memcpy(&f0, r + j, sizeof f0);
        memcpy(&f1, r + j + 2, sizeof f1);
        memcpy(&b0, t + j, sizeof b0);
        memcpy(&b1, t + j + 2, sizeof b1);
        acc0 |= (smml_v2l)((__builtin_convertvector(f0, smml_v2d) + b0) < vt);
        acc1 |= (smml_v2l)((__builtin_convertvector(f1, smml_v2d) + b1) < vt);
    }
    acc0 |= acc1;
    any = acc0[0] | acc0[1];
    for (; j < n; j++) any |= ((double) r[j] + t[j]) < top;
    return any != 0;
}
#else
static inline int smml_any_below_d(const double *r, const double *t, Py_ssize_t n, double top) {
    int any = 0; Py_ssize_t j;
    for (j = 0; j < n; j++) any |= (r[j] + t[j]) < top;
    return any;
}
static inline int smml_any_below_f(const float *r, const double *t, Py_ssize_t n, double top) {
    int any = 0; Py_ssize_t j;
    for (j = 0; j < n; j++) any |= ((double) r[j] + t[j]) < top;
    return any;
}
#endif

/* ---- packed panels and the AVX2 + FMA tile (smml._core._distances) ---- */
#include "smml_platform.h"
#define SMML_PANEL_D 8
#define SMML_PANEL_F 16
/* kp, the tile's columns, is a multiple of the unit: 8 (float64: one panel; float32: half a
   panel, so that k <= 8 centroids do not pay for 16 columns) */
#define SMML_PANEL_UNIT 8
/* panel layout: P[(p * d + f) * PW + c] = -2 C[p * PW + c, f], 0 for p * PW + c >= k
   (the factor -2 is exact, so the tile needs no multiply); when kp is not a multiple of PW,
   the last UNIT columns are a half panel of width UNIT at P + (kp - UNIT) d:
   [f * UNIT + c] = -2 C[kp - UNIT + c, f] */
#define SMML_PACK(NAME, T, PW) \
SMML_MAYBE_UNUSED static void NAME(const T *C, Py_ssize_t k, Py_ssize_t d, Py_ssize_t kp, T *P) { \
    Py_ssize_t p, f, c, j, w; \
    for (p = 0; p < kp; p += w) { \
        w = kp - p >= PW ? PW : SMML_PANEL_UNIT; \
        for (f = 0; f < d; f++) \
            for (c = 0; c < w; c++) { \
                j = p + c; \
                P[p * d + f * w + c] = j < k ? (T) -2 * C[j * d + f] : (T) 0; \
            } \
    } \
}
SMML_PACK(smml_pack_panels_d, double, SMML_PANEL_D)
SMML_PACK(smml_pack_panels_f, float, SMML_PANEL_F)

#if SMML_X86_DISPATCH
SMML_MAYBE_UNUSED static int smml_fast_tile_available(void) {
    return smml_isa() >= SMML_ISA_AVX2;      /* AVX2 and FMA, unless SMML_SIMD lowers it */
}
/* out[0:R, 0:2W] = X[0:R, :] @ panel (d x 2W, holding -2 C), R = 4 or 1 rows; W = vector width */
#define SMML_TILE_KERNELS(SUF, T, VEC, W, ZERO, LOAD, BCAST, FMA, STORE) \
SMML_TARGET_AVX2_FMA SMML_MAYBE_UNUSED \
static void smml_tile4_##SUF(Py_ssize_t d, const T *X, Py_ssize_t ldx, const T *P, T *out, Py_ssize_t ldt) { \
    VEC a00 = ZERO(), a01 = a00, a10 = a00, a11 = a00, a20 = a00, a21 = a00, a30 = a00, a31 = a00; \
    const T *x0 = X, *x1 = X + ldx, *x2 = X + 2 * ldx, *x3 = X + 3 * ldx; \
    Py_ssize_t f; \
    for (f = 0; f < d; f++) { \
        VEC c0 = LOAD(P + f * 2 * W), c1 = LOAD(P + f * 2 * W + W), xb; \
        xb = BCAST(x0 + f); a00 = FMA(xb, c0, a00); a01 = FMA(xb, c1, a01); \
        xb = BCAST(x1 + f); a10 = FMA(xb, c0, a10); a11 = FMA(xb, c1, a11); \
        xb = BCAST(x2 + f); a20 = FMA(xb, c0, a20); a21 = FMA(xb, c1, a21); \
        xb = BCAST(x3 + f); a30 = FMA(xb, c0, a30); a31 = FMA(xb, c1, a31); \
    } \
    STORE(out, a00); STORE(out + W, a01); out += ldt; \
    STORE(out, a10); STORE(out + W, a11); out += ldt; \
    STORE(out, a20); STORE(out + W, a21); out += ldt; \
    STORE(out, a30); STORE(out + W, a31); \
} \
SMML_TARGET_AVX2_FMA SMML_MAYBE_UNUSED \
static void smml_tile1_##SUF(Py_ssize_t d, const T *X, const T *P, T *out) { \
    VEC a0 = ZERO(), a1 = a0; \
    Py_ssize_t f; \
    for (f = 0; f < d; f++) { \
        VEC xb = BCAST(X + f); \
        a0 = FMA(xb, LOAD(P + f * 2 * W), a0); a1 = FMA(xb, LOAD(P + f * 2 * W + W), a1); \
    } \
    STORE(out, a0); STORE(out + W, a1); \
} \
/* the half panel (one vector of W columns): 8 rows at a time, eight independent sums */ \
SMML_TARGET_AVX2_FMA SMML_MAYBE_UNUSED \
static void smml_tile8h_##SUF(Py_ssize_t d, const T *X, const T *P, T *out, Py_ssize_t ldt) { \
    VEC a0 = ZERO(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0, c; \
    Py_ssize_t f; \
    for (f = 0; f < d; f++) { \
        c = LOAD(P + f * W); \
        a0 = FMA(BCAST(X + f), c, a0); a1 = FMA(BCAST(X + d + f), c, a1); \
        a2 = FMA(BCAST(X + 2 * d + f), c, a2); a3 = FMA(BCAST(X + 3 * d + f), c, a3); \
        a4 = FMA(BCAST(X + 4 * d + f), c, a4); a5 = FMA(BCAST(X + 5 * d + f), c, a5); \
        a6 = FMA(BCAST(X + 6 * d + f), c, a6); a7 = FMA(BCAST(X + 7 * d + f), c, a7); \
    } \
    STORE(out, a0); STORE(out + ldt, a1); STORE(out + 2 * ldt, a2); STORE(out + 3 * ldt, a3); \
    STORE(out + 4 * ldt, a4); STORE(out + 5 * ldt, a5); STORE(out + 6 * ldt, a6); STORE(out + 7 * ldt, a7); \
} \
SMML_TARGET_AVX2_FMA SMML_MAYBE_UNUSED \
static void smml_tile1h_##SUF(Py_ssize_t d, const T *X, const T *P, T *out) { \
    VEC a0 = ZERO(); \
    Py_ssize_t f; \
    for (f = 0; f < d; f++) a0 = FMA(BCAST(X + f), LOAD(P + f * W), a0); \
    STORE(out, a0); \
} \
SMML_MAYBE_UNUSED static void smml_tile_panels_##SUF(Py_ssize_t nr, Py_ssize_t kp, Py_ssize_t d, \
                                                     const T *X, const T *P, T *out) { \
    Py_ssize_t p, r, full = kp / (2 * W) * (2 * W); \
    for (p = 0; p < full; p += 2 * W) { \
        const T *Pp = P + p * d; \
        for (r = 0; r + 4 <= nr; r += 4) \
            smml_tile4_##SUF(d, X + r * d, d, Pp, out + r * kp + p, kp); \
        for (; r < nr; r++) \
            smml_tile1_##SUF(d, X + r * d, Pp, out + r * kp + p); \
    } \
    if (full < kp) {        /* a half panel (float32: kp an odd multiple of 8) */ \
        const T *Pp = P + full * d; \
        for (r = 0; r + 8 <= nr; r += 8) \
            smml_tile8h_##SUF(d, X + r * d, Pp, out + r * kp + full, kp); \
        for (; r < nr; r++) \
            smml_tile1h_##SUF(d, X + r * d, Pp, out + r * kp + full); \
    } \
}
SMML_TILE_KERNELS(d, double, __m256d, 4, _mm256_setzero_pd, _mm256_loadu_pd, _mm256_broadcast_sd,
                  _mm256_fmadd_pd, _mm256_storeu_pd)
SMML_TILE_KERNELS(f, float, __m256, 8, _mm256_setzero_ps, _mm256_loadu_ps, _mm256_broadcast_ss,
                  _mm256_fmadd_ps, _mm256_storeu_ps)
#else
SMML_MAYBE_UNUSED static int smml_fast_tile_available(void) { return 0; }
/* portable loops (not used by the kernels, which check smml_fast_tile_available) */
#define SMML_TILE_PLAIN(SUF, T, PW) \
SMML_MAYBE_UNUSED static void smml_tile_panels_##SUF(Py_ssize_t nr, Py_ssize_t kp, Py_ssize_t d, \
                                                     const T *X, const T *P, T *out) { \
    Py_ssize_t p, r, f, c, w; \
    for (r = 0; r < nr; r++) \
        for (p = 0; p < kp; p += w) { \
            w = kp - p >= PW ? PW : SMML_PANEL_UNIT; \
            for (c = 0; c < w; c++) { \
                T s = 0; \
                for (f = 0; f < d; f++) s += X[r * d + f] * P[p * d + f * w + c]; \
                out[r * kp + p + c] = s; \
            } \
        } \
}
SMML_TILE_PLAIN(d, double, SMML_PANEL_D)
SMML_TILE_PLAIN(f, float, SMML_PANEL_F)
#endif

/* ---- sorting a long k-NN result (smml._core._kdtree) ---- */
typedef struct {
    double key;
    ptrdiff_t idx;      /* original training index: distinct within a result */
    ptrdiff_t pos;      /* row in tree order */
} smml_entry;

static inline int smml_entry_less(const smml_entry *a, const smml_entry *b) {
    return a->key < b->key || (a->key == b->key && a->idx < b->idx);
}

/* a[0 .. n-1] sorted by (key, idx); tmp: room for n records */
static inline void smml_sort_entries(smml_entry *a, ptrdiff_t n, smml_entry *tmp) {
    const ptrdiff_t run = 16;
    ptrdiff_t s, e, i, j, m, o, w;
    smml_entry x, *src = a, *dst = tmp, *t;
    for (s = 0; s < n; s += run) {
        e = s + run < n ? s + run : n;
        for (i = s + 1; i < e; i++) {
            x = a[i];
            for (j = i; j > s && smml_entry_less(&x, &a[j - 1]); j--)
                a[j] = a[j - 1];
            a[j] = x;
        }
    }
    for (w = run; w < n; w *= 2) {
        for (s = 0; s < n; s += 2 * w) {
            m = s + w < n ? s + w : n;
            e = s + 2 * w < n ? s + 2 * w : n;
            i = s;
            j = m;
            o = s;
            while (i < m && j < e)
                dst[o++] = smml_entry_less(&src[j], &src[i]) ? src[j++] : src[i++];
            while (i < m)
                dst[o++] = src[i++];
            while (j < e)
                dst[o++] = src[j++];
        }
        t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, (size_t)n * sizeof(smml_entry));
}

/* the functions below, compiled portable (_base) and, with SMML_X86_DISPATCH, for
 * AVX2 (_avx2); the name without a suffix calls the copy of smml_isa() (smml_platform.h) */
#define SMML_CLONE_SELF "smml_distances.h"
#include "smml_clones.h"
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
