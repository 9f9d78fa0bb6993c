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
 *
 * smml_gbm_*: the gradients and the loss of the boosting losses (smml._core._gbm), below.
 *
 * smml_partition_*, smml_split_*: the exact tree splitter's partition of a sorted feature
 * and the sums and costs of its scan (smml._core._tree), below.
 */
#ifndef SMML_SIMD_H
#define SMML_SIMD_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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


/* ---- boosting losses (smml._core._gbm) ------------------------------------------------------
 * The gradients, hessians and loss terms of a block of rows for the logistic and softmax
 * losses, with an exponential and a logarithm written as plain arithmetic (no call, no
 * branch per value), so that the loops over the rows vectorise (in the AVX2 copy: the
 * selects are done on the integer bits, which needs its 64-bit compares). Every operation
 * is IEEE (the module is compiled with -ffp-contract=off): the AVX2 copy and the baseline
 * give the same bits. The block's loss
 * sum adds the rows' terms in 8 lanes (row i into lane i mod 8, rows in order), the lanes
 * then in a fixed tree: the same sum on any thread count, for the gradients' pass and for
 * the loss alone (G == NULL). */

#define SMML_GBM_CHUNK 256

static inline uint64_t smml_bits(double x)
{
    uint64_t b;
    memcpy(&b, &x, sizeof b);
    return b;
}

static inline double smml_from_bits(uint64_t b)
{
    double x;
    memcpy(&x, &b, sizeof x);
    return x;
}

/* mask ? a : b, mask all ones or zero: the selects in integer bits, which gcc vectorises
 * where a floating-point select feeding arithmetic stays a branch. */
static inline double smml_select(uint64_t mask, double a, double b)
{
    return smml_from_bits((smml_bits(a) & mask) | (smml_bits(b) & ~mask));
}

/* OUT = e^A for -708 <= A <= 709 (the caller clamps; A a variable): A = k ln 2 + r, |r| <=
 * ln 2 / 2 (Cody-Waite), e^r by its Taylor polynomial of degree 13 (truncation < 1e-17
 * relative), times 2^k built in the exponent bits. Within about 1 ulp of exp. The one double
 * exponential of the kernels' Gram blocks (smml._core._kernel_methods.pxd, smml_exp_block) and of the
 * boosting losses (below); a macro, because gcc does not inline a function into one compiled
 * with other optimisation attributes (the Gram block's no-trapping-math). */
#define SMML_EXP_REDUCED(A, OUT)                                                        \
    do {                                                                                \
        const double smml_sh_ = 6755399441055744.0;   /* 1.5 * 2^52: t - sh rounds */  \
        double smml_t_ = (A) * 1.4426950408889634 + smml_sh_;                           \
        double smml_kd_ = smml_t_ - smml_sh_;                                           \
        double smml_r_ = ((A) - smml_kd_ * 6.93147180369123816490e-01)                  \
                         - smml_kd_ * 1.90821492927058770002e-10;                       \
        double smml_p_ = 1.0 / 6227020800.0, smml_s_;                                   \
        uint64_t smml_b_;                                                               \
        smml_p_ = smml_p_ * smml_r_ + 1.0 / 479001600.0;                                \
        smml_p_ = smml_p_ * smml_r_ + 1.0 / 39916800.0;                                 \
        smml_p_ = smml_p_ * smml_r_ + 1.0 / 3628800.0;                                  \
        smml_p_ = smml_p_ * smml_r_ + 1.0 / 362880.0;                                   \
        smml_p_ = smml_p_ * smml_r_ + 1.0 / 40320.0;                                    \
        smml_p_ = smml_p_ * smml_r_ + 1.0 / 5040.0;                                     \
        smml_p_ = smml_p_ * smml_r_ + 1.0 / 720.0;                                      \
        smml_p_ = smml_p_ * smml_r_ + 1.0 / 120.0;                                      \
        smml_p_ = smml_p_ * smml_r_ + 1.0 / 24.0;                                       \
        smml_p_ = smml_p_ * smml_r_ + 1.0 / 6.0;                                        \
        smml_p_ = smml_p_ * smml_r_ + 0.5;                                              \
        smml_p_ = smml_p_ * smml_r_ + 1.0;                                              \
        smml_p_ = smml_p_ * smml_r_ + 1.0;                                              \
        memcpy(&smml_b_, &smml_t_, sizeof smml_b_);   /* t's low bits hold k */         \
        smml_b_ = (smml_b_ + 1023u) << 52;            /* 2^k */                         \
        memcpy(&smml_s_, &smml_b_, sizeof smml_s_);                                     \
        (OUT) = smml_p_ * smml_s_;                                                      \
    } while (0)

