/* The boosting losses' gradients, hessians and loss sums (smml._core._gbm).
 *
 * The functions marked SMML_CLONED are compiled twice, portable and for AVX2, with the
 * same operations in the same order (the modules are compiled with -ffp-contract=off:
 * no fused multiply-add): both copies give the same bits, which tests/test_simd_paths.py
 * checks by forcing each one (SMML_SIMD, smml_platform.h). */
#ifndef SMML_CLONE_PASS
#ifndef SMML_SIMD_GBM_H
#define SMML_SIMD_GBM_H

#include <math.h>
#include "smml_platform.h"
#include "smml_math.h"     /* smml_bits, smml_select, ... */

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



/* The logistic loss's term of one row: max(F, 0) + log(1 + e^-|F|) - y F, e = e^-|F|. */
static inline double smml_gbm_logistic_term(double f, double e, double y)
{
    return smml_from_bits(smml_bits(f) & ~smml_sign_mask(f)) + smml_log1p_unit(e) - y * f;
}

/* the functions below, compiled portable (_base) and, with SMML_X86_DISPATCH, for
 * AVX2 (_avx2); the name without a suffix calls the copy of smml_isa() (smml_platform.h) */
#define SMML_CLONE_SELF "smml_gbm.h"
#include "smml_clones.h"
#define smml_gbm_logistic_block(...) SMML_PICK(smml_gbm_logistic_block, __VA_ARGS__)
#define smml_gbm_softmax_block(...) SMML_PICK(smml_gbm_softmax_block, __VA_ARGS__)


#endif  /* SMML_SIMD_GBM_H */

#else   /* SMML_CLONE_PASS: the multi-versioned functions */


/* Logistic loss (002): p = 1 / (1 + e^-F), G = w (p - y), H = w p (1 - p) (not written when
 * G is NULL); returns sum_i w_i (max(F, 0) + log(1 + e^-|F|) - y F) when want_loss (else 0). */
SMML_CLONED double SMML_SFX(smml_gbm_logistic_block)(const double *SMML_RESTRICT F,
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
SMML_CLONED double SMML_SFX(smml_gbm_softmax_block)(const double *SMML_RESTRICT F, ptrdiff_t K,
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


#endif  /* SMML_CLONE_PASS */
