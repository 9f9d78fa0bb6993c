/* smml_neural_step.h: the bodies of smml_neural.h's steps (smml_nn_step_f, minibatches;
 * smml_nn_step1_f, batch 1), included once per instruction set.
 *
 * The includer defines:
 *   SMML_NN_SUFFIX          the functions' name suffix (avx512, avx2)
 *   SMML_NN_TARGET          the target attribute
 *   VEC, MASK, VL           the vector and column-mask types, the lanes of a vector
 *   V_ZERO(), V_SET1(x), V_FMA(a, b, c) = a b + c, V_FNMA(a, b, c) = c - a b, V_MUL, V_ADD,
 *   V_SUB
 *   V_MASK(rem)             the mask of the first rem (< VL) lanes; V_FULL, the mask of all
 *   V_LOAD(full, m, p)      load (full: the whole vector, else the masked lanes, others 0)
 *   V_STORE(full, p, m, v)  store (full: the whole vector, else the masked lanes)
 *   SMML_NN_RALL(M)         M(r) for the MR rows r of a block; SMML_NN_RLO / SMML_NN_RHI
 *                           its first and second halves (the forward's two chains)
 *   SMML_NN_MR              the rows of a block
 * and this file undefines them at its end. A block is MR rows by two vectors of columns
 * (2 VL). `full` is a constant in every inlined call (blocks of 2 VL whole columns, or the
 * last, masked). */

#define SMML_NN_CAT_(a, b) a##_##b
#define SMML_NN_CAT(a, b) SMML_NN_CAT_(a, b)
#define SMML_NN_FN(name) SMML_NN_CAT(name, SMML_NN_SUFFIX)

/* The update of one row's two vectors of W and V from its gradient sums g0, g1, which it
 * overwrites with the new weights. */
#define SMML_NN_UPDATE(row, g0, g1)                                                        \
    do {                                                                                   \
        float *w_ = W + (row) * ld + j;                                                    \
        VEC w0_ = V_LOAD(full, m0, w_), w1_ = V_LOAD(full, m1, w_ + VL);                   \
        if (V) {                                                                           \
            float *v_ = V + (row) * ld + j;                                                \
            VEC t0_ = V_MUL(vbeta, V_LOAD(full, m0, v_));                                  \
            VEC t1_ = V_MUL(vbeta, V_LOAD(full, m1, v_ + VL));                             \
            t0_ = V_FNMA(vetalam, w0_, V_FNMA(veta, g0, t0_));                             \
            t1_ = V_FNMA(vetalam, w1_, V_FNMA(veta, g1, t1_));                             \
            w0_ = V_ADD(w0_, t0_);                                                         \
            w1_ = V_ADD(w1_, t1_);                                                         \
            if (scale_v) {                                                                 \
                t0_ = V_MUL(vmu, t0_);                                                     \
                t1_ = V_MUL(vmu, t1_);                                                     \
            }                                                                              \
            V_STORE(full, v_, m0, t0_);                                                    \
            V_STORE(full, v_ + VL, m1, t1_);                                               \
        } else { /* vbeta holds 1 - etalam here */                                         \
            w0_ = V_FNMA(veta, g0, V_MUL(vbeta, w0_));                                     \
            w1_ = V_FNMA(veta, g1, V_MUL(vbeta, w1_));                                     \
        }                                                                                  \
        V_STORE(full, w_, m0, w0_);                                                        \
        V_STORE(full, w_ + VL, m1, w1_);                                                   \
        g0 = w0_;                                                                          \
        g1 = w1_;                                                                          \
    } while (0)

