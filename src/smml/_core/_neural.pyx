# Kernels of smml.neural: SGD epochs of a feed-forward network (003 section 14)
# and its forward pass for prediction.
#
# Conventions (see /work/shared/STYLE.md and _linear.pyx):
# - Python validates everything; the ORDER of the examples is drawn in Python
#   (from random_state) and passed in as `order`; one call runs a whole epoch,
#   nogil. Numerical failure (a non-finite loss or weight) is a status code,
#   raised as smml.linear.DivergenceError in Python.
# - Layers: weight layer l (l = 0 .. L-1) maps the sizes[l] units of layer l
#   to the sizes[l+1] units of layer l+1; W[l] is (sizes[l], sizes[l+1]),
#   row-major, b[l] is (sizes[l+1],). Hidden units use `act`; the output
#   layer is linear and feeds the loss (`out`).
# - Threads: one OpenMP parallel region per epoch; every thread walks the same
#   steps and owns fixed contiguous blocks of units (boundaries at multiples
#   of ALIGN entries, no false sharing), so every entry of every array is
#   written by one thread, in an order that depends only on the thread count:
#   the result is deterministic for a given seed and thread count (the
#   batch-1 path is even independent of the thread count). Phases are
#   separated by barriers (smml_bar_wait: spin, then sleep); the comments name the
#   barrier that protects each shared read. BLAS is called from these threads:
#   the caller pins BLAS to one thread (smml._threads.blas_single_thread).
from cython.parallel cimport parallel, prange
from libc.math cimport exp, expf, log, log1p, sqrt, tanh, tanhf, fabs, fabsf, isfinite
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memset

from smml._core._typedefs cimport floating, float64_t, intp_t
from smml._core._blas cimport _gemm, _gemv
from smml._core._finite cimport all_finite as _all_finite
from smml._core._openmp cimport omp_get_thread_num, omp_get_num_threads

cdef extern from "smml_neural.h":
    ctypedef struct smml_bar_t:
        int count
        int sense
        int waiters
    void smml_bar_wait(smml_bar_t *b, int n, int *local_sense) noexcept nogil

# (cpdef: one name each, a C constant in the kernels and a module attribute for Python)
cpdef enum:              # hidden-unit activations
    ACT_IDENTITY = 0
    ACT_RELU = 1
    ACT_TANH = 2
    ACT_SIGMOID = 3          # the logistic function 1 / (1 + e^{-z})
    ACT_SIGN_SIGMOID = 4     # 003 section 14: (1 - e^{-z}) / (1 + e^{-z}), in [-1, 1]

cpdef enum:              # output layer + loss
    OUT_SOFTMAX = 0          # softmax + log loss (multiclass; one-hot targets)
    OUT_LOGISTIC = 1         # one unit, logistic loss ln(1 + e^{-y z}), y in {-1, +1}
    OUT_SQUARE = 2           # identity outputs, square loss sum_j (z_j - y_j)^2

cpdef enum:              # step-size schedules (t = 1, 2, ...: the SGD steps taken so far, this one included)
    SCHED_CONSTANT = 0       # eta
    SCHED_INV_SQRT = 1       # eta / sqrt(t)
    SCHED_INV_T = 2          # eta / t

cdef enum:
    ALIGN = 16           # thread blocks of units start at multiples of 16 entries (64 bytes in float32)
    CHUNK = 512          # rows per block of the forward (prediction) kernel: one gemm per layer and
                         # block (W packed once per block); 512 rather than 128: fewer packings
                         # (measured: bench/neural.md)
    GEMV_ROWS = 4        # blocks of fewer rows go through gemv, row by row


CHUNK_ROWS = CHUNK

# ---------------------------------------------------------------------------
# element-wise pieces
# ---------------------------------------------------------------------------
cdef inline floating _exp(floating z) noexcept nogil:
    if floating is float:
        return expf(z)
    else:
        return exp(z)


cdef inline floating _sigmoid(floating z) noexcept nogil:
    cdef floating e
    if z >= 0:
        return 1 / (1 + _exp(-z))
    e = _exp(z)
    return e / (1 + e)


cdef inline floating _sign_sigmoid(floating z) noexcept nogil:
    # (1 - e^{-z}) / (1 + e^{-z}) of 003 section 14; an odd function, evaluated
    # on |z| so that e^{-|z|} never overflows
    cdef floating e, s
    if floating is float:
        e = expf(-fabsf(z))
    else:
        e = exp(-fabs(z))
    s = (1 - e) / (1 + e)
    return s if z >= 0 else -s


cdef void _bias_act(int act, floating *Z, intp_t ldz, intp_t nr, intp_t c0, intp_t c1,
                    const floating *b) noexcept nogil:
    """Z[r, c0:c1] <- act(Z[r, c0:c1] + b[c0:c1]) for r < nr (the gemm epilogue of a hidden layer)."""
    cdef intp_t r, j
    cdef floating *z
    cdef floating v
    for r in range(nr):
        z = Z + r * ldz
        if act == ACT_RELU:
            for j in range(c0, c1):
                v = z[j] + b[j]
                z[j] = v if v > 0 else 0
        elif act == ACT_TANH:
            for j in range(c0, c1):
                if floating is float:
                    z[j] = tanhf(z[j] + b[j])
                else:
                    z[j] = tanh(z[j] + b[j])
        elif act == ACT_SIGMOID:
            for j in range(c0, c1):
                z[j] = _sigmoid(z[j] + b[j])
        elif act == ACT_SIGN_SIGMOID:
            for j in range(c0, c1):
                z[j] = _sign_sigmoid(z[j] + b[j])
        else:
            for j in range(c0, c1):
                z[j] = z[j] + b[j]


