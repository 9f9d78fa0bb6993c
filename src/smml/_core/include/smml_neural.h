/* smml_neural.h: the weight steps of SGD (smml._core._neural), float32.
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
 *   D == NULL:            no step (W and V are not touched; nb = 0): the forward alone
 *                         (prediction)
 *
 * This is what the gemm path does (a gemm into V, then smml_momentum's pass over W and V,
 * then the next step's gemm for the first layer's forward), with W and V read and written
 * once per step instead of three times, and W not packed. Row b of A is
 * A + (arows ? arows[b] : b) * lda (so the first layer reads the batch's rows of X in
 * place), likewise Xn with xrows. Every sum runs in a fixed order (G over b, Zn over i in
 * blocks of rows), so the result depends only on the inputs and the instruction set, not on
 * the caller's split of the columns.
 *
 * scratch: (nb + nbn) x 32 floats of the caller's (D's and Zn's columns of a block, packed).
 *
 * smml_nn_step1_f is the batch-1 step (003's update, one example), row by row: _neural.pyx's
 * _step_rows and _dense_forward as vectors (see smml_neural_step.h).
 *
 * Two copies of the bodies (smml_neural_step.h), chosen at run time: AVX-512F (blocks of 8 rows
 * by 32 columns) and AVX2 + FMA (4 rows by 16 columns). smml_nn_step_isa() says which this
 * CPU runs (2, 1; 0: neither, and the caller keeps the gemm path and the loops, as it does
 * for float64).
 */
#ifndef SMML_CLONE_PASS
#ifndef SMML_NEURAL_H
#define SMML_NEURAL_H

#include <stddef.h>
#include <stdint.h>

/* The vector copies exist where smml_platform.h's rule says (SMML_X86_DISPATCH); elsewhere the
 * gemm path and the loops. */
#include "smml_platform.h"
#if SMML_X86_DISPATCH
#define SMML_NN_X86 1
#endif

#ifdef SMML_NN_X86

/* AVX-512F: blocks of 8 rows by 32 columns (16 accumulators of G, then the 16 new weight
 * vectors kept for the forward); the last columns through the lanes' masks. */
#define SMML_NN_SUFFIX avx512
#define SMML_NN_TARGET __attribute__((target("avx512f")))
#define VEC __m512
#define MASK __mmask16
#define VL 16
#define SMML_NN_MR 8
#define V_ZERO() _mm512_setzero_ps()
#define V_SET1(x) _mm512_set1_ps(x)
#define V_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define V_FNMA(a, b, c) _mm512_fnmadd_ps(a, b, c)
#define V_MUL(a, b) _mm512_mul_ps(a, b)
#define V_ADD(a, b) _mm512_add_ps(a, b)
#define V_SUB(a, b) _mm512_sub_ps(a, b)
#define V_MASK(rem) ((__mmask16) ((1u << (rem)) - 1))
#define V_FULL ((__mmask16) 0xFFFF)
#define V_LOAD(full, m, p) _mm512_maskz_loadu_ps(m, p)
#define V_STORE(full, p, m, v) _mm512_mask_storeu_ps(p, m, v)
#define SMML_NN_RALL(M) M(0) M(1) M(2) M(3) M(4) M(5) M(6) M(7)
#define SMML_NN_RLO(M) M(0) M(1) M(2) M(3)
#define SMML_NN_RHI(M) M(4) M(5) M(6) M(7)
#include "smml_neural_step.h"

/* AVX2 + FMA (16 vector registers): blocks of 4 rows by 16 columns; whole vectors but in
 * the last block of columns (masked loads and stores there: slow on some CPUs, but one
 * block of a layer at most). */
#define SMML_NN_SUFFIX avx2
#define SMML_NN_TARGET __attribute__((target("avx2,fma")))
#define VEC __m256
#define MASK __m256i
#define VL 8
#define SMML_NN_MR 4
#define V_ZERO() _mm256_setzero_ps()
#define V_SET1(x) _mm256_set1_ps(x)
#define V_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define V_FNMA(a, b, c) _mm256_fnmadd_ps(a, b, c)
#define V_MUL(a, b) _mm256_mul_ps(a, b)
#define V_ADD(a, b) _mm256_add_ps(a, b)
#define V_SUB(a, b) _mm256_sub_ps(a, b)
#define V_MASK(rem) _mm256_cmpgt_epi32(_mm256_set1_epi32((int) (rem)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))
#define V_FULL _mm256_set1_epi32(-1)
#define V_LOAD(full, m, p) ((full) ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, m))
#define V_STORE(full, p, m, v) ((full) ? _mm256_storeu_ps(p, v) : _mm256_maskstore_ps(p, m, v))
#define SMML_NN_RALL(M) M(0) M(1) M(2) M(3)
#define SMML_NN_RLO(M) M(0) M(1)
#define SMML_NN_RHI(M) M(2) M(3)
#include "smml_neural_step.h"

