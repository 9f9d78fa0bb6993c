/* Data-parallel loops of the distance kernels (smml._core._kdtree, smml._core._knn) and of
 * the network kernel (smml._core._neural), in C so that they can be compiled for several
 * instruction sets.
 *
 * smml_block_keys_*: exact distance keys of a block of points stored feature-major.
 * out[j] = the key of point j against q, where point j's feature f is B[f * stride + j]:
 * exactly smml._core._distances.exact_key (float64 subtraction q_f - p_f, squared or
 * absolute, summed in feature order starting from 0.0), computed for several points at
 * once. Each point's sum sees the same operations in the same order as the scalar
 * function, so the keys are bit for bit the same (the module is compiled with
 * -ffp-contract=off: no fused multiply-add in either).
 *
 * On x86-64 Linux with gcc the functions are compiled twice (target_clones): for AVX2
 * and for the baseline, the loader picking the one the CPU runs. The wheel stays generic.
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
 * smml_momentum_*: the weight and velocity update of a minibatch SGD step with momentum
 * (smml._core._neural), below.
 *
 * smml_svm_*: the passes of an SMO iteration over the active set (smml._core._svm), below.
 */
#ifndef SMML_SIMD_H
#define SMML_SIMD_H

#include <math.h>
#include <stddef.h>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
    && defined(__GLIBC__)
#define SMML_CLONES __attribute__((target_clones("avx2", "default"), unused))
#elif defined(__GNUC__)
#define SMML_CLONES __attribute__((unused))
#else
#define SMML_CLONES
#endif

#if defined(_MSC_VER)
#define SMML_RESTRICT __restrict
#else
#define SMML_RESTRICT restrict
#endif

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

SMML_CLONES static void smml_block_keys_d(const double *SMML_RESTRICT q, const double *SMML_RESTRICT B,
                                          ptrdiff_t stride, ptrdiff_t n, ptrdiff_t d,
                                          int metric, double *SMML_RESTRICT out)
{
    SMML_BODY(double)
}

SMML_CLONES static void smml_block_keys_f(const float *SMML_RESTRICT q, const float *SMML_RESTRICT B,
                                          ptrdiff_t stride, ptrdiff_t n, ptrdiff_t d,
                                          int metric, double *SMML_RESTRICT out)
{
    SMML_BODY(float)
}

#undef SMML_BODY

/* Pairs of rank < cap are written to out_key / out_idx[rank], with their payload
 * pay[i] (any number carried along) to out_pay[rank]. */