cdef void _dact(int act, floating *D, const floating *A, intp_t ld, intp_t nr,
                intp_t c0, intp_t c1) noexcept nogil:
    """D[r, c0:c1] *= act'(z) written through a = act(z) (the epilogue of a backward gemm).

    relu' = [a > 0] (0 at z = 0), tanh' = 1 - a^2, sigmoid' = a (1 - a),
    sign_sigmoid' = (1 - a^2) / 2, identity' = 1.
    """
    cdef intp_t r, j
    cdef floating *dr
    cdef const floating *ar
    if act == ACT_IDENTITY:
        return
    for r in range(nr):
        dr = D + r * ld
        ar = A + r * ld
        if act == ACT_RELU:
            for j in range(c0, c1):                # a store on every entry: vectorises (a select)
                dr[j] = dr[j] if ar[j] > 0 else 0
        elif act == ACT_TANH:
            for j in range(c0, c1):
                dr[j] = dr[j] * (1 - ar[j] * ar[j])
        elif act == ACT_SIGMOID:
            for j in range(c0, c1):
                dr[j] = dr[j] * (ar[j] * (1 - ar[j]))
        else:
            for j in range(c0, c1):
                dr[j] = dr[j] * (<floating> 0.5 * (1 - ar[j] * ar[j]))


cdef double _out_row(int out, floating *z, const floating *y, intp_t k,
                     const floating *b, double scale) noexcept nogil:
    """Add the biases b to the output scores z (k entries), return the loss l(y, z)
    and overwrite z with scale * dl/dz. Computed in double.

    softmax: l = log sum_j e^{z_j} - sum_j y_j z_j (one-hot y: -ln p_y),
             dl/dz_j = p_j - y_j;
    logistic: l = ln(1 + e^{-y z}), dl/dz = -y / (1 + e^{y z});
    square:   l = sum_j (z_j - y_j)^2, dl/dz_j = 2 (z_j - y_j).
    """
    cdef intp_t j
    cdef double m, s, lse, loss = 0.0, e, zz, yy
    if out == OUT_SOFTMAX:
        m = <double> z[0] + b[0]
        for j in range(k):
            zz = <double> z[j] + b[j]
            if zz > m:
                m = zz
        s = 0.0
        for j in range(k):
            s += exp(<double> z[j] + b[j] - m)
        lse = m + log(s)
        for j in range(k):
            zz = <double> z[j] + b[j]
            if y[j] != 0:
                loss += y[j] * (lse - zz)
            z[j] = <floating> ((exp(zz - lse) - y[j]) * scale)
        if not isfinite(lse):
            loss = lse - lse          # NaN: reported as divergence
    elif out == OUT_LOGISTIC:
        zz = <double> z[0] + b[0]
        yy = y[0]
        m = yy * zz
        if m > 0:
            e = exp(-m)
            loss = log1p(e)
            z[0] = <floating> (-yy * e / (1.0 + e) * scale)
        else:
            e = exp(m)
            loss = -m + log1p(e)
            z[0] = <floating> (-yy / (1.0 + e) * scale)
        if not isfinite(zz):
            loss = zz - zz
    else:
        for j in range(k):
            zz = <double> z[j] + b[j] - y[j]
            loss += zz * zz
            z[j] = <floating> (2.0 * zz * scale)
    return loss


cdef inline double _eta(int sched, double eta, double t) noexcept nogil:
    if sched == SCHED_INV_SQRT:
        return eta / sqrt(t)
    if sched == SCHED_INV_T:
        return eta / t
    return eta


cdef inline void _part(intp_t n, int tid, int T, intp_t *lo, intp_t *hi) noexcept nogil:
    """Thread tid's block [lo, hi) of T contiguous blocks of range(n), boundaries at multiples of ALIGN."""
    cdef intp_t nblk = (n + ALIGN - 1) // ALIGN
    cdef intp_t a = (nblk * tid) // T, z = (nblk * (tid + 1)) // T
    lo[0] = a * ALIGN if a * ALIGN < n else n
    hi[0] = z * ALIGN if z * ALIGN < n else n


cdef extern from "smml_neural.h" nogil:
    void smml_nn_step_f(int isa, float *W, float *V, intp_t nin, intp_t ld, intp_t c0, intp_t c1,
                        const float *A, intp_t lda, const intp_t *arows, intp_t nb,
                        const float *D, intp_t ldd, float eta, float etalam, float beta, float mu_next,
                        const float *Xn, intp_t ldx, const intp_t *xrows, intp_t nbn, float *Zn, intp_t ldz,
                        float *scratch)
    void smml_nn_step1_f(int isa, float *dst, const float *src, float *V, intp_t nrows, intp_t ld,
                         intp_t c0, intp_t c1, const float *a, intp_t inc_a, const float *g, float mu,
                         float etalam, const float *xn, float *zn)
    int smml_nn_step_isa()


def step_isa():
    """The instruction set of smml_neural.h's float32 steps on this CPU: 2 AVX-512F, 1 AVX2 +
    FMA, 0 none (minibatch steps then take the gemm path, batch-1 steps the loops below)."""
    return smml_nn_step_isa()


cdef int _isa_for(int isa, bint f32, str who) except -1:
    """The entry points' ``isa`` argument as the code to run: -1 the widest this CPU runs,
    0 none (and always for float64), 1 AVX2, 2 AVX-512; more than the CPU runs is an error."""
    cdef int top = smml_nn_step_isa()
    if isa > top or isa < -1:
        raise ValueError(f"{who}: isa={isa}, this CPU runs 0 .. {top}")
    if not f32:
        return 0
    return top if isa == -1 else isa


