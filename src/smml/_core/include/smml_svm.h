/* The passes of an SMO iteration over the active set (smml._core._svm).
 *
 * The functions marked SMML_CLONED are compiled twice, portable and for AVX2, with the
 * same operations in the same order (the modules are compiled with -ffp-contract=off:
 * no fused multiply-add): both copies give the same bits, which tests/test_simd_paths.py
 * checks by forcing each one (SMML_SIMD, smml_platform.h). */
#ifndef SMML_CLONE_PASS
#ifndef SMML_SIMD_SVM_H
#define SMML_SIMD_SVM_H

#include <math.h>
#include "smml_platform.h"

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

/* the functions below, compiled portable (_base) and, with SMML_X86_DISPATCH, for
 * AVX2 (_avx2); the name without a suffix calls the copy of smml_isa() (smml_platform.h) */
#define SMML_CLONE_SELF "smml_svm.h"
#include "smml_clones.h"
#define smml_svm_update_up(...) SMML_PICK(smml_svm_update_up, __VA_ARGS__)
#define smml_svm_low(...) SMML_PICK(smml_svm_low, __VA_ARGS__)
#define smml_svm_may_enter(...) SMML_PICK(smml_svm_may_enter, __VA_ARGS__)


#endif  /* SMML_SIMD_SVM_H */

#else   /* SMML_CLONE_PASS: the multi-versioned functions */


/* F[t] += ci Ki[r] (+ cj Kj[r] when Kj != NULL), r the row entry of t, then the first half
 * of WSS 2: argmax_{t in I_up} -F[t] (the last on ties) into *best, *idx (-INF, -1 if none). */
SMML_CLONED void SMML_SFX(smml_svm_update_up)(double *SMML_RESTRICT F, const float *SMML_RESTRICT Ki,
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
SMML_CLONED void SMML_SFX(smml_svm_low)(const double *SMML_RESTRICT F, const double *SMML_RESTRICT QD,
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
SMML_CLONED int SMML_SFX(smml_svm_may_enter)(const double *SMML_RESTRICT F,
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


#endif  /* SMML_CLONE_PASS */
