# AdaBoost with decision stumps: the weighted stump search and the reweighting
# of 002 "Adaboost" (Algorithm 1) / 003 section 16 (Algorithm 5), one compiled
# round after another.
#
# Layout. Python sorts every feature once (``order[j, :]`` = sample indices by
# increasing X[:, j], stable) and marks the positions after which a threshold
# can go (``boundary[j, p] = 1`` iff the p-th and (p+1)-th sorted values of
# feature j differ). A stump (j, p, s) predicts h(x) = s if x_j > theta else -s
# with theta between the p-th and (p+1)-th sorted values; p = -1 is the
# constant stump h = s everywhere (theta = -inf).
#
# With D(p) = sum_{q <= p} P(order[j, q]) y(order[j, q]) (the cumulative signed
# weight of the left side), W+ / W- the total weight of the positive / negative
# examples, the weighted error of (j, p, +1) is W- + D(p) (positives on the left,
# negatives on the right are wrong) and that of (j, p, -1) is W+ - D(p). One pass
# per feature over the cumulative weights therefore finds the best threshold and
# polarity of that feature. Features are searched in parallel (OpenMP), each
# writes its own best; then a serial argmin. Tie rule (documented in
# smml.ensemble): the smallest error wins; among equal errors the smallest
# feature index, then the smallest position p (the constant stump p = -1 first),
# then polarity +1 before -1. Results are thus independent of the thread count.
# "Equal" means within TIE_TOL = 1e-10 of the total weight: sums of the same
# weights in different orders differ by rounding (with uniform P_1, many
# thresholds have exactly the same error), and the rule, not the rounding,
# must decide. Each feature keeps the first candidate not beaten by more than
# the tolerance; then the features are compared the same way in index order.
#
# Reweighting. Each round multiplies P_i(t) by e^{-w_i} (h_i right) or e^{+w_i}
# (wrong) and divides by the sum Z_i, as 002 Algorithm 1. So that weights never
# underflow over thousands of rounds, the kernel also keeps the margins
# F(x_t) = sum_k w_k h_k(x_t): whenever a positive weight drops below
# ``resync_below`` (1e-200), the distribution is recomputed in rescaled form as
# P_1(t) exp(-y_t F(x_t) - M) / sum(...), M = max_t(log P_1(t) - y_t F(x_t)) --
# the same distribution by the proof of 002 "Training error of AdaBoost, ctd."
# (P_{T+1}(t) = P_1(t) exp(-y_t F(x_t)) / prod Z) -- whose largest term is
# exp(0) = 1, so a weight below e^-745 of the largest is 0 only until its
# margin changes.
#
# Only the per-feature scans (O(n d) per round) run in parallel, one OpenMP
# region per round; the O(n) steps (weights, error, margins, training error)
# are serial, so no sum depends on the thread count and a loaded machine does
# not stall the round on several barriers.
from cython.parallel cimport prange
from libc.math cimport exp, log, sqrt, INFINITY, fabs
from libc.stdlib cimport malloc, free

from smml._core._typedefs cimport float64_t, intp_t, int32_t, uint8_t, floating


cdef double TIE_TOL = 1e-10


cdef struct Best:
    double err
    intp_t pos
    int pol


cdef inline void _consider(double d, intp_t p, double w_pos, double w_neg, double tol,
                           Best* best) noexcept nogil:
    """Candidates (p, +1) then (p, -1): each replaces the best only if its error is
    smaller by more than tol, so the first of (near-)equal errors is kept."""
    cdef double e = w_neg + d
    if e < best.err - tol:
        best.err = e
        best.pos = p
        best.pol = 1
    e = w_pos - d
    if e < best.err - tol:
        best.err = e
        best.pos = p
        best.pol = -1


cdef inline void _init_best(double w_pos, double w_neg, double tol, Best* best) noexcept nogil:
    # constant stump p = -1: +1 everywhere errs on the negatives, -1 on the positives
    best.pos = -1
    best.err = w_neg
    best.pol = 1
    if w_pos < w_neg - tol:
        best.err = w_pos
        best.pol = -1


cdef void _scan_one(const int32_t* o, const uint8_t* b, const double* wy, double w_pos,
                    double w_neg, intp_t n, double tol, Best* out) noexcept nogil:
    """Best (position, polarity) of one feature, positions in increasing order."""
    cdef double d = 0.0
    cdef intp_t p
    _init_best(w_pos, w_neg, tol, out)
    for p in range(n - 1):
        d = d + wy[o[p]]
        if b[p] and (w_neg + d < out.err - tol or w_pos - d < out.err - tol):
            _consider(d, p, w_pos, w_neg, tol, out)