/* The widest of the two that this CPU runs: 2 AVX-512F, 1 AVX2 + FMA, 0 neither. */
static int smml_nn_step_isa(void)
{
    return smml_isa();      /* SMML_ISA_AVX512 = 2, SMML_ISA_AVX2 (with FMA) = 1 */
}

/* The instruction set's copy (isa: smml_nn_step_isa(), 1 or 2), same arguments. */
#define smml_nn_step_f(isa, ...) \
    ((isa) == 2 ? smml_nn_step_f_avx512(__VA_ARGS__) : smml_nn_step_f_avx2(__VA_ARGS__))
#define smml_nn_step1_f(isa, ...) \
    ((isa) == 2 ? smml_nn_step1_f_avx512(__VA_ARGS__) : smml_nn_step1_f_avx2(__VA_ARGS__))

#else  /* the gemm path and the loops only (never called) */

static int smml_nn_step_isa(void)
{
    return 0;
}
#define smml_nn_step_f(isa, ...) ((void) 0)
#define smml_nn_step1_f(isa, ...) ((void) 0)

#endif

/* ---- the barrier between the phases of an SGD step (smml._core._neural) ---- */
/* The barrier between the phases of an SGD step (thousands per epoch). A
   sense-reversing counter barrier that spins briefly and then sleeps: on a
   quiet machine a step's threads meet within the spin; on a loaded one (more
   runnable threads than cores) a waiting thread sleeps instead of spinning away
   the time slice its partner needs (libgomp's default `omp barrier` spins
   ~300,000 times first, which made 2-thread epochs far slower than 1-thread
   ones under load: bench/neural.md). Linux: futex; elsewhere: sched_yield. */
#include <sched.h>
#ifdef __linux__
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif
/* The spin is ~65,000 atomic loads and has no PAUSE: on the VMs it was measured
   on, a PAUSE loop was slow at times (probably pause-loop exiting to the
   hypervisor; the timings: bench/neural.md). A partner later than the spin is
   waited for asleep. */
#define SMML_BARRIER_SPINS 65536

typedef struct { int count; int sense; int waiters; } smml_bar_t;

static void smml_bar_wait(smml_bar_t *b, int n, int *local_sense) {
    int s = 1 - *local_sense, spins = 0;
    *local_sense = s;
    if (n <= 1)
        return;
    if (__atomic_add_fetch(&b->count, 1, __ATOMIC_SEQ_CST) == n) {
        __atomic_store_n(&b->count, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&b->sense, s, __ATOMIC_SEQ_CST);
#ifdef __linux__
        if (__atomic_load_n(&b->waiters, __ATOMIC_SEQ_CST) > 0)
            syscall(SYS_futex, &b->sense, FUTEX_WAKE_PRIVATE, 0x7fffffff, NULL, NULL, 0);
#endif
        return;
    }
    while (__atomic_load_n(&b->sense, __ATOMIC_ACQUIRE) != s) {
        if (spins < SMML_BARRIER_SPINS) {
            spins++;
            continue;
        }
#ifdef __linux__
        __atomic_add_fetch(&b->waiters, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&b->sense, __ATOMIC_SEQ_CST) != s)
            syscall(SYS_futex, &b->sense, FUTEX_WAIT_PRIVATE, 1 - s, NULL, NULL, 0);
        __atomic_sub_fetch(&b->waiters, 1, __ATOMIC_SEQ_CST);
#else
        sched_yield();
#endif
    }
}

/* smml_momentum_d/_f: compiled portable (_base) and, with SMML_X86_DISPATCH, for AVX2
 * (_avx2), the same bits (no fused multiply-add); the name without a suffix calls the copy of
 * smml_isa() (smml_platform.h) */
#define SMML_CLONE_SELF "smml_neural.h"
#include "smml_clones.h"
#define smml_momentum_d(...) SMML_PICK(smml_momentum_d, __VA_ARGS__)
#define smml_momentum_f(...) SMML_PICK(smml_momentum_f, __VA_ARGS__)

#endif  /* SMML_NEURAL_H */

#else   /* SMML_CLONE_PASS: the multi-versioned functions */

/* smml_momentum_*: the weight step of minibatch SGD with momentum (smml._core._neural
 * _momentum_block), on the entries [c0, c1) of nrows rows of leading dimension ld, after
 * a gemm has left V = mu V - eta G:  v = V - etalam * W;  W <- W + v;  V <- v, or
 * V <- mu_next * v when mu_next != 0 (the next step's momentum factor, applied here so
 * that the next gemm need not). W is updated in place (dst == src in every caller but
 * the double-buffered output layer, which passes its other copy as dst): the two cases
 * are separate loops, as a possibly aliased pair would not vectorise. */
#define SMML_MOMENTUM(T, NAME)                                                  \
    SMML_CLONED void SMML_SFX(NAME)(T *dst, const T *src, T *SMML_RESTRICT V, ptrdiff_t nrows, \
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

#endif  /* SMML_CLONE_PASS */