cdef void _dense_forward(const floating *a, intp_t nin, const floating *W, intp_t nout,
                         intp_t c0, intp_t c1, floating *z, int isa) noexcept nogil:
    """z[c0:c1] = sum_i a[i] W[i, c0:c1] (one example; rows with a[i] == 0 are skipped:
    exact, and a win on sparse inputs and relu units). float32 with isa > 0: smml_neural.h's
    smml_nn_step1_f (the same sums in the same order, as vectors)."""
    cdef intp_t i, j
    cdef floating ai
    cdef const floating *w
    if floating is float:
        if isa > 0:
            smml_nn_step1_f(isa, <float *> W, W, NULL, nin, nout, c0, c1, NULL, 0, NULL, 0, 0, a, z)
            return
    for j in range(c0, c1):
        z[j] = 0
    for i in range(nin):
        ai = a[i]
        if ai != 0:
            w = W + i * nout
            for j in range(c0, c1):
                z[j] = z[j] + ai * w[j]


cdef void _step_rows(floating *dst, const floating *src, floating *V, intp_t nrows, intp_t ld,
                     intp_t c0, intp_t c1, const floating *a, intp_t inc_a, const floating *g,
                     floating mu, floating etalam, const floating *xn, floating *zn, int isa) noexcept nogil:
    """One example's step on the entries [c0, c1) of nrows rows (leading dimension ld):
    dst <- src - (a_i g_j + eta lam src), with g = eta * dl/dz already scaled;
    momentum (V != NULL): V <- mu V - (a_i g_j + eta lam src), dst <- src + V.
    dst may be src. Without momentum and penalty the rows with a_i == 0 are unchanged.

    Fused forward (zn != NULL): zn[c0:c1] <- sum_i xn[i] dst[i, c0:c1], the next
    example's first-layer scores through the updated weights, accumulated row by row
    while the row is in cache (the same sums, in the same order, as _dense_forward:
    one pass over the weights instead of two).

    float32 with isa > 0: smml_neural.h's smml_nn_step1_f, the same step as vectors (its
    fused multiply-adds round once where these loops round twice)."""
    cdef intp_t i, j
    cdef floating ai, v, bi
    cdef floating *w
    cdef const floating *s
    cdef floating *vr
    cdef floating decay = 1 - etalam
    if floating is float:
        if isa > 0:
            smml_nn_step1_f(isa, dst, src, V, nrows, ld, c0, c1, a, inc_a, g, mu, etalam, xn, zn)
            return
    if zn != NULL:
        for j in range(c0, c1):
            zn[j] = 0
    for i in range(nrows):
        ai = a[i * inc_a]
        w = dst + i * ld
        s = src + i * ld
        if V != NULL:
            vr = V + i * ld
            for j in range(c0, c1):
                v = mu * vr[j] - (ai * g[j] + etalam * s[j])
                vr[j] = v
                w[j] = s[j] + v
        elif etalam != 0:
            for j in range(c0, c1):
                w[j] = decay * s[j] - ai * g[j]
        elif ai != 0:
            bi = xn[i] if zn != NULL else 0
            if bi != 0:                          # update and forward in one loop (same sums)
                for j in range(c0, c1):
                    v = s[j] - ai * g[j]
                    w[j] = v
                    zn[j] = zn[j] + bi * v
                continue
            for j in range(c0, c1):
                w[j] = s[j] - ai * g[j]
        elif w != s:
            for j in range(c0, c1):
                w[j] = s[j]
        if zn != NULL:
            bi = xn[i]
            if bi != 0:
                for j in range(c0, c1):
                    zn[j] = zn[j] + bi * w[j]


cdef extern from "smml_neural.h" nogil:
    void smml_momentum_d(double *dst, const double *src, double *V, intp_t nrows, intp_t ld,
                         intp_t c0, intp_t c1, double etalam, double mu_next)
    void smml_momentum_f(float *dst, const float *src, float *V, intp_t nrows, intp_t ld,
                         intp_t c0, intp_t c1, float etalam, float mu_next)


cdef inline void _momentum_block(floating *dst, const floating *src, floating *V, intp_t nrows, intp_t ld,
                                 intp_t c0, intp_t c1, floating etalam, floating mu_next) noexcept nogil:
    """After V <- mu V - eta (A^T D) (a gemm): V <- V - eta lam src; dst <- src + V.
    mu_next != 0: V <- mu_next V instead, the next step's gemm's beta applied here (that gemm
    then has beta = 1), so that the velocity is read and written once a step instead of twice
    (the gemm's own beta pass is a separate pass over C): the same products, the same values.
    The loop is smml_neural.h's smml_momentum (an AVX2 copy where the compiler makes one)."""
    if floating is double:
        smml_momentum_d(dst, src, V, nrows, ld, c0, c1, etalam, mu_next)
    else:
        smml_momentum_f(dst, src, V, nrows, ld, c0, c1, etalam, mu_next)


cdef void _bias_step(floating *dst, const floating *src, floating *vb, const floating *D, intp_t ld,
                     intp_t nr, intp_t c0, intp_t c1, floating eta, floating mu) noexcept nogil:
    """dst[c0:c1] <- src - eta sum_r D[r, c0:c1] (momentum: through vb); biases are not penalised."""
    cdef intp_t r, j
    cdef floating g
    for j in range(c0, c1):
        g = 0
        for r in range(nr):
            g = g + D[r * ld + j]
        if vb != NULL:
            vb[j] = mu * vb[j] - eta * g
            dst[j] = src[j] + vb[j]
        else:
            dst[j] = src[j] - eta * g


cdef inline void _forward_k(int isa, floating *W, intp_t nin, intp_t nout, intp_t c0, intp_t c1,
                            const floating *A, intp_t nr, floating *Z, floating *scratch) noexcept nogil:
    """Z[:nr, c0:c1] = A W[:, c0:c1] (A: nr x nin, Z: ld nout): smml_neural.h's forward, without a
    step (float32, isa > 0; scratch: nr x 32)."""
    if floating is float:
        smml_nn_step_f(isa, W, NULL, nin, nout, c0, c1, NULL, 0, NULL, 0, NULL, 0, 0, 0, 0, 0,
                       A, nin, NULL, nr, Z, nout, scratch)


