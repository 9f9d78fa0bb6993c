/* The Lloyd pass's chunk-level helpers (smml._core._kmeans). */
#ifndef SMML_KMEANS_H
#define SMML_KMEANS_H

#include "smml_platform.h"
#include "smml_distances.h"

/* ---- the Lloyd pass's helpers (smml._core._kmeans) ---- */
#include <math.h>
#include <stdint.h>
/* Chunk-level helpers of the Lloyd pass, AVX2 (no FMA: the same roundings as the plain
   loops) where the CPU has it; the kernel uses them only when fast_tile_available().

   smml_best_rows: for each row i of a tile (nr x kp, kp a multiple of 4, columns past k
   with cn = +inf), v_j = tile[i, j] + cn[j] in float64; out[i] = the index of the single
   v_j <= min_j v_j + eps2_i, or -1 when there are several (a tie or a near-tie), with
   eps2_i = coef4 (xn[i] + R2). Branch-free for kp <= 64. A row whose previous label p
   is the only column within eps2 of v_p is decided in one pass (then v_p is the
   minimum and the full test would say the same); most rows, once the labels settle.
   Used for SMML_PREV_MIN_KP <= kp <= 64 (elsewhere the code is compiled without it)
   and a previous label in [0, kp) (any other value, e.g. -1 before the first
   assignment, takes the full test).

   smml_add_rows: for each row i, S[label_i] += w_i x_i (float64), W[label_i] += w_i,
   Q[label_i] += w_i xn_i, rows in order; w == NULL means w_i = 1 (the record layout: below). */
#include "smml_platform.h"
#if SMML_X86_DISPATCH
/* the previous-label pass from this many tile columns: below, the pass it saves costs
   less than its data-dependent branch (the interleaved A/B: bench/cluster.md) */
#define SMML_PREV_MIN_KP 32
/* one row's candidate mask over kp <= 64 columns: bit j set when v_j <= thr */
#define SMML_MASK_LOOP(W, CMPMASK) \
    mask = 0; \
    for (j = 0; j < kp; j += W) mask |= (uint64_t) (CMPMASK) << j;
__attribute__((target("avx2"), always_inline))
static inline void smml_best_rows_d_body(const double *tile, Py_ssize_t nr, Py_ssize_t kp, const double *cn,
                                         const int32_t *prev, const double *xn, double coef4, double R2,
                                         int32_t *out, const int use_prev) {
    Py_ssize_t i, j, first;
    uint64_t mask;
    for (i = 0; i < nr; i++) {
        const double *t = tile + i * kp;
        double eps2 = coef4 * (xn[i] + R2);
        __m256d vmin = _mm256_set1_pd(INFINITY), thr;
        __m128d lo;
        int count, m, p = use_prev ? prev[i] : -1;
        if (use_prev && p >= 0 && p < kp) {
            /* the previous label first: alone within eps2 of its own v, it is the minimum */
            thr = _mm256_set1_pd((t[p] + cn[p]) + eps2);
            SMML_MASK_LOOP(4, _mm256_movemask_pd(_mm256_cmp_pd(
                _mm256_add_pd(_mm256_loadu_pd(t + j), _mm256_loadu_pd(cn + j)), thr, _CMP_LE_OQ)))
            if (mask == ((uint64_t) 1 << p)) { out[i] = p; continue; }
        }
        for (j = 0; j < kp; j += 4)
            vmin = _mm256_min_pd(vmin, _mm256_add_pd(_mm256_loadu_pd(t + j), _mm256_loadu_pd(cn + j)));
        lo = _mm_min_pd(_mm256_castpd256_pd128(vmin), _mm256_extractf128_pd(vmin, 1));
        lo = _mm_min_sd(lo, _mm_unpackhi_pd(lo, lo));
        thr = _mm256_set1_pd(_mm_cvtsd_f64(lo) + eps2);
        if (kp <= 64) {
            SMML_MASK_LOOP(4, _mm256_movemask_pd(_mm256_cmp_pd(
                _mm256_add_pd(_mm256_loadu_pd(t + j), _mm256_loadu_pd(cn + j)), thr, _CMP_LE_OQ)))
            out[i] = (mask & (mask - 1)) == 0 ? (int32_t) __builtin_ctzll(mask) : -1;
        } else {
            count = 0;
            first = -1;
            for (j = 0; j < kp; j += 4) {
                m = _mm256_movemask_pd(_mm256_cmp_pd(
                    _mm256_add_pd(_mm256_loadu_pd(t + j), _mm256_loadu_pd(cn + j)), thr, _CMP_LE_OQ));
                if (m) {
                    count += __builtin_popcount(m);
                    if (first < 0) first = j + __builtin_ctz(m);
                }
            }
            out[i] = count == 1 ? (int32_t) first : -1;
        }
    }
}
/* the previous-label pass compiled in only where it pays (a constant use_prev) */
__attribute__((target("avx2")))
static void smml_best_rows_d(const double *tile, Py_ssize_t nr, Py_ssize_t kp, const double *cn,
                             const int32_t *prev, const double *xn, double coef4, double R2,
                             int32_t *out) {
    if (prev != NULL && kp >= SMML_PREV_MIN_KP && kp <= 64)
        smml_best_rows_d_body(tile, nr, kp, cn, prev, xn, coef4, R2, out, 1);
    else
        smml_best_rows_d_body(tile, nr, kp, cn, prev, xn, coef4, R2, out, 0);
}
/* smml_add_rows: a cluster's partial sums are one record of R doubles (R = d + 2 rounded up
   to a multiple of 4): [S (d) | W | Q | zeros]. The features by fours, then the record's
   tail (the last d % 4 features, W and Q) as one or two vectors: each element gets the same
   additions, in the same order, as one scalar addition per element would give. */
