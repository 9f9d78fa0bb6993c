/* _neural.h: the fused weight step of minibatch SGD (smml._core._neural), float32, AVX-512.
 *
 * smml_nn_step_f updates the columns [c0, c1) of one weight layer W (nin x ld, row-major)
 * from the step's gradient G = A^T D (A: the layer's nb input rows, D: the deltas of its
 * units, nb x ldd), in one pass over W and V, and can run the next batch's forward through
 * the new weights in the same pass:
 *
 *   momentum (V != NULL): t = beta V - eta G - etalam W;  W <- W + t;
 *                         V <- mu_next t if mu_next != 0 else t
 *   none     (V == NULL): W <- (1 - etalam) W - eta G
 *   Zn != NULL:           Zn[b, j] = sum_i Xn[b, i] W[i, j] (new W), b < nbn, j in [c0, c1)
 *
 * This is what the gemm path does (a gemm into V, then smml_momentum's pass over W and V,
 * then the next step's gemm for the first layer's forward), with W and V read and written
 * once per step instead of three times, and nothing packed. Row b of A is
 * A + (arows ? arows[b] : b) * lda (so the first layer reads the batch's rows of X in
 * place), likewise Xn with xrows. Every sum runs in a fixed order (G over b, Zn over i in
 * blocks of 8 rows), so the result depends only on the inputs, not on the caller's split
 * of the columns.
 *
 * Blocks of 8 rows of W by 32 columns: 16 accumulators of G (the batch loop), the update
 * in registers, and the 16 new weight vectors kept in registers for the forward.
 * The last columns are masked (the masked-off lanes are neither read nor written).
 *
 * smml_nn_step_available() says whether this CPU runs it (AVX-512F); the caller keeps
 * the gemm path for other CPUs and for float64.
 */
#ifndef SMML_NEURAL_H
#define SMML_NEURAL_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) && defined(__x86_64__) && !defined(_MSC_VER)
#define SMML_NN_X86 1
#include <immintrin.h>
#endif

#ifdef SMML_NN_X86

#define SMML_NN_TARGET __attribute__((target("avx512f")))

/* The update of one row's two vectors of W and V from its gradient sums g0, g1, which it
 * overwrites with the new weights. */
#define SMML_NN_UPDATE(W, V, ld, row, j, m0, m1, g0, g1)                                   \
    do {                                                                                   \
        float *w_ = (W) + (row) * (ld) + (j);                                              \
        __m512 w0_ = _mm512_maskz_loadu_ps(m0, w_), w1_ = _mm512_maskz_loadu_ps(m1, w_ + 16); \
        if (V) {                                                                           \
            float *v_ = (V) + (row) * (ld) + (j);                                          \
            __m512 t0_ = _mm512_mul_ps(vbeta, _mm512_maskz_loadu_ps(m0, v_));              \
            __m512 t1_ = _mm512_mul_ps(vbeta, _mm512_maskz_loadu_ps(m1, v_ + 16));         \
            t0_ = _mm512_fnmadd_ps(vetalam, w0_, _mm512_fnmadd_ps(veta, g0, t0_));         \
            t1_ = _mm512_fnmadd_ps(vetalam, w1_, _mm512_fnmadd_ps(veta, g1, t1_));         \
            w0_ = _mm512_add_ps(w0_, t0_);                                                 \
            w1_ = _mm512_add_ps(w1_, t1_);                                                 \
            if (scale_v) {                                                                 \
                t0_ = _mm512_mul_ps(vmu, t0_);                                             \
                t1_ = _mm512_mul_ps(vmu, t1_);                                             \
            }                                                                              \
            _mm512_mask_storeu_ps(v_, m0, t0_);                                            \
            _mm512_mask_storeu_ps(v_ + 16, m1, t1_);                                       \
        } else { /* vbeta holds 1 - etalam here */                                         \
            w0_ = _mm512_fnmadd_ps(veta, g0, _mm512_mul_ps(vbeta, w0_));                   \
            w1_ = _mm512_fnmadd_ps(veta, g1, _mm512_mul_ps(vbeta, w1_));                   \
        }                                                                                  \
        _mm512_mask_storeu_ps(w_, m0, w0_);                                                \
        _mm512_mask_storeu_ps(w_ + 16, m1, w1_);                                           \
        g0 = w0_;                                                                          \
        g1 = w1_;                                                                          \
    } while (0)

