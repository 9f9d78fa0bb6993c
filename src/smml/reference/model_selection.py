"""Plain-Python reference of smml.model_selection: the notes' CV formulas literally.

A learning algorithm A is a function ``A(S) -> h`` from a training set S (a
list of (x, y) pairs) to a predictor ``h(x) -> y_hat``; a family {A_theta} is a
function ``family(theta) -> A``; ``loss(y, y_hat)`` is the loss of one example.

- :func:`folds`: S_1, ..., S_K consecutive (000's example: S_1 = first m/K
  examples, ...). When K does not divide m the first m mod K folds get one more
  example (the same split as scikit-learn's KFold without shuffling).
- :func:`cv_estimate`: 000, "Evaluating a learning algorithm using external
  cross-validation": h_i = A(S_{-i}), l_{S_i}(h_i) = (K/m) sum_{S_i} l(y, h_i(x)),
  l^CV_S(A) = (1/K) sum_i l_{S_i}(h_i). When K does not divide m the factor
  K/m (= 1/|S_i| when every fold has m/K examples) is replaced by 1/|S_i|.
- :func:`nested_cv_estimate`: 003, section 6, Algorithm 1, line by line.
"""


def folds(S, K):
    """Split S (a list) into K consecutive folds; returns [S_1, ..., S_K] (lists of indices)."""
    m = len(S)
    if not 2 <= K <= m:
        raise ValueError("need 2 <= K <= m")
    result = []
    start = 0
    for i in range(K):
        size = m // K
        if i < m % K:
            size += 1
        result.append(list(range(start, start + size)))
        start += size
    return result


def fold_error(h, S_i, loss, K, m):
    """l_{S_i}(h) = (K/m) sum_{(x, y) in S_i} l(y, h(x))."""
    total = 0.0
    for (x, y) in S_i:
        total += loss(y, h(x))
    if m % K == 0:
        return (K / m) * total
    return total / len(S_i)  # K does not divide m: the fold's own size instead of m/K


def cv_estimate(A, S, K, loss):
    """(1/K) sum_{i=1}^K l_{S_i}(h_i), with h_i = A(S_{-i})."""
    m = len(S)
    index_folds = folds(S, K)
    errors = []
    for i in range(K):
        test_idx = index_folds[i]
        S_i = [S[t] for t in test_idx]
        S_minus_i = [S[t] for t in range(m) if t not in test_idx]  # S_{-i} = S \ S_i
        h_i = A(S_minus_i)
        errors.append(fold_error(h_i, S_i, loss, K, m))
    total = 0.0
    for e in errors:                                              # (l_1 + ... + l_K) left to right
        total = total + e
    return total / K


def nested_cv_estimate(family, Theta0, S, K_outer, K_inner, loss):
    """Algorithm 1 of 003, section 6; returns (estimate, [theta_1, ..., theta_K], [eps_1, ..., eps_K]).

    argmin ties go to the first theta of Theta0 (strict < when scanning the grid).
    """
    m = len(S)
    index_folds = folds(S, K_outer)                              # 1: split S into folds
    eps = []
    thetas = []
    for i in range(K_outer):                                     # 2: for i = 1..K
        test_idx = index_folds[i]
        S_i = [S[t] for t in test_idx]
        S_minus_i = [S[t] for t in range(m) if t not in test_idx]  # 3: S_{-i} = S \ S_i
        best_theta, best_cv = None, None                         # 4: CV on S_{-i} for each theta
        for theta in Theta0:
            cv = cv_estimate(family(theta), S_minus_i, K_inner, loss)
            if best_cv is None or cv < best_cv:
                best_theta, best_cv = theta, cv
        h_i = family(best_theta)(S_minus_i)                      # 5: h_i = A_{theta_i}(S_{-i})
        eps.append(fold_error(h_i, S_i, loss, K_outer, m))       # 6: eps_i = l_{S_i}(h_i)
        thetas.append(best_theta)
    total = 0.0
    for e in eps:
        total = total + e
    return total / K_outer, thetas, eps                          # output (eps_1 + ... + eps_K)/K