# ---------------------------------------------------------------------------
# the epoch
# ---------------------------------------------------------------------------
cdef struct Ctx:
    intp_t L                 # weight layers (hidden layers + 1)
    intp_t *sizes            # L + 1 layer widths; sizes[0] = d, sizes[L] = outputs
    intp_t n                 # the epoch's examples: len(order)
    intp_t B                 # batch size
    const intp_t *order
    int act, out, schedule
    double eta, mu, lam
    intp_t t0                # SGD steps taken before this epoch
    const double *sw         # NULL, or the rows' weights (indexed like X's rows)
    double sw_scale          # 1 / (the mean weight of the epoch's rows)
    int isa                  # > 0: float32 steps run smml_neural.h's code for this instruction set
                             # (minibatches: smml_nn_step_f updates the hidden layers, the first
                             # layer's with the next forward; batch 1: smml_nn_step1_f runs
                             # _step_rows and _dense_forward); 0: gemm and the loops
    # OUT (written by thread 0 only)
    double loss              # sum over the examples of their loss before their step
    intp_t steps             # steps done
    int status               # 1: a non-finite loss stopped the epoch
    # SHARED: thread 0's decision to stop, read by every thread after the next barrier (see _epoch)
    int stop[2]              # stop[s % 2] = 1: step s's loss was non-finite (written once, by thread 0)