cdef void _scan_two(const int32_t* o, const int32_t* o2, const uint8_t* b, const uint8_t* b2,
                    const double* wy, double w_pos, double w_neg, intp_t n, double tol,
                    Best* out) noexcept nogil:
    """_scan_one on two features in one loop: two independent cumulative sums
    hide each other's latency (measured: bench/adaboost.md); each feature's arithmetic and
    result are exactly those of _scan_one."""
    cdef double d = 0.0, d2 = 0.0
    cdef intp_t p
    _init_best(w_pos, w_neg, tol, out)
    _init_best(w_pos, w_neg, tol, out + 1)
    for p in range(n - 1):
        d = d + wy[o[p]]
        d2 = d2 + wy[o2[p]]
        if b[p] and (w_neg + d < out[0].err - tol or w_pos - d < out[0].err - tol):
            _consider(d, p, w_pos, w_neg, tol, out)
        if b2[p] and (w_neg + d2 < out[1].err - tol or w_pos - d2 < out[1].err - tol):
            _consider(d2, p, w_pos, w_neg, tol, out + 1)


cdef Best _best_stump(const int32_t[:, ::1] order, const uint8_t[:, ::1] boundary,
                      const double[::1] wy, double w_pos, double w_neg,
                      intp_t* feature, Best* per_feature, int n_threads) noexcept nogil:
    cdef intp_t d = order.shape[0], n = order.shape[1], j, q
    cdef Best best
    cdef double tol = TIE_TOL * (w_pos + w_neg)
    # features in pairs (2q, 2q + 1), the last one alone if d is odd
    for q in prange((d + 1) // 2, schedule="dynamic", chunksize=1, num_threads=n_threads):
        j = 2 * q
        if j + 1 < d:
            _scan_two(&order[j, 0], &order[j + 1, 0], &boundary[j, 0], &boundary[j + 1, 0],
                      &wy[0], w_pos, w_neg, n, tol, &per_feature[j])
        else:
            _scan_one(&order[j, 0], &boundary[j, 0], &wy[0], w_pos, w_neg, n, tol, &per_feature[j])
    # serial argmin: smallest feature index among equal errors
    feature[0] = 0
    best = per_feature[0]
    for j in range(1, d):
        if per_feature[j].err < best.err - tol:
            best = per_feature[j]
            feature[0] = j
    return best


def best_stump(const int32_t[:, ::1] order, const uint8_t[:, ::1] boundary,
               const double[::1] w, const double[::1] y, int n_threads=1):
    """One stump search under the weights ``w`` (test hook and single-round API).

    Returns (feature, position, polarity, weighted error) with the error
    unnormalised (sum of the weights of the misclassified examples).
    """
    cdef intp_t d = order.shape[0], n = order.shape[1], i, f = 0
    cdef double w_pos = 0.0, w_neg = 0.0
    cdef Best best
    cdef double[::1] wy = _empty(n)
    cdef Best* per_feature = <Best*> malloc(max(d, 1) * sizeof(Best))
    if per_feature == NULL:
        raise MemoryError()
    try:
        with nogil:
            for i in range(n):
                wy[i] = w[i] * y[i]
                if y[i] > 0:
                    w_pos = w_pos + w[i]
                else:
                    w_neg = w_neg + w[i]
            best = _best_stump(order, boundary, wy, w_pos, w_neg, &f, per_feature, n_threads)
    finally:
        free(per_feature)
    return int(f), int(best.pos), int(best.pol), float(best.err)


cdef double[::1] _empty(intp_t n):
    import numpy as np
    return np.empty(max(n, 0), dtype=np.float64)


cdef void _weights_from_margins(const double[::1] log_p1, const double[::1] y,
                                const double[::1] margin, double[::1] w) noexcept nogil:
    """w <- P_1 exp(-y F) normalised, computed with the largest exponent at 0."""
    cdef intp_t n = w.shape[0], i
    cdef double m = -INFINITY, v, total = 0.0
    for i in range(n):
        v = log_p1[i] - y[i] * margin[i]
        if v > m:
            m = v
    for i in range(n):
        w[i] = exp(log_p1[i] - y[i] * margin[i] - m)   # exp(-inf) = 0 for zero P_1
        total = total + w[i]
    total = 1.0 / total
    for i in range(n):
        w[i] = w[i] * total


def boost_stumps(const int32_t[:, ::1] order, const uint8_t[:, ::1] boundary,
                 const double[::1] y, const double[::1] p1, const double[::1] log_p1,
                 double[::1] margin, double[::1] w, signed char[::1] h,
                 intp_t[::1] out_feature, intp_t[::1] out_pos, intp_t[::1] out_pol,
                 double[::1] out_error, double[::1] out_weight, double[::1] out_train_error,
                 double half_tol, int n_threads, double resync_below=1e-200):
    """Run up to ``len(out_feature)`` rounds of AdaBoost with stumps.

    IN: order, boundary (d, n); y in {-1, +1}; p1 = P_1 (sums to 1), log_p1.
    IN/OUT: margin F(x_t) (zeros on entry), w (on exit P_{T+1}), h (scratch).
    OUT per round i: stump (feature, position, polarity), epsilon_i, w_i and
    the P_1-weighted training error of sgn(F_i) (000's sgn: sgn(0) = -1).

    P_{i+1}(t) = P_i(t) exp(-w_i y_t h_i(x_t)) / Z_i literally (two factors
    e^{-w_i}, e^{+w_i}; Z_i the actual sum). When a positive weight falls below
    ``resync_below`` the distribution is recomputed from the margins as
    P_1 exp(-y F) / sum (the same distribution, 002's proof), with the largest
    term at 1, so no weight underflows to 0 for good.

    Returns (rounds_done, status): status 0 = every round run, 1 = a stump
    with epsilon = 0 was found (it decides alone: its weight is 1 + the sum
    of the earlier |w_k|, so sign(F) = h there; boosting stops), 2 = the best
    stump has epsilon = 1/2 (within half_tol; boosting is stuck and stops, the
    stump is not added).
    """
    cdef intp_t d = order.shape[0], n = order.shape[1], T = out_feature.shape[0]
    cdef intp_t t, i, p, f = 0, rounds = 0
    cdef int status = 0, hv
    cdef double w_pos, w_neg, eps, alpha, abs_sum = 0.0, tr, up, down, total, wmin
    cdef bint resync = True
    cdef Best best
    cdef double[::1] wy = _empty(n)
    cdef Best* per_feature = <Best*> malloc(max(d, 1) * sizeof(Best))
    if per_feature == NULL:
        raise MemoryError()
    try:
        with nogil:
            for t in range(T):
                if resync:
                    # P_t from the margins: the rescaled form of the multiplicative update
                    _weights_from_margins(log_p1, y, margin, w)
                    resync = False
                w_pos = 0.0
                w_neg = 0.0
                for i in range(n):
                    wy[i] = w[i] * y[i]
                    if y[i] > 0:
                        w_pos = w_pos + w[i]
                    else:
                        w_neg = w_neg + w[i]
                # 1) the weak learner: the stump minimising the P_t-weighted error
                best = _best_stump(order, boundary, wy, w_pos, w_neg, &f, per_feature, n_threads)
                # 2) its predictions and its error, summed exactly over the misclassified
                for p in range(n):
                    h[order[f, p]] = best.pol if p > best.pos else -best.pol
                eps = 0.0
                for i in range(n):
                    if h[i] != y[i]:
                        eps = eps + w[i]
                eps = eps / (w_pos + w_neg)
                # 3) special cases of 003's Algorithm 5
                if eps <= 0.0:
                    status = 1
                    alpha = 1.0 + abs_sum
                elif fabs(eps - 0.5) <= half_tol or eps > 0.5:
                    status = 2
                    break
                else:
                    # 4) w_i = 1/2 ln((1 - eps) / eps)
                    alpha = 0.5 * log((1.0 - eps) / eps)
                abs_sum = abs_sum + fabs(alpha)
                # 5) P_{i+1}(t) proportional to P_i(t) exp(-w_i y_t h_i(x_t)); margins F += w_i h_i
                down = exp(-alpha)
                up = exp(alpha)
                tr = 0.0
                total = 0.0
                for i in range(n):
                    margin[i] = margin[i] + alpha * h[i]
                    hv = 1 if margin[i] > 0.0 else -1          # sgn(0) = -1 (000)
                    if hv != y[i]:
                        tr = tr + p1[i]
                    w[i] = w[i] * (down if h[i] == y[i] else up)
                    total = total + w[i]
                if status != 1:
                    total = 1.0 / total
                    wmin = INFINITY
                    for i in range(n):
                        w[i] = w[i] * total
                        if 0.0 < w[i] < wmin:
                            wmin = w[i]
                    if wmin < resync_below or total != total:
                        resync = True
                out_feature[t] = f
                out_pos[t] = best.pos
                out_pol[t] = best.pol
                out_error[t] = eps
                out_weight[t] = alpha
                out_train_error[t] = tr
                rounds = t + 1
                if status == 1:
                    break
            # P_{T+1}, for inspection (002's exercise: h_T has error 1/2 under it)
            if status == 1 or resync:
                _weights_from_margins(log_p1, y, margin, w)
    finally:
        free(per_feature)
    return int(rounds), int(status)


def stump_decision(const floating[:, ::1] X, const intp_t[::1] feature,
                   const double[::1] threshold, const double[::1] signed_weight,
                   double[::1] out, int n_threads):
    """out[r] = sum_t signed_weight[t] * (+1 if X[r, feature[t]] > threshold[t] else -1).

    signed_weight[t] = w_t * polarity_t. Parallel over rows; each row sums its
    stumps in round order, so the result does not depend on the thread count.
    """
    cdef intp_t n = X.shape[0], T = feature.shape[0], r, t
    cdef double s
    with nogil:
        for r in prange(n, schedule="static", num_threads=n_threads):
            s = 0.0
            for t in range(T):
                if <double> X[r, feature[t]] > threshold[t]:
                    s = s + signed_weight[t]
                else:
                    s = s - signed_weight[t]
            out[r] = s