SMML_CLONES static void smml_rank_sort(const double *SMML_RESTRICT key,
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
    SMML_CLONES static ptrdiff_t NAME(const T *SMML_RESTRICT r, ptrdiff_t n, T top)  \
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

/* smml_momentum_*: the weight step of minibatch SGD with momentum (smml._core._neural
 * _momentum_block), on the entries [c0, c1) of nrows rows of leading dimension ld, after
 * a gemm has left V = mu V - eta G:  v = V - etalam * W;  W <- W + v;  V <- v, or
 * V <- mu_next * v when mu_next != 0 (the next step's momentum factor, applied here so
 * that the next gemm need not). W is updated in place (dst == src in every caller but
 * the double-buffered output layer, which passes its other copy as dst): the two cases
 * are separate loops, as a possibly aliased pair would not vectorise. */
#define SMML_MOMENTUM(T, NAME)                                                  \
    SMML_CLONES static void NAME(T *dst, const T *src, T *SMML_RESTRICT V, ptrdiff_t nrows, \
                                 ptrdiff_t ld, ptrdiff_t c0, ptrdiff_t c1, T etalam, T mu_next) \
    {                                                                           \
        ptrdiff_t i, j;                                                         \
        for (i = 0; i < nrows; i++) {                                           \
            T *SMML_RESTRICT v = V + i * ld;                                    \
            if (dst == src) {                                                   \
                T *SMML_RESTRICT w = dst + i * ld;                              \
                for (j = c0; j < c1; j++) {                                     \
                    T x = w[j], t = v[j] - etalam * x;                          \
                    w[j] = x + t;                                               \
                    v[j] = mu_next != 0 ? mu_next * t : t;                      \
                }                                                               \
            } else {                                                            \
                T *SMML_RESTRICT w = dst + i * ld;                              \
                const T *SMML_RESTRICT s = src + i * ld;                        \
                for (j = c0; j < c1; j++) {                                     \
                    T t = v[j] - etalam * s[j];                                 \
                    w[j] = s[j] + t;                                            \
                    v[j] = mu_next != 0 ? mu_next * t : t;                      \
                }                                                               \
            }                                                                   \
        }                                                                       \
    }

SMML_MOMENTUM(double, smml_momentum_d)
SMML_MOMENTUM(float, smml_momentum_f)
#undef SMML_MOMENTUM

/* smml_svm_*: the passes of an SMO iteration over the active set (smml._core._svm, whose
 * _update_up and _low document the rules). Position k of the pass is the variable
 * t = act[k], or t = k when act is NULL (nothing shrunk); its entry in a kernel row is
 * Ki[ract[k]], or Ki[k] when ract is NULL (rows stored compact over the active set).
 * Each block of SMML_SVM_BLOCK positions is computed branch-free into a small array (an
 * ineligible position is NaN, which no comparison accepts), then scanned in order with
 * the scalar rules (>= keeps the last of equal maxima, <= the last of equal minima), and
 * only when one of its values can change the running result: the same picks, bit for
 * bit, as the one-position-at-a-time loops, without their data-dependent branches (the
 * membership flags follow the labels, which a branch predictor cannot guess). The flags'
 * bits: 1 = in I_up, 2 = in I_low. */
#define SMML_SVM_BLOCK 64
#define SMML_SVM_POS(k) (act != NULL ? act[k] : (k))
#define SMML_SVM_RPOS(k) (ract != NULL ? ract[k] : (k))

/* F[t] += ci Ki[r] (+ cj Kj[r] when Kj != NULL), r the row entry of t, then the first half
 * of WSS 2: argmax_{t in I_up} -F[t] (the last on ties) into *best, *idx (-INF, -1 if none). */
SMML_CLONES static void smml_svm_update_up(double *SMML_RESTRICT F, const float *SMML_RESTRICT Ki,
                                           double ci, const float *SMML_RESTRICT Kj, double cj,
                                           const char *SMML_RESTRICT flags,
                                           const ptrdiff_t *SMML_RESTRICT act,
                                           const ptrdiff_t *SMML_RESTRICT ract, ptrdiff_t n,
                                           double *best, ptrdiff_t *idx)
{
    double v[SMML_SVM_BLOCK];
    double b = -INFINITY;
    ptrdiff_t bi = -1, k0, u, w, t;
    for (k0 = 0; k0 < n; k0 += SMML_SVM_BLOCK) {
        int any = 0;
        w = n - k0 < SMML_SVM_BLOCK ? n - k0 : SMML_SVM_BLOCK;
        if (Ki != NULL) {
            if (act == NULL && ract == NULL) {
                double *SMML_RESTRICT Fb = F + k0;
                const float *SMML_RESTRICT Kib = Ki + k0;
                if (Kj != NULL) {
                    const float *SMML_RESTRICT Kjb = Kj + k0;
                    for (u = 0; u < w; u++)
                        Fb[u] += ci * (double) Kib[u] + cj * (double) Kjb[u];
                } else {
                    for (u = 0; u < w; u++)
                        Fb[u] += ci * (double) Kib[u];
                }
            } else if (Kj != NULL) {
                for (u = 0; u < w; u++) {
                    const ptrdiff_t r = SMML_SVM_RPOS(k0 + u);
                    F[SMML_SVM_POS(k0 + u)] += ci * (double) Ki[r] + cj * (double) Kj[r];
                }
            } else {
                for (u = 0; u < w; u++)
                    F[SMML_SVM_POS(k0 + u)] += ci * (double) Ki[SMML_SVM_RPOS(k0 + u)];
            }
        }
        if (act == NULL) {                /* consecutive: a loop the compiler vectorises */
            const double *SMML_RESTRICT Fb = F + k0;
            const char *SMML_RESTRICT fb = flags + k0;
            for (u = 0; u < w; u++)
                v[u] = (fb[u] & 1) ? -Fb[u] : NAN;
        } else {
            for (u = 0; u < w; u++) {
                t = act[k0 + u];
                v[u] = (flags[t] & 1) ? -F[t] : NAN;
            }
        }
        for (u = 0; u < w; u++)
            any |= v[u] >= b;
        if (any)
            for (u = 0; u < w; u++)
                if (v[u] >= b) {
                    b = v[u];
                    bi = SMML_SVM_POS(k0 + u);
                }
    }
    *best = b;
    *idx = bi;
}

/* The second half of WSS 2 (Fan, Chen & Lin 2005) for the chosen i (Gmax = -F[i], Qii =
 * K(x_i, x_i), Ki its kernel row): *gmax2 = max_{t in I_low} F[t]; *idx = the t in I_low
 * with Gmax + F[t] > 0 minimising -(Gmax + F[t])^2 / quad_t, quad_t = Qii + QD[t] - 2 K(x_i, x_t)
 * (tau when <= 0), the last on ties, and *objmin that minimum (INF, -1 if none). */
SMML_CLONES static void smml_svm_low(const double *SMML_RESTRICT F, const double *SMML_RESTRICT QD,
                                     const float *SMML_RESTRICT Ki, const char *SMML_RESTRICT flags,
                                     const ptrdiff_t *SMML_RESTRICT act,
                                     const ptrdiff_t *SMML_RESTRICT ract, ptrdiff_t n, double Gmax,
                                     double Qii, double tau, double *gmax2, double *objmin,
                                     ptrdiff_t *idx)
{
    double g[SMML_SVM_BLOCK], o[SMML_SVM_BLOCK];
    double g2 = -INFINITY, om = INFINITY;
    ptrdiff_t bj = -1, k0, u, w, t;
    for (k0 = 0; k0 < n; k0 += SMML_SVM_BLOCK) {
        int any = 0;
        w = n - k0 < SMML_SVM_BLOCK ? n - k0 : SMML_SVM_BLOCK;
/* (quiet comparisons, the division's result always used and the NaN masks as separate
 * values: so written, gcc 12 vectorises the loop, which it does not for the plain
 * selects; x + 0.0 turns -0.0 into +0.0, which compares equal) */
#define SMML_SVM_LOW_BODY(FT, QT, KT, FLAG)                                    \
        {                                                                       \
            const double Ft = (FT);                                             \
            const long long in = ((FLAG) & 2) != 0;                             \
            const double gd = Gmax + Ft;                                        \
            double quad = Qii + (QT) - 2.0 * (double) (KT);                     \
            quad = __builtin_isgreater(quad, 0.0) ? quad : tau;                 \
            const double od = -(gd * gd) / quad;                                \
            const double m1 = in ? 0.0 : NAN;                                   \
            const double m2 = (in & __builtin_isgreater(gd, 0.0)) ? 0.0 : NAN;  \
            g[u] = Ft + m1;                                                     \
            o[u] = od + m2;                                                     \
        }
        if (act == NULL && ract == NULL) {  /* consecutive: a loop the compiler vectorises */
            const double *SMML_RESTRICT Fb = F + k0;
            const double *SMML_RESTRICT Qb = QD + k0;
            const float *SMML_RESTRICT Kb = Ki + k0;
            const char *SMML_RESTRICT fb = flags + k0;
            for (u = 0; u < w; u++)
                SMML_SVM_LOW_BODY(Fb[u], Qb[u], Kb[u], fb[u])
        } else {
            for (u = 0; u < w; u++) {
                t = SMML_SVM_POS(k0 + u);
                SMML_SVM_LOW_BODY(F[t], QD[t], Ki[SMML_SVM_RPOS(k0 + u)], flags[t])
            }
        }
#undef SMML_SVM_LOW_BODY
        for (u = 0; u < w; u++)
            any |= (g[u] >= g2) | (o[u] <= om);
        if (any)
            for (u = 0; u < w; u++) {
                if (g[u] >= g2)
                    g2 = g[u];
                if (o[u] <= om) {
                    om = o[u];
                    bj = SMML_SVM_POS(k0 + u);
                }
            }
    }
    *gmax2 = g2;
    *objmin = om;
    *idx = bj;
}
/* 1 if some position u < w of a block may enter the candidate heaps of a block fill
 * (smml._core._svm _candidates): in I_up with F[u] <= thr_up, or in I_low with
 * -F[u] <= thr_low (the heaps' worst kept values; INF while a heap is not full). A
 * superset of the heaps' exact (value, index) test, which the caller then applies. */
SMML_CLONES static int smml_svm_may_enter(const double *SMML_RESTRICT F,
                                          const char *SMML_RESTRICT flags, ptrdiff_t w,
                                          double thr_up, double thr_low)
{
    int any = 0;
    ptrdiff_t u;
    for (u = 0; u < w; u++) {
        const double f = F[u];
        const double m1 = (flags[u] & 1) ? 0.0 : INFINITY;
        const double m2 = (flags[u] & 2) ? 0.0 : INFINITY;
        any |= (f + m1 <= thr_up) | (m2 - f <= thr_low);
    }
    return any;
}

#undef SMML_SVM_POS
#undef SMML_SVM_RPOS

#endif
