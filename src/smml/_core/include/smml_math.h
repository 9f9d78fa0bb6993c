/* Elementary functions as plain arithmetic (no call, no branch per value), so that loops over
 * them vectorise: the exponential's range reduction and polynomial, log(1 + e) on [0, 1], and
 * the branch-free selects on integer bits they need (also used by the tree splitter's costs). Used by the boosting losses (smml_gbm.h) and the
 * Gaussian kernel's matrices (smml._core._kernel_methods: smml_exp_neg_scaled_d,
 * smml_expf_neg_scaled).
 *
 * smml_exp_block / smml_expf_block and their range tests are compiled portable and, where
 * smml_platform.h's rule allows, for AVX2: the same operations in the same order (no fused
 * multiply-add, -ffp-contract=off, no trapping-math assumptions changed), the same bits;
 * tests/test_simd_paths.py forces each copy (SMML_SIMD). */
#ifndef SMML_CLONE_PASS
#ifndef SMML_MATH_H
#define SMML_MATH_H

#include <math.h>
#include <string.h>
#include <stdint.h>
#include "smml_platform.h"

/* Branch-free selects on the bits of doubles, which gcc vectorises (integer compares and
 * masks instead of branches): used by the elementary functions (_exp.h), the boosting losses
 * (_simd_gbm.h) and the tree splitter's costs (_simd_tree.h). */
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


#if defined(__GNUC__) && !defined(__clang__)
#define SMML_EXP_OPT __attribute__((optimize("no-trapping-math")))
#else
#define SMML_EXP_OPT
#endif
#define SMML_EXP_BLOCK 256

#define SMML_CLONE_ATTR SMML_EXP_OPT
#define SMML_CLONE_SELF "smml_math.h"
#include "smml_clones.h"
#define smml_exp_block(...) SMML_PICK(smml_exp_block, __VA_ARGS__)
#define smml_exp_out_of_range(...) SMML_PICK(smml_exp_out_of_range, __VA_ARGS__)
#define smml_expf_block(...) SMML_PICK(smml_expf_block, __VA_ARGS__)
#define smml_expf_out_of_range(...) SMML_PICK(smml_expf_out_of_range, __VA_ARGS__)

/* v[k] <- exp(-s v[k]) */
static SMML_MAYBE_UNUSED void smml_exp_neg_scaled_d(double *v, ptrdiff_t n, double s) {
    double arg[SMML_EXP_BLOCK];
    ptrdiff_t b, k, nb;
    for (b = 0; b < n; b += SMML_EXP_BLOCK) {
        nb = n - b < SMML_EXP_BLOCK ? n - b : SMML_EXP_BLOCK;
        for (k = 0; k < nb; k++) arg[k] = -v[b + k] * s;
        smml_exp_block(arg, v + b, nb);
        if (smml_exp_out_of_range(arg, nb))
            for (k = 0; k < nb; k++)
                if (arg[k] < -708.0 || arg[k] > 709.0) v[b + k] = exp(arg[k]);
    }
}
/* out[k] <- (float) exp(-s v[k]), in float32 arithmetic from the float32-rounded argument */
static SMML_MAYBE_UNUSED void smml_expf_neg_scaled(const double *vd, const float *vf, float *out, ptrdiff_t n,
                                 double s) {
    float arg[SMML_EXP_BLOCK];
    ptrdiff_t b, k, nb;
    for (b = 0; b < n; b += SMML_EXP_BLOCK) {
        nb = n - b < SMML_EXP_BLOCK ? n - b : SMML_EXP_BLOCK;
        if (vd != NULL)
            for (k = 0; k < nb; k++) arg[k] = (float) (-vd[b + k] * s);
        else
            for (k = 0; k < nb; k++) arg[k] = (float) (-(double) vf[b + k] * s);
        smml_expf_block(arg, out + b, nb);
        if (smml_expf_out_of_range(arg, nb))
            for (k = 0; k < nb; k++)
                if (arg[k] < -87.0f || arg[k] > 88.0f) out[b + k] = (float) exp((double) arg[k]);
    }
}


#endif  /* SMML_MATH_H */

#else   /* SMML_CLONE_PASS: the multi-versioned functions */

SMML_CLONED void SMML_SFX(smml_exp_block)(const double *x, double *out, ptrdiff_t n) {
    ptrdiff_t k;
    for (k = 0; k < n; k++) {
        double a = x[k];
        a = a < -708.0 ? -708.0 : a;
        a = a > 709.0 ? 709.0 : a;
        SMML_EXP_REDUCED(a, out[k]);
    }
}
SMML_CLONED int SMML_SFX(smml_exp_out_of_range)(const double *x, ptrdiff_t n) {
    int bad = 0;
    ptrdiff_t k;
    for (k = 0; k < n; k++)
        bad |= (x[k] < -708.0) | (x[k] > 709.0);
    return bad;
}
/* The float32 twin (for results stored as float32): the same reduction in
   float arithmetic, Taylor polynomial to degree 7 (truncation < 6e-9
   relative), 8 lanes with AVX2; within 2 float32 ulp of the correctly
   rounded value on the normal range; arguments outside [-87, 88] by libm. */
SMML_CLONED void SMML_SFX(smml_expf_block)(const float *x, float *out, ptrdiff_t n) {
    const float log2e = 1.44269504088896341f, ln2hi = 0.693359375f,
                ln2lo = -2.12194440e-4f, shifter = 12582912.0f;
    ptrdiff_t k;
    for (k = 0; k < n; k++) {
        float a = x[k], kd, r, p, sc;
        uint32_t ki, sb;
        a = a < -87.0f ? -87.0f : a;
        a = a > 88.0f ? 88.0f : a;
        kd = a * log2e + shifter;
        memcpy(&ki, &kd, 4);
        kd -= shifter;
        r = (a - kd * ln2hi) - kd * ln2lo;
        p = 1.0f / 5040.0f;
        p = p * r + 1.0f / 720.0f;
        p = p * r + 1.0f / 120.0f;
        p = p * r + 1.0f / 24.0f;
        p = p * r + 1.0f / 6.0f;
        p = p * r + 0.5f;
        p = p * r + 1.0f;
        p = p * r + 1.0f;
        sb = (ki + 127u) << 23;
        memcpy(&sc, &sb, 4);
        out[k] = p * sc;
    }
}
SMML_CLONED int SMML_SFX(smml_expf_out_of_range)(const float *x, ptrdiff_t n) {
    int bad = 0;
    ptrdiff_t k;
    for (k = 0; k < n; k++)
        bad |= (x[k] < -87.0f) | (x[k] > 88.0f);
    return bad;
}

#endif  /* SMML_CLONE_PASS */