#define SMML_ADD_ROWS(SUF, T, LOAD4) \
__attribute__((target("avx2"))) \
static void smml_add_rows_##SUF(const T *X, Py_ssize_t nr, Py_ssize_t d, const int32_t *labels, \
                                const double *xn, const double *w, Py_ssize_t R, double *S) { \
    Py_ssize_t i, f, f4 = d & ~(Py_ssize_t) 3; \
    __m256d t0, t1; \
    double wi, q, x0, x1, x2; \
    for (i = 0; i < nr; i++) { \
        const T *x = X + i * d; \
        double *s = S + (Py_ssize_t) labels[i] * R; \
        if (w) { \
            __m256d wv = _mm256_set1_pd(w[i]); \
            wi = w[i]; \
            q = wi * xn[i]; \
            for (f = 0; f < f4; f += 4) \
                _mm256_storeu_pd(s + f, _mm256_add_pd(_mm256_loadu_pd(s + f), _mm256_mul_pd(wv, LOAD4(x + f)))); \
            x0 = d > f4 ? wi * (double) x[f4] : 0.0; \
            x1 = d > f4 + 1 ? wi * (double) x[f4 + 1] : 0.0; \
            x2 = d > f4 + 2 ? wi * (double) x[f4 + 2] : 0.0; \
        } else { \
            wi = 1.0; \
            q = xn[i]; \
            for (f = 0; f < f4; f += 4) \
                _mm256_storeu_pd(s + f, _mm256_add_pd(_mm256_loadu_pd(s + f), LOAD4(x + f))); \
            x0 = d > f4 ? (double) x[f4] : 0.0; \
            x1 = d > f4 + 1 ? (double) x[f4 + 1] : 0.0; \
            x2 = d > f4 + 2 ? (double) x[f4 + 2] : 0.0; \
        } \
        switch (d - f4) { \
        case 0: t0 = _mm256_setr_pd(wi, q, 0.0, 0.0); break; \
        case 1: t0 = _mm256_setr_pd(x0, wi, q, 0.0); break; \
        case 2: t0 = _mm256_setr_pd(x0, x1, wi, q); break; \
        default: \
            t0 = _mm256_setr_pd(x0, x1, x2, wi); \
            t1 = _mm256_setr_pd(q, 0.0, 0.0, 0.0); \
            _mm256_storeu_pd(s + f4 + 4, _mm256_add_pd(_mm256_loadu_pd(s + f4 + 4), t1)); \
        } \
        _mm256_storeu_pd(s + f4, _mm256_add_pd(_mm256_loadu_pd(s + f4), t0)); \
    } \
}
#define SMML_LOAD4_D(p) _mm256_loadu_pd(p)
#define SMML_LOAD4_F(p) _mm256_cvtps_pd(_mm_loadu_ps(p))
SMML_ADD_ROWS(d, double, SMML_LOAD4_D)
SMML_ADD_ROWS(f, float, SMML_LOAD4_F)
/* smml_best_rows_f32: the same test on a float32 tile entirely in float32, 8 lanes
   (kp a multiple of 8; cn32 = cn rounded to float32, +inf past k). The two float32
   additions and the rounding of the threshold add at most 2 u32 (s + R)^2 and
   u32 (|min v| + eps2) to the error; the bound's coefficient (2d + 8)(u32 + u64) 1.1
   exceeds the float64 test's needs by more than that (see smml.neighbors), so a
   single candidate still proves the argmin. */