/* e^x for x <= 0 (the callers pass -|F| or F_k - max_k F), branch-free: SMML_EXP_REDUCED,
 * 0 below -708 (e^-708 = 3.3e-308). */
static inline double smml_exp_nonpos(double x)
{
    /* x < -708: as unsigned bits, negative doubles grow with |x| and sit above every
       positive one */
    uint64_t low = -(uint64_t) (smml_bits(x) > smml_bits(-708.0));
    double xc = smml_select(low, -708.0, x), e;
    SMML_EXP_REDUCED(xc, e);
    return smml_from_bits(smml_bits(e) & ~low);
}

/* log(1 + e) for 0 <= e <= 1: 2 atanh(s) with s = e / (2 + e), or, above sqrt(2) - 1,
 * ln 2 + 2 atanh(s) with s = (e - 1) / (e + 3) (the same identity on (1 + e) / 2): |s| <=
 * 0.1716, and atanh(s) / s = sum_j s^2j / (2j + 1) to j = 11 (truncation < 1e-18). */
static inline double smml_log1p_unit(double e)
{
    uint64_t big = -(uint64_t) ((int64_t) smml_bits(e) > (int64_t) smml_bits(0.41421356237309503));
    double s = (e - smml_select(big, 1.0, 0.0)) / (e + smml_select(big, 3.0, 2.0));
    double z = s * s;
    double q = 1.0 / 23.0;
    q = q * z + 1.0 / 21.0;
    q = q * z + 1.0 / 19.0;
    q = q * z + 1.0 / 17.0;
    q = q * z + 1.0 / 15.0;
    q = q * z + 1.0 / 13.0;
    q = q * z + 1.0 / 11.0;
    q = q * z + 1.0 / 9.0;
    q = q * z + 1.0 / 7.0;
    q = q * z + 1.0 / 5.0;
    q = q * z + 1.0 / 3.0;
    q = q * z + 1.0;
    return smml_select(big, 6.93147180559945309e-01, 0.0) + 2.0 * s * q;
}

static inline void smml_gbm_lanes(double *SMML_RESTRICT lane, const double *SMML_RESTRICT v,
                                  ptrdiff_t m)
{
    ptrdiff_t i, j;
    for (i = 0; i + 8 <= m; i += 8)
        for (j = 0; j < 8; j++)
            lane[j] += v[i + j];
    for (; i < m; i++)
        lane[i & 7] += v[i];
}