/* The arguments of a block: rows i .. of W by the two vectors of columns j .. j + 31. */
#define SMML_NN_BLOCK_ARGS                                                                 \
    float *W, float *V, ptrdiff_t ld, ptrdiff_t i, ptrdiff_t j, __mmask16 m0, __mmask16 m1, \
    const float *A, ptrdiff_t lda, const ptrdiff_t *arows, ptrdiff_t nb, const float *D,   \
    ptrdiff_t ldd, __m512 veta, __m512 vetalam, __m512 vbeta, __m512 vmu, int scale_v,     \
    const float *Xn, ptrdiff_t ldx, const ptrdiff_t *xrows, ptrdiff_t nbn, float *Zn,      \
    ptrdiff_t ldz

/* Eight rows. The 16 sums of G, then the new weights, stay in registers (named, not an
 * array: an array of vectors was kept on the stack); the forward's sum over the 8 rows
 * runs as two chains of 4 (rows 0-3 onto the running Zn, rows 4-7 from zero), added. */
#define SMML_NN_R8(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
#define SMML_NN_ZERO(r) __m512 g##r##0 = _mm512_setzero_ps(), g##r##1 = _mm512_setzero_ps();
#define SMML_NN_GRAD(r)                                                                    \
    { const __m512 x_ = _mm512_set1_ps(a[r]);                                              \
      g##r##0 = _mm512_fmadd_ps(x_, d0, g##r##0);                                          \
      g##r##1 = _mm512_fmadd_ps(x_, d1, g##r##1); }
#define SMML_NN_UPD(r) SMML_NN_UPDATE(W, V, ld, i + r, j, m0, m1, g##r##0, g##r##1);
#define SMML_NN_FWD(r, z0, z1)                                                             \
    { const __m512 x_ = _mm512_set1_ps(x[r]);                                              \
      z0 = _mm512_fmadd_ps(x_, g##r##0, z0);                                               \
      z1 = _mm512_fmadd_ps(x_, g##r##1, z1); }

SMML_NN_TARGET __attribute__((always_inline)) static inline void smml_nn_block8(SMML_NN_BLOCK_ARGS)
{
    ptrdiff_t b;
    SMML_NN_R8(SMML_NN_ZERO)
    for (b = 0; b < nb; b++) {
        const float *a = A + (arows ? arows[b] : b) * lda + i;
        const __m512 d0 = _mm512_maskz_loadu_ps(m0, D + b * ldd + j);
        const __m512 d1 = _mm512_maskz_loadu_ps(m1, D + b * ldd + j + 16);
        SMML_NN_R8(SMML_NN_GRAD)
    }
    SMML_NN_R8(SMML_NN_UPD)
    if (!Zn)
        return;
    for (b = 0; b < nbn; b++) {
        const float *x = Xn + (xrows ? xrows[b] : b) * ldx + i;
        float *z = Zn + b * ldz + j;
        __m512 z0 = _mm512_setzero_ps(), z1 = _mm512_setzero_ps();
        __m512 y0 = _mm512_setzero_ps(), y1 = _mm512_setzero_ps();
        if (i > 0) {
            z0 = _mm512_maskz_loadu_ps(m0, z);
            z1 = _mm512_maskz_loadu_ps(m1, z + 16);
        }
        SMML_NN_FWD(0, z0, z1) SMML_NN_FWD(1, z0, z1) SMML_NN_FWD(2, z0, z1) SMML_NN_FWD(3, z0, z1)
        SMML_NN_FWD(4, y0, y1) SMML_NN_FWD(5, y0, y1) SMML_NN_FWD(6, y0, y1) SMML_NN_FWD(7, y0, y1)
        _mm512_mask_storeu_ps(z, m0, _mm512_add_ps(z0, y0));
        _mm512_mask_storeu_ps(z + 16, m1, _mm512_add_ps(z1, y1));
    }
}

/* One row (the last nin % 8 rows). */
SMML_NN_TARGET __attribute__((always_inline)) static inline void smml_nn_block1(SMML_NN_BLOCK_ARGS)
{
    ptrdiff_t b;
    SMML_NN_ZERO(0)
    for (b = 0; b < nb; b++) {
        const float *a = A + (arows ? arows[b] : b) * lda + i;
        const __m512 d0 = _mm512_maskz_loadu_ps(m0, D + b * ldd + j);
        const __m512 d1 = _mm512_maskz_loadu_ps(m1, D + b * ldd + j + 16);
        SMML_NN_GRAD(0)
    }
    SMML_NN_UPD(0)
    if (!Zn)
        return;
    for (b = 0; b < nbn; b++) {
        const float *x = Xn + (xrows ? xrows[b] : b) * ldx + i;
        float *z = Zn + b * ldz + j;
        __m512 z0 = _mm512_setzero_ps(), z1 = _mm512_setzero_ps();
        if (i > 0) {
            z0 = _mm512_maskz_loadu_ps(m0, z);
            z1 = _mm512_maskz_loadu_ps(m1, z + 16);
        }
        SMML_NN_FWD(0, z0, z1)
        _mm512_mask_storeu_ps(z, m0, z0);
        _mm512_mask_storeu_ps(z + 16, m1, z1);
    }
}
#undef SMML_NN_R8
#undef SMML_NN_ZERO
#undef SMML_NN_GRAD
#undef SMML_NN_UPD
#undef SMML_NN_FWD
#undef SMML_NN_UPDATE
#undef SMML_NN_BLOCK_ARGS

SMML_NN_TARGET __attribute__((unused)) static void smml_nn_step_f(
    float *W, float *V, ptrdiff_t nin, ptrdiff_t ld, ptrdiff_t c0, ptrdiff_t c1,
    const float *A, ptrdiff_t lda, const ptrdiff_t *arows, ptrdiff_t nb,
    const float *D, ptrdiff_t ldd, float eta, float etalam, float beta, float mu_next,
    const float *Xn, ptrdiff_t ldx, const ptrdiff_t *xrows, ptrdiff_t nbn, float *Zn, ptrdiff_t ldz)
{
    const __m512 veta = _mm512_set1_ps(eta), vetalam = _mm512_set1_ps(etalam);
    const __m512 vbeta = _mm512_set1_ps(V ? beta : 1.0f - etalam), vmu = _mm512_set1_ps(mu_next);
    const int scale_v = mu_next != 0.0f;
    ptrdiff_t i, j;
    for (j = c0; j < c1; j += 32) {
        const ptrdiff_t rem = c1 - j;
        const __mmask16 m0 = rem >= 16 ? (__mmask16) 0xFFFF : (__mmask16) ((1u << rem) - 1);
        const __mmask16 m1 = rem >= 32 ? (__mmask16) 0xFFFF
                             : rem > 16 ? (__mmask16) ((1u << (rem - 16)) - 1) : (__mmask16) 0;
        for (i = 0; i + 8 <= nin; i += 8)
            smml_nn_block8(W, V, ld, i, j, m0, m1, A, lda, arows, nb, D, ldd, veta, vetalam, vbeta,
                           vmu, scale_v, Xn, ldx, xrows, nbn, Zn, ldz);
        for (; i < nin; i++)
            smml_nn_block1(W, V, ld, i, j, m0, m1, A, lda, arows, nb, D, ldd, veta, vetalam, vbeta,
                           vmu, scale_v, Xn, ldx, xrows, nbn, Zn, ldz);
    }
}

static int smml_nn_step_available(void)
{
    return __builtin_cpu_supports("avx512f");
}

#else  /* not x86-64 GCC / clang: the gemm path only */

static void smml_nn_step_f(
    float *W, float *V, ptrdiff_t nin, ptrdiff_t ld, ptrdiff_t c0, ptrdiff_t c1,
    const float *A, ptrdiff_t lda, const ptrdiff_t *arows, ptrdiff_t nb,
    const float *D, ptrdiff_t ldd, float eta, float etalam, float beta, float mu_next,
    const float *Xn, ptrdiff_t ldx, const ptrdiff_t *xrows, ptrdiff_t nbn, float *Zn, ptrdiff_t ldz)
{
    (void) W; (void) V; (void) nin; (void) ld; (void) c0; (void) c1; (void) A; (void) lda;
    (void) arows; (void) nb; (void) D; (void) ldd; (void) eta; (void) etalam; (void) beta;
    (void) mu_next; (void) Xn; (void) ldx; (void) xrows; (void) nbn; (void) Zn; (void) ldz;
}

static int smml_nn_step_available(void)
{
    return 0;
}

#endif
#endif