__attribute__((target("avx2"), always_inline))
static inline void smml_best_rows_f32_body(const float *tile, Py_ssize_t nr, Py_ssize_t kp, const float *cn32,
                                           const int32_t *prev, const double *xn, double coef4, double R2,
                                           int32_t *out, const int use_prev) {
    Py_ssize_t i, j, first;
    uint64_t mask;
    for (i = 0; i < nr; i++) {
        const float *t = tile + i * kp;
        float eps2 = (float) (coef4 * (xn[i] + R2));
        __m256 vmin = _mm256_set1_ps(INFINITY), thr;
        __m128 lo;
        int count, m, p = use_prev ? prev[i] : -1;
        if (use_prev && p >= 0 && p < kp) {
            thr = _mm256_set1_ps((t[p] + cn32[p]) + eps2);
            SMML_MASK_LOOP(8, _mm256_movemask_ps(_mm256_cmp_ps(
                _mm256_add_ps(_mm256_loadu_ps(t + j), _mm256_loadu_ps(cn32 + j)), thr, _CMP_LE_OQ)))
            if (mask == ((uint64_t) 1 << p)) { out[i] = p; continue; }
        }
        for (j = 0; j < kp; j += 8)
            vmin = _mm256_min_ps(vmin, _mm256_add_ps(_mm256_loadu_ps(t + j), _mm256_loadu_ps(cn32 + j)));
        lo = _mm_min_ps(_mm256_castps256_ps128(vmin), _mm256_extractf128_ps(vmin, 1));
        lo = _mm_min_ps(lo, _mm_movehl_ps(lo, lo));
        lo = _mm_min_ss(lo, _mm_shuffle_ps(lo, lo, 1));
        thr = _mm256_set1_ps(_mm_cvtss_f32(lo) + eps2);
        if (kp <= 64) {
            SMML_MASK_LOOP(8, _mm256_movemask_ps(_mm256_cmp_ps(
                _mm256_add_ps(_mm256_loadu_ps(t + j), _mm256_loadu_ps(cn32 + j)), thr, _CMP_LE_OQ)))
            out[i] = (mask & (mask - 1)) == 0 ? (int32_t) __builtin_ctzll(mask) : -1;
        } else {
            count = 0;
            first = -1;
            for (j = 0; j < kp; j += 8) {
                m = _mm256_movemask_ps(_mm256_cmp_ps(
                    _mm256_add_ps(_mm256_loadu_ps(t + j), _mm256_loadu_ps(cn32 + j)), thr, _CMP_LE_OQ));
                if (m) {
                    count += __builtin_popcount(m);
                    if (first < 0) first = j + __builtin_ctz(m);
                }
            }
            out[i] = count == 1 ? (int32_t) first : -1;
        }
    }
}
/* the previous-label pass compiled in only where it pays (a constant use_prev) */
__attribute__((target("avx2")))
static void smml_best_rows_f32(const float *tile, Py_ssize_t nr, Py_ssize_t kp, const float *cn32,
                             const int32_t *prev, const double *xn, double coef4, double R2,
                             int32_t *out) {
    if (prev != NULL && kp >= SMML_PREV_MIN_KP && kp <= 64)
        smml_best_rows_f32_body(tile, nr, kp, cn32, prev, xn, coef4, R2, out, 1);
    else
        smml_best_rows_f32_body(tile, nr, kp, cn32, prev, xn, coef4, R2, out, 0);
}
/* smml_best2_rows: the test of smml_best_rows (without the previous-label pass) and, for
   the distance bounds, lo[i] = the second smallest v_j of the row (the smallest over the
   columns other than the argmin, ties counted): one pass keeping each lane's two smallest,
   then, for a row with a single candidate, a search for the argmin's column. A row with
   several candidates gets out[i] = -1 (lo[i] unset: the caller picks the label among them
   and computes lo). The float32 version computes in float32 as smml_best_rows_f32 (the
   same error bound). */