cdef void _epoch(Ctx *c, floating **W, floating **b, floating **VW, floating **Vb,
                 floating **A2, floating **D, floating *Wout2, floating *bout2,
                 floating *priv, intp_t priv_stride, double *rowloss_all,
                 const floating *X, const floating *Y, smml_bar_t *bar, int tid, int T) noexcept nogil:
    """One SGD epoch, run by each of the T threads of the parallel region.

    A step on a batch of nb rows (nb = 1: 003's update, hand loops and gemv; nb > 1: gemm):
      gather   nb > 1: each thread copies the batch's rows into its own Xb (x = Xb);
               nb = 1: x is the example's row of X
      F_l      (hidden layers) A_l[:, own] = act(A_{l-1} W_l[:, own] + b_l[own])   | barrier F_l
      out      every thread computes the output scores Z = A_{L-1} W_out + b_out,
               the losses and D_out = dl/dZ / nb itself (its own buffers: no barrier)
               (F and out, nb > 1, float32 with c.isa > 0: _forward_k instead of gemm)
      D        D_{L-2}[:, own] = D_out W_out[own, :]^T * act'(A_{L-2}[:, own]), and
               the new output layer's rows of its own units, W_out'[own, :] (and
               thread 0: b_out') -- written to the other copy of the output layer, so
               that no thread waits for the others to finish reading the old one;
               then for l = L-2 .. 1: barrier; D_{l-1}[:, own] = D_l W_l[own, :]^T * act'
               (L >= 3: a barrier after the last, as W_l is then updated in place)
      U        W_l[:, own] <- (1 - eta lam) W_l[:, own] - eta A_{l-1}^T D_l[:, own]
               (one gemm, or its momentum form), b_l[own] likewise (hidden layers).
               float32 with c.isa > 0: one pass of smml_neural.h's smml_nn_step_f instead,
               which for l = 0 (rows of X read in place) also computes the next batch's
               F_0 of own units with the new weights: the next step skips F_0 and the
               gather of its rows.
    "own" is the thread's block of a layer's units (_part). With one hidden layer a step
    has one barrier.
    Stop on a non-finite loss: every thread has its own copy of the scores, so the
    decision is thread 0's alone (threads that decided from their own copies could
    disagree, and the ones that went on would wait at a barrier forever). Thread 0 writes
    it to c.stop[s % 2] in step s's `out` and every thread reads it after the step's next
    barrier that all of them reach at the same point: the next step's F_0 (L >= 2), or
    the end-of-step barrier (L == 1); then all leave the loop together. No barrier is
    added; until the check the threads finish the diverged step (and, L >= 2, the next
    step's F_0) on non-finite values, which the caller discards (status 1). The slot
    alternates with the step so that the write is never concurrent with a read (a
    read in step s, after F_0, is of slot (s - 1) % 2, while thread 0 may be writing
    slot s % 2); a slot is written at most once (all threads stop after it). A_l is double-buffered (a fast thread's next F_l must not overwrite
    the activations a slower thread still reads in U); each thread reads only the
    entries of D_l it wrote itself or that a barrier separates from their writing.
    """
    cdef intp_t L = c.L, B = c.B, n = c.n, d = c.sizes[0], k = c.sizes[L], nh = c.sizes[L - 1]
    cdef intp_t start = 0, nb, r, i0, i1, l, s = 0, nin, nout, par, j
    cdef intp_t kpad = (k + ALIGN - 1) // ALIGN * ALIGN
    cdef double eta_t, tot, inv_nb, wr
    cdef floating eta_f, mu_f = <floating> c.mu, etalam
    cdef floating *my = priv + tid * priv_stride
    cdef floating *Zo = my                         # B x k: scores, then D_out
    cdef floating *g = my + B * kpad               # kpad: eta * D_out (nb = 1)
    cdef floating *Xb = my + B * kpad + kpad       # B x d (nb > 1)
    cdef floating *S = Xb + B * d                  # 2 B x 32: smml_nn_step_f's scratch (nb > 1)
    cdef double *rowloss = rowloss_all + tid * B
    cdef floating *Wo[2]
    cdef floating *bo[2]
    cdef floating *Vo = VW[L - 1] if c.mu > 0 else NULL
    cdef floating *Vbo = Vb[L - 1] if c.mu > 0 else NULL
    cdef floating *x
    cdef floating *prev
    cdef floating *Ain
    cdef floating *dst
    cdef int cur, nxt
    cdef const intp_t *order = c.order
    cdef bint mom = c.mu > 0
    cdef int sense = 0                             # this thread's barrier phase
    cdef bint fused = False, done0 = False
    cdef bint stop = False                         # the shared decision, read after a barrier
    cdef intp_t s_stop = -1                        # thread 0: the step whose loss was non-finite
    # minibatch momentum: V holds mu V already (the previous step's _momentum_block scaled it,
    # as this step is a gemm step too), so this step's gemms take beta = 1. A stop on a
    # non-finite loss leaves V scaled: the caller raises DivergenceError and V is not used.
    cdef bint prescaled = False
    cdef floating beta_v, mu_next
    cdef bint use_k = False
    cdef intp_t nbn
    cdef floating *Zn
    if floating is float:
        use_k = c.isa > 0
    Wo[0] = W[L - 1]
    Wo[1] = Wout2
    bo[0] = b[L - 1]
    bo[1] = bout2
    while start < n:
        nb = B if n - start > B else n - start
        inv_nb = 1.0 / <double> nb
        cur = s % 2
        nxt = 1 - cur
        par = cur * (L - 1)
        eta_t = _eta(c.schedule, c.eta, <double> (c.t0 + s + 1))
        eta_f = <floating> eta_t
        etalam = <floating> (eta_t * c.lam)
        beta_v = 1 if prescaled else mu_f
        mu_next = mu_f if (mom and nb > 1 and start + nb + 1 < n) else 0   # the next step: >= 2 rows
        prescaled = mu_next != 0
        # F: hidden layers (F_0 was done in the previous step's U if `fused`)
        done0 = fused
        fused = False
        if nb == 1:
            x = <floating *> (X + order[start] * d)
        elif use_k and done0:
            x = NULL                               # F_0 done; U_0 reads the rows of X in place
        else:
            for r in range(nb):
                memcpy(Xb + r * d, X + order[start + r] * d, d * sizeof(floating))
            x = Xb
        prev = x
        for l in range(L - 1):
            nin = c.sizes[l]
            nout = c.sizes[l + 1]
            dst = A2[par + l]
            _part(nout, tid, T, &i0, &i1)
            if i1 > i0 and not (l == 0 and done0):
                if nb == 1:
                    _dense_forward(prev, nin, W[l], nout, i0, i1, dst, c.isa)
                elif use_k:
                    _forward_k(c.isa, W[l], nin, nout, i0, i1, prev, nb, dst, S)
                else:
                    _gemm(False, False, <int> nb, <int> (i1 - i0), <int> nin, <floating> 1, prev, <int> nin,
                          W[l] + i0, <int> nout, <floating> 0, dst + i0, <int> nout)
                _bias_act(c.act, dst, nout, nb, i0, i1, b[l])
            smml_bar_wait(bar, T, &sense)                        # F_l
            if l == 0 and s > 0 and c.stop[(s - 1) % 2]:       # thread 0's decision in the previous step
                stop = True
                break
            prev = dst
        if stop:
            break
        # out: every thread, the same values
        if nb == 1:
            _dense_forward(prev, nh, Wo[cur], k, 0, k, Zo, c.isa)
        elif use_k:
            _forward_k(c.isa, Wo[cur], nh, k, 0, k, prev, nb, Zo, S)
        else:
            _gemm(False, False, <int> nb, <int> k, <int> nh, <floating> 1, prev, <int> nh,
                  Wo[cur], <int> k, <floating> 0, Zo, <int> k)
        tot = 0.0
        if c.sw == NULL:
            for r in range(nb):
                rowloss[r] = _out_row(c.out, Zo + r * k, Y + order[start + r] * k, k, bo[cur], inv_nb)
        else:
            # weighted: row r's gradient scaled by s_r / (mean weight) / nb, its loss by s_r
            for r in range(nb):
                wr = c.sw[order[start + r]]
                rowloss[r] = wr * _out_row(c.out, Zo + r * k, Y + order[start + r] * k, k, bo[cur],
                                           wr * c.sw_scale * inv_nb)
        for r in range(nb):
            tot += rowloss[r]
        if tid == 0:
            if isfinite(tot):
                c.loss += tot
            elif s_stop < 0:
                s_stop = s
                c.stop[s % 2] = 1                          # read by all after the next check (above/below)
        # D: the last hidden layer's deltas and the new output layer (rows of own units)
        Ain = prev
        _part(nh, tid, T, &i0, &i1)
        if L >= 2 and i1 > i0:
            if nb == 1:
                _gemv(False, <int> (i1 - i0), <int> k, <floating> 1, Wo[cur] + i0 * k, <int> k, Zo, 1,
                      <floating> 0, D[L - 2] + i0, 1)
            else:
                _gemm(False, True, <int> nb, <int> (i1 - i0), <int> k, <floating> 1, Zo, <int> k,
                      Wo[cur] + i0 * k, <int> k, <floating> 0, D[L - 2] + i0, <int> nh)
            _dact(c.act, D[L - 2], A2[par + L - 2], nh, nb, i0, i1)
        if i1 > i0:
            if nb == 1:
                for j in range(k):
                    g[j] = eta_f * Zo[j]
                _step_rows(Wo[nxt] + i0 * k, Wo[cur] + i0 * k, Vo + i0 * k if mom else NULL,
                           i1 - i0, k, 0, k, Ain + i0, 1, g, mu_f, etalam, NULL, NULL, c.isa)
            elif mom:
                _gemm(True, False, <int> (i1 - i0), <int> k, <int> nb, -eta_f, Ain + i0, <int> nh,
                      Zo, <int> k, beta_v, Vo + i0 * k, <int> k)
                _momentum_block(Wo[nxt] + i0 * k, Wo[cur] + i0 * k, Vo + i0 * k, i1 - i0, k, 0, k, etalam,
                                mu_next)
            else:
                memcpy(Wo[nxt] + i0 * k, Wo[cur] + i0 * k, (i1 - i0) * k * sizeof(floating))
                _gemm(True, False, <int> (i1 - i0), <int> k, <int> nb, -eta_f, Ain + i0, <int> nh,
                      Zo, <int> k, <floating> (1.0 - eta_t * c.lam), Wo[nxt] + i0 * k, <int> k)
        if tid == 0:
            _bias_step(bo[nxt], bo[cur], Vbo, Zo, k, nb, 0, k, eta_f, mu_f)
        l = L - 2
        while l >= 1:
            smml_bar_wait(bar, T, &sense)                        # D_l complete
            nin = c.sizes[l]
            nout = c.sizes[l + 1]
            _part(nin, tid, T, &i0, &i1)
            if i1 > i0:
                if nb == 1:
                    _gemv(False, <int> (i1 - i0), <int> nout, <floating> 1, W[l] + i0 * nout, <int> nout,
                          D[l], 1, <floating> 0, D[l - 1] + i0, 1)
                else:
                    _gemm(False, True, <int> nb, <int> (i1 - i0), <int> nout, <floating> 1, D[l], <int> nout,
                          W[l] + i0 * nout, <int> nout, <floating> 0, D[l - 1] + i0, <int> nin)
                _dact(c.act, D[l - 1], A2[par + l - 1], nin, nb, i0, i1)
            l -= 1
        if L >= 3:
            smml_bar_wait(bar, T, &sense)                        # every read of W_l rows done
        # U: hidden layers, the columns of own units
        for l in range(L - 1):
            nin = c.sizes[l]
            nout = c.sizes[l + 1]
            Ain = x if l == 0 else A2[par + l - 1]
            _part(nout, tid, T, &i0, &i1)
            if i1 <= i0:
                continue
            if nb == 1:
                for j in range(i0, i1):
                    D[l][j] = eta_f * D[l][j]
                if l == 0 and B == 1 and start + 1 < n:
                    # 003's update fused with the next step's F_0 (its own units, so no barrier)
                    dst = A2[(1 - cur) * (L - 1)]
                    _step_rows(W[0], W[0], VW[0] if mom else NULL, nin, nout, i0, i1, Ain, 1, D[0],
                               mu_f, etalam, X + order[start + 1] * d, dst, c.isa)
                    _bias_step(b[0], b[0], Vb[0] if mom else NULL, D[0], nout, 1, i0, i1, 1, mu_f)
                    _bias_act(c.act, dst, nout, 1, i0, i1, b[0])
                    fused = True
                else:
                    _step_rows(W[l], W[l], VW[l] if mom else NULL, nin, nout, i0, i1, Ain, 1, D[l],
                               mu_f, etalam, NULL, NULL, c.isa)
                    _bias_step(b[l], b[l], Vb[l] if mom else NULL, D[l], nout, 1, i0, i1, 1, mu_f)
            elif use_k:
                # one pass over W_l and V_l (smml_neural.h); the first layer reads its rows of X in
                # place and computes the next batch's F_0 with the new weights (own units: no
                # barrier), as the batch-1 path does
                Zn = NULL
                nbn = 0
                if l == 0 and start + nb < n:
                    nbn = B if n - start - nb > B else n - start - nb
                    Zn = A2[(1 - cur) * (L - 1)]
                if floating is float:
                    smml_nn_step_f(c.isa, W[l], VW[l] if mom else NULL, nin, nout, i0, i1,
                                   X if l == 0 else Ain, d if l == 0 else nin, order + start if l == 0 else NULL,
                                   nb, D[l], nout, eta_f, etalam, beta_v, mu_next,
                                   X, d, order + start + nb, nbn, Zn, nout, <float *> S)
                _bias_step(b[l], b[l], Vb[l] if mom else NULL, D[l], nout, nb, i0, i1, eta_f, mu_f)
                if Zn != NULL:
                    _bias_act(c.act, Zn, nout, nbn, i0, i1, b[0])
                    fused = True
            else:
                if mom:
                    _gemm(True, False, <int> nin, <int> (i1 - i0), <int> nb, -eta_f, Ain, <int> nin,
                          D[l] + i0, <int> nout, beta_v, VW[l] + i0, <int> nout)
                    _momentum_block(W[l], W[l], VW[l], nin, nout, i0, i1, etalam, mu_next)
                else:
                    _gemm(True, False, <int> nin, <int> (i1 - i0), <int> nb, -eta_f, Ain, <int> nin,
                          D[l] + i0, <int> nout, <floating> (1.0 - eta_t * c.lam), W[l] + i0, <int> nout)
                _bias_step(b[l], b[l], Vb[l] if mom else NULL, D[l], nout, nb, i0, i1, eta_f, mu_f)
        if L == 1:
            smml_bar_wait(bar, T, &sense)                        # W_out' complete before the next out
            if c.stop[s % 2]:                                    # thread 0's decision in this step
                break
        s += 1
        start += nb
    if tid == 0:
        # the steps before the diverged one (a last step with L >= 2 has no barrier after
        # it: the loop ends anyway)
        c.steps = s_stop if s_stop >= 0 else s
        c.status = 1 if s_stop >= 0 else 0