static inline double smml_gbm_lane_sum(const double *lane)
{
    return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

/* all ones when f's sign bit is set (f < 0 or -0) */
static inline uint64_t smml_sign_mask(double f)
{
    return (uint64_t) ((int64_t) smml_bits(f) >> 63);
}

/* all ones when w > 0, tested on the bits (positive doubles order as integers; a NaN with its
   sign bit clear counts as positive, as in the scalar code's `if W <= 0: 0`) */
static inline uint64_t smml_positive_mask(double w)
{
    return -(uint64_t) ((int64_t) smml_bits(w) > 0);
}

/* The logistic loss's term of one row: max(F, 0) + log(1 + e^-|F|) - y F, e = e^-|F|. */
static inline double smml_gbm_logistic_term(double f, double e, double y)
{
    return smml_from_bits(smml_bits(f) & ~smml_sign_mask(f)) + smml_log1p_unit(e) - y * f;
}

/* Logistic loss (002): p = 1 / (1 + e^-F), G = w (p - y), H = w p (1 - p) (not written when
 * G is NULL); returns sum_i w_i (max(F, 0) + log(1 + e^-|F|) - y F) when want_loss (else 0). */
SMML_CLONES static double smml_gbm_logistic_block(const double *SMML_RESTRICT F,
                                                  const double *SMML_RESTRICT y,
                                                  const double *SMML_RESTRICT sw,
                                                  double *SMML_RESTRICT G, double *SMML_RESTRICT H,
                                                  ptrdiff_t n, int want_loss)
{
    double lane[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    double v[SMML_GBM_CHUNK];
    ptrdiff_t c0, i, m;
    for (c0 = 0; c0 < n; c0 += SMML_GBM_CHUNK) {
        const double *Fc = F + c0, *yc = y + c0, *wc = sw + c0;
        m = n - c0 < SMML_GBM_CHUNK ? n - c0 : SMML_GBM_CHUNK;
        if (G != NULL) {
            double *Gc = G + c0, *Hc = H + c0;
            for (i = 0; i < m; i++) {
                double f = Fc[i], w = wc[i];
                double e = smml_exp_nonpos(-fabs(f));
                double p = smml_select(smml_sign_mask(f), e, 1.0) / (1.0 + e);
                Gc[i] = w * (p - yc[i]);
                Hc[i] = w * (p * (1.0 - p));
                v[i] = e;
            }
            if (want_loss)
                for (i = 0; i < m; i++)
                    v[i] = wc[i] * smml_gbm_logistic_term(Fc[i], v[i], yc[i]);
        } else if (want_loss) {
            for (i = 0; i < m; i++)
                v[i] = wc[i] * smml_gbm_logistic_term(Fc[i], smml_exp_nonpos(-fabs(Fc[i])), yc[i]);
        }
        if (want_loss)
            smml_gbm_lanes(lane, v, m);
    }
    return smml_gbm_lane_sum(lane);
}

/* Softmax loss (002, K classes) on F (n, K) row-major: p_k = e^(F_k - max F) / sum_k
 * e^(F_k - max F) (the sum in class order), G[k * ld + i] = w (p_k - [y = k]), H = w p_k
 * (1 - p_k) (not written when G is NULL); returns sum_i w_i (max F + log sum - F_y) when
 * want_loss (else 0). ``ex``: scratch of K * SMML_GBM_CHUNK doubles. */
SMML_CLONES static double smml_gbm_softmax_block(const double *SMML_RESTRICT F, ptrdiff_t K,
                                                 const double *SMML_RESTRICT y,
                                                 const double *SMML_RESTRICT sw,
                                                 double *SMML_RESTRICT G, double *SMML_RESTRICT H,
                                                 ptrdiff_t ld, ptrdiff_t n, int want_loss,
                                                 double *SMML_RESTRICT ex)
{
    double lane[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
    double v[SMML_GBM_CHUNK], mx[SMML_GBM_CHUNK], s[SMML_GBM_CHUNK];
    ptrdiff_t c0, i, k, m;
    for (c0 = 0; c0 < n; c0 += SMML_GBM_CHUNK) {
        const double *Fc = F + c0 * K, *yc = y + c0, *wc = sw + c0;
        m = n - c0 < SMML_GBM_CHUNK ? n - c0 : SMML_GBM_CHUNK;
        for (i = 0; i < m; i++) {
            mx[i] = Fc[i * K];
            s[i] = 0.0;
        }
        for (k = 1; k < K; k++)
            for (i = 0; i < m; i++) {
                double a = Fc[i * K + k];
                mx[i] = a > mx[i] ? a : mx[i];
            }
        for (k = 0; k < K; k++) {
            double *ek = ex + k * SMML_GBM_CHUNK;
            for (i = 0; i < m; i++) {
                double e = smml_exp_nonpos(Fc[i * K + k] - mx[i]);
                ek[i] = e;
                s[i] += e;
            }
        }
        if (G != NULL) {
            for (k = 0; k < K; k++) {
                const double *ek = ex + k * SMML_GBM_CHUNK;
                double *Gk = G + k * ld + c0, *Hk = H + k * ld + c0;
                const double kd = (double) k;
                for (i = 0; i < m; i++) {
                    double w = wc[i];
                    double p = ek[i] / s[i];
                    double ind = smml_select(-(uint64_t) (yc[i] == kd), 1.0, 0.0);
                    Gk[i] = w * (p - ind);
                    Hk[i] = w * (p * (1.0 - p));
                }
            }
        }
        if (want_loss) {
            for (i = 0; i < m; i++)
                v[i] = wc[i] * (mx[i] + log(s[i]) - Fc[i * K + (ptrdiff_t) yc[i]]);
            smml_gbm_lanes(lane, v, m);
        }
    }
    return smml_gbm_lane_sum(lane);
}

/* smml_partition_pairs: the exact tree splitter's partition of one feature's sorted segment
 * (smml._core._tree._partition_sorted). n pairs (si[p], rs[p]); the pairs whose sample
 * si[p] has gl[si[p]] != 0 move to the front, in order, the others after them, in order
 * (through the scratch ti, tr). Returns the number in front. The copies back are loops
 * here, not memcpy calls: most segments are a few pairs long. gl must be readable 3 bytes
 * past its last sample (a gather reads 4 bytes), and ti, tr must have room for n + 15
 * values (whole vectors are stored). Each pair is written to both sides' next slots and
 * only its side advances: no branch per pair (which side is unpredictable); the writes to
 * si, rs never pass the reads. With AVX-512 (simd != 0 and the CPU has it) 16 pairs at a
 * time: the samples' flags gathered, each side's pairs compressed into the front of a
 * vector and stored whole. The same result.
 *
 * smml_partition_rest: pairs p..n-1 one at a time, from the sides' next slots *qp, *rp. */
static inline void smml_partition_rest(int32_t *si, int32_t *rs, int32_t *SMML_RESTRICT ti,
                                       int32_t *SMML_RESTRICT tr, const uint8_t *gl, ptrdiff_t p,
                                       ptrdiff_t n, ptrdiff_t *qp, ptrdiff_t *rp)
{
    ptrdiff_t q = *qp, r = *rp;
    for (; p < n; p++) {
        int32_t i = si[p], v = rs[p];
        ptrdiff_t g = gl[i] != 0;
        si[q] = i;
        rs[q] = v;
        ti[r] = i;
        tr[r] = v;
        q += g;
        r += 1 - g;
    }
    *qp = q;
    *rp = r;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) \
    && defined(__GLIBC__)
#include <immintrin.h>
__attribute__((target("avx512f"), unused))
static ptrdiff_t smml_partition_pairs_avx512(int32_t *si, int32_t *rs, int32_t *SMML_RESTRICT ti,
                                             int32_t *SMML_RESTRICT tr, const uint8_t *gl, ptrdiff_t n)
{
    ptrdiff_t p = 0, q = 0, r = 0;
    const __m512i low = _mm512_set1_epi32(0xFF);
    if (n >= 16) {
        /* the next block's loads and gather go out before this block's stores (whose
           addresses wait on the flags): the gathers' latencies overlap */
        __m512i vi = _mm512_loadu_si512((const void *) si);
        __m512i vr = _mm512_loadu_si512((const void *) rs);
        __m512i g = _mm512_i32gather_epi32(vi, (const void *) gl, 1);
        for (p = 16;; p += 16) {
            __m512i vi2 = vi, vr2 = vr, g2 = g;
            int more = p + 16 <= n;
            if (more) {
                vi2 = _mm512_loadu_si512((const void *) (si + p));
                vr2 = _mm512_loadu_si512((const void *) (rs + p));
                g2 = _mm512_i32gather_epi32(vi2, (const void *) gl, 1);
            }
            __mmask16 m = _mm512_test_epi32_mask(g, low);
            int c = __builtin_popcount((unsigned) m);
            _mm512_storeu_si512((void *) (si + q), _mm512_maskz_compress_epi32(m, vi));
            _mm512_storeu_si512((void *) (rs + q), _mm512_maskz_compress_epi32(m, vr));
            _mm512_storeu_si512((void *) (ti + r), _mm512_maskz_compress_epi32((__mmask16) ~m, vi));
            _mm512_storeu_si512((void *) (tr + r), _mm512_maskz_compress_epi32((__mmask16) ~m, vr));
            q += c;
            r += 16 - c;
            if (!more)
                break;
            vi = vi2;
            vr = vr2;
            g = g2;
        }
    }
    smml_partition_rest(si, rs, ti, tr, gl, p, n, &q, &r);
    for (p = 0; p < r; p += 16) {          /* masked at the end: nothing past the segment */
        __mmask16 k = (r - p >= 16) ? (__mmask16) 0xFFFF : (__mmask16) ((1u << (r - p)) - 1);
        _mm512_mask_storeu_epi32((void *) (si + q + p), k, _mm512_maskz_loadu_epi32(k, ti + p));
        _mm512_mask_storeu_epi32((void *) (rs + q + p), k, _mm512_maskz_loadu_epi32(k, tr + p));
    }
    return q;
}
#define SMML_PARTITION_AVX512 1
#endif

static inline ptrdiff_t smml_partition_pairs(int32_t *si, int32_t *rs, int32_t *SMML_RESTRICT ti,
                                             int32_t *SMML_RESTRICT tr, const uint8_t *gl, ptrdiff_t n,
                                             int simd)
{
    ptrdiff_t p, q = 0, r = 0;
#ifdef SMML_PARTITION_AVX512
    if (simd && __builtin_cpu_supports("avx512f"))
        return smml_partition_pairs_avx512(si, rs, ti, tr, gl, n);
#else
    (void) simd;
#endif
    smml_partition_rest(si, rs, ti, tr, gl, 0, n, &q, &r);
    for (p = 0; p < r; p++) {
        si[q + p] = ti[p];
        rs[q + p] = tr[p];
    }
    return q;
}

/* smml_split_sums: the sums of the exact tree splitter's scan (smml._core._tree._scan_exact)
 * at up to cap consecutive positions from p (< pend) of a feature's sorted segment, into ca
 * (kind 0, two classes: class 0's weight; kind 1: the sum of w y), cb (class 1's weight), cw
 * (the weight) and cok (a candidate: the next rank differs and nl >= msl). pair[2i], pair[2i+1]:
 * sample i's terms (kind 0: w [y = 0], w [y = 1], one of them 0; kind 1: w, w y), one load per
 * sample. st holds the running sums (class 0 or w y, class 1, weight) and nl the positions so
 * far, both carried from chunk to chunk. Each sum adds in position order, as the scalar loop
 * over left[y_i] += w_i does: the other class's sum gets + 0.0 (the same value) and the weight
 * c0 + c1 = w_i exactly. Stops (*stop = 1) at the first position that leaves fewer than msl
 * on the right (none after it is a candidate). Returns the positions written. */
static inline ptrdiff_t smml_split_sums(int kind, const int32_t *SMML_RESTRICT si,
                                        const int32_t *SMML_RESTRICT rs, ptrdiff_t p, ptrdiff_t pend,
                                        const double *SMML_RESTRICT pair, double *st, ptrdiff_t *nl,
                                        ptrdiff_t nn, ptrdiff_t msl, double *SMML_RESTRICT ca,
                                        double *SMML_RESTRICT cb, double *SMML_RESTRICT cw,
                                        uint8_t *SMML_RESTRICT cok, ptrdiff_t cap, int *stop)
{
    double a = st[0], b = st[1], W = st[2];
    ptrdiff_t m = 0, k = *nl;
    for (; p < pend && m < cap; p++) {
        const double *t = pair + 2 * (ptrdiff_t) si[p];
        double c0 = t[0], c1 = t[1];
        if (kind == 0) {
            a += c0;
            b += c1;
            W += c0 + c1;
        } else {
            W += c0;
            a += c1;
        }
        k++;
        if (nn - k < msl) {
            *stop = 1;
            break;
        }
        ca[m] = a;
        cb[m] = b;
        cw[m] = W;
        cok[m] = (uint8_t) ((rs[p + 1] > rs[p]) & (k >= msl));
        m++;
    }
    st[0] = a;
    st[1] = b;
    st[2] = W;
    *nl = k;
    return m;
}

/* smml_split_sums_k, smml_split_costs_k: smml_split_sums and smml_split_costs for K classes
 * (gini), 3 <= K <= 8. pair[2i] = w_i, pair[2i+1] = its class (as a double). left[0..K-1] and
 * *W hold the running sums; the class sums at each position go to ca[k * cap + m] (column k of the
 * chunk), and the costs are those of cost_lr: per side s = 0, s = s + w_k w_k over k in
 * order, W - s / W (0 where W <= 0). sums holds 2 cap doubles of scratch. */
#if defined(__GNUC__)
#define SMML_ALWAYS_INLINE __attribute__((always_inline)) inline
#else
#define SMML_ALWAYS_INLINE inline
#endif

static SMML_ALWAYS_INLINE ptrdiff_t smml_split_sums_kc(ptrdiff_t K, const int32_t *SMML_RESTRICT si,
                                                       const int32_t *SMML_RESTRICT rs, ptrdiff_t p,
                                                       ptrdiff_t pend, const double *SMML_RESTRICT pair,
                                                       double *SMML_RESTRICT left, double *Wp, ptrdiff_t *nl,
                                                       ptrdiff_t nn, ptrdiff_t msl, double *SMML_RESTRICT ca,
                                                       double *SMML_RESTRICT cw, uint8_t *SMML_RESTRICT cok,
                                                       ptrdiff_t cap, int *stop)
{
    /* K a constant where the switch below calls it: the class sums stay in registers, the
       class's gets w and the others + 0.0 (the same values), selected on the bits */
    double W = *Wp, l[8];
    ptrdiff_t m = 0, k = *nl, c;
    for (c = 0; c < K; c++)
        l[c] = left[c];
    for (; p < pend && m < cap; p++) {
        const double *t = pair + 2 * (ptrdiff_t) si[p];
        double wi = t[0];
        ptrdiff_t y = (ptrdiff_t) t[1];
        for (c = 0; c < K; c++)
            l[c] += smml_from_bits(smml_bits(wi) & -(uint64_t) (y == c));
        W += wi;
        k++;
        if (nn - k < msl) {
            *stop = 1;
            break;
        }
        for (c = 0; c < K; c++)
            ca[c * cap + m] = l[c];
        cw[m] = W;
        cok[m] = (uint8_t) ((rs[p + 1] > rs[p]) & (k >= msl));
        m++;
    }
    for (c = 0; c < K; c++)
        left[c] = l[c];
    *Wp = W;
    *nl = k;
    return m;
}

static inline ptrdiff_t smml_split_sums_k(ptrdiff_t K, const int32_t *SMML_RESTRICT si,
                                          const int32_t *SMML_RESTRICT rs, ptrdiff_t p, ptrdiff_t pend,
                                          const double *SMML_RESTRICT pair, double *SMML_RESTRICT left,
                                          double *Wp, ptrdiff_t *nl, ptrdiff_t nn, ptrdiff_t msl,
                                          double *SMML_RESTRICT ca, double *SMML_RESTRICT cw,
                                          uint8_t *SMML_RESTRICT cok, ptrdiff_t cap, int *stop)
{
#define SMML_SUMS_K(KK) smml_split_sums_kc(KK, si, rs, p, pend, pair, left, Wp, nl, nn, msl, ca, cw, cok, cap, stop)
    switch (K) {
    case 3: return SMML_SUMS_K(3);
    case 4: return SMML_SUMS_K(4);
    case 5: return SMML_SUMS_K(5);
    case 6: return SMML_SUMS_K(6);
    case 7: return SMML_SUMS_K(7);
    default: return SMML_SUMS_K(8);
    }
#undef SMML_SUMS_K
}

SMML_CLONES static void smml_split_costs_k(ptrdiff_t K, const double *SMML_RESTRICT ca,
                                           const double *SMML_RESTRICT WL,
                                           const uint8_t *SMML_RESTRICT ok, ptrdiff_t m, ptrdiff_t cap,
                                           const double *SMML_RESTRICT tot, double WT,
                                           double *SMML_RESTRICT sums, double *SMML_RESTRICT out)
{
    double *sl = sums, *sr = sums + cap;
    ptrdiff_t j, c;
    for (j = 0; j < m; j++) {
        sl[j] = 0.0;
        sr[j] = 0.0;
    }
    for (c = 0; c < K; c++) {
        const double *col = ca + c * cap;
        const double t = tot[c];
        for (j = 0; j < m; j++) {
            double a = col[j], b = t - a;
            sl[j] = sl[j] + a * a;
            sr[j] = sr[j] + b * b;
        }
    }
    for (j = 0; j < m; j++) {
        double wl = WL[j], wr = WT - wl;
        double cl = wl - sl[j] / wl, cr = wr - sr[j] / wr;
        cl = smml_select(smml_positive_mask(wl), cl, 0.0);
        cr = smml_select(smml_positive_mask(wr), cr, 0.0);
        out[j] = smml_select(-(uint64_t) (ok[j] != 0), cl + cr, INFINITY);
    }
}

/* smml_split_costs: the costs of m candidate positions of the exact tree splitter's scan
 * (smml._core._tree._scan_exact) at once, bit for bit those of _split.pxd's scalar functions
 * (the same operations in the same order, -ffp-contract=off), so that the divisions run as
 * vectors. Position j: the left side's sums a[j] (and b[j]) and weight WL[j]; the right
 * side's are the node's totals minus them.
 *   kind 0 (two classes, gini; a, b the classes' weights): cost_lr = c(left) + c(right),
 *          c = W - (w0 w0 + w1 w1) / W, and 0 where W <= 0;
 *   kind 1 (regression; a the sum of w y): score_reg = -(SL^2 / WL + SR^2 / WR), each term
 *          only where its W > 0.
 * ok[j] == 0: not a candidate, out[j] = +inf. W <= 0 is tested on the bits (positive doubles
 * order as integers), the selects are made on the bits: both vectorise. */
SMML_CLONES static void smml_split_costs(int kind, const double *SMML_RESTRICT a,
                                         const double *SMML_RESTRICT b,
                                         const double *SMML_RESTRICT WL, const uint8_t *SMML_RESTRICT ok,
                                         ptrdiff_t m, double ta, double tb, double WT,
                                         double *SMML_RESTRICT out)
{
    ptrdiff_t j;
    if (kind == 0) {
        for (j = 0; j < m; j++) {
            double wl = WL[j], wr = WT - wl;
            double a0 = a[j], a1 = b[j], b0 = ta - a0, b1 = tb - a1;
            double cl = wl - (a0 * a0 + a1 * a1) / wl;
            double cr = wr - (b0 * b0 + b1 * b1) / wr;
            cl = smml_select(smml_positive_mask(wl), cl, 0.0);
            cr = smml_select(smml_positive_mask(wr), cr, 0.0);
            out[j] = smml_select(-(uint64_t) (ok[j] != 0), cl + cr, INFINITY);
        }
    } else {
        for (j = 0; j < m; j++) {
            double wl = WL[j], wr = WT - wl, sl = a[j], sr = ta - sl;
            double tl = smml_select(smml_positive_mask(wl), sl * sl / wl, 0.0);
            double tr = smml_select(smml_positive_mask(wr), sr * sr / wr, 0.0);
            out[j] = smml_select(-(uint64_t) (ok[j] != 0), -((0.0 + tl) + tr), INFINITY);
        }
    }
}

#endif