__attribute__((target("avx2"), always_inline))
static inline __m256d smml_hmin4(__m256d v) {       /* the minimum, in every lane */
    v = _mm256_min_pd(v, _mm256_permute2f128_pd(v, v, 1));
    return _mm256_min_pd(v, _mm256_permute_pd(v, 5));
}
__attribute__((target("avx2"), always_inline))
static inline __m256 smml_hmin8(__m256 v) {
    v = _mm256_min_ps(v, _mm256_permute2f128_ps(v, v, 1));
    v = _mm256_min_ps(v, _mm256_shuffle_ps(v, v, _MM_SHUFFLE(1, 0, 3, 2)));
    return _mm256_min_ps(v, _mm256_shuffle_ps(v, v, _MM_SHUFFLE(2, 3, 0, 1)));
}
#define SMML_BEST2_BODY(VEC, W, SET1, LOAD, ADD, MIN, MAX, CMP, MOVEMASK, BLENDV, HMIN, LANES, CVT1, T) \
    Py_ssize_t i, j; \
    const VEC inf = SET1(INFINITY); \
    for (i = 0; i < nr; i++) { \
        const T *t = tile + i * kp; \
        VEC m1 = inf, m2 = inf, n1 = inf, n2 = inf, v, u, g1, g2, one; \
        T thr; \
        int m; \
        /* two independent pairs of accumulators (even and odd vectors), merged after: the \
           min chains are half as long */ \
        for (j = 0; j + 2 * W <= kp; j += 2 * W) { \
            v = ADD(LOAD(t + j), LOAD(cn + j)); \
            u = ADD(LOAD(t + j + W), LOAD(cn + j + W)); \
            m2 = MIN(m2, MAX(m1, v)); \
            m1 = MIN(m1, v); \
            n2 = MIN(n2, MAX(n1, u)); \
            n1 = MIN(n1, u); \
        } \
        if (j < kp) { \
            v = ADD(LOAD(t + j), LOAD(cn + j)); \
            m2 = MIN(m2, MAX(m1, v)); \
            m1 = MIN(m1, v); \
        } \
        /* each lane's two smallest of both pairs: the smaller of the firsts, then the \
           smallest of the larger first and the two seconds */ \
        m2 = MIN(MAX(m1, n1), MIN(m2, n2)); \
        m1 = MIN(m1, n1); \
        g1 = HMIN(m1); \
        /* one lane holding the minimum (the lowest) set to +inf: its second smallest \
           is then the smallest of the rest, and of every lane's second smallest */ \
        m = MOVEMASK(CMP(m1, g1, _CMP_EQ_OQ)); \
        one = LANES(__builtin_ctz(m)); \
        g2 = HMIN(MIN(BLENDV(m1, inf, one), m2)); \
        thr = (T) (CVT1(g1) + (T) (coef4 * (xn[i] + R2))); \
        if (CVT1(g2) > thr) { \
            for (j = 0; j < kp; j += W) { \
                m = MOVEMASK(CMP(ADD(LOAD(t + j), LOAD(cn + j)), g1, _CMP_EQ_OQ)); \
                if (m) break; \
            } \
            out[i] = (int32_t) (j + __builtin_ctz(m)); \
            lo[i] = (double) CVT1(g2); \
        } else { \
            out[i] = -1; \
        } \
    }