# ---------------------------------------------------------------------------
# Python entry points
# ---------------------------------------------------------------------------
def train_epoch(const floating[:, ::1] X,        # IN  (n, d)
                const floating[:, ::1] Y,        # IN  (n, n_out): one-hot / +-1 / real targets
                const intp_t[::1] order,         # IN  the rows of the epoch's steps, in order
                list coefs, list intercepts,     # IN/OUT W[l] (sizes[l], sizes[l+1]), b[l] (sizes[l+1],)
                list vcoefs, list vintercepts,   # IN/OUT velocities (same shapes); ignored when momentum == 0
                int activation, int out, intp_t batch_size, double eta, int schedule,
                double momentum, double lam, intp_t t0, int n_threads, int isa=-1,
                const double[::1] sample_weight=None, double sw_scale=1.0):
    """One SGD epoch over ``order`` (003 section 14): steps of ``batch_size`` examples
    (the mean gradient over the batch; 1 = 003's update), eta_t from ``schedule`` with
    t = t0 + 1, t0 + 2, ...; ``lam`` / 2 ||W||^2 on the connection weights (not the
    biases); classical momentum when ``momentum`` > 0. float32 or float64 throughout.

    ``sample_weight`` (None, or one non-negative weight s_i per row of X) with ``sw_scale``
    = 1 / (the mean weight of the rows in ``order``): row i's gradient enters its batch's
    step as s_i sw_scale / nb times its own (all ones and sw_scale 1: the unweighted step,
    bit for bit), and its loss enters loss_sum as s_i l_i.

    Returns (loss_sum, steps, status): the sum over the examples of their loss at the
    weights before their step, the number of steps, and status 1 when a loss or a weight
    became non-finite (the epoch stops at the first non-finite loss).

    ``isa``: the instruction set of the float32 steps' code in smml_neural.h (the minibatch
    steps' fused update, the batch-1 steps' rows): -1 the widest this CPU runs (step_isa()),
    0 none (gemm; the loops of _step_rows and _dense_forward), 1 AVX2, 2 AVX-512 (for tests;
    more than step_isa() is a ValueError).
    """
    cdef intp_t L = len(coefs), n = order.shape[0], d = X.shape[1], B = batch_size
    cdef intp_t l, total_a = 0, kpad, k, priv_stride
    cdef Ctx c
    cdef smml_bar_t bar
    cdef floating[:, ::1] wv
    cdef floating[::1] bv
    cdef floating **ptrs = NULL
    cdef floating *work = NULL
    cdef double *rowloss = NULL
    cdef intp_t *sizes = NULL
    cdef floating **W
    cdef floating **bb
    cdef floating **VW
    cdef floating **Vb
    cdef floating **A
    cdef floating **D
    cdef floating *p
    cdef floating *Wout2
    cdef floating *bout2
    cdef floating *priv
    cdef bint mom = momentum > 0
    cdef int status = 0
    if L < 1 or len(intercepts) != L or (mom and (len(vcoefs) != L or len(vintercepts) != L)):
        raise ValueError("train_epoch: inconsistent layer lists")
    if X.shape[0] != Y.shape[0]:
        raise ValueError("train_epoch: X and Y have different numbers of rows")
    if sample_weight is not None and sample_weight.shape[0] != X.shape[0]:
        raise ValueError("train_epoch: sample_weight must have one entry per row of X")
    if n == 0:
        return 0.0, 0, 0
    if B < 1:
        raise ValueError("train_epoch: batch_size must be >= 1")
    if B > n:
        B = n
    if n_threads < 1:
        n_threads = 1
    isa = _isa_for(isa, floating is float, "train_epoch")
    sizes = <intp_t *> malloc((L + 1) * sizeof(intp_t))
    ptrs = <floating **> malloc(7 * L * sizeof(floating *))
    if sizes == NULL or ptrs == NULL:
        free(sizes)
        free(ptrs)
        raise MemoryError()
    try:
        W, bb, VW, Vb = ptrs, ptrs + L, ptrs + 2 * L, ptrs + 3 * L
        A, D = ptrs + 4 * L, ptrs + 6 * L              # A: 2 (L - 1) (double buffer), D: L - 1
        sizes[0] = d
        for l in range(L):
            wv = coefs[l]
            bv = intercepts[l]
            if wv.shape[0] != sizes[l] or bv.shape[0] != wv.shape[1]:
                raise ValueError(f"train_epoch: layer {l} has shape {(wv.shape[0], wv.shape[1])}, "
                                 f"expected ({sizes[l]}, ...) with {wv.shape[1]} biases")
            sizes[l + 1] = wv.shape[1]
            W[l] = &wv[0, 0]
            bb[l] = &bv[0]
            VW[l] = NULL
            Vb[l] = NULL
            if mom:
                wv = vcoefs[l]
                bv = vintercepts[l]
                if wv.shape[0] != sizes[l] or wv.shape[1] != sizes[l + 1] or bv.shape[0] != sizes[l + 1]:
                    raise ValueError("train_epoch: velocity shapes differ from the weights'")
                VW[l] = &wv[0, 0]
                Vb[l] = &bv[0]
        k = sizes[L]
        if Y.shape[1] != k:
            raise ValueError("train_epoch: Y must be (n, n_outputs)")
        kpad = (k + ALIGN - 1) // ALIGN * ALIGN
        for l in range(1, L):
            total_a += sizes[l]
        # per thread: Zo (B x kpad), g (kpad), Xb (B x d, nb > 1), S (2 B x 32, nb > 1), rounded
        # to ALIGN entries
        priv_stride = (B * kpad + kpad + (B * (d + 64) if B > 1 else 0) + ALIGN - 1) // ALIGN * ALIGN
        work = <floating *> malloc((3 * B * total_a + sizes[L - 1] * k + kpad
                                    + n_threads * priv_stride + 1) * sizeof(floating))
        rowloss = <double *> malloc(n_threads * B * sizeof(double))
        if work == NULL or rowloss == NULL:
            raise MemoryError()
        p = work
        for l in range(L - 1):
            A[l] = p
            p += B * sizes[l + 1]
            A[L - 1 + l] = p
            p += B * sizes[l + 1]
            D[l] = p
            p += B * sizes[l + 1]
        Wout2 = p
        p += sizes[L - 1] * k
        bout2 = p
        p += kpad
        priv = p
        c.L = L
        c.sizes = sizes
        c.n = n
        c.B = B
        c.order = &order[0]
        c.act = activation
        c.out = out
        c.schedule = schedule
        c.eta = eta
        c.mu = momentum
        c.lam = lam
        c.t0 = t0
        c.sw = NULL
        if sample_weight is not None:
            c.sw = <const double *> &sample_weight[0]
        c.sw_scale = sw_scale
        c.isa = isa
        c.loss = 0.0
        c.steps = 0
        c.status = 0
        c.stop[0] = 0
        c.stop[1] = 0
        bar.count = 0
        bar.sense = 0
        bar.waiters = 0
        with nogil:
            if n_threads == 1:
                _epoch(&c, W, bb, VW, Vb, A, D, Wout2, bout2, priv, priv_stride, rowloss,
                       &X[0, 0], &Y[0, 0], &bar, 0, 1)
            else:
                with parallel(num_threads=n_threads):
                    _epoch(&c, W, bb, VW, Vb, A, D, Wout2, bout2, priv, priv_stride, rowloss,
                           &X[0, 0], &Y[0, 0], &bar, omp_get_thread_num(), omp_get_num_threads())
            if c.steps % 2 == 1:
                # the latest output layer is in the second copy
                memcpy(W[L - 1], Wout2, sizes[L - 1] * k * sizeof(floating))
                memcpy(bb[L - 1], bout2, k * sizeof(floating))
            status = c.status
            if status == 0:
                for l in range(L):
                    if not (_all_finite(W[l], sizes[l] * sizes[l + 1]) and _all_finite(bb[l], sizes[l + 1])):
                        status = 1
                    elif mom and not (_all_finite(VW[l], sizes[l] * sizes[l + 1])
                                      and _all_finite(Vb[l], sizes[l + 1])):
                        status = 1
        return c.loss, c.steps, status
    finally:
        free(work)
        free(rowloss)
        free(sizes)
        free(ptrs)