#define SMML_NN_ZERO(r) VEC g##r##0 = V_ZERO(), g##r##1 = V_ZERO();
#define SMML_NN_GRAD(r)                                                                    \
    { const VEC x_ = V_SET1(a[r]);                                                         \
      g##r##0 = V_FMA(x_, d0, g##r##0);                                                    \
      g##r##1 = V_FMA(x_, d1, g##r##1); }
#define SMML_NN_UPD(r) SMML_NN_UPDATE(i + r, g##r##0, g##r##1);
#define SMML_NN_LOADW(r)                                                                   \
    g##r##0 = V_LOAD(full, m0, W + (i + r) * ld + j);                                      \
    g##r##1 = V_LOAD(full, m1, W + (i + r) * ld + j + VL);
#define SMML_NN_FWD(r, s0, s1)                                                             \
    { const VEC x_ = V_SET1(x[r]);                                                         \
      s0 = V_FMA(x_, g##r##0, s0);                                                         \
      s1 = V_FMA(x_, g##r##1, s1); }
#define SMML_NN_FWD_Z(r) SMML_NN_FWD(r, z0, z1)
#define SMML_NN_FWD_Y(r) SMML_NN_FWD(r, y0, y1)
#define SMML_NN_ONE(M) M(0)
#define SMML_NN_NONE(M)
/* The next block's rows of W and V, one block ahead (~nb MR vector FMAs): the rows are ld
 * apart, and a layer wider than L2 allows streams from L3, which the hardware prefetchers
 * did not follow (first and last entry of the 2 VL: both cache lines when they differ). */
#define SMML_NN_PF(r)                                                                      \
    { const float *w_ = W + (i + SMML_NN_MR + r) * ld + j;                                 \
      _mm_prefetch((const char *) w_, _MM_HINT_T0);                                        \
      _mm_prefetch((const char *) (w_ + 2 * VL - 1), _MM_HINT_T0);                         \
      if (V) {                                                                             \
          const float *v_ = V + (i + SMML_NN_MR + r) * ld + j;                             \
          _mm_prefetch((const char *) v_, _MM_HINT_T0);                                    \
          _mm_prefetch((const char *) (v_ + 2 * VL - 1), _MM_HINT_T0);                     \
      } }

/* The arguments of a block: rows i .. of W by the two vectors of columns j .. j + 2 VL - 1;
 * Dp and Zp: the column block's D and Zn, packed (nb and nbn rows of 2 VL). */
#define SMML_NN_BLOCK_ARGS                                                                 \
    float *W, float *V, ptrdiff_t ld, ptrdiff_t i, ptrdiff_t j, const int full, MASK m0,    \
    MASK m1, const float *A, ptrdiff_t lda, const ptrdiff_t *arows, ptrdiff_t nb,          \
    const float *Dp, VEC veta, VEC vetalam, VEC vbeta, VEC vmu, int scale_v,               \
    const float *Xn, ptrdiff_t ldx, const ptrdiff_t *xrows, ptrdiff_t nbn, float *Zp

/* A block of the rows RLIST (RLO, RHI: the forward's two chains; RHI may be empty). The
 * sums of G, then the new weights, stay in registers (named, not an array: an array of
 * vectors was kept on the stack); the forward's sum over the rows runs as two chains,
 * rows RLO onto the running Zn and rows RHI from zero, then added. */
#define SMML_NN_BLOCK(NAME, RLIST, RLO, RHI)                                               \
    SMML_NN_TARGET __attribute__((always_inline)) static inline void NAME(SMML_NN_BLOCK_ARGS) \
    {                                                                                      \
        ptrdiff_t b;                                                                       \
        (void) full; /* AVX-512's loads and stores take the masks */                        \
        RLIST(SMML_NN_ZERO)                                                                \
        RLIST(SMML_NN_PF)                                                                  \
        if (Dp) {                                                                          \
            for (b = 0; b < nb; b++) {                                                     \
                const float *a = A + (arows ? arows[b] : b) * lda + i;                     \
                const VEC d0 = V_LOAD(1, m0, Dp + b * 2 * VL);                             \
                const VEC d1 = V_LOAD(1, m1, Dp + b * 2 * VL + VL);                        \
                RLIST(SMML_NN_GRAD)                                                        \
            }                                                                              \
            RLIST(SMML_NN_UPD)                                                             \
        } else {                                                                           \
            RLIST(SMML_NN_LOADW)                                                           \
        }                                                                                  \
        if (!Zp)                                                                           \
            return;                                                                        \
        for (b = 0; b < nbn; b++) {                                                        \
            const float *x = Xn + (xrows ? xrows[b] : b) * ldx + i;                        \
            float *z = Zp + b * 2 * VL;                                                    \
            VEC z0 = V_ZERO(), z1 = V_ZERO(), y0 = V_ZERO(), y1 = V_ZERO();                \
            if (i > 0) {                                                                   \
                z0 = V_LOAD(1, m0, z);                                                     \
                z1 = V_LOAD(1, m1, z + VL);                                                \
            }                                                                              \
            RLO(SMML_NN_FWD_Z)                                                             \
            RHI(SMML_NN_FWD_Y)                                                             \
            V_STORE(1, z, m0, V_ADD(z0, y0));                                              \
            V_STORE(1, z + VL, m1, V_ADD(z1, y1));                                         \
        }                                                                                  \
    }

SMML_NN_BLOCK(SMML_NN_FN(smml_nn_block), SMML_NN_RALL, SMML_NN_RLO, SMML_NN_RHI)
SMML_NN_BLOCK(SMML_NN_FN(smml_nn_row), SMML_NN_ONE, SMML_NN_ONE, SMML_NN_NONE)

/* The rows of one block of columns: whole blocks of MR rows, then single rows. */
#define SMML_NN_ROWS(FULL)                                                                 \
    do {                                                                                   \
        for (i = 0; i + SMML_NN_MR <= nin; i += SMML_NN_MR)                                \
            SMML_NN_FN(smml_nn_block)(W, V, ld, i, j, FULL, m0, m1, A, lda, arows, nb, Dp, veta, \
                                      vetalam, vbeta, vmu, scale_v, Xn, ldx, xrows, nbn, Zp); \
        for (; i < nin; i++)                                                               \
            SMML_NN_FN(smml_nn_row)(W, V, ld, i, j, FULL, m0, m1, A, lda, arows, nb, Dp, veta, \
                                    vetalam, vbeta, vmu, scale_v, Xn, ldx, xrows, nbn, Zp);   \
    } while (0)

SMML_NN_TARGET __attribute__((unused)) static void SMML_NN_FN(smml_nn_step_f)(
    float *W, float *V, ptrdiff_t nin, ptrdiff_t ld, ptrdiff_t c0, ptrdiff_t c1,
    const float *A, ptrdiff_t lda, const ptrdiff_t *arows, ptrdiff_t nb,
    const float *D, ptrdiff_t ldd, float eta, float etalam, float beta, float mu_next,
    const float *Xn, ptrdiff_t ldx, const ptrdiff_t *xrows, ptrdiff_t nbn, float *Zn, ptrdiff_t ldz,
    float *scratch)
{
    const VEC veta = V_SET1(eta), vetalam = V_SET1(etalam);
    const VEC vbeta = V_SET1(V ? beta : 1.0f - etalam), vmu = V_SET1(mu_next);
    const int scale_v = mu_next != 0.0f;
    float *Dp = D ? scratch : NULL, *Zp = Zn ? scratch + nb * 2 * VL : NULL;
    ptrdiff_t i, j, b, c;
    for (j = c0; j < c1; j += 2 * VL) {
        const ptrdiff_t w = c1 - j < 2 * VL ? c1 - j : 2 * VL;
        /* D's columns packed (rows ldd apart would share a few cache sets when ldd is a
         * multiple of a large power of 2: 512 units thrashed L1 with the AVX2 blocks) */
        if (Dp)
            for (b = 0; b < nb; b++) {
                for (c = 0; c < w; c++)
                    Dp[b * 2 * VL + c] = D[b * ldd + j + c];
                for (; c < 2 * VL; c++)
                    Dp[b * 2 * VL + c] = 0.0f;
            }
        if (w == 2 * VL) {
            const MASK m0 = V_FULL, m1 = V_FULL;
            SMML_NN_ROWS(1);
        } else {
            const MASK m0 = w >= VL ? V_FULL : V_MASK(w);
            const MASK m1 = w > VL ? V_MASK(w - VL) : V_MASK(0);
            SMML_NN_ROWS(0);
        }
        if (Zp)
            for (b = 0; b < nbn; b++)
                for (c = 0; c < w; c++)
                    Zn[b * ldz + j + c] = Zp[b * 2 * VL + c];
    }
}

#undef SMML_NN_ROWS

/* Batch 1 (smml._core._neural _step_rows and _dense_forward): one example's step on the
 * entries [c0, c1) of nrows rows of src (leading dimension ld), written to dst (may be src):
 *   g == NULL:     no step (dst is not written)
 *   V != NULL:     v = mu v - (a_i g_j + etalam s_ij); dst_ij = s_ij + v
 *   etalam != 0:   dst_ij = (1 - etalam) s_ij - a_i g_j
 *   otherwise:     dst_ij = s_ij - a_i g_j; rows with a_i == 0 unchanged (copied if dst != src)
 *   zn != NULL:    zn[c0:c1] = sum_i xn_i dst_i (rows with xn_i == 0 skipped), in row order
 * (a_i = a[i inc_a]; g = eta dl/dz, scaled by the caller). Blocks of 4 VL columns: the
 * block's g and its sums of zn stay in registers over the rows. */
#define SMML_NN_K4(M) M(0) M(1) M(2) M(3)
#define SMML_NN_MK(k)                                                                      \
    const MASK mk##k = w >= (k + 1) * VL ? V_FULL : w > k * VL ? V_MASK(w - k * VL) : V_MASK(0);
#define SMML_NN_G(k) const VEC gk##k = g ? V_LOAD(full, mk##k, g + j + k * VL) : V_ZERO();
#define SMML_NN_Z0(k) VEC zk##k = V_ZERO();
#define SMML_NN_S(k) VEC wk##k = V_LOAD(full, mk##k, s + k * VL);
#define SMML_NN_MOM(k)                                                                     \
    { VEC v_ = V_LOAD(full, mk##k, v + k * VL);                                             \
      v_ = V_SUB(V_MUL(vmu, v_), V_FMA(ai, gk##k, V_MUL(vetalam, wk##k)));                 \
      V_STORE(full, v + k * VL, mk##k, v_);                                                \
      wk##k = V_ADD(wk##k, v_);                                                            \
      V_STORE(full, d + k * VL, mk##k, wk##k); }
#define SMML_NN_DECAY(k)                                                                   \
    { wk##k = V_FNMA(ai, gk##k, V_MUL(vdecay, wk##k));                                     \
      V_STORE(full, d + k * VL, mk##k, wk##k); }
#define SMML_NN_PLAIN(k)                                                                   \
    { wk##k = V_FNMA(ai, gk##k, wk##k);                                                    \
      V_STORE(full, d + k * VL, mk##k, wk##k); }
#define SMML_NN_COPY(k) V_STORE(full, d + k * VL, mk##k, wk##k);
#define SMML_NN_ZACC(k) zk##k = V_FMA(xi, wk##k, zk##k);
#define SMML_NN_ZOUT(k) V_STORE(full, zn + j + k * VL, mk##k, zk##k);

#define SMML_NN_STEP1_BLOCK(FULL)                                                          \
    do {                                                                                   \
        const int full = FULL;                                                             \
        SMML_NN_K4(SMML_NN_MK)                                                             \
        (void) full;                                                                       \
        SMML_NN_K4(SMML_NN_G)                                                              \
        SMML_NN_K4(SMML_NN_Z0)                                                             \
        for (i = 0; i < nrows; i++) {                                                      \
            const float *s = src + i * ld + j;                                             \
            float *d = dst + i * ld + j;                                                   \
            const float xv = zn ? xn[i] : 0.0f;                                            \
            const VEC ai = V_SET1(g ? a[i * inc_a] : 0.0f);                                \
            /* the row keeps its weights: no step, or a plain step with a_i == 0 */        \
            const int keep = !g || (!V && etalam == 0.0f && a[i * inc_a] == 0.0f);         \
            if (keep && xv == 0.0f && (!g || d == s))                                      \
                continue;                                                                  \
            SMML_NN_K4(SMML_NN_S)                                                          \
            if (keep) {                                                                    \
                if (g && d != s) {                                                         \
                    SMML_NN_K4(SMML_NN_COPY)                                               \
                }                                                                          \
            } else if (V) {                                                                \
                float *v = V + i * ld + j;                                                 \
                SMML_NN_K4(SMML_NN_MOM)                                                    \
            } else if (etalam != 0.0f) {                                                   \
                SMML_NN_K4(SMML_NN_DECAY)                                                  \
            } else {                                                                       \
                SMML_NN_K4(SMML_NN_PLAIN)                                                  \
            }                                                                              \
            if (xv != 0.0f) {                                                              \
                const VEC xi = V_SET1(xv);                                                 \
                SMML_NN_K4(SMML_NN_ZACC)                                                   \
            }                                                                              \
        }                                                                                  \
        if (zn) {                                                                          \
            SMML_NN_K4(SMML_NN_ZOUT)                                                       \
        }                                                                                  \
    } while (0)

SMML_NN_TARGET __attribute__((unused)) static void SMML_NN_FN(smml_nn_step1_f)(
    float *dst, const float *src, float *V, ptrdiff_t nrows, ptrdiff_t ld, ptrdiff_t c0,
    ptrdiff_t c1, const float *a, ptrdiff_t inc_a, const float *g, float mu, float etalam,
    const float *xn, float *zn)
{
    const VEC vmu = V_SET1(mu), vetalam = V_SET1(etalam), vdecay = V_SET1(1.0f - etalam);
    ptrdiff_t i, j;
    for (j = c0; j < c1; j += 4 * VL) {
        const ptrdiff_t w = c1 - j < 4 * VL ? c1 - j : 4 * VL;
        if (w == 4 * VL)
            SMML_NN_STEP1_BLOCK(1);
        else
            SMML_NN_STEP1_BLOCK(0);
    }
}

#undef SMML_NN_K4
#undef SMML_NN_MK
#undef SMML_NN_G
#undef SMML_NN_Z0
#undef SMML_NN_S
#undef SMML_NN_MOM
#undef SMML_NN_DECAY
#undef SMML_NN_PLAIN
#undef SMML_NN_COPY
#undef SMML_NN_ZACC
#undef SMML_NN_ZOUT
#undef SMML_NN_STEP1_BLOCK
#undef SMML_NN_CAT_
#undef SMML_NN_CAT
#undef SMML_NN_FN
#undef SMML_NN_UPDATE
#undef SMML_NN_ZERO
#undef SMML_NN_GRAD
#undef SMML_NN_UPD
#undef SMML_NN_LOADW
#undef SMML_NN_FWD
#undef SMML_NN_FWD_Z
#undef SMML_NN_FWD_Y
#undef SMML_NN_ONE
#undef SMML_NN_NONE
#undef SMML_NN_PF
#undef SMML_NN_BLOCK_ARGS
#undef SMML_NN_BLOCK
#undef SMML_NN_SUFFIX
#undef SMML_NN_TARGET
#undef VEC
#undef MASK
#undef VL
#undef SMML_NN_MR
#undef V_ZERO
#undef V_SET1
#undef V_FMA
#undef V_FNMA
#undef V_MUL
#undef V_ADD
#undef V_SUB
#undef V_MASK
#undef V_FULL
#undef V_LOAD
#undef V_STORE
#undef SMML_NN_RALL
#undef SMML_NN_RLO
#undef SMML_NN_RHI