/* a mask vector with lane `lane` set */
#define SMML_LANE4(lane) _mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_setr_epi64x(0, 1, 2, 3), _mm256_set1_epi64x(lane)))
#define SMML_LANE8(lane) _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(lane)))
__attribute__((target("avx2")))
static void smml_best2_rows_d(const double *tile, Py_ssize_t nr, Py_ssize_t kp, const double *cn,
                              const double *xn, double coef4, double R2, int32_t *out, double *lo) {
    SMML_BEST2_BODY(__m256d, 4, _mm256_set1_pd, _mm256_loadu_pd, _mm256_add_pd, _mm256_min_pd, _mm256_max_pd,
                    _mm256_cmp_pd, _mm256_movemask_pd, _mm256_blendv_pd, smml_hmin4, SMML_LANE4,
                    _mm256_cvtsd_f64, double)
}
__attribute__((target("avx2")))
static void smml_best2_rows_f32(const float *tile, Py_ssize_t nr, Py_ssize_t kp, const float *cn,
                                const double *xn, double coef4, double R2, int32_t *out, double *lo) {
    SMML_BEST2_BODY(__m256, 8, _mm256_set1_ps, _mm256_loadu_ps, _mm256_add_ps, _mm256_min_ps, _mm256_max_ps,
                    _mm256_cmp_ps, _mm256_movemask_ps, _mm256_blendv_ps, smml_hmin8, SMML_LANE8,
                    _mm256_cvtss_f32, float)
}
/* smml_dot_*: a.b of n entries in the data's type, four vectors of running sums (FMA), for the
   group bounds' distance of a row to its own centroid (_kmeans._row_groups): within the tile's
   error bound, which holds for any order of the dot product's sum. */
#define SMML_DOT(SUF, T, VEC, W, ZERO, LOAD, FMA, ADD, HSUM) \
SMML_TARGET_AVX2_FMA static T smml_dot_##SUF(const T *a, const T *b, Py_ssize_t n) { \
    VEC s0 = ZERO(), s1 = s0, s2 = s0, s3 = s0; \
    Py_ssize_t f = 0; \
    T r; \
    for (; f + 4 * W <= n; f += 4 * W) { \
        s0 = FMA(LOAD(a + f), LOAD(b + f), s0); \
        s1 = FMA(LOAD(a + f + W), LOAD(b + f + W), s1); \
        s2 = FMA(LOAD(a + f + 2 * W), LOAD(b + f + 2 * W), s2); \
        s3 = FMA(LOAD(a + f + 3 * W), LOAD(b + f + 3 * W), s3); \
    } \
    for (; f + W <= n; f += W) s0 = FMA(LOAD(a + f), LOAD(b + f), s0); \
    r = HSUM(ADD(ADD(s0, s1), ADD(s2, s3))); \
    for (; f < n; f++) r += a[f] * b[f]; \
    return r; \
}
/* smml_row_panels_*: out[c] = x . (column c of P), c < kp, P packed panels as the tile's
   (smml_pack_panels_*: full panels of 2W columns, then a half panel of W when kp is an odd
   multiple of W); one row against a group of centroids. Even and odd features in separate
   sums (half the dependency chain), added at the end: within the tile's error bound. */