def forward(const floating[:, ::1] X,            # IN  (n, d)
            list coefs, list intercepts,         # IN  the layers
            int activation,
            floating[:, ::1] out,                # OUT (n, n_out): the output layer's scores z
            int n_threads, int isa=-1):
    """out = the network's output scores (before softmax / logistic) for every row of X.

    Blocks of CHUNK rows, one gemm per layer and block (hidden activations in the
    gemm epilogue), OpenMP over the blocks: each row's result is independent of the
    thread count. float32 with ``isa`` > 0 (-1: step_isa(); 0: gemm): smml_neural.h's
    smml_nn_step_f without a step (its forward through W held in registers) instead of gemm.
    """
    cdef intp_t L = len(coefs), n = X.shape[0], d = X.shape[1]
    cdef intp_t l, ch, n_chunks, r0, nr, r, rows, maxw = 1, nin, nout, k, tid
    cdef const floating[:, ::1] wv
    cdef const floating[::1] bv
    cdef floating **ptrs = NULL
    cdef intp_t *sizes = NULL
    cdef floating *scratch = NULL
    cdef floating *buf
    cdef const floating *prev
    cdef floating *dst
    if L < 1 or len(intercepts) != L:
        raise ValueError("forward: inconsistent layer lists")
    if n == 0:
        return
    isa = _isa_for(isa, floating is float, "forward")
    sizes = <intp_t *> malloc((L + 1) * sizeof(intp_t))
    ptrs = <floating **> malloc(2 * L * sizeof(floating *))
    if sizes == NULL or ptrs == NULL:
        free(sizes)
        free(ptrs)
        raise MemoryError()
    try:
        sizes[0] = d
        for l in range(L):
            wv = coefs[l]
            bv = intercepts[l]
            if wv.shape[0] != sizes[l] or bv.shape[0] != wv.shape[1]:
                raise ValueError(f"forward: layer {l} has an inconsistent shape")
            sizes[l + 1] = wv.shape[1]
            ptrs[l] = <floating *> &wv[0, 0]
            ptrs[L + l] = <floating *> &bv[0]
            if l + 1 < L and sizes[l + 1] > maxw:
                maxw = sizes[l + 1]
        k = sizes[L]
        if out.shape[0] != n or out.shape[1] != k:
            raise ValueError("forward: out must be (n, n_outputs)")
        n_chunks = (n + CHUNK - 1) // CHUNK
        if n_threads > n_chunks:
            n_threads = <int> n_chunks
        if n_threads < 1:
            n_threads = 1
        rows = CHUNK if n > CHUNK else n
        # per thread: two blocks of activations, and smml_nn_step_f's packed outputs (rows x 32)
        scratch = <floating *> malloc(n_threads * (2 * maxw + 32) * rows * sizeof(floating))
        if scratch == NULL:
            raise MemoryError()
        with nogil:
            for ch in prange(n_chunks, schedule="static", num_threads=n_threads):
                tid = omp_get_thread_num()
                r0 = ch * CHUNK
                nr = n - r0 if n - r0 < CHUNK else CHUNK
                prev = &X[r0, 0]
                for l in range(L):
                    nin = sizes[l]
                    nout = sizes[l + 1]
                    if l == L - 1:
                        dst = &out[r0, 0]
                    else:
                        dst = scratch + (tid * 2 + (l % 2)) * rows * maxw
                    if isa > 0 and nr >= GEMV_ROWS:
                        _forward_k(isa, ptrs[l], nin, nout, 0, nout, prev, nr, dst,
                                   scratch + (n_threads * 2 * maxw + tid * 32) * rows)
                    elif nr < GEMV_ROWS:
                        # a few rows (predict on a handful): gemv per row; gemm would pack all of W
                        for r in range(nr):
                            _gemv(True, <int> nin, <int> nout, <floating> 1, ptrs[l], <int> nout,
                                  prev + r * nin, 1, <floating> 0, dst + r * nout, 1)
                    else:
                        _gemm(False, False, <int> nr, <int> nout, <int> nin, <floating> 1, prev, <int> nin,
                              ptrs[l], <int> nout, <floating> 0, dst, <int> nout)
                    if l == L - 1:
                        _bias_act(ACT_IDENTITY, dst, nout, nr, 0, nout, ptrs[L + l])
                    else:
                        _bias_act(activation, dst, nout, nr, 0, nout, ptrs[L + l])
                    prev = dst
    finally:
        free(scratch)
        free(sizes)
        free(ptrs)