#define SMML_ROW_PANELS(SUF, T, VEC, W, ZERO, LOAD, BCAST, FMA, ADD, STORE) \
SMML_TARGET_AVX2_FMA static void smml_row_panels_##SUF(Py_ssize_t d, const T *x, const T *P, \
                                                       Py_ssize_t kp, T *out) { \
    Py_ssize_t p = 0, f; \
    VEC a0, a1, b0, b1, xa, xb; \
    for (; p + 2 * W <= kp; p += 2 * W) { \
        const T *Pp = P + p * d; \
        a0 = ZERO(); a1 = a0; b0 = a0; b1 = a0; \
        for (f = 0; f + 2 <= d; f += 2) { \
            xa = BCAST(x + f); xb = BCAST(x + f + 1); \
            a0 = FMA(xa, LOAD(Pp + f * 2 * W), a0); a1 = FMA(xa, LOAD(Pp + f * 2 * W + W), a1); \
            b0 = FMA(xb, LOAD(Pp + (f + 1) * 2 * W), b0); b1 = FMA(xb, LOAD(Pp + (f + 1) * 2 * W + W), b1); \
        } \
        if (f < d) { \
            xa = BCAST(x + f); \
            a0 = FMA(xa, LOAD(Pp + f * 2 * W), a0); a1 = FMA(xa, LOAD(Pp + f * 2 * W + W), a1); \
        } \
        STORE(out + p, ADD(a0, b0)); STORE(out + p + W, ADD(a1, b1)); \
    } \
    if (p < kp) { \
        const T *Pp = P + p * d; \
        a0 = ZERO(); b0 = a0; \
        for (f = 0; f + 2 <= d; f += 2) { \
            a0 = FMA(BCAST(x + f), LOAD(Pp + f * W), a0); \
            b0 = FMA(BCAST(x + f + 1), LOAD(Pp + (f + 1) * W), b0); \
        } \
        if (f < d) a0 = FMA(BCAST(x + f), LOAD(Pp + f * W), a0); \
        STORE(out + p, ADD(a0, b0)); \
    } \
}
SMML_ROW_PANELS(d, double, __m256d, 4, _mm256_setzero_pd, _mm256_loadu_pd, _mm256_broadcast_sd,
                _mm256_fmadd_pd, _mm256_add_pd, _mm256_storeu_pd)
SMML_ROW_PANELS(f, float, __m256, 8, _mm256_setzero_ps, _mm256_loadu_ps, _mm256_broadcast_ss,
                _mm256_fmadd_ps, _mm256_add_ps, _mm256_storeu_ps)
SMML_TARGET_AVX2 static inline double smml_hsum4(__m256d v) {
    __m128d h = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}
SMML_TARGET_AVX2 static inline float smml_hsum8(__m256 v) {
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)));
}
SMML_DOT(d, double, __m256d, 4, _mm256_setzero_pd, _mm256_loadu_pd, _mm256_fmadd_pd, _mm256_add_pd, smml_hsum4)
SMML_DOT(f, float, __m256, 8, _mm256_setzero_ps, _mm256_loadu_ps, _mm256_fmadd_ps, _mm256_add_ps, smml_hsum8)
#else
/* never called: fast_tile_available() is false here */
static double smml_dot_d(const double *a, const double *b, Py_ssize_t n) { return 0.0; }
static float smml_dot_f(const float *a, const float *b, Py_ssize_t n) { return 0.0f; }
static void smml_row_panels_d(Py_ssize_t d, const double *x, const double *P, Py_ssize_t kp, double *out) {}
static void smml_row_panels_f(Py_ssize_t d, const float *x, const float *P, Py_ssize_t kp, float *out) {}
static void smml_best2_rows_d(const double *tile, Py_ssize_t nr, Py_ssize_t kp, const double *cn,
                              const double *xn, double coef4, double R2, int32_t *out, double *lo) {}
static void smml_best2_rows_f32(const float *tile, Py_ssize_t nr, Py_ssize_t kp, const float *cn,
                                const double *xn, double coef4, double R2, int32_t *out, double *lo) {}
static void smml_best_rows_d(const double *tile, Py_ssize_t nr, Py_ssize_t kp, const double *cn,
                             const int32_t *prev, const double *xn, double coef4, double R2,
                             int32_t *out) {}
static void smml_add_rows_d(const double *X, Py_ssize_t nr, Py_ssize_t d, const int32_t *labels,
                            const double *xn, const double *w, Py_ssize_t R, double *S) {}
static void smml_add_rows_f(const float *X, Py_ssize_t nr, Py_ssize_t d, const int32_t *labels,
                            const double *xn, const double *w, Py_ssize_t R, double *S) {}
static void smml_best_rows_f32(const float *tile, Py_ssize_t nr, Py_ssize_t kp, const float *cn32,
                               const int32_t *prev, const double *xn, double coef4, double R2,
                               int32_t *out) {}
#endif

#endif
